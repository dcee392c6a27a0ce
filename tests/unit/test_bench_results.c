// SPDX-License-Identifier: MIT
/*
 * vmm bench suite results: counts parsed back from `vmm stat -x,` and
 * stepcount output, the step differences, and the JSON/CSV/Markdown text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench_results.h"

static void test_parse_stat_csv(void **state)
{
	const char *text =
		"vmm: stat: something on the same stream\n"
		"18155,,instructions:u,1018518811,100.00,,\n"
		"<not counted>,,branches:u,0,0.00,,\n"
		"2277847108,,cycles,2277847108,100.00,,\n"
		"12,,cycles:u-ish,1,100.00,,\n"
		"99,,steal,1,100.00,,";	/* no final newline */
	uint64_t v = 0;

	(void)state;
	assert_int_equal(bench_parse_stat_csv(text, "instructions:u", &v), 0);
	assert_int_equal(v, 18155);
	assert_int_equal(bench_parse_stat_csv(text, "cycles", &v), 0);
	assert_int_equal(v, 2277847108ull);
	assert_int_equal(bench_parse_stat_csv(text, "steal", &v), 0);
	assert_int_equal(v, 99);
	/* Not a count, a prefix of another event, or absent. */
	assert_int_equal(bench_parse_stat_csv(text, "branches:u", &v), -1);
	assert_int_equal(bench_parse_stat_csv(text, "cycles:u", &v), -1);
	assert_int_equal(bench_parse_stat_csv(text, "instructions", &v), -1);
	assert_int_equal(bench_parse_stat_csv("", "cycles", &v), -1);
}

static void test_parse_stepcount(void **state)
{
	const char *text = "instructions:u 41726\nbranches:u 937\n"
			   "thread-0 instructions:u 5\n";
	uint64_t v = 0;

	(void)state;
	assert_int_equal(bench_parse_stepcount(text, "instructions:u", &v), 0);
	assert_int_equal(v, 41726);
	assert_int_equal(bench_parse_stepcount(text, "branches:u", &v), 0);
	assert_int_equal(v, 937);
	assert_int_equal(bench_parse_stepcount("instructions:u 12x\n",
					       "instructions:u", &v), -1);
	assert_int_equal(bench_parse_stepcount("instructions:u\n",
					       "instructions:u", &v), -1);
	assert_int_equal(bench_parse_stepcount("", "instructions:u", &v), -1);
}

static struct bench_wl_result step_result(void)
{
	struct bench_wl_result r = { .name = "mcf", .have_step = true };

	r.step_guest[STEP_MICRO] = 18155;
	r.step_guest[STEP_TINY] = 41680;
	r.step_oracle[STEP_MICRO] = 18209;
	r.step_oracle[STEP_TINY] = 41726;
	return r;
}

/* What `vmm stat --breakdown -x,` writes (shortened). */
static const char breakdown_text[] =
	"<not supported>,,task-clock,0,0.00,,\n"
	"821847449,ns,time:vcpus,,,\n"
	"808988442,ns,time:guest,,,\n"
	"171435,ns,time:vmm,,,\n"
	"12687572,ns,time:halted,,,\n"
	"606741331,ns,time:user,,,\n"
	"202247110,ns,time:kernel,,,\n"
	"30,,samples:user,,,\n"
	"10,,samples:kernel,,,\n"
	"195673,,kvm:insn_emulation,,,\n"
	"1215,,kvm:exits,,,\n"
	"13,,kvm:pf_fixed,,,\n"
	"344,,kvm:pf_taken,,,\n"
	"5,,vmm-exit:hypercall.copy,,,\n"
	"22984,ns,vmm-exit-ns:hypercall.copy,,,\n"
	"22,,vmm-exit:hypercall.memset,,,\n"
	"24316,ns,vmm-exit-ns:hypercall.memset,,,\n"
	"3,,vmm-exit:rdmsr,,,\n"
	"500,,vmm-exit:intr,,,\n"
	"1000,ns,vmm-exit-ns:intr,,,\n"
	"330,,kentry:syscalls,,,\n"
	"12,,kentry:exceptions+interrupts,,,\n"
	"1,,kentry:page-fault,,,\n"
	"9,,kentry:timer,,,\n"
	"2,,kentry:ipi,,,\n"
	"0,,kentry:pmi,,,\n"
	"7,,kentry:debug,,,\n"
	"1,,kentry:invalid-opcode,,,\n"
	"1,,kentry:syscall:mmap,,,\n"
	"4,,kentry:syscall:mprotect,,,\n"
	"5,,kentry:syscall:rt_sigprocmask,,,\n"
	"315,,kentry:syscall:sched_yield,,,\n"
	"1,,kentry:syscall:clone,,,\n"
	"2,,kentry:syscall:futex,,,\n"
	"2,,kentry:syscall:511+,,,";

static void test_parse_breakdown(void **state)
{
	struct bench_kernel k;
	char *cut;

	(void)state;
	assert_int_equal(bench_parse_breakdown(breakdown_text, &k), 0);
	assert_int_equal(k.vcpu_ns, 821847449);
	assert_int_equal(k.guest_ns, 808988442);
	assert_int_equal(k.vmm_ns, 171435);
	assert_int_equal(k.halted_ns, 12687572);
	assert_int_equal(k.user_ns, 606741331);
	assert_int_equal(k.kernel_ns, 202247110);
	assert_int_equal(k.samples, 40);
	assert_int_equal(k.kernel_insns, 195673);
	assert_int_equal(k.kvm_exits, 1215);
	assert_int_equal(k.pf_fixed, 13);
	/* Exits by count, not their ns lines nor the sampling's kicks. */
	assert_int_equal(k.vmm_exits, 5 + 22 + 3);
	assert_int_equal(k.syscalls, 330);
	assert_int_equal(k.page_faults, 1);
	assert_int_equal(k.timer, 9);
	assert_int_equal(k.ipi, 2);
	assert_int_equal(k.pmi, 0);
	assert_int_equal(k.debug, 7);
	/* The five most frequent, ties in the order printed (by number). */
	assert_int_equal(k.ntop, 5);
	assert_string_equal(k.top[0].name, "sched_yield");
	assert_int_equal(k.top[0].count, 315);
	assert_string_equal(k.top[1].name, "rt_sigprocmask");
	assert_string_equal(k.top[2].name, "mprotect");
	assert_string_equal(k.top[3].name, "futex");
	assert_string_equal(k.top[4].name, "511+");
	assert_int_equal(k.top[4].count, 2);
	/* A run without the guest's counts (or cut short) is no result. */
	cut = strdup(breakdown_text);
	*strstr(cut, "330,,kentry:syscalls") = 0;
	assert_int_equal(bench_parse_breakdown(cut, &k), -1);
	free(cut);
	cut = strdup(breakdown_text);
	*strstr(cut, "10,,samples:kernel") = 0;
	assert_int_equal(bench_parse_breakdown(cut, &k), -1);
	free(cut);
	assert_int_equal(bench_parse_breakdown("", &k), -1);
}

static void test_time_plot_name(void **state)
{
	char b[64];

	(void)state;
	bench_time_plot_name("docs/results.png", b, sizeof(b));
	assert_string_equal(b, "docs/results-time.png");
	bench_time_plot_name("a.d/plot", b, sizeof(b));
	assert_string_equal(b, "a.d/plot-time");
}

static void test_step_diffs(void **state)
{
	struct bench_wl_result r = step_result();

	(void)state;
	assert_int_equal(bench_step_startup_diff(&r), -46);
	/* 23525 in the guest against 23517 under the oracle. */
	assert_int_equal(bench_step_work_diff(&r), 8);
	r.step_guest[STEP_TINY] = 41672;
	assert_int_equal(bench_step_work_diff(&r), 0);
}

/* Everything the writer wrote, as one string (free it). */
static char *written(void (*write)(FILE *, const struct bench_results *,
				   const char *),
		     const struct bench_results *res)
{
	FILE *f = tmpfile();
	char *buf;
	long len;

	assert_non_null(f);
	write(f, res, "results.png");
	len = ftell(f);
	buf = calloc(1, len + 1);
	assert_non_null(buf);
	rewind(f);
	assert_int_equal(fread(buf, 1, len, f), len);
	fclose(f);
	return buf;
}

static void json_write(FILE *f, const struct bench_results *res, const char *p)
{
	(void)p;
	bench_write_json(f, res);
}

static void csv_write(FILE *f, const struct bench_results *res, const char *p)
{
	(void)p;
	bench_write_csv(f, res);
}

static struct bench_wl_result wl[2];
static const struct bench_results res = {
	.host = "standard", .size = "test", .reps = 3, .spinners = 3, .n = 2,
	.wl = wl,
};

static int setup_results(void **state)
{
	(void)state;
	wl[0] = step_result();
	/* 41680 instructions at tiny: 10, 60 and 20 us each over the 0.1 s
	 * of an uncounted run (cache, single, int3), 5 and 4 per trap. */
	wl[0].step_plain = 0.1;
	wl[0].step_wall[STEP_CACHE][STEP_TINY] = 0.5168;
	wl[0].step_wall[STEP_SINGLE][STEP_TINY] = 2.6008;
	wl[0].step_wall[STEP_INT3][STEP_TINY] = 0.9336;
	wl[0].step_traps[STEP_CACHE][STEP_TINY] = 8336;
	wl[0].step_traps[STEP_INT3][STEP_TINY] = 10420;
	wl[1] = (struct bench_wl_result){
		.name = "lbm", .have_overhead = true,
		.time_s = { 0.1, 0.2, 0.21, 0.22, 0.23 },
		.native_tsc = 2e8, .guest_cycles = 3e8,
		.have_preempt = true, .idle_cycles = 4e8,
		.preempt_ratio = { 1.01, 0.99, 2.5 },
		.have_kernel = true,
		.kern = {
			.vcpu_ns = 2500000, .guest_ns = 2000000,
			.vmm_ns = 400000, .halted_ns = 100000,
			.user_ns = 1500000, .kernel_ns = 500000, .samples = 8,
			.kernel_insns = 4321, .kvm_exits = 99, .pf_fixed = 7,
			.vmm_exits = 12, .syscalls = 30, .page_faults = 5,
			.timer = 3, .ipi = 2, .pmi = 1, .debug = 0,
			.top = { { "brk", 20 }, { "mmap", 10 } }, .ntop = 2,
		},
	};
	return 0;
}

static void test_json(void **state)
{
	char *s = written(json_write, &res);

	(void)state;
	assert_non_null(strstr(s, "{\"host\": \"standard\", \"size\": "
			       "\"test\", \"reps\": 3, \"spinners\": 3, "
			       "\"workloads\": ["));
	assert_non_null(strstr(s, "{\"name\": \"mcf\", \"step_guest_micro\": "
			       "18155, \"step_oracle_micro\": 18209, "
			       "\"step_guest_tiny\": 41680, \"step_oracle_tiny\": "
			       "41726, \"step_startup_diff\": -46, "
			       "\"step_work_diff\": 8, "
			       "\"step_us_per_insn_blocks\": 10.000, "
			       "\"step_us_per_insn_int3\": 20.000, "
			       "\"step_us_per_insn_single\": 60.000, "
			       "\"step_insns_per_trap\": 5.00, "
			       "\"step_insns_per_trap_int3\": 4.00}"));
	/* Parts that did not run leave no keys. */
	assert_null(strstr(s, "\"mcf\", \"native_s\""));
	assert_non_null(strstr(s, "\"name\": \"lbm\", \"native_s\": 0.1000, "
			       "\"guest_s\": 0.2000"));
	assert_non_null(strstr(s, "\"cycles_per_native_tsc\": 1.5000"));
	assert_non_null(strstr(s, "\"preempt_raw\": 2.5000, \"vcpu_ms\": 2.500, "
			       "\"guest_ms\": 2.000, \"vmm_ms\": 0.400, "
			       "\"halted_ms\": 0.100, \"user_ms\": 1.500, "
			       "\"kernel_ms\": 0.500, \"mode_samples\": 8, "
			       "\"kernel_insns\": 4321, "
			       "\"kvm_exits\": 99, \"kvm_pf_fixed\": 7, "
			       "\"vmm_exits\": 12, \"syscalls\": 30, "
			       "\"page_faults\": 5, \"timer_irqs\": 3, "
			       "\"ipis\": 2, \"pmis\": 1, \"debug_traps\": 0, "
			       "\"top_syscalls\": \"brk:20 mmap:10\"}]}\n"));
	assert_null(strstr(s, "\"mcf\", \"vcpu_ms\""));
	free(s);
}

/* The line at s is want, up to and with its newline. */
static void assert_string_equal_n(const char *s, const char *want)
{
	assert_true(!strncmp(s, want, strlen(want)));
}

static void test_csv(void **state)
{
	char *s = written(csv_write, &res), *l2, *l3;
	int commas[3] = { 0 }, line = 0;

	(void)state;
	assert_true(!strncmp(s, "workload,native_s,guest_s,offset_s,", 35));
	/* Every row has the header's number of columns. */
	for (const char *p = s; *p; p++) {
		if (*p == ',')
			commas[line]++;
		if (*p == '\n')
			line++;
	}
	assert_int_equal(line, 3);
	assert_int_equal(commas[1], commas[0]);
	assert_int_equal(commas[2], commas[0]);
	l2 = strchr(s, '\n') + 1;
	l3 = strchr(l2, '\n') + 1;
	/* mcf: no overhead, preempt or kernel part. */
	assert_string_equal_n(l2, "mcf,,,,,,,,,18155,18209,41680,41726,-46,8,"
			      "10.000,20.000,60.000,5.00,4.00,,,,,,,,,,,,,,,,,,,,,,\n");
	assert_true(!strncmp(l3, "lbm,0.1000,0.2000,", 18));
	assert_non_null(strstr(l3, ",,,,,,,400000000,1.0100,0.9900,2.5000,"
			       "2.500,2.000,0.400,0.100,1.500,0.500,8,4321,99,7,"
			       "12,30,5,3,2,1,"
			       "0,\"brk:20 mmap:10\"\n"));
	free(s);
}

static void test_markdown(void **state)
{
	char *s = written(bench_write_markdown, &res);

	(void)state;
	assert_non_null(strstr(s, "| lbm | 0.100 | 0.200 | 2.000 | 1.050 | "
			       "1.100 | 1.150 |\n"));
	assert_non_null(strstr(s, "![time relative to native](results.png)"));
	assert_non_null(strstr(s, "Host: standard KVM."));
	assert_non_null(strstr(s, "| mcf | 41680 | 41726 | -46 | 23525 | "
			       "23517 | **8** |\n"));
	assert_non_null(strstr(s, "| mcf | 10.000 | 20.00 | 60.00 | 6 | 5.0 | 4.0 |\n"));
	assert_non_null(strstr(s, "| lbm | 200000000 | 300000000 | 1.500 |\n"));
	assert_non_null(strstr(s, "| lbm | 400000000 | 1.010 | 0.990 | 2.500 |\n"));
	assert_non_null(strstr(s, "## Where the time goes"));
	assert_non_null(strstr(s, "![where the time goes](results-time.png)"));
	assert_non_null(strstr(s, "| lbm | 2.5 | 2.0 | 1.5 | 0.5 | 8 | 0.4 | "
			       "0.1 | 4321 | 99 | 7 | 12 | 30 | 5 | 3 | 2 | 1 | "
			       "0 | brk:20 mmap:10 |\n"));
	/* A workload appears only in the tables of the parts it ran. */
	assert_null(strstr(s, "| mcf | 0"));
	assert_null(strstr(s, "| lbm | 0 |"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat_csv),
		cmocka_unit_test(test_parse_stepcount),
		cmocka_unit_test(test_step_diffs),
		cmocka_unit_test(test_parse_breakdown),
		cmocka_unit_test(test_time_plot_name),
		cmocka_unit_test_setup(test_json, setup_results),
		cmocka_unit_test_setup(test_csv, setup_results),
		cmocka_unit_test_setup(test_markdown, setup_results),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
