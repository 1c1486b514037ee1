/* --loopback: its options, the pairs it checks and each pair's verdict. */
#include "cmocka_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lat_opts.h"
#include "loopback.h"
#include "options.h"

#define ARGV(...)     ((char *[]){ "gdr_write_bw", __VA_ARGS__, NULL })
#define ARGC(...)     ((int)(sizeof((char *[]){ "gdr_write_bw", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, ...) gdr_opts_parse(o, GDR_VERB_WRITE, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_opts(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--loopback"), 0);
	assert_true(o.loopback);
	assert_null(o.server);
	assert_int_equal(PARSE(&o, "-s", "64K"), 0);
	assert_false(o.loopback);
	/* A SERVER, --persistent, --peer or --sweep with it is a usage error. */
	assert_int_equal(PARSE(&o, "--loopback", "10.0.0.1"), -EINVAL);
	assert_int_equal(PARSE(&o, "10.0.0.1", "--loopback"), -EINVAL);
	assert_int_equal(PARSE(&o, "--loopback", "--persistent"), -EINVAL);
	assert_int_equal(PARSE(&o, "--loopback", "--peer", "h1"), -EINVAL);
	assert_int_equal(PARSE(&o, "--loopback", "--sweep", "pairs"), -EINVAL);
	/* The latency tools take it too. */
	assert_int_equal(PARSE(&o, "--loopback"), 0);
	assert_int_equal(gdr_lat_opts_check(&o), 0);
	assert_int_equal(PARSE(&o, "-s", "8"), 0);
	assert_int_equal(gdr_lat_opts_check(&o), 0);
	/* --nfd: the loopback outcome's labels, so only with --loopback. */
	assert_int_equal(PARSE(&o, "--loopback", "--nfd", "/tmp/x"), 0);
	assert_string_equal(o.nfd, "/tmp/x");
	assert_int_equal(PARSE(&o, "--nfd", "/tmp/x"), -EINVAL);
	assert_int_equal(PARSE(&o, "--nfd", "/tmp/x", "10.0.0.1"), -EINVAL);
	assert_int_equal(PARSE(&o, "--loopback", "--nfd", ""), -EINVAL);
}

/* A --nfd that cannot be written fails before any pair runs: exit 1, nothing on stdout. */
static void test_nfd_bad_path(void **state)
{
	struct gdr_opts o;
	char out[256];
	int fd[2], status;
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(PARSE(&o, "--loopback", "-d", "nosuchnic0", "--nfd",
			       "/nonexistent/dir/labels"),
			 0);
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fd[0]);
		if (dup2(fd[1], 1) < 0)
			_exit(99);
		_exit(gdr_loopback_run(&o, NULL));
	}
	close(fd[1]);
	n = read(fd[0], out, sizeof(out) - 1);
	close(fd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	/* Without the early check the pair would run and print its verdict. */
	assert_int_equal(n, 0);
}

static void test_pairs_lists(void **state)
{
	struct gdr_lb_pair p[8];
	struct gdr_opts o;
	unsigned int n;
	char why[256];

	(void)state;
	assert_int_equal(PARSE(&o, "--loopback", "-d", "mlx5_0,mlx5_1", "--gpu", "0,1"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].dev, "mlx5_0");
	assert_string_equal(p[0].gpu, "0");
	assert_string_equal(p[1].dev, "mlx5_1");
	assert_string_equal(p[1].gpu, "1");
	/* One GPU for every NIC. */
	assert_int_equal(PARSE(&o, "--loopback", "-d", "a,b,c", "--gpu", "3"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(p[2].dev, "c");
	assert_string_equal(p[2].gpu, "3");
	/* No --gpu: none (a GPU path takes the session's default); auto: the nearest. */
	assert_int_equal(PARSE(&o, "--loopback", "-d", "rxe0"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(p[0].gpu, "");
	assert_int_equal(PARSE(&o, "--loopback", "-d", "rxe0", "--mem", "host,bounce"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), 0);
	assert_string_equal(p[0].gpu, "");
	assert_int_equal(PARSE(&o, "--loopback", "-d", "rxe0,rxe1", "--gpu", "auto"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[1].gpu, "auto");
	/* Usage errors. */
	assert_int_equal(PARSE(&o, "--loopback", "-d", "a,b", "--gpu", "0,1,2"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "3 GPUs"));
	assert_int_equal(PARSE(&o, "--loopback", "-d", "auto", "--gpu", "0"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "-d auto"));
	assert_int_equal(PARSE(&o, "--loopback", "-d", "a,b,c"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 2, &n, why, sizeof(why)), -EINVAL);
	/* No -d and no device. */
	assert_int_equal(PARSE(&o, "--loopback"), 0);
	assert_int_equal(gdr_lb_pairs(&o, "/nonexistent", p, 8, &n, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no RDMA device"));
}

static void put(const char *root, const char *dev, const char *state)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "mkdir -p %s/sys/class/infiniband/%s/ports/1", root, dev);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/1/state", root, dev);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", state);
	fclose(f);
}

/* Without -d: every device whose port is ACTIVE, by name. */
static void test_pairs_scan(void **state)
{
	char root[] = "/tmp/gdr_lb_XXXXXX", cmd[64];
	struct gdr_lb_pair p[8];
	struct gdr_opts o;
	unsigned int n;
	char why[256];

	(void)state;
	assert_non_null(mkdtemp(root));
	put(root, "mlx5_1", "4: ACTIVE");
	put(root, "mlx5_0", "4: ACTIVE");
	put(root, "mlx5_2", "1: DOWN");
	assert_int_equal(PARSE(&o, "--loopback", "--gpu", "0,1"), 0);
	assert_int_equal(gdr_lb_pairs(&o, root, p, 8, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].dev, "mlx5_0");
	assert_string_equal(p[0].gpu, "0");
	assert_string_equal(p[1].dev, "mlx5_1");
	assert_string_equal(p[1].gpu, "1");
	assert_int_equal(PARSE(&o, "--loopback", "--gpu", "0,1,2"), 0);
	assert_int_equal(gdr_lb_pairs(&o, root, p, 8, &n, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "give -d"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static struct gdr_result row(const char *path, const char *status, double gbps, const char *note)
{
	struct gdr_result r;

	memset(&r, 0, sizeof(r));
	snprintf(r.path, sizeof(r.path), "%s", path);
	snprintf(r.status, sizeof(r.status), "%s", status);
	snprintf(r.note, sizeof(r.note), "%s", note);
	snprintf(r.gpu, sizeof(r.gpu), "%s", strcmp(path, "host") ? "0" : "");
	r.bw_avg_gbps = gbps;
	return r;
}

static void test_verdict(void **state)
{
	const enum gdr_mem_kind hb[] = { GDR_MEM_HOST, GDR_MEM_BOUNCE };
	struct gdr_lb_pair p = { .dev = "rxe0", .gpu = "auto" };
	struct gdr_result rows[4];
	char line[1024];

	(void)state;
	rows[0] = row("host", "ok", 20.0, "loopback");
	rows[1] = row("host", "ok", 23.14, "loopback");
	rows[2] = row("bounce", "ok", 0.04561, "loopback");
	/* ok: the best of each path, the GPU the rows name. */
	assert_int_equal(gdr_lb_verdict(&p, hb, 2, rows, 3, 0, NULL, line, sizeof(line), NULL), 0);
	assert_string_equal(line, "loopback GPU 0 <-> rxe0: ok (host 23.1, bounce 0.0456 Gb/s)");
	/* A skipped path fails the pair and says why. */
	rows[2] = row("bounce", "skipped", 0, "loopback; no CUDA driver");
	assert_int_equal(gdr_lb_verdict(&p, hb, 2, rows, 3, 0, NULL, line, sizeof(line), NULL), 1);
	assert_string_equal(line, "loopback GPU 0 <-> rxe0: FAIL: bounce: skipped: no CUDA "
				  "driver (ok: host 23.1 Gb/s)");
	/* A path without rows (the run ended early), and the server's cause. */
	assert_int_equal(gdr_lb_verdict(&p, hb, 2, rows, 2, 1, "port 18515 is already in use", line,
					sizeof(line), NULL),
			 1);
	assert_string_equal(line, "loopback GPU auto <-> rxe0: FAIL: bounce: no result (the run "
				  "failed); server: port 18515 is already in use (ok: host 23.1 "
				  "Gb/s)");
	/* Every row ok but the client failed (e.g. its --json): still a failure. */
	struct gdr_lb_pair h = { .dev = "rxe0" };
	assert_int_equal(gdr_lb_verdict(&h, hb, 1, rows, 2, 1, NULL, line, sizeof(line), NULL), 1);
	assert_string_equal(line, "loopback rxe0: FAIL: client: the run failed (its error above) "
				  "(ok: host 23.1 Gb/s)");
	/* A failed row, and a server that ended badly although the rows were ok. */
	rows[0] = row("host", "failed", 0, "loopback");
	assert_int_equal(gdr_lb_verdict(&h, hb, 1, rows, 1, 0, NULL, line, sizeof(line), NULL), 1);
	assert_string_equal(line, "loopback rxe0: FAIL: host: failed");
	assert_int_equal(
	    gdr_lb_verdict(&h, hb, 1, rows + 1, 1, 0, "killed by signal 9", line, sizeof(line), NULL), 1);
	assert_string_equal(line, "loopback rxe0: FAIL: server: killed by signal 9 (ok: host "
				  "23.1 Gb/s)");
}

/* Latency rows: the lowest p50 of each path, in microseconds. */
static void test_verdict_latency(void **state)
{
	const enum gdr_mem_kind hb[] = { GDR_MEM_HOST, GDR_MEM_BOUNCE };
	struct gdr_lb_pair p = { .dev = "rxe0" };
	struct gdr_result rows[3];
	unsigned int bad = 99;
	char line[1024];

	(void)state;
	rows[0] = row("host", "ok", -1, "loopback");
	rows[0].lat_p50_us = 31.24;
	rows[1] = row("host", "ok", -1, "loopback");
	rows[1].lat_p50_us = 28.5;
	rows[2] = row("bounce", "ok", -1, "loopback");
	rows[2].lat_p50_us = 140.1;
	assert_int_equal(gdr_lb_verdict(&p, hb, 2, rows, 3, 0, NULL, line, sizeof(line), &bad), 0);
	assert_string_equal(line, "loopback GPU 0 <-> rxe0: ok (host 28.5, bounce 140.1 us p50)");
	assert_int_equal(bad, 0);
	rows[2] = row("bounce", "failed", -1, "loopback; timed out");
	assert_int_equal(gdr_lb_verdict(&p, hb, 2, rows, 3, 0, NULL, line, sizeof(line), &bad), 1);
	assert_string_equal(line, "loopback GPU 0 <-> rxe0: FAIL: bounce: failed: timed out (ok: "
				  "host 28.5 us p50)");
	assert_int_equal(bad, 2); /* bounce, the second path */
	/* A side that failed proves no path. */
	rows[2].lat_p50_us = 140.1;
	assert_int_equal(gdr_lb_verdict(&p, hb, 2, rows, 2, 0, "killed by signal 9", line,
					sizeof(line), &bad),
			 1);
	assert_int_equal(bad, 3);
}

/* gdr_lb_nfd's text for these arguments (the caller frees it). */
static char *nfd_text(const char *tool, const enum gdr_mem_kind *mem, unsigned int nmem,
		      unsigned int npairs, unsigned int nok, unsigned int bad)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	gdr_lb_nfd(m, tool, mem, nmem, npairs, nok, bad);
	assert_int_equal(fclose(m), 0);
	return buf;
}

/* --nfd: one label for the run, one per path, the pair counts. */
static void test_nfd(void **state)
{
	const enum gdr_mem_kind hdb[] = { GDR_MEM_HOST, GDR_MEM_DMABUF, GDR_MEM_BOUNCE };
	char *t;

	(void)state;
	t = nfd_text("write-bw", hdb, 3, 2, 1, 2);
	assert_string_equal(t, "gdrperf.loopback-write-bw=fail\n"
			       "gdrperf.loopback-write-bw.host=pass\n"
			       "gdrperf.loopback-write-bw.dmabuf=fail\n"
			       "gdrperf.loopback-write-bw.bounce=pass\n"
			       "gdrperf.loopback-write-bw.pairs=2\n"
			       "gdrperf.loopback-write-bw.pairs-ok=1\n");
	free(t);
	t = nfd_text("read-lat", hdb, 1, 1, 1, 0);
	assert_string_equal(t, "gdrperf.loopback-read-lat=pass\n"
			       "gdrperf.loopback-read-lat.host=pass\n"
			       "gdrperf.loopback-read-lat.pairs=1\n"
			       "gdrperf.loopback-read-lat.pairs-ok=1\n");
	free(t);
	/* No pair found: nothing passed. */
	t = nfd_text("write-bw", hdb, 1, 0, 0, 0);
	assert_non_null(
	    strstr(t, "gdrperf.loopback-write-bw=fail\ngdrperf.loopback-write-bw.host=fail\n"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_pairs_lists),
		cmocka_unit_test(test_pairs_scan),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_verdict_latency),
		cmocka_unit_test(test_nfd),
		cmocka_unit_test(test_nfd_bad_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
