// SPDX-License-Identifier: MIT
/* The VMM's cpio writer against the guest kernel's cpio reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpio_writer.h"
#include "cpio_reader.h"

struct seen {
	int n;
	char names[8][64];
	const uint8_t *data[8];
	uint64_t size[8];
	uint32_t mode[8];
};

static bool collect(const struct cpio_file *f, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		strncpy(s->names[s->n], f->name, 63);
		s->data[s->n] = f->data;
		s->size[s->n] = f->size;
		s->mode[s->n] = f->mode;
	}
	s->n++;
	return true;
}

static void test_roundtrip_and_alignment(void **state)
{
	struct cpio_writer c = { 0 };
	struct seen s = { 0 };
	uint8_t big[10000];

	(void)state;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	assert_int_equal(cpio_writer_add(&c, "bin", 040755, NULL, 0), 0);
	assert_int_equal(cpio_writer_add(&c, "bin/prog", 0100755, big, sizeof(big)), 0);
	assert_int_equal(cpio_writer_add(&c, "etc/x", 0100644, "hi", 2), 0);
	assert_int_equal(cpio_writer_finish(&c), 0);
	assert_int_equal(cpio_parse(c.data, c.len, collect, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.names[1], "bin/prog");
	assert_int_equal(s.size[1], sizeof(big));
	assert_memory_equal(s.data[1], big, sizeof(big));
	assert_int_equal(s.mode[0], 040755);
	/* File data is page aligned so the kernel can map it in place. */
	assert_int_equal((s.data[1] - c.data) % CPIO_WRITER_ALIGN, 0);
	assert_int_equal((s.data[2] - c.data) % CPIO_WRITER_ALIGN, 0);
	assert_memory_equal(s.data[2], "hi", 2);
	assert_int_equal(c.len % 4, 0);
	cpio_writer_free(&c);
}

static void test_header_format(void **state)
{
	struct cpio_writer c = { 0 };

	(void)state;
	assert_int_equal(cpio_writer_add(&c, "a", 0100644, NULL, 0), 0);
	assert_memory_equal(c.data, "070701", 6);
	/* namesize of "a" is 2: fields are 8 hex digits, namesize is the 12th. */
	assert_memory_equal(c.data + 6 + 11 * 8, "00000002", 8);
	cpio_writer_free(&c);
}

static void test_reader_rejects_malformed(void **state)
{
	struct cpio_writer c = { 0 };
	struct seen s = { 0 };
	uint8_t *copy;

	(void)state;
	assert_int_equal(cpio_writer_add(&c, "f", 0100644, "data", 4), 0);
	assert_int_equal(cpio_writer_finish(&c), 0);
	/* Truncated anywhere: never a read past the end, always -1. */
	for (size_t len = 0; len < c.len; len += 7) {
		copy = malloc(len ? len : 1);
		memcpy(copy, c.data, len);
		memset(&s, 0, sizeof(s));
		assert_int_equal(cpio_parse(copy, len, collect, &s), -1);
		free(copy);
	}
	/* Bad magic, bad hex digit, size past the end. */
	c.data[0] = 'X';
	assert_int_equal(cpio_parse(c.data, c.len, collect, &s), -1);
	c.data[0] = '0';
	c.data[6 + 6 * 8] = 'G';
	assert_int_equal(cpio_parse(c.data, c.len, collect, &s), -1);
	memcpy(c.data + 6 + 6 * 8, "7FFFFFFF", 8);
	assert_int_equal(cpio_parse(c.data, c.len, collect, &s), -1);
	cpio_writer_free(&c);
}

static void test_reader_name_must_be_terminated(void **state)
{
	struct cpio_writer c = { 0 };
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(cpio_writer_add(&c, "name", 0100644, NULL, 0), 0);
	assert_int_equal(cpio_writer_finish(&c), 0);
	c.data[110 + 4] = 'x';	/* overwrite the NUL of "name" */
	assert_int_equal(cpio_parse(c.data, c.len, collect, &s), -1);
	cpio_writer_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_and_alignment),
		cmocka_unit_test(test_header_format),
		cmocka_unit_test(test_reader_rejects_malformed),
		cmocka_unit_test(test_reader_name_must_be_terminated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
