// SPDX-License-Identifier: MIT
/*
 * `vmm stat --breakdown` (breakdown.h).  The exit times come from the
 * observer's exit_time hook, measured in TSC cycles from KVM_RUN's return
 * to the next KVM_RUN; everything else is read once when the guest has
 * stopped.  The guest time is what is left of the vCPUs' time: on kvm_pvm
 * it holds the user code (native) and the emulated kernel, which KVM's
 * insn_emulation counts instruction by instruction.
 */
#include <linux/kvm.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

#include "breakdown.h"
#include "hypercall.h"
#include "profile.h"
/* syscall_name(), from <asm/unistd_64.h> (common/gen_syscall_names.sh):
 * the guest's numbers are the host's, both x86-64 Linux. */
#include "syscall_names.h"
#include "kvm_stats.h"
#include "layout.h"
#include "vcpu.h"		/* hypercall_name() */
#include "vm.h"
#include "vpmu.h"

/*
 * User against kernel time inside the guest's: nothing counts it exactly
 * on kvm_pvm (the guest reading the TSC at every entry and exit costs
 * emulated instructions on every path), so a timer kicks each vCPU thread
 * out of KVM_RUN (SIGUSR1, the VMM's kick: EINTR) every millisecond and
 * the mode it was in is one sample.  Wall-clock time, not the thread's
 * CPU time: kvm_pvm does not charge native guest user time to the
 * thread, and a timer on it sampled only the kernel's.  A halted vCPU is
 * told apart by its MP state.  A statistical split, good to a few
 * percent from a few hundred samples on (size `train`).
 */
#define BD_SAMPLE_NS	1000000

const char *breakdown_syscall_name(unsigned int nr)
{
	return nr < PV_KSTAT_SYSCALLS - 1 ? syscall_name(nr) : NULL;
}

static const char *const vector_names[PV_KSTAT_VECTORS] = {
	[0] = "divide-error", [1] = "debug", [2] = "nmi", [3] = "breakpoint",
	[4] = "overflow", [6] = "invalid-opcode", [7] = "no-fpu",
	[8] = "double-fault", [13] = "general-protection",
	[14] = "page-fault", [16] = "x87-error", [17] = "alignment-check",
	[19] = "simd-error",
	[PV_KSTAT_VEC_TIMER] = "timer", [PV_KSTAT_VEC_RESCHED] = "ipi",
	[PV_KSTAT_VEC_PMI] = "pmi", [PV_KSTAT_VEC_INT80] = "int80",
	[0xff] = "spurious",
};

static const char *exit_reason_name(unsigned int r)
{
	switch (r) {
	case KVM_EXIT_IO:		return "io";
	case KVM_EXIT_MMIO:		return "mmio";
	case KVM_EXIT_HLT:		return "hlt";
	case KVM_EXIT_INTR:		return "intr";
	case KVM_EXIT_DEBUG:		return "debug";
	case KVM_EXIT_SHUTDOWN:		return "shutdown";
	case KVM_EXIT_SYSTEM_EVENT:	return "system-event";
	case KVM_EXIT_X86_RDMSR:	return "rdmsr";
	case KVM_EXIT_X86_WRMSR:	return "wrmsr";
	default:			return NULL;
	}
}

void breakdown_exit(struct breakdown *b, uint32_t reason, int hypercall,
		    uint64_t cycles)
{
	uint64_t *n, *c;

	if (hypercall >= 0) {
		hypercall = hypercall < BD_HYPERCALLS ? hypercall : 0;
		n = &b->hcalls[hypercall];
		c = &b->hcall_cycles[hypercall];
	} else {
		reason = reason < BD_EXIT_REASONS ? reason : 0;
		n = &b->exits[reason];
		c = &b->exit_cycles[reason];
	}
	__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(c, cycles, __ATOMIC_RELAXED);
}

static void breakdown_timer_start(struct breakdown *b, int cpu)
{
	struct sigevent sev = { 0 };
	struct itimerspec its = {
		.it_interval = { 0, BD_SAMPLE_NS },
		.it_value = { 0, BD_SAMPLE_NS },
	};

	b->timer_tried[cpu] = true;
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &b->timer[cpu]))
		return;
	b->timer_made[cpu] = true;
	timer_settime(b->timer[cpu], 0, &its, NULL);
}

void breakdown_exit_mode(struct breakdown *b, int cpu, uint32_t reason,
			 int mode, uint64_t rip)
{
	uint64_t *n = mode == VM_MODE_USER ? &b->samples_user :
		      mode == VM_MODE_KERNEL ? &b->samples_kernel :
		      &b->samples_halted;
	uint64_t i;

	if (cpu < 0 || cpu >= VMM_MAX_CPUS)
		return;
	if (!b->timer_tried[cpu]) {
		breakdown_timer_start(b, cpu);
		return;
	}
	if (reason != KVM_EXIT_INTR)
		return;
	__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
	/* A kick held to the return to user mode (vcpu_pmu_mode()) is the
	 * kernel's time but names no kernel function (LSTAR, where a kick
	 * finds kvm_pvm's `syscall` at CPL3, does). */
	if (mode == VM_MODE_KERNEL && rip >= PV_KERNEL_BASE) {
		i = __atomic_fetch_add(&b->nkrip, 1, __ATOMIC_RELAXED);
		if (i < BD_KSAMPLES)
			b->krip[i] = rip;
	}
}

void breakdown_set_kernel(struct breakdown *b, const void *elf, size_t len)
{
	b->kernel = elf;
	b->kernel_len = len;
}

/* Each vCPU's statistics added into b's, matched by name. */
static void breakdown_kvm_add(struct breakdown *b, int vcpu_fd)
{
	struct kvm_stats st;
	uint64_t *vals;

	if (kvm_stats_open(&st, vcpu_fd))
		return;
	vals = calloc(st.n, sizeof(*vals));
	if (vals && !kvm_stats_read(&st, vals)) {
		for (int k = 0; k < st.n; k++) {
			int i;

			for (i = 0; i < b->nkvm; i++)
				if (!strcmp(b->kvm_names[i], st.names[k]))
					break;
			if (i == b->nkvm) {
				if (b->nkvm == BD_KVM_STATS)
					continue;
				snprintf(b->kvm_names[i], sizeof(b->kvm_names[i]),
					 "%s", st.names[k]);
				b->nkvm++;
			}
			b->kvm[i] += vals[k];
		}
	}
	free(vals);
	kvm_stats_close(&st);
}

void breakdown_vm_end(struct breakdown *b, const struct vm *vm)
{
	uint64_t now = __rdtsc();

	for (int c = 0; c < VMM_MAX_CPUS; c++)
		if (b->timer_made[c])
			timer_delete(b->timer[c]);
	memset(b->timer_made, 0, sizeof(b->timer_made));
	b->tsc_khz = vm->tsc_khz;
	b->vcpu_cycles = (now - vm->boot_tsc) * vm->ncpus;
	for (int c = 0; c < vm->ncpus; c++)
		breakdown_kvm_add(b, vm->vcpus[c].fd);
	if (vm->kstat_gpa && vm->kstat_gpa <= vm->mem_size &&
	    sizeof(b->kstat) <= vm->mem_size - vm->kstat_gpa) {
		memcpy(&b->kstat, vm->mem + vm->kstat_gpa, sizeof(b->kstat));
		b->have_kstat = true;
	}
}

static uint64_t cycles_ns(const struct breakdown *b, uint64_t cycles)
{
	return b->tsc_khz ? (uint64_t)((double)cycles * 1e6 / b->tsc_khz) : 0;
}

static uint64_t kvm_stat(const struct breakdown *b, const char *name)
{
	for (int i = 0; i < b->nkvm; i++)
		if (!strcmp(b->kvm_names[i], name))
			return b->kvm[i];
	return 0;
}

struct bd_list {
	struct bd_item *it;
	size_t n, max;
};

__attribute__((format(printf, 4, 5)))
static void item_put(struct bd_list *l, const char *unit, uint64_t value,
		     const char *fmt, ...)
{
	struct bd_item *it;
	va_list ap;

	if (l->n == l->max)
		return;
	it = &l->it[l->n++];
	va_start(ap, fmt);
	vsnprintf(it->name, sizeof(it->name), fmt, ap);
	va_end(ap);
	it->unit = unit;
	it->value = value;
}

/* VMM exits: count and VMM time per reason, hypercalls by name. */
static void items_exits(const struct breakdown *b, struct bd_list *l)
{
	char num[16];

	for (unsigned int r = 0; r < BD_EXIT_REASONS; r++) {
		const char *name = exit_reason_name(r);

		if (!b->exits[r])
			continue;
		snprintf(num, sizeof(num), "reason-%u", r);
		item_put(l, "", b->exits[r], "vmm-exit:%s", name ? name : num);
		item_put(l, "ns", cycles_ns(b, b->exit_cycles[r]),
			 "vmm-exit-ns:%s", name ? name : num);
	}
	for (unsigned int h = 0; h < BD_HYPERCALLS; h++) {
		const char *name = hypercall_name(h);

		if (!b->hcalls[h])
			continue;
		snprintf(num, sizeof(num), "%u", h);
		item_put(l, "", b->hcalls[h], "vmm-exit:hypercall.%s",
			 name ? name : num);
		item_put(l, "ns", cycles_ns(b, b->hcall_cycles[h]),
			 "vmm-exit-ns:hypercall.%s", name ? name : num);
	}
}

/* Kernel entries: totals, then each system call and vector seen. */
static void items_kentry(const struct breakdown *b, struct bd_list *l)
{
	const struct pv_kstat *k = &b->kstat;
	uint64_t sys = 0, vec = 0;
	char num[16];

	for (int i = 0; i < PV_KSTAT_SYSCALLS; i++)
		sys += k->syscall[i];
	for (int i = 0; i < PV_KSTAT_VECTORS; i++)
		vec += k->vector[i];
	item_put(l, "", sys, "kentry:syscalls");
	item_put(l, "", vec, "kentry:exceptions+interrupts");
	/* Always present, zero or not: the table's columns. */
	item_put(l, "", k->vector[14], "kentry:page-fault");
	item_put(l, "", k->vector[PV_KSTAT_VEC_TIMER], "kentry:timer");
	item_put(l, "", k->vector[PV_KSTAT_VEC_RESCHED], "kentry:ipi");
	item_put(l, "", k->vector[PV_KSTAT_VEC_PMI], "kentry:pmi");
	item_put(l, "", k->vector[1], "kentry:debug");
	for (int i = 0; i < PV_KSTAT_VECTORS; i++) {
		if (!k->vector[i] || i == 14 || i == 1 ||
		    i == PV_KSTAT_VEC_TIMER || i == PV_KSTAT_VEC_RESCHED ||
		    i == PV_KSTAT_VEC_PMI)
			continue;
		snprintf(num, sizeof(num), "vector-%d", i);
		item_put(l, "", k->vector[i], "kentry:%s",
			 vector_names[i] ? vector_names[i] : num);
	}
	for (int i = 0; i < PV_KSTAT_SYSCALLS; i++) {
		const char *name = breakdown_syscall_name(i);

		if (!k->syscall[i])
			continue;
		snprintf(num, sizeof(num), "%d%s", i,
			 i == PV_KSTAT_SYSCALLS - 1 ? "+" : "");
		item_put(l, "", k->syscall[i], "kentry:syscall:%s",
			 name ? name : num);
	}
}

/* KVM statistics printed first and always: emulated kernel instructions,
 * all exits (KVM's own included), guest page faults KVM fixed itself. */
static const char *const kvm_always[] = {
	"insn_emulation", "exits", "pf_fixed", NULL,
};

static bool kvm_listed(const char *name)
{
	for (int i = 0; kvm_always[i]; i++)
		if (!strcmp(name, kvm_always[i]))
			return true;
	return !strcmp(name, "halt_wait_ns");	/* time:halted */
}

struct ksym_count {
	const char *name;
	uint64_t n;
};

static int ksym_count_cmp(const void *a, const void *b)
{
	const struct ksym_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * The kernel functions most often found running at a sample, named from
 * the kernel's symbol table (the profile code's symbolizer): on kvm_pvm,
 * where each kernel instruction is emulated, this is where kernel time
 * goes, function by function.  Nothing without samples or an image.
 */
static void items_ksyms(const struct breakdown *b, struct bd_list *l)
{
	uint64_t n = b->nkrip < BD_KSAMPLES ? b->nkrip : BD_KSAMPLES;
	struct profile *p;
	struct ksym_count *c;
	size_t nc = 0;
	char err[128];

	if (!n || !b->kernel)
		return;
	p = profile_new();
	c = calloc(n, sizeof(*c));
	if (!p || !c || profile_add_image_mem(p, "[kernel]", NULL, b->kernel,
					       b->kernel_len, 0, true, err,
					       sizeof(err)) < 0)
		goto out;
	for (uint64_t i = 0; i < n; i++) {
		struct sample s = { .kind = SAMPLE_KERNEL, .ip = b->krip[i] };
		struct sym_info si;
		const char *name;
		size_t k;

		profile_resolve(p, &s, &si);
		name = si.sym ? si.sym : "[unknown]";
		/* One string per symbol in the image: its address names it. */
		for (k = 0; k < nc; k++)
			if (c[k].name == name)
				break;
		if (k == nc)
			c[nc++].name = name;
		c[k].n++;
	}
	qsort(c, nc, sizeof(*c), ksym_count_cmp);
	for (size_t k = 0; k < nc && k < BD_KSYMS; k++)
		item_put(l, "", c[k].n, "ksamples:%s", c[k].name);
out:
	free(c);
	profile_free(p);
}

size_t breakdown_items(const struct breakdown *b, struct bd_item *it,
		       size_t max)
{
	struct bd_list l = { it, 0, max };
	uint64_t vmm = 0, halt = kvm_stat(b, "halt_wait_ns");
	uint64_t vcpu = cycles_ns(b, b->vcpu_cycles), guest, samples;

	for (int r = 0; r < BD_EXIT_REASONS; r++)
		vmm += b->exit_cycles[r];
	for (int h = 0; h < BD_HYPERCALLS; h++)
		vmm += b->hcall_cycles[h];
	vmm = cycles_ns(b, vmm);
	item_put(&l, "ns", vcpu, "time:vcpus");
	item_put(&l, "ns", vcpu > vmm + halt ? vcpu - vmm - halt : 0,
		 "time:guest");
	item_put(&l, "ns", vmm, "time:vmm");
	item_put(&l, "ns", halt, "time:halted");
	guest = vcpu > vmm + halt ? vcpu - vmm - halt : 0;
	samples = b->samples_user + b->samples_kernel;
	item_put(&l, "ns", samples ? guest * b->samples_user / samples : 0,
		 "time:user");
	item_put(&l, "ns", samples ? guest * b->samples_kernel / samples : 0,
		 "time:kernel");
	item_put(&l, "", b->samples_user, "samples:user");
	item_put(&l, "", b->samples_kernel, "samples:kernel");
	item_put(&l, "", b->samples_halted, "samples:halted");
	items_ksyms(b, &l);
	/* Always present, zero or not: the suite's table reads them. */
	for (int i = 0; kvm_always[i]; i++)
		item_put(&l, "", kvm_stat(b, kvm_always[i]), "kvm:%s",
			 kvm_always[i]);
	for (int i = 0; i < b->nkvm; i++)
		if (b->kvm[i] && !kvm_listed(b->kvm_names[i]))
			item_put(&l, strstr(b->kvm_names[i], "_ns") ? "ns" : "",
				 b->kvm[i], "kvm:%s", b->kvm_names[i]);
	items_exits(b, &l);
	if (b->have_kstat)
		items_kentry(b, &l);
	return l.n;
}

#define BD_MAX_ITEMS	(BD_KVM_STATS + 4 * BD_EXIT_REASONS + PV_KSTAT_SYSCALLS + 64)

void breakdown_print(FILE *f, const struct vmm_stat *st,
		     const struct breakdown *b)
{
	struct bd_item *it = calloc(BD_MAX_ITEMS, sizeof(*it));
	size_t n = it ? breakdown_items(b, it, BD_MAX_ITEMS) : 0;
	bool human = !st->json && !st->sep;

	if (human)
		fprintf(f, " Where the time goes (vCPU time summed over "
			"vCPUs; kvm: KVM's vCPU statistics; kentry: guest "
			"kernel entries; ksamples: the kernel function at a "
			"kernel-mode sample):\n\n");
	for (size_t i = 0; i < n; i++) {
		if (st->json)
			fprintf(f, "{\"counter-value\" : \"%llu\", \"unit\" : "
				"\"%s\", \"event\" : \"%s\"}\n",
				(unsigned long long)it[i].value, it[i].unit,
				it[i].name);
		else if (st->sep)
			fprintf(f, "%llu%s%s%s%s%s%s%s\n",
				(unsigned long long)it[i].value, st->sep,
				it[i].unit, st->sep, it[i].name, st->sep,
				st->sep, st->sep);
		else if (*it[i].unit)
			fprintf(f, "%18.3f ms   %s\n", it[i].value / 1e6,
				it[i].name);
		else
			fprintf(f, "%18llu      %s\n",
				(unsigned long long)it[i].value, it[i].name);
	}
	if (human && !b->have_kstat)
		fprintf(f, "  (no kernel entry counts: the guest kernel did not "
			"register them)\n");
	if (human)
		fprintf(f, "\n");
	free(it);
}
