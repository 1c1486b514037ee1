/*
 * A hostile gdrperf client for tests/integration/t_50_hostile.sh: connects to
 * a running `gdr_write_bw --persistent` server over rdma_cm and misbehaves in
 * one chosen way, then goes away. It judges nothing: the test checks that the
 * server logged one line, freed what the peer held and served the next client.
 *
 *   evil_peer [-p PORT] [--timeout SEC] MODE SERVER
 *
 * Exit 0 when the misbehaviour was carried out (whatever the server did),
 * 1 when it could not get that far (server unreachable), 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "options.h"
#include "path.h"
#include "proto.h"
#include "util.h"

struct evil {
	struct gdr_opts o;
	struct gdr_conn c;
	volatile sig_atomic_t stop;
	char why[512];
};

/* ---- connect with hand-made private data ------------------------------------------------ */

static int raw_connect(const struct gdr_opts *o, const void *pdata, uint8_t plen)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct rdma_conn_param p = {
		.private_data = pdata,
		.private_data_len = plen,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_id *id;
	char port[8];
	int r;

	snprintf(port, sizeof(port), "%u", o->port);
	r = rdma_getaddrinfo(o->server, port, &hints, &res);
	if (r) {
		gdr_err("%s: rdma_getaddrinfo: %s", o->server, strerror(errno));
		return 1;
	}
	r = rdma_create_ep(&id, res, NULL, &attr);
	rdma_freeaddrinfo(res);
	if (r) {
		gdr_err("%s: rdma_create_ep: %s", o->server, strerror(errno));
		return 1;
	}
	printf("evil_peer: connecting with %u bytes of private data\n", plen);
	fflush(stdout);
	/* A refusal is the expected outcome; either way the connection goes. */
	if (rdma_connect(id, &p)) {
		printf("evil_peer: connect refused (%s), as it should be\n", strerror(errno));
	} else {
		printf("evil_peer: connect accepted\n");
		rdma_disconnect(id);
	}
	fflush(stdout);
	rdma_destroy_ep(id);
	return 0;
}

static int bad_hello(const struct gdr_opts *o, const char *mode)
{
	uint8_t buf[56];
	struct gdr_hello h = { .version = GDR_PROTO_VERSION, .nqps = 1, .tx_depth = 128 };

	if (!strcmp(mode, "no-hello"))
		return raw_connect(o, NULL, 0);
	if (!strcmp(mode, "garbage-hello")) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)(i * 37 + 11);
		return raw_connect(o, buf, sizeof(buf));
	}
	if (!strcmp(mode, "short-hello")) {
		gdr_hello_encode(&h, buf, sizeof(buf));
		return raw_connect(o, buf, 7);
	}
	/* old-version / new-version / hello-qps */
	if (!strcmp(mode, "old-version"))
		h.version = GDR_PROTO_VERSION - 1;
	else if (!strcmp(mode, "new-version"))
		h.version = GDR_PROTO_VERSION + 1;
	else
		h.nqps = 1000;
	memset(buf, 0, sizeof(buf));
	gdr_hello_encode(&h, buf, sizeof(buf));
	return raw_connect(o, buf, sizeof(buf));
}

/* ---- a real client connection, then raw control messages --------------------------------- */

/* SEND len raw bytes on QP 0, as gdr_ctrl_send does with an encoded message. */
static int send_raw(struct gdr_conn *c, const uint8_t *bytes, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->ctrl_buf,
			       .length = (uint32_t)len,
			       .lkey = c->ctrl_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = GDR_WRID_CTRL,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	double deadline = gdr_now_s() + 5;
	int n;

	if (len > GDR_CTRL_MAX)
		return -EMSGSIZE;
	memmove(c->ctrl_buf, bytes, len);
	if (ibv_post_send(c->id[0]->qp, &wr, &bad)) {
		gdr_err("ibv_post_send: %s", strerror(errno));
		return -errno;
	}
	while ((n = ibv_poll_cq(c->data_cq, 1, &wc)) == 0 && gdr_now_s() < deadline)
		usleep(100);
	if (n != 1 || wc.status != IBV_WC_SUCCESS) {
		printf("evil_peer: send did not complete (%s)\n",
		       n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
		return -ECONNRESET;
	}
	return 0;
}

static int send_msg(struct evil *e, const struct gdr_msg *m, size_t cut)
{
	uint8_t buf[GDR_CTRL_MAX];
	int n = gdr_msg_encode(m, buf, sizeof(buf));

	if (n < 0)
		return n;
	return send_raw(&e->c, buf, cut && cut < (size_t)n ? cut : (size_t)n);
}

/* Wait for the server's answer and say what it was. */
static int expect(struct evil *e, uint16_t type)
{
	struct gdr_msg m;
	int r = gdr_ctrl_recv(&e->c, &m, e->o.timeout, e->why, sizeof(e->why));

	if (r) {
		printf("evil_peer: no answer: %s\n", e->why);
		return r;
	}
	printf("evil_peer: server sent %s%s%s\n", gdr_msg_type_name(m.type),
	       m.type == GDR_MSG_ERROR ? ": " : "", m.type == GDR_MSG_ERROR ? m.u.error.text : "");
	return m.type == type ? 0 : -EPROTO;
}

static void plan_msg(const struct evil *e, struct gdr_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = GDR_MSG_PLAN;
	gdr_plan_from_opts(&e->o, 42, &m->u.plan);
}

/* PLAN, ACK: the server has adopted a plan. */
static int do_plan(struct evil *e)
{
	struct gdr_msg m;
	int r;

	plan_msg(e, &m);
	r = send_msg(e, &m, 0);
	return r ? r : expect(e, GDR_MSG_ACK);
}

/*
 * Our BUF for the host path. len_claim 0: honest (a registered buffer of two
 * times the size); else claim len_claim bytes behind a 4 KiB registration.
 */
static int do_buf(struct evil *e, struct ibv_mr **mr, void **mem, uint64_t len_claim)
{
	size_t len = len_claim ? 4096 : 2 * e->o.sizes[0];
	struct gdr_msg m = { .type = GDR_MSG_BUF };
	int r;

	*mem = calloc(1, len);
	if (!*mem)
		return -ENOMEM;
	*mr = ibv_reg_mr(e->c.pd, *mem, len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!*mr) {
		gdr_err("ibv_reg_mr: %s", strerror(errno));
		return -errno;
	}
	m.u.buf.kind = GDR_MEM_HOST;
	m.u.buf.ok = 1;
	m.u.buf.nqps = (uint16_t)e->o.qps;
	for (unsigned int q = 0; q < e->o.qps; q++)
		m.u.buf.qp[q] = (struct gdr_remote_buf){ (uintptr_t)*mem, (*mr)->rkey,
							 len_claim ? len_claim : len };
	r = send_msg(e, &m, 0);
	return r ? r : expect(e, GDR_MSG_BUF);
}

static int do_start(struct evil *e)
{
	struct gdr_msg m = { .type = GDR_MSG_START };
	int r;

	m.u.start.size = e->o.sizes[0];
	r = send_msg(e, &m, 0);
	return r ? r : expect(e, GDR_MSG_ACK);
}

static int session_mode(struct evil *e, const char *mode)
{
	uint8_t raw[GDR_CTRL_MAX];
	struct gdr_msg m;
	struct ibv_mr *mr = NULL;
	void *mem = NULL;
	struct gdr_endpoint ep;
	struct gdr_run run;
	int n, r;

	gdr_run_from_opts(&run, &e->o);
	gdr_endpoint_init(&ep, &e->o, &run);
	r = gdr_conn_connect(&e->c, &e->o, &ep, gdr_paths_recv_slots(&e->o), &e->stop, e->why,
			     sizeof(e->why));
	if (r) {
		gdr_err("%s", e->why);
		return 1;
	}
	printf("evil_peer: connected to %s over %s\n", e->c.peer, e->c.nic);
	if (!strcmp(mode, "quit-connect")) {
		/* nothing: disconnect at once */
	} else if (!strcmp(mode, "silent")) {
		/* Connected, never speaks: the server must give up after its --timeout. */
		sleep((unsigned int)e->o.timeout + 3);
	} else if (!strcmp(mode, "garbage-plan")) {
		for (size_t i = 0; i < 300; i++)
			raw[i] = (uint8_t)(i * 131 + 7);
		send_raw(&e->c, raw, 300);
		expect(e, GDR_MSG_ACK);
	} else if (!strcmp(mode, "bad-plan-fields")) {
		/* A well-formed header and length, nonsense values inside. */
		plan_msg(e, &m);
		n = gdr_msg_encode(&m, raw, sizeof(raw));
		if (n > 16)
			memset(raw + 12, 0xff, (size_t)n - 12);
		send_raw(&e->c, raw, (size_t)n);
		expect(e, GDR_MSG_ACK);
	} else if (!strcmp(mode, "truncated-header")) {
		plan_msg(e, &m);
		if (gdr_msg_encode(&m, raw, sizeof(raw)) > 7)
			send_raw(&e->c, raw, 7);
		expect(e, GDR_MSG_ACK);
	} else if (!strcmp(mode, "truncated-plan")) {
		plan_msg(e, &m);
		n = gdr_msg_encode(&m, raw, sizeof(raw));
		send_msg(e, &m, (size_t)n / 2);
		expect(e, GDR_MSG_ACK);
	} else if (!strcmp(mode, "oversized-plan")) {
		/* nsizes (after verb, bidir, validate, nmem and one path) claims 65535 sizes. */
		plan_msg(e, &m);
		n = gdr_msg_encode(&m, raw, sizeof(raw));
		raw[12 + 4 + m.u.plan.nmem] = 0xff;
		raw[12 + 4 + m.u.plan.nmem + 1] = 0xff;
		send_raw(&e->c, raw, (size_t)n);
		expect(e, GDR_MSG_ACK);
	} else if (!strcmp(mode, "wrong-type")) {
		/* A START before any plan. */
		m = (struct gdr_msg){ .type = GDR_MSG_START };
		m.u.start.size = 4096;
		send_msg(e, &m, 0);
		expect(e, GDR_MSG_ACK);
	} else if (!strcmp(mode, "quit-plan")) {
		plan_msg(e, &m);
		send_msg(e, &m, 0);
	} else if (!do_plan(e)) {
		if (!strcmp(mode, "quit-ack")) {
			/* disconnect with the plan adopted, before any BUF */
		} else if (!strcmp(mode, "oversized-buf")) {
			m = (struct gdr_msg){ .type = GDR_MSG_BUF };
			m.u.buf.ok = 1;
			m.u.buf.nqps = 1;
			n = gdr_msg_encode(&m, raw, sizeof(raw));
			raw[12 + 2] = 0xff; /* nqps = 65535 */
			raw[12 + 3] = 0xff;
			send_raw(&e->c, raw, (size_t)n);
			expect(e, GDR_MSG_BUF);
		} else if (!strcmp(mode, "short-buf")) {
			/* Registered and said so honestly, but less than the plan needs. */
			do_buf(e, &mr, &mem, 1024);
		} else if (!strcmp(mode, "quit-buf")) {
			m = (struct gdr_msg){ .type = GDR_MSG_BUF };
			m.u.buf.kind = GDR_MEM_HOST;
			m.u.buf.ok = 1;
			m.u.buf.nqps = (uint16_t)e->o.qps;
			for (unsigned int q = 0; q < e->o.qps; q++)
				m.u.buf.qp[q] = (struct gdr_remote_buf){ 4096, 1, 1u << 30 };
			send_msg(e, &m, 0);
		} else if (!strcmp(mode, "big-buf")) {
			/*
			 * Claims 1 GiB behind a 4 KiB registration; with -b the server
			 * writes into it, and its QP fails with a remote access error.
			 */
			/* expect() waits for the server's answer, or its hang-up, itself. */
			if (!do_buf(e, &mr, &mem, 1u << 30) && !do_start(e))
				expect(e, GDR_MSG_RESULT);
		} else if (!strcmp(mode, "quit-start")) {
			/* Mid-START: the server has ACKed the repeat and waits for DONE. */
			if (!do_buf(e, &mr, &mem, 0))
				do_start(e);
		} else if (!strcmp(mode, "bad-start")) {
			if (!do_buf(e, &mr, &mem, 0)) {
				m = (struct gdr_msg){ .type = GDR_MSG_START };
				m.u.start.size = 3 * e->o.sizes[0];
				m.u.start.repeat = 77;
				send_msg(e, &m, 0);
				expect(e, GDR_MSG_ACK);
			}
		}
	}
	/* The MR first: the connection's PD cannot be freed while it holds one. */
	if (mr)
		ibv_dereg_mr(mr);
	free(mem);
	gdr_conn_close(&e->c);
	return r;
}

static const char *const hello_modes[] = { "no-hello",	  "garbage-hello", "short-hello",
					   "old-version", "new-version",   "hello-qps" };
static const char *const session_modes[] = {
	"garbage-plan",	  "bad-plan-fields", "truncated-header", "truncated-plan",
	"oversized-plan", "wrong-type",	     "oversized-buf",	 "short-buf",
	"big-buf",	  "bad-start",	     "quit-connect",	 "quit-plan",
	"quit-ack",	  "quit-buf",	     "quit-start",	 "silent",
};

static int is_in(const char *mode, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(mode, list[i]))
			return 1;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: evil_peer [-p PORT] [--timeout SEC] MODE SERVER\n"
		"Connects to a gdr_write_bw server and misbehaves in one way (MODE):\n"
		"  connect:  no-hello garbage-hello short-hello old-version new-version hello-qps\n"
		"  messages: garbage-plan bad-plan-fields truncated-header truncated-plan\n"
		"            oversized-plan wrong-type oversized-buf short-buf big-buf bad-start\n"
		"  leaving:  quit-connect quit-plan quit-ack quit-buf quit-start silent\n");
}

int main(int argc, char **argv)
{
	static struct evil e;
	char *args[16];
	const char *port = "18515", *timeout = "10", *mode;
	int c, na = 0;
	static const struct option opts[] = { { .name = "port", .has_arg = 1, .val = 'p' },
					      { .name = "timeout", .has_arg = 1, .val = 't' },
					      { .name = "help", .val = 'h' },
					      {} };

	gdr_set_progname("evil_peer");
	while ((c = getopt_long(argc, argv, "p:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			port = optarg;
			break;
		case 't':
			timeout = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	/* gdr_opts_parse() below restarts getopt: take ours first. */
	mode = argv[optind];
	/* The plan of a small honest client: host memory, 64 KiB, one QP, both directions. */
	args[na++] = "evil_peer";
	args[na++] = "-p";
	args[na++] = (char *)port;
	args[na++] = "--timeout";
	args[na++] = (char *)timeout;
	args[na++] = "-s";
	args[na++] = "64K";
	args[na++] = "-n";
	args[na++] = "100";
	args[na++] = "-b";
	args[na++] = "--no-bind";
	args[na++] = argv[optind + 1];
	args[na] = NULL;
	if (gdr_opts_parse(&e.o, GDR_VERB_WRITE, na, args))
		return 2;
	if (is_in(mode, hello_modes, sizeof(hello_modes) / sizeof(hello_modes[0])))
		return bad_hello(&e.o, mode);
	if (is_in(mode, session_modes, sizeof(session_modes) / sizeof(session_modes[0])))
		return session_mode(&e, mode);
	gdr_err("unknown mode '%s'", mode);
	usage(stderr);
	return 2;
}
