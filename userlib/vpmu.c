// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "layout.h"
#include "libvpmu.h"
#include "../uapi/vpmu.h"

#define PERFVISOR_IOC_TRAP_READ	0x2480
#define PERFVISOR_IOC_TRAP_WRITE 0x2481
#define PERF_TYPE_RAW		4
#define PERF_EVENT_IOC_ID	0x80082407
#ifndef SYS_perf_event_open
#define SYS_perf_event_open	298
#endif

/* The head of Linux's struct perf_event_attr (musl has no linux/ headers). */
struct perf_attr {
	uint32_t type, size;
	uint64_t config;
	uint64_t sample_period;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;		/* disabled:1, inherit:1, ... exclude_user is bit 4 */
	uint64_t rest[10];
};

#define ATTR_EXCLUDE_USER	(1ull << 4)
#define ATTR_EXCLUDE_KERNEL	(1ull << 5)

#define barrier() __atomic_thread_fence(__ATOMIC_ACQUIRE)

static uint64_t vpmu_read_direct(const struct vpmu_event *e);

/*
 * Log_thread = Sum_thread + (Phys* - Start*_thread), with
 * Phys* = Sum_vcpu + (Phys - Start_vcpu) on the vCPU the thread runs on;
 * retried when either page changed meanwhile (migration, preemption).
 */
uint64_t vpmu_read(const struct vpmu_event *e)
{
	/* A sampling counter restarts at each overflow: only the kernel
	 * knows how many there were. */
	struct vpmu_event *m = (struct vpmu_event *)e;
	uint64_t v;

	if (e->sampling)
		return vpmu_read_syscall(e);
	/*
	 * The VMM drops steal time from the live part at its next exit, so
	 * a later read can come out a little lower: a count never decreases.
	 */
	v = vpmu_read_direct(e);
	if ((int64_t)(v - m->last) < 0)
		return m->last;
	m->last = v;
	return v;
}

static uint64_t vpmu_read_direct(const struct vpmu_event *e)
{
	const volatile struct pv_vpmu_thread_page *tp = e->tpage;
	const volatile struct pv_vpmu_vcpu_page *vp;
	uint32_t ts, vs, cpu;
	uint64_t pstar, v;

	for (;;) {
		ts = tp->seq;
		if (ts & 1)
			continue;
		barrier();
		cpu = tp->smp_id;
		vp = (const volatile void *)(PV_VPMU_VCPU_VA + 4096ull * cpu);
		vs = vp->seq;
		if (vs & 1)
			continue;
		barrier();
		if (vp->ctr[e->idx].flags & PV_VPMU_CTR_RUNNING)
			pstar = (vp->ctr[e->idx].sum +
				 pv_vpmu_delta(pv_vpmu_phys_now(vp,
							&vp->ctr[e->idx]),
					       vp->ctr[e->idx].start)) &
				PV_VPMU_MASK;
		else
			pstar = vp->ctr[e->idx].sum;
		v = tp->ctr[e->idx].sum + pv_vpmu_delta(pstar, tp->ctr[e->idx].start);
		barrier();
		if (vp->seq == vs && tp->seq == ts)
			return v - e->base;
	}
}

int vpmu_open_raw(struct vpmu_event *e, uint16_t code, bool user, bool kernel,
		  uint64_t sample_period)
{
	struct perf_attr a;
	uint64_t id = 0;
	void *page;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_RAW;
	a.config = code;
	a.flags = (user ? 0 : ATTR_EXCLUDE_USER) |
		  (kernel ? 0 : ATTR_EXCLUDE_KERNEL);
	a.sample_period = sample_period;
	e->fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (e->fd < 0)
		return -errno;
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, e->fd, 0);
	if (page == MAP_FAILED || ioctl(e->fd, PERF_EVENT_IOC_ID, &id) < 0) {
		close(e->fd);
		return -errno;
	}
	e->tpage = page;
	e->idx = (int)id;
	e->sampling = sample_period != 0;
	e->base = 0;
	e->last = 0;
	if (!e->sampling)
		e->base = vpmu_read(e);
	e->last = 0;		/* reads are relative to base from here on */
	return 0;
}

int vpmu_open(struct vpmu_event *e, const char *name)
{
	static const struct { const char *name; uint16_t code; } ev[] = {
		{ "instructions", 0x00c0 }, { "cycles", 0x003c },
		{ "ref-cycles", 0x013c }, { "branches", 0x00c4 },
	};
	const char *mod = strchr(name, ':');
	size_t len = mod ? (size_t)(mod - name) : strlen(name);
	bool u = !mod || strchr(mod, 'u'), k = !mod || strchr(mod, 'k');

	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (strlen(ev[i].name) == len && !strncmp(ev[i].name, name, len))
			return vpmu_open_raw(e, ev[i].code, u, k, 0);
	return -ENOENT;
}

uint64_t vpmu_read_syscall(const struct vpmu_event *e)
{
	uint64_t v = 0;

	if (read(e->fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	/* The kernel's count is from open; ours from the last reset. */
	return e->sampling ? v - e->base : v;
}

void vpmu_reset(struct vpmu_event *e)
{
	e->base = 0;
	e->last = 0;
	e->base = vpmu_read(e);
	e->last = 0;
}

void vpmu_close(struct vpmu_event *e)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

int64_t vpmu_trap_read_cycles(const struct vpmu_event *e, unsigned int n)
{
	return ioctl(e->fd, PERFVISOR_IOC_TRAP_READ, (unsigned long)n);
}

int64_t vpmu_trap_write_cycles(const struct vpmu_event *e, unsigned int n)
{
	return ioctl(e->fd, PERFVISOR_IOC_TRAP_WRITE, (unsigned long)n);
}
