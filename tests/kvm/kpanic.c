// SPDX-License-Identifier: MIT
/*
 * The real guest kernel with a way to panic on demand: system call 333,
 * which the real one lacks (ENOSYS), panics.  A program writes into a
 * host directory (--dir ...:rw) first, and the test checks the bytes are
 * on the host after the VM ended with exit 125 (tests/kvm/share.sh).
 */
#include "boot.h"
#include "kernel.h"

#define KPANIC_NR	333

extern u64 syscall_entries[];

/* Reached by entry.S's jump through syscall_entries[]: never returns. */
static void kpanic_syscall(void)
{
	panic("deliberate panic (kpanic test kernel, system call %d)",
	      KPANIC_NR);
}

void kernel_selftest(struct pv_boot_params *bp)
{
	(void)bp;
	syscall_entries[KPANIC_NR] = (u64)kpanic_syscall;
}
