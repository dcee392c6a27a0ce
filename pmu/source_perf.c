// SPDX-License-Identifier: MIT
/*
 * perf: host perf_event_open counters on each vCPU thread.  Hardware
 * events where the host has a PMU (counting the guest only, exclude_host),
 * and always the software task-clock, which is what this host offers.  The
 * fds are opened lazily by the first read on the vCPU's own thread (pid 0),
 * which is where the VMM calls us from.  There is no direct guest read:
 * the guest reads these counters with rdmsr.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

enum perf_slot {
	PERF_TASK_CLOCK,
	PERF_INSTRUCTIONS,
	PERF_CYCLES,
	PERF_REF_CYCLES,
	PERF_BRANCHES,
	PERF_SLOTS,
};

static const struct {
	uint16_t event;
	uint32_t type;
	uint64_t config;
} perf_events[PERF_SLOTS] = {
	[PERF_TASK_CLOCK] = { PV_EVENT_TASK_CLOCK, PERF_TYPE_SOFTWARE,
			      PERF_COUNT_SW_TASK_CLOCK },
	[PERF_INSTRUCTIONS] = { PV_EVENT_INSTRUCTIONS, PERF_TYPE_HARDWARE,
				PERF_COUNT_HW_INSTRUCTIONS },
	[PERF_CYCLES] = { PV_EVENT_CYCLES, PERF_TYPE_HARDWARE,
			  PERF_COUNT_HW_CPU_CYCLES },
	[PERF_REF_CYCLES] = { PV_EVENT_REF_CYCLES, PERF_TYPE_HARDWARE,
			      PERF_COUNT_HW_REF_CPU_CYCLES },
	[PERF_BRANCHES] = { PV_EVENT_BRANCHES, PERF_TYPE_HARDWARE,
			    PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
};

struct perf_vcpu {
	int fd[PERF_SLOTS];
	uint64_t last[PERF_SLOTS];
};

struct perf_source {
	struct pmu_source base;
	bool supported[PERF_SLOTS];
	unsigned int nr_vcpus;
	struct perf_vcpu *vcpus;
};

static struct perf_source *to_perf(struct pmu_source *s)
{
	return (struct perf_source *)s;
}

static int perf_open(enum perf_slot slot)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = perf_events[slot].type;
	attr.config = perf_events[slot].config;
	/* Hardware events count the guest only; task-clock counts the
	 * thread, whose VMM time the pause at each exit excludes anyway. */
	attr.exclude_host = attr.type == PERF_TYPE_HARDWARE;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static int perf_slot_of(uint16_t event)
{
	for (int i = 0; i < PERF_SLOTS; i++) {
		if (perf_events[i].event == event)
			return i;
	}
	return -1;
}

static int perf_create(struct pmu *pmu, struct pmu_source **out,
		       const char **err)
{
	struct perf_source *p = calloc(1, sizeof(*p));
	int fd;

	if (p)
		p->vcpus = calloc(pmu->nr_vcpus, sizeof(*p->vcpus));
	if (!p || !p->vcpus) {
		free(p);
		*err = "out of memory";
		return -ENOMEM;
	}
	p->base.ops = &pmu_source_perf;
	p->base.pmu = pmu;
	p->nr_vcpus = pmu->nr_vcpus;
	for (unsigned int v = 0; v < pmu->nr_vcpus; v++) {
		for (int i = 0; i < PERF_SLOTS; i++)
			p->vcpus[v].fd[i] = -1;
	}
	/* Probe on this thread which events the host can count at all. */
	for (int i = 0; i < PERF_SLOTS; i++) {
		fd = perf_open(i);
		if (fd >= 0) {
			p->supported[i] = true;
			close(fd);
		} else if (i == PERF_TASK_CLOCK) {
			int ret = -errno;

			*err = "perf_event_open(task-clock) denied";
			free(p->vcpus);
			free(p);
			return ret;
		}
	}
	*out = &p->base;
	return 0;
}

static void perf_destroy(struct pmu_source *s)
{
	struct perf_source *p = to_perf(s);

	for (unsigned int v = 0; v < p->nr_vcpus; v++) {
		for (int i = 0; i < PERF_SLOTS; i++) {
			if (p->vcpus[v].fd[i] >= 0)
				close(p->vcpus[v].fd[i]);
		}
	}
	free(p->vcpus);
	free(p);
}

static bool perf_can_count(const struct pmu_source *s, uint16_t event,
			   unsigned int mode)
{
	const struct perf_source *p = (const struct perf_source *)s;
	int slot = perf_slot_of(event);

	(void)mode;
	return slot >= 0 && p->supported[slot];
}

static uint64_t perf_read(struct pmu_source *s, struct pmu_vcpu *v,
			  uint16_t event, unsigned int mode)
{
	struct perf_vcpu *pv = &to_perf(s)->vcpus[pmu_vcpu_id(v)];
	int slot = perf_slot_of(event);
	uint64_t val;

	(void)mode;
	if (slot < 0)
		return 0;
	if (pv->fd[slot] < 0) {
		pv->fd[slot] = perf_open(slot);
		if (pv->fd[slot] < 0)
			return pv->last[slot];
	}
	/* On a failed read, hold the last value: Phys must not go back. */
	if (read(pv->fd[slot], &val, sizeof(val)) == (ssize_t)sizeof(val) &&
	    val >= pv->last[slot])
		pv->last[slot] = val;
	return pv->last[slot];
}

unsigned int pmu_perf_open_count(struct pmu_source *s, unsigned int vcpu)
{
	struct perf_source *p = to_perf(s);
	unsigned int n = 0;

	if (s->ops != &pmu_source_perf || vcpu >= p->nr_vcpus)
		return 0;
	for (int i = 0; i < PERF_SLOTS; i++)
		n += p->vcpus[vcpu].fd[i] >= 0;
	return n;
}

const struct pmu_source_ops pmu_source_perf = {
	.name = "perf",
	.id = PV_VPMU_SOURCE_PERF,
	/* Not PMU_SRC_TIME: task-clock already stops while the host runs
	 * something else on the vCPU's CPU. */
	.create = perf_create,
	.destroy = perf_destroy,
	.can_count = perf_can_count,
	.read = perf_read,
};
