// SPDX-License-Identifier: MIT
/*
 * Boot: the VMM enters kmain() in long mode on every vCPU with the boot
 * page tables and boot parameters ready; the bootstrap CPU loads the first
 * program from the initramfs and enters it.
 */
#include "exec.h"
#include "fpu.h"
#include "kernel.h"
#include "mm.h"
#include "pmu_guest.h"
#include "task.h"
#include "vfs.h"
#include "vdso.h"
#include "vfs_glue.h"

struct pv_boot_params *boot_params;
struct cpu cpus[PV_MAX_CPUS];

u64 exec_hwcap(void)
{
	u32 a = 1, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return d;
}

/*
 * The first program's environment gets VAR=VALUE (def) unless --env set
 * VAR (empty: the tool's own default).  Children inherit it as any
 * variable.
 */
static u32 env_add_default(const char **envp, u32 envc, u32 max,
			   const char *def)
{
	u64 n = 0;

	while (def[n++] != '=')
		;

	for (u32 i = 0; i < envc; i++)
		if (!strncmp(envp[i], def, n))
			return envc;
	if (envc < max)
		envp[envc++] = def;
	return envc;
}

/*
 * PAPI finds the virtual PMU's presets (procfs.c's put_papi_csv()) through
 * PAPI_CSV_EVENT_FILE; libpfm4 the virtual PMU's model through
 * LIBPFM_FORCE_PMU where user code's CPUID does not name it
 * (PV_BOOT_PFM_FORCE): a Zen 3, as pmu/cpuid.c makes such a guest where
 * CPUID traps.
 */
static u32 env_add_pmu(const struct pv_boot_params *bp, const char **envp,
		       u32 envc, u32 max)
{
	envc = env_add_default(envp, envc, max, "PAPI_CSV_EVENT_FILE="
			       "/proc/perfvisor/papi_events.csv");
	if (bp->flags & PV_BOOT_PFM_FORCE)
		envc = env_add_default(envp, envc, max,
				       "LIBPFM_FORCE_PMU=amd64_fam19h_zen3");
	return envc;
}

/* The first process: the user's program, pid 1. */
static void init_start(struct pv_boot_params *bp)
{
	const char *argv[EXEC_MAX_ARGS], *envp[EXEC_MAX_ARGS];
	struct exec_result res;
	struct cpio_file f;
	const char *s = bp->args;
	struct proc *p;
	struct task *t;
	u32 envc;
	int err;

	if (bp->argc + bp->envc > EXEC_MAX_ARGS || bp->argc == 0 ||
	    bp->args_len > sizeof(bp->args))
		panic("bad boot arguments");
	for (u32 i = 0; i < bp->argc + bp->envc; i++) {
		if (i < bp->argc)
			argv[i] = s;
		else
			envp[i - bp->argc] = s;
		s += strlen(s) + 1;
	}
	envc = env_add_pmu(bp, envp, bp->envc, EXEC_MAX_ARGS - bp->argc);
	p = proc_alloc();
	if (!p || !(p->mm = mm_create()) || !(p->fdt = fdt_first()))
		panic("out of memory for the first process");
	p->pid = pid_alloc();
	p->pgid = p->pid;
	p->nthreads = 1;
	p->cwd[0] = '/';
	hostfs_initial_cwd(p->cwd, sizeof(p->cwd));	/* --cwd */
	ksnprintf(p->comm, sizeof(p->comm), "%s", argv[0]);
	err = exec_lookup(bp->init_path, p->cwd, &f);
	if (!err)
		err = exec_load(p->mm, &f, bp->argc, argv, envc, envp, &res);
	if (!err)
		fdt_exec(p->fdt);	/* records /proc/self/exe */
	if (err) {
		/*
		 * The VMM checked the ELF already: out of memory, or a
		 * dynamic program's interpreter is no ELF (ELIBBAD), which
		 * the shell's convention makes 126, as ENOEXEC.
		 */
		kprintf("cannot start %s: error %d", bp->init_path, -err);
		for (;;)
			hcall(PV_HC_EXIT, err == -ENOEXEC || err == -ELIBBAD ?
			      126 : 127, 0, 0);
	}
	t = task_create_first(p);
	if (!t)
		panic("out of memory for the first task");
	kpmu_task_init(t, NULL);
	exec_frame_init(t->tf, &res);
	sched_enqueue(t);
}

/* The boot stack of each CPU is its idle task. */
static void cpu_start(int id)
{
	struct task *idle = current_task();

	memset(idle, 0, sizeof(*idle));
	idle->cpu = &cpus[id];
	idle->state = TASK_RUNNING;
	idle->tid = -1 - id;
	cpus[id].idle_task = idle;
	cpu_init(&cpus[id], id);
	lapic_init();
}

/*
 * A test kernel links the same objects plus its own kernel_selftest()
 * (tests/kvm/kfault.c) to break the kernel on purpose; here it does
 * nothing.
 */
__attribute__((weak)) void kernel_selftest(struct pv_boot_params *bp)
{
	(void)bp;
}

/* The same for an AP before it registers its vCPU page (tests/kvm/slowap.c). */
__attribute__((weak)) void kernel_ap_selftest(u64 cpu_id)
{
	(void)cpu_id;
}

__attribute__((used)) void kmain(struct pv_boot_params *bp, u64 cpu_id)
{
	static volatile int bsp_ready;

	if (cpu_id >= PV_MAX_CPUS)
		for (;;)
			__asm__ volatile("cli; hlt");
	if (cpu_id != 0) {
		while (!bsp_ready)
			__builtin_ia32_pause();
		cpu_start(cpu_id);
		kernel_ap_selftest(cpu_id);
		kpmu_cpu_init(&cpus[cpu_id]);
		bkl_lock();
		sched_idle();
	}
	boot_params = bp;
	if (bp->magic != PV_BOOT_MAGIC || bp->version != PV_BOOT_VERSION)
		panic("bad boot parameters (magic %x version %u)", bp->magic,
		      bp->version);
	if (bp->ncpus == 0 || bp->ncpus > PV_MAX_CPUS)
		panic("bad boot parameters (%u cpus)", bp->ncpus);
	vdso_init(bp);
	kverbose = bp->flags & PV_BOOT_VERBOSE;
	kcopy_native = bp->host_kind == PV_HOST_STANDARD;
	mm_tlb_init(kcopy_native && bp->ncpus > 1);
	ktrace = bp->flags & PV_BOOT_TRACE;
	/* Counting by blocks, every entry from user mode counts what ran
	 * untraced before it (kpmu_user_entry()), and vmm stat --breakdown
	 * notes every return's RIP (kstat.c): no fast path for either. */
	syscall_slow = ktrace || mm_tlb_ipi_on ||
		       boot_params->source_id == PV_VPMU_SOURCE_STEP ||
		       (bp->flags & PV_BOOT_KSTAT);
	kpmu_trip_start();
	syscall_init();
	sched_rtu_update();
	kstat_init(bp);
	idt_init(kcopy_native);
	cpu_start(0);
	pmem_init(bp);
	fpu_init(bp);
	mm_init_kernel();
	kpmu_cpus_alloc(bp->ncpus);
	kpmu_cpu_init(&cpus[0]);
	if (vfs_init(P2V(bp->initrd_phys), bp->initrd_size))
		panic("malformed initramfs");
	if (kverbose)
		kprintf("perfvisor kernel: %lu MiB, %u cpus, tsc %lu kHz, "
			"initramfs %lu KiB, %s KVM", bp->mem_size >> 20,
			bp->ncpus, bp->tsc_khz, bp->initrd_size >> 10,
			kcopy_native ? "standard" : "kvm_pvm");
	kernel_selftest(bp);
	bkl_lock();
	init_start(bp);
	bsp_ready = 1;
	sched_idle();
}
