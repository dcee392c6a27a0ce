// SPDX-License-Identifier: MIT
/*
 * vmm stat --breakdown: the items built from what a run collected (time
 * split, names of exits, hypercalls, vectors and system calls, the kernel
 * functions at the samples, named from argv[1], the guest kernel) and the
 * -x and --json lines they print as.
 */
#include <linux/kvm.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "breakdown.h"
#include "hypercall.h"

static struct breakdown bd;
static const char *kernel_path;
static void *kernel;
static size_t kernel_len;

/* nm's address of a kernel function: the oracle for the names. */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[512], line[256], sym[128], type;
	unsigned long long a = 0, v;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -P --defined-only '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %c %llx", sym, &type, &v) == 3 &&
		    !strcmp(sym, name))
			a = v;
	pclose(f);
	if (!a)
		fail_msg("nm has no %s", name);
	return a;
}

static int setup(void **state)
{
	(void)state;
	memset(&bd, 0, sizeof(bd));
	bd.tsc_khz = 1000000;			/* 1 cycle = 1 ns */
	bd.vcpu_cycles = 10000000;
	breakdown_exit(&bd, KVM_EXIT_IO, PV_HC_WRITE, 300000);
	breakdown_exit(&bd, KVM_EXIT_IO, PV_HC_WRITE, 200000);
	breakdown_exit(&bd, KVM_EXIT_X86_RDMSR, -1, 500000);
	bd.nkvm = 3;
	strcpy(bd.kvm_names[0], "insn_emulation");
	bd.kvm[0] = 4242;
	strcpy(bd.kvm_names[1], "halt_wait_ns");
	bd.kvm[1] = 2000000;
	strcpy(bd.kvm_names[2], "pf_guest");
	bd.kvm[2] = 17;
	bd.samples_user = 3;
	bd.samples_kernel = 1;
	bd.have_kstat = true;
	bd.kstat.syscall[110] = 5;		/* getppid */
	bd.kstat.syscall[39] = 2;		/* getpid */
	bd.kstat.syscall[511] = 1;		/* 511 and up */
	bd.kstat.syscall[400] = 1;		/* no name here */
	bd.kstat.vector[14] = 3;
	bd.kstat.vector[PV_KSTAT_VEC_TIMER] = 4;
	bd.kstat.vector[6] = 1;
	bd.kstat.vector[0x40] = 1;
	return 0;
}

static const struct bd_item *item(const struct bd_item *it, size_t n,
				  const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(it[i].name, name))
			return &it[i];
	return NULL;
}

static uint64_t value(const struct bd_item *it, size_t n, const char *name)
{
	const struct bd_item *i = item(it, n, name);

	assert_non_null(i);
	return i->value;
}

/* Kernel-mode samples by function, most first, unknown RIPs apart. */
static void test_ksyms(void **state)
{
	static struct bd_item it[1024];
	uint64_t sched = nm_addr(kernel_path, "schedule");
	uint64_t rtu = nm_addr(kernel_path, "return_to_user");
	size_t n, first = 0;

	(void)state;
	for (int i = 0; i < 5; i++)
		bd.krip[bd.nkrip++] = sched + i;
	bd.krip[bd.nkrip++] = rtu;
	bd.krip[bd.nkrip++] = rtu + 3;
	bd.krip[bd.nkrip++] = 0x1234;		/* below the kernel */
	/* No image: no names at all. */
	n = breakdown_items(&bd, it, 1024);
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(it[i].name, "ksamples:"));
	breakdown_set_kernel(&bd, kernel, kernel_len);
	n = breakdown_items(&bd, it, 1024);
	assert_int_equal(value(it, n, "ksamples:schedule"), 5);
	assert_int_equal(value(it, n, "ksamples:return_to_user"), 2);
	assert_int_equal(value(it, n, "ksamples:[unknown]"), 1);
	while (first < n && strncmp(it[first].name, "ksamples:", 9))
		first++;
	assert_string_equal(it[first].name, "ksamples:schedule");
}

static void test_items(void **state)
{
	static struct bd_item it[1024];
	size_t n = breakdown_items(&bd, it, 1024);

	(void)state;
	/* 10 ms of vCPU time: 1 ms in the VMM, 2 ms halted, 7 ms guest. */
	assert_string_equal(it[0].name, "time:vcpus");
	assert_string_equal(it[0].unit, "ns");
	assert_int_equal(it[0].value, 10000000);
	assert_int_equal(value(it, n, "time:vmm"), 1000000);
	assert_int_equal(value(it, n, "time:halted"), 2000000);
	assert_int_equal(value(it, n, "time:guest"), 7000000);
	/* Split as the samples are: 3 in user mode, 1 in the kernel. */
	assert_int_equal(value(it, n, "time:user"), 5250000);
	assert_int_equal(value(it, n, "time:kernel"), 1750000);
	assert_int_equal(value(it, n, "samples:user"), 3);
	assert_int_equal(value(it, n, "samples:kernel"), 1);
	assert_int_equal(value(it, n, "kvm:insn_emulation"), 4242);
	/* Always there, zero or not; halt_wait_ns only as time:halted. */
	assert_int_equal(value(it, n, "kvm:exits"), 0);
	assert_int_equal(value(it, n, "kvm:pf_guest"), 17);
	assert_null(item(it, n, "kvm:halt_wait_ns"));
	assert_int_equal(value(it, n, "vmm-exit:hypercall.write"), 2);
	assert_int_equal(value(it, n, "vmm-exit-ns:hypercall.write"), 500000);
	assert_int_equal(value(it, n, "vmm-exit:rdmsr"), 1);
	assert_null(item(it, n, "vmm-exit:io"));
	assert_int_equal(value(it, n, "kentry:syscalls"), 9);
	assert_int_equal(value(it, n, "kentry:exceptions+interrupts"), 9);
	assert_int_equal(value(it, n, "kentry:syscall:getppid"), 5);
	assert_int_equal(value(it, n, "kentry:syscall:getpid"), 2);
	assert_int_equal(value(it, n, "kentry:syscall:400"), 1);
	assert_int_equal(value(it, n, "kentry:syscall:511+"), 1);
	assert_int_equal(value(it, n, "kentry:page-fault"), 3);
	assert_int_equal(value(it, n, "kentry:timer"), 4);
	assert_int_equal(value(it, n, "kentry:ipi"), 0);
	assert_int_equal(value(it, n, "kentry:invalid-opcode"), 1);
	assert_int_equal(value(it, n, "kentry:vector-64"), 1);
	/* Room for a few only: no more are written. */
	assert_int_equal(breakdown_items(&bd, it, 3), 3);
}

static char *printed(const struct vmm_stat *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	breakdown_print(f, st, &bd);
	fclose(f);
	return buf;
}

static void test_print(void **state)
{
	struct vmm_stat st = { .sep = "," };
	char *s = printed(&st);

	(void)state;
	assert_non_null(strstr(s, "10000000,ns,time:vcpus,,,\n"));
	assert_non_null(strstr(s, "\n5,,kentry:syscall:getppid,,,\n"));
	free(s);
	st = (struct vmm_stat){ .json = true };
	s = printed(&st);
	assert_non_null(strstr(s, "{\"counter-value\" : \"5\", \"unit\" : \"\", "
			       "\"event\" : \"kentry:syscall:getppid\"}\n"));
	free(s);
	/* Without the guest's counts: said so, not zeros. */
	bd.have_kstat = false;
	st = (struct vmm_stat){ 0 };
	s = printed(&st);
	assert_null(strstr(s, "kentry:sys"));
	assert_non_null(strstr(s, "no kernel entry counts"));
	assert_non_null(strstr(s, "7.000 ms   time:guest\n"));
	free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_items, setup),
		cmocka_unit_test_setup(test_print, setup),
		cmocka_unit_test_setup(test_ksyms, setup),
	};
	FILE *f;
	long len;

	kernel_path = argc == 2 ? argv[1] : NULL;
	if (!kernel_path || !(f = fopen(kernel_path, "rb"))) {
		fprintf(stderr, "usage: %s GUEST_KERNEL\n", argv[0]);
		return 2;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	kernel = malloc(len);
	if (!kernel || fread(kernel, 1, len, f) != (size_t)len)
		return 2;
	fclose(f);
	kernel_len = len;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
