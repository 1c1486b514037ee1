/* The NCCL log reader's text and JSON reports (gdr_doctor --nccl-log). */
#include "config.h"

#include "doctor.h"
#include "nccl_log.h"
#include "text.h"
#include "util.h"

#include <stdarg.h>
#include <string.h>

static void print_line(FILE *out, const struct gdr_nccl_line *l)
{
	fprintf(out, "    %lu: %s\n", l->lineno, l->text);
}

static int is_plugin(const struct gdr_nccl_log *log)
{
	const char *t = log->chan_net[0] ? log->chan_net : log->network;

	return (t[0] && strcmp(t, "IB") && strcmp(t, "Socket")) ||
	       (!t[0] && log->all.count[NF_PLUGIN]);
}

static void guide_note(const struct gdr_nccl_log *log, char *buf, size_t len)
{
	gdr_nccl_guide_explain(log->all.guide_kind, log->vmajor, log->vminor, log->vpatch,
			       is_plugin(log), buf, len);
}

/* Columns of the text report: values start at LABEL_W and wrap before WRAP_W. */
#define LABEL_W 18
#define WRAP_W	80

/* text from column col on, wrapped before WRAP_W; continuation lines start at indent. */
static void print_wrap(FILE *out, size_t col, size_t indent, const char *text)
{
	gdr_text_wrap(out, text, (int)col, (int)indent, WRAP_W);
}

/* "  label:  text", the text wrapped under its column. */
static void print_wrapped(FILE *out, const char *label, const char *text)
{
	fprintf(out, "  %-*s", LABEL_W - 2, label);
	print_wrap(out, LABEL_W, LABEL_W, text);
}

static void print_wrappedf(FILE *out, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void print_wrappedf(FILE *out, const char *label, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	print_wrapped(out, label, buf);
}

static const char *proc_label(const struct gdr_nccl_proc *p)
{
	return p->id[0] ? p->id : p->launch[0] ? p->launch : "(no prefix)";
}

static const char *fix_text(const char *fix)
{
	return fix[0] ? fix : "none needed";
}

/* Each network error with NCCL's HINT lines after it, as one event. */
static void print_events(FILE *out, const struct gdr_nccl_log *log)
{
	char line[1024];

	if (!log->nevents && !log->hints_alone)
		return;
	fprintf(out, "  network errors: %u\n", log->nevents + log->events_dropped);
	for (unsigned int i = 0; i < log->nevents; i++) {
		const struct gdr_nccl_event *e = &log->events[i];
		char what[800];

		gdr_nccl_event_explain(e, what, sizeof(what));
		snprintf(line, sizeof(line), "%lu: %s", e->line.lineno, what);
		fputs("    ", out);
		print_wrap(out, 4, 6, line);
	}
	if (log->events_dropped)
		fprintf(out, "    (%u more not listed)\n", log->events_dropped);
	if (log->hints_alone) {
		snprintf(line, sizeof(line),
			 "%u HINT line%s after no network error of %s process (NCCL's hints "
			 "about a topology file, or the error's line is not in the log)",
			 log->hints_alone, log->hints_alone == 1 ? "" : "s",
			 log->hints_alone == 1 ? "its" : "their");
		fputs("    ", out);
		print_wrap(out, 4, 6, line);
	}
}

/* The answer first: the conclusion, its cause and fix, then one line per process. */
static void print_lead(FILE *out, const struct gdr_nccl_log *log)
{
	char buf[400], line[1024];

	fprintf(out, "  conclusion:     %s\n", gdr_nccl_path_name(log->path));
	print_wrapped(out, "cause:", log->cause);
	print_wrapped(out, "fix:", fix_text(log->fix));
	if (log->cause_line.lineno) {
		snprintf(buf, sizeof(buf), "%lu: %s", log->cause_line.lineno, log->cause_line.text);
		fprintf(out, "  deciding line:  %s\n", buf);
	}
	if (log->nprocs > 1 || (log->nprocs == 1 && log->path == GDR_NCCL_MIXED)) {
		fprintf(out, "  per process:\n");
		for (unsigned int i = 0; i < log->nprocs; i++) {
			const struct gdr_nccl_proc *p = &log->procs[i];
			const struct gdr_nccl_verdict *v = &p->verdict;
			const char *same = NULL;

			for (unsigned int j = 0; j < i && !same; j++)
				if (!strcmp(log->procs[j].verdict.fix, v->fix))
					same = proc_label(&log->procs[j]);

			line[0] = '\0';
			gdr_nccl_catf(line, sizeof(line), "%s: %s", gdr_nccl_path_name(v->path),
				      proc_label(p));
			if (p->dev >= 0)
				gdr_nccl_catf(line, sizeof(line), " [%d]", p->dev);
			if (v->cause_line.lineno)
				gdr_nccl_catf(line, sizeof(line), ", line %lu",
					      v->cause_line.lineno);
			if (!strcmp(v->fix, log->fix))
				gdr_nccl_catf(line, sizeof(line), ": %s; fix: as above", v->cause);
			else if (same)
				gdr_nccl_catf(line, sizeof(line), ": %s; fix: as for %s", v->cause,
					      same);
			else
				gdr_nccl_catf(line, sizeof(line), ": %s; fix: %s", v->cause,
					      fix_text(v->fix));
			fputs("    ", out);
			print_wrap(out, 4, 6, line);
		}
		if (log->procs_dropped)
			fprintf(out, "    (%u more not listed)\n", log->procs_dropped);
	}
	if (log->nwarns) {
		fprintf(out, "  NCCL WARN:      %u line%s\n", log->nwarns + log->warns_dropped,
			log->nwarns + log->warns_dropped == 1 ? "" : "s");
		for (unsigned int i = 0; i < log->nwarns; i++)
			print_line(out, &log->warns[i]);
		if (log->warns_dropped)
			fprintf(out, "    (%u more not listed)\n", log->warns_dropped);
	}
	print_events(out, log);
}

static void print_procs(FILE *out, const struct gdr_nccl_log *log)
{
	fprintf(out, "  channels by process:\n");
	for (unsigned int i = 0; i < log->nprocs; i++) {
		const struct gdr_nccl_proc *p = &log->procs[i];

		char line[512] = "";

		gdr_nccl_catf(line, sizeof(line), "%s", proc_label(p));
		if (p->id[0] && p->launch[0])
			gdr_nccl_catf(line, sizeof(line), " (%s)", p->launch);
		if (p->dev >= 0) {
			/* devs records devices 0..63 only: a first device past that is not in it.
			 */
			unsigned long long others =
			    p->dev < 64 ? p->devs & ~(1ULL << p->dev) : p->devs;

			gdr_nccl_catf(line, sizeof(line), " [%d%s]", p->dev, others ? ",..." : "");
		}
		gdr_nccl_catf(line, sizeof(line), ": %u network channels, %u with /GDRDMA%s",
			      p->chan_net, p->chan_gdr,
			      p->gpu_dmabuf ? ", GPU DMA-BUF available" : "");
		if (p->facts.version[0])
			gdr_nccl_catf(line, sizeof(line), ", NCCL %s", p->facts.version);
		gdr_nccl_catf(line, sizeof(line), "; %s", gdr_nccl_path_name(p->verdict.path));
		fputs("    ", out);
		print_wrap(out, 4, 6, line);
	}
	if (log->procs_dropped)
		fprintf(out, "    (%u more not listed)\n", log->procs_dropped);
}

void gdr_nccl_log_print(FILE *out, const struct gdr_nccl_log *log, const char *name)
{
	const unsigned int *n = log->all.count;
	char note[640];

	fprintf(out, "nccl-log: %s\n", name);
	print_lead(out, log);
	if (!gdr_nccl_log_is_nccl(log)) {
		print_wrapped(out, "because:", log->reason);
		return;
	}
	gdr_strlcpy(note, log->version[0] ? log->version : "not in the log", sizeof(note));
	for (unsigned int i = 1; i < log->nversions; i++)
		gdr_nccl_catf(note, sizeof(note), "%s%s", i == 1 ? " (also " : ", ",
			      log->versions[i]);
	gdr_nccl_catf(note, sizeof(note), "%s",
		      log->nversions > 1 ? ": several runs in one file)" : "");
	print_wrapped(out, "NCCL version:", note);
	fprintf(out, "  transport:      %s\n",
		log->chan_net[0]   ? log->chan_net
		: log->network[0]  ? log->network
		: n[NF_SOCKET_HCA] ? "Socket (its own GPU Direct RDMA lines)"
				   : "not in the log");
	if (log->plugin[0] || n[NF_PLUGIN])
		print_wrapped(out, "net plugin:", log->plugin[0] ? log->plugin : "yes");
	if (log->prefixed_lines || log->joined_lines)
		print_wrappedf(out, "pasted as:",
			       "%lu lines with launcher/collector prefixes, %lu joined onto the "
			       "line before",
			       log->prefixed_lines, log->joined_lines);
	fprintf(out, "  GDR per HCA:    %u enabled, %u disabled lines%s", n[NF_HCA_GDR_ON],
		n[NF_HCA_GDR_OFF], n[NF_HCA_OTHER_NET] ? " (more for a transport not in use)" : "");
	if (n[NF_SOCKET_HCA])
		fprintf(out, "; %u NET/Socket (interfaces)", n[NF_SOCKET_HCA]);
	fputc('\n', out);
	fprintf(out, "  GDR per GPU:    %u enabled, %u disabled lines%s%s%s\n", n[NF_PAIR_GDR_ON],
		n[NF_PAIR_GDR_OFF], log->distance[0] ? " (last: distance " : "", log->distance,
		log->distance[0] ? ")" : "");
	if (log->gdr_level[0])
		fprintf(out, "  GDR level:      NCCL_NET_GDR_LEVEL=%s\n", log->gdr_level);
	if (n[NF_NIC_DISTANCE])
		print_wrappedf(out, "NIC distance:", "%s (NCCL 2.4's class per NIC, line %lu)",
			       log->all.nic_dist, log->all.first[NF_NIC_DISTANCE].lineno);
	if (n[NF_DATA_DIRECT])
		print_wrappedf(out, "Data Direct:", "detected, line %lu%s",
			       log->all.first[NF_DATA_DIRECT].lineno,
			       n[NF_ENV_DATA_DIRECT_OFF] ? "; NCCL_IB_DATA_DIRECT=0 turns it off"
							 : "");
	if (n[NF_MLOPART])
		print_wrappedf(out, "MLOPart:", "a GPU in MLOPart mode, line %lu; %s",
			       log->all.first[NF_MLOPART].lineno,
			       n[NF_ENV_MLOPART_ON] ? "NCCL_NET_GDR_MLOPART=1 set"
						    : "NCCL_NET_GDR_MLOPART not set to 1");
	fprintf(out, "  DMA-BUF:        %s\n",
		n[NF_GPU_DMABUF] ? "available on the GPU (a capability, not the path in use)"
				 : "no \"DMA-BUF is available\" line");
	if (n[NF_PLUGIN_DMABUF] || n[NF_PLUGIN_NO_DMABUF] || n[NF_PLUGIN_PEERMEM] ||
	    n[NF_PLUGIN_GDR_OFF])
		print_wrappedf(out, "plugin says:", "NIC DMA-BUF %s, NIC peermem %s%s",
			       n[NF_PLUGIN_DMABUF]	? "yes"
			       : n[NF_PLUGIN_NO_DMABUF] ? "no"
							: "not said",
			       n[NF_PLUGIN_PEERMEM] ? "yes" : "not said",
			       n[NF_PLUGIN_GDR_OFF] ? ", GDR disabled by the plugin" : "");
	fprintf(out, "  channels:       %u over the network, %u with /GDRDMA",
		n[NF_CHAN_GDR] + n[NF_CHAN_NOGDR], n[NF_CHAN_GDR]);
	if (n[NF_CHAN_GDR_PCI])
		fprintf(out, ", %u of them (PCI)", n[NF_CHAN_GDR_PCI]);
	fputc('\n', out);
	if (n[NF_GUIDE_LINE]) {
		guide_note(log, note, sizeof(note));
		print_wrappedf(out, "not NCCL's:", "line %lu: %s",
			       log->all.first[NF_GUIDE_LINE].lineno, note);
	}
	if (log->nprocs)
		print_procs(out, log);
	print_wrapped(out, "because:", log->reason);
	if (log->ncited) {
		fprintf(out, "  deciding lines:\n");
		for (unsigned int i = 0; i < log->ncited; i++)
			print_line(out, &log->cited_line[i]);
	}
}

static void json_line(FILE *out, const struct gdr_nccl_line *l)
{
	if (!l->lineno) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"line\": %lu, \"text\": ", l->lineno);
	gdr_json_str(out, l->text);
	fputc('}', out);
}

/* '<sep>"cause": ...<sep>"fix": ...<sep>"cause_line": ...' */
static void json_cause(FILE *out, const char *sep, const struct gdr_nccl_line *l, const char *cause,
		       const char *fix)
{
	fprintf(out, "%s\"cause\": ", sep);
	gdr_json_str(out, cause);
	fprintf(out, "%s\"fix\": ", sep);
	gdr_json_str(out, fix);
	fprintf(out, "%s\"cause_line\": ", sep);
	json_line(out, l);
}

static void json_procs(FILE *out, const struct gdr_nccl_log *log)
{
	fputs("],\n  \"processes\": [", out);
	for (unsigned int i = 0; i < log->nprocs; i++) {
		const struct gdr_nccl_proc *p = &log->procs[i];

		fputs(i ? ", {\"id\": " : "{\"id\": ", out);
		gdr_json_str(out, p->id);
		fputs(", \"launcher\": ", out);
		gdr_json_str(out, p->launch);
		fprintf(out,
			", \"dev\": %d, \"net_channels\": %u, \"gdrdma_channels\": %u, "
			"\"gpu_dmabuf\": %s, \"version\": ",
			p->dev, p->chan_net, p->chan_gdr, p->gpu_dmabuf ? "true" : "false");
		gdr_json_str(out, p->facts.version);
		fputs(", \"conclusion\": ", out);
		gdr_json_str(out, gdr_nccl_path_name(p->verdict.path));
		fputs(", \"reason\": ", out);
		gdr_json_str(out, p->verdict.reason);
		json_cause(out, ", ", &p->verdict.cause_line, p->verdict.cause, p->verdict.fix);
		fputc('}', out);
	}
}

static void json_events(FILE *out, const struct gdr_nccl_log *log)
{
	char what[800];

	fputs(",\n  \"network_errors\": [", out);
	for (unsigned int i = 0; i < log->nevents; i++) {
		const struct gdr_nccl_event *e = &log->events[i];

		fprintf(out, "%s{\"line\": %lu, \"text\": ", i ? ", " : "", e->line.lineno);
		gdr_json_str(out, e->line.text);
		fputs(", \"error\": ", out);
		gdr_json_str(out, e->what);
		fprintf(out,
			", \"repeats\": %u, \"hint_lines\": %u, \"hint_first\": %lu, "
			"\"hint_last\": %lu, \"explanation\": ",
			e->repeats, e->hints, e->hint_first, e->hint_last);
		gdr_nccl_event_explain(e, what, sizeof(what));
		gdr_json_str(out, what);
		fputc('}', out);
	}
	fprintf(out, "],\n  \"network_errors_dropped\": %u,\n  \"hint_lines_alone\": %u",
		log->events_dropped, log->hints_alone);
}

void gdr_nccl_log_json(FILE *out, const struct gdr_nccl_log *log, const char *name)
{
	char note[640];

	fputs("{\n  \"file\": ", out);
	gdr_json_str(out, name);
	fprintf(out, ",\n  \"nccl_log\": %s,\n  \"lines\": %lu,\n  \"version\": ",
		gdr_nccl_log_is_nccl(log) ? "true" : "false", log->lines);
	gdr_json_str(out, log->version);
	fputs(",\n  \"versions\": [", out);
	for (unsigned int i = 0; i < log->nversions; i++) {
		fputs(i ? ", " : "", out);
		gdr_json_str(out, log->versions[i]);
	}
	fputs("],\n  \"transport\": ", out);
	gdr_json_str(out, log->chan_net[0] ? log->chan_net : log->network);
	fputs(",\n  \"plugin\": ", out);
	gdr_json_str(out, log->plugin);
	fputs(",\n  \"gdr_level\": ", out);
	gdr_json_str(out, log->gdr_level);
	fputs(",\n  \"nic_distance\": ", out);
	gdr_json_str(out, log->all.nic_dist);
	fprintf(out, ",\n  \"prefixed_lines\": %lu,\n  \"joined_lines\": %lu", log->prefixed_lines,
		log->joined_lines);
	fputs(",\n  \"counts\": {", out);
	for (int f = 0; f < NF__COUNT; f++)
		fprintf(out, "%s\"%s\": %u", f ? ", " : "", gdr_nccl_fact_name(f),
			log->all.count[f]);
	fputs("},\n  \"not_nccl_lines\": [", out);
	if (log->all.count[NF_GUIDE_LINE]) {
		guide_note(log, note, sizeof(note));
		fprintf(out, "{\"line\": %lu, \"text\": ", log->all.first[NF_GUIDE_LINE].lineno);
		gdr_json_str(out, log->all.first[NF_GUIDE_LINE].text);
		fputs(", \"explanation\": ", out);
		gdr_json_str(out, note);
		fputc('}', out);
	}
	json_procs(out, log);
	fprintf(out, "],\n  \"processes_decided\": %u,\n  \"conclusion\": ", log->procs_decided);
	gdr_json_str(out, gdr_nccl_path_name(log->path));
	fputs(",\n  \"reason\": ", out);
	gdr_json_str(out, log->reason);
	json_cause(out, ",\n  ", &log->cause_line, log->cause, log->fix);
	fputs(",\n  \"nccl_warn_lines\": [", out);
	for (unsigned int i = 0; i < log->nwarns; i++) {
		fputs(i ? ", " : "", out);
		json_line(out, &log->warns[i]);
	}
	fprintf(out, "],\n  \"nccl_warn_lines_dropped\": %u", log->warns_dropped);
	json_events(out, log);
	fputs(",\n  \"deciding_lines\": [", out);
	for (unsigned int i = 0; i < log->ncited; i++) {
		const struct gdr_nccl_line *l = &log->cited_line[i];

		fprintf(out, "%s{\"line\": %lu, \"fact\": \"%s\", \"text\": ", i ? ", " : "",
			l->lineno, gdr_nccl_fact_name(log->cited[i]));
		gdr_json_str(out, l->text);
		fputc('}', out);
	}
	fputs("]\n}\n", out);
}

void gdr_nccl_log_quiet(FILE *out, const struct gdr_nccl_log *log, const char *name)
{
	char buf[1024];

	/* Wrapped to 80 columns, continuation lines indented; --json has it on one line. */
	snprintf(buf, sizeof(buf), "%s: %s (%s)", name, gdr_nccl_path_name(log->path), log->cause);
	gdr_text_wrap(out, buf, 0, 4, WRAP_W);
}
