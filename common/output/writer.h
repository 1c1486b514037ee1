/*
 * Every file a gdrperf tool writes goes through here (docs/output-files.md):
 * - whole files (JSON reports, gdr_topo's CSV) are replaced atomically when
 *   the target is a regular file, and written in place when it is not (a
 *   FIFO, a terminal, /dev/null, stdout), so that nothing but a regular
 *   file is ever renamed over;
 * - CSV results are appended whole row by whole row, the header together
 *   with the first row;
 * - one CSV field quoter and one JSON string escaper whose output is always
 *   valid UTF-8.
 * Every function returns 0 or -errno and, on failure, says in why which
 * file and what went wrong ("PATH: write: No space left on device").
 */
#ifndef GDR_WRITER_H
#define GDR_WRITER_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* A bounded output buffer that remembers overflow instead of failing each call. */
struct gdr_obuf {
	char *buf;
	size_t len;
	size_t pos;
	int full;
};
void gdr_obuf_putc(struct gdr_obuf *o, char c);
void gdr_obuf_puts(struct gdr_obuf *o, const char *s);
/* Terminate the buffer; its length, or -ENOSPC when something did not fit. */
int gdr_obuf_finish(struct gdr_obuf *o);

/*
 * s as a JSON string literal, quotes included. Quote, backslash, every
 * control byte (< 0x20) and DEL are escaped; bytes that are not valid UTF-8
 * (RFC 3629: no overlong forms, no surrogates) become U+FFFD, so the output
 * is valid UTF-8 whatever s holds (a /proc file, a driver's GPU name).
 */
void gdr_json_str(FILE *out, const char *s);
void gdr_json_str_buf(struct gdr_obuf *o, const char *s);
/* s as one CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. */
void gdr_csv_field(FILE *out, const char *s);
void gdr_csv_field_buf(struct gdr_obuf *o, const char *s);
/*
 * s as a Prometheus label value (without its quotes) or HELP text: \\, \n
 * and, in a label value, \" escaped; other control bytes become spaces and
 * bytes that are not UTF-8 U+FFFD (common/output/prom.h writes the rest).
 */
void gdr_prom_label_value(FILE *out, const char *s);
void gdr_prom_help_text(FILE *out, const char *s);

/*
 * This process's own descriptor when path names one: "-" and /dev/stdout are
 * 1, /dev/stderr 2, /dev/fd/N and /proc/self/fd/N are N. Else -1. Such a
 * target is always written in place, at the descriptor's offset.
 */
int gdr_out_fd(const char *path);

/*
 * Can path be written later by gdr_out_replace? Checked before a run so that
 * a bad path fails before any work; creates, truncates and opens nothing.
 */
int gdr_out_check(const char *path, char *why, size_t wlen);
/*
 * For a tool that writes files, once at start: SIGXFSZ ignored, so that past a
 * file size limit (ulimit -f) a write fails with EFBIG, which the writers
 * report, removing their temporary file and keeping the old one. The default
 * action kills the tool and leaves the temporary file (.NAME.XXXXXX) behind.
 */
void gdr_out_signals(void);

/*
 * Make path hold exactly data[0..len).
 * A regular file, or a name that does not exist yet, is replaced through a
 * new temporary file in the same directory (mkstemp: O_CREAT|O_EXCL, so no
 * planted file or link is followed), written whole, fsynced, renamed over
 * path, and the directory fsynced: a reader or a crash sees the old file or
 * the new one, never part of it; on failure the old file is as it was.
 * A symbolic link to a regular file: the file it points to is replaced, the
 * link stays. A symbolic link to nothing is refused (-ENOENT), not followed.
 * Anything else (FIFO, character device, socket, one of our descriptors) is
 * opened without O_CREAT or O_TRUNC and written in place.
 */
int gdr_out_replace(const char *path, const void *data, size_t len, char *why, size_t wlen);

/*
 * gdr_out_replace with what was written to mem, an open_memstream over *buf
 * and *len (mem NULL: its open failed): closes mem, replaces path, frees *buf.
 */
int gdr_out_replace_mem(const char *path, FILE *mem, char **buf, size_t *len, char *why,
			size_t wlen);

/*
 * Whole-row appends. open checks the target now and opens an existing file,
 * but creates nothing: a file that does not exist yet is created by the
 * first row, which carries the header, so a run that fails before its first
 * row leaves no file behind. A FIFO or device is opened at the first row
 * too (opening a FIFO waits for its reader).
 */
/*
 * Called with the file locked on an existing, non-empty regular file,
 * at open and again before the first row: 0 to append to it, -errno (why
 * filled) to refuse it.
 */
typedef int (*gdr_append_verify_fn)(int fd, off_t size, const char *path, char *why, size_t wlen);
struct gdr_append {
	int fd;	     /* valid only when own or alias */
	int own;     /* we opened fd and close it */
	int alias;   /* fd is one of ours (stdout): never closed */
	int regular; /* a regular file: locked, verified, rolled back on a short write */
	int started; /* the header is in (ours or an earlier run's) */
	size_t need; /* bytes that must be free on the file system at open */
	gdr_append_verify_fn verify;
	char path[4096];
};
int gdr_append_open(struct gdr_append *a, const char *path, size_t need,
		    gdr_append_verify_fn verify, char *why, size_t wlen);
/*
 * Append row (len bytes, newline-terminated) with one write(2); the first
 * row into an empty file or a stream is preceded by head in the same write.
 * A write cut short (disk full) is cut off again: the file never holds part
 * of a row. If an existing file's last line has no newline (a row cut short
 * by a crash), one is written before the row, so both stay whole lines.
 */
int gdr_append_row(struct gdr_append *a, const char *head, const char *row, size_t len, char *why,
		   size_t wlen);
/* Idempotent; a zeroed struct is fine. */
void gdr_append_close(struct gdr_append *a);

#endif
