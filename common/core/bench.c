#include "config.h"

#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exit_status.h"
#include "lat_opts.h"
#include "launch.h"
#include "loopback.h"
#include "pin.h"
#include "session.h"
#include "util.h"
#include "writer.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void set_signals(void)
{
	struct sigaction sa;

	/* No SA_RESTART: a blocking poll() must return so the run can unwind. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	gdr_out_signals();
}

/*
 * --json - or --csv - (or /dev/stdout): the data is then all that goes to
 * stdout, as a pipe into a JSON or CSV reader needs. The data keeps the
 * original stdout under a new descriptor (named /dev/fd/N to the writer) and
 * the text (table, progress) goes to stderr.
 */
static int data_on_stdout(struct gdr_opts *o, char *name, size_t len)
{
	int fd;

	if (!(o->json && gdr_out_fd(o->json) == 1) && !(o->csv && gdr_out_fd(o->csv) == 1) &&
	    !(o->prom && gdr_out_fd(o->prom) == 1))
		return 0;
	fflush(stdout);
	fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || dup2(2, 1) < 0) {
		gdr_err("stdout for --json/--csv/--prom: %s", strerror(errno));
		return -1;
	}
	snprintf(name, len, "/dev/fd/%d", fd);
	if (o->json && gdr_out_fd(o->json) == 1)
		o->json = name;
	if (o->csv && gdr_out_fd(o->csv) == 1)
		o->csv = name;
	if (o->prom && gdr_out_fd(o->prom) == 1)
		o->prom = name;
	return 0;
}

/*
 * The options, complete: parsed, the tool's kind, and --json -/--csv - as a
 * descriptor of the original stdout. 0, 1 (ran --help: exit 0), 2 (usage) or
 * -1 (failed). Nothing writes the options after this: a launch and a sweep
 * make their own struct gdr_run (run.h), the session its endpoint and plan.
 */
static int parse(struct gdr_opts *o, int argc, char **argv, enum gdr_verb verb, int latency,
		 char *data_out, size_t len)
{
	int r;

	if (latency && gdr_lat_wants_help(argc, argv)) {
		gdr_lat_usage(stdout, verb);
		return 1;
	}
	r = gdr_opts_parse_tool(o, verb, latency, argc, argv);
	if (r)
		return r > 0 ? 1 : 2;
	if (latency && gdr_lat_opts_check(o))
		return 2;
	o->latency = latency;
	if (latency)
		o->pin = GDR_PIN_NEVER; /* a ping-pong is never pinned (READ's bandwidth default is) */
	return data_on_stdout(o, data_out, len);
}

static int bench_main(int argc, char **argv, enum gdr_verb verb, int latency)
{
	char data_out[32];
	struct gdr_opts parsed;
	const struct gdr_opts *o = &parsed;
	struct gdr_launched launch;
	int r, usage;

	gdr_set_progname(argv[0]);
	r = parse(&parsed, argc, argv, verb, latency, data_out, sizeof(data_out));
	if (r)
		return r == 1 ? GDR_EXIT_OK : r == 2 ? GDR_EXIT_USAGE : GDR_EXIT_FAIL;
	if (o->loopback) {
		/* One node, every pair in turn: no launcher (docs/usage-bw.md, --loopback). */
		set_signals();
		r = gdr_loopback_run(o, &stop_flag);
		return stop_flag ? GDR_EXIT_SIGNAL : r;
	}
	/* Under mpirun/srun: this rank's pair, role, port, GPU and server. */
	r = gdr_launch_setup(&launch, o, &argc, &argv, &stop_flag, &usage);
	if (r) {
		gdr_launch_finish(&launch, 1);
		return usage ? GDR_EXIT_USAGE : GDR_EXIT_FAIL;
	}

	set_signals();

	r = launch.sweep ? gdr_sweep_run(&launch, o, &stop_flag)
			 : gdr_session_run(o, &launch.run, &stop_flag);
	/*
	 * A sweep's rank 0 exits with the whole job's verdict. Only a sweep's: a
	 * --persistent server stopped by a signal passes status 1 here and must
	 * still exit 0.
	 */
	if (gdr_launch_finish(&launch, r || stop_flag) && launch.sweep && !r)
		r = GDR_EXIT_FAIL;
	/* A --persistent server is stopped by a signal on purpose: that is success. */
	if (stop_flag && !o->persistent)
		return GDR_EXIT_SIGNAL;
	return r;
}

int gdr_bench_main(int argc, char **argv, enum gdr_verb verb)
{
	return bench_main(argc, argv, verb, 0);
}

int gdr_bench_lat_main(int argc, char **argv, enum gdr_verb verb)
{
	return bench_main(argc, argv, verb, 1);
}
