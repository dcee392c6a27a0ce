// SPDX-License-Identifier: MIT
/*
 * A file's data and open files (see vfs.h): read, write, truncate, lseek,
 * getdents of the tree's files, and the open file descriptions that
 * vfs_open() makes.  Pure logic: built into the kernel and into the host
 * unit test.
 */
#include "vfs.h"
#ifndef VFS_HOST
#include "vpmu.h"		/* PV_HC_STEP_CODE */
#endif

/*
 * Make n's data ours and at least end bytes big.  Borrowed data (the
 * initramfs, or a file pinned by exec/mmap) is copied first and never
 * written in place: a running program may have it mapped.
 */
static int reserve(struct inode *n, u64 end)
{
	u64 cap;
	u8 *p;

	if (n->data_owned && end <= n->cap)
		return 0;
	if (end > (1ull << 40))
		return -EFBIG;
	if (end < n->size)
		end = n->size;		/* a write inside borrowed data */
	if (n->data_owned && end < 2 * n->cap)
		end = 2 * n->cap;
	p = vfs_data_alloc(end, &cap);
	if (!p)
		return -ENOSPC;
	if (n->size)
		memcpy(p, n->data, n->size);
	/* A mapping in place keeps the old buffer (mm_shared.c). */
	if (n->data_owned && !n->data_shared)
		vfs_data_free(n->data, n->cap);
	n->data = p;
	n->cap = cap;
	n->data_owned = 1;
	return 0;
}

int vfs_truncate(struct inode *n, u64 size)
{
	int err;

	if (n->kind == VN_DIR)
		return -EISDIR;
	if (n->kind != VN_REG)
		return -EINVAL;
	if (n->hh) {
		err = hostfs_truncate(n->hh, size);
		if (err)
			return err;
		n->size = size;
		n->data = NULL;	/* a mapped copy stays as it was */
		n->mtime_tsc = vfs_clock();
		return 0;
	}
	if (size > n->size) {
		err = reserve(n, size);
		if (err)
			return err;
		memset(n->data + n->size, 0, size - n->size);
	}
	n->size = size;
	n->mtime_tsc = vfs_clock();
	return 0;
}

/*
 * A MAP_SHARED mapping maps n's data in place: made ours first (a copy of
 * borrowed bytes), at least a page, and from then on kept, never freed,
 * while n lives (a buffer a write outgrows stays with the mappings).
 */
int vfs_share_data(struct inode *n)
{
	int err = reserve(n, n->size ? n->size : 1);

	if (!err)
		n->data_shared = 1;
	return err;
}

/*
 * Someone maps n's data: from now on writes go to a fresh copy and the
 * old buffer is never freed (leaked: no mapping refcounts yet).  So it is
 * code that never changes, as the initramfs is, and the step source may
 * count it by blocks: the VMM is told once per buffer.
 */
void vfs_pin(struct inode *n)
{
	n->data_owned = 0;
#ifndef VFS_HOST
	if (n->data && n->size && n->data != n->code_told) {
		hcall(PV_HC_STEP_CODE, V2P(n->data), n->size, 0);
		n->code_told = n->data;
	}
#endif
}

static s64 zero_user(u8 *ubuf, u64 len)
{
	static const u8 zeros[4096];

	for (u64 done = 0; done < len;) {
		u64 c = len - done < sizeof(zeros) ? len - done : sizeof(zeros);

		if (copy_to_user(ubuf + done, zeros, c))
			return done ? (s64)done : -EFAULT;
		done += c;
	}
	return len;
}

s64 vfs_read(struct file *f, void *ubuf, u64 len, u64 pos)
{
	struct inode *n = f->ino;

	switch (n->kind) {
	case VN_REG:
		if (n->hh)
			return hostfs_rw(n->hh, (u64)ubuf, len, pos, false);
		if (pos >= n->size)
			return 0;
		if (len > n->size - pos)
			len = n->size - pos;
		if (copy_to_user(ubuf, n->data + pos, len))
			return -EFAULT;
		return len;
	case VN_DIR:
		return -EISDIR;
	case VN_ZERO:
		return zero_user(ubuf, len);
	case VN_RANDOM:
		return random_to_user(ubuf, len);
	case VN_NULL:
		return 0;
	default:
		return -EINVAL;
	}
}

s64 vfs_write(struct file *f, const void *ubuf, u64 len, u64 pos)
{
	struct inode *n = f->ino;
	int err;

	/* Writes to the random devices add no entropy: the key is the
	 * host's. */
	if (n->kind == VN_NULL || n->kind == VN_ZERO || n->kind == VN_RANDOM)
		return len;
	if (n->kind != VN_REG)
		return -EINVAL;
	if (!len)
		return 0;
	if (pos + len < pos)
		return -EFBIG;
	if (n->hh) {
		s64 r = hostfs_rw(n->hh, (u64)ubuf, len, pos, true);

		if (r > 0 && pos + r > n->size)
			n->size = pos + r;
		if (r > 0) {
			n->data = NULL;	/* a mapped copy stays as it was */
			n->mtime_tsc = vfs_clock();
		}
		return r;
	}
	err = reserve(n, pos + len);
	if (err)
		return err;
	if (pos > n->size)
		memset(n->data + n->size, 0, pos - n->size);
	if (copy_from_user(n->data + pos, ubuf, len)) {
		/* Bytes past the old end may be half-written: not visible,
		 * but the gap we zeroed is part of the file now. */
		if (pos > n->size)
			n->size = pos;
		return -EFAULT;
	}
	if (pos + len > n->size)
		n->size = pos + len;
	n->mtime_tsc = vfs_clock();
	return len;
}

s64 vfs_store_back(struct inode *n, const void *kbuf, u64 len, u64 pos)
{
	int err;

	if (n->kind != VN_REG || pos >= n->size)
		return 0;
	if (len > n->size - pos)
		len = n->size - pos;
	if (n->hh) {
		s64 r = hostfs_rw(n->hh, (u64)kbuf, len, pos, true);

		if (r > 0) {
			n->data = NULL;	/* as vfs_write() */
			n->mtime_tsc = vfs_clock();
		}
		return r;
	}
	err = reserve(n, n->size);	/* pinned bytes stay as they were */
	if (err)
		return err;
	memcpy(n->data + pos, kbuf, len);
	n->mtime_tsc = vfs_clock();
	return len;
}

s64 vfs_lseek(struct file *f, s64 off, int whence)
{
	struct inode *n = f->ino;
	s64 base;

	if (n->kind == VN_PIPE || n->kind == VN_CONSOLE)
		return -ESPIPE;
	switch (whence) {
	case 0: base = 0; break;
	case 1: base = f->pos; break;
	case 2: base = n->kind == VN_REG ? (s64)n->size : 0; break;
	default: return -EINVAL;
	}
	if ((off < 0 && base + off < 0) || (off > 0 && base + off < base))
		return -EINVAL;
	f->pos = base + off;
	return f->pos;
}

struct dirent_hdr {
	u64 ino, off;
	u16 reclen;
	u8 type;
	char name[];
} __attribute__((packed));

static u8 dtype(struct inode *n)
{
	switch (n->kind) {
	case VN_DIR: return 4;
	case VN_REG: return 8;
	case VN_PIPE: return 1;
	case VN_SYMLINK: return 10;
	default: return 2;
	}
}

/*
 * Records are built in a small kernel buffer and copied out one buffer at
 * a time (one hypercall each).  f->pos counts entries: 0 ".", 1 "..",
 * then the children in order.
 */
s64 vfs_getdents(struct file *f, void *ubuf, u64 count)
{
	struct inode *dir = f->ino, *c = dir->child;
	u8 kbuf[2048];
	u64 out = 0, k = 0, idx;

	if (dir->kind != VN_DIR)
		return -ENOTDIR;
	if (dir->hh)		/* f->pos: the host's cookie */
		return hostfs_readdir(dir->hh, &f->pos, ubuf, count);
	for (idx = 2; c && idx < f->pos; idx++)
		c = c->sib;
	for (;;) {
		struct inode *n = f->pos == 0 ? dir : f->pos == 1 ? dir->parent
				  : c;
		const char *name = f->pos == 0 ? "." : f->pos == 1 ? ".." : NULL;
		u32 nlen = name ? (u32)f->pos + 1 : 0;
		struct dirent_hdr *d;
		u64 rl;

		if (!n)
			break;
		if (!name) {
			name = n->name;
			nlen = n->nlen;
		}
		if (n->kind == VN_LINK)
			n = n->target;
		rl = (sizeof(*d) + nlen + 1 + 7) & ~7ull;
		if (out + k + rl > count) {
			if (out + k == 0)
				return -EINVAL;
			break;
		}
		if (k + rl > sizeof(kbuf)) {
			if (copy_to_user((u8 *)ubuf + out, kbuf, k))
				return -EFAULT;
			out += k;
			k = 0;
		}
		d = (struct dirent_hdr *)(kbuf + k);
		d->ino = n->ino;
		d->off = f->pos + 1;
		d->reclen = rl;
		d->type = dtype(n);
		memcpy(d->name, name, nlen);
		memset(d->name + nlen, 0, rl - sizeof(*d) - nlen);
		k += rl;
		if (f->pos++ >= 2)
			c = c->sib;
	}
	if (k && copy_to_user((u8 *)ubuf + out, kbuf, k))
		return -EFAULT;
	return out + k;
}

struct file *file_new(struct inode *n, u32 flags)
{
	struct file *f = kmalloc(sizeof(*f));

	if (f) {
		f->ino = n;
		f->refs = 1;
		f->flags = flags;
		n->refs++;
	}
	return f;
}

void file_put(struct file *f)
{
	if (--f->refs)
		return;
	if (f->ino->kind == VN_PIPE) {
		pipe_release(f->ino, f->flags);
	} else {
#ifndef VFS_HOST
		if (f->ino->kind == VN_PERF)
			perf_event_release(f->ino->perf);
#endif
		inode_put(f->ino);
	}
	kfree(f);
}

int vfs_open(struct nameres *nr, u32 flags, u32 mode, u32 umask,
	     struct file **out)
{
	u32 acc = flags & VO_ACCMODE;
	struct inode *n = nr->ino;
	struct file *f;
	int err;

	if (!n) {
		if (!(flags & VO_CREAT))
			return -ENOENT;
		if (flags & VO_DIRECTORY)
			return -EINVAL;
		err = vfs_create(nr, VS_IFREG | (mode & 07777), umask);
		if (err)
			return err;
		n = nr->ino;
	} else {
		if ((flags & (VO_CREAT | VO_EXCL)) == (VO_CREAT | VO_EXCL))
			return -EEXIST;
		/* Not followed (O_NOFOLLOW): only O_PATH opens the link. */
		if (n->kind == VN_SYMLINK && !(flags & VO_PATH))
			return -ELOOP;
		if (n->kind == VN_DIR) {
			if (acc != VO_RDONLY || (flags & VO_CREAT))
				return -EISDIR;
		} else if ((flags & VO_DIRECTORY) || nr->slash) {
			return -ENOTDIR;
		}
		/* -EROFS, -EACCES from the host before anything changes */
		if (n->hh && n->kind == VN_REG &&
		    (err = hostfs_open(n->hh, acc != VO_RDONLY)))
			return err;
		if ((flags & VO_TRUNC) && acc != VO_RDONLY &&
		    n->kind == VN_REG) {
			err = vfs_truncate(n, 0);
			if (err)
				return err;
		}
	}
	f = file_new(n, (flags & (VO_ACCMODE | VO_APPEND | VO_NONBLOCK)) |
		     VO_LARGEFILE);
	if (!f)
		return -ENOMEM;
	*out = f;
	return 0;
}
