/* SPDX-License-Identifier: MIT */
/* System call implementations outside syscall.c, by file. */
#ifndef KERNEL_SYSCALLS_H
#define KERNEL_SYSCALLS_H

#include "kernel.h"

#define SYSCALL(name) s64 name(u64, u64, u64, u64, u64, u64)

/* proc.c */
SYSCALL(sys_clone);
SYSCALL(sys_fork);
SYSCALL(sys_vfork);
SYSCALL(sys_execve);
SYSCALL(sys_exit);
SYSCALL(sys_exit_group);
SYSCALL(sys_wait4);
/* signal.c */
SYSCALL(sys_rt_sigaction);
SYSCALL(sys_rt_sigprocmask);
SYSCALL(sys_rt_sigreturn);
SYSCALL(sys_kill);
SYSCALL(sys_tgkill);
SYSCALL(sys_tkill);
SYSCALL(sys_sigaltstack);
SYSCALL(sys_rt_sigsuspend);
/* futex.c */
SYSCALL(sys_futex);
/* itimer.c */
SYSCALL(sys_getitimer);
SYSCALL(sys_setitimer);
SYSCALL(sys_alarm);
/* time.c */
SYSCALL(sys_clock_gettime);
SYSCALL(sys_clock_getres);
SYSCALL(sys_clock_nanosleep);
SYSCALL(sys_nanosleep);
SYSCALL(sys_gettimeofday);
SYSCALL(sys_time);
SYSCALL(sys_getcpu);
SYSCALL(sys_sched_getaffinity);
SYSCALL(sys_sched_yield);
SYSCALL(sys_sysinfo);

#endif
