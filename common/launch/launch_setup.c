/*
 * What a launched rank does before its session: which pair and role it has,
 * which port, GPU and device it uses, where its server is, and the barrier
 * that starts every pair's measurements together.
 */
#include "config.h"

#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "endpoint.h"
#include "placement.h"
#include "sweep.h"
#include "sweep_chan.h"
#include "util.h"

static int sync_point(void *ctx, char *why, size_t wlen)
{
	struct gdr_launched *x = ctx;

	return gdr_mpi_barrier(x->mpi, x->timeout, x->stop, why, wlen);
}

/* This rank's item of a per-rank list option (indexed by local rank). */
static int pick_local(const struct gdr_launched *x, const char *opt, const char *list, char *out,
		      size_t len)
{
	int r;

	if (gdr_list_count(list) > 1 && x->l.local_rank < 0) {
		gdr_err("%s %s: a list needs the local rank, which %s does not give", opt, list,
			gdr_launcher_name(x->l.kind));
		return -EINVAL;
	}
	r = gdr_list_item(list, x->l.local_rank < 0 ? 0 : (unsigned int)x->l.local_rank, out, len);
	if (r == -ERANGE)
		gdr_err("%s %s: no item for local rank %d", opt, list, x->l.local_rank);
	else if (r)
		gdr_err("%s %s: %s", opt, list, r == -EINVAL ? "empty item" : "item too long");
	return r;
}

/* A path of either side needs a GPU: a server rank takes --mem-remote's side (issue 48). */
static int wants_gpu(const struct gdr_opts *o)
{
	for (unsigned int i = 0; i < o->nmem; i++)
		if (o->mem[i] != GDR_MEM_HOST)
			return 1;
	for (unsigned int i = 0; i < o->nmem_remote; i++)
		if (o->mem_remote[i] != GDR_MEM_HOST)
			return 1;
	for (unsigned int i = 0; i < o->npairs; i++)
		if (o->mem_pairs[i].server != GDR_MEM_HOST)
			return 1;
	return 0;
}

/*
 * This rank's --gpu and -d: its item of a list, else (one GPU per rank on a
 * node) the local rank's GPU when a path needs one; -d auto then picks that
 * GPU's nearest NIC.
 */
static int pick_gpu_dev(struct gdr_launched *x, const struct gdr_opts *o)
{
	int r;

	if (o->gpu) {
		r = pick_local(x, "--gpu", o->gpu, x->gpu, sizeof(x->gpu));
		if (r)
			return r;
		x->run.gpu = x->gpu;
	} else if (x->l.local_rank >= 0 && wants_gpu(o)) {
		snprintf(x->gpu, sizeof(x->gpu), "%d", x->l.local_rank);
		x->run.gpu = x->gpu;
	}
	if (o->dev) {
		r = pick_local(x, "-d", o->dev, x->dev, sizeof(x->dev));
		if (r)
			return r;
		x->run.dev = x->dev;
	}
	return 0;
}

/* Lists only make sense with a launcher. */
static int check_unlaunched(const struct gdr_opts *o)
{
	if (o->gpu && strchr(o->gpu, ',')) {
		gdr_err("--gpu %s: a list is indexed by local rank and needs a launcher (mpirun, "
			"mpiexec, srun)",
			o->gpu);
		return -EINVAL;
	}
	if (o->dev && strchr(o->dev, ',')) {
		gdr_err("-d %s: a list is indexed by local rank and needs a launcher (mpirun, "
			"mpiexec, srun)",
			o->dev);
		return -EINVAL;
	}
	if (o->peer && !o->server) {
		gdr_err(
		    "--peer %s: only for ranks started by mpirun, mpiexec or srun; run by hand, "
		    "give the server as the SERVER argument",
		    o->peer);
		return -EINVAL;
	}
	if ((o->set & GDR_SET_MEM_REMOTE) && !o->server) {
		gdr_err("%s: the client's option (it names the server's side); a server started "
			"by hand chooses its own side with --mem",
			o->npairs ? "--mem LOCAL:REMOTE" : "--mem-remote");
		return -EINVAL;
	}
	return 0;
}

/* The first RDMA device with an IPv4 address on its interface (-d not given). */
static int first_dev_ipv4(int port, char *out, size_t len, char *why, size_t wlen)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	char w[256];
	int r = -ENODEV;

	snprintf(why, wlen, "no RDMA device has an IPv4 address on its network interface");
	for (int i = 0; list && list[i] && r; i++)
		r = gdr_nic_ipv4(ibv_get_device_name(list[i]), port, out, len, w, sizeof(w));
	if (list)
		ibv_free_device_list(list);
	else
		snprintf(why, wlen, "no RDMA device (ibv_get_device_list: %s)", strerror(errno));
	return r;
}

/*
 * The address this server publishes: the one it listens on (--bind, or -d's
 * address after placement), else the first RDMA device's.
 */
static int server_addr(const struct gdr_endpoint *ep, char *out, size_t len)
{
	char why[256];
	int r;

	if (ep->bind_addr) {
		gdr_strlcpy(out, ep->bind_addr, len);
		return 0;
	}
	if (ep->dev && strcmp(ep->dev, "auto"))
		r = gdr_nic_ipv4(ep->dev, ep->ib_port, out, len, why, sizeof(why));
	else
		r = first_dev_ipv4(ep->ib_port, out, len, why, sizeof(why));
	if (r) {
		/* The client sees why instead of an address and says so. */
		out[0] = '!';
		gdr_strlcpy(out + 1, why, len - 1);
	}
	return r;
}

static void print_role(const struct gdr_launched *x)
{
	char local[16] = "?", where[GDR_LAUNCH_ADDR_MAX + 16] = "";

	if (x->l.local_rank >= 0)
		snprintf(local, sizeof(local), "%d", x->l.local_rank);
	if (!x->role.server)
		snprintf(where, sizeof(where), "server %s, ", x->server);
	printf("launch: %s rank %d of %d (local %s): %s rank %d (pair %u of %u, %sport %u%s)\n",
	       gdr_launcher_name(x->l.kind), x->l.rank, x->l.size, local,
	       x->role.server ? "server for" : "client of", x->role.peer_rank, x->role.pair,
	       x->role.npairs, where, x->run.port,
	       x->mpi ? ", MPI barrier before each measurement" : "");
	fflush(stdout);
}

static int find_server(struct gdr_launched *x, const struct gdr_opts *o)
{
	const char *list = o->peer;
	const char *from = "--peer";
	int r;

	if (!list && !x->mpi) {
		list = getenv("GDRPERF_SERVER");
		from = "GDRPERF_SERVER";
		if (list && !*list)
			list = NULL;
	}
	if (list) {
		r = gdr_list_item(list, x->role.pair, x->server, sizeof(x->server));
		if (r == -EINVAL) {
			gdr_err("%s %s: an empty item (every item names a host)", from, list);
			return -EINVAL;
		}
		if (r) {
			gdr_err("%s %s: %s for pair %u of %u", from, list,
				r == -ERANGE ? "no item" : "item too long", x->role.pair,
				x->role.npairs);
			return -EINVAL;
		}
		return 0;
	}
	if (!x->mpi) {
		gdr_err(
		    "launch: rank %d is the client of rank %d but does not know its address: give "
		    "--peer HOST (or GDRPERF_SERVER=HOST; a comma-separated list with one host "
		    "per pair), or %s to pass it through MPI",
		    x->l.rank, x->role.peer_rank,
		    gdr_mpi_available() ? "drop --launch=no-mpi"
					: "build with ./configure --with-mpi");
		return -EINVAL;
	}
	return 0;
}

/*
 * After placement (session.c): every server's address to its client, through
 * MPI. A rank whose placement failed (failed: why) still takes part and
 * publishes "!why" instead, and so does a server without an address: its peer
 * learns it now and fails at once, naming the cause, instead of waiting out
 * --timeout for a connection that cannot come.
 */
static int rendezvous(void *ctx, const struct gdr_opts *o, const struct gdr_endpoint *ep,
		      const char *failed, char *why, size_t wlen)
{
	struct gdr_launched *x = ctx;
	char(*all)[GDR_LAUNCH_ADDR_MAX];
	char mine[GDR_LAUNCH_ADDR_MAX] = "";
	const char *peer;
	int r, bad = 0;

	if (failed) {
		mine[0] = '!';
		gdr_strlcpy(mine + 1, failed, sizeof(mine) - 1);
	} else if (x->role.server) {
		bad = server_addr(ep, mine, sizeof(mine));
	}
	all = calloc((size_t)x->l.size, sizeof(*all));
	if (!all) {
		snprintf(why, wlen, "launch: out of memory for %d addresses", x->l.size);
		return -ENOMEM;
	}
	r = gdr_mpi_allgather_addr(x->mpi, mine, all, x->timeout, x->stop, why, wlen);
	if (r || failed)
		goto out;
	peer = all[x->role.peer_rank];
	if (bad) {
		snprintf(why, wlen,
			 "launch: this server has no address to give rank %d: %.200s (give --bind "
			 "ADDR)",
			 x->role.peer_rank, mine + 1);
		r = -EADDRNOTAVAIL;
	} else if (peer[0] == '!') {
		snprintf(why, wlen, "launch: %s rank %d failed before the run: %.300s",
			 x->role.server ? "client" : "server", x->role.peer_rank, peer + 1);
		r = -ECONNABORTED;
	} else if (!x->role.server && !o->peer) {
		if (!peer[0]) {
			snprintf(why, wlen, "launch: server rank %d published no address",
				 x->role.peer_rank);
			r = -EADDRNOTAVAIL;
		} else {
			gdr_strlcpy(x->server, peer, sizeof(x->server));
		}
	}
out:
	free(all);
	if (!r && !failed)
		print_role(x);
	return r;
}

static void keep_row(void *ctx, const struct gdr_result *r)
{
	struct gdr_launched *x = ctx;

	/* A row that does not fit is counted, and rank 0 fails the job for it. */
	(void)gdr_rows_add(&x->mine, r);
}

/*
 * With MPI, rank 0 alone writes --csv and --json, at the end, with every
 * rank's rows; it opens them now so that a bad path fails before the run. The
 * other ranks keep their rows for the gather and write no file.
 */
static int gather_setup(struct gdr_launched *x, const struct gdr_opts *o)
{
	char why[512];

	x->csv_path = o->csv;
	x->json_path = o->json;
	x->gbits = o->gbits;
	x->run.csv = NULL;
	x->run.json = NULL;
	x->prom_path = o->prom;
	x->run.prom = NULL;
	x->sync.row = keep_row;
	if (x->l.rank != 0)
		return 0;
	if (x->csv_path && gdr_csv_open(&x->csv, x->csv_path, why, sizeof(why))) {
		gdr_err("--csv %s: %s", x->csv_path, why);
		return -EIO;
	}
	if (x->json_path && gdr_json_open(&x->json, x->json_path, why, sizeof(why))) {
		gdr_err("--json %s: %s", x->json_path, why);
		return -EIO;
	}
	if (x->prom_path && gdr_prom_rows_open(&x->prom, x->prom_path, why, sizeof(why))) {
		gdr_err("--prom %s: %s", x->prom_path, why);
		return -EIO;
	}
	return 0;
}

static int mpi_start(struct gdr_launched *x, int *argc, char ***argv)
{
	char why[512];
	int rank, size, r;

	r = gdr_mpi_init(&x->mpi, argc, argv, why, sizeof(why));
	if (r) {
		gdr_err("launch: %s", why);
		return r;
	}
	gdr_mpi_rank(x->mpi, &rank, &size);
	if (rank != x->l.rank || size != x->l.size) {
		gdr_err("launch: MPI says rank %d of %d, %s said %d of %d (not started by this "
			"launcher? --launch=none ignores its variables)",
			rank, size, x->l.rank_var, x->l.rank, x->l.size);
		return -EINVAL;
	}
	x->sync.rendezvous = rendezvous;
	x->sync.point = sync_point;
	x->sync.ctx = x;
	x->sync.pairs = (unsigned int)size / 2;
	x->run.sync = &x->sync;
	return 0;
}

/* This node's name in a sweep: GDRPERF_NODE, else the host name. */
static void node_name(char *out, size_t len)
{
	const char *env = getenv("GDRPERF_NODE");

	if (env && *env)
		gdr_strlcpy(out, env, len);
	else if (gethostname(out, len))
		gdr_strlcpy(out, "?", len);
	out[len - 1] = '\0';
}

/*
 * Where rank 0 runs the sweep's channel: --peer (or GDRPERF_SERVER), else,
 * with MPI, the address rank 0 serves on. NULL when unknown.
 */
static const char *coordinator(const struct gdr_launched *x, const struct gdr_opts *o)
{
	const char *env = getenv("GDRPERF_SERVER");

	if (o->peer)
		return o->peer;
	if (env && *env)
		return env;
	if (x->mpi && x->addrs[0][0] && x->addrs[0][0] != '!')
		return x->addrs[0];
	return NULL;
}

/* Every name shared by two ranks gets its rank, the first one too. */
static int unique_names(struct gdr_launched *x)
{
	unsigned int m = x->nodes;
	unsigned char *dup = calloc(m, 1);

	if (!dup) {
		gdr_err("--sweep: out of memory for %u nodes", m);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < m; i++)
		for (unsigned int j = i + 1; j < m; j++)
			if (!strcmp(x->names[i], x->names[j]))
				dup[i] = dup[j] = 1;
	for (unsigned int i = 0; i < m; i++) {
		char tag[16];
		size_t n = strlen(x->names[i]);

		if (!dup[i])
			continue;
		snprintf(tag, sizeof(tag), ":%u", i);
		if (n + strlen(tag) >= sizeof(x->names[i]))
			n = sizeof(x->names[i]) - strlen(tag) - 1;
		gdr_strlcpy(x->names[i] + n, tag, sizeof(x->names[i]) - n);
	}
	free(dup);
	return 0;
}

/* --time-budget: the -D that fits every round of this sweep in it, said once. */
static int apply_budget(struct gdr_launched *x, const struct gdr_opts *o)
{
	unsigned int m = (unsigned int)x->l.size;
	unsigned int rounds = gdr_sweep_rounds(o->sweep, m, o->sweep_both);
	char why[512];
	double d;
	int r;

	r = gdr_sweep_budget(o->time_budget, rounds, o->nmem, o->nsizes, o->repeat, &d, why,
			     sizeof(why));
	if (r) {
		gdr_err("--time-budget %g: %s: give more time, fewer paths (--mem), sizes or "
			"--repeat",
			o->time_budget, why);
		return r;
	}
	x->run.duration = d;
	if (x->l.rank == 0) {
		printf("sweep: --time-budget %g s: %u round(s) x %u path(s) x %u size(s) x %u "
		       "repeat(s): -D %.2f s each (%.0f s a path and round to connect; about %.0f "
		       "s in all)\n",
		       o->time_budget, rounds, o->nmem, o->nsizes, o->repeat, d, GDR_SWEEP_SETUP_S,
		       gdr_sweep_time(rounds, o->nmem, o->nsizes, o->repeat, d));
		fflush(stdout);
	}
	return 0;
}

/*
 * --sweep: M ranks are M nodes. Every rank joins rank 0's channel on TCP
 * port -p + 2M (sweep_chan.h), which tells each the name (made unique with
 * ":RANK" when two ranks share one, e.g. several GPUs of a node) and the
 * address of every node, and later runs the rounds. With MPI, rank 0's
 * address comes through MPI; under srun (no MPI in the ranks) or
 * --launch=no-mpi, from --peer.
 */
static int sweep_setup(struct gdr_launched *x, const struct gdr_opts *o, int *argc, char ***argv)
{
	char name[GDR_LAUNCH_ADDR_MAX], addr[GDR_LAUNCH_ADDR_MAX], why[512];
	unsigned int m = (unsigned int)x->l.size;
	/* srun starts the ranks itself: Open MPI's MPI_Init there would make singletons. */
	int use_mpi = gdr_mpi_available() && !o->no_mpi && x->l.kind != GDR_LAUNCHER_SLURM;
	struct gdr_chan_cfg cfg = { .rank = (unsigned int)x->l.rank,
				    .m = m,
				    .port = o->port + 2 * m,
				    .timeout = x->timeout,
				    .stop = x->stop };
	int r;

	if (m > GDR_SWEEP_MAX_NODES || o->port + 2 * m > 65535) {
		gdr_err("--sweep: %u ranks (at most %d, and -p %u + 2 x ranks must stay a port)", m,
			GDR_SWEEP_MAX_NODES, o->port);
		return -EINVAL;
	}
	if (o->peer && strchr(o->peer, ',')) {
		gdr_err("--peer %s: in a sweep, one host: rank 0's, which runs the rounds",
			o->peer);
		return -EINVAL;
	}
	r = pick_gpu_dev(x, o);
	if (r)
		return r;
	if (o->time_budget > 0 && (r = apply_budget(x, o)))
		return r;
	x->names = calloc(m, sizeof(*x->names));
	x->addrs = calloc(m, sizeof(*x->addrs));
	x->alive = calloc(m, 1);
	if (!x->names || !x->addrs || !x->alive) {
		gdr_err("--sweep: out of memory for %u nodes", m);
		return -ENOMEM;
	}
	if (use_mpi && (r = mpi_start(x, argc, argv)))
		return r;
	r = gather_setup(x, o);
	if (r)
		return r;
	/* No rendezvous per session: the addresses are known before the first round. */
	x->sync.rendezvous = NULL;
	x->run.sync = NULL;
	x->sweep = 1;
	x->nodes = m;
	x->outlier = o->outlier;
	node_name(name, sizeof(name));
	{
		struct gdr_endpoint ep;

		/* Before any placement: the address as the run gives it. */
		gdr_endpoint_init(&ep, o, &x->run);
		(void)server_addr(&ep, addr, sizeof(addr));
	}
	if (x->mpi) {
		r = gdr_mpi_allgather_addr(x->mpi, addr, x->addrs, x->timeout, x->stop, why,
					   sizeof(why));
		if (r) {
			gdr_err("launch: %s", why);
			return r;
		}
	}
	cfg.host = coordinator(x, o);
	if (!cfg.host && x->l.rank != 0) {
		gdr_err("--sweep under %s without MPI: give --peer HOST (or GDRPERF_SERVER), rank "
			"0's address: it runs the rounds on TCP port %u (-p + 2 x %u ranks)",
			gdr_launcher_name(x->l.kind), cfg.port, m);
		return -EINVAL;
	}
	r = gdr_chan_join(&x->chan, &cfg, name, addr, x->names, x->addrs, x->alive, why,
			  sizeof(why));
	if (r) {
		gdr_err("sweep: %s", why);
		return r;
	}
	return unique_names(x);
}

int gdr_launch_setup(struct gdr_launched *x, const struct gdr_opts *o, int *argc, char ***argv,
		     volatile sig_atomic_t *stop, int *usage)
{
	char why[512];
	int r;

	memset(x, 0, sizeof(*x));
	x->l.local_rank = -1;
	x->stop = stop;
	x->timeout = o->timeout;
	gdr_run_from_opts(&x->run, o);
	*usage = 1;
	if (o->no_launch || o->server)
		return check_unlaunched(o);
	r = gdr_launch_detect(&x->l, NULL, NULL, why, sizeof(why));
	if (r) {
		gdr_err("%s (or run with --launch=none)", why);
		return r;
	}
	if (x->l.kind == GDR_LAUNCHER_NONE || x->l.size < 2) {
		if (o->sweep) {
			gdr_err("--sweep %s: needs a launcher with 2 or more ranks (mpirun -np M, "
				"one rank per node)",
				gdr_sweep_mode_name(o->sweep));
			return -EINVAL;
		}
		return check_unlaunched(o);
	}
	/*
	 * Every rank has the same command line: a server rank's --mem is its
	 * client's, not a side of its own. It adopts its client rank's plan,
	 * whose --mem-remote (or LOCAL:REMOTE) is the server ranks' side.
	 */
	x->run.server_mem = NULL;
	x->run.server_nmem = 0;
	if (o->persistent && o->sweep) {
		gdr_err("--persistent serves clients one after another: not with --sweep");
		return -EINVAL;
	}
	if (o->sweep) {
		*usage = 0;
		r = sweep_setup(x, o, argc, argv);
		if (!r)
			x->gather = 1;
		return r;
	}
	r = gdr_launch_role(&x->l, &x->role, why, sizeof(why));
	if (r) {
		gdr_err("%s", why);
		return r;
	}
	if (o->persistent) {
		gdr_err("--persistent serves clients one after another: not with a launcher, where "
			"each server has one client");
		return -EINVAL;
	}
	if (o->port + x->role.pair > 65535) {
		gdr_err("-p %u: pair %u would need port %u", o->port, x->role.pair,
			o->port + x->role.pair);
		return -EINVAL;
	}
	x->run.port = o->port + x->role.pair;
	r = pick_gpu_dev(x, o);
	if (r)
		return r;
	snprintf(x->label, sizeof(x->label), "%s%spair %u", o->label ? o->label : "",
		 o->label ? "; " : "", x->role.pair);
	x->run.label = x->label;

	*usage = 0;
	if (gdr_mpi_available() && !o->no_mpi) {
		r = mpi_start(x, argc, argv);
		if (r)
			return r;
		r = gather_setup(x, o);
		if (r)
			return r;
	}
	if (!x->role.server) {
		*usage = 1;
		r = find_server(x, o);
		if (r)
			return r;
		*usage = 0;
		/* With MPI and no --peer, the rendezvous fills it in after placement. */
		x->run.server = x->server;
	}
	if (!x->mpi)
		print_role(x);
	x->gather = x->mpi != NULL;
	return 0;
}
