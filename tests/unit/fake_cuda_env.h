/*
 * The settings of the fake driver (tests/fake_cuda/fake_cuda.c reads them
 * from the environment), cleared before every case that loads it so that no
 * case inherits another's; GDRPERF_LIBCUDA then points at the fake.
 * FAKE_CUDA_LIB comes from mk/cuda.am (CUDA_TEST_CPPFLAGS).
 */
#ifndef GDR_FAKE_CUDA_ENV_H
#define GDR_FAKE_CUDA_ENV_H

#include <stdlib.h>

static inline void fake_cuda_reset_env(void)
{
	static const char *const vars[] = {
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
		"GDRPERF_FAKE_CUDA_VMM_GDR",
		"GDRPERF_FAKE_CUDA_DMABUF_PCIE",
		"GDRPERF_FAKE_CUDA_WRITES_ORDERING",
		"GDRPERF_FAKE_CUDA_FLUSH_OPTIONS",
		"GDRPERF_FAKE_CUDA_NO_ATTR",
		"GDRPERF_FAKE_CUDA_UUIDS",
		"CUDA_VISIBLE_DEVICES",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	setenv("GDRPERF_LIBCUDA", FAKE_CUDA_LIB, 1);
}

#endif
