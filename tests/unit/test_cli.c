// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli.h"
#include "host.h"

static void test_sizes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(cli_parse_size("64M", &v), 0);
	assert_int_equal(v, 64ull << 20);
	assert_int_equal(cli_parse_size("1G", &v), 0);
	assert_int_equal(v, 1ull << 30);
	assert_int_equal(cli_parse_size("2048KiB", &v), 0);
	assert_int_equal(v, 2048ull << 10);
	assert_int_equal(cli_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(cli_parse_size("", &v), -1);
	assert_int_equal(cli_parse_size("-1M", &v), -1);
	assert_int_equal(cli_parse_size("12X", &v), -1);
	assert_int_equal(cli_parse_size("99999999999999999999G", &v), -1);
	assert_int_equal(cli_parse_size("17179869184G", &v), -1);
}

static void test_run_options(void **state)
{
	char file_arg[] = "/etc/hostname:/etc/h";	/* split in place */
	char *argv[] = { "run", "--cpus", "4", "--mem", "100M", "--env", "A=b",
			 "--file", file_arg, "/path/to/prog", "-x", "y", NULL };
	struct vmm_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(cli_parse_run(12, argv, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.ncpus, 4);
	assert_int_equal(cfg.mem_size, 100ull << 20);	/* already 2 MiB aligned */
	assert_int_equal(cfg.nenv, 1);
	assert_string_equal(cfg.files[0].guest, "/etc/h");
	assert_string_equal(cfg.program, "/path/to/prog");
	assert_int_equal(cfg.argc, 3);
	assert_string_equal(cfg.argv[0], "prog");
	assert_string_equal(cfg.argv[1], "-x");	/* PROGRAM's own options */
}

/* --dir HOST:GUEST[:ro|:rw], read-only by default; HOST may hold ':'. */
static void test_run_dirs(void **state)
{
	char d1[] = "/srv/in:/in", d2[] = "/a:b/out:/out:rw",
	     d3[] = "/x:/procfs:ro", d4[] = "/y:/out", d5[] = "/z:/out";
	char *argv[] = { "run", "--dir", d1, "--dir", d2, "--dir", d3,
			 "--cwd", "/out", "prog", NULL };
	char *twice[] = { "run", "--dir", d4, "--dir", d5, "prog", NULL };
	struct vmm_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(cli_parse_run(10, argv, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.ndirs, 3);
	assert_string_equal(cfg.dirs[0].host, "/srv/in");
	assert_string_equal(cfg.dirs[0].guest, "/in");
	assert_false(cfg.dirs[0].rw);
	assert_string_equal(cfg.dirs[1].host, "/a:b/out");
	assert_string_equal(cfg.dirs[1].guest, "/out");
	assert_true(cfg.dirs[1].rw);
	assert_string_equal(cfg.dirs[2].guest, "/procfs");
	assert_false(cfg.dirs[2].rw);
	assert_string_equal(cfg.cwd, "/out");
	assert_int_equal(cli_parse_run(6, twice, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "twice"));
}

static void test_run_bad_options(void **state)
{
	const char *bad[][3] = {
		{ "--cpus", "0", "p" }, { "--cpus", "65", "p" },
		{ "--cpus", "2x", "p" }, { "--mem", "1M", "p" },
		{ "--mem", "3G", "p" }, { "--env", "NOEQUALS", "p" },
		{ "--file", "nocolon", "p" }, { "--file", "a:relative", "p" },
		{ "--timeout", "-1", "p" }, { "--bogus", "x", "p" },
		{ "--host", "vmx", "p" }, { "--host", "", "p" },
		{ "--policy", "bogus", "p" }, { "--policy", "", "p" },
		{ "--dir", "/tmp", "p" }, { "--dir", "/tmp:rel", "p" },
		{ "--dir", ":/d", "p" }, { "--dir", "/tmp:/a/../b", "p" },
		{ "--dir", "/tmp:/a/./b", "p" }, { "--dir", "/tmp:/proc", "p" },
		{ "--dir", "/tmp:/dev/x", "p" }, { "--dir", "/tmp:/d:rx", "p" },
		{ "--dir", "/tmp:/d:", "p" }, { "--cwd", "rel", "p" },
		{ "--cwd", "/a/..", "p" }, { "--cwd", "/sys", "p" },
	};
	struct vmm_config cfg;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "run", (char *)bad[i][0], (char *)bad[i][1],
				 (char *)bad[i][2], NULL };
		char a1[64];

		strcpy(a1, bad[i][1]);
		argv[2] = a1;
		err[0] = 0;
		assert_int_equal(cli_parse_run(4, argv, &cfg, err, sizeof(err)),
				 -1);
		assert_true(strlen(err) > 5);
		assert_null(strchr(err, '\n'));
	}
	{
		char *argv[] = { "run", "--host", "standard", "p", NULL };

		assert_int_equal(cli_parse_run(4, argv, &cfg, err, sizeof(err)),
				 0);
		assert_string_equal(cfg.host, "standard");
		assert_int_equal(host_kind_parse(cfg.host), PV_HOST_STANDARD);
		assert_int_equal(host_kind_parse("pvm"), PV_HOST_PVM);
	}
	{
		char *argv[] = { "run", "--cpus", "2", NULL };

		assert_int_equal(cli_parse_run(3, argv, &cfg, err, sizeof(err)),
				 -1);
		assert_non_null(strstr(err, "no PROGRAM"));
	}
	{
		/* A misspelt policy is an error naming the registered ones. */
		char *argv[] = { "run", "--policy", "wallclok", "p", NULL };

		assert_int_equal(cli_parse_run(4, argv, &cfg, err, sizeof(err)),
				 -1);
		assert_non_null(strstr(err, "'wallclok'"));
		assert_non_null(strstr(err, "offset"));
		assert_non_null(strstr(err, "wallclock"));
		argv[2] = "wallclock";
		assert_int_equal(cli_parse_run(4, argv, &cfg, err, sizeof(err)),
				 0);
		assert_string_equal(cfg.policy, "wallclock");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_run_options),
		cmocka_unit_test(test_run_dirs),
		cmocka_unit_test(test_run_bad_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
