// SPDX-License-Identifier: MIT
/*
 * The scenario of Figure 5 of Nikolaev & Back (VEE 2011), replayed for
 * every policy with the fake source as the physical counter:
 *
 *   phys   0  first entry, PMC0 counts cycles (both modes)
 *        100  thread A configures: PV_HC_PMU_SWITCH(0, A); the hypercall
 *             takes until 150 in the VMM
 *   T1   350  A suspended, B (same configuration) resumed
 *   T2   750  B suspended, A resumed
 *   T3   950  the vCPU is descheduled by the host until 1550
 *   T4  1650  A reads its count
 *
 * A really ran 150-350, 750-950 and 1550-1650: 500 events.
 */
#include "pmu_test.h"

struct fig5 {
	struct fx *f;
	const struct pmu_policy_ops *pol;
	struct pv_vpmu_thread_page *a, *b;
};

static void fig5_set(struct fig5 *s, uint64_t phys)
{
	pmu_fake_set(s->f->src, 0, PV_EVENT_CYCLES, phys);
}

static void fig5_start(struct fig5 *s, const char *source, const char *policy)
{
	s->f = fx_new(source, policy, true);
	s->pol = pmu_policy_lookup(policy);
	assert_non_null(s->pol);
	s->a = fx_thread_alloc();
	s->b = fx_thread_alloc();
	thread_config(s->a, PV_EVENT_CYCLES, EVT_ALL, 1);
	thread_config(s->b, PV_EVENT_CYCLES, EVT_ALL, 1);

	/* Boot: the kernel programs PMC0 before the first entry. */
	wrmsr_ok(s->f->v, PV_MSR_IA32_PERFEVTSEL0, s->a->evtsel[0]);
	wrmsr_ok(s->f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(s->f->v);
}

static void fig5_end(struct fig5 *s)
{
	free(s->a);
	free(s->b);
	fx_free(s->f);
}

/* Runs the scenario up to T3; returns A's count read at T4. */
static uint64_t fig5_run(struct fig5 *s, bool preempt_as_steal)
{
	struct fx *f = s->f;

	/* A configures at 100; the VMM needs until 150. */
	f->tsc = 100;
	fig5_set(s, 100);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	f->tsc = 150;
	fig5_set(s, 150);
	assert_int_equal(pmu_thread_switch(f->v, NULL, s->a), 0);
	pmu_vcpu_enter(f->v);

	f->tsc = 350;
	fx_switch(f, s->a, s->b, 350);	/* T1 */
	f->tsc = 750;
	fx_switch(f, s->b, s->a, 750);	/* T2 */

	if (preempt_as_steal) {
		/* Preempted inside KVM_RUN, seen at the next exit (1600). */
		f->tsc = 1600;
		pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
		pmu_vcpu_steal(f->v, 600);
		pmu_vcpu_enter(f->v);
	} else {
		f->tsc = 950;
		fig5_set(s, 950);		/* T3 */
		pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
		f->tsc = 1550;
		fig5_set(s, 1550);
		pmu_vcpu_enter(f->v);
	}
	f->tsc = 1650;
	fig5_set(s, 1650);			/* T4 */
	return pmu_guest_read(f->page[0], s->a, 0, 1650);
}

static uint64_t switch_hcalls(struct fx *f)
{
	struct pmu_vcpu_stats st;

	pmu_vcpu_get_stats(f->v, &st);
	return st.switch_hcalls;
}

static void test_fig5_offset(void **state)
{
	struct fig5 s;

	(void)state;
	fig5_start(&s, "fake", "offset");
	assert_int_equal(fig5_run(&s, false), 500);
	/* Start*_A is Phys* at the hypercall's return: 100, not 150. */
	assert_int_equal(s.b->ctr[0].sum, 400);
	/* Only the configuration hypercall; both switches took no exit. */
	assert_int_equal(switch_hcalls(s.f), 1);
	fig5_end(&s);
}

static void test_fig5_offset_start_compensated(void **state)
{
	struct fig5 s;

	(void)state;
	fig5_start(&s, "fake", "offset");
	fig5_set(&s, 100);
	pmu_vcpu_exit(s.f->v, PMU_EXIT_HYPERCALL);
	fig5_set(&s, 150);
	assert_int_equal(pmu_thread_switch(s.f->v, NULL, s.a), 0);
	pmu_vcpu_enter(s.f->v);
	assert_int_equal(s.a->ctr[0].start, 100);
	assert_int_equal(s.a->smp_id, 0);
	fig5_set(&s, 170);
	assert_int_equal(pmu_guest_read(s.f->page[0], s.a, 0, 170), 20);
	fig5_end(&s);
}

static void test_fig5_saverestore(void **state)
{
	struct fig5 s;

	(void)state;
	fig5_start(&s, "fake", "saverestore");
	assert_int_equal(fig5_run(&s, false), 500);
	assert_int_equal(s.b->ctr[0].saved, 400);
	/* Configuration, then one batched hypercall per switch. */
	assert_int_equal(switch_hcalls(s.f), 3);
	fig5_end(&s);
}

static void test_fig5_raw(void **state)
{
	struct fig5 s;

	(void)state;
	fig5_start(&s, "fake", "raw");
	/*
	 * Everything since the first entry: A's 500, B's 400, the 600 the
	 * vCPU was preempted, the 50 of the hypercall and the 100 before A
	 * configured.  This is why counters must be virtualized.
	 */
	assert_int_equal(fig5_run(&s, false), 500 + 400 + 600 + 50 + 100);
	assert_int_equal(switch_hcalls(s.f), 1);
	fig5_end(&s);
}

/* The same with the tsc source, the preemption reported as steal time. */
static void test_fig5_tsc_steal_offset(void **state)
{
	struct fig5 s;

	(void)state;
	fig5_start(&s, "tsc", "offset");
	assert_int_equal(fig5_run(&s, true), 500);
	fig5_end(&s);
}

static void test_fig5_tsc_steal_raw(void **state)
{
	struct fig5 s;

	(void)state;
	fig5_start(&s, "tsc", "raw");
	assert_int_equal(fig5_run(&s, true), 1650);
	fig5_end(&s);
}

static void test_fig5_tsc_steal_saverestore(void **state)
{
	struct fig5 s;

	(void)state;
	fig5_start(&s, "tsc", "saverestore");
	assert_int_equal(fig5_run(&s, true), 500);
	fig5_end(&s);
}

/* offset between threads of different configurations: one exit each. */
static void test_offset_config_change(void **state)
{
	struct fig5 s;
	uint64_t a_before;

	(void)state;
	fig5_start(&s, "fake", "offset");
	thread_config(s.b, PV_EVENT_INSTRUCTIONS, EVT_ALL, 2);
	fig5_run(&s, false);
	/* fig5_run switched A->B->A, each needing the hypercall now. */
	assert_int_equal(switch_hcalls(s.f), 3);
	a_before = pmu_guest_read(s.f->page[0], s.a, 0, 1650);
	assert_int_equal(a_before, 500);

	fx_switch(s.f, s.a, s.b, 1650);
	assert_int_equal(s.f->page[0]->config_id, 2);
	assert_int_equal(s.f->page[0]->ctr[0].event, PV_EVENT_INSTRUCTIONS);
	pmu_fake_set(s.f->src, 0, PV_EVENT_INSTRUCTIONS,
		     pmu_fake_get(s.f->src, 0, PV_EVENT_INSTRUCTIONS) + 30);
	/* B's reading uses the instructions counter: 30 of them. */
	assert_int_equal(pmu_guest_read(s.f->page[0], s.b, 0,
					pmu_fake_get(s.f->src, 0,
						     PV_EVENT_INSTRUCTIONS)),
			 30);
	/* Back to A; cycles moved on by 70 meanwhile, A ran for 0 of them. */
	fx_switch(s.f, s.b, s.a, 1720);
	fig5_set(&s, 1730);
	assert_int_equal(pmu_guest_read(s.f->page[0], s.a, 0, 1730), 510);
	fig5_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fig5_offset),
		cmocka_unit_test(test_fig5_offset_start_compensated),
		cmocka_unit_test(test_fig5_saverestore),
		cmocka_unit_test(test_fig5_raw),
		cmocka_unit_test(test_fig5_tsc_steal_offset),
		cmocka_unit_test(test_fig5_tsc_steal_raw),
		cmocka_unit_test(test_fig5_tsc_steal_saverestore),
		cmocka_unit_test(test_offset_config_change),
	};

	return cmocka_run_group_tests_name("pmu_figure5", tests, NULL, NULL);
}
