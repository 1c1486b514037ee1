/*
 * CUDA errors in words: CUresult to -errno, the driver's own name and text of
 * an error (cuGetErrorName, cuGetErrorString), and the last error a handle
 * saw, which gdr_cuda_last_error() returns.
 */
#include "config.h"

#include "cuda_int.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int gdr_cu_errno(CUresult rc)
{
	switch (rc) {
	case CUDA_SUCCESS:
		return 0;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return -ENOMEM;
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
		return -ENODEV;
	case CUDA_ERROR_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_HANDLE:
		return -EINVAL;
	case CUDA_ERROR_NOT_FOUND:
		return -ENOENT;
	case CUDA_ERROR_NOT_PERMITTED:
		return -EPERM;
	case CUDA_ERROR_NOT_READY:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

const char *gdr_cu_describe(const struct gdr_cuda *cu, CUresult rc, char *buf, size_t len)
{
	const char *name = NULL, *str = NULL;

	if (cu->GetErrorName && cu->GetErrorName(rc, &name) != CUDA_SUCCESS)
		name = NULL;
	if (cu->GetErrorString && cu->GetErrorString(rc, &str) != CUDA_SUCCESS)
		str = NULL;
	if (name && str)
		snprintf(buf, len, "%s: %s", name, str);
	else if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "CUresult %d", (int)rc);
	return buf;
}

int gdr_cu_fail(struct gdr_cuda *cu, CUresult rc, char *why, size_t wlen, const char *fmt, ...)
{
	char what[160], desc[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(cu->last_error, sizeof(cu->last_error), "%s: %s", what,
		 gdr_cu_describe(cu, rc, desc, sizeof(desc)));
	if (why && wlen)
		gdr_strlcpy(why, cu->last_error, wlen);
	return gdr_cu_errno(rc);
}

int gdr_cu_check(struct gdr_cuda *cu, char *why, size_t wlen, CUresult rc, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (rc == CUDA_SUCCESS)
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return gdr_cu_fail(cu, rc, why, wlen, "%s", what);
}

void gdr_cu_fmt_version(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

int gdr_cu_absent(struct gdr_cuda *cu, char *why, size_t wlen, const char *what)
{
	char ver[32];

	gdr_cu_fmt_version(cu->driver_version, ver, sizeof(ver));
	snprintf(cu->last_error, sizeof(cu->last_error), "CUDA driver %s has no %s", ver, what);
	gdr_strlcpy(why, cu->last_error, wlen);
	return -EOPNOTSUPP;
}

const char *gdr_cuda_last_error(struct gdr_cuda *cu)
{
	return cu->last_error;
}
