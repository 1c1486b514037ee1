#include "cmocka_common.h"

#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "pattern.h"

/*
 * Simulate the posting rule against a device that completes only signaled
 * requests: the engine must never stall (a full window with no signaled
 * request outstanding) and must end with the last request signaled.
 */
static void simulate(unsigned int tx_depth, unsigned int post_list, unsigned int cq_mod,
		     uint64_t target)
{
	struct gdr_loop_cfg cfg = { .tx_depth = tx_depth,
				    .post_list = post_list,
				    .cq_mod = cq_mod };
	uint64_t posted = 0, done = 0, last_signal = 0, signals = 0;

	while (done < target) {
		int progressed = 0;
		for (;;) {
			uint64_t need = target - posted < post_list ? target - posted : post_list;
			if (need == 0 || tx_depth - (posted - done) < need)
				break;
			if (gdr_loop_signal(posted, (unsigned int)need, done, target, &cfg)) {
				last_signal = posted + need;
				signals++;
			}
			posted += need;
			progressed = 1;
		}
		/* The device completes everything up to the last signaled request. */
		if (last_signal > done) {
			done = last_signal;
			progressed = 1;
		}
		assert_true(progressed);
	}
	assert_int_equal(done, target);
	assert_int_equal(last_signal, target);
	/* Moderation works: far fewer signals than requests when cq_mod allows. */
	if (cq_mod >= 16 && post_list == 1 && target >= 1000 && tx_depth >= 2 * cq_mod)
		assert_true(signals * 4 < target);
}

static void test_signal_rule_never_stalls(void **state)
{
	(void)state;
	simulate(128, 1, 100, 5000);
	simulate(128, 4, 128, 5000);
	simulate(128, 128, 128, 1000);
	simulate(1, 1, 1, 10);
	simulate(16, 3, 16, 1001);
	simulate(7, 7, 5, 99);
	simulate(256, 1, 64, 100000);
}

static void test_pattern(void **state)
{
	uint8_t a[4099], b[4099];
	size_t off;
	uint8_t want, got;

	(void)state;
	gdr_pattern_fill(a, sizeof(a), 7, 0);
	gdr_pattern_fill(b, sizeof(b), 7, 1);
	assert_memory_not_equal(a, b, sizeof(a)); /* per QP */
	assert_int_equal(gdr_pattern_check(a, sizeof(a), 7, 0, &off, &want, &got), 0);
	assert_int_not_equal(gdr_pattern_check(a, sizeof(a), 8, 0, &off, &want, &got), 0);
	a[4097] ^= 1;
	assert_int_not_equal(gdr_pattern_check(a, sizeof(a), 7, 0, &off, &want, &got), 0);
	assert_int_equal(off, 4097);
	gdr_pattern_poison(b, sizeof(b), 7, 0);
	gdr_pattern_fill(a, sizeof(a), 7, 0);
	for (size_t i = 0; i < sizeof(a); i++)
		assert_int_not_equal(a[i], b[i]);
	assert_int_not_equal(gdr_pattern_check(b, sizeof(b), 7, 0, &off, &want, &got), 0);
	assert_int_equal(off, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_rule_never_stalls),
		cmocka_unit_test(test_pattern),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
