/*
 * Test-only: a simulated RC device for the unit tests of the post/poll
 * engines. Include after cmocka_common.h and <infiniband/verbs.h>.
 */
#ifndef GDR_SIM_VERBS_H
#define GDR_SIM_VERBS_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

/*
 * A simulated RC device behind libibverbs' inline ibv_post_send/ibv_poll_cq
 * (they call through ctx->ops): one serial link that completes a message
 * every ns_per_msg, moves the bytes as RDMA WRITE/READ would (host memory),
 * and a CQ that holds completions back until `burst` of them are ready,
 * then hands them out POLL_BATCH at a time, as a loaded HCA or Soft-RoCE
 * does. drop_msg: that message of drop_qp completes but never lands;
 * shift_msg: that one lands one slot further. A SEND completes and moves
 * nothing (the peer of a control message is not simulated). post_ns: each
 * posted message costs the poster that long, as on Soft-RoCE, where the
 * system call runs the transport inline.
 */
#define SIM_QPS	 4
#define SIM_CQES 8192
struct sim {
	struct ibv_context ctx;
	struct ibv_cq cq;
	struct ibv_qp qp[SIM_QPS];
	uint64_t ns_per_msg, link_free, post_ns;
	unsigned int burst;
	int releasing;
	struct {
		uint64_t wr_id, at;
	} cqe[SIM_CQES];
	unsigned int head, tail;
	uint64_t seq[SIM_QPS];
	unsigned int drop_qp;
	uint64_t drop_msg, shift_msg, shift_by;
	/*
	 * Receive side, loopback: a WRITE WITH IMMEDIATE completes a receive
	 * on rcq (the control CQ) of the same device; reposts are counted.
	 * answer_ctrl: such a receive reads as a control SEND instead; mute:
	 * a dead link (nothing lands, nothing completes). rlate: the next
	 * rlate polls of rcq find it empty, as if what it holds landed just
	 * after them.
	 */
	struct ibv_cq rcq;
	struct ibv_wc rwc[64];
	unsigned int rhead, rtail, reposts, rlate;
	int answer_ctrl, mute;
};

static struct sim *sim_of(struct ibv_context *ctx)
{
	return (struct sim *)(void *)((char *)ctx - offsetof(struct sim, ctx));
}

static int sim_post(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct sim *d = sim_of(qp->context);
	unsigned int qi = qp->qp_num;

	for (; wr; wr = wr->next) {
		uint64_t msg = d->seq[qi]++, now = gdr_now_ns();
		uint64_t raddr = wr->wr.rdma.remote_addr + (msg == d->shift_msg ? d->shift_by : 0);
		void *l = (void *)(uintptr_t)wr->sg_list->addr, *r = (void *)(uintptr_t)raddr;

		if (d->post_ns) {
			struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)d->post_ns };

			nanosleep(&ts, NULL);
		}
		if (d->mute)
			continue; /* a dead link: nothing lands, nothing completes */
		if (wr->opcode == IBV_WR_SEND) {
			/* a control SEND: it completes, the peer side is not simulated */
		} else if (!(qi == d->drop_qp && msg == d->drop_msg)) {
			if (wr->opcode == IBV_WR_RDMA_READ)
				memcpy(l, r, wr->sg_list->length);
			else
				memcpy(r, l, wr->sg_list->length);
			if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM && d->rtail - d->rhead < 64) {
				struct ibv_wc *w = &d->rwc[d->rtail++ % 64];

				memset(w, 0, sizeof(*w));
				w->status = IBV_WC_SUCCESS;
				w->opcode =
				    d->answer_ctrl ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
				w->wc_flags = d->answer_ctrl ? 0 : IBV_WC_WITH_IMM;
				w->imm_data = wr->imm_data;
				w->wr_id = 3;
			}
		}
		d->link_free = (d->link_free > now ? d->link_free : now) + d->ns_per_msg;
		if (wr->send_flags & IBV_SEND_SIGNALED) {
			if (d->tail - d->head == SIM_CQES) {
				*bad = wr;
				return ENOMEM;
			}
			d->cqe[d->tail % SIM_CQES].wr_id = wr->wr_id;
			d->cqe[d->tail % SIM_CQES].at = d->link_free;
			d->tail++;
		}
	}
	return 0;
}

static int sim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct sim *d = sim_of(qp->context);

	(void)bad;
	for (; wr; wr = wr->next)
		d->reposts++;
	return 0;
}

static int sim_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct sim *d = sim_of(cq->context);

	if (cq == &d->rcq) {
		int k = 0;

		if (d->rlate) {
			d->rlate--;
			return 0;
		}

		for (; k < n && d->rhead != d->rtail; k++)
			wc[k] = d->rwc[d->rhead++ % 64];
		return k;
	}
	uint64_t now = gdr_now_ns();
	unsigned int ready = 0;
	int k = 0;

	while (d->head + ready != d->tail && d->cqe[(d->head + ready) % SIM_CQES].at <= now)
		ready++;
	if (!d->releasing && (ready >= d->burst || (ready && d->head + ready == d->tail)))
		d->releasing = 1;
	if (!d->releasing)
		return 0;
	for (; k < n && ready; k++, ready--, d->head++) {
		memset(&wc[k], 0, sizeof(wc[k]));
		wc[k].wr_id = d->cqe[d->head % SIM_CQES].wr_id;
		wc[k].status = IBV_WC_SUCCESS;
	}
	if (!ready)
		d->releasing = 0;
	return k;
}

static int sim_req_notify(struct ibv_cq *cq, int solicited_only)
{
	(void)cq;
	(void)solicited_only;
	return 0;
}

static struct sim *sim_new(uint64_t ns_per_msg, unsigned int burst)
{
	struct sim *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->ctx.ops.post_send = sim_post;
	d->ctx.ops.poll_cq = sim_poll;
	d->ctx.ops.post_recv = sim_post_recv;
	d->ctx.ops.req_notify_cq = sim_req_notify;
	d->cq.context = &d->ctx;
	d->rcq.context = &d->ctx;
	for (unsigned int i = 0; i < SIM_QPS; i++) {
		d->qp[i].context = &d->ctx;
		d->qp[i].qp_num = i;
	}
	d->ns_per_msg = ns_per_msg;
	d->burst = burst;
	d->drop_qp = UINT32_MAX;
	d->drop_msg = d->shift_msg = UINT64_MAX;
	return d;
}

#endif
