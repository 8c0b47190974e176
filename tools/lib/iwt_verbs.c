/* SPDX-License-Identifier: MIT */
/*
 * iwt_verbs.c - open and close the verbs objects every verbs tool has:
 * context, PD, channels, listening id (iwt_verbs.h).
 */
#include "iwt_verbs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

enum iwt_verbs_step iwt_verbs_open(struct iwt_verbs *v, const struct iwt_opt *o, const char *prog,
				   unsigned flags)
{
	memset(v, 0, sizeof(*v));
	v->ctx = iwt_opt_open(o, prog);
	if (!v->ctx)
		return IWT_VERBS_CONTEXT;
	v->pd = iwv_alloc_pd(v->ctx);
	if (!v->pd)
		return IWT_VERBS_PD;
	if (flags & IWT_VERBS_F_COMP_CHANNEL) {
		v->comp_ch = iwv_create_comp_channel(v->ctx);
		if (!v->comp_ch || ((flags & IWT_VERBS_F_NONBLOCK) && nonblock(v->comp_ch->fd)))
			return IWT_VERBS_COMP_CHANNEL;
	}
	v->cm_ch = iwcm_create_event_channel_ctx(v->ctx);
	if (!v->cm_ch || ((flags & IWT_VERBS_F_NONBLOCK) && nonblock(v->cm_ch->fd)))
		return IWT_VERBS_CM_CHANNEL;
	return IWT_VERBS_OK;
}

int iwt_verbs_close(struct iwt_verbs *v)
{
	int rc = 0;

	/* children before parents: the id lives on the channel, all on the context */
	if (v->listen_id)
		iwcm_destroy_id(v->listen_id);
	if (v->cm_ch)
		iwcm_destroy_event_channel(v->cm_ch);
	if (v->comp_ch)
		iwv_destroy_comp_channel(v->comp_ch);
	if (v->pd)
		iwv_dealloc_pd(v->pd);
	if (v->ctx)
		rc = iwv_close_device(v->ctx);
	memset(v, 0, sizeof(*v));
	return rc;
}
