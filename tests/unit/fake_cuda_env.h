/*
 * The settings of the fake driver (tests/fake_cuda/fake_cfg.c reads them
 * from the environment), cleared before every case that loads it so that no
 * case inherits another's; GDRPERF_LIBCUDA then points at the fake.
 * FAKE_CUDA_LIB comes from mk/cuda.am (CUDA_TEST_CPPFLAGS). And the memory
 * tests' fixture: the fake's GPU 0 opened, with a gdr_mem_env around it.
 * Include after cmocka_common.h (fail_msg).
 */
#ifndef GDR_FAKE_CUDA_ENV_H
#define GDR_FAKE_CUDA_ENV_H

#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "mem.h"

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
		"GDRPERF_FAKE_CUDA_DMABUF_STRICT",
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

struct fake_gpu {
	struct gdr_cuda *cu;
	struct gdr_gpu gpu;
	struct gdr_mem_env env;
};

/* cmocka setup: the fake cleared, with one H200 at 0000:3b:00.0. */
static inline int fake_gpu_reset_env(void **state)
{
	(void)state;
	fake_cuda_reset_env();
	setenv("GDRPERF_FAKE_CUDA_NAMES", "NVIDIA H200", 1);
	setenv("GDRPERF_FAKE_CUDA_BUS_IDS", "0000:3b:00.0", 1);
	return 0;
}

/* Bring up driver and GPU 0 with the environment the test has set; sysfs under root. */
static inline void fake_gpu_up(struct fake_gpu *f, const char *root)
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

static inline void fake_gpu_down(struct fake_gpu *f)
{
	gdr_cuda_gpu_close(f->cu, &f->gpu);
	gdr_cuda_unload(f->cu);
}

#endif
