/* SPDX-License-Identifier: MIT */
/*
 * iwv_mw.c - memory windows, fast-registration MRs and the verbs side of the
 * three local memory work requests (iwv.h): IWV_WR_LOCAL_INV, IWV_WR_BIND_MW
 * and IWV_WR_REG_MR.
 *
 * Theory of operation.  A window is an entry of the context's STag table
 * (ddp_stag_alloc_mw): allocated invalid, bound by an IWV_WR_BIND_MW work
 * request on a QP, which associates it with that QP's RDMAP stream (iWARP
 * has type-2 windows only; type 1 - ibv_bind_mw - is EOPNOTSUPP).  A
 * fast-registration MR (iwv_alloc_mr) is an entry with room for a page list
 * (ddp_stag_alloc), invalid until an IWV_WR_REG_MR registers it.  The work
 * requests are checked here (EINVAL for what is wrong whatever the STag
 * table says), translated to rdmap_qp's RDMAP_WR_LOCAL_INV / _BIND_MW /
 * _FAST_REG, and done by the QP in send-queue order (rdmap_qp.c,
 * tx_start_local); what only the table can tell (a stale key, an MR without
 * IWV_ACCESS_MW_BIND, a range outside the MR, an MR still valid) fails the
 * work request there (IWV_WC_MW_BIND_ERR, IWV_WC_LOC_QP_OP_ERR).
 *
 * Keys: mw->rkey takes the bind's new rkey, and an MR's lkey/rkey take
 * index << 8 | wr.reg.key, when the work request is posted (the consumer
 * names the next key, as ibv_post_send's bind_mw.rkey and the kernel's
 * ib_update_fast_reg_key).  Handles keep the index: the objects are freed by
 * index (ddp_stag_free_index), whatever the current key.
 */
#include <errno.h>
#include <stdlib.h>

#include <iwarp/ddp.h>

#include "iwv_obj.h"

struct iwv_mw *iwv_alloc_mw(struct iwv_pd *pd, enum iwv_mw_type type)
{
	struct iwv_ctx *ctx;
	struct iwv_mw *mw;
	uint32_t stag;
	int r;

	if (!pd || (type != IWV_MW_TYPE_1 && type != IWV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	if (type == IWV_MW_TYPE_1) {
		errno = EOPNOTSUPP; /* iWARP windows are bound to a stream: type 2 only */
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = ctx_of(pd->context);
	pthread_mutex_lock(&ctx->lock);
	r = ddp_stag_alloc_mw(ctx->stags, pd->handle, &stag);
	if (r == IW_OK)
		iwv_pd_use(pd, 1);
	pthread_mutex_unlock(&ctx->lock);
	if (r != IW_OK) {
		free(mw);
		errno = iwv_errno(r);
		return NULL;
	}
	*mw = (struct iwv_mw){
		.context = pd->context, .pd = pd, .rkey = stag, .handle = stag, .type = type};
	return mw;
}

int iwv_dealloc_mw(struct iwv_mw *mw)
{
	struct iwv_ctx *ctx;
	int r;

	if (!mw)
		return EINVAL;
	ctx = ctx_of(mw->context);
	pthread_mutex_lock(&ctx->lock);
	/* A bound window is unbound (its MR may then be deregistered). */
	r = ddp_stag_free_index(ctx->stags, mw->handle);
	if (r == IW_OK)
		iwv_pd_use(mw->pd, -1);
	pthread_mutex_unlock(&ctx->lock);
	if (r != IW_OK)
		return EINVAL;
	free(mw);
	return 0;
}

struct iwv_mr *iwv_alloc_mr(struct iwv_pd *pd, uint32_t max_num_pages)
{
	struct iwv_ctx *ctx;
	struct iwv_mr *mr;
	uint32_t stag;
	int r;

	if (!pd || max_num_pages == 0 || max_num_pages > DDP_FAST_REG_MAX_PAGES) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = ctx_of(pd->context);
	pthread_mutex_lock(&ctx->lock);
	r = ddp_stag_alloc(ctx->stags, pd->handle, max_num_pages, &stag);
	if (r == IW_OK)
		iwv_pd_use(pd, 1);
	pthread_mutex_unlock(&ctx->lock);
	if (r != IW_OK) {
		free(mr);
		errno = iwv_errno(r);
		return NULL;
	}
	*mr = (struct iwv_mr){
		.context = pd->context, .pd = pd, .handle = stag, .lkey = stag, .rkey = stag};
	return mr;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int reg_mr_wr(struct iwv_qp_int *qp, const struct iwv_send_wr *wr, struct rdmap_send_wr *w)
{
	struct iwv_mr *mr = wr->reg.mr;
	uint32_t da, stag, max_pages = 0;
	int r;

	if (!mr || mr->pd != qp->pub.pd || !wr->reg.page_list || wr->reg.num_pages == 0 ||
	    wr->reg.num_pages > DDP_FAST_REG_MAX_PAGES || !pow2(wr->reg.page_size) ||
	    wr->reg.page_size < DDP_PAGE_SIZE_MIN || wr->reg.page_size > DDP_PAGE_SIZE_MAX ||
	    wr->reg.first_page_off >= wr->reg.page_size ||
	    wr->reg.length >
		    (uint64_t)wr->reg.num_pages * wr->reg.page_size - wr->reg.first_page_off ||
	    wr->reg.length > UINT64_MAX - wr->reg.iova)
		return EINVAL;
	/* Only an MR of iwv_alloc_mr, within its page capacity (the context lock is held). */
	if (!ddp_stag_fast_reg_entry(ctx_of(qp->pub.context)->stags, mr->handle, &max_pages) ||
	    wr->reg.num_pages > max_pages)
		return EINVAL;
	r = iwv_access_to_ddp(wr->reg.access, &da);
	if (r)
		return r;
	stag = (mr->rkey & 0xFFFFFF00u) | (wr->reg.key & 0xFFu);
	w->opcode = RDMAP_WR_FAST_REG;
	w->fast_reg = (struct rdmap_fast_reg){.stag = stag,
					      .access = da,
					      .iova = wr->reg.iova,
					      .length = wr->reg.length,
					      .pages = wr->reg.page_list,
					      .npages = wr->reg.num_pages,
					      .page_size = wr->reg.page_size,
					      .first_page_off = wr->reg.first_page_off};
	return 0;
}

static int bind_mw_wr(struct iwv_qp_int *qp, const struct iwv_send_wr *wr, struct rdmap_send_wr *w)
{
	const struct iwv_mw_bind_info *bi = &wr->bind_mw.bind_info;
	const unsigned int known =
		IWV_ACCESS_REMOTE_READ | IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_ATOMIC;
	struct iwv_mw *mw = wr->bind_mw.mw;
	uint32_t da = 0;

	if (!mw || mw->pd != qp->pub.pd || mw->type != IWV_MW_TYPE_2)
		return EINVAL;
	/* The same index, another key. */
	if ((wr->bind_mw.rkey ^ mw->rkey) & 0xFFFFFF00u || wr->bind_mw.rkey == mw->rkey)
		return EINVAL;
	if (bi->length && (!bi->mr || bi->mr->pd != qp->pub.pd))
		return EINVAL;
	if (bi->mw_access_flags & ~known)
		return EINVAL;
	if (bi->mw_access_flags & IWV_ACCESS_REMOTE_ATOMIC)
		da |= DDP_ACCESS_REMOTE_ATOMIC; /* RFC 7306 atomics through the window */
	if (bi->mw_access_flags & IWV_ACCESS_REMOTE_READ)
		da |= DDP_ACCESS_REMOTE_READ;
	if (bi->mw_access_flags & IWV_ACCESS_REMOTE_WRITE)
		da |= DDP_ACCESS_REMOTE_WRITE;
	/* As for MRs: a peer may invalidate what it was given (Send with Invalidate). */
	if (da)
		da |= DDP_ACCESS_REMOTE_INVALIDATE;
	w->opcode = RDMAP_WR_BIND_MW;
	w->bind_mw = (struct rdmap_bind_mw){.mw_stag = wr->bind_mw.rkey,
					    .mr_stag = bi->length ? bi->mr->rkey : 0,
					    .addr = bi->addr,
					    .length = bi->length,
					    .access = da};
	return 0;
}

int iwv_mem_wr(struct iwv_qp_int *qp, const struct iwv_send_wr *wr, struct rdmap_send_wr *w,
	       enum iwv_wc_opcode *wc_opcode)
{
	int r;

	if (wr->send_flags & IWV_SEND_INLINE)
		return EINVAL;
	/* Room first: the keys below change only for a work request that is posted. */
	if (qp->nfree == 0)
		return ENOMEM;
	switch (wr->opcode) {
	case IWV_WR_LOCAL_INV:
		w->opcode = RDMAP_WR_LOCAL_INV;
		w->invalidate_stag = wr->invalidate_rkey;
		*wc_opcode = IWV_WC_LOCAL_INV;
		return 0;
	case IWV_WR_BIND_MW:
		r = bind_mw_wr(qp, wr, w);
		if (r == 0)
			wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
		*wc_opcode = IWV_WC_BIND_MW;
		return r;
	case IWV_WR_REG_MR:
		r = reg_mr_wr(qp, wr, w);
		if (r == 0) {
			struct iwv_mr *mr = wr->reg.mr;

			mr->lkey = mr->rkey = w->fast_reg.stag;
			mr->addr = (void *)(uintptr_t)wr->reg.iova;
			mr->length = (size_t)wr->reg.length;
		}
		*wc_opcode = IWV_WC_REG_MR;
		return r;
	default:
		return EINVAL;
	}
}
