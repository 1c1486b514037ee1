/*
 * --validate: where every message of a run lands, and the check that finds
 * a lost or misplaced one. Message k (warmup included) of a QP reads source
 * slot k mod src_slots and writes destination slot k mod dst_slots. The two
 * counts are consecutive integers, hence co-prime: the data a destination
 * slot holds names the message that wrote it, so a message that never
 * arrived (the slot keeps an older message's data or the poison) or went
 * to the wrong place fails with its index. Only the last dst_slots messages
 * of a run leave a trace: the check covers those (all of them when the run
 * is shorter).
 */
#ifndef GDR_VALIDATE_H
#define GDR_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

/* Destination bytes per QP that validated messages cycle through. */
#define GDR_VALIDATE_SPAN (4u << 20)

struct gdr_vlayout {
	uint64_t stride; /* bytes between slots: the size rounded up to 64 */
	unsigned int src_slots, dst_slots;
};

/* The halves of a QP's buffer: destination span and source span (one slot more). */
void gdr_validate_lengths(uint64_t max_size, int validate, size_t *src_len, size_t *dst_len);
/*
 * The latency tools' halves (no --validate): the destination starts on a page
 * of its own, as perftest's do. Measured on Soft-RoCE (2026-12-04): with both
 * halves in one page, the WRITE ping-pong at 512 B..2 KiB ran 1.06x
 * ib_write_lat; a page apart, 1.006-1.009x.
 */
void gdr_lat_lengths(uint64_t max_size, size_t page, size_t *src_len, size_t *dst_len);
/* The slots for messages of size in those halves; one slot each without --validate. */
void gdr_validate_layout(struct gdr_vlayout *l, uint64_t size, int validate, size_t src_len,
			 size_t dst_len);

struct gdr_vbad {
	uint64_t msg; /* the message whose data is missing (0-based, warmup included) */
	size_t off;   /* first bad byte, from the start of the destination half */
	uint8_t want, got;
};

/*
 * src: the source half as the writer filled it; dst: the destination half
 * read back; n: messages the writer issued on this QP in the last repeat.
 * poison (may be NULL): what the destination held before the run; slots no
 * message wrote must still hold it. 0, or -EILSEQ with *bad filled.
 */
int gdr_validate_check(const uint8_t *src, const uint8_t *dst, const uint8_t *poison, uint64_t size,
		       const struct gdr_vlayout *l, uint64_t n, struct gdr_vbad *bad);

/* How many of n messages the check covers. */
uint64_t gdr_validate_covered(const struct gdr_vlayout *l, uint64_t n);

#endif
