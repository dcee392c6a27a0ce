// SPDX-License-Identifier: MIT
/*
 * One PMU per VM: its sources, its policy, its vCPUs, and the run-state
 * entry points the VMM calls around KVM_RUN.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

static uint64_t clock_ns_default(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_tsc_default(void *arg)
{
#if defined(__x86_64__) || defined(__i386__)
	(void)arg;
	return __rdtsc();
#else
	return clock_ns_default(arg);
#endif
}

int pmu_create(const struct pmu_config *cfg, struct pmu **out,
	       const char **err)
{
	const struct pmu_source_ops *sops;
	struct pmu *pmu;
	int ret;

	*out = NULL;
	*err = NULL;
	if (!cfg->nr_vcpus || cfg->nr_vcpus > 4096) {
		*err = "bad number of vCPUs";
		return -EINVAL;
	}
	pmu = calloc(1, sizeof(*pmu));
	if (!pmu) {
		*err = "out of memory";
		return -ENOMEM;
	}
	pmu->nr_vcpus = cfg->nr_vcpus;
	pmu->tsc_khz = cfg->tsc_khz;
	pmu->clock.tsc = clock_tsc_default;
	pmu->clock.ns = clock_ns_default;
	if (cfg->clock) {
		if (cfg->clock->tsc)
			pmu->clock.tsc = cfg->clock->tsc;
		if (cfg->clock->ns)
			pmu->clock.ns = cfg->clock->ns;
		pmu->clock.arg = cfg->clock->arg;
	}

	ret = -EINVAL;
	pmu->policy = cfg->policy_ops ? cfg->policy_ops :
		pmu_policy_lookup(cfg->policy ? cfg->policy : "offset");
	if (!pmu->policy) {
		*err = "unknown policy";
		goto fail;
	}
	/* The guest refuses a page without a valid rule: fail here first. */
	if (!pv_switch_rule_ok(pmu->policy->switch_rule)) {
		*err = "policy has no valid guest switch rule";
		goto fail;
	}
	sops = pmu_source_lookup(cfg->source ? cfg->source : "tsc");
	if (!sops) {
		*err = "unknown event source";
		goto fail;
	}
	pmu->vcpus = calloc(cfg->nr_vcpus, sizeof(*pmu->vcpus));
	if (!pmu->vcpus) {
		*err = "out of memory";
		ret = -ENOMEM;
		goto fail;
	}
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++) {
		pmu->vcpus[i].pmu = pmu;
		pmu->vcpus[i].id = i;
		/* Not running guest code until the first enter. */
		pmu->vcpus[i].paused = true;
	}
	ret = sops->create(pmu, &pmu->src, err);
	if (ret)
		goto fail;
	ret = pmu_source_virt.create(pmu, &pmu->virt, err);
	if (ret)
		goto fail;
	*out = pmu;
	return 0;
fail:
	pmu_destroy(pmu);
	return ret;
}

void pmu_destroy(struct pmu *pmu)
{
	if (!pmu)
		return;
	if (pmu->src)
		pmu->src->ops->destroy(pmu->src);
	if (pmu->virt)
		pmu->virt->ops->destroy(pmu->virt);
	free(pmu->vcpus);
	free(pmu);
}

struct pmu_vcpu *pmu_vcpu(struct pmu *pmu, unsigned int id)
{
	return id < pmu->nr_vcpus ? &pmu->vcpus[id] : NULL;
}

unsigned int pmu_vcpu_id(const struct pmu_vcpu *v)
{
	return v->id;
}

const char *pmu_source_name(const struct pmu *pmu)
{
	return pmu->src->ops->name;
}

const char *pmu_policy_name(const struct pmu *pmu)
{
	return pmu->policy->name;
}

uint32_t pmu_policy_id(const struct pmu *pmu)
{
	return pmu->policy->id;
}

uint32_t pmu_source_id(const struct pmu *pmu)
{
	return pmu->src->ops->id;
}

struct pmu_source *pmu_active_source(struct pmu *pmu)
{
	return pmu->src;
}

void pmu_vcpu_exit(struct pmu_vcpu *v, enum pmu_exit_reason reason)
{
	v->stats.exits++;
	v->virt[PV_EXIT_ALL]++;
	v->virt[reason % PMU_VIRT_SLOTS]++;
	v->exit_ns = v->pmu->clock.ns(v->pmu->clock.arg);
	v->in_guest = false;
	v->pmu->policy->vcpu_deschedule(v);
	/* Whatever still runs (raw, virtual events) is checked for wrap. */
	pmu_vcpu_fold_all(v);
}

void pmu_vcpu_exit_ip(struct pmu_vcpu *v, uint64_t ip, bool kernel)
{
	v->exit_ip = ip;
	v->exit_kernel = kernel;
}

bool pmu_vcpu_enter(struct pmu_vcpu *v)
{
	bool pmi;

	if (v->pmu->src->ops->vcpu_enter)
		v->pmu->src->ops->vcpu_enter(v->pmu->src, v);
	if (!v->in_guest && v->stats.exits)
		v->virt[PV_EVENT_VMM_TIME >> 8] +=
			v->pmu->clock.ns(v->pmu->clock.arg) - v->exit_ns;
	/* Off-CPU counters pick up this exit's vmm-time and steal. */
	pmu_vcpu_fold_all(v);
	/* Before the resume: a PMI now freezes what would restart. */
	pmi = pmu_vcpu_take_pmi(v);
	v->pmu->policy->vcpu_resume(v);
	v->in_guest = true;
	v->resumes++;
	pmu_vcpu_publish(v);
	return pmi;
}

void pmu_vcpu_steal(struct pmu_vcpu *v, uint64_t ns)
{
	uint64_t cycles = (uint64_t)((unsigned __int128)ns * v->pmu->tsc_khz /
				     1000000u);

	v->virt[PV_EVENT_STEAL >> 8] += ns;
	v->steal_ns += ns;
	pmu_vcpu_drop_time(v, cycles);
	/* Dropped here, the steal is no part of a pending PMI's skid: taken
	 * again at the PMI, it left a group leader short by as much. */
	v->pmi_skid -= v->pmi_skid < cycles ? v->pmi_skid : cycles;
}

void pmu_vcpu_count(struct pmu_vcpu *v, uint16_t event, uint64_t delta)
{
	if (pmu_event_is_virt(event))
		v->virt[(event >> 8) % PMU_VIRT_SLOTS] += delta;
}

bool pmu_vcpu_user_stepping(const struct pmu_vcpu *v)
{
	return v->page && (v->page->step.enable & 1);
}

bool pmu_vcpu_wants_kernel_step(const struct pmu_vcpu *v)
{
	for (unsigned int i = 0; i < PMU_NR; i++) {
		const struct pmu_counter *c = &v->ctr[i];

		/* The step source's cycles are time: stepping the kernel
		 * for them only slowed it (130 exits a system call). */
		if (c->running && c->src && c->src->ops->kernel_step &&
		    (c->mode & PMU_MODE_OS) && !pmu_counter_counts_time(c))
			return true;
	}
	return false;
}

void pmu_vcpu_kernel_step_cost(struct pmu_vcpu *v, uint64_t ticks)
{
	if (!v->page)
		return;
	if (pmu_vcpu_mode_now(v) == PMU_MODE_USR)
		v->page->kstep_ticks_user += ticks;
	else
		v->page->kstep_ticks_kernel += ticks;
}

uint64_t pmu_vcpu_booked_tsc(const struct pmu_vcpu *v, uint64_t tsc)
{
	if (!v->page || !v->page->guest.clock_on)
		return tsc;
	return pv_vpmu_user_time(v->page, tsc, v->steal_ns);
}

bool pmu_vcpu_kernel_step(struct pmu_vcpu *v, bool branch)
{
	struct pmu_source *s = v->pmu->src;

	return s->ops->kernel_step && s->ops->kernel_step(s, v, branch);
}

void pmu_vcpu_set_page(struct pmu_vcpu *v, struct pv_vpmu_vcpu_page *page)
{
	v->page = page;
	pmu_vcpu_publish(v);
}

struct pv_vpmu_vcpu_page *pmu_vcpu_page(struct pmu_vcpu *v)
{
	return v->page;
}

void pmu_set_step_blocks(struct pmu *pmu, bool on)
{
	pmu->step_blocks = on;
}

int pmu_thread_switch(struct pmu_vcpu *v, struct pv_vpmu_thread_page *out,
		      struct pv_vpmu_thread_page *in)
{
	const struct pmu_policy_ops *pol = v->pmu->policy;
	int ret = 0;

	v->stats.switch_hcalls++;
	if (out) {
		pmu_thread_write_begin(out);
		ret = pol->thread_out(v, out);
		pmu_thread_write_end(out);
	}
	if (in && !ret) {
		pmu_thread_write_begin(in);
		ret = pol->thread_in(v, in);
		in->smp_id = v->id;
		pmu_thread_write_end(in);
	}
	return ret;
}

void pmu_thread_write_begin(struct pv_vpmu_thread_page *t)
{
	pmu_seq_begin(&t->seq);
}

void pmu_thread_write_end(struct pv_vpmu_thread_page *t)
{
	pmu_seq_end(&t->seq);
}

void pmu_vcpu_get_stats(const struct pmu_vcpu *v, struct pmu_vcpu_stats *s)
{
	*s = v->stats;
	s->guest_switch_count = v->page ? v->page->guest.switches : 0;
}
