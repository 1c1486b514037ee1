/*
 * What test_cuda_load.c and test_cuda_mem.c share: the fake driver's
 * settings cleared before every case, and its GPU 0 opened and closed.
 * Include after cmocka_common.h (fail_msg).
 */
#ifndef GDR_CUDA_GPU0_H
#define GDR_CUDA_GPU0_H

#include "cuda.h"
#include "fake_cuda_env.h"

static inline int reset_env(void **state)
{
	(void)state;
	fake_cuda_reset_env();
	return 0;
}

/* Load the fake and open GPU 0. */
static inline struct gdr_cuda *open_gpu0(struct gdr_gpu *gpu)
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

static inline void close_gpu(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
	gdr_cuda_gpu_close(cu, gpu);
	gdr_cuda_unload(cu);
}

#endif
