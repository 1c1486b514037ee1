/*
 * MPI rendezvous for launched pairs: publish each server's address, a barrier
 * before each measurement, and at the end the results to rank 0. MPI carries
 * no benchmark traffic; it gets the address across, starts the pairs together
 * and collects the rows.
 */
#include "config.h"

#include "launch.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

#ifdef HAVE_MPI
#include <mpi.h>

struct gdr_mpi {
	int rank, size;
	/*
	 * The end-of-run gather's own communicator: a rank that failed skipped
	 * barriers on MPI_COMM_WORLD, and a collective there would be matched
	 * against one of those.
	 */
	MPI_Comm results;
};

static void mpi_why(int code, const char *call, char *why, size_t wlen)
{
	char text[MPI_MAX_ERROR_STRING];
	int n = 0;

	if (MPI_Error_string(code, text, &n) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "error %d", code);
	snprintf(why, wlen, "%s: %s", call, text);
}

int gdr_mpi_available(void)
{
	return 1;
}

int gdr_mpi_init(struct gdr_mpi **out, int *argc, char ***argv, char *why, size_t wlen)
{
	struct gdr_mpi *m = calloc(1, sizeof(*m));
	int r;

	if (!m) {
		snprintf(why, wlen, "out of memory");
		return -ENOMEM;
	}
	r = MPI_Init(argc, argv);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Init", why, wlen);
		free(m);
		return -EIO;
	}
	/* Errors come back as codes, so that the message says which call and why. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &m->size);
	r = MPI_Comm_dup(MPI_COMM_WORLD, &m->results);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Comm_dup", why, wlen);
		free(m);
		return -EIO;
	}
	*out = m;
	return 0;
}

int gdr_mpi_rank(const struct gdr_mpi *m, int *rank, int *size)
{
	*rank = m->rank;
	*size = m->size;
	return 0;
}

/*
 * Wait for a non-blocking collective, polled: a rank that died or is stuck
 * must not hang the others forever. what names it in messages, late says why
 * it may not come.
 */
static int wait_req(MPI_Request *req, double timeout, volatile sig_atomic_t *stop, const char *what,
		    const char *late, char *why, size_t wlen)
{
	struct timespec nap = { .tv_nsec = 500 * 1000 };
	double deadline = gdr_now_s() + timeout;
	int done = 0, r;

	for (;;) {
		r = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (r != MPI_SUCCESS) {
			char call[64];

			snprintf(call, sizeof(call), "MPI_Test(%s)", what);
			mpi_why(r, call, why, wlen);
			return -EIO;
		}
		if (done)
			return 0;
		if (stop && *stop) {
			snprintf(why, wlen, "interrupted while waiting for the other ranks (%s)",
				 what);
			return -EINTR;
		}
		if (gdr_now_s() > deadline) {
			snprintf(why, wlen, "%s: not every rank came within %.0f s (%s)", what,
				 timeout, late);
			return -ETIMEDOUT;
		}
		nanosleep(&nap, NULL);
	}
}

int gdr_mpi_allgather_addr(struct gdr_mpi *m, const char *mine, char (*all)[GDR_LAUNCH_ADDR_MAX],
			   double timeout, volatile sig_atomic_t *stop, char *why, size_t wlen)
{
	char buf[GDR_LAUNCH_ADDR_MAX] = "";
	MPI_Request req;
	int r;

	gdr_strlcpy(buf, mine, sizeof(buf));
	r = MPI_Iallgather(buf, GDR_LAUNCH_ADDR_MAX, MPI_CHAR, all, GDR_LAUNCH_ADDR_MAX, MPI_CHAR,
			   MPI_COMM_WORLD, &req);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Iallgather", why, wlen);
		return -EIO;
	}
	r = wait_req(&req, timeout, stop, "address exchange",
		     "a rank that failed before it or is stuck: see its messages", why, wlen);
	if (r)
		return r;
	for (int i = 0; i < m->size; i++)
		all[i][GDR_LAUNCH_ADDR_MAX - 1] = '\0';
	return 0;
}

int gdr_mpi_barrier(struct gdr_mpi *m, double timeout, volatile sig_atomic_t *stop, char *why,
		    size_t wlen)
{
	MPI_Request req;
	int r;

	(void)m;
	r = MPI_Ibarrier(MPI_COMM_WORLD, &req);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Ibarrier", why, wlen);
		return -EIO;
	}
	r = wait_req(&req, timeout, stop, "barrier before the next measurement",
		     "one of the pairs failed or is stuck: see its rank's messages", why, wlen);
	if (r == -ETIMEDOUT)
		snprintf(why, wlen,
			 "the other pairs did not reach the next measurement within %.0f s "
			 "(one of them failed or is stuck: see its rank's messages)",
			 timeout);
	return r;
}

int gdr_mpi_gather(struct gdr_mpi *m, const void *mine, int len, char **all, int *lens,
		   double timeout, char *why, size_t wlen)
{
	static const char late[] = "a rank is stuck or died: see its messages";
	MPI_Request req;
	int *displs = NULL;
	char *buf = NULL;
	long total = 0;
	int r;

	*all = NULL;
	/* First each rank's length, then the bytes at the offsets those give. */
	r = MPI_Igather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, m->results, &req);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Igather", why, wlen);
		return -EIO;
	}
	r = wait_req(&req, timeout, NULL, "gather of the row counts", late, why, wlen);
	if (r)
		return r;
	if (m->rank == 0) {
		displs = calloc((size_t)m->size, sizeof(*displs));
		for (int i = 0; displs && i < m->size; i++) {
			displs[i] = (int)total;
			total += lens[i] > 0 ? lens[i] : 0;
		}
		/* Every rank is already in the second gather: failing here would leave them. */
		if (!displs || total > INT32_MAX || !(buf = malloc(total ? (size_t)total : 1))) {
			free(displs);
			free(buf);
			snprintf(why, wlen, "gather: out of memory for %ld bytes of rows", total);
			gdr_mpi_abort(m, 1);
			return -ENOMEM;
		}
	}
	r = MPI_Igatherv(mine, len, MPI_BYTE, buf, lens, displs, MPI_BYTE, 0, m->results, &req);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Igatherv", why, wlen);
		r = -EIO;
		goto out_free;
	}
	r = wait_req(&req, timeout, NULL, "gather of the rows", late, why, wlen);
out_free:
	free(displs);
	if (r)
		free(buf);
	else
		*all = buf;
	return r;
}

int gdr_mpi_bcast_int(struct gdr_mpi *m, int *v, double timeout, char *why, size_t wlen)
{
	MPI_Request req;
	int r;

	r = MPI_Ibcast(v, 1, MPI_INT, 0, m->results, &req);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Ibcast", why, wlen);
		return -EIO;
	}
	return wait_req(&req, timeout, NULL, "rank 0's verdict", "rank 0 is stuck or died", why,
			wlen);
}

void gdr_mpi_finalize(struct gdr_mpi *m)
{
	if (!m)
		return;
	MPI_Comm_free(&m->results);
	MPI_Finalize();
	free(m);
}

void gdr_mpi_abort(struct gdr_mpi *m, int code)
{
	(void)m;
	MPI_Abort(MPI_COMM_WORLD, code);
}

#else /* !HAVE_MPI */

int gdr_mpi_available(void)
{
	return 0;
}

int gdr_mpi_init(struct gdr_mpi **m, int *argc, char ***argv, char *why, size_t wlen)
{
	(void)argc;
	(void)argv;
	*m = NULL;
	snprintf(why, wlen, "built without MPI (configure --with-mpi)");
	return -ENOSYS;
}

int gdr_mpi_rank(const struct gdr_mpi *m, int *rank, int *size)
{
	(void)m;
	(void)rank;
	(void)size;
	return -ENOSYS;
}

int gdr_mpi_allgather_addr(struct gdr_mpi *m, const char *mine, char (*all)[GDR_LAUNCH_ADDR_MAX],
			   double timeout, volatile sig_atomic_t *stop, char *why, size_t wlen)
{
	(void)m;
	(void)mine;
	(void)all;
	(void)timeout;
	(void)stop;
	snprintf(why, wlen, "built without MPI");
	return -ENOSYS;
}

int gdr_mpi_barrier(struct gdr_mpi *m, double timeout, volatile sig_atomic_t *stop, char *why,
		    size_t wlen)
{
	(void)m;
	(void)timeout;
	(void)stop;
	snprintf(why, wlen, "built without MPI");
	return -ENOSYS;
}

int gdr_mpi_gather(struct gdr_mpi *m, const void *mine, int len, char **all, int *lens,
		   double timeout, char *why, size_t wlen)
{
	(void)m;
	(void)mine;
	(void)len;
	(void)lens;
	(void)timeout;
	*all = NULL;
	snprintf(why, wlen, "built without MPI");
	return -ENOSYS;
}

int gdr_mpi_bcast_int(struct gdr_mpi *m, int *v, double timeout, char *why, size_t wlen)
{
	(void)m;
	(void)v;
	(void)timeout;
	snprintf(why, wlen, "built without MPI");
	return -ENOSYS;
}

void gdr_mpi_finalize(struct gdr_mpi *m)
{
	(void)m;
}

void gdr_mpi_abort(struct gdr_mpi *m, int code)
{
	(void)m;
	exit(code);
}

#endif
