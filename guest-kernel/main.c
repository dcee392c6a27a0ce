// SPDX-License-Identifier: MIT
/*
 * Boot: the VMM enters kmain() in long mode on every vCPU with the boot
 * page tables and boot parameters ready; the bootstrap CPU loads the first
 * program from the initramfs and enters it.
 */
#include "exec.h"
#include "kernel.h"
#include "mm.h"
#include "task.h"

struct pv_boot_params *boot_params;
static struct cpu cpus[PV_MAX_CPUS];

struct find_arg {
	const char *path;
	struct cpio_file found;
	bool ok;
};

static bool find_cb(const struct cpio_file *f, void *arg)
{
	struct find_arg *fa = arg;

	if (strcmp(f->name, fa->path) == 0) {
		fa->found = *f;
		fa->ok = true;
		return false;
	}
	return true;
}

u64 exec_hwcap(void)
{
	u32 a = 1, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return d;
}

static __attribute__((noreturn)) void init_start(struct pv_boot_params *bp)
{
	const char *argv[EXEC_MAX_ARGS], *envp[EXEC_MAX_ARGS];
	struct find_arg fa = { .path = bp->init_path + 1 };
	struct exec_result res;
	const char *s = bp->args;
	struct trapframe *tf;
	struct task *t;
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
	if (cpio_parse(P2V(bp->initrd_phys), bp->initrd_size, find_cb, &fa))
		panic("malformed initramfs");
	if (!fa.ok)
		panic("%s not in the initramfs", bp->init_path);

	t = task_alloc();
	if (!t)
		panic("out of memory for the first task");
	t->mm = mm_create();
	if (!t->mm)
		panic("out of memory for the first address space");
	t->pid = t->tid = 1;
	ksnprintf(t->comm, sizeof(t->comm), "%s", argv[0]);
	err = exec_load(t->mm, &fa.found, bp->argc, argv, bp->envc, envp,
			&res);
	if (err) {
		/* The VMM checked the ELF already; this is out of memory. */
		kprintf("cannot start %s: error %d", bp->init_path, -err);
		task_exit_group(err == -ENOEXEC ? 126 : 127);
	}
	tf = t->tf;
	memset(tf, 0, sizeof(*tf));
	tf->rip = res.entry;
	tf->rsp = res.sp;
	tf->cs = PV_SEL_UCODE;
	tf->ss = PV_SEL_UDATA;
	tf->rflags = 0x202;
	t->cpu = &cpus[0];
	cpus[0].current = t;
	cpus[0].tss.rsp0 = (u64)t + KSTACK_SIZE;
	mm_activate(t->mm);
	user_enter(tf);
}

void kmain(struct pv_boot_params *bp, u64 cpu_id)
{
	if (cpu_id >= PV_MAX_CPUS)
		for (;;)
			__asm__ volatile("cli; hlt");
	if (cpu_id != 0) {
		/* Secondary CPUs idle until the scheduler uses them. */
		cpu_init(&cpus[cpu_id], cpu_id);
		for (;;)
			__asm__ volatile("cli; hlt");
	}
	boot_params = bp;
	if (bp->magic != PV_BOOT_MAGIC || bp->version != PV_BOOT_VERSION)
		panic("bad boot parameters (magic %x version %u)", bp->magic,
		      bp->version);
	kverbose = bp->flags & PV_BOOT_VERBOSE;
	idt_init();
	cpu_init(&cpus[0], 0);
	pmem_init(bp);
	mm_init_kernel();
	if (kverbose)
		kprintf("perfvisor kernel: %lu MiB, %u cpus, tsc %lu kHz, "
			"initramfs %lu KiB", bp->mem_size >> 20, bp->ncpus,
			bp->tsc_khz, bp->initrd_size >> 10);
	init_start(bp);
}
