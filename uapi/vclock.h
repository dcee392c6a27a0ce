/* SPDX-License-Identifier: MIT */
/*
 * The clocks as the guest kernel's clock_gettime and the vDSO both compute
 * them.  One set of inline helpers, compiled into both, so that the value a
 * program reads in user mode (no kernel entry: on kvm_pvm an entry costs
 * ~25 us and every kernel instruction is emulated) is bit for bit the one
 * the system call returns for the same TSC.
 */
#ifndef PV_UAPI_VCLOCK_H
#define PV_UAPI_VCLOCK_H

#include <stdint.h>

/*
 * User address of the vvar page (read-only: struct pv_vvar) and, the page
 * after it, of the vDSO image.  Between the top of mmap's search
 * (PV_USER_STACK_TOP - 64 MiB) and the stack's 8 MiB, in a 2 MiB region
 * of its own so that 4 KiB pages never meet the stack's 2 MiB ones.
 */
#define PV_VVAR_VA		0x7ffffc000000ull
#define PV_VDSO_VA		(PV_VVAR_VA + 4096)

/*
 * What the clocks need, written by the kernel at boot.  seq is the
 * sequence count of uapi/seqcount.h, read there by the vDSO.  Nothing
 * changes the fields after boot today (no settimeofday), but a reader that
 * honours seq keeps working when something does.
 */
struct pv_vvar {
	uint32_t seq;
	uint32_t ncpus;			/* getcpu answers 0 without entry if 1 */
	uint64_t tsc_khz;
	uint64_t realtime_ns;		/* CLOCK_REALTIME at realtime_tsc */
	uint64_t realtime_tsc;
};

/*
 * TSC ticks to ns.  Two divisions rather than a mult/shift: exact for any
 * tick count (no rounding that grows with uptime), and a division is one
 * emulated instruction in the kernel and ~30 native cycles in the vDSO.
 */
static inline uint64_t pv_ns_from_tsc(uint64_t tsc, uint64_t khz)
{
	return tsc / khz * 1000000 + tsc % khz * 1000000 / khz;
}

/* CLOCK_MONOTONIC (and _RAW, _COARSE, BOOTTIME): ns since TSC 0. */
static inline uint64_t pv_monotonic_ns(const volatile struct pv_vvar *v,
				       uint64_t tsc)
{
	return pv_ns_from_tsc(tsc, v->tsc_khz);
}

/* CLOCK_REALTIME (and _COARSE): the host's wall clock at boot, advanced. */
static inline uint64_t pv_realtime_ns(const volatile struct pv_vvar *v,
				      uint64_t tsc)
{
	return v->realtime_ns + pv_ns_from_tsc(tsc - v->realtime_tsc,
					       v->tsc_khz);
}

#endif
