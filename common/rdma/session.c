#include "config.h"

#include "session.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bounce.h"
#include "ceiling.h"
#include "conn.h"
#include "cuda.h"
#include "lat_loop.h"
#include "loop.h"
#include "mem.h"
#include "pattern.h"
#include "placement.h"
#include "proto.h"
#include "provenance.h"
#include "report.h"
#include "stats.h"
#include "topo.h"
#include "text.h"
#include "util.h"
#include "validate.h"

#define WHY 512

/* Per size: what both sides measured in every repeat. */
struct acc {
	double bps[GDR_REPEAT_MAX];
	double peak_bps;    /* 0: no window long enough for a peak */
	double dir_bps[2];  /* -b: client->server and server->client, summed over repeats */
	unsigned int apart; /* -b: repeats whose runs were too short to intersect (bidir.h) */
	double mps_sum, cpu_sum;
	uint64_t iters;
	unsigned int n;
};

struct sess {
	struct gdr_opts *o;
	struct gdr_conn conn;
	int client;
	struct gdr_plan plan;
	struct gdr_mem_env env;
	struct gdr_cuda *cuda;
	struct gdr_gpu gpu;
	int cuda_tried;
	char cuda_why[256];
	struct gdr_csv *csv;
	struct gdr_json *json;
	struct gdr_topo_pair topo; /* GPU-NIC placement for the CSV columns */
	int have_topo;
	struct gdr_topo *topo_t; /* loaded on first use */
	int topo_tried;
	char gpu_spec[64];	       /* --gpu auto resolved to a bus id */
	char devname[64];	       /* -d auto resolved */
	char bind[64];		       /* the NIC's address, when -d steers rdma_cm */
	struct acc acc;		       /* the size being measured */
	struct gdr_provenance prov;    /* kernel, libibverbs, NIC firmware for the rows */
	const struct gdr_mem *cur_mem; /* the open path's buffer, for its rows; NULL if skipped */
	double *lat;		       /* latency tools: the client's samples of every repeat, us */
	volatile sig_atomic_t *stop;
	char why[WHY];
};

/* The buffers of one path: per QP a source half and a destination half. */
struct pbuf {
	enum gdr_mem_kind kind;
	struct gdr_mem mem;
	int ok;
	size_t src_len, dst_len; /* per QP: the source half, then the destination half */
	struct gdr_remote_buf remote[GDR_MAX_QPS];
	/* --validate: the destination read back, and what source and poison must be. */
	uint8_t *tmp, *want_src, *want_poison;
	char skip[WHY];
};

/* WRITE latency is a ping-pong: both sides write into the other. */
static int both_issue(const struct sess *s)
{
	return s->plan.bidir || (s->plan.latency && s->plan.verb == GDR_VERB_WRITE);
}

static int issues_verb(const struct sess *s)
{
	return s->client || both_issue(s);
}

static int peer_issues(const struct sess *s)
{
	return !s->client || both_issue(s);
}

static int is_write(const struct sess *s)
{
	return s->plan.verb == GDR_VERB_WRITE;
}

static int fills_src(const struct sess *s)
{
	return is_write(s) ? issues_verb(s) : peer_issues(s);
}

static int checks_dst(const struct sess *s)
{
	return is_write(s) ? peer_issues(s) : issues_verb(s);
}

static size_t src_off(const struct pbuf *b, unsigned int qp)
{
	return (size_t)qp * (b->src_len + b->dst_len);
}

static size_t dst_off(const struct pbuf *b, unsigned int qp)
{
	return src_off(b, qp) + b->src_len;
}

/* bounce: the pipeline runs on QP 0 only. */
static unsigned int data_qps(const struct sess *s, const struct pbuf *b)
{
	return b->kind == GDR_MEM_BOUNCE ? 1 : s->plan.qps;
}

static int access_flags(const struct sess *s)
{
	int a = 0;

	if (is_write(s)) {
		if (peer_issues(s))
			a |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	} else {
		if (issues_verb(s))
			a |= IBV_ACCESS_LOCAL_WRITE;
		if (peer_issues(s))
			a |= IBV_ACCESS_REMOTE_READ;
	}
	return a;
}

static uint64_t max_size(const struct gdr_plan *p)
{
	uint64_t m = 0;

	for (unsigned int i = 0; i < p->nsizes; i++)
		if (p->sizes[i] > m)
			m = p->sizes[i];
	return m;
}

static struct gdr_topo *get_topo(struct sess *s)
{
	char why[256];

	if (!s->topo_tried) {
		s->topo_tried = 1;
		if (gdr_topo_load(&s->topo_t, s->o->topology_xml, NULL, why, sizeof(why))) {
			if (s->o->topology_xml)
				gdr_err("--topology-xml %s", why);
			else
				printf("topology: unknown (%s)\n", why);
			s->topo_t = NULL;
		}
	}
	return s->topo_t;
}

/* The one line that explains the numbers: GPU-NIC PCIe distance and NCCL's verdict. */
static void describe_topology(struct sess *s)
{
	struct gdr_topo *t = get_topo(s);
	struct gdr_nccl_env nenv;
	char why[256], line[512], safe[4 * sizeof(line) + 1];

	if (!t)
		return;
	if (gdr_topo_pair(t, s->gpu.bus_id, s->conn.nic, &s->topo) == 0) {
		s->have_topo = 1;
		if (!s->topo.gpu_name[0])
			gdr_strlcpy(s->topo.gpu_name, s->gpu.name, sizeof(s->topo.gpu_name));
		if (gdr_nccl_env_load(&nenv, why, sizeof(why))) {
			gdr_warn("%s", why);
			memset(&nenv, 0, sizeof(nenv));
			gdr_nccl_parse_level(NULL, &nenv.level, why, sizeof(why));
			gdr_nccl_parse_read(NULL, &nenv.read, why, sizeof(why));
		}
		/* Names come from the XML or the driver: control bytes are shown as \xHH. */
		gdr_topo_describe(&s->topo, &nenv, line, sizeof(line));
		printf("%s\n", gdr_text_safe(line, safe, sizeof(safe)));
	}
}

static void ensure_cuda(struct sess *s)
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
			      s->gpu_spec[0]			       ? s->gpu_spec
			      : s->o->gpu && strcmp(s->o->gpu, "auto") ? s->o->gpu
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

static void pbuf_free(struct sess *s, struct pbuf *b)
{
	s->cur_mem = NULL;
	if (b->mem.ops)
		gdr_mem_close(&b->mem);
	free(b->tmp);
	free(b->want_src);
	free(b->want_poison);
	b->tmp = b->want_src = b->want_poison = NULL;
}

/* What this path's registration cost, in one line before its rows. */
static void describe_reg(const struct gdr_mem *m, enum gdr_mem_kind kind)
{
	char line[256];
	size_t n;

	n = (size_t)snprintf(line, sizeof(line), "%s: %s", gdr_mem_kind_name(kind),
			     m->reg_call ? m->reg_call : "registered");
	if (m->gpu_alloc && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, " on %s memory", m->gpu_alloc);
	if (m->alloc_us >= 0 && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, ", alloc %.1f us", m->alloc_us);
	if (m->export_us >= 0 && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, ", export %.1f us", m->export_us);
	if (m->reg_us >= 0 && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, ", reg %.1f us", m->reg_us);
	if (m->dereg_us >= 0 && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, ", dereg %.1f us", m->dereg_us);
	printf("%s%s\n", line, m->emulated ? " (emulated)" : "");
}

/* Allocate and register this side's buffers for kind; on failure b->ok = 0 and b->skip says why. */
static void pbuf_open(struct sess *s, struct pbuf *b, enum gdr_mem_kind kind)
{
	char why[WHY];
	int r;

	memset(b, 0, sizeof(*b));
	b->kind = kind;
	gdr_validate_lengths(max_size(&s->plan), s->plan.validate, &b->src_len, &b->dst_len);
	if (kind != GDR_MEM_HOST) {
		ensure_cuda(s);
		s->env.cuda_why = s->cuda ? NULL : s->cuda_why;
	}
	s->env.bounce_chunk = s->plan.bounce_chunk;
	s->env.bounce_slots = s->plan.bounce_slots;
	if (kind == GDR_MEM_BOUNCE &&
	    gdr_bounce_plan_check(s->plan.bidir, s->plan.bounce_chunk, s->conn.max_msg_sz, b->skip,
				  sizeof(b->skip)))
		return;
	r = gdr_mem_open(&b->mem, kind, &s->env, (b->src_len + b->dst_len) * s->plan.qps,
			 access_flags(s), why, sizeof(why));
	if (r) {
		snprintf(b->skip, sizeof(b->skip), "%s", why);
		return;
	}
	if (s->plan.validate) {
		b->tmp = malloc(b->src_len);
		b->want_src = malloc(b->src_len);
		b->want_poison = malloc(b->dst_len);
		if (!b->tmp || !b->want_src || !b->want_poison) {
			snprintf(b->skip, sizeof(b->skip), "out of memory for --validate");
			gdr_mem_close(&b->mem);
			return;
		}
	}
	b->ok = 1;
	s->cur_mem = &b->mem;
	describe_reg(&b->mem, kind);
}

static int fill_sources(struct sess *s, struct pbuf *b)
{
	for (unsigned int q = 0; q < data_qps(s, b); q++) {
		gdr_pattern_fill(b->tmp, b->src_len, s->plan.seed, q);
		int r = b->mem.ops->write(&b->mem, src_off(b, q), b->tmp, b->src_len);
		if (r) {
			snprintf(s->why, WHY, "%s: writing the pattern: %s",
				 gdr_mem_kind_name(b->kind), strerror(-r));
			return r;
		}
	}
	return 0;
}

/* The whole destination half: a message that lands in the wrong slot shows too. */
static int poison_dests(struct sess *s, struct pbuf *b)
{
	for (unsigned int q = 0; q < data_qps(s, b); q++) {
		gdr_pattern_poison(b->tmp, b->dst_len, s->plan.seed, q);
		int r = b->mem.ops->write(&b->mem, dst_off(b, q), b->tmp, b->dst_len);
		if (r) {
			snprintf(s->why, WHY, "%s: clearing the destination: %s",
				 gdr_mem_kind_name(b->kind), strerror(-r));
			return r;
		}
	}
	return 0;
}

static void layout_for(const struct sess *s, const struct pbuf *b, uint64_t size,
		       struct gdr_vlayout *l)
{
	/* bounce: the pipeline moves one message at a time through its own ring. */
	gdr_validate_layout(l, size, s->plan.validate && b->kind != GDR_MEM_BOUNCE, b->src_len,
			    b->dst_len);
}

/*
 * n: messages the writer issued per QP in the last repeat, warmup included.
 * 0 ok; -EILSEQ with the lost message and its first bad byte in meas; other
 * -errno on copy failure.
 */
static int check_dests(struct sess *s, struct pbuf *b, uint64_t size, uint64_t n,
		       struct gdr_msg_meas *m)
{
	struct gdr_vlayout l;

	layout_for(s, b, size, &l);
	for (unsigned int q = 0; q < data_qps(s, b); q++) {
		struct gdr_vbad bad;
		size_t span = (size_t)l.dst_slots * l.stride;
		int r = b->mem.ops->read(&b->mem, dst_off(b, q), b->tmp,
					 span < b->dst_len ? span : b->dst_len);

		if (r) {
			snprintf(s->why, WHY, "%s: reading the destination: %s",
				 gdr_mem_kind_name(b->kind), strerror(-r));
			return r;
		}
		gdr_pattern_fill(b->want_src, b->src_len, s->plan.seed, q);
		gdr_pattern_poison(b->want_poison, b->dst_len, s->plan.seed, q);
		/* Duration mode: earlier repeats wrote further than the last one; no poison check.
		 */
		if (gdr_validate_check(b->want_src, b->tmp,
				       s->plan.duration_ms ? NULL : b->want_poison, size, &l, n,
				       &bad)) {
			const char *side = s->client ? "client" : "server";

			m->valid = -1;
			m->bad_qp = (uint16_t)q;
			m->bad_offset = bad.off;
			if (bad.msg == UINT64_MAX)
				snprintf(m->text, sizeof(m->text),
					 "validation failed on the %s: QP %u: offset %zu, where no "
					 "message was meant to land, was written (expected 0x%02x, "
					 "found 0x%02x): a misplaced message",
					 side, q, bad.off, bad.want, bad.got);
			else
				snprintf(m->text, sizeof(m->text),
					 "validation failed on the %s: QP %u message %" PRIu64
					 " of %" PRIu64 " (warmup included) is missing at offset "
					 "%zu: expected 0x%02x, found 0x%02x (lost, or landed "
					 "elsewhere)",
					 side, q, bad.msg, n, bad.off, bad.want, bad.got);
			return -EILSEQ;
		}
	}
	m->valid = 1;
	return 0;
}

static int send_msg(struct sess *s, const struct gdr_msg *m)
{
	return gdr_ctrl_send(&s->conn, m, s->why, WHY);
}

/*
 * Receive the next message within timeout seconds; it must be of type want
 * (an ERROR from the peer ends the run).
 */
static int recv_msg_within(struct sess *s, struct gdr_msg *m, uint16_t want, double timeout)
{
	char why[WHY];
	int r = gdr_ctrl_recv(&s->conn, m, timeout, why, sizeof(why));

	if (r) {
		snprintf(s->why, WHY, "%s", why);
		return r;
	}
	if (m->type == GDR_MSG_ERROR) {
		snprintf(s->why, WHY, "%s %s: %s", s->client ? "server" : "client", s->conn.peer,
			 m->u.error.text);
		s->conn.peer_gone = 0;
		return m->u.error.code ? m->u.error.code : -EIO;
	}
	if (want && m->type != want) {
		snprintf(s->why, WHY, "protocol error: expected %s from %s, got %s",
			 gdr_msg_type_name(want), s->conn.peer, gdr_msg_type_name(m->type));
		return -EPROTO;
	}
	return 0;
}

static int recv_msg(struct sess *s, struct gdr_msg *m, uint16_t want)
{
	return recv_msg_within(s, m, want, s->o->timeout);
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

static void exchange_local_buf(struct sess *s, const struct pbuf *b, struct gdr_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = GDR_MSG_BUF;
	m->u.buf.kind = (uint8_t)b->kind;
	m->u.buf.ok = (uint8_t)b->ok;
	if (b->ok) {
		m->u.buf.nqps = (uint16_t)s->plan.qps;
		for (unsigned int q = 0; q < s->plan.qps; q++) {
			size_t off = is_write(s) ? dst_off(b, q) : src_off(b, q);
			m->u.buf.qp[q].addr = b->mem.addr + off;
			m->u.buf.qp[q].rkey = b->mem.mr ? b->mem.mr->rkey : 0;
			m->u.buf.qp[q].len = is_write(s) ? b->dst_len : b->src_len;
		}
		struct gdr_bounce_res br;
		if (b->kind == GDR_MEM_BOUNCE && !gdr_mem_bounce_res(&b->mem, &br)) {
			/* bounce: the peer reaches our staging ring only (QP 0). */
			memset(m->u.buf.qp, 0, sizeof(m->u.buf.qp));
			m->u.buf.qp[0].addr = (uintptr_t)br.ring;
			m->u.buf.qp[0].rkey = br.rkey;
			m->u.buf.qp[0].len = (uint64_t)br.slots * br.chunk;
		}
	} else {
		gdr_strlcpy(m->u.buf.text, b->skip, sizeof(m->u.buf.text));
	}
}

/* Take the peer's BUF; 0 when both sides can run this path. */
static int take_remote_buf(struct sess *s, struct pbuf *b, const struct gdr_msg *m)
{
	if (m->u.buf.kind != b->kind) {
		snprintf(s->why, WHY, "protocol error: peer answered path %s for %s",
			 gdr_mem_kind_name((enum gdr_mem_kind)m->u.buf.kind),
			 gdr_mem_kind_name(b->kind));
		return -EPROTO;
	}
	if (!b->ok)
		return 0;
	if (!m->u.buf.ok) {
		snprintf(b->skip, sizeof(b->skip), "%s: %s", s->client ? "server" : "client",
			 m->u.buf.text);
		b->ok = 0;
		return 0;
	}
	if (m->u.buf.nqps != s->plan.qps) {
		snprintf(s->why, WHY, "protocol error: peer sent %u buffers for %u QPs",
			 m->u.buf.nqps, s->plan.qps);
		return -EPROTO;
	}
	for (unsigned int q = 0; q < data_qps(s, b); q++) {
		/* Never reach past what the peer registered for this QP. */
		uint64_t need =
		    b->kind == GDR_MEM_BOUNCE /* bounce: the staging ring */
			? (uint64_t)s->plan.bounce_slots * s->plan.bounce_chunk
			: is_write(s) ? b->dst_len : b->src_len; /* --validate cycles through it */

		if (m->u.buf.qp[q].len < need) {
			snprintf(s->why, WHY,
				 "peer registered %" PRIu64 " B for QP %u, plan needs %" PRIu64,
				 m->u.buf.qp[q].len, q, need);
			return -EPROTO;
		}
		b->remote[q] = m->u.buf.qp[q];
	}
	return 0;
}

/* bounce hook: this side's half of the staged pipeline (bounce.c) instead of the loop. */
static int run_bounce(struct sess *s, struct pbuf *b, uint64_t size, struct gdr_loop_out *out)
{
	struct gdr_bounce_res res;
	int producer = is_write(s) == s->client; /* the side with the GPU source */
	struct gdr_bounce_cfg cfg = {
		.write = is_write(s),
		.producer = producer,
		.timed = s->client,
		.size = size,
		.iters = s->plan.iters,
		.warmup = s->plan.warmup,
		.duration = s->plan.duration_ms / 1000.0,
		.gpu_off = producer ? src_off(b, 0) : dst_off(b, 0),
		.raddr = b->remote[0].addr,
		.rkey = b->remote[0].rkey,
		.rlen = b->remote[0].len,
		.tx_depth = s->plan.tx_depth,
		.stall_timeout = s->o->timeout,
		.stop = s->stop,
		.conn = &s->conn,
	};

	if (gdr_mem_bounce_res(&b->mem, &res)) {
		snprintf(s->why, WHY, "bounce: buffers not open");
		return -EINVAL;
	}
	return gdr_bounce_run(&res, &cfg, out, s->why, WHY);
}

static int run_loop(struct sess *s, struct pbuf *b, uint64_t size, struct gdr_loop_out *out)
{
	struct gdr_loop_qp qps[GDR_MAX_QPS];
	struct gdr_loop_cfg cfg = {
		.opcode = is_write(s) ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.size = (uint32_t)size,
		.iters = s->plan.iters,
		.duration = s->plan.duration_ms / 1000.0,
		.tx_depth = s->plan.tx_depth,
		.post_list = s->plan.post_list,
		.cq_mod = s->plan.cq_mod,
		.warmup = s->plan.warmup,
		.stall_timeout = s->o->timeout,
		.stop = s->stop,
		.conn = &s->conn,
	};

	struct gdr_vlayout l;

	if (b->kind == GDR_MEM_BOUNCE) {
		int r = run_bounce(s, b, size, out);

		/*
		 * The pipeline's segments time credit bursts, not the link: its
		 * peak is the repeat's average, a window that really was sustained.
		 */
		if (!r)
			out->peak_bps =
			    out->elapsed_ns ? (double)out->bytes * 1e9 / out->elapsed_ns : NAN;
		return r;
	}
	layout_for(s, b, size, &l);
	cfg.stride = l.stride;
	for (unsigned int q = 0; q < s->plan.qps; q++) {
		qps[q].qp = s->conn.id[q]->qp;
		qps[q].laddr = b->mem.addr + (is_write(s) ? src_off(b, q) : dst_off(b, q));
		qps[q].lkey = b->mem.mr->lkey;
		qps[q].raddr = b->remote[q].addr;
		qps[q].rkey = b->remote[q].rkey;
		qps[q].lslots = is_write(s) ? l.src_slots : l.dst_slots;
		qps[q].rslots = is_write(s) ? l.dst_slots : l.src_slots;
	}
	return gdr_loop_run(s->conn.data_cq, qps, s->plan.qps, &cfg, out, s->why, WHY);
}

/* ---- latency tools (lat_loop.h) ---------------------------------------------------------- */

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

/* The byte a host WRITE ping-pong polls; NULL where the CPU cannot poll (GPU memory). */
static volatile uint8_t *lat_dst_last(const struct sess *s, const struct pbuf *b, uint64_t size)
{
	if (!s->plan.latency || !is_write(s) || b->kind != GDR_MEM_HOST)
		return NULL;
	return (volatile uint8_t *)(uintptr_t)(b->mem.addr + dst_off(b, 0) + size - 1);
}

/* Before the peer may write (START/ACK): no stale stamp can read as an arrival. */
static void lat_arm(const struct sess *s, const struct pbuf *b, uint64_t size)
{
	volatile uint8_t *p = lat_dst_last(s, b, size);

	if (p)
		*p = 0;
}

/* bounce: one message is staged whole, so it must fit the ring. */
static int lat_skip_size(const struct sess *s, const struct pbuf *b, uint64_t size, char *why,
			 size_t wlen)
{
	uint64_t ring = (uint64_t)s->plan.bounce_slots * s->plan.bounce_chunk;
	char a[32], c[32];

	if (!s->plan.latency || b->kind != GDR_MEM_BOUNCE || size <= ring)
		return 0;
	snprintf(why, wlen,
		 "bounce latency stages a message whole: %s is larger than the staging ring "
		 "(%u x %s; raise --bounce-slots or --bounce-chunk)",
		 gdr_fmt_size(size, a, sizeof(a)), s->plan.bounce_slots,
		 gdr_fmt_size(s->plan.bounce_chunk, c, sizeof(c)));
	return 1;
}

static int run_lat(struct sess *s, struct pbuf *b, uint64_t size, double *samples)
{
	struct lat_copy copy = {
		.mem = &b->mem, .src_off = src_off(b, 0), .dst_off = dst_off(b, 0), .size = size
	};
	struct gdr_lat_cfg cfg = {
		.write = is_write(s),
		.initiator = s->client,
		.imm = b->kind != GDR_MEM_HOST,
		.size = (uint32_t)size,
		.iters = s->plan.iters,
		.warmup = s->plan.warmup,
		.raddr = b->remote[0].addr,
		.rkey = b->remote[0].rkey,
		.dst_last = lat_dst_last(s, b, size),
		.stall_timeout = s->o->timeout,
		.stop = s->stop,
		.conn = &s->conn,
	};
	struct gdr_bounce_res br;

	if (b->kind == GDR_MEM_BOUNCE) {
		if (gdr_mem_bounce_res(&b->mem, &br)) {
			snprintf(s->why, WHY, "bounce: buffers not open");
			return -EINVAL;
		}
		/* Both copies are inside the timed interval: GPU -> ring, ring -> GPU. */
		copy.ring = br.ring;
		cfg.laddr = (uintptr_t)br.ring;
		cfg.lkey = br.lkey;
		cfg.hooks.ctx = &copy;
		cfg.hooks.after_recv = s->client || is_write(s) ? lat_h2d : NULL;
		cfg.hooks.before_send = is_write(s) ? lat_d2h : NULL;
	} else {
		cfg.laddr = b->mem.addr + (is_write(s) ? src_off(b, 0) : dst_off(b, 0));
		cfg.lkey = b->mem.mr->lkey;
		if (cfg.dst_last)
			cfg.src_last =
			    (uint8_t *)(uintptr_t)(b->mem.addr + src_off(b, 0) + size - 1);
	}
	return gdr_lat_run(&s->conn, &cfg, samples, s->why, WHY);
}

/* ref_ns, unc_ns: the repeat's reference on this side, for -b (bidir.h). */
static void meas_from_loop(struct gdr_msg_meas *m, const struct gdr_loop_out *lo, uint64_t ref_ns,
			   uint64_t unc_ns)
{
	m->tl = lo->tl;
	gdr_timeline_rebase(&m->tl, ref_ns, unc_ns);
	m->iters = lo->iters;
	m->bytes = lo->bytes;
	m->elapsed_ns = lo->elapsed_ns;
	/* No window long enough (NAN) travels as 0: the wire takes finite numbers only. */
	m->peak_bps = lo->peak_bps > 0 ? lo->peak_bps : 0;
	m->cpu_pct = lo->cpu_pct;
}

static double meas_bps(const struct gdr_msg_meas *m)
{
	return m->elapsed_ns ? (double)m->bytes * 1e9 / m->elapsed_ns : 0;
}

static void acc_add(struct acc *a, const struct gdr_msg_meas *cli, const struct gdr_msg_meas *srv,
		    uint64_t size, int bidir)
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

static void row_common(struct sess *s, struct gdr_result *r, enum gdr_mem_kind kind, uint64_t size)
{
	gdr_result_init(r);
	gdr_strlcpy(r->peer, s->conn.peer, sizeof(r->peer));
	gdr_strlcpy(r->role, s->client ? "client" : "server", sizeof(r->role));
	gdr_strlcpy(r->verb, gdr_verb_name((enum gdr_verb)s->plan.verb), sizeof(r->verb));
	gdr_strlcpy(r->path, gdr_mem_kind_name(kind), sizeof(r->path));
	gdr_strlcpy(r->path_remote, gdr_mem_kind_name(kind), sizeof(r->path_remote));
	r->size_bytes = size;
	r->qps = kind == GDR_MEM_BOUNCE ? 1 : s->plan.qps; /* bounce: QP 0 only */
	r->tx_depth = s->plan.tx_depth;
	r->post_list = s->plan.post_list;
	r->bidir = s->plan.bidir;
	r->repeats = s->plan.repeat;
	r->cpu_util_pct = -1;
	gdr_strlcpy(r->nic, s->conn.nic, sizeof(r->nic));
	if (s->o->label)
		gdr_strlcpy(r->label, s->o->label, sizeof(r->label));
	if (kind != GDR_MEM_HOST && s->cuda) {
		if (s->have_topo)
			gdr_topo_fill_result(&s->topo, r);
		/* CUDA's own view of the GPU wins over the topology's. */
		snprintf(r->gpu, sizeof(r->gpu), "%d", s->gpu.ordinal);
		gdr_strlcpy(r->gpu_bus_id, s->gpu.bus_id, sizeof(r->gpu_bus_id));
		gdr_strlcpy(r->gpu_name, s->gpu.name, sizeof(r->gpu_name));
	}
	{
		int drv = 0;

		if (s->cuda)
			gdr_cuda_driver_version(s->cuda, &drv);
		gdr_provenance_fill(r, &s->prov, kind, s->cur_mem, &s->env, drv,
				    s->cuda ? s->gpu.uuid : NULL);
	}
	gdr_ceiling_row(s->conn.verbs, s->conn.port_num, s->conn.nic,
			kind != GDR_MEM_HOST && s->cuda ? s->gpu.bus_id : NULL, r);
}

/* A row to the CSV, the JSON and, launched with MPI, to what rank 0 gathers. */
static void record(struct sess *s, const struct gdr_result *r)
{
	if (s->csv && gdr_csv_append(s->csv, r))
		gdr_warn("--csv: could not append a row: %s", gdr_csv_error(s->csv));
	if (s->json)
		gdr_json_add(s->json, r);
	if (s->o->sync && s->o->sync->row)
		s->o->sync->row(s->o->sync->ctx, r);
}

static void emit(struct sess *s, const struct gdr_result *r)
{
	if (s->plan.latency)
		gdr_table_row_lat(stdout, r);
	else
		gdr_table_row(stdout, r, s->o->gbits);
	fflush(stdout);
	record(s, r);
}

static void emit_measured(struct sess *s, enum gdr_mem_kind kind, uint64_t size, struct acc *a,
			  const char *status, const char *note)
{
	struct gdr_result r;
	struct gdr_stats st;

	row_common(s, &r, kind, size);
	gdr_stats_compute(a->bps, a->n, &st);
	r.iters = a->iters;
	r.bw_avg_gbps = st.avg * 8 / 1e9;
	r.bw_median_gbps = st.median * 8 / 1e9;
	r.bw_min_gbps = st.min * 8 / 1e9;
	r.bw_max_gbps = st.max * 8 / 1e9;
	/* No window long enough: no peak (empty in CSV, "-" in the table), never a guess. */
	r.bw_peak_gbps =
	    a->peak_bps > 0 ? (a->peak_bps > st.max ? a->peak_bps : st.max) * 8 / 1e9 : NAN;
	r.msg_rate_mpps = a->n ? a->mps_sum / a->n : 0;
	r.cpu_util_pct = a->n ? a->cpu_sum / a->n : -1;
	gdr_ceiling_pct(&r);
	gdr_strlcpy(r.status, status, sizeof(r.status));
	if (note)
		gdr_strlcpy(r.note, note, sizeof(r.note));
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
	emit(s, &r);
}

/* A latency row: the client's samples summarised; no bandwidth columns. */
static void emit_lat(struct sess *s, enum gdr_mem_kind kind, uint64_t size, const double *us,
		     const char *status, const char *note)
{
	struct gdr_result r;

	row_common(s, &r, kind, size);
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
	emit(s, &r);
}

/* What a latency sample is, on this path. */
static const char *lat_note(const struct sess *s, const struct pbuf *b)
{
	if (!is_write(s))
		return b->kind == GDR_MEM_BOUNCE
			   ? "post to completion of the READ from the peer's staging ring, plus "
			     "the local copy to the GPU (the peer's GPU-to-ring copy is not per "
			     "message)"
			   : "post to completion";
	switch (b->kind) {
	case GDR_MEM_HOST:
		return "half round trip; arrival seen by polling the last byte";
	case GDR_MEM_BOUNCE:
		return "half round trip, both GPU copies included; arrival by immediate";
	default:
		return "half round trip; RDMA WRITE with immediate (GPU memory cannot be polled)";
	}
}

/* Note of a measured row: validation, and for bounce the staging ring. */
static const char *row_note(const struct sess *s, const struct pbuf *b, char *buf, size_t len)
{
	char c[32];

	if (b->kind != GDR_MEM_BOUNCE)
		return s->plan.validate ? "validated" : NULL;
	snprintf(buf, len, "%sstaging %u x %s%s", s->plan.validate ? "validated; " : "",
		 s->plan.bounce_slots, gdr_fmt_size(s->plan.bounce_chunk, c, sizeof(c)),
		 s->plan.qps > 1 ? "; QP 0 only" : "");
	return buf;
}

/* launch (launch.h): every launched pair waits for all the others before each START. */
static int sync_point(struct sess *s)
{
	return s->o->sync ? s->o->sync->point(s->o->sync->ctx, s->why, WHY) : 0;
}

/* launch: a skipped path still passes the START points its measurements would have had. */
static int sync_skipped(struct sess *s)
{
	int r = 0;

	for (unsigned int i = 0; s->o->sync && !r && i < s->plan.nsizes * s->plan.repeat; i++)
		r = sync_point(s);
	return r;
}

static void emit_skipped(struct sess *s, const struct pbuf *b)
{
	struct gdr_result r;

	for (unsigned int i = 0; i < s->plan.nsizes; i++) {
		row_common(s, &r, b->kind, s->plan.sizes[i]);
		gdr_strlcpy(r.status, "skipped", sizeof(r.status));
		gdr_strlcpy(r.note, b->skip, sizeof(r.note));
		if (i == 0) {
			gdr_table_row(stdout, &r, s->o->gbits);
			fflush(stdout);
		}
		record(s, &r);
	}
}

/* Add one repeat; a validation mismatch on either side ends the size as failed. */
static int record_repeat(struct sess *s, const struct pbuf *b, uint64_t size,
			 const struct gdr_msg_meas *cli, const struct gdr_msg_meas *srv)
{
	const struct gdr_msg_meas *bad = cli->valid < 0 ? cli : srv->valid < 0 ? srv : NULL;

	acc_add(&s->acc, cli, srv, size, s->plan.bidir);
	if (!bad)
		return 0;
	emit_measured(s, b->kind, size, &s->acc, "failed", bad->text);
	snprintf(s->why, WHY, "%s", bad->text);
	return -EILSEQ;
}

/* ---- client ---------------------------------------------------------------------------- */

static int client_size(struct sess *s, struct pbuf *b, unsigned int pi, uint64_t size)
{
	struct acc *acc = &s->acc;
	struct gdr_msg m, reply;
	int r;

	memset(acc, 0, sizeof(*acc));
	if (s->plan.validate && checks_dst(s)) {
		r = poison_dests(s, b);
		if (r)
			return r;
	}
	for (unsigned int rep = 0; rep < s->plan.repeat; rep++) {
		struct gdr_loop_out lo;

		r = sync_point(s); /* launch */
		if (r)
			return r;
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_START;
		m.u.start.path = (uint8_t)pi;
		m.u.start.repeat = (uint16_t)rep;
		m.u.start.size = size;
		uint64_t t_start = gdr_now_ns(); /* -b: our reference, see bidir.h */
		r = send_msg(s, &m);
		if (!r)
			r = recv_msg(s, &reply, GDR_MSG_ACK);
		if (r)
			return r;
		uint64_t t_ack = gdr_now_ns();
		r = run_loop(s, b, size, &lo);
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_DONE;
		m.u.meas.status = r;
		if (r) {
			gdr_strlcpy(m.u.meas.text, s->why, sizeof(m.u.meas.text));
			send_msg(s, &m);
			return r;
		}
		meas_from_loop(&m.u.meas, &lo, t_start + (t_ack - t_start) / 2,
			       (t_ack - t_start) / 2);
		/*
		 * The check needs how many messages the writer issued: our own
		 * count for READ; for -b WRITE the server's, known up front
		 * unless -D, where its RESULT brings it.
		 */
		int check = s->plan.validate && checks_dst(s) && rep + 1 == s->plan.repeat;
		int deferred = check && is_write(s) && s->plan.duration_ms;
		if (check && !deferred) {
			r = check_dests(s, b, size, s->plan.warmup + lo.iters, &m.u.meas);
			if (r && r != -EILSEQ)
				return r;
		}
		r = send_msg(s, &m);
		if (!r)
			r = recv_msg(s, &reply, GDR_MSG_RESULT);
		if (r)
			return r;
		if (reply.u.meas.status) {
			snprintf(s->why, WHY, "server: %s", reply.u.meas.text);
			return reply.u.meas.status;
		}
		if (deferred) {
			r = check_dests(s, b, size, s->plan.warmup + reply.u.meas.iters, &m.u.meas);
			if (r && r != -EILSEQ)
				return r;
		}
		r = record_repeat(s, b, size, &m.u.meas, &reply.u.meas);
		if (r)
			return r;
	}
	char note[GDR_TEXT_MAX];
	emit_measured(s, b->kind, size, acc, "ok", row_note(s, b, note, sizeof(note)));
	return 0;
}

static int client_lat_size(struct sess *s, struct pbuf *b, unsigned int pi, uint64_t size)
{
	uint64_t n = s->plan.iters;
	struct gdr_lat_stats st;
	struct gdr_msg m, reply;
	int r;

	if (!s->lat) {
		s->lat = calloc((size_t)n * s->plan.repeat, sizeof(*s->lat));
		if (!s->lat) {
			snprintf(s->why, WHY, "out of memory for %" PRIu64 " latency samples",
				 n * s->plan.repeat);
			return -ENOMEM;
		}
	}
	for (unsigned int rep = 0; rep < s->plan.repeat; rep++) {
		r = sync_point(s); /* launch */
		if (r)
			return r;
		lat_arm(s, b, size);
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_START;
		m.u.start.path = (uint8_t)pi;
		m.u.start.repeat = (uint16_t)rep;
		m.u.start.size = size;
		r = send_msg(s, &m);
		if (!r)
			r = recv_msg(s, &reply, GDR_MSG_ACK);
		if (r)
			return r;
		r = run_lat(s, b, size, s->lat + (size_t)rep * n);
		if (!r)
			r = gdr_lat_stats_compute(s->lat, (size_t)(rep + 1) * n, &st);
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_DONE;
		m.u.meas.status = r;
		if (r) {
			if (r == -ENOMEM)
				snprintf(s->why, WHY, "latency: out of memory sorting the samples");
			gdr_strlcpy(m.u.meas.text, s->why, sizeof(m.u.meas.text));
			send_msg(s, &m);
			return r;
		}
		m.u.meas.iters = n;
		m.u.meas.bytes = n * size;
		const double us[7] = { st.min, st.p50, st.p90, st.p99, st.p999, st.max, st.avg };
		memcpy(m.u.meas.lat_us, us, sizeof(us));
		r = send_msg(s, &m);
		if (!r)
			r = recv_msg(s, &reply, GDR_MSG_RESULT);
		if (r)
			return r;
		if (reply.u.meas.status) {
			snprintf(s->why, WHY, "server: %s", reply.u.meas.text);
			return reply.u.meas.status;
		}
		if (rep + 1 == s->plan.repeat)
			emit_lat(s, b->kind, size, m.u.meas.lat_us, "ok", lat_note(s, b));
	}
	return 0;
}

/* latency: a size this path cannot run is one skipped row on both sides, no exchange. */
static int skip_lat_size(struct sess *s, const struct pbuf *b, uint64_t size)
{
	struct gdr_result r;
	int rr = 0;

	row_common(s, &r, b->kind, size);
	gdr_strlcpy(r.status, "skipped", sizeof(r.status));
	lat_skip_size(s, b, size, r.note, sizeof(r.note));
	emit(s, &r);
	for (unsigned int i = 0; s->o->sync && !rr && i < s->plan.repeat; i++)
		rr = sync_point(s); /* launch */
	return rr;
}

/* Once the plan is known: open the GPU if a path needs it, explain the placement, print the header.
 */
static void prepare(struct sess *s)
{
	for (unsigned int i = 0; i < s->plan.nmem; i++)
		if (s->plan.mem[i] != GDR_MEM_HOST)
			ensure_cuda(s);
	if (s->cuda && !s->have_topo)
		describe_topology(s);
	if (s->plan.latency)
		gdr_table_header_lat(stdout);
	else
		gdr_table_header(stdout, s->o->gbits);
	fflush(stdout);
}

/* Is a the first allocator --gpu-alloc asks for (the host path runs with that one only)? */
static int first_alloc(const struct sess *s, int a)
{
	return (s->o->gpu_allocs & ((1u << a) - 1)) == 0;
}

static int client_path(struct sess *s, unsigned int pi)
{
	struct pbuf b;
	struct gdr_msg m, reply;
	int r;

	pbuf_open(s, &b, (enum gdr_mem_kind)s->plan.mem[pi]);
	exchange_local_buf(s, &b, &m);
	r = send_msg(s, &m);
	if (!r)
		r = recv_msg(s, &reply, GDR_MSG_BUF);
	if (!r)
		r = take_remote_buf(s, &b, &reply);
	if (r)
		goto out;
	if (!b.ok) {
		emit_skipped(s, &b);
		r = sync_skipped(s); /* launch */
		goto out;
	}
	if (s->plan.validate && fills_src(s)) {
		r = fill_sources(s, &b);
		if (r)
			goto out;
	}
	for (unsigned int i = 0; i < s->plan.nsizes && !r; i++) {
		char why[8];

		if (lat_skip_size(s, &b, s->plan.sizes[i], why, sizeof(why)))
			r = skip_lat_size(s, &b, s->plan.sizes[i]);
		else if (s->plan.latency)
			r = client_lat_size(s, &b, pi, s->plan.sizes[i]);
		else
			r = client_size(s, &b, pi, s->plan.sizes[i]);
	}
out:
	pbuf_free(s, &b);
	return r;
}

static int client_run(struct sess *s)
{
	struct gdr_msg m, reply;
	struct timespec ts;
	int r;

	/* Sizes above the port's max_msg_sz cannot be one message: clamp them, say so. */
	for (unsigned int i = 0; i < s->o->nsizes; i++) {
		if (s->conn.max_msg_sz && s->o->sizes[i] > s->conn.max_msg_sz) {
			gdr_warn("%s: size %" PRIu64 " exceeds max_msg_sz %u: using %u",
				 s->conn.nic, s->o->sizes[i], s->conn.max_msg_sz,
				 s->conn.max_msg_sz);
			s->o->sizes[i] = s->conn.max_msg_sz;
		}
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gdr_plan_from_opts(s->o, (uint32_t)(ts.tv_nsec ^ getpid()), &s->plan);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_PLAN;
	m.u.plan = s->plan;
	r = send_msg(s, &m);
	if (!r)
		r = recv_msg(s, &reply, GDR_MSG_ACK);
	if (r)
		return r;
	prepare(s);
	/* --gpu-alloc all: every GPU path once per allocator, host once (the server does the same).
	 */
	for (int a = 0; a < GDR_GPU_ALLOC__COUNT && !r; a++) {
		if (!(s->o->gpu_allocs & (1u << a)))
			continue;
		s->env.gpu_alloc = (enum gdr_gpu_alloc)a;
		for (unsigned int pi = 0; pi < s->plan.nmem && !r; pi++)
			if (first_alloc(s, a) || s->plan.mem[pi] != GDR_MEM_HOST)
				r = client_path(s, pi);
	}
	if (r) {
		gdr_ctrl_send_error(&s->conn, r, s->why);
		return r;
	}
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_BYE;
	return send_msg(s, &m);
}

/* ---- server ---------------------------------------------------------------------------- */

static int server_size(struct sess *s, struct pbuf *b, uint64_t size, const struct gdr_msg *start)
{
	struct acc *acc = &s->acc;
	struct gdr_msg m, done, res;
	int r;

	for (unsigned int rep = 0;; rep++) {
		if (rep == 0) {
			memset(acc, 0, sizeof(*acc));
			m = *start;
		} else {
			r = sync_point(s); /* launch */
			if (!r)
				r = recv_msg(s, &m, GDR_MSG_START);
			if (r)
				return r;
		}
		if (m.u.start.size != size || m.u.start.repeat != rep) {
			snprintf(s->why, WHY,
				 "protocol error: START for size %" PRIu64 " repeat %u, "
				 "expected size %" PRIu64 " repeat %u",
				 m.u.start.size, m.u.start.repeat, size, rep);
			return -EPROTO;
		}
		if (rep == 0 && s->plan.validate && checks_dst(s)) {
			r = poison_dests(s, b);
			if (r)
				return r;
		}
		lat_arm(s, b, size);
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_ACK;
		uint64_t ref = gdr_now_ns(); /* -b: our reference, see bidir.h */
		r = send_msg(s, &m);
		if (r)
			return r;
		memset(&res, 0, sizeof(res));
		res.type = GDR_MSG_RESULT;
		if (s->plan.latency) {
			/* WRITE: we answer every ping; READ: nothing to do until DONE. */
			res.u.meas.status = is_write(s) ? run_lat(s, b, size, NULL) : 0;
			if (res.u.meas.status)
				gdr_strlcpy(res.u.meas.text, s->why, sizeof(res.u.meas.text));
		} else if (s->plan.bidir) {
			struct gdr_loop_out lo;

			res.u.meas.status = run_loop(s, b, size, &lo);
			if (res.u.meas.status)
				gdr_strlcpy(res.u.meas.text, s->why, sizeof(res.u.meas.text));
			else
				meas_from_loop(&res.u.meas, &lo, ref, 0);
		} else if (b->kind == GDR_MEM_BOUNCE) {
			/* bounce: the server is half of the pipeline; a failure ends the run. */
			struct gdr_loop_out lo;

			r = run_loop(s, b, size, &lo);
			if (r)
				return r;
		}
		/*
		 * The one wait that lasts as long as the measurement: probe the
		 * client meanwhile (every other wait is bounded by --timeout).
		 */
		s->conn.probe = 1;
		r = recv_msg_within(s, &done, GDR_MSG_DONE, repeat_budget(s, size));
		s->conn.probe = 0;
		if (r)
			return r;
		if (done.u.meas.status) {
			snprintf(s->why, WHY, "client: %s", done.u.meas.text);
			return done.u.meas.status;
		}
		if (!res.u.meas.status && s->plan.validate && checks_dst(s) &&
		    rep + 1 == s->plan.repeat) {
			/* The writer into our destination: the client for WRITE, us for READ. */
			uint64_t n = is_write(s) ? done.u.meas.iters : res.u.meas.iters;

			r = check_dests(s, b, size, s->plan.warmup + n, &res.u.meas);
			if (r && r != -EILSEQ)
				return r;
		}
		r = send_msg(s, &res);
		if (r)
			return r;
		if (res.u.meas.status) {
			snprintf(s->why, WHY, "%s", res.u.meas.text);
			return res.u.meas.status;
		}
		if (s->plan.latency) {
			if (rep + 1 == s->plan.repeat) {
				emit_lat(s, b->kind, size, done.u.meas.lat_us, "ok",
					 lat_note(s, b));
				return 0;
			}
			continue;
		}
		r = record_repeat(s, b, size, &done.u.meas, &res.u.meas);
		if (r)
			return r;
		if (rep + 1 == s->plan.repeat)
			break;
	}
	char note[GDR_TEXT_MAX];
	emit_measured(s, b->kind, size, acc, "ok", row_note(s, b, note, sizeof(note)));
	return 0;
}

static int server_path(struct sess *s, unsigned int pi, const struct gdr_msg *bufmsg)
{
	struct pbuf b;
	struct gdr_msg m;
	int r;

	pbuf_open(s, &b, (enum gdr_mem_kind)s->plan.mem[pi]);
	if (bufmsg->u.buf.kind != s->plan.mem[pi]) {
		snprintf(s->why, WHY, "protocol error: client offered path %s, plan says %s",
			 gdr_mem_kind_name((enum gdr_mem_kind)bufmsg->u.buf.kind),
			 gdr_mem_kind_name((enum gdr_mem_kind)s->plan.mem[pi]));
		r = -EPROTO;
		goto out;
	}
	exchange_local_buf(s, &b, &m);
	r = take_remote_buf(s, &b, bufmsg);
	if (!r)
		r = send_msg(s, &m);
	if (r)
		goto out;
	if (!b.ok) {
		emit_skipped(s, &b);
		r = sync_skipped(s); /* launch */
		goto out;
	}
	if (s->plan.validate && fills_src(s)) {
		r = fill_sources(s, &b);
		if (r)
			goto out;
	}
	for (unsigned int i = 0; i < s->plan.nsizes && !r; i++) {
		char why[8];

		if (lat_skip_size(s, &b, s->plan.sizes[i], why, sizeof(why))) {
			r = skip_lat_size(s, &b, s->plan.sizes[i]);
			continue;
		}
		r = sync_point(s); /* launch */
		if (!r)
			r = recv_msg(s, &m, GDR_MSG_START);
		if (!r && m.u.start.path != pi) {
			snprintf(s->why, WHY, "protocol error: START for path %u during path %u",
				 m.u.start.path, pi);
			r = -EPROTO;
		}
		if (!r)
			r = server_size(s, &b, s->plan.sizes[i], &m);
	}
out:
	pbuf_free(s, &b);
	return r;
}

static int server_run(struct sess *s)
{
	struct gdr_msg m;
	int r;

	r = recv_msg(s, &m, GDR_MSG_PLAN);
	if (r)
		return r;
	r = gdr_plan_check(s->o, &m.u.plan, s->why, WHY);
	for (unsigned int i = 0; !r && i < m.u.plan.nsizes; i++) {
		if (s->conn.max_msg_sz && m.u.plan.sizes[i] > s->conn.max_msg_sz) {
			snprintf(s->why, WHY, "size %" PRIu64 " exceeds %s's max_msg_sz %u",
				 m.u.plan.sizes[i], s->conn.nic, s->conn.max_msg_sz);
			r = -EINVAL;
		}
	}
	if (r) {
		gdr_ctrl_send_error(&s->conn, r, s->why);
		return r;
	}
	s->plan = m.u.plan;
	gdr_plan_adopt(s->o, &s->plan);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ACK;
	r = send_msg(s, &m);
	if (!r)
		prepare(s);
	for (int a = 0; a < GDR_GPU_ALLOC__COUNT && !r; a++) {
		if (!(s->o->gpu_allocs & (1u << a)))
			continue;
		s->env.gpu_alloc = (enum gdr_gpu_alloc)a;
		for (unsigned int pi = 0; pi < s->plan.nmem && !r; pi++) {
			if (!first_alloc(s, a) && s->plan.mem[pi] == GDR_MEM_HOST)
				continue;
			r = recv_msg(s, &m, GDR_MSG_BUF);
			if (!r)
				r = server_path(s, pi, &m);
		}
	}
	if (!r)
		r = recv_msg(s, &m, GDR_MSG_BYE);
	else if (r != -ECONNRESET)
		gdr_ctrl_send_error(&s->conn, r, s->why);
	return r;
}

static int nic_ok(const char *nic, void *arg)
{
	return gdr_nic_port_active(nic, *(int *)arg);
}

/* -d auto, --gpu auto, and the NIC's address that steers rdma_cm to -d. */
static int place(struct sess *s)
{
	struct gdr_opts *o = s->o;
	int auto_gpu = o->gpu && !strcmp(o->gpu, "auto");
	int auto_dev = (o->dev && !strcmp(o->dev, "auto")) || (!o->dev && o->gpu && !auto_gpu);
	struct gdr_topo_pair p;
	struct gdr_topo *t;
	char why[256];

	if (auto_gpu) {
		if (!o->dev || !strcmp(o->dev, "auto")) {
			snprintf(s->why, WHY, "--gpu auto needs -d NAME (the NIC to be near)");
			return -EINVAL;
		}
		t = get_topo(s);
		if (!t || gdr_topo_nearest_gpu(t, o->dev, &p)) {
			snprintf(s->why, WHY,
				 "--gpu auto: no GPU found in the topology to pair with %s",
				 o->dev);
			return -ENOENT;
		}
		gdr_strlcpy(s->gpu_spec, p.gpu_bus_id, sizeof(s->gpu_spec));
		printf("placement: GPU %s is the nearest to %s (%s)\n", p.gpu_bus_id, o->dev,
		       gdr_topo_class_name(p.cls));
	} else if (auto_dev) {
		/*
		 * Without the GPU or a NIC near it, rdma_cm still picks a NIC: the GPU
		 * paths then skip with their own reason and host still runs.
		 */
		ensure_cuda(s);
		if (!s->cuda) {
			gdr_warn("-d auto: %s: rdma_cm picks the NIC (give -d NAME)", s->cuda_why);
			return 0;
		}
		t = get_topo(s);
		if (!t || gdr_topo_nearest_nic(t, s->gpu.bus_id, nic_ok, &o->ib_port, &p)) {
			gdr_warn(
			    "-d auto: no active RDMA NIC found near GPU %s: rdma_cm picks the NIC "
			    "(give -d NAME)",
			    s->gpu.bus_id);
			return 0;
		}
		gdr_strlcpy(s->devname, p.nic, sizeof(s->devname));
		o->dev = s->devname;
		printf("placement: %s is the nearest active NIC to GPU %d (%s): %s\n", o->dev,
		       s->gpu.ordinal, s->gpu.bus_id, gdr_topo_class_name(p.cls));
	}
	if (o->dev && !o->bind_addr) {
		if (gdr_nic_ipv4(o->dev, o->ib_port, s->bind, sizeof(s->bind), why, sizeof(why)) ==
		    0) {
			o->bind_addr = s->bind;
			gdr_dbg("%s: using its address %s", o->dev, s->bind);
		} else {
			gdr_dbg("%s", why);
		}
	}
	return 0;
}

/* Host buffers and this process near the NIC, unless --no-bind. */
static void bind_near_nic(struct sess *s)
{
	const struct gdr_topo_nic *nic;
	struct gdr_topo *t;
	char why[256];

	if (s->o->no_bind || s->o->topology_xml || getenv("HWLOC_XMLFILE"))
		return;
	t = get_topo(s);
	nic = t ? gdr_topo_find_nic(t, s->conn.nic) : NULL;
	if (!nic || nic->numa < 0)
		return;
	if (gdr_topo_bind_numa(t, nic->numa, why, sizeof(why)))
		gdr_warn("cannot bind to %s's NUMA node %d: %s (--no-bind to silence)", s->conn.nic,
			 nic->numa, why);
	else
		printf("placement: bound to NUMA node %d (%s's)\n", nic->numa, s->conn.nic);
}

int gdr_session_run(struct gdr_opts *o, volatile sig_atomic_t *stop)
{
	struct sess *s = calloc(1, sizeof(*s));
	char why[WHY];
	int r;

	if (!s) {
		gdr_err("out of memory");
		return 1;
	}
	s->o = o;
	s->client = o->server != NULL;
	s->stop = stop;
	const char *root = getenv("GDRPERF_ROOT");
	s->env.sysfs_root = root && *root ? root : "/";
	s->env.hugepages = o->hugepages;
	s->env.dmabuf_pcie = o->dmabuf_pcie;
	s->env.no_relaxed = o->no_relaxed;
	s->env.data_direct = o->data_direct;
	/* A --topology-xml that cannot be read or parsed is a usage error before anything runs. */
	if (o->topology_xml && !get_topo(s)) {
		free(s);
		return 2;
	}

	/* Outputs are checked before anything runs: a bad path fails now, not after the run. */
	if (o->csv && gdr_csv_open(&s->csv, o->csv, why, sizeof(why))) {
		gdr_err("--csv %s: %s", o->csv, why);
		free(s);
		return 1;
	}
	if (o->json && gdr_json_open(&s->json, o->json, why, sizeof(why))) {
		gdr_err("--json %s: %s", o->json, why);
		r = 1;
		goto out_csv;
	}

	r = place(s);
	/*
	 * launch: pairs exchange addresses once each knows its own; a rank that
	 * could not place itself still takes part, so that its peer learns why.
	 */
	if (o->sync && o->sync->rendezvous) {
		char rwhy[WHY];
		int rr =
		    o->sync->rendezvous(o->sync->ctx, o, r ? s->why : NULL, rwhy, sizeof(rwhy));

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
			r = gdr_conn_connect(&s->conn, o, stop, s->why, WHY);
		else
			r = gdr_conn_accept(&s->conn, o, stop, s->why, WHY);
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
		s->env.pd = s->conn.pd;
		s->env.nic = s->conn.nic;
		gdr_provenance_load(&s->prov, s->conn.verbs);
		bind_near_nic(s);
		printf("%s %s: %s %s over %s, %u QP(s)\n", s->client ? "client" : "server",
		       gdr_verb_name(o->verb), s->client ? "connected to" : "accepted",
		       s->conn.peer, s->conn.nic, s->conn.nqps);
		r = s->client ? client_run(s) : server_run(s);
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
	free(s->lat);
	if (s->json) {
		int jr = gdr_json_close(s->json, why, sizeof(why));
		if (jr) {
			gdr_err("--json %s: %s", o->json, why);
			r = r ? r : jr;
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
