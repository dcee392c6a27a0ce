// SPDX-License-Identifier: MIT
/*
 * Constants the kernel's assembly uses but C defines, some as enum members
 * the assembler cannot read.  Never linked: gen_asm_consts.sh compiles this
 * file to assembly, where each CONST() is a marker line with the value the
 * compiler computed, and turns those lines into asm_consts.h.  A value
 * changed in C reaches the assembly at the next build.
 */
#include "hypercall.h"
#include "kernel.h"
#include "task.h"
#include "vfs.h"
#include "vpmu.h"

#define CONST(name, value) \
	__asm__ volatile(".ascii \"->" #name " %c0\"" : : "i"(value))

void asm_consts(void);

void asm_consts(void)
{
	CONST(EFAULT, EFAULT);
	CONST(PV_HC_MEMCPY, PV_HC_MEMCPY);
	CONST(PV_HC_PORT, PV_HC_PORT);
	CONST(PV_HC_YIELD, PV_HC_YIELD);
	CONST(SPIN_YIELD, SPIN_YIELD);
	CONST(PV_STEP_BLOCKS, PV_STEP_BLOCKS);
	/* file_leaf.S: the open file and its inode */
	CONST(VFS_FD_CHUNK_ASM, VFS_FD_CHUNK);
	CONST(VN_REG_ASM, VN_REG);
	CONST(PROC_FDT, offsetof(struct proc, fdt));
	CONST(FDT_FD, offsetof(struct fdtable, fd));
	CONST(FILE_INO, offsetof(struct file, ino));
	CONST(FILE_FLAGS, offsetof(struct file, flags));
	CONST(INODE_KIND, offsetof(struct inode, kind));
	CONST(INODE_HH, offsetof(struct inode, hh));
	CONST(INODE_DATA_OWNED, offsetof(struct inode, data_owned));
	CONST(INODE_SIZE, offsetof(struct inode, size));
	CONST(INODE_MTIME_TSC, offsetof(struct inode, mtime_tsc));
	CONST(INODE_DATA, offsetof(struct inode, data));
	CONST(INODE_CAP, offsetof(struct inode, cap));
}
