/* SPDX-License-Identifier: MIT */
/*
 * A program with an exactly known instruction and branch count, for
 * checking the stepcount oracle (and later the guest's `step` source).
 * No libc: _start is the first user instruction, exit is the last.
 * Built with -DLOOP_K=K for two values of K.
 *
 *   instructions = 3*K + 22      branches = K + 9      exit status 7
 *
 * The comments give each line's contribution; keep them in step with
 * the numbers above (and tests/tools/meson.build) when editing.
 */
	.text
	.globl	_start
_start:
	mov	$LOOP_K, %ecx		/* 1 */
1:	add	$1, %rax		/* K */
	dec	%rcx			/* K */
	jnz	1b			/* K, K branches */

	/* rep string instructions retire once, however many iterations */
	lea	src(%rip), %rsi		/* 1 */
	lea	dst(%rip), %rdi		/* 1 */
	mov	$100, %ecx		/* 1 */
	rep movsb			/* 1 (100 iterations, 100 traps) */
	xor	%ecx, %ecx		/* 1 */
	rep stosb			/* 1 (no iterations at all) */

	/* one of each other branch class */
	call	f			/* 1 + f's ret 1, 2 branches */
	lea	2f(%rip), %rax		/* 1 */
	jmp	*%rax			/* 1, 1 branch */
2:	cmp	$0, %rax		/* 1 */
	je	3f			/* 1, 1 branch (not taken) */
3:	mov	$5, %ecx		/* 1 */
4:	loop	4b			/* 5, 5 branches */

	mov	$60, %eax		/* 1: SYS_exit */
	mov	$7, %edi		/* 1 */
	syscall				/* 1: counted though it never returns */

f:	ret

	.data
src:	.fill	100, 1, 0x5a
	.bss
dst:	.skip	100
	.section .note.GNU-stack, "", @progbits
