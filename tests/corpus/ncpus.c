/* SPDX-License-Identifier: MIT */
/*
 * How many CPUs a program sees, by each way libcs and runtimes ask:
 * sysconf (glibc reads /sys/devices/system/cpu/online, then /proc/stat,
 * then sched_getaffinity), get_nprocs_conf, and the affinity mask.  In the
 * guest every answer must be the --cpus count.  Also the memory size that
 * sysconf reads from sysinfo: --mem (1 GiB by default, 262144 pages).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/sysinfo.h>
#include <unistd.h>

int main(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set))
		perror("sched_getaffinity");
	printf("onln %ld conf %ld nprocs %d conf %d affinity %d\n",
	       sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF),
	       get_nprocs(), get_nprocs_conf(), CPU_COUNT(&set));
	printf("phys pages %ld\n", sysconf(_SC_PHYS_PAGES));
	return 0;
}
