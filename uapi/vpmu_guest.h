/* SPDX-License-Identifier: MIT */
/*
 * The guest's side of the virtual PMU ABI, as code: every formula the guest
 * kernel, libvpmu and the VMM's test model (pmu/guest_model.c) apply to
 * the shared pages of uapi/vpmu.h, defined once here so that they cannot
 * drift.  The test model compiles these very functions, so the unit tests
 * check the code the guest runs.
 *
 * Static inline, freestanding (no libc), fixed-width types only.
 */
#ifndef PV_UAPI_VPMU_GUEST_H
#define PV_UAPI_VPMU_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "seqcount.h"
#include "vpmu.h"

/* ---- Phys(t), Phys*(t) and the logical count ---- */

/*
 * The `tsc` argument of the readers below: read the TSC now, and only if
 * the counter needs it (guest code).  The test model passes the value its
 * fake source stands for instead.
 */
#define PV_VPMU_TSC_NOW		UINT64_MAX

/*
 * Step slot s's count that user code run from the VMM's code cache has
 * retired and the VMM not yet added to step.count (step_cache_hdr).  The
 * guest kernel never runs while a thread is in the cache (every entry
 * leaves it), so there it is 0 and not read.
 */
static inline uint64_t
pv_step_cache_count(const volatile struct pv_vpmu_vcpu_page *vp, int s)
{
#ifdef PV_VPMU_KERNEL
	(void)vp;
	(void)s;
	return 0;
#else
	const volatile uint64_t *h =
		(const volatile uint64_t *)(uintptr_t)vp->step_cache_hdr;

	return h ? h[s] : 0;
#endif
}

/*
 * The user time the mode clock gains from its last return to user mode to
 * TSC tsc, when the host stole steal_ns of it (ns since steal_mark, at
 * the page's TSC rate; a small difference, so 64 bits do): never below 0.
 */
static inline uint64_t
pv_vpmu_user_stretch(const volatile struct pv_vpmu_vcpu_page *vp,
		     uint64_t tsc, uint64_t steal_ns)
{
	const volatile struct pv_vpmu_guest_cpu *g = &vp->guest;
	uint64_t ran = g->user_base + tsc - g->user_tsc;
	uint64_t stolen = steal_ns * vp->tsc_khz / 1000000u;

	return (int64_t)ran > (int64_t)stolen ? ran - stolen : 0;
}

/*
 * The mode clock at TSC value tsc: the ticks this vCPU ran user code since
 * the guest kernel started the clock, 0 before (struct pv_vpmu_guest_cpu),
 * less host steal up to steal_ns (ns, KVM's record).  Readers take the
 * steal the VMM has seen (the page's steal_ns), as the VMM itself does.
 */
static inline uint64_t
pv_vpmu_user_time(const volatile struct pv_vpmu_vcpu_page *vp, uint64_t tsc,
		  uint64_t steal_ns)
{
	const volatile struct pv_vpmu_guest_cpu *g = &vp->guest;
	uint64_t mark = g->steal_mark;

	if (!g->clock_on)
		return 0;
	if (!g->in_user)
		return g->user_tsc;
	return g->user_tsc + pv_vpmu_user_stretch(vp, tsc, steal_ns > mark ?
						  steal_ns - mark : 0);
}

static inline uint64_t
pv_vpmu_user_tsc(const volatile struct pv_vpmu_vcpu_page *vp, uint64_t tsc)
{
	return pv_vpmu_user_time(vp, tsc, vp->steal_ns);
}

/* Phys(t) of counter c of vCPU page vp (see enum pv_vpmu_read). */
static inline uint64_t
pv_vpmu_phys(const volatile struct pv_vpmu_vcpu_page *vp,
	     const volatile struct pv_vpmu_counter *c, uint64_t tsc)
{
	uint8_t read = c->read;
	uint64_t sum = 0;

	/*
	 * Tests, not a switch: a jump table is an indirect branch, which
	 * the step source's code cache leaves by a trap to the VMM, which
	 * bumps the page's seq, so a user-mode reader retried for ever.
	 */
	if (read == PV_VPMU_READ_STEP) {
		for (int s = 0; s < PV_STEP_SLOTS; s++)
			if (c->step_mask & (1u << s))
				sum += vp->step.count[s] +
				       pv_step_cache_count(vp, s);
		return sum;
	}
	if (read < PV_VPMU_READ_TSC || read == PV_VPMU_READ_TRAP ||
	    read > PV_VPMU_READ_TSC_KERNEL)
		return c->start;	/* no live part: Phys* is the sum */
	if (tsc == PV_VPMU_TSC_NOW)
		tsc = __builtin_ia32_rdtsc();
	if (read == PV_VPMU_READ_TSC)
		return tsc;
	if (read == PV_VPMU_READ_TSC_KERNEL)
		return tsc - pv_vpmu_user_tsc(vp, tsc) - vp->kstep_ticks_kernel;
	if (read == PV_VPMU_READ_TSC_USER)
		return pv_vpmu_user_tsc(vp, tsc) -
		       c->step_cost * vp->step.traps - vp->kstep_ticks_user;
	return tsc - c->step_cost * vp->step.traps - vp->kstep_ticks_user -
	       vp->kstep_ticks_kernel;
}

/*
 * Phys*(t) = Sum_vcpu + (Phys(t) - Start_vcpu) while the counter runs,
 * Sum_vcpu otherwise; the caller holds the page's sequence count.
 */
static inline uint64_t
pv_vpmu_phys_star_unlocked(const volatile struct pv_vpmu_vcpu_page *vp,
			   unsigned int idx, uint64_t tsc)
{
	const volatile struct pv_vpmu_counter *c = &vp->ctr[idx];

	if (!(c->flags & PV_VPMU_CTR_RUNNING))
		return c->sum;
	return (c->sum + pv_vpmu_delta(pv_vpmu_phys(vp, c, tsc), c->start)) &
		PV_VPMU_MASK;
}

/* Phys*(t) of counter idx, consistent with the rest of the vCPU page. */
static inline uint64_t
pv_vpmu_phys_star(const volatile struct pv_vpmu_vcpu_page *vp,
		  unsigned int idx, uint64_t tsc)
{
	uint64_t v, entries;
	uint32_t s;

	/* A kernel entry between the loads moves the mode clock. */
	do {
		s = pv_seq_read_begin(&vp->seq);
		entries = vp->guest.entries;
		v = pv_vpmu_phys_star_unlocked(vp, idx, tsc);
	} while (pv_seq_read_retry(&vp->seq, s) ||
		 vp->guest.entries != entries);
	return v;
}

/*
 * The a-mode logical count: Log = Sum_thread + (Phys* - Start*_thread),
 * with the step-back rule of pv_vpmu_delta() (a Phys* a little below
 * Start*, after the VMM dropped steal time, counts as zero).
 */
static inline uint64_t
pv_vpmu_log(const volatile struct pv_vpmu_thread_counter *t, uint64_t phys_star)
{
	return t->sum + pv_vpmu_delta(phys_star, t->start);
}

/*
 * A running thread's value of one counter, from Phys*: the one rule of
 * every read (guest kernel, libvpmu, test model).  An interrupting
 * counter is its own value, loaded with the thread: it starts near 2^48
 * (2^48 - period) and counts up to its overflow, which the step-back rule
 * would read as 0.  Every other counter is the a-mode log, step-back
 * rule included; for one loaded with its thread (PV_SWITCH_LOADED), Sum
 * and Start are 0, so a Phys* that stepped back past 0 reads 0.
 */
static inline uint64_t
pv_vpmu_running_value(const volatile struct pv_vpmu_thread_counter *t,
		      uint64_t phys_star, bool intr)
{
	return intr ? phys_star : pv_vpmu_log(t, phys_star);
}

/* ---- Steal time ---- */

/*
 * Did the host preempt this vCPU since the VMM last dropped steal time
 * from its counters (it had dropped `dropped_ns`, vcpu page's steal_ns)?
 * No retry loop: KVM rewrites the record at every vCPU entry, and when the
 * VMM steps kernel code that is every instruction, so a loop would never
 * see the version hold.  A torn read only costs one needless exit.
 */
static inline bool
pv_steal_unaccounted(const volatile struct pv_steal_record *r,
		     uint64_t dropped_ns)
{
	uint32_t v = r->version;
	uint64_t ns;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	ns = r->steal;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return (v & 1) || v != r->version || ns > dropped_ns;
}

/* ---- A thread's configuration ---- */

/* IA32_PERF_GLOBAL_CTRL/STATUS bit of counter idx. */
static inline uint64_t pv_vpmu_global_bit(unsigned int idx)
{
	return idx < PV_VPMU_NR_GP ? 1ull << idx :
		1ull << (PV_GLOBAL_FIXED_SHIFT + idx - PV_VPMU_NR_GP);
}

/* Counter idx of thread page t is enabled and counts some privilege level. */
static inline bool
pv_vpmu_thread_counter_enabled(const volatile struct pv_vpmu_thread_page *t,
			       unsigned int idx)
{
	if (!(t->global_ctrl & pv_vpmu_global_bit(idx)))
		return false;
	if (idx < PV_VPMU_NR_GP)
		return (t->evtsel[idx] & PV_EVTSEL_EN) &&
			(t->evtsel[idx] & (PV_EVTSEL_USR | PV_EVTSEL_OS));
	return PV_FIXED_CTRL_FIELD(t->fixed_ctrl, idx - PV_VPMU_NR_GP) &
		(PV_FIXED_CTRL_USR | PV_FIXED_CTRL_OS);
}

/* ... and raises a PMI on overflow (i-mode). */
static inline bool
pv_vpmu_thread_counter_interrupts(const volatile struct pv_vpmu_thread_page *t,
				  unsigned int idx)
{
	if (!pv_vpmu_thread_counter_enabled(t, idx))
		return false;
	if (idx < PV_VPMU_NR_GP)
		return t->evtsel[idx] & PV_EVTSEL_INT;
	return PV_FIXED_CTRL_FIELD(t->fixed_ctrl, idx - PV_VPMU_NR_GP) &
		PV_FIXED_CTRL_PMI;
}

/*
 * One attempt at a lock-free read of thread page tp's counter idx on
 * vCPU page vp (the page of tp->smp_id, as read after pv_seq_read_begin()
 * of tp->seq returned ts).  False when a page changed meanwhile: retry
 * from tp->seq.  A vCPU page in mid-write is a retry too, not a wait on
 * that page: the thread may have moved to another vCPU meanwhile, and the
 * page it left may stay odd while its vCPU is stopped.
 */
static inline bool
pv_vpmu_read_try(const volatile struct pv_vpmu_thread_page *tp, uint32_t ts,
		 const volatile struct pv_vpmu_vcpu_page *vp, unsigned int idx,
		 uint64_t tsc, uint64_t *val)
{
	uint32_t vs = vp->seq;

	if (vs & 1)
		return false;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);

	*val = pv_vpmu_running_value(&tp->ctr[idx],
				     pv_vpmu_phys_star_unlocked(vp, idx, tsc),
				     pv_vpmu_thread_counter_interrupts(tp, idx));
	return !pv_seq_read_retry(&vp->seq, vs) &&
		!pv_seq_read_retry(&tp->seq, ts);
}

/* Which counters a thread counts (a-mode) and which interrupt (i-mode). */
struct pv_vpmu_masks {
	uint32_t count;
	uint32_t intr;
};

static inline struct pv_vpmu_masks
pv_vpmu_thread_masks(const volatile struct pv_vpmu_thread_page *t)
{
	struct pv_vpmu_masks m = { 0, 0 };
	uint64_t on, fixed, sel;
	bool counts, intr;

	if (!t)
		return m;
	/*
	 * What pv_vpmu_thread_counter_enabled() and _interrupts() say of
	 * each counter, reading each register once: the guest kernel runs
	 * this at every configuration change, every instruction emulated
	 * on kvm_pvm (190 of them with the per-counter reads).
	 */
	on = t->global_ctrl;
	fixed = t->fixed_ctrl;
	for (unsigned int i = 0; on && i < PV_VPMU_NR_COUNTERS; i++) {
		if (!(on & pv_vpmu_global_bit(i)))
			continue;
		if (i < PV_VPMU_NR_GP) {
			sel = t->evtsel[i];
			counts = (sel & PV_EVTSEL_EN) &&
				 (sel & (PV_EVTSEL_USR | PV_EVTSEL_OS));
			intr = sel & PV_EVTSEL_INT;
		} else {
			sel = PV_FIXED_CTRL_FIELD(fixed, i - PV_VPMU_NR_GP);
			counts = sel & (PV_FIXED_CTRL_USR | PV_FIXED_CTRL_OS);
			intr = sel & PV_FIXED_CTRL_PMI;
		}
		if (counts && intr)
			m.intr |= 1u << i;
		else if (counts)
			m.count |= 1u << i;
	}
	return m;
}

/* ---- The policy's guest half: the switch rule ---- */

/*
 * Whether a guest thread switch exits, from the rule the VMM's policy
 * publishes (pv_vpmu_vcpu_page.switch_rule, PV_SWITCH_*), given the
 * outgoing thread's masks and the incoming thread's page (NULL: no
 * counters, or idle) and masks.
 */
static inline bool
pv_vpmu_switch_exits(const struct pv_vpmu_vcpu_page *vp,
		     struct pv_vpmu_masks om,
		     const struct pv_vpmu_thread_page *in,
		     struct pv_vpmu_masks im)
{
	uint32_t rule = vp->switch_rule;
	bool new_config = in && in->config_id != vp->config_id;

	if ((rule & PV_SWITCH_EXIT_IMODE) && (om.intr | im.intr))
		return true;
	if ((rule & PV_SWITCH_EXIT_ACTIVE) &&
	    (om.count | om.intr | im.count | im.intr))
		return true;
	if ((rule & PV_SWITCH_EXIT_CONFIG) && new_config)
		return true;
	return (rule & PV_SWITCH_EXIT_CONFIG_ACTIVE) && new_config &&
		(im.count | im.intr);
}

/*
 * The common switch, told in a few instructions: a rule that folds and
 * never exits merely for counters being active, no i-mode counter on
 * either side (intr: both sides' masks.intr), and the incoming thread's
 * configuration already the vCPU's.  True implies that
 * pv_vpmu_switch_exits() is false for every rule (the unit tests check
 * each), so the guest skips the full rule only on its fast path.
 */
static inline bool
pv_vpmu_switch_stays_local(const struct pv_vpmu_vcpu_page *vp, uint32_t intr,
			   const struct pv_vpmu_thread_page *in)
{
	return (vp->switch_rule & (PV_SWITCH_FOLD | PV_SWITCH_EXIT_ACTIVE)) ==
		PV_SWITCH_FOLD && !intr &&
		(!in || in->config_id == vp->config_id);
}

/* What a guest thread switch asks of the VMM: pv_vpmu_switch_step(). */
enum pv_switch_step {
	PV_SWITCH_STEP_LOCAL,	/* nothing: pv_vpmu_switch_local() */
	PV_SWITCH_STEP_POLL,	/* an exit (PV_HC_PMU_POLL) for the VMM to
				 * drop steal time, then pv_vpmu_switch_local() */
	PV_SWITCH_STEP_SWITCH,	/* PV_HC_PMU_SWITCH(out, in) instead */
};

/*
 * Count the switch in the vCPU's guest-side state (struct
 * pv_vpmu_guest_cpu) and say whether the rule's period asks for an exit
 * at it: every Nth switch of the vCPU, N = PV_SWITCH_PERIOD_OF(rule).
 */
static inline bool pv_vpmu_switch_count(struct pv_vpmu_vcpu_page *vp)
{
	uint32_t rule = vp->switch_rule;

	vp->guest.switches++;
	/* Emulated at every switch: without a period, an add and a test. */
	if (!(rule & PV_SWITCH_PERIOD_MASK))
		return false;
	return vp->guest.switches % PV_SWITCH_PERIOD_OF(rule) == 0;
}

/*
 * The switch point's decision, the one the guest kernel (pmu_switch.h)
 * and the test model (pmu/guest_model.c) both take: the switch counted
 * and its period, the short test, then the whole rule; without an exit,
 * under a folding rule, one exit first if KVM's steal record (`steal`,
 * NULL when there is none) shows steal the VMM has not dropped, which
 * belongs to the outgoing thread's time only if it is dropped before the
 * fold.  Only after the host preempted this vCPU.
 */
static inline enum pv_switch_step
pv_vpmu_switch_step(struct pv_vpmu_vcpu_page *vp,
		    struct pv_vpmu_masks om,
		    const struct pv_vpmu_thread_page *in,
		    struct pv_vpmu_masks im,
		    const volatile struct pv_steal_record *steal)
{
	if (pv_vpmu_switch_count(vp))
		return PV_SWITCH_STEP_SWITCH;
	if (!pv_vpmu_switch_stays_local(vp, om.intr | im.intr, in) &&
	    pv_vpmu_switch_exits(vp, om, in, im))
		return PV_SWITCH_STEP_SWITCH;
	if (steal && (vp->switch_rule & PV_SWITCH_FOLD) &&
	    pv_steal_unaccounted(steal, vp->steal_ns))
		return PV_SWITCH_STEP_POLL;
	return PV_SWITCH_STEP_LOCAL;
}

/*
 * A switch that does not exit, done by the guest alone: the incoming
 * thread's smp_id, and with PV_SWITCH_FOLD the a-mode fold of the paper
 * (Sum_thread += Phys* - Start*_thread for the outgoing thread,
 * Start*_thread = Phys* for the incoming one), both pages under their
 * sequence counts.  Only counters in the masks' `count` are touched; the
 * masks of an absent (NULL) page must be zero.  Every instruction here
 * is emulated in the guest kernel: keep it lean.
 */
static inline void
pv_vpmu_switch_local(const struct pv_vpmu_vcpu_page *vp,
		     struct pv_vpmu_thread_page *out, struct pv_vpmu_masks om,
		     struct pv_vpmu_thread_page *in, struct pv_vpmu_masks im,
		     uint32_t smp_id, uint64_t tsc)
{
	uint32_t oc = 0, ic = 0;

	if (vp->switch_rule & PV_SWITCH_FOLD) {
		oc = om.count;
		ic = im.count;
	}
	if (oc)
		pv_seq_write_begin(&out->seq);
	if (in) {
		pv_seq_write_begin(&in->seq);
		in->smp_id = smp_id;
	}
	/* Straight to each live counter: a fixed counter's bit is high. */
	for (uint32_t left = oc | ic; left; left &= left - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(left);
		uint64_t ps = pv_vpmu_phys_star(vp, i, tsc);

		if (oc & (1u << i))
			out->ctr[i].sum += pv_vpmu_delta(ps, out->ctr[i].start);
		if (ic & (1u << i))
			in->ctr[i].start = ps;
	}
	if (in)
		pv_seq_write_end(&in->seq);
	if (oc)
		pv_seq_write_end(&out->seq);
}

/*
 * Counter idx of a thread holds the thread's own value (saved and
 * restored with it) rather than a-mode offsets: its i-mode counters, and
 * every counter under a PV_SWITCH_LOADED policy.
 */
static inline bool
pv_vpmu_counter_loaded(const volatile struct pv_vpmu_vcpu_page *vp,
		       struct pv_vpmu_masks m, unsigned int idx)
{
	return (m.intr & (1u << idx)) ||
		(vp && (vp->switch_rule & PV_SWITCH_LOADED));
}

#endif
