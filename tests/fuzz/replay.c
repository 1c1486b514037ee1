/*
 * main() for a fuzz target built without libFuzzer: runs the target once on
 * each file named on the command line, so `make check` (and the sanitizer
 * build) replays every corpus input, crashers included, with any compiler.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		size_t len = 0, cap = 0, n;

		if (!f) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 2;
		}
		do {
			if (len == cap) {
				uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 4096);

				if (!nb) {
					fprintf(stderr, "%s: out of memory\n", argv[i]);
					return 2;
				}
				buf = nb;
			}
			n = fread(buf + len, 1, cap - len, f);
			len += n;
		} while (n > 0);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
	}
	return 0;
}
