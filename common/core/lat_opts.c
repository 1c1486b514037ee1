#include "config.h"

#include "lat_opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "util.h"

/* The bandwidth options a ping-pong refuses: one table for the check and for --help. */
static const struct {
	unsigned int bit;
	const char *name; /* every spelling, '/'-separated */
} refused[] = {
	{ GDR_SET_QPS, "-q/--qp" },
	{ GDR_SET_TX_DEPTH, "-t/--tx-depth" },
	{ GDR_SET_POST_LIST, "-l/--post_list" },
	{ GDR_SET_CQ_MOD, "-Q/--cq-mod" },
	{ GDR_SET_BIDIR, "-b/--bidirectional" },
	{ GDR_SET_DURATION, "-D/--duration" },
	{ GDR_SET_VALIDATE, "--validate" },
	{ GDR_SET_PIN, "--pin/--no-pin" },
	{ GDR_SET_DECIDE, "--alpha/--margin/--time-per-size" },
};

/* Is the long option at opt ("--qp=N  ...") one of refused[]? */
static int is_refused(const char *opt)
{
	size_t n = strcspn(opt, "= \n");

	for (size_t i = 0; i < GDR_ARRAY_SIZE(refused); i++) {
		for (const char *q = refused[i].name; *q;) {
			size_t m = strcspn(q, "/");

			if (m == n && !strncmp(q, opt, n))
				return 1;
			q += m + (q[m] == '/');
		}
	}
	return 0;
}

/*
 * The bandwidth tools' option lines without the refused ones: an entry is its
 * "  -x, --name" or "      --name" line and the deeper-indented lines after it.
 */
static void put_lat_options(FILE *out, const char *text)
{
	int skipping = 0;

	while (*text) {
		size_t len = strcspn(text, "\n") + (text[strcspn(text, "\n")] == '\n');
		size_t ind = strspn(text, " ");
		const char *opt = NULL;

		int short_and_long = ind == 2 && text[2] == '-' && text[3] != '-' &&
				     !strncmp(text + 4, ", --", 4);
		int long_only = ind == 6 && !strncmp(text + 6, "--", 2);

		/* Both forms put the long name at column 6. */
		if (short_and_long || long_only)
			opt = text + 6;
		if (opt)
			skipping = is_refused(opt);
		else if (ind < 20)
			skipping = 0;
		if (!skipping)
			fwrite(text, 1, len, out);
		text += len;
	}
}

void gdr_lat_usage(FILE *out, enum gdr_verb verb)
{
	const char *v = gdr_verb_name(verb);
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	fprintf(out,
		"Usage: gdr_%s_lat [options]            start a server (waits for one client)\n"
		"       gdr_%s_lat [options] SERVER     run the client against SERVER\n"
		"\n"
		"RDMA %s latency between two nodes over rdma_cm, perftest style\n"
		"(ib_%s_lat), on host memory and on GPU memory registered through DMA-BUF,\n"
		"nvidia-peermem or a host bounce buffer, with the plan exchange and paths of\n"
		"gdr_%s_bw.\n"
		"%s"
		"Per size the client's samples of all repeats give min, p50, p90, p99, p99.9,\n"
		"max and average in microseconds (nearest-rank percentiles after --warmup\n"
		"untimed exchanges): the table, and the CSV/JSON columns lat_min_us,\n"
		"lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us, lat_max_us, lat_avg_us (the\n"
		"bandwidth columns are empty on these rows). Both sides print the same row.\n"
		"\n"
		"One message is in flight on QP 0: gdr_%s_bw's -q, -t, -l, -Q, -b, -D,\n"
		"--validate, --pin and --no-pin do not apply and are refused, as are the\n"
		"rounds until decided (--repeat MIN:MAX, --alpha, --margin, --time-per-size):\n"
		"--repeat takes a fixed N. -n is the number of timed exchanges per repeat\n"
		"(default 5000). The options it takes:\n"
		"\n",
		v, v, verb == GDR_VERB_READ ? "READ" : "WRITE", v, v,
		verb == GDR_VERB_READ
		    ? "A sample is one RDMA READ from post to completion (as ib_read_lat).\n"
		      "bounce: the READ from the peer's staging ring plus the copy to the GPU.\n"
		    : "A sample is half a round trip: the client writes into the server, which\n"
		      "writes back (as ib_write_lat). On host memory a side sees the message\n"
		      "arrive by polling its last byte; GPU memory cannot be polled by the CPU,\n"
		      "so the GPU paths use RDMA WRITE with immediate and the receive completion\n"
		      "(as perftest's CUDA latency). bounce: both GPU copies (GPU to staging on\n"
		      "the sender, staging to GPU on the receiver) are inside the sample.\n",
		v);
	/* The shared options, without gdr_*_bw's own usage lines and description. */
	m = open_memstream(&text, &len);
	if (!m)
		return;
	gdr_opts_usage_tool(m, verb, 1);
	fclose(m);
	const char *p = text ? strstr(text, "adopts it;") : NULL;
	p = p ? strstr(p, "\n\n") : NULL;
	put_lat_options(out, p ? p + 2 : text ? text : "");
	free(text);
}

int gdr_lat_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

int gdr_lat_opts_check(const struct gdr_opts *o)
{
	for (size_t i = 0; i < GDR_ARRAY_SIZE(refused); i++) {
		if (o->set & refused[i].bit) {
			gdr_err("%s: not a latency option (one message is in flight on QP 0; "
				"see --help)",
				refused[i].name);
			return -EINVAL;
		}
	}
	if (o->repeat_min != o->repeat) {
		/* A latency row is every sample of every repeat: it has no rounds to pair. */
		gdr_err("--repeat %u:%u: the latency tools take --repeat N (rounds until decided "
			"are for the bandwidth tools)",
			o->repeat_min, o->repeat);
		return -EINVAL;
	}
	if (o->bounce_copy != GDR_BOUNCE_COPY_CE) {
		/* A latency sample's copies are the copy engines' (docs/bounce.md). */
		gdr_err("--bounce-copy=sm: not a latency option (the latency tools copy with the "
			"copy engines)");
		return -EINVAL;
	}
	return 0;
}
