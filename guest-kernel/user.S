/* SPDX-License-Identifier: MIT */
/*
 * User memory access.  Callers check that the range is below the top of
 * user space; a fault on an unmapped page inside these instructions is
 * turned into -EFAULT by trap_fixup() instead of a kernel panic.
 */
#define EFAULT 14

	.text
/* long copy_from_user(void *dst, const void *usrc, size_t n) */
	.globl copy_from_user, copy_to_user
copy_from_user:
copy_to_user:
	mov	%rdx, %rcx
	.globl copy_user_insn
copy_user_insn:
	rep movsb
	xor	%eax, %eax
	ret
	.globl copy_user_fault
copy_user_fault:
	mov	$-EFAULT, %rax
	ret

/* long strncpy_from_user(char *dst, const char *usrc, size_t n): length
 * without the NUL, n when no NUL was found in n bytes, or -EFAULT. */
	.globl strncpy_from_user
strncpy_from_user:
	xor	%eax, %eax
1:	cmp	%rdx, %rax
	je	2f
	.globl strncpy_load_insn
strncpy_load_insn:
	movb	(%rsi,%rax), %cl
	movb	%cl, (%rdi,%rax)
	test	%cl, %cl
	je	2f
	inc	%rax
	jmp	1b
2:	ret

	.section .note.GNU-stack, "", @progbits
