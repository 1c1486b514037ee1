/*
 * Doctor vs NCCL: given gdr_doctor's view of a node (its checks, and the
 * GPU-NIC distances from --topology-xml or the live machine) and an NCCL
 * log from a job on that node, did NCCL do what the node's configuration
 * predicts? Adds two checks to doc: "nccl-log" (what the log says NCCL used)
 * and "nccl-vs-node" (pass: as predicted; warn: not, with the likely cause
 * and the fix; n-a: the log does not say).
 */
#ifndef GDR_DOCTOR_VS_NCCL_H
#define GDR_DOCTOR_VS_NCCL_H

#include "doctor.h"
#include "nccl_log.h"

void gdr_doctor_vs_nccl(struct gdr_doctor *doc, const struct gdr_verdict *v,
			const struct gdr_nccl_log *log, const char *name);

#endif
