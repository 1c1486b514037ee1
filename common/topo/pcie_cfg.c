/*
 * PCI configuration space through libpci's linux-sysfs method, rooted at
 * ROOT/sys/bus/pci ("sysfs.path"), and the pure decoding of what it reads.
 */
#include "config.h"

#include "pcie_cfg.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pci/pci.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct gdr_pcie {
	struct pci_access *acc;
	char root[PATH_MAX];
	char sysfs[PATH_MAX]; /* kept for libpci's "sysfs.path" */
};

double gdr_pcie_gts(int gen)
{
	static const double gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };

	return gen > 0 && gen < (int)GDR_ARRAY_SIZE(gts) ? gts[gen] : 0;
}

double gdr_pcie_link_gbps(int gen, int width)
{
	double gts = gdr_pcie_gts(gen);

	if (gts <= 0 || width <= 0)
		return 0;
	return gts * width * (gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0);
}

const char *gdr_pcie_link_text(int gen, int width, char *buf, size_t len)
{
	if (gdr_pcie_gts(gen) <= 0)
		return gdr_strlcpy(buf, "unknown", len);
	snprintf(buf, len, "gen%d x%d", gen, width);
	return buf;
}

int gdr_pcie_acs_redirects(const struct gdr_pcie_dev *d)
{
	return d->has_acs && (d->acs_ctrl & (PCI_ACS_CTRL_REQ_RED | PCI_ACS_CTRL_CMPLT_RED));
}

static unsigned int size_code(unsigned int code)
{
	return code > 5 ? 5 : code;
}

void gdr_pcie_decode(const struct gdr_pcie_regs *r, struct gdr_pcie_dev *d)
{
	d->vendor = r->vendor;
	d->readable = r->vendor != 0xffff && r->vendor != 0;
	d->is_pcie = d->readable && r->exp_found;
	d->type = d->is_pcie ? (r->exp_flags & PCI_EXP_FLAGS_TYPE) >> 4 : -1;
	if (d->is_pcie) {
		d->cap_gen = (int)(r->lnkcap & PCI_EXP_LNKCAP_SPEED);
		d->cap_width = (int)((r->lnkcap & PCI_EXP_LNKCAP_WIDTH) >> 4);
		d->sta_gen = r->lnksta & PCI_EXP_LNKSTA_SPEED;
		d->sta_width = (r->lnksta & PCI_EXP_LNKSTA_WIDTH) >> 4;
		/* Sizes are 128 << code; codes above 5 (4096 B) are reserved. */
		d->mps_cap = 128 << size_code(r->devcap & PCI_EXP_DEVCAP_PAYLOAD);
		d->mps = 128 << size_code((r->devctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5);
		d->mrrs = 128 << size_code((r->devctl & PCI_EXP_DEVCTL_READRQ) >> 12);
		d->relaxed = !!(r->devctl & PCI_EXP_DEVCTL_RELAXED);
	}
	d->has_acs = d->readable && r->acs_found;
	d->acs_cap = d->has_acs ? r->acs_cap : 0;
	d->acs_ctrl = d->has_acs ? r->acs_ctrl : 0;
	d->has_ats = d->readable && r->ats_found;
	d->ats_enabled = d->has_ats && (r->ats_ctrl & PCI_ATS_CTRL_ENABLE);
}

int gdr_pcie_norm_bdf(const char *in, char *out, size_t len)
{
	unsigned int dom = 0, bus, dev, fn;
	int end = -1;

	/* "00000000:19:00.0" (CUDA) has a 32-bit domain; Linux prints 4 digits. */
	if (sscanf(in, "%8x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &end) != 4 || in[end]) {
		end = -1;
		dom = 0;
		if (sscanf(in, "%2x:%2x.%1x%n", &bus, &dev, &fn, &end) != 3 || in[end])
			return -EINVAL;
	}
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return -EINVAL;
	snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

/* libpci calls this and expects it not to return: it cannot go on after it. */
__attribute__((noreturn, format(printf, 1, 2))) static void lib_error(char *msg, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, msg);
	vsnprintf(buf, sizeof(buf), msg, ap);
	va_end(ap);
	gdr_err("libpci: %s (the PCI tree is not readable; run without the PCIe checks)", buf);
	exit(2);
}

/* A missing config file is a fact the checks report (n-a), not a message. */
__attribute__((format(printf, 1, 2))) static void lib_quiet(char *msg, ...)
{
	(void)msg;
}

/* libpci stops the program on a directory entry that is not a PCI address: check first. */
static int entries_ok(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		unsigned int dom, bus, dev;
		int fn;

		if (e->d_name[0] == '.')
			continue;
		if (sscanf(e->d_name, "%x:%x:%x.%d", &dom, &bus, &dev, &fn) < 4 ||
		    dom > 0x7fffffff) {
			rc = -EINVAL;
			break;
		}
	}
	closedir(d);
	return rc;
}

int gdr_pcie_open(struct gdr_pcie **out, const char *root)
{
	struct gdr_pcie *p;
	char devs[PATH_MAX + 16];
	int rc;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	gdr_strlcpy(p->root, root && *root ? root : "/", sizeof(p->root));
	gdr_rooted_path(p->root, "/sys/bus/pci", p->sysfs, sizeof(p->sysfs));
	/* libpci's object names are limited to 1024 characters. */
	if (strlen(p->sysfs) > 900) {
		free(p);
		return -ENAMETOOLONG;
	}
	snprintf(devs, sizeof(devs), "%s/devices", p->sysfs);
	rc = entries_ok(devs);
	if (rc) {
		free(p);
		return rc;
	}
	p->acc = pci_alloc();
	if (!p->acc) {
		free(p);
		return -ENOMEM;
	}
	p->acc->error = lib_error;
	p->acc->warning = lib_quiet;
	p->acc->debug = lib_quiet;
	p->acc->method = PCI_ACCESS_SYS_BUS_PCI;
	pci_set_param(p->acc, "sysfs.path", p->sysfs);
	pci_init(p->acc);
	pci_scan_bus(p->acc);
	*out = p;
	return 0;
}

void gdr_pcie_close(struct gdr_pcie *p)
{
	if (!p)
		return;
	if (p->acc)
		pci_cleanup(p->acc);
	free(p);
}

static struct pci_dev *find_dev(struct gdr_pcie *p, const char *bdf)
{
	unsigned int dom, bus, dev, fn;

	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return NULL;
	for (struct pci_dev *d = p->acc->devices; d; d = d->next)
		if ((unsigned int)d->domain == dom && d->bus == bus && d->dev == dev &&
		    d->func == fn)
			return d;
	return NULL;
}

/* The kernel's view of the BARs ("0xstart 0xend 0xflags" per line), read here rather than
 * through PCI_FILL_SIZES: libpci stops the program on a malformed resource file. */
static void read_bars(const char *root, const char *bdf, uint64_t *size)
{
	char path[128], buf[2048];
	const char *line = buf;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0)
		return;
	for (int i = 0; i < 6 && line && *line; i++) {
		unsigned long long start, end, flags;

		if (sscanf(line, "%llx %llx %llx", &start, &end, &flags) == 3 && end > start)
			size[i] = (uint64_t)(end - start + 1);
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
}

int gdr_pcie_read(struct gdr_pcie *p, const char *bdf, struct gdr_pcie_dev *d)
{
	struct gdr_pcie_regs r;
	struct pci_dev *pd = find_dev(p, bdf);
	struct pci_cap *cap;
	const char *grp;

	memset(d, 0, sizeof(*d));
	d->type = -1;
	gdr_strlcpy(d->bdf, bdf, sizeof(d->bdf));
	if (!pd)
		return -ENOENT;
	memset(&r, 0, sizeof(r));
	/* A missing or short config file reads as all ones. */
	r.vendor = pci_read_word(pd, PCI_VENDOR_ID);
	if (r.vendor != 0xffff) {
		cap = pci_find_cap(pd, PCI_CAP_ID_EXP, PCI_CAP_NORMAL);
		if (cap) {
			r.exp_found = 1;
			r.exp_flags = pci_read_word(pd, cap->addr + PCI_EXP_FLAGS);
			r.devcap = pci_read_long(pd, cap->addr + PCI_EXP_DEVCAP);
			r.devctl = pci_read_word(pd, cap->addr + PCI_EXP_DEVCTL);
			r.lnkcap = pci_read_long(pd, cap->addr + PCI_EXP_LNKCAP);
			r.lnksta = pci_read_word(pd, cap->addr + PCI_EXP_LNKSTA);
		}
		cap = pci_find_cap(pd, PCI_EXT_CAP_ID_ACS, PCI_CAP_EXTENDED);
		if (cap) {
			r.acs_found = 1;
			r.acs_cap = pci_read_word(pd, cap->addr + PCI_ACS_CAP);
			r.acs_ctrl = pci_read_word(pd, cap->addr + PCI_ACS_CTRL);
		}
		cap = pci_find_cap(pd, PCI_EXT_CAP_ID_ATS, PCI_CAP_EXTENDED);
		if (cap) {
			r.ats_found = 1;
			r.ats_ctrl = pci_read_word(pd, cap->addr + PCI_ATS_CTRL);
		}
	}
	gdr_pcie_decode(&r, d);
	pci_fill_info(pd, PCI_FILL_IOMMU_GROUP);
	grp = pci_get_string_property(pd, PCI_FILL_IOMMU_GROUP);
	if (grp)
		gdr_strlcpy(d->iommu_group, grp, sizeof(d->iommu_group));
	read_bars(p->root, d->bdf, d->bar_size);
	return 0;
}

static int is_bdf(const char *s, size_t n)
{
	unsigned int dom, bus, dev, fn;
	char tmp[GDR_PCIE_BDF_LEN];

	if (n != 12)
		return 0;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return sscanf(tmp, "%4x:%2x:%2x.%1x", &dom, &bus, &dev, &fn) == 4 && tmp[4] == ':' &&
	       tmp[7] == ':' && tmp[10] == '.';
}

static int chain_by_path(const char *root, const char *bdf, char chain[][GDR_PCIE_BDF_LEN], int max)
{
	char rel[128], full[PATH_MAX], devroot[PATH_MAX], real[PATH_MAX], realroot[PATH_MAX];
	const char *p;
	int n = 0;

	snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s", bdf);
	gdr_rooted_path(root, rel, full, sizeof(full));
	if (!realpath(full, real))
		return -errno;
	/* Only what lies below ROOT/sys/devices is the PCI hierarchy. */
	gdr_rooted_path(root, "/sys/devices", devroot, sizeof(devroot));
	p = real;
	if (realpath(devroot, realroot) && !strncmp(real, realroot, strlen(realroot)))
		p = real + strlen(realroot);
	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (is_bdf(p, len)) {
			if (n >= max)
				return -E2BIG;
			memcpy(chain[n], p, len);
			chain[n][len] = '\0';
			n++;
		}
		p += len;
	}
	if (n == 0 || strcmp(chain[n - 1], bdf))
		return -ENOENT;
	return n;
}

/* The bridge whose secondary bus is bus, in domain dom: the device's parent by config space. */
static struct pci_dev *bridge_above(struct gdr_pcie *p, int dom, unsigned int bus)
{
	for (struct pci_dev *d = p->acc->devices; d; d = d->next) {
		if (d->domain != dom || (pci_read_byte(d, PCI_HEADER_TYPE) & 0x7f) != 1)
			continue;
		if (pci_read_byte(d, PCI_SECONDARY_BUS) == bus && bus != 0)
			return d;
	}
	return NULL;
}

/* Walk up through bridges' secondary bus numbers when sysfs gives no hierarchy. */
static int chain_by_bus(const char *root, const char *bdf, char chain[][GDR_PCIE_BDF_LEN], int max)
{
	char tmp[GDR_PCIE_MAX_CHAIN][GDR_PCIE_BDF_LEN];
	struct gdr_pcie *p = NULL;
	struct pci_dev *d;
	int n = 0, rc = gdr_pcie_open(&p, root);

	if (rc)
		return rc;
	d = find_dev(p, bdf);
	while (d && n < GDR_PCIE_MAX_CHAIN) {
		snprintf(tmp[n++], GDR_PCIE_BDF_LEN, "%04x:%02x:%02x.%x", (unsigned int)d->domain,
			 d->bus, d->dev, d->func);
		d = bridge_above(p, d->domain, d->bus);
	}
	gdr_pcie_close(p);
	if (n == 0)
		return -ENOENT;
	if (n > max || d)
		return -E2BIG;
	for (int i = 0; i < n; i++)
		memcpy(chain[i], tmp[n - 1 - i], GDR_PCIE_BDF_LEN);
	return n;
}

int gdr_pcie_chain(const char *root, const char *bdf, char chain[][GDR_PCIE_BDF_LEN], int max)
{
	int n = chain_by_path(root, bdf, chain, max);
	int m;

	/* A copy of the tree without its links (a tarball) lists every device flat. */
	if (n != 1)
		return n;
	m = chain_by_bus(root, bdf, chain, max);
	return m > 1 || m == -E2BIG ? m : n;
}

int gdr_pcie_nvidia_gpus(const char *root, char bdf[][GDR_PCIE_BDF_LEN], int max)
{
	char dir[4096], path[320], buf[64];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(gdr_rooted_path(root, "/sys/bus/pci/devices", dir, sizeof(dir)));

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		int hi = 0;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= GDR_PCIE_BDF_LEN)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", de->d_name);
		if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0 || strcasecmp(buf, "0x10de"))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", de->d_name);
		/* 0x0300xx VGA, 0x0302xx 3D controller: the GPUs, not NVIDIA's bridges or audio. */
		if (gdr_read_rooted(root, path, buf, sizeof(buf)) < 0 ||
		    (strncasecmp(buf, "0x0300", 6) && strncasecmp(buf, "0x0302", 6)))
			continue;
		if (n < max) {
			gdr_strlcpy(bdf[n++], de->d_name, GDR_PCIE_BDF_LEN);
			continue;
		}
		/* More than max (SR-IOV functions): the first max in bus order, not readdir's. */
		for (int i = 1; i < n; i++)
			if (strcmp(bdf[i], bdf[hi]) > 0)
				hi = i;
		if (n && strcmp(de->d_name, bdf[hi]) < 0)
			gdr_strlcpy(bdf[hi], de->d_name, GDR_PCIE_BDF_LEN);
	}
	closedir(d);
	/* readdir order is the filesystem's: sort so that reports are stable. */
	qsort(bdf, n, GDR_PCIE_BDF_LEN, gdr_cmp_strings);
	return n;
}

int gdr_pcie_ibdev_bdf(const char *root, const char *ibdev, char *bdf, size_t len)
{
	char rel[160], full[PATH_MAX], real[PATH_MAX];
	const char *base;

	if (strchr(ibdev, '/'))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/device", ibdev);
	gdr_rooted_path(root, rel, full, sizeof(full));
	if (!realpath(full, real))
		return -errno;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (!is_bdf(base, strlen(base))) {
		/* Not a link (a copied tree): the device's uevent names its PCI address. */
		char uevent[1024];
		const char *slot;

		snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/device/uevent", ibdev);
		if (gdr_read_rooted(root, rel, uevent, sizeof(uevent)) < 0 ||
		    !(slot = strstr(uevent, "PCI_SLOT_NAME=")) || !is_bdf(slot + 14, 12))
			return -ENODEV; /* a virtual device (rxe, siw) or not on PCI */
		gdr_strlcpy(bdf, slot + 14, len < 13 ? len : 13);
		return 0;
	}
	gdr_strlcpy(bdf, base, len);
	return 0;
}

double gdr_pcie_endpoint_gbps(struct gdr_pcie *p, const char *root, const char *bdf, int *gen,
			      int *width)
{
	char chain[GDR_PCIE_MAX_CHAIN][GDR_PCIE_BDF_LEN];
	struct gdr_pcie_dev d, up;
	int n = gdr_pcie_chain(root, bdf, chain, GDR_PCIE_MAX_CHAIN);
	int g, w;

	*gen = *width = 0;
	if (gdr_pcie_read(p, bdf, &d) || !d.is_pcie || !d.cap_gen || !d.sta_width)
		return 0;
	g = d.cap_gen;
	w = d.sta_width;
	if (n >= 2 && !gdr_pcie_read(p, chain[n - 2], &up) && up.is_pcie && up.cap_gen &&
	    up.cap_gen < g)
		g = up.cap_gen;
	*gen = g;
	*width = w;
	return gdr_pcie_link_gbps(g, w);
}
