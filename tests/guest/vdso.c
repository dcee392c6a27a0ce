// SPDX-License-Identifier: MIT
/*
 * The vDSO's clocks, built against musl and glibc (static).
 *
 *   vdso loop N	N calls of clock_gettime(CLOCK_MONOTONIC): the kernel
 *			instructions they take are counted from outside
 *			(tests/kvm/vdso_insns.sh) and must be ~0 per call
 *   vdso rawloop N	the same through syscall(SYS_clock_gettime): the
 *			cost without the vDSO
 *   vdso check		the values: monotonic, equal to the raw system
 *			call's, time() and gettimeofday() against
 *			CLOCK_REALTIME, getcpu, fallbacks, after fork;
 *			CPU-time clocks across thread switches
 *   vdso bench N	µs per call, vDSO and raw system call
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("FAIL %s:%d: ", __func__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		failures++;						\
	}								\
} while (0)

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int64_t libc_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	return ns_of(&ts);
}

static int64_t raw_ns(clockid_t clk)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, clk, &ts))
		return -1;
	return ns_of(&ts);
}

/* The vDSO and the kernel compute one formula from one TSC: a system call
 * between two vDSO reads must land between them, to the ns. */
static void check_clock(clockid_t clk, const char *name)
{
	int64_t prev = libc_ns(clk);

	for (int i = 0; i < 20; i++) {
		int64_t a = libc_ns(clk), r = raw_ns(clk), b = libc_ns(clk);

		CHECK(a >= prev && a <= r && r <= b,
		      "%s: vdso %lld, syscall %lld, vdso %lld (previous %lld)",
		      name, (long long)a, (long long)r, (long long)b,
		      (long long)prev);
		prev = b;
	}
	for (int i = 0; i < 100000; i++) {
		int64_t now = libc_ns(clk);

		CHECK(now >= prev, "%s went back: %lld after %lld", name,
		      (long long)now, (long long)prev);
		if (now < prev)
			break;
		prev = now;
	}
}

static void check_wall(void)
{
	for (int i = 0; i < 10; i++) {
		int64_t a = libc_ns(CLOCK_REALTIME), b;
		struct timeval tv;
		time_t t, t2 = 0;

		CHECK(gettimeofday(&tv, NULL) == 0, "gettimeofday failed");
		t = time(&t2);
		b = libc_ns(CLOCK_REALTIME);
		CHECK(t == t2, "time() returned %lld, stored %lld",
		      (long long)t, (long long)t2);
		CHECK(t >= a / 1000000000 && t <= b / 1000000000,
		      "time() %lld outside [%lld, %lld] ns", (long long)t,
		      (long long)a, (long long)b);
		CHECK((int64_t)tv.tv_sec * 1000000 + tv.tv_usec >= a / 1000 &&
		      (int64_t)tv.tv_sec * 1000000 + tv.tv_usec <= b / 1000,
		      "gettimeofday %lld.%06lld outside [%lld, %lld] ns",
		      (long long)tv.tv_sec, (long long)tv.tv_usec,
		      (long long)a, (long long)b);
	}
	/* A wall clock after 2020, not seconds since boot. */
	CHECK(time(NULL) > 1577836800, "time() = %lld", (long long)time(NULL));
}

static void check_rest(void)
{
	struct timespec res = { 7, 7 };
	unsigned int cpu = 99, node = 99;
	int64_t c;

	CHECK(getauxval(AT_SYSINFO_EHDR) != 0, "no AT_SYSINFO_EHDR");
	CHECK(clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0 &&
	      res.tv_nsec == 1, "clock_getres: %lld.%09lld",
	      (long long)res.tv_sec, (long long)res.tv_nsec);
	/* CPU time is the kernel's: the vDSO hands it on. */
	c = libc_ns(CLOCK_PROCESS_CPUTIME_ID);
	CHECK(c > 0, "CLOCK_PROCESS_CPUTIME_ID: %lld", (long long)c);
	c = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK(c > 0, "CLOCK_THREAD_CPUTIME_ID: %lld", (long long)c);
	CHECK(clock_gettime(12345, &res) != 0, "clock 12345 accepted");
	CHECK(syscall(SYS_getcpu, &cpu, &node, NULL) == 0,
	      "getcpu system call failed");
	CHECK(sched_getcpu() == (int)cpu, "sched_getcpu %d, system call %u",
	      sched_getcpu(), cpu);
}

static void check_all(void)
{
	check_clock(CLOCK_MONOTONIC, "CLOCK_MONOTONIC");
	check_clock(CLOCK_REALTIME, "CLOCK_REALTIME");
	check_clock(CLOCK_BOOTTIME, "CLOCK_BOOTTIME");
	check_clock(CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE");
	check_clock(CLOCK_REALTIME_COARSE, "CLOCK_REALTIME_COARSE");
	check_wall();
	check_rest();
}

#define SPIN_NS 20000000

static void spin_ns(int64_t ns)
{
	int64_t end = libc_ns(CLOCK_MONOTONIC) + ns;

	while (libc_ns(CLOCK_MONOTONIC) < end)
		;
}

static volatile int spin_done;

/*
 * Spins until its own CPU time has grown by SPIN_NS, not for SPIN_NS of
 * wall time: a host preemption of the vCPU while another thread runs
 * counts as that thread's time, so a wall-clock spin may get less CPU
 * time than it lasted (one CI run: 16.1 of 20 ms).
 */
static void *spin_thread(void *arg)
{
	int64_t end = libc_ns(CLOCK_THREAD_CPUTIME_ID) + SPIN_NS;

	(void)arg;
	while (libc_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
	spin_done = 1;
	return NULL;
}

/*
 * The CPU-time clocks follow each thread across switches (the kernel's
 * per-switch accounting, sched.c): a spin counts and a sleep does not;
 * while this thread yields to a spinning one on one vCPU it gets little,
 * and the spinner's time stays in the process's after it exits.
 */
static void check_cputime(void)
{
	int64_t w0, w1, t0, t1, p0, p1, y0;
	pthread_t th;

	/* The wall-clock reads bracket the CPU-time ones, and the spin
	 * starts after the first: the host may preempt the vCPU anywhere,
	 * and that time counts as the thread's, as on Linux.  1 us of slack:
	 * the two clocks round to nanoseconds apart. */
	w0 = libc_ns(CLOCK_MONOTONIC);
	t0 = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	spin_ns(SPIN_NS);
	t1 = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	w1 = libc_ns(CLOCK_MONOTONIC);
	CHECK(t1 - t0 > SPIN_NS - 1000 && t1 - t0 < w1 - w0 + 1000,
	      "a %d ns spin within %lld ns took %lld ns of CPU time", SPIN_NS,
	      (long long)(w1 - w0), (long long)(t1 - t0));
	w0 = libc_ns(CLOCK_MONOTONIC);
	t0 = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	usleep(SPIN_NS / 1000);
	t1 = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	w1 = libc_ns(CLOCK_MONOTONIC);
	CHECK(t1 - t0 < (w1 - w0) / 2,
	      "a %d ns sleep within %lld ns took %lld ns of CPU time", SPIN_NS,
	      (long long)(w1 - w0), (long long)(t1 - t0));
	t0 = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	p0 = libc_ns(CLOCK_PROCESS_CPUTIME_ID);
	CHECK(p0 >= t0, "process CPU time %lld below the thread's %lld",
	      (long long)p0, (long long)t0);
	/* The spin's baseline, the process's clock first and last: this
	 * thread's time between the two clocks' reads can then only add.
	 * Read the other way round, a host preemption between t0 and p0
	 * (this thread's time, as on Linux) left the spin 0.8 ms short in a
	 * loaded CI run. */
	p0 = libc_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	spin_done = 0;
	if (pthread_create(&th, NULL, spin_thread, NULL)) {
		CHECK(0, "pthread_create failed");
		return;
	}
	y0 = libc_ns(CLOCK_THREAD_CPUTIME_ID);	/* glibc's create is slow */
	while (!spin_done)
		sched_yield();
	pthread_join(th, NULL);
	t1 = libc_ns(CLOCK_THREAD_CPUTIME_ID);
	p1 = libc_ns(CLOCK_PROCESS_CPUTIME_ID);
	CHECK((p1 - p0) - (t1 - t0) >= SPIN_NS - 1000,
	      "a thread's %d ns spin added %lld ns to the process's CPU time",
	      SPIN_NS, (long long)((p1 - p0) - (t1 - t0)));
	/* On one vCPU the yielding thread runs only between the spinner's
	 * slices: less than the spinner, whatever the host preempts. */
	if (sysconf(_SC_NPROCESSORS_ONLN) == 1)
		CHECK(t1 - y0 < (p1 - p0) - (t1 - t0),
		      "yielding to a spinner on one CPU took %lld ns, the "
		      "spinner %lld", (long long)(t1 - y0),
		      (long long)((p1 - p0) - (t1 - t0)));
}

static double us_per_call(int n, int raw)
{
	int64_t t0 = libc_ns(CLOCK_MONOTONIC);

	for (int i = 0; i < n; i++)
		raw ? raw_ns(CLOCK_MONOTONIC) : libc_ns(CLOCK_MONOTONIC);
	return (libc_ns(CLOCK_MONOTONIC) - t0) / 1e3 / n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "check";
	int n = argc > 2 ? atoi(argv[2]) : 0;
	int status;
	pid_t pid;

	if (!strcmp(mode, "loop")) {
		struct timespec ts;

		for (int i = 0; i < n; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		return 0;
	}
	if (!strcmp(mode, "rawloop")) {
		for (int i = 0; i < n; i++)
			raw_ns(CLOCK_MONOTONIC);
		return 0;
	}
	if (!strcmp(mode, "bench")) {
		printf("clock_gettime: vdso %.3f us, system call %.3f us\n",
		       us_per_call(n, 0), us_per_call(n / 100 + 1, 1));
		return 0;
	}
	check_all();
	check_cputime();
	/* The child's copy of the address space keeps the vDSO. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		check_all();
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid &&
	      WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the forked child's checks failed");
	printf("%s\n", failures ? "vdso: FAIL" : "vdso: ok");
	return failures ? 1 : 0;
}
