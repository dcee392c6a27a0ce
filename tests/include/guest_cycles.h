/* SPDX-License-Identifier: MIT */
/*
 * The mode clock's test programs (trip, woken, blocktrap): a cycles
 * counter of this thread opened through the guest's perf_event ABI with
 * one mode left out, and its count read.  After guest_check.h.
 */
#ifndef TESTS_GUEST_CYCLES_H
#define TESTS_GUEST_CYCLES_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf_abi.h"

/* A hardware event (PV_PERF_COUNT_HW_*) of this thread; exclude:
 * PV_PERF_ATTR_EXCLUDE_KERNEL or _USER */
static inline int hw_event_open(uint64_t config, uint64_t exclude)
{
	uint64_t attr[PV_PERF_ATTR_SIZE_VER0 / 8] = { 0 };
	struct pv_perf_attr *a = (struct pv_perf_attr *)attr;

	a->type = PV_PERF_TYPE_HARDWARE;
	a->size = sizeof(attr);
	a->config = config;
	a->flags = exclude;
	return syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
}

static inline int cycles_open(uint64_t exclude)
{
	return hw_event_open(PV_PERF_COUNT_HW_CPU_CYCLES, exclude);
}

static uint64_t cycles_read(int fd)
{
	uint64_t v = 0;

	CHECK(read(fd, &v, sizeof(v)) == sizeof(v), "read %d", fd);
	return v;
}

#endif
