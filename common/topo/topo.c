/*
 * Loading the topology and finding the GPUs and the RDMA NICs in it.
 *
 * A GPU is an NVIDIA PCI function (vendor 0x10de) of class VGA or 3D, or any
 * PCI function that carries a CUDA ("cuda0") or NVML ("nvml0") OS device: the
 * class test alone finds GPUs in exports made without the CUDA/NVML backends,
 * and leaves out NVIDIA functions that are not GPUs (NVSwitch is class 0x0680,
 * the audio function 0x0403). A NIC is an OpenFabrics OS device; its PCI
 * function is the device's parent. hwloc does not show every RDMA device
 * (Soft-RoCE has no PCI function, and hwloc may be built without the
 * OpenFabrics backend), so on this system /sys/class/infiniband is read too.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "text.h"
#include "topo_int.h"
#include "util.h"

#define PCI_VENDOR_NVIDIA      0x10de
#define PCI_CLASS_VGA	       0x0300
#define PCI_CLASS_3D	       0x0302
#define PCI_VENDOR_MELLANOX    0x15b3
#define PCI_BASE_CLASS_NETWORK 0x02

const char *gdr_topo_class_name(enum gdr_topo_class c)
{
	static const char *const names[] = { "PIX", "PXB", "PHB", "NODE", "SYS", "unknown" };

	return (unsigned int)c < GDR_ARRAY_SIZE(names) ? names[c] : "unknown";
}

/* Up to max hex digits, nothing else (sscanf's %x would take "0x" and signs). */
static const char *hex_field(const char *s, int max, unsigned int *out)
{
	int n = 0;

	*out = 0;
	while (n < max && isxdigit((unsigned char)s[n])) {
		*out = *out * 16 + (isdigit((unsigned char)s[n])
					? s[n] - '0'
					: (tolower((unsigned char)s[n]) - 'a' + 10));
		n++;
	}
	return n ? s + n : NULL;
}

int gdr_topo_busid_norm(const char *in, char *out, size_t len)
{
	unsigned int a, b, dom = 0, bus, dev, fn;
	const char *s = in ? hex_field(in, 8, &a) : NULL;

	/* [domain:]bus:dev.fn; CUDA writes a 4-digit domain, nvidia-smi an 8-digit one. */
	if (!s || *s != ':' || !(s = hex_field(s + 1, 8, &b)))
		return -EINVAL;
	if (*s == ':') {
		dom = a;
		bus = b;
		if (!(s = hex_field(s + 1, 2, &dev)))
			return -EINVAL;
	} else {
		bus = a;
		dev = b;
	}
	if (*s != '.' || !(s = hex_field(s + 1, 1, &fn)) || *s)
		return -EINVAL;
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return -EINVAL;
	snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

/* Does this PCI function carry a CUDA or NVML OS device? Returns it. */
static hwloc_obj_t gpu_osdev(hwloc_obj_t pci)
{
	hwloc_obj_t c, found = NULL;

	for (c = pci->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name)
			continue;
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU && !strncmp(c->name, "nvml", 4))
			return c; /* NVML names the model as nvidia-smi does */
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC && !strncmp(c->name, "cuda", 4))
			found = c;
	}
	return found;
}

static int is_gpu(hwloc_obj_t pci)
{
	unsigned int cls = pci->attr->pcidev.class_id;

	if (pci->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA &&
	    (cls == PCI_CLASS_VGA || cls == PCI_CLASS_3D))
		return 1;
	return gpu_osdev(pci) != NULL;
}

static void gpu_name(hwloc_obj_t pci, char *out, size_t len)
{
	hwloc_obj_t os = gpu_osdev(pci);
	const char *s = os ? hwloc_obj_get_info_by_name(os, "GPUModel") : NULL;

	if (!s || !*s)
		s = hwloc_obj_get_info_by_name(pci, "PCIDevice");
	if (s && *s) {
		gdr_strlcpy(out, s, len);
		return;
	}
	snprintf(out, len, "%s [%04x:%04x]",
		 pci->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA ? "NVIDIA" : "GPU",
		 pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id);
}

/* "16.0 GT/s x16" from sysfs on this system; hwloc's GB/s otherwise. */
void gdr_topo_link(const struct gdr_topo *t, hwloc_obj_t pci, char *out, size_t len)
{
	char bus[GDR_BUSID_LEN], path[128], speed[64], width[16];
	char *sfx;

	out[0] = '\0';
	if (!pci)
		return;
	gdr_topo_obj_busid(pci, bus, sizeof(bus));
	if (t->use_sysfs) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_speed", bus);
		if (gdr_read_rooted(t->root, path, speed, sizeof(speed)) > 0) {
			snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_width",
				 bus);
			sfx = strstr(speed, " PCIe");
			if (sfx)
				*sfx = '\0';
			if (gdr_read_rooted(t->root, path, width, sizeof(width)) > 0)
				gdr_topo_msg(out, len, "%s x%s", speed, width);
			else
				gdr_topo_msg(out, len, "%s", speed);
			return;
		}
	}
	/* A damaged export's "inf" or "1e300" (inf as a float) is no speed: unknown. */
	if (isfinite(pci->attr->pcidev.linkspeed) && pci->attr->pcidev.linkspeed > 0)
		snprintf(out, len, "%.2f GB/s", pci->attr->pcidev.linkspeed);
}

struct gpu_ent {
	struct gdr_topo_gpu g;
	hwloc_obj_t pci;
};

static int cmp_busid(const void *a, const void *b)
{
	return strcmp(((const struct gpu_ent *)a)->g.bus_id, ((const struct gpu_ent *)b)->g.bus_id);
}

static int find_gpus(struct gdr_topo *t)
{
	struct gpu_ent *e;
	hwloc_obj_t o = NULL;
	int n = 0, i;

	while ((o = hwloc_get_next_pcidev(t->topo, o)))
		n += is_gpu(o);
	e = calloc(n ? n : 1, sizeof(*e));
	t->gpus = calloc(n ? n : 1, sizeof(*t->gpus));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of hwloc_obj_t pointers */
	t->gpu_pci = calloc(n ? n : 1, sizeof(*t->gpu_pci));
	if (!e || !t->gpus || !t->gpu_pci) {
		free(e);
		return -ENOMEM;
	}
	for (o = NULL, n = 0; (o = hwloc_get_next_pcidev(t->topo, o));) {
		if (!is_gpu(o))
			continue;
		e[n].pci = o;
		gdr_topo_obj_busid(o, e[n].g.bus_id, sizeof(e[n].g.bus_id));
		gpu_name(o, e[n].g.name, sizeof(e[n].g.name));
		e[n].g.numa = gdr_topo_io_numa(o);
		gdr_topo_link(t, o, e[n].g.link, sizeof(e[n].g.link));
		n++;
	}
	/* nvidia-smi numbers GPUs in PCI bus order; the zero-padded id sorts that way. */
	qsort(e, n, sizeof(*e), cmp_busid);
	for (i = 0; i < n; i++) {
		t->gpus[i] = e[i].g;
		t->gpus[i].index = i;
		t->gpu_pci[i] = e[i].pci;
	}
	t->ngpu = n;
	free(e);
	return 0;
}

static hwloc_obj_t pci_by_busid(hwloc_topology_t topo, const char *bus_id)
{
	unsigned int dom, bus, dev, fn;

	if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return NULL;
	return hwloc_get_pcidev_by_busid(topo, dom, bus, dev, fn);
}

static struct gdr_topo_nic_int *add_nic(struct gdr_topo *t, int *cap, const char *name)
{
	struct gdr_topo_nic_int *n;
	int i;

	for (i = 0; i < t->nnic; i++)
		if (!strcmp(t->nics[i].pub.name, name))
			return &t->nics[i];
	if (t->nnic == *cap) {
		int ncap = *cap ? 2 * *cap : 8;
		n = realloc(t->nics, ncap * sizeof(*n));
		if (!n)
			return NULL;
		t->nics = n;
		*cap = ncap;
	}
	n = &t->nics[t->nnic++];
	memset(n, 0, sizeof(*n));
	gdr_strlcpy(n->pub.name, name, sizeof(n->pub.name));
	n->pub.numa = -1;
	return n;
}

static void nic_set_pci(const struct gdr_topo *t, struct gdr_topo_nic_int *n, hwloc_obj_t pci)
{
	n->pci = pci;
	n->pub.why[0] = '\0';
	gdr_topo_obj_busid(pci, n->pub.bus_id, sizeof(n->pub.bus_id));
	n->pub.numa = gdr_topo_io_numa(pci);
	gdr_topo_link(t, pci, n->pub.link, sizeof(n->pub.link));
}

/* ROOT/sys/class/infiniband/NAME/device names the PCI function, when there is one. */
static void nic_from_sysfs(struct gdr_topo *t, struct gdr_topo_nic_int *n)
{
	char rel[PATH_MAX], path[PATH_MAX], link[PATH_MAX], bus[GDR_BUSID_LEN];
	hwloc_obj_t pci;
	ssize_t len;
	const char *base;

	snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/device", n->pub.name);
	gdr_rooted_path(t->root, rel, path, sizeof(path));
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0) {
		gdr_topo_msg(n->pub.why, sizeof(n->pub.why), "%s: not a PCI device (%s: %s)",
			     n->pub.name, path, strerror(errno));
		return;
	}
	link[len] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if (gdr_topo_busid_norm(base, bus, sizeof(bus))) {
		gdr_topo_msg(n->pub.why, sizeof(n->pub.why), "%s: not a PCI device (%s -> %s)",
			     n->pub.name, path, link);
		return;
	}
	pci = pci_by_busid(t->topo, bus);
	if (!pci) {
		gdr_strlcpy(n->pub.bus_id, bus, sizeof(n->pub.bus_id));
		snprintf(n->pub.why, sizeof(n->pub.why), "%s: PCI %s is not in the topology",
			 n->pub.name, bus);
		return;
	}
	nic_set_pci(t, n, pci);
}

static int cmp_nic(const void *a, const void *b)
{
	return strverscmp(((const struct gdr_topo_nic_int *)a)->pub.name,
			  ((const struct gdr_topo_nic_int *)b)->pub.name);
}

static int find_nics(struct gdr_topo *t)
{
	struct gdr_topo_nic_int *n;
	hwloc_obj_t o = NULL;
	int cap = 0, i;

	while ((o = hwloc_get_next_osdev(t->topo, o))) {
		if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || !o->name)
			continue;
		n = add_nic(t, &cap, o->name);
		if (!n)
			return -ENOMEM;
		if (o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE)
			nic_set_pci(t, n, o->parent);
		else
			snprintf(n->pub.why, sizeof(n->pub.why),
				 "%s: not attached to a PCI device in the topology", n->pub.name);
	}
	if (t->use_sysfs) {
		char path[PATH_MAX];
		struct dirent *de;
		DIR *d =
		    opendir(gdr_rooted_path(t->root, "/sys/class/infiniband", path, sizeof(path)));

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			n = add_nic(t, &cap, de->d_name);
			if (!n) {
				closedir(d);
				return -ENOMEM;
			}
		}
		if (d)
			closedir(d);
		for (i = 0; i < t->nnic; i++)
			if (!t->nics[i].pci)
				nic_from_sysfs(t, &t->nics[i]);
	}
	if (t->nnic > 1)
		qsort(t->nics, t->nnic, sizeof(*t->nics), cmp_nic);
	return 0;
}

/*
 * Mellanox/NVIDIA network functions that carry no RDMA device: a missing
 * mlx5_ib (or a port in a mode without RDMA) makes a NIC vanish from the list,
 * and the operator should hear about it. Other vendors' RDMA NICs are plain
 * Ethernet functions without their driver, so they cannot be told apart.
 */
static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const hwloc_obj_t *)a,
		  y = (uintptr_t) * (const hwloc_obj_t *)b;

	return x < y ? -1 : x > y;
}

static int find_bare_hcas(struct gdr_topo *t)
{
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of hwloc_obj_t pointers */
	hwloc_obj_t o = NULL, *pcis = calloc(t->nnic ? t->nnic : 1, sizeof(*pcis));
	int i, n = 0;

	if (!pcis)
		return -ENOMEM;
	/* The NICs' functions sorted once, so each Mellanox function is one bsearch. */
	for (i = 0; i < t->nnic; i++)
		if (t->nics[i].pci)
			pcis[n++] = t->nics[i].pci;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of hwloc_obj_t pointers */
	qsort(pcis, n, sizeof(*pcis), cmp_ptr);
	while ((o = hwloc_get_next_pcidev(t->topo, o))) {
		char bus[GDR_BUSID_LEN], (*b)[GDR_BUSID_LEN];

		if (o->attr->pcidev.vendor_id != PCI_VENDOR_MELLANOX ||
		    (o->attr->pcidev.class_id >> 8) != PCI_BASE_CLASS_NETWORK)
			continue;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): as above */
		if (n && bsearch(&o, pcis, n, sizeof(*pcis), cmp_ptr))
			continue;
		gdr_topo_obj_busid(o, bus, sizeof(bus));
		b = realloc(t->bare, (t->nbare + 1) * sizeof(*t->bare));
		if (!b) {
			free(pcis);
			return -ENOMEM;
		}
		t->bare = b;
		gdr_strlcpy(t->bare[t->nbare++], bus, sizeof(t->bare[0]));
	}
	free(pcis);
	return 0;
}

/*
 * Two PCI devices at one address: a damaged or hand-edited file. Lookups by
 * bus id would take either, so a distance could be a wrong device's. Sets
 * dup to the first address found twice; -ENOMEM, or 1 when there is one.
 */
static int find_dup_busid(const struct gdr_topo *t, char dup[GDR_BUSID_LEN])
{
	char(*ids)[GDR_BUSID_LEN];
	hwloc_obj_t o = NULL;
	int n = 0, i, found = 0;

	while ((o = hwloc_get_next_pcidev(t->topo, o)))
		n++;
	if (n < 2)
		return 0;
	ids = calloc(n, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (n = 0; (o = hwloc_get_next_pcidev(t->topo, o));)
		gdr_topo_obj_busid(o, ids[n++], sizeof(ids[0]));
	qsort(ids, n, sizeof(*ids), gdr_cmp_strings);
	for (i = 1; i < n && !found; i++)
		if (!strcmp(ids[i - 1], ids[i])) {
			gdr_strlcpy(dup, ids[i], GDR_BUSID_LEN);
			found = 1;
		}
	free(ids);
	return found;
}

int gdr_topo_load(struct gdr_topo **out, const char *xml, const char *root, char *why, size_t wlen)
{
	struct gdr_topo *t;
	char *buf = NULL, dup[GDR_BUSID_LEN];
	size_t blen = 0;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(why, wlen, "topology: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (!xml || !*xml)
		xml = getenv("HWLOC_XMLFILE");
	if (xml && !*xml)
		xml = NULL;
	if ((xml && !(t->xml = strdup(xml))) || (root && *root && !(t->root = strdup(root)))) {
		err = -ENOMEM;
		snprintf(why, wlen, "topology: %s", strerror(ENOMEM));
		goto free_t;
	}
	if (hwloc_topology_init(&t->topo) < 0) {
		err = -errno;
		snprintf(why, wlen, "hwloc_topology_init: %s", strerror(errno));
		goto free_t;
	}
	/* hwloc drops I/O objects by default, from XML too; the whole point is here. */
	hwloc_topology_set_io_types_filter(t->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	/*
	 * The file is read here, through the one input reader, and handed to hwloc
	 * as a buffer: a FIFO, a directory or a device is refused instead of
	 * blocking in hwloc, and the size is bounded.
	 */
	if (xml) {
		err = gdr_input_read_all(xml, GDR_INPUT_XML_MAX, &buf, &blen);
		if (err) {
			char cause[128];

			gdr_fmt_short(why, wlen, "%s: %s", xml,
				      gdr_input_strerror(xml, err, cause, sizeof(cause)));
			goto destroy_topo;
		}
		if (blen == 0) {
			err = -EINVAL;
			gdr_fmt_short(why, wlen, "%s: empty file, not an XML topology", xml);
			goto destroy_topo;
		}
		/* Another program's XML (NCCL's topology dump, nvidia-smi -q -x) or no XML. */
		if (!memmem(buf, blen, "<topology", 9)) {
			err = -EINVAL;
			gdr_fmt_short(why, wlen,
				      "%s: not an hwloc XML export (no <topology> element; "
				      "lstopo FILE.xml writes one)",
				      xml);
			goto destroy_topo;
		}
	}
	/* hwloc parses the buffer in set_xmlbuffer (libxml2) or in load (its own parser). */
	errno = 0;
	if ((xml && hwloc_topology_set_xmlbuffer(t->topo, buf, (int)blen + 1) < 0) ||
	    hwloc_topology_load(t->topo) < 0) {
		err = errno ? -errno : -EINVAL;
		if (xml)
			gdr_fmt_short(why, wlen,
				      "%s: hwloc could not load this XML topology (%s; "
				      "HWLOC_XML_VERBOSE=1 says why)",
				      xml, strerror(-err));
		else
			snprintf(why, wlen, "hwloc_topology_load: %s", strerror(-err));
		goto destroy_topo;
	}
	free(buf);
	buf = NULL;
	t->use_sysfs = hwloc_topology_is_thissystem(t->topo) || t->root;
	err = find_gpus(t);
	if (!err)
		err = find_nics(t);
	if (!err)
		err = find_bare_hcas(t);
	if (err) {
		snprintf(why, wlen, "topology: %s", strerror(-err));
		goto destroy_topo;
	}
	/* Past any real machine the matrix is no use and the time grows with the pairs. */
	if (t->ngpu > GDR_TOPO_MAX_GPUS || t->nnic > GDR_TOPO_MAX_NICS) {
		err = -E2BIG;
		gdr_fmt_short(
		    why, wlen,
		    "%s: %d GPUs and %d RDMA NICs: more than any real machine has "
		    "(at most %d GPUs and %d NICs are read; a generated or damaged file?)",
		    xml ? xml : "this system", t->ngpu, t->nnic, GDR_TOPO_MAX_GPUS,
		    GDR_TOPO_MAX_NICS);
		goto destroy_topo;
	}
	err = find_dup_busid(t, dup);
	if (err) {
		if (err < 0)
			snprintf(why, wlen, "topology: %s", strerror(-err));
		else
			gdr_fmt_short(why, wlen,
				      "%s: two PCI devices at %s (a damaged or edited file?)",
				      xml ? xml : "this system", dup);
		err = err < 0 ? err : -EINVAL;
		goto destroy_topo;
	}
	*out = t;
	return 0;

destroy_topo:
	free(buf);
	hwloc_topology_destroy(t->topo);
	t->topo = NULL;
free_t:
	gdr_topo_free(t);
	return err;
}

void gdr_topo_free(struct gdr_topo *t)
{
	if (!t)
		return;
	if (t->topo)
		hwloc_topology_destroy(t->topo);
	free(t->gpus);
	free(t->gpu_pci);
	free(t->nics);
	free(t->bare);
	free(t->xml);
	free(t->root);
	free(t);
}

const char *gdr_topo_source(const struct gdr_topo *t)
{
	return t->xml;
}

int gdr_topo_gpu_count(const struct gdr_topo *t)
{
	return t->ngpu;
}

const struct gdr_topo_gpu *gdr_topo_gpu(const struct gdr_topo *t, int i)
{
	return i >= 0 && i < t->ngpu ? &t->gpus[i] : NULL;
}

static int cmp_gpu_key(const void *key, const void *g)
{
	return strcmp(key, ((const struct gdr_topo_gpu *)g)->bus_id);
}

int gdr_topo_gpu_index(const struct gdr_topo *t, const char *bus)
{
	/* GPUs are sorted by their normalised bus id (find_gpus): a thousand GPUs cost ten steps.
	 */
	const struct gdr_topo_gpu *g =
	    t->ngpu ? bsearch(bus, t->gpus, t->ngpu, sizeof(*t->gpus), cmp_gpu_key) : NULL;

	return g ? (int)(g - t->gpus) : -1;
}

const struct gdr_topo_gpu *gdr_topo_find_gpu(const struct gdr_topo *t, const char *bus_id)
{
	char bus[GDR_BUSID_LEN];
	int i;

	if (gdr_topo_busid_norm(bus_id, bus, sizeof(bus)))
		return NULL;
	i = gdr_topo_gpu_index(t, bus);
	return i < 0 ? NULL : &t->gpus[i];
}

int gdr_topo_nic_count(const struct gdr_topo *t)
{
	return t->nnic;
}

const struct gdr_topo_nic *gdr_topo_nic(const struct gdr_topo *t, int i)
{
	return i >= 0 && i < t->nnic ? &t->nics[i].pub : NULL;
}

static int cmp_nic_key(const void *key, const void *n)
{
	return strverscmp(key, ((const struct gdr_topo_nic_int *)n)->pub.name);
}

int gdr_topo_nic_index(const struct gdr_topo *t, const char *name)
{
	/* NICs are sorted by strverscmp (find_nics), names are unique (add_nic). */
	const struct gdr_topo_nic_int *n =
	    name && t->nnic ? bsearch(name, t->nics, t->nnic, sizeof(*t->nics), cmp_nic_key) : NULL;

	return n ? (int)(n - t->nics) : -1;
}

const struct gdr_topo_nic *gdr_topo_find_nic(const struct gdr_topo *t, const char *name)
{
	int i = gdr_topo_nic_index(t, name);

	return i < 0 ? NULL : &t->nics[i].pub;
}

int gdr_topo_bare_hca_count(const struct gdr_topo *t)
{
	return t->nbare;
}

const char *gdr_topo_bare_hca(const struct gdr_topo *t, int i)
{
	return i >= 0 && i < t->nbare ? t->bare[i] : NULL;
}
