/*
 * The provenance columns (common/mem/provenance.c): what a row says about the
 * software under it and about its GPU path, with and without a built buffer.
 */
#include "cmocka_common.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "mem.h"
#include "provenance.h"
#include "report.h"

static void test_load(void **state)
{
	struct gdr_provenance p;
	struct utsname u;

	(void)state;
	gdr_provenance_load(&p, NULL);
	assert_int_equal(uname(&u), 0);
	assert_string_equal(p.kernel, u.release);
	/* The file version of the libibverbs this test is linked with: digits and dots. */
	assert_true(p.libibverbs[0] >= '1' && p.libibverbs[0] <= '9');
	assert_int_equal(strspn(p.libibverbs, "0123456789."), strlen(p.libibverbs));
	assert_string_equal(p.nic_fw, ""); /* no device */
}

static void test_fill(void **state)
{
	struct gdr_provenance p = { .kernel = "6.1.0",
				    .libibverbs = "1.14.44.0",
				    .nic_fw = "28.39" };
	struct gdr_mem_env env = { .gpu_alloc = GDR_GPU_ALLOC_VMM };
	struct gdr_mem m = { .reg_call = "ibv_reg_dmabuf_mr",
			     .relaxed = 1,
			     .reg_us = 12.5,
			     .dereg_us = 3.25,
			     .emulated = 1 };
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX];

	(void)state;
	/* A skipped GPU path: what was asked, no timings. */
	gdr_result_init(&r);
	gdr_provenance_fill(&r, &p, GDR_MEM_DMABUF, NULL, &env, 12040, "GPU-00112233");
	assert_string_equal(r.gpu_alloc, "cuMemCreate");
	assert_string_equal(r.dmabuf_mapping, "default");
	assert_string_equal(r.cuda_driver, "12.4");
	assert_string_equal(r.gpu_uuid, "GPU-00112233");
	assert_string_equal(r.kernel, "6.1.0");
	assert_string_equal(r.reg_call, "");
	assert_true(r.reg_us < 0 && r.dereg_us < 0);
	assert_string_equal(r.relaxed_ordering, gdr_mem_relaxed_flag() ? "1" : "0");
	env.no_relaxed = 1;
	gdr_result_init(&r);
	gdr_provenance_fill(&r, &p, GDR_MEM_DMABUF, NULL, &env, 12040, NULL);
	assert_string_equal(r.relaxed_ordering, "0");

	/* A built one: what was done, emulation said. */
	gdr_result_init(&r);
	gdr_provenance_fill(&r, &p, GDR_MEM_DMABUF, &m, &env, 12040, "GPU-00112233");
	assert_string_equal(r.reg_call, "ibv_reg_dmabuf_mr (emulated)");
	assert_string_equal(r.relaxed_ordering, "1");
	assert_true(r.reg_us == 12.5 && r.dereg_us == 3.25);
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	assert_non_null(strstr(row, ",12.5,3.3,ibv_reg_dmabuf_mr (emulated),cuMemCreate,default,1,"
				    "GPU-00112233,12.4,6.1.0,1.14.44.0,28.39,"));

	/* Host: no GPU columns at all. */
	gdr_result_init(&r);
	m.reg_call = "ibv_reg_mr";
	m.emulated = 0;
	gdr_provenance_fill(&r, &p, GDR_MEM_HOST, &m, &env, 12040, "GPU-00112233");
	assert_string_equal(r.gpu_alloc, "");
	assert_string_equal(r.gpu_uuid, "");
	assert_string_equal(r.cuda_driver, "");
	assert_string_equal(r.dmabuf_mapping, "");
	assert_string_equal(r.reg_call, "ibv_reg_mr");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_fill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
