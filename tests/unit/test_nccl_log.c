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

/* A version number that is no NCCL version (overflowing, signed) is unknown, not old. */
static void test_version_out_of_range(void **state)
{
	static const char *const l[] = {
		"NCCL version 2.99999999999999999999.1+cuda12.4",
		"h:1:2 [0] NCCL INFO Channel 01 : 2[c7000] -> 0[87000] [receive] via "
		"NET/IB/5/GDRDMA",
		NULL,
	};
	struct gdr_nccl_log log;
	int a, b, c;

	(void)state;
	assert_int_not_equal(feed(&log, l), GDR_NCCL_PEERMEM);
	assert_int_equal(log.vmajor, -1);
	assert_int_equal(gdr_nccl_parse_version("2.21.5+cuda12.4", &a, &b, &c), 0);
	assert_true(a == 2 && b == 21 && c == 5);
	assert_int_equal(gdr_nccl_parse_version("2.4", &a, &b, &c), 0);
	assert_true(a == 2 && b == 4 && c == -1);
	assert_true(gdr_nccl_parse_version("-2.-16.-5", &a, &b, &c) < 0 && a == -1 && b == -1);
	assert_true(gdr_nccl_parse_version("2.4294967298.1", &a, &b, &c) < 0 && a == -1);
	assert_true(gdr_nccl_parse_version("banana", &a, &b, &c) < 0 && a == -1);
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

static void test_strip_each_prefix(void **state)
{
	static const struct {
		const char *in, *body, *launch;
	} c[] = {
		{ "[1,0]<stdout>:h:1:2 [0] NCCL INFO x", "h:1:2 [0] NCCL INFO x", "rank 1,0" },
		{ "[12,3]<stderr>:NCCL version 2.7.8", "NCCL version 2.7.8", "rank 12,3" },
		{ " 7: h:1:2 [0] NCCL INFO x", "h:1:2 [0] NCCL INFO x", "task 7" },
		{ "[pod/w-0/main] h:1:2 [0] NCCL INFO x", "h:1:2 [0] NCCL INFO x", "pod/w-0/main" },
		{ "2026-11-29T10:00:00.123456789Z h:1:2 [0] NCCL INFO x", "h:1:2 [0] NCCL INFO x",
		  "" },
		{ "[pod/w-1/c] 2026-11-29T10:00:00+01:00 h:1:2 [0] NCCL INFO x",
		  "h:1:2 [0] NCCL INFO x", "pod/w-1/c" },
		{ "(RayWorkerWrapper pid=77, ip=10.0.0.2) h:1:2 [0] NCCL INFO x",
		  "h:1:2 [0] NCCL INFO x", "ray pid=77, ip=10.0.0.2" },
		{ "| 2026-11-29 10:00:00.000 | h:1:2 [0] NCCL INFO x |", "h:1:2 [0] NCCL INFO x",
		  "" },
		{ "| 1764410400000 | h:1:2 [0] NCCL INFO x", "h:1:2 [0] NCCL INFO x", "" },
		{ "Nov  9 10:00:00 node1 python3[6601]: h:1:2 [0] NCCL INFO x",
		  "h:1:2 [0] NCCL INFO x", "node1 python3[6601]" },
		{ "(pid=4242) h:1:2 [0] NCCL INFO x", "h:1:2 [0] NCCL INFO x", "ray pid=4242" },
		{ "2026-11-29T10:00:00+0000 node1 python3[6601]: h:1:2 [0] NCCL INFO x",
		  "h:1:2 [0] NCCL INFO x", "node1 python3[6601]" },
		/* Not prefixes: NCCL's host:pid:tid, a numeric host name, a bracketed device. */
		{ "10-90-43-152:120890:120890 [0] NCCL INFO x",
		  "10-90-43-152:120890:120890 [0] NCCL INFO x", "" },
		{ "1234:5678:5678 [0] NCCL INFO x", "1234:5678:5678 [0] NCCL INFO x", "" },
		{ "[0] NCCL INFO x", "[0] NCCL INFO x", "" },
	};
	char body[256], launch[64];

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		gdr_nccl_strip_prefix(c[i].in, body, sizeof(body), launch, sizeof(launch));
		assert_string_equal(body, c[i].body);
		assert_string_equal(launch, c[i].launch);
	}
}

static void test_prefixes_keep_one_process(void **state)
{
	static const char *const l[] = {
		"[pod/a/c] 2026-11-29T10:00:00.1Z a:5:5 [0] NCCL INFO NCCL version "
		"2.21.5+cuda12.4\n",
		"[pod/a/c] 2026-11-29T10:00:00.2Z a:5:9 [0] NCCL INFO Using network IB\n",
		"[pod/a/c] 2026-11-29T10:00:00.3Z a:5:9 [0] NCCL INFO DMA-BUF is available on GPU "
		"device 0\n",
		"[pod/a/c] 2026-11-29T10:00:00.4Z a:5:9 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] "
		"[receive] via NET/IB/0/GDRDMA\n",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_DMABUF);
	assert_int_equal(log.nprocs, 1);
	assert_string_equal(log.procs[0].id, "a:5");
	assert_int_equal(log.prefixed_lines, 4);
}

static void test_split_record_joined(void **state)
{
	static const char *const l[] = {
		"h:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n",
		"h:1:2 [0] NCCL INFO Using network IB\n",
		"h:1:2 [0] NCCL INFO DMA-BUF is avai\n",
		"lable on GPU device 0\n",
		"h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDR\n",
		"DMA\n",
		"Traceback (most recent call last):\n",
		"   1048576  262144  float  sum  -1  5.1  /GDRDMA\n",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_DMABUF);
	assert_int_equal(log.joined_lines, 2);
	assert_int_equal(log.all.count[NF_CHAN_GDR], 1);
}

static void test_two_runs_judged_per_process(void **state)
{
	static const char *const a[] = {
		"old:1:1 [0] NCCL INFO NCCL version 2.7.8+cuda11.0\n",
		"old:1:2 [0] NCCL INFO Channel 00 : 1[1b000] -> 0[1b000] [receive] via "
		"NET/IB/0/GDRDMA\n",
		"new:2:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n",
		"new:2:2 [0] NCCL INFO DMA-BUF is available on GPU device 0\n",
		"new:2:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n",
		NULL,
	};
	const char *const b[] = { a[2], a[3], a[4], a[0], a[1], NULL };
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, a), GDR_NCCL_MIXED);
	assert_int_equal(log.procs[0].verdict.path, GDR_NCCL_PEERMEM);
	assert_int_equal(log.procs[1].verdict.path, GDR_NCCL_DMABUF);
	assert_int_equal(feed(&log, b), GDR_NCCL_MIXED);
}

static void test_guide_line_is_not_evidence(void **state)
{
	static const char *const l[] = {
		"h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n",
		"h:1:2 [0] NCCL INFO Using network IB\n",
		"h:1:2 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 0 / HCA 0, using "
		"nvidia-peermem\n",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	/* Taken as NCCL's per-pair line, it would read as GDR in use through peer memory. */
	assert_int_equal(feed(&log, l), GDR_NCCL_UNKNOWN);
	assert_int_equal(log.all.count[NF_GUIDE_LINE], 1);
	assert_int_equal(log.all.count[NF_PAIR_GDR_ON], 0);
	assert_non_null(strstr(log.reason, "not printed by any NCCL release"));
}

static void test_hca_line_of_other_transport(void **state)
{
	static const char *const l[] = {
		"h:1:1 [0] NCCL INFO Using network AWS Libfabric\n",
		"h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	/* NCCL's IB transport is not the one in use: its HCA line does not say "none". */
	assert_int_equal(feed(&log, l), GDR_NCCL_UNKNOWN);
	assert_int_equal(log.all.count[NF_HCA_OTHER_NET], 1);
}

/* The level a per-pair "Disabled" line needs, named in the log's NCCL release's numbering. */
static void test_level_fix_per_release(void **state)
{
	static const struct {
		const char *version, *distance, *want;
	} c[] = {
		{ "2.5.6+cuda10.1", "(distance 3 >= 2)", "NCCL_NET_GDR_LEVEL=4 (NCCL 2.5.6" },
		{ "2.7.8+cuda11.0", "(distance 4 > 3)", "raise NCCL_NET_GDR_LEVEL to PHB" },
		{ "2.11.4+cuda11.4", "(distance 6 > 4)", "raise NCCL_NET_GDR_LEVEL to SYS" },
		{ "2.21.5+cuda12.4", "(distance 6 > 4)", "raise NCCL_NET_GDR_LEVEL to PHB" },
		{ "2.26.2+cuda12.8", "(distance 7 > 5)", "raise NCCL_NET_GDR_LEVEL to PHB" },
		{ "2.27.5+cuda12.9", "(distance 8 > 5)", "raise NCCL_NET_GDR_LEVEL to PHB" },
		{ "2.27.5+cuda12.9", "(distance 9 > 5)", "raise NCCL_NET_GDR_LEVEL to SYS" },
	};
	char ver[96], pair[160];
	const char *l[] = { ver, pair, NULL };
	struct gdr_nccl_log log;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(ver, sizeof(ver), "h:1:1 [0] NCCL INFO NCCL version %s", c[i].version);
		snprintf(pair, sizeof(pair),
			 "h:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 %s",
			 c[i].distance);
		assert_int_equal(feed(&log, l), GDR_NCCL_NONE);
		if (!strstr(log.fix, c[i].want))
			fail_msg("NCCL %s %s: fix \"%s\", wanted \"%s\"", c[i].version,
				 c[i].distance, log.fix, c[i].want);
		assert_int_equal(log.cause_line.lineno, 2);
	}
}

/* NCCL 2.4's "(no module or not supported by GPU)" is the missing module too. */
static void test_no_module_2_4(void **state)
{
	static const char *const l[] = {
		"h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 0[0] / HCA 0 "
		"'mlx5_0' "
		"(no module or not supported by GPU)",
		"h:1:1 [0] NCCL INFO Ring 00 : 1 -> 0 [receive] via NET/IB/0",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	assert_int_equal(feed(&log, l), GDR_NCCL_NONE);
	assert_non_null(strstr(log.cause, "no peer-memory module"));
	assert_non_null(strstr(log.fix, "load nvidia-peermem"));
	assert_int_equal(log.cause_line.lineno, 1);
}

/* Every NCCL WARN line is kept up to the table's size, the rest counted. */
static void test_warn_lines(void **state)
{
	const char *l[GDR_NCCL_MAX_WARNS + 5];
	struct gdr_nccl_log log;
	unsigned int i;

	(void)state;
	for (i = 0; i < GDR_NCCL_MAX_WARNS + 4; i++)
		l[i] = "h:1:1 [0] misc/x.cc:1 NCCL WARN Attribute busid of node nic not found";
	l[i] = NULL;
	assert_int_equal(feed(&log, l), GDR_NCCL_UNKNOWN);
	assert_int_equal(log.nwarns, GDR_NCCL_MAX_WARNS);
	assert_int_equal(log.warns_dropped, 4);
	assert_int_equal(log.warns[0].lineno, 1);
	assert_int_equal(log.all.count[NF_WARN], GDR_NCCL_MAX_WARNS + 4);
}

/* The GPUs and NICs each process names as its own, and only those. */
static void test_devices(void **state)
{
	static const char *const l[] = {
		"a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_2:1/RoCE [RO]; "
		"OOB "
		"ib0:10.0.0.1<0>",
		"a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_3:1/IB+mlx5_4:1/IB ; OOB "
		"ib0:10.0.0.1<0>",
		"a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 "
		"commId 0x2 - Init START",
		"a:1:1 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= "
		"7)",
		"a:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU/0-100000 (rank 0) - NET/0-0 "
		"(distance 4 > 2)",
		/* Before 2.7 the pair line named the CUDA device, not a busId. */
		"a:1:1 [2] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 2[2] / HCA 0 "
		"(distance "
		"3 >= 2)",
		"a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_9'",
		/* Socket's HCA and list are interfaces; channels name the peers' GPUs. */
		"a:1:1 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'",
		"a:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
		"a:1:1 [0] NCCL INFO Channel 00/0 : 1[c7000] -> 0[1b000] [receive] via "
		"NET/IB/0/GDRDMA",
		"b:2:2 [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1e0 "
		"commId 0x2 - Init START",
		NULL,
	};
	struct gdr_nccl_log log;
	const struct gdr_nccl_devs *d;
	char b[32];

	(void)state;
	feed(&log, l);
	assert_int_equal(log.nprocs, 2);
	d = &log.procs[0].facts.devs;
	assert_int_equal(d->nnic, 5);
	assert_string_equal(d->nic[0], "mlx5_0");
	assert_string_equal(d->nic[1], "mlx5_2");
	assert_string_equal(d->nic[2], "mlx5_3");
	assert_string_equal(d->nic[3], "mlx5_4");
	assert_string_equal(d->nic[4], "mlx5_9");
	assert_int_equal(d->nic_line[4], 7);
	assert_int_equal(d->ngpu, 3);
	assert_string_equal(gdr_nccl_busid_text(d->gpu[0], b, sizeof(b)), "0000:1b:00.0");
	assert_int_equal(d->gpu_line[0], 3);
	assert_string_equal(gdr_nccl_busid_text(d->gpu[1], b, sizeof(b)), "0000:81:00.0");
	assert_string_equal(gdr_nccl_busid_text(d->gpu[2], b, sizeof(b)), "0001:00:00.0");
	d = &log.procs[1].facts.devs;
	assert_int_equal(d->nnic, 0);
	assert_int_equal(d->ngpu, 1);
	assert_string_equal(gdr_nccl_busid_text(d->gpu[0], b, sizeof(b)), "0000:00:1e.0");
	/* The file: both processes' GPUs. */
	assert_int_equal(log.all.devs.ngpu, 4);
	assert_int_equal(log.all.devs.nnic, 5);
}

/* NCCL 2.26 on stamps WARN lines ("[%F %T] " before host:pid:tid): still the same process. */
static void test_warn_timestamp_same_process(void **state)
{
	static const char *const l[] = {
		"h:7:7 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA",
		"",
		"[2025-03-20 14:02:11] h:7:9 [0] misc/socket.cc:71 NCCL WARN socketProgress: "
		"Connection closed by remote peer 10.0.0.2<48213>",
		/* Any NCCL_DEBUG_TIMESTAMP_FORMAT, on INFO lines too (NCCL_DEBUG_TIMESTAMP_LEVELS).
		 */
		"2025-03-20T14:02:12.123 h:7:7 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[0] [receive] "
		"via "
		"NET/IB/0/GDRDMA",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	feed(&log, l);
	assert_int_equal(log.nprocs, 1);
	assert_string_equal(log.procs[0].id, "h:7");
	assert_int_equal(log.procs[0].chan_gdr, 2);
	assert_int_equal(log.nwarns, 1);
}

/* The banner is printed whole: whatever line follows, the version is its own tokens. */
static void test_banner_never_continued(void **state)
{
	static const char *const l[] = {
		"NCCL version 2.4.7+cudaCUDA_MAJOR.CUDA_MINOR",
		"cuda10.0 trailing text",
		"h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
		"+more",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	feed(&log, l);
	assert_string_equal(log.versions[0], "2.4.7+cudaCUDA_MAJOR.CUDA_MINOR");
	assert_string_equal(log.versions[1], "2.21.5+cuda12.4");
	assert_int_equal(log.joined_lines, 0);
}

/* Other programs' lines are never joined onto an NCCL record; a wrap's tail still is. */
static void test_app_lines_not_joined(void **state)
{
	static const char *const apps[] = {
		"INFO 05-22 14:30:02 [pynccl.py:69] vLLM is using nccl==2.21.5",
		"WARNING: something",
		"2019-11-20 11:43:27.123: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1304]",
		"05-22 14:30:02 worker started",
		"11:43:27 step 10",
		"I1120 11:43:27.123456 1234 main.cc:10] glog line",
		"Initializing NCCL across 2 nodes...",
	};
	struct gdr_nccl_log log;

	(void)state;
	for (size_t i = 0; i < sizeof(apps) / sizeof(apps[0]); i++) {
		const char *const l[] = {
			"h:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0",
			apps[i], NULL
		};

		feed(&log, l);
		assert_int_equal(log.joined_lines, 0);
	}
	{
		const char *const l[] = { "h:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [rece",
					  "ive] via NET/IB/0/GDRDMA", NULL };

		assert_int_equal(feed(&log, l), GDR_NCCL_UNKNOWN);
		assert_int_equal(log.joined_lines, 1);
		assert_int_equal(log.all.count[NF_CHAN_GDR], 1);
	}
}

/* NCCL 2.4 and 2.5 read NCCL_NET_GDR_LEVEL as a number: the fix is a number, never a name. */
static void test_numeric_level_releases(void **state)
{
	static const char *const nic[] = {
		"NCCL version 2.4.7+cuda10.1",
		"h:1:1 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to 3.",
		"h:1:1 [0] NCCL INFO CUDA Dev 0[0], IB NIC distance :  PIX SYS",
		"h:1:1 [0] NCCL INFO Ring 00 : 1 -> 0 [receive] via NET/IB/1",
		NULL,
	};
	static const char *const near[] = {
		"NCCL version 2.4.7+cuda10.1",
		"h:1:1 [0] NCCL INFO CUDA Dev 0[0], IB NIC distance :  PXB",
		"h:1:1 [0] NCCL INFO Ring 00 : 1 -> 0 [receive] via NET/IB/0",
		NULL,
	};
	static const char *const v25[] = {
		"NCCL version 2.5.7+cuda10.2",
		"h:1:1 [0] NCCL INFO Channel 00 : 1[1000] -> 0[1000] [receive] via NET/IB/0",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	/* The channels use NIC 1 (SYS, 4): the job's level 3 is not above it. */
	assert_int_equal(feed(&log, nic), GDR_NCCL_NONE);
	assert_non_null(strstr(log.cause, "distance SYS (4) is not below NCCL_NET_GDR_LEVEL (3)"));
	assert_non_null(strstr(log.fix, "NCCL_NET_GDR_LEVEL=5 ("));
	/* PXB (1) is below the default 2: the distance does not explain it. */
	assert_int_equal(feed(&log, near), GDR_NCCL_NONE);
	assert_non_null(strstr(log.cause, "no line of the log says why"));
	assert_null(strstr(log.fix, "NCCL_NET_GDR_LEVEL=PHB"));
	/* 2.5, no line says why: the numbers, not PHB (which 2.5 reads as 0). */
	assert_int_equal(feed(&log, v25), GDR_NCCL_NONE);
	assert_non_null(strstr(log.fix, "NCCL_NET_GDR_LEVEL=3 for PHB, 4 for NODE, 5 for SYS"));
	assert_null(strstr(log.fix, "NCCL_NET_GDR_LEVEL=PHB"));
}

/* A network error and the HINT lines after it are one event; older releases print no hints. */
static void test_error_events(void **state)
{
	static const char *const l[] = {
		"[2026-06-05 10:12:44] h:1:9 [0] transport/net_ib/p2p.cc:688 "
		"(ncclIbLogCompletionWithError) NCCL WARN NET/IB: Got completion from peer "
		"10.0.0.2<41021> with status=IBV_WC_WR_FLUSH_ERR(5) opcode=IBV_WC_SEND(0) "
		"vendor_err=244  hca mlx5_0",
		"h:1:9 [0] NCCL INFO HINT: In many cases this error occurs when NIC on the same "
		"instance cannot talk to each other.",
		"h:1:9 [0] NCCL INFO HINT: In many cases this error occurs when the "
		"NCCL_IB_TIMEOUT is "
		"set too short.",
		"h:1:9 [0] NCCL INFO HINT: Default value is 20, which is ~30 seconds before error.",
		"h:1:9 [0] NCCL INFO HINT: To confirm, try increasing the value of NCCL_IB_TIMEOUT "
		"and "
		"see if the error persists.",
		"h:1:9 [0] NCCL INFO HINT: See "
		"https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/"
		"env.html#nccl-ib-timeout "
		"for more information.",
		/* 2.23-2.28: the status by number; the same error again adds no event. */
		"g:2:2 [0] transport/net_ib.cc:2358 NCCL WARN NET/IB: Got completion from peer "
		"10.0.0.1<1> with status=4 opcode=0 len=0 vendor err 51 (Recv) hca mlx5_1",
		"g:2:2 [0] transport/net_ib.cc:2358 NCCL WARN NET/IB: Got completion from peer "
		"10.0.0.1<1> with status=4 opcode=0 len=0 vendor err 51 (Recv) hca mlx5_1",
		/* 2.4 to 2.9: no peer, "with error N". */
		"m:4:4 [0] transport/net_ib.cc:790 NCCL WARN NET/IB : Got completion with error "
		"12, "
		"opcode 0, len 0, vendor err 129",
		/* A HINT line of a process with no error before it. */
		"k:3:3 [0] NCCL INFO HINT: In many cases this issue indicates missing or faulty "
		"information in the provided topology file.",
		"k:3:3 [0] misc/ibvwrap.cc:376 (wrap_ibv_modify_qp) NCCL WARN Call to "
		"ibv_modify_qp "
		"failed with 110 Connection timed out, on dev mlx5_0:1",
		NULL,
	};
	struct gdr_nccl_log log;
	char buf[800];

	(void)state;
	feed(&log, l);
	assert_int_equal(log.nevents, 4);
	assert_string_equal(log.events[0].what, "IBV_WC_WR_FLUSH_ERR");
	assert_int_equal(log.events[0].hints, 5);
	gdr_nccl_event_explain(&log.events[0], buf, sizeof(buf));
	assert_non_null(strstr(buf, "the first 1 NCCL's hint for it; the other 4 are NCCL's hints "
				    "for IBV_WC_RETRY_EXC_ERR"));
	assert_string_equal(log.events[1].what, "IBV_WC_LOC_PROT_ERR");
	assert_int_equal(log.events[1].repeats, 1);
	assert_int_equal(log.events[1].hints, 0);
	gdr_nccl_event_explain(&log.events[1], buf, sizeof(buf));
	assert_non_null(strstr(buf, "ACS"));
	assert_non_null(strstr(buf, "(NCCL 2.30.7 and later print this hint with it)"));
	assert_string_equal(log.events[2].what, "IBV_WC_RETRY_EXC_ERR");
	assert_string_equal(log.events[3].what, "ibv_modify_qp ETIMEDOUT");
	assert_int_equal(log.hints_alone, 1);
	assert_int_equal(log.all.count[NF_HINT], 6);
}

/* 2.27-2.30 node lines: Data Direct (both formats), libibverbs missing (both). */
static void test_node_lines(void **state)
{
	static const char *const l[] = {
		"a:1:1 [0] NCCL INFO Data Direct DMA Interface is detected for device:mlx5_0",
		"a:1:1 [0] NCCL INFO NET/IB: Data Direct DMA Interface is detected for device "
		"mlx5_1",
		"a:1:1 [0] NCCL INFO Count not open libibverbs.so",
		NULL,
	};
	struct gdr_nccl_log log;

	(void)state;
	feed(&log, l);
	assert_int_equal(log.all.count[NF_DATA_DIRECT], 2);
	assert_int_equal(log.all.devs.nnic, 2);
	assert_string_equal(log.all.devs.nic[0], "mlx5_0");
	assert_string_equal(log.all.devs.nic[1], "mlx5_1");
	assert_int_equal(log.all.count[NF_NO_VERBS], 1);
	{
		/* 2.27.3 to 2.27.5 offer the Data Direct device beside the PCIe one. */
		const char *const l2[] = {
			"a:1:1 [0] NCCL INFO NCCL version 2.27.5+cuda12.9",
			"a:1:1 [0] NCCL INFO Data Direct DMA Interface is detected for "
			"device:mlx5_0",
			"a:1:1 [0] NCCL INFO DMA-BUF is available on GPU device 0",
			"a:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via "
			"NET/IB/1/GDRDMA",
			NULL,
		};

		assert_int_equal(feed(&log, l2), GDR_NCCL_DMABUF);
		assert_non_null(
		    strstr(log.reason, "offer it as a second device beside the PCIe one"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_and_version),
		cmocka_unit_test(test_dmabuf_capability_is_not_use),
		cmocka_unit_test(test_dmabuf_when_gdr_and_gpu_capable),
		cmocka_unit_test(test_old_version_is_peermem),
		cmocka_unit_test(test_version_out_of_range),
		cmocka_unit_test(test_gdr_without_context_is_unknown),
		cmocka_unit_test(test_bootstrap_socket_is_not_transport),
		cmocka_unit_test(test_socket_channels),
		cmocka_unit_test(test_plugin_dmabuf_but_nccl_disables),
		cmocka_unit_test(test_distance_parsed),
		cmocka_unit_test(test_not_nccl),
		cmocka_unit_test(test_strip_each_prefix),
		cmocka_unit_test(test_prefixes_keep_one_process),
		cmocka_unit_test(test_split_record_joined),
		cmocka_unit_test(test_two_runs_judged_per_process),
		cmocka_unit_test(test_guide_line_is_not_evidence),
		cmocka_unit_test(test_hca_line_of_other_transport),
		cmocka_unit_test(test_level_fix_per_release),
		cmocka_unit_test(test_no_module_2_4),
		cmocka_unit_test(test_warn_lines),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_warn_timestamp_same_process),
		cmocka_unit_test(test_banner_never_continued),
		cmocka_unit_test(test_app_lines_not_joined),
		cmocka_unit_test(test_numeric_level_releases),
		cmocka_unit_test(test_error_events),
		cmocka_unit_test(test_node_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
