#include "config.h"

#include "placement.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static struct ibv_context *open_dev(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	if (!list)
		return NULL;
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

int gdr_nic_port_active(const char *dev, int port)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_port_attr pa;
	int active = 0;

	if (!ctx)
		return 0;
	if (!ibv_query_port(ctx, (uint8_t)port, &pa))
		active = pa.state == IBV_PORT_ACTIVE;
	ibv_close_device(ctx);
	return active;
}

static int ifname_ipv4(const char *ifname, char *addr, size_t alen)
{
	struct ifaddrs *ifa, *p;
	int found = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (p = ifa; p && !found; p = p->ifa_next) {
		if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET ||
		    strcmp(p->ifa_name, ifname))
			continue;
		found = inet_ntop(AF_INET, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, addr,
				  (socklen_t)alen) != NULL;
	}
	freeifaddrs(ifa);
	return found;
}

int gdr_nic_ipv4(const char *dev, int port, char *addr, size_t alen, char *why, size_t wlen)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_gid_entry gids[64];
	char ifname[IF_NAMESIZE + 1], path[256];
	ssize_t n;
	DIR *d;
	struct dirent *e;

	if (!ctx) {
		snprintf(why, wlen, "%s: cannot open the device", dev);
		return -ENODEV;
	}
	/* RoCE: the GID table names the netdev of each GID. */
	n = ibv_query_gid_table(ctx, gids, GDR_ARRAY_SIZE(gids), 0);
	ibv_close_device(ctx);
	for (ssize_t i = 0; i < n; i++) {
		if (gids[i].port_num != (uint32_t)port || !gids[i].ndev_ifindex)
			continue;
		if (if_indextoname(gids[i].ndev_ifindex, ifname) && ifname_ipv4(ifname, addr, alen))
			return 0;
	}
	/* IPoIB: the netdev hangs off the same PCI function. */
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net", dev);
	d = opendir(path);
	if (d) {
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			if (ifname_ipv4(e->d_name, addr, alen)) {
				closedir(d);
				return 0;
			}
		}
		closedir(d);
	}
	snprintf(why, wlen,
		 "%s port %d: no IPv4 address on its network interface (rdma_cm needs "
		 "one: configure IPoIB or the RoCE netdev)",
		 dev, port);
	return -ENOENT;
}
