/* SPDX-License-Identifier: MIT */
/*
 * Host directories in the guest (`--dir HOST:GUEST[:ro|:rw]`): the VMM's
 * side of uapi/share.h.  A table of handles, each an O_PATH descriptor of
 * one file or directory found beneath a share's directory; every request
 * names a handle and at most one path component, so the host kernel does
 * every resolution, confined (openat2 RESOLVE_IN_ROOT, no magic links, no
 * mount crossings) to the share.  Nothing here knows about KVM: guest
 * memory comes through struct share_mem, which the hypercall handler and
 * the fuzz target (tests/fuzz/fuzz_share.c) each provide.
 */
#ifndef VMM_SHARE_H
#define VMM_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "hostfs.h"

struct share_table;

/* Guest memory as the request handler sees it. */
struct share_mem {
	void *ctx;
	/*
	 * Host address of guest virtual address va for up to *len bytes,
	 * *len shortened to what is contiguous there (one user page, or the
	 * rest of RAM for the kernel's direct map); NULL when va is not
	 * mapped (writable, when write).
	 */
	uint8_t *(*map)(void *ctx, uint64_t va, uint64_t *len, bool write);
};

/*
 * Open the shares of cfg->dirs (and remember cfg->cwd): NULL with a
 * one-line message in err when a HOST cannot be used, or when there is
 * nothing to share (*err is then "").
 */
struct share_table *share_table_open(const struct vmm_config *cfg, char *err,
				     size_t errlen);
void share_table_close(struct share_table *t);
bool share_path_exists(const struct vmm_config *cfg, const char *path);

/* One request: its result (>= 0, or -errno); *req's out fields filled. */
int64_t share_request(struct share_table *t, struct pv_fs_req *req,
		      const struct share_mem *mem);

/* share_io.c: the requests that move file data or directory records. */
struct share_node {
	int fd;			/* O_PATH, or rfd once open; -1: free */
	int rfd, wfd;		/* opened on first read / write, or -1 */
	uint8_t share;		/* index in the table's shares */
	bool dir;
	bool root;		/* a share's directory: never closed */
};

int64_t share_read(struct share_node *n, struct pv_fs_req *req,
		   const struct share_mem *mem);
int64_t share_write(struct share_node *n, struct pv_fs_req *req,
		    const struct share_mem *mem);
int64_t share_readdir(struct share_node *n, struct pv_fs_req *req,
		      const struct share_mem *mem);
int share_reopen(struct share_node *n, int flags);
/* Copy bytes between host memory and the guest: 0 or -EFAULT. */
int share_mem_copy(const struct share_mem *mem, uint64_t va, void *host,
		   uint64_t len, bool to_guest);

#endif
