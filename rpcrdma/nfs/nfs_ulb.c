/* SPDX-License-Identifier: MIT */
/*
 * nfs_ulb.c - the NFS Upper-Layer Binding of RPC-over-RDMA (RFC 8267): the
 * `rpcrdma_nfs_ulb` struct and its dispatch by program, version, procedure.
 *
 * Theory of operation.  The transport (RFC 8166 §6) asks the binding three
 * things about an NFS message: which arguments of a call are DDP-eligible
 * and where they are (walk_call), which results of a reply are (walk_reply),
 * and how large the reply to a call can be (reply_plan).  This file picks
 * the walker:
 *
 *   program 100003 version 2, 3   nfs_v3.c (RFC 8267 §4)
 *   program 100003 version 4      proc 1 COMPOUND: nfs_v4.c (RFC 8267 §6);
 *                                 proc 0 NULL: nothing
 *   anything else                 no items (NFSACL, MOUNT, NLM, NSM and the
 *                                 NFSv4 callback program: RFC 8267 §5, §6.5)
 *
 * Calls with an RPCSEC_GSS credential (flavor 6) are walked as having no
 * items, and their replies too: with integrity or privacy the arguments and
 * results are wrapped in a GSS envelope, and this binding does not unwrap
 * them (RFC 8267 §8 leaves the choice to the implementation; reducing
 * nothing is always allowed).  Their reply plan is "unpredictable".
 *
 * Walks take the body (procedure arguments or results, after the RPC header)
 * and report item offsets from its start; see rpcrdma_ulb.h for reduced and
 * unreduced streams.  reply_plan expects the unreduced call (the requester
 * plans before it moves any argument into a Read chunk).
 */
#include "nfs_xdr.h"

#define RPC_AUTH_GSS 6u

static bool nfs_handles(void *ulb_arg, uint32_t prog, uint32_t vers)
{
	(void)ulb_arg;
	return prog == RPCRDMA_NFS_PROG && vers >= 2 && vers <= 4;
}

static bool nfs_walkable(const struct rpcrdma_rpcinfo *call)
{
	return nfs_handles(NULL, call->prog, call->vers) && call->cred_flavor != RPC_AUTH_GSS;
}

/* Both walks: the same checks, then the version's call or reply walker. */
static int nfs_walk_msg(const struct rpcrdma_rpcinfo *call, const uint8_t *body, size_t len,
			rpcrdma_item_fn fn, void *fn_arg, bool reply)
{
	struct nfs_walk w;

	if (!call || !nfs_walkable(call))
		return 0;
	if (!body && len)
		return IW_ERPC_RPC;
	nfs_walk_init(&w, body, len, fn, fn_arg);
	if (call->vers == 4) {
		if (call->proc != 1)
			return 0;
		return reply ? nfs_v4_walk_reply(&w) : nfs_v4_walk_call(&w, NULL);
	}
	return reply ? nfs_v3_walk_reply(call->vers, call->proc, &w)
		     : nfs_v3_walk_call(call->vers, call->proc, &w);
}

static int nfs_walk_call(void *ulb_arg, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			 size_t len, rpcrdma_item_fn fn, void *fn_arg)
{
	(void)ulb_arg;
	return nfs_walk_msg(call, body, len, fn, fn_arg, false);
}

static int nfs_walk_reply(void *ulb_arg, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			  size_t len, rpcrdma_item_fn fn, void *fn_arg)
{
	(void)ulb_arg;
	return nfs_walk_msg(call, body, len, fn, fn_arg, true);
}

static int nfs_reply_plan(void *ulb_arg, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			  size_t len, struct rpcrdma_reply_plan *plan)
{
	struct nfs_plan p = {.plan = plan};
	struct nfs_walk w;
	int r = 0;

	(void)ulb_arg;
	if (!plan)
		return IW_EINVAL;
	memset(plan, 0, sizeof(*plan));
	if (!call || !nfs_walkable(call) || (!body && len)) {
		/* not ours, or GSS-wrapped: nothing known about the size */
		plan->unpredictable = true;
		return 0;
	}
	nfs_walk_init(&w, body, len, NULL, NULL);
	if (call->vers == 4) {
		if (call->proc == 1)
			r = nfs_v4_walk_call(&w, &p);
		else if (call->proc != 0)
			nfs_plan_unpredictable(&p);
	} else {
		r = nfs_v3_plan(call->vers, call->proc, &w.c, &p);
	}
	if (r) {
		memset(plan, 0, sizeof(*plan));
		return r;
	}
	nfs_plan_finish(&p);
	return 0;
}

const struct rpcrdma_ulb rpcrdma_nfs_ulb = {
	.name = "nfs",
	.handles = nfs_handles,
	.walk_call = nfs_walk_call,
	.walk_reply = nfs_walk_reply,
	.reply_plan = nfs_reply_plan,
};
