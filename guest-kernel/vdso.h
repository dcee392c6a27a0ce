/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_VDSO_H
#define KERNEL_VDSO_H

#include "kernel.h"
#include "vclock.h"

struct mm;
struct pv_boot_params;

/* The clock data the vDSO reads; the kernel's clocks read it too. */
extern const struct pv_vvar *vvar;

void vdso_init(const struct pv_boot_params *bp);
u64 vdso_map(struct mm *mm);

#endif
