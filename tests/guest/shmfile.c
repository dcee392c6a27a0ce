// SPDX-License-Identifier: MIT
/*
 * MAP_SHARED mappings of one file are one memory, in every process that
 * maps it and with read() and write(), as on Linux: shm_open()'s objects
 * in /dev/shm, a database's shared-memory file.  Run natively and in the
 * guest (same stdout):
 *
 * - shm_open(), ftruncate() to 3 pages and 100 bytes, mmap of 4 pages;
 * - a forked child's stores through the inherited mapping are the
 *   parent's, and read() of the file sees them;
 * - a pwrite() of the parent's is in a child's own new mapping of the
 *   file opened by name, and that child's stores are in the parent's;
 * - a second, read-only mapping in the parent sees the first's stores;
 * - a store past the file's end in its last page is not in read();
 * - a process-shared mutex in the file, taken 2 x 5,000 times by two
 *   processes around a plain counter: no increment lost;
 * - the mapping outlives shm_unlink() and close().
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE	4096
#define SIZE	(3 * PAGE + 100)
#define LOCKS	5000

static int failed;
static char name[64];	/* the object's, this process's own */

#define CHECK(c, ...) do { if (!(c)) { printf("FAILED %d: ", __LINE__); \
	printf(__VA_ARGS__); printf("\n"); failed = 1; } } while (0)

struct counter {
	pthread_mutex_t lock;
	long n;
};

static int child_status(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int map_by_name_and_store(void)
{
	int fd = shm_open(name, O_RDWR, 0);
	char *q;

	if (fd < 0)
		return 1;
	q = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (q == MAP_FAILED || memcmp(q + 5000, "hello", 5))
		return 2;
	memcpy(q + 2 * PAGE, "world", 5);
	return 0;
}

static int lock_and_count(struct counter *c)
{
	for (int i = 0; i < LOCKS; i++) {
		if (pthread_mutex_lock(&c->lock))
			return 1;
		c->n++;
		if (pthread_mutex_unlock(&c->lock))
			return 1;
	}
	return 0;
}

int main(void)
{
	pthread_mutexattr_t ma;
	struct counter *c;
	char *p, *ro, buf[8];
	int fd, same = 1;
	pid_t pid;

	snprintf(name, sizeof(name), "/perfvisor-shmfile-%d", (int)getpid());
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, SIZE)) {
		perror("shm_open");
		return 2;
	}
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < PAGE; i++)
			p[i] = (char)(i * 3 + 1);
		_exit(0);
	}
	CHECK(child_status(pid) == 0, "child");
	for (int i = 0; i < PAGE; i++)
		same &= p[i] == (char)(i * 3 + 1);
	CHECK(same, "the child's stores are not the parent's");
	CHECK(pread(fd, buf, 4, 100) == 4 && !memcmp(buf, p + 100, 4),
	      "read() does not see the stores");
	printf("inherited mapping: shared, and in read()\n");

	CHECK(pwrite(fd, "hello", 5, 5000) == 5, "pwrite");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(map_by_name_and_store());
	CHECK(child_status(pid) == 0, "a child's own mapping");
	CHECK(!memcmp(p + 2 * PAGE, "world", 5), "its stores");
	printf("mapping by name: shared both ways\n");

	ro = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, PAGE);
	CHECK(ro != MAP_FAILED, "read-only mapping");
	p[PAGE + 7] = 'x';
	CHECK(ro != MAP_FAILED && ro[7] == 'x', "a second mapping");
	p[SIZE + 10] = 'z';
	CHECK(pread(fd, buf, 8, SIZE - 4) == 4, "read past the end");
	printf("second mapping, past the end: as Linux\n");

	c = (struct counter *)(p + 3 * PAGE);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	CHECK(!pthread_mutex_init(&c->lock, &ma), "mutex");
	c->n = 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(lock_and_count(c));
	CHECK(!lock_and_count(c), "lock");
	CHECK(child_status(pid) == 0 && c->n == 2 * LOCKS,
	      "counter %ld, want %d", c->n, 2 * LOCKS);
	printf("shared mutex: %ld\n", c->n);

	CHECK(!shm_unlink(name) && !close(fd), "unlink");
	p[0] = 'k';
	CHECK(p[0] == 'k' && p[2 * PAGE] == 'w', "after unlink");
	printf("shmfile: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
