/* SPDX-License-Identifier: MIT */
/*
 * Guest physical and virtual memory layout shared by the VMM and the guest
 * kernel.  The VMM builds the boot page tables, so both sides must agree on
 * where things are; nothing else in the layout is fixed.
 */
#ifndef PV_UAPI_LAYOUT_H
#define PV_UAPI_LAYOUT_H

/*
 * All guest RAM is mapped at KERNEL_BASE with 2 MiB pages: one mapping is
 * both the kernel image mapping (-mcmodel=kernel needs the top 2 GiB) and
 * the direct map, so guest RAM is limited to 2 GiB.
 */
#define PV_KERNEL_BASE		0xffffffff80000000ull
#define PV_MAX_MEM		(2048ull << 20)
#define PV_MIN_MEM		(32ull << 20)	/* kernel, 8 MiB stack, page tables */

/* Fixed low pages written by the VMM before the first instruction. */
#define PV_GDT_PHYS		0x1000ull	/* unused by the VMM, kept free */
#define PV_BOOT_PARAMS_PHYS	0x2000ull	/* struct pv_boot_params, 2 pages */
#define PV_PML4_PHYS		0x4000ull	/* boot PML4 */
#define PV_PDPT_PHYS		0x5000ull	/* PDPT for the KERNEL_BASE slot */
#define PV_PD_PHYS		0x6000ull	/* 2 PD pages: 2 GiB of 2 MiB pages */
#define PV_STEAL_PHYS		0x8000ull	/* KVM steal-time records, 64 B/vCPU */
#define PV_KERNEL_PHYS		0x200000ull	/* kernel image is linked here */

/* User address space (lower half). */
#define PV_USER_STACK_TOP	0x7ffffffff000ull
#define PV_USER_MMAP_BASE	0x7f0000000000ull
#define PV_USER_PIE_BASE	0x555555554000ull
#define PV_USER_TOP		0x800000000000ull

/*
 * The step source's code caches: one 2 MiB page under the 0x400000 where
 * non-PIE programs are linked, so that their RIP-relative operands reach
 * from a translated copy; a window of it per vCPU (vmm/core/step_cache.c).
 */
#define PV_STEP_CACHE_VA	0x200000ull
#define PV_STEP_CACHE_SIZE	0x200000ull

/*
 * Counter pages mapped read-only into processes that use counters (perf_
 * event_open, libvpmu): every vCPU's page, then one page per thread, at an
 * address given by its thread id so that threads of one address space see
 * their own.
 */
#define PV_VPMU_VCPU_VA		0x7e0000000000ull
#define PV_VPMU_MAX_TID		65536
#define PV_VPMU_THREAD_VA(tid)	(0x7e0000100000ull + 4096ull * (tid))
#define PV_VPMU_THREAD_VA_END	PV_VPMU_THREAD_VA(PV_VPMU_MAX_TID)

#define PV_PAGE_SIZE		4096ull
#define PV_HUGE_SIZE		(2ull << 20)

/* Selectors, Linux's layout, so user code sees the values it expects. */
#define PV_SEL_KCODE		0x10
#define PV_SEL_KDATA		0x18
#define PV_SEL_UDATA		0x2b
#define PV_SEL_UCODE		0x33
#define PV_SEL_TSS		0x40

#endif
