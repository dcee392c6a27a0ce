/* SPDX-License-Identifier: MIT */
/*
 * Virtual PMU ABI shared by the VMM (pmu/), the guest kernel and the guest
 * user library: MSR numbers, event encodings, PMU hypercalls, and the two
 * shared-page layouts of the paper's a-mode (Nikolaev & Back, VEE 2011).
 *
 * Reading a per-thread count without a trap (user library, guest kernel):
 *
 *	Phys*  = c->sum + (Phys(t) - c->start)   while c is RUNNING, else c->sum
 *	log    = thread->ctr[idx].sum + (Phys* - thread->ctr[idx].start)
 *
 * under the sequence counts of both pages, with Phys(t) depending on
 * c->read: rdtsc for PV_VPMU_READ_TSC, the sum of the step counts
 * selected by c->step_mask for PV_VPMU_READ_STEP, rdtsc less
 * c->step_cost per such step for PV_VPMU_READ_TSC_STEP, nothing (Phys* =
 * c->sum) for PV_VPMU_READ_NONE; PV_VPMU_READ_TRAP counters have no
 * direct read and must be read with rdmsr by the kernel.  The code is
 * uapi/vpmu_guest.h, the one definition the guest kernel, libvpmu and the
 * VMM's test model all compile.  Every policy keeps this one formula
 * valid: policies that keep the count in the vCPU counter itself
 * (saverestore, raw) leave the thread's sum and start at 0, so
 * log = Phys*.
 *
 * Fixed-width types only: the same structs are compiled by the host (gcc or
 * clang, x86-64) and the freestanding guest kernel.
 */
#ifndef PV_UAPI_VPMU_H
#define PV_UAPI_VPMU_H

#include <stdint.h>

#define PV_VPMU_ABI_VERSION	1u

/* ---- Architectural PMU MSRs (Intel SDM vol. 3B, ch. 20, version 2) ---- */

#define PV_MSR_IA32_PMC0		0xc1	/* legacy: writes sign-extend bit 31 */
#define PV_MSR_IA32_PERFEVTSEL0		0x186
#define PV_MSR_IA32_PERF_CAPABILITIES	0x345
#define PV_MSR_IA32_FIXED_CTR0		0x309	/* instructions retired */
#define PV_MSR_IA32_FIXED_CTR1		0x30a	/* core cycles */
#define PV_MSR_IA32_FIXED_CTR2		0x30b	/* reference cycles */
#define PV_MSR_IA32_FIXED_CTR_CTRL	0x38d
#define PV_MSR_IA32_PERF_GLOBAL_STATUS	0x38e
#define PV_MSR_IA32_PERF_GLOBAL_CTRL	0x38f
#define PV_MSR_IA32_PERF_GLOBAL_OVF_CTRL	0x390
#define PV_MSR_IA32_A_PMC0		0x4c1	/* full-width writes */

/*
 * The slots the architecture reserves for up to 8 GP and 4 fixed counters.
 * The VMM traps all of them so that the ones we do not offer raise #GP
 * instead of reaching the host.
 */
#define PV_MSR_PMC_SLOTS		8
#define PV_MSR_FIXED_SLOTS		4

/* IA32_PERFEVTSELx */
#define PV_EVTSEL_EVENT_MASK		0xffull
#define PV_EVTSEL_UMASK_SHIFT		8
#define PV_EVTSEL_UMASK_MASK		(0xffull << 8)
#define PV_EVTSEL_USR			(1ull << 16)
#define PV_EVTSEL_OS			(1ull << 17)
#define PV_EVTSEL_EDGE			(1ull << 18)
#define PV_EVTSEL_PC			(1ull << 19)
#define PV_EVTSEL_INT			(1ull << 20)
#define PV_EVTSEL_ANY			(1ull << 21)	/* v3+: reserved in v2 */
#define PV_EVTSEL_EN			(1ull << 22)
#define PV_EVTSEL_INV			(1ull << 23)
#define PV_EVTSEL_CMASK_SHIFT		24
#define PV_EVTSEL_CMASK_MASK		(0xffull << 24)
/* Bits that raise #GP when set in a version-2 PMU. */
#define PV_EVTSEL_RESERVED		(~0xffffffffull | PV_EVTSEL_ANY)

/*
 * The PERFEVTSEL value that counts PV_EVENT() `event` in user and/or
 * kernel mode: what `vmm stat`/`vmm record` pass the guest and what the
 * guest kernel programs for perf_event_open.
 */
static inline uint64_t pv_evtsel_count(uint16_t event, int user, int kernel)
{
	return event | PV_EVTSEL_EN | (user ? PV_EVTSEL_USR : 0) |
		(kernel ? PV_EVTSEL_OS : 0);
}

/* IA32_FIXED_CTR_CTRL: 4 bits per fixed counter */
#define PV_FIXED_CTRL_OS		0x1u
#define PV_FIXED_CTRL_USR		0x2u
#define PV_FIXED_CTRL_ANY		0x4u	/* v3+: reserved in v2 */
#define PV_FIXED_CTRL_PMI		0x8u
#define PV_FIXED_CTRL_FIELD(ctrl, i)	(((ctrl) >> (4 * (i))) & 0xf)

/* IA32_PERF_GLOBAL_STATUS / _OVF_CTRL bits other than the counter bits */
#define PV_GLOBAL_FIXED_SHIFT		32
#define PV_GLOBAL_OVF_BUF		(1ull << 62)
#define PV_GLOBAL_COND_CHGD		(1ull << 63)

/* IA32_PERF_CAPABILITIES: we offer full-width counter writes only. */
#define PV_PERF_CAP_FW_WRITE		(1ull << 13)
/* CPUID.1:EAX of an Intel guest: family 6, model 0x5e (pmu/cpuid.c). */
#define PV_CPUID1_EAX_PMU_MODEL		0x506e0u
/* CPUID.1:EAX of an AMD guest on a host newer than Zen 4: family 0x19,
 * model 1, a Zen 3 (pmu/cpuid.c). */
#define PV_CPUID1_EAX_AMD_PMU_MODEL	0xa00f10u
/* CPUID.1:ECX.PDCM says IA32_PERF_CAPABILITIES exists. */
#define PV_CPUID1_ECX_PDCM		(1u << 15)

/* ---- The PMU we expose ---- */

#define PV_VPMU_VERSION		2
#define PV_VPMU_NR_GP		4
#define PV_VPMU_NR_FIXED	3
#define PV_VPMU_NR_COUNTERS	(PV_VPMU_NR_GP + PV_VPMU_NR_FIXED)
#define PV_VPMU_WIDTH		48
#define PV_VPMU_MASK		((1ull << PV_VPMU_WIDTH) - 1)
/* Counter index: 0..3 are PMC0..3, 4..6 are FIXED_CTR0..2. */
#define PV_VPMU_FIXED_IDX(j)	(PV_VPMU_NR_GP + (j))

/*
 * Phys* - Start*, in the counter width.  Phys* can step back a little:
 * the VMM drops steal time from a counter after the guest read it (the
 * host preempted the vCPU meanwhile).  A delta in the upper half of the
 * range is such a step back, not 2^47 events, and counts as zero.  The
 * guest kernel, libvpmu, the test model and the offset policy all use
 * this one rule (the first three through uapi/vpmu_guest.h).
 */
static inline uint64_t pv_vpmu_delta(uint64_t now, uint64_t start)
{
	uint64_t d = (now - start) & PV_VPMU_MASK;

	return d >> 47 ? 0 : d;
}

/*
 * The counter value n events short of the wrap, where a sampling counter
 * is set to overflow after n more; the map is its own inverse, so it also
 * gives how far a value is from the wrap.
 */
static inline uint64_t pv_vpmu_before_wrap(uint64_t n)
{
	return (0 - n) & PV_VPMU_MASK;
}

/*
 * How far ahead to put a sampling counter's next overflow, given the value
 * it read after the last one (the events counted past the wrap, its skid).
 * A counter that stepped back short of the wrap (steal dropped after the
 * overflow) has no skid.  A skid of a period or more means PMIs come as
 * fast as the handler runs (the VMM adds the handler's frozen time to a
 * time counter's skid for this rule): the next overflow goes that much
 * further out again, or PMIs would come back to back (perf throttles for
 * the same reason).
 */
static inline uint64_t pv_vpmu_rearm_dist(uint64_t pmc, uint64_t period)
{
	uint64_t skid = pv_vpmu_delta(pmc, 0);

	return skid < period ? period - skid : period + 2 * skid;
}

/* ---- Event encodings (PERFEVTSEL event select | umask << 8) ---- */

#define PV_EVENT(code, umask)	((uint16_t)((code) | ((umask) << 8)))

/* Architectural events, in CPUID.0AH:EBX bit order. */
#define PV_EVENT_CYCLES		PV_EVENT(0x3c, 0x00)	/* EBX bit 0 */
#define PV_EVENT_INSTRUCTIONS	PV_EVENT(0xc0, 0x00)	/* EBX bit 1 */
#define PV_EVENT_REF_CYCLES	PV_EVENT(0x3c, 0x01)	/* EBX bit 2 */
#define PV_EVENT_LLC_REFS	PV_EVENT(0x2e, 0x4f)	/* EBX bit 3 */
#define PV_EVENT_LLC_MISSES	PV_EVENT(0x2e, 0x41)	/* EBX bit 4 */
#define PV_EVENT_BRANCHES	PV_EVENT(0xc4, 0x00)	/* EBX bit 5 */
#define PV_EVENT_BRANCH_MISSES	PV_EVENT(0xc5, 0x00)	/* EBX bit 6 */
#define PV_ARCH_EVENTS		7

/*
 * perfvisor virtual events: event select 0xfe is not an architectural
 * event, so we take it as our vendor-private space; the umask picks the
 * event.  VM exits by reason use the umask values of enum pv_vpmu_exit.
 */
#define PV_EVENT_VIRT_CODE	0xfe
enum pv_vpmu_exit {
	PV_EXIT_ALL = 0x01,	/* vmexits: every exit */
	PV_EXIT_MSR = 0x02,	/* vmexits.msr: rdmsr/wrmsr to userspace */
	PV_EXIT_IO = 0x03,	/* vmexits.io: port I/O other than hypercalls */
	PV_EXIT_MMIO = 0x04,	/* vmexits.mmio */
	PV_EXIT_HLT = 0x05,	/* vmexits.hlt */
	PV_EXIT_HYPERCALL = 0x06,	/* vmexits.hypercall: out to PV_HC_PORT */
	PV_EXIT_OTHER = 0x07,	/* interrupt window, signals, ... */
};
#define PV_EVENT_VMEXITS	PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_ALL)
#define PV_EVENT_VMEXITS_MSR	PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_MSR)
#define PV_EVENT_VMEXITS_IO	PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_IO)
#define PV_EVENT_VMEXITS_MMIO	PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_MMIO)
#define PV_EVENT_VMEXITS_HLT	PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_HLT)
#define PV_EVENT_VMEXITS_HC	PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_HYPERCALL)
#define PV_EVENT_VMEXITS_OTHER	PV_EVENT(PV_EVENT_VIRT_CODE, PV_EXIT_OTHER)
#define PV_EVENT_STEAL		PV_EVENT(PV_EVENT_VIRT_CODE, 0x10) /* ns */
#define PV_EVENT_VMM_TIME	PV_EVENT(PV_EVENT_VIRT_CODE, 0x11) /* ns */
#define PV_EVENT_IRQS		PV_EVENT(PV_EVENT_VIRT_CODE, 0x12) /* injected */
/* Host task-clock of the vCPU thread (perf source), in ns. */
#define PV_EVENT_TASK_CLOCK	PV_EVENT(PV_EVENT_VIRT_CODE, 0x20)

/* ---- Ids carried in struct pv_boot_params (policy_id, source_id) ---- */

enum pv_vpmu_policy_id {
	PV_VPMU_POLICY_NONE = 0,
	PV_VPMU_POLICY_OFFSET = 1,
	PV_VPMU_POLICY_SAVERESTORE = 2,
	PV_VPMU_POLICY_RAW = 3,
	/* researchers: take ids from 16 up (docs/policies.md) */
};

enum pv_vpmu_source_id {
	PV_VPMU_SOURCE_NONE = 0,
	PV_VPMU_SOURCE_TSC = 1,
	PV_VPMU_SOURCE_STEP = 2,
	PV_VPMU_SOURCE_PERF = 3,
	PV_VPMU_SOURCE_FAKE = 15,	/* unit tests only */
};

/* ---- PMU hypercalls (numbers 0-7 are in hypercall.h) ---- */

enum pv_vpmu_hypercall {
	/*
	 * (gpa of this vCPU's struct pv_vpmu_vcpu_page): register the page,
	 * once per vCPU at boot, on that vCPU.  -> 0 or -errno.
	 */
	PV_HC_PMU_VCPU_PAGE = 32,
	/*
	 * (gpa of outgoing thread page or 0, gpa of incoming thread page or 0,
	 * flags): the batched suspend/resume pair of a guest thread switch,
	 * like perfctr-xen's.  Also used with out = 0 after a thread changed
	 * its own configuration.  The VMM saves/offsets the outgoing thread's
	 * counters into its page and loads the incoming one; Start* values
	 * are taken as of the hypercall's return.  -> 0 or -errno.
	 */
	PV_HC_PMU_SWITCH = 33,
	/*
	 * (): do nothing but exit, so that the VMM checks for overflow now.
	 * The guest kernel's step code issues it when a step count reaches
	 * its deadline (zero-skid overflow).  -> 0.
	 */
	PV_HC_PMU_POLL = 34,
	/*
	 * (rip, frame, code_gen): the step source counts by blocks (PV_STEP_BLOCKS)
	 * and user code resumes at rip: end its basic block with an int3.
	 * -> 0 to run it untraced, 1 to single-step it (a block the VMM
	 * cannot end with a trap, or an overflow point inside it).  frame:
	 * 0, or the guest-physical address of the return's saved registers
	 * (struct pv_step_frame), whose rip the VMM may then move into its
	 * code cache (-> 0), as PV_HC_STEP_ACCOUNT moves it back.
	 * code_gen (third argument): a number that changes whenever the
	 * code at some address of the process may (a new process, an
	 * unmap, a move), for what the cache remembers by address alone.
	 */
	PV_HC_STEP_ARM = 35,
	/*
	 * (from, to, frame): user code ran straight from `from` to a kernel
	 * entry before the instruction at `to`: count the instructions
	 * between.  -> their number, or -EINVAL when no straight run of
	 * instructions leads from one to the other.  frame: the guest-
	 * physical address of the entry's saved registers (struct
	 * pv_step_frame); when `to` is in the VMM's code cache, the VMM
	 * moves them back to the program's own code (rip, and rcx, rax, rsp
	 * where its translation changed them) and counts what retired.
	 */
	PV_HC_STEP_ACCOUNT = 36,
	/*
	 * (idx, period, ack): a PMI handler's three MSR accesses in one exit:
	 * clear ack's bits of GLOBAL_STATUS (as GLOBAL_OVF_CTRL), read
	 * general counter idx, and write it pv_vpmu_rearm_dist(count,
	 * period) events before its wrap.  -> the count read, or -EINVAL.
	 * It acknowledges the PMI, which ends the PMI's freeze of every
	 * counter (as a GLOBAL_OVF_CTRL or GLOBAL_CTRL write does).  A time
	 * counter whose skid and frozen handler time reach the period is set
	 * as if that time were its skid: the back-off past the handler
	 * (design.md, Throttling).  The value set is the counter's in the
	 * vCPU page at the return.
	 */
	PV_HC_PMU_REARM = 37,
	/*
	 * (gpa, len): [gpa, gpa + len) holds a file's bytes that the guest
	 * kernel maps in place and will never write or free again (a pinned
	 * image: an executable's, a library's, any read-only file mapping's).
	 * The step source may end blocks with int3s there, as in the
	 * initramfs.  -> 0 (also when the source does not count by blocks),
	 * -EINVAL for a span outside RAM or over the step cache, -ENOSPC
	 * when the VMM's table of spans is full.
	 */
	PV_HC_STEP_CODE = 38,
	PV_HC_PMU_NR
};

/*
 * struct pv_vpmu_vcpu_page.switch_rule: the guest half of the policy, as
 * data.  The VMM publishes its policy's rule; at each thread switch the
 * guest kernel evaluates it with pv_vpmu_switch_exits() and, when no exit
 * is needed, pv_vpmu_switch_local() (uapi/vpmu_guest.h).  The guest knows
 * no policy by name or id.
 */
#define PV_SWITCH_EXIT_IMODE	(1u << 0)	/* exit if out or in has i-mode counters */
#define PV_SWITCH_EXIT_ACTIVE	(1u << 1)	/* exit if out or in has any counter */
#define PV_SWITCH_EXIT_CONFIG	(1u << 2)	/* exit if in's config_id is not loaded */
#define PV_SWITCH_EXIT_CONFIG_ACTIVE (1u << 3)	/* ... and in has counters */
#define PV_SWITCH_FOLD		(1u << 4)	/* no exit: fold a-mode offsets */
#define PV_SWITCH_LOADED	(1u << 5)	/* counters hold the thread's value */
/*
 * Set in every rule: a page whose rule lacks it (a VMM that published no
 * rule) or has unknown bits is refused by the guest kernel, rather than
 * read as some default policy.
 */
#define PV_SWITCH_VALID		(1u << 31)
#define PV_SWITCH_KNOWN		(PV_SWITCH_EXIT_IMODE | PV_SWITCH_EXIT_ACTIVE | \
				 PV_SWITCH_EXIT_CONFIG |			\
				 PV_SWITCH_EXIT_CONFIG_ACTIVE | PV_SWITCH_FOLD |	\
				 PV_SWITCH_LOADED | PV_SWITCH_VALID)
/*
 * A number, not a flag: with a period N (1 to 65535), a switch also exits
 * when it makes the vCPU's count of switches (guest.switches) a multiple
 * of N, whatever the flags say: the rule of a policy that wants the VMM
 * at every Nth switch only (pmu/policies/sampled.c).  0: no period.
 */
#define PV_SWITCH_PERIOD_SHIFT	8
#define PV_SWITCH_PERIOD_MASK	(0xffffu << PV_SWITCH_PERIOD_SHIFT)
#define PV_SWITCH_PERIOD(n)	(((uint32_t)(n) << PV_SWITCH_PERIOD_SHIFT) & \
				 PV_SWITCH_PERIOD_MASK)
#define PV_SWITCH_PERIOD_OF(rule) \
	(((rule) & PV_SWITCH_PERIOD_MASK) >> PV_SWITCH_PERIOD_SHIFT)

static inline int pv_switch_rule_ok(uint32_t rule)
{
	return (rule & PV_SWITCH_VALID) &&
		!(rule & ~(PV_SWITCH_KNOWN | PV_SWITCH_PERIOD_MASK));
}

/* ---- Per-vCPU page ---- */

/* struct pv_vpmu_counter.read: how user code gets Phys(t) without a trap */
enum pv_vpmu_read {
	PV_VPMU_READ_NONE = 0,	/* the value is `sum`; nothing runs meanwhile */
	PV_VPMU_READ_TSC = 1,	/* Phys(t) = rdtsc */
	PV_VPMU_READ_STEP = 2,	/* Phys(t) = sum of step.count[] in step_mask */
	PV_VPMU_READ_TRAP = 3,	/* no direct read: rdmsr in the kernel */
	/* Phys(t) = rdtsc - step_cost * step.traps - kstep_ticks_*: the
	 * step source's cycles, its traps' cost left out */
	PV_VPMU_READ_TSC_STEP = 4,
	/* The mode clock (struct pv_vpmu_guest_cpu): cycles of one mode.
	 * Phys(t) = user TSC(t) - step_cost * step.traps - kstep_ticks_user,
	 * and rdtsc - user TSC(t) - kstep_ticks_kernel for the kernel's;
	 * pv_vpmu_phys() */
	PV_VPMU_READ_TSC_USER = 5,
	PV_VPMU_READ_TSC_KERNEL = 6,
};

/* struct pv_vpmu_counter.flags */
#define PV_VPMU_CTR_ENABLED	(1u << 0)	/* programmed and enabled */
#define PV_VPMU_CTR_RUNNING	(1u << 1)	/* Phys(t) - start counts now */
#define PV_VPMU_CTR_INT		(1u << 2)	/* i-mode: PMI on overflow */

struct pv_vpmu_counter {
	/* Sum_vcpu: the virtual counter value when accounting last stopped
	 * or was folded (VMM, at every vCPU resume). Masked to the width. */
	uint64_t sum;
	/* Start_vcpu: the physical value at that moment (VMM, same time). */
	uint64_t start;
	uint32_t flags;		/* PV_VPMU_CTR_* (VMM) */
	uint16_t event;		/* PV_EVENT() it counts (VMM) */
	uint8_t read;		/* enum pv_vpmu_read (VMM) */
	uint8_t step_mask;	/* bits of step.count[] summed (VMM) */
	uint64_t step_cost;	/* PV_VPMU_READ_TSC_STEP: TSC per step (VMM) */
};

/*
 * The user registers a kernel entry saved, as PV_HC_STEP_ACCOUNT hands
 * them to the VMM (the guest kernel's struct trapframe, checked there).
 */
struct pv_step_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};
#define PV_STEP_FRAME_SYSCALL	0x100	/* vector of a system call's frame */

/* step.count[] slots */
enum pv_vpmu_step_slot {
	PV_STEP_USER_INSNS = 0,
	PV_STEP_KERNEL_INSNS = 1,
	PV_STEP_USER_BRANCHES = 2,
	PV_STEP_KERNEL_BRANCHES = 3,
	/* conditional branches the modeled predictor missed (user mode,
	 * by blocks: the VMM; docs/design.md "Branch mispredictions") */
	PV_STEP_USER_BMISS = 4,
	PV_STEP_SLOTS = 5,
};

#define PV_STEP_NO_DEADLINE	UINT64_MAX

/*
 * The step source's area, on its own cache lines at offset 2048 because the
 * guest writes it on every stepped instruction while the VMM's half of the
 * page stays read-mostly.
 */
struct pv_vpmu_step {
	/* VMM, at resume: bit 0 = count user instructions (by single-
	 * stepping, or by blocks with bit 2); bit 1 = also count branches;
	 * bit 2 (PV_STEP_BLOCKS) = a basic block per trap, see `rip`. */
	uint32_t enable;
	uint32_t reserved;
	/*
	 * Retired counts.  User slots: the guest kernel's #DB handler, once
	 * per stepped user instruction (a rep instruction once).  Kernel
	 * slots: the VMM if it steps CPL0 with KVM_GUESTDBG_SINGLESTEP, else
	 * they stay 0.  Monotonic, never reset.
	 */
	uint64_t count[PV_STEP_SLOTS];
	/*
	 * VMM, at resume: when count[i] becomes equal to deadline[i], the
	 * guest kernel issues PV_HC_PMU_POLL before running more user code,
	 * so that an overflow is seen exactly at its count.
	 */
	uint64_t deadline[PV_STEP_SLOTS];
	/*
	 * Where the user instruction that retires next began: the kernel at
	 * each return to user mode and each single-step #DB, the VMM at each
	 * block trap.  With PV_STEP_BLOCKS, user code runs untraced from here
	 * to the end of its basic block, where the VMM has put an int3
	 * (PV_BP_PORT); a kernel entry before then counts the instructions
	 * from here to the entry (PV_HC_STEP_ACCOUNT).
	 */
	uint64_t rip;
	/* VMM: the user address on which the branch it emulated at a block's
	 * end faulted (PV_BP_PORT's eax = 2). */
	uint64_t fault_addr;
	/* User traps taken to count: each single-step #DB (guest kernel) and
	 * block trap (VMM), what the step source's cycles leave out. */
	uint64_t traps;
};

#define PV_STEP_BLOCKS	4	/* step.enable bit */
/*
 * step.enable bit, with or without the others: a counter counts cycles
 * of one mode only, so the guest kernel keeps the mode clock (struct
 * pv_vpmu_guest_cpu) at every entry from and return to user mode.
 */
#define PV_STEP_MODE_CLOCK	8
/* step.enable bit, with PV_STEP_BLOCKS: the VMM models a branch predictor
 * and counts its misses into step.count[PV_STEP_USER_BMISS]. */
#define PV_STEP_PREDICT		16
#define PV_VPMU_STEP_SIZE	112	/* sizeof(struct pv_vpmu_step) */

#define PV_VPMU_CTR_SLOTS	8	/* 7 used; 8 keeps the array 256 bytes */
#define PV_VPMU_STEP_OFFSET	2048
#define PV_VPMU_GUEST_OFFSET	3072

/*
 * The guest-side state of policies, per vCPU: what the guest kernel's
 * switch point (pv_vpmu_switch_step() of uapi/vpmu_guest.h) keeps for
 * every policy without knowing which one runs.  The rule's period is
 * evaluated on it; the VMM's hooks may read it (the vCPU is stopped in
 * them).  Written by the guest alone, on its own cache line, outside the
 * page's sequence count.
 */
#define PV_CLOCK_ON	1
#define PV_CLOCK_SEEDED	2	/* on, trip_min still the start-up seed */

struct pv_vpmu_guest_cpu {
	/* guest: the vCPU's counted thread switches (either thread has a
	 * thread page), this one included once the decision is taken */
	uint64_t switches;
	/*
	 * The mode clock, while step.enable has PV_STEP_MODE_CLOCK: the TSC
	 * ticks this vCPU has run in user mode since the guest kernel first
	 * saw the bit (clock_on), which is user_base + rdtsc while in_user
	 * and user_tsc otherwise (pv_vpmu_user_tsc()).  The kernel moves
	 * them at each entry from user mode (entries, bumped, lets a user
	 * mode reader see that one came between its loads) and each return.
	 * Host steal is not user time: each entry leaves out what KVM's
	 * steal record gained since steal_mark, its value at the last
	 * stamp; the VMM leaves out the same up to its latest look at it.
	 *
	 * Neither is the trip between the stamps and user code (the host's
	 * switches, the entry and exit code around the stamps; ~100 us a
	 * system call on kvm_pvm): trip_min is the least TSC from a return
	 * stamp to the next entry stamp this vCPU has taken with no steal,
	 * and each return starts the clock trip_cost = trip_min ticks late
	 * (0 while the step source single-steps, whose traps have their own
	 * cost; by blocks a trap's cost is 0, and the trips are left out),
	 * so a reader never sees it run ahead and never go back.  Until
	 * the clock's own first trip, trip_min is the least trip of the
	 * boot's first system calls (clock_on PV_CLOCK_SEEDED), measured
	 * before any counter ran, which that first trip then replaces.
	 */
	uint32_t clock_on;	/* 0, PV_CLOCK_ON or PV_CLOCK_SEEDED */
	uint32_t in_user;
	uint64_t user_tsc;
	uint64_t user_base;
	uint64_t entries;
	uint64_t steal_mark;	/* ns, struct pv_steal_record.steal */
	uint64_t trip_min;	/* TSC ticks; 0 until a trip is known */
	uint64_t trip_cost;	/* TSC ticks the last return started late */
	/*
	 * The trip the last entry from user mode measured, and the least
	 * trip of a return after this vCPU halted (0: none yet): the host
	 * is cold after a halt, and such a trip is ~30,000 ticks slower
	 * after a 1 s sleep on kvm_pvm.  A return after a halt starts the
	 * clock trip_woken late where that is later than trip_min.
	 */
	uint64_t last_trip;
	uint64_t trip_woken;
};

/*
 * One per vCPU, registered with PV_HC_PMU_VCPU_PAGE.  The guest kernel maps
 * all of them read-only into every process.  The VMM writes everything but
 * `step.count` with the sequence protocol: seq odd while writing.
 */
struct pv_vpmu_vcpu_page {
	uint32_t seq;		/* VMM: odd while it writes, bumped twice */
	uint32_t abi_version;	/* VMM: PV_VPMU_ABI_VERSION */
	uint32_t vcpu_id;	/* VMM: index of this vCPU */
	uint32_t policy_id;	/* VMM: enum pv_vpmu_policy_id (informative) */
	uint32_t source_id;	/* VMM: enum pv_vpmu_source_id */
	uint32_t width;		/* VMM: counter width, PV_VPMU_WIDTH */
	uint32_t nr_counters;	/* VMM: PV_VPMU_NR_COUNTERS */
	uint32_t switch_rule;	/* VMM: its policy's PV_SWITCH_* rule */
	uint64_t tsc_khz;	/* VMM: rate of PV_VPMU_READ_TSC counters */
	uint64_t global_ctrl;	/* VMM: mirror of IA32_PERF_GLOBAL_CTRL */
	uint64_t global_status;	/* VMM: mirror of IA32_PERF_GLOBAL_STATUS */
	/*
	 * VMM: config_id of the thread page whose configuration is loaded
	 * (PV_HC_PMU_SWITCH), 0 after the kernel programmed the MSRs
	 * directly.  The kernel switches with no exit when the incoming
	 * thread's config_id equals it (offset policy).
	 */
	uint64_t config_id;
	struct pv_vpmu_counter ctr[PV_VPMU_CTR_SLOTS];
	/*
	 * VMM: the KVM steal time (ns) it has dropped from time counters so
	 * far.  When KVM's record shows more, the host preempted the vCPU
	 * since the last exit: the kernel exits (PV_HC_PMU_POLL) before an
	 * a-mode switch, or the outgoing thread would keep the steal.
	 */
	uint64_t steal_ns;
	/*
	 * VMM: the user address of this vCPU's code-cache counters (step
	 * source by blocks, vmm/core/step_cache.c), 0 if none: what user
	 * code run from the cache has retired and the VMM not yet added to
	 * step.count, one uint64_t per step.count[] slot.  The VMM adds them
	 * at each trap and kernel entry, bumping seq.
	 */
	uint64_t step_cache_hdr;
	/*
	 * VMM: where the vCPU was at the exit that found the overflow of
	 * the PMI it raises next: its rip, and pmi_kernel 1 when that was
	 * in the kernel (0 for both when unknown: a PMI raised again for a
	 * thread that resumed).  The guest takes the PMI only at its next
	 * return to user mode; a sample of an event that counts kernel mode
	 * takes its IP from here, as Linux's from the NMI's frame.
	 */
	uint64_t pmi_ip;
	uint64_t pmi_kernel;
	uint8_t reserved1[PV_VPMU_STEP_OFFSET - 96 - 32 * PV_VPMU_CTR_SLOTS];
	struct pv_vpmu_step step;
	/*
	 * VMM: the TSC ticks its single steps of kernel code took (the
	 * exits and its own time, step source counting kernel instructions),
	 * by the mode the guest's mode clock was in: what the step source's
	 * cycles leave out, as they leave out step.traps' cost.
	 */
	uint64_t kstep_ticks_user;
	uint64_t kstep_ticks_kernel;
	uint8_t reserved2[PV_VPMU_GUEST_OFFSET - PV_VPMU_STEP_OFFSET -
			  PV_VPMU_STEP_SIZE - 16];
	struct pv_vpmu_guest_cpu guest;
	uint8_t reserved3[4096 - PV_VPMU_GUEST_OFFSET - 80];
};

_Static_assert(sizeof(struct pv_vpmu_counter) == 32, "vpmu counter size");
_Static_assert(sizeof(struct pv_vpmu_step) == PV_VPMU_STEP_SIZE,
	       "vpmu step size");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, tsc_khz) == 32,
	       "vcpu page layout");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, ctr) == 64,
	       "vcpu page layout");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, step) ==
	       PV_VPMU_STEP_OFFSET, "vcpu page layout");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, step.count) ==
	       PV_VPMU_STEP_OFFSET + 8, "vcpu page layout");
_Static_assert(__builtin_offsetof(struct pv_vpmu_vcpu_page, guest) ==
	       PV_VPMU_GUEST_OFFSET, "vcpu page layout");
_Static_assert(sizeof(struct pv_vpmu_guest_cpu) == 80, "guest state size");
_Static_assert(sizeof(struct pv_vpmu_vcpu_page) == 4096, "vcpu page size");

/* ---- KVM steal time ---- */

/*
 * KVM's steal-time record (struct kvm_steal_time, the MSR's
 * documentation in Linux's Documentation/virt/kvm/x86/msr.rst): one per
 * vCPU at PV_STEAL_PHYS + PV_STEAL_RECORD_SIZE * vcpu id, registered by
 * the guest kernel, written by KVM at every vCPU entry, read by the VMM
 * to drop host preemption from time counters.
 */
#define PV_MSR_KVM_STEAL_TIME	0x4b564d03
#define PV_STEAL_RECORD_SIZE	64

struct pv_steal_record {
	uint64_t steal;		/* KVM: ns the vCPU was runnable, not running */
	uint32_t version;	/* KVM: odd while it writes */
	uint32_t flags;
	uint8_t pad[48];
};

_Static_assert(sizeof(struct pv_steal_record) == PV_STEAL_RECORD_SIZE,
	       "steal record size");

/* ---- Per-thread page ---- */

/* struct pv_vpmu_thread_page.flags */
#define PV_VPMU_THREAD_ACTIVE	(1u << 0)	/* has a configuration */

struct pv_vpmu_thread_counter {
	/* Sum_thread: logical events of this thread up to its last
	 * suspend (guest kernel at switch-out, or the VMM in PV_HC_PMU_SWITCH). */
	uint64_t sum;
	/* Start*_thread: Phys* when this thread was last resumed (same
	 * writers, at switch-in; the VMM takes it as of the hypercall's
	 * return so the hypercall's own cost is not counted). */
	uint64_t start;
	/* i-mode: the counter value saved at suspend, restored at resume
	 * (VMM, in PV_HC_PMU_SWITCH).  The kernel presets it (e.g. to
	 * 2^48 - period) before the thread's first switch-in. */
	uint64_t saved;
	uint64_t reserved;
};

#define PV_VPMU_MAP_SLOTS	16

/*
 * One per guest thread that uses counters, mapped read-only into that
 * thread's process.  Written by the guest kernel, and by the VMM while it
 * handles PV_HC_PMU_SWITCH for this page (the guest vCPU is then stopped in
 * its `out`), both with the sequence protocol.
 */
struct pv_vpmu_thread_page {
	uint32_t seq;		/* kernel/VMM: odd while writing */
	uint32_t smp_id;	/* kernel, at resume: the vCPU it runs on */
	uint32_t flags;		/* kernel: PV_VPMU_THREAD_* */
	uint32_t nr_map;	/* kernel: entries used in map[] */
	/*
	 * kernel, when the configuration changes: nonzero, and two threads
	 * with equal config_id have equal evtsel/fixed_ctrl/global_ctrl, so
	 * the offset policy switches between them with no exit at all.
	 */
	uint64_t config_id;
	/* kernel: the configuration, as IA32 MSR values */
	uint64_t evtsel[PV_VPMU_NR_GP];
	uint64_t fixed_ctrl;
	uint64_t global_ctrl;
	/* VMM, in PV_HC_PMU_SWITCH: i-mode overflow status of this thread's
	 * counters that was still undelivered when it was suspended; raised
	 * again (GLOBAL_STATUS and a PMI) when it resumes */
	uint64_t pending_status;
	uint64_t reserved0[4];
	/* kernel: the counter index (0..6) of the thread's n-th event */
	uint8_t map[PV_VPMU_MAP_SLOTS];
	struct pv_vpmu_thread_counter ctr[PV_VPMU_CTR_SLOTS];
	uint8_t reserved1[4096 - 128 - 32 * PV_VPMU_CTR_SLOTS];
};

_Static_assert(sizeof(struct pv_vpmu_thread_counter) == 32,
	       "thread counter size");
_Static_assert(__builtin_offsetof(struct pv_vpmu_thread_page, config_id) == 16,
	       "thread page layout");
_Static_assert(__builtin_offsetof(struct pv_vpmu_thread_page, map) == 112,
	       "thread page layout");
_Static_assert(__builtin_offsetof(struct pv_vpmu_thread_page, ctr) == 128,
	       "thread page layout");
_Static_assert(sizeof(struct pv_vpmu_thread_page) == 4096, "thread page size");

#endif
