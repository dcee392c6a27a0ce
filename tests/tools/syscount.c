// SPDX-License-Identifier: MIT
/*
 * syscount: the system calls a program makes natively, counted by ptrace
 * at each system-call entry.  The oracle for the guest kernel's entry
 * counts: `vmm stat --breakdown` must see exactly these calls.
 *
 *   syscount [--argv0 NAME] -- PROG ARGS...
 *
 * PROG runs with an empty environment, like the first process in the
 * guest, and its threads are followed.  Counting starts after execve.
 * One line per system call made, by number, to stderr, in the format of
 * `vmm stat --breakdown -x,`:
 *   N,,kentry:syscall:NAME,,,
 * The exit status is the program's (128 + signal if it was killed).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_start.h"
#include "syscall_names.h"

#define NR_SYSCALLS	512
#define SYSGOOD_TRAP	(SIGTRAP | 0x80)

/* Per thread: is it inside a system call (the next stop is its exit)? */
struct thread {
	pid_t tid;
	int in_call;
};

static struct thread threads[1024];
static size_t nthreads;

static void die(const char *what)
{
	fprintf(stderr, "syscount: %s: %s\n", what, strerror(errno));
	exit(125);
}

static struct thread *thread_get(pid_t tid)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	if (nthreads == sizeof(threads) / sizeof(threads[0])) {
		fprintf(stderr, "syscount: too many threads\n");
		exit(125);
	}
	threads[nthreads].tid = tid;
	threads[nthreads].in_call = 0;
	return &threads[nthreads++];
}

static void report(const uint64_t *count)
{
	for (int i = 0; i < NR_SYSCALLS; i++) {
		const char *name = syscall_name(i);

		if (!count[i])
			continue;
		if (name)
			fprintf(stderr, "%llu,,kentry:syscall:%s,,,\n",
				(unsigned long long)count[i], name);
		else
			fprintf(stderr, "%llu,,kentry:syscall:%d,,,\n",
				(unsigned long long)count[i], i);
	}
}

int main(int argc, char **argv)
{
	static uint64_t count[NR_SYSCALLS];
	const char *argv0 = NULL;
	int i = 1, status, exit_status = 0;
	pid_t child;

	if (i + 1 < argc && !strcmp(argv[i], "--argv0")) {
		argv0 = argv[i + 1];
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: syscount [--argv0 NAME] -- PROG [ARGS...]\n");
		return 125;
	}
	/* From the execve stop on, every call is the program's. */
	child = ptrace_start("syscount", argv + i, argv0,
			     PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE |
			     PTRACE_O_EXITKILL, &status);
	if (child < 0)
		return status;	/* execve failed: the child said why */
	thread_get(child);
	if (ptrace(PTRACE_SYSCALL, child, NULL, NULL) < 0)
		die("PTRACE_SYSCALL");
	for (;;) {
		struct user_regs_struct regs;
		pid_t tid = waitpid(-1, &status, __WALL);
		int sig = 0;

		if (tid < 0) {
			if (errno == ECHILD)
				break;
			die("waitpid");
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == child)
				exit_status = WIFEXITED(status) ?
					WEXITSTATUS(status) :
					128 + WTERMSIG(status);
			continue;
		}
		if (WSTOPSIG(status) == SYSGOOD_TRAP) {
			struct thread *t = thread_get(tid);

			if (!t->in_call) {
				if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
					die("PTRACE_GETREGS");
				if (regs.orig_rax < NR_SYSCALLS)
					count[regs.orig_rax]++;
			}
			t->in_call = !t->in_call;
		} else if (WSTOPSIG(status) == SIGTRAP && (status >> 16)) {
			/* A clone event: the new thread starts outside a call. */
		} else if (WSTOPSIG(status) == SIGSTOP && !thread_get(tid)->in_call) {
			/* A new thread's first stop. */
		} else {
			sig = WSTOPSIG(status);
		}
		if (ptrace(PTRACE_SYSCALL, tid, NULL, (void *)(long)sig) < 0 &&
		    errno != ESRCH)
			die("PTRACE_SYSCALL");
	}
	report(count);
	return exit_status;
}
