/*
 * gdr_doctor GPU checks: NVIDIA GPUs on the PCI bus (BAR1 size, from sysfs
 * under the root, else from NVML) and, when the CUDA driver loads, its
 * version and each GPU's DMA_BUF_SUPPORTED and GPU_DIRECT_RDMA_SUPPORTED
 * attributes.
 */
#include "config.h"

#include "cuda.h"
#include "doctor.h"
#include "nvml.h"
#include "pcie_cfg.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PCI_GPUS 64

struct pci_gpu {
	char bdf[32];
	uint64_t bar1;	    /* 0 = unknown */
	int bar1_nvml;	    /* bar1 came from NVML, not the resource file */
	char bar1_why[192]; /* why bar1 is unknown */
	int matched;	    /* reported together with a CUDA device */
};

/* BAR1 is the second line of the resource file: "0xstart 0xend 0xflags". */
static uint64_t read_bar1(const char *root, const char *bdf)
{
	char path[320], buf[2048];
	unsigned long long start, end, flags;
	const char *line;

	/* A bus id fits GDR_PCIE_BDF_LEN (gdr_pcie_nvidia_gpus); the bound tells the compiler. */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.*s/resource", GDR_PCIE_BDF_LEN, bdf);
	if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0)
		return 0;
	line = strchr(buf, '\n');
	if (!line || sscanf(line + 1, "%llx %llx %llx", &start, &end, &flags) != 3 || end <= start)
		return 0;
	return (uint64_t)(end - start + 1);
}

/*
 * A GPU passed into a VM or a container may come without its sysfs resource
 * file (the H200 of docs/usage-doctor.md): NVML, which asks the driver, still
 * knows BAR1.
 */
static void nvml_bar1(struct pci_gpu *gpus, int n)
{
	struct gdr_nvml *nv = NULL;
	char why[192] = "";

	for (int i = 0; i < n; i++) {
		unsigned long long b = 0;

		if (gpus[i].bar1)
			continue;
		if (!nv && why[0]) {
			gdr_strlcpy(gpus[i].bar1_why, why, sizeof(gpus[i].bar1_why));
			continue;
		}
		if (!nv && gdr_nvml_open(&nv, why, sizeof(why))) {
			gdr_strlcpy(gpus[i].bar1_why, why, sizeof(gpus[i].bar1_why));
			continue;
		}
		if (gdr_nvml_bar1(nv, gpus[i].bdf, &b, gpus[i].bar1_why,
				  sizeof(gpus[i].bar1_why)) == 0) {
			gpus[i].bar1 = b;
			gpus[i].bar1_nvml = 1;
		}
	}
	gdr_nvml_close(nv);
}

static unsigned int scan_pci(const char *root, struct pci_gpu *gpus, unsigned int max)
{
	char bdf[MAX_PCI_GPUS][GDR_PCIE_BDF_LEN];
	int n = gdr_pcie_nvidia_gpus(root, bdf, max < MAX_PCI_GPUS ? (int)max : MAX_PCI_GPUS);

	memset(gpus, 0, max * sizeof(*gpus));
	for (int i = 0; i < n; i++) {
		gdr_strlcpy(gpus[i].bdf, bdf[i], sizeof(gpus[i].bdf));
		gpus[i].bar1 = read_bar1(root, gpus[i].bdf);
	}
	nvml_bar1(gpus, n);
	return n > 0 ? (unsigned int)n : 0;
}

/* gpuN.bar1, GPUs in PCI bus order: does BAR1 hold what a run registers? */
static void bar1_checks(struct gdr_doctor *doc, const struct pci_gpu *gpus, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		const struct pci_gpu *g = &gpus[i];
		const char *src = g->bar1_nvml ? " (NVML)" : "";
		struct gdr_check *c;
		char name[48], have[32], need[32];

		snprintf(name, sizeof(name), "gpu%u.bar1", i);
		gdr_fmt_size(doc->buffer_bytes, need, sizeof(need));
		if (!g->bar1) {
			c = gdr_doctor_add(doc, name, GDR_CHECK_NA, 0);
			gdr_check_value(c, "%s: BAR1 size unknown (no resource file; %s)", g->bdf,
					g->bar1_why);
			continue;
		}
		gdr_fmt_size(g->bar1, have, sizeof(have));
		if (g->bar1 >= (1ull << 30) && g->bar1 >= doc->buffer_bytes) {
			c = gdr_doctor_add(doc, name, GDR_CHECK_PASS, 0);
			gdr_check_value(c, "%s: BAR1 %s%s >= %s a run registers", g->bdf, have, src,
					need);
			continue;
		}
		if (g->bar1 < doc->buffer_bytes) {
			c = gdr_doctor_add(doc, name, GDR_CHECK_FAIL, 0);
			gdr_check_value(c, "%s: BAR1 %s%s is smaller than the %s a run registers",
					g->bdf, have, src, need);
		} else {
			c = gdr_doctor_add(doc, name, GDR_CHECK_WARN, 0);
			gdr_check_value(c,
					"%s: BAR1 %s%s holds the %s a run registers, but little "
					"more (NCCL and other processes share it)",
					g->bdf, have, src, need);
		}
		c->affects = GDR_PATH_DMABUF | GDR_PATH_PEERMEM;
		gdr_check_fix(c, "enable Above 4G Decoding and Resizable BAR in the BIOS (large "
				 "BAR1); nvidia-smi -q -d MEMORY shows BAR1 use");
	}
}

static const char *bar1_text(const struct pci_gpu *g, char *buf, size_t len)
{
	char sz[32];

	if (!g || !g->bar1)
		return gdr_strlcpy(buf, "BAR1 unknown", len);
	snprintf(buf, len, "BAR1 %s%s", gdr_fmt_size(g->bar1, sz, sizeof(sz)),
		 g->bar1_nvml ? " (NVML)" : "");
	return buf;
}

static struct pci_gpu *find_pci(struct pci_gpu *gpus, unsigned int n, const char *bdf)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcasecmp(gpus[i].bdf, bdf))
			return &gpus[i];
	return NULL;
}

/* Check "gpuI.SUFFIX" of one attribute: PASS at 1; FAIL at 0, n/a unknown, both with fix. 1 = PASS.
 */
static int attr_check(struct gdr_doctor *doc, int i, const char *suffix, const char *attr,
		      int value, const char *fix, unsigned int path)
{
	struct gdr_check *c;
	char name[48];

	snprintf(name, sizeof(name), "gpu%d.%s", i, suffix);
	if (value > 0) {
		c = gdr_doctor_add(doc, name, GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%s=1", attr);
		c->proves = path;
		return 1;
	}
	c = gdr_doctor_add(doc, name, value == 0 ? GDR_CHECK_FAIL : GDR_CHECK_NA, 0);
	gdr_check_value(c, "%s=%s", attr, value == 0 ? "0" : "unknown");
	gdr_check_fix(c, "%s", fix);
	return 0;
}

static void cuda_gpu_checks(struct gdr_doctor *doc, struct gdr_cuda *cu, struct pci_gpu *pci,
			    unsigned int npci)
{
	struct gdr_check *c;
	char name[48], why[256], bar[48];
	int count = 0, any_dmabuf = 0, any_gdr = 0;
	unsigned int first_gpu_check = doc->nchecks;

	if (gdr_cuda_device_count(cu, &count) || count == 0) {
		c = gdr_doctor_add(doc, "gpus", GDR_CHECK_FAIL, GDR_BLOCK_BOTH);
		gdr_check_value(c, "the CUDA driver sees no GPU");
		gdr_check_fix(c, "check CUDA_VISIBLE_DEVICES / the container's GPU allocation");
		gdr_check_brief(c, "the CUDA driver sees no GPU (check CUDA_VISIBLE_DEVICES)");
		return;
	}
	for (int i = 0; i < count; i++) {
		struct gdr_gpu gpu;
		struct pci_gpu *pg;

		memset(&gpu, 0, sizeof(gpu));
		snprintf(name, sizeof(name), "gpu%d", i);
		if (gdr_cuda_gpu_info(cu, i, &gpu, why, sizeof(why))) {
			c = gdr_doctor_add(doc, name, GDR_CHECK_WARN, 0);
			gdr_check_value(c, "%s", why);
			continue;
		}
		pg = find_pci(pci, npci, gpu.bus_id);
		if (pg)
			pg->matched = 1;
		c = gdr_doctor_add(doc, name, GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%s %s, %s", gpu.bus_id, gpu.name,
				bar1_text(pg, bar, sizeof(bar)));

		any_dmabuf |= attr_check(
		    doc, i, "dmabuf", "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED", gpu.dmabuf_supported,
		    "needs the open kernel module, kernel >= 5.12 and a CUDA 11.7+ driver",
		    GDR_BLOCK_DMABUF);
		any_gdr |=
		    attr_check(doc, i, "gdr", "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED",
			       gpu.gdr_supported,
			       "GeForce and some virtualised GPUs do not support GPUDirect RDMA",
			       GDR_BLOCK_PEERMEM);
	}
	doc->dmabuf_usable_gpu = any_dmabuf;
	/* A path is blocked only when no GPU at all can take it; mark the first failing check. */
	for (unsigned int i = first_gpu_check; i < doc->nchecks; i++) {
		struct gdr_check *g = &doc->checks[i];
		size_t nl = strlen(g->name);

		if (g->status != GDR_CHECK_FAIL)
			continue;
		if (!any_dmabuf && nl > 7 && !strcmp(g->name + nl - 7, ".dmabuf")) {
			g->blocks |= GDR_BLOCK_DMABUF;
			gdr_check_brief(g, "no GPU reports DMA_BUF_SUPPORTED=1 (%s)", g->fix);
			any_dmabuf = -1;
		}
		if (!any_gdr && nl > 4 && !strcmp(g->name + nl - 4, ".gdr")) {
			/* The attribute is about nvidia_p2p pages, the peer-memory path. */
			g->blocks |= GDR_BLOCK_PEERMEM;
			gdr_check_brief(g, "no GPU reports GPU_DIRECT_RDMA_SUPPORTED=1 (%s)",
					g->fix);
			any_gdr = -1;
		}
	}
}

void gdr_doctor_gpu_checks(struct gdr_doctor *doc)
{
	struct pci_gpu pci[MAX_PCI_GPUS];
	unsigned int npci = scan_pci(doc->root, pci, MAX_PCI_GPUS);
	struct gdr_cuda *cu = NULL;
	struct gdr_check *c;
	char why[256] = "", bar[48], name[48];
	int ver = 0;

	for (unsigned int i = 0; i < npci && i < GDR_DOCTOR_MAX_DEVS; i++)
		gdr_strlcpy(doc->gpu_bdf[doc->ngpu_bdf++], pci[i].bdf, sizeof(doc->gpu_bdf[0]));

	if (gdr_cuda_load(&cu, why, sizeof(why))) {
		c = gdr_doctor_add(doc, "cuda-driver", GDR_CHECK_NA, 0);
		gdr_check_value(c, "%s", why[0] ? why : "no CUDA driver");
		cu = NULL;
	} else if (gdr_cuda_driver_version(cu, &ver)) {
		c = gdr_doctor_add(doc, "cuda-driver", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "cuDriverGetVersion failed: %s", gdr_cuda_last_error(cu));
	} else if (ver < 11070) {
		c = gdr_doctor_add(doc, "cuda-driver", GDR_CHECK_FAIL, GDR_BLOCK_DMABUF);
		gdr_check_value(c, "CUDA %d.%d (%d): DMA-BUF export needs >= 11.7", ver / 1000,
				ver % 1000 / 10, ver);
		gdr_check_fix(c, "install an NVIDIA driver with CUDA >= 11.7 (driver >= 515)");
		gdr_check_brief(c, "CUDA %d.%d has no DMA-BUF export (install driver >= 515)",
				ver / 1000, ver % 1000 / 10);
		doc->cuda_version = ver;
	} else {
		doc->cuda_version = ver;
		c = gdr_doctor_add(doc, "cuda-driver", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "CUDA %d.%d (%d)", ver / 1000, ver % 1000 / 10, ver);
	}
	if (cu)
		cuda_gpu_checks(doc, cu, pci, npci);
	/* GPUs the driver did not report (or all of them, without a driver): PCI facts only. */
	for (unsigned int i = 0; i < npci; i++) {
		if (pci[i].matched)
			continue;
		snprintf(name, sizeof(name), "pci-gpu%u", i);
		c = gdr_doctor_add(doc, name, cu ? GDR_CHECK_WARN : GDR_CHECK_NA, 0);
		gdr_check_value(c, "%s, %s%s", pci[i].bdf, bar1_text(&pci[i], bar, sizeof(bar)),
				cu ? " (not visible to CUDA)"
				   : "; attributes unknown: no CUDA driver");
	}
	if (!cu && npci == 0) {
		c = gdr_doctor_add(doc, "gpus", GDR_CHECK_NA, 0);
		gdr_check_value(c, "no NVIDIA GPU on the PCI bus (/sys/bus/pci/devices)");
	}
	if (cu)
		gdr_cuda_unload(cu);
	bar1_checks(doc, pci, npci);
}
