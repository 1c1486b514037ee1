/* gdr_topo: where each GPU sits relative to each RDMA NIC, and what NCCL would make of it. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exit_status.h"
#include "nccl_settings.h"
#include "topo.h"
#include "topo_report.h"
#include "util.h"
#include "writer.h"

struct topo_opts {
	const char *xml, *csv, *json, *level, *read, *root;
	int pairs;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: gdr_topo [OPTIONS]\n"
		"GPU x RDMA NIC matrix in the legend of `nvidia-smi topo -m`, the nearest NIC of\n"
		"each GPU, whether NCCL would use GPUDirect RDMA for it under NCCL's effective\n"
		"settings (NCCL_NET_GDR_LEVEL, _READ, NCCL_DMABUF_ENABLE, NCCL_NET_GDR_C2C, or\n"
		"NCCL's defaults), and the setting that would where it would not.\n"
		"\n"
		"Options:\n"
		"      --topology-xml FILE  read an hwloc XML export (lstopo FILE.xml) instead of\n"
		"                           this system; $HWLOC_XMLFILE is used when not given;\n"
		"                           a regular file of at most 64 MiB\n"
		"      --root DIR           read sysfs (NIC fallback, links, PCIe configuration\n"
		"                           space) below DIR instead of /: a fixture tree, or\n"
		"                           the node an XML export came from\n"
		"      --pairs              also print one line per GPU x NIC pair: switches and\n"
		"                           bridges crossed, NUMA nodes, NCCL verdict\n"
		"      --csv FILE           write one record per GPU x NIC pair as CSV\n"
		"      --json FILE          write the same records as JSON\n"
		"                           (FILE - is stdout, and then the matrix is not\n"
		"                           printed; a regular FILE is replaced atomically)\n"
		"      --nccl-gdr-level L   judge as if NCCL_NET_GDR_LEVEL=L (LOC, PIX, PXB, PHB,\n"
		"                           SYS or a legacy number 0..5, larger = SYS, as in\n"
		"                           NCCL); default: the environment, else PXB; given,\n"
		"                           the variable is not read\n"
		"      --nccl-gdr-read N    judge as if NCCL_NET_GDR_READ=N (0 or 1); given, the\n"
		"                           variable is not read\n"
		"  -h, --help               show this help and exit\n"
		"  -V, --version            program version\n"
		"\n"
		"When the topology is this system or --root is given, a section \"PCIe health\n"
		"and ceiling per pair\" follows: each pair's expected ceiling (the lowest of\n"
		"the NIC port rate and both PCIe links) and the status of gdr_doctor's ACS,\n"
		"IOMMU/ATS, link, MaxPayload/MaxReadReq and relaxed-ordering checks\n"
		"(docs/pcie-health.md); --json carries them as \"ceiling_gbps\" and \"pcie\".\n"
		"\n"
		"Warnings (on stderr, alike ones in one line): GPUs whose nearest NIC is SYS,\n"
		"GPUs that must share their nearest NIC, NICs with no GPU at PIX or PXB, a\n"
		"virtual PCI tree (a Hyper-V VM's). SYS* in the matrix: assumed (NUMA unknown).\n"
		"Control bytes in names from the XML are printed as \\xHH.\n"
		"Exit status (docs/exit-status.md): 0 done (warnings included), 1 this system's\n"
		"topology could not be read or an output file failed, 2 usage or input error:\n"
		"a bad option (one without its value, an empty file name, a value out of\n"
		"range), a bad NCCL_NET_GDR_* or NCCL_DMABUF_ENABLE value, or a\n"
		"--topology-xml/HWLOC_XMLFILE that is not a readable regular file, not hwloc\n"
		"XML, or has more than 1024 GPUs or 2048 NICs.\n");
}

enum { OPT_XML = 256, OPT_CSV, OPT_JSON, OPT_PAIRS, OPT_LEVEL, OPT_READ, OPT_ROOT };

static int parse(int argc, char **argv, struct topo_opts *o)
{
	static const struct option longopts[] = {
		{ .name = "topology-xml", .has_arg = 1, .val = OPT_XML },
		{ .name = "csv", .has_arg = 1, .val = OPT_CSV },
		{ .name = "json", .has_arg = 1, .val = OPT_JSON },
		{ .name = "pairs", .has_arg = 0, .val = OPT_PAIRS },
		{ .name = "root", .has_arg = 1, .val = OPT_ROOT },
		{ .name = "nccl-gdr-level", .has_arg = 1, .val = OPT_LEVEL },
		{ .name = "nccl-gdr-read", .has_arg = 1, .val = OPT_READ },
		{ .name = "help", .has_arg = 0, .val = 'h' },
		{ .name = "version", .has_arg = 0, .val = 'V' },
		{}
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_XML:
			o->xml = optarg;
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_PAIRS:
			o->pairs = 1;
			break;
		case OPT_ROOT:
			o->root = optarg;
			break;
		case OPT_LEVEL:
			o->level = optarg;
			break;
		case OPT_READ:
			o->read = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(GDR_EXIT_OK);
		case 'V':
			gdr_cli_version(stdout);
			exit(GDR_EXIT_OK);
		case ':':
			gdr_cli_no_value(argv);
			return -1;
		default:
			return gdr_cli_unknown(argc, argv, longopts, NULL);
		}
	}
	if (optind < argc) {
		gdr_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	if (o->root && !*o->root) {
		gdr_err("--root: empty directory name");
		return -1;
	}
	if ((o->csv && !*o->csv) || (o->json && !*o->json) || (o->xml && !*o->xml)) {
		gdr_err("%s: empty file name", o->csv && !*o->csv     ? "--csv"
					       : o->json && !*o->json ? "--json"
								      : "--topology-xml");
		return -1;
	}
	return 0;
}

/* The option's value: a level name or a legacy number, read as NCCL reads the variable. */
static int level_opt(const char *s, enum gdr_nccl_level *out)
{
	char why[256];

	if (!*s || gdr_nccl_parse_level(s, out, why, sizeof(why)))
		return -EINVAL;
	return 0;
}

static int nccl_env(const struct topo_opts *o, struct gdr_nccl_env *env)
{
	/*
	 * An explicit option replaces its variable, which is then not even read: a
	 * garbage NCCL_NET_GDR_LEVEL does not stop --nccl-gdr-level PHB.
	 */
	const char *lv = o->level ? NULL : getenv("NCCL_NET_GDR_LEVEL");
	const char *rd = o->read ? NULL : getenv("NCCL_NET_GDR_READ");
	char why[256];
	int dmabuf, c2c;

	memset(env, 0, sizeof(*env));
	env->level_set = lv && *lv;
	if (gdr_nccl_parse_level(lv, &env->level, why, sizeof(why)) ||
	    gdr_nccl_parse_read(rd, &env->read, why, sizeof(why)) ||
	    gdr_nccl_parse_flag("NCCL_DMABUF_ENABLE", getenv("NCCL_DMABUF_ENABLE"), &dmabuf, why,
				sizeof(why)) ||
	    gdr_nccl_parse_flag("NCCL_NET_GDR_C2C", getenv("NCCL_NET_GDR_C2C"), &c2c, why,
				sizeof(why))) {
		gdr_err("%s", why);
		return -1;
	}
	env->dmabuf_set = dmabuf >= 0;
	env->dmabuf = dmabuf > 0;
	env->c2c_set = c2c >= 0;
	env->c2c = c2c > 0;
	if (o->level) {
		int r = level_opt(o->level, &env->level);

		if (r) {
			gdr_err("--nccl-gdr-level %s: not a level (LOC, PIX, PXB, PHB, SYS, or a "
				"legacy number: 0..5, larger = SYS)",
				o->level);
			return -1;
		}
		env->level_set = 1;
	}
	if (o->read) {
		if (strcmp(o->read, "0") && strcmp(o->read, "1")) {
			gdr_err("--nccl-gdr-read %s: not 0 or 1 (0 = off, 1 = on)", o->read);
			return -1;
		}
		env->read = o->read[0] == '1';
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct topo_opts o = { 0 };
	struct gdr_nccl_env env;
	const char *bad = NULL;
	struct gdr_topo *t;
	char why[512];
	int rc = 0;

	gdr_set_progname(argv[0]);
	gdr_out_signals();
	if (parse(argc, argv, &o) || nccl_env(&o, &env))
		return GDR_EXIT_USAGE;
	/* An output that cannot be written fails before the topology is read. */
	if (o.csv && gdr_out_check(o.csv, why, sizeof(why)))
		bad = "--csv";
	else if (o.json && gdr_out_check(o.json, why, sizeof(why)))
		bad = "--json";
	if (bad) {
		gdr_err("%s %s", bad, why);
		return GDR_EXIT_FAIL;
	}
	if (gdr_topo_load(&t, o.xml, o.root, why, sizeof(why))) {
		const char *env_xml = getenv("HWLOC_XMLFILE");

		gdr_err("%s", why);
		/* A file the user named is an input error; this system's topology, a failure. */
		return o.xml || (env_xml && *env_xml) ? GDR_EXIT_USAGE : GDR_EXIT_FAIL;
	}
	/* CSV or JSON on stdout is all that goes there. */
	if (!(o.csv && gdr_out_fd(o.csv) == 1) && !(o.json && gdr_out_fd(o.json) == 1)) {
		gdr_topo_print(stdout, t, &env, o.pairs);
		gdr_topo_print_pcie(stdout, t);
	}
	gdr_topo_warn(t);
	if (o.csv && gdr_topo_write_csv(t, &env, o.csv, why, sizeof(why))) {
		gdr_err("--csv %s", why);
		rc = GDR_EXIT_FAIL;
	}
	if (o.json && gdr_topo_write_json(t, &env, o.json, why, sizeof(why))) {
		gdr_err("--json %s", why);
		rc = GDR_EXIT_FAIL;
	}
	gdr_topo_free(t);
	return rc;
}
