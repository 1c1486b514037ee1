/* Plain host memory: the NIC's own ceiling, the baseline every GPU path is compared with. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mem.h"
#include "util.h"

struct host_priv {
	size_t map_len;
};

static int host_available(const struct gdr_mem_env *env, char *why, size_t wlen)
{
	(void)env;
	(void)why;
	(void)wlen;
	return 0;
}

/* ENOMEM/EPERM from registration is nearly always RLIMIT_MEMLOCK: say so with the numbers. */
void gdr_explain_reg_errno(int err, size_t len, char *buf, size_t blen)
{
	struct rlimit rl;
	char need[32], have[32];

	if ((err != ENOMEM && err != EPERM && err != EAGAIN) || getrlimit(RLIMIT_MEMLOCK, &rl)) {
		snprintf(buf, blen, "%s", strerror(err));
		return;
	}
	gdr_fmt_size(len, need, sizeof(need));
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(buf, blen, "%s (RLIMIT_MEMLOCK is unlimited)", strerror(err));
	else
		snprintf(
		    buf, blen,
		    "%s (RLIMIT_MEMLOCK is %s, %s needed: raise it with 'ulimit -l unlimited' or "
		    "the container's memlock limit)",
		    strerror(err), gdr_fmt_size(rl.rlim_cur, have, sizeof(have)), need);
}

int gdr_mem_relaxed_flag(void)
{
	/* An enum, not a macro: its companion IBV_ACCESS_OPTIONAL_FIRST says it is there. */
#ifdef IBV_ACCESS_OPTIONAL_FIRST
	return IBV_ACCESS_RELAXED_ORDERING;
#else
	return 0;
#endif
}

void *gdr_huge_map(size_t len, size_t *map_len, char *why, size_t wlen)
{
	size_t hl = (len + GDR_HUGE_PAGE - 1) / GDR_HUGE_PAGE * GDR_HUGE_PAGE;
	char sz[32];
	void *p;
	int e;

	p = mmap(NULL, hl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1,
		 0);
	if (p != MAP_FAILED) {
		*map_len = hl;
		return p;
	}
	e = errno;
	snprintf(why, wlen, "mmap(MAP_HUGETLB, %s): %s%s", gdr_fmt_size(hl, sz, sizeof(sz)),
		 strerror(e),
		 e == ENOMEM ? " (reserve pages: sysctl vm.nr_hugepages=N)" : "");
	return NULL;
}

static int host_reg(struct gdr_mem *m, int access, char *why, size_t wlen)
{
	char sz[32], err[256];

	m->reg_call = "ibv_reg_mr";
	m->mr = ibv_reg_mr(m->env->pd, m->host, m->len, access);
	if (!m->mr) {
		int e = errno ? errno : EINVAL;
		gdr_explain_reg_errno(e, m->len, err, sizeof(err));
		snprintf(why, wlen, "%s: ibv_reg_mr(host, %s): %s", m->env->nic ? m->env->nic : "?",
			 gdr_fmt_size(m->len, sz, sizeof(sz)), err);
		return -e;
	}
	return 0;
}

static int host_alloc_reg(struct gdr_mem *m, size_t len, int access, char *why, size_t wlen)
{
	struct host_priv *hp = calloc(1, sizeof(*hp));
	long page = sysconf(_SC_PAGESIZE);
	void *p = MAP_FAILED;
	uint64_t t0;
	char sz[32];
	int r;

	if (!hp)
		return -ENOMEM;
	m->priv = hp;
	hp->map_len = (len + page - 1) / page * page;
	if (m->env->hugepages) {
		char no[160];

		p = gdr_huge_map(len, &hp->map_len, no, sizeof(no));
		if (p) {
			snprintf(m->note, sizeof(m->note), "host buffer on 2 MiB huge pages");
		} else {
			p = MAP_FAILED;
			snprintf(m->note, sizeof(m->note), "host buffer on normal pages: %s", no);
			gdr_warn("host: buffer on normal pages (%s)", no);
		}
	}
	if (p == MAP_FAILED)
		p = mmap(NULL, hp->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0);
	if (p == MAP_FAILED) {
		int e = errno;
		snprintf(why, wlen, "host: mmap(%s): %s", gdr_fmt_size(len, sz, sizeof(sz)),
			 strerror(e));
		return -e;
	}
	m->host = p;
	m->addr = (uintptr_t)p;
	m->len = len;
	t0 = gdr_now_ns();
	r = host_reg(m, access, why, wlen);
	m->reg_us = (double)(gdr_now_ns() - t0) / 1e3;
	return r;
}

static int host_write(struct gdr_mem *m, size_t off, const void *src, size_t len)
{
	if (off > m->len || len > m->len - off)
		return -ERANGE;
	memcpy((char *)m->host + off, src, len);
	return 0;
}

static int host_read(struct gdr_mem *m, size_t off, void *dst, size_t len)
{
	if (off > m->len || len > m->len - off)
		return -ERANGE;
	memcpy(dst, (char *)m->host + off, len);
	return 0;
}

static void host_free(struct gdr_mem *m)
{
	struct host_priv *hp = m->priv;

	if (m->mr)
		ibv_dereg_mr(m->mr);
	m->mr = NULL;
	if (m->host && hp)
		munmap(m->host, hp->map_len);
	m->host = NULL;
	free(hp);
	m->priv = NULL;
}

const struct gdr_mem_ops gdr_mem_host_ops = {
	.kind = GDR_MEM_HOST,
	.available = host_available,
	.alloc_reg = host_alloc_reg,
	.reg = host_reg,
	.write = host_write,
	.read = host_read,
	.free = host_free,
};
