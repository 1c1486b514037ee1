/*
 * One client/server session: the plan exchange, then for every memory path
 * the buffer exchange, then for every size the timed repeats, with results
 * reported on both sides.
 */
#ifndef GDR_SESSION_H
#define GDR_SESSION_H

#include <signal.h>

#include "options.h"

struct gdr_outputs;

/* Exit status of the program: 0 ok, 1 failed (the cause printed on stderr). */
int gdr_session_run(const struct gdr_opts *o, volatile sig_atomic_t *stop);

#endif
