/*
 * The sweep's channel to rank 0 (sweep_chan.h): plain TCP, framed messages,
 * every wait bounded by a deadline and by the stop flag. Rank 0 reads the
 * ranks one after another against one deadline per step: a rank that is
 * late costs the step its bound once, the others' messages are already
 * waiting in their sockets by then.
 */
#include "config.h"

#include "sweep_chan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

enum { MSG_HELLO = 1, MSG_TABLE, MSG_READY, MSG_GO, MSG_ROWS, MSG_VERDICT };

/* The most a message may carry: far above the rows of any real sweep. */
#define CHAN_MAX_PAYLOAD (1u << 30)

struct hdr {
	char magic[4];
	uint32_t type, arg, len; /* network byte order */
};

static const char chan_magic[4] = { 'G', 'D', 'R', 'C' };

struct gdr_chan {
	unsigned int rank, m;
	int lfd;
	int *fd; /* rank 0: one per rank (-1: gone); elsewhere fd[0] is rank 0 */
	char (*names)[GDR_CHAN_NAME_MAX];
	volatile sig_atomic_t *stop;
};

static int stopped(const struct gdr_chan *c)
{
	return c->stop && *c->stop;
}

/* Wait until fd is ready for ev or the deadline passes. */
static int wait_fd(const struct gdr_chan *c, int fd, short ev, double deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = ev };
		double left = deadline - gdr_now_s();
		int ms = left > 0 ? (int)(left * 1000) + 1 : 0, r;

		if (stopped(c))
			return -EINTR;
		/* Short naps, so that a signal's stop flag is seen soon. */
		r = poll(&p, 1, ms > 200 ? 200 : ms);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (left <= 0)
			return -ETIMEDOUT;
	}
}

static int read_full(const struct gdr_chan *c, int fd, void *buf, size_t n, double deadline)
{
	char *b = buf;

	while (n) {
		ssize_t k;
		int r = wait_fd(c, fd, POLLIN, deadline);

		if (r)
			return r;
		k = recv(fd, b, n, MSG_DONTWAIT);
		if (k == 0)
			return -EPIPE;
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static int write_full(const struct gdr_chan *c, int fd, const void *buf, size_t n, double deadline)
{
	const char *b = buf;

	while (n) {
		ssize_t k;
		int r = wait_fd(c, fd, POLLOUT, deadline);

		if (r)
			return r;
		k = send(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static int msg_send(const struct gdr_chan *c, int fd, uint32_t type, uint32_t arg,
		    const void *payload, size_t len, double deadline)
{
	struct hdr h;
	int r;

	memcpy(h.magic, chan_magic, sizeof(h.magic));
	h.type = htonl(type);
	h.arg = htonl(arg);
	h.len = htonl((uint32_t)len);
	r = write_full(c, fd, &h, sizeof(h), deadline);
	if (!r && len)
		r = write_full(c, fd, payload, len, deadline);
	return r;
}

/* One message of the expected type; *payload (free it) holds *len bytes. */
static int msg_recv(const struct gdr_chan *c, int fd, uint32_t type, uint32_t *arg, char **payload,
		    size_t *len, double deadline)
{
	struct hdr h;
	char *p = NULL;
	size_t n;
	int r;

	if (payload)
		*payload = NULL;
	r = read_full(c, fd, &h, sizeof(h), deadline);
	if (r)
		return r;
	n = ntohl(h.len);
	if (memcmp(h.magic, chan_magic, sizeof(h.magic)) || ntohl(h.type) != type ||
	    n > CHAN_MAX_PAYLOAD || (n && !payload))
		return -EPROTO;
	if (n) {
		p = malloc(n);
		if (!p)
			return -ENOMEM;
		r = read_full(c, fd, p, n, deadline);
		if (r) {
			free(p);
			return r;
		}
	}
	if (arg)
		*arg = ntohl(h.arg);
	if (payload)
		*payload = p;
	if (len)
		*len = n;
	return 0;
}

static const char *io_why(int r)
{
	switch (r) {
	case -EPIPE:
		return "its connection closed (the process ended)";
	case -ETIMEDOUT:
		return "no answer in time";
	case -EPROTO:
		return "not a message of this gdrperf build";
	case -EINTR:
		return "interrupted";
	default:
		return strerror(-r);
	}
}

static void drop(struct gdr_chan *c, unsigned int k, unsigned char *alive, const char *when, int r)
{
	if (c->fd[k] < 0)
		return;
	gdr_err("sweep: node %s (rank %u): %s: %s; its pairs are failed from here on", c->names[k],
		k, when, io_why(r));
	close(c->fd[k]);
	c->fd[k] = -1;
	if (alive)
		alive[k] = 0;
}

static int listen_on(unsigned int port, char *why, size_t wlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0) {
		snprintf(why, wlen, "socket: %s", strerror(errno));
		return -errno;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128)) {
		int e = errno;

		snprintf(why, wlen, "rank 0 cannot listen on TCP port %u: %s (another -p?)", port,
			 strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* One try at rank 0: a connected socket, or -errno. */
static int connect_once(const struct gdr_chan *c, const char *host, unsigned int port,
			double deadline)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char service[16];
	int r = -EHOSTUNREACH;

	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(host, service, &hints, &ai))
		return -ENOENT;
	for (struct addrinfo *a = ai; a && r; a = a->ai_next) {
		int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		int err = 0;
		socklen_t el = sizeof(err);

		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
			r = -errno;
			close(fd);
			continue;
		}
		r = wait_fd(c, fd, POLLOUT, deadline);
		if (!r && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el))
			err = errno;
		if (r || err) {
			r = r ? r : -err;
			close(fd);
			continue;
		}
		freeaddrinfo(ai);
		return fd;
	}
	freeaddrinfo(ai);
	return r;
}

static int join_rank0(struct gdr_chan *c, const struct gdr_chan_cfg *cfg,
		      char (*addrs)[GDR_CHAN_NAME_MAX], unsigned char *alive, char *why,
		      size_t wlen)
{
	double deadline = gdr_now_s() + cfg->timeout;
	unsigned int joined = 1;
	size_t tlen = (size_t)c->m * (2 * GDR_CHAN_NAME_MAX + 1);
	char *table;

	c->lfd = listen_on(cfg->port, why, wlen);
	if (c->lfd < 0)
		return c->lfd;
	while (joined < c->m) {
		char *p = NULL;
		size_t n = 0;
		uint32_t k = 0;
		int fd, r;

		r = wait_fd(c, c->lfd, POLLIN, deadline);
		if (r == -ETIMEDOUT)
			break;
		if (r) {
			snprintf(why, wlen, "waiting for the ranks to join: %s", io_why(r));
			return r;
		}
		fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		r = msg_recv(c, fd, MSG_HELLO, &k, &p, &n, deadline);
		if (r || n != 2 * GDR_CHAN_NAME_MAX || k == 0 || k >= c->m || c->fd[k] >= 0) {
			gdr_err("sweep: rank 0: a connection on port %u that is not a rank of this "
				"sweep (%s), closed",
				cfg->port, r ? io_why(r) : "bad or repeated rank");
			free(p);
			close(fd);
			continue;
		}
		memcpy(c->names[k], p, GDR_CHAN_NAME_MAX);
		c->names[k][GDR_CHAN_NAME_MAX - 1] = '\0';
		memcpy(addrs[k], p + GDR_CHAN_NAME_MAX, GDR_CHAN_NAME_MAX);
		addrs[k][GDR_CHAN_NAME_MAX - 1] = '\0';
		free(p);
		c->fd[k] = fd;
		alive[k] = 1;
		joined++;
	}
	for (unsigned int k = 1; k < c->m; k++) {
		if (alive[k])
			continue;
		snprintf(c->names[k], GDR_CHAN_NAME_MAX, "rank %u", k);
		snprintf(addrs[k], GDR_CHAN_NAME_MAX, "!rank %u did not join within %.0f s", k,
			 cfg->timeout);
		gdr_err("sweep: rank %u did not join the sweep within %.0f s; its pairs are failed",
			k, cfg->timeout);
	}
	table = malloc(tlen);
	if (!table) {
		snprintf(why, wlen, "out of memory for the table of %u nodes", c->m);
		return -ENOMEM;
	}
	for (unsigned int k = 0; k < c->m; k++) {
		memcpy(table + (size_t)k * 2 * GDR_CHAN_NAME_MAX, c->names[k], GDR_CHAN_NAME_MAX);
		memcpy(table + (size_t)k * 2 * GDR_CHAN_NAME_MAX + GDR_CHAN_NAME_MAX, addrs[k],
		       GDR_CHAN_NAME_MAX);
	}
	memcpy(table + (size_t)c->m * 2 * GDR_CHAN_NAME_MAX, alive, c->m);
	for (unsigned int k = 1; k < c->m; k++) {
		int r = c->fd[k] < 0 ? 0
				     : msg_send(c, c->fd[k], MSG_TABLE, 0, table, tlen,
						gdr_now_s() + cfg->timeout);

		if (r)
			drop(c, k, alive, "sending the node table", r);
	}
	free(table);
	return 0;
}

static int join_other(struct gdr_chan *c, const struct gdr_chan_cfg *cfg, const char *name,
		      const char *addr, char (*addrs)[GDR_CHAN_NAME_MAX], unsigned char *alive,
		      char *why, size_t wlen)
{
	struct timespec nap = { .tv_nsec = 100 * 1000 * 1000 };
	double deadline = gdr_now_s() + cfg->timeout;
	char hello[2 * GDR_CHAN_NAME_MAX] = "", *p = NULL;
	size_t n = 0, tlen = (size_t)c->m * (2 * GDR_CHAN_NAME_MAX + 1);
	int fd = -ETIMEDOUT, r;

	/* Rank 0 may not listen yet: retry until it does or the time is up. */
	while (gdr_now_s() < deadline && !stopped(c)) {
		fd = connect_once(c, cfg->host, cfg->port, deadline);
		if (fd >= 0 || fd == -ENOENT)
			break;
		nanosleep(&nap, NULL);
	}
	if (fd < 0) {
		snprintf(why, wlen, "cannot reach rank 0 at %s port %u within %.0f s: %s",
			 cfg->host, cfg->port, cfg->timeout,
			 fd == -ENOENT ? "unknown host" : io_why(fd));
		return fd;
	}
	c->fd[0] = fd;
	gdr_strlcpy(hello, name, GDR_CHAN_NAME_MAX);
	gdr_strlcpy(hello + GDR_CHAN_NAME_MAX, addr, GDR_CHAN_NAME_MAX);
	r = msg_send(c, fd, MSG_HELLO, c->rank, hello, sizeof(hello), deadline);
	/* Rank 0 answers once every rank has joined or its own wait is over. */
	if (!r)
		r = msg_recv(c, fd, MSG_TABLE, NULL, &p, &n, deadline + cfg->timeout);
	if (!r && n != tlen)
		r = -EPROTO;
	if (r) {
		free(p);
		snprintf(why, wlen, "joining rank 0 at %s port %u: %s", cfg->host, cfg->port,
			 io_why(r));
		return r;
	}
	for (unsigned int k = 0; k < c->m; k++) {
		memcpy(c->names[k], p + (size_t)k * 2 * GDR_CHAN_NAME_MAX, GDR_CHAN_NAME_MAX);
		c->names[k][GDR_CHAN_NAME_MAX - 1] = '\0';
		memcpy(addrs[k], p + (size_t)k * 2 * GDR_CHAN_NAME_MAX + GDR_CHAN_NAME_MAX,
		       GDR_CHAN_NAME_MAX);
		addrs[k][GDR_CHAN_NAME_MAX - 1] = '\0';
	}
	memcpy(alive, p + (size_t)c->m * 2 * GDR_CHAN_NAME_MAX, c->m);
	free(p);
	return 0;
}

int gdr_chan_join(struct gdr_chan **out, const struct gdr_chan_cfg *cfg, const char *name,
		  const char *addr, char (*names)[GDR_CHAN_NAME_MAX],
		  char (*addrs)[GDR_CHAN_NAME_MAX], unsigned char *alive, char *why, size_t wlen)
{
	struct gdr_chan *c;
	int r;

	*out = NULL;
	if (cfg->m < 2 || cfg->rank >= cfg->m || cfg->port > 65535 || (cfg->rank && !cfg->host)) {
		snprintf(why, wlen, "sweep channel: bad rank %u of %u or port %u", cfg->rank,
			 cfg->m, cfg->port);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->fd = calloc(cfg->m, sizeof(*c->fd))) ||
	    !(c->names = calloc(cfg->m, sizeof(*c->names)))) {
		if (c)
			free(c->fd);
		free(c);
		snprintf(why, wlen, "out of memory for %u ranks", cfg->m);
		return -ENOMEM;
	}
	c->rank = cfg->rank;
	c->m = cfg->m;
	c->lfd = -1;
	c->stop = cfg->stop;
	for (unsigned int k = 0; k < c->m; k++)
		c->fd[k] = -1;
	memset(alive, 0, c->m);
	alive[cfg->rank] = 1;
	gdr_strlcpy(c->names[cfg->rank], name, GDR_CHAN_NAME_MAX);
	gdr_strlcpy(addrs[cfg->rank], addr, GDR_CHAN_NAME_MAX);
	r = c->rank ? join_other(c, cfg, name, addr, addrs, alive, why, wlen)
		    : join_rank0(c, cfg, addrs, alive, why, wlen);
	if (r) {
		gdr_chan_close(&c);
		return r;
	}
	memcpy(names, c->names, (size_t)c->m * sizeof(*c->names));
	*out = c;
	return 0;
}

int gdr_chan_round(struct gdr_chan *c, unsigned int round, double bound, unsigned char *alive,
		   char *why, size_t wlen)
{
	char when[64];
	double deadline = gdr_now_s() + bound;
	int r;

	snprintf(when, sizeof(when), "at the start of round %u", round + 1);
	if (c->rank) {
		char *p = NULL;
		size_t n = 0;
		uint32_t k = 0;

		/* Rank 0 comes after its own pair (at most bound), then waits for the others. */
		r = msg_send(c, c->fd[0], MSG_READY, round, NULL, 0, deadline);
		if (!r)
			r = msg_recv(c, c->fd[0], MSG_GO, &k, &p, &n, deadline + bound);
		if (!r && (k != round || n != c->m))
			r = -EPROTO;
		if (!r)
			memcpy(alive, p, c->m);
		free(p);
		if (r)
			snprintf(why, wlen, "lost rank 0, which runs the rounds, %s: %s", when,
				 io_why(r));
		return r;
	}
	for (unsigned int k = 1; k < c->m; k++) {
		uint32_t got = 0;

		if (c->fd[k] < 0)
			continue;
		r = msg_recv(c, c->fd[k], MSG_READY, &got, NULL, NULL, deadline);
		if (r == -EINTR) {
			snprintf(why, wlen, "interrupted %s", when);
			return r;
		}
		if (!r && got != round)
			r = -EPROTO;
		if (r)
			drop(c, k, alive, when, r);
	}
	for (unsigned int k = 1; k < c->m; k++) {
		r = c->fd[k] < 0
			? 0
			: msg_send(c, c->fd[k], MSG_GO, round, alive, c->m, gdr_now_s() + bound);
		if (r)
			drop(c, k, alive, when, r);
	}
	return 0;
}

int gdr_chan_gather(struct gdr_chan *c, const void *mine, size_t len, char ***bufs, size_t *lens,
		    unsigned char *alive, double bound, char *why, size_t wlen)
{
	double deadline = gdr_now_s() + bound;
	char **all;
	int r;

	/* Interrupted or not, the rows so far still reach rank 0: the wait is bounded. */
	c->stop = NULL;
	*bufs = NULL;
	if (c->rank) {
		r = msg_send(c, c->fd[0], MSG_ROWS, 0, mine, len, deadline);
		if (r)
			snprintf(why, wlen, "sending this rank's rows to rank 0: %s", io_why(r));
		return r;
	}
	all = calloc(c->m, sizeof(*all));
	if (!all) {
		snprintf(why, wlen, "out of memory for the rows of %u ranks", c->m);
		return -ENOMEM;
	}
	lens[0] = len;
	all[0] = malloc(len ? len : 1);
	if (all[0])
		memcpy(all[0], mine, len);
	for (unsigned int k = 1; k < c->m; k++) {
		lens[k] = 0;
		if (c->fd[k] < 0)
			continue;
		r = msg_recv(c, c->fd[k], MSG_ROWS, NULL, &all[k], &lens[k], deadline);
		if (r)
			drop(c, k, alive, "sending its rows", r);
	}
	*bufs = all;
	return 0;
}

int gdr_chan_verdict(struct gdr_chan *c, int *v, double bound, char *why, size_t wlen)
{
	int r;

	if (c->rank) {
		uint32_t got = 0;

		/* Rank 0 may still wait for the others' rows, then writes the files. */
		r = msg_recv(c, c->fd[0], MSG_VERDICT, &got, NULL, NULL, gdr_now_s() + 2 * bound);
		if (r)
			snprintf(why, wlen, "waiting for rank 0's verdict: %s", io_why(r));
		else
			*v = (int)got;
		return r;
	}
	for (unsigned int k = 1; k < c->m; k++) {
		r = c->fd[k] < 0 ? 0
				 : msg_send(c, c->fd[k], MSG_VERDICT, (uint32_t)*v, NULL, 0,
					    gdr_now_s() + bound);
		if (r)
			drop(c, k, NULL, "receiving the verdict", r);
	}
	return 0;
}

void gdr_chan_close(struct gdr_chan **cp)
{
	struct gdr_chan *c = *cp;

	if (!c)
		return;
	for (unsigned int k = 0; c->fd && k < c->m; k++)
		if (c->fd[k] >= 0)
			close(c->fd[k]);
	if (c->lfd >= 0)
		close(c->lfd);
	free(c->fd);
	free(c->names);
	free(c);
	*cp = NULL;
}
