// SPDX-License-Identifier: MIT
/*
 * /proc and /sys paths and the text of their files (procfs.h).
 *
 * Paths are matched as templates: the one number a path may hold (a pid,
 * cpuN, nodeN; "self" is the caller's pid) becomes '#', so one table line
 * serves every CPU.  Text is built with a few appenders instead of a
 * printf: every instruction here is emulated, and /proc/cpuinfo is made
 * once a boot (procfs_glue.c keeps it).
 */
#include "layout.h"
#include "procfs.h"
#include "vclock.h"

enum {
	PG_NONE,			/* directories */
	PG_CPUINFO, PG_MOUNTS, PG_MAPS, PG_EXE, PG_STATUS, PG_STATM,
	PG_MINUS1,			/* perf_event_paranoid */
	PG_ZERO, PG_CPU_PMU, PG_SW_PMU,
	PG_CPULIST,			/* every CPU: "0-3" */
	PG_CPUMASK,			/* every CPU: "f" */
	PG_SELFLIST, PG_SELFMASK,	/* the CPU in the path */
	PG_NUM,				/* the number in the path */
	PG_PAPI_CSV,			/* PAPI's presets for this PMU */
};

enum { NUM_NONE, NUM_PID, NUM_CPU, NUM_NODE };

struct procfs_ent {
	const char *path;
	u8 type, gen, num;
};

#define D(p, n)		{ p, PROCFS_DIR, PG_NONE, n }
#define F(p, g, n)	{ p, PROCFS_REG, g, n }

/*
 * What PAPI 7, libpfm4 and glibc open (strace of a native run of PAPI's
 * ctests and papi_avail), and the directories above them.  The PMU's perf
 * type is PERF_TYPE_RAW (4), the software one PERF_TYPE_SOFTWARE (1).
 * perf_event_paranoid is -1: every program in the guest may count anything
 * the virtual PMU has.  No NMI watchdog holds a counter.
 */
static const struct procfs_ent ents[] = {
	D("/proc", NUM_NONE),
	D("/proc/#", NUM_PID),
	{ "/proc/#/exe", PROCFS_LNK, PG_EXE, NUM_PID },
	F("/proc/#/maps", PG_MAPS, NUM_PID),
	F("/proc/#/status", PG_STATUS, NUM_PID),
	F("/proc/#/statm", PG_STATM, NUM_PID),
	F("/proc/cpuinfo", PG_CPUINFO, NUM_NONE),
	F("/proc/mounts", PG_MOUNTS, NUM_NONE),
	D("/proc/sys", NUM_NONE),
	D("/proc/sys/kernel", NUM_NONE),
	F("/proc/sys/kernel/perf_event_paranoid", PG_MINUS1, NUM_NONE),
	F("/proc/sys/kernel/nmi_watchdog", PG_ZERO, NUM_NONE),
	D("/proc/perfvisor", NUM_NONE),
	F("/proc/perfvisor/papi_events.csv", PG_PAPI_CSV, NUM_NONE),
	D("/sys", NUM_NONE),
	D("/sys/bus", NUM_NONE),
	D("/sys/bus/event_source", NUM_NONE),
	D("/sys/bus/event_source/devices", NUM_NONE),
	D("/sys/bus/event_source/devices/cpu", NUM_NONE),
	F("/sys/bus/event_source/devices/cpu/type", PG_CPU_PMU, NUM_NONE),
	D("/sys/bus/event_source/devices/software", NUM_NONE),
	F("/sys/bus/event_source/devices/software/type", PG_SW_PMU, NUM_NONE),
	D("/sys/devices", NUM_NONE),
	D("/sys/devices/cpu", NUM_NONE),
	F("/sys/devices/cpu/type", PG_CPU_PMU, NUM_NONE),
	D("/sys/devices/software", NUM_NONE),
	F("/sys/devices/software/type", PG_SW_PMU, NUM_NONE),
	D("/sys/devices/system", NUM_NONE),
	D("/sys/devices/system/cpu", NUM_NONE),
	F("/sys/devices/system/cpu/online", PG_CPULIST, NUM_NONE),
	F("/sys/devices/system/cpu/possible", PG_CPULIST, NUM_NONE),
	F("/sys/devices/system/cpu/present", PG_CPULIST, NUM_NONE),
	D("/sys/devices/system/cpu/cpu#", NUM_CPU),
	D("/sys/devices/system/cpu/cpu#/topology", NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/core_id", PG_NUM, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/physical_package_id",
	  PG_ZERO, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/die_id", PG_ZERO, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/thread_siblings",
	  PG_SELFMASK, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/thread_siblings_list",
	  PG_SELFLIST, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/core_cpus", PG_SELFMASK,
	  NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/core_cpus_list",
	  PG_SELFLIST, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/core_siblings",
	  PG_CPUMASK, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/core_siblings_list",
	  PG_CPULIST, NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/package_cpus", PG_CPUMASK,
	  NUM_CPU),
	F("/sys/devices/system/cpu/cpu#/topology/package_cpus_list",
	  PG_CPULIST, NUM_CPU),
	D("/sys/devices/system/node", NUM_NONE),
	F("/sys/devices/system/node/online", PG_ZERO, NUM_NONE),
	D("/sys/devices/system/node/node#", NUM_NODE),
	F("/sys/devices/system/node/node#/cpulist", PG_CPULIST, NUM_NODE),
	F("/sys/devices/system/node/node#/cpumap", PG_CPUMASK, NUM_NODE),
};

#define TEMPLATE_MAX	80		/* longest line above, and then some */

/* A component that is a number ("12", "cpu3", "node0", or "self" after
 * /proc) goes into t as its prefix and '#'. */
static bool number_part(const char *c, u32 len, char *t, u32 *tl,
			u32 *num, bool self_ok, int pid)
{
	u32 pre = 0, v = 0;

	if (self_ok && len == 4 && !strncmp(c, "self", 4)) {
		*num = pid;
		t[(*tl)++] = '#';
		return true;
	}
	if (len > 3 && !strncmp(c, "cpu", 3))
		pre = 3;
	else if (len > 4 && !strncmp(c, "node", 4))
		pre = 4;
	if (pre == len || len - pre > 9)
		return false;
	for (u32 i = pre; i < len; i++) {
		if (c[i] < '0' || c[i] > '9')
			return false;
		v = v * 10 + (c[i] - '0');
	}
	/* "cpu01" is not cpu1: Linux has no such name. */
	if (c[pre] == '0' && len - pre > 1)
		return false;
	for (u32 i = 0; i < pre; i++)
		t[(*tl)++] = c[i];
	t[(*tl)++] = '#';
	*num = v;
	return true;
}

int procfs_find(const char *path, u32 ncpus, int pid,
		struct procfs_node *out)
{
	char t[TEMPLATE_MAX + 1];
	u32 tl = 0, num = 0, nums = 0;
	const char *p = path;

	while (*p) {
		const char *c;
		u32 len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (c = p; *p && *p != '/'; p++)
			;
		len = p - c;
		if (tl + len + 1 > TEMPLATE_MAX)
			return -ENOENT;
		t[tl++] = '/';
		if (number_part(c, len, t, &tl, &num,
				tl == 6 && !strncmp(t, "/proc/", 6), pid)) {
			if (nums++)
				return -ENOENT;
			continue;
		}
		for (u32 i = 0; i < len; i++)
			t[tl++] = c[i];
	}
	t[tl] = 0;
	for (u32 i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
		const struct procfs_ent *e = &ents[i];

		if (strcmp(e->path, t))
			continue;
		if ((e->num == NUM_CPU && num >= ncpus) ||
		    (e->num == NUM_NODE && num != 0))
			return -ENOENT;
		out->type = e->type;
		out->gen = e->gen;
		out->cached = e->gen == PG_CPUINFO;
		out->sys = t[1] == 's';
		out->maps = e->gen == PG_MAPS || e->gen == PG_STATUS ||
			    e->gen == PG_STATM;
		out->pid = e->num == NUM_PID;
		out->num = num;
		out->id = i;
		return 0;
	}
	return -ENOENT;
}

/* ---- text ---- */

struct tbuf {
	char *p;
	u64 len, cap;			/* len goes on past cap: the need */
};

static void put_c(struct tbuf *b, char c)
{
	if (b->len < b->cap)
		b->p[b->len] = c;
	b->len++;
}

static void put_s(struct tbuf *b, const char *s)
{
	while (*s)
		put_c(b, *s++);
}

static void put_num(struct tbuf *b, u64 v, u32 base, u32 width)
{
	char tmp[24];
	u32 i = 0;

	do {
		tmp[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (width > i) {
		put_c(b, '0');
		width--;
	}
	while (i)
		put_c(b, tmp[--i]);
}

static void put_line(struct tbuf *b, const char *key, u64 v)
{
	put_s(b, key);
	put_num(b, v, 10, 0);
	put_c(b, '\n');
}

/* "0", "0-3": Linux's cpulist for CPUs 0 to n-1. */
static void put_cpulist(struct tbuf *b, u32 n)
{
	put_c(b, '0');
	if (n > 1) {
		put_c(b, '-');
		put_num(b, n - 1, 10, 0);
	}
	put_c(b, '\n');
}

/* Linux's cpumask: a hex digit per 4 of the ncpus bits, a comma between
 * groups of 32. */
static void put_cpumask(struct tbuf *b, u32 ncpus, u32 first, u32 last)
{
	u32 digits = (ncpus + 3) / 4;

	for (u32 d = digits; d-- > 0;) {
		u32 v = 0;

		for (u32 bit = 0; bit < 4; bit++) {
			u32 cpu = d * 4 + bit;

			if (cpu >= first && cpu <= last)
				v |= 1u << bit;
		}
		put_c(b, "0123456789abcdef"[v]);
		if (d && d % 8 == 0)
			put_c(b, ',');
	}
	put_c(b, '\n');
}

/*
 * Linux's names for CPUID feature bits, word by word; NULL for a bit
 * Linux does not show.  Only what CPUID itself says: of Linux's synthetic
 * flags only arch_perfmon (leaf 0xA), since libpfm4 and perf look for it.
 */
static const char *const f1d[32] = {
	"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic",
	NULL, "sep", "mtrr", "pge", "mca", "cmov", "pat", "pse36", "pn",
	"clflush", NULL, "dts", "acpi", "mmx", "fxsr", "sse", "sse2", "ss",
	"ht", "tm", "ia64", "pbe",
};
static const char *const f1c[32] = {
	"pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl", "vmx", "smx", "est",
	"tm2", "ssse3", "cid", "sdbg", "fma", "cx16", "xtpr", "pdcm", NULL,
	"pcid", "dca", "sse4_1", "sse4_2", "x2apic", "movbe", "popcnt",
	"tsc_deadline_timer", "aes", "xsave", NULL, "avx", "f16c", "rdrand",
	"hypervisor",
};
static const char *const fx1d[32] = {
	[11] = "syscall", [19] = "mp", [20] = "nx", [22] = "mmxext",
	[25] = "fxsr_opt", [26] = "pdpe1gb", [27] = "rdtscp", [29] = "lm",
	[30] = "3dnowext", [31] = "3dnow",
};
static const char *const fx1c[32] = {
	"lahf_lm", "cmp_legacy", "svm", "extapic", "cr8_legacy", "abm",
	"sse4a", "misalignsse", "3dnowprefetch", "osvw", "ibs", "xop",
	"skinit", "wdt", NULL, "lwp", "fma4", "tce", NULL, "nodeid_msr",
	NULL, "tbm", "topoext", "perfctr_core", "perfctr_nb", NULL, "bpext",
	"ptsc", "perfctr_llc", "mwaitx",
};
static const char *const f7b[32] = {
	"fsgsbase", "tsc_adjust", "sgx", "bmi1", "hle", "avx2", NULL, "smep",
	"bmi2", "erms", "invpcid", "rtm", "cqm", NULL, "mpx", "rdt_a",
	"avx512f", "avx512dq", "rdseed", "adx", "smap", "avx512ifma", NULL,
	"clflushopt", "clwb", "intel_pt", "avx512pf", "avx512er",
	"avx512cd", "sha_ni", "avx512bw", "avx512vl",
};
static const char *const f7c[32] = {
	[1] = "avx512vbmi", [2] = "umip", [3] = "pku", [4] = "ospke",
	[5] = "waitpkg", [6] = "avx512_vbmi2", [8] = "gfni", [9] = "vaes",
	[10] = "vpclmulqdq", [11] = "avx512_vnni", [12] = "avx512_bitalg",
	[13] = "tme", [14] = "avx512_vpopcntdq", [16] = "la57",
	[22] = "rdpid", [25] = "cldemote", [27] = "movdiri",
	[28] = "movdir64b", [29] = "enqcmd", [30] = "sgx_lc",
};
static const char *const f7d[32] = {
	[2] = "avx512_4vnniw", [3] = "avx512_4fmaps", [4] = "fsrm",
	[8] = "avx512_vp2intersect", [10] = "md_clear", [14] = "serialize",
	[16] = "tsxldtrk", [18] = "pconfig", [19] = "arch_lbr", [20] = "ibt",
	[22] = "amx_bf16", [23] = "avx512_fp16", [24] = "amx_tile",
	[25] = "amx_int8", [28] = "flush_l1d", [29] = "arch_capabilities",
};

static void put_flags(struct tbuf *b, const char *const names[32], u32 v)
{
	for (u32 i = 0; i < 32; i++) {
		if ((v >> i & 1) && names[i]) {
			put_c(b, ' ');
			put_s(b, names[i]);
		}
	}
}

static bool cpu_is_intel(const struct procfs_cpu *c)
{
	return c->l0[1] == 0x756e6547 && c->l0[3] == 0x49656e69 &&
	       c->l0[2] == 0x6c65746e;	/* "GenuineIntel" */
}

/* CPUID 1's family and model as Linux computes them (x86_family()). */
static void cpu_signature(const struct procfs_cpu *c, u32 *family,
			  u32 *model, u32 *stepping)
{
	u32 a = c->l1[0];

	*family = (a >> 8) & 0xf;
	*model = (a >> 4) & 0xf;
	*stepping = a & 0xf;
	if (*family == 0xf)
		*family += (a >> 20) & 0xff;
	if (*family >= 6)
		*model += ((a >> 16) & 0xf) << 4;
}

static void put_regs_str(struct tbuf *b, const u32 *regs, u32 n)
{
	const char *s = (const char *)regs;
	u32 i = 0;

	while (i < n * 4 && s[i] == ' ')	/* brands may be padded */
		i++;
	for (; i < n * 4 && s[i]; i++)
		put_c(b, s[i]);
}

static void put_cpu(struct tbuf *b, const struct procfs_cpu *c, u32 cpu)
{
	u32 family, model, stepping, vendor[3];

	cpu_signature(c, &family, &model, &stepping);
	vendor[0] = c->l0[1];
	vendor[1] = c->l0[3];
	vendor[2] = c->l0[2];
	put_line(b, "processor\t: ", cpu);
	put_s(b, "vendor_id\t: ");
	put_regs_str(b, vendor, 3);
	put_line(b, "\ncpu family\t: ", family);
	put_line(b, "model\t\t: ", model);
	put_s(b, "model name\t: ");
	/* Linux's words when CPUID has no brand string (the VMM's has
	 * none). */
	if (c->x0[0] >= 0x80000004 && (c->brand[0] & 0xff))
		put_regs_str(b, c->brand, 12);
	else
		put_s(b, "unknown");
	put_line(b, "\nstepping\t: ", stepping);
	put_s(b, "cpu MHz\t\t: ");
	put_num(b, c->tsc_khz / 1000, 10, 0);
	put_c(b, '.');
	put_num(b, c->tsc_khz % 1000, 10, 3);
	put_line(b, "\nphysical id\t: ", 0);
	put_line(b, "siblings\t: ", c->ncpus);
	put_line(b, "core id\t\t: ", cpu);
	put_line(b, "cpu cores\t: ", c->ncpus);
	put_line(b, "apicid\t\t: ", cpu);
	put_line(b, "initial apicid\t: ", cpu);
	put_s(b, "fpu\t\t: yes\nfpu_exception\t: yes\n");
	put_line(b, "cpuid level\t: ", c->l0[0]);
	put_s(b, "wp\t\t: yes\nflags\t\t:");
	put_flags(b, f1d, c->l1[3]);
	put_flags(b, fx1d, c->x1[3]);
	if (cpu_is_intel(c) && (c->la[0] & 0xff))
		put_s(b, " arch_perfmon");
	put_flags(b, f1c, c->l1[2]);
	put_flags(b, fx1c, c->x1[2]);
	put_flags(b, f7b, c->l7[1]);
	put_flags(b, f7c, c->l7[2]);
	put_flags(b, f7d, c->l7[3]);
	put_s(b, "\nbogomips\t: ");
	put_num(b, c->tsc_khz * 2 / 1000, 10, 0);
	put_c(b, '.');
	put_num(b, c->tsc_khz * 2 % 1000 / 10, 10, 2);
	put_line(b, "\nclflush size\t: ", ((c->l1[1] >> 8) & 0xff) * 8);
	put_s(b, "cache_alignment\t: 64\n");
	if (c->x0[0] >= 0x80000008) {
		put_s(b, "address sizes\t: ");
		put_num(b, c->x8[0] & 0xff, 10, 0);
		put_s(b, " bits physical, ");
		put_num(b, (c->x8[0] >> 8) & 0xff, 10, 0);
		put_s(b, " bits virtual\n");
	}
	put_s(b, "power management:\n\n");
}

/*
 * Linux's /proc/PID/maps line.  Mappings carry no file, so names come from
 * where they are: below the heap is the program (its path), then [heap],
 * [vvar], [vdso], and the mapping that ends at the top of user space is
 * [stack].
 */
static void put_map(struct tbuf *b, const struct procfs_map *m,
		    const struct procfs_proc *p, u64 image_start)
{
	u32 col = 0;
	u64 from = b->len;

	put_num(b, m->start, 16, 8);
	put_c(b, '-');
	put_num(b, m->end, 16, 8);
	put_c(b, ' ');
	put_c(b, m->prot & 1 ? 'r' : '-');
	put_c(b, m->prot & 2 ? 'w' : '-');
	put_c(b, m->prot & 4 ? 'x' : '-');
	put_s(b, "p ");
	if (m->path) {		/* a file mmap()ed: a library, say */
		put_num(b, m->off, 16, 8);
		put_s(b, " 00:10 ");
		put_num(b, m->ino, 10, 0);
		for (col = b->len - from; col < 73; col++)
			put_c(b, ' ');
		put_s(b, m->path);
		put_c(b, '\n');
		return;
	}
	put_num(b, m->end <= p->brk_start ? m->start - image_start : 0, 16, 8);
	/* The program's mappings are its file's: a device and an inode
	 * (PAPI finds the program's text and data only where the inode is
	 * not 0), as stat shows them. */
	if (m->end <= p->brk_start && p->exe[0]) {
		put_s(b, " 00:10 ");
		put_num(b, p->exe_ino, 10, 0);
	} else {
		put_s(b, " 00:00 0");
	}
	col = b->len - from;
	if (m->end <= p->brk_start && p->exe[0]) {
		while (col++ < 73)
			put_c(b, ' ');
		put_s(b, p->exe);
	} else if (m->start >= p->brk_start && m->end <= p->brk &&
		   m->start < p->brk) {
		while (col++ < 73)
			put_c(b, ' ');
		put_s(b, "[heap]");
	} else if (m->start == PV_VVAR_VA) {
		while (col++ < 73)
			put_c(b, ' ');
		put_s(b, "[vvar]");
	} else if (m->start == PV_VDSO_VA) {
		while (col++ < 73)
			put_c(b, ' ');
		put_s(b, "[vdso]");
	} else if (m->end == PV_USER_TOP) {
		while (col++ < 73)
			put_c(b, ' ');
		put_s(b, "[stack]");
	}
	put_c(b, '\n');
}

/* Mapped bytes by kind, for status and statm. */
struct mm_sizes {
	u64 total, text, data, stack;
};

static void mm_sizes(const struct procfs_proc *p, struct mm_sizes *z)
{
	z->total = z->text = z->data = z->stack = 0;
	for (u32 i = 0; i < p->nmaps; i++) {
		const struct procfs_map *m = &p->maps[i];
		u64 len = m->end - m->start;

		z->total += len;
		if (m->end == PV_USER_TOP)
			z->stack += len;
		else if ((m->prot & 4) && m->end <= p->brk_start)
			z->text += len;
		else if (m->prot & 2)
			z->data += len;
	}
}

static void put_kb(struct tbuf *b, const char *key, u64 bytes)
{
	put_s(b, key);
	put_num(b, bytes >> 10, 10, 0);
	put_s(b, " kB\n");
}

/*
 * The lines of /proc/PID/status PAPI's PAPI_get_dmem_info() and tools
 * read.  Every mapped page is counted resident: the guest keeps no
 * per-page record of which are.
 */
static void put_status(struct tbuf *b, const struct procfs_proc *p)
{
	struct mm_sizes z;

	mm_sizes(p, &z);
	put_s(b, "Name:\t");
	put_s(b, p->comm);
	put_s(b, "\nState:\tR (running)\n");
	put_line(b, "Tgid:\t", p->pid);
	put_line(b, "Pid:\t", p->pid);
	put_line(b, "PPid:\t", p->ppid);
	put_s(b, "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n");
	put_kb(b, "VmPeak:\t", z.total);
	put_kb(b, "VmSize:\t", z.total);
	put_kb(b, "VmLck:\t", 0);
	put_kb(b, "VmHWM:\t", z.total);
	put_kb(b, "VmRSS:\t", z.total);
	put_kb(b, "VmData:\t", z.data);
	put_kb(b, "VmStk:\t", z.stack);
	put_kb(b, "VmExe:\t", z.text);
	put_kb(b, "VmLib:\t", 0);
	put_kb(b, "VmPTE:\t", 0);
	put_line(b, "Threads:\t", p->nthreads);
}

/* statm: size resident shared text lib data dt, in pages. */
static void put_statm(struct tbuf *b, const struct procfs_proc *p)
{
	struct mm_sizes z;

	mm_sizes(p, &z);
	put_num(b, z.total >> 12, 10, 0);
	put_c(b, ' ');
	put_num(b, z.total >> 12, 10, 0);
	put_s(b, " 0 ");
	put_num(b, z.text >> 12, 10, 0);
	put_s(b, " 0 ");
	put_num(b, (z.data + z.stack) >> 12, 10, 0);
	put_s(b, " 0\n");
}

/*
 * PAPI's preset table for the virtual PMU, in PAPI's papi_events.csv
 * format; the guest's first program finds it through PAPI_CSV_EVENT_FILE
 * (main.c).  PAPI takes its presets from the table of the CPU model
 * libpfm4 names (skl here, a family's own on AMD) and believes every
 * preset whose events libpfm4 knows: cache misses, floating-point
 * operations and the rest, which no source counts.  This table has only
 * the presets of the architectural events the source counts (CPUID.0AH:EBX
 * clear), by the names PAPI's own tables use for them, so
 * PAPI_query_event() says no to the others, as on a PMU without them.
 */
/* One block of the table: the CPUs as libpfm4 names them, and the events
 * that are PAPI_TOT_CYC, _TOT_INS, _REF_CYC, _BR_INS and _BR_MSP there
 * (NULL: none), in the order of papi_preset[]. */
#define PAPI_PRESETS	5
struct papi_block {
	const char *const *cpus;	/* NULL-terminated */
	const char *ev[PAPI_PRESETS];
};

static void put_papi_block(struct tbuf *b, const struct procfs_cpu *c,
			   const struct papi_block *blk)
{
	/* each preset's architectural event, CPUID.0AH:EBX bit */
	static const struct { u8 bit; const char *name; }
	papi_preset[PAPI_PRESETS] = {
		{ 0, "PAPI_TOT_CYC" }, { 1, "PAPI_TOT_INS" },
		{ 2, "PAPI_REF_CYC" }, { 5, "PAPI_BR_INS" },
		{ 6, "PAPI_BR_MSP" },
	};

	for (const char *const *cpu = blk->cpus; *cpu; cpu++) {
		put_s(b, "CPU,");
		put_s(b, *cpu);
		put_c(b, '\n');
	}
	for (u32 e = 0; e < PAPI_PRESETS; e++) {
		if ((c->la[1] >> papi_preset[e].bit) & 1 || !blk->ev[e])
			continue;
		put_s(b, "PRESET,");
		put_s(b, papi_preset[e].name);
		put_s(b, ",NOT_DERIVED,");
		put_s(b, blk->ev[e]);
		put_c(b, '\n');
	}
}

static void put_papi_csv(struct tbuf *b, const struct procfs_cpu *c)
{
	static const char *const skl[] = { "skl", NULL };
	static const char *const amd_k7_to_fam16h[] = {
		"amd64_k7", "amd64_k8_revb", "amd64_k8_revc", "amd64_k8_revd",
		"amd64_k8_reve", "amd64_k8_revf", "amd64_k8_revg",
		"amd64_fam10h_barcelona", "amd64_fam10h_shanghai",
		"amd64_fam10h_istanbul", "amd64_fam11h_turion",
		"amd64_fam12h_llano", "amd64_fam14h_bobcat",
		"amd64_fam15h_interlagos", "amd64_fam16h", NULL,
	};
	static const char *const amd_zen[] = {
		"amd64_fam17h", "amd64_fam17h_zen1", "amd64_fam17h_zen2",
		"amd64_fam19h_zen3", "amd64_fam19h_zen4", "amd64_fam1ah_zen5",
		NULL,
	};
	static const struct papi_block intel = {
		skl, { "CPU_CLK_THREAD_UNHALTED:THREAD_P", "INST_RETIRED:ANY_P",
		       "UNHALTED_REFERENCE_CYCLES",
		       "BR_INST_RETIRED:ALL_BRANCHES",
		       "BR_MISP_RETIRED:ALL_BRANCHES" },
	};
	/* AMD has no reference cycles; its cycles' name changed at Zen */
	static const struct papi_block amd[2] = {
		{ amd_k7_to_fam16h, { "CPU_CLK_UNHALTED", "RETIRED_INSTRUCTIONS",
				      NULL, "RETIRED_BRANCH_INSTRUCTIONS",
				      "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS" } },
		{ amd_zen, { "CYCLES_NOT_IN_HALT", "RETIRED_INSTRUCTIONS", NULL,
			     "RETIRED_BRANCH_INSTRUCTIONS",
			     "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS" } },
	};

	put_s(b, "# perfvisor: the presets of the events the virtual PMU "
	      "counts\n");
	if (c->l0[1] == 0x68747541) {		/* "Auth" */
		put_papi_block(b, c, &amd[0]);
		put_papi_block(b, c, &amd[1]);
	} else {
		put_papi_block(b, c, &intel);
	}
}

u64 procfs_text(const struct procfs_node *n, const struct procfs_cpu *cpu,
		const struct procfs_proc *proc, char *buf, u64 cap)
{
	struct tbuf b = { buf, 0, cap };

	switch (n->gen) {
	case PG_CPUINFO:
		for (u32 i = 0; i < cpu->ncpus; i++)
			put_cpu(&b, cpu, i);
		break;
	case PG_MOUNTS:
		put_s(&b, "rootfs / rootfs rw 0 0\n"
		      "proc /proc proc rw,relatime 0 0\n"
		      "sysfs /sys sysfs rw,relatime 0 0\n");
		break;
	case PG_MAPS:
		for (u32 i = 0; i < proc->nmaps; i++)
			put_map(&b, &proc->maps[i], proc,
				proc->nmaps ? proc->maps[0].start : 0);
		break;
	case PG_EXE:
		put_s(&b, proc->exe);
		break;
	case PG_STATUS:
		put_status(&b, proc);
		break;
	case PG_STATM:
		put_statm(&b, proc);
		break;
	case PG_MINUS1:
		put_s(&b, "-1\n");
		break;
	case PG_ZERO:
		put_s(&b, "0\n");
		break;
	case PG_CPU_PMU:
		put_s(&b, "4\n");
		break;
	case PG_SW_PMU:
		put_s(&b, "1\n");
		break;
	case PG_CPULIST:
		put_cpulist(&b, cpu->ncpus);
		break;
	case PG_CPUMASK:
		put_cpumask(&b, cpu->ncpus, 0, cpu->ncpus - 1);
		break;
	case PG_SELFLIST:
		put_num(&b, n->num, 10, 0);
		put_c(&b, '\n');
		break;
	case PG_SELFMASK:
		put_cpumask(&b, cpu->ncpus, n->num, n->num);
		break;
	case PG_NUM:
		put_num(&b, n->num, 10, 0);
		put_c(&b, '\n');
		break;
	case PG_PAPI_CSV:
		put_papi_csv(&b, cpu);
		break;
	}
	return b.len;
}
