/*
 * Text that comes from outside (the command line, /proc, sysfs, an XML file)
 * on its way into a message, a report or a fixed-size field: cut only at a
 * UTF-8 character boundary, long values shortened in the middle so that the
 * cause at the end of a message survives, control bytes made visible.
 */
#ifndef GDR_TEXT_H
#define GDR_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* 1 when s is well-formed UTF-8 (no overlong forms, surrogates or bytes past U+10FFFF). */
int gdr_utf8_valid(const char *s);
/* The longest prefix of s of at most max bytes that does not end inside a character. */
size_t gdr_utf8_prefix(const char *s, size_t max);
/* Copy src into dst (size bytes, NUL included), cut at a character boundary. 1 when cut. */
int gdr_utf8_copy(char *dst, const char *src, size_t size);

/*
 * Copy src into dst with every byte a terminal or a parser could take for a
 * command written as \xHH: C0 controls but tab, DEL, C1 controls (U+0080..
 * U+009F) and bytes that are not UTF-8. Cut at a boundary; returns dst.
 */
const char *gdr_text_safe(const char *src, char *dst, size_t size);

/*
 * vsnprintf that, when the text does not fit, keeps its first third and its
 * end and puts "..." between them (each cut at a character boundary): the
 * value in the middle is shortened, the cause at the end stays. Returns the
 * length written.
 */
size_t gdr_vfmt_short(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
size_t gdr_fmt_short(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Print text to out, the cursor standing at column col, wrapped to width
 * columns: lines break at spaces only, and every continuation line starts at
 * column indent. A word longer than a line stands whole on a line of its own
 * (a path cut in two cannot be pasted). Ends the last line. A column is a
 * character (bytes that start one).
 */
void gdr_text_wrap(FILE *out, const char *text, int col, int indent, int width);

#endif
