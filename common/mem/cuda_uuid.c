/* GPU UUIDs as text, the way nvidia-smi -L and CUDA_VISIBLE_DEVICES write them. */
#include "config.h"

#include "cuda.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void gdr_cuda_format_uuid(const unsigned char b[16], char *buf, size_t len)
{
	snprintf(buf, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

int gdr_cuda_is_uuid_spec(const char *spec)
{
	return spec && (!strncasecmp(spec, "GPU-", 4) || !strncasecmp(spec, "MIG-", 4));
}

/* The hex digits of s after its 4-character prefix, lower case, into out: their count. */
static size_t uuid_digits(const char *s, char *out, size_t len)
{
	size_t n = 0;

	for (s += 4; *s && n + 1 < len; s++) {
		if (*s == '-')
			continue;
		if (!isxdigit((unsigned char)*s))
			return 0;
		out[n++] = (char)tolower((unsigned char)*s);
	}
	out[n] = '\0';
	return *s ? 0 : n;
}

int gdr_cuda_uuid_match(const char *spec, const char *uuid)
{
	char a[40], b[40];

	if (!gdr_cuda_is_uuid_spec(spec) || !gdr_cuda_is_uuid_spec(uuid))
		return 0;
	/* The driver reports bare bytes: a MIG instance's UUID prints as GPU-… there. */
	return uuid_digits(spec, a, sizeof(a)) == 32 && uuid_digits(uuid, b, sizeof(b)) == 32 &&
	       !strcmp(a, b);
}
