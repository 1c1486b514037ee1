/*
 * doc_plan: what a command line of the docs would run, from the real parser
 * and plan, for tests/docs/t_walkthrough.sh to hold the pages' commands
 * against (nothing connects):
 *   doc_plan TOOL ARGS...   TOOL one of gdr_write_bw, gdr_read_bw,
 *                           gdr_write_lat, gdr_read_lat
 * prints one line: "client: C:S C:S ..." (the plan's combinations, the
 * client's path and the server's, in the order of the rotation), "server:
 * adopts" (a server that takes the client's side), or "server: P,P" (a
 * server's own --mem, its side). A command the tool would refuse exits 2
 * with the tool's message on stderr.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lat_opts.h"
#include "options.h"
#include "proto.h"

int main(int argc, char **argv)
{
	struct gdr_opts o;
	struct gdr_plan p;
	enum gdr_verb verb;
	int latency, r;

	if (argc < 2 || (strcmp(argv[1], "gdr_write_bw") && strcmp(argv[1], "gdr_read_bw") &&
			 strcmp(argv[1], "gdr_write_lat") && strcmp(argv[1], "gdr_read_lat"))) {
		fprintf(stderr, "usage: doc_plan gdr_write_bw|gdr_read_bw|gdr_write_lat|"
				"gdr_read_lat ARGS...\n");
		return 2;
	}
	verb = strstr(argv[1], "read") ? GDR_VERB_READ : GDR_VERB_WRITE;
	latency = strstr(argv[1], "_lat") != NULL;
	r = gdr_opts_parse_tool(&o, verb, latency, argc - 1, argv + 1);
	if (!r && latency)
		r = gdr_lat_opts_check(&o);
	if (r)
		return r > 0 ? 0 : 2;
	o.latency = latency;
	if (!o.server) {
		/* As launch_setup.c's check for a server started by hand. */
		if (o.set & GDR_SET_MEM_REMOTE) {
			fprintf(stderr, "%s: --mem-remote or --mem LOCAL:REMOTE on a server\n",
				argv[1]);
			return 2;
		}
		if (!(o.set & GDR_SET_MEM)) {
			printf("server: adopts\n");
			return 0;
		}
		printf("server:");
		for (unsigned int i = 0; i < o.nmem; i++)
			printf("%s%s", i ? "," : " ", gdr_mem_kind_name(o.mem[i]));
		printf("\n");
		return 0;
	}
	gdr_plan_from_opts(&o, 0, &p);
	printf("client:");
	for (unsigned int i = 0; i < p.npairs; i++)
		printf(" %s:%s", gdr_mem_kind_name((enum gdr_mem_kind)p.pairs[i].client),
		       gdr_mem_kind_name((enum gdr_mem_kind)p.pairs[i].server));
	printf("\n");
	return 0;
}
