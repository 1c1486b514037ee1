/* Prometheus text format, built in memory and written whole (prom.h). */
#include "config.h"

#include "prom.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gdr_prom_name_ok(const char *s, int label)
{
	if (!*s)
		return 0;
	for (const char *c = s; *c; c++) {
		int alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			    (*c == ':' && !label);

		if (!alpha && !(c > s && *c >= '0' && *c <= '9'))
			return 0;
	}
	return 1;
}

int gdr_prom_init(struct gdr_prom *p)
{
	memset(p, 0, sizeof(*p));
	p->mem = open_memstream(&p->buf, &p->len);
	if (!p->mem)
		p->err = -ENOMEM;
	return p->err;
}

void gdr_prom_family(struct gdr_prom *p, const char *name, const char *help)
{
	if (p->err)
		return;
	if (!gdr_prom_name_ok(name, 0) || strlen(name) >= sizeof(p->family[0]) ||
	    p->nfamilies == GDR_PROM_MAX_FAMILIES) {
		p->err = -EINVAL;
		return;
	}
	/* The format allows one block per family: a second one is a bug of ours. */
	for (unsigned int i = 0; i < p->nfamilies; i++)
		if (!strcmp(p->family[i], name)) {
			p->err = -EINVAL;
			return;
		}
	gdr_strlcpy(p->family[p->nfamilies++], name, sizeof(p->family[0]));
	fprintf(p->mem, "# HELP %s ", name);
	gdr_prom_help_text(p->mem, help);
	fprintf(p->mem, "\n# TYPE %s gauge\n", name);
}

void gdr_prom_sample(struct gdr_prom *p, const struct gdr_prom_label *labels, size_t n,
		     const char *value)
{
	if (p->err)
		return;
	if (!p->nfamilies) {
		p->err = -EINVAL;
		return;
	}
	fputs(p->family[p->nfamilies - 1], p->mem);
	for (size_t i = 0; i < n; i++) {
		if (!gdr_prom_name_ok(labels[i].name, 1) || !strncmp(labels[i].name, "__", 2)) {
			p->err = -EINVAL;
			return;
		}
		fprintf(p->mem, "%s%s=\"", i ? "," : "{", labels[i].name);
		gdr_prom_label_value(p->mem, labels[i].value ? labels[i].value : "");
		fputc('"', p->mem);
	}
	fprintf(p->mem, "%s %s\n", n ? "}" : "", value);
}

void gdr_prom_sample_u(struct gdr_prom *p, const struct gdr_prom_label *labels, size_t n,
		       unsigned long long value)
{
	char v[24];

	snprintf(v, sizeof(v), "%llu", value);
	gdr_prom_sample(p, labels, n, v);
}

const char *gdr_prom_text(struct gdr_prom *p, size_t *len)
{
	if (!p->err && p->mem && fflush(p->mem))
		p->err = -ENOMEM;
	if (p->err)
		return NULL;
	*len = p->len;
	return p->buf;
}

int gdr_prom_write(struct gdr_prom *p, const char *path, char *why, size_t wlen)
{
	const char *text;
	size_t len;

	text = gdr_prom_text(p, &len);
	if (!text) {
		snprintf(why, wlen, "%s: %s", path,
			 p->err == -EINVAL ? "a metric or label name out of the text format (a bug)"
					   : strerror(-p->err));
		return p->err;
	}
	return gdr_out_replace(path, text, len, why, wlen);
}

void gdr_prom_free(struct gdr_prom *p)
{
	if (p->mem)
		fclose(p->mem);
	free(p->buf);
	p->mem = NULL;
	p->buf = NULL;
	p->len = 0;
}
