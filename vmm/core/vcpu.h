/* SPDX-License-Identifier: MIT */
#ifndef VMM_VCPU_H
#define VMM_VCPU_H

#include <linux/kvm.h>

#include "vm.h"

/* What an exit handler tells the run loop. */
enum exit_result {
	EXIT_RESUME = 0,	/* re-enter the guest */
	EXIT_STOP = 1,		/* the VM is stopping; leave the loop */
};

int vcpu_create(struct vm *vm, struct vcpu *v, int id, uint64_t entry);
void vcpu_destroy(struct vcpu *v);
void *vcpu_thread(void *arg);
enum exit_result vcpu_handle_exit(struct vcpu *v);

/* Registers through kvm_run's synced copies (KVM_CAP_SYNC_REGS). */
struct kvm_regs *vcpu_regs(struct vcpu *v);
void vcpu_regs_mark_dirty(struct vcpu *v);
const struct kvm_sregs *vcpu_sregs(struct vcpu *v);
/* At this exit the guest stands in user code (CPL3, below the kernel). */
bool vcpu_in_user_code(const struct vcpu *v);
void vcpu_dump(struct vcpu *v, const char *why);

/* Exit handlers: free functions the unit tests call with a fake kvm_run. */
enum exit_result exit_handle_io(struct vcpu *v);
enum exit_result exit_handle_mmio(struct vcpu *v);
enum exit_result exit_handle_msr(struct vcpu *v);
enum exit_result exit_handle_shutdown(struct vcpu *v);
enum exit_result exit_handle_debug(struct vcpu *v);
enum exit_result exit_handle_unexpected(struct vcpu *v);
enum exit_result exit_handle_system_event(struct vcpu *v);

/* vm.c: the current thread's vCPU, for the kick signal handler. */
extern __thread struct kvm_run *vcpu_kick_run;

/* exit.c */
void serial_flush(struct vm *vm);

/* hypercall.c */
enum exit_result hypercall_dispatch(struct vcpu *v);
/* PV_HC_* number to its name ("fpu-switch"), NULL if none: for tools. */
const char *hypercall_name(unsigned int nr);

#endif
