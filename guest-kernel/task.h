/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_TASK_H
#define KERNEL_TASK_H

#include "kernel.h"
#include "mm.h"
#include "asm_offsets.h"
#include "sched.h"

#define KSTACK_SIZE	16384ull
#define NSIG		64

struct fdtable;
struct perf_event;
struct pv_vpmu_vcpu_page;
struct pv_vpmu_thread_page;

struct sigaction_k {
	u64 handler;
	u64 flags;
	u64 restorer;
	u64 mask;
};

/* What the threads of one process share. */
struct proc {
	int pid;
	int pgid;
	int nthreads;			/* live threads */
	struct mm *mm;
	struct fdtable *fdt;		/* vfs_fd.c */
	struct proc *parent;
	struct proc *children;		/* list through sibling */
	struct proc *sibling;
	struct waitq child_wait;	/* wait4() sleeps here */
	struct waitq vfork_wait;	/* a vfork parent sleeps here */
	bool zombie;
	bool exiting;
	int exit_status;		/* wait4 encoding */
	u64 sigpending;			/* process-directed signals */
	struct sigaction_k sig[NSIG + 1];
	u64 utime_tsc;			/* CPU time of exited threads */
	/* Interval timers (itimer.c), by ITIMER_*: REAL's value is a TSC
	 * deadline, the CPU-time ones' what is left; 0 when off. */
	u64 it_value[3], it_interval[3];
	bool itimer_on;
	struct proc *itimer_next;
	char cwd[256];			/* absolute */
	char comm[16];
};

enum task_state {
	TASK_RUNNABLE,
	TASK_RUNNING,
	TASK_SLEEPING,
	TASK_DEAD,
};

/*
 * A thread.  It sits at the bottom of its own 16 KiB-aligned kernel stack,
 * so `current` is one `and` of %rsp: no per-CPU segment, no swapgs.
 */
/* Classification of a user instruction, cached for the #DB fast path. */
struct step_icache {
	u64 rip;
	u64 flags;			/* ICACHE_* (asm_offsets.h) */
};

struct task {
	struct trapframe *tf;		/* user frame at the stack top */
	u64 ksp;			/* saved kernel rsp while switched out */
	struct cpu *cpu;		/* where it runs or last ran */
	struct mm *mm;
	struct proc *proc;
	struct step_icache icache[STEP_ICACHE];
	int tid;
	int state;			/* enum task_state */
	struct task *run_next;		/* run queue link */
	struct task *wait_next;		/* wait queue link */
	struct waitq *wq;		/* the queue it sleeps on */
	u64 wake_tsc;			/* timed sleep deadline, 0 = none */
	u64 futex_key;			/* user address it waits on */
	struct mm *futex_mm;
	u64 fs_base;
	u64 clear_child_tid;
	u64 sigmask;
	u64 saved_sigmask;		/* rt_sigsuspend: restored after */
	bool restore_sigmask;		/* the handler it waited for */
	u64 sigpending;			/* thread-directed signals */
	/* CPU time used (THREAD_CPUTIME), less the TSC at which it was
	 * switched in while it runs: a switch is one add and one sub. */
	u64 run_tsc;
	u64 itimer_cpu;			/* CPU time at its last itimer charge */
	u64 nr_switches;		/* times switched in */
	u64 nr_migrations;		/* CPU changes, once perf_migrations */
	bool perf_migrations;		/* a cpu-migrations event was opened */
	struct task *all_next;		/* every task, for tid lookup */
	bool vfork_child;
	struct pv_vpmu_thread_page *tpage;	/* counters, when it has any */
	u32 pmu_count_mask;		/* counters offset at switches (a-mode) */
	u32 pmu_int_mask;		/* counters saved/restored (i-mode) */
	int pmu_parent_tid;		/* inherit: whose events it counts for */
	struct perf_event *perf[4];	/* perf_event_open fds, by counter */
	struct perf_event *perf_list;	/* all its events (perf_event.c) */
	bool perf_waiting;		/* one waits for a counter (mux) */
	bool perf_rotate;		/* a tick asked to rotate them */
	u64 fault_addr;			/* cr2 of the last user fault */
	int sig_code[NSIG];		/* siginfo si_code per signal */
	u64 sig_value[NSIG];		/* si_pid / si_addr per signal */
	u64 altstack_sp, altstack_size;	/* sigaltstack(), size 0: none */
	u64 sig_poll;			/* SIGBITs whose sig_value is si_band
					 * | si_fd << 32 (perf overflow) */
	char comm[16];
	u64 xstate_pa;			/* XSAVE area (fpu.c), or 0 */
	struct cpu *fpu_cpu;		/* whose registers hold its state */
	bool fpu_dirty;			/* ... newer than xstate_pa */
	/* `vmm record`: how far before the wrap its counter was last set;
	 * a sample stands for that plus its skid (pmu_guest.c). */
	u64 record_armed;
	u8 fxsave[512] __attribute__((aligned(16)));
};

struct tss {
	u32 rsvd0;
	u64 rsp0;
	u64 rsp1, rsp2;
	u64 rsvd1;
	u64 ist[7];
	u64 rsvd2;
	u16 rsvd3;
	u16 iomap_base;
} __attribute__((packed));

struct cpu {
	struct pv_vpmu_vcpu_page *vpage;	/* Phys* from the VMM */
	u64 user_rsp;			/* syscall entry scratch (entry.S) */
	int id;
	union {
		struct {
			bool need_resched;
			bool timer_on;
		};
		u16 rtu_word;		/* both, for return_to_user() */
	};
	bool idle;
	struct task *idle_task;
	u64 ticks;
	struct tss tss;
	u64 gdt[8];
	u64 tss_desc[2];		/* GDT slots 8-9: selector 0x40 */
	u32 tick_ns;			/* the period the timer runs at */
	struct task *fpu_owner;		/* whose FPU state is loaded (fpu.c) */
	struct mm *loaded_mm;		/* whose page tables CR3 holds */
	u64 tlb_seen;			/* loaded_mm->tlb_gen last flushed */
	bool in_user;			/* past return_to_user(), no BKL */
	/* This vCPU's KVM steal-time record, NULL when the boot has none. */
	const struct pv_steal_record *steal;
	/* PMI status bits still to acknowledge: the handler's first re-arm
	 * takes them along (kpmu_rearm()). */
	u64 pmi_ack;
	/* The last return to user mode's TSC and steal, while the start-up
	 * trip is measured (kpmu_trip_return()). */
	u64 trip_stamp, trip_steal;
	/* The mode clock after a halt (kpmu_woken_*()): halted since the
	 * last return to user mode; that return's entry count and steal,
	 * and the trip_min it raised, while the next entry is awaited. */
	bool woke;
	bool woken_wait;
	u64 woken_entries, woken_steal, trip_min_kept;
} __attribute__((aligned(64)));

/* kstat.c: the RIP of a return to user mode (RETURN_HOOK_KACCT) */
void kacct_return(struct cpu *c, u64 rip);

static inline struct task *current_task(void)
{
	u64 sp;

	__asm__("mov %%rsp, %0" : "=r"(sp));
	return (struct task *)(sp & ~(KSTACK_SIZE - 1));
}

/* Where a task's user frame is: the top of its kernel stack (t->tf). */
static inline struct trapframe *task_user_frame(struct task *t)
{
	return (struct trapframe *)((u8 *)t + KSTACK_SIZE) - 1;
}

/* t's CPU time in TSC ticks at now (BKL held, or t current). */
static inline u64 task_cpu_tsc(const struct task *t, u64 now)
{
	return t->state == TASK_RUNNING ? t->run_tsc + now : t->run_tsc;
}

/* rdtsc clears the high halves of rax and rdx: no zero-extension. */
static inline u64 rdtsc(void)
{
	u64 lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (u64)hi << 32 | lo;
}

static inline void wrmsr(u32 msr, u64 v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((u32)v), "d"((u32)(v >> 32)));
}

extern struct cpu cpus[PV_MAX_CPUS];
extern struct pv_boot_params *boot_params;

/* cpu.c */
void cpu_init(struct cpu *c, int id);
void idt_init(bool standard);

/* lapic.c */
void lapic_init(void);
void lapic_eoi(void);
void lapic_timer_set(bool on);
void lapic_tick_adjust(void);
void lapic_ipi(int cpu, int vector);
#define VEC_TIMER	0x20
#define VEC_RESCHED	0x21
#define VEC_PMI		0x22
#define VEC_TLB		0x23	/* flush this CPU's TLB (mm.c) */
#define RFLAGS_TF	0x100ull
#define VEC_INT80	0x80	/* i386 system calls (DPL 3 gate) */
#define VEC_SPURIOUS	0xff

/* sched.c */
void bkl_lock(void);
void bkl_unlock(void);
struct task *task_alloc(void);
void task_free(struct task *t);
void task_register(struct task *t);
struct task *task_find(int tid);
struct task *task_find_proc_next(struct proc *p, struct task *prev);
void sched_enqueue(struct task *t);
void schedule(void);
s64 sched_yield_fast(void);	/* sched_yield, BKL held */
void sched_rtu_update(void);	/* after mm_tlb_init() */
__attribute__((noreturn)) void sched_idle(void);
void return_to_user(struct trapframe *tf);
void sched_tick(void);
u64 tsc_from_ns(u64 ns);
u64 ns_from_tsc(u64 tsc);

/* itimer.c */
extern struct proc *itimer_procs;	/* with a timer armed */
/* Inline: every slow return to user mode asks (sched.c). */
static inline bool itimer_any(void)
{
	return itimer_procs != NULL;
}
void itimer_return(struct task *t);	/* on the way to user mode */
void itimer_check_real(void);		/* at a tick */
void itimer_proc_exit(struct proc *p);
__attribute__((noreturn)) void user_enter(struct trapframe *tf);

/* proc.c */
int pid_alloc(void);
__attribute__((noreturn)) void task_exit(int code);
__attribute__((noreturn)) void proc_exit_group(int status);
__attribute__((noreturn)) void task_kill_signal(int sig);
struct proc *proc_alloc(void);
struct task *task_create_first(struct proc *p);
void task_reap_dead(void);
/* Threads that died, freed by the next switch on another stack. */
extern struct task *dead_list;

/* signal.c */
#define SIGHUP	1
#define SIGINT	2
#define SIGQUIT	3
#define SIGILL	4
#define SIGTRAP	5
#define SIGABRT	6
#define SIGBUS	7
#define SIGFPE	8
#define SIGKILL	9
#define SIGUSR1	10
#define SIGSEGV	11
#define SIGUSR2	12
#define SIGPIPE	13
#define SIGALRM	14
#define SIGTERM	15
#define SIGCHLD	17
#define SIGCONT	18
#define SIGSTOP	19
#define SIGTSTP	20
#define SIGURG	23
#define SIGVTALRM 26
#define SIGPROF	27
#define SIGIO	29
#define SIGWINCH 28
void signal_send(struct task *t, int sig, bool to_thread);
void signal_deliver(struct trapframe *tf);
void signal_force(int sig);

/* futex.c */
void futex_wake_addr(struct mm *mm, u64 uaddr, int n);

/* syscall.c */
void syscall_init(void);
void syscall_dispatch(struct trapframe *tf);
void syscall_i386(struct trapframe *tf);

#endif
