/*
 * gpu_probe: what gdrperf's GPU code sees on a real GPU, no RDMA NIC needed.
 * Built and run by tests/gpu/run-on-gpu.sh; runs through common/mem/cuda_*.c, so it
 * also tests the loader against the real driver.
 *
 *   1. driver, cuGetProcAddress ABI, every GPU and its attributes
 *   2. cuMemGetHandleForAddressRange(DMA_BUF_FD) on buffers of several sizes
 *      and offsets: fd valid, lseek(fd, 0, SEEK_END) = exported size; the
 *      unaligned cases the fake driver refuses must be refused here too
 *   3. pinned H2D/D2H async copy bandwidth (whole and chunked on 2 streams,
 *      the bounce pipeline's shape), pageable for contrast, against the PCIe
 *      link's figure from sysfs
 *   4. in-order copies on one stream, event pending/complete, SYNC_MEMOPS
 *   5. each GPU path's skip reason on this machine
 *   also: the VMM/flush/ordering attributes and the UUID (selection by
 *   GPU-... and MIG-... finds the same GPU), the flush gdrperf does before
 *   --validate reads, and the backend's export in both allocators (cuMemAlloc,
 *   cuMemCreate) and both mapping types (default, PCIe), timed
 *
 * Lines start with "ok", "FAIL" or "info"; exit status 1 if any FAIL.
 * Usage: gpu_probe [--gpu N|BDF|UUID] [--quick] [--root DIR]
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda.h"
#include "mem.h"
#include "mem_gpu.h"
#include "util.h"

#define MiB (1024u * 1024u)

struct probe {
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	const char *root;
	int quick;
	int fails;
	int oks;
};

__attribute__((format(printf, 3, 4))) static void check(struct probe *p, int good, const char *fmt,
							...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("%s - %s\n", good ? "ok" : "FAIL", line);
	fflush(stdout);
	if (good)
		p->oks++;
	else
		p->fails++;
}

__attribute__((format(printf, 1, 2))) static void info(const char *fmt, ...)
{
	va_list ap;

	printf("info - ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ---- 1. driver and GPUs ---- */

static int probe_driver(struct probe *p, const char *spec)
{
	char why[512] = "";
	int version = 0, n = 0, ret;

	ret = gdr_cuda_load(&p->cu, why, sizeof(why));
	check(p, ret == 0, "load driver: %s", ret ? why : "loaded");
	if (ret)
		return ret;
	gdr_cuda_driver_version(p->cu, &version);
	info("CUDA driver %d.%d (%d), entry points through %s", version / 1000, version % 1000 / 10,
	     version, gdr_cuda_getproc_abi(p->cu));
	ret = gdr_cuda_device_count(p->cu, &n);
	check(p, ret == 0 && n > 0, "cuDeviceGetCount: %d", n);
	for (int i = 0; i < n; i++) {
		struct gdr_gpu g;

		ret = gdr_cuda_gpu_info(p->cu, i, &g, why, sizeof(why));
		check(p, ret == 0,
		      "GPU %d: %s, %s, %.1f GiB, DMA_BUF_SUPPORTED=%d, "
		      "GPU_DIRECT_RDMA_SUPPORTED=%d",
		      i, ret ? why : g.bus_id, g.name, (double)g.total_mem / (1 << 30),
		      g.dmabuf_supported, g.gdr_supported);
		/* -1 = the driver cannot report it: what gdrperf then says in its rows. */
		info("GPU %d: %s, GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED=%d, "
		     "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS=%d, GPU_DIRECT_RDMA_WRITES_ORDERING=%d",
		     i, g.uuid[0] ? g.uuid : "(no UUID)", g.vmm_gdr_supported, g.flush_options,
		     g.writes_ordering);
		check(p, ret != 0 || !strncmp(g.uuid, "GPU-", 4), "GPU %d: cuDeviceGetUuid_v2: %s",
		      i, g.uuid[0] ? g.uuid : "no UUID");
	}
	/* Selecting by bus id must find the same GPU as by ordinal. */
	ret = gdr_cuda_find_gpu(p->cu, spec, &p->gpu, why, sizeof(why));
	check(p, ret == 0, "find GPU '%s': %s", spec, ret ? why : p->gpu.bus_id);
	if (ret)
		return ret;
	{
		struct gdr_gpu again;
		char upper[32];

		for (size_t i = 0; i < sizeof(upper); i++)
			upper[i] = (char)(p->gpu.bus_id[i] >= 'a' && p->gpu.bus_id[i] <= 'f'
					      ? p->gpu.bus_id[i] - 32
					      : p->gpu.bus_id[i]);
		ret = gdr_cuda_find_gpu(p->cu, upper, &again, why, sizeof(why));
		check(p, ret == 0 && again.ordinal == p->gpu.ordinal, "find GPU by bus id '%s': %s",
		      upper, ret ? why : "same GPU");
	}
	/* --gpu=GPU-... and MIG-... (the same bytes) select the same GPU as its ordinal. */
	if (p->gpu.uuid[0]) {
		const char *prefix[] = { "", "MIG-" };

		for (size_t k = 0; k < GDR_ARRAY_SIZE(prefix); k++) {
			struct gdr_gpu again;
			char spec2[64];

			snprintf(spec2, sizeof(spec2), "%s%s", prefix[k],
				 k ? p->gpu.uuid + 4 : p->gpu.uuid);
			ret = gdr_cuda_find_gpu(p->cu, spec2, &again, why, sizeof(why));
			check(p, ret == 0 && again.ordinal == p->gpu.ordinal,
			      "find GPU by UUID '%s': %s", spec2, ret ? why : "same GPU");
		}
	}
	if (getenv("CUDA_VISIBLE_DEVICES"))
		info("CUDA_VISIBLE_DEVICES=%s: ordinals count the visible GPUs",
		     getenv("CUDA_VISIBLE_DEVICES"));
	ret = gdr_cuda_gpu_open(p->cu, &p->gpu, why, sizeof(why));
	check(p, ret == 0, "retain primary context of GPU %d: %s", p->gpu.ordinal,
	      ret ? why : "current");
	if (ret)
		return ret;
	{
		const char *how = "";
		int fr = gdr_cuda_flush_rdma_writes(p->cu, &p->gpu, &how);

		check(p, fr == 0 || fr == -EOPNOTSUPP, "flush of GPUDirect RDMA writes: %s%s%s",
		      how, fr && fr != -EOPNOTSUPP ? ": " : "",
		      fr && fr != -EOPNOTSUPP ? gdr_cuda_last_error(p->cu) : "");
	}
	return 0;
}

/* ---- 2. DMA-BUF export ---- */

enum expect { MUST_WORK, MUST_FAIL, EITHER };

/*
 * The size behind a DMA-BUF fd: a real one answers SEEK_END with its size,
 * and so does the fake's (a memfd of exactly the range). 1 when fd holds
 * len bytes; *size = what SEEK_END said.
 */
static int dmabuf_holds(int fd, size_t len, off_t *size)
{
	*size = lseek(fd, 0, SEEK_END);
	return *size == (off_t)len;
}

static void export_case(struct probe *p, const char *what, uint64_t base, size_t len,
			enum expect expect)
{
	char why[512] = "", link[256] = "", path[64], sz[32];
	int fd = -1, ret;
	off_t end;
	ssize_t n;

	ret = gdr_cuda_dmabuf_fd(p->cu, base, len, &fd, why, sizeof(why));
	gdr_fmt_size(len, sz, sizeof(sz));
	if (ret) {
		if (expect == EITHER)
			info("export %s (%s at +0x%llx of a 64 KiB page): refused: %s", what, sz,
			     (unsigned long long)(base % 65536), why);
		else
			check(p, expect == MUST_FAIL, "export %s (%s): refused: %s", what, sz, why);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	int holds = dmabuf_holds(fd, len, &end);

	if (expect == EITHER) {
		info("export %s (%s at +0x%llx of a 64 KiB page): accepted, fd %d (%s), size %lld",
		     what, sz, (unsigned long long)(base % 65536), fd, link, (long long)end);
	} else if (expect == MUST_FAIL) {
		check(p, 0,
		      "export %s (%s): accepted (fd %d) but the fake driver refuses it: "
		      "fix tests/fake_cuda",
		      what, sz, fd);
	} else {
		check(p, fcntl(fd, F_GETFD) != -1, "export %s (%s): fd %d valid (%s)", what, sz, fd,
		      link);
		check(p, holds, "export %s: lseek(fd, 0, SEEK_END) = %lld, want %zu", what,
		      (long long)end, len);
	}
	close(fd);
}

static void probe_dmabuf(struct probe *p)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t sizes[] = { 64 * 1024, 2 * MiB, 1 * MiB + 4096, 64 * MiB, 1024 * MiB };
	char why[512], what[96], sz[32];
	uint64_t d;
	int ret;

	if (p->gpu.dmabuf_supported != 1) {
		info("DMA_BUF_SUPPORTED = %d: every export below is expected to be refused",
		     p->gpu.dmabuf_supported);
	}
	for (size_t i = 0; i < GDR_ARRAY_SIZE(sizes); i++) {
		size_t len = sizes[i];

		if (p->quick && len > 64 * MiB)
			continue;
		gdr_fmt_size(len, sz, sizeof(sz));
		ret = gdr_cuda_alloc(p->cu, len, &d, why, sizeof(why));
		check(p, ret == 0, "cuMemAlloc(%s): %s", sz, ret ? why : "ok");
		if (ret)
			continue;
		info("cuMemAlloc(%s) = 0x%llx (+0x%llx into a 64 KiB page, +0x%llx into 2 MiB)", sz,
		     (unsigned long long)d, (unsigned long long)(d % 65536),
		     (unsigned long long)(d % (2 * MiB)));
		snprintf(what, sizeof(what), "whole %s buffer", sz);
		/* Host-page multiples are documented to work; only GPU-page ones are relied on. */
		export_case(p, what, d, len,
			    d % 65536 == 0 && len % 65536 == 0 && p->gpu.dmabuf_supported == 1
				? MUST_WORK
				: EITHER);
		if (len >= 64 * MiB) {
			export_case(p, "4 MiB at +1 MiB", d + MiB, 4 * MiB,
				    p->gpu.dmabuf_supported == 1 ? MUST_WORK : EITHER);
			export_case(p, "one host page at +4 KiB", d + page, page, EITHER);
			/* The fake refuses these; the real driver must agree. */
			export_case(p, "64 KiB at +256 B (unaligned start)", d + 256, 65536,
				    MUST_FAIL);
			export_case(p, "1000 B (unaligned length)", d, 1000, MUST_FAIL);
		}
		if (len % 65536)
			export_case(p, "the 64 KiB-rounded span (past the allocation)", d,
				    (len + 65535) / 65536 * 65536, EITHER);
		gdr_cuda_free(p->cu, d);
	}

	/*
	 * Exactly what the dmabuf backend does, in both allocators and both
	 * mapping types: allocate, export the host-page range inside, time it.
	 * The PCIe mapping type may be refused (driver < 12.8, or a platform
	 * without it): said, not failed.
	 */
	for (int a = 0; a < GDR_GPU_ALLOC__COUNT; a++) {
		for (int pcie = 0; pcie < 2; pcie++) {
			struct gdr_mem_env env = { .cuda = p->cu,
						   .gpu = &p->gpu,
						   .sysfs_root = p->root,
						   .gpu_alloc = (enum gdr_gpu_alloc)a,
						   .dmabuf_pcie = pcie };
			const size_t odd[] = { 100, 4096, 3 * MiB + 123 };
			const char *an = gdr_gpu_alloc_name((enum gdr_gpu_alloc)a);
			const char *mn = pcie ? "pcie" : "default";

			if (a == GDR_GPU_ALLOC_VMM && p->gpu.vmm_gdr_supported != 1) {
				info(
				    "backend %s: GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = %d: not "
				    "exported",
				    an, p->gpu.vmm_gdr_supported);
				break;
			}
			for (size_t i = 0; i < GDR_ARRAY_SIZE(odd); i++) {
				struct gdr_mem m = { .env = &env };
				struct gdr_dmabuf_range r;
				uint64_t t0;
				off_t end = 0;
				int fd = -1;

				ret = gdr_mem_gpu_alloc(&m, odd[i], why, sizeof(why));
				check(p, ret == 0, "backend %s alloc %zu B: %s", an, odd[i],
				      ret ? why : "ok");
				if (ret)
					continue;
				check(p,
				      m.addr >= m.gpu_base &&
					  m.addr + odd[i] <= m.gpu_base + m.gpu_len,
				      "backend %s alloc %zu B: buffer 0x%llx inside [0x%llx, +%zu)",
				      an, odd[i], (unsigned long long)m.addr,
				      (unsigned long long)m.gpu_base, m.gpu_len);
				t0 = gdr_now_ns();
				ret = gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why));
				double us = (double)(gdr_now_ns() - t0) / 1e3;
				if (p->gpu.dmabuf_supported == 1 && !pcie)
					check(p, ret == 0 && dmabuf_holds(fd, r.span, &end),
					      "backend %s export of %zu B at 0x%llx (%s mapping): "
					      "base 0x%llx offset %llu span %zu in %.1f us: %s",
					      an, odd[i], (unsigned long long)m.addr, mn,
					      (unsigned long long)r.base,
					      (unsigned long long)r.offset, r.span, us,
					      ret ? why : "fd ok, size ok");
				else
					info(
					    "backend %s export of %zu B (%s mapping): %s (%.1f us)",
					    an, odd[i], mn, ret ? why : "accepted", us);
				if (fd >= 0)
					close(fd);
				/* SYNC_MEMOPS as every NIC path sets it: on cuMemAlloc memory only. */
				ret = gdr_mem_gpu_sync_memops(&m, why, sizeof(why));
				if (a == GDR_GPU_ALLOC_MEMALLOC)
					check(p, ret == 0, "backend %s SYNC_MEMOPS: %s", an,
					      ret ? why : "ok");
				else
					check(p, ret == 0 && !m.note[0],
					      "backend %s SYNC_MEMOPS: %s", an,
					      ret ? why
					      : m.note[0]
						  ? m.note
						  : "not set on cuMemCreate memory (as NCCL)");
				gdr_mem_gpu_free(&m);
			}
		}
	}
}

/* ---- 3. copy bandwidth ---- */

static double pcie_gbytes(const char *bus_id, char *desc, size_t dlen)
{
	char path[128], speed[64] = "", width[16] = "";
	double gts, lanes, enc;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_speed", bus_id);
	if (gdr_read_rooted(NULL, path, speed, sizeof(speed)) <= 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_width", bus_id);
	if (gdr_read_rooted(NULL, path, width, sizeof(width)) <= 0)
		return 0;
	gts = strtod(speed, NULL);
	lanes = strtod(width, NULL);
	/* 8b/10b up to 5 GT/s, 128b/130b after; flits at 64 GT/s are close to the latter. */
	enc = gts <= 5.0 ? 0.8 : 128.0 / 130.0;
	snprintf(desc, dlen, "%s x%s", speed, width);
	return gts * lanes * enc / 8.0;
}

/* GB/s (10^9 bytes) of reps copies of len bytes in one direction; best and median. */
static int measure(struct probe *p, int h2d, void *host, uint64_t d, size_t len, size_t chunk,
		   gdr_cuda_stream_t s[2], int reps, double *best, double *median)
{
	double t[16];
	int ret = 0;

	for (int r = 0; r < reps && r < 16; r++) {
		double t0 = gdr_now_s();

		for (size_t off = 0, k = 0; off < len && !ret; off += chunk, k++) {
			size_t n = len - off < chunk ? len - off : chunk;

			ret = h2d ? gdr_cuda_htod_async(p->cu, d + off, (char *)host + off, n,
							s[k % 2])
				  : gdr_cuda_dtoh_async(p->cu, (char *)host + off, d + off, n,
							s[k % 2]);
		}
		if (!ret)
			ret = gdr_cuda_stream_sync(p->cu, s[0]);
		if (!ret)
			ret = gdr_cuda_stream_sync(p->cu, s[1]);
		if (ret)
			return ret;
		t[r] = (double)len / (gdr_now_s() - t0) / 1e9;
	}
	qsort(t, (size_t)reps, sizeof(t[0]), cmp_double);
	*best = t[reps - 1];
	*median = t[reps / 2];
	return 0;
}

static void probe_bandwidth(struct probe *p)
{
	size_t len = (p->quick ? 64 : 256) * (size_t)MiB;
	const size_t chunks[] = { 0, 4 * MiB, 1 * MiB, 256 * 1024 };
	gdr_cuda_stream_t s[2] = { NULL, NULL };
	char why[512], desc[64] = "", sz[32];
	double link, best = 0, med = 0;
	void *pinned = NULL, *pageable = NULL;
	uint64_t d = 0;
	int ret;

	ret = gdr_cuda_alloc(p->cu, len, &d, why, sizeof(why));
	if (!ret)
		ret = gdr_cuda_host_alloc(p->cu, len, &pinned, why, sizeof(why));
	if (!ret && (ret = gdr_cuda_stream_create(p->cu, &s[0])) == 0)
		ret = gdr_cuda_stream_create(p->cu, &s[1]);
	check(p, ret == 0, "bandwidth setup (%s device + pinned host, 2 streams): %s",
	      gdr_fmt_size(len, sz, sizeof(sz)), ret ? why : "ok");
	if (ret)
		goto out;
	memset(pinned, 0x5a, len);
	link = pcie_gbytes(p->gpu.bus_id, desc, sizeof(desc));
	if (link > 0)
		info("PCIe link of %s: %s = %.1f GB/s per direction before protocol overhead "
		     "(expect ~80-90%% of it)",
		     p->gpu.bus_id, desc, link);
	else
		info("PCIe link of %s not readable in sysfs", p->gpu.bus_id);
	for (int dir = 1; dir >= 0; dir--) {
		for (size_t c = 0; c < GDR_ARRAY_SIZE(chunks); c++) {
			size_t chunk = chunks[c] ? chunks[c] : len;

			char of_link[32] = "";

			ret = measure(p, dir, pinned, d, len, chunk, s, 5, &best, &med);
			if (link > 0)
				snprintf(of_link, sizeof(of_link), ", %.0f%% of link",
					 100 * best / link);
			check(
			    p, ret == 0,
			    "%s pinned async, %s chunks on 2 streams: best %.1f GB/s (%.0f Gb/s), "
			    "median %.1f GB/s%s",
			    dir ? "H2D" : "D2H", gdr_fmt_size(chunk, sz, sizeof(sz)), best,
			    best * 8, med, of_link);
			if (ret) {
				info("%s", gdr_cuda_last_error(p->cu));
				goto out;
			}
		}
	}
	/* Pageable memory for contrast: the copy is staged by the driver. */
	pageable = malloc(len);
	if (pageable) {
		double t0;

		memset(pageable, 0x5a, len);
		t0 = gdr_now_s();
		ret = gdr_cuda_htod(p->cu, d, pageable, len);
		check(p, ret == 0, "H2D pageable sync: %.1f GB/s",
		      (double)len / (gdr_now_s() - t0) / 1e9);
		free(pageable);
	}
out:
	gdr_cuda_stream_destroy(p->cu, s[0]);
	gdr_cuda_stream_destroy(p->cu, s[1]);
	gdr_cuda_host_free(p->cu, pinned);
	gdr_cuda_free(p->cu, d);
}

/* ---- 4. ordering, events, SYNC_MEMOPS ---- */

static void probe_semantics(struct probe *p)
{
	size_t len = 64 * MiB;
	gdr_cuda_stream_t s = NULL;
	gdr_cuda_event_t e = NULL;
	unsigned char *a = NULL, *b = NULL;
	char why[512];
	uint64_t d = 0;
	int ret, on = -1, q0, q1;

	ret = gdr_cuda_alloc(p->cu, len, &d, why, sizeof(why));
	if (!ret)
		ret = gdr_cuda_host_alloc(p->cu, len, (void **)&a, why, sizeof(why));
	if (!ret)
		ret = gdr_cuda_host_alloc(p->cu, len, (void **)&b, why, sizeof(why));
	if (!ret)
		ret = gdr_cuda_stream_create(p->cu, &s);
	if (!ret)
		ret = gdr_cuda_event_create(p->cu, &e);
	check(p, ret == 0, "semantics setup: %s", ret ? why : "ok");
	if (ret)
		goto out;

	ret = gdr_cuda_get_sync_memops(p->cu, d, &on, why, sizeof(why));
	check(p, ret == 0, "SYNC_MEMOPS before: %s", ret ? why : on ? "1" : "0");
	ret = gdr_cuda_set_sync_memops(p->cu, d, why, sizeof(why));
	check(p, ret == 0, "cuPointerSetAttribute(SYNC_MEMOPS, 1): %s", ret ? why : "ok");
	ret = gdr_cuda_get_sync_memops(p->cu, d, &on, why, sizeof(why));
	check(p, ret == 0 && on == 1, "SYNC_MEMOPS read back: %s", ret ? why : on ? "1" : "0");

	check(p, gdr_cuda_event_query(p->cu, e) == 1, "unrecorded event reads complete");
	memset(a, 0x11, len);
	memset(b, 0, len);
	ret = gdr_cuda_htod_async(p->cu, d, a, len, s);
	if (!ret)
		ret = gdr_cuda_dtoh_async(p->cu, b, d, len, s);
	if (!ret)
		ret = gdr_cuda_event_record(p->cu, e, s);
	q0 = gdr_cuda_event_query(p->cu, e);
	check(p, ret == 0, "enqueue H2D, D2H, event on one stream: %s",
	      ret ? gdr_cuda_last_error(p->cu) : "ok");
	/* The fake says "not ready" here; a GPU copying 128 MiB should too. */
	info("event right after enqueue: %s", q0 == 0 ? "pending" : q0 == 1 ? "complete" : "error");
	ret = gdr_cuda_event_sync(p->cu, e);
	q1 = gdr_cuda_event_query(p->cu, e);
	check(p, ret == 0 && q1 == 1, "event complete after cuEventSynchronize");
	check(p, b[0] == 0x11 && b[len - 1] == 0x11 && !memcmp(a, b, len),
	      "copies on one stream ran in order (D2H saw the H2D bytes)");
out:
	gdr_cuda_event_destroy(p->cu, e);
	gdr_cuda_stream_destroy(p->cu, s);
	gdr_cuda_host_free(p->cu, a);
	gdr_cuda_host_free(p->cu, b);
	gdr_cuda_free(p->cu, d);
}

/* ---- 5. skip reasons ---- */

static void probe_paths(struct probe *p)
{
	struct gdr_mem_env env = { .cuda = p->cu, .gpu = &p->gpu, .sysfs_root = p->root };
	struct ibv_device **list;
	char why[512], found[128], nic[512];
	int n = 0, ret;

	list = ibv_get_device_list(&n);
	if (!list || n == 0)
		snprintf(nic, sizeof(nic), "no RDMA device (ibv_get_device_list: %s)",
			 list ? "0 devices" : strerror(errno));
	else
		snprintf(nic, sizeof(nic), "%d RDMA device(s), first %s: not opened by this probe",
			 n, ibv_get_device_name(list[0]));
	if (list)
		ibv_free_device_list(list);
	info("NIC: %s", nic);

	/* With no protection domain the backends judge the GPU side only. */
	ret = gdr_mem_dmabuf_ops.available(&env, why, sizeof(why));
	info("path dmabuf: GPU side %s%s; here: %s", ret ? "cannot: " : "ok", ret ? why : "",
	     n ? "would probe the NIC" : nic);
	ret = gdr_peermem_detect(p->root, found, sizeof(found), why, sizeof(why));
	info("peer-memory client: %s", ret ? found : why);
	ret = gdr_mem_peermem_ops.available(&env, why, sizeof(why));
	info("path peermem: %s%s; here: %s", ret ? "skip: " : "GPU side ok", ret ? why : "",
	     n ? "would register" : nic);
	info("path bounce: needs only this GPU (pinned staging measured above); here: %s", nic);
	info("path host: %s", nic);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { .name = "gpu", .has_arg = 1, .val = 'g' },
					      { .name = "quick", .has_arg = 0, .val = 'q' },
					      { .name = "root", .has_arg = 1, .val = 'r' },
					      { .name = "help", .has_arg = 0, .val = 'h' },
					      {} };
	struct probe p = { .root = "/" };
	const char *spec = "0";
	double t0 = gdr_now_s();
	int c;

	gdr_set_progname(argv[0]);
	while ((c = getopt_long(argc, argv, "g:qr:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			spec = optarg;
			break;
		case 'q':
			p.quick = 1;
			break;
		case 'r':
			p.root = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [--gpu N|BDF] [--quick] [--root DIR]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (probe_driver(&p, spec) == 0) {
		probe_dmabuf(&p);
		probe_bandwidth(&p);
		probe_semantics(&p);
		probe_paths(&p);
		gdr_cuda_gpu_close(p.cu, &p.gpu);
	}
	gdr_cuda_unload(p.cu);
	printf("summary: %d ok, %d FAIL, %.1f s\n", p.oks, p.fails, gdr_now_s() - t0);
	return p.fails ? 1 : 0;
}
