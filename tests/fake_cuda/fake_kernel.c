/*
 * Modules and kernel launches, for the one kernel gdrperf ships: the bounce
 * path's SM copy, gdr_bounce_copy(u64 dst, u64 src, u64 n) (common/mem/
 * bounce_copy.cu). cuModuleLoadData takes PTX text as the real driver does
 * and records its .entry names and parameter lists; cuModuleGetFunction
 * finds an entry by name; cuLaunchKernel checks the launch as the driver
 * would (geometry, parameters given one way, device-reachable addresses) and
 * runs the copy on the CPU in order on the stream (fake_stream.c), so that
 * events and stream syncs order it like any copy. A kernel the fake cannot
 * run (another name, another parameter list) is refused with
 * CUDA_ERROR_NOT_SUPPORTED: a test that changes the kernel must change this.
 * Mapped host memory: under unified addressing (every 64-bit Linux driver)
 * cuMemHostGetDevicePointer answers the host address of cuMemHostAlloc'ed
 * memory; the fake does the same.
 *
 * Departures from a GPU, on purpose: an address the kernel cannot reach is
 * refused at launch (CUDA_ERROR_ILLEGAL_ADDRESS) instead of faulting the
 * context later.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdlib.h>
#include <string.h>

#define FAKE_MAGIC_MODULE 0x6d6f6421u
#define FAKE_MAGIC_FUNC	  0x66756e21u
#define FAKE_MAX_ENTRIES  8
#define FAKE_MAX_PARAMS	  16
#define FAKE_PTX_MAX	  (1u << 20)

struct fake_func {
	unsigned int magic;
	char name[64];
	int nparams;
	int param_bytes[FAKE_MAX_PARAMS]; /* .u64/.b64/.s64 = 8, .u32... = 4 */
};

struct fake_module {
	unsigned int magic;
	int nfuncs;
	struct fake_func funcs[FAKE_MAX_ENTRIES];
};

/* The .param list after "NAME(": sizes in f; 0 or -1 on a list the fake cannot read. */
static int parse_params(const char *p, struct fake_func *f)
{
	f->nparams = 0;
	for (;;) {
		const char *end, *ty;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')
			p++;
		if (*p == ')')
			return 0;
		if (strncmp(p, ".param", 6) || f->nparams == FAKE_MAX_PARAMS)
			return -1;
		ty = p + 6;
		while (*ty == ' ' || *ty == '\t')
			ty++;
		if (!strncmp(ty, ".u64", 4) || !strncmp(ty, ".b64", 4) || !strncmp(ty, ".s64", 4))
			f->param_bytes[f->nparams++] = 8;
		else if (!strncmp(ty, ".u32", 4) || !strncmp(ty, ".b32", 4) ||
			 !strncmp(ty, ".s32", 4))
			f->param_bytes[f->nparams++] = 4;
		else
			f->param_bytes[f->nparams++] = -1; /* aligned arrays and the like */
		end = strpbrk(p, ",)");
		if (!end)
			return -1;
		p = end;
	}
}

/* PTX text: ".version", ".target" and every ".entry NAME(params)". */
static CUresult parse_ptx(const char *text, struct fake_module *m)
{
	const char *p = text;

	if (!memchr(text, '\0', FAKE_PTX_MAX) || !strstr(text, ".version") ||
	    !strstr(text, ".target"))
		return CUDA_ERROR_INVALID_IMAGE;
	while ((p = strstr(p, ".entry")) != NULL) {
		struct fake_func *f;
		size_t n;

		p += 6;
		while (*p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, " \t\n(");
		if (m->nfuncs == FAKE_MAX_ENTRIES || n == 0 || n >= sizeof(f->name))
			return CUDA_ERROR_INVALID_PTX;
		f = &m->funcs[m->nfuncs++];
		memcpy(f->name, p, n);
		f->name[n] = '\0';
		f->magic = FAKE_MAGIC_FUNC;
		p = strchr(p, '(');
		if (!p || parse_params(p + 1, f))
			return CUDA_ERROR_INVALID_PTX;
	}
	return m->nfuncs ? CUDA_SUCCESS : CUDA_ERROR_INVALID_PTX;
}

CUresult fake_ModuleLoadData(CUmodule *out, const void *image)
{
	CUresult rc = enter("cuModuleLoadData", true);
	struct fake_module *m;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = parse_ptx(image, m);
	if (rc != CUDA_SUCCESS) {
		free(m);
		return rc;
	}
	m->magic = FAKE_MAGIC_MODULE;
	*out = (CUmodule)m;
	return CUDA_SUCCESS;
}

CUresult fake_ModuleUnload(CUmodule h)
{
	CUresult rc = enter("cuModuleUnload", true);
	struct fake_module *m = (struct fake_module *)h;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!m || m->magic != FAKE_MAGIC_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	/* Launches still queued hold no pointer into it: they copied what they need. */
	m->magic = 0;
	for (int i = 0; i < m->nfuncs; i++)
		m->funcs[i].magic = 0;
	free(m);
	return CUDA_SUCCESS;
}

CUresult fake_ModuleGetFunction(CUfunction *out, CUmodule h, const char *name)
{
	CUresult rc = enter("cuModuleGetFunction", true);
	struct fake_module *m = (struct fake_module *)h;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!m || m->magic != FAKE_MAGIC_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < m->nfuncs; i++)
		if (!strcmp(m->funcs[i].name, name)) {
			*out = (CUfunction)&m->funcs[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

/* Can the GPU reach [p, p+len): device memory, or mapped pinned host memory. */
static bool reachable(uint64_t p, uint64_t len)
{
	return device_range_ok((CUdeviceptr)p, len) || is_pinned((const void *)(uintptr_t)p, len);
}

CUresult fake_LaunchKernel(CUfunction h, unsigned int gx, unsigned int gy, unsigned int gz,
			   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			   CUstream hs, void **params, void **extra)
{
	CUresult rc = enter("cuLaunchKernel", true);
	struct fake_func *f = (struct fake_func *)h;
	unsigned long long dst, src, n;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!f || f->magic != FAKE_MAGIC_FUNC)
		return CUDA_ERROR_INVALID_HANDLE;
	/* The limits of every GPU since compute capability 3.0. */
	if (!gx || !gy || !gz || !bx || !by || !bz || gx > 0x7fffffffu || gy > 65535 ||
	    gz > 65535 || bz > 64 || (unsigned long long)bx * by * bz > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	if (shmem > 48 * 1024)
		return CUDA_ERROR_INVALID_VALUE;
	/* Parameters come one way: kernelParams or extra, never both, never neither. */
	if ((params && extra) || (f->nparams && !params && !extra))
		return CUDA_ERROR_INVALID_VALUE;
	if (strcmp(f->name, "gdr_bounce_copy") || f->nparams != 3 || f->param_bytes[0] != 8 ||
	    f->param_bytes[1] != 8 || f->param_bytes[2] != 8 || !params)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!params[0] || !params[1] || !params[2])
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&dst, params[0], 8);
	memcpy(&src, params[1], 8);
	memcpy(&n, params[2], 8);
	if (n == 0)
		return fake_stream_valid(hs);
	if (!reachable(dst, n) || !reachable(src, n))
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	return fake_stream_run(hs, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
}

CUresult fake_MemHostGetDevicePointer(CUdeviceptr *out, void *p, unsigned int flags)
{
	CUresult rc = enter("cuMemHostGetDevicePointer", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!out || flags || !p || !is_pinned(p, 1))
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}
