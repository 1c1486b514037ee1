/*
 * Logs as people paste them: every line of one process may carry a
 * launcher's or a log collector's prefix, and a long record may be cut over
 * two lines. Stripped here so that the reader sees NCCL's own
 * "host:pid:tid [dev] NCCL INFO ..." and one process stays one process:
 *  - mpirun --tag-output        "[1,0]<stdout>:"
 *  - srun -l                    "0: "
 *  - kubectl logs --prefix      "[pod/name/container] "
 *  - kubectl logs --timestamps  "2024-05-01T10:00:00.123456789Z "
 *  - Ray                        "(RayWorkerWrapper pid=1234, ip=10.0.0.1) "
 *  - CloudWatch table export    "| 2024-05-01 10:00:00.000 | ... |"
 *  - journald (syslog style)    "May 01 10:00:00 host prog[123]: "
 * Prefixes may stack (kubectl --prefix --timestamps); they are stripped
 * until none is left.
 */
#include "config.h"

#include "nccl_log.h"
#include "util.h"

#include <ctype.h>
#include <string.h>

static size_t digits(const char *s)
{
	size_t n = 0;

	while (isdigit((unsigned char)s[n]))
		n++;
	return n;
}

static void set_tag(char *launch, size_t llen, const char *kind, const char *s, size_t n)
{
	size_t k = strlen(kind);

	if (llen == 0)
		return;
	if (k + n >= llen)
		n = llen - 1 > k ? llen - 1 - k : 0;
	snprintf(launch, llen, "%s%.*s", kind, (int)n, s);
}

/* "[1,0]<stdout>:" */
static size_t mpirun_tag(const char *s, char *launch, size_t llen)
{
	size_t a, b, i = 1;

	if (s[0] != '[' || !(a = digits(s + i)))
		return 0;
	i += a;
	if (s[i++] != ',' || !(b = digits(s + i)))
		return 0;
	i += b;
	if (strncmp(s + i, "]<std", 5))
		return 0;
	const char *close = strchr(s + i, '>');

	if (!close || close[1] != ':')
		return 0;
	set_tag(launch, llen, "rank ", s + 1, a + 1 + b);
	return (size_t)(close + 2 - s);
}

/* "12: " (srun -l); host:pid:tid has no space after its colon. */
static size_t srun_tag(const char *s, char *launch, size_t llen)
{
	size_t i = 0, n;

	while (s[i] == ' ')
		i++;
	n = digits(s + i);
	if (!n || n > 6 || s[i + n] != ':' || s[i + n + 1] != ' ')
		return 0;
	set_tag(launch, llen, "task ", s + i, n);
	return i + n + 2;
}

/* "[pod/name/container] " */
static size_t kubectl_prefix(const char *s, char *launch, size_t llen)
{
	const char *close;

	if (strncmp(s, "[pod/", 5))
		return 0;
	close = strchr(s, ']');
	if (!close || close[1] != ' ')
		return 0;
	set_tag(launch, llen, "", s + 1, (size_t)(close - s - 1));
	return (size_t)(close + 2 - s);
}

/* RFC 3339 "2024-05-01T10:00:00[.frac](Z|+hh:mm) " */
static size_t rfc3339(const char *s)
{
	size_t i;

	if (digits(s) != 4 || s[4] != '-' || digits(s + 5) != 2 || s[7] != '-' ||
	    digits(s + 8) != 2 || (s[10] != 'T' && s[10] != ' ') || digits(s + 11) != 2 ||
	    s[13] != ':' || digits(s + 14) != 2 || s[16] != ':' || digits(s + 17) != 2)
		return 0;
	i = 19;
	if (s[i] == '.' || s[i] == ',')
		i += 1 + digits(s + i + 1);
	if (s[i] == 'Z')
		i++;
	else if ((s[i] == '+' || s[i] == '-') && digits(s + i + 1) == 4)
		i += 5; /* +0000 */
	else if ((s[i] == '+' || s[i] == '-') && digits(s + i + 1) == 2 && s[i + 3] == ':' &&
		 digits(s + i + 4) == 2)
		i += 6; /* +00:00 */
	return s[i] == ' ' ? i + 1 : 0;
}

/* "(RayWorkerWrapper pid=1234, ip=10.0.0.1) " */
static size_t ray_tag(const char *s, char *launch, size_t llen)
{
	const char *pid, *close;
	size_t i = 1;

	if (s[0] != '(')
		return 0;
	/* "(RayWorkerWrapper pid=12, ip=...)", or a task's bare "(pid=12)". */
	if (!strncmp(s + 1, "pid=", 4))
		i = 0;
	else
		while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == ':')
			i++;
	if (i == 0)
		pid = s + 5;
	else if (i > 1 && !strncmp(s + i, " pid=", 5))
		pid = s + i + 5;
	else
		return 0;
	close = strchr(pid, ')');
	if (!digits(pid) || !close || close[1] != ' ')
		return 0;
	/* The pid (and ip) name the worker; the actor class does not. */
	set_tag(launch, llen, "ray ", pid - 4, (size_t)(close - pid + 4));
	return (size_t)(close + 2 - s);
}

/* "| 1714557600000 | msg" or "| 2024-05-01 10:00:00.000 | msg |": a timestamp column. */
static size_t cloudwatch(const char *s)
{
	size_t i = 1;

	if (s[0] != '|')
		return 0;
	while (s[i] == ' ')
		i++;
	if (digits(s + i) < 4)
		return 0;
	/* s[i] first: strchr finds the terminator too, and would run past the end. */
	while (isdigit((unsigned char)s[i]) || (s[i] && strchr("-:.TZ+ ", s[i])))
		i++;
	if (s[i] != '|')
		return 0;
	i++;
	while (s[i] == ' ')
		i++;
	return i;
}

/* "May 01 10:00:00 host prog[123]: " (journalctl's default short format) */
static size_t journald(const char *s, char *launch, size_t llen)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	const char *host, *prog, *colon, *m;
	size_t i;
	char mon[4];

	/* Length first: a short line must not be read past its end. */
	if (strlen(s) < 16 || !isupper((unsigned char)s[0]) || s[3] != ' ')
		return 0;
	memcpy(mon, s, 3);
	mon[3] = '\0';
	/* A month's own three letters, not three that straddle two ("anF"). */
	m = strstr(months, mon);
	if (!m || (m - months) % 3)
		return 0;
	i = 4;
	if (s[i] == ' ')
		i++;
	if (!digits(s + i) || digits(s + i) > 2)
		return 0;
	i += digits(s + i);
	if (s[i] != ' ' || digits(s + i + 1) != 2 || s[i + 3] != ':' || digits(s + i + 4) != 2 ||
	    s[i + 6] != ':' || digits(s + i + 7) != 2 || s[i + 9] != ' ')
		return 0;
	host = s + i + 10;
	prog = strchr(host, ' ');
	if (!prog || prog == host)
		return 0;
	prog++;
	colon = strstr(prog, ": ");
	if (!colon || memchr(prog, ' ', (size_t)(colon - prog)))
		return 0;
	set_tag(launch, llen, "", host, (size_t)(colon - host));
	return (size_t)(colon + 2 - s);
}

/* "host prog[123]: " after an ISO timestamp (journalctl -o short-iso). */
static size_t syslog_tail(const char *s, char *launch, size_t llen)
{
	const char *prog = strchr(s, ' '), *lb, *colon;

	if (!prog || prog == s)
		return 0;
	prog++;
	lb = strchr(prog, '[');
	if (!lb || lb == prog || memchr(prog, ' ', (size_t)(lb - prog)) || !digits(lb + 1))
		return 0;
	colon = lb + 1 + digits(lb + 1);
	if (colon[0] != ']' || colon[1] != ':' || colon[2] != ' ')
		return 0;
	set_tag(launch, llen, "", s, (size_t)(colon + 1 - s));
	return (size_t)(colon + 3 - s);
}

int gdr_nccl_strip_prefix(const char *line, char *body, size_t blen, char *launch, size_t llen)
{
	const char *s = line;
	int stripped = 0;
	size_t n, len;

	if (llen)
		launch[0] = '\0';
	/* A UTF-8 byte order mark (a file saved by a Windows editor) is no part of the line. */
	if (!strncmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	for (int after_ts = 0;;) {
		char tag[64] = "";

		n = after_ts ? syslog_tail(s, tag, sizeof(tag)) : 0;
		after_ts = 0;
		if (!n)
			n = mpirun_tag(s, tag, sizeof(tag));
		if (!n)
			n = kubectl_prefix(s, tag, sizeof(tag));
		if (!n)
			n = ray_tag(s, tag, sizeof(tag));
		if (!n)
			n = journald(s, tag, sizeof(tag));
		if (!n)
			n = srun_tag(s, tag, sizeof(tag));
		if (!n && (n = rfc3339(s)) != 0)
			after_ts = 1;
		if (!n)
			n = cloudwatch(s);
		if (!n)
			break;
		/* The outermost launcher tag names the process best (a rank, a pod). */
		if (tag[0] && llen && !launch[0])
			gdr_strlcpy(launch, tag, llen);
		s += n;
		stripped++;
	}
	gdr_strlcpy(body, s, blen);
	len = strcspn(body, "\r\n");
	body[len] = '\0';
	/* CloudWatch's closing column bar. */
	if (stripped && line[0] == '|') {
		while (len && body[len - 1] == ' ')
			body[--len] = '\0';
		if (len && body[len - 1] == '|')
			body[--len] = '\0';
		while (len && body[len - 1] == ' ')
			body[--len] = '\0';
	}
	return stripped;
}

/* Messages NCCL prints bare (printf, or pasted without the prefix). */
static const char *const bare_starts[] = {
	"NCCL version ",
	"NET/",
	"Channel ",
	"Ring ",
	"GPU Direct RDMA ",
	"DMA-BUF ",
	"Using network ",
	"Connected all ",
	"Bootstrap",
	"Plugin Path",
	"P2P plugin",
	"NCCL_",
	"Trees ",
	"Setting affinity",
	"comm ",
	"Init ",
	"cudaDriverVersion",
};

int gdr_nccl_starts_record(const char *body)
{
	const char *p = body, *colon;

	if (strstr(body, "NCCL INFO ") || strstr(body, "NCCL WARN "))
		return 1;
	while (*p == ' ' || *p == '\t')
		p++;
	for (size_t i = 0; i < GDR_ARRAY_SIZE(bare_starts); i++)
		if (!strncmp(p, bare_starts[i], strlen(bare_starts[i])))
			return 1;
	/* "host:pid:tid [dev] ..." cut before its tag: still the start of a record. */
	colon = strchr(p, ':');
	if (colon && colon > p && !memchr(p, ' ', (size_t)(colon - p)) && digits(colon + 1) &&
	    colon[1 + digits(colon + 1)] == ':')
		return 1;
	return 0;
}

/* A logger's level word first: "INFO 05-22 ...", "WARNING:", "[ERROR]" is caught as "[". */
static int level_word(const char *s)
{
	static const char *const words[] = { "INFO",  "WARNING",  "WARN",  "ERROR", "DEBUG",
					     "TRACE", "CRITICAL", "FATAL", "NOTICE" };

	for (size_t i = 0; i < GDR_ARRAY_SIZE(words); i++) {
		size_t n = strlen(words[i]);

		if (!strncmp(s, words[i], n) && (s[n] == ' ' || s[n] == ':' || s[n] == '\t'))
			return 1;
	}
	return 0;
}

/*
 * A date or a time first: "2019-11-20 11:43:27.123: I tensorflow/...",
 * "05-22 14:30:00", "11:43:27", glog's "I1120 11:43:27.123456 ...".
 */
static int stamp_first(const char *s)
{
	if (digits(s) == 4 && s[4] == '-' && digits(s + 5) == 2)
		return 1; /* 2019-11-20 */
	if (digits(s) == 2 && s[2] == '-' && digits(s + 3) == 2 && (s[5] == ' ' || s[5] == 'T'))
		return 1; /* 05-22 */
	if (digits(s) == 2 && s[2] == ':' && digits(s + 3) == 2 && s[5] == ':')
		return 1; /* 11:43:27 */
	return strchr("IWEF", s[0]) && s[0] && digits(s + 1) == 4 && s[5] == ' ' &&
	       digits(s + 6) == 2 && s[8] == ':';
}

/*
 * A sentence of its own: a capitalised word, a blank, and an end of
 * sentence ("Initializing NCCL across 2 nodes..."). A wrap cuts a record
 * at a column, in a word or between two, and leaves the tail of one of
 * NCCL's messages, which neither starts so nor ends so.
 */
static int sentence(const char *s)
{
	size_t n = strlen(s), w = 1;

	if (!isupper((unsigned char)s[0]))
		return 0;
	while (islower((unsigned char)s[w]))
		w++;
	return w >= 3 && s[w] == ' ' && n && strchr(".!?", s[n - 1]);
}

/*
 * Other programs' lines: a logger's "[...]" or "(...)" opener, an indent, a
 * first word ending in a colon ("RuntimeError:", "Traceback (...):"), a
 * level word or a timestamp first (vLLM's "INFO 05-22 ...", TensorFlow's
 * "2019-11-20 11:43:27.123: I ..."), a sentence of its own; never glued onto
 * an NCCL record.
 */
static int other_output(const char *body)
{
	size_t w = strcspn(body, " \t");

	/* Indented or '#' lines: tables (nccl-tests' results), tracebacks. */
	return body[0] == '[' || body[0] == '(' || body[0] == ' ' || body[0] == '\t' ||
	       body[0] == '#' || (w && body[w - 1] == ':') || !strncmp(body, "Traceback", 9) ||
	       level_word(body) || stamp_first(body) || sentence(body);
}

/*
 * NCCL's version banner is whole (one printf, or one INFO line): a line
 * after it is never its continuation, so the version is the banner's own.
 */
static int banner(const char *body)
{
	const char *v = strstr(body, "NCCL version ");

	return v && (v == body || strstr(body, "NCCL INFO NCCL version ") != NULL);
}

void gdr_nccl_log_flush(struct gdr_nccl_log *log)
{
	struct gdr_nccl_pending *pd = &log->pending;

	if (!pd->valid)
		return;
	pd->valid = 0;
	gdr_nccl_log_record(log, pd->lineno, pd->launch, pd->text);
}

/*
 * A line that does not start a record continues the previous NCCL record
 * from the same launcher tag when that record was cut: a terminal or a
 * collector wrapped it. At most three pieces are joined, and only onto an
 * NCCL record, so that other programs' output never becomes NCCL's.
 */
void gdr_nccl_log_line(struct gdr_nccl_log *log, const char *line)
{
	struct gdr_nccl_pending *pd = &log->pending;
	char body[512], launch[64];
	size_t have;

	log->lines++;
	if (gdr_nccl_strip_prefix(line, body, sizeof(body), launch, sizeof(launch)))
		log->prefixed_lines++;
	if (pd->valid && pd->nccl && !pd->whole && pd->parts < 3 && body[0] &&
	    !other_output(body) && !strcmp(pd->launch, launch) && !gdr_nccl_starts_record(body) &&
	    (have = strlen(pd->text)) + strlen(body) < sizeof(pd->text)) {
		memcpy(pd->text + have, body, strlen(body) + 1);
		pd->parts++;
		log->joined_lines++;
		return;
	}
	gdr_nccl_log_flush(log);
	pd->valid = 1;
	pd->parts = 1;
	pd->lineno = log->lines;
	pd->nccl = gdr_nccl_starts_record(body);
	pd->whole = banner(body);
	gdr_strlcpy(pd->launch, launch, sizeof(pd->launch));
	gdr_strlcpy(pd->text, body, sizeof(pd->text));
}
