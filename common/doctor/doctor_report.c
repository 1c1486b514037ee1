/* gdr_doctor: the list of checks, and its text and JSON forms (the verdict: doctor_verdict.c). */
#include "config.h"

#include "doctor.h"
#include "pcie_health.h"
#include "text.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Text output fits this many columns; longer values wrap under their column. */
#define COLS	  80
#define NAME_COL  22
#define VALUE_COL (4 + 2 + NAME_COL + 1)

void gdr_doctor_init(struct gdr_doctor *doc, const char *root)
{
	memset(doc, 0, sizeof(*doc));
	doc->root = root && *root ? root : "/";
	doc->dmabuf_usable_gpu = -1;
	doc->nvidia_gpus = -1;
	doc->buffer_bytes = 8ull << 20;
}

/* The PCIe health checks write their own list (common/topo); the report holds them in order. */
static void pcie_checks(struct gdr_doctor *doc)
{
	struct gdr_check_list *l = malloc(sizeof(*l));
	struct gdr_check *c;

	if (!l) {
		c = gdr_doctor_add(doc, "pcie", GDR_CHECK_NA, 0);
		gdr_check_value(c, "out of memory");
		return;
	}
	gdr_check_list_init(l, doc->root);
	l->buffer_bytes = doc->buffer_bytes;
	gdr_pcie_health_checks(l);
	for (unsigned int i = 0; i < l->nchecks; i++) {
		c = gdr_doctor_add(doc, l->checks[i].name, l->checks[i].status,
				   l->checks[i].blocks);
		*c = l->checks[i];
	}
	doc->dropped += l->dropped;
	free(l);
}

void gdr_doctor_run(struct gdr_doctor *doc)
{
	gdr_doctor_node_checks(doc);
	gdr_doctor_gpu_checks(doc);
	gdr_doctor_nic_checks(doc);
	pcie_checks(doc);
	gdr_doctor_nccl_env_checks(doc);
	gdr_doctor_finish(doc);
}

struct gdr_check *gdr_doctor_add(struct gdr_doctor *doc, const char *name,
				 enum gdr_check_status status, unsigned int blocks)
{
	return gdr_check_slot(doc->checks, GDR_CHECK_MAX, &doc->nchecks, &doc->dropped,
			      &doc->overflow, name, status, blocks);
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

void gdr_doctor_print_verdict(FILE *out, const struct gdr_verdict *v)
{
	char a[4 * sizeof(v->paths[0].line) + 1];
	char head[sizeof(v->scope) + 16];

	snprintf(head, sizeof(head), "verdict (%s): ", safe(v->scope, a, sizeof(a)));
	fputs(head, out);
	gdr_text_wrap(out, safe(v->text, a, sizeof(a)), (int)strlen(head), 4, COLS);
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(v->paths); i++) {
		const struct gdr_path_verdict *p = &v->paths[i];

		snprintf(head, sizeof(head), "  %s: ", gdr_path_title(p->path));
		fputs(head, out);
		gdr_text_wrap(out, safe(p->line, a, sizeof(a)), (int)strlen(head), 4, COLS);
	}
}

void gdr_doctor_print(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v)
{
	char a[4 * sizeof(doc->checks[0].value) + 64], b[4 * sizeof(doc->checks[0].name) + 1];
	char tags[96], paths[64], val[sizeof(a) + sizeof(tags)];

	/* What the report is about: this machine, or a tree read as a node's files. */
	if (strcmp(doc->root, "/"))
		snprintf(val, sizeof(val),
			 "the tree below %s%s%s%s: its files read as a node's, "
			 "its RDMA devices not probed",
			 doc->root, doc->host[0] ? " (host " : "", doc->host,
			 doc->host[0] ? ")" : "");
	else
		snprintf(val, sizeof(val), "this machine%s%s%s", doc->host[0] ? " (host " : "",
			 doc->host, doc->host[0] ? ")" : "");
	if (doc->topology_xml)
		snprintf(val + strlen(val), sizeof(val) - strlen(val),
			 "; GPU-NIC distances from %s", doc->topology_xml);
	fputs("gdr_doctor: ", out);
	gdr_text_wrap(out, safe(val, a, sizeof(a)), 12, 4, COLS);
	gdr_doctor_print_verdict(out, v);
	for (unsigned int i = 0; i < doc->nchecks; i++) {
		const struct gdr_check *c = &doc->checks[i];
		int col;

		tags[0] = '\0';
		if (c->blocks)
			snprintf(tags, sizeof(tags), " [blocks %s]",
				 gdr_paths_name(c->blocks, paths, sizeof(paths)));
		if (c->affects && c->status != GDR_CHECK_PASS)
			snprintf(tags + strlen(tags), sizeof(tags) - strlen(tags), " [slows %s]",
				 gdr_paths_name(c->affects, paths, sizeof(paths)));
		col = fprintf(out, "%-4s  %-*s ", gdr_check_status_name(c->status), NAME_COL,
			      safe(c->name, b, sizeof(b)));
		snprintf(val, sizeof(val), "%s%s", safe(c->value, a, sizeof(a)), tags);
		gdr_text_wrap(out, val, col, VALUE_COL, COLS);
		if (c->fix[0]) {
			snprintf(val, sizeof(val), "fix: %s", safe(c->fix, a, sizeof(a)));
			fprintf(out, "%*s", VALUE_COL, "");
			gdr_text_wrap(out, val, VALUE_COL, VALUE_COL + 5, COLS);
		}
	}
	if (doc->dropped)
		fprintf(out, "warn  %-*s %u more checks not shown (list full)\n", NAME_COL,
			"report", doc->dropped);
}

static void path_json(FILE *out, const struct gdr_doctor *doc, const struct gdr_path_verdict *p)
{
	fputs("{\"usable\": ", out);
	fputs(p->state == GDR_STATE_READY || p->state == GDR_STATE_POSSIBLE ? "true" : "false",
	      out);
	fputs(", \"state\": ", out);
	gdr_json_str(out, gdr_path_state_name(p->state));
	fputs(", \"gpu_side\": ", out);
	gdr_json_str(out, gdr_path_state_name(p->side[GDR_SIDE_GPU]));
	fputs(", \"gpu_evidence\": ", out);
	gdr_json_str(out, p->evidence[GDR_SIDE_GPU]);
	fputs(", \"nic_side\": ", out);
	gdr_json_str(out, gdr_path_state_name(p->side[GDR_SIDE_NIC]));
	fputs(", \"nic_evidence\": ", out);
	gdr_json_str(out, p->evidence[GDR_SIDE_NIC]);
	fputs(", \"blockers\": [", out);
	for (unsigned int i = 0; i < p->nblockers; i++) {
		const struct gdr_check *c = &doc->checks[p->blocker[i]];

		fputs(i ? ", {\"check\": " : "{\"check\": ", out);
		gdr_json_str(out, c->name);
		fputs(", \"side\": ", out);
		gdr_json_str(out, gdr_check_side_name(c->side));
		fputs(", \"brief\": ", out);
		gdr_json_str(out, c->brief[0] ? c->brief : c->value);
		fputs(", \"fix\": ", out);
		gdr_json_str(out, c->fix);
		fputc('}', out);
	}
	fputs("], \"text\": ", out);
	gdr_json_str(out, p->line);
	fputc('}', out);
}

void gdr_doctor_json(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v)
{
	fputs("{\n  \"root\": ", out);
	gdr_json_str(out, doc->root);
	fputs(",\n  \"scope\": {\"about\": ", out);
	gdr_json_str(out, strcmp(doc->root, "/") ? "root" : "this machine");
	fputs(", \"host\": ", out);
	if (doc->host[0])
		gdr_json_str(out, doc->host);
	else
		fputs("null", out);
	fputs(", \"probed\": ", out);
	fputs(strcmp(doc->root, "/") ? "false" : "true", out);
	fputs(", \"topology_xml\": ", out);
	if (doc->topology_xml)
		gdr_json_str(out, doc->topology_xml);
	else
		fputs("null", out);
	fputs(", \"text\": ", out);
	gdr_json_str(out, v->scope);
	fputs("},\n  \"checks\": [", out);
	for (unsigned int i = 0; i < doc->nchecks; i++) {
		const struct gdr_check *c = &doc->checks[i];

		fputs(i ? ",\n    {" : "\n    {", out);
		fputs("\"name\": ", out);
		gdr_json_str(out, c->name);
		fputs(", ", out);
		gdr_check_json_fields(out, c);
		if (c->brief[0]) {
			fputs(", \"brief\": ", out);
			gdr_json_str(out, c->brief);
		}
		if (c->blocks || c->proves) {
			fputs(", \"side\": ", out);
			gdr_json_str(out, gdr_check_side_name(c->side));
		}
		fputs(", \"blocks\": ", out);
		gdr_paths_json(out, c->blocks);
		if (c->proves) {
			fputs(", \"proves\": ", out);
			gdr_paths_json(out, c->proves);
		}
		fputs(", \"affects\": ", out);
		gdr_paths_json(out, c->affects);
		fputc('}', out);
	}
	fprintf(out, "\n  ],\n  \"dropped_checks\": %u,\n  \"verdict\": {\"text\": ", doc->dropped);
	gdr_json_str(out, v->text);
	fputs(", \"scope\": ", out);
	gdr_json_str(out, v->scope);
	fputs(", \"order\": [", out);
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(v->paths); i++) {
		fputs(i ? ", " : "", out);
		gdr_json_str(out, gdr_path_key(v->paths[i].path));
	}
	fputs("]", out);
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(v->paths); i++) {
		fputs(",\n    ", out);
		gdr_json_str(out, gdr_path_key(v->paths[i].path));
		fputs(": ", out);
		path_json(out, doc, &v->paths[i]);
	}
	fputs("}\n}\n", out);
}
