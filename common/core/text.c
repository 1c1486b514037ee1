/* UTF-8 aware cutting, shortening and escaping of text from outside (see text.h). */
#include "config.h"

#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Length of the well-formed UTF-8 sequence at s (RFC 3629 table 3-7), 0 when
 * the bytes there are not one; *cp gets the code point.
 */
static size_t utf8_seq(const unsigned char *s, unsigned int *cp)
{
	unsigned int c = s[0], n, i, lo = 0x80, hi = 0xbf;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range excludes overlong forms, surrogates and > U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	*cp = c & (0xff >> (n + 1));
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return n;
}

int gdr_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int cp;
	size_t n;

	while (*p) {
		n = utf8_seq(p, &cp);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

size_t gdr_utf8_prefix(const char *s, size_t max)
{
	size_t n = max;
	int k;

	if (strnlen(s, max + 1) <= max)
		return strlen(s);
	/* s[max] is the first byte left out: a continuation byte there means a split character. */
	for (k = 0; k < 3 && n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80; k++)
		n--;
	/* Four continuation bytes in a row are no character: nothing to keep whole. */
	return ((unsigned char)s[n] & 0xc0) == 0x80 ? max : n;
}

int gdr_utf8_copy(char *dst, const char *src, size_t size)
{
	size_t n;

	if (size == 0)
		return 1;
	if (!src)
		src = "";
	n = gdr_utf8_prefix(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
	return src[n] != '\0';
}

const char *gdr_text_safe(const char *src, char *dst, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)(src ? src : "");
	size_t o = 0, n, i;
	unsigned int cp;

	if (size == 0)
		return dst;
	while (*p) {
		n = utf8_seq(p, &cp);
		if (n && cp != 0x7f && (cp >= 0xa0 || (cp >= 0x20 && cp < 0x7f) || cp == '\t')) {
			if (o + n >= size)
				break;
			for (i = 0; i < n; i++)
				dst[o++] = (char)p[i];
			p += n;
			continue;
		}
		/* Escape the whole sequence of a C1 control, one byte of anything else. */
		n = n ? n : 1;
		if (o + 4 * n >= size)
			break;
		for (i = 0; i < n; i++) {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[p[i] >> 4];
			dst[o++] = hex[p[i] & 15];
		}
		p += n;
	}
	dst[o] = '\0';
	return dst;
}

size_t gdr_vfmt_short(char *buf, size_t size, const char *fmt, va_list ap)
{
	static const char dots[] = "...";
	va_list aq;
	char *full;
	int len;
	size_t head, tail, room;

	if (size == 0)
		return 0;
	va_copy(aq, ap);
	len = vsnprintf(buf, size, fmt, aq);
	va_end(aq);
	if (len < 0) {
		buf[0] = '\0';
		return 0;
	}
	if ((size_t)len < size)
		return (size_t)len;
	full = malloc((size_t)len + 1);
	if (!full || size < sizeof(dots) + 2) {
		/* No room to shorten in the middle: at least do not split a character. */
		free(full);
		buf[gdr_utf8_prefix(buf, size - 1)] = '\0';
		return strlen(buf);
	}
	vsnprintf(full, (size_t)len + 1, fmt, ap);
	room = size - 1 - (sizeof(dots) - 1);
	head = gdr_utf8_prefix(full, room / 3);
	tail = room - head;
	/* Move the tail's start forward to the next character boundary. */
	while (tail > 0 && ((unsigned char)full[len - tail] & 0xc0) == 0x80)
		tail--;
	memcpy(buf, full, head);
	memcpy(buf + head, dots, sizeof(dots) - 1);
	memcpy(buf + head + sizeof(dots) - 1, full + len - tail, tail);
	buf[head + sizeof(dots) - 1 + tail] = '\0';
	free(full);
	return head + sizeof(dots) - 1 + tail;
}

size_t gdr_fmt_short(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = gdr_vfmt_short(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* Characters (not bytes) in s[0..n). */
static int text_cols(const char *s, size_t n)
{
	int cols = 0;

	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	return cols;
}

void gdr_text_wrap(FILE *out, const char *text, int col, int indent, int width)
{
	const char *p = text;
	int sep = 0; /* a space is due before the next word */

	while (*p == ' ')
		p++;
	while (*p) {
		size_t word = strcspn(p, " ");
		int cols = text_cols(p, word);

		if (col > indent && col + sep + cols > width) {
			/* The word does not fit after what the line holds: start a new line. */
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			sep = 0;
		}
		if (sep) {
			fputc(' ', out);
			col++;
		}
		/* Whole, even when longer than a line: a path or a name cut in two
		 * cannot be pasted or searched for. */
		fwrite(p, 1, word, out);
		col += cols;
		p += word;
		sep = 1;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}
