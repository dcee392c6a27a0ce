// SPDX-License-Identifier: MIT
/* Process management's view of the file layer (vfs.h). */
#include "kernel.h"
#include "vfs.h"
#include "vfs_glue.h"

struct fdtable *fdt_first(void)
{
	return fdt_create_console();
}

struct fdtable *fdt_fork(struct fdtable *f, bool share)
{
	if (share) {
		f->refs++;
		return f;
	}
	return fdt_dup(f);
}

void fdt_release(struct fdtable *f)
{
	if (f)
		fdt_put(f);
}

void fdt_exec(struct fdtable *f)
{
	fdt_close_on_exec(f);
}

/* What exec.c loads from: an executable found by one of the lookups. */
static int exec_file(const char *path, int err, const u8 *data, u64 size,
		     struct cpio_file *out)
{
	if (err)
		return err;
	out->name = path;
	out->data = data;
	out->size = size;
	out->mode = 0100755;
	return 0;
}

int exec_lookup(const char *path, const char *cwd, struct cpio_file *out)
{
	const u8 *data = NULL;
	u64 size = 0;
	int err = vfs_exec_lookup(path, cwd, &data, &size);

	return exec_file(path, err, data, size, out);
}

struct inode *exec_interp_node(const char *path)
{
	return vfs_lookup_abs(path);
}

int exec_lookup_interp(const char *path, struct cpio_file *out)
{
	const u8 *data = NULL;
	u64 size = 0;
	int err = vfs_interp_lookup(path, &data, &size);

	return exec_file(path, err, data, size, out);
}
