/* SPDX-License-Identifier: MIT */
#ifndef COMMON_CPIO_WRITER_H
#define COMMON_CPIO_WRITER_H

#include <stddef.h>
#include <stdint.h>

/*
 * A cpio "newc" archive writer.  File data is placed on 4 KiB boundaries
 * (relative to the archive start) by padding the name field with NULs, which
 * every newc reader accepts: the guest kernel then maps file pages instead of
 * copying them (copies run emulated at ~4 M instructions/s).
 */
struct cpio_writer {
	uint8_t *data;
	size_t len;
	size_t cap;
	uint32_t next_ino;
};

#define CPIO_WRITER_ALIGN	4096

int cpio_writer_add(struct cpio_writer *c, const char *path, uint32_t mode,
		    const void *data, size_t size);
int cpio_writer_finish(struct cpio_writer *c);
void cpio_writer_free(struct cpio_writer *c);

#endif
