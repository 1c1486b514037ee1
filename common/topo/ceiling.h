/*
 * The expected ceiling of a GPU-NIC pair: the lowest of the NIC port's data
 * rate, the NIC's PCIe link and the GPU's PCIe link, in Gb/s. See
 * docs/pcie-health.md for what is and is not subtracted.
 */
#ifndef GDR_CEILING_H
#define GDR_CEILING_H

#include <stddef.h>
#include <stdint.h>

/*
 * Data rate of an RDMA port in Gb/s from ibv_port_attr's active_speed and
 * active_width codes. InfiniBand: the lane's data rate (SDR/DDR/QDR less
 * 8b/10b, FDR10/FDR less 64b/66b, EDR and faster nominal). Ethernet (RoCE):
 * the codes stand for the Ethernet speed, taken as is. 0 when unknown.
 */
double gdr_ib_port_gbps(unsigned int active_speed, unsigned int active_width, int ethernet);

/*
 * The same from the kernel's sysfs text, ports/N/rate: "100 Gb/sec (4X EDR)".
 * 0 when not understood.
 */
double gdr_ib_rate_text_gbps(const char *text, int ethernet);

/* Per-link PCIe facts that the ceiling needs: gen from the lower maximum of
 * the two ends, width as negotiated (see gdr_pcie_pair_link). */
struct gdr_ceiling {
	double port_gbps;     /* 0 unknown */
	double nic_pcie_gbps; /* 0 unknown */
	double gpu_pcie_gbps; /* 0 unknown or no GPU (host memory) */
	int nic_not_pci;      /* a software device (rxe, siw): no NIC PCIe link to count */
	double gbps;	      /* the minimum of the known parts; 0 when the port or a link
				 that applies is unknown */
	const char *limit;    /* "port", "NIC PCIe", "GPU PCIe" or "" */
};

/* Fill c->gbps and c->limit from the parts; with_gpu 0 leaves the GPU out (host rows). */
void gdr_ceiling_compute(struct gdr_ceiling *c, int with_gpu);

/* "100.0 Gb/s (port; NIC PCIe 252.1, GPU PCIe 252.1)"; "unknown (...)" when gbps is 0. */
const char *gdr_ceiling_text(const struct gdr_ceiling *c, int with_gpu, char *buf, size_t len);

/*
 * Everything from the system under root (NULL = "/"): the NIC's port rate
 * from sysfs ports/PORT/rate (port 0 = the first ACTIVE port), both PCIe links
 * through libpci. gpu_bdf NULL or "" = host memory. 0 or -errno; the parts it
 * could not learn stay 0.
 */
int gdr_ceiling_sysfs(const char *root, const char *nic, int port, const char *gpu_bdf,
		      struct gdr_ceiling *c);

struct ibv_context;
struct gdr_result;

/*
 * A result row's ceiling_gbps for the NIC this run uses: the port rate from
 * ibv_query_port (active_speed x active_width), the PCIe links from this
 * system's configuration space; gpu_bdf NULL = host memory. Bidirectional
 * rows get twice the ceiling (each direction has its own lanes). Leaves 0
 * (unknown) when a part is missing.
 */
void gdr_ceiling_row(struct ibv_context *verbs, unsigned int port, const char *nic,
		     const char *gpu_bdf, struct gdr_result *r);
/* The parts of that ceiling, gdr_ceiling_compute()d (with_gpu when gpu_bdf is given). */
void gdr_ceiling_live(struct ibv_context *verbs, unsigned int port, const char *nic,
		      const char *gpu_bdf, struct gdr_ceiling *c);

/*
 * The bounce path's ceiling (docs/bounce.md, "How the ceiling is computed"):
 * the pipeline runs at its slowest stage, the RDMA from host memory (the
 * port and the NIC's PCIe link: nic, computed without the GPU) or the
 * GPU <-> staging copy, whose slower way, min(D2H, H2D), was measured at the
 * row's chunk (the GPU's PCIe link is what that copy crosses: the measured
 * rate takes its place).
 */
struct gdr_bounce_ceiling {
	struct gdr_ceiling nic; /* port and NIC PCIe: gdr_ceiling_compute(.., 0) */
	double links_gbps;	/* the row's ceiling from the links, GPU's included */
	double d2h, h2d;	/* copy rates at chunk, GB/s (1e9 B/s); NAN or <= 0: none */
	uint64_t chunk;
	const char *copy;    /* "ce" or "sm" */
	unsigned int blocks; /* sm: blocks per launch; 0 for ce */
	int stand_in;	     /* figures from a stand-in driver (GDRPERF_LIBCUDA) */
	const char *why;     /* no copy rates: why */
};
/*
 * The row's ceiling, Gb/s: min(nic, 8 x min(D2H, H2D)); 0 when the NIC side
 * is unknown; links_gbps when no copy rate. note says which bound decided
 * and where the copy figure came from.
 */
double gdr_ceiling_bounce(const struct gdr_bounce_ceiling *b, char *note, size_t len);

/* pct_of_ceiling from bw_avg_gbps, once the row's bandwidth is in; -1 when unknown. */
void gdr_ceiling_pct(struct gdr_result *r);

#endif
