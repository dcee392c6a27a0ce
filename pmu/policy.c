// SPDX-License-Identifier: MIT
/*
 * The policy table: the one place a new policy is registered
 * (docs/policies.md).  Names and ids must be unique; a unit test checks.
 */
#include <string.h>

#include "internal.h"

static const struct pmu_policy_ops *const policies[] = {
	&pmu_policy_offset,
	&pmu_policy_saverestore,
	&pmu_policy_raw,
};

#define NR_POLICIES (sizeof(policies) / sizeof(policies[0]))

const struct pmu_policy_ops *pmu_policy_at(size_t i)
{
	return i < NR_POLICIES ? policies[i] : NULL;
}

const struct pmu_policy_ops *pmu_policy_lookup(const char *name)
{
	for (size_t i = 0; i < NR_POLICIES; i++) {
		if (!strcmp(policies[i]->name, name))
			return policies[i];
	}
	return NULL;
}

const struct pmu_policy_ops *pmu_policy_lookup_id(uint32_t id)
{
	for (size_t i = 0; i < NR_POLICIES; i++) {
		if (policies[i]->id == id)
			return policies[i];
	}
	return NULL;
}
