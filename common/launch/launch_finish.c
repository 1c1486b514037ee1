/*
 * What a launched rank does after its session: rank 0 gathers every rank's
 * rows (fixed pairs through MPI, a sweep through its channel), writes them
 * once to --csv/--json, prints the node-to-node table or the sweep's matrix,
 * and the job's verdict.
 */
#include "config.h"

#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"
#include "sweep_chan.h"
#include "util.h"

/* In pair order (server, then client), so that the file reads pair by pair. */
static unsigned int rank_at(const struct gdr_launched *x, unsigned int i)
{
	unsigned int npairs = (unsigned int)x->l.size / 2;

	if (x->sweep)
		return i; /* rows by node */
	return i % 2 ? npairs + i / 2 : i / 2;
}

/*
 * Rank 0: unpack every rank's rows (all == NULL: the gather failed, only its
 * own are known), write them, print them and the node-to-node table. 0 when
 * every rank ran and every row was written, else 1.
 */
static int write_rows(struct gdr_launched *x, const char *all, const int *lens)
{
	unsigned int n = (unsigned int)x->l.size, written = 0;
	struct gdr_rank_rows *ranks = calloc(n, sizeof(*ranks));
	size_t *offs = calloc(n, sizeof(*offs));
	char why[512];
	int bad = 0;

	if (!ranks || !offs) {
		gdr_err("launch: out of memory for the rows of %u ranks", n);
		free(ranks);
		free(offs);
		return 1;
	}
	for (unsigned int k = 0; all && k + 1 < n; k++)
		offs[k + 1] = offs[k] + (size_t)lens[k];
	for (unsigned int k = 0; k < n; k++) {
		if (x->sweep && x->alive && !x->alive[k]) {
			/* Its peers wrote failed rows for their pairs with it. */
			ranks[k].status = -1;
			gdr_err("sweep: node %s (rank %u) is gone: no rows of its own", x->names[k],
				k);
		} else if (!all) {
			ranks[k].status = -1;
			if (k == 0) {
				ranks[0].status = x->mine.status;
				ranks[0].lost = x->mine.lost;
				for (unsigned int i = 0; i < x->mine.nrows; i++)
					(void)gdr_rows_add(&ranks[0], &x->mine.rows[i]);
			}
		} else if (gdr_rows_unpack(all + offs[k], (size_t)lens[k], &ranks[k], why,
					   sizeof(why))) {
			gdr_err("launch: the rows of rank %u: %s", k, why);
		}
		if (ranks[k].status)
			bad = 1;
		if (ranks[k].lost) {
			gdr_err("launch: rank %u lost %d row(s) (out of memory)", k, ranks[k].lost);
			bad = 1;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct gdr_rank_rows *rr = &ranks[rank_at(x, i)];

		for (unsigned int j = 0; j < rr->nrows; j++) {
			if (x->csv && gdr_csv_append(x->csv, &rr->rows[j])) {
				gdr_err("--csv: could not append a row: %s", gdr_csv_error(x->csv));
				bad = 1;
			}
			if (x->json)
				gdr_json_add(x->json, &rr->rows[j]);
			if (x->prom && gdr_prom_rows_add(x->prom, &rr->rows[j])) {
				gdr_err("--prom: could not keep a row: out of memory");
				bad = 1;
			}
			written++;
		}
	}
	if (x->sweep)
		gdr_sweep_print(x, ranks);
	else
		gdr_rows_print(stdout, ranks, n, x->gbits);
	if (x->csv_path)
		printf("gather: %u row(s) of %u rank(s) in %s\n", written, n, x->csv_path);
	fflush(stdout);
	for (unsigned int k = 0; k < n; k++)
		gdr_rows_free(&ranks[k]);
	free(ranks);
	free(offs);
	return bad;
}

static void close_outputs(struct gdr_launched *x, int *verdict)
{
	char why[512];

	if (x->json && gdr_json_close(x->json, why, sizeof(why))) {
		gdr_err("--json %s: %s", x->json_path, why);
		*verdict = 1;
	}
	x->json = NULL;
	if (x->prom && gdr_prom_rows_close(x->prom, why, sizeof(why))) {
		gdr_err("--prom %s: %s", x->prom_path, why);
		*verdict = 1;
	}
	x->prom = NULL;
	if (x->csv)
		gdr_csv_close(x->csv);
	x->csv = NULL;
}

/*
 * Every rank's rows to rank 0, which writes them; 0 when the whole job ran
 * well (MPI_Finalize is safe), else the status to abort with. A rank arrives
 * here at most one measurement (-D), one barrier (--timeout) and one wait on
 * its peer (--timeout) after the first one: that bounds the gather.
 * The same bound holds for the verdict: the gather completes at a rank
 * other than 0 as soon as its rows are sent (MPI may buffer them), so a
 * rank that failed early waits for the verdict while rank 0 may still be in
 * its last barrier; --timeout more gives rank 0 the time to write the files.
 */
static int gather_rows(struct gdr_launched *x, int status)
{
	double wait = 2 * x->timeout + (x->run.duration > 0 ? x->run.duration : 0);
	double deadline = gdr_now_s() + wait + x->timeout, left;
	char why[512], *all = NULL;
	void *mine = NULL;
	size_t len = 0;
	int *lens, r, verdict;

	x->mine.status = status ? 1 : 0;
	r = gdr_rows_pack(&x->mine, &mine, &len);
	if (r) {
		/* Nothing sent reads as "sent nothing usable" at rank 0. */
		gdr_err("launch: cannot pack this rank's %u rows: %s", x->mine.nrows, strerror(-r));
		len = 0;
	}
	lens = calloc((size_t)x->l.size, sizeof(*lens));
	if (!lens) {
		gdr_err("launch: out of memory for %d row counts", x->l.size);
		free(mine);
		return 1;
	}
	r = gdr_mpi_gather(x->mpi, mine, (int)len, &all, lens, wait, why, sizeof(why));
	free(mine);
	if (r)
		gdr_err("launch: %s", why);
	if (x->l.rank != 0) {
		free(lens);
		if (r)
			return 1;
		verdict = status;
	} else {
		if (r)
			gdr_err("launch: rank 0 writes only its own rows");
		verdict = write_rows(x, r ? NULL : all, lens);
		close_outputs(x, &verdict);
		free(all);
		free(lens);
		/* The ranks that did not come are not waiting for a verdict. */
		if (r)
			return 1;
	}
	/* Nobody aborts before rank 0 has written: the verdict comes after the files. */
	left = deadline - gdr_now_s();
	if (gdr_mpi_bcast_int(x->mpi, &verdict, left > x->timeout ? left : x->timeout, why,
			      sizeof(why))) {
		gdr_err("launch: %s", why);
		return 1;
	}
	return verdict;
}

/*
 * A sweep's end, through its channel: every live rank's rows to rank 0, which
 * writes them and sends its verdict. Ranks that are gone are named and count
 * against the verdict; they are not waited for.
 */
static int sweep_gather(struct gdr_launched *x, int status)
{
	unsigned int m = x->nodes;
	double bound = x->bound > x->timeout ? x->bound : x->timeout;
	char why[512], **bufs = NULL, *all = NULL;
	size_t *lens = calloc(m, sizeof(*lens)), len = 0, total = 0;
	int *ilens = calloc(m, sizeof(*ilens));
	void *mine = NULL;
	int r, verdict = status ? 1 : 0;

	x->mine.status = verdict;
	if (!lens || !ilens) {
		gdr_err("sweep: out of memory for %u row counts", m);
		free(lens);
		free(ilens);
		return 1;
	}
	r = gdr_rows_pack(&x->mine, &mine, &len);
	if (r) {
		gdr_err("launch: cannot pack this rank's %u rows: %s", x->mine.nrows, strerror(-r));
		len = 0;
	}
	r = gdr_chan_gather(x->chan, mine, len, &bufs, lens, x->alive, bound, why, sizeof(why));
	free(mine);
	if (r)
		gdr_err("sweep: %s", why);
	if (x->l.rank == 0) {
		for (unsigned int k = 0; bufs && k < m; k++)
			total += lens[k];
		all = bufs ? malloc(total ? total : 1) : NULL;
		total = 0;
		for (unsigned int k = 0; all && k < m; k++) {
			if (bufs[k])
				memcpy(all + total, bufs[k], lens[k]);
			ilens[k] = bufs[k] && lens[k] <= INT32_MAX ? (int)lens[k] : 0;
			total += (size_t)ilens[k];
		}
		verdict = write_rows(x, all, ilens) || verdict;
		close_outputs(x, &verdict);
		gdr_chan_verdict(x->chan, &verdict, bound, why, sizeof(why));
	} else if (!r && gdr_chan_verdict(x->chan, &verdict, bound, why, sizeof(why))) {
		gdr_err("sweep: %s", why);
		verdict = 1;
	} else if (r) {
		verdict = 1;
	}
	for (unsigned int k = 0; bufs && k < m; k++)
		free(bufs[k]);
	free(bufs);
	free(all);
	free(lens);
	free(ilens);
	return verdict;
}

int gdr_launch_finish(struct gdr_launched *x, int status)
{
	int by_chan = x->chan != NULL;

	if (x->chan) {
		status = sweep_gather(x, status);
		gdr_chan_close(&x->chan);
		/* No MPI call is pending (the rounds went through the channel). */
		x->gather = 0;
	} else if (!x->mpi) {
		gdr_rows_free(&x->mine);
		free(x->names);
		free(x->addrs);
		free(x->alive);
		x->names = x->addrs = NULL;
		x->alive = NULL;
		return status;
	}
	if (x->gather)
		status = gather_rows(x, status);
	gdr_rows_free(&x->mine);
	free(x->names);
	free(x->addrs);
	free(x->alive);
	x->names = x->addrs = NULL;
	x->alive = NULL;
	if (x->csv || x->json || x->prom)
		close_outputs(x, &status);
	if (!x->mpi)
		return status;
	/*
	 * A failed rank skipped barriers the others still wait on: MPI_Finalize
	 * could hang on them, so the job ends with MPI_Abort (not after a sweep,
	 * whose ranks all heard rank 0's verdict).
	 */
	if (status && !by_chan) {
		fflush(stdout);
		gdr_mpi_abort(x->mpi, status);
	}
	gdr_mpi_finalize(x->mpi);
	x->mpi = NULL;
	return status;
}
