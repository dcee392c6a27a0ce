/* SPDX-License-Identifier: MIT */
/*
 * The subset of Linux's perf_event_open ABI that the guest kernel serves
 * (system call 298, guest-kernel/perf_event.c) and libvpmu calls
 * (userlib/vpmu.c), plus perfvisor's own trap-cost ioctls.  Values are
 * Linux's (include/uapi/linux/perf_event.h), so existing tools work;
 * guest code has no linux/ headers, hence this copy of the few it uses.
 */
#ifndef PV_UAPI_PERF_ABI_H
#define PV_UAPI_PERF_ABI_H

#include <stdbool.h>
#include <stdint.h>

#include "vpmu.h"

#define PV_SYS_PERF_EVENT_OPEN		298

/* perf_event_attr.type, and .config for PERF_TYPE_HARDWARE */
#define PV_PERF_TYPE_HARDWARE		0
#define PV_PERF_TYPE_RAW		4
#define PV_PERF_COUNT_HW_CPU_CYCLES	0
#define PV_PERF_COUNT_HW_INSTRUCTIONS	1
#define PV_PERF_COUNT_HW_BRANCH_INSTRUCTIONS 4
#define PV_PERF_COUNT_HW_REF_CPU_CYCLES	9

/* perf_event_attr.flags bits (Linux's bitfield, in order) */
#define PV_PERF_ATTR_DISABLED		(1ull << 0)
#define PV_PERF_ATTR_INHERIT		(1ull << 1)
#define PV_PERF_ATTR_EXCLUDE_USER	(1ull << 4)
#define PV_PERF_ATTR_EXCLUDE_KERNEL	(1ull << 5)
#define PV_PERF_ATTR_FREQ		(1ull << 10)

/* perf_event_attr.read_format */
#define PV_PERF_FORMAT_TOTAL_TIME_ENABLED 1
#define PV_PERF_FORMAT_TOTAL_TIME_RUNNING 2
#define PV_PERF_FORMAT_ID		4

/* ioctls on a perf event fd */
#define PV_PERF_EVENT_IOC_ENABLE	0x2400
#define PV_PERF_EVENT_IOC_DISABLE	0x2401
#define PV_PERF_EVENT_IOC_REFRESH	0x2402
#define PV_PERF_EVENT_IOC_RESET		0x2403
#define PV_PERF_EVENT_IOC_PERIOD	0x40082404
#define PV_PERF_EVENT_IOC_ID		0x80082407
/* perfvisor's own, for `vmm bench read-cost`: n trapped rdmsr/wrmsr,
 * returning the cycles they took */
#define PV_PERFVISOR_IOC_TRAP_READ	0x2480
#define PV_PERFVISOR_IOC_TRAP_WRITE	0x2481

/*
 * The head of Linux's struct perf_event_attr: all the kernel reads.
 * Callers pass the rest zeroed (libvpmu sends a longer, zeroed struct).
 */
struct pv_perf_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;		/* PV_PERF_ATTR_* */
};

_Static_assert(sizeof(struct pv_perf_attr) == 48, "perf attr head");

/* attr.flags for counting user and/or kernel mode. */
static inline uint64_t pv_perf_attr_exclude(bool user, bool kernel)
{
	return (user ? 0 : PV_PERF_ATTR_EXCLUDE_USER) |
		(kernel ? 0 : PV_PERF_ATTR_EXCLUDE_KERNEL);
}

/* The PERFEVTSEL value counting `flags`' modes of event, as the kernel
 * programs it for perf_event_open. */
static inline uint64_t pv_perf_attr_evtsel(uint16_t event, uint64_t flags)
{
	return pv_evtsel_count(event, !(flags & PV_PERF_ATTR_EXCLUDE_USER),
			       !(flags & PV_PERF_ATTR_EXCLUDE_KERNEL));
}

#endif
