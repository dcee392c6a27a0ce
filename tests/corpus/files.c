/* SPDX-License-Identifier: MIT */
/*
 * File calls upstream code makes, with Linux's results and errno values:
 * sendfile (with and without an offset, to a file and a pipe),
 * pread/pwrite, ftruncate, fsync, chmod/fchmod and stat's mode, chown and
 * utimensat on files that exist or not, fcntl locks, prctl thread names,
 * getrandom, and rt_sigsuspend (the handler runs, then the mask from
 * before is back).  DIR: a writable directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include "corpus.h"

#define N 10000

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	handled = sig;
}

static void *send_usr1(void *arg)
{
	(void)arg;
	usleep(20000);
	kill(getpid(), SIGUSR1);
	return NULL;
}

static void say(const char *what, long r)
{
	printf("%s: %ld%s%s\n", what, r < 0 ? -1 : r, r < 0 ? " " : "",
	       r < 0 ? strerror(errno) : "");
}

int main(int argc, char **argv)
{
	static unsigned char data[N], back[N];
	char a[256], b[256], name[16];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	int fa, fb, p[2];
	off_t off;

	snprintf(a, sizeof(a), "%s/a", argc > 1 ? argv[1] : ".");
	snprintf(b, sizeof(b), "%s/b", argc > 1 ? argv[1] : ".");
	corpus_text(data, N, 11);
	fa = open(a, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fb = open(b, O_RDWR | O_CREAT | O_TRUNC, 0600);
	say("write", write(fa, data, N));
	say("pwrite", pwrite(fa, "XYZ", 3, 5000));
	say("pread", pread(fa, back, 10, 4998));
	printf("pread bytes %.10s\n", back);
	say("lseek", lseek(fa, 100, SEEK_SET));
	say("sendfile from pos", sendfile(fb, fa, NULL, 3000));
	say("position after", lseek(fa, 0, SEEK_CUR));
	off = 9000;
	say("sendfile at offset", sendfile(fb, fa, &off, 5000));
	printf("offset now %ld\n", (long)off);
	say("position unchanged", lseek(fa, 0, SEEK_CUR));
	say("pipe", pipe(p));
	say("sendfile to pipe", sendfile(p[1], fa, NULL, 100));
	say("read pipe", read(p[0], back, sizeof(back)));
	say("sendfile from pipe", sendfile(fb, p[0], NULL, 10));
	say("sendfile bad fd", sendfile(fb, 99, NULL, 10));
	say("pread b", pread(fb, back, N, 0));
	printf("b hash %016llx\n", (unsigned long long)corpus_hash(back, 4000));
	say("ftruncate", ftruncate(fb, 1234));
	say("fstat", fstat(fb, &st));
	printf("size %ld mode %o\n", (long)st.st_size, st.st_mode & 07777);
	say("fchmod", fchmod(fb, 0640));
	say("chmod", chmod(a, 0604));
	say("stat", stat(a, &st));
	printf("a mode %o, ", st.st_mode & 07777);
	say("fstat b", fstat(fb, &st));
	printf("b mode %o\n", st.st_mode & 07777);
	say("chmod missing", chmod("/nonexistent/x", 0600));
	say("fchown", fchown(fb, 0, 0));
	say("fchown bad fd", fchown(99, 0, 0));
	say("chown missing", chown("/nonexistent", 0, 0));
	say("utimensat", utimensat(AT_FDCWD, a, NULL, 0));
	say("utimensat missing", utimensat(AT_FDCWD, "/nonexistent", NULL, 0));
	say("futimens", futimens(fb, NULL));
	say("fsync", fsync(fa));
	say("fdatasync", fdatasync(fb));
	say("fsync bad fd", fsync(99));
	say("F_SETLK", fcntl(fa, F_SETLK, &fl));
	say("F_GETLK", fcntl(fa, F_GETLK, &fl));
	printf("lock type unlocked %s\n", fl.l_type == F_UNLCK ? "yes" : "no");
	say("PR_SET_NAME", prctl(PR_SET_NAME, "corpus-thread-name"));
	say("PR_GET_NAME", prctl(PR_GET_NAME, name));
	printf("name %s\n", name);
	say("prctl unknown", prctl(9999, 0, 0, 0, 0));
	say("getrandom 16", getrandom(back, 16, 0));
	say("getrandom nonblock", getrandom(back, 64, GRND_NONBLOCK));
	{
		sigset_t usr1, empty, now;
		pthread_t th;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigemptyset(&empty);
		signal(SIGUSR1, on_usr1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
		pthread_create(&th, NULL, send_usr1, NULL);
		say("sigsuspend", sigsuspend(&empty));
		pthread_join(th, NULL);
		sigprocmask(SIG_BLOCK, NULL, &now);
		printf("handler ran %s, SIGUSR1 blocked again %s\n",
		       handled == SIGUSR1 ? "yes" : "no",
		       sigismember(&now, SIGUSR1) ? "yes" : "no");
	}
	say("unlink", unlink(a));
	say("unlink again", unlink(a));
	close(fa);
	close(fb);
	unlink(b);
	return 0;
}
