#include "config.h"

#include "pattern.h"

#include <errno.h>

static uint64_t mix(uint32_t seed, unsigned int qp, uint64_t word)
{
	/* splitmix64: cheap, and neighbouring words share no bytes. */
	uint64_t z = ((uint64_t)seed << 32 | (uint64_t)qp << 20) ^ (word * 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint8_t byte_at(uint32_t seed, unsigned int qp, size_t i)
{
	return (uint8_t)(mix(seed, qp, i / 8) >> (8 * (i % 8)));
}

void gdr_pattern_fill(uint8_t *buf, size_t len, uint32_t seed, unsigned int qp)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w = mix(seed, qp, i / 8);
		for (unsigned int b = 0; b < 8; b++)
			buf[i + b] = (uint8_t)(w >> (8 * b));
	}
	for (; i < len; i++)
		buf[i] = byte_at(seed, qp, i);
}

void gdr_pattern_poison(uint8_t *buf, size_t len, uint32_t seed, unsigned int qp)
{
	gdr_pattern_fill(buf, len, seed, qp);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)~buf[i];
}

int gdr_pattern_check(const uint8_t *buf, size_t len, uint32_t seed, unsigned int qp,
		      size_t *bad_off, uint8_t *want, uint8_t *got)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t w = byte_at(seed, qp, i);
		if (buf[i] != w) {
			*bad_off = i;
			*want = w;
			*got = buf[i];
			return -EILSEQ;
		}
	}
	return 0;
}
