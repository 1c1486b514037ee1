/*
 * common/output/writer.c: what each kind of target gets (regular file, symlink,
 * FIFO, pipe, character device, our own descriptors), that a failed write
 * leaves the old file, that a planted link is never followed, whole-row
 * appends, and the two escapers. Every target lives in a temporary
 * directory: nothing here is ever pointed at the real /dev/null or stdout.
 */
#include "cmocka_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "writer.h"

static char tmpdir[64];
static char why[8192];

static int make_tmpdir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/gdr-writer-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A fresh empty subdirectory per test, so that "no file left behind" can be counted. */
static const char *subdir(const char *name)
{
	static char d[128];

	snprintf(d, sizeof(d), "%s/%s", tmpdir, name);
	assert_int_equal(mkdir(d, 0755), 0);
	return d;
}

static const char *at(const char *dir, const char *name)
{
	static char p[32][512];
	static int k;
	char d[256];

	/* dir may be an earlier result of ours. */
	snprintf(d, sizeof(d), "%s", dir);
	k = (k + 1) % 32;
	snprintf(p[k], sizeof(p[k]), "%s/%s", d, name);
	return p[k];
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	return buf;
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *drain(int fd)
{
	static char buf[1 << 16];
	size_t n = 0;
	ssize_t r;

	while ((r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return buf;
}

static void test_regular_replaced(void **state)
{
	const char *d = subdir("regular");
	const char *f = at(d, "out.json");
	struct stat before, after;

	(void)state;
	/* A new file: created with the umask's mode, nothing else left in the directory. */
	assert_int_equal(gdr_out_replace(f, "new\n", 4, why, sizeof(why)), 0);
	assert_string_equal(slurp(f), "new\n");
	assert_int_equal(entries(d), 1);
	/* An existing one: a new inode (rename), the old mode kept. */
	assert_int_equal(chmod(f, 0640), 0);
	assert_int_equal(stat(f, &before), 0);
	assert_int_equal(gdr_out_replace(f, "second\n", 7, why, sizeof(why)), 0);
	assert_int_equal(stat(f, &after), 0);
	assert_string_equal(slurp(f), "second\n");
	assert_true(before.st_ino != after.st_ino);
	assert_int_equal(after.st_mode & 07777, 0640);
	assert_int_equal(entries(d), 1);
}

/* A write that fails (file size limit: what a full disk does) leaves the old file whole. */
static void test_failed_write_keeps_old(void **state)
{
	const char *d = subdir("efbig");
	const char *f = at(d, "out.json");
	static char big[1 << 16];
	struct rlimit old, lim;
	void (*old_handler)(int);
	int r;

	(void)state;
	spit(f, "old report\n");
	memset(big, 'x', sizeof(big));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	old_handler = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = gdr_out_replace(f, big, sizeof(big), why, sizeof(why));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_handler);

	assert_int_equal(r, -EFBIG);
	assert_string_equal(slurp(f), "old report\n");
	assert_int_equal(entries(d), 1); /* the temporary file is gone */
	/* The message names the file and the errno text. */
	assert_non_null(strstr(why, f));
	assert_non_null(strstr(why, strerror(EFBIG)));
}

/*
 * Every tool calls gdr_out_signals at start: SIGXFSZ ignored, so a size limit
 * is the EFBIG above (an error, the old file kept) and never kills the tool.
 */
static void test_out_signals_ignore_sigxfsz(void **state)
{
	struct sigaction old, now;

	(void)state;
	assert_int_equal(sigaction(SIGXFSZ, NULL, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	gdr_out_signals();
	assert_int_equal(sigaction(SIGXFSZ, NULL, &now), 0);
	assert_ptr_equal(now.sa_handler, SIG_IGN);
	sigaction(SIGXFSZ, &old, NULL);
}

/* Links planted where a fixed-name writer puts its temporary file are not followed. */
static void test_planted_links_not_followed(void **state)
{
	const char *d = subdir("planted");
	const char *f = at(d, "out.json");
	const char *victim = at(d, "victim");
	static const char *const names[] = { "out.json.tmp", ".out.json.tmp", ".out.json",
					     "out.json~" };

	(void)state;
	spit(victim, "precious\n");
	spit(f, "old\n");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(symlink(victim, at(d, names[i])), 0);
	assert_int_equal(gdr_out_replace(f, "new\n", 4, why, sizeof(why)), 0);
	assert_string_equal(slurp(f), "new\n");
	assert_string_equal(slurp(victim), "precious\n");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct stat st;

		assert_int_equal(lstat(at(d, names[i]), &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	assert_int_equal(entries(d), 2 + (int)(sizeof(names) / sizeof(names[0])));
}

/* A link to a file: the file is replaced and the link stays; a link to nothing is refused. */
static void test_symlink_target(void **state)
{
	const char *d = subdir("links");
	const char *real = at(d, "real.json");
	const char *link = at(d, "link.json");
	const char *dangling = at(d, "dangling.json");
	struct stat st;

	(void)state;
	spit(real, "old\n");
	assert_int_equal(symlink("real.json", link), 0);
	assert_int_equal(gdr_out_replace(link, "new\n", 4, why, sizeof(why)), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(slurp(real), "new\n");

	assert_int_equal(symlink("missing.json", dangling), 0);
	assert_int_equal(gdr_out_check(dangling, why, sizeof(why)), -ENOENT);
	assert_int_equal(gdr_out_replace(dangling, "x", 1, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, dangling));
	assert_non_null(strstr(why, "symbolic link"));
	assert_int_equal(access(at(d, "missing.json"), F_OK), -1);
	assert_int_equal(entries(d), 3);
}

/* A FIFO is written in place: the reader gets the data and the FIFO is still a FIFO. */
static void test_fifo_in_place(void **state)
{
	const char *d = subdir("fifo");
	const char *f = at(d, "out.json");
	struct stat st;
	int rd;

	(void)state;
	assert_int_equal(mkfifo(f, 0600), 0);
	/* A reader first, so that the writer's open does not wait. */
	rd = open(f, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(gdr_out_check(f, why, sizeof(why)), 0);
	assert_int_equal(gdr_out_replace(f, "{\"a\": 1}\n", 9, why, sizeof(why)), 0);
	assert_string_equal(drain(rd), "{\"a\": 1}\n");
	close(rd);
	assert_int_equal(lstat(f, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(entries(d), 1);
}

/* "-", /dev/fd/N, /proc/self/fd/N and a link to a pipe: the pipe gets the output. */
static void test_pipe_targets(void **state)
{
	const char *d = subdir("pipes");
	char name[64];
	int p[2], status;
	pid_t pid;

	(void)state;
	assert_int_equal(gdr_out_fd("-"), 1);
	assert_int_equal(gdr_out_fd("/dev/stdout"), 1);
	assert_int_equal(gdr_out_fd("/dev/stderr"), 2);
	assert_int_equal(gdr_out_fd("/dev/fd/7"), 7);
	assert_int_equal(gdr_out_fd("/proc/self/fd/12"), 12);
	assert_int_equal(gdr_out_fd("/dev/fd/x"), -1);
	assert_int_equal(gdr_out_fd("./-"), -1);

	assert_int_equal(pipe(p), 0);
	snprintf(name, sizeof(name), "/dev/fd/%d", p[1]);
	assert_int_equal(gdr_out_replace(name, "one\n", 4, why, sizeof(why)), 0);
	snprintf(name, sizeof(name), "/proc/self/fd/%d", p[1]);
	assert_int_equal(gdr_out_replace(name, "two\n", 4, why, sizeof(why)), 0);
	/* Not one of the names we know: found by stat to be a pipe, opened in place. */
	snprintf(name, sizeof(name), "/proc/%d/fd/%d", (int)getpid(), p[1]);
	assert_int_equal(symlink(name, at(d, "to-pipe")), 0);
	assert_int_equal(gdr_out_replace(at(d, "to-pipe"), "three\n", 6, why, sizeof(why)), 0);
	close(p[1]);
	assert_string_equal(drain(p[0]), "one\ntwo\nthree\n");
	close(p[0]);

	/* "-" in a child whose stdout is a pipe. */
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		_exit(gdr_out_replace("-", "stdout\n", 7, why, sizeof(why)) ? 1 : 0);
	}
	close(p[1]);
	assert_string_equal(drain(p[0]), "stdout\n");
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* A descriptor that is not open for writing is named as such. */
	assert_int_equal(gdr_out_check("/dev/fd/999", why, sizeof(why)), -EBADF);
	assert_non_null(strstr(why, "/dev/fd/999"));
}

/* A character device of our own (a copy of /dev/null's numbers, in the temp dir). */
static void test_char_device_in_place(void **state)
{
	const char *d = subdir("chardev");
	const char *f = at(d, "null");
	struct stat st;

	(void)state;
	if (mknod(f, S_IFCHR | 0666, makedev(1, 3))) {
		print_message("# mknod: %s: character device case not run (needs root)\n",
			      strerror(errno));
		return;
	}
	assert_int_equal(gdr_out_replace(f, "data\n", 5, why, sizeof(why)), 0);
	assert_int_equal(lstat(f, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(1, 3));
	assert_int_equal(entries(d), 1);
}

/* The early check opens, creates and truncates nothing, and names the file and the cause. */
static void test_check_touches_nothing(void **state)
{
	const char *d = subdir("check");
	const char *f = at(d, "out.json");
	struct stat before, after;

	(void)state;
	assert_int_equal(gdr_out_check(f, why, sizeof(why)), 0);
	assert_int_equal(access(f, F_OK), -1);
	spit(f, "keep\n");
	assert_int_equal(stat(f, &before), 0);
	assert_int_equal(gdr_out_check(f, why, sizeof(why)), 0);
	assert_int_equal(stat(f, &after), 0);
	assert_string_equal(slurp(f), "keep\n");
	assert_int_equal(before.st_mtime, after.st_mtime);
	assert_int_equal(before.st_ino, after.st_ino);

	assert_int_equal(gdr_out_check(at(d, "no/such/x.json"), why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no/such/x.json"));
	assert_non_null(strstr(why, strerror(ENOENT)));
	assert_int_equal(gdr_out_check(d, why, sizeof(why)), -EISDIR);
	assert_non_null(strstr(why, strerror(EISDIR)));
	assert_int_equal(gdr_out_check(at(d, "out.json/x"), why, sizeof(why)), -ENOTDIR);
	assert_int_equal(gdr_out_check("", why, sizeof(why)), -ENOENT);
	if (geteuid() != 0) {
		const char *ro = at(d, "ro");

		assert_int_equal(mkdir(ro, 0500), 0);
		assert_int_equal(gdr_out_check(at(ro, "x.json"), why, sizeof(why)), -EACCES);
		assert_non_null(strstr(why, "not writable"));
		assert_non_null(strstr(why, strerror(EACCES)));
	}
	assert_int_equal(entries(d), 1);
}

static int verify_magic(int fd, off_t size, const char *path, char *w, size_t wlen)
{
	char c;

	(void)size;
	if (pread(fd, &c, 1, 0) != 1 || c != 'H') {
		snprintf(w, wlen, "%s: not ours", path);
		return -EINVAL;
	}
	return 0;
}

/* A new file appears with its first row, header included; open alone creates nothing. */
static void test_append_header_with_first_row(void **state)
{
	const char *d = subdir("append");
	const char *f = at(d, "r.csv");
	struct gdr_append a;

	(void)state;
	assert_int_equal(gdr_append_open(&a, f, 0, verify_magic, why, sizeof(why)), 0);
	assert_int_equal(access(f, F_OK), -1);
	gdr_append_close(&a);
	gdr_append_close(&a); /* idempotent */
	assert_int_equal(access(f, F_OK), -1);

	assert_int_equal(gdr_append_open(&a, f, 0, verify_magic, why, sizeof(why)), 0);
	assert_int_equal(gdr_append_row(&a, "H\n", "1\n", 2, why, sizeof(why)), 0);
	assert_int_equal(gdr_append_row(&a, "H\n", "2\n", 2, why, sizeof(why)), 0);
	gdr_append_close(&a);
	assert_string_equal(slurp(f), "H\n1\n2\n");
	/* A second run: no second header; a torn last line is left alone until a row comes. */
	spit(f, "H\n1\n2");
	assert_int_equal(gdr_append_open(&a, f, 0, verify_magic, why, sizeof(why)), 0);
	assert_string_equal(slurp(f), "H\n1\n2");
	assert_int_equal(gdr_append_row(&a, "H\n", "3\n", 2, why, sizeof(why)), 0);
	gdr_append_close(&a);
	assert_string_equal(slurp(f), "H\n1\n2\n3\n");
	/* Someone else's file: refused at open, untouched. */
	spit(f, "x,y\n");
	assert_int_equal(gdr_append_open(&a, f, 0, verify_magic, why, sizeof(why)), -EINVAL);
	assert_string_equal(slurp(f), "x,y\n");
	gdr_append_close(&a);
	/* A dangling link is not followed to create a file. */
	assert_int_equal(symlink("elsewhere.csv", at(d, "link.csv")), 0);
	assert_int_equal(gdr_append_open(&a, at(d, "link.csv"), 0, NULL, why, sizeof(why)),
			 -ENOENT);
	assert_int_equal(access(at(d, "elsewhere.csv"), F_OK), -1);
}

/* A FIFO and a pipe get the header with their first row too, and stay what they are. */
static void test_append_streams(void **state)
{
	const char *d = subdir("append-fifo");
	const char *f = at(d, "r.csv");
	struct gdr_append a;
	char name[32];
	struct stat st;
	int rd, p[2];

	(void)state;
	assert_int_equal(mkfifo(f, 0600), 0);
	assert_int_equal(gdr_append_open(&a, f, 0, verify_magic, why, sizeof(why)), 0);
	rd = open(f, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(gdr_append_row(&a, "H\n", "1\n", 2, why, sizeof(why)), 0);
	assert_int_equal(gdr_append_row(&a, "H\n", "2\n", 2, why, sizeof(why)), 0);
	gdr_append_close(&a);
	assert_string_equal(drain(rd), "H\n1\n2\n");
	close(rd);
	assert_int_equal(lstat(f, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	assert_int_equal(pipe(p), 0);
	snprintf(name, sizeof(name), "/dev/fd/%d", p[1]);
	assert_int_equal(gdr_append_open(&a, name, 0, verify_magic, why, sizeof(why)), 0);
	assert_int_equal(gdr_append_row(&a, "H\n", "1\n", 2, why, sizeof(why)), 0);
	gdr_append_close(&a);
	/* Our descriptor is not closed by close. */
	assert_int_equal(write(p[1], "end\n", 4), 4);
	close(p[1]);
	assert_string_equal(drain(p[0]), "H\n1\nend\n");
	close(p[0]);
}

/*
 * An independent strict check of what a JSON string literal must be: valid
 * UTF-8 (decoded here by ranges, not by the writer's table), no raw control
 * bytes, only the escapes JSON defines. Returns the decoded code points'
 * count, or -1 with the reason on stderr.
 */
static int check_json_string(const char *s, unsigned int *cps, int max)
{
	const unsigned char *p = (const unsigned char *)s;
	int n = 0;

	if (*p++ != '"')
		return -1;
	while (*p != '"') {
		unsigned int cp;
		int more;

		if (!*p || n == max)
			return -1;
		if (*p < 0x20 || *p == 0x7f)
			return -1; /* raw control byte (DEL is legal JSON, but we promise it
				      escaped) */
		if (*p == '\\') {
			p++;
			if (strchr("\"\\/bfnrt", *p) && *p) {
				cp = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p;
				p++;
			} else if (*p == 'u') {
				char hex[5] = { 0 };

				memcpy(hex, p + 1, 4);
				if (strspn(hex, "0123456789abcdefABCDEF") != 4)
					return -1;
				cp = (unsigned int)strtoul(hex, NULL, 16);
				if (cp >= 0xd800 && cp <= 0xdfff)
					return -1; /* we never need surrogate pairs */
				p += 5;
			} else {
				return -1;
			}
			cps[n++] = cp;
			continue;
		}
		if (*p < 0x80) {
			cp = *p++;
			more = 0;
		} else if ((*p & 0xe0) == 0xc0) {
			cp = *p++ & 0x1f;
			more = 1;
		} else if ((*p & 0xf0) == 0xe0) {
			cp = *p++ & 0x0f;
			more = 2;
		} else if ((*p & 0xf8) == 0xf0) {
			cp = *p++ & 0x07;
			more = 3;
		} else {
			return -1;
		}
		for (int i = 0; i < more; i++) {
			if ((*p & 0xc0) != 0x80)
				return -1;
			cp = cp << 6 | (*p++ & 0x3f);
		}
		if ((more == 1 && cp < 0x80) || (more == 2 && cp < 0x800) ||
		    (more == 3 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return -1; /* overlong, out of range, surrogate */
		cps[n++] = cp;
	}
	return p[1] == '\0' ? n : -1;
}

static int json_of(const char *in, unsigned int *cps, int max)
{
	static char buf[1 << 14];
	struct gdr_obuf o = { .buf = buf, .len = sizeof(buf) };
	char *fbuf = NULL;
	size_t flen = 0;
	FILE *f = open_memstream(&fbuf, &flen);
	int n;

	gdr_json_str_buf(&o, in);
	assert_true(gdr_obuf_finish(&o) > 0);
	/* The FILE and the buffer variants are the same escaper. */
	assert_non_null(f);
	gdr_json_str(f, in);
	fclose(f);
	assert_string_equal(fbuf, buf);
	free(fbuf);
	n = check_json_string(buf, cps, max);
	if (n < 0)
		print_message("# invalid JSON string: %s\n", buf);
	return n;
}

static void test_json_escaper(void **state)
{
	unsigned int cps[1024];
	char all[256];
	int n;

	(void)state;
	/* Every byte 1..255 in one string: valid JSON, each invalid byte one U+FFFD. */
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	n = json_of(all, cps, 1024);
	assert_int_equal(n, 255);
	for (int i = 1; i < 0x80; i++)
		assert_int_equal(cps[i - 1], (unsigned int)i);
	for (int i = 0x80; i < 256; i++)
		assert_int_equal(cps[i - 1], 0xfffd);

	/* Valid sequences pass through; broken ones are replaced byte by byte. */
	static const struct {
		const char *in;
		int n;
		unsigned int first, last;
	} cases[] = {
		{ "\xc3\xa9", 1, 0xe9, 0xe9 },		     /* e acute */
		{ "\xe2\x82\xac", 1, 0x20ac, 0x20ac },	     /* euro sign */
		{ "\xf0\x9f\x98\x80", 1, 0x1f600, 0x1f600 }, /* emoji */
		{ "\xc0\x80", 2, 0xfffd, 0xfffd },	     /* overlong NUL */
		{ "\xe0\x80\xaf", 3, 0xfffd, 0xfffd },	     /* overlong '/' */
		{ "\xed\xa0\x80", 3, 0xfffd, 0xfffd },	     /* surrogate */
		{ "\xf4\x90\x80\x80", 4, 0xfffd, 0xfffd },   /* > U+10FFFF */
		{ "\xe2\x82", 2, 0xfffd, 0xfffd },	     /* cut short at the end */
		{ "\xe2\x82x", 3, 0xfffd, 'x' },	     /* cut short in the middle */
		{ "a\x01\x1f\x7f\"\\\n\r\t", 9, 'a', '\t' }, /* escapes */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = json_of(cases[i].in, cps, 1024);
		assert_int_equal(n, cases[i].n);
		assert_int_equal(cps[0], cases[i].first);
		assert_int_equal(cps[n - 1], cases[i].last);
	}
}

static void test_csv_field(void **state)
{
	char buf[64];
	struct gdr_obuf o = { .buf = buf, .len = sizeof(buf) };

	(void)state;
	gdr_csv_field_buf(&o, "plain");
	gdr_obuf_putc(&o, ',');
	gdr_csv_field_buf(&o, "a,b");
	gdr_obuf_putc(&o, ',');
	gdr_csv_field_buf(&o, "say \"hi\"");
	gdr_obuf_putc(&o, ',');
	gdr_csv_field_buf(&o, "two\nlines");
	assert_true(gdr_obuf_finish(&o) > 0);
	assert_string_equal(buf, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"");
	/* Too long: -ENOSPC, and still terminated. */
	o = (struct gdr_obuf){ .buf = buf, .len = 4 };
	gdr_csv_field_buf(&o, "abcdef");
	assert_int_equal(gdr_obuf_finish(&o), -ENOSPC);
	assert_string_equal(buf, "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_replaced),
		cmocka_unit_test(test_failed_write_keeps_old),
		cmocka_unit_test(test_planted_links_not_followed),
		cmocka_unit_test(test_symlink_target),
		cmocka_unit_test(test_fifo_in_place),
		cmocka_unit_test(test_pipe_targets),
		cmocka_unit_test(test_char_device_in_place),
		cmocka_unit_test(test_check_touches_nothing),
		cmocka_unit_test(test_append_header_with_first_row),
		cmocka_unit_test(test_append_streams),
		cmocka_unit_test(test_json_escaper),
		cmocka_unit_test(test_csv_field),
		cmocka_unit_test(test_out_signals_ignore_sigxfsz),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
