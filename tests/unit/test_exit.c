// SPDX-License-Identifier: MIT
/*
 * Exit dispatch with synthetic kvm_run structures: what a hostile or broken
 * guest can put in an exit gets an answer, never a VMM crash.
 */
#include <linux/kvm.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guest_mem.h"
#include "hypercall.h"
#include "layout.h"
#include "vcpu.h"

#define RUN_SIZE	(3 * 4096)
#define MEM_SIZE	(4 << 20)

struct fixture {
	struct vmm_config cfg;
	struct vm vm;
	struct vcpu v;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->vm.cfg = &f->cfg;
	f->vm.mem = calloc(1, MEM_SIZE);
	f->vm.mem_size = MEM_SIZE;
	f->vm.ncpus = 1;
	pthread_mutex_init(&f->vm.lock, NULL);
	pthread_cond_init(&f->vm.stopped, NULL);
	f->v.vm = &f->vm;
	f->v.fd = -1;
	f->v.run = calloc(1, RUN_SIZE);
	f->v.run_size = RUN_SIZE;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->vm.mem);
	free(f->v.run);
	free(f);
	return 0;
}

static void io_exit(struct kvm_run *run, uint16_t port, int dir, int size,
		    int count)
{
	run->exit_reason = KVM_EXIT_IO;
	run->io.port = port;
	run->io.direction = dir;
	run->io.size = size;
	run->io.count = count;
	run->io.data_offset = 4096;
}

static void test_unknown_port_reads_ones(void **state)
{
	struct fixture *f = *state;
	uint8_t *data = (uint8_t *)f->v.run + 4096;

	io_exit(f->v.run, 0x1234, KVM_EXIT_IO_IN, 4, 2);
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_RESUME);
	for (int i = 0; i < 8; i++)
		assert_int_equal(data[i], 0xff);
	assert_int_equal(f->vm.stop, VM_RUNNING);
}

static void test_serial_lsr_ready(void **state)
{
	struct fixture *f = *state;
	uint8_t *data = (uint8_t *)f->v.run + 4096;

	io_exit(f->v.run, PV_COM1_PORT + 5, KVM_EXIT_IO_IN, 1, 1);
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_RESUME);
	assert_int_equal(data[0] & 0x20, 0x20);
}

static void test_bad_io_data_offset(void **state)
{
	struct fixture *f = *state;

	io_exit(f->v.run, 0x80, KVM_EXIT_IO_IN, 4, 100000);
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_STOP);
	assert_int_equal(f->vm.stop, VM_STOP_ERROR);
}

static void hypercall(struct fixture *f, uint64_t nr, uint64_t a, uint64_t b,
		      uint64_t c)
{
	struct kvm_regs *r = &f->v.run->s.regs.regs;

	io_exit(f->v.run, PV_HC_PORT, KVM_EXIT_IO_OUT, 1, 1);
	r->rax = nr;
	r->rdi = a;
	r->rsi = b;
	r->r10 = c;
}

/* One hypercall handled: its result (rax). */
static int64_t hypercall_ret(struct fixture *f, uint64_t nr, uint64_t a,
			     uint64_t b, uint64_t c)
{
	hypercall(f, nr, a, b, c);
	vcpu_handle_exit(&f->v);
	return (int64_t)f->v.run->s.regs.regs.rax;
}

static void test_hypercall_unknown(void **state)
{
	struct fixture *f = *state;

	hypercall(f, 9999, 0, 0, 0);
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_RESUME);
	assert_int_equal((int64_t)f->v.run->s.regs.regs.rax, -38);
	assert_true(f->v.run->kvm_dirty_regs & KVM_SYNC_X86_REGS);
}

static void test_hypercall_bad_pointers(void **state)
{
	struct fixture *f = *state;

	/* cr3 = 0: an empty page table, so every user address faults. */
	assert_int_equal(hypercall_ret(f, PV_HC_WRITE, 1, 0x400000, 10), -14);
	assert_int_equal(hypercall_ret(f, PV_HC_COPY, MEM_SIZE - 8, 0, 16),
			 -14);
	assert_int_equal(hypercall_ret(f, PV_HC_ZERO, ~0ull - 4, 16, 0), -14);
	/* below the kernel map */
	assert_int_equal(hypercall_ret(f, PV_HC_LOG, 0x1000, 16, 0), -14);
	assert_int_equal(hypercall_ret(f, PV_HC_WRITE, 7, 0x400000, 10), -9);
	assert_int_equal(f->vm.stop, VM_RUNNING);
}

static void test_hypercall_copy_zero(void **state)
{
	struct fixture *f = *state;

	memcpy(f->vm.mem + 0x10000, "perfvisor", 10);
	hypercall(f, PV_HC_COPY, 0x20000, 0x10000, 10);
	vcpu_handle_exit(&f->v);
	assert_int_equal(f->v.run->s.regs.regs.rax, 0);
	assert_string_equal((char *)f->vm.mem + 0x20000, "perfvisor");
	hypercall(f, PV_HC_ZERO, 0x20000, 4, 0);
	vcpu_handle_exit(&f->v);
	assert_int_equal(f->vm.mem[0x20003], 0);
	assert_int_equal(f->vm.mem[0x20004], 'v');
}

/* A page table of 4 KiB entries in one exit; bad counts and ends refused. */
static void test_hypercall_pt_fill(void **state)
{
	struct fixture *f = *state;
	uint64_t *pt = (uint64_t *)(f->vm.mem + 0x20000);

	pt[512] = 0xdead;
	assert_int_equal(hypercall_ret(f, PV_HC_PT_FILL, 0x20000,
				       0x200000 | 0x67, 512), 0);
	assert_int_equal(pt[0], 0x200067);
	assert_int_equal(pt[1], 0x201067);
	assert_int_equal(pt[511], 0x3ff067);
	assert_int_equal(pt[512], 0xdead);
	assert_int_equal(hypercall_ret(f, PV_HC_PT_FILL, 0x20000, 0, 513), -22);
	assert_int_equal(hypercall_ret(f, PV_HC_PT_FILL, 0x20004, 0, 1), -22);
	assert_int_equal(hypercall_ret(f, PV_HC_PT_FILL, MEM_SIZE - 8, 0, 2),
			 -14);
	assert_int_equal(f->vm.stop, VM_RUNNING);
}

static void test_hypercall_exit(void **state)
{
	struct fixture *f = *state;

	hypercall(f, PV_HC_EXIT, 0x1234, 0, 0);
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_STOP);
	assert_int_equal(f->vm.stop, VM_STOP_EXIT);
	assert_int_equal(f->vm.exit_status, 0x34);
}

/* User-page walk: U and W bits are required at every level. */
static void test_gva_walk(void **state)
{
	struct fixture *f = *state;
	uint64_t *pml4 = (uint64_t *)(f->vm.mem + 0x1000);
	uint64_t *pdpt = (uint64_t *)(f->vm.mem + 0x2000);
	uint64_t *pd = (uint64_t *)(f->vm.mem + 0x3000);
	uint64_t *pt = (uint64_t *)(f->vm.mem + 0x4000);
	uint64_t gpa;

	(void)state;
	pml4[0] = 0x2000 | 7;
	pdpt[0] = 0x3000 | 7;
	pd[2] = 0x4000 | 7;		/* 0x400000 */
	pd[3] = 0x200000 | 0x87;	/* 0x600000: 2 MiB page */
	pt[0] = 0x10000 | 7;
	pt[1] = 0x11000 | 5;		/* read-only */
	pt[2] = 0x12000 | 3;		/* supervisor */
	pt[3] = 0xfff000 | 7;		/* outside guest RAM */
	assert_int_equal(gva_to_gpa(&f->vm, 0x1000, 0x400010, GVA_WRITE, &gpa), 0);
	assert_int_equal(gpa, 0x10010);
	assert_int_equal(gva_to_gpa(&f->vm, 0x1000, 0x401000, GVA_READ, &gpa), 0);
	assert_int_equal(gva_to_gpa(&f->vm, 0x1000, 0x401000, GVA_WRITE, &gpa), -14);
	assert_int_equal(gva_to_gpa(&f->vm, 0x1000, 0x402000, GVA_READ, &gpa), -14);
	assert_int_equal(gva_to_gpa(&f->vm, 0x1000, 0x612345, GVA_WRITE, &gpa), 0);
	assert_int_equal(gpa, 0x212345);
	assert_int_equal(gva_to_gpa(&f->vm, 0x1000, 0xffffffff80000000ull,
				    GVA_READ, &gpa), -14);
	{
		char buf[8];

		assert_int_equal(gva_read(&f->vm, 0x1000, buf, 0x403ff0, 8), -14);
		/* A page table pointing past RAM is -EFAULT too. */
		pd[4] = 0x7fff000 | 7;
		assert_int_equal(gva_read(&f->vm, 0x1000, buf, 0x800000, 8), -14);
	}
}

static void test_msr_exit_gp(void **state)
{
	struct fixture *f = *state;

	f->v.run->exit_reason = KVM_EXIT_X86_RDMSR;
	f->v.run->msr.index = 0xdeadbeef;
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_RESUME);
	assert_int_equal(f->v.run->msr.error, 1);
}

static void test_mmio_reads_ones(void **state)
{
	struct fixture *f = *state;

	f->v.run->exit_reason = KVM_EXIT_MMIO;
	f->v.run->mmio.is_write = 0;
	f->v.run->mmio.len = 8;
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_RESUME);
	assert_int_equal(f->v.run->mmio.data[7], 0xff);
}

static void test_shutdown_and_unknown_stop(void **state)
{
	struct fixture *f = *state;

	f->v.run->exit_reason = KVM_EXIT_SHUTDOWN;
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_STOP);
	assert_int_equal(f->vm.stop, VM_STOP_ERROR);
	assert_int_equal(f->vm.exit_status, 125);
	assert_non_null(strstr(f->vm.stop_msg, "triple fault"));
}

static void test_unknown_exit_reason(void **state)
{
	struct fixture *f = *state;

	f->v.run->exit_reason = 4242;
	assert_int_equal(vcpu_handle_exit(&f->v), EXIT_STOP);
	assert_non_null(strstr(f->vm.stop_msg, "4242"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_unknown_port_reads_ones),
		T(test_serial_lsr_ready),
		T(test_bad_io_data_offset),
		T(test_hypercall_unknown),
		T(test_hypercall_bad_pointers),
		T(test_hypercall_copy_zero),
		T(test_hypercall_pt_fill),
		T(test_hypercall_exit),
		T(test_gva_walk),
		T(test_msr_exit_gp),
		T(test_mmio_reads_ones),
		T(test_shutdown_and_unknown_stop),
		T(test_unknown_exit_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
