// SPDX-License-Identifier: MIT
/*
 * A hostile guest kernel for `vmm run --kernel evil-kernel PROGRAM` (entry:
 * tests/test-kernel-start.S).  It
 * ignores PROGRAM and spends a few thousand operations attacking the VMM
 * from CPL0, where nothing stops it: random MSR reads and writes (the PMU
 * ranges with garbage values most of all), random port I/O including
 * string I/O, hypercalls with every number and with pointers outside
 * guest memory and huge lengths, LVTPC garbage with counters overflowing
 * at period 1.  The VMM must answer (#GP for an MSR, -errno for a
 * hypercall, all ones for a port) and keep running; the kernel checks the
 * answers and ends with PV_HC_EXIT: status 42 when every answer was right,
 * 43 when a hypercall that had to fail succeeded, 44 for a wrong -errno,
 * 99 for an unexpected exception.  A deterministic PRNG (seeded from the
 * first program argument's length, so every run does the same thing).
 * With "msrs" as its second argument it checks instead that MSRs outside
 * the PMU are KVM's (other_msrs()).
 *
 * Operations the kernel could only hurt itself with are left out: writes
 * to EFER, the kvmclock, steal-time and other paravirtual MSRs that make
 * KVM write guest memory, and hypercalls that would write over this image
 * (valid destinations are never generated).  Interrupts stay disabled.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boot.h"
#include "hypercall.h"
#include "layout.h"
#include "vpmu.h"

#define EFAULT	14
#define EBADF	9
#define ENOSYS	38
#define NOPS	3000

/* ---- exceptions: a fixup address for the operation in progress ---- */

struct frame {
	uint64_t r11, r10, r9, r8, rdi, rsi, rdx, rcx, rax;
	uint64_t vec, err, rip, cs, rflags, rsp, ss;
};

volatile uint64_t fixup_rip;
static volatile uint64_t nfaults;

static uint64_t last_args[4];

static uint64_t hcall(uint64_t nr, uint64_t a, uint64_t b, uint64_t c)
{
	register uint64_t r10 __asm__("r10") = c;
	uint64_t ret = nr;

	last_args[0] = nr;
	last_args[1] = a;
	last_args[2] = b;
	last_args[3] = c;
	__asm__ volatile("outb %%al, %%dx" : "+a"(ret)
			 : "d"(PV_HC_PORT), "D"(a), "S"(b), "r"(r10)
			 : "memory");
	return ret;
}

static __attribute__((noreturn)) void hc_exit(int status)
{
	for (;;)
		hcall(PV_HC_EXIT, status, 0, 0);
}

static void log_str(const char *s)
{
	uint64_t n = 0;

	while (s[n])
		n++;
	hcall(PV_HC_LOG, (uint64_t)s, n, 0);
}

void trap_c(struct frame *f)
{
	if (!fixup_rip)
		hc_exit(99);
	nfaults++;
	f->rip = fixup_rip;
	fixup_rip = 0;
}

/* 256 stubs; vectors with a CPU error code do not push a dummy one. */
__asm__(
	".text\n"
	".balign 16\n"
	"trap_stubs:\n"
	"vec = 0\n"
	".rept 256\n"
	".balign 16\n"
	".if vec == 8 || (vec >= 10 && vec <= 14) || vec == 17 || vec == 21 || vec == 29 || vec == 30\n"
	"	pushq $vec\n"
	".else\n"
	"	pushq $0\n"
	"	pushq $vec\n"
	".endif\n"
	"	jmp trap_common\n"
	"vec = vec + 1\n"
	".endr\n"
	"trap_common:\n"
	/* vec is on top, err below it: swap so the frame reads vec, err. */
	"	push %rax\n	push %rcx\n	push %rdx\n	push %rsi\n"
	"	push %rdi\n	push %r8\n	push %r9\n	push %r10\n	push %r11\n"
	"	mov 72(%rsp), %rax\n	xchg %rax, 80(%rsp)\n	mov %rax, 72(%rsp)\n"
	"	mov %rsp, %rdi\n"
	"	call trap_c\n"
	"	pop %r11\n	pop %r10\n	pop %r9\n	pop %r8\n	pop %rdi\n"
	"	pop %rsi\n	pop %rdx\n	pop %rcx\n	pop %rax\n"
	"	add $16, %rsp\n"
	"	iretq\n");

extern char trap_stubs[];

static uint64_t gdt[4] = {
	0, 0,
	0x00af9a000000ffffull,	/* 0x10: 64-bit code, DPL 0 */
	0x00cf92000000ffffull,	/* 0x18: data */
};
static struct { uint64_t lo, hi; } idt[256];

static void cpu_setup(void)
{
	struct { uint16_t lim; uint64_t base; } __attribute__((packed))
		gdtr = { sizeof(gdt) - 1, (uint64_t)gdt },
		idtr = { sizeof(idt) - 1, (uint64_t)idt };

	for (int i = 0; i < 256; i++) {
		uint64_t h = (uint64_t)trap_stubs + 16 * i;

		idt[i].lo = (h & 0xffff) | (uint64_t)PV_SEL_KCODE << 16 |
			    0x8eull << 40 | ((h >> 16) & 0xffff) << 48;
		idt[i].hi = h >> 32;
	}
	__asm__ volatile(
		"lgdt %0\n\t"
		"lidt %1\n\t"
		"pushq $0x10\n\t"
		"lea 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"mov $0x18, %%eax\n\t"
		"mov %%eax, %%ds\n\t"
		"mov %%eax, %%es\n\t"
		"mov %%eax, %%ss\n\t"
		: : "m"(gdtr), "m"(idtr) : "rax", "memory");
}

/*
 * The risky instructions: each sets fixup_rip to just past itself, so a #GP
 * resumes there.  Returns whether it faulted.
 */
static bool rdmsr_safe(uint32_t msr, uint64_t *val)
{
	uint64_t before = nfaults;
	uint32_t lo = 0, hi = 0;

	__asm__ volatile("lea 1f(%%rip), %%r11\n\t"
			 "mov %%r11, fixup_rip(%%rip)\n\t"
			 "rdmsr\n"
			 "1:\n\t"
			 "movq $0, fixup_rip(%%rip)"
			 : "+a"(lo), "+d"(hi) : "c"(msr) : "r11", "memory");
	*val = (uint64_t)hi << 32 | lo;
	return nfaults != before;
}

static bool wrmsr_safe(uint32_t msr, uint64_t val)
{
	uint64_t before = nfaults;

	__asm__ volatile("lea 1f(%%rip), %%r11\n\t"
			 "mov %%r11, fixup_rip(%%rip)\n\t"
			 "wrmsr\n"
			 "1:\n\t"
			 "movq $0, fixup_rip(%%rip)"
			 : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
			 : "r11", "memory");
	return nfaults != before;
}

/* ---- PRNG: xorshift64* ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* ---- the attacks ---- */

static uint64_t mem_size;
static unsigned int wrong_ok, wrong_errno;

static bool msr_write_harmful(uint32_t msr)
{
	return msr == 0xc0000080 ||			/* EFER */
	       msr == 0x11 || msr == 0x12 ||		/* kvmclock (old) */
	       (msr >= 0x4b564d00 && msr <= 0x4b564dff) ||	/* KVM PV */
	       (msr >= 0x40000000 && msr <= 0x400000ff) ||	/* Hyper-V */
	       msr == 0x1b;	/* APIC base: done on purpose, once */
}

static uint32_t pick_msr(void)
{
	static const uint32_t pmu[] = {
		PV_MSR_IA32_PMC0, PV_MSR_IA32_PERFEVTSEL0,
		PV_MSR_IA32_FIXED_CTR0, PV_MSR_IA32_FIXED_CTR_CTRL,
		PV_MSR_IA32_A_PMC0, PV_MSR_IA32_PERF_CAPABILITIES,
	};
	uint64_t r = rnd();

	switch (r % 8) {
	case 0:
	case 1:
	case 2:
	case 3:
		return pmu[(r >> 8) % 6] + (r >> 16) % 12 - 2;
	case 4:
		return (r >> 8) % 0x1000;
	case 5:
		return 0xc0000000 + (r >> 8) % 0x200;
	case 6:
		return 0x800 + (r >> 8) % 0x100;	/* x2APIC */
	default:
		return r >> 32;
	}
}

static uint64_t pick_val(void)
{
	uint64_t r = rnd();

	switch (r % 4) {
	case 0:
		return r >> 40;
	case 1:
		return PV_VPMU_MASK - (r >> 56);
	case 2:
		return (r >> 16 & 0xffff) | (r & 0x570000);	/* evtsel-like */
	default:
		return rnd();
	}
}

static void attack_msr(void)
{
	uint32_t msr = pick_msr();
	uint64_t v;

	if (rnd() & 1) {
		rdmsr_safe(msr, &v);
	} else if (!msr_write_harmful(msr)) {
		wrmsr_safe(msr, pick_val());
	}
}

static void attack_port(void)
{
	static uint8_t buf[256];
	uint64_t r = rnd();
	uint16_t port = r >> 16;

	/* Not the hypercall port (that is attack_hcall), not COM1 data. */
	if (port == PV_HC_PORT || port == PV_COM1_PORT)
		port = 0x80;
	switch (r % 8) {
	case 0:
		__asm__ volatile("outb %%al, %%dx" : : "a"(r >> 32), "d"(port));
		break;
	case 1:
		__asm__ volatile("outw %%ax, %%dx" : : "a"(r >> 32), "d"(port));
		break;
	case 2:
		__asm__ volatile("outl %%eax, %%dx" : : "a"(r >> 32), "d"(port));
		break;
	case 3: {
		uint8_t v;

		__asm__ volatile("inb %%dx, %%al" : "=a"(v) : "d"(port));
		break;
	}
	case 4: {
		uint32_t v;

		__asm__ volatile("inl %%dx, %%eax" : "=a"(v) : "d"(port));
		break;
	}
	case 5: {
		uint64_t n = (r >> 32) % 64 + 1;
		void *p = buf;

		__asm__ volatile("rep insb" : "+D"(p), "+c"(n) : "d"(port)
				 : "memory");
		break;
	}
	case 6: {
		uint64_t n = (r >> 32) % 64 + 1;
		const void *p = buf;

		__asm__ volatile("rep outsb" : "+S"(p), "+c"(n) : "d"(port));
		break;
	}
	default: {
		/* String output to the hypercall port: an odd hypercall. */
		uint64_t n = 2 + (r >> 32) % 8;
		const void *p = buf;
		uint64_t nr = PV_HC_NR + 100;

		__asm__ volatile("rep outsb" : "+S"(p), "+c"(n), "+a"(nr)
				 : "d"(PV_HC_PORT));
		break;
	}
	}
}

/* A guest physical or kernel virtual address that is not guest RAM. */
static uint64_t bad_addr(bool kva)
{
	uint64_t r = rnd();
	uint64_t base = kva ? PV_KERNEL_BASE : 0;

	switch (r % 5) {
	case 0:
		return base + mem_size + (r >> 20) % 0x10000;
	case 1:
		/* Straddles the end of RAM: callers pass a length past it. */
		return base + mem_size - 1 - (r >> 20) % 64;
	case 2:
		/* Near 2^64: kernel addresses there are RAM with --mem 2G. */
		return kva ? PV_KERNEL_BASE - 1 - (r >> 40) : -(r >> 40) - 1;
	case 3:
		return kva ? (r >> 20) % PV_USER_TOP : (r >> 1) | 1ull << 62;
	default:
		return rnd() | 1ull << 63;
	}
}

static uint64_t huge_len(void)
{
	uint64_t r = rnd();

	switch (r % 4) {
	case 0:
		return mem_size + (r >> 40);
	case 1:
		return -(r >> 48);
	case 2:
		return 1ull << (32 + (r >> 60));
	default:
		return 4096;	/* small: the address alone must fail */
	}
}

static void hex(char *p, uint64_t v)
{
	for (int i = 15; i >= 0; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 15];
}



/* The first few wrong answers are logged with the call that got them. */
static void expect(int64_t got, int64_t err)
{
	static char m[] = "evil: wrong answer 0000000000000000 to "
			  "0000000000000000 0000000000000000 "
			  "0000000000000000 0000000000000000";

	if (got == -err)
		return;
	if (got >= 0)
		wrong_ok++;
	else
		wrong_errno++;
	if (wrong_ok + wrong_errno > 5)
		return;
	hex(m + 19, got);
	for (int i = 0; i < 4; i++)
		hex(m + 39 + 17 * i, last_args[i]);
	log_str(m);
}

static void attack_hcall(void)
{
	uint64_t r = rnd();

	switch (r % 12) {
	case 0: {
		/* Addresses straddling the end of RAM need a length. */
		uint64_t a = bad_addr(false), len = huge_len();

		if (a + len > a && a + len <= mem_size)
			len = mem_size - a + 1;
		expect(hcall(PV_HC_COPY, a, 0x10000, len), EFAULT);
		break;
	}
	case 1:
		expect(hcall(PV_HC_COPY, 0x10000, bad_addr(false), huge_len()),
		       EFAULT);
		break;
	case 2: {
		uint64_t a = bad_addr(false), len = huge_len();

		if (a + len > a && a + len <= mem_size)
			len = mem_size - a + 1;
		expect(hcall(PV_HC_ZERO, a, len, 0), EFAULT);
		break;
	}
	case 3:
		expect(hcall(PV_HC_MEMCPY, bad_addr(true), PV_KERNEL_BASE,
			     huge_len()), EFAULT);
		break;
	case 4:
		expect(hcall(PV_HC_MEMSET, bad_addr(true), r >> 32,
			     huge_len()), EFAULT);
		break;
	case 5:
		/* Only -EFAULT: the kernel's page tables have no user pages. */
		expect(hcall(PV_HC_WRITE, 1 + (r >> 8) % 2, bad_addr(true),
			     huge_len()), EFAULT);
		break;
	case 6:
		expect(hcall(PV_HC_READ, 0, bad_addr(true), huge_len()),
		       EFAULT);
		break;
	case 7:
		expect(hcall(PV_HC_LOG, (r >> 8) % PV_KERNEL_BASE, 16, 0),
		       EFAULT);
		break;
	case 8:
		/* The record is small: start it past the end of RAM. */
		expect(hcall(PV_HC_STAT_THREAD, mem_size + (r >> 40), 0, 0),
		       EFAULT);
		break;
	case 9:
		expect(hcall(PV_HC_PMU_VCPU_PAGE, bad_addr(false) | 1, 0, 0),
		       EFAULT);
		expect(hcall(PV_HC_PMU_SWITCH, bad_addr(false),
			     bad_addr(false), r), EFAULT);
		break;
	case 10: {
		uint64_t nr = rnd();

		if (nr < PV_HC_NR || (nr >= PV_HC_PMU_VCPU_PAGE &&
				      nr < PV_HC_PMU_NR))
			nr = PV_HC_NR + 1;
		expect(hcall(nr, bad_addr(false), rnd(), rnd()), ENOSYS);
		break;
	}
	default:
		expect(hcall(PV_HC_WRITE, 3 + (r >> 8) % 1000, 0, 1), EBADF);
		break;
	}
}

/* Counters overflowing at period 1 with LVTPC holding garbage. */
static void attack_lvtpc(void)
{
	uint64_t r = rnd();

	wrmsr_safe(PV_MSR_IA32_A_PMC0 + r % 4, PV_VPMU_MASK);
	wrmsr_safe(PV_MSR_IA32_PERFEVTSEL0 + r % 4,
		   PV_EVTSEL_EN | PV_EVTSEL_INT | PV_EVTSEL_OS | 0xc0);
	wrmsr_safe(PV_MSR_IA32_FIXED_CTR0 + r % 3, PV_VPMU_MASK);
	wrmsr_safe(PV_MSR_IA32_FIXED_CTR_CTRL, 0x999);
	wrmsr_safe(PV_MSR_IA32_PERF_GLOBAL_CTRL, 0x70000000full);
	/* x2APIC LVTPC: any vector (even < 16), any mode, unmasked. */
	wrmsr_safe(0x834, (r >> 8) & 0x1ffff & ~(1ull << 16));
	wrmsr_safe(PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL, rnd());
}

/* COM1 bytes, one `out` each: the VMM line-buffers them. */
static void serial_str(const char *s)
{
	for (; *s; s++)
		__asm__ volatile("outb %%al, %%dx" : : "a"(*s), "d"(0x3f8));
}

/* The second word of the boot arguments (after argv[0]), or NULL. */
static const char *second_arg(const struct pv_boot_params *bp)
{
	const char *a = bp->args;

	if (bp->argc < 2)
		return NULL;
	while (*a)
		a++;
	return a + 1;
}

/*
 * "msrs": the MSRs outside the PMU are KVM's (the VMM's filter denies only
 * the PMU ranges and allows the rest), so the architectural ones a kernel
 * needs behave as on hardware, with no exit to the VMM, whose answer to
 * an MSR it does not model would be #GP.  Exit 42 when each did, else 45
 * after naming the first that did not.
 */
#define MSR_TSC			0x10
#define MSR_APIC_BASE		0x1b
#define MSR_EFER		0xc0000080
#define MSR_STAR		0xc0000081
#define MSR_FS_BASE		0xc0000100
#define MSR_GS_BASE		0xc0000101
#define MSR_KERNEL_GS_BASE	0xc0000102

static void msr_fail(const char *what)
{
	log_str(what);
	hc_exit(45);
}

/* A write of val, then a read that must give it back. */
static void msr_round_trip(uint32_t msr, uint64_t val, const char *what)
{
	uint64_t got;

	if (wrmsr_safe(msr, val) || rdmsr_safe(msr, &got) || got != val)
		msr_fail(what);
}

static void other_msrs(const struct pv_boot_params *bp)
{
	const char *a = second_arg(bp);
	uint64_t v, t0, t1;
	uint32_t lo, hi;

	if (!a || a[0] != 'm')
		return;
	if (rdmsr_safe(MSR_EFER, &v) || (v & 0x500) != 0x500)
		msr_fail("evil: EFER unreadable or without LME and LMA");
	if (rdmsr_safe(MSR_APIC_BASE, &v) ||
	    (v & 0xfffff000) != 0xfee00000 || !(v & 0x900))
		msr_fail("evil: APIC_BASE unreadable or not an enabled BSP's");
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	t0 = (uint64_t)hi << 32 | lo;
	if (rdmsr_safe(MSR_TSC, &v))
		msr_fail("evil: IA32_TSC unreadable");
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	t1 = (uint64_t)hi << 32 | lo;
	if (v < t0 || v > t1)
		msr_fail("evil: IA32_TSC outside the rdtscs around it");
	msr_round_trip(MSR_FS_BASE, 0x7f0012345000ull,
		       "evil: FS_BASE write not read back");
	msr_round_trip(MSR_GS_BASE, 0x7f00abcde000ull,
		       "evil: GS_BASE write not read back");
	msr_round_trip(MSR_KERNEL_GS_BASE, 0xffff800012340000ull,
		       "evil: KERNEL_GS_BASE write not read back");
	msr_round_trip(MSR_STAR, 0x0023001000000000ull,
		       "evil: STAR write not read back");
	log_str("evil: other MSRs are KVM's");
	hc_exit(42);
}

/*
 * The second word of the boot arguments (after argv[0]) picks a way to
 * die with output still in flight: "panic" (PV_HC_PANIC) or "triple" (a
 * triple fault).  The VMM must print what was written, then exit 125.
 */
static void die_with_output(const struct pv_boot_params *bp)
{
	const char *a = second_arg(bp);

	if (!a || (a[0] != 'p' && a[0] != 't'))
		return;
	serial_str("evil: a full serial line\nevil: half a line");
	if (a[0] == 'p') {
		static const char m[] = "evil: deliberate panic";

		__asm__ volatile("outb %%al, %%dx" : : "a"(4), "d"(0x510),
				 "D"(m), "S"(sizeof(m) - 1) : "memory");
	}
	/* No IDT: the next exception cannot be delivered (triple fault). */
	{
		struct { uint16_t limit; uint64_t base; } __attribute__((packed))
			none = { 0, 0 };

		__asm__ volatile("lidt %0; ud2" : : "m"(none));
	}
	for (;;)
		;
}

void kmain(const struct pv_boot_params *bp)
{
	static char msg[] = "evil: faults 0000000000000000 ok? 0000000000000000"
			    " errno? 0000000000000000";
	uint64_t apic;

	cpu_setup();
	die_with_output(bp);
	other_msrs(bp);
	mem_size = bp->mem_size;
	rng_state ^= bp->args_len;
	log_str("evil: attacking the VMM");
	/* x2APIC on, so LVTPC is an MSR (xAPIC MMIO is not mapped). */
	if (!rdmsr_safe(0x1b, &apic))
		wrmsr_safe(0x1b, apic | 0xc00);
	for (int i = 0; i < NOPS; i++) {
		uint64_t r = rnd() % 100;

		if (r < 35)
			attack_msr();
		else if (r < 55)
			attack_port();
		else if (r < 92)
			attack_hcall();
		else
			attack_lvtpc();
	}
	hex(msg + 13, nfaults);
	hex(msg + 34, wrong_ok);
	hex(msg + 58, wrong_errno);
	log_str(msg);
	hc_exit(wrong_ok ? 43 : wrong_errno ? 44 : 42);
}
