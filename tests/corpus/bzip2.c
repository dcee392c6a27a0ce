/* SPDX-License-Identifier: MIT */
/* Corpus: bzip2 (Debian's libbz2.a): compress at two block sizes, back. */
#include <bzlib.h>
#include <stdio.h>
#include <string.h>
#include "corpus.h"

#define N (512 << 10)

int main(void)
{
	unsigned char *in = corpus_alloc(N), *back = corpus_alloc(N);
	unsigned int bound = N + N / 100 + 600;
	char *out = corpus_alloc(bound);

	corpus_text(in, N, 2);
	for (int bs = 1; bs <= 9; bs += 8) {
		unsigned int olen = bound, blen = N;

		if (BZ2_bzBuffToBuffCompress(out, &olen, (char *)in, N, bs, 0, 0) ||
		    BZ2_bzBuffToBuffDecompress((char *)back, &blen, out, olen,
					       0, 0)) {
			fprintf(stderr, "bzip2: block size %d failed\n", bs);
			return 1;
		}
		printf("bzip2 -%d: %u bytes hash %016llx round trip %s\n", bs,
		       olen, (unsigned long long)corpus_hash(out, olen),
		       blen == N && !memcmp(in, back, N) ? "ok" : "BAD");
	}
	return 0;
}
