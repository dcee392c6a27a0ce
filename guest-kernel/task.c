// SPDX-License-Identifier: MIT
#include "kernel.h"
#include "sync.h"
#include "task.h"

static struct spinlock kstack_lock;
static u64 kstack_next, kstack_end;

/* Kernel stacks are carved from 2 MiB pages: 16 KiB-aligned for free. */
struct task *task_alloc(void)
{
	struct task *t;
	u64 pa;

	spin_lock(&kstack_lock);
	if (kstack_next == kstack_end) {
		pa = huge_alloc_zero();
		if (!pa) {
			spin_unlock(&kstack_lock);
			return NULL;
		}
		kstack_next = pa;
		kstack_end = pa + PV_HUGE_SIZE;
	}
	pa = kstack_next;
	kstack_next += KSTACK_SIZE;
	spin_unlock(&kstack_lock);
	t = P2V(pa);
	memset(t, 0, sizeof(*t));
	t->tf = (struct trapframe *)((u8 *)t + KSTACK_SIZE) - 1;
	return t;
}

void task_exit_group(int status)
{
	for (;;)
		hcall(PV_HC_EXIT, status, 0, 0);
}

/* Killed by a signal: the shell's 128+N status (SIGSEGV -> 139). */
void task_kill_signal(int sig)
{
	task_exit_group(128 + sig);
}
