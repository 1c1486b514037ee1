/*
 * The CUDA loader (common/cuda.c) against the fake driver
 * (tests/fake_cuda/libcuda.so.1), and the fake's own semantics that the
 * bounce pipeline relies on: in-order async copies, honest events.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda.h"
#include "util.h"

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

static int reset_env(void **state)
{
	(void)state;
	for (size_t i = 0; i < GDR_ARRAY_SIZE(fake_vars); i++)
		unsetenv(fake_vars[i]);
	setenv("GDRPERF_LIBCUDA", FAKE_CUDA_LIB, 1);
	return 0;
}

/* Load the fake and open GPU 0. */
static struct gdr_cuda *open_gpu0(struct gdr_gpu *gpu)
{
	struct gdr_cuda *cu = NULL;
	char why[256] = "";

	if (gdr_cuda_load(&cu, why, sizeof(why)))
		fail_msg("load: %s", why);
	if (gdr_cuda_find_gpu(cu, "0", gpu, why, sizeof(why)) ||
	    gdr_cuda_gpu_open(cu, gpu, why, sizeof(why)))
		fail_msg("GPU 0: %s", why);
	return cu;
}

static void close_gpu(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
	gdr_cuda_gpu_close(cu, gpu);
	gdr_cuda_unload(cu);
}

static void test_no_library(void **state)
{
	struct gdr_cuda *cu = (void *)1;
	char why[256];

	(void)state;
	setenv("GDRPERF_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), -ENOENT);
	assert_null(cu);
	assert_ptr_equal(strstr(why, "no CUDA driver (/nonexistent/libcuda.so.1: "), why);
	assert_non_null(strstr(why, "No such file"));
}

static void test_no_getproc(void **state)
{
	struct gdr_cuda *cu;
	char why[256];

	(void)state;
	/* A real library that is not a CUDA driver. */
	setenv("GDRPERF_LIBCUDA", "libc.so.6", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), -ENOSYS);
	assert_string_equal(why, "no CUDA driver (libc.so.6: no cuGetProcAddress: driver older "
				 "than CUDA 11.3 or not a CUDA driver)");
}

static void test_zero_devices(void **state)
{
	struct gdr_cuda *cu;
	char why[256];

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_DEVICES", "0", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable "
				 "device is detected; driver 12.4, " FAKE_CUDA_LIB ")");
}

static void test_init_error(void **state)
{
	struct gdr_cuda *cu;
	char why[256];

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuInit=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 1);
	setenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION", "12080", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), -EIO);
	assert_non_null(strstr(why, "CUDA driver unusable (cuInit: "
				    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported "
				    "display driver / cuda driver combination; driver 12.8"));
}

static void test_getproc_v2_only(void **state)
{
	struct gdr_cuda *cu;
	char why[256] = "";
	int v = 0;

	(void)state;
	setenv("GDRPERF_LIBCUDA", FAKE_CUDA_V2_LIB, 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), 0);
	assert_string_equal(gdr_cuda_getproc_abi(cu), "cuGetProcAddress_v2");
	assert_int_equal(gdr_cuda_driver_version(cu, &v), 0);
	assert_int_equal(v, 12040);
	gdr_cuda_unload(cu);

	setenv("GDRPERF_LIBCUDA", FAKE_CUDA_LIB, 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), 0);
	assert_string_equal(gdr_cuda_getproc_abi(cu), "cuGetProcAddress (v1)");
	gdr_cuda_unload(cu);
}

static void test_find_gpu(void **state)
{
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	int n = 0;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_DEVICES", "3", 1);
	setenv("GDRPERF_FAKE_CUDA_NAMES", "NVIDIA H200,NVIDIA H100 80GB HBM3,NVIDIA A100", 1);
	setenv("GDRPERF_FAKE_CUDA_BUS_IDS", "0000:3b:00.0,0001:86:00.0,AF:00.0", 1);
	setenv("GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED", "1,0", 1);
	setenv("GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED", "0,1,1", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_device_count(cu, &n), 0);
	assert_int_equal(n, 3);

	assert_int_equal(gdr_cuda_find_gpu(cu, "1", &gpu, why, sizeof(why)), 0);
	assert_int_equal(gpu.ordinal, 1);
	assert_string_equal(gpu.bus_id, "0001:86:00.0");
	assert_string_equal(gpu.name, "NVIDIA H100 80GB HBM3");
	assert_int_equal(gpu.dmabuf_supported, 0);
	assert_int_equal(gpu.gdr_supported, 1);
	assert_null(gpu.ctx);

	/* Full bus id in any case, and the short form as domain 0. */
	assert_int_equal(gdr_cuda_find_gpu(cu, "0000:3B:00.0", &gpu, why, sizeof(why)), 0);
	assert_int_equal(gpu.ordinal, 0);
	assert_int_equal(gpu.dmabuf_supported, 1);
	assert_int_equal(gpu.gdr_supported, 0);
	assert_int_equal(gdr_cuda_find_gpu(cu, "af:00.0", &gpu, why, sizeof(why)), 0);
	assert_int_equal(gpu.ordinal, 2);
	assert_string_equal(gpu.bus_id, "0000:af:00.0");
	/* The last value of a per-device list repeats. */
	assert_int_equal(gpu.dmabuf_supported, 0);
	assert_int_equal(gdr_cuda_find_gpu(cu, "0001:86:00.0", &gpu, why, sizeof(why)), 0);
	assert_int_equal(gpu.ordinal, 1);
	/* nvidia-smi writes eight domain digits. */
	assert_int_equal(gdr_cuda_find_gpu(cu, "00000000:3B:00.0", &gpu, why, sizeof(why)), 0);
	assert_int_equal(gpu.ordinal, 0);

	assert_int_equal(gdr_cuda_find_gpu(cu, "3", &gpu, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "GPU 3 does not exist (3 GPUs: 0..2)");
	assert_int_equal(gdr_cuda_find_gpu(cu, "-1", &gpu, why, sizeof(why)), -ENODEV);
	assert_int_equal(gdr_cuda_find_gpu(cu, "86:00.0", &gpu, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no GPU at PCI bus id 0000:86:00.0 (GPUs: 0000:3b:00.0, "
				 "0001:86:00.0, 0000:af:00.0)");
	assert_int_equal(gdr_cuda_find_gpu(cu, "gpu0", &gpu, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "bad GPU 'gpu0': expected an ordinal (0..2) or a PCI bus id "
				 "(DDDD:BB:DD.F)");
	assert_int_equal(gdr_cuda_find_gpu(cu, "0000:3b:00.8", &gpu, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_cuda_find_gpu(cu, "", &gpu, why, sizeof(why)), -EINVAL);
	gdr_cuda_unload(cu);
}

static void test_error_strings(void **state)
{
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	uint64_t d = 0;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1M", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), 0);
	/* No context current on this thread yet, as on a real GPU. */
	assert_int_equal(gdr_cuda_alloc(cu, 4096, &d, why, sizeof(why)), -EIO);
	assert_string_equal(why, "cuMemAlloc(4 KiB): CUDA_ERROR_INVALID_CONTEXT: invalid device "
				 "context");
	assert_string_equal(gdr_cuda_last_error(cu), why);
	gdr_cuda_unload(cu);

	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, 2u << 20, &d, why, sizeof(why)), -ENOMEM);
	assert_string_equal(why, "cuMemAlloc(2 MiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory");
	assert_int_equal(d, 0);
	assert_int_equal(gdr_cuda_alloc(cu, 1u << 20, &d, why, sizeof(why)), 0);
	assert_int_not_equal(d, 0);
	/* Copies past the end of an allocation are refused, not silently done. */
	char buf[16] = { 0 };
	assert_int_equal(gdr_cuda_htod(cu, d + (1u << 20) - 8, buf, sizeof(buf)), -EINVAL);
	assert_non_null(strstr(gdr_cuda_last_error(cu), "cuMemcpyHtoD("));
	assert_non_null(strstr(gdr_cuda_last_error(cu), "CUDA_ERROR_INVALID_VALUE: invalid "
							"argument"));
	gdr_cuda_free(cu, d);
	/* Freed: the whole limit is available again. */
	assert_int_equal(gdr_cuda_alloc(cu, 1u << 20, &d, why, sizeof(why)), 0);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

static off_t fd_size(int fd)
{
	return lseek(fd, 0, SEEK_END);
}

static void test_dmabuf_fd(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	uint64_t d;
	int fd = -1;

	(void)state;
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_page_size(cu), 64 * 1024);
	assert_int_equal(gdr_cuda_alloc(cu, 1u << 20, &d, why, sizeof(why)), 0);
	assert_int_equal(d % (64 * 1024), 0);
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d, 1u << 20, &fd, why, sizeof(why)), 0);
	assert_true(fd >= 0);
	assert_int_equal(fd_size(fd), 1u << 20);
	close(fd);
	/* A host-page-aligned sub-range is fine. */
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d + page, 4 * page, &fd, why, sizeof(why)), 0);
	assert_int_equal(fd_size(fd), 4 * page);
	close(fd);
	/* Unaligned start or length, and ranges outside the allocation, are refused. */
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d + 256, page, &fd, why, sizeof(why)), -EINVAL);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(why, "cuMemGetHandleForAddressRange(0x"));
	assert_non_null(strstr(why, "CUDA_ERROR_INVALID_VALUE: invalid argument"));
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d, 1000, &fd, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d, 2u << 20, &fd, why, sizeof(why)), -EINVAL);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);

	setenv("GDRPERF_FAKE_CUDA_DMABUF", "CUDA_ERROR_NOT_SUPPORTED", 1);
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, 1u << 20, &d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d, 1u << 20, &fd, why, sizeof(why)), -EOPNOTSUPP);
	assert_non_null(strstr(why, "CUDA_ERROR_NOT_SUPPORTED: operation not supported"));
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

static void test_old_driver(void **state)
{
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	uint64_t d;
	int fd;

	(void)state;
	/* 11.4 has no cuMemGetHandleForAddressRange: load still works, export says why. */
	setenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION", "11040", 1);
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, 1u << 16, &d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d, 1u << 16, &fd, why, sizeof(why)), -EOPNOTSUPP);
	assert_string_equal(why, "CUDA driver 11.4 has no cuMemGetHandleForAddressRange (DMA-BUF "
				 "export needs a CUDA >= 11.7 driver)");
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

static void test_sync_memops(void **state)
{
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	char host[64];
	uint64_t d;
	int on = -1;

	(void)state;
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, 1u << 16, &d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_get_sync_memops(cu, d, &on, why, sizeof(why)), 0);
	assert_int_equal(on, 0);
	assert_int_equal(gdr_cuda_set_sync_memops(cu, d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_get_sync_memops(cu, d, &on, why, sizeof(why)), 0);
	assert_int_equal(on, 1);
	/* Host memory is not a device allocation. */
	assert_int_equal(gdr_cuda_set_sync_memops(cu, (uintptr_t)host, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "cuPointerSetAttribute(0x"));
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

/*
 * Two copies queued on one stream run in order on another thread: the
 * event is not complete, and the second copy's destination untouched,
 * until the worker got there.
 */
static void test_async_order_and_events(void **state)
{
	const size_t len = 1u << 16;
	gdr_cuda_stream_t s;
	gdr_cuda_event_t e, never;
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	unsigned char *a, *b;
	uint64_t d;
	double t0;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_COPY_DELAY_US", "150000", 1);
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, len, &d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_host_alloc(cu, len, (void **)&a, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_host_alloc(cu, len, (void **)&b, why, sizeof(why)), 0);
	memset(a, 0x11, len);
	memset(b, 0, len);
	assert_int_equal(gdr_cuda_stream_create(cu, &s), 0);
	assert_int_equal(gdr_cuda_event_create(cu, &e), 0);
	assert_int_equal(gdr_cuda_event_create(cu, &never), 0);
	/* Never recorded: complete, as the driver says. */
	assert_int_equal(gdr_cuda_event_query(cu, never), 1);

	t0 = gdr_now_s();
	assert_int_equal(gdr_cuda_htod_async(cu, d, a, len, s), 0);
	assert_int_equal(gdr_cuda_dtoh_async(cu, b, d, len, s), 0);
	assert_int_equal(gdr_cuda_event_record(cu, e, s), 0);
	/* Enqueueing does not wait for the copies. */
	assert_true(gdr_now_s() - t0 < 0.1);
	assert_int_equal(gdr_cuda_event_query(cu, e), 0);
	assert_int_equal(b[0], 0);
	assert_int_equal(gdr_cuda_event_sync(cu, e), 0);
	assert_true(gdr_now_s() - t0 >= 0.29);
	assert_int_equal(gdr_cuda_event_query(cu, e), 1);
	assert_int_equal(b[0], 0x11);
	assert_int_equal(b[len - 1], 0x11);

	/* Re-recording makes it pending again until the stream reaches it. */
	memset(a, 0x22, len);
	assert_int_equal(gdr_cuda_htod_async(cu, d, a, len, s), 0);
	assert_int_equal(gdr_cuda_event_record(cu, e, s), 0);
	assert_int_equal(gdr_cuda_event_query(cu, e), 0);
	assert_int_equal(gdr_cuda_stream_sync(cu, s), 0);
	assert_int_equal(gdr_cuda_event_query(cu, e), 1);
	assert_int_equal(gdr_cuda_dtoh(cu, b, d, len), 0);
	assert_int_equal(b[len / 2], 0x22);

	gdr_cuda_event_destroy(cu, never);
	gdr_cuda_event_destroy(cu, e);
	gdr_cuda_stream_destroy(cu, s);
	gdr_cuda_host_free(cu, a);
	gdr_cuda_host_free(cu, b);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

/* Two streams overlap: what the bounce pipeline's speed-up rests on. */
static void test_streams_overlap(void **state)
{
	const size_t len = 4096;
	gdr_cuda_stream_t s[2];
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	void *h;
	uint64_t d;
	double t0, dt;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_COPY_DELAY_US", "100000", 1);
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, 2 * len, &d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_host_alloc(cu, 2 * len, &h, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_stream_create(cu, &s[0]), 0);
	assert_int_equal(gdr_cuda_stream_create(cu, &s[1]), 0);
	t0 = gdr_now_s();
	assert_int_equal(gdr_cuda_htod_async(cu, d, h, len, s[0]), 0);
	assert_int_equal(gdr_cuda_htod_async(cu, d + len, (char *)h + len, len, s[1]), 0);
	assert_int_equal(gdr_cuda_stream_sync(cu, s[0]), 0);
	assert_int_equal(gdr_cuda_stream_sync(cu, s[1]), 0);
	dt = gdr_now_s() - t0;
	assert_true(dt >= 0.099);
	assert_true(dt < 0.19);
	gdr_cuda_stream_destroy(cu, s[0]);
	gdr_cuda_stream_destroy(cu, s[1]);
	gdr_cuda_host_free(cu, h);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

/* Pageable host memory makes an "async" copy synchronous, as on a GPU. */
static void test_async_pageable_is_sync(void **state)
{
	const size_t len = 4096;
	gdr_cuda_stream_t s;
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	unsigned char *h = malloc(len);
	uint64_t d;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_COPY_DELAY_US", "20000", 1);
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, len, &d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_stream_create(cu, &s), 0);
	memset(h, 0x33, len);
	assert_int_equal(gdr_cuda_htod(cu, d, h, len), 0);
	memset(h, 0, len);
	assert_int_equal(gdr_cuda_dtoh_async(cu, h, d, len, s), 0);
	assert_int_equal(h[0], 0x33);
	gdr_cuda_stream_destroy(cu, s);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
	free(h);
}

static void test_bandwidth_cap(void **state)
{
	const size_t len = 8u << 20;
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	void *h;
	uint64_t d;
	double t0, dt;

	(void)state;
	/* 8 Gb/s = 1 GB/s: 8 MiB take at least 8.4 ms. */
	setenv("GDRPERF_FAKE_CUDA_COPY_GBPS", "8", 1);
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, len, &d, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_host_alloc(cu, len, &h, why, sizeof(why)), 0);
	t0 = gdr_now_s();
	assert_int_equal(gdr_cuda_htod(cu, d, h, len), 0);
	dt = gdr_now_s() - t0;
	assert_true(dt >= len / 1e9);
	gdr_cuda_host_free(cu, h);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

/* Each thread needs the context made current; the fake insists like a GPU does. */
static void test_make_current(void **state)
{
	struct gdr_cuda *cu;
	struct gdr_gpu gpu, closed = { .ordinal = 1, .bus_id = "0000:11:00.0" };
	char why[256];
	uint64_t d = 0;

	(void)state;
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_make_current(cu, &closed), -EINVAL);
	assert_string_equal(gdr_cuda_last_error(cu), "GPU 1 (0000:11:00.0): not opened");
	assert_int_equal(gdr_cuda_make_current(cu, &gpu), 0);
	assert_int_equal(gdr_cuda_alloc(cu, 4096, &d, why, sizeof(why)), 0);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
	assert_null(gpu.ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_no_library, reset_env),
		cmocka_unit_test_setup(test_no_getproc, reset_env),
		cmocka_unit_test_setup(test_zero_devices, reset_env),
		cmocka_unit_test_setup(test_init_error, reset_env),
		cmocka_unit_test_setup(test_getproc_v2_only, reset_env),
		cmocka_unit_test_setup(test_find_gpu, reset_env),
		cmocka_unit_test_setup(test_error_strings, reset_env),
		cmocka_unit_test_setup(test_dmabuf_fd, reset_env),
		cmocka_unit_test_setup(test_old_driver, reset_env),
		cmocka_unit_test_setup(test_sync_memops, reset_env),
		cmocka_unit_test_setup(test_async_order_and_events, reset_env),
		cmocka_unit_test_setup(test_streams_overlap, reset_env),
		cmocka_unit_test_setup(test_async_pageable_is_sync, reset_env),
		cmocka_unit_test_setup(test_bandwidth_cap, reset_env),
		cmocka_unit_test_setup(test_make_current, reset_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !HAVE_CUDA */

static void test_without_cuda(void **state)
{
	struct gdr_cuda *cu = (void *)1;
	char why[256];

	(void)state;
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), -ENOSYS);
	assert_null(cu);
	assert_string_equal(why, "built without CUDA headers (configure --with-cuda=DIR)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_cuda),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
