/*
 * Results: the human table on stdout (report.c, with the column table), CSV
 * (report_csv.c: one whole row per write, header once) and JSON
 * (report_json.c: written whole at the end, never half a file).
 * Column order and names are the CSV contract in docs/csv-json.md.
 */
#ifndef GDR_REPORT_H
#define GDR_REPORT_H

#include <stdint.h>
#include <stdio.h>

/*
 * Rounds a row keeps one by one (rep_* below); a run of more repeats keeps
 * their summary only. The rounds rule's largest --repeat MIN:MAX is this.
 */
#define GDR_REP_KEEP 128

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
	char note[512]; /* reason for skipped/failed, warnings; the bounce ceiling and staging notes
			   together pass 256 */
	char label[128];
	char version[16];
	/* GPU provenance and cost (docs/gpu-paths.md): empty / < 0 where not applicable. */
	double reg_us;	    /* first registration of the buffer (export excluded) */
	double dereg_us;    /* a deregistration of it, timed before the run */
	char reg_call[32];  /* ibv_reg_mr | ibv_reg_dmabuf_mr | mlx5dv_reg_dmabuf_mr, (emulated) */
	char gpu_alloc[16]; /* cuMemAlloc | cuMemCreate */
	char dmabuf_mapping[8];	  /* default | pcie */
	char relaxed_ordering[4]; /* 1 | 0: IBV_ACCESS_RELAXED_ORDERING asked for */
	char gpu_uuid[48];	  /* GPU-... (cuDeviceGetUuid_v2; MIG-... under MIG) */
	char cuda_driver[16];	  /* cuDriverGetVersion as 12.4 */
	char kernel[64];	  /* uname -r */
	char libibverbs[32]; /* the loaded libibverbs' file version (1.14.44.0 = rdma-core 44) */
	char nic_fw[64];     /* ibv_query_device fw_ver */
	/* Appended columns (docs/pcie-health.md): the pair's expected ceiling, Gb/s (<= 0
	 * unknown; both directions for bidir rows), and bw_avg_gbps as a share of it (< 0). */
	double ceiling_gbps;
	double pct_of_ceiling;
	/* Latency tools (issue 14), microseconds; empty unless > 0 on an ok row. */
	double lat_min_us, lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us, lat_max_us, lat_avg_us;
	/* Appended (issue 43): the traffic class / IP ToS byte QP 0 got; "" unknown. */
	char tos[4];
	/*
	 * When the row was measured (issue 38): the start of its first timed
	 * repeat and the end of its last, seconds since the run began on this
	 * side's clock (< 0: not measured, empty), and its position in the
	 * rotation of the paths at its first repeat (0 first; < 0 empty).
	 */
	double t_start_s, t_end_s;
	int order;
	/* Bounce rows (docs/bounce.md): the staging chunk this size moved in, bytes; "" else. */
	char bounce_chunk[24];
	char bounce_copy[4];   /* ce | sm: who copied GPU <-> staging on this side */
	char bounce_blocks[8]; /* sm: the copy kernel's blocks */
	/*
	 * Appended (issue 48): the peer's side of the row's combination, as its
	 * BUF told it (gpu .. distance above are this side's, the row's host).
	 */
	char gpu_remote[16];
	char gpu_bus_id_remote[32];
	char gpu_name_remote[128];
	char nic_remote[64];
	char distance_remote[16];
	/*
	 * Appended (issue 51, docs/csv-json.md "Rounds"): the run the row belongs
	 * to, the rounds rule it ran under, and every round's own numbers, so
	 * that gdr-ab pairs each path with the reference measured in the same
	 * round. rep_*[k] is round k at this size (k < nrep).
	 */
	char run_id[20];     /* 16 hex digits, the same on both sides of a run */
	unsigned int looks;  /* K of the rounds rule (decide.h); 1: fixed rounds; 0: unknown */
	char stop[16];	     /* why the rounds ended: fixed | decided | max rounds | time budget */
	unsigned int nrep;   /* rounds kept below; 0 when repeats > GDR_REP_KEEP */
	double rep_bw_gbps[GDR_REP_KEEP];
	double rep_t_start_s[GDR_REP_KEEP], rep_t_end_s[GDR_REP_KEEP];
};

/* Number of CSV columns (and JSON keys) and the longest row gdr_csv_format writes. */
#define GDR_CSV_COLUMNS 72
#define GDR_CSV_ROW_MAX 16384
/* The longest one column renders to (a list of GDR_REP_KEEP numbers). */
#define GDR_COL_MAX 2560

/* The CSV header line, without newline. */
const char *gdr_csv_header(void);
/* Format r as one CSV line with trailing newline (RFC 4180 quoting). Returns length or -ENOSPC. */
int gdr_csv_format(const struct gdr_result *r, char *buf, size_t len);

struct gdr_csv;
/*
 * Check path for appending results before a run starts, so that an
 * unwritable path fails early; opens an existing file but creates nothing.
 * A new (or empty) file gets the header with its first row, so a run that
 * fails before it measures leaves no header-only file. An existing file
 * whose header differs is refused (-EINVAL, why says so). "-" is stdout.
 */
int gdr_csv_open(struct gdr_csv **out, const char *path, char *why, size_t wlen);
/* Append one row with a single write(2); 0 or -errno (gdr_csv_error says why). */
int gdr_csv_append(struct gdr_csv *csv, const struct gdr_result *r);
void gdr_csv_close(struct gdr_csv *csv);
/* The path given to gdr_csv_open, for messages about a failed append. */
const char *gdr_csv_path(const struct gdr_csv *csv);
/* Why the last gdr_csv_append failed: "PATH: write: No space left on device". */
const char *gdr_csv_error(const struct gdr_csv *csv);

struct gdr_json;
/* Check now that path can be written at close (gdr_out_check); creates nothing. */
int gdr_json_open(struct gdr_json **out, const char *path, char *why, size_t wlen);
int gdr_json_add(struct gdr_json *js, const struct gdr_result *r);
/*
 * Write all results to path (gdr_out_replace: atomic for a regular file, in
 * place for a FIFO, device or stdout), and free js. With no rows nothing is
 * written: an earlier report stays as it was and no file is created.
 */
int gdr_json_close(struct gdr_json *js, char *why, size_t wlen);

struct gdr_prom_rows;
struct gdr_prom;
/*
 * Results as Prometheus metrics (docs/cluster-outputs.md), written whole at
 * close like JSON: open checks path now and creates nothing; with no rows
 * close writes nothing. render writes the families of rows[0..n) to p
 * (0 or p's error); a row whose labels repeat an earlier one's is left out
 * with a warning.
 */
int gdr_prom_rows_open(struct gdr_prom_rows **out, const char *path, char *why, size_t wlen);
int gdr_prom_rows_add(struct gdr_prom_rows *pr, const struct gdr_result *r);
int gdr_prom_rows_close(struct gdr_prom_rows *pr, char *why, size_t wlen);
int gdr_prom_rows_render(struct gdr_prom *p, const struct gdr_result *rows, size_t n);

/*
 * Human table. flags: GDR_TABLE_GBITS for Gb/s (10^9 bit/s) instead of MB/sec
 * (perftest's 2^20 bytes/s), as --report_gbits asks; GDR_TABLE_WIDE for the
 * median, min and max columns too (--wide). Without it a line fits
 * GDR_TABLE_COLS: a longer note goes on indented lines below its row. A
 * bandwidth that is not finite prints "-" (e.g. no peak).
 */
#define GDR_MBPS_PER_GBPS (1e9 / 8 / 1048576.0)
/*
 * GDR_TABLE_PAIRS: each side its own path (issue 48): the first column is
 * "path:remote", this side's path and the peer's (host:peermem).
 */
enum { GDR_TABLE_GBITS = 1, GDR_TABLE_WIDE = 2, GDR_TABLE_PAIRS = 4 };
#define GDR_TABLE_COLS 120
void gdr_table_header(FILE *out, int flags);
void gdr_table_row(FILE *out, const struct gdr_result *r, int flags);
/* The latency tools' table: min, percentiles, max and average in microseconds (flags: as above). */
void gdr_table_header_lat(FILE *out, int flags);
void gdr_table_row_lat(FILE *out, const struct gdr_result *r, int flags);

/*
 * Start a fresh result: zero r (empty strings = unknown), cpu_util_pct = -1
 * (unknown), status "ok", then fill timestamp/host/version. Call it first.
 */
void gdr_result_init(struct gdr_result *r);

#endif
