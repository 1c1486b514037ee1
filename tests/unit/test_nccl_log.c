#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "nccl_log.h"

static enum gdr_nccl_path feed(struct gdr_nccl_log *log, const char *const *lines)
{
	gdr_nccl_log_init(log);
	for (; *lines; lines++)
		gdr_nccl_log_line(log, *lines);
	gdr_nccl_log_finish(log);
	return log->path;
}

static void test_prefix_and_version(void **state)
{
	static const char *const l[] = {
		"h-1:12:34 [3] NCCL INFO NCCL version 2.21.5+cuda12.4\n",
		"h-1:12:56 [3] NCCL INFO Channel 00/0 : 0[3] -> 1[3] [send] via NET/IB/0/GDRDMA\n",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	feed(&log, l);
	assert_string_equal(log.version, "2.21.5+cuda12.4");
	assert_int_equal(log.vmajor, 2);
	assert_int_equal(log.vminor, 21);
	/* The thread id differs between lines of one process: one process, not two. */
	assert_int_equal(log.nprocs, 1);
	assert_string_equal(log.procs[0].id, "h-1:12");
	assert_int_equal(log.procs[0].dev, 3);
	assert_int_equal(log.procs[0].chan_gdr, 1);
	assert_string_equal(log.chan_net, "IB");
}

static void test_dmabuf_capability_is_not_use(void **state)
{
	static const char *const l[] = {
		"NCCL version 2.21.5+cuda12.4",
		"a:1:1 [0] NCCL INFO DMA-BUF is available on GPU device 0",
		"a:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_NONE);
}

static void test_dmabuf_when_gdr_and_gpu_capable(void **state)
{
	static const char *const l[] = {
		"NCCL version 2.18.5+cuda12.2",
		"a:1:1 [0] NCCL INFO DMA-BUF is available on GPU device 0",
		"a:1:1 [0] NCCL INFO Channel 00/1 : 1[0] -> 0[0] [receive] via "
		"NET/IB/0/GDRDMA/Shared",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_DMABUF);
	assert_true(log.ncited >= 2);
}

static void test_old_version_is_peermem(void **state)
{
	static const char *const l[] = {
		"NCCL version 2.7.6+cuda11.1",
		"h:1:2 [0] NCCL INFO Channel 01 : 2[c7000] -> 0[87000] [receive] via "
		"NET/IB/5/GDRDMA",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_PEERMEM);
}

static void test_gdr_without_context_is_unknown(void **state)
{
	static const char *const l[] = {
		"h:1:2 [0] NCCL INFO Channel 00/0 : 9[1] -> 0[0] [receive] via NET/IB/0/GDRDMA",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_UNKNOWN);
}

static void test_bootstrap_socket_is_not_transport(void **state)
{
	static const char *const l[] = {
		"h:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
		"h:1:1 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.11.1<0>",
		"h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:192.168.11.1<0>",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	/* Nothing says what the data path was: not "none" because of a socket line. */
	assert_int_equal(feed(&log, l), GDR_NCCL_UNKNOWN);
	assert_true(gdr_nccl_log_is_nccl(&log));
}

static void test_socket_channels(void **state)
{
	static const char *const l[] = {
		"w:1:2 [0] NCCL INFO Using network Socket",
		"w:1:2 [0] NCCL INFO Channel 00 : 0[18000] -> 1[18000] [receive] via NET/Socket/1",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_NONE);
}

static void test_plugin_dmabuf_but_nccl_disables(void **state)
{
	static const char *const l[] = {
		"NET/IB : GPU Direct RDMA (DMABUF) enabled for HCA 0 'rocep1s0f0'",
		"NET/NCCL RDMA Plugin v10 : GPU Direct RDMA Disabled for HCA 0 'rocep1s0f0'",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_NONE);
}

static void test_distance_parsed(void **state)
{
	static const char *const l[] = {
		"x:8:9 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 42000 / HCA 0 (distance 6 > "
		"4)",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_NONE);
	assert_string_equal(log.distance, "6 > 4");
}

static void test_not_nccl(void **state)
{
	static const char *const l[] = { "hello", "Channel surfing via cable", NULL };
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_UNKNOWN);
	assert_false(gdr_nccl_log_is_nccl(&log));
	assert_non_null(strstr(log.reason, "not an NCCL log"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_and_version),
		cmocka_unit_test(test_dmabuf_capability_is_not_use),
		cmocka_unit_test(test_dmabuf_when_gdr_and_gpu_capable),
		cmocka_unit_test(test_old_version_is_peermem),
		cmocka_unit_test(test_gdr_without_context_is_unknown),
		cmocka_unit_test(test_bootstrap_socket_is_not_transport),
		cmocka_unit_test(test_socket_channels),
		cmocka_unit_test(test_plugin_dmabuf_but_nccl_disables),
		cmocka_unit_test(test_distance_parsed),
		cmocka_unit_test(test_not_nccl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
