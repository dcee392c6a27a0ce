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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_operands),
		cmocka_unit_test(test_memory_operands),
		cmocka_unit_test(test_rip_relative),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
