// SPDX-License-Identifier: MIT
/*
 * Wild system-call arguments: kernel pointers, NULL, unmapped and
 * read-only buffers, huge lengths and counts, unknown numbers and flags.
 * Every call must come back with an error (the Linux errno, or one of the
 * ones Linux could give) and the kernel must neither fault nor write where
 * it was pointed.  Prints one line per deviation and a verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "raw_syscall.h"

#define KPTR	0xffffffff80200000ul	/* guest kernel text */
#define KDATA	0xffffffff80000000ul	/* guest RAM's first byte */
#define NONCAN	0x8000000000000000ul
#define UHOLE	0x100000000000ul		/* unmapped user address */
#define HUGE	(1ul << 62)

static int checks, bad;

/* The result must be one of the listed -errno values (0-terminated). */
static void expect_(const char *what, long r, const int *ok)
{
	checks++;
	for (; *ok; ok++)
		if (r == -*ok)
			return;
	bad++;
	printf("badsys: %s returned %ld\n", what, r);
}

#define EXPECT(call, ...) \
	expect_(#call, call, (const int[]){ __VA_ARGS__, 0 })
#define S0(nr) raw_syscall6(nr, 0, 0, 0, 0, 0, 0)
#define S1(nr, a) raw_syscall6(nr, (long)(a), 0, 0, 0, 0, 0)
#define S2(nr, a, b) raw_syscall6(nr, (long)(a), (long)(b), 0, 0, 0, 0)
#define S3(nr, a, b, c) raw_syscall6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define S4(nr, a, b, c, d) \
	raw_syscall6(nr, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define S6(nr, a, b, c, d, e, f) \
	raw_syscall6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

static char buf[4096];
static const char ro[4096] = "read-only";

static void memory_args(void)
{
	long iov[2] = { (long)KPTR, 16 };
	long iov_huge[4] = { (long)buf, 16, (long)buf, HUGE };
	int fds[2];
	/* Calls that may write some bytes write them here, not to stdout. */
	int null = open("/dev/null", O_WRONLY);

	EXPECT(S3(SYS_write, 1, KPTR, 16), EFAULT);
	EXPECT(S3(SYS_write, 1, NULL, 16), EFAULT);
	EXPECT(S3(SYS_write, 1, NONCAN, 16), EFAULT);
	EXPECT(S3(SYS_write, 1, UHOLE, 16), EFAULT);
	EXPECT(S3(SYS_write, 1, buf, HUGE), EFAULT);
	EXPECT(S3(SYS_write, 1, -4096l, 8192), EFAULT);
	EXPECT(S3(SYS_write, 99, buf, 1), EBADF);
	EXPECT(S3(SYS_write, -1, buf, 1), EBADF);
	EXPECT(S3(SYS_read, 0, KPTR, 16), EFAULT);
	EXPECT(S3(SYS_read, 0, ro, 16), EFAULT);
	EXPECT(S3(SYS_writev, 1, KPTR, 1), EFAULT);
	EXPECT(S3(SYS_writev, 1, iov, 1), EFAULT);
	/* Linux checks every segment first; here the first is written. */
	EXPECT(S3(SYS_writev, null, iov_huge, 2) == 16 ? -EFAULT : 1, EFAULT);
	EXPECT(S3(SYS_writev, 1, iov, 1 << 30), EINVAL);
	EXPECT(S3(SYS_readv, 0, iov, -1), EINVAL);
	EXPECT(S2(SYS_open, KPTR, 0), EFAULT);
	EXPECT(S2(SYS_open, NULL, 0), EFAULT);
	EXPECT(S2(SYS_open, NONCAN, 0), EFAULT);
	EXPECT(S3(SYS_openat, -100, UHOLE, 0), EFAULT);
	EXPECT(S3(SYS_openat, 12345, "rel", 0), EBADF);
	EXPECT(S2(SYS_stat, "/", KPTR), EFAULT);
	EXPECT(S2(SYS_stat, "/", ro), EFAULT);
	EXPECT(S2(SYS_fstat, 1, KPTR), EFAULT);
	EXPECT(S4(SYS_newfstatat, -100, "/", KDATA, 0), EFAULT);
	EXPECT(S1(SYS_pipe, KPTR), EFAULT);
	EXPECT(S1(SYS_pipe, ro), EFAULT);
	EXPECT(S2(SYS_pipe2, fds, 0x7fffffff), EINVAL);
	EXPECT(S2(SYS_clock_gettime, 0, KPTR), EFAULT);
	EXPECT(S2(SYS_clock_gettime, 12345, buf), EINVAL);
	EXPECT(S2(SYS_gettimeofday, KPTR, 0), EFAULT);
	EXPECT(S1(SYS_uname, KPTR), EFAULT);
	EXPECT(S1(SYS_uname, ro), EFAULT);
	EXPECT(S2(SYS_nanosleep, KPTR, 0), EFAULT);
	EXPECT(S2(SYS_getcwd, KPTR, 100), EFAULT);
	EXPECT(S2(SYS_getcwd, buf, 0), ERANGE, EINVAL);
	EXPECT(S3(SYS_readlink, "/proc/self/exe", KPTR, 100), EFAULT);
	EXPECT(S3(SYS_getdents64, 0, KPTR, 4096), EFAULT, ENOTDIR);
	EXPECT(S3(SYS_poll, KPTR, 1, 0), EFAULT);
	EXPECT(S3(SYS_poll, buf, 1 << 30, 0), EINVAL, EFAULT);
	EXPECT(S3(SYS_getrandom, KPTR, 16, 0), EFAULT);
	EXPECT(S3(SYS_sched_getaffinity, 0, 128, KPTR), EFAULT);
	EXPECT(S4(SYS_prlimit64, 0, 3, 0, KPTR), EFAULT);
	/* No alternate stacks: the new stack is ignored, never read. */
	EXPECT(S2(SYS_sigaltstack, KPTR, 0) ?: -EFAULT, EFAULT);
	EXPECT(S4(SYS_rt_sigaction, SIGUSR1, KPTR, 0, 8), EFAULT);
	EXPECT(S4(SYS_rt_sigaction, SIGUSR1, 0, KPTR, 8), EFAULT);
	EXPECT(S4(SYS_rt_sigaction, 999, 0, 0, 8), EINVAL);
	EXPECT(S4(SYS_rt_sigaction, SIGKILL, buf, 0, 8), EINVAL);
	EXPECT(S4(SYS_rt_sigprocmask, 0, KPTR, 0, 8), EFAULT);
	EXPECT(S4(SYS_rt_sigprocmask, 0, 0, KPTR, 8), EFAULT);
	EXPECT(S4(SYS_rt_sigprocmask, 99, buf, 0, 8), EINVAL);
	EXPECT(S6(SYS_futex, KPTR, 0, 0, 0, 0, 0), EFAULT, EINVAL);
	EXPECT(S6(SYS_futex, NULL, 0, 0, 0, 0, 0), EFAULT);
	EXPECT(S6(SYS_futex, buf + 1, 0, 0, 0, 0, 0), EINVAL);
	EXPECT(S6(SYS_futex, buf, 99, 0, 0, 0, 0), ENOSYS, EINVAL);
	EXPECT(S4(SYS_wait4, -1, KPTR, 0, 0), ECHILD, EFAULT);
	EXPECT(S3(SYS_execve, KPTR, 0, 0), EFAULT);
	EXPECT(S3(SYS_execve, "/bin/badsys", KPTR, 0), EFAULT);
	EXPECT(S3(SYS_execve, "/nonexistent", 0, 0), ENOENT);
	EXPECT(S2(SYS_arch_prctl, 0x1002, KPTR), EPERM, EINVAL, EFAULT);
	EXPECT(S2(SYS_arch_prctl, 0x1002, NONCAN), EPERM, EINVAL, EFAULT);
	EXPECT(S2(SYS_arch_prctl, 0x1003, KPTR), EFAULT);
	EXPECT(S2(SYS_arch_prctl, 0x9999, 0), EINVAL);
	EXPECT(S2(SYS_kill, 12345, SIGUSR1), ESRCH);
	EXPECT(S2(SYS_kill, getpid(), 999), EINVAL);
	EXPECT(S3(SYS_tgkill, getpid(), 12345, SIGUSR1), ESRCH, EINVAL);
}

static void memory_maps(void)
{
	long r;

	EXPECT(S6(SYS_mmap, 0, 1ul << 47, 3, 0x22, -1, 0), ENOMEM, EINVAL);
	EXPECT(S6(SYS_mmap, 0, HUGE, 3, 0x22, -1, 0), ENOMEM, EINVAL);
	EXPECT(S6(SYS_mmap, 0, -4096l, 3, 0x22, -1, 0), ENOMEM, EINVAL);
	EXPECT(S6(SYS_mmap, 0, 0, 3, 0x22, -1, 0), EINVAL);
	EXPECT(S6(SYS_mmap, KPTR, 4096, 3, 0x32, -1, 0), ENOMEM, EINVAL,
	       EPERM);
	EXPECT(S6(SYS_mmap, 0x1001, 4096, 3, 0x32, -1, 0), EINVAL);
	EXPECT(S6(SYS_mmap, 0, 4096, 3, 0x02, 12345, 0), EBADF, ENODEV);
	EXPECT(S6(SYS_mmap, 0, 4096, 3, 0, -1, 0), EINVAL, ENODEV, EBADF);
	EXPECT(S2(SYS_munmap, KPTR, 4096), EINVAL);
	EXPECT(S2(SYS_munmap, 0x1001, 4096), EINVAL);
	EXPECT(S2(SYS_munmap, 0x10000, HUGE), EINVAL);
	EXPECT(S3(SYS_mprotect, KPTR, 4096, 7), ENOMEM, EINVAL);
	EXPECT(S3(SYS_mprotect, 0x1001, 4096, 1), EINVAL);
	EXPECT(S3(SYS_mprotect, UHOLE, 4096, 1), ENOMEM);
	/* brk never moves into the kernel: it returns the current break. */
	r = S1(SYS_brk, 0);
	checks++;
	if (S1(SYS_brk, KPTR) != r || S1(SYS_brk, NONCAN) != r ||
	    S1(SYS_brk, 1) != r) {
		bad++;
		printf("badsys: brk moved\n");
	}
}

/* Unknown numbers, and the numbers around the end of the table. */
static void numbers(void)
{
	static const long nrs[] = {
		335, 336, 400, 439 + 100, 511, 512, 513, 1000, 4096, 100000,
		0x7fffffff, -1, -2, (long)0x8000000000000000ul, 0x40000001,
	};

	for (unsigned int i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		char what[64];

		snprintf(what, sizeof(what), "syscall %#lx", nrs[i]);
		expect_(what, raw_syscall6(nrs[i], KPTR, KPTR, KPTR, KPTR, KPTR, KPTR),
			(const int[]){ ENOSYS, 0 });
	}
}

/*
 * Pointers the kernel keeps and writes later: the clear-tid address
 * (set_tid_address, CLONE_CHILD_CLEARTID) is written when the thread
 * exits.  A kernel address there must not be written (the child's exit
 * would overwrite the kernel's first text page).
 */
static void later_writes(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		raw_syscall6(SYS_set_tid_address, KPTR, 0, 0, 0, 0, 0);
		raw_syscall6(SYS_exit, 0, 0, 0, 0, 0, 0);
	}
	checks++;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) {
		bad++;
		printf("badsys: set_tid_address child: status %#x\n", status);
	}
	pid = fork();
	if (pid == 0) {
		raw_syscall6(SYS_set_tid_address, (long)ro, 0, 0, 0, 0, 0);
		raw_syscall6(SYS_exit, 0, 0, 0, 0, 0, 0);
	}
	checks++;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0 ||
	    strcmp(ro, "read-only")) {
		bad++;
		printf("badsys: set_tid_address(ro) child: status %#x\n",
		       status);
	}
	/*
	 * CLONE_PARENT_SETTID with a kernel pointer: Linux ignores the failed
	 * store and creates the child; the kernel must not store there.
	 */
	pid = fork();
	if (pid == 0) {
		long r = S6(SYS_clone, 0x00100000 | SIGCHLD, 0, KPTR, 0, 0, 0);

		if (r == 0)
			raw_syscall6(SYS_exit, 0, 0, 0, 0, 0, 0);
		if (r > 0 && waitpid(r, &status, 0) == r && status == 0)
			raw_syscall6(SYS_exit, 0, 0, 0, 0, 0, 0);
		raw_syscall6(SYS_exit, r == -EFAULT ? 0 : 1, 0, 0, 0, 0, 0);
	}
	checks++;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) {
		bad++;
		printf("badsys: clone(PARENT_SETTID=kernel): status %#x\n",
		       status);
	}
}

/*
 * Strings the kernel copies in: a kernel address must be -EFAULT, not read.
 * The direct map covers all guest RAM, so a kernel that followed such a
 * pointer would copy other processes' memory into the new image's argv.
 */
static void kernel_reads(void)
{
	char *argv[] = { "badsys", "argv-probe", (char *)KPTR, NULL };
	char *envp[] = { (char *)KDATA + 0x200000, NULL };
	int status = -1;
	pid_t pid;

	EXPECT(S3(SYS_execve, "/nonexistent", argv, 0), EFAULT);
	EXPECT(S3(SYS_execve, "/nonexistent", (char *[]){ NULL }, envp),
	       EFAULT);
	pid = fork();
	if (pid == 0) {
		long r = S3(SYS_execve, "/bin/badsys", argv, 0);

		raw_syscall6(SYS_exit, r == -EFAULT ? 0 : 1, 0, 0, 0, 0, 0);
	}
	checks++;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) {
		bad++;
		printf("badsys: execve with a kernel argv string: status %#x\n",
		       status);
	}
}

static bool want(int argc, char **argv, const char *part)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], part))
			return true;
	return argc < 2;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "argv-probe")) {
		printf("badsys: execve copied %zu bytes of kernel memory\n",
		       argc > 2 ? strlen(argv[2]) : 0);
		return 3;
	}
	/* Some parts only (for bisecting a failure): badsys PART... */
	if (want(argc, argv, "args"))
		memory_args();
	if (want(argc, argv, "maps"))
		memory_maps();
	if (want(argc, argv, "numbers"))
		numbers();
	if (want(argc, argv, "later"))
		later_writes();
	if (want(argc, argv, "reads"))
		kernel_reads();
	/* Still alive and the kernel still works after all that. */
	checks++;
	if (write(1, "", 0) != 0 || getpid() != 1) {
		bad++;
		printf("badsys: kernel state after the storm\n");
	}
	printf("badsys: %d checks, %d unexpected\n", checks, bad);
	return bad != 0;
}
