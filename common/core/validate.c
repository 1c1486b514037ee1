#include "config.h"

#include "validate.h"

#include <errno.h>
#include <string.h>

static uint64_t round64(uint64_t v)
{
	return (v + 63) & ~(uint64_t)63;
}

void gdr_validate_lengths(uint64_t max_size, int validate, size_t *src_len, size_t *dst_len)
{
	uint64_t slot = round64(max_size);
	uint64_t dst = validate && slot < GDR_VALIDATE_SPAN ? GDR_VALIDATE_SPAN : slot;

	*dst_len = (size_t)dst;
	/* The extra source slot makes the two counts co-prime for every size. */
	*src_len = (size_t)(validate ? dst + slot : slot);
}

void gdr_lat_lengths(uint64_t max_size, size_t page, size_t *src_len, size_t *dst_len)
{
	gdr_validate_lengths(max_size, 0, src_len, dst_len);
	if (page > 1)
		*src_len = (*src_len + page - 1) / page * page;
}

void gdr_validate_layout(struct gdr_vlayout *l, uint64_t size, int validate, size_t src_len,
			 size_t dst_len)
{
	l->stride = round64(size ? size : 1);
	l->dst_slots = 1;
	l->src_slots = 1;
	if (!validate)
		return;
	uint64_t d = dst_len / l->stride;
	if (d > 65536)
		d = 65536;
	/* (d + 1) * stride <= dst_len + stride <= src_len: the extra slot fits. */
	if (d < 1 || (d + 1) * l->stride > src_len)
		return;
	l->dst_slots = (unsigned int)d;
	l->src_slots = (unsigned int)d + 1;
}

uint64_t gdr_validate_covered(const struct gdr_vlayout *l, uint64_t n)
{
	return n < l->dst_slots ? n : l->dst_slots;
}

static int compare(const uint8_t *want, const uint8_t *got, uint64_t size, size_t base,
		   struct gdr_vbad *bad)
{
	if (!memcmp(want, got, size))
		return 0;
	for (uint64_t i = 0; i < size; i++) {
		if (want[i] != got[i]) {
			bad->off = base + i;
			bad->want = want[i];
			bad->got = got[i];
			return -EILSEQ;
		}
	}
	return 0;
}

int gdr_validate_check(const uint8_t *src, const uint8_t *dst, const uint8_t *poison, uint64_t size,
		       const struct gdr_vlayout *l, uint64_t n, struct gdr_vbad *bad)
{
	memset(bad, 0, sizeof(*bad));
	for (unsigned int d = 0; d < l->dst_slots; d++) {
		size_t doff = (size_t)d * l->stride;

		if (d >= n) {
			/* No message of this run was meant for this slot. */
			if (poison && compare(poison + doff, dst + doff, size, doff, bad)) {
				bad->msg = UINT64_MAX;
				return -EILSEQ;
			}
			continue;
		}
		/* The last message that wrote slot d: the largest k < n with k = d mod dst_slots.
		 */
		uint64_t k = d + (n - 1 - d) / l->dst_slots * l->dst_slots;
		size_t soff = (size_t)(k % l->src_slots) * l->stride;

		if (compare(src + soff, dst + doff, size, doff, bad)) {
			bad->msg = k;
			return -EILSEQ;
		}
	}
	return 0;
}
