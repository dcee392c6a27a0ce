// SPDX-License-Identifier: MIT
/*
 * stepcount: exact user-mode instruction (and branch) counts by ptrace
 * single-stepping.  The accuracy oracle for the `step` event source.
 *
 *   stepcount [--per-thread] [--branches] [--bmiss] [--argv0 NAME] [-o FILE]
 *             -- PROG ARGS...
 *
 * PROG runs with an empty environment, like the first process in the
 * guest.  Counting starts at the first instruction after execve and ends
 * when the last thread exits.  What counts as one instruction:
 *
 * - every single-step trap is one retired instruction, except that a
 *   rep-prefixed string instruction traps after each iteration with RIP
 *   unchanged and retires only once: it counts when RIP moves on;
 * - a syscall instruction counts once (the kernel's own instructions are
 *   never seen), including the final exit/exit_group that never returns;
 * - branches (--branches) are classified from the opcode of the retired
 *   instruction (x86_decode.c), conditional ones taken or not;
 * - branch misses (--bmiss) are the step source's modeled predictor's,
 *   written here again from its description (docs/design.md, "Branch
 *   mispredictions"): 4096 two-bit saturating counters by the low 12 bits
 *   of a conditional branch's (jcc, loop, jrcxz) address, states 2-3
 *   predicting taken; one table for all threads, as on one vCPU.
 *
 * The counts go to stderr (or FILE), so the program's output stays clean:
 *   instructions:u N
 *   branches:u N
 *   branch-misses:u N
 * and with --per-thread, per thread in creation order (index 0 = main):
 *   thread-INDEX instructions:u N
 *   thread-INDEX branches:u N
 * The exit status is the program's (128 + signal if it was killed).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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
#include "x86_decode.h"

struct thread {
	pid_t tid;
	int index;		/* creation order; -1 until the clone event names it */
	bool alive;
	bool have_pending;	/* pending describes the instruction about to run */
	uint64_t pending_rip;
	struct x86_insn_class pending;
	uint64_t insns, branches;
};

static uint8_t bht[4096];
static uint64_t bmiss;

static struct thread *threads;
static size_t nthreads, cap_threads;
static int next_index;

static struct thread *find_thread(pid_t tid)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	return NULL;
}

static struct thread *add_thread(pid_t tid)
{
	struct thread *t;

	if (nthreads == cap_threads) {
		cap_threads = cap_threads ? 2 * cap_threads : 16;
		threads = realloc(threads, cap_threads * sizeof(*threads));
		if (!threads) {
			perror("stepcount: realloc");
			exit(125);
		}
	}
	t = &threads[nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->index = -1;
	t->alive = true;
	return t;
}

static void die(const char *what)
{
	fprintf(stderr, "stepcount: %s: %s\n", what, strerror(errno));
	exit(125);
}

/*
 * Read enough bytes at rip to classify the instruction.  Aligned word
 * reads never cross into a page the first word is not on, so the second
 * word is fetched only when the first did not suffice (an instruction
 * near the end of the last mapped page must still work).
 */
static void classify_at(pid_t tid, uint64_t rip, struct x86_insn_class *out)
{
	uint8_t buf[3 * sizeof(long)];
	uint64_t base = rip & ~(uint64_t)(sizeof(long) - 1);
	size_t off = rip - base, have = 0;

	for (int w = 0; w < 3; w++) {
		long word;

		errno = 0;
		word = ptrace(PTRACE_PEEKTEXT, tid, (void *)(base + w * sizeof(long)), NULL);
		if (errno) {
			if (have > off)
				break;
			die("PTRACE_PEEKTEXT");
		}
		memcpy(buf + have, &word, sizeof(word));
		have += sizeof(word);
		if (have > off && x86_classify(buf + off, have - off, out) == 0)
			return;
	}
	/* Unreadable tail: classify what there is (prefix soup is NONE). */
	if (have <= off || x86_classify(buf + off, have - off, out) != 0)
		*out = (struct x86_insn_class){ 0 };
}

static uint64_t get_rip(pid_t tid)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
		die("PTRACE_GETREGS");
	return regs.rip;
}

/* The pending instruction retired: count it. */
static void retire(struct thread *t)
{
	t->insns++;
	if (x86_is_branch(t->pending.branch))
		t->branches++;
	t->have_pending = false;
}

/* A conditional branch at `at` retired and went on to `to`. */
static void predict(const struct x86_insn_class *c, uint64_t at, uint64_t to)
{
	/* jcc rel32 (0F 8x), else rel8 (70-7F, E0-E3) */
	uint64_t len = c->nprefix + (c->two_byte ? 6u : 2u);
	bool taken = to != at + len;
	uint8_t *ctr = &bht[at & 4095];

	if ((*ctr >= 2) != taken)
		bmiss++;
	if (taken && *ctr < 3)
		++*ctr;
	else if (!taken && *ctr > 0)
		--*ctr;
}

/* After a single-step trap: did the pending instruction retire? */
static void stepped(struct thread *t, uint64_t rip)
{
	if (t->have_pending) {
		if (!(t->pending.rep_string && rip == t->pending_rip) &&
		    (t->pending.branch == X86_BR_JCC ||
		     t->pending.branch == X86_BR_LOOP))
			predict(&t->pending, t->pending_rip, rip);
		if (!(t->pending.rep_string && rip == t->pending_rip))
			retire(t);
		else
			t->have_pending = false;	/* same insn, reclassified below */
	}
	t->pending_rip = rip;
	classify_at(t->tid, rip, &t->pending);
	t->have_pending = true;
}

static void prepare(struct thread *t)
{
	t->pending_rip = get_rip(t->tid);
	classify_at(t->tid, t->pending_rip, &t->pending);
	t->have_pending = true;
}

static void step(pid_t tid, int sig)
{
	if (ptrace(PTRACE_SINGLESTEP, tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
		die("PTRACE_SINGLESTEP");
}

static int cmp_index(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: stepcount [--per-thread] [--branches] [--bmiss] [--argv0 NAME] [-o FILE] -- PROG [ARGS...]\n");
	exit(125);
}

int main(int argc, char **argv)
{
	bool per_thread = false, branches = false, misses = false;
	const char *argv0 = NULL, *outname = NULL;
	int status, exit_code = 0, i;
	pid_t child;
	FILE *out = stderr;
	uint64_t total_i = 0, total_b = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--per-thread") == 0) {
			per_thread = true;
		} else if (strcmp(argv[i], "--branches") == 0) {
			branches = true;
		} else if (strcmp(argv[i], "--bmiss") == 0) {
			misses = true;
		} else if (strcmp(argv[i], "--argv0") == 0 && i + 1 < argc) {
			argv0 = argv[++i];
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			outname = argv[++i];
		} else if (argv[i][0] == '-') {
			usage();
		} else {
			break;
		}
	}
	if (i >= argc)
		usage();
	if (outname) {
		out = fopen(outname, "w");
		if (!out)
			die(outname);
	}

	child = ptrace_start("stepcount", argv + i, argv0,
			     PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL, &status);
	if (child < 0)
		return status;	/* execve failed: the child said why */
	{
		struct thread *t = add_thread(child);

		t->index = next_index++;
		prepare(t);
	}
	step(child, 0);

	for (;;) {
		struct thread *t;
		pid_t tid = waitpid(-1, &status, __WALL);

		if (tid < 0) {
			if (errno == ECHILD)
				break;
			if (errno == EINTR)
				continue;
			die("waitpid");
		}
		t = find_thread(tid);
		if (!t)
			t = add_thread(tid);	/* its first stop beat the clone event */

		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			/*
			 * A thread that was stepping a syscall and died executed
			 * exit/exit_group (or was killed in a blocking call,
			 * which hardware counts as retired too).  Anything else
			 * was cut short by another thread's exit_group.
			 */
			if (t->alive && t->have_pending && t->pending.syscall)
				retire(t);
			t->alive = false;
			if (tid == child)
				exit_code = WIFEXITED(status) ? WEXITSTATUS(status) :
					128 + WTERMSIG(status);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;

		if (WSTOPSIG(status) == SIGTRAP && (status >> 16) != 0) {
			/*
			 * A ptrace event stop in the middle of a syscall: the
			 * instruction has not finished, keep it pending.
			 */
			if ((status >> 16) == PTRACE_EVENT_CLONE) {
				unsigned long newtid;
				struct thread *n;

				if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &newtid) < 0)
					die("PTRACE_GETEVENTMSG");
				/* (add_thread may move the table: t is stale now.) */
				n = find_thread((pid_t)newtid);
				if (!n)
					n = add_thread((pid_t)newtid);
				n->index = next_index++;
			}
			step(tid, 0);
			continue;
		}
		if (WSTOPSIG(status) == SIGTRAP) {
			stepped(t, get_rip(tid));
			step(tid, 0);
			continue;
		}
		if (WSTOPSIG(status) == SIGSTOP && !t->have_pending) {
			/* A new thread's initial stop: it starts after its clone. */
			prepare(t);
			step(tid, 0);
			continue;
		}
		/*
		 * Any other signal: the instruction did not retire (a fault) or
		 * the signal arrived between instructions; deliver it.  With a
		 * handler, the next trap is at the handler's first instruction
		 * and the interrupted one is miscounted (see docs).
		 */
		step(tid, WSTOPSIG(status));
	}

	for (size_t k = 0; k < nthreads; k++) {
		total_i += threads[k].insns;
		total_b += threads[k].branches;
	}
	fprintf(out, "instructions:u %llu\n", (unsigned long long)total_i);
	if (branches)
		fprintf(out, "branches:u %llu\n", (unsigned long long)total_b);
	if (misses)
		fprintf(out, "branch-misses:u %llu\n", (unsigned long long)bmiss);
	if (per_thread) {
		qsort(threads, nthreads, sizeof(*threads), cmp_index);
		for (size_t k = 0; k < nthreads; k++) {
			fprintf(out, "thread-%d instructions:u %llu\n", threads[k].index,
				(unsigned long long)threads[k].insns);
			if (branches)
				fprintf(out, "thread-%d branches:u %llu\n", threads[k].index,
					(unsigned long long)threads[k].branches);
		}
	}
	if (out != stderr && fclose(out) != 0)
		die(outname);
	return exit_code;
}
