/* SPDX-License-Identifier: MIT */
/*
 * perfvisor guest kernel: common declarations.
 *
 * Every instruction here runs emulated at about 4 M instructions/s (design
 * brief, section 5), so hot paths are budgeted in instructions and heavy
 * work (copies, zeroing, page tables at boot) is done by the VMM.
 */
#ifndef KERNEL_H
#define KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boot.h"
#include "hypercall.h"
#include "layout.h"

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
typedef int64_t s64;
typedef int32_t s32;

#define P2V(pa)		((void *)((u64)(pa) + PV_KERNEL_BASE))
#define V2P(va)		((u64)(va) - PV_KERNEL_BASE)
#define PAGE_SIZE	4096ull
#define ALIGN_UP(v, a)	(((v) + (a) - 1) & ~((u64)(a) - 1))
#define ALIGN_DOWN(v, a) ((v) & ~((u64)(a) - 1))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define __always_inline	inline __attribute__((always_inline))

/* errno values as Linux returns them. */
#define EPERM 1
#define ENOENT 2
#define ESRCH 3
#define EINTR 4
#define EIO 5
#define ENOEXEC 8
#define EBADF 9
#define ECHILD 10
#define EAGAIN 11
#define ENOMEM 12
#define EACCES 13
#define EFAULT 14
#define EEXIST 17
#define ENODEV 19
#define ENOTDIR 20
#define EISDIR 21
#define EINVAL 22
#define EMFILE 24
#define ENOTTY 25
#define ESPIPE 29
#define EPIPE 32
#define ERANGE 34
#define ENAMETOOLONG 36
#define ENOSYS 38
#define ENOTEMPTY 39
#define ENODATA 61
#define ELIBBAD 80
#define EOPNOTSUPP 95
#define ETIMEDOUT 110
#define E2BIG 7

/* Saved by the entry stubs; the layout is shared with entry.S. */
struct trapframe {
	u64 r15, r14, r13, r12, r11, r10, r9, r8;
	u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
	u64 vector, error;
	u64 rip, cs, rflags, rsp, ss;
};

#define VEC_SYSCALL	0x100	/* pseudo vector for system calls */

/* hypercalls: `out` to the hypercall port (uapi/hypercall.h) */
static inline s64 hcall(u64 nr, u64 a, u64 b, u64 c)
{
	register u64 r10 __asm__("r10") = c;
	s64 ret;

	__asm__ volatile("outb %%al, %%dx"
			 : "=a"(ret)
			 : "0"(nr), "d"((u64)PV_HC_PORT), "D"(a), "S"(b),
			   "r"(r10)
			 : "memory");
	return ret;
}

/* kstat.c */
struct pv_kstat;
extern struct pv_kstat kstat;		/* uapi/kstat.h */
void kstat_init(const struct pv_boot_params *bp);
/* Work at every return to user mode while its bit is set, each sending
 * every return through return_to_user_slow() (rtu_global bit 1). */
#define RETURN_HOOK_KACCT	1	/* kstat.c: note the return's RIP */
#define RETURN_HOOK_TRIP	2	/* kpmu_user_return(): the trip's stamp */
#define RETURN_HOOK_WOKEN	4	/* pmu_guest.c: a CPU halted */
extern u8 return_hooks;			/* sched.c */

/* console.c */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
int ksnprintf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct pv_boot_params;
void kernel_selftest(struct pv_boot_params *bp);
void kernel_ap_selftest(u64 cpu_id);
extern bool kverbose;
extern bool ktrace;		/* -vv: log every system call */
extern bool syscall_slow;	/* syscall.c: entry.S's fast dispatch off */
/* syscall.c: work at the C dispatcher's entry while its bit is set */
#define SYSCALL_HOOK_TRIP	1	/* pmu_guest.c: measure the trip */
#define SYSCALL_HOOK_REFILL	2	/* put the fast dispatch back */
#define SYSCALL_HOOK_WOKEN	4	/* pmu_guest.c: a trip after a halt */
extern u8 syscall_hooks;
extern bool kcopy_native;	/* standard KVM: copy in the kernel (lib.c) */

/* lib.c */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* user.S: user memory access that returns -EFAULT instead of faulting */
long copy_from_user(void *dst, const void *usrc, size_t n);
long copy_to_user(void *udst, const void *src, size_t n);
long strncpy_from_user(char *dst, const char *usrc, size_t n);
long memset_user(void *udst, size_t n);	/* zero: 0 or -EFAULT */
/* A string from user space only: its length, n if it has no NUL in n. */
s64 user_string(char *dst, u64 up, u64 n);
bool trap_fixup(struct trapframe *tf);

static inline bool user_range_ok(u64 va, u64 len)
{
	return va + len >= va && va + len <= PV_USER_TOP;
}

/* pmem.c: physical pages */
void pmem_init(struct pv_boot_params *bp);
u64 page_alloc(void);			/* contents undefined; 0 when out */
u64 page_alloc_zero(void);
void page_free(u64 pa);
u64 huge_alloc_zero(void);		/* 2 MiB aligned, zeroed */
void huge_free(u64 pa);
void page_free_chain(u64 head, u64 tail, u64 n);
void huge_free_chain(u64 head, u64 tail, u64 n);
u64 huge_alloc_run(u64 n, u64 *pa);	/* fresh 2 MiB pages, in a row */
u64 pmem_free_pages(void);
void pmem_refused(void);		/* an allocation failed for lack of RAM */

#include "cpio_reader.h"

#endif
