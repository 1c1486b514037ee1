/*
 * Data direct (GB200, Grace, ConnectX-8): the NIC reaches GPU memory through
 * its data direct function instead of the PCIe path. The two mlx5dv calls
 * are looked up at run time, as libcuda is: Debian 12's rdma-core 44 has
 * neither, and a binary built there must still use them on a newer one.
 */
#include "config.h"

#include "mem.h"
#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mlx5dv.h, rdma-core >= 53: enum mlx5dv_reg_dmabuf_access. */
#define GDR_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT (1 << 0)

typedef int (*dd_path_fn)(struct ibv_context *ctx, char *buf, size_t len);
typedef struct ibv_mr *(*dd_reg_fn)(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
				    int fd, int access, int mlx5_access);

struct dd_syms {
	dd_path_fn path;
	dd_reg_fn reg;
	char lib[256];
};

/* Resolve both calls; 0, or -EOPNOTSUPP with what is missing in why. */
static int dd_resolve(struct dd_syms *d, char *why, size_t wlen)
{
	const char *e = getenv("GDRPERF_LIBMLX5");
	void *h, *sym;

	memset(d, 0, sizeof(*d));
	gdr_strlcpy(d->lib, e && *e ? e : "libmlx5.so.1", sizeof(d->lib));
	/* libibverbs loads the provider already for an mlx5 device: this is a reference. */
	h = dlopen(d->lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, wlen, "data direct: %s: %s", d->lib, dlerror());
		return -EOPNOTSUPP;
	}
	sym = dlsym(h, "mlx5dv_get_data_direct_sysfs_path");
	memcpy(&d->path, &sym, sizeof(d->path));
	sym = dlsym(h, "mlx5dv_reg_dmabuf_mr");
	memcpy(&d->reg, &sym, sizeof(d->reg));
	/* Not dlclose'd: an MR registered through it must outlive this call. */
	if (!d->path || !d->reg) {
		snprintf(why, wlen, "data direct: %s has no %s (rdma-core >= 53 needed)", d->lib,
			 !d->reg ? "mlx5dv_reg_dmabuf_mr" : "mlx5dv_get_data_direct_sysfs_path");
		return -EOPNOTSUPP;
	}
	return 0;
}

int gdr_data_direct_check(struct ibv_context *ctx, char *why, size_t wlen)
{
	struct dd_syms d;
	char path[256];
	int ret;

	ret = dd_resolve(&d, why, wlen);
	if (ret)
		return ret;
	if (!ctx) {
		gdr_strlcpy(why, "data direct: no device to ask", wlen);
		return -EINVAL;
	}
	ret = d.path(ctx, path, sizeof(path));
	if (ret) {
		int err = ret < 0 ? -ret : ret;

		snprintf(why, wlen,
			 "%s: mlx5dv_get_data_direct_sysfs_path: %s (no data direct device)",
			 ibv_get_device_name(ctx->device), strerror(err));
		return -EOPNOTSUPP;
	}
	gdr_dbg("data direct: %s through %s", ibv_get_device_name(ctx->device), path);
	return 0;
}

struct ibv_mr *gdr_data_direct_reg(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
				   int fd, int access)
{
	struct dd_syms d;
	char why[256];

	if (dd_resolve(&d, why, sizeof(why))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return d.reg(pd, offset, len, iova, fd, access, GDR_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT);
}
