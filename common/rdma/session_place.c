/*
 * Placement: the topology (loaded once), -d auto and --gpu auto, the NIC's
 * address that steers rdma_cm to -d, and this process near the NIC.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "session_int.h"
#include "text.h"
#include "util.h"

struct gdr_topo *gdr_sess_topo(struct sess *s)
{
	char why[256];

	if (!s->topo_tried) {
		s->topo_tried = 1;
		if (gdr_topo_load(&s->topo_t, s->o->topology_xml, NULL, why, sizeof(why))) {
			if (s->o->topology_xml)
				gdr_err("--topology-xml %s", why);
			else
				printf("topology: unknown (%s)\n", why);
			s->topo_t = NULL;
		}
	}
	return s->topo_t;
}

/* The one line that explains the numbers: GPU-NIC PCIe distance and NCCL's verdict. */
void gdr_sess_describe_topology(struct sess *s)
{
	struct gdr_topo *t = gdr_sess_topo(s);
	struct gdr_nccl_env nenv;
	char why[256], line[1024], safe[4 * sizeof(line) + 1];

	if (!t)
		return;
	if (gdr_topo_pair(t, s->gpu.bus_id, s->conn.nic, &s->topo) == 0) {
		s->have_topo = 1;
		if (!s->topo.gpu_name[0])
			gdr_strlcpy(s->topo.gpu_name, s->gpu.name, sizeof(s->topo.gpu_name));
		if (gdr_nccl_env_load(&nenv, why, sizeof(why))) {
			gdr_warn("%s", why);
			memset(&nenv, 0, sizeof(nenv));
			gdr_nccl_parse_level(NULL, &nenv.level, why, sizeof(why));
			gdr_nccl_parse_read(NULL, &nenv.read, why, sizeof(why));
		}
		/* Names come from the XML or the driver: control bytes are shown as \xHH. */
		gdr_topo_describe(&s->topo, &nenv, line, sizeof(line));
		printf("%s\n", gdr_text_safe(line, safe, sizeof(safe)));
	}
}

static int nic_ok(const char *nic, void *arg)
{
	return gdr_nic_port_active(nic, *(int *)arg);
}

/* -d auto, --gpu auto, and the NIC's address that steers rdma_cm to -d: into s->ep. */
int gdr_sess_place(struct sess *s)
{
	struct gdr_endpoint *ep = &s->ep;
	int auto_gpu = ep->gpu && !strcmp(ep->gpu, "auto");
	int auto_dev = (ep->dev && !strcmp(ep->dev, "auto")) || (!ep->dev && ep->gpu && !auto_gpu);
	struct gdr_topo_pair p;
	struct gdr_topo *t;
	char why[256];

	if (auto_gpu) {
		if (!ep->dev || !strcmp(ep->dev, "auto")) {
			snprintf(s->why, WHY, "--gpu auto needs -d NAME (the NIC to be near)");
			return -EINVAL;
		}
		t = gdr_sess_topo(s);
		if (!t || gdr_topo_nearest_gpu(t, ep->dev, &p)) {
			snprintf(s->why, WHY,
				 "--gpu auto: no GPU found in the topology to pair with %s",
				 ep->dev);
			return -ENOENT;
		}
		gdr_strlcpy(ep->gpu_buf, p.gpu_bus_id, sizeof(ep->gpu_buf));
		printf("placement: GPU %s is the nearest to %s (%s)\n", p.gpu_bus_id, ep->dev,
		       gdr_topo_class_name(p.cls));
	} else if (auto_dev) {
		/*
		 * Without the GPU or a NIC near it, rdma_cm still picks a NIC: the GPU
		 * paths then skip with their own reason and host still runs.
		 */
		gdr_sess_ensure_cuda(s);
		if (!s->cuda) {
			gdr_warn("-d auto: %s: rdma_cm picks the NIC (give -d NAME)", s->cuda_why);
			return 0;
		}
		t = gdr_sess_topo(s);
		if (!t || gdr_topo_nearest_nic(t, s->gpu.bus_id, nic_ok, &ep->ib_port, &p)) {
			gdr_warn(
			    "-d auto: no active RDMA NIC found near GPU %s: rdma_cm picks the NIC "
			    "(give -d NAME)",
			    s->gpu.bus_id);
			return 0;
		}
		gdr_strlcpy(ep->dev_buf, p.nic, sizeof(ep->dev_buf));
		ep->dev = ep->dev_buf;
		printf("placement: %s is the nearest active NIC to GPU %d (%s): %s\n", ep->dev,
		       s->gpu.ordinal, s->gpu.bus_id, gdr_topo_class_name(p.cls));
	}
	if (ep->dev && !ep->bind_addr) {
		if (gdr_nic_ipv4(ep->dev, ep->ib_port, ep->bind_buf, sizeof(ep->bind_buf), why,
				 sizeof(why)) == 0) {
			ep->bind_addr = ep->bind_buf;
			gdr_dbg("%s: using its address %s", ep->dev, ep->bind_buf);
		} else {
			gdr_dbg("%s", why);
		}
	}
	return 0;
}

/* Host buffers and this process near the NIC, unless --no-bind. */
void gdr_sess_bind_near_nic(struct sess *s)
{
	const struct gdr_topo_nic *nic;
	struct gdr_topo *t;
	char why[256];

	if (s->o->no_bind || s->o->topology_xml || getenv("HWLOC_XMLFILE"))
		return;
	t = gdr_sess_topo(s);
	nic = t ? gdr_topo_find_nic(t, s->conn.nic) : NULL;
	if (!nic || nic->numa < 0)
		return;
	if (gdr_topo_bind_numa(t, nic->numa, why, sizeof(why)))
		gdr_warn("cannot bind to %s's NUMA node %d: %s (--no-bind to silence)", s->conn.nic,
			 nic->numa, why);
	else
		printf("placement: bound to NUMA node %d (%s's)\n", nic->numa, s->conn.nic);
}
