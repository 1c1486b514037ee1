/*
 * Copies, streams and events: async copies run in order on one worker
 * thread per stream; an event completes when its worker reaches it.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	return fake_stream_run(hs, dst, src, len);
}

/* A launch that moves nothing: only the stream handle is checked. */
CUresult fake_stream_valid(CUstream hs)
{
	struct fake_stream *s;

	return stream_check(hs, &s);
}

CUresult fake_stream_run(CUstream hs, void *dst, const void *src, size_t len)
{
	struct fake_stream *s;
	struct fake_op *op;
	CUresult rc = stream_check(hs, &s);

	if (rc != CUDA_SUCCESS || len == 0)
		return rc;
	if (!s) {
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

CUresult fake_MemcpyHtoD(CUdeviceptr dst, const void *src, size_t len)
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

CUresult fake_MemcpyDtoH(void *dst, CUdeviceptr src, size_t len)
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

CUresult fake_MemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t len, CUstream s)
{
	CUresult rc = enter("cuMemcpyHtoDAsync", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (len && (!src || !device_range_ok(dst, len)))
		return CUDA_ERROR_INVALID_VALUE;
	return copy_async((void *)(uintptr_t)dst, src, len, src, s);
}

CUresult fake_MemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t len, CUstream s)
{
	CUresult rc = enter("cuMemcpyDtoHAsync", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (len && (!dst || !device_range_ok(src, len)))
		return CUDA_ERROR_INVALID_VALUE;
	return copy_async(dst, (const void *)(uintptr_t)src, len, dst, s);
}

CUresult fake_StreamCreate(CUstream *out, unsigned int flags)
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

CUresult fake_StreamDestroy(CUstream h)
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

CUresult fake_StreamSynchronize(CUstream h)
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

CUresult fake_EventCreate(CUevent *out, unsigned int flags)
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

CUresult fake_EventDestroy(CUevent h)
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

CUresult fake_EventRecord(CUevent h, CUstream hs)
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

CUresult fake_EventQuery(CUevent h)
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

CUresult fake_EventSynchronize(CUevent h)
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
