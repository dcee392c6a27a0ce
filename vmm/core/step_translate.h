/* SPDX-License-Identifier: MIT */
/*
 * The step source's code cache (step_cache.c) and its translator
 * (step_translate.c): the layout of a window and of a translated block.
 */
#ifndef VMM_STEP_TRANSLATE_H
#define VMM_STEP_TRANSLATE_H

#include <stdbool.h>
#include <stdint.h>

#include "step_internal.h"

/*
 * The window's first 128 bytes, in uint64_t slots: what the prologues
 * counted (as step.count[], which direct readers add them to), the
 * registers a prologue borrows, and the counts it may reach before an
 * overflow point (PRO_* below).
 */
#define HDR		128
#define HDR_INSNS	PV_STEP_USER_INSNS
#define HDR_BRANCHES	PV_STEP_USER_BRANCHES
#define HDR_BMISS	PV_STEP_USER_BMISS
#define HDR_RAX		5
#define HDR_RCX		6
#define HDR_RDX		7
#define HDR_LIMIT_INSNS	8
#define HDR_LIMIT_BRANCHES 9
#define HDR_JMP		10	/* a ret's copy, for its indirect jmp */
#define HDR_BP		11	/* 16 bytes: bp_next[2][4], bp_miss[2][4] */
#define LIMIT_NONE	(1ull << 62)
_Static_assert(HDR_RAX >= PV_STEP_SLOTS, "header counters");
_Static_assert(HDR_BP * 8 + 16 <= HDR, "header size");

/*
 * After the header, the rets' table and the jumps' table: where a ret's,
 * or an indirect jmp's or call's, target has a copy.  Keys (program
 * addresses) and their copies' addresses; a ret's slot is its target's
 * low byte, a jump's the sum of its target's two low bytes (function
 * entries are 16-byte aligned, so the low byte alone would give 16
 * slots).  An empty key or copy is TABLE_EMPTY, which no branch reaches
 * (not canonical: a jmp there faults at the jmp).  The VMM fills them at
 * the branches it emulates and empties them when the process's code may
 * have changed (PV_HC_STEP_ARM's code_gen) and with the window.
 */
#define RET_SLOTS	256
#define JMP_SLOTS	512
#define RET_KEYS	HDR
#define RET_VALS	(RET_KEYS + 8 * RET_SLOTS)
#define JMP_KEYS	(RET_VALS + 8 * RET_SLOTS)
#define JMP_VALS	(JMP_KEYS + 8 * JMP_SLOTS)
#define BHT		(JMP_VALS + 8 * JMP_SLOTS)	/* the predictor's */
#define CODE0		(BHT + BHT_ENTRIES)	/* the first copy */
#define TABLES_LEN	(BHT - RET_KEYS)
#define TABLE_EMPTY	0x8000000000000000ull
#define TRANS_INSNS	256		/* longer blocks stay with the int3s */

/* How many of n instructions of lengths len[] lie whole in the first
 * `bytes` bytes: where a kernel entry `bytes` into a prologue or a
 * predictor stub stopped it. */
static inline uint32_t insns_ran(const uint8_t *len, uint32_t n,
				 uint32_t bytes)
{
	uint32_t done = 0, at = 0;

	while (done < n && at + len[done] <= bytes)
		at += len[done++];
	return done;
}

static inline unsigned int jmp_slot(uint64_t target)
{
	return (unsigned int)(target & 0xff) + (unsigned int)(target >> 8 & 0xff);
}

/*
 * The prologue, flag-neutral (the flags may be live into the block) and
 * without the stack (the red zone), in one of two shapes for the whole
 * window:
 *   - checked, while a count has an overflow point (sampling, overflow
 *     signals): rax, rcx and rdx saved; for instructions and then
 *     branches, whether counter + n stays within its limit, computed as
 *     the sign of limit + ~(counter + n) + 1 by lea, not and cqo, tested
 *     by jrcxz; past it, an int3 (the VMM runs the block where the point
 *     falls by int3s and single steps); else both counters += n, and the
 *     registers back: 32 instructions;
 *   - plain, while none has: rax saved, both counters += n, rax back: 8;
 *   - fast, a plain one where the block writes all six arithmetic flags
 *     before it reads any (trans_flags_dead()): `addq $n, counter(%rip)`
 *     for each counter, 2.
 * Each shape's instructions' lengths, so that an interrupt's RIP tells
 * how many ran.
 */
struct pro_shape {
	uint8_t ninsns;
	uint8_t nsaved;		/* rax, rcx, rdx saved by the first n */
	uint8_t add_insns;	/* the instructions' counter added after */
	uint8_t add_branches;	/* ... and the branches' */
	uint8_t insn_len[32];	/* what emit_prologue() writes, checked */
};
extern const struct pro_shape pro_checked, pro_plain, pro_fast;

/*
 * What an instruction does to the arithmetic flags (OF SF ZF AF PF CF):
 * nothing (a mov, lea, push), writes all six and reads none (add, cmp,
 * test, xor...; "undefined" after imul counts as written: no compiler
 * reads them), or anything else: reads one, writes some, or is not known
 * here.  A short list, on the safe side: what is not on it is FL_USE.
 */
enum trans_flags {
	FL_KEEP,
	FL_KILL,
	FL_USE,
};
enum trans_flags trans_flags_effect(const struct x86_insn *in);
#define PRO_MAX_LEN	164
/*
 * A plain ret (c3), or an indirect jmp or call, looks its target up in
 * its table, flag-neutral as the prologue: rcx, rdx and rax saved (three
 * 7-byte movs first, STUB_SAVE_LEN), the target into rcx (a ret's from
 * the stack, a jump's by its own operand as a mov), its key compared by
 * not, lea and jrcxz; a hit jumps to the copy (a ret pops first, a call
 * pushes its return address), a miss gives the registers back and
 * leaves by an int3 whose branch the VMM emulates.  An interrupt inside
 * gives back what the saves borrowed, and the stack move before the
 * final jmp (struct cpos.sp_undo).
 */
#define STUB_SAVE_LEN	7
#define STUB_MAX	160
#define BP_MAX		96	/* a predictor stub and its jmp */
#define TRANS_MAX	(PRO_MAX_LEN + 20 * TRANS_INSNS + STUB_MAX + 2 * BP_MAX + 32)

#define INT3		0xcc

/* A place in a copy and what it stands for in the program. */
struct cpos {
	uint32_t at;		/* offset in the window */
	uint16_t ninsns;	/* the block's instructions retired before it */
	uint16_t nbranches;	/* ... and branches */
	uint64_t va;		/* the program's instruction that is next */
	bool prologue;		/* the counting prologue (va the block) */
	bool fast;		/* ... in its flag-clobbering shape */
	bool stub;		/* a table lookup (va the branch) */
	bool bp;		/* a predictor stub (va the branch's target) */
	bool bp_taken;		/* ... on the jcc's taken side */
	int8_t sp_undo;		/* at the lookup's final jmp: rsp += this */
};

/* An int3 that leaves a copy. */
enum cexit_kind {
	CX_JUMP,		/* to target, the copy's jcc or loop */
	CX_EMULATE,		/* the block's own ret or indirect branch */
	CX_LIMIT,		/* the prologue: an overflow point in the block */
};

struct cexit {
	uint32_t at;		/* offset of the int3 */
	uint32_t patch;		/* of the rel32 that leads to it, 0 if none */
	uint64_t target;	/* CX_JUMP: where the program goes on */
	enum cexit_kind kind;
};

/* A translation being written: its bytes, at window offset `at`. */
struct emit {
	uint64_t win;		/* the window's address */
	bool checked;		/* prologues check the limits (pro_checked) */
	bool predict;		/* jccs and loops run predictor stubs */
	uint8_t buf[TRANS_MAX];
	uint32_t len, at;
	uint32_t npos, nex;
	struct cpos pos[TRANS_INSNS + 8];
	struct cexit ex[4];
};

/*
 * Write the trace from va (scanned into b) into e, at window offset e->at
 * of the window at e->win: -1 where it cannot be copied and keep its
 * meaning (an operand out of a rel32's reach, code outside the initramfs).
 */
int trans_emit(struct blk_ctx *c, struct emit *e, uint64_t va,
	       const struct block *b);
/*
 * mov <the operand of b's indirect jmp or call (bytes ib)>,%rcx, written
 * into e as a jump's lookup reads its target: -1 where it cannot be.
 */
int trans_operand_load(struct emit *e, const struct block *b,
		       const uint8_t *ib);
/*
 * One side of b's jcc or loop while the window predicts, written into e:
 * the predictor stub (step_predict.c) that runs after the branch, whose
 * target va is next.  -1 where it cannot be.
 */
int trans_bp_stub(struct emit *e, const struct block *b, uint64_t va,
		  bool taken);
/* Whether b ends in a ret that looks up the rets' table. */
bool trans_ret_fast(const struct block *b);
/* Whether b ends in an indirect jmp or call (that may look up the
 * jumps' table). */
bool trans_jmp_fast(const struct block *b);

#endif
