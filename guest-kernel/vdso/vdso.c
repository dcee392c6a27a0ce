// SPDX-License-Identifier: MIT
/*
 * The vDSO: clock_gettime, gettimeofday, time, getcpu and clock_getres in
 * user mode.  On kvm_pvm a kernel entry costs ~25 us and every kernel
 * instruction is emulated, while rdtsc at CPL3 is native (~8 ns): reading
 * the clock here is ~1000x cheaper than the system call.  The values come
 * from uapi/vclock.h, the helpers the kernel's clock_gettime uses too.
 *
 * Built -nostdlib -shared -fPIC; the kernel maps it (read-only, exec) with
 * the vvar page (struct pv_vvar) just below its first byte.  Functions
 * return what the system call would (0 or -errno), as libcs expect of a
 * vDSO; what it does not serve goes to the real system call.
 */
#include <stdint.h>

#include "seqcount.h"
#include "vclock.h"

#define CLOCK_REALTIME			0
#define CLOCK_MONOTONIC			1
#define CLOCK_MONOTONIC_RAW		4
#define CLOCK_REALTIME_COARSE		5
#define CLOCK_MONOTONIC_COARSE		6
#define CLOCK_BOOTTIME			7
#define CLOCK_MAX			11	/* the kernel's last clock id */

#define NR_GETTIMEOFDAY			96
#define NR_TIME				201
#define NR_CLOCK_GETTIME		228
#define NR_CLOCK_GETRES			229
#define NR_GETCPU			309

#define NSEC_PER_SEC			1000000000ull

struct vdso_timespec {
	int64_t tv_sec, tv_nsec;
};

struct vdso_timeval {
	int64_t tv_sec, tv_usec;
};

/* The linker's symbol for our own ELF header: the image's first byte. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

static inline const volatile struct pv_vvar *vvar(void)
{
	const char *base = __ehdr_start;

	/* Hide the arithmetic from the compiler: it is outside the object. */
	__asm__("" : "+r"(base));
	return (const volatile struct pv_vvar *)(base - 4096);
}

static inline uint64_t vdso_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static inline long vdso_syscall2(long nr, long a0, long a1)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a0), "S"(a1)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long vdso_syscall3(long nr, long a0, long a1, long a2)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a0), "S"(a1),
			 "d"(a2) : "rcx", "r11", "memory");
	return ret;
}

/* ns on clock clk (realtime or not), read consistently with seq. */
static uint64_t vdso_clock_ns(int realtime)
{
	const volatile struct pv_vvar *v = vvar();
	uint32_t seq;
	uint64_t ns;

	do {
		seq = pv_seq_read_begin(&v->seq);
		ns = realtime ? pv_realtime_ns(v, vdso_rdtsc())
			      : pv_monotonic_ns(v, vdso_rdtsc());
	} while (pv_seq_read_retry(&v->seq, seq));
	return ns;
}

int __vdso_clock_gettime(int clk, struct vdso_timespec *ts)
{
	uint64_t ns;

	switch (clk) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
		ns = vdso_clock_ns(1);
		break;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
		ns = vdso_clock_ns(0);
		break;
	default:	/* the CPU-time clocks need the kernel's task state */
		return vdso_syscall2(NR_CLOCK_GETTIME, clk, (long)ts);
	}
	ts->tv_sec = ns / NSEC_PER_SEC;
	ts->tv_nsec = ns % NSEC_PER_SEC;
	return 0;
}

/* The kernel's gettimeofday ignores tz; so does this one. */
int __vdso_gettimeofday(struct vdso_timeval *tv, void *tz)
{
	uint64_t ns;

	(void)tz;
	if (tv) {
		ns = vdso_clock_ns(1);
		tv->tv_sec = ns / NSEC_PER_SEC;
		tv->tv_usec = ns % NSEC_PER_SEC / 1000;
	}
	return 0;
}

int64_t __vdso_time(int64_t *t)
{
	int64_t sec = vdso_clock_ns(1) / NSEC_PER_SEC;

	if (t)
		*t = sec;
	return sec;
}

/*
 * One vCPU: the answer is 0.  More: the kernel knows where we run.  Not
 * rdtscp or rdpid: on kvm_pvm both run natively at CPL3 and return the
 * host's TSC_AUX (the host CPU), and the guest's wrmsr of TSC_AUX #GPs.
 */
long __vdso_getcpu(unsigned int *cpu, unsigned int *node, void *cache)
{
	if (vvar()->ncpus != 1)
		return vdso_syscall3(NR_GETCPU, (long)cpu, (long)node,
				     (long)cache);
	if (cpu)
		*cpu = 0;
	if (node)
		*node = 0;
	return 0;
}

/* Every clock the kernel knows ticks in ns (time.c: sys_clock_getres). */
int __vdso_clock_getres(int clk, struct vdso_timespec *res)
{
	if (clk < 0 || clk > CLOCK_MAX)
		return vdso_syscall2(NR_CLOCK_GETRES, clk, (long)res);
	if (res) {
		res->tv_sec = 0;
		res->tv_nsec = 1;
	}
	return 0;
}
