/* SPDX-License-Identifier: MIT */
#ifndef VMM_CONFIG_H
#define VMM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMM_EXIT_ERROR		125	/* like env(1) and docker: the VMM failed */
#define VMM_MAX_FILES		64
#define VMM_MAX_ENV		64

struct vmm_file {
	const char *host;
	const char *guest;		/* absolute guest path */
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
	bool verbose;
	double timeout;			/* seconds; 0 = none */
	int report_fd;			/* vmm bench: resource report */
};

#endif
