// SPDX-License-Identifier: MIT
/*
 * Descriptor tables (see vfs.h): descriptors and their close-on-exec
 * bits, a process's table made, copied by fork and closed, and the
 * image execve commits as /proc/self/exe.  Pure logic: built into the
 * kernel and into the host unit test.
 */
#include "vfs.h"

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
		struct file *f = file_new(vfs_console(i),
					  VO_RDWR | VO_LARGEFILE);

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
