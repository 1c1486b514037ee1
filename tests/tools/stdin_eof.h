/*
 * For the test helpers that hold a kernel object until told to let go
 * (tests/tools/mr_thread.c, tests/gpu/dmabuf_hold.c): wait for the end of
 * stdin, at most sec seconds, so that a test that dies never leaves them
 * holding it. 0 at the end of stdin, -ETIMEDOUT when the time ran out.
 */
#ifndef GDR_STDIN_EOF_H
#define GDR_STDIN_EOF_H

#include <errno.h>
#include <poll.h>
#include <unistd.h>

static inline int gdr_wait_stdin_eof(int sec)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char c;

	for (;;) {
		int n = poll(&p, 1, sec * 1000);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -ETIMEDOUT;
		if (read(0, &c, 1) <= 0)
			return 0;
	}
}

#endif
