/*
 * Everything exchanged with the peer, versioned and length-checked. Nothing
 * from the network is used before gdr_msg_decode() has bounded it.
 * Wire format: little-endian; header magic u32, version u16, type u16,
 * payload length u32; then the payload of that type.
 */
#ifndef GDR_PROTO_H
#define GDR_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "bidir.h"
#include "options.h"

#define GDR_PROTO_MAGIC 0x50524447u /* "GDRP" */
#define GDR_PROTO_VERSION                                                                          \
	4 /* 2: measurements carry their time line (-b); 3: the plan carries --gpu-alloc, the GPU  \
	     registration flags and -T, and BUF says whether all paths are held (paths in turns);  \
	     4: each side its own memory: the plan carries the combinations (client and server     \
	     path), the plan's ACK the server's own paths, BUF its side's GPU, NIC and distance;   \
	     rounds until decided: the plan carries the rounds rule and the run id, and ROUND */
#define GDR_CTRL_MAX	   2048
#define GDR_TEXT_MAX	   200
#define GDR_HELLO_LEN	   18
#define GDR_MAX_EXTRA_RECV 600

enum gdr_msg_type {
	GDR_MSG_PLAN = 1, /* client -> server: what to run */
	GDR_MSG_ACK,	  /* server -> client: plan adopted / ready to start */
	GDR_MSG_ERROR,	  /* either way: give up, with the reason */
	GDR_MSG_BUF,	  /* both ways: buffers for one path, or why it is skipped */
	GDR_MSG_START,	  /* client -> server: one timed repeat is about to run */
	GDR_MSG_DONE,	  /* client -> server: client's measurement */
	GDR_MSG_RESULT,	  /* server -> client: server's measurement and validation */
	GDR_MSG_BYE,	  /* client -> server: plan finished */
	GDR_MSG_ROUND,	  /* client -> server: after a look of the rounds rule, more rounds or not */
	GDR_MSG__END
};

/* rdma_cm private data of every connect request. */
struct gdr_hello {
	uint16_t version;
	uint16_t nqps;
	uint16_t qp_index;
	uint16_t tx_depth;
	uint16_t extra_recv; /* receive slots beyond the control ones (bounce) */
	uint32_t session;
};

struct gdr_plan {
	uint8_t verb;
	uint8_t bidir;
	uint8_t validate;
	uint8_t nmem;
	uint8_t mem[GDR_MEM__COUNT];
	uint16_t nsizes;
	uint64_t sizes[GDR_MAX_SIZES];
	uint64_t iters;
	uint32_t duration_ms;
	uint16_t qps, tx_depth, post_list, cq_mod;
	uint16_t repeat;
	uint32_t warmup;
	uint32_t bounce_chunk;
	uint16_t bounce_slots;
	uint32_t seed;
	uint8_t latency; /* 1: gdr_write_lat / gdr_read_lat ping-pong (lat_loop.h) */
	/* GPU registration both sides use (issue 43): the server adopts them. */
	uint8_t gpu_allocs; /* --gpu-alloc: bit per enum gdr_gpu_alloc, never 0 */
	uint8_t gpu_flags;  /* GDR_PLAN_* */
	int16_t tos;	    /* -T/--tos, --tclass; -1 = not given */
	/*
	 * Appended in version 4 (issue 48): each side its own memory. The run's
	 * combinations of the client's path and the server's (session_order.c
	 * makes one entry of the rotation of each), and who chose the server's
	 * side (GDR_SIDES_*). mem[] above stays the client's paths.
	 */
	uint8_t sides;
	uint8_t npairs;
	struct gdr_mem_pair pairs[GDR_MAX_PAIRS];
	/*
	 * Rounds (issue 51, decide.h): repeat is the most rounds a size takes,
	 * repeat_min the fewest; equal: fixed rounds. The rule's error rate and
	 * margin in parts per million, its time per size in us (0: none).
	 */
	uint16_t repeat_min;
	uint32_t alpha_ppm, margin_ppm;
	uint64_t size_us;
	uint64_t run_id; /* the rows' run_id, the same on both sides */
};

enum {
	GDR_SIDES_SAME = 0,   /* not named: every pair is one path on both sides (as before) */
	GDR_SIDES_CLIENT = 1, /* the client named it: --mem-remote, --mem LOCAL:REMOTE */
	GDR_SIDES_SERVER =
	    2, /* the server's own --mem chose it (set on both sides after the ACK) */
};

/* ROUND: the client's word after round `rounds` of size `size` (a look): go on or why not. */
enum gdr_round_stop {
	GDR_ROUND_MORE = 0, /* another round */
	GDR_ROUND_DECIDED,  /* every path's ratio is decided */
	GDR_ROUND_MAX,	    /* the most rounds the rule allows */
	GDR_ROUND_BUDGET,   /* --time-per-size is spent */
	GDR_ROUND_NOTHING,  /* fewer than two paths measured: nothing to decide */
	GDR_ROUND__END
};
struct gdr_msg_round {
	uint16_t size; /* index into plan.sizes */
	uint16_t rounds;
	uint8_t stop; /* enum gdr_round_stop */
};
/* The rows' stop column for a code: decided, max rounds, time budget, nothing to decide. */
const char *gdr_round_stop_name(unsigned int stop);

enum {
	GDR_PLAN_DMABUF_PCIE = 1u << 0, /* --dmabuf-mapping=pcie */
	GDR_PLAN_NO_RELAXED = 1u << 1,	/* --disable_pcie_relaxed */
	GDR_PLAN_DATA_DIRECT = 1u << 2, /* --use_data_direct */
	GDR_PLAN__FLAGS = (1u << 3) - 1,
};

struct gdr_remote_buf {
	uint64_t addr;
	uint32_t rkey;
	uint64_t len;
};

/* What a BUF tells of its side, for the peer's rows (the *_remote columns); "" unknown. */
struct gdr_side_info {
	char gpu[16];
	char gpu_bus_id[32];
	char gpu_name[128];
	char nic[64];
	char distance[16];
};

struct gdr_msg_buf {
	uint8_t kind; /* enum gdr_mem_kind */
	uint8_t ok;   /* 0: path skipped on this side, reason in text */
	uint8_t held; /* 1: this side holds every path's buffers at once (paths in turns) */
	uint16_t nqps;
	struct gdr_remote_buf qp[GDR_MAX_QPS];
	char text[GDR_TEXT_MAX];
	struct gdr_side_info side; /* version 4 */
};

/* The run's paths: every combination, the GPU ones once per --gpu-alloc. */
#define GDR_MAX_PATHS (GDR_MAX_PAIRS * GDR_GPU_ALLOC__COUNT)

struct gdr_msg_start {
	uint8_t path; /* index into the run's paths (session_order.c) */
	uint8_t warmup_only;
	uint16_t repeat;
	uint64_t size;
};

/* A measurement: DONE from the client, RESULT from the server. */
struct gdr_msg_meas {
	int32_t status; /* 0 or -errno */
	uint64_t iters; /* messages completed per QP */
	uint64_t bytes; /* bytes moved by this side */
	uint64_t elapsed_ns;
	double peak_bps; /* best segment, bytes/s */
	double cpu_pct;
	int8_t valid; /* 0 not checked, 1 ok, -1 mismatch */
	uint16_t bad_qp;
	uint64_t bad_offset;
	/* Latency tools: the client's min, p50, p90, p99, p99.9, max, avg in us (0 otherwise). */
	double lat_us[7];
	struct gdr_timeline tl; /* -b: completed bytes over the run, on this side's reference */
	char text[GDR_TEXT_MAX];
};

struct gdr_msg {
	uint16_t type;
	union {
		struct gdr_plan plan;
		struct gdr_msg_buf buf;
		struct gdr_msg_start start;
		struct gdr_msg_meas meas;
		struct gdr_msg_round round;
		struct {
			int32_t code;
			char text[GDR_TEXT_MAX];
			/*
			 * ACK of a PLAN (version 4): the server's own paths (its --mem),
			 * which make the server's side of the plan; 0 = it adopts the
			 * client's (gdr_plan_server_side). Not in an ERROR.
			 */
			uint8_t nmem;
			uint8_t mem[GDR_MEM__COUNT];
		} error; /* ERROR, ACK (code 0) */
	} u;
};

const char *gdr_msg_type_name(uint16_t type);

/* Returns encoded length or -ENOSPC/-EINVAL. */
int gdr_msg_encode(const struct gdr_msg *m, uint8_t *buf, size_t len);
/* 0, or -EPROTO/-EBADMSG with why naming the field. */
int gdr_msg_decode(const uint8_t *buf, size_t len, struct gdr_msg *m, char *why, size_t wlen);

int gdr_hello_encode(const struct gdr_hello *h, uint8_t *buf, size_t len);
int gdr_hello_decode(const uint8_t *buf, size_t len, struct gdr_hello *h, char *why, size_t wlen);

/* Plan <-> options. */
void gdr_plan_from_opts(const struct gdr_opts *o, uint32_t seed, struct gdr_plan *p);
/* -D seconds as the plan carries them: milliseconds, rounded. */
static inline uint32_t gdr_plan_duration_ms(double seconds)
{
	return (uint32_t)(seconds * 1000.0 + 0.5);
}
/*
 * A server runs the client's plan (its own copy; its options stay as
 * given); an option the server was given
 * explicitly must agree. 0, or -EINVAL with why naming the option and both values.
 */
int gdr_plan_check(const struct gdr_opts *server, const struct gdr_plan *p, char *why, size_t wlen);
/*
 * The server's side (issue 48) from its own paths own[0..nown) (its --mem;
 * nown 0: it adopts the plan as it is). A plan whose client did not name
 * the server's side takes every client path with every own path (sides
 * becomes GDR_SIDES_SERVER); one that named it must name the same paths, or
 * -EINVAL with why naming both. The client applies the ACK's paths alike.
 */
int gdr_plan_server_side(struct gdr_plan *p, const uint8_t *own, unsigned int nown, char *why,
			 size_t wlen);

#endif
