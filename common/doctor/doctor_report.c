/* gdr_doctor: the list of checks, the verdict drawn from it, and its text and JSON forms. */
#include "config.h"

#include "doctor.h"
#include "text.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

void gdr_doctor_init(struct gdr_doctor *doc, const char *root)
{
	memset(doc, 0, sizeof(*doc));
	doc->root = root && *root ? root : "/";
	doc->dmabuf_usable_gpu = -1;
	doc->buffer_bytes = 8ull << 20;
}

const char *gdr_paths_name(unsigned int paths, char *buf, size_t len)
{
	static const char *const names[] = { "dmabuf", "peermem", "host", "bounce" };
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(names); i++)
		if (paths & (1u << i) && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						names[i]);
	return buf;
}

/* Both usable: NCCL takes DMA-BUF, but which path a given program used is then ambiguous. */
static void gdr_verdict_both_warning(struct gdr_doctor *doc)
{
	struct gdr_verdict v;
	struct gdr_check *c;

	gdr_doctor_verdict(doc, &v);
	if (!v.dmabuf || !v.peermem)
		return;
	c = gdr_doctor_add(doc, "paths", GDR_CHECK_WARN, 0);
	gdr_check_value(c, "DMA-BUF and nvidia-peermem both usable: NCCL prefers DMA-BUF, other "
			   "programs may take either, so the path in use is ambiguous");
	gdr_check_fix(c, "unload nvidia_peermem when everything here supports DMA-BUF "
			 "(rmmod nvidia_peermem), or check with gdr_doctor --nccl-log");
}

void gdr_doctor_run(struct gdr_doctor *doc)
{
	gdr_doctor_node_checks(doc);
	gdr_doctor_gpu_checks(doc);
	gdr_doctor_nic_checks(doc);
	gdr_doctor_pcie_checks(doc);
	gdr_doctor_nccl_env_checks(doc);
	gdr_verdict_both_warning(doc);
}

struct gdr_check *gdr_doctor_add(struct gdr_doctor *doc, const char *name,
				 enum gdr_check_status status, unsigned int blocks)
{
	struct gdr_check *c;

	if (doc->nchecks >= GDR_DOCTOR_MAX_CHECKS) {
		/* Keep the caller's writes harmless; the report says how many were dropped. */
		doc->dropped++;
		c = &doc->overflow;
	} else {
		c = &doc->checks[doc->nchecks++];
	}
	memset(c, 0, sizeof(*c));
	gdr_strlcpy(c->name, name, sizeof(c->name));
	c->status = status;
	c->blocks = blocks;
	return c;
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
	}
	return "?";
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

void gdr_doctor_verdict(const struct gdr_doctor *doc, struct gdr_verdict *v)
{
	const struct gdr_check *first = NULL;
	unsigned int blocked = 0;

	for (unsigned int i = 0; i < doc->nchecks; i++) {
		const struct gdr_check *c = &doc->checks[i];

		if (!c->blocks)
			continue;
		if (!first)
			first = c;
		blocked |= c->blocks;
	}
	v->dmabuf = !(blocked & GDR_BLOCK_DMABUF);
	v->peermem = !(blocked & GDR_BLOCK_PEERMEM);
	if (v->dmabuf && v->peermem)
		gdr_strlcpy(v->text, "both (DMA-BUF preferred)", sizeof(v->text));
	else if (v->dmabuf)
		gdr_strlcpy(v->text, "DMA-BUF available", sizeof(v->text));
	else if (v->peermem)
		gdr_strlcpy(v->text, "nvidia-peermem only", sizeof(v->text));
	else
		snprintf(v->text, sizeof(v->text), "no GPUDirect RDMA: %s: %s", first->name,
			 first->value);
}

int gdr_expect_parse(const char *s)
{
	if (!strcmp(s, "dmabuf"))
		return GDR_EXPECT_DMABUF;
	if (!strcmp(s, "peermem"))
		return GDR_EXPECT_PEERMEM;
	if (!strcmp(s, "any"))
		return GDR_EXPECT_ANY;
	return -EINVAL;
}

const char *gdr_expect_name(enum gdr_expect e)
{
	switch (e) {
	case GDR_EXPECT_DMABUF:
		return "dmabuf";
	case GDR_EXPECT_PEERMEM:
		return "peermem";
	case GDR_EXPECT_ANY:
		return "any";
	case GDR_EXPECT_NONE:
		break;
	}
	return "none";
}

int gdr_verdict_meets(const struct gdr_verdict *v, enum gdr_expect e)
{
	switch (e) {
	case GDR_EXPECT_DMABUF:
		return v->dmabuf;
	case GDR_EXPECT_PEERMEM:
		return v->peermem;
	case GDR_EXPECT_ANY:
		return v->dmabuf || v->peermem;
	case GDR_EXPECT_NONE:
		break;
	}
	return 1;
}

static const char *blocks_name(unsigned int b)
{
	switch (b) {
	case GDR_BLOCK_DMABUF:
		return "dmabuf";
	case GDR_BLOCK_PEERMEM:
		return "peermem";
	case GDR_BLOCK_BOTH:
		return "dmabuf,peermem";
	}
	return "";
}

/*
 * Values hold bytes read from /proc, sysfs and file names below --root: a
 * control byte there (an escape sequence, a carriage return) is printed as
 * \xHH, so that the report shows what is on the node instead of acting on
 * the terminal.
 */
static const char *safe(const char *s, char *buf, size_t len)
{
	return gdr_text_safe(s, buf, len);
}

void gdr_doctor_print(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v)
{
	char a[4 * sizeof(v->text) + 1], b[4 * sizeof(doc->checks[0].name) + 1];
	char paths[64];

	fprintf(out, "gdr_doctor: root %s\n", safe(doc->root, a, sizeof(a)));
	for (unsigned int i = 0; i < doc->nchecks; i++) {
		const struct gdr_check *c = &doc->checks[i];

		fprintf(out, "%-4s  %-22s %s", gdr_check_status_name(c->status),
			safe(c->name, b, sizeof(b)), safe(c->value, a, sizeof(a)));
		if (c->blocks)
			fprintf(out, " [blocks %s]", blocks_name(c->blocks));
		if (c->affects && c->status != GDR_CHECK_PASS)
			fprintf(out, " [slows %s]",
				gdr_paths_name(c->affects, paths, sizeof(paths)));
		fputc('\n', out);
		if (c->fix[0])
			fprintf(out, "      %-22s fix: %s\n", "", safe(c->fix, a, sizeof(a)));
	}
	if (doc->dropped)
		fprintf(out, "warn  %-22s %u more checks not shown (list full)\n", "report",
			doc->dropped);
	fprintf(out, "verdict: %s\n", safe(v->text, a, sizeof(a)));
}

void gdr_doctor_json(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v)
{
	char paths[64];

	fputs("{\n  \"root\": ", out);
	gdr_json_str(out, doc->root);
	fputs(",\n  \"checks\": [", out);
	for (unsigned int i = 0; i < doc->nchecks; i++) {
		const struct gdr_check *c = &doc->checks[i];

		fputs(i ? ",\n    {" : "\n    {", out);
		fputs("\"name\": ", out);
		gdr_json_str(out, c->name);
		fputs(", ", out);
		gdr_check_json_fields(out, c);
		fputs(", \"blocks\": [", out);
		if (c->blocks & GDR_BLOCK_DMABUF)
			fputs("\"dmabuf\"", out);
		if (c->blocks == GDR_BLOCK_BOTH)
			fputs(", ", out);
		if (c->blocks & GDR_BLOCK_PEERMEM)
			fputs("\"peermem\"", out);
		fputs("], \"affects\": [", out);
		for (unsigned int bit = 1, n = 0; bit <= GDR_PATH_BOUNCE; bit <<= 1)
			if (c->affects & bit) {
				fputs(n++ ? ", " : "", out);
				gdr_json_str(out, gdr_paths_name(bit, paths, sizeof(paths)));
			}
		fputs("]}", out);
	}
	fputs("\n  ],\n  \"verdict\": {\"dmabuf\": ", out);
	fputs(v->dmabuf ? "true" : "false", out);
	fputs(", \"peermem\": ", out);
	fputs(v->peermem ? "true" : "false", out);
	fputs(", \"text\": ", out);
	gdr_json_str(out, v->text);
	fputs("}\n}\n", out);
}
