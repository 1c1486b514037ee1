/*
 * bounce_loopback: the bounce path's copy pipeline on one GPU with no NIC, a
 * COPY-PIPELINE test, NOT a network number. Chunks of each message go GPU
 * buffer -> staging ring A (the producer's copy: CE or the SM kernel, on its
 * stream), ring A -> ring B by memcpy on the CPU in place of the RDMA step
 * (--no-memcpy: the consumer reads ring A itself), ring B -> a second GPU
 * buffer (the consumer's copy, on its own stream), with --slots chunks in
 * flight, each slot reused only once its copies are done (events), as in
 * common/mem/bounce.c. The chunk is gdr_bounce_chunk(size, --chunk) as the
 * bounce path chooses it. Prints the rate and checks every byte arrived.
 * Built as a check program; run by tests/gpu/run-on-gpu.sh on a real GPU.
 *
 * Usage: bounce_loopback [--gpu N] [--copy ce|sm] [--blocks N] [--chunk SIZE]
 *                        [--slots N] [--size SIZE] [--bytes SIZE] [--no-memcpy]
 * Exit 0: ran and validated; 1: failed; 2: usage.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "cuda.h"
#include "options.h"
#include "util.h"

struct lb {
	struct gdr_cuda *cu;
	struct gdr_cuda_kernel k; /* sm only */
	unsigned int blocks, slots;
	uint64_t src, dst; /* GPU buffers, one message each */
	uint8_t *ring[2];  /* A (producer), B (consumer); B = A with --no-memcpy */
	uint64_t ring_d[2];
	gdr_cuda_stream_t s[2];
	gdr_cuda_event_t ev[2][256];
};

/* side 0: GPU src -> ring A; side 1: ring B -> GPU dst. */
static int stage(struct lb *l, int side, uint64_t off, size_t soff, size_t len)
{
	uint64_t gpu = side ? l->dst + off : l->src + off;

	if (l->k.func)
		return gdr_cuda_copy_kernel_launch(l->cu, &l->k, side ? gpu : l->ring_d[0] + soff,
						   side ? l->ring_d[1] + soff : gpu, len, l->blocks,
						   l->s[side]);
	return side ? gdr_cuda_htod_async(l->cu, gpu, l->ring[1] + soff, len, l->s[1])
		    : gdr_cuda_dtoh_async(l->cu, l->ring[0] + soff, gpu, len, l->s[0]);
}

/* Chunk c on one side (1: after the memcpy in place of RDMA, when asked), then its event. */
static int step(struct lb *l, int side, uint64_t c, uint64_t size, uint64_t chunk, int memcpy_step)
{
	uint64_t cpm = (size + chunk - 1) / chunk, off = c % cpm * chunk;
	size_t len = off + chunk > size ? size - off : chunk;
	unsigned int slot = (unsigned int)(c % l->slots);
	size_t soff = (size_t)slot * chunk;
	int e;

	if (memcpy_step)
		memcpy(l->ring[1] + soff, l->ring[0] + soff, len);
	e = stage(l, side, off, soff, len);
	return e ? e : gdr_cuda_event_record(l->cu, l->ev[side][slot], l->s[side]);
}

/* n chunks of chunk bytes (messages of size, cpm chunks each) through the pipeline. */
static int pipeline(struct lb *l, uint64_t size, uint64_t chunk, uint64_t n, int memcpy_step)
{
	uint64_t d2h = 0, moved = 0, h2d_done = 0;
	int e;

	while (h2d_done < n) {
		/* Producer: a slot (of A and of B) is free once its last H2D is done. */
		while (d2h < n && d2h - h2d_done < l->slots) {
			e = step(l, 0, d2h, size, chunk, 0);
			if (e)
				return e;
			d2h++;
		}
		/* The "network": the oldest staged chunk, once its copy is done. */
		if (moved < d2h && gdr_cuda_event_query(l->cu, l->ev[0][moved % l->slots]) == 1) {
			e = step(l, 1, moved, size, chunk, memcpy_step);
			if (e)
				return e;
			moved++;
		}
		while (h2d_done < moved) {
			e = gdr_cuda_event_query(l->cu, l->ev[1][h2d_done % l->slots]);
			if (e < 0)
				return e;
			if (!e)
				break;
			h2d_done++;
		}
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bounce_loopback [--gpu N] [--copy ce|sm] [--blocks N] "
			"[--chunk SIZE] [--slots N]\n"
			"                       [--size SIZE] [--bytes SIZE] [--no-memcpy]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { .name = "gpu", .has_arg = 1, .val = 'g' },
					      { .name = "copy", .has_arg = 1, .val = 'c' },
					      { .name = "blocks", .has_arg = 1, .val = 'b' },
					      { .name = "chunk", .has_arg = 1, .val = 'k' },
					      { .name = "slots", .has_arg = 1, .val = 'n' },
					      { .name = "size", .has_arg = 1, .val = 's' },
					      { .name = "bytes", .has_arg = 1, .val = 'B' },
					      { .name = "no-memcpy", .has_arg = 0, .val = 'M' },
					      {} };
	struct lb l = { .blocks = GDR_BOUNCE_BLOCKS, .slots = 8 };
	const char *gpu_spec = "0";
	uint64_t cap = 0, size = 4ull << 20, bytes = 1ull << 30, chunk, n, t0, ns, total;
	int copy = GDR_BOUNCE_COPY_CE, memcpy_step = 1, c, e, bad = 0;
	struct gdr_gpu gpu;
	char why[512], sz[32], ck[32];
	uint8_t *in, *out;

	gdr_set_progname(argv[0]);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		uint64_t v = 0;

		switch (c) {
		case 'g':
			gpu_spec = optarg;
			break;
		case 'c':
			bad |= gdr_bounce_copy_parse(optarg, &copy) != 0;
			break;
		case 'b':
			bad |= (l.blocks = (unsigned int)strtoul(optarg, NULL, 10)) == 0;
			break;
		case 'k':
			bad |= gdr_parse_size(optarg, &cap) != 0 || cap == 0;
			break;
		case 'n':
			l.slots = (unsigned int)strtoul(optarg, NULL, 10);
			bad |= l.slots == 0 || l.slots > 256;
			break;
		case 's':
			bad |= gdr_parse_size(optarg, &size) != 0 || size == 0;
			break;
		case 'B':
			bad |= gdr_parse_size(optarg, &v) != 0 || v == 0;
			bytes = v;
			break;
		case 'M':
			memcpy_step = 0;
			break;
		default:
			return usage();
		}
	}
	if (bad || optind < argc)
		return usage();
	if (!cap)
		cap = gdr_bounce_default_cap(copy);
	chunk = gdr_bounce_chunk(size, cap);
	total = (bytes + size - 1) / size * size;
	n = total / size * ((size + chunk - 1) / chunk);
	if (gdr_cuda_load(&l.cu, why, sizeof(why)) ||
	    gdr_cuda_find_gpu(l.cu, gpu_spec, &gpu, why, sizeof(why)) ||
	    gdr_cuda_gpu_open(l.cu, &gpu, why, sizeof(why)) ||
	    gdr_cuda_alloc(l.cu, size, &l.src, why, sizeof(why)) ||
	    gdr_cuda_alloc(l.cu, size, &l.dst, why, sizeof(why))) {
		fprintf(stderr, "bounce_loopback: %s\n", why);
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		e = copy == GDR_BOUNCE_COPY_SM
			? gdr_cuda_host_alloc_mapped(l.cu, chunk * l.slots, (void **)&l.ring[i],
						     &l.ring_d[i], why, sizeof(why))
			: gdr_cuda_host_alloc(l.cu, chunk * l.slots, (void **)&l.ring[i], why,
					      sizeof(why));
		if (!e)
			e = gdr_cuda_stream_create(l.cu, &l.s[i]);
		for (unsigned int k = 0; !e && k < l.slots; k++)
			e = gdr_cuda_event_create(l.cu, &l.ev[i][k]);
		if (e) {
			fprintf(stderr, "bounce_loopback: %s\n", gdr_cuda_last_error(l.cu));
			return 1;
		}
	}
	if (!memcpy_step) {
		l.ring[1] = l.ring[0];
		l.ring_d[1] = l.ring_d[0];
	}
	if (copy == GDR_BOUNCE_COPY_SM && gdr_cuda_copy_kernel_load(l.cu, &l.k, why, sizeof(why))) {
		fprintf(stderr, "bounce_loopback: %s\n", why);
		return 1;
	}
	in = malloc(size);
	out = malloc(size);
	if (!in || !out) {
		free(in);
		free(out);
		return 1;
	}
	for (uint64_t i = 0; i < size; i++)
		in[i] = (uint8_t)(i * 2654435761u >> 13);
	if (gdr_cuda_htod(l.cu, l.src, in, size))
		goto fail;
	/* One message untimed (JIT, first touch), then the timed run. */
	e = pipeline(&l, size, chunk, (size + chunk - 1) / chunk, memcpy_step);
	t0 = gdr_now_ns();
	if (!e)
		e = pipeline(&l, size, chunk, n, memcpy_step);
	ns = gdr_now_ns() - t0;
	if (e) {
		fprintf(stderr, "bounce_loopback: %s\n", gdr_cuda_last_error(l.cu));
		goto fail;
	}
	if (gdr_cuda_dtoh(l.cu, out, l.dst, size))
		goto fail;
	e = memcmp(in, out, size) != 0;
	printf("copy-pipeline loopback (not a network number; %s): %s",
	       memcpy_step ? "staging A -> B by memcpy in place of RDMA" : "no RDMA step",
	       copy == GDR_BOUNCE_COPY_SM ? "sm" : "ce");
	if (copy == GDR_BOUNCE_COPY_SM)
		printf(" x %u blocks", l.blocks);
	printf(", messages of %s in %s chunks, %u slots: %.1f GB/s over %s; %s\n",
	       gdr_fmt_size(size, sz, sizeof(sz)), gdr_fmt_size(chunk, ck, sizeof(ck)), l.slots,
	       (double)total / (double)ns, gdr_fmt_size(total, why, sizeof(why)),
	       e ? "DATA MISMATCH" : "every byte arrived");
	free(in);
	free(out);
	return e;
fail:
	free(in);
	free(out);
	return 1;
}
