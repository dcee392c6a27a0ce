/* SPDX-License-Identifier: MIT */
/*
 * Corpus: Zstandard (Debian's libzstd.a): one-shot compression at two
 * levels, then streaming with a checksum, each decompressed back.
 * Debian builds libzstd.a without ZSTD_MULTITHREAD (ZSTD_c_nbWorkers is
 * "Unsupported parameter" there), so the multithreaded compressor of the
 * corpus is xz's; with WORKERS > 0 this program asks anyway and prints
 * what the library answered, the same natively and in the guest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "corpus.h"

#define N (2 << 20)

static void check(size_t r, const char *what)
{
	if (ZSTD_isError(r)) {
		fprintf(stderr, "zstd: %s: %s\n", what, ZSTD_getErrorName(r));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 0;
	unsigned char *in = corpus_alloc(N), *back = corpus_alloc(N);
	size_t bound = ZSTD_compressBound(N), olen, blen;
	unsigned char *out = corpus_alloc(bound);
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	ZSTD_outBuffer ob = { out, bound, 0 };
	ZSTD_inBuffer ib = { in, N, 0 };
	size_t r;

	corpus_text(in, N, 4);
	for (int level = 1; level <= 9; level += 8) {
		olen = ZSTD_compress(out, bound, in, N / 4, level);
		check(olen, "compress");
		blen = ZSTD_decompress(back, N, out, olen);
		check(blen, "decompress");
		printf("zstd -%d: %zu bytes hash %016llx round trip %s\n", level,
		       olen, (unsigned long long)corpus_hash(out, olen),
		       blen == N / 4 && !memcmp(in, back, blen) ? "ok" : "BAD");
	}

	check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3), "level");
	if (workers) {
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, workers);
		printf("nbWorkers %d: %s\n", workers,
		       ZSTD_isError(r) ? ZSTD_getErrorName(r) : "ok");
	}
	check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1), "checksum");
	do {
		r = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
		check(r, "compressStream2");
	} while (r);
	ZSTD_freeCCtx(cctx);
	blen = ZSTD_decompress(back, N, out, ob.pos);
	check(blen, "decompress");
	printf("zstd -3 stream: %zu bytes hash %016llx round trip %s\n",
	       ob.pos, (unsigned long long)corpus_hash(out, ob.pos),
	       blen == N && !memcmp(in, back, N) ? "ok" : "BAD");
	return 0;
}
