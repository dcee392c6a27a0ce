/* SPDX-License-Identifier: MIT */
/*
 * libvpmu: per-thread hardware counters inside a perfvisor guest.
 *
 * vpmu_open() configures a counter for the calling thread (one
 * perf_event_open system call, which costs one hypercall in the guest
 * kernel); vpmu_read() then reads the thread's logical count with no
 * system call and no trap: the per-thread page (Sum_thread, Start*_thread,
 * the vCPU it runs on) and that vCPU's page (Sum_vcpu, Start_vcpu) are
 * mapped read-only into the process, and the live part is rdtsc or the
 * step source's counter (Nikolaev & Back, VEE 2011, "a-mode").
 */
#ifndef LIBVPMU_H
#define LIBVPMU_H

#include <stdbool.h>
#include <stdint.h>

struct vpmu_event {
	int fd;
	int idx;			/* counter slot in the thread page */
	bool sampling;			/* has a sample period */
	uint64_t base;			/* value at open/reset */
	uint64_t last;			/* reads never go back (see vpmu_read) */
	const volatile void *tpage;	/* struct pv_vpmu_thread_page */
};

/* "instructions", "cycles", "branches", "ref-cycles", with :u or :k. */
int vpmu_open(struct vpmu_event *e, const char *name);
/* The same with a raw IA32 event code (event | umask << 8). */
int vpmu_open_raw(struct vpmu_event *e, uint16_t code, bool user, bool kernel,
		  uint64_t sample_period);
uint64_t vpmu_read(const struct vpmu_event *e);		/* direct */
uint64_t vpmu_read_syscall(const struct vpmu_event *e);	/* read(2) */
/*
 * Linux's self-monitoring read: e's perf_event_mmap_page (mmap offset 0
 * of e->fd, mapped by vpmu_map_page(), NULL on failure) by the protocol of
 * perf_event_open(2): offset plus rdpmc of index - 1, which the guest
 * kernel serves at its #GP; index 0 means the page's offset alone.
 */
const volatile void *vpmu_map_page(const struct vpmu_event *e);
uint64_t vpmu_read_page(const volatile void *page);
void vpmu_reset(struct vpmu_event *e);
void vpmu_close(struct vpmu_event *e);
/* Cycles of one trapped rdmsr of a PMU MSR (the VMM path), for benches. */
int64_t vpmu_trap_read_cycles(const struct vpmu_event *e, unsigned int n);
int64_t vpmu_trap_write_cycles(const struct vpmu_event *e, unsigned int n);

/* ---- perfctr-style interface (Pettersson's perfctr, as in Perfctr-Xen) */

#define VPERFCTR_MAX	4

/* evntsel: event | umask << 8, and where it counts: */
#define VPERFCTR_USR	(1u << 16)	/* user mode */
#define VPERFCTR_OS	(1u << 17)	/* kernel mode */

struct vperfctr_control {
	unsigned int nractrs;		/* counters used */
	uint32_t evntsel[VPERFCTR_MAX];	/* event | umask << 8 | USR | OS */
};

struct perfctr_sum_ctrs {
	uint64_t tsc;
	uint64_t pmc[VPERFCTR_MAX];
};

struct vperfctr;

struct vperfctr *vperfctr_open(void);
int vperfctr_control(struct vperfctr *p, const struct vperfctr_control *c);
int vperfctr_read_ctrs(struct vperfctr *p, struct perfctr_sum_ctrs *s);
void vperfctr_close(struct vperfctr *p);

#endif
