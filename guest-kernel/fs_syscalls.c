// SPDX-License-Identifier: MIT
/*
 * File system calls (Linux x86-64 semantics) over the file layer
 * (vfs.h): opening and naming (open, mkdir, unlink, rename, readlink,
 * chdir, getcwd, truncate, links), the memory hooks the file layer and
 * pipe.c use, and what the rest of the kernel asks of the file layer
 * (exec's and mmap's lookups).  Kernel only.
 * The data path is in fs_rw.c, stat and attributes in fs_attr.c,
 * descriptors, pipes and poll in fs_fd.c; what they share in
 * fs_syscalls.h.
 *
 * Every user pointer is range-checked here with user_range_ok() before
 * the file layer or pipe.c touch it through copy_*_user (which turn a
 * fault on an unmapped page into -EFAULT).
 */
#include "procfs.h"
#include "fs_syscalls.h"
#include "vdso.h"

extern struct pv_boot_params *boot_params;

/* ---- memory hooks for the file layer and pipe.c ---- */

/* The free huge pages that are not part of the run go back at the end.
 * Out of line, as it was beside sendfile: vfs_data_alloc()'s one-page
 * path saves no registers. */
static __attribute__((noinline)) void *huge_run(u64 n, u64 *cap)
{
	u64 base = 0, got = 0, aside = 0, pa;

	while (got < n && (pa = huge_alloc_zero())) {
		if (got && pa == base - PV_HUGE_SIZE) {
			base = pa;	/* fresh memory comes top down */
			got++;
			continue;
		}
		if (got && pa == base + got * PV_HUGE_SIZE) {
			got++;
			continue;
		}
		while (got) {
			u64 q = base + --got * PV_HUGE_SIZE;

			*(u64 *)P2V(q) = aside;
			aside = q;
		}
		base = pa;
		got = 1;
	}
	while (got < n && got) {
		u64 q = base + --got * PV_HUGE_SIZE;

		*(u64 *)P2V(q) = aside;
		aside = q;
	}
	while (aside) {
		pa = aside;
		aside = *(u64 *)P2V(pa);
		huge_free(pa);
	}
	if (got < n)
		return NULL;
	*cap = n * PV_HUGE_SIZE;
	return P2V(base);
}

/*
 * File contents must be contiguous (execve and mmap use them in place):
 * one page, or 2 MiB pages.  A file between 4 KiB and 2 MiB takes a whole
 * 2 MiB page: simple, and few files are written at run time.
 */
void *vfs_data_alloc(u64 need, u64 *cap)
{
	u64 pa;

	if (need <= PAGE_SIZE) {
		pa = page_alloc();
		*cap = PAGE_SIZE;
		return pa ? P2V(pa) : NULL;
	}
	return huge_run(ALIGN_UP(need, PV_HUGE_SIZE) / PV_HUGE_SIZE, cap);
}

void vfs_data_free(void *p, u64 cap)
{
	if (cap <= PAGE_SIZE) {
		page_free(V2P(p));
		return;
	}
	for (u64 off = 0; off < cap; off += PV_HUGE_SIZE)
		huge_free(V2P(p) + off);
}

void *vfs_page_alloc(void)
{
	u64 pa = page_alloc();

	return pa ? P2V(pa) : NULL;
}

void vfs_page_free(void *p)
{
	page_free(V2P(p));
}

/* File times are TSC stamps, made wall-clock time when stat asks: one
 * rdtsc on the write paths (file_leaf.S's too). */
u64 vfs_clock(void)
{
	return rdtsc();
}

u64 vfs_clock_ns(u64 clock)
{
	return pv_realtime_ns(vvar, clock);
}

/* ---- helpers ---- */

static bool is_self_exe(const char *p)
{
	return p[0] == '/' && p[1] == 'p' && !strcmp(p, "/proc/self/exe");
}

int cwd_inode(const char *cwd, struct inode **out)
{
	struct nameres nr;
	int err;

	if (cwd[0] == '/' && !cwd[1]) {
		*out = vfs_root();
		return 0;
	}
	err = vfs_resolve(vfs_root(), cwd, &nr);
	if (err)
		return err;
	if (!nr.ino)
		return -ENOENT;
	*out = nr.ino;
	return 0;
}

/* Walk path from dirfd (AT_FDCWD: the cwd); absolute paths ignore it. */
int resolve_at(u64 dirfd, const char *path, bool follow, struct nameres *nr)
{
	struct inode *base = vfs_root();
	int err;

	if (path[0] != '/' && path[0]) {
		if ((int)dirfd == AT_FDCWD) {
			err = cwd_inode(current_task()->proc->cwd, &base);
			if (err)
				return err;
		} else {
			struct file *f = fget((u32)dirfd);

			if (!f)
				return -EBADF;
			if (f->ino->kind != VN_DIR)
				return -ENOTDIR;
			base = f->ino;
		}
	}
	return vfs_walk(base, path, follow, nr);
}

/* ---- opening and naming ---- */

SYSCALL(openat)
{
	struct fdtable *t = cur_fdt();
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	struct file *f;
	int err, fd;

	(void)a4, (void)a5;
	err = get_path(a1, buf);
	if (err)
		return err;
	/* Check for a free slot before O_CREAT makes the file. */
	if (!fdt_has_free(t, 1))
		return -EMFILE;
	if (procfs_path(buf)) {
		err = procfs_open(buf, a2, &f);
		if (err)
			return err;
	} else {
		/* O_CREAT|O_EXCL takes the name itself, as O_NOFOLLOW does */
		bool follow = !(a2 & VO_NOFOLLOW) &&
			      (a2 & (VO_CREAT | VO_EXCL)) != (VO_CREAT | VO_EXCL);

		err = resolve_at(a0, buf, follow, &nr);
		if (!err)
			err = vfs_open(&nr, a2, a3, t->umask, &f);
		if (err)
			return err;
	}
	fd = fd_install(t, f, 0, a2 & VO_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}

SYSCALL(open)
{
	UNUSED3;
	return sys_openat(AT_FDCWD, a0, a1, a2, 0, 0);
}

SYSCALL(creat)
{
	(void)a2, UNUSED3;
	return sys_openat(AT_FDCWD, a0, VO_CREAT | VO_WRONLY | VO_TRUNC, a1,
			  0, 0);
}

SYSCALL(getdents64)
{
	struct file *f = fget(a0);

	UNUSED3;
	if (!f)
		return -EBADF;
	if (!user_range_ok(a1, a2))
		return -EFAULT;
	return vfs_getdents(f, (void *)a1, a2 < MAX_RW ? a2 : MAX_RW);
}

SYSCALL(getcwd)
{
	const char *cwd = current_task()->proc->cwd;
	u64 len = strlen(cwd) + 1;

	(void)a2, UNUSED3;
	if (a1 < len)
		return -ERANGE;
	return put_user(a0, cwd, len) ?: (s64)len;
}

static s64 set_cwd(struct inode *n)
{
	struct proc *p = current_task()->proc;

	if (n->kind != VN_DIR)
		return -ENOTDIR;
	return vfs_path(n, p->cwd, sizeof(p->cwd)) < 0 ? -ENAMETOOLONG : 0;
}

SYSCALL(chdir)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	(void)a1, (void)a2, UNUSED3;
	err = lookup_at(AT_FDCWD, a0, buf, true, &nr);
	return err ? err : set_cwd(nr.ino);
}

SYSCALL(fchdir)
{
	struct file *f = fget(a0);

	(void)a1, (void)a2, UNUSED3;
	return f ? set_cwd(f->ino) : -EBADF;
}

SYSCALL(mkdirat)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	UNUSED3;
	err = get_path(a1, buf);
	if (!err)
		err = resolve_at(a0, buf, false, &nr);
	if (!err)
		err = vfs_create(&nr, VS_IFDIR | (a2 & 07777),
				 cur_fdt()->umask);
	return err;
}

SYSCALL(mkdir)
{
	(void)a2, UNUSED3;
	return sys_mkdirat(AT_FDCWD, a0, a1, 0, 0, 0);
}

SYSCALL(unlinkat)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	UNUSED3;
	if (a2 & ~(u64)AT_REMOVEDIR)
		return -EINVAL;
	err = get_path(a1, buf);
	if (!err)
		err = resolve_at(a0, buf, false, &nr);
	if (!err)
		err = vfs_unlink(&nr, a2 & AT_REMOVEDIR);
	return err;
}

SYSCALL(unlink)
{
	(void)a1, (void)a2, UNUSED3;
	return sys_unlinkat(AT_FDCWD, a0, 0, 0, 0, 0);
}

SYSCALL(rmdir)
{
	(void)a1, (void)a2, UNUSED3;
	return sys_unlinkat(AT_FDCWD, a0, AT_REMOVEDIR, 0, 0, 0);
}

#define RENAME_NOREPLACE	1

SYSCALL(renameat2)
{
	char from_buf[VFS_PATH_MAX], to_buf[VFS_PATH_MAX];
	struct nameres from, to;
	int err;

	(void)a5;
	if (a4 & ~(u64)RENAME_NOREPLACE)
		return -EINVAL;		/* RENAME_EXCHANGE, WHITEOUT */
	err = get_path(a1, from_buf);
	if (!err)
		err = get_path(a3, to_buf);
	if (!err)
		err = resolve_at(a0, from_buf, false, &from);
	if (!err)
		err = resolve_at(a2, to_buf, false, &to);
	if (err)
		return err;
	if (to.ino && (a4 & RENAME_NOREPLACE))
		return -EEXIST;
	return vfs_rename(&from, &to);
}

SYSCALL(renameat)
{
	(void)a4, (void)a5;
	return sys_renameat2(a0, a1, a2, a3, 0, 0);
}

SYSCALL(rename)
{
	(void)a2, UNUSED3;
	return sys_renameat2(AT_FDCWD, a0, AT_FDCWD, a1, 0, 0);
}

/* The tree's symbolic links, /proc/PID/exe (procfs_glue.c) and a host
 * directory's links. */
SYSCALL(readlinkat)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err, len;

	(void)a4, (void)a5;
	if ((s64)(int)a3 <= 0)
		return -EINVAL;
	err = get_path(a1, buf);
	if (err)
		return err;
	if (procfs_path(buf)) {
		len = procfs_readlink(buf, buf, sizeof(buf));
		if (len < 0)
			return len;
		if ((u64)len > (u32)a3)
			len = (u32)a3;
		return put_user(a2, buf, len) ?: len;
	}
	/* In a host directory the host says what the last name is. */
	err = resolve_at(a0, buf, false, &nr);
	if (!err && nr.dir->hh && nr.ino != nr.dir && !nr.slash) {
		if (!user_range_ok(a2, (u32)a3))
			return -EFAULT;
		return hostfs_readlink(nr.dir->hh, nr.name, nr.len, a2,
				       (u32)a3);
	}
	err = lookup_buf(a0, buf, false, &nr);
	if (err)
		return err;
	if (nr.ino->kind != VN_SYMLINK)
		return -EINVAL;
	len = nr.ino->size < (u32)a3 ? (int)nr.ino->size : (int)(u32)a3;
	return put_user(a2, nr.ino->data, len) ?: len;
}

SYSCALL(readlink)
{
	UNUSED3;
	return sys_readlinkat(AT_FDCWD, a0, a1, a2, 0, 0);
}

SYSCALL(umask)
{
	struct fdtable *t = cur_fdt();
	u32 old = t->umask;

	(void)a1, (void)a2, UNUSED3;
	t->umask = a0 & 0777;
	return old;
}

SYSCALL(truncate)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	(void)a2, UNUSED3;
	if ((s64)a1 < 0)
		return -EINVAL;
	err = lookup_at(AT_FDCWD, a0, buf, true, &nr);
	return err ? err : vfs_truncate(nr.ino, a1);
}

SYSCALL(ftruncate)
{
	struct file *f = fget(a0);

	(void)a2, UNUSED3;
	if (!f)
		return -EBADF;
	if ((s64)a1 < 0 || (f->flags & VO_ACCMODE) == VO_RDONLY ||
	    f->ino->kind != VN_REG)
		return -EINVAL;
	return vfs_truncate(f->ino, a1);
}

SYSCALL(fsync)
{
	struct file *f = fget(a0);

	(void)a1, (void)a2, UNUSED3;
	if (!f)
		return -EBADF;
	/* A host file: fsync(2) on the host; the tree has no disk. */
	return f->ino->hh ? hostfs_fsync(f->ino->hh) : 0;
}

/* symlinkat(target, dirfd, linkpath): the target is kept as given,
 * walked only when the link is. */
SYSCALL(symlinkat)
{
	char target[VFS_PATH_MAX], buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	(void)a3, (void)a4, (void)a5;
	err = get_path(a0, target);
	if (!err)
		err = get_path(a2, buf);
	if (!err)
		err = resolve_at(a1, buf, false, &nr);
	return err ? err : vfs_symlink(&nr, target, strlen(target));
}

SYSCALL(symlink)
{
	(void)a2, UNUSED3;
	return sys_symlinkat(a0, AT_FDCWD, a1, 0, 0, 0);
}

SYSCALL(linkat)
{
	char from_buf[VFS_PATH_MAX], to_buf[VFS_PATH_MAX];
	struct nameres from, to;
	int err;

	(void)a5;
	if (a4 & ~(u64)AT_SYMLINK_FOLLOW)
		return a4 & AT_EMPTY_PATH ? -ENOENT : -EINVAL;
	err = get_path(a1, from_buf);
	if (!err)
		err = get_path(a3, to_buf);
	/* Linux links a symbolic link itself unless AT_SYMLINK_FOLLOW */
	if (!err)
		err = resolve_at(a0, from_buf, a4 & AT_SYMLINK_FOLLOW, &from);
	if (!err)
		err = resolve_at(a2, to_buf, false, &to);
	return err ? err : vfs_link(&from, &to);
}

SYSCALL(link)
{
	(void)a2, UNUSED3;
	return sys_linkat(AT_FDCWD, a0, AT_FDCWD, a1, 0, 0);
}

/* ---- for the rest of the kernel ---- */

int vfs_init(const u8 *initrd, u64 size)
{
	int err = vfs_core_init((boot_params->flags >> 1) & 7);
	struct nameres nr;

	if (!err)
		err = vfs_seed(initrd, size);
	/*
	 * A /tmp (mode 1777) if the archive has none: upstream code puts its
	 * temporary files there (SQLite's VACUUM and sort spills, tmpfile()).
	 */
	if (!err && !vfs_resolve(vfs_root(), "/tmp", &nr) && !nr.ino)
		err = vfs_create(&nr, VS_IFDIR | 01777, 0);
	/* After /tmp: with a share at "/" the tree's /tmp stays writable. */
	if (!err)
		err = hostfs_mount_all();
	return err;
}

int vfs_exec_lookup(const char *path, const char *cwd, const u8 **data,
		    u64 *size)
{
	struct inode *base = vfs_root();
	struct nameres nr;
	int err;

	if (is_self_exe(path)) {
		struct inode *exe = cur_fdt()->exe;

		return exe ? vfs_exec_node(exe, data, size) : -ENOENT;
	}
	if (path[0] != '/' && (err = cwd_inode(cwd, &base)))
		return err;
	err = vfs_resolve(base, path, &nr);
	if (err)
		return err;
	if (!nr.ino)
		return -ENOENT;
	if (nr.slash && nr.ino->kind != VN_DIR)
		return -ENOTDIR;
	return vfs_exec_node(nr.ino, data, size);
}

/*
 * A PT_INTERP path: absolute, as Linux's loader takes it (a relative one
 * would be the caller's cwd there; no program has one).  Not recorded as
 * /proc/self/exe: that stays the program.
 */
/* The node of an absolute path, or NULL. */
struct inode *vfs_lookup_abs(const char *path)
{
	struct nameres nr;

	if (path[0] != '/' || vfs_resolve(vfs_root(), path, &nr))
		return NULL;
	return nr.ino;
}

int vfs_interp_lookup(const char *path, const u8 **data, u64 *size)
{
	struct inode *n;

	if (path[0] != '/')
		return -ENOEXEC;
	n = vfs_lookup_abs(path);
	return n ? vfs_image_node(n, data, size) : -ENOENT;
}

int vfs_fd_mmap_source(int fd, u64 off, u64 *phys, u64 *len)
{
	struct file *f = fget((u32)fd);
	struct inode *n;
	int err;

	if (!f)
		return -EBADF;
	n = f->ino;
	if (n->kind != VN_REG)
		return -ENODEV;
	if ((f->flags & VO_ACCMODE) == VO_WRONLY)
		return -EACCES;
	if (off & (PAGE_SIZE - 1))
		return -EINVAL;
	err = vfs_host_load(n);
	if (err)
		return err;
	*phys = 0;
	*len = 0;
	if (off < n->size) {
		vfs_pin(n);	/* later writes must not change the mapping */
		*phys = V2P(n->data + off);
		*len = n->size - off;
	}
	return 0;
}
