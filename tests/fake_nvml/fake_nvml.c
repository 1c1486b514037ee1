/*
 * A test-only libnvidia-ml.so.1: the entry points gdr_doctor uses, answering
 * from the environment.
 *   GDRPERF_FAKE_NVML_BAR1   "BUSID=MIB,..." BAR1 totals in MiB, as nvidia-smi -q
 *                            prints them ("0000:00:06.0=262144"); a bus id not
 *                            listed is NVML_ERROR_NOT_FOUND
 *   GDRPERF_FAKE_NVML_INIT   an NVML return code for nvmlInit_v2 (default 0)
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXPORT __attribute__((visibility("default")))

struct fake_bar1 {
	unsigned long long total, free, used;
};

EXPORT int nvmlInit_v2(void);
EXPORT int nvmlShutdown(void);
EXPORT const char *nvmlErrorString(int r);
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **dev);
EXPORT int nvmlDeviceGetBAR1MemoryInfo(void *dev, struct fake_bar1 *mem);

/* Handles are 1 + the entry's index in GDRPERF_FAKE_NVML_BAR1. */
static const char *entry(int i)
{
	const char *p = getenv("GDRPERF_FAKE_NVML_BAR1");

	for (; p && i > 0; i--) {
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return p && *p ? p : NULL;
}

int nvmlInit_v2(void)
{
	const char *e = getenv("GDRPERF_FAKE_NVML_INIT");

	return e ? atoi(e) : 0;
}

int nvmlShutdown(void)
{
	return 0;
}

const char *nvmlErrorString(int r)
{
	switch (r) {
	case 0:
		return "Success";
	case 2:
		return "Invalid Argument";
	case 6:
		return "Not Found";
	case 9:
		return "Driver Not Loaded";
	}
	return "Unknown Error";
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **dev)
{
	size_t n = strlen(bus_id);
	const char *e;

	for (int i = 0; (e = entry(i)); i++)
		if (!strncasecmp(e, bus_id, n) && e[n] == '=') {
			*dev = (void *)(long)(i + 1);
			return 0;
		}
	return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetBAR1MemoryInfo(void *dev, struct fake_bar1 *mem)
{
	const char *e = entry((int)(long)dev - 1);

	if (!e || !mem)
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	mem->total = strtoull(strchr(e, '=') + 1, NULL, 10) << 20;
	mem->free = mem->total;
	mem->used = 0;
	return 0;
}
