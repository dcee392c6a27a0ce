// SPDX-License-Identifier: MIT
/*
 * Scheduler: one global FIFO run queue under the big kernel lock, per-CPU
 * idle tasks that `hlt`, 100 Hz preemption only while a task waits for a
 * CPU.  The switch points are explicit and few (sched_switch): per-thread
 * counter accounting hooks in exactly there.
 */
#include "fpu.h"
#include "kernel.h"
#include "mm.h"
#include "msr.h"
#include "perf_event.h"
#include "pmu_guest.h"
#include "pmu_switch.h"
#include "sync.h"
#include "stat.h"
#include "task.h"
#include "vclock.h"

/*
 * The VMM names the running thread from TSS.rsp0 alone (uapi/stat.h): a
 * field added to struct task before these moves them, and the build stops
 * here until uapi/stat.h's PV_TASK_* follow.
 */
#define SAMPLED(what, off)	_Static_assert(__builtin_offsetof what == (off), \
				       "vmm record's sampled layout: " #off)
SAMPLED((struct tss, rsp0), PV_TSS_RSP0);
SAMPLED((struct task, proc), PV_TASK_PROC);
SAMPLED((struct task, tid), PV_TASK_TID);
SAMPLED((struct task, comm), PV_TASK_COMM);
SAMPLED((struct proc, pid), PV_PROC_PID);
_Static_assert(KSTACK_SIZE == PV_KSTACK_SIZE, "vmm record's sampled layout");

struct spinlock bkl;			/* entry.S takes it too */
static struct task *runq_head, *runq_tail;
static struct task *timed_head;		/* sleepers with a deadline */
static struct task *all_tasks;
static struct task *kstack_free;
static u64 idle_mask;
static u64 kstack_next, kstack_end;

/*
 * return_to_user()'s one test (and entry.S's user_return), kept up to
 * date where the run queue and the timed sleepers change: bit 1 = a
 * sleeper with a deadline, or TLB shootdowns in use; bit 8 = the run
 * queue is not empty.  XORed with the CPU's need_resched (bit 0) and
 * timer_on (bit 8) it is 0 exactly when there is no preemption due, no
 * deadline to watch, no shootdown to answer, and the tick is on if and
 * only if a task waits for a CPU.
 */
u16 rtu_global;
u8 return_hooks;

void sched_rtu_update(void)
{
	rtu_global = (timed_head || mm_tlb_ipi_on || return_hooks ||
		      itimer_any()) << 1 |
		     (runq_head != NULL) << 8;
}

void bkl_lock(void)
{
	/* In the kernel now: a TLB shootdown need not wait for this CPU
	 * (it checks at return_to_user), and must not: IF is clear. */
	if (unlikely(mm_tlb_ipi_on))
		__atomic_store_n(&current_task()->cpu->in_user, false,
				 __ATOMIC_SEQ_CST);
	spin_lock(&bkl);
}

void bkl_unlock(void)
{
	spin_unlock(&bkl);
}

/* Kernel stacks are carved from 2 MiB pages: 16 KiB-aligned for free. */
struct task *task_alloc(void)
{
	struct task *t = kstack_free;
	u64 pa;

	if (t) {
		kstack_free = t->run_next;
	} else {
		if (kstack_next == kstack_end) {
			pa = huge_alloc_zero();
			if (!pa)
				return NULL;
			kstack_next = pa;
			kstack_end = pa + PV_HUGE_SIZE;
		}
		t = P2V(kstack_next);
		kstack_next += KSTACK_SIZE;
	}
	memset(t, 0, sizeof(*t));
	t->tf = task_user_frame(t);
	if (fpu_task_init(t)) {
		t->run_next = kstack_free;
		kstack_free = t;
		return NULL;
	}
	return t;
}

/* Only for tasks that never ran or are dead and off every CPU. */
void task_free(struct task *t)
{
	struct task **pp;

	for (pp = &all_tasks; *pp; pp = &(*pp)->all_next) {
		if (*pp == t) {
			*pp = t->all_next;
			break;
		}
	}
	kpmu_task_free(t);
	fpu_task_free(t);
	t->run_next = kstack_free;
	kstack_free = t;
}

void task_register(struct task *t)
{
	t->all_next = all_tasks;
	all_tasks = t;
}

/* Iterate the live threads of p: pass NULL first, then the last result. */
struct task *task_find_proc_next(struct proc *p, struct task *prev)
{
	struct task *t = prev ? prev->all_next : all_tasks;

	for (; t; t = t->all_next)
		if (t->proc == p && t->state != TASK_DEAD)
			return t;
	return NULL;
}

struct task *task_find(int tid)
{
	for (struct task *t = all_tasks; t; t = t->all_next)
		if (t->tid == tid && t->state != TASK_DEAD)
			return t;
	return NULL;
}

void sched_enqueue(struct task *t)
{
	t->state = TASK_RUNNABLE;
	t->run_next = NULL;
	if (runq_tail)
		runq_tail->run_next = t;
	else
		runq_head = t;
	runq_tail = t;
	rtu_global |= 1 << 8;
	/* An idle CPU takes it now rather than at its next tick. */
	if (idle_mask) {
		int cpu = __builtin_ctzll(idle_mask);

		idle_mask &= ~(1ull << cpu);
		lapic_ipi(cpu, VEC_RESCHED);
	}
}

static struct task *runq_pop(void)
{
	struct task *t = runq_head;

	if (t) {
		runq_head = t->run_next;
		if (!runq_head) {
			runq_tail = NULL;
			rtu_global &= ~(1 << 8);
		}
	}
	return t;
}

/* Saves callee-saved registers and rsp in *save, resumes at new_ksp. */
void switch_stacks(u64 *save, u64 new_ksp);
/* sched_yield_fast(): prev left at its user frame, resumes at new_ksp. */
void __attribute__((noreturn)) switch_from_user_frame(u64 *save,
						       struct trapframe *tf,
						       u64 new_ksp);

/* CPU time: prev's slice ends and next's begins at one rdtsc. */
static __always_inline void sched_account(struct task *prev,
					  struct task *next)
{
	u64 now = rdtsc();

	prev->run_tsc += now;
	next->run_tsc -= now;
	next->nr_switches++;
}

/*
 * The one place a CPU changes threads: counters, FPU, address space, TLS
 * base follow the thread here, and then the caller moves the kernel stack.
 */
static __always_inline void sched_switch_prepare(struct task *prev,
						 struct task *next,
						 struct cpu *c)
{
	sched_account(prev, next);
	if (prev->tpage || next->tpage)		/* counted threads only */
		kpmu_switch(prev, next, c);
	fpu_switch(prev, next, c);
	next->state = TASK_RUNNING;
	next->cpu = c;
	if (!next->mm && prev->mm) {
		/* Idle must not keep a process's page tables loaded: that
		 * process may exit on another CPU and free them. */
		mm_deactivate();
	}
	if (next->mm) {
		if (next->mm != prev->mm || !prev->mm)
			mm_activate(next->mm);
		if (next->fs_base != prev->fs_base || !prev->mm)
			wrmsr(MSR_FS_BASE, next->fs_base);
	}
	c->tss.rsp0 = (u64)next + KSTACK_SIZE;
}

static void sched_switch(struct task *prev, struct task *next, struct cpu *c)
{
	sched_switch_prepare(prev, next, c);
	switch_stacks(&prev->ksp, next->ksp);
	/* Back on this task's stack: no CPU runs on a dead task now. */
	if (unlikely(dead_list != NULL))
		task_reap_dead();
}

/*
 * next, the run queue's head, leaves it and prev joins the tail.  The
 * length is unchanged, so rtu_global's bit stays, and no idle CPU needs a
 * kick: one was sent when the queue last became non-empty under it.  No
 * branch: when next is alone, the tail's link is next's own, so the new
 * head read through it is prev (a running task's run_next is unused).
 */
static __always_inline void runq_rotate(struct task *prev, struct task *next)
{
	runq_tail->run_next = prev;
	runq_head = next->run_next;
	runq_tail = prev;
	prev->run_next = NULL;
	prev->state = TASK_RUNNABLE;
}

/* sched_yield_fast()'s general case: another process, or the FPU state
 * not in this CPU's registers. */
static void __attribute__((noinline, noreturn))
sched_yield_switch(struct task *prev, struct task *next, struct cpu *c)
{
	sched_switch_prepare(prev, next, c);
	switch_from_user_frame(&prev->ksp, task_user_frame(prev), next->ksp);
}

/* The rest of sched_switch_prepare() for two threads of one process with
 * prev's FPU state loaded on c, then the move to next. */
static __always_inline __attribute__((noreturn)) void
sched_yield_finish(struct task *prev, struct task *next, struct cpu *c)
{
	sched_account(prev, next);
	fpu_handover(prev, next, c);
	next->state = TASK_RUNNING;
	next->cpu = c;
	if (next->fs_base != prev->fs_base)
		wrmsr(MSR_FS_BASE, next->fs_base);
	c->tss.rsp0 = (u64)next + KSTACK_SIZE;
	switch_from_user_frame(&prev->ksp, task_user_frame(prev), next->ksp);
}

/* Counted threads: the counters follow first, inline.  Kept out of
 * sched_yield_fast(), which then saves no register for them. */
static void __attribute__((noinline, noreturn))
sched_yield_counted(struct task *prev, struct task *next, struct cpu *c)
{
	kpmu_switch_inline(prev, next, c);
	sched_yield_finish(prev, next, c);
}

/*
 * sched_yield with another thread ready, BKL held: the whole of prev's
 * state is its user frame, so it is left there, not inside schedule(): it
 * resumes in task_start (entry.S) as a new task does, straight into
 * return_to_user()'s test with 0 in rax.  No call chain to unwind on
 * either side.  Both are user threads (the run queue holds no idle task),
 * and the common case, threads of one process with prev's FPU state loaded
 * here, is one test and then, unless counted, no call that returns, so no
 * register is saved.  On kvm_pvm each instruction here is emulated at
 * ~1 us per switch.  Not while system calls are traced: the C dispatcher
 * logs the return.
 */
s64 sched_yield_fast(void)
{
	struct task *prev = current_task(), *next = runq_head;
	struct cpu *c = prev->cpu;

	if (unlikely(!next || syscall_slow)) {
		schedule();
		return 0;
	}
	c->need_resched = false;
	runq_rotate(prev, next);
	task_user_frame(prev)->rax = 0;
	if (unlikely(next->mm != prev->mm || !fpu_loaded(prev, c)))
		sched_yield_switch(prev, next, c);
	if (prev->tpage || next->tpage)
		sched_yield_counted(prev, next, c);
	sched_yield_finish(prev, next, c);
}

/* BKL held.  Runs the next runnable task; prev keeps running if none. */
void schedule(void)
{
	struct task *prev = current_task(), *next;
	struct cpu *c = prev->cpu;

	c->need_resched = false;
	next = runq_pop();
	if (!next) {
		if (prev->state == TASK_RUNNING)
			return;
		next = c->idle_task;
	} else if (prev->state == TASK_RUNNING && prev != c->idle_task) {
		sched_enqueue(prev);
	}
	if (next == prev) {
		prev->state = TASK_RUNNING;
		return;
	}
	sched_switch(prev, next, c);
}

static void waitq_remove(struct task *t)
{
	struct task **pp;

	if (!t->wq)
		return;
	for (pp = &t->wq->head; *pp; pp = &(*pp)->wait_next) {
		if (*pp == t) {
			*pp = t->wait_next;
			break;
		}
	}
	t->wq = NULL;
}

static void timed_remove(struct task *t)
{
	struct task **pp;

	if (!t->wake_tsc)
		return;
	for (pp = &timed_head; *pp; pp = &(*pp)->run_next) {
		if (*pp == t) {
			*pp = t->run_next;
			break;
		}
	}
	t->wake_tsc = 0;
	sched_rtu_update();
}

/* Make a sleeping task runnable (woken, timed out, or signalled). */
void task_wake(struct task *t)
{
	if (t->state != TASK_SLEEPING)
		return;
	waitq_remove(t);
	timed_remove(t);
	sched_enqueue(t);
}

int sleep_on_until(struct waitq *wq, u64 deadline_tsc)
{
	struct task *t = current_task();

	if (signal_pending(t))
		return -EINTR;
	t->state = TASK_SLEEPING;
	if (wq) {
		t->wq = wq;
		t->wait_next = wq->head;
		wq->head = t;
	}
	if (deadline_tsc) {
		t->wake_tsc = deadline_tsc;
		t->run_next = timed_head;
		timed_head = t;
		sched_rtu_update();
	}
	schedule();
	if (signal_pending(t))
		return -EINTR;
	if (deadline_tsc && rdtsc() >= deadline_tsc)
		return -ETIMEDOUT;
	return 0;
}

int sleep_on(struct waitq *wq)
{
	return sleep_on_until(wq, 0);
}

void wake_all(struct waitq *wq)
{
	while (wq->head)
		task_wake(wq->head);
}

bool signal_pending(struct task *t)
{
	return (t->sigpending | t->proc->sigpending) & ~t->sigmask;
}

/* Wake the timed sleepers whose deadline passed (after a tick). */
static void timers_check(void)
{
	u64 now = rdtsc();
	struct task *t = timed_head, *next;

	for (; t; t = next) {
		next = t->run_next;
		if (t->wake_tsc <= now)
			task_wake(t);
	}
}

/* Timer interrupt: no lock held here (it may come from the idle hlt). */
void sched_tick(void)
{
	struct cpu *c = current_task()->cpu;

	c->ticks++;
	c->need_resched = true;
	/* Multiplexing: more events than counters take turns, at the
	 * return to user mode (this runs without the BKL). */
	if (unlikely(current_task()->perf_waiting))
		current_task()->perf_rotate = true;
}

/*
 * Last stop before user mode (BKL held): preemption, signals, then the
 * lock goes.  Every path back to user mode comes through here; the
 * common case, nothing to do, is return_to_user()'s one combined test.
 */
static __attribute__((noinline)) void return_to_user_slow(struct task *t,
							   struct trapframe *tf)
{
	struct cpu *c = t->cpu;
	bool want;

	if (unlikely(itimer_any()))
		itimer_return(t);
	/* The VMM stopped (or started) stepping the kernel: the tick's rate
	 * follows now, not at the next tick, a second away at 1 Hz. */
	if (unlikely(c->timer_on))
		lapic_tick_adjust();
	for (;;) {
		if (unlikely(timed_head != NULL))
			timers_check();
		if (unlikely(itimer_any()))
			itimer_check_real();
		if (unlikely(t->perf_rotate)) {
			t->perf_rotate = false;
			perf_event_rotate(t);
		}
		if (unlikely(c->need_resched)) {
			schedule();
			c = t->cpu;
		}
		/* Tickless unless a task waits for a CPU or a deadline, or
		 * this one's events for a counter (multiplexing), or an
		 * interval timer is armed. */
		want = runq_head || timed_head || t->perf_waiting ||
		       itimer_any();
		if (unlikely(c->timer_on != want))
			lapic_timer_set(want);
		if (likely(!signal_pending(t)))
			break;
		signal_deliver(tf);
	}
	if (unlikely(return_hooks & RETURN_HOOK_WOKEN))
		kpmu_woken_return(c);
	kpmu_user_return(t, tf);
	if (unlikely(mm_tlb_ipi_on))
		mm_tlb_return(c);
	if (unlikely(return_hooks & RETURN_HOOK_KACCT))
		kacct_return(c, tf->rip);
	bkl_unlock();
}

/*
 * A leaf with no saved registers: on kvm_pvm each of these instructions
 * is emulated, and this runs at every system call, fault and interrupt
 * from user mode.  Anything that may want work sends it to the slow path:
 * a sleeper with a deadline, a preemption due, a tick to turn on or off,
 * a signal, the step source, a TLB shootdown.
 */
__attribute__((used)) void return_to_user(struct trapframe *tf)
{
	struct task *t = current_task();
	struct cpu *c = t->cpu;

	if (unlikely((c->rtu_word ^ rtu_global) || kpmu_step_on(c->vpage) ||
		     signal_pending(t))) {
		return_to_user_slow(t, tf);
		return;
	}
	tf->rflags &= ~RFLAGS_TF;
	bkl_unlock();
}

/* Each CPU's idle task: holds the BKL except while halted. */
void sched_idle(void)
{
	struct task *self = current_task();
	struct cpu *c = self->cpu;

	for (;;) {
		if (timed_head)
			timers_check();
		if (itimer_any())
			itimer_check_real();
		if (runq_head) {
			c->need_resched = true;
			schedule();
			continue;
		}
		lapic_timer_set(timed_head != NULL || itimer_any());
		idle_mask |= 1ull << c->id;
		bkl_unlock();
		/* sti's shadow covers hlt: a wakeup IPI cannot slip between. */
		__asm__ volatile("sti; hlt; cli" ::: "memory");
		bkl_lock();
		idle_mask &= ~(1ull << c->id);
		kpmu_woken(c);
	}
}

u64 ns_from_tsc(u64 tsc)
{
	return pv_ns_from_tsc(tsc, boot_params->tsc_khz);
}

u64 tsc_from_ns(u64 ns)
{
	u64 khz = boot_params->tsc_khz;

	return ns / 1000000 * khz + ns % 1000000 * khz / 1000000;
}
