/*
 * --loopback: per GPU-NIC pair a server child bound to the NIC's own IPv4
 * address and a client child connecting to it, through the same NIC (both
 * die with us: PR_SET_PDEATHSIG); the rows go to --csv/--json/--prom once for every pair, and
 * each pair ends with one verdict line.
 */
#include "config.h"

#include "loopback.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "nccl_log.h" /* gdr_nccl_catf: one string appender for both */
#include "placement.h"
#include "run.h"
#include "session.h"
#include "util.h"
#include "writer.h"

#define LB_NOTE "loopback"

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* RDMA devices under root whose port is ACTIVE, sorted by name. */
static unsigned int scan_devs(const char *root, int port, char (*names)[64], unsigned int max)
{
	char dir[4096], path[4096], rel[512], state[64];
	struct dirent *de;
	unsigned int n = 0;
	DIR *d = opendir(gdr_rooted_path(root, "/sys/class/infiniband", dir, sizeof(dir)));

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		FILE *f;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(names[0]))
			continue;
		snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/ports/%d/state", de->d_name,
			 port);
		f = fopen(gdr_rooted_path(root, rel, path, sizeof(path)), "r");
		if (!f)
			continue;
		if (fgets(state, sizeof(state), f) && strstr(state, "ACTIVE"))
			gdr_strlcpy(names[n++], de->d_name, sizeof(names[0]));
		fclose(f);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	return n;
}

int gdr_lb_pairs(const struct gdr_opts *o, const char *root, struct gdr_lb_pair *pairs,
		 unsigned int max, unsigned int *n, char *why, size_t wlen)
{
	char(*devs)[64] = calloc(max, sizeof(*devs));
	unsigned int ndev, ngpu = o->gpu ? gdr_list_count(o->gpu) : 0;
	int r = 0;

	*n = 0;
	if (!devs) {
		snprintf(why, wlen, "out of memory");
		return -ENOMEM;
	}
	if (o->dev) {
		ndev = gdr_list_count(o->dev);
	} else {
		ndev = scan_devs(root, o->ib_port, devs, max);
		if (!ndev) {
			snprintf(why, wlen,
				 "no RDMA device with an ACTIVE port %d (rdma link; give -d NAME)",
				 o->ib_port);
			r = -ENOENT;
			goto out;
		}
	}
	if (ndev > 1 && ngpu > 1 && ndev != ngpu) {
		snprintf(why, wlen,
			 "%u GPUs (--gpu) for %u %s: give one of either, or as many GPUs as NICs",
			 ngpu, ndev, o->dev ? "NICs (-d)" : "active RDMA devices (give -d)");
		r = -EINVAL;
		goto out;
	}
	*n = ndev > ngpu ? ndev : ngpu;
	if (*n > max) {
		snprintf(why, wlen, "%u pairs: at most %u", *n, max);
		r = -EINVAL;
		goto out;
	}
	for (unsigned int i = 0; i < *n; i++) {
		struct gdr_lb_pair *p = &pairs[i];

		memset(p, 0, sizeof(*p));
		if (!o->dev)
			gdr_strlcpy(p->dev, devs[ndev == 1 ? 0 : i], sizeof(p->dev));
		else if (gdr_list_item(o->dev, i, p->dev, sizeof(p->dev)) ||
			 !strcmp(p->dev, "auto")) {
			snprintf(
			    why, wlen,
			    "-d %s: --loopback needs each pair's NIC by name (not auto, not empty)",
			    o->dev);
			r = -EINVAL;
			goto out;
		}
		if (o->gpu && gdr_list_item(o->gpu, i, p->gpu, sizeof(p->gpu))) {
			snprintf(why, wlen, "--gpu %s: item %u is empty or too long", o->gpu,
				 i + 1);
			r = -EINVAL;
			goto out;
		}
	}
out:
	if (r)
		*n = 0;
	free(devs);
	return r;
}

/* A row's note without the "loopback" every row of ours starts with. */
static const char *own_note(const char *note)
{
	size_t n = strlen(LB_NOTE);

	if (!strncmp(note, LB_NOTE, n) && (note[n] == 0 || note[n] == ';'))
		note += n + (note[n] == ';');
	return note + strspn(note, " ");
}

int gdr_lb_verdict(const struct gdr_lb_pair *p, const enum gdr_mem_kind *mem, unsigned int nmem,
		   const struct gdr_result *rows, unsigned int nrows, int client_rc,
		   const char *server_cause, char *line, size_t len, unsigned int *bad_mask)
{
	char ok[256] = "", bad[768] = "", gpu[80] = "";
	int failed = 0, lat = 0;
	unsigned int mask = 0;

	/* Latency rows have no bandwidth: their figure is the lowest p50. */
	for (unsigned int i = 0; i < nrows; i++)
		if (!strcmp(rows[i].status, "ok") && rows[i].lat_p50_us > 0 &&
		    !(rows[i].bw_avg_gbps > 0))
			lat = 1;
	for (unsigned int i = 0; i < nrows && !gpu[0]; i++)
		if (rows[i].gpu[0])
			snprintf(gpu, sizeof(gpu), "GPU %s <-> ", rows[i].gpu);
	if (!gpu[0] && p->gpu[0])
		snprintf(gpu, sizeof(gpu), "GPU %s <-> ", p->gpu);
	for (unsigned int m = 0; m < nmem; m++) {
		const char *name = gdr_mem_kind_name(mem[m]);
		const struct gdr_result *first_bad = NULL;
		double best = -1;
		unsigned int seen = 0;

		for (unsigned int i = 0; i < nrows; i++) {
			if (strcmp(rows[i].path, name))
				continue;
			seen++;
			if (strcmp(rows[i].status, "ok")) {
				if (!first_bad)
					first_bad = &rows[i];
			} else if (lat ? best < 0 || rows[i].lat_p50_us < best
				       : rows[i].bw_avg_gbps > best) {
				best = lat ? rows[i].lat_p50_us : rows[i].bw_avg_gbps;
			}
		}
		if (first_bad) {
			char cause[300];

			snprintf(cause, sizeof(cause), "%s%s%s", first_bad->status,
				 own_note(first_bad->note)[0] ? ": " : "",
				 own_note(first_bad->note));
			gdr_nccl_catf(bad, sizeof(bad), "%s%s: %s", bad[0] ? "; " : "", name,
				      cause);
			failed = 1;
			mask |= 1u << m;
		} else if (!seen) {
			gdr_nccl_catf(bad, sizeof(bad), "%s%s: %s", bad[0] ? "; " : "", name,
				      server_cause || client_rc ? "no result (the run failed)"
								: "no result");
			failed = 1;
			mask |= 1u << m;
		} else {
			/* Gb/s to 3 digits; microseconds to 0.1 (4000 us under TCG, 2 on a NIC). */
			gdr_nccl_catf(ok, sizeof(ok), lat ? "%s%s %.1f" : "%s%s %.3g",
				      ok[0] ? ", " : "", name, best);
		}
	}
	/* A side that failed leaves no path proven. */
	if (server_cause) {
		gdr_nccl_catf(bad, sizeof(bad), "%sserver: %s", bad[0] ? "; " : "", server_cause);
		failed = 1;
		mask = (1u << nmem) - 1; /* nmem <= GDR_MEM__COUNT */
	}
	if (client_rc && !failed) {
		gdr_nccl_catf(bad, sizeof(bad), "%sclient: the run failed (its error above)",
			      bad[0] ? "; " : "");
		failed = 1;
		mask = (1u << nmem) - 1;
	}
	if (bad_mask)
		*bad_mask = mask;
	if (failed)
		snprintf(line, len, "loopback %s%s: FAIL: %s%s%s%s", gpu, p->dev, bad,
			 ok[0] ? " (ok: " : "", ok, ok[0] ? (lat ? " us p50)" : " Gb/s)") : "");
	else
		snprintf(line, len, "loopback %s%s: ok (%s %s)", gpu, p->dev, ok,
			 lat ? "us p50" : "Gb/s");
	return failed;
}

void gdr_lb_nfd(FILE *out, const char *tool, const enum gdr_mem_kind *mem, unsigned int nmem,
		unsigned int npairs, unsigned int nok, unsigned int bad)
{
	int pass = npairs && nok == npairs;

	fprintf(out, "gdrperf.loopback-%s=%s\n", tool, pass ? "pass" : "fail");
	for (unsigned int m = 0; m < nmem; m++)
		fprintf(out, "gdrperf.loopback-%s.%s=%s\n", tool, gdr_mem_kind_name(mem[m]),
			npairs && !(bad & 1u << m) ? "pass" : "fail");
	fprintf(out, "gdrperf.loopback-%s.pairs=%u\n", tool, npairs);
	fprintf(out, "gdrperf.loopback-%s.pairs-ok=%u\n", tool, nok);
}

/* What the client's rows go to: every pair's, kept for its verdict and written once. */
struct lb_out {
	struct gdr_rank_rows rows; /* this pair's */
	struct gdr_csv *csv;
	struct gdr_json *json;
	struct gdr_prom_rows *prom;
};

static int lb_point(void *ctx, char *why, size_t wlen)
{
	(void)ctx;
	(void)why;
	(void)wlen;
	return 0;
}

/* In the client child: keep the row for the parent. */
static void lb_row(void *ctx, const struct gdr_result *r)
{
	gdr_rows_add(ctx, r);
}

/* In the parent: the pair's rows, as the client child left them, to every output. */
static int lb_write_rows(struct lb_out *x, FILE *rowf, char *why, size_t wlen)
{
	long len;
	void *buf;
	int r = -EPROTO;

	if (fseek(rowf, 0, SEEK_END) || (len = ftell(rowf)) <= 0 || fseek(rowf, 0, SEEK_SET)) {
		snprintf(why, wlen, "the client sent no rows");
		return -EPROTO;
	}
	buf = malloc((size_t)len);
	if (buf && fread(buf, 1, (size_t)len, rowf) == (size_t)len)
		r = gdr_rows_unpack(buf, (size_t)len, &x->rows, why, wlen);
	else
		snprintf(why, wlen, "the client's rows could not be read back");
	free(buf);
	for (unsigned int i = 0; !r && i < x->rows.nrows; i++) {
		const struct gdr_result *row = &x->rows.rows[i];

		if (x->csv && gdr_csv_append(x->csv, row))
			gdr_warn("--csv: could not append a row: %s", gdr_csv_error(x->csv));
		if (x->json)
			gdr_json_add(x->json, row);
		if (x->prom && gdr_prom_rows_add(x->prom, row))
			gdr_warn("--prom: could not keep a row: %s", strerror(ENOMEM));
	}
	return r;
}

/* The server child: quiet on stdout, its stderr into errfd; exits with its status. */
static pid_t start_server(const struct gdr_opts *o, const struct gdr_lb_pair *p, unsigned int port,
			  int errfd, volatile sig_atomic_t *stop)
{
	pid_t parent = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid != 0)
		return pid;
	/* Never outlive the check: SIGTERM sets the stop flag and the server unwinds. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		_exit(1);
	int nul = open("/dev/null", O_WRONLY);
	if (nul < 0 || dup2(nul, 1) < 0 || dup2(errfd, 2) < 0)
		_exit(1);
	struct gdr_run run = {
		.port = port,
		.dev = p->dev,
		.gpu = p->gpu[0] ? p->gpu : NULL,
		.duration = o->duration,
	};
	_exit(gdr_session_run(o, &run, stop));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for pid up to secs; 1 when it ended (*status), 0 when it did not. */
static int wait_for(pid_t pid, double secs, int *status)
{
	double end = now_s() + secs;

	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			return 1;
		if (now_s() >= end)
			return 0;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/*
 * The server's end: NULL when it exited 0, else its cause (its last line on
 * stderr, or how it ended) in cause; every line it wrote goes to our stderr.
 */
static const char *server_end(pid_t pid, int client_rc, double timeout, int errfd, char *cause,
			      size_t len)
{
	int status = 0, stuck = 0;
	char buf[8192];
	ssize_t n;

	/* After a good client the server ends by itself; after a failed one it is told to. */
	if (!wait_for(pid, client_rc ? 2 : timeout, &status)) {
		stuck = !client_rc;
		kill(pid, SIGTERM);
		if (!wait_for(pid, 2, &status)) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	cause[0] = 0;
	if (lseek(errfd, 0, SEEK_SET) == 0 && (n = read(errfd, buf, sizeof(buf) - 1)) > 0) {
		char *save = NULL;

		buf[n] = 0;
		for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			if (!*l)
				continue;
			if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
				fprintf(stderr, "loopback server: %s\n", l);
			gdr_strlcpy(cause, l, len);
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !stuck)
		return NULL;
	if (stuck)
		snprintf(cause, len, "did not end within %g s after the client (--timeout)",
			 timeout);
	else if (!cause[0] && WIFSIGNALED(status))
		snprintf(cause, len, "killed by signal %d", WTERMSIG(status));
	else if (!cause[0])
		snprintf(cause, len, "exit status %d", WEXITSTATUS(status));
	return cause;
}

/*
 * The client, in a child too: this process never opens a verbs device, so
 * that every child starts with none of its (a child forked after rdma_cm
 * opened the devices shares their contexts, and rxe then refuses its work
 * requests with EACCES). Its rows come back packed (launch_gather.c) in a
 * temporary file. The client's exit status, 1 when its rows are lost.
 */
static int run_client(const struct gdr_opts *o, const struct gdr_lb_pair *p, const char *addr,
		      unsigned int port, struct lb_out *out, volatile sig_atomic_t *stop)
{
	pid_t parent = getpid(), pid;
	FILE *rowf = tmpfile();
	char why[256];
	int status = 0, rc;

	if (!rowf) {
		gdr_err("loopback: tmpfile for the client's rows: %s", strerror(errno));
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		struct gdr_rank_rows mine = { 0 };
		struct gdr_sync sync = { .point = lb_point, .row = lb_row, .ctx = &mine };
		struct gdr_run run = {
			.server = addr,
			.port = port,
			.dev = p->dev,
			.gpu = p->gpu[0] ? p->gpu : NULL,
			.label = o->label,
			.duration = o->duration,
			.sync = &sync,
			.row_note = LB_NOTE,
		};
		void *buf;
		size_t len;

		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(1);
		rc = gdr_session_run(o, &run, stop);
		fflush(stdout);
		if (gdr_rows_pack(&mine, &buf, &len) || fwrite(buf, 1, len, rowf) != len ||
		    fflush(rowf))
			rc = 1;
		_exit(rc);
	}
	if (pid < 0) {
		gdr_err("loopback: fork: %s", strerror(errno));
		fclose(rowf);
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			break;
		if (stop && *stop)
			kill(pid, SIGTERM);
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	if (lb_write_rows(out, rowf, why, sizeof(why))) {
		gdr_err("loopback: %s: %s", p->dev, why);
		rc = rc ? rc : 1;
	}
	fclose(rowf);
	return rc;
}

/* One pair: the server child, the client here, the verdict into line. 0 ok, 1 failed. */
static int run_pair(const struct gdr_opts *o, const struct gdr_lb_pair *p, unsigned int port,
		    struct lb_out *out, volatile sig_atomic_t *stop, char *line, size_t len,
		    unsigned int *bad)
{
	char addr[64], why[256], cause[512];
	const char *server_cause;
	FILE *errf;
	pid_t pid;
	int rc;

	gdr_rows_free(&out->rows);
	*bad = ~0u; /* until the verdict says which paths passed */
	if (gdr_nic_ipv4(p->dev, o->ib_port, addr, sizeof(addr), why, sizeof(why))) {
		snprintf(cause, sizeof(cause), "%s (--loopback needs the NIC's IPv4 address)", why);
		snprintf(line, len, "loopback %s%s%s%s: FAIL: %s", p->gpu[0] ? "GPU " : "", p->gpu,
			 p->gpu[0] ? " <-> " : "", p->dev, cause);
		return 1;
	}
	errf = tmpfile();
	if (!errf) {
		snprintf(line, len, "loopback %s: FAIL: tmpfile for the server's errors: %s",
			 p->dev, strerror(errno));
		return 1;
	}
	printf("loopback: %s%s%s%s (%s port %u), server and client on this node\n",
	       p->gpu[0] ? "GPU " : "", p->gpu, p->gpu[0] ? " <-> " : "", p->dev, addr, port);
	pid = start_server(o, p, port, fileno(errf), stop);
	if (pid < 0) {
		snprintf(line, len, "loopback %s: FAIL: fork: %s", p->dev, strerror(errno));
		fclose(errf);
		return 1;
	}
	rc = run_client(o, p, addr, port, out, stop);
	server_cause = server_end(pid, rc, o->timeout, fileno(errf), cause, sizeof(cause));
	fclose(errf);
	return gdr_lb_verdict(p, o->mem, o->nmem, out->rows.rows, out->rows.nrows, rc, server_cause,
			      line, len, bad);
}

/* --nfd: the outcome as labels, the file replaced whole (gdr_out_replace). */
static int write_nfd(const struct gdr_opts *o, unsigned int npairs, unsigned int nok,
		     unsigned int bad)
{
	char tool[16], why[512], *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int r;

	snprintf(tool, sizeof(tool), "%s-%s", gdr_verb_name(o->verb), o->latency ? "lat" : "bw");
	if (mem)
		gdr_lb_nfd(mem, tool, o->mem, o->nmem, npairs, nok, bad);
	fflush(stdout);
	r = gdr_out_replace_mem(o->nfd, mem, &buf, &len, why, sizeof(why));
	if (r)
		gdr_err("cannot write the NFD feature file: %s", why);
	return r;
}

int gdr_loopback_run(const struct gdr_opts *o, volatile sig_atomic_t *stop)
{
	struct gdr_lb_pair *pairs = calloc(GDR_LB_MAX_PAIRS, sizeof(*pairs));
	const char *root = getenv("GDRPERF_ROOT");
	struct lb_out out = { 0 };
	char why[512], (*lines)[1024] = NULL;
	unsigned int n = 0, nfailed = 0, ran = 0, bad = 0;
	int r;

	if (!pairs) {
		gdr_err("out of memory");
		return 1;
	}
	/* A bad --nfd path fails before any work, and creates nothing. */
	if (o->nfd && gdr_out_check(o->nfd, why, sizeof(why))) {
		gdr_err("cannot write the NFD feature file: %s", why);
		free(pairs);
		return 1;
	}
	r = gdr_lb_pairs(o, root && *root ? root : "/", pairs, GDR_LB_MAX_PAIRS, &n, why,
			 sizeof(why));
	if (r) {
		gdr_err("--loopback: %s", why);
		free(pairs);
		return r == -EINVAL ? 2 : 1;
	}
	lines = calloc(n ? n : 1, sizeof(*lines)); /* n >= 1 when the pairs were found */
	if (!lines) {
		gdr_err("out of memory");
		r = 1;
		goto out;
	}
	if (o->csv && gdr_csv_open(&out.csv, o->csv, why, sizeof(why))) {
		gdr_err("--csv %s: %s", o->csv, why);
		r = 1;
		goto out;
	}
	if (o->json && gdr_json_open(&out.json, o->json, why, sizeof(why))) {
		gdr_err("--json %s: %s", o->json, why);
		r = 1;
		goto out;
	}
	if (o->prom && gdr_prom_rows_open(&out.prom, o->prom, why, sizeof(why))) {
		gdr_err("--prom %s: %s", o->prom, why);
		r = 1;
		goto out;
	}
	for (unsigned int i = 0; i < n && !(stop && *stop); i++, ran++) {
		unsigned int b = 0;

		nfailed += run_pair(o, &pairs[i], o->port + i, &out, stop, lines[i],
				    sizeof(lines[i]), &b);
		bad |= b;
	}
	/* The verdicts last, together: what a health check's log shows first. */
	printf("\n");
	for (unsigned int i = 0; i < ran; i++)
		printf("%s\n", lines[i]);
	for (unsigned int i = ran; i < n; i++)
		printf("loopback %s: FAIL: not run (interrupted)\n", pairs[i].dev);
	printf("loopback: %u of %u pair(s) ok\n", ran - nfailed, n);
	r = nfailed || ran < n ? 1 : 0;
	if (ran < n)
		bad = ~0u;
	if (o->nfd && write_nfd(o, n, ran - nfailed, bad))
		r = 1;
out:
	if (out.json && gdr_json_close(out.json, why, sizeof(why))) {
		gdr_err("--json %s: %s", o->json, why);
		r = 1;
	}
	if (out.prom && gdr_prom_rows_close(out.prom, why, sizeof(why))) {
		gdr_err("--prom %s: %s", o->prom, why);
		r = 1;
	}
	if (out.csv)
		gdr_csv_close(out.csv);
	gdr_rows_free(&out.rows);
	free(lines);
	free(pairs);
	return r;
}
