/* SPDX-License-Identifier: MIT */
/*
 * pread64 and pwrite64 of an in-memory file as leaf system calls, where
 * syscall_init() installs the fast path: SQLite reads and writes its
 * temporary file a page at a time (863 of each to build one index), and
 * on kvm_pvm each took ~150 emulated instructions through the full path
 * (register frame, C prologues, return_to_user()); here about 65.  The
 * copy is one PV_HC_MEMCPY, as copy_to_user() does from 64 bytes on.
 *
 * Only the plain case is taken: a descriptor open for the access, a
 * regular file of the in-memory tree (not of a --dir share), 64 bytes to
 * MAX_RW_COUNT asked for, a buffer in the user half, an offset before the
 * end (pread) or not past it with room in what the file has allocated
 * (pwrite).
 * Anything else, and a BKL held elsewhere, goes to syscall_fast with its
 * registers untouched, and fs_rw.c's prw() does it: that is the
 * reference, and what is done here must give what it gives.  Nothing
 * done here makes a signal pending or wakes a task, so skipping
 * return_to_user() loses nothing, as for getpid (docs/design.md
 * section 2a).
 *
 * In: the iret frame and its error-code slot on the stack, rax the
 * number, rdi fd, rsi buf, rdx len, r10 off, rcx the return RIP (also in
 * the frame), r11 the user's RFLAGS.  Only rax changes for the user.
 * The offsets come from C (asm_consts.c).
 */
#include "asm_offsets.h"
#include "asm_consts.h"

#define MAX_RW		0x7ffff000	/* Linux's MAX_RW_COUNT */
#define LEAF_MIN	64		/* below, copy_to_user() copies */

/*
 * The file of fd (rdi) into rax, and the count (rdx) and buffer (rsi)
 * checked: buf below 2^47 and len below 2^31 cannot wrap, so one shift
 * tests the whole buffer against the top of the user half.  rcx is
 * scratch (the frame has the return RIP).  \acc_bits: the open flags'
 * bits tested for the access, \acc_jump: when they refuse it (jnz: any
 * set, jz: none set).  Any refusal jumps to \slow.
 */
.macro	LEAF_FILE slow, acc_bits, acc_jump
	lock btsl	$0, bkl(%rip)
	jc	syscall_fast			/* it waits there */
	cmp	$VFS_FD_CHUNK_ASM, %rdi		/* the first page, always there */
	jae	\slow
	mov	%rsp, %rax
	and	$-KSTACK_SIZE_ASM, %rax
	mov	TASK_PROC(%rax), %rax
	mov	PROC_FDT(%rax), %rax
	mov	FDT_FD(%rax), %rax
	mov	(%rax, %rdi, 8), %rax
	test	%rax, %rax
	jz	\slow
	testb	$\acc_bits, FILE_FLAGS(%rax)
	\acc_jump	\slow
	mov	FILE_INO(%rax), %rax
	cmpb	$VN_REG_ASM, INODE_KIND(%rax)
	jne	\slow
	/* A --dir file's data in memory (for an mmap or execve) is a copy:
	 * its reads and writes are the host file's (hostfs.c). */
	cmpl	$0, INODE_HH(%rax)
	jne	\slow
	lea	-LEAF_MIN(%rdx), %rcx
	cmp	$(MAX_RW - LEAF_MIN), %rcx
	ja	\slow
	lea	-1(%rsi, %rdx), %rcx
	or	%rsi, %rcx
	shr	$47, %rcx
	jnz	\slow
.endm

/* Done: rax the result.  The BKL goes, rcx is the return RIP again. */
.macro	LEAF_DONE nr
	movl	$0, bkl(%rip)
	mov	8(%rsp), %rcx
	lock incq	kstat + KSTAT_SYSCALL + 8 * \nr
	jmp	syscall_leaf_return
.endm

/* Not taken: the full path, from the number on. */
.macro	LEAF_SLOW nr
	movl	$0, bkl(%rip)
	mov	8(%rsp), %rcx
	mov	$\nr, %eax
	jmp	syscall_fast
.endm

	.text
	.globl	syscall_leaf_pread
syscall_leaf_pread:
	/* Not write-only (bit 0; nor 3, which Linux gives ioctls only). */
	LEAF_FILE 2f, 1, jnz
	/* At or past the end (and a negative offset, past every end): the
	 * full path's 0 or EINVAL. */
	mov	INODE_SIZE(%rax), %rcx
	sub	%r10, %rcx
	jbe	2f
	mov	INODE_DATA(%rax), %rax
	test	%rax, %rax
	jz	2f
	cmp	%rdx, %rcx
	cmova	%rdx, %rcx			/* what is there to read */
	push	%rdi
	push	%rsi
	push	%rdx
	push	%r10
	mov	%rsi, %rdi			/* to the user's buffer */
	lea	(%rax, %r10), %rsi		/* from data + off */
	mov	%rcx, %r10
	mov	$PV_HC_MEMCPY, %eax
	mov	$PV_HC_PORT, %edx
	outb	%al, %dx
	test	%rax, %rax			/* 0, or -EFAULT */
	cmovz	%r10, %rax
	pop	%r10
	pop	%rdx
	pop	%rsi
	pop	%rdi
	LEAF_DONE 17
2:	LEAF_SLOW 17

	.globl	syscall_leaf_pwrite
syscall_leaf_pwrite:
	/* Open for writing: bit 0 or 1. */
	LEAF_FILE 2f, 3, jz
	/* Data of our own (not the initramfs's), the offset not past the
	 * end (nor negative), and the end within what is allocated:
	 * off <= size <= cap < 2^40 and len < 2^31, so off + len is exact. */
	cmpb	$0, INODE_DATA_OWNED(%rax)
	je	2f
	cmp	INODE_SIZE(%rax), %r10
	ja	2f
	lea	(%r10, %rdx), %rcx
	cmp	INODE_CAP(%rax), %rcx
	ja	2f
	push	%rdi
	push	%rsi
	push	%rdx
	push	%r10
	push	%rax
	mov	INODE_DATA(%rax), %rdi		/* to data + off */
	add	%r10, %rdi
	mov	%rdx, %r10			/* from the user's buffer */
	mov	$PV_HC_MEMCPY, %eax
	mov	$PV_HC_PORT, %edx
	outb	%al, %dx
	pop	%rcx				/* the inode */
	pop	%r10
	pop	%rdx
	pop	%rsi
	pop	%rdi
	test	%rax, %rax			/* -EFAULT: the size stays */
	jnz	1f
	lea	(%r10, %rdx), %rax		/* the file grows to the end */
	cmp	INODE_SIZE(%rcx), %rax
	jbe	3f
	mov	%rax, INODE_SIZE(%rcx)
3:	push	%rdx				/* modified now: vfs_clock() */
	rdtsc
	shl	$32, %rdx
	or	%rdx, %rax
	mov	%rax, INODE_MTIME_TSC(%rcx)
	pop	%rdx				/* a system call keeps rdx */
	mov	%rdx, %rax			/* the count written */
1:	LEAF_DONE 18
2:	LEAF_SLOW 18
	.section .note.GNU-stack, "", @progbits
