#include "config.h"

#include "util.h"

#include "input.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *progname = "gdrperf";
static int verbose = -1;

void gdr_set_progname(const char *name)
{
	const char *slash = strrchr(name, '/');

	progname = slash ? slash + 1 : name;
}

const char *gdr_progname(void)
{
	return progname;
}

void gdr_set_verbose(int level)
{
	verbose = level;
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char body[1024], safe[4 * sizeof(body)], line[1024];
	size_t len;

	/*
	 * A long value (a 3000-byte path) is shortened in the middle, so the cause
	 * at the end and the newline always stay; bytes from outside that a
	 * terminal would act on are shown as \xHH.
	 */
	gdr_vfmt_short(body, sizeof(body), fmt, ap);
	gdr_text_safe(body, safe, sizeof(safe));
	len = gdr_fmt_short(line, sizeof(line) - 1, "%s: %s%s", progname, kind, safe);
	/* One write per message so that two processes sharing a terminal do not interleave. */
	line[len++] = '\n';
	fflush(stdout);
	if (write(STDERR_FILENO, line, len) < 0)
		return;
}

void gdr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void gdr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void gdr_dbg(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 0) {
		const char *env = getenv("GDRPERF_DEBUG");
		verbose = env && *env && strcmp(env, "0") ? 1 : 0;
	}
	if (verbose <= 0)
		return;
	va_start(ap, fmt);
	vmsg("debug: ", fmt, ap);
	va_end(ap);
}

uint64_t gdr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t gdr_run_id(uint64_t a, uint64_t b)
{
	/* splitmix64's finaliser: neighbouring clocks and pids land far apart. */
	uint64_t z = a ^ (b * 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

double gdr_now_s(void)
{
	return (double)gdr_now_ns() / 1e9;
}

double gdr_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

char *gdr_strlcpy(char *dst, const char *src, size_t size)
{
	/* A cut never splits a UTF-8 character: the CSV and JSON fields stay valid text. */
	gdr_utf8_copy(dst, src, size);
	return dst;
}

const char *gdr_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;
	uint64_t v = bytes;

	while (u + 1 < GDR_ARRAY_SIZE(unit) && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)v, unit[u]);
	return buf;
}

const char *gdr_rooted_path(const char *root, const char *path, char *out, size_t len)
{
	if (!root || !*root || !strcmp(root, "/"))
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s%s%s", root, path[0] == '/' ? "" : "/", path);
	return out;
}

ssize_t gdr_read_rooted(const char *root, const char *path, char *buf, size_t len)
{
	char full[4096];
	ssize_t total;

	if (len == 0)
		return -EINVAL;
	gdr_rooted_path(root, path, full, sizeof(full));
	/* Regular files only, bounded by len: a FIFO planted below --root cannot block. */
	total = gdr_input_read(full, buf, len);
	if (total < 0)
		return total;
	while (total > 0 && (buf[total - 1] == '\n' || buf[total - 1] == '\r'))
		buf[--total] = '\0';
	return total;
}

const char *gdr_rooted_strerror(const char *root, const char *path, int err, char *buf, size_t len)
{
	char full[4096];

	return gdr_input_strerror(gdr_rooted_path(root, path, full, sizeof(full)), err, buf, len);
}

int gdr_exists_rooted(const char *root, const char *path)
{
	char full[4096];
	struct stat st;

	return stat(gdr_rooted_path(root, path, full, sizeof(full)), &st) == 0;
}

int gdr_cmp_strings(const void *a, const void *b)
{
	return strcmp(a, b);
}
