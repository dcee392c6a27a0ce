// SPDX-License-Identifier: MIT
/*
 * vmm: the perfvisor virtual machine monitor.
 *
 * Exit status: the guest program's own status (128+N when signal N ended
 * it), 124 on --timeout, 125 when the VMM or the guest kernel failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "boot.h"
#include "boot_load.h"
#include "cli.h"
#include "elf_check.h"
#include "initramfs.h"
#include "layout.h"
#include "vm.h"

extern const unsigned char pv_kernel_blob[], pv_kernel_blob_end[];

static const char usage[] =
	"usage: vmm COMMAND [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"\n"
	"commands:\n"
	"  run     boot the perfvisor guest and run a static x86-64 program\n"
	"  bench   benchmarks (boot)\n"
	"\n"
	"`vmm COMMAND --help` describes each command's options.\n";

static int vmm_error(const char *what, const char *msg)
{
	if (what)
		fprintf(stderr, "vmm: %s: %s\n", what, msg);
	else
		fprintf(stderr, "vmm: %s\n", msg);
	return VMM_EXIT_ERROR;
}

/*
 * For `vmm bench boot`: resident KiB of the whole process and of guest RAM
 * (mincore), so the VMM's own overhead is the difference.
 */
static void run_report(struct vm *vm, int fd)
{
	long page = sysconf(_SC_PAGESIZE), rss = 0, guest = 0, size;
	size_t n = vm->mem_size / page;
	unsigned char *vec = malloc(n);
	FILE *f = fopen("/proc/self/statm", "r");
	char line[64];

	if (f && fscanf(f, "%ld %ld", &size, &rss) == 2)
		rss *= page / 1024;
	if (f)
		fclose(f);
	if (vec && mincore(vm->mem, vm->mem_size, vec) == 0)
		for (size_t i = 0; i < n; i++)
			guest += vec[i] & 1;
	free(vec);
	snprintf(line, sizeof(line), "%ld %ld\n", rss, guest * (page / 1024));
	if (write(fd, line, strlen(line)) < 0) {
		/* the benchmark reports the missing line */
	}
}

static int cmd_run(int argc, char **argv)
{
	struct vmm_config cfg;
	struct boot_layout lay;
	struct cpio_buf initrd;
	struct vm vm;
	char err[512];
	void *prog = NULL, *kbuf = NULL;
	const void *kernel;
	size_t prog_len, klen;
	int r, status;

	r = cli_parse_run(argc, argv, &cfg, err, sizeof(err));
	if (r)
		return r > 0 ? 0 : vmm_error(NULL, err);
	if (file_read_all(cfg.program, &prog, &prog_len, err, sizeof(err)))
		return vmm_error(NULL, err);
	if (elf_check_program(prog, prog_len, err, sizeof(err))) {
		free(prog);
		return vmm_error(cfg.program, err);
	}
	if (cfg.kernel_path) {
		if (file_read_all(cfg.kernel_path, &kbuf, &klen, err,
				  sizeof(err))) {
			free(prog);
			return vmm_error(NULL, err);
		}
		kernel = kbuf;
	} else {
		kernel = pv_kernel_blob;
		klen = pv_kernel_blob_end - pv_kernel_blob;
	}
	r = initramfs_build(&cfg, prog, prog_len, &initrd, err, sizeof(err));
	free(prog);
	if (r) {
		free(kbuf);
		return vmm_error(NULL, err);
	}

	status = VMM_EXIT_ERROR;
	if (vm_create(&vm, &cfg) ||
	    boot_load(vm.mem, vm.mem_size, &cfg, kernel, klen, initrd.data,
		      initrd.len, 0, &lay, vm.stop_msg, sizeof(vm.stop_msg)) ||
	    vm_vcpus_create(&vm, lay.entry)) {
		vmm_error(NULL, vm.stop_msg);
		goto out;
	}
	((struct pv_boot_params *)(vm.mem + PV_BOOT_PARAMS_PHYS))->tsc_khz =
		vm.tsc_khz;
	cpio_free(&initrd);
	free(kbuf);
	kbuf = NULL;

	status = vm_run(&vm);
	if (cfg.report_fd > 0)
		run_report(&vm, cfg.report_fd);
	if (atomic_load(&vm.stop) == VM_STOP_ERROR || status == 124)
		vmm_error(NULL, vm.stop_msg);
out:
	fflush(stdout);
	vm_destroy(&vm);
	cpio_free(&initrd);
	free(kbuf);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? VMM_EXIT_ERROR : 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 1, argv + 1);
	fprintf(stderr, "vmm: unknown command '%s' (see vmm --help)\n", argv[1]);
	return VMM_EXIT_ERROR;
}
