/* SPDX-License-Identifier: MIT */
/*
 * Memory calls as glibc and allocators use them, with their errno values:
 * mremap growing in place, moving (MREMAP_MAYMOVE) with the data kept,
 * shrinking; mmap of a file; realloc of big blocks (glibc: mremap);
 * mprotect to PROT_NONE and back keeping the data (in a forked child
 * too); the errors Linux gives for bad arguments.  DIR: a writable
 * directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "corpus.h"

#define MB (1ul << 20)

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (unsigned char)(seed + i / 4096);
}

static int check(const unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i += 4096)
		if (p[i] != (unsigned char)(seed + i / 4096))
			return 0;
	return 1;
}

static void say(const char *what, long r)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

int main(int argc, char **argv)
{
	char path[256];
	unsigned char *a, *b, *c, *big;
	int fd, st;

	/* Grow: 1 MiB to 3 MiB, in place or moved; the data stays. */
	a = mmap(NULL, MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	fill(a, MB, 7);
	b = mremap(a, MB, 3 * MB, MREMAP_MAYMOVE);
	printf("grow: %s, data %s, new part zero %s\n",
	       b == MAP_FAILED ? strerror(errno) : "ok",
	       b != MAP_FAILED && check(b, MB, 7) ? "kept" : "LOST",
	       b != MAP_FAILED && !b[2 * MB + 5] && !b[3 * MB - 1] ? "yes" : "NO");
	b[3 * MB - 1] = 1;
	/* Big blocks: 16 MiB moved with 2 MiB pages, then shrunk. */
	big = mmap(NULL, 16 * MB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fill(big, 16 * MB, 3);
	c = mremap(big, 16 * MB, 40 * MB, MREMAP_MAYMOVE);
	printf("grow big: %s, data %s\n", c == MAP_FAILED ? strerror(errno) : "ok",
	       c != MAP_FAILED && check(c, 16 * MB, 3) ? "kept" : "LOST");
	c = mremap(c, 40 * MB, 5 * MB, 0);
	printf("shrink: %s, data %s\n", c == MAP_FAILED ? strerror(errno) : "ok",
	       c != MAP_FAILED && check(c, 5 * MB, 3) ? "kept" : "LOST");
	say("munmap", munmap(c, 5 * MB));
	/* Errors, as Linux gives them. */
	errno = 0;
	say("mremap unaligned", (long)mremap(b + 1, MB, 2 * MB, MREMAP_MAYMOVE));
	say("mremap zero length", (long)mremap(b, MB, 0, MREMAP_MAYMOVE));
	say("mremap bad flags", (long)mremap(b, MB, 2 * MB, 0x80));
	munmap(b, 3 * MB);
	say("mremap unmapped", (long)mremap(b, MB, 2 * MB, MREMAP_MAYMOVE));
	/* mprotect: data survives PROT_NONE; a reservation opens zeroed. */
	a = mmap(NULL, 8 * MB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("mprotect open", mprotect(a + 4096, 6 * MB, PROT_READ | PROT_WRITE));
	printf("opened zero %s\n", !a[4096] && !a[6 * MB + 4095] ? "yes" : "NO");
	fill(a + 4096, 6 * MB, 5);
	say("mprotect none", mprotect(a + 4096, 6 * MB, PROT_NONE));
	if (fork() == 0) {	/* the child's copy has the data too */
		mprotect(a + 4096, 6 * MB, PROT_READ);
		_exit(check(a + 4096, 6 * MB, 5) ? 0 : 1);
	}
	say("wait", wait(&st));
	printf("child saw PROT_NONE data %s\n", WIFEXITED(st) && !WEXITSTATUS(st) ?
	       "kept" : "LOST");
	say("mprotect again", mprotect(a + 4096, 6 * MB, PROT_READ));
	printf("after PROT_NONE data %s\n", check(a + 4096, 6 * MB, 5) ? "kept" : "LOST");
	say("munmap reservation", munmap(a, 8 * MB));
	/* realloc of big blocks: glibc uses mremap for mmapped chunks. */
	a = NULL;
	for (size_t n = MB; n <= 32 * MB; n *= 2) {
		a = realloc(a, n);
		if (!a)
			return 1;
		fill(a + n / 2, n / 2, (unsigned int)n);
	}
	printf("realloc to 32 MiB: hash %016llx\n",
	       (unsigned long long)corpus_hash(a, 32 * MB));
	free(a);
	/* A file mapped read-only and privately writable. */
	snprintf(path, sizeof(path), "%s/map.bin", argc > 1 ? argv[1] : ".");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	a = corpus_alloc(3 * 4096 + 100);
	corpus_text(a, 3 * 4096 + 100, 9);
	if (fd < 0 || write(fd, a, 3 * 4096 + 100) != 3 * 4096 + 100)
		return 1;
	b = mmap(NULL, 4 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("file map: %s, equal %s, tail zero %s\n",
	       b == MAP_FAILED ? strerror(errno) : "ok",
	       b != MAP_FAILED && !memcmp(a, b, 3 * 4096 + 100) ? "yes" : "NO",
	       b != MAP_FAILED && !b[3 * 4096 + 100] && !b[4 * 4096 - 1] ? "yes" : "NO");
	c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 4096);
	if (c != MAP_FAILED)
		c[0] ^= 0xff;
	printf("private write: file unchanged %s\n",
	       c != MAP_FAILED && pread(fd, a, 1, 4096) == 1 && a[0] != c[0] ?
	       "yes" : "NO");
	errno = 0;
	say("mmap unaligned offset", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 100));
	close(fd);
	unlink(path);
	return 0;
}
