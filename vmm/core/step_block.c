// SPDX-License-Identifier: MIT
/*
 * Counting user instructions a basic block per trap (see step_block.h).
 *
 * On kvm_pvm only TF and int3 stop CPL3 code (DEBUGCTL.BTF, DR0-DR3 and
 * KVM's guest debugging do not), and every guest-kernel instruction is
 * emulated, so the work is done here, in native host code:
 *   - where user code resumes (PV_HC_STEP_ARM, and after each trap), walk
 *     the straight-line code to the first branch and put an int3 on it;
 *   - at that int3 (PV_BP_PORT), count the instructions from step.rip to
 *     it, emulate the branch, and do the same for the block it leads to;
 *   - at any other kernel entry from user mode (PV_HC_STEP_ACCOUNT), count
 *     the instructions from step.rip to the entry.
 * An int3 stays once placed: a block's end is its end for every thread
 * and process that maps the page, so nothing is undone on any switch.
 * What counts as one instruction and one branch is what single-stepping
 * counts (x86_classify()): a rep string instruction runs natively to its
 * end and counts once, as it does stepped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest_mem.h"
#include "hypercall.h"
#include "layout.h"
#include "pmu.h"
#include "step_internal.h"
#include "vcpu.h"
#include "vpmu.h"
#include "x86_decode.h"
#include "x86_insn.h"

#define INT3		0xcc
#define BLOCK_MAX	4096	/* longer straight runs are single-stepped */
#define RFLAGS_TF	0x100ull

/* The program's bytes under our int3s in one 4 KiB page. */
struct patch_frame {
	uint64_t gfn;
	uint64_t mask[64];	/* bit i: byte i holds our int3 */
	uint8_t orig[4096];
};

struct step_blocks {
	pthread_mutex_t lock;		/* the table and guest code bytes */
	/* guest-physical spans of code that never changes */
	uint64_t code_lo[STEP_CODE_SPANS], code_hi[STEP_CODE_SPANS];
	int ncode;			/* published last (release) */
	uint64_t cache_gpa;		/* the code caches' 2 MiB, or 0 */
	struct step_cache **cache;	/* a code cache per vCPU, or NULL */
	int ncache;
	uint8_t *bht;			/* the predictor's, per vCPU without a cache */
	struct patch_frame **slot;	/* open addressing on gfn */
	size_t nslots;
	struct step_blocks_stats st;
};

struct step_blocks *step_blocks_create(uint64_t code_gpa, uint64_t code_len,
				       uint64_t cache_gpa, int ncpus)
{
	struct step_blocks *b = calloc(1, sizeof(*b));
	uint32_t win = ncpus > 0 ? (uint32_t)(PV_STEP_CACHE_SIZE / ncpus) &
				   ~4095u : 0;

	if (!b)
		return NULL;
	/* Each vCPU its own window: a copy is only ever patched while its
	 * vCPU is out of the guest, so no code is modified under a CPU. */
	if (cache_gpa && win >= 64 * 1024) {
		b->cache = calloc((size_t)ncpus, sizeof(*b->cache));
		for (int i = 0; b->cache && i < ncpus; i++) {
			b->cache[i] = step_cache_create(PV_STEP_CACHE_VA +
							(uint64_t)i * win,
							cache_gpa +
							(uint64_t)i * win, win);
			if (!b->cache[i])
				break;
			b->ncache = i + 1;
		}
	}
	b->nslots = 256;
	b->slot = calloc(b->nslots, sizeof(*b->slot));
	if (!b->slot) {
		free(b);
		return NULL;
	}
	/* Without a window (or past the windows), a host-side table. */
	b->bht = calloc(ncpus > 0 ? (size_t)ncpus : 1, BHT_ENTRIES);
	pthread_mutex_init(&b->lock, NULL);
	b->cache_gpa = cache_gpa;
	step_blocks_add_code(b, code_gpa, code_len);
	return b;
}

static bool code_span_has(const struct step_blocks *b, uint64_t lo,
			  uint64_t hi)
{
	int n = __atomic_load_n(&b->ncode, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n; i++)
		if (hi > b->code_lo[i] && lo < b->code_hi[i])
			return true;
	return false;
}

/* Whether one span holds all of [lo, hi): a library mapped again. */
static bool code_span_covers(const struct step_blocks *b, uint64_t lo,
			     uint64_t hi)
{
	for (int i = 0; i < b->ncode; i++)
		if (lo >= b->code_lo[i] && hi <= b->code_hi[i])
			return true;
	return false;
}

int step_blocks_add_code(struct step_blocks *b, uint64_t gpa, uint64_t len)
{
	int err = 0, n;

	pthread_mutex_lock(&b->lock);
	n = b->ncode;
	if (code_span_covers(b, gpa, gpa + len)) {
		/* nothing new */
	} else if (n == STEP_CODE_SPANS) {
		err = -ENOSPC;
	} else {
		b->code_lo[n] = gpa;
		b->code_hi[n] = gpa + len;
		__atomic_store_n(&b->ncode, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&b->lock);
	return err;
}

int step_blocks_guest_code(struct step_blocks *b, uint64_t mem_size,
			   uint64_t gpa, uint64_t len)
{
	if (!b)
		return 0;
	if (!len || gpa >= mem_size || len > mem_size - gpa)
		return -EINVAL;
	if (b->cache_gpa && gpa < b->cache_gpa + PV_STEP_CACHE_SIZE &&
	    gpa + len > b->cache_gpa)
		return -EINVAL;
	return step_blocks_add_code(b, gpa, len);
}

void step_blocks_destroy(struct step_blocks *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nslots; i++)
		free(b->slot[i]);
	free(b->slot);
	for (int i = 0; i < b->ncache; i++)
		step_cache_destroy(b->cache[i]);
	free(b->cache);
	free(b->bht);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

void step_blocks_stats(struct step_blocks *b, struct step_blocks_stats *out)
{
	pthread_mutex_lock(&b->lock);
	*out = b->st;
	out->cache_bytes = 0;
	for (int i = 0; i < b->ncache; i++)
		out->cache_bytes += step_cache_bytes(b->cache[i]);
	pthread_mutex_unlock(&b->lock);
}

static size_t frame_hash(const struct step_blocks *b, uint64_t gfn)
{
	return (size_t)(gfn * 0x9e3779b97f4a7c15ull >> 20) & (b->nslots - 1);
}

static struct patch_frame *frame_find(const struct step_blocks *b,
				      uint64_t gfn)
{
	for (size_t i = frame_hash(b, gfn);; i = (i + 1) & (b->nslots - 1)) {
		if (!b->slot[i] || b->slot[i]->gfn == gfn)
			return b->slot[i];
	}
}

/* The table stays at most half full, so a probe always ends. */
static int frame_grow(struct step_blocks *b)
{
	struct patch_frame **old = b->slot;
	size_t n = b->nslots;

	b->slot = calloc(2 * n, sizeof(*b->slot));
	if (!b->slot) {
		b->slot = old;
		return -ENOMEM;
	}
	b->nslots = 2 * n;
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = frame_hash(b, old[i]->gfn); b->slot[j];
		     j = (j + 1) & (b->nslots - 1))
			;
		b->slot[j] = old[i];
	}
	free(old);
	return 0;
}

static struct patch_frame *frame_get(struct step_blocks *b, uint64_t gfn)
{
	struct patch_frame *f = frame_find(b, gfn);
	size_t i;

	if (f)
		return f;
	if (2 * (b->st.frames + 1) > b->nslots && frame_grow(b))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->gfn = gfn;
	for (i = frame_hash(b, gfn); b->slot[i]; i = (i + 1) & (b->nslots - 1))
		;
	b->slot[i] = f;
	b->st.frames++;
	b->st.bytes += sizeof(*f);
	return f;
}

static bool frame_patched(const struct patch_frame *f, unsigned int off)
{
	return f && (f->mask[off / 64] >> (off % 64) & 1);
}

static bool gpa_patched(const struct step_blocks *b, uint64_t gpa)
{
	return frame_patched(frame_find(b, gpa >> 12), gpa & 4095);
}

/* Up to len bytes of user code at va as the program has them (our int3s
 * undone); fewer where a page is not readable. */
size_t code_read(const struct blk_ctx *c, uint64_t va, uint8_t *buf,
		 size_t len)
{
	size_t done = 0;

	while (done < len) {
		uint64_t a = va + done, gpa;
		size_t n = 4096 - (a & 4095);
		const struct patch_frame *f;
		const uint8_t *p;

		if (n > len - done)
			n = len - done;
		if (gva_to_gpa(c->vm, c->cr3, a, GVA_READ, &gpa))
			break;
		p = vm_gpa_to_hva(c->vm, gpa, n);
		if (!p)
			break;
		memcpy(buf + done, p, n);
		f = frame_find(c->b, gpa >> 12);
		for (size_t i = 0; f && i < n; i++)
			if (frame_patched(f, (gpa & 4095) + i))
				buf[done + i] = f->orig[(gpa & 4095) + i];
		done += n;
	}
	return done;
}

/* A jmp or call whose target the instruction holds. */
bool branch_direct(const struct x86_insn *in, enum x86_branch br)
{
	return (br == X86_BR_JMP || br == X86_BR_CALL) && !in->opsize;
}

/*
 * Walk the trace from va.  Returns 0 at its end (b describes the block),
 * 1 on reaching stop (b counts what ran before it), -1 where code cannot
 * be read or decoded, or the trace goes on for more than BLOCK_MAX
 * instructions without reaching its end or stop.
 */
int block_scan(const struct blk_ctx *c, uint64_t va, uint64_t stop,
	       struct block *b)
{
	uint8_t buf[X86_MAX_INSN_LEN];
	struct x86_insn_class ic;

	b->ninsns = 0;
	b->nbranches = 0;
	for (;;) {
		size_t got;

		if (stop && va == stop)
			return 1;
		if (b->ninsns >= BLOCK_MAX)
			return -1;
		got = code_read(c, va, buf, sizeof(buf));
		if (!got || x86_insn_decode(buf, got, &b->insn) ||
		    x86_classify(buf, got, &ic))
			return -1;
		b->ninsns++;
		va += b->insn.len;
		if (!x86_is_branch(ic.branch))
			continue;
		b->nbranches++;
		if (branch_direct(&b->insn, ic.branch)) {
			va += (uint64_t)b->insn.imm;
			continue;
		}
		b->end = va - b->insn.len;
		b->br = ic.branch;
		return 0;
	}
}

static bool counting(const struct pv_vpmu_vcpu_page *vp)
{
	return vp && (vp->step.enable & 1);
}

void count_add(struct pv_vpmu_vcpu_page *vp, uint64_t insns,
	       uint64_t branches)
{
	vp->step.count[PV_STEP_USER_INSNS] += insns;
	if (vp->step.enable & 2)
		vp->step.count[PV_STEP_USER_BRANCHES] += branches;
}

/*
 * What ran from `from` up to `to` along the trace into b; false (and b
 * empty) if the trace does not lead there.
 */
static bool count_run(struct blk_ctx *c, uint64_t from, uint64_t to,
		      struct block *b)
{
	if (block_scan(c, from, to, b) == 1)
		return true;
	c->b->st.inconsistent++;
	b->ninsns = b->nbranches = 0;
	return false;
}

bool code_fixed(const struct blk_ctx *c, uint64_t va, uint64_t *gpa)
{
	uint64_t wgpa;

	return !gva_to_gpa(c->vm, c->cr3, va, GVA_READ, gpa) &&
	       code_span_has(c->b, *gpa, *gpa + 1) &&
	       gva_to_gpa(c->vm, c->cr3, va, GVA_WRITE, &wgpa);
}

/*
 * End the block at rip with an int3.  Returns 0 when user code may run
 * untraced from rip, 1 when it must be single-stepped: its branch is not
 * one we emulate or not in the initramfs (or in a page the program may
 * write), or the counter's overflow point falls inside it.
 */
int block_arm(struct blk_ctx *c, uint64_t rip)
{
	struct step_blocks *bl = c->b;
	uint64_t gpa, cnt, dl;
	struct patch_frame *f;
	struct block b;
	uint8_t *p;

	bl->st.arms++;
	if (block_scan(c, rip, 0, &b) || !branch_emulable(&b) ||
	    !code_fixed(c, b.end, &gpa))
		goto stepped;
	cnt = c->vp->step.count[PV_STEP_USER_INSNS];
	dl = c->vp->step.deadline[PV_STEP_USER_INSNS];
	if (cnt < dl && cnt + b.ninsns > dl)
		goto stepped;
	cnt = c->vp->step.count[PV_STEP_USER_BRANCHES];
	dl = c->vp->step.deadline[PV_STEP_USER_BRANCHES];
	if ((c->vp->step.enable & 2) && cnt < dl && cnt + b.nbranches > dl)
		goto stepped;
	if (gpa_patched(bl, gpa))
		return 0;
	f = frame_get(bl, gpa >> 12);
	p = vm_gpa_to_hva(c->vm, gpa, 1);
	if (!f || !p)
		goto stepped;
	f->orig[gpa & 4095] = *p;
	f->mask[(gpa & 4095) / 64] |= 1ull << (gpa & 63);
	__atomic_store_n(p, INT3, __ATOMIC_RELEASE);
	bl->st.patches++;
	return 0;
stepped:
	bl->st.arms_stepped++;
	return 1;
}

void block_arm_frame(struct blk_ctx *c, struct bp_frame *f)
{
	if (block_arm(c, f->rip))
		f->rflags |= RFLAGS_TF;
	else
		f->rflags &= ~RFLAGS_TF;
}

static bool ctx_init(struct vcpu *v, struct blk_ctx *c)
{
	c->b = v->vm->blocks;
	c->vm = v->vm;
	c->cr3 = vcpu_sregs(v)->cr3;
	c->vp = pmu_vcpu_page(v->pmu.pv);
	c->cache = c->b && v->id < c->b->ncache ? c->b->cache[v->id] : NULL;
	c->st = c->b ? &c->b->st : NULL;
	/* One table per vCPU, as a core has one: the window's, where the
	 * copies' stubs update it too. */
	c->bht = c->cache ? step_cache_bht(c) :
		 c->b && c->b->bht ? c->b->bht + (size_t)v->id * BHT_ENTRIES :
				     NULL;
	return c->b != NULL;
}

/*
 * Where the kernel returns to user code at rip.  With the frame, the
 * return goes straight into the code cache: no int3 trap at the end of
 * the first block after every system call.
 */
int64_t step_block_arm(struct vcpu *v, uint64_t rip, uint64_t frame,
		       uint64_t code_gen)
{
	struct pv_step_frame *tf;
	struct blk_ctx c;
	struct bp_frame f;
	int ret;

	if (!ctx_init(v, &c) || !counting(c.vp))
		return 1;
	tf = frame ? vm_gpa_to_hva(v->vm, frame, sizeof(*tf)) : NULL;
	pthread_mutex_lock(&c.b->lock);
	step_cache_code_gen(&c, code_gen);
	if (tf && tf->rip == rip && (tf->cs & 3) == 3) {
		f = (struct bp_frame){ .rax = tf->rax, .rip = rip, .cs = tf->cs,
				       .rflags = tf->rflags, .rsp = tf->rsp,
				       .ss = tf->ss };
		if (step_cache_enter(&c, &f)) {
			tf->rip = f.rip;
			tf->rflags = f.rflags;
			pthread_mutex_unlock(&c.b->lock);
			return 0;
		}
	}
	ret = block_arm(&c, rip);
	pthread_mutex_unlock(&c.b->lock);
	return ret;
}

static int64_t step_block_account(struct vcpu *v, uint64_t from, uint64_t to,
				  uint64_t frame)
{
	struct pv_step_frame *tf;
	struct blk_ctx c;
	struct block b;
	int64_t n;
	bool ok;

	if (!ctx_init(v, &c) || !counting(c.vp))
		return -EINVAL;
	pthread_mutex_lock(&c.b->lock);
	c.b->st.accounts++;
	if (step_cache_owns(c.cache, to)) {
		/* The kernel's frame, whole in guest RAM. */
		tf = frame ? vm_gpa_to_hva(v->vm, frame, sizeof(*tf)) : NULL;
		n = tf && (tf->cs & 3) == 3 ? step_cache_leave(&c, tf, to)
					    : -EINVAL;
		pthread_mutex_unlock(&c.b->lock);
		return n;
	}
	ok = count_run(&c, from, to, &b);
	count_add(c.vp, b.ninsns, b.nbranches);
	pthread_mutex_unlock(&c.b->lock);
	return ok ? (int64_t)b.ninsns : -EINVAL;
}

/* Guest kernel virtual address to host: the kernel maps RAM linearly. */
static struct bp_frame *bp_frame_map(struct vcpu *v)
{
	uint64_t rsp = vcpu_regs(v)->rsp;

	if (rsp < PV_KERNEL_BASE)
		return NULL;
	return vm_gpa_to_hva(v->vm, rsp - PV_KERNEL_BASE,
			     sizeof(struct bp_frame));
}

/* The int3 at f->rip - 1: 0 done, 1 not ours, 2 the branch faulted. */
static int bp_handle(struct vcpu *v, struct blk_ctx *c, struct bp_frame *f)
{
	struct kvm_regs *r = vcpu_regs(v);
	uint64_t at = f->rip - 1, gpa, fault = 0;
	bool count = counting(c->vp);
	struct block run = { 0 }, b;

	if (step_cache_owns(c->cache, at))
		return step_cache_trap(c, r, vcpu_sregs(v), f);
	if (count)
		count_run(c, c->vp->step.rip, at, &run);
	if (gva_to_gpa(c->vm, c->cr3, at, GVA_READ, &gpa) ||
	    !gpa_patched(c->b, gpa)) {
		/* The program's own int3: it retired, uncounted as stepped. */
		if (count) {
			count_add(c->vp, run.ninsns, run.nbranches);
			c->vp->step.rip = f->rip;
		}
		return 1;
	}
	c->b->st.traps++;
	if (count)
		c->vp->step.traps++;
	if (block_scan(c, at, 0, &b) || b.end != at || !branch_emulable(&b)) {
		/* Never placed so: the table and the code disagree. */
		c->b->st.inconsistent++;
		return 1;
	}
	if (branch_emulate(c, r, vcpu_sregs(v), f, &b, &fault)) {
		f->rip = at;
		if (count) {
			count_add(c->vp, run.ninsns, run.nbranches);
			c->vp->step.rip = at;
		}
		if (c->vp)
			c->vp->step.fault_addr = fault;
		return 2;
	}
	if (!count)
		return 0;
	count_add(c->vp, run.ninsns + 1, run.nbranches + 1);
	if ((c->vp->step.enable & PV_STEP_PREDICT) && c->bht &&
	    (b.br == X86_BR_JCC || b.br == X86_BR_LOOP))
		bp_update(c->bht, at, f->rip != at + b.insn.len,
			  &c->vp->step.count[PV_STEP_USER_BMISS]);
	c->vp->step.rip = f->rip;
	if (!(c->vp->step.enable & PV_STEP_BLOCKS))
		f->rflags |= RFLAGS_TF;
	else if (!step_cache_enter(c, f))
		block_arm_frame(c, f);
	return 0;
}

static void step_block_trap(struct vcpu *v)
{
	struct kvm_regs *r = vcpu_regs(v);
	struct bp_frame *f = bp_frame_map(v);
	struct blk_ctx c;
	int verdict = 1;

	if (f && (f->cs & 3) == 3 && ctx_init(v, &c)) {
		pthread_mutex_lock(&c.b->lock);
		verdict = bp_handle(v, &c, f);
		pthread_mutex_unlock(&c.b->lock);
	}
	r->rax = (uint64_t)verdict;
	vcpu_regs_mark_dirty(v);
}

/* Whether a user step count went from below its overflow point to it or
 * past (the counts before are in was[]). */
static bool deadline_crossed(const struct pv_vpmu_vcpu_page *vp,
			     const uint64_t was[PV_STEP_SLOTS])
{
	static const int user[] = {
		PV_STEP_USER_INSNS, PV_STEP_USER_BRANCHES, PV_STEP_USER_BMISS,
	};

	for (unsigned int i = 0; i < sizeof(user) / sizeof(user[0]); i++) {
		int s = user[i];
		uint64_t dl = vp->step.deadline[s];

		if (was[s] < dl && vp->step.count[s] >= dl)
			return true;
	}
	return false;
}

bool step_block_exit(struct vcpu *v)
{
	const struct kvm_run *run = v->run;
	const struct kvm_regs *r = vcpu_regs(v);
	const struct pv_vpmu_vcpu_page *vp = pmu_vcpu_page(v->pmu.pv);
	uint64_t was[PV_STEP_SLOTS] = { 0 };

	if (run->io.direction != KVM_EXIT_IO_OUT)
		return false;
	if (vp)
		memcpy(was, vp->step.count, sizeof(was));
	if (run->io.port == PV_BP_PORT) {
		step_block_trap(v);
	} else if (run->io.port != PV_HC_PORT || !v->vm->blocks) {
		return false;
	} else if (r->rax == PV_HC_STEP_ACCOUNT) {
		v->pmu.step_account = step_block_account(v, r->rdi, r->rsi,
							   r->r10);
	} else if (r->rax != PV_HC_STEP_ARM) {
		return false;
	}
	return v->vm->blocks && !(vp && deadline_crossed(vp, was));
}

void step_blocks_clean_copy(struct step_blocks *b, uint8_t *dst,
			    uint64_t src_gpa, uint64_t len)
{
	uint64_t end = src_gpa + len;

	if (!b || !code_span_has(b, src_gpa, end))
		return;
	pthread_mutex_lock(&b->lock);
	for (uint64_t a = src_gpa & ~4095ull; a < end; a += 4096) {
		const struct patch_frame *f = frame_find(b, a >> 12);

		for (unsigned int w = 0; f && w < 64; w++) {
			uint64_t m = f->mask[w];

			while (m) {
				uint64_t g = a + w * 64 + (uint64_t)__builtin_ctzll(m);

				m &= m - 1;
				if (g >= src_gpa && g < end)
					dst[g - src_gpa] = f->orig[g & 4095];
			}
		}
	}
	pthread_mutex_unlock(&b->lock);
}
