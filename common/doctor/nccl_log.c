/*
 * NCCL_DEBUG=INFO log reader: the lines of a log, read in constant memory
 * (a line's first bytes only), and the names of the facts the reader
 * records. What each record says is nccl_log_record.c's; nccl_log.h lists
 * the other files.
 */
#include "config.h"

#include "nccl_log_int.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const fact_names[NF__COUNT] = {
	[NF_VERSION] = "version",
	[NF_NETWORK] = "network",
	[NF_PLUGIN] = "plugin",
	[NF_GPU_DMABUF] = "gpu_dmabuf_available",
	[NF_HCA_GDR_ON] = "hca_gdr_enabled",
	[NF_HCA_GDR_OFF] = "hca_gdr_disabled",
	[NF_PAIR_GDR_ON] = "gpu_hca_gdr_enabled",
	[NF_PAIR_GDR_OFF] = "gpu_hca_gdr_disabled",
	[NF_CHAN_GDR] = "channels_gdrdma",
	[NF_CHAN_NOGDR] = "channels_without_gdrdma",
	[NF_CHAN_SOCKET] = "channels_socket",
	[NF_RING_GDR_ON] = "rings_gdr_1",
	[NF_RING_GDR_OFF] = "rings_gdr_0",
	[NF_PLUGIN_GDR_OFF] = "plugin_disabled_gdr",
	[NF_PLUGIN_DMABUF] = "plugin_nic_dmabuf",
	[NF_PLUGIN_NO_DMABUF] = "plugin_nic_no_dmabuf",
	[NF_PLUGIN_PEERMEM] = "plugin_nic_peermem",
	[NF_ENV_DMABUF_OFF] = "env_dmabuf_disabled",
	[NF_ENV_IB_OFF] = "env_ib_disabled",
	[NF_ENV_GDR_LEVEL] = "env_gdr_level",
	[NF_NO_IB_DEVICE] = "no_ib_device",
	[NF_INIT] = "init",
	[NF_HCA_OTHER_NET] = "hca_gdr_other_transport",
	[NF_GUIDE_LINE] = "not_printed_by_nccl",
	[NF_HCA_NO_MODULE] = "gdr_disabled_no_module",
	[NF_CHAN_LOCAL] = "channels_intra_node",
	[NF_SOCKET_USING] = "net_socket_using",
	[NF_WARN] = "nccl_warn",
	[NF_SOCKET_HCA] = "socket_hca_lines",
	[NF_NO_VERBS] = "no_libibverbs",
	[NF_NIC_DISTANCE] = "nic_distance_lines",
	[NF_CHAN_GDR_PCI] = "channels_gdrdma_pci",
	[NF_DATA_DIRECT] = "data_direct",
	[NF_ENV_DATA_DIRECT_OFF] = "env_data_direct_disabled",
	[NF_MLOPART] = "mlopart_gpu",
	[NF_ENV_MLOPART_ON] = "env_gdr_mlopart",
	[NF_NET_ERROR] = "net_errors",
	[NF_HINT] = "nccl_hint_lines",
};

const char *gdr_nccl_fact_name(enum gdr_nccl_fact f)
{
	return (unsigned int)f < NF__COUNT ? fact_names[f] : "?";
}

void gdr_nccl_facts_init(struct gdr_nccl_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->vmajor = f->vminor = f->vpatch = -1;
	f->chan_dev = -1;
}

void gdr_nccl_log_init(struct gdr_nccl_log *log)
{
	memset(log, 0, sizeof(*log));
	log->vmajor = log->vminor = log->vpatch = -1;
	gdr_nccl_facts_init(&log->all);
	gdr_nccl_facts_init(&log->bare);
	gdr_nccl_facts_init(&log->overflow);
}

const char *gdr_nccl_path_name(enum gdr_nccl_path p)
{
	switch (p) {
	case GDR_NCCL_DMABUF:
		return "dmabuf";
	case GDR_NCCL_PEERMEM:
		return "peermem";
	case GDR_NCCL_NONE:
		return "none";
	case GDR_NCCL_MIXED:
		return "mixed";
	case GDR_NCCL_UNKNOWN:
		break;
	}
	return "unknown";
}

int gdr_nccl_log_is_nccl(const struct gdr_nccl_log *log)
{
	return log->nccl_lines > 0;
}

/*
 * Read one line into buf (at most len - 1 bytes kept, NUL-terminated); the rest of
 * a longer line is read and dropped, so a stream without newlines (/dev/zero
 * through a pipe) costs no memory. Returns the bytes consumed, 0 at EOF.
 */
static size_t read_line(FILE *in, char *buf, size_t len)
{
	size_t n = 0, kept = 0;
	int c;

	while ((c = getc_unlocked(in)) != EOF) {
		n++;
		if (kept < len - 1)
			buf[kept++] = (char)c;
		if (c == '\n')
			break;
	}
	buf[kept] = '\0';
	return n;
}

int gdr_nccl_log_read(FILE *in, struct gdr_nccl_log *log)
{
	/* Only a line's first bytes matter: the prefix, then 512 bytes of body. */
	char line[4096];
	uint64_t total = 0;
	size_t n;
	int rc = 0;

	gdr_nccl_log_init(log);
	while ((n = read_line(in, line, sizeof(line))) > 0) {
		total += n;
		if (total > GDR_NCCL_MAX_BYTES) {
			rc = -EFBIG;
			break;
		}
		gdr_nccl_log_line(log, line);
	}
	if (!rc && ferror(in))
		rc = errno ? -errno : -EIO;
	gdr_nccl_log_finish(log);
	return rc;
}
