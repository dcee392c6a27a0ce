// SPDX-License-Identifier: MIT
/*
 * Host kinds.  kvm_pvm (the development hosts) and standard KVM differ in
 * ways the VMM must cover (docs/design.md section 2a): a standard KVM with
 * a hardware PMU runs its own vPMU unless told not to, and a new VM's TSC
 * starts near 0 instead of at the host's, which every guest clock and the
 * tsc event source assume.  Both steps are harmless on kvm_pvm.
 */
#include <cpuid.h>
#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "host.h"
#include "pmu.h"
#include "vcpu.h"
#include "vm.h"

uint32_t host_kind_parse(const char *name)
{
	if (!name || !strcmp(name, "auto"))
		return host_kind_detect();
	if (!strcmp(name, "pvm"))
		return PV_HOST_PVM;
	if (!strcmp(name, "standard"))
		return PV_HOST_STANDARD;
	return 0;
}

uint32_t host_kind_detect(void)
{
	return access("/sys/module/kvm_pvm", F_OK) == 0 ? PV_HOST_PVM
							 : PV_HOST_STANDARD;
}

const char *host_kind_name(uint32_t kind)
{
	return kind == PV_HOST_PVM ? "kvm_pvm" : "standard";
}

/*
 * kvm_pvm runs user code natively; on Intel it traps CPUID by CPUID
 * faulting, on AMD (tests/guest/cpuid.c) user code's CPUID is the
 * host's own, what the VMM's is here, and never the VMM's table.
 */
bool host_user_cpuid_native(uint32_t kind)
{
	unsigned int a, b, c, d;

	if (kind != PV_HOST_PVM)
		return false;
	__cpuid(0, a, b, c, d);
	return b == 0x68747541;		/* "Auth" */
}

bool host_pfm_must_force(uint32_t kind)
{
	unsigned int a, b0, b, c, d;

	if (!host_user_cpuid_native(kind))
		return false;
	__cpuid(0, a, b0, c, d);
	__cpuid(1, a, b, c, d);
	return pmu_cpuid_pfm_must_force(b0, a);
}

int host_pmu_disable(struct vm *vm)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_PMU_CAPABILITY,
		.args[0] = KVM_PMU_CAP_DISABLE,
	};
	int r = ioctl(vm->fd, KVM_CHECK_EXTENSION, KVM_CAP_PMU_CAPABILITY);

	if (r <= 0 || !(r & KVM_PMU_CAP_DISABLE))
		return 0;	/* no in-kernel vPMU to turn off */
	return ioctl(vm->fd, KVM_ENABLE_CAP, &cap);
}

int host_tsc_match(struct vcpu *v)
{
	uint64_t offset = 0;	/* no scaling: guest TSC = host TSC + 0 */
	struct kvm_device_attr a = {
		.group = KVM_VCPU_TSC_CTRL,
		.attr = KVM_VCPU_TSC_OFFSET,
		.addr = (uint64_t)(uintptr_t)&offset,
	};

	if (ioctl(v->fd, KVM_HAS_DEVICE_ATTR, &a) < 0)
		return v->vm->host_kind == PV_HOST_PVM ? 0 : -1;
	return ioctl(v->fd, KVM_SET_DEVICE_ATTR, &a);
}
