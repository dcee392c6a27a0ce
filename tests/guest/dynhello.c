// SPDX-License-Identifier: MIT
/*
 * A dynamically linked glibc program (built by the host compiler, PIE and
 * not): what the guest kernel's execve of a PT_INTERP program must give
 * ld.so and libc.  It prints the same lines natively and in the guest.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char _start[];

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* The first object is the program: its headers are AT_PHDR's. */
	if (!*(int *)arg)
		*(int *)arg = info->dlpi_phdr == (void *)getauxval(AT_PHDR) ?
			      1 : -1;
	return 1;
}

static void *thread_fn(void *arg)
{
	return (char *)arg + 1;
}

/*
 * More mappings than one page of the guest's VMA list holds (170): pages
 * of alternating protection, which cannot merge; kept across fork and
 * listed in /proc/self/maps.  A program with 30 libraries has 150.
 */
static int many_vmas(void)
{
	enum { N = 400 };
	char *p = mmap(NULL, 2 * N * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int lines = 0, c, st;
	FILE *f;
	pid_t pid;

	if (p == MAP_FAILED)
		return 1;
	for (int i = 0; i < 2 * N; i++)
		p[i * 4096] = (char)i;
	for (int i = 0; i < N; i++)
		if (mprotect(p + 2 * i * 4096, 4096, PROT_READ))
			return 1;
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 2 * N; i++)
			if (p[i * 4096] != (char)i)
				_exit(1);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st)
		return 1;
	f = fopen("/proc/self/maps", "r");
	while (f && (c = getc(f)) != EOF)
		lines += c == '\n';
	if (f)
		fclose(f);
	printf("vmas: %d mappings of alternating protection, kept by fork, "
	       "maps %s\n", 2 * N, lines > 2 * N ? "lists them" : "short");
	return munmap(p, 2 * N * 4096);
}

/*
 * A read-only private mapping of a file made writable and written: the
 * write stays in this mapping (the guest maps such pages in place, so
 * mprotect must copy first); the file and a second mapping keep the ELF
 * magic.
 */
static int private_write(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	char *a, *b, byte = 0;

	if (fd < 0)
		return 1;
	a = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (a == MAP_FAILED || mprotect(a, 4096, PROT_READ | PROT_WRITE))
		return 1;
	a[1] = 'X';
	b = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (b == MAP_FAILED || pread(fd, &byte, 1, 1) != 1)
		return 1;
	printf("cow: mapping %c, file %c, second mapping %c\n", a[1], byte,
	       b[1]);
	close(fd);
	return 0;
}

/*
 * /proc/self/maps names the files mapped, as profilers and PAPI read it:
 * libc's and libm's text (ld.so mapped them), the interpreter's (execve
 * did), and a file this program maps at an offset, with that offset and
 * the file's inode; gone again once unmapped.  The bytes at each text
 * line's start are the file's at its offset.
 */
static int count_named(const char *name, const void *want_at,
		       unsigned long want_off)
{
	char line[512], path[256], perm[8];
	unsigned long lo, hi, off, ino;
	FILE *m = fopen("/proc/self/maps", "r");
	int n = 0, bad = 0;

	while (m && fgets(line, sizeof(line), m)) {
		struct stat st;
		char bytes[64];
		int fd;

		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %lu %255s", &lo, &hi, perm,
			   &off, &ino, path) < 5 || !strstr(path, name) ||
		    (want_at && (unsigned long)want_at != lo))
			continue;
		n++;
		if (want_at && off != want_off)
			bad++;
		if (stat(path, &st) || st.st_ino != ino || off % 4096)
			bad++;
		if (perm[2] != 'x')
			continue;
		fd = open(path, O_RDONLY);
		if (pread(fd, bytes, sizeof(bytes), (off_t)off) != sizeof(bytes) ||
		    memcmp(bytes, (void *)lo, sizeof(bytes)))
			bad++;
		close(fd);
	}
	if (m)
		fclose(m);
	return bad ? -1 : n;
}

static int maps_names(void)
{
	char self[256] = "";
	int fd = readlink("/proc/self/exe", self, sizeof(self) - 1) > 0 ?
		 open(self, O_RDONLY) : -1;
	void *p = fd < 0 ? MAP_FAILED :
		  mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 4096);
	int libc = count_named("/libc.so.6", NULL, 0);
	int libm = count_named("/libm.so.6", NULL, 0);
	int ld = count_named("/ld-linux-x86-64.so.2", NULL, 0);
	int own = count_named(strrchr(self, '/'), p, 4096), after;

	if (p == MAP_FAILED)
		return 1;
	munmap(p, 8192);
	after = count_named(strrchr(self, '/'), p, 4096);
	printf("maps: libc %s, libm %s, ld.so %s, a mapping at 4096 %s, "
	       "unmapped %s\n", libc > 1 ? "named" : "wrong",
	       libm > 1 ? "named" : "wrong", ld > 1 ? "named" : "wrong",
	       own == 1 ? "named" : "wrong", after == 0 ? "gone" : "wrong");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	const unsigned char *rnd = (const void *)getauxval(AT_RANDOM);
	const char *base = strrchr(argv[0], '/');
	double (*cosp)(double);
	pthread_t th;
	void *ret, *m;
	int phdr = 0;

	base = base ? base + 1 : argv[0];
	printf("dynhello: %s, %d args, last %s\n", base, argc,
	       argc > 1 ? argv[argc - 1] : "-");
	dl_iterate_phdr(phdr_cb, &phdr);
	printf("AT_BASE %s, AT_ENTRY %s, AT_PHDR %s, AT_PHNUM %s\n",
	       getauxval(AT_BASE) ? "set" : "0",
	       getauxval(AT_ENTRY) == (unsigned long)_start ? "_start" : "wrong",
	       phdr == 1 ? "the program's" : "wrong",
	       getauxval(AT_PHNUM) > 2 ? "ok" : "wrong");
	printf("AT_EXECFN %s, AT_RANDOM %s, AT_PAGESZ %lu, AT_SECURE %lu\n",
	       execfn && strstr(execfn, base) ? "names the program" : "wrong",
	       rnd && (rnd[0] | rnd[1] | rnd[2] | rnd[3]) ? "set" : "wrong",
	       getauxval(AT_PAGESZ), getauxval(AT_SECURE));
	m = dlopen("libm.so.6", RTLD_NOW);
	cosp = m ? (double (*)(double))dlsym(m, "cos") : NULL;
	printf("dlopen libm.so.6: cos(0) = %g\n", cosp ? cosp(0.0) : -1.0);
	if (pthread_create(&th, NULL, thread_fn, "xthread") ||
	    pthread_join(th, &ret))
		return 1;
	printf("pthread: %s\n", (char *)ret);
	if (argc > 1 && !strcmp(argv[1], "vmas") && many_vmas())
		return 1;
	if (argc > 1 && !strcmp(argv[1], "cow") && private_write())
		return 1;
	if (argc > 1 && !strcmp(argv[1], "maps") && maps_names())
		return 1;
	return argc > 1 && !strcmp(argv[argc - 1], "fail") ? 3 : 0;
}
