/* Run a program with a bounded wait and keep its output (run_capture.h). */
#include "config.h"

#include "run_capture.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The child: stdout to out, stderr to msg, stdin from /dev/null, exec; an exec error to err. */
static void child(char *const argv[], int out, int msg, int err)
{
	int null = open("/dev/null", O_RDWR);
	int e;

	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(msg, 2) < 0) {
		e = errno;
		(void)!write(err, &e, sizeof(e));
		_exit(127);
	}
	execvp(argv[0], argv);
	e = errno;
	(void)!write(err, &e, sizeof(e));
	_exit(127);
}

/* Reap pid within ms milliseconds (SIGKILL first when kill_it); its wait status, or -1. */
static int reap(pid_t pid, int ms, int kill_it)
{
	uint64_t end = gdr_now_ns() + (uint64_t)ms * 1000000ull;
	int st;

	if (kill_it)
		kill(pid, SIGKILL);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (gdr_now_ns() >= end)
			return -1;
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
}

static int grow(char **buf, size_t *cap, size_t need)
{
	char *nb;

	if (need <= *cap)
		return 0;
	nb = realloc(*buf, need);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = need;
	return 0;
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Its first line on stderr, for the message: ": TEXT", or "". */
static const char *said(char *msg, size_t n)
{
	msg[n] = '\0';
	msg[strcspn(msg, "\n")] = '\0';
	return msg;
}

int gdr_run_capture(char *const argv[], int timeout_ms, size_t max, char **out, size_t *outlen,
		    char *why, size_t wlen)
{
	uint64_t end = gdr_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int fds[6] = { -1, -1, -1, -1, -1, -1 }; /* stdout, stderr, exec error: read, write */
	int e = 0, st, r = 0, open_fds = 2;
	size_t cap = 0, len = 0, mlen = 0;
	char *buf = NULL, msg[256];
	pid_t pid;
	ssize_t n;

	*out = NULL;
	*outlen = 0;
	for (int i = 0; i < 3; i++)
		if (pipe2(fds + 2 * i, O_CLOEXEC) < 0) {
			r = -errno;
			close_all(fds, 6);
			snprintf(why, wlen, "%s: pipe: %s", argv[0], strerror(-r));
			return r;
		}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close_all(fds, 6);
		snprintf(why, wlen, "%s: fork: %s", argv[0], strerror(-r));
		return r;
	}
	if (pid == 0)
		child(argv, fds[1], fds[3], fds[5]);
	close(fds[1]);
	close(fds[3]);
	close(fds[5]);
	/* The exec error pipe closes at exec (O_CLOEXEC) or carries errno. */
	n = read(fds[4], &e, sizeof(e));
	close(fds[4]);
	if (n == (ssize_t)sizeof(e)) {
		close(fds[0]);
		close(fds[2]);
		reap(pid, 1000, 0);
		snprintf(why, wlen, "%s: %s", argv[0],
			 e == ENOENT ? "not found on PATH" : strerror(e));
		return -e;
	}
	while (open_fds && !r) {
		struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN },
				       { .fd = fds[2], .events = POLLIN } };
		uint64_t now = gdr_now_ns();
		int left = now >= end ? 0 : (int)((end - now) / 1000000ull);

		if (left == 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(p, 2, left) < 0) {
			if (errno != EINTR)
				r = -errno;
			continue;
		}
		if (p[1].revents) {
			char junk[512];

			n = read(fds[2], mlen < sizeof(msg) - 1 ? msg + mlen : junk,
				 mlen < sizeof(msg) - 1 ? sizeof(msg) - 1 - mlen : sizeof(junk));
			if (n > 0 && mlen < sizeof(msg) - 1)
				mlen += (size_t)n;
			if (n == 0 || (n < 0 && errno != EINTR)) {
				close(fds[2]);
				fds[2] = -1;
				open_fds--;
			}
		}
		if (!p[0].revents)
			continue;
		if (grow(&buf, &cap, len + 65536 + 1)) {
			r = -ENOMEM;
			break;
		}
		n = read(fds[0], buf + len, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fds[0]);
			fds[0] = -1;
			open_fds--;
			continue;
		}
		len += (size_t)n;
		if (len > max)
			r = -EFBIG;
	}
	close_all(fds, 3);
	if (r) {
		reap(pid, 1000, 1);
		free(buf);
		if (r == -ETIMEDOUT)
			snprintf(why, wlen, "%s: no answer within %d s: killed", argv[0],
				 timeout_ms / 1000);
		else if (r == -EFBIG)
			snprintf(why, wlen, "%s: more than %zu bytes of output: killed", argv[0],
				 max);
		else
			snprintf(why, wlen, "%s: %s", argv[0], strerror(-r));
		return r;
	}
	if (grow(&buf, &cap, len + 1)) {
		reap(pid, 1000, 1);
		free(buf);
		return -ENOMEM;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	st = reap(pid, 2000, 0);
	if (st == -1) {
		reap(pid, 1000, 1);
		snprintf(why, wlen, "%s: closed its output but did not exit: killed", argv[0]);
		return -EIO;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	said(msg, mlen);
	if (WIFEXITED(st))
		snprintf(why, wlen, "%s: exit status %d%s%s", argv[0], WEXITSTATUS(st),
			 msg[0] ? ": " : "", msg);
	else
		snprintf(why, wlen, "%s: killed by signal %d%s%s", argv[0],
			 WIFSIGNALED(st) ? WTERMSIG(st) : 0, msg[0] ? ": " : "", msg);
	return -EIO;
}
