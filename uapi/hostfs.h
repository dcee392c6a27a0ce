/* SPDX-License-Identifier: MIT */
/*
 * Host directories in the guest (`vmm run --dir HOST:GUEST[:ro|:rw]`): the
 * guest kernel's requests to the VMM, one PV_HC_FS hypercall each, with
 * the guest-physical address of a struct pv_fs_req in rdi.
 *
 * A handle names one host file or directory the VMM has resolved beneath
 * a share's directory (vmm/core/share.c); handle 0 is never valid.  Names
 * are single path components (no '/', not "." or ".."), given by kernel
 * virtual address.  Buffers ("buf") are guest virtual addresses: the
 * kernel's direct map, or user memory under the current CR3, which the
 * VMM fills or reads in place, so a read of any size is one exit
 * (docs/design.md section 1: an exit costs a dozen emulated instructions,
 * a kernel copy loop far more).  Every field is untrusted: a bad one is
 * -errno in the result, never a VMM fault.
 */
#ifndef PV_UAPI_HOSTFS_H
#define PV_UAPI_HOSTFS_H

#include <stdint.h>

enum pv_fs_op {
	PV_FS_MOUNT = 0,	/* handle = share index: its guest path to buf
				 * (len), root handle and stat -> path length,
				 * -ENOENT past the last share */
	PV_FS_CWD = 1,		/* --cwd to buf (len) -> length, 0 if none */
	PV_FS_LOOKUP = 2,	/* (handle dir, name) -> out: handle, stat;
				 * symbolic links followed inside the share */
	PV_FS_READ = 3,		/* (handle, off, buf, len) -> bytes */
	PV_FS_WRITE = 4,	/* (handle, off, buf, len) -> bytes */
	PV_FS_READDIR = 5,	/* (handle, off = cookie, buf, len) -> bytes of
				 * linux_dirent64 records; off = next cookie */
	PV_FS_CREATE = 6,	/* (handle dir, name, flags = mode: S_IFREG or
				 * S_IFDIR | perm) -> out: handle, stat; the
				 * name must not exist */
	PV_FS_UNLINK = 7,	/* (handle dir, name, flags PV_FS_RMDIR) */
	PV_FS_RENAME = 8,	/* (handle dir, name, handle2 dir, name2,
				 * flags PV_FS_NOREPLACE) */
	PV_FS_TRUNCATE = 9,	/* (handle, off = size) */
	PV_FS_FSYNC = 10,	/* (handle): fsync(2) of the host file */
	PV_FS_READLINK = 11,	/* (handle dir, name, buf, len) -> bytes */
	PV_FS_CLOSE = 12,	/* (handle) */
	PV_FS_OPEN = 13,	/* (handle, flags PV_FS_FOR_WRITE): check access,
				 * -EROFS on a read-only share */
	PV_FS_NR
};

#define PV_FS_RMDIR		1u	/* UNLINK: rmdir */
#define PV_FS_NOREPLACE		1u	/* RENAME */
#define PV_FS_FOR_WRITE		1u	/* OPEN: for writing */

#define PV_FS_MAX_SHARES	16
#define PV_FS_NAME_MAX		255
#define PV_FS_IO_MAX		0x7ffff000ull	/* Linux's MAX_RW_COUNT */
/* Writes and truncation end here (-EFBIG), as the in-memory tree's files
 * do (guest-kernel/vfs_file.c): no guest makes a host file of petabytes. */
#define PV_FS_FILE_MAX		(1ull << 40)

struct pv_fs_req {
	uint32_t op;		/* enum pv_fs_op */
	uint32_t handle;
	uint32_t handle2;
	uint32_t flags;
	uint64_t off;
	uint64_t buf;		/* guest virtual address */
	uint64_t len;
	uint64_t name;		/* kernel virtual address */
	uint64_t name2;
	uint32_t name_len;
	uint32_t name2_len;
	/* out: LOOKUP, CREATE, MOUNT */
	uint32_t out_handle;
	uint32_t mode;		/* st_mode: S_IFREG or S_IFDIR | perm */
	uint64_t size;
	uint64_t ino;
	uint64_t mtime_ns;
};

_Static_assert(sizeof(struct pv_fs_req) == 96, "pv_fs_req layout");

#endif
