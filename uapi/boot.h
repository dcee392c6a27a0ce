/* SPDX-License-Identifier: MIT */
/*
 * Boot parameters: written by the VMM at PV_BOOT_PARAMS_PHYS, read once by
 * the guest kernel.  Fixed-width fields only; the layout is checked by
 * static assertions here and by a unit test.
 */
#ifndef PV_UAPI_BOOT_H
#define PV_UAPI_BOOT_H

#include <stdint.h>

#define PV_BOOT_MAGIC		0x54425650u	/* "PVBT" */
#define PV_BOOT_VERSION		1u
#define PV_MAX_CPUS		64
#define PV_MAX_MEMMAP		8
#define PV_BOOT_ARGS_SIZE	6144

enum pv_mem_type {
	PV_MEM_RAM = 1,		/* free for the kernel's allocator */
	PV_MEM_RESERVED = 2,	/* boot page tables, boot params */
	PV_MEM_KERNEL = 3,	/* kernel image (text, data, bss) */
	PV_MEM_INITRD = 4,	/* cpio initramfs */
};

struct pv_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;		/* enum pv_mem_type */
	uint32_t pad;
};

/*
 * What kind of KVM the guest runs on, chosen once by the VMM.  kvm_pvm
 * emulates every CPL0 instruction (docs/design.md section 1), so the
 * kernel hands bulk copies to the VMM; on standard KVM (VMX, SVM) CPL0 is
 * native and a VM exit costs more than most copies.
 */
enum pv_host_kind {
	PV_HOST_PVM = 1,
	PV_HOST_STANDARD = 2,
};

/* flags */
#define PV_BOOT_VERBOSE		(1u << 0)
#define PV_BOOT_STEAL		(1u << 4)	/* KVM steal time works */
#define PV_BOOT_TRACE		(1u << 5)	/* log every system call (-vv) */
#define PV_BOOT_KSTAT		(1u << 6)	/* register the entry counts */
#define PV_BOOT_XSTATE		(1u << 7)	/* switch FPU state with
						 * PV_HC_FPU_SWITCH */
#define PV_BOOT_TTY(fd)		(1u << (1 + (fd)))	/* VMM fd 0-2 is a tty */
/*
 * User code's CPUID is the host's own (kvm_pvm on AMD runs it natively,
 * untrapped) and names a family libpfm4 4.13 does not know: programs get
 * LIBPFM_FORCE_PMU naming the virtual PMU's model (pmu/cpuid.c).
 */
#define PV_BOOT_PFM_FORCE	(1u << 8)

struct pv_boot_params {
	uint32_t magic;
	uint32_t version;
	uint64_t mem_size;		/* bytes of guest RAM from GPA 0 */
	uint64_t tsc_khz;
	uint64_t initrd_phys;
	uint64_t initrd_size;
	uint32_t ncpus;
	uint32_t flags;
	uint32_t policy_id;		/* pmu policy, informative: the guest
				 * applies the vCPU page's switch_rule */
	uint32_t source_id;		/* pmu event source */
	uint32_t nmemmap;
	uint32_t argc;			/* strings in args[]: argv then envp */
	uint32_t envc;
	uint32_t args_len;		/* bytes used in args[] */
	uint64_t realtime_ns;		/* host CLOCK_REALTIME at boot ... */
	uint64_t realtime_tsc;		/* ... and the TSC then (guest TSC = host's) */
	uint64_t stat_evtsel[4];	/* vmm stat: IA32_PERFEVTSELx per thread */
	uint32_t stat_nr;		/* counters used in stat_evtsel */
	uint32_t host_kind;		/* enum pv_host_kind */
	uint64_t record_evtsel;		/* vmm record: the sampled event ... */
	uint64_t record_period;		/* ... one sample per this many */
	struct pv_memmap_entry memmap[PV_MAX_MEMMAP];
	char init_path[256];		/* program to run, e.g. "/bin/hello" */
	char args[PV_BOOT_ARGS_SIZE];	/* NUL-terminated strings */
	/*
	 * Live, not read once: nonzero while the VMM single-steps kernel
	 * code on a standard KVM, where TF must be set again at every
	 * kernel entry (guest-kernel/entry.S, kstep_stubs).
	 */
	uint32_t kstep_live;
	uint32_t pad1;
	/*
	 * The step source's code caches (vmm/core/step_cache.c): 2 MiB of
	 * RAM the VMM keeps out of the memory map, which the kernel maps at
	 * PV_STEP_CACHE_VA in every process; 0 when not counting by blocks.
	 */
	uint64_t step_cache_phys;
	/*
	 * Live, written by the guest kernel's page allocator
	 * (guest-kernel/pmem.c), read by the VMM.  RAM is handed out from
	 * mem_bump up (4 KiB pages) and from mem_top down (2 MiB pages);
	 * what lies between has never been used, so the VMM populates host
	 * memory only around what the guest has taken (vmm/core/vm.c).
	 * mem_refused counts allocations refused because guest RAM ran out:
	 * at exit the VMM says so, with the --mem hint.  0 in all three:
	 * a kernel that does not say (--kernel).
	 */
	uint64_t mem_bump;
	uint64_t mem_top;
	uint64_t mem_refused;
};

_Static_assert(sizeof(struct pv_memmap_entry) == 24, "memmap entry size");
_Static_assert(__builtin_offsetof(struct pv_boot_params, memmap) == 144,
	       "boot params layout");
_Static_assert(__builtin_offsetof(struct pv_boot_params, kstep_live) == 144 +
	       24 * PV_MAX_MEMMAP + 256 + PV_BOOT_ARGS_SIZE, "boot params layout");
_Static_assert(sizeof(struct pv_boot_params) == 144 + 24 * PV_MAX_MEMMAP + 256
	       + PV_BOOT_ARGS_SIZE + 40, "boot params size");
_Static_assert(sizeof(struct pv_boot_params) <= 8192, "boot params fit 2 pages");

#endif
