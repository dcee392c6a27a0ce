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

/* The boot parameters' record part: event and period (1 kHz of cycles). */
void record_boot_pmu(const struct vmm_record *r, uint64_t tsc_khz,
		     struct boot_pmu *bpmu);

/* An observer adding the guest's samples (and with -a the VMM's) to p. */
void record_observer(struct vm_observer *o, const struct vmm_record *r,
		     struct profile *p);

#endif
