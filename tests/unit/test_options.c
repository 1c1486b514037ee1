#include "cmocka_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "lat_opts.h"
#include "options.h"
#include "pin.h"
#include "util.h"

#define ARGV(...)     ((char *[]){ "gdr_write_bw", __VA_ARGS__, NULL })
#define ARGC(...)     ((int)(sizeof((char *[]){ "gdr_write_bw", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, ...) gdr_opts_parse(o, GDR_VERB_WRITE, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_defaults_server(void **state)
{
	struct gdr_opts o;
	char *argv[] = { "gdr_write_bw", NULL };

	(void)state;
	assert_int_equal(gdr_opts_parse(&o, GDR_VERB_WRITE, 1, argv), 0);
	assert_null(o.server);
	assert_int_equal(o.nsizes, 1);
	assert_int_equal(o.sizes[0], 65536);
	assert_int_equal(o.iters, 5000);
	assert_int_equal(o.port, GDR_DEFAULT_PORT);
	assert_int_equal(o.nmem, 1);
	assert_int_equal(o.mem[0], GDR_MEM_HOST);
	assert_int_equal(o.set, 0);
	assert_int_equal(o.pin, 0); /* not pinned unless --pin */
}

/*
 * --pin / --no-pin: the bandwidth tools take both, the last one wins; a
 * latency tool refuses either (never pinned).
 */
static void test_pin(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--pin"), 0);
	assert_int_equal(o.pin, 1);
	assert_int_equal(gdr_lat_opts_check(&o), -EINVAL);
	assert_int_equal(PARSE(&o, "--pin", "--no-pin"), 0);
	assert_int_equal(o.pin, 0);
	assert_int_equal(gdr_lat_opts_check(&o), -EINVAL);
	assert_int_equal(PARSE(&o, "--no-pin", "--pin"), 0);
	assert_int_equal(o.pin, 1);
	assert_int_equal(PARSE(&o, "--no-bind"), 0);
	assert_int_equal(o.pin, 0);
	assert_int_equal(gdr_lat_opts_check(&o), 0);
}

/* gdr_read_bw pins by default (measured: docs/reading-the-numbers.md); both flags still win. */
#define PARSE_READ(o, ...) gdr_opts_parse(o, GDR_VERB_READ, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))
static void test_pin_read_default(void **state)
{
	struct gdr_opts o;
	char *argv[] = { "gdr_read_bw", NULL };

	(void)state;
	assert_int_equal(gdr_opts_parse(&o, GDR_VERB_READ, 1, argv), 0);
	assert_int_equal(o.pin, GDR_PIN_SMALL); /* messages up to 1 MiB (pin.h) */
	assert_true(gdr_pin_wanted(o.pin, GDR_PIN_SMALL_MAX));
	assert_false(gdr_pin_wanted(o.pin, GDR_PIN_SMALL_MAX + 1));
	assert_int_equal(o.set & GDR_SET_PIN, 0);
	assert_int_equal(gdr_lat_opts_check(&o), 0); /* the default is not a refused flag */
	assert_int_equal(PARSE_READ(&o, "--no-pin"), 0);
	assert_int_equal(o.pin, 0);
	assert_int_equal(PARSE_READ(&o, "--no-pin", "--pin"), 0);
	assert_int_equal(o.pin, GDR_PIN_ALWAYS);
	assert_true(gdr_pin_wanted(o.pin, 8u << 20));
	assert_int_equal(PARSE_READ(&o, "--pin", "--no-pin"), 0);
	assert_int_equal(o.pin, 0);
	assert_int_equal(gdr_lat_opts_check(&o), -EINVAL);
}

static void test_perftest_options(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-d", "rxe0", "-i", "1", "-p", "9999", "-s", "4K", "-n", "100",
			       "-q", "2", "-t", "64", "-l", "4", "-Q", "8", "-b", "-x", "3", "-R",
			       "--report_gbits", "10.0.0.1"),
			 0);
	assert_string_equal(o.server, "10.0.0.1");
	assert_string_equal(o.dev, "rxe0");
	assert_int_equal(o.port, 9999);
	assert_int_equal(o.sizes[0], 4096);
	assert_int_equal(o.iters, 100);
	assert_int_equal(o.qps, 2);
	assert_int_equal(o.tx_depth, 64);
	assert_int_equal(o.post_list, 4);
	assert_int_equal(o.cq_mod, 8);
	assert_true(o.bidir);
	assert_true(o.gbits);
	assert_true(o.set & GDR_SET_QPS);
}

/* "did you mean": '-' and '_' alike, a swap of neighbours is one edit, far names none. */
static void test_nearest_option(void **state)
{
	static const struct option opts[] = {
		{ .name = "report_gbits" }, { .name = "help" },	  { .name = "qp" },
		{ .name = "topology-xml" }, { .name = "repeat" }, {},
	};

	(void)state;
	assert_string_equal(gdr_cli_nearest("--report-gbits", opts), "report_gbits");
	assert_string_equal(gdr_cli_nearest("--report_gbit", opts), "report_gbits");
	assert_string_equal(gdr_cli_nearest("--hepl", opts), "help");
	assert_string_equal(gdr_cli_nearest("--topology_xml=f.xml", opts), "topology-xml");
	assert_string_equal(gdr_cli_nearest("--repaet", opts), "repeat");
	assert_null(gdr_cli_nearest("--frobnicate", opts));
	assert_null(gdr_cli_nearest("--", opts));
	assert_null(gdr_cli_nearest("--ab", opts)); /* 2 edits from qp: too short to guess */
}

/*
 * docs/perftest-options.md: every perftest option with its example value
 * through the parser. "same", "alias", "accepted" and "ignored" parse;
 * "refused" fails. A row the table adds or changes is tested as written.
 */
static void parse_perftest_row(const char *opt, const char *val, const char *what)
{
	struct gdr_opts o;
	char *argv[4] = { "gdr_write_bw", (char *)opt, (char *)val, NULL };
	int argc = *val ? 3 : 2;
	int r = gdr_opts_parse(&o, GDR_VERB_WRITE, argc, argv);
	int want_ok = strncmp(what, "refused", 7) != 0;

	if (want_ok != (r >= 0)) /* 1: --help or --version printed */
		fail_msg("docs/perftest-options.md: %s %s: parse %d, table says '%s'", opt, val, r,
			 what);
}

static void test_perftest_table(void **state)
{
	const char *top = getenv("top_srcdir");
	char path[4096], line[1024];
	unsigned int rows = 0, opts = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/perftest-options.md", top ? top : ".");
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: cannot open", path);
	while (fgets(line, sizeof(line), f)) {
		char optcell[128], val[128], what[512];
		char *names[2] = { NULL, NULL };

		/* | `-s, --size` | 64K | same | */
		if (sscanf(line, "| `%127[^`]` | %127[^|]| %511[^|]|", optcell, val, what) != 3) {
			if (sscanf(line, "| `%127[^`]` | | %511[^|]|", optcell, what) != 2)
				continue;
			val[0] = '\0';
		}
		for (char *e = val + strlen(val); e > val && e[-1] == ' ';)
			*--e = '\0';
		names[0] = optcell;
		char *comma = strstr(optcell, ", ");
		if (comma) {
			*comma = '\0';
			names[1] = comma + 2;
		}
		rows++;
		for (int k = 0; k < 2 && names[k]; k++, opts++)
			parse_perftest_row(names[k], val, what);
	}
	fclose(f);
	assert_true(rows >= 80); /* the table lists every perftest option */
	assert_true(opts > rows);
}

/* perftest's options with perftest's meaning, and their refusals. */
static void test_perftest_values(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-T", "106", "-m", "1024", "--source_ip", "10.0.0.2",
			       "--use_hugepages", "-c", "RC", "-F", "-S", "0", "-I", "0"),
			 0);
	assert_int_equal(o.tos, 106);
	assert_true(o.set & GDR_SET_TOS);
	assert_int_equal(o.mtu, 1024);
	assert_string_equal(o.bind_addr, "10.0.0.2");
	assert_true(o.hugepages);
	assert_true(o.perftest_noop & GDR_NOOP_CPU_FREQ);
	assert_int_equal(PARSE(&o, "--tclass", "96"), 0);
	assert_int_equal(o.tos, 96);
	assert_int_equal(PARSE(&o, "-p", "18515"), 0);
	assert_int_equal(o.tos, -1);
	assert_int_equal(o.mtu, 0);
	assert_int_equal(PARSE(&o, "-T", "106", "--tclass", "106"), 0);
	assert_int_equal(PARSE(&o, "-T", "106", "--tclass", "96"), -EINVAL);
	assert_int_equal(PARSE(&o, "-T", "256"), -EINVAL);
	assert_int_equal(PARSE(&o, "-c", "UD"), -EINVAL);
	assert_int_equal(PARSE(&o, "-m", "1000"), -EINVAL);
	assert_int_equal(PARSE(&o, "-m", "8192"), -EINVAL);
	assert_int_equal(PARSE(&o, "-S", "3"), -EINVAL);
	assert_int_equal(PARSE(&o, "-I", "64"), -EINVAL);
}

static void test_sizes(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-a"), 0);
	assert_int_equal(o.nsizes, 23); /* 2 B .. 8 MiB */
	assert_int_equal(o.sizes[0], 2);
	assert_int_equal(o.sizes[22], 8u << 20);
	assert_int_equal(PARSE(&o, "--sizes", "4K:1M"), 0);
	assert_int_equal(o.nsizes, 9);
	assert_int_equal(o.sizes[8], 1u << 20);
	assert_int_equal(PARSE(&o, "--sizes", "3000:8000"), 0);
	assert_int_equal(o.nsizes, 3); /* 3000 6000 8000: MAX always measured */
	assert_int_equal(o.sizes[2], 8000);
}

static void test_parse_size(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(gdr_parse_size("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(gdr_parse_size("2MiB", &v), 0);
	assert_int_equal(v, 2u << 20);
	assert_int_equal(gdr_parse_size("1g", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(gdr_parse_size("100", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(gdr_parse_size("", &v), -EINVAL);
	assert_int_equal(gdr_parse_size("-1", &v), -EINVAL);
	assert_int_equal(gdr_parse_size("4X", &v), -EINVAL);
	assert_int_equal(gdr_parse_size("K", &v), -EINVAL);
	assert_int_equal(gdr_parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(gdr_parse_size("17179869184G", &v), -ERANGE);
	/* strtoull skips any blank, not only a space: every one is refused. */
	assert_int_equal(gdr_parse_size(" 4K", &v), -EINVAL);
	assert_int_equal(gdr_parse_size("\t4K", &v), -EINVAL);
	assert_int_equal(gdr_parse_size("\n4", &v), -EINVAL);
}

static void test_bad_values_exit_2(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-n", "abc"), -EINVAL);
	assert_int_equal(PARSE(&o, "-n", "0"), -EINVAL);
	assert_int_equal(PARSE(&o, "-q", "65"), -EINVAL);
	assert_int_equal(PARSE(&o, "-s", "0"), -EINVAL);
	assert_int_equal(PARSE(&o, "-s", "2G"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "70000"), -EINVAL);
	assert_int_equal(PARSE(&o, "--mem", "gpu"), -EINVAL);
	assert_int_equal(PARSE(&o, "--mem", "host,host"), -EINVAL);
	assert_int_equal(PARSE(&o, "--sizes", "1M:4K"), -EINVAL);
	assert_int_equal(PARSE(&o, "--sizes", "4K"), -EINVAL);
	assert_int_equal(PARSE(&o, "-s", "4K", "-a"), -EINVAL);
	assert_int_equal(PARSE(&o, "-n", "5", "-D", "2"), -EINVAL);
	assert_int_equal(PARSE(&o, "-t", "4", "-l", "8"), -EINVAL);
	assert_int_equal(PARSE(&o, "-t", "4", "-Q", "8"), -EINVAL);
	assert_int_equal(PARSE(&o, "--timeout", "-3"), -EINVAL);
	assert_int_equal(PARSE(&o, "--no-such-option"), -EINVAL);
	assert_int_equal(PARSE(&o, "a", "b"), -EINVAL);
	assert_int_equal(PARSE(&o, "--use_cuda=0", "--mem", "host"), -EINVAL);
	assert_int_equal(PARSE(&o, "--gpu", "auto"), -EINVAL);
	assert_int_equal(PARSE(&o, "--gpu", "auto", "-d", "auto"), -EINVAL);
	assert_int_equal(PARSE(&o, "--persistent", "srv"), -EINVAL);
	/* Blanks before a number, a sign after them: not a number (strtoull skips them). */
	assert_int_equal(PARSE(&o, "-s", "\t4K"), -EINVAL);
	assert_int_equal(PARSE(&o, "-n", " 4"), -EINVAL);
	assert_int_equal(PARSE(&o, "-q", "\t2"), -EINVAL);
	assert_int_equal(PARSE(&o, "--repeat", " -1"), -EINVAL);
	assert_int_equal(PARSE(&o, "-D", " 2"), -EINVAL);
	assert_int_equal(PARSE(&o, "--timeout", "\t5"), -EINVAL);
	assert_int_equal(PARSE(&o, "--timeout", "+5"), -EINVAL);
	/* -D below the plan's 1 ms became 0 ms, which means "-n": refused. */
	assert_int_equal(PARSE(&o, "-D", "0.0004"), -EINVAL);
	assert_int_equal(PARSE(&o, "-D", "1e-9"), -EINVAL);
	assert_int_equal(PARSE(&o, "-D", "0.001"), 0);
	assert_true(o.duration == 0.001);
}

/*
 * Rounds (issue 51): --repeat N fixed, MIN:MAX until decided; the default
 * with two or more paths; --alpha, --margin, --time-per-size only with
 * rounds until decided; the latency tools keep --repeat N.
 */
static void test_rounds_options(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--repeat", "7"), 0);
	assert_true(o.repeat_min == 7 && o.repeat == 7);
	assert_int_equal(PARSE(&o, "--repeat", "5:40"), 0);
	assert_true(o.repeat_min == 5 && o.repeat == 40);
	assert_true(o.alpha == 0.01 && o.margin == 0.05 && o.size_time == 0);
	/* One path: perftest's single pass; two or more: rounds until decided. */
	assert_int_equal(PARSE(&o, "srv"), 0);
	assert_true(o.repeat_min == 1 && o.repeat == 1);
	assert_int_equal(PARSE(&o, "--mem", "host,bounce", "srv"), 0);
	assert_true(o.repeat_min == GDR_ROUNDS_MIN && o.repeat == GDR_ROUNDS_MAX);
	assert_int_equal(PARSE(&o, "--mem", "host,bounce", "--repeat", "3", "srv"), 0);
	assert_true(o.repeat_min == 3 && o.repeat == 3);
	/* Each side its own memory (issue 48): the combinations count, not this side's paths. */
	assert_int_equal(PARSE(&o, "--mem", "host", "--mem-remote", "host,dmabuf", "srv"), 0);
	assert_true(o.repeat_min == GDR_ROUNDS_MIN && o.repeat == GDR_ROUNDS_MAX);
	assert_int_equal(PARSE(&o, "--mem", "dmabuf:peermem", "srv"), 0);
	assert_true(o.repeat_min == 1 && o.repeat == 1);
	assert_int_equal(PARSE(&o, "--mem", "dmabuf:peermem,peermem:peermem", "srv"), 0);
	assert_true(o.repeat_min == GDR_ROUNDS_MIN && o.repeat == GDR_ROUNDS_MAX);
	assert_int_equal(PARSE(&o, "--mem", "all", "--alpha", "5%", "--margin", "10",
			       "--time-per-size", "30", "srv"),
			 0);
	assert_true(o.alpha == 0.05 && o.margin == 0.1 && o.size_time == 30);
	/* Refused: fewer than 3 rounds to decide on, more than a row keeps, MIN above MAX. */
	assert_int_equal(PARSE(&o, "--repeat", "2:40"), -EINVAL);
	assert_int_equal(PARSE(&o, "--repeat", "5:129"), -EINVAL);
	assert_int_equal(PARSE(&o, "--repeat", "9:8"), -EINVAL);
	assert_int_equal(PARSE(&o, "--repeat", "5:"), -EINVAL);
	assert_int_equal(PARSE(&o, "--repeat", ":5"), -EINVAL);
	assert_int_equal(PARSE(&o, "--alpha", "0", "--repeat", "5:9"), -EINVAL);
	assert_int_equal(PARSE(&o, "--alpha", "51", "--repeat", "5:9"), -EINVAL);
	assert_int_equal(PARSE(&o, "--margin", "x", "--repeat", "5:9"), -EINVAL);
	/* The rule's options with fixed rounds: they would change nothing. */
	assert_int_equal(PARSE(&o, "--alpha", "5", "--repeat", "5"), -EINVAL);
	assert_int_equal(PARSE(&o, "--time-per-size", "5"), -EINVAL);
	/* The latency tools: a row is every sample of every repeat, no rounds to pair. */
	assert_int_equal(PARSE(&o, "--repeat", "5:9"), 0);
	o.latency = 1;
	assert_int_equal(gdr_lat_opts_check(&o), -EINVAL);
	assert_int_equal(PARSE(&o, "--mem", "host,dmabuf", "--alpha", "5"), 0);
	o.latency = 1;
	assert_int_equal(gdr_lat_opts_check(&o), -EINVAL);
}

static void test_cq_mod_capped(void **state)
{
	struct gdr_opts o;

	(void)state;
	/* perftest's default -Q 100 with -t 16 would deadlock: it is capped, not an error. */
	assert_int_equal(PARSE(&o, "-t", "16"), 0);
	assert_int_equal(o.cq_mod, 16);
}

static void test_mem_and_gpu(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--mem", "all"), 0);
	assert_int_equal(o.nmem, GDR_MEM__COUNT);
	assert_int_equal(PARSE(&o, "--mem", "bounce,host"), 0);
	assert_int_equal(o.nmem, 2);
	assert_int_equal(o.mem[0], GDR_MEM_BOUNCE);
	assert_int_equal(o.mem[1], GDR_MEM_HOST);
	assert_int_equal(PARSE(&o, "--gpu", "0"), 0);
	assert_int_equal(o.nmem, GDR_MEM__COUNT); /* --gpu alone: every path */
	assert_int_equal(PARSE(&o, "--use_cuda=1"), 0);
	assert_string_equal(o.gpu, "1");
	assert_int_equal(o.mem[0], GDR_MEM_PEERMEM);
	assert_int_equal(PARSE(&o, "--use_cuda_bus_id=0000:3b:00.0", "--use_cuda_dmabuf"), 0);
	assert_string_equal(o.gpu, "0000:3b:00.0");
	assert_int_equal(o.nmem, 1);
	assert_int_equal(o.mem[0], GDR_MEM_DMABUF);
}

static int parse_err(struct gdr_opts *o, int argc, char **argv, char *err, size_t len);

/* The combination k of o's --mem LOCAL:REMOTE list is client:server. */
static void assert_pair(const struct gdr_opts *o, unsigned int k, enum gdr_mem_kind client,
			enum gdr_mem_kind server)
{
	assert_true(k < o->npairs);
	assert_int_equal(o->mem_pairs[k].client, client);
	assert_int_equal(o->mem_pairs[k].server, server);
}

/*
 * Each side its own memory (issue 48): --mem-remote names the server's side,
 * --mem LOCAL:REMOTE each combination (all on a side: every path); this
 * side's paths stay in o->mem (each once, in order).
 */
static void test_mem_per_side(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--mem", "host", "--mem-remote", "peermem,bounce", "srv"), 0);
	assert_int_equal(o.nmem, 1);
	assert_int_equal(o.nmem_remote, 2);
	assert_int_equal(o.mem_remote[0], GDR_MEM_PEERMEM);
	assert_int_equal(o.mem_remote[1], GDR_MEM_BOUNCE);
	assert_int_equal(o.npairs, 0);
	assert_true(o.set & GDR_SET_MEM_REMOTE);
	assert_int_equal(PARSE(&o, "--mem", "all", "--mem-remote", "all", "srv"), 0);
	assert_int_equal(o.nmem, GDR_MEM__COUNT);
	assert_int_equal(o.nmem_remote, GDR_MEM__COUNT);
	/* --mem-remote alone: this side keeps its default (host; every path with --gpu). */
	assert_int_equal(PARSE(&o, "--mem-remote", "dmabuf", "srv"), 0);
	assert_int_equal(o.nmem, 1);
	assert_int_equal(o.mem[0], GDR_MEM_HOST);
	assert_int_equal(PARSE(&o, "--gpu", "0", "--mem-remote", "host", "srv"), 0);
	assert_int_equal(o.nmem, GDR_MEM__COUNT);
	/* perftest's --use_cuda chooses this side; --mem-remote the other. */
	assert_int_equal(PARSE(&o, "--use_cuda=0", "--mem-remote", "host", "srv"), 0);
	assert_int_equal(o.mem[0], GDR_MEM_PEERMEM);
	assert_int_equal(o.mem_remote[0], GDR_MEM_HOST);

	assert_int_equal(PARSE(&o, "--mem", "dmabuf:dmabuf,peermem:peermem,dmabuf:peermem", "srv"),
			 0);
	assert_int_equal(o.npairs, 3);
	assert_pair(&o, 0, GDR_MEM_DMABUF, GDR_MEM_DMABUF);
	assert_pair(&o, 1, GDR_MEM_PEERMEM, GDR_MEM_PEERMEM);
	assert_pair(&o, 2, GDR_MEM_DMABUF, GDR_MEM_PEERMEM);
	assert_int_equal(o.nmem, 2); /* dmabuf, peermem: each once, in order */
	assert_int_equal(o.mem[0], GDR_MEM_DMABUF);
	assert_int_equal(o.mem[1], GDR_MEM_PEERMEM);
	assert_int_equal(o.nmem_remote, 0);
	assert_true(o.set & GDR_SET_MEM_REMOTE);
	assert_true(o.set & GDR_SET_MEM);
	/* all on a side: every path there, in the paths' order. */
	assert_int_equal(PARSE(&o, "--mem", "host:all", "srv"), 0);
	assert_int_equal(o.npairs, GDR_MEM__COUNT);
	assert_pair(&o, 3, GDR_MEM_HOST, GDR_MEM_BOUNCE);
	assert_int_equal(o.nmem, 1);
	assert_int_equal(PARSE(&o, "--mem", "all:all", "srv"), 0);
	assert_int_equal(o.npairs, GDR_MAX_PAIRS);
	assert_pair(&o, 5, GDR_MEM_DMABUF, GDR_MEM_DMABUF);
	assert_int_equal(o.nmem, GDR_MEM__COUNT);
	assert_int_equal(PARSE(&o, "--mem", "bounce:host,host:bounce", "srv"), 0);
	assert_pair(&o, 0, GDR_MEM_BOUNCE, GDR_MEM_HOST);
	assert_pair(&o, 1, GDR_MEM_HOST, GDR_MEM_BOUNCE);
	/* A later --mem replaces an earlier one, combinations and all. */
	assert_int_equal(PARSE(&o, "--mem", "host:peermem", "--mem", "bounce", "srv"), 0);
	assert_int_equal(o.npairs, 0);
	assert_false(o.set & GDR_SET_MEM_REMOTE);
	assert_int_equal(o.mem[0], GDR_MEM_BOUNCE);
	/* Nothing named: no remote side, as before. */
	assert_int_equal(PARSE(&o, "--mem", "host,peermem", "srv"), 0);
	assert_false(o.set & GDR_SET_MEM_REMOTE);
	/* The latency tools take the same options. */
	assert_int_equal(
	    gdr_opts_parse_tool(&o, GDR_VERB_READ, 1, 5,
				ARGV("--mem", "bounce", "--mem-remote", "host", "srv")),
	    0);
	assert_int_equal(gdr_lat_opts_check(&o), 0);
	assert_int_equal(o.mem_remote[0], GDR_MEM_HOST);
}

/* The refusals of the per-side options name the option, the value and why. */
static void test_mem_per_side_refused(void **state)
{
	static const struct {
		const char *args[6];
		const char *want;
	} bad[] = {
		{ { "--mem-remote", "gpu", "srv" }, "--mem-remote 'gpu': unknown path 'gpu'" },
		{ { "--mem-remote", "host,host", "srv" }, "path 'host' listed twice" },
		{ { "--mem-remote", ",", "srv" }, "--mem-remote ',': empty list" },
		{ { "--mem", "host:gpu", "srv" }, "--mem 'host:gpu': unknown path 'gpu'" },
		{ { "--mem", "host,dmabuf:peermem", "srv" },
		  "entry 'host' is not LOCAL:REMOTE (with one, give every entry as LOCAL:REMOTE" },
		{ { "--mem", "host:peermem:dmabuf", "srv" }, "is not LOCAL:REMOTE" },
		{ { "--mem", "host:peermem,host:peermem", "srv" },
		  "combination 'host:peermem' listed twice" },
		{ { "--mem", "host:all,host:bounce", "srv" },
		  "combination 'host:bounce' listed twice" },
		{ { "--mem", ":", "srv" }, "unknown path ''" },
		{ { "--mem", "host:peermem", "--mem-remote", "host", "srv" },
		  "--mem LOCAL:REMOTE and --mem-remote exclude each other: both name the server's "
		  "side" },
		{ { "--mem-remote", "host", "--persistent" },
		  "--mem-remote and --persistent exclude each other: the client names the server's "
		  "side; a server chooses its own with --mem" },
		{ { "--mem-remote", "host", "--loopback" }, "--mem-remote and --loopback exclude" },
		{ { "--mem", "host:host", "--sweep", "pairs" },
		  "--mem LOCAL:REMOTE and --sweep exclude each other: a sweep measures each path "
		  "on "
		  "both sides" },
		{ { "--use_cuda=0", "--mem", "host:peermem", "srv" },
		  "--use_cuda* aliases and --mem exclude each other" },
	};
	char err[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[8] = { "gdr_write_bw" };
		int argc = 1;
		struct gdr_opts o;

		while (argc < 7 && bad[i].args[argc - 1])
			argv[argc] = (char *)bad[i].args[argc - 1], argc++;
		assert_int_equal(parse_err(&o, argc, argv, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("case %zu: stderr '%s' lacks '%s'", i, err, bad[i].want);
	}
}

/* The GPU path options of docs/gpu-paths.md. */
static void test_gpu_path_options(void **state)
{
	struct gdr_opts o;
	FILE *saved = stderr;

	(void)state;
	assert_int_equal(PARSE(&o, "--gpu", "0"), 0);
	assert_int_equal(o.gpu_allocs, 1u << GDR_GPU_ALLOC_MEMALLOC);
	assert_int_equal(o.dmabuf_pcie + o.no_relaxed + o.data_direct, 0);
	assert_int_equal(PARSE(&o, "--gpu-alloc=vmm", "--dmabuf-mapping=pcie",
			       "--disable_pcie_relaxed", "--use_data_direct"),
			 0);
	assert_int_equal(o.gpu_allocs, 1u << GDR_GPU_ALLOC_VMM);
	assert_int_equal(o.dmabuf_pcie, 1);
	assert_int_equal(o.no_relaxed, 1);
	assert_int_equal(o.data_direct, 1);
	assert_int_equal(PARSE(&o, "--gpu-alloc", "all", "--dmabuf-mapping", "default"), 0);
	assert_int_equal(o.gpu_allocs, 3);
	assert_int_equal(o.dmabuf_pcie, 0);
	assert_int_equal(PARSE(&o, "--gpu=GPU-6a1c2f3e-0000-1111-2222-333344445555"), 0);
	assert_string_equal(o.gpu, "GPU-6a1c2f3e-0000-1111-2222-333344445555");
	stderr = fopen("/dev/null", "w");
	assert_int_equal(PARSE(&o, "--gpu-alloc=cudaMalloc"), -EINVAL);
	assert_int_equal(PARSE(&o, "--dmabuf-mapping=c2c"), -EINVAL);
	fclose(stderr);
	stderr = saved;
}

static void test_launch_and_server_modes(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--launch=auto"), 0);
	assert_false(o.no_launch);
	assert_false(o.no_mpi);
	assert_int_equal(PARSE(&o, "--launch=no-mpi"), 0);
	assert_false(o.no_launch);
	assert_true(o.no_mpi);
	assert_int_equal(PARSE(&o, "--launch", "none"), 0);
	assert_true(o.no_launch);
	assert_false(o.no_mpi);
	assert_int_equal(PARSE(&o, "--launch=mpi"), -EINVAL);
	assert_int_equal(PARSE(&o, "--launch="), -EINVAL);
	assert_int_equal(PARSE(&o, "--peer", "a,b"), 0);
	assert_string_equal(o.peer, "a,b");
	assert_int_equal(PARSE(&o, "--peer", ""), -EINVAL);
	assert_int_equal(PARSE(&o, "--persistent", "--bind", "10.0.0.1"), 0);
	assert_true(o.persistent);
	assert_string_equal(o.bind_addr, "10.0.0.1");
	assert_null(o.server);
}

/* --sweep's mode must not leak into the parser's status (1 = help printed, exit 0). */
static void test_sweep_options(void **state)
{
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-n", "10"), 0);
	assert_int_equal(o.sweep, 0);
	assert_true(o.outlier == 0.9);
	assert_int_equal(PARSE(&o, "--sweep=pairs"), 0);
	assert_int_equal(o.sweep, 1);
	assert_int_equal(PARSE(&o, "--sweep", "ring", "--sweep-both", "--outlier", "0.5"), 0);
	assert_int_equal(o.sweep, 2);
	assert_true(o.sweep_both);
	assert_true(o.outlier == 0.5);
	assert_int_equal(PARSE(&o, "--sweep=fixed"), 0);
	assert_int_equal(o.sweep, 0);
	assert_int_equal(PARSE(&o, "--sweep=all"), -EINVAL);
	assert_int_equal(PARSE(&o, "--outlier=0"), -EINVAL);
	assert_int_equal(PARSE(&o, "--outlier=1.5"), -EINVAL);
	assert_int_equal(PARSE(&o, "--outlier=nan"), -EINVAL);
	assert_int_equal(PARSE(&o, "--outlier=0.9x"), -EINVAL);
	assert_int_equal(PARSE(&o, "--outlier= 0.5"), -EINVAL);
	assert_int_equal(PARSE(&o, "--outlier=+0.5"), -EINVAL);
	assert_int_equal(PARSE(&o, "--outlier=1"), 0);
}

/* Parse argv with stderr captured into err; returns what gdr_opts_parse returned. */
static int parse_err(struct gdr_opts *o, int argc, char **argv, char *err, size_t len)
{
	char name[] = "/tmp/gdr-opts-err-XXXXXX";
	int fd = mkstemp(name), saved = dup(STDERR_FILENO), r;
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, STDERR_FILENO);
	r = gdr_opts_parse(o, GDR_VERB_WRITE, argc, argv);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, err, len - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(name);
	return r;
}

/*
 * Every option --help shows with a value ("-s, --size=SIZE", "--csv=FILE"),
 * given last without it, says "needs a value": the list comes from --help
 * itself, so an option added later is covered too.
 */
static void test_every_value_option_needs_a_value(void **state)
{
	char help[16384], err[1024], opt[64];
	struct gdr_opts o;
	FILE *f = fmemopen(help, sizeof(help), "w");
	int checked = 0;

	(void)state;
	assert_non_null(f);
	gdr_opts_usage(f, GDR_VERB_WRITE);
	fclose(f);
	for (char *p = help; (p = strstr(p, "--")); p += 2) {
		size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz_-") + 2;
		char *argv[] = { "gdr_write_bw", opt, NULL };

		if (p[n] != '=' || n >= sizeof(opt))
			continue;
		memcpy(opt, p, n);
		opt[n] = '\0';
		assert_int_equal(parse_err(&o, 2, argv, err, sizeof(err)), -EINVAL);
		if (!strstr(err, "needs a value"))
			fail_msg("%s given last: \"%s\"", opt, err);
		/* Its short form, when --help shows one ("-s, --size=SIZE"). */
		if (p - help >= 4 && p[-2] == ',' && p[-4] == '-') {
			opt[0] = '-';
			opt[1] = p[-3];
			opt[2] = '\0';
			assert_int_equal(parse_err(&o, 2, argv, err, sizeof(err)), -EINVAL);
			if (!strstr(err, "needs a value"))
				fail_msg("%s given last: \"%s\"", opt, err);
			checked++;
		}
		checked++;
	}
	/* 19 long value options today, 10 of them with a short form. */
	assert_true(checked >= 29);
}

/*
 * Two outputs naming one file: --json (or --prom) would replace the file the
 * CSV rows were appended to. Refused before anything runs, exit 2; the file
 * is left as it was. Devices and our own descriptors may take two.
 */
static void test_outputs_same_file(void **state)
{
	char dir[] = "/tmp/gdr-opts-out-XXXXXX", f[64], alias[80], err[512];
	struct gdr_opts o;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/r.csv", dir);
	snprintf(alias, sizeof(alias), "%s/./r.csv", dir);
	assert_int_equal(parse_err(&o, ARGC("--csv", f, "--json", f), ARGV("--csv", f, "--json", f),
				   err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "the same file"));
	assert_int_equal(PARSE(&o, "--json", f, "--prom", f), -EINVAL);
	/* Nothing is created. */
	assert_int_equal(stat(f, &st), -1);
	assert_int_equal(PARSE(&o, "--csv", f, "--json", alias), -EINVAL); /* not there yet */
	assert_int_equal(stat(f, &st), -1);
	assert_int_equal(PARSE(&o, "--csv", f, "--json", dir), 0); /* its own check: a directory */
	FILE *fp = fopen(f, "w");
	assert_non_null(fp);
	fputs("old\n", fp);
	fclose(fp);
	assert_int_equal(PARSE(&o, "--csv", f, "--json", alias), -EINVAL);
	assert_int_equal(PARSE(&o, "--loopback", "--nfd", f, "--prom", alias), -EINVAL);
	/* The topology the run reads is no output either: --json would replace it. */
	assert_int_equal(PARSE(&o, "--topology-xml", f, "--json", alias), -EINVAL);
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_int_equal(PARSE(&o, "--csv", "/dev/null", "--json", "/dev/null"), 0);
	/* Two on stdout would mix CSV rows and a JSON array (gdr_doctor refuses it too). */
	assert_int_equal(PARSE(&o, "--csv", "-", "--json", "-"), -EINVAL);
	assert_int_equal(PARSE(&o, "--json", "-", "--prom", "/dev/stdout"), -EINVAL);
	assert_int_equal(PARSE(&o, "--json", "-", "--prom", "/dev/stderr"), 0);
	assert_int_equal(PARSE(&o, "--csv", "-", "--json", f), 0);
	assert_int_equal(PARSE(&o, "--csv", f, "--json", "/dev/null"), 0);
	unlink(f);
	/* One FIFO: CSV rows and the JSON array would mix for its reader. */
	assert_int_equal(mkfifo(f, 0600), 0);
	assert_int_equal(PARSE(&o, "--csv", f, "--json", alias), -EINVAL);
	unlink(f);
	rmdir(dir);
}

/* An empty SERVER is an empty value (exit 2), not a host to resolve. */
static void test_empty_server(void **state)
{
	struct gdr_opts o;
	char err[512];

	(void)state;
	assert_int_equal(parse_err(&o, ARGC(""), ARGV(""), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "SERVER '': empty host name or address"));
	assert_int_equal(
	    parse_err(&o, ARGC("-s", "4K", ""), ARGV("-s", "4K", ""), err, sizeof(err)), -EINVAL);
}

/* A MIN too long for its buffer is a bad size, not a missing colon. */
static void test_sizes_long_min(void **state)
{
	struct gdr_opts o;
	char err[512];
	char *argv[] = { "gdr_write_bw", "--sizes", "1234567890123456789012345678901234:1M", NULL };

	(void)state;
	assert_int_equal(parse_err(&o, 3, argv, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "MIN and MAX must be sizes from 1 B to 1G"));
	assert_null(strstr(err, "expected MIN:MAX"));
}

static void test_empty_values_refused(void **state)
{
	static const char *const opts[] = { "--csv",	"--json", "--topology-xml",    "--bind",
					    "--ib-dev", "--gpu",  "--use_cuda_bus_id", "--peer" };
	char err[1024];
	struct gdr_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		char *argv[] = { "gdr_write_bw", (char *)opts[i], "", NULL };

		assert_int_equal(parse_err(&o, 3, argv, err, sizeof(err)), -EINVAL);
		if (!strstr(err, opts[i]) || !strstr(err, "''"))
			fail_msg("%s '': \"%s\"", opts[i], err);
	}
}

static void test_label(void **state)
{
	char err[1024], label[300] = "";
	struct gdr_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--label", "run \xc3\xa9t\xc3\xa9 #1"), 0);
	assert_string_equal(o.label, "run \xc3\xa9t\xc3\xa9 #1");
	/* U+00A0 and U+00FF (0xc2 0xa0, 0xc3 0xbf) are text, not C1 controls. */
	assert_int_equal(PARSE(&o, "--label", "a\xc2\xa0 b\xc3\xbf"), 0);
	/* Not UTF-8, or control bytes (a newline ends a CSV row): refused. */
	char *bad[] = { "a\xff", "a\xc3", "a\nb",	  "a\rb",      "a\x1b[2J",
			"a\x7f", "a\tb",  "a\xc2\x9b[2J", "a\xc2\x80", "\xc2\x9f" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "gdr_write_bw", "--label", bad[i], NULL };

		assert_int_equal(parse_err(&o, 3, argv, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "--label"));
	}
	/* Too long for the field: accepted with a warning saying where it is cut. */
	for (int i = 0; i < 100; i++)
		strcat(label, "\xc3\xa9");
	char *argv[] = { "gdr_write_bw", "--label", label, NULL };
	assert_int_equal(parse_err(&o, 3, argv, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "warning: --label is 200 bytes: cut to the first 126"));
}

static void test_help(void **state)
{
	struct gdr_opts o;
	FILE *saved = stdout;

	(void)state;
	stdout = fopen("/dev/null", "w");
	assert_int_equal(PARSE(&o, "--help"), 1);
	fclose(stdout);
	stdout = saved;
}

/* Every --help line of the four bench tools fits 80 columns; --nfd names the tool's labels. */
static void test_help_width(void **state)
{
	static const char *const nfd[] = {
		"gdrperf.loopback-write-bw=", "gdrperf.loopback-read-bw=",
		"gdrperf.loopback-write-lat=", "gdrperf.loopback-read-lat="
	};

	(void)state;
	for (int i = 0; i < 4; i++) {
		enum gdr_verb verb = i % 2 ? GDR_VERB_READ : GDR_VERB_WRITE;
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		assert_non_null(m);
		if (i < 2)
			gdr_opts_usage(m, verb);
		else
			gdr_lat_usage(m, verb);
		fclose(m);
		for (const char *p = text; *p;) {
			size_t n = strcspn(p, "\n");

			if (n > 80)
				fail_msg("%s --help: a line of %zu columns: %.*s", nfd[i], n,
					 (int)n, p);
			p += n + (p[n] == '\n');
		}
		if (!strstr(text, nfd[i]))
			fail_msg("--help does not name %s", nfd[i]);
		free(text);
	}
}

/* -vh and --he (an abbreviation) reach the parser: a latency tool prints its own --help. */
static void test_lat_help_through_parser(void **state)
{
	static const char *const words[] = { "-vh", "--he", "--hel" };
	struct gdr_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		char *argv[] = { "gdr_write_lat", (char *)words[i], NULL };
		char *text = NULL;
		size_t len = 0;
		FILE *saved = stdout;

		stdout = open_memstream(&text, &len);
		assert_non_null(stdout);
		assert_int_equal(gdr_opts_parse_tool(&o, GDR_VERB_WRITE, 1, 2, argv), 1);
		fclose(stdout);
		stdout = saved;
		if (!strstr(text, "Usage: gdr_write_lat") || strstr(text, "gdr_write_bw [options]"))
			fail_msg("gdr_write_lat %s printed: %.80s", words[i], text);
		free(text);
	}
}

/* A mistyped or ambiguous option through the parser: exit 2 with the guess. */
static void test_unknown_option_message(void **state)
{
	struct gdr_opts o;
	char err[512];

	(void)state;
	assert_int_equal(
	    parse_err(&o, ARGC("--report-gbits"), ARGV("--report-gbits"), err, sizeof(err)),
	    -EINVAL);
	assert_non_null(
	    strstr(err, "unknown option '--report-gbits' (did you mean --report_gbits?"));
	assert_int_equal(parse_err(&o, ARGC("--rep"), ARGV("--rep"), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ambiguous option '--rep': --report_gbits, --repeat"));
	assert_int_equal(parse_err(&o, ARGC("-r", "128"), ARGV("-r", "128"), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "unknown option '-r' (see --help; perftest's options: "
				    "docs/perftest-options.md)"));
	/* An unknown letter first in a cluster: named, not the word before it. */
	assert_int_equal(
	    parse_err(&o, ARGC("-s", "4K", "-Za"), ARGV("-s", "4K", "-Za"), err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "unknown option '-Z'"));
	assert_null(strstr(err, "4K"));
	assert_int_equal(
	    parse_err(&o, ARGC("--label=x", "-Zb"), ARGV("--label=x", "-Zb"), err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "unknown option '-Z'"));
	assert_null(strstr(err, "--label"));
	/* A cluster ending in a value option without its value names that option. */
	assert_int_equal(parse_err(&o, ARGC("-as"), ARGV("-as"), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "option '-s' needs a value"));
	/* A value to an option that takes none. */
	assert_int_equal(parse_err(&o, ARGC("--all=3"), ARGV("--all=3"), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "option '--all' takes no value: '--all=3'"));
	assert_int_equal(parse_err(&o, ARGC("--valid=1"), ARGV("--valid=1"), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "option '--validate' takes no value"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_server),
		cmocka_unit_test(test_pin),
		cmocka_unit_test(test_pin_read_default),
		cmocka_unit_test(test_gpu_path_options),
		cmocka_unit_test(test_perftest_options),
		cmocka_unit_test(test_nearest_option),
		cmocka_unit_test(test_unknown_option_message),
		cmocka_unit_test(test_perftest_table),
		cmocka_unit_test(test_perftest_values),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_bad_values_exit_2),
		cmocka_unit_test(test_rounds_options),
		cmocka_unit_test(test_empty_server),
		cmocka_unit_test(test_outputs_same_file),
		cmocka_unit_test(test_sizes_long_min),
		cmocka_unit_test(test_cq_mod_capped),
		cmocka_unit_test(test_mem_and_gpu),
		cmocka_unit_test(test_mem_per_side),
		cmocka_unit_test(test_mem_per_side_refused),
		cmocka_unit_test(test_launch_and_server_modes),
		cmocka_unit_test(test_sweep_options),
		cmocka_unit_test(test_every_value_option_needs_a_value),
		cmocka_unit_test(test_empty_values_refused),
		cmocka_unit_test(test_label),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_help_width),
		cmocka_unit_test(test_lat_help_through_parser),
	};
	gdr_set_progname("test_options");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
