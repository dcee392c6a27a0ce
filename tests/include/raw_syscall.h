/* SPDX-License-Identifier: MIT */
/*
 * A system call by the `syscall` instruction with all six argument
 * registers, for test programs that must pass arguments no libc wrapper
 * would (wild pointers, odd sizes), or that have no libc at all.  Returns
 * the kernel's value as is: -errno on failure.
 */
#ifndef PV_TESTS_RAW_SYSCALL_H
#define PV_TESTS_RAW_SYSCALL_H

static inline long raw_syscall6(long nr, long a, long b, long c, long d,
				long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif
