// SPDX-License-Identifier: MIT
/*
 * vmm: the perfvisor virtual machine monitor.
 *
 * Exit status: the guest program's own status (128+N when signal N ended
 * it), 124 on --timeout, 125 when the VMM or the guest kernel failed.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bench.h"
#include "boot.h"
#include "boot_load.h"
#include "host.h"
#include "breakdown.h"
#include "cli.h"
#include "elf_check.h"
#include "initramfs.h"
#include "layout.h"
#include "perf_data.h"
#include "pmu.h"
#include "policy.h"
#include "profile.h"
#include "record.h"
#include "share.h"
#include "stat_report.h"
#include "step_block.h"
#include "vm.h"
#include "vpmu.h"

extern const unsigned char pv_kernel_blob[], pv_kernel_blob_end[];

static const char usage[] =
	"usage: vmm COMMAND [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"\n"
	"commands:\n"
	"  run     boot the perfvisor guest and run an x86-64 program\n"
	"  stat    run a program and print its counts, like perf stat\n"
	"  record  sample a program (and the VMM) into a profile\n"
	"  report  print a profile like perf report\n"
	"  bench   benchmarks (boot)\n"
	"\n"
	"`vmm COMMAND --help` describes each command's options;\n"
	"`vmm --list-policies` lists the --policy names, one a line:\n"
	"NAME, id and guest switch rule, separated by tabs.\n";

static int vmm_error(const char *what, const char *msg)
{
	if (what)
		fprintf(stderr, "vmm: %s: %s\n", what, msg);
	else
		fprintf(stderr, "vmm: %s\n", msg);
	return VMM_EXIT_ERROR;
}

/* The policies the build registered: what the test scripts enumerate. */
static int list_policies(void)
{
	const struct pmu_policy_ops *p;
	char rule[256];

	for (size_t i = 0; (p = pmu_policy_at(i)); i++) {
		if (pmu_switch_rule_format(p->switch_rule, rule, sizeof(rule)))
			return vmm_error("--list-policies", "rule too long");
		printf("%s\t%u\t%s\n", p->name, p->id, rule);
	}
	return 0;
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
	char err[512], interp[256];
	int dyn;

	*prog = *kbuf = NULL;
	if (file_read_all(cfg->program, prog, prog_len, err, sizeof(err)))
		return vmm_error(NULL, err);
	if (elf_check_program(*prog, *prog_len, err, sizeof(err))) {
		free(*prog);
		return vmm_error(cfg->program, err);
	}
	dyn = elf_program_interp(*prog, *prog_len, interp, sizeof(interp));
	if (dyn && (dyn < 0 || !share_path_exists(cfg, interp))) {
		free(*prog);
		snprintf(err, sizeof(err), "dynamically linked, and its "
			 "interpreter %s is not in the guest (share it: "
			 "--dir /:/:ro)", dyn < 0 ? "(too long)" : interp);
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

/*
 * The tool's part of the run, once the vCPUs exist: the boot parameters'
 * PMU part and the observer (stat or prof, or neither).  0 or exit status.
 */
static int run_vm_tool(const struct vmm_config *cfg, struct vm *vm,
		       struct stat_run *stat, struct profile *prof,
		       struct vm_observer *obs)
{
	struct boot_pmu bpmu = {
		.policy_id = pmu_policy_id(vm->pmu),
		.source_id = pmu_source_id(vm->pmu),
		.host_kind = vm->host_kind,
		.steal_time = vm->steal_time,
		.pfm_force = host_pfm_must_force(vm->host_kind),
	};

	if (stat)
		vm->observer = stat_prepare(&cfg->stat, vm->pmu, &bpmu, stat);
	if (prof) {
		const char *why;

		if (!record_vmm_side(&cfg->record, cfg->source, &why) &&
		    !pmu_event_supported(vm->pmu, cfg->record.code,
					 cfg->record.mode))
			return vmm_error(NULL, "record: the event source cannot "
					 "count that event");
		record_prepare(&cfg->record, cfg->source, vm->tsc_khz, &bpmu,
			       &vm->sampling);
		record_observer(obs, &cfg->record, prof);
		vm->observer = obs;
	}
	boot_params_set_pmu((struct pv_boot_params *)
			    (vm->mem + PV_BOOT_PARAMS_PHYS), &bpmu);
	return 0;
}

/* Boot one VM and run the program to its end; stat (or NULL) collects. */
static int run_vm(const struct vmm_config *cfg, const void *prog,
		  size_t prog_len, const void *kernel, size_t klen,
		  struct stat_run *stat, struct profile *prof)
{
	struct vm_observer obs;
	struct boot_layout lay;
	struct share_table *shares;
	struct cpio_writer initrd;
	struct timespec t0, t1;
	struct vm vm;
	char err[512];
	int status = VMM_EXIT_ERROR;
	bool by_blocks = !strcmp(cfg->source, "step") && !cfg->step_single;
	bool created;

	shares = share_table_open(cfg, err, sizeof(err));
	if (!shares && err[0])
		return vmm_error(NULL, err);
	if (initramfs_build(cfg, prog, prog_len, &initrd, err, sizeof(err))) {
		share_table_close(shares);
		return vmm_error(NULL, err);
	}
	/* Before the vCPUs' CPUID: what the step source counts by blocks
	 * (branch-misses) depends on it. */
	created = !vm_create(&vm, cfg);
	if (created && by_blocks)
		pmu_set_step_blocks(vm.pmu, true);
	if (!created ||
	    boot_load(vm.mem, vm.mem_size, cfg, kernel, klen, initrd.data,
		      initrd.len, vm.tsc_khz, &lay, vm.stop_msg,
		      sizeof(vm.stop_msg)) ||
	    vm_vcpus_create(&vm, lay.entry)) {
		vmm_error(NULL, vm.stop_msg);
		goto out;
	}
	vm.shares = shares;
	if (by_blocks) {
		const struct pv_boot_params *bp = (const void *)
			(vm.mem + PV_BOOT_PARAMS_PHYS);

		vm.blocks = step_blocks_create(lay.initrd_phys, lay.initrd_size,
					       bp->step_cache_phys, cfg->ncpus);
		if (!vm.blocks) {
			vmm_error(NULL, "out of memory");
			goto out;
		}
		for (int i = 0; i < lay.nro; i++)
			step_blocks_add_code(vm.blocks, lay.ro_phys[i],
					     lay.ro_len[i]);
	}
	cpio_writer_free(&initrd);
	status = run_vm_tool(cfg, &vm, stat, prof, &obs);
	if (status)
		goto out;
	if (stat && stat->bd)
		breakdown_set_kernel(stat->bd, kernel, klen);
	vm.boot_tsc = __rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	status = vm_run(&vm);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (stat)
		stat->elapsed_s = (t1.tv_sec - t0.tv_sec) +
				  (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (cfg->report_fd > 0)
		run_report(&vm, cfg->report_fd);
	if (vm_mem_refused(&vm))
		fprintf(stderr, "vmm: the guest ran out of memory (--mem %llu "
			"MiB): %s\n", (unsigned long long)(vm.mem_size >> 20),
			vm.mem_size < PV_MAX_MEM ? "run with a larger --mem, "
			"up to 2G" : "2G is the most --mem gives");
	if (atomic_load(&vm.stop) == VM_STOP_ERROR ||
	    status == VMM_EXIT_TIMEOUT)
		vmm_error(NULL, vm.stop_msg);
out:
	fflush(stdout);
	vm_destroy(&vm);
	share_table_close(shares);
	cpio_writer_free(&initrd);
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
		status = run_vm(&cfg, prog, prog_len, kernel, klen, NULL, NULL);
		goto out;
	}
	if (!cfg.stat.nevents)
		stat_default_events(&cfg.stat, cfg.source);
	runs = calloc(cfg.stat.repeat, sizeof(*runs));
	for (int i = 0; runs && i < cfg.stat.repeat; i++) {
		status = run_vm(&cfg, prog, prog_len, kernel, klen, &runs[i],
				NULL);
		if (status == VMM_EXIT_ERROR || status == VMM_EXIT_TIMEOUT)
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

/* vmm record: sample the guest (and with -a the VMM) into a profile. */
static int cmd_record(int argc, char **argv)
{
	struct vmm_config cfg;
	const struct vmm_record *r = &cfg.record;
	struct profile *prof = NULL;
	const void *kernel;
	void *prog, *kbuf;
	size_t prog_len, klen;
	const char *out, *why;
	char err[512];
	int st, status;

	st = cli_parse_record(argc, argv, &cfg, err, sizeof(err));
	if (st)
		return st > 0 ? 0 : vmm_error(NULL, err);
	if (r->system_wide && !record_event_is_cycles(r->code))
		return vmm_error(NULL, "record -a needs a cycles event: the VMM's "
				 "share is time");
	if (r->sampler == SAMPLER_VMM && !record_vmm_side(r, cfg.source, &why))
		return vmm_error("record", why);
	if (r->callchain && !record_vmm_side(r, cfg.source, &why))
		fprintf(stderr, "vmm: record: -g: the guest sampler records no "
			"call chains, IPs only\n");
	status = run_inputs(&cfg, &prog, &prog_len, &kbuf, &kernel, &klen);
	if (status)
		return status;
	prof = profile_new();
	out = r->output ? r->output : r->perf_format ? "perf.data"
						     : "perfvisor.data";
	if (!prof ||
	    profile_add_image(prof, cfg.argv[0], cfg.program,
			      ((const Elf64_Ehdr *)prog)->e_type == ET_DYN ?
			      PV_USER_PIE_BASE : 0, false, err,
			      sizeof(err)) < 0 ||
	    profile_add_image_mem(prof, "[kernel]", cfg.kernel_path, kernel,
				  klen, 0, true, err, sizeof(err)) < 0) {
		status = vmm_error("record", prof ? err : "out of memory");
		goto out;
	}
	profile_set_event(prof, r->event, PERF_TYPE_RAW, r->code);
	status = run_vm(&cfg, prog, prog_len, kernel, klen, NULL, prof);
	if (status == VMM_EXIT_ERROR || status == VMM_EXIT_TIMEOUT)
		goto out;
	if ((r->perf_format ? perf_data_write(prof, out, err, sizeof(err))
			    : profile_write(prof, out, err, sizeof(err)))) {
		status = vmm_error(out, err);
		goto out;
	}
	fprintf(stderr, "[ vmm record: %zu samples of %s written to %s ]\n",
		profile_nr_samples(prof), r->event, out);
	if (profile_chains_dropped(prof))
		fprintf(stderr, "vmm: record: %" PRIu64 " samples kept without "
			"their call chain: the profile's %u-frame bound\n",
			profile_chains_dropped(prof), PROFILE_CHAIN_IPS_MAX);
out:
	profile_free(prof);
	free(prog);
	free(kbuf);
	return status;
}

/* vmm report: the profile as a table, or folded stacks. */
static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "stdio", no_argument, NULL, 'S' },
		{ "folded", no_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts ro = { 0 };
	const char *in = "perfvisor.data";
	struct profile *prof;
	char err[512];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:s:no:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i': in = optarg; break;
		case 's': ro.sort = optarg; break;
		case 'S': ro.stdio = true; break;
		case 'F': ro.folded = true; break;
		case 'n': ro.nr_samples = true; break;
		case 'o': ro.output = optarg; break;
		case 'h':
			puts("usage: vmm report [-i FILE] [--sort KEYS] [-n] "
			     "[--stdio] [--folded] [-o FILE]\n"
			     "keys: comm,pid,tid,dso,sym,cpu");
			return 0;
		default:
			return vmm_error("report", "bad option (see vmm report "
					 "--help)");
		}
	}
	if (ro.sort && profile_sort_check(ro.sort, err, sizeof(err)))
		return vmm_error("report", err);
	if (access(in, R_OK) && !strcmp(in, "perfvisor.data") &&
	    !access("perf.data", R_OK))
		in = "perf.data";
	if (profile_open(&prof, in, err, sizeof(err)))
		return vmm_error(in, err);
	c = profile_report(prof, &ro, stdout);
	profile_free(prof);
	return c ? vmm_error("report", strerror(errno)) : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? VMM_EXIT_ERROR : 0;
	}
	if (!strcmp(argv[1], "--list-policies"))
		return list_policies();
	if (!strcmp(argv[1], "run"))
		return cmd_run_or_stat(argc - 1, argv + 1, false);
	if (!strcmp(argv[1], "stat"))
		return cmd_run_or_stat(argc - 1, argv + 1, true);
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 1, argv + 1);
	fprintf(stderr, "vmm: unknown command '%s' (see vmm --help)\n", argv[1]);
	return VMM_EXIT_ERROR;
}
