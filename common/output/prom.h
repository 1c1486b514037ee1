/*
 * Prometheus text exposition format (0.0.4) for node_exporter's textfile
 * collector (docs/cluster-outputs.md): built in memory, family by family,
 * and written whole through gdr_out_replace, so that a failed run leaves an
 * earlier file as it was. Every family is a gauge with one HELP and one TYPE
 * line and its samples together; label values are escaped
 * (gdr_prom_label_value). gdr_doctor --prom and the bench tools' --prom
 * (report_prom.c) both write through here.
 */
#ifndef GDR_PROM_H
#define GDR_PROM_H

#include <stddef.h>
#include <stdio.h>

struct gdr_prom_label {
	const char *name; /* [a-zA-Z_][a-zA-Z0-9_]* */
	const char *value;
};

#define GDR_PROM_MAX_FAMILIES 32

struct gdr_prom {
	FILE *mem;
	char *buf;
	size_t len;
	int err; /* the first error: -ENOMEM, or -EINVAL for a name out of the format */
	char family[GDR_PROM_MAX_FAMILIES][64];
	unsigned int nfamilies;
};

/* 0 or -ENOMEM. */
int gdr_prom_init(struct gdr_prom *p);
/*
 * Start a gauge family: its HELP and TYPE lines. A name that is not a valid
 * metric name, or one already started, makes the whole output fail (-EINVAL).
 */
void gdr_prom_family(struct gdr_prom *p, const char *name, const char *help);
/* One sample of the current family; value a number as the format reads it ("1", "9.5e-6"). */
void gdr_prom_sample(struct gdr_prom *p, const struct gdr_prom_label *labels, size_t n,
		     const char *value);
void gdr_prom_sample_u(struct gdr_prom *p, const struct gdr_prom_label *labels, size_t n,
		       unsigned long long value);
/* The text so far, or NULL (with the error in p->err); valid until gdr_prom_free. */
const char *gdr_prom_text(struct gdr_prom *p, size_t *len);
/* Replace path with the text (gdr_out_replace); 0 or -errno, why says what failed. */
int gdr_prom_write(struct gdr_prom *p, const char *path, char *why, size_t wlen);
/* Idempotent. */
void gdr_prom_free(struct gdr_prom *p);

/* Is s a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or label name (no ':')? */
int gdr_prom_name_ok(const char *s, int label);

#endif
