// SPDX-License-Identifier: MIT
/*
 * Processes and threads: clone (threads, fork, vfork), execve, exit and
 * wait4.  A process (struct proc) owns the address space, files and signal
 * handlers its threads share.
 */
#include "exec.h"
#include "fpu.h"
#include "kernel.h"
#include "mm.h"
#include "msr.h"
#include "pmu_guest.h"
#include "task.h"
#include "vfs_glue.h"

#define CLONE_VM		0x00000100
#define CLONE_FS		0x00000200
#define CLONE_FILES		0x00000400
#define CLONE_SIGHAND		0x00000800
#define CLONE_VFORK		0x00004000
#define CLONE_PARENT		0x00008000
#define CLONE_THREAD		0x00010000
#define CLONE_SETTLS		0x00080000
#define CLONE_PARENT_SETTID	0x00100000
#define CLONE_CHILD_CLEARTID	0x00200000
#define CLONE_CHILD_SETTID	0x01000000

#define MAX_TASKS		512

static int next_pid = 1;
static int ntasks;
struct task *dead_list;		/* task.h: task_reap_dead() */
static struct proc *init_proc;

void task_start(void);

int pid_alloc(void)
{
	return next_pid++;
}

struct proc *proc_alloc(void)
{
	return kmalloc(sizeof(struct proc));
}

/* A new task starts in task_start (entry.S) with its user frame. */
static void task_prepare(struct task *t)
{
	u64 *sp = (u64 *)t->tf;

	*--sp = (u64)task_start;
	for (int i = 0; i < 6; i++)
		*--sp = 0;
	t->ksp = (u64)sp;
}

/* The FPU state a fresh program starts with (x87 and SSE defaults). */
/*
 * Write a 32-bit value into another address space (fork's child tid), as a
 * user store would: only to a user-writable page.  Every mm shares the
 * kernel's top-level slot, whose pages are present and writable, so
 * without the range and U checks a clone(CLONE_PARENT_SETTID) with a kernel
 * address stored the tid into kernel memory.
 */
static void mm_put_u32(struct mm *mm, u64 va, u32 val)
{
	bool huge;
	u64 *e;

	if (!user_range_ok(va, 4) || (va & 3))
		return;
	e = mm_walk(mm, va, false, &huge);
	if (!e || (*e & (PTE_P | PTE_W | PTE_U)) != (PTE_P | PTE_W | PTE_U))
		return;
	if (huge)
		*(u32 *)P2V((*e & PTE_ADDR & ~(PV_HUGE_SIZE - 1)) +
			    (va & (PV_HUGE_SIZE - 1))) = val;
	else
		*(u32 *)P2V((*e & PTE_ADDR) + (va & (PAGE_SIZE - 1))) = val;
}

struct task *task_create_first(struct proc *p)
{
	struct task *t = task_alloc();

	if (!t)
		return NULL;
	t->tid = p->pid;
	t->proc = p;
	t->mm = p->mm;
	fpu_reset(t);
	memcpy(t->comm, p->comm, sizeof(t->comm));
	task_prepare(t);
	task_register(t);
	ntasks++;
	init_proc = p;
	return t;
}

s64 sys_clone(u64 flags, u64 newsp, u64 ptid, u64 ctid, u64 tls, u64 a5)
{
	struct task *p = current_task(), *t;
	struct proc *pp = p->proc, *np;

	(void)a5;
	if ((flags & CLONE_THREAD) && !(flags & CLONE_VM))
		return -EINVAL;
	if (ntasks >= MAX_TASKS)
		return -EAGAIN;
	t = task_alloc();
	if (!t)
		return -ENOMEM;
	*t->tf = *p->tf;
	t->tf->rax = 0;
	if (newsp)
		t->tf->rsp = newsp;
	/* The parent's FPU registers are live: save them into the child. */
	fpu_save_live(t);
	t->fs_base = (flags & CLONE_SETTLS) ? tls : p->fs_base;
	t->sigmask = p->sigmask;
	t->tid = pid_alloc();
	if (flags & CLONE_THREAD) {
		np = pp;
		np->nthreads++;
	} else {
		np = proc_alloc();
		if (!np) {
			task_free(t);
			return -ENOMEM;
		}
		np->pid = t->tid;
		np->pgid = pp->pgid;
		np->nthreads = 1;
		np->parent = pp;
		np->sibling = pp->children;
		pp->children = np;
		memcpy(np->sig, pp->sig, sizeof(np->sig));
		memcpy(np->cwd, pp->cwd, sizeof(np->cwd));
		memcpy(np->comm, pp->comm, sizeof(np->comm));
		if (flags & CLONE_VM) {
			np->mm = pp->mm;
			np->mm->refs++;
		} else {
			np->mm = mm_fork(pp->mm);
		}
		np->fdt = np->mm ? fdt_fork(pp->fdt, flags & CLONE_FILES) : NULL;
		if (!np->mm || !np->fdt) {
			/* Undo: unlink and free; nothing else saw it. */
			pp->children = np->sibling;
			if (np->mm)
				mm_put(np->mm);
			kfree(np);
			task_free(t);
			return -ENOMEM;
		}
	}
	t->proc = np;
	t->mm = np->mm;
	memcpy(t->comm, p->comm, sizeof(t->comm));
	if (flags & CLONE_PARENT_SETTID)
		mm_put_u32(pp->mm, ptid, t->tid);
	if (flags & CLONE_CHILD_SETTID)
		mm_put_u32(np->mm, ctid, t->tid);
	if (flags & CLONE_CHILD_CLEARTID)
		t->clear_child_tid = ctid;
	kpmu_task_init(t, p);
	task_prepare(t);
	task_register(t);
	ntasks++;
	if (flags & CLONE_VFORK)
		t->vfork_child = true;
	sched_enqueue(t);
	/* vfork: the parent waits until the child execs or exits. */
	if (flags & CLONE_VFORK)
		while (t->vfork_child && t->state != TASK_DEAD)
			sleep_on(&np->vfork_wait);
	return t->tid;
}

s64 sys_fork(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return sys_clone(SIGCHLD, 0, 0, 0, 0, 0);
}

s64 sys_vfork(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return sys_clone(CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0, 0);
}

static void vfork_release(struct task *t)
{
	if (t->vfork_child) {
		t->vfork_child = false;
		wake_all(&t->proc->vfork_wait);
	}
}

/* Copy a NULL-terminated user string array into buf; count or -errno. */
static int exec_copy_strings(u64 uarr, char *buf, u64 *used, u64 cap,
			     const char **out, int max)
{
	int n = 0;

	if (!uarr)
		return 0;
	for (;; n++) {
		u64 up;
		s64 len;

		if (n == max)
			return -E2BIG;
		if (!user_range_ok(uarr + 8 * n, 8) ||
		    copy_from_user(&up, (void *)(uarr + 8 * n), 8))
			return -EFAULT;
		if (!up)
			return n;
		len = user_string(buf + *used, up, cap - *used);
		if (len < 0)
			return len;
		if ((u64)len == cap - *used)
			return -E2BIG;
		out[n] = buf + *used;
		*used += len + 1;
	}
}

#define EXEC_STRINGS	(PV_HUGE_SIZE / 2)

s64 sys_execve(u64 upath, u64 uargv, u64 uenvp, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();
	struct proc *p = t->proc;
	const char **argv, **envp;
	struct exec_result res;
	struct cpio_file f;
	struct mm *mm, *old;
	u64 scratch, used = 0;
	char *buf;
	int argc, envc, err;
	s64 len;

	(void)a3, (void)a4, (void)a5;
	if (p->nthreads > 1)
		return -EAGAIN;		/* de_thread is not implemented */
	scratch = huge_alloc_zero();
	if (!scratch)
		return -ENOMEM;
	buf = P2V(scratch);
	argv = (const char **)(buf + EXEC_STRINGS);
	envp = argv + EXEC_MAX_ARGS;
	len = user_string(buf, upath, 256);
	err = len < 0 ? len : len == 256 ? -ENAMETOOLONG : 0;
	used = len + 1;
	if (!err) {
		argc = exec_copy_strings(uargv, buf, &used, EXEC_STRINGS, argv,
					 EXEC_MAX_ARGS);
		envc = argc < 0 ? argc :
		       exec_copy_strings(uenvp, buf, &used, EXEC_STRINGS, envp,
					 EXEC_MAX_ARGS);
		err = argc < 0 ? argc : envc < 0 ? envc : 0;
	}
	if (!err)
		err = exec_lookup(buf, p->cwd, &f);
	mm = err ? NULL : mm_create();
	if (!err && !mm)
		err = -ENOMEM;
	if (!err)
		err = exec_load(mm, &f, argc, argv, envc, envp, &res);
	if (err) {
		if (mm)
			mm_put(mm);
		huge_free(scratch);
		return err;
	}
	/* Point of no return: the old image goes. */
	old = p->mm;
	p->mm = t->mm = mm;
	mm_activate(mm);
	mm_put(old);
	vfork_release(t);
	{
		const char *base = argv[0] ? argv[0] : buf;

		for (const char *s = base; *s; s++)
			if (*s == '/' && s[1])
				base = s + 1;
		ksnprintf(p->comm, sizeof(p->comm), "%s", base);
		memcpy(t->comm, p->comm, sizeof(t->comm));
	}
	huge_free(scratch);
	for (int i = 1; i <= NSIG; i++)
		if (p->sig[i].handler > 1)
			p->sig[i] = (struct sigaction_k){ 0, 0, 0, 0 };
	fdt_exec(p->fdt);
	t->fs_base = 0;
	wrmsr(MSR_FS_BASE, 0);
	t->clear_child_tid = 0;
	t->altstack_size = 0;
	memset(t->icache, 0, sizeof(t->icache));
	fpu_reset(t);
	exec_frame_init(t->tf, &res);
	return 0;
}

/* The VMM's status for the first program: the shell's convention. */
static int vmm_status(int wstatus)
{
	return (wstatus & 0x7f) ? 128 + (wstatus & 0x7f) : (wstatus >> 8) & 0xff;
}

/* Last thread gone: release the process's resources, tell the parent. */
static void proc_finish(struct proc *p)
{
	struct proc *c, *next;

	if (p == init_proc) {
		/* The first program is the VM's reason to exist: its mm is
		 * never freed, so its shared mappings go back now. */
		if (p->mm->nshared)
			mm_shared_writeback(p->mm, 0, ~0ull, false);
		for (;;)
			hcall(PV_HC_EXIT, vmm_status(p->exit_status), 0, 0);
	}
	itimer_proc_exit(p);
	fdt_release(p->fdt);
	p->fdt = NULL;
	/* Off this address space before its page tables are freed. */
	mm_deactivate();
	mm_put(p->mm);
	p->mm = NULL;
	for (c = p->children; c; c = next) {
		next = c->sibling;
		c->parent = init_proc;
		c->sibling = init_proc->children;
		init_proc->children = c;
		if (c->zombie)
			wake_all(&init_proc->child_wait);
	}
	p->children = NULL;
	p->zombie = true;
	if (p->parent) {
		wake_all(&p->parent->child_wait);
		for (struct task *t = task_find(p->parent->pid); t; t = NULL)
			signal_send(t, SIGCHLD, false);
	}
}

void task_exit(int wstatus)
{
	struct task *t = current_task();
	struct proc *p = t->proc;

	if (t->clear_child_tid) {
		u32 zero = 0;

		if (user_range_ok(t->clear_child_tid, 4) &&
		    !copy_to_user((void *)t->clear_child_tid, &zero, 4))
			futex_wake_addr(t->mm, t->clear_child_tid, 1);
	}
	vfork_release(t);
	kpmu_task_exit(t);
	p->utime_tsc += task_cpu_tsc(t, rdtsc());
	if (!p->exiting)
		p->exit_status = wstatus;
	if (--p->nthreads == 0)
		proc_finish(p);
	t->state = TASK_DEAD;
	t->mm = NULL;
	t->run_next = dead_list;
	dead_list = t;
	ntasks--;
	schedule();
	panic("dead task %d scheduled", t->tid);
}

/* Free stacks of tasks that died (called on another task's stack). */
void task_reap_dead(void)
{
	struct task *t = dead_list, *next;

	dead_list = NULL;
	for (; t; t = next) {
		next = t->run_next;
		if (t == current_task()) {
			t->run_next = dead_list;
			dead_list = t;
			continue;
		}
		task_free(t);
	}
}

void proc_exit_group(int wstatus)
{
	struct task *t = current_task();
	struct proc *p = t->proc;

	if (!p->exiting) {
		p->exiting = true;
		p->exit_status = wstatus;
		/* The other threads die on their way back to user mode. */
		for (struct task *o = task_find_proc_next(p, NULL); o;
		     o = task_find_proc_next(p, o))
			if (o != t)
				signal_send(o, SIGKILL, true);
	}
	task_exit(wstatus);
}

void task_kill_signal(int sig)
{
	proc_exit_group(sig & 0x7f);
}

s64 sys_exit(u64 code, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	task_exit((code & 0xff) << 8);
}

s64 sys_exit_group(u64 code, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	proc_exit_group((code & 0xff) << 8);
}

#define WNOHANG		1

s64 sys_wait4(u64 pid, u64 ustatus, u64 options, u64 urusage, u64 a4,
	      u64 a5)
{
	struct proc *p = current_task()->proc;
	int want = (int)pid;	/* pid_t: -1 arrives zero-extended */

	(void)a4, (void)a5;
	for (;;) {
		struct proc **pp, *c;
		bool found = false;

		for (pp = &p->children; (c = *pp); pp = &c->sibling) {
			int st;

			if (want > 0 && c->pid != want)
				continue;
			found = true;
			if (!c->zombie)
				continue;
			st = c->exit_status;
			if (ustatus && (!user_range_ok(ustatus, 4) ||
					copy_to_user((void *)ustatus, &st, 4)))
				return -EFAULT;
			if (urusage && user_range_ok(urusage, 144))
				memset_user((void *)urusage, 144);
			*pp = c->sibling;
			want = c->pid;
			kfree(c);
			return want;
		}
		if (!found)
			return -ECHILD;
		if (options & WNOHANG)
			return 0;
		if (sleep_on(&p->child_wait) == -EINTR)
			return -EINTR;
	}
}
