/* SPDX-License-Identifier: MIT */
/*
 * ibv_objects.c - the drop-in libibverbs.so.1: protection domains, memory
 * regions, completion channels and queues, queue pairs, shared receive
 * queues and asynchronous events, each an iwc_* wrapper (iwc.h) around the
 * iwv_* object that does the work.
 *
 * Theory of operation.  Every call checks its arguments, translates to
 * iwv.h (same enum values, same access bits) and fills the public ibverbs
 * struct the program reads.  The iwarp object's user-context pointer points
 * back at its wrapper, so a completion event or an asynchronous event found
 * through libiwarp maps back without a lookup.  Differences that a program
 * can observe are kept to what iWARP imposes (docs/compat.md): a QP is
 * connected only through librdmacm, so ibv_modify_qp to INIT/RTR/RTS changes
 * nothing (the CM moves the QP) and RESET is refused; no address handles or
 * multicast; memory windows are type 2 only (the iWARP kind, bound by an
 * IBV_WR_BIND_MW work request: ibv_data.c); a memory region's iova must be
 * its address.
 *
 * rdma-core blocks in ibv_destroy_cq until every event it handed out was
 * acknowledged (programs such as rping destroy the CQ while another thread is
 * still acknowledging); libiwarp answers EBUSY instead, so the destroy here
 * waits for a bounded while before giving up with EBUSY.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibv_int.h"

bool iwc_rfc7306(void)
{
	const char *e = getenv("IWARP_RFC7306");

	return !e || strcmp(e, "0") != 0;
}

/*
 * How long a Send that finds no receive waits for one (IWARP_RNR_HOLD_MS,
 * default 5000; 0: the Terminate at once).  InfiniBand programs count on the
 * receiver-not-ready retry (qperf rc_bw reposts its receives only after
 * polling them; perftest and qperf set rnr_retry 7, "forever"), which iWARP
 * does not have on the wire: the QP stops reading the connection instead.
 */
static unsigned int iwc_rnr_hold_ms(void)
{
	const char *e = getenv("IWARP_RNR_HOLD_MS");

	return e && *e ? (unsigned int)strtoul(e, NULL, 10) : 5000u;
}

static struct ibv_mw *iwc_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
static int iwc_dealloc_mw(struct ibv_mw *mw);
static int iwc_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

void iwc_set_ops(struct iwc_context *c)
{
	struct ibv_context_ops *ops = &c->vctx.context.ops;

	iwc_set_device_ops(c);
	iwc_set_data_ops(c);
	/* ibv_alloc_mw, ibv_dealloc_mw and ibv_bind_mw are inlines of the header
	 * that call these (ibv_alloc_mw says EOPNOTSUPP when the op is NULL). */
	ops->alloc_mw = iwc_alloc_mw;
	ops->dealloc_mw = iwc_dealloc_mw;
	ops->bind_mw = iwc_bind_mw;
}

/* ---------------------------------------------------------------------- */
/* PD, MR                                                                  */
/* ---------------------------------------------------------------------- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct iwc_pd *p;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	p = iwc_zalloc(sizeof(*p));
	if (!p)
		return NULL;
	p->iwv = iwv_alloc_pd(iwc_ctx(context)->iwv);
	if (!p->iwv) {
		int e = errno;

		free(p);
		errno = e;
		return NULL;
	}
	p->pub.context = context;
	p->pub.handle = p->iwv->handle;
	return &p->pub;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	int r;

	if (!pd)
		return EINVAL;
	r = iwv_dealloc_pd(iwc_pd(pd)->iwv);
	if (r)
		return r;
	free(pd);
	return 0;
}

/* ibverbs access bits have iwv's values; the optional range (relaxed ordering, ...) is dropped. */
#define IWC_ACCESS_MANDATORY ((1u << 20) - 1)

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	struct iwc_mr *m;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	/* The tagged offset of a byte is its address here. */
	if (iova != (uint64_t)(uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	access &= IWC_ACCESS_MANDATORY;
	m = iwc_zalloc(sizeof(*m));
	if (!m)
		return NULL;
	m->iwv = iwv_reg_mr(iwc_pd(pd)->iwv, addr, length, (int)access);
	if (!m->iwv) {
		int e = errno;

		free(m);
		errno = e;
		return NULL;
	}
	m->pub.context = pd->context;
	m->pub.pd = pd;
	m->pub.addr = addr;
	m->pub.length = length;
	m->pub.handle = m->iwv->handle;
	m->pub.lkey = m->iwv->lkey;
	m->pub.rkey = m->iwv->rkey;
	return &m->pub;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uint64_t)(uintptr_t)addr, (unsigned)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access);
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	int r;

	if (!mr)
		return EINVAL;
	r = iwv_dereg_mr(iwc_mr(mr)->iwv); /* EBUSY while windows are bound to it */
	if (r)
		return r;
	free(mr);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Memory windows                                                          */
/* ---------------------------------------------------------------------- */

_Static_assert(IBV_MW_TYPE_1 == (int)IWV_MW_TYPE_1 && IBV_MW_TYPE_2 == (int)IWV_MW_TYPE_2,
	       "window types");
_Static_assert(IBV_ACCESS_LOCAL_WRITE == (int)IWV_ACCESS_LOCAL_WRITE &&
		       IBV_ACCESS_REMOTE_WRITE == (int)IWV_ACCESS_REMOTE_WRITE &&
		       IBV_ACCESS_REMOTE_READ == (int)IWV_ACCESS_REMOTE_READ &&
		       IBV_ACCESS_REMOTE_ATOMIC == (int)IWV_ACCESS_REMOTE_ATOMIC &&
		       IBV_ACCESS_MW_BIND == (int)IWV_ACCESS_MW_BIND,
	       "access flags");

/*
 * ops.alloc_mw.  Type 2 only: iWARP windows are bound to one QP's stream by a
 * work request (IBV_WR_BIND_MW); IBV_MW_TYPE_1 is NULL with EOPNOTSUPP (libiwarp
 * says so), any other type EINVAL.  The window starts unbound; its rkey is
 * the one to pass through ibv_inc_rkey() for the first bind.
 */
static struct ibv_mw *iwc_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct iwc_mw *m;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	m = iwc_zalloc(sizeof(*m));
	if (!m)
		return NULL;
	m->iwv = iwv_alloc_mw(iwc_pd(pd)->iwv, (enum iwv_mw_type)type);
	if (!m->iwv) {
		int e = errno;

		free(m);
		errno = e;
		return NULL;
	}
	m->pub.context = pd->context;
	m->pub.pd = pd;
	m->pub.rkey = m->iwv->rkey;
	m->pub.handle = m->iwv->handle;
	m->pub.type = type;
	return &m->pub;
}

/* ops.dealloc_mw: a bound window is unbound first (its MR may then be deregistered). */
static int iwc_dealloc_mw(struct ibv_mw *mw)
{
	int r;

	if (!mw)
		return EINVAL;
	r = iwv_dealloc_mw(iwc_mw(mw)->iwv);
	if (r)
		return r;
	free(mw);
	return 0;
}

/*
 * ops.bind_mw, behind the header's ibv_bind_mw(), which is for type-1
 * windows only: its man page sends type-2 windows to ibv_post_send with an
 * IBV_WR_BIND_MW work request, and rdma-core 44's inline returns EINVAL for
 * a window whose type is not IBV_MW_TYPE_1 before it ever reaches the op.
 * This library hands out type-2 windows only, so a program that calls the
 * op directly gets that same EINVAL, and nothing is posted.
 */
static int iwc_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	return EINVAL;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

/* ---------------------------------------------------------------------- */
/* Completion channels and CQs                                             */
/* ---------------------------------------------------------------------- */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct iwc_channel *ch;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	ch = iwc_zalloc(sizeof(*ch));
	if (!ch)
		return NULL;
	ch->iwv = iwv_create_comp_channel(iwc_ctx(context)->iwv);
	if (!ch->iwv) {
		int e = errno;

		free(ch);
		errno = e;
		return NULL;
	}
	ch->pub.context = context;
	ch->pub.fd = ch->iwv->fd;
	return &ch->pub;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	int r;

	if (!channel)
		return EINVAL;
	r = iwv_destroy_comp_channel(((struct iwc_channel *)channel)->iwv);
	if (r)
		return r;
	free(channel);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct iwc_cq *q;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	q = iwc_zalloc(sizeof(*q));
	if (!q)
		return NULL;
	q->iwv = iwv_create_cq(iwc_ctx(context)->iwv, cqe, q,
			       channel ? ((struct iwc_channel *)channel)->iwv : NULL, comp_vector);
	if (!q->iwv) {
		int e = errno;

		free(q);
		errno = e;
		return NULL;
	}
	q->pub.context = context;
	q->pub.channel = channel;
	q->pub.cq_context = cq_context;
	q->pub.handle = q->iwv->handle;
	q->pub.cqe = q->iwv->cqe;
	pthread_mutex_init(&q->pub.mutex, NULL);
	pthread_cond_init(&q->pub.cond, NULL);
	if (channel)
		channel->refcnt++;
	return &q->pub;
}

static int cq_destroy_fn(void *p)
{
	return iwv_destroy_cq(p);
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct iwc_cq *q = iwc_cq(cq);
	int r;

	if (!cq)
		return EINVAL;
	r = iwc_retry_busy(cq_destroy_fn, q->iwv);
	if (r)
		return r;
	if (cq->channel)
		cq->channel->refcnt--;
	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	free(q);
	return 0;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return EOPNOTSUPP;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct iwv_cq *icq = NULL;
	void *ctxp = NULL;
	struct iwc_cq *q;

	if (!channel || !cq || !cq_context) {
		errno = EINVAL;
		return -1;
	}
	if (iwv_get_cq_event(((struct iwc_channel *)channel)->iwv, &icq, &ctxp) != 0)
		return -1; /* errno from libiwarp: EAGAIN, EINTR, ... */
	q = ctxp;
	*cq = &q->pub;
	*cq_context = q->pub.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (cq)
		iwv_ack_cq_events(iwc_cq(cq)->iwv, nevents);
}

/* ---------------------------------------------------------------------- */
/* SRQs                                                                    */
/* ---------------------------------------------------------------------- */

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct iwv_srq_init_attr a;
	struct iwc_srq *s;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	s = iwc_zalloc(sizeof(*s));
	if (!s)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.srq_context = s;
	a.attr.max_wr = attr->attr.max_wr;
	a.attr.max_sge = attr->attr.max_sge;
	a.attr.srq_limit = attr->attr.srq_limit;
	s->iwv = iwv_create_srq(iwc_pd(pd)->iwv, &a);
	if (!s->iwv) {
		int e = errno;

		free(s);
		errno = e;
		return NULL;
	}
	attr->attr.max_wr = a.attr.max_wr;
	attr->attr.max_sge = a.attr.max_sge;
	s->pub.context = pd->context;
	s->pub.srq_context = attr->srq_context;
	s->pub.pd = pd;
	s->pub.handle = s->iwv->handle;
	pthread_mutex_init(&s->pub.mutex, NULL);
	pthread_cond_init(&s->pub.cond, NULL);
	return &s->pub;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct iwv_srq_attr a;

	if (!srq || !attr)
		return EINVAL;
	a.max_wr = attr->max_wr;
	a.max_sge = attr->max_sge;
	a.srq_limit = attr->srq_limit;
	return iwv_modify_srq(((struct iwc_srq *)srq)->iwv, &a, attr_mask);
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct iwv_srq_attr a;
	int r;

	if (!srq || !attr)
		return EINVAL;
	r = iwv_query_srq(((struct iwc_srq *)srq)->iwv, &a);
	if (r)
		return r;
	attr->max_wr = a.max_wr;
	attr->max_sge = a.max_sge;
	attr->srq_limit = a.srq_limit;
	return 0;
}

static int srq_destroy_fn(void *p)
{
	return iwv_destroy_srq(p);
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	int r;

	if (!srq)
		return EINVAL;
	r = iwc_retry_busy(srq_destroy_fn, ((struct iwc_srq *)srq)->iwv);
	if (r)
		return r;
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(srq);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* QPs                                                                     */
/* ---------------------------------------------------------------------- */

void iwc_qp_track(struct iwc_qp *qp, bool add)
{
	struct iwc_context *c = iwc_ctx(qp->pub.context);

	pthread_mutex_lock(&c->qp_lock);
	if (add) {
		qp->next = c->qps;
		c->qps = qp;
	} else {
		for (struct iwc_qp **pp = &c->qps; *pp; pp = &(*pp)->next)
			if (*pp == qp) {
				*pp = qp->next;
				break;
			}
	}
	pthread_mutex_unlock(&c->qp_lock);
}

void iwc_qp_listed(struct ibv_qp *qp, bool listed)
{
	if (qp)
		iwc_qp_track(iwc_qp(qp), listed);
}

struct ibv_qp *iwc_qp_by_num(struct ibv_context *ctx, uint32_t qp_num)
{
	struct iwc_context *c;
	struct iwc_qp *q;

	if (!ctx)
		return NULL;
	c = iwc_ctx(ctx);
	pthread_mutex_lock(&c->qp_lock);
	for (q = c->qps; q && q->pub.qp_num != qp_num; q = q->next)
		;
	pthread_mutex_unlock(&c->qp_lock);
	return q ? &q->pub : NULL;
}

void iwc_qp_sync_state(struct ibv_context *ctx, struct ibv_qp *qp)
{
	struct iwc_context *c;
	struct iwv_qp_attr a;
	struct iwc_qp *q;

	if (!ctx || !qp)
		return;
	c = iwc_ctx(ctx);
	/* under qp_lock: ibv_destroy_qp takes the QP off the list under it
	 * before destroying it, so a QP on the list stays valid meanwhile */
	pthread_mutex_lock(&c->qp_lock);
	for (q = c->qps; q && &q->pub != qp; q = q->next)
		;
	if (q && iwv_query_qp(q->iwv, &a, IWV_QP_STATE, NULL) == 0)
		qp->state = (enum ibv_qp_state)a.qp_state;
	pthread_mutex_unlock(&c->qp_lock);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct iwv_qp_init_attr a;
	struct iwc_qp *q;

	if (!pd || !attr || !attr->send_cq || !attr->recv_cq) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP; /* iWARP has reliable connections only */
		return NULL;
	}
	q = iwc_zalloc(sizeof(*q));
	if (!q)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.qp_context = q;
	a.send_cq = iwc_cq(attr->send_cq)->iwv;
	a.recv_cq = iwc_cq(attr->recv_cq)->iwv;
	a.srq = attr->srq ? ((struct iwc_srq *)attr->srq)->iwv : NULL;
	a.cap.max_send_wr = attr->cap.max_send_wr;
	a.cap.max_recv_wr = attr->cap.max_recv_wr;
	a.cap.max_send_sge = attr->cap.max_send_sge;
	a.cap.max_recv_sge = attr->cap.max_recv_sge;
	a.cap.max_inline_data = attr->cap.max_inline_data;
	a.qp_type = IWV_QPT_RC;
	a.sq_sig_all = attr->sq_sig_all;
	a.rfc7306 = iwc_rfc7306();
	a.rnr_hold_ms = iwc_rnr_hold_ms();
	q->iwv = iwv_create_qp(iwc_pd(pd)->iwv, &a);
	if (!q->iwv) {
		int e = errno;

		free(q);
		errno = e;
		return NULL;
	}
	attr->cap.max_send_wr = a.cap.max_send_wr;
	attr->cap.max_recv_wr = a.cap.max_recv_wr;
	attr->cap.max_send_sge = a.cap.max_send_sge;
	attr->cap.max_recv_sge = a.cap.max_recv_sge;
	attr->cap.max_inline_data = a.cap.max_inline_data;
	q->pub.context = pd->context;
	q->pub.qp_context = attr->qp_context;
	q->pub.pd = pd;
	q->pub.send_cq = attr->send_cq;
	q->pub.recv_cq = attr->recv_cq;
	q->pub.srq = attr->srq;
	q->pub.handle = q->iwv->handle;
	q->pub.qp_num = q->iwv->qp_num;
	q->pub.state = IBV_QPS_INIT;
	q->pub.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&q->pub.mutex, NULL);
	pthread_cond_init(&q->pub.cond, NULL);
	iwc_qp_track(q, true);
	return &q->pub;
}

void iwc_qp_release(struct ibv_qp *qp)
{
	if (!qp)
		return;
	iwc_qp_track(iwc_qp(qp), false);
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(qp);
}

static int qp_destroy_fn(void *p)
{
	return iwv_destroy_qp(p);
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct iwc_qp *q = iwc_qp(qp);
	int r;

	if (!qp)
		return EINVAL;
	/* off the list first: iwc_qp_sync_state (another thread) must not find
	 * it once the iwarp QP is gone */
	iwc_qp_track(q, false);
	r = iwc_retry_busy(qp_destroy_fn, q->iwv);
	if (r) {
		iwc_qp_track(q, true);
		return r;
	}
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(q);
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct iwv_qp_init_attr ia;
	struct iwv_qp_attr a;
	int r;

	if (!qp || !attr)
		return EINVAL;
	r = iwv_query_qp(iwc_qp(qp)->iwv, &a, attr_mask, &ia);
	if (r)
		return r;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)a.qp_state;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = IBV_MTU_1024;
	attr->qp_access_flags =
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	attr->cap.max_send_wr = a.cap.max_send_wr;
	attr->cap.max_recv_wr = a.cap.max_recv_wr;
	attr->cap.max_send_sge = a.cap.max_send_sge;
	attr->cap.max_recv_sge = a.cap.max_recv_sge;
	attr->cap.max_inline_data = a.cap.max_inline_data;
	attr->max_rd_atomic = a.max_rd_atomic;
	attr->max_dest_rd_atomic = a.max_dest_rd_atomic;
	attr->port_num = 1;
	qp->state = attr->qp_state;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = attr->cap;
		init_attr->qp_type = IBV_QPT_RC;
		init_attr->sq_sig_all = ia.sq_sig_all;
	}
	return 0;
}

/*
 * iWARP QPs are moved by the connection manager (RFC 5040 §6: the LLP
 * connection comes first), so INIT, RTR and RTS requests succeed without
 * effect; ERR flushes and tears down as ibverbs says; anything else (RESET,
 * SQD, SQE) is not possible here.
 */
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	if (!qp || !attr)
		return EINVAL;
	if (!(attr_mask & IBV_QP_STATE)) {
		return 0; /* attributes only: the CM has negotiated them (IRD/ORD) */
	}
	switch (attr->qp_state) {
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
	case IBV_QPS_RTS:
		iwc_qp_sync_state(qp->context, qp);
		return 0;
	case IBV_QPS_ERR: {
		struct iwv_qp_attr a = {.qp_state = IWV_QPS_ERR};
		int r = iwv_modify_qp(iwc_qp(qp)->iwv, &a, IWV_QP_STATE);

		if (r == 0)
			qp->state = IBV_QPS_ERR;
		return r;
	}
	default:
		return EINVAL;
	}
}

/* Extended QPs (ibv_wr_* API) are not provided: programs fall back. */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* What iWARP has not: address handles, multicast                          */
/* ---------------------------------------------------------------------- */

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	return EOPNOTSUPP;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	errno = EOPNOTSUPP;
	return -1;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return EOPNOTSUPP;
}

/* ---------------------------------------------------------------------- */
/* Asynchronous events                                                     */
/* ---------------------------------------------------------------------- */

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct iwv_async_event e;

	if (!context || !event) {
		errno = EINVAL;
		return -1;
	}
	if (iwv_get_async_event(iwc_ctx(context)->iwv, &e) != 0)
		return -1;
	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)e.event_type;
	switch (e.event_type) {
	case IWV_EVENT_CQ_ERR:
		event->element.cq =
			e.element.cq ? &((struct iwc_cq *)e.element.cq->cq_context)->pub : NULL;
		break;
	case IWV_EVENT_SRQ_ERR:
	case IWV_EVENT_SRQ_LIMIT_REACHED:
		event->element.srq =
			e.element.srq ? &((struct iwc_srq *)e.element.srq->srq_context)->pub : NULL;
		break;
	case IWV_EVENT_DEVICE_FATAL:
	case IWV_EVENT_PORT_ACTIVE:
	case IWV_EVENT_PORT_ERR:
	case IWV_EVENT_LID_CHANGE:
	case IWV_EVENT_PKEY_CHANGE:
	case IWV_EVENT_SM_CHANGE:
	case IWV_EVENT_CLIENT_REREGISTER:
	case IWV_EVENT_GID_CHANGE:
		event->element.port_num = e.element.port_num;
		break;
	default:
		event->element.qp =
			e.element.qp ? &((struct iwc_qp *)e.element.qp->qp_context)->pub : NULL;
		break;
	}
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct iwv_async_event e;

	if (!event)
		return;
	memset(&e, 0, sizeof(e));
	e.event_type = (enum iwv_event_type)event->event_type;
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		e.element.cq = event->element.cq ? iwc_cq(event->element.cq)->iwv : NULL;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		e.element.srq =
			event->element.srq ? ((struct iwc_srq *)event->element.srq)->iwv : NULL;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		e.element.qp = event->element.qp ? iwc_qp(event->element.qp)->iwv : NULL;
		break;
	default:
		e.element.port_num = event->element.port_num;
		break;
	}
	iwv_ack_async_event(&e);
}
