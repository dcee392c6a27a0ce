// SPDX-License-Identifier: MIT
/*
 * futex: one wait queue for the whole kernel (tens of threads at most);
 * each sleeper records the address it waits on, as (address space, user
 * address), or for a shared futex in memory that processes share
 * (PTE_SHMEM) as (none, physical address), which every process mapping
 * it finds, as Linux keys such futexes by the page.  The BKL makes the
 * value check and the sleep atomic against FUTEX_WAKE.
 */
#include "kernel.h"
#include "mm.h"
#include "task.h"

#define FUTEX_WAIT		0
#define FUTEX_WAKE		1
#define FUTEX_REQUEUE		3
#define FUTEX_CMP_REQUEUE	4
#define FUTEX_WAKE_OP		5
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAKE_BITSET	10
#define FUTEX_CMD_MASK		0x7f
#define FUTEX_PRIVATE_FLAG	128
#define FUTEX_CLOCK_REALTIME	256

static struct waitq futex_q;

struct futex_key {
	struct mm *mm;			/* NULL: addr is physical */
	u64 addr;
};

static struct futex_key futex_key(struct mm *mm, u64 uaddr, u64 op)
{
	struct futex_key k = { mm, uaddr };
	bool huge;
	u64 *e;

	if (op & FUTEX_PRIVATE_FLAG)
		return k;
	e = mm_walk(mm, uaddr, false, &huge);
	if (e && !huge && (*e & PTE_SHMEM) && (*e & PTE_ADDR)) {
		k.mm = NULL;
		k.addr = (*e & PTE_ADDR) | (uaddr & (PAGE_SIZE - 1));
	}
	return k;
}

static int futex_wake_n(struct futex_key k, int n, struct futex_key to,
			int nrequeue)
{
	struct task *t = futex_q.head, *next;
	int woken = 0;

	for (; t; t = next) {
		next = t->wait_next;
		if (t->futex_key != k.addr || t->futex_mm != k.mm)
			continue;
		if (woken < n) {
			task_wake(t);
			woken++;
		} else if (nrequeue > 0) {
			t->futex_key = to.addr;
			t->futex_mm = to.mm;
			nrequeue--;
		}
	}
	return woken;
}

/* A thread's exit (CLONE_CHILD_CLEARTID): a shared futex if it is one. */
void futex_wake_addr(struct mm *mm, u64 uaddr, int n)
{
	futex_wake_n(futex_key(mm, uaddr, 0), n, (struct futex_key){ 0 }, 0);
}

static int futex_get(u64 uaddr, u32 *val)
{
	if ((uaddr & 3) || !user_range_ok(uaddr, 4))
		return -EINVAL;
	return copy_from_user(val, (void *)uaddr, 4) ? -EFAULT : 0;
}

/* Deadline in TSC ticks from a user timespec (relative or absolute). */
static int futex_deadline(u64 uts, bool absolute, bool realtime, u64 *out)
{
	s64 ts[2];
	u64 ns;

	*out = 0;
	if (!uts)
		return 0;
	if (!user_range_ok(uts, 16) || copy_from_user(ts, (void *)uts, 16))
		return -EFAULT;
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
		return -EINVAL;
	ns = (u64)ts[0] * 1000000000ull + ts[1];
	if (!absolute) {
		*out = rdtsc() + tsc_from_ns(ns);
		return 0;
	}
	if (realtime) {
		if (ns < boot_params->realtime_ns)
			ns = boot_params->realtime_ns;
		*out = boot_params->realtime_tsc +
		       tsc_from_ns(ns - boot_params->realtime_ns);
	} else {
		*out = tsc_from_ns(ns);
	}
	if (!*out)
		*out = 1;
	return 0;
}

static bool futex_op_cmp(u32 op, u32 oldval)
{
	u32 cmparg = op & 0xfff, cmp = (op >> 24) & 15;

	switch (cmp) {
	case 0: return oldval == cmparg;
	case 1: return oldval != cmparg;
	case 2: return (s32)oldval < (s32)cmparg;
	case 3: return (s32)oldval <= (s32)cmparg;
	case 4: return (s32)oldval > (s32)cmparg;
	default: return (s32)oldval >= (s32)cmparg;
	}
}

static s64 futex_wake_op(struct futex_key k, int n, u64 uaddr2,
			 struct futex_key k2, int n2, u32 op)
{
	u32 oparg = (op >> 12) & 0xfff, old, nv;
	int woken;

	if (op & (8u << 28))
		oparg = 1u << (oparg & 31);
	if (futex_get(uaddr2, &old))
		return -EFAULT;
	switch ((op >> 28) & 7) {
	case 0: nv = oparg; break;
	case 1: nv = old + oparg; break;
	case 2: nv = old | oparg; break;
	case 3: nv = old & ~oparg; break;
	default: nv = old ^ oparg; break;
	}
	if (copy_to_user((void *)uaddr2, &nv, 4))
		return -EFAULT;
	woken = futex_wake_n(k, n, k2, 0);
	if (futex_op_cmp(op, old))
		woken += futex_wake_n(k2, n2, k2, 0);
	return woken;
}

s64 sys_futex(u64 uaddr, u64 op, u64 val, u64 utime, u64 uaddr2, u64 val3)
{
	struct task *t = current_task();
	u32 cmd = op & FUTEX_CMD_MASK, cur;
	struct futex_key k = futex_key(t->mm, uaddr, op);
	u64 deadline;
	int err;

	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		err = futex_get(uaddr, &cur);
		if (err)
			return err;
		if (cur != (u32)val)
			return -EAGAIN;
		err = futex_deadline(utime, cmd == FUTEX_WAIT_BITSET,
				     op & FUTEX_CLOCK_REALTIME, &deadline);
		if (err)
			return err;
		t->futex_key = k.addr;
		t->futex_mm = k.mm;
		err = sleep_on_until(&futex_q, deadline);
		t->futex_key = 0;
		return err;
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
		return futex_wake_n(k, (int)val, k, 0);
	case FUTEX_CMP_REQUEUE:
		err = futex_get(uaddr, &cur);
		if (err)
			return err;
		if (cur != (u32)val3)
			return -EAGAIN;
		/* fall through */
	case FUTEX_REQUEUE:
		return futex_wake_n(k, (int)val,
				    futex_key(t->mm, uaddr2, op), (int)utime);
	case FUTEX_WAKE_OP:
		return futex_wake_op(k, (int)val, uaddr2,
				     futex_key(t->mm, uaddr2, op), (int)utime,
				     (u32)val3);
	default:
		return -ENOSYS;
	}
}
