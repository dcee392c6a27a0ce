// SPDX-License-Identifier: MIT
/* perfctr-style entry points (vperfctr_*) over libvpmu. */
#include <stdlib.h>

#include "libvpmu.h"

struct vperfctr {
	unsigned int n;
	struct vpmu_event ev[VPERFCTR_MAX];
};

static inline uint64_t rd_tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

struct vperfctr *vperfctr_open(void)
{
	return calloc(1, sizeof(struct vperfctr));
}

int vperfctr_control(struct vperfctr *p, const struct vperfctr_control *c)
{
	int err;

	for (unsigned int i = 0; i < p->n; i++)
		vpmu_close(&p->ev[i]);
	p->n = 0;
	if (c->nractrs > VPERFCTR_MAX)
		return -1;
	for (unsigned int i = 0; i < c->nractrs; i++) {
		uint32_t s = c->evntsel[i];

		err = vpmu_open_raw(&p->ev[i], s & 0xffff, s & VPERFCTR_USR,
				    s & VPERFCTR_OS, 0);
		if (err)
			return err;
		p->n++;
	}
	return 0;
}

int vperfctr_read_ctrs(struct vperfctr *p, struct perfctr_sum_ctrs *s)
{
	s->tsc = rd_tsc();
	for (unsigned int i = 0; i < p->n; i++)
		s->pmc[i] = vpmu_read(&p->ev[i]);
	return 0;
}

void vperfctr_close(struct vperfctr *p)
{
	for (unsigned int i = 0; p && i < p->n; i++)
		vpmu_close(&p->ev[i]);
	free(p);
}
