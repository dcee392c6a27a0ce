// SPDX-License-Identifier: MIT
/* Faults in several ways; the VMM must exit with 128 + the Linux signal. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "null";

	printf("about to fault: %s\n", how);
	fflush(stdout);
	if (!strcmp(how, "null"))
		*(volatile int *)0 = 1;
	else if (!strcmp(how, "kernel"))
		*(volatile int *)0xffffffff80200000ul = 1;
	else if (!strcmp(how, "ud2"))
		__asm__ volatile("ud2");
	else if (!strcmp(how, "div0"))
		__asm__ volatile("xor %%ecx, %%ecx; mov $1, %%eax; cltd; idiv %%ecx"
				 ::: "eax", "ecx", "edx");
	else if (!strcmp(how, "int3"))
		__asm__ volatile("int3");
	else if (!strcmp(how, "io"))
		__asm__ volatile("outb %%al, %%dx" : : "a"(0), "d"(0x510));
	else if (!strcmp(how, "hlt"))
		__asm__ volatile("hlt");
	else if (!strcmp(how, "spin"))
		for (;;)
			__asm__ volatile("" ::: "memory");
	return 0;
}
