/* SPDX-License-Identifier: MIT */
#ifndef VMM_GUEST_MEM_H
#define VMM_GUEST_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "vm.h"

enum gva_access {
	GVA_READ = 0,		/* user-readable */
	GVA_WRITE = 1,		/* user-writable */
};

/*
 * Translate a guest virtual address under cr3 as a user access would (U=1
 * at every level, W=1 too for GVA_WRITE).  Returns 0 with *gpa set, or
 * -EFAULT.  Page-table pages outside guest RAM also give -EFAULT.
 */
int gva_to_gpa(struct vm *vm, uint64_t cr3, uint64_t gva,
	       enum gva_access acc, uint64_t *gpa);

/*
 * Copy between host memory and a guest user buffer, page by page.  Returns
 * bytes copied (all of len) or -EFAULT when any page is not accessible.
 */
int64_t gva_read(struct vm *vm, uint64_t cr3, void *dst, uint64_t gva,
		 uint64_t len);
int64_t gva_write(struct vm *vm, uint64_t cr3, uint64_t gva, const void *src,
		  uint64_t len);

#endif
