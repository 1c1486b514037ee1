/* --validate: a per-run pattern that differs per QP and per byte, and its check. */
#ifndef GDR_PATTERN_H
#define GDR_PATTERN_H

#include <stddef.h>
#include <stdint.h>

void gdr_pattern_fill(uint8_t *buf, size_t len, uint32_t seed, unsigned int qp);
/* Every byte different from the pattern, so that an unwritten byte cannot pass. */
void gdr_pattern_poison(uint8_t *buf, size_t len, uint32_t seed, unsigned int qp);
/* 0 if buf holds the pattern; else -EILSEQ and the first bad offset and bytes. */
int gdr_pattern_check(const uint8_t *buf, size_t len, uint32_t seed, unsigned int qp,
		      size_t *bad_off, uint8_t *want, uint8_t *got);

#endif
