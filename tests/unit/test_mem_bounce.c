/*
 * The bounce backend up to the point where an RDMA device is needed (the
 * staging ring's registration and the pipeline run in the Soft-RoCE VM),
 * with the fake driver behind it: skip reasons, each failing CUDA step with
 * its words, cleanup after every failure, --validate copies.
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
#include <sys/mman.h>

#include "bounce.h"
#include "cuda.h"
#include "mem.h"
#include "util.h"

static void test_no_driver(void **state)
{
	struct gdr_mem_env env = { .cuda_why = "no CUDA driver (libcuda.so.1: cannot open shared "
					       "object file: No such file or directory)" };
	struct gdr_mem m = { .env = &env };
	struct gdr_bounce_res res;
	char why[256];

	(void)state;
	assert_int_equal(gdr_mem_bounce_ops.available(&env, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, env.cuda_why);
	assert_int_equal(gdr_mem_open(&m, GDR_MEM_BOUNCE, &env, 4096, 0, why, sizeof(why)),
			 -ENODEV);
	assert_string_equal(why, env.cuda_why);
	gdr_mem_close(&m);
	/* free on a never-built m is harmless; it is not a bounce buffer to the engine. */
	m.env = &env;
	gdr_mem_bounce_ops.free(&m);
	assert_int_equal(gdr_mem_bounce_res(&m, &res), -EINVAL);
}

#ifdef HAVE_CUDA

#include "fake_cuda_env.h"

static void up(struct fake_gpu *f)
{
	fake_gpu_up(f, "/");
	f->env.bounce_chunk = 256 * 1024;
	f->env.bounce_slots = 8;
}

/* alloc_reg as gdr_mem_open runs it: expect r and why; then free must leave nothing. */
static void alloc_expect(struct fake_gpu *f, size_t len, int r, const char *why_part)
{
	struct gdr_mem m;
	char why[256] = "";

	memset(&m, 0, sizeof(m));
	m.ops = &gdr_mem_bounce_ops;
	m.env = &f->env;
	assert_int_equal(
	    gdr_mem_bounce_ops.alloc_reg(&m, len, IBV_ACCESS_LOCAL_WRITE, why, sizeof(why)), r);
	if (!strstr(why, why_part))
		fail_msg("expected \"%s\" in \"%s\"", why_part, why);
	assert_null(m.mr);
	gdr_mem_bounce_ops.free(&m);
	assert_int_equal(m.addr, 0);
	assert_null(m.priv);
}

static void test_available(void **state)
{
	struct fake_gpu f;
	char why[256] = "";

	(void)state;
	up(&f);
	assert_int_equal(gdr_mem_bounce_ops.available(&f.env, why, sizeof(why)), 0);
	f.env.gpu = NULL;
	assert_int_equal(gdr_mem_bounce_ops.available(&f.env, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no GPU opened (--gpu)");
	f.env.gpu = &f.gpu;
	fake_gpu_down(&f);
}

/*
 * Everything but the registration is built; a missing PD fails cleanly, and
 * repeatedly (a leaked GPU buffer would make the next round run out of memory).
 */
static void test_without_pd(void **state)
{
	struct fake_gpu f;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1100K", 1);
	up(&f);
	for (int i = 0; i < 3; i++)
		alloc_expect(&f, 1u << 20, -EINVAL,
			     "bounce: no protection domain to register the staging ring with");
	fake_gpu_down(&f);
}

static void test_gpu_oom(void **state)
{
	struct fake_gpu f;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1100K", 1);
	up(&f);
	alloc_expect(&f, 2u << 20, -ENOMEM,
		     "GPU 0 (0000:3b:00.0, NVIDIA H200): cuMemAlloc(2112 KiB): "
		     "CUDA_ERROR_OUT_OF_MEMORY: out of memory");
	fake_gpu_down(&f);
}

static void test_staging_ring_fails(void **state)
{
	struct fake_gpu f;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1100K", 1);
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuMemHostAlloc=CUDA_ERROR_OUT_OF_MEMORY", 1);
	up(&f);
	for (int i = 0; i < 2; i++)
		alloc_expect(&f, 1u << 20, -ENOMEM,
			     "GPU 0 (0000:3b:00.0, NVIDIA H200): bounce staging ring: "
			     "cuMemHostAlloc(2 MiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory");
	fake_gpu_down(&f);
}

static void test_stream_and_events_fail(void **state)
{
	struct fake_gpu f;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1100K", 1);
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuStreamCreate=CUDA_ERROR_NOT_SUPPORTED", 1);
	up(&f);
	for (int i = 0; i < 2; i++)
		alloc_expect(&f, 1u << 20, -EOPNOTSUPP,
			     "bounce copy stream: cuStreamCreate: CUDA_ERROR_NOT_SUPPORTED");
	fake_gpu_down(&f);
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuEventCreate=CUDA_ERROR_NOT_SUPPORTED", 1);
	up(&f);
	for (int i = 0; i < 2; i++)
		alloc_expect(&f, 1u << 20, -EOPNOTSUPP,
			     "bounce slot events: cuEventCreate: CUDA_ERROR_NOT_SUPPORTED");
	fake_gpu_down(&f);
}

static void test_bad_ring(void **state)
{
	struct fake_gpu f;

	(void)state;
	up(&f);
	f.env.bounce_slots = 0;
	alloc_expect(&f, 4096, -EINVAL, "bounce: bad staging ring (0 slots of 262144 B)");
	f.env.bounce_slots = 2;
	f.env.bounce_chunk = SIZE_MAX / 2 + 1;
	alloc_expect(&f, 4096, -EINVAL, "bounce: bad staging ring");
	fake_gpu_down(&f);
}

/*
 * --bounce-copy=sm: the mapped ring and the copy kernel are built too (and
 * freed: a leak would run the GPU out of memory on the next round); each
 * failing step is named.
 */
static void test_backend_sm(void **state)
{
	struct fake_gpu f;

	(void)state;
	setenv("GDRPERF_FAKE_CUDA_MEM_LIMIT", "1100K", 1);
	up(&f);
	f.env.bounce_copy = GDR_BOUNCE_COPY_SM;
	f.env.bounce_blocks = 2;
	/* Everything built (a leak would run the GPU out of memory on the next round). */
	for (int i = 0; i < 3; i++)
		alloc_expect(&f, 1u << 20, -EINVAL, "no protection domain");
	fake_gpu_down(&f);
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuModuleLoadData=CUDA_ERROR_INVALID_PTX", 1);
	up(&f);
	f.env.bounce_copy = GDR_BOUNCE_COPY_SM;
	alloc_expect(&f, 1u << 20, -EIO,
		     "GPU 0 (0000:3b:00.0, NVIDIA H200): bounce copy kernel: cuModuleLoadData("
		     "gdr_bounce_copy PTX");
	alloc_expect(&f, 1u << 20, -EIO, "CUDA_ERROR_INVALID_PTX");
	fake_gpu_down(&f);
	setenv("GDRPERF_FAKE_CUDA_FAIL", "cuMemHostGetDevicePointer=CUDA_ERROR_NOT_SUPPORTED", 1);
	up(&f);
	f.env.bounce_copy = GDR_BOUNCE_COPY_SM;
	alloc_expect(&f, 1u << 20, -EOPNOTSUPP,
		     "bounce staging ring (mapped): cuMemHostGetDevicePointer");
	fake_gpu_down(&f);
	/* CE needs neither. */
	up(&f);
	alloc_expect(&f, 1u << 20, -EINVAL, "no protection domain");
	fake_gpu_down(&f);
}

/*
 * --hugepages: the ring on 2 MiB pages when this kernel has some (pinned by
 * cuMemHostRegister), else cuMemHostAlloc's; the note says which, with the
 * reason (on most hosts none are reserved). Freed either way: a ring left
 * registered would make the next round's registration fail.
 */
static void test_hugepages(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m;
	char why[256], no[160] = "", want[256];
	size_t hl = 0;
	void *p = gdr_huge_map(8 * 256 * 1024, &hl, no, sizeof(no));

	(void)state;
	if (p) {
		munmap(p, hl);
		snprintf(want, sizeof(want),
			 "bounce staging on 2 MiB huge pages (MAP_HUGETLB + cuMemHostRegister)");
	} else {
		snprintf(want, sizeof(want), "bounce staging on normal pages: %s", no);
		assert_non_null(strstr(no, "mmap(MAP_HUGETLB, 2 MiB): "));
	}
	up(&f);
	for (int i = 0; i < 4; i++) {
		f.env.hugepages = i < 3;
		f.env.bounce_copy = i % 2 ? GDR_BOUNCE_COPY_SM : GDR_BOUNCE_COPY_CE;
		memset(&m, 0, sizeof(m));
		m.ops = &gdr_mem_bounce_ops;
		m.env = &f.env;
		/* Built up to the registration, which needs a PD this host does not have. */
		assert_int_equal(gdr_mem_bounce_ops.alloc_reg(&m, 1u << 20, 0, why, sizeof(why)),
				 -EINVAL);
		assert_string_equal(m.note, f.env.hugepages ? want : "");
		gdr_mem_bounce_ops.free(&m);
		assert_null(m.priv);
	}
	fake_gpu_down(&f);
}

/* --validate reads and writes the GPU buffer (not the staging ring), bounded by its length. */
static void test_write_read(void **state)
{
	struct fake_gpu f;
	struct gdr_mem m;
	struct gdr_bounce_res res;
	char why[256] = "";
	uint8_t in[3000], out[3000];

	(void)state;
	up(&f);
	memset(&m, 0, sizeof(m));
	m.ops = &gdr_mem_bounce_ops;
	m.env = &f.env;
	/* Built up to the registration, which needs a PD this host does not have. */
	assert_int_equal(gdr_mem_bounce_ops.alloc_reg(&m, 10000, 0, why, sizeof(why)), -EINVAL);
	assert_null(m.host);
	assert_int_not_equal(m.addr, 0);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(gdr_mem_bounce_ops.write(&m, 7000, in, sizeof(in)), 0);
	memset(out, 0, sizeof(out));
	assert_int_equal(gdr_mem_bounce_ops.read(&m, 7000, out, sizeof(out)), 0);
	assert_memory_equal(in, out, sizeof(in));
	/* The bytes are in the device buffer itself (the fake's device pointer is host memory). */
	assert_memory_equal((const void *)(uintptr_t)(m.addr + 7000), in, sizeof(in));
	assert_int_equal(gdr_mem_bounce_ops.write(&m, 7001, in, sizeof(in)), -EINVAL);
	assert_int_equal(gdr_mem_bounce_ops.read(&m, 10001, out, 0), -EINVAL);
	/* Without an MR the engine must not take it. */
	assert_int_equal(gdr_mem_bounce_res(&m, &res), -EINVAL);
	gdr_mem_bounce_ops.free(&m);
	assert_int_equal(gdr_mem_bounce_ops.read(&m, 0, out, 1), -EINVAL);
	fake_gpu_down(&f);
}

#endif /* HAVE_CUDA */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_driver),
#ifdef HAVE_CUDA
		cmocka_unit_test_setup(test_available, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_without_pd, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_gpu_oom, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_staging_ring_fails, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_stream_and_events_fail, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_bad_ring, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_backend_sm, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_write_read, fake_gpu_reset_env),
		cmocka_unit_test_setup(test_hugepages, fake_gpu_reset_env),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
