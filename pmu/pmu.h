/* SPDX-License-Identifier: MIT */
/*
 * libpmu: the virtual PMU, host side.  No KVM calls: the VMM routes PMU MSR
 * exits, CPUID leaf 0xA, PMU hypercalls and its vCPU run-state changes here,
 * and injects a PMI when told to.  Everything else (the architectural MSR
 * model, event sources, a-mode offsetting, i-mode save/restore, overflow)
 * happens inside, so it is unit-tested without /dev/kvm.
 *
 * Call sequence for one vCPU, all from that vCPU's thread:
 *
 *	v = pmu_vcpu(pmu, id);
 *	loop:
 *		if (pmu_vcpu_enter(v))		  before every KVM_RUN
 *			inject a PMI through LVTPC, mask LVTPC;
 *		ioctl(KVM_RUN);
 *		pmu_vcpu_exit(v, reason);	  first thing after KVM_RUN
 *		[pmu_vcpu_steal(v, ns);]	  if steal time advanced
 *		handle the exit:
 *		  PMU MSR:	 pmu_msr_read() / pmu_msr_write()
 *		  CPUID 0xA:	 pmu_cpuid_0xa() (once, at setup)
 *		  PV_HC_PMU_*: pmu_vcpu_set_page() / pmu_thread_switch()
 *		  LVTPC unmask:	 pmu_vcpu_lvtpc_unmasked()
 *
 * Counting is excluded between pmu_vcpu_exit() and pmu_vcpu_enter() by
 * the offset and saverestore policies: that is where Sum_vcpu and
 * Start_vcpu of the paper are updated and where the per-vCPU page is
 * republished.
 */
#ifndef PMU_PMU_H
#define PMU_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vpmu.h"

struct pmu;
struct pmu_vcpu;
struct pmu_source;
struct pmu_policy_ops;

/* Counting modes of a counter (PERFEVTSEL USR/OS, FIXED_CTR_CTRL USR/OS) */
#define PMU_MODE_USR	0x1u
#define PMU_MODE_OS	0x2u
#define PMU_MODE_ALL	(PMU_MODE_USR | PMU_MODE_OS)

/* PMI skids a vCPU sees before the least of them is taken for a kick's
 * way out of KVM_RUN and left out of its time counters (imode.c). */
#define PMU_SKID_LEARN	8

/* pmu_msr_read()/pmu_msr_write() result: inject #GP, not a VMM error. */
#define PMU_MSR_OK	0
#define PMU_MSR_GP	1

/*
 * Clocks, replaceable by tests.  tsc() is the physical value of the tsc
 * source (default: rdtsc); ns() timestamps vmm-time (default:
 * CLOCK_MONOTONIC).
 */
struct pmu_clock {
	uint64_t (*tsc)(void *arg);
	uint64_t (*ns)(void *arg);
	void *arg;
};

struct pmu_config {
	const char *source;	/* "tsc", "step", "perf" or "fake" */
	const char *policy;	/* "offset", "saverestore", "raw", ... */
	unsigned int nr_vcpus;
	uint64_t tsc_khz;	/* KVM_GET_TSC_KHZ: steal ns -> cycles */
	const struct pmu_clock *clock;	/* NULL: the real clocks */
	/*
	 * Use this policy instead of looking .policy up in the table: for
	 * prototyping a policy out of tree, and for tests.
	 */
	const struct pmu_policy_ops *policy_ops;
};

/*
 * Create the PMU of one VM.  Returns 0, or -errno with *err set to a
 * one-line reason (unknown source/policy, perf_event_open denied...).
 */
int pmu_create(const struct pmu_config *cfg, struct pmu **out,
	       const char **err);
void pmu_destroy(struct pmu *pmu);

struct pmu_vcpu *pmu_vcpu(struct pmu *pmu, unsigned int id);
const char *pmu_source_name(const struct pmu *pmu);
const char *pmu_policy_name(const struct pmu *pmu);
uint32_t pmu_policy_id(const struct pmu *pmu);
uint32_t pmu_source_id(const struct pmu *pmu);
struct pmu_source *pmu_active_source(struct pmu *pmu);

/* ---- MSRs ---- */

struct pmu_msr_range {
	uint32_t base;
	uint32_t count;
};

/*
 * The MSR ranges to hand to KVM_X86_SET_MSR_FILTER as "deny" (so they come
 * to userspace), covering every architectural PMU slot, including the ones
 * we do not offer, which pmu_msr_*() answer with #GP.
 */
const struct pmu_msr_range *pmu_msr_ranges(size_t *n);
bool pmu_msr_is_pmu(uint32_t msr);

/* Guest rdmsr/wrmsr of a PMU MSR: PMU_MSR_OK or PMU_MSR_GP. */
int pmu_msr_read(struct pmu_vcpu *v, uint32_t msr, uint64_t *val);
int pmu_msr_write(struct pmu_vcpu *v, uint32_t msr, uint64_t val);
/* PV_HC_PMU_REARM (uapi/vpmu.h): a PMI handler's ack, read and re-arm. */
int64_t pmu_pmi_rearm(struct pmu_vcpu *v, uint64_t idx, uint64_t period,
		      uint64_t ack);

/* ---- CPUID ---- */

struct pmu_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/* Leaf 0xA for the active source (identical for every vCPU). */
void pmu_cpuid_0xa(const struct pmu *pmu, struct pmu_cpuid_regs *r);
/*
 * Leaf 1: sets ECX.PDCM since we offer IA32_PERF_CAPABILITIES, and on an
 * Intel CPU (intel) the model of PV_CPUID1_EAX_PMU_MODEL, on an AMD one
 * newer than Zen 4 a Zen 3's, PV_CPUID1_EAX_AMD_PMU_MODEL, if user code's
 * CPUID traps to this table too (user_traps; pmu/cpuid.c).
 */
void pmu_cpuid_fixup_leaf1(struct pmu_cpuid_regs *r, bool intel,
			   bool user_traps);
/*
 * Whether programs whose CPUID (leaf 0 EBX, leaf 1 EAX) is not the VMM's
 * table must be told libpfm4's PMU: an AMD family newer than Zen 4.
 */
bool pmu_cpuid_pfm_must_force(uint32_t leaf0_ebx, uint32_t leaf1_eax);

/* ---- vCPU run state (a-mode Sum_vcpu/Start_vcpu, i-mode save/restore) ---- */

/* Why the vCPU left guest mode; counted by the vmexits* events. */
enum pmu_exit_reason {
	PMU_EXIT_MSR = PV_EXIT_MSR,
	PMU_EXIT_IO = PV_EXIT_IO,
	PMU_EXIT_MMIO = PV_EXIT_MMIO,
	PMU_EXIT_HLT = PV_EXIT_HLT,
	PMU_EXIT_HYPERCALL = PV_EXIT_HYPERCALL,
	PMU_EXIT_OTHER = PV_EXIT_OTHER,
};

/*
 * The vCPU stopped running guest code (deschedule point): counts the exit,
 * lets the policy stop or fold the counters, detects overflow.
 */
void pmu_vcpu_exit(struct pmu_vcpu *v, enum pmu_exit_reason reason);

/*
 * Where the guest is at this exit (its rip, and whether in kernel code),
 * before pmu_vcpu_exit(): an overflow found now raises its PMI with this
 * place (the vCPU page's pmi_ip).
 */
void pmu_vcpu_exit_ip(struct pmu_vcpu *v, uint64_t ip, bool kernel);

/*
 * The vCPU is about to run guest code (resume point): restarts counting,
 * re-arms overflow deadlines, republishes the per-vCPU page.  Returns true
 * when a PMI must be injected now (see pmu_vcpu_take_pmi()).
 */
bool pmu_vcpu_enter(struct pmu_vcpu *v);

/*
 * The host took `ns` of the vCPU's run time (KVM steal time, or the
 * thread's schedstat run delay) since the last report.  Call between
 * pmu_vcpu_exit() and pmu_vcpu_enter().  Time-based counters (tsc source)
 * drop it, clamped to what they counted since the last resume; the steal
 * event counts it.
 */
void pmu_vcpu_steal(struct pmu_vcpu *v, uint64_t ns);

/*
 * step source, CPL0: whether a running counter counts kernel instructions
 * or branches, which the VMM then steps with KVM_GUESTDBG_SINGLESTEP (this
 * KVM steps only CPL0 code, which it emulates; the guest kernel steps user
 * code).  pmu_vcpu_kernel_step() counts one retired CPL0 instruction and
 * returns whether a counter reached its overflow point: only then does the
 * KVM_EXIT_DEBUG need pmu_vcpu_exit()/enter().  Other step exits leave the
 * vCPU "in guest": an exit and publish per instruction would also make
 * every seqlock read in the guest kernel retry forever.
 */
bool pmu_vcpu_wants_kernel_step(const struct pmu_vcpu *v);
/* Does the guest kernel single-step user code here (the published flag)? */
bool pmu_vcpu_user_stepping(const struct pmu_vcpu *v);
bool pmu_vcpu_kernel_step(struct pmu_vcpu *v, bool branch);
/* The TSC ticks one such step, or a block trap pmu/ did not see, took
 * beyond the program's own run (its exit, the VMM's time): the step
 * source's cycles leave them out, by the mode the guest's mode clock is in
 * (kstep_ticks_* in the vCPU page). */
void pmu_vcpu_kernel_step_cost(struct pmu_vcpu *v, uint64_t ticks);
/* The ticks a quiet exit's cost is booked against up to `tsc`: the mode
 * clock's user time while it runs (block traps come from user code), else
 * the TSC.  A booking never exceeds what they gained in its trip. */
uint64_t pmu_vcpu_booked_tsc(const struct pmu_vcpu *v, uint64_t tsc);

/* Add to a virtual event the VMM counts itself (PV_EVENT_IRQS, ...). */
void pmu_vcpu_count(struct pmu_vcpu *v, uint16_t event, uint64_t delta);

/*
 * Returns true once per PMI the guest must get now, and models LVTPC's
 * mask-on-delivery: no further PMI is requested until the caller reports
 * that the guest unmasked LVTPC.  Overflows meanwhile still set
 * IA32_PERF_GLOBAL_STATUS (the guest handler loops on it, as on hardware).
 */
bool pmu_vcpu_take_pmi(struct pmu_vcpu *v);
void pmu_vcpu_lvtpc_unmasked(struct pmu_vcpu *v);

/*
 * Earliest TSC value at which an armed counter of a time-based source
 * overflows (arm a host timer that kicks the vCPU out of KVM_RUN then).
 * False when nothing is armed.
 */
bool pmu_vcpu_timer_deadline(struct pmu_vcpu *v, uint64_t *tsc);

/* ---- Hypercalls ---- */

/*
 * PV_HC_PMU_VCPU_PAGE: `page` is the host mapping of the guest page.  The
 * page is written at every pmu_vcpu_enter() until pmu_destroy() (or a new
 * call with NULL).
 */
void pmu_vcpu_set_page(struct pmu_vcpu *v, struct pv_vpmu_vcpu_page *page);
/* The page registered for v, NULL before. */
struct pv_vpmu_vcpu_page *pmu_vcpu_page(struct pmu_vcpu *v);
/*
 * The step source counts user code by basic blocks (PV_STEP_BLOCKS in the
 * pages' step.enable), which the VMM must then serve (PV_BP_PORT,
 * PV_HC_STEP_*), instead of one single-step trap per instruction.
 */
void pmu_set_step_blocks(struct pmu *pmu, bool on);

/*
 * PV_HC_PMU_SWITCH: guest thread switch, `out` suspended and `in` resumed
 * (host mappings of their thread pages, either may be NULL).  Calls the
 * policy's thread hooks.  Returns 0 or -EINVAL (invalid configuration in
 * `in`: nothing is loaded, the hypercall fails).
 */
int pmu_thread_switch(struct pmu_vcpu *v, struct pv_vpmu_thread_page *out,
		      struct pv_vpmu_thread_page *in);

/* ---- Statistics (benchmarks: exits per context switch) ---- */

struct pmu_vcpu_stats {
	uint64_t exits;		/* pmu_vcpu_exit() calls */
	uint64_t msr_traps;	/* pmu_msr_read/write() calls */
	uint64_t switch_hcalls;	/* pmu_thread_switch() calls */
	uint64_t guest_switches;	/* switches done by the guest model */
	/* the guest's own count of its counted switches (the vCPU page's
	 * guest.switches), which a switch rule's period divides */
	uint64_t guest_switch_count;
	uint64_t overflows;
	uint64_t pmis;		/* PMIs requested */
	uint64_t carried;	/* overflows moved to a switched-out thread */
	uint64_t redelivered;	/* ... and raised again when it resumed */
};
void pmu_vcpu_get_stats(const struct pmu_vcpu *v, struct pmu_vcpu_stats *s);

/* ---- Events ---- */

/* perf-style names: "instructions", "vmexits.msr", ... -> PV_EVENT(). */
int pmu_event_lookup(const char *name, uint16_t *event);
const char *pmu_event_name(uint16_t event);
/* Can this PMU count `event` in `mode` (PMU_MODE_*)?  perf's <not supported>. */
bool pmu_event_supported(struct pmu *pmu, uint16_t event, unsigned int mode);

/*
 * Value of virtual counter `idx` as the guest would read it now (tests,
 * `vmm stat` at the end of a run).
 */
uint64_t pmu_vcpu_counter(struct pmu_vcpu *v, unsigned int idx);

#endif
