// SPDX-License-Identifier: MIT
/*
 * The modeled branch predictor (vmm/core/step_predict.c): the stub the
 * code cache runs on each side of a jcc, run here natively from a window
 * mapped at its own address, against the VMM's bp_update(); and
 * bp_finish(), the VMM's completion of a stub a kernel entry cut short,
 * after each of its instructions (the stub ends at a `ret` put there), and
 * insns_ran(), which tells it how many ran.
 * In every case the table, the miss count, rax, rcx and the flags come out
 * as one whole update would leave them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "step_translate.h"

#define WIN		0x200000ull
#define WIN_LEN		(CODE0 + 4096)
#define BRANCH		0x401234ull	/* the jcc, in the program */
#define RAX_IN		0x1111222233334444ull
#define RCX_IN		0x5555666677778888ull
#define FLAGS_ARITH	0x8d5ull	/* OF SF ZF AF PF CF */

static uint8_t *win;

static int win_map(void **state)
{
	(void)state;
	win = mmap((void *)WIN, WIN_LEN, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	return win == (void *)WIN ? 0 : -1;
}

static int win_unmap(void **state)
{
	(void)state;
	return munmap(win, WIN_LEN);
}

static uint64_t *hdr(void)
{
	return (uint64_t *)win;
}

/* The stub for one side into the window; its length. */
static uint32_t stub_write(bool taken)
{
	static struct emit e;
	struct block b = { .end = BRANCH, .br = X86_BR_JCC };
	uint32_t len = 0;

	memset(&e, 0, offsetof(struct emit, buf));
	e.win = WIN;
	e.at = CODE0;
	e.predict = true;
	e.len = e.npos = e.nex = 0;
	assert_int_equal(trans_bp_stub(&e, &b, BRANCH + 6, taken), 0);
	for (unsigned int i = 0; i < BP_INSNS; i++)
		len += bp_len[i];
	assert_int_equal(e.len, len);
	assert_true(e.npos == 1 && e.pos[0].bp && e.pos[0].bp_taken == taken);
	memcpy(win + CODE0, e.buf, e.len);
	memcpy(&hdr()[HDR_BP], bp_next, sizeof(bp_next));
	memcpy(&hdr()[HDR_BP + 1], bp_miss, sizeof(bp_miss));
	return len;
}

/*
 * Run the stub's first `done` instructions (a ret after them) with rax
 * and rcx set, and the arithmetic flags set to `flags`; what the registers
 * and flags were after.
 */
static void stub_run(uint32_t done, uint64_t *rax, uint64_t *rcx,
		     uint64_t *flags)
{
	uint32_t at = 0;
	uint8_t *code = win + CODE0, saved;
	uint64_t a = *rax, c = *rcx, f = *flags;

	for (uint32_t i = 0; i < done; i++)
		at += bp_len[i];
	saved = code[at];
	code[at] = 0xc3;
	/* Below the red zone: the call's push must not land in it (lea:
	 * the flags are set for the stub by then). */
	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
			 "push %[f]\n\t"
			 "popf\n\t"
			 "call *%[code]\n\t"
			 "pushf\n\t"
			 "pop %[f]\n\t"
			 "lea 128(%%rsp), %%rsp"
			 : "+a"(a), "+c"(c), [f] "+r"(f)
			 : [code] "r"(code)
			 : "memory", "cc");
	code[at] = saved;
	*rax = a;
	*rcx = c;
	*flags = f;
}

/* The whole stub, from every state, on both sides: as bp_update(). */
static void test_stub_whole(void **state)
{
	(void)state;
	for (int taken = 0; taken < 2; taken++) {
		stub_write(taken);
		for (unsigned int s = 0; s < 4; s++) {
			uint8_t want_bht[BHT_ENTRIES] = { 0 };
			uint64_t want_miss = 7, rax = RAX_IN, rcx = RCX_IN;
			uint64_t flags = 0x202 | (s & 1 ? FLAGS_ARITH : 0x41);
			uint64_t flags_in = flags;

			memset(win + BHT, 0, BHT_ENTRIES);
			win[BHT + bht_slot(BRANCH)] = (uint8_t)s;
			want_bht[bht_slot(BRANCH)] = (uint8_t)s;
			hdr()[HDR_BMISS] = 7;
			bp_update(want_bht, BRANCH, taken, &want_miss);
			stub_run(BP_INSNS, &rax, &rcx, &flags);
			assert_memory_equal(win + BHT, want_bht, BHT_ENTRIES);
			assert_int_equal(hdr()[HDR_BMISS], want_miss);
			assert_int_equal(rax, RAX_IN);
			assert_int_equal(rcx, RCX_IN);
			assert_int_equal(flags & FLAGS_ARITH,
					 flags_in & FLAGS_ARITH);
		}
	}
}

/* The model itself: a 2-bit saturating counter, 2-3 predicting taken. */
static void test_update_model(void **state)
{
	uint8_t bht[BHT_ENTRIES] = { 0 };
	uint64_t miss = 0;

	(void)state;
	/* From strongly not taken: two taken miss, the third hits. */
	bp_update(bht, BRANCH, true, &miss);
	bp_update(bht, BRANCH, true, &miss);
	assert_int_equal(miss, 2);
	bp_update(bht, BRANCH, true, &miss);
	bp_update(bht, BRANCH, true, &miss);
	assert_int_equal(miss, 2);
	assert_int_equal(bht[bht_slot(BRANCH)], 3);
	/* One not taken misses and stays predicting taken. */
	bp_update(bht, BRANCH, false, &miss);
	assert_int_equal(miss, 3);
	bp_update(bht, BRANCH, true, &miss);
	assert_int_equal(miss, 3);
	/* Another branch 4096 bytes on shares the counter (aliasing). */
	bp_update(bht, BRANCH + BHT_ENTRIES, false, &miss);
	assert_int_equal(miss, 4);
	assert_int_equal(bht[bht_slot(BRANCH)], 2);
}

/* Cut after each instruction, then bp_finish(): as the whole stub. */
static void test_finish_each_cut(void **state)
{
	(void)state;
	for (int taken = 0; taken < 2; taken++) {
		stub_write(taken);
		for (unsigned int s = 0; s < 4; s++) {
			for (uint32_t done = 0; done <= BP_INSNS; done++) {
				uint8_t want_bht[BHT_ENTRIES] = { 0 };
				uint64_t want_miss = 40, flags = 0x202;
				struct pv_step_frame tf = { .rax = RAX_IN,
							    .rcx = RCX_IN };

				memset(win + BHT, 0, BHT_ENTRIES);
				win[BHT + bht_slot(BRANCH)] = (uint8_t)s;
				want_bht[bht_slot(BRANCH)] = (uint8_t)s;
				hdr()[HDR_BMISS] = 40;
				hdr()[HDR_RAX] = hdr()[HDR_RCX] = 0xdead;
				bp_update(want_bht, BRANCH, taken, &want_miss);
				stub_run(done, &tf.rax, &tf.rcx, &flags);
				bp_finish(win + BHT, hdr(), BRANCH, taken,
					  done, &tf);
				assert_memory_equal(win + BHT, want_bht,
						    BHT_ENTRIES);
				assert_int_equal(hdr()[HDR_BMISS], want_miss);
				assert_int_equal(tf.rax, RAX_IN);
				assert_int_equal(tf.rcx, RCX_IN);
			}
		}
	}
}

/* A kernel entry at each instruction's first byte and inside it: the
 * instructions before it ran, as bp_finish() is told.  A varying length
 * (8 after 7s) is where a miscount shows. */
static void test_insns_ran(void **state)
{
	uint32_t at = 0;

	(void)state;
	for (uint32_t k = 0; k < BP_INSNS; k++) {
		assert_int_equal(insns_ran(bp_len, BP_INSNS, at), k);
		assert_int_equal(insns_ran(bp_len, BP_INSNS, at + 1), k);
		at += bp_len[k];
	}
	assert_int_equal(insns_ran(bp_len, BP_INSNS, at), BP_INSNS);
	assert_int_equal(insns_ran(bp_len, BP_INSNS, at + 5), BP_INSNS);
	/* the checked prologue's lengths vary too */
	at = 0;
	for (uint32_t k = 0; k < pro_checked.ninsns; k++) {
		assert_int_equal(insns_ran(pro_checked.insn_len,
					   pro_checked.ninsns, at), k);
		at += pro_checked.insn_len[k];
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_update_model),
		cmocka_unit_test(test_insns_ran),
		cmocka_unit_test(test_stub_whole),
		cmocka_unit_test(test_finish_each_cut),
	};

	return cmocka_run_group_tests(tests, win_map, win_unmap);
}
