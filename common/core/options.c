/*
 * gdr_opts_parse: the getopt_long table of gdr_write_bw / gdr_read_bw, the
 * defaults, and one case per option. Values are parsed in options_value.c,
 * the checks across options are options_check.c, --help is options_usage.c.
 */
#include "config.h"

#include "options_int.h"
#include "pin.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "cli.h"
#include "lat_opts.h"
#include "sweep.h"
#include "util.h"

enum {
	OPT_REPORT_GBITS = 256,
	OPT_USE_CUDA,
	OPT_USE_CUDA_BUS_ID,
	OPT_USE_CUDA_DMABUF,
	OPT_MEM,
	OPT_MEM_REMOTE,
	OPT_GPU,
	OPT_SIZES,
	OPT_REPEAT,
	OPT_ALPHA,
	OPT_MARGIN,
	OPT_TIME_PER_SIZE,
	OPT_WARMUP,
	OPT_VALIDATE,
	OPT_BOUNCE_CHUNK,
	OPT_BOUNCE_SLOTS,
	OPT_BOUNCE_COPY,
	OPT_BOUNCE_BLOCKS,
	OPT_CSV,
	OPT_JSON,
	OPT_LABEL,
	OPT_TIMEOUT,
	OPT_TOPOLOGY_XML,
	OPT_BIND,
	OPT_HUGEPAGES,
	OPT_NO_BIND,
	OPT_PIN,
	OPT_NO_PIN,
	OPT_PERSISTENT,
	OPT_PEER,
	OPT_LAUNCH,
	OPT_SWEEP,
	OPT_SWEEP_BOTH,
	OPT_OUTLIER,
	OPT_TIME_BUDGET,
	OPT_GPU_ALLOC,
	OPT_DMABUF_MAPPING,
	OPT_DISABLE_PCIE_RELAXED,
	OPT_USE_DATA_DIRECT,
	OPT_TCLASS,
	OPT_REPORT_BOTH,
	OPT_CPU_UTIL,
	OPT_SOURCE_IP,
	OPT_WIDE,
	OPT_PROM,
	OPT_LOOPBACK,
	OPT_NFD,
};

static const struct option long_opts[] = {
	{ .name = "ib-dev", .has_arg = 1, .val = 'd' },
	{ .name = "ib-port", .has_arg = 1, .val = 'i' },
	{ .name = "port", .has_arg = 1, .val = 'p' },
	{ .name = "size", .has_arg = 1, .val = 's' },
	{ .name = "all", .has_arg = 0, .val = 'a' },
	{ .name = "iters", .has_arg = 1, .val = 'n' },
	{ .name = "duration", .has_arg = 1, .val = 'D' },
	{ .name = "qp", .has_arg = 1, .val = 'q' },
	{ .name = "tx-depth", .has_arg = 1, .val = 't' },
	{ .name = "post_list", .has_arg = 1, .val = 'l' },
	{ .name = "cq-mod", .has_arg = 1, .val = 'Q' },
	{ .name = "bidirectional", .has_arg = 0, .val = 'b' },
	{ .name = "gid-index", .has_arg = 1, .val = 'x' },
	{ .name = "rdma_cm", .has_arg = 0, .val = 'R' },
	{ .name = "report_gbits", .has_arg = 0, .val = OPT_REPORT_GBITS },
	{ .name = "wide", .has_arg = 0, .val = OPT_WIDE },
	{ .name = "use_cuda", .has_arg = 1, .val = OPT_USE_CUDA },
	{ .name = "use_cuda_bus_id", .has_arg = 1, .val = OPT_USE_CUDA_BUS_ID },
	{ .name = "use_cuda_dmabuf", .has_arg = 0, .val = OPT_USE_CUDA_DMABUF },
	{ .name = "mem", .has_arg = 1, .val = OPT_MEM },
	{ .name = "mem-remote", .has_arg = 1, .val = OPT_MEM_REMOTE },
	{ .name = "gpu", .has_arg = 1, .val = OPT_GPU },
	{ .name = "sizes", .has_arg = 1, .val = OPT_SIZES },
	{ .name = "repeat", .has_arg = 1, .val = OPT_REPEAT },
	{ .name = "alpha", .has_arg = 1, .val = OPT_ALPHA },
	{ .name = "margin", .has_arg = 1, .val = OPT_MARGIN },
	{ .name = "time-per-size", .has_arg = 1, .val = OPT_TIME_PER_SIZE },
	{ .name = "warmup", .has_arg = 1, .val = OPT_WARMUP },
	{ .name = "validate", .has_arg = 0, .val = OPT_VALIDATE },
	{ .name = "bounce-chunk", .has_arg = 1, .val = OPT_BOUNCE_CHUNK },
	{ .name = "bounce-slots", .has_arg = 1, .val = OPT_BOUNCE_SLOTS },
	{ .name = "bounce-copy", .has_arg = 1, .val = OPT_BOUNCE_COPY },
	{ .name = "bounce-blocks", .has_arg = 1, .val = OPT_BOUNCE_BLOCKS },
	{ .name = "csv", .has_arg = 1, .val = OPT_CSV },
	{ .name = "json", .has_arg = 1, .val = OPT_JSON },
	{ .name = "prom", .has_arg = 1, .val = OPT_PROM },
	{ .name = "label", .has_arg = 1, .val = OPT_LABEL },
	{ .name = "timeout", .has_arg = 1, .val = OPT_TIMEOUT },
	{ .name = "topology-xml", .has_arg = 1, .val = OPT_TOPOLOGY_XML },
	{ .name = "bind", .has_arg = 1, .val = OPT_BIND },
	{ .name = "hugepages", .has_arg = 0, .val = OPT_HUGEPAGES },
	{ .name = "no-bind", .has_arg = 0, .val = OPT_NO_BIND },
	{ .name = "pin", .has_arg = 0, .val = OPT_PIN },
	{ .name = "no-pin", .has_arg = 0, .val = OPT_NO_PIN },
	{ .name = "persistent", .has_arg = 0, .val = OPT_PERSISTENT },
	{ .name = "peer", .has_arg = 1, .val = OPT_PEER },
	{ .name = "launch", .has_arg = 1, .val = OPT_LAUNCH },
	{ .name = "sweep", .has_arg = 1, .val = OPT_SWEEP },
	{ .name = "sweep-both", .has_arg = 0, .val = OPT_SWEEP_BOTH },
	{ .name = "outlier", .has_arg = 1, .val = OPT_OUTLIER },
	{ .name = "time-budget", .has_arg = 1, .val = OPT_TIME_BUDGET },
	{ .name = "gpu-alloc", .has_arg = 1, .val = OPT_GPU_ALLOC },
	{ .name = "dmabuf-mapping", .has_arg = 1, .val = OPT_DMABUF_MAPPING },
	{ .name = "disable_pcie_relaxed", .has_arg = 0, .val = OPT_DISABLE_PCIE_RELAXED },
	{ .name = "use_data_direct", .has_arg = 0, .val = OPT_USE_DATA_DIRECT },
	/* perftest's options with perftest's meaning (docs/perftest-options.md). */
	{ .name = "CPU-freq", .has_arg = 0, .val = 'F' },
	{ .name = "connection", .has_arg = 1, .val = 'c' },
	{ .name = "mtu", .has_arg = 1, .val = 'm' },
	{ .name = "tos", .has_arg = 1, .val = 'T' },
	{ .name = "tclass", .has_arg = 1, .val = OPT_TCLASS },
	{ .name = "sl", .has_arg = 1, .val = 'S' },
	{ .name = "inline_size", .has_arg = 1, .val = 'I' },
	{ .name = "report-both", .has_arg = 0, .val = OPT_REPORT_BOTH },
	{ .name = "cpu_util", .has_arg = 0, .val = OPT_CPU_UTIL },
	{ .name = "use_hugepages", .has_arg = 0, .val = OPT_HUGEPAGES },
	{ .name = "source_ip", .has_arg = 1, .val = OPT_SOURCE_IP },
	{ .name = "loopback", .has_arg = 0, .val = OPT_LOOPBACK },
	{ .name = "nfd", .has_arg = 1, .val = OPT_NFD },
	{ .name = "verbose", .has_arg = 0, .val = 'v' },
	{ .name = "help", .has_arg = 0, .val = 'h' },
	{ .name = "version", .has_arg = 0, .val = 'V' },
	{}
};

/* The leading ':' makes a value option given last without its value "needs a value". */
static const char short_opts[] = ":d:i:p:s:an:D:q:t:l:Q:bx:RvhVFc:m:T:S:I:";

static void defaults(struct gdr_opts *o, enum gdr_verb verb)
{
	memset(o, 0, sizeof(*o));
	o->verb = verb;
	o->gpu_allocs = 1u << GDR_GPU_ALLOC_MEMALLOC;
	o->ib_port = 1;
	o->port = GDR_DEFAULT_PORT;
	o->sizes[0] = 65536;
	o->nsizes = 1;
	o->iters = 5000;
	o->qps = 1;
	o->tx_depth = 128;
	o->post_list = 1;
	o->cq_mod = 100;
	o->gid_index = -1;
	o->tos = -1;
	o->mem[0] = GDR_MEM_HOST;
	o->nmem = 1;
	o->repeat = o->repeat_min = 1;
	o->alpha = 0.01;
	o->margin = 0.05;
	o->warmup = 16;
	o->bounce_chunk = 0; /* the copy mode's default, once every option is read */
	o->bounce_slots = 8;
	o->bounce_copy = GDR_BOUNCE_COPY_CE;
	o->bounce_blocks = GDR_BOUNCE_BLOCKS;
	o->timeout = 30;
	o->outlier = 0.9;
	/*
	 * Pinned by default for READ messages up to 1 MiB only: on Soft-RoCE
	 * that beat perftest's unpinned READ, while pinned 4-QP 1 MiB WRITEs and
	 * 4-QP 8 MiB READs ran at about one CPU's rate (pin.h;
	 * docs/reading-the-numbers.md, "CPU pinning").
	 */
	o->pin = verb == GDR_VERB_READ ? GDR_PIN_SMALL : GDR_PIN_NEVER;
}

int gdr_opts_parse(struct gdr_opts *o, enum gdr_verb verb, int argc, char **argv)
{
	return gdr_opts_parse_tool(o, verb, 0, argc, argv);
}

int gdr_opts_parse_tool(struct gdr_opts *o, enum gdr_verb verb, int latency, int argc, char **argv)
{
	uint64_t v = 0;
	int c, ret, size_modes = 0, use_cuda_dmabuf = 0, use_cuda = 0;
	const char *sizes_arg = NULL;

	defaults(o, verb);
	o->latency = latency; /* the checks after the loop depend on the tool */
	/*
	 * 0, not 1: glibc then also forgets a cluster ("-hp1") that an earlier
	 * parse returned from midway, which it would otherwise resume in the
	 * previous (freed) argv.
	 */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		int r = 0;

		switch (c) {
		case 'd':
			if (!*optarg)
				return gdr_opt_bad("-d/--ib-dev", optarg, "empty device name");
			o->dev = optarg;
			break;
		case 'i':
			r = gdr_opt_uint("-i/--ib-port", optarg, 1, 255, &v);
			o->ib_port = (int)v;
			break;
		case 'p':
			r = gdr_opt_uint("-p/--port", optarg, 1, 65535, &v);
			o->port = (unsigned int)v;
			break;
		case 's':
			if (gdr_parse_size(optarg, &v) || v == 0 || v > (1ull << 30))
				return gdr_opt_bad("-s/--size", optarg,
						   "not a size from 1 B to 1G");
			o->sizes[0] = v;
			o->nsizes = 1;
			size_modes |= 1;
			o->set |= GDR_SET_SIZE;
			break;
		case 'a':
			size_modes |= 2;
			o->set |= GDR_SET_SIZE;
			break;
		case OPT_SIZES:
			sizes_arg = optarg;
			size_modes |= 4;
			o->set |= GDR_SET_SIZE;
			break;
		case 'n':
			r = gdr_opt_uint("-n/--iters", optarg, 1, 1ull << 40, &o->iters);
			o->set |= GDR_SET_ITERS;
			break;
		case 'D':
			r = gdr_opt_seconds("-D/--duration", optarg, 86400, &o->duration);
			/*
			 * The plan carries it in whole ms, 0 meaning -n (gdr_plan_duration_ms
			 * rounds): -D 0.0004 ran 5000 messages.
			 */
			if (!r && o->duration * 1000.0 + 0.5 < 1.0)
				return gdr_opt_bad("-D/--duration", optarg,
						   "below 1 ms (the plan counts whole ms)");
			o->set |= GDR_SET_DURATION;
			break;
		case 'q':
			r = gdr_opt_uint("-q/--qp", optarg, 1, GDR_MAX_QPS, &v);
			o->qps = (unsigned int)v;
			o->set |= GDR_SET_QPS;
			break;
		case 't':
			r = gdr_opt_uint("-t/--tx-depth", optarg, 1, 16384, &v);
			o->tx_depth = (unsigned int)v;
			o->set |= GDR_SET_TX_DEPTH;
			break;
		case 'l':
			r = gdr_opt_uint("-l/--post_list", optarg, 1, 1024, &v);
			o->post_list = (unsigned int)v;
			o->set |= GDR_SET_POST_LIST;
			break;
		case 'Q':
			r = gdr_opt_uint("-Q/--cq-mod", optarg, 1, 16384, &v);
			o->cq_mod = (unsigned int)v;
			o->set |= GDR_SET_CQ_MOD;
			break;
		case 'b':
			o->bidir = 1;
			o->set |= GDR_SET_BIDIR;
			break;
		case 'x':
			r = gdr_opt_uint("-x/--gid-index", optarg, 0, 255, &v);
			o->gid_index = (int)v;
			break;
		case 'R':
			o->perftest_noop |= GDR_NOOP_RDMA_CM;
			break;
		case 'F':
			o->perftest_noop |= GDR_NOOP_CPU_FREQ;
			break;
		case OPT_REPORT_BOTH:
			o->perftest_noop |= GDR_NOOP_REPORT_BOTH;
			break;
		case OPT_CPU_UTIL:
			o->perftest_noop |= GDR_NOOP_CPU_UTIL;
			break;
		case 'c':
			if (strcmp(optarg, "RC"))
				return gdr_opt_bad("-c/--connection", optarg,
						   "RC is the only transport (RDMA WRITE and READ "
						   "over rdma_cm)");
			break;
		case 'm':
			r = gdr_opt_mtu(optarg, &o->mtu);
			break;
		case 'T':
		case OPT_TCLASS:
			r = gdr_opt_tos(c == 'T' ? "-T/--tos" : "--tclass", optarg, &o->tos);
			o->set |= GDR_SET_TOS;
			break;
		case 'S':
			r = gdr_opt_uint("-S/--sl", optarg, 0, 15, &v);
			if (!r && v)
				return gdr_opt_bad(
				    "-S/--sl", optarg,
				    "rdma_cm takes the service level from the path "
				    "(on RoCE from the traffic class: give -T/--tos)");
			break;
		case 'I':
			r = gdr_opt_uint("-I/--inline_size", optarg, 0, 4096, &v);
			if (!r && v)
				return gdr_opt_bad("-I/--inline_size", optarg,
						   "gdrperf posts every message from registered "
						   "(GPU) memory, never inline: only 0");
			break;
		case OPT_REPORT_GBITS:
			o->gbits = 1;
			break;
		case OPT_WIDE:
			o->wide = 1;
			break;
		case OPT_USE_CUDA:
			r = gdr_opt_uint("--use_cuda", optarg, 0, 1023, &v);
			o->gpu = optarg;
			use_cuda = 1;
			break;
		case OPT_USE_CUDA_BUS_ID:
			if (!*optarg)
				return gdr_opt_bad("--use_cuda_bus_id", optarg, "empty bus id");
			o->gpu = optarg;
			use_cuda = 1;
			break;
		case OPT_USE_CUDA_DMABUF:
			use_cuda_dmabuf = 1;
			break;
		case OPT_MEM:
			r = gdr_opt_mem_list(o, optarg);
			o->set |= GDR_SET_MEM;
			break;
		case OPT_MEM_REMOTE:
			r = gdr_opt_mem_remote(o, optarg);
			break;
		case OPT_GPU:
			if (!*optarg)
				return gdr_opt_bad("--gpu", optarg, "empty");
			o->gpu = optarg;
			break;
		case OPT_REPEAT:
			r = gdr_opt_repeat(optarg, &o->repeat_min, &o->repeat);
			o->set |= GDR_SET_REPEAT;
			break;
		case OPT_ALPHA:
			r = gdr_opt_pct("--alpha", optarg, 50, &o->alpha);
			o->set |= GDR_SET_DECIDE;
			break;
		case OPT_MARGIN:
			r = gdr_opt_pct("--margin", optarg, 50, &o->margin);
			o->set |= GDR_SET_DECIDE;
			break;
		case OPT_TIME_PER_SIZE:
			r = gdr_opt_seconds("--time-per-size", optarg, 30 * 86400, &o->size_time);
			o->set |= GDR_SET_DECIDE;
			break;
		case OPT_WARMUP:
			r = gdr_opt_uint("--warmup", optarg, 0, 1u << 30, &v);
			o->warmup = (unsigned int)v;
			o->set |= GDR_SET_WARMUP;
			break;
		case OPT_VALIDATE:
			o->validate = 1;
			o->set |= GDR_SET_VALIDATE;
			break;
		case OPT_BOUNCE_CHUNK:
			if (gdr_parse_size(optarg, &v) || v < 4096 || v > (1ull << 30))
				return gdr_opt_bad("--bounce-chunk", optarg,
						   "not a size from 4K to 1G");
			o->bounce_chunk = v;
			o->set |= GDR_SET_BOUNCE;
			break;
		case OPT_BOUNCE_SLOTS:
			r = gdr_opt_uint("--bounce-slots", optarg, 1, 256, &v);
			o->bounce_slots = (unsigned int)v;
			o->set |= GDR_SET_BOUNCE;
			break;
		case OPT_BOUNCE_COPY:
			if (gdr_bounce_copy_parse(optarg, &o->bounce_copy))
				return gdr_opt_bad("--bounce-copy", optarg, "expected ce or sm");
			break;
		case OPT_BOUNCE_BLOCKS:
			r = gdr_opt_uint("--bounce-blocks", optarg, 1, GDR_BOUNCE_BLOCKS_MAX, &v);
			o->bounce_blocks = (unsigned int)v;
			break;
		case OPT_CSV:
			if (!*optarg)
				return gdr_opt_bad("--csv", optarg, "empty file name");
			o->csv = optarg;
			break;
		case OPT_JSON:
			if (!*optarg)
				return gdr_opt_bad("--json", optarg, "empty file name");
			o->json = optarg;
			break;
		case OPT_PROM:
			if (!*optarg)
				return gdr_opt_bad("--prom", optarg, "empty file name");
			o->prom = optarg;
			break;
		case OPT_LABEL:
			r = gdr_opt_label(optarg);
			o->label = optarg;
			break;
		case OPT_TIMEOUT:
			r = gdr_opt_seconds("--timeout", optarg, 86400, &o->timeout);
			break;
		case OPT_TOPOLOGY_XML:
			if (!*optarg)
				return gdr_opt_bad("--topology-xml", optarg, "empty file name");
			o->topology_xml = optarg;
			break;
		case OPT_BIND:
		case OPT_SOURCE_IP:
			if (!*optarg)
				return gdr_opt_bad(c == OPT_BIND ? "--bind" : "--source_ip", optarg,
						   "empty address");
			o->bind_addr = optarg;
			break;
		case OPT_HUGEPAGES:
			o->hugepages = 1;
			break;
		case OPT_GPU_ALLOC:
			if (!strcmp(optarg, "memalloc"))
				o->gpu_allocs = 1u << GDR_GPU_ALLOC_MEMALLOC;
			else if (!strcmp(optarg, "vmm"))
				o->gpu_allocs = 1u << GDR_GPU_ALLOC_VMM;
			else if (!strcmp(optarg, "all"))
				o->gpu_allocs = (1u << GDR_GPU_ALLOC__COUNT) - 1;
			else
				return gdr_opt_bad("--gpu-alloc", optarg,
						   "expected memalloc, vmm or all");
			o->set |= GDR_SET_GPU_ALLOC;
			break;
		case OPT_DMABUF_MAPPING:
			if (!strcmp(optarg, "default") || !strcmp(optarg, "pcie"))
				o->dmabuf_pcie = !strcmp(optarg, "pcie");
			else
				return gdr_opt_bad("--dmabuf-mapping", optarg,
						   "expected default or pcie");
			o->set |= GDR_SET_DMABUF_MAPPING;
			break;
		case OPT_DISABLE_PCIE_RELAXED:
			o->no_relaxed = 1;
			o->set |= GDR_SET_RELAXED;
			break;
		case OPT_USE_DATA_DIRECT:
			o->data_direct = 1;
			o->set |= GDR_SET_DATA_DIRECT;
			break;
		case OPT_NO_BIND:
			o->no_bind = 1;
			break;
		case OPT_PIN:
		case OPT_NO_PIN:
			o->pin = c == OPT_PIN ? GDR_PIN_ALWAYS : GDR_PIN_NEVER;
			o->set |= GDR_SET_PIN;
			break;
		case OPT_PERSISTENT:
			o->persistent = 1;
			break;
		case OPT_LOOPBACK:
			o->loopback = 1;
			o->set |= GDR_SET_LOOPBACK;
			break;
		case OPT_NFD:
			if (!*optarg)
				return gdr_opt_bad("--nfd", optarg, "empty file name");
			o->nfd = optarg;
			break;
		case OPT_PEER:
			if (!*optarg || strlen(optarg) > 4096)
				return gdr_opt_bad("--peer", optarg,
						   "expected HOST or HOST,HOST,...");
			o->peer = optarg;
			break;
		case OPT_LAUNCH:
			if (!strcmp(optarg, "none"))
				o->no_launch = 1;
			else if (!strcmp(optarg, "no-mpi"))
				o->no_mpi = 1;
			else if (strcmp(optarg, "auto"))
				return gdr_opt_bad("--launch", optarg,
						   "expected auto, no-mpi or none");
			break;
		case OPT_SWEEP: {
			int mode = gdr_sweep_mode_parse(optarg);

			if (mode < 0)
				return gdr_opt_bad("--sweep", optarg,
						   "expected fixed, pairs or ring");
			o->sweep = mode;
			break;
		}
		case OPT_SWEEP_BOTH:
			o->sweep_both = 1;
			break;
		case OPT_OUTLIER: {
			char *end;

			errno = 0;
			o->outlier = strtod(optarg, &end);
			if (errno || end == optarg || isspace((unsigned char)*optarg) ||
			    *optarg == '+' || *end || !(o->outlier > 0 && o->outlier <= 1))
				return gdr_opt_bad("--outlier", optarg,
						   "expected a ratio in (0, 1], e.g. 0.9");
			break;
		}
		case OPT_TIME_BUDGET:
			r = gdr_opt_seconds("--time-budget", optarg, 30 * 86400, &o->time_budget);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			/* -vh or --he reach here: a latency tool's --help is its own. */
			if (latency)
				gdr_lat_usage(stdout, verb);
			else
				gdr_opts_usage(stdout, verb);
			return 1;
		case 'V':
			gdr_cli_version(stdout);
			return 1;
		case ':':
			gdr_cli_no_value(argv);
			return -EINVAL;
		default:
			return gdr_cli_unknown(argc, argv, long_opts,
					       "perftest's options: docs/perftest-options.md");
		}
		if (r)
			return r;
	}

	if (optind < argc) {
		if (!*argv[optind])
			return gdr_opt_bad("SERVER", "", "empty host name or address");
		o->server = argv[optind++];
	}
	if (optind < argc) {
		gdr_err("unexpected argument '%s': give one SERVER at most (see --help)",
			argv[optind]);
		return -EINVAL;
	}
	ret = gdr_opts_check(o, size_modes, sizes_arg, use_cuda, use_cuda_dmabuf);
	if (ret)
		return ret;
	if (o->verbose)
		gdr_set_verbose(o->verbose);
	gdr_opts_perftest_notes(o, o->verbose);
	return 0;
}
