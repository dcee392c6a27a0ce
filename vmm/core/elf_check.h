/* SPDX-License-Identifier: MIT */
#ifndef VMM_ELF_CHECK_H
#define VMM_ELF_CHECK_H

#include <stddef.h>
#include <stdint.h>

/*
 * Validation of ELF images with libelf before anything is loaded: a bad file
 * is a one-line message in err, never a crash.  Both return 0 on success.
 */
int elf_check_program(const void *buf, size_t len, char *err, size_t errlen);
/*
 * A checked program's PT_INTERP path into out: 1, or 0 for a static
 * program, -1 when it does not fit.
 */
int elf_program_interp(const void *buf, size_t len, char *out, size_t outlen);

#define ELF_KERNEL_RO_MAX	4

struct elf_kernel_info {
	uint64_t entry;			/* virtual entry point */
	uint64_t phys_end;		/* end of the highest loaded byte */
	/* Physical spans of the read-only segments (text, rodata): code
	 * that never changes, the vDSO's included. */
	uint64_t ro_phys[ELF_KERNEL_RO_MAX], ro_len[ELF_KERNEL_RO_MAX];
	int nro;
};

int elf_load_kernel(const void *buf, size_t len, uint8_t *mem,
		    uint64_t mem_size, struct elf_kernel_info *info,
		    char *err, size_t errlen);

#endif
