// SPDX-License-Identifier: MIT
/*
 * Sampling profiles: the sample store and its queries.  Nothing here talks
 * to KVM; the sampling code hands us struct sample, profile_symbols.c
 * resolves them, profile_report.c prints them and profile_file.c saves
 * them.
 */
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

int profile_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->event = strdup("cpu-clock");
	p->perf_type = PERF_TYPE_SOFTWARE;
	p->perf_config = PERF_COUNT_SW_CPU_CLOCK;
	if (!p->event) {
		free(p);
		return NULL;
	}
	return p;
}

void profile_image_free(struct image *im)
{
	free(im->name);
	free(im->path);
	free(im->segs);
	free(im->syms);
	free(im->strs);
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nimages; i++)
		profile_image_free(&p->images[i]);
	for (size_t i = 0; i < p->ncomms; i++)
		free(p->comms[i].name);
	free(p->images);
	free(p->comms);
	free(p->binds);
	free(p->samples);
	free(p->chain);
	free(p->event);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Room for n more chain IPs, under the profile's bound; lock held. */
static bool profile_chain_room(struct profile *p, size_t n)
{
	size_t cap = p->chain_cap;
	uint64_t *c;

	if (n > PROFILE_CHAIN_IPS_MAX - p->nchain)
		return false;
	if (p->nchain + n <= cap)
		return true;
	while (cap < p->nchain + n)
		cap = cap ? 2 * cap : 16384;
	if (cap > PROFILE_CHAIN_IPS_MAX)
		cap = PROFILE_CHAIN_IPS_MAX;
	c = realloc(p->chain, cap * sizeof(*c));
	if (!c)
		return false;
	p->chain = c;
	p->chain_cap = cap;
	return true;
}

int profile_add_chain(struct profile *p, const struct sample *s,
		      const uint64_t *chain, size_t n)
{
	struct sample *d;
	int ret = 0;

	/* The outermost frames go: the sample's own end of it is kept. */
	if (n > PROFILE_CHAIN_MAX)
		n = PROFILE_CHAIN_MAX;
	pthread_mutex_lock(&p->lock);
	if (p->nsamples == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		struct sample *ns = realloc(p->samples, cap * sizeof(*ns));

		if (!ns) {
			ret = -1;
			goto out;
		}
		p->samples = ns;
		p->cap = cap;
	}
	d = &p->samples[p->nsamples++];
	*d = *s;
	d->chain_nr = 0;
	d->chain_off = 0;
	if (n && profile_chain_attach(p, p->nsamples - 1, chain, n) < 0)
		p->chains_dropped++;
out:
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int profile_chain_attach(struct profile *p, size_t i, const uint64_t *ips,
			 size_t n)
{
	struct sample *d = &p->samples[i];

	if (n > PROFILE_CHAIN_MAX || !profile_chain_room(p, n))
		return -1;
	memcpy(&p->chain[p->nchain], ips, n * sizeof(*ips));
	d->chain_nr = n;
	d->chain_off = p->nchain;
	p->nchain += n;
	return 0;
}

int profile_add(struct profile *p, const struct sample *s)
{
	return profile_add_chain(p, s, NULL, 0);
}

void profile_comm_at(struct profile *p, uint32_t pid, uint32_t tid,
		     const char *comm, uint64_t time_ns)
{
	struct comm *n;
	char *name = strdup(comm);
	size_t i;

	if (!name)
		return;
	pthread_mutex_lock(&p->lock);
	n = realloc(p->comms, (p->ncomms + 1) * sizeof(*n));
	if (!n) {
		free(name);
		goto out;
	}
	p->comms = n;
	/*
	 * Keep (tid, time) order; a later call for the same tid and time
	 * goes after the earlier one and so wins the lookup (a rename).
	 * Names are rare, so insertion into an array is cheap enough.
	 */
	i = p->ncomms;
	while (i > 0 && comm_cmp(tid, time_ns, &n[i - 1]) < 0)
		i--;
	memmove(&n[i + 1], &n[i], (p->ncomms - i) * sizeof(*n));
	n[i] = (struct comm){ .pid = pid, .tid = tid, .time = time_ns,
			      .name = name };
	p->ncomms++;
out:
	pthread_mutex_unlock(&p->lock);
}

void profile_comm(struct profile *p, uint32_t pid, uint32_t tid,
		  const char *comm)
{
	profile_comm_at(p, pid, tid, comm, 0);
}

void profile_set_event(struct profile *p, const char *name,
		       uint32_t perf_type, uint64_t perf_config)
{
	char *n = strdup(name);

	if (!n)
		return;
	free(p->event);
	p->event = n;
	p->perf_type = perf_type;
	p->perf_config = perf_config;
}


/* ---- Queries ---- */

size_t profile_nr_samples(const struct profile *p)
{
	return p->nsamples;
}

const struct sample *profile_sample(const struct profile *p, size_t i)
{
	return &p->samples[i];
}

uint64_t profile_total_period(const struct profile *p)
{
	uint64_t t = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		t += p->samples[i].period;
	return t;
}

const uint64_t *profile_sample_chain(const struct profile *p,
				     const struct sample *s, size_t *n)
{
	/* Bounds-checked: a sample from elsewhere may carry any fields. */
	if (!s->chain_nr || s->chain_off > p->nchain ||
	    s->chain_nr > p->nchain - s->chain_off) {
		*n = 0;
		return NULL;
	}
	*n = s->chain_nr;
	return &p->chain[s->chain_off];
}

bool profile_has_chains(const struct profile *p)
{
	return p->nchain > 0;
}

uint64_t profile_chains_dropped(const struct profile *p)
{
	return p->chains_dropped;
}

const char *profile_event_name(const struct profile *p)
{
	return p->event;
}

void profile_event(const struct profile *p, uint32_t *perf_type,
		   uint64_t *perf_config)
{
	*perf_type = p->perf_type;
	*perf_config = p->perf_config;
}

size_t profile_nr_images(const struct profile *p)
{
	return p->nimages;
}

void profile_image_info(const struct profile *p, int image,
			struct profile_image_info *ii)
{
	const struct image *im = &p->images[image];

	*ii = (struct profile_image_info){
		.name = im->name, .host_path = im->path, .kernel = im->kernel,
		.nsegs = im->nsegs, .segs = im->segs, .nsyms = im->nsyms,
	};
}

size_t profile_nr_bindings(const struct profile *p)
{
	return p->nbinds;
}

void profile_binding(const struct profile *p, size_t i, int *image,
		     uint32_t *pid, uint64_t *since_ns)
{
	*image = p->binds[i].image;
	*pid = p->binds[i].pid;
	*since_ns = p->binds[i].since;
}

size_t profile_nr_comms(const struct profile *p)
{
	return p->ncomms;
}

void profile_comm_info(const struct profile *p, size_t i,
		       struct profile_comm_info *ci)
{
	const struct comm *c = &p->comms[i];

	*ci = (struct profile_comm_info){ c->pid, c->tid, c->time, c->name };
}

