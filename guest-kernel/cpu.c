// SPDX-License-Identifier: MIT
/* Per-CPU descriptor tables: GDT with Linux's selectors, TSS, shared IDT. */
#include "asm_offsets.h"
#include "kernel.h"
#include "msr.h"
#include "task.h"

_Static_assert(__builtin_offsetof(struct cpu, user_rsp) == CPU_USER_RSP, "asm");
_Static_assert(__builtin_offsetof(struct cpu, tss) + 4 == CPU_TSS_RSP0, "asm");
_Static_assert(PV_SEL_UCODE == USER_CS_ASM && PV_SEL_UDATA == USER_SS_ASM,
	       "asm");
_Static_assert(PV_KERNEL_BASE + PV_BOOT_PARAMS_PHYS +
	       __builtin_offsetof(struct pv_boot_params, kstep_live) ==
	       KSTEP_LIVE_VA, "asm");

#define VEC_DF			8

struct idt_gate {
	u64 lo, hi;
};

static struct idt_gate idt[256] __attribute__((aligned(16)));
extern char trap_stubs[], kstep_stubs[];

struct desc_ptr {
	u16 limit;
	u64 base;
} __attribute__((packed));

/*
 * 256 stubs 16 bytes apart (entry.S).  int3 and `int $0x80` may be raised
 * from user mode (DPL 3; kvm_pvm turns the latter into #UD whatever the
 * DPL).  #DF switches to its own stack (IST 1).  On a standard KVM each
 * gate goes through kstep_stubs first (32 bytes apart), which set TF again
 * while the VMM steps kernel code; kvm_pvm steps without that.
 */
void idt_init(bool standard)
{
	for (int v = 0; v < 256; v++) {
		u64 off = standard ? (u64)kstep_stubs + 32 * v
				   : (u64)trap_stubs + 16 * v;
		u64 dpl = v == 3 || v == VEC_INT80 ? 3 : 0;
		u64 ist = v == VEC_DF ? 1 : 0;

		idt[v].lo = (off & 0xffff) | ((u64)PV_SEL_KCODE << 16) |
			    (ist << 32) | ((0x8eull | dpl << 5) << 40) |
			    ((off >> 16 & 0xffff) << 48);
		idt[v].hi = off >> 32;
	}
}


void cpu_init(struct cpu *c, int id)
{
	u64 base = (u64)&c->tss, limit = sizeof(c->tss) - 1;
	struct desc_ptr gdtr = { sizeof(c->gdt) + 16 - 1, (u64)c->gdt };
	struct desc_ptr idtr = { sizeof(idt) - 1, (u64)idt };
	extern char syscall_entry[], df_stacks[];

	c->id = id;
	c->tss.ist[0] = (u64)df_stacks + DF_STACK_SIZE * (id + 1);
	c->gdt[PV_SEL_KCODE / 8] = 0x00af9a000000ffffull;
	c->gdt[PV_SEL_KDATA / 8] = 0x00cf92000000ffffull;
	c->gdt[4] = 0x00cffa000000ffffull;	/* 0x23: 32-bit user code */
	c->gdt[PV_SEL_UDATA / 8] = 0x00cff2000000ffffull;
	c->gdt[PV_SEL_UCODE / 8] = 0x00affa000000ffffull;
	/* No I/O bitmap (base past the limit): user port I/O raises #GP. */
	c->tss.iomap_base = sizeof(c->tss);
	c->tss_desc[0] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
			 (0x89ull << 40) | ((limit >> 16 & 0xf) << 48) |
			 ((base >> 24 & 0xff) << 56);
	c->tss_desc[1] = base >> 32;
	__asm__ volatile("lgdt %0; lidt %1; ltr %w2"
			 : : "m"(gdtr), "m"(idtr), "r"((u16)PV_SEL_TSS)
			 : "memory");
	wrmsr(MSR_STAR, (0x23ull << 48) | ((u64)PV_SEL_KCODE << 32));
	wrmsr(MSR_LSTAR, (u64)syscall_entry);
	/* SFMASK: TF DF IF IOPL NT AC, as Linux. */
	wrmsr(MSR_SFMASK, 0x47700);
	/* The syscall entry's swapgs finds this CPU here (entry.S). */
	wrmsr(MSR_KERNEL_GS_BASE, (u64)c);
}
