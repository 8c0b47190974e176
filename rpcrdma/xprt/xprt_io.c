/* SPDX-License-Identifier: MIT */
/*
 * xprt_io.c - the work requests of an RPC-over-RDMA connection: send slots,
 * RDMA Reads within ORD, receives and completion dispatch.
 *
 * Theory of operation.  Every work request carries in wr_id the `struct xwr`
 * of the object it belongs to (xprt_int.h), and that object lives until the
 * completion comes back.
 *
 * Sends.  Every Send goes out of one of the connection's send slots (buffers
 * of cfg.inline_send octets registered with the connection, xprt_conn.c):
 * xsend_get() takes a free slot, xsend_post() encodes the transport header
 * and copies the inline payload into it and posts it, behind the RDMA Writes
 * the caller chained in front (one post: the Writes are placed before the
 * Send, RFC 5040 §5.5).  Memory the Writes read from can be attached to the
 * slot; xsend_release() frees it and the slot when the Send completes, when
 * the post fails, or when the connection is torn down.
 *
 * Reads.  RDMA Reads are queued on the connection and posted while fewer than
 * ORD (the QP's max_rd_atomic) are outstanding; every Read completion posts
 * the next ones.  The owner of a set of Reads (`struct xreader`: a responder
 * request pulling Read chunks, a requester call pulling a responder-provided
 * Read chunk) counts them, keeps the first failure and has its done() run when
 * the last one has completed; the Reads still queued when the connection goes
 * fail with IW_ERPC_CONN.
 *
 * Receives.  Each received Send is decoded (rpcrdma_wire.h) and routed by
 * its direction (RFC 8167 §4: the RPC msg_type word of an RDMA_MSG payload;
 * RDMA_NOMSG is a reply at a client and a call at a server; RDMA_ERROR is a
 * reply; RDMA_DONE belongs to the responder) and then reposted.  A header
 * that does not decode is discarded by a requester (RFC 8166 §4.5) and
 * answered by a responder as rpcrdma_err_action() says.
 *
 * Large buffers.  A call's registered buffer, a request's rebuilt call and a
 * reply's copy are as large as the messages (a 1 MiB NFS READ or WRITE
 * needs 1-2 MiB); clearing each new one cost about a tenth of a gateway's
 * CPU.  So a connection keeps up to XBUF_KEEP of them when they are done
 * and hands them out again without clearing (xbuf_get): a kept buffer holds
 * nothing but octets its own peer sent or was sent, so stale octets a
 * chunk's peer can read or a short RDMA Write leaves in place tell that
 * peer nothing new, and buffers never move between connections.  New
 * buffers are zeroed; the kept ones go after XBUF_IDLE_MS without use.
 *
 * Completions.  xcq_poll() polls the connection's CQ until it is empty,
 * requests the next CQ event and polls once more (a completion that arrived
 * in between raises no event), and hands each completion to its object.  A
 * completion in error other than a flush is fatal to the connection; flushes
 * only release what the work request held (teardown, xprt_conn.c).
 */
#include <stdlib.h>
#include <string.h>
#include <string.h>

#include "iw_bytes.h"
#include "xprt_int.h"

/* ---------------------------------------------------------------------- */
/* Sends                                                                   */
/* ---------------------------------------------------------------------- */

struct xsend *xsend_get(struct rpcrdma_conn *c)
{
	for (unsigned i = 0; i < c->nsend; i++)
		if (!c->sslots[i].busy) {
			c->sslots[i].busy = true;
			return &c->sslots[i];
		}
	xconn_log(c, "out of send buffers");
	return NULL;
}

void xsend_release(struct xsend *s)
{
	if (s->att_mr)
		iwv_dereg_mr(s->att_mr);
	xbuf_put(s->conn, s->att, s->att_cap);
	s->att = NULL;
	s->att_cap = 0;
	s->att_mr = NULL;
	s->busy = false;
}

void *xbuf_get(struct rpcrdma_conn *c, size_t len, size_t *cap)
{
	unsigned best = XBUF_KEEP;
	void *p;

	if (!len)
		len = 4;
	if (c && len >= XBUF_MIN) {
		/* the smallest kept one that is large enough */
		for (unsigned i = 0; i < c->npool; i++)
			if (c->pool[i].cap >= len &&
			    (best == XBUF_KEEP || c->pool[i].cap < c->pool[best].cap))
				best = i;
		if (best < XBUF_KEEP) {
			p = c->pool[best].p;
			*cap = c->pool[best].cap;
			c->pool[best] = c->pool[--c->npool];
			return p;
		}
	}
	p = calloc(1, len);
	*cap = p ? len : 0;
	return p;
}

void xbuf_drain(struct rpcrdma_conn *c)
{
	iw_timer_cancel(&c->ctx->timers, &c->pool_timer);
	while (c->npool)
		free(c->pool[--c->npool].p);
}

/* No kept buffer was used for XBUF_IDLE_MS: give the memory back. */
static void xbuf_idle(struct iw_timer *t, uint64_t now)
{
	xbuf_drain(iw_container_of(t, struct rpcrdma_conn, pool_timer));
}

void xbuf_init(struct rpcrdma_conn *c)
{
	iw_timer_init(&c->pool_timer, xbuf_idle);
}

void xbuf_put(struct rpcrdma_conn *c, void *p, size_t cap)
{
	unsigned small = 0;

	if (!p)
		return;
	if (!c || c->state == XC_CLOSED || cap < XBUF_MIN) {
		free(p);
		return;
	}
	if (c->npool == XBUF_KEEP) {
		/* full: keep the larger ones */
		for (unsigned i = 1; i < XBUF_KEEP; i++)
			if (c->pool[i].cap < c->pool[small].cap)
				small = i;
		if (c->pool[small].cap >= cap) {
			free(p);
			return;
		}
		free(c->pool[small].p);
		c->pool[small] = c->pool[--c->npool];
	}
	c->pool[c->npool++] = (struct xbuf){p, cap};
	xtimer_arm(c->ctx, &c->pool_timer, XBUF_IDLE_MS);
}

void xsend_release_all(struct rpcrdma_conn *c)
{
	for (unsigned i = 0; i < c->nsend; i++)
		xsend_release(&c->sslots[i]);
}

int xsend_post(struct rpcrdma_conn *c, struct xsend *s, const struct rpcrdma_hdr *h,
	       const void *pay, size_t plen, uint32_t inv_rkey, struct iwv_send_wr *pre)
{
	size_t cap = c->ctx->cfg.inline_send;
	struct iwv_sge sge;
	struct iwv_send_wr wr, *bad, *last;
	int n, rc;

	if (!c->qp || c->dying) {
		xsend_release(s);
		return IW_ERPC_CONN;
	}
	n = rpcrdma_hdr_encode(h, s->buf, cap);
	if (n < 0 || (size_t)n + plen > cap) {
		xsend_release(s);
		return n < 0 ? n : IW_ENOSPC;
	}
	if (plen)
		memcpy(s->buf + n, pay, plen);
	sge.addr = (uint64_t)(uintptr_t)s->buf;
	sge.length = (uint32_t)(n + plen);
	sge.lkey = c->smr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uint64_t)(uintptr_t)&s->wr;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IWV_SEND_SIGNALED;
	if (inv_rkey) {
		wr.opcode = IWV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = inv_rkey;
	} else {
		wr.opcode = IWV_WR_SEND;
	}
	if (pre) {
		for (last = pre; last->next; last = last->next)
			;
		last->next = &wr;
	} else {
		pre = &wr;
	}
	rc = iwv_post_send(c->qp, pre, &bad);
	if (rc) {
		/* the Writes before a failed one went out; the Send did not */
		xsend_release(s);
		xconn_fatal(c, "post send");
		return IW_ERPC_CONN;
	}
	c->st.bytes_inline += plen;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Reads                                                                   */
/* ---------------------------------------------------------------------- */

/* One Read of `o` is over (err: 0, or how it failed); the last runs done(). */
static void xreader_put(struct xreader *o, int err)
{
	if (err && !o->err)
		o->err = err;
	if (--o->pending == 0)
		o->done(o);
}

void xread_add(struct rpcrdma_conn *c, struct xreader *owner, void *dst, uint32_t lkey,
	       uint32_t len, uint32_t rkey, uint64_t raddr)
{
	struct xread *rd = calloc(1, sizeof(*rd));

	owner->pending++;
	if (!rd) {
		owner->err = IW_ENOMEM;
		owner->pending--;
		return;
	}
	rd->wr.kind = XWR_READ;
	rd->owner = owner;
	rd->sge.addr = (uint64_t)(uintptr_t)dst;
	rd->sge.length = len;
	rd->sge.lkey = lkey;
	rd->rkey = rkey;
	rd->raddr = raddr;
	iw_list_init(&rd->node);
	iw_list_add_tail(&c->rd_queue, &rd->node);
}

void xread_fail_queued(struct rpcrdma_conn *c)
{
	while (!iw_list_empty(&c->rd_queue)) {
		struct xread *rd = iw_container_of(c->rd_queue.next, struct xread, node);
		struct xreader *o = rd->owner;

		iw_list_del(&rd->node);
		free(rd);
		xreader_put(o, IW_ERPC_CONN);
	}
}

void xread_kick(struct rpcrdma_conn *c)
{
	if (!c->qp || c->dying) {
		xread_fail_queued(c);
		return;
	}
	while (c->rd_out < c->ord && !iw_list_empty(&c->rd_queue)) {
		struct xread *rd = iw_container_of(c->rd_queue.next, struct xread, node);
		struct iwv_send_wr wr, *bad;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)(uintptr_t)&rd->wr;
		wr.sg_list = &rd->sge;
		wr.num_sge = 1;
		wr.opcode = IWV_WR_RDMA_READ;
		wr.send_flags = IWV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = rd->raddr;
		wr.wr.rdma.rkey = rd->rkey;
		if (iwv_post_send(c->qp, &wr, &bad))
			break;
		iw_list_del(&rd->node);
		c->rd_out++;
	}
}

/* ---------------------------------------------------------------------- */
/* Receives                                                                */
/* ---------------------------------------------------------------------- */

int xrecv_post(struct rpcrdma_conn *c, struct xrecv *r)
{
	struct iwv_sge sge = {
		.addr = (uint64_t)(uintptr_t)r->buf,
		.length = c->ctx->cfg.inline_recv,
		.lkey = c->rmr->lkey,
	};
	struct iwv_recv_wr wr = {
		.wr_id = (uint64_t)(uintptr_t)&r->wr, .sg_list = &sge, .num_sge = 1};
	struct iwv_recv_wr *bad;

	return iwv_post_recv(c->qp, &wr, &bad);
}

/* Decode a received message and hand it to the requester or the responder. */
static void xrecv_route(struct rpcrdma_conn *c, struct xrecv *r, const struct iwv_wc *wc)
{
	struct rpcrdma_hdr h;
	uint32_t len = wc->byte_len;
	int rc;

	if (len > c->ctx->cfg.inline_recv)
		len = c->ctx->cfg.inline_recv;
	rc = rpcrdma_hdr_decode(r->buf, len, &h);
	if (rc < 0) {
		if (c->client || rc == IW_ERPC_SHORT) {
			/* RFC 8166 §4.5: a requester discards replies with header errors */
			c->st.discarded++;
			xconn_log(c, "discarded a message of %u octets: %s", len,
				  rpcrdma_errname(rc));
			return;
		}
		switch (rpcrdma_err_action(rc)) {
		case RPCRDMA_REPLY_ERR_VERS:
			xrsp_send_err(c, h.xid, h.vers, ERR_VERS);
			break;
		case RPCRDMA_REPLY_ERR_CHUNK:
			xrsp_send_err(c, h.xid, h.vers, ERR_CHUNK);
			break;
		default:
			c->st.discarded++;
			break;
		}
		return;
	}
	switch (h.proc) {
	case RDMA_ERROR:
		xreq_on_reply(c, r, wc, &h);
		return;
	case RDMA_DONE:
		xrsp_on_done(c, wc, &h);
		return;
	case RDMA_MSG: {
		uint32_t plen = len - h.hdr_len;

		if (plen < 8) {
			if (c->client)
				c->st.discarded++;
			else
				xrsp_send_err(c, h.xid, h.vers, ERR_CHUNK);
			return;
		}
		if (iw_get_be32(r->buf + h.hdr_len + 4) == RPC_MSG_CALL)
			xrsp_on_call(c, r, len, &h, c->client);
		else
			xreq_on_reply(c, r, wc, &h);
		return;
	}
	case RDMA_NOMSG:
		if (c->client)
			xreq_on_reply(c, r, wc, &h);
		else
			xrsp_on_call(c, r, len, &h, false);
		return;
	default:
		c->st.discarded++;
		return;
	}
}

/* ---------------------------------------------------------------------- */
/* Completions                                                             */
/* ---------------------------------------------------------------------- */

static void xwc_dispatch(struct rpcrdma_conn *c, const struct iwv_wc *wc)
{
	struct xwr *w = (struct xwr *)(uintptr_t)wc->wr_id;
	bool ok = wc->status == IWV_WC_SUCCESS;

	if (!ok && wc->status != IWV_WC_WR_FLUSH_ERR)
		xconn_fatal(c, iwv_wc_status_str(wc->status));
	if (!w)
		return; /* RDMA Write */
	switch (w->kind) {
	case XWR_RECV: {
		struct xrecv *r = (struct xrecv *)w;

		if (!ok || c->dying)
			return;
		xrecv_route(c, r, wc);
		if (c->qp && !c->dying && xrecv_post(c, r))
			xconn_fatal(c, "repost receive");
		return;
	}
	case XWR_SEND: {
		struct xsend *s = (struct xsend *)w;

		xsend_release(s);
		return;
	}
	case XWR_READ: {
		struct xread *rd = (struct xread *)w;
		struct xreader *o = rd->owner;

		free(rd);
		if (c->rd_out)
			c->rd_out--;
		xreader_put(o, ok ? 0 : IW_ERPC_RDMA);
		if (!c->dying)
			xread_kick(c);
		return;
	}
	}
}

void xcq_poll(struct rpcrdma_conn *c)
{
	struct iwv_wc wc[16];

	for (int pass = 0; pass < 2 && c->cqh; pass++) {
		struct iwv_cq *cq = c->cqh->cq;
		int n;

		while (c->cqh && (n = iwv_poll_cq(cq, 16, wc)) > 0)
			for (int i = 0; i < n; i++)
				xwc_dispatch(c, &wc[i]);
		if (c->cqh && !c->dying && pass == 0)
			iwv_req_notify_cq(cq, 0);
		if (c->dying)
			break;
	}
}
