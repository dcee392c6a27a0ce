// SPDX-License-Identifier: MIT
/*
 * i-mode: exact overflow with a step-like source, PMI requests with LVTPC
 * mask-on-delivery, and i-mode counter values travelling with threads.
 */
#include "pmu_test.h"

/* The guest's PMI handler: ack the status, reload the period, unmask. */
static void pmi_handler(struct pmu_vcpu *v, uint64_t period)
{
	uint64_t status;

	pmu_vcpu_exit(v, PMU_EXIT_MSR);
	status = rdmsr_ok(v, PV_MSR_IA32_PERF_GLOBAL_STATUS);
	assert_int_equal(status & 1, 1);
	wrmsr_ok(v, PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL, status);
	wrmsr_ok(v, PV_MSR_IA32_PMC0, (uint32_t)-(int64_t)period);
	pmu_vcpu_lvtpc_unmasked(v);
	assert_false(pmu_vcpu_enter(v));
}

/*
 * The guest runs `n` instructions with PMC0 programmed to interrupt every
 * `period`: the source stops at each armed deadline, the guest exits
 * (PV_HC_PMU_POLL), the PMI comes at the following entry.
 */
static uint64_t count_pmis(const char *policy, uint64_t period, uint64_t n)
{
	struct fx *f = fx_new("fake", policy, false);
	uint64_t pmis = 0, left = n;
	struct pmu_vcpu_stats st;

	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_INSTRUCTIONS, EVT_ALL | PV_EVTSEL_INT));
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-(int64_t)period);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	assert_false(pmu_vcpu_enter(f->v));
	while (left) {
		left -= pmu_fake_advance(f->src, 0, PV_EVENT_INSTRUCTIONS, left);
		pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
		if (pmu_vcpu_enter(f->v)) {
			pmis++;
			pmi_handler(f->v, period);
		}
	}
	assert_int_equal(pmu_fake_get(f->src, 0, PV_EVENT_INSTRUCTIONS), n);
	/* What is left after the last overflow is in the counter. */
	assert_int_equal(pmu_vcpu_counter(f->v, 0),
			 ((1ull << 48) - period + n % period) & PV_VPMU_MASK);
	pmu_vcpu_get_stats(f->v, &st);
	assert_int_equal(st.pmis, pmis);
	assert_int_equal(st.overflows, pmis);
	fx_free(f);
	return pmis;
}

/*
 * The guest's re-arm rule (uapi/vpmu.h): skid carries over, a long skid
 * backs off, and a counter stepped back short of the wrap by steal time
 * counts as no skid.  Read as skid, that last case put the next sample
 * 2^49 events away and `vmm record` stopped sampling on a loaded host.
 */
static void test_rearm_distance(void **state)
{
	(void)state;
	assert_int_equal(pv_vpmu_rearm_dist(0, 1000), 1000);
	assert_int_equal(pv_vpmu_rearm_dist(300, 1000), 700);
	assert_int_equal(pv_vpmu_rearm_dist(1000, 1000), 3000);
	assert_int_equal(pv_vpmu_rearm_dist(5000, 1000), 11000);
	assert_int_equal(pv_vpmu_rearm_dist(PV_VPMU_MASK - 7587071, 20000),
			 20000);
	assert_int_equal(pv_vpmu_rearm_dist(PV_VPMU_MASK, 20000), 20000);
	/* Set that far short of the wrap, and back. */
	assert_int_equal(pv_vpmu_before_wrap(1000), PV_VPMU_MASK - 999);
	assert_int_equal(pv_vpmu_before_wrap(PV_VPMU_MASK - 999), 1000);
	assert_int_equal(pv_vpmu_before_wrap(0), 0);
}

static void test_exact_overflow_count(void **state)
{
	static const struct {
		uint64_t period, n;
	} cases[] = {
		{ 7, 100 }, { 10, 100 }, { 1, 5 }, { 100, 99 }, { 100, 100 },
		{ 3, 1000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(count_pmis("offset", cases[i].period,
					    cases[i].n),
				 cases[i].n / cases[i].period);
		assert_int_equal(count_pmis("saverestore", cases[i].period,
					    cases[i].n),
				 cases[i].n / cases[i].period);
	}
}

static void test_step_like_source_stops_at_deadline(void **state)
{
	struct fx *f = fx_new("fake", "offset", false);

	(void)state;
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_INSTRUCTIONS, EVT_ALL | PV_EVTSEL_INT));
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-10);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(f->v);
	/* Zero skid: the 10th event is the last one before the exit. */
	assert_int_equal(pmu_fake_advance(f->src, 0, PV_EVENT_INSTRUCTIONS,
					  25), 10);
	assert_int_equal(pmu_fake_advance(f->src, 0, PV_EVENT_INSTRUCTIONS,
					  25), 0);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 0);
	assert_true(pmu_vcpu_enter(f->v));
	fx_free(f);
}

static void test_lvtpc_masked_until_unmasked(void **state)
{
	struct fx *f = fx_new("fake", "offset", false);

	(void)state;
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT));
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-5);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(f->v);
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 5);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_true(pmu_vcpu_enter(f->v));
	/* Acknowledged (the freeze ends) with LVTPC still masked: a second
	 * overflow sets status, no PMI. */
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-5);
	assert_false(pmu_vcpu_enter(f->v));
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 10);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_false(pmu_vcpu_enter(f->v));
	assert_false(pmu_vcpu_take_pmi(f->v));
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 1);
	/* Unmasked: the PMI of the masked overflow was lost, as on
	 * hardware, and the next overflow interrupts again. */
	pmu_vcpu_lvtpc_unmasked(f->v);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_false(pmu_vcpu_enter(f->v));
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-5);
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 15);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_true(pmu_vcpu_enter(f->v));
	fx_free(f);
}

/*
 * A delivered PMI freezes every counter until the guest acknowledges it:
 * the handler's own events (an exit and an emulated kernel path here) are
 * not the program's.  Each way of acknowledging ends the freeze.
 */
static void test_pmi_freezes_until_ack(void **state)
{
	static const int acks[] = { 0, 1, 2 };

	(void)state;
	for (size_t k = 0; k < sizeof(acks) / sizeof(acks[0]); k++) {
		struct fx *f = fx_new("fake", "offset", false);

		wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
			 evtsel(PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT));
		wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1,
			 evtsel(PV_EVENT_INSTRUCTIONS, EVT_ALL));
		wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-5);
		wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 3);
		assert_false(pmu_vcpu_enter(f->v));
		pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 7);
		pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 4);
		pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
		assert_true(pmu_vcpu_enter(f->v));
		/* The handler runs: nothing counts, across its exits too. */
		pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 1007);
		pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 504);
		pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
		assert_false(pmu_vcpu_enter(f->v));
		/* Unmasking LVTPC first does not end the freeze. */
		pmu_vcpu_lvtpc_unmasked(f->v);
		assert_false(pmu_vcpu_enter(f->v));
		pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 1107);
		pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
		assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 2);
		assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), 4);
		if (acks[k] == 0)
			wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
		else if (acks[k] == 1)
			wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 3);
		else
			assert_int_equal(pmu_pmi_rearm(f->v, 0, 100, 1), 2);
		assert_false(pmu_vcpu_enter(f->v));
		pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 1110);
		pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 510);
		pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
		assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), 10);
		assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0),
				 acks[k] == 2 ? ((1ull << 48) - 98 + 3) : 5);
		fx_free(f);
	}
}

/*
 * The tsc source, PMC0 sampling cycles every `period` from 0 (PMC1
 * counting them too): the overflow at `period`, the exit that finds it at
 * 130, the PMI delivered at 140, the handler's exit at 500.
 */
static struct fx *tsc_pmi_handler(uint64_t period)
{
	struct fx *f = fx_new("tsc", "offset", true);

	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1,
		 evtsel(PV_EVENT_CYCLES, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-(int64_t)period);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 3);
	assert_false(pmu_vcpu_enter(f->v));
	f->tsc = 130;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	f->tsc = 140;
	assert_true(pmu_vcpu_enter(f->v));
	f->tsc = 500;
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	return f;
}

/*
 * One more PMI after tsc_pmi_handler(): the re-arm by the handler, the
 * overflow found `skid` past the wrap with `steal_ns` of host preemption
 * reported at that exit, the PMI and the handler.  Returns the guest time
 * the counters ran unfrozen.
 */
static uint64_t tsc_pmi_again(struct fx *f, uint64_t skid, uint64_t steal_ns)
{
	uint64_t to_wrap;

	pmu_pmi_rearm(f->v, 0, 1000, 1);
	pmu_vcpu_lvtpc_unmasked(f->v);
	to_wrap = (1ull << 48) - rdmsr_ok(f->v, PV_MSR_IA32_PMC0);
	f->tsc += 10;
	assert_false(pmu_vcpu_enter(f->v));
	f->tsc += to_wrap + skid;
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	if (steal_ns)
		pmu_vcpu_steal(f->v, steal_ns);
	f->tsc += 10;
	assert_true(pmu_vcpu_enter(f->v));
	f->tsc += 360;
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	return to_wrap + skid;
}

/*
 * Time counters freeze where the overflow was, not at the exit that found
 * it: the least skid seen is a kick's way out of KVM_RUN, the rest held
 * the kick while the program ran.  A handful of skids is no floor (one
 * slow first kick under QEMU was the whole loop of a counting leader), so
 * nothing is dropped before PMU_SKID_LEARN of them.
 */
static void test_pmi_freeze_drops_least_skid(void **state)
{
	struct fx *f = tsc_pmi_handler(100);	/* skid 30 */
	uint64_t ran = 130;

	(void)state;
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 30);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), ran);
	for (unsigned int k = 2; k < PMU_SKID_LEARN; k++) {
		ran += tsc_pmi_again(f, 30 + k, 0);
		assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 30 + k);
		assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), ran);
	}
	/* The last to learn, skid 45: the least, 30, is dropped. */
	ran += tsc_pmi_again(f, 45, 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 15);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), ran - 30);
	fx_free(f);
}

/*
 * Host steal reported at the exit that found the overflow is dropped as
 * steal, and is then no part of the skid: a skid of 100 with 80 of steal
 * is a skid of 20, the new least.  Taken twice, the leader lost 100 more.
 */
static void test_pmi_skid_leaves_out_steal(void **state)
{
	struct fx *f = tsc_pmi_handler(100);
	uint64_t ran = 130;

	(void)state;
	for (unsigned int k = 2; k <= PMU_SKID_LEARN; k++)
		ran += tsc_pmi_again(f, 30, 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), ran - 30);
	ran += tsc_pmi_again(f, 100, 80);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1),
			 ran - 30 - 80 - 20);
	fx_free(f);
}

/*
 * A period shorter than the handler: the skid (30, none left out yet)
 * with the handler's frozen time (140 to 500) is what the re-arm backs off
 * by, or the unfrozen tail of the handler overflowed again, PMI after PMI.
 * It still returns the count it read.
 */
static void test_pmi_backoff_past_handler(void **state)
{
	struct fx *f = tsc_pmi_handler(100);

	(void)state;
	assert_int_equal(pmu_pmi_rearm(f->v, 0, 100, 1), 30);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0),
			 (1ull << 48) - pv_vpmu_rearm_dist(30 + 360, 100));
	fx_free(f);
}

static void test_fixed_counter_pmi_bit(void **state)
{
	struct fx *f = fx_new("fake", "offset", false);

	(void)state;
	/* FIXED_CTR1 (cycles) with OS|USR|PMI, FIXED_CTR2 without PMI. */
	wrmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR_CTRL, 0x3b0);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0x6ull << 32);
	wrmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR0 + 2, (1ull << 48) - 1);
	pmu_vcpu_enter(f->v);
	pmu_fake_set(f->src, 0, PV_EVENT_REF_CYCLES, 1);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_false(pmu_vcpu_enter(f->v));
	wrmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR0 + 1, (1ull << 48) - 2);
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, 2);
	pmu_vcpu_exit(f->v, PMU_EXIT_OTHER);
	assert_true(pmu_vcpu_enter(f->v));
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS),
			 0x6ull << 32);
	fx_free(f);
}

/*
 * offset policy, two threads with interrupting counters: each thread's
 * period runs only while it runs (the counter is saved/restored), and the
 * switch needs the hypercall.
 */
static void test_imode_counter_travels_with_thread(void **state)
{
	struct fx *f = fx_new("fake", "offset", false);
	struct pv_vpmu_thread_page *a = fx_thread_alloc();
	struct pv_vpmu_thread_page *b = fx_thread_alloc();
	uint64_t insns = 0;

	(void)state;
	thread_config(a, PV_EVENT_INSTRUCTIONS, EVT_ALL | PV_EVTSEL_INT, 1);
	thread_config(b, PV_EVENT_INSTRUCTIONS, EVT_ALL | PV_EVTSEL_INT, 1);
	a->ctr[0].saved = (1ull << 48) - 10;
	b->ctr[0].saved = (1ull << 48) - 100;
	assert_int_equal(pmu_guest_switch_exits(f->page[0], a, b), 1);

	pmu_vcpu_enter(f->v);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(f->v, NULL, a), 0);
	pmu_vcpu_enter(f->v);
#define RUN(k) do { insns += (k); \
	pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, insns); } while (0)
#define SWITCH(o, i) do { pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL); \
	assert_int_equal(pmu_thread_switch(f->v, o, i), 0); \
	assert_false(pmu_vcpu_enter(f->v)); } while (0)
	RUN(6);
	SWITCH(a, b);
	assert_int_equal(a->ctr[0].saved, (1ull << 48) - 4);
	RUN(6);
	SWITCH(b, a);
	assert_int_equal(b->ctr[0].saved, (1ull << 48) - 94);
	RUN(4);
	/* A's 10th instruction: A's counter overflows, B's does not. */
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_true(pmu_vcpu_enter(f->v));
	assert_int_equal(pmu_vcpu_counter(f->v, 0), 0);
#undef RUN
#undef SWITCH
	free(a);
	free(b);
	fx_free(f);
}

/*
 * Threads a and b each interrupting on instructions, saved and restored
 * (i-mode), a 3 instructions short of its overflow and running.
 */
static void two_threads_run_a(struct fx *f, struct pv_vpmu_thread_page *a,
			      struct pv_vpmu_thread_page *b)
{
	thread_config(a, PV_EVENT_INSTRUCTIONS, EVT_ALL | PV_EVTSEL_INT, 1);
	thread_config(b, PV_EVENT_INSTRUCTIONS, EVT_ALL | PV_EVTSEL_INT, 1);
	a->ctr[0].saved = (1ull << 48) - 3;
	pmu_vcpu_enter(f->v);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	pmu_thread_switch(f->v, NULL, a);
	pmu_vcpu_enter(f->v);
}

/* An overflow the outgoing thread did not get yet follows it. */
static void test_pending_overflow_follows_owner(void **state)
{
	struct fx *f = fx_new("fake", "saverestore", false);
	struct pv_vpmu_thread_page *a = fx_thread_alloc();
	struct pv_vpmu_thread_page *b = fx_thread_alloc();

	(void)state;
	two_threads_run_a(f, a, b);
	/* A overflows right before it switches out (in the same exit). */
	pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 3);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(f->v, a, b), 0);
	assert_int_equal(a->pending_status, 1);
	/* B must not get A's PMI or see A's status bit. */
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 0);
	assert_false(pmu_vcpu_enter(f->v));
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(f->v, b, a), 0);
	assert_int_equal(a->pending_status, 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 1);
	assert_true(pmu_vcpu_enter(f->v));
	free(a);
	free(b);
	fx_free(f);
}

/*
 * The vCPU page's pmi_ip: where the exit that found the overflow was (the
 * guest's PMI comes later, at its next return to user mode).  The first
 * overflow of a PMI sets it; one raised again for a resumed thread has no
 * place (0), its overflow being that thread's past.
 */
static void test_pmi_ip(void **state)
{
	struct fx *f = fx_new("fake", "saverestore", false);
	struct pv_vpmu_thread_page *a = fx_thread_alloc();
	struct pv_vpmu_thread_page *b = fx_thread_alloc();

	(void)state;
	two_threads_run_a(f, a, b);
	/* No overflow at this exit: nothing noted. */
	pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 1);
	pmu_vcpu_exit_ip(f->v, 0x401000, false);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_false(pmu_vcpu_enter(f->v));
	assert_int_equal(f->page[0]->pmi_ip, 0);
	/* Overflow found at an exit in the kernel. */
	pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 3);
	pmu_vcpu_exit_ip(f->v, 0xffffffff80123456ull, true);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_true(pmu_vcpu_enter(f->v));
	assert_int_equal(f->page[0]->pmi_ip, 0xffffffff80123456ull);
	assert_int_equal(f->page[0]->pmi_kernel, 1);
	/* A overflows again, LVTPC unmasked, and switches out at that exit:
	 * B runs, then A again, whose PMI comes with no place. */
	pmu_vcpu_lvtpc_unmasked(f->v);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-2);
	pmu_vcpu_enter(f->v);
	pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 5);
	pmu_vcpu_exit_ip(f->v, 0x402000, false);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(f->v, a, b), 0);
	assert_false(pmu_vcpu_enter(f->v));
	pmu_vcpu_exit_ip(f->v, 0xffffffff80200000ull, true);
	pmu_vcpu_exit(f->v, PMU_EXIT_HYPERCALL);
	assert_int_equal(pmu_thread_switch(f->v, b, a), 0);
	assert_true(pmu_vcpu_enter(f->v));
	assert_int_equal(f->page[0]->pmi_ip, 0);
	assert_int_equal(f->page[0]->pmi_kernel, 0);
	free(a);
	free(b);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rearm_distance),
		cmocka_unit_test(test_exact_overflow_count),
		cmocka_unit_test(test_step_like_source_stops_at_deadline),
		cmocka_unit_test(test_lvtpc_masked_until_unmasked),
		cmocka_unit_test(test_pmi_freezes_until_ack),
		cmocka_unit_test(test_pmi_freeze_drops_least_skid),
		cmocka_unit_test(test_pmi_skid_leaves_out_steal),
		cmocka_unit_test(test_pmi_backoff_past_handler),
		cmocka_unit_test(test_fixed_counter_pmi_bit),
		cmocka_unit_test(test_imode_counter_travels_with_thread),
		cmocka_unit_test(test_pending_overflow_follows_owner),
		cmocka_unit_test(test_pmi_ip),
	};

	return cmocka_run_group_tests_name("pmu_overflow", tests, NULL, NULL);
}
