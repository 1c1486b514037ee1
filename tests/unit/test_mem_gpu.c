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

#ifdef HAVE_CUDA

static const char *const fake_vars[] = {
	"GDRPERF_FAKE_CUDA_DEVICES",
	"GDRPERF_FAKE_CUDA_NAMES",
	"GDRPERF_FAKE_CUDA_BUS_IDS",
	"GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED",
	"GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED",
	"GDRPERF_FAKE_CUDA_DMABUF",
	"GDRPERF_FAKE_CUDA_MEM_LIMIT",
	"GDRPERF_FAKE_CUDA_DRIVER_VERSION",
	"GDRPERF_FAKE_CUDA_COPY_DELAY_US",
	"GDRPERF_FAKE_CUDA_COPY_GBPS",
	"GDRPERF_FAKE_CUDA_ALLOC_OFFSET",
	"GDRPERF_FAKE_CUDA_FAIL",
};

struct fixture {
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	struct gdr_mem_env env;
};

static int reset_env(void **state)
{
	(void)state;
	for (size_t i = 0; i < GDR_ARRAY_SIZE(fake_vars); i++)
		unsetenv(fake_vars[i]);
	setenv("GDRPERF_LIBCUDA", FAKE_CUDA_LIB, 1);
	setenv("GDRPERF_FAKE_CUDA_NAMES", "NVIDIA H200", 1);
	setenv("GDRPERF_FAKE_CUDA_BUS_IDS", "0000:3b:00.0", 1);
	return 0;
}

/* Bring up driver and GPU 0 with the environment the test has set. */
static void up(struct fixture *f, const char *root)
{
	char why[256] = "";

	memset(f, 0, sizeof(*f));
	if (gdr_cuda_load(&f->cu, why, sizeof(why)) ||
	    gdr_cuda_find_gpu(f->cu, "0", &f->gpu, why, sizeof(why)) ||
	    gdr_cuda_gpu_open(f->cu, &f->gpu, why, sizeof(why)))
		fail_msg("fake GPU: %s", why);
	f->env.cuda = f->cu;
	f->env.gpu = &f->gpu;
	f->env.nic = "rxe0";
	f->env.sysfs_root = root;
}

static void down(struct fixture *f)
{
	gdr_cuda_gpu_close(f->cu, &f->gpu);
	gdr_cuda_unload(f->cu);
}

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
	struct fixture f;
	char why[256] = "";

	(void)state;
	/* No PD: only the GPU side is judged, and it is fine. */
	up(&f, "/");
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), 0);
	down(&f);

	setenv("GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED", "0", 1);
	up(&f, "/");
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): "
				 "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0 (needs the open GPU "
				 "kernel module and Linux >= 5.12)");
	down(&f);

	unsetenv("GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED");
	setenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION", "11060", 1);
	up(&f, "/");
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "CUDA driver 11.6 is older than 11.7 (no DMA-BUF export)");
	down(&f);

	/* A driver without a GPU opened. */
	up(&f, "/");
	f.env.gpu = NULL;
	assert_int_equal(gdr_mem_dmabuf_ops.available(&f.env, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no GPU opened (--gpu)");
	f.env.gpu = &f.gpu;
	down(&f);
}

/* Everything up to ibv_reg_dmabuf_mr works, and a failure there leaks nothing. */
static void test_dmabuf_alloc_reg_without_pd(void **state)
{
	struct fixture f;
	struct gdr_mem m;
	char why[256] = "";
	int fds;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "2M", 1);
	up(&f, "/");
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
	down(&f);
}

static void test_dmabuf_export_error(void **state)
{
	struct fixture f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_DMABUF", "CUDA_ERROR_NOT_PERMITTED", 1);
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1M", 1);
	up(&f, "/");
	for (int i = 0; i < 2; i++) {
		m.env = &f.env;
		assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, 1u << 20, 0, why, sizeof(why)),
				 -EPERM);
		assert_non_null(strstr(why, "cuMemGetHandleForAddressRange(0x"));
		assert_non_null(strstr(why, ", 1 MiB, DMA_BUF_FD): CUDA_ERROR_NOT_PERMITTED: "
					    "operation not permitted"));
		assert_int_equal(m.addr, 0);
	}
	down(&f);
}

static void test_dmabuf_unaligned_suballocation(void **state)
{
	struct fixture f;
	struct gdr_dmabuf_range r;
	char why[256] = "";
	uint64_t d;
	int fd;

	(void)state;
	/* The driver hands out a pointer 256 bytes into a GPU page. */
	setenv("GDRPERF_FAKE_CUDA_ALLOC_OFFSET", "256", 1);
	up(&f, "/");
	assert_int_equal(gdr_cuda_alloc(f.cu, 100000, &d, why, sizeof(why)), 0);
	assert_int_equal(d % 65536, 256);
	/* Exporting the pointer itself is refused, as the real driver does... */
	assert_int_equal(gdr_cuda_dmabuf_fd(f.cu, d, 100000, &fd, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "CUDA_ERROR_INVALID_VALUE"));
	/* ...the page-aligned range around it is what gets exported. */
	assert_int_equal(gdr_dmabuf_export(f.cu, d, 100000, &fd, &r, why, sizeof(why)), 0);
	assert_int_equal(r.offset, 256);
	assert_int_equal(r.base, d - 256);
	assert_int_equal(r.span, 2 * 65536);
	assert_int_equal(lseek(fd, 0, SEEK_END), 2 * 65536);
	close(fd);
	gdr_cuda_free(f.cu, d);
	down(&f);
}

static void test_oom(void **state)
{
	struct fixture f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1M", 1);
	up(&f, CUDA_ROOTS "/nvidia_peermem");
	m.env = &f.env;
	assert_int_equal(gdr_mem_dmabuf_ops.alloc_reg(&m, (1u << 20) + 1, 0, why, sizeof(why)),
			 -ENOMEM);
	/* Rounded up to whole GPU pages before asking. */
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): cuMemAlloc(1088 KiB): "
				 "CUDA_ERROR_OUT_OF_MEMORY: out of memory");
	assert_int_equal(gdr_mem_peermem_ops.alloc_reg(&m, 2u << 20, 0, why, sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "cuMemAlloc(2 MiB): CUDA_ERROR_OUT_OF_MEMORY"));
	down(&f);
}

static void test_peermem_available(void **state)
{
	struct fixture f;
	char why[256] = "";

	(void)state;
	up(&f, CUDA_ROOTS "/none");
	assert_int_equal(gdr_mem_peermem_ops.available(&f.env, why, sizeof(why)), -ENOENT);
	assert_non_null(
	    strstr(why, "nvidia_peermem not loaded (/sys/module/nvidia_peermem absent"));
	assert_ptr_equal(strstr(why, "nvidia_peermem not loaded"), why);
	down(&f);

	up(&f, CUDA_ROOTS "/nvidia_peermem");
	assert_int_equal(gdr_mem_peermem_ops.available(&f.env, why, sizeof(why)), 0);
	down(&f);

	setenv("GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED", "0", 1);
	up(&f, CUDA_ROOTS "/nvidia_peermem");
	assert_int_equal(gdr_mem_peermem_ops.available(&f.env, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "GPU 0 (0000:3b:00.0, NVIDIA H200): "
				 "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 0");
	down(&f);
}

static void test_peermem_sync_memops_error(void **state)
{
	struct fixture f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuPointerSetAttribute=CUDA_ERROR_NOT_SUPPORTED", 1);
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "64K", 1);
	up(&f, CUDA_ROOTS "/nvidia_peermem");
	for (int i = 0; i < 2; i++) {
		m.env = &f.env;
		assert_int_equal(gdr_mem_peermem_ops.alloc_reg(&m, 4096, 0, why, sizeof(why)),
				 -EOPNOTSUPP);
		assert_non_null(strstr(why, "cuPointerSetAttribute(0x"));
		assert_non_null(strstr(why, ", SYNC_MEMOPS): CUDA_ERROR_NOT_SUPPORTED: operation "
					    "not supported"));
		assert_int_equal(m.addr, 0);
	}
	down(&f);
}

static void test_peermem_without_pd(void **state)
{
	struct fixture f;
	struct gdr_mem m = { 0 };
	char why[256] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "64K", 1);
	up(&f, CUDA_ROOTS "/nvidia_peermem");
	for (int i = 0; i < 2; i++) {
		m.env = &f.env;
		assert_int_equal(gdr_mem_peermem_ops.alloc_reg(&m, 65536, 0, why, sizeof(why)),
				 -EINVAL);
		assert_string_equal(why, "peermem: no protection domain to register with");
	}
	down(&f);
}

static void test_write_read(void **state)
{
	struct fixture f;
	struct gdr_mem m = { 0 };
	char why[256] = "", in[100], out[100];

	(void)state;
	up(&f, "/");
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
	down(&f);
}

#endif /* HAVE_CUDA */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dmabuf_range),
		cmocka_unit_test(test_peermem_detect),
		cmocka_unit_test(test_peermem_explain),
		cmocka_unit_test(test_no_driver),
#ifdef HAVE_CUDA
		cmocka_unit_test_setup(test_dmabuf_available, reset_env),
		cmocka_unit_test_setup(test_dmabuf_alloc_reg_without_pd, reset_env),
		cmocka_unit_test_setup(test_dmabuf_export_error, reset_env),
		cmocka_unit_test_setup(test_dmabuf_unaligned_suballocation, reset_env),
		cmocka_unit_test_setup(test_oom, reset_env),
		cmocka_unit_test_setup(test_peermem_available, reset_env),
		cmocka_unit_test_setup(test_peermem_sync_memops_error, reset_env),
		cmocka_unit_test_setup(test_peermem_without_pd, reset_env),
		cmocka_unit_test_setup(test_write_read, reset_env),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
