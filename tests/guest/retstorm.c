// SPDX-License-Identifier: MIT
/*
 * The step source's code cache runs a ret by a table lookup of a dozen
 * instructions of its own (docs/design.md 4.4), so an interrupt lands
 * inside one often in call-heavy code.  The exact count of a region of
 * recursive calls must not depend on that: counted once quietly, then
 * again and again while a second thread's short sleeps bring timer
 * interrupts on the same vCPU, each count must be the quiet one.
 *
 *   retstorm [ROUNDS]   -> "retstorm: ok" or a FAILED line per round
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FIB_N	24

static atomic_int stop;
/* Read at every region: fib() is pure, and clang would otherwise call it
 * once, outside the loop of regions. */
static volatile long fib_n = FIB_N;

static __attribute__((noinline)) long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* User instructions of fib(FIB_N), from its own event. */
static long long region(int fd, long *out)
{
	long long v = -1;

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	*out = fib(fib_n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return v;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 100000 };

	(void)arg;
	while (!atomic_load(&stop))
		nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100, bad = 0;
	struct perf_event_attr a;
	long long quiet, v;
	pthread_t t;
	long r;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("FAILED perf_event_open\n");
		return 1;
	}
	quiet = region(fd, &r);
	if (quiet <= 0 || r != 46368) {
		printf("FAILED quiet count %lld, fib %ld\n", quiet, r);
		return 1;
	}
	if (pthread_create(&t, NULL, sleeper, NULL)) {
		printf("FAILED pthread_create\n");
		return 1;
	}
	for (int i = 0; i < rounds; i++) {
		v = region(fd, &r);
		if (v != quiet || r != 46368) {
			printf("FAILED round %d: %lld instructions, not %lld\n",
			       i, v, quiet);
			bad++;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	fprintf(stderr, "retstorm: %d rounds of %lld instructions\n", rounds,
		quiet);
	if (!bad)
		printf("retstorm: ok\n");
	return bad != 0;
}
