/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_SYNC_H
#define KERNEL_SYNC_H

#include "kernel.h"

/*
 * Kernel code runs with interrupts off, so a spinlock only has to keep other
 * vCPUs out.  A plain xchg loop: two emulated instructions uncontended.
 */
struct spinlock {
	volatile unsigned int locked;
};

/*
 * With more vCPUs than host CPUs free, the holder may be a vCPU the host
 * preempted: spinning then lasts a host time slice (a 2-vCPU run on one
 * emulated CPU under QEMU took 29 s instead of 6, once over 240 s).  So
 * after SPIN_YIELD pauses the waiter gives its host CPU up, as a CPU's
 * pause-loop exiting would make KVM do (QEMU's emulated SVM has none).
 * On kvm_pvm a pause loop is emulated, 1024 of them a millisecond or so.
 */
#define SPIN_YIELD	1024

static inline void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
		unsigned int n = 0;

		while (l->locked) {
			__builtin_ia32_pause();
			if (++n == SPIN_YIELD) {
				hcall(PV_HC_YIELD, 0, 0, 0);
				n = 0;
			}
		}
	}
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
