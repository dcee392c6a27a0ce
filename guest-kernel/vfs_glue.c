// SPDX-License-Identifier: MIT
/*
 * Minimal file layer until the in-memory filesystem lands: descriptors 0-2
 * are the console in every process, and programs are looked up in the
 * initramfs.
 */
#include "kernel.h"
#include "mm.h"
#include "vfs_glue.h"

extern struct pv_boot_params *boot_params;

struct fdtable {
	int refs;
};

struct fdtable *fdt_first(void)
{
	struct fdtable *f = kmalloc(sizeof(*f));

	if (f)
		f->refs = 1;
	return f;
}

struct fdtable *fdt_fork(struct fdtable *f, bool share)
{
	if (share) {
		f->refs++;
		return f;
	}
	return fdt_first();
}

void fdt_release(struct fdtable *f)
{
	if (f && --f->refs == 0)
		kfree(f);
}

void fdt_exec(struct fdtable *f)
{
	(void)f;
}

struct lookup {
	const char *path;
	struct cpio_file *out;
	bool found;
};

static bool lookup_cb(const struct cpio_file *f, void *arg)
{
	struct lookup *l = arg;

	if (strcmp(f->name, l->path))
		return true;
	*l->out = *f;
	l->found = true;
	return false;
}

int exec_lookup(const char *path, const char *cwd, struct cpio_file *out)
{
	struct lookup l = { path, out, false };

	(void)cwd;
	while (*l.path == '/')
		l.path++;
	if (cpio_parse(P2V(boot_params->initrd_phys), boot_params->initrd_size,
		       lookup_cb, &l) || !l.found)
		return -ENOENT;
	if ((out->mode & 0170000) != 0100000)
		return -EACCES;
	return 0;
}
