// SPDX-License-Identifier: MIT
/*
 * guest-kernel/procfs.c on the host: which /proc and /sys paths exist, and
 * the text of the files PAPI and libpfm4 parse, from made-up CPUID values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../guest-kernel/procfs.h"
#include "vclock.h"

static char text[16384];

static int find(const char *path, u32 ncpus, struct procfs_node *n)
{
	memset(n, 0xee, sizeof(*n));
	return procfs_find(path, ncpus, 42, n);
}

static const char *gen(const char *path, const struct procfs_cpu *c,
		       const struct procfs_proc *p)
{
	struct procfs_node n;
	u64 len;

	assert_int_equal(find(path, c->ncpus, &n), 0);
	len = procfs_text(&n, c, p, NULL, 0);
	assert_true(len < sizeof(text));
	/* The length asked first is the length written. */
	assert_int_equal(procfs_text(&n, c, p, text, sizeof(text)), len);
	text[len] = 0;
	return text;
}

static void test_paths(void **state)
{
	struct procfs_node n;

	(void)state;
	assert_true(procfs_path("/proc"));
	assert_true(procfs_path("/proc/self/exe"));
	assert_true(procfs_path("/sys/devices"));
	assert_false(procfs_path("/processes"));
	assert_false(procfs_path("/system"));
	assert_false(procfs_path("proc/cpuinfo"));

	assert_int_equal(find("/proc/cpuinfo", 2, &n), 0);
	assert_int_equal(n.type, PROCFS_REG);
	assert_int_equal(n.cached, 1);
	assert_int_equal(n.sys, 0);
	assert_int_equal(find("/proc", 2, &n), 0);
	assert_int_equal(n.type, PROCFS_DIR);
	assert_int_equal(find("/proc/nosuch", 2, &n), -ENOENT);

	/* "self" is the caller's pid; other pids are left to the caller. */
	assert_int_equal(find("/proc/self/exe", 2, &n), 0);
	assert_int_equal(n.type, PROCFS_LNK);
	assert_int_equal(n.num, 42);
	assert_int_equal(n.pid, 1);
	assert_int_equal(find("/proc/7/maps", 2, &n), 0);
	assert_int_equal(n.num, 7);
	assert_int_equal(n.maps, 1);
	assert_int_equal(find("/proc/self/nosuch", 2, &n), -ENOENT);
	assert_int_equal(find("/proc/sys/kernel/self", 2, &n), -ENOENT);

	/* One line serves every CPU, and only the CPUs there are. */
	assert_int_equal(find("/sys/devices/system/cpu/cpu1", 2, &n), 0);
	assert_int_equal(n.type, PROCFS_DIR);
	assert_int_equal(n.num, 1);
	assert_int_equal(n.sys, 1);
	assert_int_equal(find("/sys/devices/system/cpu/cpu2", 2, &n), -ENOENT);
	assert_int_equal(find("/sys/devices/system/cpu/cpu01", 2, &n), -ENOENT);
	assert_int_equal(find("/sys/devices/system/cpu/cpu", 2, &n), -ENOENT);
	/* PAPI writes "/sys/devices/system//cpu/cpu%d"; a slash at the end
	 * is the same path. */
	assert_int_equal(find("/sys/devices/system//cpu/cpu0/topology/"
			      "thread_siblings", 2, &n), 0);
	assert_int_equal(n.type, PROCFS_REG);
	assert_int_equal(find("/sys/devices/system/cpu/", 2, &n), 0);
	assert_int_equal(n.type, PROCFS_DIR);
	assert_int_equal(find("/sys/devices/system/node/node0", 2, &n), 0);
	assert_int_equal(find("/sys/devices/system/node/node1", 2, &n),
			 -ENOENT);
	/* libpfm4 tests for topdown events: this PMU has none. */
	assert_int_equal(find("/sys/devices/cpu/events/slots", 2, &n),
			 -ENOENT);
	assert_int_equal(find("/sys/devices/cpu/type", 2, &n), 0);
	/* Two numbers in one path: no such file. */
	assert_int_equal(find("/sys/devices/system/cpu/cpu0/node0", 2, &n),
			 -ENOENT);
}

/* A Rocket Lake as KVM shows it: leaf 0xA a version-2 PMU. */
static void cpu_fill(struct procfs_cpu *c, u32 ncpus)
{
	memset(c, 0, sizeof(*c));
	c->ncpus = ncpus;
	c->tsc_khz = 2599998;
	c->l0[0] = 0x24;
	memcpy(&c->l0[1], "Genu", 4);
	memcpy(&c->l0[3], "ineI", 4);
	memcpy(&c->l0[2], "ntel", 4);
	c->l1[0] = 0x000a0671;
	c->l1[1] = 0x00020800;
	c->l1[2] = 0x80000001;		/* pni, hypervisor */
	c->l1[3] = 0x00000011;		/* fpu, tsc */
	c->l7[1] = 1u << 5;		/* avx2 */
	c->la[0] = 0x07300402;
	c->x0[0] = 0x80000008;
	c->x1[3] = 1u << 29;		/* lm */
	c->x8[0] = 0x3930;
}

static void test_cpuinfo(void **state)
{
	struct procfs_proc p = { .exe = "" };
	struct procfs_cpu c;
	const char *t;

	(void)state;
	cpu_fill(&c, 2);
	t = gen("/proc/cpuinfo", &c, &p);
	assert_non_null(strstr(t, "processor\t: 0\nvendor_id\t: GenuineIntel\n"
			       "cpu family\t: 6\nmodel\t\t: 167\n"));
	assert_non_null(strstr(t, "model name\t: unknown\nstepping\t: 1\n"));
	assert_non_null(strstr(t, "cpu MHz\t\t: 2599.998\n"));
	assert_non_null(strstr(t, "flags\t\t: fpu tsc lm arch_perfmon pni "
			       "hypervisor avx2\n"));
	assert_non_null(strstr(t, "clflush size\t: 64\n"));
	assert_non_null(strstr(t, "address sizes\t: 48 bits physical, 57 bits"
			       " virtual\n"));
	assert_non_null(strstr(t, "processor\t: 1\n"));
	assert_null(strstr(t, "processor\t: 2\n"));
	assert_non_null(strstr(t, "siblings\t: 2\n"));

	/* No PMU in leaf 0xA: no arch_perfmon.  A brand string is shown. */
	c.la[0] = 0;
	c.x0[0] = 0x80000004;
	memcpy(c.brand, "  Intel(R) Xeon(R) Processor", 29);
	t = gen("/proc/cpuinfo", &c, &p);
	assert_null(strstr(t, "arch_perfmon"));
	assert_null(strstr(t, "address sizes"));
	assert_non_null(strstr(t, "model name\t: Intel(R) Xeon(R) Processor\n"));

	/* Family 0xf adds the extended family; below 6 no extended model. */
	c.l1[0] = 0x00a20f12;
	t = gen("/proc/cpuinfo", &c, &p);
	assert_non_null(strstr(t, "cpu family\t: 25\nmodel\t\t: 33\n"));
	c.l1[0] = 0x000a0571;
	t = gen("/proc/cpuinfo", &c, &p);
	assert_non_null(strstr(t, "cpu family\t: 5\nmodel\t\t: 7\n"));
}

static void test_cpu_files(void **state)
{
	struct procfs_proc p = { .exe = "" };
	struct procfs_cpu c;

	(void)state;
	cpu_fill(&c, 1);
	assert_string_equal(gen("/sys/devices/system/cpu/online", &c, &p),
			    "0\n");
	cpu_fill(&c, 4);
	assert_string_equal(gen("/sys/devices/system/cpu/possible", &c, &p),
			    "0-3\n");
	assert_string_equal(gen("/sys/devices/system/cpu/cpu2/topology/"
				"thread_siblings", &c, &p), "4\n");
	assert_string_equal(gen("/sys/devices/system/cpu/cpu2/topology/"
				"thread_siblings_list", &c, &p), "2\n");
	assert_string_equal(gen("/sys/devices/system/cpu/cpu3/topology/"
				"core_siblings", &c, &p), "f\n");
	assert_string_equal(gen("/sys/devices/system/cpu/cpu3/topology/"
				"core_id", &c, &p), "3\n");
	/* Linux groups a mask by 32 CPUs. */
	cpu_fill(&c, 40);
	assert_string_equal(gen("/sys/devices/system/cpu/cpu33/topology/"
				"thread_siblings", &c, &p), "02,00000000\n");
	assert_string_equal(gen("/sys/devices/system/node/node0/cpumap",
				&c, &p), "ff,ffffffff\n");
	assert_string_equal(gen("/sys/bus/event_source/devices/cpu/type",
				&c, &p), "4\n");
	assert_string_equal(gen("/proc/sys/kernel/perf_event_paranoid",
				&c, &p), "-1\n");
	assert_string_equal(gen("/proc/sys/kernel/nmi_watchdog", &c, &p),
			    "0\n");
}

/* PAPI's presets: only the architectural events CPUID.0AH:EBX does not
 * mark absent, by the names of PAPI's table for the CPU libpfm4 sees. */
static void test_papi_presets(void **state)
{
	struct procfs_proc p = { .exe = "" };
	struct procfs_cpu c;
	const char *t;

	(void)state;
	cpu_fill(&c, 1);
	c.la[1] = 0x58;		/* step: LLC refs, misses, branch misses */
	t = gen("/proc/perfvisor/papi_events.csv", &c, &p);
	assert_non_null(strstr(t, "\nCPU,skl\n"));
	assert_non_null(strstr(t, "\nPRESET,PAPI_TOT_INS,NOT_DERIVED,"
			       "INST_RETIRED:ANY_P\n"));
	assert_non_null(strstr(t, "\nPRESET,PAPI_TOT_CYC,NOT_DERIVED,"
			       "CPU_CLK_THREAD_UNHALTED:THREAD_P\n"));
	assert_non_null(strstr(t, "\nPRESET,PAPI_BR_INS,"));
	assert_non_null(strstr(t, "\nPRESET,PAPI_REF_CYC,"));
	assert_null(strstr(t, "PAPI_BR_MSP"));
	assert_null(strstr(t, "amd64"));
	c.la[1] = 0x7e;		/* tsc: cycles and reference cycles */
	t = gen("/proc/perfvisor/papi_events.csv", &c, &p);
	assert_null(strstr(t, "PAPI_TOT_INS"));
	assert_null(strstr(t, "PAPI_BR_INS"));
	assert_non_null(strstr(t, "\nPRESET,PAPI_TOT_CYC,"));
	/* AMD: each family's names, no reference cycles */
	memcpy(&c.l0[1], "Auth", 4);
	c.la[1] = 0x58;
	t = gen("/proc/perfvisor/papi_events.csv", &c, &p);
	assert_null(strstr(t, "CPU,skl"));
	assert_null(strstr(t, "PAPI_REF_CYC"));
	assert_non_null(strstr(t, "CPU,amd64_fam15h_interlagos\n"
			       "CPU,amd64_fam16h\nPRESET,PAPI_TOT_CYC,"
			       "NOT_DERIVED,CPU_CLK_UNHALTED\n"));
	assert_non_null(strstr(t, "CPU,amd64_fam19h_zen3\n"));
	assert_non_null(strstr(t, "CPU,amd64_fam1ah_zen5\nPRESET,PAPI_TOT_CYC,"
			       "NOT_DERIVED,CYCLES_NOT_IN_HALT\nPRESET,"
			       "PAPI_TOT_INS,NOT_DERIVED,RETIRED_INSTRUCTIONS\n"
			       "PRESET,PAPI_BR_INS,NOT_DERIVED,"
			       "RETIRED_BRANCH_INSTRUCTIONS\n"));
}

static void test_maps_and_exe(void **state)
{
#define M(s, e, p)	{ .start = (s), .end = (e), .prot = (p) }
	static const struct procfs_map maps[] = {
		M(0x400000, 0x401000, 1),
		M(0x401000, 0x480000, 5),
		M(0x480000, 0x490000, 3),
		M(0x600000, 0x800000, 3),		/* the heap */
		M(0x7f0000000000, 0x7f0000001000, 3),	/* anonymous */
		M(PV_VVAR_VA, PV_VDSO_VA, 1),
		M(PV_VDSO_VA, PV_VDSO_VA + 4096, 5),
		M(0x7fffff800000, 0x800000000000, 3),
	};
#undef M
	/* a library's text, mapped from its file */
	static const struct procfs_map lib[] = {
		{ .start = 0x7f0000100000, .end = 0x7f0000180000, .prot = 5,
		  .path = "/usr/lib/libc.so.6", .off = 0x28000, .ino = 91 },
	};
	struct procfs_proc p = {
		.pid = 42, .ppid = 1, .nthreads = 3, .comm = "zero",
		.exe = "/bin/zero", .exe_ino = 77, .brk_start = 0x600000,
		.brk = 0x800000, .maps = maps, .nmaps = 8,
	};
	struct procfs_cpu c;
	const char *t;

	(void)state;
	cpu_fill(&c, 1);
	assert_string_equal(gen("/proc/self/exe", &c, &p), "/bin/zero");
	t = gen("/proc/42/maps", &c, &p);
	/* PAPI reads the program's text and data ranges from here: its
	 * sscanf wants "start-end perms offset dev inode path". */
	assert_non_null(strstr(t, "00401000-00480000 r-xp 00001000 00:10 77 "));
	assert_non_null(strstr(t, "     /bin/zero\n00480000-00490000 rw-p "
			       "00080000 00:10 77 "));
	assert_non_null(strstr(t, "00600000-00800000 rw-p 00000000 00:00 0"));
	assert_non_null(strstr(t, " [heap]\n7f0000000000-7f0000001000 rw-p "
			       "00000000 00:00 0\n"));
	assert_non_null(strstr(t, " [vvar]\n"));
	assert_non_null(strstr(t, " [vdso]\n"));
	assert_non_null(strstr(t, " [stack]\n"));
	/* The path starts at column 74, as Linux pads it. */
	assert_int_equal(strchr(t, '/') - t, 73);
	p.maps = lib;
	p.nmaps = 1;
	assert_string_equal(gen("/proc/42/maps", &c, &p),
			    "7f0000100000-7f0000180000 r-xp 00028000 00:10 91"
			    "                         /usr/lib/libc.so.6\n");
	p.maps = maps;
	p.nmaps = 8;

	/* 4 + 508 + 64 KiB of program, 2 MiB heap, 4 KiB anonymous, 8 KiB
	 * vvar and vDSO, 8 MiB stack. */
	t = gen("/proc/self/status", &c, &p);
	assert_non_null(strstr(t, "Name:\tzero\nState:\tR (running)\n"
			       "Tgid:\t42\nPid:\t42\nPPid:\t1\n"));
	assert_non_null(strstr(t, "VmSize:\t10828 kB\n"));
	assert_non_null(strstr(t, "VmData:\t2116 kB\n"));
	assert_non_null(strstr(t, "VmStk:\t8192 kB\n"));
	assert_non_null(strstr(t, "VmExe:\t508 kB\n"));
	assert_non_null(strstr(t, "Threads:\t3\n"));
	assert_string_equal(gen("/proc/42/statm", &c, &p),
			    "2707 2707 0 127 0 2577 0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_cpuinfo),
		cmocka_unit_test(test_cpu_files),
		cmocka_unit_test(test_papi_presets),
		cmocka_unit_test(test_maps_and_exe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
