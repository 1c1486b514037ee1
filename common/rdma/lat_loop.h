/*
 * The latency engine: perftest-style ping-pong on QP 0 of the session's
 * connection. WRITE: the client writes a message into the server's buffer,
 * the server answers with one into the client's; half the round trip is one
 * sample (ib_write_lat's convention). READ: the client reads the server's
 * buffer; post to completion is one sample (ib_read_lat's). A side learns
 * that a WRITE arrived by polling the last byte of its host buffer, or,
 * when the CPU cannot poll the memory (GPU paths), by the immediate of an
 * RDMA WRITE WITH IMMEDIATE taken from the control receive slots (as
 * perftest's CUDA latency and the bounce pipeline do).
 */
#ifndef GDR_LAT_LOOP_H
#define GDR_LAT_LOOP_H

#include <infiniband/verbs.h>
#include <signal.h>
#include <stdint.h>

struct gdr_conn;

/* bounce: the GPU copies of each message, inside the timed interval. */
struct gdr_lat_hooks {
	int (*before_send)(void *ctx); /* GPU source -> staging (WRITE) */
	int (*after_recv)(void *ctx);  /* staging -> GPU destination */
	void *ctx;
};

struct gdr_lat_cfg {
	int write;     /* RDMA WRITE ping-pong; 0: RDMA READ round trips */
	int initiator; /* the client: sends first and times; the server answers */
	int imm;       /* WRITE: arrival told by the immediate, not by polling memory */
	uint32_t size;
	uint64_t iters, warmup;
	uint64_t laddr; /* our source (WRITE) or destination (READ), registered */
	uint32_t lkey;
	uint64_t raddr; /* the peer's destination (WRITE) or source (READ) */
	uint32_t rkey;
	/*
	 * WRITE without imm: the last byte of our source (stamped) and of our
	 * destination (polled). The caller zeroes *dst_last before the peer may
	 * write (no stamp is 0, so a stale byte never reads as an arrival).
	 */
	uint8_t *src_last;
	volatile uint8_t *dst_last;
	struct gdr_lat_hooks hooks; /* all NULL but bounce */
	double stall_timeout;	    /* no answer for this long = failure */
	volatile sig_atomic_t *stop;
	struct gdr_conn *conn;
};

/*
 * Run warmup + iters exchanges. The initiator stores iters samples in
 * microseconds in samples_us; the responder passes NULL. 0 or -errno with
 * why filled.
 */
int gdr_lat_run(struct gdr_conn *c, const struct gdr_lat_cfg *cfg, double *samples_us, char *why,
		size_t wlen);

/* The byte stamped into message i (1..255, never the previous message's). */
static inline uint8_t gdr_lat_stamp(uint8_t prev)
{
	return prev == 255 ? 1 : (uint8_t)(prev + 1);
}

#endif
