// SPDX-License-Identifier: MIT
/*
 * Profiles: `vmm report`, the perf report --stdio table and folded stacks,
 * and the names of the VMM's exit reasons shown in it.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "hypercall.h"
#include "vpmu.h"
#include "profile_internal.h"
#include "vcpu.h"		/* hypercall_name() */

const char *profile_exit_name(uint16_t r, char *buf, size_t len)
{
	const char *name;
	static const char *const kvm[] = {
		[KVM_EXIT_UNKNOWN] = "unknown",
		[KVM_EXIT_EXCEPTION] = "exception",
		[KVM_EXIT_IO] = "io",
		[KVM_EXIT_HYPERCALL] = "kvm_hypercall",
		[KVM_EXIT_DEBUG] = "debug",
		[KVM_EXIT_HLT] = "hlt",
		[KVM_EXIT_MMIO] = "mmio",
		[KVM_EXIT_IRQ_WINDOW_OPEN] = "irq_window_open",
		[KVM_EXIT_SHUTDOWN] = "shutdown",
		[KVM_EXIT_FAIL_ENTRY] = "fail_entry",
		[KVM_EXIT_INTR] = "intr",
		[KVM_EXIT_SET_TPR] = "set_tpr",
		[KVM_EXIT_TPR_ACCESS] = "tpr_access",
		[KVM_EXIT_NMI] = "nmi",
		[KVM_EXIT_INTERNAL_ERROR] = "internal_error",
		[KVM_EXIT_SYSTEM_EVENT] = "system_event",
		[KVM_EXIT_IOAPIC_EOI] = "ioapic_eoi",
		[KVM_EXIT_X86_RDMSR] = "msr_read",
		[KVM_EXIT_X86_WRMSR] = "msr_write",
		[KVM_EXIT_X86_BUS_LOCK] = "bus_lock",
		[KVM_EXIT_NOTIFY] = "notify",
	};

	if (r < sizeof(kvm) / sizeof(kvm[0]) && kvm[r])
		return kvm[r];
	if (r >= PROFILE_HC_BASE && (name = hypercall_name(r - PROFILE_HC_BASE))) {
		/* perf's style for sort keys: underscores, as KVM's names. */
		snprintf(buf, len, "%s", name);
		for (char *p = buf; *p; p++)
			if (*p == '-')
				*p = '_';
		return buf;
	}
	if (r >= PROFILE_HC_BASE)
		snprintf(buf, len, "hypercall_%u", r - PROFILE_HC_BASE);
	else
		snprintf(buf, len, "%u", r);
	return buf;
}


/* ---- Report ---- */

enum sort_key { K_COMM, K_PID, K_TID, K_DSO, K_SYM, K_CPU, K_NR };

static const char *const key_names[K_NR] = {
	"comm", "pid", "tid", "dso", "sym", "cpu",
};
static const char *const key_headers[K_NR] = {
	"Command", "Pid:Command", "Tid:Command", "Shared Object", "Symbol",
	"CPU",
};

#define MAX_KEYS 8
#define COL_MAX 512

static int parse_sort(const char *sort, enum sort_key *keys, char *err,
		      size_t errlen)
{
	char buf[256], *tok, *save;
	int n = 0;

	if (!sort)
		sort = "comm,dso,sym";
	if (strlen(sort) >= sizeof(buf))
		return profile_fail(err, errlen, "--sort list too long");
	strcpy(buf, sort);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < K_NR; k++)
			if (!strcmp(tok, key_names[k]))
				break;
		if (k == K_NR)
			return profile_fail(err, errlen, "unknown --sort key '%s' "
					    "(keys: comm,pid,tid,dso,sym,cpu)", tok);
		if (n == MAX_KEYS)
			return profile_fail(err, errlen, "too many --sort keys");
		keys[n++] = k;
	}
	if (!n)
		return profile_fail(err, errlen, "empty --sort list");
	return n;
}

int profile_sort_check(const char *sort, char *err, size_t errlen)
{
	enum sort_key keys[MAX_KEYS];

	return parse_sort(sort, keys, err, errlen) < 0 ? -1 : 0;
}

/* One sample, resolved; after merging, one row. */
struct row {
	const char *comm;	/* NULL: unnamed thread, shown ":tid" */
	const char *dso;
	const char *sym;	/* NULL: shown from addr */
	uint64_t addr;		/* ip, or exit reason when level 'v' */
	uint32_t pid, tid, cpu;
	char level;
	uint64_t period, nr;
};

struct sorter {
	const enum sort_key *keys;
	int nkeys;
};

static int ucmp(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int comm_str_cmp(const struct row *a, const struct row *b)
{
	if (a->comm && b->comm)
		return strcmp(a->comm, b->comm);
	if (!a->comm && !b->comm)
		return ucmp(a->tid, b->tid);
	return a->comm ? -1 : 1;
}

static int key_cmp(enum sort_key k, const struct row *a, const struct row *b)
{
	int c;

	switch (k) {
	case K_COMM:
		return comm_str_cmp(a, b);
	case K_PID:
		c = ucmp(a->pid, b->pid);
		return c ? c : comm_str_cmp(a, b);
	case K_TID:
		c = ucmp(a->tid, b->tid);
		return c ? c : comm_str_cmp(a, b);
	case K_DSO:
		return strcmp(a->dso, b->dso);
	case K_SYM:
		if (a->level != b->level)
			return a->level < b->level ? -1 : 1;
		if (a->sym && b->sym)
			return strcmp(a->sym, b->sym);
		if (a->sym || b->sym)
			return a->sym ? -1 : 1;
		return ucmp(a->addr, b->addr);
	case K_CPU:
		return ucmp(a->cpu, b->cpu);
	default:
		return 0;
	}
}

static int rows_cmp_keys(const struct row *a, const struct row *b,
			 const struct sorter *s)
{
	for (int i = 0; i < s->nkeys; i++) {
		int c = key_cmp(s->keys[i], a, b);

		if (c)
			return c;
	}
	return 0;
}

static int rows_cmp_r(const void *a, const void *b, void *arg)
{
	return rows_cmp_keys(a, b, arg);
}

/* Report order: heaviest first; ties by key, so output is deterministic. */
static int rows_cmp_overhead(const void *a, const void *b, void *arg)
{
	const struct row *x = a, *y = b;

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return rows_cmp_keys(x, y, arg);
}

static void format_key(enum sort_key k, const struct row *r, char *buf,
		       size_t len, bool folded)
{
	char tmp[32], cb[24], tmp2[COL_MAX - 8];
	const char *comm = r->comm;

	if (!comm) {
		snprintf(cb, sizeof(cb), ":%" PRIu32, r->tid);
		comm = cb;
	}
	switch (k) {
	case K_COMM:
		snprintf(buf, len, "%s", comm);
		break;
	case K_PID:
		snprintf(buf, len, "%" PRIu32 ":%s", r->pid, comm);
		break;
	case K_TID:
		snprintf(buf, len, "%" PRIu32 ":%s", r->tid, comm);
		break;
	case K_DSO:
		snprintf(buf, len, "%s", r->dso);
		break;
	case K_SYM:
		/* The folded form drops perf's "[.] " level marks. */
		if (r->level == 'v')
			snprintf(tmp2, sizeof(tmp2), "exit:%s",
				 profile_exit_name(r->addr, tmp, sizeof(tmp)));
		else if (r->sym)
			snprintf(tmp2, sizeof(tmp2), "%s", r->sym);
		else
			snprintf(tmp2, sizeof(tmp2), folded ? "0x%" PRIx64 :
				 "0x%016" PRIx64, r->addr);
		if (folded)
			snprintf(buf, len, "%s", tmp2);
		else
			snprintf(buf, len, "[%c] %s", r->level, tmp2);
		break;
	case K_CPU:
		snprintf(buf, len, folded ? "cpu%03" PRIu32 : "%03" PRIu32,
			 r->cpu);
		break;
	default:
		buf[0] = 0;
	}
}

static int str_ptr_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ';' separates frames, '\n' lines: keep them out of a frame. */
static char *frame_clean(char *frame)
{
	for (char *c = frame; *c; c++)
		if (*c == ';' || *c == '\n')
			*c = '_';
	return frame;
}

static int print_folded(FILE *f, const struct row *rows, size_t n,
			const enum sort_key *keys, int nkeys)
{
	char **lines = calloc(n ? n : 1, sizeof(*lines));
	char frame[512], line[4096];
	int ret = 0;

	if (!lines)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t at = 0;

		for (int k = 0; k < nkeys; k++) {
			format_key(keys[k], &rows[i], frame, sizeof(frame),
				   true);
			at += snprintf(line + at, sizeof(line) - at, "%s%s",
				       k ? ";" : "", frame_clean(frame));
			if (at >= sizeof(line))
				at = sizeof(line) - 1;
		}
		if (asprintf(&lines[i], "%s %" PRIu64, line,
			     rows[i].period) < 0) {
			lines[i] = NULL;
			ret = -1;
			goto out;
		}
	}
	/* Sorted like stackcollapse output, so diffs of two runs line up. */
	qsort(lines, n, sizeof(*lines), str_ptr_cmp);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	return ret;
}

/* One sample resolved to a row of its own. */
static void fill_row(const struct profile *p, const struct sample *s,
		     struct row *r)
{
	struct sym_info si;
	char buf[24];

	profile_resolve(p, s, &si);
	r->comm = profile_comm_of(p, s, buf, sizeof(buf));
	if (r->comm == buf)
		r->comm = NULL;
	r->dso = si.dso;
	r->sym = si.sym;
	r->level = si.level;
	r->addr = s->kind == SAMPLE_VMM ? s->exit_reason : s->ip;
	r->pid = s->pid;
	r->tid = s->tid;
	r->cpu = s->cpu;
	r->period = s->period;
	r->nr = 1;
}

/* A caller's frame: the symbol holding the call (return address - 1). */
static void format_caller(const struct profile *p, const struct sample *s,
			  uint64_t ret, char *buf, size_t len)
{
	struct sample c = *s;
	struct sym_info si;

	c.ip = ret - 1;
	profile_resolve(p, &c, &si);
	if (si.sym)
		snprintf(buf, len, "%s", si.sym);
	else
		snprintf(buf, len, "0x%" PRIx64, ret);
}

struct stack {
	char *line;
	uint64_t period;
};

static int stack_cmp(const void *a, const void *b)
{
	return strcmp(((const struct stack *)a)->line,
		      ((const struct stack *)b)->line);
}

/* The sort keys' frames of one sample, its callers root-first before the
 * symbol's frame; malloc'd, NULL when out of memory. */
static char *chain_line(const struct profile *p, const struct sample *s,
			const enum sort_key *keys, int nkeys)
{
	char frame[512], *line = NULL;
	size_t len, nchain;
	const uint64_t *chain = profile_sample_chain(p, s, &nchain);
	FILE *m = open_memstream(&line, &len);
	struct row r;

	if (!m)
		return NULL;
	fill_row(p, s, &r);
	for (int k = 0; k < nkeys; k++) {
		if (k)
			fputc(';', m);
		for (size_t j = nchain; keys[k] == K_SYM && j-- > 0;) {
			format_caller(p, s, chain[j], frame, sizeof(frame));
			fputs(frame_clean(frame), m);
			fputc(';', m);
		}
		format_key(keys[k], &r, frame, sizeof(frame), true);
		fputs(frame_clean(frame), m);
	}
	if (fclose(m)) {
		free(line);
		return NULL;
	}
	return line;
}

/*
 * Folded stacks with call chains: one line per distinct stack, each
 * sample's callers (root first) in front of its symbol.  Samples without
 * a chain give the keys' stack alone, as print_folded().
 */
static int print_folded_chains(FILE *f, const struct profile *p,
			       const enum sort_key *keys, int nkeys)
{
	struct stack *st = calloc(p->nsamples ? p->nsamples : 1, sizeof(*st));
	size_t n = 0;
	int ret = 0;

	if (!st)
		return -1;
	for (; n < p->nsamples; n++) {
		st[n].line = chain_line(p, &p->samples[n], keys, nkeys);
		st[n].period = p->samples[n].period;
		if (!st[n].line) {
			ret = -1;
			goto out;
		}
	}
	qsort(st, n, sizeof(*st), stack_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t sum = 0;

		for (j = i; j < n && !strcmp(st[i].line, st[j].line); j++)
			sum += st[j].period;
		fprintf(f, "%s %" PRIu64 "\n", st[i].line, sum);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(st[i].line);
	free(st);
	return ret;
}

/* Resolve every sample and merge those equal under the sort keys. */
static struct row *build_rows(const struct profile *p,
			      const struct sorter *so, size_t *nrows)
{
	struct row *rows = calloc(p->nsamples ? p->nsamples : 1,
				  sizeof(*rows));
	size_t n = 0;

	if (!rows)
		return NULL;
	for (size_t i = 0; i < p->nsamples; i++)
		fill_row(p, &p->samples[i], &rows[i]);
	qsort_r(rows, p->nsamples, sizeof(*rows), rows_cmp_r, (void *)so);
	for (size_t i = 0; i < p->nsamples; i++) {
		if (n && !rows_cmp_keys(&rows[n - 1], &rows[i], so)) {
			rows[n - 1].period += rows[i].period;
			rows[n - 1].nr += rows[i].nr;
		} else {
			rows[n++] = rows[i];
		}
	}
	qsort_r(rows, n, sizeof(*rows), rows_cmp_overhead, (void *)so);
	*nrows = n;
	return rows;
}

static void print_dots(FILE *f, int width)
{
	for (int i = 0; i < width; i++)
		fputc('.', f);
}

static int print_table(FILE *f, const struct profile *p,
		       const struct report_opts *o, const struct row *rows,
		       size_t n, const enum sort_key *keys, int nkeys)
{
	uint64_t total = profile_total_period(p);
	int width[MAX_KEYS], nrw = 7, ret = -1;
	char **cells, cell[COL_MAX];

	cells = calloc(n * nkeys + 1, sizeof(*cells));
	if (!cells)
		return -1;
	for (int k = 0; k < nkeys; k++)
		width[k] = strlen(key_headers[keys[k]]);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < nkeys; k++) {
			int w;

			format_key(keys[k], &rows[i], cell, COL_MAX, false);
			cells[i * nkeys + k] = strdup(cell);
			if (!cells[i * nkeys + k])
				goto out;
			w = strlen(cell);
			if (w > width[k])
				width[k] = w;
		}
	}
	fprintf(f, "# perfvisor report\n#\n");
	fprintf(f, "# Samples: %zu of event '%s'\n", p->nsamples, p->event);
	fprintf(f, "# Event count (approx.): %" PRIu64 "\n#\n", total);
	fprintf(f, "# Overhead");
	if (o->nr_samples)
		fprintf(f, "  %*s", nrw, "Samples");
	for (int k = 0; k < nkeys; k++)
		fprintf(f, "  %-*s", k == nkeys - 1 ? 0 : width[k],
			key_headers[keys[k]]);
	fprintf(f, "\n# ");
	print_dots(f, 8);
	if (o->nr_samples) {
		fprintf(f, "  ");
		print_dots(f, nrw);
	}
	for (int k = 0; k < nkeys; k++) {
		fprintf(f, "  ");
		print_dots(f, width[k]);
	}
	fprintf(f, "\n#\n");
	for (size_t i = 0; i < n; i++) {
		/* Overhead of the total period: samples may weigh differently. */
		fprintf(f, "  %7.2f%%", total ? 100.0 * rows[i].period / total
					      : 0.0);
		if (o->nr_samples)
			fprintf(f, "  %*" PRIu64, nrw, rows[i].nr);
		for (int k = 0; k < nkeys; k++)
			fprintf(f, "  %-*s", k == nkeys - 1 ? 0 : width[k],
				cells[i * nkeys + k]);
		fputc('\n', f);
	}
	if (!n)
		fprintf(f, "# (no samples)\n");
	fputc('\n', f);
	ret = 0;
out:
	for (size_t i = 0; i < n * nkeys; i++)
		free(cells[i]);
	free(cells);
	return ret;
}

int profile_report(const struct profile *p, const struct report_opts *o,
		   FILE *out)
{
	static const struct report_opts defaults;
	enum sort_key keys[MAX_KEYS];
	struct sorter so = { keys, 0 };
	struct row *rows;
	size_t n;
	FILE *f = out;
	int ret;

	if (!o)
		o = &defaults;
	so.nkeys = parse_sort(o->sort, keys, NULL, 0);
	if (so.nkeys < 0) {
		errno = EINVAL;
		return -1;
	}
	if (o->output) {
		f = fopen(o->output, "w");
		if (!f)
			return -1;
	}
	rows = build_rows(p, &so, &n);
	if (!rows) {
		ret = -1;
		errno = ENOMEM;
	} else if (o->folded && profile_has_chains(p)) {
		ret = print_folded_chains(f, p, keys, so.nkeys);
	} else if (o->folded) {
		ret = print_folded(f, rows, n, keys, so.nkeys);
	} else {
		ret = print_table(f, p, o, rows, n, keys, so.nkeys);
	}
	free(rows);
	if (fflush(f) != 0 || ferror(f))
		ret = -1;
	if (f != out && fclose(f) != 0)
		ret = -1;
	return ret;
}

