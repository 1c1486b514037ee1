/*
 * What the parts of the fake libcuda.so.1 share (fake_cuda.c says what the
 * fake is and enforces): the limits and handle magics, the objects, the one
 * process-wide driver state, and the entry points the cuGetProcAddress table
 * hands out. Everything here is hidden (-fvisibility=hidden); only what
 * fake_cuda.c marks EXPORT leaves the library.
 */
#ifndef GDRPERF_FAKE_CUDA_INT_H
#define GDRPERF_FAKE_CUDA_INT_H

#include <cuda.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FAKE_MAX_DEV	  16
#define FAKE_GPU_PAGE	  (64u * 1024)
#define FAKE_BIG_PAGE	  (2u * 1024 * 1024) /* large-page placement and VMM granularity */
#define FAKE_SUB_ALIGN	  512u
#define FAKE_MAGIC_PHYS	  0x70687321u
#define FAKE_MAX_FAIL	  16
#define FAKE_MAGIC_CTX	  0x63747821u
#define FAKE_MAGIC_STREAM 0x73747221u
#define FAKE_MAGIC_EVENT  0x65767421u

/* cuDriverGetVersion unless told: the H200's driver of 2026-12-04 (CUDA 13.0). */
#define FAKE_DRIVER_VERSION 13000

#define EXPORT __attribute__((visibility("default")))

struct fake_ctx {
	unsigned int magic;
	int dev;
	int refs;
};

/* A cuMemCreate handle: physical memory, not yet addressable. */
struct fake_phys {
	unsigned int magic;
	int memfd;
	size_t size;
	int dev;
	int maps; /* cuMemMap mappings alive */
	bool released;
	bool gdr_capable; /* allocFlags.gpuDirectRDMACapable */
	struct fake_phys *next;
};

/* A cuMemAddressReserve range. */
struct fake_reserve {
	uintptr_t base;
	size_t size;
	struct fake_reserve *next;
};

/*
 * 2 MiB of device memory that small cuMemAlloc requests are carved from, at
 * 512 B steps, as the real driver does; freed with its last allocation.
 */
struct fake_slab {
	int memfd;
	void *map;
	size_t used; /* bytes handed out from the start */
	int live;    /* allocations alive in it */
	struct fake_slab *next;
};

/*
 * A DMA-BUF export: the range's pages moved into a memfd of exactly the
 * range's size (fake_dmabuf.c); fd is the fake's own reference, so that an
 * export of the same range again hands out the same pages.
 */
struct fake_export {
	uintptr_t start;
	size_t len;
	int fd;
	struct fake_export *next;
};

/* An address range the program may touch: a cuMemAlloc or one cuMemMap. */
struct fake_alloc {
	int memfd;		/* backing; owned unless phys or slab */
	struct fake_slab *slab; /* small cuMemAlloc: the slab it was carved from */
	void *map;		/* cuMemAlloc: what to munmap */
	size_t map_len;		/* cuMemAlloc: mapping length */
	uintptr_t ptr;		/* what cuMemAlloc returned / where cuMemMap mapped */
	size_t size;		/* what was asked */
	off_t file_off;		/* memfd offset of ptr */
	struct fake_phys *phys; /* VMM mapping: its handle */
	bool accessible;	/* cuMemAlloc: always; VMM: after cuMemSetAccess */
	int dev;
	bool sync_memops;
	unsigned long long id;
	struct fake_alloc *next;
};

struct fake_pinned {
	void *ptr;
	size_t size;
	bool registered; /* cuMemHostRegister: the caller's memory, not ours to free */
	struct fake_pinned *next;
};

struct fake_event {
	unsigned int magic;
	unsigned long long recorded; /* records issued */
	unsigned long long done;     /* records the stream has reached */
};

enum fake_op_kind { OP_COPY, OP_EVENT };

struct fake_op {
	enum fake_op_kind kind;
	void *dst;
	const void *src;
	size_t len;
	struct fake_event *ev;
	unsigned long long seq;
	struct fake_op *next;
};

struct fake_stream {
	unsigned int magic;
	pthread_t thread;
	pthread_cond_t work;
	struct fake_op *head, *tail;
	bool busy, stop;
};

struct fake_fail {
	char fn[128];
	CUresult rc;
};

struct fake_cfg {
	int ndev;
	char name[FAKE_MAX_DEV][128];
	unsigned int dom[FAKE_MAX_DEV], bus[FAKE_MAX_DEV], devfn[FAKE_MAX_DEV];
	int dmabuf[FAKE_MAX_DEV], gdr[FAKE_MAX_DEV];
	CUresult dmabuf_rc; /* CUDA_SUCCESS = memfd */
	unsigned long long mem_limit;
	bool mem_enforced;
	unsigned long long delay_ns;
	double gbps;
	size_t alloc_offset;
	bool alloc_offset_set;
	int vmm_gdr[FAKE_MAX_DEV];
	unsigned char uuid[FAKE_MAX_DEV][16];
	bool dmabuf_pcie;
	bool dmabuf_strict; /* the exported range must lie inside one allocation */
	int writes_ordering, flush_options;
	int no_attr[16];
	int nno_attr;
	int driver_version;
	struct fake_fail fail[FAKE_MAX_FAIL];
	int nfail;
};

/* Process-wide state is what a driver is: all of it, under lock. */
struct fake_state {
	pthread_mutex_t lock;
	pthread_cond_t done; /* stream progress */
	bool inited;
	struct fake_cfg cfg;
	struct fake_ctx ctx[FAKE_MAX_DEV];
	struct fake_alloc *allocs;
	struct fake_phys *phys;
	struct fake_reserve *reserves;
	struct fake_slab *slabs; /* the first is the one being carved */
	struct fake_export *exports;
	unsigned long long flushes;
	unsigned long long allocated;
	unsigned long long next_id;
	struct fake_pinned *pinned;
	/* Virtual room for large cuMemAlloc, handed out in order (fake_mem.c). */
	bool arena_tried;
	uintptr_t next_big, arena_end;
};

extern struct fake_state g;

/* The context current on this thread (cuCtxSetCurrent). */
extern _Thread_local struct fake_ctx *tls_ctx;

/* fake_error.c: names and strings of CUresult. */
CUresult parse_cuerr(const char *s);
CUresult fake_GetErrorName(CUresult rc, const char **s);
CUresult fake_GetErrorString(CUresult rc, const char **s);

/* fake_cfg.c: configuration and the entry checks. */
void load_cfg(struct fake_cfg *c);
CUresult injected(const char *fn);
CUresult enter(const char *fn, bool need_ctx);

/* fake_mem.c: device and pinned memory; lookups (caller holds g.lock for find_range). */
struct fake_alloc *find_range(uintptr_t p, size_t len);
bool backed(uintptr_t p, size_t len);
void exports_drop(uintptr_t p, size_t len);
size_t host_page(void);
bool is_pinned(const void *p, size_t len);
bool device_range_ok(CUdeviceptr d, size_t len);
CUresult fake_MemAlloc(CUdeviceptr *dptr, size_t size);
CUresult fake_MemFree(CUdeviceptr d);
CUresult fake_MemHostAlloc(void **pp, size_t size, unsigned int flags);
CUresult fake_MemFreeHost(void *p);
CUresult fake_MemHostRegister(void *p, size_t size, unsigned int flags);
CUresult fake_MemHostUnregister(void *p);
CUresult fake_PointerSetAttribute(const void *value, CUpointer_attribute attr, CUdeviceptr p);
CUresult fake_PointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p);

/* fake_device.c: init, devices, contexts, flush. */
CUresult fake_Init(unsigned int flags);
CUresult fake_DriverGetVersion(int *v);
CUresult fake_DeviceGetCount(int *n);
bool dev_ok(CUdevice d);
CUresult fake_DeviceGet(CUdevice *d, int ordinal);
CUresult fake_DeviceGetName(char *name, int len, CUdevice d);
CUresult fake_DeviceGetPCIBusId(char *buf, int len, CUdevice d);
CUresult fake_DeviceTotalMem(size_t *bytes, CUdevice d);
CUresult fake_DeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d);
CUresult fake_DevicePrimaryCtxRetain(CUcontext *out, CUdevice d);
CUresult fake_DevicePrimaryCtxRelease(CUdevice d);
CUresult fake_CtxSetCurrent(CUcontext h);
CUresult fake_DeviceGetUuid(CUuuid *uuid, CUdevice d);
CUresult fake_FlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
				       CUflushGPUDirectRDMAWritesScope scope);

/* fake_vmm.c: virtual memory management. */
CUresult fake_MemGetAllocationGranularity(size_t *gran, const CUmemAllocationProp *prop,
					  CUmemAllocationGranularity_flags option);
CUresult fake_MemCreate(CUmemGenericAllocationHandle *h, size_t size,
			const CUmemAllocationProp *prop, unsigned long long flags);
CUresult fake_MemRelease(CUmemGenericAllocationHandle h);
CUresult fake_MemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
				unsigned long long flags);
CUresult fake_MemAddressFree(CUdeviceptr ptr, size_t size);
CUresult fake_MemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
		     unsigned long long flags);
CUresult fake_MemUnmap(CUdeviceptr ptr, size_t size);
CUresult fake_MemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);

/* fake_dmabuf.c: DMA-BUF export. */
CUresult fake_MemGetHandleForAddressRange(void *handle, CUdeviceptr d, size_t size,
					  CUmemRangeHandleType type, unsigned long long flags);

/* fake_stream.c: copies, streams, events. */
CUresult fake_MemcpyHtoD(CUdeviceptr dst, const void *src, size_t len);
CUresult fake_MemcpyDtoH(void *dst, CUdeviceptr src, size_t len);
CUresult fake_MemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t len, CUstream s);
CUresult fake_MemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t len, CUstream s);
CUresult fake_StreamCreate(CUstream *out, unsigned int flags);
CUresult fake_StreamDestroy(CUstream h);
CUresult fake_StreamSynchronize(CUstream h);
CUresult fake_EventCreate(CUevent *out, unsigned int flags);
CUresult fake_EventDestroy(CUevent h);
CUresult fake_EventRecord(CUevent h, CUstream hs);
CUresult fake_EventQuery(CUevent h);
CUresult fake_EventSynchronize(CUevent h);
/* A kernel's work (fake_kernel.c): dst <- src, in order on the stream (legacy: now). */
CUresult fake_stream_run(CUstream hs, void *dst, const void *src, size_t len);
CUresult fake_stream_valid(CUstream hs);

/* fake_kernel.c: modules and the launch of the bounce copy kernel. */
CUresult fake_ModuleLoadData(CUmodule *out, const void *image);
CUresult fake_ModuleUnload(CUmodule h);
CUresult fake_ModuleGetFunction(CUfunction *out, CUmodule h, const char *name);
CUresult fake_LaunchKernel(CUfunction h, unsigned int gx, unsigned int gy, unsigned int gz,
			   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			   CUstream hs, void **params, void **extra);
CUresult fake_MemHostGetDevicePointer(CUdeviceptr *out, void *p, unsigned int flags);

#endif
