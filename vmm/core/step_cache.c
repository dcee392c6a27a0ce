// SPDX-License-Identifier: MIT
/*
 * The step source's code cache (docs/design.md, "Counting by blocks").
 *
 * A trap per basic block still costs several µs on kvm_pvm, and a hot
 * loop is a trap per iteration.  So the VMM copies each block it meets
 * into its vCPU's window of a 2 MiB page that the guest kernel maps at
 * PV_STEP_CACHE_VA in every process (mm_map_step_cache()):
 *   - a prologue adds the block's instruction and branch counts to
 *     counters at the start of the window (first checking them against
 *     their limits, in a window made while a count has an overflow
 *     point);
 *   - the block's own instructions follow, RIP-relative operands and the
 *     direct calls' return addresses fixed to mean what they meant;
 *   - its jcc or loop leads, through an int3 until the target has a copy
 *     too, straight to the copy of the block it goes to; a ret or an
 *     indirect branch looks its target's copy up in a table the VMM
 *     fills, and where it finds none leaves by an int3 whose branch the
 *     VMM emulates, as for an int3 in the program's own code.
 * Counts stay exact: every kernel entry from a copy (a system call, a
 * fault, an interrupt) hands its frame to the VMM (PV_HC_STEP_ACCOUNT),
 * which counts what retired of the block and moves the frame back to the
 * program's own code.  So no thread is ever in a copy while the guest
 * kernel runs: the kernel, signal frames and samples see only the
 * program's addresses, and a window can be emptied at any trap of its
 * vCPU.  A count's overflow point (sampling, overflow signals) is a limit
 * the prologue checks: a block that would pass it leaves by an int3 and
 * runs by int3s and single steps, which put the overflow at its exact
 * instruction.
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
#include "step_translate.h"

#define RFLAGS_TF	0x100ull

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
	bool tables_live;	/* the rets' or jumps' table may hold a copy
				 * (or was never written: RAM starts zeroed) */
	uint64_t tables_code_gen; /* the process's code they were filled for */
	bool tables_ready;	/* written once at least */
	bool checked;		/* the copies' prologues check the limits */
	bool want_checked;	/* ... as the last entry needed */
	bool predict;		/* the copies' jccs run predictor stubs */
	bool want_predict;	/* ... as the last entry needed */
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
	sc->used = CODE0;
	sc->tables_live = true;
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

size_t step_cache_bytes(const struct step_cache *sc)
{
	return sizeof(*sc) + sc->tcap * sizeof(*sc->t) +
	       sc->poscap * sizeof(*sc->pos) + sc->excap * sizeof(*sc->ex) +
	       sc->nhash * sizeof(*sc->hash);
}

bool step_cache_owns(const struct step_cache *sc, uint64_t va)
{
	return sc && va - sc->va < sc->size;
}

/* No ret or jump finds a copy until the VMM has put one there. */
static void tables_clear(const struct blk_ctx *c, struct step_cache *sc)
{
	uint64_t *t = vm_gpa_to_hva(c->vm, sc->gpa + RET_KEYS, TABLES_LEN);

	if (!sc->tables_live || !t)
		return;
	for (unsigned int i = 0; i < TABLES_LEN / 8; i++)
		t[i] = TABLE_EMPTY;
	sc->tables_live = false;
}

/* target's copy into slot i of the table whose keys are at `keys`. */
static void table_put(const struct blk_ctx *c, struct step_cache *sc,
		      uint32_t keys, uint32_t vals, unsigned int i,
		      uint64_t target, uint64_t copy)
{
	uint64_t *t = vm_gpa_to_hva(c->vm, sc->gpa + RET_KEYS, TABLES_LEN);

	if (!t)
		return;
	/* The copy first: the key makes the slot live, and the guest reads
	 * both only while this vCPU runs, which it does not now. */
	t[(vals - RET_KEYS) / 8 + i] = copy;
	t[(keys - RET_KEYS) / 8 + i] = target;
	sc->tables_live = true;
}

void step_cache_code_gen(struct blk_ctx *c, uint64_t code_gen)
{
	struct step_cache *sc = c->cache;

	if (sc && sc->tables_code_gen != code_gen) {
		tables_clear(c, sc);
		sc->tables_code_gen = code_gen;
	}
}

static void cache_flush(const struct blk_ctx *c, struct step_cache *sc)
{
	sc->nt = sc->npos = sc->nex = 0;
	sc->used = CODE0;
	sc->checked = sc->want_checked;
	sc->predict = sc->want_predict;
	tables_clear(c, sc);
	sc->gen++;
	memset(sc->hash, 0xff, sc->nhash * sizeof(*sc->hash));
	c->st->cache_flushes++;
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
		cache_flush(c, sc);
	memset(&e, 0, offsetof(struct emit, buf));
	e.win = sc->va;
	e.checked = sc->checked;
	e.predict = sc->predict;
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
	c->st->cache_fast += e.pos[0].fast;
	/* Exits to blocks already here (a loop's own start) go straight. */
	for (uint32_t i = 0; i < t->nexit; i++) {
		const struct cexit *x = &sc->ex[t->exit0 + i];
		uint64_t tg;
		int32_t j;

		if (x->kind != CX_JUMP || !code_fixed(c, x->target, &tg))
			continue;
		j = cache_find(sc, x->target, tg);
		if (j >= 0)
			exit_link(c, sc, x->patch, sc->t[j].at);
	}
	return k;
}

/* How far step slot s may count before its overflow point, as block_arm()
 * decides where one falls. */
static uint64_t count_limit(const struct pv_vpmu_vcpu_page *vp, int s)
{
	uint64_t cnt = vp->step.count[s], dl = vp->step.deadline[s];

	if (s == PV_STEP_USER_BRANCHES && !(vp->step.enable & 2))
		return LIMIT_NONE;
	return cnt < dl && dl - cnt < LIMIT_NONE ? dl - cnt : LIMIT_NONE;
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
	uint64_t gpa, *h;
	int32_t k;

	if (!sc || !c->vp || !code_fixed(c, f->rip, &gpa) ||
	    !window_mapped(c, sc) || !(h = cache_hdr(c, sc)))
		return false;
	/* The header was just folded (or never used): limits from 0. */
	h[HDR_LIMIT_INSNS] = count_limit(c->vp, PV_STEP_USER_INSNS);
	h[HDR_LIMIT_BRANCHES] = count_limit(c->vp, PV_STEP_USER_BRANCHES);
	if (!h[HDR_LIMIT_INSNS] || !h[HDR_LIMIT_BRANCHES])
		return false;
	/* Plain prologues count a third of the instructions; a count
	 * with an overflow point empties a window of them, once, and the
	 * window keeps checking until it is emptied again. */
	sc->want_checked = h[HDR_LIMIT_INSNS] != LIMIT_NONE ||
			   h[HDR_LIMIT_BRANCHES] != LIMIT_NONE;
	/* Predictor stubs likewise, from the first entry that counts
	 * branch-misses; their tables are in the header. */
	sc->want_predict = c->vp->step.enable & PV_STEP_PREDICT;
	if ((sc->want_checked && !sc->checked) ||
	    (sc->want_predict && !sc->predict))
		cache_flush(c, sc);
	if (sc->predict) {
		memcpy(&h[HDR_BP], bp_next, sizeof(bp_next));
		memcpy(&h[HDR_BP + 1], bp_miss, sizeof(bp_miss));
	}
	if (!sc->tables_ready) {
		tables_clear(c, sc);
		sc->tables_ready = !sc->tables_live;
	}
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

uint8_t *step_cache_bht(const struct blk_ctx *c)
{
	return c->cache ? vm_gpa_to_hva(c->vm, c->cache->gpa + BHT,
					BHT_ENTRIES) : NULL;
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
	if (c->vp->step.enable & PV_STEP_PREDICT)
		c->vp->step.count[PV_STEP_USER_BMISS] += h[HDR_BMISS];
	h[HDR_INSNS] = h[HDR_BRANCHES] = h[HDR_BMISS] = 0;
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
	bool ret_fast = false, jmp_fast = false;
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
	if (ex.kind == CX_LIMIT) {
		/* The block would pass an overflow point: run it from the
		 * program's code, by int3s and single steps, with the
		 * registers the prologue borrowed given back. */
		uint64_t *h = cache_hdr(c, sc);

		c->st->cache_limits++;
		if (h) {
			f->rax = h[HDR_RAX];
			r->rcx = h[HDR_RCX];
			r->rdx = h[HDR_RDX];
		}
		cache_fold(c, sc, 0, 0);
		f->rip = sc->t[k].va;
		c->vp->step.rip = f->rip;
		block_arm_frame(c, f);
		return 0;
	}
	if (ex.kind == CX_EMULATE) {
		struct block b = sc->t[k].b;

		ret_fast = trans_ret_fast(&b);
		jmp_fast = trans_jmp_fast(&b);
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
	if (!step_cache_enter(c, f))
		block_arm_frame(c, f);
	else if (ex.patch && sc->gen == gen)
		exit_link(c, sc, ex.patch, (uint32_t)(f->rip - sc->va));
	else if (ret_fast)
		table_put(c, sc, RET_KEYS, RET_VALS, target % RET_SLOTS,
			  target, f->rip);
	else if (jmp_fast)
		table_put(c, sc, JMP_KEYS, JMP_VALS, jmp_slot(target),
			  target, f->rip);
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
		/* Interrupted in the prologue, after `done` of its
		 * instructions: undo what they did. */
		const struct pro_shape *ps = p->fast ? &pro_fast :
					     sc->checked ? &pro_checked :
							   &pro_plain;
		uint32_t done = insns_ran(ps->insn_len, ps->ninsns,
					  off - p->at), saved;

		added_i = done >= ps->add_insns ? t->b.ninsns : 0;
		added_b = done >= ps->add_branches ? t->b.nbranches : 0;
		saved = done < ps->nsaved ? done : ps->nsaved;
		if (saved >= 1)
			tf->rax = h[HDR_RAX];
		if (saved >= 2)
			tf->rcx = h[HDR_RCX];
		if (saved >= 3)
			tf->rdx = h[HDR_RDX];
		ni = nb = 0;
		va = t->va;
	} else {
		added_i = t->b.ninsns;
		added_b = t->b.nbranches;
		ni = p->ninsns;
		nb = p->nbranches;
		va = p->va;
	}
	if (p->bp) {
		/* In a predictor stub: the branch retired; its update is
		 * done as the stub would have done it. */
		uint32_t done = insns_ran(bp_len, BP_INSNS, off - p->at);
		uint8_t *bht = step_cache_bht(c);

		if (bht)
			bp_finish(bht, h, t->b.end, p->bp_taken, done, tf);
		c->st->cache_bp_leaves++;
	}
	if (p->stub) {
		/* In a ret's or jump's table lookup: the branch has not
		 * retired; give back the registers its first three movs
		 * saved, and at its final jmp the stack move before it. */
		uint32_t saved = (off - p->at) / STUB_SAVE_LEN;

		if (p->sp_undo)
			saved = 3;
		if (saved >= 1)
			tf->rcx = h[HDR_RCX];
		if (saved >= 2)
			tf->rdx = h[HDR_RDX];
		if (saved >= 3)
			tf->rax = h[HDR_RAX];
		tf->rsp += (uint64_t)(int64_t)p->sp_undo;
	}
	cache_fold(c, sc, (int64_t)added_i - ni, (int64_t)added_b - nb);
	tf->rip = va + (old - to);
	if (tf->vector == PV_STEP_FRAME_SYSCALL && tf->rcx == old)
		tf->rcx = tf->rip;	/* what `syscall` left there */
	c->st->cache_leaves++;
	return ni;
}
