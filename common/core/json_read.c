/* A small JSON reader (json_read.h). */
#include "config.h"

#include "json_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jr {
	const char *s;
	size_t len, pos;
	int depth;
	char *why;
	size_t wlen;
};

static int fail(struct jr *r, const char *what)
{
	if (r->why && r->wlen)
		snprintf(r->why, r->wlen, "byte %zu: %s", r->pos, what);
	return -EINVAL;
}

static void skip_ws(struct jr *r)
{
	while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
				   r->s[r->pos] == '\n' || r->s[r->pos] == '\r'))
		r->pos++;
}

static int peek(struct jr *r)
{
	return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static int literal(struct jr *r, const char *word)
{
	size_t n = strlen(word);

	if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n))
		return fail(r, "not a JSON value");
	r->pos += n;
	return 0;
}

static int hex4(struct jr *r, unsigned int *v)
{
	*v = 0;
	if (r->len - r->pos < 4)
		return fail(r, "\\u needs four hex digits");
	for (int i = 0; i < 4; i++) {
		char c = r->s[r->pos++];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned int)(c - 'A' + 10);
		else
			return fail(r, "\\u needs four hex digits");
	}
	return 0;
}

static size_t put_utf8(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* \u escape (the backslash and u read): a code point, surrogate pairs joined. */
static int unicode_escape(struct jr *r, unsigned int *cp)
{
	unsigned int lo;
	int e = hex4(r, cp);

	if (e)
		return e;
	if (*cp >= 0xdc00 && *cp <= 0xdfff) {
		*cp = 0xfffd;
	} else if (*cp >= 0xd800 && *cp <= 0xdbff) {
		if (r->len - r->pos >= 6 && r->s[r->pos] == '\\' && r->s[r->pos + 1] == 'u') {
			size_t save = r->pos;

			r->pos += 2;
			e = hex4(r, &lo);
			if (e)
				return e;
			if (lo >= 0xdc00 && lo <= 0xdfff) {
				*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
				return 0;
			}
			r->pos = save;
		}
		*cp = 0xfffd;
	}
	return 0;
}

/* A string (at its opening quote) into a malloc'd C string. */
static int string(struct jr *r, char **out)
{
	size_t start = ++r->pos, cap = 0, n = 0;
	char *o;

	/* The decoded string is never longer than the raw one. */
	while (r->pos < r->len && r->s[r->pos] != '"') {
		if (r->s[r->pos] == '\\')
			r->pos++;
		r->pos++;
	}
	if (r->pos >= r->len)
		return fail(r, "string without its closing quote");
	cap = r->pos - start + 1;
	r->pos = start;
	o = malloc(cap);
	if (!o)
		return -ENOMEM;
	while (r->s[r->pos] != '"') {
		unsigned char c = (unsigned char)r->s[r->pos++];
		unsigned int cp;
		int e;

		if (c < 0x20) {
			free(o);
			r->pos--;
			return fail(r, "control byte inside a string");
		}
		if (c != '\\') {
			o[n++] = (char)c;
			continue;
		}
		c = (unsigned char)r->s[r->pos++];
		switch (c) {
		case '"':
		case '\\':
		case '/':
			o[n++] = (char)c;
			break;
		case 'b':
			o[n++] = '\b';
			break;
		case 'f':
			o[n++] = '\f';
			break;
		case 'n':
			o[n++] = '\n';
			break;
		case 'r':
			o[n++] = '\r';
			break;
		case 't':
			o[n++] = '\t';
			break;
		case 'u':
			e = unicode_escape(r, &cp);
			if (e) {
				free(o);
				return e;
			}
			n += put_utf8(o + n, cp);
			break;
		default:
			free(o);
			r->pos--;
			return fail(r, "unknown escape in a string");
		}
	}
	r->pos++;
	o[n] = '\0';
	*out = o;
	return 0;
}

static int number(struct jr *r, struct gdr_json *j)
{
	size_t start = r->pos;
	char buf[64], *end;
	int digits = 0, plain = 1;

	if (peek(r) == '-') {
		plain = 0;
		r->pos++;
	}
	while (peek(r) >= '0' && peek(r) <= '9') {
		r->pos++;
		digits++;
	}
	if (!digits)
		return fail(r, "not a JSON value");
	if (peek(r) == '.') {
		plain = 0;
		r->pos++;
		if (!(peek(r) >= '0' && peek(r) <= '9'))
			return fail(r, "a digit must follow the decimal point");
		while (peek(r) >= '0' && peek(r) <= '9')
			r->pos++;
	}
	if (peek(r) == 'e' || peek(r) == 'E') {
		plain = 0;
		r->pos++;
		if (peek(r) == '+' || peek(r) == '-')
			r->pos++;
		if (!(peek(r) >= '0' && peek(r) <= '9'))
			return fail(r, "a digit must follow the exponent");
		while (peek(r) >= '0' && peek(r) <= '9')
			r->pos++;
	}
	if (r->pos - start >= sizeof(buf))
		return fail(r, "number too long");
	memcpy(buf, r->s + start, r->pos - start);
	buf[r->pos - start] = '\0';
	j->type = GDR_JSON_NUMBER;
	j->num = strtod(buf, NULL);
	if (plain) {
		errno = 0;
		j->u = strtoull(buf, &end, 10);
		j->is_uint = errno == 0 && *end == '\0';
	}
	return 0;
}

static int value(struct jr *r, struct gdr_json *j);

/* The members or elements of an object or array (at its opening bracket). */
static int container(struct jr *r, struct gdr_json *j, int object)
{
	struct gdr_json **tail = &j->child;
	char close = object ? '}' : ']';

	if (++r->depth > GDR_JSON_MAX_DEPTH) {
		fail(r, "nested too deep");
		return -E2BIG;
	}
	j->type = object ? GDR_JSON_OBJECT : GDR_JSON_ARRAY;
	r->pos++;
	skip_ws(r);
	if (peek(r) == close) {
		r->pos++;
		r->depth--;
		return 0;
	}
	for (;;) {
		struct gdr_json *c = calloc(1, sizeof(*c));
		int e;

		if (!c)
			return -ENOMEM;
		*tail = c;
		tail = &c->next;
		skip_ws(r);
		if (object) {
			if (peek(r) != '"')
				return fail(r, "an object member needs a quoted name");
			e = string(r, &c->key);
			if (e)
				return e;
			skip_ws(r);
			if (peek(r) != ':')
				return fail(r, "':' must follow a member's name");
			r->pos++;
		}
		e = value(r, c);
		if (e)
			return e;
		skip_ws(r);
		if (peek(r) == ',') {
			r->pos++;
			continue;
		}
		if (peek(r) == close) {
			r->pos++;
			r->depth--;
			return 0;
		}
		return fail(r, object ? "',' or '}' expected" : "',' or ']' expected");
	}
}

static int value(struct jr *r, struct gdr_json *j)
{
	skip_ws(r);
	switch (peek(r)) {
	case '{':
		return container(r, j, 1);
	case '[':
		return container(r, j, 0);
	case '"':
		j->type = GDR_JSON_STRING;
		return string(r, &j->str);
	case 't':
		j->type = GDR_JSON_TRUE;
		return literal(r, "true");
	case 'f':
		j->type = GDR_JSON_FALSE;
		return literal(r, "false");
	case 'n':
		j->type = GDR_JSON_NULL;
		return literal(r, "null");
	case -1:
		return fail(r, "the text ends where a value should be");
	default:
		return number(r, j);
	}
}

void gdr_json_free(struct gdr_json *j)
{
	while (j) {
		struct gdr_json *next = j->next;

		gdr_json_free(j->child);
		free(j->key);
		free(j->str);
		free(j);
		j = next;
	}
}

int gdr_json_parse(const char *text, size_t len, struct gdr_json **out, char *why, size_t wlen)
{
	struct jr r = { .s = text, .len = len, .why = why, .wlen = wlen };
	struct gdr_json *j = calloc(1, sizeof(*j));
	int e;

	*out = NULL;
	if (!j)
		return -ENOMEM;
	e = value(&r, j);
	if (!e) {
		skip_ws(&r);
		if (r.pos != r.len)
			e = fail(&r, "text after the value");
	}
	if (e) {
		gdr_json_free(j);
		return e;
	}
	*out = j;
	return 0;
}

const struct gdr_json *gdr_json_get(const struct gdr_json *obj, const char *key)
{
	if (!obj || obj->type != GDR_JSON_OBJECT)
		return NULL;
	for (const struct gdr_json *c = obj->child; c; c = c->next)
		if (c->key && !strcmp(c->key, key))
			return c;
	return NULL;
}
