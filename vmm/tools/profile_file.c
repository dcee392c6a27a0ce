// SPDX-License-Identifier: MIT
/*
 * Profiles: our own file format, perfvisor.data (docs/profiling.md):
 * self-describing, versioned, and carrying the symbol tables, so a report
 * needs no binaries.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

/* ---- perfvisor.data ---- */

/*
 * File layout (little-endian; docs/profiling.md):
 *   header: magic "PVPROF\0\0", u32 version, u32 header size
 *   records: u32 type, u32 zero, u64 payload length, payload padded to 8
 * A reader skips record types it does not know, so new record types do
 * not need a new version; a changed record does.  The END record proves
 * the file was not cut short.
 */
#define PVPROF_MAGIC	"PVPROF\0\0"
#define PVPROF_VERSION	1u

enum pvprof_rec {
	REC_EVENT = 1,	/* u32 perf_type, u32 name len, u64 config, name */
	REC_COMM = 2,	/* u32 pid, u32 tid, u64 time, u32 len, name */
	REC_IMAGE = 3,	/* see image_write() */
	REC_BIND = 4,	/* u32 image, u32 pid, u64 since */
	REC_SAMPLES = 5,	/* u64 count, count x 40-byte samples */
	REC_END = 6,
	REC_CHAINS = 7,	/* u64 count, count x (u64 sample, u32 n, u32 0,
			 * n x u64 ip): after REC_SAMPLES */
};

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		uint8_t *np;

		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put16(struct buf *b, uint16_t v)
{
	v = htole16(v);
	put(b, &v, 2);
}

static void put32(struct buf *b, uint32_t v)
{
	v = htole32(v);
	put(b, &v, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	v = htole64(v);
	put(b, &v, 8);
}

static void put_pad(struct buf *b)
{
	static const uint8_t zero[8];

	put(b, zero, (8 - b->len % 8) % 8);
}

/* Start a record; rec_end() fills in its length. */
static size_t rec_begin(struct buf *b, uint32_t type)
{
	size_t at;

	put32(b, type);
	put32(b, 0);
	at = b->len;
	put64(b, 0);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	uint64_t len;

	put_pad(b);
	if (b->oom)
		return;
	len = htole64(b->len - at - 8);
	memcpy(b->p + at, &len, 8);
}

static void put_str(struct buf *b, const char *s)
{
	put32(b, s ? strlen(s) : UINT32_MAX);	/* UINT32_MAX: NULL */
	if (s)
		put(b, s, strlen(s));
}

/*
 * REC_IMAGE: u8 kernel, 7 zero, u64 bias, u32 nsegs, u32 nsyms,
 * u64 strs_len, name, path (put_str), segs (start, len, pgoff),
 * syms (start, end, u32 name offset, u32 zero), strs.
 */
static void image_write(struct buf *b, const struct image *im)
{
	size_t at = rec_begin(b, REC_IMAGE);

	put8(b, im->kernel);
	put(b, "\0\0\0\0\0\0\0", 7);
	put64(b, im->bias);
	put32(b, im->nsegs);
	put32(b, im->nsyms);
	put64(b, im->strs_len);
	put_str(b, im->name);
	put_str(b, im->path);
	for (size_t i = 0; i < im->nsegs; i++) {
		put64(b, im->segs[i].start);
		put64(b, im->segs[i].len);
		put64(b, im->segs[i].pgoff);
	}
	for (size_t i = 0; i < im->nsyms; i++) {
		put64(b, im->syms[i].start);
		put64(b, im->syms[i].end);
		put32(b, im->syms[i].name);
		put32(b, 0);
	}
	put(b, im->strs, im->strs_len);
	rec_end(b, at);
}

/* REC_CHAINS: the samples' call chains, by sample index. */
static void chains_write(struct buf *b, const struct profile *p)
{
	size_t at = rec_begin(b, REC_CHAINS), n = 0;
	const uint64_t *ips;

	for (size_t i = 0; i < p->nsamples; i++)
		n += p->samples[i].chain_nr > 0;
	put64(b, n);
	for (size_t i = 0; i < p->nsamples; i++) {
		ips = profile_sample_chain(p, &p->samples[i], &n);
		if (!ips)
			continue;
		put64(b, i);
		put32(b, n);
		put32(b, 0);
		for (size_t j = 0; j < n; j++)
			put64(b, ips[j]);
	}
	rec_end(b, at);
}

int profile_write(const struct profile *p, const char *path,
		  char *err, size_t errlen)
{
	struct buf b = { 0 };
	size_t at;
	FILE *f;
	int ret = 0;

	put(&b, PVPROF_MAGIC, 8);
	put32(&b, PVPROF_VERSION);
	put32(&b, 16);
	at = rec_begin(&b, REC_EVENT);
	put32(&b, p->perf_type);
	put32(&b, strlen(p->event));
	put64(&b, p->perf_config);
	put(&b, p->event, strlen(p->event));
	rec_end(&b, at);
	for (size_t i = 0; i < p->ncomms; i++) {
		at = rec_begin(&b, REC_COMM);
		put32(&b, p->comms[i].pid);
		put32(&b, p->comms[i].tid);
		put64(&b, p->comms[i].time);
		put_str(&b, p->comms[i].name);
		rec_end(&b, at);
	}
	for (size_t i = 0; i < p->nimages; i++)
		image_write(&b, &p->images[i]);
	for (size_t i = 0; i < p->nbinds; i++) {
		at = rec_begin(&b, REC_BIND);
		put32(&b, p->binds[i].image);
		put32(&b, p->binds[i].pid);
		put64(&b, p->binds[i].since);
		rec_end(&b, at);
	}
	at = rec_begin(&b, REC_SAMPLES);
	put64(&b, p->nsamples);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];

		put32(&b, s->pid);
		put32(&b, s->tid);
		put32(&b, s->cpu);
		put8(&b, s->kind);
		put8(&b, 0);
		put16(&b, s->exit_reason);
		put64(&b, s->ip);
		put64(&b, s->time_ns);
		put64(&b, s->period);
	}
	rec_end(&b, at);
	if (profile_has_chains(p))
		chains_write(&b, p);
	at = rec_begin(&b, REC_END);
	rec_end(&b, at);
	if (b.oom) {
		free(b.p);
		return profile_fail(err, errlen, "out of memory");
	}
	f = fopen(path, "wb");
	if (!f) {
		free(b.p);
		return profile_fail(err, errlen, "%s: %s", path, strerror(errno));
	}
	if (fwrite(b.p, 1, b.len, f) != b.len)
		ret = profile_fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fclose(f) != 0 && !ret)
		ret = profile_fail(err, errlen, "%s: %s", path, strerror(errno));
	free(b.p);
	return ret;
}

/* A bounds-checked cursor over one record's payload. */
struct cur {
	const uint8_t *p;
	size_t len, at;
	bool bad;
};

static const void *get(struct cur *c, size_t n)
{
	const void *r;

	if (c->bad || n > c->len - c->at) {
		c->bad = true;
		return NULL;
	}
	r = c->p + c->at;
	c->at += n;
	return r;
}

#define GETTER(bits)							\
static uint##bits##_t get##bits(struct cur *c)				\
{									\
	uint##bits##_t v;						\
	const void *d = get(c, sizeof(v));				\
									\
	if (!d)								\
		return 0;						\
	memcpy(&v, d, sizeof(v));					\
	return le##bits##toh(v);					\
}
GETTER(16)
GETTER(32)
GETTER(64)

static uint8_t get8(struct cur *c)
{
	const uint8_t *d = get(c, 1);

	return d ? *d : 0;
}

/* A string; *s is NULL for the NULL marker.  Returns false if malformed. */
static bool get_str(struct cur *c, char **s)
{
	uint32_t n = get32(c);
	const void *d;

	*s = NULL;
	if (n == UINT32_MAX)
		return !c->bad;
	d = get(c, n);
	if (!d)
		return false;
	*s = strndup(d, n);
	return *s != NULL;
}

static int image_read(struct profile *p, struct cur *c)
{
	struct image im = { 0 };
	struct image *n;

	im.kernel = get8(c);
	get(c, 7);
	im.bias = get64(c);
	im.nsegs = get32(c);
	im.nsyms = get32(c);
	im.strs_len = get64(c);
	if (!get_str(c, &im.name) || !im.name || !get_str(c, &im.path))
		goto bad;
	/* Counts must fit the record before anything is allocated. */
	if (c->bad || im.nsegs > (c->len - c->at) / 24 ||
	    im.nsyms > (c->len - c->at) / 24 || im.strs_len > c->len - c->at)
		goto bad;
	im.segs = calloc(im.nsegs + 1, sizeof(*im.segs));
	im.syms = calloc(im.nsyms + 1, sizeof(*im.syms));
	im.strs = malloc(im.strs_len + 1);
	if (!im.segs || !im.syms || !im.strs)
		goto bad;
	for (size_t i = 0; i < im.nsegs; i++) {
		im.segs[i].start = get64(c);
		im.segs[i].len = get64(c);
		im.segs[i].pgoff = get64(c);
	}
	for (size_t i = 0; i < im.nsyms; i++) {
		im.syms[i].start = get64(c);
		im.syms[i].end = get64(c);
		im.syms[i].name = get32(c);
		get32(c);
		if (im.syms[i].name >= im.strs_len ||
		    (i && im.syms[i].start < im.syms[i - 1].start))
			goto bad;
	}
	const void *s = get(c, im.strs_len);

	if (!s || (im.strs_len && ((const char *)s)[im.strs_len - 1]))
		goto bad;	/* names must be NUL-terminated */
	memcpy(im.strs, s, im.strs_len);
	n = realloc(p->images, (p->nimages + 1) * sizeof(*n));
	if (!n)
		goto bad;
	p->images = n;
	p->images[p->nimages++] = im;
	return 0;
bad:
	profile_image_free(&im);
	return -1;
}

/* REC_CHAINS back onto the samples read so far: 0, or -1 if corrupt. */
static int chains_read(struct profile *p, struct cur *c)
{
	uint64_t n = get64(c), ips[PROFILE_CHAIN_MAX];

	if (c->bad || n > (c->len - c->at) / 16)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t idx = get64(c);
		uint32_t nr = get32(c);

		get32(c);
		if (c->bad || idx >= p->nsamples || p->samples[idx].chain_nr ||
		    !nr || nr > PROFILE_CHAIN_MAX)
			return -1;
		for (uint32_t j = 0; j < nr; j++)
			ips[j] = get64(c);
		if (c->bad || profile_chain_attach(p, idx, ips, nr) < 0)
			return -1;
	}
	return 0;
}

static int parse(struct profile *p, const uint8_t *d, size_t len,
		 char *err, size_t errlen)
{
	struct cur f = { d, len, 0, false };
	const void *magic = get(&f, 8);
	uint32_t version = get32(&f), hsize = get32(&f);
	bool end = false;

	if (!magic || memcmp(magic, PVPROF_MAGIC, 8))
		return profile_fail(err, errlen, "not a perfvisor.data file");
	if (version != PVPROF_VERSION)
		return profile_fail(err, errlen, "perfvisor.data version %u, this vmm "
				    "reads version %u", version, PVPROF_VERSION);
	if (hsize < 16 || hsize > len)
		return profile_fail(err, errlen, "corrupt header");
	f.at = hsize;
	while (!end) {
		uint32_t type = get32(&f);
		uint64_t plen;
		struct cur c;
		char *s = NULL;

		get32(&f);
		plen = get64(&f);
		c.p = get(&f, plen);
		c.len = plen;
		c.at = 0;
		c.bad = false;
		if (f.bad || !c.p)
			return profile_fail(err, errlen, "truncated file");
		switch (type) {
		case REC_EVENT: {
			uint32_t t = get32(&c), nl = get32(&c);
			uint64_t cfg = get64(&c);
			const void *nm = get(&c, nl);

			if (!nm || !(s = strndup(nm, nl)))
				goto corrupt;
			profile_set_event(p, s, t, cfg);
			free(s);
			break;
		}
		case REC_COMM: {
			uint32_t pid = get32(&c), tid = get32(&c);
			uint64_t t = get64(&c);

			if (!get_str(&c, &s) || !s)
				goto corrupt;
			profile_comm_at(p, pid, tid, s, t);
			free(s);
			break;
		}
		case REC_IMAGE:
			if (image_read(p, &c) < 0)
				goto corrupt;
			break;
		case REC_BIND: {
			uint32_t im = get32(&c), pid = get32(&c);
			uint64_t since = get64(&c);

			if (c.bad || im >= p->nimages)
				goto corrupt;
			profile_image_pid(p, im, pid, since);
			break;
		}
		case REC_SAMPLES: {
			uint64_t n = get64(&c);

			if (c.bad || n > (c.len - c.at) / 40)
				goto corrupt;
			for (uint64_t i = 0; i < n; i++) {
				struct sample sm = { 0 };

				sm.pid = get32(&c);
				sm.tid = get32(&c);
				sm.cpu = get32(&c);
				sm.kind = get8(&c);
				get8(&c);
				sm.exit_reason = get16(&c);
				sm.ip = get64(&c);
				sm.time_ns = get64(&c);
				sm.period = get64(&c);
				if (sm.kind > SAMPLE_VMM)
					goto corrupt;
				if (profile_add(p, &sm) < 0)
					return profile_fail(err, errlen,
							    "out of memory");
			}
			break;
		}
		case REC_CHAINS:
			if (chains_read(p, &c) < 0)
				goto corrupt;
			break;
		case REC_END:
			end = true;
			break;
		default:
			break;	/* a newer writer's record: skip it */
		}
		if (c.bad)
			goto corrupt;
		continue;
corrupt:
		return profile_fail(err, errlen, "corrupt record (type %u) at offset "
				    "%zu", type, f.at - (size_t)plen);
	}
	return 0;
}

int profile_load(struct profile **pp, const char *path,
		 profile_parse_fn parse_fn, char *err, size_t errlen)
{
	struct profile *p;
	uint8_t *d = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "rb");
	int ret;

	*pp = NULL;
	if (!f)
		return profile_fail(err, errlen, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			uint8_t *n = realloc(d, cap = cap ? 2 * cap : 65536);

			if (!n) {
				fclose(f);
				free(d);
				return profile_fail(err, errlen, "out of memory");
			}
			d = n;
		}
		size_t got = fread(d + len, 1, cap - len, f);

		len += got;
		if (!got)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		free(d);
		return profile_fail(err, errlen, "%s: read error", path);
	}
	fclose(f);
	p = profile_new();
	if (!p) {
		free(d);
		return profile_fail(err, errlen, "out of memory");
	}
	ret = parse_fn(p, d, len, err, errlen);
	if (ret < 0) {
		char tmp[256];

		snprintf(tmp, sizeof(tmp), "%s", err ? err : "");
		profile_fail(err, errlen, "%s: %s", path, tmp);
		profile_free(p);
	} else {
		*pp = p;
	}
	free(d);
	return ret;
}

int profile_read(struct profile **pp, const char *path,
		 char *err, size_t errlen)
{
	return profile_load(pp, path, parse, err, errlen);
}

