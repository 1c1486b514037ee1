/* The one CSV field quoter and the one JSON string escaper, to a FILE or a bounded buffer. */
#include "config.h"

#include "writer.h"

#include <errno.h>
#include <string.h>

void gdr_obuf_putc(struct gdr_obuf *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos++] = c;
	else
		o->full = 1;
}

void gdr_obuf_puts(struct gdr_obuf *o, const char *s)
{
	while (*s)
		gdr_obuf_putc(o, *s++);
}

int gdr_obuf_finish(struct gdr_obuf *o)
{
	if (o->len)
		o->buf[o->pos < o->len ? o->pos : o->len - 1] = '\0';
	return o->full ? -ENOSPC : (int)o->pos;
}

/* Either a FILE or a bounded buffer, so that both escapers exist once. */
struct sink {
	FILE *f;
	struct gdr_obuf *o;
};

static void put(const struct sink *k, const char *p, size_t n)
{
	if (!k->o) {
		if (k->f)
			fwrite(p, 1, n, k->f);
		return;
	}
	while (n--)
		gdr_obuf_putc(k->o, *p++);
}

/* Length of the valid UTF-8 sequence at p, 0 if it is not one (RFC 3629 table 3-7). */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (p[0] == 0xed)
		hi = 0x9f; /* UTF-16 surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (p[0] == 0xf4)
		hi = 0x8f; /* beyond U+10FFFF */
	/* A NUL ends the string before a later byte is read: p[i] < 0x80 stops the loop. */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

static void json_str(const struct sink *k, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	static const char hex[] = "0123456789abcdef";

	put(k, "\"", 1);
	while (*p) {
		const unsigned char *run = p;
		size_t n;

		/* Plain ASCII goes out in one piece. */
		while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			put(k, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };

			put(k, e, 2);
			p++;
		} else if (*p == '\n') {
			put(k, "\\n", 2);
			p++;
		} else if (*p == '\t') {
			put(k, "\\t", 2);
			p++;
		} else if (*p == '\r') {
			put(k, "\\r", 2);
			p++;
		} else if (*p < 0x80) {
			/* The other control bytes and DEL. */
			char e[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };

			put(k, e, 6);
			p++;
		} else if ((n = utf8_len(p)) != 0) {
			put(k, (const char *)p, n);
			p += n;
		} else {
			put(k, "\\ufffd", 6);
			p++;
		}
	}
	put(k, "\"", 1);
}

void gdr_json_str(FILE *out, const char *s)
{
	const struct sink k = { .f = out };

	json_str(&k, s);
}

void gdr_json_str_buf(struct gdr_obuf *o, const char *s)
{
	const struct sink k = { .o = o };

	json_str(&k, s);
}

static void csv_field(const struct sink *k, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		put(k, s, strlen(s));
		return;
	}
	put(k, "\"", 1);
	for (;;) {
		size_t n = strcspn(s, "\"");

		put(k, s, n);
		if (!s[n])
			break;
		put(k, "\"\"", 2);
		s += n + 1;
	}
	put(k, "\"", 1);
}

void gdr_csv_field(FILE *out, const char *s)
{
	const struct sink k = { .f = out };

	csv_field(&k, s);
}

void gdr_csv_field_buf(struct gdr_obuf *o, const char *s)
{
	const struct sink k = { .o = o };

	csv_field(&k, s);
}

/*
 * A Prometheus label value (text format 0.0.4) or HELP text: backslash and
 * line feed escaped, the quote too in a label value; other control bytes
 * become spaces (the format has no escape for them), bytes that are not
 * UTF-8 become U+FFFD.
 */
static void prom_text(const struct sink *k, const char *s, int label)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p) {
		if (*p == '\\') {
			put(k, "\\\\", 2);
		} else if (*p == '\n') {
			put(k, "\\n", 2);
		} else if (*p == '"' && label) {
			put(k, "\\\"", 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			put(k, " ", 1);
		} else if (*p < 0x80) {
			put(k, (const char *)p, 1);
		} else if ((n = utf8_len(p)) != 0) {
			put(k, (const char *)p, n);
			p += n;
			continue;
		} else {
			put(k, "\xef\xbf\xbd", 3);
		}
		p++;
	}
}

void gdr_prom_label_value(FILE *out, const char *s)
{
	const struct sink k = { .f = out };

	prom_text(&k, s, 1);
}

void gdr_prom_help_text(FILE *out, const char *s)
{
	const struct sink k = { .f = out };

	prom_text(&k, s, 0);
}
