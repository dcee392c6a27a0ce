// SPDX-License-Identifier: MIT
/*
 * insnlen FILE ADDR: decode the raw code in FILE, loaded at ADDR (hex),
 * one instruction after another with x86_insn_decode(), and print the
 * address of each, as objdump -d lists them.  A byte that does not decode
 * is skipped as one (objdump's "(bad)").  For check_insn_lengths.sh.
 */
#include <stdio.h>
#include <stdlib.h>

#include "x86_insn.h"

int main(int argc, char **argv)
{
	unsigned long base;
	unsigned char *buf;
	size_t cap = 1 << 20, n = 0, i = 0, got;
	FILE *f;

	if (argc != 3 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: insnlen FILE ADDR\n");
		return 2;
	}
	base = strtoul(argv[2], NULL, 16);
	buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf)
		return 1;
	while (i < n) {
		struct x86_insn in;

		printf("%lx\n", base + i);
		i += x86_insn_decode(buf + i, n - i, &in) ? 1 : in.len;
	}
	free(buf);
	return 0;
}
