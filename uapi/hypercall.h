/* SPDX-License-Identifier: MIT */
/*
 * Hypercall ABI: `out %al, %dx` with dx = PV_HC_PORT, the number in rax,
 * arguments in rdi, rsi, r10; the result comes back in rax.  (The port is
 * above 255, so it needs dx: the third argument cannot be rdx.)  `out` and not
 * `vmcall`: at CPL0 under kvm_pvm `vmcall` never completes (docs/design.md
 * sections 1 and 4.4).  Negative results are -errno.
 *
 * PV_HC_MEMCPY/MEMSET take virtual addresses: at or above PV_KERNEL_BASE
 * they are the kernel's direct map of RAM; below PV_USER_TOP they are user
 * addresses under the current CR3.  Kernel copies go through the VMM from
 * 64 bytes on: an emulated `rep movsb` pays for every byte (docs/design.md
 * section 1).
 *
 * Arguments named "uva" are guest virtual addresses under the current CR3;
 * the VMM walks the guest page tables and requires user access (U=1, and
 * W=1 for buffers it writes), so the kernel passes user buffers through
 * without copying or translating them itself: native host code is ~100x
 * cheaper than emulated guest kernel code here.
 */
#ifndef PV_UAPI_HYPERCALL_H
#define PV_UAPI_HYPERCALL_H

#define PV_HC_PORT		0x510
/*
 * The guest kernel's #BP entry: `out %al, $PV_BP_PORT` with the rax of
 * what was interrupted pushed just below the iret frame.  The VMM emulates
 * the branch under an int3 it placed (the step source's blocks, see
 * vmm/core/step_block.c) and sets eax: 0 done, return to user mode; 1 not
 * its int3, the #BP goes on as a trap; 2 the branch faults (the frame's
 * RIP is rewound to it, the address is in the vCPU page's
 * step.fault_addr): a #PF, with PV_PF_ERR_STEP in the error code.  An
 * 8-bit port, so the entry needs no register for it.
 */
#define PV_BP_PORT		0xf5
#define PV_PF_ERR_STEP		(1u << 15)
#define PV_COM1_PORT		0x3f8

enum pv_hypercall {
	PV_HC_EXIT = 0,		/* (status): the program ended; VMM exits */
	PV_HC_WRITE = 1,	/* (fd 1|2, uva, len) -> bytes or -errno */
	PV_HC_READ = 2,		/* (fd 0, uva, len) -> bytes, 0 at EOF */
	PV_HC_LOG = 3,		/* (kva, len): kernel console line */
	PV_HC_PANIC = 4,	/* (kva, len): kernel panic, VMM exits 125 */
	PV_HC_COPY = 5,		/* (dst gpa, src gpa, len): memmove */
	PV_HC_ZERO = 6,		/* (gpa, len) */
	PV_HC_MEMCPY = 7,	/* (dst va, src va, len) -> 0 or -EFAULT */
	PV_HC_MEMSET = 8,	/* (dst va, byte, len) -> 0 or -EFAULT */
	PV_HC_STAT_THREAD = 9,	/* (gpa of struct pv_stat_record) uapi/stat.h */
	PV_HC_SAMPLE = 10,	/* (gpa of struct pv_sample) uapi/stat.h */
	PV_HC_KSTAT = 11,	/* (gpa, size of struct pv_kstat) uapi/kstat.h */
	PV_HC_FPU_SWITCH = 12,	/* (save gpa, restore gpa): see below */
	PV_HC_PT_FILL = 13,	/* (gpa, first, n): see below */
	PV_HC_RANDOM = 14,	/* (dst va, len): the host's getrandom(2)
				 * bytes -> 0 or -EFAULT */
	PV_HC_FS = 15,		/* (gpa of struct pv_fs_req): host directories,
				 * uapi/hostfs.h -> result or -errno */
	PV_HC_YIELD = 16,	/* (): a spinning vCPU gives its host CPU up
				 * (sched_yield(2)) -> 0 */
	PV_HC_NR
};

/*
 * PV_HC_FPU_SWITCH: the vCPU's whole FPU and vector state (KVM_GET_XSAVE,
 * PV_XSTATE_SIZE bytes, standard XSAVE layout) to save gpa, then loaded
 * from restore gpa (KVM_SET_XSAVE); 0 skips either side.  For kvm_pvm
 * (boot flag PV_BOOT_XSTATE), where user code runs CPUID and XGETBV
 * natively, sees the host's AVX/AVX-512, and the kernel's FXSAVE (all the
 * instruction emulator runs at CPL0) would leave the upper halves of the
 * vector registers shared between threads.
 */
#define PV_XSTATE_SIZE		4096

/*
 * PV_HC_PT_FILL: n (1..512) 64-bit entries at gpa (8-aligned), entry i =
 * first + i * 4096: a page table mapping 4 KiB pages of one run of frames,
 * as the split of a 2 MiB page needs.  512 emulated stores and loop steps
 * (~3,600 instructions, ~3 ms on kvm_pvm) become one exit.
 */
#define PV_PT_FILL_MAX		512

/* PV_HC_EXIT status for a kernel panic. */
#define PV_EXIT_PANIC		125

#endif
