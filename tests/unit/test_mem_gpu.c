/*
 * The dmabuf and peermem backends up to the point where an RDMA device is
 * needed (registration itself is tested in the Soft-RoCE VM), with the fake
 * driver behind them: skip reasons, export and allocation errors, cleanup.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda.h"
#include "mem.h"
#include "mem_gpu.h"
#include "util.h"

static void test_dmabuf_range(void **state)
{
	struct gdr_dmabuf_range r;

	(void)state;
	gdr_dmabuf_range(0x7f0000010000ull, 1u << 20, 65536, &r);
	assert_int_equal(r.base, 0x7f0000010000ull);
	assert_int_equal(r.offset, 0);
	assert_int_equal(r.span, 1u << 20);
	/* A sub-allocation 256 bytes into a GPU page. */
	gdr_dmabuf_range(0x10100, 1000, 65536, &r);
	assert_int_equal(r.base, 0x10000);
	assert_int_equal(r.offset, 256);
	assert_int_equal(r.span, 65536);
	/* Straddling a page boundary takes both pages. */
	gdr_dmabuf_range(0x1ff00, 0x200, 65536, &r);
	assert_int_equal(r.base, 0x10000);
	assert_int_equal(r.offset, 0xff00);
	assert_int_equal(r.span, 0x20000);
}

static void test_peermem_detect(void **state)
{
	char found[128], why[256];

	(void)state;
	assert_int_equal(
	    gdr_peermem_detect(CUDA_ROOTS "/none", found, sizeof(found), why, sizeof(why)), 0);
	assert_string_equal(why, "nvidia_peermem not loaded (/sys/module/nvidia_peermem absent; "
				 "no nv_peer_mem or memory_peers/nv_mem either): modprobe "
				 "nvidia-peermem");
	assert_int_equal(gdr_peermem_detect(CUDA_ROOTS "/nvidia_peermem", found, sizeof(found), why,
					    sizeof(why)),
			 1);
	assert_string_equal(found, "nvidia_peermem 550.54.15");
	assert_int_equal(
	    gdr_peermem_detect(CUDA_ROOTS "/nv_peer_mem", found, sizeof(found), why, sizeof(why)),
	    1);
	assert_string_equal(found, "nv_peer_mem 1.3-0");
	assert_int_equal(
	    gdr_peermem_detect(CUDA_ROOTS "/memory_peers", found, sizeof(found), why, sizeof(why)),
	    1);
	assert_string_equal(found, "nv_mem 1.2 (memory_peers)");
	assert_int_equal(gdr_peermem_detect(CUDA_ROOTS "/memory_peers_nc", found, sizeof(found),
					    why, sizeof(why)),
			 1);
	assert_string_equal(found, "nv_mem_nc 1.2 (memory_peers)");
	assert_int_equal(
	    gdr_peermem_detect(CUDA_ROOTS "/noversion", found, sizeof(found), why, sizeof(why)), 1);
	assert_string_equal(found, "nvidia_peermem (version unknown)");
}

static void test_peermem_explain(void **state)
{
	(void)state;
	assert_non_null(strstr(gdr_peermem_explain(EFAULT),
			       "could not pin the pages: no peer-memory client claimed them"));
	assert_non_null(strstr(gdr_peermem_explain(EINVAL), "rejected the range"));
	assert_null(gdr_peermem_explain(0));
	assert_null(gdr_peermem_explain(EBUSY));
}

static void test_no_driver(void **state)
{
	struct gdr_mem_env env = { .cuda_why = "no CUDA driver (libcuda.so.1: cannot open shared "
					       "object file: No such file or directory)" };
	struct gdr_mem m = { .env = &env };
	char why[256];

	(void)state;
	assert_int_equal(gdr_mem_dmabuf_ops.available(&env, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, env.cuda_why);
	assert_int_equal(gdr_mem_peermem_ops.available(&env, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, env.cuda_why);
	assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, 4096, 0, why, sizeof(why)), -ENODEV);
	/* free on a never-built m is harmless. */
	gdr_mem_dmabuf_ops.free(&m);
	gdr_mem_peermem_ops.free(&m);
	assert_int_equal(gdr_dmabuf_probe_nic(NULL, why, sizeof(why)), -EINVAL);
}

/* --use_data_direct looks both mlx5dv calls up at run time and says which is missing. */
static void test_data_direct_lookup(void **state)
{
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_LIBMLX5", "/nonexistent/libmlx5.so.1", 1);
	assert_int_equal(gdr_data_direct_check(NULL, why, sizeof(why)), -EOPNOTSUPP);
	assert_non_null(strstr(why, "data direct: /nonexistent/libmlx5.so.1: "));
	errno = 0;
	assert_null(gdr_data_direct_reg(NULL, 0, 4096, 0, -1, 0));
	assert_int_equal(errno, EOPNOTSUPP);
	/* A library without the calls (libc stands in for rdma-core < 53's libmlx5). */
	setenv("GDRPERF_LIBMLX5", "libc.so.6", 1);
	assert_int_equal(gdr_data_direct_check(NULL, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why,
			    "data direct: libc.so.6 has no mlx5dv_reg_dmabuf_mr (rdma-core >= 53 "
			    "needed)");
	unsetenv("GDRPERF_LIBMLX5");
}

#ifdef HAVE_CUDA

#include "fake_cuda_env.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_dmabuf_available(void **state)
{
	struct fake_gpu f;
	char why[256] = "";

	(void)state;
	/* No PD: only the GPU side is judged, and it is fine. */
	fake_gpu_up(&f, "/");
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), 0);
	fake_gpu_down(&f);

	setenv("GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED", "0", 1);
	fake_gpu_up(&f, "/");
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): "
				 "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0 (needs the open GPU "
				 "kernel module and Linux >= 5.12)");
	fake_gpu_down(&f);

	unsetenv("GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED");
	setenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION", "11060", 1);
	fake_gpu_up(&f, "/");
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "CUDA driver 11.6 is older than 11.7 (no DMA-BUF export)");
	fake_gpu_down(&f);

	/* A driver without a GPU opened. */
	fake_gpu_up(&f, "/");
	f.env.gpu = NULL;
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no GPU opened (--gpu)");
	f.env.gpu = &f.gpu;
	fake_gpu_down(&f);
}

/* Everything up to ibv_reg_dmabuf_mr works, and a failure there leaks nothing. */
static void test_dmabuf_alloc_reg_without_pd(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m;
	char why[256] = "";
	int fds;

	(void)state;
	/* 2 MiB and the GPU page of slack the backend asks for, not twice that. */
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "3M", 1);
	fake_gpu_up(&f, "/");
	fds = count_fds();
	for (int i = 0; i < 3; i++) {
		memset(&m, 0, sizeof(m));
		m.env = &f.env;
		m.ops = &gdr_mem_dmabuf_ops;
		assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, 2u << 20, 0, why, sizeof(why)),
				 -EINVAL);
		assert_string_equal(why, "dmabuf: no protection domain to register with");
		assert_int_equal(m.addr, 0);
		assert_null(m.mr);
		/* The exported fd was closed and the memory freed (else the next round is OOM). */
		assert_int_equal(count_fds(), fds);
	}
	fake_gpu_down(&f);
}

static void test_dmabuf_export_error(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_DMABUF", "CUDA_ERROR_NOT_PERMITTED", 1);
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "2M", 1);
	fake_gpu_up(&f, "/");
	for (int i = 0; i < 2; i++) {
		m.env = &f.env;
		assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, 1u << 20, 0, why, sizeof(why)),
				 -EPERM);
		assert_non_null(strstr(why, "cuMemGetHandleForAddressRange(0x"));
		assert_non_null(strstr(why, ", 1 MiB, DMA_BUF_FD): CUDA_ERROR_NOT_PERMITTED: "
					    "operation not permitted"));
		assert_int_equal(m.addr, 0);
	}
	fake_gpu_down(&f);
}

/*
 * cuMemAlloc sub-allocates: the pointer starts neither a GPU page nor a host
 * page. Rounding it down (to 64 KiB, as gdrperf once did, or to a host page)
 * leaves the allocation, and the driver refuses that range.
 */
static void test_dmabuf_unaligned_suballocation(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t sizes[] = { 100, 4096, 100000, (3u << 20) + 123 };
	const char *offsets[] = { NULL, "256", "4096" };
	struct fake_gpu f;
	struct gdr_dmabuf_range r;
	char why[256] = "";
	uint64_t d;
	int fd;

	(void)state;
	/* Both export rules: the real driver's (default) and the documented one (strict). */
	for (size_t o = 0; o < 2 * GDR_ARRAY_SIZE(offsets); o++) {
		int strict = o >= GDR_ARRAY_SIZE(offsets);
		uint64_t first;

		fake_gpu_reset_env(NULL);
		if (offsets[o % GDR_ARRAY_SIZE(offsets)])
			setenv("GDRPERF_FAKE_CUDA_ALLOC_OFFSET", offsets[o % GDR_ARRAY_SIZE(offsets)],
			       1);
		if (strict)
			setenv("GDRPERF_FAKE_CUDA_DMABUF_STRICT", "1", 1);
		fake_gpu_up(&f, "/");
		/* What the driver hands out after a first small allocation: not page aligned. */
		assert_int_equal(gdr_cuda_alloc(f.cu, 512, &first, why, sizeof(why)), 0);
		assert_int_equal(gdr_cuda_alloc(f.cu, 100000, &d, why, sizeof(why)), 0);
		assert_int_not_equal(d % 65536, 0);
		/* Exporting around it: the real driver takes it, the documented rule does not. */
		assert_int_equal(gdr_cuda_dmabuf_fd(f.cu, d & ~(uint64_t)65535, 2 * 65536, &fd, why,
						    sizeof(why)),
				 strict ? -EINVAL : 0);
		if (strict)
			assert_non_null(strstr(why, "CUDA_ERROR_INVALID_VALUE"));
		else
			close(fd);
		gdr_cuda_free(f.cu, d);
		gdr_cuda_free(f.cu, first);
		for (size_t i = 0; i < GDR_ARRAY_SIZE(sizes); i++) {
			struct gdr_mem m = { .env = &f.env };

			assert_int_equal(gdr_mem_gpu_alloc(&m, sizes[i], why, sizeof(why)), 0);
			assert_string_equal(m.gpu_alloc, "cuMemAlloc");
			assert_int_equal(m.addr % 65536, 0);
			assert_true(m.addr >= m.gpu_base);
			assert_true(m.addr + sizes[i] <= m.gpu_base + m.gpu_len);
			assert_int_equal(gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why)), 0);
			/* offset = pointer - exported base, inside the allocation. */
			assert_int_equal(r.base + r.offset, m.addr);
			assert_int_equal(r.base % page, 0);
			assert_int_equal(r.span % page, 0);
			assert_true(r.base >= m.gpu_base &&
				    r.base + r.span <= m.gpu_base + m.gpu_len);
			close(fd);
			gdr_mem_gpu_free(&m);
		}
		fake_gpu_down(&f);
	}
}

/* A range that leaves the allocation is refused before the driver is asked. */
static void test_dmabuf_export_outside(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	struct gdr_dmabuf_range r;
	char why[256] = "";
	int fd = 7;

	(void)state;
	fake_gpu_up(&f, "/");
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	m.addr = m.gpu_base + 512; /* as if the pointer had been used as returned */
	m.len = m.gpu_len;
	assert_int_equal(gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why)), -EINVAL);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): DMA-BUF range [0x"));
	assert_non_null(strstr(why, "is not inside the allocation [0x"));
	m.addr = m.gpu_base;
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);
}

/* The export is of the buffer's own pages: bytes written at m->addr are in the fd there. */
static void test_dmabuf_export_pages(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	struct gdr_dmabuf_range r;
	char why[256] = "", in[64], out[64];
	int fd;

	(void)state;
	fake_gpu_up(&f, "/");
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 100000, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(0x40 + i);
	assert_int_equal(gdr_mem_gpu_write(&m, 0, in, sizeof(in)), 0);
	assert_int_equal(gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why)), 0);
	/* The fake's DMA-BUF starts where its file position says (tests/fake_verbs reads it). */
	off_t start = lseek(fd, 0, SEEK_CUR);
	assert_true(start >= 0);
	assert_int_equal(pread(fd, out, sizeof(out), start + (off_t)r.offset),
			 (ssize_t)sizeof(out));
	assert_memory_equal(in, out, sizeof(in));
	close(fd);
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);
}

/* SYNC_MEMOPS is set on the dmabuf path too, before anything is exported. */
static void test_dmabuf_sync_memops(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "";
	int on = 0;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuPointerSetAttribute=CUDA_ERROR_NOT_SUPPORTED", 1);
	fake_gpu_up(&f, "/");
	m.env = &f.env;
	assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, 4096, 0, why, sizeof(why)), -EOPNOTSUPP);
	assert_non_null(strstr(why, ", SYNC_MEMOPS): CUDA_ERROR_NOT_SUPPORTED"));
	assert_int_equal(m.addr, 0);
	fake_gpu_down(&f);

	/* Without the failure the attribute is on when registration is reached. */
	unsetenv("GDRPERF_FAKE_CUDA_FAIL");
	fake_gpu_up(&f, "/");
	memset(&m, 0, sizeof(m));
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	assert_int_equal(gdr_mem_gpu_sync_memops(&m, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_get_sync_memops(f.cu, m.addr, &on, why, sizeof(why)), 0);
	assert_int_equal(on, 1);
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);
}

/* --validate's read of NIC-written GPU memory flushes first, unless ordering makes it moot. */
static void test_read_flushes(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "", out[16];
	const char *how = NULL;

	(void)state;
	/* A GPU whose NIC writes are not ordered (WRITES_ORDERING 0): the flush is made. */
	setenv("GDRPERF_FAKE_CUDA_WRITES_ORDERING", "0", 1);
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuFlushGPUDirectRDMAWrites=CUDA_ERROR_UNKNOWN", 1);
	fake_gpu_up(&f, "/");
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	/* Both NIC paths' reads go through the flush: the injected failure shows it. */
	assert_int_equal(gdr_mem_dmabuf_ops.read(&m, 0, out, sizeof(out)), -EIO);
	assert_int_equal(gdr_mem_peermem_ops.read(&m, 0, out, sizeof(out)), -EIO);
	assert_non_null(strstr(gdr_cuda_last_error(f.cu), "cuFlushGPUDirectRDMAWrites"));
	/* A plain copy (the writer's side) does not flush. */
	assert_int_equal(gdr_mem_gpu_read(&m, 0, out, sizeof(out)), 0);
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);

	/* Writes already ordered for the owner (the real H200's 100, the fake's default): no flush. */
	unsetenv("GDRPERF_FAKE_CUDA_WRITES_ORDERING");
	fake_gpu_up(&f, "/");
	memset(&m, 0, sizeof(m));
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	assert_int_equal(gdr_mem_gpu_read_remote(&m, 0, out, sizeof(out), &how), 0);
	assert_non_null(strstr(how, "not needed"));
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);

	assert_int_equal(f.gpu.writes_ordering, 100);

	/* Neither: the copy still runs, and how says why nothing was flushed. */
	unsetenv("GDRPERF_FAKE_CUDA_FAIL");
	setenv("GDRPERF_FAKE_CUDA_WRITES_ORDERING", "0", 1);
	setenv("GDRPERF_FAKE_CUDA_NO_ATTR", "117", 1);
	fake_gpu_up(&f, "/");
	memset(&m, 0, sizeof(m));
	m.env = &f.env;
	assert_int_equal(f.gpu.flush_options, -1);
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	assert_int_equal(gdr_mem_gpu_read_remote(&m, 0, out, sizeof(out), &how), 0);
	assert_non_null(strstr(how, "unknown (the driver cannot report"));
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);
}

/* --gpu-alloc=vmm: cuMemCreate memory on every GPU path, or the reason it cannot be. */
static void test_vmm_alloc(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	struct gdr_dmabuf_range r;
	char why[256] = "", in[32], out[32];
	int fd, on = 0;

	(void)state;
	fake_gpu_up(&f, "/");
	f.env.gpu_alloc = GDR_GPU_ALLOC_VMM;
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 3u << 20, why, sizeof(why)), 0);
	assert_string_equal(m.gpu_alloc, "cuMemCreate");
	assert_int_equal(m.vmm.granularity, 2u << 20);
	assert_int_equal(m.gpu_len, 4u << 20);
	assert_int_equal(m.addr % (2u << 20), 0);
	memset(in, 0x5a, sizeof(in));
	assert_int_equal(gdr_mem_gpu_write(&m, (3u << 20) - 32, in, sizeof(in)), 0);
	assert_int_equal(gdr_mem_gpu_read(&m, (3u << 20) - 32, out, sizeof(out)), 0);
	assert_memory_equal(in, out, sizeof(in));
	/* SYNC_MEMOPS is left alone on cuMemCreate memory (the driver refuses it), no note. */
	assert_int_equal(gdr_mem_gpu_sync_memops(&m, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_get_sync_memops(f.cu, m.addr, &on, why, sizeof(why)), 0);
	assert_int_equal(on, 0);
	assert_string_equal(m.note, "");
	assert_int_equal(gdr_cuda_set_sync_memops(f.cu, m.addr, why, sizeof(why)), -EOPNOTSUPP);
	assert_non_null(strstr(why, "CUDA_ERROR_NOT_SUPPORTED"));
	assert_int_equal(gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why)), 0);
	assert_int_equal(r.offset, 0);
	close(fd);
	gdr_mem_gpu_free(&m);
	assert_int_equal(m.vmm.va, 0);
	fake_gpu_down(&f);

	setenv("GDRPERF_FAKE_CUDA_VMM_GDR", "0", 1);
	fake_gpu_up(&f, "/");
	f.env.gpu_alloc = GDR_GPU_ALLOC_VMM;
	memset(&m, 0, sizeof(m));
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): "
				 "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 0 "
				 "(cuMemCreate memory cannot be reached by the NIC)");
	fake_gpu_down(&f);
}

/*
 * Copies into cuMemCreate memory (no SYNC_MEMOPS there) wait for the default
 * stream; into cuMemAlloc memory (SYNC_MEMOPS set) they need not.
 */
static void test_vmm_write_ordered(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "", in[16] = "ordered";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuStreamSynchronize=CUDA_ERROR_UNKNOWN", 1);
	fake_gpu_up(&f, "/");
	for (int a = 0; a < GDR_GPU_ALLOC__COUNT; a++) {
		f.env.gpu_alloc = (enum gdr_gpu_alloc)a;
		memset(&m, 0, sizeof(m));
		m.env = &f.env;
		assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
		assert_int_equal(gdr_mem_gpu_write(&m, 0, in, sizeof(in)),
				 a == GDR_GPU_ALLOC_VMM ? -EIO : 0);
		if (a == GDR_GPU_ALLOC_VMM)
			assert_non_null(strstr(gdr_cuda_last_error(f.cu), "cuStreamSynchronize"));
		gdr_mem_gpu_free(&m);
	}
	fake_gpu_down(&f);
}

/* The PCIe mapping type goes to the driver, which refuses it where the platform cannot. */
static void test_dmabuf_pcie_mapping(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	struct gdr_dmabuf_range r;
	char why[256] = "";
	int fd;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION", "12080", 1);
	fake_gpu_up(&f, "/");
	f.env.dmabuf_pcie = 1;
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	assert_int_equal(gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why)), -EOPNOTSUPP);
	assert_non_null(strstr(why, "DMA_BUF_FD, MAPPING_TYPE_PCIE): CUDA_ERROR_NOT_SUPPORTED"));
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);

	setenv("GDRPERF_FAKE_CUDA_DMABUF_PCIE", "1", 1);
	fake_gpu_up(&f, "/");
	f.env.dmabuf_pcie = 1;
	memset(&m, 0, sizeof(m));
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	assert_int_equal(gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why)), 0);
	close(fd);
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);

	/* A driver older than 12.8 does not know the flag at all. */
	setenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION", "12040", 1);
	fake_gpu_up(&f, "/");
	f.env.dmabuf_pcie = 1;
	memset(&m, 0, sizeof(m));
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 4096, why, sizeof(why)), 0);
	assert_int_equal(gdr_dmabuf_export(&m, &fd, &r, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "CUDA_ERROR_INVALID_VALUE"));
	gdr_mem_gpu_free(&m);
	fake_gpu_down(&f);
}

/* GPU_DIRECT_RDMA_SUPPORTED gates dmabuf too; unknown is said in the note, not passed over. */
static void test_dmabuf_gdr_attribute(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED", "0", 1);
	fake_gpu_up(&f, "/");
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): "
				 "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 0");
	fake_gpu_down(&f);

	unsetenv("GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED");
	setenv("GDRPERF_FAKE_CUDA_NO_ATTR", "116", 1);
	fake_gpu_up(&f, "/");
	assert_int_equal(f.gpu.gdr_supported, -1);
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), 0);
	m.env = &f.env;
	/* Stops at the missing PD, after the note was written. */
	assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, 4096, 0, why, sizeof(why)), -EINVAL);
	assert_string_equal(m.note, "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED unknown (the "
				    "driver cannot report it)");
	fake_gpu_down(&f);
}

static void test_oom(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1M", 1);
	fake_gpu_up(&f, CUDA_ROOTS "/nvidia_peermem");
	m.env = &f.env;
	assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, (1u << 20) + 1, 0, why, sizeof(why)),
			 -ENOMEM);
	/* Rounded up to whole GPU pages, plus one to align the pointer inside, before asking. */
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): cuMemAlloc(1152 KiB): "
				 "CUDA_ERROR_OUT_OF_MEMORY: out of memory");
	assert_int_equal(gdr_mem_peermem_ops.alloc_reg(&m, 2u << 20, 0, why, sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "cuMemAlloc(2112 KiB): CUDA_ERROR_OUT_OF_MEMORY"));
	fake_gpu_down(&f);
}

static void test_peermem_available(void **state)
{
	struct fake_gpu f;
	char why[256] = "";

	(void)state;
	fake_gpu_up(&f, CUDA_ROOTS "/none");
	assert_int_equal(gdr_mem_peermem_ops.available(&f.env, why, sizeof(why)), -ENOENT);
	assert_non_null(
	    strstr(why, "nvidia_peermem not loaded (/sys/module/nvidia_peermem absent"));
	assert_ptr_equal(strstr(why, "nvidia_peermem not loaded"), why);
	fake_gpu_down(&f);

	fake_gpu_up(&f, CUDA_ROOTS "/nvidia_peermem");
	assert_int_equal(gdr_mem_peermem_ops.available(&f.env, why, sizeof(why)), 0);
	fake_gpu_down(&f);

	setenv("GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED", "0", 1);
	fake_gpu_up(&f, CUDA_ROOTS "/nvidia_peermem");
	assert_int_equal(gdr_mem_peermem_ops.available(&f.env, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): "
				 "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 0");
	fake_gpu_down(&f);
}

static void test_peermem_sync_memops_error(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuPointerSetAttribute=CUDA_ERROR_NOT_SUPPORTED", 1);
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "128K", 1);
	fake_gpu_up(&f, CUDA_ROOTS "/nvidia_peermem");
	for (int i = 0; i < 2; i++) {
		m.env = &f.env;
		assert_int_equal(gdr_mem_peermem_ops.alloc_reg(&m, 4096, 0, why, sizeof(why)),
				 -EOPNOTSUPP);
		assert_non_null(strstr(why, "cuPointerSetAttribute(0x"));
		assert_non_null(strstr(why, ", SYNC_MEMOPS): CUDA_ERROR_NOT_SUPPORTED: operation "
					    "not supported"));
		assert_int_equal(m.addr, 0);
	}
	fake_gpu_down(&f);
}

static void test_peermem_without_pd(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "128K", 1);
	fake_gpu_up(&f, CUDA_ROOTS "/nvidia_peermem");
	for (int i = 0; i < 2; i++) {
		m.env = &f.env;
		assert_int_equal(gdr_mem_peermem_ops.alloc_reg(&m, 65536, 0, why, sizeof(why)),
				 -EINVAL);
		assert_string_equal(why, "peermem: no protection domain to register with");
	}
	fake_gpu_down(&f);
}

static void test_write_read(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m = { 0 };
	char why[256] = "", in[100], out[100];

	(void)state;
	fake_gpu_up(&f, "/");
	m.env = &f.env;
	assert_int_equal(gdr_mem_gpu_alloc(&m, 5000, why, sizeof(why)), 0);
	assert_int_equal(m.len, 5000);
	assert_null(m.host);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)i;
	assert_int_equal(gdr_mem_dmabuf_ops.write(&m, 4900, in, 100), 0);
	assert_int_equal(gdr_mem_peermem_ops.read(&m, 4900, out, 100), 0);
	assert_memory_equal(in, out, sizeof(in));
	/* Past the usable length, even inside the rounded allocation. */
	assert_int_equal(gdr_mem_dmabuf_ops.write(&m, 4901, in, 100), -EINVAL);
	assert_int_equal(gdr_mem_dmabuf_ops.read(&m, 5001, out, 0), -EINVAL);
	gdr_mem_dmabuf_ops.free(&m);
	assert_int_equal(m.addr, 0);
	assert_int_equal(gdr_mem_dmabuf_ops.read(&m, 0, out, 1), -EINVAL);
	fake_gpu_down(&f);
}

#endif /* HAVE_CUDA */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dmabuf_range),
		cmocka_unit_test(test_peermem_detect),
		cmocka_unit_test(test_peermem_explain),
		cmocka_unit_test(test_no_driver),
		cmocka_unit_test(test_data_direct_lookup),
#ifdef HAVE_CUDA
		cmocka_unit_test_setup(test_dmabuf_available, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_alloc_reg_without_pd, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_export_error, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_unaligned_suballocation, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_export_outside, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_export_pages, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_sync_memops, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_read_flushes, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_vmm_alloc, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_vmm_write_ordered, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_pcie_mapping, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_dmabuf_gdr_attribute, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_oom, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_peermem_available, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_peermem_sync_memops_error, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_peermem_without_pd, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_write_read, fake_gpu_reset_env),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
