// SPDX-License-Identifier: MIT
/*
 * Stores through writable MAP_SHARED mappings of files: run natively and
 * in the guest on a directory of the host's (tests/kvm/mapshared.sh), the
 * files it leaves must be the same byte for byte.
 *
 *   mapshared DIR
 *
 * DIR/exit     stored to, never unmapped: written back at exit
 * DIR/munmap   stored to, unmapped, then read() back
 * DIR/msync    stored to, msync(MS_SYNC), read() back, stored again
 * DIR/big      3 MiB and 5 bytes, stores in every 2 MiB page and past
 *              the end (within the last page: the file does not grow)
 * DIR/fork     stored to, forked, stored again and unmapped; the child,
 *              whose copy holds the first stores, exits after that
 * DIR/private  MAP_PRIVATE: the stores never reach the file
 * and a writable MAP_SHARED mapping of a file open read-only is EACCES.
 * Then "kill": DIR/kill stored to, and the program ends by SIGKILL.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

static const char *dir;
static int failed;

#define CHECK(c, ...) do { if (!(c)) { printf("FAILED %d: ", __LINE__); \
	printf(__VA_ARGS__); printf("\n"); failed = 1; } } while (0)

/* DIR/NAME made SIZE bytes of 'a'..'z', mapped writable as flags say. */
static char *map_new(const char *name, size_t size, int flags, int *fdp)
{
	char path[512], *buf = malloc(size), *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf) {
		printf("FAILED: open %s: %s\n", path, strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < size; i++)
		buf[i] = 'a' + i % 26;
	if (write(fd, buf, size) != (ssize_t)size) {
		printf("FAILED: write %s\n", path);
		exit(1);
	}
	free(buf);
	p = mmap(NULL, (size + PAGE - 1) & ~(size_t)(PAGE - 1),
		 PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED) {
		printf("FAILED: mmap %s: %s\n", path, strerror(errno));
		exit(1);
	}
	*fdp = fd;
	return p;
}

static void read_back(int fd, off_t off, const char *want)
{
	char got[64] = { 0 };
	size_t n = strlen(want);

	CHECK(pread(fd, got, n, off) == (ssize_t)n && !memcmp(got, want, n),
	      "read back at %lld: '%s', want '%s'", (long long)off, got, want);
}

int main(int argc, char **argv)
{
	char *p;
	int fd, st;
	pid_t child;
	int go[2];

	if (argc < 2)
		return 2;
	dir = argv[1];
	if (argc > 2 && !strcmp(argv[2], "kill")) {
		p = map_new("kill", 3 * PAGE, MAP_SHARED, &fd);
		memcpy(p + PAGE + 7, "killed after this", 17);
		raise(SIGKILL);
		return 1;
	}

	p = map_new("exit", 3 * PAGE, MAP_SHARED, &fd);
	memcpy(p, "first page", 10);
	memcpy(p + 2 * PAGE + 100, "third page", 10);

	p = map_new("munmap", 2 * PAGE, MAP_SHARED, &fd);
	memcpy(p + 10, "unmapped", 8);
	CHECK(munmap(p, 2 * PAGE) == 0, "munmap: %s", strerror(errno));
	read_back(fd, 10, "unmapped");

	p = map_new("msync", PAGE, MAP_SHARED, &fd);
	memcpy(p + 20, "synced", 6);
	CHECK(msync(p, PAGE, MS_SYNC) == 0, "msync: %s", strerror(errno));
	read_back(fd, 20, "synced");
	memcpy(p + 40, "after sync", 10);
	CHECK(msync(p + 1, PAGE, MS_SYNC) == -1 && errno == EINVAL,
	      "msync of an unaligned address");
	CHECK(msync(p, PAGE, MS_SYNC | MS_ASYNC) == -1 && errno == EINVAL,
	      "msync MS_SYNC|MS_ASYNC");

	p = map_new("big", 3 * 1024 * 1024 + 5, MAP_SHARED, &fd);
	for (size_t off = 0; off < 3 * 1024 * 1024; off += 1024 * 1024)
		memcpy(p + off + 4095, "across a page", 13);
	memcpy(p + 3 * 1024 * 1024, "01234567890", 11);	/* 6 past EOF */

	p = map_new("fork", PAGE, MAP_SHARED, &fd);
	memcpy(p, "before fork", 11);
	if (pipe(go))
		return 1;
	child = fork();
	if (child == 0) {
		char c;

		read(go[0], &c, 1);
		_exit(0);
	}
	memcpy(p, "after  fork", 11);
	CHECK(munmap(p, PAGE) == 0, "munmap: %s", strerror(errno));
	write(go[1], "x", 1);
	CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st), "child");
	read_back(fd, 0, "after  fork");

	p = map_new("private", PAGE, MAP_PRIVATE, &fd);
	memcpy(p, "never in the file", 17);
	CHECK(munmap(p, PAGE) == 0, "munmap: %s", strerror(errno));
	read_back(fd, 0, "abcdefghijklmnopq");

	{
		char path[512];
		int ro;

		snprintf(path, sizeof(path), "%s/private", dir);
		ro = open(path, O_RDONLY);
		CHECK(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ro,
			   0) == MAP_FAILED && errno == EACCES,
		      "writable MAP_SHARED of a read-only fd");
	}
	printf("mapshared: %s\n", failed ? "WRONG" : "ok");
	return failed;
}
