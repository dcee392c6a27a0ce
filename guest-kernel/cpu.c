// SPDX-License-Identifier: MIT
/* Per-CPU descriptor tables: GDT with Linux's selectors, TSS, shared IDT. */
#include "kernel.h"
#include "task.h"

struct idt_gate {
	u64 lo, hi;
};

static struct idt_gate idt[256] __attribute__((aligned(16)));
extern char trap_stubs[];

struct desc_ptr {
	u16 limit;
	u64 base;
} __attribute__((packed));

/* 256 stubs 16 bytes apart (entry.S); int3 may be raised from user mode. */
void idt_init(void)
{
	for (int v = 0; v < 256; v++) {
		u64 off = (u64)trap_stubs + 16 * v;
		u64 dpl = v == 3 ? 3 : 0;

		idt[v].lo = (off & 0xffff) | ((u64)PV_SEL_KCODE << 16) |
			    ((0x8eull | dpl << 5) << 40) |
			    ((off >> 16 & 0xffff) << 48);
		idt[v].hi = off >> 32;
	}
}


void cpu_init(struct cpu *c, int id)
{
	u64 base = (u64)&c->tss, limit = sizeof(c->tss) - 1;
	struct desc_ptr gdtr = { sizeof(c->gdt) + 16 - 1, (u64)c->gdt };
	struct desc_ptr idtr = { sizeof(idt) - 1, (u64)idt };
	extern char syscall_entry[];

	c->id = id;
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
	wrmsr(0xc0000081, (0x23ull << 48) | ((u64)PV_SEL_KCODE << 32));
	wrmsr(0xc0000082, (u64)syscall_entry);
	/* SFMASK: TF DF IF IOPL NT AC, as Linux. */
	wrmsr(0xc0000084, 0x47700);
}
