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
#include "../uapi/perf_abi.h"
#include "../uapi/vpmu_guest.h"

/* A struct perf_event_attr as long as libvpmu has always passed: the head
 * the guest kernel reads, the rest zero. */
struct perf_attr {
	struct pv_perf_attr head;
	uint64_t rest[10];
};

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
	uint64_t v;
	uint32_t ts;

	do {
		ts = pv_seq_read_begin(&tp->seq);
		vp = (const volatile void *)(PV_VPMU_VCPU_VA +
					     4096ull * tp->smp_id);
	} while (!pv_vpmu_read_try(tp, ts, vp, e->idx, PV_VPMU_TSC_NOW, &v));
	return v - e->base;
}

int vpmu_open_raw(struct vpmu_event *e, uint16_t code, bool user, bool kernel,
		  uint64_t sample_period)
{
	struct perf_attr a;
	void *page;
	int idx;

	memset(&a, 0, sizeof(a));
	a.head.size = sizeof(a);
	a.head.type = PV_PERF_TYPE_RAW;
	a.head.config = code;
	a.head.flags = pv_perf_attr_exclude(user, kernel);
	a.head.sample_period = sample_period;
	e->fd = syscall(PV_SYS_PERF_EVENT_OPEN, &a, 0, -1, -1, 0);
	if (e->fd < 0)
		return -errno;
	/* The a-mode pages, not Linux's perf_event_mmap_page: its protocol
	 * has no way to say "rdtsc" or "sum these step counts". */
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, e->fd,
		    PV_PERF_MMAP_THREAD_OFF);
	idx = page == MAP_FAILED ? -1 :
		ioctl(e->fd, PV_PERFVISOR_IOC_COUNTER, 0);
	if (idx < 0) {
		close(e->fd);
		return -errno;
	}
	e->tpage = page;
	e->idx = idx;
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

const volatile void *vpmu_map_page(const struct vpmu_event *e)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, e->fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

uint64_t vpmu_read_page(const volatile void *page)
{
	const volatile struct pv_perf_mmap_page *pc = page;
	uint32_t seq, idx, lo, hi, w;
	uint64_t count;
	int64_t pmc;

	do {
		seq = pc->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		idx = pc->index;
		count = (uint64_t)pc->offset;
		if ((pc->capabilities & PV_PERF_CAP_USER_RDPMC) && idx) {
			w = pc->pmc_width;
			__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi)
					 : "c"(idx - 1));
			pmc = (int64_t)((uint64_t)hi << 32 | lo);
			count += (uint64_t)((int64_t)((uint64_t)pmc << (64 - w)) >>
					    (64 - w));
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (pc->lock != seq || (seq & 1));
	return count;
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
	return ioctl(e->fd, PV_PERFVISOR_IOC_TRAP_READ, (unsigned long)n);
}

int64_t vpmu_trap_write_cycles(const struct vpmu_event *e, unsigned int n)
{
	return ioctl(e->fd, PV_PERFVISOR_IOC_TRAP_WRITE, (unsigned long)n);
}
