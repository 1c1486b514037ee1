/*
 * MPI rendezvous for launched pairs: publish each server's address, and a
 * barrier before each measurement. MPI carries no data here; it only gets the
 * address across and starts the pairs together.
 */
#include "config.h"

#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

#ifdef HAVE_MPI
#include <mpi.h>

struct gdr_mpi {
	int rank, size;
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
	*out = m;
	return 0;
}

int gdr_mpi_rank(const struct gdr_mpi *m, int *rank, int *size)
{
	*rank = m->rank;
	*size = m->size;
	return 0;
}

int gdr_mpi_allgather_addr(struct gdr_mpi *m, const char *mine, char (*all)[GDR_LAUNCH_ADDR_MAX],
			   char *why, size_t wlen)
{
	char buf[GDR_LAUNCH_ADDR_MAX] = "";
	int r;

	(void)m;
	gdr_strlcpy(buf, mine, sizeof(buf));
	r = MPI_Allgather(buf, GDR_LAUNCH_ADDR_MAX, MPI_CHAR, all, GDR_LAUNCH_ADDR_MAX, MPI_CHAR,
			  MPI_COMM_WORLD);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Allgather", why, wlen);
		return -EIO;
	}
	for (int i = 0; i < m->size; i++)
		all[i][GDR_LAUNCH_ADDR_MAX - 1] = '\0';
	return 0;
}

int gdr_mpi_barrier(struct gdr_mpi *m, double timeout, volatile sig_atomic_t *stop, char *why,
		    size_t wlen)
{
	/* Non-blocking, polled: a pair that died must not hang the others forever. */
	struct timespec nap = { .tv_nsec = 500 * 1000 };
	MPI_Request req;
	double deadline = gdr_now_s() + timeout;
	int done = 0, r;

	(void)m;
	r = MPI_Ibarrier(MPI_COMM_WORLD, &req);
	if (r != MPI_SUCCESS) {
		mpi_why(r, "MPI_Ibarrier", why, wlen);
		return -EIO;
	}
	for (;;) {
		r = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (r != MPI_SUCCESS) {
			mpi_why(r, "MPI_Test(barrier)", why, wlen);
			return -EIO;
		}
		if (done)
			return 0;
		if (stop && *stop) {
			snprintf(why, wlen, "interrupted while waiting for the other pairs");
			return -EINTR;
		}
		if (gdr_now_s() > deadline) {
			snprintf(why, wlen,
				 "the other pairs did not reach the next measurement within %.0f s "
				 "(one of them failed or is stuck: see its rank's messages)",
				 timeout);
			return -ETIMEDOUT;
		}
		nanosleep(&nap, NULL);
	}
}

void gdr_mpi_finalize(struct gdr_mpi *m)
{
	if (!m)
		return;
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
			   char *why, size_t wlen)
{
	(void)m;
	(void)mine;
	(void)all;
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
