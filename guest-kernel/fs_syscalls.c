// SPDX-License-Identifier: MIT
/*
 * File system calls (Linux x86-64 semantics) over vfs.c, the console and
 * blocking pipes, and the memory hooks vfs.c uses.  Kernel only.
 *
 * Every user pointer is range-checked here with user_range_ok() before
 * vfs.c or pipe.c touch it through copy_*_user (which turn a fault on an
 * unmapped page into -EFAULT).  Console I/O hands the user buffer straight
 * to the VMM (PV_HC_WRITE/READ walk the page tables): no kernel copy.
 */
#include "procfs.h"
#include "task.h"
#include "vdso.h"
#include "vfs.h"

extern struct pv_boot_params *boot_params;

#define AT_FDCWD		(-100)
#define AT_SYMLINK_NOFOLLOW	0x100
#define AT_REMOVEDIR		0x200
#define AT_EACCESS		0x200
#define AT_NO_AUTOMOUNT		0x800
#define AT_EMPTY_PATH		0x1000
#define MAX_RW			0x7ffff000ull	/* Linux's MAX_RW_COUNT */

#define SYSCALL(name) \
	s64 sys_##name(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
#define UNUSED3 (void)a3, (void)a4, (void)a5

/* ---- memory hooks for vfs.c and pipe.c ---- */

/* The free huge pages that are not part of the run go back at the end. */
static void *huge_run(u64 n, u64 *cap)
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

static inline struct fdtable *cur_fdt(void)
{
	return current_task()->proc->fdt;
}

static inline struct file *fget(u64 fd)
{
	return fd_file(cur_fdt(), fd);
}

/* A NUL-terminated path from user memory; "" is left to the caller. */
static int get_path(u64 upath, char *buf)
{
	s64 r = user_string(buf, upath, VFS_PATH_MAX);

	if (r < 0)
		return r;
	return r == VFS_PATH_MAX ? -ENAMETOOLONG : 0;
}

static bool is_self_exe(const char *p)
{
	return p[0] == '/' && p[1] == 'p' && !strcmp(p, "/proc/self/exe");
}

static int cwd_inode(const char *cwd, struct inode **out)
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
static int resolve_at(u64 dirfd, const char *path, struct nameres *nr)
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
	return vfs_resolve(base, path, nr);
}

/* resolve_at for a node that must exist. */
static int lookup_buf(u64 dirfd, const char *buf, struct nameres *nr)
{
	int err = resolve_at(dirfd, buf, nr);

	if (err)
		return err;
	if (!nr->ino)
		return -ENOENT;
	if (nr->slash && nr->ino->kind != VN_DIR)
		return -ENOTDIR;
	return 0;
}

static int lookup_at(u64 dirfd, u64 upath, char *buf, struct nameres *nr)
{
	int err = get_path(upath, buf);

	return err ? err : lookup_buf(dirfd, buf, nr);
}

static bool is_tty(struct inode *n)
{
	return n->kind == VN_CONSOLE && (n->mode & VS_IFMT) == VS_IFCHR;
}

/* ---- read and write ---- */

static s64 pipe_read_wait(struct file *f, u64 buf, u64 len)
{
	struct pipe *p = f->ino->pipe;
	s64 r;

	f->refs++;		/* another thread may close it while we sleep */
	while ((r = pipe_read(p, (void *)buf, len)) == -EAGAIN &&
	       !(f->flags & VO_NONBLOCK)) {
		if (sleep_on(&p->rwait)) {
			r = -EINTR;
			break;
		}
	}
	if (r > 0) {
		wake_all(&p->wwait);
		wake_all(&vfs_poll_wq);
	}
	file_put(f);
	return r;
}

static s64 pipe_write_wait(struct file *f, u64 buf, u64 len)
{
	struct pipe *p = f->ino->pipe;
	u64 done = 0;
	s64 r = 0;

	f->refs++;
	while (done < len) {
		r = pipe_write(p, (const void *)(buf + done), len - done);
		if (r > 0) {
			done += r;
			wake_all(&p->rwait);
			wake_all(&vfs_poll_wq);
			continue;
		}
		if (r != -EAGAIN || (f->flags & VO_NONBLOCK))
			break;
		if (sleep_on(&p->wwait)) {
			r = -EINTR;
			break;
		}
	}
	file_put(f);
	/* -EPIPE: file_write() sends the SIGPIPE. */
	return done ? (s64)done : r;
}

static s64 file_read(struct file *f, u64 buf, u64 len)
{
	s64 r;

	switch (f->ino->kind) {
	case VN_CONSOLE:
		return hcall(PV_HC_READ, 0, buf, len);
	case VN_PIPE:
		return pipe_read_wait(f, buf, len);
#ifndef VFS_HOST
	case VN_PERF:
		return perf_event_read(f->ino->perf, buf, len);
#endif
	default:
		r = vfs_read(f, (void *)buf, len, f->pos);
		if (r > 0)
			f->pos += r;
		return r;
	}
}

static s64 file_write(struct file *f, u64 buf, u64 len)
{
	struct inode *n = f->ino;
	u64 pos;
	s64 r;

	switch (n->kind) {
	case VN_CONSOLE:
		/* The VMM takes fd 1 or 2: a write to stdin's tty goes out. */
		return hcall(PV_HC_WRITE, n->hfd == 2 ? 2 : 1, buf, len);
	case VN_PIPE:
		r = pipe_write_wait(f, buf, len);
		/* Writing to a pipe nobody reads: SIGPIPE, as Linux's
		 * pipe_write() sends it. */
		if (r == -EPIPE)
			signal_send(current_task(), SIGPIPE, true);
		return r;
	default:
		pos = (f->flags & VO_APPEND) && n->kind == VN_REG ? n->size
								  : f->pos;
		r = vfs_write(f, (const void *)buf, len, pos);
		if (r > 0)
			f->pos = pos + r;
		return r;
	}
}

static struct file *fget_rw(u64 fd, bool wr)
{
	struct file *f = fget(fd);

	if (!f || (f->flags & VO_ACCMODE) == (wr ? VO_RDONLY : VO_WRONLY))
		return NULL;
	return f;
}

/* read(2)/write(2): the whole buffer checked before clamping, as Linux's
 * access_ok(). */
static s64 sys_rw(u64 fd, u64 buf, u64 count, bool wr)
{
	struct file *f = fget_rw(fd, wr);
	u64 len = count < MAX_RW ? count : MAX_RW;

	if (!f)
		return -EBADF;
	if (!user_range_ok(buf, count))
		return -EFAULT;
	return wr ? file_write(f, buf, len) : file_read(f, buf, len);
}

SYSCALL(read)
{
	UNUSED3;
	return sys_rw(a0, a1, a2, false);
}

SYSCALL(write)
{
	UNUSED3;
	return sys_rw(a0, a1, a2, true);
}

struct iovec {
	u64 base, len;
};

static s64 rwv(u64 fd, u64 uiov, u64 cnt, bool wr)
{
	struct file *f = fget_rw(fd, wr);
	struct iovec iov[16];
	s64 total = 0;

	if (!f)
		return -EBADF;
	if (cnt > 1024)
		return -EINVAL;
	while (cnt) {
		u64 n = cnt < 16 ? cnt : 16;

		if (!user_range_ok(uiov, n * sizeof(iov[0])) ||
		    copy_from_user(iov, (void *)uiov, n * sizeof(iov[0])))
			return -EFAULT;
		for (u64 i = 0; i < n; i++) {
			s64 r;

			if (!iov[i].len)
				continue;
			if (!user_range_ok(iov[i].base, iov[i].len))
				return total ? total : -EFAULT;
			r = wr ? file_write(f, iov[i].base, iov[i].len)
			       : file_read(f, iov[i].base, iov[i].len);
			if (r < 0)
				return total ? total : r;
			total += r;
			if ((u64)r < iov[i].len)
				return total;
		}
		uiov += n * sizeof(iov[0]);
		cnt -= n;
	}
	return total;
}

SYSCALL(readv)
{
	UNUSED3;
	return rwv(a0, a1, a2, false);
}

SYSCALL(writev)
{
	UNUSED3;
	return rwv(a0, a1, a2, true);
}

/* In Linux's order (ksys_pread64(), vfs_read()): the offset, the
 * descriptor, seekability, the access mode, then the whole buffer, before
 * the count is clamped.  The plain cases take entry.S's leaf paths
 * (file_leaf.S), which must answer as this does. */
static s64 prw(u64 fd, u64 buf, u64 len, u64 off, bool wr)
{
	struct file *f;
	u8 kind;

	if ((s64)off < 0)
		return -EINVAL;
	f = fget(fd);
	if (!f)
		return -EBADF;
	kind = f->ino->kind;
	if (kind == VN_PIPE || kind == VN_CONSOLE)
		return -ESPIPE;
	if (!fget_rw(fd, wr))
		return -EBADF;
	if (!user_range_ok(buf, len))
		return -EFAULT;
	if (len > MAX_RW)
		len = MAX_RW;
	return wr ? vfs_write(f, (const void *)buf, len, off)
		  : vfs_read(f, (void *)buf, len, off);
}

SYSCALL(pread64)
{
	(void)a4, (void)a5;
	return prw(a0, a1, a2, a3, false);
}

SYSCALL(pwrite64)
{
	(void)a4, (void)a5;
	return prw(a0, a1, a2, a3, true);
}

SYSCALL(lseek)
{
	struct file *f = fget(a0);

	UNUSED3;
	return f ? vfs_lseek(f, (s64)a1, (int)a2) : -EBADF;
}

/* ---- descriptors ---- */

SYSCALL(close)
{
	(void)a1, (void)a2, UNUSED3;
	return fd_close(cur_fdt(), a0 < VFS_NFD ? a0 : VFS_NFD);
}

static s64 dupfd(struct fdtable *t, struct file *f, u64 min, bool cloexec)
{
	int fd;

	f->refs++;
	fd = fd_install(t, f, min < VFS_NFD ? min : VFS_NFD, cloexec);
	if (fd < 0)
		f->refs--;
	return fd;
}

SYSCALL(dup)
{
	struct file *f = fget(a0);

	(void)a1, (void)a2, UNUSED3;
	return f ? dupfd(cur_fdt(), f, 0, false) : -EBADF;
}

SYSCALL(dup2)
{
	(void)a2, UNUSED3;
	if (a0 == a1)
		return fget(a0) ? (s64)a1 : -EBADF;
	return fd_dup2(cur_fdt(), a0 < VFS_NFD ? a0 : VFS_NFD,
		       a1 < VFS_NFD ? a1 : VFS_NFD, false);
}

SYSCALL(dup3)
{
	UNUSED3;
	if (a0 == a1 || (a2 & ~(u64)VO_CLOEXEC))
		return -EINVAL;
	return fd_dup2(cur_fdt(), a0 < VFS_NFD ? a0 : VFS_NFD,
		       a1 < VFS_NFD ? a1 : VFS_NFD, a2 & VO_CLOEXEC);
}

#define F_DUPFD		0
#define F_GETFD		1
#define F_SETFD		2
#define F_GETFL		3
#define F_SETFL		4
#define F_GETLK		5
#define F_SETLK		6
#define F_SETLKW	7
#define F_OFD_GETLK	36
#define F_OFD_SETLK	37
#define F_OFD_SETLKW	38
#define F_DUPFD_CLOEXEC	1030
#define F_GETPIPE_SZ	1032
#define F_UNLCK		2

SYSCALL(fcntl)
{
	struct fdtable *t = cur_fdt();
	struct file *f = fd_file(t, a0);
	u16 unlck = F_UNLCK;

	UNUSED3;
	if (!f)
		return -EBADF;
#ifndef VFS_HOST
	/* Overflow signals: F_SETOWN(_EX), F_SETSIG, O_ASYNC on a perf fd. */
	if (f->ino->kind == VN_PERF) {
		s64 r = perf_event_fcntl(f->ino->perf, a0, a1, a2);

		if (r != -ENOSYS)
			return r;
	}
#endif
	switch (a1) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return dupfd(t, f, a2, a1 == F_DUPFD_CLOEXEC);
	case F_GETFD:
		return fd_cloexec(t, (u32)a0);
	case F_SETFD:
		fd_cloexec_set(t, (u32)a0, a2 & 1);
		return 0;
	case F_GETFL:
		return f->flags;
	case F_SETFL:
		f->flags = (f->flags & ~(VO_APPEND | VO_NONBLOCK)) |
			   (a2 & (VO_APPEND | VO_NONBLOCK));
		return 0;
	case F_GETLK:
	case F_OFD_GETLK:
		/* One process owns every lock it asks for: report none. */
		if (!user_range_ok(a2, 2) || copy_to_user((void *)a2, &unlck, 2))
			return -EFAULT;
		return 0;
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return 0;
	case F_GETPIPE_SZ:
		return f->ino->kind == VN_PIPE ? (s64)VFS_PIPE_SIZE : -EBADF;
	case 8:		/* F_SETOWN: signals go to that thread/process */
	case 9:		/* F_GETOWN */
	case 10:	/* F_SETSIG */
	case 11:	/* F_GETSIG */
		return 0;
	default:
		return -EINVAL;
	}
}

#define TCGETS		0x5401
#define TCSETS		0x5402
#define TCSETSW		0x5403
#define TCSETSF		0x5404
#define TIOCGPGRP	0x540f
#define TIOCSPGRP	0x5410
#define TIOCGWINSZ	0x5413
#define FIONREAD	0x541b
#define FIONBIO		0x5421
#define FIONCLEX	0x5450
#define FIOCLEX		0x5451

static s64 put_user(u64 uva, const void *v, u64 n)
{
	if (!user_range_ok(uva, n) || copy_to_user((void *)uva, v, n))
		return -EFAULT;
	return 0;
}

SYSCALL(ioctl)
{
	/* struct termios as the kernel has it (36 bytes): a cooked tty. */
	static const u32 termios[9] = {
		0x500, 0x5, 0xbf, 0x8a3b,		/* ICRNL|IXON, ... */
		0x1c7f0300, 0x00011504, 0x131a0000, 0x0f170012, 0x00000000,
	};
	struct fdtable *t = cur_fdt();
	struct file *f = fd_file(t, a0);
	u16 ws[4] = { 24, 80, 0, 0 };
	int v;

	UNUSED3;
	if (!f)
		return -EBADF;
	if (f->ino->kind == VN_PERF)
		return perf_event_ioctl(f->ino->perf, a1, a2);
	switch (a1) {
	case FIONBIO:
		if (!user_range_ok(a2, 4) || copy_from_user(&v, (void *)a2, 4))
			return -EFAULT;
		f->flags = v ? f->flags | VO_NONBLOCK : f->flags & ~VO_NONBLOCK;
		return 0;
	case FIOCLEX:
	case FIONCLEX:
		fd_cloexec_set(t, (u32)a0, a1 == FIOCLEX);
		return 0;
	case FIONREAD:
		if (f->ino->kind == VN_PIPE)
			v = f->ino->pipe->count;
		else if (f->ino->kind == VN_REG)
			v = f->pos < f->ino->size ? f->ino->size - f->pos : 0;
		else
			break;
		return put_user(a2, &v, 4);
	}
	/* A terminal only when the VMM's own descriptor is one. */
	if (!is_tty(f->ino))
		return -ENOTTY;
	switch (a1) {
	case TIOCGWINSZ:
		return put_user(a2, ws, sizeof(ws));
	case TCGETS:
		return put_user(a2, termios, 36);
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
		return 0;	/* the host terminal keeps its own mode */
	case TIOCGPGRP:
		v = current_task()->proc->pid;
		return put_user(a2, &v, 4);
	case TIOCSPGRP:
		return 0;
	default:
		return -ENOTTY;
	}
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
		err = resolve_at(a0, buf, &nr);
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
	err = lookup_buf(a0, buf, &nr);
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
	err = lookup_buf(a0, buf, &nr);
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
	err = lookup_at(AT_FDCWD, a0, buf, &nr);
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
		err = resolve_at(a0, buf, &nr);
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
		err = resolve_at(a0, buf, &nr);
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
		err = resolve_at(a0, from_buf, &from);
	if (!err)
		err = resolve_at(a2, to_buf, &to);
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

/* No symbolic links, except /proc/PID/exe (procfs_glue.c). */
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
	err = resolve_at(a0, buf, &nr);
	if (!err && nr.dir->hh && nr.ino != nr.dir && !nr.slash) {
		if (!user_range_ok(a2, (u32)a3))
			return -EFAULT;
		return hostfs_readlink(nr.dir->hh, nr.name, nr.len, a2,
				       (u32)a3);
	}
	err = lookup_buf(a0, buf, &nr);
	return err ? err : -EINVAL;
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
	err = lookup_at(AT_FDCWD, a0, buf, &nr);
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

/*
 * Attributes the tree keeps in part.  Every process is root and inodes
 * have no owner, so chown succeeds on a file that exists (what tar, cpio
 * and SQLite's journal check need) and changes nothing; chmod keeps the
 * permission bits; the utime calls set the one time an inode keeps, its
 * modification time (on a --dir file only the guest's view of it).
 */
static int attr_target(u64 dirfd, u64 upath, bool empty_ok, struct inode **n)
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
	err = lookup_at(dirfd, upath, buf, &nr);
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
	err = attr_target(a0, a1, false, &n);
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

	(void)a2, (void)a3, (void)a4, (void)a5;
	return attr_target(a0, a1, false, &n);
}

SYSCALL(chown)
{
	(void)a1, (void)a2, UNUSED3;
	return sys_fchownat(AT_FDCWD, a0, 0, 0, 0, 0);
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
	err = attr_target(a0, a1, true, &n);
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
	err = attr_target(AT_FDCWD, a0, false, &n);
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
	err = attr_target(AT_FDCWD, a0, false, &n);
	return err ? err : mtime_set(n, ts);
}

/*
 * No symbolic or hard links in the tree (an inode is its one directory
 * entry): EPERM, what Linux answers on a filesystem without them (vfat),
 * after the checks that come first there.
 */
SYSCALL(symlinkat)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	(void)a3, (void)a4, (void)a5;
	err = get_path(a0, buf);
	if (!err)
		err = get_path(a2, buf);
	if (!err)
		err = resolve_at(a1, buf, &nr);
	if (!err && nr.ino)
		err = -EEXIST;
	return err ? err : -EPERM;
}

SYSCALL(symlink)
{
	(void)a2, UNUSED3;
	return sys_symlinkat(a0, AT_FDCWD, a1, 0, 0, 0);
}

SYSCALL(linkat)
{
	char buf[VFS_PATH_MAX];
	struct nameres nr;
	int err;

	(void)a4, (void)a5;
	err = lookup_at(a0, a1, buf, &nr);
	if (!err)
		err = get_path(a3, buf);
	if (!err)
		err = resolve_at(a2, buf, &nr);
	if (!err && nr.ino)
		err = -EEXIST;
	return err ? err : -EPERM;
}

SYSCALL(link)
{
	(void)a2, UNUSED3;
	return sys_linkat(AT_FDCWD, a0, AT_FDCWD, a1, 0, 0);
}

/*
 * sendfile: from a regular file (Linux wants an mmap-able in_fd) to
 * anything writable, through a page-sized bounce buffer: the source's
 * bytes may move while a pipe writer sleeps.  busybox cat/tar/cp use it.
 */
SYSCALL(sendfile)
{
	struct file *out = fget_rw(a0, true), *in = fget_rw(a1, false);
	u64 len = a3 < MAX_RW ? a3 : MAX_RW, pos, done = 0, chunk = PAGE_SIZE;
	s64 off;
	u8 *buf;

	(void)a4, (void)a5;
	if (!out || !in)
		return -EBADF;
	if (in->ino->kind != VN_REG || (out->flags & VO_APPEND))
		return -EINVAL;
	if (a2) {
		if (!user_range_ok(a2, 8) || copy_from_user(&off, (void *)a2, 8))
			return -EFAULT;
		if (off < 0)
			return -EINVAL;
		pos = off;
	} else {
		pos = in->pos;
	}
	/* A host file's read is one exit whatever its size: a 2 MiB bounce
	 * buffer makes `cat` of a big file 512 times fewer of them. */
	buf = NULL;
	if (in->ino->hh && len > PAGE_SIZE)
		buf = vfs_data_alloc(PV_HUGE_SIZE, &chunk);
	if (!buf) {
		chunk = PAGE_SIZE;
		buf = vfs_page_alloc();
	}
	if (!buf)
		return -ENOMEM;
	while (done < len) {
		u64 want = len - done < chunk ? len - done : chunk;
		s64 r = vfs_read(in, buf, want, pos), w;

		if (r <= 0) {
			if (r < 0 && !done)
				done = r;
			break;
		}
		w = file_write(out, (u64)buf, r);
		if (w <= 0) {
			if (!done)
				done = w;
			break;
		}
		done += w;
		pos += w;
		if (w < r)
			break;
	}
	if (chunk > PAGE_SIZE)
		vfs_data_free(buf, chunk);
	else
		vfs_page_free(buf);
	if ((s64)done >= 0) {
		if (a2) {
			off = pos;
			if (copy_to_user((void *)a2, &off, 8))
				return -EFAULT;
		} else {
			in->pos = pos;
		}
	}
	return done;
}

/* ---- pipes ---- */

SYSCALL(pipe2)
{
	struct fdtable *t = cur_fdt();
	struct file *rd, *wr;
	int fds[2], err;

	(void)a2, UNUSED3;
	if (a1 & ~(u64)(VO_CLOEXEC | VO_NONBLOCK))
		return -EINVAL;
	if (!user_range_ok(a0, sizeof(fds)))
		return -EFAULT;
	if (!fdt_has_free(t, 2))
		return -EMFILE;
	err = pipe_create(&rd, &wr, a1);
	if (err)
		return err;
	fds[0] = fd_install(t, rd, 0, a1 & VO_CLOEXEC);
	fds[1] = fd_install(t, wr, 0, a1 & VO_CLOEXEC);
	if (copy_to_user((void *)a0, fds, sizeof(fds))) {
		fd_close(t, fds[0]);
		fd_close(t, fds[1]);
		return -EFAULT;
	}
	return 0;
}

SYSCALL(pipe)
{
	(void)a1, (void)a2, UNUSED3;
	return sys_pipe2(a0, 0, 0, 0, 0, 0);
}

/* ---- poll ---- */

struct pollfd {
	int fd;
	u16 events, revents;
};

#define POLL_MAX	128		/* 1 KiB of pollfds on the stack */

/*
 * Only pipes are ever not ready.  With nothing ready, an infinite timeout
 * sleeps until some pipe changes; a finite one returns 0 at once (no
 * kernel timers yet: callers see an early timeout, never a hang).
 */
static s64 do_poll(u64 ufds, u64 nfds, bool forever)
{
	struct pollfd pfd[POLL_MAX];
	struct fdtable *t = cur_fdt();
	u64 size = nfds * sizeof(pfd[0]);
	int ready;

	if (nfds > POLL_MAX)
		return -EINVAL;
	if (!user_range_ok(ufds, size) || copy_from_user(pfd, (void *)ufds, size))
		return -EFAULT;
	for (;;) {
		ready = 0;
		for (u64 i = 0; i < nfds; i++) {
			struct file *f;
			u32 m;

			if (pfd[i].fd < 0) {
				pfd[i].revents = 0;
				continue;
			}
			f = fd_file(t, pfd[i].fd);
			m = f ? vfs_poll_mask(f) &
				(pfd[i].events | VPOLLERR | VPOLLHUP)
			      : VPOLLNVAL;
			pfd[i].revents = m;
			ready += m != 0;
		}
		if (ready || !forever)
			break;
		if (sleep_on(&vfs_poll_wq))
			return -EINTR;
	}
	return copy_to_user((void *)ufds, pfd, size) ? -EFAULT : ready;
}

SYSCALL(poll)
{
	UNUSED3;
	return do_poll(a0, a1, (int)a2 < 0);
}

SYSCALL(ppoll)
{
	u64 ts[2];

	(void)a3, (void)a4, (void)a5;
	if (a2 && (!user_range_ok(a2, sizeof(ts)) ||
		   copy_from_user(ts, (void *)a2, sizeof(ts))))
		return -EFAULT;
	/* The signal mask (a3) is the signal code's to apply. */
	return do_poll(a0, a1, !a2);
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
