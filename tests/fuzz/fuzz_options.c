/*
 * libFuzzer target for the command line: each input line is one argument,
 * the first is argv[0] ("gdr_read_bw" parses as the READ program).
 * gdr_opts_parse() prints its complaints on stderr.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 1];
	char *copy, *p, *end;
	int argc = 0;
	enum gdr_verb verb;
	struct gdr_opts o;
	static int quiet;

	if (size > 4096)
		return 0;
	/* --help and --version print on stdout; a fuzzer run need not show them. */
	if (!quiet)
		quiet = freopen("/dev/null", "w", stdout) != NULL;
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (p = copy; argc < MAX_ARGS && p <= copy + size; p = end + 1) {
		end = strchr(p, '\n');
		if (!end)
			end = copy + size;
		*end = '\0';
		argv[argc++] = p;
	}
	argv[argc] = NULL;
	/* argv[0] picks the program, so both verbs' tables are covered. */
	verb = strstr(argv[0], "read") ? GDR_VERB_READ : GDR_VERB_WRITE;
	gdr_opts_parse(&o, verb, argc, argv);
	free(copy);
	return 0;
}
