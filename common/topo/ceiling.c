/* The expected ceiling of a GPU-NIC pair (see ceiling.h). */
#include "config.h"

#include "ceiling.h"
#include "pcie_cfg.h"
#include "report.h"
#include "util.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Lane data rates in Gb/s by active_speed code (IBV_SPEED_*: 1 SDR ... 128 NDR). */
static double lane_gbps(unsigned int speed, int ethernet)
{
	switch (speed) {
	case 1: /* SDR, 2.5 Gb/s signalling, 8b/10b */
		return ethernet ? 2.5 : 2.0;
	case 2: /* DDR */
		return ethernet ? 5.0 : 4.0;
	case 4: /* QDR */
		return ethernet ? 10.0 : 8.0;
	case 8: /* FDR10: 10.3125 Gb/s signalling, 64b/66b */
		return 10.0;
	case 16: /* FDR: 14.0625 Gb/s signalling, 64b/66b */
		return ethernet ? 14.0 : 13.64;
	case 32: /* EDR */
		return 25.0;
	case 64: /* HDR */
		return 50.0;
	case 128: /* NDR */
		return 100.0;
	case 256: /* XDR */
		return 200.0;
	}
	return 0;
}

static int lanes(unsigned int width)
{
	switch (width) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	}
	return 0;
}

double gdr_ib_port_gbps(unsigned int active_speed, unsigned int active_width, int ethernet)
{
	return lane_gbps(active_speed, ethernet) * lanes(active_width);
}

double gdr_ib_rate_text_gbps(const char *text, int ethernet)
{
	static const struct {
		const char *name;
		unsigned int code;
	} speeds[] = {
		{ "SDR", 1 },  { "DDR", 2 },  { "QDR", 4 },   { "FDR10", 8 }, { "FDR", 16 },
		{ "EDR", 32 }, { "HDR", 64 }, { "NDR", 128 }, { "XDR", 256 },
	};
	const char *paren = strchr(text, '(');
	unsigned int width;
	char name[16];
	double v;

	/* "100 Gb/sec (4X EDR)": the generation says how much of the rate is encoding. */
	if (paren && sscanf(paren + 1, "%uX %15[A-Z0-9]", &width, name) == 2) {
		for (size_t i = 0; i < GDR_ARRAY_SIZE(speeds); i++)
			if (!strcmp(name, speeds[i].name))
				return lane_gbps(speeds[i].code, ethernet) * width;
	}
	/* "10 Gb/sec" alone (some providers): the kernel's nominal rate. */
	if (sscanf(text, "%lf Gb/sec", &v) == 1 && isfinite(v) && v > 0)
		return v;
	return 0;
}

void gdr_ceiling_compute(struct gdr_ceiling *c, int with_gpu)
{
	c->gbps = 0;
	c->limit = "";
	if (c->port_gbps <= 0 || (c->nic_pcie_gbps <= 0 && !c->nic_not_pci) ||
	    (with_gpu && c->gpu_pcie_gbps <= 0))
		return;
	c->gbps = c->port_gbps;
	c->limit = "port";
	if (c->nic_pcie_gbps > 0 && c->nic_pcie_gbps < c->gbps) {
		c->gbps = c->nic_pcie_gbps;
		c->limit = "NIC PCIe";
	}
	if (with_gpu && c->gpu_pcie_gbps < c->gbps) {
		c->gbps = c->gpu_pcie_gbps;
		c->limit = "GPU PCIe";
	}
}

static const char *part(double v, char *buf, size_t len)
{
	if (v <= 0)
		return gdr_strlcpy(buf, "unknown", len);
	snprintf(buf, len, "%.1f", v);
	return buf;
}

const char *gdr_ceiling_text(const struct gdr_ceiling *c, int with_gpu, char *buf, size_t len)
{
	char p[24], n[32], g[24];

	part(c->port_gbps, p, sizeof(p));
	if (c->nic_not_pci)
		gdr_strlcpy(n, "none (not a PCI device)", sizeof(n));
	else
		part(c->nic_pcie_gbps, n, sizeof(n));
	part(c->gpu_pcie_gbps, g, sizeof(g));
	if (c->gbps > 0)
		snprintf(buf, len, "%.1f Gb/s, %s-bound (port %s, NIC PCIe %s%s%s)", c->gbps,
			 c->limit, p, n, with_gpu ? ", GPU PCIe " : "", with_gpu ? g : "");
	else
		snprintf(buf, len, "unknown (port %s, NIC PCIe %s%s%s)", p, n,
			 with_gpu ? ", GPU PCIe " : "", with_gpu ? g : "");
	return buf;
}

/* Port number of the first ACTIVE port, or want when given. */
static int port_rate(const char *root, const char *nic, int want, double *gbps)
{
	char path[256], buf[128], ll[32];

	for (int port = want ? want : 1; port <= (want ? want : 8); port++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/state", nic, port);
		if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0)
			continue;
		if (!want && !strstr(buf, "ACTIVE"))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/link_layer", nic,
			 port);
		if (gdr_read_rooted(root, path, ll, sizeof(ll)) < 0)
			ll[0] = '\0';
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/rate", nic, port);
		if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0)
			return -ENOENT;
		*gbps = gdr_ib_rate_text_gbps(buf, !strcmp(ll, "Ethernet"));
		return 0;
	}
	return -ENOENT;
}

int gdr_ceiling_sysfs(const char *root, const char *nic, int port, const char *gpu_bdf,
		      struct gdr_ceiling *c)
{
	struct gdr_pcie *p = NULL;
	char nic_bdf[GDR_PCIE_BDF_LEN], gpu[GDR_PCIE_BDF_LEN];
	int gen, width, rc;

	memset(c, 0, sizeof(*c));
	c->limit = "";
	port_rate(root, nic, port, &c->port_gbps);
	rc = gdr_pcie_open(&p, root);
	if (rc)
		goto out_compute;
	rc = gdr_pcie_ibdev_bdf(root, nic, nic_bdf, sizeof(nic_bdf));
	if (!rc)
		c->nic_pcie_gbps = gdr_pcie_endpoint_gbps(p, root, nic_bdf, &gen, &width);
	c->nic_not_pci = rc == -ENOENT || rc == -ENODEV;
	rc = 0;
	if (gpu_bdf && *gpu_bdf && !gdr_pcie_norm_bdf(gpu_bdf, gpu, sizeof(gpu)))
		c->gpu_pcie_gbps = gdr_pcie_endpoint_gbps(p, root, gpu, &gen, &width);
	gdr_pcie_close(p);
out_compute:
	gdr_ceiling_compute(c, gpu_bdf && *gpu_bdf);
	return rc;
}

void gdr_ceiling_live(struct ibv_context *verbs, unsigned int port, const char *nic,
		      const char *gpu_bdf, struct gdr_ceiling *c)
{
	struct ibv_port_attr pa;

	gdr_ceiling_sysfs(NULL, nic, (int)port, gpu_bdf, c);
	/* The port rate as the provider reports it now (rxe: from its netdev). */
	if (verbs && port && !ibv_query_port(verbs, (uint8_t)port, &pa))
		c->port_gbps = gdr_ib_port_gbps(pa.active_speed, pa.active_width,
						pa.link_layer == IBV_LINK_LAYER_ETHERNET);
	gdr_ceiling_compute(c, gpu_bdf && *gpu_bdf);
}

void gdr_ceiling_row(struct ibv_context *verbs, unsigned int port, const char *nic,
		     const char *gpu_bdf, struct gdr_result *r)
{
	struct gdr_ceiling c;

	r->ceiling_gbps = 0;
	if (!nic || !*nic)
		return;
	gdr_ceiling_live(verbs, port, nic, gpu_bdf, &c);
	r->ceiling_gbps = c.gbps * (r->bidir ? 2 : 1);
}

double gdr_ceiling_bounce(const struct gdr_bounce_ceiling *b, char *note, size_t len)
{
	int known = b->d2h > 0 && b->h2d > 0; /* NAN compares false */
	int h2d = known && b->h2d < b->d2h;
	double copy = known ? (h2d ? b->h2d : b->d2h) * 8 : 0; /* GB/s -> Gb/s */
	char ch[32], mode[32], what[160];

	if (!known) {
		snprintf(note, len, "copy rate not measured (%s): ceiling from the links only",
			 b->why && *b->why ? b->why : "unknown");
		return b->links_gbps;
	}
	if (b->blocks)
		snprintf(mode, sizeof(mode), "%s, %u blocks", b->copy, b->blocks);
	else
		snprintf(mode, sizeof(mode), "%s", b->copy);
	snprintf(what, sizeof(what), "copy %.1f = %s %.3g GB/s at %s chunks, %s, %s", copy,
		 h2d ? "H2D" : "D2H", h2d ? b->h2d : b->d2h, gdr_fmt_size(b->chunk, ch, sizeof(ch)),
		 mode, b->stand_in ? "fake driver: a CPU memcpy, not a GPU" : "measured now");
	if (b->nic.gbps <= 0) {
		snprintf(note, len, "ceiling unknown: NIC side unknown (%s)", what);
		return 0;
	}
	if (copy < b->nic.gbps) {
		snprintf(note, len, "ceiling %.1f Gb/s, copy-bound (%s; %s %.1f)", copy, what,
			 b->nic.limit, b->nic.gbps);
		return copy;
	}
	snprintf(note, len, "ceiling %.1f Gb/s, %s-bound (%s %.1f; %s)", b->nic.gbps, b->nic.limit,
		 b->nic.limit, b->nic.gbps, what);
	return b->nic.gbps;
}

void gdr_ceiling_pct(struct gdr_result *r)
{
	r->pct_of_ceiling = r->ceiling_gbps > 0 ? r->bw_avg_gbps / r->ceiling_gbps * 100 : -1;
}
