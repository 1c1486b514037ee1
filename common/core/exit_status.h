/*
 * The exit statuses of every gdrperf tool, in one place (docs/exit-status.md;
 * gdr-ab, in Python, uses the same numbers).
 */
#ifndef GDR_EXIT_STATUS_H
#define GDR_EXIT_STATUS_H

enum gdr_exit_status {
	GDR_EXIT_OK = 0,	/* done; the expected path is usable; the gate passed */
	GDR_EXIT_FAIL = 1,	/* the run, the check or the gate failed */
	GDR_EXIT_USAGE = 2,	/* usage or input error: nothing was measured or judged */
	GDR_EXIT_UNDECIDED = 3, /* a gate could not decide (gdr-ab: too few samples, noise) */
	GDR_EXIT_SIGNAL = 130,	/* interrupted by SIGINT or SIGTERM (the bench tools) */
};

#endif
