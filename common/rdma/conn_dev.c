/* The device side of a connection: PD, CQs, control buffer, QPs. */
#include "config.h"

#include "conn_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* PD, CQs and control buffer on the device the first id landed on. */
int gdr_conn_setup_device(struct gdr_conn *c, struct rdma_cm_id *id, const char *want_dev,
			  int ib_port, char *why, size_t wlen)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	size_t len = (size_t)(1 + gdr_conn_slots(c)) * GDR_CTRL_MAX;
	int e;

	c->verbs = id->verbs;
	c->port_num = id->port_num;
	gdr_strlcpy(c->nic, ibv_get_device_name(id->verbs->device), sizeof(c->nic));
	if (want_dev && strcmp(want_dev, c->nic)) {
		snprintf(
		    why, wlen,
		    "the connection goes over %s, not -d %s: use an address that belongs to %s",
		    c->nic, want_dev, want_dev);
		return -ENODEV;
	}
	if (ib_port && ib_port != c->port_num)
		gdr_warn("%s: rdma_cm uses port %u, not -i %d", c->nic, c->port_num, ib_port);
	if (ibv_query_device(c->verbs, &da)) {
		e = errno;
		snprintf(why, wlen, "%s: ibv_query_device: %s", c->nic, strerror(e));
		return -e;
	}
	if ((int)c->tx_depth + 4 > da.max_qp_wr) {
		snprintf(why, wlen, "%s: tx depth %u exceeds the device's max_qp_wr %d", c->nic,
			 c->tx_depth, da.max_qp_wr);
		return -EINVAL;
	}
	if (ibv_query_port(c->verbs, c->port_num, &pa)) {
		e = errno;
		snprintf(why, wlen, "%s: ibv_query_port(%u): %s", c->nic, c->port_num, strerror(e));
		return -e;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		snprintf(why, wlen, "%s port %u is %s, not ACTIVE", c->nic, c->port_num,
			 ibv_port_state_str(pa.state));
		return -ENETDOWN;
	}
	c->max_msg_sz = pa.max_msg_sz;
	c->pd = ibv_alloc_pd(c->verbs);
	if (!c->pd) {
		e = errno ? errno : ENOMEM;
		gdr_explain_reg_errno(e, len, why, wlen);
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%s: ibv_alloc_pd: %s", c->nic, why);
		gdr_strlcpy(why, tmp, wlen);
		return -e;
	}
	c->ctrl_ch = ibv_create_comp_channel(c->verbs);
	if (!c->ctrl_ch || gdr_conn_set_nonblock(c->ctrl_ch->fd)) {
		e = errno ? errno : ENOMEM;
		snprintf(why, wlen, "%s: ibv_create_comp_channel: %s", c->nic, strerror(e));
		return -e;
	}
	c->data_cq =
	    ibv_create_cq(c->verbs, (int)(c->nqps * (c->tx_depth + 4) + 16), NULL, NULL, 0);
	c->ctrl_cq =
	    c->data_cq ? ibv_create_cq(c->verbs, (int)(gdr_conn_slots(c) + 16), NULL, c->ctrl_ch, 0)
		       : NULL;
	if (!c->data_cq || !c->ctrl_cq) {
		e = errno ? errno : ENOMEM;
		char expl[200];
		gdr_explain_reg_errno(e, 0, expl, sizeof(expl));
		snprintf(why, wlen, "%s: ibv_create_cq: %s", c->nic, expl);
		return -e;
	}
	if (posix_memalign((void **)&c->ctrl_buf, 4096, len)) {
		snprintf(why, wlen, "out of memory for control buffers");
		return -ENOMEM;
	}
	memset(c->ctrl_buf, 0, len);
	c->ctrl_mr = ibv_reg_mr(c->pd, c->ctrl_buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->ctrl_mr) {
		e = errno ? errno : ENOMEM;
		char expl[200];
		gdr_explain_reg_errno(e, len, expl, sizeof(expl));
		snprintf(why, wlen, "%s: ibv_reg_mr(control, %zu B): %s", c->nic, len, expl);
		return -e;
	}
	return 0;
}

int gdr_conn_create_qp(struct gdr_conn *c, struct rdma_cm_id *id, unsigned int index, char *why,
		       size_t wlen)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = c->data_cq,
		.recv_cq = c->ctrl_cq,
		.cap = {
			.max_send_wr = c->tx_depth + 4,
			.max_recv_wr = index == 0 ? gdr_conn_slots(c) : 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = c->want_inline,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	int rc = rdma_create_qp(id, c->pd, &attr);

	/* Inline is an optimisation (latency tools): a device without it gets a plain QP. */
	if (rc && attr.cap.max_inline_data) {
		attr.cap.max_inline_data = 0;
		rc = rdma_create_qp(id, c->pd, &attr);
	}
	if (rc) {
		int e = errno;
		snprintf(why, wlen, "%s: rdma_create_qp (QP %u, depth %u): %s", c->nic, index,
			 c->tx_depth, strerror(e));
		return -e;
	}
	if (index == 0)
		c->max_inline = attr.cap.max_inline_data;
	c->id[index] = id;
	if (index == 0) {
		/* Receives are posted before the connection exists so no SEND can find none. */
		for (unsigned int s = 0; s < gdr_conn_slots(c); s++) {
			int r = gdr_conn_repost(c, s);
			if (r) {
				snprintf(why, wlen, "%s: ibv_post_recv(control): %s", c->nic,
					 strerror(-r));
				return r;
			}
		}
	}
	return 0;
}

void gdr_conn_fill_param(struct gdr_conn *c, struct rdma_conn_param *p, const void *pdata,
			 uint8_t plen)
{
	struct ibv_device_attr da;

	memset(p, 0, sizeof(*p));
	p->responder_resources = 16;
	p->initiator_depth = 16;
	if (!ibv_query_device(c->verbs, &da)) {
		p->responder_resources =
		    (uint8_t)(da.max_qp_rd_atom < 255 ? da.max_qp_rd_atom : 255);
		p->initiator_depth =
		    (uint8_t)(da.max_qp_init_rd_atom < 255 ? da.max_qp_init_rd_atom : 255);
	}
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->private_data = pdata;
	p->private_data_len = plen;
}

/*
 * A refused attempt's QP flushes its posted receives into the shared CQs;
 * once the QP is destroyed nothing more can arrive, so drop them here or the
 * next control receive would read a flush as a dead peer.
 */
void gdr_conn_drain(struct gdr_conn *c)
{
	struct ibv_wc wc[16];

	if (c->ctrl_cq)
		while (ibv_poll_cq(c->ctrl_cq, 16, wc) > 0)
			;
	if (c->data_cq)
		while (ibv_poll_cq(c->data_cq, 16, wc) > 0)
			;
}

/* PD, CQs, control buffer and completion channel: what setup_device made. */
void gdr_conn_release_device(struct gdr_conn *c)
{
	if (c->ctrl_mr)
		ibv_dereg_mr(c->ctrl_mr);
	c->ctrl_mr = NULL;
	free(c->ctrl_buf);
	c->ctrl_buf = NULL;
	if (c->ctrl_cq) {
		if (c->ctrl_events)
			ibv_ack_cq_events(c->ctrl_cq, c->ctrl_events);
		ibv_destroy_cq(c->ctrl_cq);
	}
	c->ctrl_cq = NULL;
	c->ctrl_events = 0;
	if (c->data_cq)
		ibv_destroy_cq(c->data_cq);
	c->data_cq = NULL;
	if (c->ctrl_ch)
		ibv_destroy_comp_channel(c->ctrl_ch);
	c->ctrl_ch = NULL;
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	c->pd = NULL;
	c->verbs = NULL;
}
