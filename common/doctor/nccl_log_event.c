/*
 * NCCL log reader: the network errors NCCL reports, each read as one event
 * with the "HINT:" lines NCCL prints right after it.
 *
 * From NCCL's source at its tags:
 *  - a failed work completion: "NET/IB : Got completion with error %d,
 *    opcode %d, ..." (up to v2.9.9-1), "NET/IB : Got completion from peer
 *    %s with error %d, ..." (v2.10.3-1 to v2.19.4-1), "NET/IB: Got completion
 *    from peer %s with status=%d opcode=%d ..." (v2.20.3-1 to v2.28.3-1),
 *    "... with status=%s(%d) opcode=%s(%d) vendor_err=%u ... hca %s"
 *    (v2.28.7-1 on, the status by its IBV_WC_* name); a failed "Call to
 *    ibv_modify_qp failed with %d %s, ..." (misc/ibvwrap.cc);
 *  - from v2.30.7-1, printIbWcStatusHint() (src/transport/net_ib/common.h)
 *    prints INFO(NCCL_NET) "HINT: ..." lines after the completion's WARN.
 *    Its switch has no break: IBV_WC_LOC_PROT_ERR prints its own 2 lines
 *    (ACS) and then those of IBV_WC_WR_FLUSH_ERR (1) and
 *    IBV_WC_RETRY_EXC_ERR (4); IBV_WC_WR_FLUSH_ERR prints its 1 and the 4
 *    of IBV_WC_RETRY_EXC_ERR. printIbModifyQpHint() (misc/ibvwrap.cc)
 *    prints 3 lines for ETIMEDOUT (cross-rail) or EINVAL (GID index). So
 *    several hints for one error are one event: NCCL's own hint for the
 *    error is the first lines, the rest belong to other errors.
 */
#include "config.h"

#include "nccl_log_int.h"
#include "util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ibv_wc_status by value (infiniband/verbs.h), as NCCL 2.28.7 on names them. */
static const char *const wc_status[] = {
	"IBV_WC_SUCCESS",	    "IBV_WC_LOC_LEN_ERR",
	"IBV_WC_LOC_QP_OP_ERR",	    "IBV_WC_LOC_EEC_OP_ERR",
	"IBV_WC_LOC_PROT_ERR",	    "IBV_WC_WR_FLUSH_ERR",
	"IBV_WC_MW_BIND_ERR",	    "IBV_WC_BAD_RESP_ERR",
	"IBV_WC_LOC_ACCESS_ERR",    "IBV_WC_REM_INV_REQ_ERR",
	"IBV_WC_REM_ACCESS_ERR",    "IBV_WC_REM_OP_ERR",
	"IBV_WC_RETRY_EXC_ERR",	    "IBV_WC_RNR_RETRY_EXC_ERR",
	"IBV_WC_LOC_RDD_VIOL_ERR",  "IBV_WC_REM_INV_RD_REQ_ERR",
	"IBV_WC_REM_ABORT_ERR",	    "IBV_WC_INV_EECN_ERR",
	"IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
	"IBV_WC_RESP_TIMEOUT_ERR",  "IBV_WC_GENERAL_ERR",
};

/*
 * The errors NCCL prints hints for (2.30.7): its own hint lines, all the
 * lines it prints (the fall-through adds the next cases'), and what they say.
 */
struct hinted {
	const char *what;
	unsigned int own, all;
	const char *others; /* the errors whose hints follow by the fall-through */
	const char *hint;   /* NCCL's own hint, in short */
	const char *fix;
};

static const struct hinted hinted[] = {
	{ "IBV_WC_LOC_PROT_ERR", 2, 7, "IBV_WC_WR_FLUSH_ERR and IBV_WC_RETRY_EXC_ERR",
	  "ACS on the PCIe path breaks GPUDirect RDMA; to confirm, NCCL_NET_GDR_LEVEL=0 runs "
	  "without GDR",
	  "disable ACS redirect on the switch ports between the NIC and the GPU, as the vendor "
	  "documents (gdr_doctor's gpuN-NIC.acs check names the port)" },
	{ "IBV_WC_WR_FLUSH_ERR", 1, 5, "IBV_WC_RETRY_EXC_ERR",
	  "NICs on the same instance cannot talk to each other",
	  "a flush error follows an earlier error on the QP: find that one first; then check "
	  "that the NICs reach each other (ibv_rc_pingpong between them)" },
	{ "IBV_WC_RETRY_EXC_ERR", 4, 4, NULL,
	  "NCCL_IB_TIMEOUT too short (default 20, about 30 s before the error)",
	  "raise NCCL_IB_TIMEOUT; if the error stays, the link or the peer is down" },
	{ "ibv_modify_qp ETIMEDOUT", 3, 3, NULL, "NICs not connected across rails",
	  "NCCL_CROSS_NIC=0 confirms it (no cross-rail traffic)" },
	{ "ibv_modify_qp EINVAL", 3, 3, NULL, "a wrong GID index forced by NCCL_IB_GID_INDEX",
	  "NCCL_IB_GID_INDEX=-1 (automatic detection)" },
};

static int hinted_kind(const char *what)
{
	for (size_t i = 0; i < GDR_ARRAY_SIZE(hinted); i++)
		if (!strcmp(hinted[i].what, what))
			return (int)i;
	return -1;
}

/* "status=IBV_WC_LOC_PROT_ERR(4)", "status=4 ", "with error 4,": the status's name. */
static int completion_status(const char *msg, char *what, size_t len)
{
	const char *p = strstr(msg, " status=");
	long v = -1;

	if (p) {
		p += 8;
		if (!strncmp(p, "IBV_WC_", 7)) {
			gdr_nccl_copy_word(what, len, p, "( ,");
			return 0;
		}
	} else if ((p = strstr(msg, " with error ")) != NULL) {
		p += 12;
	}
	if (!p || !isdigit((unsigned char)*p))
		return -1;
	v = strtol(p, NULL, 10);
	if (v >= 0 && v < (long)GDR_ARRAY_SIZE(wc_status))
		snprintf(what, len, "%s", wc_status[v]);
	else
		snprintf(what, len, "ibv_wc status %ld", v);
	return 0;
}

/* "Call to ibv_modify_qp failed with 110 Connection timed out, ..." */
static int modify_qp_error(const char *msg, char *what, size_t len)
{
	const char *p = strstr(msg, "Call to ibv_modify_qp failed with ");
	long v;

	if (!p)
		return -1;
	v = strtol(p + 34, NULL, 10);
	snprintf(what, len, "ibv_modify_qp %s",
		 v == 110  ? "ETIMEDOUT"
		 : v == 22 ? "EINVAL"
			   : "error");
	return 0;
}

static int proc_index(const struct gdr_nccl_log *log, const struct gdr_nccl_sink *k)
{
	return k->proc ? (int)(k->proc - log->procs) : -1;
}

static void add_event(struct gdr_nccl_log *log, const struct gdr_nccl_sink *k, const char *what)
{
	int proc = proc_index(log, k);
	struct gdr_nccl_event *e;

	gdr_nccl_note(k, NF_NET_ERROR);
	/* A process's later errors of the same kind (a QP's other completions) add no event. */
	for (unsigned int i = 0; i < log->nevents; i++)
		if (log->events[i].proc == proc && !strcmp(log->events[i].what, what)) {
			log->events[i].repeats++;
			return;
		}
	if (log->nevents >= GDR_NCCL_MAX_EVENTS) {
		log->events_dropped++;
		return;
	}
	e = &log->events[log->nevents++];
	memset(e, 0, sizeof(*e));
	e->line.lineno = k->lineno;
	gdr_strlcpy(e->line.text, k->raw, sizeof(e->line.text));
	gdr_strlcpy(e->what, what, sizeof(e->what));
	e->kind = hinted_kind(what);
	e->proc = proc;
}

/* A HINT line belongs to the newest error of its process: NCCL prints them right after it. */
static void add_hint(struct gdr_nccl_log *log, const struct gdr_nccl_sink *k)
{
	int proc = proc_index(log, k);

	gdr_nccl_note(k, NF_HINT);
	for (unsigned int i = log->nevents; i-- > 0;) {
		struct gdr_nccl_event *e = &log->events[i];

		if (e->proc != proc)
			continue;
		if (!e->hints)
			e->hint_first = k->lineno;
		e->hint_last = k->lineno;
		e->hints++;
		return;
	}
	log->hints_alone++;
}

int gdr_nccl_parse_event(struct gdr_nccl_log *log, const struct gdr_nccl_sink *k, const char *msg,
			 int warn)
{
	char what[40];

	if (!warn) {
		if (strncmp(msg, "HINT: ", 6))
			return 0;
		add_hint(log, k);
		return 1;
	}
	if ((strstr(msg, "Got completion ") && !completion_status(msg, what, sizeof(what))) ||
	    !modify_qp_error(msg, what, sizeof(what))) {
		add_event(log, k, what);
		return 1;
	}
	return 0;
}

void gdr_nccl_event_explain(const struct gdr_nccl_event *e, char *buf, size_t len)
{
	const struct hinted *h = e->kind >= 0 ? &hinted[e->kind] : NULL;

	buf[0] = '\0';
	gdr_nccl_catf(buf, len, "%s", e->what);
	if (e->repeats)
		gdr_nccl_catf(buf, len, " (and %u more like it)", e->repeats);
	if (!h) {
		gdr_nccl_catf(buf, len, "%s", e->hints ? "" : "; NCCL prints no hint for it");
		if (e->hints)
			gdr_nccl_catf(buf, len, "; %u HINT line%s after it (%lu-%lu)", e->hints,
				      e->hints == 1 ? "" : "s", e->hint_first, e->hint_last);
		return;
	}
	gdr_nccl_catf(buf, len, ": NCCL's hint: %s; fix: %s", h->hint, h->fix);
	if (!e->hints) {
		gdr_nccl_catf(buf, len, " (NCCL 2.30.7 and later print this hint with it)");
		return;
	}
	gdr_nccl_catf(buf, len, ". One event: %u HINT line%s (%lu-%lu)", e->hints,
		      e->hints == 1 ? "" : "s", e->hint_first, e->hint_last);
	if (h->others && e->hints > h->own)
		gdr_nccl_catf(buf, len,
			      ", the first %u NCCL's hint for it; the other %u are NCCL's hints "
			      "for %s, printed with it because its hint switch falls through "
			      "(net_ib/common.h): not further causes",
			      h->own, e->hints - h->own, h->others);
	else
		gdr_nccl_catf(buf, len, ", NCCL's hint for it");
}
