/* SPDX-License-Identifier: MIT */
/*
 * `vmm record`'s side of a run: what the guest kernel samples, and the
 * observer that turns the VM's sample reports into a profile.
 */
#ifndef VMM_RECORD_H
#define VMM_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "vm.h"

struct boot_pmu;
struct profile;

/* One sample per this many events when -c is not given (not cycles). */
#define RECORD_DEFAULT_PERIOD	10000

/* cycles and ref-cycles count time, so -a can weigh the VMM against them. */
bool record_event_is_cycles(uint16_t code);

/* One sample per this many ns of task-clock when -c is not given: 1 kHz. */
#define RECORD_TASK_CLOCK_PERIOD	1000000

/*
 * Whether the VMM takes the samples (vcpu_sample.c): the default for the
 * events the tsc source counts as time, which a host timer can follow.
 * With --sampler vmm and another event or source, *why says why not.
 */
bool record_vmm_side(const struct vmm_record *r, const char *source,
		     const char **why);

/*
 * Who samples and how often (1 kHz of cycles by default): the boot
 * parameters' record part for the guest kernel, or vs for the VMM.
 */
void record_prepare(const struct vmm_record *r, const char *source,
		    uint64_t tsc_khz, struct boot_pmu *bpmu,
		    struct vm_sampling *vs);

/* An observer adding the guest's samples (and with -a the VMM's) to p. */
void record_observer(struct vm_observer *o, const struct vmm_record *r,
		     struct profile *p);

#endif
