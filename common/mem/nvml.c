/*
 * NVML loaded at run time: see nvml.h. The few entry points used are declared
 * here with the ABI nvml.h gives them (stable since NVML 5.319; _v2 names
 * since CUDA 5.5), so that building needs no NVML headers.
 */
#include "config.h"

#include "nvml.h"
#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;	   /* nvmlReturn_t; NVML_SUCCESS = 0 */
typedef void *nvml_device; /* nvmlDevice_t */
struct nvml_bar1 {	   /* nvmlBAR1Memory_t */
	unsigned long long total, free, used;
};

struct gdr_nvml {
	void *lib;
	char libname[256];
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*by_bus_id)(const char *bus_id, nvml_device *dev);
	nvml_ret (*bar1)(nvml_device dev, struct nvml_bar1 *mem);
	const char *(*error_string)(nvml_ret r);
};

static const char *nvml_err(const struct gdr_nvml *n, nvml_ret r, char *buf, size_t len)
{
	const char *s = n->error_string ? n->error_string(r) : NULL;

	if (s)
		snprintf(buf, len, "%s (%d)", s, r);
	else
		snprintf(buf, len, "NVML error %d", r);
	return buf;
}

int gdr_nvml_open(struct gdr_nvml **out, char *why, size_t wlen)
{
	const char *env = getenv("GDRPERF_LIBNVML");
	const char *name = env && *env ? env : "libnvidia-ml.so.1";
	struct gdr_nvml *n = calloc(1, sizeof(*n));
	char err[128];
	nvml_ret r;

	*out = NULL;
	if (!n) {
		gdr_strlcpy(why, "out of memory", wlen);
		return -ENOMEM;
	}
	gdr_strlcpy(n->libname, name, sizeof(n->libname));
	n->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(why, wlen, "no NVML (%s)", dlerror());
		free(n);
		return -ENOENT;
	}
	*(void **)&n->init = dlsym(n->lib, "nvmlInit_v2");
	*(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->by_bus_id = dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&n->bar1 = dlsym(n->lib, "nvmlDeviceGetBAR1MemoryInfo");
	*(void **)&n->error_string = dlsym(n->lib, "nvmlErrorString");
	if (!n->init || !n->shutdown || !n->by_bus_id || !n->bar1) {
		snprintf(why, wlen,
			 "no NVML (%s: no nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 "
			 "or nvmlDeviceGetBAR1MemoryInfo)",
			 name);
		goto out_close;
	}
	r = n->init();
	if (r) {
		snprintf(why, wlen, "NVML unusable (%s: nvmlInit_v2: %s)", name,
			 nvml_err(n, r, err, sizeof(err)));
		goto out_close;
	}
	*out = n;
	return 0;
out_close:
	dlclose(n->lib);
	free(n);
	return -ENOSYS;
}

void gdr_nvml_close(struct gdr_nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	/* Not dlclose'd: like libcuda, NVML may leave threads behind. */
	free(n);
}

int gdr_nvml_bar1(struct gdr_nvml *n, const char *bdf, unsigned long long *bytes, char *why,
		  size_t wlen)
{
	struct nvml_bar1 mem = { 0 };
	nvml_device dev = NULL;
	char err[128];
	nvml_ret r = n->by_bus_id(bdf, &dev);

	if (r) {
		snprintf(why, wlen, "nvmlDeviceGetHandleByPciBusId_v2(%s): %s", bdf,
			 nvml_err(n, r, err, sizeof(err)));
		return -ENODEV;
	}
	r = n->bar1(dev, &mem);
	if (r || !mem.total) {
		snprintf(why, wlen, "nvmlDeviceGetBAR1MemoryInfo(%s): %s", bdf,
			 r ? nvml_err(n, r, err, sizeof(err)) : "BAR1 total 0");
		return -EIO;
	}
	*bytes = mem.total;
	return 0;
}
