/*
 * gdr_doctor PCIe health: for every GPU x RDMA NIC pair, what the PCI
 * configuration space of both endpoints and of the bridges between them says
 * (ACS, IOMMU and ATS, link training, MaxPayload/MaxReadReq, relaxed
 * ordering) and the pair's expected ceiling; per NIC the firmware version
 * (per GPU BAR1: common/doctor/doctor_gpu.c, with NVML where sysfs has
 * none). Criteria and fixes: docs/pcie-health.md.
 */
#include "config.h"

#include "ceiling.h"
#include "pcie_health.h"
#include "pcie_cfg.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_GPUS 32
#define MAX_NICS 32
/* Bridges and endpoints on one pair's path: both chains. */
#define MAX_PATH (2 * GDR_PCIE_MAX_CHAIN + 1)

#define AFFECTS_GDR (GDR_PATH_DMABUF | GDR_PATH_PEERMEM)
#define AFFECTS_ALL (GDR_PATH_DMABUF | GDR_PATH_PEERMEM | GDR_PATH_HOST | GDR_PATH_BOUNCE)

struct endpoint {
	char name[128]; /* "gpu0", "mlx5_0" */
	char bdf[GDR_PCIE_BDF_LEN];
	char chain[GDR_PCIE_MAX_CHAIN][GDR_PCIE_BDF_LEN];
	int nchain; /* <= 0: unknown */
};

/* One pair's path: devices in order GPU ... turning point ... NIC. */
struct pair_path {
	struct gdr_pcie_dev dev[MAX_PATH];
	const char *role[MAX_PATH]; /* "GPU", "NIC", "bridge" */
	int n;
	int turn; /* index of the turning point, -1 when the path crosses the root complex */
	/* Links: child index and parent index in dev[]. */
	int link_child[MAX_PATH], link_parent[MAX_PATH];
	int nlinks;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct endpoint *)a)->name, ((const struct endpoint *)b)->name);
}

/* NVIDIA functions of class VGA or 3D, in PCI bus order as nvidia-smi numbers them. */
static int scan_gpus(const char *root, struct endpoint *g, int max)
{
	char bdf[MAX_GPUS][GDR_PCIE_BDF_LEN];
	int n = gdr_pcie_nvidia_gpus(root, bdf, max < MAX_GPUS ? max : MAX_GPUS);

	for (int i = 0; i < n; i++) {
		memset(&g[i], 0, sizeof(g[i]));
		gdr_strlcpy(g[i].bdf, bdf[i], sizeof(g[i].bdf));
		snprintf(g[i].name, sizeof(g[i].name), "gpu%d", i);
		g[i].nchain = gdr_pcie_chain(root, g[i].bdf, g[i].chain, GDR_PCIE_MAX_CHAIN);
	}
	return n;
}

static int scan_nics(const char *root, struct endpoint *nic, int max, int *on_pci)
{
	char dir[4096];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(gdr_rooted_path(root, "/sys/class/infiniband", dir, sizeof(dir)));

	*on_pci = 0;
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.')
			continue;
		memset(&nic[n], 0, sizeof(nic[n]));
		gdr_strlcpy(nic[n].name, de->d_name, sizeof(nic[n].name));
		if (!gdr_pcie_ibdev_bdf(root, de->d_name, nic[n].bdf, sizeof(nic[n].bdf))) {
			nic[n].nchain =
			    gdr_pcie_chain(root, nic[n].bdf, nic[n].chain, GDR_PCIE_MAX_CHAIN);
			*on_pci += nic[n].nchain > 0;
		}
		n++;
	}
	closedir(d);
	qsort(nic, n, sizeof(*nic), cmp_name);
	return n;
}

static int add_dev(struct gdr_pcie *p, struct pair_path *pp, const char *bdf, const char *role)
{
	int i = pp->n++;

	gdr_pcie_read(p, bdf, &pp->dev[i]);
	pp->role[i] = role;
	return i;
}

static void add_link(struct pair_path *pp, int child, int parent)
{
	pp->link_child[pp->nlinks] = child;
	pp->link_parent[pp->nlinks] = parent;
	pp->nlinks++;
}

/* GPU chain up to the common ancestor, then down the NIC chain. */
static void build_path(struct gdr_pcie *p, const struct endpoint *g, const struct endpoint *nic,
		       struct pair_path *pp)
{
	int k = 0, idx[GDR_PCIE_MAX_CHAIN], turn = -1, prev;

	memset(pp, 0, sizeof(*pp));
	while (k < g->nchain - 1 && k < nic->nchain - 1 && !strcmp(g->chain[k], nic->chain[k]))
		k++;
	/* GPU side: chain[k..nchain-1], GPU last; links to the parent within the path. */
	for (int i = g->nchain - 1; i >= k; i--)
		idx[i] = add_dev(p, pp, g->chain[i], i == g->nchain - 1 ? "GPU" : "bridge");
	if (k > 0)
		turn = add_dev(p, pp, g->chain[k - 1], "bridge");
	for (int i = g->nchain - 1; i > k; i--)
		add_link(pp, idx[i], idx[i - 1]);
	if (k > 0)
		add_link(pp, idx[k], turn);
	prev = turn;
	for (int i = k; i < nic->nchain; i++) {
		int j = add_dev(p, pp, nic->chain[i], i == nic->nchain - 1 ? "NIC" : "bridge");

		if (prev >= 0)
			add_link(pp, j, prev);
		prev = j;
	}
	pp->turn = turn;
}

static const char *type_name(int t)
{
	switch (t) {
	case GDR_PCIE_ROOT_PORT:
		return "root port";
	case GDR_PCIE_DOWNSTREAM:
		return "switch downstream port";
	case GDR_PCIE_UPSTREAM:
		return "switch upstream port";
	case GDR_PCIE_ENDPOINT:
	case GDR_PCIE_LEGACY_ENDPOINT:
		return "endpoint";
	}
	return "PCI device";
}

static void check_acs(struct gdr_check_list *doc, const char *pn, const struct pair_path *pp)
{
	char name[128];
	struct gdr_check *c;
	int ports = 0, with_acs = 0, bad = -1, rp_bad = -1;

	snprintf(name, sizeof(name), "%s.acs", pn);
	for (int i = 0; i < pp->n; i++) {
		const struct gdr_pcie_dev *d = &pp->dev[i];

		if (d->type != GDR_PCIE_DOWNSTREAM && d->type != GDR_PCIE_ROOT_PORT)
			continue;
		ports++;
		with_acs += d->has_acs;
		if (!gdr_pcie_acs_redirects(d))
			continue;
		if (d->type == GDR_PCIE_DOWNSTREAM && bad < 0)
			bad = i;
		if (d->type == GDR_PCIE_ROOT_PORT && rp_bad < 0)
			rp_bad = i;
	}
	if (ports == 0) {
		c = gdr_check_add(doc, name, GDR_CHECK_NA, 0);
		gdr_check_value(c, "no readable switch downstream port or root port on the path");
		return;
	}
	if (bad < 0 && rp_bad < 0) {
		c = gdr_check_add(doc, name, GDR_CHECK_PASS, 0);
		gdr_check_value(c, "no P2P redirect on %d port%s (%d with ACS)", ports,
				ports == 1 ? "" : "s", with_acs);
		return;
	}
	if (bad < 0)
		bad = rp_bad;
	c = gdr_check_add(
	    doc, name, pp->dev[bad].type == GDR_PCIE_DOWNSTREAM ? GDR_CHECK_FAIL : GDR_CHECK_WARN,
	    0);
	c->affects = AFFECTS_GDR;
	gdr_check_value(
	    c,
	    "ACS P2P Request/Completion Redirect on %s (%s, ACSCtl 0x%04x): GPU-NIC "
	    "traffic goes up to the root complex%s",
	    pp->dev[bad].bdf, type_name(pp->dev[bad].type), pp->dev[bad].acs_ctrl,
	    pp->dev[bad].type == GDR_PCIE_DOWNSTREAM ? " instead of turning in the switch" : "");
	gdr_check_fix(c,
		      "clear ReqRedir/CmpltRedir: setpci -s %s ECAP_ACS+0x6.w=0000 (root, until "
		      "reboot), kernel parameter pci=disable_acs_redir=%s, or ACS off in the BIOS; "
		      "an enabled IOMMU turns ACS on (iommu=pt)",
		      pp->dev[bad].bdf, pp->dev[bad].bdf);
}

/* "off", "passthrough", "translated" or "other" for one endpoint's IOMMU group. */
static const char *iommu_mode(const char *root, const struct gdr_pcie_dev *d, char *type,
			      size_t len)
{
	char path[96];

	type[0] = '\0';
	/* BDF/iommu_group is the group's directory (a link in sysfs, a copy in a tarball). */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", d->bdf);
	if (!d->iommu_group[0] && !gdr_exists_rooted(root, path))
		return "off";
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group/type", d->bdf);
	if (gdr_read_rooted(root, path, type, len) < 0)
		return "translated"; /* kernels before 5.11 have no type: the DMA domain */
	if (!strcmp(type, "identity"))
		return "passthrough";
	if (!strncmp(type, "DMA", 3))
		return "translated";
	return "other";
}

static const char *ats_text(const struct gdr_pcie_dev *d)
{
	if (!d->readable)
		return "ATS unknown";
	return !d->has_ats ? "no ATS" : d->ats_enabled ? "ATS on" : "ATS off";
}

/* The node's IOMMU: units in /sys/class/iommu and what the kernel command line asks. */
static void check_iommu_node(struct gdr_check_list *doc)
{
	char dir[4096], cmdline[4096];
	struct gdr_check *c;
	struct dirent *de;
	int units = 0, have_cmd;
	const char *mode;
	DIR *d = opendir(gdr_rooted_path(doc->root, "/sys/class/iommu", dir, sizeof(dir)));

	while (d && (de = readdir(d)))
		units += de->d_name[0] != '.';
	if (d)
		closedir(d);
	have_cmd = gdr_read_rooted(doc->root, "/proc/cmdline", cmdline, sizeof(cmdline)) >= 0;
	if (!have_cmd)
		cmdline[0] = '\0';
	if (!units)
		mode = "off";
	else if (strstr(cmdline, "iommu=pt") || strstr(cmdline, "iommu.passthrough=1"))
		mode = "passthrough";
	else
		mode = "translated";
	c = gdr_check_add(doc, "iommu",
			  strcmp(mode, "translated") ? GDR_CHECK_PASS : GDR_CHECK_WARN, 0);
	gdr_check_value(c, "%s (%d unit%s in /sys/class/iommu; cmdline: %.160s)", mode, units,
			units == 1 ? "" : "s", have_cmd ? cmdline : "unknown");
	if (!strcmp(mode, "translated")) {
		c->affects = AFFECTS_GDR;
		gdr_check_fix(c, "unless the groups say otherwise (the per-pair .iommu checks), "
				 "add iommu=pt to the kernel command line for GPUDirect on bare "
				 "metal");
	}
}

static void check_iommu(struct gdr_check_list *doc, const char *pn, const struct pair_path *pp)
{
	const struct gdr_pcie_dev *g = &pp->dev[0], *n = &pp->dev[pp->n - 1];
	char name[128], gt[32], nt[32];
	const char *gm = iommu_mode(doc->root, g, gt, sizeof(gt));
	const char *nm = iommu_mode(doc->root, n, nt, sizeof(nt));
	int translated = !strcmp(gm, "translated") || !strcmp(nm, "translated");
	struct gdr_check *c;

	snprintf(name, sizeof(name), "%s.iommu", pn);
	c = gdr_check_add(doc, name, translated ? GDR_CHECK_WARN : GDR_CHECK_PASS, 0);
	gdr_check_value(c, "GPU %s%s%s%s, %s; NIC %s%s%s%s, %s", gm, gt[0] ? " (" : "", gt,
			gt[0] ? ")" : "", ats_text(g), nm, nt[0] ? " (" : "", nt, nt[0] ? ")" : "",
			ats_text(n));
	if (!translated)
		return;
	c->affects = AFFECTS_GDR;
	gdr_check_fix(c, "every peer DMA is translated by the IOMMU: boot with iommu=pt "
			 "(intel_iommu=on iommu=pt, amd_iommu=on iommu=pt); where translation "
			 "must stay, enable ATS on both ends (NVIDIA NICs: mlxconfig "
			 "ATS_ENABLED=true)");
}

static void check_link(struct gdr_check_list *doc, const char *pn, const struct pair_path *pp)
{
	char name[128], seen[32], want[32];
	struct gdr_check *c;
	int worst = -1, known = 0;
	enum gdr_check_status st = GDR_CHECK_PASS;

	snprintf(name, sizeof(name), "%s.link", pn);
	for (int l = 0; l < pp->nlinks; l++) {
		const struct gdr_pcie_dev *ch = &pp->dev[pp->link_child[l]];
		const struct gdr_pcie_dev *pa = &pp->dev[pp->link_parent[l]];
		int gen, width, narrow, slow;
		enum gdr_check_status s;

		/* Inside a switch, upstream to downstream port, there is no physical link. */
		if (!ch->is_pcie || !pa->is_pcie || !ch->cap_gen ||
		    ch->type == GDR_PCIE_DOWNSTREAM || ch->type == GDR_PCIE_ROOT_PORT)
			continue;
		known++;
		gen = ch->cap_gen < pa->cap_gen ? ch->cap_gen : pa->cap_gen;
		width = ch->cap_width < pa->cap_width ? ch->cap_width : pa->cap_width;
		narrow = ch->sta_width < width;
		slow = ch->sta_gen < gen;
		if (!narrow && !slow)
			continue;
		/* GPUs drop the link speed when idle; a narrow link is never that. */
		s = narrow || strcmp(pp->role[pp->link_child[l]], "GPU") ? GDR_CHECK_FAIL
									 : GDR_CHECK_WARN;
		if (worst < 0 || s > st) {
			worst = l;
			st = s;
		}
	}
	if (!known) {
		c = gdr_check_add(doc, name, GDR_CHECK_NA, 0);
		gdr_check_value(c, "no link with both ends readable");
		return;
	}
	if (worst < 0) {
		c = gdr_check_add(doc, name, GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%d link%s at the capability of both ends", known,
				known == 1 ? "" : "s");
		return;
	}
	{
		const struct gdr_pcie_dev *ch = &pp->dev[pp->link_child[worst]];
		const struct gdr_pcie_dev *pa = &pp->dev[pp->link_parent[worst]];
		const char *role = pp->role[pp->link_child[worst]];

		c = gdr_check_add(doc, name, st, 0);
		c->affects = !strcmp(role, "NIC") ? AFFECTS_ALL : AFFECTS_GDR | GDR_PATH_BOUNCE;
		gdr_check_value(c, "%s (%s) trained %s, both ends capable of %s (link to %s)",
				ch->bdf, role,
				gdr_pcie_link_text(ch->sta_gen, ch->sta_width, seen, sizeof(seen)),
				gdr_pcie_link_text(
				    ch->cap_gen < pa->cap_gen ? ch->cap_gen : pa->cap_gen,
				    ch->cap_width < pa->cap_width ? ch->cap_width : pa->cap_width,
				    want, sizeof(want)),
				pa->bdf);
		if (st == GDR_CHECK_WARN)
			gdr_check_fix(c,
				      "GPUs lower the link speed when idle: look again while a "
				      "run is going (lspci -vv -s %s, LnkSta)",
				      ch->bdf);
		else
			gdr_check_fix(c,
				      "reseat the card, check the slot's electrical width and the "
				      "BIOS link speed setting; a link that trains low after a "
				      "reboot is a hardware fault (riser, cable, slot)");
	}
}

static void check_mps(struct gdr_check_list *doc, const char *pn, const struct pair_path *pp)
{
	const struct gdr_pcie_dev *g = &pp->dev[0], *n = &pp->dev[pp->n - 1];
	char name[128];
	struct gdr_check *c;
	int lo = 0, hi = 0, lo_i = -1, known = 0;

	snprintf(name, sizeof(name), "%s.mps", pn);
	for (int i = 0; i < pp->n; i++) {
		const struct gdr_pcie_dev *d = &pp->dev[i];

		if (!d->is_pcie)
			continue;
		known++;
		if (!lo || d->mps < lo) {
			lo = d->mps;
			lo_i = i;
		}
		if (d->mps > hi)
			hi = d->mps;
	}
	if (!known || !g->is_pcie || !n->is_pcie) {
		c = gdr_check_add(doc, name, GDR_CHECK_NA, 0);
		gdr_check_value(c, "MaxPayload unknown (endpoint config space not readable)");
		return;
	}
	if (lo != hi) {
		c = gdr_check_add(doc, name, GDR_CHECK_WARN, 0);
		c->affects = AFFECTS_ALL;
		gdr_check_value(c,
				"MaxPayload differs along the path: %d B at %s (%s), up to %d B "
				"elsewhere",
				lo, pp->dev[lo_i].bdf, pp->role[lo_i], hi);
		gdr_check_fix(c,
			      "let the kernel set one value for the hierarchy: pci=pcie_bus_perf "
			      "(or pcie_bus_safe) on the kernel command line, BIOS MaxPayload "
			      "= Auto");
		return;
	}
	if (g->mrrs < 512 || n->mrrs < 512) {
		const struct gdr_pcie_dev *d = n->mrrs < 512 ? n : g;

		c = gdr_check_add(doc, name, GDR_CHECK_WARN, 0);
		c->affects = d == n ? AFFECTS_ALL : AFFECTS_GDR;
		gdr_check_value(c,
				"MaxPayload %d B along the path; MaxReadReq %d B on the %s %s: "
				"reads go out in small requests",
				lo, d->mrrs, d == n ? "NIC" : "GPU", d->bdf);
		gdr_check_fix(c,
			      "raise MaxReadReq (DevCtl bits 14:12) on %s, e.g. setpci -s %s "
			      "CAP_EXP+0x8.w=5000:7000 for 4096 B (root, until reboot)",
			      d->bdf, d->bdf);
		return;
	}
	c = gdr_check_add(doc, name, GDR_CHECK_PASS, 0);
	gdr_check_value(c, "MaxPayload %d B on %d devices; MaxReadReq GPU %d B, NIC %d B", lo,
			known, g->mrrs, n->mrrs);
}

static void check_ro(struct gdr_check_list *doc, const char *pn, const struct pair_path *pp)
{
	const struct gdr_pcie_dev *g = &pp->dev[0], *n = &pp->dev[pp->n - 1];
	char name[128];
	struct gdr_check *c;

	snprintf(name, sizeof(name), "%s.ro", pn);
	if (!g->is_pcie || !n->is_pcie) {
		c = gdr_check_add(doc, name, GDR_CHECK_NA, 0);
		gdr_check_value(c, "relaxed ordering unknown (endpoint config space not readable)");
		return;
	}
	if (g->relaxed && n->relaxed) {
		c = gdr_check_add(doc, name, GDR_CHECK_PASS, 0);
		gdr_check_value(c, "relaxed ordering enabled on GPU and NIC (DevCtl)");
		return;
	}
	c = gdr_check_add(doc, name, GDR_CHECK_WARN, 0);
	c->affects = AFFECTS_GDR;
	gdr_check_value(c,
			"relaxed ordering disabled on the %s (DevCtl): IBV_ACCESS_RELAXED_ORDERING "
			"cannot take effect",
			!n->relaxed && !g->relaxed ? "GPU and NIC"
			: !n->relaxed		   ? "NIC"
						   : "GPU");
	gdr_check_fix(c,
		      "set DevCtl bit 4 (setpci -s %s CAP_EXP+0x8.w=0010:0010) unless the kernel "
		      "cleared it on purpose for a root port with broken relaxed ordering",
		      !n->relaxed ? n->bdf : g->bdf);
}

static void check_ceiling(struct gdr_check_list *doc, const char *pn, const struct endpoint *g,
			  const struct endpoint *nic)
{
	struct gdr_ceiling ce;
	struct gdr_check *c;
	char name[128], text[200];

	snprintf(name, sizeof(name), "%s.ceiling", pn);
	gdr_ceiling_sysfs(doc->root, nic->name, 0, g->bdf, &ce);
	c = gdr_check_add(doc, name, ce.gbps > 0 ? GDR_CHECK_PASS : GDR_CHECK_NA, 0);
	gdr_check_value(c, "%s", gdr_ceiling_text(&ce, 1, text, sizeof(text)));
}

static void check_fw(struct gdr_check_list *doc, const struct endpoint *nics, int n)
{
	char path[160], fw[64], type[64], ofw[64], otype[64], name[80];
	struct gdr_check *c;

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s.fw", nics[i].name);
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/fw_ver", nics[i].name);
		if (gdr_read_rooted(doc->root, path, fw, sizeof(fw)) < 0 || !fw[0]) {
			c = gdr_check_add(doc, name, GDR_CHECK_NA, 0);
			gdr_check_value(c, "no firmware version (%s)", path);
			continue;
		}
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hca_type", nics[i].name);
		if (gdr_read_rooted(doc->root, path, type, sizeof(type)) < 0)
			type[0] = '\0';
		/* The same adapter model on different firmware: a half-done update. */
		ofw[0] = '\0';
		for (int j = 0; j < n && type[0] && !ofw[0]; j++) {
			if (j == i)
				continue;
			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hca_type",
				 nics[j].name);
			if (gdr_read_rooted(doc->root, path, otype, sizeof(otype)) < 0 ||
			    strcmp(otype, type))
				continue;
			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/fw_ver",
				 nics[j].name);
			if (gdr_read_rooted(doc->root, path, ofw, sizeof(ofw)) >= 0 &&
			    !strcmp(ofw, fw))
				ofw[0] = '\0';
			else if (ofw[0])
				gdr_strlcpy(otype, nics[j].name, sizeof(otype));
		}
		if (ofw[0]) {
			c = gdr_check_add(doc, name, GDR_CHECK_WARN, 0);
			gdr_check_value(c, "firmware %s%s%s%s, but %s (same model) runs %s", fw,
					type[0] ? " (" : "", type, type[0] ? ")" : "", otype, ofw);
			gdr_check_fix(c, "bring every adapter of one model to the same firmware "
					 "(mlxfwmanager / the vendor's update tool)");
			continue;
		}
		c = gdr_check_add(doc, name, GDR_CHECK_PASS, 0);
		gdr_check_value(c, "firmware %s%s%s%s", fw, type[0] ? " (" : "", type,
				type[0] ? ")" : "");
	}
}

static void pair_checks(struct gdr_check_list *doc, struct gdr_pcie *p, const char *pn,
			const struct endpoint *g, const struct endpoint *nic, struct pair_path *pp)
{
	build_path(p, g, nic, pp);
	check_acs(doc, pn, pp);
	check_iommu(doc, pn, pp);
	check_link(doc, pn, pp);
	check_mps(doc, pn, pp);
	check_ro(doc, pn, pp);
	check_ceiling(doc, pn, g, nic);
}

int gdr_pcie_pair_checks(struct gdr_check_list *doc, const char *pair_name, const char *gpu_bdf,
			 const char *nic)
{
	struct endpoint *ep = calloc(2, sizeof(*ep));
	struct pair_path *pp = malloc(sizeof(*pp));
	struct gdr_pcie *p = NULL;
	int rc = -ENOMEM;

	if (!ep || !pp)
		goto out_free;
	rc = gdr_pcie_norm_bdf(gpu_bdf, ep[0].bdf, sizeof(ep[0].bdf));
	if (rc)
		goto out_free;
	gdr_strlcpy(ep[1].name, nic, sizeof(ep[1].name));
	rc = gdr_pcie_ibdev_bdf(doc->root, nic, ep[1].bdf, sizeof(ep[1].bdf));
	if (rc)
		goto out_free;
	ep[0].nchain = gdr_pcie_chain(doc->root, ep[0].bdf, ep[0].chain, GDR_PCIE_MAX_CHAIN);
	ep[1].nchain = gdr_pcie_chain(doc->root, ep[1].bdf, ep[1].chain, GDR_PCIE_MAX_CHAIN);
	rc = ep[0].nchain < 0 ? ep[0].nchain : ep[1].nchain < 0 ? ep[1].nchain : 0;
	if (rc)
		goto out_free;
	rc = gdr_pcie_open(&p, doc->root);
	if (rc)
		goto out_free;
	pair_checks(doc, p, pair_name, &ep[0], &ep[1], pp);
	gdr_pcie_close(p);
out_free:
	free(pp);
	free(ep);
	return rc;
}

void gdr_pcie_health_checks(struct gdr_check_list *doc)
{
	struct endpoint *gpus = calloc(MAX_GPUS + MAX_NICS, sizeof(*gpus));
	struct endpoint *nics = gpus ? gpus + MAX_GPUS : NULL;
	struct pair_path *pp = malloc(sizeof(*pp));
	struct gdr_pcie *p = NULL;
	struct gdr_check *c;
	int ng, nn, on_pci, rc;

	if (!gpus || !pp) {
		c = gdr_check_add(doc, "pcie", GDR_CHECK_NA, 0);
		gdr_check_value(c, "out of memory");
		goto out_free;
	}
	ng = scan_gpus(doc->root, gpus, MAX_GPUS);
	nn = scan_nics(doc->root, nics, MAX_NICS, &on_pci);
	check_fw(doc, nics, nn);
	rc = gdr_pcie_open(&p, doc->root);
	if (rc) {
		c = gdr_check_add(doc, "pcie", GDR_CHECK_NA, 0);
		gdr_check_value(c, "libpci cannot read %s/sys/bus/pci: %s",
				strcmp(doc->root, "/") ? doc->root : "", strerror(-rc));
		goto out_free;
	}
	if (!ng || !on_pci) {
		c = gdr_check_add(doc, "pcie", GDR_CHECK_NA, 0);
		gdr_check_value(c,
				"no GPU-NIC pair on PCI (%d NVIDIA GPU%s, %d of %d RDMA "
				"device%s with a PCI device link)",
				ng, ng == 1 ? "" : "s", on_pci, nn, nn == 1 ? "" : "s");
		goto out_close;
	}
	check_iommu_node(doc);
	for (int i = 0; i < ng; i++) {
		for (int j = 0; j < nn; j++) {
			char pn[96];

			if (gpus[i].nchain <= 0 || nics[j].nchain <= 0)
				continue;
			snprintf(pn, sizeof(pn), "%s-%s", gpus[i].name, nics[j].name);
			pair_checks(doc, p, pn, &gpus[i], &nics[j], pp);
		}
	}
out_close:
	gdr_pcie_close(p);
out_free:
	free(pp);
	free(gpus);
}
