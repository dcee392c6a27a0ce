// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "host.h"
#include "kvm_stats.h"
#include "layout.h"
#include "step_block.h"
#include "vcpu.h"
#include "vm.h"
#include "vcpu_pmu.h"

struct kvm_cap_need {
	int cap;
	const char *name;
	int min;
};

/* Everything the VMM relies on, checked up front with one clear message. */
static const struct kvm_cap_need kvm_caps[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY", 1 },
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP", 1 },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT", 1 },
	{ KVM_CAP_MP_STATE, "KVM_CAP_MP_STATE", 1 },
	{ KVM_CAP_SYNC_REGS, "KVM_CAP_SYNC_REGS (regs and sregs)",
	  KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS },
	{ KVM_CAP_GET_TSC_KHZ, "KVM_CAP_GET_TSC_KHZ", 1 },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID", 1 },
};

static void vm_fail(struct vm *vm, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vm->stop_msg, sizeof(vm->stop_msg), fmt, ap);
	va_end(ap);
}

static int kvm_check(struct vm *vm)
{
	int v = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);

	if (v != KVM_API_VERSION) {
		vm_fail(vm, "/dev/kvm: API version %d, need %d", v,
			KVM_API_VERSION);
		return -1;
	}
	for (size_t i = 0; i < sizeof(kvm_caps) / sizeof(kvm_caps[0]); i++) {
		int r = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, kvm_caps[i].cap);

		if (r <= 0 || (r & kvm_caps[i].min) != kvm_caps[i].min) {
			vm_fail(vm, "KVM lacks %s", kvm_caps[i].name);
			return -1;
		}
	}
	return 0;
}

/* The vCPU this thread runs, for the kick handler (vcpu.c sets it). */
__thread struct kvm_run *vcpu_kick_run;

/*
 * SIGUSR1 (a stop, or the tsc source's overflow timer): KVM_RUN returns
 * EINTR if the thread is in it; immediate_exit makes the next KVM_RUN
 * return at once if the signal came just before it, so no kick is lost.
 */
static void vm_kick_handler(int sig)
{
	(void)sig;
	if (vcpu_kick_run)
		vcpu_kick_run->immediate_exit = 1;
}

/*
 * Host faults on first touch cost ~2.3 us per 4 KiB page more than touching
 * populated memory, but populating all of RAM up front costs 40+ ms of
 * boot per 128 MiB, and host memory for RAM the guest never uses.  So a
 * background thread populates, once the guest has run for 50 ms (short
 * runs never pay for it: page faults contend for the mm lock), only what
 * the guest kernel's page allocator has handed out plus VM_POPULATE_AHEAD
 * beyond it on each side: 4 KiB pages are taken from mem_bump up, 2 MiB
 * pages from mem_top down (uapi/boot.h).  It follows them as they move,
 * polling every millisecond while they do and backing off to 16 ms when
 * they do not.  A guest that does not publish them (--kernel) gets no
 * populating, only faults; a lying one gets at most all of its RAM
 * populated, which it could have touched anyway.
 */
#define VM_POPULATE_AHEAD	(16ull << 20)
#define VM_POPULATE_POLL_NS	(1000 * 1000)
#define VM_POPULATE_IDLE_NS	(16 * 1000 * 1000)

/* What to populate now: [0, *low) and [*high, mem_size), 2 MiB-aligned. */
static void vm_mem_wanted(struct vm *vm, uint64_t *low, uint64_t *high)
{
	const struct pv_boot_params *bp = (const void *)
		(vm->mem + PV_BOOT_PARAMS_PHYS);
	uint64_t bump = __atomic_load_n(&bp->mem_bump, __ATOMIC_RELAXED);
	uint64_t top = __atomic_load_n(&bp->mem_top, __ATOMIC_RELAXED);

	*low = 0;
	*high = vm->mem_size;
	if (!bump || !top)
		return;
	if (bump < vm->mem_size - VM_POPULATE_AHEAD)
		*low = (bump + VM_POPULATE_AHEAD + PV_HUGE_SIZE - 1) &
		       ~(PV_HUGE_SIZE - 1);
	else
		*low = vm->mem_size;
	if (top > VM_POPULATE_AHEAD && top <= vm->mem_size)
		*high = (top - VM_POPULATE_AHEAD) & ~(PV_HUGE_SIZE - 1);
	else
		*high = 0;
}

/* One 2 MiB chunk at off: false once the VM stops. */
static bool vm_mem_populate_chunk(struct vm *vm, uint64_t off)
{
	struct timespec gap = { 0, 20 * 1000 };

	if (atomic_load(&vm->stop) != VM_RUNNING)
		return false;
	madvise(vm->mem + off, PV_HUGE_SIZE, MADV_POPULATE_WRITE);
	/*
	 * A breath between chunks, or a VMM thread that maps memory (glibc's
	 * first malloc in a vCPU thread maps an arena) waits for mmap_lock
	 * until the populating is done: 28 ms at the end of `vmm stat` of
	 * libquantum, 30% of its run.
	 */
	nanosleep(&gap, NULL);
	return true;
}

static void *vm_mem_populate(void *arg)
{
	struct vm *vm = arg;
	struct timespec delay = { 0, 50 * 1000 * 1000 };
	uint64_t low = 0, high = vm->mem_size, want_low, want_high;
	long poll = VM_POPULATE_POLL_NS;

	/*
	 * Only CPU time nobody else wants: on a machine with one CPU free
	 * for the guest (QEMU's SVM machines) populating at normal priority
	 * made the program's first half second 10-50% slower, which PAPI's
	 * cycle tests see (tests/guest/loop_tsc.c).  A vCPU that faults
	 * instead costs the same zeroing, in the guest's time.  If a thread
	 * blocks on the mm lock this one holds, the CPU it frees runs this.
	 */
	pthread_setschedparam(pthread_self(), SCHED_IDLE,
			      &(struct sched_param){ 0 });
	/* Interrupted early (EINTR) when the VM stops first. */
	nanosleep(&delay, NULL);
	while (atomic_load(&vm->stop) == VM_RUNNING && low < high) {
		bool moved = false;

		vm_mem_wanted(vm, &want_low, &want_high);
		/* The top first: big allocations take 2 MiB pages there. */
		for (; high > want_high && high > low; moved = true) {
			if (!vm_mem_populate_chunk(vm, high - PV_HUGE_SIZE))
				return NULL;
			high -= PV_HUGE_SIZE;
		}
		for (; low < want_low && low < high; moved = true) {
			if (!vm_mem_populate_chunk(vm, low))
				return NULL;
			low += PV_HUGE_SIZE;
		}
		poll = moved ? VM_POPULATE_POLL_NS :
		       poll * 2 < VM_POPULATE_IDLE_NS ? poll * 2 :
		       VM_POPULATE_IDLE_NS;
		nanosleep(&(struct timespec){ 0, poll }, NULL);
	}
	return NULL;
}

uint64_t vm_mem_refused(struct vm *vm)
{
	const struct pv_boot_params *bp;

	if (!vm->mem)
		return 0;
	bp = (const void *)(vm->mem + PV_BOOT_PARAMS_PHYS);
	return __atomic_load_n(&bp->mem_refused, __ATOMIC_RELAXED);
}

static int vm_mem_alloc(struct vm *vm)
{
	struct kvm_userspace_memory_region r = { 0 };
	uint8_t *m;
	uint64_t lead;

	/*
	 * 2 MiB-aligned and backed by transparent huge pages where the host
	 * allows: the guest maps its RAM with 2 MiB pages, and KVM's shadow
	 * or nested tables can map those whole only over a host huge page.
	 * Over 4 KiB host pages every 4 KiB of a touched 2 MiB page took its
	 * own KVM page fault (lbm: 4,782 of them, 8% of its run).
	 */
	m = mmap(NULL, vm->mem_size + PV_HUGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		vm_fail(vm, "cannot allocate %llu MiB of guest memory",
			(unsigned long long)(vm->mem_size >> 20));
		return -1;
	}
	lead = -(uintptr_t)m & (PV_HUGE_SIZE - 1);
	if (lead)
		munmap(m, lead);
	munmap(m + lead + vm->mem_size, PV_HUGE_SIZE - lead);
	vm->mem = m + lead;
	madvise(vm->mem, vm->mem_size, MADV_HUGEPAGE);
	r.slot = 0;
	r.guest_phys_addr = 0;
	r.memory_size = vm->mem_size;
	r.userspace_addr = (uint64_t)(uintptr_t)vm->mem;
	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &r) < 0) {
		vm_fail(vm, "KVM_SET_USER_MEMORY_REGION: %s", strerror(errno));
		return -1;
	}
	vm->populate_started = !pthread_create(&vm->populate_thread, NULL,
					       vm_mem_populate, vm);
	return 0;
}

int vm_create(struct vm *vm, const struct vmm_config *cfg)
{
	struct sigaction sa = { .sa_handler = vm_kick_handler };

	memset(vm, 0, sizeof(*vm));
	vm->cfg = cfg;
	vm->fd = -1;
	vm->mem_size = cfg->mem_size;
	vm->ncpus = cfg->ncpus;
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->stopped, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		vm_fail(vm, "/dev/kvm: %s", strerror(errno));
		return -1;
	}
	if (kvm_check(vm))
		return -1;
	vm->fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		vm_fail(vm, "KVM_CREATE_VM: %s", strerror(errno));
		return -1;
	}
	vm->host_kind = host_kind_parse(cfg->host);
	if (host_pmu_disable(vm) < 0) {
		vm_fail(vm, "KVM_CAP_PMU_CAPABILITY (disable KVM's vPMU): %s",
			strerror(errno));
		return -1;
	}
	if (ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		vm_fail(vm, "KVM_CREATE_IRQCHIP: %s", strerror(errno));
		return -1;
	}
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size < (int)sizeof(struct kvm_run)) {
		vm_fail(vm, "KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
		return -1;
	}
	vm->tsc_khz = ioctl(vm->fd, KVM_GET_TSC_KHZ, 0);
	if ((int64_t)vm->tsc_khz <= 0) {
		vm_fail(vm, "KVM_GET_TSC_KHZ: %s", strerror(errno));
		return -1;
	}
	if (vcpu_pmu_vm_setup(vm))
		return -1;
	if (vm_mem_alloc(vm))
		return -1;
	vm->vcpus = calloc(vm->ncpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		vm_fail(vm, "out of memory");
		return -1;
	}
	for (int i = 0; i < vm->ncpus; i++)
		vm->vcpus[i].fd = -1;
	return 0;
}

/* Create the vCPUs once the kernel is loaded (entry is known). */
int vm_vcpus_create(struct vm *vm, uint64_t entry)
{
	for (int i = 0; i < vm->ncpus; i++) {
		if (vcpu_create(vm, &vm->vcpus[i], i, entry)) {
			vm_fail(vm, "cannot create vCPU %d: %s", i,
				strerror(errno));
			return -1;
		}
		if (host_tsc_match(&vm->vcpus[i]) < 0) {
			vm_fail(vm, "cannot set the guest TSC to the host's "
				"(KVM_VCPU_TSC_OFFSET): %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

void vm_destroy(struct vm *vm)
{
	if (vm->populate_started) {
		atomic_store(&vm->stop, VM_STOP_ERROR);
		pthread_kill(vm->populate_thread, SIGUSR1);
		pthread_join(vm->populate_thread, NULL);
		vm->populate_started = false;
	}
	for (int i = 0; vm->vcpus && i < vm->ncpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	free(vm->vcpus);
	vcpu_pmu_vm_destroy(vm);
	step_blocks_destroy(vm->blocks);
	vm->blocks = NULL;
	if (vm->mem)
		munmap(vm->mem, vm->mem_size);
	if (vm->fd >= 0)
		close(vm->fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->vcpus = NULL;
	vm->mem = NULL;
}

void vm_request_stop(struct vm *vm, enum vm_stop why, int status,
		     const char *fmt, ...)
{
	int expected = VM_RUNNING;
	va_list ap;

	pthread_mutex_lock(&vm->lock);
	/* The first reason wins: a panic after exit does not change status. */
	if (atomic_compare_exchange_strong(&vm->stop, &expected, why)) {
		vm->exit_status = status;
		if (fmt) {
			va_start(ap, fmt);
			vsnprintf(vm->stop_msg, sizeof(vm->stop_msg), fmt, ap);
			va_end(ap);
		}
		pthread_cond_broadcast(&vm->stopped);
	}
	pthread_mutex_unlock(&vm->lock);
}

/* Make every vCPU leave KVM_RUN: immediate_exit closes the race with entry. */
static void vm_kick_all(struct vm *vm)
{
	for (int i = 0; i < vm->ncpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		v->run->immediate_exit = 1;
		if (v->thread)
			pthread_kill(v->thread, SIGUSR1);
	}
}

/* --verbose: every nonzero KVM statistic of each vCPU, and our own. */
static void vm_stats_print(struct vm *vm)
{
	for (int i = 0; i < vm->ncpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		struct kvm_stats st;
		uint64_t *vals;

		struct pmu_vcpu_stats ps;

		pmu_vcpu_get_stats(v->pmu.pv, &ps);
		fprintf(stderr, "vmm: cpu %d: %llu exits to the VMM, %llu "
			"hypercalls, %llu PMIs\n", i,
			(unsigned long long)v->exits,
			(unsigned long long)v->hypercalls,
			(unsigned long long)v->pmu.pmis);
		if (v->yields)
			fprintf(stderr, "vmm: cpu %d: %llu yields of a host "
				"CPU while spinning on a lock\n", i,
				(unsigned long long)v->yields);
		if (ps.carried)
			fprintf(stderr, "vmm: cpu %d: %llu overflows carried "
				"across a thread switch, %llu raised again "
				"on resume\n", i,
				(unsigned long long)ps.carried,
				(unsigned long long)ps.redelivered);
		if (v->sample.budget.period)
			fprintf(stderr, "vmm: cpu %d: %llu samples taken by the "
				"VMM, %llu periods found the vCPU idle, %llu "
				"ms of waits for a host CPU left out\n", i,
				(unsigned long long)v->sample.taken,
				(unsigned long long)v->sample.idle,
				(unsigned long long)(v->sample.stolen /
						     (vm->tsc_khz ? vm->tsc_khz : 1)));
		if (kvm_stats_open(&st, v->fd))
			continue;
		vals = calloc(st.n, sizeof(*vals));
		if (vals && !kvm_stats_read(&st, vals))
			for (int k = 0; k < st.n; k++)
				if (vals[k])
					fprintf(stderr, "vmm: cpu %d: kvm %s "
						"%llu\n", i, st.names[k],
						(unsigned long long)vals[k]);
		free(vals);
		kvm_stats_close(&st);
	}
	if (vm->blocks) {
		struct step_blocks_stats bs;

		step_blocks_stats(vm->blocks, &bs);
		fprintf(stderr, "vmm: step blocks: %llu traps, %llu returns to "
			"user mode (%llu single-stepped), %llu partial blocks, "
			"%llu inconsistent; %llu int3s in %llu pages, %llu KiB\n",
			(unsigned long long)bs.traps,
			(unsigned long long)bs.arms,
			(unsigned long long)bs.arms_stepped,
			(unsigned long long)bs.accounts,
			(unsigned long long)bs.inconsistent,
			(unsigned long long)bs.patches,
			(unsigned long long)bs.frames,
			(unsigned long long)(bs.bytes >> 10));
		fprintf(stderr, "vmm: step cache: %llu blocks translated "
			"(%llu counted by two adds), "
			"%llu entries, %llu trap exits, %llu kernel entries "
			"(%llu in predictor stubs), "
			"%llu flushes, %llu overflow points; %llu KiB\n",
			(unsigned long long)bs.cache_blocks,
			(unsigned long long)bs.cache_fast,
			(unsigned long long)bs.cache_entries,
			(unsigned long long)bs.cache_traps,
			(unsigned long long)bs.cache_leaves,
			(unsigned long long)bs.cache_bp_leaves,
			(unsigned long long)bs.cache_flushes,
			(unsigned long long)bs.cache_limits,
			(unsigned long long)(bs.cache_bytes >> 10));
	}
}

/* Run all vCPUs until the program exits, the VM fails, or the timeout. */
int vm_run(struct vm *vm)
{
	struct timespec deadline;
	int started = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	if (vm->cfg->timeout > 0) {
		double t = vm->cfg->timeout;

		deadline.tv_sec += (time_t)t;
		deadline.tv_nsec += (long)((t - (time_t)t) * 1e9);
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	for (int i = 0; i < vm->ncpus; i++) {
		if (pthread_create(&vm->vcpus[i].thread, NULL, vcpu_thread,
				   &vm->vcpus[i])) {
			vm_request_stop(vm, VM_STOP_ERROR, VMM_EXIT_ERROR,
					"cannot start vCPU thread %d", i);
			break;
		}
		started++;
	}
	pthread_mutex_lock(&vm->lock);
	while (atomic_load(&vm->stop) == VM_RUNNING) {
		if (vm->cfg->timeout > 0) {
			if (pthread_cond_timedwait(&vm->stopped, &vm->lock,
						   &deadline) == ETIMEDOUT) {
				pthread_mutex_unlock(&vm->lock);
				vm_request_stop(vm, VM_STOP_EXIT, VMM_EXIT_TIMEOUT,
						"timed out after %g s",
						vm->cfg->timeout);
				pthread_mutex_lock(&vm->lock);
			}
		} else {
			pthread_cond_wait(&vm->stopped, &vm->lock);
		}
	}
	pthread_mutex_unlock(&vm->lock);
	vm_kick_all(vm);
	for (int i = 0; i < started; i++)
		pthread_join(vm->vcpus[i].thread, NULL);
	/* -v: where each vCPU was when a timeout stopped the guest. */
	if (vm->exit_status == VMM_EXIT_TIMEOUT && vm->cfg->verbose)
		for (int i = 0; i < vm->ncpus; i++)
			vcpu_dump(&vm->vcpus[i], "at the timeout");
	serial_flush(vm);
	if (vm->observer && vm->observer->end)
		vm->observer->end(vm->observer->ctx, vm);
	if (vm->cfg->verbose)
		vm_stats_print(vm);
	return vm->exit_status;
}
