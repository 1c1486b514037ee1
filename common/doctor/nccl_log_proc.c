/*
 * NCCL log reader: the process a record belongs to, and the devices it
 * names. NCCL prefixes each INFO/WARN line with "host:pid:tid [dev]";
 * from NCCL 2.26 (v2.26.2-1, src/debug.cc) a WARN line starts with a
 * timestamp before it ("[2025-03-12 10:00:00] host:pid:tid [0] ..., the
 * default NCCL_DEBUG_TIMESTAMP_FORMAT "[%F %T] " on the levels in
 * NCCL_DEBUG_TIMESTAMP_LEVELS, WARN by default). A host name has no blank,
 * so the process is the last word before "[dev]", whatever came before it.
 * One process is one "host:pid" (the thread id changes between init and
 * proxy threads, the device between a process's GPUs).
 */
#include "config.h"

#include "nccl_log_int.h"
#include "util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *gdr_nccl_busid_text(unsigned long long id, char *buf, size_t len)
{
	/* NCCL reads "dddd:bb:dd.f" as one hex number with the separators dropped. */
	snprintf(buf, len, "%04llx:%02llx:%02llx.%llx", id >> 20, (id >> 12) & 0xff,
		 (id >> 4) & 0xff, id & 0xf);
	return buf;
}

static void devs_add_gpu(struct gdr_nccl_devs *d, unsigned long long id, unsigned long lineno)
{
	for (unsigned int i = 0; i < d->ngpu; i++)
		if (d->gpu[i] == id)
			return;
	if (d->ngpu >= GDR_NCCL_MAX_DEVS) {
		d->dropped++;
		return;
	}
	d->gpu_line[d->ngpu] = lineno;
	d->gpu[d->ngpu++] = id;
}

static void devs_add_nic(struct gdr_nccl_devs *d, const char *name, unsigned long lineno)
{
	for (unsigned int i = 0; i < d->nnic; i++)
		if (!strcmp(d->nic[i], name))
			return;
	if (d->nnic >= GDR_NCCL_MAX_DEVS) {
		d->dropped++;
		return;
	}
	d->nic_line[d->nnic] = lineno;
	gdr_strlcpy(d->nic[d->nnic++], name, sizeof(d->nic[0]));
}

void gdr_nccl_devs_merge(struct gdr_nccl_devs *to, const struct gdr_nccl_devs *from)
{
	for (unsigned int i = 0; i < from->ngpu; i++)
		devs_add_gpu(to, from->gpu[i], from->gpu_line[i]);
	for (unsigned int i = 0; i < from->nnic; i++)
		devs_add_nic(to, from->nic[i], from->nic_line[i]);
	to->dropped += from->dropped;
}

/* A busId as NCCL prints it ("%lx"): hex digits up to a delimiter; 0 when not one. */
int gdr_nccl_parse_busid(const char *s, const char *stop, unsigned long long *id)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	if (!n || n > 12 || !strchr(stop, s[n]))
		return 0;
	*id = strtoull(s, NULL, 16);
	return (int)n;
}

void gdr_nccl_note_gpu(const struct gdr_nccl_sink *k, unsigned long long id)
{
	for (int i = 0; i < 2; i++)
		devs_add_gpu(&k->set[i]->devs, id, k->lineno);
}

void gdr_nccl_note_nic(const struct gdr_nccl_sink *k, const char *name, size_t n)
{
	char buf[sizeof(((struct gdr_nccl_devs *)0)->nic[0])];

	if (!n || n >= sizeof(buf))
		return;
	memcpy(buf, name, n);
	buf[n] = '\0';
	for (int i = 0; i < 2; i++)
		devs_add_nic(&k->set[i]->devs, buf, k->lineno);
}

static struct gdr_nccl_proc *new_proc(struct gdr_nccl_log *log, const char *id, const char *launch)
{
	struct gdr_nccl_proc *p;

	if (log->nprocs >= GDR_NCCL_MAX_PROCS) {
		log->procs_dropped++;
		return NULL;
	}
	p = &log->procs[log->nprocs++];
	memset(p, 0, sizeof(*p));
	gdr_nccl_facts_init(&p->facts);
	gdr_strlcpy(p->id, id, sizeof(p->id));
	gdr_strlcpy(p->launch, launch, sizeof(p->launch));
	p->dev = -1;
	p->seg = log->nseg;
	return p;
}

/* A launcher's tag stands in until the process's first prefixed line names it. */
struct gdr_nccl_proc *gdr_nccl_proc_for(struct gdr_nccl_log *log, const char *id,
					const char *launch)
{
	unsigned int i;

	if (id[0] || !launch[0]) {
		for (i = 0; i < log->nprocs; i++)
			if (!strcmp(log->procs[i].id, id) &&
			    (id[0] || !strcmp(log->procs[i].launch, launch)))
				return &log->procs[i];
	}
	for (i = 0; i < log->nprocs; i++)
		if (launch[0] && !strcmp(log->procs[i].launch, launch) &&
		    (!log->procs[i].id[0] || !id[0])) {
			if (id[0])
				gdr_strlcpy(log->procs[i].id, id, sizeof(log->procs[i].id));
			return &log->procs[i];
		}
	return new_proc(log, id, launch);
}

const char *gdr_nccl_split_line(const char *line, char *id, size_t idlen, int *dev, int *tagged)
{
	const char *tag = strstr(line, "NCCL INFO ");
	const char *msg;

	*dev = -1;
	id[0] = '\0';
	*tagged = 0;
	if (!tag)
		tag = strstr(line, "NCCL WARN ");
	if (tag) {
		const char *lb = NULL, *start, *end = tag;
		size_t n;

		*tagged = 1;
		msg = tag + 10;
		for (const char *p = line; p < tag; p++)
			if (*p == '[')
				lb = p;
		if (lb && isdigit((unsigned char)lb[1])) {
			*dev = atoi(lb + 1);
			end = lb;
		}
		while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		/* The last word: a timestamp (or anything else) before it is no part of the id. */
		start = end;
		while (start > line && start[-1] != ' ' && start[-1] != '\t')
			start--;
		n = (size_t)(end - start);
		if (n >= idlen)
			n = idlen - 1;
		memcpy(id, start, n);
		id[n] = '\0';
		/* "host:pid:tid": drop the thread id. */
		char *c1 = strrchr(id, ':');
		if (c1 && c1 != strchr(id, ':'))
			*c1 = '\0';
	} else {
		const char *v = strstr(line, "NCCL version ");

		msg = v ? v : line;
		while (*msg == ' ' || *msg == '\t')
			msg++;
	}
	return msg;
}
