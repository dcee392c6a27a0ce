// SPDX-License-Identifier: MIT
/*
 * pread64 and pwrite64 on a file in /tmp, each result printed, for
 * comparison with the native run (tests/kvm/meson.build, check.sh -n).
 * In the guest these take the leaf paths of guest-kernel/file_leaf.S
 * when the case is plain and the full path (fs_rw.c) otherwise,
 * so the cases straddle every test that chooses: counts below and above
 * 64 bytes and MAX_RW_COUNT, offsets before, at, past the end and
 * negative, holes, growth inside and beyond what the file has allocated,
 * buffers NULL, unmapped, in the kernel half and non-canonical, wrong
 * access modes, bad descriptors, a pipe and a directory, and the
 * program's own file (the initramfs's data in the guest).  The huge count
 * is 2^60, past the user half with 5-level paging too (QEMU's CPU, where
 * the svm suite runs the native side, has it: 2^46 fitted there).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BIG	(64 * 4096)

static unsigned char *buf;

/* FNV-1a of n bytes */
static uint64_t hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The raw system calls: libc must not check or split anything. */
static long rd(int fd, void *b, uint64_t n, int64_t off)
{
	return syscall(SYS_pread64, fd, b, n, off);
}

static long wr(int fd, const void *b, uint64_t n, int64_t off)
{
	return syscall(SYS_pwrite64, fd, b, n, off);
}

/* The errno's name: the same natively (glibc or musl) and in the guest. */
static const char *errno_name(int e)
{
	switch (e) {
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case ESPIPE: return "ESPIPE";
	case EISDIR: return "EISDIR";
	case EFBIG: return "EFBIG";
	case ENOSPC: return "ENOSPC";
	default: return "other";
	}
}

static void show(const char *what, long r, const void *b)
{
	if (r < 0)
		printf("%s: -1 %s\n", what, errno_name(errno));
	else if (r > 0 && b)
		printf("%s: %ld %016llx\n", what, r,
		       (unsigned long long)hash(b, r));
	else
		printf("%s: %ld\n", what, r);
}

static void show_size(int fd)
{
	struct stat st;

	fstat(fd, &st);
	printf("size %lld\n", (long long)st.st_size);
}

static void reads(int fd)
{
	static const int64_t offs[] = { 0, 1, 4095, 4096, 8192, 9990, 9999,
					10000, 20000, -1, -4096, INT64_MIN };
	static const uint64_t lens[] = { 0, 1, 63, 64, 100, 4096, 10000,
					 0x7ffff000, 1ull << 60 };
	char what[64];

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			long r;

			memset(buf, 0xee, BIG);
			r = rd(fd, buf, lens[j], offs[i]);
			snprintf(what, sizeof(what), "pread %llu @%lld",
				 (unsigned long long)lens[j],
				 (long long)offs[i]);
			show(what, r, buf);
		}
	}
}

static void bad_buffers(int fd, int rdonly)
{
	void *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	void *bad[] = { NULL, gone, (void *)0xffffffff80000000ull,
			(void *)0x800000000000ull, (void *)-4096L };
	char what[64];

	munmap(gone, 8192);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(what, sizeof(what), "pread to bad %zu", i);
		show(what, rd(fd, bad[i], 4096, 0), NULL);
		snprintf(what, sizeof(what), "pwrite from bad %zu", i);
		show(what, wr(fd, bad[i], 4096, 0), NULL);
		show_size(fd);
	}
	/* Into read-only memory: the kernel must not write it. */
	show("pread to read-only", rd(fd, ro, 4096, 0), NULL);
	show("pwrite from read-only", wr(fd, ro, 4096, 0), NULL);
	show("pread on O_RDONLY", rd(rdonly, buf, 4096, 0), buf);
	show("pwrite on O_RDONLY", wr(rdonly, buf, 4096, 0), NULL);
}

static void writes(int fd, int wronly)
{
	static const struct { int64_t off; uint64_t len; } w[] = {
		{ 0, 4096 }, { 5, 100 }, { 5, 10 }, { 10000, 4096 },
		{ 14096, 64 }, { 20000, 4096 }, { 30000, 63 }, { -1, 4096 },
		{ INT64_MIN, 4096 }, { 40000, 0 }, { 24096, 1 },
	};
	char what[64];

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		for (int k = 0; k < BIG; k++)
			buf[k] = (unsigned char)(k * 7 + i);
		snprintf(what, sizeof(what), "pwrite %llu @%lld",
			 (unsigned long long)w[i].len, (long long)w[i].off);
		show(what, wr(fd, buf, w[i].len, w[i].off), NULL);
		show_size(fd);
	}
	show("pwrite on O_WRONLY", wr(wronly, buf, 4096, 100), NULL);
	show("pread on O_WRONLY", rd(wronly, buf, 4096, 0), NULL);
	/* The whole file back, holes read as zero. */
	show("whole file", rd(fd, buf, BIG, 0), buf);
	/* SQLite building an index: its temporary file grows by pages. */
	for (int p = 0; p < 64; p++) {
		memset(buf, p, 4096);
		if (wr(fd, buf, 4096, 40960 + 4096 * (int64_t)p) != 4096)
			printf("page %d: %s\n", p, errno_name(errno));
	}
	show_size(fd);
	show("grown file", rd(fd, buf, BIG, 40960), buf);
}

/*
 * A file mapped and then written: every pread after a pwrite sees the
 * write.  In a --dir share the guest keeps a copy of the host file for
 * the mapping, and reads and writes still go to the host file.
 */
static void mapped(int fd)
{
	void *m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);

	show("mmap of the file", m == MAP_FAILED ? -errno : 0, NULL);
	memset(buf, 0x5a, 4096);
	show("after mmap, pwrite 4096 @4096", wr(fd, buf, 4096, 4096), NULL);
	memset(buf, 0, 4096);
	show("after mmap, pread 4096 @4096", rd(fd, buf, 4096, 4096), buf);
	if (m != MAP_FAILED)
		munmap(m, 8192);
}

int main(void)
{
	char name[] = "/tmp/prw-XXXXXX";
	int fd = mkstemp(name), rdonly, wronly, p[2], dir, self;

	buf = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || buf == MAP_FAILED)
		return 1;
	for (int k = 0; k < 10000; k++)
		buf[k] = (unsigned char)(k * 13 + 1);
	if (write(fd, buf, 10000) != 10000)
		return 1;
	rdonly = open(name, O_RDONLY);
	wronly = open(name, O_WRONLY);
	reads(fd);
	bad_buffers(fd, rdonly);
	writes(fd, wronly);
	show("bad fd", rd(1000, buf, 4096, 0), NULL);
	/* Which error first: Linux's order. */
	show("bad fd, offset -1", rd(1000, buf, 4096, -1), NULL);
	show("O_WRONLY, huge count", rd(wronly, buf, 1ull << 60, 0), NULL);
	show("O_WRONLY, NULL", rd(wronly, NULL, 4096, 0), NULL);
	show("O_RDONLY, offset -1", wr(rdonly, buf, 4096, -1), NULL);
	show("fd -1", rd(-1, buf, 4096, 0), NULL);
	show("closed fd", wr(fd + 100, buf, 4096, 0), NULL);
	if (pipe(p))
		return 1;
	show("pread on a pipe", rd(p[0], buf, 4096, 0), NULL);
	show("pwrite on a pipe", wr(p[1], buf, 4096, 0), NULL);
	show("pipe, offset -1", rd(p[0], buf, 4096, -1), NULL);
	show("pipe's read end, pwrite", wr(p[0], NULL, 4096, 0), NULL);
	dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	show("pread on a directory", rd(dir, buf, 4096, 0), NULL);
	self = open("/proc/self/exe", O_RDONLY);
	show("own file, 4096 @0", rd(self, buf, 4096, 0), buf);
	show("own file, 64 @64", rd(self, buf, 64, 64), buf);
	show("own file, write", wr(self, buf, 4096, 0), NULL);
	mapped(fd);
	unlink(name);
	return 0;
}
