/*
 * NCCL_DEBUG=INFO log reader: what each record says. Which lines decide what:
 *  - a network channel line ending in /GDRDMA ("Channel 00/0 : 1[0] -> 0[0]
 *    [receive] via NET/IB/0/GDRDMA", "Ring 00 : 6 -> 2 [receive] via NET/IB/0"
 *    in 2.4) is GDR in use for that connection; without it, host staging;
 *    "/GDRDMA(PCI)" (2.26 on) is GDR with a PCIe-mapped DMA-BUF on a C2C system;
 *  - "DMA-BUF is available on GPU device N" is only the GPU's capability:
 *    NCCL then registers through DMA-BUF when the NIC also takes it, and
 *    otherwise through peer memory;
 *  - "NET/<net> : GPU Direct RDMA Enabled|Disabled for HCA" is the NIC side's
 *    capability, not use, and only for the transport <net> names; for
 *    NET/Socket it names the Socket transport's network interfaces;
 *  - a plugin's own "(DMABUF) enabled" says the NIC takes DMA-BUF, not that
 *    NCCL used GDR (NCCL can still disable it);
 *  - "Bootstrap : Using" and, before 2.5, "NET/Socket : Using" name the
 *    bootstrap interface, not the data transport.
 * Every fact is recorded twice: for the whole file and for the process
 * (host:pid, or the launcher's tag) that printed it, so that a file holding
 * several runs can be judged per process.
 */
#include "config.h"

#include "nccl_log_int.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void gdr_nccl_note_one(struct gdr_nccl_facts *s, enum gdr_nccl_fact f,
		       const struct gdr_nccl_sink *k)
{
	if (s->count[f]++ == 0) {
		s->first[f].lineno = k->lineno;
		gdr_strlcpy(s->first[f].text, k->raw, sizeof(s->first[f].text));
	}
}

void gdr_nccl_note(const struct gdr_nccl_sink *k, enum gdr_nccl_fact f)
{
	gdr_nccl_note_one(k->set[0], f, k);
	gdr_nccl_note_one(k->set[1], f, k);
}

void gdr_nccl_copy_word(char *dst, size_t len, const char *src, const char *stop)
{
	size_t n = strcspn(src, stop);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void gdr_nccl_set_word(const struct gdr_nccl_sink *k, size_t off, size_t len, const char *src,
		       const char *stop, int first_only)
{
	for (int i = 0; i < 2; i++) {
		char *dst = (char *)k->set[i] + off;

		if (!first_only || !dst[0])
			gdr_nccl_copy_word(dst, len, src, stop);
	}
}

/*
 * "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE [RO]; OOB ib0:..." (and a
 * plugin's "NET/IBext : Using ..."): the RDMA NICs NCCL took, port after the
 * colon; a merged device lists its NICs joined by '+'. Not NET/Socket, whose
 * list is network interfaces.
 */
static int parse_nics(const struct gdr_nccl_sink *k, const char *msg)
{
	const char *u = strstr(msg, " : Using [");
	const char *end;

	if (strncmp(msg, "NET/", 4) || !u || !strncmp(msg, "NET/Socket", 10))
		return 0;
	end = strchr(u, ';');
	for (const char *p = strchr(u, '['); p && (!end || p < end); p = strchr(p, '[')) {
		p++;
		if (!isdigit((unsigned char)*p))
			continue;
		p += strspn(p, "0123456789");
		/* Not past a NUL: "[12" at the end of the line is the end of it. */
		if (*p != ']')
			continue;
		p++;
		while (*p && *p != ' ' && *p != ';') {
			size_t n = strcspn(p, ":+ ;/");

			gdr_nccl_note_nic(k, p, n);
			p += n;
			p += strcspn(p, "+ ;"); /* skip ":1/IB" */
			if (*p == '+')
				p++;
		}
	}
	return 1;
}

static int parse_channel(const struct gdr_nccl_sink *k, const char *msg)
{
	const char *via, *rest;
	char transport[64];

	if (strncmp(msg, "Channel ", 8) && strncmp(msg, "Ring ", 5))
		return 0;
	via = strstr(msg, " via NET/");
	if (!via) {
		/* Intra-node transports: NCCL's lines, but not the network. */
		if (!strstr(msg, " via P2P/") && !strstr(msg, " via SHM/") &&
		    !strstr(msg, " via CollNet") && !strstr(msg, " via NVLS"))
			return 0;
		gdr_nccl_note(k, NF_CHAN_LOCAL);
		return 1;
	}
	rest = via + 9;
	gdr_nccl_copy_word(transport, sizeof(transport), rest, "/\r\n");
	GDR_NCCL_SET_WORD(k, chan_net, transport, "", 1);
	if (!strcmp(transport, "Socket"))
		gdr_nccl_note(k, NF_CHAN_SOCKET);
	/* "IB/1/GDRDMA", "IB/1(3)/GDRDMA" (through rank 3's proxy): the NIC NCCL used. */
	rest += strlen(transport);
	if (*rest == '/' && isdigit((unsigned char)rest[1]))
		for (int i = 0; i < 2; i++)
			if (k->set[i]->chan_dev < 0)
				k->set[i]->chan_dev = atoi(rest + 1);
	if (strstr(rest, "/GDRDMA")) {
		gdr_nccl_note(k, NF_CHAN_GDR);
		/* 2.26 on (net.cc): GDR through a PCIe-mapped DMA-BUF on a C2C system. */
		if (strstr(rest, "/GDRDMA(PCI)"))
			gdr_nccl_note(k, NF_CHAN_GDR_PCI);
		if (k->proc)
			k->proc->chan_gdr++;
	} else {
		gdr_nccl_note(k, NF_CHAN_NOGDR);
	}
	if (k->proc)
		k->proc->chan_net++;
	return 1;
}

/*
 * NCCL's own "NET/<net> : GPU Direct RDMA Enabled|Disabled for HCA" (topo.cc)
 * is about <net>; when another transport carries the data it says nothing
 * about the one in use.
 */
static void note_hca(const struct gdr_nccl_sink *k, const char *msg, enum gdr_nccl_fact f)
{
	char net[64] = "";

	if (!strncmp(msg, "NET/", 4))
		gdr_nccl_copy_word(net, sizeof(net), msg + 4, ":");
	for (size_t n = strlen(net); n && net[n - 1] == ' ';)
		net[--n] = '\0';
	/*
	 * topo.cc prints the line for each device of the net in use
	 * (comm->ncclNet): NET/Socket's are network interfaces, and the line
	 * shows that the Socket transport carries the data, not a NIC
	 * without GPUDirect.
	 */
	if (!strcmp(net, "Socket")) {
		gdr_nccl_note(k, NF_SOCKET_HCA);
		return;
	}
	for (int i = 0; i < 2; i++) {
		struct gdr_nccl_facts *s = k->set[i];
		int other = net[0] && s->network[0] && strcmp(net, s->network);

		gdr_nccl_note_one(s, other ? NF_HCA_OTHER_NET : f, k);
	}
}

/*
 * The GPU of a pair line: "for GPU 81000 / HCA" (2.7 on) or "for GPU/0-81000"
 * (system id, busId). NCCL before 2.7 printed the CUDA device there ("GPU
 * 2[2] / HCA 0"): a value under three digits is not taken as a busId.
 */
static void gpu_of_pair(const struct gdr_nccl_sink *k, const char *g)
{
	const char *p = strstr(g, " for GPU");
	unsigned long long id;
	int n;

	p += 8;
	if (*p == '/') {
		p = strchr(p, '-');
		if (p && gdr_nccl_parse_busid(p + 1, " (", &id))
			gdr_nccl_note_gpu(k, id);
	} else if (*p == ' ' && (n = gdr_nccl_parse_busid(p + 1, " ", &id)) >= 3 &&
		   !strncmp(p + 1 + n, " / ", 3)) {
		gdr_nccl_note_gpu(k, id);
	}
}

static int parse_gdr(const struct gdr_nccl_sink *k, const char *msg)
{
	const char *g = strstr(msg, "GPU Direct RDMA ");
	const char *d;

	if (!g)
		return 0;
	/* "(no module)" (net_ib.cc before 2.5: "(no module or not supported by GPU)"). */
	if (strstr(g, "Disabled for ") && strstr(g, "(no module"))
		gdr_nccl_note(k, NF_HCA_NO_MODULE);
	/* NET/Socket's "HCA" is a network interface ('lo'), not an RDMA device. */
	if (strncmp(msg, "NET/Socket", 10) && (d = strstr(g, " for HCA ")) != NULL &&
	    (d = strchr(d, '\'')) != NULL)
		gdr_nccl_note_nic(k, d + 1, strcspn(d + 1, "'"));
	if (strstr(g, " for HCA ") && !strstr(g, " for GPU ")) {
		/* A plugin's own view of the NIC (HPC-X nccl_rdma_sharp_plugin and its kin). */
		if (strstr(g, "(DMABUF) enabled"))
			gdr_nccl_note(k, NF_PLUGIN_DMABUF);
		else if (strstr(g, "(nvidia-peermem) enabled"))
			gdr_nccl_note(k, NF_PLUGIN_PEERMEM);
		else if (strstr(g, "Enabled for HCA"))
			note_hca(k, msg, NF_HCA_GDR_ON);
		else if (strstr(g, "Disabled for HCA"))
			note_hca(k, msg, NF_HCA_GDR_OFF);
		return 1;
	}
	/* "for GPU 81000 / HCA 1 (distance ...)", or in newer source "for GPU/0-1b000 (rank 0) -
	 * NET/0-0 (distance ..., read 1, mode Default)". */
	if (!strstr(g, " for GPU ") && !strstr(g, " for GPU/"))
		return 0;
	gpu_of_pair(k, g);
	if (strstr(g, "Enabled for GPU"))
		gdr_nccl_note(k, NF_PAIR_GDR_ON);
	else if (strstr(g, "Disabled for GPU"))
		gdr_nccl_note(k, NF_PAIR_GDR_OFF);
	d = strstr(g, "(distance ");
	if (d)
		GDR_NCCL_SET_WORD(k, distance, d + 10, "),\r\n", 0);
	return 1;
}

static int parse_env(const struct gdr_nccl_sink *k, const char *msg)
{
	if (!strncmp(msg, "NCCL_DMABUF_ENABLE set by environment to ", 41)) {
		if (atoi(msg + 41) == 0)
			gdr_nccl_note(k, NF_ENV_DMABUF_OFF);
		return 1;
	}
	if (!strncmp(msg, "NCCL_IB_DISABLE set by environment to ", 38)) {
		if (atoi(msg + 38) == 1)
			gdr_nccl_note(k, NF_ENV_IB_OFF);
		return 1;
	}
	if (!strncmp(msg, "NCCL_IB_DATA_DIRECT set by environment to ", 42)) {
		if (atoi(msg + 42) == 0)
			gdr_nccl_note(k, NF_ENV_DATA_DIRECT_OFF);
		return 1;
	}
	if (!strncmp(msg, "NCCL_NET_GDR_MLOPART set by environment to ", 43)) {
		if (atoi(msg + 43) != 0)
			gdr_nccl_note(k, NF_ENV_MLOPART_ON);
		return 1;
	}
	if (!strncmp(msg, "NCCL_NET_GDR_LEVEL set by environment to ", 41)) {
		GDR_NCCL_SET_WORD(k, gdr_level, msg + 41, " .\r\n", 0);
		gdr_nccl_note(k, NF_ENV_GDR_LEVEL);
		return 1;
	}
	return 0;
}

static void set_plugin(const struct gdr_nccl_sink *k, const char *src, const char *stop,
		       int first_only)
{
	GDR_NCCL_SET_WORD(k, plugin, src, stop, first_only);
	/* "AWS Libfabric (v6)": drop the space before the version. */
	for (int i = 0; i < 2; i++) {
		char *pl = k->set[i]->plugin;
		size_t n = strlen(pl);

		while (n && pl[n - 1] == ' ')
			pl[--n] = '\0';
	}
}

static int parse_plugin(const struct gdr_nccl_sink *k, const char *msg)
{
	const char *p;

	if ((p = strstr(msg, "Loaded net plugin ")) != NULL) {
		set_plugin(k, p + 18, "(\r\n", 0);
		gdr_nccl_note(k, NF_PLUGIN);
		return 1;
	}
	if (!strncmp(msg, "Plugin Path : ", 14)) {
		set_plugin(k, msg + 14, "\r\n", 1);
		gdr_nccl_note(k, NF_PLUGIN);
		return 1;
	}
	if (!strncmp(msg, "P2P plugin ", 11)) {
		gdr_nccl_note(k, NF_PLUGIN);
		return 1;
	}
	if (!strncmp(msg, "NET/OFI ", 8)) {
		if (strstr(msg, "disabling GDR") || strstr(msg, "GDR not supported"))
			gdr_nccl_note(k, NF_PLUGIN_GDR_OFF);
		if ((p = strstr(msg, "Support for DMA-BUF registrations: ")) != NULL)
			gdr_nccl_note(k, !strncmp(p + 35, "true", 4) ? NF_PLUGIN_DMABUF
								     : NF_PLUGIN_NO_DMABUF);
		return 1;
	}
	return !strncmp(msg, "NET/Plugin", 10);
}

/*
 * What NCCL saw of the node: NCCL 2.4's "CUDA Dev 0[0], IB NIC distance :
 *  PHB SYS" (src/transport/net.cc, v2.4.2-1 to v2.4.8-1: one class per NIC,
 * at INIT, so shown by default); libibverbs missing ("Failed to open
 * libibverbs.so[.1]", a WARN up to v2.10.3-1, INFO to v2.29.7-1; "Count
 * not open %s" from v2.30.3-1); a NIC's Data Direct DMA interface
 * (v2.27.3-1 on); a GPU in
 * MLOPart mode in the topology NCCL prints at GRAPH ("GPU/0-1b000 (0)
 * [MLOPart 0]", 2.30.7 on).
 */
static int parse_node(const struct gdr_nccl_sink *k, const char *msg)
{
	const char *p;

	if (!strncmp(msg, "CUDA Dev ", 9) && (p = strstr(msg, " NIC distance :")) != NULL) {
		p += 15;
		p += strspn(p, " ");
		GDR_NCCL_SET_WORD(k, nic_dist, p, "\r\n", 1);
		gdr_nccl_note(k, NF_NIC_DISTANCE);
		return 1;
	}
	if (!strncmp(msg, "Failed to open libibverbs", 25) ||
	    !strncmp(msg, "Count not open libibverbs", 25)) {
		gdr_nccl_note(k, NF_NO_VERBS);
		return 1;
	}
	if ((p = strstr(msg, "Data Direct DMA Interface is detected for device")) != NULL) {
		p += 48;
		p += strspn(p, ": ");
		gdr_nccl_note_nic(k, p, strcspn(p, " \r\n"));
		gdr_nccl_note(k, NF_DATA_DIRECT);
		return 1;
	}
	if (strstr(msg, "GPU/") && strstr(msg, " [MLOPart ")) {
		gdr_nccl_note(k, NF_MLOPART);
		return 1;
	}
	return 0;
}

/* Up to 4 decimal digits, nothing else: no sign, no overflow ("2.99999999999.1"). */
static const char *version_part(const char *s, int *out)
{
	int n = 0;

	*out = 0;
	while (n < 4 && isdigit((unsigned char)s[n]))
		*out = *out * 10 + (s[n++] - '0');
	return n && !isdigit((unsigned char)s[n]) ? s + n : NULL;
}

int gdr_nccl_parse_version(const char *s, int *major, int *minor, int *patch)
{
	const char *p = version_part(s, major);

	if (!p || *p != '.' || !(p = version_part(p + 1, minor))) {
		*major = *minor = *patch = -1;
		return -EINVAL;
	}
	if (*p != '.' || !version_part(p + 1, patch))
		*patch = -1;
	return 0;
}

static void note_version(struct gdr_nccl_log *log, const struct gdr_nccl_sink *k, const char *v)
{
	char ver[48];
	unsigned int i;

	gdr_nccl_copy_word(ver, sizeof(ver), v, " \r\n");
	for (int s = 0; s < 2; s++) {
		struct gdr_nccl_facts *f = k->set[s];

		if (f->version[0])
			continue;
		gdr_strlcpy(f->version, ver, sizeof(f->version));
		gdr_nccl_parse_version(f->version, &f->vmajor, &f->vminor, &f->vpatch);
	}
	gdr_nccl_note(k, NF_VERSION);
	if (!k->proc && log->nseg < GDR_NCCL_MAX_VERSIONS) {
		log->nseg++;
		gdr_strlcpy(log->seg_version[log->nseg], ver, sizeof(log->seg_version[0]));
		log->seg_line[log->nseg].lineno = k->lineno;
		gdr_strlcpy(log->seg_line[log->nseg].text, k->raw, sizeof(log->seg_line[0].text));
	}
	for (i = 0; i < log->nversions; i++)
		if (!strcmp(log->versions[i], ver))
			return;
	if (log->nversions < GDR_NCCL_MAX_VERSIONS)
		gdr_strlcpy(log->versions[log->nversions++], ver, sizeof(log->versions[0]));
	else
		log->versions_dropped++;
}

static int parse_msg(struct gdr_nccl_log *log, const struct gdr_nccl_sink *k, const char *msg,
		     int warn)
{
	int kind;

	/* A network error, or a HINT line that belongs to one. */
	if (gdr_nccl_parse_event(log, k, msg, warn))
		return 1;
	kind = gdr_nccl_guide_kind(msg);
	if (kind) {
		/* Checked first: some look like real lines ("... Enabled for GPU 0 / HCA 0, ...").
		 */
		gdr_nccl_note(k, NF_GUIDE_LINE);
		for (int i = 0; i < 2; i++)
			if (!k->set[i]->guide_kind)
				k->set[i]->guide_kind = kind;
	} else if (!strncmp(msg, "NCCL version ", 13)) {
		note_version(log, k, msg + 13);
	} else if (!strncmp(msg, "Using network ", 14)) {
		GDR_NCCL_SET_WORD(k, network, msg + 14, "\r\n", 0);
		gdr_nccl_note(k, NF_NETWORK);
		gdr_nccl_note(k, NF_INIT);
	} else if (!strncmp(msg, "DMA-BUF is available on GPU device ", 35)) {
		gdr_nccl_note(k, NF_GPU_DMABUF);
		if (k->proc)
			k->proc->gpu_dmabuf = 1;
	} else if (strstr(msg, "Init START") || strstr(msg, "Init COMPLETE")) {
		const char *b = strstr(msg, " busId ");
		unsigned long long id;

		gdr_nccl_note(k, NF_INIT);
		if (b && gdr_nccl_parse_busid(b + 7, " ", &id))
			gdr_nccl_note_gpu(k, id);
	} else if (!strncmp(msg, "Connected all rings", 19)) {
		const char *g = strstr(msg, " GDR ");

		if (g)
			gdr_nccl_note(k, atoi(g + 5) ? NF_RING_GDR_ON : NF_RING_GDR_OFF);
	} else if (!strncmp(msg, "NET/IB : No device found", 24)) {
		gdr_nccl_note(k, NF_NO_IB_DEVICE);
	} else if (!strncmp(msg, "NET/Socket : Using ", 19)) {
		/* The data transport after "No device found"; before 2.5 also the bootstrap's. */
		gdr_nccl_note(k, NF_SOCKET_USING);
	} else if (parse_nics(k, msg) || parse_channel(k, msg) || parse_gdr(k, msg) ||
		   /* NOLINTNEXTLINE(bugprone-branch-clone): empty on purpose, like the next */
		   parse_env(k, msg) || parse_plugin(k, msg) || parse_node(k, msg)) {
		/* recorded */
	} else if (!strncmp(msg, "NET/", 4) || !strncmp(msg, "Bootstrap", 9)) {
		/* Interface lists, virtual devices, bootstrap: NCCL's, but not evidence. */
	} else {
		return 0;
	}
	return 1;
}

void gdr_nccl_log_record(struct gdr_nccl_log *log, unsigned long lineno, const char *launch,
			 const char *text)
{
	char id[96], raw[sizeof(((struct gdr_nccl_line *)0)->text)];
	int dev, tagged;
	const char *msg;
	struct gdr_nccl_proc *proc = NULL;
	struct gdr_nccl_sink k;

	gdr_strlcpy(raw, text, sizeof(raw));
	/* Trailing blanks (a collector's padding) are no part of a value ("IB   "). */
	for (size_t n = strlen(raw); n && (raw[n - 1] == ' ' || raw[n - 1] == '\t');)
		raw[--n] = '\0';
	msg = gdr_nccl_split_line(raw, id, sizeof(id), &dev, &tagged);
	if (tagged || dev >= 0 || launch[0])
		proc = gdr_nccl_proc_for(log, id, launch);
	if (proc && dev >= 0) {
		if (proc->dev < 0)
			proc->dev = dev;
		if (dev < 64)
			proc->devs |= 1ULL << dev;
	}
	k.set[0] = &log->all;
	/* A process beyond the table counts for the whole file, not as a bare line. */
	k.set[1] = proc ? &proc->facts : (tagged || launch[0]) ? &log->overflow : &log->bare;
	k.proc = proc;
	k.lineno = lineno;
	k.raw = raw;
	if (tagged && strstr(raw, "NCCL WARN ")) {
		gdr_nccl_note(&k, NF_WARN);
		if (log->nwarns < GDR_NCCL_MAX_WARNS) {
			log->warns[log->nwarns].lineno = lineno;
			gdr_strlcpy(log->warns[log->nwarns++].text, raw,
				    sizeof(log->warns[0].text));
		} else {
			log->warns_dropped++;
		}
	}
	if (parse_msg(log, &k, msg, tagged && strstr(raw, "NCCL WARN ") != NULL) || tagged)
		log->nccl_lines++;
}
