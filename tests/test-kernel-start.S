/* SPDX-License-Identifier: MIT */
/*
 * Entry of the small test kernels (evil-kernel, pmu-selftest), booted with
 * `vmm run --kernel`: the VMM enters every vCPU here in long mode with
 * rdi = boot parameters and rsi = cpu id.  cpu 0 runs kmain() on its own
 * stack; the others halt.
 */
	.section .text.boot, "ax"
	.globl _start
_start:
	test	%rsi, %rsi
	jnz	1f
	lea	test_kernel_stack+16384(%rip), %rsp
	call	kmain
1:	cli
	hlt
	jmp	1b

	.bss
	.balign	16
test_kernel_stack:
	.skip	16384

	.section .note.GNU-stack, "", @progbits
