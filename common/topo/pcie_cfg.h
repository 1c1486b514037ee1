/*
 * PCI configuration space facts that decide GPUDirect performance, read with
 * libpci (pciutils) through its Linux sysfs method pointed at
 * ROOT/sys/bus/pci, so that a fixture tree stands in for a node. The path
 * between two devices comes from the sysfs device hierarchy (the realpath of
 * ROOT/sys/bus/pci/devices/BDF), as the kernel lays it out.
 *
 * Decoding and the rate arithmetic are pure functions (unit-tested); only
 * gdr_pcie_open/gdr_pcie_read/gdr_pcie_chain touch files.
 */
#ifndef GDR_PCIE_CFG_H
#define GDR_PCIE_CFG_H

#include <stddef.h>
#include <stdint.h>

#define GDR_PCIE_BDF_LEN   16
#define GDR_PCIE_MAX_CHAIN 16

/* Port types (PCIe capability Flags bits 7:4). */
enum gdr_pcie_type {
	GDR_PCIE_ENDPOINT = 0x0,
	GDR_PCIE_LEGACY_ENDPOINT = 0x1,
	GDR_PCIE_ROOT_PORT = 0x4,
	GDR_PCIE_UPSTREAM = 0x5,
	GDR_PCIE_DOWNSTREAM = 0x6,
};

struct gdr_pcie_dev {
	char bdf[GDR_PCIE_BDF_LEN];
	int readable;		/* config space could be read (vendor != 0xffff) */
	uint16_t vendor;	/* from config space */
	int is_pcie;		/* has a PCI Express capability */
	int type;		/* enum gdr_pcie_type, -1 unknown */
	int cap_gen, cap_width; /* LnkCap: max speed (1 = 2.5 GT/s ...) and lanes */
	int sta_gen, sta_width; /* LnkSta: negotiated */
	int mps_cap;		/* DevCap Max_Payload_Size supported, bytes */
	int mps, mrrs;		/* DevCtl Max_Payload_Size and Max_Read_Request_Size, bytes */
	int relaxed;		/* DevCtl Enable Relaxed Ordering */
	int has_acs;
	uint16_t acs_cap, acs_ctrl; /* ACS Capability / Control registers */
	int has_ats;
	int ats_enabled;
	uint64_t bar_size[6]; /* from the kernel's resource file; 0 unknown */
	char iommu_group[16]; /* "" when the device has none */
};

/* Raw registers for gdr_pcie_decode: what config space holds, offsets resolved. */
struct gdr_pcie_regs {
	uint16_t vendor;
	int exp_found; /* PCIe capability present */
	uint16_t exp_flags;
	uint32_t devcap, lnkcap;
	uint16_t devctl, lnksta;
	int acs_found;
	uint16_t acs_cap, acs_ctrl;
	int ats_found;
	uint16_t ats_ctrl;
};

/* Fill the register-derived fields of d from r (bdf, bars, group untouched). */
void gdr_pcie_decode(const struct gdr_pcie_regs *r, struct gdr_pcie_dev *d);

/* 2.5/5/8/16/32/64 GT/s for gen 1..6, 0 otherwise. */
double gdr_pcie_gts(int gen);
/*
 * Data rate of a link in Gb/s: GT/s x lanes less line encoding (8b/10b for
 * gen1/2, 128b/130b from gen3 on); TLP/DLLP overhead is not subtracted. 0
 * when gen or width is unknown.
 */
double gdr_pcie_link_gbps(int gen, int width);
/* "gen4 x16 (16 GT/s)" style text of a link; "unknown" when gen is 0. */
const char *gdr_pcie_link_text(int gen, int width, char *buf, size_t len);

/* ACS P2P Request or Completion Redirect enabled: peer traffic goes up to the root complex. */
int gdr_pcie_acs_redirects(const struct gdr_pcie_dev *d);

struct gdr_pcie;

/*
 * Open libpci on ROOT/sys/bus/pci (root NULL or "" = "/"). -ENOENT when that
 * directory is missing, -EINVAL when an entry is not a PCI address (libpci
 * would stop the program on it), -ENOMEM.
 */
int gdr_pcie_open(struct gdr_pcie **out, const char *root);
void gdr_pcie_close(struct gdr_pcie *p);

/* Read one device's facts. 0, -ENOENT when libpci does not list bdf. */
int gdr_pcie_read(struct gdr_pcie *p, const char *bdf, struct gdr_pcie_dev *d);

/*
 * The PCI devices from the root port down to bdf (bdf last), from the sysfs
 * hierarchy. Returns the count (>= 1) or -errno.
 */
int gdr_pcie_chain(const char *root, const char *bdf, char chain[][GDR_PCIE_BDF_LEN], int max);

/*
 * The NVIDIA GPUs on the PCI bus (ROOT/sys/bus/pci/devices: vendor 0x10de,
 * class VGA or 3D controller), at most max, in bus id order as nvidia-smi
 * numbers them. How many; 0 when the directory cannot be read.
 */
int gdr_pcie_nvidia_gpus(const char *root, char bdf[][GDR_PCIE_BDF_LEN], int max);

/* The PCI address of an RDMA device (ROOT/sys/class/infiniband/NAME/device). 0 or -errno. */
int gdr_pcie_ibdev_bdf(const char *root, const char *ibdev, char *bdf, size_t len);

/*
 * The rate an endpoint's link runs at under load, in Gb/s: the speed is the
 * lower of the two ends' maxima (LnkCap; GPUs slow the link down when idle),
 * the width as negotiated (LnkSta). gen/width get those two; 0 unknown.
 */
double gdr_pcie_endpoint_gbps(struct gdr_pcie *p, const char *root, const char *bdf, int *gen,
			      int *width);

/* Normalise "19:00.0" / "00000000:19:00.0" to "0000:19:00.0". 0 or -EINVAL. */
int gdr_pcie_norm_bdf(const char *in, char *out, size_t len);

#endif
