/*
 * Results: the human table on stdout, CSV (one whole row per write, header
 * once) and JSON (written whole at the end, never half a file).
 * Column order and names are the CSV contract in DESIGN.md / README.md.
 */
#ifndef GDR_REPORT_H
#define GDR_REPORT_H

#include <stdint.h>
#include <stdio.h>

/* One measurement (or one skipped/failed path) as it goes to table, CSV and JSON. */
struct gdr_result {
	char timestamp[40]; /* ISO 8601 UTC, "2026-11-29T21:25:51Z" */
	char host[64];
	char peer[64];
	char role[8];  /* "client" | "server" */
	char verb[8];  /* "write" | "read" */
	char path[16]; /* host | dmabuf | peermem | bounce */
	char path_remote[16];
	uint64_t size_bytes;
	uint64_t iters; /* iterations per repeat that completed */
	unsigned int qps, tx_depth, post_list;
	int bidir;
	unsigned int repeats;
	double bw_peak_gbps, bw_avg_gbps, bw_median_gbps, bw_min_gbps, bw_max_gbps;
	double msg_rate_mpps;
	double cpu_util_pct; /* < 0: unknown (empty in CSV) */
	/* Topology columns: empty string = unknown / not applicable. */
	char gpu[16];
	char gpu_bus_id[32];
	char gpu_name[128];
	char nic[64];
	char nic_bus_id[32];
	char distance[16]; /* PIX PXB PHB NODE SYS unknown */
	char pcie_bridges[8];
	char gpu_numa[8];
	char nic_numa[8];
	char status[12]; /* "ok" | "skipped" | "failed" */
	char note[256];	 /* reason for skipped/failed, warnings */
	char label[128];
	char version[16];
	/* Appended columns (docs/pcie-health.md): the pair's expected ceiling, Gb/s (<= 0
	 * unknown; both directions for bidir rows), and bw_avg_gbps as a share of it (< 0). */
	double ceiling_gbps;
	double pct_of_ceiling;
};

/* Number of CSV columns (and JSON keys) and the longest row gdr_csv_format writes. */
#define GDR_CSV_COLUMNS 36
#define GDR_CSV_ROW_MAX 4096

/* The CSV header line, without newline. */
const char *gdr_csv_header(void);
/* Format r as one CSV line with trailing newline (RFC 4180 quoting). Returns length or -ENOSPC. */
int gdr_csv_format(const struct gdr_result *r, char *buf, size_t len);

struct gdr_csv;
/*
 * Open (create or append) path for results; checked before a run starts so
 * that an unwritable path fails early. Writes the header if the file is empty.
 * An existing file whose header differs is refused (-EINVAL, why says so).
 */
int gdr_csv_open(struct gdr_csv **out, const char *path, char *why, size_t wlen);
/* Append one row with a single write(2); 0 or -errno. */
int gdr_csv_append(struct gdr_csv *csv, const struct gdr_result *r);
void gdr_csv_close(struct gdr_csv *csv);
/* The path given to gdr_csv_open, for messages about a failed append. */
const char *gdr_csv_path(const struct gdr_csv *csv);

struct gdr_json;
/* Check path's directory is writable now; results are written at close. */
int gdr_json_open(struct gdr_json **out, const char *path, char *why, size_t wlen);
int gdr_json_add(struct gdr_json *js, const struct gdr_result *r);
/* Write all results to path.tmp and rename over path. */
int gdr_json_close(struct gdr_json *js, char *why, size_t wlen);

/* Human table. gbits: Gb/s (1) or MB/s (0, 10^6 bytes/s) as --report_gbits asks. */
void gdr_table_header(FILE *out, int gbits);
void gdr_table_row(FILE *out, const struct gdr_result *r, int gbits);

/*
 * Start a fresh result: zero r (empty strings = unknown), cpu_util_pct = -1
 * (unknown), status "ok", then fill timestamp/host/version. Call it first.
 */
void gdr_result_init(struct gdr_result *r);

#endif
