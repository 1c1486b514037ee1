/*
 * Peer memory in use: MLNX_OFED's peer-memory core (drivers/infiniband/core/
 * peer_mem.c there) keeps one directory per registered client under
 * /sys/kernel/mm/memory_peers, each with version and seven counters
 * ("%llu\n"; num_free_callbacks "%lu\n"), all monotonic: an MR counts in
 * num_alloc_mrs and num_reg_bytes when its pages are mapped and in
 * num_dealloc_mrs and num_dereg_bytes when they are unmapped, so live = the
 * difference. nvidia-peermem registers nv_mem and nv_mem_nc (its
 * persistent-pages client); other clients (nvidia-fs) share the directory.
 * Where the core has no sysfs, nvidia-peermem's module reference count
 * (__module_get per acquired MR, module_put at release) counts live MRs.
 */
#include "config.h"

#include "live.h"
#include "mem.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t gdr_live_peer_mrs(const struct gdr_live_peer *c)
{
	return c->alloc_mrs > c->dealloc_mrs ? c->alloc_mrs - c->dealloc_mrs : 0;
}

uint64_t gdr_live_peer_bytes(const struct gdr_live_peer *c)
{
	return c->reg_bytes > c->dereg_bytes ? c->reg_bytes - c->dereg_bytes : 0;
}

static int read_u64(const char *root, const char *dir, const char *file, uint64_t *v)
{
	char path[512], buf[64], *end;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (gdr_read_rooted(root, path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return errno || end == buf || *end ? -EINVAL : 0;
}

static int is_nvidia_client(const char *name)
{
	for (int i = 0; gdr_peermem_clients[i]; i++)
		if (!strcmp(name, gdr_peermem_clients[i]))
			return 1;
	return 0;
}

static void read_client(const char *root, const char *name, struct gdr_live_peer *c)
{
	static const struct {
		const char *file;
		size_t off;
	} counters[] = {
		{ "num_alloc_mrs", offsetof(struct gdr_live_peer, alloc_mrs) },
		{ "num_dealloc_mrs", offsetof(struct gdr_live_peer, dealloc_mrs) },
		{ "num_reg_pages", offsetof(struct gdr_live_peer, reg_pages) },
		{ "num_dereg_pages", offsetof(struct gdr_live_peer, dereg_pages) },
		{ "num_reg_bytes", offsetof(struct gdr_live_peer, reg_bytes) },
		{ "num_dereg_bytes", offsetof(struct gdr_live_peer, dereg_bytes) },
		{ "num_free_callbacks", offsetof(struct gdr_live_peer, free_callbacks) },
	};
	char dir[256], path[320];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->nvidia = is_nvidia_client(name);
	snprintf(dir, sizeof(dir), "/sys/kernel/mm/memory_peers/%s", name);
	snprintf(path, sizeof(path), "%s/version", dir);
	if (gdr_read_rooted(root, path, c->version, sizeof(c->version)) < 0)
		c->version[0] = '\0';
	c->complete = 1;
	for (size_t i = 0; i < GDR_ARRAY_SIZE(counters); i++)
		if (read_u64(root, dir, counters[i].file,
			     (uint64_t *)((char *)c + counters[i].off)))
			c->complete = 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void gdr_live_peers_read(const char *root, struct gdr_live_peers *p)
{
	char path[4096], buf[32], *names[GDR_LIVE_PEERS_MAX];
	struct dirent *de;
	int nnames = 0;
	ssize_t n;
	DIR *d;

	memset(p, 0, sizeof(*p));
	p->refcnt = -1;
	for (int i = 0; gdr_peermem_modules[i]; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "/sys/module/%s", gdr_peermem_modules[i]);
		if (!gdr_exists_rooted(root, rel))
			continue;
		p->module = 1;
		snprintf(rel, sizeof(rel), "/sys/module/%s/refcnt", gdr_peermem_modules[i]);
		n = gdr_read_rooted(root, rel, buf, sizeof(buf));
		if (n > 0) {
			char *end;

			p->refcnt = strtol(buf, &end, 10);
			if (*end || p->refcnt < 0) {
				p->refcnt = -1;
				p->refcnt_err = -EINVAL;
			}
		} else {
			p->refcnt_err = n < 0 ? (int)n : -EINVAL;
		}
		break;
	}
	if (!p->module)
		p->refcnt_err = -ENOENT;
	d = opendir(gdr_rooted_path(root, "/sys/kernel/mm/memory_peers", path, sizeof(path)));
	if (!d) {
		p->dir_err = -errno;
		return;
	}
	p->dir = 1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (nnames == GDR_LIVE_PEERS_MAX) {
			p->dropped++;
			continue;
		}
		names[nnames] = strdup(de->d_name);
		if (names[nnames])
			nnames++;
	}
	closedir(d);
	/* readdir order is the file system's: sorted, reports are stable. */
	qsort(names, (size_t)nnames, sizeof(names[0]), cmp_names);
	for (int i = 0; i < nnames; i++) {
		read_client(root, names[i], &p->v[p->n++]);
		free(names[i]);
	}
}
