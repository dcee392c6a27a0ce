// SPDX-License-Identifier: MIT
/*
 * The file system calls' data path: read, write, readv, writev, pread64,
 * pwrite64, lseek and sendfile (fs_syscalls.h).  Console I/O hands the
 * user buffer straight to the VMM (PV_HC_WRITE/READ walk the page
 * tables): no kernel copy.  A blocking pipe sleeps here.
 *
 * These are hot paths with an instruction budget (kbench: a pipe's write
 * and read, the full path of pread64 and pwrite64): their helpers
 * (file_read(), file_write(), fget_rw()) stay static, in one file with
 * every caller.  The plain pread64/pwrite64 cases take entry.S's leaf
 * paths (file_leaf.S), which must answer as prw() does.
 */
#include "fs_syscalls.h"

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

static inline struct file *fget_rw(u64 fd, bool wr)
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
