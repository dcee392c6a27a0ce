// SPDX-License-Identifier: MIT
/*
 * perf.data writer and reader.  The layout is perf's "PERFILE2" file
 * (tools/perf/Documentation/perf.data-file-format.txt):
 *
 *   header | attrs (one perf_event_attr + its id section) | ids |
 *   data (PERF_RECORD_COMM, _MMAP, _SAMPLE records) |
 *   feature section table | HEADER_EVENT_DESC
 *
 * perf files are in the writer's byte order (the magic tells a reader
 * which), so native structs are what perf itself writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_data.h"

/*
 * The attr size we write: VER5 (Linux 4.1) is what every perf in use
 * reads; a perf older than the struct in our headers rejects a larger one.
 */
#define ATTR_SIZE	PERF_ATTR_SIZE_VER5
_Static_assert(sizeof(struct perf_event_attr) >= ATTR_SIZE, "attr size");

#define SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define EVENT_ID	1		/* the id of our one event */

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- Writer ---- */

struct out {
	FILE *f;
	uint64_t pos;
	bool bad;
};

static void wr(struct out *o, const void *d, size_t n)
{
	if (!o->bad && n && fwrite(d, 1, n, o->f) != n)
		o->bad = true;
	o->pos += n;
}

static void wr_zero(struct out *o, size_t n)
{
	static const uint8_t zero[64];

	while (n) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		wr(o, zero, k);
		n -= k;
	}
}

/* The sample_id_all trailer of non-sample records: TID, TIME, CPU. */
struct id_trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

static void wr_comm(struct out *o, uint32_t pid, uint32_t tid,
		    const char *comm, uint64_t time)
{
	size_t n = align8(strlen(comm) + 1);
	struct perf_event_header h = {
		.type = PERF_RECORD_COMM,
		/* A name given after start is an exec, as perf records it. */
		.misc = time ? PERF_RECORD_MISC_COMM_EXEC : 0,
		.size = sizeof(h) + 8 + n + sizeof(struct id_trailer),
	};
	uint32_t ids[2] = { pid, tid };
	struct id_trailer t = { pid, tid, time, 0, 0 };

	wr(o, &h, sizeof(h));
	wr(o, ids, sizeof(ids));
	wr(o, comm, strlen(comm));
	wr_zero(o, n - strlen(comm));
	wr(o, &t, sizeof(t));
}

static void wr_mmap(struct out *o, bool kernel, uint32_t pid,
		    const struct profile_segment *sg, const char *file,
		    uint64_t time)
{
	size_t n = align8(strlen(file) + 1);
	struct perf_event_header h = {
		.type = PERF_RECORD_MMAP,
		.misc = kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
		.size = sizeof(h) + 8 + 24 + n + sizeof(struct id_trailer),
	};
	/* perf's kernel maps belong to pid -1 (its HOST_KERNEL_ID). */
	uint32_t ids[2] = { kernel ? UINT32_MAX : pid, kernel ? 0 : pid };
	uint64_t r[3] = { sg->start, sg->len, sg->pgoff };
	struct id_trailer t = { ids[0], ids[1], time, 0, 0 };

	wr(o, &h, sizeof(h));
	wr(o, ids, sizeof(ids));
	wr(o, r, sizeof(r));
	wr(o, file, strlen(file));
	wr_zero(o, n - strlen(file));
	wr(o, &t, sizeof(t));
}

/*
 * PERF_SAMPLE_CALLCHAIN, as Linux writes it: a context marker, the
 * sample's own IP, then a user sample's callers, innermost first.
 */
static void wr_callchain(struct out *o, const struct sample *s, uint64_t ip,
			 const uint64_t *chain, size_t n)
{
	uint64_t ctx = s->kind == SAMPLE_KERNEL ? PERF_CONTEXT_KERNEL :
		       s->kind == SAMPLE_VMM ? PERF_CONTEXT_HV :
		       PERF_CONTEXT_USER;
	uint64_t nr = 2 + n;

	wr(o, &nr, sizeof(nr));
	wr(o, &ctx, sizeof(ctx));
	wr(o, &ip, sizeof(ip));
	if (n)
		wr(o, chain, n * sizeof(*chain));
}

static void wr_sample(struct out *o, const struct profile *p,
		      const struct sample *s)
{
	bool chains = profile_has_chains(p);
	size_t nchain = 0;
	const uint64_t *chain = profile_sample_chain(p, s, &nchain);
	struct perf_event_header h = {
		.type = PERF_RECORD_SAMPLE,
		.size = sizeof(h) + 40,
	};
	struct {
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period;
	} b = {
		.ip = s->ip, .pid = s->pid, .tid = s->tid, .time = s->time_ns,
		.cpu = s->cpu, .period = s->period,
	};

	switch (s->kind) {
	case SAMPLE_KERNEL:
		h.misc = PERF_RECORD_MISC_KERNEL;
		break;
	case SAMPLE_VMM:
		h.misc = PERF_RECORD_MISC_HYPERVISOR;
		b.ip = s->exit_reason;
		b.pid = b.tid = PERF_DATA_VMM_PID;
		break;
	default:
		h.misc = PERF_RECORD_MISC_USER;
	}
	_Static_assert(sizeof(b) == 40, "sample body");
	if (chains)
		h.size += (3 + nchain) * 8;
	wr(o, &h, sizeof(h));
	wr(o, &b, sizeof(b));
	if (chains)
		wr_callchain(o, s, b.ip, chain, nchain);
}

/* Every record of the data section, to be put in time order. */
enum ev_class { EV_COMM, EV_MMAP, EV_SAMPLE };
struct ev {
	uint64_t time;
	enum ev_class cls;
	uint32_t pid;
	int image;		/* EV_MMAP */
	size_t idx;		/* EV_COMM: comm index, EV_SAMPLE: sample */
};

/* Names and maps before the samples at the same instant they explain. */
static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void fill_attr(const struct profile *p, struct perf_event_attr *a)
{
	uint32_t type;
	uint64_t config;
	uint64_t period = 0;

	profile_event(p, &type, &config);
	for (size_t i = 0; i < profile_nr_samples(p) && !period; i++)
		period = profile_sample(p, i)->period;
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->size = ATTR_SIZE;
	a->config = config;
	a->sample_period = period ? period : 1;
	a->sample_type = SAMPLE_TYPE;
	/* Only with chains: a file without them stays as it was. */
	if (profile_has_chains(p))
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->mmap = 1;
	a->comm = 1;
	a->sample_id_all = 1;
}

/*
 * The guest processes in the profile, sorted and unique: the processes a
 * global image must be mapped into.  NULL when out of memory.
 */
static uint32_t *perf_data_pids(const struct profile *p, size_t *npids,
				bool *have_vmm)
{
	size_t ns = profile_nr_samples(p), nc = profile_nr_comms(p);
	uint32_t *pids = calloc(ns + nc + 1, sizeof(*pids));
	size_t n = 0, j = 0;

	*have_vmm = false;
	for (size_t i = 0; pids && i < ns; i++) {
		const struct sample *s = profile_sample(p, i);

		if (s->kind == SAMPLE_VMM)
			*have_vmm = true;
		else
			pids[n++] = s->pid;
	}
	for (size_t i = 0; pids && i < nc; i++) {
		struct profile_comm_info ci;

		profile_comm_info(p, i, &ci);
		pids[n++] = ci.pid;
	}
	if (pids) {
		qsort(pids, n, sizeof(*pids), u32_cmp);
		for (size_t i = 0; i < n; i++)
			if (!j || pids[j - 1] != pids[i])
				pids[j++] = pids[i];
	}
	*npids = j;
	return pids;
}

/* Every record the data section holds, in time order.  NULL: no memory. */
static struct ev *perf_data_events(const struct profile *p,
				   const uint32_t *pids, size_t npids,
				   size_t *nevp)
{
	size_t ns = profile_nr_samples(p), nc = profile_nr_comms(p);
	size_t ni = profile_nr_images(p), nb = profile_nr_bindings(p);
	size_t cap = ns + nc + nb + ni * (npids + 1) + 1, nev = 0;
	struct ev *evs = calloc(cap, sizeof(*evs));

	if (!evs)
		return NULL;
	for (size_t i = 0; i < nc; i++) {
		struct profile_comm_info ci;

		profile_comm_info(p, i, &ci);
		evs[nev++] = (struct ev){ ci.time_ns, EV_COMM, ci.pid, -1, i };
	}
	for (size_t i = 0; i < ni; i++) {
		struct profile_image_info ii;

		profile_image_info(p, i, &ii);
		if (ii.kernel) {
			evs[nev] = (struct ev){ 0, EV_MMAP, 0, i, nev };
			nev++;
		} else if (profile_image_global(p, i)) {
			for (size_t j = 0; j < npids; j++, nev++)
				evs[nev] = (struct ev){ 0, EV_MMAP, pids[j],
							i, nev };
		}
	}
	for (size_t i = 0; i < nb; i++, nev++) {
		struct ev e = { .cls = EV_MMAP, .idx = nev };

		profile_binding(p, i, &e.image, &e.pid, &e.time);
		evs[nev] = e;
	}
	for (size_t i = 0; i < ns; i++)
		evs[nev++] = (struct ev){ profile_sample(p, i)->time_ns,
					  EV_SAMPLE, 0, -1, i };
	qsort(evs, nev, sizeof(*evs), ev_cmp);
	*nevp = nev;
	return evs;
}

/* The data section: COMM, MMAP and SAMPLE records. */
static void wr_data(struct out *o, const struct profile *p,
		    const struct ev *evs, size_t nev, bool have_vmm)
{
	if (have_vmm)
		wr_comm(o, PERF_DATA_VMM_PID, PERF_DATA_VMM_PID, "[vmm]", 0);
	for (size_t i = 0; i < nev; i++) {
		const struct ev *e = &evs[i];
		struct profile_comm_info ci;
		struct profile_image_info ii;

		switch (e->cls) {
		case EV_COMM:
			profile_comm_info(p, e->idx, &ci);
			wr_comm(o, ci.pid, ci.tid, ci.comm, ci.time_ns);
			break;
		case EV_MMAP:
			profile_image_info(p, e->image, &ii);
			/*
			 * Without a host path perf cannot find symbols; the
			 * name still labels the Shared Object column.
			 */
			for (size_t j = 0; j < ii.nsegs; j++)
				wr_mmap(o, ii.kernel, e->pid, &ii.segs[j],
					ii.host_path ? ii.host_path : ii.name,
					e->time);
			break;
		case EV_SAMPLE:
			wr_sample(o, p, profile_sample(p, e->idx));
			break;
		}
	}
}

/*
 * HEADER_EVENT_DESC names the event ("instructions:u", "vmexits"),
 * which perf cannot derive from type/config for our virtual events.
 */
static void wr_event_desc(struct out *o, struct perf_file_header *fh,
			  const struct perf_event_attr *attr, const char *name)
{
	uint32_t slen = (strlen(name) + 1 + 63) & ~63u;	/* NAME_ALIGN */
	struct perf_file_section feat;

	fh->adds_features[HEADER_EVENT_DESC / 64] |=
		1ull << (HEADER_EVENT_DESC % 64);
	feat.offset = o->pos + sizeof(feat);
	feat.size = 4 + 4 + ATTR_SIZE + 4 + 4 + slen + 8;
	wr(o, &feat, sizeof(feat));
	wr(o, &(uint32_t){ 1 }, 4);
	wr(o, &(uint32_t){ ATTR_SIZE }, 4);
	wr(o, attr, ATTR_SIZE);
	wr(o, &(uint32_t){ 1 }, 4);
	wr(o, &slen, 4);
	wr(o, name, strlen(name));
	wr_zero(o, slen - strlen(name));
	wr(o, &(uint64_t){ EVENT_ID }, 8);
}

int perf_data_write(const struct profile *p, const char *path,
		    char *err, size_t errlen)
{
	struct perf_file_header fh = { 0 };
	struct perf_event_attr attr;
	struct perf_file_section ids;
	struct out o = { 0 };
	uint32_t *pids;
	struct ev *evs = NULL;
	size_t npids, nev = 0;
	bool have_vmm;
	int ret = -1;

	pids = perf_data_pids(p, &npids, &have_vmm);
	if (pids)
		evs = perf_data_events(p, pids, npids, &nev);
	if (!pids || !evs) {
		profile_fail(err, errlen, "out of memory");
		goto out;
	}
	o.f = fopen(path, "wb");
	if (!o.f) {
		profile_fail(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	fill_attr(p, &attr);
	/* Header now as a placeholder, rewritten once sizes are known. */
	wr(&o, &fh, sizeof(fh));
	fh.attrs.offset = o.pos;
	fh.attr_size = ATTR_SIZE + sizeof(ids);
	fh.attrs.size = fh.attr_size;
	ids.offset = fh.attrs.offset + fh.attrs.size;
	ids.size = sizeof(uint64_t);
	wr(&o, &attr, ATTR_SIZE);
	wr(&o, &ids, sizeof(ids));
	wr(&o, &(uint64_t){ EVENT_ID }, sizeof(uint64_t));

	fh.data.offset = o.pos;
	wr_data(&o, p, evs, nev, have_vmm);
	fh.data.size = o.pos - fh.data.offset;
	wr_event_desc(&o, &fh, &attr, profile_event_name(p));

	fh.magic = PERF_DATA_MAGIC;
	fh.size = sizeof(fh);
	if (!o.bad && fseek(o.f, 0, SEEK_SET) == 0)
		wr(&o, &fh, sizeof(fh));
	else
		o.bad = true;
	if (fclose(o.f) != 0)
		o.bad = true;
	if (o.bad)
		profile_fail(err, errlen, "%s: write error: %s", path,
			     strerror(errno));
	else
		ret = 0;
out:
	free(pids);
	free(evs);
	return ret;
}
