// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the VMM's exit dispatch (vcpu_handle_exit() and the
 * exit_handle_*() and hypercall handlers behind it) fed synthetic kvm_run
 * structures, as tests/unit/test_exit.c does by hand.  A guest controls
 * everything in an exit: ports, sizes, counts, MSR numbers and values,
 * hypercall numbers and arguments, and the page tables the hypercalls walk.
 * None of it may make the VMM touch memory outside guest RAM and kvm_run
 * (ASan checks that: both are exact-size heap blocks), crash, or stop the
 * VM for anything but a triple fault, a panic hypercall, an exit hypercall
 * or an exit reason KVM never sends.
 *
 * Input: a sequence of operations.  A guest memory poke lets the fuzzer
 * build its own page tables next to the ones set up here (cr3 0x1000 maps
 * user pages at 0x400000 read-write, read-only, supervisor-only and past
 * the end of RAM).
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "hypercall.h"
#include "layout.h"
#include "pmu.h"
#include "vcpu.h"
#include "vpmu.h"

#define RUN_SIZE	(3 * 4096)
#define MEM_SIZE	(1u << 20)

/* Guest addresses at the edges that matter, or anything. */
static uint64_t pick_addr(struct input *in)
{
	uint8_t how = take(in, 1);
	uint64_t v = take(in, 4);

	switch (how & 7) {
	case 0:
		return 0x400000 + (v & 0x3fff);		/* user pages */
	case 1:
		return PV_KERNEL_BASE + (v & (MEM_SIZE - 1));
	case 2:
		return MEM_SIZE - (v & 0xfff);			/* end of RAM */
	case 3:
		return PV_KERNEL_BASE + MEM_SIZE - (v & 0xfff);
	case 4:
		return -(v & 0xffff);				/* wraps */
	case 5:
		return v & (MEM_SIZE - 1);			/* any gpa */
	case 6:
		return PV_USER_TOP - (v & 0xffff);
	default:
		return v | take(in, 4) << 32;
	}
}

static uint64_t pick_len(struct input *in)
{
	uint8_t how = take(in, 1);
	uint64_t v = take(in, 4);

	switch (how & 3) {
	case 0:
		return v & 0xff;
	case 1:
		return v & 0x3ffff;
	case 2:
		return -(v & 0xff);
	default:
		return v | take(in, 4) << 32;
	}
}

static void build_page_tables(uint8_t *mem)
{
	uint64_t *pml4 = (uint64_t *)(mem + 0x1000);
	uint64_t *pdpt = (uint64_t *)(mem + 0x2000);
	uint64_t *pd = (uint64_t *)(mem + 0x3000);
	uint64_t *pt = (uint64_t *)(mem + 0x4000);

	pml4[0] = 0x2000 | 7;
	pdpt[0] = 0x3000 | 7;
	pd[2] = 0x4000 | 7;		/* 0x400000 */
	pd[3] = 0x0 | 0x87;		/* 0x600000: 2 MiB page over RAM */
	pd[4] = 0x200000 | 0x87;	/* 2 MiB page past the end of RAM */
	pt[0] = 0x10000 | 7;
	pt[1] = 0x11000 | 5;		/* read-only */
	pt[2] = 0x12000 | 3;		/* supervisor */
	pt[3] = 0xfff000 | 7;		/* outside guest RAM */
	pt[4] = 0xff000 | 7;		/* last page of RAM */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_RDWR);

	(void)argc;
	(void)argv;
	/* PV_HC_READ reads the VMM's stdin: never block on it. */
	if (fd >= 0)
		dup2(fd, 0);
	return 0;
}

static const uint32_t exit_reasons[] = {
	KVM_EXIT_IO, KVM_EXIT_IO, KVM_EXIT_IO, KVM_EXIT_IO, KVM_EXIT_MMIO,
	KVM_EXIT_X86_RDMSR, KVM_EXIT_X86_WRMSR, KVM_EXIT_HLT, KVM_EXIT_INTR,
	KVM_EXIT_SHUTDOWN, KVM_EXIT_SYSTEM_EVENT, KVM_EXIT_INTERNAL_ERROR,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct vmm_config cfg = { 0 };
	struct pmu_config pcfg = {
		.source = "fake", .policy = "offset", .nr_vcpus = 1,
		.tsc_khz = 1000000,
	};
	struct vm vm = { 0 };
	struct vcpu v = { 0 };
	struct pmu *pmu = NULL;
	const char *err;
	unsigned int steps = 0;

	vm.cfg = &cfg;
	vm.mem = calloc(1, MEM_SIZE);
	vm.mem_size = MEM_SIZE;
	vm.ncpus = 1;
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.stopped, NULL);
	v.vm = &vm;
	v.fd = -1;
	v.run = calloc(1, RUN_SIZE);
	v.run_size = RUN_SIZE;
	if (take(&in, 1) & 1) {
		if (pmu_create(&pcfg, &pmu, &err))
			abort();
		v.pmu.pv = pmu_vcpu(pmu, 0);
	}
	build_page_tables(vm.mem);

	while (in.left && steps++ < 256) {
		struct kvm_run *run = v.run;
		struct kvm_regs *r = &run->s.regs.regs;
		uint8_t op = take(&in, 1);
		enum exit_result res;

		if (op < 32) {
			/* Poke guest memory (page tables, records). */
			uint64_t off = take(&in, 3) % (MEM_SIZE - 7);
			uint64_t val = take(&in, 8);

			memcpy(vm.mem + off, &val, 8);
			continue;
		}
		run->exit_reason = exit_reasons[op % 12];
		if (op >= 250)
			run->exit_reason = take(&in, 4);
		run->s.regs.sregs.cr3 = (op & 16) ? take(&in, 4) : 0x1000;
		switch (run->exit_reason) {
		case KVM_EXIT_IO: {
			static const uint16_t ports[] = {
				PV_HC_PORT, PV_HC_PORT, PV_HC_PORT,
				PV_COM1_PORT, PV_COM1_PORT + 5, 0x80,
			};
			uint8_t sz = take(&in, 1);

			run->io.port = (op & 32) ? ports[op % 6] : take(&in, 2);
			run->io.direction = sz & 1;
			run->io.size = 1 << ((sz >> 1) & 3);
			run->io.count = (sz & 0x80) ? take(&in, 4) :
					(sz >> 3) & 15;
			run->io.data_offset = (sz & 0x40) ? take(&in, 8) : 4096;
			memcpy((uint8_t *)run + 4096, in.p,
			       in.left < 64 ? in.left : 64);
			r->rax = (op & 64) ? take(&in, 8) : take(&in, 1) % 40;
			/* Exit and panic end the run: keep them rare. */
			if ((r->rax == PV_HC_EXIT || r->rax == PV_HC_PANIC) &&
			    !(op & 8))
				r->rax = PV_HC_LOG;
			r->rdi = pick_addr(&in);
			r->rsi = (op & 4) ? pick_addr(&in) : pick_len(&in);
			r->r10 = pick_len(&in);
			if (r->rax == PV_HC_WRITE)
				r->rdi = 1 + (r->rdi & 1);
			else if (r->rax == PV_HC_READ)
				r->rdi = r->rdi & 1;
			break;
		}
		case KVM_EXIT_MMIO:
			run->mmio.phys_addr = take(&in, 8);
			run->mmio.len = take(&in, 1);
			run->mmio.is_write = take(&in, 1) & 1;
			break;
		case KVM_EXIT_X86_RDMSR:
		case KVM_EXIT_X86_WRMSR: {
			uint8_t b = take(&in, 1);

			run->msr.index = b < 128 ? 0xc1 + b % 8 :
					 b < 192 ? 0x186 + b % 8 :
					 b < 240 ? 0x309 + b % 0x88 :
					 (uint32_t)take(&in, 4);
			run->msr.data = take(&in, 8);
			run->msr.error = 0;
			break;
		}
		case KVM_EXIT_SYSTEM_EVENT:
			run->system_event.type = take(&in, 4);
			break;
		}
		res = vcpu_handle_exit(&v);
		if (res == EXIT_STOP) {
			/* Only these may stop the VM. */
			/* The geometry check must not wrap either. */
			if (run->exit_reason == KVM_EXIT_IO &&
			    run->io.data_offset <= RUN_SIZE &&
			    (uint64_t)run->io.size * run->io.count <=
			    RUN_SIZE - run->io.data_offset &&
			    run->io.port == PV_HC_PORT &&
			    run->io.direction == KVM_EXIT_IO_OUT &&
			    r->rax != PV_HC_EXIT && r->rax != PV_HC_PANIC)
				abort();
			if (run->exit_reason == KVM_EXIT_MMIO ||
			    run->exit_reason == KVM_EXIT_X86_RDMSR ||
			    run->exit_reason == KVM_EXIT_X86_WRMSR ||
			    run->exit_reason == KVM_EXIT_HLT)
				abort();
			atomic_store(&vm.stop, VM_RUNNING);
		}
		if ((run->exit_reason == KVM_EXIT_X86_RDMSR ||
		     run->exit_reason == KVM_EXIT_X86_WRMSR) &&
		    !v.pmu.pv && !run->msr.error)
			abort();
		/* The guest's PMU page registration must not outlive mem. */
	}
	serial_flush(&vm);
	if (pmu)
		pmu_destroy(pmu);
	free(vm.mem);
	free(v.run);
	pthread_mutex_destroy(&vm.lock);
	pthread_cond_destroy(&vm.stopped);
	return 0;
}
