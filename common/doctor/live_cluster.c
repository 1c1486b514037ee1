/*
 * gdr_doctor --live for a cluster (docs/cluster-outputs.md): what is in use
 * as NFD labels and as Prometheus gauges, written through the same writers
 * as the node check's. A fact the check does not have is left out, never
 * guessed: with bufinfo missing there is no DMA-BUF label and no DMA-BUF
 * sample.
 */
#include "config.h"

#include "live.h"
#include "prom.h"

#include <stdint.h>
#include <stdio.h>

void gdr_live_nfd(FILE *out, const struct gdr_live *l)
{
	const char *use = gdr_live_in_use(l);

	if (use)
		fprintf(out, "gdrperf.gdr-in-use=%s\n", use);
	if (l->dmabuf >= 0)
		fprintf(out, "gdrperf.dmabuf-in-use=%s\n", l->dmabuf ? "true" : "false");
	if (l->peermem >= 0)
		fprintf(out, "gdrperf.peermem-in-use=%s\n", l->peermem ? "true" : "false");
}

static const char *src_state(enum gdr_live_src_state s)
{
	return s == GDR_LIVE_SRC_READ	      ? "read"
	       : s == GDR_LIVE_SRC_NOT_NEEDED ? "not-needed"
	       : s == GDR_LIVE_SRC_PARTIAL    ? "partial"
					      : "missing";
}

static void by_path(struct gdr_prom *p, struct gdr_prom_label *lb, const char *name,
		    const char *help, int64_t dmabuf, int64_t peermem)
{
	gdr_prom_family(p, name, help);
	lb[1] = (struct gdr_prom_label){ "path", "dmabuf" };
	if (dmabuf >= 0)
		gdr_prom_sample_u(p, lb, 2, (unsigned long long)dmabuf);
	lb[1] = (struct gdr_prom_label){ "path", "peermem" };
	if (peermem >= 0)
		gdr_prom_sample_u(p, lb, 2, (unsigned long long)peermem);
}

int gdr_live_prom(struct gdr_prom *p, const struct gdr_live *l)
{
	struct gdr_prom_label lb[4] = { { "host", l->host } };
	char pid[16];

	/* One family per fact, one sample per path; a value below 0 is not known: no sample. */
	by_path(p, lb, "gdrperf_live_in_use",
		"1 when the GPUDirect path registers GPU memory on the node now, 0 when not; no "
		"sample when not known.",
		l->dmabuf, l->peermem);
	by_path(p, lb, "gdrperf_live_mrs",
		"Live MRs on GPU memory by path: dmabuf, the attachments of NVIDIA dma-bufs (one "
		"per MR); peermem, nvidia-peermem's live MRs.",
		l->dmabuf < 0 ? -1 : (int64_t)l->nv_attachments, l->peer_mrs);
	by_path(p, lb, "gdrperf_live_bytes",
		"Bytes of GPU memory registered by path: dmabuf, the attached NVIDIA dma-bufs' "
		"sizes; peermem, nvidia-peermem's live registered bytes.",
		l->dmabuf < 0 ? -1 : (int64_t)l->nv_attached_bytes, l->peer_bytes);

	gdr_prom_family(p, "gdrperf_live_source",
			"1; whether the live check could read each source: read, not-needed, "
			"partial or missing.");
	for (int i = 0; i < GDR_LIVE_SRC_N; i++) {
		lb[1] = (struct gdr_prom_label){ "source", l->src[i].key };
		lb[2] = (struct gdr_prom_label){ "state", src_state(l->src[i].state) };
		gdr_prom_sample(p, lb, 3, "1");
	}

	gdr_prom_family(p, "gdrperf_live_process_mr_bytes",
			"Bytes of RDMA MRs a process holds on an RDMA device.");
	for (int i = 0; i < l->nprocs; i++) {
		const struct gdr_live_proc *q = &l->procs[i];

		snprintf(pid, sizeof(pid), "%d", q->pid);
		lb[1] = (struct gdr_prom_label){ "pid", pid };
		lb[2] = (struct gdr_prom_label){ "command", q->command };
		for (int d = 0; d < q->ndev; d++) {
			lb[3] = (struct gdr_prom_label){ "device", q->dev[d].dev };
			gdr_prom_sample_u(p, lb, 4, (unsigned long long)q->dev[d].bytes);
		}
	}

	gdr_prom_family(p, "gdrperf_live_process_dmabuf_bytes_estimate",
			"An estimate: a process's MR bytes minus its VmPin (an MR on a dma-buf "
			"pins no page of the process); no sample without VmPin.");
	for (int i = 0; i < l->nprocs; i++) {
		const struct gdr_live_proc *q = &l->procs[i];
		uint64_t pinned;

		if (!q->mrs || q->vmpin_kb < 0)
			continue;
		pinned = (uint64_t)q->vmpin_kb * 1024;
		snprintf(pid, sizeof(pid), "%d", q->pid);
		lb[1] = (struct gdr_prom_label){ "pid", pid };
		lb[2] = (struct gdr_prom_label){ "command", q->command };
		gdr_prom_sample_u(
		    p, lb, 3,
		    (unsigned long long)(q->mr_bytes > pinned ? q->mr_bytes - pinned : 0));
	}
	return p->err;
}
