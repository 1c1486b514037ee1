/*
 * ab_sim: synthetic gdr_write_bw runs with a known truth, for the verdict's
 * simulation test (tests/scripts/t_ab_sim.sh, docs/gdr-ab.md "How well it
 * decides"). Each run is what a client of `gdr_write_bw --mem all` writes
 * at 64 KiB, 1 MiB and 8 MiB: the paths take turns as the session orders
 * them (gdr_turn), each size takes its rounds by the bench's own rule
 * (gdr_decide_size, rounds until decided) or a fixed count, and the rows go
 * out through the bench's CSV writer. Only the bandwidths are made up: base
 * x truth x drift x (1 + CV x N(0,1)), one repeat a second.
 *
 *   ab_sim SCENARIO RUNS SEED [--repeat N|MIN:MAX] [--cv PCT] [--paths N]
 *          [--old-layout]                            (CSV on stdout)
 *   ab_sim --list
 *
 * Every run gets its own run_id, so one file holds a scenario's runs.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "util.h"

#define NPATHS 4
#define NSIZES 3

static const char *const path_names[NPATHS] = { "host", "dmabuf", "peermem", "bounce" };
static const uint64_t sizes[NSIZES] = { 65536, 1048576, 8388608 };
/* Host memory's Gb/s at each size, as a 100 Gb/s port gives it. */
static const double base_gbps[NSIZES] = { 62.0, 94.0, 96.5 };

enum drift { DRIFT_NONE, DRIFT_TURNS, DRIFT_PATH_MAJOR };

struct scenario {
	const char *name;
	double truth[NPATHS]; /* each path's bandwidth over host's */
	double cv;	      /* the noise of one repeat */
	enum drift drift;     /* 10 % down over 60 repeats, linear */
	const char *doc;
	double shared; /* the noise of one round, the same for its paths (0: none) */
	/* Each side its own memory: the paths' local and remote names (NULL: path_names). */
	const char *const *local, *const *remote;
};

/* A half-migrated pair (issue 48): DMA-BUF on one node, peermem on the other. */
static const char *const mig_local[NPATHS] = { "host", "dmabuf", "peermem", "dmabuf" };
static const char *const mig_remote[NPATHS] = { "host", "dmabuf", "peermem", "peermem" };

static const struct scenario scenarios[] = {
	{ "equal-cv1", { 1, 1, 1, 1 }, 0.01, DRIFT_NONE, "equal paths, CV 1 %", 0, NULL, NULL },
	{ "equal-cv3", { 1, 1, 1, 1 }, 0.03, DRIFT_NONE, "equal paths, CV 3 %", 0, NULL, NULL },
	{ "equal-cv8", { 1, 1, 1, 1 }, 0.08, DRIFT_NONE, "equal paths, CV 8 %", 0, NULL, NULL },
	{ "drift-turns",
	  { 1, 1, 1, 1 },
	  0.03,
	  DRIFT_TURNS,
	  "equal paths in turns, CV 3 %, 10 % drift over 60 repeats",
	  0,
	  NULL,
	  NULL },
	{ "drift-path-major",
	  { 1, 1, 1, 1 },
	  0.03,
	  DRIFT_PATH_MAJOR,
	  "equal paths one after another, CV 3 %, 10 % drift over 60 repeats",
	  0,
	  NULL,
	  NULL },
	{ "gap-cv1",
	  { 1, 0.90, 1, 1 },
	  0.01,
	  DRIFT_NONE,
	  "dmabuf 0.90x host, CV 1 %",
	  0,
	  NULL,
	  NULL },
	{ "gap-cv3",
	  { 1, 0.90, 1, 1 },
	  0.03,
	  DRIFT_NONE,
	  "dmabuf 0.90x host, CV 3 %",
	  0,
	  NULL,
	  NULL },
	{ "bounce-half",
	  { 1, 1, 1, 0.50 },
	  0.03,
	  DRIFT_NONE,
	  "bounce 0.50x host, CV 3 %",
	  0,
	  NULL,
	  NULL },
	{ "bounce-above",
	  { 1, 1, 1, 1.30 },
	  0.03,
	  DRIFT_NONE,
	  "bounce 1.30x host (impossible), CV 3 %",
	  0,
	  NULL,
	  NULL },
	{ "gap-shared",
	  { 1, 0.90, 1, 1 },
	  0.01,
	  DRIFT_NONE,
	  "dmabuf 0.90x host, CV 1 % per repeat and 5 % per round (the machine)",
	  0.05,
	  NULL,
	  NULL },
	{ "migration",
	  { 1, 1, 0.97, 0.90 },
	  0.01,
	  DRIFT_NONE,
	  "dmabuf, peermem 0.97x and dmabuf:peermem 0.90x host, CV 1 %",
	  0,
	  mig_local,
	  mig_remote },
};

/* splitmix64: a stream per seed, the same on every machine. */
static uint64_t next_u64(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *st)
{
	return ((double)(next_u64(st) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(uint64_t *st)
{
	double u = uniform(st), v = uniform(st);

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

struct run {
	const struct scenario *sc;
	struct gdr_decide rule;
	unsigned int fixed; /* rounds when the rule does not apply */
	int decide;
	int old_layout;	     /* --old-layout: no run_id, looks, stop or rounds */
	unsigned int npaths; /* --paths N: the first N of path_names (2..4) */
	uint64_t rng;
	double t;     /* the run's clock: one repeat a second */
	double round; /* this round's factor (the scenario's shared noise) */
	double bps[NPATHS][GDR_REP_KEEP];
	double t0[NPATHS][GDR_REP_KEEP], t1[NPATHS][GDR_REP_KEEP];
	int order[NPATHS];
};

/* A round's share of the machine's noise (the same for its paths): 1 without it. */
static double round_factor(struct run *ru)
{
	return ru->sc->shared > 0 ? 1.0 + ru->sc->shared * gauss(&ru->rng) : 1.0;
}

/* One repeat of path p at size si: its Gb/s, and its place on the clock. */
static void repeat(struct run *ru, unsigned int p, unsigned int si, unsigned int rep)
{
	const struct scenario *sc = ru->sc;
	double drift = sc->drift == DRIFT_NONE ? 1.0 : 1.0 - 0.10 * ru->t / 60.0;
	double g =
	    base_gbps[si] * sc->truth[p] * drift * ru->round * (1.0 + sc->cv * gauss(&ru->rng));

	ru->bps[p][rep] = g > 0.001 ? g : 0.001;
	ru->t0[p][rep] = ru->t + 0.01;
	ru->t += 1.0;
	ru->t1[p][rep] = ru->t - 0.01;
}

static void emit(const struct run *ru, unsigned int run_no, unsigned int p, unsigned int si,
		 unsigned int n, const char *stop)
{
	struct gdr_result r;
	struct gdr_stats st;
	char line[GDR_CSV_ROW_MAX];

	gdr_result_init(&r);
	gdr_strlcpy(r.timestamp, "2026-12-06T12:00:00Z", sizeof(r.timestamp));
	gdr_strlcpy(r.host, "simhost", sizeof(r.host));
	gdr_strlcpy(r.peer, "simpeer", sizeof(r.peer));
	gdr_strlcpy(r.role, "client", sizeof(r.role));
	gdr_strlcpy(r.verb, "write", sizeof(r.verb));
	gdr_strlcpy(r.path, ru->sc->local ? ru->sc->local[p] : path_names[p], sizeof(r.path));
	gdr_strlcpy(r.path_remote, ru->sc->remote ? ru->sc->remote[p] : path_names[p],
		    sizeof(r.path_remote));
	gdr_strlcpy(r.version, PACKAGE_VERSION, sizeof(r.version));
	gdr_strlcpy(r.nic, "mlx5_0", sizeof(r.nic));
	if (p) {
		gdr_strlcpy(r.gpu, "0", sizeof(r.gpu));
		gdr_strlcpy(r.gpu_name, "NVIDIA H100 80GB HBM3", sizeof(r.gpu_name));
		gdr_strlcpy(r.gpu_uuid, "GPU-00112233-4455-6677-8899-aabbccddee00",
			    sizeof(r.gpu_uuid));
	}
	r.size_bytes = sizes[si];
	r.iters = 5000;
	r.qps = 1;
	r.tx_depth = 128;
	r.post_list = 1;
	r.repeats = n;
	gdr_stats_compute(ru->bps[p], n, &st);
	r.bw_avg_gbps = st.avg;
	r.bw_median_gbps = st.median;
	r.bw_min_gbps = st.min;
	r.bw_max_gbps = st.max;
	r.bw_peak_gbps = st.max;
	r.msg_rate_mpps = st.avg * 1e9 / 8 / (double)sizes[si] / 1e6;
	r.cpu_util_pct = p == 3 ? 55.0 : 30.0;
	/* No ceiling: Gaussian noise knows none, a real link would (ceiling_gbps empty). */
	r.ceiling_gbps = -1;
	r.t_start_s = ru->t0[p][0];
	r.t_end_s = ru->t1[p][n - 1];
	r.order = ru->order[p];
	if (ru->sc->drift == DRIFT_PATH_MAJOR)
		gdr_strlcpy(r.note,
			    "path-major: neither side could hold every path's buffers at once",
			    sizeof(r.note));
	snprintf(r.run_id, sizeof(r.run_id), "%016" PRIx64, gdr_run_id(run_no, 51));
	r.looks = ru->decide ? gdr_decide_k(&ru->rule) : 1;
	gdr_strlcpy(r.stop, stop, sizeof(r.stop));
	if (ru->old_layout) {
		/* A file of gdrperf before issue 51: each row's summary, no rounds. */
		r.run_id[0] = r.stop[0] = '\0';
		r.looks = 0;
		n = 0;
	}
	r.nrep = n;
	for (unsigned int k = 0; k < n; k++) {
		r.rep_bw_gbps[k] = ru->bps[p][k];
		r.rep_t_start_s[k] = ru->t0[p][k];
		r.rep_t_end_s[k] = ru->t1[p][k];
	}
	if (gdr_csv_format(&r, line, sizeof(line)) > 0)
		fputs(line, stdout);
}

/* The rounds of one size, as run_in_turns (session_order.c) takes them. */
static void size_in_turns(struct run *ru, unsigned int run_no, unsigned int si, unsigned int *g)
{
	const int ok[NPATHS] = { 1, 1, 1, 1 };
	const double *bps[NPATHS] = { ru->bps[0], ru->bps[1], ru->bps[2], ru->bps[3] };
	unsigned int n = ru->npaths, family = gdr_decide_family(NSIZES, n), rep;
	const char *stop = "fixed";

	for (rep = 0;; rep++) {
		ru->round = round_factor(ru);
		for (unsigned int pos = 0; pos < n; pos++) {
			unsigned int p = gdr_turn(n, *g + rep, pos);

			if (rep == 0)
				ru->order[p] = (int)pos;
			repeat(ru, p, si, rep);
		}
		if (!ru->decide) {
			if (rep + 1 == ru->fixed)
				break;
			continue;
		}
		if (!gdr_decide_is_look(&ru->rule, rep + 1))
			continue;
		if (gdr_decide_size(&ru->rule, family, bps, ok, n, 0, rep + 1) > 0) {
			stop = "decided";
			break;
		}
		if (rep + 1 >= ru->rule.max) {
			stop = "max rounds";
			break;
		}
	}
	*g += rep + 1;
	for (unsigned int p = 0; p < n; p++)
		emit(ru, run_no, p, si, rep + 1, stop);
}

static void one_run(struct run *ru, unsigned int run_no)
{
	unsigned int g = 0;

	ru->t = 0;
	if (ru->sc->drift != DRIFT_PATH_MAJOR) {
		for (unsigned int si = 0; si < NSIZES; si++)
			size_in_turns(ru, run_no, si, &g);
		return;
	}
	/* One after another: the rule cannot pair rounds; the fewest rounds, fixed. */
	for (unsigned int p = 0; p < ru->npaths; p++) {
		for (unsigned int si = 0; si < NSIZES; si++) {
			ru->order[p] = (int)p;
			for (unsigned int rep = 0; rep < ru->fixed; rep++) {
				ru->round = round_factor(ru);
				repeat(ru, p, si, rep);
			}
			emit(ru, run_no, p, si, ru->fixed, "fixed");
		}
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: ab_sim SCENARIO RUNS SEED [--repeat N|MIN:MAX] [--cv PCT] "
			"[--paths N] [--old-layout]\n"
			"       ab_sim --list\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct scenario sc;
	static struct run ru;
	unsigned int min = GDR_ROUNDS_MIN, max = GDR_ROUNDS_MAX, runs;
	const struct scenario *found = NULL;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
			printf("%s\t%s\n", scenarios[i].name, scenarios[i].doc);
		return 0;
	}
	if (argc < 4)
		return usage();
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		if (!strcmp(scenarios[i].name, argv[1]))
			found = &scenarios[i];
	}
	if (!found) {
		fprintf(stderr, "ab_sim: %s: no such scenario (--list)\n", argv[1]);
		return 2;
	}
	sc = *found;
	runs = (unsigned int)strtoul(argv[2], NULL, 10);
	ru.rng = strtoull(argv[3], NULL, 10);
	for (int i = 4; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(opt, "--old-layout")) {
			ru.old_layout = 1;
			continue;
		}
		if (!val)
			return usage();
		i++;
		if (!strcmp(opt, "--repeat")) {
			if (sscanf(val, "%u:%u", &min, &max) == 1)
				max = min;
		} else if (!strcmp(opt, "--cv")) {
			sc.cv = strtod(val, NULL) / 100.0;
		} else if (!strcmp(opt, "--paths")) {
			ru.npaths = (unsigned int)strtoul(val, NULL, 10);
		} else {
			return usage();
		}
	}
	if (!ru.npaths)
		ru.npaths = NPATHS;
	if (ru.npaths < 2 || ru.npaths > NPATHS)
		return usage();
	ru.sc = &sc;
	ru.decide = min != max && sc.drift != DRIFT_PATH_MAJOR;
	ru.fixed = min;
	if (min > GDR_REP_KEEP || max > GDR_REP_KEEP || min == 0 ||
	    (ru.decide && gdr_decide_init(&ru.rule, min, max, 0.01, 0.05))) {
		fprintf(stderr, "ab_sim: --repeat %u:%u out of range\n", min, max);
		return 2;
	}
	printf("%s\n", gdr_csv_header());
	for (unsigned int i = 0; i < runs; i++)
		one_run(&ru, i);
	return 0;
}
