/* SPDX-License-Identifier: MIT */
/*
 * Event sources: where the physical value Phys(t) of an event comes from.
 * One is active per VM (tsc, step, perf, or fake in tests); the virtual
 * source (VM exits, vmm-time, steal) is always there as well.  A counter
 * uses the first of them that can count its event.
 */
#ifndef PMU_SOURCE_H
#define PMU_SOURCE_H

#include "pmu.h"

/* struct pmu_source_ops.flags */
/* Counts time: host steal time is dropped from its counters. */
#define PMU_SRC_TIME	0x1u
/*
 * Its events happen while the vCPU is out of guest mode (VM exits,
 * vmm-time), so its counters are never paused at a deschedule.
 */
#define PMU_SRC_OFF_CPU	0x2u
/* Its cycles and ref-cycles count time (steal dropped), its other
 * events do not. */
#define PMU_SRC_TIME_CYCLES	0x4u

struct pmu_source {
	const struct pmu_source_ops *ops;
	struct pmu *pmu;
};

struct pmu_source_ops {
	const char *name;
	uint32_t id;			/* enum pv_vpmu_source_id */
	unsigned int flags;		/* PMU_SRC_* */

	int (*create)(struct pmu *pmu, struct pmu_source **out,
		      const char **err);
	void (*destroy)(struct pmu_source *s);

	/* Can it count `event` (PV_EVENT()) in `mode` (PMU_MODE_*)? */
	bool (*can_count)(const struct pmu_source *s, uint16_t event,
			  unsigned int mode);

	/*
	 * Phys(t): the current physical count of `event` on vCPU `v`,
	 * monotonic (wrapping at 2^64 only).  Called from v's thread.
	 */
	uint64_t (*read)(struct pmu_source *s, struct pmu_vcpu *v,
			 uint16_t event, unsigned int mode);

	/*
	 * How guest user code reads Phys(t) itself (enum pv_vpmu_read); for
	 * PV_VPMU_READ_STEP also the step.count[] slots it sums.  NULL means
	 * PV_VPMU_READ_TRAP.
	 */
	uint8_t (*direct)(const struct pmu_source *s, uint16_t event,
			  unsigned int mode, uint8_t *step_mask);

	/*
	 * i-mode, optional: counter `idx` of `v` overflows when Phys reaches
	 * `deadline`; make the vCPU exit at (step: exactly at) that point.
	 * disarm() cancels.  Without arm(), overflow is seen at the next exit.
	 */
	void (*arm)(struct pmu_source *s, struct pmu_vcpu *v, unsigned int idx,
		    uint16_t event, unsigned int mode, uint64_t deadline);
	void (*disarm)(struct pmu_source *s, struct pmu_vcpu *v,
		       unsigned int idx);
	/*
	 * Optional: one instruction retired in CPL0 (a branch if `branch`),
	 * seen by the VMM stepping kernel code (KVM_GUESTDBG_SINGLESTEP).
	 * Returns whether an armed counter reached its overflow point.
	 */
	bool (*kernel_step)(struct pmu_source *s, struct pmu_vcpu *v,
			    bool branch);
	/*
	 * Optional: vCPU v enters the guest, before its counters resume
	 * (paused ones are at rest: a source may change how it reads now).
	 */
	void (*vcpu_enter)(struct pmu_source *s, struct pmu_vcpu *v);
	/* Optional: PV_VPMU_READ_TSC_STEP's TSC cost per step on v. */
	uint64_t (*step_cost)(const struct pmu_source *s,
			      const struct pmu_vcpu *v);
	/* Optional: earliest armed deadline as a TSC value. */
	bool (*timer_deadline)(struct pmu_source *s, struct pmu_vcpu *v,
			       uint64_t *tsc);
};

extern const struct pmu_source_ops pmu_source_fake;
extern const struct pmu_source_ops pmu_source_tsc;
extern const struct pmu_source_ops pmu_source_step;
extern const struct pmu_source_ops pmu_source_perf;
extern const struct pmu_source_ops pmu_source_virt;

/*
 * Cycles of one mode, for the time sources: the mode clock the guest
 * kernel keeps in v's page (struct pv_vpmu_guest_cpu) splits the TSC
 * `tsc` into user and kernel time; `traps` ticks of the source's own
 * user-mode traps are left out of the user part.  pmu_mode_read() is how
 * guest code reads the same (enum pv_vpmu_read), given the read of both
 * modes.
 */
uint64_t pmu_mode_cycles(const struct pmu_vcpu *v, unsigned int mode,
			 uint64_t tsc, uint64_t traps);
uint8_t pmu_mode_read(unsigned int mode, uint8_t both);
/* The TSC at which a host timer should look whether a cycles counter of
 * mode, at count now, has reached deadline (both in its Phys units). */
uint64_t pmu_cycles_timer(const struct pmu_source *s, const struct pmu_vcpu *v,
			  unsigned int mode, uint64_t deadline, uint64_t count);
/* The earliest of the armed deadline[PMU_NR] into *tsc; false: none. */
bool pmu_timer_earliest(const uint64_t *deadline, const bool *armed,
			uint64_t *tsc);
/* The mode v's guest is in by its mode clock (PMU_MODE_OS when off). */
unsigned int pmu_vcpu_mode_now(const struct pmu_vcpu *v);

/* The selectable sources (not virt), for --source. */
const struct pmu_source_ops *pmu_source_lookup(const char *name);

/* ---- fake source: tests set Phys(t) ---- */

/* Phys of `event` on vCPU `vcpu`, both modes. */
void pmu_fake_set(struct pmu_source *s, unsigned int vcpu, uint16_t event,
		  uint64_t value);
uint64_t pmu_fake_get(struct pmu_source *s, unsigned int vcpu,
		      uint16_t event);
/*
 * Step-like advance: add up to `n` to `event`, stopping early at the
 * earliest deadline armed for it (zero skid).  Returns how much it added.
 */
uint64_t pmu_fake_advance(struct pmu_source *s, unsigned int vcpu,
			  uint16_t event, uint64_t n);
/* Events the fake source claims (default: all architectural ones). */
void pmu_fake_set_events(struct pmu_source *s, const uint16_t *events,
			 size_t n);

/* ---- perf source ---- */

/* Number of perf fds open for vCPU `vcpu` (tests). */
unsigned int pmu_perf_open_count(struct pmu_source *s, unsigned int vcpu);

#endif
