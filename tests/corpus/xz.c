/* SPDX-License-Identifier: MIT */
/*
 * Corpus: xz (Debian's liblzma.a).  xz [THREADS [PRESET]]: .xz with CRC64
 * at two presets in one call, then the multithreaded stream encoder with
 * THREADS workers (default 2; a pool of threads fed through mutexes and
 * condition variables) on 256 KiB blocks at preset 1, each decoded back.
 * With PRESET, the multithreaded encoder runs at that preset with its own
 * block size (3 dictionaries: 24 MiB at preset 6), as xz -T2 -6 does:
 * it allocates more than a 128 MiB guest has (LZMA_MEM_ERROR there).
 * The multithreaded stream depends on the block size only, not on the
 * threads or their scheduling, so its hash is comparable with the native
 * run's.
 */
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

#define N (1 << 20)

static size_t decode(const unsigned char *out, size_t olen, unsigned char *back)
{
	size_t ipos = 0, bpos = 0;
	uint64_t memlimit = 256 << 20;

	if (lzma_stream_buffer_decode(&memlimit, 0, NULL, out, &ipos, olen,
				      back, &bpos, N) != LZMA_OK)
		return 0;
	return bpos;
}

int main(int argc, char **argv)
{
	unsigned char *in = corpus_alloc(N), *back = corpus_alloc(N);
	size_t bound = lzma_stream_buffer_bound(N), olen, blen;
	unsigned char *out = corpus_alloc(bound);
	lzma_mt mt = {
		.threads = argc > 1 ? atoi(argv[1]) : 2,
		.block_size = argc > 2 ? 0 : 256 << 10,
		.preset = argc > 2 ? (uint32_t)atoi(argv[2]) : 1,
		.check = LZMA_CHECK_CRC64,
	};
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_ret r;

	corpus_text(in, N, 3);
	printf("crc64 %016llx\n", (unsigned long long)lzma_crc64(in, N, 0));
	for (unsigned int preset = 0; preset <= 6; preset += 6) {
		olen = 0;
		if (lzma_easy_buffer_encode(preset, LZMA_CHECK_CRC64, NULL, in,
					    N / 4, out, &olen, bound) != LZMA_OK) {
			fprintf(stderr, "xz: preset %u failed\n", preset);
			return 1;
		}
		blen = decode(out, olen, back);
		printf("xz -%u: %zu bytes hash %016llx round trip %s\n", preset,
		       olen, (unsigned long long)corpus_hash(out, olen),
		       blen == N / 4 && !memcmp(in, back, blen) ? "ok" : "BAD");
	}

	if (lzma_stream_encoder_mt(&strm, &mt) != LZMA_OK) {
		fprintf(stderr, "xz: lzma_stream_encoder_mt failed\n");
		return 1;
	}
	strm.next_in = in;
	strm.avail_in = N;
	strm.next_out = out;
	strm.avail_out = bound;
	do
		r = lzma_code(&strm, LZMA_FINISH);
	while (r == LZMA_OK);
	if (r != LZMA_STREAM_END) {
		fprintf(stderr, "xz: multithreaded encoding failed: %d\n", r);
		return 1;
	}
	olen = strm.total_out;
	lzma_end(&strm);
	blen = decode(out, olen, back);
	printf("xz -%u multithreaded: %zu bytes hash %016llx round trip %s\n",
	       mt.preset, olen, (unsigned long long)corpus_hash(out, olen),
	       blen == N && !memcmp(in, back, N) ? "ok" : "BAD");
	return 0;
}
