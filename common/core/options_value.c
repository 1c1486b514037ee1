/*
 * One option's value: integers and seconds in range, sizes with K/M/G
 * suffixes, the -a / --sizes ladder, --label text, the --mem list. Every
 * refusal names the option and the value.
 */
#include "config.h"

#include "options_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "report.h"
#include "text.h"
#include "util.h"

/* The CSV/JSON label field, NUL included. */
#define GDR_LABEL_MAX sizeof(((struct gdr_result *)0)->label)

int gdr_opt_bad(const char *opt, const char *val, const char *why)
{
	gdr_err("%s '%s': %s (see --help)", opt, val, why);
	return -EINVAL;
}

int gdr_opt_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	char why[96];
	unsigned long long v;

	/* A digit first: strtoull would skip blanks and take a sign after them. */
	if (!s || !isdigit((unsigned char)*s))
		return gdr_opt_bad(opt, s ? s : "", "not a non-negative integer");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return gdr_opt_bad(opt, s, "not a non-negative integer");
	if (v < min || v > max) {
		snprintf(why, sizeof(why), "out of range %" PRIu64 "..%" PRIu64, min, max);
		return gdr_opt_bad(opt, s, why);
	}
	*out = v;
	return 0;
}

int gdr_opt_seconds(const char *opt, const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || isspace((unsigned char)*s) || *s == '+' || *end || !isfinite(v) ||
	    v <= 0 || v > max)
		return gdr_opt_bad(opt, s, "not a positive number of seconds in range");
	*out = v;
	return 0;
}

int gdr_opt_repeat(const char *s, unsigned int *min, unsigned int *max)
{
	const char *colon = strchr(s, ':');
	char lo[24], why[160];
	uint64_t a, b;

	if (!colon) {
		if (gdr_opt_uint("--repeat", s, 1, GDR_REPEAT_MAX, &a))
			return -EINVAL;
		*min = *max = (unsigned int)a;
		return 0;
	}
	if ((size_t)(colon - s) >= sizeof(lo))
		return gdr_opt_bad("--repeat", s, "expected N or MIN:MAX");
	memcpy(lo, s, (size_t)(colon - s));
	lo[colon - s] = '\0';
	if (gdr_opt_uint("--repeat MIN", lo, GDR_DECIDE_MIN_ROUNDS, GDR_REP_KEEP, &a) ||
	    gdr_opt_uint("--repeat MAX", colon + 1, GDR_DECIDE_MIN_ROUNDS, GDR_REP_KEEP, &b))
		return -EINVAL;
	if (a > b) {
		snprintf(why, sizeof(why), "MIN %" PRIu64 " is above MAX %" PRIu64, a, b);
		return gdr_opt_bad("--repeat", s, why);
	}
	*min = (unsigned int)a;
	*max = (unsigned int)b;
	return 0;
}

int gdr_opt_pct(const char *opt, const char *s, double max, double *out)
{
	char *end, why[96];
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*end == '%')
		end++;
	if (errno || end == s || isspace((unsigned char)*s) || *s == '+' || *end || !isfinite(v) ||
	    !(v > 0 && v <= max)) {
		snprintf(why, sizeof(why), "expected a percentage in (0, %g], e.g. 1 or 1%%", max);
		return gdr_opt_bad(opt, s, why);
	}
	*out = v / 100.0;
	return 0;
}

int gdr_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int gdr_sizes_range(uint64_t min, uint64_t max, uint64_t *sizes, unsigned int *n)
{
	unsigned int k = 0;
	uint64_t s;

	if (min == 0 || min > max)
		return -EINVAL;
	for (s = min; s <= max; s *= 2) {
		if (k == GDR_MAX_SIZES)
			return -E2BIG;
		sizes[k++] = s;
		if (s > UINT64_MAX / 2)
			break;
	}
	/* MAX itself is always measured, even when it is not MIN times a power of two. */
	if (sizes[k - 1] != max) {
		if (k == GDR_MAX_SIZES)
			return -E2BIG;
		sizes[k++] = max;
	}
	*n = k;
	return 0;
}

/*
 * --label goes into a CSV and a JSON field as it is: it must be UTF-8 text
 * without control bytes (a newline would end the CSV row, an escape sequence
 * reaches every terminal that prints the file). A label longer than the
 * field is cut there, at a character boundary, and said so.
 */
int gdr_opt_label(const char *s)
{
	const unsigned char *p;

	if (!gdr_utf8_valid(s))
		return gdr_opt_bad("--label", s, "not UTF-8 text");
	for (p = (const unsigned char *)s; *p; p++)
		/* C0, DEL, and C1 (U+0080..U+009F, UTF-8 0xc2 0x80..0x9f: the 8-bit CSI). */
		if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return gdr_opt_bad("--label", s, "holds a control character");
	if (strlen(s) >= GDR_LABEL_MAX) {
		char cut[GDR_LABEL_MAX];

		gdr_utf8_copy(cut, s, sizeof(cut));
		gdr_warn("--label is %zu bytes: cut to the first %zu, at a character boundary "
			 "(\"%s\")",
			 strlen(s), strlen(cut), cut);
	}
	return 0;
}

/* One side of LOCAL:REMOTE: a path or all, as a set of kind bits. */
static int side_word(const char *arg, const char *tok, unsigned int *bits)
{
	char why[96];
	int k;

	if (!strcmp(tok, "all")) {
		*bits = (1u << GDR_MEM__COUNT) - 1;
		return 0;
	}
	k = gdr_mem_kind_parse(tok);
	if (k < 0) {
		snprintf(why, sizeof(why), "unknown path '%s' (host, dmabuf, peermem, bounce, all)",
			 tok);
		return gdr_opt_bad("--mem", arg, why);
	}
	*bits = 1u << k;
	return 0;
}

/* "all" or a comma list of paths, each once, into kinds[0..*n). */
static int path_list(const char *opt, const char *arg, enum gdr_mem_kind *kinds, unsigned int *n)
{
	char buf[128];
	char *save = NULL, *tok;
	unsigned int seen = 0;

	if (strlen(arg) >= sizeof(buf))
		return gdr_opt_bad(opt, arg, "too long");
	gdr_strlcpy(buf, arg, sizeof(buf));
	*n = 0;
	if (!strcmp(buf, "all")) {
		for (int k = 0; k < GDR_MEM__COUNT; k++)
			kinds[(*n)++] = (enum gdr_mem_kind)k;
		return 0;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = gdr_mem_kind_parse(tok);
		char why[96];

		if (k < 0) {
			snprintf(why, sizeof(why),
				 "unknown path '%s' (host, dmabuf, peermem, bounce, all)", tok);
			return gdr_opt_bad(opt, arg, why);
		}
		if (seen & (1u << k)) {
			snprintf(why, sizeof(why), "path '%s' listed twice", tok);
			return gdr_opt_bad(opt, arg, why);
		}
		seen |= 1u << k;
		kinds[(*n)++] = (enum gdr_mem_kind)k;
	}
	if (!*n)
		return gdr_opt_bad(opt, arg, "empty list");
	return 0;
}

/* Add every combination of the two sets, each once; this side's paths follow (o->mem). */
static int add_pairs(struct gdr_opts *o, const char *arg, unsigned int lbits, unsigned int rbits)
{
	for (int l = 0; l < GDR_MEM__COUNT; l++) {
		for (int r = 0; (lbits & (1u << l)) && r < GDR_MEM__COUNT; r++) {
			unsigned int i, seen = 0;
			char why[96];

			if (!(rbits & (1u << r)))
				continue;
			for (i = 0; i < o->npairs; i++)
				if (o->mem_pairs[i].client == l && o->mem_pairs[i].server == r)
					break;
			if (i < o->npairs) {
				snprintf(why, sizeof(why), "combination '%s:%s' listed twice",
					 gdr_mem_kind_name((enum gdr_mem_kind)l),
					 gdr_mem_kind_name((enum gdr_mem_kind)r));
				return gdr_opt_bad("--mem", arg, why);
			}
			o->mem_pairs[o->npairs++] =
			    (struct gdr_mem_pair){ (unsigned char)l, (unsigned char)r };
			for (i = 0; i < o->nmem; i++)
				seen |= o->mem[i] == (enum gdr_mem_kind)l;
			if (!seen)
				o->mem[o->nmem++] = (enum gdr_mem_kind)l;
		}
	}
	return 0;
}

/* --mem LOCAL:REMOTE,...: every entry a combination (all on a side: every path). */
static int pair_list(struct gdr_opts *o, const char *arg)
{
	char buf[256];
	char *save = NULL, *tok;
	int r;

	if (strlen(arg) >= sizeof(buf))
		return gdr_opt_bad("--mem", arg, "too long");
	gdr_strlcpy(buf, arg, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		unsigned int lbits, rbits;
		char why[160];

		if (!colon || strchr(colon + 1, ':')) {
			snprintf(why, sizeof(why),
				 "entry '%s' is not LOCAL:REMOTE (with one, give every entry as "
				 "LOCAL:REMOTE, e.g. host:peermem)",
				 tok);
			return gdr_opt_bad("--mem", arg, why);
		}
		*colon = '\0';
		r = side_word(arg, tok, &lbits);
		if (!r)
			r = side_word(arg, colon + 1, &rbits);
		if (!r)
			r = add_pairs(o, arg, lbits, rbits);
		if (r)
			return r;
	}
	if (!o->npairs)
		return gdr_opt_bad("--mem", arg, "empty list");
	return 0;
}

int gdr_opt_mem_list(struct gdr_opts *o, const char *arg)
{
	o->nmem = 0;
	o->npairs = 0;
	if (strchr(arg, ':'))
		return pair_list(o, arg);
	return path_list("--mem", arg, o->mem, &o->nmem);
}

int gdr_opt_mem_remote(struct gdr_opts *o, const char *arg)
{
	return path_list("--mem-remote", arg, o->mem_remote, &o->nmem_remote);
}

int gdr_opt_mtu(const char *s, unsigned int *out)
{
	uint64_t v;

	if (gdr_opt_uint("-m/--mtu", s, 256, 4096, &v))
		return -EINVAL;
	if (v & (v - 1))
		return gdr_opt_bad("-m/--mtu", s, "expected 256, 512, 1024, 2048 or 4096");
	*out = (unsigned int)v;
	return 0;
}

int gdr_opt_tos(const char *opt, const char *s, int *out)
{
	uint64_t v;

	if (gdr_opt_uint(opt, s, 0, 255, &v))
		return -EINVAL;
	if (*out >= 0 && *out != (int)v) {
		char why[96];

		snprintf(why, sizeof(why), "-T/--tos and --tclass set one byte: already %d", *out);
		return gdr_opt_bad(opt, s, why);
	}
	*out = (int)v;
	return 0;
}
