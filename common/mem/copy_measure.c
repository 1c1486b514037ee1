/*
 * gdr_doctor --measure: pinned host<->GPU copy rates per GPU, CE and SM
 * (copy_measure.h). The SM cases launch the bounce path's own copy kernel
 * (cuda_kernel.c) through mapped pinned memory, as the bounce path does.
 */
#include "config.h"

#include "copy_measure.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "util.h"

double gdr_copy_gbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / (double)ns : NAN;
}

void gdr_copy_table_init(struct gdr_copy_table *t, uint64_t bytes, unsigned int reps)
{
	memset(t, 0, sizeof(*t));
	t->chunk[0] = GDR_BOUNCE_CHUNK_SM;
	t->chunk[1] = GDR_BOUNCE_CHUNK_CAP;
	t->chunk[2] = 64ull << 20;
	t->bytes = bytes;
	t->reps = reps;
	for (int m = 0; m < 2; m++)
		for (int d = 0; d < 2; d++)
			for (int c = 0; c < GDR_COPY_NCHUNKS; c++)
				t->gbps[m][d][c] = NAN;
}

double gdr_copy_ceiling(const struct gdr_copy_table *t, int mode, uint64_t chunk)
{
	for (int c = 0; c < GDR_COPY_NCHUNKS; c++) {
		double a, b;

		if (t->chunk[c] != chunk)
			continue;
		a = t->gbps[mode][0][c];
		b = t->gbps[mode][1][c];
		return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
	}
	return NAN;
}

struct bufs {
	uint64_t dev;
	void *host;
	uint64_t host_d; /* its device address (mapped) */
	size_t len;
	unsigned int blocks; /* SM launches */
	gdr_cuda_stream_t s;
	struct gdr_cuda_kernel k;
};

/* One case, best of reps: bytes as copies of chunk, one stream. */
static int one_case(struct gdr_cuda *cu, struct bufs *b, uint64_t bytes, unsigned int reps, int sm,
		    int to_gpu, uint64_t chunk, double *best)
{
	for (unsigned int r = 0; r < reps; r++) {
		uint64_t t0 = gdr_now_ns(), done = 0;
		double g;
		int e = 0;

		while (!e && done < bytes) {
			uint64_t len = bytes - done < chunk ? bytes - done : chunk;
			uint64_t off = done % b->len / chunk * chunk;

			if (off + len > b->len)
				off = 0;
			if (sm)
				e = gdr_cuda_copy_kernel_launch(
				    cu, &b->k, to_gpu ? b->dev + off : b->host_d + off,
				    to_gpu ? b->host_d + off : b->dev + off, len, b->blocks, b->s);
			else if (to_gpu)
				e = gdr_cuda_htod_async(cu, b->dev + off, (uint8_t *)b->host + off,
							len, b->s);
			else
				e = gdr_cuda_dtoh_async(cu, (uint8_t *)b->host + off, b->dev + off,
							len, b->s);
			done += len;
		}
		if (!e)
			e = gdr_cuda_stream_sync(cu, b->s);
		if (e)
			return e;
		g = gdr_copy_gbps(bytes, gdr_now_ns() - t0);
		if (isnan(*best) || g > *best)
			*best = g;
	}
	return 0;
}

/* b->len bytes on the GPU and mapped pinned on the host, a stream. */
static int bufs_open(struct gdr_cuda *cu, struct bufs *b, char *why, size_t wlen)
{
	int e = gdr_cuda_alloc(cu, b->len, &b->dev, why, wlen);

	if (e)
		return e;
	e = gdr_cuda_host_alloc_mapped(cu, b->len, &b->host, &b->host_d, why, wlen);
	if (e)
		goto out_dev;
	e = gdr_cuda_stream_create(cu, &b->s);
	if (!e)
		return 0;
	snprintf(why, wlen, "%s", gdr_cuda_last_error(cu));
	gdr_cuda_host_free(cu, b->host);
out_dev:
	gdr_cuda_free(cu, b->dev);
	return e;
}

static void bufs_close(struct gdr_cuda *cu, struct bufs *b)
{
	gdr_cuda_copy_kernel_unload(cu, &b->k);
	gdr_cuda_stream_destroy(cu, b->s);
	gdr_cuda_host_free(cu, b->host);
	gdr_cuda_free(cu, b->dev);
}

int gdr_copy_measure(struct gdr_cuda *cu, struct gdr_gpu *gpu, struct gdr_copy_table *t, char *why,
		     size_t wlen)
{
	struct bufs b = { .len = t->chunk[GDR_COPY_NCHUNKS - 1], .blocks = GDR_COPY_SM_BLOCKS };
	int e;

	(void)gpu;
	e = bufs_open(cu, &b, why, wlen);
	if (e)
		return e;
	if (gdr_cuda_copy_kernel_load(cu, &b.k, t->sm_why, sizeof(t->sm_why)) == 0)
		t->sm_why[0] = '\0';
	for (int m = 0; m < 2 && !e; m++) {
		if (m == 1 && !b.k.func)
			break;
		for (int d = 0; d < 2 && !e; d++)
			for (int c = 0; c < GDR_COPY_NCHUNKS && !e; c++)
				e = one_case(cu, &b, t->bytes, t->reps, m, d, t->chunk[c],
					     &t->gbps[m][d][c]);
	}
	if (e)
		snprintf(why, wlen, "%s", gdr_cuda_last_error(cu));
	bufs_close(cu, &b);
	return e;
}

uint64_t gdr_copy_chunk_bytes(uint64_t chunk)
{
	uint64_t n = chunk ? GDR_COPY_CHUNK_BYTES / chunk : 0;

	n = n < GDR_COPY_CHUNK_MIN   ? GDR_COPY_CHUNK_MIN
	    : n > GDR_COPY_CHUNK_MAX ? GDR_COPY_CHUNK_MAX
				     : n;
	return n * chunk;
}

int gdr_copy_measure_chunk(struct gdr_cuda *cu, int mode, unsigned int blocks, uint64_t chunk,
			   double gbps[2], char *why, size_t wlen)
{
	struct bufs b = { .len = chunk, .blocks = blocks };
	/*
	 * A stand-in driver's copy is a CPU memcpy, and its note says so: at
	 * most 4 MiB (two chunks at least) each way, once (under the Soft-RoCE
	 * VM's emulation the full 32 MiB x 3 took over a second per side and
	 * chunk).
	 */
	const int fake = gdr_copy_stand_in() != NULL;
	uint64_t bytes = gdr_copy_chunk_bytes(chunk);
	unsigned int reps = fake ? 1u : GDR_COPY_CHUNK_REPS;

	if (fake && bytes > GDR_COPY_STAND_IN_BYTES)
		bytes = chunk * GDR_COPY_CHUNK_MIN > GDR_COPY_STAND_IN_BYTES
			    ? chunk * GDR_COPY_CHUNK_MIN
			    : GDR_COPY_STAND_IN_BYTES / chunk * chunk;
	int e;

	gbps[0] = gbps[1] = NAN;
	if (chunk == 0 || (mode == GDR_BOUNCE_COPY_SM && blocks == 0)) {
		snprintf(why, wlen, "no chunk or no blocks to copy with");
		return -EINVAL;
	}
	e = bufs_open(cu, &b, why, wlen);
	if (e)
		return e;
	if (mode == GDR_BOUNCE_COPY_SM)
		e = gdr_cuda_copy_kernel_load(cu, &b.k, why, wlen);
	for (int d = 0; d < 2 && !e; d++) {
		e = one_case(cu, &b, bytes, reps, mode == GDR_BOUNCE_COPY_SM, d, chunk, &gbps[d]);
		if (e)
			snprintf(why, wlen, "%s", gdr_cuda_last_error(cu));
	}
	bufs_close(cu, &b);
	return e;
}

static const char *cell(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", v);
	return buf;
}

void gdr_copy_table_print(FILE *out, const struct gdr_copy_table *t)
{
	char sz[32], v[4][16], bytes[32];

	fprintf(out, "  %-9s %7s %7s %7s %7s   (GB/s, best of %u over %s a case)\n", "chunk",
		"CE D2H", "CE H2D", "SM D2H", "SM H2D", t->reps,
		gdr_fmt_size(t->bytes, bytes, sizeof(bytes)));
	for (int c = 0; c < GDR_COPY_NCHUNKS; c++)
		fprintf(out, "  %-9s %7s %7s %7s %7s\n", gdr_fmt_size(t->chunk[c], sz, sizeof(sz)),
			cell(t->gbps[0][0][c], v[0], sizeof(v[0])),
			cell(t->gbps[0][1][c], v[1], sizeof(v[1])),
			cell(t->gbps[1][0][c], v[2], sizeof(v[2])),
			cell(t->gbps[1][1][c], v[3], sizeof(v[3])));
	if (t->sm_why[0])
		fprintf(out, "  SM not measured: %s\n", t->sm_why);
	else
		fprintf(out,
			"  SM: the bounce copy kernel, %u blocks x %u threads (bounce's default "
			"is %u:\n  --bounce-blocks %u to match)\n",
			GDR_COPY_SM_BLOCKS, GDR_COPY_THREADS, GDR_BOUNCE_BLOCKS,
			GDR_COPY_SM_BLOCKS);
}

const char *gdr_copy_stand_in(void)
{
	const char *e = getenv("GDRPERF_LIBCUDA");

	return e && *e ? e : NULL;
}

int gdr_copy_measure_node(FILE *out)
{
	const char *stand_in = gdr_copy_stand_in();
	struct gdr_cuda *cu;
	char why[512], ver[32];
	int n = 0, drv = 0, measured = 0;
	/* A stand-in driver copies with the CPU: less of it, and said so. */
	uint64_t bytes = stand_in ? 64ull << 20 : 1ull << 30;

	if (gdr_cuda_load(&cu, why, sizeof(why))) {
		fprintf(out, "copy rates: not measured: %s\n", why);
		return -ENODEV;
	}
	gdr_cuda_driver_version(cu, &drv);
	snprintf(ver, sizeof(ver), "%d.%d", drv / 1000, drv % 1000 / 10);
	gdr_cuda_device_count(cu, &n);
	if (stand_in)
		fprintf(out,
			"copy rates: source: a stand-in driver (GDRPERF_LIBCUDA), not a GPU's "
			"figures\n  library: %s, CUDA %s\n",
			stand_in, ver);
	else
		fprintf(out, "copy rates: source: measured now through libcuda.so.1 (CUDA %s)\n",
			ver);
	if (n == 0)
		fprintf(out, "copy rates: not measured: no CUDA device\n");
	for (int i = 0; i < n; i++) {
		struct gdr_gpu gpu;
		struct gdr_copy_table t;
		int e;

		gdr_copy_table_init(&t, bytes, 3);
		e = gdr_cuda_gpu_info(cu, i, &gpu, why, sizeof(why));
		if (!e)
			e = gdr_cuda_gpu_open(cu, &gpu, why, sizeof(why));
		if (e) {
			fprintf(out, "gpu%d: not measured: %s\n", i, why);
			continue;
		}
		fprintf(out, "gpu%d %s (%s): pinned host <-> GPU copies\n", i, gpu.name,
			gpu.bus_id);
		e = gdr_copy_measure(cu, &gpu, &t, why, sizeof(why));
		if (e)
			fprintf(out, "  stopped: %s\n", why);
		gdr_copy_table_print(out, &t);
		if (!e) {
			fprintf(out,
				"  bounce copy ceiling: ce %.1f GB/s at 4 MiB chunks, sm %.1f at "
				"512 KiB\n",
				gdr_copy_ceiling(&t, 0, GDR_BOUNCE_CHUNK_CAP),
				gdr_copy_ceiling(&t, 1, GDR_BOUNCE_CHUNK_SM));
			measured++;
		}
		gdr_cuda_gpu_close(cu, &gpu);
	}
	gdr_cuda_unload(cu);
	return measured ? 0 : -ENODEV;
}
