/* SPDX-License-Identifier: MIT */
/*
 * User memory access.  Callers check that the range is below the top of
 * user space; a fault on an unmapped page inside these instructions is
 * turned into -EFAULT by trap_fixup() instead of a kernel panic.
 */
#include "asm_consts.h"

	.text
/* long copy_from_user(void *dst, const void *usrc, size_t n), and
 * copy_to_user(udst, src, n): 0 or -EFAULT.  From 64 bytes on the VMM
 * copies (PV_HC_MEMCPY checks the user pages itself).  Below, 8 bytes at
 * a time, then 4, then bytes: on kvm_pvm every instruction is emulated,
 * and a 16-byte timespec took 101 byte by byte.  A fault on any of the
 * labelled loads and stores is -EFAULT, whatever was copied before it. */
	.globl copy_from_user, copy_to_user
copy_from_user:
copy_to_user:
	cmp	$64, %rdx
	jae	4f
	xor	%eax, %eax
	cmp	$8, %rdx
	jb	2f
1:
copy_user_load8:
	mov	(%rsi), %rcx
copy_user_store8:
	mov	%rcx, (%rdi)
	add	$8, %rsi
	add	$8, %rdi
	sub	$8, %rdx
	cmp	$8, %rdx
	jae	1b
2:	test	$4, %dl
	je	3f
copy_user_load4:
	mov	(%rsi), %ecx
copy_user_store4:
	mov	%ecx, (%rdi)
	add	$4, %rsi
	add	$4, %rdi
	sub	$4, %rdx
3:	test	%rdx, %rdx
	je	5f
copy_user_load:
	movb	(%rsi), %cl
copy_user_store:
	movb	%cl, (%rdi)
	inc	%rsi
	inc	%rdi
	dec	%rdx
	jne	3b
5:	ret
4:	mov	%rdx, %r10
	mov	$PV_HC_MEMCPY, %eax
	mov	$PV_HC_PORT, %edx
	outb	%al, %dx
	ret
	.globl copy_user_fault
copy_user_fault:
	mov	$-EFAULT, %rax
	ret
	.globl copy_user_load, copy_user_store, copy_user_load4, copy_user_store4
	.globl copy_user_load8, copy_user_store8

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
