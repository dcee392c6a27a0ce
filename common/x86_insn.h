/* SPDX-License-Identifier: MIT */
/*
 * x86-64 instruction length decoding, for counting a basic block per trap:
 * the VMM walks user code from where it resumes to the next control
 * transfer, and emulates that transfer, so it must know where every
 * instruction ends and what a branch's operand is.  Branch-ness itself is
 * x86_classify()'s (x86_decode.h), which the single-step paths use, so
 * both ways of counting agree on what one branch is.
 *
 * 64-bit mode only.  Freestanding (stdint, stddef, stdbool).
 */
#ifndef PERFVISOR_X86_INSN_H
#define PERFVISOR_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct x86_insn {
	uint8_t len;		/* total length in bytes */
	uint8_t opcode;		/* last opcode byte */
	uint8_t map;		/* 0 one-byte, 1 0F, 2 0F38, 3 0F3A, more: VEX/EVEX maps */
	uint8_t rex;		/* REX byte in effect, 0 if none */
	bool opsize;		/* 66 */
	bool addrsize;		/* 67 */
	uint8_t seg;		/* 0x64 (fs), 0x65 (gs) or 0 */
	bool has_modrm;
	uint8_t modrm;
	bool has_sib;
	uint8_t sib;
	int32_t disp;		/* sign-extended displacement, 0 if none */
	uint8_t disp_len;
	int64_t imm;		/* sign-extended first immediate (rel for branches) */
	uint8_t imm_len;
};

/*
 * Decode the instruction at buf[0].  Returns 0, -1 when len bytes end
 * before the instruction does (read more and call again), or -2 for an
 * encoding that is invalid in 64-bit mode (it would raise #UD).
 */
int x86_insn_decode(const uint8_t *buf, size_t len, struct x86_insn *out);

#endif /* PERFVISOR_X86_INSN_H */
