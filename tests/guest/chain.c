// SPDX-License-Identifier: MIT
/*
 * A known call structure for `vmm record -g`: main -> outer -> inner, with
 * inner spinning, built with frame pointers, so the folded report must
 * show main;outer;inner holding most samples.  `chain N bad` spins with
 * rbp pointing nowhere useful instead (unmapped, unaligned, a frame that
 * points at itself): a hostile chain that must just end the VMM's walk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * GCC (12) gives a leaf that never touches the stack no frame, even with
 * -fno-omit-frame-pointer (and -mno-omit-leaf-frame-pointer): a sample
 * there would find rbp still outer's and miss outer.  The volatile local
 * lives on the stack, so inner sets up its frame.
 */
__attribute__((noinline, noipa)) unsigned long inner(unsigned long x, long n)
{
	volatile unsigned long acc = x;

	for (long i = 0; i < n; i++)
		acc = acc * 2862933555777941757ul + 3037000493ul;
	return acc;
}

__attribute__((noinline, noipa)) unsigned long outer(unsigned long x, long n)
{
	return inner(x, n) + 1;
}

/* n rounds of a loop with rbp set to fp; rbp is back when it returns. */
static void spin_with_rbp(unsigned long fp, long n)
{
	__asm__ volatile("mov %%rbp, %%r11\n\t"
			 "mov %0, %%rbp\n\t"
			 "1: dec %1\n\t"
			 "jnz 1b\n\t"
			 "mov %%r11, %%rbp"
			 : "+r"(fp), "+r"(n) : : "r11", "cc", "memory");
}

static void bad_frames(long n)
{
	unsigned long self[2];

	self[0] = (unsigned long)self;
	self[1] = (unsigned long)&bad_frames;
	for (int r = 0; r < 8; r++) {
		spin_with_rbp(0x7ffffffff000ul, n / 32);
		spin_with_rbp(0x1001, n / 32);
		spin_with_rbp((unsigned long)self, n / 32);
		spin_with_rbp(0xffffffff80001000ul, n / 32);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;

	if (argc > 2 && !strcmp(argv[2], "bad")) {
		bad_frames(n);
		return 0;
	}
	printf("%lu\n", outer(1, n));
	return 0;
}
