/* SPDX-License-Identifier: MIT */
/*
 * ibv_data.c - the drop-in libibverbs.so.1: the data path, i.e. the five ops
 * <infiniband/verbs.h>'s inline functions call through ibv_context.ops
 * without a check (post_send, post_recv, post_srq_recv, poll_cq,
 * req_notify_cq).
 *
 * Theory of operation.  Work requests are translated field by field into
 * iwv.h's (the opcode, flag and status numbers are the same in both, as the
 * static assertions below check), a batch of up to IWC_BATCH at a time on the
 * stack, so a list costs one call into libiwarp per batch and the bad_wr
 * libiwarp names maps back to the program's request by its index.  An SGE
 * has the same layout in both APIs, so SGE lists are passed through.
 * Completions are translated one by one (ibverbs' imm_data and
 * invalidated_rkey share a union, iwv's do not).
 *
 * Memory windows.  IBV_WR_BIND_MW names the program's ibv_mw and ibv_mr
 * wrappers; the translation puts the iwv objects behind them in the request
 * (a window or MR of another context, or no window at all, is refused here
 * with EINVAL, the rest - another PD, a new rkey that is not the window's
 * next key, unknown access bits, IBV_SEND_INLINE - by libiwarp, also
 * EINVAL).  libiwarp gives the window the new rkey when the bind is posted;
 * the public ibv_mw.rkey is copied from it right after, for every bind that
 * was posted, so a program reading mw->rkey (or passing it through
 * ibv_inc_rkey() for the next bind) sees the key the window is bound under.
 * IBV_WR_LOCAL_INV and IBV_WR_SEND_WITH_INV carry invalidate_rkey.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "ibv_int.h"

/* Same numbers, so the translation is a copy (checked, not assumed). */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct iwv_sge), "sge size");
_Static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct iwv_sge, lkey), "sge lkey");
_Static_assert(IBV_WR_RDMA_WRITE == (int)IWV_WR_RDMA_WRITE &&
		       IBV_WR_RDMA_WRITE_WITH_IMM == (int)IWV_WR_RDMA_WRITE_WITH_IMM &&
		       IBV_WR_SEND == (int)IWV_WR_SEND &&
		       IBV_WR_SEND_WITH_IMM == (int)IWV_WR_SEND_WITH_IMM &&
		       IBV_WR_RDMA_READ == (int)IWV_WR_RDMA_READ &&
		       IBV_WR_ATOMIC_CMP_AND_SWP == (int)IWV_WR_ATOMIC_CMP_AND_SWP &&
		       IBV_WR_ATOMIC_FETCH_AND_ADD == (int)IWV_WR_ATOMIC_FETCH_AND_ADD &&
		       IBV_WR_LOCAL_INV == (int)IWV_WR_LOCAL_INV &&
		       IBV_WR_BIND_MW == (int)IWV_WR_BIND_MW &&
		       IBV_WR_SEND_WITH_INV == (int)IWV_WR_SEND_WITH_INV,
	       "work request opcodes");
_Static_assert((int)IBV_SEND_FENCE == (int)IWV_SEND_FENCE &&
		       (int)IBV_SEND_SIGNALED == (int)IWV_SEND_SIGNALED &&
		       (int)IBV_SEND_SOLICITED == (int)IWV_SEND_SOLICITED &&
		       (int)IBV_SEND_INLINE == (int)IWV_SEND_INLINE,
	       "send flags");
_Static_assert(IBV_WC_SUCCESS == (int)IWV_WC_SUCCESS &&
		       IBV_WC_LOC_QP_OP_ERR == (int)IWV_WC_LOC_QP_OP_ERR &&
		       IBV_WC_LOC_PROT_ERR == (int)IWV_WC_LOC_PROT_ERR &&
		       IBV_WC_WR_FLUSH_ERR == (int)IWV_WC_WR_FLUSH_ERR &&
		       IBV_WC_MW_BIND_ERR == (int)IWV_WC_MW_BIND_ERR &&
		       IBV_WC_REM_ACCESS_ERR == (int)IWV_WC_REM_ACCESS_ERR &&
		       IBV_WC_REM_OP_ERR == (int)IWV_WC_REM_OP_ERR &&
		       IBV_WC_GENERAL_ERR == (int)IWV_WC_GENERAL_ERR,
	       "completion statuses");
_Static_assert(IBV_WC_RECV == (int)IWV_WC_RECV &&
		       IBV_WC_RECV_RDMA_WITH_IMM == (int)IWV_WC_RECV_RDMA_WITH_IMM &&
		       IBV_WC_FETCH_ADD == (int)IWV_WC_FETCH_ADD &&
		       IBV_WC_BIND_MW == (int)IWV_WC_BIND_MW &&
		       IBV_WC_LOCAL_INV == (int)IWV_WC_LOCAL_INV,
	       "completion opcodes");
_Static_assert((int)IBV_WC_WITH_IMM == (int)IWV_WC_WITH_IMM &&
		       (int)IBV_WC_WITH_INV == (int)IWV_WC_WITH_INV,
	       "completion flags");

#define IWC_BATCH 32

/* The send flags iwv takes; IBV_SEND_IP_CSUM means nothing on iWARP and is dropped. */
#define IWC_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE)

/* An opcode libiwarp refuses (EINVAL): what the checks here turn a request into. */
#define IWC_WR_INVALID ((enum iwv_wr_opcode) - 1)

/* IBV_WR_BIND_MW's fields, the wrappers mapped to the iwv objects behind them.
 * False for a request that cannot name them (no window, a window or MR of
 * another context). */
static bool bind_mw_in(struct ibv_qp *qp, const struct ibv_send_wr *wr, struct iwv_send_wr *d)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;
	struct ibv_mw *mw = wr->bind_mw.mw;

	if (!mw || mw->context != qp->context || (bi->mr && bi->mr->context != qp->context))
		return false;
	d->bind_mw.mw = iwc_mw(mw)->iwv;
	d->bind_mw.rkey = wr->bind_mw.rkey;
	d->bind_mw.bind_info.mr = bi->mr ? iwc_mr(bi->mr)->iwv : NULL;
	d->bind_mw.bind_info.addr = bi->addr;
	d->bind_mw.bind_info.length = bi->length;
	d->bind_mw.bind_info.mw_access_flags = bi->mw_access_flags;
	return true;
}

/* After posting: the first `posted` requests went in; each bind among them has
 * given its window the new rkey, which the program reads in ibv_mw.rkey. */
static void bind_mw_out(struct ibv_send_wr *const *src, const struct iwv_send_wr *w, int posted)
{
	for (int i = 0; i < posted; i++)
		if (src[i]->opcode == IBV_WR_BIND_MW)
			src[i]->bind_mw.mw->rkey = w[i].bind_mw.mw->rkey;
}

static int iwc_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct iwv_send_wr w[IWC_BATCH];
	struct ibv_send_wr *src[IWC_BATCH];

	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	while (wr) {
		struct iwv_send_wr *bad = NULL;
		int n = 0, posted, r;

		for (; wr && n < IWC_BATCH; wr = wr->next, n++) {
			struct iwv_send_wr *d = &w[n];

			memset(d, 0, sizeof(*d));
			src[n] = wr;
			d->wr_id = wr->wr_id;
			d->next = NULL;
			if (n)
				w[n - 1].next = d;
			d->sg_list = (struct iwv_sge *)(void *)wr->sg_list;
			d->num_sge = wr->num_sge;
			d->opcode = (enum iwv_wr_opcode)wr->opcode;
			d->send_flags = wr->send_flags & ~(unsigned)IBV_SEND_IP_CSUM;
			d->imm_data = wr->imm_data; /* or invalidate_rkey: the same union */
			switch (wr->opcode) {
			case IBV_WR_ATOMIC_CMP_AND_SWP:
			case IBV_WR_ATOMIC_FETCH_AND_ADD:
				d->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
				d->wr.atomic.compare_add = wr->wr.atomic.compare_add;
				d->wr.atomic.swap = wr->wr.atomic.swap;
				d->wr.atomic.rkey = wr->wr.atomic.rkey;
				break;
			case IBV_WR_BIND_MW:
				if (!bind_mw_in(qp, wr, d))
					d->opcode = IWC_WR_INVALID;
				break;
			case IBV_WR_LOCAL_INV:
			case IBV_WR_SEND_WITH_INV:
				d->invalidate_rkey = wr->invalidate_rkey;
				break;
			case IBV_WR_RDMA_WRITE:
			case IBV_WR_RDMA_WRITE_WITH_IMM:
			case IBV_WR_SEND:
			case IBV_WR_SEND_WITH_IMM:
			case IBV_WR_RDMA_READ:
				d->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
				d->wr.rdma.rkey = wr->wr.rdma.rkey;
				break;
			default:
				/* TSO, DRIVER1, ATOMIC_WRITE, and numbers ibverbs does not
				 * define (libiwarp's own fast registration among them) */
				d->opcode = IWC_WR_INVALID;
				break;
			}
		}
		r = iwv_post_send(iwc_qp(qp)->iwv, w, &bad);
		/* on failure, those before the one libiwarp names went in */
		posted = !r ? n : bad && bad >= w && bad < w + n ? (int)(bad - w) : 0;
		bind_mw_out(src, w, posted);
		if (r) {
			if (bad_wr)
				*bad_wr = src[posted];
			return r;
		}
	}
	return 0;
}

/* Receive WRs: the same fields; translated so the layouts stay independent. */
static int post_recv_list(struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr,
			  int (*post)(void *, struct iwv_recv_wr *, struct iwv_recv_wr **),
			  void *obj)
{
	struct iwv_recv_wr w[IWC_BATCH];
	struct ibv_recv_wr *src[IWC_BATCH];

	while (wr) {
		struct iwv_recv_wr *bad = NULL;
		int n = 0, r;

		for (; wr && n < IWC_BATCH; wr = wr->next, n++) {
			src[n] = wr;
			w[n].wr_id = wr->wr_id;
			w[n].next = NULL;
			if (n)
				w[n - 1].next = &w[n];
			w[n].sg_list = (struct iwv_sge *)(void *)wr->sg_list;
			w[n].num_sge = wr->num_sge;
		}
		r = post(obj, w, &bad);
		if (r) {
			if (bad_wr)
				*bad_wr = bad && bad >= w && bad < w + n ? src[bad - w] : src[0];
			return r;
		}
	}
	return 0;
}

static int qp_recv(void *qp, struct iwv_recv_wr *w, struct iwv_recv_wr **bad)
{
	return iwv_post_recv(qp, w, bad);
}

static int srq_recv(void *srq, struct iwv_recv_wr *w, struct iwv_recv_wr **bad)
{
	return iwv_post_srq_recv(srq, w, bad);
}

static int iwc_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	return post_recv_list(wr, bad_wr, qp_recv, iwc_qp(qp)->iwv);
}

static int iwc_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	if (!srq || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	return post_recv_list(wr, bad_wr, srq_recv, ((struct iwc_srq *)srq)->iwv);
}

static int iwc_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct iwv_wc w[IWC_BATCH];
	int done = 0;

	if (!cq || num_entries < 0 || (num_entries && !wc))
		return -EINVAL;
	while (done < num_entries) {
		int want = num_entries - done < IWC_BATCH ? num_entries - done : IWC_BATCH;
		int n = iwv_poll_cq(iwc_cq(cq)->iwv, want, w);

		if (n < 0)
			return done ? done : n;
		for (int i = 0; i < n; i++) {
			struct ibv_wc *o = &wc[done + i];

			memset(o, 0, sizeof(*o));
			o->wr_id = w[i].wr_id;
			o->status = (enum ibv_wc_status)w[i].status;
			o->opcode = (enum ibv_wc_opcode)w[i].opcode;
			o->vendor_err = w[i].vendor_err;
			o->byte_len = w[i].byte_len;
			if (w[i].wc_flags & IWV_WC_WITH_INV)
				o->invalidated_rkey = w[i].invalidated_rkey;
			else
				o->imm_data = w[i].imm_data;
			o->qp_num = w[i].qp_num;
			o->src_qp = w[i].src_qp;
			o->wc_flags = w[i].wc_flags;
		}
		done += n;
		if (n < want)
			break;
	}
	return done;
}

static int iwc_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	if (!cq)
		return EINVAL;
	return iwv_req_notify_cq(iwc_cq(cq)->iwv, solicited_only);
}

void iwc_set_data_ops(struct iwc_context *c)
{
	struct ibv_context_ops *ops = &c->vctx.context.ops;

	ops->post_send = iwc_post_send;
	ops->post_recv = iwc_post_recv;
	ops->post_srq_recv = iwc_post_srq_recv;
	ops->poll_cq = iwc_poll_cq;
	ops->req_notify_cq = iwc_req_notify_cq;
}
