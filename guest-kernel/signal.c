// SPDX-License-Identifier: MIT
/*
 * Signals: Linux x86-64 semantics and frame layout (rt_sigframe with
 * ucontext, siginfo and the FXSAVE area), delivered on the way back to
 * user mode.  Counter-overflow signals come through here too.
 */
#include "fpu.h"
#include "kernel.h"
#include "task.h"

#define SIG_DFL		0
#define SIG_IGN		1
#define SA_SIGINFO	0x00000004
#define SA_ONSTACK	0x08000000
#define SA_RESTORER	0x04000000
#define SA_NODEFER	0x40000000
#define SA_RESETHAND	0x80000000
#define SI_USER		0
#define SI_TKILL	-6

#define SIGBIT(s)	(1ull << ((s) - 1))
#define UNBLOCKABLE	(SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))

/* Linux's struct sigcontext (x86-64) and struct ucontext. */
struct sigcontext_k {
	u64 r8, r9, r10, r11, r12, r13, r14, r15;
	u64 rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	u16 cs, gs, fs, ss;
	u64 err, trapno, oldmask, cr2;
	u64 fpstate;
	u64 reserved[8];
};

struct ucontext_k {
	u64 uc_flags;
	u64 uc_link;
	u64 ss_sp;
	u32 ss_flags, pad;
	u64 ss_size;
	struct sigcontext_k mc;
	u64 sigmask;
};

struct siginfo_k {
	int signo, errno_, code, pad;
	u64 f[14];		/* union: si_pid/si_uid, si_addr, ... */
};

struct rt_sigframe {
	u64 pretcode;
	struct ucontext_k uc;
	struct siginfo_k info;
};

_Static_assert(sizeof(struct sigcontext_k) == 256, "sigcontext");
_Static_assert(sizeof(struct ucontext_k) == 304, "ucontext");
_Static_assert(sizeof(struct siginfo_k) == 128, "siginfo");

static bool sig_default_ignored(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH ||
	       sig == SIGCONT || sig == SIGSTOP || sig == SIGTSTP ||
	       sig == 21 || sig == 22;
}

/*
 * A thread running on another CPU notices a signal at its next kernel
 * entry, which a user loop, or one of leaf system calls served without
 * return_to_user() (entry.S), may never make: kick that CPU, as Linux's
 * kick_process() does.  The interrupt returns through return_to_user().
 */
static void signal_kick(struct task *t)
{
	if (t->state == TASK_RUNNING && t->cpu != current_task()->cpu)
		lapic_ipi(t->cpu->id, VEC_RESCHED);
}

void signal_send(struct task *t, int sig, bool to_thread)
{
	struct proc *p = t->proc;

	if (sig < 1 || sig > NSIG)
		return;
	if (p->sig[sig].handler == SIG_IGN ||
	    (p->sig[sig].handler == SIG_DFL && sig_default_ignored(sig) &&
	     sig != SIGCONT))
		return;
	if (to_thread) {
		t->sigpending |= SIGBIT(sig);
		if (!(t->sigmask & SIGBIT(sig)) || sig == SIGKILL) {
			task_wake(t);
			signal_kick(t);
		}
		return;
	}
	p->sigpending |= SIGBIT(sig);
	/* Wake one thread that can take it. */
	for (struct task *o = task_find_proc_next(p, NULL); o;
	     o = task_find_proc_next(p, o)) {
		if (!(o->sigmask & SIGBIT(sig)) || sig == SIGKILL) {
			task_wake(o);
			signal_kick(o);
			break;
		}
	}
}

/* A fault in user mode: the handler runs if there is one, else death. */
void signal_force(int sig)
{
	struct task *t = current_task();
	struct sigaction_k *sa = &t->proc->sig[sig];

	if ((t->sigmask & SIGBIT(sig)) || sa->handler == SIG_IGN) {
		t->sigmask &= ~SIGBIT(sig);
		sa->handler = SIG_DFL;
	}
	t->sigpending |= SIGBIT(sig);
}

static bool signal_on_altstack(const struct task *t, u64 sp)
{
	return sp - t->altstack_sp <= t->altstack_size;
}

static int signal_frame_build(struct trapframe *tf, int sig,
			      struct sigaction_k *sa, u64 oldmask)
{
	struct task *t = current_task();
	struct rt_sigframe fr;
	u64 fp, frame, sp = tf->rsp;


	if ((sa->flags & SA_ONSTACK) && t->altstack_size &&
	    !signal_on_altstack(t, sp))
		sp = t->altstack_sp + t->altstack_size;
	fp = ((sp - 128 - 512) & ~63ull);	/* below the red zone */
	frame = ((fp - sizeof(fr)) & ~15ull) - 8;
	if (!user_range_ok(frame, fp + 512 - frame))
		return -EFAULT;
	memset(&fr, 0, sizeof(fr));
	fr.pretcode = sa->restorer;
	fr.uc.mc = (struct sigcontext_k){
		tf->r8, tf->r9, tf->r10, tf->r11, tf->r12, tf->r13, tf->r14,
		tf->r15, tf->rdi, tf->rsi, tf->rbp, tf->rbx, tf->rdx, tf->rax,
		tf->rcx, tf->rsp, tf->rip, tf->rflags,
		(u16)tf->cs, 0, 0, (u16)tf->ss,
		tf->error, tf->vector < 32 ? tf->vector : 0, oldmask,
		t->fault_addr, fp, { 0 },
	};
	fr.uc.sigmask = oldmask;
	fr.info.signo = sig;
	fr.info.code = t->sig_code[sig - 1];
	fr.info.f[0] = t->sig_value[sig - 1];
	if (t->sig_poll & SIGBIT(sig)) {	/* si_band, si_fd */
		fr.info.f[0] = (u32)t->sig_value[sig - 1];
		fr.info.f[1] = t->sig_value[sig - 1] >> 32;
	}
	fpu_legacy_save(t);
	if (copy_to_user((void *)fp, t->fxsave, 512) ||
	    copy_to_user((void *)frame, &fr, sizeof(fr)))
		return -EFAULT;
	tf->rsp = frame;
	tf->rip = sa->handler;
	tf->rdi = sig;
	tf->rsi = frame + __builtin_offsetof(struct rt_sigframe, info);
	tf->rdx = frame + __builtin_offsetof(struct rt_sigframe, uc);
	tf->rax = 0;
	tf->rflags &= ~0x100ull;		/* no single-step into handlers */
	return 0;
}

/* One pending, unblocked signal: its action. */
void signal_deliver(struct trapframe *tf)
{
	struct task *t = current_task();
	struct proc *p = t->proc;
	u64 pend = (t->sigpending | p->sigpending) & ~t->sigmask;
	int sig = __builtin_ctzll(pend) + 1;
	struct sigaction_k *sa = &p->sig[sig];
	u64 oldmask = t->sigmask;

	/* After rt_sigsuspend the frame carries the mask from before it. */
	if (t->restore_sigmask) {
		oldmask = t->saved_sigmask;
		t->restore_sigmask = false;
	}
	if (pend & SIGBIT(SIGKILL))
		sig = SIGKILL;
	t->sigpending &= ~SIGBIT(sig);
	p->sigpending &= ~SIGBIT(sig);
	if (sig == SIGKILL || sa->handler == SIG_DFL) {
		if (sig != SIGKILL && sig_default_ignored(sig)) {
			t->sigmask = oldmask;
			return;
		}
		if (sig == SIGKILL && p->exiting)
			task_exit(p->exit_status);
		proc_exit_group(sig);
	}
	if (sa->handler == SIG_IGN) {
		t->sigmask = oldmask;
		return;
	}
	if (signal_frame_build(tf, sig, sa, oldmask)) {
		/* No room for the frame: as Linux, a forced SIGSEGV. */
		proc_exit_group(SIGSEGV);
	}
	if (!(sa->flags & SA_NODEFER))
		t->sigmask |= SIGBIT(sig);
	t->sigmask |= sa->mask & ~UNBLOCKABLE;
	if (sa->flags & SA_RESETHAND)
		sa->handler = SIG_DFL;
}

s64 sys_rt_sigreturn(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();
	struct trapframe *tf = t->tf;
	struct ucontext_k uc;

	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	/* `ret` popped pretcode: the ucontext is at the user's rsp. */
	if (!user_range_ok(tf->rsp, sizeof(uc)) ||
	    copy_from_user(&uc, (void *)tf->rsp, sizeof(uc)))
		proc_exit_group(SIGSEGV);
	if (uc.mc.fpstate && user_range_ok(uc.mc.fpstate, 512) &&
	    !copy_from_user(t->fxsave, (void *)uc.mc.fpstate, 512)) {
		*(u32 *)(t->fxsave + 24) &= 0xffff;	/* MXCSR reserved bits */
		fpu_legacy_load(t);
	}
	tf->r8 = uc.mc.r8, tf->r9 = uc.mc.r9, tf->r10 = uc.mc.r10;
	tf->r11 = uc.mc.r11, tf->r12 = uc.mc.r12, tf->r13 = uc.mc.r13;
	tf->r14 = uc.mc.r14, tf->r15 = uc.mc.r15, tf->rdi = uc.mc.rdi;
	tf->rsi = uc.mc.rsi, tf->rbp = uc.mc.rbp, tf->rbx = uc.mc.rbx;
	tf->rdx = uc.mc.rdx, tf->rcx = uc.mc.rcx, tf->rsp = uc.mc.rsp;
	tf->rip = uc.mc.rip;
	tf->rflags = (uc.mc.eflags & 0x40dd5ull) | 0x202;
	tf->cs = PV_SEL_UCODE;
	tf->ss = PV_SEL_UDATA;
	t->sigmask = uc.sigmask & ~UNBLOCKABLE;
	return uc.mc.rax;
}

s64 sys_rt_sigaction(u64 sig, u64 act, u64 oact, u64 size, u64 a4, u64 a5)
{
	struct proc *p = current_task()->proc;
	struct sigaction_k k;

	(void)a4, (void)a5;
	if (sig < 1 || sig > NSIG || size != 8)
		return -EINVAL;
	if (act && (sig == SIGKILL || sig == SIGSTOP))
		return -EINVAL;
	if (act && (!user_range_ok(act, sizeof(k)) ||
		    copy_from_user(&k, (void *)act, sizeof(k))))
		return -EFAULT;
	if (oact && (!user_range_ok(oact, sizeof(k)) ||
		     copy_to_user((void *)oact, &p->sig[sig], sizeof(k))))
		return -EFAULT;
	if (act) {
		k.mask &= ~UNBLOCKABLE;
		p->sig[sig] = k;
		if (k.handler == SIG_IGN)
			p->sigpending &= ~SIGBIT(sig);
	}
	return 0;
}

s64 sys_rt_sigprocmask(u64 how, u64 set, u64 oset, u64 size, u64 a4, u64 a5)
{
	struct task *t = current_task();
	u64 newset;

	(void)a4, (void)a5;
	if (size != 8)
		return -EINVAL;
	if (oset && (!user_range_ok(oset, 8) ||
		     copy_to_user((void *)oset, &t->sigmask, 8)))
		return -EFAULT;
	if (!set)
		return 0;
	if (!user_range_ok(set, 8) || copy_from_user(&newset, (void *)set, 8))
		return -EFAULT;
	switch (how) {
	case 0: t->sigmask |= newset; break;
	case 1: t->sigmask &= ~newset; break;
	case 2: t->sigmask = newset; break;
	default: return -EINVAL;
	}
	t->sigmask &= ~UNBLOCKABLE;
	return 0;
}

static s64 signal_kill_task(struct task *t, int sig, bool thread, int code)
{
	if (sig < 0 || sig > NSIG)
		return -EINVAL;
	if (!t)
		return -ESRCH;
	if (sig) {
		t->sig_code[sig - 1] = code;
		t->sig_value[sig - 1] = current_task()->proc->pid;
		t->sig_poll &= ~SIGBIT(sig);
		signal_send(t, sig, thread);
	}
	return 0;
}

/*
 * rt_sigsuspend: wait with a temporary mask until a signal is delivered;
 * always -EINTR.  The mask from before comes back when the handler
 * returns (signal_deliver puts it in the frame), as Linux does.
 */
s64 sys_rt_sigsuspend(u64 uset, u64 size, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();
	u64 set;

	(void)a2, (void)a3, (void)a4, (void)a5;
	if (size != 8)
		return -EINVAL;
	if (!user_range_ok(uset, 8) || copy_from_user(&set, (void *)uset, 8))
		return -EFAULT;
	t->saved_sigmask = t->sigmask;
	t->restore_sigmask = true;
	t->sigmask = set & ~UNBLOCKABLE;
	while (sleep_on(NULL) != -EINTR)
		;
	return -EINTR;
}

s64 sys_kill(u64 pid, u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *self = current_task();
	struct task *t;

	(void)a2, (void)a3, (void)a4, (void)a5;
	if ((int)pid == 0 || (int)pid == self->proc->pid)
		return signal_kill_task(self, sig, false, SI_USER);
	if ((int)pid < 0)
		return -ESRCH;		/* process groups: not supported */
	t = task_find(pid);
	if (t && t->proc->pid != (int)pid)
		t = NULL;		/* a thread id is not a process */
	return signal_kill_task(t, sig, false, SI_USER);
}

s64 sys_tgkill(u64 tgid, u64 tid, u64 sig, u64 a3, u64 a4, u64 a5)
{
	struct task *t = task_find(tid);

	(void)a3, (void)a4, (void)a5;
	if (t && t->proc->pid != (int)tgid)
		t = NULL;
	return signal_kill_task(t, sig, true, SI_TKILL);
}

s64 sys_tkill(u64 tid, u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a2, (void)a3, (void)a4, (void)a5;
	return signal_kill_task(task_find(tid), sig, true, SI_TKILL);
}

/* stack_t: ss_sp, ss_flags (SS_ONSTACK 1, SS_DISABLE 2), ss_size. */
s64 sys_sigaltstack(u64 ss, u64 oss, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();
	bool on = t->altstack_size && signal_on_altstack(t, t->tf->rsp);
	u64 cur[3] = { t->altstack_sp, on ? 1 : t->altstack_size ? 0 : 2,
		       t->altstack_size }, want[3];

	(void)a2, (void)a3, (void)a4, (void)a5;
	if (ss && (!user_range_ok(ss, 24) ||
		   copy_from_user(want, (void *)ss, 24)))
		return -EFAULT;
	if (oss && (!user_range_ok(oss, 24) ||
		    copy_to_user((void *)oss, cur, 24)))
		return -EFAULT;
	if (!ss)
		return 0;
	if (on)
		return -EPERM;
	if ((u32)want[1] & 2) {
		t->altstack_sp = t->altstack_size = 0;
		return 0;
	}
	if ((u32)want[1] & ~(u32)0x80000000u)	/* only SS_AUTODISARM */
		return -EINVAL;
	if (want[2] < 2048)			/* MINSIGSTKSZ */
		return -ENOMEM;
	t->altstack_sp = want[0];
	t->altstack_size = want[2];
	return 0;
}
