/* --version and the "did you mean" of a mistyped long option, for every C tool. */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <string.h>

#include "util.h"

void gdr_cli_version(FILE *out)
{
	fprintf(out, "%s (%s) %s\n", gdr_progname(), PACKAGE_NAME, PACKAGE_VERSION);
}

static int same_char(char a, char b)
{
	if (a == '_')
		a = '-';
	if (b == '_')
		b = '-';
	return a == b;
}

/*
 * Edits from a[0..la) to b[0..lb): insert, delete, replace, or swap two
 * neighbours (the commonest typo, "--hepl"); 99 when either is longer than 63.
 */
static unsigned int distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned int d[3][64]; /* rows i-2, i-1, i, rotating */

	if (la >= GDR_ARRAY_SIZE(d[0]) || lb >= GDR_ARRAY_SIZE(d[0]))
		return 99;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned int *cur = d[i % 3], *prev = d[(i - 1) % 3], *prev2 = d[(i - 2) % 3];

		cur[0] = (unsigned int)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int best = prev[j - 1] + !same_char(a[i - 1], b[j - 1]);

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && same_char(a[i - 1], b[j - 2]) &&
			    same_char(a[i - 2], b[j - 1]) && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
	}
	return d[la % 3][lb];
}

const char *gdr_cli_nearest(const char *arg, const struct option *opts)
{
	const char *best = NULL;
	unsigned int best_d = 99;
	size_t la;

	while (*arg == '-')
		arg++;
	la = strcspn(arg, "=");
	if (la == 0)
		return NULL;
	for (; opts->name; opts++) {
		size_t lb = strlen(opts->name);
		unsigned int d = distance(arg, la, opts->name, lb);
		unsigned int limit = lb <= 4 ? 1 : 2;

		if (d <= limit && d < best_d) {
			best = opts->name;
			best_d = d;
		}
	}
	return best;
}

/*
 * Did getopt_long refuse the long option in word ("--all=3": optopt is its
 * val), not a short letter of a cluster? Mid-cluster ("-Za") optind has not
 * moved on, and word is the one before, which may be a long option too.
 */
static int long_refused(const char *word, const struct option *opts)
{
	size_t n;

	if (strncmp(word, "--", 2))
		return 0;
	if (optopt == 0 || optopt >= 256)
		return 1;
	n = strcspn(word + 2, "=");
	for (; opts->name; opts++)
		if (opts->val == optopt && n && !strncmp(opts->name, word + 2, n))
			return 1;
	return 0;
}

int gdr_cli_unknown(int argc, char **argv, const struct option *opts, const char *hint)
{
	/* getopt_long leaves optind past the word it refused (or on it, mid-cluster). */
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
	const char *near = NULL;
	char shortopt[3] = { '-', (char)optopt, '\0' };

	if (long_refused(arg, opts)) {
		size_t n = strcspn(arg + 2, "="), hits = 0;
		const char *first = NULL, *second = NULL;

		/* A prefix of several long options: getopt_long refuses it as ambiguous. */
		for (const struct option *o = opts; n && o->name; o++) {
			if (strncmp(o->name, arg + 2, n))
				continue;
			if (hits++ == 0)
				first = o->name;
			else if (hits == 2)
				second = o->name;
		}
		/* "--all=3": the option (its name or the only one it starts) takes no value. */
		for (const struct option *o = opts; n && arg[2 + n] == '=' && o->name; o++) {
			if (strncmp(o->name, arg + 2, n) || (o->name[n] && hits != 1) || o->has_arg)
				continue;
			gdr_err("option '--%s' takes no value: '%s' (see --help)", o->name, arg);
			return -EINVAL;
		}
		if (hits > 1) {
			gdr_err("ambiguous option '%.*s': --%s, --%s%s (see --help)", (int)n + 2,
				arg, first, second, hits > 2 ? ", ..." : "");
			return -EINVAL;
		}
		near = gdr_cli_nearest(arg, opts);
	} else if (optopt > 0 && optopt < 256) {
		arg = shortopt;
	}
	if (near)
		gdr_err("unknown option '%s' (did you mean --%s? see --help)", arg, near);
	else
		gdr_err("unknown option '%s' (see --help%s%s)", arg, hint ? "; " : "",
			hint ? hint : "");
	return -EINVAL;
}

int gdr_cli_no_value(char **argv)
{
	const char *word = argv[optind - 1];

	if (strncmp(word, "--", 2) && optopt > 0 && optopt < 256)
		gdr_err("option '-%c' needs a value (see --help)", optopt);
	else
		gdr_err("option '%s' needs a value (see --help)", word);
	return -EINVAL;
}
