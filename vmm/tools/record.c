// SPDX-License-Identifier: MIT
/*
 * `vmm record`: the guest kernel takes the samples (PV_HC_SAMPLE); the core
 * reports them, and with -a the VMM's own time per exit, to this observer,
 * which stores them in a profile (profile.h).
 */
#include <string.h>

#include "boot_load.h"
#include "profile.h"
#include "record.h"
#include "stat.h"
#include "vpmu.h"

bool record_event_is_cycles(uint16_t code)
{
	return code == PV_EVENT_CYCLES || code == PV_EVENT_REF_CYCLES;
}

void record_boot_pmu(const struct vmm_record *r, uint64_t tsc_khz,
		     struct boot_pmu *bpmu)
{
	bpmu->record_evtsel = boot_evtsel(r->code, r->mode);
	/* Default: 1 kHz of cycles, or every RECORD_DEFAULT_PERIOD others. */
	bpmu->record_period = r->period ? r->period :
		record_event_is_cycles(r->code) ? tsc_khz :
		RECORD_DEFAULT_PERIOD;
}

static void record_sample(void *ctx, const struct pv_sample *r,
			  uint64_t time_ns)
{
	struct profile *p = ctx;
	struct sample s = { 0 };
	char comm[17];

	memcpy(comm, r->comm, 16);
	comm[16] = 0;
	profile_comm(p, r->pid, r->tid, comm);
	s.pid = r->pid;
	s.tid = r->tid;
	s.cpu = r->cpu;
	s.kind = r->user ? SAMPLE_USER : SAMPLE_KERNEL;
	s.ip = r->ip;
	s.time_ns = time_ns;
	s.period = r->period;
	profile_add(p, &s);
}

/* record -a: the VMM's own time per exit reason (Xenoprof, Du et al.). */
static void record_exit_time(void *ctx, int cpu, uint32_t exit_reason,
			     int hypercall, uint64_t time_ns, uint64_t cycles)
{
	struct sample s = { 0 };

	s.cpu = cpu;
	s.kind = SAMPLE_VMM;
	s.exit_reason = exit_reason;
	if (hypercall >= 0)
		s.exit_reason = PROFILE_HC_BASE + hypercall;
	s.time_ns = time_ns;
	s.period = cycles;
	profile_add(ctx, &s);
}

void record_observer(struct vm_observer *o, const struct vmm_record *r,
		     struct profile *p)
{
	*o = (struct vm_observer){
		.ctx = p,
		.sample = record_sample,
		.exit_time = r->system_wide ? record_exit_time : NULL,
	};
}
