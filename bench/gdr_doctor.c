/* gdr_doctor: which GPUDirect RDMA path this node can use, or which one NCCL used. */
#include "config.h"

#include "cli.h"
#include "copy_measure.h"
#include "doctor.h"
#include "doctor_vs_nccl.h"
#include "exit_status.h"
#include "input.h"
#include "live.h"
#include "nccl_log.h"
#include "options.h"
#include "prom.h"
#include "text.h"
#include "topo.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The table of every tool (exit_status.h) as gdr_doctor reads it. */
enum { EXIT_MET = GDR_EXIT_OK, EXIT_NOT_MET = GDR_EXIT_FAIL, EXIT_USAGE = GDR_EXIT_USAGE };

struct doctor_opts {
	const char *root;
	const char *json;
	const char *nfd;  /* --nfd: the verdict as NFD feature lines */
	const char *prom; /* --prom: checks and paths as Prometheus metrics */
	const char *nccl_log;
	enum gdr_expect expect;
	int quiet;
	const char *topology_xml;
	uint64_t buffer_bytes; /* 0 = the default */
	int measure;	       /* --measure: copy rates per GPU (copy_measure.h) */
	int live;	       /* --live: which path is in use now (live.h) */
	const char *rdma_mr;   /* --rdma-mr: saved `rdma -j res show mr` output */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: gdr_doctor [options]\n"
		"       gdr_doctor --nccl-log FILE|- [--expect PATH] [--json FILE|-]\n"
		"       gdr_doctor --nccl-log FILE|- --root DIR|--topology-xml FILE [options]\n"
		"       gdr_doctor --live [--rdma-mr FILE|-] [--root DIR] [--expect PATH]\n"
		"                  [--json FILE|-] [--nfd FILE|-] [--prom FILE|-] [--quiet]\n"
		"\n"
		"Says which GPUDirect RDMA path this node can use (DMA-BUF, nvidia-peermem,\n"
		"both, or none and why), or, with --nccl-log, which path NCCL used according\n"
		"to an NCCL_DEBUG=INFO log, or, with --live, which path the node and each of\n"
		"its processes use right now.\n"
		"\n"
		"Options:\n"
		"  -r, --root DIR        read /proc, /sys, /boot and /usr/lib below DIR\n"
		"                        (default /); RDMA devices are then read from\n"
		"                        DIR/sys/class/infiniband and not probed, the memlock\n"
		"                        limit from DIR/proc/self/limits\n"
		"  -e, --expect PATH     dmabuf | peermem | any: exit 0 when PATH is usable (or,\n"
		"                        with --nccl-log, was used), 1 when not\n"
		"  -j, --json FILE|-     also write the report as JSON to FILE (- = stdout, and\n"
		"                        then nothing else goes to stdout, even with --quiet);\n"
		"                        a regular FILE is replaced whole only when the run has\n"
		"                        its report, never truncated by a failed run\n"
		"      --nfd FILE|-      also write the verdict as node-feature-discovery\n"
		"                        labels (gdrperf.dmabuf=ready|possible|blocked, ...;\n"
		"                        docs/cluster-outputs.md), replaced whole like --json\n"
		"      --prom FILE|-     also write each check and path state as Prometheus\n"
		"                        metrics (textfile collector format), replaced whole\n"
		"      --nccl-log FILE|- read an NCCL_DEBUG=INFO log (- = stdin) instead of\n"
		"                        checking the node; with --root or --topology-xml, check\n"
		"                        the node too and say whether NCCL did what the node\n"
		"                        predicts (checks nccl-log and nccl-vs-node; --expect\n"
		"                        then judges the path the log shows); FILE is a regular\n"
		"                        file or a pipe, read up to 4 GiB\n"
		"      --topology-xml FILE  hwloc XML export for the GPU-NIC distance checks\n"
		"                        (NCCL_NET_GDR_LEVEL); default: this machine when\n"
		"                        --root is /; a FILE that is not a readable regular\n"
		"                        hwloc XML file is a usage error\n"
		"      --buffer-size SIZE  GPU memory one run registers per GPU, for the BAR1\n"
		"                        check (default 8M, the largest size of gdr_write_bw -a;\n"
		"                        K/M/G suffixes)\n"
		"      --measure         measure pinned host<->GPU copy rates per GPU instead\n"
		"                        (CE and SM, bounce chunks and 64 MiB, a few seconds a\n"
		"                        GPU; exit 1 when no GPU was measured; docs/bounce.md)\n"
		"      --live            which GPUDirect path is in use now: dma-bufs of the\n"
		"                        NVIDIA exporter attached to devices (debugfs\n"
		"                        dma_buf/bufinfo), nvidia-peermem's live MRs\n"
		"                        (memory_peers, else its module refcnt), the RDMA MRs\n"
		"                        of each process (rdma -j res show mr) with its NCCL\n"
		"                        and an estimate of its DMA-BUF bytes (MR bytes minus\n"
		"                        VmPin); each source it cannot read is named with what\n"
		"                        it would add and how to get it. --expect dmabuf then\n"
		"                        exits 1 when anything uses peer memory, peermem when\n"
		"                        anything uses DMA-BUF, 3 when that is not known\n"
		"      --rdma-mr FILE|-  with --live: read saved `rdma -j res show mr` output\n"
		"                        (- = stdin) instead of running rdma on PATH; a --root\n"
		"                        other than / has no RDMA MRs without it\n"
		"      --quiet           print only the verdict and its path lines (or the\n"
		"                        log's conclusion and its cause)\n"
		"  -h, --help            this text\n"
		"  -V, --version         program version\n"
		"A short letter means the same in every gdrperf tool: -q, -t, -b, -l and -m\n"
		"are the bench tools' (QPs, tx depth, bidirectional, post list, MTU), so\n"
		"the options above without one take their long name only.\n"
		"\n"
		"The report names what it is about (this machine, or the tree below --root,\n"
		"with its host name) and leads with the verdict: one line, then one line per\n"
		"path (DMA-BUF, nvidia-peermem), best first, with its GPU side and NIC side\n"
		"(ready, not probed, blocked, not needed) and every check that blocks it.\n"
		"The verdict line is \"DMA-BUF available\", \"nvidia-peermem only\", \"both\n"
		"(DMA-BUF preferred)\", \"PATH possible, not probed\", \"no GPUDirect RDMA:\n"
		"no NVIDIA GPU\" or \"no GPUDirect RDMA: <the best path's first blocker>\".\n"
		"Each check prints pass, warn, fail, n-a (not known here) or info (nothing to\n"
		"do), the value seen, and the fix; a check that rules a path out is fail and\n"
		"says [blocks dmabuf|peermem] (n-a never blocks); a PCIe finding that only\n"
		"slows paths down says [slows dmabuf,peermem,host,bounce]. PCIe checks run\n"
		"per GPU-NIC pair (gpuN-NIC.acs, .iommu, .link, .mps, .ro, .ceiling), per\n"
		"GPU (gpuN.bar1, GPUs in PCI bus order; BAR1 from sysfs, else NVML) and per\n"
		"NIC (NIC.fw); see docs/pcie-health.md. With --nccl-log and a node,\n"
		"nccl-vs-node warns instead of comparing when the log's hosts, or the GPU\n"
		"bus ids and RDMA NICs it names, are not the node's. Text fits 80 columns;\n"
		"--json carries everything.\n"
		"NCCL_* variables are read from this process's environment.\n"
		"Environment: GDRPERF_LIBCUDA names the libcuda.so.1 to load, GDRPERF_LIBNVML\n"
		"the libnvidia-ml.so.1 (test hooks).\n"
		"\n"
		"Files below --root are read only when they are regular files (a FIFO or a\n"
		"device there counts as unreadable and is named so); control bytes read from\n"
		"them are printed as \\xHH.\n"
		"\n"
		"Exit status (docs/exit-status.md): 0 the expected path is usable (always 0\n"
		"without --expect, unless the --nccl-log input is not an NCCL log), 1 it is\n"
		"not, 2 usage or input error (an option without its value, an empty file name,\n"
		"a --root that is not a directory, a bad --topology-xml) or a file that cannot\n"
		"be opened, 3 (--live --expect) the source that decides could not be read.\n");
}

/*
 * Paths that are wrong are usage errors now, not verdicts later: a --root
 * that does not exist would otherwise read as "no NVIDIA driver loaded".
 */
static int check_paths(const struct doctor_opts *o)
{
	static const struct {
		const char *opt;
		size_t off;
	} paths[] = {
		{ "--root", offsetof(struct doctor_opts, root) },
		{ "--json", offsetof(struct doctor_opts, json) },
		{ "--nfd", offsetof(struct doctor_opts, nfd) },
		{ "--prom", offsetof(struct doctor_opts, prom) },
		{ "--nccl-log", offsetof(struct doctor_opts, nccl_log) },
		{ "--topology-xml", offsetof(struct doctor_opts, topology_xml) },
		{ "--rdma-mr", offsetof(struct doctor_opts, rdma_mr) },
	};
	struct stat st;

	for (size_t i = 0; i < GDR_ARRAY_SIZE(paths); i++) {
		const char *v = *(const char *const *)((const char *)o + paths[i].off);

		if (v && !*v) {
			gdr_err("%s: empty file name", paths[i].opt);
			return -EINVAL;
		}
	}
	if (!o->root)
		return 0;
	if (stat(o->root, &st) < 0) {
		gdr_err("--root %s: %s", o->root, strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		gdr_err("--root %s: not a directory", o->root);
		return -EINVAL;
	}
	return 0;
}

/*
 * An explicit --topology-xml that cannot be read or parsed is an error, not a
 * distance check silently skipped.
 */
static int check_topology_xml(const struct doctor_opts *o)
{
	struct gdr_topo *t;
	char why[512];

	if (!o->topology_xml)
		return 0;
	if (gdr_topo_load(&t, o->topology_xml, o->root, why, sizeof(why))) {
		gdr_err("--topology-xml %s", why);
		return -EINVAL;
	}
	gdr_topo_free(t);
	return 0;
}

/* --live reads the node as it is now: the options of the other modes do not go with it. */
static int check_live(const struct doctor_opts *o)
{
	const char *other = o->nccl_log	      ? "--nccl-log"
			    : o->measure      ? "--measure"
			    : o->topology_xml ? "--topology-xml"
			    : o->buffer_bytes ? "--buffer-size"
					      : NULL;

	if (!o->live) {
		if (o->rdma_mr) {
			gdr_err("--rdma-mr: only with --live");
			return -EINVAL;
		}
		return 0;
	}
	if (other) {
		gdr_err("--live: not with %s (it reads what is in use now)", other);
		return -EINVAL;
	}
	if (o->expect == GDR_EXPECT_ANY) {
		gdr_err("--live --expect any: not a gate (dmabuf: fail when anything uses peer "
			"memory; peermem: fail when anything uses DMA-BUF)");
		return -EINVAL;
	}
	return 0;
}

enum {
	OPT_NCCL_LOG = 256,
	OPT_QUIET,
	OPT_TOPOLOGY_XML,
	OPT_BUFFER_SIZE,
	OPT_MEASURE,
	OPT_NFD,
	OPT_PROM,
	OPT_LIVE,
	OPT_RDMA_MR
};

static int parse_args(int argc, char **argv, struct doctor_opts *o)
{
	static const struct option longopts[] = {
		{ .name = "root", .has_arg = 1, .val = 'r' },
		{ .name = "expect", .has_arg = 1, .val = 'e' },
		{ .name = "json", .has_arg = 1, .val = 'j' },
		/* No short letter: -l, -q, -t and -b are the bench tools' (cli.h). */
		{ .name = "nccl-log", .has_arg = 1, .val = OPT_NCCL_LOG },
		{ .name = "quiet", .has_arg = 0, .val = OPT_QUIET },
		{ .name = "topology-xml", .has_arg = 1, .val = OPT_TOPOLOGY_XML },
		{ .name = "buffer-size", .has_arg = 1, .val = OPT_BUFFER_SIZE },
		{ .name = "measure", .has_arg = 0, .val = OPT_MEASURE },
		{ .name = "nfd", .has_arg = 1, .val = OPT_NFD },
		{ .name = "prom", .has_arg = 1, .val = OPT_PROM },
		{ .name = "live", .has_arg = 0, .val = OPT_LIVE },
		{ .name = "rdma-mr", .has_arg = 1, .val = OPT_RDMA_MR },
		{ .name = "help", .has_arg = 0, .val = 'h' },
		{ .name = "version", .has_arg = 0, .val = 'V' },
		{}
	};
	int c, e, on_stdout;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:e:j:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->root = optarg;
			break;
		case 'e':
			e = gdr_expect_parse(optarg);
			if (e < 0) {
				gdr_err("--expect %s: not one of dmabuf, peermem, any", optarg);
				return -EINVAL;
			}
			o->expect = (enum gdr_expect)e;
			break;
		case 'j':
			o->json = optarg;
			break;
		case OPT_NCCL_LOG:
			o->nccl_log = optarg;
			break;
		case OPT_QUIET:
			o->quiet = 1;
			break;
		case OPT_TOPOLOGY_XML:
			o->topology_xml = optarg;
			break;
		case OPT_BUFFER_SIZE:
			if (gdr_parse_size(optarg, &o->buffer_bytes) || o->buffer_bytes == 0) {
				gdr_err("--buffer-size %s: not a size (e.g. 8M, 1G)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_MEASURE:
			o->measure = 1;
			break;
		case OPT_NFD:
			o->nfd = optarg;
			break;
		case OPT_PROM:
			o->prom = optarg;
			break;
		case OPT_LIVE:
			o->live = 1;
			break;
		case OPT_RDMA_MR:
			o->rdma_mr = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_MET);
		case 'V':
			gdr_cli_version(stdout);
			exit(EXIT_MET);
		case ':':
			gdr_cli_no_value(argv);
			return -EINVAL;
		default:
			return gdr_cli_unknown(argc, argv, longopts, NULL);
		}
	}
	if (optind < argc) {
		gdr_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (check_live(o))
		return -EINVAL;
	if ((o->nfd || o->prom) && (o->measure || (o->nccl_log && !o->root && !o->topology_xml))) {
		gdr_err("%s: the node's verdict is what it writes: not with %s",
			o->nfd ? "--nfd" : "--prom",
			o->measure ? "--measure"
				   : "--nccl-log alone (add --root or --topology-xml)");
		return -EINVAL;
	}
	on_stdout = (o->json && gdr_out_fd(o->json) == 1) + (o->nfd && gdr_out_fd(o->nfd) == 1) +
		    (o->prom && gdr_out_fd(o->prom) == 1);
	if (on_stdout > 1) {
		gdr_err("only one of --json, --nfd and --prom can go to stdout");
		return -EINVAL;
	}
	return check_paths(o);
}

/* A bad --json, --nfd or --prom path fails before any work, and creates nothing. */
static int check_out(const char *path, const char *what)
{
	char why[512];

	if (path && gdr_out_check(path, why, sizeof(why))) {
		gdr_err("cannot write the %s: %s", what, why);
		return -1;
	}
	return 0;
}

/* A file on stdout is all that goes there, even with --quiet. */
static int json_on_stdout(const struct doctor_opts *o)
{
	return (o->json && gdr_out_fd(o->json) == 1) || (o->nfd && gdr_out_fd(o->nfd) == 1) ||
	       (o->prom && gdr_out_fd(o->prom) == 1);
}

/*
 * The report is built in memory and written whole (gdr_out_replace): a run
 * that fails leaves an earlier report as it was.
 */
static int write_out(const char *path, const char *what, FILE *mem, char **buf, size_t *len)
{
	char why[512];
	int r = gdr_out_replace_mem(path, mem, buf, len, why, sizeof(why));

	if (r)
		gdr_err("cannot write the %s: %s", what, why);
	return r;
}

/* --nfd and --prom, each written whole; 0, or -1 when either failed (and said why). */
static int write_cluster(const struct doctor_opts *o, const struct gdr_doctor *doc,
			 const struct gdr_verdict *v)
{
	struct gdr_prom p;
	char why[512];
	int r = 0;

	fflush(stdout);
	if (o->nfd) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);

		if (mem)
			gdr_doctor_nfd(mem, doc, v);
		if (write_out(o->nfd, "NFD feature file", mem, &buf, &len))
			r = -1;
	}
	if (o->prom) {
		if (gdr_prom_init(&p) == 0)
			gdr_doctor_prom(&p, doc, v);
		if (gdr_prom_write(&p, o->prom, why, sizeof(why))) {
			gdr_err("cannot write the Prometheus metrics: %s", why);
			r = -1;
		}
		gdr_prom_free(&p);
	}
	return r;
}

/*
 * A log is a regular file or a pipe (a FIFO, `<(zcat log.gz)`); a directory,
 * a device (/dev/zero never ends) or a socket is refused before it is opened.
 */
static int log_readable(const char *path)
{
	struct stat st;
	char why[96];

	if (stat(path, &st) < 0) {
		gdr_err("%s: cannot read the NCCL log: %s", path, strerror(errno));
		return 0;
	}
	if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))
		return 1;
	gdr_err(
	    "%s: cannot read the NCCL log: %s (give a regular file, a pipe or -)", path,
	    gdr_input_strerror(path, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL, why, sizeof(why)));
	return 0;
}

/* Read --nccl-log; NULL (and the error said) when it cannot be read. */
static struct gdr_nccl_log *read_log(const struct doctor_opts *o, const char *name)
{
	struct gdr_nccl_log *log = malloc(sizeof(*log));
	FILE *in;
	int rc;

	if (!log) {
		gdr_err("out of memory");
		return NULL;
	}
	if (strcmp(o->nccl_log, "-") && !log_readable(o->nccl_log)) {
		free(log);
		return NULL;
	}
	in = strcmp(o->nccl_log, "-") ? fopen(o->nccl_log, "r") : stdin;
	if (!in) {
		gdr_err("%s: cannot read the NCCL log: %s", o->nccl_log, strerror(errno));
		free(log);
		return NULL;
	}
	rc = gdr_nccl_log_read(in, log);
	if (in != stdin)
		fclose(in);
	if (rc == -EFBIG) {
		gdr_err("%s: more than %llu GiB: not read whole, no conclusion drawn", name,
			(unsigned long long)(GDR_NCCL_MAX_BYTES >> 30));
		free(log);
		return NULL;
	}
	if (rc) {
		gdr_err("%s: read error: %s", name, strerror(-rc));
		free(log);
		return NULL;
	}
	return log;
}

static int log_meets(const struct gdr_nccl_log *log, enum gdr_expect e)
{
	switch (e) {
	case GDR_EXPECT_DMABUF:
		return log->path == GDR_NCCL_DMABUF;
	case GDR_EXPECT_PEERMEM:
		return log->path == GDR_NCCL_PEERMEM;
	case GDR_EXPECT_ANY:
		return log->path == GDR_NCCL_DMABUF || log->path == GDR_NCCL_PEERMEM;
	default:
		return gdr_nccl_log_is_nccl(log);
	}
}

static int run_nccl_log(const struct doctor_opts *o)
{
	const char *name = strcmp(o->nccl_log, "-") ? o->nccl_log : "(stdin)";
	struct gdr_nccl_log *log;
	FILE *js;
	int met;

	if (check_out(o->json, "JSON report"))
		return EXIT_USAGE;
	log = read_log(o, name);
	if (!log)
		return EXIT_USAGE;
	met = log_meets(log, o->expect);
	if (json_on_stdout(o))
		; /* the JSON below is the whole output */
	else if (o->quiet)
		gdr_nccl_log_quiet(stdout, log, name);
	else
		gdr_nccl_log_print(stdout, log, name);
	if (o->json) {
		char *buf = NULL;
		size_t len = 0;

		fflush(stdout);
		js = open_memstream(&buf, &len);
		if (js)
			gdr_nccl_log_json(js, log, name);
		if (write_out(o->json, "JSON report", js, &buf, &len)) {
			free(log);
			return EXIT_USAGE;
		}
	}
	free(log);
	return met ? EXIT_MET : EXIT_NOT_MET;
}

/* The node's checks; with log, also whether NCCL did what they predict. */
static int run_node(const struct doctor_opts *o, const struct gdr_nccl_log *log, const char *name)
{
	struct gdr_doctor *doc;
	struct gdr_verdict v;
	FILE *js;
	int met;

	/* A bad --json path fails before the checks run, and creates nothing. */
	if (check_out(o->json, "JSON report") || check_out(o->nfd, "NFD feature file") ||
	    check_out(o->prom, "Prometheus metrics"))
		return EXIT_USAGE;
	doc = malloc(sizeof(*doc));
	if (!doc) {
		gdr_err("out of memory");
		return EXIT_USAGE;
	}
	if (check_topology_xml(o)) {
		free(doc);
		return EXIT_USAGE;
	}
	gdr_doctor_init(doc, o->root);
	doc->topology_xml = o->topology_xml;
	if (o->buffer_bytes)
		doc->buffer_bytes = o->buffer_bytes;
	gdr_doctor_run(doc);
	gdr_doctor_verdict(doc, &v);
	met = gdr_verdict_meets(&v, o->expect);
	if (log) {
		gdr_doctor_vs_nccl(doc, &v, log, name);
		met = log_meets(log, o->expect);
	}
	if (json_on_stdout(o)) {
		; /* the JSON below is the whole output */
	} else if (o->quiet) {
		for (unsigned int i = 0; log && i < doc->nchecks; i++)
			if (!strcmp(doc->checks[i].name, "nccl-vs-node")) {
				fputs("nccl-vs-node: ", stdout);
				gdr_text_wrap(stdout, doc->checks[i].value, 14, 4, 80);
				if (doc->checks[i].fix[0]) {
					fputs("  fix: ", stdout);
					gdr_text_wrap(stdout, doc->checks[i].fix, 7, 4, 80);
				}
			}
		gdr_doctor_print_verdict(stdout, &v);
	} else {
		if (log)
			gdr_nccl_log_print(stdout, log, name);
		gdr_doctor_print(stdout, doc, &v);
	}
	if (o->json) {
		char *buf = NULL;
		size_t len = 0;

		fflush(stdout);
		js = open_memstream(&buf, &len);
		if (js)
			gdr_doctor_json(js, doc, &v);
		if (write_out(o->json, "JSON report", js, &buf, &len)) {
			write_cluster(o, doc, &v);
			free(doc);
			return EXIT_USAGE;
		}
	}
	if (write_cluster(o, doc, &v)) {
		free(doc);
		return EXIT_USAGE;
	}
	free(doc);
	return met ? EXIT_MET : EXIT_NOT_MET;
}

/* --rdma-mr: a regular file, a pipe or stdin, read whole (bounded); NULL when it cannot be read. */
static char *read_rdma_mr(const char *path, size_t *len)
{
	const size_t max = 256u << 20;
	char *buf = NULL, *nb, why[128];
	size_t cap = 0, n;
	FILE *in;
	int r;

	*len = 0;
	if (strcmp(path, "-")) {
		struct stat st;

		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			r = gdr_input_read_all(path, max, &buf, len);
			if (r)
				gdr_err("--rdma-mr %s: %s", path,
					gdr_input_strerror(path, r, why, sizeof(why)));
			return r ? NULL : buf;
		}
		if (stat(path, &st) < 0) {
			gdr_err("--rdma-mr %s: %s", path, strerror(errno));
			return NULL;
		}
		if (!S_ISFIFO(st.st_mode)) {
			gdr_err("--rdma-mr %s: %s (give a regular file, a pipe or -)", path,
				gdr_input_strerror(path, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL,
						   why, sizeof(why)));
			return NULL;
		}
	}
	in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!in) {
		gdr_err("--rdma-mr %s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (*len + 65536 + 1 > cap) {
			cap = cap ? 2 * cap : 131072;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				buf = NULL;
				gdr_err("out of memory");
				break;
			}
			buf = nb;
		}
		n = fread(buf + *len, 1, 65536, in);
		*len += n;
		if (*len > max) {
			gdr_err("--rdma-mr %s: more than %zu MiB: not read", path, max >> 20);
			free(buf);
			buf = NULL;
			break;
		}
	} while (n > 0);
	if (buf)
		buf[*len] = '\0';
	if (in != stdin)
		fclose(in);
	return buf;
}

/* --live: gather, print, write the files, and the gate's status. */
static int run_live(const struct doctor_opts *o)
{
	const char *from = o->rdma_mr && strcmp(o->rdma_mr, "-") ? o->rdma_mr : "(stdin)";
	struct gdr_live *l;
	struct gdr_prom p;
	char *mr = NULL, why[512];
	size_t mr_len = 0;
	int rc = EXIT_MET;

	if (check_out(o->json, "JSON report") || check_out(o->nfd, "NFD feature file") ||
	    check_out(o->prom, "Prometheus metrics"))
		return EXIT_USAGE;
	if (o->rdma_mr && !(mr = read_rdma_mr(o->rdma_mr, &mr_len)))
		return EXIT_USAGE;
	l = malloc(sizeof(*l));
	if (!l) {
		free(mr);
		gdr_err("out of memory");
		return EXIT_USAGE;
	}
	gdr_live_init(l, o->root);
	gdr_live_gather(l, mr, mr_len, from);
	free(mr);
	/* A --rdma-mr that is not rdma's MR list is an input error, not a missing source. */
	if (o->rdma_mr && l->src[GDR_LIVE_SRC_MRS].state != GDR_LIVE_SRC_READ) {
		gdr_err("--rdma-mr %s", l->src[GDR_LIVE_SRC_MRS].detail);
		gdr_live_free(l);
		free(l);
		return EXIT_USAGE;
	}
	if (!json_on_stdout(o))
		gdr_live_print(stdout, l, o->quiet);
	fflush(stdout);
	if (o->json) {
		char *buf = NULL;
		size_t len = 0;
		FILE *js = open_memstream(&buf, &len);

		if (js)
			gdr_live_json(js, l);
		if (write_out(o->json, "JSON report", js, &buf, &len))
			rc = EXIT_USAGE;
	}
	if (o->nfd) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);

		if (mem)
			gdr_live_nfd(mem, l);
		if (write_out(o->nfd, "NFD feature file", mem, &buf, &len))
			rc = EXIT_USAGE;
	}
	if (o->prom) {
		if (gdr_prom_init(&p) == 0)
			gdr_live_prom(&p, l);
		if (gdr_prom_write(&p, o->prom, why, sizeof(why))) {
			gdr_err("cannot write the Prometheus metrics: %s", why);
			rc = EXIT_USAGE;
		}
		gdr_prom_free(&p);
	}
	if (rc == EXIT_MET && o->expect != GDR_EXPECT_NONE) {
		rc = gdr_live_expect(l, (int)o->expect, why, sizeof(why));
		if (rc != EXIT_MET)
			gdr_err("%s", why);
	}
	gdr_live_free(l);
	free(l);
	return rc;
}

int main(int argc, char **argv)
{
	struct doctor_opts o = { 0 };

	gdr_set_progname(argv[0]);
	gdr_out_signals();
	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	if (o.measure)
		return gdr_copy_measure_node(stdout) ? EXIT_NOT_MET : EXIT_MET;
	if (o.live)
		return run_live(&o);
	if (o.nccl_log && (o.root || o.topology_xml)) {
		const char *name = strcmp(o.nccl_log, "-") ? o.nccl_log : "(stdin)";
		struct gdr_nccl_log *log = read_log(&o, name);
		int rc;

		if (!log)
			return EXIT_USAGE;
		rc = run_node(&o, log, name);
		free(log);
		return rc;
	}
	return o.nccl_log ? run_nccl_log(&o) : run_node(&o, NULL, NULL);
}
