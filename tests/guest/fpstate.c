// SPDX-License-Identifier: MIT
/*
 * A thread's FPU and vector registers survive preemption by another thread
 * on the same vCPU.  Two threads run for SECONDS (default 2):
 *   fpstate memcpy: each copies its own 256 KiB pattern with the libc's
 *                   memcpy and checks it (glibc keeps the head of a big
 *                   copy in vector registers across `rep movsb`);
 *   fpstate ymm:    each fills ymm0-15 with its own pattern, spins, and
 *                   checks all 256 bits of each, when the CPU offers AVX
 *                   (under kvm_pvm user code sees the host's).
 * Prints "<mode>: ok" or the first bad result; 1 vCPU makes the threads
 * preempt each other (100 Hz while both are runnable).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COPY_SIZE	(256 << 10)

static double seconds = 2;
static int failures;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *copier(void *arg)
{
	long id = (long)arg;
	unsigned char *src = malloc(COPY_SIZE), *dst = malloc(COPY_SIZE);
	double end = now() + seconds;

	if (!src || !dst)
		abort();
	for (size_t i = 0; i < COPY_SIZE; i++)
		src[i] = (unsigned char)(id * 101 + i * 13 + (i >> 9));
	while (now() < end) {
		memset(dst, 0, COPY_SIZE);
		memcpy(dst, src, COPY_SIZE);
		for (size_t i = 0; i < COPY_SIZE; i++) {
			if (dst[i] != src[i]) {
				if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) == 0)
					printf("memcpy: thread %ld byte %zu is %#x, "
					       "want %#x\n", id, i, dst[i], src[i]);
				break;
			}
		}
	}
	return NULL;
}

static int avx_usable(void)
{
	unsigned int a, b, c, d;
	uint32_t xcr0_lo, xcr0_hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) ||
	    !(c & bit_AVX))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
	return (xcr0_lo & 6) == 6;	/* SSE and AVX state enabled */
}

/* ymm0-15 = pattern, spin, then store them all to out[16][32]. */
__attribute__((target("avx"))) static void ymm_hold(uint64_t pattern,
						    unsigned char *out)
{
	__asm__ volatile(
		"vmovq %[p], %%xmm0\n\t"
		"vpunpcklqdq %%xmm0, %%xmm0, %%xmm0\n\t"
		"vinsertf128 $1, %%xmm0, %%ymm0, %%ymm0\n\t"
		".irp r, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
		"vmovdqa %%ymm0, %%ymm\\r\n\t"
		".endr\n\t"
		"mov $2000000, %%ecx\n"
		"1:\tdec %%ecx\n\t"
		"jnz 1b\n\t"
		".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
		"vmovdqu %%ymm\\r, 32*\\r(%[out])\n\t"
		".endr\n\t"
		"vzeroupper"
		: : [p] "r"(pattern), [out] "r"(out)
		: "rcx", "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
		  "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
		  "xmm12", "xmm13", "xmm14", "xmm15");
}

static void *ymm_checker(void *arg)
{
	long id = (long)arg;
	double end = now() + seconds;
	unsigned char out[16 * 32];

	for (uint64_t round = 0; now() < end; round++) {
		uint64_t pattern = (uint64_t)(id + 1) << 56 | round;

		ymm_hold(pattern, out);
		for (int i = 0; i < 16 * 32; i += 8) {
			uint64_t got;

			memcpy(&got, out + i, 8);
			if (got != pattern) {
				if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) == 0)
					printf("ymm: thread %ld ymm%d bits %d-%d are "
					       "%#llx, want %#llx\n", id, i / 32,
					       i % 32 * 8, i % 32 * 8 + 63,
					       (unsigned long long)got,
					       (unsigned long long)pattern);
				break;
			}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "memcpy";
	void *(*fn)(void *) = copier;
	pthread_t t[2];

	if (argc > 2)
		seconds = atof(argv[2]);
	if (!strcmp(mode, "ymm")) {
		fn = ymm_checker;
		if (!avx_usable()) {
			/* Nothing to leak: the CPU offers no AVX state. */
			printf("ymm: ok\n");
			return 0;
		}
	} else if (strcmp(mode, "memcpy")) {
		fprintf(stderr, "usage: fpstate [memcpy|ymm] [SECONDS]\n");
		return 2;
	}
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, fn, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (!failures)
		printf("%s: ok\n", mode);
	return failures != 0;
}
