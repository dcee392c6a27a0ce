// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "guest_mem.h"
#include "layout.h"

#define PTE_P		(1ull << 0)
#define PTE_W		(1ull << 1)
#define PTE_U		(1ull << 2)
#define PTE_PS		(1ull << 7)
#define PTE_ADDR	0x000ffffffffff000ull

void *vm_gpa_to_hva(struct vm *vm, uint64_t gpa, uint64_t len)
{
	if (gpa > vm->mem_size || len > vm->mem_size - gpa)
		return NULL;
	return vm->mem + gpa;
}

int gva_to_gpa(struct vm *vm, uint64_t cr3, uint64_t gva,
	       enum gva_access acc, uint64_t *gpa)
{
	uint64_t need = PTE_P | PTE_U | (acc == GVA_WRITE ? PTE_W : 0);
	uint64_t table = cr3 & PTE_ADDR;

	/* Only canonical lower-half addresses are user addresses. */
	if (gva >= PV_USER_TOP)
		return -EFAULT;
	for (int level = 3; level >= 0; level--) {
		unsigned int idx = (gva >> (12 + 9 * level)) & 511;
		uint64_t *pt = vm_gpa_to_hva(vm, table, 4096);
		uint64_t e;

		if (!pt)
			return -EFAULT;
		e = __atomic_load_n(&pt[idx], __ATOMIC_RELAXED);
		if ((e & need) != need)
			return -EFAULT;
		if (level > 0 && level < 3 && (e & PTE_PS)) {
			uint64_t size = 1ull << (12 + 9 * level);

			*gpa = (e & PTE_ADDR & ~(size - 1)) | (gva & (size - 1));
			return 0;
		}
		table = e & PTE_ADDR;
	}
	*gpa = table | (gva & 4095);
	return 0;
}

static int64_t gva_copy(struct vm *vm, uint64_t cr3, uint64_t gva,
			uint8_t *host, uint64_t len, enum gva_access acc)
{
	uint64_t done = 0;

	if (gva + len < gva)
		return -EFAULT;
	while (done < len) {
		uint64_t chunk = 4096 - ((gva + done) & 4095);
		uint64_t gpa;
		uint8_t *p;

		if (chunk > len - done)
			chunk = len - done;
		if (gva_to_gpa(vm, cr3, gva + done, acc, &gpa))
			return -EFAULT;
		p = vm_gpa_to_hva(vm, gpa, chunk);
		if (!p)
			return -EFAULT;
		if (acc == GVA_WRITE)
			memcpy(p, host + done, chunk);
		else
			memcpy(host + done, p, chunk);
		done += chunk;
	}
	return done;
}

int64_t gva_read(struct vm *vm, uint64_t cr3, void *dst, uint64_t gva,
		 uint64_t len)
{
	return gva_copy(vm, cr3, gva, dst, len, GVA_READ);
}

int64_t gva_write(struct vm *vm, uint64_t cr3, uint64_t gva, const void *src,
		  uint64_t len)
{
	return gva_copy(vm, cr3, gva, (uint8_t *)src, len, GVA_WRITE);
}
