/* SPDX-License-Identifier: MIT */
/*
 * Sequence counts (seqlock): the one reader and writer of every page the
 * guest shares between writers and lock-free readers, the two vPMU pages
 * (uapi/vpmu.h) and the vvar page of the clocks (uapi/vclock.h).  Guest
 * kernel, vDSO, libvpmu and the VMM's test model all compile this code.
 *
 * Static inline, freestanding (no libc), fixed-width types only.
 */
#ifndef PV_UAPI_SEQCOUNT_H
#define PV_UAPI_SEQCOUNT_H

#include <stdbool.h>
#include <stdint.h>

/* Wait for an even count: odd means a writer is in the middle. */
static inline uint32_t pv_seq_read_begin(const volatile uint32_t *seq)
{
	uint32_t s;

	while ((s = *seq) & 1)
		__builtin_ia32_pause();
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return s;
}

/* True when a writer ran since pv_seq_read_begin() returned s. */
static inline bool pv_seq_read_retry(const volatile uint32_t *seq, uint32_t s)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return *seq != s;
}

/*
 * Writers are never concurrent on one page: a plain increment is enough
 * (one instruction; the guest kernel emulates every one), and the fences
 * order it against the data stores.
 */
static inline void pv_seq_write_begin(uint32_t *seq)
{
	(*seq)++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void pv_seq_write_end(uint32_t *seq)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	(*seq)++;
}

#endif
