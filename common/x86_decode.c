// SPDX-License-Identifier: MIT
/*
 * x86-64 classification for single-step counters; see x86_decode.h.
 */
#include "x86_decode.h"

static bool is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0:			/* lock */
	case 0xf2: case 0xf3:		/* repne, rep */
	case 0x2e: case 0x36: case 0x3e: case 0x26:
	case 0x64: case 0x65:		/* segment overrides */
	case 0x66: case 0x67:		/* operand and address size */
		return true;
	default:
		return false;
	}
}

/* movs, cmps, stos, lods, scas, and ins/outs for completeness. */
static bool is_string_opcode(uint8_t op)
{
	return (op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf) ||
	       (op >= 0x6c && op <= 0x6f);
}

int x86_classify(const uint8_t *buf, size_t len, struct x86_insn_class *out)
{
	size_t i = 0;
	uint8_t op;

	*out = (struct x86_insn_class){ 0 };

	/*
	 * Legacy prefixes may come in any order and repeat; a REX byte only
	 * counts directly before the opcode, but whether it is ignored does not
	 * change the class, so skipping 40-4F among prefixes is enough.
	 * Hardware rejects instructions longer than 15 bytes, so stop there.
	 */
	for (;;) {
		if (i >= X86_MAX_INSN_LEN) {
			/* Too long: #GP, nothing retires or branches. */
			out->nprefix = (uint8_t)i;
			return 0;
		}
		if (i >= len)
			return -1;
		if (is_legacy_prefix(buf[i])) {
			if (buf[i] == 0xf2 || buf[i] == 0xf3)
				out->rep = true;
			i++;
			continue;
		}
		if ((buf[i] & 0xf0) == 0x40) {
			i++;
			continue;
		}
		break;
	}
	out->nprefix = (uint8_t)i;
	if (i >= len)
		return -1;
	op = buf[i];

	/*
	 * VEX (C4/C5) and EVEX (62) are never prefixes of a branch or string
	 * instruction in 64-bit mode; their opcode byte is classified NONE.
	 */
	if (op == 0x0f) {
		if (i + 1 >= len)
			return -1;
		out->two_byte = true;
		out->opcode = buf[i + 1];
		if (out->opcode >= 0x80 && out->opcode <= 0x8f)
			out->branch = X86_BR_JCC;
		else if (out->opcode == 0x05)
			out->syscall = true;
		return 0;
	}

	out->opcode = op;
	if (op >= 0x70 && op <= 0x7f)
		out->branch = X86_BR_JCC;
	else if (op >= 0xe0 && op <= 0xe3)
		out->branch = X86_BR_LOOP;
	else if (op == 0xe8)
		out->branch = X86_BR_CALL;
	else if (op == 0xe9 || op == 0xeb)
		out->branch = X86_BR_JMP;
	else if (op == 0xc2 || op == 0xc3)
		out->branch = X86_BR_RET;
	else if (op == 0xca || op == 0xcb || op == 0xcf)
		out->branch = X86_BR_FAR;
	else if (op == 0xff) {
		uint8_t reg;

		if (i + 1 >= len)
			return -1;
		reg = (buf[i + 1] >> 3) & 7;
		if (reg == 2)
			out->branch = X86_BR_CALL_IND;
		else if (reg == 4)
			out->branch = X86_BR_JMP_IND;
		else if (reg == 3 || reg == 5)
			out->branch = X86_BR_FAR;
	} else if (out->rep && is_string_opcode(op)) {
		out->rep_string = true;
	}
	return 0;
}

const char *x86_branch_name(enum x86_branch b)
{
	static const char *const names[X86_BR_NCLASSES] = {
		[X86_BR_NONE] = "none",
		[X86_BR_JCC] = "jcc",
		[X86_BR_JMP] = "jmp",
		[X86_BR_CALL] = "call",
		[X86_BR_RET] = "ret",
		[X86_BR_LOOP] = "loop",
		[X86_BR_JMP_IND] = "jmp-indirect",
		[X86_BR_CALL_IND] = "call-indirect",
		[X86_BR_FAR] = "far",
	};

	if ((unsigned int)b >= X86_BR_NCLASSES)
		return "?";
	return names[b];
}
