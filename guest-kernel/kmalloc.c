// SPDX-License-Identifier: MIT
/*
 * Small-object allocator: power-of-two classes from 32 bytes to 2 KiB carved
 * from pages, larger requests rounded to whole pages.  Objects are zeroed.
 */
#include "kernel.h"
#include "mm.h"
#include "sync.h"

#define KM_MIN_SHIFT	5
#define KM_CLASSES	7		/* 32 .. 2048 */

struct km_hdr {
	u64 npages;			/* for page-sized objects; 0 otherwise */
	u64 cls;
};

static struct spinlock km_lock;
static void *km_free[KM_CLASSES];

void *kmalloc(size_t n)
{
	size_t need = n + sizeof(struct km_hdr);
	struct km_hdr *h;
	int c = 0;

	if (need > (2048u)) {
		u64 np = ALIGN_UP(need, PAGE_SIZE) / PAGE_SIZE;
		u64 pa;

		/* Whole pages must be contiguous: take them from a huge page
		 * only when small; big objects are not used by the kernel. */
		if (np != 1)
			panic("kmalloc: %lu bytes unsupported", (unsigned long)n);
		pa = page_alloc_zero();
		if (!pa)
			return NULL;
		h = P2V(pa);
		h->npages = 1;
		return h + 1;
	}
	while ((32u << c) < need)
		c++;
	spin_lock(&km_lock);
	if (!km_free[c]) {
		u64 pa = page_alloc();
		u8 *p;

		if (!pa) {
			spin_unlock(&km_lock);
			return NULL;
		}
		p = P2V(pa);
		for (u64 off = 0; off < PAGE_SIZE; off += 32u << c) {
			*(void **)(p + off) = km_free[c];
			km_free[c] = p + off;
		}
	}
	h = km_free[c];
	km_free[c] = *(void **)h;
	spin_unlock(&km_lock);
	memset(h, 0, 32u << c);
	h->cls = c;
	return h + 1;
}

void kfree(void *p)
{
	struct km_hdr *h;

	if (!p)
		return;
	h = (struct km_hdr *)p - 1;
	if (h->npages) {
		page_free(V2P(h));
		return;
	}
	spin_lock(&km_lock);
	*(void **)h = km_free[h->cls];
	km_free[h->cls] = h;
	spin_unlock(&km_lock);
}
