// SPDX-License-Identifier: MIT
/*
 * `vmm record` sampling from the VMM side (vcpu_sample.h).  Each vCPU
 * thread has a one-shot CLOCK_MONOTONIC timer whose signal is the VMM's
 * kick (SIGUSR1: KVM_RUN returns EINTR).  The time of each KVM_RUN, less
 * the time the thread waited for a host CPU (KVM's steal time, read from
 * schedstat when it matters), is the thread's time as the tsc source's
 * cycles count it: a period ends at the first exit past it (the
 * timer's, or any other), where the sample is read from the exit's state.
 * The timer is aimed again only after a sample, or when it may have fired
 * while the VMM handled an exit (that kick is cleared with immediate_exit).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

#include "guest_va.h"
#include "layout.h"
#include "stat.h"
#include "vcpu.h"
#include "vcpu_sample.h"

#define VCPU_SAMPLE_MIN_NS	100000	/* 10 kHz of kicks at most */

uint64_t sample_budget_add(struct sample_budget *b, uint64_t ticks,
			   uint64_t steal)
{
	uint64_t n;

	b->acc += ticks;
	b->acc -= steal < b->acc ? steal : b->acc;
	if (!b->period || b->acc < b->period)
		return 0;
	n = b->acc / b->period;
	b->acc %= b->period;
	return n;
}

/*
 * The host CPU time the vCPU's thread waited for since the last call, in
 * TSC ticks: schedstat's run_delay, which KVM's steal time is made of, but
 * read now.  KVM writes its steal record only at the next entry, so a run
 * that waited was sampled with its wait, and the wait then came off the
 * next run's time: under QEMU a boot that waited 0.1 s before its first
 * exit was sampled as idle and then ate the whole program (0 samples).
 */
static uint64_t vcpu_sample_steal(struct vcpu *v)
{
	struct vcpu_sample *s = &v->sample;
	unsigned long long exec, delay;
	char buf[128];
	uint64_t ticks;
	ssize_t n;

	if (!s->delay_open)
		return 0;
	n = pread(s->delay_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &exec, &delay) != 2 ||
	    delay < s->delay_seen)
		return 0;
	ticks = (delay - s->delay_seen) * v->vm->tsc_khz / 1000000;
	s->delay_seen = delay;
	s->stolen += ticks;
	return ticks;
}

/* The guest kernel maps all RAM at PV_KERNEL_BASE: its addresses are GPAs. */
static const uint8_t *kernel_ptr(struct vm *vm, uint64_t va, uint64_t len)
{
	if (va < PV_KERNEL_BASE)
		return NULL;
	return vm_gpa_to_hva(vm, va - PV_KERNEL_BASE, len);
}

bool vcpu_sample_thread(struct vm *vm, uint64_t tss_base, struct pv_sample *s)
{
	const uint8_t *tss, *task, *proc;
	uint64_t rsp0, proc_va;

	tss = kernel_ptr(vm, tss_base, PV_TSS_RSP0 + 8);
	if (!tss)
		return false;
	memcpy(&rsp0, tss + PV_TSS_RSP0, 8);
	if (rsp0 & (PV_KSTACK_SIZE - 1))
		return false;
	task = kernel_ptr(vm, rsp0 - PV_KSTACK_SIZE, PV_TASK_COMM + 16);
	if (!task)
		return false;
	memcpy(&proc_va, task + PV_TASK_PROC, 8);
	proc = proc_va ? kernel_ptr(vm, proc_va, PV_PROC_PID + 4) : NULL;
	if (!proc)
		return false;
	memcpy(&s->pid, proc + PV_PROC_PID, 4);
	memcpy(&s->tid, task + PV_TASK_TID, 4);
	memcpy(s->comm, task + PV_TASK_COMM, sizeof(s->comm));
	return true;
}

/* The timer's signal goes to this thread alone: created on it. */
static void vcpu_sample_start(struct vcpu *v, uint64_t now)
{
	struct vcpu_sample *s = &v->sample;
	struct sigevent sev = { 0 };

	s->budget.period = v->vm->sampling.period_tsc;
	s->run_tsc = now;
	s->rearm = true;
	/* task-clock counts the waits; for cycles, those before sampling
	 * began are not the program's: a baseline, not steal. */
	if (!v->vm->sampling.wall) {
		s->delay_fd = open("/proc/thread-self/schedstat",
				   O_RDONLY | O_CLOEXEC);
		s->delay_open = s->delay_fd >= 0;
		if (!s->delay_open)
			fprintf(stderr, "vmm: cpu %d: no schedstat: %m (waits "
				"for a host CPU count as the guest's time)\n",
				v->id);
		vcpu_sample_steal(v);
		s->stolen = 0;
	}
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &s->timer))
		fprintf(stderr, "vmm: cpu %d: no sampling timer: %m (samples "
			"only at other exits)\n", v->id);
	else
		s->timer_made = true;
}

/*
 * Fire when the rest of the period has run, if none of it is excluded; not
 * sooner than VCPU_SAMPLE_MIN_NS, or a short period's kicks outrun KVM's
 * entry and the guest never runs (the sample then stands for more periods:
 * the VMM side's throttling).
 */
static void vcpu_sample_arm(struct vcpu *v, uint64_t now)
{
	struct vcpu_sample *s = &v->sample;
	uint64_t rem = s->budget.period - s->budget.acc;
	uint64_t ns = rem * 1000000 / v->vm->tsc_khz;
	struct itimerspec its = { 0 };

	if (ns < VCPU_SAMPLE_MIN_NS) {
		ns = VCPU_SAMPLE_MIN_NS;
		rem = ns * v->vm->tsc_khz / 1000000;
	}
	its.it_value.tv_sec = ns / 1000000000;
	its.it_value.tv_nsec = ns % 1000000000;
	if (s->timer_made)
		timer_settime(s->timer, 0, &its, NULL);
	s->deadline_tsc = now + rem;
	s->rearm = false;
}

void vcpu_sample_before_run(struct vcpu *v)
{
	const struct vm_sampling *cfg = &v->vm->sampling;
	struct vcpu_sample *s = &v->sample;
	uint64_t now;

	if (!cfg->period_tsc)
		return;
	now = __rdtsc();
	if (!s->budget.period)
		vcpu_sample_start(v, now);
	/* The MONOTONIC timer and the TSC deadline may disagree by a little:
	 * in the period's last eighth the kick may be spent already. */
	if (s->rearm || now + (s->budget.period >> 3) >= s->deadline_tsc)
		vcpu_sample_arm(v, now);
	if (!cfg->wall)
		s->run_tsc = now;
}

/*
 * -g: the return addresses of user code's frames, innermost first, from
 * the frame-pointer chain (rbp -> saved rbp, return address above it).
 * The guest's memory is read as it is: a frame that is not a frame (code
 * built without frame pointers, a garbage or hostile rbp) must just end
 * the walk, so only a rising, aligned chain in user space is followed.
 * It stops at a null, unaligned or non-increasing rbp, a frame it cannot
 * read, an address past user space (or a return address in page 0), or
 * VCPU_SAMPLE_CHAIN_MAX frames.
 * A sample in a function's prologue (before its `mov %rsp, %rbp`) misses
 * its caller, as with perf's fp chains.
 */
static uint32_t vcpu_sample_chain(struct vcpu *v, uint64_t *chain)
{
	struct gva_cache c = { 0 };
	uint64_t fp = v->run->s.regs.regs.rbp, frame[2];
	uint32_t n = 0;

	/* User addresses end at PV_USER_TOP, below PV_KERNEL_BASE: above
	 * it (non-canonical, or the kernel's half) is no user frame but the
	 * data in the rbp of code without frame pointers. */
	while (n < VCPU_SAMPLE_CHAIN_MAX) {
		if (!fp || (fp & 7) || fp >= PV_USER_TOP - sizeof(frame))
			break;
		if (guest_va_read(v, fp, frame, sizeof(frame), &c) !=
		    sizeof(frame))
			break;
		/* Nor is a return into the first page, which is never code. */
		if (frame[1] < 4096 || frame[1] >= PV_USER_TOP)
			break;
		chain[n++] = frame[1];
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return n;
}

/* n periods ended at this exit: one sample where the vCPU stands. */
static void vcpu_sample_take(struct vcpu *v, uint64_t n, uint64_t now)
{
	const struct vm_observer *o = v->vm->observer;
	const struct kvm_run *run = v->run;
	struct pv_sample smp = { 0 };
	uint64_t chain[VCPU_SAMPLE_CHAIN_MAX];
	uint32_t nchain = 0;

	v->sample.rearm = true;
	if (!vcpu_sample_thread(v->vm, run->s.regs.sregs.tr.base, &smp)) {
		v->sample.idle += n;
		return;
	}
	smp.cpu = v->id;
	smp.ip = run->s.regs.regs.rip;
	smp.user = vcpu_in_user_code(v);
	smp.time_tsc = now;
	smp.period = n * v->vm->sampling.period;
	v->sample.taken++;
	if (!o || !o->sample)
		return;
	/* The guest kernel keeps no frame pointers: its samples get none. */
	if (v->vm->sampling.callchain && smp.user)
		nchain = vcpu_sample_chain(v, chain);
	o->sample(o->ctx, &smp, (now - v->vm->boot_tsc) * 1000000 /
		  v->vm->tsc_khz, chain, nchain);
}

/*
 * Where the thread's time ended in a run past the timer's deadline.  The
 * kick's own way out (the signal, the exit from the guest: about 100 us
 * from user code on kvm_pvm) is not the thread's, and counted it brought
 * the next kick sooner until the kicks fed on themselves.  But kvm_pvm
 * holds a kick through emulated kernel code until the return to user
 * mode, and that kernel work is the thread's: only the least way out seen
 * (a kick's KVM_EXIT_INTR, never another exit's) is left out, and nothing
 * until one is known.
 */
static uint64_t vcpu_sample_kick_end(struct vcpu_sample *s, uint32_t reason,
				     uint64_t now)
{
	uint64_t late = now - s->deadline_tsc;

	if (reason == KVM_EXIT_INTR)
		s->kick_late = late;
	if (!s->kick_ticks)
		return now;
	if (late <= s->kick_ticks)
		return s->deadline_tsc;
	return now - s->kick_ticks;
}

/*
 * The last kick's way out, learned once the steal of its run is known.  A
 * kick that waited for a host CPU is late by that steal, which is taken off
 * already: learned whole, a host timeslice was lost twice in every later
 * run, and under QEMU one vCPU's thread kept half the samples of the
 * other's.
 */
static void vcpu_sample_kick_learn(struct vcpu_sample *s, uint64_t steal)
{
	uint64_t late = s->kick_late;

	s->kick_late = 0;
	if (late <= steal)
		return;
	late -= steal;
	if (!s->kick_ticks || late < s->kick_ticks)
		s->kick_ticks = late;
}

void vcpu_sample_after_run(struct vcpu *v)
{
	const struct vm_sampling *cfg = &v->vm->sampling;
	struct vcpu_sample *s = &v->sample;
	uint64_t now, end, steal = 0, n;

	if (!cfg->period_tsc || !s->budget.period)
		return;
	now = __rdtsc();
	end = now;
	if (now > s->deadline_tsc && s->deadline_tsc > s->run_tsc)
		end = vcpu_sample_kick_end(s, v->run->exit_reason, now);
	s->counted = end - s->run_tsc;
	/* Where a period may end or a kick came, this run's steal first (a
	 * read of schedstat: not at every exit; task-clock keeps it), and
	 * the kick's way out learned with it. */
	if (now > s->deadline_tsc ||
	    s->budget.acc + s->counted >= s->budget.period) {
		if (!cfg->wall)
			steal = vcpu_sample_steal(v);
		vcpu_sample_kick_learn(s, steal);
	}
	n = sample_budget_add(&s->budget, s->counted, steal);
	if (cfg->wall)
		s->run_tsc = now;
	if (n)
		vcpu_sample_take(v, n, now);
}

void vcpu_sample_destroy(struct vcpu *v)
{
	if (v->sample.timer_made)
		timer_delete(v->sample.timer);
	v->sample.timer_made = false;
	if (v->sample.delay_open)
		close(v->sample.delay_fd);
	v->sample.delay_open = false;
}
