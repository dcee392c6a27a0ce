/* SPDX-License-Identifier: MIT */
#ifndef VMM_KVM_STATS_H
#define VMM_KVM_STATS_H

#include <stdint.h>
#include <stdio.h>

/*
 * KVM binary statistics of one vCPU (KVM_GET_STATS_FD): on this host
 * `insn_emulation` counts guest kernel instructions exactly, which is how
 * kernel paths are budgeted.
 */
struct kvm_stats {
	int fd;
	int n;
	char (*names)[48];
	uint32_t *offsets;		/* in u64 units into the data block */
	uint64_t data_off;
	uint64_t data_len;		/* u64 values */
};

int kvm_stats_open(struct kvm_stats *s, int vcpu_fd);
int kvm_stats_read(struct kvm_stats *s, uint64_t *vals);
void kvm_stats_close(struct kvm_stats *s);

#endif
