/*
 * The sweep's own channel: one TCP connection from every rank to rank 0,
 * which coordinates the rounds. It carries the node names and addresses,
 * the start of each round and, at the end, every rank's rows and rank 0's
 * verdict. A rank whose process dies closes its socket; rank 0 sees it at
 * the next round and tells the others, whose pairs with that node become
 * failed rows while the sweep goes on (an MPI barrier would end the job).
 */
#ifndef GDR_SWEEP_CHAN_H
#define GDR_SWEEP_CHAN_H

#include <signal.h>
#include <stddef.h>

#define GDR_CHAN_NAME_MAX 64

struct gdr_chan;

/* Where rank 0 listens and what this rank tells it. */
struct gdr_chan_cfg {
	unsigned int rank, m;
	const char *host; /* rank 0's address (ranks other than 0) */
	unsigned int port;
	double timeout; /* joining: how long rank 0 waits for every rank, and they for it */
	volatile sig_atomic_t *stop;
};

/*
 * Join: rank 0 listens and waits up to cfg->timeout for the other m - 1
 * ranks; they connect (retrying while rank 0 is not listening yet). Every
 * rank then has every node's name and address in names[m], addrs[m], and
 * alive[m] (0: the rank never came; its name is "rank K" and its address
 * "!" and why). 0, or -errno with why.
 */
int gdr_chan_join(struct gdr_chan **c, const struct gdr_chan_cfg *cfg, const char *name,
		  const char *addr, char (*names)[GDR_CHAN_NAME_MAX],
		  char (*addrs)[GDR_CHAN_NAME_MAX], unsigned char *alive, char *why, size_t wlen);

/*
 * Start of round `round`: every live rank tells rank 0 it has arrived, and
 * rank 0 answers with which ranks are still alive (alive[m]) once all have,
 * or once `bound` seconds have passed: a rank whose socket closed (its
 * process died) or that did not arrive in time is dropped for the rest of
 * the sweep, and rank 0 names it on stderr. 0, or -errno with why (a rank
 * other than 0 that lost rank 0: the sweep cannot go on).
 */
int gdr_chan_round(struct gdr_chan *c, unsigned int round, double bound, unsigned char *alive,
		   char *why, size_t wlen);

/*
 * Every live rank's bytes to rank 0, waited for up to `bound` seconds. On
 * rank 0, bufs[m] (free each, and the array) and lens[m]; a rank that is
 * gone has NULL and 0 and alive[k] = 0. Elsewhere *bufs is NULL. From here
 * on the stop flag is no longer looked at: the rows so far must arrive.
 */
int gdr_chan_gather(struct gdr_chan *c, const void *mine, size_t len, char ***bufs, size_t *lens,
		    unsigned char *alive, double bound, char *why, size_t wlen);

/* Rank 0's *v to every live rank, each waiting up to `bound` seconds. */
int gdr_chan_verdict(struct gdr_chan *c, int *v, double bound, char *why, size_t wlen);

/* Idempotent; *c becomes NULL. */
void gdr_chan_close(struct gdr_chan **c);

#endif
