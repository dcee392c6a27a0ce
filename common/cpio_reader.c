// SPDX-License-Identifier: MIT
#include "cpio_newc.h"
#include "cpio_reader.h"

static int hex8(const uint8_t *p, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 8; i++) {
		uint8_t c = p[i];

		if (c >= '0' && c <= '9')
			c -= '0';
		else if (c >= 'a' && c <= 'f')
			c -= 'a' - 10;
		else if (c >= 'A' && c <= 'F')
			c -= 'A' - 10;
		else
			return -1;
		v = v << 4 | c;
	}
	*out = v;
	return 0;
}

static uint64_t align4(uint64_t v)
{
	return (v + 3) & ~3ull;
}

int cpio_parse(const uint8_t *buf, uint64_t len, cpio_cb cb, void *arg)
{
	static const uint8_t magic[] = CPIO_NEWC_MAGIC;
	uint64_t off = 0;

	while (len - off >= CPIO_NEWC_HDR_SIZE) {
		const uint8_t *h = buf + off;
		uint32_t mode, size, namesize;
		struct cpio_file f;
		uint64_t name, data;

		for (int i = 0; i < CPIO_NEWC_MAGIC_LEN; i++)
			if (h[i] != magic[i])
				return -1;
		if (hex8(h + 14, &mode) || hex8(h + 54, &size) ||
		    hex8(h + 94, &namesize) || namesize == 0)
			return -1;
		name = off + CPIO_NEWC_HDR_SIZE;
		if (namesize > len - name)
			return -1;
		/* The name must be NUL-terminated inside its field. */
		if (buf[name + namesize - 1] != 0)
			return -1;
		data = align4(name + namesize);
		if (data > len || size > len - data)
			return -1;
		f.name = (const char *)buf + name;
		f.data = buf + data;
		f.size = size;
		f.mode = mode;
		if (namesize == 11) {
			const char *t = CPIO_NEWC_TRAILER;
			int i = 0;

			while (i < 11 && f.name[i] == t[i])
				i++;
			if (i == 11)
				return 0;
		}
		if (!cb(&f, arg))
			return 0;
		off = align4(data + size);
		if (off > len)
			return -1;
	}
	return -1;
}
