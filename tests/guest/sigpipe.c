// SPDX-License-Identifier: MIT
/*
 * Writing to a pipe whose read end is closed: EPIPE and SIGPIPE, as Linux
 * (pipe_write() sends the signal whether or not the call then fails).
 *   sigpipe count    a handler counts: write and writev each raise one
 *                    SIGPIPE and fail with EPIPE; prints what it saw
 *   sigpipe default  the default action: killed by SIGPIPE (status 141)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static volatile int caught;

static void on_pipe(int sig)
{
	(void)sig;
	caught++;
}

int main(int argc, char **argv)
{
	struct iovec iov[2] = { { "ab", 2 }, { "cd", 2 } };
	int fd[2], werr, vwerr;

	if (argc != 2 || pipe(fd) || close(fd[0]))
		return 2;
	if (!strcmp(argv[1], "default")) {
		write(fd[1], "x", 1);
		printf("write: not killed\n");
		return 1;
	}
	signal(SIGPIPE, on_pipe);
	werr = write(fd[1], "x", 1) < 0 ? errno : 0;
	vwerr = writev(fd[1], iov, 2) < 0 ? errno : 0;
	printf("write: %s, writev: %s, signals: %d\n",
	       werr == EPIPE ? "EPIPE" : "?", vwerr == EPIPE ? "EPIPE" : "?",
	       caught);
	return 0;
}
