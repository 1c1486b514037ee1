#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "doctor.h"
#include "text.h"
#include "topo.h"

static void test_kernel_version(void **state)
{
	int ma, mi;

	(void)state;
	assert_int_equal(gdr_kernel_version_parse("5.15.0-91-generic", &ma, &mi), 0);
	assert_int_equal(ma, 5);
	assert_int_equal(mi, 15);
	assert_int_equal(gdr_kernel_version_parse("6.8", &ma, &mi), 0);
	assert_int_equal(mi, 8);
	assert_int_not_equal(gdr_kernel_version_parse("linux", &ma, &mi), 0);
	assert_int_not_equal(gdr_kernel_version_parse("5", &ma, &mi), 0);
}

static void test_nvidia_version(void **state)
{
	char v[32];
	int open;

	(void)state;
	assert_int_equal(
	    gdr_nvidia_version_parse("NVRM version: NVIDIA UNIX Open Kernel Module for "
				     "x86_64  550.54.15  Release Build  (dvs@x)  Tue Mar",
				     v, sizeof(v), &open),
	    0);
	assert_string_equal(v, "550.54.15");
	assert_true(open);
	assert_int_equal(gdr_nvidia_version_parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
						  "535.104.05  Sat Aug 19 01:15:15 UTC 2023",
						  v, sizeof(v), &open),
			 0);
	assert_string_equal(v, "535.104.05");
	assert_false(open);
	assert_int_not_equal(gdr_nvidia_version_parse("garbage", v, sizeof(v), &open), 0);
}

static void test_kconfig(void **state)
{
	const char *cfg = "# comment\nCONFIG_DMA_SHARED_BUFFER_X=y\nCONFIG_DMA_SHARED_BUFFER=y\n"
			  "CONFIG_INFINIBAND=m\n# CONFIG_FOO is not set\n";

	(void)state;
	assert_int_equal(gdr_kconfig_lookup(cfg, "DMA_SHARED_BUFFER"), 'y');
	assert_int_equal(gdr_kconfig_lookup(cfg, "INFINIBAND"), 'm');
	assert_int_equal(gdr_kconfig_lookup(cfg, "FOO"), 'n');
	assert_int_equal(gdr_kconfig_lookup("CONFIG_DMA_SHARED_BUFFER_X=y\n", "DMA_SHARED_BUFFER"),
			 'n');
}

static void test_memlock(void **state)
{
	unsigned long long v;

	(void)state;
	assert_int_equal(
	    gdr_limits_memlock_parse(
		"Max locked memory         65536                65536                bytes\n", &v),
	    0);
	assert_true(v == 65536);
	assert_int_equal(
	    gdr_limits_memlock_parse(
		"Max locked memory         unlimited            unlimited            bytes\n", &v),
	    0);
	assert_true(v == ULLONG_MAX);
	assert_int_not_equal(gdr_limits_memlock_parse("Max open files 1024\n", &v), 0);
	/* Past 2^64 (strtoull's ULLONG_MAX) is malformed, never "unlimited". */
	assert_int_not_equal(gdr_limits_memlock_parse("Max locked memory 99999999999999999999999 "
						      "99999999999999999999999 bytes\n",
						      &v),
			     0);
	assert_int_not_equal(
	    gdr_limits_memlock_parse("Max locked memory 65536kB 65536 bytes\n", &v), 0);
}

/* The doctor reads NCCL_NET_GDR_LEVEL with the topology module's parser, newer names included. */
static void test_gdr_level(void **state)
{
	enum gdr_nccl_level l;
	char why[256];

	(void)state;
	assert_int_equal(gdr_nccl_parse_level("LOC", &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_LOC);
	assert_int_equal(gdr_nccl_parse_level("NVL", &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_LOC);
	assert_int_equal(gdr_nccl_parse_level("PXN", &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_PXB);
	assert_int_equal(gdr_nccl_parse_level("3", &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_PHB);
	assert_int_equal(gdr_nccl_parse_level("9", &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_SYS);
	assert_int_equal(gdr_nccl_parse_level("pix", &l, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_nccl_parse_level("FAR", &l, why, sizeof(why)), -EINVAL);
}

static void test_verdict(void **state)
{
	struct gdr_doctor doc;
	struct gdr_verdict v;
	struct gdr_check *c;

	(void)state;
	gdr_doctor_init(&doc, NULL);
	assert_string_equal(doc.root, "/");
	/* Nothing checked: nothing rules a path out, nothing proves one. */
	gdr_doctor_verdict(&doc, &v);
	assert_string_equal(v.text, "DMA-BUF possible, not probed; nvidia-peermem possible, not "
				    "probed");
	assert_true(gdr_verdict_meets(&v, GDR_EXPECT_DMABUF));
	/* Both sides of DMA-BUF proved: ready, and first. */
	c = gdr_doctor_add(&doc, "gpu0.dmabuf", GDR_CHECK_PASS, 0);
	c->proves = GDR_BLOCK_DMABUF;
	c = gdr_doctor_add(&doc, "mlx5_0.dmabuf", GDR_CHECK_PASS, 0);
	c->proves = GDR_BLOCK_DMABUF;
	c->side = GDR_SIDE_NIC;
	gdr_doctor_verdict(&doc, &v);
	assert_int_equal(v.paths[0].path, GDR_BLOCK_DMABUF);
	assert_int_equal(v.paths[0].state, GDR_STATE_READY);
	assert_string_equal(v.text, "DMA-BUF available; nvidia-peermem possible, not probed");
	/* A GPU-side blocker: peermem moves first. */
	c = gdr_doctor_add(&doc, "kernel", GDR_CHECK_FAIL, GDR_BLOCK_DMABUF);
	gdr_check_value(c, "4.18 is older than 5.12");
	gdr_doctor_verdict(&doc, &v);
	assert_int_equal(v.paths[0].path, GDR_BLOCK_PEERMEM);
	assert_string_equal(v.text, "nvidia-peermem possible, not probed");
	assert_true(gdr_verdict_meets(&v, GDR_EXPECT_ANY));
	assert_false(gdr_verdict_meets(&v, GDR_EXPECT_DMABUF));
	/* A NIC-side blocker of both: every blocker listed, GPU side first. */
	c = gdr_doctor_add(&doc, "rdma-devices", GDR_CHECK_FAIL, GDR_BLOCK_BOTH);
	c->side = GDR_SIDE_NIC;
	gdr_check_value(c, "no RDMA devices");
	gdr_check_brief(c, "no RDMA device");
	gdr_doctor_verdict(&doc, &v);
	assert_string_equal(v.text, "no GPUDirect RDMA: no RDMA device");
	assert_int_equal(v.paths[1].path, GDR_BLOCK_DMABUF);
	assert_int_equal(v.paths[1].nblockers, 2);
	assert_string_equal(v.paths[1].line, "blocked: 4.18 is older than 5.12; no RDMA device");
	assert_int_equal(v.paths[1].side[GDR_SIDE_GPU], GDR_STATE_BLOCKED);
	assert_false(gdr_verdict_meets(&v, GDR_EXPECT_ANY));
	assert_true(gdr_verdict_meets(&v, GDR_EXPECT_NONE));
	assert_int_equal(gdr_expect_parse("any"), GDR_EXPECT_ANY);
	assert_true(gdr_expect_parse("dma-buf") < 0);
}

/* Long values wrap under their column at spaces; a word longer than a line is never cut. */
static void test_wrap(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	fputs("head: ", f);
	gdr_text_wrap(f, "aaaa bbbb cccc /a/very/long/path/that/does/not/fit/anywhere dd", 6, 4,
		      20);
	/* First on its line and longer than it: stays there, whole. */
	gdr_text_wrap(f, "/log/in/a/deep/directory/nccl.log: dmabuf (it is ok)", 0, 4, 20);
	fclose(f);
	/* 20 columns where the words allow; the long word whole on a line of its own. */
	assert_string_equal(buf, "head: aaaa bbbb cccc\n    /a/very/long/path/that/does/not/fit/anywhere\n"
				 "    dd\n"
				 "/log/in/a/deep/directory/nccl.log:\n    dmabuf (it is\n    ok)\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_version), cmocka_unit_test(test_nvidia_version),
		cmocka_unit_test(test_kconfig),	       cmocka_unit_test(test_memlock),
		cmocka_unit_test(test_gdr_level),      cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_wrap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
