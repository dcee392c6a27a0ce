/* SPDX-License-Identifier: MIT */
#ifndef VMM_BOOT_LOAD_H
#define VMM_BOOT_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct pv_boot_params;

/* Where boot_load() put things, for the vCPU setup. */
struct boot_layout {
	uint64_t entry;			/* kernel entry (virtual) */
	uint64_t kernel_end;		/* physical */
	uint64_t initrd_phys;
	uint64_t initrd_size;
};

/* Fill the boot parameters (pure: unit-tested without KVM). */
int boot_params_fill(struct pv_boot_params *bp, const struct vmm_config *cfg,
		     uint64_t mem_size, const struct boot_layout *lay,
		     uint64_t tsc_khz, char *err, size_t errlen);

/* Build the boot page tables mapping all RAM at PV_KERNEL_BASE. */
void boot_page_tables_build(uint8_t *mem, uint64_t mem_size);

/*
 * Load the kernel ELF and the initramfs into guest memory at mem, and write
 * page tables and boot parameters.  0, or -1 with a message in err.
 */
int boot_load(uint8_t *mem, uint64_t mem_size, const struct vmm_config *cfg,
	      const void *kernel, size_t kernel_len, const void *initrd,
	      size_t initrd_len, uint64_t tsc_khz, struct boot_layout *lay,
	      char *err, size_t errlen);

#endif
