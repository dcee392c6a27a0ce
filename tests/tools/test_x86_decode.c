// SPDX-License-Identifier: MIT
/*
 * Unit tests for x86_decode: byte sequences to classes.  The encodings are
 * written out by hand (and cross-checked with objdump) so that a decoder
 * change that miscounts a class shows up here, not as an off-by-N in an
 * accuracy run hours later.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "x86_decode.h"

#define CLASSIFY(c, ...)						\
	do {								\
		static const uint8_t b_[] = { __VA_ARGS__ };		\
		assert_int_equal(x86_classify(b_, sizeof(b_), (c)), 0);	\
	} while (0)

static void test_rep_strings(void **state)
{
	struct x86_insn_class c;

	(void)state;
	CLASSIFY(&c, 0xf3, 0xa4);			/* rep movsb */
	assert_true(c.rep_string);
	assert_int_equal(c.nprefix, 1);
	CLASSIFY(&c, 0xf3, 0x48, 0xa5);			/* rep movsq */
	assert_true(c.rep_string);
	assert_int_equal(c.nprefix, 2);
	CLASSIFY(&c, 0xf3, 0xaa);			/* rep stosb */
	assert_true(c.rep_string);
	CLASSIFY(&c, 0x66, 0xf3, 0xab);			/* rep stosw */
	assert_true(c.rep_string);
	CLASSIFY(&c, 0xf2, 0xae);			/* repne scasb */
	assert_true(c.rep_string);
	CLASSIFY(&c, 0xf3, 0xa6);			/* repe cmpsb */
	assert_true(c.rep_string);
	CLASSIFY(&c, 0xf3, 0xac);			/* rep lodsb */
	assert_true(c.rep_string);
	CLASSIFY(&c, 0x64, 0xf3, 0x67, 0x48, 0xa4);	/* fs rep addr32 rex.w movs */
	assert_true(c.rep_string);
	assert_int_equal(c.nprefix, 4);
	CLASSIFY(&c, 0xa4);				/* movsb without rep */
	assert_false(c.rep_string);
	assert_false(c.rep);
	CLASSIFY(&c, 0xf3, 0x0f, 0xb8, 0xc0);		/* popcnt: F3 but not string */
	assert_false(c.rep_string);
	assert_true(c.rep);
	CLASSIFY(&c, 0xf3, 0x90);			/* pause */
	assert_false(c.rep_string);
	CLASSIFY(&c, 0xf3, 0x48, 0x0f, 0x1e, 0xfa);	/* endbr64-ish, not string */
	assert_false(c.rep_string);
}

static void test_branches(void **state)
{
	struct x86_insn_class c;

	(void)state;
	CLASSIFY(&c, 0x75, 0xfe);			/* jne rel8 */
	assert_int_equal(c.branch, X86_BR_JCC);
	CLASSIFY(&c, 0x0f, 0x84, 0, 0, 0, 0);		/* je rel32 */
	assert_int_equal(c.branch, X86_BR_JCC);
	assert_true(c.two_byte);
	CLASSIFY(&c, 0xeb, 0xfe);			/* jmp rel8 */
	assert_int_equal(c.branch, X86_BR_JMP);
	CLASSIFY(&c, 0xe9, 0, 0, 0, 0);			/* jmp rel32 */
	assert_int_equal(c.branch, X86_BR_JMP);
	CLASSIFY(&c, 0xe8, 0, 0, 0, 0);			/* call rel32 */
	assert_int_equal(c.branch, X86_BR_CALL);
	CLASSIFY(&c, 0xc3);				/* ret */
	assert_int_equal(c.branch, X86_BR_RET);
	CLASSIFY(&c, 0xf3, 0xc3);			/* rep ret (AMD idiom) */
	assert_int_equal(c.branch, X86_BR_RET);
	assert_false(c.rep_string);
	CLASSIFY(&c, 0xc2, 0x08, 0x00);			/* ret $8 */
	assert_int_equal(c.branch, X86_BR_RET);
	CLASSIFY(&c, 0xe2, 0xfe);			/* loop */
	assert_int_equal(c.branch, X86_BR_LOOP);
	CLASSIFY(&c, 0xe3, 0xfe);			/* jrcxz */
	assert_int_equal(c.branch, X86_BR_LOOP);
	CLASSIFY(&c, 0xff, 0xd0);			/* call *%rax */
	assert_int_equal(c.branch, X86_BR_CALL_IND);
	CLASSIFY(&c, 0x41, 0xff, 0x14, 0x24);		/* call *(%r12) */
	assert_int_equal(c.branch, X86_BR_CALL_IND);
	CLASSIFY(&c, 0xff, 0xe0);			/* jmp *%rax */
	assert_int_equal(c.branch, X86_BR_JMP_IND);
	CLASSIFY(&c, 0xff, 0x24, 0xc5, 0, 0, 0, 0);	/* jmp *0(,%rax,8) */
	assert_int_equal(c.branch, X86_BR_JMP_IND);
	CLASSIFY(&c, 0xf2, 0xff, 0xe0);			/* bnd jmp *%rax */
	assert_int_equal(c.branch, X86_BR_JMP_IND);
	CLASSIFY(&c, 0x48, 0xcf);			/* iretq */
	assert_int_equal(c.branch, X86_BR_FAR);
	CLASSIFY(&c, 0xff, 0x18);			/* lcall *(%rax) */
	assert_int_equal(c.branch, X86_BR_FAR);
	CLASSIFY(&c, 0xff, 0xc0);			/* inc %eax: FF /0 */
	assert_int_equal(c.branch, X86_BR_NONE);
	CLASSIFY(&c, 0xff, 0x30);			/* push (%rax): FF /6 */
	assert_int_equal(c.branch, X86_BR_NONE);
}

static void test_others(void **state)
{
	struct x86_insn_class c;

	(void)state;
	CLASSIFY(&c, 0x0f, 0x05);			/* syscall */
	assert_true(c.syscall);
	assert_int_equal(c.branch, X86_BR_NONE);
	CLASSIFY(&c, 0x48, 0x89, 0xc7);			/* mov %rax,%rdi */
	assert_int_equal(c.branch, X86_BR_NONE);
	assert_false(c.rep_string);
	assert_false(c.syscall);
	CLASSIFY(&c, 0xcc);				/* int3 */
	assert_int_equal(c.branch, X86_BR_NONE);
	CLASSIFY(&c, 0xc5, 0xf8, 0x77);			/* vzeroupper (VEX) */
	assert_int_equal(c.branch, X86_BR_NONE);
	CLASSIFY(&c, 0x0f, 0x1f, 0x44, 0x00, 0x00);	/* nopl */
	assert_int_equal(c.branch, X86_BR_NONE);
	assert_string_equal(x86_branch_name(X86_BR_JCC), "jcc");
	assert_string_equal(x86_branch_name(X86_BR_NCLASSES), "?");
}

static void test_short_buffers(void **state)
{
	static const uint8_t rep_only[] = { 0xf3, 0x48 };
	static const uint8_t esc[] = { 0x0f };
	static const uint8_t ff[] = { 0x66, 0xff };
	static const uint8_t many[16] = {
		0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
		0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90,
	};
	struct x86_insn_class c;

	(void)state;
	assert_int_equal(x86_classify(rep_only, sizeof(rep_only), &c), -1);
	assert_int_equal(x86_classify(esc, sizeof(esc), &c), -1);
	assert_int_equal(x86_classify(ff, sizeof(ff), &c), -1);
	assert_int_equal(x86_classify(rep_only, 0, &c), -1);
	/* Overlong prefix runs are invalid: decided within 15 bytes. */
	assert_int_equal(x86_classify(many, X86_MAX_INSN_LEN, &c), 0);
	assert_int_equal(c.branch, X86_BR_NONE);
	assert_int_equal(c.nprefix, X86_MAX_INSN_LEN);
	assert_int_equal(x86_classify(many + 1, X86_MAX_INSN_LEN, &c), 0);
	assert_int_equal(c.opcode, 0x90);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rep_strings),
		cmocka_unit_test(test_branches),
		cmocka_unit_test(test_others),
		cmocka_unit_test(test_short_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
