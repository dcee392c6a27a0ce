/* SPDX-License-Identifier: MIT */
/*
 * The guest test programs' check: a failed condition prints where and
 * why and counts; the program prints "NAME: ok (0 failed)" at its end,
 * which the test compares (and with the native run's).
 */
#ifndef TESTS_GUEST_CHECK_H
#define TESTS_GUEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			failures++;					\
			printf("FAILED %s:%d: ", __func__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

#endif
