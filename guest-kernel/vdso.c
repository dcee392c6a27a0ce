// SPDX-License-Identifier: MIT
/*
 * The vDSO and its vvar page, mapped into every program at exec (fork
 * copies the mapping with the rest of the address space).  Both are kernel
 * pages shared by all processes, mapped borrowed (never freed), user
 * read-only: the vvar page holds what uapi/vclock.h needs, the vDSO the
 * code that reads it at CPL3 (vdso/vdso.c).
 */
#include "kernel.h"
#include "mm.h"
#include "vdso.h"

extern const u8 vdso_image[], vdso_image_end[];

static union {
	struct pv_vvar v;
	u8 page[PAGE_SIZE];
} vvar_page __attribute__((aligned(PAGE_SIZE)));

/* The kernel's clocks read the same struct as the vDSO (time.c). */
const struct pv_vvar *vvar = &vvar_page.v;

void vdso_init(const struct pv_boot_params *bp)
{
	vvar_page.v.tsc_khz = bp->tsc_khz;
	vvar_page.v.realtime_ns = bp->realtime_ns;
	vvar_page.v.realtime_tsc = bp->realtime_tsc;
	vvar_page.v.ncpus = bp->ncpus;
}

/* Map vvar (read-only) and the vDSO (read, exec); returns its address. */
u64 vdso_map(struct mm *mm)
{
	u64 len = vdso_image_end - vdso_image;
	u64 end = PV_VDSO_VA + ALIGN_UP(len, PAGE_SIZE);
	int err;

	err = mm_map_page(mm, PV_VVAR_VA, V2P(&vvar_page),
			  pte_flags(PROT_READ) | PTE_BORROWED);
	for (u64 off = 0; !err && off < len; off += PAGE_SIZE)
		err = mm_map_page(mm, PV_VDSO_VA + off, V2P(vdso_image + off),
				  pte_flags(PROT_READ | PROT_EXEC) |
				  PTE_BORROWED);
	if (!err)
		err = vma_insert(mm, PV_VVAR_VA, PV_VDSO_VA, PROT_READ, false);
	if (!err)
		err = vma_insert(mm, PV_VDSO_VA, end, PROT_READ | PROT_EXEC,
				 false);
	return err ? (u64)(s64)err : PV_VDSO_VA;
}
