// SPDX-License-Identifier: MIT
/*
 * The code cache's jump lookup reads an indirect jmp's or call's target
 * by the branch's own operand made into `mov r/m64,%rcx`
 * (step_translate.c, trans_operand_load()).  Each form against the
 * bytes GNU as gives that mov (in its 8B form: for register to register
 * as picks 89), and the forms it must refuse.  The KVM
 * tests step-block-branches and step-block-faults run them in a guest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "step_translate.h"

#define WIN	0x200000ull
#define AT	0x4000u		/* where in the window the mov goes */
#define END	0x401000ull	/* where the branch is in the program */

static struct emit e;

static void emit_reset(void)
{
	e.win = WIN;
	e.at = AT;
	e.len = e.npos = e.nex = 0;
}

/* The mov for the branch in `insn`, or -1; its bytes in e.buf. */
static int load(const uint8_t *insn, size_t len, enum x86_branch br)
{
	struct block b = { .end = END, .br = br };

	assert_int_equal(x86_insn_decode(insn, len, &b.insn), 0);
	assert_int_equal(b.insn.len, len);
	emit_reset();
	return trans_operand_load(&e, &b, insn);
}

static void expect(const uint8_t *insn, size_t len, enum x86_branch br,
		   const uint8_t *mov, size_t mov_len)
{
	assert_int_equal(load(insn, len, br), 0);
	assert_int_equal(e.len, mov_len);
	assert_memory_equal(e.buf, mov, mov_len);
}

#define EXPECT(br, insn, mov)						\
	expect((const uint8_t[])insn, sizeof((const uint8_t[])insn), br,	\
	       (const uint8_t[])mov, sizeof((const uint8_t[])mov))
#define B(...)	{ __VA_ARGS__ }

static void test_register_operands(void **state)
{
	(void)state;
	/* jmp *%rax -> mov %rax,%rcx */
	EXPECT(X86_BR_JMP_IND, B(0xff, 0xe0), B(0x48, 0x8b, 0xc8));
	/* call *%r11 -> mov %r11,%rcx */
	EXPECT(X86_BR_CALL_IND, B(0x41, 0xff, 0xd3), B(0x49, 0x8b, 0xcb));
	/* jmp *%rcx: the register the lookup borrows, read before it is */
	EXPECT(X86_BR_JMP_IND, B(0xff, 0xe1), B(0x48, 0x8b, 0xc9));
	/* REX.R on the branch means nothing; on the mov it would name r9 */
	EXPECT(X86_BR_JMP_IND, B(0x44, 0xff, 0xe0), B(0x48, 0x8b, 0xc8));
}

static void test_memory_operands(void **state)
{
	(void)state;
	/* jmp *0x4b0000(,%rax,8) -> mov 0x4b0000(,%rax,8),%rcx */
	EXPECT(X86_BR_JMP_IND, B(0xff, 0x24, 0xc5, 0x00, 0x00, 0x4b, 0x00),
	       B(0x48, 0x8b, 0x0c, 0xc5, 0x00, 0x00, 0x4b, 0x00));
	/* call *8(%rsp) -> mov 8(%rsp),%rcx */
	EXPECT(X86_BR_CALL_IND, B(0xff, 0x54, 0x24, 0x08),
	       B(0x48, 0x8b, 0x4c, 0x24, 0x08));
	/* call *-8(%r12,%r13,8) -> mov -8(%r12,%r13,8),%rcx */
	EXPECT(X86_BR_CALL_IND, B(0x43, 0xff, 0x54, 0xec, 0xf8),
	       B(0x4b, 0x8b, 0x4c, 0xec, 0xf8));
	/* call *%fs:0x10 -> mov %fs:0x10,%rcx */
	EXPECT(X86_BR_CALL_IND, B(0x64, 0xff, 0x14, 0x25, 0x10, 0, 0, 0),
	       B(0x64, 0x48, 0x8b, 0x0c, 0x25, 0x10, 0, 0, 0));
	/* notrack jmp *(%rdx): a ds prefix, kept and meaning nothing */
	EXPECT(X86_BR_JMP_IND, B(0x3e, 0xff, 0x22), B(0x3e, 0x48, 0x8b, 0x0a));
}

/* call *0x1000(%rip) at END reads END + 6 + 0x1000; so must the mov
 * from WIN + AT, 7 bytes long. */
static void test_rip_relative(void **state)
{
	const uint8_t call[] = { 0xff, 0x15, 0x00, 0x10, 0x00, 0x00 };
	uint64_t ea = END + sizeof(call) + 0x1000;
	int32_t disp;

	(void)state;
	assert_int_equal(load(call, sizeof(call), X86_BR_CALL_IND), 0);
	assert_int_equal(e.len, 7);
	assert_memory_equal(e.buf, ((const uint8_t[]){ 0x48, 0x8b, 0x0d }), 3);
	memcpy(&disp, e.buf + 3, 4);
	assert_int_equal(WIN + AT + 7 + (uint64_t)(int64_t)disp, ea);
}

static void test_refused(void **state)
{
	/* bnd jmp *%rax: f2 on a mov is no bnd */
	const uint8_t bnd[] = { 0xf2, 0xff, 0xe0 };
	/* jmp *0x7fff0000(%rip): out of the window's rel32 reach */
	const uint8_t far[] = { 0xff, 0x25, 0x00, 0x00, 0xff, 0x7f };
	struct block b = { .end = END, .br = X86_BR_JMP_IND };

	(void)state;
	assert_int_equal(load(bnd, sizeof(bnd), X86_BR_JMP_IND), -1);
	b.end = 0x7fff00000000ull;
	assert_int_equal(x86_insn_decode(far, sizeof(far), &b.insn), 0);
	emit_reset();
	assert_int_equal(trans_operand_load(&e, &b, far), -1);
}

#define FLAGS(want, ...)						\
	do {								\
		static const uint8_t b_[] = { __VA_ARGS__ };		\
		struct x86_insn in_;					\
									\
		assert_int_equal(x86_insn_decode(b_, sizeof(b_), &in_), 0); \
		assert_int_equal(in_.len, sizeof(b_));			\
		assert_int_equal(trans_flags_effect(&in_), (want));	\
	} while (0)

/*
 * The fast prologue (two adds, which write the flags) goes only where a
 * block writes all six arithmetic flags before reading any: an
 * instruction called FL_KEEP or FL_KILL that is not would let a count
 * change what a program computes.
 */
static void test_flags_effect(void **state)
{
	(void)state;
	FLAGS(FL_KEEP, 0x48, 0x89, 0xf8);		/* mov %rdi,%rax */
	FLAGS(FL_KEEP, 0x48, 0x8d, 0x64, 0x24, 0x08);	/* lea 8(%rsp),%rsp */
	FLAGS(FL_KEEP, 0x53);				/* push %rbx */
	FLAGS(FL_KEEP, 0x41, 0x5d);			/* pop %r13 */
	FLAGS(FL_KEEP, 0x0f, 0xb6, 0x07);		/* movzbl (%rdi),%eax */
	FLAGS(FL_KEEP, 0xf2, 0x0f, 0x10, 0x07);		/* movsd (%rdi),%xmm0 */
	FLAGS(FL_KEEP, 0x0f, 0x1f, 0x40, 0x00);		/* nopl 0(%rax) */
	FLAGS(FL_KEEP, 0x48, 0xf7, 0xd0);		/* not %rax */
	FLAGS(FL_KEEP, 0xb8, 0x01, 0, 0, 0);		/* mov $1,%eax */
	FLAGS(FL_KEEP, 0xc7, 0x00, 0, 0, 0, 0);		/* movl $0,(%rax) */
	FLAGS(FL_KEEP, 0x48, 0x98);			/* cltq */
	FLAGS(FL_KILL, 0x48, 0x01, 0xf7);		/* add %rsi,%rdi */
	FLAGS(FL_KILL, 0x83, 0xf8, 0x05);		/* cmp $5,%eax */
	FLAGS(FL_KILL, 0x31, 0xc0);			/* xor %eax,%eax */
	FLAGS(FL_KILL, 0x84, 0xc0);			/* test %al,%al */
	FLAGS(FL_KILL, 0x2b, 0x07);			/* sub (%rdi),%eax */
	FLAGS(FL_KILL, 0x48, 0xf7, 0xd8);		/* neg %rax */
	FLAGS(FL_KILL, 0x48, 0x0f, 0xaf, 0xc6);		/* imul %rsi,%rax */
	FLAGS(FL_KILL, 0x66, 0x0f, 0x2e, 0xc1);		/* ucomisd %xmm1,%xmm0 */
	FLAGS(FL_KILL, 0x25, 0xff, 0, 0, 0);		/* and $0xff,%eax */
	FLAGS(FL_KILL, 0x80, 0x3f, 0x00);		/* cmpb $0,(%rdi) */
	FLAGS(FL_KILL, 0xf0, 0x48, 0x01, 0x07);		/* lock add %rax,(%rdi) */
	FLAGS(FL_USE, 0x48, 0x11, 0xf7);		/* adc %rsi,%rdi: CF */
	FLAGS(FL_USE, 0x83, 0xd8, 0x00);		/* sbb $0,%eax: CF */
	FLAGS(FL_USE, 0xff, 0xc0);			/* inc %eax: not CF */
	FLAGS(FL_USE, 0xfe, 0xc8);			/* dec %al: not CF */
	FLAGS(FL_USE, 0xd1, 0xe0);			/* shl %eax */
	FLAGS(FL_USE, 0x0f, 0x44, 0xc1);		/* cmove %ecx,%eax */
	FLAGS(FL_USE, 0x0f, 0x94, 0xc0);		/* sete %al */
	FLAGS(FL_USE, 0x9c);				/* pushf */
	FLAGS(FL_USE, 0x48, 0xf7, 0xf1);		/* div %rcx */
	FLAGS(FL_USE, 0x0f, 0xa3, 0xc8);		/* bt %ecx,%eax: CF */
	FLAGS(FL_USE, 0xf3, 0x0f, 0xb8, 0xc0);		/* popcnt: not listed */
	FLAGS(FL_USE, 0x75, 0x00);			/* jne */
	FLAGS(FL_USE, 0xeb, 0x00);			/* jmp: leaves the list */
	FLAGS(FL_USE, 0xe8, 0, 0, 0, 0);		/* call */
	FLAGS(FL_USE, 0xf3, 0xa4);			/* rep movsb */
	FLAGS(FL_KILL, 0xc5, 0xf9, 0x2e, 0xc1);		/* vucomisd: as ucomisd */
	FLAGS(FL_KEEP, 0xc5, 0xfa, 0x6f, 0x07);		/* vmovdqu (%rdi),%xmm0 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_operands),
		cmocka_unit_test(test_memory_operands),
		cmocka_unit_test(test_rip_relative),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_flags_effect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
