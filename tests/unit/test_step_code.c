// SPDX-License-Identifier: MIT
/*
 * The step source's spans of code that never changes (step_block.c):
 * what a guest kernel may name with PV_HC_STEP_CODE, and how many.  The
 * KVM tests step-block-dynamic-* and step-block-lib-clean use them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "layout.h"
#include "step_block.h"

#define MEM	(64ull << 20)
#define CACHE	(MEM - PV_STEP_CACHE_SIZE)

static void test_guest_code_bounds(void **state)
{
	struct step_blocks *b = step_blocks_create(0x100000, 0x10000, CACHE, 1);

	(void)state;
	assert_non_null(b);
	/* Not counting by blocks: accepted, nothing to do. */
	assert_int_equal(step_blocks_guest_code(NULL, MEM, 0x200000, 4096), 0);
	assert_int_equal(step_blocks_guest_code(b, MEM, 0x400000, 8192), 0);
	/* Empty, past RAM, wrapping, over the code caches. */
	assert_int_equal(step_blocks_guest_code(b, MEM, 0x400000, 0), -EINVAL);
	assert_int_equal(step_blocks_guest_code(b, MEM, MEM, 4096), -EINVAL);
	assert_int_equal(step_blocks_guest_code(b, MEM, MEM - 4096, 8192),
			 -EINVAL);
	assert_int_equal(step_blocks_guest_code(b, MEM, 4096, UINT64_MAX),
			 -EINVAL);
	assert_int_equal(step_blocks_guest_code(b, MEM, CACHE - 4096, 8192),
			 -EINVAL);
	assert_int_equal(step_blocks_guest_code(b, MEM, CACHE + 4096, 1),
			 -EINVAL);
	step_blocks_destroy(b);
}

static void test_guest_code_full(void **state)
{
	struct step_blocks *b = step_blocks_create(0x100000, 0x10000, CACHE, 1);
	uint64_t gpa = 0x1000000;
	int n = 1;	/* the initramfs's */

	(void)state;
	assert_non_null(b);
	/* A span inside one already known takes no slot: a library that is
	 * mapped again, by every process, is told once per buffer anyway. */
	for (int i = 0; i < 3 * STEP_CODE_SPANS; i++)
		assert_int_equal(step_blocks_guest_code(b, MEM, 0x101000,
							4096), 0);
	for (; n < STEP_CODE_SPANS; n++, gpa += 2 * 4096)
		assert_int_equal(step_blocks_guest_code(b, MEM, gpa, 4096), 0);
	assert_int_equal(step_blocks_guest_code(b, MEM, gpa, 4096), -ENOSPC);
	/* Known spans still are. */
	assert_int_equal(step_blocks_guest_code(b, MEM, 0x1000000, 100), 0);
	step_blocks_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guest_code_bounds),
		cmocka_unit_test(test_guest_code_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
