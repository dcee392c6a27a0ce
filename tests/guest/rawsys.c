// SPDX-License-Identifier: MIT
/*
 * System calls without libc: the `syscall` instruction and the i386
 * `int $0x80` gate (which arrives as #UD here), and hostile arguments.
 */
#include <stdint.h>

#include "raw_syscall.h"

static long sys3(long nr, long a, long b, long c)
{
	return raw_syscall6(nr, a, b, c, 0, 0, 0);
}

static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory");
	return ret;
}

/*
 * Copies of fewer than 64 bytes go 8, 4 and 1 bytes at a time: a 13-byte
 * pipe round trip takes all three, and a small copy that runs off the end
 * of a mapping is -EFAULT at each width (a pipe, rt_sigprocmask's 8-byte
 * set, futex's 4-byte word).  0 when all is right.
 */
static int small_copies(void)
{
	static const char want[13] = "thirteen byte";
	static const long offs[3] = { 5, 9, 12 };
	char *p = (char *)raw_syscall6(9, 0, 8192, 3, 0x22, -1, 0);	/* mmap RW */
	int fds[2], bad = 0;

	if ((unsigned long)p > -4096ul || sys3(11, (long)(p + 4096), 4096, 0))
		return 1;	/* the page after p + 4096 is unmapped now */
	if (sys3(22, (long)fds, 0, 0))				/* pipe */
		return 1;
	bad |= sys3(1, fds[1], (long)want, 13) != 13;
	bad |= sys3(0, fds[0], (long)p, 13) != 13;
	for (int i = 0; i < 13; i++)
		bad |= p[i] != want[i];
	/* 13-byte reads into the page's last 5, 9 and 12 bytes: the 8-byte,
	 * the 4-byte and the byte store fault.  Writes from there: the loads. */
	for (int i = 0; i < 3; i++) {
		long off = offs[i];

		bad |= sys3(1, fds[1], (long)want, 13) != 13;
		bad |= sys3(0, fds[0], (long)(p + 4096 - off), 13) != -14;
		bad |= sys3(1, fds[1], (long)(p + 4096 - off), 13) != -14;
	}
	/* rt_sigprocmask: a set inside the page is read, one across is not. */
	bad |= raw_syscall6(14, 0, (long)(p + 4088), 0, 8, 0, 0) != 0;
	bad |= raw_syscall6(14, 0, (long)(p + 4092), 0, 8, 0, 0) != -14;
	/* FUTEX_WAIT: the word is read (0, not 1: -EAGAIN), or faults. */
	bad |= raw_syscall6(202, (long)(p + 4092), 0, 1, 0, 0, 0) != -11;
	bad |= raw_syscall6(202, (long)(p + 4096), 0, 0, 0, 0, 0) != -14;
	return bad;
}

static char msg[] = "via syscall\n";
static char msg80[] = "via int 0x80\n";

void _start(void)
{
	int bad = 0;

	sys3(1, 1, (long)msg, sizeof(msg) - 1);
	int80(4, 1, (long)msg80, sizeof(msg80) - 1);
	/* Kernel pointers and wild lengths: -EFAULT (14), never a fault. */
	bad |= sys3(1, 1, (long)0xffffffff80200000ul, 16) != -14;
	bad |= sys3(1, 1, (long)msg, 1l << 62) != -14;
	bad |= sys3(1, 1, 0x1000, 16) != -14;
	bad |= sys3(12345, 0, 0, 0) != -38;	/* -ENOSYS */
	bad |= sys3(16, 1, 0x5413, 0xffffffff80200000ul) > 0;
	bad |= sys3(158, 0x1003, (long)0xffffffff80200000ul, 0) != -14;
	bad |= small_copies();
	if (bad)
		sys3(1, 2, (long)"bad results\n", 12);
	sys3(231, bad ? 1 : 42, 0, 0);
	for (;;)
		;
}
