// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the virtual PMU (pmu/) as a hostile guest kernel drives
 * it.  The input is a program of operations on a PMU with the fake source
 * and one of the built-in policies: rdmsr/wrmsr of PMU MSRs with any value,
 * thread switches with thread pages full of fuzzer bytes, exits and entries
 * with counts advancing in between, steal time, LVTPC unmasking, the PMI
 * handler's re-arm hypercall.  Every value the guest writes is untrusted;
 * the PMU must answer #GP or take it, and what it answers must stay
 * architectural (counters within the width, GLOBAL_STATUS within the
 * counter bits).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "pmu.h"
#include "policy.h"
#include "source.h"

#define NR_VCPUS	2
#define NR_THREADS	3

/* MSRs worth hitting: every PMU MSR and slot, plus neighbours. */
static uint32_t pick_msr(struct input *in)
{
	static const uint32_t base[] = {
		PV_MSR_IA32_PMC0, PV_MSR_IA32_PERFEVTSEL0,
		PV_MSR_IA32_FIXED_CTR0, PV_MSR_IA32_FIXED_CTR_CTRL,
		PV_MSR_IA32_A_PMC0, PV_MSR_IA32_PERF_CAPABILITIES,
	};
	uint8_t b = take(in, 1);

	if (b == 0xff)
		return take(in, 4);
	return base[b % 6] + (int)(b / 6 % 12) - 2;
}

/* Counter values in the three shapes that matter: small, near wrap, any. */
static uint64_t pick_val(struct input *in)
{
	uint8_t how = take(in, 1);
	uint64_t v = take(in, 8);

	switch (how & 3) {
	case 0:
		return v & 0xffff;
	case 1:
		return PV_VPMU_MASK - (v & 0xff);
	case 2:
		/* Valid-looking evtsel: event, umask, USR/OS/INT/EN. */
		return (v & 0xffff) | (v & 0x570000);
	default:
		return v;
	}
}

static const uint16_t events[] = {
	PV_EVENT_INSTRUCTIONS, PV_EVENT_CYCLES, PV_EVENT_REF_CYCLES,
	PV_EVENT_BRANCHES, PV_EVENT_LLC_REFS,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct pv_vpmu_vcpu_page *vp[NR_VCPUS];
	struct pv_vpmu_thread_page *tp[NR_THREADS];
	bool running[NR_VCPUS] = { false, false };
	struct pmu_config cfg = {
		.source = "fake",
		.nr_vcpus = NR_VCPUS,
		.tsc_khz = 1000000,
	};
	struct pmu_source *src;
	struct pmu *pmu;
	const char *err;
	unsigned int steps = 0;
	size_t nr_policies = 0;

	/* Every policy the build registers, a new one with no edit here. */
	while (pmu_policy_at(nr_policies))
		nr_policies++;
	cfg.policy_ops = pmu_policy_at(take(&in, 1) % nr_policies);
	if (pmu_create(&cfg, &pmu, &err))
		abort();
	src = pmu_active_source(pmu);
	for (int i = 0; i < NR_VCPUS; i++) {
		vp[i] = aligned_alloc(4096, sizeof(*vp[i]));
		memset(vp[i], 0, sizeof(*vp[i]));
		pmu_vcpu_set_page(pmu_vcpu(pmu, i), vp[i]);
	}
	for (int i = 0; i < NR_THREADS; i++) {
		tp[i] = aligned_alloc(4096, sizeof(*tp[i]));
		memset(tp[i], 0, sizeof(*tp[i]));
	}

	while (in.left && steps++ < 4096) {
		uint8_t op = take(&in, 1);
		unsigned int id = op >> 7;
		struct pmu_vcpu *v = pmu_vcpu(pmu, id);
		uint64_t val = 0, deadline;

		if (running[id]) {
			/* The guest ran: counts advance, then it exits. */
			pmu_fake_advance(src, id, events[op % 5],
					 take(&in, 2));
			pmu_vcpu_exit(v, (enum pmu_exit_reason)(2 + op % 6));
			running[id] = false;
			continue;
		}
		switch ((op >> 3) & 15) {
		case 0:
		case 1:
		case 2:
			pmu_msr_write(v, pick_msr(&in), pick_val(&in));
			break;
		case 3:
		case 4: {
			uint32_t msr = pick_msr(&in);

			if (pmu_msr_read(v, msr, &val) != PMU_MSR_OK)
				break;
			if (msr == PV_MSR_IA32_PERF_GLOBAL_STATUS &&
			    (val & ~(0xfull | 0x7ull << 32 |
				     PV_GLOBAL_OVF_BUF | PV_GLOBAL_COND_CHGD)))
				abort();
			if (((msr >= PV_MSR_IA32_PMC0 && msr < PV_MSR_IA32_PMC0 + 4) ||
			     (msr >= PV_MSR_IA32_FIXED_CTR0 && msr < PV_MSR_IA32_FIXED_CTR0 + 3)) &&
			    (val & ~PV_VPMU_MASK))
				abort();
			break;
		}
		case 5:
		case 6: {
			/* A thread page is guest memory: any bytes at all. */
			struct pv_vpmu_thread_page *t = tp[op % NR_THREADS];
			unsigned int off = take(&in, 2) % (sizeof(*t) - 8);

			val = take(&in, 8);
			memcpy((uint8_t *)t + off, &val, 8);
			break;
		}
		case 7:
		case 8: {
			uint8_t w = take(&in, 1);
			struct pv_vpmu_thread_page *out =
				w & 4 ? NULL : tp[w % NR_THREADS];
			struct pv_vpmu_thread_page *inn =
				w & 8 ? NULL : tp[(w >> 4) % NR_THREADS];
			int r = pmu_thread_switch(v, out, inn);

			if (r != 0 && r != -22)
				abort();
			break;
		}
		case 9:
			pmu_vcpu_steal(v, take(&in, 4));
			break;
		case 10:
			pmu_vcpu_count(v, take(&in, 2), take(&in, 2));
			break;
		case 11:
			pmu_vcpu_take_pmi(v);
			pmu_vcpu_lvtpc_unmasked(v);
			break;
		case 12:
			pmu_vcpu_timer_deadline(v, &deadline);
			break;
		case 14:	/* PV_HC_PMU_REARM's arguments, any */
			pmu_pmi_rearm(v, take(&in, 1), take(&in, 8),
				      take(&in, 8));
			break;
		case 13:
			for (unsigned int i = 0; i < PV_VPMU_NR_COUNTERS; i++)
				if (pmu_vcpu_counter(v, i) & ~PV_VPMU_MASK)
					abort();
			break;
		default:
			pmu_vcpu_enter(v);
			running[id] = true;
			break;
		}
	}
	pmu_destroy(pmu);
	for (int i = 0; i < NR_VCPUS; i++)
		free(vp[i]);
	for (int i = 0; i < NR_THREADS; i++)
		free(tp[i]);
	return 0;
}
