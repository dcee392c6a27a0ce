// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the VMM's handler of host-directory requests
 * (vmm/core/share.c, share_io.c), the code a hostile guest kernel talks
 * to with PV_HC_FS.  Each input is a run of requests whose every field
 * (operation, handles, offsets, lengths, buffer addresses, names) comes
 * from the fuzzer, against two real shares in a temporary directory: one
 * read-only, one read-write, holding files, a subdirectory, a FIFO and
 * symbolic links that point out of the share.  Next to the shares lies
 * "outside/secret".  Whatever the requests, the handler must answer
 * -errno or a result, never touch memory but the fake guest's, never
 * put the secret's bytes in guest memory, and never change anything
 * outside the read-write share.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "share.h"

#define MEM_SIZE	16384
#define USER_BASE	0x10000ull
#define KERNEL_BASE	0xffffffff80000000ull
#define SECRET		"SECRET-OUTSIDE-THE-SHARE"

static uint8_t mem[MEM_SIZE], shadow[MEM_SIZE];
static char root[64], rwdir[128];

/* Guest virtual addresses: user pages (4 KiB pieces, the last one
 * read-only) and a kernel direct map (contiguous). */
static uint8_t *fake_map(void *ctx, uint64_t va, uint64_t *len, bool write)
{
	uint64_t off, n;

	(void)ctx;
	if (va >= KERNEL_BASE) {
		off = va - KERNEL_BASE;
		if (off >= MEM_SIZE || *len > MEM_SIZE - off)
			return NULL;
		return mem + off;
	}
	if (va < USER_BASE || va - USER_BASE >= MEM_SIZE)
		return NULL;
	off = va - USER_BASE;
	if (write && off >= MEM_SIZE - 4096)
		return NULL;
	n = 4096 - (off & 4095);
	if (*len > n)
		*len = n;
	return mem + off;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		abort();
	close(fd);
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level)
		remove(p);
	return 0;
}

/* The read-write share as it was: its contents removed and made again. */
static void rw_reset(void)
{
	char p[256];

	nftw(rwdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(p, sizeof(p), "%s/sub", rwdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/file", rwdir);
	put(p, "rw file\n");
	snprintf(p, sizeof(p), "%s/up", rwdir);
	symlink("../outside/secret", p);
	snprintf(p, sizeof(p), "%s/abs", rwdir);
	symlink(root, p);
}

static void setup(void)
{
	char p[256];

	snprintf(root, sizeof(root), "/tmp/fuzz_share.XXXXXX");
	if (!mkdtemp(root))
		abort();
	snprintf(p, sizeof(p), "%s/outside", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/outside/secret", root);
	put(p, SECRET "\n");
	snprintf(p, sizeof(p), "%s/ro", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/ro/sub", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/ro/a", root);
	put(p, "read-only file\n");
	snprintf(p, sizeof(p), "%s/ro/fifo", root);
	mkfifo(p, 0644);
	snprintf(p, sizeof(p), "%s/ro/out", root);
	symlink("../outside/secret", p);
	snprintf(p, sizeof(p), "%s/ro/sub/abs", root);
	snprintf(rwdir, sizeof(rwdir), "%s/outside/secret", root);
	symlink(rwdir, p);
	snprintf(rwdir, sizeof(rwdir), "%s/rw", root);
	mkdir(rwdir, 0755);
}

static int rm_all(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

/* The temporary tree goes at exit (a crash leaves it for a look). */
static void cleanup(void)
{
	nftw(root, rm_all, 16, FTW_DEPTH | FTW_PHYS);
}

static void outside_check(void)
{
	char p[256], buf[64] = "";
	int fd, n;

	snprintf(p, sizeof(p), "%s/outside/secret", root);
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : (int)read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n != (int)strlen(SECRET) + 1 || strncmp(buf, SECRET, 24)) {
		fprintf(stderr, "outside/secret changed\n");
		abort();
	}
}

static uint64_t pick_addr(struct input *in)
{
	uint64_t r = take(in, 2);

	switch (take(in, 1) % 6) {
	case 0: return USER_BASE + r % MEM_SIZE;
	case 1: return KERNEL_BASE + r % MEM_SIZE;
	case 2: return USER_BASE + MEM_SIZE - (r & 63);	/* straddles */
	case 3: return ~0ull - (r & 255);		/* wraps */
	case 4: return take(in, 8);
	default: return KERNEL_BASE + MEM_SIZE - (r & 63);
	}
}

static uint64_t pick_len(struct input *in)
{
	switch (take(in, 1) % 5) {
	case 0: return take(in, 1);
	case 1: return take(in, 2);
	case 2: return ~0ull - take(in, 1);
	case 3: return PV_FS_IO_MAX + take(in, 1);
	default: return take(in, 8);
	}
}

/* A name: bytes from the input into guest memory, or a raw address. */
static void pick_name(struct input *in, uint64_t *va, uint32_t *len)
{
	static const char *const common[] = {
		"a", "sub", "file", "fifo", "out", "up", "abs", "..", ".",
		"new", "x/y", "", "file\0x",
	};
	uint32_t sel = take(in, 1), off = 1024 * (take(in, 1) % 8);

	if (sel < 200) {
		const char *c = common[sel % 13];
		uint32_t n = sel % 13 == 12 ? 6 : strlen(c);

		memcpy(mem + off, c, n);
		*va = KERNEL_BASE + off;
		*len = n;
	} else if (sel < 240) {
		uint32_t n = take(in, 1);

		for (uint32_t i = 0; i < n; i++)
			mem[off + i] = take(in, 1);
		*va = KERNEL_BASE + off;
		*len = n;
	} else {
		*va = pick_addr(in);
		*len = take(in, 4);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct share_table *t;
	struct input in = { data, size };
	struct share_mem m = { NULL, fake_map };

	if (!t) {
		static struct vmm_config cfg;
		static char rodir[128];
		char err[256];

		setup();
		atexit(cleanup);
		snprintf(rodir, sizeof(rodir), "%s/ro", root);
		cfg.ndirs = 2;
		cfg.dirs[0] = (struct vmm_dir){ rodir, "/ro", false };
		cfg.dirs[1] = (struct vmm_dir){ rwdir, "/rw", true };
		cfg.cwd = "/rw/sub";
		rw_reset();
		t = share_table_open(&cfg, err, sizeof(err));
		if (!t) {
			fprintf(stderr, "share_table_open: %s\n", err);
			abort();
		}
	}
	rw_reset();
	for (int i = 0; i < 32 && in.left; i++) {
		struct pv_fs_req req;
		bool writes;

		memset(&req, 0, sizeof(req));
		req.op = take(&in, 1) % (PV_FS_NR + 2);
		req.handle = take(&in, 1) % 24;
		req.handle2 = take(&in, 1) % 24;
		req.flags = take(&in, 4);
		if (take(&in, 1) & 1)	/* plausible modes, often */
			req.flags = (req.flags & 1 ? 0040000 : 0100000) | 0644;
		req.off = take(&in, 1) & 1 ? take(&in, 2) : take(&in, 8);
		req.buf = pick_addr(&in);
		req.len = pick_len(&in);
		pick_name(&in, &req.name, &req.name_len);
		pick_name(&in, &req.name2, &req.name2_len);
		/* Only these write guest memory; only bytes the handler
		 * wrote count (names are input, and may hold anything). */
		writes = req.op == PV_FS_READ || req.op == PV_FS_READDIR ||
			 req.op == PV_FS_READLINK || req.op == PV_FS_MOUNT ||
			 req.op == PV_FS_CWD;
		if (writes)
			memcpy(shadow, mem, sizeof(mem));
		share_request(t, &req, &m);
		if (writes && memmem(mem, sizeof(mem), SECRET, strlen(SECRET)) &&
		    !memmem(shadow, sizeof(shadow), SECRET, strlen(SECRET))) {
			fprintf(stderr, "the secret outside reached the guest\n");
			abort();
		}
	}
	/* Handles made by this input go, but the shares' roots stay. */
	for (uint32_t h = 1; h < 256; h++) {
		struct pv_fs_req req = { .op = PV_FS_CLOSE, .handle = h };

		share_request(t, &req, &m);
	}
	outside_check();
	return 0;
}
