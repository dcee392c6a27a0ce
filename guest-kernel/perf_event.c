// SPDX-License-Identifier: MIT
/*
 * perf_event_open (system call 298) for self-monitoring threads, on the
 * per-thread counter pages: an event is one counter slot of its thread's
 * page.  A configuration change is one PV_HC_PMU_SWITCH (the hypercall's
 * own cost is compensated by the VMM); reading needs no system call at all
 * through libvpmu, which maps the pages (read-only) that mmap() returns.
 *
 * Overflow (sample_period): the counter interrupts (i-mode: saved and
 * restored with its thread), the PMI handler finds the event of the
 * running thread that owns it and sends the F_SETSIG signal (SIGIO by
 * default) to the F_SETOWN thread; an overflow of a thread that is not
 * running is kept pending in its page and raised when it resumes.
 */
#include "kernel.h"
#include "mm.h"
#include "perf_event.h"
#include "perf_abi.h"
#include "pmu_guest.h"
#include "task.h"
#include "vfs.h"
#include "vpmu.h"

#define O_ASYNC			020000
#define POLL_IN			1

static u64 config_hash(const struct pv_vpmu_thread_page *tp)
{
	u64 h = 0xcbf29ce484222325ull;

	for (int i = 0; i < PV_VPMU_NR_GP; i++)
		h = (h ^ tp->evtsel[i]) * 0x100000001b3ull;
	h = (h ^ tp->global_ctrl) * 0x100000001b3ull;
	return h | 1;
}

/* Map the vCPU pages and t's page read-only into its address space. */
static int perf_map_pages(struct task *t)
{
	struct mm *mm = t->mm;
	u64 va = PV_VPMU_VCPU_VA;
	u64 flags = PTE_P | PTE_U | PTE_NX | PTE_BORROWED;

	if (!vma_find(mm, va)) {
		if (vma_insert(mm, PV_VPMU_VCPU_VA, PV_VPMU_THREAD_VA_END,
			       PROT_READ, false))
			return -ENOMEM;
		for (u32 i = 0; i < boot_params->ncpus; i++)
			if (mm_map_page(mm, va + PAGE_SIZE * i,
					V2P(cpus[i].vpage), flags))
				return -ENOMEM;
	}
	if (t->tid >= PV_VPMU_MAX_TID)
		return -EAGAIN;
	return mm_map_page(mm, PV_VPMU_THREAD_VA(t->tid), V2P(t->tpage), flags);
}

/* Make t's new configuration the one its counters run with. */
static void perf_reload(struct task *t)
{
	struct pv_vpmu_thread_page *tp = t->tpage;

	tp->config_id = config_hash(tp);
	kpmu_task_config_changed(t);
	/* Fold what ran so far and restart with the new configuration. */
	hcall(PV_HC_PMU_SWITCH, V2P(tp), V2P(tp), 0);
}

/*
 * Events since open.  A sampling counter restarts one period before it
 * wraps at every overflow, so its count is whole periods plus the progress
 * from that starting point.
 */
static u64 event_raw(struct perf_event *e)
{
	u64 c = kpmu_task_count(e->owner, e->idx);

	if (e->period)
		c = e->overflows * e->period +
		    ((c - (PV_VPMU_MASK + 1 - e->period)) & PV_VPMU_MASK);
	return c + e->child_counts;
}

static u64 event_value(struct perf_event *e)
{
	if (!e->enabled)
		return e->frozen;
	return event_raw(e) - e->base;
}

s64 sys_perf_event_open(u64 uattr, u64 pid, u64 cpu, u64 group, u64 flags,
			u64 a5)
{
	struct task *t = current_task();
	struct pv_perf_attr attr;
	struct pv_vpmu_thread_page *tp;
	struct perf_event *e;
	struct inode *n;
	struct file *f;
	u64 evtsel;
	u16 ev;
	int idx, fd;

	(void)flags, (void)a5;
	if (!user_range_ok(uattr, sizeof(attr)) ||
	    copy_from_user(&attr, (void *)uattr, sizeof(attr)))
		return -EFAULT;
	if (((int)pid != 0 && (int)pid != t->tid) || (int)cpu != -1 ||
	    (int)group != -1)
		return -EINVAL;		/* self-monitoring only */
	if (attr.type == PV_PERF_TYPE_HARDWARE) {
		switch (attr.config) {
		case PV_PERF_COUNT_HW_CPU_CYCLES: ev = PV_EVENT_CYCLES; break;
		case PV_PERF_COUNT_HW_INSTRUCTIONS: ev = PV_EVENT_INSTRUCTIONS; break;
		case PV_PERF_COUNT_HW_BRANCH_INSTRUCTIONS: ev = PV_EVENT_BRANCHES; break;
		case PV_PERF_COUNT_HW_REF_CPU_CYCLES: ev = PV_EVENT_REF_CYCLES; break;
		default: return -ENOENT;
		}
	} else if (attr.type == PV_PERF_TYPE_RAW) {
		ev = attr.config & 0xffff;
	} else {
		return -ENOENT;
	}
	if (attr.flags & PV_PERF_ATTR_FREQ)
		return -EINVAL;
	if (!t->tpage && kpmu_task_alloc_page(t))
		return -ENOMEM;
	tp = t->tpage;
	for (idx = 0; idx < PV_VPMU_NR_GP; idx++)
		if (!(tp->global_ctrl & (1ull << idx)))
			break;
	if (idx == PV_VPMU_NR_GP)
		return -EBUSY;
	e = kmalloc(sizeof(*e));
	n = e ? inode_new(0600, VN_PERF) : NULL;
	f = n ? file_new(n, 0) : NULL;
	if (!f) {
		kfree(e);
		return -ENOMEM;
	}
	e->owner = t;
	e->owner_tid = t->tid;
	e->idx = idx;
	e->period = attr.sample_period;
	e->read_format = attr.read_format;
	e->signo = SIGIO;
	e->sig_tid = t->tid;
	e->enabled = !(attr.flags & PV_PERF_ATTR_DISABLED);
	n->perf = e;
	evtsel = pv_perf_attr_evtsel(ev, attr.flags);
	if (e->period) {
		evtsel |= PV_EVTSEL_INT;
		/* i-mode: the counter starts 'period' before it wraps. */
		tp->ctr[idx].saved = (PV_VPMU_MASK + 1 - e->period) &
				     PV_VPMU_MASK;
	}
	if (e->period >= (1ull << 31))
		goto inval;
	tp->evtsel[idx] = evtsel;
	tp->global_ctrl |= 1ull << idx;
	tp->map[idx] = idx;
	if (tp->nr_map <= (u32)idx)
		tp->nr_map = idx + 1;
	t->perf[idx] = e;
	perf_reload(t);
	/* The switch saved the old counter over our preset: set it now. */
	if (e->period)
		wrmsr(PV_MSR_IA32_A_PMC0 + idx,
		      (PV_VPMU_MASK + 1 - e->period) & PV_VPMU_MASK);
	if (perf_map_pages(t))
		kprintf("%s[%d]: counter pages not mapped", t->comm, t->tid);
	e->base = event_raw(e);
	e->frozen = 0;
	fd = fd_install(t->proc->fdt, f, 0, true);
	if (fd < 0) {
		file_put(f);
		return fd;
	}
	return fd;
inval:
	file_put(f);
	return -EINVAL;
}

s64 perf_event_read(struct perf_event *e, u64 ubuf, u64 len)
{
	u64 v[4];
	int n = 0;

	v[n++] = event_value(e);
	if (e->read_format & PV_PERF_FORMAT_TOTAL_TIME_ENABLED)
		v[n++] = ns_from_tsc(rdtsc());
	if (e->read_format & PV_PERF_FORMAT_TOTAL_TIME_RUNNING)
		v[n++] = ns_from_tsc(rdtsc());
	if (e->read_format & PV_PERF_FORMAT_ID)
		v[n++] = e->idx;
	if (len < n * 8u)
		return -ENOSPC;
	if (!user_range_ok(ubuf, n * 8) || copy_to_user((void *)ubuf, v, n * 8))
		return -EFAULT;
	return n * 8;
}

static u64 trap_read_cycles(u64 n)
{
	u64 t0 = rdtsc(), lo, hi;

	for (u64 i = 0; i < n; i++)
		__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(0xc1));
	return rdtsc() - t0;
}

/* Writing 0 to IA32_PERF_GLOBAL_OVF_CTRL clears nothing: a pure trap. */
static u64 trap_write_cycles(u64 n)
{
	u64 t0 = rdtsc();

	for (u64 i = 0; i < n; i++)
		__asm__ volatile("wrmsr" : : "c"(0x390), "a"(0), "d"(0));
	return rdtsc() - t0;
}

s64 perf_event_ioctl(struct perf_event *e, u64 cmd, u64 arg)
{
	u64 v;

	switch ((u32)cmd) {	/* an int in the C library: sign-extended */
	case PV_PERF_EVENT_IOC_ENABLE:
	case PV_PERF_EVENT_IOC_REFRESH:
		if (!e->enabled) {
			e->base = event_raw(e) - e->frozen;
			e->enabled = true;
		}
		return 0;
	case PV_PERF_EVENT_IOC_DISABLE:
		if (e->enabled) {
			e->frozen = event_value(e);
			e->enabled = false;
		}
		return 0;
	case PV_PERF_EVENT_IOC_RESET:
		e->base = event_raw(e);
		e->frozen = 0;
		return 0;
	case PV_PERF_EVENT_IOC_ID:
		v = e->idx;
		if (!user_range_ok(arg, 8) || copy_to_user((void *)arg, &v, 8))
			return -EFAULT;
		return 0;
	case PV_PERFVISOR_IOC_TRAP_READ:
		/* cycles of `arg` rdmsr of IA32_PMC0, each a trip to the VMM */
		return trap_read_cycles(arg > 100000 ? 100000 : arg);
	case PV_PERFVISOR_IOC_TRAP_WRITE:
		return trap_write_cycles(arg > 100000 ? 100000 : arg);
	default:
		return -ENOTTY;
	}
}

void perf_event_fcntl(struct perf_event *e, u64 cmd, u64 arg)
{
	switch (cmd) {
	case 4:		/* F_SETFL */
		e->async = arg & O_ASYNC;
		break;
	case 8:		/* F_SETOWN */
		e->sig_tid = (int)arg > 0 ? (int)arg : e->owner_tid;
		break;
	case 10:	/* F_SETSIG */
		e->signo = arg ? (int)arg : SIGIO;
		break;
	}
}

void perf_event_release(struct perf_event *e)
{
	struct task *t = task_find(e->owner_tid);

	if (t == e->owner && t->tpage && t->perf[e->idx] == e) {
		t->perf[e->idx] = NULL;
		t->tpage->global_ctrl &= ~(1ull << e->idx);
		t->tpage->evtsel[e->idx] = 0;
		if (t == current_task())
			perf_reload(t);
		else
			kpmu_task_config_changed(t);
	}
	kfree(e);
}

/* PMI on this CPU: the running thread owns the interrupting counters. */
bool perf_event_overflow(struct task *t, int idx, struct trapframe *tf)
{
	struct perf_event *e = idx < PV_VPMU_NR_GP ? t->perf[idx] : NULL;
	struct task *to;
	u64 at;

	(void)tf;
	if (!e)
		return false;
	/* The event's value at this overflow point. */
	at = (e->overflows + 1) * e->period + e->child_counts - e->base;
	/* Re-arm: the next overflow comes 'period' events after this one;
	 * events past the wrap (skid) carry over. */
	kpmu_rearm(idx, e->period);
	e->overflows++;
	/* A disabled event does not overflow, but an overflow from before
	 * the disable can arrive after it: delivery waits for the owner
	 * to run again when a switch came in between. */
	if (!e->enabled && at > e->frozen)
		return true;
	if (e->async) {
		to = task_find(e->sig_tid);
		if (to && to->proc == t->proc) {
			to->sig_code[e->signo - 1] = POLL_IN;
			to->sig_value[e->signo - 1] = 0;
			signal_send(to, e->signo, true);
		}
	}
	return true;
}
