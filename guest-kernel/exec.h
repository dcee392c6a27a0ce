/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_EXEC_H
#define KERNEL_EXEC_H

#include "kernel.h"
#include "mm.h"

#define EXEC_MAX_ARGS	256

struct exec_result {
	u64 entry;
	u64 sp;
};

int exec_load(struct mm *mm, const struct cpio_file *f, int argc,
	      const char *const *argv, int envc, const char *const *envp,
	      struct exec_result *res);
u64 exec_hwcap(void);
void exec_frame_init(struct trapframe *tf, const struct exec_result *res);

#endif
