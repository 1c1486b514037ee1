/* Rows: the repeats of one size summed up, and one row per size to the table, CSV and JSON. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bidir.h"
#include "bounce.h"
#include "ceiling.h"
#include "copy_measure.h"
#include "session_int.h"
#include "stats.h"
#include "util.h"

void gdr_sess_meas_from_loop(struct gdr_msg_meas *m, const struct gdr_loop_out *lo, uint64_t ref_ns,
			     uint64_t unc_ns)
{
	m->tl = lo->tl;
	gdr_timeline_rebase(&m->tl, ref_ns, unc_ns);
	m->iters = lo->iters;
	m->bytes = lo->bytes;
	m->elapsed_ns = lo->elapsed_ns;
	/* No peak (NAN: the repeat completed nothing) travels as 0: the wire takes finite
	 * numbers only. */
	m->peak_bps = lo->peak_bps > 0 ? lo->peak_bps : 0;
	m->cpu_pct = lo->cpu_pct;
}

static double meas_bps(const struct gdr_msg_meas *m)
{
	return m->elapsed_ns ? (double)m->bytes * 1e9 / m->elapsed_ns : 0;
}

static void acc_add(struct gdr_acc *a, const struct gdr_msg_meas *cli,
		    const struct gdr_msg_meas *srv, uint64_t size, int bidir)
{
	double bps = meas_bps(cli), peak = cli->peak_bps;
	double msgs = size ? (double)cli->bytes / size : 0;
	double secs = cli->elapsed_ns / 1e9;

	if (bidir) {
		/*
		 * Both directions at once: the pair moves the sum, each direction
		 * over the time both ran (bidir.h). Each side's peak window lies
		 * somewhere in its own run: adding two of them would add rates
		 * that never coexisted; the overlap is the window both share.
		 */
		double dir[2];

		a->apart += !gdr_bidir_rates(&cli->tl, &srv->tl, bps, meas_bps(srv), dir);
		bps = dir[0] + dir[1];
		peak = cli->peak_bps > 0 && srv->peak_bps > 0 ? bps : 0;
		msgs = size ? bps * secs / size : 0;
		a->dir_bps[0] += dir[0];
		a->dir_bps[1] += dir[1];
	}
	a->bps[a->n] = bps;
	if (peak > a->peak_bps)
		a->peak_bps = peak;
	a->mps_sum += secs > 0 ? msgs / secs / 1e6 : 0;
	a->cpu_sum += cli->cpu_pct;
	a->iters = cli->iters;
	a->n++;
}

/* This side's GPU and NIC columns for a path of kind (the topology, then CUDA's view). */
static void local_side(struct sess *s, enum gdr_mem_kind kind, struct gdr_result *r)
{
	gdr_strlcpy(r->nic, s->conn.nic, sizeof(r->nic));
	if (kind == GDR_MEM_HOST || !s->cuda)
		return;
	if (s->have_topo)
		gdr_topo_fill_result(&s->topo, r);
	/* CUDA's own view of the GPU wins over the topology's. */
	snprintf(r->gpu, sizeof(r->gpu), "%d", s->gpu.ordinal);
	gdr_strlcpy(r->gpu_bus_id, s->gpu.bus_id, sizeof(r->gpu_bus_id));
	gdr_strlcpy(r->gpu_name, s->gpu.name, sizeof(r->gpu_name));
}

void gdr_sess_side_info(struct sess *s, enum gdr_mem_kind kind, struct gdr_side_info *si)
{
	struct gdr_result r;

	memset(&r, 0, sizeof(r));
	local_side(s, kind, &r);
	gdr_strlcpy(si->gpu, r.gpu, sizeof(si->gpu));
	gdr_strlcpy(si->gpu_bus_id, r.gpu_bus_id, sizeof(si->gpu_bus_id));
	gdr_strlcpy(si->gpu_name, r.gpu_name, sizeof(si->gpu_name));
	gdr_strlcpy(si->nic, r.nic, sizeof(si->nic));
	gdr_strlcpy(si->distance, r.distance, sizeof(si->distance));
}

/* The peer's side of the row's combination, as its BUF told it. */
static void remote_side(const struct sess *s, const struct gdr_path *p, struct gdr_result *r)
{
	const struct gdr_side_info *si = s->cur ? &s->cur->peer_side : NULL;

	gdr_strlcpy(r->path_remote, gdr_mem_kind_name(p->peer_kind), sizeof(r->path_remote));
	if (!si)
		return;
	gdr_strlcpy(r->gpu_remote, si->gpu, sizeof(r->gpu_remote));
	gdr_strlcpy(r->gpu_bus_id_remote, si->gpu_bus_id, sizeof(r->gpu_bus_id_remote));
	gdr_strlcpy(r->gpu_name_remote, si->gpu_name, sizeof(r->gpu_name_remote));
	gdr_strlcpy(r->nic_remote, si->nic, sizeof(r->nic_remote));
	gdr_strlcpy(r->distance_remote, si->distance, sizeof(r->distance_remote));
}

void gdr_sess_row_common(struct sess *s, struct gdr_result *r, const struct gdr_path *p,
			 uint64_t size)
{
	enum gdr_mem_kind kind = p->kind;

	gdr_result_init(r);
	gdr_strlcpy(r->peer, s->conn.peer, sizeof(r->peer));
	gdr_strlcpy(r->role, s->client ? "client" : "server", sizeof(r->role));
	gdr_strlcpy(r->verb, gdr_verb_name((enum gdr_verb)s->plan.verb), sizeof(r->verb));
	gdr_strlcpy(r->path, gdr_mem_kind_name(kind), sizeof(r->path));
	remote_side(s, p, r);
	r->size_bytes = size;
	r->qps = p->ops->qps(&s->plan);
	r->tx_depth = s->plan.tx_depth;
	r->post_list = s->plan.post_list;
	r->bidir = s->plan.bidir;
	r->repeats = s->plan.repeat;
	r->cpu_util_pct = -1;
	if (s->plan.run_id)
		snprintf(r->run_id, sizeof(r->run_id), "%016" PRIx64, s->plan.run_id);
	{
		int tc = gdr_conn_traffic_class(&s->conn);

		if (tc >= 0)
			snprintf(r->tos, sizeof(r->tos), "%u", (unsigned int)(tc & 0xff));
	}
	if (s->run->label)
		gdr_strlcpy(r->label, s->run->label, sizeof(r->label));
	local_side(s, kind, r);
	{
		int drv = 0;

		if (s->cuda)
			gdr_cuda_driver_version(s->cuda, &drv);
		gdr_provenance_fill(r, &s->prov, kind, s->cur_mem, &s->env, drv,
				    s->cuda ? s->gpu.uuid : NULL);
	}
	gdr_ceiling_row(s->conn.verbs, s->conn.port_num, s->conn.nic,
			kind != GDR_MEM_HOST && s->cuda ? s->gpu.bus_id : NULL, r);
	if (kind == GDR_MEM_BOUNCE || p->peer_kind == GDR_MEM_BOUNCE)
		gdr_bounce_fill_row(r, &s->env, size);
	if (kind != GDR_MEM_BOUNCE && p->peer_kind == GDR_MEM_BOUNCE) {
		/*
		 * Only the peer stages: the chunk is the pipeline's, the copies and
		 * their rate (the ceiling's other half) the peer's, in its row.
		 */
		r->bounce_copy[0] = r->bounce_blocks[0] = '\0';
		r->ceiling_gbps = 0;
	}
}

/* A row to the CSV, the JSON and, launched with MPI, to what rank 0 gathers. */
static void record(struct sess *s, const struct gdr_result *r)
{
	if (s->csv && gdr_csv_append(s->csv, r))
		gdr_warn("--csv: could not append a row: %s", gdr_csv_error(s->csv));
	if (s->json)
		gdr_json_add(s->json, r);
	if (s->prom && gdr_prom_rows_add(s->prom, r))
		gdr_warn("--prom: could not keep a row: %s", strerror(ENOMEM));
	if (s->run->sync && s->run->sync->row)
		s->run->sync->row(s->run->sync->ctx, r);
}

/* A measured row: when it ran and its turn (session_order.c). */
static void row_times(const struct sess *s, struct gdr_result *r)
{
	if (!s->cur)
		return;
	r->t_start_s = s->cur->t_start;
	r->t_end_s = s->cur->t_end;
	r->order = s->cur->order;
}

/* Path-major (session_order.c): every row says that its paths did not take turns. */
static void add_major_note(const struct sess *s, struct gdr_result *r)
{
	size_t n = strlen(r->note);

	if (s->major_note[0])
		snprintf(r->note + n, sizeof(r->note) - n, "%s%s", n ? "; " : "", s->major_note);
}

void gdr_sess_emit_row(struct sess *s, const struct gdr_result *r)
{
	struct gdr_result rr = *r;

	add_major_note(s, &rr);
	if (s->run->row_note) {
		char note[sizeof(rr.note)];

		snprintf(note, sizeof(note), "%s%s%s", s->run->row_note, rr.note[0] ? "; " : "",
			 rr.note);
		gdr_strlcpy(rr.note, note, sizeof(rr.note));
	}
	if (s->plan.latency)
		gdr_table_row_lat(stdout, &rr, gdr_sess_table(s));
	else
		gdr_table_row(stdout, &rr, gdr_sess_table(s));
	fflush(stdout);
	record(s, &rr);
}

const struct gdr_sess_copy *gdr_sess_bounce_copy(struct sess *s, uint64_t size)
{
	uint64_t chunk = gdr_bounce_chunk(size, s->env.bounce_chunk);
	int copy = s->env.bounce_copy;
	unsigned int blocks = copy == GDR_BOUNCE_COPY_SM ? s->env.bounce_blocks : 0;
	struct gdr_sess_copy *c;

	for (unsigned int i = 0; i < s->ncopies; i++) {
		c = &s->copies[i];
		if (c->chunk == chunk && c->copy == copy && c->blocks == blocks)
			return c;
	}
	/* Full (more distinct chunks than slots): the last slot is measured again. */
	c = &s->copies[s->ncopies < GDR_SESS_COPIES ? s->ncopies++ : GDR_SESS_COPIES - 1];
	memset(c, 0, sizeof(*c));
	c->chunk = chunk;
	c->copy = copy;
	c->blocks = blocks;
	c->gbps[0] = c->gbps[1] = NAN;
	if (!s->cuda)
		snprintf(c->why, sizeof(c->why), "no GPU open");
	else
		gdr_copy_measure_chunk(s->cuda, copy, blocks, chunk, c->gbps, c->why,
				       sizeof(c->why));
	return c;
}

/* A bounce row: min(NIC, copy at the row's chunk) in place of the links' ceiling. */
static void bounce_ceiling(struct sess *s, const struct gdr_path *p, struct gdr_result *r,
			   uint64_t size, char *note, size_t len)
{
	const struct gdr_sess_copy *c = gdr_sess_bounce_copy(s, size);
	struct gdr_bounce_ceiling b = {
		.links_gbps = r->ceiling_gbps,
		.d2h = c->gbps[0],
		.h2d = c->gbps[1],
		.chunk = c->chunk,
		.copy = gdr_bounce_copy_name(c->copy),
		.blocks = c->blocks,
		.stand_in = gdr_copy_stand_in() != NULL,
		.why = c->why,
	};

	/*
	 * Bounce on this side only: one copy per chunk, ours, one way (the
	 * producer's to the ring, the consumer's from it); both sides staging,
	 * the slower of the two ways bounds the pair.
	 */
	if (p->peer_kind != GDR_MEM_BOUNCE) {
		if (gdr_path_is_write(&s->penv) == s->client)
			b.h2d = INFINITY;
		else
			b.d2h = INFINITY;
	}
	b.nic.limit = "";
	if (s->conn.nic[0])
		gdr_ceiling_live(s->conn.verbs, s->conn.port_num, s->conn.nic, NULL, &b.nic);
	r->ceiling_gbps = gdr_ceiling_bounce(&b, note, len);
}

void gdr_sess_emit_measured(struct sess *s, const struct gdr_path *p, uint64_t size,
			    const char *status, const char *note)
{
	char ceil_note[GDR_TEXT_MAX] = "";
	const struct gdr_acc *a = &s->cur->acc;
	struct gdr_result r;
	struct gdr_stats st;

	gdr_sess_row_common(s, &r, p, size);
	row_times(s, &r);
	gdr_sess_rounds_fill(s, &r, a);
	gdr_stats_compute(a->bps, a->n, &st);
	r.iters = a->iters;
	r.bw_avg_gbps = st.avg * 8 / 1e9;
	r.bw_median_gbps = st.median * 8 / 1e9;
	r.bw_min_gbps = st.min * 8 / 1e9;
	r.bw_max_gbps = st.max * 8 / 1e9;
	/* No peak only when no repeat completed anything (empty in CSV, "-" in the table). */
	r.bw_peak_gbps =
	    a->peak_bps > 0 ? (a->peak_bps > st.max ? a->peak_bps : st.max) * 8 / 1e9 : NAN;
	r.msg_rate_mpps = a->n ? a->mps_sum / a->n : 0;
	r.cpu_util_pct = a->n ? a->cpu_sum / a->n : -1;
	if (p->kind == GDR_MEM_BOUNCE && !s->plan.bidir)
		bounce_ceiling(s, p, &r, size, ceil_note, sizeof(ceil_note));
	gdr_ceiling_pct(&r);
	gdr_strlcpy(r.status, status, sizeof(r.status));
	if (note)
		gdr_strlcpy(r.note, note, sizeof(r.note));
	if (ceil_note[0]) {
		size_t n = strlen(r.note);

		snprintf(r.note + n, sizeof(r.note) - n, "%s%s", n ? "; " : "", ceil_note);
	}
	if (s->cur_mem && s->cur_mem->note[0]) {
		size_t n = strlen(r.note);

		snprintf(r.note + n, sizeof(r.note) - n, "%s%s", n ? "; " : "", s->cur_mem->note);
	}
	if (s->plan.bidir && a->n) {
		/* Each direction, over the same repeats as the sum. */
		size_t l = strlen(r.note);

		snprintf(r.note + l, sizeof(r.note) - l,
			 "%sclient->server %.3f Gb/s, server->client %.3f Gb/s%s", l ? "; " : "",
			 a->dir_bps[0] / a->n * 8 / 1e9, a->dir_bps[1] / a->n * 8 / 1e9,
			 a->apart ? " (runs too short to intersect: each over its own run)"
				  : " (over the time both ran)");
	}
	gdr_sess_emit_row(s, &r);
}

/* A latency row: the client's samples summarised; no bandwidth columns. */
void gdr_sess_emit_lat(struct sess *s, const struct gdr_path *p, uint64_t size, const double *us,
		       const char *status, const char *note)
{
	struct gdr_result r;

	gdr_sess_row_common(s, &r, p, size);
	row_times(s, &r);
	r.iters = s->plan.iters;
	r.bw_peak_gbps = r.bw_avg_gbps = r.bw_median_gbps = r.bw_min_gbps = r.bw_max_gbps = NAN;
	r.msg_rate_mpps = NAN;
	r.lat_min_us = us[0];
	r.lat_p50_us = us[1];
	r.lat_p90_us = us[2];
	r.lat_p99_us = us[3];
	r.lat_p999_us = us[4];
	r.lat_max_us = us[5];
	r.lat_avg_us = us[6];
	gdr_strlcpy(r.status, status, sizeof(r.status));
	if (note)
		gdr_strlcpy(r.note, note, sizeof(r.note));
	gdr_sess_emit_row(s, &r);
}

void gdr_sess_emit_skipped(struct sess *s, const struct gdr_path *p)
{
	struct gdr_result r;

	for (unsigned int i = 0; i < s->plan.nsizes; i++) {
		gdr_sess_row_common(s, &r, p, s->plan.sizes[i]);
		r.repeats = 0;
		gdr_strlcpy(r.status, "skipped", sizeof(r.status));
		gdr_strlcpy(r.note, p->skip, sizeof(r.note));
		add_major_note(s, &r);
		if (i == 0) {
			gdr_table_row(stdout, &r, gdr_sess_table(s));
			fflush(stdout);
		}
		record(s, &r);
	}
}

/* Add one repeat; a validation mismatch on either side ends the size as failed. */
int gdr_sess_record_repeat(struct sess *s, const struct gdr_path *p, uint64_t size,
			   const struct gdr_msg_meas *cli, const struct gdr_msg_meas *srv)
{
	const struct gdr_msg_meas *bad = cli->valid < 0 ? cli : srv->valid < 0 ? srv : NULL;

	struct gdr_acc *a = &s->cur->acc;

	if (a->n < GDR_REP_KEEP) {
		a->t0[a->n] = s->cur->rep_t0;
		a->t1[a->n] = s->cur->rep_t1;
	}
	acc_add(a, cli, srv, size, s->plan.bidir);
	if (!bad)
		return 0;
	gdr_sess_emit_measured(s, p, size, "failed", bad->text);
	snprintf(s->why, WHY, "%s", bad->text);
	return -EILSEQ;
}

const char *gdr_sess_row_note(const struct gdr_path *p, char *buf, size_t len)
{
	return p->ops->row_note(p, buf, len);
}
