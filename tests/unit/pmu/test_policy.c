// SPDX-License-Identifier: MIT
/*
 * The policy table and the exits each policy costs per context switch.
 */
#include "pmu_test.h"
#include "vpmu_guest.h"

static void test_lookup_by_name_and_id(void **state)
{
	static const struct {
		const char *name;
		uint32_t id;
	} want[] = {
		{ "offset", PV_VPMU_POLICY_OFFSET },
		{ "saverestore", PV_VPMU_POLICY_SAVERESTORE },
		{ "raw", PV_VPMU_POLICY_RAW },
		{ "wallclock", 16 },	/* the examples of docs/policies.md */
		{ "sampled", 17 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct pmu_policy_ops *p = pmu_policy_lookup(want[i].name);

		assert_non_null(p);
		assert_string_equal(p->name, want[i].name);
		assert_int_equal(p->id, want[i].id);
		assert_ptr_equal(pmu_policy_lookup_id(want[i].id), p);
	}
	assert_null(pmu_policy_lookup("offse"));
	assert_null(pmu_policy_lookup(""));
	assert_null(pmu_policy_lookup_id(PV_VPMU_POLICY_NONE));
	assert_null(pmu_policy_lookup_id(9999));
}

/* A policy without a guest half the guest accepts is refused up front. */
static void test_create_rejects_policy_without_rule(void **state)
{
	struct pmu_policy_ops bad = *pmu_policy_lookup("offset");
	struct pmu_config cfg = {
		.nr_vcpus = 1, .source = "fake", .policy_ops = &bad,
	};
	struct pmu *pmu;
	const char *err;

	(void)state;
	bad.switch_rule = 0;
	assert_int_equal(pmu_create(&cfg, &pmu, &err), -22);
	assert_null(pmu);
	/* Bits 8-23 are the period; bit 24 is no flag, nor bit 6. */
	bad.switch_rule = PMU_SWITCH_RULE_OFFSET | (1u << 24);
	assert_int_equal(pmu_create(&cfg, &pmu, &err), -22);
	assert_string_equal(err, "policy has no valid guest switch rule");
	bad.switch_rule = PMU_SWITCH_RULE_OFFSET | (1u << 6);
	assert_int_equal(pmu_create(&cfg, &pmu, &err), -22);
	bad.switch_rule = PMU_SWITCH_RULE_OFFSET;
	assert_int_equal(pmu_create(&cfg, &pmu, &err), 0);
	pmu_destroy(pmu);
	bad.switch_rule = PMU_SWITCH_RULE_OFFSET | PV_SWITCH_PERIOD(65535);
	assert_int_equal(pmu_create(&cfg, &pmu, &err), 0);
	pmu_destroy(pmu);
}

static void test_table_is_consistent(void **state)
{
	size_t n = 0;

	(void)state;
	for (const struct pmu_policy_ops *p; (p = pmu_policy_at(n)); n++) {
		/* Required hooks. */
		assert_non_null(p->name);
		assert_non_null(p->vcpu_deschedule);
		assert_non_null(p->vcpu_resume);
		assert_non_null(p->thread_out);
		assert_non_null(p->thread_in);
		/* A guest half the guest kernel accepts. */
		assert_true(pv_switch_rule_ok(p->switch_rule));
		assert_int_not_equal(p->id, PV_VPMU_POLICY_NONE);
		/* Unique names and ids: lookups find this entry. */
		assert_ptr_equal(pmu_policy_lookup(p->name), p);
		assert_ptr_equal(pmu_policy_lookup_id(p->id), p);
	}
	assert_true(n >= 4);
}

/* The rule in the words `vmm --list-policies` gives the test scripts. */
static void test_switch_rule_words(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(pmu_switch_rule_format(PMU_SWITCH_RULE_OFFSET, buf,
						sizeof(buf)), 0);
	assert_string_equal(buf, "exit-imode exit-config-active fold");
	assert_int_equal(pmu_switch_rule_format(
		pmu_policy_lookup("saverestore")->switch_rule, buf,
		sizeof(buf)), 0);
	assert_string_equal(buf, "exit-active loaded");
	assert_int_equal(pmu_switch_rule_format(PV_SWITCH_VALID |
		PV_SWITCH_EXIT_CONFIG | PV_SWITCH_PERIOD(300), buf,
		sizeof(buf)), 0);
	assert_string_equal(buf, "exit-config period=300");
	assert_int_equal(pmu_switch_rule_format(PV_SWITCH_VALID, buf,
						sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* Cut short: an error, and still a string. */
	assert_int_equal(pmu_switch_rule_format(PMU_SWITCH_RULE_OFFSET, buf,
						12), -1);
	assert_int_equal(strlen(buf), 11);
}

static void test_create_rejects_unknown_names(void **state)
{
	struct pmu_config cfg = { .nr_vcpus = 1, .source = "fake" };
	struct pmu *pmu;
	const char *err;

	(void)state;
	cfg.policy = "nope";
	assert_int_equal(pmu_create(&cfg, &pmu, &err), -22);
	assert_null(pmu);
	assert_string_equal(err, "unknown policy");
	cfg.policy = "raw";
	cfg.source = "nope";
	assert_int_equal(pmu_create(&cfg, &pmu, &err), -22);
	assert_string_equal(err, "unknown event source");
	cfg.source = "fake";
	assert_int_equal(pmu_create(&cfg, &pmu, &err), 0);
	assert_string_equal(pmu_policy_name(pmu), "raw");
	assert_int_equal(pmu_policy_id(pmu), PV_VPMU_POLICY_RAW);
	assert_string_equal(pmu_source_name(pmu), "fake");
	assert_int_equal(pmu_source_id(pmu), PV_VPMU_SOURCE_FAKE);
	pmu_destroy(pmu);
}

/* Exits of one switch under pol's rule, as the guest computes them. */
static unsigned int exits(const struct pmu_policy_ops *pol,
			  struct pv_vpmu_vcpu_page *vp,
			  const struct pv_vpmu_thread_page *out,
			  const struct pv_vpmu_thread_page *in)
{
	vp->switch_rule = pol->switch_rule;
	return pmu_guest_switch_exits(vp, out, in);
}

/*
 * The next rule after `rule` of those made of the bits in `bits`, in
 * increasing order; 0 after the last (`bits` itself).
 */
static uint32_t next_rule(uint32_t rule, uint32_t bits)
{
	return (rule - bits) & bits;
}

/*
 * The guest's fast test of a switch may only skip the whole rule where
 * the rule would not exit: every combination of the bits in
 * PV_SWITCH_KNOWN (a flag added there is tried without editing this
 * test), both sides' i-mode and a-mode counters, the incoming page absent
 * or present, its configuration loaded or not.  And it must hold in the
 * common case it exists for.
 */
static void test_switch_fast_test_never_skips_an_exit(void **state)
{
	struct pv_vpmu_vcpu_page *vp = fx_page_alloc();
	struct pv_vpmu_thread_page *in = fx_thread_alloc();
	const uint32_t bits = PV_SWITCH_KNOWN & ~PV_SWITCH_VALID;
	unsigned int taken = 0, rules = 0;
	uint32_t rule = 0;

	(void)state;
	do {
		rules++;
		for (unsigned int m = 0; m < 64; m++) {
			struct pv_vpmu_masks om = { m & 1, (m >> 1) & 1 };
			struct pv_vpmu_masks im = { (m >> 2) & 1, (m >> 3) & 1 };
			const struct pv_vpmu_thread_page *ip = (m & 16) ? in : NULL;

			vp->switch_rule = rule | PV_SWITCH_VALID;
			vp->config_id = 1;
			in->config_id = (m & 32) ? 2 : 1;
			if (!ip)
				im = (struct pv_vpmu_masks){ 0, 0 };
			if (!pv_vpmu_switch_stays_local(vp, om.intr | im.intr, ip))
				continue;
			taken++;
			assert_false(pv_vpmu_switch_exits(vp, om, ip, im));
		}
		rule = next_rule(rule, bits);
	} while (rule);
	/* Every combination of the known bits was tried, VALID aside. */
	assert_int_equal(rules, 1u << __builtin_popcount(bits));
	assert_true(taken > 0);
	/* offset, threads of one configuration: the fast test decides. */
	vp->switch_rule = pmu_policy_lookup("offset")->switch_rule;
	in->config_id = vp->config_id;
	assert_true(pv_vpmu_switch_stays_local(vp, 0, in));
	assert_false(pv_vpmu_switch_stays_local(vp, 1, in));
	free(vp);
	free(in);
}

static void test_switch_costs(void **state)
{
	struct pv_vpmu_vcpu_page *vp = fx_page_alloc();
	struct pv_vpmu_thread_page *a = fx_thread_alloc();
	struct pv_vpmu_thread_page *b = fx_thread_alloc();
	struct pv_vpmu_thread_page *idle = fx_thread_alloc();
	const struct pmu_policy_ops *off = pmu_policy_lookup("offset");
	const struct pmu_policy_ops *sr = pmu_policy_lookup("saverestore");
	const struct pmu_policy_ops *raw = pmu_policy_lookup("raw");

	(void)state;
	thread_config(a, PV_EVENT_CYCLES, EVT_ALL, 1);
	thread_config(b, PV_EVENT_CYCLES, EVT_ALL, 1);
	vp->config_id = 1;
	/* Equal configurations: offset switches with no exit at all. */
	assert_int_equal(exits(off, vp, a, b), 0);
	assert_int_equal(exits(sr, vp, a, b), 1);
	assert_int_equal(exits(raw, vp, a, b), 0);
	/* To a thread that counts nothing: nothing to load. */
	assert_int_equal(exits(off, vp, a, idle), 0);
	assert_int_equal(exits(sr, vp, idle, NULL), 0);
	/* A different configuration needs it loaded: one exit. */
	thread_config(b, PV_EVENT_INSTRUCTIONS, EVT_ALL, 2);
	assert_int_equal(exits(off, vp, a, b), 1);
	assert_int_equal(exits(off, vp, b, a), 0);
	/* raw never switches counters, but loads a new configuration. */
	assert_int_equal(exits(raw, vp, a, b), 1);
	assert_int_equal(exits(raw, vp, b, a), 0);
	/* i-mode counters are saved and restored: one exit. */
	thread_config(b, PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT, 1);
	assert_int_equal(exits(off, vp, a, b), 1);
	assert_int_equal(exits(off, vp, b, a), 1);
	free(vp);
	free(a);
	free(b);
	free(idle);
}

/*
 * The steal exit of the guest's switch decision (pv_vpmu_switch_step(),
 * the guest kernel's and the model's): a switch that stays in the guest
 * under a folding rule exits once first when KVM's steal record shows
 * steal the VMM has not dropped (more than the page's steal_ns, or the
 * record half written); never without a record, never under a rule that
 * does not fold, and a switch that exits anyway needs no such exit.
 */
static void test_switch_step_steal(void **state)
{
	struct pv_vpmu_vcpu_page *vp = fx_page_alloc();
	struct pv_vpmu_thread_page *a = fx_thread_alloc();
	struct pv_vpmu_thread_page *b = fx_thread_alloc();
	struct pv_vpmu_thread_page *idle = fx_thread_alloc();
	struct pv_steal_record rec = { .steal = 5000, .version = 2 };

	(void)state;
	thread_config(a, PV_EVENT_CYCLES, EVT_ALL, 1);
	thread_config(b, PV_EVENT_CYCLES, EVT_ALL, 1);
	vp->config_id = 1;
	vp->steal_ns = 5000;
	vp->switch_rule = pmu_policy_lookup("offset")->switch_rule;
	assert_int_equal(pmu_guest_switch_step(vp, a, b, NULL),
			 PV_SWITCH_STEP_LOCAL);
	assert_int_equal(pmu_guest_switch_step(vp, a, b, &rec),
			 PV_SWITCH_STEP_LOCAL);
	rec.steal = 5001;
	assert_int_equal(pmu_guest_switch_step(vp, a, b, &rec),
			 PV_SWITCH_STEP_POLL);
	assert_int_equal(pmu_guest_switch_step(vp, a, b, NULL),
			 PV_SWITCH_STEP_LOCAL);
	rec.steal = 5000;
	rec.version = 3;	/* KVM is writing it */
	assert_int_equal(pmu_guest_switch_step(vp, a, b, &rec),
			 PV_SWITCH_STEP_POLL);
	/* An exit anyway: the VMM drops steal at it. */
	thread_config(b, PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT, 1);
	assert_int_equal(pmu_guest_switch_step(vp, a, b, &rec),
			 PV_SWITCH_STEP_SWITCH);
	/* No fold, nothing for steal to spoil. */
	vp->switch_rule = pmu_policy_lookup("saverestore")->switch_rule;
	assert_int_equal(pmu_guest_switch_step(vp, idle, NULL, &rec),
			 PV_SWITCH_STEP_LOCAL);
	assert_int_equal(pmu_guest_switch_step(vp, a, b, &rec),
			 PV_SWITCH_STEP_SWITCH);
	free(vp);
	free(a);
	free(b);
	free(idle);
}

/*
 * The model reads counts with the guest's own code, step-back rule
 * included: after the VMM dropped steal time, Phys* a little below
 * Start* reads as no progress, not as 2^48 minus a little.
 */
static void test_guest_read_step_back(void **state)
{
	struct pv_vpmu_vcpu_page *vp = fx_page_alloc();
	struct pv_vpmu_thread_page *t = fx_thread_alloc();

	(void)state;
	vp->ctr[0].flags = PV_VPMU_CTR_ENABLED | PV_VPMU_CTR_RUNNING;
	vp->ctr[0].read = PV_VPMU_READ_TSC;
	vp->ctr[0].sum = 1000;
	vp->ctr[0].start = 5000;
	t->ctr[0].sum = 70;
	t->ctr[0].start = 1100;
	/* Phys = 5200: Phys* = 1200, log = 70 + 100. */
	assert_int_equal(pmu_guest_phys_star(vp, 0, 5200), 1200);
	assert_int_equal(pmu_guest_read(vp, t, 0, 5200), 170);
	/* Phys* stepped back below Start*_thread: no progress. */
	assert_int_equal(pmu_guest_read(vp, t, 0, 5050), 70);
	/* Phys below Start_vcpu: Phys* stays Sum_vcpu. */
	assert_int_equal(pmu_guest_phys_star(vp, 0, 4990), 1000);
	free(vp);
	free(t);
}

/*
 * Reads of a counter loaded with its thread take the one rule of
 * pv_vpmu_running_value(), the guest kernel's and libvpmu's: an
 * interrupting counter near 2^48 (2^48 - period, counting up to its
 * overflow) is read whole, while a loaded counting counter whose Phys*
 * stepped back past 0 (steal dropped) reads 0, not 2^48 less a little.
 */
static void test_guest_read_loaded_step_back(void **state)
{
	struct pv_vpmu_vcpu_page *vp = fx_page_alloc();
	struct pv_vpmu_thread_page *t = fx_thread_alloc();
	const uint64_t near_wrap = PV_VPMU_MASK + 1 - 100;

	(void)state;
	vp->ctr[0].flags = PV_VPMU_CTR_ENABLED | PV_VPMU_CTR_RUNNING;
	vp->ctr[0].read = PV_VPMU_READ_TSC;
	/* Loaded: Sum_vcpu is the thread's value, Sum/Start_thread 0. */
	vp->ctr[0].sum = near_wrap;
	vp->ctr[0].start = 5000;
	thread_config(t, PV_EVENT_CYCLES, EVT_ALL | PV_EVTSEL_INT, 1);
	assert_int_equal(pmu_guest_read(vp, t, 0, 5040), near_wrap + 40);
	/* The same value of a counter that does not interrupt: stepped
	 * back past 0, no events. */
	thread_config(t, PV_EVENT_CYCLES, EVT_ALL, 1);
	assert_int_equal(pmu_guest_read(vp, t, 0, 5040), 0);
	vp->ctr[0].sum = 300;
	assert_int_equal(pmu_guest_read(vp, t, 0, 5040), 340);
	/* The rule itself, as the guest kernel calls it. */
	assert_int_equal(pv_vpmu_running_value(&t->ctr[0], near_wrap, true),
			 near_wrap);
	assert_int_equal(pv_vpmu_running_value(&t->ctr[0], near_wrap, false),
			 0);
	t->ctr[0].sum = 70;
	t->ctr[0].start = 1100;
	assert_int_equal(pv_vpmu_running_value(&t->ctr[0], 1200, false), 170);
	assert_int_equal(pv_vpmu_running_value(&t->ctr[0], 1050, false), 70);
	free(vp);
	free(t);
}

static void test_event_names(void **state)
{
	uint16_t ev;

	(void)state;
	assert_int_equal(pmu_event_lookup("instructions", &ev), 0);
	assert_int_equal(ev, PV_EVENT(0xc0, 0));
	assert_int_equal(pmu_event_lookup("ref-cycles", &ev), 0);
	assert_int_equal(ev, PV_EVENT(0x3c, 1));
	assert_int_equal(pmu_event_lookup("vmexits.msr", &ev), 0);
	assert_int_equal(ev, PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_MSR));
	assert_int_not_equal(pmu_event_lookup("instructionz", &ev), 0);
	assert_string_equal(pmu_event_name(PV_EVENT_VMM_TIME), "vmm-time");
	assert_null(pmu_event_name(PV_EVENT(0x12, 0x34)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_by_name_and_id),
		cmocka_unit_test(test_table_is_consistent),
		cmocka_unit_test(test_create_rejects_unknown_names),
		cmocka_unit_test(test_switch_rule_words),
		cmocka_unit_test(test_create_rejects_policy_without_rule),
		cmocka_unit_test(test_switch_costs),
		cmocka_unit_test(test_switch_fast_test_never_skips_an_exit),
		cmocka_unit_test(test_switch_step_steal),
		cmocka_unit_test(test_guest_read_step_back),
		cmocka_unit_test(test_guest_read_loaded_step_back),
		cmocka_unit_test(test_event_names),
	};

	return cmocka_run_group_tests_name("pmu_policy", tests, NULL, NULL);
}
