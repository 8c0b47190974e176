/* SPDX-License-Identifier: MIT */
/*
 * iwv_qp.c - queue pairs (iwv.h): create, destroy, query, modify to ERR,
 * post send and receive work requests, and move completions to the CQs; and
 * the QP's half of the seam with the connection that carries it
 * (iwv_qp_link.h).
 *
 * Theory of operation.  A verbs QP wraps one sans-I/O rdmap_qp (rdmap_qp.h),
 * created IDLE so receives and sends can be posted before the connection
 * manager (iwcm.c) has finished MPA; the CM then starts it (iwv_qp_start).
 * Every send WR is posted to the rdmap_qp signalled, under an internal slot
 * number, so the verbs layer sees every end of every WR: it knows when an
 * inline buffer is free again, and it reports unsignalled successes to
 * nobody while errors always produce a completion (as ibverbs).
 *
 * Completions travel rdmap_qp -> the QP's stage rings -> the CQ ring
 * (iwv_obj.h): a WR counts against its queue until its completion leaves the
 * stage.  A WR posted to a QP in error completes at once with a flush status.
 * After posting, the QP kicks its link, which writes at once in the posting
 * thread.  The one conversion of an rdmap work-completion status to an
 * ibverbs one is wc_status() here.
 *
 * A QP on a shared receive queue (iwv_srq.c) has no receive queue of its own:
 * its rdmap_qp takes receives from the SRQ, so they are not counted against
 * the QP, and it may take more than its receive stage (sized with the SRQ's
 * max_wr) holds.  Such a QP therefore moves only as many completions out of
 * its rdmap_qp as that stage has room for (qp_pull); the rest wait in the
 * rdmap_qp, which takes no new receive while its own ring is full (a Send
 * then fails the QP with the "no buffer" Terminate, the iWARP counterpart of
 * a CQ overrun).  Nothing is lost either way.
 *
 * Asynchronous events (iwv_async.c) are raised when the QP is first seen in
 * ERR (qp_note_err): IWV_EVENT_QP_FATAL when a Terminate or the LLP failed it,
 * IWV_EVENT_QP_LAST_WQE_REACHED for a QP on an SRQ (its receive in progress
 * is flushed at that moment, so it will take no more); and an SRQ's limit is
 * checked after the QP took receives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/ddp.h>

#include "iw_bytes.h"
#include "iwv_obj.h"

/* rdmap_qp's completion statuses as ibverbs ones (the same meanings). */
static const enum iwv_wc_status wc_status_of[] = {
	[RDMAP_WC_SUCCESS] = IWV_WC_SUCCESS,
	[RDMAP_WC_LOC_LEN_ERR] = IWV_WC_LOC_LEN_ERR,
	[RDMAP_WC_LOC_PROT_ERR] = IWV_WC_LOC_PROT_ERR,
	[RDMAP_WC_WR_FLUSH_ERR] = IWV_WC_WR_FLUSH_ERR,
	[RDMAP_WC_REM_ACCESS_ERR] = IWV_WC_REM_ACCESS_ERR,
	[RDMAP_WC_REM_OP_ERR] = IWV_WC_REM_OP_ERR,
	[RDMAP_WC_REM_INV_REQ_ERR] = IWV_WC_REM_INV_REQ_ERR,
	[RDMAP_WC_GENERAL_ERR] = IWV_WC_GENERAL_ERR,
	[RDMAP_WC_MW_BIND_ERR] = IWV_WC_MW_BIND_ERR,
	[RDMAP_WC_LOC_QP_OP_ERR] = IWV_WC_LOC_QP_OP_ERR,
};

static enum iwv_wc_status wc_status(enum rdmap_wc_status s)
{
	/* IWV_WC_SUCCESS is 0: a status without an entry must not read as success */
	if ((unsigned)s < IW_ARRAY_SIZE(wc_status_of) &&
	    (s == RDMAP_WC_SUCCESS || wc_status_of[s] != IWV_WC_SUCCESS))
		return wc_status_of[s];
	return IWV_WC_GENERAL_ERR;
}

static const char *const wc_status_names[] = {
	[IWV_WC_SUCCESS] = "success",
	[IWV_WC_LOC_LEN_ERR] = "local length error",
	[IWV_WC_LOC_QP_OP_ERR] = "local QP operation error",
	[IWV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	[IWV_WC_LOC_PROT_ERR] = "local protection error",
	[IWV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
	[IWV_WC_MW_BIND_ERR] = "memory management operation error",
	[IWV_WC_BAD_RESP_ERR] = "bad response error",
	[IWV_WC_LOC_ACCESS_ERR] = "local access error",
	[IWV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	[IWV_WC_REM_ACCESS_ERR] = "remote access error",
	[IWV_WC_REM_OP_ERR] = "remote operation error",
	[IWV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[IWV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	[IWV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	[IWV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	[IWV_WC_REM_ABORT_ERR] = "aborted error",
	[IWV_WC_INV_EECN_ERR] = "invalid EE context number",
	[IWV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	[IWV_WC_FATAL_ERR] = "fatal error",
	[IWV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	[IWV_WC_GENERAL_ERR] = "general error",
};

const char *iwv_wc_status_str(enum iwv_wc_status status)
{
	if ((unsigned)status < IW_ARRAY_SIZE(wc_status_names) && wc_status_names[status])
		return wc_status_names[status];
	return "unknown";
}

/* ---------------------------------------------------------------------- */
/* QP completions: rdmap_qp -> stage -> CQ                                  */
/* ---------------------------------------------------------------------- */

/* IDLE (before the connection is up) and RTS take new work; anything else flushes it. */
static bool qp_accepts_work(const struct iwv_qp_int *qp)
{
	enum rdmap_qp_state st = rdmap_qp_state(qp->rq);

	return st == RDMAP_QP_IDLE || st == RDMAP_QP_RTS;
}

static void slot_free(struct iwv_qp_int *qp, uint32_t i)
{
	qp->free_slots[qp->nfree++] = i;
}

static int qp_pull(struct iwv_qp_int *qp);

static void stage_flush_once(struct iwv_qp_int *qp)
{
	struct iwv_wc *wc;

	while ((wc = wc_ring_front(&qp->sstage))) {
		/* the stage holds the slot number in wr_id until here */
		uint32_t i = (uint32_t)wc->wr_id;
		struct send_slot *s = &qp->slots[i];
		struct iwv_wc out = *wc;

		if (wc->status != IWV_WC_SUCCESS || s->signaled) {
			out.wr_id = s->wr_id;
			if (!iwv_cq_push(cq_of(qp->pub.send_cq), &out))
				break;
		}
		wc_ring_pop(&qp->sstage);
		slot_free(qp, i);
	}
	while ((wc = wc_ring_front(&qp->rstage))) {
		if (!iwv_cq_push(cq_of(qp->pub.recv_cq), wc))
			break;
		wc_ring_pop(&qp->rstage);
		if (!qp->pub.srq)
			qp->recv_posted--;
	}
}

void iwv_qp_stage_flush(struct iwv_qp_int *qp)
{
	stage_flush_once(qp);
	/* a QP on an SRQ may have completions waiting for stage room (qp_pull) */
	while (qp->pub.srq && qp->rstage.count < qp->rstage.cap && qp_pull(qp) > 0)
		stage_flush_once(qp);
}

static void wc_from_rdmap(struct iwv_qp_int *qp, const struct rdmap_wc *in, struct iwv_wc *out)
{
	memset(out, 0, sizeof(*out));
	out->wr_id = in->wr_id;
	out->status = wc_status(in->status);
	out->vendor_err = in->err < 0 ? (uint32_t)-in->err : 0;
	out->byte_len = in->byte_len;
	out->qp_num = qp->pub.qp_num;
	switch (in->opcode) {
	case RDMAP_WC_SEND:
		out->opcode = IWV_WC_SEND;
		break;
	case RDMAP_WC_RDMA_WRITE:
		out->opcode = IWV_WC_RDMA_WRITE;
		break;
	case RDMAP_WC_RDMA_READ:
		out->opcode = IWV_WC_RDMA_READ;
		break;
	case RDMAP_WC_COMP_SWAP:
		out->opcode = IWV_WC_COMP_SWAP;
		break;
	case RDMAP_WC_FETCH_ADD:
		out->opcode = IWV_WC_FETCH_ADD;
		break;
	case RDMAP_WC_LOCAL_INV:
		out->opcode = IWV_WC_LOCAL_INV;
		break;
	case RDMAP_WC_FAST_REG:
		out->opcode = IWV_WC_REG_MR;
		break;
	case RDMAP_WC_BIND_MW:
		out->opcode = IWV_WC_BIND_MW;
		break;
	case RDMAP_WC_RECV:
	case RDMAP_WC_RECV_RDMA_WITH_IMM:
	default:
		out->opcode = in->opcode == RDMAP_WC_RECV_RDMA_WITH_IMM ? IWV_WC_RECV_RDMA_WITH_IMM
									: IWV_WC_RECV;
		out->solicited = in->solicited;
		if (in->invalidated) {
			out->wc_flags |= IWV_WC_WITH_INV;
			out->invalidated_rkey = in->invalidated_stag;
		}
		if (in->with_imm) {
			/* ibverbs' 32-bit imm_data (network order) is the first 4 of the 8 octets. */
			uint8_t b[4];

			iw_put_be32(b, (uint32_t)(in->imm >> 32));
			memcpy(&out->imm_data, b, sizeof(b));
			out->wc_flags |= IWV_WC_WITH_IMM;
		}
		break;
	}
}

/* Move completions out of the rdmap_qp into the stages; returns how many.  A QP
 * on an SRQ moves no more receive completions than its receive stage holds. */
static int qp_pull(struct iwv_qp_int *qp)
{
	struct rdmap_wc w[32];
	int n, total = 0;

	for (;;) {
		int max = (int)IW_ARRAY_SIZE(w);

		if (qp->pub.srq)
			max = (int)IW_MIN((uint32_t)max, qp->rstage.cap - qp->rstage.count);
		if (max <= 0 || (n = rdmap_qp_poll(qp->rq, w, max)) <= 0)
			break;
		for (int i = 0; i < n; i++) {
			struct iwv_wc wc;

			wc_from_rdmap(qp, &w[i], &wc);
			if (wc.opcode & IWV_WC_RECV) {
				wc_ring_push(&qp->rstage, &wc);
			} else {
				/* the opcode the user posted (flushes report it too) */
				wc.opcode = qp->slots[(uint32_t)wc.wr_id].opcode;
				wc_ring_push(&qp->sstage, &wc);
			}
		}
		total += n;
	}
	return total;
}

/* The QP is in ERR: raise its asynchronous events once (not while it is destroyed). */
static void qp_note_err(struct iwv_qp_int *qp)
{
	struct iwv_ctx *ctx = ctx_of(qp->pub.context);
	int err = rdmap_qp_error(qp->rq);

	if (qp->pub.state != IWV_QPS_ERR || qp->err_seen || qp->destroying)
		return;
	qp->err_seen = true;
	/* Fatal: a Terminate (ours or the peer's, RFC 5040 §5.4) or a broken
	 * connection; not the peer's FIN (IW_EMPA_CLOSED alone), a flush or a
	 * graceful close, nor a QP the program moved to ERR, whatever the link
	 * did then. */
	if (!qp->user_err &&
	    (qp->llp_broken || rdmap_qp_term_sent(qp->rq) || rdmap_qp_term_received(qp->rq) ||
	     (err != IW_OK && err != IW_ERDMAP_FLUSHED && err != IW_EMPA_CLOSED)))
		iwv_async_post(ctx, &qp->fatal_ev);
	if (qp->pub.srq)
		iwv_async_post(ctx, &qp->last_wqe_ev);
}

static void qp_drain(struct iwv_qp_int *qp)
{
	enum rdmap_qp_state st;

	qp_pull(qp);
	/* TERMINATE is failed already: our Terminate is still going out, but every
	 * work request has been flushed, so the program must see ERR now. */
	st = rdmap_qp_state(qp->rq);
	if (st == RDMAP_QP_TERMINATE || st == RDMAP_QP_ERROR)
		qp->pub.state = IWV_QPS_ERR;
	if (qp->pub.srq)
		iwv_srq_check_limit(srq_of(qp->pub.srq));
	qp_note_err(qp);
	iwv_qp_stage_flush(qp);
}

static void qp_flush_all(struct iwv_qp_int *qp)
{
	rdmap_qp_flush(qp->rq);
	qp_drain(qp);
	qp->pub.state = IWV_QPS_ERR;
	qp_note_err(qp);
}

/* ---------------------------------------------------------------------- */
/* QPs                                                                      */
/* ---------------------------------------------------------------------- */

static void qp_free(struct iwv_qp_int *qp)
{
	struct iwv_ctx *ctx = ctx_of(qp->pub.context);

	if (qp->rq)
		rdmap_qp_destroy(qp->rq);
	if (qp->inline_stag)
		ddp_stag_dereg(ctx->stags, qp->inline_stag);
	free(qp->inline_buf);
	free(qp->slots);
	free(qp->free_slots);
	free(qp->sstage.e);
	free(qp->rstage.e);
	free(qp);
}

/* The write of a post put off by iwv_ctx_defer(). */
static void qp_kick_deferred(struct iwv_deferred *d)
{
	struct iwv_qp_int *qp = iw_container_of(d, struct iwv_qp_int, kick);

	if (qp->link)
		qp->link_ops->kick(qp->link);
}

struct iwv_qp *iwv_create_qp(struct iwv_pd *pd, struct iwv_qp_init_attr *attr)
{
	struct rdmap_qp_config cfg;
	struct iwv_qp_int *qp;
	struct iwv_ctx *ctx;
	struct iwv_qp_cap *c;
	int r;

	if (!pd || !attr || attr->qp_type != IWV_QPT_RC || !attr->send_cq || !attr->recv_cq ||
	    attr->send_cq->context != pd->context || attr->recv_cq->context != pd->context ||
	    (attr->srq && (attr->srq->context != pd->context || attr->srq->pd != pd))) {
		errno = EINVAL;
		return NULL;
	}
	c = &attr->cap;
	if (attr->srq) {
		/* receives come from the SRQ: the QP has no receive queue */
		c->max_recv_wr = 0;
		c->max_recv_sge = 0;
	}
	if (c->max_send_wr > IWV_MAX_QP_WR || c->max_recv_wr > IWV_MAX_QP_WR ||
	    c->max_send_sge > IWV_MAX_SGE || c->max_recv_sge > IWV_MAX_SGE ||
	    c->max_inline_data > IWV_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	/* Zero depths are legal in ibverbs (a send-only QP); the engine wants 1. */
	if (c->max_send_wr == 0)
		c->max_send_wr = 1;
	if (c->max_recv_wr == 0 && !attr->srq)
		c->max_recv_wr = 1;
	if (c->max_send_sge == 0)
		c->max_send_sge = 1;
	if (c->max_recv_sge == 0 && !attr->srq)
		c->max_recv_sge = 1;
	ctx = ctx_of(pd->context);
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->pub.context = pd->context;
	qp->pub.qp_context = attr->qp_context;
	qp->pub.pd = pd;
	qp->pub.send_cq = attr->send_cq;
	qp->pub.recv_cq = attr->recv_cq;
	qp->pub.qp_type = IWV_QPT_RC;
	qp->pub.state = IWV_QPS_INIT;
	qp->pub.srq = attr->srq;
	qp->attr = *attr;
	iwv_async_node_init(&qp->fatal_ev, IWV_EVENT_QP_FATAL, &qp->pub);
	iwv_async_node_init(&qp->last_wqe_ev, IWV_EVENT_QP_LAST_WQE_REACHED, &qp->pub);
	iwv_deferred_init(&qp->kick, qp_kick_deferred);
	iw_list_init(&qp->ctx_node);
	iw_list_init(&qp->srq_node);
	qp->slots = calloc(c->max_send_wr, sizeof(*qp->slots));
	qp->free_slots = calloc(c->max_send_wr, sizeof(*qp->free_slots));
	qp->sstage.e = calloc(c->max_send_wr, sizeof(*qp->sstage.e));
	qp->sstage.cap = c->max_send_wr;
	/* with an SRQ: as many as it holds (max_wr is fixed, see iwv_srq.c) */
	qp->rstage.cap = attr->srq ? srq_of(attr->srq)->attr.max_wr : c->max_recv_wr;
	qp->rstage.e = calloc(qp->rstage.cap, sizeof(*qp->rstage.e));
	if (c->max_inline_data)
		qp->inline_buf = malloc((size_t)c->max_inline_data * c->max_send_wr);
	if (!qp->slots || !qp->free_slots || !qp->sstage.e || !qp->rstage.e ||
	    (c->max_inline_data && !qp->inline_buf)) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < c->max_send_wr; i++)
		qp->free_slots[i] = c->max_send_wr - 1 - i;
	qp->nfree = c->max_send_wr;

	rdmap_qp_config_default(&cfg);
	cfg.stags = ctx->stags;
	cfg.pd = pd->handle;
	cfg.sq_depth = c->max_send_wr;
	cfg.rq_depth = c->max_recv_wr;
	cfg.srq = attr->srq ? srq_of(attr->srq)->rs : NULL;
	cfg.mulpdu = mpa_mulpdu(1460, false); /* replaced by the CM once the MSS is known */
	cfg.start_idle = true;
	memset(&cfg.mpa, 0, sizeof(cfg.mpa));
	cfg.mpa.ird = IWV_QP_IRD_CAP;
	cfg.mpa.ord = IWV_QP_ORD_CAP;
	cfg.rfc7306 = attr->rfc7306 != 0;
	cfg.rnr_hold = attr->rnr_hold_ms > 0;
	/* cfg.stream (memory windows) is the QP's handle, set under the lock below */

	pthread_mutex_lock(&ctx->lock);
	r = IW_OK;
	if (qp->inline_buf)
		r = ddp_stag_reg(
			ctx->stags, pd->handle, qp->inline_buf, (uint64_t)(uintptr_t)qp->inline_buf,
			(uint64_t)c->max_inline_data * c->max_send_wr, 0, &qp->inline_stag);
	cfg.stream = ctx->next_handle; /* == qp->pub.handle: unique in the context */
	if (r == IW_OK)
		r = rdmap_qp_create(&cfg, &qp->rq);
	if (r != IW_OK) {
		pthread_mutex_unlock(&ctx->lock);
		qp_free(qp);
		errno = iwv_errno(r);
		return NULL;
	}
	qp->pub.handle = ctx->next_handle++;
	qp->pub.qp_num = qp->pub.handle;
	iwv_pd_use(pd, 1);
	cq_of(attr->send_cq)->users++;
	cq_of(attr->recv_cq)->users++;
	if (attr->srq)
		srq_of(attr->srq)->users++;
	iw_list_add_tail(&ctx->qps, &qp->ctx_node);
	if (attr->srq)
		iw_list_add_tail(&srq_of(attr->srq)->qps, &qp->srq_node);
	pthread_mutex_unlock(&ctx->lock);
	return &qp->pub;
}

int iwv_destroy_qp(struct iwv_qp *pub)
{
	struct iwv_qp_int *qp = qp_of(pub);
	struct iwv_ctx *ctx;

	if (!qp)
		return EINVAL;
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	/* ibverbs waits for the acknowledgement of the QP's events; EBUSY cannot hang */
	if (qp->events_unacked > 0) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	qp->destroying = true;
	iwv_async_cancel(ctx, &qp->fatal_ev);
	iwv_async_cancel(ctx, &qp->last_wqe_ev);
	iwv_deferred_cancel(&qp->kick);
	if (qp->link) {
		qp->link_ops->detach(qp->link, true);
		qp->link = NULL;
	}
	qp_flush_all(qp);
	iw_list_del(&qp->ctx_node);
	iw_list_del(&qp->srq_node);
	iwv_pd_use(qp->pub.pd, -1);
	cq_of(qp->pub.send_cq)->users--;
	cq_of(qp->pub.recv_cq)->users--;
	if (qp->pub.srq)
		srq_of(qp->pub.srq)->users--;
	qp_free(qp);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int iwv_query_qp(struct iwv_qp *pub, struct iwv_qp_attr *attr, int attr_mask,
		 struct iwv_qp_init_attr *init_attr)
{
	struct iwv_qp_int *qp = qp_of(pub);
	struct iwv_ctx *ctx;

	if (!qp || !attr)
		return EINVAL;
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = qp->pub.state;
	attr->cap = qp->attr.cap;
	attr->max_rd_atomic = (uint8_t)IW_MIN(qp->ord, 255u);
	attr->max_dest_rd_atomic = (uint8_t)IW_MIN(qp->ird, 255u);
	attr->qp_err = rdmap_qp_error(qp->rq);
	if (init_attr)
		*init_attr = qp->attr;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int iwv_modify_qp(struct iwv_qp *pub, struct iwv_qp_attr *attr, int attr_mask)
{
	struct iwv_qp_int *qp = qp_of(pub);
	struct iwv_ctx *ctx;

	if (!qp || !attr || attr_mask != IWV_QP_STATE || attr->qp_state != IWV_QPS_ERR)
		return EINVAL;
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	if (qp->pub.state != IWV_QPS_ERR)
		qp->user_err = true;
	if (qp->link)
		qp->link_ops->detach(qp->link, false);
	qp_flush_all(qp);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* Complete a WR at once with a flush status (QP in error): errors always complete. */
static int flush_send_now(struct iwv_qp_int *qp, uint32_t slot)
{
	struct iwv_wc wc = {
		.wr_id = slot,
		.status = IWV_WC_WR_FLUSH_ERR,
		.opcode = qp->slots[slot].opcode,
		.vendor_err = (uint32_t)-IW_ERDMAP_FLUSHED,
		.qp_num = qp->pub.qp_num,
	};

	wc_ring_push(&qp->sstage, &wc);
	return 0;
}

/* The completion opcode of a send work request (flushes report it too). */
static enum iwv_wc_opcode send_wc_opcode(enum iwv_wr_opcode op)
{
	switch (op) {
	case IWV_WR_RDMA_WRITE:
	case IWV_WR_RDMA_WRITE_WITH_IMM:
		return IWV_WC_RDMA_WRITE;
	case IWV_WR_RDMA_READ:
		return IWV_WC_RDMA_READ;
	case IWV_WR_ATOMIC_CMP_AND_SWP:
		return IWV_WC_COMP_SWAP;
	case IWV_WR_ATOMIC_FETCH_AND_ADD:
		return IWV_WC_FETCH_ADD;
	case IWV_WR_LOCAL_INV:
		return IWV_WC_LOCAL_INV;
	case IWV_WR_BIND_MW:
		return IWV_WC_BIND_MW;
	case IWV_WR_REG_MR:
		return IWV_WC_REG_MR;
	default:
		return IWV_WC_SEND;
	}
}

/*
 * RFC 7306 work requests as rdmap ones.  ibverbs' imm_data (32 bits, network
 * order) travels as the first 4 of the 8 Immediate Data octets, the other 4
 * zero; a plain ibverbs atomic is a masked one with every mask bit set (and a
 * Fetch-and-Add without field boundaries).
 */
static void post_fill_rfc7306(const struct iwv_send_wr *wr, struct rdmap_send_wr *w)
{
	uint8_t b[4];

	memcpy(b, &wr->imm_data, sizeof(b));
	switch (wr->opcode) {
	case IWV_WR_RDMA_WRITE_WITH_IMM:
	case IWV_WR_SEND_WITH_IMM:
		w->opcode =
			wr->opcode == IWV_WR_SEND_WITH_IMM ? RDMAP_WR_SEND_IMM : RDMAP_WR_WRITE_IMM;
		w->imm = (uint64_t)iw_get_be32(b) << 32;
		if (wr->send_flags & IWV_SEND_SOLICITED)
			w->flags |= RDMAP_WR_SOLICITED;
		break;
	case IWV_WR_ATOMIC_FETCH_AND_ADD:
		w->opcode = RDMAP_WR_ATOMIC_FA;
		w->atomic.add_swap = wr->wr.atomic.compare_add;
		w->atomic.add_swap_mask = 0;
		w->atomic.compare_mask = UINT64_MAX;
		break;
	default:
		w->opcode = RDMAP_WR_ATOMIC_CS;
		w->atomic.add_swap = wr->wr.atomic.swap;
		w->atomic.add_swap_mask = UINT64_MAX;
		w->atomic.compare = wr->wr.atomic.compare_add;
		w->atomic.compare_mask = UINT64_MAX;
		break;
	}
	if (w->opcode == RDMAP_WR_ATOMIC_FA || w->opcode == RDMAP_WR_ATOMIC_CS) {
		w->remote_stag = wr->wr.atomic.rkey;
		w->remote_to = wr->wr.atomic.remote_addr;
	}
}

static int post_one_send(struct iwv_qp_int *qp, const struct iwv_send_wr *wr)
{
	struct rdmap_send_wr w;
	struct send_slot *s;
	uint32_t slot, total = 0;
	enum iwv_wc_opcode mem_op = IWV_WC_SEND;
	bool mem = false;
	int r;

	memset(&w, 0, sizeof(w));
	switch (wr->opcode) {
	case IWV_WR_SEND:
		w.opcode = (wr->send_flags & IWV_SEND_SOLICITED) ? RDMAP_WR_SEND_SE : RDMAP_WR_SEND;
		break;
	case IWV_WR_SEND_WITH_INV:
		w.opcode = (wr->send_flags & IWV_SEND_SOLICITED) ? RDMAP_WR_SEND_SE_INV
								 : RDMAP_WR_SEND_INV;
		w.invalidate_stag = wr->invalidate_rkey;
		break;
	case IWV_WR_RDMA_WRITE:
		w.opcode = RDMAP_WR_WRITE;
		break;
	case IWV_WR_RDMA_READ:
		w.opcode = RDMAP_WR_READ;
		if (wr->num_sge != 1 || (wr->send_flags & IWV_SEND_INLINE))
			return EINVAL;
		break;
	case IWV_WR_RDMA_WRITE_WITH_IMM:
	case IWV_WR_SEND_WITH_IMM:
	case IWV_WR_ATOMIC_CMP_AND_SWP:
	case IWV_WR_ATOMIC_FETCH_AND_ADD:
		if (!qp->attr.rfc7306)
			return EINVAL;
		post_fill_rfc7306(wr, &w);
		if (w.opcode == RDMAP_WR_ATOMIC_FA || w.opcode == RDMAP_WR_ATOMIC_CS) {
			/* One 8-octet result buffer; an 8-octet aligned target. */
			if (wr->num_sge != 1 || !wr->sg_list || wr->sg_list[0].length != 8 ||
			    (wr->wr.atomic.remote_addr & 7) || (wr->send_flags & IWV_SEND_INLINE))
				return EINVAL;
		}
		break;
	case IWV_WR_LOCAL_INV:
	case IWV_WR_BIND_MW:
	case IWV_WR_REG_MR:
		r = iwv_mem_wr(qp, wr, &w, &mem_op); /* iwv_mw.c */
		if (r)
			return r;
		mem = true;
		break;
	default:
		return EINVAL;
	}
	if (wr->send_flags &
	    ~(unsigned)(IWV_SEND_FENCE | IWV_SEND_SIGNALED | IWV_SEND_SOLICITED | IWV_SEND_INLINE))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->attr.cap.max_send_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > UINT32_MAX - total)
			return EINVAL;
		total += wr->sg_list[i].length;
	}
	if ((wr->send_flags & IWV_SEND_INLINE) && total > qp->attr.cap.max_inline_data)
		return EINVAL;
	if (qp->nfree == 0)
		return ENOMEM;

	slot = qp->free_slots[--qp->nfree];
	s = &qp->slots[slot];
	s->wr_id = wr->wr_id;
	s->signaled = (wr->send_flags & IWV_SEND_SIGNALED) || qp->attr.sq_sig_all;
	s->opcode = send_wc_opcode(wr->opcode);
	if (mem)
		s->opcode = mem_op;

	if (qp->pub.state == IWV_QPS_ERR || !qp_accepts_work(qp))
		return flush_send_now(qp, slot);

	w.wr_id = slot;
	w.flags |= RDMAP_WR_SIGNALED | ((wr->send_flags & IWV_SEND_FENCE) ? RDMAP_WR_FENCE : 0);
	if (w.opcode != RDMAP_WR_ATOMIC_FA && w.opcode != RDMAP_WR_ATOMIC_CS) {
		w.remote_stag = wr->wr.rdma.rkey;
		w.remote_to = wr->wr.rdma.remote_addr;
	}
	if (wr->send_flags & IWV_SEND_INLINE) {
		uint8_t *dst = qp->inline_buf + (size_t)slot * qp->attr.cap.max_inline_data;
		uint32_t off = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(dst + off, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w.num_sge = 1;
		w.sg[0].addr = (uint64_t)(uintptr_t)dst;
		w.sg[0].length = total;
		w.sg[0].lkey = qp->inline_stag;
	} else {
		w.num_sge = wr->num_sge;
		for (int i = 0; i < wr->num_sge; i++) {
			w.sg[i].addr = wr->sg_list[i].addr;
			w.sg[i].length = wr->sg_list[i].length;
			w.sg[i].lkey = wr->sg_list[i].lkey;
		}
	}
	r = rdmap_qp_post_send(qp->rq, &w);
	if (r == IW_ESTATE)
		return flush_send_now(qp, slot);
	if (r != IW_OK) {
		slot_free(qp, slot);
		return r == IW_ENOSPC ? ENOMEM : EINVAL;
	}
	return 0;
}

int iwv_post_send(struct iwv_qp *pub, struct iwv_send_wr *wr, struct iwv_send_wr **bad_wr)
{
	struct iwv_qp_int *qp = qp_of(pub);
	struct iwv_ctx *ctx;
	int r = 0;

	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		r = post_one_send(qp, wr);
		if (r) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
	}
	qp_drain(qp);
	/* written now, or by the pass of the busy-polling program (iwv_ctx_defer) */
	if (qp->link && !iwv_ctx_defer(ctx, &qp->kick))
		qp->link_ops->kick(qp->link);
	iwv_ctx_post_done(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

static int post_one_recv(struct iwv_qp_int *qp, const struct iwv_recv_wr *wr)
{
	struct rdmap_recv_wr w;
	int r;

	if (qp->pub.srq)
		return EINVAL; /* its receives are posted to the SRQ (iwv_post_srq_recv) */
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->attr.cap.max_recv_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	if (qp->recv_posted >= qp->attr.cap.max_recv_wr)
		return ENOMEM;
	if (qp->pub.state == IWV_QPS_ERR || !qp_accepts_work(qp)) {
		struct iwv_wc wc = {
			.wr_id = wr->wr_id,
			.status = IWV_WC_WR_FLUSH_ERR,
			.opcode = IWV_WC_RECV,
			.vendor_err = (uint32_t)-IW_ERDMAP_FLUSHED,
			.qp_num = qp->pub.qp_num,
		};

		wc_ring_push(&qp->rstage, &wc);
		qp->recv_posted++;
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.num_sge = wr->num_sge;
	for (int i = 0; i < wr->num_sge; i++) {
		w.sg[i].addr = wr->sg_list[i].addr;
		w.sg[i].length = wr->sg_list[i].length;
		w.sg[i].lkey = wr->sg_list[i].lkey;
	}
	r = rdmap_qp_post_recv(qp->rq, &w);
	if (r == IW_ESTATE) {
		qp->pub.state = IWV_QPS_ERR;
		return post_one_recv(qp, wr);
	}
	if (r != IW_OK)
		return r == IW_ENOSPC ? ENOMEM : EINVAL;
	qp->recv_posted++;
	return 0;
}

int iwv_post_recv(struct iwv_qp *pub, struct iwv_recv_wr *wr, struct iwv_recv_wr **bad_wr)
{
	struct iwv_qp_int *qp = qp_of(pub);
	struct iwv_ctx *ctx;
	int r = 0;

	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	ctx = ctx_of(qp->pub.context);
	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		r = post_one_recv(qp, wr);
		if (r) {
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
	}
	qp_drain(qp);
	iwv_qp_rx_ready(qp);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

void iwv_qp_rx_ready(struct iwv_qp_int *qp)
{
	if (qp->link && rdmap_qp_rx_held(qp->rq))
		qp->link_ops->rx_resume(qp->link);
}

unsigned int iwv_qp_rnr_hold_ms(struct iwv_qp *pub)
{
	return qp_of(pub)->attr.rnr_hold_ms;
}

/* ---------------------------------------------------------------------- */
/* The connection's side of the QP (iwv_qp_link.h)                          */
/* ---------------------------------------------------------------------- */

int iwv_qp_link_attach(struct iwv_qp *pub, const struct iwv_qp_link_ops *ops, void *link)
{
	struct iwv_qp_int *qp = qp_of(pub);

	if (qp->link || qp->pub.state != IWV_QPS_INIT || rdmap_qp_state(qp->rq) != RDMAP_QP_IDLE)
		return EINVAL;
	qp->link_ops = ops;
	qp->link = link;
	return 0;
}

void iwv_qp_link_detach(struct iwv_qp *pub)
{
	qp_of(pub)->link = NULL;
}

struct rdmap_qp *iwv_qp_rdmap(struct iwv_qp *pub)
{
	return qp_of(pub)->rq;
}

int iwv_qp_start(struct iwv_qp *pub, uint32_t mulpdu, bool initiator, const struct mpa_params *p)
{
	struct iwv_qp_int *qp = qp_of(pub);
	struct mpa_params pp = *p;
	int r;

	pp.ird = IW_MIN(pp.ird, (uint16_t)IWV_QP_IRD_CAP);
	pp.ord = IW_MIN(pp.ord, (uint16_t)IWV_QP_ORD_CAP);
	r = rdmap_qp_set_link(qp->rq, mulpdu, initiator);
	if (r == IW_OK)
		r = rdmap_qp_start(qp->rq, &pp);
	if (r != IW_OK)
		return r;
	qp->ird = pp.ird;
	qp->ord = pp.ord;
	qp->pub.state = IWV_QPS_RTS;
	return IW_OK;
}

void iwv_qp_llp_broken(struct iwv_qp *pub)
{
	qp_of(pub)->llp_broken = true;
}

void iwv_qp_drain(struct iwv_qp *pub)
{
	qp_drain(qp_of(pub));
}

void iwv_qp_flush_all(struct iwv_qp *pub)
{
	qp_flush_all(qp_of(pub));
}
