// SPDX-License-Identifier: MIT
/*
 * A PMU test in the style of the Linux KVM selftests (pmu_counters_test):
 * a tiny guest kernel, booted with `vmm run --source step --kernel
 * pmu-selftest PROGRAM`, that programs the virtual PMU through its MSRs
 * itself, as a kernel driver would, runs a known assembly block at CPL0,
 * and checks the exact counts.  With the step source the VMM steps CPL0
 * code with KVM_GUESTDBG_SINGLESTEP while a counter has the OS bit.
 *
 * The block (LOOPS iterations):
 *	wrmsr			GLOBAL_CTRL on: retires while counting, counted
 *	mov  $LOOPS, %esi
 * 1:	dec  %esi		\ LOOPS times
 *	jnz  1b			/ LOOPS branches
 *	lea, lea, mov		rep movsb's operands
 *	rep movsb (16 bytes)	one instruction, however many iterations
 *	call 2f; jmp 3f; 2: ret	three branches
 * 3:	xor, xor, mov		GLOBAL_CTRL's operands
 *	wrmsr			GLOBAL_CTRL off: not counted
 * = 2 * LOOPS + 12 instructions, LOOPS + 3 branches.
 *
 * Checks: CPUID leaf 0xA, PMC0 (instructions, OS), PMC1 (branches, OS),
 * FIXED_CTR0 (instructions, OS), PMC2 (instructions, USR only: 0, no
 * user code ran), no overflow status.  Prints one line per check and
 * exits 0 when all pass, 1 otherwise.
 */
#include <stdbool.h>
#include <stdint.h>

#include "hypercall.h"
#include "vpmu.h"

#define LOOPS		1000
#define BLOCK_INSNS	(2 * LOOPS + 12)
#define BLOCK_BRANCHES	(LOOPS + 3)

/* rep movsb's buffers, used from asm only. */
uint8_t copy_src[16] __attribute__((used)), copy_dst[16] __attribute__((used));
static int failures;

static uint64_t hcall(uint64_t nr, uint64_t a, uint64_t b)
{
	uint64_t ret = nr;

	__asm__ volatile("outb %%al, %%dx" : "+a"(ret)
			 : "d"(PV_HC_PORT), "D"(a), "S"(b) : "memory");
	return ret;
}

static void log_line(const char *s)
{
	uint64_t n = 0;

	while (s[n])
		n++;
	hcall(PV_HC_LOG, (uint64_t)s, n);
}

static unsigned int put_str(char *line, unsigned int n, const char *s)
{
	while (*s && n < 120)
		line[n++] = *s++;
	return n;
}

static unsigned int put_num(char *line, unsigned int n, uint64_t v)
{
	char num[24];
	unsigned int k = 0;

	do {
		num[k++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (k)
		line[n++] = num[--k];
	return n;
}

/* One line per check, "NAME: ok N" or "NAME: FAIL got N want M". */
static void check(const char *name, uint64_t got, uint64_t want)
{
	char line[160];
	unsigned int n = put_str(line, 0, name);

	if (got == want) {
		n = put_num(line, put_str(line, n, ": ok "), got);
	} else {
		failures++;
		n = put_num(line, put_str(line, n, ": FAIL got "), got);
		n = put_num(line, put_str(line, n, " want "), want);
	}
	line[n] = 0;
	log_line(line);
}

static uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

static void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
			 "d"((uint32_t)(v >> 32)) : "memory");
}

static void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c,
		  uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
			 : "a"(leaf), "c"(0));
}

static uint64_t evtsel(uint16_t event, uint64_t bits)
{
	return (event & 0xff) | (uint64_t)(event >> 8) << PV_EVTSEL_UMASK_SHIFT |
		bits | PV_EVTSEL_EN;
}

/* The measured block, from the enabling wrmsr to the disabling one. */
static void run_block(uint64_t enable)
{
	__asm__ volatile(
		"wrmsr\n\t"
		"mov %[loops], %%esi\n"
		"1:\n\t"
		"dec %%esi\n\t"
		"jnz 1b\n\t"
		"lea copy_src(%%rip), %%rsi\n\t"
		"lea copy_dst(%%rip), %%rdi\n\t"
		"mov $16, %%ecx\n\t"
		"rep movsb\n\t"
		"call 2f\n\t"
		"jmp 3f\n"
		"2:\n\t"
		"ret\n"
		"3:\n\t"
		"xor %%eax, %%eax\n\t"
		"xor %%edx, %%edx\n\t"
		"mov %[ctl], %%ecx\n\t"
		"wrmsr\n\t"
		: : "c"(PV_MSR_IA32_PERF_GLOBAL_CTRL), "a"((uint32_t)enable),
		    "d"((uint32_t)(enable >> 32)), [loops] "i"(LOOPS),
		    [ctl] "i"(PV_MSR_IA32_PERF_GLOBAL_CTRL)
		: "rsi", "rdi", "memory", "cc");
}

/* Called by tests/test-kernel-start.S on cpu 0. */
void kmain(void);
void kmain(void)
{
	uint32_t a, b, c, d;
	uint64_t enable = 0x7 | 1ull << PV_GLOBAL_FIXED_SHIFT;

	cpuid(0xa, &a, &b, &c, &d);
	check("cpuid.0a version", a & 0xff, 2);
	check("cpuid.0a gp counters >= 3", (a >> 8 & 0xff) >= 3, 1);
	check("cpuid.0a gp width", a >> 16 & 0xff, 48);
	check("cpuid.0a instructions available", b >> 1 & 1, 0);
	check("cpuid.0a branches available", b >> 5 & 1, 0);

	wrmsr(PV_MSR_IA32_PERF_GLOBAL_CTRL, 0);
	for (unsigned int i = 0; i < 3; i++)
		wrmsr(PV_MSR_IA32_A_PMC0 + i, 0);
	wrmsr(PV_MSR_IA32_FIXED_CTR0, 0);
	wrmsr(PV_MSR_IA32_PERFEVTSEL0,
	      evtsel(PV_EVENT_INSTRUCTIONS, PV_EVTSEL_OS));
	wrmsr(PV_MSR_IA32_PERFEVTSEL0 + 1,
	      evtsel(PV_EVENT_BRANCHES, PV_EVTSEL_OS));
	wrmsr(PV_MSR_IA32_PERFEVTSEL0 + 2,
	      evtsel(PV_EVENT_INSTRUCTIONS, PV_EVTSEL_USR));
	wrmsr(PV_MSR_IA32_FIXED_CTR_CTRL, 0x1);	/* fixed 0: OS */

	run_block(enable);

	check("instructions:k (PMC0)", rdmsr(PV_MSR_IA32_PMC0), BLOCK_INSNS);
	check("branches:k (PMC1)", rdmsr(PV_MSR_IA32_PMC0 + 1),
	      BLOCK_BRANCHES);
	check("instructions:u (PMC2)", rdmsr(PV_MSR_IA32_PMC0 + 2), 0);
	check("instructions:k (FIXED_CTR0)", rdmsr(PV_MSR_IA32_FIXED_CTR0),
	      BLOCK_INSNS);
	check("global status", rdmsr(PV_MSR_IA32_PERF_GLOBAL_STATUS), 0);

	/* A second run adds exactly as much: counting stopped in between. */
	run_block(enable);
	check("instructions:k twice", rdmsr(PV_MSR_IA32_PMC0),
	      2 * BLOCK_INSNS);
	check("branches:k twice", rdmsr(PV_MSR_IA32_PMC0 + 1),
	      2 * BLOCK_BRANCHES);
	log_line(failures ? "pmu-selftest: FAIL" : "pmu-selftest: all passed");
	for (;;)
		hcall(PV_HC_EXIT, failures ? 1 : 0, 0);
}
