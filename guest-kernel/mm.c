// SPDX-License-Identifier: MIT
/*
 * User address spaces: 4-level page tables whose kernel half (PML4 slot
 * 511) is shared with the boot tables the VMM built, and a sorted VMA array.
 * Anonymous memory is mapped eagerly (a demand fault costs a 25-30 us round
 * trip through the emulated kernel); big mappings use 2 MiB pages, which
 * also make the host's shadow faults ~10x cheaper.
 *
 * This file: an address space made, switched to, freed and forked, and
 * the TLB shootdown.  The page tables are in mm_pgtable.c, the VMA list
 * in vma.c, mmap, munmap, mremap and brk in mm_mmap.c, mprotect and
 * madvise in mm_protect.c; what they share in mm_internal.h.
 */
#include "mm_internal.h"

static u64 kernel_pml4e;

void mm_init_kernel(void)
{
	kernel_pml4e = ((u64 *)P2V(PV_PML4_PHYS))[511];
}

/* The last mm.code_gen handed out: unique across every mm of the boot
 * (mm_code_changed()). */
u64 mm_code_gens;

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

void mm_tlb_shootdown(struct mm *mm)
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
	if (mm->nshared)
		mm_shared_writeback(mm, 0, ~0ull, false);
	mm_cache_drop(mm);
	for (int i = 0; i < mm->nvma; i++)
		mm_unmap_range(mm, mm->vma[i].start, mm->vma[i].end);
	mm_unmap_range(mm, mm->brk_start, ALIGN_UP(mm->brk, PV_HUGE_SIZE));
	mm_free_tables(mm->pml4, 3);
	vma_array_free(mm);
	for (u32 i = 1; i < mm->nfiles; i++)
		if (mm->files[i].ino)
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
		/* The child's copies of file pages are its own: written
		 * back, they would undo the parent's later stores.  What is
		 * mapped in place is shared (borrowed pages). */
		for (u32 i = 1; i < mm->nfiles; i++) {
			if (mm->files[i].ino)
				inode_get(mm->files[i].ino);
			mm->files[i].shared = false;
		}
		mm->ninplace = src->ninplace;
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
