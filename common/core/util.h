/* Small helpers every module uses: messages, clocks, root-prefixed file reads. */
#ifndef GDR_UTIL_H
#define GDR_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GDR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Program name used as the prefix of every message ("gdr_write_bw: ..."). */
void gdr_set_progname(const char *name);
const char *gdr_progname(void);

/* "PROG: message\n" on stderr. */
void gdr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gdr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when verbosity > 0 (GDRPERF_DEBUG=1 or -v). */
void gdr_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gdr_set_verbose(int level);

/* Monotonic time. */
uint64_t gdr_now_ns(void);
/* A run's id from its start time and pid: never 0, the rows' run_id (report.h). */
uint64_t gdr_run_id(uint64_t a, uint64_t b);
double gdr_now_s(void);
/* CPU time (user + system) this process has used, in seconds. */
double gdr_cpu_seconds(void);

/* snprintf that never overflows and always terminates; returns dst. */
char *gdr_strlcpy(char *dst, const char *src, size_t size);
/* qsort comparator for an array of char[N] strings (names, bus ids): strcmp. */
int gdr_cmp_strings(const void *a, const void *b);

/* "8 MiB", "4 KiB", "100 B": powers of two, exact where possible. */
const char *gdr_fmt_size(uint64_t bytes, char *buf, size_t len);

/*
 * Read a whole small file below ROOT (NULL or "" = "/") into buf, NUL
 * terminated, trailing newline stripped; at most len - 1 bytes, and only
 * from a regular file (a FIFO, directory or device is -EINVAL or -EISDIR
 * at once, never a read that blocks). Returns bytes read or -errno.
 */
ssize_t gdr_read_rooted(const char *root, const char *path, char *buf, size_t len);
/*
 * The cause of a failed gdr_read_rooted for a message: the errno text, or
 * "is a FIFO, not a regular file" (only regular files are read). Returns buf.
 */
const char *gdr_rooted_strerror(const char *root, const char *path, int err, char *buf, size_t len);
/* Does ROOT/path exist? */
int gdr_exists_rooted(const char *root, const char *path);
/* Build ROOT/path into out. */
const char *gdr_rooted_path(const char *root, const char *path, char *out, size_t len);

#endif
