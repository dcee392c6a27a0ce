// SPDX-License-Identifier: MIT
/* Boot parameters and boot page tables as the guest kernel will read them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "boot.h"
#include "boot_load.h"
#include "layout.h"

static char *argv_hello[] = { "hello", "one", "two" };

static void cfg_init(struct vmm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ncpus = 2;
	cfg->argc = 3;
	cfg->argv = argv_hello;
	cfg->env[cfg->nenv++] = "A=1";
}

static void test_params_fields(void **state)
{
	struct pv_boot_params *bp = malloc(sizeof(*bp));
	struct boot_layout lay = { .entry = 0xffffffff80200000ull,
				   .kernel_end = 0x300000,
				   .initrd_phys = 0x400000, .initrd_size = 0x5000 };
	struct vmm_config cfg;
	char err[128];

	(void)state;
	cfg_init(&cfg);
	assert_int_equal(boot_params_fill(bp, &cfg, 64 << 20, &lay, 2600000,
					  err, sizeof(err)), 0);
	assert_int_equal(bp->magic, PV_BOOT_MAGIC);
	assert_int_equal(bp->ncpus, 2);
	assert_int_equal(bp->tsc_khz, 2600000);
	assert_string_equal(bp->init_path, "/bin/hello");
	assert_int_equal(bp->argc, 3);
	assert_int_equal(bp->envc, 1);
	assert_memory_equal(bp->args, "hello\0one\0two\0A=1\0", 18);
	assert_int_equal(bp->args_len, 18);
	/* The memory map covers RAM without overlaps, free RAM 2 MiB aligned. */
	assert_int_equal(bp->nmemmap, 4);
	for (uint32_t i = 1; i < bp->nmemmap; i++)
		assert_true(bp->memmap[i].addr >=
			    bp->memmap[i - 1].addr + bp->memmap[i - 1].size);
	assert_int_equal(bp->memmap[3].type, PV_MEM_RAM);
	assert_int_equal(bp->memmap[3].addr % PV_HUGE_SIZE, 0);
	assert_int_equal(bp->memmap[3].addr + bp->memmap[3].size, 64 << 20);
	free(bp);
}

static void test_params_errors(void **state)
{
	struct pv_boot_params *bp = malloc(sizeof(*bp));
	struct boot_layout lay = { .kernel_end = 0x300000,
				   .initrd_phys = 0x400000,
				   .initrd_size = 60 << 20 };
	static char big[PV_BOOT_ARGS_SIZE];
	char *argv[2] = { "p", big };
	struct vmm_config cfg;
	char err[128];

	(void)state;
	cfg_init(&cfg);
	assert_int_equal(boot_params_fill(bp, &cfg, 64 << 20, &lay, 1, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "too small"));
	lay.initrd_size = 4096;
	memset(big, 'x', sizeof(big) - 1);
	cfg.argv = argv;
	cfg.argc = 2;
	assert_int_equal(boot_params_fill(bp, &cfg, 64 << 20, &lay, 1, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "exceed"));
	free(bp);
}

static void test_page_tables(void **state)
{
	uint64_t size = 64 << 20;
	uint8_t *mem = calloc(1, size);
	uint64_t *pml4 = (uint64_t *)(mem + PV_PML4_PHYS);
	uint64_t *pdpt = (uint64_t *)(mem + PV_PDPT_PHYS);
	uint64_t *pd = (uint64_t *)(mem + PV_PD_PHYS);

	(void)state;
	boot_page_tables_build(mem, size);
	/* Only the kernel slot: the lower half belongs to user programs. */
	for (int i = 0; i < 511; i++)
		assert_int_equal(pml4[i], 0);
	assert_int_equal(pml4[511] & ~0xfffull, PV_PDPT_PHYS);
	assert_int_equal(pdpt[510] & ~0xfffull, PV_PD_PHYS);
	/* 2 MiB pages, present, writable, supervisor-only, all of RAM. */
	for (uint64_t i = 0; i < size / PV_HUGE_SIZE; i++)
		assert_int_equal(pd[i], i * PV_HUGE_SIZE | 0x83);
	assert_int_equal(pd[size / PV_HUGE_SIZE], 0);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_fields),
		cmocka_unit_test(test_params_errors),
		cmocka_unit_test(test_page_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
