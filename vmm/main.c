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

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "boot.h"
#include "boot_load.h"
#include "cli.h"
#include "elf_check.h"
#include "initramfs.h"
#include "layout.h"
#include "pmu.h"
#include "stat_report.h"
#include "vm.h"

extern const unsigned char pv_kernel_blob[], pv_kernel_blob_end[];

static const char usage[] =
	"usage: vmm COMMAND [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"\n"
	"commands:\n"
	"  run     boot the perfvisor guest and run a static x86-64 program\n"
	"  stat    run a program and print its counts, like perf stat\n"
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

/* Read PROGRAM and the kernel, checking both; 0 or an exit status. */
static int run_inputs(const struct vmm_config *cfg, void **prog,
		      size_t *prog_len, void **kbuf, const void **kernel,
		      size_t *klen)
{
	char err[512];

	*prog = *kbuf = NULL;
	if (file_read_all(cfg->program, prog, prog_len, err, sizeof(err)))
		return vmm_error(NULL, err);
	if (elf_check_program(*prog, *prog_len, err, sizeof(err))) {
		free(*prog);
		return vmm_error(cfg->program, err);
	}
	if (cfg->kernel_path) {
		if (file_read_all(cfg->kernel_path, kbuf, klen, err,
				  sizeof(err))) {
			free(*prog);
			return vmm_error(NULL, err);
		}
		*kernel = *kbuf;
	} else {
		*kernel = pv_kernel_blob;
		*klen = pv_kernel_blob_end - pv_kernel_blob;
	}
	return 0;
}

/* Boot one VM and run the program to its end; stat (or NULL) collects. */
static int run_vm(const struct vmm_config *cfg, const void *prog,
		  size_t prog_len, const void *kernel, size_t klen,
		  struct stat_run *stat)
{
	struct pv_boot_params *bp;
	struct boot_layout lay;
	struct cpio_buf initrd;
	struct timespec t0, t1;
	struct vm vm;
	char err[512];
	int status = VMM_EXIT_ERROR;

	if (initramfs_build(cfg, prog, prog_len, &initrd, err, sizeof(err)))
		return vmm_error(NULL, err);
	if (vm_create(&vm, cfg) ||
	    boot_load(vm.mem, vm.mem_size, cfg, kernel, klen, initrd.data,
		      initrd.len, vm.tsc_khz, &lay, vm.stop_msg,
		      sizeof(vm.stop_msg)) ||
	    vm_vcpus_create(&vm, lay.entry)) {
		vmm_error(NULL, vm.stop_msg);
		goto out;
	}
	cpio_free(&initrd);
	bp = (struct pv_boot_params *)(vm.mem + PV_BOOT_PARAMS_PHYS);
	bp->policy_id = pmu_policy_id(vm.pmu);
	bp->source_id = pmu_source_id(vm.pmu);
	if (vm.steal_time)
		bp->flags |= PV_BOOT_STEAL;
	if (stat) {
		stat_prepare(&cfg->stat, vm.pmu, bp, stat);
		vm.stat = stat;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	status = vm_run(&vm);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (stat)
		stat->elapsed_s = (t1.tv_sec - t0.tv_sec) +
				  (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (cfg->report_fd > 0)
		run_report(&vm, cfg->report_fd);
	if (atomic_load(&vm.stop) == VM_STOP_ERROR || status == 124)
		vmm_error(NULL, vm.stop_msg);
out:
	fflush(stdout);
	vm_destroy(&vm);
	cpio_free(&initrd);
	return status;
}

static int cmd_run_or_stat(int argc, char **argv, bool stat)
{
	struct vmm_config cfg;
	struct stat_run *runs = NULL;
	const void *kernel;
	void *prog, *kbuf;
	size_t prog_len, klen;
	char err[512];
	int r, status = 0;

	r = cli_parse(argc, argv, stat, &cfg, err, sizeof(err));
	if (r)
		return r > 0 ? 0 : vmm_error(NULL, err);
	r = run_inputs(&cfg, &prog, &prog_len, &kbuf, &kernel, &klen);
	if (r)
		return r;
	if (!stat) {
		status = run_vm(&cfg, prog, prog_len, kernel, klen, NULL);
		goto out;
	}
	if (!cfg.stat.nevents)
		stat_default_events(&cfg.stat, cfg.source);
	runs = calloc(cfg.stat.repeat, sizeof(*runs));
	for (int i = 0; runs && i < cfg.stat.repeat; i++) {
		status = run_vm(&cfg, prog, prog_len, kernel, klen, &runs[i]);
		if (status == VMM_EXIT_ERROR || status == 124)
			goto out;
	}
	if (runs) {
		FILE *f = cfg.stat.output ? fopen(cfg.stat.output, "w") : stderr;

		if (!f) {
			status = vmm_error(cfg.stat.output, strerror(errno));
			goto out;
		}
		stat_print(f, &cfg, runs, cfg.stat.repeat);
		if (f != stderr)
			fclose(f);
	}
out:
	for (int i = 0; runs && i < cfg.stat.repeat; i++)
		stat_run_free(&runs[i]);
	free(runs);
	free(prog);
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
		return cmd_run_or_stat(argc - 1, argv + 1, false);
	if (!strcmp(argv[1], "stat"))
		return cmd_run_or_stat(argc - 1, argv + 1, true);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 1, argv + 1);
	fprintf(stderr, "vmm: unknown command '%s' (see vmm --help)\n", argv[1]);
	return VMM_EXIT_ERROR;
}
