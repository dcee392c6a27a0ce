// SPDX-License-Identifier: MIT
/*
 * Exit handlers, one free function per exit reason, dispatched from the one
 * switch in vcpu_handle_exit().  Unit tests call them with a fake kvm_run.
 * A guest can put anything in these exits: unknown ports and MMIO read as
 * all ones and ignore writes, unknown MSRs raise #GP; only a broken VM
 * (triple fault, emulation failure) stops the VMM.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hypercall.h"
#include "pmu.h"
#include "vcpu.h"

#define COM1_LSR		(PV_COM1_PORT + 5)
#define LSR_THRE_TEMT		0x60	/* transmitter always empty */

static void serial_flush_locked(struct vm *vm)
{
	if (!vm->serial_len)
		return;
	if (write(2, vm->serial_buf, vm->serial_len) < 0) {
		/* stderr is gone: nothing left to tell. */
	}
	vm->serial_len = 0;
}

/* COM1 transmit: kernel early output, line-buffered to stderr. */
static void serial_out(struct vm *vm, uint8_t c)
{
	pthread_mutex_lock(&vm->lock);
	vm->serial_buf[vm->serial_len++] = c;
	if (c == '\n' || vm->serial_len == sizeof(vm->serial_buf))
		serial_flush_locked(vm);
	pthread_mutex_unlock(&vm->lock);
}

/* Before the VMM speaks or exits: a half line is ended, so that what
 * follows starts on a line of its own and nothing is lost. */
void serial_flush(struct vm *vm)
{
	bool partial;

	pthread_mutex_lock(&vm->lock);
	partial = vm->serial_len && vm->serial_buf[vm->serial_len - 1] != '\n';
	serial_flush_locked(vm);
	if (partial && write(2, "\n", 1) < 0) {
		/* stderr is gone */
	}
	pthread_mutex_unlock(&vm->lock);
}

enum exit_result exit_handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint32_t bytes = (uint32_t)run->io.size * run->io.count;
	uint8_t *data;

	/*
	 * data_offset comes from KVM, but a fake run from a test need not be
	 * sane: check it without a sum that can wrap, and before forming the
	 * pointer, since even computing run + a huge offset is undefined.
	 */
	if (run->io.data_offset > v->run_size ||
	    bytes > v->run_size - run->io.data_offset)
		return exit_handle_unexpected(v);
	data = (uint8_t *)run + run->io.data_offset;
	if (run->io.port == PV_HC_PORT && run->io.direction == KVM_EXIT_IO_OUT)
		return hypercall_dispatch(v);
	if (run->io.port == PV_BP_PORT && run->io.direction == KVM_EXIT_IO_OUT)
		return EXIT_RESUME;	/* step_block_exit() answered */
	if (run->io.port == PV_COM1_PORT && run->io.direction == KVM_EXIT_IO_OUT) {
		for (uint32_t i = 0; i < bytes; i += run->io.size)
			serial_out(v->vm, data[i]);
		return EXIT_RESUME;
	}
	if (run->io.direction == KVM_EXIT_IO_IN) {
		memset(data, 0xff, bytes);
		if (run->io.port == COM1_LSR)
			memset(data, LSR_THRE_TEMT, bytes);
	}
	if (v->vm->cfg->verbose)
		fprintf(stderr, "vmm: cpu %d: ignored %s port %#x size %u\n",
			v->id, run->io.direction ? "out to" : "in from",
			run->io.port, run->io.size);
	return EXIT_RESUME;
}

enum exit_result exit_handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;

	if (!run->mmio.is_write)
		memset(run->mmio.data, 0xff, sizeof(run->mmio.data));
	if (v->vm->cfg->verbose)
		fprintf(stderr, "vmm: cpu %d: ignored mmio %s %#llx\n", v->id,
			run->mmio.is_write ? "write" : "read",
			(unsigned long long)run->mmio.phys_addr);
	return EXIT_RESUME;
}

/*
 * MSRs the filter sends to user space: the PMU ranges only (every other
 * MSR is KVM's).  pmu/ models them; an index it does not model is #GP.
 */
enum exit_result exit_handle_msr(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	int r = PMU_MSR_GP;

	if (v->pmu.pv && pmu_msr_is_pmu(run->msr.index)) {
		if (run->exit_reason == KVM_EXIT_X86_RDMSR) {
			uint64_t val = 0;

			r = pmu_msr_read(v->pmu.pv, run->msr.index, &val);
			run->msr.data = val;
		} else {
			r = pmu_msr_write(v->pmu.pv, run->msr.index, run->msr.data);
		}
	}
	run->msr.error = r != PMU_MSR_OK;
	if (run->msr.error && run->exit_reason == KVM_EXIT_X86_RDMSR)
		run->msr.data = 0;
	return EXIT_RESUME;
}

enum exit_result exit_handle_shutdown(struct vcpu *v)
{
	vcpu_dump(v, "triple fault (KVM_EXIT_SHUTDOWN)");
	vm_request_stop(v->vm, VM_STOP_ERROR, VMM_EXIT_ERROR,
			"guest triple fault on cpu %d", v->id);
	return EXIT_STOP;
}

/* Single-step exits are ours only while the VMM steps CPL0 code. */
enum exit_result exit_handle_debug(struct vcpu *v)
{
	return v->pmu.kstep ? EXIT_RESUME : exit_handle_unexpected(v);
}

enum exit_result exit_handle_system_event(struct vcpu *v)
{
	vm_request_stop(v->vm, VM_STOP_ERROR, VMM_EXIT_ERROR,
			"guest system event %u on cpu %d",
			v->run->system_event.type, v->id);
	return EXIT_STOP;
}

enum exit_result exit_handle_unexpected(struct vcpu *v)
{
	char why[64];

	snprintf(why, sizeof(why), "unexpected exit reason %u",
		 v->run->exit_reason);
	vcpu_dump(v, why);
	vm_request_stop(v->vm, VM_STOP_ERROR, VMM_EXIT_ERROR,
			"%s on cpu %d", why, v->id);
	return EXIT_STOP;
}
