// SPDX-License-Identifier: MIT
/*
 * Hostile memory accesses and privileged instructions from user mode.  Each
 * mode prints what it is about to do and then does it: the guest kernel
 * must kill the program with SIGSEGV (status 139), never fault itself, and
 * the line printed before must still reach stdout.  Mode "all" installs a
 * SIGSEGV handler, does every one of them in turn and prints a verdict:
 * the kernel must deliver each fault to the program and let it go on.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char rodata[64] = "read-only";

static void w8(uintptr_t a)
{
	__asm__ volatile("" : "+r"(a));
	*(volatile uint8_t *)a = 1;
}

static void do_null(void) { w8(0); }
static void do_null_read(void)
{
	uintptr_t a = 8;

	/* Through asm: the compiler may not see a constant null pointer. */
	__asm__ volatile("" : "+r"(a));
	(void)*(volatile int *)a;
}
static void do_kernel_text(void) { w8(0xffffffff80200000ul); }
static void do_kernel_top(void) { w8(0xfffffffffffff000ul); }
/* Non-canonical: #GP rather than #PF, the same SIGSEGV. */
static void do_noncanonical(void) { w8(0x8000000000000000ul); }
static void do_user_hole(void) { w8(0x100000000000ul); }
static void do_rodata(void) { w8((uintptr_t)rodata); }
static void do_text(void) { w8((uintptr_t)do_text); }

static void do_mmap_ro(void)
{
	char *p = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return;
	w8((uintptr_t)p + 4096);
}

static void do_mprotect_ro(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	p[0] = 1;
	if (mprotect(p, 8192, PROT_READ))
		return;
	w8((uintptr_t)p);
}

static void do_munmapped(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	p[0] = 1;
	munmap(p, 8192);
	w8((uintptr_t)p);
}

/* Counter access without the kernel: rdpmc #GPs (CR4.PCE clear under PVM
 * anyway), rdmsr/wrmsr are CPL0-only whatever the MSR. */
static void do_rdpmc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(0));
}

static void do_rdpmc_fixed(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(1u << 30));
}

static void do_wrmsr_evtsel(void)
{
	/* PERFEVTSEL0: instructions, USR|OS|INT|EN, reserved bits too. */
	__asm__ volatile("wrmsr" : : "c"(0x186), "a"(0x005300c0), "d"(0xffff));
}

static void do_wrmsr_global(void)
{
	__asm__ volatile("wrmsr" : : "c"(0x38f), "a"(0xf), "d"(7));
}

static void do_rdmsr_pmc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(0xc1));
}

static void do_cli(void) { __asm__ volatile("cli"); }
static void do_lidt(void)
{
	static const struct { uint16_t lim; uint64_t base; }
		__attribute__((packed)) idt = { 0, 0 };

	__asm__ volatile("lidt %0" : : "m"(idt));
}
static void do_mov_cr3(void) { __asm__ volatile("mov %0, %%cr3" : : "r"(0ul)); }

/*
 * A hypercall straight from user mode: the port is denied by the TSS
 * I/O bitmap, so this is a #GP, not a PV_HC_EXIT with status 77.
 */
static void do_hypercall_exit(void)
{
	__asm__ volatile("outb %%al, %%dx" : : "a"(0), "D"(77), "d"(0x510));
}

/*
 * rt_sigreturn with a forged frame (Linux's x86-64 ucontext at rsp): the
 * kernel takes registers from user memory and must not trust them.
 */
extern char hc_exit77[];
__asm__(".text\nhc_exit77:\n"
	"	xor %eax, %eax\n"		/* PV_HC_EXIT */
	"	mov $77, %edi\n"
	"	mov $0x510, %edx\n"
	"	out %al, %dx\n"
	"	ud2\n");

static uint64_t forged[64] __attribute__((aligned(64)));
static uint64_t alt_stack[512] __attribute__((aligned(64)));

#define UC_MC		5	/* uc_flags, uc_link, ss_sp, ss_flags, ss_size */
#define MC_RSP		15
#define MC_RIP		16
#define MC_EFLAGS	17

static void sigreturn_with(uint64_t rip, uint64_t eflags, uint64_t frame)
{
	memset(forged, 0, sizeof(forged));
	forged[UC_MC + MC_RSP] = (uint64_t)(alt_stack + 500);
	forged[UC_MC + MC_RIP] = rip;
	forged[UC_MC + MC_EFLAGS] = eflags;
	__asm__ volatile("mov %0, %%rsp\n\tmov $15, %%eax\n\tsyscall"
			 : : "r"(frame) : "memory", "rax", "rcx", "r11");
	__builtin_unreachable();
}

static void do_sigreturn_noncanon(void)
{
	sigreturn_with(0x8000000000001000ul, 0x202, (uint64_t)forged);
}

static void do_sigreturn_kernel_rip(void)
{
	sigreturn_with(0xffffffff80200000ul, 0x202, (uint64_t)forged);
}

/* IOPL 3 would let user code reach the hypercall port: must be masked. */
static void do_sigreturn_iopl(void)
{
	sigreturn_with((uint64_t)hc_exit77, 0x3202, (uint64_t)forged);
}

static void do_sigreturn_badframe(void)
{
	sigreturn_with((uint64_t)hc_exit77, 0x202, 0xffffffff80200000ul);
}

struct mode {
	const char *name;
	void (*fn)(void);
};

static const struct mode modes[] = {
	{ "null", do_null }, { "null-read", do_null_read },
	{ "kernel-text", do_kernel_text }, { "kernel-top", do_kernel_top },
	{ "noncanonical", do_noncanonical }, { "user-hole", do_user_hole },
	{ "rodata", do_rodata }, { "text", do_text },
	{ "mmap-ro", do_mmap_ro }, { "mprotect-ro", do_mprotect_ro },
	{ "munmapped", do_munmapped },
	{ "rdpmc", do_rdpmc }, { "rdpmc-fixed", do_rdpmc_fixed },
	{ "wrmsr-evtsel", do_wrmsr_evtsel }, { "wrmsr-global", do_wrmsr_global },
	{ "rdmsr-pmc", do_rdmsr_pmc }, { "cli", do_cli }, { "lidt", do_lidt },
	{ "mov-cr3", do_mov_cr3 }, { "hypercall-exit", do_hypercall_exit },
	/* Not in "all": they replace the whole register state. */
	{ "sigreturn-noncanon", do_sigreturn_noncanon },
	{ "sigreturn-kernel-rip", do_sigreturn_kernel_rip },
	{ "sigreturn-iopl", do_sigreturn_iopl },
	{ "sigreturn-badframe", do_sigreturn_badframe },
};
#define NALL 20
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static sigjmp_buf jb;
static volatile int last_sig;

static void on_fault(int sig)
{
	last_sig = sig;
	siglongjmp(jb, 1);
}

static int run_all(void)
{
	struct sigaction sa = { .sa_handler = on_fault };
	volatile unsigned int ok = 0;

	sigaction(SIGSEGV, &sa, NULL);
	for (unsigned int i = 0; i < NALL; i++) {
		last_sig = 0;
		if (!sigsetjmp(jb, 1)) {
			modes[i].fn();
			printf("%s: no fault\n", modes[i].name);
		} else if (last_sig != SIGSEGV) {
			printf("%s: signal %d\n", modes[i].name, last_sig);
		} else {
			ok++;
		}
	}
	printf("faults: %u/%u faulted with SIGSEGV\n", (unsigned int)ok, NALL);
	return ok == NALL ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "all";

	if (!strcmp(how, "all"))
		return run_all();
	for (unsigned int i = 0; i < NMODES; i++) {
		if (strcmp(how, modes[i].name))
			continue;
		printf("about to fault: %s\n", how);
		fflush(stdout);
		modes[i].fn();
		printf("%s: survived\n", how);
		return 1;
	}
	fprintf(stderr, "faults: unknown mode %s\n", how);
	return 2;
}
