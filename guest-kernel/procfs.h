/* SPDX-License-Identifier: MIT */
/*
 * /proc and /sys: the few files performance tools read (PAPI 7, libpfm4,
 * glibc's CPU count), made up at open time from what the guest really is.
 *
 * Nothing is kept in the tree: a path under /proc or /sys is matched
 * against a table (procfs_find), and a file's text is generated into a
 * buffer when it is opened (procfs_text).  procfs.c holds both and
 * includes only vfs.h, so the host unit test builds it with VFS_HOST;
 * procfs_glue.c (kernel only) gathers the facts and answers the system
 * calls.
 */
#ifndef KERNEL_PROCFS_H
#define KERNEL_PROCFS_H

#include "vfs.h"

enum procfs_type { PROCFS_DIR = 1, PROCFS_REG, PROCFS_LNK };

/* What a path names: its type, its generator, the number in it. */
struct procfs_node {
	u8 type;			/* enum procfs_type */
	u8 gen;				/* PG_* in procfs.c */
	u8 cached;			/* the same text for the whole boot */
	u8 sys;				/* under /sys: st_size 4096, as sysfs */
	u8 maps;			/* its text needs procfs_proc.maps */
	u8 pid;				/* num is a pid: the caller checks it */
	u32 num;			/* the cpu, node or pid in the path */
	u32 id;				/* table index: the inode number */
};

/* CPUID as user code sees it; the kernel fills it (procfs_glue.c). */
struct procfs_cpu {
	u32 ncpus;
	u64 tsc_khz;
	u32 l0[4], l1[4], l7[4], la[4];	/* eax ebx ecx edx */
	u32 x0[4], x1[4], x8[4];	/* 0x80000000, 01, 08 */
	u32 brand[12];			/* 0x80000002..4 */
};

/* A mapping of the process, for /proc/PID/maps. */
struct procfs_map {
	u64 start, end;
	u32 prot;			/* PROT_READ 1, WRITE 2, EXEC 4 */
	const char *path;		/* a mapped file's, else NULL */
	u64 off, ino;			/* its offset at start, its inode */
};

/* The process that asks. */
struct procfs_proc {
	int pid, ppid, nthreads;
	const char *comm;
	const char *exe;		/* "" when it has none */
	u64 exe_ino;			/* its inode number: maps shows it */
	u64 brk_start, brk;
	const struct procfs_map *maps;	/* sorted by start */
	u32 nmaps;
};

/* Is path under /proc or /sys?  Cheap: called for every path. */
static inline bool procfs_path(const char *p)
{
	return p[0] == '/' &&
	       ((p[1] == 'p' && p[2] == 'r' && p[3] == 'o' && p[4] == 'c' &&
		 (p[5] == '/' || !p[5])) ||
		(p[1] == 's' && p[2] == 'y' && p[3] == 's' &&
		 (p[4] == '/' || !p[4])));
}

/* The node an absolute path under /proc or /sys names, or -ENOENT;
 * "self" is pid. */
int procfs_find(const char *path, u32 ncpus, int pid,
		struct procfs_node *out);
/* The text of a PROCFS_REG (or the target of a PROCFS_LNK) into buf:
 * its length, which may be more than cap (then call again, bigger). */
u64 procfs_text(const struct procfs_node *n, const struct procfs_cpu *cpu,
		const struct procfs_proc *proc, char *buf, u64 cap);

#ifndef VFS_HOST
/* procfs_glue.c: the system calls' side, for a path procfs_path() took. */
int procfs_open(const char *path, u32 flags, struct file **out);
int procfs_stat(const char *path, bool follow, struct linux_stat *st);
int procfs_access(const char *path, u32 mode);
s64 procfs_readlink(const char *path, char *buf, u64 size);
#endif

#endif
