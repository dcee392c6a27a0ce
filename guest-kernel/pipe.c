// SPDX-License-Identifier: MIT
/*
 * Pipe buffers: a 64 KiB ring in 4 KiB pages allocated on first use (most
 * pipes carry a few lines).  These functions never block: they return
 * -EAGAIN and fs_rw.c sleeps on the wait queues.  Data moves with
 * one copy_*_user per page piece, each a single hypercall from 64 bytes.
 */
#include "vfs.h"

/* Woken on every pipe state change: poll() sleeps here (one queue for all
 * pipes is plenty for shells and pipelines). */
struct waitq vfs_poll_wq;

int pipe_create(struct file **rd, struct file **wr, u32 flags)
{
	struct pipe *p = kmalloc(sizeof(*p));
	struct inode *n = inode_new(VS_IFIFO | 0600, VN_PIPE);

	flags &= VO_NONBLOCK;
	if (p && n) {
		n->pipe = p;
		*rd = file_new(n, VO_RDONLY | flags);
		*wr = file_new(n, VO_WRONLY | flags);
		if (*rd && *wr) {
			p->readers = p->writers = 1;
			return 0;
		}
		kfree(*rd);
		kfree(*wr);
	}
	kfree(p);
	kfree(n);
	return -ENOMEM;
}

s64 pipe_read(struct pipe *p, void *ubuf, u64 len)
{
	u64 done = 0;

	if (!len)
		return 0;
	if (!p->count)
		return p->writers ? -EAGAIN : 0;
	if (len > p->count)
		len = p->count;
	while (done < len) {
		u64 po = p->head % 4096, c = 4096 - po;

		if (c > len - done)
			c = len - done;
		if (copy_to_user((u8 *)ubuf + done, p->page[p->head / 4096] + po,
				 c))
			return done ? (s64)done : -EFAULT;
		done += c;
		p->head = (p->head + c) % VFS_PIPE_SIZE;
		p->count -= c;
	}
	if (!p->count)
		p->head = 0;		/* next data starts in the first page */
	return done;
}

/* Writes of up to VFS_PIPE_BUF bytes go in whole or not at all (POSIX). */
s64 pipe_write(struct pipe *p, const void *ubuf, u64 len)
{
	u64 room = VFS_PIPE_SIZE - p->count, done = 0;

	if (!p->readers)
		return -EPIPE;
	if (!len)
		return 0;
	if (!room || (len <= VFS_PIPE_BUF && room < len))
		return -EAGAIN;
	if (len > room)
		len = room;
	while (done < len) {
		u64 tail = (p->head + p->count) % VFS_PIPE_SIZE;
		u64 po = tail % 4096, c = 4096 - po;
		u8 **pg = &p->page[tail / 4096];

		if (c > len - done)
			c = len - done;
		if (!*pg && !(*pg = vfs_page_alloc()))
			return done ? (s64)done : -ENOMEM;
		if (copy_from_user(*pg + po, (const u8 *)ubuf + done, c))
			return done ? (s64)done : -EFAULT;
		done += c;
		p->count += c;
	}
	return done;
}

/* The last reference to one end went away. */
void pipe_release(struct inode *n, u32 flags)
{
	struct pipe *p = n->pipe;

	if ((flags & VO_ACCMODE) == VO_RDONLY) {
		p->readers--;
		wake_all(&p->wwait);	/* writers get EPIPE */
	} else {
		p->writers--;
		wake_all(&p->rwait);	/* readers get EOF */
	}
	wake_all(&vfs_poll_wq);
	n->refs--;
	if (p->readers || p->writers)
		return;
	for (u64 i = 0; i < VFS_PIPE_PAGES; i++)
		if (p->page[i])
			vfs_page_free(p->page[i]);
	kfree(p);
	kfree(n);
}

/* poll(2) readiness.  Everything but a pipe is always ready: files are in
 * memory, and the console's read blocks in the VMM. */
u32 vfs_poll_mask(struct file *f)
{
	u32 acc = f->flags & VO_ACCMODE, m = 0;
	struct pipe *p = f->ino->pipe;

	if (f->ino->kind != VN_PIPE)
		return VPOLLIN | VPOLLOUT | VPOLLRDNORM | VPOLLWRNORM;
	if (acc != VO_WRONLY) {
		if (p->count)
			m |= VPOLLIN | VPOLLRDNORM;
		if (!p->writers)
			m |= VPOLLHUP;
	}
	if (acc != VO_RDONLY) {
		if (VFS_PIPE_SIZE - p->count >= VFS_PIPE_BUF)
			m |= VPOLLOUT | VPOLLWRNORM;
		if (!p->readers)
			m |= VPOLLERR;
	}
	return m;
}
