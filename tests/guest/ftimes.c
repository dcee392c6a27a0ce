// SPDX-License-Identifier: MIT
/*
 * A file's modification time: now when it is made, written (also by
 * pwrite's leaf path in the guest), or truncated; what utimensat, utimes
 * and utime set; UTIME_OMIT keeps it.  make compares these.  The same
 * output natively.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include "guest_check.h"

static struct timespec mtime(const char *path)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	stat(path, &st);
	return st.st_mtim;
}

/* Within 5 s of the wall clock now. */
static int recent(struct timespec t)
{
	time_t now = time(NULL);

	return t.tv_sec <= now + 1 && t.tv_sec >= now - 5;
}

static const struct timespec old[2] = {
	{ 1000000000, 500000000 }, { 1000000000, 500000000 }
};

int main(void)
{
	const char *a = "/tmp/ftimes-a", *b = "/tmp/ftimes-b";
	char buf[4096] = { 1 };
	struct timespec t, keep[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	struct timeval tv[2] = { { 1200000000, 250000 }, { 1200000000, 250000 } };
	struct utimbuf ub = { 1300000000, 1300000000 };
	int fd;

	unlink(a);
	fd = open(a, O_CREAT | O_RDWR, 0644);
	CHECK(fd >= 0, "open: errno %d", errno);
	CHECK(recent(mtime(a)), "a new file: %ld", (long)mtime(a).tv_sec);
	CHECK(utimensat(AT_FDCWD, a, old, 0) == 0, "utimensat: errno %d", errno);
	t = mtime(a);
	CHECK(t.tv_sec == 1000000000 && t.tv_nsec == 500000000,
	      "utimensat set %ld.%09ld", (long)t.tv_sec, t.tv_nsec);
	CHECK(write(fd, buf, 10) == 10 && recent(mtime(a)), "write");
	CHECK(futimens(fd, old) == 0 && mtime(a).tv_sec == 1000000000,
	      "futimens");
	CHECK(pwrite(fd, buf, sizeof(buf), 0) == sizeof(buf) &&
	      recent(mtime(a)), "pwrite of 4096 bytes");
	CHECK(futimens(fd, old) == 0 && ftruncate(fd, 100) == 0 &&
	      recent(mtime(a)), "ftruncate");
	CHECK(futimens(fd, old) == 0 && utimensat(fd, NULL, keep, 0) == 0 &&
	      mtime(a).tv_sec == 1000000000, "UTIME_OMIT keeps it");
	CHECK(utimes(a, tv) == 0 && mtime(a).tv_sec == 1200000000 &&
	      mtime(a).tv_nsec == 250000000, "utimes");
	CHECK(utime(a, &ub) == 0 && mtime(a).tv_sec == 1300000000 &&
	      mtime(a).tv_nsec == 0, "utime");
	CHECK(utime(a, NULL) == 0 && recent(mtime(a)), "utime(NULL): now");
	keep[1].tv_nsec = 1000000000;
	CHECK(utimensat(AT_FDCWD, a, keep, 0) == -1 && errno == EINVAL,
	      "nsec out of range: errno %d", errno);
	/* make's question: b, written after a, is not older */
	CHECK(futimens(fd, old) == 0, "futimens");
	unlink(b);
	close(open(b, O_CREAT | O_WRONLY, 0644));
	t = mtime(b);
	CHECK(t.tv_sec > mtime(a).tv_sec, "b newer than a");
	close(fd);
	unlink(a);
	unlink(b);
	printf("ftimes: %s (%d failed)\n", failures ? "WRONG" : "ok", failures);
	return failures != 0;
}
