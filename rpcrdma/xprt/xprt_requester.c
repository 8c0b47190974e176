/* SPDX-License-Identifier: MIT */
/*
 * xprt_requester.c - the requester side of RPC-over-RDMA: marshalling a call,
 * credits, and rebuilding the reply.
 *
 * Theory of operation.
 *
 * Memory.  Each call gets ONE buffer, registered once for local write and
 * remote read and write, laid out as
 *     [ call copy | Write chunk areas | Reply chunk area | rebuild area ]
 * so every chunk of the call uses the same STag and one Send With
 * Invalidate from the responder releases it all (RFC 8797 §3: we advertise
 * SND_W_INV_OK; RFC 5040 §6.10 Send with Invalidate).  After the reply the
 * STag is deregistered whether or not the peer invalidated it.  The buffer
 * outlives a cancelled or timed-out call until the reply arrives or the
 * connection is gone, so the responder never writes into freed memory and
 * the connection never has to be torn down for it.
 *
 * Marshalling (RFC 8166 §3.5): a call that fits the peer's inline threshold
 * together with its header goes as RDMA_MSG; otherwise the binding's
 * DDP-eligible items are reduced into Read chunks (Position = offset in the
 * unreduced stream, data without XDR padding, §3.4.5); if the reduced call
 * still does not fit it goes as RDMA_NOMSG with one Position-Zero Read chunk
 * (a Long Call, padded, §3.5.3).  Reply resources (§3.4.6, §4.3.3): when
 * the largest possible reply exceeds our inline threshold, one Write chunk
 * per result slot the binding predicts (RFC 8267 §4.2) and, if the rest can
 * still exceed it, a Reply chunk; without a binding, a Reply chunk of the
 * default size.  An unpredictable reply that draws ERR_CHUNK is retried once
 * with a new XID and a Reply chunk of max_msg (RFC 8267 §4.3).
 *
 * Credits (RFC 8166 §3.3.1): one until the first reply, then
 * min(requested, granted); calls beyond the limit wait in FIFO order.  A
 * grant of 0 is a protocol violation treated as 1.  On a server connection
 * the same machinery sends backchannel calls (RFC 8167 §4) with the
 * backchannel credits the client grants in its replies.
 *
 * Replies.  RDMA_MSG payloads and Reply chunk contents are walked by the
 * binding in reduced form and the n-th Write chunk's data is put back at the
 * n-th result slot (RFC 8267 §6.4.1); any mismatch or an unused chunk for a
 * valid item ends the call with IW_ERPC_ULB (RFC 8166 §6.1).  RDMA_NOMSG with
 * a Position-Zero Read chunk is a responder-provided Read chunk
 * (draft-cel-nfsv4-rpcrdma-reliable-reply §4): pull it with RDMA Read, then
 * send RDMA_DONE (with Send With Invalidate of the chunk's STag when the peer
 * accepts it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iw_bytes.h"
#include "xprt_int.h"

#define XRPC_REPLY_HDR_MAX 64 /* RPC reply header incl. a verifier allowance */
#define XHDR_BASE	   28
#define XHDR_READ_SEG	   24
#define XHDR_CHUNK(n)	   (8u + 16u * (n))
#define XHDR_REPLY(n)	   (4u + 16u * (n))

static void xcall_timeout(struct iw_timer *t, uint64_t now);

static void xcall_complete(struct xcall *call, int status)
{
	if (call->cb_done)
		return;
	call->cb_done = true;
	iw_timer_cancel(&call->conn->ctx->timers, &call->tmo);
	call->conn->ctx->ncb++;
	call->cb(call->arg, status, NULL, 0);
}

static void xcall_rp_release(struct xcall *call)
{
	if (call->rp_mr)
		iwv_dereg_mr(call->rp_mr);
	free(call->rp_buf);
	free(call->rp_hdr);
	call->rp_mr = NULL;
	call->rp_buf = NULL;
	call->rp_hdr = NULL;
}

static void xcall_unplan(struct xcall *call)
{
	if (call->mr)
		iwv_dereg_mr(call->mr);
	call->mr = NULL;
	free(call->hdr);
	call->hdr = NULL;
	free(call->red);
	call->red = NULL;
}

void xcall_free(struct xcall *call)
{
	iw_timer_cancel(&call->conn->ctx->timers, &call->tmo);
	iw_list_del(&call->node);
	xcall_unplan(call);
	xcall_rp_release(call);
	xbuf_put(call->conn, call->buf, call->buf_cap);
	free(call);
}

/* Segment size for a chunk of `len` octets: seg_max, but at most 16 segments. */
static uint32_t xcall_seg_size(uint32_t len, uint32_t seg_max)
{
	uint32_t min;

	if (!seg_max || seg_max >= len)
		return len ? len : 1;
	min = (len + RPCRDMA_MAX_CHUNK_SEGS - 1) / RPCRDMA_MAX_CHUNK_SEGS;
	return seg_max > min ? seg_max : min;
}

static uint32_t xcall_nseg(uint32_t len, uint32_t seg_max)
{
	uint32_t s = xcall_seg_size(len, seg_max);

	return len ? (len + s - 1) / s : 1;
}

struct xcall_items {
	unsigned n;
	size_t limit; /* body length */
	struct rpcrdma_item it[RPCRDMA_MAX_READ_CHUNKS];
};

static int xcall_items_fn(void *arg, const struct rpcrdma_item *item)
{
	struct xcall_items *x = arg;

	if (item->valid && item->length > 0 && x->n < RPCRDMA_MAX_READ_CHUNKS &&
	    (uint64_t)item->offset + XPAD4(item->length) <= x->limit)
		x->it[x->n++] = *item;
	return 1;
}

static int xcall_add_segs(struct rpcrdma_hdr *h, int kind, uint32_t pos, const struct xcall *call,
			  uint32_t off, uint32_t len)
{
	uint32_t ss = xcall_seg_size(len, call->opts.seg_max);
	uint32_t done = 0;
	bool first = true;

	do {
		struct rpcrdma_segment seg = {
			.handle = call->mr->rkey,
			.length = len - done < ss ? len - done : ss,
			.offset = (uint64_t)(uintptr_t)(call->buf + off + done),
		};
		int rc;

		if (kind == 0)
			rc = rpcrdma_hdr_add_read(h, first, pos, &seg);
		else if (kind == 1)
			rc = rpcrdma_hdr_add_write(h, first, &seg);
		else
			rc = rpcrdma_hdr_add_reply(h, &seg);
		if (rc < 0)
			return rc;
		done += seg.length;
		first = false;
	} while (done < len);
	return 0;
}

/* Decide inline / Read chunks / Long Call and the reply resources; build the buffer. */
static int xcall_plan(struct rpcrdma_conn *c, struct xcall *call)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	const struct rpcrdma_ulb *ulb = call->ulb;
	unsigned force = call->opts.force;
	uint32_t seg_max = call->opts.seg_max;
	uint32_t isz = c->inline_send, irecv = c->inline_recv;
	uint32_t cap = call->opts.max_reply && call->opts.max_reply < cfg->max_msg
			       ? call->opts.max_reply
			       : cfg->max_msg;
	const uint8_t *msg = call->buf;
	size_t len = call->len;
	struct rpcrdma_reply_plan rp;
	bool have_plan = false, reply = false;
	uint32_t nw = 0, wlen[RPCRDMA_MAX_WRITE_CHUNKS], rlen = 0, reply_hdr = 0;
	struct xcall_items items;
	enum { M_INLINE, M_READ, M_LONG } mode;
	size_t red_len = len, need;
	uint32_t read_hdr = 0;
	struct rpcrdma_hdr *h;
	uint8_t *nb;
	size_t nb_cap;

	memset(&rp, 0, sizeof(rp));
	memset(&items, 0, sizeof(items));
	if (!call->bc && ulb && ulb->reply_plan &&
	    ulb->reply_plan(cfg->ulb_arg, &call->ri, msg + call->ri.body_off,
			    len - call->ri.body_off, &rp) == 0)
		have_plan = true;
	call->unpredictable = have_plan && rp.unpredictable;
	if (call->bc) {
		/* RFC 8167 §5: backchannel messages here are Short only */
	} else if (call->retried) {
		reply = true;
		rlen = cfg->max_msg;
	} else if (have_plan && !rp.unpredictable) {
		uint64_t largest = XRPC_REPLY_HDR_MAX + (uint64_t)rp.max_inline;
		uint32_t nitems = rp.n_items < RPCRDMA_MAX_WRITE_CHUNKS ? rp.n_items
									: RPCRDMA_MAX_WRITE_CHUNKS;

		for (uint32_t i = 0; i < nitems; i++)
			largest += XPAD4(rp.item_max[i]);
		if ((force & RPCRDMA_FORCE_REPLY_CHUNK) || largest + XHDR_BASE > irecv) {
			uint64_t rest = XRPC_REPLY_HDR_MAX + (uint64_t)rp.max_inline;
			uint32_t last = 0;

			for (uint32_t i = 0; i < nitems; i++)
				if (rp.item_max[i])
					last = i + 1;
			if (force & RPCRDMA_FORCE_NO_WRITE)
				last = 0;
			for (uint32_t i = 0; i < last; i++) {
				/* a slot of no data keeps the pairing with an empty chunk */
				wlen[nw++] = rp.item_max[i] < cap ? rp.item_max[i] : cap;
				reply_hdr += XHDR_CHUNK(wlen[i] ? xcall_nseg(wlen[i], seg_max) : 0);
			}
			for (uint32_t i = last; i < rp.n_items && i < RPCRDMA_MAX_WRITE_CHUNKS; i++)
				rest += XPAD4(rp.item_max[i]);
			if ((force & RPCRDMA_FORCE_REPLY_CHUNK) ||
			    rest + XHDR_BASE + reply_hdr > irecv) {
				reply = true;
				rlen = (uint32_t)(rest < cap ? XPAD4(rest) : cap);
			}
		}
	} else {
		uint32_t bound =
			call->opts.max_reply ? call->opts.max_reply : cfg->default_reply_max;

		if (bound > cfg->max_msg)
			bound = cfg->max_msg;
		if ((force & RPCRDMA_FORCE_REPLY_CHUNK) || (uint64_t)bound + XHDR_BASE > irecv) {
			reply = true;
			rlen = (uint32_t)XPAD4(bound);
		}
	}
	if (force & RPCRDMA_FORCE_NO_REPLY)
		reply = false;
	if (reply && rlen == 0)
		rlen = 4;
	{
		uint32_t whdr = 0;

		for (uint32_t i = 0; i < nw; i++)
			whdr += XHDR_CHUNK(wlen[i] ? xcall_nseg(wlen[i], seg_max) : 0);
		reply_hdr = whdr + (reply ? XHDR_REPLY(xcall_nseg(rlen, seg_max)) : 0);
	}

	/* the call */
	mode = M_INLINE;
	if ((force & (RPCRDMA_FORCE_LONG_CALL | RPCRDMA_FORCE_READ_CHUNKS)) ||
	    XHDR_BASE + reply_hdr + len > isz)
		mode = M_LONG;
	if (call->bc) {
		if (XHDR_BASE + len > isz)
			return IW_ERPC_TOOBIG;
		mode = M_INLINE;
	}
	if (mode == M_LONG && !(force & RPCRDMA_FORCE_LONG_CALL) && ulb && ulb->walk_call) {
		items.limit = len - call->ri.body_off;
		if (ulb->walk_call(cfg->ulb_arg, &call->ri, msg + call->ri.body_off, items.limit,
				   xcall_items_fn, &items) < 0)
			items.n = 0;
		for (unsigned i = 0; i < items.n; i++) {
			red_len -= XPAD4(items.it[i].length);
			read_hdr += XHDR_READ_SEG * xcall_nseg(items.it[i].length, seg_max);
		}
		if (items.n && ((force & RPCRDMA_FORCE_READ_CHUNKS) ||
				XHDR_BASE + reply_hdr + read_hdr + red_len <= isz))
			mode = M_READ;
		else if (!items.n && (force & RPCRDMA_FORCE_READ_CHUNKS) &&
			 XHDR_BASE + reply_hdr + len <= isz)
			mode = M_INLINE;
	} else if (mode == M_LONG && (force & RPCRDMA_FORCE_READ_CHUNKS) &&
		   !(force & RPCRDMA_FORCE_LONG_CALL) && XHDR_BASE + reply_hdr + len <= isz) {
		mode = M_INLINE;
	}
	if (mode == M_READ && XHDR_BASE + reply_hdr + read_hdr + red_len > isz)
		mode = M_LONG;
	if (mode == M_LONG)
		read_hdr = XHDR_READ_SEG * xcall_nseg((uint32_t)XPAD4(len), seg_max);
	else if (mode == M_INLINE)
		read_hdr = 0;
	if (XHDR_BASE + reply_hdr + read_hdr > isz)
		return IW_ERPC_TOOBIG;

	/* the buffer */
	need = XPAD4(len);
	for (uint32_t i = 0; i < nw; i++) {
		call->write_off[i] = (uint32_t)need;
		call->write_len[i] = wlen[i];
		need += XPAD4(wlen[i]);
	}
	call->n_write = nw;
	call->has_reply = reply;
	call->reply_off = (uint32_t)need;
	call->reply_len = reply ? rlen : 0;
	need += reply ? XPAD4(rlen) : 0;
	call->rebuild_off = (uint32_t)need;
	call->rebuild_len = 0;
	if (nw) {
		size_t rb = (reply ? rlen : irecv) + 4u * nw;

		for (uint32_t i = 0; i < nw; i++)
			rb += XPAD4(wlen[i]);
		call->rebuild_len = (uint32_t)rb;
		need += rb;
	}
	if (need > (size_t)cfg->max_msg * 4 + 65536)
		return IW_ERPC_TOOBIG;
	/* the call's buffer when it is large enough (a kept one often is), else
	 * a kept buffer of this connection or a new zeroed one; the areas the
	 * peer writes need no clearing (xbuf_get) */
	if (call->buf_cap < need) {
		nb = xbuf_get(c, need, &nb_cap);
		if (!nb)
			return IW_ENOMEM;
		memcpy(nb, call->buf, XPAD4(len)); /* the call and its zero padding */
		xbuf_put(c, call->buf, call->buf_cap);
		call->buf = nb;
		call->buf_cap = nb_cap;
	}
	nb = call->buf;
	msg = nb;
	call->buf_len = need;
	call->mr = iwv_reg_mr(c->pd, call->buf, need,
			      IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ |
				      IWV_ACCESS_REMOTE_WRITE);
	if (!call->mr)
		return IW_ENOMEM;

	h = calloc(1, sizeof(*h));
	if (!h)
		return IW_ENOMEM;
	call->hdr = h;
	rpcrdma_hdr_init(h, call->xid, 0, mode == M_LONG ? RDMA_NOMSG : RDMA_MSG);
	if (mode == M_LONG) {
		if (xcall_add_segs(h, 0, 0, call, 0, (uint32_t)XPAD4(len)))
			return IW_ERPC_TOOBIG;
	} else if (mode == M_READ) {
		size_t pos = 0, o = 0;

		call->red = malloc(red_len ? red_len : 4);
		if (!call->red)
			return IW_ENOMEM;
		for (unsigned i = 0; i < items.n; i++) {
			uint32_t at = call->ri.body_off + items.it[i].offset;

			if (xcall_add_segs(h, 0, at, call, at, items.it[i].length))
				return IW_ERPC_TOOBIG;
			memcpy(call->red + o, msg + pos, at - pos);
			o += at - pos;
			pos = at + XPAD4(items.it[i].length);
		}
		memcpy(call->red + o, msg + pos, len - pos);
		o += len - pos;
		call->red_len = o;
	}
	for (uint32_t i = 0; i < nw; i++) {
		if (!wlen[i]) {
			if (rpcrdma_hdr_add_write(h, true, NULL))
				return IW_ERPC_TOOBIG;
		} else if (xcall_add_segs(h, 1, 0, call, call->write_off[i], wlen[i])) {
			return IW_ERPC_TOOBIG;
		}
	}
	if (reply && xcall_add_segs(h, 2, 0, call, call->reply_off, rlen))
		return IW_ERPC_TOOBIG;
	return 0;
}

static int xcall_send(struct rpcrdma_conn *c, struct xcall *call)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	struct rpcrdma_hdr h = *call->hdr;
	const uint8_t *pay = NULL;
	size_t plen = 0, hs;
	struct xsend *s;
	int rc;

	h.xid = call->xid;
	h.credits = call->bc ? cfg->bc_credits : cfg->credits;
	if (h.proc == RDMA_MSG) {
		pay = call->red ? call->red : call->buf;
		plen = call->red ? call->red_len : call->len;
	}
	hs = rpcrdma_hdr_size(&h);
	if (!hs || hs + plen > c->inline_send)
		return IW_ERPC_TOOBIG;
	s = xsend_get(c);
	if (!s)
		return IW_EAGAIN;
	rc = xsend_post(c, s, &h, pay, plen, 0, NULL);
	if (rc)
		return rc;
	if (call->bc)
		c->st.bc_calls_sent++;
	else
		c->st.calls_sent++;
	if (h.proc == RDMA_NOMSG)
		c->st.msgs_long_call++;
	else
		c->st.msgs_inline++;
	return 0;
}

void xreq_kick(struct rpcrdma_conn *c)
{
	struct iw_list *n = c->calls.next;

	while (n != &c->calls && xconn_ready(c) && c->inflight < c->limit) {
		struct xcall *call = iw_container_of(n, struct xcall, node);
		int rc;

		n = n->next;
		if (call->state != XCS_WAIT)
			continue;
		if (!call->hdr) {
			rc = xcall_plan(c, call);
			if (rc) {
				xcall_unplan(call);
				xcall_complete(call, rc);
				xcall_free(call);
				continue;
			}
		}
		rc = xcall_send(c, call);
		if (rc == IW_EAGAIN)
			break;
		if (rc == IW_ERPC_CONN)
			break;
		if (rc) {
			xcall_complete(call, rc);
			xcall_free(call);
			continue;
		}
		if (call->retransmit)
			c->st.retransmitted++;
		call->retransmit = false;
		call->state = XCS_SENT;
		c->inflight++;
	}
}

static struct xcall *xcall_find_xid(struct rpcrdma_conn *c, uint32_t xid)
{
	for (struct iw_list *n = c->calls.next; n != &c->calls; n = n->next) {
		struct xcall *call = iw_container_of(n, struct xcall, node);

		if (call->xid == xid)
			return call;
	}
	return NULL;
}

int rpcrdma_call(struct rpcrdma_conn *c, const void *msg, size_t len,
		 const struct rpcrdma_call_opts *opts, rpcrdma_reply_fn cb, void *arg, uint64_t *id)
{
	struct iovec iov = {(void *)(uintptr_t)msg, len};

	if (!msg)
		return IW_EINVAL;
	return rpcrdma_callv(c, &iov, 1, opts, cb, arg, id);
}

int rpcrdma_callv(struct rpcrdma_conn *c, const struct iovec *iov, int iovcnt,
		  const struct rpcrdma_call_opts *opts, rpcrdma_reply_fn cb, void *arg,
		  uint64_t *id)
{
	const struct rpcrdma_config *cfg;
	struct xcall *call;
	uint8_t first[4];
	size_t len = 0, got = 0;
	uint32_t xid;

	if (!c || !iov || iovcnt <= 0 || iovcnt > RPCRDMA_CALLV_MAX || !cb)
		return IW_EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return IW_EINVAL;
		/* the XID: the first four octets, wherever the pieces split them */
		for (size_t k = 0; k < iov[i].iov_len && got < 4; k++)
			first[got++] = ((const uint8_t *)iov[i].iov_base)[k];
		len += iov[i].iov_len;
	}
	if (len < 8)
		return IW_EINVAL;
	cfg = &c->ctx->cfg;
	if (c->closing || c->state == XC_CLOSED)
		return IW_ERPC_SHUTDOWN;
	if (len > cfg->max_msg)
		return IW_ERPC_TOOBIG;
	if (!c->client) {
		if (!cfg->bc_credits)
			return IW_EINVAL;
		if (XHDR_BASE + len > c->inline_send)
			return IW_ERPC_TOOBIG;
	}
	xid = iw_get_be32(first);
	for (struct iw_list *n = c->calls.next; n != &c->calls; n = n->next) {
		struct xcall *o = iw_container_of(n, struct xcall, node);

		if (o->orig_xid == xid || o->xid == xid) {
			errno = EEXIST;
			return iw_err_sys(EEXIST);
		}
	}
	call = calloc(1, sizeof(*call));
	if (!call)
		return IW_ENOMEM;
	call->buf = xbuf_get(c, XPAD4(len), &call->buf_cap);
	if (!call->buf) {
		free(call);
		return IW_ENOMEM;
	}
	len = 0;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len)
			memcpy(call->buf + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	memset(call->buf + len, 0, XPAD4(len) - len);
	call->len = len;
	call->conn = c;
	call->xid = call->orig_xid = xid;
	call->cb = cb;
	call->arg = arg;
	call->bc = !c->client;
	if (opts)
		call->opts = *opts;
	iw_timer_init(&call->tmo, xcall_timeout);
	if (rpcrdma_rpc_parse(call->buf, len, &call->ri) == 0 &&
	    call->ri.msg_type == RPC_MSG_CALL && !call->bc && cfg->ulb && cfg->ulb->handles &&
	    cfg->ulb->handles(cfg->ulb_arg, call->ri.prog, call->ri.vers))
		call->ulb = cfg->ulb;
	if (call->ulb && call->ri.body_off > len)
		call->ulb = NULL;
	call->id = c->next_id++;
	call->state = XCS_WAIT;
	iw_list_add_tail(&c->calls, &call->node);
	if (call->opts.timeout_ms)
		xtimer_arm(c->ctx, &call->tmo, call->opts.timeout_ms);
	if (id)
		*id = call->id;
	if (xconn_ready(c) && c->inflight >= c->limit)
		c->st.credit_waits++;
	xreq_kick(c);
	return 0;
}

int rpcrdma_cancel(struct rpcrdma_conn *c, uint64_t id)
{
	for (struct iw_list *n = c->calls.next; n != &c->calls; n = n->next) {
		struct xcall *call = iw_container_of(n, struct xcall, node);

		if (call->id != id)
			continue;
		if (call->cb_done)
			break;
		c->st.cancelled++;
		xcall_complete(call, IW_ERPC_CANCELLED);
		if (call->state == XCS_WAIT)
			xcall_free(call);
		return 0;
	}
	errno = ENOENT;
	return iw_err_sys(ENOENT);
}

static void xcall_timeout(struct iw_timer *t, uint64_t now)
{
	struct xcall *call = iw_container_of(t, struct xcall, tmo);

	xcall_complete(call, IW_ETIMEDOUT);
	if (call->state == XCS_WAIT)
		xcall_free(call);
}

/* Deliver the whole reply (writable: the original XID goes back after a retry). */
static void xcall_deliver(struct xcall *call, uint8_t *data, size_t len)
{
	if (call->cb_done)
		return;
	call->cb_done = true;
	iw_timer_cancel(&call->conn->ctx->timers, &call->tmo);
	if (call->retried && len >= 4)
		iw_put_be32(data, call->orig_xid);
	call->conn->ctx->ncb++;
	call->cb(call->arg, 0, data, len);
}

struct xcall_rebuilder {
	struct xcall *call;
	const uint8_t *src;
	size_t slen, pos, body_off;
	uint8_t *out;
	size_t olen, cap;
	uint32_t n_write;
	uint64_t ret[RPCRDMA_MAX_WRITE_CHUNKS];
	bool used[RPCRDMA_MAX_WRITE_CHUNKS];
};

static int xcall_rebuild_put(struct xcall_rebuilder *x, const void *p, size_t n)
{
	if (n > x->cap - x->olen)
		return IW_ERPC_ULB;
	memcpy(x->out + x->olen, p, n);
	x->olen += n;
	return 0;
}

static int xcall_rebuild_fn(void *arg, const struct rpcrdma_item *item)
{
	struct xcall_rebuilder *x = arg;
	struct xcall *call = x->call;
	unsigned n = item->index;
	size_t at;
	static const uint8_t zero[4];

	if (n >= x->n_write || call->write_len[n] == 0)
		return 1;
	if (!item->valid)
		return x->ret[n] ? IW_ERPC_ULB : 1;
	if (item->length != x->ret[n])
		return IW_ERPC_ULB;
	at = x->body_off + item->offset;
	if (at < x->pos || at > x->slen)
		return IW_ERPC_ULB;
	if (xcall_rebuild_put(x, x->src + x->pos, at - x->pos) ||
	    xcall_rebuild_put(x, call->buf + call->write_off[n], item->length) ||
	    xcall_rebuild_put(x, zero, XPAD4(item->length) - item->length))
		return IW_ERPC_ULB;
	x->pos = at;
	x->used[n] = true;
	return 0;
}

/* Put the Write chunks' data back into src and deliver; IW_ERPC_ULB on any mismatch. */
static int xcall_rebuild(struct rpcrdma_conn *c, struct xcall *call, const struct rpcrdma_hdr *h,
			 uint8_t *src, size_t slen)
{
	struct xcall_rebuilder x;
	struct rpcrdma_rpcinfo ri;
	uint8_t *tmp = NULL;
	int rc;

	memset(&x, 0, sizeof(x));
	if (h->n_write > call->n_write)
		return IW_ERPC_ULB;
	for (uint32_t i = 0; i < h->n_write; i++) {
		x.ret[i] = rpcrdma_chunk_len(h, &h->write[i]);
		if (x.ret[i] > call->write_len[i])
			return IW_ERPC_ULB;
	}
	if (!call->n_write || !call->ulb) {
		xcall_deliver(call, src, slen);
		return 0;
	}
	if (rpcrdma_rpc_parse(src, slen, &ri) || ri.msg_type != RPC_MSG_REPLY ||
	    ri.reply_stat != 0 || ri.accept_stat != 0 || ri.body_off > slen) {
		for (uint32_t i = 0; i < call->n_write; i++)
			if (x.ret[i])
				return IW_ERPC_ULB;
		xcall_deliver(call, src, slen);
		return 0;
	}
	x.call = call;
	x.src = src;
	x.slen = slen;
	x.body_off = ri.body_off;
	x.n_write = call->n_write;
	x.cap = slen;
	for (uint32_t i = 0; i < call->n_write; i++)
		x.cap += XPAD4(x.ret[i]);
	if (x.cap <= call->rebuild_len) {
		x.out = call->buf + call->rebuild_off;
	} else {
		tmp = malloc(x.cap);
		if (!tmp)
			return IW_ENOMEM;
		x.out = tmp;
	}
	rc = call->ulb->walk_reply(c->ctx->cfg.ulb_arg, &call->ri, src + ri.body_off,
				   slen - ri.body_off, xcall_rebuild_fn, &x);
	if (rc >= 0)
		rc = xcall_rebuild_put(&x, src + x.pos, slen - x.pos);
	for (uint32_t i = 0; rc >= 0 && i < call->n_write; i++)
		if (x.ret[i] && !x.used[i])
			rc = IW_ERPC_ULB;
	if (rc < 0) {
		free(tmp);
		return IW_ERPC_ULB;
	}
	for (uint32_t i = 0; i < call->n_write; i++)
		c->st.bytes_write_chunk += x.ret[i];
	xcall_deliver(call, x.out, x.olen);
	free(tmp);
	return 0;
}

static void xreq_send_done(struct rpcrdma_conn *c, uint32_t xid, uint32_t handle)
{
	struct rpcrdma_hdr h;
	struct xsend *s = xsend_get(c);

	if (!s)
		return;
	rpcrdma_hdr_init(&h, xid, c->client ? c->ctx->cfg.credits : c->ctx->cfg.bc_credits,
			 RDMA_DONE);
	xsend_post(c, s, &h, NULL, 0, c->send_inv ? handle : 0, NULL);
}

static void xcall_rprc_done(struct xreader *rd)
{
	struct xcall *call = iw_container_of(rd, struct xcall, rd);
	struct rpcrdma_conn *c = call->conn;
	int rc;

	if (c->dying) {
		/* the connection is going: the call goes again after a reconnect */
		xcall_rp_release(call);
		call->state = XCS_SENT;
		return;
	}
	xreq_send_done(c, call->rp_xid, call->rp_handle);
	if (rd->err) {
		xcall_complete(call, IW_ERPC_RDMA);
		xcall_free(call);
		xreq_kick(c);
		return;
	}
	c->st.msgs_rprc++;
	c->st.bytes_rprc += call->rp_len;
	rc = xcall_rebuild(c, call, call->rp_hdr, call->rp_buf, call->rp_len);
	if (rc)
		xcall_complete(call, rc);
	xcall_free(call);
	xreq_kick(c);
}

static int xcall_rprc_start(struct rpcrdma_conn *c, struct xcall *call, const struct rpcrdma_hdr *h)
{
	const struct rpcrdma_chunk *ch = &h->read[0];
	uint64_t total = rpcrdma_chunk_len(h, ch);
	uint32_t off = 0;

	if (total == 0 || total > c->ctx->cfg.max_msg)
		return IW_ERPC_TOOBIG;
	call->rp_buf = malloc(total);
	call->rp_hdr = malloc(sizeof(*h));
	if (!call->rp_buf || !call->rp_hdr)
		return IW_ENOMEM;
	*call->rp_hdr = *h;
	call->rp_mr = iwv_reg_mr(c->pd, call->rp_buf, total, IWV_ACCESS_LOCAL_WRITE);
	if (!call->rp_mr)
		return IW_ENOMEM;
	call->rp_len = (uint32_t)total;
	call->rp_xid = h->xid;
	call->rp_handle = h->segs[ch->first].handle;
	call->rd.pending = 0;
	call->rd.err = 0;
	call->rd.done = xcall_rprc_done;
	call->state = XCS_READING;
	for (uint16_t i = 0; i < ch->nseg; i++) {
		const struct rpcrdma_segment *sg = &h->segs[ch->first + i];

		xread_add(c, &call->rd, call->rp_buf + off, call->rp_mr->lkey, sg->length,
			  sg->handle, sg->offset);
		off += sg->length;
	}
	xread_kick(c);
	return 0;
}

void xreq_on_reply(struct rpcrdma_conn *c, struct xrecv *r, const struct iwv_wc *wc,
		   const struct rpcrdma_hdr *h)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	struct xcall *call = xcall_find_xid(c, h->xid);
	bool rprc_reply = h->proc == RDMA_NOMSG && h->n_read == 1 && h->read[0].position == 0;
	uint32_t len = wc->byte_len > cfg->inline_recv ? cfg->inline_recv : wc->byte_len;
	uint32_t g, lim;
	int rc = 0;

	if (!call || call->state != XCS_SENT) {
		c->st.discarded++;
		if (rprc_reply && c->rprc)
			xreq_send_done(c, h->xid, h->segs[h->read[0].first].handle);
		return;
	}
	g = h->credits;
	if (g == 0) {
		if (!c->grant0_logged)
			xconn_log(c, "peer granted 0 credits: using 1");
		c->grant0_logged = true;
		g = 1;
	}
	lim = c->client ? cfg->credits : cfg->bc_credits;
	c->limit = g < lim ? g : lim;
	if (c->limit == 0)
		c->limit = 1;
	if (c->inflight)
		c->inflight--;
	c->st.replies_received++;
	if ((wc->wc_flags & IWV_WC_WITH_INV) && call->mr && wc->invalidated_rkey == call->mr->rkey)
		c->st.send_inv++;
	if (call->cb_done) {
		if (rprc_reply && c->rprc)
			xreq_send_done(c, h->xid, h->segs[h->read[0].first].handle);
		xcall_free(call);
		xreq_kick(c);
		return;
	}
	switch (h->proc) {
	case RDMA_ERROR:
		c->st.err_received++;
		if (h->err == ERR_CHUNK && call->unpredictable && !call->retried) {
			uint32_t nx = call->xid;

			do
				nx = nx * 1103515245u + 12345u;
			while (xcall_find_xid(c, nx) || nx == call->orig_xid);
			xcall_unplan(call);
			call->retried = true;
			call->xid = nx;
			iw_put_be32(call->buf, nx);
			call->state = XCS_WAIT;
			/* to the head of the queue: it was next in line already */
			iw_list_del(&call->node);
			call->node.next = c->calls.next;
			call->node.prev = &c->calls;
			c->calls.next->prev = &call->node;
			c->calls.next = &call->node;
			xreq_kick(c);
			return;
		}
		rc = h->err == ERR_VERS ? IW_ERPC_REMOTE_VERS : IW_ERPC_REMOTE_CHUNK;
		break;
	case RDMA_MSG: {
		uint8_t *p = r->buf + h->hdr_len;
		uint32_t plen = len - h->hdr_len;

		c->st.msgs_inline++;
		c->st.bytes_inline += plen;
		if (plen < 4 || iw_get_be32(p) != call->xid) {
			rc = IW_ERPC_ULB;
			break;
		}
		rc = xcall_rebuild(c, call, h, p, plen);
		break;
	}
	case RDMA_NOMSG:
		if (h->has_reply && call->has_reply) {
			uint64_t l = rpcrdma_chunk_len(h, &h->reply);

			if (l > call->reply_len || l < 4) {
				rc = IW_ERPC_ULB;
				break;
			}
			c->st.msgs_long_reply++;
			c->st.bytes_reply_chunk += l;
			rc = xcall_rebuild(c, call, h, call->buf + call->reply_off, (size_t)l);
		} else if (rprc_reply && c->rprc) {
			rc = xcall_rprc_start(c, call, h);
			if (rc == 0)
				return;
			xcall_rp_release(call);
			xreq_send_done(c, h->xid, h->segs[h->read[0].first].handle);
		} else {
			rc = IW_ERPC_ULB;
		}
		break;
	default:
		rc = IW_ERPC_ULB;
		break;
	}
	if (rc)
		xcall_complete(call, rc);
	xcall_free(call);
	xreq_kick(c);
}

void xreq_conn_lost(struct rpcrdma_conn *c, int status, bool final)
{
	struct iw_list *n = c->calls.next;

	while (n != &c->calls) {
		struct xcall *call = iw_container_of(n, struct xcall, node);

		n = n->next;
		if (final || c->id) {
			xcall_complete(call, status);
			/* a connected QP may still touch the buffer: freed at teardown */
			if (!c->id)
				xcall_free(call);
			continue;
		}
		if (call->cb_done) {
			xcall_free(call);
			continue;
		}
		if (call->state != XCS_WAIT) {
			xcall_rp_release(call);
			call->state = XCS_WAIT;
			call->retransmit = true;
		}
	}
	c->inflight = 0;
	c->limit = 1;
}
