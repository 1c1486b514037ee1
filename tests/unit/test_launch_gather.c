#include "cmocka_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

static struct gdr_result row(const char *role, const char *path, uint64_t size, double bw,
			     const char *status, const char *note, unsigned int pair)
{
	struct gdr_result r;

	gdr_result_init(&r);
	snprintf(r.role, sizeof(r.role), "%s", role);
	snprintf(r.verb, sizeof(r.verb), "write");
	snprintf(r.path, sizeof(r.path), "%s", path);
	snprintf(r.path_remote, sizeof(r.path_remote), "%s", path);
	r.size_bytes = size;
	r.bw_avg_gbps = bw;
	snprintf(r.status, sizeof(r.status), "%s", status);
	snprintf(r.note, sizeof(r.note), "%s", note);
	snprintf(r.label, sizeof(r.label), "pair %u", pair);
	return r;
}

static void add(struct gdr_rank_rows *rr, struct gdr_result r)
{
	assert_int_equal(gdr_rows_add(rr, &r), 0);
}

/* Pack, then unpack: every row comes back field for field, with the status. */
static void test_pack_roundtrip(void **state)
{
	struct gdr_rank_rows a = { 0 }, b;
	void *buf;
	size_t len;
	char why[256];

	(void)state;
	for (unsigned int i = 0; i < 100; i++)
		add(&a, row("client", "host", 4096u << (i % 3), i * 1.5, "ok", "", 0));
	a.status = 1;
	assert_int_equal(gdr_rows_pack(&a, &buf, &len), 0);
	assert_int_equal(gdr_rows_unpack(buf, len, &b, why, sizeof(why)), 0);
	assert_int_equal(b.nrows, 100);
	assert_int_equal(b.status, 1);
	assert_int_equal(b.lost, 0);
	for (unsigned int i = 0; i < 100; i++)
		assert_memory_equal(&a.rows[i], &b.rows[i], sizeof(a.rows[i]));
	free(buf);
	gdr_rows_free(&a);
	gdr_rows_free(&b);
}

static void test_pack_empty(void **state)
{
	struct gdr_rank_rows a = { 0 }, b;
	void *buf;
	size_t len;
	char why[256];

	(void)state;
	assert_int_equal(gdr_rows_pack(&a, &buf, &len), 0);
	assert_int_equal(gdr_rows_unpack(buf, len, &b, why, sizeof(why)), 0);
	assert_int_equal(b.nrows, 0);
	assert_int_equal(b.status, 0);
	free(buf);
}

/* What is not one of our buffers is refused with a reason, never read as rows. */
static void test_unpack_refuses(void **state)
{
	struct gdr_rank_rows a = { 0 }, b;
	char *buf;
	void *p;
	size_t len;
	char why[256];

	(void)state;
	add(&a, row("client", "host", 4096, 1, "ok", "", 0));
	assert_int_equal(gdr_rows_pack(&a, &p, &len), 0);
	buf = p;

	why[0] = '\0';
	assert_int_equal(gdr_rows_unpack(buf, 0, &b, why, sizeof(why)), -EPROTO);
	assert_int_equal(b.status, -1);
	assert_non_null(strstr(why, "shorter than a header"));
	/* Cut short by one byte, or one byte too long. */
	assert_int_equal(gdr_rows_unpack(buf, len - 1, &b, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "do not hold the 1 rows"));
	buf = realloc(buf, len + 1);
	assert_int_equal(gdr_rows_unpack(buf, len + 1, &b, why, sizeof(why)), -EPROTO);
	/* Another build: the version string sits after the 8-byte magic. */
	buf[8] = 'X';
	assert_int_equal(gdr_rows_unpack(buf, len, &b, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "run the same build on every node"));
	buf[0] = 'X';
	assert_int_equal(gdr_rows_unpack(buf, len, &b, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "not a gdrperf row buffer"));
	free(buf);
	gdr_rows_free(&a);
}

/* A string that fills its field on the wire ends inside it once unpacked. */
static void test_unpack_terminates(void **state)
{
	struct gdr_rank_rows a = { 0 }, b;
	struct gdr_result r = row("client", "host", 4096, 1, "ok", "", 0);
	void *buf;
	size_t len;
	char why[256];

	(void)state;
	memset(r.note, 'n', sizeof(r.note));
	memset(r.label, 'l', sizeof(r.label));
	memset(r.verb, 'v', sizeof(r.verb));
	add(&a, r);
	assert_int_equal(gdr_rows_pack(&a, &buf, &len), 0);
	assert_int_equal(gdr_rows_unpack(buf, len, &b, why, sizeof(why)), 0);
	assert_int_equal(strlen(b.rows[0].note), sizeof(r.note) - 1);
	assert_int_equal(strlen(b.rows[0].label), sizeof(r.label) - 1);
	assert_int_equal(strlen(b.rows[0].verb), sizeof(r.verb) - 1);
	free(buf);
	gdr_rows_free(&a);
	gdr_rows_free(&b);
}

static const struct gdr_agg *line(const struct gdr_agg *l, unsigned int n, const char *path,
				  uint64_t size)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(l[i].path, path) && l[i].size_bytes == size)
			return &l[i];
	fail_msg("no aggregate line for %s %llu", path, (unsigned long long)size);
	return NULL;
}

/*
 * Two pairs: ranks 0 and 1 serve, 2 and 3 are their clients. The clients'
 * rows count (the servers' bandwidth is deliberately different), a skipped or
 * failed pair is left out and named with its reason.
 */
static void test_aggregate(void **state)
{
	struct gdr_rank_rows r[4] = { { 0 } };
	struct gdr_agg *l;
	const struct gdr_agg *a;
	unsigned int n;

	(void)state;
	add(&r[0], row("server", "host", 4096, 99, "ok", "", 0));
	add(&r[0], row("server", "dmabuf", 4096, 0, "skipped", "no DMA-BUF", 0));
	add(&r[0], row("server", "bounce", 4096, 77, "ok", "", 0));
	add(&r[1], row("server", "host", 4096, 98, "ok", "", 1));
	add(&r[1], row("server", "dmabuf", 4096, 0, "skipped", "no DMA-BUF", 1));
	add(&r[1], row("server", "bounce", 4096, 0, "failed", "mismatch", 1));
	add(&r[2], row("client", "host", 4096, 10.5, "ok", "", 0));
	add(&r[2], row("client", "dmabuf", 4096, 0, "skipped", "no DMA-BUF", 0));
	add(&r[2], row("client", "bounce", 4096, 4.25, "ok", "", 0));
	add(&r[3], row("client", "host", 4096, 11.5, "ok", "", 1));
	add(&r[3], row("client", "dmabuf", 4096, 0, "skipped", "no DMA-BUF", 1));
	add(&r[3], row("client", "bounce", 4096, 0, "failed", "mismatch", 1));
	/* Only the server of pair 1 has a row for this size: it counts for its pair. */
	add(&r[1], row("server", "host", 8192, 3, "ok", "", 1));

	assert_int_equal(gdr_rows_aggregate(r, 4, &l, &n), 0);
	assert_int_equal(n, 4);
	/* First appearance order: rank 0's rows first. */
	assert_string_equal(l[0].path, "host");
	assert_string_equal(l[1].path, "dmabuf");
	assert_string_equal(l[2].path, "bounce");

	a = line(l, n, "host", 4096);
	assert_float_equal(a->total_gbps, 22.0, 1e-9);
	assert_int_equal(a->npairs, 2);
	assert_string_equal(a->left_out, "");

	a = line(l, n, "dmabuf", 4096);
	assert_int_equal(a->npairs, 0);
	assert_float_equal(a->total_gbps, 0, 0);
	assert_string_equal(a->left_out,
			    "pair 0: skipped (no DMA-BUF); pair 1: skipped (no DMA-BUF)");

	a = line(l, n, "bounce", 4096);
	assert_int_equal(a->npairs, 1);
	assert_float_equal(a->total_gbps, 4.25, 1e-9);
	assert_string_equal(a->left_out, "pair 1: failed (mismatch)");

	a = line(l, n, "host", 8192);
	assert_int_equal(a->npairs, 1);
	assert_float_equal(a->total_gbps, 3, 1e-9);
	assert_string_equal(a->left_out, "pair 0: no row");
	free(l);
	for (int i = 0; i < 4; i++)
		gdr_rows_free(&r[i]);
}

/* A pair whose client failed before measuring: named, with the failure, not summed. */
static void test_aggregate_failed_rank(void **state)
{
	struct gdr_rank_rows r[4] = { { 0 } };
	struct gdr_agg *l;
	unsigned int n;

	(void)state;
	add(&r[2], row("client", "host", 65536, 7, "ok", "", 0));
	r[3].status = 1;
	assert_int_equal(gdr_rows_aggregate(r, 4, &l, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(l[0].npairs, 1);
	assert_float_equal(l[0].total_gbps, 7, 1e-9);
	assert_string_equal(l[0].left_out, "pair 1: no row (a rank failed)");
	free(l);
	gdr_rows_free(&r[2]);
	assert_int_equal(gdr_rows_aggregate(r, 3, &l, &n), -EINVAL);
}

/* Rank 0's printout: each pair's rows under its own heading, then the sums. */
static void test_print(void **state)
{
	struct gdr_rank_rows r[2] = { { 0 } };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	add(&r[0], row("server", "host", 4096, 2, "ok", "", 0));
	add(&r[1], row("client", "host", 4096, 2.5, "ok", "", 0));
	add(&r[1], row("client", "dmabuf", 4096, 0, "skipped", "no DMA-BUF", 0));
	gdr_rows_print(f, r, 2, 1);
	fclose(f);
	assert_non_null(strstr(text, "gather: rank 0 has the rows of all 2 ranks (1 pair(s))\n"));
	assert_non_null(strstr(text, "pair 0 server (rank 0): 1 row(s)\n"));
	assert_non_null(strstr(text, "pair 0 client (rank 1): 2 row(s)\n"));
	assert_non_null(strstr(text, "aggregate: node to node, 1 pair(s) at once"));
	assert_non_null(strstr(text, " write  host     4096       2.500            1/1    \n"));
	assert_non_null(
	    strstr(text, " write  dmabuf   4096       -                0/1    pair 0: skipped"));
	free(text);
	gdr_rows_free(&r[0]);
	gdr_rows_free(&r[1]);
}

/* A row of one side of a per-side combination (issue 48): its own path, the peer's. */
static struct gdr_result side_row(const char *role, const char *path, const char *remote, double bw)
{
	struct gdr_result r = row(role, path, 4096, bw, "ok", "", 0);

	snprintf(r.path_remote, sizeof(r.path_remote), "%s", remote);
	return r;
}

/*
 * Each side its own memory: a line per combination, the client's path then
 * the server's (a server row's own path is the server's), host:peermem and
 * host:host apart; the table's first column path:remote.
 */
static void test_aggregate_per_side(void **state)
{
	struct gdr_rank_rows r[2] = { { 0 } };
	struct gdr_agg *l;
	unsigned int n;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	add(&r[0], side_row("server", "peermem", "host", 9));
	add(&r[0], side_row("server", "host", "host", 9));
	add(&r[1], side_row("client", "host", "peermem", 1.5));
	add(&r[1], side_row("client", "host", "host", 2.5));
	assert_int_equal(gdr_rows_aggregate(r, 2, &l, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(l[0].path, "host");
	assert_string_equal(l[0].path_server, "peermem");
	assert_true(l[0].total_gbps == 1.5 && l[0].npairs == 1);
	assert_string_equal(l[1].path_server, "host");
	assert_true(l[1].total_gbps == 2.5 && l[1].npairs == 1);
	free(l);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	gdr_rows_print(f, r, 2, 1);
	fclose(f);
	assert_non_null(strstr(text, " path:remote     verb "));
	assert_non_null(strstr(text, " peermem:host    write  4096 "));
	assert_non_null(strstr(text, " write  host:peermem 4096       1.500            1/1    \n"));
	assert_non_null(strstr(text, " write  host     4096       2.500            1/1    \n"));
	free(text);
	gdr_rows_free(&r[0]);
	gdr_rows_free(&r[1]);
}

/* Without MPI the gather says so instead of pretending; with it, it is there. */
static void test_no_mpi(void **state)
{
	char why[128] = "", *all = (char *)1;
	int lens[2], v = 0;

	(void)state;
#ifdef HAVE_MPI
	assert_int_equal(gdr_mpi_available(), 1);
	(void)why;
	(void)all;
	(void)lens;
	(void)v;
	return;
#endif
	assert_int_equal(gdr_mpi_gather(NULL, "x", 1, &all, lens, 1, why, sizeof(why)), -ENOSYS);
	assert_null(all);
	assert_string_equal(why, "built without MPI");
	assert_int_equal(gdr_mpi_bcast_int(NULL, &v, 1, why, sizeof(why)), -ENOSYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pack_roundtrip),
		cmocka_unit_test(test_pack_empty),
		cmocka_unit_test(test_unpack_refuses),
		cmocka_unit_test(test_unpack_terminates),
		cmocka_unit_test(test_aggregate),
		cmocka_unit_test(test_aggregate_failed_rank),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_no_mpi),
		cmocka_unit_test(test_aggregate_per_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
