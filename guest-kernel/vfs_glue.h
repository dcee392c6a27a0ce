/* SPDX-License-Identifier: MIT */
/*
 * What process management needs from the file layer: descriptor tables
 * that follow fork/exec/exit, and program lookup for execve.
 */
#ifndef KERNEL_VFS_GLUE_H
#define KERNEL_VFS_GLUE_H

#include "kernel.h"

struct fdtable;

struct fdtable *fdt_first(void);		/* fds 0-2: the console */
struct fdtable *fdt_fork(struct fdtable *f, bool share);
void fdt_release(struct fdtable *f);
void fdt_exec(struct fdtable *f);		/* close-on-exec */
int exec_lookup(const char *path, const char *cwd, struct cpio_file *out);
int exec_lookup_interp(const char *path, struct cpio_file *out);
/* The interpreter's file, to name its pages in /proc/PID/maps; NULL if
 * it is gone. */
struct inode *exec_interp_node(const char *path);

#endif
