/*
 * The sweep's channel (sweep_chan.c) between real processes on loopback:
 * rank 0 is this process, the other ranks are forked children that report
 * through their exit status. Every case is bounded by short timeouts, and
 * the cases where a rank dies check that rank 0 notices well before them.
 */
#include "cmocka_common.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep_chan.h"
#include "util.h"

#define M 3

/* A TCP port nobody listens on now (the kernel's pick, released). */
static unsigned int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned int port;

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

enum child_plan { LIVE, DIE_AFTER_JOIN, ALONE };

/* Rank `rank`'s life: 0 when everything it saw was as expected. */
static int child(unsigned int rank, unsigned int port, enum child_plan plan, int dead_rank)
{
	struct gdr_chan_cfg cfg = {
		.rank = rank, .m = M, .host = "127.0.0.1", .port = port, .timeout = 10
	};
	char names[M][GDR_CHAN_NAME_MAX], addrs[M][GDR_CHAN_NAME_MAX], name[16], why[512];
	unsigned char alive[M];
	struct gdr_chan *c;
	char **bufs = NULL;
	size_t lens[M];
	int v = -1, r;

	snprintf(name, sizeof(name), "node-%u", rank);
	if (gdr_chan_join(&c, &cfg, name, "10.0.0.9", names, addrs, alive, why, sizeof(why)))
		return 10;
	if (strcmp(names[0], "node-0") || strcmp(addrs[0], "10.0.0.0") || !alive[0])
		return 11;
	if (plan == DIE_AFTER_JOIN)
		_exit(0); /* the socket closes as a dead process's does */
	r = gdr_chan_round(c, 0, 5, alive, why, sizeof(why));
	if (plan == ALONE) /* rank 0 closed the channel: the round must fail */
		return r ? 0 : 12;
	if (r)
		return 13;
	if (dead_rank >= 0 && alive[dead_rank])
		return 14;
	if (gdr_chan_round(c, 1, 5, alive, why, sizeof(why)))
		return 15;
	if (gdr_chan_gather(c, name, strlen(name) + 1, &bufs, lens, alive, 5, why, sizeof(why)) ||
	    bufs)
		return 16;
	if (gdr_chan_verdict(c, &v, 5, why, sizeof(why)) || v != 7)
		return 17;
	gdr_chan_close(&c);
	gdr_chan_close(&c); /* idempotent */
	return 0;
}

static pid_t spawn(unsigned int rank, unsigned int port, enum child_plan plan, int dead_rank)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0)
		_exit(child(rank, port, plan, dead_rank));
	return p;
}

static int reap(pid_t p)
{
	int st = 0;

	assert_int_equal(waitpid(p, &st, 0), p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static struct gdr_chan *rank0(unsigned int port, double timeout, char (*names)[GDR_CHAN_NAME_MAX],
			      char (*addrs)[GDR_CHAN_NAME_MAX], unsigned char *alive)
{
	struct gdr_chan_cfg cfg = { .rank = 0, .m = M, .port = port, .timeout = timeout };
	struct gdr_chan *c = NULL;
	char why[512];

	assert_int_equal(
	    gdr_chan_join(&c, &cfg, "node-0", "10.0.0.0", names, addrs, alive, why, sizeof(why)),
	    0);
	return c;
}

/* Every rank joins, two rounds, the gather and the verdict. */
static void test_all_live(void **state)
{
	unsigned int port = free_port();
	char names[M][GDR_CHAN_NAME_MAX], addrs[M][GDR_CHAN_NAME_MAX], why[512];
	unsigned char alive[M];
	pid_t p1 = spawn(1, port, LIVE, -1), p2 = spawn(2, port, LIVE, -1);
	struct gdr_chan *c = rank0(port, 10, names, addrs, alive);
	char **bufs = NULL;
	size_t lens[M];
	int v = 7;

	(void)state;
	assert_string_equal(names[1], "node-1");
	assert_string_equal(names[2], "node-2");
	assert_string_equal(addrs[2], "10.0.0.9");
	assert_memory_equal(alive, "\1\1\1", M);
	assert_int_equal(gdr_chan_round(c, 0, 5, alive, why, sizeof(why)), 0);
	assert_int_equal(gdr_chan_round(c, 1, 5, alive, why, sizeof(why)), 0);
	assert_memory_equal(alive, "\1\1\1", M);
	assert_int_equal(gdr_chan_gather(c, "mine", 5, &bufs, lens, alive, 5, why, sizeof(why)), 0);
	assert_non_null(bufs);
	assert_string_equal(bufs[0], "mine");
	assert_string_equal(bufs[1], "node-1");
	assert_string_equal(bufs[2], "node-2");
	assert_int_equal(lens[2], 7);
	for (unsigned int k = 0; k < M; k++)
		free(bufs[k]);
	free(bufs);
	assert_int_equal(gdr_chan_verdict(c, &v, 5, why, sizeof(why)), 0);
	gdr_chan_close(&c);
	assert_int_equal(reap(p1), 0);
	assert_int_equal(reap(p2), 0);
}

/*
 * Rank 2's process ends after joining: rank 0 drops it at the first round, at
 * once (not after the round's bound), rank 1 hears it, and the sweep ends
 * with the rows of the two that are left.
 */
static void test_dead_rank(void **state)
{
	unsigned int port = free_port();
	char names[M][GDR_CHAN_NAME_MAX], addrs[M][GDR_CHAN_NAME_MAX], why[512];
	unsigned char alive[M];
	pid_t p1 = spawn(1, port, LIVE, 2), p2 = spawn(2, port, DIE_AFTER_JOIN, -1);
	struct gdr_chan *c = rank0(port, 10, names, addrs, alive);
	char **bufs = NULL;
	size_t lens[M];
	double t0;
	int v = 7;

	(void)state;
	assert_memory_equal(alive, "\1\1\1", M);
	assert_int_equal(reap(p2), 0);
	t0 = gdr_now_s();
	assert_int_equal(gdr_chan_round(c, 0, 30, alive, why, sizeof(why)), 0);
	assert_true(gdr_now_s() - t0 < 10);
	assert_memory_equal(alive, "\1\1\0", M);
	assert_int_equal(gdr_chan_round(c, 1, 5, alive, why, sizeof(why)), 0);
	assert_int_equal(gdr_chan_gather(c, "mine", 5, &bufs, lens, alive, 5, why, sizeof(why)), 0);
	assert_string_equal(bufs[1], "node-1");
	assert_null(bufs[2]);
	assert_int_equal(lens[2], 0);
	for (unsigned int k = 0; k < M; k++)
		free(bufs[k]);
	free(bufs);
	assert_int_equal(gdr_chan_verdict(c, &v, 5, why, sizeof(why)), 0);
	gdr_chan_close(&c);
	assert_int_equal(reap(p1), 0);
}

/* Rank 2 never comes: it is named "rank 2" with why, and rank 1 hears it. */
static void test_never_joins(void **state)
{
	unsigned int port = free_port();
	char names[M][GDR_CHAN_NAME_MAX], addrs[M][GDR_CHAN_NAME_MAX], why[512];
	unsigned char alive[M];
	pid_t p1 = spawn(1, port, LIVE, 2);
	struct gdr_chan *c = rank0(port, 1, names, addrs, alive);
	char **bufs = NULL;
	size_t lens[M];
	int v = 7;

	(void)state;
	assert_memory_equal(alive, "\1\1\0", M);
	assert_string_equal(names[2], "rank 2");
	assert_true(addrs[2][0] == '!');
	assert_int_equal(gdr_chan_round(c, 0, 5, alive, why, sizeof(why)), 0);
	assert_int_equal(gdr_chan_round(c, 1, 5, alive, why, sizeof(why)), 0);
	assert_int_equal(gdr_chan_gather(c, "mine", 5, &bufs, lens, alive, 5, why, sizeof(why)), 0);
	for (unsigned int k = 0; k < M; k++)
		free(bufs[k]);
	free(bufs);
	assert_int_equal(gdr_chan_verdict(c, &v, 5, why, sizeof(why)), 0);
	gdr_chan_close(&c);
	assert_int_equal(reap(p1), 0);
}

/* Rank 0 goes away after the join: the others' next round fails, soon. */
static void test_lost_rank0(void **state)
{
	unsigned int port = free_port();
	char names[M][GDR_CHAN_NAME_MAX], addrs[M][GDR_CHAN_NAME_MAX];
	unsigned char alive[M];
	pid_t p1 = spawn(1, port, ALONE, -1), p2 = spawn(2, port, ALONE, -1);
	struct gdr_chan *c = rank0(port, 10, names, addrs, alive);
	double t0 = gdr_now_s();

	(void)state;
	gdr_chan_close(&c);
	assert_null(c);
	assert_int_equal(reap(p1), 0);
	assert_int_equal(reap(p2), 0);
	assert_true(gdr_now_s() - t0 < 5);
}

/* A stranger on the port is closed; the sweep's ranks still join. */
static void test_stranger(void **state)
{
	unsigned int port = free_port();
	char names[M][GDR_CHAN_NAME_MAX], addrs[M][GDR_CHAN_NAME_MAX], why[512];
	unsigned char alive[M];
	pid_t stranger = fork();
	pid_t p1, p2;
	struct gdr_chan *c;
	char **bufs = NULL;
	size_t lens[M];
	int v = 7;

	(void)state;
	assert_true(stranger >= 0);
	if (stranger == 0) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		for (int i = 0; i < 100; i++) {
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
				break;
			close(fd);
			fd = socket(AF_INET, SOCK_STREAM, 0);
			usleep(50000);
		}
		if (write(fd, "GET / HTTP/1.0\r\n\r\n", 18) != 18)
			_exit(1);
		_exit(0);
	}
	p1 = spawn(1, port, LIVE, -1);
	p2 = spawn(2, port, LIVE, -1);
	c = rank0(port, 10, names, addrs, alive);
	assert_memory_equal(alive, "\1\1\1", M);
	assert_int_equal(gdr_chan_round(c, 0, 5, alive, why, sizeof(why)), 0);
	assert_int_equal(gdr_chan_round(c, 1, 5, alive, why, sizeof(why)), 0);
	assert_int_equal(gdr_chan_gather(c, "mine", 5, &bufs, lens, alive, 5, why, sizeof(why)), 0);
	for (unsigned int k = 0; k < M; k++)
		free(bufs[k]);
	free(bufs);
	assert_int_equal(gdr_chan_verdict(c, &v, 5, why, sizeof(why)), 0);
	gdr_chan_close(&c);
	assert_int_equal(reap(p1), 0);
	assert_int_equal(reap(p2), 0);
	(void)reap(stranger);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_live),    cmocka_unit_test(test_dead_rank),
		cmocka_unit_test(test_never_joins), cmocka_unit_test(test_lost_rank0),
		cmocka_unit_test(test_stranger),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
