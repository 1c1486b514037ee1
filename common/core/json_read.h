/*
 * A small JSON reader for what another tool printed (iproute2's
 * `rdma -j res show mr`): the whole text into a tree, bounded in depth,
 * every error said with its byte offset. Numbers keep their exact unsigned
 * 64-bit value when they are plain non-negative integers (an MR length), and
 * a double otherwise. Strings are decoded (\uXXXX to UTF-8; a lone surrogate
 * becomes U+FFFD); a NUL written as \u0000 ends the C string early.
 */
#ifndef GDR_JSON_READ_H
#define GDR_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

enum gdr_json_type {
	GDR_JSON_NULL = 0,
	GDR_JSON_FALSE,
	GDR_JSON_TRUE,
	GDR_JSON_NUMBER,
	GDR_JSON_STRING,
	GDR_JSON_ARRAY,
	GDR_JSON_OBJECT,
};

/* Deeper nesting than this is refused (-E2BIG): no recursion without end. */
#define GDR_JSON_MAX_DEPTH 32

struct gdr_json {
	enum gdr_json_type type;
	char *key;		/* the member's name inside an object, else NULL */
	char *str;		/* GDR_JSON_STRING */
	double num;		/* GDR_JSON_NUMBER */
	uint64_t u;		/* the exact value when is_uint */
	int is_uint;		/* a non-negative integer that fits 64 bits */
	struct gdr_json *child; /* first element or member */
	struct gdr_json *next;	/* next sibling */
};

/*
 * Parse text[0..len) (one value, white space around it allowed). 0 with *out
 * set, or -EINVAL (not JSON; why says where and what), -E2BIG (too deep) or
 * -ENOMEM.
 */
int gdr_json_parse(const char *text, size_t len, struct gdr_json **out, char *why, size_t wlen);
/* Idempotent on NULL. */
void gdr_json_free(struct gdr_json *j);
/* The member named key of an object, or NULL. */
const struct gdr_json *gdr_json_get(const struct gdr_json *obj, const char *key);

#endif
