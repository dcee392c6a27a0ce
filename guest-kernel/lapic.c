// SPDX-License-Identifier: MIT
/*
 * Local APIC in x2APIC mode (MSRs: KVM's in-kernel LAPIC handles them
 * without a trip to the VMM).  The timer ticks at 100 Hz only while some
 * task waits for a CPU or sleeps with a deadline: each interrupt costs
 * ~50 us here, so a lone thread runs tickless.
 */
#include "kernel.h"
#include "msr.h"
#include "task.h"

#define LVT_MASKED		(1u << 16)
#define LVT_PERIODIC		(1u << 17)
#define TICK_NS			10000000u	/* 100 Hz; KVM's APIC bus is 1 GHz */
/*
 * While the VMM steps kernel code (`:k`, boot params kstep_live), each
 * kernel instruction is a VM exit to user space: tens of us under QEMU's
 * SVM, 15-50 us on kvm_pvm.  A 10 ms tick then takes longer to handle than it
 * lasts and nothing else runs (seen: tests hung until --timeout, exits
 * still coming), so the tick slows down to 1 Hz for that time.
 */
#define KSTEP_TICK_NS		1000000000u

static inline u64 rdmsr(u32 msr)
{
	u32 lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (u64)hi << 32 | lo;
}

void lapic_init(void)
{
	wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | (1u << 11) | (1u << 10));
	wrmsr(X2APIC_SVR, 0x100 | VEC_SPURIOUS);
	wrmsr(X2APIC_TIMER_DIV, 0xb);		/* divide by 1 */
	wrmsr(X2APIC_LVT_TIMER, LVT_MASKED | LVT_PERIODIC | VEC_TIMER);
	wrmsr(X2APIC_LVT_PMC, VEC_PMI);
}

void lapic_eoi(void)
{
	wrmsr(X2APIC_EOI, 0);
}

static u32 lapic_tick_ns(void)
{
	return *(volatile u32 *)&boot_params->kstep_live ? KSTEP_TICK_NS
							  : TICK_NS;
}

void lapic_timer_set(bool on)
{
	struct cpu *c = current_task()->cpu;

	if (c->timer_on == on)
		return;
	c->timer_on = on;
	if (on) {
		c->tick_ns = lapic_tick_ns();
		wrmsr(X2APIC_LVT_TIMER, LVT_PERIODIC | VEC_TIMER);
		wrmsr(X2APIC_TIMER_INIT, c->tick_ns);
	} else {
		wrmsr(X2APIC_TIMER_INIT, 0);
	}
}

/* At each tick: follow kstep_live (set or cleared since the last one). */
void lapic_tick_adjust(void)
{
	struct cpu *c = current_task()->cpu;
	u32 ns = lapic_tick_ns();

	if (c->timer_on && c->tick_ns != ns) {
		c->tick_ns = ns;
		wrmsr(X2APIC_TIMER_INIT, ns);
	}
}

void lapic_ipi(int cpu, int vector)
{
	wrmsr(X2APIC_ICR, (u64)cpu << 32 | (u32)vector);
}
