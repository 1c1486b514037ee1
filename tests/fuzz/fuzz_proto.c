/*
 * libFuzzer target for everything the peer sends: the control messages
 * (gdr_msg_decode) and the rdma_cm hello (gdr_hello_decode). Whatever decodes
 * must re-encode to the same length, and that encoding must decode and
 * re-encode to itself, so a field the decoder accepts but the encoder cannot
 * carry is a crash too. (Bytes, not structs, are compared: structs have
 * padding.)
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_msg(const uint8_t *data, size_t size)
{
	static struct gdr_msg m;
	uint8_t out[GDR_CTRL_MAX + 64], again[GDR_CTRL_MAX + 64];
	char why[256];
	int n;

	if (gdr_msg_decode(data, size, &m, why, sizeof(why)))
		return;
	n = gdr_msg_encode(&m, out, sizeof(out));
	if (n < 0 || (size_t)n != size)
		abort();
	if (gdr_msg_decode(out, (size_t)n, &m, why, sizeof(why)))
		abort();
	if (gdr_msg_encode(&m, again, sizeof(again)) != n || memcmp(out, again, (size_t)n) != 0)
		abort();
}

static void check_hello(const uint8_t *data, size_t size)
{
	struct gdr_hello h;
	uint8_t out[GDR_HELLO_LEN];
	char why[256];

	if (gdr_hello_decode(data, size, &h, why, sizeof(why)))
		return;
	if (gdr_hello_encode(&h, out, sizeof(out)) != GDR_HELLO_LEN)
		abort();
	/* rdma_cm pads private data, so only the hello itself must match. */
	if (memcmp(out, data, GDR_HELLO_LEN) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Control messages never exceed one receive slot. */
	if (size > GDR_CTRL_MAX)
		return 0;
	check_msg(data, size);
	check_hello(data, size);
	return 0;
}
