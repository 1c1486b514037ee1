#include "config.h"

#include "conn_int.h"

#include <errno.h>
#include <stdio.h>

#include "util.h"

/*
 * Liveness probe: a zero-byte RDMA WRITE needs no rkey or address on the
 * responder (IBTA C9-88), consumes no receive and wakes no process there; it
 * is acknowledged by the peer's RDMA stack while the peer's QP exists (even
 * when the process is stopped), and fails with a retry error, or stays
 * unacknowledged, once the peer or the path is gone. Its completion lands in
 * the data CQ; the loops and gdr_ctrl_send skip it (GDR_WRID_PROBE).
 */
int gdr_probe_post(struct gdr_conn *c)
{
	struct ibv_send_wr wr = {
		.wr_id = GDR_WRID_PROBE,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (ibv_post_send(c->id[0]->qp, &wr, &bad))
		return -errno;
	c->probing = 1;
	c->probe_sent = gdr_now_s();
	return 0;
}

/*
 * Reap data-CQ completions without waiting: late ones of a finished loop
 * are dropped (already accounted for), a failed one means the peer is gone.
 */
int gdr_probe_reap(struct gdr_conn *c, char *why, size_t wlen)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(c->data_cq, 1, &wc)) == 1) {
		if (wc.wr_id == GDR_WRID_PROBE)
			c->probing = 0;
		if (wc.status != IBV_WC_SUCCESS) {
			snprintf(why, wlen, "peer %s stopped responding (%s on a liveness probe)",
				 c->peer, ibv_wc_status_str(wc.status));
			c->peer_gone = 1;
			return -ECONNRESET;
		}
	}
	if (n < 0) {
		snprintf(why, wlen, "%s: ibv_poll_cq(data) failed", c->nic);
		return -EIO;
	}
	/*
	 * The transport's own verdict (retry exceeded) may never come: rxe, for
	 * one, retries a lost request forever. A live peer's RDMA stack answers
	 * within a round trip whatever its process is doing.
	 */
	if (c->probing && gdr_now_s() - c->probe_sent > GDR_PROBE_DEAD_S) {
		snprintf(why, wlen,
			 "peer %s stopped responding (a liveness probe got no acknowledgement "
			 "in %g s: host down or network cut?)",
			 c->peer, GDR_PROBE_DEAD_S);
		c->peer_gone = 1;
		return -ECONNRESET;
	}
	return 0;
}
