/* SPDX-License-Identifier: MIT */
/*
 * Reading guest virtual memory from the VMM, through the guest's own page
 * tables (KVM_TRANSLATE on the vCPU, then guest RAM's host mapping): the
 * PMU glue's look at the instruction being stepped, and `vmm record -g`'s
 * frame-pointer walks.
 */
#ifndef VMM_GUEST_VA_H
#define VMM_GUEST_VA_H

#include <stddef.h>
#include <stdint.h>

struct vcpu;

/*
 * The last page translated: a walk's reads mostly fall in one or two
 * stack pages, so each costs an ioctl only when it leaves the page.  Valid
 * while the guest is stopped in one exit only (its page tables change).
 */
struct gva_cache {
	uint64_t page;		/* guest virtual page */
	uint8_t *hva;		/* its host mapping, NULL: nothing cached */
};

/* Copy up to len bytes at gva; returns how many could be read (c may be
 * NULL). */
size_t guest_va_read(struct vcpu *v, uint64_t gva, void *buf, size_t len,
		     struct gva_cache *c);

#endif
