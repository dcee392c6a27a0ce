// SPDX-License-Identifier: MIT
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "elf_check.h"
#include "layout.h"

static int elf_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Open buf as a 64-bit x86-64 ELF of one of the accepted types. */
static Elf *elf_open_checked(const void *buf, size_t len, GElf_Ehdr *eh,
			     char *err, size_t errlen)
{
	const unsigned char *b = buf;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		elf_fail(err, errlen, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	if (len < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG) != 0) {
		elf_fail(err, errlen, "not an ELF file");
		return NULL;
	}
	if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB) {
		elf_fail(err, errlen, "not a 64-bit little-endian ELF file");
		return NULL;
	}
	e = elf_memory((char *)buf, len);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, eh)) {
		elf_fail(err, errlen, "malformed ELF header: %s",
			 elf_errmsg(-1));
		if (e)
			elf_end(e);
		return NULL;
	}
	if (eh->e_machine != EM_X86_64) {
		elf_fail(err, errlen, "not an x86-64 ELF file (e_machine %u)",
			 eh->e_machine);
		elf_end(e);
		return NULL;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    eh->e_phoff > len ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len - eh->e_phoff) {
		elf_fail(err, errlen, "malformed ELF program header table");
		elf_end(e);
		return NULL;
	}
	return e;
}

/* Common checks on one PT_LOAD: inside the file, sizes sane, no wrap. */
static int elf_check_load(const GElf_Phdr *ph, size_t len, int i,
			  char *err, size_t errlen)
{
	if (ph->p_filesz > ph->p_memsz)
		return elf_fail(err, errlen,
				"segment %d: file size exceeds memory size", i);
	if (ph->p_offset > len || ph->p_filesz > len - ph->p_offset)
		return elf_fail(err, errlen,
				"segment %d extends past the end of the file", i);
	if (ph->p_vaddr + ph->p_memsz < ph->p_vaddr)
		return elf_fail(err, errlen, "segment %d wraps around", i);
	if (ph->p_align > 1 && (ph->p_align & (ph->p_align - 1)))
		return elf_fail(err, errlen,
				"segment %d: alignment is not a power of two", i);
	if (ph->p_align > 1 &&
	    (ph->p_vaddr - ph->p_offset) % ph->p_align != 0)
		return elf_fail(err, errlen,
				"segment %d: address and offset disagree", i);
	return 0;
}

/*
 * PT_INTERP's path as the guest kernel takes it: absolute, NUL-terminated
 * at the segment's end, no NUL before.  Copied to out when it fits.
 */
static int elf_interp_path(const void *buf, size_t len, const GElf_Phdr *ph,
			   char *out, size_t outlen)
{
	const char *p = (const char *)buf + ph->p_offset;

	if (ph->p_offset > len || ph->p_filesz > len - ph->p_offset ||
	    ph->p_filesz < 2 || ph->p_filesz > 4096 || p[0] != '/' ||
	    strnlen(p, ph->p_filesz) != ph->p_filesz - 1)
		return -1;
	if (out && outlen >= ph->p_filesz)
		memcpy(out, p, ph->p_filesz);
	else if (out)
		return -1;
	return 0;
}

int elf_program_interp(const void *buf, size_t len, char *out, size_t outlen)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	char err[128];
	int ret = 0;
	Elf *e;

	e = elf_open_checked(buf, len, &eh, err, sizeof(err));
	if (!e)
		return -1;
	for (int i = 0; i < eh.e_phnum && !ret; i++)
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_INTERP)
			ret = elf_interp_path(buf, len, &ph, out, outlen) ? -1
									 : 1;
	elf_end(e);
	return ret;
}

int elf_check_program(const void *buf, size_t len, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	bool entry_ok = false;
	int nload = 0;
	Elf *e;
	int ret = -1;

	e = elf_open_checked(buf, len, &eh, err, errlen);
	if (!e)
		return -1;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		elf_fail(err, errlen, "not an executable (e_type %u)",
			 eh.e_type);
		goto out;
	}
	for (int i = 0; i < eh.e_phnum; i++) {
		uint64_t lo;

		if (!gelf_getphdr(e, i, &ph)) {
			elf_fail(err, errlen, "bad program header %d", i);
			goto out;
		}
		if (ph.p_type == PT_INTERP &&
		    elf_interp_path(buf, len, &ph, NULL, 0) < 0) {
			elf_fail(err, errlen, "malformed interpreter path "
				 "(PT_INTERP)");
			goto out;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		if (elf_check_load(&ph, len, i, err, errlen))
			goto out;
		lo = ph.p_vaddr;
		if (eh.e_type == ET_DYN)
			lo += PV_USER_PIE_BASE;
		if (lo + ph.p_memsz > PV_USER_MMAP_BASE || lo < PV_PAGE_SIZE) {
			elf_fail(err, errlen, "segment %d lies outside the "
				 "user address space", i);
			goto out;
		}
		if ((ph.p_flags & PF_X) && eh.e_entry >= ph.p_vaddr &&
		    eh.e_entry < ph.p_vaddr + ph.p_memsz)
			entry_ok = true;
		nload++;
	}
	if (!nload) {
		elf_fail(err, errlen, "no loadable segments");
		goto out;
	}
	if (!entry_ok) {
		elf_fail(err, errlen, "entry point is not in an executable "
			 "segment");
		goto out;
	}
	ret = 0;
out:
	elf_end(e);
	return ret;
}

int elf_load_kernel(const void *buf, size_t len, uint8_t *mem,
		    uint64_t mem_size, struct elf_kernel_info *info,
		    char *err, size_t errlen)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	bool entry_ok = false;
	Elf *e;
	int ret = -1;

	memset(info, 0, sizeof(*info));
	e = elf_open_checked(buf, len, &eh, err, errlen);
	if (!e)
		return -1;
	if (eh.e_type != ET_EXEC) {
		elf_fail(err, errlen, "kernel is not a static executable");
		goto out;
	}
	for (int i = 0; i < eh.e_phnum; i++) {
		uint64_t pa;

		if (!gelf_getphdr(e, i, &ph)) {
			elf_fail(err, errlen, "bad program header %d", i);
			goto out;
		}
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (elf_check_load(&ph, len, i, err, errlen))
			goto out;
		/* Kernel segments are linked in the KERNEL_BASE window. */
		if (ph.p_vaddr < PV_KERNEL_BASE + PV_KERNEL_PHYS) {
			elf_fail(err, errlen, "kernel segment %d is not linked "
				 "at or above %#llx", i,
				 PV_KERNEL_BASE + PV_KERNEL_PHYS);
			goto out;
		}
		pa = ph.p_vaddr - PV_KERNEL_BASE;
		if (pa > mem_size || ph.p_memsz > mem_size - pa) {
			elf_fail(err, errlen, "kernel segment %d does not fit "
				 "in guest memory", i);
			goto out;
		}
		memcpy(mem + pa, (const uint8_t *)buf + ph.p_offset,
		       ph.p_filesz);
		memset(mem + pa + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
		if (pa + ph.p_memsz > info->phys_end)
			info->phys_end = pa + ph.p_memsz;
		if (!(ph.p_flags & PF_W) && info->nro < ELF_KERNEL_RO_MAX) {
			info->ro_phys[info->nro] = pa;
			info->ro_len[info->nro++] = ph.p_memsz;
		}
		if ((ph.p_flags & PF_X) && eh.e_entry >= ph.p_vaddr &&
		    eh.e_entry < ph.p_vaddr + ph.p_memsz)
			entry_ok = true;
	}
	if (!entry_ok) {
		elf_fail(err, errlen, "kernel entry point is not in an "
			 "executable segment");
		goto out;
	}
	info->entry = eh.e_entry;
	ret = 0;
out:
	elf_end(e);
	return ret;
}
