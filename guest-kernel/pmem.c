// SPDX-License-Identifier: MIT
/*
 * Physical memory.  RAM the VMM handed over is zero (fresh anonymous host
 * memory), so pages come first from a bump pointer and need no clearing;
 * freed pages go on a free list and are cleared by the VMM (one hypercall,
 * native memset) when a zeroed page is wanted.  2 MiB pages come from the
 * top of RAM downwards so they stay aligned.
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
};

static struct pmem pm;

void pmem_init(const struct pv_boot_params *bp)
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
	} else if (pm.free_list) {
		pa = pm.free_list;
		pm.free_list = *(u64 *)P2V(pa);
		pm.nfree--;
		dirty = true;
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
