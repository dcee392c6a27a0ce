// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "boot.h"
#include "boot_load.h"
#include "elf_check.h"
#include "layout.h"
#include "pmu.h"
#include "vpmu.h"

#define PTE_P		(1ull << 0)
#define PTE_W		(1ull << 1)
#define PTE_PS		(1ull << 7)

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * PML4[511] -> PDPT; PDPT[510], PDPT[511] -> two page directories of 2 MiB
 * pages covering RAM from GPA 0.  The host builds these natively; the same
 * loop in the guest kernel would run emulated.
 */
void boot_page_tables_build(uint8_t *mem, uint64_t mem_size)
{
	uint64_t *pml4 = (uint64_t *)(mem + PV_PML4_PHYS);
	uint64_t *pdpt = (uint64_t *)(mem + PV_PDPT_PHYS);
	uint64_t *pd = (uint64_t *)(mem + PV_PD_PHYS);

	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	memset(pd, 0, 2 * 4096);
	pml4[511] = PV_PDPT_PHYS | PTE_P | PTE_W;
	pdpt[510] = PV_PD_PHYS | PTE_P | PTE_W;
	pdpt[511] = (PV_PD_PHYS + 4096) | PTE_P | PTE_W;
	for (uint64_t pa = 0; pa < mem_size; pa += PV_HUGE_SIZE)
		pd[pa / PV_HUGE_SIZE] = pa | PTE_P | PTE_W | PTE_PS;
}

static int boot_args_pack(struct pv_boot_params *bp,
			  const struct vmm_config *cfg)
{
	size_t off = 0;

	for (int i = 0; i < cfg->argc + cfg->nenv; i++) {
		const char *s = i < cfg->argc ? cfg->argv[i]
					      : cfg->env[i - cfg->argc];
		size_t n = strlen(s) + 1;

		if (n > sizeof(bp->args) - off)
			return -1;
		memcpy(bp->args + off, s, n);
		off += n;
	}
	bp->argc = cfg->argc;
	bp->envc = cfg->nenv;
	bp->args_len = off;
	return 0;
}

bool boot_wants_step_cache(const struct vmm_config *cfg)
{
	return cfg->source && !strcmp(cfg->source, "step") &&
	       !cfg->step_no_cache;
}

int boot_params_fill(struct pv_boot_params *bp, const struct vmm_config *cfg,
		     uint64_t mem_size, const struct boot_layout *lay,
		     uint64_t tsc_khz, char *err, size_t errlen)
{
	uint64_t free_start = align_up(lay->initrd_phys + lay->initrd_size,
				       PV_HUGE_SIZE);
	struct pv_memmap_entry *m = bp->memmap;

	memset(bp, 0, sizeof(*bp));
	bp->magic = PV_BOOT_MAGIC;
	bp->version = PV_BOOT_VERSION;
	bp->mem_size = mem_size;
	bp->tsc_khz = tsc_khz;
	bp->initrd_phys = lay->initrd_phys;
	bp->initrd_size = lay->initrd_size;
	bp->ncpus = cfg->ncpus;
	bp->flags = cfg->verbose ? PV_BOOT_VERBOSE : 0;
	if (cfg->verbose > 1)
		bp->flags |= PV_BOOT_TRACE;
	if (cfg->stat_mode && cfg->stat.breakdown)
		bp->flags |= PV_BOOT_KSTAT;
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			bp->flags |= PV_BOOT_TTY(fd);
	{
		struct timespec ts;

		/* Guest TSC = host TSC here, so one pair anchors the wall clock. */
		clock_gettime(CLOCK_REALTIME, &ts);
		bp->realtime_tsc = __rdtsc();
		bp->realtime_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	}
	if (free_start >= mem_size) {
		snprintf(err, errlen, "guest memory too small for the kernel "
			 "and initramfs (%llu MiB needed)",
			 (unsigned long long)(free_start >> 20) + 8);
		return -1;
	}
	m[0] = (struct pv_memmap_entry){ 0, PV_KERNEL_PHYS, PV_MEM_RESERVED, 0 };
	m[1] = (struct pv_memmap_entry){ PV_KERNEL_PHYS,
		lay->kernel_end - PV_KERNEL_PHYS, PV_MEM_KERNEL, 0 };
	m[2] = (struct pv_memmap_entry){ lay->initrd_phys, lay->initrd_size,
		PV_MEM_INITRD, 0 };
	m[3] = (struct pv_memmap_entry){ free_start, mem_size - free_start,
		PV_MEM_RAM, 0 };
	bp->nmemmap = 4;
	if (boot_wants_step_cache(cfg) &&
	    m[3].size >= PV_STEP_CACHE_SIZE + (16ull << 20)) {
		/* The last 2 MiB: the step source's code caches. */
		bp->step_cache_phys = (mem_size & ~(PV_HUGE_SIZE - 1)) -
				      PV_STEP_CACHE_SIZE;
		m[3].size = bp->step_cache_phys - free_start;
		m[4] = (struct pv_memmap_entry){ bp->step_cache_phys,
			PV_STEP_CACHE_SIZE, PV_MEM_RESERVED, 0 };
		bp->nmemmap = 5;
	}
	if (snprintf(bp->init_path, sizeof(bp->init_path), "/bin/%s",
		     cfg->argv[0]) >= (int)sizeof(bp->init_path) ||
	    boot_args_pack(bp, cfg)) {
		snprintf(err, errlen, "program arguments and environment "
			 "exceed %d bytes", PV_BOOT_ARGS_SIZE);
		return -1;
	}
	return 0;
}

uint64_t boot_evtsel(uint16_t event, unsigned int mode)
{
	return pv_evtsel_count(event, mode & PMU_MODE_USR, mode & PMU_MODE_OS);
}

void boot_params_set_pmu(struct pv_boot_params *bp, const struct boot_pmu *p)
{
	_Static_assert(sizeof(bp->stat_evtsel) == sizeof(p->stat_evtsel),
		       "stat counters: boot ABI and VMM_STAT_EVENTS");

	bp->policy_id = p->policy_id;
	bp->source_id = p->source_id;
	bp->host_kind = p->host_kind;
	/* kvm_pvm shows user code the host's AVX-512 (uapi/hypercall.h). */
	if (p->host_kind == PV_HOST_PVM)
		bp->flags |= PV_BOOT_XSTATE;
	if (p->steal_time)
		bp->flags |= PV_BOOT_STEAL;
	if (p->pfm_force)
		bp->flags |= PV_BOOT_PFM_FORCE;
	bp->stat_nr = p->stat_nr;
	memcpy(bp->stat_evtsel, p->stat_evtsel, sizeof(bp->stat_evtsel));
	bp->record_evtsel = p->record_evtsel;
	bp->record_period = p->record_period;
}

int boot_load(uint8_t *mem, uint64_t mem_size, const struct vmm_config *cfg,
	      const void *kernel, size_t kernel_len, const void *initrd,
	      size_t initrd_len, uint64_t tsc_khz, struct boot_layout *lay,
	      char *err, size_t errlen)
{
	struct elf_kernel_info ki;
	char why[200];

	if (elf_load_kernel(kernel, kernel_len, mem, mem_size, &ki,
			    why, sizeof(why))) {
		snprintf(err, errlen, "kernel: %s", why);
		return -1;
	}
	lay->entry = ki.entry;
	memcpy(lay->ro_phys, ki.ro_phys, sizeof(lay->ro_phys));
	memcpy(lay->ro_len, ki.ro_len, sizeof(lay->ro_len));
	lay->nro = ki.nro;
	lay->kernel_end = align_up(ki.phys_end, PV_PAGE_SIZE);
	lay->initrd_phys = align_up(lay->kernel_end, PV_HUGE_SIZE);
	lay->initrd_size = initrd_len;
	if (lay->initrd_phys > mem_size ||
	    initrd_len > mem_size - lay->initrd_phys) {
		snprintf(err, errlen, "initramfs (%zu KiB) does not fit in "
			 "guest memory; use a larger --mem", initrd_len >> 10);
		return -1;
	}
	memcpy(mem + lay->initrd_phys, initrd, initrd_len);
	boot_page_tables_build(mem, mem_size);
	return boot_params_fill((struct pv_boot_params *)
				(mem + PV_BOOT_PARAMS_PHYS), cfg, mem_size,
				lay, tsc_khz, err, errlen);
}
