// SPDX-License-Identifier: MIT
/*
 * The event sources behind struct pmu_source_ops: tsc, step, perf and the
 * virtual events.
 */
#include <errno.h>

#include "pmu_test.h"

static void enable_pmc0(struct pmu_vcpu *v, uint16_t event, uint64_t flags)
{
	wrmsr_ok(v, PV_MSR_IA32_PERFEVTSEL0, evtsel(event, flags));
	wrmsr_ok(v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
}

static void test_tsc_real_clock_monotonic(void **state)
{
	struct fx *f = fx_new("tsc", "offset", false);
	uint64_t a, b;

	(void)state;
	enable_pmc0(f->v, PV_EVENT_REF_CYCLES, EVT_ALL);
	pmu_vcpu_enter(f->v);
	a = pmu_vcpu_counter(f->v, 0);
	for (volatile int i = 0; i < 100000; i++)
		;
	b = pmu_vcpu_counter(f->v, 0);
	assert_true(b > a);
	/* The direct read path: Phys(t) is the guest's own rdtsc. */
	assert_int_equal(f->page[0]->ctr[0].read, PV_VPMU_READ_TSC);
	/* While the vCPU is out, the counter does not move. */
	pmu_vcpu_exit(f->v, PMU_EXIT_HLT);
	a = pmu_vcpu_counter(f->v, 0);
	for (volatile int i = 0; i < 100000; i++)
		;
	assert_int_equal(pmu_vcpu_counter(f->v, 0), a);
	fx_free(f);
}

static void test_tsc_cannot_count_instructions(void **state)
{
	struct fx *f = fx_new("tsc", "offset", true);

	(void)state;
	enable_pmc0(f->v, PV_EVENT_INSTRUCTIONS, EVT_ALL);
	pmu_vcpu_enter(f->v);
	f->tsc = 1000;
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 0);
	assert_int_equal(f->page[0]->ctr[0].flags, 0);
	fx_free(f);
}

/*
 * An interrupting cycles counter of source src 1000 before its overflow
 * at TSC 5000: no host timer before the vCPU enters, then one at 6000.
 */
static struct fx *cycles_timer_fx(const char *src)
{
	struct fx *f = fx_new(src, "offset", true);
	uint64_t dl = 0;

	f->tsc = 5000;
	enable_pmc0(f->v, PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT);
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-1000);
	assert_false(pmu_vcpu_timer_deadline(f->v, &dl));
	pmu_vcpu_enter(f->v);
	assert_true(pmu_vcpu_timer_deadline(f->v, &dl));
	assert_int_equal(dl, 6000);
	return f;
}

static void test_tsc_timer_deadline(void **state)
{
	struct fx *f = cycles_timer_fx("tsc");
	uint64_t dl = 0;

	(void)state;
	/* The VMM's timer fires: the exit at the deadline sees it. */
	f->tsc = 6000;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_false(pmu_vcpu_timer_deadline(f->v, &dl));
	assert_true(pmu_vcpu_enter(f->v));
	fx_free(f);
}

static void test_tsc_steal_clamped(void **state)
{
	struct fx *f = fx_new("tsc", "offset", true);

	(void)state;
	enable_pmc0(f->v, PV_EVENT_CYCLES, EVT_ALL);
	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0, 10000);
	f->tsc = 100;
	pmu_vcpu_enter(f->v);
	f->tsc = 400;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	/* 1 µs reported stolen, but only 300 cycles ran: drop 300. */
	pmu_vcpu_steal(f->v, 1000);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 10000);
	pmu_vcpu_enter(f->v);
	f->tsc = 500;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	pmu_vcpu_steal(f->v, 40);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 10060);
	fx_free(f);
}

/*
 * TSCs of two host CPUs may disagree by a few cycles after a migration:
 * a counter must not go backwards (nor see 2^64 events).  raw keeps the
 * counter running across exits, so Start is the TSC of the last exit.
 */
static void test_tsc_stepping_back_is_not_an_overflow(void **state)
{
	struct fx *f = fx_new("tsc", "raw", true);

	(void)state;
	enable_pmc0(f->v, PV_EVENT_CYCLES, EVT_ALL);
	f->tsc = 1000;
	pmu_vcpu_enter(f->v);
	f->tsc = 1100;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	pmu_vcpu_enter(f->v);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 100);
	/* Now on a CPU whose TSC is 5 behind. */
	f->tsc = 1095;
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 100);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 100);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 0);
	pmu_vcpu_enter(f->v);
	/* Counting goes on from the highest value seen. */
	f->tsc = 1150;
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 150);
	fx_free(f);
}

static void test_step_reads_guest_counts(void **state)
{
	struct fx *f = fx_new("step", "offset", false);
	struct pv_vpmu_step *st = &f->page[0]->step;

	(void)state;
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_INSTRUCTIONS, PV_EVTSEL_USR | PV_EVTSEL_EN));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1,
		 evtsel(PV_EVENT_INSTRUCTIONS, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 2,
		 evtsel(PV_EVENT_BRANCHES, PV_EVTSEL_OS | PV_EVTSEL_EN));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0x7);
	pmu_vcpu_enter(f->v);
	/* The VMM steps CPL0 only while an OS counter runs. */
	assert_true(pmu_vcpu_wants_kernel_step(f->v));
	/* The guest kernel counts the user code it stepped. */
	st->count[PV_STEP_USER_INSNS] = 1000;
	st->count[PV_STEP_USER_BRANCHES] = 100;
	/* The VMM counts CPL0: 30 instructions, 3 of them branches. */
	for (int i = 0; i < 30; i++)
		assert_false(pmu_vcpu_kernel_step(f->v, i % 10 == 0));
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	pmu_vcpu_enter(f->v);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 1000);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 1030);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 3);
	st->count[PV_STEP_USER_INSNS] = 1500;
	for (int i = 0; i < 10; i++)
		pmu_vcpu_kernel_step(f->v, i < 2);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 1500);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 1540);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 5);
	/* The kernel slots are mirrored in the page, so the guest's direct
	 * read agrees with the VMM. */
	assert_int_equal(st->count[PV_STEP_KERNEL_INSNS], 40);
	assert_int_equal(pmu_guest_phys_star(f->page[0], 1, 0), 1540);
	/* Disabled, nothing needs CPL0 stepping any more. */
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0x1);
	assert_false(pmu_vcpu_wants_kernel_step(f->v));
	/* Nor do the source's cycles of both modes: they are time. */
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 3,
		 evtsel(PV_EVENT_CYCLES, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0x9);
	assert_false(pmu_vcpu_wants_kernel_step(f->v));
	fx_free(f);
}

/*
 * The step source's cycles: the TSC less the cost of each trap (here one
 * single step per user instruction), measured between VMM entries (here 500 cycles a step), the
 * first run's cost dropped once it is known, later runs compensated as
 * they go, and the guest's direct read agreeing with the VMM.
 */
static void test_step_cycles_compensated(void **state)
{
	struct fx *f = fx_new("step", "offset", true);
	struct pv_vpmu_step *st = &f->page[0]->step;

	(void)state;
	enable_pmc0(f->v, PV_EVENT_CYCLES, EVT_ALL);
	f->tsc = 1000;
	pmu_vcpu_enter(f->v);
	/* Not measured yet: a calibration exit after 256 steps. */
	assert_int_equal(st->deadline[PV_STEP_USER_INSNS], 256);
	assert_int_equal(f->page[0]->ctr[0].read, PV_VPMU_READ_TSC_STEP);
	st->count[PV_STEP_USER_INSNS] = st->traps = 1000;
	f->tsc += 1000 * 500;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 500000);
	pmu_vcpu_enter(f->v);
	/* 500 a step, of which 7/8 is taken as the traps' cost and
	 * dropped from the first run. */
	assert_int_equal(f->page[0]->ctr[0].step_cost, 438);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 500000 - 438000);
	assert_int_equal(st->deadline[PV_STEP_USER_INSNS], 1000 + 65536);
	/* 1000 steps of 520, and 30000 cycles without a step (a system
	 * call's kernel time, say): 82 a step and the 30000 left. */
	st->count[PV_STEP_USER_INSNS] = st->traps = 2000;
	f->tsc += 1000 * 520 + 30000;
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 62000 + 112000);
	assert_int_equal(pmu_guest_phys_star(f->page[0], 0, f->tsc),
			 62000 + 112000);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	pmu_vcpu_enter(f->v);
	/* That run's 550 a step is no cheaper: the cost stays. */
	assert_int_equal(f->page[0]->ctr[0].step_cost, 438);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 62000 + 112000);
	/* 1000 steps of 400 in a run the host preempted for 200 us: the
	 * steal is not a step's cost (a cost of 600 would not replace 438). */
	st->count[PV_STEP_USER_INSNS] = st->traps = 3000;
	f->tsc += 1000 * 400 + 200000;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	pmu_vcpu_steal(f->v, 200000);
	pmu_vcpu_enter(f->v);
	assert_int_equal(f->page[0]->ctr[0].step_cost, 350);
	/* Counted by blocks, 8000 instructions in 1000 traps of 400: the
	 * cost is per trap, not per instruction (that would take 2.8M). */
	{
		uint64_t before = pmu_vcpu_counter(f->v, 0);

		st->count[PV_STEP_USER_INSNS] += 8000;
		st->traps += 1000;
		f->tsc += 1000 * 400;
		assert_int_equal(pmu_vcpu_counter(f->v, 0) - before,
				 1000 * (400 - 350));
		assert_int_equal(pmu_guest_phys_star(f->page[0], 0, f->tsc),
				 pmu_vcpu_counter(f->v, 0));
	}
	fx_free(f);
}

/*
 * A cycles overflow under the step source has a host timer too: no exit
 * announces it while user code runs from the code cache.  Its cycles
 * never outrun the TSC, so the timer looks no later than the TSC could
 * reach the deadline, and the exit it causes re-arms with what is left.
 */
static void test_step_cycles_timer(void **state)
{
	struct fx *f = cycles_timer_fx("step");
	struct pv_vpmu_step *st = &f->page[0]->step;
	uint64_t dl = 0;

	(void)state;
	/* An earlier exit, 100 steps in: no overflow, the same look. */
	st->count[PV_STEP_USER_INSNS] = st->traps = 100;
	f->tsc = 5600;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_false(pmu_vcpu_enter(f->v));
	assert_true(pmu_vcpu_timer_deadline(f->v, &dl));
	assert_int_equal(dl, 6000);
	/* The timer's exit finds the overflow: a PMI. */
	f->tsc = 6000;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_true(pmu_vcpu_enter(f->v));
	/* Disabled, no timer. */
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0);
	assert_false(pmu_vcpu_timer_deadline(f->v, &dl));
	fx_free(f);
}

/* CPL0 stepping overflows exactly too: the 5th kernel instruction. */
static void test_step_kernel_deadline_exact(void **state)
{
	struct fx *f = fx_new("step", "offset", false);

	(void)state;
	enable_pmc0(f->v, PV_EVENT_INSTRUCTIONS,
		    PV_EVTSEL_OS | PV_EVTSEL_EN | PV_EVTSEL_INT);
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-5);
	assert_false(pmu_vcpu_enter(f->v));
	for (int i = 0; i < 4; i++)
		assert_false(pmu_vcpu_kernel_step(f->v, false));
	assert_true(pmu_vcpu_kernel_step(f->v, false));
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 1);
	assert_true(pmu_vcpu_enter(f->v));
	fx_free(f);
}

static void test_step_deadline_exact(void **state)
{
	struct fx *f = fx_new("step", "offset", false);
	struct pv_vpmu_step *st = &f->page[0]->step;

	(void)state;
	st->count[PV_STEP_USER_INSNS] = 500;
	enable_pmc0(f->v, PV_EVENT_INSTRUCTIONS, EVT_ALL | PV_EVTSEL_INT);
	pmu_vcpu_enter(f->v);
	for (int i = 0; i < 20; i++)
		pmu_vcpu_kernel_step(f->v, false);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-100);
	pmu_vcpu_enter(f->v);
	/* The 100th user instruction from now is the 600th. */
	assert_int_equal(st->deadline[PV_STEP_USER_INSNS], 600);
	assert_int_equal(st->deadline[PV_STEP_USER_BRANCHES],
			 PV_STEP_NO_DEADLINE);
	st->count[PV_STEP_USER_INSNS] = 599;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	/* Disarmed while out; 99 counted, no overflow yet. */
	assert_int_equal(st->deadline[PV_STEP_USER_INSNS], PV_STEP_NO_DEADLINE);
	assert_false(pmu_vcpu_enter(f->v));
	assert_int_equal(st->deadline[PV_STEP_USER_INSNS], 600);
	/* The guest reaches it and exits with PV_HC_PMU_POLL. */
	st->count[PV_STEP_USER_INSNS] = 600;
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 1);
	assert_true(pmu_vcpu_enter(f->v));
	fx_free(f);
}

static void test_perf_task_clock(void **state)
{
	struct pmu_config cfg = {
		.source = "perf", .policy = "offset", .nr_vcpus = 1,
	};
	struct pmu *pmu;
	struct pmu_vcpu *v;
	const char *err;
	uint64_t a, b, c;
	int ret;

	(void)state;
	ret = pmu_create(&cfg, &pmu, &err);
	if (ret == -EACCES || ret == -EPERM || ret == -ENOSYS ||
	    ret == -ENOENT || ret == -EOPNOTSUPP) {
		print_message("perf_event_open denied (%d): skipped\n", ret);
		skip();
	}
	assert_int_equal(ret, 0);
	v = pmu_vcpu(pmu, 0);
	enable_pmc0(v, PV_EVENT_TASK_CLOCK, EVT_ALL);
	assert_int_equal(pmu_perf_open_count(pmu_active_source(pmu), 0), 0);
	pmu_vcpu_enter(v);
	/* Opened on this (the vCPU's) thread by the first read. */
	assert_int_equal(pmu_perf_open_count(pmu_active_source(pmu), 0), 1);
	a = pmu_vcpu_counter(v, 0);
	for (volatile int i = 0; i < 2000000; i++)
		;
	b = pmu_vcpu_counter(v, 0);
	for (volatile int i = 0; i < 2000000; i++)
		;
	c = pmu_vcpu_counter(v, 0);
	assert_true(b > a);
	assert_true(c > b);
	/* No direct read for host perf counters: the guest traps. */
	pmu_vcpu_exit(v, PMU_EXIT_OTHER);
	b = pmu_vcpu_counter(v, 0);
	for (volatile int i = 0; i < 2000000; i++)
		;
	assert_int_equal(pmu_vcpu_counter(v, 0), b);
	pmu_destroy(pmu);
}

static void test_virtual_events(void **state)
{
	struct fx *f = fx_new("fake", "offset", true);
	struct pv_vpmu_vcpu_page *p = f->page[0];

	(void)state;
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_VMEXITS, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1,
		 evtsel(PV_EVENT_VMEXITS_MSR, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 2,
		 evtsel(PV_EVENT_VMM_TIME, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 3,
		 evtsel(PV_EVENT_STEAL, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0xf);
	pmu_vcpu_enter(f->v);

	f->ns = 1000;
	pmu_vcpu_exit(f->v, PMU_EXIT_IO);
	f->ns = 1300;
	pmu_vcpu_enter(f->v);
	f->ns = 2000;
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	pmu_vcpu_steal(f->v, 77);
	f->ns = 2050;
	pmu_vcpu_enter(f->v);

	assert_int_equal(pmu_vcpu_counter(f->v, 0), 2);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 1);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 350);
	assert_int_equal(pmu_vcpu_counter(f->v, 3), 77);
	/* Published as of the entry, read straight from the page. */
	assert_int_equal(p->ctr[2].read, PV_VPMU_READ_NONE);
	assert_int_equal(pmu_guest_phys_star(p, 0, 0), 2);
	assert_int_equal(pmu_guest_phys_star(p, 2, 0), 350);

	/* Interrupts injected, counted by the VMM itself. */
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1,
		 evtsel(PV_EVENT_IRQS, EVT_ALL));
	/* A new event keeps the counter's value (as on hardware): reset. */
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), 2);
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1, 0);
	pmu_vcpu_enter(f->v);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	pmu_vcpu_count(f->v, PV_EVENT_IRQS, 5);
	pmu_vcpu_enter(f->v);
	assert_int_equal(pmu_guest_phys_star(p, 1, 0), 5);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsc_real_clock_monotonic),
		cmocka_unit_test(test_tsc_cannot_count_instructions),
		cmocka_unit_test(test_tsc_timer_deadline),
		cmocka_unit_test(test_tsc_steal_clamped),
		cmocka_unit_test(test_tsc_stepping_back_is_not_an_overflow),
		cmocka_unit_test(test_step_reads_guest_counts),
		cmocka_unit_test(test_step_deadline_exact),
		cmocka_unit_test(test_step_kernel_deadline_exact),
		cmocka_unit_test(test_step_cycles_compensated),
		cmocka_unit_test(test_step_cycles_timer),
		cmocka_unit_test(test_perf_task_clock),
		cmocka_unit_test(test_virtual_events),
	};

	return cmocka_run_group_tests_name("pmu_sources", tests, NULL, NULL);
}
