// SPDX-License-Identifier: MIT
/*
 * The selectable event sources (--source).  The virtual source is not in
 * the table: every PMU has it in addition to the active one.
 */
#include <string.h>

#include "internal.h"

static const struct pmu_source_ops *const sources[] = {
	&pmu_source_tsc,
	&pmu_source_step,
	&pmu_source_perf,
	&pmu_source_fake,
};

#define NR_SOURCES (sizeof(sources) / sizeof(sources[0]))

const struct pmu_source_ops *pmu_source_lookup(const char *name)
{
	for (size_t i = 0; i < NR_SOURCES; i++) {
		if (!strcmp(sources[i]->name, name))
			return sources[i];
	}
	return NULL;
}
