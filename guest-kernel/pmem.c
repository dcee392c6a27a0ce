// SPDX-License-Identifier: MIT
/*
 * Physical memory.  RAM the VMM handed over is zero (fresh anonymous host
 * memory), so pages come first from a bump pointer and need no clearing;
 * freed pages go on a free list and are cleared by the VMM (one hypercall,
 * native memset) when a zeroed page is wanted.  2 MiB pages come from the
 * top of RAM downwards so they stay aligned.
 *
 * The bump pointer and the top are published in the boot parameters
 * (mem_bump, mem_top): the VMM backs with host memory only what lies
 * outside them, so a big --mem costs the host nothing until the guest
 * takes it.  An allocation refused for lack of RAM is counted there too
 * (mem_refused), for the VMM's --mem hint at exit.
 */
#include "kernel.h"
#include "sync.h"

struct pmem {
	struct spinlock lock;
	u64 bump;		/* next never-used 4 KiB page */
	u64 top;		/* end of never-used memory (huge pages below) */
	u64 free_list;		/* physical address of the first free page */
	u64 nfree;
	u64 huge_free_list;
	u64 nhuge_free;
	struct pv_boot_params *bp;	/* where bump and top are published */
};

static struct pmem pm;

void pmem_init(struct pv_boot_params *bp)
{
	for (u32 i = 0; i < bp->nmemmap && i < PV_MAX_MEMMAP; i++) {
		const struct pv_memmap_entry *m = &bp->memmap[i];

		/* One contiguous RAM range is all the VMM gives today. */
		if (m->type == PV_MEM_RAM && m->size > pm.top - pm.bump) {
			pm.bump = ALIGN_UP(m->addr, PAGE_SIZE);
			pm.top = ALIGN_DOWN(m->addr + m->size, PV_HUGE_SIZE);
		}
	}
	if (pm.top <= pm.bump)
		panic("no usable RAM in the boot memory map");
	pm.bp = bp;
	bp->mem_bump = pm.bump;
	bp->mem_top = pm.top;
}

/* Out of 4 KiB pages (2 MiB ones fall back to them), or of the 2 MiB
 * frames the heap needs: the program gets ENOMEM, and the VMM says why
 * at exit. */
void pmem_refused(void)
{
	__atomic_add_fetch(&pm.bp->mem_refused, 1, __ATOMIC_RELAXED);
}

u64 page_alloc(void)
{
	u64 pa = 0;

	spin_lock(&pm.lock);
	if (pm.free_list) {
		pa = pm.free_list;
		pm.free_list = *(u64 *)P2V(pa);
		pm.nfree--;
	} else if (pm.bump < pm.top) {
		pa = pm.bump;
		pm.bump += PAGE_SIZE;
		pm.bp->mem_bump = pm.bump;
	} else {
		pmem_refused();
	}
	spin_unlock(&pm.lock);
	return pa;
}

u64 page_alloc_zero(void)
{
	u64 pa = 0;
	bool dirty = false;

	spin_lock(&pm.lock);
	if (pm.bump < pm.top) {
		pa = pm.bump;
		pm.bump += PAGE_SIZE;
		pm.bp->mem_bump = pm.bump;
	} else if (pm.free_list) {
		pa = pm.free_list;
		pm.free_list = *(u64 *)P2V(pa);
		pm.nfree--;
		dirty = true;
	} else {
		pmem_refused();
	}
	spin_unlock(&pm.lock);
	if (dirty)
		hcall(PV_HC_ZERO, pa, PAGE_SIZE, 0);
	return pa;
}

void page_free(u64 pa)
{
	spin_lock(&pm.lock);
	*(u64 *)P2V(pa) = pm.free_list;
	pm.free_list = pa;
	pm.nfree++;
	spin_unlock(&pm.lock);
}

/* A chain of n pages, each linked to the next through its first word
 * (an unmap collects them): one lock, not one per page. */
void page_free_chain(u64 head, u64 tail, u64 n)
{
	spin_lock(&pm.lock);
	*(u64 *)P2V(tail) = pm.free_list;
	pm.free_list = head;
	pm.nfree += n;
	spin_unlock(&pm.lock);
}

void huge_free_chain(u64 head, u64 tail, u64 n)
{
	spin_lock(&pm.lock);
	*(u64 *)P2V(tail) = pm.huge_free_list;
	pm.huge_free_list = head;
	pm.nhuge_free += n;
	spin_unlock(&pm.lock);
}

/*
 * Up to n never-used (so zero) 2 MiB pages in one run, the lowest at
 * *pa, in one lock: the count, 0 when freed ones are to be used first,
 * none is left or one is asked for (huge_alloc_zero() then, a page at a
 * time).  A heap grown
 * by 64 MiB takes 32 at once.
 */
u64 huge_alloc_run(u64 n, u64 *pa)
{
	u64 got;

	/* Unlocked, a hint: a stale answer only picks the other way. */
	if (n < 2 || __atomic_load_n(&pm.huge_free_list, __ATOMIC_RELAXED))
		return 0;
	spin_lock(&pm.lock);
	got = pm.huge_free_list ? 0 : (pm.top - pm.bump) / PV_HUGE_SIZE;
	if (got > n)
		got = n;
	pm.top -= got * PV_HUGE_SIZE;
	*pa = pm.top;
	pm.bp->mem_top = pm.top;
	spin_unlock(&pm.lock);
	return got;
}

u64 huge_alloc_zero(void)
{
	u64 pa = 0;
	bool dirty = false;

	spin_lock(&pm.lock);
	if (pm.huge_free_list) {
		pa = pm.huge_free_list;
		pm.huge_free_list = *(u64 *)P2V(pa);
		pm.nhuge_free--;
		dirty = true;
	} else if (pm.top - pm.bump >= PV_HUGE_SIZE) {
		pm.top -= PV_HUGE_SIZE;
		pa = pm.top;
		pm.bp->mem_top = pm.top;
	}
	spin_unlock(&pm.lock);
	if (dirty)
		hcall(PV_HC_ZERO, pa, PV_HUGE_SIZE, 0);
	return pa;
}

void huge_free(u64 pa)
{
	spin_lock(&pm.lock);
	*(u64 *)P2V(pa) = pm.huge_free_list;
	pm.huge_free_list = pa;
	pm.nhuge_free++;
	spin_unlock(&pm.lock);
}

u64 pmem_free_pages(void)
{
	return (pm.top - pm.bump) / PAGE_SIZE + pm.nfree +
	       pm.nhuge_free * (PV_HUGE_SIZE / PAGE_SIZE);
}
