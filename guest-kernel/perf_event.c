// SPDX-License-Identifier: MIT
/*
 * perf_event_open (system call 298) for self-monitoring threads, as Linux
 * answers it on an Intel architectural PMU of unknown model (what the
 * virtual PMU is): PERF_TYPE_HARDWARE, _HW_CACHE, _RAW and _SOFTWARE,
 * event groups, read_format, the ioctls, overflow signals and the
 * perf_event_mmap_page.  A hardware event is one counter slot of its
 * thread's counter page; a configuration change is one PV_HC_PMU_SWITCH
 * (the hypercall's own cost is compensated by the VMM); libvpmu reads the
 * pages with no system call (PV_PERF_MMAP_THREAD_OFF).
 *
 * Overflow (sample_period): the counter interrupts (i-mode: saved and
 * restored with its thread), the PMI handler finds the event of the
 * running thread that owns it and sends the F_SETSIG signal (SIGIO by
 * default) to the F_SETOWN thread or process; an overflow of a thread
 * that is not running is kept pending in its page and raised when it
 * resumes.
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
#define POLL_HUP		6
#define POLLIN_BAND		0x41	/* POLLIN | POLLRDNORM */
#define POLLHUP_BAND		0x10
#define F_SETOWN		8
#define F_GETOWN		9
#define F_SETSIG		10
#define F_GETSIG		11
#define F_SETOWN_EX		15
#define F_GETOWN_EX		16
#define F_OWNER_TID		0
#define F_OWNER_PID		1

/* attr.flags bits that ask for what this kernel does not do. */
#define ATTR_UNSUPPORTED	(PV_PERF_ATTR_PRECISE_IP)

static u64 next_event_id = 1;

u64 perf_config_id(const struct pv_vpmu_thread_page *tp)
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

	tp->config_id = perf_config_id(tp);
	kpmu_task_config_changed(t);
	/* Fold what ran so far and restart with the new configuration. */
	if (t == current_task())
		hcall(PV_HC_PMU_SWITCH, V2P(tp), V2P(tp), 0);
}

/* ---- counting ---- */

/* A software event's count now: the owner's own fields. */
static u64 event_sw_raw(struct perf_event *e, u64 now)
{
	struct task *t = e->owner;

	switch (e->sw - 1) {
	case PV_PERF_COUNT_SW_CPU_CLOCK:
	case PV_PERF_COUNT_SW_TASK_CLOCK:
		return ns_from_tsc(task_cpu_tsc(t, now));
	case PV_PERF_COUNT_SW_CONTEXT_SWITCHES:
		return t->nr_switches;
	case PV_PERF_COUNT_SW_CPU_MIGRATIONS:
		return t->nr_migrations;
	default:
		/*
		 * Page faults: every mapping is populated when it is made, so
		 * a user page fault is always fatal and none are counted.
		 * Alignment and emulation faults do not happen here.
		 */
		return 0;
	}
}

/*
 * Events since open.  A sampling counter is set again at every overflow
 * (event_rearm()), so its count is what it counted before the last set
 * plus its progress from the value set.  That value is a period before the
 * wrap less the skid, or further out when the re-arm throttles: read as a
 * period before the wrap, a throttled counter's progress was negative, and
 * a read gave 2^48 events too many until the counter caught up.
 */
static u64 event_raw(struct perf_event *e, u64 now)
{
	u64 c;

	if (e->sw)
		return event_sw_raw(e, now);
	c = kpmu_task_count(e->owner, e->idx);
	if (e->period)
		c = e->done + pv_vpmu_delta(c, e->restart);
	return c + e->child_counts;
}

/* A sampling counter's first value: one period before it wraps. */
static void event_restart(struct perf_event *e)
{
	e->restart = pv_vpmu_before_wrap(e->period);
}

/* Counting requires the event, its leader and a counter (or none needed). */
static bool event_should_count(const struct perf_event *e)
{
	return e->owner && e->enabled && e->leader->enabled &&
		(e->sw || e->idx >= 0);
}

/* Fold counts and times up to now into the event. */
static void event_sync(struct perf_event *e)
{
	u64 now, clk, raw;

	if (!e->owner)
		return;
	now = rdtsc();
	clk = task_cpu_tsc(e->owner, now);
	if (e->enabled && e->leader->enabled)
		e->ena_tsc += clk - e->clock;
	if (e->live) {
		e->run_tsc += clk - e->clock;
		raw = event_raw(e, now);
		/* A count never goes back, even when its source steps back
		 * a little (steal dropped, the step source's cycles), nor
		 * below what rdpmc gave (perf_event_rdpmc()). */
		if (!e->period && raw < e->rdpmc_max)
			raw = e->rdpmc_max;
		if ((s64)(raw - e->base) > 0) {
			e->acc += raw - e->base;
			e->base = raw;
		}
	}
	e->clock = clk;
}

static void event_page_update(struct perf_event *e);

/* After a state change: start or stop counting from the last sync. */
static void event_settle(struct perf_event *e)
{
	bool live = event_should_count(e);

	if (live && !e->live) {
		e->base = event_raw(e, rdtsc());
		e->rdpmc_max = 0;
	}
	e->live = live;
	event_page_update(e);
}

/*
 * Whether a reader of e's page may add rdpmc of its counter to `offset`:
 * a counting hardware event of one thread, on its counter since it was
 * enabled (never multiplexed out, so the times need no scaling), not
 * inherited (children's counts arrive at their exits) and not sampling
 * (its counter restarts at every overflow).
 */
static bool event_rdpmc_ok(const struct perf_event *e)
{
	return e->page && e->live && !e->sw && !e->period && !e->inherit &&
	       e->idx >= 0 && e->owner && e->owner->perf[e->idx] == e &&
	       e->ena_tsc == e->run_tsc;
}

/* The perf_event_mmap_page, kept true at every change the kernel sees. */
static void event_page_update(struct perf_event *e)
{
	struct pv_perf_mmap_page *p = e->page;

	if (!p)
		return;
	p->lock++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/*
	 * Linux's protocol: count = offset + rdpmc(index - 1).  rdpmc faults
	 * on every host here (KVM's vPMU is off), and the #GP handler reads
	 * the thread's counter as the kernel does (perf_event_rdpmc()): no
	 * system call, and the count while the thread runs.  Anything else
	 * gets index 0, the count as of this update, and read()s.  Times
	 * advance only while the owner runs, so there is no TSC formula for
	 * them (cap_user_time 0).
	 */
	if (event_rdpmc_ok(e)) {
		p->index = (u32)e->idx + 1;
		p->offset = (s64)(e->acc - e->base + e->child_counts);
	} else {
		p->index = 0;
		p->offset = (s64)e->acc;
	}
	p->time_enabled = ns_from_tsc(e->ena_tsc);
	p->time_running = ns_from_tsc(e->run_tsc);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	p->lock++;
}

static void event_value(struct perf_event *e, u64 *value, u64 *ena, u64 *run)
{
	event_sync(e);
	event_page_update(e);
	*value = e->acc;
	*ena = ns_from_tsc(e->ena_tsc);
	*run = ns_from_tsc(e->run_tsc);
}

/* Apply fn to e, or to its whole group with PERF_IOC_FLAG_GROUP. */
static void event_for_each(struct perf_event *e, u64 flags,
			   void (*fn)(struct perf_event *))
{
	if (!(flags & PV_PERF_IOC_FLAG_GROUP)) {
		fn(e);
		return;
	}
	for (struct perf_event *s = e->leader; s; s = s->sibling)
		fn(s);
}

static int slot_find(struct task *t);
static void slot_program(struct task *t, struct perf_event *e);
static void task_waiting_update(struct task *t);

/* An event that holds its counter while disabled: a sampling one keeps its
 * period, one read in place its index, an inherited one the slot its
 * children count in. */
static bool event_keeps_counter(const struct perf_event *e)
{
	return e->period || e->in_place || e->inherit;
}

/* Does s of l's group count now, on a counter of its own? */
static bool event_wants_counter(const struct perf_event *l,
				const struct perf_event *s)
{
	return l->enabled && s->enabled && !s->sw && !s->absent;
}

static void slot_release(struct task *t, struct perf_event *e)
{
	t->perf[e->idx] = NULL;
	t->tpage->global_ctrl &= ~(1ull << e->idx);
	t->tpage->evtsel[e->idx] = 0;
	e->idx = -1;
}

/*
 * Counters follow the state, as Linux schedules an event only while it is
 * enabled: an event set PAPI has stopped holds none, so a program makes
 * several (each opened disabled) and starts one at a time.  A group takes
 * counters for all its members or none; a pinned one that finds too few
 * is in Linux's error state (read() 0 bytes) until enabled with room, an
 * unpinned singleton waits for its turn (perf_event_rotate()).
 */
static void group_schedule(struct perf_event *l)
{
	struct task *t = l->owner;
	int need = 0, nfree = 0;
	bool released = false;

	if (!t || !t->tpage)
		return;
	for (struct perf_event *s = l; s; s = s->sibling) {
		bool want = event_wants_counter(l, s);

		if (!want && s->idx >= 0 && !event_keeps_counter(s)) {
			slot_release(t, s);
			released = true;
		}
		need += want && s->idx < 0;
	}
	if (released)
		perf_reload(t);
	for (int i = 0; i < PV_VPMU_NR_GP; i++)
		nfree += !(t->tpage->global_ctrl & (1ull << i));
	if (need && nfree >= need) {
		for (struct perf_event *s = l; s && nfree; s = s->sibling)
			if (event_wants_counter(l, s) && s->idx < 0) {
				s->idx = slot_find(t);
				slot_program(t, s);
				need--, nfree--;
			}
	}
	/* Linux's error state: a pinned event that cannot be scheduled */
	if (l->enabled && l->fixed)
		l->error = l->absent || need > 0;
	task_waiting_update(t);
}

/* e's state changed: its siblings follow when it leads.  Each is synced
 * once: on kvm_pvm every kernel instruction here is emulated, and PAPI
 * enables and disables around every start, stop and event added. */
static void event_state_set(struct perf_event *e, bool enabled)
{
	if (e->leader == e)
		for (struct perf_event *s = e; s; s = s->sibling)
			event_sync(s);
	else
		event_sync(e);
	e->enabled = enabled;
	group_schedule(e->leader);
	if (e->leader == e)
		for (struct perf_event *s = e; s; s = s->sibling)
			event_settle(s);
	else
		event_settle(e);
}

static void event_enable(struct perf_event *e)
{
	event_state_set(e, true);
}

static void event_disable(struct perf_event *e)
{
	event_state_set(e, false);
}

static void event_reset(struct perf_event *e)
{
	event_sync(e);
	e->acc = 0;
	event_page_update(e);
}

/* ---- perf_event_open ---- */

/* Events that take turns on the counters: enabled counting singletons.
 * A group is scheduled whole, and a sampling counter keeps its period. */
static bool event_rotates(const struct perf_event *e)
{
	return !e->sw && !e->period && e->leader == e && !e->sibling &&
		!e->fixed && !e->absent && e->enabled;
}

/* Does t have an event waiting for a counter? */
static void task_waiting_update(struct task *t)
{
	t->perf_waiting = false;
	for (struct perf_event *e = t->perf_list; e; e = e->task_next)
		if (event_rotates(e) && e->idx < 0)
			t->perf_waiting = true;
	/* The tick rotates them: return_to_user_slow() keeps it on. */
	if (t->perf_waiting && t == current_task())
		lapic_timer_set(true);
}


/* A free counter slot of t's page, or -1. */
static int slot_find(struct task *t)
{
	for (int i = 0; i < PV_VPMU_NR_GP; i++)
		if (!(t->tpage->global_ctrl & (1ull << i)))
			return i;
	return -1;
}

/* Hardware events in e's group, e included. */
static int group_hw_count(const struct perf_event *leader)
{
	int n = 0;

	for (const struct perf_event *s = leader; s; s = s->sibling)
		n += !s->sw;
	return n;
}

/* Program slot idx of t for e: an interrupting counter starts one period
 * before it wraps. */
static void slot_program(struct task *t, struct perf_event *e)
{
	struct pv_vpmu_thread_page *tp = t->tpage;
	int idx = e->idx;

	tp->evtsel[idx] = e->evtsel | (e->period ? PV_EVTSEL_INT : 0);
	if (e->period) {
		event_restart(e);
		tp->ctr[idx].saved = e->restart;
	}
	tp->global_ctrl |= 1ull << idx;
	tp->map[idx] = idx;
	if (tp->nr_map <= (u32)idx)
		tp->nr_map = idx + 1;
	t->perf[idx] = e;
	perf_reload(t);
	/* The switch saved the old counter over our preset: set it now. */
	if (e->period)
		wrmsr(PV_MSR_IA32_A_PMC0 + idx, e->restart);
}

/* The attr, copied as Linux does: size 0 is the first version; bytes past
 * what this kernel knows must be zero (E2BIG, with size written back). */
static int attr_copy(u64 uattr, u8 *buf)
{
	u32 size;

	if (!user_range_ok(uattr, 8) || copy_from_user(&size, (void *)(uattr + 4), 4))
		return -EFAULT;
	if (!size)
		size = PV_PERF_ATTR_SIZE_VER0;
	if (size < PV_PERF_ATTR_SIZE_VER0 || size > PAGE_SIZE)
		goto too_big;
	memset(buf, 0, PV_PERF_ATTR_SIZE);
	if (!user_range_ok(uattr, size) ||
	    copy_from_user(buf, (void *)uattr,
			   size < PV_PERF_ATTR_SIZE ? size : PV_PERF_ATTR_SIZE))
		return -EFAULT;
	for (u32 off = PV_PERF_ATTR_SIZE; off < size; off++) {
		u8 b;

		if (copy_from_user(&b, (void *)(uattr + off), 1))
			return -EFAULT;
		if (b)
			goto too_big;
	}
	return 0;
too_big:
	size = PV_PERF_ATTR_SIZE;
	if (copy_to_user((void *)(uattr + 4), &size, 4))
		return -EFAULT;
	return -E2BIG;
}

/* What the attr asks for, as a software event number + 1 or an event
 * select; an errno when it is not available, EVENT_ABSENT for an event
 * Linux opens and no counter here can take. */
static int attr_event(const struct pv_perf_attr *a, u32 *sw, u16 *ev)
{
	*sw = 0;
	switch (a->type) {
	case PV_PERF_TYPE_HARDWARE:
	case PV_PERF_TYPE_HW_CACHE:
	case PV_PERF_TYPE_RAW:
		return perf_event_map(a->type, a->config, ev);
	case PV_PERF_TYPE_SOFTWARE:
		if (a->config >= PV_PERF_COUNT_SW_MAX)
			return -ENOENT;
		/* Sampling would need a timer per event: not here. */
		if (a->sample_period)
			return -EOPNOTSUPP;
		*sw = a->config + 1;
		/* counted at the switch from now on (pmu_switch.h) */
		if (a->config == PV_PERF_COUNT_SW_CPU_MIGRATIONS)
			current_task()->perf_migrations = true;
		return 0;
	default:
		return -ENOENT;
	}
}

/* The group e joins (leader's fd), checked as Linux does. */
static int group_join(struct task *t, u64 group, struct perf_event *e)
{
	struct file *gf;
	struct perf_event *l, *last;

	e->leader = e;
	if ((int)group == -1)
		return 0;
	gf = fd_file(t->proc->fdt, group);
	if (!gf)
		return -EBADF;
	if (gf->ino->kind != VN_PERF)
		return -EINVAL;
	l = gf->ino->perf;
	if (l->leader != l || l->owner != t)
		return -EINVAL;
	/* A group is scheduled whole: it must fit the counters, and an
	 * event no counter takes fits nowhere (Linux's validate_group()).
	 * Only a leader can be one: no group takes one as a sibling. */
	if (!e->sw && (e->absent || l->absent ||
		       group_hw_count(l) + 1 > PV_VPMU_NR_GP))
		return -EINVAL;
	for (last = l; last->sibling; last = last->sibling)
		;
	last->sibling = e;
	e->leader = l;
	return 0;
}

s64 sys_perf_event_open(u64 uattr, u64 pid, u64 cpu, u64 group, u64 flags,
			u64 a5)
{
	struct task *t = current_task();
	union {
		struct pv_perf_attr attr;
		u8 buf[PV_PERF_ATTR_SIZE];
	} u;
	struct pv_perf_attr *a = &u.attr;
	struct perf_event *e, **pp;
	struct inode *n;
	struct file *f;
	u32 sw;
	u16 ev = 0;
	int err, fd;
	bool other, absent;

	(void)a5;
	err = attr_copy(uattr, u.buf);
	if (err)
		return err;
	if (flags & ~(u64)PV_PERF_FLAG_ALL)
		return -EINVAL;
	/* Linux's order: the target thread (ESRCH), the CPU (EINVAL: -1
	 * only with a thread), the event, then the right to count them. */
	other = (int)pid != 0 && (int)pid != -1 && (int)pid != t->tid;
	if (other && !task_find((int)pid))
		return -ESRCH;
	if ((int)cpu < -1 || (int)cpu >= (int)boot_params->ncpus ||
	    ((int)pid == -1 && (int)cpu == -1))
		return -EINVAL;
	if (a->read_format & ~(u64)PV_PERF_FORMAT_ALL)
		return -EINVAL;
	if (a->flags & PV_PERF_ATTR_FREQ)
		return -EINVAL;
	if (a->flags & ATTR_UNSUPPORTED)
		return -EOPNOTSUPP;	/* precise_ip: no PEBS, as Linux says */
	if (a->sample_period >= (1ull << 31))
		return -EINVAL;
	err = attr_event(a, &sw, &ev);
	if (err < 0)
		return err;
	absent = err == EVENT_ABSENT;
	/* The step source's mispredictions are a model the VMM runs where
	 * user code runs by blocks: kernel mode has none to count. */
	if (!sw && !absent && ev == PV_EVENT_BRANCH_MISSES &&
	    boot_params->source_id == PV_VPMU_SOURCE_STEP &&
	    !(a->flags & PV_PERF_ATTR_EXCLUDE_KERNEL))
		return -EOPNOTSUPP;
	/*
	 * Another thread's counters, or a CPU's: Linux lets root (every
	 * process here; perf_event_paranoid -1 lets everyone) count them.
	 * An event of this kernel counts its own thread only, on the
	 * counter page that thread's switches load, so it refuses as Linux
	 * refuses a caller without that right: EACCES.  A thread's own
	 * events on one CPU are its events when that CPU is the only one;
	 * with more, counting only while there is not offered: EOPNOTSUPP,
	 * what Linux says when a PMU cannot do what the attr asks.
	 */
	if (other || (int)pid == -1)
		return -EACCES;
	if ((int)cpu != -1 && boot_params->ncpus > 1)
		return -EOPNOTSUPP;
	if (!t->tpage && kpmu_task_alloc_page(t))
		return -ENOMEM;
	e = kmalloc(sizeof(*e));
	n = e ? inode_new(0600, VN_PERF) : NULL;
	f = n ? file_new(n, 0) : NULL;
	if (!f) {
		kfree(e);
		return -ENOMEM;
	}
	/* kmalloc() zeroed e */
	e->owner = t;
	e->owner_tid = t->tid;
	e->idx = -1;
	e->sw = sw;
	e->evtsel = sw ? 0 : pv_perf_attr_evtsel(ev, a->flags);
	e->id = next_event_id++;
	e->period = a->sample_period;
	if (e->period)
		event_restart(e);
	e->read_format = a->read_format;
	e->sample_type = a->sample_type;
	e->inherit = a->flags & PV_PERF_ATTR_INHERIT;
	e->signo = 0;
	e->sig_tid = t->tid;
	e->sig_to_thread = true;
	e->fd = -1;
	e->enabled = !(a->flags & PV_PERF_ATTR_DISABLED);
	e->fixed = a->flags & PV_PERF_ATTR_PINNED;
	e->absent = absent;
	n->perf = e;
	err = group_join(t, group, e);
	if (err) {
		e->leader = e;
		file_put(f);
		return err;
	}
	/* At the back of the line for a counter (multiplexing). */
	for (pp = &t->perf_list; *pp; pp = &(*pp)->task_next)
		;
	*pp = e;
	/* a counter now if it counts now (group_schedule()) */
	group_schedule(e->leader);
	if (perf_map_pages(t))
		kprintf("%s[%d]: counter pages not mapped", t->comm, t->tid);
	e->clock = task_cpu_tsc(t, rdtsc());
	event_settle(e);
	fd = fd_install(t->proc->fdt, f, 0, flags & PV_PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}

/* ---- multiplexing ---- */

/*
 * More events than counters: after each tick (100 Hz) of the running
 * owner, on its way back to user mode with the BKL, the longest-waiting
 * event takes a free counter, or the counter of the
 * event that has had one longest, which goes to the back of the line.
 * Times enabled and running then differ as on Linux, and a reader scales
 * the count by their ratio.
 */
void perf_event_rotate(struct task *t)
{
	struct perf_event *in = NULL, *out = NULL, **pp;
	int slot;

	for (struct perf_event *e = t->perf_list; e; e = e->task_next) {
		if (!event_rotates(e))
			continue;
		if (e->idx < 0 && !in)
			in = e;
		if (e->idx >= 0 && !out)
			out = e;
	}
	if (!in)
		return;
	slot = slot_find(t);
	if (slot < 0 && out) {
		event_sync(out);
		out->live = false;
		slot = out->idx;
		slot_release(t, out);
		event_page_update(out);
		for (pp = &t->perf_list; *pp != out; pp = &(*pp)->task_next)
			;
		*pp = out->task_next;
		for (out->task_next = NULL; *pp; pp = &(*pp)->task_next)
			;
		*pp = out;
	}
	if (slot < 0)
		return;
	event_sync(in);
	in->idx = slot;
	slot_program(t, in);
	event_settle(in);
	task_waiting_update(t);
}

/* ---- read, ioctl, fcntl, mmap ---- */

s64 perf_event_read(struct perf_event *e, u64 ubuf, u64 len)
{
	u64 v[3 + 2 * (PV_VPMU_NR_GP + 16)], val, ena, run, rf = e->read_format;
	u32 n = 0, nr = 0;

	if (e->leader->error)
		return 0;	/* Linux: nothing to read in the error state */
	if (!(rf & PV_PERF_FORMAT_GROUP)) {
		event_value(e, &val, &ena, &run);
		v[n++] = val;
		if (rf & PV_PERF_FORMAT_TOTAL_TIME_ENABLED)
			v[n++] = ena;
		if (rf & PV_PERF_FORMAT_TOTAL_TIME_RUNNING)
			v[n++] = run;
		if (rf & PV_PERF_FORMAT_ID)
			v[n++] = e->id;
		if (rf & PV_PERF_FORMAT_LOST)
			v[n++] = 0;
	} else {
		/* { nr, [enabled], [running], { value, [id], [lost] }[nr] },
		 * the times the leader's */
		struct perf_event *l = e->leader;
		u64 lval, sena, srun;

		event_value(l, &lval, &ena, &run);
		n = 1;
		if (rf & PV_PERF_FORMAT_TOTAL_TIME_ENABLED)
			v[n++] = ena;
		if (rf & PV_PERF_FORMAT_TOTAL_TIME_RUNNING)
			v[n++] = run;
		for (struct perf_event *s = l; s; s = s->sibling, nr++) {
			if (n + 3 > sizeof(v) / sizeof(v[0]))
				return -ENOSPC;
			/* the leader's value is the one its times go with */
			if (s == l)
				val = lval;
			else
				event_value(s, &val, &sena, &srun);
			v[n++] = val;
			if (rf & PV_PERF_FORMAT_ID)
				v[n++] = s->id;
			if (rf & PV_PERF_FORMAT_LOST)
				v[n++] = 0;
		}
		v[0] = nr;
	}
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

/* IOC_PERIOD: the next overflow one new period from now. */
static int event_period_set(struct perf_event *e, u64 uarg)
{
	struct task *t = current_task();
	u64 p;

	if (!user_range_ok(uarg, 8) || copy_from_user(&p, (void *)uarg, 8))
		return -EFAULT;
	if (!e->period || e->sw)
		return -EINVAL;	/* not a sampling event */
	if (!p || p >= (1ull << 31))
		return -EINVAL;
	if (e->owner != t || e->idx < 0)
		return -EINVAL;	/* only the running owner's counter */
	event_sync(e);
	e->period = p;
	e->done = 0;
	e->child_counts = 0;
	event_restart(e);
	wrmsr(PV_MSR_IA32_A_PMC0 + e->idx, e->restart);
	e->base = event_raw(e, rdtsc());
	return 0;
}

s64 perf_event_ioctl(struct perf_event *e, u64 cmd, u64 arg)
{
	u64 v;

	switch ((u32)cmd) {	/* an int in the C library: sign-extended */
	case PV_PERF_EVENT_IOC_ENABLE:
		event_for_each(e, arg, event_enable);
		return 0;
	case PV_PERF_EVENT_IOC_DISABLE:
		event_for_each(e, arg, event_disable);
		return 0;
	case PV_PERF_EVENT_IOC_RESET:
		event_for_each(e, arg, event_reset);
		return 0;
	case PV_PERF_EVENT_IOC_REFRESH:
		/* Enable for `arg` more overflows, then disable (POLL_HUP). */
		if (e->inherit || !e->period || (s64)arg <= 0)
			return -EINVAL;
		e->limit += (int)arg;
		event_enable(e);
		return 0;
	case PV_PERF_EVENT_IOC_PERIOD:
		return event_period_set(e, arg);
	case PV_PERF_EVENT_IOC_ID:
		v = e->id;
		if (!user_range_ok(arg, 8) || copy_to_user((void *)arg, &v, 8))
			return -EFAULT;
		return 0;
	case PV_PERFVISOR_IOC_COUNTER:
		/* Read in place from now on: it keeps its counter. */
		if (e->idx < 0)
			return -ENODATA;
		e->fixed = true;
		e->in_place = true;
		return e->idx;
	case PV_PERFVISOR_IOC_TRAP_READ:
		/* cycles of `arg` rdmsr of IA32_PMC0, each a trip to the VMM */
		return trap_read_cycles(arg > 100000 ? 100000 : arg);
	case PV_PERFVISOR_IOC_TRAP_WRITE:
		return trap_write_cycles(arg > 100000 ? 100000 : arg);
	default:
		return -ENOTTY;
	}
}

/*
 * Overflow signal set-up, for the fcntl commands that concern a perf fd
 * (F_SETFL's O_ASYNC is seen here and then set as usual by the caller).
 * -ENOSYS: not a perf command, the caller goes on.
 */
s64 perf_event_fcntl(struct perf_event *e, int fd, u64 cmd, u64 arg)
{
	struct { int type; int pid; } own;

	switch (cmd) {
	case 4:		/* F_SETFL */
		e->async = arg & O_ASYNC;
		e->fd = fd;
		return -ENOSYS;
	case F_SETOWN:
		/* A positive pid is a process, negative a process group. */
		e->sig_tid = (int)arg < 0 ? -(int)arg : (int)arg;
		e->sig_to_thread = false;
		e->fd = fd;
		return 0;
	case F_GETOWN:
		return e->sig_tid;
	case F_SETSIG:
		if (arg > NSIG)
			return -EINVAL;
		e->signo = (int)arg;
		e->fd = fd;
		return 0;
	case F_GETSIG:
		return e->signo;
	case F_SETOWN_EX:
		if (!user_range_ok(arg, 8) || copy_from_user(&own, (void *)arg, 8))
			return -EFAULT;
		if (own.type != F_OWNER_TID && own.type != F_OWNER_PID &&
		    own.type != 2)
			return -EINVAL;
		if (own.pid && !task_find(own.pid))
			return -ESRCH;
		e->sig_tid = own.pid;
		e->sig_to_thread = own.type == F_OWNER_TID;
		e->fd = fd;
		return 0;
	case F_GETOWN_EX:
		own.type = e->sig_to_thread ? F_OWNER_TID : F_OWNER_PID;
		own.pid = e->sig_tid;
		if (!user_range_ok(arg, 8) || copy_to_user((void *)arg, &own, 8))
			return -EFAULT;
		return 0;
	default:
		return -ENOSYS;
	}
}

/*
 * Is e's mmap still there?  The program may have unmapped it (PAPI does,
 * before close()) and mapped something else at its address since: the
 * first page must still be e's own.  Only for the current address space.
 * Walked once per code_gen of the mm: nothing unmapped, nothing moved.
 */
static bool event_page_mapped(struct perf_event *e)
{
	bool huge;
	u64 *pte;

	if (!e->page_va || current_task()->proc->mm != e->page_mm)
		return false;
	if (e->page_gen == e->page_mm->code_gen)
		return true;
	pte = mm_walk(e->page_mm, e->page_va, false, &huge);
	if (!pte || huge || !(*pte & PTE_P) ||
	    (*pte & PTE_ADDR) != V2P(e->page))
		return false;
	e->page_gen = e->page_mm->code_gen;
	e->ring_va = 0;
	return true;
}

/* The frame of the ring page at va (page-aligned) of a mapped e, or 0. */
static u64 event_ring_page(struct perf_event *e, u64 va)
{
	bool huge;
	u64 *pte;

	if (va == e->ring_va)
		return e->ring_pa;
	pte = mm_walk(e->page_mm, va, false, &huge);
	if (!pte || huge || !(*pte & PTE_P))
		return 0;
	e->ring_va = va;
	e->ring_pa = *pte & PTE_ADDR;
	return e->ring_pa;
}

/* Replace the anonymous page at va of the current address space by pa. */
static int page_borrow(struct mm *mm, u64 va, u64 pa, bool writable)
{
	bool huge;
	u64 *pte = mm_walk(mm, va, false, &huge);

	if (!pte || huge || !(*pte & PTE_P))
		return -ENOMEM;
	if (!(*pte & PTE_BORROWED))
		page_free(*pte & PTE_ADDR);
	*pte = pa | PTE_P | PTE_U | PTE_NX | PTE_BORROWED |
	       (writable ? PTE_W : 0);
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
	return 0;
}

/*
 * mmap of a perf fd.  Offset 0: the perf_event_mmap_page, then the
 * 2^n-page sample ring a sampling event asks for, where each overflow
 * writes a PERF_RECORD_SAMPLE (event_sample_write()).  As on Linux the mapping must
 * be shared, and PROT_WRITE makes it writable: a reader of the ring
 * writes data_tail in the first page (PAPI does after every overflow).
 * PV_PERF_MMAP_THREAD_OFF: the thread's counter page, for libvpmu,
 * read-only (EACCES for PROT_WRITE, as for a read-only file).
 */
s64 perf_event_mmap(struct perf_event *e, u64 len, u64 prot, u64 flags,
		    u64 off)
{
	struct mm *mm = current_task()->proc->mm;
	u64 pages = (len + PAGE_SIZE - 1) / PAGE_SIZE, pa;
	s64 va;

	if (!(flags & MAP_SHARED))
		return -EINVAL;
	prot &= PROT_READ | PROT_WRITE;
	if (off == PV_PERF_MMAP_THREAD_OFF) {
		if (prot & PROT_WRITE)
			return -EACCES;
		return e->owner ? (s64)PV_VPMU_THREAD_VA(e->owner_tid) : -EINVAL;
	}
	if (off || !pages || ((pages - 1) & (pages - 2)))
		return -EINVAL;
	/* One mapping per event: the page is freed at close. */
	if (e->page_va)
		return -EBUSY;
	pa = V2P(e->page);
	if (!e->page) {
		pa = page_alloc_zero();
		if (!pa)
			return -ENOMEM;
		e->page = P2V(pa);
		e->page->version = 0;
		e->page->compat_version = 0;
		/* cap_bit0_is_deprecated: the capabilities bits below
		 * mean what they say; cap_user_rdpmc, whose index tells
		 * when (event_page_update()) */
		e->page->capabilities = PV_PERF_CAP_BIT0_IS_DEPRECATED |
					PV_PERF_CAP_USER_RDPMC;
		e->page->pmc_width = PV_VPMU_WIDTH;
		e->page->size = __builtin_offsetof(struct pv_perf_mmap_page,
						   reserved);
	}
	/* The sample ring: the 2^n pages after this one. */
	e->page->data_offset = PAGE_SIZE;
	e->page->data_size = (pages - 1) * PAGE_SIZE;
	va = mm_mmap_anon(mm, 0, len, prot | PROT_READ, false);
	if (va < 0)
		return va;
	if (page_borrow(mm, va, pa, prot & PROT_WRITE)) {
		mm_munmap(mm, va, len);
		return -ENOMEM;
	}
	e->page_va = va;
	e->page_len = len;
	e->page_mm = mm;
	event_sync(e);
	event_page_update(e);
	return va;
}

/* ---- lifetime ---- */

static void event_unlink_task(struct perf_event *e)
{
	struct task *t = e->owner;

	for (struct perf_event **p = &t->perf_list; *p; p = &(*p)->task_next)
		if (*p == e) {
			*p = e->task_next;
			break;
		}
	if (e->idx >= 0 && t->tpage && t->perf[e->idx] == e) {
		slot_release(t, e);
		perf_reload(t);
	}
	task_waiting_update(t);
}

/* Linux turns a closed leader's siblings into groups of their own. */
static void event_unlink_group(struct perf_event *e)
{
	struct perf_event *l = e->leader, *s, *next;

	if (l == e) {
		for (s = e->sibling; s; s = next) {
			next = s->sibling;
			event_sync(s);
			s->leader = s;
			s->sibling = NULL;
			event_settle(s);
		}
		return;
	}
	for (s = l; s->sibling; s = s->sibling)
		if (s->sibling == e) {
			s->sibling = e->sibling;
			break;
		}
}

void perf_event_release(struct perf_event *e)
{
	event_unlink_group(e);
	if (e->owner)
		event_unlink_task(e);
	if (e->page) {
		/* The mapping goes with the page (Linux keeps it to munmap),
		 * unless the program unmapped it already: what is at its
		 * address now is the program's. */
		if (event_page_mapped(e))
			mm_munmap(e->page_mm, e->page_va, e->page_len);
		page_free(V2P(e->page));
	}
	kfree(e);
}

void perf_event_task_exit(struct task *t)
{
	for (struct perf_event *e = t->perf_list; e; e = e->task_next) {
		event_sync(e);
		event_page_update(e);
		e->live = false;
		e->owner = NULL;
		if (e->idx >= 0)
			t->perf[e->idx] = NULL;
	}
	t->perf_list = NULL;
	t->perf_waiting = false;
}

u32 perf_event_private_slots(const struct task *parent)
{
	u32 m = 0;

	for (int i = 0; i < PV_VPMU_NR_GP; i++)
		if (parent->perf[i] && !parent->perf[i]->inherit)
			m |= 1u << i;
	return m;
}

/*
 * The PERF_RECORD_SAMPLE Linux writes in e's ring at an overflow: PAPI
 * takes the overflow's address from there (its profiles, and the address
 * its overflow handler gets), not from the signal.  The fields of
 * PV_PERF_SAMPLE_WRITTEN, in Linux's order; a sample type that asks for
 * more (call chains, registers, ...) gets no record, and a full ring
 * drops it (Linux counts it lost).  Only into the address space the ring
 * is mapped in, the interrupted one.
 */
static void event_sample_write(struct perf_event *e, struct task *t,
			       const struct trapframe *tf, u64 kip)
{
	struct pv_perf_mmap_page *p = e->page;
	u64 rec[10], st = e->sample_type, ring, head, size, va, pa = 0, ip;
	bool user = kpmu_sample_ip(kip, e->evtsel, tf, &ip);
	u64 page = 1;	/* no page: page-aligned addresses only below */
	u32 n = 1;

	if (!p || !st || (st & ~PV_PERF_SAMPLE_WRITTEN) || t != current_task() ||
	    !event_page_mapped(e))
		return;
	ring = p->data_size;
	if (st & PV_PERF_SAMPLE_IDENTIFIER)
		rec[n++] = e->id;
	if (st & PV_PERF_SAMPLE_IP)
		rec[n++] = ip;
	if (st & PV_PERF_SAMPLE_TID)	/* u32 pid, u32 tid */
		rec[n++] = (u64)(u32)t->tid << 32 | (u32)t->proc->pid;
	if (st & PV_PERF_SAMPLE_TIME)
		rec[n++] = ns_from_tsc(rdtsc());
	if (st & PV_PERF_SAMPLE_ID)
		rec[n++] = e->id;
	if (st & PV_PERF_SAMPLE_STREAM_ID)
		rec[n++] = e->id;
	if (st & PV_PERF_SAMPLE_CPU)	/* u32 cpu, u32 reserved */
		rec[n++] = (u32)t->cpu->id;
	if (st & PV_PERF_SAMPLE_PERIOD)
		rec[n++] = e->period;
	size = n * 8;
	/* struct perf_event_header: u32 type, u16 misc, u16 size */
	rec[0] = PV_PERF_RECORD_SAMPLE | size << 48 |
		 (u64)(user ? PV_PERF_RECORD_MISC_USER :
		       PV_PERF_RECORD_MISC_KERNEL) << 32;
	head = p->data_head;
	if (!ring || head - __atomic_load_n(&p->data_tail, __ATOMIC_ACQUIRE) +
	    size > ring)
		return;
	/* Through the ring's physical pages: the user may have mapped it
	 * read-only, and the record may wrap or cross a page (8-byte
	 * words never do). */
	for (u32 i = 0; i < n; i++) {
		va = e->page_va + PAGE_SIZE + ((head + 8 * i) & (ring - 1));
		if ((va & ~(PAGE_SIZE - 1)) != page) {
			page = va & ~(PAGE_SIZE - 1);
			pa = event_ring_page(e, page);
			if (!pa)
				return;
		}
		*(u64 *)P2V(pa + (va & (PAGE_SIZE - 1))) = rec[i];
	}
	__atomic_store_n(&p->data_head, head + size, __ATOMIC_RELEASE);
}

/* PMI on this CPU: the running thread owns the interrupting counters. */
/*
 * The #GP of a user rdpmc: where the thread's own event on counter ECX
 * lets its page's reader use it (index != 0), the instruction reads that
 * counter as read() would, and retires.  Anything else stays the #GP the
 * hardware raises without CR4.PCE.
 */
bool perf_event_rdpmc(struct task *t, struct trapframe *tf)
{
	u32 idx = (u32)tf->rcx;
	struct perf_event *e;
	u8 insn[2];
	u64 v;

	if (idx >= PV_VPMU_NR_GP || !t->perf[idx] ||
	    !event_rdpmc_ok(t->perf[idx]) || !user_range_ok(tf->rip, 2) ||
	    copy_from_user(insn, (void *)tf->rip, 2) || insn[0] != 0x0f ||
	    insn[1] != 0x33)
		return false;
	/* Never back, as read() (event_sync()): from below the last read
	 * (steal dropped since) the page's reader would see a count fall. */
	e = t->perf[idx];
	v = kpmu_task_count(t, (int)idx);
	if (v < e->base)
		v = e->base;
	if (v < e->rdpmc_max)
		v = e->rdpmc_max;
	e->rdpmc_max = v;
	v &= PV_VPMU_MASK;
	tf->rax = (u32)v;
	tf->rdx = v >> 32;
	tf->rip += 2;
	kpmu_count_trap_insn(t->cpu->vpage);
	return true;
}

/*
 * The next overflow comes 'period' events after this one; events past the
 * wrap (skid) carry over.  What the counter counted up to now joins done,
 * and it counts on from the value the re-arm set.  The re-arm acknowledges
 * the PMI, which ends its freeze (pmu/imode.c).
 */
static void event_rearm(struct perf_event *e, int idx)
{
	u64 set, c = kpmu_rearm(idx, e->period, &set);

	e->done += (c - e->restart) & PV_VPMU_MASK;
	e->restart = set;
}

bool perf_event_overflow(struct task *t, int idx, struct trapframe *tf,
			 u64 kip)
{
	struct perf_event *e = idx < PV_VPMU_NR_GP ? t->perf[idx] : NULL;
	struct task *to;
	int code = POLL_IN, sig;

	if (!e)
		return false;
	/*
	 * A stopped event does not overflow.  An overflow from before the
	 * stop can arrive after it (delivery waits for the owner to run
	 * again when a switch came in between): its point is at or below
	 * the raw count the stop left in base.
	 */
	if (!e->live && e->done + pv_vpmu_before_wrap(e->restart) +
	    e->child_counts > e->base) {
		event_rearm(e, idx);
		return true;
	}
	/* Under the PMI's freeze, which event_rearm() ends: the record is
	 * the handler's work, not the program's. */
	event_sample_write(e, t, tf, kip);
	event_rearm(e, idx);
	if (e->limit && !--e->limit) {
		code = POLL_HUP;
		event_disable(e);
	}
	if (!e->async)
		return true;
	to = task_find(e->sig_tid);
	if (!to || to->proc != t->proc)
		return true;
	sig = e->signo ? e->signo : SIGIO;
	to->sig_code[sig - 1] = code;
	to->sig_value[sig - 1] = (code == POLL_IN ? POLLIN_BAND : POLLHUP_BAND) |
				 (u64)(u32)e->fd << 32;
	/* F_SETSIG 0 sends SIGIO without the siginfo fields. */
	if (e->signo)
		to->sig_poll |= 1ull << (sig - 1);
	else
		to->sig_poll &= ~(1ull << (sig - 1));
	/*
	 * F_SETOWN names a process, but Linux gives the thread whose id it
	 * was given the first crack at the signal (complete_signal()): that
	 * thread takes it unless it blocks it.
	 */
	signal_send(to, sig, e->sig_to_thread ||
		    !(to->sigmask & (1ull << (sig - 1))));
	return true;
}
