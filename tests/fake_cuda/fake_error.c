/*
 * The fake driver's CUresult names and strings (cuGetErrorName/String, and
 * the names the GDRPERF_FAKE_CUDA_* settings accept).
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names and strings as the real driver words them. */
#define FAKE_ERRORS(X)                                                                             \
	X(CUDA_SUCCESS, "no error")                                                                \
	X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                            \
	X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                               \
	X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                                      \
	X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                        \
	X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                              \
	X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                                     \
	X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                                    \
	X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                                    \
	X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                                          \
	X(CUDA_ERROR_NOT_READY, "device not ready")                                                \
	X(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered")                  \
	X(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")                                     \
	X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                                     \
	X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")                              \
	X(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed")                                  \
	X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,                                                       \
	  "system has unsupported display driver / cuda driver combination")                       \
	X(CUDA_ERROR_UNKNOWN, "unknown error")

static const struct {
	CUresult rc;
	const char *name, *str;
} fake_errors[] = {
#define FAKE_ERR_ENTRY(rc, str) { rc, #rc, str },
	FAKE_ERRORS(FAKE_ERR_ENTRY)
#undef FAKE_ERR_ENTRY
};

CUresult parse_cuerr(const char *s)
{
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(fake_errors) / sizeof(fake_errors[0]); i++)
		if (!strcmp(s, fake_errors[i].name))
			return fake_errors[i].rc;
	v = strtol(s, &end, 0);
	if (end != s && *end == '\0' && v > 0)
		return (CUresult)v;
	fprintf(stderr, "fake libcuda: unknown CUresult '%s', using CUDA_ERROR_UNKNOWN\n", s);
	return CUDA_ERROR_UNKNOWN;
}

CUresult fake_GetErrorName(CUresult rc, const char **s)
{
	for (size_t i = 0; i < sizeof(fake_errors) / sizeof(fake_errors[0]); i++)
		if (fake_errors[i].rc == rc) {
			*s = fake_errors[i].name;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_GetErrorString(CUresult rc, const char **s)
{
	for (size_t i = 0; i < sizeof(fake_errors) / sizeof(fake_errors[0]); i++)
		if (fake_errors[i].rc == rc) {
			*s = fake_errors[i].str;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
