// SPDX-License-Identifier: MIT
/*
 * System calls: Linux x86-64 numbers and semantics.  One table, indexed by
 * number; unknown numbers return -ENOSYS (named once each under -v).
 */
#include "kernel.h"
#include "kstat.h"
#include "mm.h"
#include "msr.h"
#include "pmu_guest.h"
#include "perf_event.h"
#include "task.h"
#include "vfs.h"

typedef s64 (*sys_fn)(u64, u64, u64, u64, u64, u64);

#define NR_MAX			335

#include "random.h"
#include "syscalls.h"
#include "syscall_names.h"	/* generated: common/gen_syscall_names.sh */

#define MAP_FIXED		0x10
#define MAP_ANONYMOUS		0x20
#define TIOCGWINSZ		0x5413
#define ARCH_SET_FS		0x1002
#define ARCH_GET_FS		0x1003

static s64 sys_brk(u64 brk, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return mm_brk(current_task()->proc->mm, brk);
}

/*
 * MAP_SHARED of a file in guest memory: its data in place, one memory
 * with every other such mapping and with read() and write().  Writable,
 * it needs the file open for writing too, as on Linux.
 */
static s64 mmap_file_inplace(struct mm *mm, struct file *f, u64 addr,
			     u64 len, u64 prot, u64 flags, u64 off)
{
	u32 mode = f->flags & VO_ACCMODE;
	int err;

	if (mode == VO_WRONLY || ((prot & PROT_WRITE) && mode != VO_RDWR))
		return -EACCES;
	if (off & (PAGE_SIZE - 1))
		return -EINVAL;
	err = vfs_share_data(f->ino);
	if (err)
		return err;
	return mm_mmap_shared_file(mm, addr, len, prot, flags & MAP_FIXED,
				   f->ino, off);
}

/*
 * A file mapping: read-only, the file's pinned bytes in place; writable,
 * anonymous memory filled from the file, whose stores a MAP_SHARED one of
 * a host file writes back to it (mm_shared.c), so it needs the file open
 * for writing too, as on Linux.
 */
static s64 mmap_file(u64 addr, u64 len, u64 prot, u64 flags, u64 fd, u64 off)
{
	struct mm *mm = current_task()->proc->mm;
	struct file *f = fd_file(current_task()->proc->fdt, fd);
	bool shared = (flags & MAP_SHARED) && (prot & PROT_WRITE);
	u64 pa, flen;
	s64 va;
	int err;

	if (f && (flags & MAP_SHARED) && f->ino->kind == VN_REG && !f->ino->hh)
		return mmap_file_inplace(mm, f, addr, len, prot, flags, off);
	err = vfs_fd_mmap_source(fd, off, &pa, &flen);
	if (err)
		return err;
	if (shared && (f->flags & VO_ACCMODE) != VO_RDWR)
		return -EACCES;
	if (!(prot & PROT_WRITE)) {
		va = mm_mmap_borrow(mm, addr, len, prot, flags & MAP_FIXED,
				    pa, flen, 0);
	} else {
		va = mm_mmap_anon(mm, addr, len, prot, flags & MAP_FIXED);
		if (va >= 0 && flen)
			hcall(PV_HC_MEMCPY, va, (u64)P2V(pa),
			      flen < len ? flen : len);
	}
	/* profilers and PAPI find libraries by name in /proc/PID/maps */
	if (va >= 0 && !mm_label_file(mm, (u64)va, len, f->ino, off, shared) &&
	    shared) {
		mm_munmap(mm, (u64)va, len);	/* its stores would be lost */
		return -ENOMEM;
	}
	return va;
}

static __attribute__((noinline)) s64 sys_mmap_fd(u64 addr, u64 len, u64 prot,
						 u64 flags, u64 fd, u64 off)
{
	struct file *f = fd_file(current_task()->proc->fdt, fd);

	if (f && f->ino->kind == VN_PERF)
		return perf_event_mmap(f->ino->perf, len, prot, flags, off);
	return mmap_file(addr, len, prot, flags, fd, off);
}

/* Anonymous memory is a tail call: malloc's hot path saves no registers. */
static s64 sys_mmap(u64 addr, u64 len, u64 prot, u64 flags, u64 fd, u64 off)
{
	if (prot & ~7ull)
		return -EINVAL;
	if (!(flags & MAP_ANONYMOUS))
		return sys_mmap_fd(addr, len, prot, flags, fd, off);
	if (flags & MAP_SHARED)
		return mm_mmap_shm(current_task()->proc->mm, addr, len, prot,
				   flags & MAP_FIXED);
	return mm_mmap_anon(current_task()->proc->mm, addr, len, prot,
			    flags & MAP_FIXED);
}

static s64 sys_munmap(u64 addr, u64 len, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a2, (void)a3, (void)a4, (void)a5;
	return mm_munmap(current_task()->proc->mm, addr, len);
}

/* msync: MS_ASYNC 1, MS_INVALIDATE 2, MS_SYNC 4, as Linux checks them. */
static s64 sys_msync(u64 addr, u64 len, u64 flags, u64 a3, u64 a4, u64 a5)
{
	struct mm *mm = current_task()->proc->mm;
	u64 end = addr + ((len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1));

	(void)a3, (void)a4, (void)a5;
	if ((addr & (PAGE_SIZE - 1)) || (flags & ~7ull) ||
	    (flags & 5) == 5 || end < addr)
		return -EINVAL;
	for (u64 va = addr; va < end;) {
		struct vma *v = vma_find(mm, va);

		if (!v)
			return -ENOMEM;
		va = v->end;
	}
	return mm_shared_writeback(mm, addr, end, flags & 4) ? -EIO : 0;
}

static s64 sys_mprotect(u64 addr, u64 len, u64 prot, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	if (prot & ~7ull)
		return -EINVAL;
	return mm_mprotect(current_task()->proc->mm, addr, len, prot);
}

static s64 sys_madvise(u64 addr, u64 len, u64 advice, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	return mm_madvise(current_task()->proc->mm, addr, len, advice);
}

static s64 sys_mremap(u64 old, u64 old_len, u64 new_len, u64 flags, u64 a4,
		      u64 a5)
{
	(void)a4, (void)a5;
	return mm_mremap(current_task()->proc->mm, old, old_len, new_len,
			 flags);
}

static s64 sys_zero(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return 0;
}




static s64 sys_getpid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return current_task()->proc->pid;
}

static s64 sys_getppid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct proc *pp = current_task()->proc->parent;

	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return pp ? pp->pid : 0;
}

static s64 sys_getpgrp(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return current_task()->proc->pgid;
}

static s64 sys_gettid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return current_task()->tid;
}

static s64 sys_set_tid_address(u64 p, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();

	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	t->clear_child_tid = p;
	return t->tid;
}

static s64 sys_arch_prctl(u64 code, u64 addr, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();

	(void)a2, (void)a3, (void)a4, (void)a5;
	switch (code) {
	case ARCH_SET_FS:
		if (addr >= PV_USER_TOP)
			return -EPERM;
		t->fs_base = addr;
		wrmsr(MSR_FS_BASE, addr);
		return 0;
	case ARCH_GET_FS:
		if (!user_range_ok(addr, 8) ||
		    copy_to_user((void *)addr, &t->fs_base, 8))
			return -EFAULT;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * prctl: the thread's name (what `vmm stat --per-thread` prints as comm);
 * every other option is EINVAL, Linux's answer to an option it lacks.
 */
static s64 sys_prctl(u64 opt, u64 arg, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *t = current_task();
	char name[16] = { 0 };

	(void)a2, (void)a3, (void)a4, (void)a5;
	switch (opt) {
	case 15:	/* PR_SET_NAME: up to 15 bytes, truncated silently */
		for (int i = 0; i < 15; i++) {
			if (!user_range_ok(arg + i, 1) ||
			    copy_from_user(&name[i], (void *)(arg + i), 1))
				return -EFAULT;
			if (!name[i])
				break;
		}
		name[15] = 0;
		memcpy(t->comm, name, sizeof(name));
		return 0;
	case 16:	/* PR_GET_NAME */
		if (!user_range_ok(arg, 16) ||
		    copy_to_user((void *)arg, t->comm, 16))
			return -EFAULT;
		return 0;
	default:
		return -EINVAL;
	}
}

static s64 sys_uname(u64 buf, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	static const char fields[6][65] = {
		"Linux", "perfvisor", "6.1.0-perfvisor", "#1 SMP", "x86_64",
		"(none)"
	};

	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	if (!user_range_ok(buf, sizeof(fields)) ||
	    copy_to_user((void *)buf, fields, sizeof(fields)))
		return -EFAULT;
	return 0;
}

/* GRND_NONBLOCK, GRND_RANDOM, GRND_INSECURE: the generator is seeded at
 * boot, so none of them changes anything.  Linux's cap per call. */
static s64 sys_getrandom(u64 buf, u64 len, u64 flags, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	if (flags & ~7ull)
		return -EINVAL;
	if (len > 33554431)
		len = 33554431;
	if (!user_range_ok(buf, len))
		return -EFAULT;
	return random_to_user((void *)buf, len);
}

static s64 sys_prlimit64(u64 pid, u64 res, u64 nlim, u64 olim, u64 a4, u64 a5)
{
	u64 inf[2] = { ~0ull, ~0ull };

	(void)pid, (void)nlim, (void)a4, (void)a5;
	if (res > 15)
		return -EINVAL;
	if (res == 3)		/* RLIMIT_STACK: the 8 MiB we map */
		inf[0] = inf[1] = 8ull << 20;
	if (res == 7)		/* RLIMIT_NOFILE: the descriptor table's */
		inf[0] = inf[1] = VFS_NFD;
	if (olim && (!user_range_ok(olim, 16) ||
		     copy_to_user((void *)olim, inf, 16)))
		return -EFAULT;
	return 0;
}

/*
 * The get and list halves of the xattr calls: EOPNOTSUPP, Linux's answer
 * on a filesystem without extended attributes, which coreutils' ls -l
 * (ACLs, SELinux labels) takes as "none"; ENOSYS made it print an error.
 */
static s64 sys_no_xattr(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return -EOPNOTSUPP;
}

/*
 * Comments here feed docs/compatibility.md (scripts/compat-table.sh):
 * "partial: ..." says which flags or parts are missing, "refused: ERRNO"
 * an entry that only answers as Linux does without the feature.  A number
 * not here is ENOSYS.
 */
/* entry.S calls through this table itself, and so needs its symbol. */
const sys_fn sys_table[NR_MAX] = {
	[0] = sys_read,
	[1] = sys_write,
	[2] = sys_open,
	[3] = sys_close,
	[4] = sys_stat,
	[5] = sys_fstat,
	[6] = sys_lstat,
	[7] = sys_poll,
	[8] = sys_lseek,
	[9] = sys_mmap,		/* partial: MAP_SHARED maps of host files (--dir) are each process's own, written back to the file at msync, munmap, exec and exit; of the guest's own files and anonymous memory, shared */
	[10] = sys_mprotect,
	[11] = sys_munmap,
	[12] = sys_brk,
	[13] = sys_rt_sigaction,
	[14] = sys_rt_sigprocmask,
	[15] = sys_rt_sigreturn,
	[16] = sys_ioctl,		/* partial: FIO*, tty TCGETS TCSETS* TIOCGWINSZ TIOC[GS]PGRP */
	[17] = sys_pread64,
	[18] = sys_pwrite64,
	[19] = sys_readv,
	[20] = sys_writev,
	[21] = sys_access,
	[22] = sys_pipe,
	[24] = sys_sched_yield,
	[25] = sys_mremap,		/* partial: MAYMOVE; FIXED, DONTUNMAP EINVAL */
	[26] = sys_msync,		/* partial: writes back; MS_INVALIDATE does nothing */
	[28] = sys_madvise,	/* partial: hints ignored, MADV_REMOVE EINVAL */
	[32] = sys_dup,
	[33] = sys_dup2,
	[35] = sys_nanosleep,
	[36] = sys_getitimer,
	[37] = sys_alarm,
	[38] = sys_setitimer,		/* partial: ITIMER_VIRTUAL counts kernel time too; fires within a 10 ms tick */
	[39] = sys_getpid,
	[40] = sys_sendfile,		/* partial: in_fd a regular file */
	[56] = sys_clone,		/* partial: thread and fork flags; CLONE_NEW* etc. ignored */
	[57] = sys_fork,
	[58] = sys_vfork,
	[59] = sys_execve,
	[60] = sys_exit,
	[61] = sys_wait4,
	[62] = sys_kill,
	[63] = sys_uname,
	[72] = sys_fcntl,		/* partial: record locks always granted, F_GETLK reports none */
	[74] = sys_fsync,
	[75] = sys_fsync,
	[76] = sys_truncate,
	[77] = sys_ftruncate,
	[79] = sys_getcwd,
	[80] = sys_chdir,
	[81] = sys_fchdir,
	[82] = sys_rename,
	[83] = sys_mkdir,
	[84] = sys_rmdir,
	[85] = sys_creat,
	[86] = sys_link,		/* partial: EPERM in a --dir share */
	[87] = sys_unlink,
	[88] = sys_symlink,		/* partial: EPERM in a --dir share */
	[89] = sys_readlink,
	[90] = sys_chmod,
	[91] = sys_fchmod,
	[92] = sys_chown,		/* partial: ownership not kept */
	[93] = sys_fchown,		/* partial: ownership not kept */
	[94] = sys_lchown,		/* partial: ownership not kept */
	[95] = sys_umask,
	[96] = sys_gettimeofday,
	[99] = sys_sysinfo,		/* partial: no loads, swap or process count */
	[102] = sys_zero,		/* getuid: everyone is root */
	[104] = sys_zero,		/* getgid */
	[107] = sys_zero,		/* geteuid */
	[108] = sys_zero,		/* getegid */
	[109] = sys_zero,		/* setpgid, partial: no-op */
	[110] = sys_getppid,
	[111] = sys_getpgrp,
	[112] = sys_getpid,		/* setsid, partial: returns the pid, no sessions */
	[121] = sys_getpgrp,		/* getpgid */
	[130] = sys_rt_sigsuspend,
	[131] = sys_sigaltstack,
	[132] = sys_utime,		/* partial: the modification time only */
	[157] = sys_prctl,		/* partial: PR_SET_NAME PR_GET_NAME, else EINVAL */
	[158] = sys_arch_prctl,
	[186] = sys_gettid,
	[191] = sys_no_xattr,	/* getxattr, refused: EOPNOTSUPP, no extended attributes */
	[192] = sys_no_xattr,	/* lgetxattr, refused: EOPNOTSUPP, no extended attributes */
	[193] = sys_no_xattr,	/* fgetxattr, refused: EOPNOTSUPP, no extended attributes */
	[194] = sys_no_xattr,	/* listxattr, refused: EOPNOTSUPP, no extended attributes */
	[195] = sys_no_xattr,	/* llistxattr, refused: EOPNOTSUPP, no extended attributes */
	[196] = sys_no_xattr,	/* flistxattr, refused: EOPNOTSUPP, no extended attributes */
	[200] = sys_tkill,
	[201] = sys_time,
	[202] = sys_futex,		/* partial: WAIT WAKE *_BITSET REQUEUE CMP_REQUEUE WAKE_OP, else ENOSYS */
	[203] = sys_zero,		/* sched_setaffinity, partial: accepted, ignored */
	[204] = sys_sched_getaffinity,
	[217] = sys_getdents64,
	[218] = sys_set_tid_address,
	[221] = sys_zero,		/* fadvise64, partial: advice ignored */
	[228] = sys_clock_gettime,
	[229] = sys_clock_getres,
	[230] = sys_clock_nanosleep,
	[231] = sys_exit_group,
	[234] = sys_tgkill,
	[235] = sys_utimes,		/* partial: the modification time only */
	[257] = sys_openat,
	[258] = sys_mkdirat,
	[260] = sys_fchownat,		/* partial: ownership not kept */
	[262] = sys_newfstatat,
	[263] = sys_unlinkat,
	[264] = sys_renameat,
	[265] = sys_linkat,		/* partial: EPERM in a --dir share */
	[266] = sys_symlinkat,		/* partial: EPERM in a --dir share */
	[267] = sys_readlinkat,
	[268] = sys_fchmodat,
	[269] = sys_faccessat,
	[271] = sys_ppoll,
	[273] = sys_zero,		/* set_robust_list, partial: list not walked at exit */
	[280] = sys_utimensat,		/* partial: the modification time only */
	[292] = sys_dup3,
	[293] = sys_pipe2,
	[298] = sys_perf_event_open,
	[302] = sys_prlimit64,		/* partial: reads limits (stack 8 MiB, 1024 files, others unlimited), sets nothing */
	[309] = sys_getcpu,
	[316] = sys_renameat2,
	[318] = sys_getrandom,
	[332] = sys_statx,		/* partial: the basic stats, no birth time */
};

/*
 * `vmm run -v`: one line per system call number the kernel lacks, naming
 * it, the first time a program makes it (libcs probe rseq and clone3 in
 * every process; a line each time would bury the rest).
 */
static void log_unknown_syscall(u64 nr)
{
	static u64 seen[(SYSCALL_NAMES_N + 63) / 64];
	const char *name = syscall_name(nr);

	if (nr < SYSCALL_NAMES_N) {
		if (seen[nr / 64] & (1ull << (nr % 64)))
			return;
		seen[nr / 64] |= 1ull << (nr % 64);
	}
	kprintf("%s[%d]: unknown system call %lu (%s): ENOSYS",
		current_task()->comm, current_task()->tid, nr,
		name ? name : "?");
}

/* User-settable RFLAGS bits: never IOPL, NT, VM, VIF/VIP. */
#define RFLAGS_USER	0x40dd5ull	/* CF PF AF ZF SF TF DF OF AC */
#define RFLAGS_IF	0x200ull

/* entry.S serves getpid and gettid itself, and tests for signals. */
_Static_assert(__builtin_offsetof(struct task, proc) == TASK_PROC, "asm");
_Static_assert(__builtin_offsetof(struct task, tid) == TASK_TID, "asm");
_Static_assert(__builtin_offsetof(struct proc, pid) == PROC_PID, "asm");
_Static_assert(__builtin_offsetof(struct task, sigmask) == TASK_SIGMASK &&
	       __builtin_offsetof(struct task, sigpending) == TASK_SIGPENDING &&
	       __builtin_offsetof(struct proc, sigpending) == PROC_SIGPENDING &&
	       __builtin_offsetof(struct cpu, rtu_word) == CPU_RTU, "asm");
_Static_assert(RFLAGS_USER == RFLAGS_USER_ASM && RFLAGS_TF_ASM == 0x100 &&
	       RFLAGS_RET_ASM == (RFLAGS_IF | 2), "asm");

_Static_assert(NR_MAX == NR_MAX_ASM && sizeof(sys_fn) == 8 &&
	       __builtin_offsetof(struct trapframe, rax) == TF_RAX &&
	       __builtin_offsetof(struct trapframe, rflags) == TF_RFLAGS, "asm");

/* Boot: the paths entry.S's fast dispatch leaves out are in use. */
bool syscall_slow;

/*
 * entry.S's jump by number for user code not single-stepped: the leaf
 * paths for getpid and gettid unless system calls are traced, the fast
 * dispatch for a number with a handler unless syscall_slow, the C
 * dispatcher otherwise (and ENOSYS).  Filled at boot, after syscall_slow
 * is known and before any user code runs, so entry.S tests nothing else.
 */
extern char syscall_fast[], syscall_slow_entry[], syscall_leaf_getpid[],
	syscall_leaf_gettid[], syscall_leaf_pread[], syscall_leaf_pwrite[];
u64 syscall_entries[NR_MAX];

/* Where one number goes on this boot (syscall_init()'s loop is the
 * common case of it, unrolled for the boot's sake). */
static u64 syscall_entry_of(u64 nr)
{
	if (!ktrace && nr == 39)
		return (u64)syscall_leaf_getpid;
	if (!ktrace && nr == 186)
		return (u64)syscall_leaf_gettid;
	/* In-memory files' pread64/pwrite64 (file_leaf.c): where the fast
	 * path is, as they fall back to it. */
	if (!syscall_slow && nr == 17)
		return (u64)syscall_leaf_pread;
	if (!syscall_slow && nr == 18)
		return (u64)syscall_leaf_pwrite;
	return (u64)(sys_table[nr] && !syscall_slow ? syscall_fast :
		     syscall_slow_entry);
}

void syscall_init(void)
{
	for (int nr = 0; nr < NR_MAX; nr++)
		syscall_entries[nr] = (u64)(sys_table[nr] && !syscall_slow ?
					    syscall_fast : syscall_slow_entry);
	syscall_entries[17] = syscall_entry_of(17);
	syscall_entries[18] = syscall_entry_of(18);
	syscall_entries[39] = syscall_entry_of(39);
	syscall_entries[186] = syscall_entry_of(186);
}

/*
 * Work at the C dispatcher's entry (syscall_hooks): the start-up trip
 * measurement's stamp, and, once it ends, each number's entry put back
 * to the fast dispatch at its first call, instead of syscall_init()'s
 * 335 (some 2,000 emulated instructions on kvm_pvm).
 */
u8 syscall_hooks;

static __attribute__((noinline)) void syscall_hook(struct cpu *c, u64 nr)
{
	if (syscall_hooks & SYSCALL_HOOK_TRIP)
		kpmu_trip_entry(c);
	if ((syscall_hooks & SYSCALL_HOOK_REFILL) && !syscall_slow &&
	    nr < NR_MAX)
		syscall_entries[nr] = syscall_entry_of(nr);
	if (syscall_hooks & SYSCALL_HOOK_WOKEN)
		kpmu_woken_entry(c);
}

/*
 * The whole system-call path, for whatever entry.S's fast dispatch does
 * not take: unknown numbers, stepped user code, tracing, TLB shootdowns.
 * Entered with tf->rip = return RIP (RCX), tf->r11 = RFLAGS.
 */
__attribute__((used)) void syscall_dispatch(struct trapframe *tf)
{
	struct task *t = current_task();
	u64 nr = tf->rax;

	/* Counted by number, 511 for any number from 511 up. */
	__atomic_add_fetch(&kstat.syscall[nr < PV_KSTAT_SYSCALLS ? nr :
					  PV_KSTAT_SYSCALLS - 1], 1,
			   __ATOMIC_RELAXED);
	bkl_lock();
	tf->rflags = (tf->r11 & RFLAGS_USER) | RFLAGS_IF | 2;
	kpmu_user_entry(t->cpu->vpage, tf, 2);	/* `syscall` is 2 bytes */
	kpmu_count_trap_insn(t->cpu->vpage);
	if (unlikely(syscall_hooks))
		syscall_hook(t->cpu, nr);
	if (likely(nr < NR_MAX && sys_table[nr])) {
		tf->rax = sys_table[nr](tf->rdi, tf->rsi, tf->rdx, tf->r10,
					tf->r8, tf->r9);
		if (unlikely(ktrace))
			kprintf("%s[%d]: syscall %lu (%lx, %lx, %lx) = %ld",
				current_task()->comm, current_task()->tid, nr,
				tf->rdi, tf->rsi, tf->rdx, (s64)tf->rax);
	} else {
		if (unlikely(kverbose))
			log_unknown_syscall(nr);
		tf->rax = -ENOSYS;
	}
	return_to_user(tf);
}

/* int $0x80: the i386 ABI (number in eax, arguments in ebx, ecx, edx...). */
void syscall_i386(struct trapframe *tf)
{
	static const u16 map[256] = {
		[1] = 60 + 1, [3] = 0 + 1, [4] = 1 + 1, [20] = 39 + 1,
		[224] = 186 + 1, [252] = 231 + 1,
	};
	u32 nr = (u32)tf->rax;

	if (nr >= 256 || !map[nr]) {
		tf->rax = -ENOSYS;
		return;
	}
	tf->rax = (u32)sys_table[map[nr] - 1]((u32)tf->rbx, (u32)tf->rcx,
					      (u32)tf->rdx, (u32)tf->rsi,
					      (u32)tf->rdi, (u32)tf->rbp);
}
