/*
 * debugfs dma_buf/bufinfo, as dma_buf_debug_show (drivers/dma-buf/dma-buf.c)
 * writes it:
 *
 *   (blank)
 *   Dma-buf Objects:
 *   size    \tflags   \tmode    \tcount   \texp_name\tino     \tname
 *   %08zu\t%08x\t%08x\t%08ld\t%s\t%08lu\t%s          one per dma-buf
 *   \t<fence lines of dma_resv_describe, if any>
 *   \tAttached Devices:
 *   \t<dev_name> ...                                   one per attachment
 *   Total %d devices attached
 *   (blank)
 *   ...
 *   Total %d objects, %zu bytes
 *
 * The name is "<none>" when unset (5.19+; "" before). Kernels before 5.3
 * print no ino and no name; both forms are read.
 */
#include "config.h"

#include "live.h"
#include "text.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const gdr_live_nvidia_exporters[] = { "nv_dmabuf", "nvidia", NULL };

int gdr_live_nvidia_exporter(const char *exp_name)
{
	for (int i = 0; gdr_live_nvidia_exporters[i]; i++)
		if (!strcmp(exp_name, gdr_live_nvidia_exporters[i]))
			return 1;
	return 0;
}

void gdr_live_bufs_free(struct gdr_live_bufs *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static int digits(const char *s, size_t n, int hex)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(hex ? isxdigit((unsigned char)s[i]) : isdigit((unsigned char)s[i])))
			return 0;
	return 1;
}

/* A field of a line, made safe to print (a dma-buf's name is set by any process). */
static void field(char *out, size_t size, const char *s, size_t len)
{
	char raw[256];

	snprintf(raw, sizeof(raw), "%.*s", (int)len, s);
	gdr_text_safe(raw, out, size);
}

/* One object line into d; 0, or -EINVAL when it is not one. */
static int object_line(const char *line, size_t len, struct gdr_live_dmabuf *d)
{
	const char *f[7];
	size_t flen[7];
	int nf = 0;
	const char *p = line, *end = line + len;

	memset(d, 0, sizeof(*d));
	while (nf < 7) {
		/* The name is the rest of the line: it may hold a tab. */
		const char *t = nf == 6 ? NULL : memchr(p, '\t', (size_t)(end - p));

		f[nf] = p;
		flen[nf] = (size_t)((t ? t : end) - p);
		nf++;
		if (!t)
			break;
		p = t + 1;
	}
	if (nf != 5 && nf != 7)
		return -EINVAL;
	if (!digits(f[0], flen[0], 0) || !digits(f[1], flen[1], 1) || !digits(f[2], flen[2], 1) ||
	    !digits(f[3], flen[3], 0) || (nf == 7 && !digits(f[5], flen[5], 0)))
		return -EINVAL;
	d->size = strtoull(f[0], NULL, 10);
	d->count = strtol(f[3], NULL, 10);
	field(d->exp_name, sizeof(d->exp_name), f[4], flen[4]);
	if (nf == 7) {
		d->ino = strtoul(f[5], NULL, 10);
		if (!(flen[6] == 6 && !memcmp(f[6], "<none>", 6)))
			field(d->name, sizeof(d->name), f[6], flen[6]);
	}
	return 0;
}

static int push(struct gdr_live_bufs *b, const struct gdr_live_dmabuf *d)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct gdr_live_dmabuf *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = *d;
	return 0;
}

int gdr_live_bufinfo_parse(const char *text, struct gdr_live_bufs *b, char *why, size_t wlen)
{
	enum { HEAD, COLUMNS, BODY } at = HEAD;
	struct gdr_live_dmabuf *cur = NULL;
	int in_attach = 0, lineno = 0, r;
	const char *s = text;

	memset(b, 0, sizeof(*b));
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		lineno++;
		if (at == HEAD) {
			if (len == 16 && !memcmp(s, "Dma-buf Objects:", 16))
				at = COLUMNS;
			else if (len) {
				snprintf(why, wlen, "line %d: not \"Dma-buf Objects:\"", lineno);
				goto bad;
			}
		} else if (at == COLUMNS) {
			if (len < 5 || memcmp(s, "size", 4) || !memchr(s, '\t', len)) {
				snprintf(why, wlen, "line %d: not bufinfo's column names", lineno);
				goto bad;
			}
			at = BODY;
		} else if (len && s[0] == '\t') {
			if (!cur) {
				snprintf(why, wlen, "line %d: an indented line before any dma-buf",
					 lineno);
				goto bad;
			}
			if (len == 18 && !memcmp(s, "\tAttached Devices:", 18)) {
				in_attach = 1;
			} else if (in_attach) {
				if (cur->nattach < GDR_LIVE_ATTACH_MAX)
					snprintf(cur->attach[cur->nattach], sizeof(cur->attach[0]),
						 "%.*s", (int)(len - 1), s + 1);
				cur->nattach++;
			}
			/* else: a fence line (dma_resv_describe) */
		} else if (len && isdigit((unsigned char)s[0])) {
			struct gdr_live_dmabuf d;

			if (object_line(s, len, &d)) {
				snprintf(why, wlen, "line %d: not a dma-buf line", lineno);
				goto bad;
			}
			r = push(b, &d);
			if (r) {
				gdr_live_bufs_free(b);
				return r;
			}
			cur = &b->v[b->n - 1];
			in_attach = 0;
		} else if (len > 6 && !memcmp(s, "Total ", 6)) {
			in_attach = 0; /* "Total N devices attached", "Total N objects, M bytes" */
		} else if (len) {
			snprintf(why, wlen, "line %d: not a line bufinfo has", lineno);
			goto bad;
		}
		s += len + (nl ? 1 : 0);
	}
	if (at != BODY) {
		snprintf(why, wlen, "no \"Dma-buf Objects:\" table");
		goto bad;
	}
	return 0;
bad:
	gdr_live_bufs_free(b);
	return -EINVAL;
}
