// SPDX-License-Identifier: MIT
/*
 * The file tree, open files and descriptor tables (see vfs.h).  Pure
 * logic: built into the kernel and into the host unit test.
 */
#include "vfs.h"

/*
 * One global name hash over (directory, name): a lookup is a hash of the
 * component plus one or two compares, whatever the directory's size (a
 * busybox /bin can hold hundreds of entries, and a linear scan costs
 * several emulated instructions per entry).
 */
#define NHASH		2048
#define FNV_INIT	2166136261u
#define FNV_MUL		16777619u

static struct inode *hash_tab[NHASH];
static struct inode *root;
static struct inode *consoles[3];
static struct inode *dev_null, *dev_zero, *dev_random, *dev_urandom;
static u64 next_ino = 1;

static inline u32 name_hash(const char *s, u32 len)
{
	u32 h = FNV_INIT;

	while (len--)
		h = (h ^ (u8)*s++) * FNV_MUL;
	return h;
}

static inline struct inode **bucket(struct inode *dir, u32 h)
{
	return &hash_tab[(h ^ (u32)((uintptr_t)dir >> 6)) & (NHASH - 1)];
}

static struct inode *dir_lookup(struct inode *dir, const char *s, u32 len,
				u32 h)
{
	struct inode *n;

	for (n = *bucket(dir, h); n; n = n->hnext)
		if (n->parent == dir && n->hash == h && n->nlen == len &&
		    !memcmp(n->name, s, len))
			return n;
	return NULL;
}

struct inode *inode_new(u32 mode, u8 kind)
{
	struct inode *n = kmalloc(sizeof(*n));

	if (!n)
		return NULL;
	n->mode = mode;
	n->kind = kind;
	n->ino = next_ino++;
	n->nlink = kind == VN_DIR ? 2 : 1;
	n->ctail = &n->child;
	n->parent = n;
	return n;
}

/* Link n into dir under name (kept by pointer: the caller owns it). */
static void dir_attach(struct inode *dir, struct inode *n, const char *name,
		       u32 len, u32 h)
{
	struct inode **b = bucket(dir, h);

	n->name = name;
	n->nlen = len;
	n->hash = h;
	n->parent = dir;
	n->hnext = *b;
	n->hprev = b;
	if (*b)
		(*b)->hprev = &n->hnext;
	*b = n;
	n->sib = NULL;
	n->sprev = dir->ctail;
	*dir->ctail = n;
	dir->ctail = &n->sib;
	if (n->kind == VN_DIR)
		dir->nlink++;
}

static void dir_detach(struct inode *n)
{
	struct inode *dir = n->parent;

	*n->hprev = n->hnext;
	if (n->hnext)
		n->hnext->hprev = n->hprev;
	*n->sprev = n->sib;
	if (n->sib)
		n->sib->sprev = n->sprev;
	else
		dir->ctail = n->sprev;
	if (n->kind == VN_DIR)
		dir->nlink--;
	/* A removed directory that is still open must not keep a pointer
	 * to a parent that may be freed: ".." becomes itself. */
	n->parent = n;
}

static void inode_free(struct inode *n)
{
	if (n->hh)
		hostfs_close(n->hh);
	if (n->data_owned)
		vfs_data_free(n->data, n->cap);
	if (n->name_owned)
		kfree((void *)n->name);
	kfree(n);
}

void inode_get(struct inode *n)
{
	n->refs++;
}

void inode_put(struct inode *n)
{
	if (--n->refs == 0 && n->nlink == 0)
		inode_free(n);
}

struct inode *vfs_root(void)
{
	return root;
}

struct inode *vfs_console(int hfd)
{
	return consoles[hfd];
}

static struct inode *dev_node(u32 mode, u8 kind, u64 rdev)
{
	struct inode *n = inode_new(mode, kind);

	if (n) {
		n->rdev = rdev;
		n->refs = 1;		/* permanent */
	}
	return n;
}

/* Find or make directory name (len bytes) in dir. */
static struct inode *mkdir_p(struct inode *dir, const char *name, u32 len,
			     u32 mode)
{
	u32 h = name_hash(name, len);
	struct inode *n = dir_lookup(dir, name, len, h);

	if (n)
		return n->kind == VN_DIR ? n : NULL;
	n = inode_new(VS_IFDIR | (mode & 07777), VN_DIR);
	if (n)
		dir_attach(dir, n, name, len, h);
	return n;
}

int vfs_core_init(u32 tty_mask)
{
	struct inode *dev;

	memset(hash_tab, 0, sizeof(hash_tab));
	next_ino = 1;
	root = inode_new(VS_IFDIR | 0755, VN_DIR);
	if (!root)
		return -ENOMEM;
	root->refs = 1;
	for (int i = 0; i < 3; i++) {
		/* A tty on the host is a character device here; anything
		 * else (file, pipe) looks like a pipe: not seekable. */
		bool tty = tty_mask & (1u << i);

		consoles[i] = dev_node(tty ? VS_IFCHR | 0620 : VS_IFIFO | 0600,
				       VN_CONSOLE, tty ? (136 << 8) : 0);
		if (!consoles[i])
			return -ENOMEM;
		consoles[i]->hfd = i;
	}
	dev_null = dev_node(VS_IFCHR | 0666, VN_NULL, 1 << 8 | 3);
	dev_zero = dev_node(VS_IFCHR | 0666, VN_ZERO, 1 << 8 | 5);
	dev_random = dev_node(VS_IFCHR | 0666, VN_RANDOM, 1 << 8 | 8);
	dev_urandom = dev_node(VS_IFCHR | 0666, VN_RANDOM, 1 << 8 | 9);
	dev = mkdir_p(root, "dev", 3, 0755);
	if (!dev_null || !dev_zero || !dev_random || !dev_urandom || !dev)
		return -ENOMEM;
	return 0;
}

/* /dev entries are looked up here, not linked into the tree, so that
 * unlink and rename never see them. */
struct inode *vfs_dev_lookup(const char *name)
{
	if (!strcmp(name, "null"))
		return dev_null;
	if (!strcmp(name, "zero"))
		return dev_zero;
	if (!strcmp(name, "random"))
		return dev_random;
	if (!strcmp(name, "urandom"))
		return dev_urandom;
	if (!strcmp(name, "tty") || !strcmp(name, "console"))
		return consoles[1];
	if (!strcmp(name, "stdin"))
		return consoles[0];
	if (!strcmp(name, "stdout"))
		return consoles[1];
	if (!strcmp(name, "stderr"))
		return consoles[2];
	return NULL;
}

/*
 * Seed from the cpio archive.  Names and contents stay in the archive
 * (no copies): a node's name points at its component of the archive's
 * path, and its data at the page-aligned file bytes.
 */
static bool seed_cb(const struct cpio_file *f, void *arg)
{
	const char *p = f->name;
	struct inode *dir = root, *n;
	u32 type = f->mode & VS_IFMT;
	int *err = arg;

	if (type != VS_IFREG && type != VS_IFDIR)
		return true;		/* the VMM writes no other types */
	for (;;) {
		const char *s;
		u32 len, h;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		len = p - s;
		if (!len || (len == 1 && s[0] == '.'))
			return true;	/* "." or an empty name */
		if (len > VFS_NAME_MAX || (len == 2 && s[0] == '.' &&
					   s[1] == '.'))
			goto bad;
		while (*p == '/')
			p++;
		if (*p || type == VS_IFDIR) {
			dir = mkdir_p(dir, s, len, *p ? 0755 : f->mode);
			if (!dir)
				goto bad;
			if (*p)
				continue;
			dir->mode = VS_IFDIR | (f->mode & 07777);
			return true;
		}
		h = name_hash(s, len);
		n = dir_lookup(dir, s, len, h);
		if (n && n->kind != VN_REG)
			goto bad;
		if (!n) {
			n = inode_new(f->mode, VN_REG);
			if (!n)
				goto bad;
			dir_attach(dir, n, s, len, h);
		}
		n->mode = f->mode;
		n->data = (u8 *)f->data;
		n->size = f->size;
		return true;
	}
bad:
	*err = -EINVAL;
	return false;
}

int vfs_seed(const u8 *cpio, u64 size)
{
	int err = 0;

	if (cpio_parse(cpio, size, seed_cb, &err))
		return -EINVAL;
	return err;
}

/*
 * A node for host file or directory a, named name in dir (h its hash):
 * kept in the tree, so the next walk through it costs no hypercall.
 */
struct inode *vfs_host_node(struct inode *dir, const char *name, u32 len,
			    u32 h, const struct hostfs_attr *a)
{
	bool isdir = (a->mode & VS_IFMT) == VS_IFDIR;
	struct inode *n = inode_new(a->mode & (VS_IFMT | 07777),
				    isdir ? VN_DIR : VN_REG);
	char *copy = kmalloc(len);

	if (!n || !copy) {
		kfree(n);
		kfree(copy);
		hostfs_close(a->hh);
		return NULL;
	}
	memcpy(copy, name, len);
	n->name_owned = 1;
	n->hh = a->hh;
	n->ino = a->ino;
	n->size = a->size;
	n->mtime_ns = a->mtime_ns;
	dir_attach(dir, n, copy, len, h);
	return n;
}

/* --dir's GUEST: the directories on the way made, the last one host's. */
int vfs_mount_host(const char *path, const struct hostfs_attr *a)
{
	struct inode *dir = root;
	const char *p = path;

	for (;;) {
		const char *s;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (s = p; *p && *p != '/'; p++)
			;
		if (p - s > VFS_NAME_MAX)
			return -ENAMETOOLONG;
		dir = mkdir_p(dir, s, p - s, 0755);
		if (!dir)
			return -ENOTDIR;
	}
	dir->hh = a->hh;
	dir->mnt = 1;
	dir->ino = a->ino;
	dir->mtime_ns = a->mtime_ns;
	dir->mode = VS_IFDIR | (a->mode & 07777);
	return 0;
}

int vfs_resolve(struct inode *base, const char *path, struct nameres *nr)
{
	const char *p = path;

	if (!*p)
		return -ENOENT;
	nr->ino = *p == '/' ? root : base;
	nr->dir = nr->ino->parent;
	nr->name = *p == '/' ? "/" : ".";	/* "/" is neither . nor .. */
	nr->len = 1;
	for (;;) {
		struct inode *cur = nr->ino;
		const char *s;
		u32 h = FNV_INIT;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!cur)
			return -ENOENT;
		if (cur->kind != VN_DIR)
			return -ENOTDIR;
		for (s = p; *p && *p != '/'; p++)
			h = (h ^ (u8)*p) * FNV_MUL;
		if (p - s > VFS_NAME_MAX)
			return -ENAMETOOLONG;
		nr->dir = cur;
		nr->name = s;
		nr->len = p - s;
		if (s[0] == '.' && nr->len == 1)
			continue;
		if (s[0] == '.' && s[1] == '.' && nr->len == 2)
			nr->ino = cur->parent;
		else
			nr->ino = dir_lookup(cur, s, nr->len, h);
		if (!nr->ino && cur->hh) {
			struct hostfs_attr a;
			int err = hostfs_lookup(cur->hh, s, nr->len, &a);

			if (err && err != -ENOENT)
				return err;
			if (!err && !(nr->ino = vfs_host_node(cur, s, nr->len,
							      h, &a)))
				return -ENOMEM;
		}
		if (!nr->ino && nr->dir->parent == root && nr->dir->nlen == 3 &&
		    !memcmp(nr->dir->name, "dev", 3)) {
			char nm[8];

			if (nr->len < sizeof(nm)) {
				memcpy(nm, s, nr->len);
				nm[nr->len] = 0;
				nr->ino = vfs_dev_lookup(nm);
			}
		}
	}
	nr->slash = p > path && p[-1] == '/';
	return 0;
}

int vfs_create(struct nameres *nr, u32 mode, u32 umask)
{
	bool dir = (mode & VS_IFMT) == VS_IFDIR;
	struct inode *n;
	char *name;

	if (nr->ino)
		return -EEXIST;
	if (nr->dir->nlink == 0)
		return -ENOENT;		/* the directory was removed */
	if (nr->slash && !dir)
		return -EISDIR;
	if (nr->dir->hh) {
		struct hostfs_attr a;
		int err = hostfs_create(nr->dir->hh, nr->name, nr->len,
					(dir ? VS_IFDIR : VS_IFREG) |
					(mode & 07777 & ~umask), &a);

		if (err)
			return err;
		n = vfs_host_node(nr->dir, nr->name, nr->len,
				  name_hash(nr->name, nr->len), &a);
		nr->ino = n;
		return n ? 0 : -ENOMEM;
	}
	name = kmalloc(nr->len);
	n = inode_new((dir ? VS_IFDIR : VS_IFREG) | (mode & 07777 & ~umask),
		      dir ? VN_DIR : VN_REG);
	if (!name || !n) {
		kfree(name);
		kfree(n);
		return -ENOMEM;
	}
	memcpy(name, nr->name, nr->len);
	n->name_owned = 1;
	n->mtime_tsc = vfs_clock();
	dir_attach(nr->dir, n, name, nr->len, name_hash(name, nr->len));
	nr->ino = n;
	return 0;
}

static bool is_dev(struct inode *n)
{
	return n->kind != VN_REG && n->kind != VN_DIR;
}

int vfs_unlink(struct nameres *nr, bool dir)
{
	struct inode *n = nr->ino;

	if (!n)
		return -ENOENT;
	if (dir) {
		if (n->kind != VN_DIR)
			return -ENOTDIR;
		/* Linux's order: "..", ".", then the root */
		if (nr->len == 2 && nr->name[0] == '.' && nr->name[1] == '.')
			return -ENOTEMPTY;
		if (nr->len == 1 && nr->name[0] == '.')
			return -EINVAL;
		if (n == root)
			return -EBUSY;
		if (n->child)
			return -ENOTEMPTY;
	} else {
		if (n->kind == VN_DIR)
			return -EISDIR;
		if (nr->slash)
			return -ENOTDIR;
		if (is_dev(n))
			return -EPERM;	/* our /dev is read-only */
	}
	if (n->mnt)
		return -EBUSY;		/* a --dir's own directory */
	if (n->hh) {
		int err = hostfs_unlink(nr->dir->hh, nr->name, nr->len, dir);

		if (err)
			return err;
	}
	dir_detach(n);
	n->nlink = 0;
	if (n->refs == 0)
		inode_free(n);
	return 0;
}

int vfs_rename(struct nameres *from, struct nameres *to)
{
	struct inode *n = from->ino, *old = to->ino, *d;
	char *name;

	if (!n)
		return -ENOENT;
	if (is_dev(n) || (old && is_dev(old)))
		return -EPERM;
	if (n == root || (from->len <= 2 && from->name[0] == '.' &&
			  (from->len == 1 || from->name[1] == '.')))
		return -EBUSY;
	if (n == old)
		return 0;
	if (n->kind != VN_DIR && (from->slash || to->slash))
		return -ENOTDIR;
	if (to->dir->nlink == 0)
		return -ENOENT;
	/* A directory cannot move below itself. */
	for (d = to->dir; d != root; d = d->parent)
		if (d == n)
			return -EINVAL;
	if (old) {
		if (old == root || old == to->dir)
			return -EBUSY;
		if (n->kind == VN_DIR && old->kind != VN_DIR)
			return -ENOTDIR;
		if (n->kind != VN_DIR && old->kind == VN_DIR)
			return -EISDIR;
		if (old->child)
			return -ENOTEMPTY;
	}
	if (n->mnt || (old && old->mnt))
		return -EBUSY;		/* a --dir's own directory */
	name = kmalloc(to->len);
	if (!name)
		return -ENOMEM;
	/* Host to host in one share only: a share is one host directory. */
	if (n->hh || from->dir->hh || to->dir->hh) {
		int err = -EXDEV;

		if (n->hh && from->dir->hh && to->dir->hh && (!old || old->hh))
			err = hostfs_rename(from->dir->hh, from->name,
					    from->len, to->dir->hh, to->name,
					    to->len);
		if (err) {
			kfree(name);
			return err;
		}
	}
	memcpy(name, to->name, to->len);
	if (old) {
		dir_detach(old);
		old->nlink = 0;
		if (old->refs == 0)
			inode_free(old);
	}
	dir_detach(n);
	if (n->name_owned)
		kfree((void *)n->name);
	n->name_owned = 1;
	dir_attach(to->dir, n, name, to->len, name_hash(name, to->len));
	return 0;
}

/* Absolute path of a node in the tree; length, or -ENAMETOOLONG. */
int vfs_path(struct inode *n, char *buf, u64 size)
{
	u64 len = 0, pos;
	struct inode *d;

	if (n->nlink == 0 || (n != root && n->parent == n))
		return -ENOENT;
	for (d = n; d != root; d = d->parent)
		len += d->nlen + 1;
	if (!len)
		len = 1;
	if (len + 1 > size)
		return -ENAMETOOLONG;
	buf[0] = '/';
	buf[len] = 0;
	pos = len;
	for (d = n; d != root; d = d->parent) {
		pos -= d->nlen;
		memcpy(buf + pos, d->name, d->nlen);
		buf[--pos] = '/';
	}
	return len;
}

void vfs_stat(struct inode *n, struct linux_stat *st)
{
	u64 mt;

	/* Every field is assigned: a struct initialiser would become a
	 * memset hypercall. */
	st->dev = 0x10;
	st->ino = n->ino;
	st->nlink = n->nlink;
	st->mode = n->mode;
	st->uid = 0;
	st->gid = 0;
	st->pad0 = 0;
	st->rdev = n->rdev;
	st->size = n->kind == VN_DIR ? 4096 : n->size;
	st->blksize = 4096;
	st->blocks = (st->size + 4095) / 4096 * 8;
	/* one time for all three: access and status changes are not kept */
	mt = n->mtime_tsc ? vfs_clock_ns(n->mtime_tsc) : n->mtime_ns;
	st->mtime = mt / 1000000000u;
	st->mtime_ns = mt % 1000000000u;
	st->atime = st->ctime = st->mtime;
	st->atime_ns = st->ctime_ns = st->mtime_ns;
	st->unused[0] = st->unused[1] = st->unused[2] = 0;
}

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
	if (n->data_owned)
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

/* Someone maps n's data: from now on writes go to a fresh copy and the
 * old buffer is never freed (leaked: no mapping refcounts yet). */
void vfs_pin(struct inode *n)
{
	n->data_owned = 0;
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

static bool fd_bit(const u64 *map, u32 fd)
{
	return map[fd / 64] >> (fd % 64) & 1;
}

static void fd_bit_put(u64 *map, u32 fd, bool on)
{
	if (on)
		map[fd / 64] |= 1ull << (fd % 64);
	else
		map[fd / 64] &= ~(1ull << (fd % 64));
}

bool fd_cloexec(const struct fdtable *t, u32 fd)
{
	return fd < VFS_NFD && fd_bit(t->cloexec, fd);
}

void fd_cloexec_set(struct fdtable *t, u32 fd, bool on)
{
	if (fd < VFS_NFD)
		fd_bit_put(t->cloexec, fd, on);
}

/* The slot of fd, its page allocated when first reached; NULL: no memory */
static struct file **fd_slot(struct fdtable *t, u32 fd)
{
	struct file ***chunk = &t->fd[fd / VFS_FD_CHUNK];

	if (!*chunk) {
		*chunk = kmalloc(VFS_FD_CHUNK * sizeof(struct file *));
		if (!*chunk)
			return NULL;
		memset(*chunk, 0, VFS_FD_CHUNK * sizeof(struct file *));
	}
	return &(*chunk)[fd % VFS_FD_CHUNK];
}

struct fdtable *fdt_new(void)
{
	struct fdtable *t = kmalloc(sizeof(*t));

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->refs = 1;
	t->umask = 022;
	if (!fd_slot(t, 0)) {
		kfree(t);
		return NULL;
	}
	return t;
}

/* Lowest free descriptor >= min, or -EMFILE. */
static int fd_lowest_free(const struct fdtable *t, u32 min)
{
	for (u32 w = min / 64; w < VFS_NFD / 64; w++) {
		u64 avail = ~t->used[w];

		if (w == min / 64)
			avail &= ~0ull << (min % 64);
		if (avail)
			return (int)(w * 64 + __builtin_ctzll(avail));
	}
	return -EMFILE;
}

/* At least n descriptors free (pipe() needs two before it makes any). */
bool fdt_has_free(const struct fdtable *t, int n)
{
	/* no libgcc here for __builtin_popcountll: clear bits one by one */
	for (u32 w = 0; w < VFS_NFD / 64 && n > 0; w++)
		for (u64 m = ~t->used[w]; m && n > 0; m &= m - 1)
			n--;
	return n <= 0;
}

/* Lowest free descriptor >= min, as Linux allocates them. */
int fd_install(struct fdtable *t, struct file *f, u32 min, bool cloexec)
{
	struct file **slot;
	int fd;

	if (min >= VFS_NFD)
		return -EINVAL;
	fd = fd_lowest_free(t, min);
	if (fd < 0)
		return fd;
	slot = fd_slot(t, (u32)fd);
	if (!slot)
		return -ENOMEM;
	*slot = f;
	fd_bit_put(t->used, (u32)fd, true);
	fd_bit_put(t->cloexec, (u32)fd, cloexec);
	return fd;
}

int fd_close(struct fdtable *t, u32 fd)
{
	struct file *f = fd_file(t, fd);

	if (!f)
		return -EBADF;
	*fd_slot(t, fd) = NULL;		/* its page exists: f was in it */
	fd_bit_put(t->used, fd, false);
	fd_bit_put(t->cloexec, fd, false);
	file_put(f);
	return 0;
}

int fd_dup2(struct fdtable *t, u32 oldfd, u32 newfd, bool cloexec)
{
	struct file *f = fd_file(t, oldfd);
	struct file **slot;

	if (!f || newfd >= VFS_NFD)
		return -EBADF;
	if (oldfd != newfd) {
		slot = fd_slot(t, newfd);
		if (!slot)
			return -ENOMEM;
		f->refs++;
		if (*slot)
			fd_close(t, newfd);
		*slot = f;
		fd_bit_put(t->used, newfd, true);
	}
	fd_bit_put(t->cloexec, newfd, cloexec);
	return (int)newfd;
}

struct fdtable *fdt_create_console(void)
{
	struct fdtable *t = fdt_new();

	if (!t)
		return NULL;
	for (int i = 0; i < 3; i++) {
		struct file *f = file_new(consoles[i], VO_RDWR | VO_LARGEFILE);

		if (!f) {
			fdt_put(t);
			return NULL;
		}
		fd_install(t, f, i, false);
	}
	return t;
}

struct fdtable *fdt_dup(struct fdtable *src)
{
	struct fdtable *t = kmalloc(sizeof(*t));

	if (!t)
		return NULL;
	memcpy(t, src, sizeof(*t));
	t->refs = 1;
	for (int c = 0; c < VFS_NFD / VFS_FD_CHUNK; c++) {
		if (!src->fd[c])
			continue;
		t->fd[c] = kmalloc(VFS_FD_CHUNK * sizeof(struct file *));
		if (!t->fd[c]) {
			while (c--)
				kfree(t->fd[c]);
			kfree(t);
			return NULL;
		}
		memcpy(t->fd[c], src->fd[c],
		       VFS_FD_CHUNK * sizeof(struct file *));
	}
	if (t->exe)
		t->exe->refs++;
	for (u32 w = 0; w < VFS_NFD / 64; w++)
		for (u64 m = t->used[w]; m; m &= m - 1)
			fd_file(t, w * 64 + __builtin_ctzll(m))->refs++;
	return t;
}

/* Close the descriptors of mask (NULL: all of them). */
static void fdt_close_mask(struct fdtable *t, const u64 *mask)
{
	for (u32 w = 0; w < VFS_NFD / 64; w++)
		for (u64 m = t->used[w] & (mask ? mask[w] : ~0ull); m;
		     m &= m - 1)
			fd_close(t, w * 64 + __builtin_ctzll(m));
}

void fdt_put(struct fdtable *t)
{
	if (!t || --t->refs)
		return;
	fdt_close_mask(t, NULL);
	if (t->exe)
		inode_put(t->exe);
	for (int c = 0; c < VFS_NFD / VFS_FD_CHUNK; c++)
		kfree(t->fd[c]);
	kfree(t);
}

/*
 * execve: vfs_exec_node() holds the image's node until the new program is
 * committed by fdt_close_on_exec(), which makes it /proc/self/exe.  One
 * pending slot is enough: both run under the big kernel lock and exec
 * does not sleep in between.
 */
static struct inode *exec_pending;

/* An executable's bytes, contiguous and pinned: exec maps pages in place. */
int vfs_image_node(struct inode *n, const u8 **data, u64 *size)
{
	int err;

	if (n->kind != VN_REG || !(n->mode & 0111))
		return -EACCES;
	err = vfs_host_load(n);
	if (err)
		return err;
	vfs_pin(n);
	*data = n->data;
	*size = n->size;
	return 0;
}

int vfs_exec_node(struct inode *n, const u8 **data, u64 *size)
{
	int err = vfs_image_node(n, data, size);

	if (err)
		return err;
	if (exec_pending)
		inode_put(exec_pending);
	inode_get(n);
	exec_pending = n;
	return 0;
}

void fdt_close_on_exec(struct fdtable *t)
{
	fdt_close_mask(t, t->cloexec);
	if (exec_pending) {
		if (t->exe)
			inode_put(t->exe);
		t->exe = exec_pending;
		exec_pending = NULL;
	}
}
