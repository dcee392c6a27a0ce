/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_TASK_H
#define KERNEL_TASK_H

#include "kernel.h"
#include "mm.h"

#define KSTACK_SIZE	16384ull
#define MAX_FDS		64

struct fdtable;

/* What the threads of one process share. */
struct proc {
	int pid;
	int refs;			/* threads */
	struct mm *mm;
	struct fdtable *fdt;		/* vfs.c */
	char cwd[256];			/* absolute, no trailing '/' but "/" */
	char comm[16];
};

/*
 * A thread.  It sits at the bottom of its own 16 KiB-aligned kernel stack,
 * so `current` is one `and` of %rsp: no per-CPU segment, no swapgs.
 */
struct task {
	struct trapframe *tf;		/* user frame at the stack top */
	struct cpu *cpu;
	struct mm *mm;
	struct proc *proc;
	int tid;
	int pid;
	u64 fs_base;
	u64 clear_child_tid;
	u64 sigmask;
	char comm[16];
};

struct tss {
	u32 rsvd0;
	u64 rsp0;
	u64 rsp1, rsp2;
	u64 rsvd1;
	u64 ist[7];
	u64 rsvd2;
	u16 rsvd3;
	u16 iomap_base;
} __attribute__((packed));

struct cpu {
	int id;
	struct task *current;
	struct tss tss;
	u64 gdt[8];
	u64 tss_desc[2];		/* GDT slots 8-9: selector 0x40 */
} __attribute__((aligned(64)));

static inline struct task *current_task(void)
{
	u64 sp;

	__asm__("mov %%rsp, %0" : "=r"(sp));
	return (struct task *)(sp & ~(KSTACK_SIZE - 1));
}

struct task *task_alloc(void);
void cpu_init(struct cpu *c, int id);
void idt_init(void);
__attribute__((noreturn)) void user_enter(struct trapframe *tf);
__attribute__((noreturn)) void task_exit_group(int status);
__attribute__((noreturn)) void task_kill_signal(int sig);

/* syscall.c */
void syscall_dispatch(struct trapframe *tf);
void syscall_i386(struct trapframe *tf);

#endif
