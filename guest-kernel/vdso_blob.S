/*
 * The vDSO image (vdso/), page-aligned in the kernel so that processes map
 * its physical pages in place: no copy, one image for all.
 */
	.section .rodata.vdso, "a"
	.balign 4096
	.globl vdso_image, vdso_image_end
vdso_image:
	.incbin VDSO_PATH
vdso_image_end:
	.balign 4096
	.section .note.GNU-stack,"",@progbits
