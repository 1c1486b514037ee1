/*
 * Bidirectional (-b): each direction's rate over the time both directions
 * really ran, from the two sides' time lines on one time base.
 *
 * Each side's loop keeps a short time line of its run: (time, bytes
 * completed) at up to GDR_TL_POINTS observations of its CQ. The two hosts
 * share no clock, so each side puts its time line on its own reference, an
 * instant both can name: the server the moment it posts the ACK that starts
 * the repeat, the client the midpoint between posting START and seeing that
 * ACK. The ACK is posted after START was sent and before the ACK arrived, so
 * the two references differ by at most half that round trip (unc_ns); the
 * overlap is shrunk by that much at both ends so that it lies inside both
 * runs whatever the true offset. Each direction's rate is then taken between
 * two of its own observations inside that overlap, never from time when only
 * one direction ran (the faster side finishing first left the slower one
 * alone on the link, and its whole-run average counted that time).
 */
#ifndef GDR_BIDIR_H
#define GDR_BIDIR_H

#include <stddef.h>
#include <stdint.h>

#define GDR_TL_POINTS 32u

struct gdr_timeline {
	uint32_t n;		     /* points, 0..GDR_TL_POINTS; times and bytes never decrease */
	int64_t t_ns[GDR_TL_POINTS]; /* on the side's reference (loop: CLOCK_MONOTONIC) */
	uint64_t bytes[GDR_TL_POINTS]; /* completed by then */
	uint64_t unc_ns;	       /* how far this side's reference may lie from the peer's */
};

struct gdr_bidir {
	double bps[2]; /* a's and b's bytes/s, each between two of its points in the overlap */
	int64_t lo_ns, hi_ns; /* the overlap both rates lie in, on the common reference */
};

/* Add one observation; when full, every other point is dropped (the last is always kept). */
void gdr_timeline_add(struct gdr_timeline *tl, int64_t t_ns, uint64_t bytes);
/* Move a time line onto a reference: every time minus ref_ns; unc_ns set. */
void gdr_timeline_rebase(struct gdr_timeline *tl, uint64_t ref_ns, uint64_t unc_ns);
/* 0, or -EINVAL naming the bad point in why (a time line from the peer is checked first). */
int gdr_timeline_check(const struct gdr_timeline *tl, char *why, size_t wlen);

/*
 * The two directions over their common window: 0, or -ENODATA when the runs
 * do not overlap by more than the uncertainty or a direction has fewer than
 * two observations inside the overlap (a run too short to intersect).
 */
int gdr_bidir_overlap(const struct gdr_timeline *a, const struct gdr_timeline *b,
		      struct gdr_bidir *o);

/*
 * What a -b repeat reports: rate[0] client->server, rate[1] server->client,
 * bytes/s, over their overlap; where the runs are too short to intersect,
 * each direction's own average (avg_c, avg_s) and 0 is returned; 1 when
 * intersected.
 */
int gdr_bidir_rates(const struct gdr_timeline *cli, const struct gdr_timeline *srv, double avg_c,
		    double avg_s, double rate[2]);

#endif
