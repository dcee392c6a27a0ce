// SPDX-License-Identifier: MIT
/*
 * The worked example of docs/policies.md, registered from its one file
 * (pmu/policies/wallclock.c) and checked here so that the guide cannot
 * rot: `wallclock`, the offset policy minus the vCPU pause, charges a
 * thread everything that happens while the guest scheduler has it on a
 * vCPU, VMM time and host preemption included.  tests/kvm runs it in a
 * guest with exact counts (step-per-thread-wallclock-*).
 */
#include "pmu_test.h"

/* --- its evaluation on the Figure 5 timeline --- */

static void test_wallclock_figure5(void **state)
{
	struct pmu_config cfg = {
		.source = "fake",
		.nr_vcpus = 1,
		.policy = "wallclock",
	};
	struct pv_vpmu_vcpu_page *page = fx_page_alloc();
	struct pv_vpmu_thread_page *a = fx_thread_alloc();
	struct pv_vpmu_thread_page *b = fx_thread_alloc();
	struct pmu_vcpu_stats st;
	struct pmu_source *src;
	struct pmu_vcpu *v;
	struct pmu *pmu;
	const char *err;
	struct fx f;

	(void)state;
	assert_int_equal(pmu_create(&cfg, &pmu, &err), 0);
	assert_string_equal(pmu_policy_name(pmu), "wallclock");
	v = pmu_vcpu(pmu, 0);
	src = pmu_active_source(pmu);
	f.v = v;
	f.src = src;
	pmu_vcpu_set_page(v, page);
	thread_config(a, PV_EVENT_CYCLES, EVT_ALL, 1);
	thread_config(b, PV_EVENT_CYCLES, EVT_ALL, 1);
	wrmsr_ok(v, PV_MSR_IA32_PERFEVTSEL0, a->evtsel[0]);
	wrmsr_ok(v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(v);

	pmu_fake_set(src, 0, PV_EVENT_CYCLES, 100);
	pmu_vcpu_exit(v, PMU_EXIT_HYPERCALL);
	pmu_fake_set(src, 0, PV_EVENT_CYCLES, 150);
	assert_int_equal(pmu_thread_switch(v, NULL, a), 0);
	pmu_vcpu_enter(v);
	fx_switch(&f, a, b, 350);	/* T1 */
	fx_switch(&f, b, a, 750);	/* T2 */
	pmu_fake_set(src, 0, PV_EVENT_CYCLES, 950);		/* T3 */
	pmu_vcpu_exit(v, PMU_EXIT_OTHER);
	pmu_fake_set(src, 0, PV_EVENT_CYCLES, 1550);
	pmu_vcpu_enter(v);
	pmu_fake_set(src, 0, PV_EVENT_CYCLES, 1650);		/* T4 */

	/* offset gives 500; wallclock adds the 600 of preemption. */
	assert_int_equal(pmu_guest_read(page, a, 0, 1650), 1100);
	assert_int_equal(b->ctr[0].sum, 400);
	/* Equal configurations: no exit per switch, like offset. */
	pmu_vcpu_get_stats(v, &st);
	assert_int_equal(st.switch_hcalls, 1);
	assert_int_equal(st.guest_switches, 2);

	pmu_destroy(pmu);
	free(page);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wallclock_figure5),
	};

	return cmocka_run_group_tests_name("pmu_example_policy", tests, NULL,
					   NULL);
}
