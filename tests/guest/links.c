// SPDX-License-Identifier: MIT
/*
 * Hard links as programs use them: link() and linkat(), st_nlink and
 * st_ino, writes by one name read by the other, either name unlinked
 * first, rename onto a link, readdir; a named semaphore (sem_open()
 * makes its file under a temporary name and links it to its own, in
 * musl as in glibc) shared by a parent and its child; and symbolic links
 * as ln -s, tar and Python's venv make and use them.  The KVM tests run
 * it natively and in the guest: the output must be the same.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;

#define CHECK(c, what) do { if (!(c)) { printf("FAIL %s: %s (%s)\n", what, \
	#c, strerror(errno)); fails++; } } while (0)

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "ok";
	case EEXIST: return "EEXIST";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ENOTDIR: return "ENOTDIR";
	case EINVAL: return "EINVAL";
	case ELOOP: return "ELOOP";
	case EISDIR: return "EISDIR";
	default: return strerror(e);
	}
}

static const char *try_link(const char *from, const char *to)
{
	return err_name(link(from, to) ? errno : 0);
}

static struct stat st_of(const char *path)
{
	struct stat st = { 0 };

	CHECK(!stat(path, &st), path);
	return st;
}

static void write_file(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);

	CHECK(fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s) &&
	      !close(fd), path);
}

static const char *read_file(const char *path)
{
	static char buf[64];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* How many entries of "." carry the inode number ino. */
static int entries_of(ino_t ino)
{
	DIR *d = opendir(".");
	struct dirent *e;
	int n = 0;

	CHECK(d, "opendir");
	while (d && (e = readdir(d)))
		n += e->d_ino == ino;
	if (d)
		closedir(d);
	return n;
}

static void links(void)
{
	struct stat a, b;

	write_file("a", "data", O_TRUNC);
	CHECK(!link("a", "b"), "link");
	a = st_of("a");
	b = st_of("b");
	printf("link: nlink %d and %d, one inode: %s, listed twice: %s\n",
	       (int)a.st_nlink, (int)b.st_nlink,
	       a.st_ino == b.st_ino ? "yes" : "no",
	       entries_of(a.st_ino) == 2 ? "yes" : "no");
	CHECK(mkdir("d", 0755) == 0, "mkdir");
	printf("errors: existing %s, directory %s, missing %s, "
	       "not a directory %s, trailing slash %s, flags %s\n",
	       try_link("a", "b"), try_link("d", "d2"), try_link("nope", "c"),
	       try_link("a/", "c"), try_link("a", "c/"),
	       err_name(linkat(AT_FDCWD, "a", AT_FDCWD, "c", 0x8000) ? errno
								  : 0));
	write_file("b", "!", O_APPEND);
	printf("written by b, read by a: %s\n", read_file("a"));
	CHECK(!linkat(AT_FDCWD, "b", AT_FDCWD, "d/c", AT_SYMLINK_FOLLOW),
	      "linkat");
	printf("a third name: nlink %d\n", (int)st_of("d/c").st_nlink);
	CHECK(!unlink("a"), "unlink a");
	printf("first name gone: nlink %d, %s\n", (int)st_of("b").st_nlink,
	       read_file("b"));
	CHECK(!rename("b", "d/c"), "rename onto a link");
	printf("rename onto its own link: both there: %s\n",
	       !access("b", F_OK) && !access("d/c", F_OK) ? "yes" : "no");
	write_file("other", "other", O_TRUNC);
	CHECK(!rename("other", "d/c"), "rename over");
	printf("another file renamed over a link: %s, b nlink %d\n",
	       read_file("d/c"), (int)st_of("b").st_nlink);
	CHECK(!unlink("b") && !unlink("d/c") && !rmdir("d"), "cleanup");
	printf("last name gone: %s\n", access("b", F_OK) && errno == ENOENT ?
	       "ENOENT" : "still there");
}

static const char *errno_of(int ret)
{
	return err_name(ret < 0 ? errno : 0);
}

/* What a symbolic link reads (readlink), or the error. */
static const char *link_text(const char *path)
{
	static char buf[64];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return err_name(errno);
	buf[n] = '\0';
	return buf;
}

/* The d_type readdir gives name in ".", or -1. */
static int dtype_of(const char *name)
{
	DIR *d = opendir(".");
	struct dirent *e;
	int t = -1;

	while (d && (e = readdir(d)))
		if (!strcmp(e->d_name, name))
			t = e->d_type;
	if (d)
		closedir(d);
	return t;
}

static int open_close(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

static void symlinks(void)
{
	char cwd[256], *real;
	struct stat st = { 0 };

	write_file("t", "target", O_TRUNC);
	CHECK(!mkdir("d", 0755), "mkdir");
	CHECK(!symlink("t", "s") && !symlink("../t", "d/up") &&
	      !symlink("d", "sd"), "symlink");
	/* One static buffer each call: one call per printf. */
	printf("symlink: readlink s: %s\n", link_text("s"));
	printf("symlink: readlink d/up: %s\n", link_text("d/up"));
	printf("read through s: %s\n", read_file("s"));
	printf("read through sd/up: %s\n", read_file("sd/up"));
	CHECK(!lstat("s", &st), "lstat");
	printf("lstat: link %s, size %d, mode %o; readdir type %d\n",
	       S_ISLNK(st.st_mode) ? "yes" : "no", (int)st.st_size,
	       (unsigned)(st.st_mode & 0777), dtype_of("s"));
	printf("stat: a regular file %s\n",
	       !stat("s", &st) && S_ISREG(st.st_mode) ? "yes" : "no");
	printf("through a directory's link and up: %s; lstat with a "
	       "trailing slash: a directory %s\n", read_file("sd/../t"),
	       !lstat("sd/", &st) && S_ISDIR(st.st_mode) ? "yes" : "no");
	CHECK(!chdir("sd") && getcwd(cwd, sizeof(cwd)), "chdir through");
	printf("chdir through a link: cwd ends in %s\n", strrchr(cwd, '/'));
	CHECK(!chdir(".."), "chdir back");
	real = realpath("sd/up", NULL);
	printf("realpath: ends in %s\n", real ? strrchr(real, '/') : "?");
	free(real);
	CHECK(!symlink("self", "self") && !symlink("made", "dangle"),
	      "symlink loop, dangling");
	printf("errors: existing %s", errno_of(symlink("x", "s")));
	printf(", empty target %s", errno_of(symlink("", "e")));
	printf(", readlink of a file %s", link_text("t"));
	printf(", O_NOFOLLOW %s",
	       errno_of(open_close("s", O_RDONLY | O_NOFOLLOW)));
	printf(", a loop %s", errno_of(open_close("self", O_RDONLY)));
	printf(", mkdir over a link %s", errno_of(mkdir("s", 0755)));
	printf(", dangling %s", errno_of(stat("dangle", &st)));
	printf(", O_EXCL on a link %s",
	       errno_of(open_close("dangle", O_WRONLY | O_CREAT | O_EXCL)));
	printf(", rmdir of a link %s\n", errno_of(rmdir("sd")));
	CHECK(!open_close("dangle", O_WRONLY | O_CREAT), "create through");
	printf("O_CREAT through a dangling link made its target: %s\n",
	       access("made", F_OK) ? "no" : "yes");
	CHECK(!rename("s", "s2"), "rename link");
	printf("renamed: the link moved (%s)", link_text("s2"));
	printf(", its target stayed (%s)\n", read_file("t"));
	CHECK(!link("s2", "s3"), "hard link to a link");
	printf("a hard link to a link: lstat a link %s, nlink %d\n",
	       !lstat("s3", &st) && S_ISLNK(st.st_mode) ? "yes" : "no",
	       (int)st.st_nlink);
	CHECK(!lchown("s3", 0, 0), "lchown");
	CHECK(!unlink("s2") && !unlink("s3") && !unlink("d/up") &&
	      !unlink("sd") && !unlink("self") && !unlink("dangle") &&
	      !unlink("made") && !rmdir("d"), "unlink links");
	printf("links unlinked, target still there: %s\n", read_file("t"));
	CHECK(!unlink("t"), "unlink t");
}

/* The child posts 100 times; the parent takes them all. */
static void named_semaphore(void)
{
	char name[64];
	sem_t *s;
	pid_t pid;
	int status, got = 0;

	snprintf(name, sizeof(name), "/perfvisor-links-%d", (int)getpid());
	s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
	CHECK(s != SEM_FAILED, "sem_open");
	if (s == SEM_FAILED)
		return;
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 100; i++)
			sem_post(s);
		_exit(0);
	}
	for (int i = 0; i < 100; i++)
		got += !sem_wait(s);
	CHECK(waitpid(pid, &status, 0) == pid && status == 0, "child");
	printf("named semaphore: %d posts from the child\n", got);
	CHECK(!sem_close(s) && !sem_unlink(name), "sem_unlink");
	s = sem_open(name, 0);
	printf("unlinked semaphore: %s\n", s == SEM_FAILED && errno == ENOENT ?
	       "ENOENT" : "still there");
}

int main(void)
{
	char dir[] = "/tmp/links-XXXXXX";

	if (!mkdtemp(dir) || chdir(dir)) {
		perror("links: /tmp");
		return 1;
	}
	links();
	symlinks();
	named_semaphore();
	CHECK(!chdir("/") && !rmdir(dir), "rmdir");
	printf("links: %s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
