/* SPDX-License-Identifier: MIT */
/*
 * Kernel entry points: boot, exception and interrupt stubs, and the system
 * call path.  Every instruction here is emulated under kvm_pvm (its cost:
 * docs/specification.md, "Kernel paths"), so the
 * system-call path is kept to a handful of instructions before the common
 * register save.
 */
#include "asm_offsets.h"
#include "asm_consts.h"

#define KSTACK_SIZE	16384
#define VEC_SYSCALL	0x100

/* struct trapframe's register block, r15 at the lowest address. */
.macro SAVE_REGS
	push	%rax
	push	%rbx
	push	%rcx
	push	%rdx
	push	%rsi
	push	%rdi
	push	%rbp
	push	%r8
	push	%r9
	push	%r10
	push	%r11
	push	%r12
	push	%r13
	push	%r14
	push	%r15
.endm

	.section .text.boot, "ax"
	.globl _start
/* From the VMM: long mode, boot page tables, rdi = boot params, rsi = cpu. */
_start:
	mov	%rsi, %rax
	inc	%rax
	shl	$14, %rax
	lea	boot_stacks(%rip), %rsp
	add	%rax, %rsp
	call	kmain
1:	cli
	hlt
	jmp	1b

	.text
/*
 * 256 stubs of 16 bytes each, so the IDT is filled arithmetically.  Vectors
 * with a CPU-pushed error code skip the dummy push.
 */
	.balign 16
	.globl trap_stubs
trap_stubs:
vec = 0
	.rept 256
	.balign 16
	.if vec == 14
	jmp	page_fault_entry
	.elseif vec == 1
	jmp	debug_entry
	.elseif vec == 3
	jmp	bp_entry
	.elseif vec == 8 || vec == 10 || vec == 11 || vec == 12 || vec == 13 || vec == 17 || vec == 21 || vec == 29 || vec == 30
	pushq	$vec
	jmp	trap_common
	.else
	pushq	$0
	pushq	$vec
	jmp	trap_common
	.endif
vec = vec + 1
	.endr

/*
 * Standard KVM only (idt_init): while the VMM single-steps kernel code
 * (boot params kstep_live), set TF again at every entry, because the CPU
 * clears it on delivery and KVM arms it only where the VMM last stopped.
 * The few instructions before TF takes effect are not counted.
 */
	.balign 32
	.globl kstep_stubs
kstep_stubs:
vec = 0
	.rept 256
	.balign 32
	testb	$1, KSTEP_LIVE_VA
	jz	trap_stubs + 16 * vec
	pushfq
	orb	$1, 1(%rsp)			/* TF */
	popfq
	jmp	trap_stubs + 16 * vec
vec = vec + 1
	.endr

/*
 * #DB.  The step source single-steps user code: every user instruction
 * ends here.  The common case (count one instruction, and one branch when
 * asked, from the per-thread classification cache) is done with three
 * scratch registers and no C; anything else (cache miss, RIP unchanged,
 * an overflow deadline reached, kernel-mode #DB) takes the C path.
 */
debug_entry:
	testb	$3, 8(%rsp)			/* saved CS: from user mode? */
	jz	9f
	push	%rax
	push	%rcx
	push	%rdx
	mov	%rsp, %rax
	and	$-KSTACK_SIZE, %rax		/* current task */
	mov	TASK_CPU(%rax), %rcx
	mov	CPU_VPAGE(%rcx), %rcx
	test	%rcx, %rcx
	jz	8f
	testb	$1, VP_STEP_ENABLE(%rcx)
	jz	8f
	mov	VP_STEP_RIP(%rcx), %rdx		/* the instruction that retired */
	cmp	24(%rsp), %rdx			/* unchanged RIP: C decides */
	je	8f
	testb	$(2 | PV_STEP_BLOCKS), VP_STEP_ENABLE(%rcx)
	jz	2f
	/* Branch? Look the retired instruction up in the cache. */
	push	%rbx
	mov	%rdx, %rbx
	and	$(STEP_ICACHE - 1), %rbx
	shl	$4, %rbx
	add	%rax, %rbx
	cmp	TASK_ICACHE(%rbx), %rdx
	jne	7f
	testb	$ICACHE_BRANCH, TASK_ICACHE+8(%rbx)
	jz	1f
	/* Counting by blocks, a branch starts the next block: the C path
	 * hands it to the VMM (kpmu_user_return()), which runs it from the
	 * code cache or to an int3, instead of stepping on to the next
	 * kernel entry. */
	testb	$PV_STEP_BLOCKS, VP_STEP_ENABLE(%rcx)
	jnz	7f
	testb	$2, VP_STEP_ENABLE(%rcx)
	jz	1f
	mov	VP_STEP_COUNT_BRANCHES(%rcx), %rdx
	inc	%rdx
	cmp	VP_STEP_DL_BRANCHES(%rcx), %rdx
	je	7f
	mov	%rdx, VP_STEP_COUNT_BRANCHES(%rcx)
1:	pop	%rbx
2:	mov	VP_STEP_COUNT_INSNS(%rcx), %rdx
	inc	%rdx
	cmp	VP_STEP_DL_INSNS(%rcx), %rdx
	je	6f
	mov	%rdx, VP_STEP_COUNT_INSNS(%rcx)
	mov	24(%rsp), %rdx
	mov	%rdx, VP_STEP_RIP(%rcx)
	incq	VP_STEP_TRAPS(%rcx)		/* the cycles leave it out */
	lock incq	kstat + 8			/* #DB, on the fast path only:
						 * the slow ones count below */
	pop	%rdx
	pop	%rcx
	pop	%rax
	iretq
	/* Slow paths.  A branch already counted here must not count twice:
	 * the C path recounts both, so undo it first. */
6:	testb	$2, VP_STEP_ENABLE(%rcx)
	jz	8f
	push	%rbx
	mov	VP_STEP_RIP(%rcx), %rdx
	mov	%rdx, %rbx
	and	$(STEP_ICACHE - 1), %rbx
	shl	$4, %rbx
	add	%rax, %rbx
	testb	$ICACHE_BRANCH, TASK_ICACHE+8(%rbx)
	jz	7f
	decq	VP_STEP_COUNT_BRANCHES(%rcx)
7:	pop	%rbx
8:	pop	%rdx
	pop	%rcx
	pop	%rax
9:	pushq	$0
	pushq	$1
	jmp	trap_common

/*
 * #BP.  The VMM looks first (PV_BP_PORT): the step source ends each basic
 * block with an int3 whose branch the VMM emulates, so the common case is
 * these six instructions and the out's exit, with rax saved where the VMM
 * reads it.  eax says what else: 1 the #BP goes on as a trap (the
 * program's own int3, or kernel mode), 2 the branch faulted: a #PF.
 */
bp_entry:
	push	%rax
	out	%al, $PV_BP_PORT_ASM
	cmp	$1, %eax
	pop	%rax
	jb	1f
	ja	3f
	pushq	$0
	pushq	$3
	jmp	trap_common
1:	iretq
3:	pushq	$PV_PF_ERR_STEP_ASM
	pushq	$14
	jmp	trap_common

/*
 * #PF.  A user `syscall` arrives here: under kvm_pvm it jumps to LSTAR
 * without leaving CPL3, and LSTAR is on a supervisor page, so the fetch
 * faults with CR2 == LSTAR and RCX/R11 holding the return RIP and RFLAGS
 * (docs/design.md sections 1 and 2a).  Anything else is a real page fault.
 */
page_fault_entry:
	/* The faulting RIP, not CR2: the fetch of LSTAR is the only #PF at
	 * that RIP (kernel code never runs it on kvm_pvm, and on standard
	 * KVM its first instruction, swapgs, touches no memory), and the
	 * frame is read without a scratch register.  3 instructions fewer. */
	cmpq	$syscall_entry, 8(%rsp)
	jne	1f
	mov	%rcx, 8(%rsp)		/* return to the instruction after syscall */
/*
 * Both entries: the iret frame and its error-code slot are on the stack,
 * the number in rax, the user's RFLAGS in r11.  Unless user code is
 * single-stepped (TF), it jumps by number through syscall_entries[]
 * (syscall_init(), which knows what this boot needs: tracing, TLB
 * shootdowns): a leaf served before any register is saved, the fast
 * dispatch below, or the C dispatcher.
 */
syscall_common:
	testl	$RFLAGS_TF_ASM, %r11d
	jnz	syscall_slow_entry
	cmp	$NR_MAX_ASM, %rax
	jae	syscall_slow_entry
	jmp	*syscall_entries(, %rax, 8)

/*
 * Leaf system calls: getpid and gettid read the caller's own immutable
 * state, so they need no BKL, no trapframe and no return_to_user().
 * Nothing pending is skipped: a signal sent to a thread running on
 * another CPU kicks that CPU with an IPI (signal.c), and a tick or wakeup
 * arrives as an interrupt once iretq sets IF again.  Counted, one `lock
 * incq` each (uapi/kstat.h), like every other entry.
 */
	.globl	syscall_leaf_getpid
syscall_leaf_getpid:
	lock incq	kstat + KSTAT_SYSCALL + 8 * 39
	mov	%rsp, %rax
	and	$-KSTACK_SIZE, %rax
	mov	TASK_PROC(%rax), %rax
	movslq	PROC_PID(%rax), %rax
	jmp	syscall_leaf_return
	.globl	syscall_leaf_gettid
syscall_leaf_gettid:
	lock incq	kstat + KSTAT_SYSCALL + 8 * 186
	mov	%rsp, %rax
	and	$-KSTACK_SIZE, %rax
	movslq	TASK_TID(%rax), %rax
	.globl	syscall_leaf_return		/* file_leaf.S too */
syscall_leaf_return:
	mov	%r11, 24(%rsp)			/* as syscall_dispatch() */
	andq	$RFLAGS_USER_ASM, 24(%rsp)
	orq	$RFLAGS_RET_ASM, 24(%rsp)
	add	$8, %rsp
	iretq

/*
 * A number with a handler, no tracing or shootdown bookkeeping on this
 * boot (syscall_slow), dispatched here with the arguments still in
 * their registers.  syscall_dispatch() in C does all of it and is the
 * reference this must match; this saves it ~35 emulated instructions at
 * every call (the C prologue, the BKL call, the argument reloads).
 */
	.globl	syscall_fast
syscall_fast:
	pushq	$VEC_SYSCALL
	SAVE_REGS
	lock incq	kstat + KSTAT_SYSCALL(, %rax, 8)
	mov	sys_table(, %rax, 8), %rax
	/* As syscall_dispatch(): the user's flags, IF on. */
	and	$RFLAGS_USER_ASM, %r11
	or	$RFLAGS_RET_ASM, %r11
	mov	%r11, TF_RFLAGS(%rsp)
	/* bkl_lock(), without its shootdown bookkeeping (syscall_slow). */
71:	lock btsl	$0, bkl(%rip)
	jc	syscall_bkl_wait
	mov	%r10, %rcx
	call	*%rax
	mov	%rax, TF_RAX(%rsp)
	jmp	user_return
	/* Named, so that `vmm stat --breakdown` tells waiting for the BKL
	 * from the rest of the entry path.  As spin_lock() (sync.h): after
	 * SPIN_YIELD pauses the host CPU goes to whoever holds it; rcx and
	 * r11 are saved in the frame already, and keep rax and rdx. */
	.globl	syscall_bkl_wait
syscall_bkl_wait:
	mov	$SPIN_YIELD, %ecx
73:	pause
	cmpl	$0, bkl(%rip)
	je	71b
	dec	%ecx
	jnz	73b
	mov	%rax, %r11
	mov	%rdx, %rcx
	mov	$PV_HC_YIELD, %eax
	mov	$PV_HC_PORT, %edx
	outb	%al, %dx
	mov	%rcx, %rdx
	mov	%r11, %rax
	jmp	syscall_bkl_wait
	.globl	syscall_slow_entry
syscall_slow_entry:
	pushq	$VEC_SYSCALL
	SAVE_REGS
	mov	%rsp, %rdi
	call	syscall_dispatch
	jmp	trap_return
1:	pushq	$14
	/* fall through */

trap_common:
	SAVE_REGS
	mov	15 * 8(%rsp), %rax		/* the vector: count the entry */
	lock incq	kstat(, %rax, 8)
	mov	%rsp, %rdi
	call	trap
	jmp	trap_return

/*
 * rsp at the user frame, BKL held: return_to_user()'s one test, inline
 * for the system-call path and for tasks resumed in task_start.  It must
 * match the C, which is called when anything is to be done; then the BKL
 * goes and the frame is popped.  6 instructions fewer than the call, and
 * it falls through into trap_return, where trap() paths jump.
 */
user_return_slow:
	mov	%rsp, %rdi
	call	return_to_user
	jmp	trap_return
user_return:
	mov	%rsp, %rdi
	and	$-KSTACK_SIZE, %rdi		/* current task */
	mov	TASK_CPU(%rdi), %rsi
	movzwl	rtu_global(%rip), %ecx
	cmp	%cx, CPU_RTU(%rsi)
	jne	user_return_slow
	mov	CPU_VPAGE(%rsi), %rsi
	cmpl	$0, VP_STEP_ENABLE(%rsi)	/* kpmu_step_on() */
	jne	user_return_slow
	mov	TASK_PROC(%rdi), %rax		/* signal_pending() */
	mov	PROC_SIGPENDING(%rax), %rax
	or	TASK_SIGPENDING(%rdi), %rax
	mov	TASK_SIGMASK(%rdi), %rdx
	not	%rdx
	test	%rdx, %rax
	jne	user_return_slow
	andq	$~RFLAGS_TF_ASM, TF_RFLAGS(%rsp)
	movl	$0, bkl(%rip)			/* bkl_unlock() */
	.globl trap_return
trap_return:
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%r11
	pop	%r10
	pop	%r9
	pop	%r8
	pop	%rbp
	pop	%rdi
	pop	%rsi
	pop	%rdx
	pop	%rcx
	pop	%rbx
	pop	%rax
	add	$16, %rsp
	.globl iret_insn
iret_insn:
	iretq

/* user_enter(tf): start a task at the user frame tf. */
	.globl user_enter
user_enter:
	mov	%rdi, %rsp
	jmp	trap_return

/* switch_stacks(u64 *save, u64 new_ksp): the kernel half of a switch. */
	.globl switch_stacks
switch_stacks:
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	%rsp, (%rdi)
	mov	%rsi, %rsp
/* rsp at a task's saved switch frame: resume that task. */
switch_stacks_load:
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	ret

/*
 * switch_from_user_frame(u64 *save, struct trapframe *tf, u64 new_ksp):
 * the task leaves with nothing on its kernel stack but its user frame tf
 * (sched_yield_fast), so its saved rsp is a switch_stacks frame just below
 * tf whose return address is task_start; the six registers it pops there
 * are the kernel's, and no one needs them.
 */
	.globl switch_from_user_frame
switch_from_user_frame:
	movq	$task_start, -8(%rsi)
	lea	-56(%rsi), %rax
	mov	%rax, (%rdi)
	/* next left at its user frame too: skip the six pops. */
	cmpq	$task_start, 48(%rdx)
	jne	1f
	lea	56(%rdx), %rsp
	jmp	task_start
1:	mov	%rdx, %rsp
	jmp	switch_stacks_load

/* First kernel code of a new task, or of one that yielded at its user
 * frame: its stack top is that frame.  A task dead meanwhile is freed
 * here, as after switch_stacks in sched_switch(). */
	.globl task_start
task_start:
	cmpq	$0, dead_list(%rip)
	je	user_return
	call	task_reap_dead
	jmp	user_return

/*
 * LSTAR, alone on a supervisor-only page.  Two ways in, one dispatcher:
 * - kvm_pvm: `syscall` stays at CPL3 and the fetch here faults; the #PF
 *   stub above builds the frame (docs/design.md section 2a).
 * - standard KVM (VMX, SVM): we run here at CPL0 on the user's stack with
 *   IF, TF, DF and AC cleared by SFMASK.  swapgs finds this CPU's struct
 *   cpu (MSR_KERNEL_GS_BASE), whose TSS.rsp0 is the current task's kernel
 *   stack; the frame is the one an interrupt from user mode would push,
 *   and the return is the common iretq, which faults at CPL3 (a user
 *   SIGSEGV) on a non-canonical RCX where sysret would fault at CPL0.
 *   GS is swapped back at once: no other kernel code uses it.
 */
	.section .text.lstar, "ax"
	.balign 4096
	.globl syscall_entry
syscall_entry:
	swapgs
	mov	%rsp, %gs:CPU_USER_RSP
	mov	%gs:CPU_TSS_RSP0, %rsp
	pushq	$USER_SS_ASM
	pushq	%gs:CPU_USER_RSP
	swapgs
	testb	$1, KSTEP_LIVE_VA		/* as kstep_stubs */
	jz	1f
	pushfq
	orb	$1, 1(%rsp)
	popfq
1:	pushq	%r11				/* RFLAGS */
	pushq	$USER_CS_ASM
	pushq	%rcx				/* RIP after the syscall */
	pushq	$0				/* error code slot */
	jmp	syscall_common
	.balign 4096

	.bss
	.balign KSTACK_SIZE
	.globl boot_stacks
boot_stacks:
	.skip	KSTACK_SIZE * 64

/* #DF runs on its own stack (IST 1), one per CPU: a fault on a broken
 * stack must reach panic, not a triple fault. */
	.balign 4096
	.globl df_stacks
df_stacks:
	.skip	DF_STACK_SIZE * 64

/* Where a CPL0 fault on a non-kernel stack panics (trap.c). */
	.balign 16
	.globl emergency_stack_top
	.skip	8192
emergency_stack_top:

	.section .note.GNU-stack, "", @progbits
