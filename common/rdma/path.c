#include "config.h"

#include "path.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pattern.h"
#include "util.h"

const struct gdr_path_ops *gdr_path_ops_for(enum gdr_mem_kind kind, enum gdr_mem_kind peer_kind)
{
	return kind == GDR_MEM_BOUNCE || peer_kind == GDR_MEM_BOUNCE ? &gdr_path_bounce_ops
								     : &gdr_path_rdma_ops;
}

int gdr_path_per_side(const struct gdr_path_env *e)
{
	return e->plan->sides != GDR_SIDES_SAME;
}

int gdr_path_lat_imm(const struct gdr_path *p)
{
	return p->kind != GDR_MEM_HOST || p->peer_kind != GDR_MEM_HOST;
}

unsigned int gdr_paths_recv_slots(const struct gdr_opts *o)
{
	unsigned int n = 0;

	/* Every path, listed or not: the server takes the number from the hello as it is. */
	for (int k = 0; k < GDR_MEM__COUNT; k++) {
		unsigned int v =
		    gdr_path_ops_for((enum gdr_mem_kind)k, (enum gdr_mem_kind)k)->recv_slots(o);
		if (v > n)
			n = v;
	}
	return n;
}

static int both_issue(const struct gdr_path_env *e)
{
	return e->plan->bidir || (e->plan->latency && e->plan->verb == GDR_VERB_WRITE);
}

int gdr_path_is_write(const struct gdr_path_env *e)
{
	return e->plan->verb == GDR_VERB_WRITE;
}

int gdr_path_issues_verb(const struct gdr_path_env *e)
{
	return e->client || both_issue(e);
}

int gdr_path_peer_issues(const struct gdr_path_env *e)
{
	return !e->client || both_issue(e);
}

int gdr_path_fills_src(const struct gdr_path_env *e)
{
	return gdr_path_is_write(e) ? gdr_path_issues_verb(e) : gdr_path_peer_issues(e);
}

int gdr_path_checks_dst(const struct gdr_path_env *e)
{
	return gdr_path_is_write(e) ? gdr_path_peer_issues(e) : gdr_path_issues_verb(e);
}

static int access_flags(const struct gdr_path_env *e)
{
	int a = 0;

	if (gdr_path_is_write(e)) {
		if (gdr_path_peer_issues(e))
			a |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	} else {
		if (gdr_path_issues_verb(e))
			a |= IBV_ACCESS_LOCAL_WRITE;
		if (gdr_path_peer_issues(e))
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

/*
 * What this path's registration cost, in one line before its rows; with
 * per-side paths the peer's path of the combination too.
 */
static void describe_reg(const struct gdr_path *p)
{
	const struct gdr_mem *m = &p->mem;
	char line[256], peer[40] = "";
	size_t n;

	if (gdr_path_per_side(p->env))
		snprintf(peer, sizeof(peer), " (peer: %s)", gdr_mem_kind_name(p->peer_kind));
	n = (size_t)snprintf(line, sizeof(line), "%s%s: %s", gdr_mem_kind_name(p->kind), peer,
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

void gdr_path_alloc(struct gdr_path *p)
{
	const struct gdr_plan *pl = p->env->plan;
	char why[sizeof(p->skip)];
	int r;

	r = gdr_mem_open(&p->mem, p->kind, p->env->menv, (p->src_len + p->dst_len) * pl->qps,
			 access_flags(p->env), why, sizeof(why));
	if (r) {
		snprintf(p->skip, sizeof(p->skip), "%s", why);
		p->err = r;
		return;
	}
	if (pl->validate) {
		p->tmp = malloc(p->src_len);
		p->want_src = malloc(p->src_len);
		p->want_poison = malloc(p->dst_len);
		if (!p->tmp || !p->want_src || !p->want_poison) {
			snprintf(p->skip, sizeof(p->skip), "out of memory for --validate");
			p->err = -ENOMEM;
			gdr_mem_close(&p->mem);
			return;
		}
	}
	p->ok = 1;
}

void gdr_path_open(struct gdr_path *p, enum gdr_mem_kind kind, enum gdr_mem_kind peer_kind,
		   const struct gdr_path_env *env)
{
	memset(p, 0, sizeof(*p));
	p->ops = env->ops ? env->ops : gdr_path_ops_for(kind, peer_kind);
	p->env = env;
	p->kind = kind;
	p->peer_kind = peer_kind;
	if (env->plan->latency) {
		long page = sysconf(_SC_PAGESIZE);

		gdr_lat_lengths(max_size(env->plan), page > 0 ? (size_t)page : 4096, &p->src_len,
				&p->dst_len);
	} else {
		gdr_validate_lengths(max_size(env->plan), env->plan->validate, &p->src_len,
				     &p->dst_len);
	}
	p->ops->open(p);
	if (p->ok)
		describe_reg(p);
}

void gdr_path_close(struct gdr_path *p)
{
	if (p->mem.ops)
		gdr_mem_close(&p->mem);
	free(p->tmp);
	free(p->want_src);
	free(p->want_poison);
	p->tmp = p->want_src = p->want_poison = NULL;
	p->ok = 0;
}

void gdr_path_describe_halves(const struct gdr_path *p, struct gdr_msg_buf *out)
{
	int w = gdr_path_is_write(p->env);

	out->nqps = (uint16_t)p->env->plan->qps;
	for (unsigned int q = 0; q < p->env->plan->qps; q++) {
		size_t off = w ? gdr_path_dst_off(p, q) : gdr_path_src_off(p, q);
		out->qp[q].addr = p->mem.addr + off;
		out->qp[q].rkey = p->mem.mr ? p->mem.mr->rkey : 0;
		out->qp[q].len = w ? p->dst_len : p->src_len;
	}
}

/* --validate cycles through the whole half. */
uint64_t gdr_path_need_half(const struct gdr_path *p, unsigned int q)
{
	(void)q;
	return gdr_path_is_write(p->env) ? p->dst_len : p->src_len;
}

void gdr_path_describe(const struct gdr_path *p, struct gdr_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = GDR_MSG_BUF;
	m->u.buf.kind = (uint8_t)p->kind;
	m->u.buf.ok = (uint8_t)p->ok;
	if (p->ok)
		p->ops->describe(p, &m->u.buf);
	else
		gdr_strlcpy(m->u.buf.text, p->skip, sizeof(m->u.buf.text));
}

/*
 * A combination one side cannot run: per-side runs name each side that
 * skipped ("client (local): ...; server (remote): ..."), others as before
 * (this side's reason, else "server: ...").
 */
static void skip_note(struct gdr_path *p, const struct gdr_msg_buf *peer)
{
	const char *me = p->env->client ? "client" : "server";
	const char *other = p->env->client ? "server" : "client";
	char mine[sizeof(p->skip)];

	if (!gdr_path_per_side(p->env)) {
		if (p->ok)
			snprintf(p->skip, sizeof(p->skip), "%s: %s", other, peer->text);
		return;
	}
	gdr_strlcpy(mine, p->skip, sizeof(mine));
	/* Both reasons in the 512-byte note, each cut to its share. */
	if (!p->ok && !peer->ok)
		snprintf(p->skip, sizeof(p->skip), "%s (local): %.300s; %s (remote): %.160s", me,
			 mine, other, peer->text);
	else if (!p->ok)
		snprintf(p->skip, sizeof(p->skip), "%s (local): %.480s", me, mine);
	else
		snprintf(p->skip, sizeof(p->skip), "%s (remote): %s", other, peer->text);
}

int gdr_path_accept(struct gdr_path *p, const struct gdr_msg_buf *peer, char *why, size_t wlen)
{
	const struct gdr_plan *pl = p->env->plan;

	if (peer->kind != p->peer_kind) {
		snprintf(why, wlen, "protocol error: peer answered path %s for %s",
			 gdr_mem_kind_name((enum gdr_mem_kind)peer->kind),
			 gdr_mem_kind_name(p->peer_kind));
		return -EPROTO;
	}
	if (!p->ok || !peer->ok) {
		skip_note(p, peer);
		p->ok = 0;
		return 0;
	}
	if (peer->nqps != pl->qps) {
		snprintf(why, wlen, "protocol error: peer sent %u buffers for %u QPs", peer->nqps,
			 pl->qps);
		return -EPROTO;
	}
	for (unsigned int q = 0; q < p->ops->qps(pl); q++) {
		/* Never reach past what the peer registered for this QP. */
		uint64_t need = p->ops->need(p, q);

		if (peer->qp[q].len < need) {
			snprintf(why, wlen,
				 "peer registered %" PRIu64 " B for QP %u, plan needs %" PRIu64,
				 peer->qp[q].len, q, need);
			return -EPROTO;
		}
		p->remote[q] = peer->qp[q];
	}
	return 0;
}

int gdr_path_fill(struct gdr_path *p, char *why, size_t wlen)
{
	const struct gdr_plan *pl = p->env->plan;

	for (unsigned int q = 0; q < p->ops->qps(pl); q++) {
		gdr_pattern_fill(p->tmp, p->src_len, pl->seed, q);
		int r = p->mem.ops->write(&p->mem, gdr_path_src_off(p, q), p->tmp, p->src_len);
		if (r) {
			snprintf(why, wlen, "%s: writing the pattern: %s",
				 gdr_mem_kind_name(p->kind), strerror(-r));
			return r;
		}
	}
	return 0;
}

/* The whole destination half: a message that lands in the wrong slot shows too. */
int gdr_path_poison(struct gdr_path *p, char *why, size_t wlen)
{
	const struct gdr_plan *pl = p->env->plan;

	for (unsigned int q = 0; q < p->ops->qps(pl); q++) {
		gdr_pattern_poison(p->tmp, p->dst_len, pl->seed, q);
		int r = p->mem.ops->write(&p->mem, gdr_path_dst_off(p, q), p->tmp, p->dst_len);
		if (r) {
			snprintf(why, wlen, "%s: clearing the destination: %s",
				 gdr_mem_kind_name(p->kind), strerror(-r));
			return r;
		}
	}
	return 0;
}

static void mismatch(const struct gdr_path *p, unsigned int q, uint64_t n,
		     const struct gdr_vbad *bad, struct gdr_msg_meas *m)
{
	const char *side = p->env->client ? "client" : "server";

	m->valid = -1;
	m->bad_qp = (uint16_t)q;
	m->bad_offset = bad->off;
	if (bad->msg == UINT64_MAX)
		snprintf(m->text, sizeof(m->text),
			 "validation failed on the %s: QP %u: offset %zu, where no "
			 "message was meant to land, was written (expected 0x%02x, "
			 "found 0x%02x): a misplaced message",
			 side, q, bad->off, bad->want, bad->got);
	else
		snprintf(m->text, sizeof(m->text),
			 "validation failed on the %s: QP %u message %" PRIu64 " of %" PRIu64
			 " (warmup included) is missing at offset "
			 "%zu: expected 0x%02x, found 0x%02x (lost, or landed "
			 "elsewhere)",
			 side, q, bad->msg, n, bad->off, bad->want, bad->got);
}

int gdr_path_check(struct gdr_path *p, uint64_t size, uint64_t n, struct gdr_msg_meas *m, char *why,
		   size_t wlen)
{
	const struct gdr_plan *pl = p->env->plan;
	struct gdr_vlayout l;

	p->ops->layout(p, size, &l);
	for (unsigned int q = 0; q < p->ops->qps(pl); q++) {
		struct gdr_vbad bad;
		size_t span = (size_t)l.dst_slots * l.stride;
		int r = p->mem.ops->read(&p->mem, gdr_path_dst_off(p, q), p->tmp,
					 span < p->dst_len ? span : p->dst_len);

		if (r) {
			snprintf(why, wlen, "%s: reading the destination: %s",
				 gdr_mem_kind_name(p->kind), strerror(-r));
			return r;
		}
		gdr_pattern_fill(p->want_src, p->src_len, pl->seed, q);
		gdr_pattern_poison(p->want_poison, p->dst_len, pl->seed, q);
		/* Duration mode: earlier repeats wrote further than the last one; no poison check.
		 */
		if (gdr_validate_check(p->want_src, p->tmp, pl->duration_ms ? NULL : p->want_poison,
				       size, &l, n, &bad)) {
			mismatch(p, q, n, &bad, m);
			return -EILSEQ;
		}
	}
	m->valid = 1;
	return 0;
}
