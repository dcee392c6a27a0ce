// SPDX-License-Identifier: MIT
/*
 * mmap, munmap, mremap and brk of user address spaces (see mm.c): the gap
 * search, 2 MiB-page ranges, the freed blocks kept for reuse, padded
 * mappings of 2 MiB pages, private file mappings in place, blocks grown
 * in place or moved, and the heap.  malloc's churn and realloc's growth
 * are hot paths with an instruction budget (kbench brk and mremap): their
 * helpers stay static in this file, with every caller.
 */
#include "mm_internal.h"

/*
 * The lowest free [start, start + len) above the mmap base, start aligned,
 * and in *idx the index its VMA takes.  The scan starts at mm->gap_hint,
 * below which nothing is free: malloc churn finds the hole its last free
 * made without walking every mapping below it.  0 when there is no room.
 */
u64 mmap_find_gap(struct mm *mm, u64 len, u64 align, int *idx)
{
	u64 start = ALIGN_UP(mm->gap_hint, align);
	int i = mm->gap_idx;

	/* The index kept with the hint, unless the list changed under it. */
	if (i < 0 || i > mm->nvma ||
	    (i < mm->nvma && mm->vma[i].end <= mm->gap_hint) ||
	    (i > 0 && mm->vma[i - 1].end > mm->gap_hint))
		i = vma_index(mm, mm->gap_hint);
	for (; i < mm->nvma; i++) {
		struct vma *v = &mm->vma[i];

		if (v->end <= start)
			continue;
		if (v->start >= start + len)
			break;
		start = ALIGN_UP(v->end, align);
	}
	if (start + len > PV_USER_STACK_TOP - (64ull << 20))
		return 0;
	*idx = i;
	return start;
}

/*
 * n at index i, where mmap_find_gap() found room: no search, no merge
 * (a padded VMA never merges).  A mapping placed at the gap hint moves it.
 */
static void vma_insert_at(struct mm *mm, int i, const struct vma *n)
{
	struct vma *v = &mm->vma[i];

	if (i < mm->nvma)
		memmove(v + 1, v, (mm->nvma - i) * sizeof(*v));
	v->start = n->start;
	v->end = n->end;
	v->prot = n->prot;
	v->huge = n->huge;
	v->cached = 0;
	v->file = n->file;
	v->pad = n->pad;
	mm->nvma++;
	if (n->start == mm->gap_hint) {
		mm->gap_hint = n->end;
		mm->gap_idx = i + 1;
	}
}

/*
 * Fresh zeroed 2 MiB pages over [start, end), both 2 MiB-aligned: all of
 * them, or none (what was mapped is undone) and -ENOMEM.
 */
int mm_map_huge_range(struct mm *mm, u64 start, u64 end, u64 flags)
{
	u64 *pde = NULL, run = 0, run_pa = 0;
	bool fresh = true;

	for (u64 va = start; va < end; va += PV_HUGE_SIZE) {
		u64 pa;

		/* Fresh frames a run at a time: one lock for a 64 MiB heap
		 * growth, not 32 calls of huge_alloc_zero().  Once there
		 * are none (freed ones first), one at a time. */
		if (!run && fresh) {
			run = huge_alloc_run((end - va) / PV_HUGE_SIZE, &run_pa);
			fresh = run;
		}
		if (run) {
			pa = run_pa;
			run_pa += PV_HUGE_SIZE;
			run--;
		} else {
			pa = huge_alloc_zero();
		}
		pde = pa ? mm_pde_next(mm, pde, va) : NULL;

		/* The common case inline: the tables exist, the PDE is free. */
		if (pde && !*pde) {
			*pde = pa | flags | PTE_PS;
			continue;
		}
		if (!pa || mm_map_huge(mm, va, pa, flags)) {
			if (pa)
				huge_free(pa);
			for (; run; run--, run_pa += PV_HUGE_SIZE)
				huge_free(run_pa);
			mm_unmap_range(mm, start, va);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The 2 MiB pages of [start, end) (both 2 MiB-aligned, one VMA) go back
 * to the allocator.  True when every piece was a 2 MiB page or nothing;
 * false at the first split one, with [va, end) left for mm_unmap_range().
 */
static bool mm_unmap_huge(struct mm *mm, u64 *va, u64 end)
{
	struct free_batch huge = { 0 };
	u64 *pde = NULL;

	for (; *va < end; *va += PV_HUGE_SIZE) {
		pde = mm_pde_next(mm, pde, *va);
		if (!pde || !*pde)
			continue;
		if (!(*pde & PTE_PS))
			break;
		if (!(*pde & PTE_BORROWED))
			batch_add(&huge, *pde & PTE_ADDR & ~(PV_HUGE_SIZE - 1));
		*pde = 0;
		invlpg(*va);
	}
	batch_free(NULL, &huge);
	return *va >= end;
}

/*
 * Freed blocks kept for reuse: malloc's churn of big blocks (bzip2 maps
 * and unmaps 210 of 1-2 MiB pages at size train) costs a gap search, the
 * page-table walks, the frame allocations and the VMA list's moves each
 * way, every instruction emulated on kvm_pvm.  munmap of a whole padded
 * block instead leaves its VMA in the list, flagged cached, with its 2 MiB
 * PDEs not present (a PROT_NONE mapping no one asked for: it faults, and
 * the gap search, fork and teardown treat it like one), and an mmap of the
 * same padded size takes it back: the PDEs present again, the frames
 * zeroed by the VMM, no search.  At most MM_CACHE_MAX blocks and
 * MM_CACHE_BYTES per address space, only while half of RAM stays free,
 * and sysinfo counts them as free.  Every other change of the address
 * space (mmap elsewhere or fixed, partial munmap, mprotect, madvise,
 * mremap, fork, exit) first releases them (mm_cache_drop()), so the rest of
 * the mm files never meets one.
 */
u64 mm_cached_pages;

static void mm_cache_forget(struct mm *mm, int k)
{
	mm->ncached--;
	mm->cache[k] = mm->cache[mm->ncached];
}

void mm_cache_drop(struct mm *mm)
{
	while (mm->ncached) {
		int i = vma_index(mm, mm->cache[0].start);
		struct vma *v = &mm->vma[i];
		u64 size = v->end - v->start;
		u64 va = v->start;

		/* Not present already, and flushed when cached. */
		if (!mm_unmap_huge(mm, &va, v->end))
			panic("a cached block lost its 2 MiB pages");
		mm->cache_bytes -= size;
		mm_cached_pages -= size / PAGE_SIZE;
		mm_cache_forget(mm, 0);
		vma_delete(mm, i);
	}
}

/* munmap of the whole padded block i: keep it if there is room. */
static bool mm_cache_put(struct mm *mm, int i)
{
	struct vma *v = &mm->vma[i];
	u64 size = v->end - v->start, *pde = NULL, *first = NULL;

	if (mm->ncached == MM_CACHE_MAX ||
	    mm->cache_bytes + size > MM_CACHE_BYTES || !mm_half_free(0))
		return false;
	for (u64 va = v->start; va < v->end; va += PV_HUGE_SIZE) {
		pde = mm_pde_next(mm, pde, va);
		if (!pde || !(*pde & PTE_PS))
			panic("a padded block without its 2 MiB pages");
		if (!first)
			first = pde;
		*pde &= ~(PTE_P | PTE_U);
		invlpg(va);
	}
	mm_tlb_shootdown(mm);
	v->cached = 1;
	mm->cache[mm->ncached].start = v->start;
	mm->cache[mm->ncached].size = size;
	mm->cache[mm->ncached].pde = first;
	mm->cache[mm->ncached++].idx = i;
	mm->cache_bytes += size;
	mm_cached_pages += size / PAGE_SIZE;
	return true;
}

/* A kept block of size bytes as a new mapping; 0 if none. */
static u64 mm_cache_take(struct mm *mm, u64 size, u32 prot, u32 pad)
{
	u64 flags = pte_flags(prot) | PTE_PS, *pde;

	for (int k = 0; k < mm->ncached; k++) {
		int i = mm->cache[k].idx;
		struct vma *v;

		if (mm->cache[k].size != size)
			continue;
		/* The index kept with it, unless the list moved since. */
		if (i >= mm->nvma || mm->vma[i].start != mm->cache[k].start)
			i = vma_index(mm, mm->cache[k].start);
		v = &mm->vma[i];
		/* The first PDE as kept: its PD page stays while a PDE in
		 * it is in use. */
		pde = mm->cache[k].pde;
		for (u64 va = v->start; va < v->end;) {
			u64 frame = *pde & PTE_ADDR & ~(PV_HUGE_SIZE - 1);

			hcall(PV_HC_ZERO, frame, PV_HUGE_SIZE, 0);
			*pde = frame | flags;
			va += PV_HUGE_SIZE;
			if (va < v->end)
				pde = mm_pde_next(mm, pde, va);
		}
		v->cached = 0;
		v->prot = prot;
		v->pad = pad;
		v->file = 0;	/* anonymous again */
		mm->cache_bytes -= size;
		mm_cached_pages -= size / PAGE_SIZE;
		mm_cache_forget(mm, k);
		return v->start;
	}
	return 0;
}

/*
 * A writable mapping of 64 KiB or more whose length is not a multiple of
 * 2 MiB, while at least half of RAM stays free: 2 MiB pages throughout,
 * the last one's tail as padding (vma.pad) that munmap of the length
 * asked for releases with it.  Mapping and unmapping are then one PDE
 * write per 2 MiB instead of up to 512 PTE writes and page allocations,
 * every one emulated on kvm_pvm: bzip2's 100-400 KiB buffers, mapped and
 * unmapped 420 times at size train, took 2.2 s of kernel time that way,
 * and lbm's two 9.3 MiB grids 650 4 KiB pages each.  Unlike Linux, the
 * padding reads and writes without a fault.  0 when not taken: the
 * caller maps the length asked for.
 */
#define PAD_MIN		(64ull << 10)

static s64 mm_mmap_padded(struct mm *mm, u64 len, u32 prot)
{
	u64 size = ALIGN_UP(len, PV_HUGE_SIZE);
	struct vma v = { .prot = prot, .huge = true,
			 .pad = (u32)(size - len) };
	int i;

	if (len < PAD_MIN || size == len || !(prot & PROT_WRITE))
		return 0;
	if (mm->ncached) {
		v.start = mm_cache_take(mm, size, prot, v.pad);
		if (v.start)
			return v.start;
	}
	/* Padded blocks never merge: past half the list, blocks that can
	 * merge with their neighbours, or a program holding many (a
	 * 1 GiB guest has room for 256) fills the list and gets ENOMEM
	 * with memory free. */
	if (mm->nvma >= mm->vma_max / 2 || !mm_half_free(size))
		return 0;
	v.start = mmap_find_gap(mm, size, PV_HUGE_SIZE, &i);
	if (!v.start)
		return 0;
	v.end = v.start + size;
	/* Not mm_populate(), nor vma_add()'s search and merge: this is the
	 * hot path of malloc churn. */
	if (mm_map_huge_range(mm, v.start, v.end, pte_flags(prot)))
		return 0;
	vma_insert_at(mm, i, &v);
	return v.start;
}

static __attribute__((noinline)) s64 mm_mmap_other(struct mm *mm, u64 addr,
						    u64 len, u32 prot,
						    bool fixed)
{
	bool huge = false;
	u64 start;
	int err;

	mm_cache_drop(mm);
	if (fixed) {
		if ((addr & (PAGE_SIZE - 1)) || !user_range_ok(addr, len) ||
		    addr < PAGE_SIZE)
			return -EINVAL;
		mm_munmap(mm, addr, len);
		start = addr;
	} else {
		/*
		 * Big writable mappings start 2 MiB-aligned and get 2 MiB
		 * pages for their whole 2 MiB pieces, 4 KiB ones for the
		 * rest (mm_populate).  Not rounded up: munmap of the length
		 * asked for must free everything, or a malloc/free loop of
		 * 3 MiB blocks lost 2 MiB a round (ENOMEM after 53 rounds
		 * in 128 MiB; test mmap-munmap-3m-loop).
		 */
		int i;

		huge = len >= PV_HUGE_SIZE && (prot & PROT_WRITE);
		start = mmap_find_gap(mm, len, huge ? PV_HUGE_SIZE : PAGE_SIZE,
				      &i);
		if (!start)
			return -ENOMEM;
	}
	err = vma_insert(mm, start, start + len, prot, huge);
	if (err)
		return err;
	if (prot) {
		err = mm_populate(mm, start, start + len, prot);
		if (err) {
			vma_remove(mm, start, start + len);
			return err;
		}
	}
	return start;
}

/*
 * A read-only private file mapping: the file's pinned bytes (physical pa,
 * flen of them from the offset) mapped in place, as exec maps text, and
 * copied only where the file ends inside a page (zeroes after it) or has
 * ended (zero pages).  ld.so maps each library's span so, then its text
 * and read-only data over it: copying them cost a memcpy and an mprotect
 * of every page.  mm_mprotect() copies a borrowed page made writable.
 */
s64 mm_mmap_borrow(struct mm *mm, u64 addr, u64 len, u32 prot, bool fixed,
		   u64 pa, u64 flen, u64 pte_extra)
{
	u64 *e = NULL, flags = pte_flags(prot) | pte_extra;
	s64 va;
	int err;

	if (!len || len > (1ull << 40))
		return -EINVAL;
	len = ALIGN_UP(len, PAGE_SIZE);
	va = mm_mmap_other(mm, addr, len, 0, fixed);	/* reserved, empty */
	if (va < 0)
		return va;
	err = vma_protect(mm, va, va + len, prot);
	for (u64 off = 0; !err && off < len; off += PAGE_SIZE, e++) {
		bool huge = false;
		u64 page;

		if (!e || !((va + off) & (PV_HUGE_SIZE - 1)))
			e = mm_walk(mm, va + off, true, &huge);
		if (!e || huge) {
			err = -ENOMEM;
			break;
		}
		if (off + PAGE_SIZE <= flen) {
			*e = (pa + off) | flags | PTE_BORROWED;
			continue;
		}
		page = page_alloc_zero();
		if (!page) {
			err = -ENOMEM;
			break;
		}
		if (off < flen)
			hcall(PV_HC_COPY, page, pa + off, flen - off);
		*e = page | (flags & ~PTE_SHMEM);
	}
	if (err) {
		mm_munmap(mm, va, len);
		return err;
	}
	return va;
}

s64 mm_mmap_anon(struct mm *mm, u64 addr, u64 len, u32 prot, bool fixed)
{
	s64 start;

	if (!len || len > (1ull << 40))
		return -EINVAL;
	len = ALIGN_UP(len, PAGE_SIZE);
	if (!fixed) {
		start = mm_mmap_padded(mm, len, prot);
		if (start)
			return start;
	}
	return mm_mmap_other(mm, addr, len, prot, fixed);
}

/*
 * munmap of one whole VMA of 2 MiB pages, its padding included: malloc
 * freeing a big block (bzip2: 210 a run at size train).  One lookup, one
 * PDE per 2 MiB, the entry dropped; false for anything else.
 */
static bool mm_munmap_whole(struct mm *mm, u64 addr, u64 end)
{
	int i = vma_index(mm, addr);
	struct vma *v = &mm->vma[i];
	u64 va = addr;

	if (i == mm->nvma || v->start != addr || !v->huge || v->cached ||
	    ((addr | v->end) & (PV_HUGE_SIZE - 1)) ||
	    (end != v->end && end != v->end - v->pad))
		return false;
	if (v->pad && mm_cache_put(mm, i))
		return true;
	if (!mm_unmap_huge(mm, &va, v->end))
		mm_unmap_range(mm, va, v->end);
	else
		mm_tlb_shootdown(mm);
	vma_delete(mm, i);
	return true;
}

s64 mm_munmap(struct mm *mm, u64 addr, u64 len)
{
	struct vma *v;
	u64 end;

	if ((addr & (PAGE_SIZE - 1)) || !len || !user_range_ok(addr, len))
		return -EINVAL;
	end = ALIGN_UP(addr + len, PAGE_SIZE);
	if (mm->nshared)
		mm_shared_writeback(mm, addr, end, false);
	if (mm_munmap_whole(mm, addr, end))
		return 0;
	mm_cache_drop(mm);
	/* Up to a padded mapping's padding: it goes too (mm_mmap_padded),
	 * or a loop that frees mappings from their tail keeps it forever. */
	v = vma_find(mm, end - 1);
	if (v && v->pad && end == v->end - v->pad)
		end = v->end;
	mm_unmap_range(mm, addr, end);
	vma_remove(mm, addr, end);
	if (mm->ninplace)
		mm_files_release(mm);	/* shared memory unmapped for good */
	return 0;
}

/*
 * A block that grows by mremap, as glibc's realloc() grows a chunk it
 * mmapped (Lua's big tables: 10 of them, ~140,000 emulated instructions
 * each), stays 2 MiB pages throughout, as mm_mmap_padded() made it: its
 * size rounded up to 2 MiB with the rest as padding, while memory is
 * plentiful.  Growing it is then a PDE write per 2 MiB, a move a PDE
 * move, and the next growth often fits in the padding (mm_mremap()'s
 * first case).  Otherwise (memory scarce, a block with 4 KiB pages, a
 * read-only one) the length asked for, 4 KiB pages at the unaligned end.
 * The padded size of len bytes at base (2 MiB-aligned, or no padding)
 * whose first old_len are the pages at old, or len.  Those must be 2 MiB
 * pages, all of them: a padded block is one throughout, which
 * mm_cache_put() relies on (a partial mprotect splits a page and leaves
 * the VMA whole).
 */
static u64 mm_mremap_size(struct mm *mm, const struct vma *v, u64 base,
			  u64 old, u64 old_len, u64 len)
{
	u64 size = ALIGN_UP(len, PV_HUGE_SIZE), *pde = NULL;

	if (!v->huge || !(v->prot & PROT_WRITE) || size == len ||
	    ((base | old | old_len) & (PV_HUGE_SIZE - 1)) ||
	    !mm_half_free(size - old_len))
		return len;
	for (u64 va = old; va < old + old_len; va += PV_HUGE_SIZE) {
		pde = mm_pde_next(mm, pde, va);
		if (!pde || !(*pde & PTE_PS))
			return len;
	}
	return size;
}

/* Nothing mapped in [from, to). */
static bool mm_range_free(struct mm *mm, u64 from, u64 to)
{
	for (int i = 0; i < mm->nvma; i++)
		if (mm->vma[i].start < to && mm->vma[i].end > from)
			return false;
	return true;
}

/* Grow v in place to new_end: 0 done, 1 no room here, or -ENOMEM. */
static s64 mm_mremap_grow(struct mm *mm, struct vma *v, u64 new_end)
{
	u64 old_end = v->end;
	u64 top = v->start + mm_mremap_size(mm, v, v->start, v->start,
					     old_end - v->start,
					     new_end - v->start);

	if (top != new_end && !mm_range_free(mm, old_end, top))
		top = new_end;		/* no room for the padding */
	if (top == new_end && !mm_range_free(mm, old_end, new_end))
		return 1;
	/* 2 MiB pages over the padded size, or failing that the length
	 * asked for as mm_populate() maps it. */
	if (top != new_end && v->prot &&
	    !mm_map_huge_range(mm, old_end, top, pte_flags(v->prot))) {
		v->end = top;
		v->pad = top - new_end;
		return 0;
	}
	v->end = new_end;
	if (v->prot && mm_populate(mm, old_end, new_end, v->prot)) {
		v->end = old_end;
		return -ENOMEM;
	}
	return 0;
}

/* Move [old, old + old_len) of v to a fresh range of new_len bytes. */
static s64 mm_mremap_move(struct mm *mm, struct vma *v, u64 old,
			  u64 old_len, u64 new_len)
{
	u64 size = mm_mremap_size(mm, v, 0, old, old_len, new_len);
	struct vma n = { .prot = v->prot, .huge = new_len >= PV_HUGE_SIZE,
			 .pad = (u32)(size - new_len) };
	u64 flags = pte_flags(v->prot);
	int i, err;

	/* A fresh range, 2 MiB aligned when big, and the pages moved. */
	n.start = mmap_find_gap(mm, size, n.huge ? PV_HUGE_SIZE : PAGE_SIZE,
				&i);
	if (!n.start)
		return -ENOMEM;
	n.end = n.start + size;
	err = vma_add(mm, &n);
	if (err)
		return err;
	if (mm_move_pages(mm, old, n.start, old_len))
		return -ENOMEM;
	/* Padded: whole 2 MiB pages after the moved ones; the length asked
	 * for when they run out. */
	if (n.prot && n.pad &&
	    mm_map_huge_range(mm, n.start + old_len, n.end, flags)) {
		v = vma_find(mm, n.start);
		v->end = n.start + new_len;
		v->pad = 0;
		n.end = v->end;
		n.pad = 0;
	}
	if (n.prot && !n.pad &&
	    mm_populate(mm, n.start + old_len, n.end, n.prot)) {
		/* Half moved cannot be undone cheaply: Linux would not get
		 * here, having reserved its page tables first. */
		return -ENOMEM;
	}
	mm_munmap(mm, old, old_len);
	return n.start;
}

/*
 * mremap of a private mapping, or the shrinking of a shared one.
 * MREMAP_MAYMOVE is honoured; MREMAP_FIXED and MREMAP_DONTUNMAP are
 * EINVAL, what Linux answers for flags it does not know, so callers fall
 * back to mmap+copy.
 */
s64 mm_mremap(struct mm *mm, u64 old, u64 old_len, u64 new_len, u64 flags)
{
	struct vma *v;
	u64 old_end, new_end;

	mm_cache_drop(mm);
	mm_code_changed(mm);
	if ((old & (PAGE_SIZE - 1)) || (flags & ~1ull) || !new_len ||
	    !old_len)
		return -EINVAL;
	old_len = ALIGN_UP(old_len, PAGE_SIZE);
	new_len = ALIGN_UP(new_len, PAGE_SIZE);
	if (!user_range_ok(old, old_len) || new_len > (1ull << 40))
		return -EINVAL;
	v = vma_find(mm, old);
	if (!v || old + old_len > v->end)
		return -EFAULT;
	/* Shared memory mapped in place only shrinks: grown or moved, it
	 * would lose its frames' owner (mm_shared.c). */
	if (v->file && mm->files[v->file].inplace && new_len > old_len)
		return -ENOMEM;
	/* A whole padded mapping resizes inside its 2 MiB page; past it,
	 * the page moves whole with its padding, zeroed, as data. */
	if (v->pad && old == v->start &&
	    old_len == v->end - v->start - v->pad) {
		u64 cap = v->end - v->start;

		if (new_len <= cap) {
			if (new_len > old_len)
				hcall(PV_HC_MEMSET, old + old_len, 0,
				      new_len - old_len);
			v->pad = cap - new_len;
			return old;
		}
		hcall(PV_HC_MEMSET, old + old_len, 0, cap - old_len);
		v->pad = 0;
		old_len = cap;
	}
	old_end = old + old_len;
	if (new_len <= old_len) {
		if (new_len < old_len)
			mm_munmap(mm, old + new_len, old_len - new_len);
		return old;
	}
	/* Grow in place when the VMA ends here and nothing follows. */
	new_end = old + new_len;
	if (old_end == v->end && user_range_ok(old, new_len) &&
	    new_end <= PV_USER_STACK_TOP - (64ull << 20)) {
		s64 r = mm_mremap_grow(mm, v, new_end);

		if (r != 1)
			return r ? r : (s64)old;
	}
	if (!(flags & 1))			/* MREMAP_MAYMOVE */
		return -ENOMEM;
	return mm_mremap_move(mm, v, old, old_len, new_len);
}

/* The heap is mapped in whole 2 MiB pages from a 2 MiB-aligned start. */
u64 mm_brk(struct mm *mm, u64 newbrk)
{
	u64 old_top = ALIGN_UP(mm->brk, PV_HUGE_SIZE);
	u64 new_top = ALIGN_UP(newbrk, PV_HUGE_SIZE);

	if (newbrk < mm->brk_start || newbrk >= PV_USER_MMAP_BASE)
		return mm->brk;
	if (new_top > old_top) {
		for (int i = 0; i < mm->nvma; i++)
			if (mm->vma[i].start < new_top &&
			    mm->vma[i].end > old_top)
				return mm->brk;
		if (mm_map_huge_range(mm, old_top, new_top,
				      pte_flags(PROT_READ | PROT_WRITE))) {
			pmem_refused();	/* no 2 MiB frame left */
			return mm->brk;
		}
	} else if (new_top < old_top) {
		u64 va = new_top;

		/* 2 MiB pages, one PDE walk per 1 GiB; a split one (a
		 * partial munmap or mprotect of the heap) page by page. */
		mm_code_changed(mm);
		if (mm_unmap_huge(mm, &va, old_top))
			mm_tlb_shootdown(mm);
		else
			mm_unmap_range(mm, va, old_top);
	}
	mm->brk = newbrk;
	return newbrk;
}
