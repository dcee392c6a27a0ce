// SPDX-License-Identifier: MIT
/*
 * perf.data reader (perf_data.c writes them): reads perf's own files as
 * well as ours, as far as `vmm report` needs, and profile_open() picks the
 * reader by the file's magic.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_data.h"

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

/* The reader's state while it walks the data section. */
struct rd_state {
	struct profile *p;
	struct perf_event_attr a;	/* the first (only) event's */
	uint64_t st;			/* a.sample_type */
	struct seen *seen;
	size_t nseen;
};

/* The header and the first attr: 0, or -1 with a message in err. */
static int rd_header(struct rd_state *s, const struct rd *r,
		     const struct perf_file_header *fh, char *err,
		     size_t errlen)
{
	const struct perf_event_attr *a = &s->a;
	const uint8_t *ap;
	char nbuf[64];

	if (!fh || fh->magic != PERF_DATA_MAGIC)
		return profile_fail(err, errlen, "not a perf.data file (or "
				    "from a machine of the other byte order)");
	if (fh->size != sizeof(*fh) ||
	    fh->attr_size < PERF_ATTR_SIZE_VER0 + 16 || !fh->attrs.size)
		return profile_fail(err, errlen, "unsupported perf.data header");
	ap = at(r, fh->attrs.offset, PERF_ATTR_SIZE_VER0);
	if (!ap)
		return profile_fail(err, errlen, "corrupt attrs section");
	memcpy(&s->a, ap, PERF_ATTR_SIZE_VER0);
	s->st = a->sample_type;
	if (!(s->st & PERF_SAMPLE_IP) || !(s->st & PERF_SAMPLE_TID))
		return profile_fail(err, errlen, "samples lack IP or TID");
	if (!at(r, fh->data.offset, fh->data.size))
		return profile_fail(err, errlen, "data section out of bounds");

	snprintf(nbuf, sizeof(nbuf), "%s", a->type == PERF_TYPE_SOFTWARE &&
		 a->config == PERF_COUNT_SW_CPU_CLOCK ? "cpu-clock" :
		 a->type == PERF_TYPE_SOFTWARE &&
		 a->config == PERF_COUNT_SW_TASK_CLOCK ? "task-clock" :
		 a->type == PERF_TYPE_HARDWARE &&
		 a->config == PERF_COUNT_HW_INSTRUCTIONS ? "instructions" :
		 a->type == PERF_TYPE_HARDWARE &&
		 a->config == PERF_COUNT_HW_CPU_CYCLES ? "cycles" : "event");
	event_desc_name(r, fh, nbuf, sizeof(nbuf));
	profile_set_event(s->p, nbuf, a->type, a->config);
	return 0;
}

static void rd_comm(struct rd_state *s, const uint8_t *rec, size_t len)
{
	uint64_t time = 0;
	uint32_t pid, tid;
	char comm[64];

	memcpy(&pid, rec, 4);
	memcpy(&tid, rec + 4, 4);
	snprintf(comm, sizeof(comm), "%.*s", (int)(len - 8),
		 (const char *)rec + 8);
	if (s->a.sample_id_all)
		trailer_time(s->st, rec, len, &time);
	if (pid != PERF_DATA_VMM_PID)
		profile_comm_at(s->p, pid, tid, comm, time);
}

static void rd_mmap(struct rd_state *s, const struct perf_event_header *h,
		    const uint8_t *rec, size_t len)
{
	uint64_t m[3];
	uint64_t time = 0;
	uint32_t pid;
	size_t fo = h->type == PERF_RECORD_MMAP ? 32 : 64;
	char file[4096];
	bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK)
		      == PERF_RECORD_MISC_KERNEL;
	int id;

	if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
		return;
	memcpy(&pid, rec, 4);
	memcpy(m, rec + 8, sizeof(m));
	snprintf(file, sizeof(file), "%.*s", (int)(len - fo),
		 (const char *)rec + fo);
	if (s->a.sample_id_all)
		trailer_time(s->st, rec, len, &time);
	id = mmap_image(s->p, &s->seen, &s->nseen, file, m[0], m[2], kernel);
	if (id >= 0 && !kernel)
		profile_image_pid(s->p, id, pid, time);
}

/*
 * A user sample's callers from its PERF_SAMPLE_CALLCHAIN (d[nr], NULL for
 * none): the user context's entries after the sample's own IP, at most
 * PROFILE_CHAIN_MAX into ips.  The kernel's part is left: we keep user
 * chains only.
 */
static size_t rd_user_chain(const uint8_t *d, uint64_t nr, uint64_t ip,
			    uint64_t *ips)
{
	bool user = false, first = true;
	size_t n = 0;

	for (uint64_t i = 0; d && i < nr && n < PROFILE_CHAIN_MAX; i++) {
		uint64_t v;

		memcpy(&v, d + 8 * i, 8);
		if (v >= PERF_CONTEXT_MAX) {
			user = v == PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;
		if (first && v == ip) {
			first = false;
			continue;
		}
		first = false;
		ips[n++] = v;
	}
	return n;
}

/* A PERF_RECORD_SAMPLE: 0, or -1 with a message in err. */
static int rd_sample(struct rd_state *s, const struct perf_event_header *h,
		     const uint8_t *rec, size_t len, char *err, size_t errlen)
{
	struct sample smp = { 0 };
	const uint8_t *q = rec, *end = rec + len, *chain = NULL;
	uint32_t cm = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint64_t st = s->st, nr = 0, ips[PROFILE_CHAIN_MAX];
	size_t n = 0;

	/* Fields in perf's order; ours come before any variable-sized one,
	 * so the rest can be ignored. */
#define TAKE(dst, n) do { if (end - q < (n)) goto bad_sample; \
		memcpy(dst, q, n); q += (n); } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER)
		q += 8;
	TAKE(&smp.ip, 8);
	TAKE(&smp.pid, 4);
	TAKE(&smp.tid, 4);
	if (st & PERF_SAMPLE_TIME)
		TAKE(&smp.time_ns, 8);
	if (st & PERF_SAMPLE_ADDR)
		q += 8;
	if (st & PERF_SAMPLE_ID)
		q += 8;
	if (st & PERF_SAMPLE_STREAM_ID)
		q += 8;
	if (st & PERF_SAMPLE_CPU) {
		TAKE(&smp.cpu, 4);
		q += 4;
	}
	if (st & PERF_SAMPLE_PERIOD)
		TAKE(&smp.period, 8);
	else
		smp.period = s->a.freq ? 1 : s->a.sample_period;
	/* READ's size varies with read_format: a chain after it is left. */
	if ((st & PERF_SAMPLE_CALLCHAIN) && !(st & PERF_SAMPLE_READ)) {
		TAKE(&nr, 8);
		if (nr > (uint64_t)(end - q) / 8)
			goto bad_sample;
		chain = q;
	}
#undef TAKE
	if (cm == PERF_RECORD_MISC_HYPERVISOR &&
	    smp.pid == PERF_DATA_VMM_PID) {
		smp.kind = SAMPLE_VMM;
		smp.exit_reason = smp.ip;
		smp.ip = smp.pid = smp.tid = 0;
	} else if (cm == PERF_RECORD_MISC_KERNEL) {
		smp.kind = SAMPLE_KERNEL;
	} else {
		smp.kind = SAMPLE_USER;
	}
	if (smp.kind == SAMPLE_USER)
		n = rd_user_chain(chain, nr, smp.ip, ips);
	if (profile_add_chain(s->p, &smp, ips, n) < 0)
		return profile_fail(err, errlen, "out of memory");
	return 0;
bad_sample:
	return profile_fail(err, errlen, "short sample record");
}

static int parse_perf(struct profile *p, const struct rd *r,
		      char *err, size_t errlen)
{
	const struct perf_file_header *fh = at(r, 0, sizeof(*fh));
	struct rd_state s = { .p = p };
	int ret = 0;

	if (rd_header(&s, r, fh, err, errlen))
		return -1;
	for (uint64_t off = fh->data.offset;
	     off < fh->data.offset + fh->data.size;) {
		const void *hp = at(r, off, sizeof(struct perf_event_header));
		struct perf_event_header hb, *h = &hb;
		const uint8_t *rec;
		size_t len;

		/* Copied: a corrupt size can leave records misaligned. */
		if (hp)
			memcpy(&hb, hp, sizeof(hb));
		if (!hp || h->size < sizeof(*h) ||
		    !(rec = at(r, off, h->size)) ||
		    off + h->size > fh->data.offset + fh->data.size) {
			ret = profile_fail(err, errlen, "corrupt record at "
					   "offset %" PRIu64, off);
			break;
		}
		off += h->size;
		rec += sizeof(*h);
		len = h->size - sizeof(*h);
		if (h->type == PERF_RECORD_COMM && len >= 9) {
			rd_comm(&s, rec, len);
		} else if ((h->type == PERF_RECORD_MMAP && len > 32) ||
			   (h->type == PERF_RECORD_MMAP2 && len > 64)) {
			rd_mmap(&s, h, rec, len);
		} else if (h->type == PERF_RECORD_SAMPLE) {
			ret = rd_sample(&s, h, rec, len, err, errlen);
			if (ret)
				break;
		}
	}
	for (size_t i = 0; i < s.nseen; i++)
		free(s.seen[i].path);
	free(s.seen);
	return ret;
}

static int parse_perf_bytes(struct profile *p, const uint8_t *d, size_t len,
			    char *err, size_t errlen)
{
	const struct rd r = { d, len };

	return parse_perf(p, &r, err, errlen);
}

int perf_data_read(struct profile **pp, const char *path,
		   char *err, size_t errlen)
{
	return profile_load(pp, path, parse_perf_bytes, err, errlen);
}

int profile_open(struct profile **pp, const char *path,
		 char *err, size_t errlen)
{
	uint64_t magic = 0;
	FILE *f = fopen(path, "rb");

	*pp = NULL;
	if (!f)
		return profile_fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fread(&magic, 1, sizeof(magic), f) != sizeof(magic))
		magic = 0;
	fclose(f);
	if (magic == PERF_DATA_MAGIC)
		return perf_data_read(pp, path, err, errlen);
	return profile_read(pp, path, err, errlen);
}
