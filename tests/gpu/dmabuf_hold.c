/*
 * dmabuf_hold: export GPU memory as a dma-buf and hold the fd, so that the
 * GPU machine's recipe (tests/gpu/run-on-gpu.sh) can record the exporter's
 * name the driver gives it (/proc/PID/fdinfo/FD "exp_name:", which exists
 * only while a process holds the fd) and, where debugfs is mounted, the
 * buffer's bufinfo line, and run gdr_doctor --live beside it.
 *
 * Usage: dmabuf_hold [--gpu N|BDF|UUID] [--size SIZE] [--timeout SEC]
 * cuMemAlloc SIZE (default 2M) on the GPU, cuMemGetHandleForAddressRange
 * (DMA_BUF_FD), then prints "pid PID fd FD", the fd's fdinfo lines, and
 * "held", and waits for the end of stdin (at most --timeout seconds, default
 * 60) before it closes the fd and frees the memory.
 * Exit 0: exported and held; 1: the driver refused (why on stderr); 2: usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda.h"
#include "options.h"
#include "util.h"

#include "../tools/stdin_eof.h"

static int usage(void)
{
	fprintf(stderr, "usage: dmabuf_hold [--gpu N|BDF|UUID] [--size SIZE] [--timeout SEC]\n");
	return 2;
}

/* Print /proc/self/fdinfo/FD as it is. */
static void print_fdinfo(int fd)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f) {
		printf("fdinfo: %s: %s\n", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { .name = "gpu", .has_arg = 1, .val = 'g' },
						  { .name = "size", .has_arg = 1, .val = 's' },
						  { .name = "timeout", .has_arg = 1, .val = 't' },
						  {} };
	const char *spec = "0";
	uint64_t size = 2u << 20, dptr = 0;
	struct gdr_cuda *cu = NULL;
	struct gdr_gpu gpu;
	char why[512];
	int c, timeout = 60, fd = -1;

	gdr_set_progname(argv[0]);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			spec = optarg;
			break;
		case 's':
			if (gdr_parse_size(optarg, &size) || !size)
				return usage();
			break;
		case 't':
			timeout = atoi(optarg);
			if (timeout <= 0)
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (optind != argc)
		return usage();
	if (gdr_cuda_load(&cu, why, sizeof(why)) ||
	    gdr_cuda_find_gpu(cu, spec, &gpu, why, sizeof(why)) ||
	    gdr_cuda_gpu_open(cu, &gpu, why, sizeof(why)) ||
	    gdr_cuda_alloc(cu, (size_t)size, &dptr, why, sizeof(why)) ||
	    gdr_cuda_dmabuf_fd(cu, dptr, (size_t)size, &fd, why, sizeof(why))) {
		gdr_err("%s", why);
		if (dptr)
			gdr_cuda_free(cu, dptr);
		gdr_cuda_unload(cu);
		return 1;
	}
	printf("pid %d fd %d\n", (int)getpid(), fd);
	print_fdinfo(fd);
	printf("held\n");
	fflush(stdout);
	gdr_wait_stdin_eof(timeout);
	close(fd);
	gdr_cuda_free(cu, dptr);
	gdr_cuda_gpu_close(cu, &gpu);
	gdr_cuda_unload(cu);
	return 0;
}
