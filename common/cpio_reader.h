/* SPDX-License-Identifier: MIT */
/*
 * newc cpio reader.  Self-contained (no kernel headers) so that the same
 * file is fuzzed on the host.
 */
#ifndef COMMON_CPIO_READER_H
#define COMMON_CPIO_READER_H

#include <stdbool.h>
#include <stdint.h>

struct cpio_file {
	const char *name;		/* NUL-terminated, inside the archive */
	const uint8_t *data;
	uint64_t size;
	uint32_t mode;
};

/* Return false from the callback to stop early. */
typedef bool (*cpio_cb)(const struct cpio_file *f, void *arg);

/* 0 at the trailer, -1 for a malformed archive. */
int cpio_parse(const uint8_t *buf, uint64_t len, cpio_cb cb, void *arg);

#endif
