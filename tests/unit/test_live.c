/*
 * gdr_doctor --live: the parsers on text in the kernel's (and iproute2's)
 * exact formats, and the whole check on the fixture roots of
 * tests/doctor/gen-live-roots.py: both paths in use, DMA-BUF only, peer
 * memory only, neither, and each source missing.
 */
#include "cmocka_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "exit_status.h"
#include "input.h"
#include "json_read.h"
#include "live.h"

/* Captured in the Soft-RoCE VM (Debian 6.1.0-57): vivid's buffer, imported by vgem, fd closed. */
static const char bufinfo_vm[] =
    "\n"
    "Dma-buf Objects:\n"
    "size    \tflags   \tmode    \tcount   \texp_name\tino     \tname\n"
    "00462848\t00000002\t00080007\t00000003\tvideobuf2_vmalloc\t00000001\t<none>\n"
    "\tAttached Devices:\n"
    "\tvgem\n"
    "Total 1 devices attached\n"
    "\n"
    "\n"
    "Total 1 objects, 462848 bytes\n";

/* Captured there too: two gdr_write_bw processes on rxe0. */
static const char mr_vm[] =
    "[{\"ifindex\":0,\"ifname\":\"rxe0\",\"mrn\":0,\"rkey\":\"0\",\"lkey\":\"263\","
    "\"mrlen\":83968,\"pdn\":2,\"pid\":199,\"comm\":\"gdr_write_bw\"},{\"ifindex\":0,"
    "\"ifname\":\"rxe0\",\"mrn\":1,\"rkey\":\"0\",\"lkey\":\"3e6\",\"mrlen\":83968,\"pdn\":4,"
    "\"pid\":192,\"comm\":\"gdr_write_bw\"},{\"ifindex\":0,\"ifname\":\"rxe0\",\"mrn\":3,"
    "\"rkey\":\"0\",\"lkey\":\"6d2\",\"mrlen\":2097152,\"pdn\":2,\"pid\":199,\"comm\":"
    "\"gdr_write_bw\"},{\"ifindex\":0,\"ifname\":\"rxe0\",\"mrn\":5,\"rkey\":\"751\","
    "\"lkey\":\"751\",\"mrlen\":2097152,\"pdn\":4,\"pid\":192,\"comm\":\"gdr_write_bw\"}]\n";

static void test_json_read(void **state)
{
	struct gdr_json *j;
	const struct gdr_json *m;
	char why[128];

	(void)state;
	assert_int_equal(gdr_json_parse("{\"a\": [1, -2, 3.5, 18446744073709551615], \"s\": "
					"\"x\\u00e9\\ud83d\\ude00\\n\", \"t\": true, \"n\": null}",
					strlen("{\"a\": [1, -2, 3.5, 18446744073709551615], \"s\": "
					       "\"x\\u00e9\\ud83d\\ude00\\n\", \"t\": true, "
					       "\"n\": null}"),
					&j, why, sizeof(why)),
			 0);
	m = gdr_json_get(j, "a");
	assert_non_null(m);
	assert_int_equal(m->type, GDR_JSON_ARRAY);
	assert_true(m->child->is_uint);
	assert_false(m->child->next->is_uint);
	assert_true(m->child->next->num == -2);
	assert_false(m->child->next->next->is_uint);
	assert_true(m->child->next->next->next->is_uint);
	assert_true(m->child->next->next->next->u == UINT64_MAX);
	assert_string_equal(gdr_json_get(j, "s")->str, "x\xc3\xa9\xf0\x9f\x98\x80\n");
	assert_int_equal(gdr_json_get(j, "t")->type, GDR_JSON_TRUE);
	assert_int_equal(gdr_json_get(j, "n")->type, GDR_JSON_NULL);
	assert_null(gdr_json_get(j, "missing"));
	gdr_json_free(j);
	/* Errors say where; nothing leaks (ASan run). */
	assert_int_equal(gdr_json_parse("[1, 2", 5, &j, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "byte 5"));
	assert_int_equal(gdr_json_parse("[1] x", 5, &j, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_json_parse("{\"a\" 1}", 7, &j, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_json_parse("\"\\q\"", 4, &j, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_json_parse("", 0, &j, why, sizeof(why)), -EINVAL);
	{
		char deep[200];

		memset(deep, '[', 100);
		memset(deep + 100, ']', 100);
		assert_int_equal(gdr_json_parse(deep, sizeof(deep), &j, why, sizeof(why)), -E2BIG);
	}
}

static void test_bufinfo_real(void **state)
{
	struct gdr_live_bufs b;
	char why[128];

	(void)state;
	assert_int_equal(gdr_live_bufinfo_parse(bufinfo_vm, &b, why, sizeof(why)), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.v[0].size, 462848);
	assert_string_equal(b.v[0].exp_name, "videobuf2_vmalloc");
	assert_int_equal(b.v[0].ino, 1);
	assert_int_equal(b.v[0].count, 3);
	assert_string_equal(b.v[0].name, ""); /* "<none>" */
	assert_int_equal(b.v[0].nattach, 1);
	assert_string_equal(b.v[0].attach[0], "vgem");
	assert_false(gdr_live_nvidia_exporter(b.v[0].exp_name));
	gdr_live_bufs_free(&b);
}

/* Both NVIDIA exporter names, a fence line, a name, a buffer with no attachment. */
static void test_bufinfo_forms(void **state)
{
	static const char text[] =
	    "\nDma-buf Objects:\n"
	    "size    \tflags   \tmode    \tcount   \texp_name\tino     \tname\n"
	    "33554432\t00000002\t00080007\t00000001\tnv_dmabuf\t00000017\t<none>\n"
	    "\twrite fence:drm_sched gfx_0.0.0 seq 4711 signalled\n"
	    "\tAttached Devices:\n"
	    "\t0000:3b:00.0\n"
	    "\t0000:86:00.0\n"
	    "Total 2 devices attached\n\n"
	    "02097152\t00000002\t00080007\t00000002\tnvidia\t00000018\tnccl\tbuf\n"
	    "\tAttached Devices:\n"
	    "Total 0 devices attached\n\n"
	    "\nTotal 2 objects, 35651584 bytes\n";
	/* Before 5.3: no ino, no name. */
	static const char old[] =
	    "\nDma-buf Objects:\nsize\tflags\tmode\tcount\texp_name\n"
	    "00004096\t00000002\t00000007\t00000001\tnvidia\n"
	    "\tAttached Devices:\n\t0000:3b:00.0\nTotal 1 devices attached\n\n"
	    "\nTotal 1 objects, 4096 bytes\n";
	struct gdr_live_bufs b;
	char why[128];

	(void)state;
	assert_int_equal(gdr_live_bufinfo_parse(text, &b, why, sizeof(why)), 0);
	assert_int_equal(b.n, 2);
	assert_true(gdr_live_nvidia_exporter(b.v[0].exp_name));
	assert_true(gdr_live_nvidia_exporter(b.v[1].exp_name));
	assert_int_equal(b.v[0].nattach, 2);
	assert_string_equal(b.v[0].attach[1], "0000:86:00.0");
	assert_int_equal(b.v[1].nattach, 0);
	assert_string_equal(b.v[1].name, "nccl\tbuf");
	gdr_live_bufs_free(&b);
	assert_int_equal(gdr_live_bufinfo_parse(old, &b, why, sizeof(why)), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.v[0].nattach, 1);
	gdr_live_bufs_free(&b);
	/* Not bufinfo: refused with the line. */
	assert_int_equal(gdr_live_bufinfo_parse("hello\n", &b, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "line 1"));
	assert_int_equal(gdr_live_bufinfo_parse("\nDma-buf Objects:\nsize\tflags\n"
						"12x4\t00000002\t0\t1\tnvidia\n",
						&b, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(gdr_live_bufinfo_parse("", &b, why, sizeof(why)), -EINVAL);
}

static void test_mr_parse(void **state)
{
	static const char pretty[] = "[ {\n        \"ifindex\": 0,\n        \"ifname\": \"rxe0\",\n"
				     "        \"mrn\": 0,\n        \"mrlen\": 83968,\n"
				     "        \"pdn\": 2,\n        \"pid\": 199,\n"
				     "        \"comm\": \"gdr_write_bw\"\n    } ]\n";
	static const char kernel_and_hidden[] =
	    "[{\"ifindex\":0,\"ifname\":\"mlx5_0\",\"mrn\":0,\"mrlen\":4096,\"comm\":\"nvme_rdma\"}"
	    ","
	    "{\"ifindex\":0,\"ifname\":\"mlx5_0\",\"mrn\":3,\"mrlen\":33554432,\"pdn\":5}]";
	struct gdr_live_mrs m;
	char why[128];

	(void)state;
	assert_int_equal(gdr_live_mr_parse(mr_vm, strlen(mr_vm), &m, why, sizeof(why)), 0);
	assert_int_equal(m.n, 4);
	assert_string_equal(m.v[0].dev, "rxe0");
	assert_int_equal(m.v[0].len, 83968);
	assert_int_equal(m.v[0].pid, 199);
	assert_int_equal(m.v[3].mrn, 5);
	assert_string_equal(m.v[3].comm, "gdr_write_bw");
	gdr_live_mrs_free(&m);
	assert_int_equal(gdr_live_mr_parse(pretty, strlen(pretty), &m, why, sizeof(why)), 0);
	assert_int_equal(m.n, 1);
	gdr_live_mrs_free(&m);
	assert_int_equal(
	    gdr_live_mr_parse(kernel_and_hidden, strlen(kernel_and_hidden), &m, why, sizeof(why)),
	    0);
	assert_int_equal(m.v[0].pid, 0);
	assert_string_equal(m.v[0].comm, "nvme_rdma");
	assert_int_equal(m.v[1].pid, 0);
	assert_string_equal(m.v[1].comm, "");
	gdr_live_mrs_free(&m);
	assert_int_equal(gdr_live_mr_parse("[]\n", 3, &m, why, sizeof(why)), 0);
	assert_int_equal(m.n, 0);
	/* Not rdma's list. */
	assert_int_equal(gdr_live_mr_parse("{}", 2, &m, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_live_mr_parse("[{\"ifname\":\"x\"}]", 16, &m, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "mrlen"));
	assert_int_equal(
	    gdr_live_mr_parse("[{\"ifname\":\"x\",\"mrlen\":-1}]", 27, &m, why, sizeof(why)),
	    -EINVAL);
	assert_int_equal(gdr_live_mr_parse("[{\"ifname\":\"x\",\"mrlen\":1,\"pid\":\"a\"}]", 35, &m,
					   why, sizeof(why)),
			 -EINVAL);
}

static void test_status_and_nccl(void **state)
{
	static const char status[] = "Name:\tNCCL Service  0\nUmask:\t0022\nTgid:\t4242\n"
				     "Pid:\t4250\nVmPin:\t    4096 kB\n";
	static const char lib[] = "\x7f"
				  "ELF\0\0NCCL version \0NCCL version 2.27.3+cuda12.9\0\0";
	char v[64];

	(void)state;
	assert_int_equal(gdr_live_status_field(status, "Name", v, sizeof(v)), 0);
	assert_string_equal(v, "NCCL Service  0");
	assert_int_equal(gdr_live_status_field(status, "VmPin", v, sizeof(v)), 0);
	assert_string_equal(v, "4096 kB");
	assert_int_equal(gdr_live_status_field(status, "Tgid", v, sizeof(v)), 0);
	assert_string_equal(v, "4242");
	assert_int_equal(gdr_live_status_field(status, "VmLck", v, sizeof(v)), -ENOENT);
	/* The bare words (a log format string) are skipped; the version after them is taken. */
	assert_int_equal(gdr_live_nccl_version(lib, sizeof(lib) - 1, v, sizeof(v)), 0);
	assert_string_equal(v, "2.27.3+cuda12.9");
	assert_int_equal(gdr_live_nccl_version("NCCL version %s", 15, v, sizeof(v)), -ENOENT);
}

/* ---- the whole check on the fixture roots ---------------------------------------------- */

static const char *root_of(const char *name, char *buf, size_t len)
{
	const char *top = getenv("top_srcdir");

	snprintf(buf, len, "%s/tests/doctor/roots/%s", top ? top : ".", name);
	return buf;
}

/* gather for root NAME with live-mr/MR.json (NULL: none). */
static struct gdr_live *gather(const char *name, const char *mr)
{
	struct gdr_live *l = malloc(sizeof(*l));
	char root[4096], path[4096], *json = NULL;
	const char *top = getenv("top_srcdir");
	size_t len = 0;

	assert_non_null(l);
	if (mr) {
		snprintf(path, sizeof(path), "%s/tests/doctor/live-mr/%s.json", top ? top : ".",
			 mr);
		assert_int_equal(gdr_input_read_all(path, 1u << 20, &json, &len), 0);
	}
	gdr_live_init(l, root_of(name, root, sizeof(root)));
	/* The root string must outlive the check: keep a copy. */
	l->root = strdup(root);
	gdr_live_gather(l, json, len, mr);
	free(json);
	return l;
}

static void done(struct gdr_live *l)
{
	free((char *)l->root);
	gdr_live_free(l);
	free(l);
}

static const struct gdr_live_proc *proc(const struct gdr_live *l, int pid)
{
	for (int i = 0; i < l->nprocs; i++)
		if (l->procs[i].pid == pid)
			return &l->procs[i];
	return NULL;
}

static void test_both(void **state)
{
	struct gdr_live *l = gather("live-both", "live-both");
	const struct gdr_live_proc *a, *b;
	char why[128];

	(void)state;
	assert_int_equal(l->dmabuf, 1);
	assert_int_equal(l->peermem, 1);
	assert_string_equal(gdr_live_in_use(l), "both");
	assert_non_null(strstr(l->verdict, "BOTH"));
	assert_non_null(strstr(l->warning, "slower can silently win"));
	assert_int_equal(l->nv_attached, 4);
	assert_int_equal(l->nv_attached_bytes, 128u << 20);
	assert_int_equal(l->ndevs, 2);
	assert_string_equal(l->devs[0].rdma, "mlx5_0");
	assert_string_equal(l->devs[1].rdma, "mlx5_1");
	/* nv_mem: 10 - 8 MRs, 320 - 256 MiB; nv_mem_nc 0; nvidia-fs is not nvidia-peermem's. */
	assert_int_equal(l->peer_mrs, 2);
	assert_int_equal(l->peer_bytes, 64 << 20);
	assert_int_equal(l->mrs_kernel, 1);
	assert_int_equal(l->mrs_hidden, 0);
	/* NCCL's proxy thread 4250 registered: the process is its Tgid 4242. */
	a = proc(l, 4242);
	b = proc(l, 5151);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(proc(l, 4250));
	assert_int_equal(a->nthreads, 1);
	assert_int_equal(a->threads[0], 4250);
	assert_int_equal(a->mrs, 5);
	assert_int_equal(a->mr_bytes, 132u << 20);
	assert_int_equal(a->ndev, 2);
	assert_int_equal(a->vmpin_kb, 4096);
	assert_true(a->cuda);
	assert_string_equal(a->nccl_version, "2.27.3+cuda12.9");
	assert_string_equal(a->nccl_env, "NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_DMABUF_ENABLE=1");
	assert_string_equal(a->command, "python3");
	assert_string_equal(a->cmdline, "python3 train.py --nnodes 2");
	assert_string_equal(b->nccl_version, "2.18.5+cuda12.2");
	assert_int_equal(b->mr_bytes, 66u << 20);
	/* The split: 132 - 4 MiB on dma-bufs for the trainer, nothing for the legacy job. */
	assert_int_equal(l->est_dmabuf, 128 << 20);
	for (int i = 0; i < GDR_LIVE_SRC_N; i++)
		assert_int_equal(l->src[i].state, GDR_LIVE_SRC_READ);
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_DMABUF, why, sizeof(why)), GDR_EXIT_FAIL);
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_PEERMEM, why, sizeof(why)), GDR_EXIT_FAIL);
	done(l);
}

static void test_dmabuf_only(void **state)
{
	struct gdr_live *l = gather("live-dmabuf", "live-dmabuf");
	char why[128];

	(void)state;
	assert_int_equal(l->dmabuf, 1);
	assert_int_equal(l->peermem, 0);
	assert_string_equal(gdr_live_in_use(l), "dmabuf");
	/* The older driver's exporter name; one buffer on mlx5's data-direct function. */
	assert_string_equal(l->bufs.v[0].exp_name, "nvidia");
	assert_int_equal(l->ndevs, 2);
	assert_string_equal(l->devs[0].rdma, "mlx5_0");
	assert_string_equal(l->devs[1].dev, "0000:3c:00.1");
	assert_string_equal(l->devs[1].rdma, "");
	assert_non_null(strstr(l->dmabuf_line, "data-direct"));
	assert_int_equal(l->src[GDR_LIVE_SRC_PEERS].state, GDR_LIVE_SRC_NOT_NEEDED);
	assert_int_equal(l->src[GDR_LIVE_SRC_REFCNT].state, GDR_LIVE_SRC_NOT_NEEDED);
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_DMABUF, why, sizeof(why)), GDR_EXIT_OK);
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_PEERMEM, why, sizeof(why)), GDR_EXIT_FAIL);
	done(l);
}

static void test_peermem_only(void **state)
{
	struct gdr_live *l = gather("live-peermem", "live-peermem");
	const struct gdr_live_proc *probe, *legacy;
	char why[128];

	(void)state;
	assert_int_equal(l->dmabuf, 0);
	assert_int_equal(l->peermem, 1);
	assert_string_equal(gdr_live_in_use(l), "peermem");
	/* An exported buffer nobody attached is not in use; its holder is found by its fd. */
	assert_int_equal(l->nv_bufs, 1);
	assert_int_equal(l->nv_attached, 0);
	probe = proc(l, 6060);
	assert_non_null(probe);
	assert_int_equal(probe->mrs, 0);
	assert_int_equal(probe->ndmabuf, 1);
	assert_int_equal(probe->fds[0].fd, 7);
	assert_string_equal(probe->fds[0].exp_name, "nv_dmabuf");
	assert_int_equal(probe->fds[0].ino, 31);
	/* environ unreadable: said so, never "no NCCL_* set". */
	legacy = proc(l, 5151);
	assert_int_equal(legacy->environ_err, -ENOENT);
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_DMABUF, why, sizeof(why)), GDR_EXIT_FAIL);
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_PEERMEM, why, sizeof(why)), GDR_EXIT_OK);
	done(l);
}

static void test_neither(void **state)
{
	struct gdr_live *l = gather("live-neither", "live-neither");
	const struct gdr_live_proc *p;

	(void)state;
	assert_int_equal(l->dmabuf, 0);
	assert_int_equal(l->peermem, 0);
	assert_string_equal(gdr_live_in_use(l), "none");
	assert_int_equal(l->gpu_procs_no_gdr, 1);
	assert_non_null(strstr(l->verdict, "GPUDirect RDMA is off"));
	p = proc(l, 7070);
	assert_non_null(p);
	/* VmPin (32852 kB) covers the host MRs' pages: no DMA-BUF in the estimate. */
	assert_int_equal(p->mr_bytes, 83968 + 33554432);
	assert_int_equal(l->est_dmabuf, 0);
	done(l);
}

static void test_no_debugfs(void **state)
{
	struct gdr_live *l = gather("live-no-debugfs", "live-both");
	const struct gdr_live_src *s = &l->src[GDR_LIVE_SRC_BUFINFO];
	char why[128];

	(void)state;
	assert_int_equal(l->dmabuf, -1);
	assert_int_equal(l->peermem, 1);
	assert_null(gdr_live_in_use(l));
	assert_int_equal(s->state, GDR_LIVE_SRC_MISSING);
	assert_non_null(strstr(s->detail, "debugfs is not mounted"));
	assert_non_null(strstr(s->how, "mount -t debugfs"));
	assert_non_null(strstr(s->how, "hostPath"));
	assert_non_null(strstr(s->adds, "attached"));
	/* The processes' estimate still says some DMA-BUF, as an estimate. */
	assert_int_equal(l->est_dmabuf, 128 << 20);
	assert_non_null(strstr(l->dmabuf_line, "estimate"));
	/* Peer memory in use is enough to fail the DMA-BUF gate; the other gate cannot decide. */
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_DMABUF, why, sizeof(why)), GDR_EXIT_FAIL);
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_PEERMEM, why, sizeof(why)),
			 GDR_EXIT_UNDECIDED);
	done(l);
}

static void test_no_memory_peers(void **state)
{
	struct gdr_live *l = gather("live-no-memory-peers", NULL);

	(void)state;
	/* refcnt alone: the MRs are known, their bytes not. */
	assert_int_equal(l->peermem, 1);
	assert_int_equal(l->peer_mrs, 2);
	assert_int_equal(l->peer_bytes, -1);
	assert_int_equal(l->src[GDR_LIVE_SRC_PEERS].state, GDR_LIVE_SRC_MISSING);
	assert_non_null(strstr(l->src[GDR_LIVE_SRC_PEERS].how, "OFED"));
	assert_int_equal(l->src[GDR_LIVE_SRC_REFCNT].state, GDR_LIVE_SRC_READ);
	assert_non_null(strstr(l->peer_line, "bytes not known"));
	done(l);
}

static void test_no_refcnt(void **state)
{
	struct gdr_live *l = gather("live-no-refcnt", NULL);
	char why[128];

	(void)state;
	assert_int_equal(l->peermem, -1);
	assert_int_equal(l->dmabuf, 0);
	assert_int_equal(l->src[GDR_LIVE_SRC_REFCNT].state, GDR_LIVE_SRC_MISSING);
	assert_non_null(strstr(l->src[GDR_LIVE_SRC_REFCNT].how, "CONFIG_MODULE_UNLOAD"));
	assert_int_equal(gdr_live_expect(l, GDR_EXPECT_DMABUF, why, sizeof(why)),
			 GDR_EXIT_UNDECIDED);
	assert_non_null(strstr(why, "cannot decide"));
	done(l);
}

static void test_no_rdma_mr(void **state)
{
	struct gdr_live *l = gather("live-both", NULL);
	const struct gdr_live_src *s = &l->src[GDR_LIVE_SRC_MRS];

	(void)state;
	/* The node's answer stands; the processes are not known. */
	assert_string_equal(gdr_live_in_use(l), "both");
	assert_int_equal(s->state, GDR_LIVE_SRC_MISSING);
	assert_non_null(strstr(s->how, "--rdma-mr"));
	assert_non_null(strstr(s->how, "rdma -j res show mr"));
	assert_int_equal(l->nprocs, 0);
	assert_int_equal(l->est_dmabuf, -1);
	done(l);
}

static void test_no_hostpid(void **state)
{
	struct gdr_live *l = gather("live-no-hostpid", "live-no-hostpid");
	const struct gdr_live_src *s = &l->src[GDR_LIVE_SRC_PROCS];

	(void)state;
	assert_int_equal(l->dmabuf, 1);
	assert_int_equal(l->mrs_hidden, 5);
	assert_int_equal(l->nprocs, 0);
	assert_false(l->host_pidns);
	assert_int_equal(s->state, GDR_LIVE_SRC_PARTIAL);
	assert_non_null(strstr(s->how, "hostPID"));
	done(l);
}

/* Every output of every case is whole: JSON parses, NFD labels are name=value. */
static void test_outputs_parse(void **state)
{
	static const char *const cases[][2] = {
		{ "live-both", "live-both" },	    { "live-dmabuf", "live-dmabuf" },
		{ "live-peermem", "live-peermem" }, { "live-neither", "live-neither" },
		{ "live-no-debugfs", "live-both" }, { "live-no-memory-peers", NULL },
		{ "live-no-refcnt", NULL },	    { "live-no-hostpid", "live-no-hostpid" },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct gdr_live *l = gather(cases[c][0], cases[c][1]);
		char *buf = NULL, why[128];
		size_t len = 0;
		struct gdr_json *j;
		FILE *f = open_memstream(&buf, &len);

		gdr_live_json(f, l);
		fclose(f);
		assert_int_equal(gdr_json_parse(buf, len, &j, why, sizeof(why)), 0);
		gdr_json_free(j);
		free(buf);
		done(l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_read),	cmocka_unit_test(test_bufinfo_real),
		cmocka_unit_test(test_bufinfo_forms),	cmocka_unit_test(test_mr_parse),
		cmocka_unit_test(test_status_and_nccl), cmocka_unit_test(test_both),
		cmocka_unit_test(test_dmabuf_only),	cmocka_unit_test(test_peermem_only),
		cmocka_unit_test(test_neither),		cmocka_unit_test(test_no_debugfs),
		cmocka_unit_test(test_no_memory_peers), cmocka_unit_test(test_no_refcnt),
		cmocka_unit_test(test_no_rdma_mr),	cmocka_unit_test(test_no_hostpid),
		cmocka_unit_test(test_outputs_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
