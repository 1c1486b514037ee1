/* PCIe config decoding, link and port rates, the ceiling, and libpci on a fixture root. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ceiling.h"
#include "pcie_cfg.h"
#include "report.h"

static void test_link_rates(void **state)
{
	char buf[32];

	(void)state;
	/* 8b/10b for gen1/2, 128b/130b from gen3. */
	assert_float_equal(gdr_pcie_link_gbps(1, 16), 32.0, 1e-9);
	assert_float_equal(gdr_pcie_link_gbps(2, 8), 32.0, 1e-9);
	assert_float_equal(gdr_pcie_link_gbps(3, 16), 8.0 * 16 * 128 / 130, 1e-9);
	assert_float_equal(gdr_pcie_link_gbps(4, 16), 252.0615, 1e-3);
	assert_float_equal(gdr_pcie_link_gbps(5, 16), 504.123, 1e-3);
	assert_float_equal(gdr_pcie_link_gbps(0, 16), 0, 0);
	assert_float_equal(gdr_pcie_link_gbps(7, 16), 0, 0);
	assert_float_equal(gdr_pcie_link_gbps(4, 0), 0, 0);
	assert_string_equal(gdr_pcie_link_text(4, 8, buf, sizeof(buf)), "gen4 x8");
	assert_string_equal(gdr_pcie_link_text(0, 8, buf, sizeof(buf)), "unknown");
}

static void test_decode(void **state)
{
	struct gdr_pcie_regs r;
	struct gdr_pcie_dev d;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&d, 0, sizeof(d));
	r.vendor = 0x15b3;
	r.exp_found = 1;
	r.exp_flags = 0x0062;			  /* v2, downstream port */
	r.devcap = 0x2;				  /* MPS supported 512 */
	r.devctl = (1 << 5) | (5 << 12) | 0x0010; /* MPS 256, MRRS 4096, RO */
	r.lnkcap = 0x4 | (16 << 4);
	r.lnksta = 0x3 | (8 << 4);
	r.acs_found = 1;
	r.acs_ctrl = 0x0004; /* ReqRedir */
	r.ats_found = 1;
	r.ats_ctrl = 0x8000;
	gdr_pcie_decode(&r, &d);
	assert_true(d.readable);
	assert_true(d.is_pcie);
	assert_int_equal(d.type, GDR_PCIE_DOWNSTREAM);
	assert_int_equal(d.mps_cap, 512);
	assert_int_equal(d.mps, 256);
	assert_int_equal(d.mrrs, 4096);
	assert_true(d.relaxed);
	assert_int_equal(d.cap_gen, 4);
	assert_int_equal(d.cap_width, 16);
	assert_int_equal(d.sta_gen, 3);
	assert_int_equal(d.sta_width, 8);
	assert_true(gdr_pcie_acs_redirects(&d));
	assert_true(d.ats_enabled);

	/* Completion Redirect alone redirects too; Source Validation alone does not. */
	r.acs_ctrl = 0x0008;
	gdr_pcie_decode(&r, &d);
	assert_true(gdr_pcie_acs_redirects(&d));
	r.acs_ctrl = 0x0011;
	gdr_pcie_decode(&r, &d);
	assert_false(gdr_pcie_acs_redirects(&d));

	/* Reserved size codes do not make sizes past 4096 B. */
	r.devctl = (7 << 5) | (6 << 12);
	gdr_pcie_decode(&r, &d);
	assert_int_equal(d.mps, 4096);
	assert_int_equal(d.mrrs, 4096);
	assert_false(d.relaxed);

	/* A config file that reads as all ones is not readable. */
	r.vendor = 0xffff;
	gdr_pcie_decode(&r, &d);
	assert_false(d.readable);
	assert_false(d.is_pcie);
	assert_false(d.has_acs);
	assert_int_equal(d.type, -1);
}

static void test_norm_bdf(void **state)
{
	char out[GDR_PCIE_BDF_LEN];

	(void)state;
	assert_int_equal(gdr_pcie_norm_bdf("00000000:19:00.0", out, sizeof(out)), 0);
	assert_string_equal(out, "0000:19:00.0");
	assert_int_equal(gdr_pcie_norm_bdf("3B:00.1", out, sizeof(out)), 0);
	assert_string_equal(out, "0000:3b:00.1");
	assert_int_equal(gdr_pcie_norm_bdf("0000:19:00.0x", out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_pcie_norm_bdf("0000:19:20.0", out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_pcie_norm_bdf("mlx5_0", out, sizeof(out)), -EINVAL);
}

static void test_port_rates(void **state)
{
	(void)state;
	/* IB: SDR..QDR less 8b/10b, FDR less 64b/66b, EDR and up as named. */
	assert_float_equal(gdr_ib_port_gbps(1, 2, 0), 8.0, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(4, 2, 0), 32.0, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(16, 2, 0), 54.56, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(32, 2, 0), 100.0, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(64, 2, 0), 200.0, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(128, 2, 0), 400.0, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(64, 16, 0), 100.0, 1e-9); /* 2X HDR */
	/* RoCE: the codes stand for an Ethernet speed (10 GbE = QDR 1X). */
	assert_float_equal(gdr_ib_port_gbps(4, 1, 1), 10.0, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(32, 2, 1), 100.0, 1e-9);
	assert_float_equal(gdr_ib_port_gbps(3, 2, 0), 0, 0);
	assert_float_equal(gdr_ib_port_gbps(32, 3, 0), 0, 0);

	assert_float_equal(gdr_ib_rate_text_gbps("200 Gb/sec (4X HDR)", 0), 200.0, 1e-9);
	assert_float_equal(gdr_ib_rate_text_gbps("40 Gb/sec (4X QDR)", 0), 32.0, 1e-9);
	assert_float_equal(gdr_ib_rate_text_gbps("10 Gb/sec (1X QDR)", 1), 10.0, 1e-9);
	assert_float_equal(gdr_ib_rate_text_gbps("25 Gb/sec", 1), 25.0, 1e-9);
	assert_float_equal(gdr_ib_rate_text_gbps("garbage", 0), 0, 0);
	/* A rate that is no number (a damaged sysfs file) is unknown, not an infinite port. */
	assert_true(gdr_ib_rate_text_gbps("inf Gb/sec", 0) == 0);
	assert_true(gdr_ib_rate_text_gbps("1e999 Gb/sec", 0) == 0);
}

static void test_ceiling_compute(void **state)
{
	struct gdr_ceiling c;
	char buf[200];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.port_gbps = 200;
	c.nic_pcie_gbps = 126;
	c.gpu_pcie_gbps = 252;
	gdr_ceiling_compute(&c, 1);
	assert_float_equal(c.gbps, 126, 1e-9);
	assert_string_equal(c.limit, "NIC PCIe");
	c.gpu_pcie_gbps = 63;
	gdr_ceiling_compute(&c, 1);
	assert_string_equal(c.limit, "GPU PCIe");
	/* Host memory: the GPU does not count. */
	gdr_ceiling_compute(&c, 0);
	assert_float_equal(c.gbps, 126, 1e-9);
	/* Any part that applies unknown: unknown, not the minimum of the rest. */
	c.gpu_pcie_gbps = 0;
	gdr_ceiling_compute(&c, 1);
	assert_float_equal(c.gbps, 0, 0);
	assert_string_equal(gdr_ceiling_text(&c, 1, buf, sizeof(buf)),
			    "unknown (port 200.0, NIC PCIe 126.0, GPU PCIe unknown)");
	/* Soft-RoCE: no NIC PCIe link at all, the port rate rxe reports is the limit. */
	c.nic_pcie_gbps = 0;
	c.nic_not_pci = 1;
	gdr_ceiling_compute(&c, 0);
	assert_float_equal(c.gbps, 200, 1e-9);
	assert_string_equal(c.limit, "port");
}

static void test_ceiling_pct(void **state)
{
	struct gdr_result r;

	(void)state;
	gdr_result_init(&r);
	r.bw_avg_gbps = 90;
	gdr_ceiling_pct(&r);
	assert_true(r.pct_of_ceiling < 0);
	r.ceiling_gbps = 200;
	gdr_ceiling_pct(&r);
	assert_float_equal(r.pct_of_ceiling, 45.0, 1e-9);
}

static const char *fixture(const char *name, char *buf, size_t len)
{
	const char *src = getenv("top_srcdir");

	snprintf(buf, len, "%s/tests/doctor/roots/%s", src ? src : ".", name);
	return buf;
}

static void test_libpci_fixture(void **state)
{
	char root[4096], chain[GDR_PCIE_MAX_CHAIN][GDR_PCIE_BDF_LEN], bdf[GDR_PCIE_BDF_LEN];
	struct gdr_pcie *p = NULL;
	struct gdr_pcie_dev d;
	struct gdr_ceiling c;
	int gen, width;

	(void)state;
	fixture("pcie-acs", root, sizeof(root));
	assert_int_equal(gdr_pcie_open(&p, root), 0);
	assert_int_equal(gdr_pcie_read(p, "0000:02:00.0", &d), 0);
	assert_int_equal(d.type, GDR_PCIE_DOWNSTREAM);
	assert_true(gdr_pcie_acs_redirects(&d));
	assert_int_equal(gdr_pcie_read(p, "0000:03:00.0", &d), 0);
	assert_int_equal(d.vendor, 0x10de);
	assert_int_equal(d.type, GDR_PCIE_ENDPOINT);
	assert_int_equal(d.bar_size[1], 64ull << 30);
	assert_false(d.has_acs);
	assert_int_equal(gdr_pcie_read(p, "0000:99:00.0", &d), -ENOENT);
	assert_float_equal(gdr_pcie_endpoint_gbps(p, root, "0000:04:00.0", &gen, &width), 252.0615,
			   1e-3);
	gdr_pcie_close(p);

	assert_int_equal(gdr_pcie_chain(root, "0000:03:00.0", chain, GDR_PCIE_MAX_CHAIN), 4);
	assert_string_equal(chain[0], "0000:00:01.0");
	assert_string_equal(chain[2], "0000:02:00.0");
	assert_int_equal(gdr_pcie_chain(root, "0000:03:00.0", chain, 2), -E2BIG);
	assert_int_equal(gdr_pcie_ibdev_bdf(root, "mlx5_0", bdf, sizeof(bdf)), 0);
	assert_string_equal(bdf, "0000:04:00.0");
	assert_int_equal(gdr_pcie_ibdev_bdf(root, "../x", bdf, sizeof(bdf)), -EINVAL);

	/* The narrow NIC link is what bounds that pair. */
	fixture("pcie-link-narrow", root, sizeof(root));
	assert_int_equal(gdr_ceiling_sysfs(root, "mlx5_0", 0, "03:00.0", &c), 0);
	assert_float_equal(c.port_gbps, 200, 1e-9);
	assert_float_equal(c.nic_pcie_gbps, 126.03, 1e-2);
	assert_string_equal(c.limit, "NIC PCIe");

	/* A root without sys/bus/pci is refused before libpci sees it. */
	fixture("no-driver", root, sizeof(root));
	assert_int_equal(gdr_pcie_open(&p, root), -ENOENT);
	assert_null(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_rates),	cmocka_unit_test(test_decode),
		cmocka_unit_test(test_norm_bdf),	cmocka_unit_test(test_port_rates),
		cmocka_unit_test(test_ceiling_compute), cmocka_unit_test(test_ceiling_pct),
		cmocka_unit_test(test_libpci_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
