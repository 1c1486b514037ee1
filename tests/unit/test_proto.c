#include "cmocka_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "report.h"
#include "util.h"

static void sample_plan(struct gdr_plan *p)
{
	struct gdr_opts o;
	char *argv[] = { "x",	  "--sizes",	 "4K:64K",     "-n", "77",  "-q", "3",
			 "--mem", "host,bounce", "--validate", "-b", "srv", NULL };

	assert_int_equal(gdr_opts_parse(&o, GDR_VERB_READ, 12, argv), 0);
	gdr_plan_from_opts(&o, 0xdeadbeef, p);
}

static void roundtrip(const struct gdr_msg *in, struct gdr_msg *out)
{
	uint8_t buf[GDR_CTRL_MAX];
	char why[256];
	int n = gdr_msg_encode(in, buf, sizeof(buf));

	assert_true(n >= 12);
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, out, why, sizeof(why)), 0);
	assert_int_equal(out->type, in->type);
}

static void test_plan_roundtrip(void **state)
{
	struct gdr_msg in = { .type = GDR_MSG_PLAN }, out;

	(void)state;
	sample_plan(&in.u.plan);
	roundtrip(&in, &out);
	assert_int_equal(out.u.plan.verb, GDR_VERB_READ);
	assert_int_equal(out.u.plan.nsizes, 5);
	assert_int_equal(out.u.plan.sizes[4], 65536);
	assert_int_equal(out.u.plan.iters, 77);
	assert_int_equal(out.u.plan.qps, 3);
	assert_int_equal(out.u.plan.nmem, 2);
	assert_int_equal(out.u.plan.mem[1], GDR_MEM_BOUNCE);
	assert_int_equal(out.u.plan.validate, 1);
	assert_int_equal(out.u.plan.bidir, 1);
	assert_int_equal(out.u.plan.seed, 0xdeadbeef);
}

static void test_other_roundtrips(void **state)
{
	struct gdr_msg in, out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = GDR_MSG_BUF;
	in.u.buf.kind = GDR_MEM_DMABUF;
	in.u.buf.ok = 1;
	in.u.buf.nqps = 2;
	in.u.buf.qp[1] =
	    (struct gdr_remote_buf){ .addr = 0x7f0000001000ull, .rkey = 0x1234, .len = 8192 };
	in.u.buf.held = 1;
	roundtrip(&in, &out);
	assert_int_equal(out.u.buf.held, 1);
	assert_int_equal(out.u.buf.qp[1].addr, 0x7f0000001000ull);
	assert_int_equal(out.u.buf.qp[1].rkey, 0x1234);

	memset(&in, 0, sizeof(in));
	in.type = GDR_MSG_RESULT;
	in.u.meas.iters = 5000;
	in.u.meas.bytes = 5000ull * 65536;
	in.u.meas.elapsed_ns = 123456789;
	in.u.meas.peak_bps = 1.5e9;
	in.u.meas.valid = -1;
	in.u.meas.bad_offset = 4095;
	snprintf(in.u.meas.text, sizeof(in.u.meas.text), "bad byte");
	roundtrip(&in, &out);
	assert_int_equal(out.u.meas.bytes, 5000ull * 65536);
	assert_true(out.u.meas.peak_bps == 1.5e9);
	assert_int_equal(out.u.meas.valid, -1);
	assert_string_equal(out.u.meas.text, "bad byte");

	memset(&in, 0, sizeof(in));
	in.type = GDR_MSG_ERROR;
	in.u.error.code = -EINVAL;
	snprintf(in.u.error.text, sizeof(in.u.error.text), "plan mismatch: -n/--iters");
	roundtrip(&in, &out);
	assert_int_equal(out.u.error.code, -EINVAL);
	assert_string_equal(out.u.error.text, "plan mismatch: -n/--iters");
}

/* Every prefix of a valid message is refused, never read past. */
static void test_truncation(void **state)
{
	struct gdr_msg in = { .type = GDR_MSG_PLAN }, out;
	uint8_t buf[GDR_CTRL_MAX];
	char why[256];
	int n;

	(void)state;
	sample_plan(&in.u.plan);
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	for (int len = 0; len < n; len++)
		assert_int_not_equal(gdr_msg_decode(buf, (size_t)len, &out, why, sizeof(why)), 0);
	/* Trailing garbage is refused too. */
	buf[n] = 0;
	assert_int_not_equal(gdr_msg_decode(buf, (size_t)n + 1, &out, why, sizeof(why)), 0);
	/* And the encoder refuses a buffer too small. */
	assert_int_equal(gdr_msg_encode(&in, buf, 20), -ENOSPC);
}

static int decode_patched(const struct gdr_msg *in, size_t off, uint8_t val, char *why)
{
	uint8_t buf[GDR_CTRL_MAX];
	struct gdr_msg out;
	int n = gdr_msg_encode(in, buf, sizeof(buf));

	buf[off] = val;
	return gdr_msg_decode(buf, (size_t)n, &out, why, 256);
}

static void test_hostile_fields(void **state)
{
	struct gdr_msg in = { .type = GDR_MSG_PLAN };
	char why[256];

	(void)state;
	sample_plan(&in.u.plan);
	/* Header: magic, version, type. */
	assert_int_equal(decode_patched(&in, 0, 'X', why), -EBADMSG);
	assert_int_equal(decode_patched(&in, 4, 9, why), -EPROTO);
	assert_non_null(strstr(why, "protocol version 9"));
	assert_int_equal(decode_patched(&in, 6, 99, why), -EBADMSG);
	/* Payload (offset 12): verb, bidir, validate, nmem, mem[]. */
	assert_int_equal(decode_patched(&in, 12, 7, why), -EBADMSG);
	assert_non_null(strstr(why, "verb"));
	assert_int_equal(decode_patched(&in, 15, 9, why), -EBADMSG);
	assert_int_equal(decode_patched(&in, 16, 200, why), -EBADMSG);
	assert_non_null(strstr(why, "path"));
	/* nsizes (after 2 paths) = 0 and = 255. */
	assert_int_equal(decode_patched(&in, 18, 0, why), -EBADMSG);
	assert_int_equal(decode_patched(&in, 18, 255, why), -EBADMSG);

	/* BUF with more QPs than allowed, and a range that wraps. */
	struct gdr_msg b = { .type = GDR_MSG_BUF };
	b.u.buf.nqps = 1;
	b.u.buf.ok = 1;
	assert_int_equal(decode_patched(&b, 15, 0xff, why), -EBADMSG);
	assert_non_null(strstr(why, "QP count"));
	/* held (offset 14) is 0 or 1. */
	assert_int_equal(decode_patched(&b, 14, 2, why), -EBADMSG);
	assert_non_null(strstr(why, "held"));
	b.u.buf.qp[0].addr = ~0ull - 10;
	b.u.buf.qp[0].len = 100;
	uint8_t buf[GDR_CTRL_MAX];
	struct gdr_msg out;
	int n = gdr_msg_encode(&b, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "wraps"));
}

static void test_text_sanitised(void **state)
{
	struct gdr_msg in = { .type = GDR_MSG_ERROR }, out;
	uint8_t buf[GDR_CTRL_MAX];
	char why[256];
	int n;

	(void)state;
	snprintf(in.u.error.text, sizeof(in.u.error.text), "a\033[2Jb\nc");
	roundtrip(&in, &out);
	assert_string_equal(out.u.error.text, "a?[2Jb?c");
	/* A text length beyond the bound. */
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	buf[16] = 0xff;
	buf[17] = 0xff;
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
}

static void test_hello(void **state)
{
	struct gdr_hello h = { .version = GDR_PROTO_VERSION,
			       .nqps = 4,
			       .qp_index = 3,
			       .tx_depth = 128,
			       .extra_recv = 24,
			       .session = 42 },
			 o;
	uint8_t buf[GDR_HELLO_LEN];
	char why[256];

	(void)state;
	assert_int_equal(gdr_hello_encode(&h, buf, sizeof(buf)), GDR_HELLO_LEN);
	assert_int_equal(gdr_hello_decode(buf, sizeof(buf), &o, why, sizeof(why)), 0);
	assert_int_equal(o.session, 42);
	assert_int_equal(o.extra_recv, 24);
	assert_int_not_equal(gdr_hello_decode(buf, 10, &o, why, sizeof(why)), 0);
	h.qp_index = 4;
	gdr_hello_encode(&h, buf, sizeof(buf));
	assert_int_equal(gdr_hello_decode(buf, sizeof(buf), &o, why, sizeof(why)), -EBADMSG);
	h.qp_index = 0;
	h.version = GDR_PROTO_VERSION + 1;
	gdr_hello_encode(&h, buf, sizeof(buf));
	assert_int_equal(gdr_hello_decode(buf, sizeof(buf), &o, why, sizeof(why)), -EPROTO);
	char want[32];
	snprintf(want, sizeof(want), "version %d", GDR_PROTO_VERSION + 1);
	assert_non_null(strstr(why, want));
}

static void test_plan_check(void **state)
{
	struct gdr_opts srv;
	struct gdr_plan p;
	char why[256];
	char *a1[] = { "x", NULL };
	char *a2[] = { "x", "-n", "10", NULL };
	char *a3[] = { "x", "-q", "3", "-n", "77", NULL };

	(void)state;
	sample_plan(&p);
	/* A server without options adopts anything of its verb. */
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_READ, 1, a1), 0);
	assert_int_equal(gdr_plan_check(&srv, &p, why, sizeof(why)), 0);
	/* Another verb is an error that names it. */
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 1, a1), 0);
	assert_int_equal(gdr_plan_check(&srv, &p, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "verb"));
	/* An explicit server option that contradicts the plan names the option and both values. */
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_READ, 3, a2), 0);
	assert_int_equal(gdr_plan_check(&srv, &p, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "-n/--iters: server has 10, client asks 77"));
	/* An explicit option that agrees is fine. */
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_READ, 5, a3), 0);
	assert_int_equal(gdr_plan_check(&srv, &p, why, sizeof(why)), 0);
}

/*
 * Issue 43: --gpu-alloc, the GPU registration flags and -T travel in the plan
 * (a client's --gpu-alloc all against a default server ran out of step), and
 * a server's explicit option that contradicts them names both values.
 */
static void test_plan_gpu_fields(void **state)
{
	struct gdr_opts cli, srv;
	struct gdr_msg in = { .type = GDR_MSG_PLAN }, out;
	uint8_t buf[GDR_CTRL_MAX];
	char why[256];
	char *ac[] = { "x",
		       "--gpu-alloc",
		       "all",
		       "--dmabuf-mapping",
		       "pcie",
		       "--disable_pcie_relaxed",
		       "--use_data_direct",
		       "-T",
		       "106",
		       "srv",
		       NULL };
	char *a0[] = { "x", NULL };
	char *a1[] = { "x", "--gpu-alloc", "memalloc", NULL };
	char *a2[] = { "x", "--dmabuf-mapping", "default", NULL };
	char *a3[] = { "x", "-T", "0", NULL };
	char *a4[] = { "x", "--gpu-alloc", "all", "-T", "106", NULL };
	int n;

	(void)state;
	assert_int_equal(gdr_opts_parse(&cli, GDR_VERB_WRITE, 10, ac), 0);
	gdr_plan_from_opts(&cli, 1, &in.u.plan);
	roundtrip(&in, &out);
	assert_int_equal(out.u.plan.gpu_allocs, (1u << GDR_GPU_ALLOC__COUNT) - 1);
	assert_int_equal(out.u.plan.gpu_flags,
			 GDR_PLAN_DMABUF_PCIE | GDR_PLAN_NO_RELAXED | GDR_PLAN_DATA_DIRECT);
	assert_int_equal(out.u.plan.tos, 106);
	/* The default: memalloc only, no flags, no ToS. */
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 1, a0), 0);
	gdr_plan_from_opts(&srv, 1, &in.u.plan);
	roundtrip(&in, &out);
	assert_int_equal(out.u.plan.gpu_allocs, 1u << GDR_GPU_ALLOC_MEMALLOC);
	assert_int_equal(out.u.plan.gpu_flags, 0);
	assert_int_equal(out.u.plan.tos, -1);
	/* A plan without an allocator, or with unknown flags, is refused. */
	in.u.plan.gpu_allocs = 0;
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "GPU allocators"));
	in.u.plan.gpu_allocs = 1;
	in.u.plan.gpu_flags = 0x80;
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);

	/* A default server adopts the client's; an explicit contrary option names both values. */
	gdr_plan_from_opts(&cli, 1, &in.u.plan);
	assert_int_equal(gdr_plan_check(&srv, &in.u.plan, why, sizeof(why)), 0);
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 3, a1), 0);
	assert_int_equal(gdr_plan_check(&srv, &in.u.plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--gpu-alloc: server has memalloc, client asks all"));
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 3, a2), 0);
	assert_int_equal(gdr_plan_check(&srv, &in.u.plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--dmabuf-mapping: server has default, client asks pcie"));
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 3, a3), 0);
	assert_int_equal(gdr_plan_check(&srv, &in.u.plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "-T/--tos: server has 0, client asks 106"));
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 5, a4), 0);
	assert_int_equal(gdr_plan_check(&srv, &in.u.plan, why, sizeof(why)), 0);
}

/* The plan's rounds rule and run id (issue 51), and ROUND: both ways, and refused out of range. */
static void test_rounds_fields(void **state)
{
	struct gdr_msg in = { .type = GDR_MSG_PLAN }, out;
	struct gdr_opts o, srv;
	char why[256];
	char *a[] = { "x", "--mem", "host,dmabuf", "--repeat", "6:30", "--alpha", "5",
		      "--margin", "2.5", "--time-per-size", "1.5", "srv", NULL };
	char *s1[] = { "x", "--repeat", "6:31", NULL };
	char *s2[] = { "x", "--mem", "host,dmabuf", "--alpha", "2", NULL };

	(void)state;
	assert_int_equal(gdr_opts_parse(&o, GDR_VERB_WRITE, 12, a), 0);
	gdr_plan_from_opts(&o, 1, &in.u.plan);
	in.u.plan.run_id = 0x0123456789abcdefull;
	roundtrip(&in, &out);
	assert_int_equal(out.u.plan.repeat_min, 6);
	assert_int_equal(out.u.plan.repeat, 30);
	assert_int_equal(out.u.plan.alpha_ppm, 50000);
	assert_int_equal(out.u.plan.margin_ppm, 25000);
	assert_int_equal(out.u.plan.size_us, 1500000);
	assert_true(out.u.plan.run_id == 0x0123456789abcdefull);
	/* A server's own rounds or error rate that differ: refused, naming the option. */
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 3, s1), 0);
	assert_int_equal(gdr_plan_check(&srv, &in.u.plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--repeat: server has 31, client asks 30"));
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 5, s2), 0);
	assert_int_equal(gdr_plan_check(&srv, &in.u.plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--alpha (ppm): server has 20000, client asks 50000"));

	/* Out of range: MIN above MAX, too few rounds to decide on, a rate of 0, more than kept. */
	struct gdr_msg bad = in;
	uint8_t buf[GDR_CTRL_MAX];
	int n;

	bad.u.plan.repeat_min = 31;
	n = gdr_msg_encode(&bad, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "plan rounds 31:30"));
	bad.u.plan.repeat_min = 2;
	n = gdr_msg_encode(&bad, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	bad = in;
	bad.u.plan.repeat = GDR_REP_KEEP + 1;
	n = gdr_msg_encode(&bad, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	bad = in;
	bad.u.plan.alpha_ppm = 0;
	n = gdr_msg_encode(&bad, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "error rate"));

	struct gdr_msg r = { .type = GDR_MSG_ROUND };
	r.u.round.size = 3;
	r.u.round.rounds = 7;
	r.u.round.stop = GDR_ROUND_BUDGET;
	roundtrip(&r, &out);
	assert_int_equal(out.u.round.size, 3);
	assert_int_equal(out.u.round.rounds, 7);
	assert_int_equal(out.u.round.stop, GDR_ROUND_BUDGET);
	assert_string_equal(gdr_round_stop_name(GDR_ROUND_BUDGET), "time budget");
	assert_string_equal(gdr_msg_type_name(GDR_MSG_ROUND), "ROUND");
	/* Payload at 12: size (2), rounds (2), stop (1). */
	assert_int_equal(decode_patched(&r, 12, GDR_MAX_SIZES, why), -EBADMSG);
	assert_int_equal(decode_patched(&r, 14, 0, why), -EBADMSG);
	assert_int_equal(decode_patched(&r, 16, GDR_ROUND__END, why), -EBADMSG);
	assert_non_null(strstr(why, "ROUND fields out of range"));
}

/* The client's plan of argv (a client: the last argument is its server). */
static void plan_of(struct gdr_plan *p, char **argv)
{
	struct gdr_opts o;
	int argc = 0;

	while (argv[argc])
		argc++;
	assert_int_equal(gdr_opts_parse(&o, GDR_VERB_WRITE, argc, argv), 0);
	gdr_plan_from_opts(&o, 7, p);
}

/*
 * Issue 48: the plan carries the combinations (the client's path and the
 * server's) and who named the server's side, appended at its end; nothing
 * named: each path on both sides, as before.
 */
static void test_plan_pairs(void **state)
{
	char *same[] = { "x", "--mem", "host,bounce", "srv", NULL };
	char *remote[] = {
		"x", "--mem", "host,peermem", "--mem-remote", "bounce,host", "srv", NULL
	};
	char *pairs[] = { "x", "--mem", "dmabuf:peermem,peermem:dmabuf", "srv", NULL };
	struct gdr_msg in = { .type = GDR_MSG_PLAN }, out;

	(void)state;
	plan_of(&in.u.plan, same);
	roundtrip(&in, &out);
	assert_int_equal(out.u.plan.sides, GDR_SIDES_SAME);
	assert_int_equal(out.u.plan.npairs, 2);
	assert_int_equal(out.u.plan.pairs[1].client, GDR_MEM_BOUNCE);
	assert_int_equal(out.u.plan.pairs[1].server, GDR_MEM_BOUNCE);
	/* Every client path with every --mem-remote path, client path by client path. */
	plan_of(&in.u.plan, remote);
	roundtrip(&in, &out);
	assert_int_equal(out.u.plan.sides, GDR_SIDES_CLIENT);
	assert_int_equal(out.u.plan.npairs, 4);
	assert_int_equal(out.u.plan.pairs[0].client, GDR_MEM_HOST);
	assert_int_equal(out.u.plan.pairs[0].server, GDR_MEM_BOUNCE);
	assert_int_equal(out.u.plan.pairs[3].client, GDR_MEM_PEERMEM);
	assert_int_equal(out.u.plan.pairs[3].server, GDR_MEM_HOST);
	plan_of(&in.u.plan, pairs);
	roundtrip(&in, &out);
	assert_int_equal(out.u.plan.sides, GDR_SIDES_CLIENT);
	assert_int_equal(out.u.plan.npairs, 2);
	assert_int_equal(out.u.plan.nmem, 2);
	assert_int_equal(out.u.plan.pairs[0].client, GDR_MEM_DMABUF);
	assert_int_equal(out.u.plan.pairs[0].server, GDR_MEM_PEERMEM);
}

/* The plan's last fields: repeat_min (2), alpha_ppm, margin_ppm (4 each), size_us, run_id (8 each). */
#define PLAN_ROUNDS_LEN 26

/* A plan whose combinations do not hold together is refused, naming the field. */
static void test_plan_pairs_hostile(void **state)
{
	char *remote[] = { "x", "--mem", "host,peermem", "--mem-remote", "bounce", "srv", NULL };
	char *same[] = { "x", "--mem", "host,bounce", "srv", NULL };
	struct gdr_msg in = { .type = GDR_MSG_PLAN };
	uint8_t buf[GDR_CTRL_MAX];
	struct gdr_msg out;
	char why[256];
	int n;

	(void)state;
	plan_of(&in.u.plan, remote);
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	/* Before the rounds rule (PLAN_ROUNDS_LEN bytes): sides, npairs, then client/server per pair. */
	size_t at = (size_t)n - PLAN_ROUNDS_LEN - 2 * in.u.plan.npairs - 2;
	assert_int_equal(buf[at], GDR_SIDES_CLIENT);
	assert_int_equal(buf[at + 1], 2);
	/* GDR_SIDES_SERVER is the server's own to choose: never from a client. */
	assert_int_equal(decode_patched(&in, at, GDR_SIDES_SERVER, why), -EBADMSG);
	assert_non_null(strstr(why, "plan sides 2"));
	assert_int_equal(decode_patched(&in, at + 1, 0, why), -EBADMSG);
	assert_non_null(strstr(why, "combination count"));
	assert_int_equal(decode_patched(&in, at + 1, GDR_MAX_PAIRS + 1, why), -EBADMSG);
	assert_int_equal(decode_patched(&in, at + 3, 9, why), -EBADMSG);
	assert_non_null(strstr(why, "unknown"));
	/* The second pair made a copy of the first: listed twice. */
	assert_int_equal(decode_patched(&in, at + 4, GDR_MEM_HOST, why), -EBADMSG);
	assert_non_null(strstr(why, "listed twice"));
	/* A client path that is not one of the plan's paths. */
	assert_int_equal(decode_patched(&in, at + 2, GDR_MEM_DMABUF, why), -EBADMSG);
	assert_non_null(strstr(why, "not in the plan's paths"));
	/* Every plan path in some combination. */
	in.u.plan.npairs = 1;
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "in no combination"));
	/* Not named: each path on both sides, so a different server path is refused. */
	plan_of(&in.u.plan, same);
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	at = (size_t)n - PLAN_ROUNDS_LEN - 2 * in.u.plan.npairs - 2;
	assert_int_equal(decode_patched(&in, at + 3, GDR_MEM_PEERMEM, why), -EBADMSG);
	assert_non_null(strstr(why, "not the plan's path on both sides"));
	assert_int_equal(decode_patched(&in, at, GDR_SIDES_CLIENT, why), 0);
	/* Every prefix is refused, the new fields included. */
	for (int len = 0; len < n; len++)
		assert_int_not_equal(gdr_msg_decode(buf, (size_t)len, &out, why, sizeof(why)), 0);
}

/* The plan's ACK carries the server's own paths; an ERROR does not. */
static void test_ack_paths(void **state)
{
	struct gdr_msg in, out;
	uint8_t buf[GDR_CTRL_MAX];
	char why[256];
	int n;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = GDR_MSG_ACK;
	in.u.error.nmem = 2;
	in.u.error.mem[0] = GDR_MEM_PEERMEM;
	in.u.error.mem[1] = GDR_MEM_HOST;
	roundtrip(&in, &out);
	assert_int_equal(out.u.error.nmem, 2);
	assert_int_equal(out.u.error.mem[0], GDR_MEM_PEERMEM);
	assert_int_equal(out.u.error.mem[1], GDR_MEM_HOST);
	/* A path twice, or unknown. */
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	assert_int_equal(decode_patched(&in, (size_t)n - 1, GDR_MEM_PEERMEM, why), -EBADMSG);
	assert_non_null(strstr(why, "ACK path"));
	assert_int_equal(decode_patched(&in, (size_t)n - 1, 4, why), -EBADMSG);
	assert_int_equal(decode_patched(&in, (size_t)n - 3, 5, why), -EBADMSG);
	assert_non_null(strstr(why, "ACK path count"));
	in.u.error.nmem = GDR_MEM__COUNT + 1;
	assert_int_equal(gdr_msg_encode(&in, buf, sizeof(buf)), -EINVAL);
	/* An ERROR ends at its text. */
	in.type = GDR_MSG_ERROR;
	in.u.error.code = -EINVAL;
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	assert_int_equal(n, 12 + 4 + 2);
	roundtrip(&in, &out);
	assert_int_equal(out.u.error.nmem, 0);
}

/* BUF tells its side's GPU, NIC and distance, each bounded by its own field. */
static void test_buf_side(void **state)
{
	struct gdr_msg in, out;
	uint8_t buf[GDR_CTRL_MAX];
	char why[256];
	int n;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = GDR_MSG_BUF;
	in.u.buf.kind = GDR_MEM_PEERMEM;
	in.u.buf.ok = 1;
	in.u.buf.nqps = GDR_MAX_QPS;
	memset(in.u.buf.text, 'r', sizeof(in.u.buf.text) - 1);
	strcpy(in.u.buf.side.gpu, "3");
	strcpy(in.u.buf.side.gpu_bus_id, "0000:3b:00.0");
	memset(in.u.buf.side.gpu_name, 'N', sizeof(in.u.buf.side.gpu_name) - 1);
	strcpy(in.u.buf.side.nic, "mlx5_1");
	strcpy(in.u.buf.side.distance, "PXB");
	/* The largest BUF still fits a control message. */
	roundtrip(&in, &out);
	assert_string_equal(out.u.buf.side.gpu, "3");
	assert_string_equal(out.u.buf.side.gpu_bus_id, "0000:3b:00.0");
	assert_int_equal(strlen(out.u.buf.side.gpu_name), sizeof(in.u.buf.side.gpu_name) - 1);
	assert_string_equal(out.u.buf.side.nic, "mlx5_1");
	assert_string_equal(out.u.buf.side.distance, "PXB");
	/* distance (the last field: 2 length bytes, 3 text) claims 16 bytes: its field's size. */
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	buf[n - 5] = 16;
	buf[n - 4] = 0;
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "BUF side distance"));
	/* Control characters from the peer are replaced, as in every text. */
	strcpy(in.u.buf.side.nic, "a\033[2J");
	roundtrip(&in, &out);
	assert_string_equal(out.u.buf.side.nic, "a?[2J");
}

/*
 * The server's own --mem makes the server's side: every client path with
 * every own path when the client named none; the client's named side must
 * name the same paths, or the mismatch names both.
 */
static void test_plan_server_side(void **state)
{
	char *same[] = { "x", "--mem", "host,peermem", "srv", NULL };
	char *remote[] = { "x", "--mem", "host", "--mem-remote", "bounce,peermem", "srv", NULL };
	const uint8_t own[] = { GDR_MEM_PEERMEM, GDR_MEM_BOUNCE };
	struct gdr_plan p;
	struct gdr_opts srv;
	char *a1[] = { "x", "--mem", "bounce", NULL };
	char why[256] = "";

	(void)state;
	plan_of(&p, same);
	/* No own paths: the plan as it is. */
	assert_int_equal(gdr_plan_server_side(&p, own, 0, why, sizeof(why)), 0);
	assert_int_equal(p.sides, GDR_SIDES_SAME);
	assert_int_equal(p.npairs, 2);
	assert_int_equal(gdr_plan_server_side(&p, own, 2, why, sizeof(why)), 0);
	assert_int_equal(p.sides, GDR_SIDES_SERVER);
	assert_int_equal(p.npairs, 4);
	assert_int_equal(p.pairs[0].client, GDR_MEM_HOST);
	assert_int_equal(p.pairs[0].server, GDR_MEM_PEERMEM);
	assert_int_equal(p.pairs[1].server, GDR_MEM_BOUNCE);
	assert_int_equal(p.pairs[3].client, GDR_MEM_PEERMEM);
	assert_int_equal(p.pairs[3].server, GDR_MEM_BOUNCE);
	/* Named by the client: the same paths in any order agree, the plan unchanged. */
	plan_of(&p, remote);
	assert_int_equal(gdr_plan_server_side(&p, own, 2, why, sizeof(why)), 0);
	assert_int_equal(p.sides, GDR_SIDES_CLIENT);
	assert_int_equal(p.pairs[0].server, GDR_MEM_BOUNCE);
	/* Different paths: a mismatch naming both. */
	assert_int_equal(gdr_plan_server_side(&p, own, 1, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "plan mismatch: the server's side: the client names "
				    "bounce,peermem (--mem-remote or --mem LOCAL:REMOTE), the "
				    "server's --mem says peermem"));
	/* The server's --mem is no longer a contradiction of the client's. */
	plan_of(&p, same);
	assert_int_equal(gdr_opts_parse(&srv, GDR_VERB_WRITE, 3, a1), 0);
	assert_int_equal(gdr_plan_check(&srv, &p, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_roundtrip), cmocka_unit_test(test_other_roundtrips),
		cmocka_unit_test(test_truncation),     cmocka_unit_test(test_hostile_fields),
		cmocka_unit_test(test_text_sanitised), cmocka_unit_test(test_hello),
		cmocka_unit_test(test_plan_check),     cmocka_unit_test(test_plan_gpu_fields),
		cmocka_unit_test(test_rounds_fields),
		cmocka_unit_test(test_plan_pairs),	 cmocka_unit_test(test_plan_pairs_hostile),
		cmocka_unit_test(test_ack_paths),	 cmocka_unit_test(test_buf_side),
		cmocka_unit_test(test_plan_server_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
