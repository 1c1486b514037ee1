/*
 * Placement: which NIC and GPU a run uses, the NIC's IP address for rdma_cm,
 * and NUMA binding. -d auto picks the active NIC nearest the GPU, --gpu auto
 * the GPU nearest the NIC (the topology module ranks them).
 */
#ifndef GDR_PLACEMENT_H
#define GDR_PLACEMENT_H

#include <stddef.h>

/*
 * An IPv4 address of the netdev behind verbs device dev, port: from the GID
 * table (RoCE) or the device's own net/ directory (IPoIB). 0, or -ENOENT with why.
 */
int gdr_nic_ipv4(const char *dev, int port, char *addr, size_t alen, char *why, size_t wlen);

/* 1 if dev's port is ACTIVE, 0 if not or unknown. */
int gdr_nic_port_active(const char *dev, int port);

#endif
