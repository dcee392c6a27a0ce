// SPDX-License-Identifier: MIT
/*
 * The file tree (see vfs.h): inodes, the name hash, the tree seeded from
 * the initramfs and the host's nodes in it, path walks, create, unlink,
 * rename, a node's path and its stat.  Pure logic: built into the kernel
 * and into the host unit test.  A file's data and open files are in
 * vfs_file.c, descriptor tables in vfs_fd.c.
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

/* A node with a copy of its name (s, len bytes) of its own, for
 * dir_attach(); NULL when either allocation fails. */
static struct inode *inode_new_named(u32 mode, u8 kind, const char *s,
				     u32 len)
{
	struct inode *n = inode_new(mode, kind);
	char *name = kmalloc(len);

	if (!n || !name) {
		kfree(n);
		kfree(name);
		return NULL;
	}
	memcpy(name, s, len);
	n->name = name;
	n->nlen = len;
	n->name_owned = 1;
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
	/* shm_open() and sem_open() make their files here. */
	if (dev && !mkdir_p(dev, "shm", 3, 01777))
		dev = NULL;
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
	struct inode *n = inode_new_named(a->mode & (VS_IFMT | 07777),
					  isdir ? VN_DIR : VN_REG, name, len);

	if (!n) {
		hostfs_close(a->hh);
		return NULL;
	}
	n->hh = a->hh;
	n->ino = a->ino;
	n->size = a->size;
	n->mtime_ns = a->mtime_ns;
	dir_attach(dir, n, n->name, len, h);
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

/* A walk's start, or a symbolic link's: "/" or ".", neither . nor .. */
static void walk_from(struct nameres *nr, struct inode *from, bool abs)
{
	nr->ino = nr->ent = from;
	nr->dir = from->parent;
	nr->name = abs ? "/" : ".";
	nr->len = 1;
}

/* Whether a name ending at p is a walk's last: nothing but slashes after
 * it, there and in the rests of the links being walked. */
static bool walk_last(const char *p, const char *const *rest, int depth)
{
	for (;;) {
		while (*p == '/')
			p++;
		if (*p)
			return false;
		if (!depth)
			return true;
		p = rest[--depth];
	}
}

/*
 * A symbolic link is walked in place: its target is a NUL-terminated
 * string in its data, walked from the link's directory (or the root),
 * and what followed the link in the path waits on a stack until the
 * target is done.  No buffer is rewritten, and a last name may point
 * into a link's target: the caller keeps nothing past its system call.
 */
int vfs_walk(struct inode *base, const char *path, bool follow,
	     struct nameres *nr)
{
	const char *rest[VFS_LINKS_MAX];
	const char *p = path;
	int depth = 0, links = 0;

	if (!*p)
		return -ENOENT;
	walk_from(nr, *p == '/' ? root : base, *p == '/');
	for (;;) {
		struct inode *cur = nr->ino, *n;
		const char *s;
		u32 h = FNV_INIT;

		while (*p == '/')
			p++;
		if (!*p) {
			if (!depth)
				break;
			p = rest[--depth];
			continue;
		}
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
			n = cur->parent;
		else
			n = dir_lookup(cur, s, nr->len, h);
		if (!n && cur->hh) {
			struct hostfs_attr a;
			int err = hostfs_lookup(cur->hh, s, nr->len, &a);

			if (err && err != -ENOENT)
				return err;
			if (!err && !(n = vfs_host_node(cur, s, nr->len, h, &a)))
				return -ENOMEM;
		}
		if (!n && cur->parent == root && cur->nlen == 3 &&
		    !memcmp(cur->name, "dev", 3)) {
			char nm[8];

			if (nr->len < sizeof(nm)) {
				memcpy(nm, s, nr->len);
				nm[nr->len] = 0;
				n = vfs_dev_lookup(nm);
			}
		}
		/* A hard link names its file: the entry is kept for unlink
		 * and rename. */
		nr->ent = n;
		if (n && n->kind == VN_LINK)
			n = n->target;
		nr->ino = n;
		if (!n || n->kind != VN_SYMLINK)
			continue;
		/* A trailing slash follows a last link too (it must be a
		 * directory). */
		if (!follow && *p != '/' && walk_last(p, rest, depth))
			continue;
		if (++links > VFS_LINKS_MAX)
			return -ELOOP;
		rest[depth++] = p;
		p = (const char *)n->data;
		walk_from(nr, *p == '/' ? root : cur, *p == '/');
	}
	/* depth 0: p is at the end of path itself */
	nr->slash = p > path && p[-1] == '/';
	return 0;
}

int vfs_create(struct nameres *nr, u32 mode, u32 umask)
{
	bool dir = (mode & VS_IFMT) == VS_IFDIR;
	struct inode *n;

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
	n = inode_new_named((dir ? VS_IFDIR : VS_IFREG) |
			    (mode & 07777 & ~umask), dir ? VN_DIR : VN_REG,
			    nr->name, nr->len);
	if (!n)
		return -ENOMEM;
	n->mtime_tsc = vfs_clock();
	dir_attach(nr->dir, n, n->name, nr->len, name_hash(n->name, nr->len));
	nr->ino = n;
	return 0;
}

static bool is_dev(struct inode *n)
{
	return n->kind != VN_REG && n->kind != VN_DIR &&
	       n->kind != VN_SYMLINK;
}

/* Entry e (a node's first name, or a link) leaves its directory; the node
 * goes with its last name and reference. */
static void entry_remove(struct inode *e)
{
	struct inode *n = e->kind == VN_LINK ? e->target : e;

	dir_detach(e);
	if (e != n) {
		kfree((void *)e->name);
		kfree(e);
	}
	n->nlink = n->kind == VN_DIR ? 0 : n->nlink - 1;
	if (n->nlink == 0 && n->refs == 0)
		inode_free(n);
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
	entry_remove(nr->ent);
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
	if (old)
		entry_remove(to->ent);
	/* The name moves: the node's first, or a link. */
	n = from->ent;
	dir_detach(n);
	if (n->name_owned)
		kfree((void *)n->name);
	n->name_owned = 1;
	dir_attach(to->dir, n, name, to->len, name_hash(name, to->len));
	return 0;
}

/*
 * to, a new name for from's file: a VN_LINK entry.  Linux's answers: no
 * directories (EPERM), across filesystems EXDEV (our /dev, and any --dir
 * share: the host's file has one name here), a file already gone ENOENT.
 */
int vfs_link(struct nameres *from, struct nameres *to)
{
	struct inode *n = from->ino, *e;

	if (!n)
		return -ENOENT;
	if (from->slash && n->kind != VN_DIR)
		return -ENOTDIR;
	if (to->ino)
		return -EEXIST;
	if (to->slash || to->dir->nlink == 0)
		return -ENOENT;
	if (n->kind == VN_DIR)
		return -EPERM;
	if (is_dev(n) || n->hh || to->dir->hh)
		return n->hh && to->dir->hh ? -EPERM : -EXDEV;
	if (n->nlink == 0)
		return -ENOENT;
	e = inode_new_named(n->mode, VN_LINK, to->name, to->len);
	if (!e)
		return -ENOMEM;
	e->ino = n->ino;
	e->target = n;
	n->nlink++;
	dir_attach(to->dir, e, e->name, to->len, name_hash(e->name, to->len));
	to->ino = n;
	to->ent = e;
	return 0;
}

/*
 * A symbolic link named nr (walked without following) to target (len
 * bytes, kept NUL-terminated in its data).  Linux's answers: an empty
 * target ENOENT, a name taken EEXIST.  In a --dir share EPERM: a link
 * the guest left there would lead the host's programs out of the share.
 */
int vfs_symlink(struct nameres *nr, const char *target, u32 len)
{
	struct inode *n;

	if (!len)
		return -ENOENT;
	if (nr->ino)
		return -EEXIST;
	if (nr->slash || nr->dir->nlink == 0)
		return -ENOENT;
	if (nr->dir->hh)
		return -EPERM;
	n = inode_new_named(VS_IFLNK | 0777, VN_SYMLINK, nr->name, nr->len);
	if (!n)
		return -ENOMEM;
	n->data = vfs_data_alloc(len + 1, &n->cap);
	if (!n->data) {
		inode_free(n);
		return -ENOMEM;
	}
	n->data_owned = 1;
	memcpy(n->data, target, len);
	n->data[len] = 0;
	n->size = len;
	n->mtime_tsc = vfs_clock();
	dir_attach(nr->dir, n, n->name, nr->len, name_hash(n->name, nr->len));
	nr->ino = nr->ent = n;
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
