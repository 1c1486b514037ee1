/*
 * gdr_doctor NIC checks: per RDMA device and port, the state, link layer,
 * RoCE GIDs, and the DMA-BUF registration probe. On the live system ("/")
 * devices and ports come from libibverbs; under a fixture root from
 * ROOT/sys/class/infiniband, which is what libibverbs reads too.
 */
#include "config.h"

#include "doctor.h"
#include "mem.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NICS  32
#define MAX_PORTS 4
#define MAX_GIDS  4

struct nic_port {
	int num;
	char state[32]; /* "ACTIVE", "DOWN", ... */
	int active;
	int ethernet; /* link layer Ethernet = RoCE */
	char gids[MAX_GIDS][64];
	char gid_types[MAX_GIDS][16];
	int gid_index[MAX_GIDS];
	int ngids;
};

struct nic_info {
	char name[64];
	struct nic_port ports[MAX_PORTS];
	int nports;
	int probe; /* 1 supported, 0 not, -1 not probed */
	char probe_why[256];
};

static int gid_is_zero(const char *gid)
{
	for (; *gid; gid++)
		if (*gid != '0' && *gid != ':')
			return 0;
	return 1;
}

/* Under any root, GID types live in sysfs only ("RoCE v2", "IB/RoCE v1"). */
static void read_gid_type(const char *root, const char *dev, int port, int idx, char *out,
			  size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev,
		 port, idx);
	if (gdr_read_rooted(root, path, out, len) < 0)
		out[0] = '\0';
}

static void sysfs_port(const char *root, const char *dev, struct nic_port *p)
{
	char path[256], buf[128];
	const char *colon;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/state", dev, p->num);
	if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0)
		gdr_strlcpy(buf, "unknown", sizeof(buf));
	/* "4: ACTIVE" */
	colon = strchr(buf, ':');
	gdr_strlcpy(p->state, colon ? colon + 2 : buf, sizeof(p->state));
	p->active = !strcmp(p->state, "ACTIVE");
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/link_layer", dev, p->num);
	p->ethernet =
	    gdr_read_rooted(root, path, buf, sizeof(buf)) >= 0 && !strcmp(buf, "Ethernet");
	if (!p->ethernet)
		return;
	for (int i = 0; i < 256 && p->ngids < MAX_GIDS; i++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gids/%d", dev,
			 p->num, i);
		if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0)
			break;
		if (gid_is_zero(buf))
			continue;
		gdr_strlcpy(p->gids[p->ngids], buf, sizeof(p->gids[0]));
		p->gid_index[p->ngids] = i;
		read_gid_type(root, dev, p->num, i, p->gid_types[p->ngids],
			      sizeof(p->gid_types[0]));
		p->ngids++;
	}
}

static int cmp_nic(const void *a, const void *b)
{
	return strcmp(((const struct nic_info *)a)->name, ((const struct nic_info *)b)->name);
}

/*
 * The first max devices by name (not in readdir's order, which is the
 * file system's); *total counts them all.
 */
static int scan_sysfs(const char *root, struct nic_info *nics, int max, int *total)
{
	char dir[4096], pdir[4096], rel[320], (*names)[64] = NULL, (*nn)[64];
	struct dirent *de, *pe;
	int n = 0, cap = 0;
	DIR *d, *pd;

	*total = 0;
	d = opendir(gdr_rooted_path(root, "/sys/class/infiniband", dir, sizeof(dir)));
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		gdr_strlcpy(names[n++], de->d_name, sizeof(names[0]));
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), gdr_cmp_strings);
	*total = n;
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++) {
		struct nic_info *nic = &nics[i];

		memset(nic, 0, sizeof(*nic));
		gdr_strlcpy(nic->name, names[i], sizeof(nic->name));
		nic->probe = -1;
		gdr_strlcpy(nic->probe_why, "not probed: --root is not the live system",
			    sizeof(nic->probe_why));
		snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/ports", nic->name);
		pd = opendir(gdr_rooted_path(root, rel, pdir, sizeof(pdir)));
		while (pd && (pe = readdir(pd)) && nic->nports < MAX_PORTS) {
			int num = atoi(pe->d_name);

			if (num <= 0)
				continue;
			nic->ports[nic->nports].num = num;
			sysfs_port(root, nic->name, &nic->ports[nic->nports]);
			nic->nports++;
		}
		if (pd)
			closedir(pd);
	}
	free(names);
	return n;
}

static void fmt_gid(const union ibv_gid *g, char *out, size_t len)
{
	const uint8_t *b = g->raw;

	snprintf(out, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

static void verbs_device(struct ibv_device *dev, struct nic_info *nic)
{
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	memset(nic, 0, sizeof(*nic));
	gdr_strlcpy(nic->name, ibv_get_device_name(dev), sizeof(nic->name));
	nic->probe = -1;
	ctx = ibv_open_device(dev);
	if (!ctx) {
		snprintf(nic->probe_why, sizeof(nic->probe_why), "ibv_open_device: %s",
			 strerror(errno));
		return;
	}
	if (ibv_query_device(ctx, &attr) == 0) {
		for (int p = 1; p <= attr.phys_port_cnt && nic->nports < MAX_PORTS; p++) {
			struct nic_port *np = &nic->ports[nic->nports++];
			struct ibv_port_attr pa;

			np->num = p;
			if (ibv_query_port(ctx, (uint8_t)p, &pa)) {
				gdr_strlcpy(np->state, "unknown", sizeof(np->state));
				continue;
			}
			gdr_strlcpy(np->state, ibv_port_state_str(pa.state), sizeof(np->state));
			np->active = pa.state == IBV_PORT_ACTIVE;
			np->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
			for (int i = 0; np->ethernet && i < pa.gid_tbl_len && np->ngids < MAX_GIDS;
			     i++) {
				union ibv_gid gid;

				if (ibv_query_gid(ctx, (uint8_t)p, i, &gid))
					break;
				fmt_gid(&gid, np->gids[np->ngids], sizeof(np->gids[0]));
				if (gid_is_zero(np->gids[np->ngids]))
					continue;
				np->gid_index[np->ngids] = i;
				read_gid_type("/", nic->name, p, i, np->gid_types[np->ngids],
					      sizeof(np->gid_types[0]));
				np->ngids++;
			}
		}
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		snprintf(nic->probe_why, sizeof(nic->probe_why), "ibv_alloc_pd: %s",
			 strerror(errno));
	} else {
		int rc = gdr_dmabuf_probe_nic(pd, nic->probe_why, sizeof(nic->probe_why));

		nic->probe = rc < 0 ? -1 : rc;
		ibv_dealloc_pd(pd);
	}
	ibv_close_device(ctx);
}

static int scan_verbs(struct nic_info *nics, int max, int *total, char *why, size_t wlen)
{
	struct ibv_device **list;
	int n = 0, ndev = 0;

	*total = 0;
	list = ibv_get_device_list(&ndev);
	if (!list) {
		snprintf(why, wlen, "ibv_get_device_list: %s", strerror(errno));
		return 0;
	}
	*total = ndev;
	for (int i = 0; i < ndev && n < max; i++)
		verbs_device(list[i], &nics[n++]);
	ibv_free_device_list(list);
	qsort(nics, n, sizeof(*nics), cmp_nic);
	return n;
}

static void port_checks(struct gdr_doctor *doc, const struct nic_info *nic, int *any_active)
{
	char name[96], gids[256];
	struct gdr_check *c;

	for (int p = 0; p < nic->nports; p++) {
		const struct nic_port *np = &nic->ports[p];
		size_t off = 0;

		snprintf(name, sizeof(name), "%s.port%d", nic->name, np->num);
		c = gdr_doctor_add(doc, name, np->active ? GDR_CHECK_PASS : GDR_CHECK_WARN, 0);
		gdr_check_value(c, "%s, %s", np->state,
				np->ethernet ? "RoCE (Ethernet)" : "InfiniBand");
		/* An ACTIVE port is all the peer-memory path asks of the NIC. */
		c->side = GDR_SIDE_NIC;
		c->proves = np->active ? GDR_BLOCK_PEERMEM : 0;
		if (!np->active)
			gdr_check_fix(
			    c, "bring the link up (cable, switch port, ip link set <netdev> up)");
		*any_active |= np->active;
		if (!np->ethernet)
			continue;
		snprintf(name, sizeof(name), "%s.port%d.gids", nic->name, np->num);
		if (np->ngids == 0) {
			c = gdr_doctor_add(doc, name, GDR_CHECK_WARN, 0);
			gdr_check_value(c, "no RoCE GID");
			gdr_check_fix(c,
				      "give the port's netdev an IP address (RoCE GIDs follow it)");
			continue;
		}
		gids[0] = '\0';
		for (int i = 0; i < np->ngids && off < sizeof(gids); i++)
			off +=
			    snprintf(gids + off, sizeof(gids) - off, "%s%d=%s%s%s%s", i ? "; " : "",
				     np->gid_index[i], np->gids[i], np->gid_types[i][0] ? " (" : "",
				     np->gid_types[i], np->gid_types[i][0] ? ")" : "");
		c = gdr_doctor_add(doc, name, GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%s", gids);
	}
}

void gdr_doctor_nic_checks(struct gdr_doctor *doc)
{
	struct nic_info *nics = calloc(MAX_NICS, sizeof(*nics));
	struct gdr_check *c, *first_unsupported = NULL;
	char why[256] = "";
	int n, total, any_active = 0, any_dmabuf = 0, probed = 0;

	if (!nics) {
		c = gdr_doctor_add(doc, "rdma-devices", GDR_CHECK_NA, 0);
		gdr_check_value(c, "out of memory");
		return;
	}
	if (!strcmp(doc->root, "/"))
		n = scan_verbs(nics, MAX_NICS, &total, why, sizeof(why));
	else
		n = scan_sysfs(doc->root, nics, MAX_NICS, &total);
	doc->nic_count = n;
	for (int i = 0; i < n && i < GDR_DOCTOR_MAX_DEVS; i++)
		gdr_strlcpy(doc->nic_name[doc->nnic_name++], nics[i].name,
			    sizeof(doc->nic_name[0]));
	if (n == 0) {
		c = gdr_doctor_add(doc, "rdma-devices", GDR_CHECK_FAIL, GDR_BLOCK_BOTH);
		c->side = GDR_SIDE_NIC;
		gdr_check_value(c, "no RDMA devices%s%s%s", why[0] ? " (" : "", why,
				why[0] ? ")" : "");
		gdr_check_fix(c,
			      "load the NIC's RDMA driver (mlx5_ib, ...) or pass the RDMA device "
			      "into the container (/dev/infiniband, RDMA shared device plugin)");
		gdr_check_brief(c, "no RDMA device (load mlx5_ib or pass /dev/infiniband into "
				   "the container)");
		goto out_free;
	}
	for (int i = 0; i < n; i++) {
		char name[96];

		port_checks(doc, &nics[i], &any_active);
		snprintf(name, sizeof(name), "%s.dmabuf", nics[i].name);
		if (nics[i].probe == 1) {
			any_dmabuf = 1;
			probed = 1;
			c = gdr_doctor_add(doc, name, GDR_CHECK_PASS, 0);
			c->side = GDR_SIDE_NIC;
			c->proves = GDR_BLOCK_DMABUF;
			gdr_check_value(c, "ibv_reg_dmabuf_mr supported%s%s%s",
					nics[i].probe_why[0] ? " (" : "", nics[i].probe_why,
					nics[i].probe_why[0] ? ")" : "");
		} else if (nics[i].probe == 0) {
			probed = 1;
			c = gdr_doctor_add(doc, name, GDR_CHECK_FAIL, 0);
			c->side = GDR_SIDE_NIC;
			gdr_check_value(c, "%s", nics[i].probe_why);
			gdr_check_brief(c, "no NIC takes DMA-BUF (%s: %s)", nics[i].name,
					nics[i].probe_why);
			gdr_check_fix(c,
				      "needs kernel >= 5.12 with the provider's DMA-BUF support "
				      "(mlx5: inbox >= 5.12 or MOFED >= 5.5) and rdma-core >= 34");
			if (!first_unsupported)
				first_unsupported = c;
		} else {
			c = gdr_doctor_add(doc, name, GDR_CHECK_NA, 0);
			gdr_check_value(c, "%s", nics[i].probe_why);
		}
	}
	if (total > n) {
		c = gdr_doctor_add(doc, "rdma-devices", GDR_CHECK_INFO, 0);
		gdr_check_value(c, "%d RDMA devices: the first %d are checked, the others not",
				total, n);
	}
	/* A device not checked may take DMA-BUF, or have the ACTIVE port: nothing is ruled out. */
	if (probed && !any_dmabuf && first_unsupported && total == n)
		first_unsupported->blocks |= GDR_BLOCK_DMABUF;
	if (!any_active && total > n) {
		c = gdr_doctor_add(doc, "rdma-ports", GDR_CHECK_NA, 0);
		c->side = GDR_SIDE_NIC;
		gdr_check_value(c,
				"no ACTIVE port on the first %d of %d RDMA devices (the others "
				"not checked)",
				n, total);
	} else if (!any_active) {
		c = gdr_doctor_add(doc, "rdma-ports", GDR_CHECK_FAIL, GDR_BLOCK_BOTH);
		c->side = GDR_SIDE_NIC;
		gdr_check_brief(c, "no ACTIVE RDMA port (bring a link up)");
		gdr_check_value(c, "no ACTIVE port on any of %d RDMA device%s", n,
				n == 1 ? "" : "s");
		gdr_check_fix(c, "bring a link up (ibstat / rdma link show)");
	}
out_free:
	free(nics);
}
