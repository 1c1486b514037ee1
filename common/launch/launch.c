#include "config.h"

#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *gdr_launcher_name(enum gdr_launcher k)
{
	switch (k) {
	case GDR_LAUNCHER_OMPI:
		return "Open MPI";
	case GDR_LAUNCHER_HYDRA:
		return "MPICH/Hydra (PMI)";
	case GDR_LAUNCHER_PMIX:
		return "PMIx";
	case GDR_LAUNCHER_SLURM:
		return "Slurm";
	default:
		return "none";
	}
}

static const char *real_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

struct env {
	gdr_getenv_fn get;
	void *ctx;
	char *why;
	size_t wlen;
};

/*
 * Variable name as a number in 0..max: 1 and the value, 0 when unset, -EINVAL
 * (why names it) for anything but plain decimal digits in range.
 */
static int env_num(struct env *e, const char *name, long max, int *out)
{
	const char *s = e->get(e->ctx, name);
	long v = 0;
	size_t n;

	*out = -1;
	if (!s)
		return 0;
	n = strlen(s);
	/* Bounded before converting: no sign, space, hex or overflow gets through. */
	if (n == 0 || n > 7 || strspn(s, "0123456789") != n)
		goto bad;
	v = strtol(s, NULL, 10);
	if (v > max)
		goto bad;
	*out = (int)v;
	return 1;
bad:
	snprintf(e->why, e->wlen, "launch: %s='%.32s%s': not a number from 0 to %ld", name, s,
		 n > 32 ? "..." : "", max);
	return -EINVAL;
}

/* The first of names that is set; -1 when none is. */
static int env_first(struct env *e, const char *const *names, long max, int *out,
		     const char **which)
{
	for (; *names; names++) {
		int r = env_num(e, *names, max, out);

		if (r) {
			if (r > 0 && which)
				*which = *names;
			return r;
		}
	}
	return 0;
}

/* A rank/size variable pair: both or neither. */
static int env_pair(struct env *e, const char *rank_var, const char *size_var, int *rank, int *size)
{
	int a = env_num(e, rank_var, GDR_LAUNCH_MAX_SIZE - 1, rank);
	int b;

	if (a < 0)
		return a;
	b = env_num(e, size_var, GDR_LAUNCH_MAX_SIZE, size);
	if (b < 0)
		return b;
	if (a != b) {
		snprintf(e->why, e->wlen, "launch: %s is set but %s is not",
			 a ? rank_var : size_var, a ? size_var : rank_var);
		return -EINVAL;
	}
	return a;
}

/* Another MPI-level launcher's variable, when set, must say the same. */
static int agree(struct env *e, const char *mine, int v, const char *other)
{
	int w, r = env_num(e, other, GDR_LAUNCH_MAX_SIZE, &w);

	if (r <= 0 || w == v)
		return r < 0 ? r : 0;
	snprintf(e->why, e->wlen,
		 "launch: %s=%d but %s=%d: two launchers disagree (a launcher started from inside "
		 "another one? unset the outer one's variables)",
		 mine, v, other, w);
	return -EINVAL;
}

static int detect_ompi(struct env *e, struct gdr_launch *l)
{
	int r = env_pair(e, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", &l->rank, &l->size);

	if (r <= 0)
		return r;
	l->kind = GDR_LAUNCHER_OMPI;
	l->rank_var = "OMPI_COMM_WORLD_RANK";
	r = env_num(e, "OMPI_COMM_WORLD_LOCAL_RANK", GDR_LAUNCH_MAX_SIZE - 1, &l->local_rank);
	if (r >= 0)
		r = agree(e, "OMPI_COMM_WORLD_RANK", l->rank, "PMIX_RANK");
	if (!r)
		r = agree(e, "OMPI_COMM_WORLD_RANK", l->rank, "PMI_RANK");
	if (!r)
		r = agree(e, "OMPI_COMM_WORLD_SIZE", l->size, "PMI_SIZE");
	return r < 0 ? r : 1;
}

static int detect_hydra(struct env *e, struct gdr_launch *l)
{
	int r = env_pair(e, "PMI_RANK", "PMI_SIZE", &l->rank, &l->size);

	if (r <= 0)
		return r;
	l->kind = GDR_LAUNCHER_HYDRA;
	l->rank_var = "PMI_RANK";
	r = env_num(e, "MPI_LOCALRANKID", GDR_LAUNCH_MAX_SIZE - 1, &l->local_rank);
	if (r >= 0)
		r = agree(e, "PMI_RANK", l->rank, "PMIX_RANK");
	return r < 0 ? r : 1;
}

static int detect_pmix(struct env *e, struct gdr_launch *l)
{
	static const char *const size_vars[] = { "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
						 NULL };
	static const char *const local_vars[] = { "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK",
						  "SLURM_LOCALID", NULL };
	int r = env_num(e, "PMIX_RANK", GDR_LAUNCH_MAX_SIZE - 1, &l->rank);

	if (r <= 0)
		return r;
	l->kind = GDR_LAUNCHER_PMIX;
	l->rank_var = "PMIX_RANK";
	r = env_first(e, size_vars, GDR_LAUNCH_MAX_SIZE, &l->size, NULL);
	if (r < 0)
		return r;
	if (r == 0) {
		snprintf(e->why, e->wlen,
			 "launch: PMIX_RANK=%d is set but no variable gives the size (PMI_SIZE, "
			 "OMPI_COMM_WORLD_SIZE or SLURM_NTASKS)",
			 l->rank);
		return -EINVAL;
	}
	r = env_first(e, local_vars, GDR_LAUNCH_MAX_SIZE - 1, &l->local_rank, NULL);
	return r < 0 ? r : 1;
}

static int detect_slurm(struct env *e, struct gdr_launch *l)
{
	int r = env_pair(e, "SLURM_PROCID", "SLURM_NTASKS", &l->rank, &l->size);

	if (r <= 0)
		return r;
	l->kind = GDR_LAUNCHER_SLURM;
	l->rank_var = "SLURM_PROCID";
	r = env_num(e, "SLURM_LOCALID", GDR_LAUNCH_MAX_SIZE - 1, &l->local_rank);
	return r < 0 ? r : 1;
}

int gdr_launch_detect(struct gdr_launch *l, gdr_getenv_fn get, void *ctx, char *why, size_t wlen)
{
	/*
	 * Most specific first. Slurm comes last and is never cross-checked:
	 * mpirun or mpiexec inside an sbatch allocation leaves the batch step's
	 * SLURM_PROCID=0 in every rank's environment.
	 */
	static int (*const detectors[])(struct env *, struct gdr_launch *) = {
		detect_ompi,
		detect_hydra,
		detect_pmix,
		detect_slurm,
	};
	struct env e = { .get = get ? get : real_getenv, .ctx = ctx, .why = why, .wlen = wlen };

	for (size_t i = 0; i < sizeof(detectors) / sizeof(detectors[0]); i++) {
		int r;

		memset(l, 0, sizeof(*l));
		l->local_rank = -1;
		r = detectors[i](&e, l);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (l->size < 1 || l->rank >= l->size) {
			snprintf(why, wlen, "launch: %s: rank %d of %d is out of range",
				 gdr_launcher_name(l->kind), l->rank, l->size);
			return -EINVAL;
		}
		if (l->local_rank >= l->size) {
			snprintf(why, wlen, "launch: %s: local rank %d of %d ranks is out of range",
				 gdr_launcher_name(l->kind), l->local_rank, l->size);
			return -EINVAL;
		}
		return 0;
	}
	memset(l, 0, sizeof(*l));
	l->local_rank = -1;
	return 0;
}

int gdr_launch_role(const struct gdr_launch *l, struct gdr_pair_role *r, char *why, size_t wlen)
{
	memset(r, 0, sizeof(*r));
	if (l->size < 2 || l->size % 2) {
		snprintf(why, wlen,
			 "launch: %s started %d rank%s: pairs need an even number (-np 2N: ranks "
			 "0..N-1 serve, rank i+N connects to rank i)",
			 gdr_launcher_name(l->kind), l->size, l->size == 1 ? "" : "s");
		return -EINVAL;
	}
	r->npairs = (unsigned int)l->size / 2;
	r->server = (unsigned int)l->rank < r->npairs;
	r->pair = (unsigned int)l->rank % r->npairs;
	r->peer_rank = r->server ? l->rank + (int)r->npairs : (int)r->pair;
	return 0;
}

unsigned int gdr_list_count(const char *list)
{
	unsigned int n = 1;

	for (; *list; list++)
		n += *list == ',';
	return n;
}

int gdr_list_item(const char *list, unsigned int index, char *out, size_t len)
{
	unsigned int n = gdr_list_count(list);
	const char *p = list, *end;
	size_t k;

	/* An empty item anywhere: every rank refuses the list, not only the one it is for. */
	if (!*list || *list == ',' || strstr(list, ",,") || list[strlen(list) - 1] == ',')
		return -EINVAL;
	if (n == 1)
		index = 0;
	else if (index >= n)
		return -ERANGE;
	for (; index; index--)
		p = strchr(p, ',') + 1;
	end = strchr(p, ',');
	k = end ? (size_t)(end - p) : strlen(p);
	if (k == 0)
		return -EINVAL;
	if (k >= len)
		return -ENAMETOOLONG;
	memcpy(out, p, k);
	out[k] = '\0';
	return 0;
}
