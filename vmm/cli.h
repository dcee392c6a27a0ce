/* SPDX-License-Identifier: MIT */
#ifndef VMM_CLI_H
#define VMM_CLI_H

#include <stdbool.h>

#include "config.h"

/*
 * Parse `vmm run` options (argv[0] is "run").  Returns 0, or -1 with a
 * one-line message in err; 1 when --help was printed.
 */
int cli_parse_run(int argc, char **argv, struct vmm_config *cfg,
		  char *err, size_t errlen);
/* The same for `vmm stat` (stat = true), which adds the stat options. */
int cli_parse(int argc, char **argv, bool stat, struct vmm_config *cfg,
	      char *err, size_t errlen);
int cli_parse_record(int argc, char **argv, struct vmm_config *cfg,
		     char *err, size_t errlen);
int cli_parse_size(const char *s, uint64_t *out);

#endif
