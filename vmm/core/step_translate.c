// SPDX-License-Identifier: MIT
/*
 * The step source's translator: a basic block (a trace, step_internal.h)
 * into a copy that counts itself, for the code cache (step_cache.c).
 */
#include <string.h>

#include "step_translate.h"

const struct pro_shape pro_checked = {
	.ninsns = 32, .nsaved = 3, .add_insns = 3 + 2 * 10 + 3,
	.add_branches = 3 + 2 * 10 + 6,
	.insn_len = {
		7, 7, 7,
		7, 7, 3, 7, 5, 2, 4, 2, 2, 1,
		7, 7, 3, 7, 5, 2, 4, 2, 2, 1,
		7, 7, 7, 7, 7, 7,
		7, 7, 7,
	},
};

const struct pro_shape pro_plain = {
	.ninsns = 8, .nsaved = 1, .add_insns = 4, .add_branches = 7,
	.insn_len = { 7, 7, 7, 7, 7, 7, 7, 7 },
};

const struct pro_shape pro_fast = {
	.ninsns = 2, .nsaved = 0, .add_insns = 1, .add_branches = 2,
	.insn_len = { 11, 11 },
};

enum trans_flags trans_flags_effect(const struct x86_insn *in)
{
	uint8_t op = in->opcode, reg = (in->modrm >> 3) & 7;

	if (in->map == 1) {
		switch (op) {
		case 0x10: case 0x11: case 0x28: case 0x29:	/* SSE movs */
		case 0x6e: case 0x6f: case 0x7e: case 0x7f: case 0xd6:
		case 0x1f:					/* nop */
		case 0xb6: case 0xb7: case 0xbe: case 0xbf:	/* movzx, movsx */
			return FL_KEEP;
		case 0x2e: case 0x2f:		/* ucomis, comis: ZF PF CF, 0s */
		case 0xaf:			/* imul r, r/m */
			return FL_KILL;
		default:
			return FL_USE;
		}
	}
	if (in->map != 0)
		return FL_USE;
	/* add or adc sbb and sub xor cmp, in rows of 8: adc, sbb read CF */
	if (op < 0x40 && (op & 7) < 6)
		return (op >> 3) == 2 || (op >> 3) == 3 ? FL_USE : FL_KILL;
	switch (op) {
	case 0x80: case 0x81: case 0x83:	/* the same ops, by reg */
		return reg == 2 || reg == 3 ? FL_USE : FL_KILL;
	case 0x84: case 0x85: case 0xa8: case 0xa9:	/* test */
	case 0x69: case 0x6b:				/* imul r, r/m, imm */
		return FL_KILL;
	case 0xf6: case 0xf7:
		/* test, neg, mul, imul write them; not keeps them; div
		 * leaves them undefined, maybe as they were */
		if (reg == 2)
			return FL_KEEP;
		return reg <= 5 ? FL_KILL : FL_USE;
	case 0x88: case 0x89: case 0x8a: case 0x8b: case 0x8d:	/* mov, lea */
	case 0x50 ... 0x5f:				/* push, pop */
	case 0x68: case 0x6a: case 0x63:		/* push imm, movsxd */
	case 0x90 ... 0x99:			/* nop, xchg, cbw.., cwd.. */
	case 0xb0 ... 0xbf:				/* mov imm */
	case 0x86: case 0x87:				/* xchg */
		return FL_KEEP;
	case 0xc6: case 0xc7:
		return reg == 0 ? FL_KEEP : FL_USE;	/* mov imm; xabort.. */
	default:
		return FL_USE;
	}
}

/*
 * Whether the flags are dead where the block at va starts: it writes all
 * six before it reads any, and before it could leave (a branch, its end,
 * where they may be live into what follows).
 */
static bool trans_flags_dead(struct blk_ctx *c, uint64_t va,
			     const struct block *b)
{
	uint8_t ib[X86_MAX_INSN_LEN];
	struct x86_insn in;

	for (; va != b->end; va += in.len) {
		size_t got = code_read(c, va, ib, sizeof(ib));

		if (!got || x86_insn_decode(ib, got, &in))
			return false;
		switch (trans_flags_effect(&in)) {
		case FL_KILL:
			return true;
		case FL_USE:
			return false;
		case FL_KEEP:
			break;
		}
	}
	return false;
}

static uint64_t emit_va(const struct emit *e)
{
	return e->win + e->at + e->len;
}

static void emit_bytes(struct emit *e, const void *p, uint32_t n)
{
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

static void emit_u32(struct emit *e, uint32_t v)
{
	emit_bytes(e, &v, 4);
}

static void emit_pos(struct emit *e, uint64_t va, uint32_t ninsns,
		     uint32_t nbranches, bool prologue)
{
	e->pos[e->npos++] = (struct cpos){
		.at = e->at + e->len, .ninsns = (uint16_t)ninsns,
		.nbranches = (uint16_t)nbranches, .va = va,
		.prologue = prologue,
	};
}

/* 48 op modrm disp32: a 64-bit mov between a register (in modrm's reg
 * field) and a header slot. */
static void emit_hdr_op(struct emit *e, uint8_t op, uint8_t modrm,
			unsigned int slot)
{
	uint64_t next = emit_va(e) + 7;
	uint8_t b[3] = { 0x48, op, modrm };

	emit_bytes(e, b, 3);
	emit_u32(e, (uint32_t)(e->win + 8 * slot - next));
}

#define RAX	0x05	/* modrm: the register, disp32(%rip) */
#define RCX	0x0d
#define RDX	0x15

/* Whether counter + n <= limit, else the int3 (CX_LIMIT). */
static void emit_check(struct emit *e, unsigned int ctr, unsigned int lim,
		       uint32_t n)
{
	static const uint8_t tail[] = {
		0x48, 0x8d, 0x44, 0x08, 0x01,	/* lea 1(%rax,%rcx),%rax */
		0x48, 0x99,			/* cqo */
		0x48, 0x8d, 0x4a, 0x01,		/* lea 1(%rdx),%rcx */
		0xe3, 0x02,			/* jrcxz the int3 */
		0xeb, 0x01,			/* jmp over it */
	};

	emit_hdr_op(e, 0x8b, RAX, ctr);
	emit_bytes(e, (uint8_t[]){ 0x48, 0x8d, 0x88 }, 3); /* lea n(%rax),%rcx */
	emit_u32(e, n);
	emit_bytes(e, (uint8_t[]){ 0x48, 0xf7, 0xd1 }, 3); /* not %rcx */
	emit_hdr_op(e, 0x8b, RAX, lim);
	emit_bytes(e, tail, sizeof(tail));
	e->ex[e->nex++] = (struct cexit){ .at = e->at + e->len,
					  .kind = CX_LIMIT };
	emit_bytes(e, (uint8_t[]){ INT3 }, 1);
}

/* counter += n: mov ctr,%rax; lea n(%rax),%rax; mov %rax,ctr. */
static void emit_count(struct emit *e, unsigned int slot, uint32_t n)
{
	emit_hdr_op(e, 0x8b, RAX, slot);
	emit_bytes(e, (uint8_t[]){ 0x48, 0x8d, 0x80 }, 3);
	emit_u32(e, n);
	emit_hdr_op(e, 0x89, RAX, slot);
}

/* addq $n, counter(%rip): REX.W 81 /0 disp32 imm32, 11 bytes always. */
static void emit_add(struct emit *e, unsigned int slot, uint32_t n)
{
	uint64_t next = emit_va(e) + 11;

	emit_bytes(e, (uint8_t[]){ 0x48, 0x81, 0x05 }, 3);
	emit_u32(e, (uint32_t)(e->win + 8 * slot - next));
	emit_u32(e, n);
}

static int emit_prologue(struct emit *e, const struct block *b,
			 uint64_t va, bool fast)
{
	const struct pro_shape *shape = fast ? &pro_fast : e->checked ?
					&pro_checked : &pro_plain;
	uint32_t start = e->len, len = 0;

	emit_pos(e, va, 0, 0, true);
	e->pos[e->npos - 1].fast = fast;
	for (unsigned int i = 0; i < shape->ninsns; i++)
		len += shape->insn_len[i];
	if (fast) {
		emit_add(e, HDR_INSNS, b->ninsns);
		emit_add(e, HDR_BRANCHES, b->nbranches);
		return e->len - start == len ? 0 : -1;
	}
	emit_hdr_op(e, 0x89, RAX, HDR_RAX);
	if (e->checked) {
		emit_hdr_op(e, 0x89, RCX, HDR_RCX);
		emit_hdr_op(e, 0x89, RDX, HDR_RDX);
		emit_check(e, HDR_INSNS, HDR_LIMIT_INSNS, b->ninsns);
		emit_check(e, HDR_BRANCHES, HDR_LIMIT_BRANCHES, b->nbranches);
	}
	emit_count(e, HDR_INSNS, b->ninsns);
	emit_count(e, HDR_BRANCHES, b->nbranches);
	if (e->checked) {
		emit_hdr_op(e, 0x8b, RDX, HDR_RDX);
		emit_hdr_op(e, 0x8b, RCX, HDR_RCX);
	}
	emit_hdr_op(e, 0x8b, RAX, HDR_RAX);
	/* The lengths step_cache_leave() undoes an interrupt by. */
	return e->len - start == len ? 0 : -1;
}

/* op bytes, then a disp32 to `abs`: from the next instruction (the
 * stub's RIP-relative operands) or, sib set, absolute (a table indexed by
 * rax, which RIP-relative addressing cannot do). */
static void emit_disp(struct emit *e, const uint8_t *op, uint32_t n,
		      uint64_t abs, bool sib)
{
	uint64_t next = emit_va(e) + n + 4;

	emit_bytes(e, op, n);
	emit_u32(e, (uint32_t)(sib ? abs : abs - next));
}

/*
 * One side of a jcc or loop while the window predicts: the predictor's
 * update (step_predict.c; bp_len[] its instructions' lengths), counted
 * as after the branch, its target va next.  -1 where the window's tables
 * are out of an absolute disp32's reach.
 */
int trans_bp_stub(struct emit *e, const struct block *b, uint64_t va,
		  bool taken)
{
	uint64_t bht = e->win + BHT + bht_slot(b->end);
	uint64_t next = e->win + 8 * HDR_BP + 4 * taken;
	uint64_t miss = e->win + 8 * HDR_BP + 8 + 4 * taken;
	uint32_t start = e->len, len = 0;

	if (miss >= 0x80000000ull)
		return -1;
	emit_pos(e, va, b->ninsns, b->nbranches, false);
	e->pos[e->npos - 1].bp = true;
	e->pos[e->npos - 1].bp_taken = taken;
	emit_hdr_op(e, 0x89, RAX, HDR_RAX);
	emit_hdr_op(e, 0x89, RCX, HDR_RCX);
	emit_disp(e, (uint8_t[]){ 0x0f, 0xb6, 0x05 }, 3, bht, false);
	emit_disp(e, (uint8_t[]){ 0x0f, 0xb6, 0x0c, 0x05 }, 4, next, true);
	emit_disp(e, (uint8_t[]){ 0x88, 0x0d }, 2, bht, false);
	emit_disp(e, (uint8_t[]){ 0x0f, 0xb6, 0x04, 0x05 }, 4, miss, true);
	emit_hdr_op(e, 0x8b, RCX, HDR_BMISS);
	emit_bytes(e, (uint8_t[]){ 0x48, 0x8d, 0x0c, 0x01 }, 4);
	emit_hdr_op(e, 0x89, RCX, HDR_BMISS);
	emit_hdr_op(e, 0x8b, RCX, HDR_RCX);
	emit_hdr_op(e, 0x8b, RAX, HDR_RAX);
	for (unsigned int i = 0; i < BP_INSNS; i++)
		len += bp_len[i];
	/* The lengths bp_finish() is told how far a stub got by. */
	return e->len - start == len ? 0 : -1;
}

/* A rel32 jump or jcc (op bytes given) to an exit int3 emitted later. */
static uint32_t emit_jump(struct emit *e, const uint8_t *op, uint32_t n)
{
	uint32_t patch;

	emit_bytes(e, op, n);
	patch = e->at + e->len;
	emit_u32(e, 0);
	return patch;
}

static void emit_exit(struct emit *e, uint32_t patch, uint64_t target,
		      bool emulate, const struct block *b)
{
	uint32_t at = e->at + e->len;

	/* An emulated branch's int3 stands where the branch would: its
	 * place was emitted already (emit_end()). */
	if (!emulate)
		emit_pos(e, target, b->ninsns, b->nbranches, false);
	e->ex[e->nex++] = (struct cexit){ at, patch, target,
					  emulate ? CX_EMULATE : CX_JUMP };
	if (patch) {
		uint32_t rel = at - (patch + 4);

		memcpy(e->buf + (patch - e->at), &rel, 4);
	}
	emit_bytes(e, (uint8_t[]){ INT3 }, 1);
}

/*
 * The RIP-relative operand of the instruction just written at e->len
 * from `at` (in's, which ended at `next` in the program): the same
 * address from the copy.  -1 where a rel32 no longer reaches it.
 */
static int emit_rip_fix(struct emit *e, uint32_t at, uint64_t next,
			const struct x86_insn *in)
{
	uint32_t d = e->len - at - in->imm_len - in->disp_len;
	int64_t ea = (int64_t)(next + (uint64_t)(int64_t)in->disp);
	int64_t rel = ea - (int64_t)emit_va(e);
	int32_t r32 = (int32_t)rel;

	if (in->addrsize || in->disp_len != 4 || rel != r32)
		return -1;
	memcpy(e->buf + at + d, &r32, 4);
	return 0;
}

/*
 * One instruction of the body, at va (len bytes in ib), counted as
 * retired after ninsns/nbranches of the block.  -1 where the copy could
 * not mean the same: an operand out of a rel32's reach, xbegin.
 */
static int emit_insn(struct emit *e, const struct x86_insn *in,
		     const uint8_t *ib, uint64_t va)
{
	uint64_t next = va + in->len;
	uint32_t at = e->len;

	if (in->map == 0 && in->opcode == 0xc7 && in->has_modrm &&
	    in->modrm == 0xf8)
		return -1;			/* xbegin: RIP-relative abort */
	emit_bytes(e, ib, in->len);
	if (in->has_modrm && (in->modrm & 0xc7) == 0x05)
		return emit_rip_fix(e, at, next, in);
	return 0;
}

bool trans_ret_fast(const struct block *b)
{
	return b->br == X86_BR_RET && b->insn.map == 0 &&
	       b->insn.opcode == 0xc3 && !b->insn.opsize;
}

bool trans_jmp_fast(const struct block *b)
{
	return (b->br == X86_BR_JMP_IND || b->br == X86_BR_CALL_IND) &&
	       b->insn.map == 0 && b->insn.opcode == 0xff &&
	       !b->insn.opsize && !b->insn.imm_len;
}

/* mov disp32(,%rax,8),reg (modrm's reg field in r): a table's slot. */
static void emit_table_load(struct emit *e, uint8_t r, uint32_t table)
{
	emit_bytes(e, (uint8_t[]){ 0x48, 0x8b, (uint8_t)(r | 0x04), 0xc5 },
		   4);
	emit_u32(e, table);
}

static void emit_stub_save(struct emit *e)
{
	emit_hdr_op(e, 0x89, RCX, HDR_RCX);
	emit_hdr_op(e, 0x89, RDX, HDR_RDX);
	emit_hdr_op(e, 0x89, RAX, HDR_RAX);
}

static void emit_stub_restore(struct emit *e)
{
	emit_hdr_op(e, 0x8b, RCX, HDR_RCX);
	emit_hdr_op(e, 0x8b, RDX, HDR_RDX);
	emit_hdr_op(e, 0x8b, RAX, HDR_RAX);
}

/*
 * With the target in rcx and its slot in rax: compare the slot's key,
 * on a miss give the registers back and leave by an int3 (CX_EMULATE),
 * on a hit put the copy in HDR_JMP and give the registers back.
 */
static void emit_stub_probe(struct emit *e, uint32_t keys, uint32_t vals)
{
	emit_table_load(e, 0x10, (uint32_t)e->win + keys);	/* key: %rdx */
	emit_bytes(e, (uint8_t[]){ 0x48, 0xf7, 0xd2 }, 3);	/* not %rdx */
	emit_bytes(e, (uint8_t[]){ 0x48, 0x8d, 0x54, 0x11, 0x01 }, 5);
							/* lea 1(%rcx,%rdx),%rdx */
	emit_bytes(e, (uint8_t[]){ 0x48, 0x87, 0xd1 }, 3);	/* xchg %rdx,%rcx */
	emit_bytes(e, (uint8_t[]){ 0xe3, 3 * 7 + 1 }, 2);	/* jrcxz: a hit */
	emit_stub_restore(e);
	e->ex[e->nex++] = (struct cexit){ .at = e->at + e->len,
					  .kind = CX_EMULATE };
	emit_bytes(e, (uint8_t[]){ INT3 }, 1);
	emit_table_load(e, 0x08, (uint32_t)e->win + vals);	/* %rcx */
	emit_hdr_op(e, 0x89, RCX, HDR_JMP);
	emit_stub_restore(e);
}

/* The final jmp *HDR_JMP(%rip), with what an interrupt before it must
 * undo of the stack (pos is the branch's place). */
static void emit_stub_jmp(struct emit *e, struct cpos pos, int8_t sp_undo)
{
	uint64_t next = emit_va(e) + 6;

	if (sp_undo) {
		pos.at = e->at + e->len;
		pos.sp_undo = sp_undo;
		e->pos[e->npos++] = pos;
	}
	emit_bytes(e, (uint8_t[]){ 0xff, 0x25 }, 2);
	emit_u32(e, (uint32_t)(e->win + 8 * HDR_JMP - next));
}

/* The ret at the block's end, by the rets' table (step_translate.h). */
static int emit_ret_lookup(struct emit *e)
{
	struct cpos *p = &e->pos[e->npos - 1];

	p->stub = true;
	emit_stub_save(e);
	emit_bytes(e, (uint8_t[]){ 0x48, 0x8b, 0x0c, 0x24 }, 4); /* mov (%rsp),%rcx */
	emit_bytes(e, (uint8_t[]){ 0x0f, 0xb6, 0xc1 }, 3);	/* movzbl %cl,%eax */
	emit_stub_probe(e, RET_KEYS, RET_VALS);
	emit_bytes(e, (uint8_t[]){ 0x48, 0x8d, 0x64, 0x24, 0x08 }, 5);
							/* lea 8(%rsp),%rsp */
	emit_stub_jmp(e, *p, -8);
	return 0;
}

/*
 * mov <the branch's operand>,%rcx: its own bytes with FF /2 or /4 made
 * REX.W 8B /1 (REX.R cleared: the reg field is rcx now), a RIP-relative
 * displacement refixed.  -1 where that would not read the same.
 */
int trans_operand_load(struct emit *e, const struct block *b,
		       const uint8_t *ib)
{
	const struct x86_insn *in = &b->insn;
	uint32_t op = in->len - in->disp_len - in->has_sib - 2, pre, at;
	uint8_t rex = in->rex ? in->rex : 0x40;

	if (in->len < in->disp_len + in->has_sib + 2u || ib[op] != 0xff)
		return -1;
	pre = in->rex ? op - 1 : op;
	if (in->rex && (op == 0 || ib[op - 1] != in->rex))
		return -1;
	for (uint32_t i = 0; i < pre; i++)
		if (ib[i] == 0xf2 || ib[i] == 0xf3)
			return -1;	/* bnd or a rep: not a mov's */
	at = e->len;
	emit_bytes(e, ib, pre);
	emit_bytes(e, (uint8_t[]){ (uint8_t)((rex | 0x08) & ~0x04), 0x8b,
				   (uint8_t)((in->modrm & 0xc7) | 0x08) }, 3);
	emit_bytes(e, ib + op + 2, in->len - op - 2);
	if ((in->modrm & 0xc7) == 0x05)
		return emit_rip_fix(e, at, b->end + in->len, in);
	return 0;
}

/* An indirect jmp or call at the block's end, by the jumps' table; -1,
 * and nothing written, where its operand cannot be read by a mov. */
static int emit_jmp_lookup(struct emit *e, const struct block *b,
			   const uint8_t *ib)
{
	struct cpos *p = &e->pos[e->npos - 1];
	uint64_t ret = b->end + b->insn.len;
	bool call = b->br == X86_BR_CALL_IND;
	uint32_t start = e->len;

	p->stub = true;
	emit_stub_save(e);
	if (trans_operand_load(e, b, ib)) {
		e->len = start;		/* the plain int3 after all */
		p->stub = false;
		return -1;
	}
	emit_bytes(e, (uint8_t[]){ 0x0f, 0xb6, 0xc1 }, 3);	/* movzbl %cl,%eax */
	emit_bytes(e, (uint8_t[]){ 0x0f, 0xb6, 0xd5 }, 3);	/* movzbl %ch,%edx */
	emit_bytes(e, (uint8_t[]){ 0x8d, 0x04, 0x10 }, 3);	/* lea (%rax,%rdx),%eax */
	emit_stub_probe(e, JMP_KEYS, JMP_VALS);
	if (!call) {
		emit_stub_jmp(e, *p, 0);
		return 0;
	}
	/* push the return address, a literal after the jmp */
	emit_bytes(e, (uint8_t[]){ 0xff, 0x35 }, 2);
	emit_u32(e, 6);
	emit_stub_jmp(e, *p, 8);
	emit_bytes(e, &ret, 8);
	return 0;
}

/*
 * A jcc's or loop's end while the window predicts: the branch to the
 * taken side's stub, the not-taken side's stub, each with its jmp to its
 * exit (chained as the plain end's are).
 */
static int emit_end_predicted(struct emit *e, const struct block *b)
{
	const struct x86_insn *in = &b->insn;
	uint64_t next = b->end + in->len, rel = next + (uint64_t)in->imm;
	uint32_t to_taken, pf, pt, n_at;
	uint8_t *rel8 = NULL;

	if (b->br == X86_BR_JCC) {
		uint8_t jcc[2] = { 0x0f, (uint8_t)(0x80 | (in->opcode & 15)) };

		to_taken = emit_jump(e, jcc, 2);
	} else {
		/* loop rel8 over the not-taken side (its offset set below) */
		emit_bytes(e, (uint8_t[]){ in->opcode, 0 }, 2);
		to_taken = 0;
		rel8 = e->buf + e->len - 1;
	}
	n_at = e->len;
	if (trans_bp_stub(e, b, next, false))
		return -1;
	pf = emit_jump(e, (uint8_t[]){ 0xe9 }, 1);
	if (rel8) {
		*rel8 = (uint8_t)(e->len - n_at);
	} else {
		uint32_t r = e->at + e->len - (to_taken + 4);

		memcpy(e->buf + (to_taken - e->at), &r, 4);
	}
	if (trans_bp_stub(e, b, rel, true))
		return -1;
	pt = emit_jump(e, (uint8_t[]){ 0xe9 }, 1);
	emit_exit(e, pt, rel, false, b);
	emit_exit(e, pf, next, false, b);
	return 0;
}

/* The block's end: its branch, then the exits. */
static int emit_end(struct emit *e, const struct block *b,
		    const uint8_t *ib)
{
	const struct x86_insn *in = &b->insn;
	uint64_t next = b->end + in->len, rel = next + (uint64_t)in->imm;
	uint32_t pt, pf;

	emit_pos(e, b->end, b->ninsns - 1, b->nbranches - 1, false);
	if (e->predict && (b->br == X86_BR_JCC || b->br == X86_BR_LOOP))
		return emit_end_predicted(e, b);
	switch (b->br) {
	case X86_BR_JCC: {
		uint8_t jcc[2] = { 0x0f, (uint8_t)(0x80 | (in->opcode & 15)) };

		pt = emit_jump(e, jcc, 2);
		emit_pos(e, next, b->ninsns, b->nbranches, false);
		pf = emit_jump(e, (uint8_t[]){ 0xe9 }, 1);
		emit_exit(e, pt, rel, false, b);
		emit_exit(e, pf, next, false, b);
		return 0;
	}
	case X86_BR_LOOP:
		/* loop +5 over the not-taken side's jmp rel32. */
		emit_bytes(e, (uint8_t[]){ in->opcode, 5 }, 2);
		emit_pos(e, next, b->ninsns, b->nbranches, false);
		pf = emit_jump(e, (uint8_t[]){ 0xe9 }, 1);
		emit_pos(e, rel, b->ninsns, b->nbranches, false);
		pt = emit_jump(e, (uint8_t[]){ 0xe9 }, 1);
		emit_exit(e, pf, next, false, b);
		emit_exit(e, pt, rel, false, b);
		return 0;
	case X86_BR_RET:
		if (trans_ret_fast(b))
			return emit_ret_lookup(e);
		__attribute__((fallthrough));	/* ret imm16 */
	case X86_BR_JMP_IND:
	case X86_BR_CALL_IND:
		if (trans_jmp_fast(b) && !emit_jmp_lookup(e, b, ib))
			return 0;
		emit_exit(e, 0, 0, true, b);
		return 0;
	default:
		return -1;
	}
}

/* Write the trace from va into e; -1 where it cannot be copied. */
int trans_emit(struct blk_ctx *c, struct emit *e, uint64_t va,
		      const struct block *b)
{
	uint32_t ni = 0, nb = 0;
	uint8_t ib[X86_MAX_INSN_LEN];
	struct x86_insn_class ic;
	struct x86_insn in;
	uint64_t gpa;

	/* Flags dead at the start: two adds count the block.  While it
	 * checks limits, a window has one shape. */
	if (emit_prologue(e, b, va, !e->checked && trans_flags_dead(c, va, b)))
		return -1;
	while (va != b->end) {
		size_t got = code_read(c, va, ib, sizeof(ib));

		if (!got || x86_insn_decode(ib, got, &in) ||
		    x86_classify(ib, got, &ic) || ni >= TRANS_INSNS ||
		    !code_fixed(c, va, &gpa) ||
		    !code_fixed(c, va + in.len - 1, &gpa))
			return -1;
		if (x86_is_branch(ic.branch) && branch_direct(&in, ic.branch)) {
			uint64_t ret = va + in.len;

			if (ic.branch == X86_BR_CALL) {
				/* push $ret: one instruction, as the call's
				 * push is (a fault there is the call's). */
				if (ret > INT32_MAX)
					return -1;
				emit_pos(e, va, ni, nb, false);
				emit_bytes(e, (uint8_t[]){ 0x68 }, 1);
				emit_u32(e, (uint32_t)ret);
			}
			ni++;
			nb++;
			va = ret + (uint64_t)in.imm;
			continue;
		}
		if (x86_is_branch(ic.branch))
			return -1;	/* block_scan() ends the trace there */
		emit_pos(e, va, ni, nb, false);
		if (emit_insn(e, &in, ib, va))
			return -1;
		ni++;
		va += in.len;
	}
	if (ni + 1 != b->ninsns || nb + 1 != b->nbranches ||
	    !code_fixed(c, b->end, &gpa) ||
	    !code_fixed(c, b->end + b->insn.len - 1, &gpa) ||
	    code_read(c, b->end, ib, b->insn.len) != b->insn.len)
		return -1;
	return emit_end(e, b, ib);
}
