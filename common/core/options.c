#include "config.h"

#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sweep.h"
#include "report.h"
#include "text.h"
#include "util.h"

/* The CSV/JSON label field, NUL included. */
#define GDR_LABEL_MAX sizeof(((struct gdr_result *)0)->label)

enum {
	OPT_REPORT_GBITS = 256,
	OPT_USE_CUDA,
	OPT_USE_CUDA_BUS_ID,
	OPT_USE_CUDA_DMABUF,
	OPT_MEM,
	OPT_GPU,
	OPT_SIZES,
	OPT_REPEAT,
	OPT_WARMUP,
	OPT_VALIDATE,
	OPT_BOUNCE_CHUNK,
	OPT_BOUNCE_SLOTS,
	OPT_CSV,
	OPT_JSON,
	OPT_LABEL,
	OPT_TIMEOUT,
	OPT_TOPOLOGY_XML,
	OPT_BIND,
	OPT_HUGEPAGES,
	OPT_NO_BIND,
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
	{ .name = "use_cuda", .has_arg = 1, .val = OPT_USE_CUDA },
	{ .name = "use_cuda_bus_id", .has_arg = 1, .val = OPT_USE_CUDA_BUS_ID },
	{ .name = "use_cuda_dmabuf", .has_arg = 0, .val = OPT_USE_CUDA_DMABUF },
	{ .name = "mem", .has_arg = 1, .val = OPT_MEM },
	{ .name = "gpu", .has_arg = 1, .val = OPT_GPU },
	{ .name = "sizes", .has_arg = 1, .val = OPT_SIZES },
	{ .name = "repeat", .has_arg = 1, .val = OPT_REPEAT },
	{ .name = "warmup", .has_arg = 1, .val = OPT_WARMUP },
	{ .name = "validate", .has_arg = 0, .val = OPT_VALIDATE },
	{ .name = "bounce-chunk", .has_arg = 1, .val = OPT_BOUNCE_CHUNK },
	{ .name = "bounce-slots", .has_arg = 1, .val = OPT_BOUNCE_SLOTS },
	{ .name = "csv", .has_arg = 1, .val = OPT_CSV },
	{ .name = "json", .has_arg = 1, .val = OPT_JSON },
	{ .name = "label", .has_arg = 1, .val = OPT_LABEL },
	{ .name = "timeout", .has_arg = 1, .val = OPT_TIMEOUT },
	{ .name = "topology-xml", .has_arg = 1, .val = OPT_TOPOLOGY_XML },
	{ .name = "bind", .has_arg = 1, .val = OPT_BIND },
	{ .name = "hugepages", .has_arg = 0, .val = OPT_HUGEPAGES },
	{ .name = "no-bind", .has_arg = 0, .val = OPT_NO_BIND },
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
	{ .name = "verbose", .has_arg = 0, .val = 'v' },
	{ .name = "help", .has_arg = 0, .val = 'h' },
	{ .name = "version", .has_arg = 0, .val = 'V' },
	{}
};

/* The leading ':' makes a value option given last without its value "needs a value". */
static const char short_opts[] = ":d:i:p:s:an:D:q:t:l:Q:bx:RvhV";

const char *gdr_verb_name(enum gdr_verb v)
{
	return v == GDR_VERB_READ ? "read" : "write";
}

void gdr_opts_usage(FILE *out, enum gdr_verb verb)
{
	const char *prog = verb == GDR_VERB_READ ? "gdr_read_bw" : "gdr_write_bw";

	fprintf(
	    out,
	    "Usage: %s [options]            start a server (waits for one client)\n"
	    "       %s [options] SERVER     run the client against SERVER (host or address)\n"
	    "\n"
	    "RDMA %s bandwidth between two nodes over rdma_cm, on host memory and on GPU\n"
	    "memory registered through DMA-BUF, nvidia-peermem or a host bounce buffer.\n"
	    "The client's plan (sizes, iterations, QPs, paths...) is sent to the server,\n"
	    "which adopts it; an explicit server option that contradicts it is an error.\n"
	    "\n"
	    "Connection and device:\n"
	    "  -d, --ib-dev=NAME|auto   RDMA device: its IP address steers rdma_cm to it; auto "
	    "(the\n"
	    "                           default with --gpu N) = the active NIC nearest the GPU;\n"
	    "                           under a launcher a list NAME,NAME... is indexed by local "
	    "rank\n"
	    "  -i, --ib-port=N          device port (default 1)\n"
	    "  -p, --port=N             rdma_cm port (default %d)\n"
	    "      --bind=ADDR          server: listen on ADDR only (default: the -d device's "
	    "address,\n"
	    "                           else all); client: connect from ADDR (default: -d's "
	    "address)\n"
	    "      --persistent         server: serve one client after another until SIGINT or\n"
	    "                           SIGTERM (a bad or dead client is logged, not fatal)\n"
	    "  -x, --gid-index=N        accepted for perftest compatibility; rdma_cm picks the "
	    "GID\n"
	    "  -R, --rdma_cm            accepted for perftest compatibility (rdma_cm is always "
	    "used)\n"
	    "      --timeout=SEC        give up on connect or on a silent peer after SEC (default "
	    "30)\n"
	    "\n"
	    "Launched by mpirun, mpiexec or srun (2N ranks, no SERVER): ranks 0..N-1 serve,\n"
	    "rank i+N connects to rank i on port -p + i, each on its local rank's GPU; the\n"
	    "server's address comes through MPI (configure --with-mpi) or from:\n"
	    "      --peer=HOST[,HOST...] server of each pair (one host: every pair's; also\n"
	    "                           GDRPERF_SERVER)\n"
	    "      --launch=auto|no-mpi|none  no-mpi: pairs from the launcher's variables but no\n"
	    "                           MPI calls (server from --peer); none: ignore the\n"
	    "                           launcher's variables (default auto)\n"
	    "      --sweep=fixed|pairs|ring  pairs: one rank per node (M ranks), every node\n"
	    "                           pair measured once, in M-1 rounds (M odd: M), each\n"
	    "                           node in at most one pair a round; ring: node i sends\n"
	    "                           to node i+1 (2 rounds, 3 for odd M); rank 0 prints a\n"
	    "                           node x node matrix and names slow nodes (with MPI,\n"
	    "                           or under srun with --peer RANK0-HOST; default\n"
	    "                           fixed: the 2N-rank pairing above)\n"
	    "      --sweep-both         sweep each pair in both directions (twice the rounds)\n"
	    "      --outlier=RATIO      a node is slow when the median of its pairs is below\n"
	    "                           RATIO x the median of the pairs without it (default\n"
	    "                           0.9, 0 < RATIO <= 1)\n"
	    "      --time-budget=SEC    the whole sweep in about SEC seconds: sets -D for\n"
	    "                           every measurement so that all rounds fit, and says\n"
	    "                           what it chose (not with -n or -D)\n"
	    "\n"
	    "What to measure:\n"
	    "  -s, --size=SIZE          message size (default 64K); K/M/G suffixes are powers of "
	    "two\n"
	    "  -a, --all                all sizes from 2 B to 8 MiB (powers of two)\n"
	    "      --sizes=MIN:MAX      powers of two from MIN to MAX\n"
	    "  -n, --iters=N            messages per QP per repeat (default 5000)\n"
	    "  -D, --duration=SEC       run each repeat for SEC seconds instead of -n\n"
	    "  -q, --qp=N               queue pairs (default 1, at most %d)\n"
	    "  -t, --tx-depth=N         outstanding work requests per QP (default 128)\n"
	    "  -l, --post_list=N        work requests per ibv_post_send (default 1)\n"
	    "  -Q, --cq-mod=N           signal one completion every N requests (default 100;\n"
	    "                           capped at the tx depth)\n"
	    "  -b, --bidirectional      both sides issue %ss at once\n"
	    "      --repeat=N           timed repeats per size; the table shows median/min/max\n"
	    "                           over them (default 1)\n"
	    "      --warmup=N           untimed messages per QP before each repeat (default 16)\n"
	    "      --validate           fill the source with a per-run pattern and check every\n"
	    "                           byte of the destination after each size\n"
	    "\n"
	    "Memory paths:\n"
	    "      --mem=LIST|all       comma-separated list of host, dmabuf, peermem, bounce\n"
	    "                           (default host; all with --gpu). A path that cannot run\n"
	    "                           here is reported as skipped with its reason\n"
	    "      --gpu=N|BDF|UUID|auto  GPU by CUDA ordinal, PCI bus id (DDDD:BB:DD.F) or UUID\n"
	    "                           (GPU-... or MIG-..., as nvidia-smi -L prints it); auto =\n"
	    "                           the GPU nearest the NIC; under a launcher a\n"
	    "                           comma-separated list is indexed by local rank\n"
	    "      --gpu-alloc=memalloc|vmm|all  GPU buffers from cuMemAlloc (default), from\n"
	    "                           cuMemCreate with gpuDirectRDMACapable as NCCL >= 2.19\n"
	    "                           makes them, or both in turn (give the server the same)\n"
	    "      --dmabuf-mapping=default|pcie  dmabuf: export with\n"
	    "                           CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (driver >= "
	    "12.8)\n"
	    "      --use_data_direct    dmabuf: register with mlx5dv_reg_dmabuf_mr(DATA_DIRECT)\n"
	    "                           (libmlx5 with data direct, looked up at run time)\n"
	    "      --disable_pcie_relaxed  register without IBV_ACCESS_RELAXED_ORDERING (on by\n"
	    "                           default, as perftest and NCCL do)\n"
	    "      --use_cuda=N         perftest alias: --gpu=N --mem=peermem\n"
	    "      --use_cuda_bus_id=BDF  perftest alias: --gpu=BDF --mem=peermem\n"
	    "      --use_cuda_dmabuf    perftest alias: --mem=dmabuf\n"
	    "      --bounce-chunk=SIZE  bounce path: staging chunk (default 256K)\n"
	    "      --bounce-slots=N     bounce path: staging slots per side (default 8)\n"
	    "      --hugepages          host memory from 2 MiB huge pages when available\n"
	    "      --topology-xml=FILE  read the PCIe topology from an hwloc XML export (a\n"
	    "                           regular file; one that cannot be read or parsed is a\n"
	    "                           usage error before anything runs)\n"
	    "      --no-bind            do not bind to the NIC's NUMA node\n"
	    "\n"
	    "Output:\n"
	    "      --report_gbits       bandwidth in Gb/s (10^9 bit/s) instead of MB/sec (2^20 "
	    "B/s, as perftest)\n"
	    "      --csv=FILE           append one row per measurement to FILE (header once,\n"
	    "                           with the first row: a run that fails first creates no "
	    "file)\n"
	    "      --json=FILE          write all measurements to FILE as a JSON array at the\n"
	    "                           end (a regular FILE is replaced atomically, and only\n"
	    "                           when the run has rows); for both, FILE - is stdout and\n"
	    "                           the table then goes to stderr\n"
	    "      --label=TEXT         free text copied into the label column: UTF-8 without\n"
	    "                           control characters; longer than 127 bytes, it is cut\n"
	    "                           at a character boundary with a warning\n"
	    "  -v, --verbose            debug messages on stderr (also GDRPERF_DEBUG=1)\n"
	    "  -h, --help               this text\n"
	    "  -V, --version            program version\n"
	    "\n"
	    "Exit status: 0 success, 1 the run failed, 2 usage error (an option without\n"
	    "its value, an empty file name or value, a value out of range, a bad\n"
	    "--topology-xml).\n",
	    prog, prog, gdr_verb_name(verb), GDR_DEFAULT_PORT, GDR_MAX_QPS,
	    verb == GDR_VERB_READ ? "RDMA READ" : "RDMA WRITE");
}

static int bad(const char *opt, const char *val, const char *why)
{
	gdr_err("%s '%s': %s (see --help)", opt, val, why);
	return -EINVAL;
}

static int parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	char why[96];
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return bad(opt, s ? s : "", "not a non-negative integer");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad(opt, s, "not a non-negative integer");
	if (v < min || v > max) {
		snprintf(why, sizeof(why), "out of range %" PRIu64 "..%" PRIu64, min, max);
		return bad(opt, s, why);
	}
	*out = v;
	return 0;
}

static int parse_seconds(const char *opt, const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > max)
		return bad(opt, s, "not a positive number of seconds in range");
	*out = v;
	return 0;
}

int gdr_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int gdr_sizes_range(uint64_t min, uint64_t max, uint64_t *sizes, unsigned int *n)
{
	unsigned int k = 0;
	uint64_t s;

	if (min == 0 || min > max)
		return -EINVAL;
	for (s = min; s <= max; s *= 2) {
		if (k == GDR_MAX_SIZES)
			return -E2BIG;
		sizes[k++] = s;
		if (s > UINT64_MAX / 2)
			break;
	}
	/* MAX itself is always measured, even when it is not MIN times a power of two. */
	if (sizes[k - 1] != max) {
		if (k == GDR_MAX_SIZES)
			return -E2BIG;
		sizes[k++] = max;
	}
	*n = k;
	return 0;
}

/*
 * --label goes into a CSV and a JSON field as it is: it must be UTF-8 text
 * without control bytes (a newline would end the CSV row, an escape sequence
 * reaches every terminal that prints the file). A label longer than the
 * field is cut there, at a character boundary, and said so.
 */
static int check_label(const char *s)
{
	const unsigned char *p;

	if (!gdr_utf8_valid(s))
		return bad("--label", s, "not UTF-8 text");
	for (p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return bad("--label", s, "holds a control character");
	if (strlen(s) >= GDR_LABEL_MAX) {
		char cut[GDR_LABEL_MAX];

		gdr_utf8_copy(cut, s, sizeof(cut));
		gdr_warn("--label is %zu bytes: cut to the first %zu, at a character boundary "
			 "(\"%s\")",
			 strlen(s), strlen(cut), cut);
	}
	return 0;
}

static int parse_mem_list(struct gdr_opts *o, const char *arg)
{
	char buf[128];
	char *save = NULL, *tok;
	unsigned int seen = 0;

	if (strlen(arg) >= sizeof(buf))
		return bad("--mem", arg, "too long");
	gdr_strlcpy(buf, arg, sizeof(buf));
	o->nmem = 0;
	if (!strcmp(buf, "all")) {
		for (int k = 0; k < GDR_MEM__COUNT; k++)
			o->mem[o->nmem++] = (enum gdr_mem_kind)k;
		return 0;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = gdr_mem_kind_parse(tok);
		char why[96];

		if (k < 0) {
			snprintf(why, sizeof(why),
				 "unknown path '%s' (host, dmabuf, peermem, bounce, all)", tok);
			return bad("--mem", arg, why);
		}
		if (seen & (1u << k)) {
			snprintf(why, sizeof(why), "path '%s' listed twice", tok);
			return bad("--mem", arg, why);
		}
		seen |= 1u << k;
		o->mem[o->nmem++] = (enum gdr_mem_kind)k;
	}
	if (!o->nmem)
		return bad("--mem", arg, "empty list");
	return 0;
}

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
	o->mem[0] = GDR_MEM_HOST;
	o->nmem = 1;
	o->repeat = 1;
	o->warmup = 16;
	o->bounce_chunk = 256 * 1024;
	o->bounce_slots = 8;
	o->timeout = 30;
	o->outlier = 0.9;
}

int gdr_opts_parse(struct gdr_opts *o, enum gdr_verb verb, int argc, char **argv)
{
	uint64_t v = 0, lo, hi;
	int c, size_modes = 0, use_cuda_dmabuf = 0, use_cuda = 0;
	const char *sizes_arg = NULL;

	defaults(o, verb);
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
				return bad("-d/--ib-dev", optarg, "empty device name");
			o->dev = optarg;
			break;
		case 'i':
			r = parse_uint("-i/--ib-port", optarg, 1, 255, &v);
			o->ib_port = (int)v;
			break;
		case 'p':
			r = parse_uint("-p/--port", optarg, 1, 65535, &v);
			o->port = (unsigned int)v;
			break;
		case 's':
			if (gdr_parse_size(optarg, &v) || v == 0 || v > (1ull << 30))
				return bad("-s/--size", optarg, "not a size from 1 B to 1G");
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
			r = parse_uint("-n/--iters", optarg, 1, 1ull << 40, &o->iters);
			o->set |= GDR_SET_ITERS;
			break;
		case 'D':
			r = parse_seconds("-D/--duration", optarg, 86400, &o->duration);
			o->set |= GDR_SET_DURATION;
			break;
		case 'q':
			r = parse_uint("-q/--qp", optarg, 1, GDR_MAX_QPS, &v);
			o->qps = (unsigned int)v;
			o->set |= GDR_SET_QPS;
			break;
		case 't':
			r = parse_uint("-t/--tx-depth", optarg, 1, 16384, &v);
			o->tx_depth = (unsigned int)v;
			o->set |= GDR_SET_TX_DEPTH;
			break;
		case 'l':
			r = parse_uint("-l/--post_list", optarg, 1, 1024, &v);
			o->post_list = (unsigned int)v;
			o->set |= GDR_SET_POST_LIST;
			break;
		case 'Q':
			r = parse_uint("-Q/--cq-mod", optarg, 1, 16384, &v);
			o->cq_mod = (unsigned int)v;
			o->set |= GDR_SET_CQ_MOD;
			break;
		case 'b':
			o->bidir = 1;
			o->set |= GDR_SET_BIDIR;
			break;
		case 'x':
			r = parse_uint("-x/--gid-index", optarg, 0, 255, &v);
			o->gid_index = (int)v;
			break;
		case 'R':
			break;
		case OPT_REPORT_GBITS:
			o->gbits = 1;
			break;
		case OPT_USE_CUDA:
			r = parse_uint("--use_cuda", optarg, 0, 1023, &v);
			o->gpu = optarg;
			use_cuda = 1;
			break;
		case OPT_USE_CUDA_BUS_ID:
			if (!*optarg)
				return bad("--use_cuda_bus_id", optarg, "empty bus id");
			o->gpu = optarg;
			use_cuda = 1;
			break;
		case OPT_USE_CUDA_DMABUF:
			use_cuda_dmabuf = 1;
			break;
		case OPT_MEM:
			r = parse_mem_list(o, optarg);
			o->set |= GDR_SET_MEM;
			break;
		case OPT_GPU:
			if (!*optarg)
				return bad("--gpu", optarg, "empty");
			o->gpu = optarg;
			break;
		case OPT_REPEAT:
			r = parse_uint("--repeat", optarg, 1, GDR_REPEAT_MAX, &v);
			o->repeat = (unsigned int)v;
			o->set |= GDR_SET_REPEAT;
			break;
		case OPT_WARMUP:
			r = parse_uint("--warmup", optarg, 0, 1u << 30, &v);
			o->warmup = (unsigned int)v;
			o->set |= GDR_SET_WARMUP;
			break;
		case OPT_VALIDATE:
			o->validate = 1;
			o->set |= GDR_SET_VALIDATE;
			break;
		case OPT_BOUNCE_CHUNK:
			if (gdr_parse_size(optarg, &v) || v < 4096 || v > (1ull << 30))
				return bad("--bounce-chunk", optarg, "not a size from 4K to 1G");
			o->bounce_chunk = v;
			o->set |= GDR_SET_BOUNCE;
			break;
		case OPT_BOUNCE_SLOTS:
			r = parse_uint("--bounce-slots", optarg, 1, 256, &v);
			o->bounce_slots = (unsigned int)v;
			o->set |= GDR_SET_BOUNCE;
			break;
		case OPT_CSV:
			if (!*optarg)
				return bad("--csv", optarg, "empty file name");
			o->csv = optarg;
			break;
		case OPT_JSON:
			if (!*optarg)
				return bad("--json", optarg, "empty file name");
			o->json = optarg;
			break;
		case OPT_LABEL:
			r = check_label(optarg);
			o->label = optarg;
			break;
		case OPT_TIMEOUT:
			r = parse_seconds("--timeout", optarg, 86400, &o->timeout);
			break;
		case OPT_TOPOLOGY_XML:
			if (!*optarg)
				return bad("--topology-xml", optarg, "empty file name");
			o->topology_xml = optarg;
			break;
		case OPT_BIND:
			if (!*optarg)
				return bad("--bind", optarg, "empty address");
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
				return bad("--gpu-alloc", optarg, "expected memalloc, vmm or all");
			break;
		case OPT_DMABUF_MAPPING:
			if (!strcmp(optarg, "default") || !strcmp(optarg, "pcie"))
				o->dmabuf_pcie = !strcmp(optarg, "pcie");
			else
				return bad("--dmabuf-mapping", optarg, "expected default or pcie");
			break;
		case OPT_DISABLE_PCIE_RELAXED:
			o->no_relaxed = 1;
			break;
		case OPT_USE_DATA_DIRECT:
			o->data_direct = 1;
			break;
		case OPT_NO_BIND:
			o->no_bind = 1;
			break;
		case OPT_PERSISTENT:
			o->persistent = 1;
			break;
		case OPT_PEER:
			if (!*optarg || strlen(optarg) > 4096)
				return bad("--peer", optarg, "expected HOST or HOST,HOST,...");
			o->peer = optarg;
			break;
		case OPT_LAUNCH:
			if (!strcmp(optarg, "none"))
				o->no_launch = 1;
			else if (!strcmp(optarg, "no-mpi"))
				o->no_mpi = 1;
			else if (strcmp(optarg, "auto"))
				return bad("--launch", optarg, "expected auto, no-mpi or none");
			break;
		case OPT_SWEEP: {
			int mode = gdr_sweep_mode_parse(optarg);

			if (mode < 0)
				return bad("--sweep", optarg, "expected fixed, pairs or ring");
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
			if (errno || end == optarg || *end || !(o->outlier > 0 && o->outlier <= 1))
				return bad("--outlier", optarg,
					   "expected a ratio in (0, 1], e.g. 0.9");
			break;
		}
		case OPT_TIME_BUDGET:
			r = parse_seconds("--time-budget", optarg, 30 * 86400, &o->time_budget);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			gdr_opts_usage(stdout, verb);
			return 1;
		case 'V':
			printf("%s %s\n", gdr_progname(), PACKAGE_VERSION);
			return 1;
		case ':':
			gdr_err("option '%s' needs a value (see --help)", argv[optind - 1]);
			return -EINVAL;
		default:
			gdr_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		if (r)
			return r;
	}

	if (optind < argc)
		o->server = argv[optind++];
	if (optind < argc) {
		gdr_err("unexpected argument '%s': give one SERVER at most (see --help)",
			argv[optind]);
		return -EINVAL;
	}

	if (size_modes & (size_modes - 1)) {
		gdr_err("-s/--size, -a/--all and --sizes exclude each other");
		return -EINVAL;
	}
	if (size_modes & 2) {
		gdr_sizes_range(2, 8u << 20, o->sizes, &o->nsizes);
	} else if (size_modes & 4) {
		const char *colon = strchr(sizes_arg, ':');
		char min[32];

		if (!colon || (size_t)(colon - sizes_arg) >= sizeof(min))
			return bad("--sizes", sizes_arg, "expected MIN:MAX, e.g. 4K:1M");
		memcpy(min, sizes_arg, colon - sizes_arg);
		min[colon - sizes_arg] = '\0';
		if (gdr_parse_size(min, &lo) || gdr_parse_size(colon + 1, &hi) || lo == 0 ||
		    hi > (1ull << 30))
			return bad("--sizes", sizes_arg,
				   "MIN and MAX must be sizes from 1 B to 1G");
		if (lo > hi)
			return bad("--sizes", sizes_arg, "MIN is larger than MAX");
		if (gdr_sizes_range(lo, hi, o->sizes, &o->nsizes))
			return bad("--sizes", sizes_arg, "too many sizes");
	}
	if ((o->set & GDR_SET_ITERS) && (o->set & GDR_SET_DURATION)) {
		gdr_err("-n/--iters and -D/--duration exclude each other");
		return -EINVAL;
	}
	if (o->time_budget > 0 && (!o->sweep || (o->set & (GDR_SET_ITERS | GDR_SET_DURATION)))) {
		gdr_err("--time-budget bounds a sweep by setting -D itself: %s",
			o->sweep ? "not with -n or -D" : "give --sweep=pairs or ring");
		return -EINVAL;
	}
	if (o->post_list > o->tx_depth) {
		char val[16];

		snprintf(val, sizeof(val), "%u", o->post_list);
		return bad("-l/--post_list", val, "larger than the tx depth (-t)");
	}
	if (o->cq_mod > o->tx_depth) {
		/* perftest's default -Q 100 with a small -t would deadlock: cap it. */
		if (o->set & GDR_SET_CQ_MOD) {
			char val[16];

			snprintf(val, sizeof(val), "%u", o->cq_mod);
			return bad("-Q/--cq-mod", val, "larger than the tx depth (-t)");
		}
		o->cq_mod = o->tx_depth;
	}
	if (use_cuda || use_cuda_dmabuf) {
		if (o->set & GDR_SET_MEM) {
			gdr_err("--use_cuda* aliases and --mem exclude each other");
			return -EINVAL;
		}
		o->nmem = 1;
		o->mem[0] = use_cuda_dmabuf ? GDR_MEM_DMABUF : GDR_MEM_PEERMEM;
		o->set |= GDR_SET_MEM;
	} else if (o->gpu && !(o->set & GDR_SET_MEM)) {
		o->nmem = 0;
		for (int k = 0; k < GDR_MEM__COUNT; k++)
			o->mem[o->nmem++] = (enum gdr_mem_kind)k;
	}
	if (o->gpu && !strcmp(o->gpu, "auto") && (!o->dev || !strcmp(o->dev, "auto"))) {
		gdr_err("--gpu auto needs -d NAME (the NIC the GPU should be near)");
		return -EINVAL;
	}
	if (o->persistent && o->server) {
		gdr_err("--persistent is for the server (no SERVER argument)");
		return -EINVAL;
	}
	if (o->verbose)
		gdr_set_verbose(o->verbose);
	return 0;
}
