/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_MM_H
#define KERNEL_MM_H

#include "kernel.h"
#include "sync.h"

#define PTE_P		(1ull << 0)
#define PTE_W		(1ull << 1)
#define PTE_U		(1ull << 2)
#define PTE_A		(1ull << 5)
#define PTE_D		(1ull << 6)
#define PTE_PS		(1ull << 7)
#define PTE_BORROWED	(1ull << 9)	/* initramfs page: never freed */
#define PTE_SHMEM	(1ull << 10)	/* and borrowed: MAP_SHARED memory
					 * mapped in place, written there */
#define PTE_NX		(1ull << 63)
#define PTE_ADDR	0x000ffffffffff000ull

#define PROT_READ	1
#define PROT_WRITE	2
#define PROT_EXEC	4

/*
 * VMAs: a page of them, then a 2 MiB page for a program that needs more
 * (a dynamically linked one has 4-5 per library: curl has 150).
 */
#define MM_VMA_SMALL	170		/* PAGE_SIZE / sizeof(struct vma) */
#define MM_VMA_BIG	87381		/* PV_HUGE_SIZE / sizeof(struct vma) */
/* Freed 2 MiB-page blocks an address space keeps for reuse (mm_mmap.c). */
#define MM_CACHE_MAX	16
#define MM_CACHE_BYTES	(32ull << 20)

struct vma {
	u64 start, end;
	u8 prot;
	u8 huge;			/* mapped with 2 MiB pages */
	u8 cached;			/* freed, kept for reuse: no user's */
	u8 file;			/* mm->files index, 0: anonymous */
	u32 pad;			/* bytes at the end no one asked for */
};

/* A mapped file, for /proc/PID/maps: its offset 0 would be at va_base, so
 * every piece of its mappings keeps the one entry through splits. */
struct inode;
struct mm_file {
	struct inode *ino;		/* a reference held */
	u64 va_base;
	bool shared;			/* MAP_SHARED and writable: stores go
					 * back to the file (mm_shared.c) */
	bool inplace;			/* MAP_SHARED: ino's data mapped in
					 * place, its frames (mm_shared.c) */
};
#define MAP_SHARED	0x01		/* and MAP_SHARED_VALIDATE, 0x03 */
#define MM_FILES_MAX	168		/* a kmalloc page; index in a u8 */

/* One user address space. */
struct cpu;

struct mm {
	struct spinlock lock;
	u64 pml4;			/* physical */
	u64 brk_start, brk;
	int refs;
	int nvma;
	u64 tlb_gen;			/* bumped at each shootdown (mm.c) */
	/* Which code each address holds, as the step source's code cache
	 * remembers it: new for each mm and at each unmap or move
	 * (PV_HC_STEP_ARM).  So a small page's frame stays at its address
	 * while it holds (perf_event.c caches ring pages under it). */
	u64 code_gen;
	u64 gap_hint;			/* no free page from the mmap base
					 * up to here (mmap_find_gap) */
	int gap_idx;			/* its vma_index(), when still so */
	int ncached;			/* freed blocks kept (mm_cache_*()) */
	struct {
		u64 start, size;
		u64 *pde;		/* its first PDE (kept while cached) */
		int idx;		/* its vma_index(), if still so */
	} cache[MM_CACHE_MAX];
	u64 cache_bytes;
	int vma_max;			/* MM_VMA_SMALL or MM_VMA_BIG */
	struct vma *vma;		/* sorted by start, disjoint */
	struct mm_file *files;		/* a page, once a file is mapped;
					 * [0] unused, never shrinks */
	u32 nfiles;
	u32 nshared;			/* files[] entries .shared */
	u32 ninplace;			/* files[] entries .inplace */
};

void *kmalloc(size_t n);
void kfree(void *p);

void mm_init_kernel(void);
struct mm *mm_create(void);
void mm_put(struct mm *mm);
/* Pages in freed blocks kept for reuse, all address spaces: free memory
 * to sysinfo. */
extern u64 mm_cached_pages;
void mm_activate(struct mm *mm);
/* This CPU leaves every user address space (idle, exit). */
void mm_deactivate(void);
/* TLB shootdown (standard KVM, several vCPUs): see mm.c. */
extern bool mm_tlb_ipi_on;
void mm_tlb_init(bool on);
void mm_tlb_ipi(void);
void mm_tlb_return(struct cpu *c);
/* Inline: the mm files' callers fold it to a constant (mm_brk). */
static inline u64 pte_flags(u32 prot)
{
	u64 f = PTE_P | PTE_U;

	if (prot & PROT_WRITE)
		f |= PTE_W;
	if (!(prot & PROT_EXEC))
		f |= PTE_NX;
	return f;
}
int mm_map_page(struct mm *mm, u64 va, u64 pa, u64 flags);
int mm_map_huge(struct mm *mm, u64 va, u64 pa, u64 flags);
u64 *mm_walk(struct mm *mm, u64 va, bool create, bool *huge);
int mm_populate(struct mm *mm, u64 start, u64 end, u32 prot);
void mm_unmap_range(struct mm *mm, u64 start, u64 end);
int vma_insert(struct mm *mm, u64 start, u64 end, u32 prot, bool huge);
void vma_remove(struct mm *mm, u64 start, u64 end);
struct vma *vma_find(struct mm *mm, u64 va);

s64 mm_mmap_anon(struct mm *mm, u64 addr, u64 len, u32 prot, bool fixed);
s64 mm_mmap_borrow(struct mm *mm, u64 addr, u64 len, u32 prot, bool fixed,
		   u64 pa, u64 flen, u64 pte_extra);
s64 mm_mmap_shm(struct mm *mm, u64 addr, u64 len, u32 prot, bool fixed);
s64 mm_mmap_shared_file(struct mm *mm, u64 addr, u64 len, u32 prot,
			bool fixed, struct inode *n, u64 off);
s64 mm_munmap(struct mm *mm, u64 addr, u64 len);
s64 mm_mprotect(struct mm *mm, u64 addr, u64 len, u32 prot);
s64 mm_madvise(struct mm *mm, u64 addr, u64 len, u64 advice);
s64 mm_mremap(struct mm *mm, u64 old, u64 old_len, u64 new_len, u64 flags);
u64 mm_brk(struct mm *mm, u64 newbrk);
struct mm *mm_fork(struct mm *src);
/* [va, va + len), just mapped from ino at off: /proc/PID/maps names it;
 * shared: a writable MAP_SHARED mapping, whose stores go back to ino.
 * false when mm's table of files is full (unnamed, not written back). */
bool mm_label_file(struct mm *mm, u64 va, u64 len, struct inode *ino,
		   u64 off, bool shared);
/* The same for a MAP_SHARED mapping of ino's data in place. */
bool mm_label_inplace(struct mm *mm, u64 va, u64 len, struct inode *ino,
		      u64 off);
/* Drop the files entries that no VMA names any more (their references:
 * the last one frees shared anonymous memory). */
void mm_files_release(struct mm *mm);
/*
 * The pages of writable MAP_SHARED mappings in [start, end) that were
 * stored to, written back to their files (mm_shared.c); first error or 0.
 * sync: the host's fsync too (msync MS_SYNC).
 */
int mm_shared_writeback(struct mm *mm, u64 start, u64 end, bool sync);
void mm_map_step_cache(struct mm *mm);

#endif
