/* SPDX-License-Identifier: MIT */
/*
 * Corpus: zlib (Debian's libz.a): deflate at three levels and through the
 * gzip stream interface on a file, inflate back, crc32 and adler32.
 */
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include "corpus.h"

#define N (768 << 10)

int main(int argc, char **argv)
{
	unsigned char *in = corpus_alloc(N), *back = corpus_alloc(N);
	uLong bound = compressBound(N);
	unsigned char *out = corpus_alloc(bound);
	char path[256];
	gzFile gz;
	int got;

	corpus_text(in, N, 1);
	printf("input %d crc32 %08lx adler32 %08lx\n", N,
	       crc32(0, in, N), adler32(1, in, N));
	for (int level = 1; level <= 9; level += 4) {
		uLongf olen = bound, blen = N;

		if (compress2(out, &olen, in, N, level) != Z_OK ||
		    uncompress(back, &blen, out, olen) != Z_OK) {
			fprintf(stderr, "zlib: level %d failed\n", level);
			return 1;
		}
		printf("level %d: %lu bytes hash %016llx round trip %s\n", level,
		       olen, (unsigned long long)corpus_hash(out, olen),
		       blen == N && !memcmp(in, back, N) ? "ok" : "BAD");
	}
	snprintf(path, sizeof(path), "%s/data.gz", argc > 1 ? argv[1] : ".");
	gz = gzopen(path, "wb6");
	if (!gz || gzwrite(gz, in, N) != N || gzclose(gz) != Z_OK) {
		perror(path);
		return 1;
	}
	gz = gzopen(path, "rb");
	got = gz ? gzread(gz, back, N) : -1;
	if (gz)
		gzclose(gz);
	printf("gzip file: %s\n", got == N && !memcmp(in, back, N) ? "ok" : "BAD");
	remove(path);
	return 0;
}
