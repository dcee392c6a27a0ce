/* SPDX-License-Identifier: MIT */
/*
 * What the files of user address spaces share (see mm.c): the inline
 * page-table helpers (__always_inline where every walk is a hot path, and
 * each call costs ~8 emulated instructions of its own), the VMA index,
 * and the functions one of them defines for the others.  The small
 * helpers are static inline here, inlined where they are used as when
 * they were static in one file: every kernel instruction is emulated.
 *
 * mm.c            address spaces made, switched to, freed, forked; the
 *                 TLB shootdown
 * mm_pgtable.c    page tables: walk, map, split, unmap, populate, move
 * vma.c           the sorted VMA array, protection and file labels in it
 * mm_mmap.c       mmap, munmap, the freed blocks kept for reuse, mremap,
 *                 brk
 * mm_protect.c    mprotect and madvise
 * mm_shared.c     writable MAP_SHARED file mappings written back
 */
#ifndef KERNEL_MM_INTERNAL_H
#define KERNEL_MM_INTERNAL_H

#include "kernel.h"
#include "mm.h"
#include "task.h"
#include "vfs.h"

/* mm.c */
extern u64 mm_code_gens;		/* the last mm.code_gen handed out */

static inline void mm_code_changed(struct mm *mm)
{
	mm->code_gen = __atomic_add_fetch(&mm_code_gens, 1, __ATOMIC_RELAXED);
}

void mm_tlb_shootdown(struct mm *mm);

/* mm_pgtable.c: the page tables */

/* Inlined: every walk is on a hot path, and each call costs ~8 emulated
 * instructions of its own. */
static __always_inline u64 *table_next(u64 *e, bool create)
{
	if (!(*e & PTE_P)) {
		u64 pa;

		if (!create)
			return NULL;
		pa = page_alloc_zero();
		if (!pa)
			return NULL;
		*e = pa | PTE_P | PTE_W | PTE_U;
	}
	return P2V(*e & PTE_ADDR);
}

static inline void invlpg(u64 va)
{
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}

/* This CPU's whole TLB: one emulated instruction pair for a page table's
 * worth of mappings, not 512 invlpg. */
static inline void tlb_flush_all(void)
{
	__asm__ volatile("mov %%cr3, %%rax; mov %%rax, %%cr3" : : : "rax",
			 "memory");
}

/*
 * Pages an unmap gives back, chained through their first words and
 * handed to the allocator with one lock at the end (page_free_chain(),
 * huge_free_chain()) instead of one call and lock per page.
 */
struct free_batch {
	u64 head, tail, n;
};

static __always_inline void batch_add(struct free_batch *b, u64 pa)
{
	*(u64 *)P2V(pa) = b->head;
	b->head = pa;
	if (!b->n++)
		b->tail = pa;
}

static inline void batch_free(struct free_batch *small,
			      struct free_batch *huge)
{
	if (small && small->n)
		page_free_chain(small->head, small->tail, small->n);
	if (huge && huge->n)
		huge_free_chain(huge->head, huge->tail, huge->n);
}

/* The PD entry covering va, or NULL when no page directory exists. */
static __always_inline u64 *mm_pde(struct mm *mm, u64 va)
{
	u64 *pml4 = P2V(mm->pml4);
	u64 *pdpt = table_next(&pml4[(va >> 39) & 511], false);
	u64 *pd = pdpt ? table_next(&pdpt[(va >> 30) & 511], false) : NULL;

	return pd ? &pd[(va >> 21) & 511] : NULL;
}

/* The PDE of va, the 2 MiB after the one at pde (NULL: none yet): one
 * walk per 1 GiB of page directory. */
static __always_inline u64 *mm_pde_next(struct mm *mm, u64 *pde, u64 va)
{
	return pde && (va & ((1ull << 30) - 1)) ? pde + 1 : mm_pde(mm, va);
}

int mm_split_huge(u64 *pde);
int mm_move_pages(struct mm *mm, u64 old, u64 new, u64 len);

/* vma.c: the VMA list */

/*
 * Index of the first VMA that ends above va (nvma if none): a binary
 * search, since every mmap and munmap makes several of these lookups and
 * each instruction is emulated on kvm_pvm (bzip2 keeps ~20 VMAs).
 */
static inline int vma_index(const struct mm *mm, u64 va)
{
	int lo = 0, hi = mm->nvma;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (mm->vma[mid].end <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int vma_array_grow(struct mm *mm);
void vma_array_free(struct mm *mm);
int vma_add(struct mm *mm, const struct vma *n);
void vma_delete(struct mm *mm, int i);
int vma_change(struct mm *mm, u64 addr, u64 end, int prot, int file);

static inline int vma_protect(struct mm *mm, u64 addr, u64 end, u32 prot)
{
	return vma_change(mm, addr, end, (int)prot, -1);
}

/* mm_mmap.c */

/* Half of RAM stays free with extra bytes more in use (padded 2 MiB
 * mappings, kept blocks: conveniences memory must be plentiful for). */
static inline bool mm_half_free(u64 extra)
{
	return pmem_free_pages() >= (boot_params->mem_size / 2 + extra) >> 12;
}

u64 mmap_find_gap(struct mm *mm, u64 len, u64 align, int *idx);
int mm_map_huge_range(struct mm *mm, u64 start, u64 end, u64 flags);
void mm_cache_drop(struct mm *mm);

#endif
