// SPDX-License-Identifier: MIT
/*
 * Exceptions.  A user-mode fault ends the program with the Linux signal
 * status (SIGSEGV -> 139); a kernel-mode fault is a panic with vector, RIP,
 * error code and CR2.  `int $0x80` from user mode arrives as #UD here
 * (docs/design.md section 1) and is decoded into an i386 system call.
 */
#include "kernel.h"
#include "mm.h"
#include "perf_event.h"
#include "pmu_guest.h"
#include "task.h"


static const char *const vec_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint",
	"#OF overflow", "#BR bound", "#UD invalid opcode", "#NM no FPU",
	"#DF double fault", "coprocessor overrun", "#TS invalid TSS",
	"#NP segment not present", "#SS stack fault", "#GP general protection",
	"#PF page fault", "vector 15", "#MF x87 error", "#AC alignment check",
	"#MC machine check", "#XM SIMD error", "#VE", "#CP",
};

static const u8 vec_signal[32] = {
	[0] = SIGFPE, [1] = SIGTRAP, [3] = SIGTRAP, [4] = SIGSEGV,
	[5] = SIGSEGV, [6] = SIGILL, [7] = SIGFPE, [12] = SIGBUS,
	[13] = SIGSEGV, [14] = SIGSEGV, [16] = SIGFPE, [17] = SIGBUS,
	[19] = SIGFPE,
};

static inline u64 read_cr2(void)
{
	u64 v;

	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

bool trap_fixup(struct trapframe *tf)
{
	extern char copy_user_load[], copy_user_store[], copy_user_load4[],
		copy_user_store4[], copy_user_load8[], copy_user_store8[],
		strncpy_load_insn[], copy_user_fault[];
	static const char *const user_access[] = {
		copy_user_load, copy_user_store, copy_user_load4,
		copy_user_store4, copy_user_load8, copy_user_store8,
		strncpy_load_insn,
	};

	if (tf->vector != 14 && tf->vector != 13)
		return false;
	for (size_t i = 0; i < sizeof(user_access) / sizeof(user_access[0]); i++)
		if (tf->rip == (u64)user_access[i]) {
			tf->rip = (u64)copy_user_fault;
			return true;
		}
	return false;
}

/* `cd 80` at the faulting RIP: the i386 system-call gate. */
static bool trap_is_int80(struct trapframe *tf)
{
	u8 insn[2];

	if (!user_range_ok(tf->rip, 2) ||
	    copy_from_user(insn, (void *)tf->rip, 2))
		return false;
	return insn[0] == 0xcd && insn[1] == 0x80;
}

/* Device interrupts: no lock needed for these few flag updates. */
static void trap_irq(struct trapframe *tf)
{
	if (tf->vector == VEC_SPURIOUS)
		return;
	lapic_eoi();
	if (tf->vector == VEC_TIMER) {
		lapic_tick_adjust();
		sched_tick();
	}
	else if (tf->vector == VEC_PMI)
		kpmu_pmi(tf);
	else if (tf->vector == VEC_TLB)
		mm_tlb_ipi();
	/* VEC_RESCHED only wakes a halted CPU: the idle loop looks. */
	if ((tf->cs & 3) == 3) {
		bkl_lock();
		return_to_user(tf);
	}
}

/*
 * A CPL0 fault whose frame is not on a kernel (high-half) stack: the CPU
 * pushed it wherever RSP pointed, e.g. on the user stack at a broken
 * system-call entry.  Nothing that uses `current` may run there, so move
 * to the one emergency stack (the first CPU here owns it; the VM ends)
 * and panic with the frame's contents.  The stubs do not check: this is
 * the cold path, and kvm_pvm emulates every instruction of the hot ones.
 */
__attribute__((used, noreturn)) static void panic_bad_stack(struct trapframe *tf)
{
	u64 v = tf->vector;

	panic("kernel fault on a non-kernel stack: %s (vector %lu) at rip %lx "
	      "err %lx cr2 %lx rsp %lx", v < 32 && vec_names[v] ? vec_names[v]
	      : "?", v, tf->rip, tf->error, read_cr2(), tf->rsp);
}

__attribute__((noreturn)) static void trap_bad_stack(struct trapframe *tf)
{
	extern char emergency_stack_top[];
	static int owner;

	if (__atomic_exchange_n(&owner, 1, __ATOMIC_ACQUIRE))
		for (;;)
			__asm__ volatile("cli; hlt");
	__asm__ volatile("mov %0, %%rsp; call panic_bad_stack"
			 : : "r"(emergency_stack_top), "D"(tf) : "memory");
	__builtin_unreachable();
}

__attribute__((used)) void trap(struct trapframe *tf)
{
	extern char iret_insn[];
	struct task *t = current_task();
	u64 v = tf->vector;
	int sig;

	if (v == VEC_INT80 && (tf->cs & 3) == 3) {
		/* Standard KVM: the DPL 3 gate, RIP already past `cd 80`. */
		bkl_lock();
		kpmu_user_entry(t->cpu->vpage, tf, 2);
		kpmu_count_trap_insn(t->cpu->vpage);
		syscall_i386(tf);
		return_to_user(tf);
		return;
	}
	/* Before the instruction at RIP: an interrupt, a fault, #BP's
	 * SIGTRAP (the VMM counted through the int3), int $0x80 as #UD. */
	if ((tf->cs & 3) == 3 && v != 1)
		kpmu_user_entry(t->cpu->vpage, tf, 0);
	if (v >= 32) {
		trap_irq(tf);
		return;
	}
	if ((tf->cs & 3) != 3) {
		if ((s64)(u64)tf >= 0)
			trap_bad_stack(tf);
		if (trap_fixup(tf))
			return;
		/* TF from a kstep stub on a vCPU the VMM does not step. */
		if (v == 1) {
			tf->rflags &= ~RFLAGS_TF;
			return;
		}
		/* iretq to a bad user frame (e.g. non-canonical RCX from a
		 * forged system call): the user's fault, not the kernel's. */
		if (tf->rip == (u64)iret_insn) {
			kprintf("%s[%d]: bad return frame: killed by SIGSEGV",
				t->comm, t->tid);
			task_kill_signal(SIGSEGV);
		}
		panic("kernel fault: %s (vector %lu) at rip %lx err %lx cr2 %lx "
		      "rsp %lx", vec_names[v] ? vec_names[v] : "?", v, tf->rip,
		      tf->error, read_cr2(), tf->rsp);
	}
	bkl_lock();
	if (v == 6 && trap_is_int80(tf)) {
		tf->rip += 2;
		kpmu_count_trap_insn(t->cpu->vpage);
		syscall_i386(tf);
		return_to_user(tf);
		return;
	}
	if (v == 13 && perf_event_rdpmc(t, tf)) {
		return_to_user(tf);
		return;
	}
	if (v == 1 && kpmu_debug_trap(tf)) {
		return_to_user(tf);
		return;
	}
	sig = vec_signal[v] ? vec_signal[v] : SIGSEGV;
	t->fault_addr = v != 14 ? tf->rip :
			(tf->error & PV_PF_ERR_STEP) ? t->cpu->vpage->step.fault_addr :
			read_cr2();
	t->sig_code[sig - 1] = v == 14 ? 1 : 0;	/* SEGV_MAPERR */
	t->sig_value[sig - 1] = t->fault_addr;
	if (t->proc->sig[sig].handler <= 1)
		kprintf("%s[%d]: %s at rip %lx err %lx addr %lx: signal %d",
			t->comm, t->tid, vec_names[v] ? vec_names[v] : "?",
			tf->rip, tf->error, v == 14 ? t->fault_addr : 0, sig);
	signal_force(sig);
	return_to_user(tf);
}
