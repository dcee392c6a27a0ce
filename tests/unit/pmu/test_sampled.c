// SPDX-License-Identifier: MIT
/*
 * The second worked example of docs/policies.md, pmu/policies/sampled.c:
 * a policy with guest-side behaviour from its one file.  The guest counts
 * its switches in the vCPU page (guest.switches) and exits at every 8th,
 * by the rule's period alone; every other switch folds offsets in the
 * guest.  Counts are offset's to the event, whichever side folds.
 * tests/kvm runs it in a guest (step-per-thread-sampled-*,
 * switch-exits-sampled).
 */
#include "pmu_test.h"

#define PERIOD	8

/* Threads A and B, one configuration: cycles on PMC0, config id 1. */
static void threads_alloc(struct pv_vpmu_thread_page **a,
			  struct pv_vpmu_thread_page **b)
{
	*a = fx_thread_alloc();
	*b = fx_thread_alloc();
	thread_config(*a, PV_EVENT_CYCLES, EVT_ALL, 1);
	thread_config(*b, PV_EVENT_CYCLES, EVT_ALL, 1);
}

/*
 * Threads A and B of one configuration take turns on one vCPU for 100
 * events each, over 64 switches: A first resumes at 150 (its own
 * configuration hypercall), switch k comes at 150 + 100 k, and A reads
 * its count 50 events after the last one.
 */
static void test_sampled_exits_every_nth_switch(void **state)
{
	struct fx *f = fx_new("fake", "sampled", true);
	struct pv_vpmu_thread_page *a, *b;
	struct pmu_vcpu_stats st;

	(void)state;
	threads_alloc(&a, &b);
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, a->evtsel[0]);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(f->v);
	/* The VMM publishes the rule, period included, in the page. */
	assert_int_equal(PV_SWITCH_PERIOD_OF(f->page[0]->switch_rule), PERIOD);
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 150);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(f->v, NULL, a), 0);
	pmu_vcpu_enter(f->v);

	for (uint64_t k = 1; k <= 64; k++) {
		fx_switch(f, k & 1 ? a : b, k & 1 ? b : a, 150 + 100 * k);
		/* The guest's count, and one exit per PERIOD of it (the
		 * configuration's hypercall aside). */
		assert_int_equal(f->page[0]->guest.switches, k);
		pmu_vcpu_get_stats(f->v, &st);
		assert_int_equal(st.switch_hcalls, 1 + k / PERIOD);
		assert_int_equal(st.guest_switches, k - k / PERIOD);
		assert_int_equal(st.guest_switch_count, k);
	}
	/* Offset's counts exactly: 32 turns of 100, and 50 more for A. */
	assert_int_equal(pmu_guest_read(f->page[0], a, 0, 6600), 3250);
	assert_int_equal(b->ctr[0].sum, 3200);
	free(a);
	free(b);
	fx_free(f);
}

/*
 * The period is the rule's alone: the same switch of two threads of one
 * configuration exits at the Nth count under any period N, and not at
 * the others; with no period it never exits; an exit the flags ask for
 * (an i-mode counter) is taken whatever the count.
 */
static void test_switch_period_rule(void **state)
{
	struct pv_vpmu_vcpu_page *vp = fx_page_alloc();
	struct pv_vpmu_thread_page *a, *b;
	enum pv_switch_step step;

	(void)state;
	threads_alloc(&a, &b);
	vp->config_id = 1;
	for (uint32_t n = 0; n <= 5; n++) {
		vp->switch_rule = PMU_SWITCH_RULE_OFFSET | PV_SWITCH_PERIOD(n);
		vp->guest.switches = 0;
		for (uint64_t k = 1; k <= 20; k++) {
			step = pmu_guest_switch_step(vp, a, b, NULL);
			assert_int_equal(step, n && k % n == 0 ?
					 PV_SWITCH_STEP_SWITCH :
					 PV_SWITCH_STEP_LOCAL);
		}
		assert_int_equal(vp->guest.switches, 20);
	}
	thread_config(b, PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT, 1);
	vp->switch_rule = PMU_SWITCH_RULE_OFFSET | PV_SWITCH_PERIOD(3);
	vp->guest.switches = 0;
	for (uint64_t k = 1; k <= 6; k++)
		assert_int_equal(pmu_guest_switch_step(vp, a, b, NULL),
				 PV_SWITCH_STEP_SWITCH);
	free(vp);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampled_exits_every_nth_switch),
		cmocka_unit_test(test_switch_period_rule),
	};

	return cmocka_run_group_tests_name("pmu_sampled", tests, NULL, NULL);
}
