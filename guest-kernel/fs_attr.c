// SPDX-License-Identifier: MIT
/*
 * The file system calls of stat and attributes (fs_syscalls.h): fstat,
 * newfstatat, stat, lstat, statx, faccessat2 and access, then chmod,
 * chown and the utime calls.
 */
#include "procfs.h"
#include "fs_syscalls.h"

static s64 stat_out(struct inode *n, u64 ubuf)
{
	struct linux_stat st;

	vfs_stat(n, &st);
	return put_user(ubuf, &st, sizeof(st));
}

SYSCALL(fstat)
{
	struct file *f = fget(a0);

	(void)a2, UNUSED3;
	return f ? stat_out(f->ino, a1) : -EBADF;
}

#define AT_STATX_SYNC_TYPE	0x6000	/* FORCE_SYNC, DONT_SYNC: all one here */

/* What fstatat() and statx() name: dirfd a0, path at upath, AT_ flags. */
static int stat_at(u64 a0, u64 upath, u64 flags, struct linux_stat *st)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	err = get_path(upath, buf);
	if (err)
		return err;
	if (!buf[0] && (flags & AT_EMPTY_PATH)) {
		struct inode *n;

		if ((int)a0 == AT_FDCWD) {
			err = cwd_inode(current_task()->proc->cwd, &n);
			if (err)
				return err;
		} else {
			struct file *f = fget((u32)a0);

			if (!f)
				return -EBADF;
			n = f->ino;
		}
		vfs_stat(n, st);
		return 0;
	}
	if (procfs_path(buf))
		return procfs_stat(buf, !(flags & AT_SYMLINK_NOFOLLOW), st);
	err = lookup_buf(a0, buf, !(flags & AT_SYMLINK_NOFOLLOW), &nr);
	if (!err)
		vfs_stat(nr.ino, st);
	return err;
}

SYSCALL(newfstatat)
{
	struct linux_stat st;
	int err;

	(void)a4, (void)a5;
	/* Linux takes statx's sync flags here too (vfs_statx()) */
	if (a3 & ~(u64)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT |
			AT_STATX_SYNC_TYPE))
		return -EINVAL;
	err = stat_at(a0, a1, a3, &st);
	return err ? err : put_user(a2, &st, sizeof(st));
}

SYSCALL(stat)
{
	(void)a2, UNUSED3;
	return sys_newfstatat(AT_FDCWD, a0, a1, 0, 0, 0);
}

SYSCALL(lstat)
{
	(void)a2, UNUSED3;
	return sys_newfstatat(AT_FDCWD, a0, a1, AT_SYMLINK_NOFOLLOW, 0, 0);
}

#define STATX_BASIC_STATS	0x7ffu	/* type, mode ... blocks: what we have */
#define STATX_RESERVED		0x80000000u

struct statx_ts {
	s64 sec;
	u32 nsec;
	s32 reserved;
};

/* Linux's struct statx (256 bytes). */
struct linux_statx {
	u32 mask, blksize;
	u64 attributes;
	u32 nlink, uid, gid;
	u16 mode, spare0;
	u64 ino, size, blocks, attributes_mask;
	struct statx_ts atime, btime, ctime, mtime;
	u32 rdev_major, rdev_minor, dev_major, dev_minor;
	u64 mnt_id;
	u32 dio_mem_align, dio_offset_align;
	u64 spare3[12];
};

_Static_assert(sizeof(struct linux_statx) == 256, "Linux's struct statx");

/* statx(dirfd, path, flags, mask, buf): the basic stats, whatever the
 * mask asks (Linux may give more than asked, and says what in mask); no
 * birth time (tmpfs has none either). */
SYSCALL(statx)
{
	struct linux_statx x;
	struct linux_stat st;
	int err;

	(void)a5;
	if ((a2 & ~(u64)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH |
			 AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE)) ||
	    (a2 & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE ||
	    (a3 & STATX_RESERVED))
		return -EINVAL;
	err = stat_at(a0, a1, a2, &st);
	if (err)
		return err;
	memset(&x, 0, sizeof(x));
	x.mask = STATX_BASIC_STATS;
	x.blksize = (u32)st.blksize;
	x.nlink = (u32)st.nlink;
	x.uid = st.uid;
	x.gid = st.gid;
	x.mode = (u16)st.mode;
	x.ino = st.ino;
	x.size = (u64)st.size;
	x.blocks = (u64)st.blocks;
	x.atime = (struct statx_ts){ (s64)st.atime, (u32)st.atime_ns, 0 };
	x.mtime = (struct statx_ts){ (s64)st.mtime, (u32)st.mtime_ns, 0 };
	x.ctime = (struct statx_ts){ (s64)st.ctime, (u32)st.ctime_ns, 0 };
	/* Linux's new_encode_dev(): major 12 bits above minor's low 8 */
	x.rdev_major = (u32)((st.rdev >> 8) & 0xfff);
	x.rdev_minor = (u32)((st.rdev & 0xff) | ((st.rdev >> 12) & ~0xffull));
	x.dev_major = (u32)((st.dev >> 8) & 0xfff);
	x.dev_minor = (u32)((st.dev & 0xff) | ((st.dev >> 12) & ~0xffull));
	return put_user(a4, &x, sizeof(x));
}

SYSCALL(faccessat2)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	(void)a4, (void)a5;
	if ((a2 & ~7ull) ||
	    (a3 & ~(u64)(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)))
		return -EINVAL;
	err = get_path(a1, buf);
	if (err)
		return err;
	if (procfs_path(buf))
		return procfs_access(buf, a2);
	err = lookup_buf(a0, buf, !(a3 & AT_SYMLINK_NOFOLLOW), &nr);
	if (err)
		return err;
	/* We run as root: X_OK needs an execute bit (or a directory). */
	if ((a2 & 1) && nr.ino->kind != VN_DIR && !(nr.ino->mode & 0111))
		return -EACCES;
	return 0;
}

SYSCALL(faccessat)
{
	UNUSED3;
	return sys_faccessat2(a0, a1, a2, 0, 0, 0);
}

SYSCALL(access)
{
	(void)a2, UNUSED3;
	return sys_faccessat2(AT_FDCWD, a0, a1, 0, 0, 0);
}

/*
 * Attributes the tree keeps in part.  Every process is root and inodes
 * have no owner, so chown succeeds on a file that exists (what tar, cpio
 * and SQLite's journal check need) and changes nothing; chmod keeps the
 * permission bits; the utime calls set the one time an inode keeps, its
 * modification time (on a --dir file only the guest's view of it).
 */
static int attr_target(u64 dirfd, u64 upath, bool empty_ok, bool follow,
		       struct inode **n)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	if (!upath && empty_ok) {		/* utimensat(fd, NULL, ...) */
		struct file *f = fget(dirfd);

		if (!f)
			return -EBADF;
		*n = f->ino;
		return 0;
	}
	err = lookup_at(dirfd, upath, buf, follow, &nr);
	if (!err)
		*n = nr.ino;
	return err;
}

static s64 chmod_node(struct inode *n, u64 mode)
{
	n->mode = (n->mode & ~07777u) | (mode & 07777);
	return 0;
}

SYSCALL(fchmodat)
{
	struct inode *n;
	int err;

	(void)a3, (void)a4, (void)a5;
	err = attr_target(a0, a1, false, true, &n);
	return err ? err : chmod_node(n, a2);
}

SYSCALL(chmod)
{
	(void)a2, UNUSED3;
	return sys_fchmodat(AT_FDCWD, a0, a1, 0, 0, 0);
}

SYSCALL(fchmod)
{
	struct file *f = fget(a0);

	(void)a2, UNUSED3;
	return f ? chmod_node(f->ino, a1) : -EBADF;
}

SYSCALL(fchownat)
{
	struct inode *n;

	(void)a2, (void)a3, (void)a5;
	return attr_target(a0, a1, false, !(a4 & AT_SYMLINK_NOFOLLOW), &n);
}

SYSCALL(chown)
{
	(void)a1, (void)a2, UNUSED3;
	return sys_fchownat(AT_FDCWD, a0, 0, 0, 0, 0);
}

SYSCALL(lchown)
{
	(void)a1, (void)a2, UNUSED3;
	return sys_fchownat(AT_FDCWD, a0, 0, 0, AT_SYMLINK_NOFOLLOW, 0);
}

SYSCALL(fchown)
{
	(void)a1, (void)a2, UNUSED3;
	return fget(a0) ? 0 : -EBADF;
}

#define UTIME_NOW	((1l << 30) - 1)
#define UTIME_OMIT	((1l << 30) - 2)

/* A timespec's nsec as utimensat takes it: a time or UTIME_NOW/_OMIT. */
static bool utime_nsec_ok(s64 nsec)
{
	return nsec == UTIME_NOW || nsec == UTIME_OMIT ||
	       (u64)nsec < 1000000000u;
}

/* The modification time of ts (sec, nsec), its nsec utime_nsec_ok(). */
static int mtime_set(struct inode *n, const s64 *ts)
{
	if (ts[1] == UTIME_OMIT)
		return 0;
	if (ts[1] == UTIME_NOW) {
		n->mtime_tsc = vfs_clock();
		return 0;
	}
	if (ts[0] < 0)
		return -EINVAL;	/* times before 1970: not kept here */
	n->mtime_tsc = 0;
	n->mtime_ns = (u64)ts[0] * 1000000000u + (u64)ts[1];
	return 0;
}

/* utimensat(dirfd, path, times[2] or NULL: now, flags) */
SYSCALL(utimensat)
{
	s64 ts[4] = { 0, UTIME_NOW, 0, UTIME_NOW };
	struct inode *n;
	int err;

	(void)a4, (void)a5;
	if (a3 & ~0x1100ull)	/* AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH */
		return -EINVAL;
	if (a2 && (!user_range_ok(a2, sizeof(ts)) ||
		   copy_from_user(ts, (void *)a2, sizeof(ts))))
		return -EFAULT;
	if (!utime_nsec_ok(ts[1]) || !utime_nsec_ok(ts[3]))
		return -EINVAL;
	err = attr_target(a0, a1, true, !(a3 & AT_SYMLINK_NOFOLLOW), &n);
	return err ? err : mtime_set(n, ts + 2);
}

/* utimes(path, timeval[2] or NULL): microseconds */
SYSCALL(utimes)
{
	s64 tv[4], ts[2] = { 0, UTIME_NOW };
	struct inode *n;
	int err;

	(void)a2, UNUSED3;
	if (a1) {
		if (!user_range_ok(a1, sizeof(tv)) ||
		    copy_from_user(tv, (void *)a1, sizeof(tv)))
			return -EFAULT;
		if ((u64)tv[1] >= 1000000u || (u64)tv[3] >= 1000000u)
			return -EINVAL;
		ts[0] = tv[2];
		ts[1] = tv[3] * 1000;
	}
	err = attr_target(AT_FDCWD, a0, false, true, &n);
	return err ? err : mtime_set(n, ts);
}

/* utime(path, { actime, modtime } or NULL): seconds */
SYSCALL(utime)
{
	s64 ub[2], ts[2] = { 0, UTIME_NOW };
	struct inode *n;
	int err;

	(void)a2, UNUSED3;
	if (a1) {
		if (!user_range_ok(a1, sizeof(ub)) ||
		    copy_from_user(ub, (void *)a1, sizeof(ub)))
			return -EFAULT;
		ts[0] = ub[1];
		ts[1] = 0;
	}
	err = attr_target(AT_FDCWD, a0, false, true, &n);
	return err ? err : mtime_set(n, ts);
}
