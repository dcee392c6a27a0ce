// SPDX-License-Identifier: MIT
/*
 * Profiles after sampling: symbolization against real ELF files (argv[1] a
 * guest program, argv[2] the guest kernel), aggregation, the report and
 * folded output, perfvisor.data and perf.data round trips, and, when
 * linux-perf is installed, that `perf report` reads our perf.data.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hypercall.h"
#include "perf_data.h"
#include "profile.h"
#include "vpmu.h"

static const char *prog_path, *kernel_path;
static char tmpdir[64] = "/tmp/pv-profile-XXXXXX";
static char err[256];

/* nm's view of the program: the oracle for symbolization. */
struct nmsym {
	char name[128];
	uint64_t addr, size;
};
static struct nmsym *nmsyms;
static size_t nnm;

static uint64_t nm_addr(const char *name)
{
	for (size_t i = 0; i < nnm; i++)
		if (!strcmp(nmsyms[i].name, name))
			return nmsyms[i].addr;
	fail_msg("nm has no %s", name);
	return 0;
}

static void load_nm(const char *path, struct nmsym **out, size_t *n)
{
	char cmd[512], line[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -P -S --defined-only '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		struct nmsym s = { 0 };
		char type;

		/* "name type value [size]", -P: portable, hex */
		if (sscanf(line, "%127s %c %" SCNx64 " %" SCNx64, s.name,
			   &type, &s.addr, &s.size) < 3)
			continue;
		if (type != 'T' && type != 't' && type != 'W')
			continue;
		*out = realloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = s;
	}
	assert_int_equal(pclose(f), 0);
	assert_true(*n > 10);
}

static char *tmpfile_path(const char *name)
{
	static char path[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	return path[k];
}

/* The report (or folded output) as a string the caller frees. */
static char *report_str(const struct profile *p, const char *sort,
			bool folded)
{
	struct report_opts o = { .sort = sort, .folded = folded };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(profile_report(p, &o, f), 0);
	fclose(f);
	return buf;
}

static void add(struct profile *p, uint32_t pid, uint32_t tid, int kind,
		uint64_t ip, uint64_t time, uint64_t period)
{
	struct sample s = {
		.pid = pid, .tid = tid, .kind = kind, .ip = ip,
		.time_ns = time, .period = period,
	};

	if (kind == SAMPLE_VMM) {
		s.exit_reason = ip;
		s.ip = s.pid = s.tid = 0;
	}
	assert_int_equal(profile_add(p, &s), 0);
}

/* A profile as the sampling code would leave it: user, kernel, VMM. */
static struct profile *sample_profile(void)
{
	struct profile *p = profile_new();
	uint64_t mainp = nm_addr("main");

	assert_non_null(p);
	assert_int_equal(profile_add_image(p, "hello", prog_path, 0, false,
					   err, sizeof(err)), 0);
	assert_int_equal(profile_add_image(p, "[kernel]", kernel_path, 0,
					   true, err, sizeof(err)), 1);
	profile_comm(p, 1, 1, "hello");
	profile_comm(p, 1, 2, "worker");
	for (int i = 0; i < 60; i++)
		add(p, 1, 1, SAMPLE_USER, mainp + 4, 1000 + i, 100);
	for (int i = 0; i < 15; i++)
		add(p, 1, 2, SAMPLE_USER, mainp + 8, 2000 + i, 100);
	for (int i = 0; i < 12; i++)
		add(p, 1, 1, SAMPLE_KERNEL, 0xffffffff80200000ull, 3000 + i,
		    100);
	for (int i = 0; i < 8; i++)
		add(p, 0, 0, SAMPLE_VMM, KVM_EXIT_HLT, 4000 + i, 100);
	add(p, 0, 0, SAMPLE_VMM, PROFILE_HC_BASE + PV_HC_PMU_SWITCH, 5000, 300);
	add(p, 1, 1, SAMPLE_USER, 0x1234, 6000, 200);	/* nowhere */
	return p;
}

/* ---- Symbolization ---- */

static void test_resolve_main(void **state)
{
	struct profile *p = profile_new();
	struct sym_info si;
	struct sample s = { .pid = 1, .tid = 1, .kind = SAMPLE_USER };
	uint64_t mainp = nm_addr("main");

	(void)state;
	assert_int_equal(profile_add_image(p, "hello", prog_path, 0, false,
					   err, sizeof(err)), 0);
	for (uint64_t off = 0; off < 3; off++) {
		s.ip = mainp + off;
		profile_resolve(p, &s, &si);
		assert_string_equal(si.dso, "hello");
		assert_string_equal(si.sym, "main");
		assert_int_equal(si.level, '.');
		assert_int_equal(si.sym_start, mainp);
	}
	/* A kernel sample at a user address is not in a user image. */
	s.kind = SAMPLE_KERNEL;
	profile_resolve(p, &s, &si);
	assert_string_equal(si.dso, "[unknown]");
	assert_null(si.sym);
	profile_free(p);
}

/* Every sized function nm lists resolves, at its first and last byte. */
static void test_resolve_like_nm(void **state)
{
	struct profile *p = profile_new();
	size_t checked = 0;

	(void)state;
	assert_int_equal(profile_add_image(p, "hello", prog_path, 0, false,
					   err, sizeof(err)), 0);
	for (size_t i = 0; i < nnm; i++) {
		struct sample s = { .kind = SAMPLE_USER };
		struct sym_info si;

		if (!nmsyms[i].size)
			continue;
		for (int end = 0; end < 2; end++) {
			s.ip = nmsyms[i].addr + (end ? nmsyms[i].size - 1 : 0);
			profile_resolve(p, &s, &si);
			assert_non_null(si.sym);
			/* Aliases share the address; any of them is right. */
			assert_int_equal(si.sym_start, nmsyms[i].addr);
		}
		checked++;
	}
	assert_true(checked > 10);
	profile_free(p);
}

static void test_resolve_kernel(void **state)
{
	struct profile *p = profile_new();
	struct nmsym *ks;
	size_t nks;
	struct sym_info si;
	struct sample s = { .kind = SAMPLE_KERNEL };
	size_t checked = 0;

	(void)state;
	load_nm(kernel_path, &ks, &nks);
	/* The embedded-kernel path: from memory, no host path. */
	FILE *f = fopen(kernel_path, "rb");
	static char buf[8 << 20];
	size_t len = fread(buf, 1, sizeof(buf), f);

	fclose(f);
	assert_int_equal(profile_add_image_mem(p, "[kernel]", NULL, buf, len,
					       0, true, err, sizeof(err)), 0);
	for (size_t i = 0; i < nks; i++) {
		s.ip = ks[i].addr;
		profile_resolve(p, &s, &si);
		assert_string_equal(si.dso, "[kernel]");
		assert_int_equal(si.level, 'k');
		assert_non_null(si.sym);
		assert_int_equal(si.sym_start, ks[i].addr);
		checked++;
	}
	assert_true(checked > 10);
	free(ks);
	profile_free(p);
}

static void test_bad_image(void **state)
{
	struct profile *p = profile_new();
	char junk[512] = "not an elf";

	(void)state;
	assert_int_equal(profile_add_image(p, "x", "/nonexistent/x", 0, false,
					   err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/x"));
	assert_int_equal(profile_add_image_mem(p, "x", NULL, junk,
					       sizeof(junk), 0, false, err,
					       sizeof(err)), -1);
	assert_non_null(strstr(err, "not an ELF"));
	assert_int_equal(profile_nr_images(p), 0);
	profile_free(p);
}

/* Two static programs at the same address: pid and exec time decide. */
static void test_exec_bindings(void **state)
{
	struct profile *p = profile_new();
	struct sym_info si;
	struct sample s = { .pid = 7, .tid = 7, .kind = SAMPLE_USER };
	char name[32];

	(void)state;
	assert_int_equal(profile_add_image(p, "sh", prog_path, 0, false, err,
					   sizeof(err)), 0);
	assert_int_equal(profile_add_image(p, "ls", prog_path, 0, false, err,
					   sizeof(err)), 1);
	profile_image_pid(p, 0, 7, 0);
	profile_image_pid(p, 1, 7, 500);
	profile_comm(p, 7, 7, "sh");
	profile_comm_at(p, 7, 7, "ls", 500);
	s.ip = nm_addr("main");
	s.time_ns = 499;
	profile_resolve(p, &s, &si);
	assert_string_equal(si.dso, "sh");
	assert_string_equal(profile_comm_of(p, &s, name, sizeof(name)), "sh");
	s.time_ns = 500;
	profile_resolve(p, &s, &si);
	assert_string_equal(si.dso, "ls");
	assert_string_equal(profile_comm_of(p, &s, name, sizeof(name)), "ls");
	/* Another process: neither image is bound to it. */
	s.pid = s.tid = 8;
	profile_resolve(p, &s, &si);
	assert_string_equal(si.dso, "[unknown]");
	assert_string_equal(profile_comm_of(p, &s, name, sizeof(name)), ":8");
	/* A thread never named takes its process's name. */
	s.pid = 7;
	s.tid = 9;
	assert_string_equal(profile_comm_of(p, &s, name, sizeof(name)), "ls");
	profile_free(p);
}

static void test_exit_names(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(profile_exit_name(KVM_EXIT_IO, b, sizeof(b)), "io");
	assert_string_equal(profile_exit_name(KVM_EXIT_MMIO, b, sizeof(b)),
			    "mmio");
	assert_string_equal(profile_exit_name(KVM_EXIT_HLT, b, sizeof(b)),
			    "hlt");
	assert_string_equal(profile_exit_name(KVM_EXIT_X86_RDMSR, b,
					      sizeof(b)), "msr_read");
	assert_string_equal(profile_exit_name(KVM_EXIT_X86_WRMSR, b,
					      sizeof(b)), "msr_write");
	assert_string_equal(profile_exit_name(KVM_EXIT_SHUTDOWN, b, sizeof(b)),
			    "shutdown");
	assert_string_equal(profile_exit_name(PROFILE_HC_BASE + PV_HC_WRITE,
					      b, sizeof(b)), "write");
	assert_string_equal(profile_exit_name(PROFILE_HC_BASE +
					      PV_HC_PMU_VCPU_PAGE, b,
					      sizeof(b)), "pmu_vcpu_page");
	assert_string_equal(profile_exit_name(PROFILE_HC_BASE + PV_HC_PMU_POLL,
					      b, sizeof(b)), "pmu_poll");
	assert_string_equal(profile_exit_name(PROFILE_HC_BASE + 20, b,
					      sizeof(b)), "hypercall_20");
	assert_string_equal(profile_exit_name(999, b, sizeof(b)), "999");
}

/* ---- Report ---- */

/* The data rows of a report: overhead and the text after it. */
struct rrow {
	double pct;
	char rest[256];
};

static size_t parse_rows(const char *rep, struct rrow *rows, size_t max)
{
	size_t n = 0;
	const char *l = rep;

	while (*l && n < max) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[512];
		int used;

		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (line[0] != '#' && line[0] &&
		    sscanf(line, " %lf%%%n", &rows[n].pct, &used) == 1) {
			snprintf(rows[n].rest, sizeof(rows[n].rest), "%s",
				 line + used);
			n++;
		}
		l += len + (e ? 1 : 0);
	}
	return n;
}

/* Collapse runs of spaces so the checks do not depend on widths. */
static void squeeze(char *s)
{
	char *start = s, *o = s;

	while (*s == ' ')
		s++;
	for (; *s; s++)
		if (*s != ' ' || o == start || o[-1] != ' ')
			*o++ = *s;
	*o = 0;
}

static void test_report_table(void **state)
{
	struct profile *p = sample_profile();
	char *rep = report_str(p, NULL, false);
	struct rrow rows[16];
	size_t n = parse_rows(rep, rows, 16);
	double sum = 0;

	(void)state;
	assert_non_null(strstr(rep, "# Overhead  Command  Shared Object  "
				    "Symbol\n"));
	assert_non_null(strstr(rep, "# Samples: 97 of event 'cpu-clock'\n"));
	assert_non_null(strstr(rep, "# Event count (approx.): 10000\n"));
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++) {
		squeeze(rows[i].rest);
		sum += rows[i].pct;
		if (i)
			assert_true(rows[i].pct <= rows[i - 1].pct);
	}
	/* Rounded to two decimals, each row is off by at most 0.005. */
	assert_true(sum > 100 - 0.005 * n && sum < 100 + 0.005 * n);
	assert_true(rows[0].pct == 60.00);
	assert_string_equal(rows[0].rest, "hello hello [.] main");
	assert_string_equal(rows[1].rest, "worker hello [.] main");
	assert_true(rows[2].pct == 12.00);
	assert_string_equal(rows[2].rest, "hello [kernel] [k] _start");
	assert_string_equal(rows[3].rest, "[vmm] [vmm] [v] exit:hlt");
	assert_string_equal(rows[4].rest, "[vmm] [vmm] [v] exit:pmu_switch");
	assert_true(rows[4].pct == 3.00);
	assert_string_equal(rows[5].rest,
			    "hello [unknown] [.] 0x0000000000001234");
	free(rep);
	profile_free(p);
}

static void test_report_sort_keys(void **state)
{
	struct profile *p = sample_profile();
	struct rrow rows[16];
	char *rep;
	size_t n;

	(void)state;
	/* By symbol alone both threads' main merge: 75%. */
	rep = report_str(p, "sym", false);
	n = parse_rows(rep, rows, 16);
	assert_int_equal(n, 5);
	assert_true(rows[0].pct == 75.00);
	assert_string_equal(rows[0].rest, "  [.] main");
	assert_non_null(strstr(rep, "# Overhead  Symbol\n"));
	free(rep);

	rep = report_str(p, "dso", false);
	n = parse_rows(rep, rows, 16);
	assert_int_equal(n, 4);
	assert_string_equal(rows[0].rest, "  hello");
	assert_true(rows[1].pct == 12.00);
	assert_string_equal(rows[1].rest, "  [kernel]");
	assert_true(rows[2].pct == 11.00);	/* 800 + 300 of 10000 */
	assert_string_equal(rows[2].rest, "  [vmm]");
	free(rep);

	rep = report_str(p, "comm", false);
	n = parse_rows(rep, rows, 16);
	assert_int_equal(n, 3);
	assert_true(rows[0].pct == 74.00);	/* 6000 + 1200 + 200 */
	free(rep);

	rep = report_str(p, "pid,cpu", false);
	assert_non_null(strstr(rep, "Pid:Command  CPU"));
	assert_non_null(strstr(rep, "1:hello"));
	free(rep);

	struct report_opts o = { .sort = "comm,bogus" };

	assert_int_equal(profile_report(p, &o, stdout), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(profile_sort_check("comm,bogus", err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "bogus"));
	assert_int_equal(profile_sort_check("dso,sym", err, sizeof(err)), 0);
	profile_free(p);
}

static void test_report_nr_and_output(void **state)
{
	struct profile *p = sample_profile();
	struct report_opts o = { .nr_samples = true,
				 .output = tmpfile_path("report.txt") };
	char line[512];
	bool seen = false;
	FILE *f;

	(void)state;
	assert_int_equal(profile_report(p, &o, NULL), 0);
	f = fopen(o.output, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "# Overhead  Samples  Command"))
			seen = true;
		if (strstr(line, "60.00%"))
			assert_non_null(strstr(line, "%       60  hello"));
	}
	fclose(f);
	assert_true(seen);
	profile_free(p);
}

static void test_empty_report(void **state)
{
	struct profile *p = profile_new();
	char *rep = report_str(p, NULL, false);

	(void)state;
	assert_non_null(strstr(rep, "# Samples: 0 of event"));
	assert_non_null(strstr(rep, "(no samples)"));
	free(rep);
	rep = report_str(p, NULL, true);
	assert_string_equal(rep, "");
	free(rep);
	profile_free(p);
}

static void test_folded(void **state)
{
	struct profile *p = sample_profile();
	char *rep = report_str(p, NULL, true);
	uint64_t total = 0;
	int lines = 0;

	(void)state;
	for (char *l = strtok(rep, "\n"); l; l = strtok(NULL, "\n")) {
		char *sp = strrchr(l, ' ');
		int semis = 0;

		assert_non_null(sp);
		for (char *c = l; c < sp; c++)
			semis += *c == ';';
		assert_int_equal(semis, 2);	/* comm;dso;sym */
		total += strtoull(sp + 1, NULL, 10);
		lines++;
	}
	assert_int_equal(lines, 6);
	assert_int_equal(total, profile_total_period(p));
	free(rep);

	rep = report_str(p, NULL, true);
	assert_non_null(strstr(rep, "hello;hello;main 6000\n"));
	assert_non_null(strstr(rep, "hello;[kernel];_start 1200\n"));
	assert_non_null(strstr(rep, "[vmm];[vmm];exit:hlt 800\n"));
	assert_non_null(strstr(rep, "hello;[unknown];0x1234 200\n"));
	/* Sorted by stack, as stackcollapse scripts leave it. */
	assert_true(strstr(rep, "[vmm];") < strstr(rep, "hello;"));
	free(rep);
	rep = report_str(p, "sym", true);
	assert_non_null(strstr(rep, "main 7500\n"));
	free(rep);
	profile_free(p);
}

struct thr_arg {
	struct profile *p;
	int cpu;
};

static void *adder(void *a)
{
	struct thr_arg *t = a;

	for (int i = 0; i < 20000; i++) {
		struct sample s = { .pid = 1, .tid = 1, .cpu = t->cpu,
				    .kind = SAMPLE_USER, .ip = i,
				    .period = 1 };

		profile_add(t->p, &s);
		if (i % 5000 == 0)
			profile_comm(t->p, t->cpu, t->cpu, "t");
	}
	return NULL;
}

/* Four threads (vCPUs 0-3) run fn on one profile at once. */
static void threads_run4(struct profile *p, void *(*fn)(void *))
{
	struct thr_arg args[4];
	pthread_t th[4];

	for (int i = 0; i < 4; i++) {
		args[i] = (struct thr_arg){ p, i };
		pthread_create(&th[i], NULL, fn, &args[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
}

static void test_threads(void **state)
{
	struct profile *p = profile_new();

	(void)state;
	threads_run4(p, adder);
	assert_int_equal(profile_nr_samples(p), 80000);
	assert_int_equal(profile_nr_comms(p), 16);
	assert_int_equal(profile_total_period(p), 80000);
	profile_free(p);
}

/* ---- perfvisor.data ---- */

static void test_own_format_round_trip(void **state)
{
	struct profile *p = sample_profile(), *q;
	const char *path = tmpfile_path("pv.data");
	char *a, *b;

	(void)state;
	profile_set_event(p, "instructions:u", PERF_TYPE_HARDWARE,
			  PERF_COUNT_HW_INSTRUCTIONS);
	profile_comm_at(p, 1, 1, "hello2", 2500);
	assert_int_equal(profile_write(p, path, err, sizeof(err)), 0);
	assert_int_equal(profile_open(&q, path, err, sizeof(err)), 0);
	for (int folded = 0; folded < 2; folded++) {
		const char *sorts[] = { NULL, "sym", "pid,tid,cpu,dso" };

		for (int s = 0; s < 3; s++) {
			a = report_str(p, sorts[s], folded);
			b = report_str(q, sorts[s], folded);
			assert_string_equal(a, b);
			free(a);
			free(b);
		}
	}
	/* The symbols travel in the file: no binary needed to report. */
	assert_int_equal(profile_nr_images(q), 2);
	assert_string_equal(profile_event_name(q), "instructions:u");
	assert_int_equal(profile_nr_samples(q), profile_nr_samples(p));
	{
		/* Field by field: struct sample has padding after kind. */
		const struct sample *x = profile_sample(q, 3);
		const struct sample *y = profile_sample(p, 3);

		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->cpu, y->cpu);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->ip, y->ip);
		assert_int_equal(x->time_ns, y->time_ns);
		assert_int_equal(x->period, y->period);
	}
	profile_free(q);
	profile_free(p);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *d;
	struct stat st;

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	d = malloc(st.st_size + 1);
	*len = fread(d, 1, st.st_size, f);
	fclose(f);
	return d;
}

static void spill(const char *path, const uint8_t *d, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, len, f), len);
	fclose(f);
}

/* Truncated and corrupted files fail with a message, never crash. */
static void test_own_format_corrupt(void **state)
{
	struct profile *p = sample_profile(), *q;
	const char *path = tmpfile_path("pv.data");
	const char *bad = tmpfile_path("bad.data");
	uint8_t *d;
	size_t len;

	(void)state;
	assert_int_equal(profile_write(p, path, err, sizeof(err)), 0);
	d = slurp(path, &len);
	for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
		spill(bad, d, cut);
		assert_int_equal(profile_read(&q, bad, err, sizeof(err)), -1);
		assert_null(q);
		assert_non_null(strstr(err, bad));
	}
	srand(7);
	for (int round = 0; round < 300; round++) {
		uint8_t *c = malloc(len);

		memcpy(c, d, len);
		for (int k = 0; k < 4; k++)
			c[rand() % len] = rand();
		spill(bad, c, len);
		if (profile_read(&q, bad, err, sizeof(err)) == 0) {
			free(report_str(q, NULL, false));
			profile_free(q);
		}
		free(c);
	}
	d[8] = 99;	/* version */
	spill(bad, d, len);
	assert_int_equal(profile_read(&q, bad, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "version 99"));
	free(d);
	profile_free(p);
}

/* ---- Call chains (record -g) ---- */

/* sample_profile() plus hello's thread 1 in main, called from
 * libc_start_main_stage2 from __libc_start_main from _start_c: return
 * addresses a few bytes into each caller. */
static struct profile *chain_profile(uint64_t *chain)
{
	struct profile *p = sample_profile();
	struct sample s = { .pid = 1, .tid = 1, .kind = SAMPLE_USER,
			    .period = 10 };

	chain[0] = nm_addr("libc_start_main_stage2") + 5;
	chain[1] = nm_addr("__libc_start_main") + 5;
	chain[2] = nm_addr("_start_c") + 5;
	for (int i = 0; i < 7; i++) {
		s.ip = nm_addr("main") + 4;
		s.time_ns = 7000 + i;
		/* Fields the store fills itself are ignored. */
		s.chain_nr = 99;
		s.chain_off = 12345;
		assert_int_equal(profile_add_chain(p, &s, chain, 3), 0);
	}
	/* A sample with a one-frame chain, in exit called from main. */
	s.ip = nm_addr("exit") + 2;
	assert_int_equal(profile_add_chain(p, &s, &(uint64_t){ nm_addr("main")
							       + 9 }, 1), 0);
	return p;
}

static void assert_same_chains(const struct profile *p,
			       const struct profile *q)
{
	assert_int_equal(profile_nr_samples(q), profile_nr_samples(p));
	for (size_t i = 0; i < profile_nr_samples(p); i++) {
		size_t n, m;
		const uint64_t *a = profile_sample_chain(p, profile_sample(p, i),
							 &n);
		const uint64_t *b = profile_sample_chain(q, profile_sample(q, i),
							 &m);

		assert_int_equal(n, m);
		if (n)
			assert_memory_equal(a, b, n * sizeof(*a));
	}
}

static void test_chain_store(void **state)
{
	uint64_t chain[PROFILE_CHAIN_MAX + 5];
	struct profile *p = chain_profile(chain), *plain = sample_profile();
	const struct sample *s;
	size_t n, at;
	const uint64_t *c;
	char *rep, *a, *b;

	(void)state;
	assert_false(profile_has_chains(plain));
	assert_true(profile_has_chains(p));
	s = profile_sample(p, 0);
	assert_null(profile_sample_chain(p, s, &n));
	assert_int_equal(n, 0);
	at = profile_nr_samples(p) - 8;
	c = profile_sample_chain(p, profile_sample(p, at), &n);
	assert_int_equal(n, 3);
	assert_memory_equal(c, chain, 3 * sizeof(*c));

	/* Root first, after comm and dso; the caller of the leaf sample. */
	rep = report_str(p, NULL, true);
	assert_non_null(strstr(rep, "hello;hello;_start_c;__libc_start_main;"
				"libc_start_main_stage2;main 70\n"));
	assert_non_null(strstr(rep, "hello;hello;main;exit 10\n"));
	/* Chainless samples keep their one-frame stacks. */
	assert_non_null(strstr(rep, "hello;hello;main 6000\n"));
	assert_non_null(strstr(rep, "[vmm];[vmm];exit:hlt 800\n"));
	free(rep);

	/* The table is self time, as without chains. */
	for (size_t i = profile_nr_samples(plain); i < profile_nr_samples(p);
	     i++)
		assert_int_equal(profile_add(plain, profile_sample(p, i)), 0);
	a = report_str(p, NULL, false);
	b = report_str(plain, NULL, false);
	assert_string_equal(a, b);
	free(a);
	free(b);

	/* Too long a chain keeps its innermost PROFILE_CHAIN_MAX frames. */
	for (size_t i = 0; i < PROFILE_CHAIN_MAX + 5; i++)
		chain[i] = 0x401000 + i;
	assert_int_equal(profile_add_chain(p, s, chain, PROFILE_CHAIN_MAX + 5),
			 0);
	c = profile_sample_chain(p, profile_sample(p, profile_nr_samples(p) - 1),
				 &n);
	assert_int_equal(n, PROFILE_CHAIN_MAX);
	assert_memory_equal(c, chain, n * sizeof(*c));
	profile_free(plain);
	profile_free(p);
}

/* The chain store's bound: past it, samples stay and lose their chain. */
static void test_chain_bound(void **state)
{
	static uint64_t chain[PROFILE_CHAIN_MAX];
	struct profile *p = profile_new();
	struct sample s = { .pid = 1, .tid = 1, .kind = SAMPLE_USER,
			    .period = 1 };
	size_t fit = PROFILE_CHAIN_IPS_MAX / PROFILE_CHAIN_MAX, n;

	(void)state;
	for (size_t i = 0; i < fit + 3; i++)
		assert_int_equal(profile_add_chain(p, &s, chain,
						   PROFILE_CHAIN_MAX), 0);
	assert_int_equal(profile_nr_samples(p), fit + 3);
	assert_int_equal(profile_chains_dropped(p), 3);
	profile_sample_chain(p, profile_sample(p, fit - 1), &n);
	assert_int_equal(n, PROFILE_CHAIN_MAX);
	assert_null(profile_sample_chain(p, profile_sample(p, fit), &n));
	profile_free(p);
}

static void *chain_adder(void *a)
{
	struct thr_arg *t = a;
	uint64_t chain[8];

	for (int i = 0; i < 20000; i++) {
		struct sample s = { .pid = 1, .tid = 1, .cpu = t->cpu,
				    .kind = SAMPLE_USER, .ip = i,
				    .period = 1 };

		for (int j = 0; j < 8; j++)
			chain[j] = (uint64_t)t->cpu << 32 | i << 4 | j;
		profile_add_chain(t->p, &s, chain, 1 + i % 8);
	}
	return NULL;
}

/* vCPU threads add chains at once: each sample keeps its own. */
static void test_chain_threads(void **state)
{
	struct profile *p = profile_new();

	(void)state;
	threads_run4(p, chain_adder);
	assert_int_equal(profile_nr_samples(p), 80000);
	for (size_t i = 0; i < 80000; i++) {
		const struct sample *s = profile_sample(p, i);
		size_t n;
		const uint64_t *c = profile_sample_chain(p, s, &n);

		assert_int_equal(n, 1 + s->ip % 8);
		for (size_t j = 0; j < n; j++)
			assert_int_equal(c[j], (uint64_t)s->cpu << 32 |
					 s->ip << 4 | j);
	}
	profile_free(p);
}

static void test_chain_files(void **state)
{
	uint64_t chain[3];
	struct profile *p = chain_profile(chain), *q;
	const char *path = tmpfile_path("chain.data");
	const char *bad = tmpfile_path("chainbad.data");
	char *a, *b;
	uint8_t *d;
	size_t len, at;

	(void)state;
	for (int perf = 0; perf < 2; perf++) {
		assert_int_equal((perf ? perf_data_write : profile_write)
				 (p, path, err, sizeof(err)), 0);
		assert_int_equal(profile_open(&q, path, err, sizeof(err)), 0);
		assert_same_chains(p, q);
		a = report_str(p, "comm,sym", true);
		b = report_str(q, "comm,sym", true);
		assert_string_equal(a, b);
		assert_non_null(strstr(b, "hello;_start_c;__libc_start_main;"
				       "libc_start_main_stage2;main 70\n"));
		free(a);
		free(b);
		profile_free(q);
	}

	/* perfvisor.data: a chain for a sample that is not there. */
	assert_int_equal(profile_write(p, path, err, sizeof(err)), 0);
	d = slurp(path, &len);
	for (at = 16; at + 16 <= len;) {
		uint32_t type;
		uint64_t plen;

		memcpy(&type, d + at, 4);
		memcpy(&plen, d + at + 8, 8);
		if (type == 7)
			break;
		at += 16 + ((plen + 7) & ~7ull);
	}
	assert_true(at + 40 <= len);
	memcpy(d + at + 24, &(uint64_t){ 1u << 30 }, 8);
	spill(bad, d, len);
	assert_int_equal(profile_open(&q, bad, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "corrupt record (type 7)"));
	free(d);
	profile_free(p);
}

/* ---- perf.data ---- */

struct perf_counts {
	int comm, mmap, sample, other;
	int kernel_mmap, vmm_samples;
};

/* Check the file's structure as perf's reader walks it. */
static void walk_perf_data(const char *path, struct perf_counts *c)
{
	size_t len;
	uint8_t *d = slurp(path, &len);
	struct perf_file_header fh;
	struct perf_event_attr attr = { 0 };
	struct perf_file_section ids, feat;

	memset(c, 0, sizeof(*c));
	assert_true(len > sizeof(fh));
	memcpy(&fh, d, sizeof(fh));
	assert_memory_equal(d, "PERFILE2", 8);
	assert_int_equal(fh.size, 104);
	assert_int_equal(fh.attrs.offset, 104);
	assert_int_equal(fh.attrs.size, fh.attr_size);	/* one event */
	memcpy(&attr, d + fh.attrs.offset, PERF_ATTR_SIZE_VER5);
	assert_int_equal(fh.attr_size, attr.size + sizeof(ids));
	assert_int_equal(attr.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD);
	assert_true(attr.sample_id_all);
	memcpy(&ids, d + fh.attrs.offset + attr.size, sizeof(ids));
	assert_int_equal(ids.size, 8);
	assert_true(ids.offset + ids.size <= fh.data.offset);
	assert_int_equal(fh.data.offset % 8, 0);
	/* Records tile the data section exactly. */
	uint64_t off = fh.data.offset;

	while (off < fh.data.offset + fh.data.size) {
		struct perf_event_header h;

		memcpy(&h, d + off, sizeof(h));
		assert_true(h.size >= sizeof(h) && h.size % 8 == 0);
		if (h.type == PERF_RECORD_COMM) {
			c->comm++;
		} else if (h.type == PERF_RECORD_MMAP) {
			c->mmap++;
			c->kernel_mmap += (h.misc & 7) ==
					  PERF_RECORD_MISC_KERNEL;
		} else if (h.type == PERF_RECORD_SAMPLE) {
			assert_int_equal(h.size, 48);
			c->sample++;
			c->vmm_samples += (h.misc & 7) ==
					  PERF_RECORD_MISC_HYPERVISOR;
		} else {
			c->other++;
		}
		off += h.size;
	}
	assert_int_equal(off, fh.data.offset + fh.data.size);
	/* Then one feature section (HEADER_EVENT_DESC), ending the file. */
	assert_int_equal(fh.adds_features[0], 1ull << 12);
	memcpy(&feat, d + off, sizeof(feat));
	assert_int_equal(feat.offset, off + sizeof(feat));
	assert_int_equal(feat.offset + feat.size, len);
	free(d);
}

static void test_perf_data_header(void **state)
{
	struct profile *p = sample_profile();
	const char *path = tmpfile_path("perf.data");
	struct perf_counts c;

	(void)state;
	assert_int_equal(perf_data_write(p, path, err, sizeof(err)), 0);
	walk_perf_data(path, &c);
	assert_int_equal(c.sample, profile_nr_samples(p));
	assert_int_equal(c.vmm_samples, 9);
	assert_int_equal(c.comm, 3);		/* hello, worker, [vmm] */
	assert_int_equal(c.kernel_mmap, 1);	/* one executable segment */
	assert_int_equal(c.mmap, 2);		/* + hello's, in pid 1 */
	assert_int_equal(c.other, 0);
	assert_int_equal(perf_data_write(p, "/nonexistent/dir/perf.data", err,
					 sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/dir/perf.data"));
	profile_free(p);
}

/* Our reader gives back what our writer wrote (binaries still there). */
static void test_perf_data_round_trip(void **state)
{
	struct profile *p = sample_profile(), *q;
	const char *path = tmpfile_path("perf.data");
	char *a, *b;

	(void)state;
	profile_set_event(p, "instructions:u", PERF_TYPE_HARDWARE,
			  PERF_COUNT_HW_INSTRUCTIONS);
	assert_int_equal(perf_data_write(p, path, err, sizeof(err)), 0);
	assert_int_equal(profile_open(&q, path, err, sizeof(err)), 0);
	assert_string_equal(profile_event_name(q), "instructions:u");
	/* Images are named after their files there. */
	a = report_str(p, "comm,sym", false);
	b = report_str(q, "comm,sym", false);
	assert_string_equal(a, b);
	free(a);
	free(b);
	profile_free(q);
	profile_free(p);
}

/* A global image is mapped into each process; a bound one at its exec. */
static void test_perf_data_processes(void **state)
{
	struct profile *p = sample_profile(), *q;
	const char *path = tmpfile_path("perf2.data");
	struct perf_counts c;
	char *a, *b;
	int sh;

	(void)state;
	for (uint32_t pid = 3; pid <= 5; pid++) {
		profile_comm(p, pid, pid, "again");
		add(p, pid, pid, SAMPLE_USER, nm_addr("main"), 7000, 100);
	}
	sh = profile_add_image(p, "sh", prog_path, 0, false, err, sizeof(err));
	profile_image_pid(p, sh, 9, 8000);
	profile_comm_at(p, 9, 9, "sh", 8000);
	add(p, 9, 9, SAMPLE_USER, nm_addr("main"), 8001, 100);
	assert_int_equal(perf_data_write(p, path, err, sizeof(err)), 0);
	walk_perf_data(path, &c);
	/* hello into pids 1, 3, 4, 5 and 9 (named); sh into 9; kernel. */
	assert_int_equal(c.mmap, 5 + 1 + 1);
	assert_int_equal(c.comm, 2 + 3 + 1 + 1);
	assert_int_equal(perf_data_read(&q, path, err, sizeof(err)), 0);
	a = report_str(p, "pid,sym", false);
	b = report_str(q, "pid,sym", false);
	assert_string_equal(a, b);
	free(a);
	free(b);
	profile_free(q);
	profile_free(p);
}

static void test_perf_data_corrupt(void **state)
{
	struct profile *p = sample_profile(), *q;
	const char *path = tmpfile_path("perf.data");
	const char *bad = tmpfile_path("bad.perf");
	uint8_t *d;
	size_t len;

	(void)state;
	assert_int_equal(perf_data_write(p, path, err, sizeof(err)), 0);
	d = slurp(path, &len);
	for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
		spill(bad, d, cut);
		if (perf_data_read(&q, bad, err, sizeof(err)) == 0)
			profile_free(q);
		else
			assert_null(q);
	}
	srand(11);
	for (int round = 0; round < 300; round++) {
		uint8_t *c = malloc(len);

		memcpy(c, d, len);
		for (int k = 0; k < 4; k++)
			c[rand() % len] = rand();
		spill(bad, c, len);
		if (perf_data_read(&q, bad, err, sizeof(err)) == 0) {
			free(report_str(q, NULL, false));
			profile_free(q);
		}
		free(c);
	}
	assert_int_equal(perf_data_read(&q, prog_path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a perf.data file"));
	free(d);
	profile_free(p);
}

/* The distribution's perf reads it and names our symbols. */
/* perf script shows record -g's chains as Linux's own (linux-perf). */
static void test_perf_script_chains(void **state)
{
	uint64_t chain[3];
	struct profile *p = chain_profile(chain);
	const char *path = tmpfile_path("perfchain.data");
	const char *frames[] = { " main+0x4 (", " libc_start_main_stage2+0x5 (",
				 " __libc_start_main+0x5 (", " _start_c+0x5 (" };
	char cmd[512], *out = NULL, *at, *end;
	bool found = false;
	size_t len = 0;
	FILE *f, *m;
	int c;

	(void)state;
	if (system("perf --version >/dev/null 2>&1") != 0) {
		profile_free(p);
		skip();	/* linux-perf not installed (scripts/deps.sh) */
	}
	assert_int_equal(perf_data_write(p, path, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), "perf script -i '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	m = open_memstream(&out, &len);
	assert_non_null(f);
	assert_non_null(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	assert_int_equal(pclose(f), 0);
	fclose(m);
	/* Some sample's block: its IP, then the callers innermost first. */
	for (at = out; at && !found; at = end ? end + 2 : NULL) {
		char *f0 = at;

		end = strstr(at, "\n\n");
		if (end)
			*end = 0;
		found = true;
		for (int i = 0; i < 4 && found; i++) {
			f0 = strstr(f0, frames[i]);
			found = f0 != NULL;
		}
	}
	if (!found)
		fail_msg("no sample with main's chain");
	free(out);
	profile_free(p);
}

static void test_perf_report_reads_it(void **state)
{
	struct profile *p = sample_profile();
	const char *path = tmpfile_path("perf.data");
	char cmd[512], line[512];
	bool main_row = false, kernel_row = false, vmm_row = false;
	int script_lines = 0;
	FILE *f;

	(void)state;
	if (system("perf --version >/dev/null 2>&1") != 0) {
		profile_free(p);
		skip();	/* linux-perf not installed (scripts/deps.sh) */
	}
	assert_int_equal(perf_data_write(p, path, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), "perf report -i '%s' --stdio 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		fputs(line, stderr);	/* in the test log, for the record */
		squeeze(line);
		if (!strcmp(line, "60.00% hello hello [.] main\n"))
			main_row = true;
		if (strstr(line, "12.00% hello perfvisor-kernel [k] _start"))
			kernel_row = true;
		if (strstr(line, "8.00% [vmm] [unknown] [H] 0x0000000000000005"))
			vmm_row = true;
	}
	assert_int_equal(pclose(f), 0);
	assert_true(main_row);
	assert_true(kernel_row);
	assert_true(vmm_row);

	snprintf(cmd, sizeof(cmd), "perf script -i '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		script_lines++;
	assert_int_equal(pclose(f), 0);
	assert_int_equal(script_lines, profile_nr_samples(p));
	profile_free(p);
}

static int cleanup(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_main),
		cmocka_unit_test(test_resolve_like_nm),
		cmocka_unit_test(test_resolve_kernel),
		cmocka_unit_test(test_bad_image),
		cmocka_unit_test(test_exec_bindings),
		cmocka_unit_test(test_exit_names),
		cmocka_unit_test(test_report_table),
		cmocka_unit_test(test_report_sort_keys),
		cmocka_unit_test(test_report_nr_and_output),
		cmocka_unit_test(test_empty_report),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_own_format_round_trip),
		cmocka_unit_test(test_own_format_corrupt),
		cmocka_unit_test(test_chain_store),
		cmocka_unit_test(test_chain_bound),
		cmocka_unit_test(test_chain_threads),
		cmocka_unit_test(test_chain_files),
		cmocka_unit_test(test_perf_data_header),
		cmocka_unit_test(test_perf_data_round_trip),
		cmocka_unit_test(test_perf_data_processes),
		cmocka_unit_test(test_perf_data_corrupt),
		cmocka_unit_test(test_perf_report_reads_it),
		cmocka_unit_test(test_perf_script_chains),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s GUEST-PROGRAM GUEST-KERNEL\n",
			argv[0]);
		return 2;
	}
	prog_path = argv[1];
	kernel_path = argv[2];
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	load_nm(prog_path, &nmsyms, &nnm);
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
