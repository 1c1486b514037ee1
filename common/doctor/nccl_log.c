/*
 * NCCL_DEBUG=INFO log reader: what each record says. Which lines decide what:
 *  - a network channel line ending in /GDRDMA ("Channel 00/0 : 1[0] -> 0[0]
 *    [receive] via NET/IB/0/GDRDMA", "Ring 00 : 6 -> 2 [receive] via NET/IB/0"
 *    in 2.4) is GDR in use for that connection; without it, host staging;
 *  - "DMA-BUF is available on GPU device N" is only the GPU's capability:
 *    NCCL then registers through DMA-BUF when the NIC also takes it, and
 *    otherwise through peer memory;
 *  - "NET/<net> : GPU Direct RDMA Enabled for HCA" is the NIC side's
 *    capability, not use, and only for the transport <net> names;
 *  - a plugin's own "(DMABUF) enabled" says the NIC takes DMA-BUF, not that
 *    NCCL used GDR (NCCL can still disable it);
 *  - "Bootstrap : Using" and, before 2.5, "NET/Socket : Using" name the
 *    bootstrap interface, not the data transport.
 * Every fact is recorded twice: for the whole file and for the process
 * (host:pid, or the launcher's tag) that printed it, so that a file holding
 * several runs can be judged per process.
 */
#include "config.h"

#include "nccl_log.h"
#include "util.h"

#include <ctype.h>
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
};

const char *gdr_nccl_fact_name(enum gdr_nccl_fact f)
{
	return (unsigned int)f < NF__COUNT ? fact_names[f] : "?";
}

static void facts_init(struct gdr_nccl_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->vmajor = f->vminor = f->vpatch = -1;
}

void gdr_nccl_log_init(struct gdr_nccl_log *log)
{
	memset(log, 0, sizeof(*log));
	log->vmajor = log->vminor = log->vpatch = -1;
	facts_init(&log->all);
	facts_init(&log->bare);
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

/* The fact sets one record updates: the whole file's and its process's (or the bare lines'). */
struct sink {
	struct gdr_nccl_facts *set[2];
	struct gdr_nccl_proc *proc;
	unsigned long lineno;
	const char *raw;
};

static void note_one(struct gdr_nccl_facts *s, enum gdr_nccl_fact f, const struct sink *k)
{
	if (s->count[f]++ == 0) {
		s->first[f].lineno = k->lineno;
		gdr_strlcpy(s->first[f].text, k->raw, sizeof(s->first[f].text));
	}
}

static void note(const struct sink *k, enum gdr_nccl_fact f)
{
	note_one(k->set[0], f, k);
	note_one(k->set[1], f, k);
}

static void copy_word(char *dst, size_t len, const char *src, const char *stop)
{
	size_t n = strcspn(src, stop);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Set a text field in both sets; first_only keeps the first value seen. */
static void set_word(const struct sink *k, size_t off, size_t len, const char *src,
		     const char *stop, int first_only)
{
	for (int i = 0; i < 2; i++) {
		char *dst = (char *)k->set[i] + off;

		if (!first_only || !dst[0])
			copy_word(dst, len, src, stop);
	}
}

#define SET_WORD(k, field, src, stop, first)                                                       \
	set_word(k, offsetof(struct gdr_nccl_facts, field),                                        \
		 sizeof(((struct gdr_nccl_facts *)0)->field), src, stop, first)

const char *gdr_nccl_busid_text(unsigned long long id, char *buf, size_t len)
{
	/* NCCL reads "dddd:bb:dd.f" as one hex number with the separators dropped. */
	snprintf(buf, len, "%04llx:%02llx:%02llx.%llx", id >> 20, (id >> 12) & 0xff,
		 (id >> 4) & 0xff, id & 0xf);
	return buf;
}

static void devs_add_gpu(struct gdr_nccl_devs *d, unsigned long long id, unsigned long lineno)
{
	for (unsigned int i = 0; i < d->ngpu; i++)
		if (d->gpu[i] == id)
			return;
	if (d->ngpu >= GDR_NCCL_MAX_DEVS) {
		d->dropped++;
		return;
	}
	d->gpu_line[d->ngpu] = lineno;
	d->gpu[d->ngpu++] = id;
}

static void devs_add_nic(struct gdr_nccl_devs *d, const char *name, unsigned long lineno)
{
	for (unsigned int i = 0; i < d->nnic; i++)
		if (!strcmp(d->nic[i], name))
			return;
	if (d->nnic >= GDR_NCCL_MAX_DEVS) {
		d->dropped++;
		return;
	}
	d->nic_line[d->nnic] = lineno;
	gdr_strlcpy(d->nic[d->nnic++], name, sizeof(d->nic[0]));
}

void gdr_nccl_devs_merge(struct gdr_nccl_devs *to, const struct gdr_nccl_devs *from)
{
	for (unsigned int i = 0; i < from->ngpu; i++)
		devs_add_gpu(to, from->gpu[i], from->gpu_line[i]);
	for (unsigned int i = 0; i < from->nnic; i++)
		devs_add_nic(to, from->nic[i], from->nic_line[i]);
	to->dropped += from->dropped;
}

/* A busId as NCCL prints it ("%lx"): hex digits up to a delimiter; 0 when not one. */
static int parse_busid(const char *s, const char *stop, unsigned long long *id)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	if (!n || n > 12 || !strchr(stop, s[n]))
		return 0;
	*id = strtoull(s, NULL, 16);
	return (int)n;
}

static void note_gpu(const struct sink *k, unsigned long long id)
{
	for (int i = 0; i < 2; i++)
		devs_add_gpu(&k->set[i]->devs, id, k->lineno);
}

static void note_nic(const struct sink *k, const char *name, size_t n)
{
	char buf[sizeof(((struct gdr_nccl_devs *)0)->nic[0])];

	if (!n || n >= sizeof(buf))
		return;
	memcpy(buf, name, n);
	buf[n] = '\0';
	for (int i = 0; i < 2; i++)
		devs_add_nic(&k->set[i]->devs, buf, k->lineno);
}

/*
 * "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE [RO]; OOB ib0:..." (and a
 * plugin's "NET/IBext : Using ..."): the RDMA NICs NCCL took, port after the
 * colon; a merged device lists its NICs joined by '+'. Not NET/Socket, whose
 * list is network interfaces.
 */
static int parse_nics(const struct sink *k, const char *msg)
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

			note_nic(k, p, n);
			p += n;
			p += strcspn(p, "+ ;"); /* skip ":1/IB" */
			if (*p == '+')
				p++;
		}
	}
	return 1;
}

static struct gdr_nccl_proc *new_proc(struct gdr_nccl_log *log, const char *id, const char *launch)
{
	struct gdr_nccl_proc *p;

	if (log->nprocs >= GDR_NCCL_MAX_PROCS) {
		log->procs_dropped++;
		return NULL;
	}
	p = &log->procs[log->nprocs++];
	memset(p, 0, sizeof(*p));
	facts_init(&p->facts);
	gdr_strlcpy(p->id, id, sizeof(p->id));
	gdr_strlcpy(p->launch, launch, sizeof(p->launch));
	p->dev = -1;
	p->seg = log->nseg;
	return p;
}

/*
 * One process is one "host:pid" (the thread id changes between init and
 * proxy threads, the device between a process's GPUs). A launcher's tag
 * stands in until the process's first prefixed line names it.
 */
static struct gdr_nccl_proc *proc_for(struct gdr_nccl_log *log, const char *id, const char *launch)
{
	unsigned int i;

	if (id[0] || !launch[0]) {
		for (i = 0; i < log->nprocs; i++)
			if (!strcmp(log->procs[i].id, id) &&
			    (id[0] || !strcmp(log->procs[i].launch, launch)))
				return &log->procs[i];
	}
	for (i = 0; i < log->nprocs; i++)
		if (launch[0] && !strcmp(log->procs[i].launch, launch) &&
		    (!log->procs[i].id[0] || !id[0])) {
			if (id[0])
				gdr_strlcpy(log->procs[i].id, id, sizeof(log->procs[i].id));
			return &log->procs[i];
		}
	return new_proc(log, id, launch);
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
		/* "host:pid:tid": drop the thread id. */
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

static int parse_channel(const struct sink *k, const char *msg)
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
		note(k, NF_CHAN_LOCAL);
		return 1;
	}
	rest = via + 9;
	copy_word(transport, sizeof(transport), rest, "/\r\n");
	SET_WORD(k, chan_net, transport, "", 1);
	if (!strcmp(transport, "Socket"))
		note(k, NF_CHAN_SOCKET);
	if (strstr(rest, "/GDRDMA")) {
		note(k, NF_CHAN_GDR);
		if (k->proc)
			k->proc->chan_gdr++;
	} else {
		note(k, NF_CHAN_NOGDR);
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
static void note_hca(const struct sink *k, const char *msg, enum gdr_nccl_fact f)
{
	char net[64] = "";

	if (!strncmp(msg, "NET/", 4))
		copy_word(net, sizeof(net), msg + 4, ":");
	for (size_t n = strlen(net); n && net[n - 1] == ' ';)
		net[--n] = '\0';
	for (int i = 0; i < 2; i++) {
		struct gdr_nccl_facts *s = k->set[i];
		int other = net[0] && s->network[0] && strcmp(net, s->network);

		note_one(s, other ? NF_HCA_OTHER_NET : f, k);
	}
}

/*
 * The GPU of a pair line: "for GPU 81000 / HCA" (2.7 on) or "for GPU/0-81000"
 * (system id, busId). NCCL before 2.7 printed the CUDA device there ("GPU
 * 2[2] / HCA 0"): a value under three digits is not taken as a busId.
 */
static void gpu_of_pair(const struct sink *k, const char *g)
{
	const char *p = strstr(g, " for GPU");
	unsigned long long id;
	int n;

	p += 8;
	if (*p == '/') {
		p = strchr(p, '-');
		if (p && parse_busid(p + 1, " (", &id))
			note_gpu(k, id);
	} else if (*p == ' ' && (n = parse_busid(p + 1, " ", &id)) >= 3 &&
		   !strncmp(p + 1 + n, " / ", 3)) {
		note_gpu(k, id);
	}
}

static int parse_gdr(const struct sink *k, const char *msg)
{
	const char *g = strstr(msg, "GPU Direct RDMA ");
	const char *d;

	if (!g)
		return 0;
	/* "(no module)" (net_ib.cc before 2.5: "(no module or not supported by GPU)"). */
	if (strstr(g, "Disabled for ") && strstr(g, "(no module"))
		note(k, NF_HCA_NO_MODULE);
	/* NET/Socket's "HCA" is a network interface ('lo'), not an RDMA device. */
	if (strncmp(msg, "NET/Socket", 10) && (d = strstr(g, " for HCA ")) != NULL &&
	    (d = strchr(d, '\'')) != NULL)
		note_nic(k, d + 1, strcspn(d + 1, "'"));
	if (strstr(g, " for HCA ") && !strstr(g, " for GPU ")) {
		/* A plugin's own view of the NIC (HPC-X nccl_rdma_sharp_plugin and its kin). */
		if (strstr(g, "(DMABUF) enabled"))
			note(k, NF_PLUGIN_DMABUF);
		else if (strstr(g, "(nvidia-peermem) enabled"))
			note(k, NF_PLUGIN_PEERMEM);
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
		note(k, NF_PAIR_GDR_ON);
	else if (strstr(g, "Disabled for GPU"))
		note(k, NF_PAIR_GDR_OFF);
	d = strstr(g, "(distance ");
	if (d)
		SET_WORD(k, distance, d + 10, "),\r\n", 0);
	return 1;
}

static int parse_env(const struct sink *k, const char *msg)
{
	if (!strncmp(msg, "NCCL_DMABUF_ENABLE set by environment to ", 41)) {
		if (atoi(msg + 41) == 0)
			note(k, NF_ENV_DMABUF_OFF);
		return 1;
	}
	if (!strncmp(msg, "NCCL_IB_DISABLE set by environment to ", 38)) {
		if (atoi(msg + 38) == 1)
			note(k, NF_ENV_IB_OFF);
		return 1;
	}
	if (!strncmp(msg, "NCCL_NET_GDR_LEVEL set by environment to ", 41)) {
		SET_WORD(k, gdr_level, msg + 41, " .\r\n", 0);
		note(k, NF_ENV_GDR_LEVEL);
		return 1;
	}
	return 0;
}

static void set_plugin(const struct sink *k, const char *src, const char *stop, int first_only)
{
	SET_WORD(k, plugin, src, stop, first_only);
	/* "AWS Libfabric (v6)": drop the space before the version. */
	for (int i = 0; i < 2; i++) {
		char *pl = k->set[i]->plugin;
		size_t n = strlen(pl);

		while (n && pl[n - 1] == ' ')
			pl[--n] = '\0';
	}
}

static int parse_plugin(const struct sink *k, const char *msg)
{
	const char *p;

	if ((p = strstr(msg, "Loaded net plugin ")) != NULL) {
		set_plugin(k, p + 18, "(\r\n", 0);
		note(k, NF_PLUGIN);
		return 1;
	}
	if (!strncmp(msg, "Plugin Path : ", 14)) {
		set_plugin(k, msg + 14, "\r\n", 1);
		note(k, NF_PLUGIN);
		return 1;
	}
	if (!strncmp(msg, "P2P plugin ", 11)) {
		note(k, NF_PLUGIN);
		return 1;
	}
	if (!strncmp(msg, "NET/OFI ", 8)) {
		if (strstr(msg, "disabling GDR") || strstr(msg, "GDR not supported"))
			note(k, NF_PLUGIN_GDR_OFF);
		if ((p = strstr(msg, "Support for DMA-BUF registrations: ")) != NULL)
			note(k,
			     !strncmp(p + 35, "true", 4) ? NF_PLUGIN_DMABUF : NF_PLUGIN_NO_DMABUF);
		return 1;
	}
	return !strncmp(msg, "NET/Plugin", 10);
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

static void note_version(struct gdr_nccl_log *log, const struct sink *k, const char *v)
{
	char ver[48];
	unsigned int i;

	copy_word(ver, sizeof(ver), v, " \r\n");
	for (int s = 0; s < 2; s++) {
		struct gdr_nccl_facts *f = k->set[s];

		if (f->version[0])
			continue;
		gdr_strlcpy(f->version, ver, sizeof(f->version));
		gdr_nccl_parse_version(f->version, &f->vmajor, &f->vminor, &f->vpatch);
	}
	note(k, NF_VERSION);
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

static int parse_msg(struct gdr_nccl_log *log, const struct sink *k, const char *msg)
{
	int kind = gdr_nccl_guide_kind(msg);

	if (kind) {
		/* Checked first: some look like real lines ("... Enabled for GPU 0 / HCA 0, ...").
		 */
		note(k, NF_GUIDE_LINE);
		for (int i = 0; i < 2; i++)
			if (!k->set[i]->guide_kind)
				k->set[i]->guide_kind = kind;
	} else if (!strncmp(msg, "NCCL version ", 13)) {
		note_version(log, k, msg + 13);
	} else if (!strncmp(msg, "Using network ", 14)) {
		SET_WORD(k, network, msg + 14, "\r\n", 0);
		note(k, NF_NETWORK);
		note(k, NF_INIT);
	} else if (!strncmp(msg, "DMA-BUF is available on GPU device ", 35)) {
		note(k, NF_GPU_DMABUF);
		if (k->proc)
			k->proc->gpu_dmabuf = 1;
	} else if (strstr(msg, "Init START") || strstr(msg, "Init COMPLETE")) {
		const char *b = strstr(msg, " busId ");
		unsigned long long id;

		note(k, NF_INIT);
		if (b && parse_busid(b + 7, " ", &id))
			note_gpu(k, id);
	} else if (!strncmp(msg, "Connected all rings", 19)) {
		const char *g = strstr(msg, " GDR ");

		if (g)
			note(k, atoi(g + 5) ? NF_RING_GDR_ON : NF_RING_GDR_OFF);
	} else if (!strncmp(msg, "NET/IB : No device found", 24)) {
		note(k, NF_NO_IB_DEVICE);
	} else if (!strncmp(msg, "NET/Socket : Using ", 19)) {
		/* The data transport after "No device found"; before 2.5 also the bootstrap's. */
		note(k, NF_SOCKET_USING);
	} else if (parse_nics(k, msg) || parse_channel(k, msg) || parse_gdr(k, msg) ||
		   /* NOLINTNEXTLINE(bugprone-branch-clone): empty on purpose, like the next */
		   parse_env(k, msg) || parse_plugin(k, msg)) {
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
	char id[96], raw[240];
	int dev, tagged;
	const char *msg;
	struct gdr_nccl_proc *proc = NULL;
	struct sink k;

	gdr_strlcpy(raw, text, sizeof(raw));
	/* Trailing blanks (a collector's padding) are no part of a value ("IB   "). */
	for (size_t n = strlen(raw); n && (raw[n - 1] == ' ' || raw[n - 1] == '\t');)
		raw[--n] = '\0';
	msg = split_line(raw, id, sizeof(id), &dev, &tagged);
	if (tagged || dev >= 0 || launch[0])
		proc = proc_for(log, id, launch);
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
		note(&k, NF_WARN);
		if (log->nwarns < GDR_NCCL_MAX_WARNS) {
			log->warns[log->nwarns].lineno = lineno;
			gdr_strlcpy(log->warns[log->nwarns++].text, raw,
				    sizeof(log->warns[0].text));
		} else {
			log->warns_dropped++;
		}
	}
	if (parse_msg(log, &k, msg) || tagged)
		log->nccl_lines++;
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
