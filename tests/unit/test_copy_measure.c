/*
 * gdr_doctor --measure's arithmetic and its run on the fake driver
 * (common/mem/copy_measure.c): GB/s from bytes and time, the bounce copy
 * ceiling as min(D2H, H2D) at a chunk, a stand-in's known copy rate read
 * back, and the source line that says the figures are not a GPU's.
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
#include "copy_measure.h"

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

#ifdef HAVE_CUDA

#include "fake_cuda_env.h"

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
#ifdef HAVE_CUDA
		cmocka_unit_test_setup(test_fake_rate, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_fake_no_sm, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_node, fake_gpu_reset_env),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
