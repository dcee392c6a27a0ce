// SPDX-License-Identifier: MIT
/*
 * `vmm record`'s VMM-side sampling (vmm/core/vcpu_sample.c) without KVM:
 * the period budget, the guest thread read from a fake guest memory laid
 * out as uapi/stat.h says, a sample taken at an exit past the period, and
 * what of a run past the timer's deadline counts.
 */
#include <linux/kvm.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>
#include <cmocka.h>

#include "layout.h"
#include "stat.h"
#include "vcpu.h"

#define MEM_SIZE	(4 << 20)
#define TSS_GPA		0x1000
#define TASK_GPA	0x8000		/* 16 KiB-aligned */
#define PROC_GPA	0x20000
#define KVA(gpa)	(PV_KERNEL_BASE + (gpa))

struct fixture {
	struct vmm_config cfg;
	struct vm vm;
	struct vcpu v;
	struct vm_observer obs;
	struct pv_sample got[4];
	uint32_t nchain[4];
	int ngot;
};

static void put_u64(struct vm *vm, uint64_t gpa, uint64_t val)
{
	memcpy(vm->mem + gpa, &val, 8);
}

static void put_u32(struct vm *vm, uint64_t gpa, uint32_t val)
{
	memcpy(vm->mem + gpa, &val, 4);
}

/* A running thread 42 of process 40, "worker", as the guest kernel has it. */
static void guest_thread(struct vm *vm, uint64_t proc_va)
{
	put_u64(vm, TSS_GPA + PV_TSS_RSP0, KVA(TASK_GPA) + PV_KSTACK_SIZE);
	put_u64(vm, TASK_GPA + PV_TASK_PROC, proc_va);
	put_u32(vm, TASK_GPA + PV_TASK_TID, 42);
	memcpy(vm->mem + TASK_GPA + PV_TASK_COMM, "worker", 7);
	put_u32(vm, PROC_GPA + PV_PROC_PID, 40);
}

static void observe(void *ctx, const struct pv_sample *r, uint64_t time_ns,
		    const uint64_t *chain, uint32_t nchain)
{
	struct fixture *f = ctx;

	(void)time_ns;
	assert_true(nchain == 0 || chain);
	if (f->ngot < 4) {
		f->nchain[f->ngot] = nchain;
		f->got[f->ngot++] = *r;
	}
}

/* One fixture, zeroed for each test: the tests run one at a time. */
static int setup(void **state)
{
	static uint8_t mem[MEM_SIZE];
	static struct kvm_run run;
	static struct fixture f;

	memset(mem, 0, sizeof(mem));
	memset(&run, 0, sizeof(run));
	f = (struct fixture){
		.vm = { .cfg = &f.cfg, .mem = mem, .mem_size = MEM_SIZE,
			.ncpus = 1, .tsc_khz = 2000000, .observer = &f.obs },
		.v = { .vm = &f.vm, .run = &run },
		.obs = { .ctx = &f, .sample = observe },
	};
	*state = &f;
	return 0;
}

static void test_budget_periods(void **state)
{
	struct sample_budget b = { .period = 1000 };

	(void)state;
	assert_int_equal(sample_budget_add(&b, 999, 0), 0);
	assert_int_equal(sample_budget_add(&b, 1, 0), 1);
	assert_int_equal(b.acc, 0);
	/* A late kick: one sample standing for three periods, rest kept. */
	assert_int_equal(sample_budget_add(&b, 3250, 0), 3);
	assert_int_equal(b.acc, 250);
}

/* Steal comes off the time not sampled yet, never off time to come. */
static void test_budget_steal(void **state)
{
	struct sample_budget b = { .period = 1000 };

	(void)state;
	assert_int_equal(sample_budget_add(&b, 600, 0), 0);
	assert_int_equal(sample_budget_add(&b, 500, 700), 0);
	assert_int_equal(b.acc, 400);
	/* More steal than time: what is left over is not owed. */
	assert_int_equal(sample_budget_add(&b, 100, 1500), 0);
	assert_int_equal(b.acc, 0);
	assert_int_equal(sample_budget_add(&b, 1000, 0), 1);
}

static void test_thread_read(void **state)
{
	struct fixture *f = *state;
	struct pv_sample s = { 0 };

	guest_thread(&f->vm, KVA(PROC_GPA));
	assert_true(vcpu_sample_thread(&f->vm, KVA(TSS_GPA), &s));
	assert_int_equal(s.pid, 40);
	assert_int_equal(s.tid, 42);
	assert_string_equal(s.comm, "worker");
}

static void test_thread_idle_or_bad(void **state)
{
	struct fixture *f = *state;
	struct pv_sample s = { 0 };

	/* The idle task has no process: not sampled. */
	guest_thread(&f->vm, 0);
	assert_false(vcpu_sample_thread(&f->vm, KVA(TSS_GPA), &s));
	/* A process pointer outside RAM, a user-half TR base, a stack top
	 * that is not a stack's: no sample, and no read outside RAM. */
	guest_thread(&f->vm, KVA(MEM_SIZE));
	assert_false(vcpu_sample_thread(&f->vm, KVA(TSS_GPA), &s));
	guest_thread(&f->vm, KVA(PROC_GPA));
	assert_false(vcpu_sample_thread(&f->vm, TSS_GPA, &s));
	put_u64(&f->vm, TSS_GPA + PV_TSS_RSP0, KVA(TASK_GPA) + 8);
	assert_false(vcpu_sample_thread(&f->vm, KVA(TSS_GPA), &s));
	put_u64(&f->vm, TSS_GPA + PV_TSS_RSP0, KVA(MEM_SIZE) + PV_KSTACK_SIZE);
	assert_false(vcpu_sample_thread(&f->vm, KVA(TSS_GPA), &s));
}

/* Sampling every period ticks of cycles, or of wall time (task-clock). */
static void sampling_set(struct fixture *f, uint64_t period, bool wall)
{
	f->vm.sampling = (struct vm_sampling){ .period_tsc = period,
					       .period = period, .wall = wall };
	f->v.sample.budget.period = period;
}

/*
 * A kick whose exit came 10,000 ticks past the deadline, in a run of
 * 1,000,000, with no way out known before it: all counted, and its own
 * way out learned.
 */
static void kick_first(struct fixture *f)
{
	struct vcpu_sample *s = &f->v.sample;
	uint64_t now = __rdtsc();

	f->v.run->exit_reason = KVM_EXIT_INTR;
	s->run_tsc = now - 1000000;
	s->deadline_tsc = now - 10000;
	vcpu_sample_after_run(&f->v);
	assert_in_range(s->kick_ticks, 10000, 100000);
	assert_int_equal(s->kick_late, 0);
}

/* An exit two and a half periods after the run began: one sample of two
 * periods, where the vCPU stood, named after the running thread. */
static void test_exit_takes_sample(void **state)
{
	struct fixture *f = *state;
	struct kvm_run *run = f->v.run;
	const uint64_t period = 1000000000;	/* 0.5 s at 2 GHz */

	guest_thread(&f->vm, KVA(PROC_GPA));
	sampling_set(f, period, false);
	f->v.sample.run_tsc = __rdtsc() - period * 5 / 2;
	run->exit_reason = KVM_EXIT_INTR;
	run->s.regs.sregs.tr.base = KVA(TSS_GPA);
	run->s.regs.sregs.cs.selector = 0x33;
	run->s.regs.regs.rip = 0x401234;
	vcpu_sample_after_run(&f->v);
	assert_int_equal(f->ngot, 1);
	assert_int_equal(f->got[0].tid, 42);
	assert_int_equal(f->got[0].pid, 40);
	assert_int_equal(f->got[0].ip, 0x401234);
	assert_int_equal(f->got[0].user, 1);
	assert_int_equal(f->got[0].period, 2 * period);
	assert_true(f->v.sample.rearm);

	/* At CPL3 but at LSTAR (kvm_pvm's syscall): the kernel's. */
	f->v.sample.run_tsc = __rdtsc() - period * 3 / 2;
	run->s.regs.regs.rip = KVA(0x200100);
	vcpu_sample_after_run(&f->v);
	assert_int_equal(f->ngot, 2);
	assert_int_equal(f->got[1].user, 0);

	/* Idle: the period ends, no sample. */
	guest_thread(&f->vm, 0);
	f->v.sample.run_tsc = __rdtsc() - period * 3 / 2;
	vcpu_sample_after_run(&f->v);
	assert_int_equal(f->ngot, 2);
	assert_int_equal(f->v.sample.idle, 1);
}

/*
 * -g with an rbp that leads nowhere: the sample still comes, with no
 * chain (the fixture's vCPU has no KVM fd, so no frame can be read; a
 * real guest's garbage rbp is test record-callchain-fp's).
 */
static void test_exit_chain_unreadable(void **state)
{
	struct fixture *f = *state;
	struct kvm_run *run = f->v.run;
	const uint64_t period = 1000000000;
	const uint64_t rbps[] = { 0x7ffffffe000, 0x1003, 0,
				  KVA(0x1000), ~0ull };

	f->v.fd = -1;
	guest_thread(&f->vm, KVA(PROC_GPA));
	sampling_set(f, period, false);
	f->vm.sampling.callchain = true;
	run->exit_reason = KVM_EXIT_INTR;
	run->s.regs.sregs.tr.base = KVA(TSS_GPA);
	run->s.regs.sregs.cs.selector = 0x33;
	run->s.regs.regs.rip = 0x401234;
	for (size_t i = 0; i < sizeof(rbps) / sizeof(rbps[0]); i++) {
		f->ngot = 0;
		run->s.regs.regs.rbp = rbps[i];
		f->v.sample.run_tsc = __rdtsc() - period * 3 / 2;
		vcpu_sample_after_run(&f->v);
		assert_int_equal(f->ngot, 1);
		assert_int_equal(f->got[0].ip, 0x401234);
		assert_int_equal(f->nchain[0], 0);
	}
}

/* Time past the timer's deadline is the kick's way out, not the thread's. */
static void test_exit_clipped_at_deadline(void **state)
{
	struct fixture *f = *state;
	const uint64_t period = 1000000000;
	uint64_t now = __rdtsc();

	guest_thread(&f->vm, KVA(PROC_GPA));
	sampling_set(f, period, false);
	f->v.run->s.regs.sregs.tr.base = KVA(TSS_GPA);
	f->v.sample.run_tsc = now - period * 5 / 2;
	f->v.sample.deadline_tsc = now - period * 2;
	f->v.sample.kick_ticks = period * 4;
	vcpu_sample_after_run(&f->v);
	assert_int_equal(f->ngot, 0);
	assert_int_equal(f->v.sample.budget.acc, period / 2);

	/* No way out known yet: nothing is left out. */
	f->v.sample.kick_ticks = 0;
	f->v.sample.budget.acc = 0;
	f->v.sample.budget.period = period * 4;
	now = __rdtsc();
	f->v.sample.run_tsc = now - period * 3;
	f->v.sample.deadline_tsc = now - period * 2;
	vcpu_sample_after_run(&f->v);
	assert_in_range(f->v.sample.budget.acc, period * 3, period * 7 / 2);
}

/* A kick held through kernel code (kvm_pvm) comes back later than the
 * least kick seen: the time beyond that least way out is the thread's. */
static void test_exit_held_kick(void **state)
{
	struct fixture *f = *state;
	struct vcpu_sample *s = &f->v.sample;
	uint64_t now, run;

	sampling_set(f, 1000000000000ull, false);
	kick_first(f);
	assert_in_range(s->counted, 1000000, 1100000);

	now = __rdtsc();
	run = s->run_tsc = now - 2000000;
	s->deadline_tsc = now - 500000;
	vcpu_sample_after_run(&f->v);
	/* Late by the ticks since run, less at least the least way out
	 * (10,000 and what the first call took past its now). */
	assert_in_range(s->counted, 1800000, __rdtsc() - run - 10000);
	assert_in_range(s->kick_ticks, 10000, 100000);
	assert_int_equal(f->ngot, 0);
}

/* task-clock (wall time) reads no steal, but learns a kick's way out as
 * cycles does: the least lateness of a kick, at the kick's own exit. */
static void test_exit_wall_learns_kick(void **state)
{
	struct fixture *f = *state;
	struct vcpu_sample *s = &f->v.sample;

	sampling_set(f, 1000000000000ull, true);
	kick_first(f);
	assert_int_equal(s->stolen, 0);
}

/* The thread's schedstat, as the kernel prints it, with delay_ns waited. */
static void fake_schedstat(struct vcpu_sample *s, uint64_t delay_ns)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "123456 %llu 7\n",
			 (unsigned long long)delay_ns);

	if (!s->delay_open) {
		FILE *f = tmpfile();

		assert_non_null(f);
		s->delay_fd = dup(fileno(f));
		fclose(f);
		s->delay_open = true;
	}
	assert_int_equal(ftruncate(s->delay_fd, 0), 0);
	assert_int_equal(pwrite(s->delay_fd, line, n, 0), n);
}

/*
 * A kick that waited for a host CPU is late by that wait, which comes off
 * the run's time: it is not a way out (under QEMU, learned whole it halved
 * one vCPU's samples).
 */
static void test_exit_kick_late_by_steal(void **state)
{
	struct fixture *f = *state;
	struct vcpu_sample *s = &f->v.sample;
	const uint64_t period = 1000000000000ull;
	uint64_t now;

	sampling_set(f, period, false);
	f->v.run->exit_reason = KVM_EXIT_INTR;
	s->kick_ticks = 20000;
	fake_schedstat(s, 5000000);
	s->delay_seen = 5000000;
	/* 3 ms waited at 2 GHz: more than the 4,000,000 ticks late. */
	fake_schedstat(s, 8000000);
	now = __rdtsc();
	s->run_tsc = now - 10000000;
	s->deadline_tsc = now - 4000000;
	vcpu_sample_after_run(&f->v);
	assert_in_range(s->counted, 10000000 - 20000, 10100000);
	assert_int_equal(s->kick_ticks, 20000);
	assert_int_equal(s->kick_late, 0);
	assert_in_range(s->budget.acc, 4000000 - 20000, 4100000);
	assert_int_equal(s->delay_seen, 8000000);
	vcpu_sample_destroy(&f->v);
}

/*
 * A run that waited for a host CPU longer than two periods and ran half
 * of one has half a period of the thread's time: no sample, and the next
 * period is the thread's whole.  Steal known only at the next entry (KVM's
 * record) made it two samples of the waiting run and none of the next: at
 * boot under QEMU, a program that was never sampled.
 */
static void test_exit_steal_before_sample(void **state)
{
	struct fixture *f = *state;
	struct vcpu_sample *s = &f->v.sample;
	const uint64_t period = 1000000000;	/* 0.5 s at 2 GHz */

	guest_thread(&f->vm, KVA(PROC_GPA));
	sampling_set(f, period, false);
	f->v.run->exit_reason = KVM_EXIT_INTR;
	f->v.run->s.regs.sregs.tr.base = KVA(TSS_GPA);
	f->v.run->s.regs.sregs.cs.selector = 0x33;
	fake_schedstat(s, 0);
	fake_schedstat(s, 1000000000);		/* 1 s: two periods */
	s->run_tsc = __rdtsc() - period * 5 / 2;
	s->deadline_tsc = s->run_tsc + period;
	s->kick_ticks = 1;
	vcpu_sample_after_run(&f->v);
	assert_int_equal(f->ngot, 0);
	assert_int_equal(s->idle, 0);
	assert_in_range(s->budget.acc, period / 2 - 1, period / 2 + 1000000);

	s->run_tsc = __rdtsc() - period * 3 / 4;
	s->deadline_tsc = s->run_tsc + period;
	vcpu_sample_after_run(&f->v);
	assert_int_equal(f->ngot, 1);
	assert_int_equal(f->got[0].period, period);
	assert_int_equal(f->got[0].tid, 42);
	vcpu_sample_destroy(&f->v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_periods),
		cmocka_unit_test(test_budget_steal),
		cmocka_unit_test_setup(test_thread_read, setup),
		cmocka_unit_test_setup(test_thread_idle_or_bad, setup),
		cmocka_unit_test_setup(test_exit_takes_sample, setup),
		cmocka_unit_test_setup(test_exit_chain_unreadable, setup),
		cmocka_unit_test_setup(test_exit_clipped_at_deadline, setup),
		cmocka_unit_test_setup(test_exit_held_kick, setup),
		cmocka_unit_test_setup(test_exit_wall_learns_kick, setup),
		cmocka_unit_test_setup(test_exit_kick_late_by_steal, setup),
		cmocka_unit_test_setup(test_exit_steal_before_sample, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
