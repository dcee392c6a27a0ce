// SPDX-License-Identifier: MIT
/*
 * The guest kernel's file layer (guest-kernel/vfs.c, vfs_file.c, vfs_fd.c,
 * pipe.c) on the host: user pointers are plain pointers, and this file
 * provides the hooks the kernel's fs_syscalls.c provides in the guest
 * (memory, wake-ups).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpio_writer.h"			/* the VMM's writer */
#include "../../guest-kernel/vfs.h"

/* ---- host shims ---- */

static char bad_user[1];		/* copies to or from here fault */
static long live_allocs, data_allocs, pages, wakes;

void *kmalloc(size_t n)
{
	live_allocs++;
	return calloc(1, n ? n : 1);
}

void kfree(void *p)
{
	if (p)
		live_allocs--;
	free(p);
}

long copy_from_user(void *dst, const void *usrc, size_t n)
{
	if (usrc == bad_user)
		return -EFAULT;
	memcpy(dst, usrc, n);
	return 0;
}

/* /dev/urandom's bytes: the kernel's generator is random.c's. */
s64 random_to_user(void *ubuf, u64 n)
{
	if (ubuf == bad_user)
		return -EFAULT;
	memset(ubuf, 0x5a, n);
	return (s64)n;
}

long copy_to_user(void *udst, const void *src, size_t n)
{
	if (udst == bad_user)
		return -EFAULT;
	memcpy(udst, src, n);
	return 0;
}

void *vfs_data_alloc(u64 need, u64 *cap)
{
	*cap = (need + 4095) & ~4095ull;
	data_allocs++;
	/* Garbage, as page_alloc gives: vfs_file.c must zero what it exposes. */
	return memset(aligned_alloc(4096, *cap), 0xa5, *cap);
}

void vfs_data_free(void *p, u64 cap)
{
	(void)cap;
	data_allocs--;
	free(p);
}

/* A clock that ticks once per call, in seconds of wall time. */
static u64 clock_ticks;

u64 vfs_clock(void)
{
	return ++clock_ticks;
}

u64 vfs_clock_ns(u64 clock)
{
	return clock * 1000000000ull + 7;
}

void *vfs_page_alloc(void)
{
	pages++;
	return aligned_alloc(4096, 4096);
}

void vfs_page_free(void *p)
{
	pages--;
	free(p);
}

void wake_all(struct waitq *wq)
{
	(void)wq;
	wakes++;
}

/* ---- fixtures ---- */

static struct cpio_writer arc;
static u8 big[10000];

static int setup(void **state)
{
	(void)state;
	memset(&arc, 0, sizeof(arc));
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (u8)(i * 7);
	if (cpio_writer_add(&arc, ".", 040755, NULL, 0) ||
	    cpio_writer_add(&arc, "bin", 040755, NULL, 0) ||
	    cpio_writer_add(&arc, "bin/prog", 0100755, big, sizeof(big)) ||
	    cpio_writer_add(&arc, "etc/motd", 0100644, "hello\n", 6) ||
	    cpio_writer_add(&arc, "a/b/c/deep", 0100600, "x", 1) ||
	    cpio_writer_add(&arc, "empty", 0100644, NULL, 0) ||
	    cpio_writer_finish(&arc))
		return -1;
	if (vfs_core_init(1u << 1) || vfs_seed(arc.data, arc.len))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cpio_writer_free(&arc);
	return 0;
}

static struct inode *lookup(const char *path)
{
	struct nameres nr;

	if (vfs_resolve(vfs_root(), path, &nr))
		return NULL;
	return nr.ino;
}

static struct file *open_path(const char *path, u32 flags, int *err)
{
	struct nameres nr;
	struct file *f = NULL;

	*err = vfs_resolve(vfs_root(), path, &nr);
	if (!*err)
		*err = vfs_open(&nr, flags, 0644, 022, &f);
	return f;
}

static s64 rd(struct file *f, void *buf, u64 len)
{
	s64 r = vfs_read(f, buf, len, f->pos);

	if (r > 0)
		f->pos += r;
	return r;
}

static s64 wr(struct file *f, const void *buf, u64 len)
{
	u64 pos = (f->flags & VO_APPEND) ? f->ino->size : f->pos;
	s64 r = vfs_write(f, buf, len, pos);

	if (r > 0)
		f->pos = pos + r;
	return r;
}

/* ---- tests ---- */

static void test_seed_in_place(void **state)
{
	struct inode *n = lookup("/bin/prog");
	struct linux_stat st;

	(void)state;
	assert_non_null(n);
	/* Read in place: the node's data is the archive's bytes. */
	assert_true(n->data > arc.data && n->data < arc.data + arc.len);
	assert_int_equal((n->data - arc.data) % CPIO_WRITER_ALIGN, 0);
	assert_int_equal(n->size, sizeof(big));
	assert_false(n->data_owned);
	vfs_stat(n, &st);
	assert_int_equal(st.mode, 0100755);
	assert_int_equal(st.size, sizeof(big));
	assert_int_equal(st.nlink, 1);
	assert_int_equal(st.blocks, 24);
	assert_int_equal(st.mtime, 0);
	assert_int_not_equal(st.ino, 0);
	assert_int_equal(sizeof(st), 144);
	/* Directories implied by file names exist, with nlink counting
	 * subdirectories. */
	n = lookup("/a/b");
	assert_non_null(n);
	assert_int_equal(n->kind, VN_DIR);
	assert_int_equal(n->nlink, 3);
	assert_non_null(lookup("/etc/motd"));
	assert_non_null(lookup("/empty"));
	assert_int_equal(lookup("/empty")->size, 0);
}

static void test_resolve(void **state)
{
	struct inode *prog = lookup("/bin/prog"), *bin = lookup("/bin");
	struct nameres nr;

	(void)state;
	assert_ptr_equal(lookup("bin/prog"), prog);
	assert_ptr_equal(lookup("//bin///prog"), prog);
	assert_ptr_equal(lookup("/etc/../bin/./prog"), prog);
	assert_ptr_equal(lookup("/../../bin/prog"), prog);
	assert_ptr_equal(lookup("/"), vfs_root());
	assert_ptr_equal(lookup("."), vfs_root());
	assert_ptr_equal(lookup("/a/b/c/../../.."), vfs_root());
	/* relative to a base */
	assert_int_equal(vfs_resolve(bin, "prog", &nr), 0);
	assert_ptr_equal(nr.ino, prog);
	assert_int_equal(vfs_resolve(bin, "../etc/motd", &nr), 0);
	assert_ptr_equal(nr.ino, lookup("/etc/motd"));
	/* missing last component: the parent and the name */
	assert_int_equal(vfs_resolve(vfs_root(), "/bin/new", &nr), 0);
	assert_null(nr.ino);
	assert_ptr_equal(nr.dir, bin);
	assert_int_equal(nr.len, 3);
	assert_memory_equal(nr.name, "new", 3);
	assert_false(nr.slash);
	assert_int_equal(vfs_resolve(vfs_root(), "/bin/", &nr), 0);
	assert_true(nr.slash);
	/* errors */
	assert_int_equal(vfs_resolve(vfs_root(), "", &nr), -ENOENT);
	assert_int_equal(vfs_resolve(vfs_root(), "/nope/x", &nr), -ENOENT);
	assert_int_equal(vfs_resolve(vfs_root(), "/bin/prog/x", &nr),
			 -ENOTDIR);
	char longname[300];

	memset(longname, 'a', sizeof(longname));
	longname[299] = 0;
	assert_int_equal(vfs_resolve(vfs_root(), longname, &nr),
			 -ENAMETOOLONG);
	/* /dev nodes exist without being in the tree */
	assert_int_equal(vfs_resolve(vfs_root(), "/dev/null", &nr), 0);
	assert_non_null(nr.ino);
	assert_int_equal(nr.ino->kind, VN_NULL);
	assert_ptr_equal(lookup("/dev/tty"), vfs_console(1));
	assert_int_equal(vfs_resolve(vfs_root(), "/dev/null/x", &nr),
			 -ENOTDIR);
}

static void test_file_io(void **state)
{
	long allocs = live_allocs, datas = data_allocs;
	char buf[64];
	struct file *f;
	int err;

	(void)state;
	assert_null(open_path("/tmpfile", VO_RDWR, &err));
	assert_int_equal(err, -ENOENT);
	f = open_path("/tmpfile", VO_RDWR | VO_CREAT, &err);
	assert_non_null(f);
	assert_int_equal(f->ino->mode, 0100644);
	assert_int_equal(wr(f, "hello", 5), 5);
	assert_int_equal(vfs_lseek(f, 0, 0), 0);
	assert_int_equal(rd(f, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(rd(f, buf, sizeof(buf)), 0);
	/* A write past the end leaves a hole of zeros (the allocator's
	 * memory is garbage). */
	assert_int_equal(vfs_lseek(f, 10, 1), 15);
	assert_int_equal(wr(f, "!", 1), 1);
	assert_int_equal(f->ino->size, 16);
	assert_int_equal(vfs_read(f, buf, 16, 0), 16);
	assert_memory_equal(buf, "hello\0\0\0\0\0\0\0\0\0\0!", 16);
	assert_int_equal(vfs_lseek(f, -1, 2), 15);
	assert_int_equal(vfs_lseek(f, -100, 1), -EINVAL);
	assert_int_equal(vfs_lseek(f, 0, 7), -EINVAL);
	/* shrink then grow: the regrown part is zero, not the old bytes */
	assert_int_equal(vfs_truncate(f->ino, 2), 0);
	assert_int_equal(vfs_truncate(f->ino, 6), 0);
	assert_int_equal(vfs_read(f, buf, 16, 0), 6);
	assert_memory_equal(buf, "he\0\0\0\0", 6);
	/* bad user buffers; a failed write changes no time */
	{
		struct linux_stat st1, st2;

		vfs_stat(f->ino, &st1);
		assert_int_equal(vfs_read(f, bad_user, 4, 0), -EFAULT);
		assert_int_equal(vfs_write(f, bad_user, 4, 0), -EFAULT);
		vfs_stat(f->ino, &st2);
		assert_int_equal(st1.mtime, st2.mtime);
		/* a write is a change: the clock ticks once per change here */
		assert_int_equal(wr(f, "x", 1), 1);
		vfs_stat(f->ino, &st2);
		assert_true(st2.mtime > st1.mtime);
		assert_int_equal(st2.mtime_ns, 7);
		assert_int_equal(st2.atime, st2.mtime);
		assert_int_equal(st2.ctime, st2.mtime);
		assert_int_equal(vfs_truncate(f->ino, 6), 0);
		vfs_stat(f->ino, &st1);
		assert_true(st1.mtime > st2.mtime);
	}
	/* exclusive create, O_TRUNC, O_APPEND */
	assert_null(open_path("/tmpfile", VO_RDWR | VO_CREAT | VO_EXCL, &err));
	assert_int_equal(err, -EEXIST);
	file_put(f);
	f = open_path("/tmpfile", VO_WRONLY | VO_TRUNC | VO_APPEND, &err);
	assert_non_null(f);
	assert_int_equal(f->ino->size, 0);
	assert_int_equal(wr(f, "ab", 2), 2);
	f->pos = 0;
	assert_int_equal(wr(f, "cd", 2), 2);
	assert_int_equal(f->ino->size, 4);
	assert_memory_equal(f->ino->data, "abcd", 4);
	assert_int_equal(f->flags, VO_WRONLY | VO_APPEND | VO_LARGEFILE);
	file_put(f);
	/* directories and files in the wrong places */
	assert_null(open_path("/bin", VO_WRONLY, &err));
	assert_int_equal(err, -EISDIR);
	assert_null(open_path("/tmpfile", VO_RDONLY | VO_DIRECTORY, &err));
	assert_int_equal(err, -ENOTDIR);
	assert_null(open_path("/tmpfile/", VO_RDONLY, &err));
	assert_int_equal(err, -ENOTDIR);
	assert_null(open_path("/newdir/", VO_RDWR | VO_CREAT, &err));
	assert_int_equal(err, -EISDIR);
	f = open_path("/bin", VO_RDONLY, &err);
	assert_non_null(f);
	assert_int_equal(rd(f, buf, 4), -EISDIR);
	file_put(f);
	/* unlink while open: still readable until the last close */
	f = open_path("/tmpfile", VO_RDONLY, &err);
	assert_non_null(f);
	struct nameres nr;

	assert_int_equal(vfs_resolve(vfs_root(), "/tmpfile", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, false), 0);
	assert_null(lookup("/tmpfile"));
	assert_int_equal(rd(f, buf, 4), 4);
	assert_memory_equal(buf, "abcd", 4);
	file_put(f);
	assert_int_equal(live_allocs, allocs);
	assert_int_equal(data_allocs, datas);
}

static void test_initramfs_copy_on_write(void **state)
{
	struct inode *n = lookup("/etc/motd");
	const u8 *orig = n->data;
	struct file *f;
	int err;
	char buf[8];

	(void)state;
	f = open_path("/etc/motd", VO_RDWR, &err);
	assert_non_null(f);
	assert_int_equal(vfs_write(f, "J", 1, 0), 1);
	/* The archive is untouched: a program may have it mapped. */
	assert_memory_equal(orig, "hello\n", 6);
	assert_ptr_not_equal(n->data, orig);
	assert_true(n->data_owned);
	assert_int_equal(vfs_read(f, buf, 8, 0), 6);
	assert_memory_equal(buf, "Jello\n", 6);
	/* Pinned (exec'd or mmapped) data is copied before the next write,
	 * and the pinned copy stays as it was. */
	const u8 *data;
	u64 size;
	assert_int_equal(vfs_exec_node(n, &data, &size), -EACCES);
	vfs_pin(n);
	orig = n->data;
	assert_int_equal(vfs_write(f, "M", 1, 0), 1);
	assert_memory_equal(orig, "Jello\n", 6);
	assert_memory_equal(n->data, "Mello\n", 6);
	vfs_data_free((void *)orig, 4096);	/* the kernel leaks it */
	/* Shrinking borrowed data needs no copy. */
	orig = n->data;
	vfs_pin(n);
	assert_int_equal(vfs_truncate(n, 3), 0);
	assert_ptr_equal(n->data, orig);
	file_put(f);

	/* A small write inside a big borrowed file copies all of it. */
	f = open_path("/bin/prog", VO_RDWR, &err);
	assert_non_null(f);
	orig = f->ino->data;
	assert_int_equal(vfs_write(f, "Z", 1, 100), 1);
	assert_int_equal(f->ino->size, sizeof(big));
	assert_true(f->ino->cap >= sizeof(big));
	assert_memory_equal(f->ino->data, big, 100);
	assert_int_equal(f->ino->data[100], 'Z');
	assert_memory_equal(f->ino->data + 101, big + 101, sizeof(big) - 101);
	assert_memory_equal(orig, big, sizeof(big));
	file_put(f);
	/* O_CREAT's mode cannot smuggle in a file type */
	f = open_path("/typed", VO_RDWR | VO_CREAT, &err);
	assert_non_null(f);
	file_put(f);
	struct nameres nr;

	assert_int_equal(vfs_resolve(vfs_root(), "/typed2", &nr), 0);
	assert_int_equal(vfs_open(&nr, VO_RDWR | VO_CREAT, VS_IFDIR | 0644, 0,
				  &f), 0);
	assert_int_equal(f->ino->kind, VN_REG);
	assert_int_equal(f->ino->mode, VS_IFREG | 0644);
	file_put(f);
}

/* A shared mapping's bytes back into a file: pinned data copied first,
 * clipped at the end (the file never grows), nothing past it. */
static void test_store_back(void **state)
{
	struct file *f;
	const u8 *orig;
	int err;
	char buf[16];

	(void)state;
	f = open_path("/storeback", VO_RDWR | VO_CREAT, &err);
	assert_non_null(f);
	assert_int_equal(vfs_write(f, "0123456789", 10, 0), 10);
	vfs_pin(f->ino);
	orig = f->ino->data;
	assert_int_equal(vfs_store_back(f->ino, "abcdefgh", 8, 6), 4);
	assert_memory_equal(orig, "0123456789", 10);
	assert_int_equal(f->ino->size, 10);
	assert_int_equal(vfs_read(f, buf, 16, 0), 10);
	assert_memory_equal(buf, "012345abcd", 10);
	assert_int_equal(vfs_store_back(f->ino, "x", 1, 10), 0);
	assert_int_equal(f->ino->size, 10);
	vfs_data_free((void *)orig, 4096);	/* the kernel leaks it */
	file_put(f);
}

static void test_big_file(void **state)
{
	static u8 chunk[65536];
	struct file *f;
	int err;

	(void)state;
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (u8)(i * 13 + 1);
	f = open_path("/big", VO_RDWR | VO_CREAT, &err);
	assert_non_null(f);
	for (int i = 0; i < 80; i++)	/* 5 MiB */
		assert_int_equal(wr(f, chunk, sizeof(chunk)), sizeof(chunk));
	assert_int_equal(f->ino->size, 80 * sizeof(chunk));
	/* contiguous, so execve and mmap can use it in place */
	for (int i = 0; i < 80; i++)
		assert_memory_equal(f->ino->data + i * sizeof(chunk), chunk,
				    sizeof(chunk));
	/* the capacity doubles: few reallocations */
	assert_true(f->ino->cap >= f->ino->size);
	assert_true(f->ino->cap <= 2 * f->ino->size);
	file_put(f);
	struct nameres nr;

	assert_int_equal(vfs_resolve(vfs_root(), "/big", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, false), 0);
}

static void test_mkdir_rmdir(void **state)
{
	struct nameres nr;
	struct file *f;
	int err;

	(void)state;
	assert_int_equal(vfs_resolve(vfs_root(), "/d1", &nr), 0);
	assert_int_equal(vfs_create(&nr, VS_IFDIR | 0777, 022), 0);
	assert_int_equal(nr.ino->mode, 040755);
	assert_int_equal(vfs_resolve(vfs_root(), "/d1", &nr), 0);
	assert_int_equal(vfs_create(&nr, VS_IFDIR | 0777, 022), -EEXIST);
	assert_int_equal(vfs_resolve(vfs_root(), "/d1/sub/", &nr), 0);
	assert_int_equal(vfs_create(&nr, VS_IFDIR | 0755, 022), 0);
	assert_int_equal(lookup("/d1")->nlink, 3);
	assert_int_equal(vfs_resolve(vfs_root(), "/nodir/sub", &nr), -ENOENT);
	/* not empty, ".", root, a file */
	assert_int_equal(vfs_resolve(vfs_root(), "/d1", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, true), -ENOTEMPTY);
	assert_int_equal(vfs_unlink(&nr, false), -EISDIR);
	assert_int_equal(vfs_resolve(vfs_root(), "/d1/sub/.", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, true), -EINVAL);
	assert_int_equal(vfs_resolve(vfs_root(), "/", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, true), -EBUSY);
	assert_int_equal(vfs_resolve(vfs_root(), "/d1/..", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, true), -ENOTEMPTY);
	assert_int_equal(vfs_resolve(vfs_root(), "/etc/motd", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, true), -ENOTDIR);
	/* rmdir an open directory: it lists nothing, ".." is itself, and
	 * nothing can be created in it */
	f = open_path("/d1/sub", VO_RDONLY, &err);
	assert_non_null(f);
	assert_int_equal(vfs_resolve(vfs_root(), "/d1/sub", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, true), 0);
	assert_int_equal(lookup("/d1")->nlink, 2);
	assert_int_equal(vfs_resolve(f->ino, "x", &nr), 0);
	assert_int_equal(vfs_create(&nr, VS_IFREG | 0644, 0), -ENOENT);
	assert_int_equal(vfs_resolve(vfs_root(), "/d1", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, true), 0);
	assert_ptr_equal(f->ino->parent, f->ino);
	file_put(f);
}

struct ent {
	char name[64];
	u8 type;
	u64 ino;
};

static int list_dir(struct file *f, u64 bufsize, struct ent *out, int max)
{
	u8 buf[8192];
	int n = 0;
	s64 r;

	while ((r = vfs_getdents(f, buf, bufsize)) > 0) {
		for (s64 off = 0; off < r;) {
			u16 reclen;

			memcpy(&reclen, buf + off + 16, 2);
			assert_int_equal(reclen % 8, 0);
			assert_true(n < max);
			memcpy(&out[n].ino, buf + off, 8);
			out[n].type = buf[off + 18];
			strcpy(out[n].name, (char *)buf + off + 19);
			n++;
			off += reclen;
		}
	}
	assert_int_equal(r, 0);
	return n;
}

static void test_getdents(void **state)
{
	struct ent e[64];
	struct nameres nr;
	struct file *f;
	char name[16];
	int err, n;

	(void)state;
	f = open_path("/bin", VO_RDONLY | VO_DIRECTORY, &err);
	assert_non_null(f);
	n = list_dir(f, 8192, e, 64);
	assert_int_equal(n, 3);
	assert_string_equal(e[0].name, ".");
	assert_int_equal(e[0].type, 4);
	assert_int_equal(e[0].ino, lookup("/bin")->ino);
	assert_string_equal(e[1].name, "..");
	assert_int_equal(e[1].ino, vfs_root()->ino);
	assert_string_equal(e[2].name, "prog");
	assert_int_equal(e[2].type, 8);
	/* rewind; a buffer too small for one record */
	assert_int_equal(vfs_lseek(f, 0, 0), 0);
	assert_int_equal(vfs_getdents(f, e, 10), -EINVAL);
	file_put(f);

	/* many entries, read with a small buffer: each exactly once */
	assert_int_equal(vfs_resolve(vfs_root(), "/many", &nr), 0);
	assert_int_equal(vfs_create(&nr, VS_IFDIR | 0755, 0), 0);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "/many/f%02d", i);
		assert_int_equal(vfs_resolve(vfs_root(), name, &nr), 0);
		assert_int_equal(vfs_create(&nr, VS_IFREG | 0644, 0), 0);
	}
	f = open_path("/many", VO_RDONLY, &err);
	assert_non_null(f);
	n = list_dir(f, 100, e, 64);
	assert_int_equal(n, 42);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "f%02d", i);
		assert_string_equal(e[i + 2].name, name);
	}
	/* entries removed: the listing shrinks */
	assert_int_equal(vfs_resolve(vfs_root(), "/many/f00", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, false), 0);
	vfs_lseek(f, 0, 0);
	assert_int_equal(list_dir(f, 8192, e, 64), 41);
	assert_string_equal(e[2].name, "f01");
	file_put(f);
}

/* vfs_link(), vfs_unlink() and vfs_rename() by paths from the root; a
 * symbolic link as the last name is not followed, as the kernel's
 * linkat (without AT_SYMLINK_FOLLOW), unlinkat and renameat walk. */
static int path_pair(int (*op)(struct nameres *, struct nameres *),
		     const char *from, const char *to)
{
	struct nameres a, b;
	int err = vfs_walk(vfs_root(), from, false, &a);

	if (!err)
		err = vfs_walk(vfs_root(), to, false, &b);
	return err ? err : op(&a, &b);
}

static int path_link(const char *from, const char *to)
{
	return path_pair(vfs_link, from, to);
}

static int path_unlink(const char *path)
{
	struct nameres nr;
	int err = vfs_walk(vfs_root(), path, false, &nr);

	return err ? err : vfs_unlink(&nr, false);
}

static int path_rename(const char *from, const char *to)
{
	return path_pair(vfs_rename, from, to);
}

static u32 nlink_of(const char *path)
{
	struct linux_stat st;

	vfs_stat(lookup(path), &st);
	return (u32)st.nlink;
}

/*
 * Hard links as glibc's and musl's sem_open() use them (a file made under
 * a temporary name, linked to its own, the temporary unlinked): one file,
 * two names, each a way to it, and the file freed with its last name and
 * reference.
 */
static void test_hard_links(void **state)
{
	long allocs = live_allocs, datas = data_allocs;
	struct inode *file, *other;
	struct nameres nr;
	struct ent e[64];
	struct file *f;
	char buf[16];
	int err, n, found = 0;

	(void)state;
	f = open_path("/l1", VO_RDWR | VO_CREAT, &err);
	assert_non_null(f);
	assert_int_equal(wr(f, "data", 4), 4);
	file_put(f);
	file = lookup("/l1");
	assert_int_equal(path_link("/l1", "/bin/l2"), 0);
	assert_ptr_equal(lookup("/bin/l2"), file);
	assert_int_equal(nlink_of("/l1"), 2);
	assert_int_equal(nlink_of("/bin/l2"), 2);
	/* Linux's errors */
	assert_int_equal(path_link("/l1", "/etc/motd"), -EEXIST);
	assert_int_equal(path_link("/bin", "/b2"), -EPERM);
	assert_int_equal(path_link("/nope", "/x"), -ENOENT);
	assert_int_equal(path_link("/l1", "/nodir/x"), -ENOENT);
	assert_int_equal(path_link("/l1/", "/x"), -ENOTDIR);
	assert_int_equal(path_link("/l1", "/x/"), -ENOENT);
	assert_int_equal(path_link("/dev/null", "/x"), -EXDEV);
	assert_null(lookup("/x"));
	/* a link names no directory */
	assert_int_equal(vfs_resolve(vfs_root(), "/bin/l2/x", &nr), -ENOTDIR);
	/* listed with the file's inode number and type */
	f = open_path("/bin", VO_RDONLY | VO_DIRECTORY, &err);
	assert_non_null(f);
	n = list_dir(f, 8192, e, 64);
	for (int i = 0; i < n; i++) {
		if (strcmp(e[i].name, "l2"))
			continue;
		found++;
		assert_int_equal(e[i].ino, file->ino);
		assert_int_equal(e[i].type, 8);
	}
	assert_int_equal(found, 1);
	file_put(f);
	/* written by one name, read by the other */
	f = open_path("/bin/l2", VO_WRONLY | VO_APPEND, &err);
	assert_non_null(f);
	assert_int_equal(wr(f, "!", 1), 1);
	file_put(f);
	f = open_path("/l1", VO_RDONLY, &err);
	assert_non_null(f);
	assert_int_equal(rd(f, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "data!", 5);
	/* the first name goes first: the file lives on by its link */
	assert_int_equal(path_unlink("/l1"), 0);
	assert_null(lookup("/l1"));
	assert_ptr_equal(lookup("/bin/l2"), file);
	assert_int_equal(nlink_of("/bin/l2"), 1);
	/* rename onto another name of the same file does nothing */
	assert_int_equal(path_link("/bin/l2", "/l4"), 0);
	assert_int_equal(path_rename("/bin/l2", "/l4"), 0);
	assert_ptr_equal(lookup("/bin/l2"), file);
	assert_ptr_equal(lookup("/l4"), file);
	/* a link renamed is the same link elsewhere */
	assert_int_equal(path_rename("/l4", "/l5"), 0);
	assert_null(lookup("/l4"));
	assert_ptr_equal(lookup("/l5"), file);
	assert_int_equal(nlink_of("/l5"), 2);
	/* another file renamed over a link takes its name alone */
	assert_int_equal(vfs_resolve(vfs_root(), "/other", &nr), 0);
	assert_int_equal(vfs_create(&nr, VS_IFREG | 0644, 0), 0);
	other = nr.ino;
	assert_int_equal(path_rename("/other", "/l5"), 0);
	assert_ptr_equal(lookup("/l5"), other);
	assert_int_equal(nlink_of("/bin/l2"), 1);
	assert_int_equal(path_unlink("/l5"), 0);
	/* the last name: still readable while open, then freed */
	assert_int_equal(path_unlink("/bin/l2"), 0);
	assert_int_equal(file->nlink, 0);
	assert_int_equal(vfs_read(f, buf, 5, 0), 5);
	assert_memory_equal(buf, "data!", 5);
	file_put(f);
	assert_int_equal(path_link("/bin/prog", "/etc/prog2"), 0);
	assert_int_equal(path_unlink("/etc/prog2"), 0);
	assert_int_equal(nlink_of("/bin/prog"), 1);
	assert_int_equal(live_allocs, allocs);
	assert_int_equal(data_allocs, datas);
}

static int path_symlink(const char *target, const char *path)
{
	struct nameres nr;
	int err = vfs_walk(vfs_root(), path, false, &nr);

	return err ? err : vfs_symlink(&nr, target, strlen(target));
}

/* The node a path names without following a last link (lstat's). */
static struct inode *lookup_nofollow(const char *path)
{
	struct nameres nr;

	if (vfs_walk(vfs_root(), path, false, &nr))
		return NULL;
	return nr.ino;
}

/*
 * Symbolic links as ln -s, tar and Python's venv make them: followed
 * wherever they stand in a path (relative to their own directory, or
 * from the root), the last one only when the caller follows; loops end
 * in ELOOP after 40; unlink and rename take the link itself.
 */
static void test_symlinks(void **state)
{
	long allocs = live_allocs, datas = data_allocs;
	struct inode *motd = lookup("/etc/motd"), *l;
	struct linux_stat st;
	struct nameres nr;
	struct ent e[16];
	struct file *f;
	char buf[16], name[8];
	int err, n, found = 0;

	(void)state;
	assert_int_equal(path_symlink("../etc/motd", "/bin/rel"), 0);
	assert_int_equal(path_symlink("/etc", "/abs"), 0);
	assert_int_equal(path_symlink("a/b", "/ab"), 0);
	/* followed as the last name and on the way */
	assert_ptr_equal(lookup("/bin/rel"), motd);
	assert_ptr_equal(lookup("/abs/motd"), motd);
	assert_ptr_equal(lookup("/ab/c/deep"), lookup("/a/b/c/deep"));
	assert_ptr_equal(lookup("/abs/../bin/rel"), motd);
	f = open_path("/bin/rel", VO_RDONLY, &err);
	assert_non_null(f);
	assert_ptr_equal(f->ino, motd);
	assert_int_equal(rd(f, buf, sizeof(buf)), motd->size);
	assert_memory_equal(buf, motd->data, motd->size);
	file_put(f);
	/* not followed: the link, as lstat sees it */
	l = lookup_nofollow("/bin/rel");
	assert_non_null(l);
	assert_int_equal(l->kind, VN_SYMLINK);
	vfs_stat(l, &st);
	assert_int_equal(st.mode, VS_IFLNK | 0777);
	assert_int_equal(st.size, 11);
	assert_string_equal((const char *)l->data, "../etc/motd");
	/* a trailing slash follows even a last link */
	assert_int_equal(vfs_walk(vfs_root(), "/abs/", false, &nr), 0);
	assert_ptr_equal(nr.ino, lookup("/etc"));
	/* only O_PATH opens a link itself */
	assert_int_equal(vfs_walk(vfs_root(), "/bin/rel", false, &nr), 0);
	assert_int_equal(vfs_open(&nr, VO_RDONLY, 0, 0, &f), -ELOOP);
	assert_int_equal(vfs_open(&nr, VO_PATH, 0, 0, &f), 0);
	file_put(f);
	/* a dangling link: ENOENT, and O_CREAT makes its target */
	assert_int_equal(path_symlink("/etc/made", "/dangle"), 0);
	assert_null(lookup("/dangle"));
	f = open_path("/dangle", VO_WRONLY | VO_CREAT, &err);
	assert_non_null(f);
	file_put(f);
	assert_non_null(lookup("/etc/made"));
	assert_ptr_equal(lookup("/dangle"), lookup("/etc/made"));
	assert_int_equal(path_unlink("/etc/made"), 0);
	/* Linux's errors */
	assert_int_equal(path_symlink("x", "/abs"), -EEXIST);
	assert_int_equal(path_symlink("", "/empty-target"), -ENOENT);
	assert_int_equal(path_symlink("x", "/nodir/l"), -ENOENT);
	assert_int_equal(path_symlink("x", "/newl/"), -ENOENT);
	assert_int_equal(vfs_resolve(vfs_root(), "/bin/rel/x", &nr), -ENOTDIR);
	/* loops: a link to itself, and a chain longer than 40 */
	assert_int_equal(path_symlink("self", "/self"), 0);
	assert_int_equal(vfs_resolve(vfs_root(), "/self", &nr), -ELOOP);
	assert_int_equal(vfs_walk(vfs_root(), "/self", false, &nr), 0);
	assert_int_equal(vfs_resolve(vfs_root(), "/self/x", &nr), -ELOOP);
	assert_int_equal(vfs_walk(vfs_root(), "/self/x", false, &nr), -ELOOP);
	for (int i = 0; i < 42; i++) {
		char target[8];

		snprintf(name, sizeof(name), "/c%d", i);
		snprintf(target, sizeof(target), "c%d", i + 1);
		assert_int_equal(path_symlink(i == 41 ? "etc" : target, name), 0);
	}
	assert_int_equal(vfs_resolve(vfs_root(), "/c0", &nr), -ELOOP);
	assert_ptr_equal(lookup("/c2"), lookup("/etc"));	/* 39 links */
	/* listed as links */
	f = open_path("/bin", VO_RDONLY | VO_DIRECTORY, &err);
	assert_non_null(f);
	n = list_dir(f, 8192, e, 16);
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].name, "rel")) {
			found++;
			assert_int_equal(e[i].type, 10);
			assert_int_equal(e[i].ino, l->ino);
		}
	assert_int_equal(found, 1);
	file_put(f);
	/* rename and unlink take the link, not its target */
	assert_int_equal(path_rename("/bin/rel", "/a/b/rel2"), 0);
	assert_null(lookup_nofollow("/bin/rel"));
	assert_ptr_equal(lookup_nofollow("/a/b/rel2"), l);
	assert_null(lookup("/a/b/rel2"));	/* now /a/etc/motd */
	assert_int_equal(path_rename("/a/b/rel2", "/bin/rel"), 0);
	assert_ptr_equal(lookup("/bin/rel"), motd);
	/* a hard link to a link is a link */
	assert_int_equal(path_link("/bin/rel", "/bin/rel-hard"), 0);
	assert_ptr_equal(lookup("/bin/rel-hard"), motd);
	assert_ptr_equal(lookup_nofollow("/bin/rel-hard"), l);
	assert_int_equal(path_unlink("/bin/rel-hard"), 0);
	assert_int_equal(path_unlink("/bin/rel"), 0);
	assert_ptr_equal(lookup("/etc/motd"), motd);
	for (int i = 0; i < 42; i++) {
		snprintf(name, sizeof(name), "/c%d", i);
		assert_int_equal(path_unlink(name), 0);
	}
	assert_int_equal(path_unlink("/self"), 0);
	assert_int_equal(path_unlink("/dangle"), 0);
	assert_int_equal(path_unlink("/ab"), 0);
	assert_int_equal(path_unlink("/abs"), 0);
	assert_int_equal(live_allocs, allocs);
	assert_int_equal(data_allocs, datas);
}

static void test_rename_and_path(void **state)
{
	struct nameres a, b;
	char buf[64];

	(void)state;
	assert_int_equal(vfs_resolve(vfs_root(), "/r", &a), 0);
	assert_int_equal(vfs_create(&a, VS_IFDIR | 0755, 0), 0);
	assert_int_equal(vfs_resolve(vfs_root(), "/r/f", &a), 0);
	assert_int_equal(vfs_create(&a, VS_IFREG | 0644, 0), 0);
	assert_int_equal(vfs_resolve(vfs_root(), "/r/g", &a), 0);
	assert_int_equal(vfs_create(&a, VS_IFREG | 0644, 0), 0);
	struct inode *g = a.ino;

	/* file over file: the target goes away */
	assert_int_equal(vfs_resolve(vfs_root(), "/r/g", &a), 0);
	assert_int_equal(vfs_resolve(vfs_root(), "/r/f", &b), 0);
	assert_int_equal(vfs_rename(&a, &b), 0);
	assert_ptr_equal(lookup("/r/f"), g);
	assert_null(lookup("/r/g"));
	assert_int_equal(vfs_path(g, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "/r/f");
	assert_int_equal(vfs_path(g, buf, 4), -ENAMETOOLONG);
	assert_int_equal(vfs_path(vfs_root(), buf, sizeof(buf)), 1);
	assert_string_equal(buf, "/");
	/* a directory below itself; over a file; onto a non-empty dir */
	assert_int_equal(vfs_resolve(vfs_root(), "/r", &a), 0);
	assert_int_equal(vfs_resolve(vfs_root(), "/r/sub", &b), 0);
	assert_int_equal(vfs_rename(&a, &b), -EINVAL);
	assert_int_equal(vfs_resolve(vfs_root(), "/etc/motd", &b), 0);
	assert_int_equal(vfs_rename(&a, &b), -ENOTDIR);
	assert_int_equal(vfs_resolve(vfs_root(), "/a", &b), 0);
	assert_int_equal(vfs_rename(&a, &b), -ENOTEMPTY);
	/* move the directory: its files come along */
	assert_int_equal(vfs_resolve(vfs_root(), "/a/b/moved", &b), 0);
	assert_int_equal(vfs_rename(&a, &b), 0);
	assert_ptr_equal(lookup("/a/b/moved/f"), g);
	assert_int_equal(vfs_path(g, buf, sizeof(buf)), 12);
	assert_string_equal(buf, "/a/b/moved/f");
	assert_int_equal(lookup("/a/b")->nlink, 4);
	assert_int_equal(vfs_resolve(vfs_root(), "/nothere", &a), 0);
	assert_int_equal(vfs_rename(&a, &b), -ENOENT);
}

static void test_fdtable(void **state)
{
	long allocs = live_allocs;
	struct fdtable *t = fdt_create_console(), *c;
	struct file *f;
	int err;

	(void)state;
	assert_non_null(t);
	assert_ptr_equal(fd_file(t, 1)->ino, vfs_console(1));
	assert_int_equal(vfs_console(1)->mode & VS_IFMT, VS_IFCHR);
	assert_int_equal(vfs_console(0)->mode & VS_IFMT, VS_IFIFO);
	f = open_path("/bin/prog", VO_RDONLY, &err);
	assert_int_equal(fd_install(t, f, 0, false), 3);
	/* dup2 over an open descriptor, then lowest-free allocation */
	f->refs++;
	assert_int_equal(fd_install(t, f, 10, true), 10);
	assert_int_equal(fd_dup2(t, 3, 1, false), 1);
	assert_int_equal(fd_close(t, 0), 0);
	assert_int_equal(fd_close(t, 0), -EBADF);
	f->refs++;
	assert_int_equal(fd_install(t, f, 0, false), 0);
	assert_int_equal(f->refs, 4);
	assert_int_equal(fd_dup2(t, 7, 1, false), -EBADF);
	assert_int_equal(fd_dup2(t, 3, VFS_NFD, false), -EBADF);
	/* fork shares open file descriptions (and their offsets) */
	c = fdt_dup(t);
	assert_non_null(c);
	assert_int_equal(f->refs, 8);
	fd_file(c, 3)->pos = 100;
	assert_int_equal(fd_file(t, 3)->pos, 100);
	/* exec closes close-on-exec descriptors only */
	fdt_close_on_exec(c);
	assert_null(fd_file(c, 10));
	assert_non_null(fd_file(c, 3));
	assert_int_equal(f->refs, 7);
	fdt_put(c);
	assert_int_equal(f->refs, 4);
	/* full table: every page of it, Linux's 1024 descriptors */
	for (int i = 0; i < VFS_NFD; i++) {
		f->refs++;
		if (fd_install(t, f, 0, false) < 0) {
			f->refs--;
			break;
		}
	}
	for (int w = 0; w < VFS_NFD / 64; w++)
		assert_int_equal(t->used[w], ~0ull);
	assert_true(fdt_has_free(t, 0));
	assert_false(fdt_has_free(t, 1));
	assert_ptr_equal(fd_file(t, VFS_NFD - 1), f);
	/* a fork copies every page; a close anywhere frees that number */
	c = fdt_dup(t);
	assert_non_null(c);
	assert_int_equal(fd_close(c, 700), 0);
	assert_null(fd_file(c, 700));
	assert_ptr_equal(fd_file(t, 700), f);
	f->refs++;
	assert_int_equal(fd_install(c, f, 0, false), 700);
	assert_int_equal(fd_dup2(c, 3, 1023, true), 1023);
	assert_true(fd_cloexec(c, 1023));
	fdt_close_on_exec(c);
	assert_null(fd_file(c, 1023));
	assert_true(fdt_has_free(c, 1));
	fdt_put(c);
	f->refs++;
	assert_int_equal(fd_install(t, f, 0, false), -EMFILE);
	f->refs--;
	assert_int_equal(fd_install(t, f, VFS_NFD, false), -EINVAL);
	fdt_put(t);
	assert_int_equal(live_allocs, allocs);
}

static void test_exec_and_exe(void **state)
{
	struct fdtable *t = fdt_new();
	struct inode *prog = lookup("/bin/prog");
	const u8 *data;
	u64 size;

	(void)state;
	assert_int_equal(vfs_exec_node(prog, &data, &size), 0);
	assert_ptr_equal(data, prog->data);
	assert_int_equal(size, sizeof(big));
	assert_int_equal(vfs_exec_node(lookup("/bin"), &data, &size),
			 -EACCES);
	assert_null(t->exe);
	fdt_close_on_exec(t);
	assert_ptr_equal(t->exe, prog);
	/* the exe survives its unlink while the process runs */
	struct fdtable *c = fdt_dup(t);

	assert_ptr_equal(c->exe, prog);
	assert_int_equal(prog->refs, 2);
	fdt_put(c);
	fdt_put(t);
	assert_int_equal(prog->refs, 0);
}

static void test_pipe(void **state)
{
	long allocs = live_allocs;
	static u8 in[70000], out[70000];
	struct file *r, *w;
	struct pipe *p;

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (u8)(i * 31 + 7);
	assert_int_equal(pipe_create(&r, &w, VO_NONBLOCK), 0);
	assert_int_equal(r->flags, VO_RDONLY | VO_NONBLOCK);
	p = r->ino->pipe;
	assert_int_equal(pipe_read(p, out, 10), -EAGAIN);
	assert_int_equal(pipe_write(p, in, 0), 0);
	assert_int_equal(pipe_write(p, in, 5), 5);
	assert_int_equal(pages, 1);	/* allocated on use */
	assert_int_equal(pipe_read(p, out, 100), 5);
	assert_memory_equal(out, in, 5);
	/* fill: a big write takes what fits */
	assert_int_equal(pipe_write(p, in, sizeof(in)), VFS_PIPE_SIZE);
	assert_int_equal(pipe_write(p, in, 1), -EAGAIN);
	assert_int_equal(pipe_read(p, out, 50000), 50000);
	assert_memory_equal(out, in, 50000);
	/* small writes are atomic: all or nothing */
	assert_int_equal(pipe_write(p, in, 4096), 4096);
	u64 saved = p->count;

	p->count = VFS_PIPE_SIZE - 3000;	/* pretend: 3000 bytes of room */
	assert_int_equal(pipe_write(p, in, 4000), -EAGAIN);
	p->count = saved;
	/* wrap around the ring */
	assert_int_equal(pipe_write(p, in + VFS_PIPE_SIZE, 4464), 4464);
	assert_int_equal(pipe_read(p, out, sizeof(out)), 15536 + 4096 + 4464);
	assert_memory_equal(out, in + 50000, 15536);
	assert_memory_equal(out + 15536, in, 4096);
	assert_memory_equal(out + 15536 + 4096, in + VFS_PIPE_SIZE, 4464);
	assert_int_equal(p->count, 0);
	assert_int_equal(p->head, 0);
	/* faults */
	assert_int_equal(pipe_write(p, bad_user, 10), -EFAULT);
	assert_int_equal(pipe_write(p, in, 10), 10);
	assert_int_equal(pipe_read(p, bad_user, 10), -EFAULT);
	assert_int_equal(p->count, 10);
	/* EOF only after the data, once the writers are gone */
	long w0 = wakes;

	file_put(w);
	assert_int_equal(wakes, w0 + 2);	/* readers and pollers */
	assert_int_equal(vfs_poll_mask(r), VPOLLIN | VPOLLRDNORM | VPOLLHUP);
	assert_int_equal(pipe_read(p, out, 100), 10);
	assert_int_equal(pipe_read(p, out, 100), 0);
	file_put(r);
	assert_int_equal(pages, 0);
	assert_int_equal(live_allocs, allocs);

	/* EPIPE once the readers are gone; shared ends via dup */
	assert_int_equal(pipe_create(&r, &w, 0), 0);
	p = r->ino->pipe;
	assert_int_equal(vfs_poll_mask(r), 0);
	assert_int_equal(vfs_poll_mask(w), VPOLLOUT | VPOLLWRNORM);
	assert_int_equal(pipe_write(p, in, 1), 1);
	assert_int_equal(vfs_poll_mask(r), VPOLLIN | VPOLLRDNORM);
	assert_int_equal(pipe_read(p, out, 1), 1);
	r->refs++;
	file_put(r);
	assert_int_equal(p->readers, 1);
	file_put(r);
	assert_int_equal(pipe_write(p, in, 1), -EPIPE);
	assert_int_equal(vfs_poll_mask(w), VPOLLOUT | VPOLLWRNORM | VPOLLERR);
	file_put(w);
	assert_int_equal(live_allocs, allocs);
}

static void test_dev_files(void **state)
{
	struct file *f;
	u8 buf[5000];
	int err;

	(void)state;
	f = open_path("/dev/zero", VO_RDWR, &err);
	assert_non_null(f);
	memset(buf, 1, sizeof(buf));
	assert_int_equal(rd(f, buf, sizeof(buf)), sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(wr(f, buf, 7), 7);
	file_put(f);
	f = open_path("/dev/null", VO_RDWR | VO_CREAT | VO_TRUNC, &err);
	assert_non_null(f);
	assert_int_equal(rd(f, buf, 10), 0);
	assert_int_equal(wr(f, buf, 10), 10);
	file_put(f);
	struct nameres nr;

	assert_int_equal(vfs_resolve(vfs_root(), "/dev/null", &nr), 0);
	assert_int_equal(vfs_unlink(&nr, false), -EPERM);
	assert_non_null(lookup("/dev/null"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_in_place),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_file_io),
		cmocka_unit_test(test_initramfs_copy_on_write),
		cmocka_unit_test(test_store_back),
		cmocka_unit_test(test_big_file),
		cmocka_unit_test(test_mkdir_rmdir),
		cmocka_unit_test(test_getdents),
		cmocka_unit_test(test_rename_and_path),
		cmocka_unit_test(test_hard_links),
		cmocka_unit_test(test_symlinks),
		cmocka_unit_test(test_fdtable),
		cmocka_unit_test(test_exec_and_exe),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_dev_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
