// SPDX-License-Identifier: MIT
/*
 * cycles of one mode (:u, :k) from the mode clock the guest kernel keeps in
 * the vCPU page (struct pv_vpmu_guest_cpu): what the VMM publishes, what it
 * reads at exits, and where host steal goes.  The test plays the guest
 * kernel's part by writing the page as pmu_guest.c does.
 */
#include "pmu_test.h"

/* The guest kernel's entry from user mode at tsc, KVM's record at steal. */
static void guest_entry(struct pv_vpmu_vcpu_page *p, uint64_t tsc,
			uint64_t steal)
{
	struct pv_vpmu_guest_cpu *g = &p->guest;

	g->entries++;
	g->user_tsc += pv_vpmu_user_stretch(p, tsc, steal - g->steal_mark);
	g->steal_mark = steal;
	g->in_user = 0;
}

static void guest_return(struct pv_vpmu_vcpu_page *p, uint64_t tsc,
			 uint64_t steal)
{
	struct pv_vpmu_guest_cpu *g = &p->guest;

	g->steal_mark = steal;
	g->user_base = g->user_tsc - tsc;
	g->in_user = 1;
}

/* Counters 0, 1, 2: cycles of user mode, of kernel mode, of both. */
static void cycles_by_mode(struct fx *f)
{
	const uint64_t usr = PV_EVTSEL_USR | PV_EVTSEL_EN;
	const uint64_t os = PV_EVTSEL_OS | PV_EVTSEL_EN;

	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, evtsel(PV_EVENT_CYCLES, usr));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1, evtsel(PV_EVENT_CYCLES, os));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 2,
		 evtsel(PV_EVENT_CYCLES, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 7);
}

static void test_mode_clock(void **state)
{
	struct fx *f = fx_new("tsc", "offset", true);
	struct pv_vpmu_vcpu_page *p = f->page[0];

	(void)state;
	cycles_by_mode(f);
	f->tsc = 100;
	pmu_vcpu_enter(f->v);
	assert_int_equal(p->ctr[0].read, PV_VPMU_READ_TSC_USER);
	assert_int_equal(p->ctr[1].read, PV_VPMU_READ_TSC_KERNEL);
	assert_int_equal(p->ctr[2].read, PV_VPMU_READ_TSC);
	/* The guest must keep the clock; nothing else asks it to step. */
	assert_int_equal(p->step.enable, PV_STEP_MODE_CLOCK);

	/* Not started yet: no user time, all of it the kernel's.  The
	 * guest starts it at 0 in kernel mode, returns to user at 400. */
	p->guest.clock_on = 1;
	guest_return(p, 400, 0);
	f->tsc = 1000;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 600);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 300);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 900);
	/* Steal seen at an exit in user mode: user time's (1 GHz). */
	pmu_vcpu_steal(f->v, 100);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 500);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 300);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 800);
	pmu_vcpu_enter(f->v);
	/* The guest reads user time as the VMM would, in user mode (no
	 * steal since: its reads cannot see the record). */
	assert_int_equal(pmu_guest_phys_star(p, 0, 1100), 600);

	/* The kernel is entered at 1200 with the record at 100: user time
	 * is 800 less the 100 stolen; the VMM then sees an exit at 1500. */
	guest_entry(p, 1200, 100);
	f->tsc = 1500;
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 700);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 600);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 1300);
	/* In kernel mode, the news is the kernel's. */
	pmu_vcpu_steal(f->v, 50);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 700);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 550);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 1250);
	pmu_vcpu_enter(f->v);
	assert_int_equal(pmu_guest_phys_star(p, 0, 1600), 700);
	assert_int_equal(pmu_guest_phys_star(p, 1, 1600), 650);
	assert_int_equal(pmu_guest_phys_star(p, 2, 1600), 1350);

	/* Counters of both modes alone need no clock. */
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 4);
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, 0);
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1, 0);
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	pmu_vcpu_enter(f->v);
	assert_int_equal(p->step.enable, 0);
	fx_free(f);
}

/*
 * The step source's cycles leave out what the VMM's single steps of kernel
 * code cost (pmu_vcpu_kernel_step_cost()), from the mode the guest's clock
 * was in when they were taken: a step before the entry stamp was counted
 * as user time.  The VMM's reads and the guest's agree.
 */
static void test_mode_clock_kernel_steps(void **state)
{
	struct fx *f = fx_new("step", "offset", true);
	struct pv_vpmu_vcpu_page *p = f->page[0];

	(void)state;
	cycles_by_mode(f);
	f->tsc = 100;
	pmu_vcpu_enter(f->v);
	p->guest.clock_on = 1;
	guest_return(p, 400, 0);
	pmu_vcpu_kernel_step_cost(f->v, 50);	/* stepped in "user" mode */
	guest_entry(p, 1000, 0);
	pmu_vcpu_kernel_step_cost(f->v, 200);
	assert_int_equal(p->kstep_ticks_user, 50);
	assert_int_equal(p->kstep_ticks_kernel, 200);
	f->tsc = 1500;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 600 - 50);
	assert_int_equal(pmu_vcpu_counter(f->v, 1), 300 + 500 - 200);
	assert_int_equal(pmu_vcpu_counter(f->v, 2), 1400 - 250);
	pmu_vcpu_enter(f->v);
	assert_int_equal(pmu_guest_phys_star(p, 0, 1600), 550);
	assert_int_equal(pmu_guest_phys_star(p, 1, 1600), 700);
	assert_int_equal(pmu_guest_phys_star(p, 2, 1600), 1250);
	fx_free(f);
}

/*
 * An interrupting counter of user cycles arms the host timer where it
 * could overflow at the soonest: from user mode, as if all time from now
 * were user time; from kernel mode, no sooner than 1 ms (tsc_khz ticks).
 */
static void test_mode_clock_timer(void **state)
{
	struct fx *f = fx_new("tsc", "offset", true);
	struct pv_vpmu_vcpu_page *p = f->page[0];
	uint64_t tsc = 0;

	(void)state;
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_CYCLES, PV_EVTSEL_USR | PV_EVTSEL_EN |
			PV_EVTSEL_INT));
	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0, (1ull << 48) - 5000);
	p->guest.clock_on = 1;
	guest_return(p, 100, 0);
	f->tsc = 100;
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(f->v);
	assert_true(pmu_vcpu_timer_deadline(f->v, &tsc));
	assert_int_equal(tsc, 5100);
	/* In the kernel at 1000, 900 user cycles in: the rest no sooner
	 * than 1 ms (10^6 ticks at the fixture's 1 GHz). */
	guest_entry(p, 1000, 0);
	f->tsc = 1000;
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	pmu_vcpu_enter(f->v);
	assert_true(pmu_vcpu_timer_deadline(f->v, &tsc));
	assert_int_equal(tsc, 1000 + 1000000);
	fx_free(f);
}

/* A hostile guest's clock (any values) reads as some number, never more
 * than the TSC itself for the kernel's part: no crash, no trap. */
static void test_mode_clock_garbage(void **state)
{
	struct fx *f = fx_new("tsc", "offset", true);
	struct pv_vpmu_vcpu_page *p = f->page[0];

	(void)state;
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1,
		 evtsel(PV_EVENT_CYCLES, PV_EVTSEL_OS | PV_EVTSEL_EN));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 2);
	pmu_vcpu_enter(f->v);
	memset(&p->guest, 0xff, sizeof(p->guest));
	f->tsc = 5000;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	pmu_vcpu_steal(f->v, 1ull << 62);
	pmu_vcpu_enter(f->v);
	(void)pmu_vcpu_counter(f->v, 1);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_clock),
		cmocka_unit_test(test_mode_clock_kernel_steps),
		cmocka_unit_test(test_mode_clock_timer),
		cmocka_unit_test(test_mode_clock_garbage),
	};

	return cmocka_run_group_tests_name("pmu_mode_clock", tests, NULL, NULL);
}
