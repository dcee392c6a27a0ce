// SPDX-License-Identifier: MIT
/*
 * mprotect and madvise of user address spaces (see mm.c): protection
 * changed a page table at a time (borrowed pages copied when made
 * writable), and MADV_DONTNEED's discard zeroed in place by the VMM.
 */
#include "mm_internal.h"

/*
 * A page keeps its frame (and contents) across PROT_NONE.  A PTE whose
 * accessed bit is clear is in no TLB (the CPU, and KVM's shadow MMU, set
 * it before caching a translation): no invlpg for it.  ld.so's mmap of a
 * library span, filled through the VMM and then made read-only, was 512
 * emulated invlpgs per 2 MiB.
 */
static void mm_protect_pte(u64 *e, u32 prot, u64 va)
{
	bool was_present = (*e & (PTE_P | PTE_A)) == (PTE_P | PTE_A);

	*e = (*e & PTE_ADDR) | (*e & (PTE_BORROWED | PTE_SHMEM | PTE_PS | PTE_D)) |
	     pte_flags(prot);
	if (!prot)
		*e &= ~(PTE_P | PTE_U);
	if (was_present)
		invlpg(va);
}

s64 mm_mprotect(struct mm *mm, u64 addr, u64 len, u32 prot)
{
	u64 end = ALIGN_UP(addr + len, PAGE_SIZE);

	mm_cache_drop(mm);
	if ((addr & (PAGE_SIZE - 1)) || !user_range_ok(addr, len))
		return -EINVAL;
	/* Room to split the VMAs at both ends (vma_protect), checked before
	 * any page changes. */
	if (mm->nvma + 2 > mm->vma_max && vma_array_grow(mm))
		return -ENOMEM;
	/* A page table (2 MiB) of one VMA at a time: glibc opening an 8 MiB
	 * thread stack reserved PROT_NONE is four bulk populates, not 2048
	 * page-at-a-time mappings. */
	for (u64 va = addr; va < end;) {
		struct vma *v = vma_find(mm, va);
		u64 lim = ALIGN_DOWN(va, PV_HUGE_SIZE) + PV_HUGE_SIZE;
		bool huge;
		u64 *e;

		if (!v)
			return -ENOMEM;
		lim = lim < v->end ? lim : v->end;
		lim = lim < end ? lim : end;
		e = mm_walk(mm, va, false, &huge);
		if (e && huge && ((va & (PV_HUGE_SIZE - 1)) ||
				  lim - va < PV_HUGE_SIZE)) {
			if (mm_split_huge(e))
				return -ENOMEM;
			e = mm_walk(mm, va, false, &huge);
		}
		if (e && huge) {
			mm_protect_pte(e, prot, va);
			va = lim;
			continue;
		}
		/* Nothing mapped here yet: open it in one bulk populate. */
		if (!e) {
			if (prot && mm_populate(mm, va, lim, prot))
				return -ENOMEM;
			va = lim;
			continue;
		}
		for (; va < lim; va += PAGE_SIZE, e++) {
			u64 pa;

			if ((*e & (PTE_BORROWED | PTE_SHMEM)) == PTE_BORROWED &&
			    (prot & PROT_WRITE)) {
				/* A file's or the initramfs's page: ours now. */
				pa = page_alloc();
				if (!pa)
					return -ENOMEM;
				hcall(PV_HC_COPY, pa, *e & PTE_ADDR, PAGE_SIZE);
				*e = pa | (*e & ~PTE_ADDR & ~PTE_BORROWED);
			}
			if (*e & PTE_ADDR) {
				mm_protect_pte(e, prot, va);
			} else if (prot) {
				pa = page_alloc_zero();
				if (!pa)
					return -ENOMEM;
				*e = pa | pte_flags(prot);
			}
		}
	}
	mm_tlb_shootdown(mm);
	return vma_protect(mm, addr, end, prot);
}

/* Zero the guest-physical run [*pa, *pa + *len) in one exit, and empty it. */
static void zero_run(u64 *pa, u64 *len)
{
	if (*len)
		hcall(PV_HC_ZERO, *pa, *len, 0);
	*len = 0;
}

/*
 * MADV_DONTNEED (and MADV_FREE, which Linux may treat alike): private
 * anonymous memory reads as zero afterwards.  glibc counts on it: a
 * thread's arena that shrank and grows again gives calloc() memory it
 * takes for zeroed.  The memory is zeroed in place by the VMM, one exit
 * per physically contiguous run; pages of the initramfs (borrowed) are
 * left as they are.
 */
static s64 mm_discard(struct mm *mm, u64 start, u64 end)
{
	u64 run_pa = 0, run_len = 0;

	for (u64 va = start; va < end;) {
		struct vma *v = vma_find(mm, va);
		bool heap = va >= mm->brk_start &&
			    va < ALIGN_UP(mm->brk, PV_HUGE_SIZE);
		u64 lim = ALIGN_DOWN(va, PV_HUGE_SIZE) + PV_HUGE_SIZE;
		bool huge;
		u64 *e;

		if (!v && !heap) {
			zero_run(&run_pa, &run_len);
			return -ENOMEM;
		}
		lim = v && v->end < lim ? v->end : lim;
		lim = lim < end ? lim : end;
		e = mm_walk(mm, va, false, &huge);
		if (e && huge && (*e & PTE_ADDR)) {
			zero_run(&run_pa, &run_len);
			hcall(PV_HC_ZERO, (*e & PTE_ADDR & ~(PV_HUGE_SIZE - 1)) +
			      (va & (PV_HUGE_SIZE - 1)), lim - va, 0);
		}
		if (!e || huge) {
			va = lim;
			continue;
		}
		for (; va < lim; va += PAGE_SIZE, e++) {
			u64 pa = *e & PTE_ADDR;

			if (!pa || (*e & PTE_BORROWED))
				continue;
			/* Recycled pages come off the free list in descending
			 * order: a run grows either way. */
			if (run_len && pa + PAGE_SIZE == run_pa) {
				run_pa = pa;
				run_len += PAGE_SIZE;
				continue;
			}
			if (run_len && run_pa + run_len != pa)
				zero_run(&run_pa, &run_len);
			if (!run_len)
				run_pa = pa;
			run_len += PAGE_SIZE;
		}
	}
	zero_run(&run_pa, &run_len);
	return 0;
}

#define MADV_DONTNEED	4
#define MADV_FREE	8
#define MADV_REMOVE	9
#define MADV_HWPOISON	100

/* madvise(2): advice is taken as advice, but discarding is done for real. */
s64 mm_madvise(struct mm *mm, u64 addr, u64 len, u64 advice)
{
	u64 end = ALIGN_UP(addr + len, PAGE_SIZE);

	mm_cache_drop(mm);
	if ((addr & (PAGE_SIZE - 1)) || end < addr ||
	    (len && !user_range_ok(addr, len)))
		return -EINVAL;
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_FREE:
		return len ? mm_discard(mm, addr, end) : 0;
	case MADV_REMOVE:		/* shared mappings only */
		return -EINVAL;
	default:
		/* NORMAL .. WILLNEED, DONTFORK, HUGEPAGE, COLD...: hints. */
		return advice < MADV_HWPOISON ? 0 : -EINVAL;
	}
}
