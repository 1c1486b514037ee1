#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "nccl_settings.h"
#include "topo.h"

static const char *xml(const char *name, char *buf, size_t len)
{
	const char *src = getenv("top_srcdir");

	snprintf(buf, len, "%s/tests/topo/%s", src ? src : ".", name);
	return buf;
}

static struct gdr_topo *load(const char *name)
{
	struct gdr_topo *t;
	char path[4096], why[512];
	int err = gdr_topo_load(&t, xml(name, path, sizeof(path)), NULL, why, sizeof(why));

	if (err)
		fail_msg("%s: %s", name, why);
	return t;
}

static struct gdr_topo_pair pair(struct gdr_topo *t, const char *gpu, const char *nic)
{
	struct gdr_topo_pair p;

	assert_int_equal(gdr_topo_pair(t, gpu, nic, &p), 0);
	return p;
}

#define assert_pair(t, gpu, nic, cls_, sw, br, hb)                                                 \
	do {                                                                                       \
		struct gdr_topo_pair p_ = pair(t, gpu, nic);                                       \
		assert_string_equal(gdr_topo_class_name(p_.cls), gdr_topo_class_name(cls_));       \
		assert_int_equal(p_.switches, sw);                                                 \
		assert_int_equal(p_.bridges, br);                                                  \
		assert_int_equal(p_.host_bridges, hb);                                             \
	} while (0)

static void test_switches(void **state)
{
	struct gdr_topo *t = load("switches.xml");

	(void)state;
	/* Sibling downstream ports of one switch: the switch counts once. */
	assert_pair(t, "0000:03:00.0", "mlx5_0", GDR_TOPO_PIX, 1, 3, 0);
	/* Through a nested switch: two switches, no host bridge. */
	assert_pair(t, "0000:03:00.0", "mlx5_1", GDR_TOPO_PXB, 2, 5, 0);
	assert_pair(t, "0000:07:00.0", "mlx5_1", GDR_TOPO_PIX, 1, 3, 0);
	assert_pair(t, "0000:07:00.0", "mlx5_0", GDR_TOPO_PXB, 2, 5, 0);
	/* Same bus below a plain bridge: one bridge, not a switch. */
	assert_pair(t, "0000:11:00.0", "mlx5_2", GDR_TOPO_PIX, 0, 1, 0);
	/* Two root ports of one host bridge. */
	assert_pair(t, "0000:03:00.0", "mlx5_2", GDR_TOPO_PHB, 1, 5, 1);
	gdr_topo_free(t);
}

static void test_hostbridges(void **state)
{
	struct gdr_topo *t = load("hostbridges.xml");
	struct gdr_topo_pair p;

	(void)state;
	assert_pair(t, "0000:01:00.0", "mlx5_0", GDR_TOPO_PHB, 0, 2, 1);
	assert_pair(t, "0000:41:00.0", "mlx5_0", GDR_TOPO_NODE, 0, 2, 2);
	/* A NIC on the other package. */
	assert_pair(t, "0000:01:00.0", "mlx5_2", GDR_TOPO_SYS, 0, 2, 2);
	p = pair(t, "0000:c1:00.0", "mlx5_0");
	assert_int_equal(p.gpu_numa, 1);
	assert_int_equal(p.nic_numa, 0);
	assert_string_equal(p.reason, "");
	gdr_topo_free(t);
}

static void test_snc(void **state)
{
	struct gdr_topo *t = load("snc2.xml");
	struct gdr_topo_pair p;

	(void)state;
	/* One package, two sub-NUMA nodes: SYS, as nvidia-smi reports it. */
	assert_pair(t, "0000:11:00.0", "mlx5_0", GDR_TOPO_SYS, 0, 2, 2);
	assert_pair(t, "0000:31:00.0", "mlx5_0", GDR_TOPO_NODE, 0, 2, 2);
	/* A host bridge attached to the whole package has no single NUMA node. */
	p = pair(t, "0000:41:00.0", "mlx5_0");
	assert_int_equal(p.cls, GDR_TOPO_SYS);
	assert_int_equal(p.gpu_numa, -1);
	assert_non_null(strstr(p.reason, "0000:41:00.0 is not attached to a single NUMA node"));
	gdr_topo_free(t);

	/* The real SNC4 export: same package, different sub-NUMA node. */
	t = load("xml/dell-xe8640-h100-spr-snc4.xml");
	p = pair(t, "0000:cb:00.0", "mlx5_3");
	assert_int_equal(p.cls, GDR_TOPO_SYS);
	assert_int_equal(p.gpu_numa, 7);
	assert_int_equal(p.nic_numa, 5);
	assert_pair(t, "0000:4e:00.0", "mlx5_1", GDR_TOPO_PIX, 1, 3, 0);
	gdr_topo_free(t);
}

static void test_not_pci(void **state)
{
	struct gdr_topo *t = load("soft-roce.xml");
	struct gdr_topo_pair p;

	(void)state;
	p = pair(t, "0000:01:00.0", "rxe0");
	assert_int_equal(p.cls, GDR_TOPO_UNKNOWN);
	assert_int_equal(p.bridges, -1);
	assert_string_equal(p.nic_bus_id, "");
	assert_string_equal(p.reason, "rxe0: not attached to a PCI device in the topology");
	p = pair(t, "0000:01:00.0", "mlx5_9");
	assert_int_equal(p.cls, GDR_TOPO_UNKNOWN);
	assert_string_equal(p.reason, "mlx5_9: no such RDMA device in the topology");
	p = pair(t, "0000:99:00.0", "mlx5_0");
	assert_int_equal(p.cls, GDR_TOPO_UNKNOWN);
	assert_int_equal(p.gpu_index, -1);
	assert_string_equal(p.reason, "GPU 0000:99:00.0 is not in the topology");
	assert_int_equal(gdr_topo_pair(t, "gpu0", "mlx5_0", &p), -EINVAL);
	gdr_topo_free(t);
}

static void test_gpus_and_nics(void **state)
{
	struct gdr_topo *t = load("switches.xml");
	static const char *const bus[] = { "0000:03:00.0", "0000:07:00.0", "0000:11:00.0",
					   "0000:20:00.1" };
	int i;

	(void)state;
	/* NVSwitch (0680), the HDMI audio function (0403) and the BMC's VGA are not GPUs;
	 * the 0380 function is one because it carries a CUDA device. */
	assert_int_equal(gdr_topo_gpu_count(t), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(gdr_topo_gpu(t, i)->index, i);
		assert_string_equal(gdr_topo_gpu(t, i)->bus_id, bus[i]);
	}
	assert_string_equal(gdr_topo_gpu(t, 0)->name, "NVIDIA H100 80GB HBM3");
	assert_string_equal(gdr_topo_gpu(t, 2)->name, "NVIDIA [10de:2204]");
	assert_null(gdr_topo_gpu(t, 4));
	assert_ptr_equal(gdr_topo_find_gpu(t, "07:00.0"), gdr_topo_gpu(t, 1));
	assert_ptr_equal(gdr_topo_find_gpu(t, "00000000:07:00.0"), gdr_topo_gpu(t, 1));
	assert_null(gdr_topo_find_gpu(t, "0000:20:00.0"));
	assert_int_equal(gdr_topo_nic_count(t), 3);
	assert_string_equal(gdr_topo_find_nic(t, "mlx5_2")->bus_id, "0000:11:00.2");
	assert_null(gdr_topo_find_nic(t, "ib0"));
	gdr_topo_free(t);

	/* mlx5_10 sorts after mlx5_9. */
	t = load("xml/nvidia-dgx2h-v100-cx5.xml");
	assert_int_equal(gdr_topo_gpu_count(t), 16);
	assert_int_equal(gdr_topo_nic_count(t), 11);
	assert_string_equal(gdr_topo_nic(t, 9)->name, "mlx5_9");
	assert_string_equal(gdr_topo_nic(t, 10)->name, "mlx5_10");
	gdr_topo_free(t);
}

static void test_busid(void **state)
{
	char b[GDR_BUSID_LEN];

	(void)state;
	assert_int_equal(gdr_topo_busid_norm("19:00.0", b, sizeof(b)), 0);
	assert_string_equal(b, "0000:19:00.0");
	assert_int_equal(gdr_topo_busid_norm("00000000:1A:00.1", b, sizeof(b)), 0);
	assert_string_equal(b, "0000:1a:00.1");
	assert_int_equal(gdr_topo_busid_norm("0035:04:00.0", b, sizeof(b)), 0);
	assert_string_equal(b, "0035:04:00.0");
	assert_int_equal(gdr_topo_busid_norm("0000:19:00.8", b, sizeof(b)), -EINVAL);
	assert_int_equal(gdr_topo_busid_norm("0000:19:20.0", b, sizeof(b)), -EINVAL);
	assert_int_equal(gdr_topo_busid_norm("0000:19:00.0x", b, sizeof(b)), -EINVAL);
	assert_int_equal(gdr_topo_busid_norm("mlx5_0", b, sizeof(b)), -EINVAL);
	assert_int_equal(gdr_topo_busid_norm("19.00:0", b, sizeof(b)), -EINVAL);
	assert_int_equal(gdr_topo_busid_norm("0000:19:00", b, sizeof(b)), -EINVAL);
	assert_int_equal(gdr_topo_busid_norm("0000:-19:00.0", b, sizeof(b)), -EINVAL);
	assert_int_equal(gdr_topo_busid_norm(NULL, b, sizeof(b)), -EINVAL);
}

static int not_mlx5_0(const char *nic, void *arg)
{
	(void)arg;
	return strcmp(nic, "mlx5_0") != 0;
}

static int none(const char *nic, void *arg)
{
	(void)nic;
	(*(int *)arg)++;
	return 0;
}

static void test_nearest(void **state)
{
	struct gdr_topo *t = load("hostbridges.xml");
	struct gdr_topo_pair p;
	int calls = 0;

	(void)state;
	/* mlx5_0 and mlx5_1 are both PHB to GPU0: the tie goes by name. */
	assert_int_equal(gdr_topo_nearest_nic(t, "0000:01:00.0", NULL, NULL, &p), 0);
	assert_string_equal(p.nic, "mlx5_0");
	assert_int_equal(p.cls, GDR_TOPO_PHB);
	assert_int_equal(gdr_topo_nearest_nic(t, "0000:01:00.0", not_mlx5_0, NULL, &p), 0);
	assert_string_equal(p.nic, "mlx5_1");
	assert_int_equal(gdr_topo_nearest_nic(t, "0000:01:00.0", none, &calls, &p), -ENOENT);
	assert_int_equal(calls, 3);
	assert_int_equal(gdr_topo_nearest_nic(t, "0000:c2:00.0", NULL, NULL, &p), 0);
	assert_string_equal(p.nic, "mlx5_2");
	assert_int_equal(p.cls, GDR_TOPO_NODE);
	/* GPU2 and GPU3 are both NODE to mlx5_2: the tie goes by index. */
	assert_int_equal(gdr_topo_nearest_gpu(t, "mlx5_2", &p), 0);
	assert_int_equal(p.gpu_index, 2);
	assert_int_equal(gdr_topo_nearest_gpu(t, "mlx5_1", &p), 0);
	assert_int_equal(p.gpu_index, 0);
	assert_int_equal(p.cls, GDR_TOPO_PHB);
	gdr_topo_free(t);

	t = load("xml/nvidia-dgx2h-v100-cx5.xml");
	assert_int_equal(gdr_topo_nearest_nic(t, "0000:e5:00.0", NULL, NULL, &p), 0);
	assert_string_equal(p.nic, "mlx5_10");
	assert_int_equal(p.cls, GDR_TOPO_PIX);
	assert_int_equal(gdr_topo_nearest_gpu(t, "mlx5_2", &p), 0);
	assert_string_equal(p.gpu_bus_id, "0000:39:00.0");
	gdr_topo_free(t);

	t = load("no-nic.xml");
	assert_int_equal(gdr_topo_nic_count(t), 0);
	assert_int_equal(gdr_topo_bare_hca_count(t), 1);
	assert_string_equal(gdr_topo_bare_hca(t, 0), "0000:02:00.0");
	assert_int_equal(gdr_topo_nearest_nic(t, "0000:01:00.0", NULL, NULL, &p), -ENOENT);
	gdr_topo_free(t);
}

static void test_nccl_level(void **state)
{
	static const char *const names[] = { "LOC", "PIX", "PXB", "PHB", "SYS" };
	static const enum gdr_nccl_level legacy[] = { GDR_NCCL_LOC, GDR_NCCL_PIX, GDR_NCCL_PXB,
						      GDR_NCCL_PHB, GDR_NCCL_SYS, GDR_NCCL_SYS };
	enum gdr_nccl_level l;
	char why[256], num[8];
	unsigned int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		assert_int_equal(gdr_nccl_parse_level(names[i], &l, why, sizeof(why)), 0);
		assert_int_equal(l, i);
		assert_string_equal(gdr_nccl_level_name(l), names[i]);
	}
	for (i = 0; i < 6; i++) {
		snprintf(num, sizeof(num), "%u", i);
		assert_int_equal(gdr_nccl_parse_level(num, &l, why, sizeof(why)), 0);
		assert_int_equal(l, legacy[i]);
	}
	/* NCCL clamps larger numbers to its last legacy entry. */
	assert_int_equal(gdr_nccl_parse_level("7", &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_SYS);
	assert_int_equal(gdr_nccl_parse_level(NULL, &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_PXB);
	assert_int_equal(gdr_nccl_parse_level("", &l, why, sizeof(why)), 0);
	assert_int_equal(l, GDR_NCCL_PXB);

	assert_int_equal(gdr_nccl_parse_level("near", &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "NCCL_NET_GDR_LEVEL=near"));
	assert_int_equal(gdr_nccl_parse_level("pxb", &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "use PXB"));
	assert_int_equal(gdr_nccl_parse_level("2abc", &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "2abc"));
	assert_int_equal(gdr_nccl_parse_level("-1", &l, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_nccl_parse_level("PXB ", &l, why, sizeof(why)), -EINVAL);
}

static void test_nccl_read(void **state)
{
	char why[256];
	int r;

	(void)state;
	assert_int_equal(gdr_nccl_parse_read("0", &r, why, sizeof(why)), 0);
	assert_int_equal(r, 0);
	assert_int_equal(gdr_nccl_parse_read("1", &r, why, sizeof(why)), 0);
	assert_int_equal(r, 1);
	assert_int_equal(gdr_nccl_parse_read("2", &r, why, sizeof(why)), 0);
	assert_int_equal(r, 1);
	assert_int_equal(gdr_nccl_parse_read("-2", &r, why, sizeof(why)), 0);
	assert_int_equal(r, -1);
	assert_int_equal(gdr_nccl_parse_read(NULL, &r, why, sizeof(why)), 0);
	assert_int_equal(r, -1);
	assert_int_equal(gdr_nccl_parse_read("yes", &r, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "NCCL_NET_GDR_READ=yes"));
}

static void test_nccl_env(void **state)
{
	struct gdr_nccl_env env;
	char why[256];

	(void)state;
	unsetenv("NCCL_NET_GDR_LEVEL");
	unsetenv("NCCL_NET_GDR_READ");
	assert_int_equal(gdr_nccl_env_load(&env, why, sizeof(why)), 0);
	assert_int_equal(env.level, GDR_NCCL_PXB);
	assert_false(env.level_set);
	assert_int_equal(env.read, -1);
	setenv("NCCL_NET_GDR_LEVEL", "3", 1);
	setenv("NCCL_NET_GDR_READ", "0", 1);
	assert_int_equal(gdr_nccl_env_load(&env, why, sizeof(why)), 0);
	assert_int_equal(env.level, GDR_NCCL_PHB);
	assert_true(env.level_set);
	assert_int_equal(env.read, 0);
	setenv("NCCL_NET_GDR_LEVEL", "bogus", 1);
	assert_int_equal(gdr_nccl_env_load(&env, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "NCCL_NET_GDR_LEVEL=bogus"));
	unsetenv("NCCL_NET_GDR_LEVEL");
	unsetenv("NCCL_NET_GDR_READ");
}

static void test_nccl_settings(void **state)
{
	struct gdr_nccl_env env;
	char why[256];
	int v;

	(void)state;
	unsetenv("NCCL_NET_GDR_LEVEL");
	unsetenv("NCCL_NET_GDR_READ");
	unsetenv("NCCL_DMABUF_ENABLE");
	unsetenv("NCCL_NET_GDR_C2C");
	assert_int_equal(gdr_nccl_env_load(&env, why, sizeof(why)), 0);
	/* Unset: NCCL's defaults (PXB for every PCIe pair). */
	assert_int_equal(env.level, gdr_nccl_default_level());
	assert_int_equal(env.level, GDR_NCCL_PXB);
	assert_int_equal(gdr_nccl_dmabuf_on(&env), 1);
	assert_int_equal(gdr_nccl_c2c_on(&env), 1);
	setenv("NCCL_DMABUF_ENABLE", "0", 1);
	setenv("NCCL_NET_GDR_C2C", "0", 1);
	assert_int_equal(gdr_nccl_env_load(&env, why, sizeof(why)), 0);
	assert_int_equal(gdr_nccl_dmabuf_on(&env), 0);
	assert_int_equal(gdr_nccl_c2c_on(&env), 0);
	setenv("NCCL_NET_GDR_C2C", "yes", 1);
	assert_int_equal(gdr_nccl_env_load(&env, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "NCCL_NET_GDR_C2C=yes"));
	unsetenv("NCCL_DMABUF_ENABLE");
	unsetenv("NCCL_NET_GDR_C2C");
	assert_int_equal(gdr_nccl_parse_flag("X", "2", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 1);
	/* The level that enables GDR at each class: NODE is PHB to NCCL. */
	assert_int_equal(gdr_nccl_level_for(GDR_TOPO_PIX), GDR_NCCL_PIX);
	assert_int_equal(gdr_nccl_level_for(GDR_TOPO_NODE), GDR_NCCL_PHB);
	assert_int_equal(gdr_nccl_level_for(GDR_TOPO_SYS), GDR_NCCL_SYS);
	assert_string_equal(gdr_nccl_enable_text(GDR_NCCL_PHB, why, sizeof(why)),
			    "NCCL_NET_GDR_LEVEL=PHB");
	assert_int_equal(gdr_nccl_node_topo(NULL, NULL, "/fixture", why, sizeof(why)), -ENOENT);
}

/*
 * docs/usage-topo.md's table says what the code's does: each variable's row
 * names every release of its entries (v2.27.3-1) and its newest default.
 */
static void check_defaults_doc(const struct gdr_nccl_default *d, size_t n)
{
	const char *top = getenv("top_srcdir");
	char path[4096], line[4096], want[64];
	FILE *f;

	if (!top)
		top = ".";
	snprintf(path, sizeof(path), "%s/docs/usage-topo.md", top);
	f = fopen(path, "r");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++) {
		int found = 0;

		snprintf(want, sizeof(want), "| `%s` |", d[i].var);
		rewind(f);
		while (!found && fgets(line, sizeof(line), f)) {
			if (strncmp(line, want, strlen(want)))
				continue;
			found = 1;
			snprintf(want, sizeof(want), "v%s-1", d[i].since);
			if (!strstr(line, want))
				fail_msg("docs/usage-topo.md: %s's row lacks %s", d[i].var, want);
			/* The newest entry of the variable: its value in the "default now" column. */
			if (i + 1 == n || strcmp(d[i + 1].var, d[i].var)) {
				const char *col = strstr(line + strlen("| `") + strlen(d[i].var), "| ");

				snprintf(want, sizeof(want), strcmp(d[i].value, "unset") ? "`%s`" : "%s",
					 d[i].value);
				if (!col || strncmp(col + 2, want, strlen(want)))
					fail_msg("docs/usage-topo.md: %s's default is not %s", d[i].var,
						 want);
			}
		}
		if (!found)
			fail_msg("docs/usage-topo.md: no row for %s", d[i].var);
	}
	fclose(f);
}

/* NCCL's defaults per release: the one table, read by release. */
static void test_nccl_defaults(void **state)
{
	size_t n;
	const struct gdr_nccl_default *d = gdr_nccl_defaults(&n);
	char buf[512];
	int maj, min;

	(void)state;
	/* By variable, then by release: each later entry of a variable comes after. */
	for (size_t i = 1; i < n; i++)
		if (!strcmp(d[i].var, d[i - 1].var)) {
			int a[3], b[3];

			sscanf(d[i - 1].since, "%d.%d.%d", &a[0], &a[1], &a[2]);
			sscanf(d[i].since, "%d.%d.%d", &b[0], &b[1], &b[2]);
			assert_true(gdr_nccl_release_cmp(b[0], b[1], b[2], d[i - 1].since) > 0);
			assert_true(gdr_nccl_release_cmp(a[0], a[1], a[2], d[i].since) < 0);
		}
	/* The default in a release: the newest entry at or before it. */
	assert_string_equal(gdr_nccl_default_in("NCCL_NET_GDR_LEVEL", 2, 4, 7)->value, "2");
	assert_string_equal(gdr_nccl_default_in("NCCL_NET_GDR_LEVEL", 2, 5, 7)->value, "2");
	assert_string_equal(gdr_nccl_default_in("NCCL_NET_GDR_LEVEL", 2, 6, 4)->value, "PXB");
	assert_string_equal(gdr_nccl_default_in("NCCL_NET_GDR_LEVEL", 2, 28, 9)->value, "PXB");
	assert_string_equal(gdr_nccl_default_in("NCCL_NET_GDR_LEVEL", 2, 29, 2)->value, "P2C");
	assert_string_equal(gdr_nccl_default_in("NCCL_NET_GDR_C2C", 2, 26, 6)->value, "0");
	assert_string_equal(gdr_nccl_default_in("NCCL_NET_GDR_C2C", 2, 27, 3)->value, "1");
	assert_null(gdr_nccl_default_in("NCCL_NET_GDR_C2C", 2, 25, 1));
	assert_null(gdr_nccl_default_in("NCCL_DMABUF_ENABLE", 2, 12, 12));
	assert_string_equal(gdr_nccl_since("NCCL_DMABUF_ENABLE"), "2.13.4");
	assert_string_equal(gdr_nccl_since("NCCL_IB_DATA_DIRECT"), "2.27.3");
	assert_string_equal(gdr_nccl_since("NCCL_NET_GDR_MLOPART"), "2.30.7");
	assert_null(gdr_nccl_default_in("NCCL_NET_GDR_MLOPART", 2, 30, 4));
	/* A patch not known counts as the first of its series. */
	assert_true(gdr_nccl_release_cmp(2, 13, -1, "2.13.4") < 0);
	assert_int_equal(gdr_nccl_release_cmp(2, 13, 4, "2.13.4"), 0);
	assert_true(gdr_nccl_release_cmp(3, 0, 0, "2.13.4") > 0);
	/* The newest value, since when, and what it was before. */
	assert_string_equal(gdr_nccl_default_text("NCCL_NET_GDR_C2C", buf, sizeof(buf)),
			    "1 since NCCL 2.27.3, 0 before");
	assert_string_equal(gdr_nccl_default_text("NCCL_DMABUF_ENABLE", buf, sizeof(buf)),
			    "1 since NCCL 2.13.4");
	/* A change of meaning only (1 in 2.27.3 and in 2.27.6): since the first. */
	assert_string_equal(gdr_nccl_default_text("NCCL_IB_DATA_DIRECT", buf, sizeof(buf)),
			    "1 since NCCL 2.27.3");
	assert_int_equal(gdr_nccl_newest_series("NCCL_NET_GDR_READ", &maj, &min), 0);
	assert_int_equal(maj * 100 + min, 219);
	assert_int_equal(gdr_nccl_newest_series("NCCL_NO_SUCH", &maj, &min), -ENOENT);
	/* Every variable names the releases that changed it. */
	assert_non_null(
	    strstr(gdr_nccl_history("NCCL_NET_GDR_LEVEL", buf, sizeof(buf)), "2.4.2: 2, "));
	assert_non_null(strstr(buf, "; 2.6.4: PXB, "));
	assert_non_null(strstr(buf, "; 2.29.2: P2C, "));
	/* The judgments' values are the table's newest. */
	assert_int_equal(gdr_nccl_default_level(), GDR_NCCL_PXB);
	assert_int_equal(gdr_nccl_default_flag("NCCL_DMABUF_ENABLE"), 1);
	assert_int_equal(gdr_nccl_default_flag("NCCL_NET_GDR_C2C"), 1);
	assert_int_equal(gdr_nccl_default_flag("NCCL_NET_GDR_MLOPART"), 0);
	check_defaults_doc(d, n);
}

static void test_gpu_ranges(void **state)
{
	static const int idx[] = { 0, 1, 2, 3, 6, 8, 9 };
	char b[64];

	(void)state;
	assert_string_equal(gdr_topo_gpu_ranges(idx, 7, b, sizeof(b)), "GPU0-3, GPU6, GPU8-9");
	assert_string_equal(gdr_topo_gpu_ranges(idx + 4, 1, b, sizeof(b)), "GPU6");
	assert_string_equal(gdr_topo_gpu_ranges(idx, 0, b, sizeof(b)), "");
	/* Cut, never overrun. */
	assert_int_equal(strlen(gdr_topo_gpu_ranges(idx, 7, b, 8)), 7);
}

static void test_verdict(void **state)
{
	struct gdr_nccl_env env = { .level = GDR_NCCL_PXB, .read = -1 };
	char b[192];

	(void)state;
	assert_string_equal(gdr_nccl_verdict(&env, GDR_TOPO_PIX, b, sizeof(b)),
			    "NCCL would use GPUDirect RDMA: PIX <= PXB");
	assert_string_equal(gdr_nccl_verdict(&env, GDR_TOPO_PXB, b, sizeof(b)),
			    "NCCL would use GPUDirect RDMA: PXB <= PXB");
	assert_string_equal(gdr_nccl_verdict(&env, GDR_TOPO_SYS, b, sizeof(b)),
			    "NCCL would not use GPUDirect RDMA: SYS > PXB");
	assert_string_equal(gdr_nccl_verdict(&env, GDR_TOPO_NODE, b, sizeof(b)),
			    "NCCL would not use GPUDirect RDMA: NODE (PHB to NCCL) > PXB");
	assert_int_equal(gdr_nccl_would_use(&env, GDR_TOPO_UNKNOWN), -1);
	assert_string_equal(gdr_nccl_verdict(&env, GDR_TOPO_UNKNOWN, b, sizeof(b)),
			    "NCCL's GPUDirect RDMA choice unknown: distance unknown");
	env.level = GDR_NCCL_PHB;
	env.read = 0;
	assert_int_equal(gdr_nccl_would_use(&env, GDR_TOPO_NODE), 1);
	assert_string_equal(
	    gdr_nccl_verdict(&env, GDR_TOPO_NODE, b, sizeof(b)),
	    "NCCL would use GPUDirect RDMA: NODE (PHB to NCCL) <= PHB, receives only "
	    "(NCCL_NET_GDR_READ=0)");
	env.level = GDR_NCCL_LOC;
	assert_int_equal(gdr_nccl_would_use(&env, GDR_TOPO_PIX), 0);
}

static void test_describe(void **state)
{
	struct gdr_nccl_env env = { .level = GDR_NCCL_PXB, .read = -1 };
	struct gdr_topo *t = load("switches.xml");
	struct gdr_topo_pair p = pair(t, "03:00.0", "mlx5_0");
	char line[512];

	(void)state;
	assert_string_equal(gdr_topo_describe(&p, &env, line, sizeof(line)),
			    "topology: GPU0 NVIDIA H100 80GB HBM3 (0000:03:00.0) <-> mlx5_0 "
			    "(0000:04:00.0): PIX, 1 switch, 3 bridges, NUMA 0/0; NCCL would use "
			    "GPUDirect RDMA: PIX <= PXB");
	gdr_topo_free(t);
}

static void test_fill_result(void **state)
{
	struct gdr_topo *t = load("soft-roce.xml");
	struct gdr_topo_pair p = pair(t, "0000:01:00.0", "mlx5_0");
	struct gdr_result r = { .gpu_name = "NVIDIA L40S (from CUDA)" };

	(void)state;
	gdr_topo_fill_result(&p, &r);
	assert_string_equal(r.gpu, "0");
	assert_string_equal(r.gpu_bus_id, "0000:01:00.0");
	assert_string_equal(r.gpu_name, "NVIDIA L40S (from CUDA)");
	assert_string_equal(r.nic, "mlx5_0");
	assert_string_equal(r.nic_bus_id, "0000:02:00.0");
	assert_string_equal(r.distance, "PHB");
	assert_string_equal(r.pcie_bridges, "2");
	assert_string_equal(r.gpu_numa, "0");
	assert_string_equal(r.nic_numa, "0");
	p = pair(t, "0000:01:00.0", "rxe0");
	r.gpu_name[0] = '\0';
	gdr_topo_fill_result(&p, &r);
	assert_string_equal(r.gpu_name, "NVIDIA L40S");
	assert_string_equal(r.distance, "unknown");
	assert_string_equal(r.pcie_bridges, "");
	assert_string_equal(r.nic_bus_id, "");
	assert_string_equal(r.nic_numa, "");
	gdr_topo_free(t);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *root, const char *rel)
{
	char path[4096], *s;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	mkdir(path, 0755);
}

/* NICs hwloc does not show are found through ROOT/sys/class/infiniband. */
static void test_sysfs_fallback(void **state)
{
	char root[] = "/tmp/gdr-topo-XXXXXX", path[4096], link[4096], why[512], cmd[4200];
	struct gdr_topo *t;
	struct gdr_topo_pair p;

	(void)state;
	assert_non_null(mkdtemp(root));
	mkdirs(root, "sys/class/infiniband/rocep32s0");
	mkdirs(root, "sys/class/infiniband/rxe0");
	mkdirs(root, "sys/class/infiniband/mlx5_7");
	mkdirs(root, "sys/bus/pci/devices/0000:03:00.0");
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/rocep32s0/device", root);
	assert_int_equal(symlink("../../../devices/pci0000:00/0000:00:03.0/0000:20:00.0", path), 0);
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/mlx5_7/device", root);
	assert_int_equal(symlink("../../../devices/pci0000:90/0000:99:00.0", path), 0);
	put(root, "sys/bus/pci/devices/0000:03:00.0/current_link_speed", "32.0 GT/s PCIe\n");
	put(root, "sys/bus/pci/devices/0000:03:00.0/current_link_width", "16\n");

	assert_int_equal(
	    gdr_topo_load(&t, xml("switches.xml", link, sizeof(link)), root, why, sizeof(why)), 0);
	/* Three NICs from hwloc plus three from sysfs. */
	assert_int_equal(gdr_topo_nic_count(t), 6);
	p = pair(t, "0000:20:00.1", "rocep32s0");
	assert_string_equal(p.nic_bus_id, "0000:20:00.0");
	assert_int_equal(p.cls, GDR_TOPO_PIX); /* two functions below one root port */
	assert_int_equal(p.bridges, 1);
	p = pair(t, "0000:03:00.0", "rxe0");
	assert_int_equal(p.cls, GDR_TOPO_UNKNOWN);
	assert_non_null(strstr(p.reason, "rxe0: not a PCI device"));
	p = pair(t, "0000:03:00.0", "mlx5_7");
	assert_int_equal(p.cls, GDR_TOPO_UNKNOWN);
	assert_string_equal(p.nic_bus_id, "0000:99:00.0");
	assert_string_equal(p.reason, "mlx5_7: PCI 0000:99:00.0 is not in the topology");
	/* Link speed and width from sysfs, hwloc's GB/s where sysfs has none. */
	p = pair(t, "0000:03:00.0", "mlx5_0");
	assert_string_equal(p.gpu_link, "32.0 GT/s x16");
	assert_string_equal(p.nic_link, "31.51 GB/s");
	gdr_topo_free(t);

	/* Without a root prefix an XML topology never looks at this machine's sysfs. */
	t = load("switches.xml");
	assert_int_equal(gdr_topo_nic_count(t), 3);
	gdr_topo_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* rxe0 with no device link under ROOT/DIRS (DIRS made up to LEN bytes): its pair. */
static struct gdr_topo_pair deep_root_pair(const char *root, char *deep, size_t dlen, size_t len)
{
	char link[4096], why[512], rel[1200];
	struct gdr_topo *t;
	struct gdr_topo_pair p;

	while (strlen(deep) < len && strlen(deep) + 40 < dlen)
		strcat(deep, "/a-directory-name-of-some-length");
	snprintf(rel, sizeof(rel), "%s/sys/class/infiniband/rxe0", deep + strlen(root) + 1);
	mkdirs(root, rel);
	assert_int_equal(gdr_topo_load(&t, xml("switches.xml", link, sizeof(link)), deep, why,
				       sizeof(why)), 0);
	p = pair(t, "0000:03:00.0", "rxe0");
	gdr_topo_free(t);
	assert_int_equal(p.cls, GDR_TOPO_UNKNOWN);
	assert_int_equal(strncmp(p.reason, "rxe0: not a PCI device (", 24), 0);
	return p;
}

/*
 * A --root deep enough that the NIC's reason names a 300-byte path: the cause
 * after the path is whole (a CI checkout path once cut "No such file or
 * directory" to "No such file or"); past the buffer the cut ends in "...".
 */
static void test_sysfs_reason_long_root(void **state)
{
	char root[] = "/tmp/gdr-topo-long-XXXXXX", deep[1200], cmd[256];
	const char *cause = ": No such file or directory)";
	struct gdr_topo_pair p;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(deep, sizeof(deep), "%s", root);
	p = deep_root_pair(root, deep, sizeof(deep), 300);
	n = strlen(p.reason);
	assert_true(n > 300);
	assert_non_null(strstr(p.reason, "/sys/class/infiniband/rxe0/device: "));
	assert_string_equal(p.reason + n - strlen(cause), cause);
	/* A root longer than the reason can hold: cut, and the cut says so. */
	p = deep_root_pair(root, deep, sizeof(deep), 700);
	n = strlen(p.reason);
	assert_true(n >= 500);
	assert_string_equal(p.reason + n - 3, "...");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_load(void **state)
{
	struct gdr_topo *t;
	char path[4096], why[512];

	(void)state;
	assert_int_equal(
	    gdr_topo_load(&t, xml("truncated.xml", path, sizeof(path)), NULL, why, sizeof(why)),
	    -EINVAL);
	assert_null(t);
	assert_non_null(strstr(why, "truncated.xml: hwloc could not load this XML topology"));
	assert_int_equal(
	    gdr_topo_load(&t, xml("nope.xml", path, sizeof(path)), NULL, why, sizeof(why)),
	    -ENOENT);
	assert_non_null(strstr(why, "nope.xml: No such file or directory"));

	/* HWLOC_XMLFILE stands in for the xml argument. */
	setenv("HWLOC_XMLFILE", xml("snc2.xml", path, sizeof(path)), 1);
	assert_int_equal(gdr_topo_load(&t, NULL, NULL, why, sizeof(why)), 0);
	unsetenv("HWLOC_XMLFILE");
	assert_string_equal(gdr_topo_source(t), path);
	assert_int_equal(gdr_topo_gpu_count(t), 3);
	gdr_topo_free(t);
}

/* hwloc 1.x and 2.x exports of real servers all load, and every pair is classified. */
static void test_real_exports(void **state)
{
	static const char *const files[] = {
		"xml/azure-ndv2-v100-vm.xml",
		"xml/dell-xe8640-h100-spr-snc4.xml",
		"xml/hwloc-test-x58-2ioh-tesla-mlx4.xml",
		"xml/juropa3-gpu-snb-hwloc1.xml",
		"xml/juwels-booster-a100-epyc-nps4.xml",
		"xml/juwels-cluster-gpu-v100-skx-hwloc1.xml",
		"xml/llnl-lassen-power9-v100.xml",
		"xml/nvidia-dgx2h-v100-cx5.xml",
		"xml/synthetic-epyc-2s-nps1-rootport-phb.xml",
	};
	unsigned int f;
	int i, j;

	(void)state;
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct gdr_topo *t = load(files[f]);

		assert_true(gdr_topo_gpu_count(t) > 0);
		assert_true(gdr_topo_nic_count(t) > 0);
		for (i = 0; i < gdr_topo_gpu_count(t); i++)
			for (j = 0; j < gdr_topo_nic_count(t); j++) {
				struct gdr_topo_pair p =
				    pair(t, gdr_topo_gpu(t, i)->bus_id, gdr_topo_nic(t, j)->name);
				if (p.cls == GDR_TOPO_UNKNOWN)
					fail_msg("%s: GPU%d %s: %s", files[f], i, p.nic, p.reason);
			}
		gdr_topo_free(t);
	}
}

static void test_bind(void **state)
{
	struct gdr_topo *t = load("hostbridges.xml");
	char why[512];
	int err;

	(void)state;
	assert_int_equal(gdr_topo_bind_numa(t, 0, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not this system"));
	gdr_topo_free(t);

	unsetenv("HWLOC_XMLFILE");
	assert_int_equal(gdr_topo_load(&t, NULL, NULL, why, sizeof(why)), 0);
	assert_null(gdr_topo_source(t));
	assert_int_equal(gdr_topo_bind_numa(t, 4096, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "NUMA 4096: no such NUMA node");
	/* Node 0 exists everywhere; memory binding may be refused in a container, CPUs not. */
	err = gdr_topo_bind_numa(t, 0, why, sizeof(why));
	if (err)
		assert_non_null(strstr(why, "hwloc_set_membind"));
	gdr_topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switches),      cmocka_unit_test(test_hostbridges),
		cmocka_unit_test(test_snc),	      cmocka_unit_test(test_not_pci),
		cmocka_unit_test(test_gpus_and_nics), cmocka_unit_test(test_busid),
		cmocka_unit_test(test_nearest),	      cmocka_unit_test(test_nccl_level),
		cmocka_unit_test(test_nccl_read),     cmocka_unit_test(test_nccl_env),
		cmocka_unit_test(test_nccl_settings), cmocka_unit_test(test_nccl_defaults),
		cmocka_unit_test(test_gpu_ranges),    cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_describe),      cmocka_unit_test(test_sysfs_fallback),
		cmocka_unit_test(test_sysfs_reason_long_root),
		cmocka_unit_test(test_load),	      cmocka_unit_test(test_real_exports),
		cmocka_unit_test(test_bind),	      cmocka_unit_test(test_fill_result),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
