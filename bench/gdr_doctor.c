/* gdr_doctor: which GPUDirect RDMA path this node can use, or which one NCCL used. */
#include "config.h"

#include "doctor.h"
#include "nccl_log.h"
#include "options.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_MET = 0, EXIT_NOT_MET = 1, EXIT_USAGE = 2 };

struct doctor_opts {
	const char *root;
	const char *json;
	const char *nccl_log;
	enum gdr_expect expect;
	int quiet;
	const char *topology_xml;
	uint64_t buffer_bytes; /* 0 = the default */
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: gdr_doctor [options]\n"
	    "       gdr_doctor --nccl-log FILE|- [--expect PATH] [--json FILE|-]\n"
	    "\n"
	    "Says which GPUDirect RDMA path this node can use (DMA-BUF, nvidia-peermem,\n"
	    "both, or none and why), or, with --nccl-log, which path NCCL used according\n"
	    "to an NCCL_DEBUG=INFO log.\n"
	    "\n"
	    "Options:\n"
	    "  -r, --root DIR        read /proc, /sys, /boot and /usr/lib below DIR (default /);\n"
	    "                        RDMA devices are then read from DIR/sys/class/infiniband\n"
	    "                        and not probed, the memlock limit from DIR/proc/self/limits\n"
	    "  -e, --expect PATH     dmabuf | peermem | any: exit 0 when PATH is usable (or,\n"
	    "                        with --nccl-log, was used), 1 when not\n"
	    "  -j, --json FILE|-     also write the report as JSON to FILE (- = stdout, and\n"
	    "                        then no text report)\n"
	    "  -l, --nccl-log FILE|- read an NCCL_DEBUG=INFO log (- = stdin) instead of\n"
	    "                        checking the node\n"
	    "  -t, --topology-xml FILE  hwloc XML export for the GPU-NIC distance checks\n"
	    "                        (NCCL_NET_GDR_LEVEL); default: this machine when --root is /\n"
	    "  -b, --buffer-size SIZE  GPU memory one run registers per GPU, for the BAR1\n"
	    "                        check (default 8M, the largest size of gdr_write_bw -a;\n"
	    "                        K/M/G suffixes)\n"
	    "  -q, --quiet           print only the verdict (or the log's conclusion)\n"
	    "  -h, --help            this text\n"
	    "\n"
	    "Each check prints pass, warn, fail or n-a, the value seen, and the fix; a check\n"
	    "that rules a path out says [blocks dmabuf|peermem]; a PCIe finding that only\n"
	    "slows paths down says [slows dmabuf,peermem,host,bounce]. PCIe checks run\n"
	    "per GPU-NIC pair (gpuN-NIC.acs, .iommu, .link, .mps, .ro, .ceiling), per\n"
	    "GPU (gpuN.bar1, GPUs in PCI bus order) and per NIC (NIC.fw); see\n"
	    "docs/pcie-health.md. The last line is the\n"
	    "verdict: \"DMA-BUF available\", \"nvidia-peermem only\", \"both (DMA-BUF\n"
	    "preferred)\" or \"no GPUDirect RDMA: <first blocking reason>\".\n"
	    "NCCL_* variables are read from this process's environment.\n"
	    "Environment: GDRPERF_LIBCUDA names the libcuda.so.1 to load (test hook).\n"
	    "\n"
	    "Exit status: 0 the expected path is usable (always 0 without --expect, unless\n"
	    "the --nccl-log input is not an NCCL log), 1 it is not, 2 usage error or a\n"
	    "file that cannot be opened.\n");
}

static int parse_args(int argc, char **argv, struct doctor_opts *o)
{
	static const struct option longopts[] = {
		{ .name = "root", .has_arg = 1, .val = 'r' },
		{ .name = "expect", .has_arg = 1, .val = 'e' },
		{ .name = "json", .has_arg = 1, .val = 'j' },
		{ .name = "nccl-log", .has_arg = 1, .val = 'l' },
		{ .name = "quiet", .has_arg = 0, .val = 'q' },
		{ .name = "topology-xml", .has_arg = 1, .val = 't' },
		{ .name = "buffer-size", .has_arg = 1, .val = 'b' },
		{ .name = "help", .has_arg = 0, .val = 'h' },
		{}
	};
	int c, e;

	while ((c = getopt_long(argc, argv, "r:e:j:l:t:b:qh", longopts, NULL)) != -1) {
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
		case 'l':
			o->nccl_log = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 't':
			o->topology_xml = optarg;
			break;
		case 'b':
			if (gdr_parse_size(optarg, &o->buffer_bytes) || o->buffer_bytes == 0) {
				gdr_err("--buffer-size %s: not a size (e.g. 8M, 1G)", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_MET);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		gdr_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (o->nccl_log && o->root) {
		gdr_err("--root and --nccl-log do not go together: a log says what NCCL saw");
		return -EINVAL;
	}
	return 0;
}

static FILE *open_out(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f)
		gdr_err("%s: cannot write the JSON report: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (f == stdout)
		return fflush(f) || bad ? -EIO : 0;
	if (fclose(f) || bad) {
		gdr_err("%s: writing the JSON report failed", path);
		return -EIO;
	}
	return 0;
}

static int run_nccl_log(const struct doctor_opts *o)
{
	struct gdr_nccl_log *log = malloc(sizeof(*log));
	const char *name = strcmp(o->nccl_log, "-") ? o->nccl_log : "(stdin)";
	FILE *in, *js;
	int rc, met;

	if (!log) {
		gdr_err("out of memory");
		return EXIT_USAGE;
	}
	in = strcmp(o->nccl_log, "-") ? fopen(o->nccl_log, "r") : stdin;
	if (!in) {
		gdr_err("%s: cannot read the NCCL log: %s", o->nccl_log, strerror(errno));
		free(log);
		return EXIT_USAGE;
	}
	rc = gdr_nccl_log_read(in, log);
	if (in != stdin)
		fclose(in);
	if (rc) {
		gdr_err("%s: read error: %s", name, strerror(-rc));
		free(log);
		return EXIT_USAGE;
	}
	switch (o->expect) {
	case GDR_EXPECT_DMABUF:
		met = log->path == GDR_NCCL_DMABUF;
		break;
	case GDR_EXPECT_PEERMEM:
		met = log->path == GDR_NCCL_PEERMEM;
		break;
	case GDR_EXPECT_ANY:
		met = log->path == GDR_NCCL_DMABUF || log->path == GDR_NCCL_PEERMEM;
		break;
	default:
		met = gdr_nccl_log_is_nccl(log);
		break;
	}
	if (o->quiet)
		printf("%s: %s\n", name, gdr_nccl_path_name(log->path));
	else if (!o->json || strcmp(o->json, "-"))
		gdr_nccl_log_print(stdout, log, name);
	if (o->json) {
		js = open_out(o->json);
		if (!js) {
			free(log);
			return EXIT_USAGE;
		}
		gdr_nccl_log_json(js, log, name);
		if (close_out(js, o->json)) {
			free(log);
			return EXIT_USAGE;
		}
	}
	free(log);
	return met ? EXIT_MET : EXIT_NOT_MET;
}

static int run_node(const struct doctor_opts *o)
{
	struct gdr_doctor *doc = malloc(sizeof(*doc));
	struct gdr_verdict v;
	FILE *js = NULL;
	int met;

	if (!doc) {
		gdr_err("out of memory");
		return EXIT_USAGE;
	}
	/* Open the JSON file first so that a bad path fails before the checks run. */
	if (o->json && !(js = open_out(o->json))) {
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
	if (o->quiet)
		printf("verdict: %s\n", v.text);
	else if (js != stdout)
		gdr_doctor_print(stdout, doc, &v);
	if (js) {
		gdr_doctor_json(js, doc, &v);
		if (close_out(js, o->json)) {
			free(doc);
			return EXIT_USAGE;
		}
	}
	free(doc);
	return met ? EXIT_MET : EXIT_NOT_MET;
}

int main(int argc, char **argv)
{
	struct doctor_opts o = { 0 };

	gdr_set_progname(argv[0]);
	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	return o.nccl_log ? run_nccl_log(&o) : run_node(&o);
}
