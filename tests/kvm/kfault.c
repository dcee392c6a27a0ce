// SPDX-License-Identifier: MIT
/*
 * The real guest kernel, broken on purpose: linked from the same objects
 * with this kernel_selftest(), which takes a fault at CPL0 while RSP is
 * not a kernel stack, as a broken system-call entry would (issue: the
 * first `syscall` on a standard KVM ran the kernel on the user stack and
 * hung).  The VM must end with exit 125, one line and a register dump.
 *
 * PROGRAM's name picks the case:
 *   mapped    RSP in the low half on mapped memory: the CPU pushes the
 *             #UD frame there and the trap handler, seeing its frame
 *             outside the kernel half, panics;
 *   unmapped  RSP on nothing: pushing the frame faults again, #DF, which
 *             runs on its own stack (IST 1) and panics.
 */
#include "boot.h"
#include "kernel.h"
#include "layout.h"

#define LOW_ALIAS	(510ull << 30)	/* PML4[0] = PML4[511]: RAM at 510 GiB */

void kernel_selftest(struct pv_boot_params *bp)
{
	u64 cr3, *pml4, rsp;

	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	pml4 = P2V(cr3 & ~0xfffull);
	if (!strcmp(bp->init_path, "/bin/mapped")) {
		/* The free page below the boot parameters, as a "user" stack. */
		pml4[0] = pml4[511];
		__asm__ volatile("mov %0, %%cr3" : : "r"(cr3) : "memory");
		rsp = LOW_ALIAS + PV_GDT_PHYS + PV_PAGE_SIZE;
	} else {
		rsp = 0x10000;
	}
	kprintf("kfault: ud2 at CPL0 with rsp %lx", rsp);
	__asm__ volatile("mov %0, %%rsp; ud2" : : "r"(rsp) : "memory");
}
