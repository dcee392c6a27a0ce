// SPDX-License-Identifier: MIT
/*
 * What CPUID says to user code, in /proc/cpuinfo's words: the lines that
 * file must agree with (libpfm4 picks its event tables from CPUID, PAPI
 * its hardware description from /proc/cpuinfo).
 */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	unsigned int a, b, c, d, family, model;
	char vendor[13];

	__cpuid(0, a, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = 0;
	__cpuid(1, a, b, c, d);
	/* Linux's x86_family() and x86_model(). */
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family >= 6)
		model += ((a >> 16) & 0xf) << 4;
	printf("vendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\n"
	       "stepping\t: %u\n", vendor, family, model, a & 0xf);
	return 0;
}
