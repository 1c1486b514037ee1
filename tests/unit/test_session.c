/*
 * The client/server choreography (session_client.c, session_server.c) over
 * an in-memory control pair: every message is encoded and decoded by the
 * real proto.c and queued to the other side, with the timeouts a real
 * channel has. The paths are a fake (struct gdr_path_ops) that records its
 * calls. Client and server run against each other in two threads, or the
 * client against a scripted peer (silent, malformed).
 */
#include "cmocka_common.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"
#include "session_int.h"
#include "util.h"

/* ---- the in-memory control pair ------------------------------------------------------- */

#define QMAX 64

struct frame {
	uint8_t b[GDR_CTRL_MAX];
	size_t len;
};

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct frame f[QMAX];
	unsigned int head, n;
};

/* One side's end: it sends into out and receives from in. */
struct end {
	struct queue *in, *out;
	unsigned int sent[GDR_MSG__END];
	unsigned int nstart;
	struct gdr_msg_start start[64]; /* the STARTs sent, in order */
};

static void q_init(struct queue *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
}

static void q_push_raw(struct queue *q, const uint8_t *b, size_t len)
{
	pthread_mutex_lock(&q->mu);
	assert_true(q->n < QMAX);
	struct frame *f = &q->f[(q->head + q->n) % QMAX];
	memcpy(f->b, b, len);
	f->len = len;
	q->n++;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static int mem_send(void *ctx, const struct gdr_msg *m, char *why, size_t wlen)
{
	struct end *e = ctx;
	uint8_t b[GDR_CTRL_MAX];
	int n = gdr_msg_encode(m, b, sizeof(b));

	if (n < 0) {
		snprintf(why, wlen, "cannot encode %s", gdr_msg_type_name(m->type));
		return n;
	}
	if (m->type < GDR_MSG__END)
		e->sent[m->type]++;
	if (m->type == GDR_MSG_START && e->nstart < 64)
		e->start[e->nstart++] = m->u.start;
	q_push_raw(e->out, b, (size_t)n);
	return 0;
}

static int mem_recv(void *ctx, struct gdr_msg *m, double timeout, int long_wait, char *why,
		    size_t wlen)
{
	struct end *e = ctx;
	struct queue *q = e->in;
	struct timespec dl;
	struct frame f;
	int r = 0;

	(void)long_wait;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)timeout;
	dl.tv_nsec += (long)((timeout - (time_t)timeout) * 1e9);
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->mu);
	while (q->n == 0 && r == 0)
		r = pthread_cond_timedwait(&q->cv, &q->mu, &dl);
	if (q->n == 0) {
		pthread_mutex_unlock(&q->mu);
		snprintf(why, wlen, "no message from the peer within %g s", timeout);
		return -ETIMEDOUT;
	}
	f = q->f[q->head];
	q->head = (q->head + 1) % QMAX;
	q->n--;
	pthread_mutex_unlock(&q->mu);
	return gdr_msg_decode(f.b, f.len, m, why, wlen);
}

static void mem_send_error(void *ctx, int code, const char *text)
{
	struct gdr_msg m = { .type = GDR_MSG_ERROR };
	char why[64];

	m.u.error.code = code;
	gdr_strlcpy(m.u.error.text, text, sizeof(m.u.error.text));
	mem_send(ctx, &m, why, sizeof(why));
}

static const struct gdr_ctl_ops mem_ops = {
	.send = mem_send,
	.recv = mem_recv,
	.send_error = mem_send_error,
};

/* ---- the fake path ------------------------------------------------------------------- */

#define MAXCALLS 64

/* What one side's paths were asked to do. */
struct record {
	unsigned int opens, closes, skip_path; /* skip_path: 1 + index of a path to skip */
	int short_kind;		  /* opens of this path kind (+1) fail for want of memory, */
	unsigned int short_times; /* this many times */
	unsigned int nruns;
	uint64_t run_size[MAXCALLS];
	int run_cpus[MAXCALLS]; /* CPUs the running thread was allowed during each run */
	unsigned int fail_run; /* 1 + index of the run to fail */
	int wobble_kind;       /* runs of this path kind (+1) take 1 ms -+ wobble, by turns */
	double wobble;
	unsigned int nlat, lat_with_samples;
	uint64_t lat_size[MAXCALLS];
	size_t src_len, dst_len;	  /* of the last path opened */
	unsigned int open_kind[MAXCALLS]; /* each open: kind * 10 + the peer's kind */
	unsigned int skip_kind;		  /* 1 + a kind this side cannot open */
};

static struct record rec[2]; /* [0] client, [1] server */

static struct record *rec_of(const struct gdr_path *p)
{
	return &rec[p->env->client ? 0 : 1];
}

static void fake_open(struct gdr_path *p)
{
	struct record *r = rec_of(p);

	assert_true(r->opens < MAXCALLS);
	r->open_kind[r->opens++] = (unsigned int)p->kind * 10 + (unsigned int)p->peer_kind;
	r->src_len = p->src_len;
	r->dst_len = p->dst_len;
	if (r->skip_kind == (unsigned int)p->kind + 1) {
		snprintf(p->skip, sizeof(p->skip), "fake: %s not here", gdr_mem_kind_name(p->kind));
		return;
	}
	if (r->skip_path == r->opens) {
		snprintf(p->skip, sizeof(p->skip), "fake: path %u skipped here", r->opens - 1);
		return;
	}
	if (r->short_kind == (int)p->kind + 1 && r->short_times) {
		r->short_times--;
		snprintf(p->skip, sizeof(p->skip), "fake: out of memory");
		p->err = -ENOMEM;
		return;
	}
	p->ok = 1;
}

static void fake_describe(const struct gdr_path *p, struct gdr_msg_buf *out)
{
	out->nqps = (uint16_t)p->env->plan->qps;
	for (unsigned int q = 0; q < out->nqps; q++) {
		out->qp[q].addr = 0x1000 * (q + 1);
		out->qp[q].rkey = 7;
		out->qp[q].len = p->dst_len;
	}
}

static uint64_t fake_need(const struct gdr_path *p, unsigned int q)
{
	(void)q;
	return p->dst_len;
}

static unsigned int fake_qps(const struct gdr_plan *plan)
{
	return plan->qps;
}

static unsigned int fake_slots(const struct gdr_opts *o)
{
	(void)o;
	return 0;
}

static void fake_layout(const struct gdr_path *p, uint64_t size, struct gdr_vlayout *l)
{
	gdr_validate_layout(l, size, 0, p->src_len, p->dst_len);
}

static int fake_run(struct gdr_path *p, uint64_t size, struct gdr_loop_out *out, char *why,
		    size_t wlen)
{
	struct record *r = rec_of(p);

	cpu_set_t now;

	assert_true(r->nruns < MAXCALLS);
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	r->run_cpus[r->nruns] = CPU_COUNT(&now);
	r->run_size[r->nruns++] = size;
	if (r->fail_run == r->nruns) {
		snprintf(why, wlen, "fake: run %u failed", r->nruns - 1);
		return -EIO;
	}
	memset(out, 0, sizeof(*out));
	out->iters = p->env->plan->iters;
	out->msgs = out->iters * p->env->plan->qps;
	out->bytes = out->msgs * size;
	out->elapsed_ns = 1000000;
	if (r->wobble_kind == (int)p->kind + 1)
		out->elapsed_ns = (uint64_t)(1e6 * (1 + (r->nruns % 2 ? r->wobble : -r->wobble)));
	out->peak_bps = (double)out->bytes * 1e9 / out->elapsed_ns;
	return 0;
}

static int fake_run_lat(struct gdr_path *p, uint64_t size, double *samples, char *why, size_t wlen)
{
	struct record *r = rec_of(p);

	(void)why, (void)wlen;
	assert_true(r->nlat < MAXCALLS);
	r->lat_size[r->nlat++] = size;
	if (samples) {
		r->lat_with_samples++;
		for (uint64_t i = 0; i < p->env->plan->iters; i++)
			samples[i] = (double)size / 64 + (double)i;
	}
	return 0;
}

static int fake_lat_skip(const struct gdr_path *p, uint64_t size, char *why, size_t wlen)
{
	(void)p, (void)size, (void)why, (void)wlen;
	return 0;
}

static const char *fake_lat_note(const struct gdr_path *p)
{
	(void)p;
	return "fake";
}

static const char *fake_row_note(const struct gdr_path *p, char *buf, size_t len)
{
	(void)p, (void)buf, (void)len;
	return NULL;
}

/* passive_runs: the server drives every repeat too, so both sides' calls are seen. */
static const struct gdr_path_ops fake_ops = {
	.recv_slots = fake_slots,
	.qps = fake_qps,
	.passive_runs = 1,
	.open = fake_open,
	.describe = fake_describe,
	.need = fake_need,
	.layout = fake_layout,
	.run = fake_run,
	.run_lat = fake_run_lat,
	.lat_skip = fake_lat_skip,
	.lat_note = fake_lat_note,
	.row_note = fake_row_note,
};

/* ---- one side ------------------------------------------------------------------------ */

struct side {
	struct gdr_opts o;
	struct gdr_run run;
	struct sess *s;
	struct end end;
	volatile sig_atomic_t stop;
	int r;
};

/* The tool both sides parse their options as (READ pins repeats up to 1 MiB by default). */
static enum gdr_verb side_verb = GDR_VERB_WRITE;

static void side_init(struct side *d, int client, struct queue *in, struct queue *out, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(d, 0, sizeof(*d));
	assert_int_equal(gdr_opts_parse(&d->o, side_verb, argc, argv), 0);
	assert_int_equal(d->o.server != NULL, client);
	d->s = calloc(1, sizeof(*d->s));
	assert_non_null(d->s);
	d->end.in = in;
	d->end.out = out;
	d->s->o = &d->o;
	gdr_run_from_opts(&d->run, &d->o);
	d->s->run = &d->run;
	d->s->client = client;
	d->s->stop = &d->stop;
	d->s->path_ops = &fake_ops;
	d->s->ctl = (struct gdr_ctl){ .ops = &mem_ops,
				      .ctx = &d->end,
				      .peer = "peer",
				      .peer_role = client ? "server" : "client" };
	d->s->env.sysfs_root = "/nonexistent";
}

static void side_free(struct side *d)
{
	gdr_sess_paths_free(d->s);
	free(d->s);
}

/* ---- launch hooks: the sync points counted, every row kept -------------------------- */

#define MAXROWS 32

struct rows {
	unsigned int points, n;
	struct gdr_result r[MAXROWS];
	struct gdr_sync sy;
};

static int rows_point(void *ctx, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	((struct rows *)ctx)->points++;
	return 0;
}

static void rows_row(void *ctx, const struct gdr_result *r)
{
	struct rows *k = ctx;

	assert_true(k->n < MAXROWS);
	k->r[k->n++] = *r;
}

/* The side's rows go to k, its START points counted there. */
static void side_rows(struct side *d, struct rows *k)
{
	memset(k, 0, sizeof(*k));
	k->sy = (struct gdr_sync){ .point = rows_point, .row = rows_row, .ctx = k };
	d->run.sync = &k->sy;
}

/* Four paths, as the issue names them. */
static void four_paths(struct gdr_opts *o)
{
	o->nmem = 4;
	o->mem[0] = GDR_MEM_HOST;
	o->mem[1] = GDR_MEM_DMABUF;
	o->mem[2] = GDR_MEM_PEERMEM;
	o->mem[3] = GDR_MEM_BOUNCE;
}

static void *server_thread(void *arg)
{
	struct side *d = arg;

	d->r = gdr_sess_server_run(d->s);
	return NULL;
}

static struct queue c2s, s2c;

static char *cli_args[] = { "x", "--sizes",   "64:256", "--repeat", "2", "-n",
			    "5", "--timeout", "2",	"peer",	    NULL };
static char *srv_args[] = { "x", "--timeout", "2", NULL };

/* A client of cli's options on the four paths and a server, both keeping their rows. */
static void rows_init(struct side *c, struct side *sv, struct rows *ck, struct rows *sk, char **cli)
{
	side_init(c, 1, &s2c, &c2s, cli);
	side_init(sv, 0, &c2s, &s2c, srv_args);
	four_paths(&c->o);
	side_rows(c, ck);
	side_rows(sv, sk);
}

static int setup(void **state)
{
	(void)state;
	side_verb = GDR_VERB_WRITE;
	memset(rec, 0, sizeof(rec));
	q_init(&c2s);
	q_init(&s2c);
	alarm(60); /* a hang is a failure, not a stuck test run */
	return 0;
}

/* The sessions print their tables on stdout, where cmocka writes TAP: set them aside. */
static int saved_stdout = -1;

static void quiet(void)
{
	fflush(stdout);
	saved_stdout = dup(1);
	int fd = open("/dev/null", O_WRONLY);
	assert_true(fd >= 0 && saved_stdout >= 0);
	dup2(fd, 1);
	close(fd);
}

static void loud(void)
{
	fflush(stdout);
	dup2(saved_stdout, 1);
	close(saved_stdout);
}

static int client_run(struct side *c)
{
	quiet();
	c->r = gdr_sess_client_run(c->s);
	loud();
	return c->r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Client and server against each other. */
static void run_pair(struct side *c, struct side *sv)
{
	pthread_t t;

	quiet();
	assert_int_equal(pthread_create(&t, NULL, server_thread, sv), 0);
	c->r = gdr_sess_client_run(c->s);
	pthread_join(t, NULL);
	loud();
}

/* Sizes 64, 128, 256, two repeats each, on both sides, in order; BYE ends it. */
static void test_size_loop(void **state)
{
	struct side c, sv;
	const uint64_t want[] = { 64, 64, 128, 128, 256, 256 };

	(void)state;
	side_init(&c, 1, &s2c, &c2s, cli_args);
	side_init(&sv, 0, &c2s, &s2c, srv_args);
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rec[k].nruns, 6);
		for (unsigned int i = 0; i < 6; i++)
			assert_int_equal(rec[k].run_size[i], want[i]);
		/* Bandwidth halves stay adjacent (64-byte rounding: the measured layout). */
		assert_int_equal(rec[k].src_len, 256);
		assert_int_equal(rec[k].dst_len, 256);
	}
	/* Every path opened was closed, on both sides; one START and one DONE per repeat. */
	assert_int_equal(c.end.sent[GDR_MSG_START], 6);
	assert_int_equal(c.end.sent[GDR_MSG_DONE], 6);
	assert_int_equal(sv.end.sent[GDR_MSG_ACK], 7); /* the plan's, then one per START */
	assert_int_equal(sv.end.sent[GDR_MSG_RESULT], 6);
	assert_int_equal(c.end.sent[GDR_MSG_BYE], 1);
	/* The rows were summed: 3 sizes, 2 repeats on the last one. */
	assert_int_equal(c.s->paths[0].acc.n, 2);
	assert_int_equal(sv.s->paths[0].acc.n, 2);
	side_free(&c);
	side_free(&sv);
}

/*
 * With --pin each bandwidth repeat runs pinned to one CPU, on both sides, and
 * the thread gets its CPU set back after it; with --no-pin (gdr_write_bw's
 * default) the set is left alone (pin.h). Both sides run NRUNS repeats; those
 * of messages up to PINNED_UPTO bytes must be pinned, the others not.
 */
static void check_pinning(char **cli, char **srv, unsigned int nruns, uint64_t pinned_upto)
{
	struct side c, sv;
	cpu_set_t before, after;
	int n;

	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	n = CPU_COUNT(&before);
	if (n < 2)
		skip(); /* one CPU: there is nothing to pin */
	side_init(&c, 1, &s2c, &c2s, cli);
	side_init(&sv, 0, &c2s, &s2c, srv);
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rec[k].nruns, nruns);
		for (unsigned int i = 0; i < rec[k].nruns; i++)
			assert_int_equal(rec[k].run_cpus[i],
					 rec[k].run_size[i] <= pinned_upto ? 1 : n);
	}
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));
	side_free(&c);
	side_free(&sv);
}

static void test_pinned_repeats(void **state)
{
	static char *cli[] = { "x", "--sizes",	 "64:256", "--repeat", "2",    "-n",
			       "5", "--timeout", "2",	   "--pin",    "peer", NULL };
	static char *srv[] = { "x", "--timeout", "2", "--pin", NULL };

	(void)state;
	check_pinning(cli, srv, 6, UINT64_MAX);
}

static void test_not_pinned(void **state)
{
	static char *cli[] = { "x", "--sizes",	 "64:256", "--repeat", "2",    "-n",
			       "5", "--timeout", "2",	   "--no-pin", "peer", NULL };
	static char *srv[] = { "x", "--timeout", "2", "--no-pin", NULL };

	(void)state;
	check_pinning(cli_args, srv_args, 6, 0); /* the default */
	setup(NULL);
	check_pinning(cli, srv, 6, 0);
}

/* A thread that may run on one CPU only is left as it is; release puts back what it took. */
/* gdr_read_bw pins each repeat of messages up to 1 MiB by default, on both sides; --no-pin turns it
 * off. */
static void test_read_pinned_by_default(void **state)
{
	static char *cli[] = { "x", "--sizes",	 "64:256", "--repeat", "2",    "-n",
			       "5", "--timeout", "2",	   "--no-pin", "peer", NULL };
	static char *srv[] = { "x", "--timeout", "2", "--no-pin", NULL };

	(void)state;
	side_verb = GDR_VERB_READ;
	check_pinning(cli_args, srv_args, 6, UINT64_MAX);
	setup(NULL);
	side_verb = GDR_VERB_READ;
	check_pinning(cli, srv, 6, 0);
}

/*
 * READ's default pins the repeats of messages up to 1 MiB only (pin.h:
 * pinned, long transfers ran at one CPU's rate); --pin pins them all.
 */
static void test_read_pins_small_only(void **state)
{
	static char *cli[] = {
		"x", "--sizes", "512K:2M", "-n", "2", "--timeout", "2", "peer", NULL
	};
	static char *all[] = { "x",	    "--sizes", "512K:2M", "-n",	  "2",
			       "--timeout", "2",       "--pin",	  "peer", NULL };
	static char *srv[] = { "x", "--timeout", "2", NULL };
	static char *srv_pin[] = { "x", "--timeout", "2", "--pin", NULL };

	(void)state;
	side_verb = GDR_VERB_READ;
	check_pinning(cli, srv, 3, GDR_PIN_SMALL_MAX); /* 512 KiB, 1 MiB pinned; 2 MiB not */
	assert_int_equal(rec[0].run_size[1], GDR_PIN_SMALL_MAX);
	setup(NULL);
	side_verb = GDR_VERB_READ;
	check_pinning(all, srv_pin, 3, UINT64_MAX);
}

static void test_pin_here(void **state)
{
	struct gdr_pin pin;
	cpu_set_t before, one, now;
	char why[160];
	int r;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	r = gdr_pin_here(&pin, why, sizeof(why));
	assert_int_equal(r, CPU_COUNT(&before) > 1 ? 1 : 0);
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	if (r == 1) {
		assert_int_equal(CPU_COUNT(&now), 1);
		assert_true(CPU_ISSET(pin.cpu, &now));
		assert_true(CPU_ISSET(pin.cpu, &before));
	}
	gdr_pin_release(&pin);
	assert_int_equal(pin.cpu, -1);
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	assert_true(CPU_EQUAL(&before, &now));

	/* Already on one CPU (taskset -c N, mpirun --bind-to core): nothing to do. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(gdr_pin_here(&pin, why, sizeof(why)), 0);
	assert_int_equal(pin.cpu, -1);
	gdr_pin_release(&pin);
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	assert_true(CPU_EQUAL(&one, &now));
	assert_int_equal(sched_setaffinity(0, sizeof(before), &before), 0);
}

/* Two paths; the server cannot open the second: it is skipped on both sides, no run. */
static void test_skipped_path(void **state)
{
	struct side c, sv;

	(void)state;
	side_init(&c, 1, &s2c, &c2s, cli_args);
	side_init(&sv, 0, &c2s, &s2c, srv_args);
	c.o.nmem = 2;
	c.o.mem[0] = GDR_MEM_HOST;
	c.o.mem[1] = GDR_MEM_PEERMEM; /* each combination once (the plan refuses a repeat) */
	rec[1].skip_path = 2;
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	assert_int_equal(rec[0].opens, 2);
	assert_int_equal(rec[1].opens, 2);
	/* Only the first path ran: 3 sizes x 2 repeats. */
	assert_int_equal(rec[0].nruns, 6);
	assert_int_equal(rec[1].nruns, 6);
	assert_int_equal(c.end.sent[GDR_MSG_BUF], 2);
	assert_int_equal(sv.end.sent[GDR_MSG_BUF], 2);
	assert_int_equal(c.end.sent[GDR_MSG_START], 6);
	side_free(&c);
	side_free(&sv);
}

/*
 * Issue 43: --gpu-alloc all given to the client only. The server adopts the
 * plan's allocators: host once, the GPU path once per allocator, on both
 * sides (before, the server ran one allocator and the sessions fell out of
 * step: "expected BYE, got BUF").
 */
static void test_gpu_alloc_in_plan(void **state)
{
	struct side c, sv;

	(void)state;
	side_init(&c, 1, &s2c, &c2s, cli_args);
	side_init(&sv, 0, &c2s, &s2c, srv_args);
	c.o.nmem = 2;
	c.o.mem[0] = GDR_MEM_HOST;
	c.o.mem[1] = GDR_MEM_PEERMEM;
	c.o.gpu_allocs = (1u << GDR_GPU_ALLOC__COUNT) - 1;
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	assert_int_equal(c.end.sent[GDR_MSG_BUF], 1 + GDR_GPU_ALLOC__COUNT);
	assert_int_equal(sv.end.sent[GDR_MSG_BUF], 1 + GDR_GPU_ALLOC__COUNT);
	assert_int_equal(rec[0].opens, rec[1].opens);
	side_free(&c);
	side_free(&sv);
}

/* Rows of k whose path and path_remote are path and remote, and their status. */
static unsigned int count_rows(const struct rows *k, const char *path, const char *remote,
			       const char *status)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < k->n; i++)
		n += !strcmp(k->r[i].path, path) && !strcmp(k->r[i].path_remote, remote) &&
		     !strcmp(k->r[i].status, status);
	return n;
}

/*
 * A client with CLI and a server with SRV (srv_args when NULL) run to the end,
 * each side's rows kept; WOBBLE > 0 makes dmabuf that noisy, PAIRS > 1 says
 * the pair was launched with others. Both sides must exit 0; the caller frees
 * the sides.
 */
static void pair_run(char **cli, char **srv, double wobble, int pairs, struct side *c,
		     struct side *sv, struct rows *ck, struct rows *sk)
{
	if (wobble > 0) {
		rec[0].wobble_kind = GDR_MEM_DMABUF + 1;
		rec[0].wobble = wobble;
	}
	side_init(c, 1, &s2c, &c2s, cli);
	side_init(sv, 0, &c2s, &s2c, srv ? srv : srv_args);
	side_rows(c, ck);
	side_rows(sv, sk);
	if (pairs > 1)
		ck->sy.pairs = sk->sy.pairs = pairs;
	run_pair(c, sv);
	assert_int_equal(c->r, 0);
	assert_int_equal(sv->r, 0);
}

/*
 * Each side its own memory (issue 48): the client names the server's side
 * (--mem-remote), each combination is one entry of the rotation, each side
 * opens its own path of it, and the rows say both (path_remote the peer's).
 * A combination one side cannot open is skipped on both with that side named.
 */
static void test_per_side(void **state)
{
	struct side c, sv;
	struct rows ck, sk;
	char *cli[] = { "x",
			"--sizes",
			"64:128",
			"-n",
			"5",
			"--timeout",
			"2",
			"--mem",
			"host",
			"--mem-remote",
			"peermem,bounce,dmabuf",
			"--repeat",
			"1",
			"peer",
			NULL };

	(void)state;
	rec[1].skip_kind = GDR_MEM_DMABUF + 1; /* the server has no dmabuf */
	pair_run(cli, NULL, 0, 1, &c, &sv, &ck, &sk);
	assert_int_equal(c.s->npaths, 3);
	/* Each side opened its own path of each combination, knowing the peer's. */
	assert_int_equal(rec[0].opens, 3);
	assert_int_equal(rec[1].opens, 3);
	for (unsigned int i = 0; i < 3; i++) {
		unsigned int srv =
		    (unsigned int[]){ GDR_MEM_PEERMEM, GDR_MEM_BOUNCE, GDR_MEM_DMABUF }[i];

		assert_int_equal(rec[0].open_kind[i], GDR_MEM_HOST * 10 + srv);
		assert_int_equal(rec[1].open_kind[i], srv * 10 + GDR_MEM_HOST);
	}
	/* Two combinations ran, in turns: 2 sizes x 2 each side. */
	assert_int_equal(rec[0].nruns, 4);
	assert_int_equal(rec[1].nruns, 4);
	assert_int_equal(count_rows(&ck, "host", "peermem", "ok"), 2);
	assert_int_equal(count_rows(&ck, "host", "bounce", "ok"), 2);
	assert_int_equal(count_rows(&sk, "peermem", "host", "ok"), 2);
	assert_int_equal(count_rows(&sk, "bounce", "host", "ok"), 2);
	/* The one the server cannot run: skipped on both sides, the side named. */
	assert_int_equal(count_rows(&ck, "host", "dmabuf", "skipped"), 2);
	assert_int_equal(count_rows(&sk, "dmabuf", "host", "skipped"), 2);
	for (unsigned int i = 0; i < ck.n; i++)
		if (!strcmp(ck.r[i].status, "skipped"))
			assert_string_equal(ck.r[i].note, "server (remote): fake: dmabuf not here");
	for (unsigned int i = 0; i < sk.n; i++)
		if (!strcmp(sk.r[i].status, "skipped"))
			assert_string_equal(sk.r[i].note, "server (local): fake: dmabuf not here");
	side_free(&c);
	side_free(&sv);
}

/*
 * As perftest: the server's own --mem chooses its side, the client names
 * nothing. Every client path meets every server path; the ACK tells the
 * client which, and its rows say so.
 */
static void test_server_chooses(void **state)
{
	struct side c, sv;
	struct rows ck, sk;
	char *cli[] = { "x", "--sizes", "64:64",       "-n",   "5", "--timeout",
			"2", "--mem",	"host,bounce", "peer", NULL };
	char *srv[] = { "x", "--timeout", "2", "--mem", "peermem", NULL };

	(void)state;
	pair_run(cli, srv, 0, 1, &c, &sv, &ck, &sk);
	assert_int_equal(c.s->plan.sides, GDR_SIDES_SERVER);
	assert_int_equal(sv.s->plan.sides, GDR_SIDES_SERVER);
	assert_int_equal(count_rows(&ck, "host", "peermem", "ok"), 1);
	assert_int_equal(count_rows(&ck, "bounce", "peermem", "ok"), 1);
	assert_int_equal(count_rows(&sk, "peermem", "host", "ok"), 1);
	assert_int_equal(count_rows(&sk, "peermem", "bounce", "ok"), 1);
	assert_int_equal(ck.n, 2);
	side_free(&c);
	side_free(&sv);
}

/* Both name the server's side, differently: both stop, the message names both. */
static void test_both_name_server_side(void **state)
{
	struct side c, sv;
	char *cli[] = { "x", "--timeout", "2", "--mem-remote", "bounce", "peer", NULL };
	char *srv[] = { "x", "--timeout", "2", "--mem", "peermem,host", NULL };
	const char *want = "plan mismatch: the server's side: the client names bounce "
			   "(--mem-remote or --mem LOCAL:REMOTE), the server's --mem says "
			   "peermem,host";

	(void)state;
	side_init(&c, 1, &s2c, &c2s, cli);
	side_init(&sv, 0, &c2s, &s2c, srv);
	run_pair(&c, &sv);
	assert_int_equal(sv.r, -EINVAL);
	assert_non_null(strstr(sv.s->why, want));
	assert_int_equal(c.r, -EINVAL);
	assert_non_null(strstr(c.s->why, want));
	assert_int_equal(rec[0].opens + rec[1].opens, 0);
	side_free(&c);
	side_free(&sv);
}

/* A repeat that fails on the client: the server learns why from the DONE; both fail. */
static void test_failed_repeat(void **state)
{
	struct side c, sv;

	(void)state;
	side_init(&c, 1, &s2c, &c2s, cli_args);
	side_init(&sv, 0, &c2s, &s2c, srv_args);
	rec[0].fail_run = 3;
	run_pair(&c, &sv);
	assert_int_equal(c.r, -EIO);
	assert_non_null(strstr(c.s->why, "fake: run 2 failed"));
	assert_int_equal(sv.r, -EIO);
	assert_non_null(strstr(sv.s->why, "client: fake: run 2 failed"));
	side_free(&c);
	side_free(&sv);
}

/*
 * The latency tools take the same exchanges: START/ACK and DONE/RESULT per
 * repeat; the client keeps the samples and sends its percentiles.
 */
static void test_latency(void **state)
{
	struct side c, sv;
	const uint64_t want[] = { 64, 64, 128, 128 };
	char *cargs[] = { "x", "--sizes",   "64:128", "--repeat", "2", "-n",
			  "4", "--timeout", "2",      "peer",	  NULL };

	(void)state;
	side_init(&c, 1, &s2c, &c2s, cargs);
	side_init(&sv, 0, &c2s, &s2c, srv_args);
	c.o.latency = sv.o.latency = 1;
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	/* WRITE latency is a ping-pong: the server answers every repeat too, without samples. */
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rec[k].nlat, 4);
		for (unsigned int i = 0; i < 4; i++)
			assert_int_equal(rec[k].lat_size[i], want[i]);
		assert_int_equal(rec[k].nruns, 0);
	}
	assert_int_equal(rec[0].lat_with_samples, 4);
	assert_int_equal(rec[1].lat_with_samples, 0);
	assert_int_equal(c.end.sent[GDR_MSG_START], 4);
	assert_int_equal(c.end.sent[GDR_MSG_DONE], 4);
	assert_int_equal(sv.end.sent[GDR_MSG_RESULT], 4);
	/* The last size's two repeats are kept side by side: 2..5, twice. */
	assert_non_null(c.s->paths[0].lat);
	assert_true(c.s->paths[0].lat[4] == 2.0 && c.s->paths[0].lat[7] == 5.0);
	/* The destination half starts on a page of its own, on both sides: a side's source
	 * and destination never share a page (in one page: 1.06x ib_write_lat at 512 B..2 KiB). */
	for (int k = 0; k < 2; k++) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);

		assert_int_equal(rec[k].dst_len, 128);
		assert_int_equal(rec[k].src_len % page, 0);
		assert_true(rec[k].src_len >= 128);
	}
	side_free(&c);
	side_free(&sv);
}

/* A peer that takes the PLAN and never answers: the client gives up after --timeout. */
static void test_silent_peer(void **state)
{
	struct side c;
	struct gdr_msg m;
	char why[128];
	double t0;

	(void)state;
	char *args[] = { "x", "--timeout", "1", "peer", NULL };
	side_init(&c, 1, &s2c, &c2s, args);
	t0 = now_s();
	client_run(&c);
	assert_int_equal(c.r, -ETIMEDOUT);
	assert_true(now_s() - t0 < 10);
	assert_non_null(strstr(c.s->why, "within 1 s"));
	/* It had sent its plan, then nothing more. */
	struct end srv_end = { .in = &c2s, .out = &s2c };
	assert_int_equal(mem_recv(&srv_end, &m, 0.1, 0, why, sizeof(why)), 0);
	assert_int_equal(m.type, GDR_MSG_PLAN);
	assert_int_equal(rec[0].opens, 0);
	side_free(&c);
}

/* The server answers the PLAN with bytes that are no message, then with the wrong one. */
static void test_malformed(void **state)
{
	struct side c;
	uint8_t junk[16] = { 'G', 'D', 'R', 'X', 1, 0, 2, 0, 4, 0, 0, 0, 1, 2, 3, 4 };
	struct gdr_msg wrong = { .type = GDR_MSG_RESULT };
	uint8_t b[GDR_CTRL_MAX];
	int n;

	(void)state;
	side_init(&c, 1, &s2c, &c2s, cli_args);
	q_push_raw(&s2c, junk, sizeof(junk));
	client_run(&c);
	assert_true(c.r == -EPROTO || c.r == -EBADMSG);
	assert_int_equal(rec[0].opens, 0);
	side_free(&c);

	side_init(&c, 1, &s2c, &c2s, cli_args);
	n = gdr_msg_encode(&wrong, b, sizeof(b));
	assert_true(n > 0);
	q_push_raw(&s2c, b, (size_t)n);
	client_run(&c);
	assert_int_equal(c.r, -EPROTO);
	assert_non_null(strstr(c.s->why, "expected ACK from peer, got RESULT"));
	side_free(&c);
}

/*
 * A server thread fed by hand: c's plan (of args) sent to it, its ACK read;
 * then the test plays the client's messages itself.
 */
static void server_by_hand(struct side *c, struct side *sv, char **args, struct end *cli,
			   pthread_t *t)
{
	struct gdr_msg m;
	char why[256];

	side_init(c, 1, &s2c, &c2s, args);
	side_init(sv, 0, &c2s, &s2c, srv_args);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_PLAN;
	gdr_plan_from_opts(&c->o, 1, &m.u.plan);
	assert_int_equal(mem_send(cli, &m, why, sizeof(why)), 0);
	quiet();
	assert_int_equal(pthread_create(t, NULL, server_thread, sv), 0);
	assert_int_equal(mem_recv(cli, &m, 5, 0, why, sizeof(why)), 0);
	assert_int_equal(m.type, GDR_MSG_ACK);
}

/* A START for another size than the plan's next: the server refuses it by name. */
static void test_server_checks_start(void **state)
{
	struct side sv;
	struct side c; /* only its plan */
	struct end cli = { .in = &s2c, .out = &c2s };
	struct gdr_msg m;
	char why[256];
	pthread_t t;

	(void)state;
	server_by_hand(&c, &sv, cli_args, &cli, &t);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_BUF;
	m.u.buf.kind = GDR_MEM_HOST;
	m.u.buf.ok = 1;
	m.u.buf.nqps = 1;
	m.u.buf.qp[0].len = 1 << 20;
	assert_int_equal(mem_send(&cli, &m, why, sizeof(why)), 0);
	assert_int_equal(mem_recv(&cli, &m, 5, 0, why, sizeof(why)), 0);
	assert_int_equal(m.type, GDR_MSG_BUF);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_START;
	m.u.start.size = 128; /* the plan starts at 64 */
	assert_int_equal(mem_send(&cli, &m, why, sizeof(why)), 0);
	pthread_join(t, NULL);
	loud();
	assert_int_equal(sv.r, -EPROTO);
	assert_non_null(strstr(sv.s->why, "START for size 128 repeat 0 path 0, expected size 64"));
	/* It said so to the client before giving up. */
	assert_int_equal(mem_recv(&cli, &m, 5, 0, why, sizeof(why)), 0);
	assert_int_equal(m.type, GDR_MSG_ERROR);
	assert_int_equal(rec[1].nruns, 0);
	assert_int_equal(rec[1].opens, 1);
	side_free(&c);
	side_free(&sv);
}

/* The schedule alone: 4 paths x 3 repeats in turns (issue 38's order), then path by path. */
static void test_slot_order(void **state)
{
	const unsigned int turns[12] = { 0, 1, 2, 3, 1, 2, 3, 0, 2, 3, 0, 1 };
	struct gdr_slot sl;

	(void)state;
	for (unsigned int k = 0; k < 12; k++) {
		gdr_sess_slot(1, 4, 1, 3, k, &sl);
		assert_int_equal(sl.entry, turns[k]);
		assert_int_equal(sl.rep, k / 4);
		assert_int_equal(sl.size, 0);
		assert_int_equal(sl.pos, k % 4);
	}
	/* The turns go on across sizes: size 1's first round is the run's fourth. */
	gdr_sess_slot(1, 4, 2, 3, 12, &sl);
	assert_int_equal(sl.size, 1);
	assert_int_equal(sl.rep, 0);
	assert_int_equal(sl.entry, 3);
	for (unsigned int k = 0; k < 12; k++) {
		gdr_sess_slot(0, 4, 1, 3, k, &sl);
		assert_int_equal(sl.entry, k / 3);
		assert_int_equal(sl.rep, k % 3);
		assert_int_equal(sl.pos, k / 3);
	}
}

/* Rows of one size: does each start before every other one ends? */
static int rows_overlap(const struct rows *k, uint64_t size)
{
	double last_start = -1, first_end = 1e30;
	unsigned int n = 0;

	for (unsigned int i = 0; i < k->n; i++) {
		const struct gdr_result *r = &k->r[i];

		if (r->size_bytes != size || strcmp(r->status, "ok"))
			continue;
		assert_true(r->t_start_s >= 0 && r->t_end_s >= r->t_start_s);
		n++;
		if (r->t_start_s > last_start)
			last_start = r->t_start_s;
		if (r->t_end_s < first_end)
			first_end = r->t_end_s;
	}
	assert_true(n >= 2);
	return last_start < first_end;
}

/*
 * Paths in turns: 4 paths x 3 repeats at each of two sizes; the STARTs name
 * host, dmabuf, peermem, bounce, then dmabuf, peermem, bounce, host, ... and
 * the server runs them in that order. Every row carries its turn and times;
 * the rows of one size overlap in time on both sides.
 */
static void test_rotation(void **state)
{
	static char *cli[] = { "x", "--sizes",	 "64:128", "--repeat", "3", "-n",
			       "5", "--timeout", "2",	   "peer",     NULL };
	struct side c, sv;
	struct rows ck, sk;

	(void)state;
	rows_init(&c, &sv, &ck, &sk, cli);
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	assert_int_equal(c.end.nstart, 24);
	for (unsigned int k = 0; k < 24; k++) {
		unsigned int round = k / 4;

		assert_int_equal(c.end.start[k].path, (round + k % 4) % 4);
		assert_int_equal(c.end.start[k].repeat, round % 3);
		assert_int_equal(c.end.start[k].size, round < 3 ? 64 : 128);
	}
	/* Every BUF before the first START: 4 each way; every path held at once. */
	assert_int_equal(c.end.sent[GDR_MSG_BUF], 4);
	assert_int_equal(sv.end.sent[GDR_MSG_BUF], 4);
	assert_int_equal(rec[0].opens, 4);
	assert_int_equal(rec[1].opens, 4);
	assert_int_equal(rec[1].nruns, 24);
	struct rows *sides[2] = { &ck, &sk };
	for (int k = 0; k < 2; k++) {
		assert_int_equal(sides[k]->points, 24);
		assert_int_equal(sides[k]->n, 8);
		assert_true(rows_overlap(sides[k], 64));
		assert_true(rows_overlap(sides[k], 128));
		for (unsigned int i = 0; i < 8; i++) {
			const struct gdr_result *r = &sides[k]->r[i];
			static const char *const names[4] = { "host", "dmabuf", "peermem",
							      "bounce" };
			unsigned int entry = 0;

			while (strcmp(names[entry], r->path))
				entry++;
			/* Size 64's first round starts at host; size 128's (round 3) at bounce. */
			assert_int_equal(r->order, r->size_bytes == 64 ? entry : (entry + 1) % 4);
			assert_null(strstr(r->note, "path-major"));
		}
	}
	side_free(&c);
	side_free(&sv);
}

/* One size, two repeats: the server's peermem short of memory (test_path_major_fallback, ...). */
static char *one_size_args[] = { "x", "--sizes",   "64:64", "--repeat", "2", "-n",
				 "5", "--timeout", "2",	    "peer",	NULL };

/*
 * The server cannot hold every path at once (its peermem is short of memory
 * beside the others, yet fits alone): both sides fall back to path by path,
 * say so in every row, and no two paths' rows overlap in time.
 */
static void test_path_major_fallback(void **state)
{
	struct side c, sv;
	struct rows ck, sk;

	(void)state;
	rows_init(&c, &sv, &ck, &sk, one_size_args);
	rec[1].short_kind = GDR_MEM_PEERMEM + 1;
	rec[1].short_times = 1;
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	assert_int_equal(c.end.nstart, 8);
	for (unsigned int k = 0; k < 8; k++) {
		assert_int_equal(c.end.start[k].path, k / 2);
		assert_int_equal(c.end.start[k].repeat, k % 2);
	}
	/* Server: three opens together, the short one alone, then each path in its turn. */
	assert_int_equal(rec[1].opens, 8);
	assert_int_equal(rec[0].opens, 4);
	struct rows *sides[2] = { &ck, &sk };
	for (int k = 0; k < 2; k++) {
		assert_int_equal(sides[k]->n, 4);
		assert_false(rows_overlap(sides[k], 64));
		for (unsigned int i = 0; i < 4; i++) {
			const struct gdr_result *r = &sides[k]->r[i];

			assert_string_equal(r->status, "ok");
			assert_int_equal(r->order, i);
			assert_non_null(strstr(r->note, "path-major: the server could not hold "
							"every path's buffers at once"));
		}
	}
	side_free(&c);
	side_free(&sv);
}

/*
 * A path short of memory even alone is skipped, not a reason to give up the
 * turns: the others are opened again and still take turns; its rows say why.
 */
static void test_short_alone_skipped(void **state)
{
	struct side c, sv;
	struct rows ck, sk;

	(void)state;
	rows_init(&c, &sv, &ck, &sk, one_size_args);
	rec[1].short_kind = GDR_MEM_PEERMEM + 1;
	rec[1].short_times = 100;
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	assert_true(sv.s->held);
	assert_true(c.s->rotate && sv.s->rotate);
	/* host, dmabuf, peermem (short), peermem alone (short), then all four again. */
	assert_int_equal(rec[1].opens, 8);
	/* Three paths measured in turns, peermem's turns passed: 2 rounds of 3 STARTs. */
	assert_int_equal(c.end.nstart, 6);
	const unsigned int turns[6] = { 0, 1, 3, 1, 3, 0 };
	for (unsigned int k = 0; k < 6; k++)
		assert_int_equal(c.end.start[k].path, turns[k]);
	assert_int_equal(ck.points, 8);
	assert_true(rows_overlap(&ck, 64));
	unsigned int skipped = 0;
	for (unsigned int i = 0; i < ck.n; i++)
		if (!strcmp(ck.r[i].status, "skipped")) {
			skipped++;
			assert_string_equal(ck.r[i].path, "peermem");
			assert_non_null(strstr(ck.r[i].note, "server: fake: out of memory"));
			assert_true(ck.r[i].t_start_s < 0 && ck.r[i].order < 0);
		}
	assert_int_equal(skipped, 1);
	side_free(&c);
	side_free(&sv);
}

/* Latency takes turns too: the rows of one size overlap in time. */
static void test_latency_rotation(void **state)
{
	static char *cli[] = { "x", "--sizes",	 "64:64", "--repeat", "3", "-n",
			       "4", "--timeout", "2",	  "peer",     NULL };
	struct side c, sv;
	struct rows ck, sk;

	(void)state;
	rows_init(&c, &sv, &ck, &sk, cli);
	c.o.latency = sv.o.latency = 1;
	c.o.nmem = 2;
	c.o.mem[0] = GDR_MEM_HOST;
	c.o.mem[1] = GDR_MEM_BOUNCE;
	run_pair(&c, &sv);
	assert_int_equal(c.r, 0);
	assert_int_equal(sv.r, 0);
	assert_int_equal(c.end.nstart, 6);
	const unsigned int turns[6] = { 0, 1, 1, 0, 0, 1 };
	for (unsigned int k = 0; k < 6; k++)
		assert_int_equal(c.end.start[k].path, turns[k]);
	assert_int_equal(ck.n, 2);
	assert_true(rows_overlap(&ck, 64));
	assert_true(rows_overlap(&sk, 64));
	/* Each path keeps its own samples: host's three repeats, not bounce's. */
	assert_int_equal(rec[0].lat_with_samples, 6);
	assert_non_null(c.s->paths[0].lat);
	assert_non_null(c.s->paths[1].lat);
	side_free(&c);
	side_free(&sv);
}

/* ---- rounds until decided (issue 51) --------------------------------------------------- */

static char *round_cli[] = { "x", "--sizes", "64:128", "--mem", "host,dmabuf", "--repeat", "5:9",
			     "-n", "5", "--timeout", "2", "peer", NULL };

/* Both sides' rows of a run with rounds until decided, their sizes and rounds checked. */
static void check_round_rows(const struct rows *k, unsigned int rounds, const char *stop,
			     unsigned int looks)
{
	assert_int_equal(k->n, 4); /* 2 sizes x 2 paths */
	for (unsigned int i = 0; i < k->n; i++) {
		const struct gdr_result *r = &k->r[i];

		assert_int_equal(r->repeats, rounds);
		assert_int_equal(r->nrep, rounds);
		assert_int_equal(r->looks, looks);
		assert_string_equal(r->stop, stop);
		assert_int_equal(strlen(r->run_id), 16);
		assert_string_equal(r->run_id, k->r[0].run_id);
		for (unsigned int j = 0; j < rounds; j++) {
			assert_true(r->rep_bw_gbps[j] > 0);
			assert_true(r->rep_t_start_s[j] <= r->rep_t_end_s[j]);
			if (j)
				assert_true(r->rep_t_start_s[j] >= r->rep_t_end_s[j - 1]);
		}
	}
}

/*
 * Quiet paths, one the other's equal: every ratio decided at the first look
 * (round 5 of 5:9), a ROUND per size, both sides' rows say so with the
 * rule's K (looks 5, 7, 9: 3) and each round's numbers.
 */
static void test_rounds_decided(void **state)
{
	struct side c, sv;
	struct rows ck, sk;

	(void)state;
	pair_run(round_cli, NULL, 0, 1, &c, &sv, &ck, &sk);
	assert_int_equal(rec[0].nruns, 2 * 2 * 5);
	assert_int_equal(c.end.sent[GDR_MSG_ROUND], 2);
	assert_int_equal(c.end.sent[GDR_MSG_START], 20);
	check_round_rows(&ck, 5, "decided", 3);
	check_round_rows(&sk, 5, "decided", 3);
	assert_string_equal(ck.r[0].run_id, sk.r[0].run_id); /* one run, both sides */
	side_free(&c);
	side_free(&sv);
}

/* A path of 30 % noise: never decided, every look a ROUND, the rule's last round ends it. */
static void test_rounds_max(void **state)
{
	struct side c, sv;
	struct rows ck, sk;

	(void)state;
	pair_run(round_cli, NULL, 0.3, 1, &c, &sv, &ck, &sk);
	assert_int_equal(rec[0].nruns, 2 * 2 * 9);
	assert_int_equal(c.end.sent[GDR_MSG_ROUND], 2 * 3); /* rounds 5, 7 and 9 */
	check_round_rows(&ck, 9, "max rounds", 3);
	check_round_rows(&sk, 9, "max rounds", 3);
	side_free(&c);
	side_free(&sv);
}

/* --time-per-size spent: the first look ends each size, and the rows say why. */
static void test_rounds_budget(void **state)
{
	char *cli[] = { "x",	      "--sizes", "64:128", "--mem", "host,dmabuf", "--repeat", "5:9",
			"--time-per-size", "0.000001", "-n", "5", "--timeout", "2", "peer", NULL };
	struct side c, sv;
	struct rows ck, sk;

	(void)state;
	pair_run(cli, NULL, 0.3, 1, &c, &sv, &ck, &sk);
	check_round_rows(&ck, 5, "time budget", 3);
	check_round_rows(&sk, 5, "time budget", 3);
	side_free(&c);
	side_free(&sv);
}

/*
 * Pairs launched at once keep their rounds in step: the fewest of MIN:MAX,
 * fixed, no ROUND; and the default with two paths is rounds until decided
 * (5:40).
 */
static void test_rounds_launched(void **state)
{
	struct side c, sv;
	struct rows ck, sk;
	char *cli[] = { "x", "--sizes", "64:128", "--mem", "host,dmabuf", "-n", "5",
			"--timeout", "2", "peer", NULL };

	(void)state;
	pair_run(cli, NULL, 0, 2, &c, &sv, &ck, &sk);
	assert_int_equal(c.o.repeat_min, GDR_ROUNDS_MIN);
	assert_int_equal(c.o.repeat, GDR_ROUNDS_MAX);
	assert_int_equal(c.end.sent[GDR_MSG_ROUND], 0);
	assert_int_equal(rec[0].nruns, 2 * 2 * GDR_ROUNDS_MIN);
	check_round_rows(&ck, GDR_ROUNDS_MIN, "fixed", 1);
	check_round_rows(&sk, GDR_ROUNDS_MIN, "fixed", 1);
	side_free(&c);
	side_free(&sv);
}

/* The server takes a ROUND only where the plan has a look, for the size it is at. */
static void test_server_checks_round(void **state)
{
	struct side sv;
	struct side c; /* only its plan */
	struct end cli = { .in = &s2c, .out = &c2s };
	struct gdr_msg m;
	char why[256];
	pthread_t t;

	(void)state;
	server_by_hand(&c, &sv, round_cli, &cli, &t);
	for (uint8_t kind = GDR_MEM_HOST; kind <= GDR_MEM_DMABUF; kind++) {
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_BUF;
		m.u.buf.kind = kind;
		m.u.buf.ok = 1;
		m.u.buf.held = 1;
		m.u.buf.nqps = 1;
		m.u.buf.qp[0].len = 1 << 20;
		assert_int_equal(mem_send(&cli, &m, why, sizeof(why)), 0);
		assert_int_equal(mem_recv(&cli, &m, 5, 0, why, sizeof(why)), 0);
		assert_int_equal(m.type, GDR_MSG_BUF);
	}
	/* Five rounds of the first size, in turns, each repeat answered. */
	for (unsigned int k = 0; k < 10; k++) {
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_START;
		m.u.start.size = 64;
		m.u.start.repeat = (uint16_t)(k / 2);
		m.u.start.path = (uint8_t)((k / 2 + k % 2) % 2);
		assert_int_equal(mem_send(&cli, &m, why, sizeof(why)), 0);
		assert_int_equal(mem_recv(&cli, &m, 5, 0, why, sizeof(why)), 0);
		assert_int_equal(m.type, GDR_MSG_ACK);
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_DONE;
		m.u.meas.iters = 5;
		m.u.meas.bytes = 5 * 64;
		m.u.meas.elapsed_ns = 1000;
		assert_int_equal(mem_send(&cli, &m, why, sizeof(why)), 0);
		assert_int_equal(mem_recv(&cli, &m, 5, 0, why, sizeof(why)), 0);
		assert_int_equal(m.type, GDR_MSG_RESULT);
	}
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ROUND;
	m.u.round.size = 0;
	m.u.round.rounds = 4; /* the look was after round 5 */
	assert_int_equal(mem_send(&cli, &m, why, sizeof(why)), 0);
	pthread_join(t, NULL);
	loud();
	assert_int_equal(sv.r, -EPROTO);
	assert_non_null(strstr(sv.s->why, "ROUND for size 0 after 4 rounds (more), expected size 0 "
					  "after 5 of at most 9"));
	assert_int_equal(mem_recv(&cli, &m, 5, 0, why, sizeof(why)), 0);
	assert_int_equal(m.type, GDR_MSG_ERROR);
	side_free(&c);
	side_free(&sv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_size_loop, setup),
		cmocka_unit_test_setup(test_pinned_repeats, setup),
		cmocka_unit_test_setup(test_not_pinned, setup),
		cmocka_unit_test_setup(test_read_pinned_by_default, setup),
		cmocka_unit_test(test_pin_here),
		cmocka_unit_test_setup(test_skipped_path, setup),
		cmocka_unit_test_setup(test_gpu_alloc_in_plan, setup),
		cmocka_unit_test_setup(test_per_side, setup),
		cmocka_unit_test_setup(test_server_chooses, setup),
		cmocka_unit_test_setup(test_both_name_server_side, setup),
		cmocka_unit_test_setup(test_failed_repeat, setup),
		cmocka_unit_test_setup(test_read_pins_small_only, setup),
		cmocka_unit_test_setup(test_latency, setup),
		cmocka_unit_test_setup(test_silent_peer, setup),
		cmocka_unit_test_setup(test_malformed, setup),
		cmocka_unit_test_setup(test_server_checks_start, setup),
		cmocka_unit_test(test_slot_order),
		cmocka_unit_test_setup(test_rotation, setup),
		cmocka_unit_test_setup(test_path_major_fallback, setup),
		cmocka_unit_test_setup(test_short_alone_skipped, setup),
		cmocka_unit_test_setup(test_latency_rotation, setup),
		cmocka_unit_test_setup(test_rounds_decided, setup),
		cmocka_unit_test_setup(test_rounds_max, setup),
		cmocka_unit_test_setup(test_rounds_budget, setup),
		cmocka_unit_test_setup(test_rounds_launched, setup),
		cmocka_unit_test_setup(test_server_checks_round, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
