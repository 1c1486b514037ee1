/* gdr_topo's human output: device lists, the nvidia-smi-style matrix, nearest NICs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_settings.h"
#include "topo_report.h"
#include "text.h"
#include "util.h"

/* nvidia-smi's own words, farthest first as it prints them, wrapped to 80 columns. */
static const char legend[] =
    "Legend:\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between\n"
    "         NUMA nodes (e.g., QPI/UPI), sub-NUMA clusters (SNC, NPS2/4) included\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe\n"
    "         Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically\n"
    "         the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the\n"
    "         PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge (a PCIe switch\n"
    "         counts once)\n"
    "  ?    = unknown: the NIC or the GPU is not on PCI in this topology (see the\n"
    "         NIC list)\n";
static const char legend_assumed[] =
    "  *    = assumed, not read: a device's NUMA node is unknown in this topology,\n"
    "         so NODE and SYS cannot be told apart; SYS is assumed\n";

#define WIDTH 80

void gdr_topo_wrap(FILE *out, const char *head, const char *text, int indent)
{
	char safe[4 * 2048 + 1], *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	const char *p;
	int col, first = 1;

	if (!m)
		return;
	gdr_text_safe(text, safe, sizeof(safe));
	fputs(head, m);
	col = strlen(head);
	for (p = safe; *p;) {
		size_t wl = strcspn(p, " ");

		if (!first && col + 1 + (int)wl > WIDTH) {
			fprintf(m, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', m);
			col++;
		}
		fwrite(p, 1, wl, m);
		col += wl;
		first = 0;
		p += wl;
		p += strspn(p, " ");
	}
	fputc('\n', m);
	if (fclose(m) == 0)
		fwrite(buf, 1, len, out); /* one write: a message is not split by another */
	free(buf);
}

/* "SYS", or "SYS*" when the class is assumed. */
static const char *cls_text(const struct gdr_topo_pair *p)
{
	if (p->cls == GDR_TOPO_UNKNOWN)
		return "?";
	return gdr_topo_pair_assumed(p) ? "SYS*" : gdr_topo_class_name(p->cls);
}

/*
 * Names, links and reasons come from the XML file (or sysfs): a control byte
 * in them is printed as \xHH, never sent to the terminal as it is.
 */
#define SAFE_LEN (4 * 192 + 1)
static const char *safe(const char *s, char *buf)
{
	return gdr_text_safe(s, buf, SAFE_LEN);
}

static void print_devices(FILE *out, const struct gdr_topo *t)
{
	const char *src = gdr_topo_source(t);
	char nb[12], s1[SAFE_LEN], s2[SAFE_LEN], s3[SAFE_LEN], path[4 * 4096 + 1];
	int i, w = 4;

	fprintf(out, "Topology: %s\n\n",
		src ? gdr_text_safe(src, path, sizeof(path)) : "this system");
	if (!gdr_topo_gpu_count(t))
		fprintf(out, "No NVIDIA GPU in the topology.\n");
	else
		fprintf(out, "GPUs (PCI bus order, as nvidia-smi numbers them):\n");
	for (i = 0; i < gdr_topo_gpu_count(t); i++) {
		const struct gdr_topo_gpu *g = gdr_topo_gpu(t, i);

		fprintf(out, "  GPU%-3d %s  NUMA %-2s  %-16s %s\n", g->index, g->bus_id,
			gdr_topo_numa_text(g->numa, nb, sizeof(nb)),
			g->link[0] ? safe(g->link, s1) : "-", safe(g->name, s2));
	}
	if (!gdr_topo_nic_count(t))
		fprintf(out, "\nNo RDMA NIC (OpenFabrics device) in the topology.\n");
	for (i = 0; i < gdr_topo_bare_hca_count(t); i++) {
		char head[32];

		snprintf(head, sizeof(head), "%s  %s: ", i || !gdr_topo_nic_count(t) ? "" : "\n",
			 gdr_topo_bare_hca(t, i));
		gdr_topo_wrap(out, head,
			      "Mellanox network function without an RDMA device (driver "
			      "mlx5_ib/mlx4_ib not loaded?)",
			      4);
	}
	if (!gdr_topo_nic_count(t))
		return;
	for (i = 0; i < gdr_topo_nic_count(t); i++)
		if ((int)strlen(safe(gdr_topo_nic(t, i)->name, s1)) > w)
			w = strlen(s1);
	fprintf(out, "\nRDMA NICs:\n");
	for (i = 0; i < gdr_topo_nic_count(t); i++) {
		const struct gdr_topo_nic *n = gdr_topo_nic(t, i);

		safe(n->name, s1);
		if (n->why[0]) {
			char head[SAFE_LEN + 32];

			/* The reason may hold a path below --root: wrapped under its column. */
			snprintf(head, sizeof(head), "  %-*s %-12s  ", w, s1,
				 n->bus_id[0] ? n->bus_id : "-");
			gdr_topo_wrap(out, head, n->why, (int)strlen(head));
		} else
			fprintf(out, "  %-*s %s  NUMA %-2s  %s\n", w, s1, n->bus_id,
				gdr_topo_numa_text(n->numa, nb, sizeof(nb)),
				n->link[0] ? safe(n->link, s3) : "-");
	}
}

static void print_matrix(FILE *out, const struct gdr_topo *t)
{
	struct gdr_topo_pair p;
	char nb[12], s1[SAFE_LEN];
	int i, j, w, assumed = 0;

	fprintf(out, "\n%-7s", "");
	for (j = 0; j < gdr_topo_nic_count(t); j++) {
		w = strlen(safe(gdr_topo_nic(t, j)->name, s1));
		fprintf(out, " %-*s", w < 4 ? 4 : w, s1);
	}
	fprintf(out, " NUMA\n");
	for (i = 0; i < gdr_topo_gpu_count(t); i++) {
		const struct gdr_topo_gpu *g = gdr_topo_gpu(t, i);

		fprintf(out, "GPU%-4d", g->index);
		for (j = 0; j < gdr_topo_nic_count(t); j++) {
			const struct gdr_topo_nic *n = gdr_topo_nic(t, j);

			w = strlen(safe(n->name, s1));
			gdr_topo_pair_idx(t, i, j, &p);
			assumed |= gdr_topo_pair_assumed(&p);
			fprintf(out, " %-*s", w < 4 ? 4 : w, cls_text(&p));
		}
		fprintf(out, " %s\n", gdr_topo_numa_text(g->numa, nb, sizeof(nb)));
	}
	fprintf(out, "%-7s", "NUMA");
	for (j = 0; j < gdr_topo_nic_count(t); j++) {
		w = strlen(safe(gdr_topo_nic(t, j)->name, s1));
		/* No padding after the last column: golden files should not end lines in blanks. */
		fprintf(out, " %-*s", j + 1 < gdr_topo_nic_count(t) ? (w < 4 ? 4 : w) : 0,
			gdr_topo_numa_text(gdr_topo_nic(t, j)->numa, nb, sizeof(nb)));
	}
	fprintf(out, "\n\n%s%s", legend, assumed ? legend_assumed : "");
}

static void print_nearest(FILE *out, const struct gdr_topo *t, const struct gdr_nccl_env *env)
{
	struct gdr_topo_pair best, p;
	char line[1024], head[16], verdict[192], fix[64], s1[SAFE_LEN];
	size_t off;
	int i, j, k, use;

	/* NCCL's effective settings: the variables, or NCCL's defaults (nccl_settings.c). */
	fprintf(out, "\nNCCL settings (unset: NCCL's default):\n");
	snprintf(line, sizeof(line), "NCCL_NET_GDR_LEVEL=%s%s", gdr_nccl_level_name(env->level),
		 env->level_set ? "" : " (default)");
	fprintf(out, "  %-34s", line);
	if (env->read < 0)
		fprintf(out, "NCCL_NET_GDR_READ unset (per GPU)\n");
	else
		fprintf(out, "NCCL_NET_GDR_READ=%d\n", env->read);
	snprintf(line, sizeof(line), "NCCL_DMABUF_ENABLE=%d%s", gdr_nccl_dmabuf_on(env),
		 env->dmabuf_set ? "" : " (default)");
	fprintf(out, "  %-34sNCCL_NET_GDR_C2C=%d%s\n", line, gdr_nccl_c2c_on(env),
		env->c2c_set ? "" : " (default)");
	fprintf(out, "\nNearest NIC per GPU:\n");
	for (i = 0; i < gdr_topo_gpu_count(t); i++) {
		const struct gdr_topo_gpu *g = gdr_topo_gpu(t, i);

		if (gdr_topo_nearest_nic(t, g->bus_id, NULL, NULL, &best))
			continue;
		off = 0;
		for (j = 0, k = 0; j < gdr_topo_nic_count(t) && off < sizeof(line); j++) {
			gdr_topo_pair_idx(t, i, j, &p);
			if (p.cls == best.cls)
				off += snprintf(line + off, sizeof(line) - off, "%s%s", k++ ? ", " : "",
						safe(p.nic, s1));
		}
		use = gdr_nccl_would_use(env, best.cls);
		if (off < sizeof(line))
			snprintf(line + off, sizeof(line) - off, " (%s%s); NCCL: %s%s",
				 gdr_topo_class_name(best.cls),
				 gdr_topo_pair_assumed(&best) ? ", assumed: NUMA node unknown" : "",
				 use < 0 ? "" : use ? "GPUDirect RDMA, " : "no GPUDirect RDMA, ",
				 gdr_nccl_reason(env, best.cls, verdict, sizeof(verdict)));
		snprintf(head, sizeof(head), "  GPU%d: ", g->index);
		gdr_topo_wrap(out, head, line, strlen(head));
		if (use != 0)
			continue;
		/* What would enable it: the level of this GPU's nearest NIC. */
		snprintf(line, sizeof(line), "%s%s",
			 gdr_nccl_enable_text(gdr_nccl_level_for(best.cls), fix, sizeof(fix)),
			 best.cls < GDR_TOPO_SYS ? ""
			 : gdr_topo_pair_assumed(&best)
			     ? " (if the GPU and the NIC share a NUMA node, PHB is enough)"
			     : " (crosses NUMA nodes: may be slower than without)");
		gdr_topo_wrap(out, "    to enable: ", line, strlen("    to enable: "));
	}
	if (env->read < 0) {
		int maj, min;

		/* The release that added compute capability, from NCCL's defaults table. */
		gdr_nccl_newest_series("NCCL_NET_GDR_READ", &maj, &min);
		fprintf(out,
			"NCCL_NET_GDR_READ unset: the NIC reads GPU memory for sends only with\n"
			"NVLink, or on compute capability >= 8.0 from NCCL %d.%d; receives use\n"
			"GPUDirect RDMA whenever the verdict says so.\n",
			maj, min);
	}
}

/* One line per pair in columns; the device names and bus ids are in the lists above. */
static void print_pairs(FILE *out, const struct gdr_topo *t, const struct gdr_nccl_env *env)
{
	struct gdr_topo_pair p;
	char head[256], why[192], na[12], nb[12], s1[SAFE_LEN];
	int i, j, w = 3, indent;

	for (j = 0; j < gdr_topo_nic_count(t); j++)
		if ((int)strlen(safe(gdr_topo_nic(t, j)->name, s1)) > w)
			w = strlen(s1);
	fprintf(out, "\nPairs:\n  %-6s %-*s %-5s %-4s %-4s %-5s %s\n", "GPU", w, "NIC", "class",
		"sw", "br", "NUMA", "NCCL GPUDirect RDMA");
	for (i = 0; i < gdr_topo_gpu_count(t); i++)
		for (j = 0; j < gdr_topo_nic_count(t); j++) {
			int use;

			gdr_topo_pair_idx(t, i, j, &p);
			use = gdr_nccl_would_use(env, p.cls);
			if (p.cls == GDR_TOPO_UNKNOWN)
				snprintf(head, sizeof(head), "  GPU%-3d %-*s %-5s %-4s %-4s %-5s ",
					 p.gpu_index, w, safe(p.nic, s1), "?", "-", "-", "-");
			else
				snprintf(head, sizeof(head), "  GPU%-3d %-*s %-5s %-4d %-4d %s/%-3s ",
					 p.gpu_index, w, safe(p.nic, s1), cls_text(&p), p.switches,
					 p.bridges, gdr_topo_numa_text(p.gpu_numa, na, sizeof(na)),
					 gdr_topo_numa_text(p.nic_numa, nb, sizeof(nb)));
			indent = strlen(head);
			gdr_nccl_reason(env, p.cls, why, sizeof(why));
			snprintf(s1, sizeof(s1), "%s: %s",
				 use < 0 ? "unknown"
				 : use	 ? "yes"
					 : "no",
				 why);
			/* Too wide a head (a long NIC name): the verdict goes under it. */
			if (indent > WIDTH - 24)
				indent = 8;
			gdr_topo_wrap(out, head, s1, indent);
			if (p.reason[0]) {
				snprintf(s1, sizeof(s1), "%s)", p.reason);
				gdr_topo_wrap(out, "    (", s1, 5);
			}
		}
}

void gdr_topo_print(FILE *out, const struct gdr_topo *t, const struct gdr_nccl_env *env, int pairs)
{
	print_devices(out, t);
	if (!gdr_topo_gpu_count(t) || !gdr_topo_nic_count(t))
		return;
	print_matrix(out, t);
	print_nearest(out, t, env);
	if (pairs)
		print_pairs(out, t, env);
}
