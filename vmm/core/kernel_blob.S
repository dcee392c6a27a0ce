/* The guest kernel ELF, embedded so that `vmm` is one file a user copies. */
	.section .rodata
	.balign 16
	.globl pv_kernel_blob, pv_kernel_blob_end
pv_kernel_blob:
	.incbin KERNEL_PATH
pv_kernel_blob_end:
	.section .note.GNU-stack,"",@progbits
