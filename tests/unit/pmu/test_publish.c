// SPDX-License-Identifier: MIT
/*
 * The per-vCPU page the VMM publishes and the thread pages it writes in
 * PV_HC_PMU_SWITCH: values, flags, and the sequence protocol.
 */
#include <pthread.h>

#include "pmu_test.h"

static void test_page_values_after_enter(void **state)
{
	struct fx *f = fx_new("fake", "offset", false);
	struct pv_vpmu_vcpu_page *p = f->page[0];
	uint32_t seq0 = p->seq;

	(void)state;
	assert_int_equal(seq0 % 2, 0);
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT));
	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0, 1000);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 5000);
	pmu_vcpu_enter(f->v);

	/* One publish: two increments, even again. */
	assert_int_equal(p->seq, seq0 + 2);
	assert_int_equal(p->abi_version, PV_VPMU_ABI_VERSION);
	assert_int_equal(p->vcpu_id, 0);
	assert_int_equal(p->policy_id, PV_VPMU_POLICY_OFFSET);
	/* The policy's guest half, which the guest kernel applies. */
	assert_int_equal(p->switch_rule, PMU_SWITCH_RULE_OFFSET);
	assert_true(pv_switch_rule_ok(p->switch_rule));
	assert_int_equal(p->source_id, PV_VPMU_SOURCE_FAKE);
	assert_int_equal(p->width, 48);
	assert_int_equal(p->nr_counters, 7);
	assert_int_equal(p->tsc_khz, 1000000);
	assert_int_equal(p->global_ctrl, 1);
	/* Sum_vcpu = the value, Start_vcpu = Phys at resume. */
	assert_int_equal(p->ctr[0].sum, 1000);
	assert_int_equal(p->ctr[0].start, 5000);
	assert_int_equal(p->ctr[0].flags, PV_VPMU_CTR_ENABLED |
			 PV_VPMU_CTR_RUNNING | PV_VPMU_CTR_INT);
	assert_int_equal(p->ctr[0].event, PV_EVENT_CYCLES);
	assert_int_equal(p->ctr[0].read, PV_VPMU_READ_TSC);
	assert_int_equal(p->ctr[1].flags, 0);
	assert_int_equal(pmu_guest_phys_star(p, 0, 5250), 1250);

	/* Counted 250, out for 750: the next entry publishes 1250 @ 6000. */
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 5250);
	pmu_vcpu_exit(f->v, PMU_EXIT_IO);
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 6000);
	pmu_vcpu_enter(f->v);
	assert_int_equal(p->seq, seq0 + 4);
	assert_int_equal(p->ctr[0].sum, 1250);
	assert_int_equal(p->ctr[0].start, 6000);
	assert_int_equal(pmu_guest_phys_star(p, 0, 6001), 1251);
	fx_free(f);
}

static void test_thread_page_written_with_seq(void **state)
{
	struct fx *f = fx_new("fake", "offset", false);
	struct pv_vpmu_thread_page *t = fx_thread_alloc();
	struct pmu_vcpu *v1 = pmu_vcpu(f->pmu, 1);

	(void)state;
	thread_config(t, PV_EVENT_CYCLES, EVT_ALL, 9);
	t->smp_id = 77;
	pmu_vcpu_exit(v1, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(v1, NULL, t), 0);
	pmu_vcpu_enter(v1);
	assert_int_equal(t->seq, 2);
	assert_int_equal(t->smp_id, 1);
	assert_int_equal(f->page[1]->config_id, 9);
	assert_int_equal(f->page[1]->vcpu_id, 1);
	/* vCPU 0 was not touched. */
	assert_int_equal(f->page[0]->config_id, 0);
	assert_int_equal(f->page[0]->ctr[0].flags, 0);

	/* A bad configuration fails the hypercall and loads nothing. */
	t->evtsel[1] = 1ull << 40;
	t->config_id = 10;
	pmu_vcpu_exit(v1, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(v1, NULL, t), -22);
	pmu_vcpu_enter(v1);
	assert_int_equal(t->seq % 2, 0);
	assert_int_equal(f->page[1]->config_id, 9);
	free(t);
	fx_free(f);
}

static void test_step_enable_published(void **state)
{
	struct fx *f = fx_new("step", "offset", false);
	struct pv_vpmu_vcpu_page *p = f->page[0];

	(void)state;
	pmu_vcpu_enter(f->v);
	assert_int_equal(p->step.enable, 0);
	trap_wrmsr(f->v, PV_MSR_IA32_PERFEVTSEL0,
		   evtsel(PV_EVENT_INSTRUCTIONS, PV_EVTSEL_USR | PV_EVTSEL_EN));
	assert_int_equal(p->step.enable, 0);	/* not globally enabled */
	trap_wrmsr(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	assert_int_equal(p->step.enable, 1);
	assert_int_equal(p->ctr[0].read, PV_VPMU_READ_STEP);
	assert_int_equal(p->ctr[0].step_mask, 1u << PV_STEP_USER_INSNS);
	trap_wrmsr(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0);
	assert_int_equal(p->step.enable, 0);
	fx_free(f);
}

/*
 * A reader on another thread must never see a torn (sum, start) pair.
 * The writer keeps sum == start at every publish (the counter started at
 * value 0 when Phys was 0 and each exit/entry happens at one Phys), so any
 * difference is a torn read the sequence count failed to catch.
 */
struct race {
	struct pv_vpmu_vcpu_page *p;
	volatile bool stop;
	uint64_t reads;
	uint64_t torn;
};

static void *race_reader(void *arg)
{
	struct race *r = arg;

	while (!r->stop) {
		uint64_t sum, start;
		uint32_t s;

		do {
			while ((s = __atomic_load_n(&r->p->seq,
						    __ATOMIC_ACQUIRE)) & 1)
				;
			sum = __atomic_load_n(&r->p->ctr[0].sum,
					      __ATOMIC_RELAXED);
			start = __atomic_load_n(&r->p->ctr[0].start,
						__ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while (__atomic_load_n(&r->p->seq, __ATOMIC_RELAXED) != s);
		__atomic_fetch_add(&r->reads, 1, __ATOMIC_RELAXED);
		r->torn += sum != start;
	}
	return NULL;
}

static void test_seqcount_protects_readers(void **state)
{
	struct fx *f = fx_new("fake", "offset", false);
	struct race r = { .p = f->page[0] };
	pthread_t th;
	uint32_t seq0;
	uint64_t i;

	(void)state;
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, evtsel(PV_EVENT_CYCLES, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(f->v);
	seq0 = f->page[0]->seq;
	assert_int_equal(pthread_create(&th, NULL, race_reader, &r), 0);
	/* At least 200000 publishes, and more until the reader (which a
	 * loaded machine may not schedule early) has read a few times. */
	for (i = 1; i <= 200000 || (__atomic_load_n(&r.reads, __ATOMIC_RELAXED)
				    < 100 && i <= 50000000); i++) {
		pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, i * 1000);
		pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
		pmu_vcpu_enter(f->v);
	}
	r.stop = true;
	pthread_join(th, NULL);
	assert_true(r.reads > 0);
	assert_int_equal(r.torn, 0);
	assert_int_equal(f->page[0]->seq, (uint32_t)(seq0 + 2 * (i - 1)));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_values_after_enter),
		cmocka_unit_test(test_thread_page_written_with_seq),
		cmocka_unit_test(test_step_enable_published),
		cmocka_unit_test(test_seqcount_protects_readers),
	};

	return cmocka_run_group_tests_name("pmu_publish", tests, NULL, NULL);
}
