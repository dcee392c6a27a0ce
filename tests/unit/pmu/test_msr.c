// SPDX-License-Identifier: MIT
/*
 * The architectural PMU as the guest sees it through rdmsr/wrmsr and
 * CPUID leaf 0xA.
 */
#include <errno.h>

#include "pmu_test.h"

static int setup(void **state)
{
	*state = fx_new("fake", "offset", false);
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

static void cycles_to(struct fx *f, uint64_t v)
{
	pmu_fake_set(f->src, 0, PV_EVENT_CYCLES, v);
}

/* PMC0 counting cycles, running (vCPU entered). */
static void count_cycles(struct fx *f)
{
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, evtsel(PV_EVENT_CYCLES, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	pmu_vcpu_enter(f->v);
}

static void test_pmc_legacy_write_sign_extends(void **state)
{
	struct fx *f = *state;

	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, 0x80000000u);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 0xffff80000000ull);
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1, 0x7fffffffu);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), 0x7fffffffull);
	/* The legacy address carries 32 bits: upper bits are ignored. */
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0 + 2, 0x1234567800000005ull);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 2), 5);
	/* -10 as a 32-bit value: the usual way to program a period. */
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0 + 3, (uint32_t)-10);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 3),
			 (1ull << 48) - 10);
}

static void test_pmc_full_width_write(void **state)
{
	struct fx *f = *state;

	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0, 0x123456789abcull);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 0x123456789abcull);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_A_PMC0), 0x123456789abcull);
	/* Bit 31 is not sign-extended through the full-width address. */
	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0 + 1, 0x80000000u);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0 + 1), 0x80000000u);
	/* Past the width: #GP, value unchanged. */
	assert_int_equal(pmu_msr_write(f->v, PV_MSR_IA32_A_PMC0, 1ull << 48),
			 PMU_MSR_GP);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_A_PMC0), 0x123456789abcull);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_CAPABILITIES),
			 PV_PERF_CAP_FW_WRITE);
}

static void test_counter_wraps_at_48_bits(void **state)
{
	struct fx *f = *state;

	count_cycles(f);
	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0, (1ull << 48) - 5);
	cycles_to(f, 10);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PMC0), 5);
	/* The wrap is an overflow: status bit 0 (no INT, so no PMI). */
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 1);
	assert_false(pmu_vcpu_enter(f->v));
}

static void test_global_ctrl_gates_counting(void **state)
{
	struct fx *f = *state;

	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, evtsel(PV_EVENT_CYCLES, EVT_ALL));
	pmu_vcpu_enter(f->v);
	cycles_to(f, 100);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_PMC0), 0);

	trap_wrmsr(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	cycles_to(f, 130);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_PMC0), 30);

	trap_wrmsr(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0);
	cycles_to(f, 200);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_PMC0), 30);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL), 0);
}

static void test_local_enable_and_modes(void **state)
{
	struct fx *f = *state;

	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0x3);
	/* EN without USR or OS counts nothing; USR|OS without EN neither. */
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0,
		 evtsel(PV_EVENT_CYCLES, PV_EVTSEL_EN));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0 + 1,
		 evtsel(PV_EVENT_CYCLES, PV_EVTSEL_USR | PV_EVTSEL_OS));
	pmu_vcpu_enter(f->v);
	cycles_to(f, 50);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_PMC0), 0);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_PMC0 + 1), 0);
	/* Edge detect or a threshold changes the meaning: not counted. */
	trap_wrmsr(f->v, PV_MSR_IA32_PERFEVTSEL0,
		   evtsel(PV_EVENT_CYCLES, EVT_ALL | (1ull << 24)));
	cycles_to(f, 80);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_PMC0), 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0),
			 evtsel(PV_EVENT_CYCLES, EVT_ALL | (1ull << 24)));
}

static void test_fixed_counters(void **state)
{
	struct fx *f = *state;

	/* FIXED_CTR0: instructions (OS|USR); FIXED_CTR1: cycles (USR). */
	wrmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR_CTRL, 0x23);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 0x3ull << 32);
	pmu_vcpu_enter(f->v);
	pmu_fake_set(f->src, 0, PV_EVENT_INSTRUCTIONS, 7);
	cycles_to(f, 11);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_FIXED_CTR0), 7);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_FIXED_CTR0 + 1), 11);
	assert_int_equal(trap_rdmsr(f->v, PV_MSR_IA32_FIXED_CTR0 + 2), 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR_CTRL), 0x23);
	/* Fixed counters are written full width. */
	wrmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR0 + 2, 0x800000000ull);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR0 + 2),
			 0x800000000ull);
	assert_int_equal(pmu_msr_write(f->v, PV_MSR_IA32_FIXED_CTR0,
				       1ull << 48), PMU_MSR_GP);
}

static void test_overflow_status_and_ovf_ctrl(void **state)
{
	struct fx *f = *state;

	wrmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR_CTRL, 0x30);	/* FIXED1 */
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1 | (0x2ull << 32));
	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, evtsel(PV_EVENT_CYCLES, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PMC0, (uint32_t)-3);
	wrmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR0 + 1, (1ull << 48) - 4);
	pmu_vcpu_enter(f->v);
	cycles_to(f, 3);
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 1);
	pmu_vcpu_enter(f->v);
	cycles_to(f, 4);
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS),
			 1 | (1ull << 33));
	/* Status is read-only; OVF_CTRL clears what it names. */
	assert_int_equal(pmu_msr_write(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS, 0),
			 PMU_MSR_GP);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS),
			 1ull << 33);
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL,
		 (1ull << 33) | PV_GLOBAL_COND_CHGD);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL), 0);
	/* Neither counter had INT/PMI set: no PMI. */
	assert_false(pmu_vcpu_enter(f->v));
}

/*
 * PV_HC_PMU_REARM is GLOBAL_OVF_CTRL, a counter read and a full-width
 * write, in that order: what a PMI handler did with three exits.
 */
static void test_pmi_rearm(void **state)
{
	struct fx *f = *state;

	count_cycles(f);
	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0, (1ull << 48) - 100);
	wrmsr_ok(f->v, PV_MSR_IA32_A_PMC0 + 1, 7);
	cycles_to(f, 130);	/* 30 past the wrap */
	pmu_vcpu_exit(f->v, PMU_EXIT_MSR);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 1);
	/* Acks, returns the count, and carries the skid over. */
	assert_int_equal(pmu_pmi_rearm(f->v, 0, 1000, 1), 30);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_STATUS), 0);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_A_PMC0),
			 (1ull << 48) - 970);
	/* A skid of a period or more: throttled to period + 2 skids. */
	assert_int_equal(pmu_pmi_rearm(f->v, 1, 5, 0), 7);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_A_PMC0 + 1),
			 (1ull << 48) - 19);
	/* Not a general counter, or a bit OVF_CTRL does not have: nothing
	 * changes. */
	assert_int_equal(pmu_pmi_rearm(f->v, PV_VPMU_NR_GP, 5, 0), -EINVAL);
	assert_int_equal(pmu_pmi_rearm(f->v, 0, 5, 1ull << 20), -EINVAL);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_A_PMC0),
			 (1ull << 48) - 970);
}

static void test_reserved_bits_gp(void **state)
{
	struct fx *f = *state;
	static const struct {
		uint32_t msr;
		uint64_t val;
	} bad[] = {
		{ PV_MSR_IA32_PERFEVTSEL0, 1ull << 32 },
		{ PV_MSR_IA32_PERFEVTSEL0 + 3, PV_EVTSEL_ANY },	/* v3 only */
		{ PV_MSR_IA32_FIXED_CTR_CTRL, 1ull << 12 },
		{ PV_MSR_IA32_FIXED_CTR_CTRL, PV_FIXED_CTRL_ANY << 4 },
		{ PV_MSR_IA32_PERF_GLOBAL_CTRL, 1ull << 4 },
		{ PV_MSR_IA32_PERF_GLOBAL_CTRL, 1ull << 35 },
		{ PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 5 },
		{ PV_MSR_IA32_PERF_CAPABILITIES, 0 },
	};

	wrmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0, evtsel(PV_EVENT_CYCLES, EVT_ALL));
	wrmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pmu_msr_write(f->v, bad[i].msr, bad[i].val),
				 PMU_MSR_GP);
	/* A refused write changes nothing. */
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERFEVTSEL0),
			 evtsel(PV_EVENT_CYCLES, EVT_ALL));
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_PERF_GLOBAL_CTRL), 1);
	assert_int_equal(rdmsr_ok(f->v, PV_MSR_IA32_FIXED_CTR_CTRL), 0);
}

static void test_unknown_msrs_gp(void **state)
{
	struct fx *f = *state;
	/* Slots the architecture has but our 4+3 counter PMU does not. */
	static const uint32_t unknown[] = {
		PV_MSR_IA32_PMC0 + 4, PV_MSR_IA32_PMC0 + 7,
		PV_MSR_IA32_PERFEVTSEL0 + 4, PV_MSR_IA32_A_PMC0 + 4,
		PV_MSR_IA32_FIXED_CTR0 + 3, 0x391, 0x392,
	};
	uint64_t val;

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_true(pmu_msr_is_pmu(unknown[i]));
		assert_int_equal(pmu_msr_read(f->v, unknown[i], &val),
				 PMU_MSR_GP);
		assert_int_equal(pmu_msr_write(f->v, unknown[i], 0),
				 PMU_MSR_GP);
	}
	/* Outside the PMU: not ours, and #GP if routed here anyway. */
	assert_false(pmu_msr_is_pmu(0x10));
	assert_false(pmu_msr_is_pmu(PV_MSR_IA32_PMC0 - 1));
	assert_int_equal(pmu_msr_read(f->v, 0x10, &val), PMU_MSR_GP);
}

static void test_msr_ranges_cover_offered_msrs(void **state)
{
	static const uint32_t offered[] = {
		PV_MSR_IA32_PMC0, PV_MSR_IA32_PMC0 + 3, PV_MSR_IA32_A_PMC0 + 3,
		PV_MSR_IA32_PERFEVTSEL0 + 3, PV_MSR_IA32_FIXED_CTR0 + 2,
		PV_MSR_IA32_FIXED_CTR_CTRL, PV_MSR_IA32_PERF_GLOBAL_STATUS,
		PV_MSR_IA32_PERF_GLOBAL_CTRL, PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL,
		PV_MSR_IA32_PERF_CAPABILITIES,
	};
	size_t n;
	const struct pmu_msr_range *r = pmu_msr_ranges(&n);

	(void)state;
	for (size_t i = 0; i < sizeof(offered) / sizeof(offered[0]); i++) {
		bool found = false;

		for (size_t j = 0; j < n; j++)
			found |= offered[i] - r[j].base < r[j].count;
		assert_true(found);
	}
}

static void test_cpuid_0xa(void **state)
{
	struct fx *f = *state;
	static const uint16_t two[] = { PV_EVENT_CYCLES, PV_EVENT_INSTRUCTIONS };
	struct pmu_cpuid_regs r;

	pmu_cpuid_0xa(f->pmu, &r);
	/* version 2, 4 GP counters, 48 bits, 7-bit EBX vector */
	assert_int_equal(r.eax, 0x07300402);
	assert_int_equal(r.ebx, 0);
	assert_int_equal(r.ecx, 0);
	assert_int_equal(r.edx, 3 | (48 << 5));
	/* A source that can count only cycles and instructions. */
	pmu_fake_set_events(f->src, two, 2);
	pmu_cpuid_0xa(f->pmu, &r);
	assert_int_equal(r.ebx, 0x7c);
	assert_int_equal(r.eax & 0xff, 2);

	memset(&r, 0, sizeof(r));
	pmu_cpuid_fixup_leaf1(&r, false, true);
	assert_int_equal(r.ecx, PV_CPUID1_ECX_PDCM);
	assert_int_equal(r.eax, 0);
	/* Intel: a Skylake, the stepping kept (an Ice Lake's here). */
	r.eax = 0x606a6;
	pmu_cpuid_fixup_leaf1(&r, true, true);
	assert_int_equal(r.eax, 0x506e6);
	/* AMD: Zen 4 (Genoa) and older kept, Zen 5 a Zen 3. */
	r.eax = 0xa10f11;
	pmu_cpuid_fixup_leaf1(&r, false, true);
	assert_int_equal(r.eax, 0xa10f11);
	r.eax = 0x830f10;
	pmu_cpuid_fixup_leaf1(&r, false, true);
	assert_int_equal(r.eax, 0x830f10);
	r.eax = 0xb00f21;
	pmu_cpuid_fixup_leaf1(&r, false, true);
	assert_int_equal(r.eax, 0xa00f11);
	/* ... unless user code would not see it: kept, and programs told. */
	r.eax = 0xb00f21;
	pmu_cpuid_fixup_leaf1(&r, false, false);
	assert_int_equal(r.eax, 0xb00f21);
	assert_true(pmu_cpuid_pfm_must_force(0x68747541, 0xb00f21));
	assert_false(pmu_cpuid_pfm_must_force(0x68747541, 0xa10f11));
	assert_false(pmu_cpuid_pfm_must_force(0x68747541, 0x830f10));
	assert_false(pmu_cpuid_pfm_must_force(0x756e6547, 0xb00f21));
}

static void test_cpuid_0xa_per_source(void **state)
{
	static const struct {
		const char *source;
		uint32_t ebx;
	} want[] = {
		/* cycles (bit 0) and ref-cycles (bit 2) only */
		{ "tsc", 0x7f & ~0x5u },
		/* instructions (bit 1) and branches (bit 5), and cycles and
		 * ref-cycles compensated for its traps */
		{ "step", 0x7f & ~0x27u },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct fx *f = fx_new(want[i].source, "offset", false);
		struct pmu_cpuid_regs r;

		pmu_cpuid_0xa(f->pmu, &r);
		assert_int_equal(r.ebx, want[i].ebx);
		fx_free(f);
	}
}

static void test_msr_traps_counted(void **state)
{
	struct fx *f = *state;
	struct pmu_vcpu_stats st;
	uint64_t val;

	pmu_msr_read(f->v, PV_MSR_IA32_PMC0, &val);
	pmu_msr_write(f->v, PV_MSR_IA32_PMC0 + 9, 0);
	pmu_vcpu_get_stats(f->v, &st);
	assert_int_equal(st.msr_traps, 2);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_pmc_legacy_write_sign_extends),
		T(test_pmc_full_width_write),
		T(test_counter_wraps_at_48_bits),
		T(test_global_ctrl_gates_counting),
		T(test_local_enable_and_modes),
		T(test_fixed_counters),
		T(test_overflow_status_and_ovf_ctrl),
		T(test_pmi_rearm),
		T(test_reserved_bits_gp),
		T(test_unknown_msrs_gp),
		T(test_msr_ranges_cover_offered_msrs),
		T(test_cpuid_0xa),
		cmocka_unit_test(test_cpuid_0xa_per_source),
		T(test_msr_traps_counted),
	};

	return cmocka_run_group_tests_name("pmu_msr", tests, NULL, NULL);
}
