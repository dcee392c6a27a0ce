// SPDX-License-Identifier: MIT
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_stats.h"

int kvm_stats_open(struct kvm_stats *s, int vcpu_fd)
{
	struct kvm_stats_header h;
	size_t dsz;
	uint8_t *desc;

	memset(s, 0, sizeof(*s));
	s->fd = ioctl(vcpu_fd, KVM_GET_STATS_FD, NULL);
	if (s->fd < 0)
		return -1;
	if (pread(s->fd, &h, sizeof(h), 0) != sizeof(h) || h.num_desc > 4096)
		goto fail;
	dsz = sizeof(struct kvm_stats_desc) + h.name_size;
	desc = malloc(dsz * h.num_desc);
	s->names = calloc(h.num_desc, sizeof(*s->names));
	s->offsets = calloc(h.num_desc, sizeof(*s->offsets));
	if (!desc || !s->names || !s->offsets ||
	    pread(s->fd, desc, dsz * h.num_desc, h.desc_offset) !=
	    (ssize_t)(dsz * h.num_desc)) {
		free(desc);
		goto fail;
	}
	for (uint32_t i = 0; i < h.num_desc; i++) {
		struct kvm_stats_desc *d = (void *)(desc + i * dsz);
		uint64_t end = d->offset / 8 + (d->size ? d->size : 1);

		snprintf(s->names[i], sizeof(s->names[i]), "%.*s",
			 (int)h.name_size, d->name);
		s->offsets[i] = d->offset / 8;
		if (end > s->data_len)
			s->data_len = end;
	}
	free(desc);
	s->n = h.num_desc;
	s->data_off = h.data_offset;
	return 0;
fail:
	kvm_stats_close(s);
	return -1;
}

/* vals gets one u64 per descriptor (the first element of arrays). */
int kvm_stats_read(struct kvm_stats *s, uint64_t *vals)
{
	uint64_t *buf = malloc(s->data_len * 8);

	if (!buf || pread(s->fd, buf, s->data_len * 8, s->data_off) !=
	    (ssize_t)(s->data_len * 8)) {
		free(buf);
		return -1;
	}
	for (int i = 0; i < s->n; i++)
		vals[i] = buf[s->offsets[i]];
	free(buf);
	return 0;
}

void kvm_stats_close(struct kvm_stats *s)
{
	if (s->fd > 0)
		close(s->fd);
	free(s->names);
	free(s->offsets);
	memset(s, 0, sizeof(*s));
}
