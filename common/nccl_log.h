/*
 * Reader for NCCL_DEBUG=INFO logs: which way NCCL's network transport
 * reached GPU memory (DMA-BUF, peer memory, not at all), and the lines that
 * say so. Formats from NCCL 2.4 to 2.30 (the per-GPU "GPU Direct RDMA ...
 * for GPU" line changed shape several times and is TRACE-only from 2.30).
 *
 * Lines are fed one at a time, so a log of any length reads in constant
 * memory; the conclusion is drawn by gdr_nccl_log_finish().
 */
#ifndef GDR_NCCL_LOG_H
#define GDR_NCCL_LOG_H

#include <stdio.h>

enum gdr_nccl_path {
	GDR_NCCL_UNKNOWN = 0,
	GDR_NCCL_DMABUF,
	GDR_NCCL_PEERMEM,
	GDR_NCCL_NONE,
};

/* Facts the reader records, each with the first line that showed it. */
enum gdr_nccl_fact {
	NF_VERSION = 0,
	NF_NETWORK,    /* "Using network X" */
	NF_PLUGIN,     /* an external net plugin was loaded */
	NF_GPU_DMABUF, /* "DMA-BUF is available on GPU device N": a GPU capability */
	NF_HCA_GDR_ON, /* "GPU Direct RDMA Enabled for HCA": NIC+driver capability */
	NF_HCA_GDR_OFF,
	NF_PAIR_GDR_ON, /* "GPU Direct RDMA Enabled for GPU x / HCA y (distance ...)" */
	NF_PAIR_GDR_OFF,
	NF_CHAN_GDR,	/* a network channel with /GDRDMA: GDR in use */
	NF_CHAN_NOGDR,	/* a network channel without it */
	NF_CHAN_SOCKET, /* a channel over NET/Socket */
	NF_RING_GDR_ON, /* "Connected all rings, use ring PXN x GDR 1" */
	NF_RING_GDR_OFF,
	NF_PLUGIN_GDR_OFF, /* plugin says it disabled GDR (aws-ofi-nccl) */
	NF_PLUGIN_DMABUF,  /* plugin says the NIC takes DMA-BUF */
	NF_PLUGIN_NO_DMABUF,
	NF_PLUGIN_PEERMEM, /* plugin says GDR via nvidia-peermem works */
	NF_ENV_DMABUF_OFF, /* NCCL_DMABUF_ENABLE set by environment to 0 */
	NF_ENV_IB_OFF,	   /* NCCL_IB_DISABLE set by environment to 1 */
	NF_ENV_GDR_LEVEL,
	NF_NO_IB_DEVICE, /* "NET/IB : No device found." */
	NF_INIT,	 /* init reached the point where the DMA-BUF check prints */
	NF__COUNT
};

struct gdr_nccl_line {
	unsigned long lineno; /* 0: never seen */
	char text[240];
};

#define GDR_NCCL_MAX_PROCS 64

struct gdr_nccl_proc {
	char id[96]; /* "host:pid" as the log prints it; "" when lines carry no prefix */
	int dev;     /* CUDA device in "[N]", -1 when absent */
	unsigned int chan_net, chan_gdr;
	int gpu_dmabuf;
};

struct gdr_nccl_log {
	unsigned long lines, nccl_lines;
	char version[48];	    /* "2.21.5+cuda12.4" */
	int vmajor, vminor, vpatch; /* -1 when unknown */
	char network[64];	    /* "IB", "Socket", "IBext_v8", "Libfabric" */
	char chan_net[64];	    /* transport named in the network channel lines */
	char plugin[160];
	char gdr_level[16];
	char distance[48]; /* last "distance X <= Y" seen */
	unsigned int count[NF__COUNT];
	struct gdr_nccl_line first[NF__COUNT];
	struct gdr_nccl_proc procs[GDR_NCCL_MAX_PROCS];
	unsigned int nprocs, procs_dropped;
	/* Conclusion. */
	enum gdr_nccl_path path;
	char reason[400];
	enum gdr_nccl_fact cited[4];
	unsigned int ncited;
};

void gdr_nccl_log_init(struct gdr_nccl_log *log);
/* Feed one line (with or without its newline). */
void gdr_nccl_log_line(struct gdr_nccl_log *log, const char *line);
/* Draw the conclusion from what was fed. */
void gdr_nccl_log_finish(struct gdr_nccl_log *log);
/* Init, feed every line of in, finish. 0 or -errno (read error). */
int gdr_nccl_log_read(FILE *in, struct gdr_nccl_log *log);

/* Is it an NCCL log at all? */
int gdr_nccl_log_is_nccl(const struct gdr_nccl_log *log);
const char *gdr_nccl_path_name(enum gdr_nccl_path p);

void gdr_nccl_log_print(FILE *out, const struct gdr_nccl_log *log, const char *name);
/* One JSON object with trailing newline. */
void gdr_nccl_log_json(FILE *out, const struct gdr_nccl_log *log, const char *name);

#endif
