/* SPDX-License-Identifier: MIT */
/*
 * Inside struct profile: shared by the files that make up the profile
 * library (profile.c the sample store, profile_symbols.c the ELF images,
 * profile_report.c the report, profile_file.c perfvisor.data).  Users of
 * the library include profile.h only.
 */
#ifndef VMM_PROFILE_INTERNAL_H
#define VMM_PROFILE_INTERNAL_H

#include <pthread.h>

#include "profile.h"

struct psym {
	uint64_t start, end;	/* biased; end exclusive */
	uint32_t name;		/* offset in image strs */
};

struct image {
	char *name, *path;
	bool kernel;
	uint64_t bias;
	struct profile_segment *segs;
	size_t nsegs;
	struct psym *syms;
	size_t nsyms;
	char *strs;
	size_t strs_len;
};

/* An exec: image runs in process pid from time since on. */
struct binding {
	int image;
	uint32_t pid;
	uint64_t since;
};

struct comm {
	uint32_t pid, tid;
	uint64_t time;
	char *name;
};

struct profile {
	pthread_mutex_t lock;	/* samples and comms: vCPU threads add */
	struct sample *samples;
	size_t nsamples, cap;
	uint64_t *chain;	/* all samples' call chains, back to back */
	size_t nchain, chain_cap;
	uint64_t chains_dropped;	/* past PROFILE_CHAIN_IPS_MAX */
	struct comm *comms;	/* sorted by (tid, time), stable */
	size_t ncomms;
	struct image *images;
	size_t nimages;
	struct binding *binds;
	size_t nbinds;
	char *event;
	uint32_t perf_type;
	uint64_t perf_config;
};

/* Order of comms: by tid, then time. */
static inline int comm_cmp(uint32_t tid_a, uint64_t time_a, const struct comm *b)
{
	if (tid_a != b->tid)
		return tid_a < b->tid ? -1 : 1;
	if (time_a != b->time)
		return time_a < b->time ? -1 : 1;
	return 0;
}

void profile_image_free(struct image *im);
/* Give sample i (which has none) the chain ips[n], n <= PROFILE_CHAIN_MAX;
 * -1 if out of memory or past PROFILE_CHAIN_IPS_MAX.  Not locked: for
 * readers filling a profile of their own. */
int profile_chain_attach(struct profile *p, size_t i, const uint64_t *ips,
			 size_t n);

#endif
