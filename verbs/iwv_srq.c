/* SPDX-License-Identifier: MIT */
/*
 * iwv_srq.c - shared receive queues (iwv.h): create, modify, query, destroy,
 * post receives; the SRQ limit event.
 *
 * Theory of operation.  A verbs SRQ wraps one sans-I/O rdmap_srq (rdmap_qp.h,
 * "Shared receive queues") under the context lock.  QPs created with
 * iwv_qp_init_attr.srq hand it to their rdmap_qp, which takes the next
 * receive when a Send (an untagged QN 0 message, RFC 5041 §5.3) starts
 * arriving; from then on the receive is the QP's: it completes on the QP's
 * recv_cq with the QP's qp_num, or is flushed there if the QP fails.  What
 * the SRQ still holds belongs to no QP: a failing QP leaves it to the others,
 * and destroying the SRQ discards it without completions (as ibverbs: there
 * is no CQ to complete it in).
 *
 * As in ibverbs, an SRQ belongs to a PD (it counts as a user of it) and a QP
 * may use an SRQ of its own context only; here it must also be of the QP's
 * PD, because the receive buffers are checked against the PD of the QP that
 * takes them (EINVAL otherwise).  Resizing (IWV_SRQ_MAX_WR) is not supported
 * (EINVAL); IWV_SRQ_LIMIT arms the limit (ibv_modify_srq(3)): when a QP takes
 * a receive and fewer than srq_limit are left, IWV_EVENT_SRQ_LIMIT_REACHED is
 * queued on the context (iwv_async.c) and the limit is disarmed (srq_limit
 * reads 0) until armed again.
 */
#include <errno.h>
#include <stdlib.h>

#include "iwv_obj.h"

struct iwv_srq *iwv_create_srq(struct iwv_pd *pd, struct iwv_srq_init_attr *attr)
{
	struct iwv_srq_int *srq;
	struct iwv_ctx *ctx;
	int r;

	if (!pd || !attr || attr->attr.max_wr < 1 || attr->attr.max_wr > IWV_MAX_QP_WR ||
	    attr->attr.max_sge < 1 || attr->attr.max_sge > IWV_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	ctx = ctx_of(pd->context);
	srq = iwv_ctx_obj_new(ctx, sizeof(*srq));
	if (!srq)
		return NULL;
	r = rdmap_srq_create(attr->attr.max_wr, &srq->rs);
	if (r != IW_OK) {
		free(srq);
		errno = iwv_errno(r);
		return NULL;
	}
	iw_list_init(&srq->qps);
	srq->pub.context = pd->context;
	srq->pub.srq_context = attr->srq_context;
	srq->pub.pd = pd;
	srq->attr.max_wr = attr->attr.max_wr;
	srq->attr.max_sge = attr->attr.max_sge;
	srq->attr.srq_limit = 0; /* ignored at create time (ibv_create_srq(3)) */
	iwv_async_node_init(&srq->limit_ev, IWV_EVENT_SRQ_LIMIT_REACHED, &srq->pub);
	pthread_mutex_lock(&ctx->lock);
	srq->pub.handle = ctx->next_handle++;
	iwv_pd_use(pd, 1);
	pthread_mutex_unlock(&ctx->lock);
	attr->attr = srq->attr; /* what was granted: exactly what was asked */
	return &srq->pub;
}

int iwv_modify_srq(struct iwv_srq *pub, struct iwv_srq_attr *attr, int attr_mask)
{
	struct iwv_srq_int *srq = srq_of(pub);
	struct iwv_ctx *ctx;

	if (!srq || !attr || (attr_mask & ~(IWV_SRQ_MAX_WR | IWV_SRQ_LIMIT)) ||
	    (attr_mask & IWV_SRQ_MAX_WR))
		return EINVAL;
	if (!(attr_mask & IWV_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->attr.max_wr)
		return EINVAL;
	ctx = ctx_of(srq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	rdmap_srq_set_limit(srq->rs, attr->srq_limit);
	srq->attr.srq_limit = attr->srq_limit;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int iwv_query_srq(struct iwv_srq *pub, struct iwv_srq_attr *attr)
{
	struct iwv_srq_int *srq = srq_of(pub);
	struct iwv_ctx *ctx;

	if (!srq || !attr)
		return EINVAL;
	ctx = ctx_of(srq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	*attr = srq->attr;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int iwv_destroy_srq(struct iwv_srq *pub)
{
	struct iwv_srq_int *srq = srq_of(pub);
	struct iwv_ctx *ctx;

	if (!srq)
		return EINVAL;
	ctx = ctx_of(srq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (srq->users > 0 || srq->events_unacked > 0) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	iwv_async_cancel(ctx, &srq->limit_ev);
	iwv_pd_use(srq->pub.pd, -1);
	rdmap_srq_destroy(srq->rs); /* no QP uses it: IW_OK */
	pthread_mutex_unlock(&ctx->lock);
	free(srq);
	return 0;
}

static int post_one_srq_recv(struct iwv_srq_int *srq, const struct iwv_recv_wr *wr)
{
	struct rdmap_recv_wr w = {.wr_id = wr->wr_id, .num_sge = wr->num_sge};
	int r;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->attr.max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		w.sg[i].addr = wr->sg_list[i].addr;
		w.sg[i].length = wr->sg_list[i].length;
		w.sg[i].lkey = wr->sg_list[i].lkey;
	}
	r = rdmap_srq_post(srq->rs, &w);
	if (r != IW_OK)
		return r == IW_ENOSPC ? ENOMEM : EINVAL;
	return 0;
}

int iwv_post_srq_recv(struct iwv_srq *pub, struct iwv_recv_wr *wr, struct iwv_recv_wr **bad_wr)
{
	struct iwv_srq_int *srq = srq_of(pub);
	struct iwv_ctx *ctx;
	int r = 0;

	if (!srq || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	ctx = ctx_of(srq->pub.context);
	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		r = post_one_srq_recv(srq, wr);
		if (r) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
	}
	for (struct iw_list *l = srq->qps.next; l != &srq->qps; l = l->next)
		iwv_qp_rx_ready(iw_container_of(l, struct iwv_qp_int, srq_node));
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

void iwv_srq_check_limit(struct iwv_srq_int *srq)
{
	if (!rdmap_srq_limit_reached(srq->rs))
		return;
	srq->attr.srq_limit = 0;
	iwv_async_post(ctx_of(srq->pub.context), &srq->limit_ev);
}
