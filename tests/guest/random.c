// SPDX-License-Identifier: MIT
/*
 * Random bytes programs can trust: getrandom() fills a 1 MiB request
 * whole, with every byte value about as often as the others; /dev/urandom
 * and /dev/random read; AT_RANDOM's 16 bytes are there; bad flags are
 * EINVAL.  It prints 16 bytes of each source in hex, which the test
 * (tests/kvm/random_boots.sh) requires to differ between two boots.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <unistd.h>

static unsigned char big[1 << 20];
static int failures;

static void hex(const char *what, const unsigned char *p)
{
	printf(" %s ", what);
	for (int i = 0; i < 16; i++)
		printf("%02x", p[i]);
}

int main(void)
{
	const unsigned char *ar = (const void *)getauxval(AT_RANDOM);
	unsigned char u[4096], r[64];
	long n, hist[256] = { 0 };
	int fd;

	n = getrandom(big, sizeof(big), 0);
	if (n != (long)sizeof(big)) {
		printf("FAILED getrandom of 1 MiB: %ld\n", n);
		failures++;
	}
	/* 4096 expected per value: a stuck or biased generator is far off. */
	for (long i = 0; i < n; i++)
		hist[big[i]]++;
	for (int i = 0; i < 256; i++)
		if (hist[i] < 3500 || hist[i] > 4700) {
			printf("FAILED byte %#x seen %ld times\n", i, hist[i]);
			failures++;
			break;
		}
	if (getrandom(r, sizeof(r), 8) != -1 || errno != EINVAL) {
		printf("FAILED getrandom flags 8 not EINVAL\n");
		failures++;
	}
	fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, u, sizeof(u)) != (long)sizeof(u)) {
		printf("FAILED /dev/urandom\n");
		failures++;
	}
	close(fd);
	fd = open("/dev/random", O_RDONLY);
	if (fd < 0 || read(fd, r, sizeof(r)) != (long)sizeof(r)) {
		printf("FAILED /dev/random\n");
		failures++;
	}
	close(fd);
	if (!ar) {
		printf("FAILED no AT_RANDOM\n");
		return 1;
	}
	printf("random: %s", failures ? "WRONG" : "ok");
	hex("getrandom", big);
	hex("urandom", u);
	hex("at_random", ar);
	printf("\n");
	return failures != 0;
}
