/* SPDX-License-Identifier: MIT */
/*
 * The fuzz input as a stream of little-endian fields: what the structured
 * fuzzers (exit dispatch, pmu MSRs) take their operations from.
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct input {
	const uint8_t *p;
	size_t left;
};

/* The next `bytes` bytes (little-endian), zeros once the input runs out. */
static inline uint64_t take(struct input *in, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes && in->left; i++, in->left--)
		v |= (uint64_t)*in->p++ << (8 * i);
	return v;
}

#endif
