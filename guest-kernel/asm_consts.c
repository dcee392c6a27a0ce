// SPDX-License-Identifier: MIT
/*
 * Constants the kernel's assembly uses but C defines, some as enum members
 * the assembler cannot read.  Never linked: gen_asm_consts.sh compiles this
 * file to assembly, where each CONST() is a marker line with the value the
 * compiler computed, and turns those lines into asm_consts.h.  A value
 * changed in C reaches the assembly at the next build.
 */
#include "hypercall.h"
#include "kernel.h"
#include "vpmu.h"

#define CONST(name, value) \
	__asm__ volatile(".ascii \"->" #name " %c0\"" : : "i"(value))

void asm_consts(void);

void asm_consts(void)
{
	CONST(EFAULT, EFAULT);
	CONST(PV_HC_MEMCPY, PV_HC_MEMCPY);
	CONST(PV_HC_PORT, PV_HC_PORT);
	CONST(PV_STEP_BLOCKS, PV_STEP_BLOCKS);
}
