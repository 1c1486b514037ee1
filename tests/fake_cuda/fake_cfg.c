/*
 * The fake driver's configuration, read from GDRPERF_FAKE_CUDA_* and
 * CUDA_VISIBLE_DEVICES at every cuInit (see fake_cuda.c), and the checks
 * every entry point makes first.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- configuration ---- */

static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (toupper((unsigned char)*end)) {
	/* NOLINTNEXTLINE(bugprone-branch-clone): the cases fall through, G > M > K */
	case 'G':
		v <<= 10;
		/* fall through */
	case 'M':
		v <<= 10;
		/* fall through */
	case 'K':
		v <<= 10;
		break;
	default:
		break;
	}
	return v;
}

/* The i-th comma-separated field of s into out; the last field repeats. */
static bool field(const char *s, int i, char *out, size_t len)
{
	const char *p = s, *comma;
	size_t n;

	if (!s || !*s)
		return false;
	for (; i > 0; i--) {
		comma = strchr(p, ',');
		if (!comma)
			break;
		p = comma + 1;
	}
	comma = strchr(p, ',');
	n = comma ? (size_t)(comma - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

/* Like field() but with no repetition: false past the end. */
static bool field_exact(const char *s, int i, char *out, size_t len)
{
	int commas = 0;

	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++)
		commas += *p == ',';
	return i <= commas && field(s, i, out, len);
}

/* Does the CUDA_VISIBLE_DEVICES entry tok (GPU-... or MIG-..., a prefix allowed) name uuid? */
static bool uuid_entry_matches(const char *tok, const unsigned char uuid[16])
{
	char hex[33];
	size_t n = 0;

	for (int b = 0; b < 16; b++)
		snprintf(hex + 2 * b, 3, "%02x", uuid[b]);
	for (tok += 4; *tok; tok++) {
		if (*tok == '-')
			continue;
		if (n >= 32 || tolower((unsigned char)*tok) != hex[n])
			return false;
		n++;
	}
	return n > 0;
}

/*
 * CUDA_VISIBLE_DEVICES as the CUDA Programming Guide describes it: indices
 * or UUIDs (GPU-..., MIG-..., prefixes allowed), in that order; devices after
 * the first entry that names none are not visible.
 */
static void visible_devices(struct fake_cfg *c)
{
	const char *e = getenv("CUDA_VISIBLE_DEVICES");
	struct fake_cfg all;
	char tok[64];
	int n = 0;

	if (!e)
		return;
	all = *c;
	for (int i = 0; n < FAKE_MAX_DEV && field_exact(e, i, tok, sizeof(tok)); i++) {
		int d = -1;

		if (!strncasecmp(tok, "GPU-", 4) || !strncasecmp(tok, "MIG-", 4)) {
			for (int k = 0; k < all.ndev && d < 0; k++)
				if (uuid_entry_matches(tok, all.uuid[k]))
					d = k;
		} else if (isdigit((unsigned char)tok[0])) {
			d = atoi(tok);
		}
		if (d < 0 || d >= all.ndev)
			break;
		memcpy(c->name[n], all.name[d], sizeof(c->name[n]));
		c->dom[n] = all.dom[d];
		c->bus[n] = all.bus[d];
		c->devfn[n] = all.devfn[d];
		c->dmabuf[n] = all.dmabuf[d];
		c->gdr[n] = all.gdr[d];
		c->vmm_gdr[n] = all.vmm_gdr[d];
		memcpy(c->uuid[n], all.uuid[d], sizeof(c->uuid[n]));
		n++;
	}
	c->ndev = n;
}

void load_cfg(struct fake_cfg *c)
{
	const char *e;
	char f[128];

	memset(c, 0, sizeof(*c));
	e = getenv("GDRPERF_FAKE_CUDA_DEVICES");
	c->ndev = e ? atoi(e) : 1;
	if (c->ndev < 0)
		c->ndev = 0;
	if (c->ndev > FAKE_MAX_DEV)
		c->ndev = FAKE_MAX_DEV;
	for (int i = 0; i < c->ndev; i++) {
		unsigned int a, b, d, fn;
		int n = 0;

		if (!field_exact(getenv("GDRPERF_FAKE_CUDA_NAMES"), i, c->name[i],
				 sizeof(c->name[i])))
			snprintf(c->name[i], sizeof(c->name[i]), "Fake GPU %d", i);
		c->dom[i] = 0;
		c->bus[i] = 0x10 + i;
		c->devfn[i] = 0;
		if (field_exact(getenv("GDRPERF_FAKE_CUDA_BUS_IDS"), i, f, sizeof(f))) {
			if (sscanf(f, "%x:%x:%x.%x%n", &a, &b, &d, &fn, &n) == 4 && !f[n]) {
				c->dom[i] = a;
				c->bus[i] = b;
				c->devfn[i] = d << 3 | fn;
			} else if (n = 0, sscanf(f, "%x:%x.%x%n", &b, &d, &fn, &n) == 3 && !f[n]) {
				c->bus[i] = b;
				c->devfn[i] = d << 3 | fn;
			} else {
				fprintf(stderr, "fake libcuda: bad bus id '%s'\n", f);
			}
		}
		c->dmabuf[i] = field(getenv("GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED"), i, f, sizeof(f))
				   ? atoi(f)
				   : 1;
		c->gdr[i] =
		    field(getenv("GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED"), i, f, sizeof(f))
			? atoi(f)
			: 1;
	}
	e = getenv("GDRPERF_FAKE_CUDA_DMABUF");
	c->dmabuf_rc = e && *e && strcmp(e, "memfd") ? parse_cuerr(e) : CUDA_SUCCESS;
	e = getenv("GDRPERF_FAKE_CUDA_MEM_LIMIT");
	c->mem_enforced = e && *e;
	c->mem_limit = c->mem_enforced ? parse_size(e) : 80ull << 30;
	e = getenv("GDRPERF_FAKE_CUDA_COPY_DELAY_US");
	c->delay_ns = e ? strtoull(e, NULL, 0) * 1000 : 0;
	e = getenv("GDRPERF_FAKE_CUDA_COPY_GBPS");
	c->gbps = e ? strtod(e, NULL) : 0;
	e = getenv("GDRPERF_FAKE_CUDA_ALLOC_OFFSET");
	c->alloc_offset_set = e && *e;
	c->alloc_offset = c->alloc_offset_set ? (size_t)parse_size(e) % FAKE_BIG_PAGE : 0;
	for (int i = 0; i < c->ndev; i++) {
		c->vmm_gdr[i] =
		    field(getenv("GDRPERF_FAKE_CUDA_VMM_GDR"), i, f, sizeof(f)) ? atoi(f) : 1;
		/* A fixed, recognisable UUID per ordinal unless told. */
		for (int b = 0; b < 16; b++)
			c->uuid[i][b] = (unsigned char)(b == 15 ? i : 0x10 * (b % 16) + b);
		if (field_exact(getenv("GDRPERF_FAKE_CUDA_UUIDS"), i, f, sizeof(f))) {
			int nb = 0;

			for (const char *q = f; *q && nb < 32; q++) {
				if (*q == '-')
					continue;
				if (!isxdigit((unsigned char)*q))
					break;
				int v = isdigit((unsigned char)*q)
					    ? *q - '0'
					    : tolower((unsigned char)*q) - 'a' + 10;
				c->uuid[i][nb / 2] =
				    (unsigned char)(nb % 2 ? (c->uuid[i][nb / 2] & 0xf0) | v
							   : v << 4);
				nb++;
			}
			if (nb != 32)
				fprintf(stderr, "fake libcuda: bad UUID '%s'\n", f);
		}
	}
	visible_devices(c);
	e = getenv("GDRPERF_FAKE_CUDA_DMABUF_PCIE");
	c->dmabuf_pcie = e && atoi(e) != 0;
	e = getenv("GDRPERF_FAKE_CUDA_DMABUF_STRICT");
	c->dmabuf_strict = e && atoi(e) != 0;
	/* What the real H200 (580.159.04) answered: writes ordered for the owner. */
	e = getenv("GDRPERF_FAKE_CUDA_WRITES_ORDERING");
	c->writes_ordering = e && *e ? atoi(e) : CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER;
	e = getenv("GDRPERF_FAKE_CUDA_FLUSH_OPTIONS");
	c->flush_options = e && *e ? atoi(e) : CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST;
	e = getenv("GDRPERF_FAKE_CUDA_NO_ATTR");
	for (int i = 0; e && c->nno_attr < 16 && field_exact(e, i, f, sizeof(f)); i++)
		c->no_attr[c->nno_attr++] = atoi(f);
	e = getenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION");
	c->driver_version = e && *e ? atoi(e) : FAKE_DRIVER_VERSION;
	e = getenv("GDRPERF_FAKE_CUDA_FAIL");
	for (int i = 0; e && c->nfail < FAKE_MAX_FAIL && field_exact(e, i, f, sizeof(f)); i++) {
		char *eq = strchr(f, '=');

		if (!eq)
			continue;
		*eq = '\0';
		snprintf(c->fail[c->nfail].fn, sizeof(c->fail[0].fn), "%s", f);
		c->fail[c->nfail].rc = parse_cuerr(eq + 1);
		c->nfail++;
	}
}

/* Injected failure for entry point fn, or CUDA_SUCCESS. Caller holds no lock. */
CUresult injected(const char *fn)
{
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&g.lock);
	for (int i = 0; i < g.cfg.nfail; i++)
		if (!strcmp(g.cfg.fail[i].fn, fn))
			rc = g.cfg.fail[i].rc;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

/* Common entry checks: initialised, not made to fail, and (if need_ctx) a current context. */
CUresult enter(const char *fn, bool need_ctx)
{
	CUresult rc;

	pthread_mutex_lock(&g.lock);
	rc = g.inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_unlock(&g.lock);
	if (rc == CUDA_SUCCESS)
		rc = injected(fn);
	if (rc == CUDA_SUCCESS && need_ctx && !tls_ctx)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	return rc;
}
