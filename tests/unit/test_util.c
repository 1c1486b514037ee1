#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static void test_fmt_size(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(gdr_fmt_size(0, b, sizeof(b)), "0 B");
	assert_string_equal(gdr_fmt_size(1000, b, sizeof(b)), "1000 B");
	assert_string_equal(gdr_fmt_size(4096, b, sizeof(b)), "4 KiB");
	assert_string_equal(gdr_fmt_size(8u << 20, b, sizeof(b)), "8 MiB");
	assert_string_equal(gdr_fmt_size(3u << 10 | 1, b, sizeof(b)), "3073 B");
}

static void test_read_rooted(void **state)
{
	char dir[] = "/tmp/gdr-util-XXXXXX";
	char path[256], buf[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("5.15.0\n", f);
	fclose(f);
	assert_int_equal(gdr_read_rooted(dir, "/v", buf, sizeof(buf)), 6);
	assert_string_equal(buf, "5.15.0");
	assert_true(gdr_exists_rooted(dir, "/v"));
	assert_false(gdr_exists_rooted(dir, "/nope"));
	assert_int_equal(gdr_read_rooted(dir, "/nope", buf, sizeof(buf)), -ENOENT);
	/* A tiny buffer truncates, never overflows. */
	assert_int_equal(gdr_read_rooted(dir, "v", buf, 4), 3);
	assert_string_equal(buf, "5.1");
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_size),
		cmocka_unit_test(test_read_rooted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
