// SPDX-License-Identifier: MIT
/*
 * Guest side of the virtual PMU.  The layouts are in uapi/vpmu.h, the
 * arithmetic and the policy's switch rule in uapi/vpmu_guest.h (compiled
 * by the VMM's test model too); nothing here depends on the policy.
 * Budget: every instruction here runs emulated, so per-thread masks are
 * precomputed and the switch path touches only live counters.
 */
#include "kernel.h"
#include "mm.h"
#include "msr.h"
#include "perf_event.h"
#include "pmu_guest.h"
#include "pmu_switch.h"
#include "stat.h"
#include "task.h"
#include "vpmu.h"
#include "vpmu_guest.h"
#include "x86_decode.h"

_Static_assert(__builtin_offsetof(struct task, cpu) == TASK_CPU, "asm");
_Static_assert(__builtin_offsetof(struct task, icache) == TASK_ICACHE, "asm");
_Static_assert(__builtin_offsetof(struct cpu, vpage) == CPU_VPAGE, "asm");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, step.enable) ==
	       VP_STEP_ENABLE, "asm");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page,
				  step.count[PV_STEP_USER_INSNS]) ==
	       VP_STEP_COUNT_INSNS, "asm");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page,
				  step.count[PV_STEP_USER_BRANCHES]) ==
	       VP_STEP_COUNT_BRANCHES, "asm");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page,
				  step.deadline[PV_STEP_USER_INSNS]) ==
	       VP_STEP_DL_INSNS, "asm");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page,
				  step.deadline[PV_STEP_USER_BRANCHES]) ==
	       VP_STEP_DL_BRANCHES, "asm");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, step.rip) ==
	       VP_STEP_RIP, "asm");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, step.traps) ==
	       VP_STEP_TRAPS, "asm");
_Static_assert(PV_BP_PORT == PV_BP_PORT_ASM, "asm");
_Static_assert(PV_PF_ERR_STEP == PV_PF_ERR_STEP_ASM, "asm");

#define MASK48			PV_VPMU_MASK

/*
 * Every vCPU's counter page exists before the first program runs: user
 * space maps all of them at its first perf_event_open(), and an AP may
 * still be booting then (a page it had not allocated yet was mapped at a
 * bogus address, and a reader of it spun on 0xff MMIO reads forever).
 */
void kpmu_cpus_alloc(u32 ncpus)
{
	for (u32 i = 0; i < ncpus; i++) {
		u64 pa = page_alloc_zero();

		if (!pa)
			panic("no memory for the vCPU counter pages");
		cpus[i].vpage = P2V(pa);
	}
}

/* On the vCPU itself: register its page with the VMM. */
void kpmu_cpu_init(struct cpu *c)
{
	u64 pa = V2P(c->vpage);

	/*
	 * The VMM publishes its policy's switch rule at registration.  A page
	 * it accepted without a valid rule is an error, not "some default
	 * policy": counts would be silently wrong.  No PMU (-ENOSYS) leaves
	 * the page zero, and nothing ever has a thread page to switch.
	 */
	if (!hcall(PV_HC_PMU_VCPU_PAGE, pa, 0, 0) &&
	    !pv_switch_rule_ok(c->vpage->switch_rule))
		panic("vCPU page: unknown policy switch rule %x (policy id %u)",
		      c->vpage->switch_rule, c->vpage->policy_id);
	/* Host preemption shows in KVM steal time: the tsc source uses it. */
	if (boot_params->flags & PV_BOOT_STEAL) {
		wrmsr(PV_MSR_KVM_STEAL_TIME,
		      (PV_STEAL_PHYS + PV_STEAL_RECORD_SIZE * c->id) | 1);
		c->steal = P2V(PV_STEAL_PHYS + PV_STEAL_RECORD_SIZE * c->id);
	}
}

/* Which counters a thread page counts, and which interrupt (i-mode). */
static void task_masks(struct task *t)
{
	struct pv_vpmu_masks m = pv_vpmu_thread_masks(t->tpage);

	t->pmu_count_mask = m.count;
	t->pmu_int_mask = m.intr;
}

int kpmu_task_alloc_page(struct task *t)
{
	u64 pa = page_alloc_zero();

	if (!pa)
		return -ENOMEM;
	t->tpage = P2V(pa);
	t->tpage->flags = PV_VPMU_THREAD_ACTIVE;
	return 0;
}

void kpmu_task_config_changed(struct task *t)
{
	task_masks(t);
}

/* New task: inherit the parent's configuration (perf's inherit), or the
 * `vmm stat` / `vmm record` events for the first task. */
void kpmu_task_init(struct task *t, struct task *parent)
{
	struct pv_vpmu_thread_page *tp;

	if (!(parent ? parent->tpage != NULL
		     : boot_params->stat_nr || boot_params->record_period))
		return;
	if (kpmu_task_alloc_page(t))
		return;
	tp = t->tpage;
	if (parent) {
		u32 priv = perf_event_private_slots(parent);

		t->pmu_parent_tid = parent->tid;
		memcpy(tp->evtsel, parent->tpage->evtsel, sizeof(tp->evtsel));
		tp->fixed_ctrl = parent->tpage->fixed_ctrl;
		tp->global_ctrl = parent->tpage->global_ctrl;
		tp->config_id = parent->tpage->config_id;
		tp->nr_map = parent->tpage->nr_map;
		memcpy(tp->map, parent->tpage->map, sizeof(tp->map));
		/* Events without attr.inherit count their own thread only. */
		for (int i = 0; priv && i < PV_VPMU_NR_GP; i++)
			if (priv & (1u << i)) {
				tp->evtsel[i] = 0;
				tp->global_ctrl &= ~(1ull << i);
			}
		if (priv)
			tp->config_id = perf_config_id(tp);
		/* Interrupting counters start one period before they wrap. */
		for (int i = 0; i < PV_VPMU_NR_GP; i++)
			if (tp->evtsel[i] & PV_EVTSEL_INT)
				tp->ctr[i].saved = parent->tpage->ctr[i].saved ?
					kpmu_sample_start(i) : 0;
		t->record_armed = boot_params->record_period;
	} else if (boot_params->record_period) {
		tp->evtsel[0] = boot_params->record_evtsel | PV_EVTSEL_INT;
		tp->global_ctrl = 1;
		tp->ctr[0].saved = kpmu_sample_start(0);
		t->record_armed = boot_params->record_period;
		tp->nr_map = 1;
		tp->config_id = 2;
	} else {
		for (u32 i = 0; i < boot_params->stat_nr && i < 4; i++) {
			tp->evtsel[i] = boot_params->stat_evtsel[i];
			tp->global_ctrl |= 1ull << i;
			tp->map[i] = i;
		}
		tp->nr_map = boot_params->stat_nr;
		tp->config_id = 1;
	}
	task_masks(t);
}

void kpmu_switch(struct task *prev, struct task *next, struct cpu *c)
{
	kpmu_switch_inline(prev, next, c);
}

/*
 * A thread's logical count.  Running: Sum_thread + (Phys* - Start*), with
 * Sum and Start zero for counters the VMM saves and restores.  Switched
 * out: Sum (a-mode), or the saved counter (i-mode and saverestore).
 */
static u64 task_count(struct task *t, int i)
{
	struct pv_vpmu_thread_page *tp = t->tpage;
	const struct pv_vpmu_vcpu_page *vp = t->cpu ? t->cpu->vpage : NULL;
	struct pv_vpmu_masks m = task_pmu_masks(t);

	/* libvpmu's rule: an interrupting counter whole, others stepped back. */
	if (t->state == TASK_RUNNING && vp)
		return pv_vpmu_running_value(&tp->ctr[i],
					     pv_vpmu_phys_star(vp, i, PV_VPMU_TSC_NOW),
					     m.intr & (1u << i));
	return pv_vpmu_counter_loaded(vp, m, i) ? tp->ctr[i].saved :
		tp->ctr[i].sum;
}

u64 kpmu_task_count(struct task *t, int idx)
{
	return t->tpage ? task_count(t, idx) : 0;
}

/*
 * A counter a PMI froze (pmu/imode.c): its value is the vCPU page's, as
 * the VMM left it at the entry, and read with no seqlock, since no entry
 * comes before the handler's next exit.  A few instructions where
 * task_count() takes ~130 emulated ones.
 */
u64 kpmu_pmi_count(struct task *t, int idx)
{
	const struct pv_vpmu_vcpu_page *vp = t->cpu->vpage;

	if (vp && !(vp->ctr[idx].flags & PV_VPMU_CTR_RUNNING))
		return vp->ctr[idx].sum;
	return kpmu_task_count(t, idx);
}

/* The counter value an interrupting counter starts (and restarts) at. */
u64 kpmu_sample_start(int idx)
{
	(void)idx;
	return pv_vpmu_before_wrap(boot_params->record_period);
}

/* Thread exit: report its counts to the VMM (`vmm stat`). */
void kpmu_task_exit(struct task *t)
{
	struct pv_stat_record r;
	u64 now = rdtsc();
	struct task *p;

	if (!t->tpage)
		return;
	perf_event_task_exit(t);
	/* perf's inherit: an exited child's counts go to the parent event. */
	p = t->pmu_parent_tid ? task_find(t->pmu_parent_tid) : NULL;
	for (int i = 0; p && p->proc == t->proc && i < PV_VPMU_NR_GP; i++)
		if (p->perf[i] && p->perf[i]->inherit &&
		    (t->pmu_count_mask & (1u << i)))
			p->perf[i]->child_counts += task_count(t, i);
	if (!boot_params->stat_nr)
		return;
	memset(&r, 0, sizeof(r));
	r.pid = t->proc->pid;
	r.tid = t->tid;
	memcpy(r.comm, t->comm, sizeof(r.comm));
	r.run_ns = ns_from_tsc(task_cpu_tsc(t, now));
	r.switches = t->nr_switches;
	for (u32 i = 0; i < boot_params->stat_nr && i < PV_STAT_MAX_EVENTS; i++)
		r.count[i] = task_count(t, t->tpage->map[i]);
	hcall(PV_HC_STAT_THREAD, V2P(&r), 0, 0);
}

void kpmu_task_free(struct task *t)
{
	if (t->tpage)
		page_free(V2P(t->tpage));
	t->tpage = NULL;
}

/* ---- the mode clock: cycles of user and kernel mode apart ---- */

/* The start-up trip measurement (kpmu_trip_start()): its calls left, the
 * least trip so far (~0: none yet), and whether it turned the fast
 * dispatch off for itself. */
static u8 trip_left;
static u64 trip_least = ~0ull;
static bool trip_owns_slow;

static u64 mode_clock_steal(void)
{
	const struct pv_steal_record *r = current_task()->cpu->steal;

	return r ? r->steal : 0;
}

/*
 * Started where the kernel first sees the VMM ask for it, at 0 in kernel
 * mode: the VMM reads 0 user cycles until then (pv_vpmu_user_tsc()), so
 * the count goes on from there without a jump.  Under the tsc source the
 * fast system-call dispatch takes no entry stamp, so from now on every
 * call goes through syscall_dispatch(); getpid and gettid, leaves that
 * save nothing, still do not, and their few instructions count as user
 * time, as do the step source's counting traps (#DB, #BP) it serves in
 * entry.S.
 */
static __attribute__((noinline)) void
mode_clock_begin(struct pv_vpmu_vcpu_page *vp)
{
	struct pv_vpmu_guest_cpu *g = &vp->guest;

	if (g->clock_on == PV_CLOCK_SEEDED) {
		/* An entry measures a trip of the clock's own: the first
		 * not stolen takes the seed's place, more or less (a stolen
		 * one would leave none, and the next trip counted whole). */
		if (g->in_user && mode_clock_steal() == g->steal_mark) {
			g->trip_min = 0;
			g->clock_on = PV_CLOCK_ON;
		}
		return;
	}
	g->in_user = 0;
	g->user_tsc = 0;
	g->trip_min = trip_least == ~0ull ? 0 : trip_least;
	__atomic_store_n(&g->clock_on, g->trip_min ? PV_CLOCK_SEEDED :
			 PV_CLOCK_ON, __ATOMIC_RELEASE);
	trip_owns_slow = false;
	syscall_hooks &= ~SYSCALL_HOOK_REFILL;
	if (!syscall_slow) {
		syscall_slow = true;
		syscall_init();
	}
}

/* Inline: on the PMI's path twice, where each instruction is emulated. */
static inline __attribute__((always_inline)) void
mode_clock_start(struct pv_vpmu_vcpu_page *vp)
{
	if (vp->guest.clock_on != PV_CLOCK_ON)
		mode_clock_begin(vp);
}

/*
 * Without a least trip, the first return after the clock starts took
 * none off, and the first stretch a program measured had a whole trip in
 * its user time: 250,000-400,000 cycles on kvm_pvm (PAPI's papi_tot_cyc
 * allows 100,000 around a sleep(1)).  So the boot's first TRIP_CALLS
 * system calls take the C dispatcher and are stamped about where the
 * mode clock stamps, and a clock starting later begins with their least
 * trip so far until its own first trip replaces it: these stamps sit
 * nearer user mode, so the seed is the lower.  ~1,600 emulated
 * instructions once a boot (design.md 4.6).
 */
#define TRIP_CALLS 8

void kpmu_trip_start(void)
{
	trip_left = TRIP_CALLS;
	return_hooks |= RETURN_HOOK_TRIP;
	syscall_hooks |= SYSCALL_HOOK_TRIP;
	if (!syscall_slow) {
		syscall_slow = true;
		trip_owns_slow = true;
	}
}

void kpmu_trip_entry(struct cpu *c)
{
	u64 trip = rdtsc() - c->trip_stamp;
	bool seen = (c->trip_stamp != 0) & (mode_clock_steal() == c->trip_steal);

	/* A stolen trip says nothing of what a trip costs (none: ~0).  No
	 * branch on the time: the step source counts kernel instructions
	 * exactly, and tests compare two runs' counts.  Counted or not,
	 * the calls end it: a host that steals each one (the step source
	 * stepping the kernel) gets no seed, not a slow boot. */
	trip |= -(u64)!seen;
	trip_least = trip < trip_least ? trip : trip_least;
	c->trip_stamp = 0;
	if (--trip_left)
		return;
	return_hooks &= ~RETURN_HOOK_TRIP;
	syscall_hooks &= ~SYSCALL_HOOK_TRIP;
	sched_rtu_update();
	if (trip_owns_slow) {
		trip_owns_slow = false;
		syscall_slow = false;
		syscall_hooks |= SYSCALL_HOOK_REFILL;
	}
}

void kpmu_trip_return(struct cpu *c)
{
	c->trip_steal = mode_clock_steal();
	c->trip_stamp = rdtsc();
}

static void mode_clock_entry(struct pv_vpmu_vcpu_page *vp)
{
	struct pv_vpmu_guest_cpu *g = &vp->guest;
	u64 steal, tsc, trip;

	mode_clock_start(vp);
	g->entries++;
	if (g->in_user) {
		tsc = rdtsc();
		steal = mode_clock_steal();
		/* The trip since the return stamp; a stolen one says
		 * nothing of what a trip costs. */
		trip = tsc - (g->user_tsc - g->user_base - g->trip_cost);
		if (steal == g->steal_mark &&
		    (trip < g->trip_min || !g->trip_min))
			g->trip_min = trip;
		g->last_trip = trip;
		g->user_tsc += pv_vpmu_user_stretch(vp, tsc,
						    steal - g->steal_mark);
		g->steal_mark = steal;
		g->in_user = 0;
	}
}

static void mode_clock_return(struct pv_vpmu_vcpu_page *vp)
{
	struct pv_vpmu_guest_cpu *g = &vp->guest;

	mode_clock_start(vp);
	if (!g->in_user) {
		g->steal_mark = mode_clock_steal();
		/* Start late by the least trip: the part of every trip the
		 * stamps cannot see.  Single-stepping, each trap pays its
		 * own (step_cost), and its trips would pay twice; by blocks
		 * a trap's cost stays 0 (design.md 4.5), and a system call's
		 * trip was user time: 60-80k cycles on kvm_pvm, against
		 * PAPI papi_tot_cyc's 100k for a sleep(1) between two. */
		g->trip_cost = (vp->step.enable & (1 | PV_STEP_BLOCKS)) == 1 ?
			       0 : g->trip_min;
		g->user_base = g->user_tsc - rdtsc() - g->trip_cost;
		g->in_user = 1;
	}
}

/*
 * After a halt the host is cold, and the trip back to user mode is slower
 * than trip_min: ~30,000 ticks after a 1 s sleep on kvm_pvm, which PAPI's
 * papi_tot_cyc saw as user cycles.  So the first return after a halt
 * starts the clock trip_woken late, the least trip measured after one,
 * where that is later.  Kept off the PMI's path, and all before the
 * return's stamp (after it, each emulated instruction is in the trip):
 * trip_min itself is raised for that return, and put back at the next
 * system call's entry (an entry by a trap in between leaves it raised a
 * return longer).  The counts are of CPUs with hook work due (BKL held).
 */
static u32 woken_returns, woken_waits;

static bool mode_clock_running(const struct cpu *c)
{
	const struct pv_vpmu_vcpu_page *vp = c->vpage;

	return vp && (vp->step.enable & PV_STEP_MODE_CLOCK) &&
	       vp->guest.clock_on == PV_CLOCK_ON;
}

/* sched_idle(), the BKL taken again after a halt. */
void kpmu_woken(struct cpu *c)
{
	if (c->woke || !mode_clock_running(c))
		return;
	c->woke = true;
	if (!woken_returns++) {
		return_hooks |= RETURN_HOOK_WOKEN;
		sched_rtu_update();
	}
}

/* The return after a halt, before kpmu_user_return() stamps it. */
void kpmu_woken_return(struct cpu *c)
{
	struct pv_vpmu_guest_cpu *g;

	if (!c->woke)
		return;
	c->woke = false;
	if (!--woken_returns) {
		return_hooks &= ~RETURN_HOOK_WOKEN;
		sched_rtu_update();
	}
	if (!mode_clock_running(c) || c->woken_wait)
		return;
	g = &c->vpage->guest;
	/* Not single-stepped (each trap pays its own), a trip known, and
	 * mode_clock_return() about to start the clock. */
	if ((c->vpage->step.enable & (1 | PV_STEP_BLOCKS)) == 1 ||
	    !g->trip_min || g->in_user)
		return;
	c->trip_min_kept = g->trip_min;
	g->trip_min = g->trip_woken > g->trip_min ? g->trip_woken : g->trip_min;
	c->woken_entries = g->entries;
	c->woken_steal = mode_clock_steal();
	c->woken_wait = true;
	if (!woken_waits++)
		syscall_hooks |= SYSCALL_HOOK_WOKEN;
}

/*
 * A system call's entry, past its stamp: trip_min back, and the trip of
 * the stretch since that return if this is its first entry and none of
 * it was stolen.  No branch on the time (tests compare the kernel's
 * exact counts).
 */
void kpmu_woken_entry(struct cpu *c)
{
	struct pv_vpmu_guest_cpu *g = &c->vpage->guest;
	u64 trip, least;
	bool seen;

	if (!c->woken_wait)
		return;
	c->woken_wait = false;
	if (!--woken_waits)
		syscall_hooks &= ~SYSCALL_HOOK_WOKEN;
	g->trip_min = g->trip_min < c->trip_min_kept ? g->trip_min
						     : c->trip_min_kept;
	seen = (g->entries == c->woken_entries + 1) &
	       (g->steal_mark == c->woken_steal);
	trip = g->last_trip | -(u64)!seen;
	least = g->trip_woken ? g->trip_woken : ~0ull;
	least = trip < least ? trip : least;
	g->trip_woken = least == ~0ull ? 0 : least;
}

/* ---- the step source: exact user instructions by single-stepping ---- */

/*
 * Counting by blocks, user code runs untraced to the int3 the VMM puts at
 * the end of its basic block; single-stepped (TF) where the VMM says so: a
 * block it cannot end with a trap, or an overflow point inside it.
 */
void kpmu_user_return(struct task *t, struct trapframe *tf)
{
	struct pv_vpmu_vcpu_page *vp = t->cpu->vpage;

	/* The start-up trip's stamp where the clock's would be, as near
	 * user mode: not on the clock's way, the PMI's. */
	if (vp && (vp->step.enable & PV_STEP_MODE_CLOCK))
		mode_clock_return(vp);
	else if (unlikely(return_hooks & RETURN_HOOK_TRIP))
		kpmu_trip_return(t->cpu);
	if (!vp || !(vp->step.enable & 1)) {
		tf->rflags &= ~RFLAGS_TF;
		return;
	}
	vp->step.rip = tf->rip;
	if ((vp->step.enable & PV_STEP_BLOCKS) &&
	    hcall(PV_HC_STEP_ARM, tf->rip, V2P(tf),
		  t->mm ? t->mm->code_gen : 0) == 0)
		tf->rflags &= ~RFLAGS_TF;
	else
		tf->rflags |= RFLAGS_TF;
}

_Static_assert(sizeof(struct trapframe) == sizeof(struct pv_step_frame) &&
	       __builtin_offsetof(struct trapframe, rax) ==
	       __builtin_offsetof(struct pv_step_frame, rax) &&
	       __builtin_offsetof(struct trapframe, rip) ==
	       __builtin_offsetof(struct pv_step_frame, rip) &&
	       VEC_SYSCALL == PV_STEP_FRAME_SYSCALL,
	       "PV_HC_STEP_ACCOUNT's frame is the trapframe");

void kpmu_step_entry(struct pv_vpmu_vcpu_page *vp, struct trapframe *tf,
		     u64 back)
{
	if (vp->step.enable & PV_STEP_MODE_CLOCK)
		mode_clock_entry(vp);
	if (!(vp->step.enable & PV_STEP_BLOCKS))
		return;
	if (vp->step.rip != tf->rip - back)
		hcall(PV_HC_STEP_ACCOUNT, vp->step.rip, tf->rip - back, V2P(tf));
	vp->step.rip = tf->rip - back;	/* the VMM may have moved tf->rip */
}

/* Read the instruction at a user address (15 bytes at most, less at the
 * end of a mapping); false when nothing is readable. */
static bool insn_fetch(u64 rip, u8 *buf, size_t *len)
{
	size_t n = X86_MAX_INSN_LEN;

	if (!user_range_ok(rip, n))
		return false;
	while (n && copy_from_user(buf, (void *)rip, n))
		n = 4096 - (rip & 4095) < n ? 4096 - (rip & 4095) : n - 1;
	*len = n;
	return n > 0;
}

static void step_count(struct pv_vpmu_vcpu_page *vp, int slot)
{
	u64 c = ++vp->step.count[slot];

	/* Zero skid: the VMM sees the overflow before another instruction. */
	if (c == vp->step.deadline[slot])
		hcall(PV_HC_PMU_POLL, 0, 0, 0);
}

/* Classify the user instruction at rip, through the per-thread cache the
 * #DB fast path in entry.S reads (it only takes hits). */
static u64 insn_flags(struct task *t, u64 rip)
{
	struct step_icache *e = &t->icache[rip % STEP_ICACHE];
	struct x86_insn_class ic;
	u8 buf[X86_MAX_INSN_LEN];
	size_t len;

	if (e->rip == rip && e->flags)
		return e->flags;
	e->rip = rip;
	e->flags = 1;
	if (insn_fetch(rip, buf, &len) && !x86_classify(buf, len, &ic)) {
		if (x86_is_branch(ic.branch))
			e->flags |= ICACHE_BRANCH;
		if (ic.rep_string)
			e->flags |= ICACHE_REP_STRING;
	}
	return e->flags;
}

/*
 * The slow path of a single-step #DB from user mode (entry.S handles the
 * common case without leaving assembly): cache misses, rep iterations and
 * overflow deadlines.  The instruction that just retired began at
 * vp->step.rip, the RIP of the previous return to user mode.
 */
bool kpmu_debug_trap(struct trapframe *tf)
{
	struct task *t = current_task();
	struct pv_vpmu_vcpu_page *vp = t->cpu->vpage;

	if (!vp || !(vp->step.enable & 1))
		return false;			/* not ours: SIGTRAP */
	vp->step.traps++;
	/* RIP unchanged: a rep string iteration (retires once, at the end)
	 * or a jump to itself (retires every time). */
	if (tf->rip == vp->step.rip &&
	    (insn_flags(t, tf->rip) & ICACHE_REP_STRING))
		return true;
	if ((vp->step.enable & 2) &&
	    (insn_flags(t, vp->step.rip) & ICACHE_BRANCH))
		step_count(vp, PV_STEP_USER_BRANCHES);
	step_count(vp, PV_STEP_USER_INSNS);
	return true;
}

void kpmu_step_count_insn(struct pv_vpmu_vcpu_page *vp)
{
	step_count(vp, PV_STEP_USER_INSNS);
}

static u64 rdmsr64(u32 msr)
{
	u32 lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (u64)hi << 32 | lo;
}

/*
 * Restart interrupting counter idx one period after its last overflow (or
 * further, throttled: pv_vpmu_rearm_dist() and the VMM's back-off past the
 * handler), acknowledging the status bits this CPU's PMI left to
 * acknowledge on the way, which ends the PMI's freeze.  Returns the count
 * it read; *set is the value it set, the counter's in the vCPU page now,
 * since it starts from there at this entry.  One exit (PV_HC_PMU_REARM)
 * for what were three MSR accesses.
 */
u64 kpmu_rearm(int idx, u64 period, u64 *set)
{
	struct cpu *c = current_task()->cpu;
	u64 ack = c->pmi_ack;
	s64 pmc;

	c->pmi_ack = 0;
	pmc = hcall(PV_HC_PMU_REARM, idx, period, ack);
	if (pmc < 0)
		panic("PMU re-arm of counter %d: %ld", idx, pmc);
	*set = c->vpage ? c->vpage->ctr[idx].sum :
	       pv_vpmu_before_wrap(pv_vpmu_rearm_dist(pmc, period));
	return pmc;
}

bool kpmu_sample_ip(u64 kip, u64 evtsel, const struct trapframe *tf,
		    u64 *ip)
{
	/* The PMI itself waited for the return to user mode; Linux's NMI
	 * would have interrupted the kernel where the overflow was. */
	if (kip && (evtsel & PV_EVTSEL_OS)) {
		*ip = kip;
		return false;
	}
	*ip = tf->rip;
	return (tf->cs & 3) == 3;
}

/* `vmm record`: one sample of the interrupted context. */
static void kpmu_sample(struct task *t, struct trapframe *tf, int idx,
			u64 kip)
{
	u64 period = boot_params->record_period;
	/* The PMI froze the counter: its page reads it with no exit. */
	u64 pmc = kpmu_pmi_count(t, idx);
	u64 armed = t->record_armed ? t->record_armed : period, set;
	struct pv_sample s;

	/*
	 * The sample stands for every event since the counter was set: one
	 * period plus this skid less the last one, which carries over, or
	 * after a throttled re-arm (the last skid was a period or more) all
	 * of that stretch.  Counted as one period, a throttled stretch went
	 * missing from the profile, more of it where skids were longer (a
	 * busier host, a kernel path), so shares moved with the host's load
	 * while the program ran: hot's 80% read 78.4-81.8 at 1 kHz on a busy
	 * host (the VMM's sampler 79.9-80.3) and 71 at 2 kHz.
	 */
	s.period = pv_vpmu_delta(pmc, (0 - armed) & MASK48);
	if (!s.period)
		s.period = period;
	s.pid = t->proc ? t->proc->pid : 0;
	s.tid = t->tid;
	s.cpu = t->cpu->id;
	s.user = kpmu_sample_ip(kip, boot_params->record_evtsel, tf, &s.ip);
	s.time_tsc = rdtsc();
	memcpy(s.comm, t->comm, sizeof(s.comm));
	hcall(PV_HC_SAMPLE, V2P(&s), 0, 0);
	/*
	 * The next sample one period on, events past the wrap carried over.
	 * Last, as the acknowledgement ends the freeze: the handler's exits
	 * and emulated path are not the program's cycles.
	 */
	kpmu_rearm(idx, period, &set);
	t->record_armed = pv_vpmu_before_wrap(set);
}

/*
 * PMI.  Interrupting counters are saved and restored with their thread
 * (i-mode), so the running thread owns every overflow seen here; the VMM
 * moves an overflow still pending at a switch into the thread's page and
 * raises it again when the thread resumes (Perfctr-Xen's "mark pending,
 * deliver on next resume").
 */
void kpmu_pmi(struct trapframe *tf)
{
	struct task *t = current_task();
	struct cpu *c = t->cpu;
	/* The VMM's mirror, current at every entry: no exit to read it. */
	u64 status = c->vpage ? c->vpage->global_status :
		     rdmsr64(PV_MSR_IA32_PERF_GLOBAL_STATUS);
	/* Where the VMM found the overflow, if in the kernel: this PMI
	 * waited for the return to user mode, its samples need not. */
	u64 kip = c->vpage && c->vpage->pmi_kernel ? c->vpage->pmi_ip : 0;

	if (ktrace)
		kprintf("%s[%d]: PMI status %lx at %lx", t->comm, t->tid,
			status, tf->rip);
	/*
	 * Unmask LVTPC, then record, then acknowledge and re-arm in one exit
	 * (the first kpmu_rearm() takes c->pmi_ack), which ends the
	 * PMI's freeze of the counters: an overflow after the re-arm sets a
	 * fresh status bit and PMI instead of being cleared with the old
	 * one, and that exit is where the VMM sees LVTPC unmasked.  Only the
	 * overflowed counters' bits are visited: on kvm_pvm every test of a
	 * bit is an emulated instruction.
	 */
	c->pmi_ack = status;
	wrmsr(X2APIC_LVT_PMC, VEC_PMI);
	for (u64 gp = t->tpage ? status & ((1ull << PV_VPMU_NR_GP) - 1) : 0;
	     gp; gp &= gp - 1) {
		int i = __builtin_ctzll(gp);

		if (!perf_event_overflow(t, i, tf, kip) &&
		    boot_params->record_period)
			kpmu_sample(t, tf, i, kip);
	}
	/* No counter of this thread's re-armed: acknowledge alone. */
	if (c->pmi_ack)
		wrmsr(PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL, c->pmi_ack);
	c->pmi_ack = 0;
}
