// SPDX-License-Identifier: MIT
/*
 * Profiles: the guest's ELF images (executable segments and symbols, from
 * libelf) and the lookups that turn a sample's IP into dso and symbol.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_internal.h"

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
		return profile_fail(err, errlen, "%s: bad symbol table: %s", im->name,
				    elf_errmsg(-1));
	size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

	raw = calloc(count ? count : 1, sizeof(*raw));
	if (!raw)
		return profile_fail(err, errlen, "out of memory");
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
		profile_fail(err, errlen, "out of memory");
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
		return profile_fail(err, errlen, "%s: no program headers", im->name);
	im->segs = calloc(phnum ? phnum : 1, sizeof(*im->segs));
	if (!im->segs)
		return profile_fail(err, errlen, "out of memory");
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
		return profile_fail(err, errlen, "%s: no executable segment", im->name);
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
		return profile_fail(err, errlen, "%s: not an ELF file", name);
	im.name = strdup(name);
	/*
	 * perf.data needs an absolute path: perf takes a kernel mapping of a
	 * relative name for something else, and may run in another directory.
	 */
	im.path = host_path ? realpath(host_path, NULL) : NULL;
	if (host_path && !im.path)
		im.path = strdup(host_path);
	if (!im.name || (host_path && !im.path)) {
		profile_image_free(&im);
		return profile_fail(err, errlen, "out of memory");
	}
	if (image_load_segs(&im, e, err, errlen) < 0 ||
	    image_load_syms(&im, e, err, errlen) < 0) {
		profile_image_free(&im);
		return -1;
	}
	n = realloc(p->images, (p->nimages + 1) * sizeof(*n));
	if (!n) {
		profile_image_free(&im);
		return profile_fail(err, errlen, "out of memory");
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
		return profile_fail(err, errlen, "libelf: %s", elf_errmsg(-1));
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
		return profile_fail(err, errlen, "libelf: %s", elf_errmsg(-1));
	fd = open(host_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return profile_fail(err, errlen, "%s: %s", host_path,
				    strerror(errno));
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

bool profile_image_global(const struct profile *p, int image)
{
	return !image_bound(p, image);
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
