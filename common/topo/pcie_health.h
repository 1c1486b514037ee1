/*
 * PCIe health checks (pcie_health.c): per GPU x RDMA NIC pair, per GPU and
 * per NIC, appended to a check list read below its root. gdr_doctor runs them
 * all; gdr_topo runs one pair's.
 */
#ifndef GDR_PCIE_HEALTH_H
#define GDR_PCIE_HEALTH_H

#include "check.h"

/* PCIe health per GPU x NIC pair, BAR1, NIC firmware. */
void gdr_pcie_health_checks(struct gdr_check_list *doc);
/*
 * The PCIe checks of one pair (gdr_topo): PAIR.acs ... PAIR.ceiling appended to doc,
 * read below doc->root. 0, or -errno when the GPU or the NIC is not on PCI there.
 */
int gdr_pcie_pair_checks(struct gdr_check_list *doc, const char *pair_name, const char *gpu_bdf,
			 const char *nic);

#endif
