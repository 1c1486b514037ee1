/*
 * gpu_contract: the driver answers gdrperf relies on, one line per case,
 * against any libcuda.so.1 (GDRPERF_LIBCUDA names another file, e.g. the
 * fake). A line is "case: answer"; answers are CUresult numbers (0 success,
 * 1 INVALID_VALUE, 801 NOT_SUPPORTED, ...) or values that do not depend on
 * the machine (alignments, offsets, sizes relative to the request).
 *
 * The cases: every entry point the loader resolves (common/mem/cuda_load.c,
 * at the ABI version it asks for), each device attribute gdrperf reads, the
 * flags it passes (MAPPING_TYPE_PCIE, PORTABLE, gpuDirectRDMACapable), and
 * the answers the real H200 showed on 2026-12-04 (issue 41): small
 * cuMemAlloc placement, RANGE_START_ADDR/SIZE, IS_GPU_DIRECT_RDMA_CAPABLE,
 * the DMA-BUF's size, exports around and across small allocations, two
 * 4 MiB allocations side by side and an export across both, the refusals,
 * VMM granularity and offsets, an export before cuMemSetAccess, SYNC_MEMOPS
 * on cuMemCreate memory.
 *
 *   gpu_contract [--gpu N]              print the answers
 *   gpu_contract --expect FILE          compare with a recorded file
 *                (tests/gpu/recorded/): print each difference, skip and
 *                count its "not recorded" lines; exit 1 on any difference
 */
#include "config.h"

#include <dlfcn.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda.h"

/* The toolkit's header, for calling the driver directly (ours is "cuda.h"). */
#include <cuda.h>

#define MiB (1024u * 1024u)
#define NOT_RECORDED "not recorded"

typedef CUresult (*getproc_v1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*getproc_v2_t)(const char *, void **, int, cuuint64_t, int *);

static getproc_v1_t gp1;
static getproc_v2_t gp2;

/* The printed answers, kept for --expect. */
static char lines[256][160];
static int nlines;

__attribute__((format(printf, 1, 2))) static void answer(const char *fmt, ...)
{
	va_list ap;

	if (nlines >= (int)(sizeof(lines) / sizeof(lines[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(lines[nlines], sizeof(lines[0]), fmt, ap);
	va_end(ap);
	nlines++;
}

static CUresult getproc(const char *name, int version, void **fn)
{
	int status = 0;

	*fn = NULL;
	if (gp1)
		return gp1(name, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
	return gp2(name, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
}

/* An entry point at the very ABI version the loader asks for; exits if absent. */
static void *fn(const char *name)
{
	const char *n;
	int v, opt;
	void *f = NULL;

	for (size_t i = 0; gdr_cuda_sym(i, &n, &v, &opt) == 0; i++)
		if (!strcmp(n, name) && getproc(n, v, &f) == CUDA_SUCCESS && f)
			return f;
	fprintf(stderr, "gpu_contract: %s: not in the loader's table or not found\n", name);
	exit(2);
}

#define CALL(type, name) ((type)fn(name))

typedef CUresult (*alloc_t)(CUdeviceptr *, size_t);
typedef CUresult (*free_t)(CUdeviceptr);
typedef CUresult (*export_t)(void *, CUdeviceptr, size_t, CUmemRangeHandleType,
			     unsigned long long);
typedef CUresult (*getattr_t)(void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*setattr_t)(const void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*create_t)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			     unsigned long long);
typedef CUresult (*release_t)(CUmemGenericAllocationHandle);
typedef CUresult (*reserve_t)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*addrfree_t)(CUdeviceptr, size_t);
typedef CUresult (*map_t)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			  unsigned long long);
typedef CUresult (*unmap_t)(CUdeviceptr, size_t);
typedef CUresult (*access_t)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*gran_t)(size_t *, const CUmemAllocationProp *,
			   CUmemAllocationGranularity_flags);

/* Export [d, +len): "rc" or "0 size=<SEEK_END relative to len>". */
static void export_case(const char *what, CUdeviceptr d, size_t len, unsigned long long flags)
{
	int fd = -1;
	CUresult rc = CALL(export_t, "cuMemGetHandleForAddressRange")(
	    &fd, d, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);

	if (rc != CUDA_SUCCESS) {
		answer("export %s: %d", what, (int)rc);
		return;
	}
	off_t end = lseek(fd, 0, SEEK_END);

	answer("export %s: 0, lseek(SEEK_END) %s the range's length", what,
	       end == (off_t)len ? "=" : end > (off_t)len ? ">" : "<");
	close(fd);
}

/* The largest power of two (up to 2 MiB) that divides p, in words. */
static const char *alignment(CUdeviceptr p)
{
	static char s[32];
	size_t a = 2 * MiB;

	while (a > 1 && p % a)
		a /= 2;
	if (a >= MiB)
		snprintf(s, sizeof(s), "%zu MiB aligned", a / MiB);
	else if (a >= 1024)
		snprintf(s, sizeof(s), "%zu KiB aligned", a / 1024);
	else
		snprintf(s, sizeof(s), "%zu B aligned", a);
	return s;
}

static void prop_init(CUmemAllocationProp *p, CUdevice dev, int gdr)
{
	memset(p, 0, sizeof(*p));
	p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->location.id = dev;
	p->allocFlags.gpuDirectRDMACapable = (unsigned char)gdr;
}

static void loader_cases(void)
{
	const char *n;
	int v, opt;

	for (size_t i = 0; gdr_cuda_sym(i, &n, &v, &opt) == 0; i++) {
		void *f;
		CUresult rc = getproc(n, v, &f);

		answer("cuGetProcAddress(%s, %d): %d", n, v, rc == CUDA_SUCCESS && !f ? -1 : (int)rc);
	}
}

static void device_cases(CUdevice dev)
{
	static const struct {
		const char *name;
		CUdevice_attribute a;
	} values[] = {
		{ "DMA_BUF_SUPPORTED", CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED },
		{ "GPU_DIRECT_RDMA_SUPPORTED", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED },
		{ "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
		  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED },
		{ "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS",
		  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS },
		{ "GPU_DIRECT_RDMA_WRITES_ORDERING", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING },
	};
	typedef CUresult (*attr_t)(int *, CUdevice_attribute, CUdevice);
	attr_t get = CALL(attr_t, "cuDeviceGetAttribute");
	int x = 0;

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		CUresult rc = get(&x, values[i].a, dev);

		if (rc == CUDA_SUCCESS)
			answer("cuDeviceGetAttribute(%s): 0, value %d", values[i].name, x);
		else
			answer("cuDeviceGetAttribute(%s): %d", values[i].name, (int)rc);
	}
}

/* Two 4 MiB cuMemAlloc in a row, and an export of the range across both. */
static void two_big_cases(alloc_t alloc, free_t mfree)
{
	CUdeviceptr x = 0, y = 0;
	CUresult rc, rc2;

	rc = alloc(&x, 4 * MiB);
	rc2 = alloc(&y, 4 * MiB);
	answer("cuMemAlloc(4 MiB) twice: %d, %s", (int)(rc ? rc : rc2),
	       rc || rc2	  ? "-"
	       : y == x + 4 * MiB ? "the second right after the first"
	       : x == y + 4 * MiB ? "the second right before the first"
				  : "not adjacent");
	if (!rc && !rc2 && (y == x + 4 * MiB || x == y + 4 * MiB))
		export_case("spanning adjacent 4 MiB allocations", x < y ? x : y, 8 * MiB, 0);
	else
		answer("export spanning adjacent 4 MiB allocations: not adjacent");
	if (!rc2)
		mfree(y);
	if (!rc)
		mfree(x);
}

static void memalloc_cases(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	alloc_t alloc = CALL(alloc_t, "cuMemAlloc");
	free_t mfree = CALL(free_t, "cuMemFree");
	getattr_t get = CALL(getattr_t, "cuPointerGetAttribute");
	setattr_t set = CALL(setattr_t, "cuPointerSetAttribute");
	CUdeviceptr a = 0, b = 0, c = 0, big = 0, start = 0;
	size_t size = 0;
	unsigned int on = 1;
	int flag = -1;
	char host[64];
	CUresult rc;

	/* Small ones: the first, then two more right after it. */
	rc = alloc(&a, 512);
	answer("cuMemAlloc(512 B) first: %d, %s", (int)rc, rc ? "-" : alignment(a));
	rc = alloc(&b, 4096);
	answer("cuMemAlloc(4 KiB) next: %d, first +0x%llx", (int)rc,
	       rc ? 0ull : (unsigned long long)(b - a));
	rc = alloc(&c, 512);
	answer("cuMemAlloc(512 B) after that: %d, first +0x%llx", (int)rc,
	       rc ? 0ull : (unsigned long long)(c - a));
	rc = get(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, b + 100);
	answer("RANGE_START_ADDR inside the 4 KiB allocation: %d%s", (int)rc,
	       rc ? "" : start == b ? ", its start" : ", another address");
	rc = get(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, b + 100);
	answer("RANGE_SIZE of the 4 KiB allocation: %d%s", (int)rc,
	       rc ? "" : size == 4096 ? ", its size" : ", another size");
	rc = get(&flag, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, b);
	answer("IS_GPU_DIRECT_RDMA_CAPABLE of cuMemAlloc memory: %d%s%d", (int)rc,
	       rc ? "" : ", value ", rc ? 0 : flag);
	/* Page-aligned ranges around and across them (4 KiB and 64 KiB rounded). */
	export_case("of the host page holding the first small allocation", a & ~(CUdeviceptr)(page - 1),
		    page, 0);
	export_case("of the 4 KiB-rounded range around the 4 KiB allocation",
		    b & ~(CUdeviceptr)(page - 1), 2 * page, 0);
	export_case("of the 64 KiB-rounded range around the small allocations",
		    a & ~(CUdeviceptr)(65535), 65536, 0);
	export_case("spanning adjacent small allocations", a & ~(CUdeviceptr)(page - 1),
		    ((c + 512 - (a & ~(CUdeviceptr)(page - 1))) + page - 1) / page * page, 0);
	mfree(c);
	mfree(b);
	mfree(a);

	/* A large one: the DMA-BUF's size and the refusals. */
	rc = alloc(&big, 64 * MiB);
	answer("cuMemAlloc(64 MiB): %d, %s", (int)rc, rc ? "-" : alignment(big));
	if (rc)
		return;
	export_case("whole 64 MiB", big, 64 * MiB, 0);
	export_case("4 MiB at +1 MiB", big + MiB, 4 * MiB, 0);
	export_case("with an unaligned start", big + 256, 65536, 0);
	export_case("with an unaligned length", big, 1000, 0);
	export_case("of length 0", big, 0, 0);
	export_case("with an unknown flag", big, 65536, 1ull << 40);
#if CUDA_VERSION >= 12080
	export_case("with MAPPING_TYPE_PCIE", big, 65536, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
#else
	export_case("with MAPPING_TYPE_PCIE", big, 65536, 1ull /* its value from CUDA 12.8 on */);
#endif
	export_case("of a host pointer", (CUdeviceptr)(uintptr_t)host & ~(CUdeviceptr)(page - 1), page,
		    0);
	rc = set(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, big);
	answer("SYNC_MEMOPS set on cuMemAlloc memory: %d", (int)rc);
	on = 0;
	rc = get(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, big);
	answer("SYNC_MEMOPS read back: %d%s%u", (int)rc, rc ? "" : ", value ", rc ? 0 : on & 1);
	mfree(big);
	two_big_cases(alloc, mfree);
}

static void vmm_cases(CUdevice dev)
{
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle h = 0, h0 = 0;
	CUmemAccessDesc acc;
	CUdeviceptr va = 0;
	size_t gmin = 0, grec = 0;
	unsigned int on = 1;
	int flag = -1;
	CUresult rc;

	prop_init(&prop, dev, 1);
	rc = CALL(gran_t, "cuMemGetAllocationGranularity")(&gmin, &prop,
							    CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	answer("VMM granularity, minimum: %d, %zu KiB", (int)rc, gmin / 1024);
	rc = CALL(gran_t, "cuMemGetAllocationGranularity")(&grec, &prop,
							    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	answer("VMM granularity, recommended: %d, %zu KiB", (int)rc, grec / 1024);
	if (!grec)
		return;
	rc = CALL(create_t, "cuMemCreate")(&h, 2 * grec, &prop, 0);
	answer("cuMemCreate(gpuDirectRDMACapable=1): %d", (int)rc);
	prop_init(&prop, dev, 0);
	rc = CALL(create_t, "cuMemCreate")(&h0, grec, &prop, 0);
	answer("cuMemCreate(gpuDirectRDMACapable=0): %d", (int)rc);
	if (!h || !h0)
		return;
	rc = CALL(reserve_t, "cuMemAddressReserve")(&va, 4 * grec, grec, 0, 0);
	answer("cuMemAddressReserve: %d", (int)rc);
	if (rc)
		return;
	export_case("of reserved but unmapped VMM memory", va, grec, 0);
	rc = CALL(map_t, "cuMemMap")(va, grec, 4096, h, 0);
	answer("cuMemMap at an offset off the granularity: %d", (int)rc);
	rc = CALL(map_t, "cuMemMap")(va, 2 * grec, 0, h, 0);
	answer("cuMemMap: %d", (int)rc);
	rc = CALL(map_t, "cuMemMap")(va + 2 * grec, grec, 0, h0, 0);
	answer("cuMemMap of the handle without gpuDirectRDMACapable: %d", (int)rc);
	/* The real driver exports a mapping that cuMemSetAccess has not opened yet. */
	export_case("of a cuMemCreate mapping before cuMemSetAccess", va, 2 * grec, 0);
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = dev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	rc = CALL(access_t, "cuMemSetAccess")(va, 2 * grec, &acc, 1);
	answer("cuMemSetAccess(READWRITE): %d", (int)rc);
	(void)CALL(access_t, "cuMemSetAccess")(va + 2 * grec, grec, &acc, 1);
	export_case("of a cuMemCreate mapping", va, 2 * grec, 0);
	rc = CALL(getattr_t, "cuPointerGetAttribute")(
	    &flag, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, va);
	answer("IS_GPU_DIRECT_RDMA_CAPABLE of cuMemCreate(gpuDirectRDMACapable=1): %d%s%d", (int)rc,
	       rc ? "" : ", value ", rc ? 0 : flag);
	flag = -1;
	rc = CALL(getattr_t, "cuPointerGetAttribute")(
	    &flag, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, va + 2 * grec);
	answer("IS_GPU_DIRECT_RDMA_CAPABLE of cuMemCreate(gpuDirectRDMACapable=0): %d%s%d", (int)rc,
	       rc ? "" : ", value ", rc ? 0 : flag);
	rc = CALL(setattr_t, "cuPointerSetAttribute")(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, va);
	answer("SYNC_MEMOPS set on cuMemCreate memory: %d", (int)rc);
	CALL(unmap_t, "cuMemUnmap")(va + 2 * grec, grec);
	CALL(unmap_t, "cuMemUnmap")(va, 2 * grec);
	CALL(addrfree_t, "cuMemAddressFree")(va, 4 * grec);
	CALL(release_t, "cuMemRelease")(h0);
	CALL(release_t, "cuMemRelease")(h);
}

static void other_cases(void)
{
	typedef CUresult (*hostalloc_t)(void **, size_t, unsigned int);
	typedef CUresult (*freehost_t)(void *);
	typedef CUresult (*hostreg_t)(void *, size_t, unsigned int);
	typedef CUresult (*hostunreg_t)(void *);
	typedef CUresult (*sync_t)(CUstream);
	typedef CUresult (*flush_t)(CUflushGPUDirectRDMAWritesTarget,
				    CUflushGPUDirectRDMAWritesScope);
	void *p = NULL;
	CUresult rc;

	rc = CALL(hostalloc_t, "cuMemHostAlloc")(&p, MiB, CU_MEMHOSTALLOC_PORTABLE);
	answer("cuMemHostAlloc(PORTABLE): %d", (int)rc);
	if (!rc) {
		/* Pinned memory cannot be pinned twice (the --hugepages ring is mmap'ed, never
		 * this). */
		answer(
		    "cuMemHostRegister(cuMemHostAlloc'ed memory): %d",
		    (int)CALL(hostreg_t, "cuMemHostRegister")(p, MiB, CU_MEMHOSTREGISTER_PORTABLE));
		CALL(freehost_t, "cuMemFreeHost")(p);
	}
	/* The --hugepages bounce ring: the caller's mmap, pinned and mapped by the driver. */
	p = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		rc = CALL(hostreg_t, "cuMemHostRegister")(
		    p, 2 * MiB, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
		answer("cuMemHostRegister(mmap 2 MiB, PORTABLE | DEVICEMAP): %d", (int)rc);
		answer("cuMemHostRegister(the same range again): %d",
		       (int)CALL(hostreg_t, "cuMemHostRegister")(p, 2 * MiB,
								 CU_MEMHOSTREGISTER_PORTABLE));
		answer("cuMemHostUnregister(registered): %d",
		       (int)CALL(hostunreg_t, "cuMemHostUnregister")(p));
		answer("cuMemHostUnregister(no longer registered): %d",
		       (int)CALL(hostunreg_t, "cuMemHostUnregister")(p));
		munmap(p, 2 * MiB);
	}
	rc = CALL(sync_t, "cuStreamSynchronize")(NULL);
	answer("cuStreamSynchronize(legacy default stream): %d", (int)rc);
	rc = CALL(flush_t, "cuFlushGPUDirectRDMAWrites")(
	    CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
	    CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
	answer("cuFlushGPUDirectRDMAWrites(CURRENT_CTX, TO_OWNER): %d", (int)rc);
}

/* "key: answer" -> key length. */
static size_t keylen(const char *line)
{
	const char *c = strstr(line, ": ");

	return c ? (size_t)(c - line) : strlen(line);
}

static int compare(const char *path)
{
	char buf[256];
	int agree = 0, differ = 0, skipped = 0, seen[256] = { 0 };
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return 2;
	}
	while (fgets(buf, sizeof(buf), f)) {
		size_t n = strcspn(buf, "\n"), k;
		int found = -1;

		buf[n] = '\0';
		if (!buf[0] || buf[0] == '#')
			continue;
		k = keylen(buf);
		for (int i = 0; i < nlines && found < 0; i++)
			if (keylen(lines[i]) == k && !strncmp(lines[i], buf, k))
				found = i;
		if (found >= 0)
			seen[found] = 1;
		if (!strcmp(buf + k, ": " NOT_RECORDED)) {
			skipped++;
		} else if (found < 0) {
			printf("differs: %s (recorded) / not asked by this program\n", buf);
			differ++;
		} else if (strcmp(lines[found], buf)) {
			printf("differs: %.*s: recorded %s, here %s\n", (int)k, buf, buf + k + 2,
			       lines[found] + k + 2);
			differ++;
		} else {
			agree++;
		}
	}
	fclose(f);
	for (int i = 0; i < nlines; i++)
		if (!seen[i]) {
			printf("differs: %s (here) / absent from %s\n", lines[i], path);
			differ++;
		}
	printf("contract vs %s: %d agree, %d differ, %d not recorded (skipped)\n", path, agree,
	       differ, skipped);
	return differ ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { .name = "gpu", .has_arg = 1, .val = 'g' },
					      { .name = "expect", .has_arg = 1, .val = 'e' },
					      { .name = "help", .has_arg = 0, .val = 'h' },
					      {} };
	const char *lib = getenv("GDRPERF_LIBCUDA"), *expect = NULL;
	typedef CUresult (*init_t)(unsigned int);
	typedef CUresult (*ver_t)(int *);
	typedef CUresult (*devget_t)(CUdevice *, int);
	typedef CUresult (*retain_t)(CUcontext *, CUdevice);
	typedef CUresult (*setcur_t)(CUcontext);
	typedef CUresult (*rel_t)(CUdevice);
	CUcontext ctx = NULL;
	CUdevice dev = 0;
	int ordinal = 0, version = 0, c;
	void *h;

	while ((c = getopt_long(argc, argv, "g:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			ordinal = atoi(optarg);
			break;
		case 'e':
			expect = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [--gpu N] [--expect RECORDED-FILE]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	h = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "gpu_contract: %s\n", dlerror());
		return 2;
	}
	*(void **)&gp1 = dlsym(h, "cuGetProcAddress");
	if (!gp1)
		*(void **)&gp2 = dlsym(h, "cuGetProcAddress_v2");
	if (!gp1 && !gp2) {
		fprintf(stderr, "gpu_contract: no cuGetProcAddress in the driver\n");
		return 2;
	}
	loader_cases();
	CALL(ver_t, "cuDriverGetVersion")(&version);
	answer("cuDriverGetVersion: %d", version);
	if (CALL(init_t, "cuInit")(0) || CALL(devget_t, "cuDeviceGet")(&dev, ordinal) ||
	    CALL(retain_t, "cuDevicePrimaryCtxRetain")(&ctx, dev)) {
		fprintf(stderr, "gpu_contract: no usable GPU %d\n", ordinal);
		return 2;
	}
	device_cases(dev);
	{
		CUdeviceptr d = 0;
		CUresult rc = CALL(alloc_t, "cuMemAlloc")(&d, 512);

		answer("cuMemAlloc with no current context: %d", (int)rc);
		if (!rc)
			CALL(free_t, "cuMemFree")(d);
	}
	CALL(setcur_t, "cuCtxSetCurrent")(ctx);
	memalloc_cases();
	vmm_cases(dev);
	other_cases();
	CALL(rel_t, "cuDevicePrimaryCtxRelease")(dev);
	if (expect)
		return compare(expect);
	for (int i = 0; i < nlines; i++)
		printf("%s\n", lines[i]);
	return 0;
}
