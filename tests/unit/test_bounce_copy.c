/*
 * The bounce path's SM copy (--bounce-copy=sm) on the fake driver: the PTX
 * the binary ships loads (cuModuleLoadData) and its kernel runs
 * (cuLaunchKernel) both ways between GPU memory and mapped pinned host
 * memory, in stream order with events; the fake refuses what a real driver
 * refuses (a bad image, an unknown entry, a bad geometry, parameters given
 * neither or both ways, unreachable memory). The SM backend's own steps:
 * test_mem_bounce.c.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "cuda.h"
#include "mem.h"
#include "util.h"

/* What the binary ships: PTX ISA 7.0 (CUDA 11.0 drivers JIT it), the entry, three u64s. */
static void test_ptx_text(void **state)
{
	const char *e;

	(void)state;
	assert_non_null(strstr(gdr_bounce_copy_ptx, "\n.version 7.0\n"));
	assert_non_null(strstr(gdr_bounce_copy_ptx, "\n.target sm_75\n"));
	e = strstr(gdr_bounce_copy_ptx, ".visible .entry " GDR_COPY_KERNEL "(");
	assert_non_null(e);
	assert_non_null(strstr(e, ".param .u64 gdr_bounce_copy_param_0,"));
	assert_non_null(strstr(e, ".param .u64 gdr_bounce_copy_param_1,"));
	assert_non_null(strstr(e, ".param .u64 gdr_bounce_copy_param_2\n)"));
	/* 16-byte loads and stores in the body. */
	assert_non_null(strstr(e, "ld.global.v4.u32"));
	assert_non_null(strstr(e, "st.global.v4.u32"));
}

#ifdef HAVE_CUDA

#include <cuda.h> /* the toolkit's: the fake's entry points, called directly */

#include "fake_cuda_env.h"

static void up(struct fake_gpu *f)
{
	fake_gpu_up(f, "/");
	f->env.bounce_chunk = 512 * 1024;
	f->env.bounce_slots = 4;
	f->env.bounce_copy = GDR_BOUNCE_COPY_SM;
	f->env.bounce_blocks = 2;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

/*
 * GPU -> mapped ring -> GPU by the kernel, one stream, an event after each:
 * aligned and misaligned addresses, tails, 1 byte; the second copy reads
 * what the first wrote, so the stream must order them.
 */
static void test_kernel_copies(void **state)
{
	static const struct {
		size_t off, len;
	} cases[] = { { 0, 1 << 20 }, { 0, 17 }, { 3, 4096 }, { 16, 100000 }, { 5, 1 }, { 0, 0 } };
	struct fake_gpu f;
	struct gdr_cuda_kernel k;
	gdr_cuda_stream_t s;
	gdr_cuda_event_t ev;
	uint64_t a, b, ring_d;
	void *ring;
	char why[256] = "";
	uint8_t *want = malloc(1 << 20);

	(void)state;
	assert_non_null(want);
	up(&f);
	assert_int_equal(gdr_cuda_copy_kernel_load(f.cu, &k, why, sizeof(why)), 0);
	assert_non_null(k.func);
	assert_int_equal(gdr_cuda_alloc(f.cu, 2 << 20, &a, why, sizeof(why)), 0);
	assert_int_equal(gdr_cuda_alloc(f.cu, 2 << 20, &b, why, sizeof(why)), 0);
	assert_int_equal(
	    gdr_cuda_host_alloc_mapped(f.cu, 2 << 20, &ring, &ring_d, why, sizeof(why)), 0);
	/* Unified addressing: the device sees the ring at its host address. */
	assert_int_equal(ring_d, (uint64_t)(uintptr_t)ring);
	assert_int_equal(gdr_cuda_stream_create(f.cu, &s), 0);
	assert_int_equal(gdr_cuda_event_create(f.cu, &ev), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t off = cases[i].off, len = cases[i].len;

		fill(want, len, (unsigned int)i);
		assert_int_equal(gdr_cuda_htod(f.cu, a + off, want, len), 0);
		memset((void *)(uintptr_t)b, 0xee, 2 << 20);
		/* D2H as the producer does it, then H2D as the consumer does. */
		assert_int_equal(
		    gdr_cuda_copy_kernel_launch(f.cu, &k, ring_d + off, a + off, len, 2, s), 0);
		assert_int_equal(
		    gdr_cuda_copy_kernel_launch(f.cu, &k, b + off + 1, ring_d + off, len, 16, s),
		    0);
		assert_int_equal(gdr_cuda_event_record(f.cu, ev, s), 0);
		assert_int_equal(gdr_cuda_event_sync(f.cu, ev), 0);
		assert_int_equal(gdr_cuda_event_query(f.cu, ev), 1);
		assert_memory_equal((uint8_t *)ring + off, want, len);
		assert_memory_equal((uint8_t *)(uintptr_t)b + off + 1, want, len);
		/* Nothing outside the range moved. */
		assert_int_equal(((uint8_t *)(uintptr_t)b)[off], 0xee);
		assert_int_equal(((uint8_t *)(uintptr_t)b)[off + 1 + len], 0xee);
	}
	assert_int_equal(gdr_cuda_stream_sync(f.cu, s), 0);
	gdr_cuda_event_destroy(f.cu, ev);
	gdr_cuda_stream_destroy(f.cu, s);
	gdr_cuda_host_free(f.cu, ring);
	gdr_cuda_free(f.cu, a);
	gdr_cuda_free(f.cu, b);
	gdr_cuda_copy_kernel_unload(f.cu, &k);
	assert_null(k.module);
	gdr_cuda_copy_kernel_unload(f.cu, &k);
	fake_gpu_down(&f);
	free(want);
}

/* The fake's entry points, as a loader gets them. */
struct api {
	CUresult (*load)(CUmodule *, const void *);
	CUresult (*unload)(CUmodule);
	CUresult (*get)(CUfunction *, CUmodule, const char *);
	CUresult (*launch)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
			   unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
	CUresult (*devptr)(CUdeviceptr *, void *, unsigned int);
};

static void api_get(struct api *api)
{
	void *lib = dlopen(FAKE_CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
	CUresult (*gp)(const char *, void **, int, cuuint64_t);

	assert_non_null(lib);
	*(void **)&gp = dlsym(lib, "cuGetProcAddress");
	assert_non_null(gp);
	assert_int_equal(gp("cuModuleLoadData", (void **)&api->load, 2000, 0), CUDA_SUCCESS);
	assert_int_equal(gp("cuModuleUnload", (void **)&api->unload, 2000, 0), CUDA_SUCCESS);
	assert_int_equal(gp("cuModuleGetFunction", (void **)&api->get, 2000, 0), CUDA_SUCCESS);
	assert_int_equal(gp("cuLaunchKernel", (void **)&api->launch, 4000, 0), CUDA_SUCCESS);
	assert_int_equal(gp("cuMemHostGetDevicePointer", (void **)&api->devptr, 3020, 0),
			 CUDA_SUCCESS);
}

static void test_fake_refuses(void **state)
{
	static const char other[] =
	    ".version 7.0\n.target sm_75\n.address_size 64\n"
	    ".visible .entry gdr_bounce_copy(\n"
	    "\t.param .u64 p0,\n\t.param .u64 p1,\n\t.param .u32 p2\n)\n{\n}\n";
	struct fake_gpu f;
	struct api api;
	CUmodule mod, mod2;
	CUfunction fn, fn2;
	CUdeviceptr dp;
	uint64_t a;
	void *ring;
	uint64_t ring_d;
	unsigned long long d, s, n = 4096;
	void *params[3] = { &d, &s, &n };
	void *extra[] = { NULL };
	char why[256] = "";
	void *heap = malloc(8192);

	(void)state;
	up(&f);
	api_get(&api);
	assert_int_equal(api.load(&mod, "not PTX at all"), CUDA_ERROR_INVALID_IMAGE);
	assert_int_equal(api.load(&mod, ".version 7.0\n.target sm_75\n"), CUDA_ERROR_INVALID_PTX);
	assert_int_equal(api.load(NULL, gdr_bounce_copy_ptx), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.load(&mod, gdr_bounce_copy_ptx), CUDA_SUCCESS);
	assert_int_equal(api.get(&fn, mod, "gdr_bounce_kopy"), CUDA_ERROR_NOT_FOUND);
	assert_int_equal(api.get(&fn, NULL, GDR_COPY_KERNEL), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(api.get(&fn, mod, GDR_COPY_KERNEL), CUDA_SUCCESS);
	assert_int_equal(gdr_cuda_alloc(f.cu, 1 << 20, &a, why, sizeof(why)), 0);
	assert_int_equal(
	    gdr_cuda_host_alloc_mapped(f.cu, 1 << 20, &ring, &ring_d, why, sizeof(why)), 0);
	d = ring_d;
	s = a;
	/* Geometry: empty grids or blocks, more than 1024 threads a block. */
	assert_int_equal(api.launch(fn, 0, 1, 1, 512, 1, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.launch(fn, 2, 1, 1, 0, 1, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.launch(fn, 2, 1, 1, 2048, 1, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.launch(fn, 2, 1, 1, 512, 4, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.launch(fn, 2, 1, 1, 512, 1, 1, 1 << 20, NULL, params, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	/* Parameters: neither way, or both. */
	assert_int_equal(api.launch(fn, 2, 1, 1, 512, 1, 1, 0, NULL, NULL, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.launch(fn, 2, 1, 1, 512, 1, 1, 0, NULL, params, extra),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.launch(NULL, 2, 1, 1, 512, 1, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	/* Memory the GPU cannot reach: malloc'ed, or past the end of an allocation. */
	d = (uintptr_t)heap;
	assert_int_equal(api.launch(fn, 2, 1, 1, 512, 1, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	d = ring_d;
	n = (2 << 20);
	assert_int_equal(api.launch(fn, 2, 1, 1, 512, 1, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	n = 4096;
	assert_int_equal(api.devptr(&dp, heap, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(api.devptr(&dp, ring, 1), CUDA_ERROR_INVALID_VALUE);
	/* The right launch, on the legacy stream: done on return. */
	memset(ring, 0, 4096);
	memset((void *)(uintptr_t)a, 0x5a, 4096);
	assert_int_equal(api.launch(fn, 2, 1, 1, 512, 1, 1, 0, NULL, params, NULL), CUDA_SUCCESS);
	assert_int_equal(((uint8_t *)ring)[4095], 0x5a);
	/* A kernel whose parameters are not the copy's: the fake cannot run it. */
	assert_int_equal(api.load(&mod2, other), CUDA_SUCCESS);
	assert_int_equal(api.get(&fn2, mod2, GDR_COPY_KERNEL), CUDA_SUCCESS);
	assert_int_equal(api.launch(fn2, 2, 1, 1, 512, 1, 1, 0, NULL, params, NULL),
			 CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(api.unload(mod2), CUDA_SUCCESS);
	assert_int_equal(api.unload(mod), CUDA_SUCCESS);
	assert_int_equal(api.unload(NULL), CUDA_ERROR_INVALID_HANDLE);
	gdr_cuda_host_free(f.cu, ring);
	gdr_cuda_free(f.cu, a);
	fake_gpu_down(&f);
	free(heap);
}

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptx_text),
#ifdef HAVE_CUDA
		cmocka_unit_test_setup(test_kernel_copies, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_fake_refuses, fake_gpu_reset_env),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
