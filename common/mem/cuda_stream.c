/*
 * Streams, events and asynchronous copies: what the bounce pipeline runs on
 * (non-blocking streams, completion-only events).
 */
#include "config.h"

#include "cuda_int.h"
#include "util.h"

int gdr_cuda_stream_create(struct gdr_cuda *cu, gdr_cuda_stream_t *s)
{
	CUstream st = NULL;
	int ret;

	/* Non-blocking: the pipeline's streams must not wait on the legacy default stream. */
	ret = gdr_cu_check(cu, NULL, 0, cu->StreamCreate(&st, CU_STREAM_NON_BLOCKING),
			   "cuStreamCreate");
	*s = ret ? NULL : (gdr_cuda_stream_t)st;
	return ret;
}

void gdr_cuda_stream_destroy(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
	if (s)
		gdr_cu_check(cu, NULL, 0, cu->StreamDestroy((CUstream)s), "cuStreamDestroy");
}

int gdr_cuda_stream_sync(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
	return gdr_cu_check(cu, NULL, 0, cu->StreamSynchronize((CUstream)s), "cuStreamSynchronize");
}

int gdr_cuda_htod_async(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len,
			gdr_cuda_stream_t s)
{
	return gdr_cu_check(cu, NULL, 0,
			    cu->MemcpyHtoDAsync((CUdeviceptr)dst, src, len, (CUstream)s),
			    "cuMemcpyHtoDAsync(0x%llx, %zu)", (unsigned long long)dst, len);
}

int gdr_cuda_dtoh_async(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len,
			gdr_cuda_stream_t s)
{
	return gdr_cu_check(cu, NULL, 0,
			    cu->MemcpyDtoHAsync(dst, (CUdeviceptr)src, len, (CUstream)s),
			    "cuMemcpyDtoHAsync(0x%llx, %zu)", (unsigned long long)src, len);
}

int gdr_cuda_event_create(struct gdr_cuda *cu, gdr_cuda_event_t *e)
{
	CUevent ev = NULL;
	int ret;

	/* Completion only: timing would cost a timestamp per record. */
	ret = gdr_cu_check(cu, NULL, 0, cu->EventCreate(&ev, CU_EVENT_DISABLE_TIMING),
			   "cuEventCreate");
	*e = ret ? NULL : (gdr_cuda_event_t)ev;
	return ret;
}

void gdr_cuda_event_destroy(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	if (e)
		gdr_cu_check(cu, NULL, 0, cu->EventDestroy((CUevent)e), "cuEventDestroy");
}

int gdr_cuda_event_record(struct gdr_cuda *cu, gdr_cuda_event_t e, gdr_cuda_stream_t s)
{
	return gdr_cu_check(cu, NULL, 0, cu->EventRecord((CUevent)e, (CUstream)s), "cuEventRecord");
}

int gdr_cuda_event_query(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	CUresult rc = cu->EventQuery((CUevent)e);

	if (rc == CUDA_SUCCESS)
		return 1;
	if (rc == CUDA_ERROR_NOT_READY)
		return 0;
	return gdr_cu_fail(cu, rc, NULL, 0, "cuEventQuery");
}

int gdr_cuda_event_sync(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	return gdr_cu_check(cu, NULL, 0, cu->EventSynchronize((CUevent)e), "cuEventSynchronize");
}
