#include "config.h"

#include "bench.h"

#include <signal.h>
#include <string.h>

#include "lat_opts.h"
#include "launch.h"
#include "session.h"
#include "util.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int bench_main(int argc, char **argv, enum gdr_verb verb, int latency)
{
	struct gdr_opts o;
	struct gdr_launched launch;
	struct sigaction sa;
	int r, usage;

	gdr_set_progname(argv[0]);
	if (latency && gdr_lat_wants_help(argc, argv)) {
		gdr_lat_usage(stdout, verb);
		return 0;
	}
	r = gdr_opts_parse(&o, verb, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	if (latency && gdr_lat_opts_check(&o))
		return 2;
	o.latency = latency;
	/* Under mpirun/srun: this rank's pair, role, port, GPU and server. */
	r = gdr_launch_setup(&launch, &o, &argc, &argv, &stop_flag, &usage);
	if (r) {
		gdr_launch_finish(&launch, 1);
		return usage ? 2 : 1;
	}

	/* No SA_RESTART: a blocking poll() must return so the run can unwind. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	r = gdr_session_run(&o, &stop_flag);
	gdr_launch_finish(&launch, r || stop_flag);
	/* A --persistent server is stopped by a signal on purpose: that is success. */
	if (stop_flag && !o.persistent)
		return 130;
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
