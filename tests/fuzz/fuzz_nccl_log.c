/*
 * libFuzzer target for the NCCL log reader (gdr_doctor --nccl-log): any
 * file a user points it at, then the text and JSON reports built from it.
 */
#define _GNU_SOURCE
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nccl_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gdr_nccl_log log;
	static FILE *sink;
	FILE *in;

	if (size == 0)
		return 0;
	if (!sink)
		sink = fopen("/dev/null", "w");
	in = fmemopen((void *)data, size, "r");
	if (!in)
		return 0;
	gdr_nccl_log_read(in, &log);
	fclose(in);
	if (sink) {
		gdr_nccl_log_print(sink, &log, "fuzz.log");
		gdr_nccl_log_json(sink, &log, "fuzz.log");
	}
	return 0;
}
