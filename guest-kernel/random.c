// SPDX-License-Identifier: MIT
/*
 * The kernel's random bytes, for getrandom(2), /dev/urandom, /dev/random
 * and AT_RANDOM: the host's, from its getrandom(2) (its CSPRNG), one
 * hypercall a request.  Natively that is cheaper than a generator in this
 * kernel, whose every instruction kvm_pvm emulates (a ChaCha20 block took
 * about a millisecond here), and nothing the guest can see predicts it.
 */
#include "kernel.h"
#include "random.h"

s64 random_to_user(void *ubuf, u64 n)
{
	if (!user_range_ok((u64)ubuf, n))
		return -EFAULT;
	return n && hcall(PV_HC_RANDOM, (u64)ubuf, n, 0) ? -EFAULT : (s64)n;
}

void random_bytes(void *buf, size_t n)
{
	if (hcall(PV_HC_RANDOM, (u64)buf, n, 0))
		panic("random: the VMM gave no random bytes");
}
