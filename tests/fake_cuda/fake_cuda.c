/*
 * A fake CUDA driver (libcuda.so.1) for tests: load it with
 * GDRPERF_LIBCUDA=$(top_builddir)/tests/fake_cuda/libcuda.so.1.
 *
 * It exports only what a loader may dlsym, "cuGetProcAddress" (the v1 ABI;
 * built with -DFAKE_CUDA_GETPROC_V2_ONLY it exports "cuGetProcAddress_v2"
 * instead, like a driver that dropped v1), and hands out every other entry
 * point through it. Entry points exist only from the CUDA version that
 * introduced the _v2 ABI gdrperf uses (cuMemAlloc from 3020, ...): asking
 * for an older ABI returns CUDA_ERROR_NOT_FOUND, so a loader asking for the
 * wrong variant fails in tests instead of corrupting 64-bit pointers on a
 * real GPU.
 *
 * "Device memory" is host memory: a device pointer is the host address of
 * its backing, so the NIC can register it with plain ibv_reg_mr (what
 * nvidia_peermem makes possible on real hardware) and tests can compare bytes.
 * Every allocation is backed by its own memfd mapped MAP_SHARED, so that a
 * DMA-BUF export hands out the very pages of the range (see below).
 *
 * The rules of NVIDIA's driver API reference that gdrperf depends on, enforced:
 *  - cuMemAlloc: pointers are only 256-byte aligned for small requests, as the
 *    real driver sub-allocates them from larger pages: requests under 2 MiB
 *    get a pointer an odd multiple of 512 bytes into a 2 MiB-aligned backing
 *    (never host-page aligned, never 64 KiB aligned); from 2 MiB up the
 *    pointer is 2 MiB aligned. GDRPERF_FAKE_CUDA_ALLOC_OFFSET overrides.
 *  - cuMemGetHandleForAddressRange: "dptr and size aligned to the host page
 *    size", the range inside one allocation made by cuMemAlloc, or reserved by
 *    cuMemAddressReserve and fully mapped by cuMemMap; flags 0 or
 *    CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (a driver >= 12.8 only; on a
 *    platform without it NOT_SUPPORTED). The fd is a new open file description
 *    of the allocation's memfd whose file position (lseek SEEK_CUR) is where
 *    the exported range starts: tests/fake_verbs maps it from there.
 *    Limitation of the fake: a range over two cuMemMap mappings is refused.
 *  - VMM: cuMemGetAllocationGranularity answers 2 MiB (minimum and
 *    recommended); cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess
 *    refuse sizes, addresses and offsets off that granularity, non-zero flags,
 *    mapping a mapped range; memory is accessible only after cuMemSetAccess;
 *    allocFlags.gpuDirectRDMACapable = 1 needs
 *    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED.
 *  - cuFlushGPUDirectRDMAWrites needs a current context, target CURRENT_CTX,
 *    scope TO_OWNER or TO_ALL_DEVICES; the calls are counted (see below).
 * Async copies really run, in order, on one worker thread per stream, and
 * events complete only when the worker reaches them, so a pipeline that reads
 * a buffer before its copy finished sees stale bytes here too. Copies to or
 * from host memory that did not come from cuMemHostAlloc are synchronous, as
 * the real driver makes them. Every call but cuDriverGetVersion,
 * cuGetErrorName/String needs cuInit; memory, stream and event calls need a
 * current context (CUDA_ERROR_INVALID_CONTEXT otherwise, as on a GPU).
 *
 * Configuration, read from the environment at every cuInit (so one test
 * process can change it between loads):
 *   GDRPERF_FAKE_CUDA_DEVICES=N        number of GPUs (default 1; 0: cuInit
 *                                      returns CUDA_ERROR_NO_DEVICE; max 16)
 *   GDRPERF_FAKE_CUDA_NAMES=a,b        device names (default "Fake GPU <i>")
 *   GDRPERF_FAKE_CUDA_BUS_IDS=x,y      PCI bus ids, [DDDD:]BB:DD.F (default
 *                                      0000:<0x10+i>:00.0); reported upper
 *                                      case like the real cuDeviceGetPCIBusId
 *   GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED=1[,0..]    per device, the last value
 *                                      repeats (default 1)
 *   GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED=1[,0..]  likewise (default 1)
 *   GDRPERF_FAKE_CUDA_DMABUF=memfd|ERR cuMemGetHandleForAddressRange: a memfd
 *                                      of the range's size (default), or the
 *                                      CUresult ERR (name or number)
 *   GDRPERF_FAKE_CUDA_MEM_LIMIT=BYTES  cuMemAlloc fails with OUT_OF_MEMORY once
 *                                      this much is allocated (K/M/G suffixes;
 *                                      also the reported total memory;
 *                                      default 80G, not enforced)
 *   GDRPERF_FAKE_CUDA_DRIVER_VERSION=N cuDriverGetVersion (default 12040)
 *   GDRPERF_FAKE_CUDA_COPY_DELAY_US=N  every copy takes at least N us more
 *   GDRPERF_FAKE_CUDA_COPY_GBPS=X      every copy runs at most at X Gb/s
 *                                      (10^9 bit/s), so pipelining shows
 *   GDRPERF_FAKE_CUDA_ALLOC_OFFSET=N   device pointers start N bytes (mod
 *                                      64 KiB) past a GPU page, as small
 *                                      cuMemAlloc sub-allocations do
 *   GDRPERF_FAKE_CUDA_FAIL=fn=ERR,...  make entry point fn (e.g. cuMemHostAlloc,
 *                                      cuPointerSetAttribute, cuInit) return ERR
 *   GDRPERF_FAKE_CUDA_VMM_GDR=1[,0..]  GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED
 *                                      per device (default 1)
 *   GDRPERF_FAKE_CUDA_DMABUF_PCIE=0|1  the platform can map a DMA-BUF through
 *                                      PCIe BAR1 (default 0)
 *   GDRPERF_FAKE_CUDA_WRITES_ORDERING=N GPU_DIRECT_RDMA_WRITES_ORDERING (default
 *                                      0: NONE, so a flush is needed)
 *   GDRPERF_FAKE_CUDA_FLUSH_OPTIONS=N  GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS
 *                                      (default 1: cuFlushGPUDirectRDMAWrites)
 *   GDRPERF_FAKE_CUDA_NO_ATTR=a,b      cuDeviceGetAttribute refuses these
 *                                      attribute numbers (an older driver)
 *   GDRPERF_FAKE_CUDA_UUIDS=u,v        device UUIDs (32 hex digits, dashes
 *                                      allowed; default derived from the
 *                                      ordinal)
 *   CUDA_VISIBLE_DEVICES               honoured as the driver does (indices or
 *                                      UUIDs, in order, up to the first bad one)
 *
 * For tests, the library also exports gdrperf_fake_cuda_flushes() (number of
 * cuFlushGPUDirectRDMAWrites calls so far).
 *
 * Process-wide state is what a driver is; it lives in one struct below.
 */
#define _GNU_SOURCE
#include <cuda.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define FAKE_MAX_DEV	  16
#define FAKE_GPU_PAGE	  (64u * 1024)
#define FAKE_BIG_PAGE	  (2u * 1024 * 1024) /* large-page placement and VMM granularity */
#define FAKE_SUB_ALIGN	  512u
#define FAKE_MAGIC_PHYS	  0x70687321u
#define FAKE_MAX_FAIL	  16
#define FAKE_MAGIC_CTX	  0x63747821u
#define FAKE_MAGIC_STREAM 0x73747221u
#define FAKE_MAGIC_EVENT  0x65767421u

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
	struct fake_phys *next;
};

/* A cuMemAddressReserve range. */
struct fake_reserve {
	uintptr_t base;
	size_t size;
	struct fake_reserve *next;
};

/* An address range the program may touch: a cuMemAlloc or one cuMemMap. */
struct fake_alloc {
	int memfd;		/* backing; owned unless phys */
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
	int writes_ordering, flush_options;
	int no_attr[16];
	int nno_attr;
	int driver_version;
	struct fake_fail fail[FAKE_MAX_FAIL];
	int nfail;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t done; /* stream progress */
	bool inited;
	struct fake_cfg cfg;
	struct fake_ctx ctx[FAKE_MAX_DEV];
	struct fake_alloc *allocs;
	struct fake_phys *phys;
	struct fake_reserve *reserves;
	unsigned long long flushes;
	unsigned long long allocated;
	unsigned long long next_id;
	struct fake_pinned *pinned;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER };

static _Thread_local struct fake_ctx *tls_ctx;

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

/* ---- configuration ---- */

static CUresult parse_cuerr(const char *s)
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

static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (toupper((unsigned char)*end)) {
	/* NOLINTNEXTLINE(bugprone-branch-clone): the cases fall through, G > M > K */
	case 'G':
		v <<= 10;
		/* fall through */
	case 'M':
		v <<= 10;
		/* fall through */
	case 'K':
		v <<= 10;
		break;
	default:
		break;
	}
	return v;
}

/* The i-th comma-separated field of s into out; the last field repeats. */
static bool field(const char *s, int i, char *out, size_t len)
{
	const char *p = s, *comma;
	size_t n;

	if (!s || !*s)
		return false;
	for (; i > 0; i--) {
		comma = strchr(p, ',');
		if (!comma)
			break;
		p = comma + 1;
	}
	comma = strchr(p, ',');
	n = comma ? (size_t)(comma - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

/* Like field() but with no repetition: false past the end. */
static bool field_exact(const char *s, int i, char *out, size_t len)
{
	int commas = 0;

	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++)
		commas += *p == ',';
	return i <= commas && field(s, i, out, len);
}

/* Does the CUDA_VISIBLE_DEVICES entry tok (GPU-... or MIG-..., a prefix allowed) name uuid? */
static bool uuid_entry_matches(const char *tok, const unsigned char uuid[16])
{
	char hex[33];
	size_t n = 0;

	for (int b = 0; b < 16; b++)
		snprintf(hex + 2 * b, 3, "%02x", uuid[b]);
	for (tok += 4; *tok; tok++) {
		if (*tok == '-')
			continue;
		if (n >= 32 || tolower((unsigned char)*tok) != hex[n])
			return false;
		n++;
	}
	return n > 0;
}

/*
 * CUDA_VISIBLE_DEVICES as the CUDA Programming Guide describes it: indices
 * or UUIDs (GPU-..., MIG-..., prefixes allowed), in that order; devices after
 * the first entry that names none are not visible.
 */
static void visible_devices(struct fake_cfg *c)
{
	const char *e = getenv("CUDA_VISIBLE_DEVICES");
	struct fake_cfg all;
	char tok[64];
	int n = 0;

	if (!e)
		return;
	all = *c;
	for (int i = 0; n < FAKE_MAX_DEV && field_exact(e, i, tok, sizeof(tok)); i++) {
		int d = -1;

		if (!strncasecmp(tok, "GPU-", 4) || !strncasecmp(tok, "MIG-", 4)) {
			for (int k = 0; k < all.ndev && d < 0; k++)
				if (uuid_entry_matches(tok, all.uuid[k]))
					d = k;
		} else if (isdigit((unsigned char)tok[0])) {
			d = atoi(tok);
		}
		if (d < 0 || d >= all.ndev)
			break;
		memcpy(c->name[n], all.name[d], sizeof(c->name[n]));
		c->dom[n] = all.dom[d];
		c->bus[n] = all.bus[d];
		c->devfn[n] = all.devfn[d];
		c->dmabuf[n] = all.dmabuf[d];
		c->gdr[n] = all.gdr[d];
		c->vmm_gdr[n] = all.vmm_gdr[d];
		memcpy(c->uuid[n], all.uuid[d], sizeof(c->uuid[n]));
		n++;
	}
	c->ndev = n;
}

static void load_cfg(struct fake_cfg *c)
{
	const char *e;
	char f[128];

	memset(c, 0, sizeof(*c));
	e = getenv("GDRPERF_FAKE_CUDA_DEVICES");
	c->ndev = e ? atoi(e) : 1;
	if (c->ndev < 0)
		c->ndev = 0;
	if (c->ndev > FAKE_MAX_DEV)
		c->ndev = FAKE_MAX_DEV;
	for (int i = 0; i < c->ndev; i++) {
		unsigned int a, b, d, fn;
		int n = 0;

		if (!field_exact(getenv("GDRPERF_FAKE_CUDA_NAMES"), i, c->name[i],
				 sizeof(c->name[i])))
			snprintf(c->name[i], sizeof(c->name[i]), "Fake GPU %d", i);
		c->dom[i] = 0;
		c->bus[i] = 0x10 + i;
		c->devfn[i] = 0;
		if (field_exact(getenv("GDRPERF_FAKE_CUDA_BUS_IDS"), i, f, sizeof(f))) {
			if (sscanf(f, "%x:%x:%x.%x%n", &a, &b, &d, &fn, &n) == 4 && !f[n]) {
				c->dom[i] = a;
				c->bus[i] = b;
				c->devfn[i] = d << 3 | fn;
			} else if (n = 0, sscanf(f, "%x:%x.%x%n", &b, &d, &fn, &n) == 3 && !f[n]) {
				c->bus[i] = b;
				c->devfn[i] = d << 3 | fn;
			} else {
				fprintf(stderr, "fake libcuda: bad bus id '%s'\n", f);
			}
		}
		c->dmabuf[i] = field(getenv("GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED"), i, f, sizeof(f))
				   ? atoi(f)
				   : 1;
		c->gdr[i] =
		    field(getenv("GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED"), i, f, sizeof(f))
			? atoi(f)
			: 1;
	}
	e = getenv("GDRPERF_FAKE_CUDA_DMABUF");
	c->dmabuf_rc = e && *e && strcmp(e, "memfd") ? parse_cuerr(e) : CUDA_SUCCESS;
	e = getenv("GDRPERF_FAKE_CUDA_MEM_LIMIT");
	c->mem_enforced = e && *e;
	c->mem_limit = c->mem_enforced ? parse_size(e) : 80ull << 30;
	e = getenv("GDRPERF_FAKE_CUDA_COPY_DELAY_US");
	c->delay_ns = e ? strtoull(e, NULL, 0) * 1000 : 0;
	e = getenv("GDRPERF_FAKE_CUDA_COPY_GBPS");
	c->gbps = e ? strtod(e, NULL) : 0;
	e = getenv("GDRPERF_FAKE_CUDA_ALLOC_OFFSET");
	c->alloc_offset_set = e && *e;
	c->alloc_offset = c->alloc_offset_set ? (size_t)parse_size(e) % FAKE_BIG_PAGE : 0;
	for (int i = 0; i < c->ndev; i++) {
		c->vmm_gdr[i] =
		    field(getenv("GDRPERF_FAKE_CUDA_VMM_GDR"), i, f, sizeof(f)) ? atoi(f) : 1;
		/* A fixed, recognisable UUID per ordinal unless told. */
		for (int b = 0; b < 16; b++)
			c->uuid[i][b] = (unsigned char)(b == 15 ? i : 0x10 * (b % 16) + b);
		if (field_exact(getenv("GDRPERF_FAKE_CUDA_UUIDS"), i, f, sizeof(f))) {
			int nb = 0;

			for (const char *q = f; *q && nb < 32; q++) {
				if (*q == '-')
					continue;
				if (!isxdigit((unsigned char)*q))
					break;
				int v = isdigit((unsigned char)*q)
					    ? *q - '0'
					    : tolower((unsigned char)*q) - 'a' + 10;
				c->uuid[i][nb / 2] =
				    (unsigned char)(nb % 2 ? (c->uuid[i][nb / 2] & 0xf0) | v
							   : v << 4);
				nb++;
			}
			if (nb != 32)
				fprintf(stderr, "fake libcuda: bad UUID '%s'\n", f);
		}
	}
	visible_devices(c);
	e = getenv("GDRPERF_FAKE_CUDA_DMABUF_PCIE");
	c->dmabuf_pcie = e && atoi(e) != 0;
	e = getenv("GDRPERF_FAKE_CUDA_WRITES_ORDERING");
	c->writes_ordering = e && *e ? atoi(e) : CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE;
	e = getenv("GDRPERF_FAKE_CUDA_FLUSH_OPTIONS");
	c->flush_options = e && *e ? atoi(e) : CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST;
	e = getenv("GDRPERF_FAKE_CUDA_NO_ATTR");
	for (int i = 0; e && c->nno_attr < 16 && field_exact(e, i, f, sizeof(f)); i++)
		c->no_attr[c->nno_attr++] = atoi(f);
	e = getenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION");
	c->driver_version = e && *e ? atoi(e) : 12040;
	e = getenv("GDRPERF_FAKE_CUDA_FAIL");
	for (int i = 0; e && c->nfail < FAKE_MAX_FAIL && field_exact(e, i, f, sizeof(f)); i++) {
		char *eq = strchr(f, '=');

		if (!eq)
			continue;
		*eq = '\0';
		snprintf(c->fail[c->nfail].fn, sizeof(c->fail[0].fn), "%s", f);
		c->fail[c->nfail].rc = parse_cuerr(eq + 1);
		c->nfail++;
	}
}

/* Injected failure for entry point fn, or CUDA_SUCCESS. Caller holds no lock. */
static CUresult injected(const char *fn)
{
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&g.lock);
	for (int i = 0; i < g.cfg.nfail; i++)
		if (!strcmp(g.cfg.fail[i].fn, fn))
			rc = g.cfg.fail[i].rc;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

/* Common entry checks: initialised, not made to fail, and (if need_ctx) a current context. */
static CUresult enter(const char *fn, bool need_ctx)
{
	CUresult rc;

	pthread_mutex_lock(&g.lock);
	rc = g.inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_unlock(&g.lock);
	if (rc == CUDA_SUCCESS)
		rc = injected(fn);
	if (rc == CUDA_SUCCESS && need_ctx && !tls_ctx)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	return rc;
}

/* ---- copies ---- */

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void do_copy(void *dst, const void *src, size_t len)
{
	unsigned long long t0 = now_ns(), until = t0, delay, gbps_ns = 0;
	double gbps;

	pthread_mutex_lock(&g.lock);
	delay = g.cfg.delay_ns;
	gbps = g.cfg.gbps;
	pthread_mutex_unlock(&g.lock);
	memcpy(dst, src, len);
	if (gbps > 0)
		gbps_ns = (unsigned long long)((double)len * 8.0 / gbps);
	until += delay + gbps_ns;
	for (unsigned long long t = now_ns(); t < until; t = now_ns()) {
		struct timespec ts = { .tv_sec = (time_t)((until - t) / 1000000000ull),
				       .tv_nsec = (long)((until - t) % 1000000000ull) };
		nanosleep(&ts, NULL);
	}
}

/* The range holding [p, p+len) of usable (asked-for) bytes, mapped or not. Caller holds g.lock. */
static struct fake_alloc *find_range(uintptr_t p, size_t len)
{
	for (struct fake_alloc *a = g.allocs; a; a = a->next)
		if (p >= a->ptr && len <= a->size && p - a->ptr <= a->size - len)
			return a;
	return NULL;
}

/* Like find_range, but only memory the device may access now. Caller holds g.lock. */
static struct fake_alloc *find_alloc(uintptr_t p, size_t len)
{
	struct fake_alloc *a = find_range(p, len);

	return a && a->accessible ? a : NULL;
}

static size_t host_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static bool is_pinned(const void *p, size_t len)
{
	uintptr_t u = (uintptr_t)p;
	bool found = false;

	pthread_mutex_lock(&g.lock);
	for (struct fake_pinned *h = g.pinned; h && !found; h = h->next) {
		uintptr_t b = (uintptr_t)h->ptr;
		found = u >= b && len <= h->size && u - b <= h->size - len;
	}
	pthread_mutex_unlock(&g.lock);
	return found;
}

static bool device_range_ok(CUdeviceptr d, size_t len)
{
	bool ok;

	pthread_mutex_lock(&g.lock);
	ok = find_alloc((uintptr_t)d, len) != NULL;
	pthread_mutex_unlock(&g.lock);
	return ok;
}

/* ---- streams ---- */

static void *stream_worker(void *arg)
{
	struct fake_stream *s = arg;

	pthread_mutex_lock(&g.lock);
	for (;;) {
		struct fake_op *op;

		while (!s->head && !s->stop)
			pthread_cond_wait(&s->work, &g.lock);
		if (!s->head)
			break;
		op = s->head;
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		s->busy = true;
		if (op->kind == OP_COPY) {
			pthread_mutex_unlock(&g.lock);
			do_copy(op->dst, op->src, op->len);
			pthread_mutex_lock(&g.lock);
		} else if (op->ev->done < op->seq) {
			op->ev->done = op->seq;
		}
		s->busy = false;
		free(op);
		pthread_cond_broadcast(&g.done);
	}
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

static CUresult stream_check(CUstream h, struct fake_stream **out)
{
	struct fake_stream *s = (struct fake_stream *)h;

	*out = s;
	if (s && s->magic != FAKE_MAGIC_STREAM)
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

/* Caller holds g.lock. */
static void stream_wait_idle(struct fake_stream *s)
{
	while (s->head || s->busy)
		pthread_cond_wait(&g.done, &g.lock);
}

static CUresult enqueue(struct fake_stream *s, struct fake_op *op)
{
	pthread_mutex_lock(&g.lock);
	op->next = NULL;
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

static CUresult copy_async(void *dst, const void *src, size_t len, const void *host, CUstream hs)
{
	struct fake_stream *s;
	struct fake_op *op;
	CUresult rc = stream_check(hs, &s);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (len == 0)
		return CUDA_SUCCESS;
	/* Pageable host memory and the legacy stream make the copy synchronous, as on a GPU. */
	if (!s || !is_pinned(host, len)) {
		if (s) {
			pthread_mutex_lock(&g.lock);
			stream_wait_idle(s);
			pthread_mutex_unlock(&g.lock);
		}
		do_copy(dst, src, len);
		return CUDA_SUCCESS;
	}
	op = calloc(1, sizeof(*op));
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->kind = OP_COPY;
	op->dst = dst;
	op->src = src;
	op->len = len;
	return enqueue(s, op);
}

/* ---- entry points ---- */

static CUresult fake_GetErrorName(CUresult rc, const char **s)
{
	for (size_t i = 0; i < sizeof(fake_errors) / sizeof(fake_errors[0]); i++)
		if (fake_errors[i].rc == rc) {
			*s = fake_errors[i].name;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_GetErrorString(CUresult rc, const char **s)
{
	for (size_t i = 0; i < sizeof(fake_errors) / sizeof(fake_errors[0]); i++)
		if (fake_errors[i].rc == rc) {
			*s = fake_errors[i].str;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_Init(unsigned int flags)
{
	struct fake_cfg cfg;
	CUresult rc;

	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	load_cfg(&cfg);
	pthread_mutex_lock(&g.lock);
	g.cfg = cfg;
	g.inited = false;
	pthread_mutex_unlock(&g.lock);
	rc = injected("cuInit");
	if (rc == CUDA_SUCCESS && cfg.ndev == 0)
		rc = CUDA_ERROR_NO_DEVICE;
	pthread_mutex_lock(&g.lock);
	g.inited = rc == CUDA_SUCCESS;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

static CUresult fake_DriverGetVersion(int *v)
{
	const char *e = getenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION");

	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = e && *e ? atoi(e) : 12040;
	return CUDA_SUCCESS;
}

static CUresult fake_DeviceGetCount(int *n)
{
	CUresult rc = enter("cuDeviceGetCount", false);

	if (rc != CUDA_SUCCESS)
		return rc;
	*n = g.cfg.ndev;
	return CUDA_SUCCESS;
}

static bool dev_ok(CUdevice d)
{
	return d >= 0 && d < g.cfg.ndev;
}

/* enter() for the calls on one device: a bad ordinal or CUdevice is CUDA_ERROR_INVALID_DEVICE. */
static CUresult enter_dev(const char *fn, CUdevice d)
{
	CUresult rc = enter(fn, false);

	if (rc == CUDA_SUCCESS && !dev_ok(d))
		rc = CUDA_ERROR_INVALID_DEVICE;
	return rc;
}

static CUresult fake_DeviceGet(CUdevice *d, int ordinal)
{
	CUresult rc = enter_dev("cuDeviceGet", ordinal);

	if (rc != CUDA_SUCCESS)
		return rc;
	*d = ordinal;
	return CUDA_SUCCESS;
}

static CUresult fake_DeviceGetName(char *name, int len, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetName", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", g.cfg.name[d]);
	return CUDA_SUCCESS;
}

static CUresult fake_DeviceGetPCIBusId(char *buf, int len, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetPCIBusId", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!buf || len < 13)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(buf, (size_t)len, "%04X:%02X:%02X.%X", g.cfg.dom[d], g.cfg.bus[d],
		 g.cfg.devfn[d] >> 3, g.cfg.devfn[d] & 7);
	return CUDA_SUCCESS;
}

static CUresult fake_DeviceTotalMem(size_t *bytes, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceTotalMem", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	*bytes = (size_t)g.cfg.mem_limit;
	return CUDA_SUCCESS;
}

static CUresult fake_DeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetAttribute", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!v || attr <= 0 || attr >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < g.cfg.nno_attr; i++)
		if (g.cfg.no_attr[i] == (int)attr)
			return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		*v = (int)g.cfg.dom[d];
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		*v = (int)g.cfg.bus[d];
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		*v = (int)(g.cfg.devfn[d] >> 3);
		break;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		*v = g.cfg.dmabuf[d];
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
		*v = g.cfg.gdr[d];
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
		*v = g.cfg.vmm_gdr[d];
		break;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
		*v = 1;
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
		*v = g.cfg.flush_options;
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
		*v = g.cfg.writes_ordering;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*v = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
		*v = 1;
		break;
	default:
		*v = 0;
		break;
	}
	return CUDA_SUCCESS;
}

static CUresult fake_DevicePrimaryCtxRetain(CUcontext *out, CUdevice d)
{
	CUresult rc = enter_dev("cuDevicePrimaryCtxRetain", d);
	struct fake_ctx *c;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	c = &g.ctx[d];
	c->magic = FAKE_MAGIC_CTX;
	c->dev = d;
	c->refs++;
	pthread_mutex_unlock(&g.lock);
	*out = (CUcontext)c;
	return CUDA_SUCCESS;
}

static CUresult fake_DevicePrimaryCtxRelease(CUdevice d)
{
	CUresult rc = enter_dev("cuDevicePrimaryCtxRelease", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	rc = g.ctx[d].refs > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		g.ctx[d].refs--;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

static CUresult fake_CtxSetCurrent(CUcontext h)
{
	struct fake_ctx *c = (struct fake_ctx *)h;
	CUresult rc = enter("cuCtxSetCurrent", false);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (c && (c->magic != FAKE_MAGIC_CTX || c->refs <= 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	tls_ctx = c;
	return CUDA_SUCCESS;
}

/*
 * A memfd of len bytes mapped MAP_SHARED at an address aligned to align:
 * 0 or -1. Reserve more, then map the file over the aligned part.
 */
static int map_memfd(size_t len, size_t align, int *fd_out, void **map_out)
{
	size_t resv = len + align;
	uint8_t *r, *aligned;
	int fd;

	fd = memfd_create("fake-cuda-device-memory", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len))
		goto out_close;
	r = mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		goto out_close;
	aligned = (uint8_t *)(((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1));
	if (mmap(aligned, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		munmap(r, resv);
		goto out_close;
	}
	if (aligned > r)
		munmap(r, (size_t)(aligned - r));
	if (r + resv > aligned + len)
		munmap(aligned + len, (size_t)(r + resv - (aligned + len)));
	*fd_out = fd;
	*map_out = aligned;
	return 0;

out_close:
	close(fd);
	return -1;
}

static CUresult fake_MemAlloc(CUdeviceptr *dptr, size_t size)
{
	CUresult rc = enter("cuMemAlloc", true);
	size_t page = host_page(), sub, map_len;
	struct fake_alloc *a;
	void *map;
	int fd;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!dptr || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g.lock);
	a->id = ++g.next_id;
	/* Small requests share pages with their neighbours on a GPU: never page aligned here. */
	if (g.cfg.alloc_offset_set)
		sub = g.cfg.alloc_offset;
	else
		sub = size < FAKE_BIG_PAGE ? FAKE_SUB_ALIGN * (2 * (a->id % 8) + 1) : 0;
	if (size > SIZE_MAX - sub - FAKE_BIG_PAGE - page ||
	    (g.cfg.mem_enforced && g.allocated + size > g.cfg.mem_limit)) {
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	g.allocated += size;
	pthread_mutex_unlock(&g.lock);
	map_len = (sub + size + page - 1) / page * page;
	if (map_memfd(map_len, FAKE_BIG_PAGE, &fd, &map)) {
		pthread_mutex_lock(&g.lock);
		g.allocated -= size;
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* Uninitialised device memory is not zero: make a missing copy visible. */
	memset(map, 0xa5, map_len);
	a->memfd = fd;
	a->map = map;
	a->map_len = map_len;
	a->ptr = (uintptr_t)map + sub;
	a->file_off = (off_t)sub;
	a->size = size;
	a->accessible = true;
	pthread_mutex_lock(&g.lock);
	a->dev = tls_ctx->dev;
	a->next = g.allocs;
	g.allocs = a;
	pthread_mutex_unlock(&g.lock);
	*dptr = (CUdeviceptr)a->ptr;
	return CUDA_SUCCESS;
}

static CUresult fake_MemFree(CUdeviceptr d)
{
	CUresult rc = enter("cuMemFree", true);
	struct fake_alloc **pp, *a = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	/* Only what cuMemAlloc returned: a VMM range is cuMemUnmap'ed instead. */
	for (pp = &g.allocs; *pp; pp = &(*pp)->next)
		if ((*pp)->ptr == (uintptr_t)d && !(*pp)->phys) {
			a = *pp;
			*pp = a->next;
			g.allocated -= a->size;
			break;
		}
	pthread_mutex_unlock(&g.lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	munmap(a->map, a->map_len);
	close(a->memfd);
	free(a);
	return CUDA_SUCCESS;
}

/* ---- virtual memory management ---- */

static bool prop_ok(const CUmemAllocationProp *prop)
{
	return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && dev_ok(prop->location.id);
}

static CUresult fake_MemGetAllocationGranularity(size_t *gran, const CUmemAllocationProp *prop,
						 CUmemAllocationGranularity_flags option)
{
	CUresult rc = enter("cuMemGetAllocationGranularity", false);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!gran || !prop_ok(prop) ||
	    (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	*gran = FAKE_BIG_PAGE;
	return CUDA_SUCCESS;
}

static CUresult fake_MemCreate(CUmemGenericAllocationHandle *h, size_t size,
			       const CUmemAllocationProp *prop, unsigned long long flags)
{
	CUresult rc = enter("cuMemCreate", false);
	struct fake_phys *ph;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!h || !prop_ok(prop) || flags || size == 0 || size % FAKE_BIG_PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->allocFlags.gpuDirectRDMACapable && !g.cfg.vmm_gdr[prop->location.id])
		return CUDA_ERROR_NOT_SUPPORTED;
	ph = calloc(1, sizeof(*ph));
	if (!ph)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ph->memfd = memfd_create("fake-cuda-vmm", MFD_CLOEXEC);
	if (ph->memfd < 0 || ftruncate(ph->memfd, (off_t)size)) {
		if (ph->memfd >= 0)
			close(ph->memfd);
		free(ph);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ph->magic = FAKE_MAGIC_PHYS;
	ph->size = size;
	ph->dev = prop->location.id;
	pthread_mutex_lock(&g.lock);
	ph->next = g.phys;
	g.phys = ph;
	pthread_mutex_unlock(&g.lock);
	*h = (CUmemGenericAllocationHandle)(uintptr_t)ph;
	return CUDA_SUCCESS;
}

/* Caller holds g.lock. */
static struct fake_phys *phys_find(CUmemGenericAllocationHandle h)
{
	for (struct fake_phys *ph = g.phys; ph; ph = ph->next)
		if ((CUmemGenericAllocationHandle)(uintptr_t)ph == h && !ph->released)
			return ph;
	return NULL;
}

/* Caller holds g.lock: free ph once released and unmapped, as the driver does. */
static void phys_put(struct fake_phys *ph)
{
	if (!ph->released || ph->maps)
		return;
	for (struct fake_phys **pp = &g.phys; *pp; pp = &(*pp)->next)
		if (*pp == ph) {
			*pp = ph->next;
			break;
		}
	close(ph->memfd);
	ph->magic = 0;
	free(ph);
}

static CUresult fake_MemRelease(CUmemGenericAllocationHandle h)
{
	CUresult rc = enter("cuMemRelease", false);
	struct fake_phys *ph;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	ph = phys_find(h);
	if (ph) {
		ph->released = true;
		phys_put(ph);
	}
	pthread_mutex_unlock(&g.lock);
	return ph ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_MemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align,
				       CUdeviceptr addr, unsigned long long flags)
{
	CUresult rc = enter("cuMemAddressReserve", false);
	size_t page = host_page();
	struct fake_reserve *r;
	uint8_t *m, *base;

	(void)addr; /* a hint only */
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!ptr || flags || size == 0 || size % page || addr % page || (align & (align - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (align < FAKE_BIG_PAGE)
		align = FAKE_BIG_PAGE;
	r = calloc(1, sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	base = (uint8_t *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
	if (base > m)
		munmap(m, (size_t)(base - m));
	if (m + size + align > base + size)
		munmap(base + size, (size_t)(m + size + align - (base + size)));
	r->base = (uintptr_t)base;
	r->size = size;
	pthread_mutex_lock(&g.lock);
	r->next = g.reserves;
	g.reserves = r;
	pthread_mutex_unlock(&g.lock);
	*ptr = (CUdeviceptr)r->base;
	return CUDA_SUCCESS;
}

static CUresult fake_MemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult rc = enter("cuMemAddressFree", false);
	struct fake_reserve **pp, *r = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	for (pp = &g.reserves; *pp; pp = &(*pp)->next)
		if ((*pp)->base == ptr && (*pp)->size == size) {
			r = *pp;
			break;
		}
	/* Every mapping inside must be unmapped first. */
	for (struct fake_alloc *a = g.allocs; r && a; a = a->next)
		if (a->phys && a->ptr >= r->base && a->ptr - r->base < r->size)
			r = NULL;
	if (r)
		*pp = r->next;
	pthread_mutex_unlock(&g.lock);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	munmap((void *)r->base, r->size);
	free(r);
	return CUDA_SUCCESS;
}

/* Caller holds g.lock: is [p, p+len) inside one reservation? */
static bool reserved(uintptr_t p, size_t len)
{
	for (struct fake_reserve *r = g.reserves; r; r = r->next)
		if (p >= r->base && len <= r->size && p - r->base <= r->size - len)
			return true;
	return false;
}

/* Caller holds g.lock: does any mapping overlap [p, p+len)? */
static bool mapped_any(uintptr_t p, size_t len)
{
	for (struct fake_alloc *a = g.allocs; a; a = a->next)
		if (a->phys && p < a->ptr + a->size && a->ptr < p + len)
			return true;
	return false;
}

static CUresult fake_MemMap(CUdeviceptr ptr, size_t size, size_t offset,
			    CUmemGenericAllocationHandle h, unsigned long long flags)
{
	CUresult rc = enter("cuMemMap", false);
	struct fake_phys *ph;
	struct fake_alloc *a;

	if (rc != CUDA_SUCCESS)
		return rc;
	/* "offset: currently must be zero"; all three multiples of the granularity. */
	if (flags || offset || size == 0 || ptr % FAKE_BIG_PAGE || size % FAKE_BIG_PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g.lock);
	ph = phys_find(h);
	if (!ph || size > ph->size || !reserved(ptr, size) || mapped_any(ptr, size)) {
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* Not accessible until cuMemSetAccess: PROT_NONE so a stray access faults. */
	if (mmap((void *)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->memfd, 0) ==
	    MAP_FAILED) {
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ph->maps++;
	a->memfd = ph->memfd;
	a->phys = ph;
	a->ptr = ptr;
	a->size = size;
	a->dev = ph->dev;
	a->id = ++g.next_id;
	a->next = g.allocs;
	g.allocs = a;
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

static CUresult fake_MemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult rc = enter("cuMemUnmap", false);
	struct fake_alloc **pp, *a = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (ptr % FAKE_BIG_PAGE || size % FAKE_BIG_PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	for (pp = &g.allocs; *pp; pp = &(*pp)->next)
		if ((*pp)->phys && (*pp)->ptr == ptr && (*pp)->size == size) {
			a = *pp;
			*pp = a->next;
			break;
		}
	if (a) {
		/* The range stays reserved: back to an inaccessible hole (or at least unmapped). */
		if (mmap((void *)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED)
			munmap((void *)ptr, size);
		a->phys->maps--;
		phys_put(a->phys);
	}
	pthread_mutex_unlock(&g.lock);
	free(a);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_MemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
				  size_t count)
{
	CUresult rc = enter("cuMemSetAccess", false);
	struct fake_alloc *a;
	int prot;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!desc || count != 1 || desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(desc->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	switch (desc->flags) {
	case CU_MEM_ACCESS_FLAGS_PROT_NONE:
		prot = PROT_NONE;
		break;
	case CU_MEM_ACCESS_FLAGS_PROT_READ:
		prot = PROT_READ;
		break;
	case CU_MEM_ACCESS_FLAGS_PROT_READWRITE:
		prot = PROT_READ | PROT_WRITE;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&g.lock);
	/* A mapped range: the fake knows one mapping per call (what gdrperf makes). */
	a = find_range(ptr, size);
	if (!a || !a->phys || a->ptr != ptr || ptr % FAKE_BIG_PAGE || size % FAKE_BIG_PAGE) {
		pthread_mutex_unlock(&g.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	mprotect((void *)ptr, size, prot);
	a->accessible = prot != PROT_NONE;
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

static CUresult fake_MemHostAlloc(void **pp, size_t size, unsigned int flags)
{
	CUresult rc = enter("cuMemHostAlloc", true);
	struct fake_pinned *h;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pp || size == 0 ||
	    (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				 CU_MEMHOSTALLOC_WRITECOMBINED)))
		return CUDA_ERROR_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->size = size;
	h->ptr = aligned_alloc(page, (size + page - 1) / page * page);
	if (!h->ptr) {
		free(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&g.lock);
	h->next = g.pinned;
	g.pinned = h;
	pthread_mutex_unlock(&g.lock);
	*pp = h->ptr;
	return CUDA_SUCCESS;
}

static CUresult fake_MemFreeHost(void *p)
{
	CUresult rc = enter("cuMemFreeHost", true);
	struct fake_pinned **pp, *h = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	for (pp = &g.pinned; *pp; pp = &(*pp)->next)
		if ((*pp)->ptr == p) {
			h = *pp;
			*pp = h->next;
			break;
		}
	pthread_mutex_unlock(&g.lock);
	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	free(h->ptr);
	free(h);
	return CUDA_SUCCESS;
}

static CUresult fake_MemcpyHtoD(CUdeviceptr dst, const void *src, size_t len)
{
	CUresult rc = enter("cuMemcpyHtoD", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (len && (!src || !device_range_ok(dst, len)))
		return CUDA_ERROR_INVALID_VALUE;
	if (len)
		do_copy((void *)(uintptr_t)dst, src, len);
	return CUDA_SUCCESS;
}

static CUresult fake_MemcpyDtoH(void *dst, CUdeviceptr src, size_t len)
{
	CUresult rc = enter("cuMemcpyDtoH", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (len && (!dst || !device_range_ok(src, len)))
		return CUDA_ERROR_INVALID_VALUE;
	if (len)
		do_copy(dst, (const void *)(uintptr_t)src, len);
	return CUDA_SUCCESS;
}

static CUresult fake_MemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t len, CUstream s)
{
	CUresult rc = enter("cuMemcpyHtoDAsync", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (len && (!src || !device_range_ok(dst, len)))
		return CUDA_ERROR_INVALID_VALUE;
	return copy_async((void *)(uintptr_t)dst, src, len, src, s);
}

static CUresult fake_MemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t len, CUstream s)
{
	CUresult rc = enter("cuMemcpyDtoHAsync", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (len && (!dst || !device_range_ok(src, len)))
		return CUDA_ERROR_INVALID_VALUE;
	return copy_async(dst, (const void *)(uintptr_t)src, len, dst, s);
}

static CUresult fake_StreamCreate(CUstream *out, unsigned int flags)
{
	CUresult rc = enter("cuStreamCreate", true);
	struct fake_stream *s;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!out || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->magic = FAKE_MAGIC_STREAM;
	pthread_cond_init(&s->work, NULL);
	if (pthread_create(&s->thread, NULL, stream_worker, s)) {
		pthread_cond_destroy(&s->work);
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = (CUstream)s;
	return CUDA_SUCCESS;
}

static CUresult fake_StreamDestroy(CUstream h)
{
	CUresult rc = enter("cuStreamDestroy", true);
	struct fake_stream *s;

	if (rc == CUDA_SUCCESS)
		rc = stream_check(h, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	/* Work already queued still runs, as on a GPU; the worker drains then exits. */
	pthread_mutex_lock(&g.lock);
	s->stop = true;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&g.lock);
	pthread_join(s->thread, NULL);
	s->magic = 0;
	pthread_cond_destroy(&s->work);
	free(s);
	return CUDA_SUCCESS;
}

static CUresult fake_StreamSynchronize(CUstream h)
{
	CUresult rc = enter("cuStreamSynchronize", true);
	struct fake_stream *s = NULL;

	if (rc == CUDA_SUCCESS)
		rc = stream_check(h, &s);
	if (rc != CUDA_SUCCESS || !s)
		return rc;
	pthread_mutex_lock(&g.lock);
	stream_wait_idle(s);
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

static CUresult event_check(CUevent h, struct fake_event **out)
{
	struct fake_event *e = (struct fake_event *)h;

	*out = e;
	return e && e->magic == FAKE_MAGIC_EVENT ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fake_EventCreate(CUevent *out, unsigned int flags)
{
	CUresult rc = enter("cuEventCreate", true);
	struct fake_event *e;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!out || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
					 CU_EVENT_INTERPROCESS)))
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = FAKE_MAGIC_EVENT;
	*out = (CUevent)e;
	return CUDA_SUCCESS;
}

static CUresult fake_EventDestroy(CUevent h)
{
	CUresult rc = enter("cuEventDestroy", true);
	struct fake_event *e;

	if (rc == CUDA_SUCCESS)
		rc = event_check(h, &e);
	if (rc != CUDA_SUCCESS)
		return rc;
	/* A worker may still hold a record of it: let it pass first. */
	pthread_mutex_lock(&g.lock);
	while (e->done < e->recorded)
		pthread_cond_wait(&g.done, &g.lock);
	e->magic = 0;
	pthread_mutex_unlock(&g.lock);
	free(e);
	return CUDA_SUCCESS;
}

static CUresult fake_EventRecord(CUevent h, CUstream hs)
{
	CUresult rc = enter("cuEventRecord", true);
	struct fake_stream *s;
	struct fake_event *e;
	struct fake_op *op;

	if (rc == CUDA_SUCCESS)
		rc = event_check(h, &e);
	if (rc == CUDA_SUCCESS)
		rc = stream_check(hs, &s);
	if (rc != CUDA_SUCCESS)
		return rc;
	op = calloc(1, sizeof(*op));
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g.lock);
	e->recorded++;
	if (!s) {
		/* The legacy stream runs everything synchronously here. */
		e->done = e->recorded;
		pthread_mutex_unlock(&g.lock);
		free(op);
		return CUDA_SUCCESS;
	}
	op->kind = OP_EVENT;
	op->ev = e;
	op->seq = e->recorded;
	pthread_mutex_unlock(&g.lock);
	return enqueue(s, op);
}

static CUresult fake_EventQuery(CUevent h)
{
	CUresult rc = enter("cuEventQuery", false);
	struct fake_event *e;

	if (rc == CUDA_SUCCESS)
		rc = event_check(h, &e);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	rc = e->done >= e->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

static CUresult fake_EventSynchronize(CUevent h)
{
	CUresult rc = enter("cuEventSynchronize", false);
	struct fake_event *e;

	if (rc == CUDA_SUCCESS)
		rc = event_check(h, &e);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	while (e->done < e->recorded)
		pthread_cond_wait(&g.done, &g.lock);
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

static CUresult fake_PointerSetAttribute(const void *value, CUpointer_attribute attr, CUdeviceptr p)
{
	CUresult rc = enter("cuPointerSetAttribute", true);
	struct fake_alloc *a;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!value || attr != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	a = find_alloc((uintptr_t)p, 1);
	if (a)
		a->sync_memops = *(const unsigned int *)value != 0;
	pthread_mutex_unlock(&g.lock);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_PointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
	CUresult rc = enter("cuPointerGetAttribute", false);
	struct fake_alloc *a;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	a = find_alloc((uintptr_t)p, 1);
	if (!a) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else {
		switch (attr) {
		case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
			/* A bool, as the driver documents it. */
			*(bool *)data = a->sync_memops;
			break;
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
			break;
		case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
			*(CUdeviceptr *)data = p;
			break;
		case CU_POINTER_ATTRIBUTE_BUFFER_ID:
			*(unsigned long long *)data = a->id;
			break;
		case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
			*(int *)data = a->dev;
			break;
		case CU_POINTER_ATTRIBUTE_CONTEXT:
			*(CUcontext *)data = (CUcontext)&g.ctx[a->dev];
			break;
		default:
			rc = CUDA_ERROR_INVALID_VALUE;
			break;
		}
	}
	pthread_mutex_unlock(&g.lock);
	return rc;
}

static CUresult fake_MemGetHandleForAddressRange(void *handle, CUdeviceptr d, size_t size,
						 CUmemRangeHandleType type,
						 unsigned long long flags)
{
	CUresult rc = enter("cuMemGetHandleForAddressRange", true);
	unsigned long long known = 0;
	size_t page = host_page();
	struct fake_alloc *a;
	bool supported, pcie;
	char path[64];
	off_t pos = 0;
	CUresult mode;
	int fd, src = -1;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	supported = g.cfg.dmabuf[tls_ctx->dev] != 0;
	pcie = g.cfg.dmabuf_pcie;
	mode = g.cfg.dmabuf_rc;
	/* The mapping-type flag exists from CUDA 12.8 on; before, every flag is unknown. */
	if (g.cfg.driver_version >= 12080)
		known = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	/* One allocation (or one whole cuMemMap mapping) holds the whole range. */
	a = find_range((uintptr_t)d, size);
	if (a) {
		src = a->memfd;
		pos = a->file_off + (off_t)(d - a->ptr);
	}
	pthread_mutex_unlock(&g.lock);
	if (!supported)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!handle || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	/* "Users must ensure the dptr and size are aligned to the host page size." */
	if (size == 0 || d % page || size % page || !a)
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) && !pcie)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (mode != CUDA_SUCCESS)
		return mode;
	/*
	 * The very pages of the range: a new open file description of the
	 * allocation's memfd (its own file position), positioned where the range
	 * starts. tests/fake_verbs maps from there.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", src);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (lseek(fd, pos, SEEK_SET) != pos) {
		close(fd);
		return CUDA_ERROR_UNKNOWN;
	}
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}

static CUresult fake_DeviceGetUuid(CUuuid *uuid, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetUuid", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, g.cfg.uuid[d], 16);
	return CUDA_SUCCESS;
}

static CUresult fake_FlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
					      CUflushGPUDirectRDMAWritesScope scope)
{
	CUresult rc = enter("cuFlushGPUDirectRDMAWrites", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
	    (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
	     scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	g.flushes++;
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

EXPORT unsigned long long gdrperf_fake_cuda_flushes(void);
EXPORT unsigned long long gdrperf_fake_cuda_flushes(void)
{
	unsigned long long n;

	pthread_mutex_lock(&g.lock);
	n = g.flushes;
	pthread_mutex_unlock(&g.lock);
	return n;
}

/* ---- lookup ---- */

static const struct {
	const char *name;
	int since; /* the CUDA version whose ABI this implements */
	void *fn;
} fake_procs[] = {
	{ "cuGetErrorName", 6000, (void *)fake_GetErrorName },
	{ "cuGetErrorString", 6000, (void *)fake_GetErrorString },
	{ "cuInit", 2000, (void *)fake_Init },
	{ "cuDriverGetVersion", 2020, (void *)fake_DriverGetVersion },
	{ "cuDeviceGetCount", 2000, (void *)fake_DeviceGetCount },
	{ "cuDeviceGet", 2000, (void *)fake_DeviceGet },
	{ "cuDeviceGetName", 2000, (void *)fake_DeviceGetName },
	{ "cuDeviceGetPCIBusId", 4010, (void *)fake_DeviceGetPCIBusId },
	{ "cuDeviceTotalMem", 3020, (void *)fake_DeviceTotalMem },
	{ "cuDeviceGetAttribute", 2000, (void *)fake_DeviceGetAttribute },
	{ "cuDevicePrimaryCtxRetain", 7000, (void *)fake_DevicePrimaryCtxRetain },
	{ "cuDevicePrimaryCtxRelease", 11000, (void *)fake_DevicePrimaryCtxRelease },
	{ "cuCtxSetCurrent", 4000, (void *)fake_CtxSetCurrent },
	{ "cuMemAlloc", 3020, (void *)fake_MemAlloc },
	{ "cuMemFree", 3020, (void *)fake_MemFree },
	{ "cuMemHostAlloc", 2020, (void *)fake_MemHostAlloc },
	{ "cuMemFreeHost", 2000, (void *)fake_MemFreeHost },
	{ "cuMemcpyHtoD", 3020, (void *)fake_MemcpyHtoD },
	{ "cuMemcpyDtoH", 3020, (void *)fake_MemcpyDtoH },
	{ "cuMemcpyHtoDAsync", 3020, (void *)fake_MemcpyHtoDAsync },
	{ "cuMemcpyDtoHAsync", 3020, (void *)fake_MemcpyDtoHAsync },
	{ "cuStreamCreate", 2000, (void *)fake_StreamCreate },
	{ "cuStreamDestroy", 4000, (void *)fake_StreamDestroy },
	{ "cuStreamSynchronize", 2000, (void *)fake_StreamSynchronize },
	{ "cuEventCreate", 2000, (void *)fake_EventCreate },
	{ "cuEventDestroy", 4000, (void *)fake_EventDestroy },
	{ "cuEventRecord", 2000, (void *)fake_EventRecord },
	{ "cuEventQuery", 2000, (void *)fake_EventQuery },
	{ "cuEventSynchronize", 2000, (void *)fake_EventSynchronize },
	{ "cuPointerSetAttribute", 6000, (void *)fake_PointerSetAttribute },
	{ "cuPointerGetAttribute", 4000, (void *)fake_PointerGetAttribute },
	{ "cuMemGetHandleForAddressRange", 11070, (void *)fake_MemGetHandleForAddressRange },
	{ "cuDeviceGetUuid", 11040, (void *)fake_DeviceGetUuid },
	{ "cuFlushGPUDirectRDMAWrites", 11030, (void *)fake_FlushGPUDirectRDMAWrites },
	{ "cuMemGetAllocationGranularity", 10020, (void *)fake_MemGetAllocationGranularity },
	{ "cuMemCreate", 10020, (void *)fake_MemCreate },
	{ "cuMemRelease", 10020, (void *)fake_MemRelease },
	{ "cuMemAddressReserve", 10020, (void *)fake_MemAddressReserve },
	{ "cuMemAddressFree", 10020, (void *)fake_MemAddressFree },
	{ "cuMemMap", 10020, (void *)fake_MemMap },
	{ "cuMemUnmap", 10020, (void *)fake_MemUnmap },
	{ "cuMemSetAccess", 10020, (void *)fake_MemSetAccess },
};

static CUresult fake_getproc(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	const char *e = getenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION");
	int driver = e && *e ? atoi(e) : 12040;

	if (!symbol || !pfn || flags > 2)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (size_t i = 0; i < sizeof(fake_procs) / sizeof(fake_procs[0]); i++) {
		if (strcmp(symbol, fake_procs[i].name))
			continue;
		/* Newer than the (configured) driver, or an older ABI we do not fake. */
		if (fake_procs[i].since > driver || version < fake_procs[i].since)
			return CUDA_ERROR_NOT_FOUND;
		*pfn = fake_procs[i].fn;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_FOUND;
}

#undef cuGetProcAddress
#ifndef FAKE_CUDA_GETPROC_V2_ONLY
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return fake_getproc(symbol, pfn, version, flags);
}
#else
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status)
{
	CUresult rc = fake_getproc(symbol, pfn, version, flags);

	if (status)
		*status = rc == CUDA_SUCCESS ? CU_GET_PROC_ADDRESS_SUCCESS
					     : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return rc;
}
#endif
