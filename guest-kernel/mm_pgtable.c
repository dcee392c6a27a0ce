// SPDX-License-Identifier: MIT
/*
 * User page tables (see mm.c): the walk, 4 KiB and 2 MiB mappings, a
 * 2 MiB page split into 4 KiB ones, a range unmapped with its frames
 * given back in batches, a range populated with zeroed memory, and
 * mremap's move of a range's entries.  The small helpers every walk uses
 * are inline in mm_internal.h.
 */
#include "mm_internal.h"

/* The PD entry for va (huge) or the PTE; NULL when absent and !create. */
u64 *mm_walk(struct mm *mm, u64 va, bool create, bool *huge)
{
	u64 *pml4 = P2V(mm->pml4);
	u64 *pdpt, *pd, *pt;

	*huge = false;
	pdpt = table_next(&pml4[(va >> 39) & 511], create);
	if (!pdpt)
		return NULL;
	pd = table_next(&pdpt[(va >> 30) & 511], create);
	if (!pd)
		return NULL;
	if (pd[(va >> 21) & 511] & PTE_PS) {
		*huge = true;
		return &pd[(va >> 21) & 511];
	}
	pt = table_next(&pd[(va >> 21) & 511], create);
	if (!pt)
		return NULL;
	return &pt[(va >> 12) & 511];
}

int mm_map_page(struct mm *mm, u64 va, u64 pa, u64 flags)
{
	bool huge;
	u64 *pte = mm_walk(mm, va, true, &huge);

	if (!pte || huge)
		return -ENOMEM;
	*pte = pa | flags;
	return 0;
}

int mm_map_huge(struct mm *mm, u64 va, u64 pa, u64 flags)
{
	u64 *pml4 = P2V(mm->pml4);
	u64 *pdpt, *pd;

	pdpt = table_next(&pml4[(va >> 39) & 511], true);
	pd = pdpt ? table_next(&pdpt[(va >> 30) & 511], true) : NULL;
	if (!pd)
		return -ENOMEM;
	if (pd[(va >> 21) & 511] & PTE_P) {
		/* A page table left empty by earlier munmaps can go. */
		u64 *pt = P2V(pd[(va >> 21) & 511] & PTE_ADDR);

		if (pd[(va >> 21) & 511] & PTE_PS)
			return -ENOMEM;
		for (int i = 0; i < 512; i++)
			if (pt[i])
				return -ENOMEM;
		page_free(V2P(pt));
	}
	pd[(va >> 21) & 511] = pa | flags | PTE_PS;
	return 0;
}

/*
 * Turn a 2 MiB mapping into 512 4 KiB ones, for a partial munmap or
 * mprotect.  Its pieces go back to the allocator one by one as 4 KiB
 * pages (a frame given up whole until exit made a loop of partial
 * munmaps run out of memory); only borrowed (initramfs) memory stays.
 */
int mm_split_huge(u64 *pde)
{
	u64 pt_pa = page_alloc();
	u64 frame = *pde & PTE_ADDR & ~(PV_HUGE_SIZE - 1);
	u64 flags = *pde & ~PTE_ADDR & ~PTE_PS;
	u64 *pt;

	if (!pt_pa)
		return -ENOMEM;
	/* The VMM writes the 512 entries: one exit, not ~3,600 emulated
	 * instructions (every program's brk guard page takes this path). */
	if (hcall(PV_HC_PT_FILL, pt_pa, frame | flags, 512)) {
		pt = P2V(pt_pa);
		for (int i = 0; i < 512; i++)
			pt[i] = (frame + i * PAGE_SIZE) | flags;
	}
	*pde = pt_pa | PTE_P | PTE_W | PTE_U;
	__asm__ volatile("mov %%cr3, %%rax; mov %%rax, %%cr3" : : : "rax",
			 "memory");
	return 0;
}

/*
 * Frames go back in one batch per size, and a page table dropped whole is
 * flushed with the rest of the TLB once, at the end, instead of an
 * invlpg per page (every one emulated on kvm_pvm, with KVM's shadow walk
 * behind it).
 */
void mm_unmap_range(struct mm *mm, u64 start, u64 end)
{
	struct free_batch small = { 0 }, huge = { 0 };
	bool flush_all = false;
	u64 va = start;

	mm_code_changed(mm);
	while (va < end) {
		u64 next = ALIGN_DOWN(va, PV_HUGE_SIZE) + PV_HUGE_SIZE;
		u64 *pde = mm_pde(mm, va);
		bool whole = !(va & (PV_HUGE_SIZE - 1)) && next <= end;
		u64 *pt;

		if (!pde || !*pde) {	/* PROT_NONE 2 MiB pages too */
			va = next;
			continue;
		}
		if ((*pde & PTE_PS) && whole) {
			if (!(*pde & PTE_BORROWED))
				batch_add(&huge, *pde & PTE_ADDR &
					  ~(PV_HUGE_SIZE - 1));
			*pde = 0;
			invlpg(va);
			va = next;
			continue;
		}
		if ((*pde & PTE_PS) && mm_split_huge(pde))
			panic("out of memory splitting a 2 MiB page");
		pt = P2V(*pde & PTE_ADDR);
		for (; va < end && va < next; va += PAGE_SIZE) {
			u64 *e = &pt[(va >> 12) & 511];

			if (!*e)	/* a PROT_NONE page still has its frame */
				continue;
			if (!(*e & PTE_BORROWED))
				batch_add(&small, *e & PTE_ADDR);
			*e = 0;
			if (!whole)
				invlpg(va);
		}
		/* A page table emptied as a whole goes too, so the range can
		 * take a 2 MiB page later. */
		if (whole) {
			batch_add(&small, *pde & PTE_ADDR);
			*pde = 0;
			flush_all = true;
		}
	}
	if (flush_all)
		tlb_flush_all();
	batch_free(&small, &huge);
	mm_tlb_shootdown(mm);
}

/*
 * Map zeroed memory over [start, end): a 2 MiB page for every aligned
 * 2 MiB inside it, whatever the VMA (glibc opens each thread's 8 MiB
 * stack with an mprotect: three 2 MiB pages, not 1,536 emulated page
 * allocations; a later split is one PV_HC_PT_FILL).  4 KiB pages are
 * filled a page table at a time (one walk per 2 MiB), and a writable
 * range is zeroed afterwards by one PV_HC_MEMSET through the new mappings
 * (the VMM walks them natively) instead of one hypercall per recycled
 * page: a page costs a few emulated instructions, not ~100.
 */
int mm_populate(struct mm *mm, u64 start, u64 end, u32 prot)
{
	u64 flags = pte_flags(prot);
	bool bulk = prot & PROT_WRITE;

	for (u64 va = start; va < end;) {
		u64 lim = ALIGN_DOWN(va, PV_HUGE_SIZE) + PV_HUGE_SIZE;
		bool huge;
		u64 *pte, pa, run;

		if (!(va & (PV_HUGE_SIZE - 1)) && end - va >= PV_HUGE_SIZE) {
			pa = huge_alloc_zero();
			if (pa && mm_map_huge(mm, va, pa, flags) == 0) {
				va += PV_HUGE_SIZE;
				continue;
			}
			if (pa)
				huge_free(pa);
		}
		pte = mm_walk(mm, va, true, &huge);
		if (!pte || huge)
			goto fail;
		if (lim > end)
			lim = end;
		run = va;
		for (; va < lim; va += PAGE_SIZE, pte++) {
			pa = bulk ? page_alloc() : page_alloc_zero();
			if (!pa)
				goto fail;
			*pte = pa | flags;
		}
		/* 2 MiB pages come zeroed; recycled 4 KiB ones do not. */
		if (bulk)
			hcall(PV_HC_MEMSET, run, 0, va - run);
		continue;
fail:
		mm_unmap_range(mm, start, va);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The PD entry for va with the tables above it made, free for a new
 * mapping (a page table left empty by earlier munmaps goes), or NULL:
 * out of memory, or va is mapped.
 */
static u64 *mm_pde_make(struct mm *mm, u64 va)
{
	u64 *pml4 = P2V(mm->pml4);
	u64 *pdpt = table_next(&pml4[(va >> 39) & 511], true);
	u64 *pd = pdpt ? table_next(&pdpt[(va >> 30) & 511], true) : NULL;
	u64 *pde = pd ? &pd[(va >> 21) & 511] : NULL;

	if (pde && (*pde & PTE_P)) {
		u64 *pt = P2V(*pde & PTE_ADDR);

		if (*pde & PTE_PS)
			return NULL;
		for (int i = 0; i < 512; i++)
			if (pt[i])
				return NULL;
		page_free(V2P(pt));
		*pde = 0;
	}
	return pde;
}

/*
 * Move the pages of [old, old + len) to new (a range with no mappings):
 * page-table entries change place, the memory stays (Linux moves page
 * tables too).  A 2 MiB page moves whole when both sides are aligned,
 * which is the case for big heap blocks (huge VMAs are 2 MiB aligned).
 */
int mm_move_pages(struct mm *mm, u64 old, u64 new, u64 len)
{
	bool flush_all = false;
	int err = 0;

	for (u64 off = 0; off < len;) {
		u64 *pde = mm_pde(mm, old + off);
		bool huge;
		u64 *e;

		/* A whole page table of 4 KiB pages, both sides aligned:
		 * the table moves, as Linux's move_page_tables() moves it,
		 * not its 512 entries (a 4 KiB page each: a walk, a map and
		 * an invlpg).  The TLB goes once at the end. */
		if (pde && (*pde & PTE_P) && !(*pde & PTE_PS) &&
		    !(((old + off) | (new + off)) & (PV_HUGE_SIZE - 1)) &&
		    len - off >= PV_HUGE_SIZE) {
			u64 *to = mm_pde_make(mm, new + off);

			if (!to) {
				err = -ENOMEM;
				break;
			}
			*to = *pde;
			*pde = 0;
			flush_all = true;
			off += PV_HUGE_SIZE;
			continue;
		}

		if (pde && (*pde & PTE_P) && (*pde & PTE_PS)) {
			if (!((old + off) & (PV_HUGE_SIZE - 1)) &&
			    !((new + off) & (PV_HUGE_SIZE - 1)) &&
			    len - off >= PV_HUGE_SIZE) {
				if (mm_map_huge(mm, new + off, *pde & PTE_ADDR &
						~(PV_HUGE_SIZE - 1),
						*pde & ~PTE_ADDR & ~PTE_PS)) {
					err = -ENOMEM;
					break;
				}
				*pde = 0;
				invlpg(old + off);
				off += PV_HUGE_SIZE;
				continue;
			}
			if (mm_split_huge(pde)) {
				err = -ENOMEM;
				break;
			}
		}
		e = mm_walk(mm, old + off, false, &huge);
		/* A PROT_NONE page (not present) moves with its frame too. */
		if (e && *e) {
			bool present = *e & PTE_P;

			if (mm_map_page(mm, new + off, *e & PTE_ADDR,
					*e & ~PTE_ADDR)) {
				err = -ENOMEM;
				break;
			}
			*e = 0;
			if (present)
				invlpg(old + off);
		}
		off += PAGE_SIZE;
	}
	if (flush_all)
		tlb_flush_all();
	mm_tlb_shootdown(mm);
	return err;
}
