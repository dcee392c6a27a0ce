// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the VMM's cpio writer (common/cpio_writer.c) against
 * the guest kernel's parser (common/cpio_reader.c).  The input is a list
 * of entries (name, mode, data); whatever the writer accepts, the parser
 * must read back identically and in order, each regular file's data on a 4 KiB
 * boundary (the kernel maps those pages instead of copying them).
 *
 * Input format, repeated: 1 byte name length, name bytes, 4 bytes mode,
 * 2 bytes data length, data bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpio_writer.h"
#include "cpio_reader.h"

#define MAX_ENTRIES	64

struct entry {
	char name[256];
	uint32_t mode;
	const uint8_t *data;
	size_t size;
};

struct check {
	const struct entry *e;
	int n, seen;
	const uint8_t *base;
};

static bool visit(const struct cpio_file *f, void *arg)
{
	struct check *c = arg;
	const struct entry *e;

	if (c->seen >= c->n)
		abort();
	e = &c->e[c->seen++];
	if (strcmp(f->name, e->name) || f->mode != e->mode ||
	    f->size != e->size || memcmp(f->data, e->data, e->size))
		abort();
	if (f->size && (f->data - c->base) % CPIO_WRITER_ALIGN)
		abort();
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct entry ent[MAX_ENTRIES];
	struct cpio_writer c = { 0 };
	struct check chk = { .e = ent };
	size_t off = 0;
	int n = 0;

	while (n < MAX_ENTRIES && off < size) {
		struct entry *e = &ent[n];
		size_t nlen = data[off++];

		if (off + nlen + 6 > size)
			break;
		memcpy(e->name, data + off, nlen);
		e->name[nlen] = 0;
		off += nlen;
		memcpy(&e->mode, data + off, 4);
		e->size = data[off + 4] | (size_t)data[off + 5] << 8;
		off += 6;
		if (e->size > size - off)
			e->size = size - off;
		e->data = data + off;
		off += e->size;
		/*
		 * The writer takes C strings; the parser stops at the
		 * trailer name.  Neither is an entry the round trip can
		 * carry, so the writer's caller never passes them.
		 */
		if (!e->name[0] || !strcmp(e->name, "TRAILER!!!"))
			continue;
		if (cpio_writer_add(&c, e->name, e->mode, e->data, e->size))
			abort();
		/* What the writer stored is the name up to its first NUL. */
		n++;
	}
	if (cpio_writer_finish(&c))
		abort();
	chk.n = n;
	chk.base = c.data;
	if (cpio_parse(c.data, c.len, visit, &chk) != 0 || chk.seen != n)
		abort();
	/* Truncations of a valid archive are malformed, never a crash. */
	if (c.len > 8 && cpio_parse(c.data, c.len - 7, visit,
				    &(struct check){ .e = ent, .n = n,
						     .base = c.data }) == 0)
		abort();
	cpio_writer_free(&c);
	return 0;
}
