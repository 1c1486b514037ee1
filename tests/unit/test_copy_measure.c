/*
 * gdr_doctor --measure's arithmetic and its run on the fake driver
 * (common/mem/copy_measure.c): GB/s from bytes and time, the bounce copy
 * ceiling as min(D2H, H2D) at a chunk, a stand-in's known copy rate read
 * back, and the source line that says the figures are not a GPU's; the
 * bench's bounce ceiling (ceiling.c: min(NIC, copy), Gb/s against GB/s, the
 * row note) and its short measurement at one chunk (gdr_copy_measure_chunk).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "ceiling.h"
#include "copy_measure.h"
#include "session_int.h"

static void test_arithmetic(void **state)
{
	struct gdr_copy_table t;

	(void)state;
	assert_true(fabs(gdr_copy_gbps(1000000000ull, 1000000000ull) - 1.0) < 1e-12);
	/* 1 GiB in 20 ms: 53.7 GB/s (1e9 B/s, as the H200 table). */
	assert_true(fabs(gdr_copy_gbps(1ull << 30, 20000000ull) - 53.687) < 0.001);
	assert_true(isnan(gdr_copy_gbps(4096, 0)));
	gdr_copy_table_init(&t, 1ull << 30, 3);
	assert_int_equal(t.chunk[0], GDR_BOUNCE_CHUNK_SM);
	assert_int_equal(t.chunk[1], GDR_BOUNCE_CHUNK_CAP);
	assert_int_equal(t.chunk[2], 64ull << 20);
	assert_true(isnan(gdr_copy_ceiling(&t, 0, GDR_BOUNCE_CHUNK_CAP)));
	/* The H200's 4 MiB row: CE 53.6 / 51.7, SM 50.9 / 48.7: the ceiling is the slower way. */
	t.gbps[0][0][1] = 53.6;
	t.gbps[0][1][1] = 51.7;
	t.gbps[1][0][1] = 50.9;
	assert_true(isnan(gdr_copy_ceiling(&t, 1, GDR_BOUNCE_CHUNK_CAP)));
	t.gbps[1][1][1] = 48.7;
	assert_true(fabs(gdr_copy_ceiling(&t, 0, GDR_BOUNCE_CHUNK_CAP) - 51.7) < 1e-9);
	assert_true(fabs(gdr_copy_ceiling(&t, 1, GDR_BOUNCE_CHUNK_CAP) - 48.7) < 1e-9);
	/* A chunk the table has no row for: unknown, never a neighbour's figure. */
	assert_true(isnan(gdr_copy_ceiling(&t, 0, 2ull << 20)));
}

/* A bounce row's ceiling as the bench computes it (gdr_ceiling_bounce). */
static struct gdr_bounce_ceiling bounce_case(double nic, const char *limit, double d2h, double h2d)
{
	struct gdr_bounce_ceiling b = {
		.nic = { .gbps = nic, .limit = limit },
		.links_gbps = 252.1,
		.d2h = d2h,
		.h2d = h2d,
		.chunk = 1ull << 20,
		.copy = "ce",
		.why = "",
	};
	return b;
}

static void test_bounce_ceiling(void **state)
{
	struct gdr_bounce_ceiling b;
	char note[256];

	(void)state;
	/*
	 * The H200 at 1 MiB chunks (CE): D2H 50.4, H2D 46.9 GB/s. The slower way
	 * decides, in Gb/s: 46.9 x 8 = 375.2, below a 400 Gb/s port.
	 */
	b = bounce_case(400, "port", 50.4, 46.9);
	assert_true(fabs(gdr_ceiling_bounce(&b, note, sizeof(note)) - 375.2) < 1e-9);
	assert_string_equal(note, "ceiling 375.2 Gb/s, copy-bound (copy 375.2 = H2D 46.9 GB/s at "
				  "1 MiB chunks, ce, measured now; port 400.0)");
	/* The same copy behind a 200 Gb/s port: the port decides, the copy is said. */
	b = bounce_case(200, "port", 50.4, 46.9);
	assert_true(fabs(gdr_ceiling_bounce(&b, note, sizeof(note)) - 200) < 1e-9);
	assert_string_equal(note, "ceiling 200.0 Gb/s, port-bound (port 200.0; copy 375.2 = H2D "
				  "46.9 GB/s at 1 MiB chunks, ce, measured now)");
	/* D2H the slower way, the NIC's PCIe link the NIC side's bound, sm with its blocks. */
	b = bounce_case(252.1, "NIC PCIe", 20.0, 30.0);
	b.copy = "sm";
	b.blocks = 2;
	b.chunk = 512 << 10;
	assert_true(fabs(gdr_ceiling_bounce(&b, note, sizeof(note)) - 160) < 1e-9);
	assert_string_equal(note, "ceiling 160.0 Gb/s, copy-bound (copy 160.0 = D2H 20 GB/s at "
				  "512 KiB chunks, sm, 2 blocks, measured now; NIC PCIe 252.1)");
	/* 10 Gb/s (rxe) against 1.25 GB/s = 10 Gb/s exactly: the NIC is not beaten, it decides. */
	b = bounce_case(10, "port", 1.25, 1.25);
	b.stand_in = 1;
	b.chunk = 65536;
	assert_true(fabs(gdr_ceiling_bounce(&b, note, sizeof(note)) - 10) < 1e-9);
	assert_string_equal(note,
			    "ceiling 10.0 Gb/s, port-bound (port 10.0; copy 10.0 = D2H 1.25 "
			    "GB/s at 64 KiB chunks, ce, fake driver: a CPU memcpy, not a GPU)");
	/* A stand-in's slow copy decides as a GPU's would, and says whose it is. */
	b = bounce_case(10, "port", 0.5, 0.6);
	b.stand_in = 1;
	assert_true(fabs(gdr_ceiling_bounce(&b, note, sizeof(note)) - 4) < 1e-9);
	assert_non_null(strstr(note, "copy-bound (copy 4.0 = D2H 0.5 GB/s"));
	assert_non_null(strstr(note, "fake driver: a CPU memcpy, not a GPU; port 10.0)"));
	/* No copy figure (one way or both): the links' ceiling, and why. */
	b = bounce_case(200, "port", NAN, 46.9);
	b.why = "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY";
	assert_true(fabs(gdr_ceiling_bounce(&b, note, sizeof(note)) - 252.1) < 1e-9);
	assert_string_equal(note, "copy rate not measured (cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY): "
				  "ceiling from the links only");
	b = bounce_case(200, "port", 0, 0);
	b.links_gbps = 0;
	assert_true(gdr_ceiling_bounce(&b, note, sizeof(note)) == 0);
	/* The NIC side unknown: no ceiling, even with a copy figure (never half a minimum). */
	b = bounce_case(0, "", 50.4, 46.9);
	assert_true(gdr_ceiling_bounce(&b, note, sizeof(note)) == 0);
	assert_string_equal(note,
			    "ceiling unknown: NIC side unknown (copy 375.2 = H2D 46.9 GB/s at "
			    "1 MiB chunks, ce, measured now)");
}

/* The short measurement's size: 32 MiB a way, 2 to 64 copies of the chunk. */
static void test_chunk_bytes(void **state)
{
	(void)state;
	assert_int_equal(gdr_copy_chunk_bytes(4096), 64 * 4096);
	assert_int_equal(gdr_copy_chunk_bytes(512 << 10), 32ull << 20);
	assert_int_equal(gdr_copy_chunk_bytes(4ull << 20), 32ull << 20);
	assert_int_equal(gdr_copy_chunk_bytes(1ull << 30), 2ull << 30);
	assert_int_equal(gdr_copy_chunk_bytes(0), 0);
}

#ifdef HAVE_CUDA

#include "fake_cuda_env.h"

/* One chunk on the fake at 8 Gb/s: both ways measured, at or under 1 GB/s. */
static void chunk_ok(struct fake_gpu *f, int mode, unsigned int blocks, uint64_t chunk)
{
	double g[2];
	char why[256] = "";

	if (gdr_copy_measure_chunk(f->cu, mode, blocks, chunk, g, why, sizeof(why)))
		fail_msg("mode %d chunk %llu: %s", mode, (unsigned long long)chunk, why);
	for (int d = 0; d < 2; d++)
		if (!(g[d] > 0.001 && g[d] <= 1.05))
			fail_msg("mode %d way %d: %.3f GB/s, <= 1 expected", mode, d, g[d]);
}

/* With the fake's entry point fn failing (NULL: none): no figure, and why names want. */
static void chunk_fails(const char *fn, int mode, unsigned int blocks, const char *want)
{
	struct fake_gpu f;
	double g[2];
	char why[256] = "";

	if (fn)
		setenv("GDRPERF_FAKE_CUDA_FAIL", fn, 1);
	fake_gpu_up(&f, "/");
	assert_true(gdr_copy_measure_chunk(f.cu, mode, blocks, 65536, g, why, sizeof(why)) < 0);
	assert_true(isnan(g[0]) && isnan(g[1]));
	if (!strstr(why, want))
		fail_msg("'%s' does not say '%s'", why, want);
	fake_gpu_down(&f);
	unsetenv("GDRPERF_FAKE_CUDA_FAIL");
}

/* The bench's measurement at one chunk on the fake at a set rate, and its failures. */
static void test_fake_chunk(void **state)
{
	struct fake_gpu f;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_COPY_GBPS", "8", 1);
	fake_gpu_up(&f, "/");
	chunk_ok(&f, GDR_BOUNCE_COPY_CE, 0, 256 << 10);
	chunk_ok(&f, GDR_BOUNCE_COPY_SM, 2, 12288);
	fake_gpu_down(&f);
	chunk_fails(NULL, GDR_BOUNCE_COPY_SM, 0, "no blocks");
	/* The kernel does not load: sm has no figure, and says why; ce still measures. */
	chunk_fails("cuModuleLoadData=CUDA_ERROR_INVALID_PTX", GDR_BOUNCE_COPY_SM, 2,
		    "cuModuleLoadData");
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuModuleLoadData=CUDA_ERROR_INVALID_PTX", 1);
	fake_gpu_up(&f, "/");
	chunk_ok(&f, GDR_BOUNCE_COPY_CE, 0, 65536);
	fake_gpu_down(&f);
	/* No memory for the buffers: why names the allocation. */
	chunk_fails("cuMemAlloc=CUDA_ERROR_OUT_OF_MEMORY", GDR_BOUNCE_COPY_CE, 0,
		    "CUDA_ERROR_OUT_OF_MEMORY");
}

/*
 * The bench's cache (session_rows.c): one measurement per chunk, copy mode and
 * block count, kept for the run; without a GPU, no figure and why; more
 * distinct chunks than slots reuse the last slot.
 */
static void test_sess_cache(void **state)
{
	struct sess *s = calloc(1, sizeof(*s));
	const struct gdr_sess_copy *a, *b;
	struct fake_gpu f;

	(void)state;
	assert_non_null(s);
	s->env.bounce_chunk = GDR_BOUNCE_CHUNK_CAP;
	s->env.bounce_copy = GDR_BOUNCE_COPY_CE;
	a = gdr_sess_bounce_copy(s, 65536);
	assert_true(isnan(a->gbps[0]) && isnan(a->gbps[1]));
	assert_string_equal(a->why, "no GPU open");
	setenv("GDRPERF_FAKE_CUDA_COPY_GBPS", "8", 1);
	fake_gpu_up(&f, "/");
	s->cuda = f.cu;
	/* 8 MiB moves in 4 MiB chunks as 4 MiB does: one measurement; 6 MiB in 3 MiB: another. */
	a = gdr_sess_bounce_copy(s, 8ull << 20);
	assert_int_equal(a->chunk, 4ull << 20);
	assert_true(a->gbps[0] > 0.001 && a->gbps[1] > 0.001);
	assert_ptr_equal(gdr_sess_bounce_copy(s, 4ull << 20), a);
	assert_int_equal(s->ncopies, 2);
	b = gdr_sess_bounce_copy(s, 6ull << 20);
	assert_ptr_not_equal(b, a);
	assert_int_equal(b->chunk, 3ull << 20);
	/* The same chunk by the copy kernel is another figure; its blocks are part of the key. */
	s->env.bounce_copy = GDR_BOUNCE_COPY_SM;
	s->env.bounce_blocks = 2;
	b = gdr_sess_bounce_copy(s, 4ull << 20);
	assert_ptr_not_equal(b, a);
	assert_int_equal(b->copy, GDR_BOUNCE_COPY_SM);
	assert_int_equal(b->blocks, 2);
	assert_true(b->gbps[0] > 0.001 && b->gbps[1] > 0.001);
	s->env.bounce_blocks = 4;
	assert_ptr_not_equal(gdr_sess_bounce_copy(s, 4ull << 20), b);
	assert_int_equal(s->ncopies, 5);
	fake_gpu_down(&f);
	s->cuda = NULL;
	for (uint64_t size = 1; size <= 2 * GDR_SESS_COPIES; size++)
		assert_int_equal(gdr_sess_bounce_copy(s, size)->chunk, size);
	assert_int_equal(s->ncopies, GDR_SESS_COPIES);
	free(s);
}

/*
 * The fake copies at a set rate (8 Gb/s = 1 GB/s) at most: every case must read
 * at or under it (bytes counted twice would read 2), and not nothing. Its sleeps
 * make small chunks slower on a busy machine, so no tighter lower bound is claimed.
 */
static void test_fake_rate(void **state)
{
	struct fake_gpu f;
	struct gdr_copy_table t;
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_COPY_GBPS", "8", 1);
	fake_gpu_up(&f, "/");
	gdr_copy_table_init(&t, 8ull << 20, 1);
	assert_int_equal(gdr_copy_measure(f.cu, &f.gpu, &t, why, sizeof(why)), 0);
	assert_string_equal(t.sm_why, "");
	for (int m = 0; m < 2; m++)
		for (int d = 0; d < 2; d++)
			for (int c = 0; c < GDR_COPY_NCHUNKS; c++) {
				double g = t.gbps[m][d][c];

				if (!(g > 0.001 && g <= 1.05))
					fail_msg(
					    "mode %d dir %d chunk %d: %.3f GB/s, <= 1 expected", m,
					    d, c, g);
			}
	fake_gpu_down(&f);
}

/* No kernel (loading it fails): CE is measured, SM says why not. */
static void test_fake_no_sm(void **state)
{
	struct fake_gpu f;
	struct gdr_copy_table t;
	char why[256] = "", *buf = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuModuleLoadData=CUDA_ERROR_INVALID_PTX", 1);
	fake_gpu_up(&f, "/");
	gdr_copy_table_init(&t, 1ull << 20, 1);
	assert_int_equal(gdr_copy_measure(f.cu, &f.gpu, &t, why, sizeof(why)), 0);
	assert_true(t.gbps[0][1][2] > 0);
	assert_true(isnan(t.gbps[1][0][0]));
	assert_non_null(strstr(t.sm_why, "cuModuleLoadData"));
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	gdr_copy_table_print(out, &t);
	fclose(out);
	assert_non_null(strstr(buf, "SM not measured: "));
	assert_non_null(strstr(buf, "  512 KiB"));
	assert_non_null(strstr(buf, "  64 MiB"));
	free(buf);
	fake_gpu_down(&f);
}

/* gdr_doctor --measure on the fake: the source line names the stand-in. */
static void test_node(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	assert_int_equal(gdr_copy_measure_node(out), 0);
	fclose(out);
	if (!strstr(buf, "copy rates: source: a stand-in driver (GDRPERF_LIBCUDA), not a GPU's "
			 "figures\n  library: ") ||
	    !strstr(buf, "gpu0 NVIDIA H200 (0000:3b:00.0): pinned host <-> GPU copies") ||
	    !strstr(buf, "bounce copy ceiling: ce "))
		fail_msg("unexpected output:\n%s", buf);
	free(buf);
	/* No driver: nothing measured, and why. */
	setenv("GDRPERF_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	buf = NULL;
	out = open_memstream(&buf, &len);
	assert_int_equal(gdr_copy_measure_node(out), -ENODEV);
	fclose(out);
	assert_non_null(strstr(buf, "copy rates: not measured: no CUDA driver"));
	free(buf);
}

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_bounce_ceiling),
		cmocka_unit_test(test_chunk_bytes),
#ifdef HAVE_CUDA
		cmocka_unit_test_setup(test_fake_chunk, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_sess_cache, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_fake_rate, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_fake_no_sm, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_node, fake_gpu_reset_env),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
