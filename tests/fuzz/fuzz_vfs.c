// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the guest kernel's file layer (guest-kernel/vfs.c,
 * vfs_file.c, vfs_fd.c, pipe.c) built for the host with -DVFS_HOST,
 * centred on the path
 * resolver.  Paths come straight from guest programs (open, mkdir, rename,
 * unlink, chdir...), so any bytes must resolve or fail with -errno, and the
 * tree must stay consistent whatever sequence of creates, renames, removes,
 * writes and truncates a program performs.
 *
 * The input is a script: one operation byte, then NUL-terminated paths.
 * Every input starts from a fresh tree seeded from a small archive; all
 * kernel allocations of an input are tracked and released at its end, so
 * the kernel's own lifetime rules (a removed directory stays alive while a
 * file holds it) are what ASan checks within an input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpio_writer.h"			/* the VMM's writer */
#include "../../guest-kernel/vfs.h"

/* ---- host shims with a per-input arena ---- */

struct blk {
	struct blk *next, **prev;
	size_t size;
	long pad;
	unsigned char data[];
};

static struct blk *blocks;

static void *arena_alloc(size_t n, size_t align)
{
	struct blk *b;
	size_t hdr = align > sizeof(*b) ? align : sizeof(*b);
	void *raw;

	if (posix_memalign(&raw, align < 16 ? 16 : align, hdr + n))
		return NULL;
	b = (struct blk *)((char *)raw + hdr - sizeof(*b));
	b->pad = (long)((char *)b - (char *)raw);
	b->size = n;
	b->next = blocks;
	b->prev = &blocks;
	if (blocks)
		blocks->prev = &b->next;
	blocks = b;
	return b->data;
}

static void arena_free(void *p)
{
	struct blk *b;

	if (!p)
		return;
	b = (struct blk *)((char *)p - sizeof(*b));
	*b->prev = b->next;
	if (b->next)
		b->next->prev = b->prev;
	free((char *)b - b->pad);
}

static void arena_reset(void)
{
	while (blocks)
		arena_free(blocks->data);
}

void *kmalloc(size_t n)
{
	void *p = arena_alloc(n ? n : 1, 16);

	return p ? memset(p, 0, n) : NULL;
}

void kfree(void *p)
{
	arena_free(p);
}

long copy_from_user(void *dst, const void *usrc, size_t n)
{
	memcpy(dst, usrc, n);
	return 0;
}

long copy_to_user(void *udst, const void *src, size_t n)
{
	memcpy(udst, src, n);
	return 0;
}

/* /dev/urandom: random.c's bytes are the host's; any will do here. */
s64 random_to_user(void *ubuf, u64 n)
{
	memset(ubuf, 0x5a, n);
	return (s64)n;
}

/* Bounded like guest memory, so huge truncates fail with -ENOMEM/-EFBIG. */
void *vfs_data_alloc(u64 need, u64 *cap)
{
	void *p;

	if (need > (1u << 20))
		return NULL;
	*cap = (need + 4095) & ~4095ull;
	p = arena_alloc(*cap, 4096);
	/* Garbage, as the kernel's page allocator gives. */
	return p ? memset(p, 0xa5, *cap) : NULL;
}

void vfs_data_free(void *p, u64 cap)
{
	(void)cap;
	arena_free(p);
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
	return arena_alloc(4096, 4096);
}

void vfs_page_free(void *p)
{
	arena_free(p);
}

void wake_all(struct waitq *wq)
{
	(void)wq;
}

/* ---- the script ---- */

static struct cpio_writer arc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static uint8_t prog[5000];

	(void)argc;
	(void)argv;
	if (cpio_writer_add(&arc, ".", 040755, NULL, 0) ||
	    cpio_writer_add(&arc, "bin", 040755, NULL, 0) ||
	    cpio_writer_add(&arc, "bin/prog", 0100755, prog, sizeof(prog)) ||
	    cpio_writer_add(&arc, "etc/motd", 0100644, "hello\n", 6) ||
	    cpio_writer_add(&arc, "a/b/c/deep", 0100600, "x", 1) ||
	    cpio_writer_add(&arc, "empty", 0100644, NULL, 0) ||
	    cpio_writer_finish(&arc))
		abort();
	return 0;
}

struct input {
	const uint8_t *p;
	size_t left;
};

/* The next path: up to a NUL or the end, copied so ASan bounds it. */
static char *take_path(struct input *in, char *buf, size_t cap)
{
	size_t n = 0;

	while (in->left && n < cap - 1) {
		char c = *in->p++;

		in->left--;
		if (!c)
			break;
		buf[n++] = c;
	}
	buf[n] = 0;
	return buf;
}

/* Resolve and check what came back. */
static int resolve(struct inode *base, const char *path, struct nameres *nr)
{
	int err = vfs_resolve(base, path, nr);

	if (err > 0 || err < -4095)
		abort();
	if (!err) {
		if (nr->len > VFS_NAME_MAX || !nr->name)
			abort();
		if (nr->ino && nr->ino->kind > VN_PIPE)
			abort();
	}
	return err;
}

#define NFILES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct file *files[NFILES] = { 0 };
	struct inode *cwd;
	char p1[VFS_PATH_MAX + 8], p2[VFS_PATH_MAX + 8];
	static uint8_t buf[8192];
	unsigned int steps = 0;

	if (vfs_core_init(1u << 1) || vfs_seed(arc.data, arc.len))
		abort();
	cwd = vfs_root();
	while (in.left && steps++ < 512) {
		uint8_t op = *in.p++;
		struct file **fp = &files[op >> 6];
		struct nameres a, b;
		int err;

		in.left--;
		switch (op & 15) {
		case 0:
			resolve(cwd, take_path(&in, p1, sizeof(p1)), &a);
			break;
		case 1:
		case 2:
			if (!resolve(cwd, take_path(&in, p1, sizeof(p1)), &a))
				vfs_create(&a, (op & 1) ? 0100644 : 040755,
					   022);
			break;
		case 3:
			if (!resolve(cwd, take_path(&in, p1, sizeof(p1)), &a))
				vfs_unlink(&a, op & 16);
			break;
		case 4:
			take_path(&in, p1, sizeof(p1));
			take_path(&in, p2, sizeof(p2));
			if (!resolve(cwd, p1, &a) && !resolve(cwd, p2, &b))
				vfs_rename(&a, &b);
			break;
		case 5: {
			static const u32 fl[] = {
				VO_RDONLY, VO_RDWR | VO_CREAT,
				VO_WRONLY | VO_TRUNC, VO_RDWR | VO_APPEND,
				VO_RDONLY | VO_DIRECTORY,
				VO_RDWR | VO_CREAT | VO_EXCL,
				VO_PATH, VO_WRONLY | VO_CREAT | VO_DIRECTORY,
			};
			struct file *f = NULL;

			if (resolve(cwd, take_path(&in, p1, sizeof(p1)), &a))
				break;
			err = vfs_open(&a, fl[(op >> 4) & 7], 0644, 022, &f);
			if (!err) {
				if (*fp && cwd == (*fp)->ino)
					cwd = vfs_root();
				if (*fp)
					file_put(*fp);
				*fp = f;
			}
			break;
		}
		case 6:
			if (*fp) {
				u64 len = in.left ? *in.p * 37 % sizeof(buf) : 0;
				s64 r = vfs_write(*fp, buf, len, (*fp)->pos);

				if (r > 0)
					(*fp)->pos += r;
			}
			break;
		case 7:
			if (*fp) {
				s64 r = vfs_read(*fp, buf, sizeof(buf),
						 (*fp)->pos);

				if (r > (s64)sizeof(buf))
					abort();
				if (r > 0)
					(*fp)->pos += r;
			}
			break;
		case 8:
			if (*fp) {
				s64 r = vfs_getdents(*fp, buf,
						     in.left ? *in.p * 8 : 64);

				if (r > (s64)(in.left ? *in.p * 8 : 64))
					abort();
			}
			break;
		case 9:
			if (*fp && in.left >= 4) {
				s64 off;

				memcpy(&off, in.p, 4);
				vfs_lseek(*fp, (int32_t)off, in.p[3] % 4);
			}
			break;
		case 10:
			if (*fp && in.left >= 3)
				vfs_truncate((*fp)->ino,
					     in.p[0] | in.p[1] << 8 |
					     (u64)in.p[2] << 24);
			break;
		case 11:
			if (*fp) {
				u64 sz = in.left ? *in.p : 0;

				memset(p2, 0x5a, sz + 1);
				if (!vfs_path((*fp)->ino, p2, sz) &&
				    strnlen(p2, sz) == sz)
					abort();
			}
			break;
		case 12:
			/* chdir: the base of relative paths is an open dir */
			if (*fp && (*fp)->ino->kind == VN_DIR)
				cwd = (*fp)->ino;
			else
				cwd = vfs_root();
			break;
		case 13:
			if (*fp) {
				struct linux_stat st;

				vfs_stat((*fp)->ino, &st);
			}
			break;
		default:
			if (*fp) {
				if (cwd == (*fp)->ino)
					cwd = vfs_root();
				file_put(*fp);
				*fp = NULL;
			}
			break;
		}
	}
	arena_reset();
	return 0;
}
