/* SPDX-License-Identifier: MIT */
/*
 * What the file system calls share (Linux x86-64 semantics), kernel only:
 * fs_syscalls.c (opening, naming, the memory hooks the file layer uses),
 * fs_rw.c (the data path), fs_attr.c (stat and attributes) and fs_fd.c
 * (descriptors, pipes, poll).
 *
 * Every user pointer is range-checked in those files with user_range_ok()
 * before the file layer (vfs.h) or pipe.c touch it through copy_*_user
 * (which turn a fault on an unmapped page into -EFAULT).  The small helpers are static
 * inline here, inlined where they are used as when they were static in
 * one file: every kernel instruction is emulated, a call's too.
 */
#ifndef KERNEL_FS_SYSCALLS_H
#define KERNEL_FS_SYSCALLS_H

#include "task.h"
#include "vfs.h"

#define AT_FDCWD		(-100)
#define AT_SYMLINK_NOFOLLOW	0x100
#define AT_REMOVEDIR		0x200
#define AT_SYMLINK_FOLLOW	0x400
#define AT_EACCESS		0x200
#define AT_NO_AUTOMOUNT		0x800
#define AT_EMPTY_PATH		0x1000
#define MAX_RW			0x7ffff000ull	/* Linux's MAX_RW_COUNT */

#define SYSCALL(name) \
	s64 sys_##name(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
#define UNUSED3 (void)a3, (void)a4, (void)a5

/* ---- helpers ---- */

static inline struct fdtable *cur_fdt(void)
{
	return current_task()->proc->fdt;
}

static inline struct file *fget(u64 fd)
{
	return fd_file(cur_fdt(), fd);
}

/* A NUL-terminated path from user memory; "" is left to the caller. */
static inline int get_path(u64 upath, char *buf)
{
	s64 r = user_string(buf, upath, VFS_PATH_MAX);

	if (r < 0)
		return r;
	return r == VFS_PATH_MAX ? -ENAMETOOLONG : 0;
}

/* fs_syscalls.c: the cwd's node, and a path walked from dirfd. */
int cwd_inode(const char *cwd, struct inode **out);
/* Walk path from dirfd (AT_FDCWD: the cwd); absolute paths ignore it.
 * follow: a symbolic link as the last name is followed (vfs_walk). */
int resolve_at(u64 dirfd, const char *path, bool follow, struct nameres *nr);

/* resolve_at for a node that must exist. */
static inline int lookup_buf(u64 dirfd, const char *buf, bool follow,
			     struct nameres *nr)
{
	int err = resolve_at(dirfd, buf, follow, nr);

	if (err)
		return err;
	if (!nr->ino)
		return -ENOENT;
	if (nr->slash && nr->ino->kind != VN_DIR)
		return -ENOTDIR;
	return 0;
}

static inline int lookup_at(u64 dirfd, u64 upath, char *buf, bool follow,
			    struct nameres *nr)
{
	int err = get_path(upath, buf);

	return err ? err : lookup_buf(dirfd, buf, follow, nr);
}

static inline s64 put_user(u64 uva, const void *v, u64 n)
{
	if (!user_range_ok(uva, n) || copy_to_user((void *)uva, v, n))
		return -EFAULT;
	return 0;
}

#endif
