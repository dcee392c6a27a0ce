/* SPDX-License-Identifier: MIT */
/*
 * Shared by the corpus mains: deterministic input and a hash to print, so
 * that the guest's output can be compared with the native run's byte for
 * byte without shipping data files.
 */
#ifndef CORPUS_H
#define CORPUS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* FNV-1a 64: enough to tell two outputs apart, no library needed. */
static inline uint64_t corpus_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/*
 * Text-like input that compresses to a third or so (words from a small
 * vocabulary, numbers, newlines): compressors do real matching work, and
 * the same seed gives the same bytes on every run.
 */
static inline void corpus_text(unsigned char *buf, size_t n, uint64_t seed)
{
	static const char *const words[] = {
		"the", "guest", "kernel", "runs", "static", "binaries", "of",
		"upstream", "code", "compressed", "with", "several", "formats",
		"and", "hashed", "by", "a", "library", "nobody", "here", "wrote",
	};
	uint64_t x = seed | 1;
	size_t i = 0;

	while (i < n) {
		char tmp[32];
		int len;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (x % 11 == 0)
			len = snprintf(tmp, sizeof(tmp), "%llu ",
				       (unsigned long long)(x >> 40));
		else if (x % 17 == 0)
			len = snprintf(tmp, sizeof(tmp), ".\n");
		else
			len = snprintf(tmp, sizeof(tmp), "%s ",
				       words[(x >> 8) % (sizeof(words) /
							 sizeof(words[0]))]);
		for (int k = 0; k < len && i < n; k++)
			buf[i++] = tmp[k];
	}
}

static inline void *corpus_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		perror("malloc");
		exit(1);
	}
	return p;
}

#endif
