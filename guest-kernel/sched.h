/* SPDX-License-Identifier: MIT */
/*
 * Scheduler interface used by the rest of the kernel.
 *
 * Locking: one big kernel lock (BKL), taken on every entry from user mode
 * and dropped on the way back (kernel code is emulated at ~1 M
 * instructions/s, so finer locking buys nothing).  Interrupts are off in
 * the kernel.  Code holding the BKL may sleep: the lock passes to the next
 * task run on this CPU.
 */
#ifndef KERNEL_SCHED_H
#define KERNEL_SCHED_H

#include "kernel.h"

struct task;

/* A list of sleeping tasks, woken together. */
struct waitq {
	struct task *head;
};

/*
 * Block the current task until wake_all(wq).  Returns 0 when woken,
 * -EINTR when a signal is pending (callers re-check their condition
 * either way, as with any wait queue).
 */
int sleep_on(struct waitq *wq);
/* Same with a TSC deadline (0: none): -ETIMEDOUT when it passed. */
int sleep_on_until(struct waitq *wq, u64 deadline_tsc);
void task_wake(struct task *t);
void wake_all(struct waitq *wq);
bool signal_pending(struct task *t);

#endif
