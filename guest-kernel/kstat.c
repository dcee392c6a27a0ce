// SPDX-License-Identifier: MIT
/*
 * Kernel entry counts (uapi/kstat.h).  entry.S increments them, one
 * `lock incq` per entry on paths it takes anyway (syscall_dispatch() for
 * the system calls entry.S does not dispatch itself); here they only live and
 * are handed to the VMM, which reads them when the guest has stopped.
 */
#include "asm_offsets.h"
#include "kernel.h"
#include "kstat.h"
#include "task.h"

struct pv_kstat kstat;

_Static_assert(__builtin_offsetof(struct pv_kstat, syscall) == KSTAT_SYSCALL,
	       "asm");
_Static_assert(PV_KSTAT_SYSCALLS == KSTAT_SYSCALLS, "asm");
_Static_assert(PV_KSTAT_VEC_TIMER == VEC_TIMER &&
	       PV_KSTAT_VEC_RESCHED == VEC_RESCHED &&
	       PV_KSTAT_VEC_PMI == VEC_PMI && PV_KSTAT_VEC_INT80 == VEC_INT80,
	       "the VMM names these vectors");

void kstat_init(const struct pv_boot_params *bp)
{
	if (bp->flags & PV_BOOT_KSTAT)
		hcall(PV_HC_KSTAT, V2P(&kstat), sizeof(kstat), 0);
}
