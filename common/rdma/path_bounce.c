/*
 * The bounce path: GPU buffers on both sides, the NIC only touches the
 * pinned staging ring (bounce.h). Everything runs on QP 0; the peer reaches
 * our ring, not our GPU buffer; the passive side drives its half of the
 * pipeline in every repeat.
 *
 * Bounce on one side only (issue 48: bounce:host, peermem:bounce, ...): that
 * side stages through its ring, the other side's buffer (host, dmabuf,
 * peermem) is registered directly and is what the peer reaches. A client
 * that stages reads from or writes into the server's buffer itself, and the
 * server takes no part (the RDMA paths' way); a server that stages runs the
 * pipeline as always, and the client's side of it moves its own buffer with
 * no copy.
 */
#include "config.h"

#include "path.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bounce.h"
#include "conn.h"
#include "lat_loop.h"
#include "loop.h"
#include "util.h"

/* The credits and announcements of a ring's worth of chunks, both ways, and some slack. */
static unsigned int bounce_recv_slots(const struct gdr_opts *o)
{
	return o->bounce_slots * 2 + 8;
}

static unsigned int bounce_qps(const struct gdr_plan *plan)
{
	(void)plan;
	return 1;
}

static int stages(const struct gdr_path *p)
{
	return p->kind == GDR_MEM_BOUNCE;
}

static int peer_stages(const struct gdr_path *p)
{
	return p->peer_kind == GDR_MEM_BOUNCE;
}

static void bounce_open(struct gdr_path *p)
{
	const struct gdr_plan *pl = p->env->plan;

	if (gdr_bounce_plan_check(pl->bidir, pl->bounce_chunk, p->env->conn->max_msg_sz, p->skip,
				  sizeof(p->skip)) ||
	    gdr_bounce_ring_check(pl->bounce_chunk, pl->bounce_slots, p->skip, sizeof(p->skip)))
		return;
	gdr_path_alloc(p); /* the bounce buffers, or (staged by the peer) this side's own */
}

/* The peer reaches our staging ring only (QP 0); without one, our buffer's half. */
static void bounce_describe(const struct gdr_path *p, struct gdr_msg_buf *out)
{
	struct gdr_bounce_res br;

	gdr_path_describe_halves(p, out);
	if (!stages(p) || gdr_mem_bounce_res(&p->mem, &br))
		return;
	memset(out->qp, 0, sizeof(out->qp));
	out->qp[0].addr = (uintptr_t)br.ring;
	out->qp[0].rkey = br.rkey;
	out->qp[0].len = (uint64_t)br.slots * br.chunk;
}

static uint64_t bounce_need(const struct gdr_path *p, unsigned int q)
{
	if (!peer_stages(p))
		return gdr_path_need_half(p, q);
	return (uint64_t)p->env->plan->bounce_slots * p->env->plan->bounce_chunk;
}

/* The pipeline moves one message at a time through its own ring: nothing to cycle through. */
static void bounce_layout(const struct gdr_path *p, uint64_t size, struct gdr_vlayout *l)
{
	gdr_validate_layout(l, size, 0, p->src_len, p->dst_len);
}

static int bounce_run(struct gdr_path *p, uint64_t size, struct gdr_loop_out *out, char *why,
		      size_t wlen)
{
	const struct gdr_path_env *e = p->env;
	const struct gdr_plan *pl = e->plan;
	struct gdr_bounce_res res;
	int w = gdr_path_is_write(e);
	int producer = w == e->client; /* the side with the GPU source */
	struct gdr_bounce_cfg cfg = {
		.write = w,
		.producer = producer,
		.timed = e->client,
		.size = size,
		.chunk = gdr_bounce_chunk(size, pl->bounce_chunk),
		.iters = pl->iters,
		.warmup = pl->warmup,
		.duration = pl->duration_ms / 1000.0,
		.gpu_off = producer ? gdr_path_src_off(p, 0) : gdr_path_dst_off(p, 0),
		.raddr = p->remote[0].addr,
		.rkey = p->remote[0].rkey,
		.rlen = p->remote[0].len,
		/* A server that does not stage takes no part; a client always does. */
		.peer_direct = !peer_stages(p),
		.peer_passive = !peer_stages(p) && e->client,
		.tx_depth = pl->tx_depth,
		.stall_timeout = e->timeout,
		.stop = e->stop,
		.conn = e->conn,
	};
	int r;

	if (!stages(p) && !e->client) {
		/* The client stages and reaches our buffer itself: nothing to drive here. */
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (!stages(p)) {
		/* The server stages: our side of its pipeline, on our registered buffer. */
		memset(&res, 0, sizeof(res));
		res.dptr = p->mem.addr;
		res.len = p->mem.len;
		res.chunk = pl->bounce_chunk;
		res.slots = pl->bounce_slots;
		res.lkey = p->mem.mr ? p->mem.mr->lkey : 0;
	} else if (gdr_mem_bounce_res(&p->mem, &res)) {
		snprintf(why, wlen, "bounce: buffers not open");
		return -EINVAL;
	}
	r = gdr_bounce_run(&res, &cfg, out, why, wlen);
	/*
	 * Credits arrive in bursts, so no shorter window of the pipeline
	 * times the link: its peak is the whole repeat, the one window the
	 * peak's rule (stats.h) always counts.
	 */
	if (!r)
		out->peak_bps = out->elapsed_ns ? (double)out->bytes * 1e9 / out->elapsed_ns : NAN;
	return r;
}

/* bounce latency: the GPU copies of each message, inside the timed interval. */
struct lat_copy {
	struct gdr_mem *mem;
	size_t src_off, dst_off, size;
	uint8_t *ring;
};

static int lat_d2h(void *ctx)
{
	struct lat_copy *c = ctx;

	return c->mem->ops->read(c->mem, c->src_off, c->ring, c->size);
}

static int lat_h2d(void *ctx)
{
	struct lat_copy *c = ctx;

	return c->mem->ops->write(c->mem, c->dst_off, c->ring, c->size);
}

static int bounce_run_lat(struct gdr_path *p, uint64_t size, double *samples, char *why,
			  size_t wlen)
{
	if (!stages(p)) /* the peer stages: ours is a registered buffer, arrival by immediate */
		return gdr_path_rdma_run_lat(p, size, samples, why, wlen);
	const struct gdr_path_env *e = p->env;
	int w = gdr_path_is_write(e);
	struct lat_copy copy = { .mem = &p->mem,
				 .src_off = gdr_path_src_off(p, 0),
				 .dst_off = gdr_path_dst_off(p, 0),
				 .size = size };
	struct gdr_lat_cfg cfg = {
		.write = w,
		.initiator = e->client,
		.imm = 1,
		.size = (uint32_t)size,
		.iters = e->plan->iters,
		.warmup = e->plan->warmup,
		.raddr = p->remote[0].addr,
		.rkey = p->remote[0].rkey,
		.stall_timeout = e->timeout,
		.stop = e->stop,
		.conn = e->conn,
	};
	struct gdr_bounce_res br;

	if (gdr_mem_bounce_res(&p->mem, &br)) {
		snprintf(why, wlen, "bounce: buffers not open");
		return -EINVAL;
	}
	/* Both copies are inside the timed interval: GPU -> ring, ring -> GPU. */
	copy.ring = br.ring;
	cfg.laddr = (uintptr_t)br.ring;
	cfg.lkey = br.lkey;
	cfg.hooks.ctx = &copy;
	cfg.hooks.after_recv = e->client || w ? lat_h2d : NULL;
	cfg.hooks.before_send = w ? lat_d2h : NULL;
	return gdr_lat_run(e->conn, &cfg, samples, why, wlen);
}

/* One message is staged whole, so it must fit the ring. */
static int bounce_lat_skip(const struct gdr_path *p, uint64_t size, char *why, size_t wlen)
{
	const struct gdr_plan *pl = p->env->plan;
	uint64_t ring = (uint64_t)pl->bounce_slots * pl->bounce_chunk;
	char a[32], c[32];

	if (!pl->latency || size <= ring)
		return 0;
	snprintf(why, wlen,
		 "bounce latency stages a message whole: %s is larger than the staging ring "
		 "(%u x %s; raise --bounce-slots or --bounce-chunk)",
		 gdr_fmt_size(size, a, sizeof(a)), pl->bounce_slots,
		 gdr_fmt_size(pl->bounce_chunk, c, sizeof(c)));
	return 1;
}

static const char *bounce_lat_note(const struct gdr_path *p)
{
	int w = gdr_path_is_write(p->env), client = p->env->client;

	if (stages(p) && peer_stages(p))
		return w ? "half round trip, both GPU copies included; arrival by immediate"
			 : "post to completion of the READ from the peer's staging ring, plus "
			   "the local copy to the GPU (the peer's GPU-to-ring copy is not per "
			   "message)";
	/* One side stages: which one, and what of it the sample holds. */
	if (w)
		return client == stages(p) ? "half round trip; the client stages (its GPU copies "
					     "included), the server's buffer registered directly; "
					     "arrival by immediate"
					   : "half round trip; the server stages (its GPU copies "
					     "included), the client's buffer registered directly; "
					     "arrival by immediate";
	return client == stages(p)
		   ? "post to completion of the READ from the server's registered buffer into "
		     "the client's staging ring, plus the client's copy to the GPU"
		   : "post to completion of the READ from the server's staging ring into the "
		     "client's registered buffer (the server's GPU-to-ring copy is not per "
		     "message)";
}

static const char *bounce_row_note(const struct gdr_path *p, char *buf, size_t len)
{
	const struct gdr_plan *pl = p->env->plan;
	const char *me = p->env->client ? "client" : "server";
	const char *peer = p->env->client ? "server" : "client";
	char c[32], r[32], one[96] = "";

	/* Bounce on one side: the note names the side that stages, and the other's memory. */
	if (!stages(p) || !peer_stages(p))
		snprintf(one, sizeof(one), " on the %s only; %s %s registered directly",
			 stages(p) ? me : peer, stages(p) ? peer : me,
			 gdr_mem_kind_name(stages(p) ? p->peer_kind : p->kind));
	/* The chunk used is the row's bounce_chunk column; the ring is what each side pins. */
	snprintf(buf, len, "%sstaging %u x %s (%s%s)%s%s", pl->validate ? "validated; " : "",
		 pl->bounce_slots, gdr_fmt_size(pl->bounce_chunk, c, sizeof(c)),
		 gdr_fmt_size((uint64_t)pl->bounce_slots * pl->bounce_chunk, r, sizeof(r)),
		 one[0] ? "" : " per side", one, pl->qps > 1 ? "; QP 0 only" : "");
	return buf;
}

const struct gdr_path_ops gdr_path_bounce_ops = {
	.recv_slots = bounce_recv_slots,
	.qps = bounce_qps,
	.passive_runs = 1,
	.open = bounce_open,
	.describe = bounce_describe,
	.need = bounce_need,
	.layout = bounce_layout,
	.run = bounce_run,
	.run_lat = bounce_run_lat,
	.lat_arm = NULL,
	.lat_skip = bounce_lat_skip,
	.lat_note = bounce_lat_note,
	.row_note = bounce_row_note,
};
