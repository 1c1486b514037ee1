/* RDMA WRITE bandwidth, GPU or host memory, client/server. */
#include "config.h"

#include "bench.h"

int main(int argc, char **argv)
{
	return gdr_bench_main(argc, argv, GDR_VERB_WRITE);
}
