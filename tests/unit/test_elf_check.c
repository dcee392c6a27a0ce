// SPDX-License-Identifier: MIT
/* ELF validation of programs and kernels: argv[1] is a real guest program. */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "elf_check.h"
#include "initramfs.h"

static void *prog;
static size_t prog_len;
static char err[256];

static void test_real_program_ok(void **state)
{
	(void)state;
	assert_int_equal(elf_check_program(prog, prog_len, err, sizeof(err)), 0);
}

/* The static program has no interpreter; this test, built by the host
 * compiler, is dynamically linked: its PT_INTERP is glibc's ld.so. */
static void test_interp(void **state)
{
	char path[256];
	void *self;
	size_t len;

	(void)state;
	assert_int_equal(elf_program_interp(prog, prog_len, path,
					    sizeof(path)), 0);
	assert_int_equal(file_read_all("/proc/self/exe", &self, &len, err,
				       sizeof(err)), 0);
	assert_int_equal(elf_check_program(self, len, err, sizeof(err)), 0);
	assert_int_equal(elf_program_interp(self, len, path, sizeof(path)), 1);
	assert_string_equal(path, "/lib64/ld-linux-x86-64.so.2");
	assert_int_equal(elf_program_interp(self, len, path, 8), -1);
	free(self);
}

static void test_random_bytes(void **state)
{
	uint8_t buf[4096];

	(void)state;
	srand(1);
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = rand();
		assert_int_equal(elf_check_program(buf, sizeof(buf), err,
						   sizeof(err)), -1);
		assert_non_null(strchr(err, ' '));
		assert_null(strchr(err, '\n'));
	}
}

static void test_truncations(void **state)
{
	(void)state;
	/* Every prefix shorter than the program headers is rejected. */
	for (size_t len = 0; len < 64 + 10 * sizeof(Elf64_Phdr); len += 3)
		assert_int_equal(elf_check_program(prog, len, err, sizeof(err)),
				 -1);
}

static void test_header_corruptions(void **state)
{
	uint8_t *p = malloc(prog_len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Phdr *ph;

	(void)state;
#define RESET() memcpy(p, prog, prog_len)
#define EXPECT_BAD(msg) do { \
		assert_int_equal(elf_check_program(p, prog_len, err, sizeof(err)), -1); \
		assert_non_null(strstr(err, msg)); \
	} while (0)
	RESET(); eh->e_machine = EM_AARCH64; EXPECT_BAD("x86-64");
	RESET(); p[EI_CLASS] = ELFCLASS32; EXPECT_BAD("64-bit");
	RESET(); eh->e_type = ET_REL; EXPECT_BAD("not an executable");
	RESET(); eh->e_phoff = prog_len - 8; EXPECT_BAD("program header");
	RESET(); eh->e_phnum = 0; EXPECT_BAD("program header");
	RESET(); eh->e_entry = 0x10; EXPECT_BAD("entry point");
	RESET();
	ph = (Elf64_Phdr *)(p + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			ph[i].p_filesz = prog_len * 2;
			ph[i].p_memsz = prog_len * 2;
			break;
		}
	}
	EXPECT_BAD("past the end");
	RESET();
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			ph[i].p_vaddr = 0xffffffff80000000ull;
			break;
		}
	}
	EXPECT_BAD("outside the user address space");
	RESET();
	ph[0].p_type = PT_INTERP;	/* a PT_PHDR: bytes without a NUL */
	EXPECT_BAD("interpreter path");
	free(p);
}

static void test_kernel_rejects_user_program(void **state)
{
	struct elf_kernel_info ki;
	uint8_t *mem = calloc(1, 16 << 20);

	(void)state;
	assert_int_equal(elf_load_kernel(prog, prog_len, mem, 16 << 20, &ki,
					 err, sizeof(err)), -1);
	assert_non_null(strstr(err, "linked"));
	free(mem);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_program_ok),
		cmocka_unit_test(test_interp),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_header_corruptions),
		cmocka_unit_test(test_kernel_rejects_user_program),
	};

	if (argc < 2 || file_read_all(argv[1], &prog, &prog_len, err,
				      sizeof(err))) {
		fprintf(stderr, "usage: test_elf_check STATIC-PROGRAM (%s)\n", err);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
