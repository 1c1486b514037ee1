/*
 * Launched pairs' results at rank 0: each rank's rows packed for the MPI
 * gather, checked when they arrive, and the node-to-node sum over pairs.
 * No MPI here, so that all of it is tested without a launcher.
 */
#include "config.h"

#include "launch.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* What leads every packed buffer; a rank of another build is refused, not misread. */
struct pack_hdr {
	char magic[8];	   /* "gdrrows" */
	char version[16];  /* PACKAGE_VERSION */
	uint32_t row_size; /* sizeof(struct gdr_result) */
	uint32_t nrows;
	int32_t status;
	uint32_t lost;
};

static const char pack_magic[8] = "gdrrows";

int gdr_rows_add(struct gdr_rank_rows *rr, const struct gdr_result *r)
{
	if (rr->nrows == rr->cap) {
		unsigned int cap = rr->cap ? rr->cap * 2 : 64;
		struct gdr_result *n = cap > rr->cap ? realloc(rr->rows, cap * sizeof(*n)) : NULL;

		if (!n) {
			rr->lost++;
			return -ENOMEM;
		}
		rr->rows = n;
		rr->cap = cap;
	}
	rr->rows[rr->nrows++] = *r;
	return 0;
}

void gdr_rows_free(struct gdr_rank_rows *rr)
{
	free(rr->rows);
	rr->rows = NULL;
	rr->nrows = rr->cap = 0;
}

int gdr_rows_pack(const struct gdr_rank_rows *rr, void **buf, size_t *len)
{
	struct pack_hdr h;
	size_t body = (size_t)rr->nrows * sizeof(struct gdr_result);
	char *b;

	/* MPI counts are int. */
	if (rr->nrows > (INT32_MAX - sizeof(h)) / sizeof(struct gdr_result))
		return -EOVERFLOW;
	b = malloc(sizeof(h) + body);
	if (!b)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, pack_magic, sizeof(h.magic));
	gdr_strlcpy(h.version, PACKAGE_VERSION, sizeof(h.version));
	h.row_size = sizeof(struct gdr_result);
	h.nrows = rr->nrows;
	h.status = rr->status;
	h.lost = (uint32_t)rr->lost;
	memcpy(b, &h, sizeof(h));
	if (body)
		memcpy(b + sizeof(h), rr->rows, body);
	*buf = b;
	*len = sizeof(h) + body;
	return 0;
}

#define TERMINATE(r, f) ((r)->f[sizeof((r)->f) - 1] = '\0')

/* A row read off the wire is printed and written: every string must end in the struct. */
static void terminate_strings(struct gdr_result *r)
{
	TERMINATE(r, timestamp);
	TERMINATE(r, host);
	TERMINATE(r, peer);
	TERMINATE(r, role);
	TERMINATE(r, verb);
	TERMINATE(r, path);
	TERMINATE(r, path_remote);
	TERMINATE(r, gpu);
	TERMINATE(r, gpu_bus_id);
	TERMINATE(r, gpu_name);
	TERMINATE(r, nic);
	TERMINATE(r, nic_bus_id);
	TERMINATE(r, distance);
	TERMINATE(r, pcie_bridges);
	TERMINATE(r, gpu_numa);
	TERMINATE(r, nic_numa);
	TERMINATE(r, status);
	TERMINATE(r, note);
	TERMINATE(r, label);
	TERMINATE(r, version);
	TERMINATE(r, reg_call);
	TERMINATE(r, gpu_alloc);
	TERMINATE(r, dmabuf_mapping);
	TERMINATE(r, relaxed_ordering);
	TERMINATE(r, gpu_uuid);
	TERMINATE(r, cuda_driver);
	TERMINATE(r, kernel);
	TERMINATE(r, libibverbs);
	TERMINATE(r, nic_fw);
	TERMINATE(r, tos);
	TERMINATE(r, bounce_chunk);
	TERMINATE(r, bounce_copy);
	TERMINATE(r, bounce_blocks);
	TERMINATE(r, gpu_remote);
	TERMINATE(r, gpu_bus_id_remote);
	TERMINATE(r, gpu_name_remote);
	TERMINATE(r, nic_remote);
	TERMINATE(r, distance_remote);
}

int gdr_rows_unpack(const void *buf, size_t len, struct gdr_rank_rows *rr, char *why, size_t wlen)
{
	struct pack_hdr h;
	const char *b = buf;

	memset(rr, 0, sizeof(*rr));
	rr->status = -1;
	if (len < sizeof(h)) {
		snprintf(why, wlen, "%zu bytes, shorter than a header", len);
		return -EPROTO;
	}
	memcpy(&h, b, sizeof(h));
	h.version[sizeof(h.version) - 1] = '\0';
	if (memcmp(h.magic, pack_magic, sizeof(h.magic))) {
		snprintf(why, wlen, "not a gdrperf row buffer");
		return -EPROTO;
	}
	if (strcmp(h.version, PACKAGE_VERSION) || h.row_size != sizeof(struct gdr_result)) {
		snprintf(why, wlen,
			 "rows of gdrperf %s (row %u bytes), this is %s (row %zu bytes): run the "
			 "same build on every node",
			 h.version, h.row_size, PACKAGE_VERSION, sizeof(struct gdr_result));
		return -EPROTO;
	}
	if ((len - sizeof(h)) / sizeof(struct gdr_result) != h.nrows ||
	    (len - sizeof(h)) % sizeof(struct gdr_result)) {
		snprintf(why, wlen, "%zu bytes do not hold the %u rows the header announces", len,
			 h.nrows);
		return -EPROTO;
	}
	if (h.nrows) {
		rr->rows = malloc((size_t)h.nrows * sizeof(struct gdr_result));
		if (!rr->rows) {
			snprintf(why, wlen, "out of memory for %u rows", h.nrows);
			return -ENOMEM;
		}
		memcpy(rr->rows, b + sizeof(h), (size_t)h.nrows * sizeof(struct gdr_result));
		for (unsigned int i = 0; i < h.nrows; i++)
			terminate_strings(&rr->rows[i]);
	}
	rr->nrows = rr->cap = h.nrows;
	rr->status = h.status;
	rr->lost = (int)h.lost;
	return 0;
}

static int counts(const struct gdr_result *r)
{
	return !strcmp(r->status, "ok");
}

/* Is r a row of line a: its verb, size and combination (the client's path, the server's)? */
static int same_line(const struct gdr_agg *a, const struct gdr_result *r)
{
	int srv = !strcmp(r->role, "server");
	const char *cp = srv && r->path_remote[0] ? r->path_remote : r->path;
	const char *sp = srv || !r->path_remote[0] ? r->path : r->path_remote;

	return a->size_bytes == r->size_bytes && !strcmp(a->verb, r->verb) &&
	       !strcmp(a->path, cp) && !strcmp(a->path_server, sp);
}

/* The row of pair p that counts for line a: its client's, else its server's. */
static const struct gdr_result *pair_row(const struct gdr_rank_rows *ranks, unsigned int npairs,
					 unsigned int p, const struct gdr_agg *a)
{
	const struct gdr_result *pick = NULL;

	for (unsigned int side = 0; side < 2 && !pick; side++) {
		const struct gdr_rank_rows *rr = &ranks[side ? p : p + npairs];

		for (unsigned int i = 0; i < rr->nrows; i++) {
			const struct gdr_result *r = &rr->rows[i];

			if (!same_line(a, r))
				continue;
			/* One row per size and path; a measured one wins over a failed retry. */
			if (!pick || (counts(r) && !counts(pick)))
				pick = r;
		}
	}
	return pick;
}

static void note_left_out(struct gdr_agg *a, unsigned int p, const struct gdr_result *r,
			  const struct gdr_rank_rows *ranks, unsigned int npairs)
{
	size_t n = strlen(a->left_out);
	char what[320];

	if (r)
		snprintf(what, sizeof(what), "pair %u: %s%s%.240s%s", p, r->status,
			 r->note[0] ? " (" : "", r->note, r->note[0] ? ")" : "");
	else
		snprintf(what, sizeof(what), "pair %u: no row%s", p,
			 ranks[p].status || ranks[p + npairs].status ? " (a rank failed)" : "");
	snprintf(a->left_out + n, sizeof(a->left_out) - n, "%s%s", n ? "; " : "", what);
}

static int find_line(const struct gdr_agg *lines, unsigned int n, const struct gdr_result *r)
{
	for (unsigned int i = 0; i < n; i++)
		if (same_line(&lines[i], r))
			return (int)i;
	return -1;
}

int gdr_rows_aggregate(const struct gdr_rank_rows *ranks, unsigned int nranks, struct gdr_agg **out,
		       unsigned int *n)
{
	unsigned int npairs = nranks / 2, nl = 0, cap = 0;
	struct gdr_agg *lines = NULL;

	*out = NULL;
	*n = 0;
	if (nranks < 2 || nranks % 2)
		return -EINVAL;
	for (unsigned int k = 0; k < nranks; k++) {
		for (unsigned int i = 0; i < ranks[k].nrows; i++) {
			const struct gdr_result *r = &ranks[k].rows[i];

			if (find_line(lines, nl, r) >= 0)
				continue;
			if (nl == cap) {
				unsigned int c = cap ? cap * 2 : 32;
				struct gdr_agg *m = realloc(lines, c * sizeof(*m));

				if (!m) {
					free(lines);
					return -ENOMEM;
				}
				lines = m;
				cap = c;
			}
			memset(&lines[nl], 0, sizeof(lines[nl]));
			int srv = !strcmp(r->role, "server") && r->path_remote[0];

			gdr_strlcpy(lines[nl].verb, r->verb, sizeof(lines[nl].verb));
			gdr_strlcpy(lines[nl].path, srv ? r->path_remote : r->path,
				    sizeof(lines[nl].path));
			gdr_strlcpy(lines[nl].path_server,
				    srv || !r->path_remote[0] ? r->path : r->path_remote,
				    sizeof(lines[nl].path_server));
			lines[nl].size_bytes = r->size_bytes;
			nl++;
		}
	}
	for (unsigned int i = 0; i < nl; i++) {
		for (unsigned int p = 0; p < npairs; p++) {
			const struct gdr_result *r = pair_row(ranks, npairs, p, &lines[i]);

			if (r && counts(r)) {
				lines[i].total_gbps += r->bw_avg_gbps;
				lines[i].npairs++;
			} else {
				note_left_out(&lines[i], p, r, ranks, npairs);
			}
		}
	}
	*out = lines;
	*n = nl;
	return 0;
}

void gdr_rows_print(FILE *out, const struct gdr_rank_rows *ranks, unsigned int nranks, int gbits)
{
	unsigned int npairs = nranks / 2, nl = 0;
	struct gdr_agg *lines;
	/* MB/sec is perftest's 2^20 bytes/s, as in the per-rank table. */
	double k = gbits ? 1.0 : GDR_MBPS_PER_GBPS;
	const char *unit = gbits ? "Gb/sec" : "MB/sec";

	fprintf(out, "gather: rank 0 has the rows of all %u ranks (%u pair(s))\n", nranks, npairs);
	for (unsigned int p = 0; p < npairs; p++) {
		for (unsigned int side = 0; side < 2; side++) {
			unsigned int rank = side ? p + npairs : p;
			const struct gdr_rank_rows *rr = &ranks[rank];

			fprintf(out, "pair %u %s (rank %u): %u row(s)%s\n", p,
				side ? "client" : "server", rank, rr->nrows,
				rr->status < 0	 ? ", sent nothing usable"
				: rr->status > 0 ? ", the rank failed (its messages say why)"
						 : "");
			if (!rr->nrows)
				continue;
			/* Latency tools' rows (lat_loop.h) have their own table. */
			int lat = 0, flags = gbits;

			for (unsigned int i = 0; i < rr->nrows; i++) {
				lat |= rr->rows[i].lat_p50_us > 0;
				if (rr->rows[i].path_remote[0] &&
				    strcmp(rr->rows[i].path, rr->rows[i].path_remote))
					flags |= GDR_TABLE_PAIRS;
			}

			if (lat)
				gdr_table_header_lat(out, flags);
			else
				gdr_table_header(out, flags);
			for (unsigned int i = 0; i < rr->nrows; i++) {
				if (lat)
					gdr_table_row_lat(out, &rr->rows[i], flags);
				else
					gdr_table_row(out, &rr->rows[i], flags);
			}
		}
	}
	if (gdr_rows_aggregate(ranks, nranks, &lines, &nl)) {
		fprintf(out, "aggregate: out of memory\n");
		return;
	}
	fprintf(out,
		"aggregate: node to node, %u pair(s) at once; total = sum over pairs of each "
		"pair's client BW average[%s]\n",
		npairs, unit);
	fprintf(out, " %-6s %-8s %-10s %-16s %-6s %s\n", "verb", "path", "#bytes", "total", "pairs",
		"left out");
	for (unsigned int i = 0; i < nl; i++) {
		char total[32] = "-";

		/* Latency rows carry no bandwidth to add up: "-". */
		if (lines[i].npairs && lines[i].total_gbps >= 0 && lines[i].total_gbps < 1e12)
			snprintf(total, sizeof(total), "%.3f", lines[i].total_gbps * k);
		char path[40];

		/* A combination of two paths (issue 48): client:server. */
		if (strcmp(lines[i].path, lines[i].path_server))
			snprintf(path, sizeof(path), "%s:%s", lines[i].path, lines[i].path_server);
		else
			gdr_strlcpy(path, lines[i].path, sizeof(path));
		fprintf(out, " %-6s %-8s %-10llu %-16s %u/%-4u %s\n", lines[i].verb, path,
			(unsigned long long)lines[i].size_bytes, total, lines[i].npairs, npairs,
			lines[i].left_out);
	}
	free(lines);
}
