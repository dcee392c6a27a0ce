// SPDX-License-Identifier: MIT
/*
 * Time: every clock comes from the TSC (guest TSC = host TSC, constant
 * rate; docs/design.md section 1), the wall clock anchored by the VMM.
 */
#include "kernel.h"
#include "task.h"
#include "vdso.h"

#define CLOCK_REALTIME			0
#define CLOCK_MONOTONIC			1
#define CLOCK_PROCESS_CPUTIME_ID	2
#define CLOCK_THREAD_CPUTIME_ID		3
#define CLOCK_MONOTONIC_RAW		4
#define CLOCK_REALTIME_COARSE		5
#define CLOCK_MONOTONIC_COARSE		6
#define CLOCK_BOOTTIME			7
#define TIMER_ABSTIME			1

static u64 clock_ns(u64 clk)
{
	struct task *t = current_task();
	u64 now = rdtsc();

	switch (clk) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
		return pv_realtime_ns(vvar, now);
	case CLOCK_PROCESS_CPUTIME_ID: {
		u64 sum = t->proc->utime_tsc;

		for (struct task *o = task_find_proc_next(t->proc, NULL); o;
		     o = task_find_proc_next(t->proc, o))
			sum += task_cpu_tsc(o, now);
		return ns_from_tsc(sum);
	}
	case CLOCK_THREAD_CPUTIME_ID:
		return ns_from_tsc(task_cpu_tsc(t, now));
	default:	/* as the vDSO: uapi/vclock.h */
		return pv_monotonic_ns(vvar, now);
	}
}

s64 sys_clock_gettime(u64 clk, u64 uts, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns, ts[2];

	(void)a2, (void)a3, (void)a4, (void)a5;
	if (clk > 11)
		return -EINVAL;
	ns = clock_ns(clk);
	ts[0] = ns / 1000000000;
	ts[1] = ns % 1000000000;
	if (!user_range_ok(uts, 16) || copy_to_user((void *)uts, ts, 16))
		return -EFAULT;
	return 0;
}

s64 sys_clock_getres(u64 clk, u64 uts, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ts[2] = { 0, 1 };

	(void)a2, (void)a3, (void)a4, (void)a5;
	if (clk > 11)
		return -EINVAL;
	if (uts && (!user_range_ok(uts, 16) || copy_to_user((void *)uts, ts, 16)))
		return -EFAULT;
	return 0;
}

s64 sys_gettimeofday(u64 utv, u64 utz, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns = clock_ns(CLOCK_REALTIME), tv[2];

	(void)utz, (void)a2, (void)a3, (void)a4, (void)a5;
	tv[0] = ns / 1000000000;
	tv[1] = ns % 1000000000 / 1000;
	if (utv && (!user_range_ok(utv, 16) || copy_to_user((void *)utv, tv, 16)))
		return -EFAULT;
	return 0;
}

s64 sys_time(u64 ut, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 sec = clock_ns(CLOCK_REALTIME) / 1000000000;

	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	if (ut && (!user_range_ok(ut, 8) || copy_to_user((void *)ut, &sec, 8)))
		return -EFAULT;
	return sec;
}

static s64 sleep_until_ns(u64 clk, u64 target_ns)
{
	u64 now = clock_ns(clk), deadline;
	s64 r;

	if (target_ns <= now)
		return 0;
	deadline = rdtsc() + tsc_from_ns(target_ns - now);
	r = sleep_on_until(NULL, deadline);
	return r == -ETIMEDOUT ? 0 : r;
}

s64 sys_clock_nanosleep(u64 clk, u64 flags, u64 ureq, u64 urem, u64 a4,
			u64 a5)
{
	s64 ts[2];
	u64 ns;

	(void)urem, (void)a4, (void)a5;
	if (clk > 11 || clk == CLOCK_THREAD_CPUTIME_ID)
		return -EINVAL;
	if (!user_range_ok(ureq, 16) || copy_from_user(ts, (void *)ureq, 16))
		return -EFAULT;
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
		return -EINVAL;
	ns = (u64)ts[0] * 1000000000ull + ts[1];
	if (!(flags & TIMER_ABSTIME))
		ns += clock_ns(clk);
	return sleep_until_ns(clk, ns);
}

s64 sys_nanosleep(u64 ureq, u64 urem, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a2, (void)a3, (void)a4, (void)a5;
	return sys_clock_nanosleep(CLOCK_MONOTONIC, 0, ureq, urem, 0, 0);
}

s64 sys_getcpu(u64 ucpu, u64 unode, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u32 cpu = current_task()->cpu->id, node = 0;

	(void)a2, (void)a3, (void)a4, (void)a5;
	if (ucpu && (!user_range_ok(ucpu, 4) || copy_to_user((void *)ucpu, &cpu, 4)))
		return -EFAULT;
	if (unode && (!user_range_ok(unode, 4) ||
		      copy_to_user((void *)unode, &node, 4)))
		return -EFAULT;
	return 0;
}

s64 sys_sched_getaffinity(u64 pid, u64 len, u64 umask, u64 a3, u64 a4, u64 a5)
{
	u64 mask = boot_params->ncpus >= 64 ? ~0ull
					    : (1ull << boot_params->ncpus) - 1;

	(void)pid, (void)a3, (void)a4, (void)a5;
	if (len < 8 || (len & 7))
		return -EINVAL;
	if (!user_range_ok(umask, 8) || copy_to_user((void *)umask, &mask, 8))
		return -EFAULT;
	return 8;
}

s64 sys_sched_yield(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	/* Switch here, as Linux does: the next thread (and this one, when
	 * it comes back) then leaves by return_to_user()'s fast path. */
	return sched_yield_fast();
}

/*
 * sysinfo: uptime and memory (glibc's sysconf(_SC_PHYS_PAGES) and
 * _SC_AVPHYS_PAGES, which qsort consults for big arrays).  No load
 * averages, swap or process count are kept: zero.
 */
s64 sys_sysinfo(u64 uinfo, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct {
		s64 uptime;
		u64 loads[3], totalram, freeram, sharedram, bufferram;
		u64 totalswap, freeswap;
		u16 procs, pad;
		u64 totalhigh, freehigh;
		u32 mem_unit;
		char pad2[4];
	} si = { 0 };

	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	si.uptime = ns_from_tsc(rdtsc()) / 1000000000ull;
	si.totalram = boot_params->mem_size;
	si.freeram = (pmem_free_pages() + mm_cached_pages) * PAGE_SIZE;
	si.mem_unit = 1;
	if (!user_range_ok(uinfo, sizeof(si)) ||
	    copy_to_user((void *)uinfo, &si, sizeof(si)))
		return -EFAULT;
	return 0;
}
