/* SPDX-License-Identifier: MIT */
/*
 * perf.data files (tools/perf/Documentation/perf.data-file-format.txt in the
 * Linux source) from and to a struct profile, so that the distribution's
 * `perf report -i` and `perf script -i` read what `vmm record` took.
 */
#ifndef VMM_PERF_DATA_H
#define VMM_PERF_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/*
 * VMM samples go to perf as samples of this synthetic process (named
 * "[vmm]" by a COMM record), with cpumode PERF_RECORD_MISC_HYPERVISOR and
 * the exit reason code as the IP, so perf shows them as "[H] 0x3e9" rows
 * of command "[vmm]".  Linux never gives out a pid this large
 * (PID_MAX_LIMIT is 4194304), so it cannot collide with a real thread.
 */
#define PERF_DATA_VMM_PID	4194304u

/* The file header perf reads first (perf's struct perf_file_header). */
struct perf_file_section {
	uint64_t offset, size;
};
struct perf_file_header {
	uint64_t magic;			/* "PERFILE2" */
	uint64_t size;			/* of this header */
	uint64_t attr_size;		/* of one attrs entry */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;	/* unused */
	uint64_t adds_features[4];	/* HEADER_FEAT_BITS = 256 */
};
_Static_assert(sizeof(struct perf_file_header) == 104,
	       "perf_file_header layout");

#define PERF_DATA_MAGIC		0x32454c4946524550ull	/* "PERFILE2" */
#define HEADER_EVENT_DESC	12	/* perf's feature bit numbers */

/* Write p as a perf.data file.  Returns 0, or -1 with a message in err. */
int perf_data_write(const struct profile *p, const char *path,
		    char *err, size_t errlen);

/*
 * Read a perf.data file with one event whose samples have at least IP and
 * TID (ours, or a simple `perf record`), for `vmm report -i perf.data`.
 * Symbols come from the mmapped files where they still exist.
 */
int perf_data_read(struct profile **pp, const char *path,
		   char *err, size_t errlen);

/*
 * `vmm report -i FILE`: read FILE as perfvisor.data or perf.data, whichever
 * its magic says.
 */
int profile_open(struct profile **pp, const char *path,
		 char *err, size_t errlen);

#endif
