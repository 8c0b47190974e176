/* SPDX-License-Identifier: MIT */
/*
 * iwt_verbs.h - what every verbs tool opens first and closes last: the
 * device context (as the shared iWARP options say, iwt_opt.h), a protection
 * domain, the CM event channel, for a tool that sleeps on completions a
 * completion channel, and for a server its listening id.  Part of the tools
 * library (tools/lib, prefix iwt_).
 *
 * Theory of operation.  iwt_verbs_open() opens them in that order and stops
 * at the first failure, saying which step failed (the tool words the
 * message; errno is the cause); iwt_verbs_close() closes whatever exists in
 * the reverse order, so it serves after a failure half way as well as at
 * the end.  A tool's own objects on the device (ids, QPs, CQs, memory
 * regions) must be gone before iwt_verbs_close().
 */
#ifndef IWARP_TOOLS_IWT_VERBS_H
#define IWARP_TOOLS_IWT_VERBS_H

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "iwt_opt.h"

#define IWT_VERBS_F_COMP_CHANNEL 1u /* open a completion channel too */
#define IWT_VERBS_F_NONBLOCK	 2u /* the channels' descriptors O_NONBLOCK (a polling loop) */

struct iwt_verbs {
	struct iwv_context *ctx;
	struct iwv_pd *pd;
	struct iwv_comp_channel *comp_ch; /* with IWT_VERBS_F_COMP_CHANNEL */
	struct iwcm_event_channel *cm_ch;
	struct iwcm_id *listen_id; /* the tool's listening id, if it made one */
};

/* The step iwt_verbs_open() failed in. */
enum iwt_verbs_step {
	IWT_VERBS_OK = 0,
	IWT_VERBS_CONTEXT,	/* iwt_opt_open(): the message is on stderr already */
	IWT_VERBS_PD,		/* iwv_alloc_pd() */
	IWT_VERBS_COMP_CHANNEL, /* iwv_create_comp_channel(), or O_NONBLOCK on it */
	IWT_VERBS_CM_CHANNEL,	/* iwcm_create_event_channel_ctx(), or O_NONBLOCK on it */
};

/*
 * Zero *v, then open the context for `prog` with the options `o`, a PD, the
 * completion channel (IWT_VERBS_F_COMP_CHANNEL) and the CM event channel.
 * Returns IWT_VERBS_OK, or the step that failed with errno set.
 */
enum iwt_verbs_step iwt_verbs_open(struct iwt_verbs *v, const struct iwt_opt *o, const char *prog,
				   unsigned flags);

/*
 * Destroy the listening id, the CM event channel, the completion channel and
 * the PD, and close the context, those that exist.  Returns 0, or what
 * iwv_close_device() returned.
 */
int iwt_verbs_close(struct iwt_verbs *v);

#endif
