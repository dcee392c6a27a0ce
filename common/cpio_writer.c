// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpio_newc.h"
#include "cpio_writer.h"

static int cpio_reserve(struct cpio_writer *c, size_t more)
{
	size_t cap = c->cap ? c->cap : 65536;
	uint8_t *p;

	if (more > SIZE_MAX / 2 - c->len)
		return -ENOMEM;
	while (cap < c->len + more)
		cap *= 2;
	if (cap == c->cap)
		return 0;
	p = realloc(c->data, cap);
	if (!p)
		return -ENOMEM;
	memset(p + c->cap, 0, cap - c->cap);
	c->data = p;
	c->cap = cap;
	return 0;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * Append one entry.  Regular files with data get a name field long enough
 * that their data starts on a CPIO_WRITER_ALIGN boundary.
 */
int cpio_writer_add(struct cpio_writer *c, const char *path, uint32_t mode,
		    const void *data, size_t size)
{
	size_t name_len = strlen(path) + 1;
	size_t name_field = name_len;
	size_t data_off, end;
	char hdr[CPIO_NEWC_HDR_SIZE + 1];
	int err;

	if (size > 0xffffffffu || name_len > 4096)
		return -EINVAL;
	if (size) {
		data_off = align_up(c->len + CPIO_NEWC_HDR_SIZE + name_len,
				    CPIO_WRITER_ALIGN);
		name_field = data_off - c->len - CPIO_NEWC_HDR_SIZE;
	}
	data_off = align_up(c->len + CPIO_NEWC_HDR_SIZE + name_field, 4);
	end = align_up(data_off + size, 4);
	err = cpio_reserve(c, end - c->len);
	if (err)
		return err;

	snprintf(hdr, sizeof(hdr),
		 CPIO_NEWC_MAGIC "%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
		 ++c->next_ino, mode, 0u, 0u, (mode & 0040000) ? 2u : 1u, 0u,
		 size, 0u, 0u, 0u, 0u, name_field, 0u);
	memcpy(c->data + c->len, hdr, CPIO_NEWC_HDR_SIZE);
	memcpy(c->data + c->len + CPIO_NEWC_HDR_SIZE, path, name_len);
	if (size)
		memcpy(c->data + data_off, data, size);
	c->len = end;
	return 0;
}

int cpio_writer_finish(struct cpio_writer *c)
{
	return cpio_writer_add(c, CPIO_NEWC_TRAILER, 0, NULL, 0);
}

void cpio_writer_free(struct cpio_writer *c)
{
	free(c->data);
	memset(c, 0, sizeof(*c));
}
