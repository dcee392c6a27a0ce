// SPDX-License-Identifier: MIT
/*
 * Program loading: map a static ELF from the initramfs into a fresh address
 * space and build the initial stack exactly as Linux does (argc, argv,
 * envp, auxv, then the strings and AT_RANDOM bytes above).
 */
#include "random.h"
#include "elf.h"
#include "exec.h"
#include "kernel.h"
#include "mm.h"
#include "vdso.h"
#include "vfs_glue.h"

#define AT_NULL		0
#define AT_PHDR		3
#define AT_PHENT	4
#define AT_PHNUM	5
#define AT_PAGESZ	6
#define AT_BASE		7
#define AT_FLAGS	8
#define AT_ENTRY	9
#define AT_UID		11
#define AT_EUID		12
#define AT_GID		13
#define AT_EGID		14
#define AT_PLATFORM	15
#define AT_HWCAP	16
#define AT_CLKTCK	17
#define AT_SECURE	23
#define AT_RANDOM	25
#define AT_HWCAP2	26
#define AT_EXECFN	31
#define AT_SYSINFO_EHDR	33

#define STACK_SIZE	(8ull << 20)

static int elf_validate(const u8 *img, u64 size,
			const struct elf64_ehdr **out)
{
	const struct elf64_ehdr *eh = (const void *)img;

	if (size < sizeof(*eh) || img[0] != 0x7f || img[1] != 'E' ||
	    img[2] != 'L' || img[3] != 'F' || img[4] != 2 || img[5] != 1 ||
	    eh->e_machine != 62 ||
	    (eh->e_type != ELF_ET_EXEC && eh->e_type != ELF_ET_DYN) ||
	    eh->e_phentsize != sizeof(struct elf64_phdr) || !eh->e_phnum ||
	    eh->e_phoff > size ||
	    (u64)eh->e_phnum * sizeof(struct elf64_phdr) > size - eh->e_phoff)
		return -ENOEXEC;
	*out = eh;
	return 0;
}

/*
 * A read-only segment's first or last page, mapped in place as Linux maps
 * it: with the file bytes around the segment in that page, so long as they
 * are the file's own and no zero-filled tail (p_memsz > p_filesz) must
 * show there.  Text pages so stay in the initramfs, where the step source
 * may end basic blocks with an int3 (vmm/core/step_block.c).
 */
static bool elf_page_borrowable(const u8 *img, u64 size,
				const struct elf64_phdr *ph, u64 file_pa)
{
	return ph->p_memsz == ph->p_filesz && file_pa >= V2P(img) &&
	       file_pa + PAGE_SIZE <= V2P(img) + size;
}

/*
 * Map one PT_LOAD.  Read-only pages whose file bytes are page-aligned in
 * the initramfs are mapped in place (borrowed); the rest are fresh pages
 * filled by the VMM (PV_HC_COPY runs natively).
 */
static int elf_map_segment(struct mm *mm, const u8 *img, u64 size,
			   const struct elf64_phdr *ph, u64 bias)
{
	u64 va0 = ALIGN_DOWN(ph->p_vaddr + bias, PAGE_SIZE);
	u64 vend = ALIGN_UP(ph->p_vaddr + bias + ph->p_memsz, PAGE_SIZE);
	u64 fstart = ph->p_vaddr + bias, fend = fstart + ph->p_filesz;
	u32 prot = ((ph->p_flags & ELF_PF_R) ? PROT_READ : 0) |
		   ((ph->p_flags & ELF_PF_W) ? PROT_WRITE : 0) |
		   ((ph->p_flags & ELF_PF_X) ? PROT_EXEC : 0);
	u64 flags = pte_flags(prot);
	u64 vstart = va0, *pte = NULL;

	if (ph->p_filesz > ph->p_memsz || ph->p_offset > size ||
	    ph->p_filesz > size - ph->p_offset ||
	    !user_range_ok(fstart, ph->p_memsz) || va0 < PAGE_SIZE ||
	    (ph->p_vaddr & (PAGE_SIZE - 1)) != (ph->p_offset & (PAGE_SIZE - 1)))
		return -ENOEXEC;
	for (u64 va = va0; va < vend; va += PAGE_SIZE) {
		u64 file_pa = V2P(img + ph->p_offset) + (va - fstart);
		bool whole = va >= fstart && va + PAGE_SIZE <= fend;
		bool huge = false;
		u64 pa, lo, hi;

		/* One walk per page table: python3's text is 1,700 pages. */
		if (pte && (va & (PV_HUGE_SIZE - 1)))
			pte++;
		else
			pte = mm_walk(mm, va, true, &huge);
		if (!pte || huge)
			return -ENOMEM;
		if (!(prot & PROT_WRITE) && whole && !(*pte & PTE_P) &&
		    !(file_pa & (PAGE_SIZE - 1))) {
			/* Whole pages to the page table's end: 4 a page. */
			u64 lim = ALIGN_DOWN(va, PV_HUGE_SIZE) + PV_HUGE_SIZE;

			if (lim > ALIGN_DOWN(fend, PAGE_SIZE))
				lim = ALIGN_DOWN(fend, PAGE_SIZE);
			*pte = file_pa | flags | PTE_BORROWED;
			while (va + PAGE_SIZE < lim && !(pte[1] & PTE_P)) {
				va += PAGE_SIZE;
				file_pa += PAGE_SIZE;
				*++pte = file_pa | flags | PTE_BORROWED;
			}
			continue;
		}
		if (!(prot & PROT_WRITE) && !(*pte & PTE_P) &&
		    !(file_pa & (PAGE_SIZE - 1)) &&
		    (whole || elf_page_borrowable(img, size, ph, file_pa))) {
			*pte = file_pa | flags | PTE_BORROWED;
			continue;
		}
		if (*pte & PTE_P) {
			/*
			 * Page shared with the previous segment: make it ours.
			 * Its VMA is the previous one's (VMAs are disjoint).
			 */
			if (va == va0)
				vstart = va0 + PAGE_SIZE;
			pa = *pte & PTE_ADDR;
			if (*pte & PTE_BORROWED) {
				u64 copy = page_alloc();

				if (!copy)
					return -ENOMEM;
				hcall(PV_HC_COPY, copy, pa, PAGE_SIZE);
				pa = copy;
			}
			flags |= *pte & ~(PTE_ADDR | PTE_BORROWED | PTE_NX);
			if (!(*pte & PTE_NX))
				flags &= ~PTE_NX;
		} else {
			pa = page_alloc_zero();
			if (!pa)
				return -ENOMEM;
		}
		*pte = pa | flags;
		lo = va > fstart ? va : fstart;
		hi = va + PAGE_SIZE < fend ? va + PAGE_SIZE : fend;
		if (hi > lo)
			hcall(PV_HC_COPY, pa + (lo - va),
			      V2P(img + ph->p_offset) + (lo - fstart), hi - lo);
	}
	return vstart < vend ? vma_insert(mm, vstart, vend, prot, false) : 0;
}

/*
 * PT_INTERP's path, in the pinned image: NUL-terminated within the
 * segment, as Linux insists.  NULL for a static program.
 */
static const char *elf_interp(const u8 *img, u64 size,
			      const struct elf64_ehdr *eh, int *err)
{
	const struct elf64_phdr *ph = (const void *)(img + eh->e_phoff);

	*err = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		const char *p = (const char *)img + ph[i].p_offset;
		u64 n = ph[i].p_filesz;

		if (ph[i].p_type != ELF_PT_INTERP)
			continue;
		if (n < 2 || n > 4096 || ph[i].p_offset > size ||
		    n > size - ph[i].p_offset || p[n - 1] || strlen(p) != n - 1)
			*err = -ENOEXEC;
		return *err ? NULL : p;
	}
	return NULL;
}

/*
 * Where an ET_DYN interpreter goes: the first gap of the mmap area that
 * holds its whole span, as Linux reserves the span before mapping the
 * segments into it.  0 on failure.
 */
static u64 elf_interp_base(struct mm *mm, const u8 *img,
			   const struct elf64_ehdr *eh)
{
	const struct elf64_phdr *ph = (const void *)(img + eh->e_phoff);
	u64 lo = ~0ull, hi = 0;
	s64 base;

	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != ELF_PT_LOAD)
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	lo = ALIGN_DOWN(lo, PAGE_SIZE);
	if (hi <= lo || hi - lo > (1ull << 32))
		return 0;
	base = mm_mmap_anon(mm, 0, hi - lo, 0, false);
	if (base < 0)
		return 0;
	mm_munmap(mm, base, hi - lo);
	return base - lo;
}

/* Map img at bias (ET_DYN) or where it is linked (ET_EXEC). */
static int elf_load(struct mm *mm, const u8 *img, u64 size, u64 bias,
		    struct elf_image *out)
{
	const struct elf64_ehdr *eh = (const void *)img;
	const struct elf64_phdr *ph;
	int err;

	if (eh->e_type != ELF_ET_DYN)
		bias = 0;
	ph = (const void *)(img + eh->e_phoff);
	out->phdr = 0;
	out->end = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == ELF_PT_PHDR)
			out->phdr = ph[i].p_vaddr + bias;
		if (ph[i].p_type != ELF_PT_LOAD)
			continue;
		err = elf_map_segment(mm, img, size, &ph[i], bias);
		if (err)
			return err;
		if (ph[i].p_vaddr + bias + ph[i].p_memsz > out->end)
			out->end = ph[i].p_vaddr + bias + ph[i].p_memsz;
		/* The program headers are where the file's first bytes map. */
		if (ph[i].p_offset == 0 && !out->phdr)
			out->phdr = ph[i].p_vaddr + bias + eh->e_phoff;
	}
	if (!out->end)
		return -ENOEXEC;
	out->entry = eh->e_entry + bias;
	out->phnum = eh->e_phnum;
	out->base = bias;
	return 0;
}

/*
 * PT_INTERP: the dynamic linker, looked up from the root (a --dir share
 * usually: /:/:ro) and mapped at a free place of the mmap area.  Its
 * entry is where the program starts; it finds the program by the auxv.
 * A broken interpreter is ELIBBAD, as Linux says.
 */
/* The interpreter's file-backed pages, named in /proc/PID/maps as Linux
 * names ld.so's (the program's own are the exe's: procfs.c). */
static void exec_label_image(struct mm *mm, const u8 *img,
			     const struct elf64_ehdr *eh, u64 bias,
			     const char *path)
{
	const struct elf64_phdr *ph = (const void *)(img + eh->e_phoff);
	struct inode *n = exec_interp_node(path);

	for (int i = 0; n && i < eh->e_phnum; i++) {
		u64 va = ALIGN_DOWN(ph[i].p_vaddr + bias, PAGE_SIZE);
		u64 end = ph[i].p_vaddr + bias + ph[i].p_filesz;

		if (ph[i].p_type == ELF_PT_LOAD && ph[i].p_filesz)
			mm_label_file(mm, va, end - va, n,
				      ALIGN_DOWN(ph[i].p_offset, PAGE_SIZE),
				      false);
	}
}

static int exec_interp_load(struct mm *mm, const char *path,
			    struct elf_image *out)
{
	const struct elf64_ehdr *eh;
	struct cpio_file f;
	u64 base = 0;
	int err;

	err = exec_lookup_interp(path, &f);
	if (err)
		return err;
	if (elf_validate(f.data, f.size, &eh) || elf_interp(f.data, f.size,
							    eh, &err) || err)
		return -ELIBBAD;
	if (eh->e_type == ELF_ET_DYN) {
		base = elf_interp_base(mm, f.data, eh);
		if (!base)
			return -ENOMEM;
	}
	err = elf_load(mm, f.data, f.size, base, out);
	if (!err)
		exec_label_image(mm, f.data, eh, out->base, path);
	return err == -ENOEXEC ? -ELIBBAD : err;
}

/* Push bytes onto the new stack (kernel access through the direct map). */
struct stack_builder {
	u64 top_va;			/* user VA of the stack's top */
	u8 *top_kva;			/* same byte through the kernel map */
	u64 sp;				/* current user VA */
};

static u64 stack_push(struct stack_builder *sb, const void *p, u64 n)
{
	sb->sp -= n;
	memcpy(sb->top_kva - (sb->top_va - sb->sp), p, n);
	return sb->sp;
}

/* A user frame that starts a fresh program image at res. */
void exec_frame_init(struct trapframe *tf, const struct exec_result *res)
{
	memset(tf, 0, sizeof(*tf));
	tf->rip = res->entry;
	tf->rsp = res->sp;
	tf->cs = PV_SEL_UCODE;
	tf->ss = PV_SEL_UDATA;
	tf->rflags = 0x202;
}

int exec_load(struct mm *mm, const struct cpio_file *f, int argc,
	      const char *const *argv, int envc, const char *const *envp,
	      struct exec_result *res)
{
	const struct elf64_ehdr *eh;
	struct elf_image im, interp = { 0 };
	struct stack_builder sb;
	const char *ipath;
	u64 stack_lo = PV_USER_STACK_TOP + PAGE_SIZE - STACK_SIZE;
	u64 uargv[EXEC_MAX_ARGS + 1], uenv[EXEC_MAX_ARGS + 1];
	u64 auxv[2 * 24], *a = auxv, rnd[2], execfn, platform, sp, vdso;
	bool huge;
	u64 *pde;
	int err, n;

	if (argc > EXEC_MAX_ARGS || envc > EXEC_MAX_ARGS)
		return -E2BIG;
	err = elf_validate(f->data, f->size, &eh);
	if (err)
		return err;
	ipath = elf_interp(f->data, f->size, eh, &err);
	if (!err)
		err = elf_load(mm, f->data, f->size, PV_USER_PIE_BASE, &im);
	if (!err && ipath)
		err = exec_interp_load(mm, ipath, &interp);
	if (err)
		return err;
	/* The heap starts on a 2 MiB boundary so brk grows by huge pages. */
	mm->brk_start = mm->brk = ALIGN_UP(im.end, PV_HUGE_SIZE);

	/* An 8 MiB stack of 2 MiB pages ending at the top of user space. */
	err = vma_insert(mm, stack_lo, PV_USER_TOP, PROT_READ |
			 PROT_WRITE, true);
	if (!err)
		err = mm_populate(mm, stack_lo, PV_USER_TOP,
				  PROT_READ | PROT_WRITE);
	if (err)
		return err;
	vdso = vdso_map(mm);
	if ((s64)vdso < 0)
		return (s64)vdso;
	mm_map_step_cache(mm);
	pde = mm_walk(mm, PV_USER_STACK_TOP - 1, false, &huge);
	if (!pde || !huge)
		return -ENOMEM;
	sb.top_va = PV_USER_STACK_TOP;
	sb.top_kva = (u8 *)P2V(*pde & PTE_ADDR & ~(PV_HUGE_SIZE - 1)) +
		     (PV_USER_STACK_TOP & (PV_HUGE_SIZE - 1));
	sb.sp = sb.top_va;

	execfn = stack_push(&sb, f->name, strlen(f->name) + 1);
	platform = stack_push(&sb, "x86_64", 7);
	for (n = envc - 1; n >= 0; n--)
		uenv[n] = stack_push(&sb, envp[n], strlen(envp[n]) + 1);
	for (n = argc - 1; n >= 0; n--)
		uargv[n] = stack_push(&sb, argv[n], strlen(argv[n]) + 1);
	random_bytes(rnd, sizeof(rnd));
	sb.sp &= ~15ull;
	sb.sp = stack_push(&sb, rnd, 16);

#define AUX(k, v) do { *a++ = (k); *a++ = (v); } while (0)
	AUX(AT_PHDR, im.phdr);
	AUX(AT_PHENT, sizeof(struct elf64_phdr));
	AUX(AT_PHNUM, im.phnum);
	AUX(AT_PAGESZ, PAGE_SIZE);
	AUX(AT_BASE, interp.base);
	AUX(AT_FLAGS, 0);
	AUX(AT_ENTRY, im.entry);
	AUX(AT_UID, 0);
	AUX(AT_EUID, 0);
	AUX(AT_GID, 0);
	AUX(AT_EGID, 0);
	AUX(AT_SECURE, 0);
	AUX(AT_HWCAP, exec_hwcap());
	AUX(AT_HWCAP2, 0);
	AUX(AT_CLKTCK, 100);
	AUX(AT_PLATFORM, platform);
	AUX(AT_RANDOM, sb.sp);
	AUX(AT_EXECFN, execfn);
	AUX(AT_SYSINFO_EHDR, vdso);
	AUX(AT_NULL, 0);
#undef AUX

	/* argc, argv[], NULL, envp[], NULL, auxv: rsp 16-byte aligned. */
	n = (a - auxv) + 1 + argc + 1 + envc + 1;
	sb.sp = (sb.sp - n * 8) & ~15ull;
	sp = sb.sp;
	{
		u64 *w = (u64 *)(sb.top_kva - (sb.top_va - sp));
		u64 c = argc;

		*w++ = c;
		for (n = 0; n < argc; n++)
			*w++ = uargv[n];
		*w++ = 0;
		for (n = 0; n < envc; n++)
			*w++ = uenv[n];
		*w++ = 0;
		memcpy(w, auxv, (a - auxv) * 8);
	}
	res->entry = ipath ? interp.entry : im.entry;
	res->sp = sp;
	return 0;
}
