// SPDX-License-Identifier: MIT
/*
 * vmm bench suite results: parsing counts back from the tools' output and
 * writing JSON, CSV and Markdown.  JSON and CSV share one list of fields
 * per workload (wl_fields), so the two files cannot drift apart.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bench_results.h"

const char *const bench_cfg_names[NCFG] = {
	"native", "guest", "offset", "saverestore", "raw",
};

const char *const bench_step_sizes[NSTEP_SIZES] = { "micro", "tiny" };

static const char *const preempt_names[NPREEMPT] = {
	"offset", "saverestore", "raw",
};

/* A count at the start of s, up to the delimiter; -1 if there is none. */
static int count_parse(const char *s, char delim, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	*out = strtoull(s, &end, 10);
	return *end == delim || (delim == '\n' && *end == 0) ? 0 : -1;
}

/* The line after l, or NULL after the last one. */
static const char *line_next(const char *l)
{
	const char *nl = strchr(l, '\n');

	return nl ? nl + 1 : NULL;
}

int bench_parse_stat_csv(const char *text, const char *event, uint64_t *out)
{
	size_t len = strlen(event);

	for (const char *l = text; l && *l; l = line_next(l)) {
		/* COUNT,UNIT,EVENT,...: the event is after the second comma. */
		const char *c1 = strchr(l, ','), *c2, *nl = strchr(l, '\n');

		if (!c1 || (nl && c1 > nl) || !(c2 = strchr(c1 + 1, ',')) ||
		    (nl && c2 > nl))
			continue;
		if (!strncmp(c2 + 1, event, len) && c2[1 + len] == ',')
			return count_parse(l, ',', out);
	}
	return -1;
}

int bench_parse_stepcount(const char *text, const char *event, uint64_t *out)
{
	size_t len = strlen(event);

	for (const char *l = text; l && *l; l = line_next(l))
		if (!strncmp(l, event, len) && l[len] == ' ')
			return count_parse(l + len + 1, '\n', out);
	return -1;
}

/* A system call's line: keep it among the most frequent ones. */
static void top_add(struct bench_kernel *k, const char *name, size_t len,
		    uint64_t count)
{
	int i = k->ntop < BENCH_TOP_SYSCALLS ? k->ntop++ : BENCH_TOP_SYSCALLS;

	/* Slide the smaller ones down; i ends where this one goes. */
	for (; i > 0 && k->top[i - 1].count < count; i--)
		if (i < BENCH_TOP_SYSCALLS)
			k->top[i] = k->top[i - 1];
	if (i == BENCH_TOP_SYSCALLS)
		return;
	if (len >= sizeof(k->top[i].name))
		len = sizeof(k->top[i].name) - 1;
	memcpy(k->top[i].name, name, len);
	k->top[i].name[len] = 0;
	k->top[i].count = count;
}

int bench_parse_breakdown(const char *text, struct bench_kernel *k)
{
	static const struct {
		const char *event;
		size_t off;
	} fields[] = {
#define F(e, m) { e, offsetof(struct bench_kernel, m) }
		F("time:vcpus", vcpu_ns), F("time:guest", guest_ns),
		F("time:vmm", vmm_ns), F("time:halted", halted_ns),
		F("time:user", user_ns), F("time:kernel", kernel_ns),
		F("kvm:insn_emulation", kernel_insns),
		F("kvm:exits", kvm_exits), F("kvm:pf_fixed", pf_fixed),
		F("kentry:syscalls", syscalls),
		F("kentry:page-fault", page_faults), F("kentry:timer", timer),
		F("kentry:ipi", ipi), F("kentry:pmi", pmi),
		F("kentry:debug", debug),
#undef F
	};
	static const char sys[] = ",,kentry:syscall:", vx[] = ",,vmm-exit:";

	uint64_t su, sk;

	memset(k, 0, sizeof(*k));
	if (bench_parse_stat_csv(text, "samples:user", &su) ||
	    bench_parse_stat_csv(text, "samples:kernel", &sk))
		return -1;
	k->samples = su + sk;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (bench_parse_stat_csv(text, fields[i].event,
					 (uint64_t *)((char *)k + fields[i].off)))
			return -1;
	for (const char *l = text; l && *l; l = line_next(l)) {
		const char *p = strstr(l, sys), *nl = strchr(l, '\n'), *end;
		uint64_t n;

		if (count_parse(l, ',', &n))
			continue;
		if (p && (!nl || p < nl)) {
			p += sizeof(sys) - 1;
			end = strchr(p, ',');
			if (end && (!nl || end < nl))
				top_add(k, p, end - p, n);
		} else if ((p = strstr(l, vx)) && (!nl || p < nl) &&
			   strncmp(p + sizeof(vx) - 1, "intr,", 5)) {
			/* Not the sampling's own kicks (intr). */
			k->vmm_exits += n;
		}
	}
	return 0;
}

int64_t bench_step_startup_diff(const struct bench_wl_result *r)
{
	return (int64_t)(r->step_guest[STEP_TINY] - r->step_oracle[STEP_TINY]);
}

int64_t bench_step_work_diff(const struct bench_wl_result *r)
{
	int64_t g = r->step_guest[STEP_TINY] - r->step_guest[STEP_MICRO];
	int64_t o = r->step_oracle[STEP_TINY] - r->step_oracle[STEP_MICRO];

	return g - o;
}

double bench_step_us_per_insn(const struct bench_wl_result *r, int mode)
{
	uint64_t n = r->step_guest[STEP_TINY];

	return n ? (r->step_wall[mode][STEP_TINY] - r->step_plain) * 1e6 / n : 0;
}

double bench_step_insns_per_trap(const struct bench_wl_result *r, int mode)
{
	return r->step_traps[mode][STEP_TINY] ?
	       (double)r->step_guest[STEP_TINY] /
	       r->step_traps[mode][STEP_TINY] : 0;
}

/* One named value of a workload; unset when its part did not run. */
struct field {
	char name[32];
	char val[160];
	bool set;
};

#define MAX_FIELDS 64	/* a workload has 41 now; ASan runs catch an overflow */

static struct field *field_put(struct field *f, bool set, const char *name,
			       const char *fmt, ...)
{
	va_list ap;

	snprintf(f->name, sizeof(f->name), "%s", name);
	f->set = set;
	f->val[0] = 0;
	if (set) {
		va_start(ap, fmt);
		vsnprintf(f->val, sizeof(f->val), fmt, ap);
		va_end(ap);
	}
	return f + 1;
}

/* "mmap:8 munmap:7": the most frequent system calls, for a field. */
static void top_format(const struct bench_kernel *k, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < k->ntop && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%s:%" PRIu64, i ? " " : "",
			      k->top[i].name, k->top[i].count);
}

/* The kernel part's values (where the time goes), after the others. */
static size_t wl_kernel_fields(const struct bench_wl_result *r,
			       struct field *f)
{
	const struct bench_kernel *k = &r->kern;
	struct field *p = f;
	bool c = r->have_kernel;
	char top[128];

	p = field_put(p, c, "vcpu_ms", "%.3f", k->vcpu_ns / 1e6);
	p = field_put(p, c, "guest_ms", "%.3f", k->guest_ns / 1e6);
	p = field_put(p, c, "vmm_ms", "%.3f", k->vmm_ns / 1e6);
	p = field_put(p, c, "halted_ms", "%.3f", k->halted_ns / 1e6);
	p = field_put(p, c, "user_ms", "%.3f", k->user_ns / 1e6);
	p = field_put(p, c, "kernel_ms", "%.3f", k->kernel_ns / 1e6);
	p = field_put(p, c, "mode_samples", "%" PRIu64, k->samples);
	p = field_put(p, c, "kernel_insns", "%" PRIu64, k->kernel_insns);
	p = field_put(p, c, "kvm_exits", "%" PRIu64, k->kvm_exits);
	p = field_put(p, c, "kvm_pf_fixed", "%" PRIu64, k->pf_fixed);
	p = field_put(p, c, "vmm_exits", "%" PRIu64, k->vmm_exits);
	p = field_put(p, c, "syscalls", "%" PRIu64, k->syscalls);
	p = field_put(p, c, "page_faults", "%" PRIu64, k->page_faults);
	p = field_put(p, c, "timer_irqs", "%" PRIu64, k->timer);
	p = field_put(p, c, "ipis", "%" PRIu64, k->ipi);
	p = field_put(p, c, "pmis", "%" PRIu64, k->pmi);
	p = field_put(p, c, "debug_traps", "%" PRIu64, k->debug);
	top_format(k, top, sizeof(top));
	/* A JSON string, and a quoted CSV field without a comma. */
	p = field_put(p, c, "top_syscalls", "\"%s\"", top);
	return p - f;
}

/* Every measured value of one workload, in CSV column order. */
static size_t wl_fields(const struct bench_wl_result *r, struct field *f)
{
	struct field *p = f;
	bool o = r->have_overhead, s = r->have_step, q = r->have_preempt;
	char name[32];

	for (int k = 0; k < NCFG; k++) {
		snprintf(name, sizeof(name), "%s_s", bench_cfg_names[k]);
		p = field_put(p, o, name, "%.4f", r->time_s[k]);
	}
	p = field_put(p, o, "native_tsc", "%.0f", r->native_tsc);
	p = field_put(p, o, "guest_cycles", "%.0f", r->guest_cycles);
	p = field_put(p, o, "cycles_per_native_tsc", "%.4f",
		      r->guest_cycles / r->native_tsc);
	for (int z = 0; z < NSTEP_SIZES; z++) {
		snprintf(name, sizeof(name), "step_guest_%s", bench_step_sizes[z]);
		p = field_put(p, s, name, "%" PRIu64, r->step_guest[z]);
		snprintf(name, sizeof(name), "step_oracle_%s", bench_step_sizes[z]);
		p = field_put(p, s, name, "%" PRIu64, r->step_oracle[z]);
	}
	p = field_put(p, s, "step_startup_diff", "%" PRId64,
		      bench_step_startup_diff(r));
	p = field_put(p, s, "step_work_diff", "%" PRId64, bench_step_work_diff(r));
	p = field_put(p, s, "step_us_per_insn_blocks", "%.3f",
		      bench_step_us_per_insn(r, STEP_CACHE));
	p = field_put(p, s, "step_us_per_insn_int3", "%.3f",
		      bench_step_us_per_insn(r, STEP_INT3));
	p = field_put(p, s, "step_us_per_insn_single", "%.3f",
		      bench_step_us_per_insn(r, STEP_SINGLE));
	p = field_put(p, s, "step_insns_per_trap", "%.2f",
		      bench_step_insns_per_trap(r, STEP_CACHE));
	p = field_put(p, s, "step_insns_per_trap_int3", "%.2f",
		      bench_step_insns_per_trap(r, STEP_INT3));
	p = field_put(p, q, "preempt_idle_cycles", "%.0f", r->idle_cycles);
	for (int k = 0; k < NPREEMPT; k++) {
		snprintf(name, sizeof(name), "preempt_%s", preempt_names[k]);
		p = field_put(p, q, name, "%.4f", r->preempt_ratio[k]);
	}
	return p - f + wl_kernel_fields(r, p);
}

void bench_write_json(FILE *f, const struct bench_results *res)
{
	struct field fl[MAX_FIELDS];

	fprintf(f, "{\"host\": \"%s\", \"size\": \"%s\", \"reps\": %d, "
		"\"spinners\": %d, \"workloads\": [",
		res->host ? res->host : "unknown", res->size,
		res->reps, res->spinners);
	for (size_t w = 0; w < res->n; w++) {
		size_t n = wl_fields(&res->wl[w], fl);

		fprintf(f, "%s{\"name\": \"%s\"", w ? ", " : "", res->wl[w].name);
		for (size_t i = 0; i < n; i++)
			if (fl[i].set)
				fprintf(f, ", \"%s\": %s", fl[i].name, fl[i].val);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}

void bench_write_csv(FILE *f, const struct bench_results *res)
{
	struct field fl[MAX_FIELDS];
	size_t n;

	/* The header comes from the same list, so any workload will do. */
	static const struct bench_wl_result none;

	n = wl_fields(&none, fl);
	fprintf(f, "workload");
	for (size_t i = 0; i < n; i++)
		fprintf(f, ",%s", fl[i].name);
	fprintf(f, "\n");
	for (size_t w = 0; w < res->n; w++) {
		n = wl_fields(&res->wl[w], fl);
		fprintf(f, "%s", res->wl[w].name);
		for (size_t i = 0; i < n; i++)
			fprintf(f, ",%s", fl[i].val);
		fprintf(f, "\n");
	}
}

enum part { PART_OVERHEAD, PART_STEP, PART_PREEMPT, PART_KERNEL };

static bool wl_has(const struct bench_wl_result *r, enum part p)
{
	return p == PART_OVERHEAD ? r->have_overhead :
	       p == PART_STEP ? r->have_step :
	       p == PART_PREEMPT ? r->have_preempt : r->have_kernel;
}

/* A table is written only when some workload has its numbers. */
static bool any_part(const struct bench_results *res, enum part p)
{
	for (size_t w = 0; w < res->n; w++)
		if (wl_has(&res->wl[w], p))
			return true;
	return false;
}

static void md_overhead(FILE *f, const struct bench_results *res)
{
	fprintf(f, "\n## Overhead\n\nMedian wall seconds of each workload (the "
		"same static musl binary, size `%s`) natively, in the guest, "
		"and in the guest under `vmm stat -e cycles` with each policy.  "
		"Ratios are within this one run.\n\n", res->size);
	fprintf(f, "| workload | native s | guest s | guest/native | "
		"offset/guest | saverestore/guest | raw/guest |\n"
		"|---|---|---|---|---|---|---|\n");
	for (size_t w = 0; w < res->n; w++) {
		const double *t = res->wl[w].time_s;

		if (res->wl[w].have_overhead)
			fprintf(f, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | "
				"%.3f |\n", res->wl[w].name, t[0], t[1],
				t[1] / t[0], t[2] / t[1], t[3] / t[1], t[4] / t[1]);
	}
}

static void md_step(FILE *f, const struct bench_results *res)
{
	fprintf(f, "\n## Accuracy: step source against the ptrace oracle\n\n"
		"`vmm stat --source step -e instructions:u` against "
		"`tests/tools/stepcount` (host ptrace single-stepping, host "
		"ASLR off) on the same binary with the same argv and an empty "
		"environment, at sizes `micro` and `tiny`.  The guest kernel's "
		"auxv and memory layout are not Linux's, so musl's start-up "
		"differs by a constant (*start-up*: guest - oracle at `tiny`); "
		"*work* = (guest tiny - guest micro) - (oracle tiny - oracle "
		"micro) cancels it and should be exactly 0.  Where it is not, "
		"the program itself took a different path (see "
		"`docs/specification.md`).\n\n");
	fprintf(f, "| workload | guest tiny | oracle tiny | start-up | "
		"guest tiny-micro | oracle tiny-micro | work |\n"
		"|---|---|---|---|---|---|---|\n");
	for (size_t w = 0; w < res->n; w++) {
		const struct bench_wl_result *r = &res->wl[w];

		if (r->have_step)
			fprintf(f, "| %s | %" PRIu64 " | %" PRIu64 " | %" PRId64
				" | %" PRIu64 " | %" PRIu64 " | **%" PRId64 "** |\n",
				r->name, r->step_guest[STEP_TINY],
				r->step_oracle[STEP_TINY],
				bench_step_startup_diff(r),
				r->step_guest[STEP_TINY] - r->step_guest[STEP_MICRO],
				r->step_oracle[STEP_TINY] - r->step_oracle[STEP_MICRO],
				bench_step_work_diff(r));
	}
}

static void md_step_cost(FILE *f, const struct bench_results *res)
{
	fprintf(f, "\n## Cost: the step source's three ways of trapping\n\n"
		"Wall time of `vmm stat --source step` at size `tiny` less that "
		"of the same `vmm run` uncounted, per user instruction: blocks "
		"run from the VMM's code cache (`--step-mode block`, the "
		"default), a basic block per int3 trap (`--step-mode int3`) "
		"and one instruction per trap (`--step-mode single`), in the "
		"same run; and the user instructions per trap of the first "
		"two.\n\n");
	fprintf(f, "| workload | µs/insn, cache | µs/insn, int3 | "
		"µs/insn, single | single/cache | insns per trap, cache | "
		"insns per trap, int3 |\n|---|---|---|---|---|---|---|\n");
	for (size_t w = 0; w < res->n; w++) {
		const struct bench_wl_result *r = &res->wl[w];
		double b = bench_step_us_per_insn(r, STEP_CACHE),
		       i3 = bench_step_us_per_insn(r, STEP_INT3),
		       one = bench_step_us_per_insn(r, STEP_SINGLE);

		if (r->have_step)
			fprintf(f, "| %s | %.3f | %.2f | %.2f | %.0f | %.1f | "
				"%.1f |\n", r->name, b, i3, one,
				b > 0 ? one / b : 0,
				bench_step_insns_per_trap(r, STEP_CACHE),
				bench_step_insns_per_trap(r, STEP_INT3));
	}
}

static void md_tsc(FILE *f, const struct bench_results *res)
{
	fprintf(f, "\n## Accuracy: tsc cycles against the native TSC\n\n"
		"Median `cycles` of the program in the guest (tsc source, "
		"offset policy: the runs of the overhead table) against the "
		"median TSC ticks from fork to wait of the native process.  "
		"The guest count leaves out boot and VMM time but includes the "
		"emulated guest kernel.  nbody's 4 threads run on 2 vCPUs "
		"(`--cpus 2`), as natively on 2 cores; its cycles sum both "
		"vCPUs, so its native side is the process's CPU time "
		"(user + system) in TSC ticks.\n\n");
	fprintf(f, "| workload | native TSC | guest cycles | guest/native |\n"
		"|---|---|---|---|\n");
	for (size_t w = 0; w < res->n; w++) {
		const struct bench_wl_result *r = &res->wl[w];

		if (r->have_overhead)
			fprintf(f, "| %s | %.0f | %.0f | %.3f |\n", r->name,
				r->native_tsc, r->guest_cycles,
				r->guest_cycles / r->native_tsc);
	}
}

static void md_preempt(FILE *f, const struct bench_results *res)
{
	fprintf(f, "\n## Accuracy under host preemption\n\n"
		"Each round counts `cycles` (tsc source) once with the offset "
		"policy on the idle host, then with each policy while %d "
		"spinner processes oversubscribe the host's CPUs.  The table "
		"gives the median over rounds of each loaded count divided by "
		"that round's idle offset count.  offset and saverestore "
		"exclude the preempted time (KVM steal time) and should stay "
		"near 1; raw counts it.\n\n", res->spinners);
	fprintf(f, "| workload | idle offset cycles | offset loaded/idle | "
		"saverestore loaded/idle | raw loaded/idle |\n"
		"|---|---|---|---|---|\n");
	for (size_t w = 0; w < res->n; w++) {
		const struct bench_wl_result *r = &res->wl[w];

		if (r->have_preempt)
			fprintf(f, "| %s | %.0f | %.3f | %.3f | %.3f |\n", r->name,
				r->idle_cycles, r->preempt_ratio[0],
				r->preempt_ratio[1], r->preempt_ratio[2]);
	}
}

void bench_time_plot_name(const char *plot, char *buf, size_t len)
{
	const char *dot = strrchr(plot, '.'), *slash = strrchr(plot, '/');

	if (!dot || (slash && dot < slash))
		dot = plot + strlen(plot);
	snprintf(buf, len, "%.*s-time%s", (int)(dot - plot), plot, dot);
}

static void md_kernel(FILE *f, const struct bench_results *res,
		      const char *plot)
{
	char name[256];

	fprintf(f, "\n## Where the time goes\n\n"
		"One `vmm stat --breakdown` run of each workload (size `%s`).  "
		"*vCPU* is the vCPUs' time from boot to the end, summed; "
		"*guest* the part in KVM_RUN, not halted, split into *user* "
		"(native code) and *kernel* by the vCPU's mode at a 1 ms host "
		"timer (*samples*); the kernel's instructions are emulated one "
		"by one on kvm_pvm (*kernel insns*, KVM's `insn_emulation`); "
		"*VMM* the time the VMM spent handling exits (*VMM exits*, the "
		"sampling's own kicks left out); *KVM exits* all exits, KVM's "
		"own included; *pf_fixed* shadow page faults KVM fixed.  The "
		"guest kernel's entries: system calls (the most frequent by "
		"name), page faults, timer "
		"interrupts, IPIs, PMIs and #DB traps.\n\n", res->size);
	fprintf(f, "| workload | vCPU ms | guest ms | user ms | kernel ms | "
		"samples | VMM ms | halted ms | kernel insns | KVM exits | "
		"pf_fixed | VMM exits | syscalls | page faults | timer | IPI | "
		"PMI | #DB | top system calls |\n"
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		"---|---|---|---|\n");
	for (size_t w = 0; w < res->n; w++) {
		const struct bench_kernel *k = &res->wl[w].kern;
		char top[128];

		if (!res->wl[w].have_kernel)
			continue;
		top_format(k, top, sizeof(top));
		fprintf(f, "| %s | %.1f | %.1f | %.1f | %.1f | %" PRIu64
			" | %.1f | %.1f | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64
			" | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64
			" | %" PRIu64 " | %s |\n", res->wl[w].name,
			k->vcpu_ns / 1e6, k->guest_ns / 1e6, k->user_ns / 1e6,
			k->kernel_ns / 1e6, k->samples, k->vmm_ns / 1e6,
			k->halted_ns / 1e6, k->kernel_insns, k->kvm_exits,
			k->pf_fixed, k->vmm_exits, k->syscalls, k->page_faults,
			k->timer, k->ipi, k->pmi, k->debug, top);
	}
	if (plot) {
		bench_time_plot_name(plot, name, sizeof(name));
		fprintf(f, "\n![where the time goes](%s)\n", name);
	}
}

void bench_write_markdown(FILE *f, const struct bench_results *res,
			  const char *plot)
{
	fprintf(f, "# perfvisor results\n\nGenerated by `vmm bench suite "
		"--size %s --reps %d` (`vmm bench report` runs it with every "
		"part and writes docs/results.{md,json,csv,png}).  These "
		"machines are shared and noisy: compare numbers within one "
		"run.  Host: %s KVM.\n", res->size, res->reps,
		res->host ? res->host : "unknown");
	if (any_part(res, PART_OVERHEAD)) {
		md_overhead(f, res);
		if (plot)
			fprintf(f, "\n![time relative to native](%s)\n", plot);
	}
	if (any_part(res, PART_STEP)) {
		md_step(f, res);
		md_step_cost(f, res);
	}
	if (any_part(res, PART_OVERHEAD))
		md_tsc(f, res);
	if (any_part(res, PART_PREEMPT))
		md_preempt(f, res);
	if (any_part(res, PART_KERNEL))
		md_kernel(f, res, plot);
}
