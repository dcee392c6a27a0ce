// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the guest kernel's /proc and /sys paths
 * (guest-kernel/procfs.c).  Paths come straight from guest programs, so any
 * bytes must match a node or fail with -ENOENT, and a node's text, asked
 * for with any buffer size, must stay inside the buffer and have the same
 * length every time.
 *
 * The input: a byte choosing a prefix (none, "/proc/", or
 * "/sys/devices/system/cpu/": a fuzzer finds the rest sooner from there),
 * the path up to a NUL, then the CPU count and CPUID registers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "../../guest-kernel/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct procfs_map maps[] = {
		{ .start = 0x400000, .end = 0x401000, .prot = 5 },
		{ .start = 0x600000, .end = 0x800000, .prot = 3 },
		{ .start = 0x7f0000000000, .end = 0x7f0000010000, .prot = 5,
		  .path = "/lib/libc.so.6", .off = 0x1000, .ino = 9 },
		{ .start = 0x7fffff800000, .end = 0x800000000000, .prot = 3 },
	};
	struct procfs_proc p = {
		.pid = 7, .ppid = 1, .nthreads = 2, .comm = "fuzz",
		.exe = "/bin/fuzz", .exe_ino = 3, .brk_start = 0x600000,
		.brk = 0x800000, .maps = maps, .nmaps = 4,
	};
	static const char *const prefix[] = {
		"", "/proc/", "/sys/devices/system/cpu/",
	};
	struct procfs_cpu c = { 0 };
	struct procfs_node n;
	struct input in;
	char path[256], *buf;
	const uint8_t *end;
	u64 len, cap;

	if (!size)
		return 0;
	strcpy(path, prefix[data[0] % 3]);
	end = memchr(data + 1, 0, size - 1);
	len = (end ? (size_t)(end - data) : size) - 1;
	if (len > sizeof(path) - 1 - strlen(path))
		len = sizeof(path) - 1 - strlen(path);
	strncat(path, (const char *)data + 1, len);
	in.p = data + 1 + len + (end != NULL);
	in.left = size - 1 - len - (end != NULL);
	c.ncpus = take(&in, 4) % 65;	/* PV_MAX_CPUS */
	if (!c.ncpus)
		c.ncpus = 1;
	c.tsc_khz = take(&in, 4);
	c.l0[0] = take(&in, 4);
	c.l1[0] = take(&in, 4);
	c.l1[2] = take(&in, 4);
	c.l1[3] = take(&in, 4);
	c.l7[1] = take(&in, 4);
	c.la[0] = take(&in, 4);
	c.x0[0] = take(&in, 4);
	c.x1[2] = take(&in, 4);
	c.x8[0] = take(&in, 4);
	for (int i = 0; i < 4; i++)
		c.brand[i] = take(&in, 4);
	if (!procfs_path(path) || procfs_find(path, c.ncpus, p.pid, &n))
		return 0;
	len = procfs_text(&n, &c, &p, NULL, 0);
	/* Too small, exact, and roomy: the same length, never past cap. */
	for (cap = len / 2; cap <= len + 1; cap += len / 2 + 1) {
		buf = malloc(cap ? cap : 1);
		if (procfs_text(&n, &c, &p, buf, cap) != len)
			abort();
		free(buf);
	}
	return 0;
}
