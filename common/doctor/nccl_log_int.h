/*
 * Internal to the NCCL log reader's files: the fact sets one record
 * updates, and the helpers that record a fact in them.
 *
 * The reading divides as a log does: nccl_log.c reads lines,
 * nccl_log_prefix.c strips launchers' prefixes and joins records cut over
 * lines, nccl_log_proc.c finds the process (NCCL's "host:pid:tid [dev]")
 * a record belongs to, nccl_log_record.c says what a record means,
 * nccl_log_event.c reads the network errors NCCL reports and the HINT
 * lines it prints with them.
 */
#ifndef GDR_NCCL_LOG_INT_H
#define GDR_NCCL_LOG_INT_H

#include "nccl_log.h"

#include <stddef.h>

/* The fact sets one record updates: the whole file's and its process's (or the bare lines'). */
struct gdr_nccl_sink {
	struct gdr_nccl_facts *set[2];
	struct gdr_nccl_proc *proc;
	unsigned long lineno;
	const char *raw;
};

void gdr_nccl_facts_init(struct gdr_nccl_facts *f);
/* Count fact f in s (the first line that shows it is kept). */
void gdr_nccl_note_one(struct gdr_nccl_facts *s, enum gdr_nccl_fact f,
		       const struct gdr_nccl_sink *k);
/* Count fact f in both sets. */
void gdr_nccl_note(const struct gdr_nccl_sink *k, enum gdr_nccl_fact f);
/* The word of src up to any char of stop, cut to len - 1. */
void gdr_nccl_copy_word(char *dst, size_t len, const char *src, const char *stop);
/* Set a text field in both sets; first_only keeps the first value seen. */
void gdr_nccl_set_word(const struct gdr_nccl_sink *k, size_t off, size_t len, const char *src,
		       const char *stop, int first_only);
#define GDR_NCCL_SET_WORD(k, field, src, stop, first)                                              \
	gdr_nccl_set_word(k, offsetof(struct gdr_nccl_facts, field),                               \
			  sizeof(((struct gdr_nccl_facts *)0)->field), src, stop, first)

/* Devices a record names (nccl_log_proc.c). */
int gdr_nccl_parse_busid(const char *s, const char *stop, unsigned long long *id);
void gdr_nccl_note_gpu(const struct gdr_nccl_sink *k, unsigned long long id);
void gdr_nccl_note_nic(const struct gdr_nccl_sink *k, const char *name, size_t n);

/*
 * "[ts] host:pid:tid [dev] NCCL INFO msg" -> id "host:pid", dev, msg
 * (nccl_log_proc.c). Returns the message; *tagged when the line carried
 * NCCL's own INFO/WARN tag.
 */
const char *gdr_nccl_split_line(const char *line, char *id, size_t idlen, int *dev, int *tagged);
/* The process of id (or of the launcher's tag); NULL past GDR_NCCL_MAX_PROCS. */
struct gdr_nccl_proc *gdr_nccl_proc_for(struct gdr_nccl_log *log, const char *id,
					const char *launch);

/* Network errors and NCCL's HINT lines (nccl_log_event.c): 1 when msg was one. */
int gdr_nccl_parse_event(struct gdr_nccl_log *log, const struct gdr_nccl_sink *k, const char *msg,
			 int warn);

#endif
