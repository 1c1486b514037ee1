/* gdr_opts_check: the checks across options, after every option is read (options_int.h). */
#include "config.h"

#include "options_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bounce.h"
#include "util.h"
#include "writer.h"

/*
 * Do paths a and b name one output? 1: one regular file (or one name that does
 * not exist yet); 2: one of our descriptors ("-", /dev/stdout) or one FIFO,
 * where their data would mix. /dev/null may take two.
 */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	int ea, eb;

	if (gdr_out_fd(a) >= 0 || gdr_out_fd(b) >= 0)
		return gdr_out_fd(a) == gdr_out_fd(b) ? 2 : 0;
	ea = stat(a, &sa) == 0;
	eb = stat(b, &sb) == 0;
	if (ea && eb) {
		if (sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino || S_ISCHR(sa.st_mode))
			return 0;
		return S_ISREG(sa.st_mode) ? 1 : 2;
	}
	if (ea || eb)
		return 0;
	/* Neither exists yet: the same name in the same directory ("x.csv", "./x.csv"). */
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
	char da[4096], db[4096];

	if (strcmp(ba ? ba + 1 : a, bb ? bb + 1 : b))
		return 0;
	snprintf(da, sizeof(da), "%.*s", ba ? (int)(ba - a) + 1 : 1, ba ? a : ".");
	snprintf(db, sizeof(db), "%.*s", bb ? (int)(bb - b) + 1 : 1, bb ? b : ".");
	if (stat(da, &sa) || stat(db, &sb))
		return !strcmp(a, b);
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * --csv, --json, --prom and --nfd: each file is one output's, or one would
 * overwrite another; and none is the --topology-xml the run reads.
 */
static int outputs_check(const struct gdr_opts *o)
{
	const struct {
		const char *opt, *path;
	} out[] = { { "--csv", o->csv },
		    { "--json", o->json },
		    { "--prom", o->prom },
		    { "--nfd", o->nfd },
		    { "--topology-xml", o->topology_xml } };

	for (size_t i = 0; i < GDR_ARRAY_SIZE(out); i++) {
		for (size_t j = i + 1; j < GDR_ARRAY_SIZE(out); j++) {
			int same =
			    out[i].path && out[j].path ? same_file(out[i].path, out[j].path) : 0;

			if (!same)
				continue;
			gdr_err("%s %s and %s %s: %s; give each its own file", out[i].opt,
				out[i].path, out[j].opt, out[j].path,
				same == 2 ? "one stream (their data would mix)"
					  : "the same file (one would overwrite the other)");
			return -EINVAL;
		}
	}
	return 0;
}

unsigned int gdr_opts_entries(const struct gdr_opts *o)
{
	unsigned int n = 0, nremote = o->nmem_remote ? o->nmem_remote : 1;
	int first = 1;

	/*
	 * As the session builds its paths (gdr_sess_paths_build): one per
	 * combination of this side's path and the server's, those with a GPU side
	 * once per allocator, host on both sides once.
	 */
	for (int a = 0; a < GDR_GPU_ALLOC__COUNT; a++) {
		if (!(o->gpu_allocs & (1u << a)))
			continue;
		if (o->npairs) {
			for (unsigned int i = 0; i < o->npairs; i++)
				n += first || o->mem_pairs[i].client != GDR_MEM_HOST ||
				     o->mem_pairs[i].server != GDR_MEM_HOST;
		} else {
			for (unsigned int i = 0; i < o->nmem; i++)
				for (unsigned int j = 0; j < nremote; j++)
					n += first || o->mem[i] != GDR_MEM_HOST ||
					     (o->nmem_remote && o->mem_remote[j] != GDR_MEM_HOST);
		}
		first = 0;
	}
	return n;
}

/*
 * The rounds (docs/usage-bw.md, "Rounds until decided"): with two or more
 * paths and no --repeat, rounds until decided; --alpha, --margin and
 * --time-per-size only mean something there.
 */
static int rounds_check(struct gdr_opts *o)
{
	if (!(o->set & GDR_SET_REPEAT) && !o->latency && gdr_opts_entries(o) >= 2) {
		o->repeat_min = GDR_ROUNDS_MIN;
		o->repeat = GDR_ROUNDS_MAX;
	}
	if ((o->set & GDR_SET_DECIDE) && !o->latency && o->repeat_min == o->repeat) {
		gdr_err("--alpha, --margin and --time-per-size go with rounds until decided "
			"(--repeat MIN:MAX, the default with two or more paths); --repeat %u is "
			"fixed",
			o->repeat);
		return -EINVAL;
	}
	return 0;
}

int gdr_opts_check(struct gdr_opts *o, int size_modes, const char *sizes_arg, int use_cuda,
		   int use_cuda_dmabuf)
{
	uint64_t lo, hi;
	char why[200];

	if (size_modes & (size_modes - 1)) {
		gdr_err("-s/--size, -a/--all and --sizes exclude each other");
		return -EINVAL;
	}
	if (size_modes & 2) {
		gdr_sizes_range(2, 8u << 20, o->sizes, &o->nsizes);
	} else if (size_modes & 4) {
		const char *colon = strchr(sizes_arg, ':');
		char min[32];

		if (!colon)
			return gdr_opt_bad("--sizes", sizes_arg, "expected MIN:MAX, e.g. 4K:1M");
		if ((size_t)(colon - sizes_arg) >= sizeof(min))
			return gdr_opt_bad("--sizes", sizes_arg,
					   "MIN and MAX must be sizes from 1 B to 1G");
		memcpy(min, sizes_arg, colon - sizes_arg);
		min[colon - sizes_arg] = '\0';
		if (gdr_parse_size(min, &lo) || gdr_parse_size(colon + 1, &hi) || lo == 0 ||
		    hi > (1ull << 30))
			return gdr_opt_bad("--sizes", sizes_arg,
					   "MIN and MAX must be sizes from 1 B to 1G");
		if (lo > hi)
			return gdr_opt_bad("--sizes", sizes_arg, "MIN is larger than MAX");
		if (gdr_sizes_range(lo, hi, o->sizes, &o->nsizes))
			return gdr_opt_bad("--sizes", sizes_arg, "too many sizes");
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
	if (!o->bounce_chunk)
		o->bounce_chunk = gdr_bounce_default_cap(o->bounce_copy);
	if (gdr_bounce_ring_check(o->bounce_chunk, o->bounce_slots, why, sizeof(why))) {
		gdr_err("--bounce-chunk/--bounce-slots: %s", why);
		return -EINVAL;
	}
	if (o->post_list > o->tx_depth) {
		char val[16];

		snprintf(val, sizeof(val), "%u", o->post_list);
		return gdr_opt_bad("-l/--post_list", val, "larger than the tx depth (-t)");
	}
	if (o->cq_mod > o->tx_depth) {
		/* perftest's default -Q 100 with a small -t would deadlock: cap it. */
		if (o->set & GDR_SET_CQ_MOD) {
			char val[16];

			snprintf(val, sizeof(val), "%u", o->cq_mod);
			return gdr_opt_bad("-Q/--cq-mod", val, "larger than the tx depth (-t)");
		}
		o->cq_mod = o->tx_depth;
	}
	if (o->npairs && o->nmem_remote) {
		gdr_err("--mem LOCAL:REMOTE and --mem-remote exclude each other: both name the "
			"server's side (give one)");
		return -EINVAL;
	}
	if (o->npairs || o->nmem_remote)
		o->set |= GDR_SET_MEM_REMOTE;
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
	if (o->loopback && o->server) {
		gdr_err("--loopback and SERVER %s exclude each other: --loopback runs the server "
			"and the client on this node",
			o->server);
		return -EINVAL;
	}
	if (o->nfd && !o->loopback) {
		gdr_err("--nfd %s: only with --loopback (the one-node check's outcome as node "
			"labels; gdr_doctor --nfd writes the node's GPUDirect readiness)",
			o->nfd);
		return -EINVAL;
	}
	if (outputs_check(o))
		return -EINVAL;
	if (rounds_check(o))
		return -EINVAL;
	if ((o->set & GDR_SET_MEM_REMOTE) && (o->persistent || o->loopback || o->sweep)) {
		gdr_err("%s and %s exclude each other: %s",
			o->npairs ? "--mem LOCAL:REMOTE" : "--mem-remote",
			o->persistent ? "--persistent"
			: o->loopback ? "--loopback"
				      : "--sweep",
			o->persistent ? "the client names the server's side; a server chooses its "
					"own with --mem"
			: o->loopback ? "--loopback checks each path on both sides of this node"
				      : "a sweep measures each path on both sides of every node "
					"pair (one matrix per path)");
		return -EINVAL;
	}
	if (o->loopback && (o->persistent || o->peer || o->sweep)) {
		gdr_err("--loopback and %s exclude each other: --loopback runs one pair at a "
			"time on this node",
			o->persistent ? "--persistent"
			: o->peer     ? "--peer"
				      : "--sweep");
		return -EINVAL;
	}
	return 0;
}

void gdr_opts_perftest_notes(const struct gdr_opts *o, int verbose)
{
	static const struct {
		unsigned int bit;
		const char *text;
	} noop[] = {
		{ GDR_NOOP_CPU_FREQ, "-F: accepted, no effect: gdrperf never checks the CPU "
				     "frequency (it times with the monotonic clock)" },
		{ GDR_NOOP_REPORT_BOTH, "--report-both: accepted, no effect: both sides print "
					"the same row" },
		{ GDR_NOOP_CPU_UTIL, "--cpu_util: accepted, no effect: the cpu_util column is "
				     "always filled" },
	};

	/* A GID chosen for RoCE v2 that is silently ignored would mislead: always say so. */
	if (o->gid_index >= 0)
		gdr_warn("-x %d: ignored: rdma_cm chooses the GID from the addresses "
			 "(RoCE v2 for an IPv4/IPv6 address); see docs/perftest-options.md",
			 o->gid_index);
	else if (o->perftest_noop & GDR_NOOP_RDMA_CM)
		gdr_warn("-R: rdma_cm is always used, and it chooses the GID from the "
			 "addresses (-x has no effect)");
	if (!verbose)
		return;
	for (size_t i = 0; i < GDR_ARRAY_SIZE(noop); i++)
		if (o->perftest_noop & noop[i].bit)
			gdr_warn("%s", noop[i].text);
}
