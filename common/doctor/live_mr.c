/*
 * RDMA MRs as iproute2 prints them: `rdma -j res show mr` (rdma/res-mr.c,
 * from the kernel's RDMA_NLDEV_CMD_RES_MR_GET dump) is one JSON array with
 * an object per MR: "ifindex", "ifname", "mrn", "rkey"/"lkey"/"iova" (hex
 * strings, only with CAP_NET_ADMIN), "mrlen", "pdn", "pid" and "comm".
 * "pid" is the registering thread's id as seen from rdma's PID namespace
 * (task_pid_vnr): absent for a kernel user's MR, whose "comm" is then the
 * kernel user's name, and absent with no "comm" for a thread outside that
 * namespace. No attribute says how an MR's memory is backed.
 */
#include "config.h"

#include "json_read.h"
#include "live.h"
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gdr_live_mrs_free(struct gdr_live_mrs *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static int push(struct gdr_live_mrs *m, const struct gdr_live_mr *mr)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct gdr_live_mr *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = *mr;
	return 0;
}

static int uint_member(const struct gdr_json *o, const char *key, uint64_t max, uint64_t *v)
{
	const struct gdr_json *j = gdr_json_get(o, key);

	if (!j)
		return -ENOENT;
	if (j->type != GDR_JSON_NUMBER || !j->is_uint || j->u > max)
		return -EINVAL;
	*v = j->u;
	return 0;
}

static int one_mr(const struct gdr_json *o, struct gdr_live_mr *mr, char *why, size_t wlen,
		  size_t idx)
{
	const struct gdr_json *name = gdr_json_get(o, "ifname"), *comm = gdr_json_get(o, "comm");
	uint64_t v;
	int r;

	memset(mr, 0, sizeof(*mr));
	if (o->type != GDR_JSON_OBJECT || !name || name->type != GDR_JSON_STRING) {
		snprintf(why, wlen, "MR %zu: no \"ifname\"", idx);
		return -EINVAL;
	}
	gdr_text_safe(name->str, mr->dev, sizeof(mr->dev));
	if (uint_member(o, "mrlen", UINT64_MAX, &mr->len)) {
		snprintf(why, wlen, "MR %zu: no \"mrlen\" (a byte count)", idx);
		return -EINVAL;
	}
	r = uint_member(o, "mrn", UINT32_MAX, &v);
	if (r == -EINVAL) {
		snprintf(why, wlen, "MR %zu: \"mrn\" is not a number", idx);
		return r;
	}
	mr->mrn = r ? 0 : (uint32_t)v;
	r = uint_member(o, "pid", INT32_MAX, &v);
	if (r == -EINVAL) {
		snprintf(why, wlen, "MR %zu: \"pid\" is not a process id", idx);
		return r;
	}
	mr->pid = r ? 0 : (uint32_t)v;
	if (comm && comm->type == GDR_JSON_STRING)
		gdr_text_safe(comm->str, mr->comm, sizeof(mr->comm));
	return 0;
}

int gdr_live_mr_parse(const char *json, size_t len, struct gdr_live_mrs *m, char *why, size_t wlen)
{
	struct gdr_json *root;
	size_t idx = 0;
	int r;

	memset(m, 0, sizeof(*m));
	r = gdr_json_parse(json, len, &root, why, wlen);
	if (r)
		return r;
	if (root->type != GDR_JSON_ARRAY) {
		snprintf(why, wlen, "not a JSON array of MRs");
		gdr_json_free(root);
		return -EINVAL;
	}
	for (const struct gdr_json *o = root->child; o; o = o->next, idx++) {
		struct gdr_live_mr mr;

		r = one_mr(o, &mr, why, wlen, idx);
		if (!r)
			r = push(m, &mr);
		if (r) {
			gdr_live_mrs_free(m);
			gdr_json_free(root);
			return r;
		}
	}
	gdr_json_free(root);
	return 0;
}
