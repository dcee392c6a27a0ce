// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "initramfs.h"

#define FILE_MAX_SIZE	(1ull << 30)

int file_read_all(const char *path, void **buf, size_t *len,
		  char *err, size_t errlen)
{
	struct stat st;
	size_t done = 0;
	uint8_t *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > FILE_MAX_SIZE) {
		snprintf(err, errlen, "%s: not a regular file of at most 1 GiB",
			 path);
		close(fd);
		return -1;
	}
	p = malloc(st.st_size ? st.st_size : 1);
	if (!p) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		return -1;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, p + done, st.st_size - done);

		if (n <= 0) {
			snprintf(err, errlen, "%s: %s", path,
				 n ? strerror(errno) : "file shrank while read");
			free(p);
			close(fd);
			return -1;
		}
		done += n;
	}
	close(fd);
	*buf = p;
	*len = done;
	return 0;
}

/* Add every missing parent directory of path ("a/b/c" adds "a", "a/b"). */
static int initramfs_add_parents(struct cpio_writer *c, const char *path,
				 char dirs[][256], int *ndirs, int maxdirs)
{
	char tmp[256];

	for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		size_t n = s - path;
		int i;

		if (n == 0 || n >= sizeof(tmp))
			continue;
		memcpy(tmp, path, n);
		tmp[n] = 0;
		for (i = 0; i < *ndirs && strcmp(dirs[i], tmp); i++)
			;
		if (i < *ndirs)
			continue;
		if (*ndirs == maxdirs || cpio_writer_add(c, tmp, 040755, NULL, 0))
			return -1;
		strcpy(dirs[(*ndirs)++], tmp);
	}
	return 0;
}

static int initramfs_add_file(struct cpio_writer *c, const char *guest,
			      const void *data, size_t len, char dirs[][256],
			      int *ndirs, int maxdirs, char *err, size_t errlen)
{
	while (*guest == '/')
		guest++;
	if (!*guest || strlen(guest) >= 255 || strstr(guest, "..")) {
		snprintf(err, errlen, "bad guest path '%s'", guest);
		return -1;
	}
	if (initramfs_add_parents(c, guest, dirs, ndirs, maxdirs) ||
	    cpio_writer_add(c, guest, 0100755, data, len)) {
		snprintf(err, errlen, "initramfs: cannot add '%s'", guest);
		return -1;
	}
	return 0;
}

int initramfs_build(const struct vmm_config *cfg, const void *prog,
		    size_t prog_len, struct cpio_writer *out,
		    char *err, size_t errlen)
{
	enum { MAXDIRS = 2 * VMM_MAX_FILES + 8 };
	char (*dirs)[256] = calloc(MAXDIRS, sizeof(*dirs));
	char guest[300];
	int ndirs = 0;

	memset(out, 0, sizeof(*out));
	if (!dirs) {
		snprintf(err, errlen, "initramfs: out of memory");
		return -1;
	}
	snprintf(guest, sizeof(guest), "bin/%s", cfg->argv[0]);
	if (initramfs_add_file(out, guest, prog, prog_len, dirs, &ndirs,
			       MAXDIRS, err, errlen))
		goto fail;
	for (int i = 0; i < cfg->nfiles; i++) {
		void *data;
		size_t len;
		int r;

		if (file_read_all(cfg->files[i].host, &data, &len, err, errlen))
			goto fail;
		r = initramfs_add_file(out, cfg->files[i].guest, data, len,
				       dirs, &ndirs, MAXDIRS, err, errlen);
		free(data);
		if (r)
			goto fail;
	}
	if (cpio_writer_finish(out)) {
		snprintf(err, errlen, "initramfs: out of memory");
		goto fail;
	}
	free(dirs);
	return 0;
fail:
	free(dirs);
	cpio_writer_free(out);
	return -1;
}
