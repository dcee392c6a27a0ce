// SPDX-License-Identifier: MIT
/*
 * Hypercalls: `out` to PV_HC_PORT with the number in rax and arguments in
 * rdi, rsi, r10 (uapi/hypercall.h).  Every argument is untrusted: bad
 * numbers return -ENOSYS, bad addresses -EFAULT, and nothing the guest
 * passes can make the VMM touch memory outside guest RAM.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "guest_mem.h"
#include "hypercall.h"
#include "step_block.h"
#include "kstat.h"
#include "share.h"
#include "layout.h"
#include "stat.h"
#include "vcpu.h"
#include "vcpu_pmu.h"

#define HC_IO_CHUNK	65536
#define HC_LOG_MAX	1024	/* one kernel log line, at most */
#define HC_EXIT_STATUS	0xff	/* exit status bits, as in _exit(2) */

static uint8_t *hc_va(struct vcpu *v, uint64_t cr3, uint64_t va, uint64_t len,
		      bool write);
static uint64_t hc_chunk(uint64_t va, uint64_t left);

/*
 * Console output from a user buffer, or from the kernel's direct map (a
 * sendfile bounce buffer), straight from guest memory.
 */
static int64_t hc_write(struct vcpu *v, uint64_t fd, uint64_t uva,
			uint64_t len)
{
	uint64_t cr3 = vcpu_sregs(v)->cr3;
	uint64_t done = 0;

	if (fd != 1 && fd != 2)
		return -EBADF;
	if (uva + len < uva)
		return -EFAULT;
	while (done < len) {
		uint64_t n = hc_chunk(uva + done, len - done);
		const uint8_t *buf = hc_va(v, cr3, uva + done, n, false);

		if (!buf)
			return done ? (int64_t)done : -EFAULT;
		for (uint64_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return done + off ? (int64_t)(done + off) : -EIO;
			off += w;
		}
		done += n;
	}
	return done;
}

static int64_t hc_read(struct vcpu *v, uint64_t fd, uint64_t uva,
		       uint64_t len)
{
	uint64_t cr3 = vcpu_sregs(v)->cr3;
	uint8_t buf[4096];
	uint64_t gpa;
	ssize_t n;

	if (fd != 0)
		return -EBADF;
	if (len > sizeof(buf))
		len = sizeof(buf);
	/* Check the buffer before consuming input the guest could not take. */
	if (len && (gva_to_gpa(v->vm, cr3, uva, GVA_WRITE, &gpa) ||
		    gva_to_gpa(v->vm, cr3, uva + len - 1, GVA_WRITE, &gpa)))
		return -EFAULT;
	/* A kick (EINTR) while blocked here must not outlive a stop request. */
	do
		n = read(0, buf, len);
	while (n < 0 && errno == EINTR &&
	       atomic_load(&v->vm->stop) == VM_RUNNING);
	if (n < 0)
		return -EIO;
	if (gva_write(v->vm, cr3, uva, buf, n) < 0)
		return -EFAULT;
	return n;
}

/* Kernel log line (kernel virtual address of the text). */
static int64_t hc_log(struct vcpu *v, uint64_t kva, uint64_t len, bool panic)
{
	const char *s;

	if (len > HC_LOG_MAX)
		len = HC_LOG_MAX;
	s = vm_gpa_to_hva(v->vm, kva - PV_KERNEL_BASE, len);
	if (!s)
		return -EFAULT;
	if (panic) {
		vm_request_stop(v->vm, VM_STOP_ERROR, VMM_EXIT_ERROR,
				"guest kernel panic on cpu %d: %.*s", v->id,
				(int)len, s);
		return 0;
	}
	fprintf(stderr, "[guest] %.*s\n", (int)len, s);
	return 0;
}

static int64_t hc_copy(struct vcpu *v, uint64_t dst, uint64_t src,
		       uint64_t len)
{
	void *d = vm_gpa_to_hva(v->vm, dst, len);
	void *s = vm_gpa_to_hva(v->vm, src, len);

	if (!d || !s)
		return -EFAULT;
	memmove(d, s, len);
	step_blocks_clean_copy(v->vm->blocks, d, src, len);
	return 0;
}

static int64_t hc_zero(struct vcpu *v, uint64_t dst, uint64_t len)
{
	void *d = vm_gpa_to_hva(v->vm, dst, len);

	if (!d)
		return -EFAULT;
	memset(d, 0, len);
	return 0;
}

static int64_t hc_pt_fill(struct vcpu *v, uint64_t dst, uint64_t first,
			  uint64_t n)
{
	uint64_t *d;

	if (!n || n > PV_PT_FILL_MAX || (dst & 7))
		return -EINVAL;
	d = vm_gpa_to_hva(v->vm, dst, n * 8);
	if (!d)
		return -EFAULT;
	for (uint64_t i = 0; i < n; i++)
		d[i] = first + i * 4096;
	return 0;
}

/*
 * Host pointer for [va, va + len) inside one page: the kernel direct map,
 * or a user page under cr3 (writable when write).  NULL when not allowed.
 */
static uint8_t *hc_va(struct vcpu *v, uint64_t cr3, uint64_t va, uint64_t len,
		      bool write)
{
	uint64_t gpa;

	if (va >= PV_KERNEL_BASE)
		return vm_gpa_to_hva(v->vm, va - PV_KERNEL_BASE, len);
	if (gva_to_gpa(v->vm, cr3, va, write ? GVA_WRITE : GVA_READ, &gpa))
		return NULL;
	return vm_gpa_to_hva(v->vm, gpa, len);
}

/* Bytes from va to the end of its page (user) or of RAM (kernel). */
static uint64_t hc_chunk(uint64_t va, uint64_t left)
{
	uint64_t n = va >= PV_KERNEL_BASE ? left : 4096 - (va & 4095);

	return n < left ? n : left;
}

static int64_t hc_memcpy(struct vcpu *v, uint64_t dst, uint64_t src,
			 uint64_t len)
{
	uint64_t cr3 = vcpu_sregs(v)->cr3;

	if (dst + len < dst || src + len < src)
		return -EFAULT;
	while (len) {
		uint64_t n = hc_chunk(dst, len);
		uint8_t *d, *s;

		n = hc_chunk(src, n);
		d = hc_va(v, cr3, dst, n, true);
		s = hc_va(v, cr3, src, n, false);
		if (!d || !s)
			return -EFAULT;
		memmove(d, s, n);
		step_blocks_clean_copy(v->vm->blocks, d,
				       (uint64_t)(s - v->vm->mem), n);
		dst += n;
		src += n;
		len -= n;
	}
	return 0;
}

/*
 * fill() over the guest's [dst, dst + len), a mapped piece at a time, for
 * writing: 0, -EFAULT where a piece is not mapped writable, or fill()'s
 * own error.
 */
static int64_t hc_fill(struct vcpu *v, uint64_t dst, uint64_t len,
		       int (*fill)(uint8_t *d, uint64_t n, uint64_t arg),
		       uint64_t arg)
{
	uint64_t cr3 = vcpu_sregs(v)->cr3;

	if (dst + len < dst)
		return -EFAULT;
	while (len) {
		uint64_t n = hc_chunk(dst, len);
		uint8_t *d = hc_va(v, cr3, dst, n, true);
		int err;

		if (!d)
			return -EFAULT;
		err = fill(d, n, arg);
		if (err)
			return err;
		dst += n;
		len -= n;
	}
	return 0;
}

static int fill_byte(uint8_t *d, uint64_t n, uint64_t c)
{
	memset(d, (int)c, n);
	return 0;
}

/* The guest's random bytes are the host's: getrandom(2), its CSPRNG. */
static int fill_random(uint8_t *d, uint64_t n, uint64_t unused)
{
	(void)unused;
	while (n) {
		ssize_t got = getrandom(d, n, 0);

		if (got < 0 && errno != EINTR)
			return -EIO;
		if (got > 0) {
			d += got;
			n -= (uint64_t)got;
		}
	}
	return 0;
}

static int64_t hc_stat_thread(struct vcpu *v, uint64_t gpa)
{
	const struct pv_stat_record *r = vm_gpa_to_hva(v->vm, gpa, sizeof(*r));
	const struct vm_observer *o = v->vm->observer;

	if (!r)
		return -EFAULT;
	if (!o || !o->thread_exit)
		return 0;
	pthread_mutex_lock(&v->vm->lock);
	o->thread_exit(o->ctx, r);
	pthread_mutex_unlock(&v->vm->lock);
	return 0;
}

static int64_t hc_sample(struct vcpu *v, uint64_t gpa)
{
	const struct pv_sample *r = vm_gpa_to_hva(v->vm, gpa, sizeof(*r));
	const struct vm_observer *o = v->vm->observer;
	struct vm *vm = v->vm;

	if (!r)
		return -EFAULT;
	if (!o || !o->sample)
		return 0;
	/* The guest's PMI sends the IP alone: no call chain. */
	o->sample(o->ctx, r, (r->time_tsc - vm->boot_tsc) * 1000000 /
		  vm->tsc_khz, NULL, 0);
	return 0;
}

/* The guest kernel's entry counts, read when it has stopped (tools/). */
static int64_t hc_kstat(struct vcpu *v, uint64_t gpa, uint64_t size)
{
	if (size != sizeof(struct pv_kstat) || (gpa & 7) ||
	    !vm_gpa_to_hva(v->vm, gpa, size))
		return -EINVAL;
	v->vm->kstat_gpa = gpa;
	return 0;
}

/*
 * PV_HC_FPU_SWITCH: one thread's FPU and vector registers out, another's
 * in, straight between KVM and the guest's areas (uapi/hypercall.h).
 * KVM checks what it loads: a bad area is -EINVAL, never a host fault.
 */
static int64_t hc_fpu_switch(struct vcpu *v, uint64_t save_gpa,
			     uint64_t restore_gpa)
{
	struct kvm_xsave *out = NULL, *in = NULL;

	_Static_assert(sizeof(struct kvm_xsave) == PV_XSTATE_SIZE,
		       "PV_XSTATE_SIZE is KVM's legacy XSAVE buffer");
	if ((save_gpa && !(out = vm_gpa_to_hva(v->vm, save_gpa, sizeof(*out)))) ||
	    (restore_gpa && !(in = vm_gpa_to_hva(v->vm, restore_gpa, sizeof(*in)))))
		return -EFAULT;
	if (out && ioctl(v->fd, KVM_GET_XSAVE, out))
		return -errno;
	if (in && ioctl(v->fd, KVM_SET_XSAVE, in))
		return -errno;
	return 0;
}

struct hc_fs_ctx {
	struct vcpu *v;
	uint64_t cr3;
};

static uint8_t *hc_fs_map(void *ctx, uint64_t va, uint64_t *len, bool write)
{
	struct hc_fs_ctx *c = ctx;

	*len = hc_chunk(va, *len);
	return hc_va(c->v, c->cr3, va, *len, write);
}

/*
 * PV_HC_FS: the request is copied out of guest memory first, so that
 * another vCPU cannot change it while the VMM checks and uses it.
 */
static int64_t hc_fs(struct vcpu *v, uint64_t gpa)
{
	struct hc_fs_ctx ctx = { v, vcpu_sregs(v)->cr3 };
	struct share_mem mem = { &ctx, hc_fs_map };
	struct pv_fs_req req;
	void *p;
	int64_t ret;

	if (!v->vm->shares)
		return -ENOSYS;
	p = vm_gpa_to_hva(v->vm, gpa, sizeof(req));
	if (!p)
		return -EFAULT;
	memcpy(&req, p, sizeof(req));
	ret = share_request(v->vm->shares, &req, &mem);
	memcpy(p, &req, sizeof(req));
	return ret;
}

/*
 * A vCPU spun long on a kernel lock: its holder may be a vCPU thread
 * waiting for this host CPU.  sched_yield() did not hand it over (CFS
 * picked the spinner again: 66,581 yields in one 29 s run of a 6 s
 * program, two vCPUs on one emulated CPU), so sleep: the shortest
 * sleep, some tens of µs with the timer slack, is a lock hold or two.
 */
static int64_t hc_yield(struct vcpu *v)
{
	struct timespec ts = { 0, 1000 };

	v->yields++;
	nanosleep(&ts, NULL);
	return 0;
}

enum exit_result hypercall_dispatch(struct vcpu *v)
{
	struct kvm_regs *r = vcpu_regs(v);
	int64_t ret;

	v->hypercalls++;
	v->hypercall_nr = r->rax;
	switch (r->rax) {
	case PV_HC_EXIT:
		vm_request_stop(v->vm, VM_STOP_EXIT, (int)(r->rdi & HC_EXIT_STATUS), NULL);
		return EXIT_STOP;
	case PV_HC_WRITE:
		ret = hc_write(v, r->rdi, r->rsi, r->r10);
		break;
	case PV_HC_READ:
		ret = hc_read(v, r->rdi, r->rsi, r->r10);
		break;
	case PV_HC_LOG:
	case PV_HC_PANIC:
		ret = hc_log(v, r->rdi, r->rsi, r->rax == PV_HC_PANIC);
		if (r->rax == PV_HC_PANIC) {
			vcpu_dump(v, "guest kernel panic");
			return EXIT_STOP;
		}
		break;
	case PV_HC_COPY:
		ret = hc_copy(v, r->rdi, r->rsi, r->r10);
		break;
	case PV_HC_ZERO:
		ret = hc_zero(v, r->rdi, r->rsi);
		break;
	case PV_HC_SAMPLE:
		ret = hc_sample(v, r->rdi);
		break;
	case PV_HC_STAT_THREAD:
		ret = hc_stat_thread(v, r->rdi);
		break;
	case PV_HC_KSTAT:
		ret = hc_kstat(v, r->rdi, r->rsi);
		break;
	case PV_HC_MEMCPY:
		ret = hc_memcpy(v, r->rdi, r->rsi, r->r10);
		break;
	case PV_HC_MEMSET:
		ret = hc_fill(v, r->rdi, r->r10, fill_byte, r->rsi);
		break;
	case PV_HC_FPU_SWITCH:
		ret = hc_fpu_switch(v, r->rdi, r->rsi);
		break;
	case PV_HC_PT_FILL:
		ret = hc_pt_fill(v, r->rdi, r->rsi, r->r10);
		break;
	case PV_HC_RANDOM:
		ret = hc_fill(v, r->rdi, r->rsi, fill_random, 0);
		break;
	case PV_HC_FS:
		ret = hc_fs(v, r->rdi);
		break;
	case PV_HC_YIELD:
		ret = hc_yield(v);
		break;
	default:
		ret = v->pmu.pv && r->rax >= PV_HC_PMU_VCPU_PAGE ?
		      vcpu_pmu_hypercall(v, r->rax, r->rdi, r->rsi, r->r10) :
		      -ENOSYS;
		break;
	}
	r->rax = (uint64_t)ret;
	vcpu_regs_mark_dirty(v);
	return EXIT_RESUME;
}

const char *hypercall_name(unsigned int nr)
{
	static const char *const names[] = {
		[PV_HC_EXIT] = "exit", [PV_HC_WRITE] = "write",
		[PV_HC_READ] = "read", [PV_HC_LOG] = "log",
		[PV_HC_PANIC] = "panic", [PV_HC_COPY] = "copy",
		[PV_HC_ZERO] = "zero", [PV_HC_MEMCPY] = "memcpy",
		[PV_HC_MEMSET] = "memset", [PV_HC_STAT_THREAD] = "stat-thread",
		[PV_HC_SAMPLE] = "sample", [PV_HC_KSTAT] = "kstat",
		[PV_HC_FPU_SWITCH] = "fpu-switch", [PV_HC_PT_FILL] = "pt-fill",
		[PV_HC_RANDOM] = "random", [PV_HC_FS] = "fs",
		[PV_HC_YIELD] = "yield",
		[PV_HC_PMU_VCPU_PAGE] = "pmu-vcpu-page",
		[PV_HC_PMU_SWITCH] = "pmu-switch", [PV_HC_PMU_POLL] = "pmu-poll",
		[PV_HC_STEP_ARM] = "step-arm",
		[PV_HC_STEP_ACCOUNT] = "step-account",
		[PV_HC_PMU_REARM] = "pmu-rearm",
		[PV_HC_STEP_CODE] = "step-code",
	};

	return nr < sizeof(names) / sizeof(names[0]) ? names[nr] : NULL;
}
