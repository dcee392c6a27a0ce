/* SPDX-License-Identifier: MIT */
/*
 * libpmu internals shared by its files (not by the VMM).
 */
#ifndef PMU_INTERNAL_H
#define PMU_INTERNAL_H

#include "pmu.h"
#include "policy.h"
#include "source.h"
#include "vpmu_guest.h"

#define PMU_NR		PV_VPMU_NR_COUNTERS
#define PMU_VIRT_SLOTS	64	/* virtual event totals, by umask */

struct pmu_counter {
	/* GP: the PERFEVTSEL value; fixed: its 4-bit FIXED_CTR_CTRL field */
	uint64_t ctl;
	uint16_t event;		/* PV_EVENT() */
	unsigned int mode;	/* PMU_MODE_* */
	struct pmu_source *src;	/* NULL: no source can count it */
	bool enabled;		/* local + global enable, and countable */
	bool interrupt;		/* INT / PMI bit */
	bool running;		/* accounting Phys - start now */
	bool armed;		/* an overflow deadline is armed */
	uint64_t sum;		/* Sum_vcpu: value when last folded, masked */
	uint64_t start;		/* Start_vcpu: Phys when last folded/started */
	uint64_t run_events;	/* counted since the last start (steal clamp) */
};

struct pmu_vcpu {
	struct pmu *pmu;
	unsigned int id;
	struct pmu_counter ctr[PMU_NR];
	uint64_t fixed_ctrl;
	uint64_t global_ctrl;
	uint64_t global_status;
	uint64_t config_id;	/* of the loaded thread config, 0: unknown */
	bool paused;		/* the policy stopped counting */
	bool in_guest;		/* between enter and exit */
	bool pmi_pending;	/* an INT overflow wants a PMI */
	bool lvtpc_masked;	/* a PMI was delivered, LVTPC not unmasked */
	bool frozen;		/* a PMI was delivered, not yet acknowledged */
	uint64_t pmi_skid;	/* time counted past the PMI's overflow */
	uint64_t pmi_skid_least; /* the least such: a kick's way out */
	unsigned int pmi_skids;	/* skids seen, up to PMU_SKID_LEARN */
	uint64_t freeze_tsc;	/* when the freeze began, */
	uint64_t freeze_steal_ns; /* and steal_ns then */
	bool exit_kernel;	/* pmu_vcpu_exit_ip(): this exit's mode, */
	uint64_t exit_ip;	/* and rip */
	bool pmi_kernel;	/* the same, at the exit that made */
	uint64_t pmi_ip;	/* pmi_pending (the vCPU page's pmi_ip) */
	uint64_t virt[PMU_VIRT_SLOTS];
	uint64_t exit_ns;
	uint64_t steal_ns;	/* KVM steal time accounted so far */
	uint64_t resumes;
	struct pv_vpmu_vcpu_page *page;
	struct pmu_vcpu_stats stats;
};

struct pmu {
	const struct pmu_policy_ops *policy;
	struct pmu_source *src;		/* the active source */
	struct pmu_source *virt;	/* virtual events */
	struct pmu_clock clock;
	uint64_t tsc_khz;
	unsigned int nr_vcpus;
	struct pmu_vcpu *vcpus;
	bool step_blocks;		/* pmu_set_step_blocks() */
};

static inline uint64_t pmu_status_bit(unsigned int idx)
{
	return pv_vpmu_global_bit(idx);
}

static inline uint64_t pmu_global_valid(void)
{
	return ((1ull << PV_VPMU_NR_GP) - 1) |
		(((1ull << PV_VPMU_NR_FIXED) - 1) << PV_GLOBAL_FIXED_SHIFT);
}

/* event.c */
bool pmu_event_is_virt(uint16_t event);
uint16_t pmu_arch_event(unsigned int bit);	/* by CPUID.0AH:EBX bit */
uint16_t pmu_fixed_event(unsigned int j);
struct pmu_source *pmu_event_source(struct pmu *pmu, uint16_t event,
				    unsigned int mode);

/* amode.c: Sum_vcpu/Start_vcpu bookkeeping and the page */
uint64_t pmu_counter_phys(struct pmu_vcpu *v, unsigned int idx);
void pmu_counter_fold(struct pmu_vcpu *v, unsigned int idx);
void pmu_counter_update(struct pmu_vcpu *v, unsigned int idx);
void pmu_vcpu_fold_all(struct pmu_vcpu *v);
bool pmu_counter_counts_time(const struct pmu_counter *c);
void pmu_vcpu_drop_time(struct pmu_vcpu *v, uint64_t cycles);
void pmu_vcpu_publish(struct pmu_vcpu *v);

/* imode.c: deadlines and overflow */
void pmu_counter_arm(struct pmu_vcpu *v, unsigned int idx);
void pmu_counter_disarm(struct pmu_vcpu *v, unsigned int idx);
void pmu_counter_overflowed(struct pmu_vcpu *v, unsigned int idx,
			    uint64_t n);
void pmu_vcpu_thaw(struct pmu_vcpu *v);

/* msr.c: recompute the derived state of counter idx after a change */
void pmu_counter_reprogram(struct pmu_vcpu *v, unsigned int idx);

/* The sequence protocol of the shared pages, as the guest writes it. */
static inline void pmu_seq_begin(uint32_t *seq)
{
	pv_seq_write_begin(seq);
}

static inline void pmu_seq_end(uint32_t *seq)
{
	pv_seq_write_end(seq);
}

#endif
