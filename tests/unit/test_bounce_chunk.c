/*
 * The bounce path's chunk choice (common/mem/bounce_plan.c): the chunk per
 * message size and cap, the default cap against the H200 copy table it was
 * chosen from, the staging-ring bound and the row column.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bounce.h"
#include "lat_opts.h"
#include "mem.h"
#include "options.h"
#include "report.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)

static void test_chunk_per_size(void **state)
{
	const uint64_t cap = GDR_BOUNCE_CHUNK_CAP;

	(void)state;
	/* Up to the cap: the message itself, one chunk. */
	assert_int_equal(gdr_bounce_chunk(2, cap), 2);
	assert_int_equal(gdr_bounce_chunk(64 * KiB, cap), 64 * KiB);
	assert_int_equal(gdr_bounce_chunk(1 * MiB, cap), 1 * MiB);
	assert_int_equal(gdr_bounce_chunk(4 * MiB, cap), 4 * MiB);
	/* Above: the fewest equal chunks within the cap. */
	assert_int_equal(gdr_bounce_chunk(8 * MiB, cap), 4 * MiB);
	assert_int_equal(gdr_bounce_chunk(6 * MiB, cap), 3 * MiB);
	assert_int_equal(gdr_bounce_chunk(5 * MiB, cap), 5 * MiB / 2);
	assert_int_equal(gdr_bounce_chunk(12 * MiB, cap), 4 * MiB);
	assert_int_equal(gdr_bounce_chunk(1024 * MiB, cap), 4 * MiB);
	/* Rounded up to 4 KiB: 4 MiB + 1 B in two chunks of 2 MiB + 4 KiB. */
	assert_int_equal(gdr_bounce_chunk(4 * MiB + 1, cap), 2 * MiB + 4 * KiB);
	/* Other caps (--bounce-chunk). */
	assert_int_equal(gdr_bounce_chunk(10000, 4096), 4096);
	assert_int_equal(gdr_bounce_chunk(4096, 4096), 4096);
	assert_int_equal(gdr_bounce_chunk(4097, 4096), 4096);
	assert_int_equal(gdr_bounce_chunk(40000, 16 * KiB), 16 * KiB);
	assert_int_equal(gdr_bounce_chunk(48 * KiB + 1, 16 * KiB), 16 * KiB);
	assert_int_equal(gdr_bounce_chunk(512 * KiB, 256 * KiB), 256 * KiB);
	assert_int_equal(gdr_bounce_chunk(768 * KiB, 512 * KiB), 384 * KiB);
	/* A cap that is not a multiple of 4 KiB is never exceeded by the rounding. */
	assert_int_equal(gdr_bounce_chunk(10000, 5000), 5000);
	assert_int_equal(gdr_bounce_chunk(9999, 5000), 5000);
	assert_int_equal(gdr_bounce_chunk(1, 0), 0);
}

/* Every size: chunk <= cap, as many chunks as the cap needs, no empty last chunk. */
static void test_chunk_invariants(void **state)
{
	static const uint64_t caps[] = { 4096, 5000, 16 * KiB, 256 * KiB, 4 * MiB, 1024 * MiB };

	(void)state;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		uint64_t cap = caps[i];

		for (uint64_t size = 1; size <= 64 * MiB; size = size * 3 / 2 + 1) {
			uint64_t c = gdr_bounce_chunk(size, cap);
			uint64_t n = (size + c - 1) / c, need = (size + cap - 1) / cap;

			assert_true(c >= 1 && c <= cap);
			assert_int_equal(n, need);
			assert_true((n - 1) * c < size);
			if (size <= cap)
				assert_int_equal(c, size);
		}
	}
}

/*
 * The default cap is the smallest chunk of the H200 table (docs/bounce.md,
 * 2026-12-04) at which each copy runs at >= 90 % of its 64 MiB rate: so any
 * message of >= 4 MiB moves in chunks of the cap (or of the message) and its
 * copy stage is within 10 % of the best.
 */
static void test_default_cap_from_table(void **state)
{
	static const struct {
		uint64_t chunk;
		double rate[4]; /* CE D2H, CE H2D, SM D2H, SM H2D, GB/s */
	} t[] = {
		{ 256 * KiB, { 39.7, 33.6, 35.0, 28.9 } },
		{ 512 * KiB, { 46.2, 40.0, 42.4, 36.6 } },
		{ 1 * MiB, { 50.4, 46.9, 46.7, 42.7 } },
		{ 4 * MiB, { 53.6, 51.7, 50.9, 48.7 } },
		{ 64 * MiB, { 54.1, 53.4, 52.3, 51.0 } },
	};
	const size_t n = sizeof(t) / sizeof(t[0]);
	uint64_t smallest = 0;

	(void)state;
	for (size_t i = 0; i < n && !smallest; i++) {
		int all = 1;

		for (int k = 0; k < 4; k++)
			all &= t[i].rate[k] >= 0.9 * t[n - 1].rate[k];
		if (all)
			smallest = t[i].chunk;
	}
	assert_int_equal(smallest, GDR_BOUNCE_CHUNK_CAP);
	/* And every message from 4 MiB on moves in chunks of >= 4 MiB / 2 ... */
	for (uint64_t size = 4 * MiB; size <= 1024 * MiB; size += 4 * MiB - 4 * KiB)
		assert_true(gdr_bounce_chunk(size, GDR_BOUNCE_CHUNK_CAP) * 2 > 4 * MiB);
	/* ... and power-of-two messages (the sweep's) in chunks of exactly the cap. */
	for (uint64_t size = 4 * MiB; size <= 1024 * MiB; size *= 2)
		assert_int_equal(gdr_bounce_chunk(size, GDR_BOUNCE_CHUNK_CAP),
				 GDR_BOUNCE_CHUNK_CAP);
}

static void test_ring_bound(void **state)
{
	char why[256];

	(void)state;
	/* The default: 8 x 4 MiB = 32 MiB per side. */
	assert_int_equal(gdr_bounce_ring_check(GDR_BOUNCE_CHUNK_CAP, 8, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_ring_check(GDR_BOUNCE_RING_MAX, 1, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_ring_check(4 * MiB, 256, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_ring_check(4 * MiB + 4096, 256, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "staging ring 256 x"));
	assert_non_null(strstr(why, "--bounce-slots"));
	assert_int_equal(gdr_bounce_ring_check(1ull << 30, 8, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_bounce_ring_check(4096, 0, why, sizeof(why)), -EINVAL);
}

static void test_row_column(void **state)
{
	struct gdr_mem_env env = { .bounce_chunk = 4 * MiB, .bounce_slots = 8 };
	struct gdr_result r;

	(void)state;
	memset(&r, 0, sizeof(r));
	gdr_bounce_fill_row(&r, &env, 65536);
	assert_string_equal(r.bounce_chunk, "65536");
	gdr_bounce_fill_row(&r, &env, 6 * MiB);
	assert_string_equal(r.bounce_chunk, "3145728");
}

/* The options: the cap follows the copy mode unless given; sm is refused by latency tools. */
static int parse(struct gdr_opts *o, const char *a, const char *b)
{
	char *argv[] = { "gdr_write_bw", (char *)a, (char *)b, NULL };

	optind = 1;
	return gdr_opts_parse(o, GDR_VERB_WRITE, b ? 3 : a ? 2 : 1, argv);
}

static void test_options(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL, NULL), 0);
	assert_int_equal(o.bounce_chunk, GDR_BOUNCE_CHUNK_CAP);
	assert_int_equal(o.bounce_copy, GDR_BOUNCE_COPY_CE);
	assert_int_equal(o.bounce_blocks, GDR_BOUNCE_BLOCKS);
	assert_int_equal(gdr_lat_opts_check(&o), 0);
	assert_int_equal(parse(&o, "--bounce-copy=sm", NULL), 0);
	assert_int_equal(o.bounce_chunk, GDR_BOUNCE_CHUNK_SM);
	assert_int_equal(o.bounce_copy, GDR_BOUNCE_COPY_SM);
	assert_int_equal(gdr_lat_opts_check(&o), -EINVAL);
	assert_int_equal(parse(&o, "--bounce-copy=sm", "--bounce-chunk=1M"), 0);
	assert_int_equal(o.bounce_chunk, 1u << 20);
	assert_int_equal(parse(&o, "--bounce-chunk=64K", "--bounce-copy=ce"), 0);
	assert_int_equal(o.bounce_chunk, 64u << 10);
	assert_int_equal(parse(&o, "--bounce-blocks=16", NULL), 0);
	assert_int_equal(o.bounce_blocks, 16);
	assert_int_not_equal(parse(&o, "--bounce-copy=gpu", NULL), 0);
	assert_int_not_equal(parse(&o, "--bounce-blocks=0", NULL), 0);
	assert_int_not_equal(parse(&o, "--bounce-blocks=1025", NULL), 0);
	/* The ring bound: 256 x 8 MiB is 2 GiB per side. */
	assert_int_not_equal(parse(&o, "--bounce-slots=256", "--bounce-chunk=8M"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunk_per_size),
		cmocka_unit_test(test_chunk_invariants),
		cmocka_unit_test(test_default_cap_from_table),
		cmocka_unit_test(test_ring_bound),
		cmocka_unit_test(test_row_column),
		cmocka_unit_test(test_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
