/*
 * gdr_topo's PCIe health and ceiling per GPU x NIC pair: the same checks as
 * gdr_doctor (pcie_health.c), read through libpci when the topology is this
 * system or --root names a tree to read; never for another machine's XML.
 */
#include "config.h"

#include "ceiling.h"
#include "pcie_health.h"
#include "topo_int.h"
#include "topo_report.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The six per-pair checks, in the order pcie_health.c adds them. */
static const char *const kinds[] = { "acs", "iommu", "link", "mps", "ro", "ceiling" };

/* Run one pair's checks into doc; 0 or -errno (not on PCI, no sysfs to read). */
static int pair_doc(const struct gdr_topo *t, const struct gdr_topo_pair *p,
		    struct gdr_check_list *doc)
{
	if (!t->use_sysfs || !p->gpu_bus_id[0] || !p->nic[0])
		return -ENODATA;
	gdr_check_list_init(doc, t->root);
	return gdr_pcie_pair_checks(doc, "pair", p->gpu_bus_id, p->nic);
}

static double pair_ceiling(const struct gdr_topo *t, const struct gdr_topo_pair *p)
{
	struct gdr_ceiling c;

	gdr_ceiling_sysfs(t->root, p->nic, 0, p->gpu_bus_id, &c);
	return c.gbps;
}

void gdr_topo_print_pcie(FILE *out, const struct gdr_topo *t)
{
	struct gdr_check_list *doc = malloc(sizeof(*doc));
	struct gdr_topo_pair p;
	int header = 0;

	if (!doc || !t->use_sysfs) {
		free(doc);
		return;
	}
	for (int i = 0; i < gdr_topo_gpu_count(t); i++)
		for (int j = 0; j < gdr_topo_nic_count(t); j++) {
			char pn[96], ce[24];
			double gbps;

			gdr_topo_pair(t, gdr_topo_gpu(t, i)->bus_id, gdr_topo_nic(t, j)->name, &p);
			if (pair_doc(t, &p, doc) || doc->nchecks < GDR_ARRAY_SIZE(kinds))
				continue;
			if (!header++) {
				char h[4200];

				snprintf(h, sizeof(h),
					 "PCIe health and ceiling per pair (libpci, %s/sys/bus/pci; "
					 "gdr_doctor explains each check):",
					 t->root ? t->root : "");
				gdr_topo_wrap(out, "\n", h, 2);
				fprintf(out, "  %-16s %-12s %-5s %-5s %-5s %-5s %s\n", "pair",
					"ceiling", "acs", "iommu", "link", "mps", "ro");
			}
			snprintf(pn, sizeof(pn), "GPU%d-%s", p.gpu_index, p.nic);
			gbps = pair_ceiling(t, &p);
			if (gbps > 0)
				snprintf(ce, sizeof(ce), "%.1f Gb/s", gbps);
			else
				gdr_strlcpy(ce, "unknown", sizeof(ce));
			fprintf(out, "  %-16s %-12s", pn, ce);
			for (unsigned int k = 0; k + 1 < GDR_ARRAY_SIZE(kinds); k++)
				fprintf(out, k + 2 < GDR_ARRAY_SIZE(kinds) ? " %-5s" : " %s\n",
					gdr_check_status_name(doc->checks[k].status));
			for (unsigned int k = 0; k < doc->nchecks; k++) {
				const struct gdr_check *c = &doc->checks[k];

				if (c->status == GDR_CHECK_PASS || c->status == GDR_CHECK_NA)
					continue;
				char h[32];

				snprintf(h, sizeof(h), "    %s %s: ", kinds[k],
					 gdr_check_status_name(c->status));
				gdr_topo_wrap(out, h, c->value, 6);
				if (c->fix[0])
					gdr_topo_wrap(out, "      fix: ", c->fix, 11);
			}
			if (gbps > 0)
				gdr_topo_wrap(out, "    ceiling: ", doc->checks[5].value, 13);
		}
	free(doc);
}

void gdr_topo_json_pcie(FILE *f, const struct gdr_topo *t, const struct gdr_topo_pair *p)
{
	struct gdr_check_list *doc = malloc(sizeof(*doc));
	double gbps;

	if (!doc || pair_doc(t, p, doc) || doc->nchecks < GDR_ARRAY_SIZE(kinds)) {
		fputs(", \"ceiling_gbps\": null, \"pcie\": null", f);
		free(doc);
		return;
	}
	gbps = pair_ceiling(t, p);
	if (gbps > 0)
		fprintf(f, ", \"ceiling_gbps\": %.3f", gbps);
	else
		fputs(", \"ceiling_gbps\": null", f);
	fputs(", \"pcie\": {", f);
	for (unsigned int k = 0; k < GDR_ARRAY_SIZE(kinds); k++) {
		const struct gdr_check *c = &doc->checks[k];

		fprintf(f, "%s\"%s\": {", k ? ", " : "", kinds[k]);
		gdr_check_json_fields(f, c);
		fputc('}', f);
	}
	fputc('}', f);
	free(doc);
}
