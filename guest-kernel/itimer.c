// SPDX-License-Identifier: MIT
/*
 * Interval timers: setitimer(2), getitimer(2) and alarm(2), which PAPI's
 * software overflow and profilers (SIGPROF) arm.  ITIMER_REAL counts wall
 * time, ITIMER_VIRTUAL and ITIMER_PROF the process's CPU time: its
 * threads' time on a CPU, user and kernel alike, since the kernel keeps no
 * split (so VIRTUAL runs as PROF does).  Each raises its signal to the
 * process at expiry and reloads from its interval.  They are checked on
 * the way back to user mode and at the tick, which stays on while any is
 * armed: a timer fires within a tick (10 ms) of its time, as Linux's did
 * at HZ=100.  fork() does not pass them on; execve() keeps them (Linux).
 */
#include "kernel.h"
#include "task.h"

#define ITIMER_REAL	0
#define ITIMER_VIRTUAL	1
#define ITIMER_PROF	2

static const int itimer_sig[3] = { SIGALRM, SIGVTALRM, SIGPROF };

/* Processes with a timer armed, through proc.itimer_next. */
struct proc *itimer_procs;

static u64 tsc_from_tv(const s64 tv[2])
{
	return tsc_from_ns((u64)tv[0] * 1000000000ull + (u64)tv[1] * 1000);
}

static void tv_from_tsc(s64 tv[2], u64 tsc)
{
	u64 us = (ns_from_tsc(tsc) + 999) / 1000;	/* 0 only when off */

	tv[0] = (s64)(us / 1000000);
	tv[1] = (s64)(us % 1000000);
}

static void itimer_list_update(struct proc *p)
{
	bool on = p->it_value[0] || p->it_value[1] || p->it_value[2];
	struct proc **pp;

	if (on == p->itimer_on)
		return;
	if (on) {
		p->itimer_next = itimer_procs;
		itimer_procs = p;
	} else {
		for (pp = &itimer_procs; *pp && *pp != p; pp = &(*pp)->itimer_next)
			;
		if (*pp)
			*pp = p->itimer_next;
	}
	p->itimer_on = on;
	sched_rtu_update();
}

/* What is left of timer `which` of p at now, in TSC ticks (0: off). */
static u64 itimer_left(const struct proc *p, int which, u64 now)
{
	u64 v = p->it_value[which];

	if (which != ITIMER_REAL || !v)
		return v;
	return v > now ? v - now : 1;
}

/* Charge t's CPU time since its last charge; raise what expired. */
static void itimer_fire(struct task *t, u64 now)
{
	struct proc *p = t->proc;
	u64 cpu = task_cpu_tsc(t, now), d = cpu - t->itimer_cpu;

	t->itimer_cpu = cpu;
	for (int w = ITIMER_VIRTUAL; w <= ITIMER_PROF; w++) {
		if (!p->it_value[w])
			continue;
		if (d < p->it_value[w]) {
			p->it_value[w] -= d;
			continue;
		}
		p->it_value[w] = p->it_interval[w];
		signal_send(t, itimer_sig[w], false);
	}
	if (p->it_value[ITIMER_REAL] && now >= p->it_value[ITIMER_REAL]) {
		p->it_value[ITIMER_REAL] = p->it_interval[ITIMER_REAL] ?
			now + p->it_interval[ITIMER_REAL] : 0;
		signal_send(t, SIGALRM, false);
	}
	itimer_list_update(p);
}

void itimer_return(struct task *t)
{
	if (t->proc && t->proc->itimer_on)
		itimer_fire(t, rdtsc());
}

/* At a tick on an idle CPU: real timers of processes none of whose
 * threads returns to user mode meanwhile. */
void itimer_check_real(void)
{
	u64 now = rdtsc();

	for (struct proc *p = itimer_procs, *next; p; p = next) {
		struct task *t = task_find_proc_next(p, NULL);

		next = p->itimer_next;
		if (t && p->it_value[ITIMER_REAL] &&
		    now >= p->it_value[ITIMER_REAL])
			itimer_fire(t, now);
	}
}

void itimer_proc_exit(struct proc *p)
{
	p->it_value[0] = p->it_value[1] = p->it_value[2] = 0;
	itimer_list_update(p);
}

/* struct itimerval: interval then value, each { tv_sec, tv_usec }. */
static int itimer_get(struct proc *p, int which, u64 uval, u64 now)
{
	s64 v[4];

	tv_from_tsc(v, p->it_interval[which]);
	tv_from_tsc(v + 2, itimer_left(p, which, now));
	if (!user_range_ok(uval, sizeof(v)) ||
	    copy_to_user((void *)uval, v, sizeof(v)))
		return -EFAULT;
	return 0;
}

s64 sys_getitimer(u64 which, u64 uval, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();

	(void)a2, (void)a3, (void)a4, (void)a5;
	if (which > ITIMER_PROF)
		return -EINVAL;
	itimer_return(t);
	return itimer_get(t->proc, (int)which, uval, rdtsc());
}

static s64 itimer_set(int which, const s64 v[4], u64 uold)
{
	struct task *t = current_task();
	struct proc *p = t->proc;
	u64 now = rdtsc(), value;
	s64 err;

	for (int i = 0; i < 4; i++)
		if (v[i] < 0 || ((i & 1) && v[i] >= 1000000))
			return -EINVAL;
	if (p->itimer_on)
		itimer_fire(t, now);
	if (uold && (err = itimer_get(p, which, uold, now)))
		return err;
	value = tsc_from_tv(v + 2);
	if ((v[2] || v[3]) && !value)
		value = 1;
	p->it_interval[which] = tsc_from_tv(v);
	if (which == ITIMER_REAL && value)
		value += now;
	p->it_value[which] = value;
	/* CPU time counts from now for every thread of the process. */
	for (struct task *o = task_find_proc_next(p, NULL); o;
	     o = task_find_proc_next(p, o))
		o->itimer_cpu = task_cpu_tsc(o, now);
	itimer_list_update(p);
	return 0;
}

s64 sys_setitimer(u64 which, u64 unew, u64 uold, u64 a3, u64 a4, u64 a5)
{
	s64 v[4] = { 0 };

	(void)a3, (void)a4, (void)a5;
	if (which > ITIMER_PROF)
		return -EINVAL;
	if (unew && (!user_range_ok(unew, sizeof(v)) ||
		     copy_from_user(v, (void *)unew, sizeof(v))))
		return -EFAULT;
	return itimer_set((int)which, v, uold);
}

/* alarm(): ITIMER_REAL in whole seconds; the seconds that were left. */
s64 sys_alarm(u64 secs, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct proc *p = current_task()->proc;
	s64 v[4] = { 0, 0, (s64)(u32)secs, 0 };
	u64 left = itimer_left(p, ITIMER_REAL, rdtsc());
	s64 err;

	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	err = itimer_set(ITIMER_REAL, v, 0);
	if (err)
		return err;
	/* Rounded, and never 0 for a timer that was still on (Linux). */
	return left ? (s64)((ns_from_tsc(left) + 500000000ull) / 1000000000ull) ?: 1
		    : 0;
}
