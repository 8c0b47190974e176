/* SPDX-License-Identifier: MIT */
/*
 * iwv_mr.c - protection domains and memory regions (iwv.h).
 *
 * Theory of operation.  A PD is a handle and a count of the MRs and QPs in
 * it (iwv_dealloc_pd says EBUSY while any remain).  An MR is an entry of the
 * context's STag table (ddp_stag_reg): lkey = rkey = the STag, the tagged
 * offset of its first octet is its address (as an ibverbs iova), and its
 * ibverbs access flags become DDP access rights (remote atomic: the RFC 7306
 * Atomic Requests of a QP that enabled them).  IWV_ACCESS_MW_BIND lets
 * type-2 windows be bound to it (iwv_mw.c).  Deregistration goes by the
 * STag's index (fast-registration MRs change keys) and is EBUSY while windows
 * are bound to the MR, as in ibverbs.
 */
#include <errno.h>
#include <stdlib.h>

#include <iwarp/ddp.h>

#include "iwv_obj.h"

struct iwv_pd *iwv_alloc_pd(struct iwv_context *context)
{
	struct iwv_ctx *ctx = ctx_of(context);
	struct iwv_pd_int *pd = iwv_ctx_obj_new(ctx, sizeof(*pd));

	if (!pd)
		return NULL;
	pthread_mutex_lock(&ctx->lock);
	pd->pub.context = context;
	pd->pub.handle = ctx->next_handle++;
	ctx->users++;
	pthread_mutex_unlock(&ctx->lock);
	return &pd->pub;
}

int iwv_dealloc_pd(struct iwv_pd *pub)
{
	struct iwv_pd_int *pd = (struct iwv_pd_int *)pub;
	struct iwv_ctx *ctx;

	if (!pd)
		return EINVAL;
	ctx = ctx_of(pd->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (pd->users > 0) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	ctx->users--;
	pthread_mutex_unlock(&ctx->lock);
	free(pd);
	return 0;
}

int iwv_access_to_ddp(int access, uint32_t *ddp_access)
{
	const int known = IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE |
			  IWV_ACCESS_REMOTE_READ | IWV_ACCESS_REMOTE_ATOMIC | IWV_ACCESS_MW_BIND;
	uint32_t da = 0;

	if (access & ~known)
		return EINVAL;
	/* ibverbs: remote write and remote atomic need local write. */
	if ((access & (IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IWV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (access & IWV_ACCESS_LOCAL_WRITE)
		da |= DDP_ACCESS_LOCAL_WRITE;
	if (access & IWV_ACCESS_REMOTE_WRITE)
		da |= DDP_ACCESS_REMOTE_WRITE;
	if (access & IWV_ACCESS_REMOTE_READ)
		da |= DDP_ACCESS_REMOTE_READ;
	if (access & IWV_ACCESS_REMOTE_ATOMIC)
		da |= DDP_ACCESS_REMOTE_ATOMIC;
	if (access & IWV_ACCESS_MW_BIND)
		da |= DDP_ACCESS_MW_BIND;
	/* iWARP: a peer's Send with Invalidate may invalidate any STag it was
	 * given (RFC 5040 §6.10.2 checks PD and that the STag is remote). */
	if (access & (IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ | IWV_ACCESS_REMOTE_ATOMIC))
		da |= DDP_ACCESS_REMOTE_INVALIDATE;
	*ddp_access = da;
	return 0;
}

struct iwv_mr *iwv_reg_mr(struct iwv_pd *pd, void *addr, size_t length, int access)
{
	struct iwv_ctx *ctx;
	struct iwv_mr *mr;
	uint32_t da = 0, stag;
	int r;

	if (!pd || (!addr && length)) {
		errno = EINVAL;
		return NULL;
	}
	r = iwv_access_to_ddp(access, &da);
	if (r) {
		errno = r;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = ctx_of(pd->context);
	pthread_mutex_lock(&ctx->lock);
	r = ddp_stag_reg(ctx->stags, pd->handle, addr, (uint64_t)(uintptr_t)addr, length, da,
			 &stag);
	if (r == IW_OK)
		iwv_pd_use(pd, 1);
	pthread_mutex_unlock(&ctx->lock);
	if (r != IW_OK) {
		free(mr);
		errno = iwv_errno(r);
		return NULL;
	}
	/* lkey = rkey = handle = the STag */
	*mr = (struct iwv_mr){.context = pd->context,
			      .pd = pd,
			      .addr = addr,
			      .length = length,
			      .handle = stag,
			      .lkey = stag,
			      .rkey = stag};
	return mr;
}

int iwv_dereg_mr(struct iwv_mr *mr)
{
	struct iwv_ctx *ctx;
	int r;

	if (!mr)
		return EINVAL;
	ctx = ctx_of(mr->context);
	pthread_mutex_lock(&ctx->lock);
	r = ddp_stag_free_index(ctx->stags, mr->handle);
	if (r == IW_OK)
		iwv_pd_use(mr->pd, -1);
	pthread_mutex_unlock(&ctx->lock);
	if (r == IW_ESTATE)
		return EBUSY; /* memory windows are bound to it */
	if (r != IW_OK)
		return EINVAL;
	free(mr);
	return 0;
}
