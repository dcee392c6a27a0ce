// SPDX-License-Identifier: MIT
/*
 * MAP_SHARED | MAP_ANONYMOUS memory is one memory for every process that
 * inherits it by fork, as on Linux: a pre-forking server's scoreboard, a
 * test harness's page of results.  Run natively and in the guest (same
 * stdout):
 *
 * - a child's stores are the parent's, and the parent's after the fork
 *   are a later child's, down to a grandchild;
 * - two children add to one counter with atomics, on as many CPUs as
 *   there are: no addition lost;
 * - two processes pass the turn 200 times through process-shared
 *   semaphores in it (shared futexes: a waiter in one process is woken by
 *   a post in the other);
 * - a child that unmaps or execs leaves the parent's memory as it was;
 * - PROT_READ shared memory made writable by mprotect() in a child is
 *   still shared; MADV_DONTNEED keeps shared contents;
 * - an 8 MiB mapping, shared in its last page;
 * - 300 mappings of 8 KiB made and unmapped in turn: each is freed (the
 *   guest gives each a 2 MiB page, and the test runs in 256 MiB);
 * - MAP_PRIVATE memory stays each process's own.
 */
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE	4096
#define ADDS	20000
#define TURNS	200

static int failed;

#define CHECK(c, ...) do { if (!(c)) { printf("FAILED %d: ", __LINE__); \
	printf(__VA_ARGS__); printf("\n"); failed = 1; } } while (0)

static void *map(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

/* Run fn(arg) in a child; its exit status. */
static int child(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid;

	fflush(stdout);		/* or a child's exit prints it again */
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int store_pattern(void *arg)
{
	unsigned char *p = arg;

	for (int i = 0; i < 3 * PAGE; i++)
		p[i] = (unsigned char)(i * 7 + 1);
	return 0;
}

static int read_parent(void *arg)
{
	const unsigned char *p = arg;

	return p[5] == 0xab && p[2 * PAGE + 9] == 0xcd ? 0 : 1;
}

static int grandchild_store(void *arg)
{
	return child(store_pattern, arg);
}

static int adder(void *arg)
{
	atomic_long *n = arg;

	for (int i = 0; i < ADDS; i++)
		atomic_fetch_add(n, 1);
	return 0;
}

struct turns {
	sem_t mine, yours;
};

static int take_turns(void *arg)
{
	struct turns *t = arg;

	for (int i = 0; i < TURNS; i++)
		if (sem_wait(&t->mine) || sem_post(&t->yours))
			return 1;
	return 0;
}

static int unmapper(void *arg)
{
	return munmap(arg, 3 * PAGE) ? 1 : 0;
}

static int execer(void *arg)
{
	(void)arg;
	execl("/nonexistent-before", "x", (char *)NULL);	/* fails */
	execl("/proc/self/exe", "shmanon", "exit", (char *)NULL);
	return 3;
}

static int protect_store(void *arg)
{
	if (mprotect(arg, PAGE, PROT_READ | PROT_WRITE))
		return 1;
	((char *)arg)[100] = 'm';
	return 0;
}

static int store_last(void *arg)
{
	((char *)arg)[(8 << 20) - 1] = 'z';
	((char *)arg)[0] = 'a';
	return 0;
}

static int store_private(void *arg)
{
	((char *)arg)[0] = 'p';
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *p;
	int all_zero = 1, same = 1;
	atomic_long *n;
	struct turns *t;
	char *ro, *big, *priv;
	pid_t pids[2];

	if (argc > 1 && !strcmp(argv[1], "exit"))
		return 0;
	p = map(3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);
	for (int i = 0; i < 3 * PAGE; i++)
		all_zero &= p[i] == 0;
	CHECK(all_zero, "new shared memory not zero");
	CHECK(child(store_pattern, p) == 0, "child");
	for (int i = 0; i < 3 * PAGE; i++)
		same &= p[i] == (unsigned char)(i * 7 + 1);
	CHECK(same, "the child's stores are not the parent's");
	p[5] = 0xab;
	p[2 * PAGE + 9] = 0xcd;
	CHECK(child(read_parent, p) == 0, "a child does not see the parent's stores");
	memset(p, 0, 3 * PAGE);
	CHECK(child(grandchild_store, p) == 0 && p[3 * PAGE - 1] ==
	      (unsigned char)((3 * PAGE - 1) * 7 + 1), "grandchild's stores");
	printf("shared: child, parent, grandchild\n");

	n = map(PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(adder(n));
	}
	for (int i = 0; i < 2; i++)
		waitpid(pids[i], NULL, 0);
	CHECK(*n == 2 * ADDS, "counter %ld, want %d", (long)*n, 2 * ADDS);
	printf("atomics: %ld\n", (long)*n);

	t = map(PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);
	CHECK(!sem_init(&t->mine, 1, 0) && !sem_init(&t->yours, 1, 0),
	      "sem_init");
	fflush(stdout);
	pids[0] = fork();
	if (pids[0] == 0)
		_exit(take_turns(t));
	for (int i = 0; i < TURNS; i++)
		if (sem_post(&t->mine) || sem_wait(&t->yours))
			CHECK(0, "turn %d", i);
	waitpid(pids[0], NULL, 0);
	printf("semaphores: %d turns\n", TURNS);

	p[0] = 0x5a;
	CHECK(child(unmapper, p) == 0 && p[0] == 0x5a, "after a child's munmap");
	CHECK(child(execer, NULL) == 0 && p[0] == 0x5a, "after a child's exec");
	printf("unmap, exec: kept\n");

	ro = map(PAGE, PROT_READ, MAP_SHARED);
	CHECK(child(protect_store, ro) == 0 && ro[100] == 'm',
	      "mprotect()ed shared memory: %d", ro[100]);
	CHECK(!madvise(p, PAGE, MADV_DONTNEED) && p[0] == 0x5a,
	      "MADV_DONTNEED of shared memory: %#x", p[0]);
	big = map(8 << 20, PROT_READ | PROT_WRITE, MAP_SHARED);
	CHECK(child(store_last, big) == 0 && big[(8 << 20) - 1] == 'z' &&
	      big[0] == 'a', "8 MiB");
	printf("mprotect, madvise, 8 MiB: shared\n");

	for (int i = 0; i < 300; i++) {
		char *q = map(2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED);

		q[PAGE] = (char)i;
		if (munmap(q, 2 * PAGE)) {
			CHECK(0, "munmap %d", i);
			break;
		}
	}
	printf("300 mappings made and unmapped\n");

	priv = map(PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	priv[0] = 'q';
	CHECK(child(store_private, priv) == 0 && priv[0] == 'q',
	      "MAP_PRIVATE after fork: %c", priv[0]);
	printf("private: own\n");
	printf("shmanon: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
