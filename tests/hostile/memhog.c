// SPDX-License-Identifier: MIT
/*
 * Memory exhaustion inside a small VM (`vmm run --mem 64M`).  Each mode
 * takes memory until the kernel says no, touching every page so lazy
 * allocation cannot hide the cost.  The kernel must either refuse (ENOMEM
 * from brk/mmap, and the program prints how far it got and exits 0) or
 * kill the program with SIGKILL (137); it must never panic.  Mode "fork"
 * also makes children take memory, so the exhaustion hits in a child
 * while the parent waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK	(1u << 20)

static void touch(char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (char)i;
}

static unsigned int hog_mmap(size_t chunk)
{
	unsigned int n = 0;

	for (;;) {
		char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			if (errno != ENOMEM)
				printf("memhog: mmap: %s\n", strerror(errno));
			return n;
		}
		touch(p, chunk);
		n++;
	}
}

/* Raw brk: musl's sbrk() refuses any increment. */
static unsigned int hog_brk(void)
{
	unsigned long cur = syscall(SYS_brk, 0);
	unsigned int n = 0;

	for (;;) {
		unsigned long want = cur + CHUNK;

		if ((unsigned long)syscall(SYS_brk, want) != want)
			return n;
		touch((char *)cur, CHUNK);
		cur = want;
		n++;
	}
}

static unsigned int hog_malloc(void)
{
	unsigned int n = 0;
	char *p;

	while ((p = malloc(CHUNK - 64))) {
		touch(p, CHUNK - 64);
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "mmap";
	unsigned int n;

	printf("memhog: %s\n", how);
	fflush(stdout);
	if (!strcmp(how, "mmap")) {
		n = hog_mmap(CHUNK);
	} else if (!strcmp(how, "mmap-big")) {
		n = hog_mmap(256u << 20);
	} else if (!strcmp(how, "brk")) {
		n = hog_brk();
	} else if (!strcmp(how, "malloc")) {
		n = hog_malloc();
	} else if (!strcmp(how, "fork")) {
		/* Some memory in the parent, then children hog the rest. */
		int status;

		n = 0;
		for (int i = 0; i < 8; i++) {
			char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				break;
			touch(p, CHUNK);
			n++;
		}
		for (int i = 0; i < 2; i++) {
			pid_t pid = fork();

			if (pid == 0)
				_exit(hog_mmap(CHUNK) > 0 ? 0 : 1);
			if (pid < 0) {
				fprintf(stderr, "memhog: fork: %s\n",
					strerror(errno));
				continue;
			}
			if (waitpid(pid, &status, 0) != pid ||
			    !((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
			      (WIFSIGNALED(status) && WTERMSIG(status) == 9)))
				printf("memhog: child %d status %#x\n", i,
				       status);
		}
	} else if (!strcmp(how, "starve")) {
		/*
		 * All memory taken, then everything that needs kernel memory:
		 * each may fail, with an errno, and nothing may panic.
		 */
		static char big[65536];
		int fds[2], fd, status;
		pid_t pid;

		n = hog_mmap(CHUNK) + hog_mmap(4096);
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, &status, 0);
		printf("memhog: starve: fork %s\n", pid < 0 ? "failed" : "ok");
		if (pipe(fds) == 0) {
			ssize_t w = write(fds[1], big, sizeof(big));

			printf("memhog: starve: pipe write %s\n",
			       w < 0 ? strerror(errno) : "ok");
		}
		fd = open("/tmp-file", O_CREAT | O_RDWR, 0644);
		if (fd >= 0) {
			ssize_t w;

			do
				w = write(fd, big, sizeof(big));
			while (w > 0);
			printf("memhog: starve: file write %s\n",
			       w < 0 ? strerror(errno) : "ok");
		}
		printf("memhog: starve: mmap after %s\n",
		       mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED ?
		       strerror(errno) : "ok");
		execl("/bin/memhog", "memhog", "exec-ok", (char *)NULL);
		printf("memhog: starve: execve: %s\n", strerror(errno));
	} else if (!strcmp(how, "exec-ok")) {
		return 0;
	} else {
		fprintf(stderr, "memhog: unknown mode %s\n", how);
		return 2;
	}
	/*
	 * The memory was taken and touched; more was refused.  The count
	 * depends on the kernel's own use of memory, so it goes to stderr;
	 * stdout says only that the refusal came, after enough chunks.
	 */
	fprintf(stderr, "memhog: %s: %u chunks\n", how, n);
	if (!strcmp(how, "mmap-big") ? n != 0 : n < 8) {
		printf("memhog: %s: only %u chunks\n", how, n);
		return 1;
	}
	printf("memhog: %s: ENOMEM\n", how);
	return 0;
}
