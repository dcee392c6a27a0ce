// SPDX-License-Identifier: MIT
/*
 * The step source's code cache runs a ret, an indirect call and an
 * indirect jmp by a table lookup of a dozen instructions of its own
 * (docs/design.md 4.4), so an interrupt lands inside one often in
 * call-heavy code.  The exact count of a region must not depend on that:
 * counted once quietly, then again and again while a second thread's
 * short sleeps bring timer interrupts on the same vCPU, each count must be
 * the quiet one.  Three regions: recursive direct calls (rets), recursive
 * calls through a register, memory and the stack (indirect calls), and a
 * loop dispatching through a jump table (indirect jmps), whose counts of
 * 2N and N iterations must also differ by exactly N times its body.
 *
 *   retstorm [ROUNDS]   -> "retstorm: ok" or a FAILED line per round
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FIB_N	24

static atomic_int stop;
/* Read inside every region: fib() is pure, and clang would otherwise call
 * it once, outside the loop of regions. */
static volatile long region_arg;

static __attribute__((noinline)) long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/*
 * In assembly, so that each form is there whatever the compiler:
 * ind_fib(n) calls itself for n - 1 through a RIP-relative pointer and
 * for n - 2 through rcx and then through the stack (a borrowed register
 * and an rsp operand, both read before the call pushes); dispatch(n)
 * runs n iterations of a jump through a table indexed by rax, 8
 * instructions each (and, mov, jmp *, add, jmp, dec, jnz + the table's
 * mov), and returns the sum of its cases.
 */
long ind_fib(long n);
long dispatch(long n);
__asm__(".text\n"
	".globl ind_fib\n"
	"ind_fib:\n"
	"	cmp $2, %rdi\n"
	"	jl 1f\n"
	"	push %rbx\n"
	"	push %rdi\n"
	"	dec %rdi\n"
	"	call *ind_fib_ptr(%rip)\n"
	"	mov %rax, %rbx\n"
	"	mov (%rsp), %rdi\n"
	"	sub $2, %rdi\n"
	"	lea ind_fib(%rip), %rcx\n"
	"	test $1, %rdi\n"
	"	jz 2f\n"
	"	call *%rcx\n"
	"	jmp 3f\n"
	"2:	push %rcx\n"
	"	call *(%rsp)\n"
	"	pop %rcx\n"
	"3:	add %rbx, %rax\n"
	"	pop %rdi\n"
	"	pop %rbx\n"
	"	ret\n"
	"1:	mov %rdi, %rax\n"
	"	ret\n"
	".globl dispatch\n"
	"dispatch:\n"
	"	xor %esi, %esi\n"
	"4:	mov %edi, %eax\n"
	"	and $3, %eax\n"
	"	mov dispatch_table(,%rax,8), %rdx\n"
	"	jmp *%rdx\n"
	"5:	add $1, %rsi\n"
	"	jmp 9f\n"
	"6:	add $2, %rsi\n"
	"	jmp 9f\n"
	"7:	add $3, %rsi\n"
	"	jmp 9f\n"
	"8:	add $4, %rsi\n"
	"	jmp 9f\n"
	"9:	dec %rdi\n"
	"	jnz 4b\n"
	"	mov %rsi, %rax\n"
	"	ret\n"
	".section .data.rel.ro,\"aw\"\n"
	".balign 8\n"
	"ind_fib_ptr:	.quad ind_fib\n"
	"dispatch_table:	.quad 5b, 6b, 7b, 8b\n"
	".text\n");

enum region_kind { FIB, IND_FIB, DISPATCH };

/* User instructions of one region's work, from its own event.  Never
 * inlined: clang inlined one call with k constant, three instructions
 * fewer around the same work. */
static __attribute__((noinline)) long long region(int fd,
						  enum region_kind k,
						  long arg, long *out)
{
	long long v = -1, n;

	region_arg = arg;
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	n = region_arg;
	if (k == FIB)
		*out = fib(n);
	else if (k == IND_FIB)
		*out = ind_fib(n);
	else
		*out = dispatch(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return v;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 100000 };

	(void)arg;
	while (!atomic_load(&stop))
		nanosleep(&ts, NULL);
	return NULL;
}

#define DISPATCH_N	20000
/* dispatch(n) for n a multiple of 4: n/4 of each case 1..4. */
#define DISPATCH_SUM(n)	((n) / 4 * 10)

static const char *const region_name[] = { "fib", "ind_fib", "dispatch" };
static const long region_n[] = { FIB_N, FIB_N, DISPATCH_N };
static const long region_want[] = { 46368, 46368, DISPATCH_SUM(DISPATCH_N) };

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100, bad = 0;
	struct perf_event_attr a;
	long long quiet[3], v, twice;
	pthread_t t;
	long r;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("FAILED perf_event_open\n");
		return 1;
	}
	for (int k = FIB; k <= DISPATCH; k++) {
		/* The second quiet count, with every copy and table slot
		 * there; the first also made them. */
		region(fd, k, region_n[k], &r);
		quiet[k] = region(fd, k, region_n[k], &r);
		if (quiet[k] <= 0 || r != region_want[k]) {
			printf("FAILED quiet count of %s %lld, result %ld\n",
			       region_name[k], quiet[k], r);
			return 1;
		}
	}
	twice = region(fd, DISPATCH, 2 * DISPATCH_N, &r);
	if (twice - quiet[DISPATCH] != 8 * DISPATCH_N ||
	    r != DISPATCH_SUM(2 * DISPATCH_N)) {
		printf("FAILED dispatch of %d more iterations: %lld more "
		       "instructions (%lld - %lld), not %d\n", DISPATCH_N,
		       twice - quiet[DISPATCH], twice, quiet[DISPATCH],
		       8 * DISPATCH_N);
		return 1;
	}
	if (pthread_create(&t, NULL, sleeper, NULL)) {
		printf("FAILED pthread_create\n");
		return 1;
	}
	for (int i = 0; i < rounds; i++) {
		int k = i % 3;

		v = region(fd, k, region_n[k], &r);
		if (v != quiet[k] || r != region_want[k]) {
			printf("FAILED round %d, %s: %lld instructions, not "
			       "%lld\n", i, region_name[k], v, quiet[k]);
			bad++;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	fprintf(stderr, "retstorm: %d rounds of %lld, %lld and %lld "
		"instructions\n", rounds, quiet[FIB], quiet[IND_FIB],
		quiet[DISPATCH]);
	if (!bad)
		printf("retstorm: ok\n");
	return bad != 0;
}
