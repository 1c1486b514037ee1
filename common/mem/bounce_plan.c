/*
 * The bounce path's geometry, decided once for both sides: the staging
 * chunk a message of a given size moves in (docs/bounce.md, "Chunk choice"),
 * the bound on the staging ring, and the bounce columns of a row.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bounce.h"
#include "mem.h"
#include "report.h"
#include "util.h"

/*
 * A message up to the cap is one chunk: the ring (>= 2 slots) keeps the next
 * messages' chunks in flight behind it. A larger one is split into the
 * fewest chunks of at most cap, of equal size (rounded up to 4 KiB when that
 * stays within the cap), so that no chunk is a small remainder copied at a
 * small chunk's rate.
 */
uint64_t gdr_bounce_chunk(uint64_t size, uint64_t cap)
{
	uint64_t n, c;

	if (cap == 0)
		return 0;
	if (size <= cap)
		return size ? size : 1;
	n = (size + cap - 1) / cap;
	c = (size + n - 1) / n;
	c = (c + GDR_BOUNCE_CHUNK_ALIGN - 1) / GDR_BOUNCE_CHUNK_ALIGN * GDR_BOUNCE_CHUNK_ALIGN;
	return c < cap ? c : cap;
}

int gdr_bounce_ring_check(uint64_t cap, unsigned int slots, char *why, size_t wlen)
{
	char c[32], m[32];

	if (slots == 0 || cap == 0 || cap > GDR_BOUNCE_RING_MAX / slots) {
		snprintf(why, wlen,
			 "staging ring %u x %s is above the %s per side bounce allows "
			 "(lower --bounce-chunk or --bounce-slots)",
			 slots, gdr_fmt_size(cap, c, sizeof(c)),
			 gdr_fmt_size(GDR_BOUNCE_RING_MAX, m, sizeof(m)));
		return -EINVAL;
	}
	return 0;
}

void gdr_bounce_fill_row(struct gdr_result *r, const struct gdr_mem_env *env, uint64_t size)
{
	snprintf(r->bounce_chunk, sizeof(r->bounce_chunk), "%" PRIu64,
		 gdr_bounce_chunk(size, env->bounce_chunk));
	snprintf(r->bounce_copy, sizeof(r->bounce_copy), "%s",
		 gdr_bounce_copy_name(env->bounce_copy));
	if (env->bounce_copy == GDR_BOUNCE_COPY_SM)
		snprintf(r->bounce_blocks, sizeof(r->bounce_blocks), "%u", env->bounce_blocks);
}

const char *gdr_bounce_copy_name(int copy)
{
	return copy == GDR_BOUNCE_COPY_SM ? "sm" : "ce";
}

int gdr_bounce_copy_parse(const char *s, int *copy)
{
	if (!strcmp(s, "ce"))
		*copy = GDR_BOUNCE_COPY_CE;
	else if (!strcmp(s, "sm"))
		*copy = GDR_BOUNCE_COPY_SM;
	else
		return -EINVAL;
	return 0;
}

uint64_t gdr_bounce_default_cap(int copy)
{
	return copy == GDR_BOUNCE_COPY_SM ? GDR_BOUNCE_CHUNK_SM : GDR_BOUNCE_CHUNK_CAP;
}
