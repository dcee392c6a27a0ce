// SPDX-License-Identifier: MIT
/*
 * Host directories in the guest: the requests that move bytes.  File data
 * goes between the host file and guest memory by preadv/pwritev over the
 * guest's pages, without a bounce buffer: one hypercall and usually one
 * system call per guest read or write, whatever its size.  Writes go
 * straight to the host file (write-through), so what the guest wrote is
 * in the host's page cache when the hypercall returns, whatever happens
 * to the guest or the VMM afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "share.h"

#define SHARE_IOV	256		/* pieces per preadv/pwritev */
#define SHARE_DIRBUF	32768		/* host getdents64 buffer */

int share_mem_copy(const struct share_mem *mem, uint64_t va, void *host,
		   uint64_t len, bool to_guest)
{
	uint8_t *h = host;

	if (va + len < va)
		return -EFAULT;
	while (len) {
		uint64_t n = len;
		uint8_t *p = mem->map(mem->ctx, va, &n, to_guest);

		if (!p || !n || n > len)
			return -EFAULT;
		if (to_guest)
			memcpy(p, h, n);
		else
			memcpy(h, p, n);
		h += n;
		va += n;
		len -= n;
	}
	return 0;
}

/*
 * A readable or writable descriptor for n's O_PATH one, through
 * /proc/self/fd: the very file the lookup found, with the access checks
 * of open(2), and never anything a name could have been swapped to.  The
 * readable one replaces the O_PATH descriptor (it serves for lookups,
 * fstat and later reopens as well): a handle holds one descriptor, or
 * two once written, so a big tree fits the descriptor limit.
 */
int share_reopen(struct share_node *n, int flags)
{
	int *slot = flags == O_WRONLY ? &n->wfd : &n->rfd;
	char proc[64];

	if (*slot >= 0)
		return 0;
	if (n->dir && flags == O_RDONLY)
		flags |= O_DIRECTORY;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", n->fd);
	*slot = open(proc, flags | O_CLOEXEC | O_NOCTTY);
	if (*slot < 0)
		return -errno;
	if (slot == &n->rfd && !n->root) {
		close(n->fd);
		n->fd = n->rfd;
	}
	return 0;
}

/* Check a read or write's offset and length; the length, clamped. */
static int64_t io_check(struct share_node *n, const struct pv_fs_req *req)
{
	uint64_t len = req->len < PV_FS_IO_MAX ? req->len : PV_FS_IO_MAX;

	if (n->dir)
		return -EISDIR;
	if (req->off > INT64_MAX || req->off + len > INT64_MAX)
		return -EINVAL;
	if (req->buf + len < req->buf)
		return -EFAULT;
	return (int64_t)len;
}

/* preadv (to_guest) or pwritev of len bytes at the guest's buf. */
static int64_t io_vec(int fd, const struct pv_fs_req *req, uint64_t len,
		      const struct share_mem *mem, bool to_guest)
{
	uint64_t done = 0;

	while (done < len) {
		struct iovec iov[SHARE_IOV];
		uint64_t want = 0;
		bool fault = false;
		ssize_t r;
		int cnt = 0;

		while (cnt < SHARE_IOV && done + want < len) {
			uint64_t n = len - done - want;
			uint8_t *p = mem->map(mem->ctx, req->buf + done + want,
					      &n, to_guest);

			if (!p || !n) {
				fault = true;
				break;
			}
			/* Guest-physically adjacent pages: one piece. */
			if (cnt && (uint8_t *)iov[cnt - 1].iov_base +
				   iov[cnt - 1].iov_len == p)
				iov[cnt - 1].iov_len += n;
			else
				iov[cnt++] = (struct iovec){ p, n };
			want += n;
		}
		if (!want)
			return done ? (int64_t)done : -EFAULT;
		r = to_guest ? preadv(fd, iov, cnt, (off_t)(req->off + done))
			     : pwritev(fd, iov, cnt, (off_t)(req->off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return done ? (int64_t)done : -errno;
		done += (uint64_t)r;
		if ((uint64_t)r < want || fault)
			break;
	}
	return (int64_t)done;
}

int64_t share_read(struct share_node *n, struct pv_fs_req *req,
		   const struct share_mem *mem)
{
	int64_t len = io_check(n, req);
	int err;

	if (len <= 0)
		return len;
	err = share_reopen(n, O_RDONLY);
	if (err)
		return err;
	return io_vec(n->rfd, req, (uint64_t)len, mem, true);
}

int64_t share_write(struct share_node *n, struct pv_fs_req *req,
		    const struct share_mem *mem)
{
	int64_t len = io_check(n, req);
	int err;

	if (len <= 0)
		return len;
	if (req->off + (uint64_t)len > PV_FS_FILE_MAX)
		return -EFBIG;
	err = share_reopen(n, O_WRONLY);
	if (err)
		return err;
	return io_vec(n->wfd, req, (uint64_t)len, mem, false);
}

struct dirent64_hdr {
	uint64_t ino;
	int64_t off;
	uint16_t reclen;
	uint8_t type;
} __attribute__((packed));

/*
 * The host's own linux_dirent64 records, as many as fit the guest's
 * buffer, from cookie req->off; req->off becomes the last record's.
 */
int64_t share_readdir(struct share_node *n, struct pv_fs_req *req,
		      const struct share_mem *mem)
{
	uint8_t buf[SHARE_DIRBUF];
	uint64_t count = req->len < sizeof(buf) ? req->len : sizeof(buf);
	struct dirent64_hdr d;
	ssize_t got;
	int err;

	if (!n->dir)
		return -ENOTDIR;
	if (req->off > INT64_MAX)
		return -EINVAL;
	err = share_reopen(n, O_RDONLY);
	if (err)
		return err;
	if (lseek(n->rfd, (off_t)req->off, SEEK_SET) < 0)
		return -errno;
	got = syscall(SYS_getdents64, n->rfd, buf, count);
	if (got <= 0)
		return got < 0 ? -errno : 0;
	for (ssize_t pos = 0; pos + (ssize_t)sizeof(d) <= got;
	     pos += d.reclen) {
		memcpy(&d, buf + pos, sizeof(d));
		if (!d.reclen)
			return -EIO;
		req->off = (uint64_t)d.off;
	}
	if (share_mem_copy(mem, req->buf, buf, (uint64_t)got, true))
		return -EFAULT;
	return got;
}
