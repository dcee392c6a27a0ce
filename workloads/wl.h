/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the perfvisor workload suite: size selection, a small
 * deterministic PRNG, checksum mixing and the self-check at the end.
 *
 * Everything is static inline so that each workload stays one translation
 * unit: the guest builds are a single musl-gcc invocation per program and
 * the instruction counts of one workload do not depend on how another one
 * was linked.
 *
 * Only libc calls a tiny guest kernel supports are used here: printf and
 * fprintf at the very end.  No files, no clocks, no environment.
 */
#ifndef PERFVISOR_WL_H
#define PERFVISOR_WL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * "micro" and "tiny" are not SPEC sizes: they retire a few tens of
 * thousands of instructions (bzip2, whose Huffman set-up alone is 250k,
 * about 300k) so that exact single-step counting (the `step` source and
 * the ptrace oracle, tens of microseconds per instruction) finishes in
 * seconds.  They come in two so that the difference of their counts
 * cancels start-up, which differs between the guest and Linux.
 */
enum wl_size { WL_MICRO, WL_TINY, WL_TEST, WL_TRAIN, WL_REF, WL_NSIZES };

static const char *const wl_size_names[WL_NSIZES] = {
	"micro", "tiny", "test", "train", "ref",
};

static inline int wl_parse_size(int argc, char **argv, const char *name)
{
	if (argc >= 2) {
		for (int i = 0; i < WL_NSIZES; i++)
			if (strcmp(argv[1], wl_size_names[i]) == 0)
				return i;
	}
	fprintf(stderr, "usage: %s micro|tiny|test|train|ref\n", name);
	exit(2);
}

/* splitmix64: tiny state, good enough statistics, identical everywhere. */
struct wl_rng {
	uint64_t s;
};

static inline void wl_rng_seed(struct wl_rng *r, uint64_t seed)
{
	r->s = seed;
}

static inline uint64_t wl_rng_next(struct wl_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t wl_rng_u32(struct wl_rng *r)
{
	return (uint32_t)(wl_rng_next(r) >> 32);
}

/* Uniform in [0, n) by multiply-shift: no division, no modulo bias worth
 * caring about for n far below 2^32. */
static inline uint32_t wl_rng_below(struct wl_rng *r, uint32_t n)
{
	return (uint32_t)(((uint64_t)wl_rng_u32(r) * n) >> 32);
}

/* Uniform double in [0, 1) from the top 53 bits: exact, no libm. */
static inline double wl_rng_double(struct wl_rng *r)
{
	return (double)(wl_rng_next(r) >> 11) * 0x1p-53;
}

/* FNV-1a over the 8 bytes of v, folded to 32 bits at the end. */
static inline void wl_mix(uint64_t *h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		*h ^= (v >> (8 * i)) & 0xff;
		*h *= 0x100000001b3ULL;
	}
}

static inline uint64_t wl_hash_init(void)
{
	return 0xcbf29ce484222325ULL;
}

static inline uint32_t wl_hash_fold(uint64_t h)
{
	return (uint32_t)(h ^ (h >> 32));
}

/*
 * Round half away from zero without libm.  Floating-point results enter a
 * checksum only after scaling and rounding: builds with different
 * compilers or libcs must agree on the checksum, and a last-bit difference
 * in an intermediate should not flip it.
 */
static inline int64_t wl_round(double x)
{
	return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

static inline void wl_mix_f64(uint64_t *h, double x, double scale)
{
	wl_mix(h, (uint64_t)wl_round(x * scale));
}

/*
 * Print the one result line and compare against the expected checksum for
 * this size.  Returns the process exit status.
 */
static inline int wl_finish(const char *name, int size, uint32_t sum,
			    const uint32_t expect[WL_NSIZES])
{
	printf("%s %s checksum=%08x\n", name, wl_size_names[size], sum);
	if (sum != expect[size]) {
		fprintf(stderr, "%s: %s: checksum mismatch: got %08x, expected %08x\n",
			name, wl_size_names[size], sum, expect[size]);
		return 1;
	}
	return 0;
}

#endif /* PERFVISOR_WL_H */
