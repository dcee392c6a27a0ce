// SPDX-License-Identifier: MIT
/*
 * System calls: Linux x86-64 numbers and semantics.  One table, indexed by
 * number; unknown numbers return -ENOSYS (logged with --verbose).
 */
#include "kernel.h"
#include "mm.h"
#include "task.h"

typedef s64 (*sys_fn)(u64, u64, u64, u64, u64, u64);

extern struct pv_boot_params *boot_params;

#define NR_read			0
#define NR_write		1
#define NR_mmap			9
#define NR_mprotect		10
#define NR_munmap		11
#define NR_brk			12
#define NR_rt_sigaction		13
#define NR_rt_sigprocmask	14
#define NR_ioctl		16
#define NR_readv		19
#define NR_writev		20
#define NR_sched_yield		24
#define NR_madvise		28
#define NR_getpid		39
#define NR_exit			60
#define NR_uname		63
#define NR_getuid		102
#define NR_getgid		104
#define NR_geteuid		107
#define NR_getegid		108
#define NR_getppid		110
#define NR_arch_prctl		158
#define NR_gettid		186
#define NR_set_tid_address	218
#define NR_clock_gettime	228
#define NR_exit_group		231
#define NR_set_robust_list	273
#define NR_prlimit64		302
#define NR_getrandom		318
#define NR_MAX			335

#define MAP_FIXED		0x10
#define MAP_ANONYMOUS		0x20
#define TIOCGWINSZ		0x5413
#define ARCH_SET_FS		0x1002
#define ARCH_GET_FS		0x1003

static s64 sys_write(u64 fd, u64 buf, u64 len, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	if (!user_range_ok(buf, len))
		return -EFAULT;
	return hcall(PV_HC_WRITE, fd, buf, len);
}

static s64 sys_read(u64 fd, u64 buf, u64 len, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	if (!user_range_ok(buf, len))
		return -EFAULT;
	return hcall(PV_HC_READ, fd, buf, len);
}

struct iovec {
	u64 base, len;
};

static s64 sys_rwv(u64 fd, u64 uiov, u64 cnt, bool wr)
{
	struct iovec iov[16];
	s64 total = 0;

	if (cnt > 1024)
		return -EINVAL;
	while (cnt) {
		u64 n = cnt < 16 ? cnt : 16;

		if (!user_range_ok(uiov, n * sizeof(iov[0])) ||
		    copy_from_user(iov, (void *)uiov, n * sizeof(iov[0])))
			return -EFAULT;
		for (u64 i = 0; i < n; i++) {
			s64 r;

			if (!iov[i].len)
				continue;
			r = (wr ? sys_write : sys_read)(fd, iov[i].base,
							iov[i].len, 0, 0, 0);
			if (r < 0)
				return total ? total : r;
			total += r;
			if ((u64)r < iov[i].len)
				return total;
		}
		uiov += n * sizeof(iov[0]);
		cnt -= n;
	}
	return total;
}

static s64 sys_writev(u64 fd, u64 iov, u64 cnt, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	return sys_rwv(fd, iov, cnt, true);
}

static s64 sys_readv(u64 fd, u64 iov, u64 cnt, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	return sys_rwv(fd, iov, cnt, false);
}

static s64 sys_exit_group(u64 status, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	task_exit_group(status & 0xff);
}

static s64 sys_brk(u64 brk, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return mm_brk(current_task()->mm, brk);
}

static s64 sys_mmap(u64 addr, u64 len, u64 prot, u64 flags, u64 fd, u64 off)
{
	(void)fd, (void)off;
	if (!(flags & MAP_ANONYMOUS))
		return -ENODEV;
	if (prot & ~7ull)
		return -EINVAL;
	return mm_mmap_anon(current_task()->mm, addr, len, prot,
			    flags & MAP_FIXED);
}

static s64 sys_munmap(u64 addr, u64 len, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a2, (void)a3, (void)a4, (void)a5;
	return mm_munmap(current_task()->mm, addr, len);
}

static s64 sys_mprotect(u64 addr, u64 len, u64 prot, u64 a3, u64 a4, u64 a5)
{
	(void)a3, (void)a4, (void)a5;
	if (prot & ~7ull)
		return -EINVAL;
	return mm_mprotect(current_task()->mm, addr, len, prot);
}

static s64 sys_zero(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return 0;
}

static s64 sys_rt_sigaction(u64 sig, u64 act, u64 oact, u64 size, u64 a4,
			    u64 a5)
{
	u8 zero[32] = { 0 };

	(void)act, (void)a4, (void)a5;
	if (sig == 0 || sig > 64 || size != 8)
		return -EINVAL;
	if (oact && (!user_range_ok(oact, sizeof(zero)) ||
		     copy_to_user((void *)oact, zero, sizeof(zero))))
		return -EFAULT;
	return 0;
}

static s64 sys_rt_sigprocmask(u64 how, u64 set, u64 oset, u64 size, u64 a4,
			      u64 a5)
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
	return 0;
}

static s64 sys_ioctl(u64 fd, u64 req, u64 arg, u64 a3, u64 a4, u64 a5)
{
	u16 ws[4] = { 24, 80, 0, 0 };

	(void)a3, (void)a4, (void)a5;
	if (fd > 2)
		return -EBADF;
	/* A terminal only when the VMM's own descriptor is one. */
	if (req != TIOCGWINSZ || !(boot_params->flags & PV_BOOT_TTY(fd)))
		return -ENOTTY;
	if (!user_range_ok(arg, sizeof(ws)) ||
	    copy_to_user((void *)arg, ws, sizeof(ws)))
		return -EFAULT;
	return 0;
}

static s64 sys_getpid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return current_task()->pid;
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
		__asm__ volatile("wrmsr" : : "c"(0xc0000100), "a"((u32)addr),
				 "d"((u32)(addr >> 32)));
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

/* TSC-based clocks: guest TSC == host TSC, constant rate (brief, sec. 5). */
static s64 sys_clock_gettime(u64 clk, u64 ts, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 lo, hi, tsc, ns, v[2];

	(void)a2, (void)a3, (void)a4, (void)a5;
	if (clk > 11)
		return -EINVAL;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	tsc = hi << 32 | lo;
	/* Split so nothing overflows 64 bits (no 128-bit division here). */
	ns = tsc / boot_params->tsc_khz * 1000000 +
	     tsc % boot_params->tsc_khz * 1000000 / boot_params->tsc_khz;
	v[0] = ns / 1000000000;
	v[1] = ns % 1000000000;
	if (!user_range_ok(ts, 16) || copy_to_user((void *)ts, v, 16))
		return -EFAULT;
	return 0;
}

static s64 sys_getrandom(u64 buf, u64 len, u64 flags, u64 a3, u64 a4, u64 a5)
{
	u64 x, lo, hi;
	u8 b;

	(void)flags, (void)a3, (void)a4, (void)a5;
	if (!user_range_ok(buf, len))
		return -EFAULT;
	if (len > 256)
		len = 256;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	x = (hi << 32 | lo) | 1;
	for (u64 i = 0; i < len; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b = x >> 24;
		if (copy_to_user((u8 *)buf + i, &b, 1))
			return -EFAULT;
	}
	return len;
}

static s64 sys_prlimit64(u64 pid, u64 res, u64 nlim, u64 olim, u64 a4, u64 a5)
{
	u64 inf[2] = { ~0ull, ~0ull };

	(void)pid, (void)nlim, (void)a4, (void)a5;
	if (res > 15)
		return -EINVAL;
	if (res == 3)		/* RLIMIT_STACK: the 8 MiB we map */
		inf[0] = inf[1] = 8ull << 20;
	if (olim && (!user_range_ok(olim, 16) ||
		     copy_to_user((void *)olim, inf, 16)))
		return -EFAULT;
	return 0;
}

static const sys_fn sys_table[NR_MAX] = {
	[NR_read] = sys_read,
	[NR_write] = sys_write,
	[NR_mmap] = sys_mmap,
	[NR_mprotect] = sys_mprotect,
	[NR_munmap] = sys_munmap,
	[NR_brk] = sys_brk,
	[NR_rt_sigaction] = sys_rt_sigaction,
	[NR_rt_sigprocmask] = sys_rt_sigprocmask,
	[NR_ioctl] = sys_ioctl,
	[NR_readv] = sys_readv,
	[NR_writev] = sys_writev,
	[NR_sched_yield] = sys_zero,
	[NR_madvise] = sys_zero,
	[NR_getpid] = sys_getpid,
	[NR_exit] = sys_exit_group,
	[NR_uname] = sys_uname,
	[NR_getuid] = sys_zero,
	[NR_getgid] = sys_zero,
	[NR_geteuid] = sys_zero,
	[NR_getegid] = sys_zero,
	[NR_getppid] = sys_zero,
	[NR_arch_prctl] = sys_arch_prctl,
	[NR_gettid] = sys_gettid,
	[NR_set_tid_address] = sys_set_tid_address,
	[NR_clock_gettime] = sys_clock_gettime,
	[NR_exit_group] = sys_exit_group,
	[NR_set_robust_list] = sys_zero,
	[NR_prlimit64] = sys_prlimit64,
	[NR_getrandom] = sys_getrandom,
};

/* User-settable RFLAGS bits: never IOPL, NT, VM, VIF/VIP. */
#define RFLAGS_USER	0x40dd5ull	/* CF PF AF ZF SF TF DF OF AC */
#define RFLAGS_IF	0x200ull

/* Entered from entry.S with tf->rip = return RIP (RCX), tf->r11 = RFLAGS. */
void syscall_dispatch(struct trapframe *tf)
{
	u64 nr = tf->rax;

	tf->rflags = (tf->r11 & RFLAGS_USER) | RFLAGS_IF | 2;
	if (likely(nr < NR_MAX && sys_table[nr])) {
		tf->rax = sys_table[nr](tf->rdi, tf->rsi, tf->rdx, tf->r10,
					tf->r8, tf->r9);
		return;
	}
	if (kverbose)
		kprintf("%s[%d]: unknown system call %lu", current_task()->comm,
			current_task()->tid, nr);
	tf->rax = -ENOSYS;
}

/* int $0x80: the i386 ABI (number in eax, arguments in ebx, ecx, edx...). */
void syscall_i386(struct trapframe *tf)
{
	static const u16 map[256] = {
		[1] = NR_exit + 1, [3] = NR_read + 1, [4] = NR_write + 1,
		[20] = NR_getpid + 1, [224] = NR_gettid + 1,
		[252] = NR_exit_group + 1,
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
