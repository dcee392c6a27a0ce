// SPDX-License-Identifier: MIT
/*
 * KVM side of the virtual PMU: route the guest's PMU MSRs to user space
 * (KVM_X86_SET_MSR_FILTER denies exactly those ranges), publish CPUID leaf
 * 0xA, call pmu/ at every exit and entry, inject PMIs as MSIs at the
 * vector the guest programmed in LVTPC and mask LVTPC as hardware does,
 * and feed KVM steal time to the tsc source.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "boot.h"
#include "guest_va.h"
#include "host.h"
#include "hypercall.h"
#include "kstat.h"
#include "layout.h"
#include "step_block.h"
#include "vcpu.h"
#include "vcpu_pmu.h"
#include "x86_decode.h"

#define APIC_LVTPC		0x340
#define APIC_LVT_MASKED		(1u << 16)
#define APIC_LVT_VECTOR		0xffu
#define APIC_MSI_BASE		0xfee00000u	/* MSI address, dest ID << 12 */
#define HC_NR_BITS		0xffu	/* a profile names a hypercall by these */

/*
 * Default-allow: the PMU ranges exit to the VMM, and every other MSR stays
 * KVM's, which emulates the architectural ones (EFER, the syscall MSRs,
 * FS/GS bases, x2APIC) that the guest kernel needs and that this VMM,
 * virtualizing only the PMU, has no model of (docs/design.md section 2).
 */
static int vcpu_pmu_msr_filter(struct vm *vm)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args[0] = KVM_MSR_EXIT_REASON_FILTER,
	};
	struct kvm_msr_filter f = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };
	const struct pmu_msr_range *r;
	static const uint8_t deny[64];	/* bitmap of zeros: deny all */
	size_t n;

	if (ioctl(vm->fd, KVM_ENABLE_CAP, &cap) < 0)
		return -1;
	r = pmu_msr_ranges(&n);
	if (n > KVM_MSR_FILTER_MAX_RANGES)
		return -1;
	for (size_t i = 0; i < n; i++) {
		f.ranges[i].flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE;
		f.ranges[i].base = r[i].base;
		f.ranges[i].nmsrs = r[i].count;
		f.ranges[i].bitmap = (uint8_t *)deny;
		if (r[i].count > 8 * sizeof(deny))
			return -1;
	}
	return ioctl(vm->fd, KVM_X86_SET_MSR_FILTER, &f);
}

int vcpu_pmu_vm_setup(struct vm *vm)
{
	struct pmu_config cfg = {
		.source = vm->cfg->source,
		.policy = vm->cfg->policy,
		.nr_vcpus = vm->ncpus,
		.tsc_khz = vm->tsc_khz,
	};
	const char *why = NULL;

	if (pmu_create(&cfg, &vm->pmu, &why)) {
		snprintf(vm->stop_msg, sizeof(vm->stop_msg), "pmu: %s",
			 why ? why : "cannot create");
		return -1;
	}
	if (vcpu_pmu_msr_filter(vm)) {
		snprintf(vm->stop_msg, sizeof(vm->stop_msg),
			 "KVM MSR filter for the PMU: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void vcpu_pmu_vm_destroy(struct vm *vm)
{
	if (vm->pmu)
		pmu_destroy(vm->pmu);
	vm->pmu = NULL;
}

#define CPUID_AMD_PERFMON_V2		0x80000022
#define CPUID_AMD_EXT_FEATURES		0x80000001
/* 0x80000001 ECX: PerfCtrExtCore, PerfCtrExtNB, PerfCtrExtLLC */
#define CPUID_AMD_PERFCTR_EXT		((1u << 23) | (1u << 24) | (1u << 28))

/*
 * The guest's PMU is ours alone: leaf 0xA describes it (added when KVM's
 * list lacks it, as on AMD hosts, with leaf 0's maximum raised to reach
 * it), and the PMU leaves a standard KVM reports for its own vPMU (AMD's
 * PerfMonV2 leaf and extended-counter bits) are removed.  The caller's
 * buffer has room for PMU_CPUID_SPARE more entries.
 */
void vcpu_pmu_cpuid_fixup(struct vm *vm, struct kvm_cpuid2 *c)
{
	bool have_0xa = false, intel = false;
	bool user_native = host_user_cpuid_native(vm->host_kind);

	for (uint32_t i = 0; i < c->nent; i++) {
		if (c->entries[i].function == CPUID_AMD_PERFMON_V2) {
			c->entries[i--] = c->entries[--c->nent];
			continue;
		}
		if (c->entries[i].function == 0 && c->entries[i].eax < 0xa)
			c->entries[i].eax = 0xa;
		if (c->entries[i].function == CPUID_AMD_EXT_FEATURES)
			c->entries[i].ecx &= ~CPUID_AMD_PERFCTR_EXT;
		have_0xa |= c->entries[i].function == 0xa;
		/* "GenuineIntel": EBX "Genu" */
		intel |= c->entries[i].function == 0 &&
			 c->entries[i].ebx == 0x756e6547;
	}
	if (!have_0xa)
		c->entries[c->nent++] = (struct kvm_cpuid_entry2){ .function = 0xa };
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];
		struct pmu_cpuid_regs r = { e->eax, e->ebx, e->ecx, e->edx };

		if (e->function == 0xa)
			pmu_cpuid_0xa(vm->pmu, &r);
		else if (e->function == 1)
			pmu_cpuid_fixup_leaf1(&r, intel, !user_native);
		else
			continue;
		e->eax = r.eax;
		e->ebx = r.ebx;
		e->ecx = r.ecx;
		e->edx = r.edx;
	}
}

/*
 * Deliver a PMI: an MSI at the LVTPC vector to this vCPU's APIC, then
 * LVTPC masked, as the hardware does on delivery.  The guest's handler
 * unmasks it, which we see the next time we look (before the next PMI).
 */
static bool vcpu_pmu_inject_pmi(struct vcpu *v)
{
	struct kvm_lapic_state ls;
	struct kvm_msi msi = { 0 };
	uint32_t lvtpc;

	if (ioctl(v->fd, KVM_GET_LAPIC, &ls) < 0)
		return false;
	memcpy(&lvtpc, ls.regs + APIC_LVTPC, 4);
	if (lvtpc & APIC_LVT_MASKED)
		return false;
	msi.address_lo = APIC_MSI_BASE | ((uint32_t)v->id << 12);
	msi.data = lvtpc & APIC_LVT_VECTOR;
	lvtpc |= APIC_LVT_MASKED;
	memcpy(ls.regs + APIC_LVTPC, &lvtpc, 4);
	ioctl(v->fd, KVM_SET_LAPIC, &ls);
	ioctl(v->vm->fd, KVM_SIGNAL_MSI, &msi);
	v->pmu.pmis++;
	return true;
}

/* Was LVTPC unmasked by the guest since the last PMI? */
static void vcpu_pmu_check_lvtpc(struct vcpu *v)
{
	struct kvm_lapic_state ls;
	uint32_t lvtpc;

	if (!v->pmu.pmi_masked || ioctl(v->fd, KVM_GET_LAPIC, &ls) < 0)
		return;
	memcpy(&lvtpc, ls.regs + APIC_LVTPC, 4);
	if (!(lvtpc & APIC_LVT_MASKED)) {
		v->pmu.pmi_masked = false;
		pmu_vcpu_lvtpc_unmasked(v->pmu.pv);
		/* A PMI pmu/ asked for while LVTPC was still masked. */
		if (v->pmu.pmi_deferred && vcpu_pmu_inject_pmi(v)) {
			v->pmu.pmi_deferred = false;
			v->pmu.pmi_masked = true;
		}
	}
}

/*
 * tsc source: an interrupting counter overflows at a TSC deadline while the
 * guest runs without exits; a host timer kicks the vCPU thread out of
 * KVM_RUN (SIGUSR1, EINTR) so that pmu/ sees the overflow then.
 */
static void vcpu_pmu_timer_arm(struct vcpu *v)
{
	struct itimerspec its = { 0 };
	struct sigevent sev = { 0 };
	uint64_t dl, now, ns;

	if (!pmu_vcpu_timer_deadline(v->pmu.pv, &dl)) {
		if (v->pmu.timer_armed)
			timer_settime(v->pmu.timer, 0, &its, NULL);
		v->pmu.timer_armed = false;
		return;
	}
	if (!v->pmu.timer_made) {
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGUSR1;
		sev._sigev_un._tid = gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &v->pmu.timer))
			return;
		v->pmu.timer_made = true;
	}
	now = __rdtsc();
	ns = dl > now ? (dl - now) * 1000000 / v->vm->tsc_khz : 0;
	its.it_value.tv_sec = ns / 1000000000;
	its.it_value.tv_nsec = ns % 1000000000 ? ns % 1000000000 : 1;
	timer_settime(v->pmu.timer, 0, &its, NULL);
	v->pmu.timer_armed = true;
	v->pmu.timer_tsc = dl;
}

/* The mode at this exit: a signal finds a vCPU in HLT at CPL0, halted. */
static int vcpu_pmu_mode(struct vcpu *v)
{
	struct kvm_mp_state mp;
	const uint64_t *ret;

	if ((v->run->s.regs.sregs.cs.selector & 3) == 3) {
		/* At a kernel address still at CPL3: kvm_pvm's `syscall`,
		 * a jump to LSTAR before the #PF that enters the kernel,
		 * one of the switches of mode where kvm_pvm takes a kick. */
		if (v->run->s.regs.regs.rip >= PV_KERNEL_BASE)
			return VM_MODE_KERNEL;
		/* Still where the kernel returned to: kvm_pvm held the kick
		 * through the emulated kernel (guest-kernel/kstat.c). */
		ret = v->vm->kstat_gpa && v->id < PV_KSTAT_CPUS ?
		      vm_gpa_to_hva(v->vm, v->vm->kstat_gpa +
				    offsetof(struct pv_kstat, return_rip[v->id]),
				    8) : NULL;
		if (ret && v->run->exit_reason == KVM_EXIT_INTR &&
		    __atomic_load_n(ret, __ATOMIC_ACQUIRE) ==
		    v->run->s.regs.regs.rip)
			return VM_MODE_KERNEL;
		return VM_MODE_USER;
	}
	if (v->run->exit_reason == KVM_EXIT_INTR &&
	    !ioctl(v->fd, KVM_GET_MP_STATE, &mp) &&
	    mp.mp_state == KVM_MP_STATE_HALTED)
		return VM_MODE_HALTED;
	return VM_MODE_KERNEL;
}

/* record -a: the VMM's own time per exit reason (Xenoprof, Du et al.);
 * stat --breakdown: the mode at a sampling signal too. */
static void vcpu_pmu_exit_time(struct vcpu *v)
{
	const struct vm_observer *o = v->vm->observer;
	struct kvm_run *run = v->run;
	uint64_t now = __rdtsc();
	int hc = -1;

	if (!o || !v->pmu.exit_tsc)
		return;
	if (o->exit_mode)
		o->exit_mode(o->ctx, v->id, run->exit_reason, vcpu_pmu_mode(v),
			     run->s.regs.regs.rip);
	if (!o->exit_time)
		return;
	if (run->exit_reason == KVM_EXIT_IO && run->io.port == PV_HC_PORT)
		hc = v->hypercall_nr & HC_NR_BITS;	/* rax: its result */
	o->exit_time(o->ctx, v->id, run->exit_reason, hc,
		     (now - v->vm->boot_tsc) * 1000000 / v->vm->tsc_khz,
		     now - v->pmu.exit_tsc);
}

/*
 * Boot params' kstep_live says some vCPU is stepped.  A standard KVM arms
 * TF only at the RIP where the VMM stopped, and the CPU clears it at every
 * kernel entry: there the guest kernel sets it again at its entries.  On
 * every host the kernel ticks at 1 Hz meanwhile (lapic.c): each stepped
 * kernel instruction is an exit, and a 100 Hz tick's work outlasted it.
 */
static void vcpu_pmu_kstep_live(struct vcpu *v, bool on)
{
	struct pv_boot_params *bp;
	int n;

	n = atomic_fetch_add(&v->vm->kstep_vcpus, on ? 1 : -1) + (on ? 1 : -1);
	bp = vm_gpa_to_hva(v->vm, PV_BOOT_PARAMS_PHYS, sizeof(*bp));
	if (bp)
		__atomic_store_n(&bp->kstep_live, n > 0, __ATOMIC_RELEASE);
}

/*
 * step source, CPL0: KVM steps kernel code (on kvm_pvm it emulates it
 * anyway) while a running counter has the OS bit.  The guest kernel steps
 * user code.
 */
static void vcpu_pmu_kernel_step_setup(struct vcpu *v)
{
	struct kvm_guest_debug dbg = { 0 };
	bool want = !v->pmu.kstep_failed && pmu_vcpu_wants_kernel_step(v->pmu.pv);

	if (want != v->pmu.kstep) {
		if (want)
			dbg.control = KVM_GUESTDBG_ENABLE |
				      KVM_GUESTDBG_SINGLESTEP;
		if (ioctl(v->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0) {
			/* Said once: :k step counts stay 0 from here on. */
			if (want && !v->pmu.kstep_failed)
				fprintf(stderr, "vmm: cpu %d: KVM_SET_GUEST_DEBUG: "
					"%s (kernel-mode step counts stay 0)\n",
					v->id, strerror(errno));
			v->pmu.kstep_failed = true;
			want = false;
		}
		if (want != v->pmu.kstep)
			vcpu_pmu_kstep_live(v, want);
		v->pmu.kstep = want;
	}
	if (v->pmu.kstep) {
		v->pmu.kstep_rip = v->run->s.regs.regs.rip;
		v->pmu.kstep_cpl0 = (v->run->s.regs.sregs.cs.selector & 3) == 0;
		/* Standard KVM: TF again where we stand (a register write at
		 * the last exit, a hypercall's result, dropped it). */
		if (v->pmu.kstep_cpl0 && v->vm->host_kind == PV_HOST_STANDARD) {
			dbg.control = KVM_GUESTDBG_ENABLE |
				      KVM_GUESTDBG_SINGLESTEP;
			ioctl(v->fd, KVM_SET_GUEST_DEBUG, &dbg);
		}
	}
}

/*
 * A standard KVM steps every privilege level, not only CPL0, and takes
 * every #DB for itself, the guest's own as well.  The guest kernel sets TF
 * on return to user mode exactly while the per-vCPU page says it steps
 * user code, so a user instruction retiring then is a #DB the guest is
 * owed: hand it back.  (A program that sets TF itself while kernel
 * instructions are being counted loses its SIGTRAPs; documented.)
 */
static void vcpu_pmu_user_step_reinject(struct vcpu *v)
{
	struct kvm_guest_debug dbg = {
		.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP |
			   KVM_GUESTDBG_INJECT_DB,
	};

	if (!pmu_vcpu_user_stepping(v->pmu.pv))
		return;
	if (ioctl(v->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0)
		fprintf(stderr, "vmm: cpu %d: cannot hand a #DB back to the "
			"guest: %s\n", v->id, strerror(errno));
}

/*
 * A KVM_EXIT_DEBUG: the CPL0 instruction at kstep_rip retired.  A rep
 * string instruction stops once per iteration with RIP unchanged and
 * retires once, the same rule as the guest's user-mode #DB handler.
 * Returns whether pmu/ must see an exit (an overflow point was reached).
 */
static bool vcpu_pmu_kernel_step_count(struct vcpu *v)
{
	uint8_t buf[X86_MAX_INSN_LEN];
	struct x86_insn_class ic;
	size_t n;

	if (!v->pmu.kstep_cpl0) {
		/* Still at CPL3 on a standard KVM: a user instruction
		 * retired; at CPL0: a kernel entry set TF (kstep_stubs). */
		if (v->vm->host_kind == PV_HOST_STANDARD &&
		    (v->run->s.regs.sregs.cs.selector & 3) == 3)
			vcpu_pmu_user_step_reinject(v);
		return false;
	}
	n = guest_va_read(v, v->pmu.kstep_rip, buf, sizeof(buf), NULL);
	if (n == 0 || x86_classify(buf, n, &ic) < 0)
		memset(&ic, 0, sizeof(ic));
	if (ic.rep_string && v->run->s.regs.regs.rip == v->pmu.kstep_rip)
		return false;
	return pmu_vcpu_kernel_step(v->pmu.pv, x86_is_branch(ic.branch));
}

/* Learn the least trip from `trip`; 7/8 of it is a trap's cost. */
static uint64_t vcpu_pmu_trip_cost(uint64_t *least, uint64_t trip)
{
	if (!*least || trip < *least)
		*least = trip;
	return *least - *least / 8;
}

/*
 * A single step of kernel code costs its exit and return, which KVM makes
 * in a round trip to here, on top of the instruction: 7/8 of the least
 * round trip seen stands for that part (as the step source's user traps
 * are costed), and a quiet step adds the VMM's own time, which pmu/ did
 * not stop counting for (an exit it sees stops its counters).
 */
static void vcpu_pmu_kernel_step_exit(struct vcpu *v, uint64_t now)
{
	pmu_vcpu_kernel_step_cost(v->pmu.pv,
				  vcpu_pmu_trip_cost(&v->pmu.kstep_least,
						     now - v->pmu.kstep_entry_tsc));
	v->pmu.kstep_exit_tsc = now;
}

/*
 * A block trap of the step source (section 4.4 of docs/design.md) that
 * pmu/ does not see: its cost is Perfctr-Xen's overhead to compensate, as
 * a kernel step's is.  The trip from the entry to it is the guest's block
 * and the round trip through KVM, and the least trip seen bounds the round
 * trip (a block of one instruction or a few): 7/8 of it, plus the VMM's
 * own time (filling the code cache), is left out of the cycles of the mode
 * the program trapped from.  The traps of python3 -c pass under QEMU's
 * emulated KVM, 150 us each, were all of its 145 G user cycles.
 */
static void vcpu_pmu_block_exit(struct vcpu *v, uint64_t now)
{
	int64_t gained = (int64_t)(pmu_vcpu_booked_tsc(v->pmu.pv, now) -
				   v->pmu.entry_booked);
	uint64_t cost = vcpu_pmu_trip_cost(&v->pmu.block_least,
					   now - v->pmu.kstep_entry_tsc);

	/* No more than the trip gave the mode: a trip that began in the
	 * kernel (a thread switch) has little user time, and PAPI's exact
	 * test read 0 cycles for a short thread. */
	if (gained <= 0)
		cost = 0;
	else if ((uint64_t)gained < cost)
		cost = (uint64_t)gained;
	v->pmu.block_cost = cost;
	v->pmu.block_exit_tsc = now;
}

/* KVM_RUN's entry, where the next quiet exit's trip begins. */
static void vcpu_pmu_entry_stamp(struct vcpu *v, uint64_t now)
{
	v->pmu.kstep_exit_tsc = 0;
	v->pmu.block_exit_tsc = 0;
	v->pmu.kstep_entry_tsc = now;
	v->pmu.entry_booked = pmu_vcpu_booked_tsc(v->pmu.pv, now);
}

void vcpu_pmu_before_run(struct vcpu *v)
{
	if (v->pmu.kstep_quiet) {
		/* A step exit pmu/ did not see: the vCPU stays "in guest". */
		uint64_t now;

		v->pmu.kstep_quiet = false;
		vcpu_pmu_kernel_step_setup(v);
		now = __rdtsc();
		if (v->pmu.kstep_exit_tsc)	/* a kernel step */
			pmu_vcpu_kernel_step_cost(v->pmu.pv,
						  now - v->pmu.kstep_exit_tsc);
		if (v->pmu.block_exit_tsc)	/* a block trap */
			pmu_vcpu_kernel_step_cost(v->pmu.pv,
						  now - v->pmu.block_exit_tsc +
						  v->pmu.block_cost);
		vcpu_pmu_entry_stamp(v, now);
		return;
	}
	vcpu_pmu_exit_time(v);
	vcpu_pmu_check_lvtpc(v);
	if (pmu_vcpu_enter(v->pmu.pv)) {
		/* pmu/ has handed this PMI over: if the guest's LVTPC is
		 * still masked, keep it until the guest unmasks. */
		v->pmu.pmi_deferred = !vcpu_pmu_inject_pmi(v);
		v->pmu.pmi_masked = true;
	}
	vcpu_pmu_kernel_step_setup(v);
	vcpu_pmu_timer_arm(v);
	vcpu_pmu_entry_stamp(v, __rdtsc());
}

/*
 * The host timer's deadline has passed.  Its kick interrupts KVM_RUN only
 * if it lands in one: one that lands while the VMM handles an exit is
 * dropped (vcpu_thread() clears immediate_exit), and when that exit is a
 * quiet one (a stepped kernel instruction, a block trap), nothing re-arms
 * the timer: a program spinning in user mode for its cycles overflow
 * waited for ever (`vmm stat -e instructions:k` of PAPI's overflow tests).
 * So such an exit is not quiet: pmu/ checks the overflow and the entry
 * arms the timer again.
 */
static bool vcpu_pmu_timer_due(const struct vcpu *v)
{
	return v->pmu.timer_armed &&
	       (int64_t)(__rdtsc() - v->pmu.timer_tsc) >= 0;
}

/* KVM steal time: the record the guest registered (PV_MSR_KVM_STEAL_TIME). */
static void vcpu_pmu_steal(struct vcpu *v)
{
	const struct pv_steal_record *rec =
		vm_gpa_to_hva(v->vm, PV_STEAL_PHYS + PV_STEAL_RECORD_SIZE * v->id,
			      PV_STEAL_RECORD_SIZE);
	uint64_t steal;

	if (!rec)
		return;
	steal = rec->steal;
	if (steal > v->pmu.steal_seen) {
		pmu_vcpu_steal(v->pmu.pv, steal - v->pmu.steal_seen);
		v->pmu.steal_seen = steal;
	}
}

void vcpu_pmu_after_run(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	enum pmu_exit_reason why = PMU_EXIT_OTHER;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		why = run->io.port == PV_HC_PORT ? PMU_EXIT_HYPERCALL
						  : PMU_EXIT_IO;
		/* A block trap is part of the program's run, like a
		 * single-step #DB: pmu/ does not see it (no fold, no page
		 * republished under a reader), unless it reached an
		 * overflow point. */
		if (step_block_exit(v) && !vcpu_pmu_timer_due(v)) {
			v->pmu.kstep_quiet = true;
			vcpu_pmu_block_exit(v, __rdtsc());
			return;
		}
		break;
	case KVM_EXIT_MMIO:
		why = PMU_EXIT_MMIO;
		break;
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		why = PMU_EXIT_MSR;
		break;
	case KVM_EXIT_HLT:
		why = PMU_EXIT_HLT;
		break;
	case KVM_EXIT_DEBUG:
		if (v->pmu.kstep && v->pmu.kstep_cpl0)
			vcpu_pmu_kernel_step_exit(v, __rdtsc());
		if (v->pmu.kstep && !vcpu_pmu_kernel_step_count(v) &&
		    !vcpu_pmu_timer_due(v)) {
			v->pmu.kstep_quiet = true;
			return;
		}
		break;
	}
	v->pmu.exit_tsc = __rdtsc();
	pmu_vcpu_exit_ip(v->pmu.pv, run->s.regs.regs.rip,
			 !vcpu_in_user_code(v));
	pmu_vcpu_exit(v->pmu.pv, why);
	vcpu_pmu_steal(v);
}

int64_t vcpu_pmu_hypercall(struct vcpu *v, uint64_t nr, uint64_t a,
			   uint64_t b, uint64_t c)
{
	void *out, *in;

	switch (nr) {
	case PV_HC_PMU_VCPU_PAGE:
		in = (a & 4095) ? NULL : vm_gpa_to_hva(v->vm, a, 4096);
		if (!in)
			return -EFAULT;
		pmu_vcpu_set_page(v->pmu.pv, in);
		return 0;
	case PV_HC_PMU_SWITCH:
		out = a ? vm_gpa_to_hva(v->vm, a, 4096) : NULL;
		in = b ? vm_gpa_to_hva(v->vm, b, 4096) : NULL;
		if ((a && (!out || (a & 4095))) || (b && (!in || (b & 4095))))
			return -EFAULT;
		return pmu_thread_switch(v->pmu.pv, out, in);
	case PV_HC_PMU_POLL:
		return 0;
	case PV_HC_STEP_ARM:
		return step_block_arm(v, a, b, c);
	case PV_HC_STEP_ACCOUNT:
		return v->pmu.step_account;	/* step_block_exit() counted */
	case PV_HC_PMU_REARM:
		return pmu_pmi_rearm(v->pmu.pv, a, b, c);
	case PV_HC_STEP_CODE:
		return step_blocks_guest_code(v->vm->blocks, v->vm->mem_size,
					      a, b);
	default:
		return -ENOSYS;
	}
}
