// SPDX-License-Identifier: MIT
/*
 * A malloc/free loop of blocks over 2 MiB that are not a multiple of it
 * (musl and glibc mmap and munmap such blocks).  Each round maps 3 MiB and
 * a few pages, checks it reads as zero, fills and unmaps it.  munmap of the
 * length asked for must give all of it back: 80 rounds are 240 MiB, more
 * than the guest has.  Prints "mmap loop: 80 rounds ok".
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
	const int rounds = 80;

	for (int i = 0; i < rounds; i++) {
		size_t n = (3ul << 20) + 4096 * (i % 7);
		unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			printf("mmap loop: round %d: mmap failed\n", i);
			return 1;
		}
		for (size_t off = 0; off < n; off += 4096) {
			if (p[off] || p[n - 1]) {
				printf("mmap loop: round %d: byte %zu not zero\n",
				       i, off);
				return 1;
			}
		}
		memset(p, 0xa5, n);
		if (munmap(p, n)) {
			printf("mmap loop: round %d: munmap failed\n", i);
			return 1;
		}
	}
	printf("mmap loop: %d rounds ok\n", rounds);
	return 0;
}
