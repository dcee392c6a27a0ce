// SPDX-License-Identifier: MIT
/* Guest virtual memory through the guest's page tables (guest_va.h). */
#include <string.h>
#include <sys/ioctl.h>

#include "guest_va.h"
#include "vcpu.h"

#define GVA_PAGE	4096ULL

static uint8_t *guest_va_page(struct vcpu *v, uint64_t page,
			      struct gva_cache *c)
{
	struct kvm_translation tr = { .linear_address = page };
	uint8_t *hva;

	if (c && c->hva && c->page == page)
		return c->hva;
	if (ioctl(v->fd, KVM_TRANSLATE, &tr) < 0 || !tr.valid)
		return NULL;
	hva = vm_gpa_to_hva(v->vm, tr.physical_address & ~(GVA_PAGE - 1),
			    GVA_PAGE);
	if (hva && c)
		*c = (struct gva_cache){ .page = page, .hva = hva };
	return hva;
}

size_t guest_va_read(struct vcpu *v, uint64_t gva, void *buf, size_t len,
		     struct gva_cache *c)
{
	size_t done = 0;

	while (done < len) {
		uint64_t at = gva + done, off = at & (GVA_PAGE - 1);
		size_t n = GVA_PAGE - off;
		uint8_t *p;

		/* A range that wraps the address space is not memory. */
		if (at < gva)
			break;
		if (n > len - done)
			n = len - done;
		p = guest_va_page(v, at - off, c);
		if (!p)
			break;
		memcpy((uint8_t *)buf + done, p + off, n);
		done += n;
	}
	return done;
}
