/* SPDX-License-Identifier: MIT */
/*
 * Shared fixtures of the pmu unit tests: one PMU with one or two vCPUs, a
 * page for each, a controllable clock, and shorthands for the exit/enter
 * pairs a VMM performs.
 */
#ifndef PMU_TEST_H
#define PMU_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmu.h"
#include "policy.h"
#include "source.h"

#define NR_TEST_VCPUS 2

struct fx {
	struct pmu *pmu;
	struct pmu_vcpu *v;
	struct pmu_source *src;
	struct pv_vpmu_vcpu_page *page[NR_TEST_VCPUS];
	uint64_t tsc;	/* the test clock, when the fixture installs it */
	uint64_t ns;
	struct pmu_clock clock;
};

static inline uint64_t fx_tsc(void *arg)
{
	return ((struct fx *)arg)->tsc;
}

static inline uint64_t fx_ns(void *arg)
{
	return ((struct fx *)arg)->ns;
}

static inline struct pv_vpmu_vcpu_page *fx_page_alloc(void)
{
	void *p = aligned_alloc(4096, sizeof(struct pv_vpmu_vcpu_page));

	assert_non_null(p);
	memset(p, 0, sizeof(struct pv_vpmu_vcpu_page));
	return p;
}

static inline struct pv_vpmu_thread_page *fx_thread_alloc(void)
{
	void *p = aligned_alloc(4096, sizeof(struct pv_vpmu_thread_page));

	assert_non_null(p);
	memset(p, 0, sizeof(struct pv_vpmu_thread_page));
	return p;
}

/* Create a PMU; with test_clock, TSC and ns come from fx->tsc / fx->ns. */
static inline struct fx *fx_new(const char *source, const char *policy,
				bool test_clock)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct pmu_config cfg = {
		.source = source,
		.policy = policy,
		.nr_vcpus = NR_TEST_VCPUS,
		.tsc_khz = 1000000,	/* 1 GHz: one cycle per ns */
	};
	const char *err;

	assert_non_null(f);
	f->clock.tsc = fx_tsc;
	f->clock.ns = fx_ns;
	f->clock.arg = f;
	if (test_clock)
		cfg.clock = &f->clock;
	assert_int_equal(pmu_create(&cfg, &f->pmu, &err), 0);
	f->v = pmu_vcpu(f->pmu, 0);
	f->src = pmu_active_source(f->pmu);
	for (unsigned int i = 0; i < NR_TEST_VCPUS; i++) {
		f->page[i] = fx_page_alloc();
		pmu_vcpu_set_page(pmu_vcpu(f->pmu, i), f->page[i]);
	}
	return f;
}

static inline void fx_free(struct fx *f)
{
	pmu_destroy(f->pmu);
	for (unsigned int i = 0; i < NR_TEST_VCPUS; i++)
		free(f->page[i]);
	free(f);
}

static inline void wrmsr_ok(struct pmu_vcpu *v, uint32_t msr, uint64_t val)
{
	assert_int_equal(pmu_msr_write(v, msr, val), PMU_MSR_OK);
}

static inline uint64_t rdmsr_ok(struct pmu_vcpu *v, uint32_t msr)
{
	uint64_t val = 0xdeadbeef;

	assert_int_equal(pmu_msr_read(v, msr, &val), PMU_MSR_OK);
	return val;
}

/* A full VM exit for an MSR write, as the VMM performs it. */
static inline bool trap_wrmsr(struct pmu_vcpu *v, uint32_t msr, uint64_t val)
{
	pmu_vcpu_exit(v, PMU_EXIT_MSR);
	wrmsr_ok(v, msr, val);
	return pmu_vcpu_enter(v);
}

static inline uint64_t trap_rdmsr(struct pmu_vcpu *v, uint32_t msr)
{
	uint64_t val;

	pmu_vcpu_exit(v, PMU_EXIT_MSR);
	val = rdmsr_ok(v, msr);
	pmu_vcpu_enter(v);
	return val;
}

static inline uint64_t evtsel(uint16_t event, uint64_t flags)
{
	return (event & 0xff) | ((uint64_t)(event >> 8) << 8) | flags;
}

#define EVT_ALL (PV_EVTSEL_USR | PV_EVTSEL_OS | PV_EVTSEL_EN)

/*
 * A guest thread switch at physical count `phys` of PMC0 (fake source):
 * by the guest alone, or through the hypercall as the VMM performs it.
 */
static inline void fx_switch(struct fx *f, struct pv_vpmu_thread_page *out,
			     struct pv_vpmu_thread_page *in, uint64_t phys)
{
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, phys);
	if (pmu_guest_thread_switch(f->v, out, in, phys)) {
		pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
		assert_int_equal(pmu_thread_switch(f->v, out, in), 0);
		pmu_vcpu_enter(f->v);
	}
}

/* Thread page counting `event` on PMC0 with config id `id`. */
static inline void thread_config(struct pv_vpmu_thread_page *t, uint16_t event,
				 uint64_t flags, uint64_t id)
{
	t->evtsel[0] = evtsel(event, flags);
	t->global_ctrl = 1;
	t->config_id = id;
	t->flags = PV_VPMU_THREAD_ACTIVE;
	t->nr_map = 1;
	t->map[0] = 0;
}

#endif
