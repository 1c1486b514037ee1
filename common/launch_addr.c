/*
 * The address a launched server publishes to its client: the IPv4 address of
 * the network interface behind the RDMA device, so that rdma_cm on the client
 * resolves a route to that very device.
 */
#include "config.h"

#include "launch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/* The netdev of dev: RoCE ports list it in gid_attrs, IPoIB devices under their PCI function. */
static int dev_netdev(const char *root, const char *dev, char *out, size_t len)
{
	char path[512], full[1024];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", dev);
	if (gdr_read_rooted(root, path, out, len) > 0 && out[0])
		return 0;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net", dev);
	d = opendir(gdr_rooted_path(root, path, full, sizeof(full)));
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		gdr_strlcpy(out, de->d_name, len);
		closedir(d);
		return 0;
	}
	closedir(d);
	return -ENOENT;
}

static int netdev_ipv4(const char *ifname, char *out, size_t len)
{
	struct ifaddrs *ifa, *i;
	int r = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    strcmp(i->ifa_name, ifname))
			continue;
		if (inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out,
			      (socklen_t)len))
			r = 0;
		break;
	}
	freeifaddrs(ifa);
	return r;
}

static int one_dev(const char *root, const char *dev, char *out, size_t len, char *why, size_t wlen)
{
	char ifname[64];
	int r = dev_netdev(root, dev, ifname, sizeof(ifname));

	if (r) {
		snprintf(why, wlen, "%s: no network interface found for this RDMA device", dev);
		return r;
	}
	r = netdev_ipv4(ifname, out, len);
	if (r)
		snprintf(why, wlen, "%s: its interface %s has no IPv4 address (%s)", dev, ifname,
			 strerror(-r));
	return r;
}

int gdr_rdma_dev_ipv4(const char *root, const char *dev, char *out, size_t len, char *why,
		      size_t wlen)
{
	char path[512];
	DIR *d;
	struct dirent *de;
	int r = -ENODEV;

	if (dev)
		return one_dev(root, dev, out, len, why, wlen);
	d = opendir(gdr_rooted_path(root, "/sys/class/infiniband", path, sizeof(path)));
	if (!d) {
		snprintf(why, wlen, "no RDMA device (%s: %s)", path, strerror(errno));
		return -ENODEV;
	}
	snprintf(why, wlen, "no RDMA device has a network interface with an IPv4 address");
	while ((de = readdir(d))) {
		char w[256];

		if (de->d_name[0] == '.')
			continue;
		r = one_dev(root, de->d_name, out, len, w, sizeof(w));
		if (!r)
			break;
	}
	closedir(d);
	return r ? -EADDRNOTAVAIL : 0;
}
