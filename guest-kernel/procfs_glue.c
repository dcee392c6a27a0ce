// SPDX-License-Identifier: MIT
/*
 * /proc and /sys for the system calls (fs_syscalls.c, fs_attr.c): the
 * facts procfs.c writes about (CPUID, --cpus, the caller's mappings and
 * program) and the open, stat, access and readlink of its paths.
 *
 * An opened file is an inode outside the tree holding its text, freed at
 * the last close.  /proc/cpuinfo is the same all boot long and costs
 * thousands of emulated instructions to write, so its inode is made once
 * and kept.  Directories cannot be opened (-EACCES): nothing here lists
 * them, and glibc, PAPI and libpfm4 only test that they exist.
 */
#include "mm.h"
#include "procfs.h"
#include "task.h"

extern struct pv_boot_params *boot_params;

static struct procfs_cpu cpu_facts;
static bool cpu_known;
static struct inode *cpuinfo_ino;

static void cpuid(u32 leaf, u32 *r)
{
	__asm__ volatile("cpuid"
			 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(0));
}

/* The VMM's CPUID (KVM's, with the virtual PMU's leaf 0xA): what user
 * code, libpfm4 among it, reads too. */
static const struct procfs_cpu *cpu_get(void)
{
	struct procfs_cpu *c = &cpu_facts;

	if (cpu_known)
		return c;
	c->ncpus = boot_params->ncpus;
	c->tsc_khz = boot_params->tsc_khz;
	cpuid(0, c->l0);
	cpuid(1, c->l1);
	if (c->l0[0] >= 7)
		cpuid(7, c->l7);
	if (c->l0[0] >= 0xa)
		cpuid(0xa, c->la);
	cpuid(0x80000000, c->x0);
	if (c->x0[0] >= 0x80000001)
		cpuid(0x80000001, c->x1);
	if (c->x0[0] >= 0x80000004)
		for (u32 i = 0; i < 3; i++)
			cpuid(0x80000002 + i, c->brand + 4 * i);
	if (c->x0[0] >= 0x80000008)
		cpuid(0x80000008, c->x8);
	cpu_known = true;
	return c;
}

/* The node, and the process a /proc/PID path names (else the caller). */
static int find(const char *path, struct procfs_node *n, struct proc **p)
{
	struct proc *self = current_task()->proc;
	int err = procfs_find(path, boot_params->ncpus, self->pid, n);
	struct task *t;

	*p = self;
	if (err || !n->pid || n->num == (u32)self->pid)
		return err;
	/* A process's first thread has its pid for tid. */
	t = task_find(n->num);
	if (!t || t->proc->pid != (int)n->num || t->proc->zombie ||
	    !t->proc->fdt)
		return -ENOENT;
	*p = t->proc;
	return 0;
}

/* The program's path; "" when it has none. */
static void exe_path(struct proc *p, char *buf, u64 size)
{
	struct inode *exe = p->fdt->exe;

	if (!exe || vfs_path(exe, buf, size) < 0)
		buf[0] = 0;
}

/*
 * The paths of the files p has mapped (mm->files), one after another in a
 * new buffer, and in paths[i] where entry i's starts (NULL: none, as for a
 * removed file).  *cap 0: nothing to free.
 */
static char *file_paths(struct mm *mm, const char **paths, u64 *cap)
{
	char tmp[VFS_PATH_MAX], *buf;
	u64 need = 0, at = 0;

	*cap = 0;
	for (u32 i = 1; i < mm->nfiles; i++) {
		int len = mm->files[i].ino ?
			  vfs_path(mm->files[i].ino, tmp, sizeof(tmp)) : -1;

		need += len > 0 ? (u64)len + 1 : 0;
	}
	buf = need ? vfs_data_alloc(need, cap) : NULL;
	for (u32 i = 1; buf && i < mm->nfiles; i++) {
		int len = mm->files[i].ino ?
			  vfs_path(mm->files[i].ino, buf + at, need - at) : -1;

		paths[i] = len > 0 ? buf + at : NULL;
		at += len > 0 ? (u64)len + 1 : 0;
	}
	return buf;
}

static void maps_free(struct procfs_map *maps, bool big)
{
	if (big)
		huge_free(V2P(maps));
	else
		kfree(maps);
}

/* The text of n in a new inode outside the tree. */
static int make_file(const struct procfs_node *n, struct proc *p,
		     struct inode **out)
{
	struct procfs_map *maps = NULL;
	struct procfs_proc pr = { 0 };
	const char *paths[MM_FILES_MAX] = { 0 };
	char *names = NULL;
	bool big = false;
	char exe[VFS_PATH_MAX];
	struct inode *ino;
	u64 need, cap, names_cap = 0;
	u8 *data;

	exe_path(p, exe, sizeof(exe));
	pr.pid = p->pid;
	pr.ppid = p->parent ? p->parent->pid : 0;
	pr.nthreads = p->nthreads;
	pr.comm = p->comm;
	pr.exe = exe;
	pr.exe_ino = p->fdt->exe ? p->fdt->exe->ino : 0;
	pr.brk_start = p->mm->brk_start;
	pr.brk = p->mm->brk;
	if (n->maps) {
		/* A 2 MiB page past one page's worth (MM_VMA_BIG's list). */
		big = p->mm->nvma * sizeof(*maps) > 4000;
		if (big) {
			u64 pa = huge_alloc_zero();

			maps = pa ? P2V(pa) : NULL;
		} else {
			maps = kmalloc(p->mm->nvma * sizeof(*maps) + 1);
		}
		if (!maps)
			return -ENOMEM;
		names = file_paths(p->mm, paths, &names_cap);
		for (int i = 0; i < p->mm->nvma; i++) {
			const struct vma *v = &p->mm->vma[i];
			struct procfs_map *m = &maps[pr.nmaps];

			if (v->cached)
				continue;
			m->start = v->start;
			m->end = v->end;
			m->prot = v->prot;
			m->path = v->file ? paths[v->file] : NULL;
			if (m->path) {
				const struct mm_file *mf = &p->mm->files[v->file];

				m->off = v->start - mf->va_base;
				m->ino = mf->ino->ino;
			}
			pr.nmaps++;
		}
		pr.maps = maps;
	}
	need = procfs_text(n, cpu_get(), &pr, NULL, 0);
	data = vfs_data_alloc(need ? need : 1, &cap);
	ino = data ? inode_new(VS_IFREG | 0444, VN_REG) : NULL;
	if (!ino) {
		if (data)
			vfs_data_free(data, cap);
		maps_free(maps, big);
		if (names_cap)
			vfs_data_free(names, names_cap);
		return -ENOMEM;
	}
	procfs_text(n, cpu_get(), &pr, (char *)data, cap);
	maps_free(maps, big);
	if (names_cap)
		vfs_data_free(names, names_cap);
	ino->data = data;
	ino->cap = cap;
	ino->size = need;
	ino->data_owned = 1;
	ino->ino = 0x70000 + n->id;
	*out = ino;
	return 0;
}

int procfs_open(const char *path, u32 flags, struct file **out)
{
	struct procfs_node n;
	struct inode *ino;
	bool fresh = false;
	struct proc *p;
	struct file *f;
	int err = find(path, &n, &p);

	if (err)
		return err;
	if (n.type == PROCFS_LNK) {		/* /proc/PID/exe */
		if (!p->fdt->exe)
			return -ENOENT;
		if ((flags & VO_ACCMODE) != VO_RDONLY)
			return -ETXTBSY;
		ino = p->fdt->exe;
	} else if (n.type == PROCFS_DIR) {
		return -EACCES;
	} else if ((flags & VO_ACCMODE) != VO_RDONLY ||
		   (flags & (VO_CREAT | VO_TRUNC))) {
		return -EACCES;
	} else if (n.cached && cpuinfo_ino) {
		ino = cpuinfo_ino;
	} else {
		err = make_file(&n, p, &ino);
		if (err)
			return err;
		fresh = !n.cached;
		if (n.cached) {
			cpuinfo_ino = ino;
			ino->refs = 1;		/* kept for the boot */
		}
	}
	f = (flags & VO_DIRECTORY) ? NULL :
	    file_new(ino, VO_RDONLY | VO_LARGEFILE);
	if (!f) {
		if (fresh) {		/* no reference yet: this frees it */
			inode_get(ino);
			inode_put(ino);
		}
		return flags & VO_DIRECTORY ? -ENOTDIR : -ENOMEM;
	}
	*out = f;
	return 0;
}

/* stat (follow) or lstat of a path under /proc or /sys. */
int procfs_stat(const char *path, bool follow, struct linux_stat *st)
{
	struct procfs_node n;
	struct proc *p;
	int err = find(path, &n, &p);

	if (err)
		return err;
	if (n.type == PROCFS_LNK && follow) {
		if (!p->fdt->exe)
			return -ENOENT;
		vfs_stat(p->fdt->exe, st);
		return 0;
	}
	/* Every field assigned: an initialiser would be a memset hypercall. */
	st->dev = n.sys ? 0x15 : 0x16;
	st->ino = 0x70000 + n.id;
	st->nlink = n.type == PROCFS_DIR ? 2 : 1;
	st->mode = n.type == PROCFS_DIR ? VS_IFDIR | 0555 :
		   n.type == PROCFS_LNK ? 0120777 : VS_IFREG | 0444;
	st->uid = st->gid = st->pad0 = 0;
	st->rdev = 0;
	/* As Linux: proc files say 0 bytes, sysfs ones a page. */
	st->size = n.sys || n.type == PROCFS_DIR ? 4096 : 0;
	st->blksize = 4096;
	st->blocks = 0;
	st->atime = st->atime_ns = st->mtime = st->mtime_ns = 0;
	st->ctime = st->ctime_ns = 0;
	st->unused[0] = st->unused[1] = st->unused[2] = 0;
	return 0;
}

/* access(2): everyone is root; only X_OK asks for something. */
int procfs_access(const char *path, u32 mode)
{
	struct procfs_node n;
	struct proc *p;
	int err = find(path, &n, &p);

	if (err)
		return err;
	return (mode & 1) && n.type == PROCFS_REG ? -EACCES : 0;
}

/* readlink(2): /proc/PID/exe; anything else here is no link. */
s64 procfs_readlink(const char *path, char *buf, u64 size)
{
	struct procfs_node n;
	struct proc *p;
	int err = find(path, &n, &p);

	if (err)
		return err;
	if (n.type != PROCFS_LNK)
		return -EINVAL;
	exe_path(p, buf, size);
	return buf[0] ? (s64)strlen(buf) : -ENOENT;
}
