#include "config.h"

#include "sweep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int gdr_sweep_mode_parse(const char *s)
{
	if (!strcmp(s, "fixed"))
		return GDR_SWEEP_FIXED;
	if (!strcmp(s, "pairs"))
		return GDR_SWEEP_PAIRS;
	if (!strcmp(s, "ring"))
		return GDR_SWEEP_RING;
	return -EINVAL;
}

const char *gdr_sweep_mode_name(enum gdr_sweep_mode m)
{
	switch (m) {
	case GDR_SWEEP_PAIRS:
		return "pairs";
	case GDR_SWEEP_RING:
		return "ring";
	default:
		return "fixed";
	}
}

/* Rounds of one pass (the roles as first assigned). */
static unsigned int pass_rounds(enum gdr_sweep_mode mode, unsigned int m)
{
	if (m < 2 || m > GDR_SWEEP_MAX_NODES)
		return 0;
	switch (mode) {
	case GDR_SWEEP_PAIRS:
		return m % 2 ? m : m - 1;
	case GDR_SWEEP_RING:
		return m == 2 ? 1 : m % 2 ? 3 : 2;
	default:
		return 0;
	}
}

double gdr_sweep_time(unsigned int rounds, unsigned int nmem, unsigned int nsizes,
		      unsigned int repeat, double duration)
{
	return (double)rounds * nmem * (GDR_SWEEP_SETUP_S + (double)nsizes * repeat * duration);
}

int gdr_sweep_budget(double budget, unsigned int rounds, unsigned int nmem, unsigned int nsizes,
		     unsigned int repeat, double *duration, char *why, size_t wlen)
{
	double per, d;

	if (!rounds || !nmem || !nsizes || !repeat) {
		snprintf(why, wlen,
			 "nothing to measure (%u rounds, %u paths, %u sizes, %u repeats)", rounds,
			 nmem, nsizes, repeat);
		return -EINVAL;
	}
	/* What one measurement may take once every path of every round has connected. */
	per = (double)nsizes * repeat * nmem * rounds;
	d = (budget - gdr_sweep_time(rounds, nmem, nsizes, repeat, 0)) / per;
	if (d > 86400)
		d = 86400;
	/* Hundredths, rounded down (plus a hair for the division's rounding error). */
	if (d > 0)
		d = (double)(long long)(d * 100 + 1e-6) / 100;
	if (!(d >= GDR_SWEEP_MIN_D)) {
		snprintf(
		    why, wlen,
		    "%.0f s cannot hold %u round(s) x %u path(s) (%.0f s each to connect) with "
		    "%u size(s) x %u repeat(s) of at least %.1f s: it takes %.0f s or more",
		    budget, rounds, nmem, GDR_SWEEP_SETUP_S, nsizes, repeat, GDR_SWEEP_MIN_D,
		    gdr_sweep_time(rounds, nmem, nsizes, repeat, GDR_SWEEP_MIN_D) + 0.5);
		return -ERANGE;
	}
	*duration = d;
	return 0;
}

unsigned int gdr_sweep_rounds(enum gdr_sweep_mode mode, unsigned int m, int both)
{
	return pass_rounds(mode, m) * (both ? 2 : 1);
}

/*
 * The circle method: with n = m rounded up to even, node n - 1 stays put and
 * meets node r in round r; every other node x meets the node y with
 * x + y = 2r (mod n - 1). Node m (only there for odd m) is a bye.
 */
static int pairs_peer(unsigned int m, unsigned int r, unsigned int x)
{
	unsigned int n = m % 2 ? m + 1 : m, k = n - 1, y;

	if (x == n - 1)
		y = r;
	else if (x == r)
		y = n - 1;
	else
		y = (2 * r + k - x % k) % k;
	return y >= m ? -1 : (int)y;
}

/* Ring edge i joins node i (client) to node i + 1 (server); its round. */
static unsigned int ring_edge_round(unsigned int m, unsigned int i)
{
	if (m == 2)
		return 0;
	if (m % 2 && i == m - 1)
		return 2;
	return i % 2;
}

static int ring_peer(unsigned int m, unsigned int r, unsigned int x, int *serves)
{
	unsigned int edges = m == 2 ? 1 : m, prev = (x + m - 1) % m;

	if (x < edges && ring_edge_round(m, x) == r) {
		*serves = 0;
		return (int)((x + 1) % m);
	}
	if (prev < edges && ring_edge_round(m, prev) == r) {
		*serves = 1;
		return (int)prev;
	}
	return -1;
}

int gdr_sweep_peer(enum gdr_sweep_mode mode, unsigned int m, int both, unsigned int round,
		   unsigned int node, int *serves)
{
	unsigned int per = pass_rounds(mode, m), r, pass;
	int peer = -1;

	*serves = 0;
	if (!per || node >= m || round >= per * (both ? 2u : 1u))
		return -1;
	pass = round / per;
	r = round % per;
	if (mode == GDR_SWEEP_PAIRS) {
		peer = pairs_peer(m, r, node);
		*serves = peer >= 0 && node < (unsigned int)peer;
	} else {
		peer = ring_peer(m, r, node, serves);
	}
	if (peer < 0) {
		*serves = 0;
		return -1;
	}
	if (pass)
		*serves = !*serves;
	return peer;
}

/* Node names sorted for lookup. */
struct name_ix {
	const char *name;
	unsigned int node;
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct name_ix *)a)->name, ((const struct name_ix *)b)->name);
}

static int node_of(const struct name_ix *ix, unsigned int m, const char *name)
{
	struct name_ix key = { .name = name };
	const struct name_ix *hit = bsearch(&key, ix, m, sizeof(*ix), name_cmp);

	return hit ? (int)hit->node : -1;
}

static struct gdr_sweep_view *view_for(struct gdr_sweep_report *rep, const struct gdr_result *r,
				       int create)
{
	struct gdr_sweep_view *v;

	for (unsigned int i = 0; i < rep->nviews; i++)
		if (!strcmp(rep->views[i].verb, r->verb) && !strcmp(rep->views[i].path, r->path))
			return &rep->views[i];
	if (!create)
		return NULL;
	v = realloc(rep->views, (rep->nviews + 1) * sizeof(*v));
	if (!v)
		return NULL;
	rep->views = v;
	v = &rep->views[rep->nviews];
	memset(v, 0, sizeof(*v));
	v->m = rep->m;
	v->cell = calloc((size_t)rep->m * rep->m, sizeof(*v->cell));
	if (!v->cell)
		return NULL;
	for (size_t i = 0; i < (size_t)rep->m * rep->m; i++)
		v->cell[i].gbps = -1;
	gdr_strlcpy(v->verb, r->verb, sizeof(v->verb));
	gdr_strlcpy(v->path, r->path, sizeof(v->path));
	rep->nviews++;
	return v;
}

/* The sender and receiver of a row's data, from its role and verb. */
static int row_ends(const struct name_ix *ix, unsigned int m, const struct gdr_result *r,
		    unsigned int *from, unsigned int *to)
{
	int self = node_of(ix, m, r->host), peer = node_of(ix, m, r->peer);
	int client = !strcmp(r->role, "client"), write = !strcmp(r->verb, "write");
	int c = client ? self : peer, s = client ? peer : self;

	if (self < 0 || peer < 0 || self == peer)
		return -1;
	/* WRITE: the client writes into the server; READ: the client reads from it. */
	*from = (unsigned int)(write ? c : s);
	*to = (unsigned int)(write ? s : c);
	return 0;
}

static double row_gbps(const struct gdr_result *r)
{
	return r->bw_median_gbps > 0 ? r->bw_median_gbps : r->bw_avg_gbps;
}

static void note_endpoint(char (*dst)[64], unsigned int node, const char *val)
{
	if (val[0] && !dst[node][0])
		gdr_strlcpy(dst[node], val, sizeof(dst[node]));
}

int gdr_sweep_report_build(struct gdr_sweep_report *rep, const char (*names)[64], unsigned int m,
			   const struct gdr_result *rows, size_t nrows)
{
	struct name_ix *ix;
	unsigned int from, to;

	memset(rep, 0, sizeof(*rep));
	if (m < 2 || m > GDR_SWEEP_MAX_NODES)
		return -EINVAL;
	rep->m = m;
	ix = calloc(m, sizeof(*ix));
	rep->node = calloc(m, sizeof(*rep->node));
	rep->nic = calloc(m, sizeof(*rep->nic));
	rep->gpu = calloc(m, sizeof(*rep->gpu));
	if (!ix || !rep->node || !rep->nic || !rep->gpu)
		goto nomem;
	for (unsigned int i = 0; i < m; i++) {
		gdr_strlcpy(rep->node[i], names[i], sizeof(rep->node[i]));
		ix[i].name = rep->node[i];
		ix[i].node = i;
	}
	qsort(ix, m, sizeof(*ix), name_cmp);
	/* First the largest measured size per verb and path. */
	for (size_t k = 0; k < nrows; k++) {
		const struct gdr_result *r = &rows[k];
		struct gdr_sweep_view *v;

		if (row_ends(ix, m, r, &from, &to))
			continue;
		note_endpoint(rep->nic, (unsigned int)node_of(ix, m, r->host), r->nic);
		note_endpoint(rep->gpu, (unsigned int)node_of(ix, m, r->host), r->gpu);
		v = view_for(rep, r, 1);
		if (!v)
			goto nomem;
		if (!strcmp(r->status, "ok") && r->size_bytes > v->size_bytes)
			v->size_bytes = r->size_bytes;
	}
	/* Client rows are the measurement; a server row fills a cell no client row did. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < nrows; k++) {
			const struct gdr_result *r = &rows[k];
			struct gdr_sweep_view *v;
			struct gdr_sweep_cell *c;

			if (!strcmp(r->role, "client") != !pass || row_ends(ix, m, r, &from, &to))
				continue;
			v = view_for(rep, r, 0);
			if (!v)
				continue;
			c = &v->cell[(size_t)from * m + to];
			if (!strcmp(r->status, "ok")) {
				if (r->size_bytes == v->size_bytes && (pass == 0 || c->gbps < 0)) {
					c->gbps = row_gbps(r);
					c->failed = 0;
				}
			} else if (c->gbps < 0) {
				c->failed = 1;
			}
		}
	}
	free(ix);
	return 0;
nomem:
	free(ix);
	gdr_sweep_report_free(rep);
	return -ENOMEM;
}

void gdr_sweep_report_free(struct gdr_sweep_report *rep)
{
	for (unsigned int i = 0; i < rep->nviews; i++)
		free(rep->views[i].cell);
	free(rep->views);
	free(rep->node);
	free(rep->nic);
	free(rep->gpu);
	memset(rep, 0, sizeof(*rep));
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[n], which it sorts. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

unsigned int gdr_sweep_outliers(const struct gdr_sweep_view *v, double ratio,
				struct gdr_sweep_outlier *out)
{
	size_t cells = (size_t)v->m * v->m, nin, nout;
	double *in = malloc(cells * sizeof(*in)), *rest = malloc(cells * sizeof(*rest));
	unsigned int found = 0;

	if (!in || !rest)
		goto out;
	for (unsigned int n = 0; n < v->m; n++) {
		nin = nout = 0;
		for (unsigned int a = 0; a < v->m; a++)
			for (unsigned int b = 0; b < v->m; b++) {
				double g = v->cell[(size_t)a * v->m + b].gbps;

				if (g < 0)
					continue;
				if (a == n || b == n)
					in[nin++] = g;
				else
					rest[nout++] = g;
			}
		if (!nin || !nout)
			continue;
		out[found].node = n;
		out[found].node_gbps = median(in, nin);
		out[found].ref_gbps = median(rest, nout);
		if (out[found].node_gbps < ratio * out[found].ref_gbps)
			found++;
	}
out:
	free(in);
	free(rest);
	return found;
}

static void print_matrix(FILE *out, const struct gdr_sweep_report *rep,
			 const struct gdr_sweep_view *v)
{
	char sz[32];
	int w = 8;

	for (unsigned int i = 0; i < rep->m; i++) {
		int len = (int)strlen(rep->node[i]);

		if (len > w)
			w = len > 16 ? 16 : len;
	}
	fprintf(out, "sweep: %s %s at %s, median Gb/s (row sends to column; x = failed)\n", v->verb,
		v->path, gdr_fmt_size(v->size_bytes, sz, sizeof(sz)));
	fprintf(out, "  %-*s", w, "");
	for (unsigned int b = 0; b < rep->m; b++)
		fprintf(out, " %*.*s", w, w, rep->node[b]);
	fputc('\n', out);
	for (unsigned int a = 0; a < rep->m; a++) {
		fprintf(out, "  %-*.*s", w, w, rep->node[a]);
		for (unsigned int b = 0; b < rep->m; b++) {
			const struct gdr_sweep_cell *c = &v->cell[(size_t)a * rep->m + b];

			if (c->gbps >= 0)
				fprintf(out, " %*.3f", w, c->gbps);
			else
				fprintf(out, " %*s", w, c->failed ? "x" : "-");
		}
		fputc('\n', out);
	}
}

void gdr_sweep_report_print(FILE *out, const struct gdr_sweep_report *rep, double ratio)
{
	struct gdr_sweep_outlier *o = calloc(rep->m ? rep->m : 1, sizeof(*o));
	unsigned int slow = 0;

	for (unsigned int i = 0; i < rep->nviews; i++) {
		const struct gdr_sweep_view *v = &rep->views[i];
		unsigned int n;

		print_matrix(out, rep, v);
		for (unsigned int a = 0; a < rep->m; a++)
			for (unsigned int b = 0; b < rep->m; b++)
				if (v->cell[(size_t)a * rep->m + b].failed)
					fprintf(out, "sweep: failed: %s -> %s (%s %s)\n",
						rep->node[a], rep->node[b], v->verb, v->path);
		n = o ? gdr_sweep_outliers(v, ratio, o) : 0;
		for (unsigned int k = 0; k < n; k++, slow++)
			fprintf(out,
				"sweep: slow node: %s (NIC %s, GPU %s): median %.3f Gb/s = %.2f x "
				"the pairs without it (%.3f Gb/s) [%s %s]\n",
				rep->node[o[k].node],
				rep->nic[o[k].node][0] ? rep->nic[o[k].node] : "?",
				rep->gpu[o[k].node][0] ? rep->gpu[o[k].node] : "-", o[k].node_gbps,
				o[k].node_gbps / o[k].ref_gbps, o[k].ref_gbps, v->verb, v->path);
	}
	if (!slow)
		fprintf(out,
			"sweep: no slow node (threshold %.2f x the pairs without each node%s)\n",
			ratio, rep->m < 3 ? "; 2 nodes: a slow pair names no node" : "");
	free(o);
}
