/* SPDX-License-Identifier: MIT */
/*
 * Sampling profiles after the sampling: storage, symbolization, aggregation
 * and the `vmm report` table, plus our own file format (perfvisor.data).
 * A host library with no KVM calls; perf_data.h writes the same profile as
 * a perf.data file.  docs/profiling.md describes both file formats.
 */
#ifndef VMM_PROFILE_H
#define VMM_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sample_kind { SAMPLE_USER, SAMPLE_KERNEL, SAMPLE_VMM };

/* SAMPLE_VMM exit_reason: a KVM_EXIT_* value, or this plus a hypercall nr. */
#define PROFILE_HC_BASE		1000

struct sample {
	uint32_t pid, tid;	/* guest ids; 0 for VMM samples */
	uint32_t cpu;		/* vCPU */
	uint8_t kind;		/* enum sample_kind */
	uint16_t exit_reason;	/* SAMPLE_VMM: KVM_EXIT_* or PROFILE_HC_BASE + nr */
	uint64_t ip;		/* guest IP (user or kernel); 0 for VMM */
	uint64_t time_ns;	/* since boot */
	uint64_t period;	/* events this sample stands for */
	/* -g: the caller-side frames' return addresses, innermost first, are
	 * chain_nr IPs from chain_off in the profile's chain array (after
	 * the sample's own ip; profile_sample_chain()).  0: no chain. */
	uint32_t chain_nr;
	uint64_t chain_off;
};

/* Frames kept per sample; more are cut, the outermost ones. */
#define PROFILE_CHAIN_MAX	127
/* IPs kept in all chains of one profile (64 MiB): later samples past it
 * are stored without their chain and counted (profile_chains_dropped). */
#define PROFILE_CHAIN_IPS_MAX	(8u << 20)

struct profile;

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Thread-safe: called from vCPU threads.  Returns 0 or -1 (out of memory). */
int profile_add(struct profile *p, const struct sample *s);
/*
 * The same with the sample's call chain: chain[n], the return addresses of
 * its callers, innermost first (s's chain fields are ignored).  A chain
 * that does not fit under PROFILE_CHAIN_IPS_MAX is dropped, the sample
 * kept.  Thread-safe.
 */
int profile_add_chain(struct profile *p, const struct sample *s,
		      const uint64_t *chain, size_t n);

/*
 * Name a guest thread.  profile_comm_at() gives the time the name took
 * effect (exec), so samples before an exec keep the old name, as in perf;
 * profile_comm() is profile_comm_at(..., 0).  Thread-safe.
 */
void profile_comm(struct profile *p, uint32_t pid, uint32_t tid,
		  const char *comm);
void profile_comm_at(struct profile *p, uint32_t pid, uint32_t tid,
		     const char *comm, uint64_t time_ns);

/*
 * The event the samples count, for report headers and the perf.data attr
 * (perf_type/perf_config as in struct perf_event_attr).  Default:
 * "cpu-clock", PERF_TYPE_SOFTWARE/PERF_COUNT_SW_CPU_CLOCK.
 */
void profile_set_event(struct profile *p, const char *name,
		       uint32_t perf_type, uint64_t perf_config);

/*
 * Add an ELF image whose code the guest runs: name is the Shared Object
 * column ("hello", "[kernel]"); host_path is where perf finds the binary;
 * load_bias is added to the ELF's addresses (0 for static executables and
 * the kernel).  kernel images resolve SAMPLE_KERNEL IPs, the others
 * SAMPLE_USER IPs.  Symbols come from .symtab (else .dynsym).
 * Returns the image id (>= 0), or -1 with a message in err.
 */
int profile_add_image(struct profile *p, const char *name,
		      const char *host_path, uint64_t load_bias, bool kernel,
		      char *err, size_t errlen);
/* The same from memory (the embedded kernel); host_path may be NULL. */
int profile_add_image_mem(struct profile *p, const char *name,
			  const char *host_path, const void *buf, size_t len,
			  uint64_t load_bias, bool kernel,
			  char *err, size_t errlen);
/*
 * Bind a user image to one guest process from since_ns on (its exec; 0 for
 * the first program): static programs all load at 0x400000, so the pid and
 * the time tell which image an IP belongs to.  A process's latest binding
 * at the sample's time wins; images never bound apply to every process and
 * are looked up last.  Bind a forked child too if it runs unbound code.
 */
void profile_image_pid(struct profile *p, int image, uint32_t pid,
		       uint64_t since_ns);

/* Our own format: self-describing, versioned, carries the symbol tables. */
int profile_write(const struct profile *p, const char *path,
		  char *err, size_t errlen);
/* Parse a whole file's bytes d[len] into p: 0, or -1 with err set. */
typedef int (*profile_parse_fn)(struct profile *p, const uint8_t *d,
				size_t len, char *err, size_t errlen);
/* Read the file at path whole and parse it into a new *pp (profile_read
 * and perf_data_read). */
int profile_load(struct profile **pp, const char *path,
		 profile_parse_fn parse, char *err, size_t errlen);
int profile_read(struct profile **pp, const char *path,
		 char *err, size_t errlen);

struct report_opts {
	const char *sort;	/* comma list of comm,pid,tid,dso,sym,cpu;
				 * NULL = "comm,dso,sym" */
	bool folded;		/* flame-graph folded stacks, one per key */
	bool stdio;		/* accepted for perf's sake: always stdio */
	bool nr_samples;	/* -n: a Samples column */
	const char *output;	/* write here instead of out (NULL: out) */
};

/* 0 if sort is a valid --sort list, else -1 and a message in err. */
int profile_sort_check(const char *sort, char *err, size_t errlen);

/*
 * Print the report (perf report --stdio layout) or folded stacks.
 * Returns 0, or -1 with errno set (EINVAL: bad sort list; output errors).
 */
int profile_report(const struct profile *p, const struct report_opts *o,
		   FILE *out);

/* ---- Queries (tests, perf_data.c, callers that want numbers) ---- */

size_t profile_nr_samples(const struct profile *p);
const struct sample *profile_sample(const struct profile *p, size_t i);
uint64_t profile_total_period(const struct profile *p);
/* A sample's call chain (innermost first): *n IPs, NULL if none. */
const uint64_t *profile_sample_chain(const struct profile *p,
				     const struct sample *s, size_t *n);
/* Whether any sample has a chain; how many chains the bound dropped. */
bool profile_has_chains(const struct profile *p);
uint64_t profile_chains_dropped(const struct profile *p);
const char *profile_event_name(const struct profile *p);
void profile_event(const struct profile *p, uint32_t *perf_type,
		   uint64_t *perf_config);

/* A sample resolved to the report's columns. */
struct sym_info {
	const char *dso;	/* image name, "[unknown]" or "[vmm]" */
	const char *sym;	/* symbol name, or NULL if unknown */
	char level;		/* '.' user, 'k' kernel, 'v' VMM */
	uint64_t sym_start;	/* symbol address (biased), if sym */
	int image;		/* image id, or -1 */
};
void profile_resolve(const struct profile *p, const struct sample *s,
		     struct sym_info *si);
/* "[vmm]", a comm set with profile_comm, or ":<tid>" in buf (>= 16 bytes). */
const char *profile_comm_of(const struct profile *p, const struct sample *s,
			    char *buf, size_t len);
/* "io", "hlt", "write", ... or "<number>" in buf (>= 16 bytes). */
const char *profile_exit_name(uint16_t exit_reason, char *buf, size_t len);

/* Images and threads, as perf.data needs them. */
struct profile_segment {
	uint64_t start, len, pgoff;	/* executable PT_LOAD, page-rounded */
};
struct profile_image_info {
	const char *name, *host_path;	/* host_path may be NULL */
	bool kernel;
	size_t nsegs;
	const struct profile_segment *segs;
	size_t nsyms;
};
size_t profile_nr_images(const struct profile *p);
void profile_image_info(const struct profile *p, int image,
			struct profile_image_info *ii);
bool profile_image_global(const struct profile *p, int image);
size_t profile_nr_bindings(const struct profile *p);
void profile_binding(const struct profile *p, size_t i, int *image,
		     uint32_t *pid, uint64_t *since_ns);

struct profile_comm_info {
	uint32_t pid, tid;
	uint64_t time_ns;
	const char *comm;
};
size_t profile_nr_comms(const struct profile *p);
void profile_comm_info(const struct profile *p, size_t i,
		       struct profile_comm_info *ci);

/* Format a message into err (if any) and return -1: for the file readers. */
int profile_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
