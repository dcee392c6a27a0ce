// SPDX-License-Identifier: MIT
/*
 * A benchmark-shaped program for host directories (--dir): it reads an
 * input tree and writes results under an output directory, with the
 * calls such programs make (getdents64, stat, fstat, read, pread, mmap,
 * lseek, write, pwrite, ftruncate, fsync, mkdir, rename, unlink, chdir,
 * getcwd).  The KVM tests run it natively and in the guest on the same
 * input and compare the output trees byte for byte (tests/kvm/share.sh).
 *
 *   treework process IN OUT   the tree work; a summary on stdout
 *   treework kill OUT         write OUT/killed, then SIGKILL itself
 *   treework spin OUT         write OUT/timeout, then spin (--timeout)
 *   treework panic OUT        write OUT/panic, then system call 333, which
 *                             the kpanic test kernel turns into a panic
 *   treework erofs DIR        every way to change a read-only share: EROFS
 *   treework escape DIR N     ways out of share DIR (whose parent holds
 *                             "secret"): each must fail; then N fresh
 *                             lookups of DIR/race/lI/secret while the
 *                             host swaps lI between an inside directory
 *                             and links out; any "SECRET" read escaped
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fails;

#define CHECK(c) do { if (!(c)) { printf("FAIL %s:%d %s (%s)\n", \
	__FILE__, __LINE__, #c, strerror(errno)); fails++; } } while (0)

static uint64_t fnv(const unsigned char *p, size_t n, uint64_t h)
{
	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One input file: hashed by read, pread and mmap; its reversal written
 * back to front with pwrite; a .sum line. */
static void file_work(const char *in, const char *out, FILE *manifest,
		      uint64_t *bytes)
{
	unsigned char buf[8192];
	char path[4500];
	uint64_t h = 0xcbf29ce484222325ull, hm;
	struct stat st, fst;
	int fd = open(in, O_RDONLY), wfd;
	ssize_t n;
	off_t size;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(!stat(in, &st) && !fstat(fd, &fst) && st.st_size == fst.st_size);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = fnv(buf, n, h);
	CHECK(n == 0);
	size = lseek(fd, 0, SEEK_END);
	CHECK(size == st.st_size);
	*bytes += size;
	if (size > 0) {
		unsigned char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE,
					fd, 0);

		CHECK(m != MAP_FAILED);
		if (m != MAP_FAILED) {
			hm = fnv(m, size, 0xcbf29ce484222325ull);
			CHECK(hm == h);
			/* pread of the middle equals the mapping there */
			n = pread(fd, buf, sizeof(buf), size / 2);
			CHECK(n == (ssize_t)(size - size / 2 < (off_t)sizeof(buf) ?
				     size - size / 2 : (off_t)sizeof(buf)));
			CHECK(n <= 0 || !memcmp(buf, m + size / 2, n));
			snprintf(path, sizeof(path), "%s.rev", out);
			wfd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
			CHECK(wfd >= 0);
			for (off_t o = 0; wfd >= 0 && o < size; o += 4096) {
				size_t c = size - o < 4096 ? size - o : 4096;

				for (size_t i = 0; i < c; i++)
					buf[i] = m[size - 1 - o - i];
				CHECK(pwrite(wfd, buf, c, o) == (ssize_t)c);
			}
			/* grow then cut back: ftruncate both ways */
			CHECK(!ftruncate(wfd, size + 5000));
			CHECK(!ftruncate(wfd, size));
			CHECK(!fsync(wfd) && !close(wfd));
			munmap(m, size);
		}
	}
	close(fd);
	fprintf(manifest, "%s %lld %016llx %o\n", out, (long long)size,
		(unsigned long long)h, (unsigned)(st.st_mode & 07777));
}

/* Walk in (sorted), mirroring directories under out (relative to cwd). */
static void tree_work(const char *in, const char *out, FILE *manifest,
		      uint64_t *files, uint64_t *bytes)
{
	char *names[512], a[4400], b[4400];
	DIR *d = opendir(in);
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL);
	if (!d)
		return;
	while ((e = readdir(d)) && n < 512)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (int i = 0; i < n; i++) {
		struct stat st;

		snprintf(a, sizeof(a), "%s/%s", in, names[i]);
		snprintf(b, sizeof(b), "%s/%s", out, names[i]);
		CHECK(!stat(a, &st));
		if (S_ISDIR(st.st_mode)) {
			CHECK(!mkdir(b, 0755) || errno == EEXIST);
			tree_work(a, b, manifest, files, bytes);
		} else if (S_ISREG(st.st_mode)) {
			file_work(a, b, manifest, bytes);
			++*files;
		}
		free(names[i]);
	}
}

static int process(const char *in, const char *out)
{
	uint64_t files = 0, bytes = 0;
	char cwd[4096];
	FILE *m;
	int fd;

	CHECK(!chdir(out) && getcwd(cwd, sizeof(cwd)));
	/* From here on every output path is relative to the cwd. */
	CHECK(!mkdir("tree", 0755));
	m = fopen("manifest.tmp", "w");
	CHECK(m != NULL);
	if (!m)
		return 1;
	tree_work(in, "tree", m, &files, &bytes);
	CHECK(!fflush(m) && !fsync(fileno(m)) && !fclose(m));
	CHECK(!rename("manifest.tmp", "manifest"));
	/* a scratch file made, checked, removed; a directory likewise */
	fd = open("scratch", O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(fd >= 0 && write(fd, "abc", 3) == 3 && close(fd) == 0);
	CHECK(open("scratch", O_CREAT | O_EXCL | O_RDWR, 0600) < 0 &&
	      errno == EEXIST);
	CHECK(!unlink("scratch") && access("scratch", F_OK) && errno == ENOENT);
	CHECK(!mkdir("gone", 0755) && !rmdir("gone"));
	printf("files %llu bytes %llu\n", (unsigned long long)files,
	       (unsigned long long)bytes);
	printf("%s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4400];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(path);
		exit(2);
	}
	/* no fsync, no close: what is written must be there anyway */
	printf("wrote %s\n", name);
	fflush(stdout);
}

static void expect_erofs(const char *what, int r)
{
	printf("%s: %s\n", what, r < 0 && errno == EROFS ? "EROFS" :
	       r < 0 ? strerror(errno) : "allowed");
}

static int erofs(const char *dir)
{
	char a[4200], b[4200];

	CHECK(!chdir(dir));
	snprintf(a, sizeof(a), "%s/existing", dir);
	snprintf(b, sizeof(b), "%s/renamed", dir);
	expect_erofs("create", open("new", O_CREAT | O_WRONLY, 0644));
	expect_erofs("open-write", open(a, O_WRONLY));
	expect_erofs("open-trunc", open(a, O_RDWR | O_TRUNC));
	expect_erofs("truncate", truncate(a, 0));
	expect_erofs("mkdir", mkdir("d", 0755));
	expect_erofs("unlink", unlink(a));
	expect_erofs("rmdir", rmdir("sub"));
	expect_erofs("rename", rename(a, b));
	printf("still readable: %s\n", access(a, R_OK) ? "no" : "yes");
	return fails ? 1 : 0;
}

static const char *err_name(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EXDEV: return "EXDEV";
	case ELOOP: return "ELOOP";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case EFBIG: return "EFBIG";
	case ENOTDIR: return "ENOTDIR";
	case EPERM: return "EPERM";
	default: return strerror(e);
	}
}

/* Open and read path: "ESCAPED" if it holds the secret outside. */
static void try_open(const char *dir, const char *rel)
{
	char path[4400], buf[64] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("%s: %s\n", rel, err_name(errno));
		return;
	}
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	printf("%s: %s\n", rel, strstr(buf, "SECRET") ? "ESCAPED" : "inside");
}

static int escape(const char *dir, int n)
{
	static const char *const paths[] = {
		"../secret", "../../secret", "sub/../../secret",
		"abs", "rel", "relsub", "procroot", "procfd", "abs/../secret",
		"absdir/secret", "reldir/secret", "loop", "fifo", "mnt/secret",
	};
	char path[4400], buf[4096];
	int escaped = 0, fd;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		try_open(dir, paths[i]);
	/* offsets: negative, huge, past what a file can be */
	snprintf(path, sizeof(path), "%s/rw/file", dir);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	errno = 0;
	printf("pread -1: %s\n", pread(fd, buf, 16, -1) < 0 ?
	       err_name(errno) : "allowed");
	printf("pread 2^62: %zd\n", pread(fd, buf, 16, 1ll << 62));
	printf("pwrite 2^63-8: %s\n", pwrite(fd, buf, 16, INT64_MAX - 8) < 0 ?
	       "error" : "allowed");
	printf("pwrite 2^62: %s\n", pwrite(fd, buf, 16, 1ll << 62) < 0 ?
	       "error" : "allowed");
	printf("lseek -5: %s\n", lseek(fd, -5, SEEK_SET) < 0 ?
	       err_name(errno) : "allowed");
	printf("ftruncate -1: %s\n", ftruncate(fd, -1) < 0 ?
	       err_name(errno) : "allowed");
	close(fd);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/race/l%d/secret", dir, i);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		buf[0] = 0;
		if (read(fd, buf, 64) > 0 && strstr(buf, "SECRET"))
			escaped++;
		close(fd);
	}
	printf("race: %d escaped\n", escaped);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "escape"))
		return escape(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "process"))
		return process(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "erofs"))
		return erofs(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "kill")) {
		write_file(argv[2], "killed", "written before SIGKILL\n");
		kill(getpid(), SIGKILL);
	} else if (argc == 3 && !strcmp(argv[1], "spin")) {
		write_file(argv[2], "timeout", "written before the timeout\n");
		for (volatile unsigned long i = 0;; i++)
			;
	} else if (argc == 3 && !strcmp(argv[1], "panic")) {
		write_file(argv[2], "panic", "written before the panic\n");
		syscall(333);
		printf("no panic\n");
		return 3;
	}
	fprintf(stderr, "usage: treework process IN OUT | kill|spin|panic OUT"
		" | erofs DIR\n");
	return 2;
}
