/* SPDX-License-Identifier: MIT */
/*
 * Policies: what happens to the virtual counters at the four switch points
 * (guest thread switch-out/in, host vCPU deschedule/resume) and on
 * overflow.  A policy is one file in pmu/policies/ plus its name in the
 * pmu_policies list of pmu/meson.build, from which the build generates the
 * table of pmu/policy.c; docs/policies.md walks through writing one.
 *
 * Every policy must keep the read formula of uapi/vpmu.h valid:
 *	log = thread.sum + ((Phys* - thread.start) & PV_VPMU_MASK)
 * with Phys* from the per-vCPU page.
 */
#ifndef PMU_POLICY_H
#define PMU_POLICY_H

#include "pmu.h"
#include "vpmu_guest.h"

struct pmu_policy_ops {
	const char *name;	/* --policy NAME */
	uint32_t id;		/* unique; published (informative), >= 16 for research */

	/*
	 * Host vCPU switch points, from pmu_vcpu_exit() (after the exit is
	 * counted) and pmu_vcpu_enter() (before the page is published).
	 * Typically pmu_vcpu_pause()/pmu_vcpu_unpause().  Required.
	 */
	void (*vcpu_deschedule)(struct pmu_vcpu *v);
	void (*vcpu_resume)(struct pmu_vcpu *v);

	/*
	 * Guest thread switch through PV_HC_PMU_SWITCH, on the VMM side:
	 * thread_out(t) for the suspended thread's page, then thread_in(t)
	 * for the resumed one (each skipped when its page is NULL).  The
	 * vCPU is paused: a counter value read here is the value the guest
	 * sees at the hypercall's return.  Return 0 or -errno.  Required.
	 */
	int (*thread_out)(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t);
	int (*thread_in)(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t);

	/*
	 * The guest half: the rule the guest kernel applies at a thread switch
	 * (exit or not, fold offsets or not), PV_SWITCH_* of uapi/vpmu.h with
	 * PV_SWITCH_VALID set, and optionally PV_SWITCH_PERIOD(n): exit at
	 * every nth switch the guest counts in the vCPU page's guest area.
	 * The VMM publishes it in every vCPU page; the guest evaluates it
	 * with pv_vpmu_switch_step() and pv_vpmu_switch_local()
	 * (uapi/vpmu_guest.h), as does the test model
	 * (pmu_guest_thread_switch()).  Required.
	 */
	uint32_t switch_rule;

	/*
	 * Counter `idx` crossed 2^48 `n` times (its status bit is already
	 * set).  Return true to request a PMI (i-mode counters); NULL means
	 * "PMI if the counter has INT/PMI set", as hardware does.
	 */
	bool (*overflow)(struct pmu_vcpu *v, unsigned int idx, uint64_t n);
};

/* ---- The table (pmu/policy.c, generated from pmu/meson.build) ---- */

const struct pmu_policy_ops *pmu_policy_lookup(const char *name);
const struct pmu_policy_ops *pmu_policy_lookup_id(uint32_t id);
/* i-th registered policy, NULL past the end. */
const struct pmu_policy_ops *pmu_policy_at(size_t i);
/*
 * A switch rule in words ("exit-imode fold period=8"): its flags but
 * PV_SWITCH_VALID, then its period.  -1 if it does not fit in len.
 */
int pmu_switch_rule_format(uint32_t rule, char *buf, size_t len);

/* ---- Helpers for policies ---- */

unsigned int pmu_vcpu_id(const struct pmu_vcpu *v);

/*
 * Stop/restart accounting of every enabled counter (Sum_vcpu += Phys -
 * Start_vcpu at pause, Start_vcpu = Phys at unpause) and disarm/re-arm
 * i-mode deadlines.  Counters of off-CPU sources (virtual events) keep
 * running.
 */
void pmu_vcpu_pause(struct pmu_vcpu *v);
void pmu_vcpu_unpause(struct pmu_vcpu *v);

bool pmu_counter_enabled(const struct pmu_vcpu *v, unsigned int idx);
/* INT (GP) or PMI (fixed) set: the counter is in i-mode. */
bool pmu_counter_interrupts(const struct pmu_vcpu *v, unsigned int idx);
/* Set the counter value (masked to the width), like a full-width wrmsr. */
void pmu_counter_set(struct pmu_vcpu *v, unsigned int idx, uint64_t value);

/*
 * Program all counters from a thread page's configuration, with the same
 * checks as the MSR writes.  -EINVAL (nothing changed) on reserved bits.
 */
int pmu_vcpu_load_config(struct pmu_vcpu *v,
			 const struct pv_vpmu_thread_page *t);
/*
 * The incoming thread's configuration: load it if the vCPU runs another,
 * and remember its config_id (what the guest compares for exit-free
 * switches).  0, or the error of pmu_vcpu_load_config().
 */
int pmu_vcpu_adopt_config(struct pmu_vcpu *v,
			  const struct pv_vpmu_thread_page *t);
/* Is the vCPU programmed exactly as `t` asks? */
bool pmu_vcpu_config_equal(const struct pmu_vcpu *v,
			   const struct pv_vpmu_thread_page *t);
/* Is counter idx enabled by the configuration in `t`? */
bool pmu_thread_counter_enabled(const struct pv_vpmu_thread_page *t,
				unsigned int idx);
bool pmu_thread_counter_interrupts(const struct pv_vpmu_thread_page *t,
				   unsigned int idx);
/* Does `t` have any counter enabled? */
bool pmu_thread_active(const struct pv_vpmu_thread_page *t);

/*
 * i-mode save/restore between the vCPU counters and t->ctr[].saved, for
 * the counters t enables (only its interrupting ones if imode_only).  Save
 * moves their GLOBAL_STATUS bits to t->pending_status; restore raises them
 * again (and a PMI) when the owner is back.  Both leave t->ctr[].sum and
 * .start at 0, so the read formula yields the counter value itself.
 */
void pmu_thread_save(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t,
		     bool imode_only);
void pmu_thread_restore(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t,
			bool imode_only);

/* Sequence protocol for writing a thread page (odd while writing). */
void pmu_thread_write_begin(struct pv_vpmu_thread_page *t);
void pmu_thread_write_end(struct pv_vpmu_thread_page *t);

/* ---- The guest's view, computed from the shared pages only ---- */

/*
 * The test model of the guest, on uapi/vpmu_guest.h (the code the guest
 * kernel and libvpmu compile).  `tsc` stands for what rdtsc returns now.
 */
/* Phys*(t) of counter idx from the vCPU page. */
uint64_t pmu_guest_phys_star(const struct pv_vpmu_vcpu_page *vp,
			     unsigned int idx, uint64_t tsc);
/* The logical per-thread value, exactly as the user library reads it. */
uint64_t pmu_guest_read(const struct pv_vpmu_vcpu_page *vp,
			const struct pv_vpmu_thread_page *t, unsigned int idx,
			uint64_t tsc);
/* Exits of a guest thread switch under the rule published in vp (0 or 1). */
unsigned int pmu_guest_switch_exits(const struct pv_vpmu_vcpu_page *vp,
				    const struct pv_vpmu_thread_page *out,
				    const struct pv_vpmu_thread_page *in);
/*
 * What a guest thread switch asks of the VMM under the rule published in
 * vp, with KVM's steal record `steal` (NULL for none): the guest kernel's
 * own decision, pv_vpmu_switch_step() of uapi/vpmu_guest.h.
 */
enum pv_switch_step
pmu_guest_switch_step(struct pv_vpmu_vcpu_page *vp,
		      const struct pv_vpmu_thread_page *out,
		      const struct pv_vpmu_thread_page *in,
		      const struct pv_steal_record *steal);
/*
 * A guest thread switch as the guest kernel does it, under the rule the
 * VMM published in v's page: returns the number of exits it needs.  When
 * 0 the switch is done here; otherwise the caller must perform the
 * PV_HC_PMU_SWITCH hypercall (pmu_vcpu_exit, pmu_thread_switch,
 * pmu_vcpu_enter).
 */
unsigned int pmu_guest_thread_switch(struct pmu_vcpu *v,
				     struct pv_vpmu_thread_page *out,
				     struct pv_vpmu_thread_page *in,
				     uint64_t tsc);

/*
 * The offset policy's thread hooks, for policies that differ from it only
 * at the vCPU switch points (docs/policies.md has an example).
 */
int pmu_offset_thread_out(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t);
int pmu_offset_thread_in(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t);
/*
 * The offset policy's guest half: exit for i-mode counters and for an
 * incoming configuration that is not loaded, else fold offsets.
 */
#define PMU_SWITCH_RULE_OFFSET	(PV_SWITCH_VALID | PV_SWITCH_EXIT_IMODE | \
				 PV_SWITCH_EXIT_CONFIG_ACTIVE | PV_SWITCH_FOLD)

#endif
