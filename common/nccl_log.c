/*
 * NCCL_DEBUG=INFO log reader. Which lines decide what:
 *  - a network channel line ending in /GDRDMA ("Channel 00/0 : 1[0] -> 0[0]
 *    [receive] via NET/IB/0/GDRDMA", "Ring 00 : 6 -> 2 [receive] via NET/IB/0"
 *    in 2.4) is GDR in use for that connection; without it, host staging;
 *  - "DMA-BUF is available on GPU device N" is only the GPU's capability:
 *    NCCL then registers through DMA-BUF when the NIC also takes it, and
 *    otherwise through peer memory;
 *  - "GPU Direct RDMA Enabled for HCA" is the NIC side's capability, not use;
 *  - a plugin's own "(DMABUF) enabled" says the NIC takes DMA-BUF, not that
 *    NCCL used GDR (NCCL can still disable it);
 *  - "Bootstrap : Using" and, before 2.5, "NET/Socket : Using" name the
 *    bootstrap interface, not the data transport.
 */
#include "config.h"

#include "nccl_log.h"
#include "doctor.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
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
};

void gdr_nccl_log_init(struct gdr_nccl_log *log)
{
	memset(log, 0, sizeof(*log));
	log->vmajor = log->vminor = log->vpatch = -1;
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
	case GDR_NCCL_UNKNOWN:
		break;
	}
	return "unknown";
}

int gdr_nccl_log_is_nccl(const struct gdr_nccl_log *log)
{
	return log->nccl_lines > 0;
}

static void note(struct gdr_nccl_log *log, enum gdr_nccl_fact f, const char *raw)
{
	if (log->count[f]++ == 0) {
		log->first[f].lineno = log->lines;
		gdr_strlcpy(log->first[f].text, raw, sizeof(log->first[f].text));
	}
}

static struct gdr_nccl_proc *proc_for(struct gdr_nccl_log *log, const char *id, int dev)
{
	for (unsigned int i = 0; i < log->nprocs; i++)
		if (log->procs[i].dev == dev && !strcmp(log->procs[i].id, id))
			return &log->procs[i];
	if (log->nprocs >= GDR_NCCL_MAX_PROCS) {
		log->procs_dropped++;
		return NULL;
	}
	struct gdr_nccl_proc *p = &log->procs[log->nprocs++];

	memset(p, 0, sizeof(*p));
	gdr_strlcpy(p->id, id, sizeof(p->id));
	p->dev = dev;
	return p;
}

/*
 * "host:pid:tid [dev] NCCL INFO msg" -> id "host:pid", dev, msg. Returns the
 * message, and sets *tagged when the line carried NCCL's own INFO/WARN tag.
 */
static const char *split_line(const char *line, char *id, size_t idlen, int *dev, int *tagged)
{
	const char *tag = strstr(line, "NCCL INFO ");
	const char *msg;

	*dev = -1;
	id[0] = '\0';
	*tagged = 0;
	if (!tag)
		tag = strstr(line, "NCCL WARN ");
	if (tag) {
		const char *lb = NULL, *end = tag;
		size_t n;

		*tagged = 1;
		msg = tag + 10;
		for (const char *p = line; p < tag; p++)
			if (*p == '[')
				lb = p;
		if (lb && isdigit((unsigned char)lb[1])) {
			*dev = atoi(lb + 1);
			end = lb;
		}
		while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		n = (size_t)(end - line);
		if (n >= idlen)
			n = idlen - 1;
		memcpy(id, line, n);
		id[n] = '\0';
		/* "host:pid:tid": the thread id changes between init and proxy threads; drop it. */
		char *c1 = strrchr(id, ':');
		if (c1 && c1 != strchr(id, ':'))
			*c1 = '\0';
	} else {
		const char *v = strstr(line, "NCCL version ");

		msg = v ? v : line;
		while (*msg == ' ' || *msg == '\t')
			msg++;
	}
	return msg;
}

static void copy_word(char *dst, size_t len, const char *src, const char *stop)
{
	size_t n = strcspn(src, stop);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int parse_channel(struct gdr_nccl_log *log, struct gdr_nccl_proc *proc, const char *msg,
			 const char *raw)
{
	const char *via, *rest;
	char transport[64];

	if (strncmp(msg, "Channel ", 8) && strncmp(msg, "Ring ", 5))
		return 0;
	via = strstr(msg, " via NET/");
	if (!via)
		/* Intra-node transports: NCCL's lines, but not the network. */
		return strstr(msg, " via P2P/") || strstr(msg, " via SHM/") ||
		       strstr(msg, " via CollNet") || strstr(msg, " via NVLS");
	rest = via + 9;
	copy_word(transport, sizeof(transport), rest, "/\r\n");
	if (!log->chan_net[0])
		gdr_strlcpy(log->chan_net, transport, sizeof(log->chan_net));
	if (!strcmp(transport, "Socket"))
		note(log, NF_CHAN_SOCKET, raw);
	if (strstr(rest, "/GDRDMA")) {
		note(log, NF_CHAN_GDR, raw);
		if (proc)
			proc->chan_gdr++;
	} else {
		note(log, NF_CHAN_NOGDR, raw);
	}
	if (proc)
		proc->chan_net++;
	return 1;
}

static int parse_gdr(struct gdr_nccl_log *log, const char *msg, const char *raw)
{
	const char *g = strstr(msg, "GPU Direct RDMA ");
	const char *d;

	if (!g)
		return 0;
	if (strstr(g, " for HCA ") && !strstr(g, " for GPU ")) {
		/* A plugin's own view of the NIC (HPC-X nccl_rdma_sharp_plugin and its kin). */
		if (strstr(g, "(DMABUF) enabled"))
			note(log, NF_PLUGIN_DMABUF, raw);
		else if (strstr(g, "(nvidia-peermem) enabled"))
			note(log, NF_PLUGIN_PEERMEM, raw);
		else if (strstr(g, "Enabled for HCA"))
			note(log, NF_HCA_GDR_ON, raw);
		else if (strstr(g, "Disabled for HCA"))
			note(log, NF_HCA_GDR_OFF, raw);
		return 1;
	}
	if (!strstr(g, " for GPU "))
		return 0;
	if (strstr(g, "Enabled for GPU"))
		note(log, NF_PAIR_GDR_ON, raw);
	else if (strstr(g, "Disabled for GPU"))
		note(log, NF_PAIR_GDR_OFF, raw);
	d = strstr(g, "(distance ");
	if (d)
		copy_word(log->distance, sizeof(log->distance), d + 10, ")\r\n");
	return 1;
}

static int parse_env(struct gdr_nccl_log *log, const char *msg, const char *raw)
{
	const char *v;

	if (!strncmp(msg, "NCCL_DMABUF_ENABLE set by environment to ", 41)) {
		if (atoi(msg + 41) == 0)
			note(log, NF_ENV_DMABUF_OFF, raw);
		return 1;
	}
	if (!strncmp(msg, "NCCL_IB_DISABLE set by environment to ", 38)) {
		if (atoi(msg + 38) == 1)
			note(log, NF_ENV_IB_OFF, raw);
		return 1;
	}
	if (!strncmp(msg, "NCCL_NET_GDR_LEVEL set by environment to ", 41)) {
		v = msg + 41;
		copy_word(log->gdr_level, sizeof(log->gdr_level), v, " .\r\n");
		note(log, NF_ENV_GDR_LEVEL, raw);
		return 1;
	}
	return 0;
}

static int parse_plugin(struct gdr_nccl_log *log, const char *msg, const char *raw)
{
	const char *p;

	if ((p = strstr(msg, "Loaded net plugin ")) != NULL) {
		copy_word(log->plugin, sizeof(log->plugin), p + 18, "(\r\n");
		/* "AWS Libfabric (v6)": drop the space before the version. */
		size_t n = strlen(log->plugin);
		while (n && log->plugin[n - 1] == ' ')
			log->plugin[--n] = '\0';
		note(log, NF_PLUGIN, raw);
		return 1;
	}
	if (!strncmp(msg, "Plugin Path : ", 14)) {
		if (!log->plugin[0])
			copy_word(log->plugin, sizeof(log->plugin), msg + 14, "\r\n");
		note(log, NF_PLUGIN, raw);
		return 1;
	}
	if (!strncmp(msg, "P2P plugin ", 11)) {
		note(log, NF_PLUGIN, raw);
		return 1;
	}
	if (!strncmp(msg, "NET/OFI ", 8)) {
		if (strstr(msg, "disabling GDR") || strstr(msg, "GDR not supported"))
			note(log, NF_PLUGIN_GDR_OFF, raw);
		if ((p = strstr(msg, "Support for DMA-BUF registrations: ")) != NULL)
			note(log,
			     !strncmp(p + 35, "true", 4) ? NF_PLUGIN_DMABUF : NF_PLUGIN_NO_DMABUF,
			     raw);
		return 1;
	}
	return !strncmp(msg, "NET/Plugin", 10);
}

void gdr_nccl_log_line(struct gdr_nccl_log *log, const char *line)
{
	char id[96], raw[240];
	int dev, tagged, known = 1;
	const char *msg;
	struct gdr_nccl_proc *proc = NULL;

	log->lines++;
	gdr_strlcpy(raw, line, sizeof(raw));
	raw[strcspn(raw, "\r\n")] = '\0';
	msg = split_line(raw, id, sizeof(id), &dev, &tagged);
	if (tagged || dev >= 0)
		proc = proc_for(log, id, dev);

	if (!strncmp(msg, "NCCL version ", 13)) {
		copy_word(log->version, sizeof(log->version), msg + 13, " \r\n");
		if (sscanf(log->version, "%d.%d.%d", &log->vmajor, &log->vminor, &log->vpatch) < 2)
			log->vmajor = log->vminor = -1;
		note(log, NF_VERSION, raw);
	} else if (!strncmp(msg, "Using network ", 14)) {
		copy_word(log->network, sizeof(log->network), msg + 14, "\r\n");
		note(log, NF_NETWORK, raw);
		note(log, NF_INIT, raw);
	} else if (!strncmp(msg, "DMA-BUF is available on GPU device ", 35)) {
		note(log, NF_GPU_DMABUF, raw);
		if (proc)
			proc->gpu_dmabuf = 1;
	} else if (strstr(msg, "Init START") || strstr(msg, "Init COMPLETE")) {
		note(log, NF_INIT, raw);
	} else if (!strncmp(msg, "Connected all rings", 19)) {
		const char *g = strstr(msg, " GDR ");

		if (g)
			note(log, atoi(g + 5) ? NF_RING_GDR_ON : NF_RING_GDR_OFF, raw);
	} else if (!strncmp(msg, "NET/IB : No device found", 24)) {
		note(log, NF_NO_IB_DEVICE, raw);
	} else if (parse_channel(log, proc, msg, raw) || parse_gdr(log, msg, raw) ||
		   /* NOLINTNEXTLINE(bugprone-branch-clone): empty on purpose, like the next */
		   parse_env(log, msg, raw) || parse_plugin(log, msg, raw)) {
		/* recorded */
	} else if (!strncmp(msg, "NET/", 4) || !strncmp(msg, "Bootstrap", 9)) {
		/* Interface lists, virtual devices, bootstrap: NCCL's, but not evidence. */
	} else {
		known = 0;
	}
	if (known || tagged)
		log->nccl_lines++;
}

int gdr_nccl_log_read(FILE *in, struct gdr_nccl_log *log)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	gdr_nccl_log_init(log);
	while (getline(&line, &cap, in) >= 0)
		gdr_nccl_log_line(log, line);
	if (ferror(in))
		rc = -EIO;
	free(line);
	gdr_nccl_log_finish(log);
	return rc;
}

static void cite(struct gdr_nccl_log *log, enum gdr_nccl_fact f)
{
	if (!log->count[f] || log->ncited >= GDR_ARRAY_SIZE(log->cited))
		return;
	for (unsigned int i = 0; i < log->ncited; i++)
		if (log->cited[i] == f)
			return;
	log->cited[log->ncited++] = f;
}

static void conclude(struct gdr_nccl_log *log, enum gdr_nccl_path p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void conclude(struct gdr_nccl_log *log, enum gdr_nccl_path p, const char *fmt, ...)
{
	va_list ap;

	log->path = p;
	va_start(ap, fmt);
	vsnprintf(log->reason, sizeof(log->reason), fmt, ap);
	va_end(ap);
}

static int version_before(const struct gdr_nccl_log *log, int major, int minor)
{
	if (log->vmajor < 0)
		return 0;
	return log->vmajor < major || (log->vmajor == major && log->vminor < minor);
}

/* GDR is in use: through which registration? */
static void conclude_gdr_path(struct gdr_nccl_log *log)
{
	const unsigned int *n = log->count;

	cite(log, n[NF_CHAN_GDR]      ? NF_CHAN_GDR
		  : n[NF_PAIR_GDR_ON] ? NF_PAIR_GDR_ON
				      : NF_RING_GDR_ON);
	/* ncclIbDmaBufSupport and the DMA-BUF path arrived in 2.12. */
	if (version_before(log, 2, 12)) {
		cite(log, NF_VERSION);
		conclude(log, GDR_NCCL_PEERMEM,
			 "GPUDirect RDMA in use, and NCCL %s predates DMA-BUF "
			 "support (2.12): its GDR is peer memory",
			 log->version);
		return;
	}
	if (n[NF_ENV_DMABUF_OFF]) {
		cite(log, NF_ENV_DMABUF_OFF);
		conclude(log, GDR_NCCL_PEERMEM,
			 "GPUDirect RDMA in use with NCCL_DMABUF_ENABLE=0: "
			 "peer memory");
		return;
	}
	if (n[NF_PLUGIN_NO_DMABUF]) {
		cite(log, NF_PLUGIN_NO_DMABUF);
		conclude(log, GDR_NCCL_PEERMEM,
			 "GPUDirect RDMA in use and the plugin reports no "
			 "DMA-BUF registration: peer memory");
		return;
	}
	if (n[NF_PLUGIN_PEERMEM] && !n[NF_PLUGIN_DMABUF]) {
		cite(log, NF_PLUGIN_PEERMEM);
		conclude(log, GDR_NCCL_PEERMEM,
			 "GPUDirect RDMA in use; the plugin lists the NIC's "
			 "GDR as nvidia-peermem only, never (DMABUF)");
		return;
	}
	if (n[NF_GPU_DMABUF]) {
		cite(log, NF_GPU_DMABUF);
		if (n[NF_PLUGIN_DMABUF]) {
			cite(log, NF_PLUGIN_DMABUF);
			conclude(log, GDR_NCCL_DMABUF,
				 "GPUDirect RDMA in use; the GPU and the NIC both "
				 "take DMA-BUF, and NCCL prefers DMA-BUF over peer memory");
			return;
		}
		conclude(log, GDR_NCCL_DMABUF,
			 "GPUDirect RDMA in use and the GPU supports DMA-BUF: "
			 "NCCL registers through DMA-BUF whenever the NIC accepts it (NCCL's IB "
			 "transport does not log the NIC side; gdr_doctor on the node shows it)");
		return;
	}
	if (n[NF_VERSION] && n[NF_INIT]) {
		cite(log, NF_VERSION);
		cite(log, NF_INIT);
		conclude(
		    log, GDR_NCCL_PEERMEM,
		    "GPUDirect RDMA in use; NCCL %s prints \"DMA-BUF is "
		    "available\" during init when it will use DMA-BUF, and this log covers init "
		    "without it: peer memory",
		    log->version);
		return;
	}
	conclude(log, GDR_NCCL_UNKNOWN,
		 "GPUDirect RDMA in use (/GDRDMA), but the log does not "
		 "show whether through DMA-BUF or peer memory (no NCCL version or init lines)");
}

void gdr_nccl_log_finish(struct gdr_nccl_log *log)
{
	const unsigned int *n = log->count;
	int gdr_used = n[NF_CHAN_GDR] || n[NF_RING_GDR_ON] || n[NF_PAIR_GDR_ON];
	int socket_only =
	    (n[NF_CHAN_SOCKET] && n[NF_CHAN_SOCKET] == n[NF_CHAN_NOGDR] + n[NF_CHAN_GDR]) ||
	    (!strcmp(log->network, "Socket") && !n[NF_CHAN_GDR]);

	log->ncited = 0;
	if (!gdr_nccl_log_is_nccl(log)) {
		conclude(log, GDR_NCCL_UNKNOWN, "not an NCCL log: none of %lu lines is NCCL output",
			 log->lines);
		return;
	}
	if (gdr_used) {
		conclude_gdr_path(log);
		if (n[NF_CHAN_NOGDR] && n[NF_CHAN_GDR]) {
			size_t len = strlen(log->reason);

			snprintf(log->reason + len, sizeof(log->reason) - len,
				 "; some network channels are without /GDRDMA");
			cite(log, NF_CHAN_NOGDR);
		}
		return;
	}
	if (socket_only) {
		cite(log, n[NF_CHAN_SOCKET] ? NF_CHAN_SOCKET : NF_NETWORK);
		cite(log, NF_ENV_IB_OFF);
		cite(log, NF_NO_IB_DEVICE);
		conclude(log, GDR_NCCL_NONE,
			 "the network transport is Socket: TCP through host "
			 "memory, no RDMA");
		return;
	}
	if (n[NF_PLUGIN_GDR_OFF]) {
		cite(log, NF_PLUGIN_GDR_OFF);
		cite(log, NF_CHAN_NOGDR);
		conclude(log, GDR_NCCL_NONE,
			 "the net plugin disabled GPUDirect RDMA; its buffers "
			 "are staged through host memory");
		return;
	}
	if (n[NF_CHAN_NOGDR]) {
		cite(log, NF_CHAN_NOGDR);
		cite(log, NF_HCA_GDR_OFF);
		cite(log, NF_PAIR_GDR_OFF);
		cite(log, NF_GPU_DMABUF);
		cite(log, NF_PLUGIN_DMABUF);
		conclude(
		    log, GDR_NCCL_NONE,
		    "%u network channel line%s, none with /GDRDMA: buffers "
		    "staged through host memory%s%s",
		    n[NF_CHAN_NOGDR], n[NF_CHAN_NOGDR] == 1 ? "" : "s",
		    n[NF_GPU_DMABUF] ? " (\"DMA-BUF is available\" is only the GPU's capability)"
				     : "",
		    n[NF_PLUGIN_DMABUF] ? " (the plugin's DMA-BUF line is the NIC's capability; "
					  "NCCL still chose no GDR)"
					: "");
		return;
	}
	if (n[NF_RING_GDR_OFF]) {
		cite(log, NF_RING_GDR_OFF);
		conclude(log, GDR_NCCL_NONE, "NCCL reports the rings connected with GDR 0");
		return;
	}
	if (n[NF_HCA_GDR_OFF] && !n[NF_HCA_GDR_ON]) {
		cite(log, NF_HCA_GDR_OFF);
		conclude(log, GDR_NCCL_NONE,
			 "GPU Direct RDMA is disabled for every HCA the log "
			 "names (no peer-memory module and no DMA-BUF on the NIC side)");
		return;
	}
	if (n[NF_PAIR_GDR_OFF]) {
		cite(log, NF_PAIR_GDR_OFF);
		cite(log, NF_ENV_GDR_LEVEL);
		conclude(log, GDR_NCCL_NONE,
			 "GPU Direct RDMA disabled for the GPU/HCA pair by "
			 "distance (%s, beyond NCCL_NET_GDR_LEVEL or its default)",
			 log->distance);
		return;
	}
	cite(log, NF_HCA_GDR_ON);
	cite(log, NF_GPU_DMABUF);
	cite(log, NF_NETWORK);
	conclude(log, GDR_NCCL_UNKNOWN,
		 "no network channel line and no GPUDirect decision in the "
		 "log (cut short, or a single-node run)%s",
		 n[NF_HCA_GDR_ON] || n[NF_GPU_DMABUF] ? "; the GDR/DMA-BUF lines present are "
							"capabilities, not use"
						      : "");
}

static void print_line(FILE *out, const struct gdr_nccl_line *l)
{
	fprintf(out, "    %lu: %s\n", l->lineno, l->text);
}

void gdr_nccl_log_print(FILE *out, const struct gdr_nccl_log *log, const char *name)
{
	const unsigned int *n = log->count;

	fprintf(out, "nccl-log: %s\n", name);
	if (!gdr_nccl_log_is_nccl(log)) {
		fprintf(out, "  conclusion:     unknown\n  because:        %s\n", log->reason);
		return;
	}
	fprintf(out, "  NCCL version:   %s\n", log->version[0] ? log->version : "not in the log");
	fprintf(out, "  transport:      %s\n",
		log->chan_net[0]  ? log->chan_net
		: log->network[0] ? log->network
				  : "not in the log");
	if (log->plugin[0] || n[NF_PLUGIN])
		fprintf(out, "  net plugin:     %s\n", log->plugin[0] ? log->plugin : "yes");
	fprintf(out, "  GDR per HCA:    %u enabled, %u disabled lines\n", n[NF_HCA_GDR_ON],
		n[NF_HCA_GDR_OFF]);
	fprintf(out, "  GDR per GPU:    %u enabled, %u disabled lines%s%s%s\n", n[NF_PAIR_GDR_ON],
		n[NF_PAIR_GDR_OFF], log->distance[0] ? " (last: distance " : "", log->distance,
		log->distance[0] ? ")" : "");
	if (log->gdr_level[0])
		fprintf(out, "  GDR level:      NCCL_NET_GDR_LEVEL=%s\n", log->gdr_level);
	fprintf(out, "  DMA-BUF:        %s\n",
		n[NF_GPU_DMABUF] ? "available on the GPU (a capability, not the path in use)"
				 : "no \"DMA-BUF is available\" line");
	if (n[NF_PLUGIN_DMABUF] || n[NF_PLUGIN_NO_DMABUF] || n[NF_PLUGIN_PEERMEM] ||
	    n[NF_PLUGIN_GDR_OFF])
		fprintf(out, "  plugin says:    NIC DMA-BUF %s, NIC peermem %s%s\n",
			n[NF_PLUGIN_DMABUF]	 ? "yes"
			: n[NF_PLUGIN_NO_DMABUF] ? "no"
						 : "not said",
			n[NF_PLUGIN_PEERMEM] ? "yes" : "not said",
			n[NF_PLUGIN_GDR_OFF] ? ", GDR disabled by the plugin" : "");
	fprintf(out, "  channels:       %u over the network, %u with /GDRDMA\n",
		n[NF_CHAN_GDR] + n[NF_CHAN_NOGDR], n[NF_CHAN_GDR]);
	if (log->nprocs) {
		fprintf(out, "  per process:\n");
		for (unsigned int i = 0; i < log->nprocs; i++) {
			const struct gdr_nccl_proc *p = &log->procs[i];

			fprintf(out, "    %s", p->id[0] ? p->id : "(no prefix)");
			if (p->dev >= 0)
				fprintf(out, " [%d]", p->dev);
			fprintf(out, ": %u network channels, %u with /GDRDMA%s\n", p->chan_net,
				p->chan_gdr, p->gpu_dmabuf ? ", GPU DMA-BUF available" : "");
		}
		if (log->procs_dropped)
			fprintf(out, "    (%u more not listed)\n", log->procs_dropped);
	}
	fprintf(out, "  conclusion:     %s\n", gdr_nccl_path_name(log->path));
	fprintf(out, "  because:        %s\n", log->reason);
	if (log->ncited) {
		fprintf(out, "  deciding lines:\n");
		for (unsigned int i = 0; i < log->ncited; i++)
			print_line(out, &log->first[log->cited[i]]);
	}
}

void gdr_nccl_log_json(FILE *out, const struct gdr_nccl_log *log, const char *name)
{
	fputs("{\n  \"file\": ", out);
	gdr_json_str(out, name);
	fprintf(out, ",\n  \"nccl_log\": %s,\n  \"lines\": %lu,\n  \"version\": ",
		gdr_nccl_log_is_nccl(log) ? "true" : "false", log->lines);
	gdr_json_str(out, log->version);
	fputs(",\n  \"transport\": ", out);
	gdr_json_str(out, log->chan_net[0] ? log->chan_net : log->network);
	fputs(",\n  \"plugin\": ", out);
	gdr_json_str(out, log->plugin);
	fputs(",\n  \"gdr_level\": ", out);
	gdr_json_str(out, log->gdr_level);
	fputs(",\n  \"counts\": {", out);
	for (int f = 0; f < NF__COUNT; f++)
		fprintf(out, "%s\"%s\": %u", f ? ", " : "", fact_names[f], log->count[f]);
	fputs("},\n  \"processes\": [", out);
	for (unsigned int i = 0; i < log->nprocs; i++) {
		const struct gdr_nccl_proc *p = &log->procs[i];

		fputs(i ? ", {\"id\": " : "{\"id\": ", out);
		gdr_json_str(out, p->id);
		fprintf(out,
			", \"dev\": %d, \"net_channels\": %u, \"gdrdma_channels\": %u, "
			"\"gpu_dmabuf\": %s}",
			p->dev, p->chan_net, p->chan_gdr, p->gpu_dmabuf ? "true" : "false");
	}
	fputs("],\n  \"conclusion\": ", out);
	gdr_json_str(out, gdr_nccl_path_name(log->path));
	fputs(",\n  \"reason\": ", out);
	gdr_json_str(out, log->reason);
	fputs(",\n  \"deciding_lines\": [", out);
	for (unsigned int i = 0; i < log->ncited; i++) {
		const struct gdr_nccl_line *l = &log->first[log->cited[i]];

		fprintf(out, "%s{\"line\": %lu, \"fact\": \"%s\", \"text\": ", i ? ", " : "",
			l->lineno, fact_names[log->cited[i]]);
		gdr_json_str(out, l->text);
		fputc('}', out);
	}
	fputs("]\n}\n", out);
}
