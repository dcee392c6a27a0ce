/* SPDX-License-Identifier: MIT */
/*
 * The architectural MSRs the guest kernel uses, one name each (the PMU's
 * are in uapi/vpmu.h: the VMM models those).  KVM handles all of these
 * itself (docs/design.md section 2).
 */
#ifndef KERNEL_MSR_H
#define KERNEL_MSR_H

#define MSR_APIC_BASE		0x1b
#define MSR_STAR		0xc0000081
#define MSR_LSTAR		0xc0000082
#define MSR_SFMASK		0xc0000084
#define MSR_FS_BASE		0xc0000100
#define MSR_KERNEL_GS_BASE	0xc0000102

/* The local APIC in x2APIC mode: register offset / 16 + 0x800. */
#define X2APIC_EOI		0x80b
#define X2APIC_SVR		0x80f
#define X2APIC_ICR		0x830
#define X2APIC_LVT_TIMER	0x832
#define X2APIC_LVT_PMC		0x834
#define X2APIC_TIMER_INIT	0x838
#define X2APIC_TIMER_DIV	0x83e

#endif
