// SPDX-License-Identifier: MIT
/*
 * The VMA list of a user address space (see mm.c): a sorted array in a
 * page, moved to a 2 MiB page when it outgrows it; lookups, inserts that
 * merge with their neighbours as Linux merges VMAs, removal of a range,
 * and changes of protection or file label over a range.
 */
#include "mm_internal.h"

_Static_assert(MM_VMA_SMALL * sizeof(struct vma) <= PAGE_SIZE &&
	       MM_VMA_BIG * sizeof(struct vma) <= PV_HUGE_SIZE, "VMA arrays");

void vma_array_free(struct mm *mm)
{
	if (mm->vma_max == MM_VMA_BIG)
		huge_free(V2P(mm->vma));
	else
		page_free(V2P(mm->vma));
}

/* The list outgrew its page: move it to a 2 MiB one (one memcpy). */
int vma_array_grow(struct mm *mm)
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
int vma_add(struct mm *mm, const struct vma *n)
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

void vma_delete(struct mm *mm, int i)
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

/* Give [addr, end) protection prot in the VMA list, splitting VMAs. */
/*
 * [addr, end), which must be mapped, with protection prot and file index
 * file, each unless -1: the VMAs are split at its ends and merge with
 * neighbours that match (vma_add()).  mprotect and the naming of a file
 * mapping (mm_label_file()).
 */
int vma_change(struct mm *mm, u64 addr, u64 end, int prot, int file)
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

void mm_files_release(struct mm *mm)
{
	u8 used[MM_FILES_MAX];

	for (u32 i = 0; i < mm->nfiles; i++)
		used[i] = 0;
	for (int i = 0; i < mm->nvma; i++)
		used[mm->vma[i].file] = 1;
	for (u32 i = 1; i < mm->nfiles; i++) {
		struct mm_file *f = &mm->files[i];

		if (!f->ino || used[i])
			continue;
		mm->nshared -= f->shared;
		mm->ninplace -= f->inplace;
		inode_put(f->ino);
		f->ino = NULL;
		f->shared = f->inplace = false;
	}
}

/* A free slot of the files table, the table made if need be; 0: full. */
static u8 mm_file_slot(struct mm *mm)
{
	if (!mm->files) {
		mm->files = kmalloc(MM_FILES_MAX * sizeof(*mm->files));
		if (!mm->files)
			return 0;
		mm->nfiles = 1;
	}
	for (u32 pass = 0; pass < 2; pass++) {
		for (u32 i = 1; i < mm->nfiles; i++)
			if (!mm->files[i].ino)
				return (u8)i;
		if (mm->nfiles < MM_FILES_MAX)
			return (u8)mm->nfiles++;
		mm_files_release(mm);	/* entries of unmapped files */
	}
	return 0;
}

/* The files table entry of (ino, va_base), made if new (an in-place
 * mapping's always: munmap releases it on its own); 0 when full. */
static u8 mm_file_entry(struct mm *mm, struct inode *ino, u64 va_base,
			bool shared, bool inplace)
{
	u8 i;

	for (u32 j = 1; !inplace && mm->files && j < mm->nfiles; j++)
		if (mm->files[j].ino == ino &&
		    mm->files[j].va_base == va_base &&
		    mm->files[j].shared == shared && !mm->files[j].inplace)
			return (u8)j;
	i = mm_file_slot(mm);
	if (!i)
		return 0;	/* unnamed in maps, mapped all the same */
	inode_get(ino);
	mm->files[i].ino = ino;
	mm->files[i].va_base = va_base;
	mm->files[i].shared = shared;
	mm->files[i].inplace = inplace;
	mm->nshared += shared;
	mm->ninplace += inplace;
	return i;
}

static bool mm_label(struct mm *mm, u64 va, u64 len, struct inode *ino,
		     u64 off, bool shared, bool inplace)
{
	u8 file = mm_file_entry(mm, ino, va - off, shared, inplace);

	return file &&
	       !vma_change(mm, va, va + ALIGN_UP(len, PAGE_SIZE), -1, file);
}

/*
 * Name [va, end) in /proc/PID/maps as ino's bytes from off: split and
 * merged as an mprotect would (vma_change()), so only pieces of the same
 * file at the same base merge.
 */
bool mm_label_file(struct mm *mm, u64 va, u64 len, struct inode *ino,
		   u64 off, bool shared)
{
	return mm_label(mm, va, len, ino, off, shared, false);
}

bool mm_label_inplace(struct mm *mm, u64 va, u64 len, struct inode *ino,
		      u64 off)
{
	return mm_label(mm, va, len, ino, off, false, true);
}
