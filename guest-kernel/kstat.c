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

/*
 * For vmm stat --breakdown, which samples each vCPU's mode by kicking it
 * out of KVM_RUN every millisecond: kvm_pvm takes the kick during
 * emulated kernel code only at the next return to user mode, where the
 * sample would say "user" for the kernel's time.  So the kernel notes the
 * RIP of each return (every return then goes through
 * return_to_user_slow(): rtu_global bit 1), and a sample still there
 * counts as the kernel's.
 */
void kstat_init(const struct pv_boot_params *bp)
{
	if (!(bp->flags & PV_BOOT_KSTAT))
		return;
	hcall(PV_HC_KSTAT, V2P(&kstat), sizeof(kstat), 0);
	return_hooks |= RETURN_HOOK_KACCT;
	sched_rtu_update();
}

void kacct_return(struct cpu *c, u64 rip)
{
	if (c->id < PV_KSTAT_CPUS)
		__atomic_store_n(&kstat.return_rip[c->id], rip,
				 __ATOMIC_RELEASE);
}
