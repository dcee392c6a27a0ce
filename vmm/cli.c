// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "host.h"
#include "layout.h"
#include "pmu.h"
#include "policy.h"
#include "vpmu.h"

enum {
	OPT_CPUS = 0x100,
	OPT_MEM,
	OPT_FILE,
	OPT_ENV,
	OPT_KERNEL,
	OPT_TIMEOUT,
	OPT_REPORT_FD,
	OPT_SOURCE,
	OPT_POLICY,
	OPT_PER_THREAD,
	OPT_BREAKDOWN,
	OPT_JSON,
	OPT_FORMAT,
	OPT_HOST,
	OPT_STEP_MODE,
	OPT_SAMPLER,
	OPT_DIR,
	OPT_CWD,
	OPT_CALL_GRAPH,
};

static const struct option run_options[] = {
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "cwd", required_argument, NULL, OPT_CWD },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "report-fd", required_argument, NULL, OPT_REPORT_FD },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "step-mode", required_argument, NULL, OPT_STEP_MODE },
	{ "event", required_argument, NULL, 'e' },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "breakdown", no_argument, NULL, OPT_BREAKDOWN },
	{ "field-separator", required_argument, NULL, 'x' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "output", required_argument, NULL, 'o' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "count", required_argument, NULL, 'c' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "sampler", required_argument, NULL, OPT_SAMPLER },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char run_usage[] =
	"usage: vmm run [--cpus N] [--mem SIZE] [--file HOST:GUEST]... "
	"[--env K=V]...\n"
	"               [--dir HOST:GUEST[:ro|:rw]]... [--cwd GUEST]\n"
	"               [--kernel FILE] [--timeout SECONDS] [--source tsc|step|perf]\n"
	"               [--policy NAME] [--host auto|pvm|standard]\n"
	"               [--step-mode block|int3|single] [-v] [--] PROGRAM [ARGS...]\n";

enum cli_mode { CLI_RUN, CLI_STAT, CLI_RECORD };

static int cli_parse_mode(int argc, char **argv, enum cli_mode mode,
			  struct vmm_config *cfg, char *err, size_t errlen);

/*
 * --policy NAME: one of the registered policies (pmu/policy.c), named in
 * the error with the others, so that a typo is never some default.
 */
static int cli_check_policy(const char *name, char *err, size_t errlen)
{
	const struct pmu_policy_ops *p;
	size_t n;

	if (pmu_policy_lookup(name))
		return 0;
	n = (size_t)snprintf(err, errlen, "--policy: unknown policy '%s' (",
			     name);
	for (size_t i = 0; (p = pmu_policy_at(i)) && n < errlen; i++)
		n += (size_t)snprintf(err + n, errlen - n, "%s%s",
				      i ? ", " : "", p->name);
	if (n < errlen)
		snprintf(err + n, errlen - n, ")");
	return -1;
}

static const char stat_usage[] =
	"usage: vmm stat [-e EVENT[,EVENT...]]... [--per-thread] [-x SEP] [--json]\n"
	"                [-o FILE] [-r N] [--breakdown] [--source tsc|step|perf]\n"
	"                [--policy NAME] [vmm run options] [--]\n"
	"                PROGRAM [ARGS...]\n"
	"events: instructions cycles ref-cycles branches task-clock vmexits\n"
	"        vmexits.msr vmexits.io vmexits.hypercall steal vmm-time, each\n"
	"        with :u (user) or :k (kernel); counts go to stderr or -o FILE\n"
	"--breakdown: where the time goes: guest, VMM and halted time, VMM\n"
	"        exits by reason, KVM's statistics, kernel entries by kind,\n"
	"        the busiest kernel functions (1 ms samples)\n";

/* "instructions:u,cycles" -> the stat event table; 0 or -1 with err. */
static int cli_parse_events(struct vmm_stat *st, char *list, char *err,
			    size_t errlen)
{
	for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		char *mods = strchr(name, ':');
		unsigned int mode = 0;
		int i = st->nevents;

		if (i == VMM_STAT_EVENTS) {
			snprintf(err, errlen, "-e: at most %d events",
				 VMM_STAT_EVENTS);
			return -1;
		}
		snprintf(st->names[i], sizeof(st->names[i]), "%s", name);
		if (mods)
			*mods++ = 0;
		for (; mods && *mods; mods++) {
			if (*mods == 'u')
				mode |= PMU_MODE_USR;
			else if (*mods == 'k')
				mode |= PMU_MODE_OS;
			else {
				snprintf(err, errlen, "-e: bad modifier '%c' in "
					 "'%s' (u or k)", *mods, st->names[i]);
				return -1;
			}
		}
		if (pmu_event_lookup(name, &st->event[i])) {
			snprintf(err, errlen, "-e: unknown event '%s' (see vmm "
				 "stat --help)", name);
			return -1;
		}
		st->mode[i] = mode ? mode : PMU_MODE_ALL;
		st->nevents++;
	}
	return 0;
}

/* "64M", "1G", "262144K", "134217728": bytes, with 1024-based suffixes. */
int cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 0: break;
	default: return -1;
	}
	if ((*end == 'i' || *end == 'I') && shift && end[1] == 'B')
		end += 2;
	if (*end || v > (~0ull >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_run(int argc, char **argv, struct vmm_config *cfg,
		  char *err, size_t errlen)
{
	return cli_parse(argc, argv, false, cfg, err, errlen);
}

static const char record_usage[] =
	"usage: vmm record [-e EVENT] [-c PERIOD] [-o FILE] [--format perf]\n"
	"                  [-a] [-g] [--source tsc|step|perf] [--sampler vmm|guest]\n"
	"                  [vmm run options] [--] PROGRAM [ARGS...]\n"
	"  -a: system-wide, the VMM's own time per exit reason as well\n"
	"  -g, --call-graph fp: call chains of user samples from the guest's\n"
	"      frame pointers (-fno-omit-frame-pointer); the vmm sampler only,\n"
	"      kernel samples and --sampler guest keep the IP alone\n"
	"  --sampler: who takes the samples; vmm (a host timer, no guest\n"
	"      kernel work) is the default for cycles, ref-cycles and\n"
	"      task-clock under the tsc source, guest (virtual PMIs) else\n";

/* `vmm record`: its own options on top of run's. */
static int cli_record_opt(struct vmm_config *cfg, int c, char *err,
			  size_t errlen)
{
	struct vmm_record *r = &cfg->record;
	struct vmm_stat tmp = { 0 };
	char buf[48];

	switch (c) {
	case 'e':
		err[0] = 0;
		snprintf(buf, sizeof(buf), "%s", optarg);
		if (strchr(buf, ',') || cli_parse_events(&tmp, buf, err, errlen)) {
			if (!*err)
				snprintf(err, errlen, "-e: one event to sample");
			return -1;
		}
		snprintf(r->event, sizeof(r->event), "%s", optarg);
		r->code = tmp.event[0];
		r->mode = tmp.mode[0];
		return 0;
	case 'c': {
		long n;

		if (parse_int(optarg, 1, 1L << 30, &n)) {
			snprintf(err, errlen, "-c: '%s' is not a period from 1 "
				 "to 2^30", optarg);
			return -1;
		}
		r->period = n;
		return 0;
	}
	case 'o':
		r->output = optarg;
		return 0;
	case 'a':
		r->system_wide = true;
		return 0;
	case 'g':
		r->callchain = true;
		return 0;
	case OPT_CALL_GRAPH:
		/* perf's other unwinders need what the guest does not keep. */
		if (strcmp(optarg, "fp")) {
			snprintf(err, errlen, "--call-graph: only fp");
			return -1;
		}
		r->callchain = true;
		return 0;
	case OPT_FORMAT:
		if (strcmp(optarg, "perf") && strcmp(optarg, "perfvisor")) {
			snprintf(err, errlen, "--format: perf or perfvisor");
			return -1;
		}
		r->perf_format = !strcmp(optarg, "perf");
		return 0;
	case OPT_SAMPLER:
		if (strcmp(optarg, "vmm") && strcmp(optarg, "guest")) {
			snprintf(err, errlen, "--sampler: vmm or guest");
			return -1;
		}
		r->sampler = !strcmp(optarg, "vmm") ? SAMPLER_VMM
						    : SAMPLER_GUEST;
		return 0;
	}
	return 1;
}

int cli_parse_record(int argc, char **argv, struct vmm_config *cfg,
		     char *err, size_t errlen)
{
	return cli_parse_mode(argc, argv, CLI_RECORD, cfg, err, errlen);
}

int cli_parse(int argc, char **argv, bool stat, struct vmm_config *cfg,
	      char *err, size_t errlen)
{
	return cli_parse_mode(argc, argv, stat ? CLI_STAT : CLI_RUN, cfg, err,
			      errlen);
}

/* `vmm stat`'s own options: 0 taken, 1 not one of them, -1 error. */
static int cli_stat_opt(struct vmm_config *cfg, int c, char *err,
			size_t errlen)
{
	long n;

	switch (c) {
	case 'e':
		return cli_parse_events(&cfg->stat, optarg, err, errlen);
	case 'x':
		cfg->stat.sep = optarg;
		return 0;
	case 'o':
		cfg->stat.output = optarg;
		return 0;
	case 'r':
		if (parse_int(optarg, 1, 1000, &n)) {
			snprintf(err, errlen, "-r: '%s' is not a number "
				 "from 1 to 1000", optarg);
			return -1;
		}
		cfg->stat.repeat = n;
		return 0;
	case OPT_PER_THREAD:
		cfg->stat.per_thread = true;
		return 0;
	case OPT_BREAKDOWN:
		cfg->stat.breakdown = true;
		return 0;
	case OPT_JSON:
		cfg->stat.json = true;
		return 0;
	}
	return 1;
}

/* --file HOST:/GUEST/PATH and --env K=V: 0 or -1. */
static int cli_file_or_env_opt(struct vmm_config *cfg, int c, char *err,
			       size_t errlen)
{
	char *colon = strchr(optarg, ':');

	if (c == OPT_ENV) {
		if (!strchr(optarg, '=') || optarg[0] == '=' ||
		    cfg->nenv == VMM_MAX_ENV) {
			snprintf(err, errlen, "--env: '%s' is not K=V "
				 "(at most %d)", optarg, VMM_MAX_ENV);
			return -1;
		}
		cfg->env[cfg->nenv++] = optarg;
		return 0;
	}
	if (!colon || colon == optarg || colon[1] != '/' ||
	    cfg->nfiles == VMM_MAX_FILES) {
		snprintf(err, errlen, "--file: '%s' is not "
			 "HOST:/GUEST/PATH (at most %d)",
			 optarg, VMM_MAX_FILES);
		return -1;
	}
	*colon = 0;
	cfg->files[cfg->nfiles].host = optarg;
	cfg->files[cfg->nfiles++].guest = colon + 1;
	return 0;
}

/*
 * A guest path for --dir or --cwd: absolute, no "." or ".." component, no
 * empty one but a trailing '/', short enough for the guest's cwd.  /proc,
 * /sys and /dev are the guest kernel's own.
 */
static bool cli_guest_path_ok(const char *p)
{
	static const char *const own[] = { "/proc", "/sys", "/dev" };

	if (p[0] != '/' || strlen(p) > 255)
		return false;
	for (const char *c = p; *c;) {
		const char *e;

		while (*c == '/')
			c++;
		e = strchrnul(c, '/');
		if ((e - c == 1 && c[0] == '.') ||
		    (e - c == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c = e;
	}
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		size_t n = strlen(own[i]);

		if (!strncmp(p, own[i], n) && (!p[n] || p[n] == '/'))
			return false;
	}
	return true;
}

/*
 * --dir HOST:GUEST[:ro|:rw] (read-only unless :rw) and --cwd GUEST: 0 or
 * -1.  GUEST is what follows the last ':' before the mode, so HOST may
 * hold colons.  Whether HOST is a directory is checked when it is opened
 * (vmm/core/share.c), with the same one-line error.
 */
static int cli_dir_opt(struct vmm_config *cfg, int c, char *err,
		       size_t errlen)
{
	char *colon, *mode;
	bool rw = false;

	if (c == OPT_CWD) {
		if (!cli_guest_path_ok(optarg)) {
			snprintf(err, errlen, "--cwd: '%s' is not an absolute "
				 "guest path", optarg);
			return -1;
		}
		cfg->cwd = optarg;
		return 0;
	}
	mode = strrchr(optarg, ':');
	if (mode && (!strcmp(mode, ":ro") || !strcmp(mode, ":rw"))) {
		rw = mode[2] == 'w';
		*mode = 0;
	} else {
		mode = NULL;
	}
	colon = strrchr(optarg, ':');
	if (!colon || colon == optarg || !cli_guest_path_ok(colon + 1) ||
	    cfg->ndirs == VMM_MAX_DIRS) {
		if (mode)
			*mode = ':';
		snprintf(err, errlen, "--dir: '%s' is not HOST:/GUEST[:ro|:rw] "
			 "(at most %d)", optarg, VMM_MAX_DIRS);
		return -1;
	}
	*colon = 0;
	for (int i = 0; i < cfg->ndirs; i++) {
		if (!strcmp(cfg->dirs[i].guest, colon + 1)) {
			snprintf(err, errlen, "--dir: '%s' is shared twice",
				 colon + 1);
			return -1;
		}
	}
	cfg->dirs[cfg->ndirs].host = optarg;
	cfg->dirs[cfg->ndirs].guest = colon + 1;
	cfg->dirs[cfg->ndirs++].rw = rw;
	return 0;
}

/* --timeout SECONDS: 0 or -1. */
static int cli_timeout_opt(struct vmm_config *cfg, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	cfg->timeout = strtod(optarg, &end);
	if (errno || end == optarg || *end ||
	    !(cfg->timeout > 0 && cfg->timeout < 1e7)) {
		snprintf(err, errlen, "--timeout: '%s' is not "
			 "a positive number of seconds", optarg);
		return -1;
	}
	return 0;
}

/* The options every command takes (vmm run's): 0, 1 or -1 as above. */
static int cli_run_opt(struct vmm_config *cfg, int c, char *err,
		       size_t errlen)
{
	long n;

	switch (c) {
	case OPT_CPUS:
		if (parse_int(optarg, 1, VMM_MAX_CPUS, &n)) {
			snprintf(err, errlen, "--cpus: '%s' is not a "
				 "number from 1 to %d", optarg, VMM_MAX_CPUS);
			return -1;
		}
		cfg->ncpus = n;
		return 0;
	case OPT_MEM:
		if (cli_parse_size(optarg, &cfg->mem_size) ||
		    cfg->mem_size < PV_MIN_MEM ||
		    cfg->mem_size > PV_MAX_MEM) {
			snprintf(err, errlen, "--mem: '%s' is not a "
				 "size from 32M to 2G", optarg);
			return -1;
		}
		/* Whole 2 MiB pages: the boot map uses them. */
		cfg->mem_size = (cfg->mem_size + PV_HUGE_SIZE - 1) &
				~(PV_HUGE_SIZE - 1);
		return 0;
	case OPT_FILE:
	case OPT_ENV:
		return cli_file_or_env_opt(cfg, c, err, errlen);
	case OPT_DIR:
	case OPT_CWD:
		return cli_dir_opt(cfg, c, err, errlen);
	case OPT_KERNEL:
		cfg->kernel_path = optarg;
		return 0;
	case OPT_TIMEOUT:
		return cli_timeout_opt(cfg, err, errlen);
	case OPT_REPORT_FD:
		if (parse_int(optarg, 3, 1 << 20, &n)) {
			snprintf(err, errlen, "--report-fd: bad fd '%s'",
				 optarg);
			return -1;
		}
		cfg->report_fd = n;
		return 0;
	case OPT_HOST:
		if (!host_kind_parse(optarg)) {
			snprintf(err, errlen, "--host: '%s' is not auto, "
				 "pvm or standard", optarg);
			return -1;
		}
		cfg->host = optarg;
		return 0;
	case OPT_SOURCE:
		cfg->source = optarg;
		return 0;
	case OPT_STEP_MODE:
		/* How the step source traps user code: by basic blocks run
		 * from the VMM's code cache (the default), a basic block per
		 * int3 trap, or every instruction (TF). */
		if (strcmp(optarg, "block") && strcmp(optarg, "int3") &&
		    strcmp(optarg, "single")) {
			snprintf(err, errlen, "--step-mode: '%s' is not block, "
				 "int3 or single", optarg);
			return -1;
		}
		cfg->step_single = !strcmp(optarg, "single");
		cfg->step_no_cache = strcmp(optarg, "block") != 0;
		return 0;
	case OPT_POLICY:
		if (cli_check_policy(optarg, err, errlen))
			return -1;
		cfg->policy = optarg;
		return 0;
	case 'v':
		cfg->verbose++;
		return 0;
	}
	return 1;
}

static void cli_defaults(struct vmm_config *cfg, enum cli_mode mode)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ncpus = 1;
	cfg->mem_size = VMM_DEFAULT_MEM;
	cfg->source = "tsc";
	cfg->policy = "offset";
	cfg->stat_mode = mode == CLI_STAT;
	cfg->record_mode = mode == CLI_RECORD;
	cfg->stat.repeat = 1;
	if (mode == CLI_RECORD) {
		cfg->record.period = 0;
		snprintf(cfg->record.event, sizeof(cfg->record.event), "cycles");
		cfg->record.code = PV_EVENT_CYCLES;
		cfg->record.mode = PMU_MODE_ALL;
	}
}

/* PROGRAM and its arguments, from argv[optind] on: 0 or -1. */
static int cli_program(int argc, char **argv, struct vmm_config *cfg,
		       char *err, size_t errlen)
{
	const char *base;

	if (optind >= argc) {
		snprintf(err, errlen, "no PROGRAM given (see vmm run --help)");
		return -1;
	}
	cfg->program = argv[optind];
	cfg->argc = argc - optind;
	cfg->argv = argv + optind;
	/* argv[0] in the guest is the basename: the program is /bin/BASENAME. */
	base = strrchr(cfg->program, '/');
	cfg->argv[0] = (char *)(base ? base + 1 : cfg->program);
	if (!cfg->argv[0][0]) {
		snprintf(err, errlen, "PROGRAM '%s' has no file name",
			 cfg->program);
		return -1;
	}
	return 0;
}

static bool cli_is_stat_opt(int c)
{
	return c == 'e' || c == 'x' || c == 'o' || c == 'r' ||
	       c == OPT_PER_THREAD || c == OPT_BREAKDOWN || c == OPT_JSON ||
	       c == 'c' || c == 'a' || c == OPT_FORMAT;
}

static int cli_parse_mode(int argc, char **argv, enum cli_mode mode,
			  struct vmm_config *cfg, char *err, size_t errlen)
{
	static const char *const optstring[] = {
		/* '+': stop at PROGRAM so its own options are left alone.
		 * Leading ':' (after '+'): a missing value reports ':'. */
		[CLI_RUN] = "+:vh",
		[CLI_STAT] = "+:vhe:x:o:r:",
		[CLI_RECORD] = "+:vhe:c:o:ag",
	};
	static const char *const name[] = {
		[CLI_RUN] = "run", [CLI_STAT] = "stat", [CLI_RECORD] = "record",
	};
	static const char *const usage[] = {
		[CLI_RUN] = run_usage, [CLI_STAT] = stat_usage,
		[CLI_RECORD] = record_usage,
	};
	int c, r;

	cli_defaults(cfg, mode);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring[mode], run_options,
				NULL)) != -1) {
		r = 1;
		if (mode == CLI_RECORD && c != 'h' && c != 'v' && c != ':' &&
		    c != '?')
			r = cli_record_opt(cfg, c, err, errlen);
		if (r == 1 && mode != CLI_STAT && cli_is_stat_opt(c)) {
			snprintf(err, errlen, "'%s' is a vmm stat option",
				 argv[optind - 1]);
			return -1;
		}
		if (r == 1 && mode == CLI_STAT)
			r = cli_stat_opt(cfg, c, err, errlen);
		if (r == 1)
			r = cli_run_opt(cfg, c, err, errlen);
		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		switch (c) {
		case 'h':
			fputs(usage[mode], stdout);
			return 1;
		case ':':
			/* Leading ':' in the option string: a missing value. */
			snprintf(err, errlen, "option '%s' needs a value (see "
				 "vmm %s --help)", argv[optind - 1], name[mode]);
			return -1;
		default:
			snprintf(err, errlen, "unknown option '%s' (see vmm %s "
				 "--help)", argv[optind - 1], name[mode]);
			return -1;
		}
	}
	return cli_program(argc, argv, cfg, err, errlen);
}
