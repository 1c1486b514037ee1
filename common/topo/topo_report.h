/* What gdr_topo shows: the matrix, the nearest NICs, the warnings, CSV and JSON. */
#ifndef GDR_TOPO_REPORT_H
#define GDR_TOPO_REPORT_H

#include <stdio.h>

#include "topo.h"

/* GPU and NIC lists, the GPU x NIC matrix with its legend, the nearest NIC(s) per GPU;
 * with pairs, one line per GPU x NIC pair with its details. */
void gdr_topo_print(FILE *out, const struct gdr_topo *t, const struct gdr_nccl_env *env, int pairs);

/* Warnings an operator needs, each a sentence; several alike said once. */
struct gdr_topo_warnings {
	int n;
	char **msg;
};
/* 0 or -ENOMEM (w empty). Free with gdr_topo_warnings_free(). */
int gdr_topo_warnings(const struct gdr_topo *t, struct gdr_topo_warnings *w);
void gdr_topo_warnings_free(struct gdr_topo_warnings *w);
/* The warnings on stderr, wrapped to 80 columns. Returns how many, or -ENOMEM. */
int gdr_topo_warn(const struct gdr_topo *t);

/*
 * Print head then text, wrapped at spaces to 80 columns; continuation lines
 * start at column indent. Control bytes in text are shown as \xHH.
 */
void gdr_topo_wrap(FILE *out, const char *head, const char *text, int indent);

/* One record per GPU x NIC pair, written by gdr_out_replace (common/output/writer.h).
 * 0 or -errno with why. */
int gdr_topo_write_csv(const struct gdr_topo *t, const struct gdr_nccl_env *env, const char *path,
		       char *why, size_t wlen);
int gdr_topo_write_json(const struct gdr_topo *t, const struct gdr_nccl_env *env, const char *path,
			char *why, size_t wlen);

/* PCIe health and the ceiling per pair (topo_pcie.c): printed only when the topology is
 * this system or a root was given; in JSON "ceiling_gbps" and "pcie" (null when unknown). */
void gdr_topo_print_pcie(FILE *out, const struct gdr_topo *t);
void gdr_topo_json_pcie(FILE *f, const struct gdr_topo *t, const struct gdr_topo_pair *p);

#endif
