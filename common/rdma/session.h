/*
 * One client/server session: the plan exchange, then for every memory path
 * the buffer exchange, then for every size the timed repeats, with results
 * reported on both sides.
 */
#ifndef GDR_SESSION_H
#define GDR_SESSION_H

#include <signal.h>

#include "options.h"
#include "run.h"

struct gdr_outputs;

/*
 * Exit status of the program: 0 ok, 1 failed (the cause printed on stderr).
 * o and run are only read: the session resolves placement into its own
 * struct gdr_endpoint and the client's plan into its own struct gdr_plan.
 */
int gdr_session_run(const struct gdr_opts *o, const struct gdr_run *run,
		    volatile sig_atomic_t *stop);

#endif
