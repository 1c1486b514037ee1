/*
 * The RDMA paths (host, dmabuf, peermem): the NIC reads and writes the
 * registered buffer itself. Bandwidth runs loop.c on every QP, latency
 * lat_loop.c on QP 0.
 */
#include "config.h"

#include "path.h"

#include "conn.h"
#include "lat_loop.h"
#include "loop.h"

static unsigned int rdma_recv_slots(const struct gdr_opts *o)
{
	(void)o;
	return 0; /* control receives only; latency's immediates reuse them one at a time */
}

static unsigned int rdma_qps(const struct gdr_plan *plan)
{
	return plan->qps;
}

static void rdma_layout(const struct gdr_path *p, uint64_t size, struct gdr_vlayout *l)
{
	gdr_validate_layout(l, size, p->env->plan->validate, p->src_len, p->dst_len);
}

static int rdma_run(struct gdr_path *p, uint64_t size, struct gdr_loop_out *out, char *why,
		    size_t wlen)
{
	const struct gdr_path_env *e = p->env;
	const struct gdr_plan *pl = e->plan;
	int w = gdr_path_is_write(e);
	struct gdr_loop_qp qps[GDR_MAX_QPS];
	struct gdr_loop_cfg cfg = {
		.opcode = w ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.size = (uint32_t)size,
		.iters = pl->iters,
		.duration = pl->duration_ms / 1000.0,
		.tx_depth = pl->tx_depth,
		.post_list = pl->post_list,
		.cq_mod = pl->cq_mod,
		.warmup = pl->warmup,
		.stall_timeout = e->timeout,
		.stop = e->stop,
		.conn = e->conn,
	};
	struct gdr_vlayout l;

	rdma_layout(p, size, &l);
	cfg.stride = l.stride;
	for (unsigned int q = 0; q < pl->qps; q++) {
		qps[q].qp = e->conn->id[q]->qp;
		qps[q].laddr = p->mem.addr + (w ? gdr_path_src_off(p, q) : gdr_path_dst_off(p, q));
		qps[q].lkey = p->mem.mr->lkey;
		qps[q].raddr = p->remote[q].addr;
		qps[q].rkey = p->remote[q].rkey;
		qps[q].lslots = w ? l.src_slots : l.dst_slots;
		qps[q].rslots = w ? l.dst_slots : l.src_slots;
	}
	return gdr_loop_run(e->conn->data_cq, qps, pl->qps, &cfg, out, why, wlen);
}

/*
 * The byte a host WRITE ping-pong polls; NULL where arrival is told by the
 * immediate (a GPU buffer on either side: both sides must agree).
 */
static volatile uint8_t *lat_dst_last(const struct gdr_path *p, uint64_t size)
{
	if (!p->env->plan->latency || !gdr_path_is_write(p->env) || gdr_path_lat_imm(p))
		return NULL;
	return (volatile uint8_t *)(uintptr_t)(p->mem.addr + gdr_path_dst_off(p, 0) + size - 1);
}

/* Before the peer may write (START/ACK): no stale stamp can read as an arrival. */
static void rdma_lat_arm(const struct gdr_path *p, uint64_t size)
{
	volatile uint8_t *d = lat_dst_last(p, size);

	if (d)
		*d = 0;
}

static int rdma_lat_skip(const struct gdr_path *p, uint64_t size, char *why, size_t wlen)
{
	(void)p, (void)size, (void)why, (void)wlen;
	return 0;
}

int gdr_path_rdma_run_lat(struct gdr_path *p, uint64_t size, double *samples, char *why,
			  size_t wlen)
{
	const struct gdr_path_env *e = p->env;
	int w = gdr_path_is_write(e);
	struct gdr_lat_cfg cfg = {
		.write = w,
		.initiator = e->client,
		.imm = gdr_path_lat_imm(p),
		.size = (uint32_t)size,
		.iters = e->plan->iters,
		.warmup = e->plan->warmup,
		.laddr = p->mem.addr + (w ? gdr_path_src_off(p, 0) : gdr_path_dst_off(p, 0)),
		.lkey = p->mem.mr->lkey,
		.raddr = p->remote[0].addr,
		.rkey = p->remote[0].rkey,
		.dst_last = lat_dst_last(p, size),
		.stall_timeout = e->timeout,
		.stop = e->stop,
		.conn = e->conn,
	};

	if (cfg.dst_last)
		cfg.src_last =
		    (uint8_t *)(uintptr_t)(p->mem.addr + gdr_path_src_off(p, 0) + size - 1);
	return gdr_lat_run(e->conn, &cfg, samples, why, wlen);
}

static const char *rdma_lat_note(const struct gdr_path *p)
{
	if (!gdr_path_is_write(p->env))
		return "post to completion";
	if (!gdr_path_lat_imm(p))
		return "half round trip; arrival seen by polling the last byte";
	return "half round trip; RDMA WRITE with immediate (GPU memory cannot be polled)";
}

static const char *rdma_row_note(const struct gdr_path *p, char *buf, size_t len)
{
	(void)buf, (void)len;
	return p->env->plan->validate ? "validated" : NULL;
}

const struct gdr_path_ops gdr_path_rdma_ops = {
	.recv_slots = rdma_recv_slots,
	.qps = rdma_qps,
	.passive_runs = 0,
	.open = gdr_path_alloc,
	.describe = gdr_path_describe_halves,
	.need = gdr_path_need_half,
	.layout = rdma_layout,
	.run = rdma_run,
	.run_lat = gdr_path_rdma_run_lat,
	.lat_arm = rdma_lat_arm,
	.lat_skip = rdma_lat_skip,
	.lat_note = rdma_lat_note,
	.row_note = rdma_row_note,
};
