/*
 * A test-only libibverbs interposer (LD_PRELOAD=tests/fake_verbs/libfake_verbs.so)
 * that lets the DMA-BUF data path run on a provider without DMA-BUF support
 * (Soft-RoCE): ibv_reg_dmabuf_mr is first asked of the real provider; where it
 * answers EOPNOTSUPP/EPROTONOSUPPORT, the registration is emulated by mapping
 * the DMA-BUF fd at the given offset and registering that mapping with
 * ibv_reg_mr_iova(iova = the device pointer). Only the fake libcuda's DMA-BUFs
 * can be emulated: they are a memfd whose file position (lseek SEEK_CUR) is
 * where the exported range starts (tests/fake_cuda/fake_dmabuf.c); a real
 * DMA-BUF refuses SEEK_CUR and is refused here too.
 *
 * What this proves end to end: offset, length, iova and the fd's lifetime as
 * gdrperf passes them. A wrong offset maps other pages than the buffer's, so
 * --validate fails; an fd closed before the call fails with EBADF.
 *
 * The fd = -1 probe is answered as a DMA-BUF-capable NIC answers it (EBADF,
 * not EOPNOTSUPP). gdrperf_fake_verbs_emulated(mr) says whether mr was made
 * here, so that rows from such runs say they were emulated.
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

struct emu_mr {
	struct ibv_mr *mr;
	void *map;
	size_t map_len;
	struct emu_mr *next;
};

/* Process-wide like the provider state it stands in for; guarded by lock. */
static struct {
	pthread_mutex_t lock;
	struct emu_mr *mrs;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

typedef struct ibv_mr *(*reg_dmabuf_fn)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);
typedef int (*dereg_fn)(struct ibv_mr *);

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

EXPORT int gdrperf_fake_verbs_emulated(const struct ibv_mr *mr);
EXPORT int gdrperf_fake_verbs_emulated(const struct ibv_mr *mr)
{
	int found = 0;

	pthread_mutex_lock(&g.lock);
	for (struct emu_mr *e = g.mrs; e && !found; e = e->next)
		found = e->mr == mr;
	pthread_mutex_unlock(&g.lock);
	return found;
}

static struct ibv_mr *emulate(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
			      int fd, int access)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct emu_mr *e;
	struct stat st;
	off_t start, at, aligned;
	size_t delta;
	int err;

	if (fd < 0 || fstat(fd, &st)) {
		errno = EBADF;
		return NULL;
	}
	start = lseek(fd, 0, SEEK_CUR);
	if (start < 0 || offset > (uint64_t)INT64_MAX - (uint64_t)start) {
		/* A real DMA-BUF (no SEEK_CUR): nothing here can stand in for its NIC. */
		errno = EOPNOTSUPP;
		return NULL;
	}
	at = start + (off_t)offset;
	/* The kernel refuses a range past the DMA-BUF's end; so does this. */
	if (length == 0 || at > st.st_size || (uint64_t)(st.st_size - at) < length) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	aligned = at & ~(off_t)(page - 1);
	delta = (size_t)(at - aligned);
	e->map_len = (delta + length + page - 1) / page * page;
	e->map = mmap(NULL, e->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, aligned);
	if (e->map == MAP_FAILED) {
		err = errno;
		free(e);
		errno = err;
		return NULL;
	}
	e->mr = ibv_reg_mr_iova(pd, (char *)e->map + delta, length, iova, access);
	if (!e->mr) {
		err = errno;
		munmap(e->map, e->map_len);
		free(e);
		errno = err;
		return NULL;
	}
	pthread_mutex_lock(&g.lock);
	e->next = g.mrs;
	g.mrs = e;
	pthread_mutex_unlock(&g.lock);
	return e->mr;
}

EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					uint64_t iova, int fd, int access)
{
	reg_dmabuf_fn real = NULL;
	void *sym = next_sym("ibv_reg_dmabuf_mr");
	struct ibv_mr *mr;

	*(void **)&real = sym;
	if (real && fd >= 0) {
		mr = real(pd, offset, length, iova, fd, access);
		if (mr || (errno != EOPNOTSUPP && errno != EPROTONOSUPPORT))
			return mr;
	}
	/* fd -1 names no DMA-BUF: a capable NIC's kernel says EBADF. */
	return emulate(pd, offset, length, iova, fd, access);
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	dereg_fn real = NULL;
	void *sym = next_sym("ibv_dereg_mr");
	struct emu_mr **pp, *e = NULL;
	int ret;

	*(void **)&real = sym;
	if (!real)
		return EINVAL;
	pthread_mutex_lock(&g.lock);
	for (pp = &g.mrs; *pp; pp = &(*pp)->next)
		if ((*pp)->mr == mr) {
			e = *pp;
			*pp = e->next;
			break;
		}
	pthread_mutex_unlock(&g.lock);
	ret = real(mr);
	if (e) {
		munmap(e->map, e->map_len);
		free(e);
	}
	return ret;
}
