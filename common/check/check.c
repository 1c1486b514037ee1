/* The check record: adding one to a list, its words and its JSON members. */
#include "config.h"

#include "check.h"
#include "text.h"
#include "util.h"
#include "writer.h"

#include <stdarg.h>
#include <string.h>

void gdr_check_list_init(struct gdr_check_list *l, const char *root)
{
	memset(l, 0, sizeof(*l));
	l->root = root && *root ? root : "/";
	l->buffer_bytes = 8ull << 20;
}

struct gdr_check *gdr_check_slot(struct gdr_check *checks, unsigned int max, unsigned int *n,
				 unsigned int *dropped, struct gdr_check *overflow,
				 const char *name, enum gdr_check_status status,
				 unsigned int blocks)
{
	struct gdr_check *c;

	/* "n-a never blocks": a check that rules a path out says fail, whatever it was asked. */
	if (blocks)
		status = GDR_CHECK_FAIL;
	if (*n >= max) {
		/* Keep the caller's writes harmless; the report says how many were dropped. */
		(*dropped)++;
		c = overflow;
	} else {
		c = &checks[(*n)++];
	}
	memset(c, 0, sizeof(*c));
	gdr_strlcpy(c->name, name, sizeof(c->name));
	c->status = status;
	c->blocks = blocks;
	return c;
}

struct gdr_check *gdr_check_add(struct gdr_check_list *l, const char *name,
				enum gdr_check_status status, unsigned int blocks)
{
	return gdr_check_slot(l->checks, GDR_CHECK_MAX, &l->nchecks, &l->dropped, &l->overflow,
			      name, status, blocks);
}

void gdr_check_value(struct gdr_check *c, const char *fmt, ...)
{
	va_list ap;

	/* Values carry paths and file contents: shorten in the middle, never split a character. */
	va_start(ap, fmt);
	gdr_vfmt_short(c->value, sizeof(c->value), fmt, ap);
	va_end(ap);
}

void gdr_check_fix(struct gdr_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gdr_vfmt_short(c->fix, sizeof(c->fix), fmt, ap);
	va_end(ap);
}

void gdr_check_brief(struct gdr_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gdr_vfmt_short(c->brief, sizeof(c->brief), fmt, ap);
	va_end(ap);
}

const char *gdr_check_status_name(enum gdr_check_status s)
{
	switch (s) {
	case GDR_CHECK_PASS:
		return "pass";
	case GDR_CHECK_WARN:
		return "warn";
	case GDR_CHECK_FAIL:
		return "fail";
	case GDR_CHECK_NA:
		return "n-a";
	case GDR_CHECK_INFO:
		return "info";
	}
	return "?";
}

const char *gdr_check_side_name(enum gdr_check_side s)
{
	return s == GDR_SIDE_NIC ? "nic" : "gpu";
}

void gdr_check_json_fields(FILE *out, const struct gdr_check *c)
{
	fputs("\"status\": ", out);
	gdr_json_str(out, gdr_check_status_name(c->status));
	fputs(", \"value\": ", out);
	gdr_json_str(out, c->value);
	fputs(", \"fix\": ", out);
	gdr_json_str(out, c->fix);
}

static const char *const path_names[] = { "dmabuf", "peermem", "host", "bounce" };

const char *gdr_paths_name(unsigned int paths, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(path_names); i++)
		if (paths & (1u << i) && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						path_names[i]);
	return buf;
}

void gdr_paths_json(FILE *out, unsigned int paths)
{
	unsigned int n = 0;

	fputc('[', out);
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(path_names); i++)
		if (paths & (1u << i)) {
			fputs(n++ ? ", " : "", out);
			gdr_json_str(out, path_names[i]);
		}
	fputc(']', out);
}
