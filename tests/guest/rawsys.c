// SPDX-License-Identifier: MIT
/*
 * System calls without libc: the `syscall` instruction and the i386
 * `int $0x80` gate (which arrives as #UD here), and hostile arguments.
 */
#include <stdint.h>

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory");
	return ret;
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
	if (bad)
		sys3(1, 2, (long)"bad results\n", 12);
	sys3(231, bad ? 1 : 42, 0, 0);
	for (;;)
		;
}
