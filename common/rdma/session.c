/*
 * The session's lifecycle (outputs, placement, connect or accept, one plan
 * per client) and the calls the choreography shares: messages through the
 * control channel (ctl.h), buffers through the path interface (path.h).
 */
#include "config.h"

#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin.h"
#include "session_int.h"
#include "util.h"

int gdr_sess_send(struct sess *s, const struct gdr_msg *m)
{
	return gdr_ctl_send(&s->ctl, m, s->why, WHY);
}

int gdr_sess_recv(struct sess *s, struct gdr_msg *m, uint16_t want)
{
	return gdr_ctl_expect(&s->ctl, m, want, s->o->timeout, 0, s->why, WHY);
}

/*
 * How long a repeat may legitimately keep the peer silent: its duration, or
 * its bytes at a floor of 1 MB/s, on top of --timeout. A dead peer does not
 * make us wait that long: gdr_ctrl_recv's liveness probe fails within the
 * transport's retry time. This only bounds a peer that is alive but stuck.
 */
static double repeat_budget(const struct sess *s, uint64_t size)
{
	double bytes = (double)(s->plan.iters + s->plan.warmup) * size * s->plan.qps;
	/* Latency: one message at a time, each allowed a millisecond on top of its bytes. */
	double lat = s->plan.latency ? (double)(s->plan.iters + s->plan.warmup) * 1e-3 : 0;

	return s->o->timeout + lat +
	       (s->plan.duration_ms ? s->plan.duration_ms / 1000.0 : bytes / 1e6);
}

int gdr_sess_recv_repeat(struct sess *s, struct gdr_msg *m, uint16_t want, uint64_t size)
{
	return gdr_ctl_expect(&s->ctl, m, want, repeat_budget(s, size), 1, s->why, WHY);
}

int gdr_sess_run_bw(struct sess *s, struct gdr_path *p, uint64_t size, struct gdr_loop_out *lo)
{
	struct gdr_pin pin = { .cpu = -1 };
	char why[160];
	int r;

	if (!gdr_pin_wanted(s->o->pin, size)) {
		if (s->o->pin == GDR_PIN_SMALL)
			gdr_dbg("repeat not pinned: messages over 1 MiB (the default; --pin pins "
				"every repeat)");
	} else if (gdr_pin_here(&pin, why, sizeof(why)) < 0)
		gdr_dbg("not pinned: %s", why);
	else if (pin.cpu >= 0)
		gdr_dbg("repeat pinned to CPU %d", pin.cpu);
	r = p->ops->run(p, size, lo, s->why, WHY);
	gdr_pin_release(&pin);
	return r;
}

int gdr_sess_sync_point(struct sess *s)
{
	return s->run->sync ? s->run->sync->point(s->run->sync->ctx, s->why, WHY) : 0;
}

int gdr_sess_path_begin(struct sess *s, struct gdr_path *p)
{
	if (!p->ok) {
		gdr_sess_emit_skipped(s, p);
		return 0;
	}
	if (s->plan.validate && gdr_path_fills_src(&s->penv))
		return gdr_path_fill(p, s->why, WHY);
	return 0;
}

void gdr_sess_ensure_cuda(struct sess *s)
{
	char why[256];
	int r;

	if (s->cuda_tried)
		return;
	s->cuda_tried = 1;
	r = gdr_cuda_load(&s->cuda, why, sizeof(why));
	if (r) {
		snprintf(s->cuda_why, sizeof(s->cuda_why), "%s", why);
		s->cuda = NULL;
		return;
	}
	r = gdr_cuda_find_gpu(s->cuda,
			      s->ep.gpu_buf[0]				   ? s->ep.gpu_buf
			      : s->run->gpu && strcmp(s->run->gpu, "auto") ? s->run->gpu
									   : "0",
			      &s->gpu, why, sizeof(why));
	if (!r)
		r = gdr_cuda_gpu_open(s->cuda, &s->gpu, why, sizeof(why));
	if (r) {
		snprintf(s->cuda_why, sizeof(s->cuda_why), "%s", why);
		gdr_cuda_unload(s->cuda);
		s->cuda = NULL;
		return;
	}
	s->env.cuda = s->cuda;
	s->env.gpu = &s->gpu;
	printf("GPU %d: %s (%s)\n", s->gpu.ordinal, s->gpu.name, s->gpu.bus_id);
}

void gdr_sess_prepare(struct sess *s)
{
	for (unsigned int i = 0; i < s->plan.npairs; i++)
		if (gdr_sess_kind(s, i, 0) != GDR_MEM_HOST)
			gdr_sess_ensure_cuda(s);
	if (s->cuda && !s->have_topo)
		gdr_sess_describe_topology(s);
	if (s->plan.latency)
		gdr_table_header_lat(stdout, gdr_sess_table(s));
	else
		gdr_table_header(stdout, gdr_sess_table(s));
	fflush(stdout);
	s->env.bounce_chunk = s->plan.bounce_chunk;
	s->env.bounce_slots = s->plan.bounce_slots;
	/* The plan's GPU registration: the server's rows say it adopted the client's. */
	s->env.dmabuf_pcie = !!(s->plan.gpu_flags & GDR_PLAN_DMABUF_PCIE);
	s->env.no_relaxed = !!(s->plan.gpu_flags & GDR_PLAN_NO_RELAXED);
	s->env.data_direct = !!(s->plan.gpu_flags & GDR_PLAN_DATA_DIRECT);
	s->env.bounce_copy = s->o->bounce_copy; /* each side's own, not the plan's */
	s->env.bounce_blocks = s->o->bounce_blocks;
	s->penv = (struct gdr_path_env){
		.plan = &s->plan,
		.client = s->client,
		.conn = &s->conn,
		.menv = &s->env,
		.timeout = s->o->timeout,
		.stop = s->stop,
		.ops = s->path_ops,
	};
}

int gdr_sess_table(const struct sess *s)
{
	return gdr_opts_table(s->o) | (s->plan.sides != GDR_SIDES_SAME ? GDR_TABLE_PAIRS : 0);
}

int gdr_sess_first_alloc(const struct sess *s, int a)
{
	return (s->plan.gpu_allocs & ((1u << a) - 1)) == 0;
}

enum gdr_mem_kind gdr_sess_kind(const struct sess *s, unsigned int pi, int peer)
{
	const struct gdr_mem_pair *pr = &s->plan.pairs[pi];

	return (enum gdr_mem_kind)(s->client != peer ? pr->client : pr->server);
}

void gdr_sess_path_open(struct sess *s, struct gdr_sess_path *e)
{
	enum gdr_mem_kind kind = gdr_sess_kind(s, e->pi, 0);

	s->env.gpu_alloc = (enum gdr_gpu_alloc)e->alloc;
	if (kind != GDR_MEM_HOST) {
		gdr_sess_ensure_cuda(s);
		s->env.cuda_why = s->cuda ? NULL : s->cuda_why;
	}
	gdr_path_open(&e->p, kind, gdr_sess_kind(s, e->pi, 1), &s->penv);
	e->open = 1;
}

void gdr_sess_path_close(struct sess *s, struct gdr_sess_path *e)
{
	if (s->cur == e)
		s->cur_mem = NULL;
	if (e->open)
		gdr_path_close(&e->p);
	e->open = 0;
}

void gdr_sess_skip_lat_size(struct sess *s, const struct gdr_path *p, uint64_t size)
{
	struct gdr_result r;

	gdr_sess_row_common(s, &r, p, size);
	gdr_strlcpy(r.status, "skipped", sizeof(r.status));
	p->ops->lat_skip(p, size, r.note, sizeof(r.note));
	gdr_sess_emit_row(s, &r);
}

int gdr_session_run(const struct gdr_opts *o, const struct gdr_run *run,
		    volatile sig_atomic_t *stop)
{
	struct sess *s = calloc(1, sizeof(*s));
	char why[WHY];
	int r;

	if (!s) {
		gdr_err("out of memory");
		return 1;
	}
	s->o = o;
	s->run = run;
	gdr_endpoint_init(&s->ep, o, run);
	s->client = run->server != NULL;
	s->stop = stop;
	const char *root = getenv("GDRPERF_ROOT");
	s->env.sysfs_root = root && *root ? root : "/";
	s->env.hugepages = o->hugepages;
	s->env.dmabuf_pcie = o->dmabuf_pcie;
	s->env.no_relaxed = o->no_relaxed;
	s->env.data_direct = o->data_direct;
	/* A --topology-xml that cannot be read or parsed is a usage error before anything runs. */
	if (o->topology_xml && !gdr_sess_topo(s)) {
		free(s);
		return 2;
	}

	/* Outputs are checked before anything runs: a bad path fails now, not after the run. */
	if (run->csv && gdr_csv_open(&s->csv, run->csv, why, sizeof(why))) {
		gdr_err("--csv %s: %s", run->csv, why);
		free(s);
		return 1;
	}
	if (run->json && gdr_json_open(&s->json, run->json, why, sizeof(why))) {
		gdr_err("--json %s: %s", run->json, why);
		r = 1;
		goto out_csv;
	}
	if (run->prom && gdr_prom_rows_open(&s->prom, run->prom, why, sizeof(why))) {
		gdr_err("--prom %s: %s", run->prom, why);
		r = 1;
		goto out_json;
	}

	r = gdr_sess_place(s);
	/*
	 * launch: pairs exchange addresses once each knows its own; a rank that
	 * could not place itself still takes part, so that its peer learns why.
	 */
	if (run->sync && run->sync->rendezvous) {
		char rwhy[WHY];
		int rr = run->sync->rendezvous(run->sync->ctx, o, &s->ep, r ? s->why : NULL, rwhy,
					       sizeof(rwhy));

		if (!r && rr) {
			r = rr;
			gdr_strlcpy(s->why, rwhy, WHY);
		}
	}
	if (r) {
		gdr_err("%s", s->why);
		goto out_json;
	}
	for (;;) {
		if (s->client)
			r = gdr_conn_connect(&s->conn, o, &s->ep, gdr_paths_recv_slots(o), stop,
					     s->why, WHY);
		else
			r = gdr_conn_accept(&s->conn, o, &s->ep, stop, s->why, WHY);
		if (r == -EINTR && o->persistent) {
			printf("server: stopped by a signal\n");
			break;
		}
		if (r) {
			gdr_err("%s", s->why);
			/* A long-lived server outlives a client that failed to connect, not itself.
			 */
			if (!o->persistent || r == -EINTR || !s->conn.listening)
				break;
			gdr_conn_close(&s->conn);
			continue;
		}
		gdr_ctl_over_conn(&s->ctl, &s->conn, s->client);
		s->env.pd = s->conn.pd;
		s->env.nic = s->conn.nic;
		gdr_provenance_load(&s->prov, s->conn.verbs);
		gdr_sess_bind_near_nic(s);
		if (o->verbose)
			gdr_conn_debug_qp(&s->conn);
		printf("%s %s: %s %s over %s, %u QP(s)\n", s->client ? "client" : "server",
		       gdr_verb_name(o->verb), s->client ? "connected to" : "accepted",
		       s->conn.peer, s->conn.nic, s->conn.nqps);
		r = s->client ? gdr_sess_client_run(s) : gdr_sess_server_run(s);
		if (r)
			gdr_err("%s%s%s", o->persistent ? s->conn.peer : "",
				o->persistent ? ": " : "", s->why);
		if (!o->persistent || (stop && *stop))
			break;
		/* Next client: fresh connection and plan; the GPU stays open. */
		gdr_conn_close(&s->conn);
		memset(&s->plan, 0, sizeof(s->plan));
		s->have_topo = 0;
		s->cuda_tried = s->cuda != NULL;
		fflush(stdout);
	}
out_json:
	gdr_conn_close(&s->conn);
	if (s->cuda) {
		gdr_cuda_gpu_close(s->cuda, &s->gpu);
		gdr_cuda_unload(s->cuda);
	}
	if (s->topo_t)
		gdr_topo_free(s->topo_t);
	gdr_sess_paths_free(s);
	if (s->json) {
		int jr = gdr_json_close(s->json, why, sizeof(why));
		if (jr) {
			gdr_err("--json %s: %s", run->json, why);
			r = r ? r : jr;
		}
	}
	if (s->prom) {
		int pr = gdr_prom_rows_close(s->prom, why, sizeof(why));

		if (pr) {
			gdr_err("--prom %s: %s", run->prom, why);
			r = r ? r : pr;
		}
	}
out_csv:
	if (s->csv)
		gdr_csv_close(s->csv);
	free(s);
	if (o->persistent && stop && *stop)
		return 0; /* a long-lived server stopped on purpose */
	return r ? 1 : 0;
}
