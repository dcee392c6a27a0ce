/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_SYNC_H
#define KERNEL_SYNC_H

/*
 * Kernel code runs with interrupts off, so a spinlock only has to keep other
 * vCPUs out.  A plain xchg loop: two emulated instructions uncontended.
 */
struct spinlock {
	volatile unsigned int locked;
};

static inline void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (l->locked)
			__builtin_ia32_pause();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
