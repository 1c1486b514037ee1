/* text.c (UTF-8 cuts, shortening, escaping), input.c (regular files only) and the messages. */
#include "cmocka_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "text.h"
#include "util.h"

static void test_utf8_valid(void **state)
{
	(void)state;
	assert_true(gdr_utf8_valid(""));
	assert_true(gdr_utf8_valid("plain ascii"));
	assert_true(gdr_utf8_valid("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	assert_false(gdr_utf8_valid("\xff"));
	assert_false(gdr_utf8_valid("\xc3"));		  /* cut lead byte */
	assert_false(gdr_utf8_valid("\xe2\x82"));	  /* cut 3-byte sequence */
	assert_false(gdr_utf8_valid("\x80"));		  /* lone continuation */
	assert_false(gdr_utf8_valid("\xc0\xaf"));	  /* overlong '/' */
	assert_false(gdr_utf8_valid("\xe0\x80\xaf"));	  /* overlong */
	assert_false(gdr_utf8_valid("\xed\xa0\x80"));	  /* surrogate */
	assert_false(gdr_utf8_valid("\xf4\x90\x80\x80")); /* past U+10FFFF */
}

/* Every cut of a string of 1..4-byte characters, at every size, ends on a boundary. */
static void test_utf8_copy_every_size(void **state)
{
	const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z\xc3\xa9\xc3\xa9";
	char dst[32];
	size_t size;

	(void)state;
	for (size = 1; size <= strlen(s) + 2; size++) {
		int cut = gdr_utf8_copy(dst, s, size);

		assert_true(strlen(dst) < size);
		assert_true(gdr_utf8_valid(dst));
		assert_memory_equal(dst, s, strlen(dst));
		assert_int_equal(cut, strlen(dst) < strlen(s));
		/* Nothing more than a partial character was left out. */
		assert_true(size - 1 - strlen(dst) <= 3);
	}
	/* gdr_strlcpy, which fills every CSV/JSON field, cuts the same way. */
	gdr_strlcpy(dst, "\xc3\xa9\xc3\xa9\xc3\xa9", 6);
	assert_string_equal(dst, "\xc3\xa9\xc3\xa9");
	gdr_strlcpy(dst, NULL, sizeof(dst));
	assert_string_equal(dst, "");
	/* Invalid input is cut where asked: there is no character to keep whole. */
	gdr_utf8_copy(dst, "\x80\x80\x80\x80\x80\x80", 4);
	assert_int_equal(strlen(dst), 3);
}

static void test_text_safe(void **state)
{
	char out[128];

	(void)state;
	assert_string_equal(gdr_text_safe("mlx5_0 \xc3\xa9\t", out, sizeof(out)),
			    "mlx5_0 \xc3\xa9\t");
	assert_string_equal(gdr_text_safe("a\x1b[2Jb\r\n", out, sizeof(out)),
			    "a\\x1b[2Jb\\x0d\\x0a");
	assert_string_equal(gdr_text_safe("del\x7f", out, sizeof(out)), "del\\x7f");
	/* C1 controls (8-bit CSI) are UTF-8 but act on terminals: escaped whole. */
	assert_string_equal(gdr_text_safe("\xc2\x9b"
					  "31m",
					  out, sizeof(out)),
			    "\\xc2\\x9b31m");
	assert_string_equal(gdr_text_safe("\xc2\xa0", out, sizeof(out)), "\xc2\xa0");
	/* Bytes that are not UTF-8 are escaped one by one. */
	assert_string_equal(gdr_text_safe("\xff\xc3", out, sizeof(out)), "\\xff\\xc3");
	/* Too small a buffer cuts before an escape or a character, never inside. */
	assert_string_equal(gdr_text_safe("ab\x1b", out, 5), "ab");
	assert_string_equal(gdr_text_safe("a\xc3\xa9", out, 3), "a");
	assert_string_equal(gdr_text_safe(NULL, out, sizeof(out)), "");
}

static void test_fmt_short(void **state)
{
	char path[3001], buf[256];
	size_t n;

	(void)state;
	memset(path, 'd', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	n = gdr_fmt_short(buf, sizeof(buf), "%s: %s", path, "No such file or directory");
	assert_int_equal(n, strlen(buf));
	assert_true(n < sizeof(buf));
	assert_non_null(strstr(buf, "..."));
	assert_int_equal(strncmp(buf, "ddd", 3), 0);
	assert_string_equal(buf + n - strlen("d: No such file or directory"),
			    "d: No such file or directory");
	/* What fits is not touched. */
	gdr_fmt_short(buf, sizeof(buf), "%s=%d", "x", 5);
	assert_string_equal(buf, "x=5");
	/* Multi-byte characters on both sides of the cut stay whole, at every size with room for
	 * the tail. */
	char wide[600] = "";
	for (int i = 0; i < 150; i++)
		strcat(wide, "\xe2\x82\xac");
	for (size_t size = 16; size < 200; size++) {
		char b[200];

		gdr_fmt_short(b, size, "%s: cause", wide);
		assert_true(strlen(b) < size);
		assert_true(gdr_utf8_valid(b));
		assert_non_null(strstr(b, "...")); /* always shortened: wide is longer */
		assert_string_equal(b + strlen(b) - strlen(": cause"), ": cause");
	}
}

/* gdr_err's line on stderr: captured through a temporary file. */
static void capture_err(const char *value, char *out, size_t len)
{
	char name[] = "/tmp/gdr-text-err-XXXXXX";
	int fd = mkstemp(name), saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, STDERR_FILENO);
	gdr_err("%s: cannot read the XML topology: %s", value, "No such file or directory");
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	assert_true(n > 0);
	out[n] = '\0';
	close(fd);
	unlink(name);
}

static void test_messages_keep_cause_and_newline(void **state)
{
	char path[3001], line[4096];

	(void)state;
	gdr_set_progname("gdr_test");
	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	capture_err(path, line, sizeof(line));
	assert_true(strlen(line) <= 1024);
	assert_int_equal(strncmp(line, "gdr_test: ppp", 13), 0);
	assert_non_null(strstr(line, "..."));
	assert_string_equal(line + strlen(line) - strlen("No such file or directory\n"),
			    "No such file or directory\n");
	/* Control bytes in a value are shown, not sent to the terminal. */
	capture_err("a\x1b]0;x\x07\nb", line, sizeof(line));
	assert_string_equal(line, "gdr_test: a\\x1b]0;x\\x07\\x0ab: cannot read the XML topology: "
				  "No such file or directory\n");
}

struct tmpdir {
	char dir[64];
	char path[128];
};

static const char *in_dir(struct tmpdir *d, const char *name)
{
	snprintf(d->path, sizeof(d->path), "%s/%s", d->dir, name);
	return d->path;
}

static void test_input_refuses_non_regular(void **state)
{
	struct tmpdir d = { .dir = "/tmp/gdr-input-XXXXXX" };
	char buf[64], why[128], *all;
	size_t len;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(d.dir));
	assert_int_equal(mkfifo(in_dir(&d, "fifo"), 0600), 0);
	/* A FIFO with no writer would block open() and read() for ever: refused at once. */
	assert_int_equal(gdr_input_open(d.path, &fd), -EINVAL);
	assert_int_equal(fd, -1);
	assert_int_equal(gdr_input_read(d.path, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(gdr_input_read_all(d.path, 1024, &all, &len), -EINVAL);
	assert_string_equal(gdr_input_strerror(d.path, -EINVAL, why, sizeof(why)),
			    "is a FIFO, not a regular file");
	assert_int_equal(gdr_read_rooted(d.dir, "/fifo", buf, sizeof(buf)), -EINVAL);
	assert_string_equal(gdr_rooted_strerror(d.dir, "/fifo", -EINVAL, why, sizeof(why)),
			    "is a FIFO, not a regular file");
	assert_int_equal(gdr_input_check(d.path), -EINVAL);
	unlink(d.path);
	/* A directory, a character device, a symlink to one. */
	assert_int_equal(gdr_input_read(d.dir, buf, sizeof(buf)), -EISDIR);
	assert_string_equal(gdr_input_strerror(d.dir, -EISDIR, why, sizeof(why)),
			    "is a directory, not a regular file");
	assert_int_equal(gdr_input_read("/dev/zero", buf, sizeof(buf)), -EINVAL);
	assert_string_equal(gdr_input_strerror("/dev/zero", -EINVAL, why, sizeof(why)),
			    "is a character device, not a regular file");
	assert_int_equal(symlink("/dev/zero", in_dir(&d, "link")), 0);
	assert_int_equal(gdr_read_rooted(d.dir, "link", buf, sizeof(buf)), -EINVAL);
	unlink(d.path);
	assert_int_equal(gdr_input_read(in_dir(&d, "none"), buf, sizeof(buf)), -ENOENT);
	assert_string_equal(gdr_input_strerror(d.path, -ENOENT, why, sizeof(why)),
			    "No such file or directory");
	rmdir(d.dir);
}

static void test_input_bounded(void **state)
{
	struct tmpdir d = { .dir = "/tmp/gdr-input-XXXXXX" };
	char buf[8], why[128], *all;
	size_t len;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(d.dir));
	f = fopen(in_dir(&d, "f"), "w");
	assert_non_null(f);
	for (int i = 0; i < 100000; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	/* A small buffer reads a prefix. */
	assert_int_equal(gdr_input_read(d.path, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "abcdefg");
	/* The whole file, growing past the first chunk. */
	assert_int_equal(gdr_input_read_all(d.path, 100000, &all, &len), 0);
	assert_int_equal(len, 100000);
	assert_int_equal(all[len], '\0');
	assert_int_equal(all[99999], 'a' + 99999 % 26);
	free(all);
	/* One byte over the bound is refused, and nothing is returned. */
	assert_int_equal(gdr_input_read_all(d.path, 99999, &all, &len), -EFBIG);
	assert_null(all);
	assert_non_null(
	    strstr(gdr_input_strerror(d.path, -EFBIG, why, sizeof(why)), "larger than"));
	/* /proc files say size 0 and are read all the same. */
	assert_int_equal(gdr_input_read_all("/proc/self/status", 1 << 20, &all, &len), 0);
	assert_true(len > 0);
	assert_non_null(strstr(all, "Name:"));
	free(all);
	unlink(d.path);
	rmdir(d.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_copy_every_size),
		cmocka_unit_test(test_text_safe),
		cmocka_unit_test(test_fmt_short),
		cmocka_unit_test(test_messages_keep_cause_and_newline),
		cmocka_unit_test(test_input_refuses_non_regular),
		cmocka_unit_test(test_input_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
