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
#define HEADER_EVENT_DESC	12	/* perf's feature bit numbers */
#define EVENT_ID	1		/* the id of our one event */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

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

static void wr_sample(struct out *o, const struct sample *s)
{
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
	wr(o, &h, sizeof(h));
	wr(o, &b, sizeof(b));
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
	a->mmap = 1;
	a->comm = 1;
	a->sample_id_all = 1;
}

int perf_data_write(const struct profile *p, const char *path,
		    char *err, size_t errlen)
{
	size_t ns = profile_nr_samples(p), nc = profile_nr_comms(p);
	size_t ni = profile_nr_images(p), nb = profile_nr_bindings(p);
	struct perf_file_header fh = { 0 };
	struct perf_event_attr attr;
	struct perf_file_section ids, feat;
	struct out o = { 0 };
	uint32_t *pids = NULL;
	struct ev *evs = NULL;
	size_t npids = 0, nev = 0, cap;
	bool have_vmm = false;
	int ret = -1;

	/* The processes a global image must be mapped into. */
	pids = calloc(ns + nc + 1, sizeof(*pids));
	for (size_t i = 0; pids && i < ns; i++) {
		const struct sample *s = profile_sample(p, i);

		if (s->kind == SAMPLE_VMM)
			have_vmm = true;
		else
			pids[npids++] = s->pid;
	}
	for (size_t i = 0; pids && i < nc; i++) {
		struct profile_comm_info ci;

		profile_comm_info(p, i, &ci);
		pids[npids++] = ci.pid;
	}
	if (pids) {
		size_t j = 0;

		qsort(pids, npids, sizeof(*pids), u32_cmp);
		for (size_t i = 0; i < npids; i++)
			if (!j || pids[j - 1] != pids[i])
				pids[j++] = pids[i];
		npids = j;
	}

	cap = ns + nc + nb + ni * (npids + 1) + 1;
	evs = calloc(cap, sizeof(*evs));
	if (!pids || !evs) {
		fail(err, errlen, "out of memory");
		goto out;
	}
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

	o.f = fopen(path, "wb");
	if (!o.f) {
		fail(err, errlen, "%s: %s", path, strerror(errno));
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
	if (have_vmm)
		wr_comm(&o, PERF_DATA_VMM_PID, PERF_DATA_VMM_PID, "[vmm]", 0);
	for (size_t i = 0; i < nev; i++) {
		const struct ev *e = &evs[i];
		struct profile_comm_info ci;
		struct profile_image_info ii;

		switch (e->cls) {
		case EV_COMM:
			profile_comm_info(p, e->idx, &ci);
			wr_comm(&o, ci.pid, ci.tid, ci.comm, ci.time_ns);
			break;
		case EV_MMAP:
			profile_image_info(p, e->image, &ii);
			/*
			 * Without a host path perf cannot find symbols; the
			 * name still labels the Shared Object column.
			 */
			for (size_t j = 0; j < ii.nsegs; j++)
				wr_mmap(&o, ii.kernel, e->pid, &ii.segs[j],
					ii.host_path ? ii.host_path : ii.name,
					e->time);
			break;
		case EV_SAMPLE:
			wr_sample(&o, profile_sample(p, e->idx));
			break;
		}
	}
	fh.data.size = o.pos - fh.data.offset;

	/*
	 * HEADER_EVENT_DESC names the event ("instructions:u", "vmexits"),
	 * which perf cannot derive from type/config for our virtual events.
	 */
	const char *name = profile_event_name(p);
	uint32_t slen = (strlen(name) + 1 + 63) & ~63u;	/* NAME_ALIGN */

	fh.adds_features[HEADER_EVENT_DESC / 64] |=
		1ull << (HEADER_EVENT_DESC % 64);
	feat.offset = o.pos + sizeof(feat);
	feat.size = 4 + 4 + ATTR_SIZE + 4 + 4 + slen + 8;
	wr(&o, &feat, sizeof(feat));
	wr(&o, &(uint32_t){ 1 }, 4);
	wr(&o, &(uint32_t){ ATTR_SIZE }, 4);
	wr(&o, &attr, ATTR_SIZE);
	wr(&o, &(uint32_t){ 1 }, 4);
	wr(&o, &slen, 4);
	wr(&o, name, strlen(name));
	wr_zero(&o, slen - strlen(name));
	wr(&o, &(uint64_t){ EVENT_ID }, 8);

	fh.magic = PERF_DATA_MAGIC;
	fh.size = sizeof(fh);
	if (!o.bad && fseek(o.f, 0, SEEK_SET) == 0)
		wr(&o, &fh, sizeof(fh));
	else
		o.bad = true;
	if (fclose(o.f) != 0)
		o.bad = true;
	if (o.bad)
		fail(err, errlen, "%s: write error: %s", path,
		     strerror(errno));
	else
		ret = 0;
out:
	free(pids);
	free(evs);
	return ret;
}

/* ---- Reader ---- */

struct rd {
	const uint8_t *d;
	size_t len;
};

static const void *at(const struct rd *r, uint64_t off, uint64_t n)
{
	if (off > r->len || n > r->len - off)
		return NULL;
	return r->d + off;
}

/* An image per distinct (path, start) so each exec gets its own bias. */
struct seen {
	char *path;
	uint64_t start;
	int image;
};

/*
 * Map a PERF_RECORD_MMAP/MMAP2 of an executable file to an image: the
 * bias is where the mapping puts the segment at that file offset.
 */
static int mmap_image(struct profile *p, struct seen **seen, size_t *nseen,
		      const char *file, uint64_t start, uint64_t pgoff,
		      bool kernel)
{
	const char *base = strrchr(file, '/');
	const char *name;
	char err[256];
	uint64_t bias = 0;
	struct seen *n;
	Elf *e;
	int fd, id;

	for (size_t i = 0; i < *nseen; i++)
		if ((*seen)[i].start == start && !strcmp((*seen)[i].path, file))
			return (*seen)[i].image;
	if (file[0] != '/')
		return -1;	/* [vdso], //anon, [kernel.kallsyms]_text */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		GElf_Ehdr eh;
		size_t phnum = 0;

		if (gelf_getehdr(e, &eh) && eh.e_type == ET_DYN &&
		    elf_getphdrnum(e, &phnum) == 0) {
			for (size_t i = 0; i < phnum; i++) {
				GElf_Phdr ph;

				if (gelf_getphdr(e, i, &ph) &&
				    ph.p_type == PT_LOAD &&
				    (ph.p_offset & ~4095ull) == pgoff) {
					bias = start - (ph.p_vaddr & ~4095ull);
					break;
				}
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	name = kernel ? "[kernel]" : base ? base + 1 : file;
	id = profile_add_image(p, name, file, bias, kernel, err, sizeof(err));
	if (id < 0)
		return -1;
	n = realloc(*seen, (*nseen + 1) * sizeof(*n));
	if (!n)
		return id;
	*seen = n;
	n[*nseen] = (struct seen){ strdup(file), start, id };
	if (n[*nseen].path)
		(*nseen)++;
	return id;
}

/* Where the TIME of the sample_id_all trailer is, from the record's end. */
static bool trailer_time(uint64_t st, const uint8_t *rec, size_t size,
			 uint64_t *time)
{
	size_t off = size;

	if (st & PERF_SAMPLE_IDENTIFIER)
		off -= 8;
	if (st & PERF_SAMPLE_CPU)
		off -= 8;
	if (st & PERF_SAMPLE_STREAM_ID)
		off -= 8;
	if (st & PERF_SAMPLE_ID)
		off -= 8;
	if (!(st & PERF_SAMPLE_TIME) || off < 16 || off > size)
		return false;
	memcpy(time, rec + off - 8, 8);
	return true;
}

/* The first event's name from HEADER_EVENT_DESC, if the file has one. */
static void event_desc_name(const struct rd *r,
			    const struct perf_file_header *fh, char *name,
			    size_t len)
{
	struct perf_file_section sb, *sec = &sb;
	const void *sp;
	const uint8_t *d;
	uint32_t nr, asz, nids, slen;
	int idx = 0;

	if (!(fh->adds_features[0] & (1ull << HEADER_EVENT_DESC)))
		return;
	/* One table entry per feature bit set, in bit order. */
	for (int b = 0; b < HEADER_EVENT_DESC; b++)
		idx += !!(fh->adds_features[0] & (1ull << b));
	sp = at(r, fh->data.offset + fh->data.size + idx * sizeof(sb),
		sizeof(sb));
	if (!sp)
		return;
	memcpy(&sb, sp, sizeof(sb));
	if (!(d = at(r, sec->offset, sec->size)) || sec->size < 8)
		return;
	memcpy(&nr, d, 4);
	memcpy(&asz, d + 4, 4);
	if (!nr || asz > sec->size || sec->size - asz < 16)
		return;
	memcpy(&nids, d + 8 + asz, 4);
	memcpy(&slen, d + 12 + asz, 4);
	if (slen > sec->size - asz - 16)
		return;
	snprintf(name, len, "%.*s", (int)slen, (const char *)d + 16 + asz);
}

static int parse_perf(struct profile *p, const struct rd *r,
		      char *err, size_t errlen)
{
	const struct perf_file_header *fh = at(r, 0, sizeof(*fh));
	struct perf_event_attr a = { 0 };
	struct seen *seen = NULL;
	size_t nseen = 0;
	uint64_t st;
	const uint8_t *ap;
	int ret = 0;

	if (!fh || fh->magic != PERF_DATA_MAGIC)
		return fail(err, errlen, "not a perf.data file (or from a "
			    "machine of the other byte order)");
	if (fh->size != sizeof(*fh) || fh->attr_size < PERF_ATTR_SIZE_VER0 + 16 ||
	    !fh->attrs.size)
		return fail(err, errlen, "unsupported perf.data header");
	ap = at(r, fh->attrs.offset, PERF_ATTR_SIZE_VER0);
	if (!ap)
		return fail(err, errlen, "corrupt attrs section");
	memcpy(&a, ap, PERF_ATTR_SIZE_VER0);
	st = a.sample_type;
	if (!(st & PERF_SAMPLE_IP) || !(st & PERF_SAMPLE_TID))
		return fail(err, errlen, "samples lack IP or TID");
	if (!at(r, fh->data.offset, fh->data.size))
		return fail(err, errlen, "data section out of bounds");

	char nbuf[64];

	snprintf(nbuf, sizeof(nbuf), "%s", a.type == PERF_TYPE_SOFTWARE &&
		 a.config == PERF_COUNT_SW_CPU_CLOCK ? "cpu-clock" :
		 a.type == PERF_TYPE_SOFTWARE &&
		 a.config == PERF_COUNT_SW_TASK_CLOCK ? "task-clock" :
		 a.type == PERF_TYPE_HARDWARE &&
		 a.config == PERF_COUNT_HW_INSTRUCTIONS ? "instructions" :
		 a.type == PERF_TYPE_HARDWARE &&
		 a.config == PERF_COUNT_HW_CPU_CYCLES ? "cycles" : "event");
	event_desc_name(r, fh, nbuf, sizeof(nbuf));
	profile_set_event(p, nbuf, a.type, a.config);

	for (uint64_t off = fh->data.offset;
	     off < fh->data.offset + fh->data.size;) {
		const void *hp = at(r, off, sizeof(struct perf_event_header));
		struct perf_event_header hb, *h = &hb;
		const uint8_t *rec;
		uint64_t time = 0;
		uint32_t pid, tid;

		/* Copied: a corrupt size can leave records misaligned. */
		if (hp)
			memcpy(&hb, hp, sizeof(hb));
		if (!hp || h->size < sizeof(*h) ||
		    !(rec = at(r, off, h->size)) ||
		    off + h->size > fh->data.offset + fh->data.size) {
			ret = fail(err, errlen, "corrupt record at offset %"
				   PRIu64, off);
			break;
		}
		off += h->size;
		rec += sizeof(*h);
		size_t len = h->size - sizeof(*h);

		if (h->type == PERF_RECORD_COMM && len >= 9) {
			char comm[64];

			memcpy(&pid, rec, 4);
			memcpy(&tid, rec + 4, 4);
			snprintf(comm, sizeof(comm), "%.*s", (int)(len - 8),
				 (const char *)rec + 8);
			if (a.sample_id_all)
				trailer_time(st, rec, len, &time);
			if (pid != PERF_DATA_VMM_PID)
				profile_comm_at(p, pid, tid, comm, time);
		} else if ((h->type == PERF_RECORD_MMAP && len > 32) ||
			   (h->type == PERF_RECORD_MMAP2 && len > 64)) {
			uint64_t m[3];
			size_t fo = h->type == PERF_RECORD_MMAP ? 32 : 64;
			char file[4096];
			bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK)
				      == PERF_RECORD_MISC_KERNEL;
			int id;

			if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
				continue;
			memcpy(&pid, rec, 4);
			memcpy(m, rec + 8, sizeof(m));
			snprintf(file, sizeof(file), "%.*s", (int)(len - fo),
				 (const char *)rec + fo);
			if (a.sample_id_all)
				trailer_time(st, rec, len, &time);
			id = mmap_image(p, &seen, &nseen, file, m[0], m[2],
					kernel);
			if (id >= 0 && !kernel)
				profile_image_pid(p, id, pid, time);
		} else if (h->type == PERF_RECORD_SAMPLE) {
			struct sample s = { 0 };
			const uint8_t *q = rec, *end = rec + len;
			uint32_t cm = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;

			/* Fields in perf's order; ours come before any
			 * variable-sized one, so the rest can be ignored. */
#define TAKE(dst, n) do { if (end - q < (n)) goto bad_sample; \
		memcpy(dst, q, n); q += (n); } while (0)
			if (st & PERF_SAMPLE_IDENTIFIER)
				q += 8;
			TAKE(&s.ip, 8);
			TAKE(&s.pid, 4);
			TAKE(&s.tid, 4);
			if (st & PERF_SAMPLE_TIME)
				TAKE(&s.time_ns, 8);
			if (st & PERF_SAMPLE_ADDR)
				q += 8;
			if (st & PERF_SAMPLE_ID)
				q += 8;
			if (st & PERF_SAMPLE_STREAM_ID)
				q += 8;
			if (st & PERF_SAMPLE_CPU) {
				TAKE(&s.cpu, 4);
				q += 4;
			}
			if (st & PERF_SAMPLE_PERIOD)
				TAKE(&s.period, 8);
			else
				s.period = a.freq ? 1 : a.sample_period;
#undef TAKE
			if (cm == PERF_RECORD_MISC_HYPERVISOR &&
			    s.pid == PERF_DATA_VMM_PID) {
				s.kind = SAMPLE_VMM;
				s.exit_reason = s.ip;
				s.ip = s.pid = s.tid = 0;
			} else if (cm == PERF_RECORD_MISC_KERNEL) {
				s.kind = SAMPLE_KERNEL;
			} else {
				s.kind = SAMPLE_USER;
			}
			if (profile_add(p, &s) < 0) {
				ret = fail(err, errlen, "out of memory");
				break;
			}
			continue;
bad_sample:
			ret = fail(err, errlen, "short sample record");
			break;
		}
	}
	for (size_t i = 0; i < nseen; i++)
		free(seen[i].path);
	free(seen);
	return ret;
}

int perf_data_read(struct profile **pp, const char *path,
		   char *err, size_t errlen)
{
	struct profile *p;
	struct rd r = { 0 };
	uint8_t *d = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "rb");
	int ret;

	*pp = NULL;
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	for (size_t got = 1; got;) {
		if (r.len == cap) {
			uint8_t *n = realloc(d, cap = cap ? 2 * cap : 65536);

			if (!n) {
				free(d);
				fclose(f);
				return fail(err, errlen, "out of memory");
			}
			d = n;
		}
		got = fread(d + r.len, 1, cap - r.len, f);
		r.len += got;
	}
	fclose(f);
	r.d = d;
	p = profile_new();
	if (!p) {
		free(d);
		return fail(err, errlen, "out of memory");
	}
	ret = parse_perf(p, &r, err, errlen);
	if (ret < 0) {
		char tmp[256];

		snprintf(tmp, sizeof(tmp), "%s", err ? err : "");
		fail(err, errlen, "%s: %s", path, tmp);
		profile_free(p);
	} else {
		*pp = p;
	}
	free(d);
	return ret;
}

int profile_open(struct profile **pp, const char *path,
		 char *err, size_t errlen)
{
	uint64_t magic = 0;
	FILE *f = fopen(path, "rb");

	*pp = NULL;
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fread(&magic, 1, sizeof(magic), f) != sizeof(magic))
		magic = 0;
	fclose(f);
	if (magic == PERF_DATA_MAGIC)
		return perf_data_read(pp, path, err, errlen);
	return profile_read(pp, path, err, errlen);
}
