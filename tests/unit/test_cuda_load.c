/*
 * The CUDA loader (common/mem/cuda_*.c) against the fake driver
 * (tests/fake_cuda/libcuda.so.1): finding and loading the driver, its errors
 * and versions, picking a GPU, contexts. Without CUDA headers, the stubs of
 * cuda_none.c. test_cuda_mem.c has the memory, export and copy calls.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

#ifdef HAVE_CUDA

#include "cuda_gpu0.h"

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
				 "device is detected; driver 13.0, " FAKE_CUDA_LIB ")");
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
	assert_int_equal(v, 13000);
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
	assert_string_equal(why, "bad GPU 'gpu0': expected an ordinal (0..2), a PCI bus id "
				 "(DDDD:BB:DD.F) or a UUID (GPU-... or MIG-...)");
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

/* Without a current context the driver refuses memory calls (CUDA_ERROR_INVALID_CONTEXT). */
static void test_no_context(void **state)
{
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[256] = "";
	const char *how;
	uint64_t d;
	int fd;

	(void)state;
	/* Writes not ordered (0), so that the flush is called and needs the context. */
	setenv("GDRPERF_FAKE_CUDA_WRITES_ORDERING", "0", 1);
	cu = open_gpu0(&gpu);
	assert_int_equal(gdr_cuda_alloc(cu, 2u << 20, &d, why, sizeof(why)), 0);
	/* gpu_close makes no context current on this thread. */
	gdr_cuda_gpu_close(cu, &gpu);
	assert_int_equal(gdr_cuda_dmabuf_fd(cu, d, 2u << 20, &fd, why, sizeof(why)), -EIO);
	assert_non_null(strstr(why, "CUDA_ERROR_INVALID_CONTEXT"));
	assert_int_equal(gdr_cuda_htod(cu, d, why, 8), -EIO);
	assert_non_null(strstr(gdr_cuda_last_error(cu), "CUDA_ERROR_INVALID_CONTEXT"));
	assert_int_equal(gdr_cuda_flush_rdma_writes(cu, &gpu, &how), -EIO);
	assert_non_null(strstr(gdr_cuda_last_error(cu), "cuFlushGPUDirectRDMAWrites: "
							"CUDA_ERROR_INVALID_CONTEXT"));
	assert_int_equal(gdr_cuda_gpu_open(cu, &gpu, why, sizeof(why)), 0);
	gdr_cuda_free(cu, d);
	close_gpu(cu, &gpu);
}

/* --gpu=GPU-... / MIG-...: selected by what cuDeviceGetUuid_v2 reports. */
static void test_uuid(void **state)
{
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	char why[512] = "";

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_DEVICES", "2", 1);
	setenv("GDRPERF_FAKE_CUDA_UUIDS",
	       "6a1c2f3e-0000-1111-2222-333344445555,9B8A7C6D5E4F30211203F4E5D6C7B8A9", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_gpu_info(cu, 0, &gpu, why, sizeof(why)), 0);
	assert_string_equal(gpu.uuid, "GPU-6a1c2f3e-0000-1111-2222-333344445555");
	assert_int_equal(gdr_cuda_find_gpu(cu, "GPU-9b8a7c6d-5e4f-3021-1203-f4e5d6c7b8a9", &gpu,
					   why, sizeof(why)),
			 0);
	assert_int_equal(gpu.ordinal, 1);
	/* Any case; under MIG the instance's UUID is what the driver reports. */
	assert_int_equal(gdr_cuda_find_gpu(cu, "MIG-6A1C2F3E-0000-1111-2222-333344445555", &gpu,
					   why, sizeof(why)),
			 0);
	assert_int_equal(gpu.ordinal, 0);
	assert_int_equal(gdr_cuda_find_gpu(cu, "GPU-6a1c2f3e-0000-1111-2222-333344445556", &gpu,
					   why, sizeof(why)),
			 -ENODEV);
	assert_string_equal(why, "no GPU with UUID GPU-6a1c2f3e-0000-1111-2222-333344445556 (GPUs: "
				 "GPU-6a1c2f3e-0000-1111-2222-333344445555, "
				 "GPU-9b8a7c6d-5e4f-3021-1203-f4e5d6c7b8a9)");
	assert_int_equal(gdr_cuda_find_gpu(cu, "GPU-xyz", &gpu, why, sizeof(why)), -ENODEV);
	gdr_cuda_unload(cu);
	/* CUDA_VISIBLE_DEVICES keeps working: ordinals count the visible GPUs, UUIDs still match.
	 */
	setenv("CUDA_VISIBLE_DEVICES", "GPU-9b8a7c6d,0", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_find_gpu(cu, "0", &gpu, why, sizeof(why)), 0);
	assert_string_equal(gpu.uuid, "GPU-9b8a7c6d-5e4f-3021-1203-f4e5d6c7b8a9");
	assert_int_equal(gdr_cuda_find_gpu(cu, "GPU-6a1c2f3e-0000-1111-2222-333344445555", &gpu,
					   why, sizeof(why)),
			 0);
	assert_int_equal(gpu.ordinal, 1);
	gdr_cuda_unload(cu);
	setenv("CUDA_VISIBLE_DEVICES", "1,7,0", 1);
	assert_int_equal(gdr_cuda_load(&cu, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_find_gpu(cu, "1", &gpu, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "GPU 1 does not exist (1 GPU: 0..0)");
	gdr_cuda_unload(cu);
	unsetenv("CUDA_VISIBLE_DEVICES");
	assert_true(gdr_cuda_uuid_match("GPU-6a1c2f3e00001111-2222-333344445555",
					"GPU-6a1c2f3e-0000-1111-2222-333344445555"));
	assert_false(gdr_cuda_uuid_match("0", "GPU-6a1c2f3e-0000-1111-2222-333344445555"));
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
		cmocka_unit_test_setup(test_no_context, reset_env),
		cmocka_unit_test_setup(test_uuid, reset_env),
		cmocka_unit_test_setup(test_old_driver, reset_env),
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

/* Every other call of cuda_none.c: -ENOSYS, the reason where it takes one, outputs cleared. */
static void test_without_cuda_calls(void **state)
{
	const char *no = "built without CUDA headers (configure --with-cuda=DIR)";
	struct gdr_cuda *cu = NULL;
	struct gdr_gpu gpu;
	struct gdr_cuda_vmm vmm;
	gdr_cuda_stream_t st = (void *)1;
	gdr_cuda_event_t ev = (void *)1;
	const char *how = NULL;
	uint64_t dptr = 1;
	size_t gran = 1;
	void *ptr = (void *)1;
	char why[256], buf[8] = "x";
	int n = 1, fd = 7, on = 1;

	(void)state;
	memset(&gpu, 0, sizeof(gpu));
	assert_int_equal(gdr_cuda_driver_version(cu, &n), -ENOSYS);
	assert_int_equal(n, 0);
	n = 1;
	assert_int_equal(gdr_cuda_device_count(cu, &n), -ENOSYS);
	assert_int_equal(n, 0);
#define WHY(call)                                                                                  \
	do {                                                                                       \
		why[0] = '\0';                                                                     \
		assert_int_equal(call, -ENOSYS);                                                   \
		assert_string_equal(why, no);                                                      \
	} while (0)
	WHY(gdr_cuda_gpu_info(cu, 0, &gpu, why, sizeof(why)));
	WHY(gdr_cuda_find_gpu(cu, "0", &gpu, why, sizeof(why)));
	WHY(gdr_cuda_gpu_open(cu, &gpu, why, sizeof(why)));
	WHY(gdr_cuda_alloc(cu, 4096, &dptr, why, sizeof(why)));
	assert_int_equal(dptr, 0);
	WHY(gdr_cuda_set_sync_memops(cu, 0, why, sizeof(why)));
	WHY(gdr_cuda_get_sync_memops(cu, 0, &on, why, sizeof(why)));
	assert_int_equal(on, 0);
	WHY(gdr_cuda_dmabuf_fd(cu, 0, 4096, &fd, why, sizeof(why)));
	assert_int_equal(fd, -1);
	fd = 7;
	WHY(gdr_cuda_dmabuf_export(cu, 0, 4096, 1, &fd, why, sizeof(why)));
	assert_int_equal(fd, -1);
	WHY(gdr_cuda_host_alloc(cu, 4096, &ptr, why, sizeof(why)));
	assert_null(ptr);
	WHY(gdr_cuda_vmm_granularity(cu, &gpu, &gran, why, sizeof(why)));
	assert_int_equal(gran, 0);
	memset(&vmm, 0xff, sizeof(vmm));
	WHY(gdr_cuda_vmm_alloc(cu, &gpu, 4096, &vmm, why, sizeof(why)));
	assert_int_equal(vmm.va, 0);
	assert_int_equal(vmm.len, 0);
#undef WHY
	/* A reason cut to the buffer, as gdr_strlcpy cuts. */
	assert_int_equal(gdr_cuda_gpu_open(cu, &gpu, buf, sizeof(buf)), -ENOSYS);
	assert_string_equal(buf, "built w");
	assert_int_equal(gdr_cuda_make_current(cu, &gpu), -ENOSYS);
	assert_int_equal(gdr_cuda_page_size(cu), 64 * 1024);
	assert_int_equal(gdr_cuda_htod(cu, 0, buf, 1), -ENOSYS);
	assert_int_equal(gdr_cuda_dtoh(cu, buf, 0, 1), -ENOSYS);
	assert_int_equal(gdr_cuda_stream_create(cu, &st), -ENOSYS);
	assert_null(st);
	assert_int_equal(gdr_cuda_stream_sync(cu, st), -ENOSYS);
	assert_int_equal(gdr_cuda_htod_async(cu, 0, buf, 1, st), -ENOSYS);
	assert_int_equal(gdr_cuda_dtoh_async(cu, buf, 0, 1, st), -ENOSYS);
	assert_int_equal(gdr_cuda_event_create(cu, &ev), -ENOSYS);
	assert_null(ev);
	assert_int_equal(gdr_cuda_event_record(cu, ev, st), -ENOSYS);
	assert_int_equal(gdr_cuda_event_query(cu, ev), -ENOSYS);
	assert_int_equal(gdr_cuda_event_sync(cu, ev), -ENOSYS);
	assert_int_equal(gdr_cuda_flush_rdma_writes(cu, &gpu, &how), -ENOSYS);
	assert_string_equal(how, no);
	assert_string_equal(gdr_cuda_last_error(cu), no);
	assert_string_equal(gdr_cuda_getproc_abi(cu), "none");
	/* The closes are no-ops on anything; the VMM record is zeroed. */
	memset(&vmm, 0xff, sizeof(vmm));
	gdr_cuda_vmm_free(cu, &vmm);
	assert_int_equal(vmm.va, 0);
	gdr_cuda_free(cu, 1);
	gdr_cuda_host_free(cu, buf);
	gdr_cuda_stream_destroy(cu, st);
	gdr_cuda_event_destroy(cu, ev);
	gdr_cuda_gpu_close(cu, &gpu);
	gdr_cuda_unload(cu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_cuda),
		cmocka_unit_test(test_without_cuda_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
