// SPDX-License-Identifier: MIT
/*
 * Memory a program reserves and opens later (glibc's thread stacks and
 * arenas: mmap PROT_NONE, then mprotect read-write all but a guard page)
 * reads as zero, takes a system call's write, keeps a page's contents
 * across PROT_NONE and back, reads as zero after MADV_DONTNEED, and the
 * guard page stays inaccessible.
 * Prints one line per check; `reserve guard` ends by touching the guard
 * page (SIGSEGV, status 139).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1ul << 20)

int main(int argc, char **argv)
{
	size_t len = 64 * MIB;
	char *r = mmap(NULL, len + 4096, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;
	int fd[2];
	long sum = 0;

	if (r == MAP_FAILED || mprotect(r + 4096, len, PROT_READ | PROT_WRITE))
		return 1;
	p = r + 4096;
	for (size_t off = 0; off < len; off += 4 * MIB)
		sum += p[off];
	p[len - 1] = 7;
	printf("untouched pages read as zero: %s\n", sum == 0 ? "yes" : "no");
	/* The kernel writes into a page nobody touched yet. */
	if (pipe(fd) || write(fd[1], "kernel", 6) != 6 ||
	    read(fd[0], p + 9 * MIB + 100, 6) != 6)
		return 2;
	printf("read(2) into an untouched page: %.6s\n", p + 9 * MIB + 100);
	strcpy(p + 20 * MIB, "kept");
	if (mprotect(p + 20 * MIB, 4096, PROT_NONE) ||
	    mprotect(p + 20 * MIB, 4096, PROT_READ))
		return 3;
	printf("contents across PROT_NONE: %s, last byte %d\n", p + 20 * MIB,
	       p[len - 1]);
	/* glibc's arenas shrink with MADV_DONTNEED and take the memory for
	 * zeroed when they grow again, as Linux guarantees. */
	p[5 * MIB] = 9;
	if (madvise(p + 5 * MIB, 4096, MADV_DONTNEED))
		return 6;
	printf("after MADV_DONTNEED: %d\n", p[5 * MIB]);
	if (munmap(r, len + 4096))
		return 4;
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "guard")) {
		r = mmap(NULL, 2 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (r == MAP_FAILED || mprotect(r + 4096, MIB, PROT_READ))
			return 5;
		printf("guard: %d\n", r[4096]);
		fflush(stdout);
		return r[0];	/* still PROT_NONE */
	}
	return 0;
}
