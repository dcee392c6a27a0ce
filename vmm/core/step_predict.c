// SPDX-License-Identifier: MIT
/*
 * The step source's modeled branch predictor (docs/design.md, "Branch
 * mispredictions").  These hosts have no PMU, so no source can tell what
 * the CPU's predictor did; the step source sees every conditional
 * branch's outcome where it counts by blocks, and runs a textbook
 * predictor on them instead: a bimodal table of 2-bit saturating
 * counters (J. E. Smith, "A study of branch prediction strategies", ISCA
 * 1981), one per vCPU as a core has one, indexed by the branch address's
 * low bits, aliasing included.  Its misses are branch-misses.
 *
 * The same update runs in three places, on the same table: the VMM at a
 * block's int3 (bp_update()), a copy's stub in the code cache
 * (step_translate.c), and the VMM again for a stub a kernel entry cut
 * short (bp_finish()).
 */
#include "step_translate.h"

/* States 0-1 predict not taken, 2-3 taken. */
const uint8_t bp_next[2][4] = { { 0, 0, 1, 2 }, { 1, 2, 3, 3 } };
const uint8_t bp_miss[2][4] = { { 0, 0, 1, 1 }, { 1, 1, 0, 0 } };

/*
 * The stub's instructions' lengths (trans_bp_stub() checks them):
 *    1 mov %rax,HDR_RAX		 7 mov HDR_BMISS,%rcx
 *    2 mov %rcx,HDR_RCX		 8 lea (%rcx,%rax),%rcx
 *    3 movzbl bht[slot],%eax		 9 mov %rcx,HDR_BMISS
 *    4 movzbl next[taken](%rax),%ecx	10 mov HDR_RCX,%rcx
 *    5 mov %cl,bht[slot]		11 mov HDR_RAX,%rax
 *    6 movzbl miss[taken](%rax),%eax
 */
const uint8_t bp_len[BP_INSNS] = { 7, 7, 7, 8, 6, 8, 7, 4, 7, 7, 7 };

void bp_update(uint8_t *bht, uint64_t branch, bool taken, uint64_t *misses)
{
	uint8_t *s = &bht[bht_slot(branch)];
	unsigned int st = *s & 3;

	*misses += bp_miss[taken][st];
	*s = bp_next[taken][st];
}

void bp_finish(uint8_t *bht, uint64_t *h, uint64_t branch, bool taken,
	       uint32_t done, struct pv_step_frame *tf)
{
	/* Before the table's write (5) the update has not begun; after
	 * it rax holds the state (5) or the miss (6-8) until the count's
	 * write (9). */
	if (done < 5)
		bp_update(bht, branch, taken, &h[HDR_BMISS]);
	else if (done == 5)
		h[HDR_BMISS] += bp_miss[taken][tf->rax & 3];
	else if (done < 9)
		h[HDR_BMISS] += tf->rax;
	if (done >= 1 && done < 11)
		tf->rax = h[HDR_RAX];
	if (done >= 2 && done < 10)
		tf->rcx = h[HDR_RCX];
}
