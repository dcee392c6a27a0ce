// SPDX-License-Identifier: MIT
/*
 * Kernel path costs inside the guest.  With no arguments: medians in
 * microseconds of a system call round trip (getpid, served by the leaf
 * path of entry.S: the cheapest kernel entry there is, so the floor of
 * the run; getppid, the full path), a futex wake with no waiter, a 4 KiB
 * pipe write and read, a fault delivered as SIGSEGV and returned from,
 * a 4 KiB pread and pwrite of a file in /tmp, and a thread switch
 * (sched_yield ping-pong of two threads on one vCPU, per switch), as one
 * JSON object.
 *
 * `kbench loop PATH N` runs one kernel path N times (plus one and 16
 * getppid calls at any N, start-up's) and nothing else, for
 * counting its kernel instructions exactly (tests/kvm/kbench_insns.sh runs
 * it under `vmm stat --source step -e instructions:k` at two N):
 *   getpid    syscall(SYS_getpid)
 *   getppid   syscall(SYS_getppid): the full system-call path, no work
 *   pipe      write then read 4 KiB through a pipe
 *   futex     FUTEX_WAKE with no waiter
 *   futexwait FUTEX_WAIT on a word that does not hold the value: the
 *             4-byte read of the word, then EAGAIN (no sleep)
 *   sigmask   rt_sigprocmask(SIG_BLOCK) of an empty set: an 8-byte copy
 *             in and one out
 *   yield     two threads on one vCPU: two switches per iteration
 *   fault     a read of address 0: the #PF, SIGSEGV delivery, a handler
 *             that steps over the 2-byte load, and rt_sigreturn (memory
 *             is mapped eagerly, so this is the guest's page-fault path)
 *   pread     pread64 of 4 KiB from a 256 KiB file in /tmp (the guest's
 *             in-memory tree: SQLite's temporary file), at page offsets
 *             that walk the file; the file is made at N = 0 too
 *   pwrite    pwrite64 of 4 KiB over that file, the same way
 *   brk       the heap grown by 64 MiB and shrunk back (raw brk)
 *   mremap    a block grown as glibc's realloc() grows an mmapped chunk
 *             (Lua's big tables): mmap of 1 MiB, then mremap(MAYMOVE)
 *             to 1.5x its size seven times (up to 17 MiB, each a page
 *             multiple and not a 2 MiB one), then munmap
 *   pmi       N virtual PMIs of a perf_event sampling user cycles into
 *             its mmap ring (what a program that samples itself costs:
 *             the PMI's entry, one PERF_RECORD_SAMPLE, the re-arm); the
 *             event is opened and mapped at N = 0 too
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <ucontext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf_abi.h"

static inline uint64_t rd_tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static volatile int stop;

static void *yielder(void *p)
{
	(void)p;
	while (!stop)
		sched_yield();
	return NULL;
}

/* Step over the faulting `mov (%rax), %al` (2 bytes) of fault_once(). */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] += 2;
}

static void fault_once(void)
{
	__asm__ volatile(".byte 0x8a, 0x00" : : "a"(0L) : "memory");
}

/* Far above the PMI's own cost on kvm_pvm (~0.4 ms), so none throttles. */
#define PMI_PERIOD	5000000
#define PMI_RECORD	24	/* header, ip, pid and tid */

static int loop_pmi(long n)
{
	uint64_t attr[PV_PERF_ATTR_SIZE_VER0 / 8] = { 0 };
	struct pv_perf_attr *a = (struct pv_perf_attr *)attr;
	volatile struct pv_perf_mmap_page *pg;
	int fd;

	a->type = PV_PERF_TYPE_HARDWARE;
	a->size = sizeof(attr);
	a->config = PV_PERF_COUNT_HW_CPU_CYCLES;
	a->sample_period = PMI_PERIOD;
	a->sample_type = PV_PERF_SAMPLE_IP | PV_PERF_SAMPLE_TID;
	a->flags = PV_PERF_ATTR_EXCLUDE_KERNEL;
	fd = syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
	if (fd < 0)
		return 1;
	pg = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		return 1;
	/* n records fit the one-page ring for the n the script uses. */
	while (pg->data_head < (uint64_t)n * PMI_RECORD)
		;
	return 0;
}

/* A 256 KiB file in the guest's in-memory /tmp, 4 KiB read or written at
 * a different page each time. */
static int loop_file(const char *path, long n)
{
	static char buf[4096];
	int fd = open("/tmp/kbench", O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return 1;
	for (int i = 0; i < 64; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	for (long i = 0; i < n; i++) {
		off_t off = (off_t)(i % 64) * 4096;

		if ((path[1] == 'r' ? pread(fd, buf, sizeof(buf), off) :
		     pwrite(fd, buf, sizeof(buf), off)) != sizeof(buf))
			return 1;
	}
	return close(fd);
}

static int loop_brk(long n)
{
	unsigned long cur = syscall(SYS_brk, 0);

	for (long i = 0; i < n; i++)
		if ((unsigned long)syscall(SYS_brk, cur + (64ul << 20)) !=
		    cur + (64ul << 20) ||
		    (unsigned long)syscall(SYS_brk, cur) != cur)
			return 1;
	return 0;
}

static int loop_mremap(long n)
{
	for (long i = 0; i < n; i++) {
		size_t len = (1u << 20) + 4096;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		for (int k = 0; k < 7; k++) {
			size_t next = (len * 3 / 2 + 4095) & ~4095ul;

			p = mremap(p, len, next, MREMAP_MAYMOVE);
			if (p == MAP_FAILED)
				return 1;
			len = next;
		}
		if (munmap(p, len))
			return 1;
	}
	return 0;
}

#define FUTEX_WAKE_PRIVATE_ 129	/* FUTEX_WAKE | FUTEX_PRIVATE_FLAG */
#define FUTEX_WAIT_PRIVATE_ 128	/* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */

static int loop_path(const char *path, long n)
{
	static char buf[4096];
	static int word;
	pthread_t t;
	int fd[2];

	if (!strcmp(path, "getpid")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getpid);
	} else if (!strcmp(path, "getppid")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else if (!strcmp(path, "pipe")) {
		if (pipe(fd))
			return 1;
		for (long i = 0; i < n; i++)
			if (write(fd[1], buf, sizeof(buf)) != sizeof(buf) ||
			    read(fd[0], buf, sizeof(buf)) != sizeof(buf))
				return 1;
	} else if (!strcmp(path, "futex")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE_, 1, 0, 0, 0);
	} else if (!strcmp(path, "futexwait")) {
		for (long i = 0; i < n; i++)
			if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE_, 1, 0,
				    0, 0) != -1)
				return 1;
	} else if (!strcmp(path, "sigmask")) {
		uint64_t set = 0, old;

		for (long i = 0; i < n; i++)
			if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &old, 8))
				return 1;
	} else if (!strcmp(path, "fault")) {
		struct sigaction sa = { .sa_sigaction = on_segv,
					.sa_flags = SA_SIGINFO };

		if (sigaction(SIGSEGV, &sa, NULL))
			return 1;
		for (long i = 0; i < n; i++)
			fault_once();
	} else if (!strcmp(path, "pmi")) {
		return loop_pmi(n);
	} else if (!strcmp(path, "brk")) {
		return loop_brk(n);
	} else if (!strcmp(path, "mremap")) {
		return loop_mremap(n);
	} else if (!strcmp(path, "pread") || !strcmp(path, "pwrite")) {
		return loop_file(path, n);
	} else if (!strcmp(path, "yield")) {
		/* The partner runs in both the N = 0 and the N = K run, so
		 * its creation cancels in the difference. */
		pthread_create(&t, NULL, yielder, NULL);
		sched_yield();
		for (long i = 0; i < n; i++)
			sched_yield();
		stop = 1;
		pthread_join(t, NULL);
	} else {
		fprintf(stderr, "kbench: unknown path %s\n", path);
		return 2;
	}
	return 0;
}

static void call_getpid(void)
{
	syscall(SYS_getpid);
}

static void call_getppid(void)
{
	syscall(SYS_getppid);
}

static int bench_word, bench_pipe[2];

static void call_futex(void)
{
	syscall(SYS_futex, &bench_word, FUTEX_WAKE_PRIVATE_, 1, 0, 0, 0);
}

static void call_pipe(void)
{
	static char buf[4096];

	if (write(bench_pipe[1], buf, sizeof(buf)) != sizeof(buf) ||
	    read(bench_pipe[0], buf, sizeof(buf)) != sizeof(buf))
		abort();
}

static int bench_file;

static void call_pread(void)
{
	static char buf[4096];

	if (pread(bench_file, buf, sizeof(buf), 8192) != sizeof(buf))
		abort();
}

static void call_pwrite(void)
{
	static char buf[4096];

	if (pwrite(bench_file, buf, sizeof(buf), 8192) != sizeof(buf))
		abort();
}

static void call_yield(void)
{
	sched_yield();
}

/* Median of 201 timed calls of fn, in microseconds. */
static double median_us(void (*fn)(void), double khz)
{
	enum { N = 201 };
	static uint64_t s[N];

	for (int i = 0; i < N; i++) {
		uint64_t t0 = rd_tsc();

		fn();
		s[i] = rd_tsc() - t0;
	}
	qsort(s, N, sizeof(s[0]), cmp);
	return s[N / 2] / khz;
}

int main(int argc, char **argv)
{
	double khz = 0, yield_us;
	pthread_t t;
	FILE *f;

	if (argc == 4 && !strcmp(argv[1], "loop")) {
		/* At any N: the boot's first system calls measure the
		 * kernel's trip, and each number's first call after that
		 * puts its fast entry back (design.md 4.6), so that two N's
		 * runs differ by N's iterations alone. */
		for (int i = 0; i < 16; i++)
			syscall(SYS_getppid);
		return loop_path(argv[2], atol(argv[3]) + 1);
	}
	f = fopen("/proc/self/exe", "r");

	(void)f;
	/* The TSC rate: 1 ms of nanosleep against rdtsc is too coarse here;
	 * the clock is TSC-based, so compare the two over 50 ms. */
	{
		struct timespec a, b;
		uint64_t x, y;

		clock_gettime(CLOCK_MONOTONIC, &a);
		x = rd_tsc();
		do
			clock_gettime(CLOCK_MONOTONIC, &b);
		while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 5e7);
		y = rd_tsc();
		khz = (y - x) / ((b.tv_sec - a.tv_sec) * 1e6 +
				 (b.tv_nsec - a.tv_nsec) / 1e3);
	}
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	printf("{\"getpid_us\": %.1f, ", median_us(call_getpid, khz));
	printf("\"getppid_us\": %.1f, ", median_us(call_getppid, khz));
	printf("\"futex_us\": %.1f, ", median_us(call_futex, khz));
	if (pipe(bench_pipe))
		return 1;
	printf("\"pipe_us\": %.1f, ", median_us(call_pipe, khz));
	printf("\"fault_us\": %.1f, ", median_us(fault_once, khz));
	bench_file = open("/tmp/kbench", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (bench_file < 0 || ftruncate(bench_file, 65536))
		return 1;
	printf("\"pread_us\": %.1f, ", median_us(call_pread, khz));
	printf("\"pwrite_us\": %.1f, ", median_us(call_pwrite, khz));
	pthread_create(&t, NULL, yielder, NULL);
	sched_yield();
	/* Each sched_yield() is to the other thread and back. */
	yield_us = median_us(call_yield, khz);
	stop = 1;
	pthread_join(t, NULL);
	printf("\"yield_roundtrip_us\": %.1f, \"switch_us\": %.1f}\n",
	       yield_us, yield_us / 2);
	return 0;
}
