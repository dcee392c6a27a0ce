/* SPDX-License-Identifier: MIT */
/*
 * The guest kernel's file layer: an in-memory tree seeded from the
 * initramfs, open file descriptions, descriptor tables and pipes.
 *
 * vfs.c (the tree), vfs_file.c (file data, open files), vfs_fd.c
 * (descriptor tables) and pipe.c hold the logic and include only this
 * header, so the same files are built on the host (VFS_HOST) and
 * unit-tested there with plain pointers as "user" pointers.  The system
 * calls are the kernel-only half (fs_syscalls.h): opening, naming and the
 * memory hooks below in fs_syscalls.c, the data path with the console and
 * blocking in fs_rw.c, stat and attributes in fs_attr.c, descriptors,
 * pipes and poll in fs_fd.c.
 *
 * Cost model (docs/design.md section 1): every kernel instruction is
 * emulated, and an exit to the VMM (a hypercall) costs about as much as
 * a dozen of them.  So file data is never copied in a
 * loop (memcpy and copy_*_user are one hypercall from 64 bytes on), files
 * from the initramfs are read in place, and a file's contents stay
 * contiguous so that execve and mmap can use them directly.
 *
 * Locking: none here.  Every caller holds the big kernel lock (sched.h);
 * the only place that sleeps is the pipe loop in fs_rw.c, which holds
 * a reference on the file across the sleep.
 */
#ifndef KERNEL_VFS_H
#define KERNEL_VFS_H

#ifdef VFS_HOST
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
typedef int64_t s64;

struct waitq {
	void *head;
};

void wake_all(struct waitq *wq);
void *kmalloc(size_t n);		/* zeroed, like the kernel's */
void kfree(void *p);
long copy_from_user(void *dst, const void *usrc, size_t n);
long copy_to_user(void *udst, const void *src, size_t n);
s64 random_to_user(void *ubuf, u64 n);
#else
#include "kernel.h"
#include "mm.h"
#include "random.h"
#include "sched.h"
#endif

#include "cpio_reader.h"

/* errno values kernel.h does not have yet (Linux's numbers). */
#ifndef ENXIO
#define ENXIO 6
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EXDEV
#define EXDEV 18
#endif
#ifndef ETXTBSY
#define ETXTBSY 26
#endif
#ifndef EFBIG
#define EFBIG 27
#endif
#ifndef ENOSPC
#define ENOSPC 28
#endif
#ifndef ELOOP
#define ELOOP 40
#endif

/* open(2) flags, x86-64 values. */
#define VO_ACCMODE	03
#define VO_RDONLY	00
#define VO_WRONLY	01
#define VO_RDWR		02
#define VO_CREAT	0100
#define VO_EXCL		0200
#define VO_NOCTTY	0400
#define VO_TRUNC	01000
#define VO_APPEND	02000
#define VO_NONBLOCK	04000
#define VO_LARGEFILE	0100000
#define VO_DIRECTORY	0200000
#define VO_NOFOLLOW	0400000
#define VO_CLOEXEC	02000000
#define VO_PATH		010000000

/* st_mode */
#define VS_IFMT		0170000
#define VS_IFIFO	0010000
#define VS_IFCHR	0020000
#define VS_IFDIR	0040000
#define VS_IFREG	0100000
#define VS_IFLNK	0120000

#define VFS_NAME_MAX	255
#define VFS_PATH_MAX	1024		/* kernel stack buffers; Linux: 4096 */
#define VFS_NFD		1024		/* Linux's soft RLIMIT_NOFILE */
#define VFS_FD_CHUNK	256		/* descriptors per table page */
#define VFS_PIPE_SIZE	65536ull
#define VFS_PIPE_PAGES	(VFS_PIPE_SIZE / 4096)
#define VFS_PIPE_BUF	4096ull		/* writes up to this are atomic */
#define VFS_LINKS_MAX	40		/* symlinks in one walk: Linux's */

enum vnode_kind {
	VN_REG, VN_DIR, VN_CONSOLE, VN_NULL, VN_ZERO, VN_PIPE,
	VN_PERF,			/* perf_event_open: perf_event.c */
	VN_RANDOM,			/* /dev/urandom, /dev/random: random.c */
	VN_LINK,			/* a file's second name (link(2)) */
	VN_SYMLINK,			/* data: the target path, size bytes */
};

/*
 * One file or directory.  A node is also its first directory entry:
 * name, parent, place in the parent's child list and in the global name
 * hash.  Each further name of a file (a hard link) is a small VN_LINK
 * node naming it (target); the file's nlink counts its names, and it
 * lives while it has a name or a reference (its first name may go
 * first).  Console, pipe and device nodes may have no parent (not in the
 * tree).
 */
struct perf_event;

struct inode {
	struct inode *hnext, **hprev;	/* name hash chain */
	struct inode *sib, **sprev;	/* parent's child list, in order */
	struct inode *parent;		/* directories: ".."; self when gone */
	struct inode *child, **ctail;	/* directories */
	const char *name;		/* not NUL-terminated; may point */
	u32 nlen, hash;			/* into the initramfs */
	u32 mode;			/* S_IFMT | permissions */
	u32 nlink;			/* 0: removed from the tree */
	u32 refs;			/* open files (and /proc/self/exe) */
	u8 kind;			/* enum vnode_kind */
	u8 name_owned;			/* name was kmalloc'd */
	u8 data_owned;			/* data ours to write, grow and free */
	u8 hfd;				/* console: the VMM's fd 0, 1 or 2 */
	u32 hh;				/* host-backed (--dir): the VMM's
					 * handle (uapi/hostfs.h), else 0 */
	u8 mnt;				/* a --dir's GUEST: never removed */
	u8 data_shared;			/* data mapped in place (MAP_SHARED):
					 * never freed while n lives */
	u64 ino, rdev;
	u64 size;
	/* Modification time: the TSC of the guest's last change (the leaf
	 * pwrite stamps it too: file_leaf.S), else wall-clock ns (a host
	 * file's, or utimensat's); both 0: the epoch. */
	u64 mtime_tsc, mtime_ns;
	u8 *data;			/* contents, contiguous */
	const u8 *code_told;		/* the pinned data the VMM was told
					 * of (PV_HC_STEP_CODE) */
	u64 cap;			/* bytes allocated at data */
	struct pipe *pipe;
	struct perf_event *perf;	/* VN_PERF */
	struct inode *target;		/* VN_LINK: the file it names */
};

/* An open file description, shared by dup() and fork(). */
struct file {
	struct inode *ino;
	u64 pos;			/* directories: entry index */
	u32 refs;
	u32 flags;			/* VO_ACCMODE|VO_APPEND|VO_NONBLOCK.. */
};

/*
 * A process's descriptors; threads share one (refs).  The files sit in
 * pages of VFS_FD_CHUNK, allocated as descriptors reach them: kmalloc
 * gives at most a page, and most programs never pass the first, which
 * is always there (file_leaf.S reads it directly).
 */
struct fdtable {
	u32 refs;
	u32 umask;
	u64 used[VFS_NFD / 64];		/* bit per descriptor */
	u64 cloexec[VFS_NFD / 64];
	struct inode *exe;		/* /proc/self/exe */
	struct file **fd[VFS_NFD / VFS_FD_CHUNK];
};

struct pipe {
	u64 head, count;		/* ring: read offset, bytes held */
	u32 readers, writers;
	struct waitq rwait, wwait;	/* readers wait on rwait */
	u8 *page[VFS_PIPE_PAGES];	/* allocated on first use */
};

/* Result of walking a path (vfs_resolve). */
struct nameres {
	struct inode *dir;		/* directory holding the last name */
	struct inode *ino;		/* the node, NULL if it does not exist */
	struct inode *ent;		/* its entry: ino, or a link naming it */
	const char *name;		/* last component, not NUL-terminated */
	u32 len;
	bool slash;			/* path ended in '/' */
};

/* Linux x86-64 struct stat (144 bytes). */
struct linux_stat {
	u64 dev, ino, nlink;
	u32 mode, uid, gid, pad0;
	u64 rdev;
	s64 size, blksize, blocks;
	u64 atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
	s64 unused[3];
};

/* Hooks the environment provides (fs_syscalls.c, or the host test). */
void *vfs_data_alloc(u64 need, u64 *cap);	/* contiguous, >= need */
void vfs_data_free(void *p, u64 cap);
void *vfs_page_alloc(void);			/* 4 KiB */
void vfs_page_free(void *p);
u64 vfs_clock(void);				/* now, for mtime_tsc */
u64 vfs_clock_ns(u64 clock);			/* a vfs_clock(): wall ns */

/* vfs.c: the tree */
int vfs_core_init(u32 tty_mask);	/* bit n: the VMM's fd n is a tty */
int vfs_seed(const u8 *cpio, u64 size);
struct inode *vfs_root(void);
struct inode *vfs_console(int hfd);
struct inode *vfs_dev_lookup(const char *name);
/* follow: a symbolic link as the last name is followed, else it is the
 * result (lstat, unlink, O_NOFOLLOW); a link before it always is. */
int vfs_walk(struct inode *base, const char *path, bool follow,
	     struct nameres *nr);
static inline int vfs_resolve(struct inode *base, const char *path,
			      struct nameres *nr)
{
	return vfs_walk(base, path, true, nr);
}
int vfs_create(struct nameres *nr, u32 mode, u32 umask);
int vfs_symlink(struct nameres *nr, const char *target, u32 len);
int vfs_unlink(struct nameres *nr, bool dir);
int vfs_rename(struct nameres *from, struct nameres *to);
int vfs_link(struct nameres *from, struct nameres *to);
int vfs_path(struct inode *n, char *buf, u64 size);
void vfs_stat(struct inode *n, struct linux_stat *st);
struct inode *inode_new(u32 mode, u8 kind);	/* zeroed, refs 0 */
void inode_get(struct inode *n);
void inode_put(struct inode *n);

/* vfs_file.c: a file's data and open files */
int vfs_truncate(struct inode *n, u64 size);
void vfs_pin(struct inode *n);
int vfs_share_data(struct inode *n);
s64 vfs_read(struct file *f, void *ubuf, u64 len, u64 pos);
s64 vfs_write(struct file *f, const void *ubuf, u64 len, u64 pos);
/* Bytes of a shared mapping (kernel memory) back into n at pos, clipped
 * at its end: stores through a mapping never grow a file. */
s64 vfs_store_back(struct inode *n, const void *kbuf, u64 len, u64 pos);
s64 vfs_getdents(struct file *f, void *ubuf, u64 count);
s64 vfs_lseek(struct file *f, s64 off, int whence);
int vfs_open(struct nameres *nr, u32 flags, u32 mode, u32 umask,
	     struct file **out);
struct file *file_new(struct inode *n, u32 flags);
void file_put(struct file *f);

/* vfs_fd.c: descriptor tables */
struct fdtable *fdt_new(void);
struct fdtable *fdt_create_console(void);
struct fdtable *fdt_dup(struct fdtable *fdt);
void fdt_put(struct fdtable *fdt);
void fdt_close_on_exec(struct fdtable *fdt);
int vfs_exec_node(struct inode *n, const u8 **data, u64 *size);
int vfs_image_node(struct inode *n, const u8 **data, u64 *size);
int fd_install(struct fdtable *fdt, struct file *f, u32 min, bool cloexec);
int fd_close(struct fdtable *fdt, u32 fd);
int fd_dup2(struct fdtable *fdt, u32 oldfd, u32 newfd, bool cloexec);
bool fd_cloexec(const struct fdtable *fdt, u32 fd);
void fd_cloexec_set(struct fdtable *fdt, u32 fd, bool on);
bool fdt_has_free(const struct fdtable *fdt, int n);

static inline struct file *fd_file(struct fdtable *fdt, u64 fd)
{
	struct file **chunk;

	if (fd >= VFS_NFD)
		return NULL;
	chunk = fdt->fd[fd / VFS_FD_CHUNK];
	return chunk ? chunk[fd % VFS_FD_CHUNK] : NULL;
}

/*
 * Host directories (--dir, hostfs.c).  A node with hh is a host file or
 * directory: found on a miss in a host directory (vfs_resolve) and then
 * kept in the tree like any other; its data is the host file's, read and
 * written through the VMM at every call (data is only a copy made for
 * exec and mmap, vfs_host_load).  Built for the host test, the stubs
 * below are never reached: no node there has a handle.
 */
struct hostfs_attr {
	u32 hh, mode;
	u64 size, ino, mtime_ns;
};

#ifdef VFS_HOST
static inline int hostfs_stub(void)
{
	return -ENOSYS;
}
#define hostfs_lookup(d, n, l, a)		hostfs_stub()
#define hostfs_create(d, n, l, m, a)		hostfs_stub()
#define hostfs_unlink(d, n, l, dir)		hostfs_stub()
#define hostfs_rename(d, n, l, d2, n2, l2)	hostfs_stub()
#define hostfs_rw(h, va, len, off, wr)		hostfs_stub()
#define hostfs_readdir(h, cookie, ubuf, len)	hostfs_stub()
#define hostfs_truncate(h, size)		hostfs_stub()
#define hostfs_open(h, wr)			hostfs_stub()
#define hostfs_close(h)				((void)(h))
#define vfs_host_load(n)			((void)(n), 0)
#else
int hostfs_lookup(u32 dirh, const char *name, u32 len, struct hostfs_attr *a);
int hostfs_create(u32 dirh, const char *name, u32 len, u32 mode,
		  struct hostfs_attr *a);
int hostfs_unlink(u32 dirh, const char *name, u32 len, bool dir);
int hostfs_rename(u32 dirh, const char *name, u32 len, u32 dirh2,
		  const char *name2, u32 len2);
s64 hostfs_rw(u32 h, u64 va, u64 len, u64 off, bool wr);
s64 hostfs_readdir(u32 h, u64 *cookie, void *ubuf, u64 len);
int hostfs_truncate(u32 h, u64 size);
int hostfs_open(u32 h, bool wr);
void hostfs_close(u32 h);
int hostfs_fsync(u32 h);
s64 hostfs_readlink(u32 dirh, const char *name, u32 len, u64 ubuf, u64 size);
int hostfs_mount_all(void);
void hostfs_initial_cwd(char *cwd, u64 size);
/* A host file's copy in file memory, for exec and mmap. */
int vfs_host_load(struct inode *n);
#endif
/* vfs.c: a host node made in dir from a; GUEST of a share made. */
struct inode *vfs_host_node(struct inode *dir, const char *name, u32 len,
			    u32 h, const struct hostfs_attr *a);
int vfs_mount_host(const char *path, const struct hostfs_attr *a);

/* pipe.c: buffer logic; never blocks (fs_rw.c waits) */
int pipe_create(struct file **rd, struct file **wr, u32 flags);
s64 pipe_read(struct pipe *p, void *ubuf, u64 len);
s64 pipe_write(struct pipe *p, const void *ubuf, u64 len);
void pipe_release(struct inode *n, u32 flags);
u32 vfs_poll_mask(struct file *f);
extern struct waitq vfs_poll_wq;

#define VPOLLIN		0x001
#define VPOLLPRI	0x002
#define VPOLLOUT	0x004
#define VPOLLERR	0x008
#define VPOLLHUP	0x010
#define VPOLLNVAL	0x020
#define VPOLLRDNORM	0x040
#define VPOLLWRNORM	0x100

/*
 * fs_syscalls.c: what the rest of the kernel calls.
 *
 * Boot: vfs_init(), then proc->fdt = fdt_create_console() for init.
 * fork: child->fdt = fdt_dup(parent->fdt) (threads share the pointer).
 * execve: vfs_exec_lookup() for the image, then after the point of no
 * return fdt_close_on_exec() (it also records /proc/self/exe).
 * exit: fdt_put() when the last thread of the process is gone.
 */
int vfs_init(const u8 *initrd, u64 size);
int vfs_exec_lookup(const char *path, const char *cwd, const u8 **data,
		    u64 *size);
int vfs_interp_lookup(const char *path, const u8 **data, u64 *size);
struct inode *vfs_lookup_abs(const char *path);
int vfs_fd_mmap_source(int fd, u64 off, u64 *phys, u64 *len);

#ifndef VFS_HOST
/* perf_event.c: the VN_PERF file operations */
s64 perf_event_read(struct perf_event *e, u64 ubuf, u64 len);
s64 perf_event_ioctl(struct perf_event *e, u64 cmd, u64 arg);
void perf_event_release(struct perf_event *e);
/* -ENOSYS: not a perf command, fcntl goes on */
s64 perf_event_fcntl(struct perf_event *e, int fd, u64 cmd, u64 arg);
#endif

#ifndef VFS_HOST
/* System calls, Linux x86-64 numbers; the kernel's table signature. */
#define VFS_SYSCALL(name) \
	s64 sys_##name(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
VFS_SYSCALL(read);		/* 0 */
VFS_SYSCALL(write);		/* 1 */
VFS_SYSCALL(open);		/* 2 */
VFS_SYSCALL(close);		/* 3 */
VFS_SYSCALL(stat);		/* 4 */
VFS_SYSCALL(fstat);		/* 5 */
VFS_SYSCALL(lstat);		/* 6 */
VFS_SYSCALL(lseek);		/* 8 */
VFS_SYSCALL(poll);		/* 7 */
VFS_SYSCALL(ioctl);		/* 16 */
VFS_SYSCALL(pread64);		/* 17 */
VFS_SYSCALL(pwrite64);		/* 18 */
VFS_SYSCALL(readv);		/* 19 */
VFS_SYSCALL(writev);		/* 20 */
VFS_SYSCALL(access);		/* 21 */
VFS_SYSCALL(pipe);		/* 22 */
VFS_SYSCALL(dup);		/* 32 */
VFS_SYSCALL(dup2);		/* 33 */
VFS_SYSCALL(fcntl);		/* 72 */
VFS_SYSCALL(fsync);		/* 74, also fdatasync 75 */
VFS_SYSCALL(truncate);		/* 76 */
VFS_SYSCALL(ftruncate);		/* 77 */
VFS_SYSCALL(getcwd);		/* 79 */
VFS_SYSCALL(chdir);		/* 80 */
VFS_SYSCALL(fchdir);		/* 81 */
VFS_SYSCALL(rename);		/* 82 */
VFS_SYSCALL(mkdir);		/* 83 */
VFS_SYSCALL(rmdir);		/* 84 */
VFS_SYSCALL(creat);		/* 85 */
VFS_SYSCALL(unlink);		/* 87 */
VFS_SYSCALL(readlink);		/* 89 */
VFS_SYSCALL(umask);		/* 95 */
VFS_SYSCALL(getdents64);	/* 217 */
VFS_SYSCALL(openat);		/* 257 */
VFS_SYSCALL(mkdirat);		/* 258 */
VFS_SYSCALL(newfstatat);	/* 262 */
VFS_SYSCALL(unlinkat);		/* 263 */
VFS_SYSCALL(renameat);		/* 264 */
VFS_SYSCALL(readlinkat);	/* 267 */
VFS_SYSCALL(faccessat);		/* 269 */
VFS_SYSCALL(ppoll);		/* 271 */
VFS_SYSCALL(dup3);		/* 292 */
VFS_SYSCALL(pipe2);		/* 293 */
VFS_SYSCALL(renameat2);		/* 316 */
VFS_SYSCALL(statx);		/* 332 */
VFS_SYSCALL(sendfile);		/* 40 */
VFS_SYSCALL(link);		/* 86 */
VFS_SYSCALL(symlink);		/* 88 */
VFS_SYSCALL(chmod);		/* 90 */
VFS_SYSCALL(fchmod);		/* 91 */
VFS_SYSCALL(chown);		/* 92 */
VFS_SYSCALL(lchown);		/* 94 */
VFS_SYSCALL(fchown);		/* 93 */
VFS_SYSCALL(utime);		/* 132 */
VFS_SYSCALL(utimes);		/* 235 */
VFS_SYSCALL(fchownat);		/* 260 */
VFS_SYSCALL(linkat);		/* 265 */
VFS_SYSCALL(symlinkat);		/* 266 */
VFS_SYSCALL(fchmodat);		/* 268 */
VFS_SYSCALL(utimensat);		/* 280 */
VFS_SYSCALL(faccessat2);	/* 439: above today's NR_MAX (335) */
#undef VFS_SYSCALL
#endif

#endif
