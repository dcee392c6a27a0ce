// SPDX-License-Identifier: MIT
/*
 * Interval timers as Linux gives them (run natively too, same output):
 * ITIMER_PROF, ITIMER_VIRTUAL and ITIMER_REAL each raise their signal
 * about once per 10 ms interval while the process spins, getitimer()
 * reports what was set, a disarmed timer stays quiet, and alarm() returns
 * the seconds left.  PAPI's software overflow arms all three.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int fired[3];
#include "guest_check.h"

static void on_signal(int sig)
{
	fired[sig == SIGPROF ? 0 : sig == SIGVTALRM ? 1 : 2]++;
}

static double now_s(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin for `secs` of the clock the timer counts. */
static void spin(int clock, double secs)
{
	double end = now_s(clock) + secs;
	volatile unsigned long x = 0;

	while (now_s(clock) < end)
		for (int i = 0; i < 10000; i++)
			x += i;
}

static void one_timer(int which, int slot, int clock)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } }, got;

	fired[slot] = 0;
	CHECK(!setitimer(which, &it, NULL), "setitimer %d", which);
	/* Linux rounds the value up to its tick: up to 20 ms here. */
	CHECK(!getitimer(which, &got) && got.it_interval.tv_sec == 0 &&
	      got.it_interval.tv_usec == 10000 && got.it_value.tv_sec == 0 &&
	      got.it_value.tv_usec > 0 && got.it_value.tv_usec <= 20000,
	      "getitimer %d: %ld.%06ld",
	      which, (long)got.it_value.tv_sec, (long)got.it_value.tv_usec);
	spin(clock, 0.3);
	memset(&it, 0, sizeof(it));
	CHECK(!setitimer(which, &it, &got) && got.it_interval.tv_usec == 10000,
	      "disarm %d", which);
	/* 30 intervals of 10 ms: a tick's lateness and a loaded host's
	 * preemption leave fewer, and Linux's tick-sampled CPU time on a
	 * loaded host more (42 seen natively); a timer that never reloads,
	 * or fires without its interval passing, falls outside. */
	CHECK(fired[slot] >= 8 && fired[slot] <= 64, "timer %d fired %d times",
	      which, fired[slot]);
	fired[slot] = 0;
	spin(clock, 0.05);
	CHECK(fired[slot] == 0, "timer %d fired %d times disarmed", which,
	      fired[slot]);
}

int main(void)
{
	struct itimerval bad = { { 0, 1000000 }, { 0, 0 } };

	signal(SIGPROF, on_signal);
	signal(SIGVTALRM, on_signal);
	signal(SIGALRM, on_signal);
	one_timer(ITIMER_PROF, 0, CLOCK_PROCESS_CPUTIME_ID);
	one_timer(ITIMER_VIRTUAL, 1, CLOCK_PROCESS_CPUTIME_ID);
	one_timer(ITIMER_REAL, 2, CLOCK_MONOTONIC);
	CHECK(setitimer(ITIMER_REAL, &bad, NULL) == -1, "tv_usec 10^6 taken");
	CHECK(setitimer(7, &bad, NULL) == -1, "timer 7 taken");
	CHECK(alarm(5) == 0, "alarm: a timer was on");
	CHECK(alarm(0) == 5, "alarm: not 5 s left");
	printf("itimer: %s\n", failures ? "WRONG" : "ok");
	return failures != 0;
}
