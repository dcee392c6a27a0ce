// SPDX-License-Identifier: MIT
/*
 * `vmm record`: the VMM takes the samples at a host timer (vcpu_sample.c)
 * where it can, else the guest kernel on virtual PMIs (PV_HC_SAMPLE); the
 * core reports them, and with -a the VMM's own time per exit, to this
 * observer, which stores them in a profile (profile.h).
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

bool record_vmm_side(const struct vmm_record *r, const char *source,
		     const char **why)
{
	*why = NULL;
	if (r->sampler == SAMPLER_GUEST)
		return false;
	/* The step source's exact counts need its zero skid: in the guest. */
	if (strcmp(source, "tsc"))
		*why = "--sampler vmm needs the tsc source";
	else if (!record_event_is_cycles(r->code) &&
		 r->code != PV_EVENT_TASK_CLOCK)
		*why = "--sampler vmm samples cycles, ref-cycles or task-clock";
	return !*why;
}

void record_prepare(const struct vmm_record *r, const char *source,
		    uint64_t tsc_khz, struct boot_pmu *bpmu,
		    struct vm_sampling *vs)
{
	const char *why;

	*vs = (struct vm_sampling){ 0 };
	if (record_vmm_side(r, source, &why)) {
		/* The guest kernel samples nothing: its record period is 0. */
		vs->wall = r->code == PV_EVENT_TASK_CLOCK;
		vs->callchain = r->callchain;
		vs->period = r->period ? r->period : vs->wall ?
			     RECORD_TASK_CLOCK_PERIOD : tsc_khz;
		vs->period_tsc = vs->wall ? vs->period * tsc_khz / 1000000
					  : vs->period;
		if (!vs->period_tsc)
			vs->period_tsc = 1;
		return;
	}
	bpmu->record_evtsel = boot_evtsel(r->code, r->mode);
	/* Default: 1 kHz of cycles, or every RECORD_DEFAULT_PERIOD others. */
	bpmu->record_period = r->period ? r->period :
		record_event_is_cycles(r->code) ? tsc_khz :
		RECORD_DEFAULT_PERIOD;
}

/* A walk's whole chain fits the store's per-sample bound. */
_Static_assert(VCPU_SAMPLE_CHAIN_MAX <= PROFILE_CHAIN_MAX, "chain bounds");

static void record_sample(void *ctx, const struct pv_sample *r,
			  uint64_t time_ns, const uint64_t *chain,
			  uint32_t nchain)
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
	profile_add_chain(p, &s, chain, nchain);
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
