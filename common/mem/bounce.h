/*
 * The bounce path ("no GPUDirect"): GPU buffers on both sides, the NIC only
 * touches a pinned host staging ring of `slots` chunks on each side.
 *
 * Chunk c (one sequence over all messages of a run: ceil(size/chunk) chunks
 * per message, the last one partial) always uses staging slot c % slots on
 * both sides. The producer holds the GPU source, the consumer the GPU
 * destination.
 *  WRITE (producer = requester): D2H copy into the slot; when the copy is done
 *   and the consumer has a free slot (credit), RDMA_WRITE_WITH_IMM (imm = c)
 *   into the consumer's slot; the local slot is free when the WRITE completes.
 *   The consumer starts the H2D copy for each arrival (imm must be the next
 *   sequence number) and, when copies are done, returns credits as zero-length
 *   SEND_WITH_IMM, imm = chunks freed so far (cumulative, batched).
 *  READ (producer = target): D2H copy into the slot, then a zero-length
 *   SEND_WITH_IMM "ready" (imm = c); the consumer RDMA_READs the chunk into its
 *   own slot when that slot is free, returns a credit per completed READ
 *   (cumulative, batched: the producer's slot is free again) and starts the
 *   H2D copy; its own slot is free when that copy is done.
 * Imm values are counts mod 2^32; the receiver expands them against its own
 * 64-bit counter and refuses anything outside the window the protocol allows.
 *
 * Duration mode (-D): the run is open-ended until the timed side (the
 * client: the WRITE producer, the READ consumer) closes it at the first
 * message boundary it has not started, and tells the peer with an end
 * notice, a zero-length message of the opcode that direction never uses
 * otherwise, imm = one past the last chunk:
 *  WRITE: SEND_WITH_IMM from the producer (its chunks are WRITE_WITH_IMM).
 *   Nothing beyond the end was sent; the consumer credits up to it.
 *  READ: RDMA_WRITE_WITH_IMM from the consumer (its credits are SENDs). The
 *   producer may have announced chunks past the end already (at most a ring's
 *   worth): it posts no more, answers with its own end notice (also
 *   RDMA_WRITE_WITH_IMM, imm = readies posted in all) after its last ready,
 *   and the consumer, which reads nothing past the end, is over once that
 *   answer came (RC delivers it after every ready).
 *
 * The state machine below makes every decision and checks every input; it
 * calls nothing (no verbs, no CUDA) so that it is unit-tested on its own.
 * gdr_bounce_run() is the thin I/O layer that drives it on QP 0.
 */
#ifndef GDR_BOUNCE_H
#define GDR_BOUNCE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda.h"

struct gdr_conn;
struct gdr_loop_out;
struct gdr_mem;

/* ---- state machine ---------------------------------------------------------------------- */

struct gdr_bounce_sm {
	/* Geometry and limits (fixed by init). */
	int write;    /* 1: RDMA WRITE, 0: RDMA READ */
	int producer; /* this side holds the GPU source */
	unsigned int slots;
	unsigned int batch;	   /* consumer: credits returned every batch chunks */
	unsigned int sq_max;	   /* outstanding sends this side may have */
	uint64_t size, chunk, cpm; /* message size, chunk size, chunks per message */
	uint64_t first;		   /* sequence number of the first chunk */
	uint64_t barrier;	   /* first timed chunk: nothing from here on starts early */
	uint64_t total;		   /* one past the last chunk */

	/* Progress, all absolute chunk numbers (first .. total). */
	uint64_t copy_issued; /* D2H (producer) or H2D (consumer) started */
	uint64_t copy_done;
	uint64_t posted;	  /* WRITEs (P/WRITE), READs (C/READ), readies (P/READ) */
	uint64_t completed;	  /* their send completions */
	uint64_t peer;		  /* producer: credits received; consumer: chunks announced */
	uint64_t credited;	  /* consumer: credits sent */
	unsigned int credits_out; /* credit sends in flight */

	/* Duration mode (gdr_bounce_sm_open): see the end notice above. */
	int open;	       /* the end is not known yet (total is GDR_BOUNCE_OPEN) */
	int end_tx;	       /* this side's end notice: 0 none, 1 due, 2 posted */
	int end_rx;	       /* the peer's end notice (READ consumer: the answer) came */
	unsigned int ends_out; /* end notices in flight */
	uint64_t last;	       /* READ producer: one past the last ready it posts */
	int duration;	       /* opened: an end notice is part of the run */
	/*
	 * Bounce on this side only (issue 48): the peer's buffer is registered
	 * directly and the peer takes no part (gdr_bounce_sm_passive_peer).
	 */
	int passive_peer;
};

/* total while a duration-mode run is open: beyond any chunk number. */
#define GDR_BOUNCE_OPEN UINT64_MAX

/*
 * write/producer: role; size: message size (> 0); chunk: staging chunk
 * (> 0); slots >= 1; sq_max >= 1: send-queue room; first: sequence number of
 * chunk 0 (0 in a run; tests start near 2^32 to cross the wrap); warmup and
 * iters: messages (untimed, then timed). -EINVAL on nonsense or overflow.
 */
int gdr_bounce_sm_init(struct gdr_bounce_sm *sm, int write, int producer, uint64_t size,
		       uint64_t chunk, unsigned int slots, unsigned int sq_max, uint64_t first,
		       uint64_t warmup, uint64_t iters);

/*
 * Bounce on this side only, the peer's buffer registered directly and the
 * peer passive (call before gdr_bounce_sm_open): nothing comes from it and
 * nothing goes to it but the data. A WRITE producer's chunk is delivered
 * when its WRITE completes (no credits); a READ consumer reads any chunk at
 * once (no readies) and returns no credits; neither sends an end notice.
 */
void gdr_bounce_sm_passive_peer(struct gdr_bounce_sm *sm);

/*
 * Duration mode: make an initialized run (any iters) open-ended. The timed
 * side later calls gdr_bounce_sm_close(); the other learns the end from the
 * peer's notice (gdr_bounce_sm_peer_end). -EINVAL when already under way.
 */
int gdr_bounce_sm_open(struct gdr_bounce_sm *sm);
/*
 * Timed side, duration over: the run ends at the first message boundary
 * nothing has started past (at least one timed message); an end notice is
 * due. -EALREADY when not open.
 */
int gdr_bounce_sm_close(struct gdr_bounce_sm *sm);
/* An end notice to send now (imm in *value), then did_end; end_done on its completion. */
int gdr_bounce_sm_can_end(const struct gdr_bounce_sm *sm, uint64_t *value);
void gdr_bounce_sm_did_end(struct gdr_bounce_sm *sm);
int gdr_bounce_sm_end_done(struct gdr_bounce_sm *sm, char *why, size_t wlen);
/*
 * The peer's end notice carrying imm: 0, or -EPROTO (outside duration mode,
 * twice, before what was already announced/credited, not on a message
 * boundary, beyond what the peer can have started).
 */
int gdr_bounce_sm_peer_end(struct gdr_bounce_sm *sm, uint32_t imm, char *why, size_t wlen);
/* Receives this side may still take in the run without reaching past it (at most cap). */
unsigned int gdr_bounce_sm_receives(const struct gdr_bounce_sm *sm, unsigned int cap);

/* Chunk c: byte offset inside its message, length, staging slot. */
void gdr_bounce_sm_span(const struct gdr_bounce_sm *sm, uint64_t c, uint64_t *off, uint64_t *len,
			unsigned int *slot);

/*
 * What may start now; each returns 1 with the chunk (or credit value) when
 * it may, 0 when it must wait. The caller does it, then reports it with the
 * matching _did call.
 */
int gdr_bounce_sm_can_copy(const struct gdr_bounce_sm *sm, uint64_t *c);
void gdr_bounce_sm_did_copy(struct gdr_bounce_sm *sm);
/* Copies complete in issue order (one stream). */
void gdr_bounce_sm_copy_done(struct gdr_bounce_sm *sm);
/* The next WRITE (P/WRITE), READ (C/READ) or ready (P/READ) to post. */
int gdr_bounce_sm_can_post(const struct gdr_bounce_sm *sm, uint64_t *c);
void gdr_bounce_sm_did_post(struct gdr_bounce_sm *sm);
/* Consumer: a credit to send now (cumulative count in *value). */
int gdr_bounce_sm_can_credit(const struct gdr_bounce_sm *sm, uint64_t *value);
void gdr_bounce_sm_did_credit(struct gdr_bounce_sm *sm, uint64_t value);

/*
 * Completions and peer input. 0, or -EPROTO with why saying what the peer
 * (or the local provider) did wrong; after an error the run is over.
 * post_done: the send completion of the oldest posted WRITE/READ/ready.
 * credit_done: the send completion of a credit.
 */
int gdr_bounce_sm_post_done(struct gdr_bounce_sm *sm, char *why, size_t wlen);
int gdr_bounce_sm_credit_done(struct gdr_bounce_sm *sm, char *why, size_t wlen);
/* Consumer: an RDMA_WRITE_WITH_IMM (WRITE) or ready (READ) carrying imm. */
int gdr_bounce_sm_announce(struct gdr_bounce_sm *sm, uint32_t imm, char *why, size_t wlen);
/* Producer: a credit carrying imm. */
int gdr_bounce_sm_credit(struct gdr_bounce_sm *sm, uint32_t imm, char *why, size_t wlen);

/* Is the timed part (chunks from barrier on) allowed to start / finished end to end? */
int gdr_bounce_sm_timed_started(const struct gdr_bounce_sm *sm);
/* Chunks of the run this side's measurement counts as delivered. */
uint64_t gdr_bounce_sm_delivered(const struct gdr_bounce_sm *sm);
/* Nothing of this side is in flight and nothing more will come: the run is over. */
int gdr_bounce_sm_finished(const struct gdr_bounce_sm *sm);

/* ---- geometry (bounce_plan.c) ----------------------------------------------------------- */

/* --bounce-copy: who moves GPU <-> staging. */
enum gdr_bounce_copy {
	GDR_BOUNCE_COPY_CE, /* the copy engines: cuMemcpy{DtoH,HtoD}Async */
	GDR_BOUNCE_COPY_SM, /* a kernel through mapped pinned host memory, as NCCL */
};
/* "ce" or "sm"; parse: 0, or -EINVAL on anything else. */
const char *gdr_bounce_copy_name(int copy);
int gdr_bounce_copy_parse(const char *s, int *copy);
/*
 * Default --bounce-blocks: NCCL's channels for one remote peer through one
 * NIC (NCCL_NCHANNELS_PER_NET_PEER, 2), one block each. Bounded by MAX.
 */
#define GDR_BOUNCE_BLOCKS     2u
#define GDR_BOUNCE_BLOCKS_MAX 1024u
/* The SM mode's default chunk: NCCL's step, NCCL_BUFFSIZE / NCCL_STEPS = 4 MiB / 8. */
#define GDR_BOUNCE_CHUNK_SM (512ull << 10)
/* The default cap of a copy mode: GDR_BOUNCE_CHUNK_CAP (ce) or GDR_BOUNCE_CHUNK_SM. */
uint64_t gdr_bounce_default_cap(int copy);

/*
 * Default --bounce-chunk, the largest staging chunk: the smallest chunk of
 * the H200 table (docs/bounce.md) at which every copy (CE and SM, D2H and
 * H2D) runs at >= 90 % of its 64 MiB rate.
 */
#define GDR_BOUNCE_CHUNK_CAP (4ull << 20)
/* Split chunks are rounded up to this (within the cap). */
#define GDR_BOUNCE_CHUNK_ALIGN 4096ull
/* Staging ring (slots x cap) per side, at most. */
#define GDR_BOUNCE_RING_MAX (1ull << 30)

/*
 * The staging chunk a message of size bytes moves in, given the cap
 * (--bounce-chunk): the message itself up to the cap, else the fewest equal
 * chunks of at most cap (4 KiB rounded). Both sides compute it alike.
 */
uint64_t gdr_bounce_chunk(uint64_t size, uint64_t cap);
struct gdr_result;
struct gdr_mem_env;
/* A bounce row's own columns (bounce_chunk, _copy, _blocks) for a message of size bytes. */
void gdr_bounce_fill_row(struct gdr_result *r, const struct gdr_mem_env *env, uint64_t size);
/* 0, or -EINVAL with why when slots x cap is above GDR_BOUNCE_RING_MAX (or zero). */
int gdr_bounce_ring_check(uint64_t cap, unsigned int slots, char *why, size_t wlen);

/* ---- buffers and the engine ------------------------------------------------------------- */

/*
 * What the engine needs from a bounce buffer (mem_bounce.c fills it). Bounce
 * on the peer only: this side's buffer registered directly, ring NULL (no
 * copies: the NIC reads and writes dptr, with lkey), chunk and slots the
 * peer's ring's.
 */
struct gdr_bounce_res {
	struct gdr_cuda *cuda;
	uint64_t dptr; /* GPU buffer (ring NULL: the registered buffer's address) */
	size_t len;
	uint8_t *ring; /* pinned staging ring: slots * chunk; NULL: none on this side */
	size_t chunk;  /* the ring's slot size: the largest chunk (the cap) */
	unsigned int slots;
	uint32_t lkey, rkey;
	gdr_cuda_stream_t stream;
	gdr_cuda_event_t *events; /* one per slot */
	/* SM copy (--bounce-copy=sm): the kernel, NULL for CE; the ring's device address. */
	const struct gdr_cuda_kernel *kernel;
	uint64_t ring_dptr;
	unsigned int blocks;
};

/* 0, or -EINVAL when m is not an open bounce buffer. */
int gdr_mem_bounce_res(const struct gdr_mem *m, struct gdr_bounce_res *res);

struct gdr_bounce_cfg {
	int write;    /* 1: RDMA WRITE, 0: RDMA READ */
	int producer; /* this side holds the GPU source */
	int timed;    /* this side reports the measurement */
	uint64_t size;
	uint64_t chunk;		/* staging chunk of this size (gdr_bounce_chunk), <= res chunk */
	uint64_t iters, warmup; /* messages */
	double duration;	/* > 0: seconds of the timed part instead of iters (-D) */
	uint64_t gpu_off;	/* source (producer) or destination in the GPU buffer */
	uint64_t raddr;		/* peer's staging ring (peer_passive: its buffer's half) */
	uint32_t rkey;
	uint64_t rlen;
	/*
	 * Bounce on one side only. peer_direct: the peer has no staging ring, its
	 * buffer is registered directly (raddr is that buffer's half). With
	 * peer_passive too (the peer is the server) it takes no part either: a
	 * chunk goes to (comes from) raddr + its offset in the message
	 * (gdr_bounce_sm_passive_peer). A direct client takes part: it is sent
	 * nothing but credits, readies and end notices.
	 */
	int peer_direct, peer_passive;
	unsigned int tx_depth;
	double stall_timeout; /* no progress for this long = failure */
	volatile sig_atomic_t *stop;
	struct gdr_conn *conn; /* QP 0 carries everything */
};

/*
 * Run one repeat on this side. On return nothing of it is in flight; out
 * has no peak (0): credits come in bursts, so no window shorter than the
 * repeat times the pipeline; path_bounce.c reports the whole repeat, the
 * peak's one window here (stats.h). A
 * control message from the peer during the run (ERROR, a failed DONE) ends
 * it with the peer's reason in why.
 */
int gdr_bounce_run(const struct gdr_bounce_res *res, const struct gdr_bounce_cfg *cfg,
		   struct gdr_loop_out *out, char *why, size_t wlen);

/*
 * Why the plan cannot run the bounce path (bidirectional, chunk above the
 * port's max message size), or 0.
 */
int gdr_bounce_plan_check(int bidir, uint64_t chunk, uint32_t max_msg_sz, char *why, size_t wlen);

#endif
