/*
 * An RDMA MR registered by a second thread, as NCCL's proxy thread registers
 * its buffers, for tests/integration/t_47_live.sh: the kernel records the
 * registering thread's id as the MR's pid (rdma_restrack_set_name with
 * current), and gdr_doctor --live must attribute the MR to the process
 * through /proc/TID/status's Tgid.
 *
 *   mr_thread DEV BYTES [--timeout SEC] [--thread-exits]
 *
 * Opens the RDMA device DEV, allocates a PD, registers BYTES of page-aligned
 * host memory from a second thread (ibv_reg_mr: ib_umem_get pins the pages
 * and charges them to VmPin), prints "pid PID tid TID bytes BYTES" and waits
 * for the end of stdin (at most --timeout seconds, default 120) before it
 * deregisters and exits. The registering thread waits too, as NCCL's proxy
 * thread lives as long as its MRs; with --thread-exits it ends once it has
 * registered (the kernel then gives the MR no pid: fill_res_name_pid). Exit 0
 * done, 1 a step failed or stdin did not end in time, 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stdin_eof.h"

struct reg {
	struct ibv_pd *pd;
	void *buf;
	size_t len;
	struct ibv_mr *mr;
	pid_t tid;
	int err;
	int timeout;
	int exits; /* the thread ends once it has registered */
	int late;  /* stdin did not end in time */
};

/* Until stdin ends; 1 when the time ran out first. */
static int wait_eof(int sec)
{
	if (!gdr_wait_stdin_eof(sec))
		return 0;
	fprintf(stderr, "mr_thread: stdin still open after %d s\n", sec);
	return 1;
}

static void *reg_thread(void *arg)
{
	struct reg *r = arg;

	r->tid = (pid_t)syscall(SYS_gettid);
	r->mr = ibv_reg_mr(r->pd, r->buf, r->len, IBV_ACCESS_LOCAL_WRITE);
	r->err = r->mr ? 0 : errno;
	if (!r->mr)
		return NULL;
	printf("pid %d tid %d bytes %zu\n", (int)getpid(), (int)r->tid, r->len);
	fflush(stdout);
	if (!r->exits)
		r->late = wait_eof(r->timeout);
	return NULL;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; l && l[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	return ctx;
}

static int usage(void)
{
	fprintf(stderr, "usage: mr_thread DEV BYTES [--timeout SEC] [--thread-exits]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct reg r = { .timeout = 120 };
	struct ibv_context *ctx;
	pthread_t t;
	int rc = 0;

	if (argc < 3)
		return usage();
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			r.timeout = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--thread-exits"))
			r.exits = 1;
		else
			return usage();
	}
	r.len = strtoul(argv[2], NULL, 0);
	if (!r.len || r.timeout <= 0)
		return usage();
	ctx = open_dev(argv[1]);
	if (!ctx) {
		fprintf(stderr, "mr_thread: %s: cannot open the RDMA device\n", argv[1]);
		return 1;
	}
	r.pd = ibv_alloc_pd(ctx);
	if (!r.pd || posix_memalign(&r.buf, 4096, r.len)) {
		fprintf(stderr, "mr_thread: %s: ibv_alloc_pd or the buffer failed\n", argv[1]);
		return 1;
	}
	memset(r.buf, 0, r.len);
	if (pthread_create(&t, NULL, reg_thread, &r) || pthread_join(t, NULL)) {
		fprintf(stderr, "mr_thread: pthread_create failed\n");
		return 1;
	}
	if (!r.mr) {
		fprintf(stderr, "mr_thread: %s: ibv_reg_mr: %s\n", argv[1], strerror(r.err));
		return 1;
	}
	if (r.exits)
		r.late = wait_eof(r.timeout);
	if (ibv_dereg_mr(r.mr) || r.late)
		rc = 1;
	ibv_dealloc_pd(r.pd);
	ibv_close_device(ctx);
	free(r.buf);
	return rc;
}
