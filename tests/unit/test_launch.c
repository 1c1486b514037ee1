#include "cmocka_common.h"

#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

/* A fake environment: NULL-terminated NAME=VALUE strings. */
static const char *fake_getenv(void *ctx, const char *name)
{
	const char *const *env = ctx;
	size_t n = strlen(name);

	for (; *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int detect(const char *const *env, struct gdr_launch *l, char *why, size_t wlen)
{
	why[0] = '\0';
	return gdr_launch_detect(l, fake_getenv, (void *)env, why, wlen);
}

static void test_none(void **state)
{
	static const char *const env[] = { "PATH=/bin", "HOME=/root", NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(env, &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, GDR_LAUNCHER_NONE);
	assert_string_equal(gdr_launcher_name(l.kind), "none");
}

static void test_ompi(void **state)
{
	/* Open MPI 4 also exports PMIX_RANK (equal) and, inside sbatch, SLURM_PROCID=0. */
	static const char *const env[] = { "OMPI_COMM_WORLD_RANK=3",
					   "OMPI_COMM_WORLD_SIZE=4",
					   "OMPI_COMM_WORLD_LOCAL_RANK=1",
					   "PMIX_RANK=3",
					   "SLURM_PROCID=0",
					   "SLURM_NTASKS=1",
					   NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(env, &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, GDR_LAUNCHER_OMPI);
	assert_int_equal(l.rank, 3);
	assert_int_equal(l.size, 4);
	assert_int_equal(l.local_rank, 1);
	assert_string_equal(l.rank_var, "OMPI_COMM_WORLD_RANK");
	assert_string_equal(gdr_launcher_name(l.kind), "Open MPI");
}

static void test_hydra(void **state)
{
	static const char *const env[] = { "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=0", NULL };
	static const char *const no_local[] = { "PMI_RANK=0", "PMI_SIZE=2", NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(env, &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, GDR_LAUNCHER_HYDRA);
	assert_int_equal(l.rank, 1);
	assert_int_equal(l.size, 2);
	assert_int_equal(l.local_rank, 0);
	assert_int_equal(detect(no_local, &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, GDR_LAUNCHER_HYDRA);
	assert_int_equal(l.local_rank, -1);
}

static void test_pmix(void **state)
{
	static const char *const srun[] = { "PMIX_RANK=5", "SLURM_PROCID=5", "SLURM_NTASKS=8",
					    "SLURM_LOCALID=1", NULL };
	static const char *const no_size[] = { "PMIX_RANK=0", NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(srun, &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, GDR_LAUNCHER_PMIX);
	assert_int_equal(l.rank, 5);
	assert_int_equal(l.size, 8);
	assert_int_equal(l.local_rank, 1);
	assert_int_equal(detect(no_size, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "PMIX_RANK=0"));
	assert_non_null(strstr(why, "size"));
}

static void test_slurm(void **state)
{
	static const char *const env[] = { "SLURM_PROCID=2", "SLURM_NTASKS=4", "SLURM_LOCALID=0",
					   NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(env, &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, GDR_LAUNCHER_SLURM);
	assert_int_equal(l.rank, 2);
	assert_int_equal(l.size, 4);
	assert_int_equal(l.local_rank, 0);
}

/* Every malformed value is refused with the variable's name in the message. */
static void test_garbage(void **state)
{
	static const struct {
		const char *env[4];
		const char *var;
	} cases[] = {
		{ { "OMPI_COMM_WORLD_RANK=one", "OMPI_COMM_WORLD_SIZE=2" },
		  "OMPI_COMM_WORLD_RANK" },
		{ { "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=" }, "OMPI_COMM_WORLD_SIZE" },
		{ { "OMPI_COMM_WORLD_RANK=-1", "OMPI_COMM_WORLD_SIZE=2" }, "OMPI_COMM_WORLD_RANK" },
		{ { "OMPI_COMM_WORLD_RANK=+1", "OMPI_COMM_WORLD_SIZE=2" }, "OMPI_COMM_WORLD_RANK" },
		{ { "OMPI_COMM_WORLD_RANK= 1", "OMPI_COMM_WORLD_SIZE=2" }, "OMPI_COMM_WORLD_RANK" },
		{ { "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2",
		    "OMPI_COMM_WORLD_LOCAL_RANK=0x1" },
		  "OMPI_COMM_WORLD_LOCAL_RANK" },
		{ { "PMI_RANK=1", "PMI_SIZE=99999999999999999999" }, "PMI_SIZE" },
		{ { "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1 " }, "MPI_LOCALRANKID" },
		{ { "PMIX_RANK=1e3", "SLURM_NTASKS=2" }, "PMIX_RANK" },
		{ { "SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=a" }, "SLURM_LOCALID" },
		{ { "SLURM_PROCID=0", "SLURM_NTASKS=2000000" }, "SLURM_NTASKS" },
	};
	struct gdr_launch l;
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(detect(cases[i].env, &l, why, sizeof(why)), -EINVAL);
		if (!strstr(why, cases[i].var))
			fail_msg("case %zu: '%s' does not name %s", i, why, cases[i].var);
	}
}

/* A value that is far too long is cut in the message, not copied whole. */
static void test_garbage_long(void **state)
{
	static char big[4200];
	const char *env[] = { big, "PMI_SIZE=2", NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	memset(big, '7', sizeof(big) - 1);
	memcpy(big, "PMI_RANK=", 9);
	assert_int_equal(detect(env, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "PMI_RANK"));
	assert_non_null(strstr(why, "..."));
}

static void test_missing_half(void **state)
{
	static const char *const rank_only[] = { "OMPI_COMM_WORLD_RANK=0", NULL };
	static const char *const size_only[] = { "SLURM_NTASKS=2", NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(rank_only, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "OMPI_COMM_WORLD_SIZE is not"));
	assert_int_equal(detect(size_only, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "SLURM_PROCID is not"));
}

static void test_out_of_range(void **state)
{
	static const char *const rank_big[] = { "PMI_RANK=2", "PMI_SIZE=2", NULL };
	static const char *const size_zero[] = { "SLURM_PROCID=0", "SLURM_NTASKS=0", NULL };
	static const char *const local_big[] = { "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2",
						 "OMPI_COMM_WORLD_LOCAL_RANK=2", NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(rank_big, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "rank 2 of 2"));
	assert_int_equal(detect(size_zero, &l, why, sizeof(why)), -EINVAL);
	assert_int_equal(detect(local_big, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "local rank 2"));
}

static void test_conflicts(void **state)
{
	static const char *const ompi_pmix[] = { "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2",
						 "PMIX_RANK=0", NULL };
	static const char *const ompi_pmi[] = { "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2",
						"PMI_RANK=1", "PMI_SIZE=4", NULL };
	static const char *const hydra_pmix[] = { "PMI_RANK=1", "PMI_SIZE=2", "PMIX_RANK=3", NULL };
	static const char *const bad_other[] = { "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2",
						 "PMIX_RANK=x", NULL };
	/* Hydra inside an sbatch step: SLURM_PROCID=0 everywhere is not a conflict. */
	static const char *const hydra_in_sbatch[] = { "PMI_RANK=1", "PMI_SIZE=2", "SLURM_PROCID=0",
						       "SLURM_NTASKS=1", NULL };
	struct gdr_launch l;
	char why[256];

	(void)state;
	assert_int_equal(detect(ompi_pmix, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "OMPI_COMM_WORLD_RANK=1 but PMIX_RANK=0"));
	assert_int_equal(detect(ompi_pmi, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "OMPI_COMM_WORLD_SIZE=2 but PMI_SIZE=4"));
	assert_int_equal(detect(hydra_pmix, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "PMI_RANK=1 but PMIX_RANK=3"));
	assert_int_equal(detect(bad_other, &l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "PMIX_RANK='x'"));
	assert_int_equal(detect(hydra_in_sbatch, &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, GDR_LAUNCHER_HYDRA);
	assert_int_equal(l.rank, 1);
}

static void test_role(void **state)
{
	struct gdr_launch l = { .kind = GDR_LAUNCHER_OMPI, .size = 4, .local_rank = -1 };
	struct gdr_pair_role r;
	char why[256];
	static const struct {
		int rank, server, pair, peer;
	} want[] = { { 0, 1, 0, 2 }, { 1, 1, 1, 3 }, { 2, 0, 0, 0 }, { 3, 0, 1, 1 } };

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		l.rank = want[i].rank;
		assert_int_equal(gdr_launch_role(&l, &r, why, sizeof(why)), 0);
		assert_int_equal(r.npairs, 2);
		assert_int_equal(r.server, want[i].server);
		assert_int_equal(r.pair, want[i].pair);
		assert_int_equal(r.peer_rank, want[i].peer);
	}
	l.size = 3;
	l.rank = 0;
	assert_int_equal(gdr_launch_role(&l, &r, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "started 3 ranks"));
	assert_non_null(strstr(why, "even"));
	l.size = 1;
	assert_int_equal(gdr_launch_role(&l, &r, why, sizeof(why)), -EINVAL);
}

static void test_list(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(gdr_list_count("3"), 1);
	assert_int_equal(gdr_list_count("0,1,2"), 3);
	assert_int_equal(gdr_list_item("0,1,2", 2, out, sizeof(out)), 0);
	assert_string_equal(out, "2");
	assert_int_equal(gdr_list_item("a,bb,c", 1, out, sizeof(out)), 0);
	assert_string_equal(out, "bb");
	/* One item: every index gets it. */
	assert_int_equal(gdr_list_item("10.0.0.1", 7, out, sizeof(out)), 0);
	assert_string_equal(out, "10.0.0.1");
	assert_int_equal(gdr_list_item("0,1", 2, out, sizeof(out)), -ERANGE);
	assert_int_equal(gdr_list_item("0,,2", 1, out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_list_item("0,1,", 2, out, sizeof(out)), -EINVAL);
	/* An empty item is refused for every index, so that every rank stops alike. */
	assert_int_equal(gdr_list_item("0,,2", 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_list_item("0,,2", 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_list_item(",1", 1, out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_list_item("0,1,", 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_list_item(",", 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(gdr_list_item("0,0123456789abcdefXYZ", 1, out, sizeof(out)),
			 -ENAMETOOLONG);
}

/*
 * gdr_launch_setup under Open MPI without MPI calls (--launch=no-mpi): the
 * options come out byte for byte as parsed, and this rank's port, server,
 * GPU, NIC and label are in the run it hands the session.
 */
static const char *const launcher_vars[] = { "OMPI_COMM_WORLD_RANK",
					     "OMPI_COMM_WORLD_SIZE",
					     "OMPI_COMM_WORLD_LOCAL_RANK",
					     "PMI_RANK",
					     "PMI_SIZE",
					     "MPI_LOCALRANKID",
					     "PMIX_RANK",
					     "SLURM_PROCID",
					     "SLURM_NTASKS",
					     "SLURM_LOCALID",
					     "GDRPERF_SERVER",
					     NULL };

static void launched_as(const char *rank, const char *size, const char *local)
{
	for (unsigned int i = 0; launcher_vars[i]; i++)
		unsetenv(launcher_vars[i]);
	if (rank) {
		setenv("OMPI_COMM_WORLD_RANK", rank, 1);
		setenv("OMPI_COMM_WORLD_SIZE", size, 1);
		setenv("OMPI_COMM_WORLD_LOCAL_RANK", local, 1);
	}
}

static void setup_frozen(char **argv, struct gdr_opts *o, struct gdr_launched *x)
{
	struct gdr_opts before;
	int argc = 0, usage = -1;
	volatile sig_atomic_t stop = 0;

	while (argv[argc])
		argc++;
	assert_int_equal(gdr_opts_parse(o, GDR_VERB_WRITE, argc, argv), 0);
	before = *o;
	assert_int_equal(gdr_launch_setup(x, o, &argc, &argv, &stop, &usage), 0);
	assert_memory_equal(&before, o, sizeof(before));
	x->stop = NULL;
}

static void test_setup_client(void **state)
{
	char *argv[] = { "gdr_write_bw",
			 "--launch=no-mpi",
			 "--peer",
			 "10.0.0.1,10.0.0.2",
			 "--gpu",
			 "0,1",
			 "-d",
			 "rxe0,rxe1",
			 "--mem",
			 "dmabuf",
			 "-p",
			 "18600",
			 "--label",
			 "L",
			 "--csv",
			 "/nonexistent/a.csv",
			 NULL };
	struct gdr_opts o;
	struct gdr_launched x;

	(void)state;
	launched_as("3", "4", "1"); /* client of pair 1 */
	setup_frozen(argv, &o, &x);
	assert_int_equal(o.port, 18600);
	assert_null(o.server);
	assert_string_equal(o.gpu, "0,1");
	assert_int_equal(x.run.port, 18601);
	assert_string_equal(x.run.server, "10.0.0.2");
	assert_string_equal(x.run.gpu, "1");
	assert_string_equal(x.run.dev, "rxe1");
	assert_string_equal(x.run.label, "L; pair 1");
	/* Without MPI nobody gathers: each rank writes its own file. */
	assert_string_equal(x.run.csv, "/nonexistent/a.csv");
	assert_null(x.run.sync);
	gdr_launch_finish(&x, 0);
	launched_as(NULL, NULL, NULL);
}

static void test_setup_server(void **state)
{
	char *argv[] = { "gdr_write_bw", "--launch=no-mpi", "-p", "18600", "--mem", "host", NULL };
	struct gdr_opts o;
	struct gdr_launched x;

	(void)state;
	launched_as("1", "4", "1"); /* server of pair 1 */
	setup_frozen(argv, &o, &x);
	assert_null(x.run.server);
	assert_int_equal(x.run.port, 18601);
	assert_string_equal(x.run.label, "pair 1");
	/* host memory only: no GPU is picked for the local rank. */
	assert_null(x.run.gpu);
	gdr_launch_finish(&x, 0);
	launched_as(NULL, NULL, NULL);
}

/*
 * Each side its own memory under a launcher (issue 48): every rank has the
 * same argv, so a server rank's --mem is its client's and not a side of its
 * own (it adopts the plan, whose --mem-remote is its side), and it picks its
 * local rank's GPU for a --mem-remote GPU path. By hand, a server's --mem is
 * its side, and --mem-remote there is refused.
 */
static void test_setup_sides(void **state)
{
	char *srv[] = { "gdr_write_bw", "--launch=no-mpi", "--mem", "host",
			"--mem-remote", "peermem",	   NULL };
	char *own[] = { "gdr_write_bw", "--mem", "bounce,host", NULL };
	char *bad[] = { "gdr_write_bw", "--mem-remote", "peermem", NULL };
	struct gdr_opts o;
	struct gdr_launched x;
	volatile sig_atomic_t stop = 0;
	int argc = 3, usage = -1;
	char **argv = bad;

	(void)state;
	launched_as("0", "2", "1"); /* server of pair 0 */
	setup_frozen(srv, &o, &x);
	assert_null(x.run.server_mem);
	assert_int_equal(x.run.server_nmem, 0);
	assert_string_equal(x.run.gpu, "1"); /* peermem on this side: the local rank's GPU */
	gdr_launch_finish(&x, 0);
	launched_as(NULL, NULL, NULL);
	setup_frozen(own, &o, &x);
	assert_int_equal(x.run.server_nmem, 2);
	assert_int_equal(x.run.server_mem[0], GDR_MEM_BOUNCE);
	assert_int_equal(x.run.server_mem[1], GDR_MEM_HOST);
	gdr_launch_finish(&x, 0);
	assert_int_equal(gdr_opts_parse(&o, GDR_VERB_WRITE, argc, argv), 0);
	assert_int_equal(gdr_launch_setup(&x, &o, &argc, &argv, &stop, &usage), -EINVAL);
	assert_int_equal(usage, 1);
}

static void test_setup_unlaunched(void **state)
{
	char *argv[] = {
		"gdr_write_bw", "--gpu", "1", "-D", "2", "--label", "x", "10.0.0.9", NULL
	};
	struct gdr_opts o;
	struct gdr_launched x;
	struct gdr_run want;

	(void)state;
	launched_as(NULL, NULL, NULL);
	setup_frozen(argv, &o, &x);
	gdr_run_from_opts(&want, &o);
	assert_memory_equal(&want, &x.run, sizeof(want));
	assert_string_equal(x.run.server, "10.0.0.9");
	assert_true(x.run.duration == 2.0);
	gdr_launch_finish(&x, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_ompi),
		cmocka_unit_test(test_hydra),
		cmocka_unit_test(test_pmix),
		cmocka_unit_test(test_slurm),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_garbage_long),
		cmocka_unit_test(test_missing_half),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_role),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_setup_client),
		cmocka_unit_test(test_setup_server),
		cmocka_unit_test(test_setup_unlaunched),
		cmocka_unit_test(test_setup_sides),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
