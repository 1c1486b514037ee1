/* gdr_topo's human output: device lists, the nvidia-smi-style matrix, nearest NICs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "topo_report.h"
#include "text.h"
#include "util.h"

/* nvidia-smi's own words, farthest first as it prints them. */
static const char legend[] =
    "Legend:\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
    "         (e.g., QPI/UPI), sub-NUMA clusters (SNC, NPS2/4) included, or locality unknown\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges\n"
    "         within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host\n"
    "         Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge (a PCIe switch counts once)\n"
    "  ?    = unknown: the NIC or the GPU is not on PCI in this topology (see the NIC list)\n";

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
	for (i = 0; i < gdr_topo_bare_hca_count(t); i++)
		fprintf(out,
			"%s  %s: Mellanox network function without an RDMA device "
			"(driver mlx5_ib/mlx4_ib not loaded?)\n",
			i || !gdr_topo_nic_count(t) ? "" : "\n", gdr_topo_bare_hca(t, i));
	if (!gdr_topo_nic_count(t))
		return;
	for (i = 0; i < gdr_topo_nic_count(t); i++)
		if ((int)strlen(safe(gdr_topo_nic(t, i)->name, s1)) > w)
			w = strlen(s1);
	fprintf(out, "\nRDMA NICs:\n");
	for (i = 0; i < gdr_topo_nic_count(t); i++) {
		const struct gdr_topo_nic *n = gdr_topo_nic(t, i);

		safe(n->name, s1);
		if (n->why[0])
			fprintf(out, "  %-*s %-12s  %s\n", w, s1, n->bus_id[0] ? n->bus_id : "-",
				safe(n->why, s2));
		else
			fprintf(out, "  %-*s %s  NUMA %-2s  %s\n", w, s1, n->bus_id,
				gdr_topo_numa_text(n->numa, nb, sizeof(nb)),
				n->link[0] ? safe(n->link, s3) : "-");
	}
}

static void print_matrix(FILE *out, const struct gdr_topo *t)
{
	struct gdr_topo_pair p;
	char nb[12], s1[SAFE_LEN];
	int i, j, w;

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
			fprintf(out, " %-*s", w < 4 ? 4 : w,
				p.cls == GDR_TOPO_UNKNOWN ? "?" : gdr_topo_class_name(p.cls));
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
	fprintf(out, "\n\n%s", legend);
}

static void print_nearest(FILE *out, const struct gdr_topo *t, const struct gdr_nccl_env *env)
{
	struct gdr_topo_pair best, p;
	char verdict[192], s1[SAFE_LEN];
	int i, j, k;

	fprintf(out, "\nNearest NIC per GPU (NCCL_NET_GDR_LEVEL=%s%s, NCCL_NET_GDR_READ=%s):\n",
		gdr_nccl_level_name(env->level), env->level_set ? "" : " by default",
		env->read < 0 ? "unset"
		: env->read   ? "1"
			      : "0");
	for (i = 0; i < gdr_topo_gpu_count(t); i++) {
		const struct gdr_topo_gpu *g = gdr_topo_gpu(t, i);

		if (gdr_topo_nearest_nic(t, g->bus_id, NULL, NULL, &best))
			continue;
		fprintf(out, "  GPU%d:", g->index);
		for (j = 0, k = 0; j < gdr_topo_nic_count(t); j++) {
			gdr_topo_pair_idx(t, i, j, &p);
			if (p.cls == best.cls)
				fprintf(out, "%s %s", k++ ? "," : "", safe(p.nic, s1));
		}
		fprintf(out, " (%s); %s\n", gdr_topo_class_name(best.cls),
			gdr_nccl_verdict(env, best.cls, verdict, sizeof(verdict)));
	}
	if (env->read < 0)
		fprintf(out,
			"NCCL_NET_GDR_READ unset: NCCL lets the NIC read GPU memory for sends on\n"
			"compute capability >= 8.0 (or with NVLink) only; receives use GPUDirect\n"
			"RDMA whenever the verdict says so.\n");
}

static void print_pairs(FILE *out, const struct gdr_topo *t, const struct gdr_nccl_env *env)
{
	struct gdr_topo_pair p;
	char line[512], sl[4 * sizeof(line) + 1], s1[SAFE_LEN];
	int i, j;

	fprintf(out, "\nPairs:\n");
	for (i = 0; i < gdr_topo_gpu_count(t); i++)
		for (j = 0; j < gdr_topo_nic_count(t); j++) {
			gdr_topo_pair_idx(t, i, j, &p);
			/* The benchmarks' line, less its "topology: " prefix. */
			gdr_topo_describe(&p, env, line, sizeof(line));
			fprintf(out, "  %s\n",
				gdr_text_safe(line + strlen("topology: "), sl, sizeof(sl)));
			if (p.cls == GDR_TOPO_SYS && p.reason[0])
				fprintf(out, "    (%s)\n", safe(p.reason, s1));
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
