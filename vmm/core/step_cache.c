// SPDX-License-Identifier: MIT
/*
 * The step source's code cache (docs/design.md, "Counting by blocks").
 *
 * A trap per basic block still costs several µs on kvm_pvm, and a hot
 * loop is a trap per iteration.  So the VMM copies each block it meets
 * into its vCPU's window of a 2 MiB page that the guest kernel maps at
 * PV_STEP_CACHE_VA in every process (mm_map_step_cache()):
 *   - a prologue first adds the block's instruction and branch counts to
 *     counters at the start of the window;
 *   - the block's own instructions follow, RIP-relative operands and the
 *     direct calls' return addresses fixed to mean what they meant;
 *   - its jcc or loop leads, through an int3 until the target has a copy
 *     too, straight to the copy of the block it goes to; a ret or an
 *     indirect branch is an int3 whose branch the VMM emulates, as for an
 *     int3 in the program's own code.
 * Counts stay exact: every kernel entry from a copy (a system call, a
 * fault, an interrupt) hands its frame to the VMM (PV_HC_STEP_ACCOUNT),
 * which counts what retired of the block and moves the frame back to the
 * program's own code.  So no thread is ever in a copy while the guest
 * kernel runs: the kernel, signal frames and samples see only the
 * program's addresses, and a window can be emptied at any trap of its
 * vCPU.  While a count has an overflow point (sampling, overflow
 * signals), nothing runs from the cache: blocks there are single-stepped
 * where the point falls, which only the int3 path does.
 *
 * A copy is keyed by the block's address and the guest-physical page its
 * code is in (initramfs pages, never rewritten): processes that map the
 * same program share the copies, others never see them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "guest_mem.h"
#include "step_internal.h"
#include "vcpu.h"
#include "vm.h"
#include "vpmu_guest.h"

/* The window's first 64 bytes: what the prologues count, and rax's slot. */
#define HDR		64
#define HDR_INSNS	PV_STEP_USER_INSNS	/* as step.count[] */
#define HDR_BRANCHES	PV_STEP_USER_BRANCHES
#define HDR_RAX		PV_STEP_SLOTS
#define PRO_INSN	7		/* every prologue instruction is 7 bytes */
#define PRO_LEN		(8 * PRO_INSN)
#define TRANS_INSNS	256		/* longer blocks stay with the int3s */
#define TRANS_MAX	(PRO_LEN + 20 * TRANS_INSNS + 32)
#define RFLAGS_TF	0x100ull
#define INT3		0xcc

/* A place in a copy and what it stands for in the program. */
struct cpos {
	uint32_t at;		/* offset in the window */
	uint16_t ninsns;	/* the block's instructions retired before it */
	uint16_t nbranches;	/* ... and branches */
	uint64_t va;		/* the program's instruction that is next */
	bool prologue;		/* the counting prologue (va the block) */
};

/* An int3 that leaves a copy. */
struct cexit {
	uint32_t at;		/* offset of the int3 */
	uint32_t patch;		/* of the rel32 that leads to it, 0 if none */
	uint64_t target;	/* where the program goes on */
	bool emulate;		/* the block's own ret/indirect branch */
};

struct ctrans {
	uint64_t va, gpa;	/* the block, and where its first byte is */
	uint32_t at, end;	/* [at, end) in the window */
	uint32_t pos0, npos;
	uint32_t exit0, nexit;
	struct block b;
};

struct step_cache {
	uint64_t va, gpa;	/* the window */
	uint32_t size, used;
	uint64_t gen;		/* emptied this many times */
	struct ctrans *t;	/* by offset: a window fills in order */
	uint32_t nt, tcap;
	struct cpos *pos;
	uint32_t npos, poscap;
	struct cexit *ex;
	uint32_t nex, excap;
	int32_t *hash;		/* block address to t[], -1 empty */
	uint32_t nhash;
};

struct step_cache *step_cache_create(uint64_t va, uint64_t gpa,
				     uint32_t size)
{
	struct step_cache *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->nhash = 1024;
	sc->hash = malloc(sc->nhash * sizeof(*sc->hash));
	if (!sc->hash) {
		free(sc);
		return NULL;
	}
	memset(sc->hash, 0xff, sc->nhash * sizeof(*sc->hash));
	sc->va = va;
	sc->gpa = gpa;
	sc->size = size;
	sc->used = HDR;
	return sc;
}

void step_cache_destroy(struct step_cache *sc)
{
	if (!sc)
		return;
	free(sc->t);
	free(sc->pos);
	free(sc->ex);
	free(sc->hash);
	free(sc);
}

bool step_cache_owns(const struct step_cache *sc, uint64_t va)
{
	return sc && va - sc->va < sc->size;
}

static void cache_flush(struct step_cache *sc, struct step_blocks_stats *st)
{
	sc->nt = sc->npos = sc->nex = 0;
	sc->used = HDR;
	sc->gen++;
	memset(sc->hash, 0xff, sc->nhash * sizeof(*sc->hash));
	st->cache_flushes++;
}

static uint32_t hash_slot(const struct step_cache *sc, uint64_t va)
{
	return (uint32_t)(va * 0x9e3779b97f4a7c15ull >> 40) & (sc->nhash - 1);
}

static int32_t cache_find(const struct step_cache *sc, uint64_t va,
			  uint64_t gpa)
{
	for (uint32_t i = hash_slot(sc, va);; i = (i + 1) & (sc->nhash - 1)) {
		int32_t k = sc->hash[i];

		if (k < 0)
			return -1;
		if (sc->t[k].va == va && sc->t[k].gpa == gpa)
			return k;
	}
}

static void hash_put(struct step_cache *sc, int32_t k)
{
	uint32_t i = hash_slot(sc, sc->t[k].va);

	while (sc->hash[i] >= 0)
		i = (i + 1) & (sc->nhash - 1);
	sc->hash[i] = k;
}

/* Room for one more block in every table, the hash at most half full. */
static int tables_reserve(struct step_cache *sc, uint32_t npos, uint32_t nex)
{
	if (2 * (sc->nt + 1) > sc->nhash) {
		int32_t *h = malloc(2 * sc->nhash * sizeof(*h));

		if (!h)
			return -ENOMEM;
		free(sc->hash);
		sc->hash = h;
		sc->nhash *= 2;
		memset(h, 0xff, sc->nhash * sizeof(*h));
		for (uint32_t k = 0; k < sc->nt; k++)
			hash_put(sc, (int32_t)k);
	}
#define GROW(arr, n, cap, more)						\
	do {								\
		if ((n) + (more) > (cap)) {				\
			uint32_t c = (cap) ? 2 * (cap) : 256;		\
			void *p;					\
									\
			while (c < (n) + (more))			\
				c *= 2;					\
			p = realloc((arr), c * sizeof(*(arr)));		\
			if (!p)						\
				return -ENOMEM;				\
			(arr) = p;					\
			(cap) = c;					\
		}							\
	} while (0)
	GROW(sc->t, sc->nt, sc->tcap, 1);
	GROW(sc->pos, sc->npos, sc->poscap, npos);
	GROW(sc->ex, sc->nex, sc->excap, nex);
#undef GROW
	return 0;
}

/* The copy holding window offset off, or -1. */
static int32_t trans_at(const struct step_cache *sc, uint32_t off)
{
	uint32_t lo = 0, hi = sc->nt;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (sc->t[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sc->nt && sc->t[lo].at <= off ? (int32_t)lo : -1;
}

/* A translation being written: its bytes, at window offset `at`. */
struct emit {
	struct step_cache *sc;
	uint8_t buf[TRANS_MAX];
	uint32_t len, at;
	uint32_t npos, nex;
	struct cpos pos[TRANS_INSNS + 8];
	struct cexit ex[2];
};

static uint64_t emit_va(const struct emit *e)
{
	return e->sc->va + e->at + e->len;
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

/* 48 op modrm disp32: a 64-bit mov between rax and a header slot. */
static void emit_hdr_op(struct emit *e, uint8_t op, unsigned int slot)
{
	uint64_t next = emit_va(e) + PRO_INSN;
	uint8_t b[3] = { 0x48, op, 0x05 };

	emit_bytes(e, b, 3);
	emit_u32(e, (uint32_t)(e->sc->va + 8 * slot - next));
}

/*
 * Add n to a header counter without touching the flags, which may be live
 * into the block: mov ctr,%rax; lea n(%rax),%rax; mov %rax,ctr.
 */
static void emit_count(struct emit *e, unsigned int slot, uint32_t n)
{
	static const uint8_t lea[3] = { 0x48, 0x8d, 0x80 };

	emit_hdr_op(e, 0x8b, slot);
	emit_bytes(e, lea, 3);
	emit_u32(e, n);
	emit_hdr_op(e, 0x89, slot);
}

static void emit_prologue(struct emit *e, const struct block *b,
			  uint64_t va)
{
	emit_pos(e, va, 0, 0, true);
	emit_hdr_op(e, 0x89, HDR_RAX);
	emit_count(e, HDR_INSNS, b->ninsns);
	emit_count(e, HDR_BRANCHES, b->nbranches);
	emit_hdr_op(e, 0x8b, HDR_RAX);
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

	emit_pos(e, emulate ? b->end : target, b->ninsns - emulate,
		 b->nbranches - emulate, false);
	e->ex[e->nex++] = (struct cexit){ at, patch, target, emulate };
	if (patch) {
		uint32_t rel = at - (patch + 4);

		memcpy(e->buf + (patch - e->at), &rel, 4);
	}
	emit_bytes(e, (uint8_t[]){ INT3 }, 1);
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
	if (in->has_modrm && (in->modrm & 0xc7) == 0x05) {
		/* RIP-relative: the same address from the copy. */
		uint32_t d = in->len - in->imm_len - in->disp_len;
		int64_t ea = (int64_t)(next + (uint64_t)(int64_t)in->disp);
		int64_t rel = ea - (int64_t)emit_va(e);
		int32_t r32 = (int32_t)rel;

		if (in->addrsize || in->disp_len != 4 || rel != r32)
			return -1;
		memcpy(e->buf + at + d, &r32, 4);
	}
	return 0;
}

/* The block's end: its branch, then the exits. */
static int emit_end(struct emit *e, const struct block *b)
{
	const struct x86_insn *in = &b->insn;
	uint64_t next = b->end + in->len, rel = next + (uint64_t)in->imm;
	uint32_t pt, pf;

	emit_pos(e, b->end, b->ninsns - 1, b->nbranches - 1, false);
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
	case X86_BR_JMP_IND:
	case X86_BR_CALL_IND:
		e->npos--;		/* the int3 stands for the branch */
		emit_exit(e, 0, 0, true, b);
		return 0;
	default:
		return -1;
	}
}

/* Write the trace from va into e; -1 where it cannot be copied. */
static int trans_emit(struct blk_ctx *c, struct emit *e, uint64_t va,
		      const struct block *b)
{
	uint32_t ni = 0, nb = 0;
	uint8_t ib[X86_MAX_INSN_LEN];
	struct x86_insn_class ic;
	struct x86_insn in;
	uint64_t gpa;

	emit_prologue(e, b, va);
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
	    !code_fixed(c, b->end + b->insn.len - 1, &gpa))
		return -1;
	return emit_end(e, b);
}

static void exit_link(struct blk_ctx *c, struct step_cache *sc,
		      uint32_t patch, uint32_t to)
{
	uint8_t *p = vm_gpa_to_hva(c->vm, sc->gpa + patch, 4);
	uint32_t rel = to - (patch + 4);

	if (p)
		memcpy(p, &rel, 4);
}

/* Copy the block at va into the window: its index, or -1. */
static int32_t cache_translate(struct blk_ctx *c, struct step_cache *sc,
			       uint64_t va, uint64_t gpa)
{
	static __thread struct emit e;
	struct ctrans *t;
	struct block b;
	uint8_t *dst;
	int32_t k;

	if (block_scan(c, va, 0, &b) || !branch_emulable(&b) ||
	    b.ninsns > TRANS_INSNS)
		return -1;
	if (sc->size - sc->used < TRANS_MAX)
		cache_flush(sc, c->st);
	memset(&e, 0, offsetof(struct emit, buf));
	e.sc = sc;
	e.at = sc->used;
	e.npos = e.nex = e.len = 0;
	if (trans_emit(c, &e, va, &b) ||
	    tables_reserve(sc, e.npos, e.nex))
		return -1;
	dst = vm_gpa_to_hva(c->vm, sc->gpa + e.at, e.len);
	if (!dst)
		return -1;
	memcpy(dst, e.buf, e.len);
	k = (int32_t)sc->nt++;
	t = &sc->t[k];
	*t = (struct ctrans){ .va = va, .gpa = gpa, .at = e.at,
			      .end = e.at + e.len, .pos0 = sc->npos,
			      .npos = e.npos, .exit0 = sc->nex,
			      .nexit = e.nex, .b = b };
	memcpy(sc->pos + sc->npos, e.pos, e.npos * sizeof(*e.pos));
	memcpy(sc->ex + sc->nex, e.ex, e.nex * sizeof(*e.ex));
	sc->npos += e.npos;
	sc->nex += e.nex;
	sc->used = (e.at + e.len + 15) & ~15u;
	hash_put(sc, k);
	c->st->cache_blocks++;
	/* Exits to blocks already here (a loop's own start) go straight. */
	for (uint32_t i = 0; i < t->nexit; i++) {
		const struct cexit *x = &sc->ex[t->exit0 + i];
		uint64_t tg;
		int32_t j;

		if (x->emulate || !code_fixed(c, x->target, &tg))
			continue;
		j = cache_find(sc, x->target, tg);
		if (j >= 0)
			exit_link(c, sc, x->patch, sc->t[j].at);
	}
	return k;
}

static bool deadlines_none(const struct pv_vpmu_vcpu_page *vp)
{
	return vp->step.deadline[PV_STEP_USER_INSNS] == PV_STEP_NO_DEADLINE &&
	       vp->step.deadline[PV_STEP_USER_BRANCHES] == PV_STEP_NO_DEADLINE;
}

/* The window mapped where it should be, in this process. */
static bool window_mapped(const struct blk_ctx *c,
			  const struct step_cache *sc)
{
	uint64_t gpa;

	return !gva_to_gpa(c->vm, c->cr3, sc->va, GVA_WRITE, &gpa) &&
	       gpa == sc->gpa;
}

static uint64_t *cache_hdr(const struct blk_ctx *c,
			   const struct step_cache *sc)
{
	return vm_gpa_to_hva(c->vm, sc->gpa, HDR);
}

bool step_cache_enter(struct blk_ctx *c, struct bp_frame *f)
{
	struct step_cache *sc = c->cache;
	uint64_t gpa;
	int32_t k;

	if (!sc || !c->vp || !deadlines_none(c->vp) ||
	    !code_fixed(c, f->rip, &gpa) || !window_mapped(c, sc))
		return false;
	k = cache_find(sc, f->rip, gpa);
	if (k < 0)
		k = cache_translate(c, sc, f->rip, gpa);
	if (k < 0)
		return false;
	f->rip = sc->va + sc->t[k].at;
	f->rflags &= ~RFLAGS_TF;
	c->vp->step_cache_hdr = sc->va;
	c->st->cache_entries++;
	return true;
}

/* What the prologues counted, less what had not retired, into the vCPU's
 * counts; the header starts again from 0. */
static void cache_fold(const struct blk_ctx *c, const struct step_cache *sc,
		       int64_t less_insns, int64_t less_branches)
{
	uint64_t *h = cache_hdr(c, sc);

	if (!h)
		return;
	/* Direct readers sum step.count and the header: one change. */
	pv_seq_write_begin(&c->vp->seq);
	count_add(c->vp, h[HDR_INSNS] - (uint64_t)less_insns,
		  h[HDR_BRANCHES] - (uint64_t)less_branches);
	h[HDR_INSNS] = h[HDR_BRANCHES] = 0;
	pv_seq_write_end(&c->vp->seq);
}

int step_cache_trap(struct blk_ctx *c, struct kvm_regs *r,
		    const struct kvm_sregs *s, struct bp_frame *f)
{
	struct step_cache *sc = c->cache;
	uint32_t off = (uint32_t)(f->rip - 1 - sc->va);
	int32_t k = trans_at(sc, off);
	const struct cexit *x = NULL;
	uint64_t fault = 0, target, gen = sc->gen;
	struct cexit ex;

	for (uint32_t i = 0; k >= 0 && i < sc->t[k].nexit; i++)
		if (sc->ex[sc->t[k].exit0 + i].at == off)
			x = &sc->ex[sc->t[k].exit0 + i];
	if (!x || !c->vp)
		return 1;	/* the program's own int3, copied */
	ex = *x;
	c->st->traps++;
	c->st->cache_traps++;
	c->vp->step.traps++;
	if (ex.emulate) {
		struct block b = sc->t[k].b;

		if (branch_emulate(c, r, s, f, &b, &fault)) {
			/* Not retired: the CPU faults at the branch. */
			cache_fold(c, sc, 1, 1);
			f->rip = b.end;
			c->vp->step.rip = b.end;
			c->vp->step.fault_addr = fault;
			return 2;
		}
		target = f->rip;
	} else {
		target = ex.target;
	}
	cache_fold(c, sc, 0, 0);
	f->rip = target;
	c->vp->step.rip = target;
	if (step_cache_enter(c, f)) {
		if (ex.patch && sc->gen == gen)
			exit_link(c, sc, ex.patch, (uint32_t)(f->rip - sc->va));
	} else if (block_arm(c, target)) {
		f->rflags |= RFLAGS_TF;
	} else {
		f->rflags &= ~RFLAGS_TF;
	}
	return 0;
}

int64_t step_cache_leave(struct blk_ctx *c, struct pv_step_frame *tf,
			 uint64_t to)
{
	struct step_cache *sc = c->cache;
	uint32_t off = (uint32_t)(to - sc->va);
	int32_t k = trans_at(sc, off);
	const struct cpos *p = NULL;
	uint32_t ni, nb, added_i, added_b;
	uint64_t va, *h = cache_hdr(c, sc), old = tf->rip;
	const struct ctrans *t;

	if (k < 0 || !h || !c->vp) {
		c->st->inconsistent++;
		return -EINVAL;
	}
	t = &sc->t[k];
	for (uint32_t i = 0; i < t->npos; i++)
		if (sc->pos[t->pos0 + i].at <= off)
			p = &sc->pos[t->pos0 + i];
	if (!p) {
		c->st->inconsistent++;
		return -EINVAL;
	}
	if (p->prologue) {
		/* Interrupted in the prologue: k of its 8 instructions ran. */
		uint32_t done = (off - p->at) / PRO_INSN;

		added_i = done >= 4 ? t->b.ninsns : 0;
		added_b = done >= 7 ? t->b.nbranches : 0;
		if (done >= 1)
			tf->rax = h[HDR_RAX];
		ni = nb = 0;
		va = t->va;
	} else {
		added_i = t->b.ninsns;
		added_b = t->b.nbranches;
		ni = p->ninsns;
		nb = p->nbranches;
		va = p->va;
	}
	cache_fold(c, sc, (int64_t)added_i - ni, (int64_t)added_b - nb);
	tf->rip = va + (old - to);
	if (tf->vector == PV_STEP_FRAME_SYSCALL && tf->rcx == old)
		tf->rcx = tf->rip;	/* what `syscall` left there */
	c->st->cache_leaves++;
	return ni;
}
