/* SPDX-License-Identifier: MIT */
/*
 * What step_block.c (int3s at block ends) and step_cache.c (translated
 * blocks) share: private to the two.
 */
#ifndef VMM_STEP_INTERNAL_H
#define VMM_STEP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "step_block.h"
#include "vpmu.h"
#include "x86_decode.h"
#include "x86_insn.h"

struct step_cache;

/* The #BP entry's stack at the out: rax, then the iret frame. */
struct bp_frame {
	uint64_t rax, rip, cs, rflags, rsp, ss;
};

/* What one trap or hypercall works on: the vCPU's view of the guest. */
struct blk_ctx {
	struct step_blocks *b;
	struct vm *vm;
	uint64_t cr3;
	struct pv_vpmu_vcpu_page *vp;	/* NULL before the kernel set it */
	struct step_cache *cache;	/* this vCPU's, or NULL */
	struct step_blocks_stats *st;
	uint8_t *bht;			/* the predictor's table, or NULL */
};

/*
 * A block here is a trace: straight-line code and the direct jumps and
 * calls in it (their targets are in the code), up to the first branch
 * whose target is not: a jcc, ret, indirect jump or call, loop.
 */
struct block {
	uint64_t end;		/* the branch that ends it */
	uint32_t ninsns;	/* instructions, the branch included */
	uint32_t nbranches;	/* branches, the end included */
	struct x86_insn insn;	/* the branch */
	enum x86_branch br;
};

size_t code_read(const struct blk_ctx *c, uint64_t va, uint8_t *buf,
		 size_t len);
int block_scan(const struct blk_ctx *c, uint64_t va, uint64_t stop,
	       struct block *b);
bool branch_direct(const struct x86_insn *in, enum x86_branch br);
bool branch_emulable(const struct block *b);
/* Whether user code at gpa may carry our int3s or be translated: the
 * initramfs, mapped read-only. */
bool code_fixed(const struct blk_ctx *c, uint64_t va, uint64_t *gpa);
int branch_emulate(const struct blk_ctx *c, struct kvm_regs *r,
		   const struct kvm_sregs *s, struct bp_frame *f,
		   const struct block *b, uint64_t *fault);
void count_add(struct pv_vpmu_vcpu_page *vp, uint64_t insns,
	       uint64_t branches);
/* End the block at rip with an int3: 0, or 1 to single-step it. */
int block_arm(struct blk_ctx *c, uint64_t rip);
/* The same for user code resuming at f->rip: TF set where it must be
 * single-stepped, clear where it runs to the int3. */
void block_arm_frame(struct blk_ctx *c, struct bp_frame *f);

/*
 * The modeled branch predictor (step_predict.c): a bimodal table of
 * BHT_ENTRIES two-bit counters, one byte each, by the branch's address.
 * bp_next[taken][state] is the next state, bp_miss[taken][state] 1 where
 * the state predicted the other way.  While the window predicts
 * (PV_STEP_PREDICT), each side of a copy's jcc or loop runs a stub of
 * BP_INSNS flag-neutral instructions (rax and rcx borrowed) that does
 * the same to the window's table and its HDR_BMISS counter.
 */
#define BHT_ENTRIES	4096
#define BP_INSNS	11
extern const uint8_t bp_next[2][4], bp_miss[2][4];
extern const uint8_t bp_len[BP_INSNS];

static inline unsigned int bht_slot(uint64_t branch)
{
	return (unsigned int)(branch & (BHT_ENTRIES - 1));
}

/* The stub's update, into the table and *misses. */
void bp_update(uint8_t *bht, uint64_t branch, bool taken, uint64_t *misses);
/*
 * A kernel entry after `done` of a stub's instructions (registers at tf,
 * the window's header h): finish its update as the stub would have, and
 * give back the registers it borrowed.
 */
void bp_finish(uint8_t *bht, uint64_t *h, uint64_t branch, bool taken,
	       uint32_t done, struct pv_step_frame *tf);

/* step_cache.c: a code cache per vCPU, in the window given at boot. */
struct step_cache *step_cache_create(uint64_t va, uint64_t gpa,
				     uint32_t size);
void step_cache_destroy(struct step_cache *sc);
/* Host memory for its tables (the copies are in guest RAM). */
size_t step_cache_bytes(const struct step_cache *sc);
/* Whether va is in the cache's window (its code, not the program's). */
bool step_cache_owns(const struct step_cache *sc, uint64_t va);
/*
 * After a branch to f->rip: run the code there from the cache if it can
 * be (translated now if need be).  True when f->rip now points there.
 */
bool step_cache_enter(struct blk_ctx *c, struct bp_frame *f);
/* The window's predictor table (step_predict.c), or NULL. */
uint8_t *step_cache_bht(const struct blk_ctx *c);
/* The process's code_gen at a return to user mode (PV_HC_STEP_ARM): what
 * the cache remembers by address alone goes when it changes. */
void step_cache_code_gen(struct blk_ctx *c, uint64_t code_gen);
/*
 * The int3 at f->rip - 1, in the window: 0 done (f points on, into the
 * cache or to the program's code), 1 not one of the cache's (the
 * program's own int3, copied), 2 the emulated branch faulted.
 */
int step_cache_trap(struct blk_ctx *c, struct kvm_regs *r,
		    const struct kvm_sregs *s, struct bp_frame *f);
/*
 * A kernel entry at `to` in the window, its registers at tf: count what
 * retired and move tf back to the program's code.  The instructions the
 * thread retired in the cache's block, or -EINVAL.
 */
int64_t step_cache_leave(struct blk_ctx *c, struct pv_step_frame *tf,
			 uint64_t to);

#endif
