/*
 * A node's host<->GPU copy ceiling (gdr_doctor --measure, docs/bounce.md):
 * pinned D2H and H2D per GPU by the copy engines (CE) and by the bounce
 * path's copy kernel through mapped host memory (SM), at the bounce chunks
 * (512 KiB: the SM default, NCCL's step; 4 MiB: the CE default) and 64 MiB,
 * best of a few repeats. Every figure says where it came from.
 */
#ifndef GDR_COPY_MEASURE_H
#define GDR_COPY_MEASURE_H

#include <stdint.h>
#include <stdio.h>

#include "cuda.h"

#define GDR_COPY_NCHUNKS   3
#define GDR_COPY_SM_BLOCKS 16u /* the H200 table's SM figures: >= 16 blocks (H2D) */

/* [mode: 0 CE, 1 SM][direction: 0 D2H, 1 H2D][chunk]: GB/s (1e9 B/s); NAN = not measured. */
struct gdr_copy_table {
	uint64_t chunk[GDR_COPY_NCHUNKS];
	double gbps[2][2][GDR_COPY_NCHUNKS];
	uint64_t bytes;	   /* per case and repeat */
	unsigned int reps; /* best of */
	char sm_why[256];  /* why SM was not measured, "" when it was */
};

/* bytes moved in ns as GB/s (1e9 B/s); NAN when nothing was timed. */
double gdr_copy_gbps(uint64_t bytes, uint64_t ns);
/* The bounce copy stage's ceiling at chunk: min(D2H, H2D) of mode (0 CE, 1 SM); NAN unknown. */
double gdr_copy_ceiling(const struct gdr_copy_table *t, int mode, uint64_t chunk);
/* A table with the chunks set and nothing measured. */
void gdr_copy_table_init(struct gdr_copy_table *t, uint64_t bytes, unsigned int reps);

/*
 * Measure gpu (opened, context current): each case moves t->bytes as
 * back-to-back copies of one chunk on one stream, timed to the stream's end.
 * 0, or a negative errno with why (no memory, a failing copy).
 */
int gdr_copy_measure(struct gdr_cuda *cu, struct gdr_gpu *gpu, struct gdr_copy_table *t, char *why,
		     size_t wlen);
/*
 * The bench's bounce ceiling (docs/bounce.md, "How the ceiling is computed"):
 * the copy stage at one chunk, as the row's pipeline copies (mode: enum
 * gdr_bounce_copy; blocks: SM launches). Each way moves
 * gdr_copy_chunk_bytes(chunk) as back-to-back copies of chunk on one stream,
 * best of GDR_COPY_CHUNK_REPS: 32 MiB, 2 to 64 copies (a few ms at 50 GB/s;
 * 2 GiB at a 1 GiB chunk, about 0.25 s for both ways and every repeat);
 * with a stand-in driver (gdr_copy_stand_in), at most
 * GDR_COPY_STAND_IN_BYTES (two chunks at least) each way, once.
 * gbps[0] D2H, gbps[1] H2D in GB/s; 0, or -errno with why (both NAN).
 */
#define GDR_COPY_CHUNK_BYTES (32ull << 20)
#define GDR_COPY_CHUNK_MIN   2u
#define GDR_COPY_CHUNK_MAX   64u
#define GDR_COPY_CHUNK_REPS  3u
#define GDR_COPY_STAND_IN_BYTES (4ull << 20)
uint64_t gdr_copy_chunk_bytes(uint64_t chunk);
int gdr_copy_measure_chunk(struct gdr_cuda *cu, int mode, unsigned int blocks, uint64_t chunk,
			   double gbps[2], char *why, size_t wlen);
/* The table as people read it, 80 columns. */
void gdr_copy_table_print(FILE *out, const struct gdr_copy_table *t);

/* The stand-in driver GDRPERF_LIBCUDA names (the tests' fake: CPU copies), else NULL. */
const char *gdr_copy_stand_in(void);

/*
 * gdr_doctor --measure: every GPU of this node, a few seconds each; the
 * source line says which driver the figures came from (a stand-in named by
 * GDRPERF_LIBCUDA is said to be one). 0 when a GPU was measured, else -errno.
 */
int gdr_copy_measure_node(FILE *out);

#endif
