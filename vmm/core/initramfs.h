/* SPDX-License-Identifier: MIT */
#ifndef VMM_INITRAMFS_H
#define VMM_INITRAMFS_H

#include <stddef.h>

#include "config.h"
#include "cpio_writer.h"

/* Read a whole host file; 0 or -1 with a one-line message in err. */
int file_read_all(const char *path, void **buf, size_t *len,
		  char *err, size_t errlen);

/* PROGRAM as /bin/BASENAME plus the --file extras, as a newc archive. */
int initramfs_build(const struct vmm_config *cfg, const void *prog,
		    size_t prog_len, struct cpio_writer *out,
		    char *err, size_t errlen);

#endif
