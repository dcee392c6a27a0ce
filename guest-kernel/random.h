/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_RANDOM_H
#define KERNEL_RANDOM_H

#include "kernel.h"

/* n random bytes (random.c): to kernel memory, or to user memory (the
 * count, or -EFAULT). */
void random_bytes(void *buf, size_t n);
s64 random_to_user(void *ubuf, u64 n);

#endif
