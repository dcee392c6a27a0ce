/* SPDX-License-Identifier: MIT */
/*
 * Two threads with exactly known per-thread counts, no libc, for checking
 * stepcount --per-thread.  Built with -DKP=... (main thread loop) and
 * -DKC=... (second thread loop).
 *
 *   thread 0: instructions = 2*KP + 13, branches = KP + 1
 *   thread 1: instructions = 2*KC + 6,  branches = KC + 1
 *
 * The clone syscall retires in the parent only; the child starts at the
 * instruction after it.  Both threads leave with SYS_exit (not
 * exit_group), so neither cuts the other short.
 */
#define CLONE_FLAGS 0x50f00	/* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM */

	.text
	.globl	_start
_start:
	mov	$KP, %ecx		/* 1 */
1:	dec	%rcx			/* KP */
	jnz	1b			/* KP, KP branches */
	mov	$56, %eax		/* 1: SYS_clone */
	mov	$CLONE_FLAGS, %edi	/* 1 */
	lea	stack_top(%rip), %rsi	/* 1 */
	xor	%edx, %edx		/* 1 */
	xor	%r10d, %r10d		/* 1 */
	xor	%r8d, %r8d		/* 1 */
	syscall				/* 1 (parent only) */
	test	%rax, %rax		/* both: 1 */
	jz	child			/* both: 1, 1 branch */
	mov	$60, %eax		/* 1: SYS_exit, this thread only */
	xor	%edi, %edi		/* 1 */
	syscall				/* 1 */

child:
	mov	$KC, %ecx		/* 1 */
2:	dec	%rcx			/* KC */
	jnz	2b			/* KC, KC branches */
	mov	$60, %eax		/* 1 */
	xor	%edi, %edi		/* 1 */
	syscall				/* 1 */

	.bss
	.balign	16
stack:	.skip	4096
stack_top:
	.section .note.GNU-stack, "", @progbits
