// SPDX-License-Identifier: MIT
/*
 * A process with Linux's default 1024 descriptors, all in use: PAPI's
 * multiplexed threads open one perf_event fd per event per thread (kufrin:
 * 8 threads x 38 events).  The lowest free number, EMFILE at the limit,
 * pipes, F_DUPFD and close-on-exec at high numbers, and a fork's copy, as
 * natively (the run compares the output).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

int main(void)
{
	struct rlimit rl;
	int fd, n = 0, open0 = 0, p[2] = { -1, -1 };
	char c = 0;
	pid_t pid;

	/* natively the limit may be higher: take Linux's default soft one */
	getrlimit(RLIMIT_NOFILE, &rl);
	CHECK(rl.rlim_cur >= 1024, "soft limit %lu", (unsigned long)rl.rlim_cur);
	rl.rlim_cur = 1024;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	CHECK(rl.rlim_cur == 1024, "soft limit now %lu",
	      (unsigned long)rl.rlim_cur);
	/* what the test's runner left open (low numbers) */
	for (fd = 0; fd < 1024; fd++)
		open0 += fcntl(fd, F_GETFD) >= 0;
	while ((fd = dup(0)) >= 0)
		n++;
	CHECK(errno == EMFILE && n == 1024 - open0, "%d dups, errno %d", n,
	      errno);
	CHECK(pipe(p) == -1 && errno == EMFILE, "pipe in a full table");
	CHECK(fcntl(0, F_DUPFD, 1024) == -1 && errno == EINVAL, "F_DUPFD 1024");
	CHECK(dup2(0, 1024) == -1 && errno == EBADF, "dup2 to 1024");
	/* numbers come back lowest first, in every page of the table */
	close(900);
	close(300);
	close(1023);
	CHECK(dup(0) == 300, "lowest free");
	CHECK(fcntl(0, F_DUPFD_CLOEXEC, 500) == 900, "F_DUPFD from 500");
	CHECK(fcntl(900, F_GETFD) == FD_CLOEXEC, "close-on-exec at 900");
	/* 1023 is the one free number */
	CHECK(pipe(p) == -1 && errno == EMFILE, "pipe with one free");
	CHECK(pipe(p) == -1 && errno == EMFILE, "pipe with one free, again");
	close(800);
	CHECK(pipe(p) == 0 && p[0] == 800 && p[1] == 1023, "pipe: %d %d",
	      p[0], p[1]);
	if (failures) {		/* the reads below would wait forever */
		printf("fdmany: WRONG (%d failed)\n", failures);
		return 1;
	}
	CHECK(write(p[1], "x", 1) == 1 && read(p[0], &c, 1) == 1 && c == 'x',
	      "through a pipe at 800/1023");
	/* a fork's table is a copy of every page */
	pid = fork();
	if (pid == 0) {
		int bad = fcntl(1000, F_GETFD) != 0 || fcntl(900, F_GETFD) != 1 ||
			  close(5) != 0 || write(p[1], "y", 1) != 1;

		_exit(bad);
	}
	CHECK(pid > 0 && waitpid(pid, &n, 0) == pid && WIFEXITED(n) &&
	      WEXITSTATUS(n) == 0, "child's table: status %#x", n);
	CHECK(fcntl(5, F_GETFD) == 0, "the child's close is its own");
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	CHECK(read(p[0], &c, 1) == 1 && c == 'y', "child's write at 1023");
	printf("fdmany: %s (%d failed)\n", failures ? "WRONG" : "ok", failures);
	return failures != 0;
}
