// SPDX-License-Identifier: MIT
/*
 * Which events the virtual PMU has: perf_event_open's PERF_TYPE_HARDWARE,
 * PERF_TYPE_HW_CACHE and PERF_TYPE_RAW configs mapped onto the events the
 * active source counts (CPUID.0AH:EBX), with Linux's errors for the rest.
 */
#include "kernel.h"
#include "perf_abi.h"
#include "perf_event.h"
#include "vpmu.h"

/* CPUID.0AH:EBX, read once: the architectural events the source lacks. */
static u32 arch_unavailable(void)
{
	static u32 ebx;
	static bool known;
	u32 a = 0xa, b, c = 0, d;

	if (!known) {
		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
		ebx = b;
		known = true;
	}
	return ebx;
}

/*
 * The event select and umask of an architectural event (CPUID.0AH:EBX
 * bit order), or 0 when the active source cannot count it: Linux drops
 * such events from its map, so they open with ENOENT.
 */
static u16 arch_event(int bit)
{
	static const u16 ev[PV_ARCH_EVENTS] = {
		PV_EVENT_CYCLES, PV_EVENT_INSTRUCTIONS, PV_EVENT_REF_CYCLES,
		PV_EVENT_LLC_REFS, PV_EVENT_LLC_MISSES, PV_EVENT_BRANCHES,
		PV_EVENT_BRANCH_MISSES,
	};

	return arch_unavailable() & (1u << bit) ? 0 : ev[bit];
}

/* PERF_TYPE_HARDWARE: Linux's Intel map; ENOENT for what it lacks. */
static int event_hardware(u64 config, u16 *ev)
{
	static const signed char bit[PV_PERF_COUNT_HW_MAX] = {
		0, 1, 3, 4, 5, 6, 2, -1, -1, 2,
	};

	/* The upper half may name the PMU: the core PMU's type is RAW. */
	if (config >> 32 && config >> 32 != PV_PERF_TYPE_RAW)
		return -ENOENT;
	config &= 0xffffffff;
	if (config >= PV_PERF_COUNT_HW_MAX)
		return -EINVAL;
	*ev = bit[config] < 0 ? 0 : arch_event(bit[config]);
	return *ev ? 0 : -ENOENT;
}

/*
 * PERF_TYPE_HW_CACHE: Linux's generic architectural PMU has no cache
 * table; the last level and the branch unit are what architectural events
 * can say, and only their reads.  Out of range is EINVAL, a write or
 * prefetch of the instruction side or the branch unit too (Linux marks
 * them impossible), the rest ENOENT.
 */
static int event_hw_cache(u64 config, u16 *ev)
{
	u32 cache = config & 0xff, op = (config >> 8) & 0xff;
	u32 result = (config >> 16) & 0xff;

	if (config >> 32 && config >> 32 != PV_PERF_TYPE_RAW)
		return -ENOENT;
	if ((config & 0xff000000) || cache >= PV_PERF_COUNT_HW_CACHE_MAX ||
	    op >= PV_PERF_COUNT_HW_CACHE_OP_MAX ||
	    result >= PV_PERF_COUNT_HW_CACHE_RESULT_MAX)
		return -EINVAL;
	/* L1I (1), ITLB (4), BPU (5): no writes or prefetches */
	if (op != PV_PERF_COUNT_HW_CACHE_OP_READ &&
	    (cache == 1 || cache == 4 || cache == PV_PERF_COUNT_HW_CACHE_BPU))
		return -EINVAL;
	*ev = 0;
	if (op == PV_PERF_COUNT_HW_CACHE_OP_READ &&
	    cache == PV_PERF_COUNT_HW_CACHE_LL)
		*ev = arch_event(result ? 4 : 3);
	else if (op == PV_PERF_COUNT_HW_CACHE_OP_READ &&
		 cache == PV_PERF_COUNT_HW_CACHE_BPU)
		*ev = arch_event(result ? 6 : 5);
	return *ev ? 0 : -ENOENT;
}

/* CPUID vendor "AuthenticAMD" (EBX "Auth"), read once. */
static bool cpu_is_amd(void)
{
	static int amd = -1;
	u32 a = 0, b, c = 0, d;

	if (amd < 0) {
		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
		amd = b == 0x68747541;
	}
	return amd;
}

/* Haswell's TSX qualifiers in a raw config (libpfm4's intx, intxcp). */
#define RAW_IN_TX		(1ull << 32)
#define RAW_IN_TX_CP		(1ull << 33)

/*
 * PERF_TYPE_RAW: an IA32_PERFEVTSELx value.  Linux keeps the event select,
 * umask, edge, invert and counter mask, drops the bits it sets itself
 * (USR, OS, INT, EN, PC) and the reserved ones, takes AnyThread only from a
 * version-3 Intel PMU (EINVAL on this version-2 one; AMD has no such bit:
 * dropped), and the TSX qualifiers only
 * where the CPU has TSX (the guest's CPUID says it has).  Linux takes any
 * other encoding: it never knows whether the PMU counts it.  The virtual
 * PMU counts only the architectural events its source has and its own
 * virtual ones (event select 0xfe); any other encoding, and an edge,
 * invert, counter-mask or in-transaction variant (cycles in which the
 * count grew by at least cmask, say: no source has that), opens as an
 * event no counter can take, EVENT_ABSENT (perf_event.h): Linux's event with an empty
 * constraint.  It never runs (time running stays 0: perf stat says
 * "<not counted>"), a pinned one reads 0 bytes once enabled (Linux's
 * error state: PAPI says "conflict"), and a group with one in it does not
 * fit the PMU (EINVAL).  Never a counter that silently stays 0.
 */
static int event_raw_config(u64 config, u16 *ev)
{
	u16 code = config & 0xffff;

	if ((config & PV_EVTSEL_ANY) && !cpu_is_amd())
		return -EINVAL;
	if (config & (PV_EVTSEL_EDGE | PV_EVTSEL_INV | PV_EVTSEL_CMASK_MASK |
		      RAW_IN_TX | RAW_IN_TX_CP))
		return EVENT_ABSENT;
	/* AMD's event select goes on in bits 32-35 (Linux keeps them):
	 * none of those events is one this PMU has. */
	if (cpu_is_amd() && (config & (0xfull << 32)))
		return EVENT_ABSENT;
	*ev = code;
	if ((code & 0xff) == PV_EVENT_VIRT_CODE)
		return 0;
	for (int i = 0; i < PV_ARCH_EVENTS; i++)
		if (arch_event(i) == code)
			return 0;
	/* Linux's pseudo-encoding of the fixed reference-cycles counter */
	if (code == 0x0300 && arch_event(2)) {
		*ev = PV_EVENT_REF_CYCLES;
		return 0;
	}
	/* An AMD guest's tools (libpfm4's amd64 tables, PAPI's presets)
	 * name the same events by AMD's core encodings. */
	if (cpu_is_amd()) {
		static const struct { u16 code; int bit; } amd[] = {
			{ 0x0076, 0 },	/* CPU_CLK_UNHALTED: cycles */
			{ 0x00c0, 1 },	/* RETIRED_INSTRUCTIONS */
			{ 0x00c2, 5 },	/* RETIRED_BRANCH_INSTRUCTIONS */
			{ 0x00c3, 6 },	/* ... MISPREDICTED */
		};

		for (unsigned int i = 0; i < sizeof(amd) / sizeof(amd[0]); i++)
			if (amd[i].code == code && arch_event(amd[i].bit)) {
				*ev = arch_event(amd[i].bit);
				return 0;
			}
	}
	return EVENT_ABSENT;
}

int perf_event_map(u32 type, u64 config, u16 *ev)
{
	if (type == PV_PERF_TYPE_HARDWARE)
		return event_hardware(config, ev);
	if (type == PV_PERF_TYPE_HW_CACHE)
		return event_hw_cache(config, ev);
	return event_raw_config(config, ev);
}
