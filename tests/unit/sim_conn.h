/*
 * Test-only: a struct gdr_conn with one QP on the simulated device
 * (sim_verbs.h), for the tests of what runs over a connection (the latency
 * engine, the control channel). Include after sim_verbs.h and conn.h.
 */
#ifndef GDR_SIM_CONN_H
#define GDR_SIM_CONN_H

#include <string.h>

/* c's QP 0 is id's on d; sends complete on d's CQ, receives on its control CQ. */
static void sim_conn_wire(struct gdr_conn *c, struct sim *d, struct rdma_cm_id *id,
			  struct ibv_mr *mr, uint8_t *ctrl_buf)
{
	id->qp = &d->qp[0];
	c->id[0] = id;
	c->nqps = 1;
	c->data_cq = &d->cq;
	c->ctrl_cq = &d->rcq;
	c->ctrl_mr = mr;
	c->ctrl_buf = ctrl_buf;
	strcpy(c->nic, "sim0");
}

#endif
