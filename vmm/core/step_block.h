/* SPDX-License-Identifier: MIT */
#ifndef VMM_STEP_BLOCK_H
#define VMM_STEP_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "vcpu.h"

/*
 * The step source by basic blocks: user code runs natively to an int3 the
 * VMM puts on the branch that ends its basic block; the guest kernel's
 * #BP entry hands the trap to the VMM (PV_BP_PORT), which counts the
 * block, emulates the branch and ends the next block the same way.  One
 * trap per block instead of one per instruction; the counts are those of
 * single-stepping.  docs/design.md, "Counting by blocks".
 */
struct step_blocks;

struct step_blocks_stats {
	uint64_t traps;		/* int3s at block ends taken */
	uint64_t arms;		/* returns to user mode that ended a block */
	uint64_t arms_stepped;	/* ... that had to single-step it instead */
	uint64_t accounts;	/* kernel entries that counted a partial block */
	uint64_t inconsistent;	/* counts that found no straight run (a bug) */
	uint64_t patches;	/* int3s in guest memory */
	uint64_t frames;	/* 4 KiB pages holding them */
	uint64_t bytes;		/* host memory for their original bytes */
	uint64_t cache_blocks;	/* blocks translated into a code cache */
	uint64_t cache_fast;	/* ... counted by two adds (flags dead) */
	uint64_t cache_entries;	/* branches into a translated block */
	uint64_t cache_traps;	/* int3s that left one (in traps too) */
	uint64_t cache_leaves;	/* kernel entries from one */
	uint64_t cache_bp_leaves; /* ... inside a predictor stub */
	uint64_t cache_limits;	/* blocks sent back by an overflow point */
	uint64_t cache_bytes;	/* host memory for the caches' tables */
	uint64_t cache_flushes;	/* windows emptied when full */
};

/*
 * int3s go only into [code_gpa, code_gpa + code_len): the initramfs,
 * whose pages the guest kernel maps read-only in place for programs' text
 * and never frees or rewrites, so an int3 there never goes stale.
 */
/*
 * cache_gpa: the guest's 2 MiB for code caches (pv_boot_params.
 * step_cache_phys), 0 for none; a window of it for each of ncpus vCPUs.
 */
struct step_blocks *step_blocks_create(uint64_t code_gpa, uint64_t code_len,
				       uint64_t cache_gpa, int ncpus);
/* More code that never changes (the guest kernel's read-only segments,
 * where the vDSO is): -ENOSPC past STEP_CODE_SPANS.  Spans are never
 * taken back, so readers need no lock. */
#define STEP_CODE_SPANS	1024
int step_blocks_add_code(struct step_blocks *b, uint64_t gpa, uint64_t len);
/*
 * PV_HC_STEP_CODE (uapi/vpmu.h): a span the guest kernel says it pinned,
 * within mem_size bytes of RAM and off the code caches, or -EINVAL.
 * 0 with b NULL (not counting by blocks).
 */
int step_blocks_guest_code(struct step_blocks *b, uint64_t mem_size,
			   uint64_t gpa, uint64_t len);
void step_blocks_destroy(struct step_blocks *b);
void step_blocks_stats(struct step_blocks *b, struct step_blocks_stats *out);

/*
 * An I/O exit, before the PMU sees it (vcpu_pmu_after_run()).  PV_BP_PORT:
 * the trap, answered in the guest's eax (0, 1 or 2: uapi/hypercall.h).
 * PV_HC_STEP_ACCOUNT: the count, its result left in v->pmu.step_account
 * for the hypercall.  Returns true when the exit was one of these (or
 * PV_HC_STEP_ARM) and no count reached its overflow point: then it is
 * part of the guest's run, which pmu/ need not see.
 */
bool step_block_exit(struct vcpu *v);
/* PV_HC_STEP_ARM (uapi/vpmu.h). */
int64_t step_block_arm(struct vcpu *v, uint64_t rip, uint64_t frame,
		       uint64_t code_gen);

/*
 * The VMM copied len bytes from src_gpa to dst (PV_HC_COPY, PV_HC_MEMCPY):
 * put back the program's bytes under our int3s in the copy, so that a copy
 * of a text page or a read of a program file sees what the file holds.
 */
void step_blocks_clean_copy(struct step_blocks *b, uint8_t *dst,
			    uint64_t src_gpa, uint64_t len);

#endif
