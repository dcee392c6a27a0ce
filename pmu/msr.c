// SPDX-License-Identifier: MIT
/*
 * The architectural PMU, version 2, as the guest's rdmsr/wrmsr see it
 * (Intel SDM vol. 3B, 20.2.1-20.2.2).  Every guest error is a #GP for the
 * caller to inject, never a VMM error: a guest must not be able to stop
 * the VMM by poking MSRs.
 */
#include <errno.h>

#include "internal.h"
#include "vpmu_guest.h"

#define FIXED_CTRL_VALID	((1ull << (4 * PV_VPMU_NR_FIXED)) - 1)
#define FIXED_CTRL_ANY_BITS	(0x444ull & FIXED_CTRL_VALID)
#define OVF_CTRL_VALID	(pmu_global_valid() | PV_GLOBAL_OVF_BUF | \
			 PV_GLOBAL_COND_CHGD)

/*
 * Every architectural slot, offered or not, so that the unoffered ones
 * trap to us and raise #GP rather than reach the host's (absent) PMU.
 */
static const struct pmu_msr_range msr_ranges[] = {
	{ PV_MSR_IA32_PMC0, PV_MSR_PMC_SLOTS },
	{ PV_MSR_IA32_PERFEVTSEL0, PV_MSR_PMC_SLOTS },
	{ PV_MSR_IA32_FIXED_CTR0, PV_MSR_FIXED_SLOTS },
	{ PV_MSR_IA32_PERF_CAPABILITIES, 1 },
	/* FIXED_CTR_CTRL .. GLOBAL_OVF_CTRL, then v4's STATUS_SET, INUSE */
	{ PV_MSR_IA32_FIXED_CTR_CTRL, 6 },
	{ PV_MSR_IA32_A_PMC0, PV_MSR_PMC_SLOTS },
};

const struct pmu_msr_range *pmu_msr_ranges(size_t *n)
{
	*n = sizeof(msr_ranges) / sizeof(msr_ranges[0]);
	return msr_ranges;
}

bool pmu_msr_is_pmu(uint32_t msr)
{
	for (size_t i = 0; i < sizeof(msr_ranges) / sizeof(msr_ranges[0]); i++) {
		if (msr - msr_ranges[i].base < msr_ranges[i].count)
			return true;
	}
	return false;
}

/* Is msr in [base, base + n)?  Sets *idx to its offset. */
static bool msr_in(uint32_t msr, uint32_t base, uint32_t n, unsigned int *idx)
{
	if (msr - base >= n)
		return false;
	*idx = msr - base;
	return true;
}

/* The counter's configuration as the MSRs now say. */
struct counter_cfg {
	uint16_t event;
	unsigned int mode;
	bool interrupt;
	bool enabled;
	struct pmu_source *src;
};

static void counter_decode(struct pmu_vcpu *v, unsigned int idx,
			   struct counter_cfg *cfg)
{
	const struct pmu_counter *c = &v->ctr[idx];
	bool local_en, countable = true;

	if (idx < PV_VPMU_NR_GP) {
		cfg->event = PV_EVENT(c->ctl & PV_EVTSEL_EVENT_MASK,
				      (c->ctl & PV_EVTSEL_UMASK_MASK) >>
				      PV_EVTSEL_UMASK_SHIFT);
		cfg->mode = (c->ctl & PV_EVTSEL_USR ? PMU_MODE_USR : 0) |
			(c->ctl & PV_EVTSEL_OS ? PMU_MODE_OS : 0);
		cfg->interrupt = c->ctl & PV_EVTSEL_INT;
		local_en = c->ctl & PV_EVTSEL_EN;
		/*
		 * No source models edge detect, inversion or thresholds: such
		 * a counter would count something else, so it counts nothing.
		 */
		if (c->ctl & (PV_EVTSEL_EDGE | PV_EVTSEL_INV |
			      PV_EVTSEL_CMASK_MASK))
			countable = false;
	} else {
		cfg->event = pmu_fixed_event(idx - PV_VPMU_NR_GP);
		cfg->mode = (c->ctl & PV_FIXED_CTRL_USR ? PMU_MODE_USR : 0) |
			(c->ctl & PV_FIXED_CTRL_OS ? PMU_MODE_OS : 0);
		cfg->interrupt = c->ctl & PV_FIXED_CTRL_PMI;
		local_en = cfg->mode != 0;
	}
	local_en = local_en && cfg->mode && (v->global_ctrl & pmu_status_bit(idx));
	cfg->src = NULL;
	if (countable && cfg->mode)
		cfg->src = pmu_event_source(v->pmu, cfg->event, cfg->mode);
	cfg->enabled = local_en && cfg->src;
}

void pmu_counter_reprogram(struct pmu_vcpu *v, unsigned int idx)
{
	struct pmu_counter *c = &v->ctr[idx];
	struct counter_cfg cfg;

	counter_decode(v, idx, &cfg);
	if (cfg.event == c->event && cfg.mode == c->mode &&
	    cfg.interrupt == c->interrupt && cfg.enabled == c->enabled &&
	    cfg.src == c->src)
		return;
	/* Account what the old configuration counted, then switch. */
	if (c->running) {
		pmu_counter_fold(v, idx);
		pmu_counter_disarm(v, idx);
		c->running = false;
	}
	c->event = cfg.event;
	c->mode = cfg.mode;
	c->interrupt = cfg.interrupt;
	c->enabled = cfg.enabled;
	c->src = cfg.src;
	pmu_counter_update(v, idx);
}

static void reprogram_all(struct pmu_vcpu *v)
{
	for (unsigned int i = 0; i < PMU_NR; i++)
		pmu_counter_reprogram(v, i);
}

int pmu_msr_read(struct pmu_vcpu *v, uint32_t msr, uint64_t *val)
{
	unsigned int i;

	v->stats.msr_traps++;
	if (msr_in(msr, PV_MSR_IA32_PMC0, PV_VPMU_NR_GP, &i) ||
	    msr_in(msr, PV_MSR_IA32_A_PMC0, PV_VPMU_NR_GP, &i)) {
		*val = pmu_vcpu_counter(v, i);
	} else if (msr_in(msr, PV_MSR_IA32_PERFEVTSEL0, PV_VPMU_NR_GP, &i)) {
		*val = v->ctr[i].ctl;
	} else if (msr_in(msr, PV_MSR_IA32_FIXED_CTR0, PV_VPMU_NR_FIXED, &i)) {
		*val = pmu_vcpu_counter(v, PV_VPMU_FIXED_IDX(i));
	} else if (msr == PV_MSR_IA32_FIXED_CTR_CTRL) {
		*val = v->fixed_ctrl;
	} else if (msr == PV_MSR_IA32_PERF_GLOBAL_STATUS) {
		/* Counters still running (raw, virtual events) may have
		 * wrapped since the last exit. */
		pmu_vcpu_fold_all(v);
		*val = v->global_status;
	} else if (msr == PV_MSR_IA32_PERF_GLOBAL_CTRL) {
		*val = v->global_ctrl;
	} else if (msr == PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL) {
		*val = 0;
	} else if (msr == PV_MSR_IA32_PERF_CAPABILITIES) {
		*val = PV_PERF_CAP_FW_WRITE;
	} else {
		return PMU_MSR_GP;
	}
	return PMU_MSR_OK;
}

int pmu_msr_write(struct pmu_vcpu *v, uint32_t msr, uint64_t val)
{
	unsigned int i;

	v->stats.msr_traps++;
	if (msr_in(msr, PV_MSR_IA32_PMC0, PV_VPMU_NR_GP, &i)) {
		/* Legacy writes carry 32 bits, sign-extended to the width. */
		pmu_counter_set(v, i, (uint64_t)(int64_t)(int32_t)val);
	} else if (msr_in(msr, PV_MSR_IA32_A_PMC0, PV_VPMU_NR_GP, &i)) {
		if (val & ~PV_VPMU_MASK)
			return PMU_MSR_GP;
		pmu_counter_set(v, i, val);
	} else if (msr_in(msr, PV_MSR_IA32_PERFEVTSEL0, PV_VPMU_NR_GP, &i)) {
		if (val & PV_EVTSEL_RESERVED)
			return PMU_MSR_GP;
		if (v->ctr[i].ctl != val)
			v->config_id = 0;
		v->ctr[i].ctl = val;
		pmu_counter_reprogram(v, i);
	} else if (msr_in(msr, PV_MSR_IA32_FIXED_CTR0, PV_VPMU_NR_FIXED, &i)) {
		if (val & ~PV_VPMU_MASK)
			return PMU_MSR_GP;
		pmu_counter_set(v, PV_VPMU_FIXED_IDX(i), val);
	} else if (msr == PV_MSR_IA32_FIXED_CTR_CTRL) {
		if (val & (~FIXED_CTRL_VALID | FIXED_CTRL_ANY_BITS))
			return PMU_MSR_GP;
		if (v->fixed_ctrl != val)
			v->config_id = 0;
		v->fixed_ctrl = val;
		for (i = 0; i < PV_VPMU_NR_FIXED; i++) {
			v->ctr[PV_VPMU_FIXED_IDX(i)].ctl =
				PV_FIXED_CTRL_FIELD(val, i);
			pmu_counter_reprogram(v, PV_VPMU_FIXED_IDX(i));
		}
	} else if (msr == PV_MSR_IA32_PERF_GLOBAL_CTRL) {
		if (val & ~pmu_global_valid())
			return PMU_MSR_GP;
		if (v->global_ctrl != val)
			v->config_id = 0;
		v->global_ctrl = val;
		pmu_vcpu_thaw(v);
		reprogram_all(v);
	} else if (msr == PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL) {
		if (val & ~OVF_CTRL_VALID)
			return PMU_MSR_GP;
		v->global_status &= ~val;
		pmu_vcpu_thaw(v);
	} else {
		/* Includes GLOBAL_STATUS and PERF_CAPABILITIES: read-only. */
		return PMU_MSR_GP;
	}
	return PMU_MSR_OK;
}

/*
 * The freeze hides the handler's time from a time counter, and with it
 * from the re-arm rule, which backs off by the skid: a period shorter than
 * the handler then overflowed again in the handler's own unfrozen tail,
 * and PMIs came one after another at one user RIP for ever.  So a skid
 * that, with the handler's frozen time, reaches the period is read with
 * that time, as if counted: the rule backs off past the handler.  Host
 * preemption is not the handler's: steal seen since is left out, and the
 * time is bounded (steal shows only at a later exit; 0.3 s of it once put
 * the next sample past the program's end).
 */
#define PMU_PMI_HELD_MAX	(1ull << 22)	/* TSC ticks, ~1.6 ms at 2.6 GHz */

static uint64_t pmu_pmi_backoff(struct pmu_vcpu *v, unsigned int idx,
				uint64_t pmc, uint64_t period)
{
	uint64_t held, steal, skid = pv_vpmu_delta(pmc, 0);

	if (!v->frozen || !pmu_counter_counts_time(&v->ctr[idx]))
		return pmc;
	held = v->pmu->clock.tsc(v->pmu->clock.arg) - v->freeze_tsc;
	steal = (v->steal_ns - v->freeze_steal_ns) * v->pmu->tsc_khz / 1000000;
	held = held > steal ? held - steal : 0;
	if (held > PMU_PMI_HELD_MAX)
		held = PMU_PMI_HELD_MAX;
	if (skid + held < period)
		return pmc;
	return (skid + held) & PV_VPMU_MASK;
}

/*
 * What GLOBAL_OVF_CTRL, a counter read and a full-width counter write do,
 * as one exit: on kvm_pvm each MSR access from the guest kernel is an
 * exit to the VMM, three of them in every PMI.  Not counted as MSR traps.
 */
int64_t pmu_pmi_rearm(struct pmu_vcpu *v, uint64_t idx, uint64_t period,
		      uint64_t ack)
{
	uint64_t pmc, dist;

	if (idx >= PV_VPMU_NR_GP || (ack & ~OVF_CTRL_VALID))
		return -EINVAL;
	v->global_status &= ~ack;
	pmc = pmu_vcpu_counter(v, idx);
	dist = pv_vpmu_rearm_dist(pmu_pmi_backoff(v, idx, pmc, period), period);
	pmu_counter_set(v, idx, pv_vpmu_before_wrap(dist));
	pmu_vcpu_thaw(v);
	return (int64_t)pmc;
}

/* ---- Configuration carried in a thread page (policies) ---- */

static bool config_valid(const struct pv_vpmu_thread_page *t)
{
	for (unsigned int i = 0; i < PV_VPMU_NR_GP; i++) {
		if (t->evtsel[i] & PV_EVTSEL_RESERVED)
			return false;
	}
	if (t->fixed_ctrl & (~FIXED_CTRL_VALID | FIXED_CTRL_ANY_BITS))
		return false;
	return !(t->global_ctrl & ~pmu_global_valid());
}

int pmu_vcpu_load_config(struct pmu_vcpu *v,
			 const struct pv_vpmu_thread_page *t)
{
	if (!config_valid(t))
		return -EINVAL;
	for (unsigned int i = 0; i < PV_VPMU_NR_GP; i++)
		v->ctr[i].ctl = t->evtsel[i];
	v->fixed_ctrl = t->fixed_ctrl;
	for (unsigned int i = 0; i < PV_VPMU_NR_FIXED; i++)
		v->ctr[PV_VPMU_FIXED_IDX(i)].ctl =
			PV_FIXED_CTRL_FIELD(t->fixed_ctrl, i);
	v->global_ctrl = t->global_ctrl;
	v->config_id = t->config_id;
	reprogram_all(v);
	return 0;
}

bool pmu_vcpu_config_equal(const struct pmu_vcpu *v,
			   const struct pv_vpmu_thread_page *t)
{
	for (unsigned int i = 0; i < PV_VPMU_NR_GP; i++) {
		if (v->ctr[i].ctl != t->evtsel[i])
			return false;
	}
	return v->fixed_ctrl == t->fixed_ctrl &&
		v->global_ctrl == t->global_ctrl;
}

/* The guest's own reading of a configuration (uapi/vpmu_guest.h). */
bool pmu_thread_counter_enabled(const struct pv_vpmu_thread_page *t,
				unsigned int idx)
{
	return pv_vpmu_thread_counter_enabled(t, idx);
}

bool pmu_thread_counter_interrupts(const struct pv_vpmu_thread_page *t,
				   unsigned int idx)
{
	return pv_vpmu_thread_counter_interrupts(t, idx);
}

bool pmu_thread_active(const struct pv_vpmu_thread_page *t)
{
	for (unsigned int i = 0; i < PMU_NR; i++) {
		if (pmu_thread_counter_enabled(t, i))
			return true;
	}
	return false;
}

bool pmu_counter_enabled(const struct pmu_vcpu *v, unsigned int idx)
{
	return v->ctr[idx].enabled;
}

bool pmu_counter_interrupts(const struct pmu_vcpu *v, unsigned int idx)
{
	return v->ctr[idx].enabled && v->ctr[idx].interrupt;
}

int pmu_vcpu_adopt_config(struct pmu_vcpu *v,
			  const struct pv_vpmu_thread_page *t)
{
	int ret;

	if (!pmu_vcpu_config_equal(v, t)) {
		ret = pmu_vcpu_load_config(v, t);
		if (ret)
			return ret;
	}
	v->config_id = t->config_id;
	return 0;
}
