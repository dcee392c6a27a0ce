// SPDX-License-Identifier: MIT
/*
 * A thread's FPU and vector registers across switches.
 *
 * Standard KVM: FXSAVE/FXRSTOR of the 512-byte legacy area in struct task.
 * CR4.OSXSAVE is clear, so CPUID (which traps) shows no AVX and user code
 * keeps to SSE, all of which that area holds.
 *
 * kvm_pvm: user code runs CPUID and XGETBV natively, sees the host's
 * AVX/AVX-512 and uses them (glibc's memcpy does).  FXSAVE, the only save
 * instruction KVM's emulator runs at CPL0, misses the upper halves of the
 * vector registers: two threads on one vCPU then shared them, and one
 * thread's memcpy wrote 64 bytes of the other's data.  So the whole XSAVE
 * state goes through the VMM (PV_HC_FPU_SWITCH, boot flag PV_BOOT_XSTATE)
 * into a page per thread.  An exit costs ~25 us here, so registers stay
 * loaded while the CPU idles: a thread that sleeps and wakes on the same
 * CPU takes no exit, and with one vCPU nothing is saved until another
 * thread needs the registers.  With more, a thread going idle is saved at
 * once, since it may wake on another CPU.
 */
#include "fpu.h"
#include "hypercall.h"
#include "kernel.h"
#include "task.h"

static bool fpu_vmm;
static bool fpu_smp;

static inline void fxsave(u8 *area)
{
	__asm__ volatile("fxsaveq %0" : "=m"(*(u8 (*)[512])area));
}

static inline void fxrstor(const u8 *area)
{
	__asm__ volatile("fxrstorq %0" : : "m"(*(const u8 (*)[512])area));
}

void fpu_init(const struct pv_boot_params *bp)
{
	u64 pa;

	if (!(bp->flags & PV_BOOT_XSTATE))
		return;
	pa = page_alloc();
	if (!pa)
		panic("out of memory at boot");
	/* A KVM without KVM_GET_XSAVE: fall back to FXSAVE, and say so. */
	fpu_vmm = hcall(PV_HC_FPU_SWITCH, pa, 0, 0) == 0;
	fpu_smp = bp->ncpus > 1;
	page_free(pa);
	if (!fpu_vmm)
		kprintf("fpu: the VMM cannot save XSAVE state; FXSAVE only\n");
}

int fpu_task_init(struct task *t)
{
	if (!fpu_vmm)
		return 0;
	t->xstate_pa = page_alloc();
	return t->xstate_pa ? 0 : -ENOMEM;
}

void fpu_task_free(struct task *t)
{
	/* Its struct is reused: no CPU may take it for loaded. */
	for (int i = 0; i < PV_MAX_CPUS; i++)
		if (cpus[i].fpu_owner == t)
			cpus[i].fpu_owner = NULL;
	if (t->xstate_pa)
		page_free(t->xstate_pa);
	t->xstate_pa = 0;
}

void fpu_legacy_save(struct task *t)
{
	fxsave(t->fxsave);
}

void fpu_legacy_load(const struct task *t)
{
	fxrstor(t->fxsave);
}

void fpu_save_live(struct task *t)
{
	if (t->xstate_pa)
		hcall(PV_HC_FPU_SWITCH, t->xstate_pa, 0, 0);
	else
		fxsave(t->fxsave);
}

void fpu_reset(struct task *t)
{
	memset(t->fxsave, 0, 512);
	*(u16 *)t->fxsave = 0x37f;		/* FCW: the x87 default */
	*(u32 *)(t->fxsave + 24) = 0x1f80;	/* MXCSR: exceptions masked */
	fxrstor(t->fxsave);
	if (t->xstate_pa)
		fpu_save_live(t);
}

/* Through the VMM. */
static void fpu_switch_vmm(struct task *prev, struct task *next,
			   struct cpu *c)
{
	struct task *o = c->fpu_owner;
	u64 out = 0;

	if (likely(prev->mm && next->mm && fpu_loaded(prev, c))) {
		fpu_handover(prev, next, c);
		return;
	}
	if (prev->mm)
		prev->fpu_dirty = true;
	if (!next->mm) {
		if (fpu_smp && prev->mm) {
			hcall(PV_HC_FPU_SWITCH, prev->xstate_pa, 0, 0);
			prev->fpu_dirty = false;
		}
		return;
	}
	if (o == next && next->fpu_cpu == c)
		return;			/* still loaded: no exit */
	if (o && o->fpu_cpu == c) {
		if (o->fpu_dirty)
			out = o->xstate_pa;
		o->fpu_dirty = false;
		o->fpu_cpu = NULL;
	}
	hcall(PV_HC_FPU_SWITCH, out, next->xstate_pa, 0);
	c->fpu_owner = next;
	next->fpu_cpu = c;
}

void fpu_switch(struct task *prev, struct task *next, struct cpu *c)
{
	if (fpu_vmm) {
		fpu_switch_vmm(prev, next, c);
		return;
	}
	if (prev->mm)
		fxsave(prev->fxsave);
	if (next->mm)
		fxrstor(next->fxsave);
}
