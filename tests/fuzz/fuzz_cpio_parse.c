// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the guest kernel's newc cpio parser
 * (common/cpio_reader.c) on arbitrary bytes, built for the host.  The
 * initramfs is written by the VMM, but the parser is the kernel's first
 * contact with it, and `--kernel` lets anyone pair kernels and VMMs: it
 * must return 0 or -1 and hand the callback only names and data inside
 * the buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpio_reader.h"

struct span {
	const uint8_t *lo, *hi;
	unsigned int n;
};

static bool visit(const struct cpio_file *f, void *arg)
{
	struct span *s = arg;
	size_t nlen = strlen(f->name);	/* ASan: must end inside the buffer */

	if ((const uint8_t *)f->name < s->lo ||
	    (const uint8_t *)f->name + nlen >= s->hi ||
	    f->data < s->lo || f->data > s->hi ||
	    f->size > (uint64_t)(s->hi - f->data))
		abort();
	/* Touch the first and last byte of the data. */
	if (f->size && (f->data[0] ^ f->data[f->size - 1]) == 0x100)
		abort();
	return ++s->n < 4096;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct span s;
	int r;

	memcpy(buf, data, size);
	s.lo = buf;
	s.hi = buf + size;
	s.n = 0;
	r = cpio_parse(buf, size, visit, &s);
	if (r != 0 && r != -1)
		abort();
	free(buf);
	return 0;
}
