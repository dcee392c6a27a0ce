// SPDX-License-Identifier: MIT
/*
 * Host directories in the guest: shares, handles and the requests that
 * name things (uapi/hostfs.h).  share_io.c moves the data.
 *
 * Confinement.  The guest never hands the host a path: only a handle and
 * one component, checked here (no '/', no NUL, not "." or "..").  A name
 * is looked up with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV) from the share's directory, so symbolic links are
 * followed as if the share were "/" (an absolute link, or one with too
 * many "..", stays inside it), /proc-style magic links and mount points
 * are refused, and a link swapped in after any earlier check is resolved
 * the same confined way.  Everything else (create, unlink, rename, mkdir,
 * readlink) acts on one component relative to an O_PATH descriptor of
 * its directory and never follows a link in the last component.  Only
 * regular files and directories get handles: device, FIFO and socket
 * files are -EACCES.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "share.h"

#define SHARE_MAX_NODES		65536	/* handles; each holds 1-3 fds */
#define SHARE_PATH_MAX		4096

struct share {
	int rootfd;			/* O_PATH of HOST */
	bool rw;
	uint32_t root;			/* its handle */
	char guest[256];
	char real[SHARE_PATH_MAX];	/* HOST as /proc/self/fd names it */
};

struct share_table {
	pthread_mutex_t lock;		/* vCPUs may ask at once */
	int nshares;
	struct share shares[VMM_MAX_DIRS];
	char cwd[256];
	struct share_node *nodes;	/* [0] unused: handle 0 is invalid */
	uint32_t nnodes, hint;
};

static uint32_t node_alloc(struct share_table *t, int fd, uint8_t share,
			   bool dir)
{
	uint32_t i = t->hint > 1 ? t->hint : 1;

	while (i < t->nnodes && t->nodes[i].fd >= 0)
		i++;
	if (i >= t->nnodes) {
		uint32_t cap = t->nnodes ? t->nnodes * 2 : 64;
		struct share_node *p;

		if (t->nnodes >= SHARE_MAX_NODES)
			return 0;
		p = realloc(t->nodes, cap * sizeof(*p));
		if (!p)
			return 0;
		for (uint32_t j = t->nnodes; j < cap; j++)
			p[j] = (struct share_node){ .fd = -1, .rfd = -1,
						    .wfd = -1 };
		t->nodes = p;
		t->nnodes = cap;
	}
	t->nodes[i] = (struct share_node){ .fd = fd, .rfd = -1, .wfd = -1,
					   .share = share, .dir = dir };
	t->hint = i + 1;
	return i;
}

static struct share_node *node_get(struct share_table *t, uint32_t h)
{
	if (!h || h >= t->nnodes || t->nodes[h].fd < 0)
		return NULL;
	return &t->nodes[h];
}

static void node_free(struct share_table *t, uint32_t h)
{
	struct share_node *n = &t->nodes[h];

	/* rfd and wfd may be fd itself (share_reopen, do_create) */
	if (n->wfd >= 0 && n->wfd != n->fd)
		close(n->wfd);
	if (n->rfd >= 0 && n->rfd != n->fd)
		close(n->rfd);
	close(n->fd);
	*n = (struct share_node){ .fd = -1, .rfd = -1, .wfd = -1 };
	if (h < t->hint)
		t->hint = h;
}

/* The stat fields of a request from fd; -EACCES for special files. */
static int stat_fill(int fd, struct pv_fs_req *req)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return -EACCES;
	req->mode = st.st_mode;
	req->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	req->ino = st.st_ino;
	req->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
			(uint64_t)st.st_mtim.tv_nsec;
	return 0;
}

/* A new handle for fd (stat already in req), or -ENFILE. */
static int64_t node_out(struct share_table *t, int fd, uint8_t share,
			struct pv_fs_req *req)
{
	uint32_t h = node_alloc(t, fd, share, S_ISDIR(req->mode));

	if (!h) {
		close(fd);
		return -ENFILE;
	}
	req->out_handle = h;
	return 0;
}

static int sys_openat2(int dirfd, const char *path, uint64_t flags,
		       uint64_t resolve)
{
	struct open_how how = { .flags = flags, .resolve = resolve };

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

#define SHARE_RESOLVE	(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | \
			 RESOLVE_NO_XDEV)

/* The component at req->name/name_len (or name2) into buf: 0 or -errno. */
static int name_get(const struct share_mem *mem, uint64_t va, uint32_t len,
		    char buf[PV_FS_NAME_MAX + 1])
{
	if (!len)
		return -ENOENT;
	if (len > PV_FS_NAME_MAX)
		return -ENAMETOOLONG;
	if (share_mem_copy(mem, va, buf, len, false))
		return -EFAULT;
	buf[len] = 0;
	if (memchr(buf, '/', len) || memchr(buf, 0, len) ||
	    !strcmp(buf, ".") || !strcmp(buf, ".."))
		return -EINVAL;
	return 0;
}

/* Where dir is beneath its share's directory, as "" or "a/b/". */
static int dir_relpath(struct share_table *t, struct share_node *d,
		       char *out, size_t size)
{
	const char *real = t->shares[d->share].real;
	char proc[64], path[SHARE_PATH_MAX];
	size_t rl = strlen(real);
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", d->fd);
	n = readlink(proc, path, sizeof(path) - 1);
	if (n < 0)
		return -EIO;
	path[n] = 0;
	if (!strcmp(path, real)) {
		out[0] = 0;
		return 0;
	}
	/* "/" as HOST: every path is beneath it. */
	if (rl == 1)
		rl = 0;
	if (strncmp(path, real, rl) || path[rl] != '/')
		return -EXDEV;	/* moved out of the share on the host */
	if ((size_t)snprintf(out, size, "%s/", path + rl + 1) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int64_t do_lookup(struct share_table *t, struct share_node *d,
			 const char *name, struct pv_fs_req *req)
{
	char rel[SHARE_PATH_MAX], path[SHARE_PATH_MAX];
	uint8_t share = d->share;
	int fd, err;
	struct stat st;

	/* The common case first: no link in the last component. */
	fd = sys_openat2(d->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			 RESOLVE_BENEATH | (SHARE_RESOLVE & ~RESOLVE_IN_ROOT));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISLNK(st.st_mode)) {
		/* Follow it from the share's root, as the guest's "/". */
		close(fd);
		err = dir_relpath(t, d, rel, sizeof(rel));
		if (err)
			return err;
		if ((size_t)snprintf(path, sizeof(path), "%s%s", rel, name) >=
		    sizeof(path))
			return -ENAMETOOLONG;
		fd = sys_openat2(t->shares[share].rootfd, path,
				 O_PATH | O_CLOEXEC, SHARE_RESOLVE);
		if (fd < 0)
			return -errno;
	}
	err = stat_fill(fd, req);
	if (err) {
		close(fd);
		return err;
	}
	return node_out(t, fd, share, req);
}

static int64_t do_create(struct share_table *t, struct share_node *d,
			 const char *name, struct pv_fs_req *req)
{
	uint32_t perm = req->flags & 07777;
	bool dir = (req->flags & S_IFMT) == S_IFDIR;
	int fd, iofd = -1, err;

	if ((req->flags & S_IFMT) != S_IFREG && !dir)
		return -EINVAL;
	if (dir) {
		if (mkdirat(d->fd, name, perm))
			return -errno;
	} else {
		/* O_EXCL: never through a link someone put there. */
		iofd = openat(d->fd, name, O_CREAT | O_EXCL | O_RDWR |
			      O_NOFOLLOW | O_CLOEXEC, perm);
		if (iofd < 0)
			return -errno;
	}
	fd = openat(d->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	err = stat_fill(fd, req);
	if (!err && dir != S_ISDIR(req->mode))
		err = -EAGAIN;	/* swapped on the host meanwhile */
	if (err) {
		close(fd);
		goto fail;
	}
	/* A new file's read-write descriptor serves for everything. */
	if (iofd >= 0) {
		close(fd);
		fd = iofd;
		iofd = -1;
	}
	err = (int)node_out(t, fd, d->share, req);
	if (err)
		goto fail;
	if (!dir) {
		t->nodes[req->out_handle].rfd = fd;
		t->nodes[req->out_handle].wfd = fd;
	}
	return 0;
fail:
	if (iofd >= 0)
		close(iofd);
	return err;
}

static int64_t do_rename(struct share_table *t, struct share_node *d,
			 const char *name, struct pv_fs_req *req,
			 const struct share_mem *mem)
{
	struct share_node *d2 = node_get(t, req->handle2);
	char name2[PV_FS_NAME_MAX + 1];
	int err;

	if (!d2)
		return -EBADF;
	if (!d2->dir)
		return -ENOTDIR;
	if (d2->share != d->share)
		return -EXDEV;
	if (req->flags & ~PV_FS_NOREPLACE)
		return -EINVAL;
	err = name_get(mem, req->name2, req->name2_len, name2);
	if (err)
		return err;
	if (syscall(SYS_renameat2, d->fd, name, d2->fd, name2,
		    req->flags & PV_FS_NOREPLACE ? RENAME_NOREPLACE : 0))
		return -errno;
	return 0;
}

static int64_t do_readlink(struct share_node *d, const char *name,
			   struct pv_fs_req *req, const struct share_mem *mem)
{
	char buf[SHARE_PATH_MAX];
	ssize_t n = readlinkat(d->fd, name, buf, sizeof(buf));

	if (n < 0)
		return -errno;
	if ((uint64_t)n > req->len)
		n = (ssize_t)req->len;
	if (share_mem_copy(mem, req->buf, buf, (uint64_t)n, true))
		return -EFAULT;
	return n;
}

/* Requests naming one component in a directory handle. */
static int64_t named_request(struct share_table *t, struct share_node *d,
			     struct pv_fs_req *req,
			     const struct share_mem *mem)
{
	char name[PV_FS_NAME_MAX + 1];
	int err;

	if (!d->dir)
		return -ENOTDIR;
	err = name_get(mem, req->name, req->name_len, name);
	if (err)
		return err;
	if (req->op == PV_FS_LOOKUP)
		return do_lookup(t, d, name, req);
	if (req->op == PV_FS_READLINK)
		return do_readlink(d, name, req, mem);
	if (!t->shares[d->share].rw)
		return -EROFS;
	switch (req->op) {
	case PV_FS_CREATE:
		return do_create(t, d, name, req);
	case PV_FS_UNLINK:
		if (req->flags & ~PV_FS_RMDIR)
			return -EINVAL;
		if (unlinkat(d->fd, name,
			     req->flags & PV_FS_RMDIR ? AT_REMOVEDIR : 0))
			return -errno;
		return 0;
	default:
		return do_rename(t, d, name, req, mem);
	}
}

static int64_t info_request(struct share_table *t, struct pv_fs_req *req,
			    const struct share_mem *mem)
{
	const char *s;
	uint64_t len;
	struct share *sh;
	int err;

	if (req->op == PV_FS_CWD) {
		s = t->cwd;
	} else {
		if (req->handle >= (uint32_t)t->nshares)
			return -ENOENT;
		sh = &t->shares[req->handle];
		err = stat_fill(sh->rootfd, req);
		if (err)
			return err;
		req->out_handle = sh->root;
		s = sh->guest;
	}
	len = strlen(s);
	if (len + 1 > req->len)
		return -ENAMETOOLONG;
	if (share_mem_copy(mem, req->buf, (void *)s, len + 1, true))
		return -EFAULT;
	return (int64_t)len;
}

static int64_t node_request(struct share_table *t, struct share_node *n,
			    struct pv_fs_req *req,
			    const struct share_mem *mem)
{
	bool rw = t->shares[n->share].rw;
	int err;

	switch (req->op) {
	case PV_FS_READ:
		return share_read(n, req, mem);
	case PV_FS_WRITE:
		return rw ? share_write(n, req, mem) : -EROFS;
	case PV_FS_READDIR:
		return share_readdir(n, req, mem);
	case PV_FS_TRUNCATE:
		if (!rw)
			return -EROFS;
		if (n->dir)
			return -EISDIR;
		if (req->off > INT64_MAX)
			return -EINVAL;
		if (req->off > PV_FS_FILE_MAX)
			return -EFBIG;
		err = share_reopen(n, O_WRONLY);
		if (!err && ftruncate(n->wfd, (off_t)req->off))
			err = -errno;
		return err;
	case PV_FS_FSYNC:
		/* Descriptors share the file: any of them syncs it. */
		if (n->wfd < 0 && (err = share_reopen(n, O_RDONLY)))
			return err;
		return fsync(n->wfd >= 0 ? n->wfd : n->rfd) ? -errno : 0;
	case PV_FS_OPEN:
		if (req->flags & ~PV_FS_FOR_WRITE)
			return -EINVAL;
		if (!(req->flags & PV_FS_FOR_WRITE))
			return n->dir ? 0 : share_reopen(n, O_RDONLY);
		if (!rw)
			return -EROFS;
		return n->dir ? -EISDIR : share_reopen(n, O_WRONLY);
	default:
		return -ENOSYS;
	}
}

int64_t share_request(struct share_table *t, struct pv_fs_req *req,
		      const struct share_mem *mem)
{
	struct share_node *n;
	int64_t ret;

	if (!t)
		return -ENOSYS;
	pthread_mutex_lock(&t->lock);
	n = node_get(t, req->handle);
	switch (req->op) {
	case PV_FS_MOUNT:
	case PV_FS_CWD:
		ret = info_request(t, req, mem);
		break;
	case PV_FS_LOOKUP:
	case PV_FS_CREATE:
	case PV_FS_UNLINK:
	case PV_FS_RENAME:
	case PV_FS_READLINK:
		ret = n ? named_request(t, n, req, mem) : -EBADF;
		break;
	case PV_FS_CLOSE:
		ret = !n ? -EBADF : n->root ? -EBUSY : 0;
		if (!ret)
			node_free(t, req->handle);
		break;
	default:
		ret = req->op >= PV_FS_NR ? -ENOSYS :
		      n ? node_request(t, n, req, mem) : -EBADF;
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

/* One --dir: its directory opened and its handle made. */
static int share_add(struct share_table *t, const struct vmm_dir *d,
		     char *err, size_t errlen)
{
	struct share *sh = &t->shares[t->nshares];
	char proc[64];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(d->host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "--dir: '%s': %s", d->host,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, sh->real, sizeof(sh->real) - 1);
	if (n <= 0) {
		snprintf(err, errlen, "--dir: '%s': cannot name it through "
			 "/proc/self/fd: %s", d->host, strerror(errno));
		close(fd);
		return -1;
	}
	sh->real[n] = 0;
	sh->rootfd = fd;
	sh->rw = d->rw;
	snprintf(sh->guest, sizeof(sh->guest), "%s", d->guest);
	/* The handle has its own descriptor: node_free closes it. */
	sh->root = node_alloc(t, fcntl(fd, F_DUPFD_CLOEXEC, 0), t->nshares,
			      true);
	if (!sh->root || t->nodes[sh->root].fd < 0) {
		snprintf(err, errlen, "--dir: '%s': out of descriptors",
			 d->host);
		close(fd);
		return -1;
	}
	t->nodes[sh->root].root = true;
	t->nshares++;
	return 0;
}

/*
 * --cwd inside a share must be a directory there, checked as the guest
 * would find it; elsewhere the guest kernel checks it at boot.
 */
static int share_cwd_check(struct share_table *t, const char *cwd, char *err,
			   size_t errlen)
{
	const struct share *best = NULL;
	const char *rest;
	size_t blen = 0;
	int fd;

	for (int i = 0; i < t->nshares; i++) {
		const char *g = t->shares[i].guest;
		size_t n = strlen(g);

		while (n > 1 && g[n - 1] == '/')
			n--;
		if (!strncmp(cwd, g, n) && (n == 1 || !cwd[n] || cwd[n] == '/')
		    && n >= blen) {
			best = &t->shares[i];
			blen = n;
		}
	}
	if (!best)
		return 0;
	rest = cwd + blen;
	while (*rest == '/')
		rest++;
	fd = sys_openat2(best->rootfd, *rest ? rest : ".",
			 O_PATH | O_DIRECTORY | O_CLOEXEC, SHARE_RESOLVE);
	if (fd < 0) {
		snprintf(err, errlen, "--cwd: '%s': %s", cwd, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

struct share_table *share_table_open(const struct vmm_config *cfg, char *err,
				     size_t errlen)
{
	struct share_table *t;
	struct rlimit rl;

	err[0] = 0;
	if (!cfg->ndirs && !cfg->cwd)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	if (cfg->cwd)
		snprintf(t->cwd, sizeof(t->cwd), "%s", cfg->cwd);
	/* A handle is a descriptor: let a big tree have many. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < cfg->ndirs; i++) {
		if (share_add(t, &cfg->dirs[i], err, errlen)) {
			share_table_close(t);
			return NULL;
		}
	}
	if (cfg->cwd && share_cwd_check(t, cfg->cwd, err, errlen)) {
		share_table_close(t);
		return NULL;
	}
	return t;
}

void share_table_close(struct share_table *t)
{
	if (!t)
		return;
	for (uint32_t h = 1; h < t->nnodes; h++)
		if (t->nodes[h].fd >= 0)
			node_free(t, h);
	for (int i = 0; i < t->nshares; i++)
		close(t->shares[i].rootfd);
	pthread_mutex_destroy(&t->lock);
	free(t->nodes);
	free(t);
}

/*
 * Whether the guest will find a regular file at path (absolute): a --file,
 * or beneath the --dir whose GUEST is its longest prefix, links followed
 * as the guest's lookups follow them.  `vmm run` checks a dynamically
 * linked PROGRAM's interpreter so, before the guest boots.
 */
bool share_path_exists(const struct vmm_config *cfg, const char *path)
{
	const struct vmm_dir *best = NULL;
	size_t best_len = 0;
	struct stat st;
	int dfd, fd;

	for (int i = 0; i < cfg->nfiles; i++)
		if (!strcmp(cfg->files[i].guest, path))
			return true;
	for (int i = 0; i < cfg->ndirs; i++) {
		const char *g = cfg->dirs[i].guest;
		size_t n = strcmp(g, "/") ? strlen(g) : 0;

		if (!strncmp(path, g, n) && path[n] == '/' &&
		    (!best || n > best_len)) {
			best = &cfg->dirs[i];
			best_len = n;
		}
	}
	if (!best || !path[best_len + 1])
		return false;
	dfd = open(best->host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	fd = sys_openat2(dfd, path + best_len + 1, O_PATH | O_CLOEXEC,
			 SHARE_RESOLVE);
	close(dfd);
	if (fd < 0)
		return false;
	if (fstat(fd, &st))
		st.st_mode = 0;
	close(fd);
	return S_ISREG(st.st_mode);
}
