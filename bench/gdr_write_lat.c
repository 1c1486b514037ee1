/* RDMA WRITE latency (ping-pong, perftest style), GPU or host memory, client/server. */
#include "config.h"

#include "bench.h"

int main(int argc, char **argv)
{
	return gdr_bench_lat_main(argc, argv, GDR_VERB_WRITE);
}
