/* SPDX-License-Identifier: MIT */
/*
 * Minimal x86-64 instruction classification for exact instruction and
 * branch counting by single-stepping.
 *
 * It answers only what a single-step counter needs: is the instruction a
 * rep-prefixed string instruction (which traps once per iteration with RIP
 * unchanged but retires once, as hardware counts it), and is it a control
 * transfer, of which class.  It does not compute instruction lengths.
 *
 * Freestanding (stdint, stddef, stdbool only) so that the guest kernel's
 * #DB handler can use the same code as the host ptrace oracle: both must
 * agree on what one instruction is.
 */
#ifndef PERFVISOR_X86_DECODE_H
#define PERFVISOR_X86_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest legal x86 instruction; reading this many bytes always suffices. */
#define X86_MAX_INSN_LEN 15

enum x86_branch {
	X86_BR_NONE = 0,
	X86_BR_JCC,		/* 70-7F rel8, 0F 80-8F rel32 */
	X86_BR_JMP,		/* E9 rel32, EB rel8 */
	X86_BR_CALL,		/* E8 rel32 */
	X86_BR_RET,		/* C3, C2 imm16 (near) */
	X86_BR_LOOP,		/* E0-E2 loop(n)(e), E3 jrcxz */
	X86_BR_JMP_IND,		/* FF /4 */
	X86_BR_CALL_IND,	/* FF /2 */
	X86_BR_FAR,		/* FF /3, FF /5, CA, CB, CF: far call/jmp/ret, iret */
	X86_BR_NCLASSES,
};

struct x86_insn_class {
	uint8_t nprefix;	/* legacy + REX prefix bytes before the opcode */
	uint8_t opcode;		/* first opcode byte (after 0F if two-byte) */
	bool two_byte;		/* opcode was escaped by 0F */
	bool rep;		/* F2 or F3 present */
	bool rep_string;	/* rep + string opcode: one retirement, many traps */
	bool syscall;		/* 0F 05 */
	enum x86_branch branch;
};

/*
 * Classify the instruction starting at buf[0].  Returns 0 on success,
 * -1 if len bytes were not enough to see the opcode (and its ModRM where
 * the class depends on it): call again with more bytes.  With
 * len >= X86_MAX_INSN_LEN it always succeeds.
 */
int x86_classify(const uint8_t *buf, size_t len, struct x86_insn_class *out);

/*
 * Whether a class counts as a branch instruction the way perf's
 * branch-instructions (retired near and far control transfers, taken or
 * not) does.  System calls are not counted as branches.
 */
static inline bool x86_is_branch(enum x86_branch b)
{
	return b != X86_BR_NONE;
}

const char *x86_branch_name(enum x86_branch b);

#endif /* PERFVISOR_X86_DECODE_H */
