// SPDX-License-Identifier: MIT
/*
 * The policy table: the one place a new policy is registered
 * (docs/policies.md).  Names and ids must be unique; a unit test checks.
 */
#include <string.h>

#include "internal.h"

/*
 * Every policy, by the name of its pmu_policy_<name> in
 * pmu/policies/<name>.c.  Registering one is one line here (and its file
 * in pmu/meson.build); nothing else, guest kernel included, names it.
 */
#define PMU_POLICIES(X)		\
	X(offset)		\
	X(saverestore)		\
	X(raw)			\
	X(wallclock)

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
