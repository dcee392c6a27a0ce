/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_ELF_H
#define KERNEL_ELF_H

#include <stdint.h>

/* The few ELF64 definitions the loader needs (no libc headers here). */
#define ELF_PT_LOAD	1
#define ELF_PT_INTERP	3
#define ELF_PT_PHDR	6
#define ELF_ET_EXEC	2
#define ELF_ET_DYN	3
#define ELF_PF_X	1
#define ELF_PF_W	2
#define ELF_PF_R	4

struct elf64_ehdr {
	uint8_t e_ident[16];
	uint16_t e_type, e_machine;
	uint32_t e_version;
	uint64_t e_entry, e_phoff, e_shoff;
	uint32_t e_flags;
	uint16_t e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum,
		 e_shstrndx;
};

struct elf64_phdr {
	uint32_t p_type, p_flags;
	uint64_t p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
};

/* What exec needs from a loaded image. */
struct elf_image {
	uint64_t entry;
	uint64_t phdr;			/* user address of the program headers */
	uint64_t phnum;
	uint64_t base;			/* load bias (0 for ET_EXEC) */
	uint64_t end;			/* highest mapped address: brk start */
};

#endif
