/*
 * Lines that migration guides tell operators to grep for, which no NCCL
 * release prints (checked against NCCL's src/transport/net_ib.cc,
 * src/transport/net.cc, src/graph/topo.cc, src/graph/paths.cc and
 * src/init.cc; see docs/nccl-logs.md). Fed one of them, the reader says so
 * and names the lines NCCL does print for the version at hand, instead of
 * taking it as evidence either way.
 */
#include "config.h"

#include "nccl_log.h"
#include "nccl_settings.h"
#include "util.h"

#include <string.h>

struct guide_line {
	const char *match, *also; /* both must occur (also may be NULL) */
	const char *claims;
};

static const struct guide_line guide[] = {
	{ "Using DMA-BUF for GPU Direct RDMA", NULL, "DMA-BUF" },
	{ "GPU Direct RDMA (DMA-BUF) ", NULL, "DMA-BUF" },
	{ "Using peer memory driver", NULL, "nvidia-peermem" },
	{ "GPU Direct RDMA Enabled for GPU ", ", using nvidia-peermem", "nvidia-peermem" },
};

int gdr_nccl_guide_kind(const char *msg)
{
	for (size_t i = 0; i < GDR_ARRAY_SIZE(guide); i++)
		if (strstr(msg, guide[i].match) && (!guide[i].also || strstr(msg, guide[i].also)))
			return (int)i + 1;
	return 0;
}

void gdr_nccl_guide_explain(int kind, int vmajor, int vminor, int vpatch, int plugin, char *buf,
			    size_t len)
{
	const char *claims = kind > 0 && (size_t)kind <= GDR_ARRAY_SIZE(guide)
				 ? guide[kind - 1].claims
				 : "a GPUDirect path";
	const char *since = gdr_nccl_since("NCCL_DMABUF_ENABLE");
	int old = vmajor >= 0 && gdr_nccl_release_cmp(vmajor, vminor, vpatch, since) < 0;

	if (plugin) {
		snprintf(buf, len,
			 "it claims %s, but no NCCL release prints it; with a net plugin the "
			 "plugin's own lines settle it: \"NET/IB : GPU Direct RDMA (DMABUF) "
			 "enabled for HCA\" or \"(nvidia-peermem) enabled\" (HPC-X, "
			 "NCCL_DEBUG_SUBSYS=NET), \"NET/OFI Support for DMA-BUF registrations: "
			 "true|false\" (aws-ofi-nccl), and \"/GDRDMA\" on the channel lines",
			 claims);
	} else if (old) {
		snprintf(buf, len,
			 "it claims %s, but no NCCL release prints it; NCCL "
			 "before %s has no "
			 "DMA-BUF path: \"/GDRDMA\" on the \"Channel ... via NET/IB/N\" lines "
			 "means peer memory (nvidia-peermem or nv_peer_mem)",
			 claims, since);
	} else {
		snprintf(buf, len,
			 "it claims %s, but no NCCL release prints it; NCCL %s"
			 " and later "
			 "show it with \"/GDRDMA\" on the \"Channel ... via NET/IB/N\" lines "
			 "(GDR in use) and \"DMA-BUF is available on GPU device N\" during init "
			 "(DMA-BUF; absent: peer memory), both shown by NCCL_DEBUG=INFO's "
			 "default subsystems; \"NET/IB : GPU Direct RDMA Enabled for HCA\" "
			 "(NCCL_DEBUG_SUBSYS=NET) is a capability, not use",
			 claims, since);
	}
}
