// SPDX-License-Identifier: MIT
/*
 * The policy table: the one place a new policy is registered
 * (docs/policies.md).  Names and ids must be unique; a unit test checks.
 */
#include <string.h>

#include "internal.h"

/*
 * Every policy, by the name of its pmu_policy_<name> in
 * pmu/policies/<name>.c: PMU_POLICIES(X) is X(offset) X(saverestore) ...,
 * defined by pmu/meson.build from its pmu_policies list, where registering
 * a policy is one name; nothing else, guest kernel included, names it.
 */
#ifndef PMU_POLICIES
#error "PMU_POLICIES comes from pmu/meson.build (pmu_policies)"
#endif

#define PMU_POLICY_DECLARE(name) extern const struct pmu_policy_ops pmu_policy_##name;
#define PMU_POLICY_ENTRY(name) &pmu_policy_##name,

PMU_POLICIES(PMU_POLICY_DECLARE)

static const struct pmu_policy_ops *const policies[] = {
	PMU_POLICIES(PMU_POLICY_ENTRY)
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
