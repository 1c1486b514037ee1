#include "config.h"

#include "ctl.h"

#include <errno.h>
#include <stdio.h>

int gdr_ctl_send(struct gdr_ctl *ctl, const struct gdr_msg *m, char *why, size_t wlen)
{
	return ctl->ops->send(ctl->ctx, m, why, wlen);
}

int gdr_ctl_expect(struct gdr_ctl *ctl, struct gdr_msg *m, uint16_t want, double timeout,
		   int long_wait, char *why, size_t wlen)
{
	int r = ctl->ops->recv(ctl->ctx, m, timeout, long_wait, why, wlen);

	if (r)
		return r;
	if (m->type == GDR_MSG_ERROR) {
		snprintf(why, wlen, "%s %s: %s", ctl->peer_role, ctl->peer, m->u.error.text);
		return m->u.error.code ? m->u.error.code : -EIO;
	}
	if (want && m->type != want) {
		snprintf(why, wlen, "protocol error: expected %s from %s, got %s",
			 gdr_msg_type_name(want), ctl->peer, gdr_msg_type_name(m->type));
		return -EPROTO;
	}
	return 0;
}

void gdr_ctl_send_error(struct gdr_ctl *ctl, int code, const char *text)
{
	ctl->ops->send_error(ctl->ctx, code, text);
}
