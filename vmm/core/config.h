/* SPDX-License-Identifier: MIT */
#ifndef VMM_CONFIG_H
#define VMM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMM_EXIT_ERROR		125	/* like env(1) and docker: the VMM failed */
#define VMM_EXIT_TIMEOUT	124	/* like timeout(1): --timeout expired */
#define VMM_MAX_CPUS		64
/* Enough for real programs (liblzma's 2-thread encoder at preset 6 needs
 * more than 128 MiB); RAM is backed by host memory only as the guest takes
 * it (vmm/core/vm.c), and 2 GiB (PV_MAX_MEM) stays for the --mem hint. */
#define VMM_DEFAULT_MEM		(1024ull << 20)
#define VMM_MAX_FILES		64
#define VMM_MAX_ENV		64
#define VMM_MAX_DIRS		16	/* PV_FS_MAX_SHARES */

#define VMM_STAT_EVENTS		4

/* `vmm stat`: what to count and how to print it. */
struct vmm_stat {
	int nevents;
	char names[VMM_STAT_EVENTS][48];	/* as the user wrote them */
	uint16_t event[VMM_STAT_EVENTS];	/* PV_EVENT() */
	unsigned int mode[VMM_STAT_EVENTS];	/* PMU_MODE_* */
	bool per_thread;
	bool breakdown;			/* --breakdown: where the time goes */
	bool json;
	const char *sep;		/* -x: CSV as perf stat -x */
	const char *output;		/* -o FILE, else stderr */
	int repeat;			/* -r N */
};

/* Who takes `vmm record`'s samples (--sampler). */
enum vmm_sampler {
	SAMPLER_AUTO = 0,	/* the VMM where it can (record.c), else guest */
	SAMPLER_VMM,		/* a host timer per vCPU (vcpu_sample.c) */
	SAMPLER_GUEST,		/* the guest kernel, on virtual PMIs */
};

/* `vmm record`: what to sample and where the profile goes. */
struct vmm_record {
	char event[48];			/* as written: "cycles", "instructions:u" */
	uint16_t code;			/* PV_EVENT() */
	unsigned int mode;		/* PMU_MODE_* */
	uint64_t period;		/* -c */
	const char *output;		/* -o */
	bool perf_format;		/* --format perf */
	bool system_wide;		/* -a: the VMM's own time too */
	enum vmm_sampler sampler;	/* --sampler */
	bool callchain;			/* -g: frame-pointer call chains */
};

struct vmm_file {
	const char *host;
	const char *guest;		/* absolute guest path */
};

/* --dir HOST:GUEST[:ro|:rw]: a host directory seen in the guest. */
struct vmm_dir {
	const char *host;
	const char *guest;		/* absolute guest path */
	bool rw;
};

/* Everything a `vmm run` needs, filled from the command line. */
struct vmm_config {
	int ncpus;
	uint64_t mem_size;
	const char *kernel_path;	/* NULL: the embedded kernel */
	const char *program;		/* host path of PROGRAM */
	int argc;			/* PROGRAM's argv, argv[0] = basename */
	char **argv;
	int nenv;
	const char *env[VMM_MAX_ENV];
	int nfiles;
	struct vmm_file files[VMM_MAX_FILES];
	int ndirs;
	struct vmm_dir dirs[VMM_MAX_DIRS];
	const char *cwd;		/* --cwd: the program's, or NULL */
	int verbose;			/* -v, -vv */
	const char *source;		/* pmu event source: tsc, step, perf */
	const char *policy;		/* pmu policy: offset, saverestore, raw */
	bool step_single;		/* --step-mode single: TF, no blocks */
	bool step_no_cache;		/* --step-mode int3 or single */
	double timeout;			/* seconds; 0 = none */
	const char *host;		/* --host: auto, pvm, standard */
	int report_fd;			/* vmm bench: resource report */
	bool stat_mode;			/* vmm stat */
	struct vmm_stat stat;
	bool record_mode;		/* vmm record */
	struct vmm_record record;
};

#endif
