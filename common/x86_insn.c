// SPDX-License-Identifier: MIT
/*
 * x86-64 instruction lengths; see x86_insn.h.  The tables follow the
 * opcode maps of the Intel SDM volume 2, appendix A, and the AMD APM
 * volume 3, appendix A (XOP).  tests/unit/test_x86_insn.c checks every
 * instruction of real binaries against objdump's lengths.
 */
#include "x86_insn.h"

/* Operand kinds of the one-byte map: what follows the opcode. */
enum {
	N = 0,		/* nothing */
	M = 1,		/* ModRM */
	B = 2,		/* imm8 or rel8 */
	Z = 4,		/* imm16/32 (operand size) or rel32 */
	W = 8,		/* imm16 */
	X = 16,		/* invalid in 64-bit mode */
	V = 32,		/* imm16/32/64 (mov r, imm: REX.W gives 64) */
	O = 64,		/* moffs: 8 bytes, 4 with 67 */
	P = 128,	/* prefix or escape: handled before the table */
};

static const uint8_t map0[256] = {
	/* 00 */ M, M, M, M, B, Z, X, X, M, M, M, M, B, Z, X, P,
	/* 10 */ M, M, M, M, B, Z, X, X, M, M, M, M, B, Z, X, X,
	/* 20 */ M, M, M, M, B, Z, P, X, M, M, M, M, B, Z, P, X,
	/* 30 */ M, M, M, M, B, Z, P, X, M, M, M, M, B, Z, P, X,
	/* 40 */ P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P,
	/* 50 */ N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	/* 60 */ X, X, P, M, P, P, P, P, Z, M | Z, B, M | B, N, N, N, N,
	/* 70 */ B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B,
	/* 80 */ M | B, M | Z, X, M | B, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ N, N, N, N, N, N, N, N, N, N, X, N, N, N, N, N,
	/* a0 */ O, O, O, O, N, N, N, N, B, Z, N, N, N, N, N, N,
	/* b0 */ B, B, B, B, B, B, B, B, V, V, V, V, V, V, V, V,
	/* c0 */ M | B, M | B, W, N, P, P, M | B, M | Z, W | B, N, W, N, N, B, X, N,
	/* d0 */ M, M, M, M, X, X, X, N, M, M, M, M, M, M, M, M,
	/* e0 */ B, B, B, B, B, B, B, B, Z, Z, X, B, N, N, N, N,
	/* f0 */ P, N, P, P, N, N, M, M, N, N, N, N, N, N, M, M,
};

/* 0F map: opcodes without ModRM, and those with an imm8. */
static bool map1_no_modrm(uint8_t op)
{
	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
	case 0x0e: case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8:
	case 0xa9: case 0xaa:
		return true;
	default:
		return (op >= 0x30 && op <= 0x37) || (op >= 0x80 && op <= 0x8f) ||
		       (op >= 0xc8 && op <= 0xcf);
	}
}

static bool map1_invalid(uint8_t op)
{
	switch (op) {
	case 0x04: case 0x0a: case 0x0c: case 0x24: case 0x25: case 0x26:
	case 0x27: case 0x36: case 0x39: case 0x3b: case 0x3c: case 0x3d:
	case 0x3e: case 0x3f: case 0xa6: case 0xa7:
		return true;
	default:
		return false;
	}
}

static bool map1_imm8(uint8_t op)
{
	switch (op) {
	case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac:
	case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return true;
	default:
		return false;
	}
}

/* ModRM, SIB and displacement, starting at buf[*i]. */
static int decode_modrm(const uint8_t *buf, size_t len, size_t *i,
			struct x86_insn *out)
{
	uint8_t mod, rm;

	if (*i >= len)
		return -1;
	out->has_modrm = true;
	out->modrm = buf[(*i)++];
	mod = out->modrm >> 6;
	rm = out->modrm & 7;
	if (mod != 3 && rm == 4) {
		if (*i >= len)
			return -1;
		out->has_sib = true;
		out->sib = buf[(*i)++];
		if (mod == 0 && (out->sib & 7) == 5)
			out->disp_len = 4;
	}
	if (mod == 1)
		out->disp_len = 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		out->disp_len = 4;
	if (*i + out->disp_len > len)
		return -1;
	if (out->disp_len == 1)
		out->disp = (int8_t)buf[*i];
	else if (out->disp_len == 4)
		out->disp = (int32_t)((uint32_t)buf[*i] | (uint32_t)buf[*i + 1] << 8 |
				      (uint32_t)buf[*i + 2] << 16 |
				      (uint32_t)buf[*i + 3] << 24);
	*i += out->disp_len;
	return 0;
}

static int decode_imm(const uint8_t *buf, size_t len, size_t *i,
		      unsigned int n, struct x86_insn *out)
{
	uint64_t v = 0;

	if (*i + n > len)
		return -1;
	for (unsigned int k = 0; k < n; k++)
		v |= (uint64_t)buf[*i + k] << (8 * k);
	if (!out->imm_len) {
		out->imm_len = (uint8_t)n;
		out->imm = n == 8 ? (int64_t)v :
			   n == 4 ? (int32_t)(uint32_t)v :
			   n == 2 ? (int16_t)(uint16_t)v : (int8_t)(uint8_t)v;
	}
	*i += n;
	return 0;
}

/* VEX (C4, C5), EVEX (62) and XOP (8F): map, opcode, ModRM, imm8. */
static int decode_vex(const uint8_t *buf, size_t len, size_t *i,
		      struct x86_insn *out)
{
	uint8_t lead = buf[*i], map;
	size_t plen = lead == 0xc5 ? 2 : lead == 0x62 ? 4 : 3;
	bool imm8;
	int err;

	if (*i + plen + 1 > len)
		return -1;
	if (lead == 0xc5)
		map = 1;
	else if (lead == 0x62)
		map = buf[*i + 1] & 7;
	else
		map = buf[*i + 1] & 0x1f;
	if (out->rex || out->opsize)
		return -2;			/* REX or 66 before VEX: #UD */
	*i += plen;
	out->map = map;
	out->opcode = buf[(*i)++];
	if (lead == 0x8f) {
		if (map < 8 || map > 10)
			return -2;
		err = decode_modrm(buf, len, i, out);
		if (err)
			return err;
		return map == 9 ? 0 : decode_imm(buf, len, i, map == 8 ? 1 : 4, out);
	}
	if (map == 0 || (lead != 0x62 && map > 3))
		return -2;
	if (map == 1 && out->opcode == 0x77 && lead != 0x62)
		return 0;			/* vzeroupper, vzeroall */
	err = decode_modrm(buf, len, i, out);
	if (err)
		return err;
	imm8 = map == 3 || (map == 1 && map1_imm8(out->opcode) &&
			    out->opcode != 0xa4 && out->opcode != 0xac &&
			    out->opcode != 0xba);
	return imm8 ? decode_imm(buf, len, i, 1, out) : 0;
}

static int decode_map1(const uint8_t *buf, size_t len, size_t *i,
		       bool rep, bool repne, struct x86_insn *out)
{
	uint8_t op;
	int err;

	if (*i >= len)
		return -1;
	op = buf[(*i)++];
	if (op == 0x38 || op == 0x3a) {
		if (*i >= len)
			return -1;
		out->map = op == 0x38 ? 2 : 3;
		out->opcode = buf[(*i)++];
		err = decode_modrm(buf, len, i, out);
		if (err || op == 0x38)
			return err;
		return decode_imm(buf, len, i, 1, out);
	}
	out->map = 1;
	out->opcode = op;
	if (map1_invalid(op))
		return -2;
	if (op >= 0x80 && op <= 0x8f)		/* jcc rel32 */
		return out->opsize ? -2 : decode_imm(buf, len, i, 4, out);
	if (map1_no_modrm(op))
		return 0;
	err = decode_modrm(buf, len, i, out);
	if (err)
		return err;
	if (op == 0x0f || map1_imm8(op))	/* 3DNow! has an imm8 suffix */
		return decode_imm(buf, len, i, 1, out);
	if (op == 0x78 && (out->opsize || repne))	/* extrq, insertq */
		return decode_imm(buf, len, i, 2, out);
	(void)rep;
	return 0;
}

int x86_insn_decode(const uint8_t *buf, size_t len, struct x86_insn *out)
{
	bool rep = false, repne = false;
	size_t i = 0;
	uint8_t op, kind;
	unsigned int zlen;
	int err;

	*out = (struct x86_insn){ 0 };
	for (;; i++) {
		if (i >= len)
			return -1;
		if (i >= 15)
			return -2;
		switch (buf[i]) {
		case 0x66: out->opsize = true; out->rex = 0; continue;
		case 0x67: out->addrsize = true; out->rex = 0; continue;
		case 0x64: case 0x65: out->seg = buf[i]; out->rex = 0; continue;
		case 0x2e: case 0x36: case 0x3e: case 0x26: case 0xf0:
			out->rex = 0;
			continue;
		case 0xf2: repne = true; rep = false; out->rex = 0; continue;
		case 0xf3: rep = true; repne = false; out->rex = 0; continue;
		default:
			break;
		}
		/* A REX byte counts only directly before the opcode. */
		if ((buf[i] & 0xf0) == 0x40) {
			out->rex = buf[i];
			continue;
		}
		break;
	}
	op = buf[i];
	if (op == 0xc4 || op == 0xc5 || op == 0x62 ||
	    (op == 0x8f && i + 1 < len && (buf[i + 1] & 0x1f) >= 8)) {
		err = decode_vex(buf, len, &i, out);
	} else if (op == 0x8f && i + 1 >= len) {
		return -1;
	} else if (op == 0x0f) {
		i++;
		err = decode_map1(buf, len, &i, rep, repne, out);
	} else {
		i++;
		out->opcode = op;
		kind = map0[op];
		if (kind & X)
			return -2;
		/* Near branches with 66: Intel and AMD disagree on the length. */
		if (out->opsize && (op == 0xe8 || op == 0xe9))
			return -2;
		zlen = out->opsize && !(out->rex & 8) ? 2 : 4;
		err = 0;
		if (kind & M)
			err = decode_modrm(buf, len, &i, out);
		if (!err && (kind & W))
			err = decode_imm(buf, len, &i, 2, out);
		if (!err && (kind & B))
			err = decode_imm(buf, len, &i, 1, out);
		if (!err && (kind & Z))
			err = decode_imm(buf, len, &i,
					 op == 0xe8 || op == 0xe9 ? 4 : zlen, out);
		if (!err && (kind & V))
			err = decode_imm(buf, len, &i, out->rex & 8 ? 8 : zlen, out);
		if (!err && (kind & O))
			err = decode_imm(buf, len, &i, out->addrsize ? 4 : 8, out);
		/* test r/m, imm: only /0 and /1 of F6 and F7 have one. */
		if (!err && (op == 0xf6 || op == 0xf7) &&
		    ((out->modrm >> 3) & 7) < 2)
			err = decode_imm(buf, len, &i, op == 0xf6 ? 1 : zlen, out);
	}
	if (err)
		return err;
	if (i > 15)
		return -2;
	out->len = (uint8_t)i;
	return 0;
}
