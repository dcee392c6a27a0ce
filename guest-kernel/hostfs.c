// SPDX-License-Identifier: MIT
/*
 * Host directories (--dir): the guest kernel's half of uapi/hostfs.h.
 * Each function fills the fields its request uses in one static request
 * (every caller holds the big kernel lock) and makes one PV_HC_FS
 * hypercall; the VMM checks everything again.  Data and directory records
 * go straight between the host and the caller's buffer (user or kernel):
 * the kernel copies nothing, a read of any size costs one exit.
 */
#include "hostfs.h"
#include "task.h"
#include "vfs.h"

/* Assigned field by field: an initialiser would be a memset hypercall. */
static struct pv_fs_req req;

static s64 fs_call(u32 op, u32 h)
{
	req.op = op;
	req.handle = h;
	return hcall(PV_HC_FS, V2P(&req), 0, 0);
}

static void attr_out(struct hostfs_attr *a)
{
	a->hh = req.out_handle;
	a->mode = req.mode;
	a->size = req.size;
	a->ino = req.ino;
	a->mtime_ns = req.mtime_ns;
}

static void name_in(const char *name, u32 len)
{
	req.name = (u64)name;
	req.name_len = len;
}

int hostfs_lookup(u32 dirh, const char *name, u32 len, struct hostfs_attr *a)
{
	s64 r;

	name_in(name, len);
	r = fs_call(PV_FS_LOOKUP, dirh);
	if (!r)
		attr_out(a);
	return r;
}

int hostfs_create(u32 dirh, const char *name, u32 len, u32 mode,
		  struct hostfs_attr *a)
{
	s64 r;

	name_in(name, len);
	req.flags = mode;
	r = fs_call(PV_FS_CREATE, dirh);
	if (!r)
		attr_out(a);
	return r;
}

int hostfs_unlink(u32 dirh, const char *name, u32 len, bool dir)
{
	name_in(name, len);
	req.flags = dir ? PV_FS_RMDIR : 0;
	return fs_call(PV_FS_UNLINK, dirh);
}

int hostfs_rename(u32 dirh, const char *name, u32 len, u32 dirh2,
		  const char *name2, u32 len2)
{
	name_in(name, len);
	req.handle2 = dirh2;
	req.name2 = (u64)name2;
	req.name2_len = len2;
	req.flags = 0;
	return fs_call(PV_FS_RENAME, dirh);
}

s64 hostfs_rw(u32 h, u64 va, u64 len, u64 off, bool wr)
{
	req.buf = va;
	req.len = len;
	req.off = off;
	return fs_call(wr ? PV_FS_WRITE : PV_FS_READ, h);
}

s64 hostfs_readdir(u32 h, u64 *cookie, void *ubuf, u64 len)
{
	s64 r;

	req.buf = (u64)ubuf;
	req.len = len;
	req.off = *cookie;
	r = fs_call(PV_FS_READDIR, h);
	if (r > 0)
		*cookie = req.off;
	return r;
}

int hostfs_truncate(u32 h, u64 size)
{
	req.off = size;
	return fs_call(PV_FS_TRUNCATE, h);
}

int hostfs_open(u32 h, bool wr)
{
	req.flags = wr ? PV_FS_FOR_WRITE : 0;
	return fs_call(PV_FS_OPEN, h);
}

void hostfs_close(u32 h)
{
	fs_call(PV_FS_CLOSE, h);
}

int hostfs_fsync(u32 h)
{
	return fs_call(PV_FS_FSYNC, h);
}

s64 hostfs_readlink(u32 dirh, const char *name, u32 len, u64 ubuf, u64 size)
{
	name_in(name, len);
	req.buf = ubuf;
	req.len = size;
	return fs_call(PV_FS_READLINK, dirh);
}

/*
 * exec and mmap need the bytes contiguous in guest memory: a host file is
 * read whole, in one hypercall, into memory kept for as long as a mapping
 * may use it (pinned, as vfs_pin; a write later makes a new copy).
 */
int vfs_host_load(struct inode *n)
{
	u64 cap;
	s64 r;
	u8 *p;

	if (!n->hh || n->data || !n->size)
		return 0;
	p = vfs_data_alloc(n->size, &cap);
	if (!p)
		return -ENOMEM;
	r = hostfs_rw(n->hh, (u64)p, n->size, 0, false);
	if (r < 0) {
		vfs_data_free(p, cap);
		return r;
	}
	n->size = r;		/* the host file may have shrunk */
	n->data = p;
	n->cap = cap;
	n->data_owned = 0;
	return 0;
}

/*
 * At boot: each share's GUEST made in the tree and given its root handle.
 * Paths are kept (the tree points at its names); shares are few.
 */
int hostfs_mount_all(void)
{
	for (u32 i = 0; i < PV_FS_MAX_SHARES; i++) {
		struct hostfs_attr a;
		char *path = kmalloc(256);
		s64 r;
		int err;

		if (!path)
			return -ENOMEM;
		req.buf = (u64)path;
		req.len = 256;
		r = fs_call(PV_FS_MOUNT, i);
		if (r < 0) {
			kfree(path);
			/* -ENOSYS: no --dir or --cwd; -ENOENT: no more */
			return r == -ENOSYS || r == -ENOENT ? 0 : (int)r;
		}
		attr_out(&a);
		err = vfs_mount_host(path, &a);
		if (err) {
			kprintf("--dir %s: error %d in the guest", path, -err);
			return err;
		}
	}
	return 0;
}

/* --cwd: the first program's working directory, if it is one. */
void hostfs_initial_cwd(char *cwd, u64 size)
{
	char buf[256];
	struct nameres nr;
	s64 r;
	int err;

	req.buf = (u64)buf;
	req.len = sizeof(buf);
	r = fs_call(PV_FS_CWD, 0);
	if (r <= 0 || (u64)r >= size)
		return;
	err = vfs_resolve(vfs_root(), buf, &nr);
	if (!err && !nr.ino)
		err = -ENOENT;
	if (!err && nr.ino->kind != VN_DIR)
		err = -ENOTDIR;
	if (!err)
		err = vfs_path(nr.ino, cwd, size) < 0 ? -ENAMETOOLONG : 0;
	if (err) {
		kprintf("--cwd %s: error %d in the guest", buf, -err);
		for (;;)
			hcall(PV_HC_EXIT, 125, 0, 0);
	}
}
