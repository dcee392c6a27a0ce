// SPDX-License-Identifier: MIT
/*
 * MAP_SHARED mappings.
 *
 * Of a file in guest memory, and of anonymous memory (a file outside the
 * tree), the pages are the file's data mapped in place: one memory for
 * every process that maps the file or inherits the mapping, and for
 * read() and write().  Each address space holds the file in its files
 * table, and the pages are mapped borrowed (fork shares them, munmap and
 * exit do not free them) and PTE_SHMEM (mprotect makes no private copy;
 * futex.c keys a shared futex there by its physical address).  The file
 * keeps its buffer while it lives (vfs_share_data()); anonymous memory
 * goes with the last reference: exit, exec, or the munmap that leaves no
 * VMA of it (mm_files_release()).
 *
 * Writable ones of host files (--dir) are anonymous memory filled from
 * the file (syscall.c, mmap_file()), so the pages the program stored to
 * (the dirty bit in their entries: the fill is the VMM's and sets none)
 * are written back to the file at msync, munmap, exec and exit, and a
 * program's results through a mapping reach a host file as its write()s
 * do.  Not shared between processes: a forked child's stores stay its
 * own (mm_fork()).
 */
#include "mm_internal.h"

s64 mm_mmap_shm(struct mm *mm, u64 addr, u64 len, u32 prot, bool fixed)
{
	struct inode *n;
	u64 cap = PAGE_SIZE, pa;
	u8 *data;
	s64 va;

	if (!len || len > (1ull << 40))
		return -EINVAL;
	len = ALIGN_UP(len, PAGE_SIZE);
	if (len == PAGE_SIZE) {
		pa = page_alloc_zero();
		data = pa ? P2V(pa) : NULL;
	} else {
		data = vfs_data_alloc(len, &cap);	/* zeroed 2 MiB pages */
	}
	n = data ? inode_new(VS_IFREG | 0600, VN_REG) : NULL;
	if (!n) {
		if (data)
			vfs_data_free(data, cap);
		return -ENOMEM;
	}
	n->nlink = 0;		/* no name: freed with its last reference */
	n->data = data;
	n->cap = cap;
	n->size = len;
	n->data_owned = 1;
	inode_get(n);
	va = mm_mmap_shared_file(mm, addr, len, prot, fixed, n, 0);
	inode_put(n);
	return va;
}

s64 mm_mmap_shared_file(struct mm *mm, u64 addr, u64 len, u32 prot,
			bool fixed, struct inode *n, u64 off)
{
	u64 end = ALIGN_UP(n->size, PAGE_SIZE), flen;
	s64 va;

	if (end > n->cap)
		end = n->cap;
	/* Whole pages of the buffer to its end: past the file's end in
	 * its last page, stores go to the buffer, as to a page cache
	 * page.  Pages past that are the mapping's own. */
	flen = off < end ? end - off : 0;
	va = mm_mmap_borrow(mm, addr, len, prot, fixed,
			    flen ? V2P(n->data + off) : 0, flen, PTE_SHMEM);
	if (va >= 0 && !mm_label_inplace(mm, (u64)va, len, n, off)) {
		mm_munmap(mm, (u64)va, len);
		return -ENOMEM;
	}
	return va;
}

/* A run of pages contiguous in memory and in the file, not yet written. */
struct wb_run {
	struct inode *ino;
	u64 pa, off, len;
};

static int wb_run_flush(struct wb_run *r)
{
	s64 n = r->len ? vfs_store_back(r->ino, P2V(r->pa), r->len, r->off)
		       : 0;

	r->len = 0;
	return n < 0 ? (int)n : 0;
}

/* Add one page; a run it does not extend is written first. */
static int wb_run_add(struct wb_run *r, struct inode *ino, u64 pa, u64 off)
{
	int err = 0;

	if (r->len && (r->ino != ino || r->pa + r->len != pa ||
		       r->off + r->len != off))
		err = wb_run_flush(r);
	if (!r->len) {
		r->ino = ino;
		r->pa = pa;
		r->off = off;
	}
	r->len += PAGE_SIZE;
	return err;
}

int mm_shared_writeback(struct mm *mm, u64 start, u64 end, bool sync)
{
	struct wb_run run = { 0 };
	int err = 0, e;

	for (int i = 0; i < mm->nvma; i++) {
		const struct vma *v = &mm->vma[i];
		const struct mm_file *mf = &mm->files[v->file];
		u64 lo = v->start > start ? v->start : start;
		u64 hi = v->end < end ? v->end : end;

		if (!v->file || !mf->shared || lo >= hi)
			continue;
		for (u64 va = lo; va < hi; va += PAGE_SIZE) {
			bool huge;
			u64 *pte = mm_walk(mm, va, false, &huge);
			u64 pa;

			/* PROT_NONE pages keep their frame and dirty bit */
			if (!pte || !(*pte & PTE_ADDR) || !(*pte & PTE_D))
				continue;
			pa = huge ? (*pte & PTE_ADDR & ~(PV_HUGE_SIZE - 1)) +
				    (va & (PV_HUGE_SIZE - 1))
				  : *pte & PTE_ADDR;
			e = wb_run_add(&run, mf->ino, pa, va - mf->va_base);
			err = err ? err : e;
		}
		e = wb_run_flush(&run);
		err = err ? err : e;
		if (sync && mf->ino->hh) {
			e = hostfs_fsync(mf->ino->hh);
			err = err ? err : e;
		}
	}
	return err;
}
