/*
 * What a row records about the software under it (docs/gpu-paths.md):
 * kernel release, the libibverbs that is really loaded, the NIC firmware,
 * and the GPU path's facts from struct gdr_mem. Empty where unknown.
 */
#ifndef GDR_PROVENANCE_H
#define GDR_PROVENANCE_H

#include <infiniband/verbs.h>

#include "mem.h"
#include "report.h"

struct gdr_provenance {
	char kernel[64];
	char libibverbs[32];
	char nic_fw[64];
};

/* Once per connection: uname, the libibverbs file version, ibv_query_device's fw_ver. */
void gdr_provenance_load(struct gdr_provenance *p, struct ibv_context *ctx);
/*
 * Fill r's provenance columns. m: the path's buffer when it was built (NULL
 * for a skipped path); env: what was asked for (kind != host); cuda_driver: the
 * driver version (0 unknown); uuid: the GPU's ("" unknown).
 */
void gdr_provenance_fill(struct gdr_result *r, const struct gdr_provenance *p,
			 enum gdr_mem_kind kind, const struct gdr_mem *m,
			 const struct gdr_mem_env *env, int cuda_driver, const char *uuid);

#endif
