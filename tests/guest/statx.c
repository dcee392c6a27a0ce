// SPDX-License-Identifier: MIT
/*
 * statx() gives what fstatat() gives, for files, directories, devices,
 * pipes (AT_EMPTY_PATH), /proc and symbolic links, and Linux's errors:
 * coreutils calls it directly (ls, cp, stat).  The same output natively.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Linux's uapi struct statx: musl 1.2.3 has none */
struct statx_ts {
	long long tv_sec;
	unsigned tv_nsec;
	int reserved;
};

struct statx_buf {
	unsigned stx_mask, stx_blksize;
	unsigned long long stx_attributes;
	unsigned stx_nlink, stx_uid, stx_gid;
	unsigned short stx_mode, spare0;
	unsigned long long stx_ino, stx_size, stx_blocks, stx_attributes_mask;
	struct statx_ts stx_atime, stx_btime, stx_ctime, stx_mtime;
	unsigned stx_rdev_major, stx_rdev_minor, stx_dev_major, stx_dev_minor;
	unsigned long long spare[14];
};

#define STATX_BASIC_STATS	0x7ffu
#define AT_STATX_FORCE_SYNC	0x2000
#define AT_STATX_DONT_SYNC	0x4000

static int failures;

static int statx_raw(int dirfd, const char *path, int flags, unsigned mask,
		     struct statx_buf *x)
{
	return (int)syscall(SYS_statx, dirfd, path, flags, mask, x);
}

static void same(int dirfd, const char *path, int flags, const char *what)
{
	struct statx_buf x;
	struct stat st;

	memset(&x, 0xa5, sizeof(x));
	if (statx_raw(dirfd, path, flags, STATX_BASIC_STATS, &x) ||
	    fstatat(dirfd, path, &st, flags)) {
		printf("FAIL %s: errno %d\n", what, errno);
		failures++;
		return;
	}
	if ((x.stx_mask & STATX_BASIC_STATS) != STATX_BASIC_STATS ||
	    x.stx_mode != st.st_mode || x.stx_ino != st.st_ino ||
	    x.stx_size != (unsigned long long)st.st_size ||
	    x.stx_nlink != st.st_nlink || x.stx_uid != st.st_uid ||
	    x.stx_gid != st.st_gid || x.stx_blocks != (unsigned long long)st.st_blocks ||
	    x.stx_blksize != (unsigned)st.st_blksize ||
	    x.stx_mtime.tv_sec != st.st_mtim.tv_sec ||
	    x.stx_mtime.tv_nsec != (unsigned)st.st_mtim.tv_nsec ||
	    x.stx_ctime.tv_sec != st.st_ctim.tv_sec ||
	    makedev(x.stx_rdev_major, x.stx_rdev_minor) != st.st_rdev ||
	    makedev(x.stx_dev_major, x.stx_dev_minor) != st.st_dev) {
		printf("FAIL %s: statx and fstatat differ (mode %o/%o size "
		       "%llu/%lld)\n", what, x.stx_mode, st.st_mode,
		       (unsigned long long)x.stx_size, (long long)st.st_size);
		failures++;
	}
}

static void fails(int dirfd, const char *path, int flags, unsigned mask,
		  int err, const char *what)
{
	struct statx_buf x;

	if (statx_raw(dirfd, path, flags, mask, &x) != -1 || errno != err) {
		printf("FAIL %s: errno %d, not %d\n", what, errno, err);
		failures++;
	}
}

int main(int argc, char **argv)
{
	int p[2], fd;

	(void)argc, (void)argv;
	same(AT_FDCWD, "/", 0, "root");
	same(AT_FDCWD, "/dev/null", 0, "/dev/null");
	same(AT_FDCWD, "/proc/self/maps", 0, "/proc/self/maps");
	same(AT_FDCWD, "/proc/self/exe", AT_SYMLINK_NOFOLLOW, "exe link");
	same(AT_FDCWD, "/proc/self/exe", 0, "exe target");
	fd = open("/tmp/statx-test", O_CREAT | O_RDWR | O_TRUNC, 0640);
	if (fd < 0 || write(fd, "0123456789", 10) != 10) {
		printf("FAIL: /tmp/statx-test: errno %d\n", errno);
		failures++;
	}
	same(fd, "", AT_EMPTY_PATH, "a written file by fd");
	same(AT_FDCWD, "/tmp/statx-test", AT_STATX_DONT_SYNC, "DONT_SYNC");
	if (pipe(p) == 0)
		same(p[0], "", AT_EMPTY_PATH, "a pipe");
	unlink("/tmp/statx-test");
	fails(AT_FDCWD, "/nonexistent", 0, STATX_BASIC_STATS, ENOENT, "ENOENT");
	fails(AT_FDCWD, "", 0, STATX_BASIC_STATS, ENOENT, "empty path");
	fails(999, "", AT_EMPTY_PATH, STATX_BASIC_STATS, EBADF, "bad fd");
	fails(AT_FDCWD, "/", 0x40000, STATX_BASIC_STATS, EINVAL, "bad flag");
	fails(AT_FDCWD, "/", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC,
	      STATX_BASIC_STATS, EINVAL, "both sync types");
	fails(AT_FDCWD, "/", 0, 0x80000000u, EINVAL, "reserved mask bit");
	printf("statx: %s (%d failed)\n", failures ? "WRONG" : "ok", failures);
	return failures != 0;
}
