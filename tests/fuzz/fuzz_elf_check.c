// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the VMM's ELF checks (vmm/core/elf_check.c) on arbitrary
 * bytes.  Both run before anything is loaded, on a file the user names, so
 * any input must give 0 or a one-line message, never a crash or a read
 * outside the buffer.  The input is copied to an exact-size heap block so
 * ASan sees every overread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_check.h"
#include "layout.h"

#define KMEM	(4u << 20)

static uint8_t *kmem;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_kernel_info info;
	char err[256];
	uint8_t *buf = malloc(size ? size : 1);

	if (!kmem)
		kmem = malloc(KMEM);
	memcpy(buf, data, size);
	err[0] = 0;
	if (elf_check_program(buf, size, err, sizeof(err)) != 0) {
		/* A rejection always says why, on one line. */
		if (!err[0] || strchr(err, '\n'))
			abort();
	} else {
		char interp[256];

		/* An accepted interpreter path is absolute and terminated. */
		if (elf_program_interp(buf, size, interp, sizeof(interp)) == 1 &&
		    (interp[0] != '/' || !memchr(interp, 0, sizeof(interp))))
			abort();
	}
	err[0] = 0;
	if (elf_load_kernel(buf, size, kmem, KMEM, &info, err,
			    sizeof(err)) == 0) {
		/* What was loaded lies inside guest memory, entry included. */
		if (info.phys_end > KMEM || info.entry < PV_KERNEL_BASE)
			abort();
	} else if (!err[0] || strchr(err, '\n')) {
		abort();
	}
	free(buf);
	return 0;
}
