// SPDX-License-Identifier: MIT
/*
 * Sampling profiles: storage, symbolization, aggregation, the report table
 * and our own file format.  Nothing here talks to KVM; the sampling code
 * hands us struct sample and this file does everything after.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hypercall.h"
#include "profile.h"
#include "vpmu.h"

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

static void image_free(struct image *im)
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
		image_free(&p->images[i]);
	for (size_t i = 0; i < p->ncomms; i++)
		free(p->comms[i].name);
	free(p->images);
	free(p->comms);
	free(p->binds);
	free(p->samples);
	free(p->event);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int profile_add(struct profile *p, const struct sample *s)
{
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	if (p->nsamples == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		struct sample *n = realloc(p->samples, cap * sizeof(*n));

		if (!n) {
			ret = -1;
			goto out;
		}
		p->samples = n;
		p->cap = cap;
	}
	p->samples[p->nsamples++] = *s;
out:
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static int comm_cmp(uint32_t tid_a, uint64_t time_a, const struct comm *b)
{
	if (tid_a != b->tid)
		return tid_a < b->tid ? -1 : 1;
	if (time_a != b->time)
		return time_a < b->time ? -1 : 1;
	return 0;
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

/* ---- Images and symbols ---- */

/* A symbol candidate before duplicates are merged. */
struct rawsym {
	uint64_t start, size, secend;
	const char *name;
	int rank;		/* higher wins among symbols at one address */
};

static int rawsym_cmp(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	return strcmp(x->name, y->name);
}

/*
 * Which of several symbols at one address to show, as perf's
 * choose_best_symbol does: a sized function over a label, global over
 * weak over local, then the name without leading underscores (memcpy over
 * __memcpy_fwd is what a reader expects).
 */
static int sym_rank(const GElf_Sym *s, const char *name)
{
	int r = 0;

	if (s->st_size)
		r += 8;
	if (GELF_ST_TYPE(s->st_info) == STT_FUNC ||
	    GELF_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
		r += 4;
	if (GELF_ST_BIND(s->st_info) == STB_GLOBAL)
		r += 2;
	else if (GELF_ST_BIND(s->st_info) == STB_WEAK)
		r += 1;
	if (name[0] != '_')
		r += 1;
	return r;
}

static Elf_Scn *find_symtab(Elf *e, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr dsh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		if (sh->sh_type == SHT_SYMTAB)
			return scn;
		if (sh->sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dsh = *sh;
		}
	}
	if (dyn)
		*sh = dsh;
	return dyn;
}

static int image_load_syms(struct image *im, Elf *e, char *err, size_t errlen)
{
	GElf_Shdr sh, ssh;
	Elf_Scn *scn = find_symtab(e, &sh);
	Elf_Data *d;
	struct rawsym *raw = NULL;
	size_t n = 0, shnum, strsz = 0, out = 0;
	int ret = -1;

	if (!scn)
		return 0;	/* stripped: every IP shows as an address */
	if (elf_getshdrnum(e, &shnum) < 0 || !(d = elf_getdata(scn, NULL)))
		return fail(err, errlen, "%s: bad symbol table: %s", im->name,
			    elf_errmsg(-1));
	size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

	raw = calloc(count ? count : 1, sizeof(*raw));
	if (!raw)
		return fail(err, errlen, "out of memory");
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(d, i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= shnum)
			continue;	/* also SHN_ABS: linker-script values */
		if (!gelf_getshdr(elf_getscn(e, s.st_shndx), &ssh))
			continue;
		/*
		 * Functions, and untyped labels in code: the guest kernel's
		 * assembly entry points are NOTYPE and are where interrupt
		 * and system-call samples land.
		 */
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && (ssh.sh_flags & SHF_EXECINSTR)))
			continue;
		name = elf_strptr(e, sh.sh_link, s.st_name);
		if (!name || !name[0])
			continue;
		raw[n++] = (struct rawsym){
			.start = s.st_value + im->bias, .size = s.st_size,
			.secend = ssh.sh_addr + ssh.sh_size + im->bias,
			.name = name, .rank = sym_rank(&s, name),
		};
	}
	qsort(raw, n, sizeof(*raw), rawsym_cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || raw[i].start != raw[i - 1].start)
			strsz += strlen(raw[i].name) + 1;
	im->syms = calloc(n ? n : 1, sizeof(*im->syms));
	im->strs = malloc(strsz ? strsz : 1);
	if (!im->syms || !im->strs) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t end;
		size_t j = i + 1;

		if (i > 0 && raw[i].start == raw[i - 1].start)
			continue;	/* the best one came first */
		while (j < n && raw[j].start == raw[i].start)
			j++;
		/*
		 * Labels have no size: they reach to the next symbol or the
		 * end of their section, as perf's symbols__fixup_end does.
		 */
		if (raw[i].size)
			end = raw[i].start + raw[i].size;
		else
			end = j < n && raw[j].start < raw[i].secend ?
			      raw[j].start : raw[i].secend;
		if (end <= raw[i].start)
			end = raw[i].start + 1;
		im->syms[out].start = raw[i].start;
		im->syms[out].end = end;
		im->syms[out].name = im->strs_len;
		strcpy(im->strs + im->strs_len, raw[i].name);
		im->strs_len += strlen(raw[i].name) + 1;
		out++;
	}
	im->nsyms = out;
	ret = 0;
out:
	free(raw);
	return ret;
}

static int image_load_segs(struct image *im, Elf *e, char *err, size_t errlen)
{
	size_t phnum;

	if (elf_getphdrnum(e, &phnum) < 0)
		return fail(err, errlen, "%s: no program headers", im->name);
	im->segs = calloc(phnum ? phnum : 1, sizeof(*im->segs));
	if (!im->segs)
		return fail(err, errlen, "out of memory");
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t start, end;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		/* Page granularity, as the mmap perf would have seen. */
		start = (ph.p_vaddr + im->bias) & ~4095ull;
		end = (ph.p_vaddr + im->bias + ph.p_memsz + 4095) & ~4095ull;
		im->segs[im->nsegs++] = (struct profile_segment){
			.start = start, .len = end - start,
			.pgoff = ph.p_offset & ~4095ull,
		};
	}
	if (!im->nsegs)
		return fail(err, errlen, "%s: no executable segment", im->name);
	return 0;
}

static int image_add(struct profile *p, Elf *e, const char *name,
		     const char *host_path, uint64_t load_bias, bool kernel,
		     char *err, size_t errlen)
{
	struct image im = { .kernel = kernel, .bias = load_bias };
	struct image *n;
	GElf_Ehdr eh;

	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return fail(err, errlen, "%s: not an ELF file", name);
	im.name = strdup(name);
	/*
	 * perf.data needs an absolute path: perf takes a kernel mapping of a
	 * relative name for something else, and may run in another directory.
	 */
	im.path = host_path ? realpath(host_path, NULL) : NULL;
	if (host_path && !im.path)
		im.path = strdup(host_path);
	if (!im.name || (host_path && !im.path)) {
		image_free(&im);
		return fail(err, errlen, "out of memory");
	}
	if (image_load_segs(&im, e, err, errlen) < 0 ||
	    image_load_syms(&im, e, err, errlen) < 0) {
		image_free(&im);
		return -1;
	}
	n = realloc(p->images, (p->nimages + 1) * sizeof(*n));
	if (!n) {
		image_free(&im);
		return fail(err, errlen, "out of memory");
	}
	p->images = n;
	p->images[p->nimages] = im;
	return p->nimages++;
}

int profile_add_image_mem(struct profile *p, const char *name,
			  const char *host_path, const void *buf, size_t len,
			  uint64_t load_bias, bool kernel,
			  char *err, size_t errlen)
{
	Elf *e;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, errlen, "libelf: %s", elf_errmsg(-1));
	e = elf_memory((char *)buf, len);
	ret = image_add(p, e, name, host_path, load_bias, kernel, err, errlen);
	if (e)
		elf_end(e);
	return ret;
}

int profile_add_image(struct profile *p, const char *name,
		      const char *host_path, uint64_t load_bias, bool kernel,
		      char *err, size_t errlen)
{
	Elf *e;
	int fd, ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, errlen, "libelf: %s", elf_errmsg(-1));
	fd = open(host_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "%s: %s", host_path, strerror(errno));
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ret = image_add(p, e, name, host_path, load_bias, kernel, err, errlen);
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

void profile_image_pid(struct profile *p, int image, uint32_t pid,
		       uint64_t since_ns)
{
	struct binding *n;

	if (image < 0 || (size_t)image >= p->nimages)
		return;
	n = realloc(p->binds, (p->nbinds + 1) * sizeof(*n));
	if (!n)
		return;
	p->binds = n;
	p->binds[p->nbinds++] = (struct binding){ image, pid, since_ns };
}

static bool image_has(const struct image *im, uint64_t ip)
{
	for (size_t i = 0; i < im->nsegs; i++)
		if (ip - im->segs[i].start < im->segs[i].len)
			return true;
	return false;
}

static bool image_bound(const struct profile *p, size_t image)
{
	for (size_t i = 0; i < p->nbinds; i++)
		if (p->binds[i].image == (int)image)
			return true;
	return false;
}

/* The image an IP of sample s lies in, or -1. */
static int find_image(const struct profile *p, const struct sample *s)
{
	bool kernel = s->kind == SAMPLE_KERNEL;
	const struct binding *best = NULL;

	if (!kernel) {
		/* The process's latest exec at or before the sample. */
		for (size_t i = 0; i < p->nbinds; i++) {
			const struct binding *b = &p->binds[i];

			if (b->pid == s->pid && b->since <= s->time_ns &&
			    image_has(&p->images[b->image], s->ip) &&
			    (!best || b->since >= best->since))
				best = b;
		}
		if (best)
			return best->image;
	}
	for (size_t i = 0; i < p->nimages; i++)
		if (p->images[i].kernel == kernel && !image_bound(p, i) &&
		    image_has(&p->images[i], s->ip))
			return i;
	return -1;
}

static const struct psym *find_sym(const struct image *im, uint64_t ip)
{
	size_t lo = 0, hi = im->nsyms;

	/* The last symbol starting at or below ip. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->syms[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ip >= im->syms[lo - 1].end)
		return NULL;
	return &im->syms[lo - 1];
}

void profile_resolve(const struct profile *p, const struct sample *s,
		     struct sym_info *si)
{
	const struct psym *ps;
	int i;

	memset(si, 0, sizeof(*si));
	si->image = -1;
	if (s->kind == SAMPLE_VMM) {
		si->dso = "[vmm]";
		si->level = 'v';
		return;
	}
	si->level = s->kind == SAMPLE_KERNEL ? 'k' : '.';
	si->dso = "[unknown]";
	i = find_image(p, s);
	if (i < 0)
		return;
	si->image = i;
	si->dso = p->images[i].name;
	ps = find_sym(&p->images[i], s->ip);
	if (ps) {
		si->sym = p->images[i].strs + ps->name;
		si->sym_start = ps->start;
	}
}

static const struct comm *find_comm(const struct profile *p, uint32_t tid,
				    uint64_t time)
{
	size_t lo = 0, hi = p->ncomms;

	/* The last entry at or before (tid, time). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (comm_cmp(tid, time, &p->comms[mid]) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && p->comms[lo - 1].tid == tid)
		return &p->comms[lo - 1];
	/* Sampled before its first name: the earliest name is the best. */
	if (lo < p->ncomms && p->comms[lo].tid == tid)
		return &p->comms[lo];
	return NULL;
}

const char *profile_comm_of(const struct profile *p, const struct sample *s,
			    char *buf, size_t len)
{
	const struct comm *c;

	if (s->kind == SAMPLE_VMM)
		return "[vmm]";
	c = find_comm(p, s->tid, s->time_ns);
	/* A thread never named runs its process's program. */
	if (!c && s->tid != s->pid)
		c = find_comm(p, s->pid, s->time_ns);
	if (c)
		return c->name;
	snprintf(buf, len, ":%" PRIu32, s->tid);	/* as perf shows it */
	return buf;
}

const char *profile_exit_name(uint16_t r, char *buf, size_t len)
{
	static const char *const kvm[] = {
		[KVM_EXIT_UNKNOWN] = "unknown",
		[KVM_EXIT_EXCEPTION] = "exception",
		[KVM_EXIT_IO] = "io",
		[KVM_EXIT_HYPERCALL] = "kvm_hypercall",
		[KVM_EXIT_DEBUG] = "debug",
		[KVM_EXIT_HLT] = "hlt",
		[KVM_EXIT_MMIO] = "mmio",
		[KVM_EXIT_IRQ_WINDOW_OPEN] = "irq_window_open",
		[KVM_EXIT_SHUTDOWN] = "shutdown",
		[KVM_EXIT_FAIL_ENTRY] = "fail_entry",
		[KVM_EXIT_INTR] = "intr",
		[KVM_EXIT_SET_TPR] = "set_tpr",
		[KVM_EXIT_TPR_ACCESS] = "tpr_access",
		[KVM_EXIT_NMI] = "nmi",
		[KVM_EXIT_INTERNAL_ERROR] = "internal_error",
		[KVM_EXIT_SYSTEM_EVENT] = "system_event",
		[KVM_EXIT_IOAPIC_EOI] = "ioapic_eoi",
		[KVM_EXIT_X86_RDMSR] = "msr_read",
		[KVM_EXIT_X86_WRMSR] = "msr_write",
		[KVM_EXIT_X86_BUS_LOCK] = "bus_lock",
		[KVM_EXIT_NOTIFY] = "notify",
	};
	static const char *const hc[] = {
		[PV_HC_EXIT] = "exit",
		[PV_HC_WRITE] = "write",
		[PV_HC_READ] = "read",
		[PV_HC_LOG] = "log",
		[PV_HC_PANIC] = "panic",
		[PV_HC_COPY] = "copy",
		[PV_HC_ZERO] = "zero",
		[PV_HC_MEMCPY] = "memcpy",
		[PV_HC_MEMSET] = "memset",
		[PV_HC_STAT_THREAD] = "stat_thread",
		[PV_HC_PMU_VCPU_PAGE] = "pmu_vcpu_page",
		[PV_HC_PMU_SWITCH] = "pmu_switch",
		[PV_HC_PMU_POLL] = "pmu_poll",
	};

	if (r < sizeof(kvm) / sizeof(kvm[0]) && kvm[r])
		return kvm[r];
	if (r >= PROFILE_HC_BASE && r - PROFILE_HC_BASE < (int)(sizeof(hc) /
	    sizeof(hc[0])) && hc[r - PROFILE_HC_BASE])
		return hc[r - PROFILE_HC_BASE];
	if (r >= PROFILE_HC_BASE)
		snprintf(buf, len, "hypercall_%u", r - PROFILE_HC_BASE);
	else
		snprintf(buf, len, "%u", r);
	return buf;
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

bool profile_image_global(const struct profile *p, int image)
{
	return !image_bound(p, image);
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

/* ---- Report ---- */

enum sort_key { K_COMM, K_PID, K_TID, K_DSO, K_SYM, K_CPU, K_NR };

static const char *const key_names[K_NR] = {
	"comm", "pid", "tid", "dso", "sym", "cpu",
};
static const char *const key_headers[K_NR] = {
	"Command", "Pid:Command", "Tid:Command", "Shared Object", "Symbol",
	"CPU",
};

#define MAX_KEYS 8
#define COL_MAX 512

static int parse_sort(const char *sort, enum sort_key *keys, char *err,
		      size_t errlen)
{
	char buf[256], *tok, *save;
	int n = 0;

	if (!sort)
		sort = "comm,dso,sym";
	if (strlen(sort) >= sizeof(buf))
		return fail(err, errlen, "--sort list too long");
	strcpy(buf, sort);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < K_NR; k++)
			if (!strcmp(tok, key_names[k]))
				break;
		if (k == K_NR)
			return fail(err, errlen, "unknown --sort key '%s' "
				    "(keys: comm,pid,tid,dso,sym,cpu)", tok);
		if (n == MAX_KEYS)
			return fail(err, errlen, "too many --sort keys");
		keys[n++] = k;
	}
	if (!n)
		return fail(err, errlen, "empty --sort list");
	return n;
}

int profile_sort_check(const char *sort, char *err, size_t errlen)
{
	enum sort_key keys[MAX_KEYS];

	return parse_sort(sort, keys, err, errlen) < 0 ? -1 : 0;
}

/* One sample, resolved; after merging, one row. */
struct row {
	const char *comm;	/* NULL: unnamed thread, shown ":tid" */
	const char *dso;
	const char *sym;	/* NULL: shown from addr */
	uint64_t addr;		/* ip, or exit reason when level 'v' */
	uint32_t pid, tid, cpu;
	char level;
	uint64_t period, nr;
};

struct sorter {
	const enum sort_key *keys;
	int nkeys;
};

static int ucmp(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int comm_str_cmp(const struct row *a, const struct row *b)
{
	if (a->comm && b->comm)
		return strcmp(a->comm, b->comm);
	if (!a->comm && !b->comm)
		return ucmp(a->tid, b->tid);
	return a->comm ? -1 : 1;
}

static int key_cmp(enum sort_key k, const struct row *a, const struct row *b)
{
	int c;

	switch (k) {
	case K_COMM:
		return comm_str_cmp(a, b);
	case K_PID:
		c = ucmp(a->pid, b->pid);
		return c ? c : comm_str_cmp(a, b);
	case K_TID:
		c = ucmp(a->tid, b->tid);
		return c ? c : comm_str_cmp(a, b);
	case K_DSO:
		return strcmp(a->dso, b->dso);
	case K_SYM:
		if (a->level != b->level)
			return a->level < b->level ? -1 : 1;
		if (a->sym && b->sym)
			return strcmp(a->sym, b->sym);
		if (a->sym || b->sym)
			return a->sym ? -1 : 1;
		return ucmp(a->addr, b->addr);
	case K_CPU:
		return ucmp(a->cpu, b->cpu);
	default:
		return 0;
	}
}

static int rows_cmp_keys(const struct row *a, const struct row *b,
			 const struct sorter *s)
{
	for (int i = 0; i < s->nkeys; i++) {
		int c = key_cmp(s->keys[i], a, b);

		if (c)
			return c;
	}
	return 0;
}

static int rows_cmp_r(const void *a, const void *b, void *arg)
{
	return rows_cmp_keys(a, b, arg);
}

/* Report order: heaviest first; ties by key, so output is deterministic. */
static int rows_cmp_overhead(const void *a, const void *b, void *arg)
{
	const struct row *x = a, *y = b;

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return rows_cmp_keys(x, y, arg);
}

static void format_key(enum sort_key k, const struct row *r, char *buf,
		       size_t len, bool folded)
{
	char tmp[32], cb[24], tmp2[COL_MAX - 8];
	const char *comm = r->comm;

	if (!comm) {
		snprintf(cb, sizeof(cb), ":%" PRIu32, r->tid);
		comm = cb;
	}
	switch (k) {
	case K_COMM:
		snprintf(buf, len, "%s", comm);
		break;
	case K_PID:
		snprintf(buf, len, "%" PRIu32 ":%s", r->pid, comm);
		break;
	case K_TID:
		snprintf(buf, len, "%" PRIu32 ":%s", r->tid, comm);
		break;
	case K_DSO:
		snprintf(buf, len, "%s", r->dso);
		break;
	case K_SYM:
		/* The folded form drops perf's "[.] " level marks. */
		if (r->level == 'v')
			snprintf(tmp2, sizeof(tmp2), "exit:%s",
				 profile_exit_name(r->addr, tmp, sizeof(tmp)));
		else if (r->sym)
			snprintf(tmp2, sizeof(tmp2), "%s", r->sym);
		else
			snprintf(tmp2, sizeof(tmp2), folded ? "0x%" PRIx64 :
				 "0x%016" PRIx64, r->addr);
		if (folded)
			snprintf(buf, len, "%s", tmp2);
		else
			snprintf(buf, len, "[%c] %s", r->level, tmp2);
		break;
	case K_CPU:
		snprintf(buf, len, folded ? "cpu%03" PRIu32 : "%03" PRIu32,
			 r->cpu);
		break;
	default:
		buf[0] = 0;
	}
}

static int str_ptr_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int print_folded(FILE *f, const struct row *rows, size_t n,
			const enum sort_key *keys, int nkeys)
{
	char **lines = calloc(n ? n : 1, sizeof(*lines));
	char frame[512], line[4096];
	int ret = 0;

	if (!lines)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t at = 0;

		for (int k = 0; k < nkeys; k++) {
			format_key(keys[k], &rows[i], frame, sizeof(frame),
				   true);
			/* ';' separates frames, '\n' lines: keep them out. */
			for (char *c = frame; *c; c++)
				if (*c == ';' || *c == '\n')
					*c = '_';
			at += snprintf(line + at, sizeof(line) - at, "%s%s",
				       k ? ";" : "", frame);
			if (at >= sizeof(line))
				at = sizeof(line) - 1;
		}
		if (asprintf(&lines[i], "%s %" PRIu64, line,
			     rows[i].period) < 0) {
			lines[i] = NULL;
			ret = -1;
			goto out;
		}
	}
	/* Sorted like stackcollapse output, so diffs of two runs line up. */
	qsort(lines, n, sizeof(*lines), str_ptr_cmp);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	return ret;
}

/* Resolve every sample and merge those equal under the sort keys. */
static struct row *build_rows(const struct profile *p,
			      const struct sorter *so, size_t *nrows)
{
	struct row *rows = calloc(p->nsamples ? p->nsamples : 1,
				  sizeof(*rows));
	size_t n = 0;

	if (!rows)
		return NULL;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		struct row *r = &rows[i];
		struct sym_info si;
		char buf[24];

		profile_resolve(p, s, &si);
		r->comm = profile_comm_of(p, s, buf, sizeof(buf));
		if (r->comm == buf)
			r->comm = NULL;
		r->dso = si.dso;
		r->sym = si.sym;
		r->level = si.level;
		r->addr = s->kind == SAMPLE_VMM ? s->exit_reason : s->ip;
		r->pid = s->pid;
		r->tid = s->tid;
		r->cpu = s->cpu;
		r->period = s->period;
		r->nr = 1;
	}
	qsort_r(rows, p->nsamples, sizeof(*rows), rows_cmp_r, (void *)so);
	for (size_t i = 0; i < p->nsamples; i++) {
		if (n && !rows_cmp_keys(&rows[n - 1], &rows[i], so)) {
			rows[n - 1].period += rows[i].period;
			rows[n - 1].nr += rows[i].nr;
		} else {
			rows[n++] = rows[i];
		}
	}
	qsort_r(rows, n, sizeof(*rows), rows_cmp_overhead, (void *)so);
	*nrows = n;
	return rows;
}

static void print_dots(FILE *f, int width)
{
	for (int i = 0; i < width; i++)
		fputc('.', f);
}

static int print_table(FILE *f, const struct profile *p,
		       const struct report_opts *o, const struct row *rows,
		       size_t n, const enum sort_key *keys, int nkeys)
{
	uint64_t total = profile_total_period(p);
	int width[MAX_KEYS], nrw = 7, ret = -1;
	char **cells, cell[COL_MAX];

	cells = calloc(n * nkeys + 1, sizeof(*cells));
	if (!cells)
		return -1;
	for (int k = 0; k < nkeys; k++)
		width[k] = strlen(key_headers[keys[k]]);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < nkeys; k++) {
			int w;

			format_key(keys[k], &rows[i], cell, COL_MAX, false);
			cells[i * nkeys + k] = strdup(cell);
			if (!cells[i * nkeys + k])
				goto out;
			w = strlen(cell);
			if (w > width[k])
				width[k] = w;
		}
	}
	fprintf(f, "# perfvisor report\n#\n");
	fprintf(f, "# Samples: %zu of event '%s'\n", p->nsamples, p->event);
	fprintf(f, "# Event count (approx.): %" PRIu64 "\n#\n", total);
	fprintf(f, "# Overhead");
	if (o->nr_samples)
		fprintf(f, "  %*s", nrw, "Samples");
	for (int k = 0; k < nkeys; k++)
		fprintf(f, "  %-*s", k == nkeys - 1 ? 0 : width[k],
			key_headers[keys[k]]);
	fprintf(f, "\n# ");
	print_dots(f, 8);
	if (o->nr_samples) {
		fprintf(f, "  ");
		print_dots(f, nrw);
	}
	for (int k = 0; k < nkeys; k++) {
		fprintf(f, "  ");
		print_dots(f, width[k]);
	}
	fprintf(f, "\n#\n");
	for (size_t i = 0; i < n; i++) {
		/* Overhead of the total period: samples may weigh differently. */
		fprintf(f, "  %7.2f%%", total ? 100.0 * rows[i].period / total
					      : 0.0);
		if (o->nr_samples)
			fprintf(f, "  %*" PRIu64, nrw, rows[i].nr);
		for (int k = 0; k < nkeys; k++)
			fprintf(f, "  %-*s", k == nkeys - 1 ? 0 : width[k],
				cells[i * nkeys + k]);
		fputc('\n', f);
	}
	if (!n)
		fprintf(f, "# (no samples)\n");
	fputc('\n', f);
	ret = 0;
out:
	for (size_t i = 0; i < n * nkeys; i++)
		free(cells[i]);
	free(cells);
	return ret;
}

int profile_report(const struct profile *p, const struct report_opts *o,
		   FILE *out)
{
	static const struct report_opts defaults;
	enum sort_key keys[MAX_KEYS];
	struct sorter so = { keys, 0 };
	struct row *rows;
	size_t n;
	FILE *f = out;
	int ret;

	if (!o)
		o = &defaults;
	so.nkeys = parse_sort(o->sort, keys, NULL, 0);
	if (so.nkeys < 0) {
		errno = EINVAL;
		return -1;
	}
	if (o->output) {
		f = fopen(o->output, "w");
		if (!f)
			return -1;
	}
	rows = build_rows(p, &so, &n);
	if (!rows) {
		ret = -1;
		errno = ENOMEM;
	} else if (o->folded) {
		ret = print_folded(f, rows, n, keys, so.nkeys);
	} else {
		ret = print_table(f, p, o, rows, n, keys, so.nkeys);
	}
	free(rows);
	if (fflush(f) != 0 || ferror(f))
		ret = -1;
	if (f != out && fclose(f) != 0)
		ret = -1;
	return ret;
}

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
	at = rec_begin(&b, REC_END);
	rec_end(&b, at);
	if (b.oom) {
		free(b.p);
		return fail(err, errlen, "out of memory");
	}
	f = fopen(path, "wb");
	if (!f) {
		free(b.p);
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	}
	if (fwrite(b.p, 1, b.len, f) != b.len)
		ret = fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fclose(f) != 0 && !ret)
		ret = fail(err, errlen, "%s: %s", path, strerror(errno));
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
	image_free(&im);
	return -1;
}

static int parse(struct profile *p, const uint8_t *d, size_t len,
		 char *err, size_t errlen)
{
	struct cur f = { d, len, 0, false };
	const void *magic = get(&f, 8);
	uint32_t version = get32(&f), hsize = get32(&f);
	bool end = false;

	if (!magic || memcmp(magic, PVPROF_MAGIC, 8))
		return fail(err, errlen, "not a perfvisor.data file");
	if (version != PVPROF_VERSION)
		return fail(err, errlen, "perfvisor.data version %u, this vmm "
			    "reads version %u", version, PVPROF_VERSION);
	if (hsize < 16 || hsize > len)
		return fail(err, errlen, "corrupt header");
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
			return fail(err, errlen, "truncated file");
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
					return fail(err, errlen,
						    "out of memory");
			}
			break;
		}
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
		return fail(err, errlen, "corrupt record (type %u) at offset "
			    "%zu", type, f.at - (size_t)plen);
	}
	return 0;
}

int profile_read(struct profile **pp, const char *path,
		 char *err, size_t errlen)
{
	struct profile *p;
	uint8_t *d = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "rb");
	int ret;

	*pp = NULL;
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			uint8_t *n = realloc(d, cap = cap ? 2 * cap : 65536);

			if (!n) {
				fclose(f);
				free(d);
				return fail(err, errlen, "out of memory");
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
		return fail(err, errlen, "%s: read error", path);
	}
	fclose(f);
	p = profile_new();
	if (!p) {
		free(d);
		return fail(err, errlen, "out of memory");
	}
	ret = parse(p, d, len, err, errlen);
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
