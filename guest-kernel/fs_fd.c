// SPDX-License-Identifier: MIT
/*
 * The file system calls of descriptors (fs_syscalls.h): close, dup, dup2,
 * dup3, fcntl and ioctl, then pipe2 and pipe, then poll and ppoll.
 */
#include "fs_syscalls.h"

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

static bool is_tty(struct inode *n)
{
	return n->kind == VN_CONSOLE && (n->mode & VS_IFMT) == VS_IFCHR;
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
