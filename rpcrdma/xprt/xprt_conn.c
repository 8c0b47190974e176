/* SPDX-License-Identifier: MIT */
/*
 * xprt_conn.c - the life of an RPC-over-RDMA connection: setup (CM events,
 * RFC 8797 private data, receive and send buffers, CQ and QP), teardown,
 * client reconnect, listeners and the connection queries.  The work requests
 * on a connection (sends, Reads, receives, completions) are xprt_io.c's.
 *
 * Theory of operation.
 *
 * Setup.  A client resolves, creates one CQ (on the ctx's completion channel,
 * cq_context = a small handle that outlives the conn) and one RC QP, posts
 * its receive buffers (credits + backchannel credits + 2 spare: RFC 8166
 * §3.3.1 requires the requester to keep receives for the replies it expects,
 * RFC 8167 §4 adds the backchannel ones) and connects with the RFC 8797
 * private data (its send and receive sizes, SND_W_INV_OK unless turned off)
 * followed by our extension block when responder-provided Read chunks are
 * on.  A server does the same on CONNECT_REQUEST (receives for cfg.credits
 * forward calls, its backchannel replies and, with RPRC, one RDMA_DONE per
 * credit) and answers with its own private data.  The effective inline send
 * size is the smaller of ours and the peer's receive size (1024 when the peer
 * sent none, RFC 8797 §4.2).  The receive and send buffers are allocated and
 * registered once for the life of the conn and serve every reconnection.
 *
 * Teardown.  On DISCONNECTED, on a CM error or when the I/O path finds the
 * connection broken (xconn_fatal: disconnect first), the QP is destroyed,
 * which flushes every posted work request; the CQ is drained so that each
 * object a work request points at sees its completion before it is freed,
 * queued Reads fail and the send slots whose completion never came are
 * released; then the id and the CQ go (a CQ whose channel still holds an
 * event waits on the ctx's zombie list).  A client that was up reports DOWN,
 * keeps its calls and reconnects after reconnect_ms (new id, same address and
 * private data); after cfg.reconnects failed attempts, or on a server, the
 * conn reports CLOSED and is freed by the next process() pass.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xprt_int.h"

#define XCQE_EXTRA 64
#define XSQ_DEPTH  4096

static void xconn_rc_fire(struct iw_timer *t, uint64_t now);

/* A status (an iw_err) for a log line. */
static const char *xstatus(int status)
{
	return status ? rpcrdma_errname(status) : "ok";
}

bool xconn_ready(const struct rpcrdma_conn *c)
{
	return c->state == XC_UP && c->qp && !c->dying;
}

void xconn_report(struct rpcrdma_conn *c, enum rpcrdma_conn_event ev, int status)
{
	if (!c->on_conn)
		return;
	c->ctx->ncb++;
	c->on_conn(c->arg, c, ev, status);
}

static struct rpcrdma_conn *xconn_new(struct rpcrdma_ctx *ctx, bool client)
{
	struct rpcrdma_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->pd = iwv_alloc_pd(ctx->vctx);
	if (!c->pd) {
		free(c);
		return NULL;
	}
	c->kind = XOBJ_CONN;
	c->ctx = ctx;
	c->client = client;
	c->state = XC_CONNECTING;
	iw_list_init(&c->calls);
	iw_list_init(&c->reqs);
	iw_list_init(&c->expos);
	iw_list_init(&c->rd_queue);
	iw_timer_init(&c->rc_timer, xconn_rc_fire);
	xbuf_init(c);
	c->limit = 1;
	c->next_id = 1;
	c->inline_recv = ctx->cfg.inline_recv;
	c->inline_send = RPCRDMA_INLINE_MIN;
	iw_list_add_tail(&ctx->conns, &c->node);
	return c;
}

/* Receive and send buffers, registered once for the life of the conn. */
static int xconn_bufs(struct rpcrdma_conn *c, unsigned nrecv)
{
	struct rpcrdma_ctx *ctx = c->ctx;
	size_t rsz = ctx->cfg.inline_recv, ssz = ctx->cfg.inline_send;
	unsigned nsend = 2 * nrecv + 2u * ctx->cfg.credits + 8;

	if (nsend > 2048)
		nsend = 2048;
	c->nrecv = nrecv;
	c->nsend = nsend;
	c->rmem = malloc(rsz * nrecv);
	c->smem = malloc(ssz * nsend);
	c->rslots = calloc(nrecv, sizeof(*c->rslots));
	c->sslots = calloc(nsend, sizeof(*c->sslots));
	if (!c->rmem || !c->smem || !c->rslots || !c->sslots)
		return IW_ENOMEM;
	c->rmr = iwv_reg_mr(c->pd, c->rmem, rsz * nrecv, IWV_ACCESS_LOCAL_WRITE);
	c->smr = iwv_reg_mr(c->pd, c->smem, ssz * nsend, IWV_ACCESS_LOCAL_WRITE);
	if (!c->rmr || !c->smr)
		return IW_ENOMEM;
	for (unsigned i = 0; i < nrecv; i++) {
		c->rslots[i].wr.kind = XWR_RECV;
		c->rslots[i].conn = c;
		c->rslots[i].buf = c->rmem + rsz * i;
	}
	for (unsigned i = 0; i < nsend; i++) {
		c->sslots[i].wr.kind = XWR_SEND;
		c->sslots[i].conn = c;
		c->sslots[i].buf = c->smem + ssz * i;
	}
	return 0;
}

static void xconn_free(struct rpcrdma_conn *c)
{
	iw_timer_cancel(&c->ctx->timers, &c->rc_timer);
	if (c->sslots)
		xsend_release_all(c);
	xbuf_drain(c);
	if (c->rmr)
		iwv_dereg_mr(c->rmr);
	if (c->smr)
		iwv_dereg_mr(c->smr);
	free(c->rmem);
	free(c->smem);
	free(c->rslots);
	free(c->sslots);
	/* every MR of the PD is gone by now (calls freed at teardown, orphaned
	 * requests' MRs dropped by xrsp_conn_lost): EBUSY would be our bug */
	if (iwv_dealloc_pd(c->pd))
		xconn_log(c, "BUG: PD still in use at close: leaked");
	iw_list_del(&c->node);
	free(c);
}

/* CQ + QP on the current id, all receives posted. */
static int xconn_qp(struct rpcrdma_conn *c)
{
	struct rpcrdma_ctx *ctx = c->ctx;
	struct iwv_qp_init_attr attr;
	struct iwv_cq *cq;
	int cqe = XSQ_DEPTH + (int)c->nrecv + XCQE_EXTRA;

	c->cqh = calloc(1, sizeof(*c->cqh));
	if (!c->cqh)
		return IW_ENOMEM;
	iw_list_init(&c->cqh->node);
	c->cqh->conn = c;
	cq = iwv_create_cq(ctx->vctx, cqe, c->cqh, ctx->cc, 0);
	if (!cq) {
		free(c->cqh);
		c->cqh = NULL;
		return IW_ENOMEM;
	}
	c->cqh->cq = cq;
	iwv_req_notify_cq(cq, 0);
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = c;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.cap.max_send_wr = XSQ_DEPTH;
	attr.cap.max_recv_wr = c->nrecv;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IWV_QPT_RC;
	attr.sq_sig_all = 1;
	if (iwcm_create_qp(c->id, c->pd, &attr))
		return IW_ENOMEM;
	c->qp = c->id->qp;
	for (unsigned i = 0; i < c->nrecv; i++)
		if (xrecv_post(c, &c->rslots[i]))
			return IW_ENOMEM;
	return 0;
}

static void xconn_pdata(struct rpcrdma_conn *c, bool ext)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	struct rpcrdma_cm_pdata p = {
		.present = true,
		.version = RPCRDMA_CM_VERSION,
		.flags = cfg->no_send_inv ? 0 : RPCRDMA_CM_F_SND_W_INV_OK,
		.send_size = cfg->inline_send,
		.recv_size = cfg->inline_recv,
		.ext_present = ext,
		.ext_flags = ext ? RPCRDMA_EXT_F_RPRC : 0,
	};
	int n = rpcrdma_cm_pdata_encode(&p, c->pdata, sizeof(c->pdata));

	c->pdata_len = n > 0 ? (uint8_t)n : 0;
}

static void xconn_peer_pdata(struct rpcrdma_conn *c, const void *pd, size_t len)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	struct rpcrdma_cm_pdata p;

	memset(&p, 0, sizeof(p));
	if (rpcrdma_cm_pdata_decode(pd, len, &p) != 0 || !p.present) {
		p.present = false;
		p.recv_size = RPCRDMA_INLINE_MIN;
		p.flags = 0;
		p.ext_present = false;
	}
	c->peer_pdata = p.present;
	c->inline_send = cfg->inline_send;
	if (p.recv_size < c->inline_send)
		c->inline_send = p.recv_size;
	if (c->inline_send < RPCRDMA_INLINE_MIN)
		c->inline_send = RPCRDMA_INLINE_MIN;
	c->send_inv = !cfg->no_send_inv && (p.flags & RPCRDMA_CM_F_SND_W_INV_OK);
	c->rprc = cfg->rprc && p.ext_present && (p.ext_flags & RPCRDMA_EXT_F_RPRC);
}

static struct iwcm_options xconn_opts(const struct rpcrdma_ctx *ctx, bool client)
{
	struct iwcm_options o;

	if (ctx->cfg.cm)
		o = *ctx->cfg.cm;
	else
		iwcm_options_default(&o);
	if (client && ctx->cfg.connect_timeout_ms)
		o.timeout_ms = ctx->cfg.connect_timeout_ms;
	return o;
}

/* A failed synchronous step: report it from process() through the timer. */
static void xconn_fail_later(struct rpcrdma_conn *c, int status)
{
	c->close_status = status;
	xtimer_arm(c->ctx, &c->rc_timer, 0);
}

/* A failure of the connection's I/O (xprt_io.c): disconnect, so that
 * DISCONNECTED tears it down, or else fail it from process(); nothing while a
 * teardown is under way. */
void xconn_fatal(struct rpcrdma_conn *c, const char *why)
{
	if (c->dying || !c->id)
		return;
	xconn_log(c, "fatal: %s", why);
	if (c->state == XC_UP || c->state == XC_CLOSING) {
		if (iwcm_disconnect(c->id) == 0)
			return;
	}
	xconn_fail_later(c, IW_ERPC_CONN);
}

static void xconn_attempt(struct rpcrdma_conn *c)
{
	struct rpcrdma_ctx *ctx = c->ctx;
	struct iwcm_options o = xconn_opts(ctx, true);

	c->state = XC_CONNECTING;
	if (iwcm_create_id(ctx->ch, &c->id, c, IWCM_PS_TCP)) {
		c->id = NULL;
		xconn_fail_later(c, iw_err_sys(errno));
		return;
	}
	iwcm_set_options(c->id, &o);
	if (iwcm_resolve_addr(c->id, NULL, (struct sockaddr *)&c->peer, (int)o.timeout_ms)) {
		xconn_fail_later(c, iw_err_sys(errno));
		return;
	}
	xconn_log(c, "connecting");
}

struct rpcrdma_conn *rpcrdma_connect(struct rpcrdma_ctx *ctx, const struct sockaddr *sa,
				     socklen_t salen, rpcrdma_conn_fn on_conn,
				     rpcrdma_call_fn on_call, void *arg)
{
	struct rpcrdma_conn *c;
	unsigned nrecv;

	if (!ctx || !sa || salen > sizeof(struct sockaddr_storage) ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
		errno = EINVAL;
		return NULL;
	}
	c = xconn_new(ctx, true);
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(&c->peer, sa, salen);
	c->peer_len = salen;
	c->on_conn = on_conn;
	c->on_call = on_call;
	c->arg = arg;
	nrecv = ctx->cfg.credits + ctx->cfg.bc_credits + 2u;
	if (xconn_bufs(c, nrecv)) {
		xconn_free(c);
		errno = ENOMEM;
		return NULL;
	}
	xconn_pdata(c, ctx->cfg.rprc);
	xconn_attempt(c);
	return c;
}

static void xconn_route_resolved(struct rpcrdma_conn *c)
{
	struct iwcm_conn_param p;
	int rc = xconn_qp(c);

	if (rc) {
		xconn_lost(c, rc);
		return;
	}
	memset(&p, 0, sizeof(p));
	p.private_data = c->pdata;
	p.private_data_len = c->pdata_len;
	if (iwcm_connect(c->id, &p))
		xconn_lost(c, iw_err_sys(errno));
}

static void xconn_established(struct rpcrdma_conn *c, const void *pd, size_t pdlen)
{
	struct iwv_qp_attr qa;
	struct iwv_qp_init_attr qi;
	bool again = c->was_up;

	if (c->closing)
		return; /* rpcrdma_close won the race: its timer tears this down */
	if (c->client)
		xconn_peer_pdata(c, pd, pdlen);
	c->ord = 1;
	if (iwv_query_qp(c->qp, &qa, IWV_QP_MAX_QP_RD_ATOMIC, &qi) == 0 && qa.max_rd_atomic)
		c->ord = qa.max_rd_atomic;
	c->state = XC_UP;
	c->was_up = true;
	c->failures = 0;
	c->limit = 1; /* RFC 8166 §3.3.1: one credit until the first reply */
	c->inflight = 0;
	if (again)
		c->st.reconnects++;
	xconn_log(c, "up: inline send %u recv %u, peer pdata %d, send_inv %d, rprc %d, ord %u",
		  c->inline_send, c->inline_recv, c->peer_pdata, c->send_inv, c->rprc, c->ord);
	xconn_report(c, RPCRDMA_CONN_UP, 0);
	if (c->state == XC_UP)
		xreq_kick(c);
}

static void xconn_accept(struct rpcrdma_listener *l, struct iwcm_id *id, const void *pd,
			 size_t pdlen)
{
	struct rpcrdma_ctx *ctx = l->ctx;
	const struct sockaddr *sa = iwcm_get_peer_addr(id);
	struct rpcrdma_conn *c;
	struct iwcm_conn_param p;
	unsigned nrecv;

	/* refused before a buffer, a PD or a QP is made for it */
	if (l->admit && (!sa || !l->admit(l->admit_arg, sa))) {
		iwcm_reject(id, NULL, 0);
		iwcm_destroy_id(id);
		return;
	}
	c = xconn_new(ctx, false);
	if (!c) {
		iwcm_reject(id, NULL, 0);
		iwcm_destroy_id(id);
		return;
	}
	c->on_conn = l->on_conn;
	c->on_call = l->on_call;
	c->arg = l->arg;
	c->id = id;
	id->context = c;
	if (sa) {
		c->peer_len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							: sizeof(struct sockaddr_in);
		memcpy(&c->peer, sa, c->peer_len);
	}
	xconn_peer_pdata(c, pd, pdlen);
	nrecv = ctx->cfg.credits + ctx->cfg.bc_credits + (c->rprc ? ctx->cfg.credits : 0u) + 2u;
	xconn_pdata(c, c->rprc);
	if (xconn_bufs(c, nrecv) || xconn_qp(c))
		goto fail;
	memset(&p, 0, sizeof(p));
	p.private_data = c->pdata;
	p.private_data_len = c->pdata_len;
	if (iwcm_accept(id, &p))
		goto fail;
	xconn_log(c, "accepting");
	return;
fail:
	xconn_log(c, "accept failed");
	iwcm_reject(id, NULL, 0);
	c->state = XC_CLOSING;
	xconn_lost(c, IW_ENOMEM);
}

static void xconn_final(struct rpcrdma_conn *c, int status)
{
	bool report = c->client || c->was_up;

	iw_timer_cancel(&c->ctx->timers, &c->rc_timer);
	xreq_conn_lost(c, c->closing ? IW_ERPC_SHUTDOWN : IW_ERPC_CONN, true);
	xrsp_conn_lost(c);
	c->state = XC_CLOSED;
	xconn_log(c, "closed (%s)", xstatus(status));
	if (report)
		xconn_report(c, RPCRDMA_CONN_CLOSED, status);
	if (c->ctx->wait_conn == c) {
		c->ctx->wait_done = true;
		c->ctx->wait_status = status ? status : IW_ERPC_CONN;
		c->ctx->wait_conn = NULL;
	}
}

/* Tear the current connection down (idempotent), then reconnect or close. */
void xconn_lost(struct rpcrdma_conn *c, int status)
{
	struct rpcrdma_ctx *ctx = c->ctx;
	bool was_up = c->state == XC_UP;

	if (c->state == XC_CLOSED)
		return;
	if (c->id) {
		c->dying = true;
		if (c->qp) {
			iwcm_destroy_qp(c->id);
			c->qp = NULL;
		}
		if (c->cqh)
			xcq_poll(c);
		xread_fail_queued(c);
		c->rd_out = 0;
		iwcm_destroy_id(c->id);
		c->id = NULL;
		if (c->cqh) {
			c->cqh->conn = NULL;
			if (iwv_destroy_cq(c->cqh->cq) == 0)
				free(c->cqh);
			else
				iw_list_add_tail(&ctx->zombie_cqs, &c->cqh->node);
			c->cqh = NULL;
		}
		/* receives are gone: only sends whose completion never came stay busy */
		xsend_release_all(c);
		c->dying = false;
	}
	xconn_log(c, "lost (%s)%s", xstatus(status), was_up ? " while up" : "");
	if (!c->client || c->closing || ctx->destroying) {
		xconn_final(c, status);
		return;
	}
	xrsp_conn_lost(c);
	xreq_conn_lost(c, status, false);
	if (was_up) {
		c->state = XC_WAIT;
		xconn_report(c, RPCRDMA_CONN_DOWN, status);
		if (c->state == XC_CLOSED || c->closing)
			return;
	} else {
		c->failures++;
	}
	if (!c->was_up || ctx->cfg.reconnects <= 0 || c->failures >= ctx->cfg.reconnects) {
		xconn_final(c, status ? status : IW_ERPC_CONN);
		return;
	}
	c->state = XC_WAIT;
	xtimer_arm(ctx, &c->rc_timer, ctx->cfg.reconnect_ms);
}

static void xconn_rc_fire(struct iw_timer *t, uint64_t now)
{
	struct rpcrdma_conn *c = iw_container_of(t, struct rpcrdma_conn, rc_timer);

	if (c->state == XC_CLOSED)
		return;
	if (c->closing) {
		if (c->id)
			xconn_lost(c, c->close_status);
		else
			xconn_final(c, c->close_status);
		return;
	}
	if (c->state == XC_WAIT) {
		xconn_attempt(c);
		return;
	}
	/* a synchronous failure of an attempt */
	xconn_lost(c, c->close_status ? c->close_status : IW_ERPC_CONN);
}

void rpcrdma_close(struct rpcrdma_conn *c)
{
	if (!c || c->closing || c->state == XC_CLOSED)
		return;
	c->closing = true;
	c->close_status = 0;
	xreq_conn_lost(c, IW_ERPC_SHUTDOWN, true);
	xconn_log(c, "closing");
	if (c->id && c->state == XC_UP && iwcm_disconnect(c->id) == 0) {
		c->state = XC_CLOSING;
		return;
	}
	c->state = XC_CLOSING;
	xtimer_arm(c->ctx, &c->rc_timer, 0);
}

struct xcm_ev {
	enum iwcm_event_type type;
	int status; /* an iw_err: the CM's iw_err, else its -errno status as IW_ESYS */
	struct iwcm_id *id, *listen_id;
	size_t pdlen;
	uint8_t pd[64];
};

void xconn_handle_cm(struct rpcrdma_ctx *ctx, struct iwcm_event *ev)
{
	struct xcm_ev e;
	struct rpcrdma_conn *c = NULL;

	memset(&e, 0, sizeof(e));
	e.type = ev->event;
	e.status = ev->iw_err ? ev->iw_err : iw_err_sys(-ev->status);
	e.id = ev->id;
	e.listen_id = ev->listen_id;
	if (e.type == IWCM_EVENT_CONNECT_REQUEST || e.type == IWCM_EVENT_ESTABLISHED) {
		size_t n = ev->param.conn.private_data_len16 ? ev->param.conn.private_data_len16
							     : ev->param.conn.private_data_len;

		if (n > sizeof(e.pd))
			n = sizeof(e.pd);
		if (n && ev->param.conn.private_data)
			memcpy(e.pd, ev->param.conn.private_data, n);
		else
			n = 0;
		e.pdlen = n;
	}
	iwcm_ack_cm_event(ev);

	if (e.type == IWCM_EVENT_CONNECT_REQUEST) {
		struct rpcrdma_listener *l = e.listen_id ? e.listen_id->context : NULL;

		if (!l || l->kind != XOBJ_LISTENER) {
			iwcm_reject(e.id, NULL, 0);
			iwcm_destroy_id(e.id);
			return;
		}
		xconn_accept(l, e.id, e.pd, e.pdlen);
		return;
	}
	if (e.id && e.id->context) {
		c = e.id->context;
		if (c->kind != XOBJ_CONN || c->id != e.id)
			return;
	}
	if (!c)
		return;
	switch (e.type) {
	case IWCM_EVENT_ADDR_RESOLVED:
		if (iwcm_resolve_route(c->id, 2000))
			xconn_lost(c, iw_err_sys(errno));
		break;
	case IWCM_EVENT_ROUTE_RESOLVED:
		xconn_route_resolved(c);
		break;
	case IWCM_EVENT_ESTABLISHED:
		xconn_established(c, e.pd, e.pdlen);
		break;
	case IWCM_EVENT_ADDR_ERROR:
	case IWCM_EVENT_ROUTE_ERROR:
	case IWCM_EVENT_UNREACHABLE:
	case IWCM_EVENT_REJECTED:
	case IWCM_EVENT_CONNECT_ERROR:
		xconn_log(c, "%s (%s)", iwcm_event_str(e.type), xstatus(e.status));
		xconn_lost(c, e.status ? e.status : IW_ERPC_CONN);
		break;
	case IWCM_EVENT_DISCONNECTED:
	case IWCM_EVENT_DEVICE_REMOVAL:
		xconn_log(c, "%s", iwcm_event_str(e.type));
		xconn_lost(c, c->closing ? 0 : IW_ERPC_CONN);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* Listeners, reaping, queries                                             */
/* ---------------------------------------------------------------------- */

struct rpcrdma_listener *rpcrdma_listen(struct rpcrdma_ctx *ctx, const struct sockaddr *sa,
					socklen_t salen, int backlog, rpcrdma_conn_fn on_conn,
					rpcrdma_call_fn on_call, void *arg)
{
	struct rpcrdma_listener *l;
	struct iwcm_options o;
	int saved;

	if (!ctx || !sa || salen > sizeof(struct sockaddr_storage)) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l->kind = XOBJ_LISTENER;
	l->ctx = ctx;
	l->on_conn = on_conn;
	l->on_call = on_call;
	l->arg = arg;
	if (iwcm_create_id(ctx->ch, &l->id, l, IWCM_PS_TCP)) {
		saved = errno;
		free(l);
		errno = saved;
		return NULL;
	}
	o = xconn_opts(ctx, false);
	iwcm_set_options(l->id, &o);
	if (iwcm_bind_addr(l->id, sa) || iwcm_listen(l->id, backlog > 0 ? backlog : 16)) {
		saved = errno;
		iwcm_destroy_id(l->id);
		free(l);
		errno = saved;
		return NULL;
	}
	iw_list_add_tail(&ctx->listeners, &l->node);
	xlog(ctx, "listening on port %u", iwcm_get_src_port(l->id));
	return l;
}

void rpcrdma_listener_close(struct rpcrdma_listener *l)
{
	if (!l)
		return;
	iwcm_destroy_id(l->id);
	iw_list_del(&l->node);
	free(l);
}

void rpcrdma_listener_set_admit(struct rpcrdma_listener *l, rpcrdma_admit_fn admit, void *arg)
{
	if (!l)
		return;
	l->admit = admit;
	l->admit_arg = arg;
}

uint16_t rpcrdma_listener_port(const struct rpcrdma_listener *l)
{
	return iwcm_get_src_port(l->id);
}

void xconn_reap(struct rpcrdma_ctx *ctx)
{
	struct iw_list *n = ctx->conns.next;

	while (n != &ctx->conns) {
		struct rpcrdma_conn *c = iw_container_of(n, struct rpcrdma_conn, node);

		n = n->next;
		if (c->state == XC_CLOSED)
			xconn_free(c);
	}
}

void xconn_destroy_all(struct rpcrdma_ctx *ctx)
{
	for (struct iw_list *n = ctx->conns.next; n != &ctx->conns; n = n->next) {
		struct rpcrdma_conn *c = iw_container_of(n, struct rpcrdma_conn, node);

		if (c->state == XC_CLOSED)
			continue;
		c->closing = true;
		xreq_conn_lost(c, IW_ERPC_SHUTDOWN, true);
		if (c->id)
			xconn_lost(c, IW_ERPC_SHUTDOWN);
		else
			xconn_final(c, IW_ERPC_SHUTDOWN);
	}
	xconn_reap(ctx);
	/* CQ events still queued keep a CQ busy: take them, then destroy */
	for (int i = 0; i < 100 && !iw_list_empty(&ctx->zombie_cqs); i++) {
		struct iwv_cq *cq;
		void *cqctx;

		while (iwv_get_cq_event(ctx->cc, &cq, &cqctx) == 0)
			iwv_ack_cq_events(cq, 1);
		xzombies_reap(ctx);
	}
}

int rpcrdma_conn_wait_up(struct rpcrdma_conn *c, int timeout_ms)
{
	struct rpcrdma_ctx *ctx = c->ctx;
	uint64_t end = xnow_ms() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);

	for (;;) {
		int left, rc;

		if (c->state == XC_UP)
			return 0;
		if (c->state == XC_CLOSED)
			return c->close_status ? c->close_status : IW_ERPC_CONN;
		left = timeout_ms < 0 ? 100 : (int)(end > xnow_ms() ? end - xnow_ms() : 0);
		if (timeout_ms >= 0 && left == 0)
			return IW_ETIMEDOUT;
		ctx->wait_conn = c;
		ctx->wait_done = false;
		rc = rpcrdma_ctx_process(ctx, left > 100 ? 100 : left);
		if (ctx->wait_done) {
			ctx->wait_done = false;
			return ctx->wait_status;
		}
		ctx->wait_conn = NULL;
		if (rc < 0)
			return rc;
	}
}

int rpcrdma_conn_info(const struct rpcrdma_conn *c, struct rpcrdma_conn_info *info)
{
	if (!c || !info)
		return IW_EINVAL;
	memset(info, 0, sizeof(*info));
	info->up = c->state == XC_UP;
	info->client = c->client;
	info->inline_send = c->inline_send;
	info->inline_recv = c->inline_recv;
	info->credits = (uint16_t)(c->client ? c->limit : xrsp_grant(c));
	info->bc_credits = (uint16_t)(c->client ? c->ctx->cfg.bc_credits : c->limit);
	info->peer_pdata = c->peer_pdata;
	info->send_inv = c->send_inv;
	info->rprc = c->rprc;
	info->peer = c->peer;
	return 0;
}

int rpcrdma_conn_stats(const struct rpcrdma_conn *c, struct rpcrdma_stats *st)
{
	if (!c || !st)
		return IW_EINVAL;
	*st = c->st;
	return 0;
}

void *rpcrdma_conn_get_arg(const struct rpcrdma_conn *c)
{
	return c->arg;
}

void rpcrdma_conn_set_arg(struct rpcrdma_conn *c, void *arg)
{
	c->arg = arg;
}
