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
#define PV_PERF_TYPE_SOFTWARE		1
#define PV_PERF_TYPE_HW_CACHE		3
#define PV_PERF_TYPE_RAW		4
#define PV_PERF_COUNT_HW_CPU_CYCLES	0
#define PV_PERF_COUNT_HW_INSTRUCTIONS	1
#define PV_PERF_COUNT_HW_CACHE_REFERENCES 2
#define PV_PERF_COUNT_HW_CACHE_MISSES	3
#define PV_PERF_COUNT_HW_BRANCH_INSTRUCTIONS 4
#define PV_PERF_COUNT_HW_BRANCH_MISSES	5
#define PV_PERF_COUNT_HW_BUS_CYCLES	6
#define PV_PERF_COUNT_HW_REF_CPU_CYCLES	9
#define PV_PERF_COUNT_HW_MAX		10
/* PERF_TYPE_HW_CACHE: config = cache | op << 8 | result << 16 */
#define PV_PERF_COUNT_HW_CACHE_LL	2
#define PV_PERF_COUNT_HW_CACHE_BPU	5
#define PV_PERF_COUNT_HW_CACHE_MAX	7
#define PV_PERF_COUNT_HW_CACHE_OP_READ	0
#define PV_PERF_COUNT_HW_CACHE_OP_MAX	3
#define PV_PERF_COUNT_HW_CACHE_RESULT_MAX 2
/* PERF_TYPE_SOFTWARE .config */
#define PV_PERF_COUNT_SW_CPU_CLOCK	0
#define PV_PERF_COUNT_SW_TASK_CLOCK	1
#define PV_PERF_COUNT_SW_CONTEXT_SWITCHES 3
#define PV_PERF_COUNT_SW_CPU_MIGRATIONS	4
#define PV_PERF_COUNT_SW_MAX		12

/* perf_event_attr.flags bits (Linux's bitfield, in order) */
#define PV_PERF_ATTR_DISABLED		(1ull << 0)
#define PV_PERF_ATTR_INHERIT		(1ull << 1)
#define PV_PERF_ATTR_PINNED		(1ull << 2)
#define PV_PERF_ATTR_EXCLUDE_USER	(1ull << 4)
#define PV_PERF_ATTR_EXCLUDE_KERNEL	(1ull << 5)
#define PV_PERF_ATTR_FREQ		(1ull << 10)
#define PV_PERF_ATTR_PRECISE_IP		(3ull << 15)

/* perf_event_attr.read_format */
#define PV_PERF_FORMAT_TOTAL_TIME_ENABLED 1
#define PV_PERF_FORMAT_TOTAL_TIME_RUNNING 2
#define PV_PERF_FORMAT_ID		4
#define PV_PERF_FORMAT_GROUP		8
#define PV_PERF_FORMAT_LOST		16
#define PV_PERF_FORMAT_ALL		31

/* perf_event_open()'s flags argument */
#define PV_PERF_FLAG_FD_CLOEXEC		8
#define PV_PERF_FLAG_ALL		15

/* ioctls on a perf event fd */
#define PV_PERF_EVENT_IOC_ENABLE	0x2400
#define PV_PERF_EVENT_IOC_DISABLE	0x2401
#define PV_PERF_EVENT_IOC_REFRESH	0x2402
#define PV_PERF_EVENT_IOC_RESET		0x2403
#define PV_PERF_EVENT_IOC_PERIOD	0x40082404
#define PV_PERF_EVENT_IOC_ID		0x80082407
#define PV_PERF_IOC_FLAG_GROUP		1
/* perfvisor's own, for `vmm bench read-cost`: n trapped rdmsr/wrmsr,
 * returning the cycles they took */
#define PV_PERFVISOR_IOC_TRAP_READ	0x2480
#define PV_PERFVISOR_IOC_TRAP_WRITE	0x2481
/* perfvisor's own: the counter slot (0..3) of the event in its thread's
 * counter page, and mmap() at this offset maps that page (libvpmu's direct
 * read); offset 0 is Linux's perf_event_mmap_page. */
#define PV_PERFVISOR_IOC_COUNTER	0x2482
#define PV_PERF_MMAP_THREAD_OFF		(1ull << 32)

/*
 * The head of Linux's struct perf_event_attr: all the kernel acts on.  It
 * copies the whole of attr.size (up to PV_PERF_ATTR_SIZE) and rejects
 * what it cannot honour.
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

#define PV_PERF_ATTR_SIZE_VER0		64
/* PERF_ATTR_SIZE_VER8: the largest attr the guest kernel knows */
#define PV_PERF_ATTR_SIZE		136

/*
 * The head of Linux's struct perf_event_mmap_page (the first page of a
 * perf fd's mmap), up to the fields a self-monitoring reader uses.
 */
#define PV_PERF_CAP_BIT0_IS_DEPRECATED	(1ull << 1)
#define PV_PERF_CAP_USER_RDPMC		(1ull << 2)
#define PV_PERF_CAP_USER_TIME		(1ull << 3)

struct pv_perf_mmap_page {
	uint32_t version;
	uint32_t compat_version;
	uint32_t lock;		/* seqlock: the fields below are consistent
				 * when it reads the same, even, before and
				 * after */
	uint32_t index;		/* rdpmc index + 1, 0: read() */
	int64_t offset;		/* count = offset (+ rdpmc when index) */
	uint64_t time_enabled;
	uint64_t time_running;
	uint64_t capabilities;	/* PV_PERF_CAP_* */
	uint16_t pmc_width;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_offset;
	uint64_t time_zero;
	uint32_t size;		/* of the header: up to reserved */
	uint32_t reserved_1;
	uint64_t time_cycles;
	uint64_t time_mask;
	uint8_t reserved[116 * 8];
	/* The sample ring, the pages after this one */
	uint64_t data_head;	/* bytes written (the kernel) */
	uint64_t data_tail;	/* bytes consumed (the reader writes it) */
	uint64_t data_offset;	/* where the ring starts in the mapping */
	uint64_t data_size;
};

_Static_assert(__builtin_offsetof(struct pv_perf_mmap_page, capabilities) ==
	       40, "perf mmap page");
_Static_assert(__builtin_offsetof(struct pv_perf_mmap_page, size) == 72,
	       "perf mmap page");
_Static_assert(__builtin_offsetof(struct pv_perf_mmap_page, data_head) ==
	       1024, "perf mmap page");

/* attr.sample_type bits whose fields the guest kernel writes in a
 * PERF_RECORD_SAMPLE, in Linux's order: identifier, ip, pid and tid,
 * time, id, stream id, cpu, period. */
#define PV_PERF_SAMPLE_IP		(1ull << 0)
#define PV_PERF_SAMPLE_TID		(1ull << 1)
#define PV_PERF_SAMPLE_TIME		(1ull << 2)
#define PV_PERF_SAMPLE_ID		(1ull << 6)
#define PV_PERF_SAMPLE_CPU		(1ull << 7)
#define PV_PERF_SAMPLE_PERIOD		(1ull << 8)
#define PV_PERF_SAMPLE_STREAM_ID	(1ull << 9)
#define PV_PERF_SAMPLE_IDENTIFIER	(1ull << 16)
#define PV_PERF_SAMPLE_WRITTEN		(PV_PERF_SAMPLE_IP | \
	PV_PERF_SAMPLE_TID | PV_PERF_SAMPLE_TIME | PV_PERF_SAMPLE_ID | \
	PV_PERF_SAMPLE_CPU | PV_PERF_SAMPLE_PERIOD | \
	PV_PERF_SAMPLE_STREAM_ID | PV_PERF_SAMPLE_IDENTIFIER)
#define PV_PERF_RECORD_SAMPLE		9
#define PV_PERF_RECORD_MISC_KERNEL	1
#define PV_PERF_RECORD_MISC_USER	2

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
