#include "config.h"

#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decide.h"
#include "report.h"
#include "util.h"

/* A cursor that refuses to run past either end; one failure poisons it. */
struct cur {
	uint8_t *w;
	const uint8_t *r;
	size_t len, pos;
	int bad;
};

static void put(struct cur *c, uint64_t v, unsigned int n)
{
	if (c->bad || c->pos + n > c->len) {
		c->bad = 1;
		return;
	}
	for (unsigned int i = 0; i < n; i++)
		c->w[c->pos++] = (uint8_t)(v >> (8 * i));
}

static uint64_t get(struct cur *c, unsigned int n)
{
	uint64_t v = 0;

	if (c->bad || c->pos + n > c->len) {
		c->bad = 1;
		return 0;
	}
	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)c->r[c->pos++] << (8 * i);
	return v;
}

static void put_dbl(struct cur *c, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	put(c, v, 8);
}

static double get_dbl(struct cur *c)
{
	uint64_t v = get(c, 8);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

static void put_text(struct cur *c, const char *s)
{
	size_t n = strnlen(s, GDR_TEXT_MAX - 1);

	put(c, n, 2);
	if (c->bad || c->pos + n > c->len) {
		c->bad = 1;
		return;
	}
	memcpy(c->w + c->pos, s, n);
	c->pos += n;
}

/* Text from the peer into out[size]: bounded, NUL-terminated, control characters replaced. */
static int get_text_n(struct cur *c, char *out, size_t size)
{
	uint64_t n = get(c, 2);

	if (c->bad || n >= size || c->pos + n > c->len)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = c->r[c->pos + i];
		out[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	out[n] = '\0';
	c->pos += n;
	return 0;
}

static int get_text(struct cur *c, char *out)
{
	return get_text_n(c, out, GDR_TEXT_MAX);
}

/* The BUF's side description (version 4): each field as text, bounded by its own size. */
static void enc_side(struct cur *c, const struct gdr_side_info *si)
{
	put_text(c, si->gpu);
	put_text(c, si->gpu_bus_id);
	put_text(c, si->gpu_name);
	put_text(c, si->nic);
	put_text(c, si->distance);
}

static int dec_side(struct cur *c, struct gdr_side_info *si, char *why, size_t wlen)
{
	const char *bad = get_text_n(c, si->gpu, sizeof(si->gpu))		  ? "gpu"
			  : get_text_n(c, si->gpu_bus_id, sizeof(si->gpu_bus_id)) ? "gpu_bus_id"
			  : get_text_n(c, si->gpu_name, sizeof(si->gpu_name))	  ? "gpu_name"
			  : get_text_n(c, si->nic, sizeof(si->nic))		  ? "nic"
			  : get_text_n(c, si->distance, sizeof(si->distance))	  ? "distance"
										  : NULL;

	if (!bad)
		return 0;
	snprintf(why, wlen, "BUF side %s: bad length", bad);
	return -EBADMSG;
}

const char *gdr_msg_type_name(uint16_t type)
{
	static const char *const names[] = {
		[GDR_MSG_PLAN] = "PLAN",     [GDR_MSG_ACK] = "ACK",	[GDR_MSG_ERROR] = "ERROR",
		[GDR_MSG_BUF] = "BUF",	     [GDR_MSG_START] = "START", [GDR_MSG_DONE] = "DONE",
		[GDR_MSG_RESULT] = "RESULT", [GDR_MSG_BYE] = "BYE",	[GDR_MSG_ROUND] = "ROUND",
	};

	if (type == 0 || type >= GDR_MSG__END)
		return "unknown";
	return names[type];
}

const char *gdr_round_stop_name(unsigned int stop)
{
	static const char *const names[] = {
		[GDR_ROUND_MORE] = "", [GDR_ROUND_DECIDED] = "decided", [GDR_ROUND_MAX] = "max rounds",
		[GDR_ROUND_BUDGET] = "time budget", [GDR_ROUND_NOTHING] = "nothing to decide",
	};

	return stop < GDR_ROUND__END ? names[stop] : "?";
}

static void enc_meas(struct cur *c, const struct gdr_msg_meas *m)
{
	put(c, (uint32_t)m->status, 4);
	put(c, m->iters, 8);
	put(c, m->bytes, 8);
	put(c, m->elapsed_ns, 8);
	put_dbl(c, m->peak_bps);
	put_dbl(c, m->cpu_pct);
	put(c, (uint8_t)m->valid, 1);
	put(c, m->bad_qp, 2);
	put(c, m->bad_offset, 8);
	for (unsigned int i = 0; i < 7; i++)
		put_dbl(c, m->lat_us[i]);
	/* -b: the side's time line on its reference (bidir.h). */
	put(c, m->tl.n, 1);
	put(c, m->tl.unc_ns, 8);
	for (unsigned int i = 0; i < m->tl.n && i < GDR_TL_POINTS; i++) {
		put(c, (uint64_t)m->tl.t_ns[i], 8);
		put(c, m->tl.bytes[i], 8);
	}
	put_text(c, m->text);
}

int gdr_msg_encode(const struct gdr_msg *m, uint8_t *buf, size_t len)
{
	struct cur c = { .w = buf, .len = len };
	const struct gdr_plan *p = &m->u.plan;

	put(&c, GDR_PROTO_MAGIC, 4);
	put(&c, GDR_PROTO_VERSION, 2);
	put(&c, m->type, 2);
	put(&c, 0, 4); /* length, patched below */
	switch (m->type) {
	case GDR_MSG_PLAN:
		if (p->nsizes > GDR_MAX_SIZES || p->nmem > GDR_MEM__COUNT)
			return -EINVAL;
		put(&c, p->verb, 1);
		put(&c, p->bidir, 1);
		put(&c, p->validate, 1);
		put(&c, p->nmem, 1);
		for (unsigned int i = 0; i < p->nmem; i++)
			put(&c, p->mem[i], 1);
		put(&c, p->nsizes, 2);
		for (unsigned int i = 0; i < p->nsizes; i++)
			put(&c, p->sizes[i], 8);
		put(&c, p->iters, 8);
		put(&c, p->duration_ms, 4);
		put(&c, p->qps, 2);
		put(&c, p->tx_depth, 2);
		put(&c, p->post_list, 2);
		put(&c, p->cq_mod, 2);
		put(&c, p->repeat, 2);
		put(&c, p->warmup, 4);
		put(&c, p->bounce_chunk, 4);
		put(&c, p->bounce_slots, 2);
		put(&c, p->seed, 4);
		put(&c, p->latency, 1);
		put(&c, p->gpu_allocs, 1);
		put(&c, p->gpu_flags, 1);
		put(&c, (uint16_t)p->tos, 2);
		if (p->npairs > GDR_MAX_PAIRS)
			return -EINVAL;
		put(&c, p->sides, 1);
		put(&c, p->npairs, 1);
		for (unsigned int i = 0; i < p->npairs; i++) {
			put(&c, p->pairs[i].client, 1);
			put(&c, p->pairs[i].server, 1);
		}
		put(&c, p->repeat_min, 2);
		put(&c, p->alpha_ppm, 4);
		put(&c, p->margin_ppm, 4);
		put(&c, p->size_us, 8);
		put(&c, p->run_id, 8);
		break;
	case GDR_MSG_ACK:
	case GDR_MSG_ERROR:
		put(&c, (uint32_t)m->u.error.code, 4);
		put_text(&c, m->u.error.text);
		if (m->type == GDR_MSG_ERROR)
			break;
		if (m->u.error.nmem > GDR_MEM__COUNT)
			return -EINVAL;
		put(&c, m->u.error.nmem, 1);
		for (unsigned int i = 0; i < m->u.error.nmem; i++)
			put(&c, m->u.error.mem[i], 1);
		break;
	case GDR_MSG_BUF:
		if (m->u.buf.nqps > GDR_MAX_QPS)
			return -EINVAL;
		put(&c, m->u.buf.kind, 1);
		put(&c, m->u.buf.ok, 1);
		put(&c, m->u.buf.held, 1);
		put(&c, m->u.buf.nqps, 2);
		for (unsigned int i = 0; i < m->u.buf.nqps; i++) {
			put(&c, m->u.buf.qp[i].addr, 8);
			put(&c, m->u.buf.qp[i].rkey, 4);
			put(&c, m->u.buf.qp[i].len, 8);
		}
		put_text(&c, m->u.buf.text);
		enc_side(&c, &m->u.buf.side);
		break;
	case GDR_MSG_START:
		put(&c, m->u.start.path, 1);
		put(&c, m->u.start.warmup_only, 1);
		put(&c, m->u.start.repeat, 2);
		put(&c, m->u.start.size, 8);
		break;
	case GDR_MSG_DONE:
	case GDR_MSG_RESULT:
		enc_meas(&c, &m->u.meas);
		break;
	case GDR_MSG_ROUND:
		put(&c, m->u.round.size, 2);
		put(&c, m->u.round.rounds, 2);
		put(&c, m->u.round.stop, 1);
		break;
	case GDR_MSG_BYE:
		break;
	default:
		return -EINVAL;
	}
	if (c.bad)
		return -ENOSPC;
	size_t total = c.pos;
	c.pos = 8;
	put(&c, total - 12, 4);
	return (int)total;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(why, wlen, __VA_ARGS__);                                                  \
		return -EBADMSG;                                                                   \
	} while (0)

static int dec_meas(struct cur *c, struct gdr_msg_meas *m, char *why, size_t wlen)
{
	m->status = (int32_t)get(c, 4);
	m->iters = get(c, 8);
	m->bytes = get(c, 8);
	m->elapsed_ns = get(c, 8);
	m->peak_bps = get_dbl(c);
	m->cpu_pct = get_dbl(c);
	m->valid = (int8_t)get(c, 1);
	m->bad_qp = (uint16_t)get(c, 2);
	m->bad_offset = get(c, 8);
	for (unsigned int i = 0; i < 7; i++)
		m->lat_us[i] = get_dbl(c);
	m->tl.n = (uint32_t)get(c, 1);
	m->tl.unc_ns = get(c, 8);
	if (m->tl.n > GDR_TL_POINTS)
		FAIL("measurement time line: %u points (at most %u)", m->tl.n, GDR_TL_POINTS);
	for (unsigned int i = 0; i < m->tl.n; i++) {
		m->tl.t_ns[i] = (int64_t)get(c, 8);
		m->tl.bytes[i] = get(c, 8);
	}
	if (m->tl.unc_ns > 3600ull * 1000000000ull)
		FAIL("measurement time line: uncertainty %llu ns out of range",
		     (unsigned long long)m->tl.unc_ns);
	if (gdr_timeline_check(&m->tl, why, wlen))
		return -EBADMSG;
	if (get_text(c, m->text))
		FAIL("measurement text: bad length");
	if (m->status > 0 || m->status < -4095)
		FAIL("measurement status %d out of range", m->status);
	if (m->valid < -1 || m->valid > 1)
		FAIL("measurement validation flag %d out of range", m->valid);
	if (m->bad_qp >= GDR_MAX_QPS)
		FAIL("measurement QP index %u out of range", m->bad_qp);
	if (!(m->peak_bps >= 0 && m->peak_bps < 1e15) || !(m->cpu_pct >= -1 && m->cpu_pct < 1e5))
		FAIL("measurement rates out of range");
	for (unsigned int i = 0; i < 7; i++)
		if (!(m->lat_us[i] >= 0 && m->lat_us[i] < 1e12))
			FAIL("measurement latency out of range");
	return 0;
}

/* 1 when kind k is one of list[0..n). */
static int has_kind(const uint8_t *list, unsigned int n, unsigned int k)
{
	for (unsigned int i = 0; i < n; i++)
		if (list[i] == k)
			return 1;
	return 0;
}

/*
 * The combinations against the rest of the plan: known paths, each pair
 * once, the client's paths exactly mem[]; not named (GDR_SIDES_SAME): each
 * path of mem[] on both sides, in its order. A client never sends
 * GDR_SIDES_SERVER: the server chooses that itself.
 */
static int plan_pairs_check(const struct gdr_plan *p, char *why, size_t wlen)
{
	uint8_t clients[GDR_MAX_PAIRS];

	if (p->sides > GDR_SIDES_CLIENT)
		FAIL("plan sides %u out of range 0..%d", p->sides, GDR_SIDES_CLIENT);
	if (p->npairs == 0)
		FAIL("plan combination count 0 out of range 1..%d", GDR_MAX_PAIRS);
	for (unsigned int i = 0; i < p->npairs; i++) {
		const struct gdr_mem_pair *a = &p->pairs[i];

		if (a->client >= GDR_MEM__COUNT || a->server >= GDR_MEM__COUNT)
			FAIL("plan combination %u: path %u:%u unknown", i, a->client, a->server);
		for (unsigned int j = 0; j < i; j++)
			if (p->pairs[j].client == a->client && p->pairs[j].server == a->server)
				FAIL("plan combination %u listed twice", i);
		if (!has_kind(p->mem, p->nmem, a->client))
			FAIL("plan combination %u: client path %u not in the plan's paths", i,
			     a->client);
		if (p->sides == GDR_SIDES_SAME &&
		    (p->npairs != p->nmem || a->client != p->mem[i] || a->server != a->client))
			FAIL("plan combination %u: not the plan's path on both sides", i);
		clients[i] = a->client;
	}
	for (unsigned int i = 0; i < p->nmem; i++)
		if (!has_kind(clients, p->npairs, p->mem[i]))
			FAIL("plan path %u in no combination", p->mem[i]);
	return 0;
}

static int dec_plan(struct cur *c, struct gdr_plan *p, char *why, size_t wlen)
{
	p->verb = (uint8_t)get(c, 1);
	p->bidir = (uint8_t)get(c, 1);
	p->validate = (uint8_t)get(c, 1);
	p->nmem = (uint8_t)get(c, 1);
	if (p->verb > GDR_VERB_READ)
		FAIL("plan verb %u unknown", p->verb);
	if (p->bidir > 1 || p->validate > 1)
		FAIL("plan flags out of range");
	if (p->nmem == 0 || p->nmem > GDR_MEM__COUNT)
		FAIL("plan path count %u out of range 1..%d", p->nmem, GDR_MEM__COUNT);
	for (unsigned int i = 0; i < p->nmem; i++) {
		p->mem[i] = (uint8_t)get(c, 1);
		if (p->mem[i] >= GDR_MEM__COUNT)
			FAIL("plan path %u unknown", p->mem[i]);
	}
	p->nsizes = (uint16_t)get(c, 2);
	if (p->nsizes == 0 || p->nsizes > GDR_MAX_SIZES)
		FAIL("plan size count %u out of range 1..%d", p->nsizes, GDR_MAX_SIZES);
	for (unsigned int i = 0; i < p->nsizes; i++) {
		p->sizes[i] = get(c, 8);
		if (p->sizes[i] == 0 || p->sizes[i] > (1ull << 30))
			FAIL("plan size %" PRIu64 " out of range 1..1G", p->sizes[i]);
	}
	p->iters = get(c, 8);
	p->duration_ms = (uint32_t)get(c, 4);
	p->qps = (uint16_t)get(c, 2);
	p->tx_depth = (uint16_t)get(c, 2);
	p->post_list = (uint16_t)get(c, 2);
	p->cq_mod = (uint16_t)get(c, 2);
	p->repeat = (uint16_t)get(c, 2);
	p->warmup = (uint32_t)get(c, 4);
	p->bounce_chunk = (uint32_t)get(c, 4);
	p->bounce_slots = (uint16_t)get(c, 2);
	p->seed = (uint32_t)get(c, 4);
	p->latency = (uint8_t)get(c, 1);
	p->gpu_allocs = (uint8_t)get(c, 1);
	p->gpu_flags = (uint8_t)get(c, 1);
	p->tos = (int16_t)(uint16_t)get(c, 2);
	p->sides = (uint8_t)get(c, 1);
	p->npairs = (uint8_t)get(c, 1);
	if (p->npairs > GDR_MAX_PAIRS)
		FAIL("plan combination count %u out of range 1..%d", p->npairs, GDR_MAX_PAIRS);
	for (unsigned int i = 0; i < p->npairs; i++) {
		p->pairs[i].client = (unsigned char)get(c, 1);
		p->pairs[i].server = (unsigned char)get(c, 1);
	}
	p->repeat_min = (uint16_t)get(c, 2);
	p->alpha_ppm = (uint32_t)get(c, 4);
	p->margin_ppm = (uint32_t)get(c, 4);
	p->size_us = get(c, 8);
	p->run_id = get(c, 8);
	if (c->bad)
		return 0; /* reported by the caller as truncated */
	if (plan_pairs_check(p, why, wlen))
		return -EBADMSG;
	if (p->latency > 1)
		FAIL("plan latency flag %u out of range", p->latency);
	if (p->gpu_allocs == 0 || p->gpu_allocs >= 1u << GDR_GPU_ALLOC__COUNT)
		FAIL("plan GPU allocators 0x%x out of range", p->gpu_allocs);
	if (p->gpu_flags & ~GDR_PLAN__FLAGS)
		FAIL("plan GPU flags 0x%x unknown", p->gpu_flags);
	if (p->tos < -1 || p->tos > 255)
		FAIL("plan ToS %d out of range -1..255", p->tos);
	if (p->iters == 0 || p->iters > (1ull << 40))
		FAIL("plan iterations %" PRIu64 " out of range", p->iters);
	if (p->duration_ms > 86400000u)
		FAIL("plan duration %u ms out of range", p->duration_ms);
	if (p->qps == 0 || p->qps > GDR_MAX_QPS)
		FAIL("plan QP count %u out of range 1..%d", p->qps, GDR_MAX_QPS);
	if (p->tx_depth == 0 || p->tx_depth > 16384)
		FAIL("plan tx depth %u out of range", p->tx_depth);
	if (p->post_list == 0 || p->post_list > p->tx_depth)
		FAIL("plan post list %u out of range 1..tx depth", p->post_list);
	if (p->cq_mod == 0 || p->cq_mod > p->tx_depth)
		FAIL("plan CQ moderation %u out of range 1..tx depth", p->cq_mod);
	if (p->repeat == 0 || p->repeat > GDR_REPEAT_MAX)
		FAIL("plan repeat %u out of range", p->repeat);
	if (p->repeat_min == 0 || p->repeat_min > p->repeat)
		FAIL("plan rounds %u:%u out of range", p->repeat_min, p->repeat);
	if (p->repeat_min != p->repeat &&
	    (p->repeat_min < GDR_DECIDE_MIN_ROUNDS || p->repeat > GDR_REP_KEEP || p->latency))
		FAIL("plan rounds %u:%u out of range %d..%d (bandwidth only)", p->repeat_min,
		     p->repeat, GDR_DECIDE_MIN_ROUNDS, GDR_REP_KEEP);
	if (p->alpha_ppm == 0 || p->alpha_ppm > 500000 || p->margin_ppm == 0 ||
	    p->margin_ppm > 500000)
		FAIL("plan error rate %u or margin %u ppm out of range 1..500000", p->alpha_ppm,
		     p->margin_ppm);
	if (p->size_us > 30ull * 86400000000ull)
		FAIL("plan time per size %" PRIu64 " us out of range", p->size_us);
	if (p->warmup > (1u << 30))
		FAIL("plan warmup %u out of range", p->warmup);
	if (p->bounce_chunk < 4096 || p->bounce_slots == 0 || p->bounce_slots > 256)
		FAIL("plan bounce chunk/slots out of range");
	return 0;
}

int gdr_msg_decode(const uint8_t *buf, size_t len, struct gdr_msg *m, char *why, size_t wlen)
{
	struct cur c = { .r = buf, .len = len };
	uint32_t magic, plen;
	uint16_t version;
	int r = 0;

	memset(m, 0, sizeof(*m));
	magic = (uint32_t)get(&c, 4);
	version = (uint16_t)get(&c, 2);
	m->type = (uint16_t)get(&c, 2);
	plen = (uint32_t)get(&c, 4);
	if (c.bad)
		FAIL("message of %zu bytes is shorter than a header", len);
	if (magic != GDR_PROTO_MAGIC)
		FAIL("bad magic 0x%08x: the peer is not gdrperf", magic);
	if (version != GDR_PROTO_VERSION) {
		snprintf(why, wlen, "peer speaks gdrperf protocol version %u, this is version %u",
			 version, (unsigned int)GDR_PROTO_VERSION);
		return -EPROTO;
	}
	if (plen != len - 12)
		FAIL("%s: length field %u but %zu payload bytes arrived",
		     gdr_msg_type_name(m->type), plen, len - 12);
	switch (m->type) {
	case GDR_MSG_PLAN:
		r = dec_plan(&c, &m->u.plan, why, wlen);
		break;
	case GDR_MSG_ACK:
	case GDR_MSG_ERROR:
		m->u.error.code = (int32_t)get(&c, 4);
		if (get_text(&c, m->u.error.text))
			FAIL("%s text: bad length", gdr_msg_type_name(m->type));
		if (m->u.error.code > 0 || m->u.error.code < -4095)
			FAIL("%s code %d out of range", gdr_msg_type_name(m->type),
			     m->u.error.code);
		if (m->type == GDR_MSG_ERROR)
			break;
		m->u.error.nmem = (uint8_t)get(&c, 1);
		if (m->u.error.nmem > GDR_MEM__COUNT)
			FAIL("ACK path count %u out of range 0..%d", m->u.error.nmem,
			     GDR_MEM__COUNT);
		for (unsigned int i = 0; i < m->u.error.nmem; i++) {
			m->u.error.mem[i] = (uint8_t)get(&c, 1);
			if (m->u.error.mem[i] >= GDR_MEM__COUNT ||
			    has_kind(m->u.error.mem, i, m->u.error.mem[i]))
				FAIL("ACK path %u unknown or listed twice", m->u.error.mem[i]);
		}
		break;
	case GDR_MSG_BUF:
		m->u.buf.kind = (uint8_t)get(&c, 1);
		m->u.buf.ok = (uint8_t)get(&c, 1);
		m->u.buf.held = (uint8_t)get(&c, 1);
		m->u.buf.nqps = (uint16_t)get(&c, 2);
		if (m->u.buf.kind >= GDR_MEM__COUNT)
			FAIL("BUF path %u unknown", m->u.buf.kind);
		if (m->u.buf.ok > 1)
			FAIL("BUF status %u out of range", m->u.buf.ok);
		if (m->u.buf.held > 1)
			FAIL("BUF held %u out of range", m->u.buf.held);
		if (m->u.buf.nqps > GDR_MAX_QPS)
			FAIL("BUF QP count %u out of range 0..%d", m->u.buf.nqps, GDR_MAX_QPS);
		for (unsigned int i = 0; i < m->u.buf.nqps; i++) {
			m->u.buf.qp[i].addr = get(&c, 8);
			m->u.buf.qp[i].rkey = (uint32_t)get(&c, 4);
			m->u.buf.qp[i].len = get(&c, 8);
			if (m->u.buf.qp[i].addr + m->u.buf.qp[i].len < m->u.buf.qp[i].addr)
				FAIL("BUF QP %u: address range wraps", i);
		}
		if (get_text(&c, m->u.buf.text))
			FAIL("BUF text: bad length");
		r = dec_side(&c, &m->u.buf.side, why, wlen);
		break;
	case GDR_MSG_START:
		m->u.start.path = (uint8_t)get(&c, 1);
		m->u.start.warmup_only = (uint8_t)get(&c, 1);
		m->u.start.repeat = (uint16_t)get(&c, 2);
		m->u.start.size = get(&c, 8);
		if (m->u.start.path >= GDR_MAX_PATHS || m->u.start.warmup_only > 1)
			FAIL("START fields out of range");
		if (m->u.start.size == 0 || m->u.start.size > (1ull << 30))
			FAIL("START size %" PRIu64 " out of range", m->u.start.size);
		break;
	case GDR_MSG_DONE:
	case GDR_MSG_RESULT:
		r = dec_meas(&c, &m->u.meas, why, wlen);
		break;
	case GDR_MSG_ROUND:
		m->u.round.size = (uint16_t)get(&c, 2);
		m->u.round.rounds = (uint16_t)get(&c, 2);
		m->u.round.stop = (uint8_t)get(&c, 1);
		if (m->u.round.size >= GDR_MAX_SIZES || m->u.round.stop >= GDR_ROUND__END ||
		    m->u.round.rounds == 0 || m->u.round.rounds > GDR_REP_KEEP)
			FAIL("ROUND fields out of range");
		break;
	case GDR_MSG_BYE:
		break;
	default:
		FAIL("unknown message type %u", m->type);
	}
	if (r)
		return r;
	if (c.bad)
		FAIL("%s: truncated", gdr_msg_type_name(m->type));
	if (c.pos != len)
		FAIL("%s: %zu trailing bytes", gdr_msg_type_name(m->type), len - c.pos);
	return 0;
}

int gdr_hello_encode(const struct gdr_hello *h, uint8_t *buf, size_t len)
{
	struct cur c = { .w = buf, .len = len };

	put(&c, GDR_PROTO_MAGIC, 4);
	put(&c, h->version, 2);
	put(&c, h->nqps, 2);
	put(&c, h->qp_index, 2);
	put(&c, h->tx_depth, 2);
	put(&c, h->extra_recv, 2);
	put(&c, h->session, 4);
	return c.bad ? -ENOSPC : (int)c.pos;
}

int gdr_hello_decode(const uint8_t *buf, size_t len, struct gdr_hello *h, char *why, size_t wlen)
{
	struct cur c = { .r = buf, .len = len };
	uint32_t magic = (uint32_t)get(&c, 4);

	h->version = (uint16_t)get(&c, 2);
	h->nqps = (uint16_t)get(&c, 2);
	h->qp_index = (uint16_t)get(&c, 2);
	h->tx_depth = (uint16_t)get(&c, 2);
	h->extra_recv = (uint16_t)get(&c, 2);
	h->session = (uint32_t)get(&c, 4);
	if (c.bad || magic != GDR_PROTO_MAGIC)
		FAIL("connect request without a gdrperf hello (not a gdrperf client)");
	if (h->version != GDR_PROTO_VERSION) {
		snprintf(why, wlen, "client speaks gdrperf protocol version %u, this is version %u",
			 h->version, (unsigned int)GDR_PROTO_VERSION);
		return -EPROTO;
	}
	if (h->nqps == 0 || h->nqps > GDR_MAX_QPS || h->qp_index >= h->nqps)
		FAIL("hello: QP %u of %u out of range 1..%d", h->qp_index, h->nqps, GDR_MAX_QPS);
	if (h->tx_depth == 0 || h->tx_depth > 16384)
		FAIL("hello: tx depth %u out of range", h->tx_depth);
	if (h->extra_recv > GDR_MAX_EXTRA_RECV)
		FAIL("hello: %u receive slots out of range 0..%d", h->extra_recv,
		     GDR_MAX_EXTRA_RECV);
	return 0;
}

void gdr_plan_from_opts(const struct gdr_opts *o, uint32_t seed, struct gdr_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->verb = (uint8_t)o->verb;
	p->bidir = (uint8_t) !!o->bidir;
	p->validate = (uint8_t) !!o->validate;
	p->nmem = (uint8_t)o->nmem;
	for (unsigned int i = 0; i < o->nmem; i++)
		p->mem[i] = (uint8_t)o->mem[i];
	p->nsizes = (uint16_t)o->nsizes;
	memcpy(p->sizes, o->sizes, o->nsizes * sizeof(o->sizes[0]));
	p->iters = o->iters;
	p->duration_ms = gdr_plan_duration_ms(o->duration);
	p->qps = (uint16_t)o->qps;
	p->tx_depth = (uint16_t)o->tx_depth;
	p->post_list = (uint16_t)o->post_list;
	p->cq_mod = (uint16_t)o->cq_mod;
	p->repeat = (uint16_t)o->repeat;
	p->warmup = o->warmup;
	p->bounce_chunk = (uint32_t)o->bounce_chunk;
	p->bounce_slots = (uint16_t)o->bounce_slots;
	p->seed = seed;
	p->latency = (uint8_t) !!o->latency;
	p->gpu_allocs = (uint8_t)o->gpu_allocs;
	p->gpu_flags = (uint8_t)((o->dmabuf_pcie ? GDR_PLAN_DMABUF_PCIE : 0) |
				 (o->no_relaxed ? GDR_PLAN_NO_RELAXED : 0) |
				 (o->data_direct ? GDR_PLAN_DATA_DIRECT : 0));
	p->tos = (int16_t)o->tos;
	p->repeat_min = (uint16_t)o->repeat_min;
	p->alpha_ppm = (uint32_t)(o->alpha * 1e6 + 0.5);
	p->margin_ppm = (uint32_t)(o->margin * 1e6 + 0.5);
	p->size_us = (uint64_t)ceil(o->size_time * 1e6);
	/* The combinations: as listed, every path with every --mem-remote one, or each alike. */
	if (o->npairs) {
		p->sides = GDR_SIDES_CLIENT;
		for (unsigned int i = 0; i < o->npairs && i < GDR_MAX_PAIRS; i++)
			p->pairs[p->npairs++] = o->mem_pairs[i];
	} else {
		p->sides = o->nmem_remote ? GDR_SIDES_CLIENT : GDR_SIDES_SAME;
		for (unsigned int i = 0; i < o->nmem; i++) {
			for (unsigned int j = 0; j < (o->nmem_remote ? o->nmem_remote : 1); j++) {
				enum gdr_mem_kind r = o->nmem_remote ? o->mem_remote[j] : o->mem[i];

				p->pairs[p->npairs++] =
				    (struct gdr_mem_pair){ (unsigned char)o->mem[i],
							   (unsigned char)r };
			}
		}
	}
}

/* "host,peermem": the paths of list[0..n) (or of the combinations' server side). */
static const char *kinds_text(const uint8_t *list, unsigned int n, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "",
				      gdr_mem_kind_name((enum gdr_mem_kind)list[i]));
	return buf;
}

int gdr_plan_server_side(struct gdr_plan *p, const uint8_t *own, unsigned int nown, char *why,
			 size_t wlen)
{
	uint8_t named[GDR_MEM__COUNT];
	unsigned int nnamed = 0, n = 0;
	char a[64], b[64];

	if (!nown)
		return 0;
	if (p->sides == GDR_SIDES_SAME) {
		for (unsigned int i = 0; i < p->nmem; i++)
			for (unsigned int j = 0; j < nown && n < GDR_MAX_PAIRS; j++)
				p->pairs[n++] = (struct gdr_mem_pair){ p->mem[i], own[j] };
		p->npairs = (uint8_t)n;
		p->sides = GDR_SIDES_SERVER;
		return 0;
	}
	for (unsigned int i = 0; i < p->npairs; i++)
		if (!has_kind(named, nnamed, p->pairs[i].server))
			named[nnamed++] = p->pairs[i].server;
	for (unsigned int i = 0; i < nnamed; i++)
		n += has_kind(own, nown, named[i]);
	if (n == nnamed && n == nown)
		return 0;
	snprintf(why, wlen,
		 "plan mismatch: the server's side: the client names %s (--mem-remote or --mem "
		 "LOCAL:REMOTE), the server's --mem says %s (name it on one side, or the same "
		 "paths on both)",
		 kinds_text(named, nnamed, a, sizeof(a)), kinds_text(own, nown, b, sizeof(b)));
	return -EINVAL;
}

static const char *alloc_names(unsigned int allocs)
{
	return allocs == (1u << GDR_GPU_ALLOC__COUNT) - 1 ? "all"
	       : allocs == 1u << GDR_GPU_ALLOC_VMM	  ? "vmm"
							  : "memalloc";
}

#define CHECK(bit, name, mine, theirs, fmt)                                                        \
	do {                                                                                       \
		if ((s->set & (bit)) && (mine) != (theirs)) {                                      \
			snprintf(why, wlen,                                                        \
				 "plan mismatch: %s: server has " fmt ", client asks " fmt, name,  \
				 mine, theirs);                                                    \
			return -EINVAL;                                                            \
		}                                                                                  \
	} while (0)

int gdr_plan_check(const struct gdr_opts *s, const struct gdr_plan *p, char *why, size_t wlen)
{
	struct gdr_plan mine;

	if (p->verb != s->verb) {
		snprintf(why, wlen, "plan mismatch: verb: server runs %s, client runs %s",
			 gdr_verb_name(s->verb), gdr_verb_name((enum gdr_verb)p->verb));
		return -EINVAL;
	}
	if (p->latency != !!s->latency) {
		snprintf(why, wlen,
			 "plan mismatch: the server runs the %s tool, the client the %s tool (run "
			 "gdr_%s_%s on both sides)",
			 s->latency ? "latency" : "bandwidth", p->latency ? "latency" : "bandwidth",
			 gdr_verb_name(s->verb), s->latency ? "lat" : "bw");
		return -EINVAL;
	}
	gdr_plan_from_opts(s, 0, &mine);
	if ((s->set & GDR_SET_SIZE) &&
	    (mine.nsizes != p->nsizes ||
	     memcmp(mine.sizes, p->sizes, p->nsizes * sizeof(p->sizes[0])))) {
		snprintf(why, wlen,
			 "plan mismatch: -s/-a/--sizes: server has %u size(s) from %" PRIu64
			 ", client asks %u from %" PRIu64,
			 mine.nsizes, mine.sizes[0], p->nsizes, p->sizes[0]);
		return -EINVAL;
	}
	CHECK(GDR_SET_ITERS, "-n/--iters", mine.iters, p->iters, "%" PRIu64);
	CHECK(GDR_SET_DURATION, "-D/--duration (ms)", mine.duration_ms, p->duration_ms, "%u");
	CHECK(GDR_SET_QPS, "-q/--qp", mine.qps, p->qps, "%u");
	CHECK(GDR_SET_TX_DEPTH, "-t/--tx-depth", mine.tx_depth, p->tx_depth, "%u");
	CHECK(GDR_SET_POST_LIST, "-l/--post_list", mine.post_list, p->post_list, "%u");
	CHECK(GDR_SET_CQ_MOD, "-Q/--cq-mod", mine.cq_mod, p->cq_mod, "%u");
	CHECK(GDR_SET_BIDIR, "-b/--bidirectional", mine.bidir, p->bidir, "%u");
	CHECK(GDR_SET_REPEAT, "--repeat", mine.repeat, p->repeat, "%u");
	CHECK(GDR_SET_REPEAT, "--repeat MIN", mine.repeat_min, p->repeat_min, "%u");
	CHECK(GDR_SET_DECIDE, "--alpha (ppm)", mine.alpha_ppm, p->alpha_ppm, "%u");
	CHECK(GDR_SET_DECIDE, "--margin (ppm)", mine.margin_ppm, p->margin_ppm, "%u");
	CHECK(GDR_SET_DECIDE, "--time-per-size (us)", mine.size_us, p->size_us, "%" PRIu64);
	CHECK(GDR_SET_WARMUP, "--warmup", mine.warmup, p->warmup, "%u");
	CHECK(GDR_SET_VALIDATE, "--validate", mine.validate, p->validate, "%u");
	CHECK(GDR_SET_BOUNCE, "--bounce-chunk", mine.bounce_chunk, p->bounce_chunk, "%u");
	CHECK(GDR_SET_BOUNCE, "--bounce-slots", mine.bounce_slots, p->bounce_slots, "%u");
	CHECK(GDR_SET_GPU_ALLOC, "--gpu-alloc", alloc_names(mine.gpu_allocs),
	      alloc_names(p->gpu_allocs), "%s");
	CHECK(GDR_SET_DMABUF_MAPPING, "--dmabuf-mapping",
	      mine.gpu_flags & GDR_PLAN_DMABUF_PCIE ? "pcie" : "default",
	      p->gpu_flags & GDR_PLAN_DMABUF_PCIE ? "pcie" : "default", "%s");
	CHECK(GDR_SET_RELAXED, "--disable_pcie_relaxed",
	      mine.gpu_flags & GDR_PLAN_NO_RELAXED ? "given" : "not given",
	      p->gpu_flags & GDR_PLAN_NO_RELAXED ? "given" : "not given", "%s");
	CHECK(GDR_SET_DATA_DIRECT, "--use_data_direct",
	      mine.gpu_flags & GDR_PLAN_DATA_DIRECT ? "given" : "not given",
	      p->gpu_flags & GDR_PLAN_DATA_DIRECT ? "given" : "not given", "%s");
	CHECK(GDR_SET_TOS, "-T/--tos", mine.tos, p->tos, "%d");
	/* --mem is the server's own side, not the client's: gdr_plan_server_side. */
	return 0;
}
