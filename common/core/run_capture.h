/*
 * Run a program found on PATH and keep its standard output, with every wait
 * bounded: the output is read until the program closes it or the time limit
 * passes (then the program is killed), and at most a set number of bytes is
 * kept (then it is killed too). No shell: the arguments go to execvp as they
 * are. Standard input is /dev/null; the first line the program writes to
 * standard error ends the message when it fails.
 */
#ifndef GDR_RUN_CAPTURE_H
#define GDR_RUN_CAPTURE_H

#include <stddef.h>

/*
 * 0 when the program ran and exited 0, with *out (malloc'd, NUL-terminated)
 * and *outlen set; otherwise -errno and why says what happened:
 * -ENOENT not on PATH, -ETIMEDOUT killed after timeout_ms, -EFBIG more than
 * max bytes, -EIO it exited with another status or was killed by a signal
 * (*out then still holds what it printed).
 */
int gdr_run_capture(char *const argv[], int timeout_ms, size_t max, char **out, size_t *outlen,
		    char *why, size_t wlen);

#endif
