/* SPDX-License-Identifier: MIT */
#ifndef VMM_BOOT_LOAD_H
#define VMM_BOOT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "elf_check.h"

struct pv_boot_params;

/* Where boot_load() put things, for the vCPU setup. */
struct boot_layout {
	uint64_t entry;			/* kernel entry (virtual) */
	uint64_t kernel_end;		/* physical */
	uint64_t initrd_phys;
	uint64_t initrd_size;
	/* the kernel's read-only segments (elf_kernel_info) */
	uint64_t ro_phys[ELF_KERNEL_RO_MAX], ro_len[ELF_KERNEL_RO_MAX];
	int nro;
};

/*
 * The boot parameters' PMU part, known only once the vCPUs exist (KVM's
 * CPUID tells whether steal time works) and the tool has chosen its
 * counters.
 */
struct boot_pmu {
	uint32_t policy_id;
	uint32_t source_id;
	uint32_t host_kind;		/* enum pv_host_kind */
	bool steal_time;
	bool pfm_force;			/* PV_BOOT_PFM_FORCE */
	uint32_t stat_nr;		/* vmm stat: counters per thread */
	uint64_t stat_evtsel[VMM_STAT_EVENTS];
	uint64_t record_evtsel;		/* vmm record: the sampled event */
	uint64_t record_period;
};

/* IA32_PERFEVTSELx for a PV_EVENT() and PMU_MODE_* bits: enabled. */
uint64_t boot_evtsel(uint16_t event, unsigned int mode);

/*
 * The boot parameters are written here and nowhere else: boot_load() fills
 * them (through boot_params_fill(), pure: unit-tested without KVM) and
 * boot_params_set_pmu() adds the PMU part before the vCPUs first run.
 */
void boot_params_set_pmu(struct pv_boot_params *bp, const struct boot_pmu *p);

/* Fill the boot parameters (pure: unit-tested without KVM). */
int boot_params_fill(struct pv_boot_params *bp, const struct vmm_config *cfg,
		     uint64_t mem_size, const struct boot_layout *lay,
		     uint64_t tsc_khz, char *err, size_t errlen);

/* Whether the step source counts by blocks, with code caches. */
bool boot_wants_step_cache(const struct vmm_config *cfg);

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
