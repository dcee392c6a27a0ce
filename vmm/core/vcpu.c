// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <asm/kvm_para.h>

#include "boot.h"
#include "layout.h"
#include "vcpu.h"
#include "vcpu_pmu.h"

#define CPUID_FEATURES		0x1
#define CPUID_TOPOLOGY		0xb	/* extended topology */
#define CPUID_TOPOLOGY_V2	0x1f

#define CR0_PE		(1u << 0)
#define CR0_MP		(1u << 1)
#define CR0_ET		(1u << 4)
#define CR0_NE		(1u << 5)
#define CR0_WP		(1u << 16)
#define CR0_AM		(1u << 18)
#define CR0_PG		(1u << 31)
#define CR4_PAE		(1u << 5)
#define CR4_OSFXSR	(1u << 9)
#define CR4_OSXMMEXCPT	(1u << 10)
#define EFER_SCE	(1u << 0)
#define EFER_LME	(1u << 8)
#define EFER_LMA	(1u << 10)
#define EFER_NXE	(1u << 11)

struct kvm_regs *vcpu_regs(struct vcpu *v)
{
	return &v->run->s.regs.regs;
}

void vcpu_regs_mark_dirty(struct vcpu *v)
{
	v->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
}

const struct kvm_sregs *vcpu_sregs(struct vcpu *v)
{
	return &v->run->s.regs.sregs;
}

bool vcpu_in_user_code(const struct vcpu *v)
{
	/* kvm_pvm's `syscall` exits at CPL3 already at LSTAR: kernel. */
	return (v->run->s.regs.sregs.cs.selector & 3) == 3 &&
	       v->run->s.regs.regs.rip < PV_KERNEL_BASE;
}

static void seg_flat(struct kvm_segment *s, uint16_t sel, uint8_t type,
		     bool code)
{
	memset(s, 0, sizeof(*s));
	s->selector = sel;
	s->limit = 0xffffffff;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->g = 1;
	s->l = code;
	s->db = !code;
}

/* Long mode at CPL0 with the boot page tables: no real-mode trampoline. */
static int vcpu_setup_sregs(struct vcpu *v)
{
	struct kvm_sregs s;

	if (ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
		return -1;
	seg_flat(&s.cs, PV_SEL_KCODE, 11, true);
	seg_flat(&s.ds, PV_SEL_KDATA, 3, false);
	s.es = s.fs = s.gs = s.ss = s.ds;
	/* A usable TR until the kernel loads its own TSS. */
	memset(&s.tr, 0, sizeof(s.tr));
	s.tr.limit = 0x67;
	s.tr.type = 11;
	s.tr.present = 1;
	s.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_AM | CR0_PG;
	s.cr3 = PV_PML4_PHYS;
	s.cr4 = CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT;
	s.efer = EFER_SCE | EFER_LME | EFER_LMA | EFER_NXE;
	return ioctl(v->fd, KVM_SET_SREGS, &s);
}

/* KVM's supported CPUID, in a buffer with room for PMU_CPUID_SPARE more. */
static struct kvm_cpuid2 *vcpu_supported_cpuid(int kvm_fd)
{
	for (int n = 128; n <= 4096; n *= 2) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + (n + PMU_CPUID_SPARE)
					      * sizeof(c->entries[0]));

		if (!c)
			return NULL;
		c->nent = n;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
			return c;
		free(c);
		if (errno != E2BIG)
			return NULL;
	}
	return NULL;
}

static int vcpu_setup_cpuid(struct vcpu *v)
{
	struct kvm_cpuid2 *c = vcpu_supported_cpuid(v->vm->kvm_fd);
	int ret;

	if (!c)
		return -1;
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == CPUID_FEATURES) {
			/* EBX[31:24]: initial APIC ID */
			e->ebx = (e->ebx & 0x00ffffff) | ((uint32_t)v->id << 24);
		} else if (e->function == CPUID_TOPOLOGY ||
			   e->function == CPUID_TOPOLOGY_V2) {
			/* EDX: x2APIC ID */
			e->edx = v->id;
		} else if (e->function == KVM_CPUID_FEATURES) {
			v->vm->steal_time = e->eax &
					    (1u << KVM_FEATURE_STEAL_TIME);
		}
	}
	vcpu_pmu_cpuid_fixup(v->vm, c);
	ret = ioctl(v->fd, KVM_SET_CPUID2, c);
	free(c);
	return ret;
}

int vcpu_create(struct vm *vm, struct vcpu *v, int id, uint64_t entry)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	struct kvm_regs *r;

	v->vm = vm;
	v->id = id;
	v->pmu.pv = pmu_vcpu(vm->pmu, id);
	v->fd = ioctl(vm->fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0)
		return -1;
	v->run_size = vm->run_size;
	v->run = mmap(NULL, v->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      v->fd, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		return -1;
	}
	if (vcpu_setup_cpuid(v) || vcpu_setup_sregs(v) ||
	    ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0)
		return -1;

	/* Synced registers save a GET/SET_REGS pair on every hypercall. */
	v->run->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
	if (ioctl(v->fd, KVM_GET_REGS, vcpu_regs(v)) < 0)
		return -1;
	r = vcpu_regs(v);
	memset(r, 0, sizeof(*r));
	r->rip = entry;
	r->rflags = 2;
	r->rdi = PV_KERNEL_BASE + PV_BOOT_PARAMS_PHYS;
	r->rsi = id;
	return ioctl(v->fd, KVM_SET_REGS, r);
}

void vcpu_destroy(struct vcpu *v)
{
	if (v->pmu.timer_made)
		timer_delete(v->pmu.timer);
	v->pmu.timer_made = false;
	vcpu_sample_destroy(v);
	if (v->run)
		munmap(v->run, v->run_size);
	if (v->fd >= 0)
		close(v->fd);
	v->run = NULL;
	v->fd = -1;
}

void vcpu_dump(struct vcpu *v, const char *why)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 ||
	    ioctl(v->fd, KVM_GET_SREGS, &s) < 0) {
		fprintf(stderr, "vmm: cpu %d: %s (registers unavailable)\n",
			v->id, why);
		return;
	}
	serial_flush(v->vm);
	fprintf(stderr,
		"vmm: cpu %d: %s\n"
		"  rip %016llx rsp %016llx rflags %08llx cs %04x ss %04x\n"
		"  rax %016llx rbx %016llx rcx %016llx rdx %016llx\n"
		"  rsi %016llx rdi %016llx rbp %016llx r8  %016llx\n"
		"  cr0 %08llx cr2 %016llx cr3 %016llx cr4 %08llx efer %llx\n",
		v->id, why, r.rip, r.rsp, r.rflags, s.cs.selector,
		s.ss.selector, r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp,
		r.r8, s.cr0, s.cr2, s.cr3, s.cr4, s.efer);
}

enum exit_result vcpu_handle_exit(struct vcpu *v)
{
	v->exits++;
	switch (v->run->exit_reason) {
	case KVM_EXIT_IO:
		return exit_handle_io(v);
	case KVM_EXIT_MMIO:
		return exit_handle_mmio(v);
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		return exit_handle_msr(v);
	case KVM_EXIT_HLT:
	case KVM_EXIT_INTR:
		return EXIT_RESUME;
	case KVM_EXIT_SHUTDOWN:
		return exit_handle_shutdown(v);
	case KVM_EXIT_SYSTEM_EVENT:
		return exit_handle_system_event(v);
	case KVM_EXIT_DEBUG:
		return exit_handle_debug(v);
	default:
		return exit_handle_unexpected(v);
	}
}

void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct vm *vm = v->vm;

	vcpu_kick_run = v->run;
	for (;;) {
		int r, err;

		/* Clear before testing stop: a stop sets stop, then this. */
		v->run->immediate_exit = 0;
		if (atomic_load(&vm->stop) != VM_RUNNING)
			break;
		vcpu_pmu_before_run(v);
		vcpu_sample_before_run(v);
		r = ioctl(v->fd, KVM_RUN, 0);
		err = r < 0 ? errno : 0;
		/* No guest exit to account: not a stale reason. */
		if (r < 0)
			v->run->exit_reason = KVM_EXIT_INTR;
		vcpu_pmu_after_run(v);
		vcpu_sample_after_run(v);
		if (r < 0) {
			if (err == EINTR || err == EAGAIN)
				continue;
			vm_request_stop(vm, VM_STOP_ERROR, VMM_EXIT_ERROR,
					"KVM_RUN on cpu %d: %s", v->id,
					strerror(err));
			break;
		}
		if (vcpu_handle_exit(v) == EXIT_STOP)
			break;
	}
	return NULL;
}
