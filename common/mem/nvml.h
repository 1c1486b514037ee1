/*
 * NVML (libnvidia-ml.so.1), loaded at run time like the CUDA driver, for
 * what sysfs does not say: a GPU's BAR1 size where the PCI resource file is
 * missing (a VM or container that passes the GPU without its sysfs
 * resources). GDRPERF_LIBNVML names the library to load (a test hook: the
 * fake in tests/fake_nvml).
 */
#ifndef GDR_NVML_H
#define GDR_NVML_H

#include <stddef.h>

struct gdr_nvml;

/* Load and initialise NVML. 0, or -errno with the cause in why ("no NVML (...)"). */
int gdr_nvml_open(struct gdr_nvml **out, char *why, size_t wlen);
void gdr_nvml_close(struct gdr_nvml *n);
/* BAR1 size in bytes of the GPU at bus id bdf ("0000:00:06.0"). 0 or -errno, why says why. */
int gdr_nvml_bar1(struct gdr_nvml *n, const char *bdf, unsigned long long *bytes, char *why,
		  size_t wlen);

#endif
