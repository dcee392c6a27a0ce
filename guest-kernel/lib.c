// SPDX-License-Identifier: MIT
/*
 * The C library functions the compiler may call.  Under kvm_pvm every
 * kernel instruction is emulated and `rep movsb` pays for every byte
 * (docs/design.md section 1), so
 * anything from 64 bytes on is one hypercall (the VMM copies natively) and
 * smaller sizes are plain loops.  On a standard KVM the kernel runs
 * natively, where `rep movsb`/`rep stosb` beat any VM exit (kcopy_native,
 * set at boot from the host kind).
 */
#include "kernel.h"

#define HC_COPY_MIN	64

bool kcopy_native;

void *memset(void *d, int c, size_t n)
{
	u8 *p = d;

	if (kcopy_native) {
		__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(c)
				 : "memory");
		return d;
	}
	if (n >= HC_COPY_MIN && hcall(PV_HC_MEMSET, (u64)d, (u8)c, n) == 0)
		return d;
	while (n--)
		*p++ = (u8)c;
	return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;

	if (kcopy_native) {
		__asm__ volatile("rep movsb" : "+D"(dp), "+S"(sp), "+c"(n)
				 : : "memory");
		return d;
	}
	if (n >= HC_COPY_MIN && hcall(PV_HC_MEMCPY, (u64)d, (u64)s, n) == 0)
		return d;
	for (; n >= 8; n -= 8, dp += 8, sp += 8)
		*(u64 *)dp = *(const u64 *)sp;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;

	if (dp <= sp || dp >= sp + n ||
	    (!kcopy_native && n >= HC_COPY_MIN))
		return memcpy(d, s, n);	/* the VMM's copy is a memmove */
	while (n--)
		dp[n] = sp[n];
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (u8)*a - (u8)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b || !*a)
			return (u8)*a - (u8)*b;
	}
	return 0;
}

long memset_user(void *udst, size_t n)
{
	if (!user_range_ok((u64)udst, n))
		return -EFAULT;
	return hcall(PV_HC_MEMSET, (u64)udst, 0, n);
}

/*
 * strncpy_from_user() for a string that must lie in user space: the kernel
 * reads it through its own page tables, where the direct map covers all of
 * guest RAM, so an unchecked kernel address would copy kernel (and other
 * processes') memory.  A string that runs up to the end of user space
 * without a NUL is -EFAULT, as on Linux.
 */
s64 user_string(char *dst, u64 up, u64 n)
{
	u64 lim = n;
	s64 len;

	if (up >= PV_USER_TOP)
		return -EFAULT;
	if (lim > PV_USER_TOP - up)
		lim = PV_USER_TOP - up;
	len = strncpy_from_user(dst, (const char *)up, lim);
	if (len >= 0 && (u64)len == lim && lim < n)
		return -EFAULT;
	return len;
}
