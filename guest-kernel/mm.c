// SPDX-License-Identifier: MIT
/*
 * User address spaces: 4-level page tables whose kernel half (PML4 slot
 * 511) is shared with the boot tables the VMM built, and a sorted VMA array.
 * Anonymous memory is mapped eagerly (a demand fault costs a 25-30 us round
 * trip through the emulated kernel); big mappings use 2 MiB pages, which
 * also make the host's shadow faults ~10x cheaper.
 */
#include "kernel.h"
#include "mm.h"
#include "task.h"
#include "vfs.h"

static u64 kernel_pml4e;

void mm_init_kernel(void)
{
	kernel_pml4e = ((u64 *)P2V(PV_PML4_PHYS))[511];
}

u64 pte_flags(u32 prot)
{
	u64 f = PTE_P | PTE_U;

	if (prot & PROT_WRITE)
		f |= PTE_W;
	if (!(prot & PROT_EXEC))
		f |= PTE_NX;
	return f;
}

/* The last mm.code_gen handed out: unique across every mm of the boot. */
static u64 code_gens;

static void mm_code_changed(struct mm *mm)
{
	mm->code_gen = __atomic_add_fetch(&code_gens, 1, __ATOMIC_RELAXED);
}

_Static_assert(MM_VMA_SMALL * sizeof(struct vma) <= PAGE_SIZE &&
	       MM_VMA_BIG * sizeof(struct vma) <= PV_HUGE_SIZE, "VMA arrays");

static void vma_array_free(struct mm *mm)
{
	if (mm->vma_max == MM_VMA_BIG)
		huge_free(V2P(mm->vma));
	else
		page_free(V2P(mm->vma));
}

/* The list outgrew its page: move it to a 2 MiB one (one memcpy). */
static int vma_array_grow(struct mm *mm)
{
	u64 pa;

	if (mm->vma_max == MM_VMA_BIG)
		return -ENOMEM;
	pa = huge_alloc_zero();
	if (!pa)
		return -ENOMEM;
	memcpy(P2V(pa), mm->vma, mm->nvma * sizeof(struct vma));
	page_free(V2P(mm->vma));
	mm->vma = P2V(pa);
	mm->vma_max = MM_VMA_BIG;
	return 0;
}

struct mm *mm_create(void)
{
	struct mm *mm = kmalloc(sizeof(*mm));
	u64 vpa = page_alloc();

	if (!mm || !vpa)
		goto fail;
	mm->vma = P2V(vpa);
	mm->vma_max = MM_VMA_SMALL;
	mm->pml4 = page_alloc_zero();
	if (!mm->pml4)
		goto fail;
	((u64 *)P2V(mm->pml4))[511] = kernel_pml4e;
	mm->refs = 1;
	mm->gap_hint = PV_USER_MMAP_BASE;
	mm_code_changed(mm);
	return mm;
fail:
	if (vpa)
		page_free(vpa);
	kfree(mm);
	return NULL;
}

void mm_activate(struct mm *mm)
{
	struct cpu *c = current_task()->cpu;

	c->loaded_mm = mm;
	c->tlb_seen = __atomic_load_n(&mm->tlb_gen, __ATOMIC_ACQUIRE);
	__asm__ volatile("mov %0, %%cr3" : : "r"(mm->pml4) : "memory");
}

void mm_deactivate(void)
{
	current_task()->cpu->loaded_mm = NULL;
	__asm__ volatile("mov %0, %%cr3" : : "r"(PV_PML4_PHYS) : "memory");
}

/*
 * TLB shootdown.  invlpg only reaches this CPU's TLB; another vCPU running
 * a thread of the same process could keep translating an unmapped page to
 * its old frame, which a later mmap hands out again.  Under kvm_pvm the
 * shadow page tables KVM keeps from the emulated PTE writes flush every
 * vCPU already, so this is for standard KVM with several vCPUs.
 * The CPU that changed mm's page tables (holding the BKL) bumps
 * mm->tlb_gen and IPIs each CPU with mm loaded, then waits until each has
 * flushed (tlb_seen) or is in the kernel (!in_user), which checks
 * tlb_gen in return_to_user() before it runs user code again.  The IPI
 * is served without the BKL, so the wait cannot deadlock.
 */
bool mm_tlb_ipi_on;

void mm_tlb_init(bool on)
{
	mm_tlb_ipi_on = on;
}

static void mm_tlb_flush_local(struct cpu *c, struct mm *mm)
{
	u64 gen = __atomic_load_n(&mm->tlb_gen, __ATOMIC_ACQUIRE);

	__asm__ volatile("mov %0, %%cr3" : : "r"(mm->pml4) : "memory");
	__atomic_store_n(&c->tlb_seen, gen, __ATOMIC_RELEASE);
}

/* VEC_TLB, from any mode, without the BKL. */
void mm_tlb_ipi(void)
{
	struct cpu *c = current_task()->cpu;

	if (c->loaded_mm)
		mm_tlb_flush_local(c, c->loaded_mm);
}

/* The last step before user mode (BKL held): flush if mm moved on. */
void mm_tlb_return(struct cpu *c)
{
	struct mm *mm = c->loaded_mm;

	__atomic_store_n(&c->in_user, true, __ATOMIC_SEQ_CST);
	if (mm && c->tlb_seen != __atomic_load_n(&mm->tlb_gen, __ATOMIC_ACQUIRE))
		mm_tlb_flush_local(c, mm);
}

static void mm_tlb_shootdown(struct mm *mm)
{
	struct cpu *self = current_task()->cpu;
	u64 gen, wait = 0;

	if (!mm_tlb_ipi_on)
		return;
	gen = __atomic_add_fetch(&mm->tlb_gen, 1, __ATOMIC_SEQ_CST);
	if (self->loaded_mm == mm)
		self->tlb_seen = gen;	/* the caller flushed its own */
	for (u32 i = 0; i < boot_params->ncpus; i++) {
		struct cpu *c = &cpus[i];

		if (c != self && __atomic_load_n(&c->loaded_mm,
						 __ATOMIC_SEQ_CST) == mm) {
			lapic_ipi(i, VEC_TLB);
			wait |= 1ull << i;
		}
	}
	for (u32 i = 0; wait; i = (i + 1) % boot_params->ncpus) {
		struct cpu *c = &cpus[i];

		if (!(wait & (1ull << i)))
			continue;
		if (__atomic_load_n(&c->tlb_seen, __ATOMIC_ACQUIRE) >= gen ||
		    !__atomic_load_n(&c->in_user, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&c->loaded_mm, __ATOMIC_ACQUIRE) != mm)
			wait &= ~(1ull << i);
		else
			__asm__ volatile("pause");
	}
}

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

static void batch_free(struct free_batch *small, struct free_batch *huge)
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
 * Turn a 2 MiB mapping into 512 4 KiB ones, for a partial munmap or
 * mprotect.  Its pieces go back to the allocator one by one as 4 KiB
 * pages (a frame given up whole until exit made a loop of partial
 * munmaps run out of memory); only borrowed (initramfs) memory stays.
 */
static int mm_split_huge(u64 *pde)
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
 * Index of the first VMA that ends above va (nvma if none): a binary
 * search, since every mmap and munmap makes several of these lookups and
 * each instruction is emulated on kvm_pvm (bzip2 keeps ~20 VMAs).
 */
static int vma_index(const struct mm *mm, u64 va)
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

struct vma *vma_find(struct mm *mm, u64 va)
{
	int i = vma_index(mm, va);

	return i < mm->nvma && va >= mm->vma[i].start ? &mm->vma[i] : NULL;
}

static bool vma_same(const struct vma *a, const struct vma *b)
{
	return a->prot == b->prot && a->huge == b->huge && !a->pad && !b->pad &&
	       !a->cached && !b->cached && a->file == b->file;
}

/*
 * Add n to the sorted list, merged with neighbours it touches that have
 * the same attributes, as Linux merges VMAs: glibc grows a thread arena by
 * mprotect()ing one more piece at a time, and unmerged pieces would fill
 * the list.
 */
static int vma_add(struct mm *mm, const struct vma *n)
{
	struct vma *prev, *next;
	int i;

	i = vma_index(mm, n->start);	/* the VMAs are disjoint from n */
	prev = i > 0 ? &mm->vma[i - 1] : NULL;
	next = i < mm->nvma ? &mm->vma[i] : NULL;
	if (prev && prev->end == n->start && vma_same(prev, n)) {
		prev->end = n->end;
		if (next && next->start == n->end && vma_same(next, n)) {
			prev->end = next->end;
			memmove(next, next + 1,
				(mm->nvma - i - 1) * sizeof(struct vma));
			mm->nvma--;
		}
		return 0;
	}
	if (next && next->start == n->end && vma_same(next, n)) {
		next->start = n->start;
		return 0;
	}
	if (mm->nvma == mm->vma_max && vma_array_grow(mm))
		return -ENOMEM;
	memmove(&mm->vma[i + 1], &mm->vma[i],
		(mm->nvma - i) * sizeof(struct vma));
	mm->vma[i] = *n;
	mm->nvma++;
	return 0;
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

/* [start, ...) became free: the hint may not stay above it.  idx: the
 * list index that start will have, or -1 for unknown. */
static void gap_hint_lower(struct mm *mm, u64 start, int idx)
{
	if (start < mm->gap_hint) {
		mm->gap_hint = start > PV_USER_MMAP_BASE ? start :
			       PV_USER_MMAP_BASE;
		mm->gap_idx = idx;
	}
}

static void vma_delete(struct mm *mm, int i)
{
	struct vma *v = &mm->vma[i];

	gap_hint_lower(mm, v->start, i);
	mm->nvma--;
	if (i < mm->nvma)
		memmove(v, v + 1, (mm->nvma - i) * sizeof(*v));
}

int vma_insert(struct mm *mm, u64 start, u64 end, u32 prot, bool huge)
{
	const struct vma n = { .start = start, .end = end, .prot = prot,
			       .huge = huge };

	return vma_add(mm, &n);
}

/* Remove [start, end) from the VMA list, splitting VMAs that straddle it. */
void vma_remove(struct mm *mm, u64 start, u64 end)
{
	gap_hint_lower(mm, start, -1);
	for (int i = vma_index(mm, start); i < mm->nvma; i++) {
		struct vma *v = &mm->vma[i];

		if (v->start >= end)
			break;
		if (v->start < start && v->end > end) {
			struct vma tail = *v;

			tail.start = end;
			v->end = start;
			v->pad = 0;
			if (vma_add(mm, &tail))
				v->end = start;	/* no room: drop the tail */
			return;
		}
		if (v->start < start) {
			v->end = start;
			v->pad = 0;
		} else if (v->end > end) {
			v->start = end;
		} else {
			memmove(v, v + 1, (mm->nvma - i - 1) * sizeof(*v));
			mm->nvma--;
			i--;
		}
	}
}

/*
 * The lowest free [start, start + len) above the mmap base, start aligned,
 * and in *idx the index its VMA takes.  The scan starts at mm->gap_hint,
 * below which nothing is free: malloc churn finds the hole its last free
 * made without walking every mapping below it.  0 when there is no room.
 */
static u64 mmap_find_gap(struct mm *mm, u64 len, u64 align, int *idx)
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
 * Fresh zeroed 2 MiB pages over [start, end), both 2 MiB-aligned: all of
 * them, or none (what was mapped is undone) and -ENOMEM.
 */
static int mm_map_huge_range(struct mm *mm, u64 start, u64 end, u64 flags)
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

/* Half of RAM stays free with extra bytes more in use (padded 2 MiB
 * mappings, kept blocks: conveniences memory must be plentiful for). */
static bool mm_half_free(u64 extra)
{
	return pmem_free_pages() >= (boot_params->mem_size / 2 + extra) >> 12;
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
 * mm.c never meets one.
 */
u64 mm_cached_pages;

static void mm_cache_forget(struct mm *mm, int k)
{
	mm->ncached--;
	mm->cache[k] = mm->cache[mm->ncached];
}

static void mm_cache_drop(struct mm *mm)
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

static int vma_protect(struct mm *mm, u64 addr, u64 end, u32 prot);

/*
 * A read-only private file mapping: the file's pinned bytes (physical pa,
 * flen of them from the offset) mapped in place, as exec maps text, and
 * copied only where the file ends inside a page (zeroes after it) or has
 * ended (zero pages).  ld.so maps each library's span so, then its text
 * and read-only data over it: copying them cost a memcpy and an mprotect
 * of every page.  mm_mprotect() copies a borrowed page made writable.
 */
s64 mm_mmap_borrow(struct mm *mm, u64 addr, u64 len, u32 prot, bool fixed,
		   u64 pa, u64 flen)
{
	u64 *e = NULL, flags = pte_flags(prot);
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
		*e = page | flags;
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
	return 0;
}

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

	*e = (*e & PTE_ADDR) | (*e & (PTE_BORROWED | PTE_PS)) | pte_flags(prot);
	if (!prot)
		*e &= ~(PTE_P | PTE_U);
	if (was_present)
		invlpg(va);
}

/* Give [addr, end) protection prot in the VMA list, splitting VMAs. */
/*
 * [addr, end), which must be mapped, with protection prot and file index
 * file, each unless -1: the VMAs are split at its ends and merge with
 * neighbours that match (vma_add()).  mprotect and the naming of a file
 * mapping (mm_label_file()).
 */
static int vma_change(struct mm *mm, u64 addr, u64 end, int prot, int file)
{
	for (u64 va = addr; va < end;) {
		struct vma *v = vma_find(mm, va), old;
		int err;

		if (!v)
			return -ENOMEM;
		old = *v;
		if (old.end > end)
			old.end = end;
		if ((prot >= 0 && old.prot != prot) ||
		    (file >= 0 && old.file != file)) {
			vma_remove(mm, va, old.end);
			old.start = va;
			if (prot >= 0)
				old.prot = (u8)prot;
			if (file >= 0)
				old.file = (u8)file;
			old.pad = 0;
			err = vma_add(mm, &old);
			if (err)
				return err;
		}
		va = old.end;
	}
	return 0;
}

static int vma_protect(struct mm *mm, u64 addr, u64 end, u32 prot)
{
	return vma_change(mm, addr, end, (int)prot, -1);
}

/* The files table entry of (ino, va_base), made if new; 0 when full. */
static u8 mm_file_entry(struct mm *mm, struct inode *ino, u64 va_base)
{
	u32 i;

	if (!mm->files) {
		mm->files = kmalloc(MM_FILES_MAX * sizeof(*mm->files));
		if (!mm->files)
			return 0;
		mm->nfiles = 1;
	}
	for (i = 1; i < mm->nfiles; i++)
		if (mm->files[i].ino == ino && mm->files[i].va_base == va_base)
			return (u8)i;
	if (i == MM_FILES_MAX || i > 255)
		return 0;	/* unnamed in maps, mapped all the same */
	inode_get(ino);
	mm->files[i].ino = ino;
	mm->files[i].va_base = va_base;
	mm->nfiles++;
	return (u8)i;
}

/*
 * Name [va, end) in /proc/PID/maps as ino's bytes from off: split and
 * merged as an mprotect would (vma_change()), so only pieces of the same
 * file at the same base merge.
 */
void mm_label_file(struct mm *mm, u64 va, u64 len, struct inode *ino,
		   u64 off)
{
	u8 file = mm_file_entry(mm, ino, va - off);

	if (file)
		vma_change(mm, va, va + ALIGN_UP(len, PAGE_SIZE), -1, file);
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

			if ((*e & PTE_BORROWED) && (prot & PROT_WRITE)) {
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

/*
 * Move the pages of [old, old + len) to new (a range with no mappings):
 * page-table entries change place, the memory stays (Linux moves page
 * tables too).  A 2 MiB page moves whole when both sides are aligned,
 * which is the case for big heap blocks (huge VMAs are 2 MiB aligned).
 */
static int mm_move_pages(struct mm *mm, u64 old, u64 new, u64 len)
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
 * mremap of a private mapping (every mapping here is).  MREMAP_MAYMOVE is
 * honoured; MREMAP_FIXED and MREMAP_DONTUNMAP are EINVAL, what Linux
 * answers for flags it does not know, so callers fall back to
 * mmap+copy.
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

/* Free every user page and page-table page below the kernel slot. */
static void mm_free_tables(u64 table, int level)
{
	u64 *t = P2V(table);

	for (int i = 0; i < (level == 3 ? 256 : 512); i++) {
		u64 e = t[i];

		if (!(e & PTE_P))
			continue;
		if (level == 0)
			continue;	/* leaf pages freed by unmap */
		if (level == 1 && (e & PTE_PS))
			continue;
		mm_free_tables(e & PTE_ADDR, level - 1);
	}
	page_free(table);
}

void mm_put(struct mm *mm)
{
	if (--mm->refs > 0)
		return;
	mm_cache_drop(mm);
	for (int i = 0; i < mm->nvma; i++)
		mm_unmap_range(mm, mm->vma[i].start, mm->vma[i].end);
	mm_unmap_range(mm, mm->brk_start, ALIGN_UP(mm->brk, PV_HUGE_SIZE));
	mm_free_tables(mm->pml4, 3);
	vma_array_free(mm);
	for (u32 i = 1; i < mm->nfiles; i++)
		inode_put(mm->files[i].ino);
	kfree(mm->files);
	kfree(mm);
}

/*
 * The step source's code caches (uapi/layout.h), when the VMM counts by
 * blocks: the same 2 MiB page in every process, borrowed (never freed,
 * shared by fork).  Left out where the program has that range itself;
 * the VMM checks the mapping before it runs a thread there.  User-
 * writable, as the counters at the start of each vCPU's window are.
 */
void mm_map_step_cache(struct mm *mm)
{
	u64 pa = boot_params->step_cache_phys;
	u64 lo = PV_STEP_CACHE_VA, hi = PV_STEP_CACHE_VA + PV_STEP_CACHE_SIZE;
	u32 prot = PROT_READ | PROT_WRITE | PROT_EXEC;

	if (!pa || mm->brk_start < hi)
		return;
	for (int i = 0; i < mm->nvma; i++)
		if (mm->vma[i].start < hi && mm->vma[i].end > lo)
			return;
	if (vma_insert(mm, lo, hi, prot, true))
		return;
	if (mm_map_huge(mm, lo, pa, pte_flags(prot) | PTE_BORROWED))
		vma_remove(mm, lo, hi);
}

/*
 * No 2 MiB frame left for the child's copy of one (4 KiB pages from the
 * free lists fill the rest of RAM): 512 small ones.  Slow, but a fork
 * with memory free must not fail.  Undone by mm_put() on failure.
 */
static int mm_fork_huge_small(struct mm *dst, u64 va, u64 src, u64 flags)
{
	for (u64 off = 0; off < PV_HUGE_SIZE; off += PAGE_SIZE) {
		u64 pa = page_alloc();

		if (!pa)
			return -ENOMEM;
		hcall(PV_HC_COPY, pa, src + off, PAGE_SIZE);
		if (mm_map_page(dst, va + off, pa, flags)) {
			page_free(pa);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Copy one present leaf (4 KiB or 2 MiB) into dst; borrowed pages shared. */
static int mm_fork_leaf(struct mm *dst, u64 va, u64 e, bool huge)
{
	u64 size = huge ? PV_HUGE_SIZE : PAGE_SIZE;
	u64 src = e & PTE_ADDR & ~(size - 1);
	u64 flags = e & ~PTE_ADDR;
	u64 pa;

	if ((e & PTE_BORROWED) && huge)
		return mm_map_huge(dst, va, src, flags & ~PTE_PS);
	if (e & PTE_BORROWED)
		return mm_map_page(dst, va, src, flags);
	pa = huge ? huge_alloc_zero() : page_alloc();
	if (!pa && huge)
		return mm_fork_huge_small(dst, ALIGN_DOWN(va, PV_HUGE_SIZE), src,
					  flags & ~PTE_PS);
	if (!pa)
		return -ENOMEM;
	hcall(PV_HC_COPY, pa, src, size);
	if (huge)
		return mm_map_huge(dst, va, pa, flags & ~PTE_PS);
	return mm_map_page(dst, va, pa, flags);
}

static int mm_fork_range(struct mm *dst, struct mm *src, u64 start, u64 end)
{
	for (u64 va = start; va < end;) {
		bool huge;
		u64 *e = mm_walk(src, va, false, &huge);
		int err;

		if (!e) {
			va = ALIGN_DOWN(va, PV_HUGE_SIZE) + PV_HUGE_SIZE;
			continue;
		}
		if (*e & PTE_ADDR) {	/* PROT_NONE pages keep their data too */
			err = mm_fork_leaf(dst, va, *e, huge);
			if (err)
				return err;
		}
		va = huge ? ALIGN_DOWN(va, PV_HUGE_SIZE) + PV_HUGE_SIZE
			  : va + PAGE_SIZE;
	}
	return 0;
}

/* fork: a private copy of every mapped page (no copy-on-write). */
struct mm *mm_fork(struct mm *src)
{
	struct mm *mm;

	mm_cache_drop(src);
	mm = mm_create();
	if (!mm)
		return NULL;
	if (src->nvma > mm->vma_max && vma_array_grow(mm)) {
		mm_put(mm);
		return NULL;
	}
	memcpy(mm->vma, src->vma, src->nvma * sizeof(struct vma));
	mm->nvma = src->nvma;
	if (src->files) {
		mm->files = kmalloc(MM_FILES_MAX * sizeof(*mm->files));
		if (!mm->files)
			goto fail;
		memcpy(mm->files, src->files, src->nfiles * sizeof(*mm->files));
		mm->nfiles = src->nfiles;
		for (u32 i = 1; i < mm->nfiles; i++)
			inode_get(mm->files[i].ino);
	}
	mm->brk_start = src->brk_start;
	mm->brk = src->brk;
	for (int i = 0; i < src->nvma; i++) {
		if (mm_fork_range(mm, src, src->vma[i].start, src->vma[i].end))
			goto fail;
	}
	if (mm_fork_range(mm, src, src->brk_start,
			  ALIGN_UP(src->brk, PV_HUGE_SIZE)))
		goto fail;
	return mm;
fail:
	mm_put(mm);
	return NULL;
}
