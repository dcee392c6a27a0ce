// SPDX-License-Identifier: MIT
/*
 * First holes: of four padded 300 KiB blocks the middle two are unmapped
 * and must fault, and two new blocks of that size must land in their hole,
 * not above the last block (the kernel's gap hint, mm_mmap.c).
 * Then a malloc/free loop of blocks over 2 MiB that are not a multiple of
 * it (musl and glibc mmap and munmap such blocks).  Each round maps 3 MiB
 * and a few pages, checks it reads as zero, fills and unmaps it.  munmap of
 * the length asked for must give all of it back: 80 rounds are 240 MiB,
 * more than the guest has.  Then 200 rounds of 100-400 KiB blocks (one
 * 2 MiB page each, padded, while memory is plentiful: the padding must go
 * with them), and one block grown and shrunk by mremap, whose old bytes
 * stay and whose new ones read as zero, and blocks grown by mremap as
 * realloc() grows them (remap_chains()).  Then 3 MiB blocks (padded to
 * 4 MiB) unmapped in two pieces, tail or head first, as allocators that
 * trim do: the padding must go with the piece that ends where it starts.
 * Last, glibc's thread stacks: 8 MiB opened by mprotect in a PROT_NONE
 * reservation (2 MiB pages inside it, mm_populate()), a page unmapped in
 * the middle, MADV_DONTNEED at the thread's exit, munmap; the memory must
 * come back (8 rounds would leak 64 MiB).  Last, freed blocks the kernel
 * keeps for reuse (mm_mmap.c) must not show: each faults, mprotect and madvise
 * over one fail as over unmapped memory, a forked child does not inherit
 * them, and they count as free memory.  The fork comes after the parts
 * above have spent the 2 MiB frames: its copy of the stack's 2 MiB pages
 * must fall back to 4 KiB ones, not fail.  Prints a line per part.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <errno.h>
#include <unistd.h>

static int check(const unsigned char *p, size_t from, size_t to, int v,
		 const char *what)
{
	for (size_t i = from; i < to; i++) {
		if (p[i] != v) {
			printf("%s: byte %zu is %d, want %d\n", what, i, p[i], v);
			return 1;
		}
	}
	return 0;
}

static unsigned long free_mib(void)
{
	struct sysinfo si;

	return sysinfo(&si) ? 0 : si.freeram * si.mem_unit >> 20;
}

/* Map n bytes, check they read as zero, fill them with v; NULL on error. */
static unsigned char *map_fill(size_t n, int v, const char *what, int round)
{
	unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("%s: round %d: mmap failed\n", what, round);
		return NULL;
	}
	if (check(p, 0, n, 0, what))
		return NULL;
	memset(p, v, n);
	return p;
}

/* The guest's free memory must come back to within a few MiB (the
 * allocator's own page tables) of what it was before. */
static int free_back(unsigned long before, const char *what)
{
	unsigned long after = free_mib();

	if (after + 4 < before) {
		printf("%s: %lu MiB free before, %lu after\n", what, before,
		       after);
		return 1;
	}
	return 0;
}

static int small_blocks(void)
{
	unsigned long before = free_mib();

	for (int i = 0; i < 200; i++) {
		size_t n = (100ul << 10) * (1 + i % 4) + 4096 * (i % 3);
		unsigned char *p = map_fill(n, 0x5a, "small blocks", i);

		if (!p)
			return 1;
		if (munmap(p, n)) {
			printf("small blocks: round %d: munmap failed\n", i);
			return 1;
		}
	}
	/* All of it back, padding included. */
	if (free_back(before, "small blocks"))
		return 1;
	printf("small blocks: 200 rounds ok\n");
	return 0;
}

static int split_frees(void)
{
	unsigned long before = free_mib();
	const size_t head = 1ul << 20;

	for (int i = 0; i < 60; i++) {
		size_t n = (3ul << 20) + (100ul << 10);
		unsigned char *p = map_fill(n, 0x3c, "split frees", i);

		if (!p)
			return 1;
		if (i % 2 ? munmap(p + head, n - head) || munmap(p, head) :
			    munmap(p, head) || munmap(p + head, n - head)) {
			printf("split frees: round %d: munmap failed\n", i);
			return 1;
		}
	}
	if (free_back(before, "split frees"))
		return 1;
	printf("split frees: 60 rounds ok\n");
	return 0;
}

static int remap(void)
{
	size_t a = 300ul << 10, b = 1ul << 20, c = 3ul << 20;
	unsigned char *p = mmap(NULL, a, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	memset(p, 7, a);
	p = mremap(p, a, b, MREMAP_MAYMOVE);		/* grow: 1 MiB */
	if (p == MAP_FAILED || check(p, 0, a, 7, "mremap 1M") ||
	    check(p, a, b, 0, "mremap 1M"))
		return 1;
	memset(p, 9, b);
	p = mremap(p, b, a, MREMAP_MAYMOVE);		/* shrink back */
	if (p == MAP_FAILED || check(p, 0, a, 9, "mremap shrink"))
		return 1;
	p = mremap(p, a, c, MREMAP_MAYMOVE);		/* past 2 MiB */
	if (p == MAP_FAILED || check(p, 0, a, 9, "mremap 3M") ||
	    check(p, a, c, 0, "mremap 3M") || munmap(p, c))
		return 1;
	printf("mremap: grown, shrunk and grown again\n");
	return 0;
}

/*
 * Blocks grown as glibc's realloc() grows an mmapped chunk (Lua's big
 * tables): 1 MiB and a page, then mremap to 1.5x seven times, page
 * multiples and never 2 MiB ones.  The kernel keeps such a block padded
 * to 2 MiB pages (mm_mmap.c, mm_mremap_size()) and grows it inside the
 * padding or in place past it; with a block mapped after it (kind 1) it
 * moves, padded; mapped MAP_FIXED at the start of a PROT_NONE
 * reservation (kind 2) it has 4 KiB pages at its end and moves every
 * time, page by page; split by an mprotect and put back, it grows
 * unpadded.  Old bytes stay, new ones read as zero, and munmap of the
 * length asked for gives all of it back.
 */
static unsigned char *remap_chain(int kind, unsigned char *res)
{
	size_t len = (1ul << 20) + 4096, next;
	unsigned char *p = kind == 2 ?
		mmap(res, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) :
		mmap(NULL, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *after = kind == 1 ? map_fill(300ul << 10, 3,
						    "mremap chains", 0) : NULL;

	if (p == MAP_FAILED || (kind == 1 && !after))
		return NULL;
	memset(p, 1, len);
	for (int k = 0; k < 7; k++, len = next) {
		next = (len * 3 / 2 + 4095) & ~4095ul;
		p = mremap(p, len, next, MREMAP_MAYMOVE);
		if (p == MAP_FAILED || check(p, 0, len, k + 1, "mremap chains") ||
		    check(p, len, next, 0, "mremap chains")) {
			printf("mremap chains: kind %d, step %d\n", kind, k);
			return NULL;
		}
		memset(p, k + 2, next);
	}
	if (munmap(p, len) || (after && munmap(after, 300ul << 10)))
		return NULL;
	return p;
}

static int remap_chains(void)
{
	unsigned long before = free_mib();
	unsigned char *res = mmap(NULL, 32ul << 20, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	for (int i = 0; i < 21; i++) {
		if (res == MAP_FAILED || !remap_chain(i % 3, res)) {
			printf("mremap chains: round %d failed\n", i);
			return 1;
		}
		/* The reservation's piece, unmapped with the moved block. */
		if (i % 3 == 2 &&
		    mmap(res, 32ul << 20, PROT_NONE, MAP_PRIVATE |
			 MAP_ANONYMOUS | MAP_FIXED, -1, 0) != res)
			return 1;
	}
	munmap(res, 32ul << 20);
	/* 2 MiB pages split by an mprotect and put back (the VMA whole
	 * again, a page table inside it), then grown: not padded (a
	 * padded block freed is kept, and must be 2 MiB pages). */
	for (int i = 0; i < 4; i++) {
		size_t n = 4ul << 20, m = (5ul << 20) + 4096;
		unsigned char *p = map_fill(n, 4, "mremap split", i);

		if (!p || mprotect(p + (1ul << 20), 4096, PROT_READ) ||
		    mprotect(p + (1ul << 20), 4096, PROT_READ | PROT_WRITE) ||
		    (p = mremap(p, n, m, MREMAP_MAYMOVE)) == MAP_FAILED ||
		    check(p, 0, n, 4, "mremap split") ||
		    check(p, n, m, 0, "mremap split") || munmap(p, m)) {
			printf("mremap split: round %d failed\n", i);
			return 1;
		}
	}
	if (free_back(before, "mremap chains"))
		return 1;
	printf("mremap chains: 21 rounds ok\n");
	return 0;
}

static sigjmp_buf fault_env;

static void on_fault(int sig)
{
	siglongjmp(fault_env, sig);
}

/* Does reading p fault?  (SIGSEGV, caught here.) */
static int faults(const volatile unsigned char *p)
{
	struct sigaction sa = { .sa_handler = on_fault }, old;
	int sig;

	sigaction(SIGSEGV, &sa, &old);
	sig = sigsetjmp(fault_env, 1);
	if (!sig)
		(void)*p;
	sigaction(SIGSEGV, &old, NULL);
	return sig == SIGSEGV;
}

static int holes(void)
{
	const size_t n = 300ul << 10;
	unsigned char *b[4], *c[2];

	for (int i = 0; i < 4; i++)
		if (!(b[i] = map_fill(n, 0x11 * (i + 1), "holes", i)))
			return 1;
	if (munmap(b[1], n) || munmap(b[2], n))
		return 1;
	if (!faults(b[1]) || !faults(b[2] + n - 1)) {
		printf("holes: an unmapped block still reads\n");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		if (!(c[i] = map_fill(n, 0x77, "holes refill", i)))
			return 1;
	if (c[0] > b[3] || c[1] > b[3] || c[0] == c[1] ||
	    check(b[0], 0, n, 0x11, "holes first") ||
	    check(b[3], 0, n, 0x44, "holes last")) {
		printf("holes: new blocks at %p and %p, the last old one at %p\n",
		       (void *)c[0], (void *)c[1], (void *)b[3]);
		return 1;
	}
	for (int i = 0; i < 2; i++)
		if (munmap(c[i], n) || munmap(b[3 * i], n))
			return 1;
	printf("holes: refilled below the last block\n");
	return 0;
}

static int stacks(void)
{
	const size_t n = (8ul << 20) + 4096, mid = 3ul << 20;
	unsigned long before = free_mib();

	for (int i = 0; i < 8; i++) {
		unsigned char *p = mmap(NULL, n, PROT_NONE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED ||
		    mprotect(p + 4096, n - 4096, PROT_READ | PROT_WRITE)) {
			printf("stacks: round %d: mmap or mprotect failed\n", i);
			return 1;
		}
		if (check(p, 4096, n, 0, "stacks"))
			return 1;
		memset(p + 4096, 0x5a, n - 4096);
		if (!faults(p) || munmap(p + mid, 4096) || !faults(p + mid) ||
		    check(p, mid - 4096, mid, 0x5a, "stacks below the hole") ||
		    check(p, mid + 4096, mid + 8192, 0x5a, "stacks above it")) {
			printf("stacks: round %d: the guard or the hole reads\n",
			       i);
			return 1;
		}
		/* Linux's ENOMEM for a range with a hole: one call a side. */
		if (madvise(p + 4096, mid - 4096, MADV_DONTNEED) ||
		    madvise(p + mid + 4096, n - mid - 4096, MADV_DONTNEED) ||
		    check(p, 4096, mid, 0, "stacks after MADV_DONTNEED") ||
		    check(p, mid + 4096, n, 0, "stacks after MADV_DONTNEED") ||
		    munmap(p, n)) {
			printf("stacks: round %d: madvise or munmap failed\n", i);
			return 1;
		}
	}
	if (free_back(before, "stacks"))
		return 1;
	printf("stacks: 8 rounds ok\n");
	return 0;
}

static int kept(void)
{
	const size_t n = 300ul << 10;
	unsigned long before = free_mib();
	unsigned char *b[4];
	int status;
	pid_t pid;

	for (int i = 0; i < 4; i++)
		if (!(b[i] = map_fill(n, 0x33, "kept", i)))
			return 1;
	for (int i = 0; i < 4; i++)
		if (munmap(b[i], n))
			return 1;
	for (int i = 0; i < 4; i++) {
		if (!faults(b[i]) || !faults(b[i] + n - 1)) {
			printf("kept: freed block %d still reads\n", i);
			return 1;
		}
	}
	if (free_back(before, "kept"))
		return 1;
	pid = fork();
	if (pid == 0)
		_exit(faults(b[0]) && faults(b[3] + n - 1) ? 0 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("kept: fork failed, or its child reads a freed block\n");
		return 1;
	}
	if (mprotect(b[1], 4096, PROT_READ) == 0 || errno != ENOMEM ||
	    madvise(b[2], 4096, MADV_DONTNEED) == 0 || errno != ENOMEM) {
		printf("kept: mprotect or madvise over a freed block worked\n");
		return 1;
	}
	printf("kept: freed blocks fault, are not inherited, and are free\n");
	return 0;
}

int main(void)
{
	const int rounds = 80;

	if (holes())
		return 1;
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
	return small_blocks() || remap() || remap_chains() || split_frees() ||
	       stacks() || kept();
}
