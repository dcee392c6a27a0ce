// SPDX-License-Identifier: MIT
/*
 * Every kind of branch that ends a basic block, for the step source's
 * counting by blocks (vmm/core/step_block.c), where the VMM emulates the
 * branch under its int3: each must land where the CPU would, with the
 * registers, flags and memory it would leave, and count as stepping does.
 *
 *   blockedge N          N rounds of all of them; prints "blockedge: ok"
 *   blockedge callfault  calls whose push faults, a ret whose pop does,
 *                        indirect branches whose operand does: SIGSEGV
 *                        at the branch, si_addr the slot
 *
 * Run against the ptrace oracle (tests/kvm/check_oracle.sh) the counts of
 * two N must differ in the guest exactly as natively.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(const char *what, long got, long want)
{
	if (got != want) {
		printf("blockedge: %s: %ld, want %ld\n", what, got, want);
		failures++;
	}
}

/* All 16 conditions, taken and not, from flags the test sets with popf. */
static void jcc_all(void)
{
	static const unsigned long flags[] = {
		0x000, 0x001, 0x004, 0x040, 0x080, 0x800, 0x041, 0x880,
		0x8c1, 0x845,
	};

	for (unsigned int i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		unsigned long taken = 0, f = flags[i] | 0x202;

#define JCC(op, bit)							\
		__asm__ volatile("push %1\n\tpopf\n\t" op " 1f\n\t"		\
				 "jmp 2f\n1:\tor %2, %0\n2:"			\
				 : "+r"(taken) : "r"(f), "i"(1ul << bit)	\
				 : "cc", "memory")
		JCC("jo", 0); JCC("jno", 1); JCC("jb", 2); JCC("jae", 3);
		JCC("je", 4); JCC("jne", 5); JCC("jbe", 6); JCC("ja", 7);
		JCC("js", 8); JCC("jns", 9); JCC("jp", 10); JCC("jnp", 11);
		JCC("jl", 12); JCC("jge", 13); JCC("jle", 14); JCC("jg", 15);
#undef JCC
		{
			bool of = f & 0x800, cf = f & 1, zf = f & 0x40,
			     sf = f & 0x80, pf = f & 4;
			unsigned long want = of | !of << 1 | cf << 2 |
				!cf << 3 | zf << 4 | !zf << 5 |
				(cf || zf) << 6 | !(cf || zf) << 7 |
				sf << 8 | !sf << 9 | pf << 10 | !pf << 11 |
				(sf != of) << 12 | (sf == of) << 13 |
				(zf || sf != of) << 14 |
				(!zf && sf == of) << 15;

			check("jcc", (long)taken, (long)want);
		}
	}
}

static long target_a(long x) { return x * 3 + 1; }
static long target_b(long x) { return x - 7; }
static long (*volatile fn_ptr)(long) = target_a;
static long (*const table[2])(long) = { target_a, target_b };
static __thread long (*tls_fn)(long);

/* Indirect calls through a register, memory with base, index, scale and
 * displacement, RIP-relative memory, and the fs segment. */
static void indirect_calls(void)
{
	long r, k = 1;
	uintptr_t tp, off;

	long a = 5;

	__asm__ volatile("call *%2" : "=a"(r), "+D"(a) : "r"(target_a)
			 : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11",
			   "cc", "memory");
	check("call *reg", r, 16);
	a = 20;
	__asm__ volatile("call *-8(%2,%3,8)" : "=a"(r), "+D"(a)
			 : "r"(&table[1]), "r"(k)
			 : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11",
			   "cc", "memory");
	check("call *disp(base,index,8)", r, 13);
	a = 2;
	__asm__ volatile("call *fn_ptr(%%rip)" : "=a"(r), "+D"(a)
			 : : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11",
			   "cc", "memory");
	check("call *rip-relative", r, 7);
	tls_fn = target_b;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	off = (uintptr_t)&tls_fn - tp;
	a = 100;
	__asm__ volatile("call *%%fs:(%2)" : "=a"(r), "+D"(a) : "r"(off)
			 : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11",
			   "cc", "memory");
	check("call *%fs:(reg)", r, 93);
}

/* An indirect jump through a table, as a switch compiles to. */
static void indirect_jump(void)
{
	for (long i = 0; i < 3; i++) {
		long r;

		__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
				 "lea 2f(%%rip), %%rdx\n\t"
				 "lea 3f(%%rip), %%rsi\n\t"
				 "push %%rsi\n\tpush %%rdx\n\tpush %%rax\n\t"
				 "jmp *(%%rsp,%1,8)\n"
				 "1:\tmov $10, %0\n\tjmp 4f\n"
				 "2:\tmov $20, %0\n\tjmp 4f\n"
				 "3:\tmov $30, %0\n"
				 "4:\tadd $24, %%rsp"
				 : "=&r"(r) : "r"(i) : "rax", "rdx", "rsi", "memory");
		check("jmp *(rsp,index,8)", r, 10 * (i + 1));
	}
}

/* ret imm16 drops its arguments; the stack must end where it began. */
static void ret_imm(void)
{
	long before, after, r;

	__asm__ volatile("mov %%rsp, %0\n\t"
			 "push $7\n\tpush $9\n\t"
			 "call 1f\n\tjmp 2f\n"
			 "1:\tmov 8(%%rsp), %2\n\tadd 16(%%rsp), %2\n\tret $16\n"
			 "2:\tmov %%rsp, %1"
			 : "=&r"(before), "=&r"(after), "=&r"(r) : : "memory");
	check("ret $16: stack", after, before);
	check("ret $16: arguments", r, 16);
}

/* loop, loope, loopne, jrcxz: rcx and the flags decide. */
static void loops(void)
{
	long n = 0, c;

	__asm__ volatile("mov $5, %%rcx\n1:\tinc %0\n\tloop 1b\n\tmov %%rcx, %1"
			 : "+r"(n), "=r"(c) : : "rcx", "cc");
	check("loop: iterations", n, 5);
	check("loop: rcx", c, 0);
	n = 0;
	__asm__ volatile("mov $9, %%rcx\n1:\tinc %0\n\tcmp $3, %0\n\t"
			 "loopne 1b\n\tmov %%rcx, %1"
			 : "+r"(n), "=r"(c) : : "rcx", "cc");
	check("loopne: iterations", n, 3);
	check("loopne: rcx", c, 6);
	n = 0;
	__asm__ volatile("mov $9, %%rcx\n1:\tinc %0\n\tcmp %0, %0\n\t"
			 "loope 1b\n\tmov %%rcx, %1"
			 : "+r"(n), "=r"(c) : : "rcx", "cc");
	check("loope: iterations", n, 9);
	check("loope: rcx", c, 0);
	__asm__ volatile("xor %%ecx, %%ecx\n\tmov $1, %0\n\tjrcxz 1f\n\t"
			 "mov $2, %0\n1:" : "=r"(n) : : "rcx");
	check("jrcxz taken", n, 1);
	__asm__ volatile("mov $4, %%ecx\n\tmov $1, %0\n\tjrcxz 1f\n\t"
			 "mov $2, %0\n1:" : "=r"(n) : : "rcx");
	check("jrcxz not taken", n, 2);
}

static sigjmp_buf fault_env;
static volatile uintptr_t fault_addr;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	fault_addr = (uintptr_t)si->si_addr;
	siglongjmp(fault_env, 1);
}

/*
 * Branches whose stack or operand access faults, at an unmapped rsp or
 * pointer: the CPU faults at the branch, on the slot it reads or writes,
 * and nothing retires.  A direct call runs natively inside a block; an
 * indirect one and a ret end one, and the VMM emulates them or the code
 * cache looks them up in its tables (kinds 3-5: an operand that faults
 * in the lookup, and a call that found its target's copy twice before its
 * push faults).
 */
static int stack_fault(const char *what, int kind)
{
	const uintptr_t bad = 0x10008;	/* below any mapping */
	uintptr_t want = kind == 2 || kind >= 3 ? bad : bad - 8;

	fault_addr = 0;
	if (!sigsetjmp(fault_env, 1)) {
		if (kind == 0)
			__asm__ volatile("mov %0, %%rsp\n\tcall 1f\n1:\tud2"
					 : : "r"(bad) : "memory");
		else if (kind == 1)
			__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
					 "mov %0, %%rsp\n\tcall *%%rax\n1:\tud2"
					 : : "r"(bad) : "rax", "memory");
		else if (kind == 2)
			__asm__ volatile("mov %0, %%rsp\n\tret"
					 : : "r"(bad) : "memory");
		else if (kind == 3)
			__asm__ volatile("call *(%0)\n\tud2"
					 : : "r"(bad) : "memory");
		else if (kind == 4)
			__asm__ volatile("jmp *8(%0)\n\tud2"
					 : : "r"(bad - 8) : "memory");
		else
			__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
					 "mov $3, %%r13\n"
					 "1:\tdec %%r13\n\tjnz 2f\n\t"
					 "lea 8(%0), %%rsp\n"
					 "2:\tlea 3f(%%rip), %%rax\n\t"
					 "call *%%rax\n\tjmp 1b\n"
					 "3:\tret"
					 : : "r"(bad) : "rax", "r13", "memory");
	}
	printf("callfault: %s: si_addr %#lx, want %#lx: %s\n", what,
	       (unsigned long)fault_addr, (unsigned long)want,
	       fault_addr == want ? "ok" : "WRONG");
	return fault_addr != want;
}

static int call_fault(void)
{
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigaltstack(&ss, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	return stack_fault("call", 0) | stack_fault("call *reg", 1) |
	       stack_fault("ret", 2) | stack_fault("call *mem", 3) |
	       stack_fault("jmp *mem", 4) |
	       stack_fault("call *reg, third time", 5);
}

int main(int argc, char **argv)
{
	long rounds;

	if (argc > 1 && !strcmp(argv[1], "callfault"))
		return call_fault();
	rounds = argc > 1 ? atol(argv[1]) : 1;
	for (long i = 0; i < rounds; i++) {
		jcc_all();
		indirect_calls();
		indirect_jump();
		ret_imm();
		loops();
	}
	printf("blockedge: %s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
