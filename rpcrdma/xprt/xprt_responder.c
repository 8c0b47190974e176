/* SPDX-License-Identifier: MIT */
/*
 * xprt_responder.c - the responder side of RPC-over-RDMA: pulling Read
 * chunks, handing calls up, sending replies, RDMA_ERROR, and
 * responder-provided Read chunks.
 *
 * Theory of operation.
 *
 * A received call is checked as RFC 8166 §4.5 says: header errors draw
 * ERR_VERS (low = high = 1) or ERR_CHUNK echoing rdma_xid and rdma_vers, or
 * are discarded; RDMA_MSGP draws ERR_CHUNK (§4.6.1); an RPC XID that
 * differs from rdma_xid draws ERR_CHUNK.  Read chunks (§3.4.5) are bounded
 * by max_msg, their Positions must fall within the reduced payload, and they
 * are pulled with RDMA Read straight into the request buffer at their place
 * in the rebuilt call (never more Reads outstanding than the QP's ORD, the
 * rest wait), each followed by zero XDR padding.  When the binding handles
 * the program, every non-zero Position must be a DDP-eligible item of the
 * rebuilt call (§6.1, RFC 8267 §4), else ERR_CHUNK.
 *
 * A reply goes in three steps, each a function: reduce, plan, post.  It is
 * copied and walked by the binding (unreduced), and the result items that
 * have a non-empty Write chunk are left out of the reduced copy; each is RDMA
 * Written into its chunk over its segments, and every Write chunk is
 * returned with the same segment count and lengths set to the octets written
 * (§3.4.6, §4.3.2).  The reduced reply then goes inline (RDMA_MSG) if it
 * fits the peer's receive size, else into the Reply chunk (RDMA_NOMSG,
 * padding included, §4.3.3), else, when both sides support it, as a
 * responder-provided Read chunk that stays registered until RDMA_DONE, a
 * timeout or the connection's end (draft-cel-nfsv4-rpcrdma-reliable-reply
 * §4); else ERR_CHUNK.  The RDMA Writes precede the Send on the same QP, and
 * iWARP places them first (RFC 5040 §5.5).  Send With Invalidate is used when
 * the requester accepts it and every handle of its call was the same STag
 * (RFC 8797 §3).  A backchannel reply is one Send.
 *
 * Credits granted: min(requested, cfg.credits), never 0 (§3.3.1); the
 * receives for that many calls are always posted.  Backchannel replies from a
 * client carry its backchannel credits (RFC 8167 §4) and are Short only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iw_bytes.h"
#include "xprt_int.h"

static void xrsp_expo_free(struct xrsp_expo *e)
{
	iw_timer_cancel(&e->conn->ctx->timers, &e->tmo);
	iw_list_del(&e->node);
	if (e->mr)
		iwv_dereg_mr(e->mr);
	xbuf_put(e->conn, e->buf, e->buf_cap);
	free(e);
}

static void xrsp_req_free(struct rpcrdma_req *req)
{
	iw_list_del(&req->node);
	if (req->mr)
		iwv_dereg_mr(req->mr);
	free(req->h);
	xbuf_put(req->conn, req->msg, req->msg_cap);
	free(req);
}

uint32_t xrsp_grant(const struct rpcrdma_conn *c)
{
	uint32_t g = c->peer_credits;

	if (g > c->ctx->cfg.credits)
		g = c->ctx->cfg.credits;
	return g ? g : 1;
}

static uint32_t xrsp_grant_for(const struct rpcrdma_conn *c, bool bc)
{
	if (bc)
		return c->ctx->cfg.bc_credits ? c->ctx->cfg.bc_credits : 1;
	return xrsp_grant(c);
}

void xrsp_send_err(struct rpcrdma_conn *c, uint32_t xid, uint32_t vers, uint32_t err)
{
	struct rpcrdma_hdr h;
	struct xsend *s;

	if (!c->qp || c->dying)
		return;
	s = xsend_get(c);
	if (!s)
		return;
	rpcrdma_hdr_init(&h, xid, xrsp_grant_for(c, c->client), RDMA_ERROR);
	h.vers = vers;
	h.err = err;
	if (err == ERR_VERS)
		h.vers_low = h.vers_high = RPCRDMA_VERSION;
	if (xsend_post(c, s, &h, NULL, 0, 0, NULL) == 0)
		c->st.err_sent++;
	xconn_log(c, "xid 0x%08x: sent RDMA_ERROR %s", xid,
		  err == ERR_VERS ? "ERR_VERS" : "ERR_CHUNK");
}

struct xrsp_poscheck {
	const struct rpcrdma_hdr *h;
	uint32_t body_off;
	bool ok[RPCRDMA_MAX_READ_CHUNKS];
};

static int xrsp_poscheck_fn(void *arg, const struct rpcrdma_item *item)
{
	struct xrsp_poscheck *x = arg;

	if (!item->valid)
		return 1;
	for (uint16_t i = 0; i < x->h->n_read; i++)
		if (x->h->read[i].position == (uint64_t)x->body_off + item->offset)
			x->ok[i] = true;
	return 1;
}

static void xrsp_deliver(struct rpcrdma_conn *c, struct rpcrdma_req *req)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	const struct rpcrdma_hdr *h = req->h;
	bool ri_ok;

	if (req->len < 8 || iw_get_be32(req->msg) != req->xid) {
		xrsp_send_err(c, req->xid, req->vers, ERR_CHUNK);
		xrsp_req_free(req);
		return;
	}
	ri_ok = rpcrdma_rpc_parse(req->msg, req->len, &req->ri) == 0 &&
		req->ri.msg_type == RPC_MSG_CALL && req->ri.body_off <= req->len;
	if (!ri_ok)
		memset(&req->ri, 0, sizeof(req->ri));
	if (ri_ok && cfg->ulb && cfg->ulb->handles &&
	    cfg->ulb->handles(cfg->ulb_arg, req->ri.prog, req->ri.vers) && h->n_read &&
	    !(h->read[0].position == 0 && h->proc == RDMA_NOMSG)) {
		struct xrsp_poscheck x;
		int rc;

		memset(&x, 0, sizeof(x));
		x.h = h;
		x.body_off = req->ri.body_off;
		rc = cfg->ulb->walk_call(cfg->ulb_arg, &req->ri, req->msg + req->ri.body_off,
					 req->len - req->ri.body_off, xrsp_poscheck_fn, &x);
		for (uint16_t i = 0; i < h->n_read; i++)
			if (rc < 0 || !x.ok[i]) {
				xconn_log(c, "xid 0x%08x: Read chunk at %u is not DDP-eligible",
					  req->xid, h->read[i].position);
				xrsp_send_err(c, req->xid, req->vers, ERR_CHUNK);
				xrsp_req_free(req);
				return;
			}
	}
	if (!c->on_call) {
		xrsp_send_err(c, req->xid, req->vers, ERR_CHUNK);
		xrsp_req_free(req);
		return;
	}
	req->delivered = true;
	if (req->bc)
		c->st.bc_calls_received++;
	else
		c->st.calls_received++;
	c->ctx->ncb++;
	c->on_call(c->arg, req, req->msg, req->len);
}

static void xrsp_reads_done(struct xreader *rd)
{
	struct rpcrdma_req *req = iw_container_of(rd, struct rpcrdma_req, rd);
	struct rpcrdma_conn *c = req->conn;

	if (req->mr) {
		iwv_dereg_mr(req->mr);
		req->mr = NULL;
	}
	if (!c || c->dying || rd->err) {
		/* an RDMA Read failure is fatal to the connection (RFC 8166 §4.5) */
		xrsp_req_free(req);
		return;
	}
	xrsp_deliver(c, req);
}

void xrsp_on_call(struct rpcrdma_conn *c, struct xrecv *r, uint32_t len,
		  const struct rpcrdma_hdr *h, bool bc)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	struct rpcrdma_req *req;
	uint64_t total = 0, size;
	uint32_t plen = 0;
	const uint8_t *p = NULL;

	if (c->closing) {
		c->st.discarded++; /* rpcrdma_close: no more calls to the upper layer */
		return;
	}
	if (bc && (!cfg->bc_credits || h->n_read || h->n_write || h->has_reply)) {
		/* RFC 8167 §5: no chunks on our backchannel */
		xrsp_send_err(c, h->xid, h->vers, ERR_CHUNK);
		return;
	}
	if (!bc)
		c->peer_credits = h->credits;
	for (uint16_t i = 0; i < h->n_read; i++)
		total += rpcrdma_chunk_len(h, &h->read[i]);
	if (total > cfg->max_msg) {
		xrsp_send_err(c, h->xid, h->vers, ERR_CHUNK);
		return;
	}
	if (h->proc == RDMA_MSG) {
		p = r->buf + h->hdr_len;
		plen = len - h->hdr_len;
		uint64_t shift = 0, last = 0;

		size = plen;
		/* every Position must fall inside the reduced payload, in order (§3.4.5) */
		for (uint16_t i = 0; i < h->n_read; i++) {
			uint64_t cl = rpcrdma_chunk_len(h, &h->read[i]);
			uint64_t pos = h->read[i].position;

			if (pos == 0 || pos < shift || pos - shift > plen || pos - shift < last) {
				xrsp_send_err(c, h->xid, h->vers, ERR_CHUNK);
				return;
			}
			last = pos - shift;
			shift += XPAD4(cl);
			size += XPAD4(cl);
		}
		if (size > cfg->max_msg) {
			xrsp_send_err(c, h->xid, h->vers, ERR_CHUNK);
			return;
		}
	} else if (h->proc == RDMA_NOMSG && h->n_read == 1 && h->read[0].position == 0 &&
		   total >= 8) {
		size = XPAD4(total); /* a Long Call is XDR-padded (RFC 8166 §3.5.3) */
	} else {
		xrsp_send_err(c, h->xid, h->vers, ERR_CHUNK);
		return;
	}
	req = calloc(1, sizeof(*req));
	if (!req)
		return;
	iw_list_init(&req->node);
	req->conn = c;
	req->bc = bc;
	req->xid = h->xid;
	req->vers = h->vers;
	req->credits = h->credits;
	req->h = malloc(sizeof(*h));
	/* (a kept buffer of this connection holds earlier octets: every octet
	 * of the call is written below, the XDR padding of chunks too) */
	req->msg = xbuf_get(c, size, &req->msg_cap);
	if (!req->h || !req->msg) {
		xrsp_req_free(req);
		return;
	}
	*req->h = *h;
	req->len = size;
	iw_list_add_tail(&c->reqs, &req->node);
	if (h->proc == RDMA_MSG)
		c->st.msgs_inline++;
	else
		c->st.msgs_long_call++;
	c->st.bytes_inline += plen;
	if (!h->n_read) {
		memcpy(req->msg, p, plen);
		xrsp_deliver(c, req);
		return;
	}
	req->mr = iwv_reg_mr(c->pd, req->msg, size ? size : 4, IWV_ACCESS_LOCAL_WRITE);
	if (!req->mr) {
		xrsp_req_free(req);
		return;
	}
	req->rd.done = xrsp_reads_done;
	{
		/* copy the reduced pieces; leave each chunk's place (and padding) open */
		uint64_t in = 0, out = 0, shift = 0;

		for (uint16_t i = 0; i < h->n_read; i++) {
			const struct rpcrdma_chunk *ch = &h->read[i];
			uint64_t cl = rpcrdma_chunk_len(h, ch), at;

			if (h->proc == RDMA_NOMSG) {
				at = 0;
			} else {
				at = ch->position - shift; /* checked above */
				memcpy(req->msg + out, p + in, at - in);
				out += at - in;
				in = at;
			}
			for (uint16_t k = 0; k < ch->nseg; k++) {
				const struct rpcrdma_segment *sg = &h->segs[ch->first + k];

				if (sg->length)
					xread_add(c, &req->rd, req->msg + out, req->mr->lkey,
						  sg->length, sg->handle, sg->offset);
				out += sg->length;
			}
			c->st.bytes_read_chunk += cl;
			memset(req->msg + out, 0, XPAD4(cl) - cl);
			out += XPAD4(cl) - cl;
			shift += XPAD4(cl);
		}
		if (h->proc == RDMA_MSG) {
			memcpy(req->msg + out, p + in, plen - in);
			out += plen - in;
		}
		req->len = out;
	}
	if (req->rd.pending == 0) {
		xrsp_reads_done(&req->rd);
		return;
	}
	xread_kick(c);
}

void xrsp_on_done(struct rpcrdma_conn *c, const struct iwv_wc *wc, const struct rpcrdma_hdr *h)
{
	if (!c->rprc) {
		c->st.discarded++; /* RFC 8166 §4.6.2 */
		return;
	}
	for (struct iw_list *n = c->expos.next; n != &c->expos; n = n->next) {
		struct xrsp_expo *e = iw_container_of(n, struct xrsp_expo, node);

		if (e->xid == h->xid) {
			xconn_log(c, "xid 0x%08x: RDMA_DONE%s", h->xid,
				  (wc->wc_flags & IWV_WC_WITH_INV) ? " with invalidate" : "");
			xrsp_expo_free(e);
			return;
		}
	}
}

static void xrsp_expo_timeout(struct iw_timer *t, uint64_t now)
{
	struct xrsp_expo *e = iw_container_of(t, struct xrsp_expo, tmo);

	xconn_log(e->conn, "xid 0x%08x: responder-provided Read chunk not claimed, invalidated",
		  e->xid);
	xrsp_expo_free(e);
}

void xrsp_conn_lost(struct rpcrdma_conn *c)
{
	while (!iw_list_empty(&c->reqs)) {
		struct rpcrdma_req *req = iw_container_of(c->reqs.next, struct rpcrdma_req, node);

		iw_list_del(&req->node);
		req->conn = NULL;
		/* its buffer took Read chunks for this connection only */
		if (req->mr) {
			iwv_dereg_mr(req->mr);
			req->mr = NULL;
		}
	}
	while (!iw_list_empty(&c->expos))
		xrsp_expo_free(iw_container_of(c->expos.next, struct xrsp_expo, node));
}

struct rpcrdma_conn *rpcrdma_req_conn(const struct rpcrdma_req *req)
{
	return req ? req->conn : NULL;
}

void rpcrdma_req_drop(struct rpcrdma_req *req)
{
	if (!req)
		return;
	if (req->conn && xconn_ready(req->conn))
		xrsp_send_err(req->conn, req->xid, req->vers, ERR_CHUNK);
	xrsp_req_free(req);
}

struct xrsp_move {
	const struct rpcrdma_hdr *h;
	uint32_t body_off;
	int err;
	uint32_t at[RPCRDMA_MAX_WRITE_CHUNKS], len[RPCRDMA_MAX_WRITE_CHUNKS];
	bool moved[RPCRDMA_MAX_WRITE_CHUNKS];
	size_t limit;
};

static int xrsp_move_fn(void *arg, const struct rpcrdma_item *item)
{
	struct xrsp_move *x = arg;
	unsigned n = item->index;
	const struct rpcrdma_chunk *ch;

	if (!item->valid || n >= x->h->n_write)
		return 1;
	ch = &x->h->write[n];
	if (ch->nseg == 0)
		return 1; /* an empty Write chunk: the item stays inline (§3.4.6) */
	if (item->length > rpcrdma_chunk_len(x->h, ch))
		return IW_ERPC_TOOBIG;
	if ((uint64_t)x->body_off + item->offset + XPAD4(item->length) > x->limit)
		return IW_ERPC_ULB;
	x->at[n] = x->body_off + item->offset;
	x->len[n] = item->length;
	x->moved[n] = true;
	return 1;
}

/* RDMA Writes of src[0..len) over the segments of chunk ch of h, appended to
 * wrs/sges (*nwr so far); the chunk goes into rh with the octets written, as
 * a Write chunk or (reply) as the Reply chunk.  IW_ERPC_TOOBIG when len
 * exceeds the chunk. */
static int xrsp_write_chunk(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *ch,
			    const uint8_t *src, uint32_t len, uint32_t lkey,
			    struct iwv_send_wr *wrs, struct iwv_sge *sges, int *nwr,
			    struct rpcrdma_hdr *rh, bool reply)
{
	uint32_t done = 0;

	for (uint16_t k = 0; k < ch->nseg; k++) {
		struct rpcrdma_segment seg = h->segs[ch->first + k];
		uint32_t n = len - done < seg.length ? len - done : seg.length;
		int rc;

		if (n) {
			struct iwv_send_wr *w = &wrs[*nwr];
			struct iwv_sge *s = &sges[*nwr];

			s->addr = (uint64_t)(uintptr_t)(src + done);
			s->length = n;
			s->lkey = lkey;
			memset(w, 0, sizeof(*w));
			w->sg_list = s;
			w->num_sge = 1;
			w->opcode = IWV_WR_RDMA_WRITE;
			w->send_flags = IWV_SEND_SIGNALED;
			w->wr.rdma.remote_addr = seg.offset;
			w->wr.rdma.rkey = seg.handle;
			if (*nwr)
				wrs[*nwr - 1].next = w;
			(*nwr)++;
		}
		done += n;
		seg.length = n;
		rc = reply ? rpcrdma_hdr_add_reply(rh, &seg)
			   : rpcrdma_hdr_add_write(rh, k == 0, &seg);
		if (rc < 0)
			return rc;
	}
	return done == len ? 0 : IW_ERPC_TOOBIG;
}

/* A reply that cannot go (rc IW_ERPC_TOOBIG: it fits nowhere; IW_ENOMEM):
 * the requester learns it from ERR_CHUNK. */
static void xrsp_reply_refuse(struct rpcrdma_conn *c, const struct rpcrdma_req *req, size_t len,
			      int rc)
{
	if (rc == IW_ERPC_TOOBIG)
		xconn_log(c, "xid 0x%08x: reply of %zu octets fits nowhere", req->xid, len);
	xrsp_send_err(c, req->xid, req->vers, ERR_CHUNK);
}

/* How a reply goes (chosen by xrsp_reply_plan). */
enum xrsp_form {
	XRSP_INLINE,	  /* RDMA_MSG, the reduced reply in the Send */
	XRSP_REPLY_CHUNK, /* RDMA_NOMSG, the reduced reply written into the Reply chunk */
	XRSP_RPRC,	  /* RDMA_NOMSG, a responder-provided Read chunk */
};

/* A reply on its way out: built by xrsp_reply_reduce and xrsp_reply_plan,
 * sent by xrsp_reply_post; xrsp_reply_clear frees what it still owns. */
struct xrsp_reply {
	/* reduce */
	uint8_t *mem;	/* [ full copy | reduced copy ], XPAD4(len) each, or NULL */
	size_t mem_cap; /* an xbuf */
	uint8_t *full, *red;
	size_t len, rlen;    /* of the reply, of the reduced reply */
	struct xrsp_move mv; /* the result items that go into Write chunks */
	/* plan */
	struct iwv_mr *mr; /* mem, one registration, or NULL */
	struct rpcrdma_hdr rh;
	struct iwv_send_wr *wrs; /* the RDMA Writes that go before the Send */
	struct iwv_sge *sges;
	int nwr;
	enum xrsp_form form;
	struct xrsp_expo *expo; /* XRSP_RPRC: the exposure, armed once sent */
	uint32_t inv;		/* Send With Invalidate of this STag, or 0 */
	uint64_t wbytes;	/* octets written into Write chunks */
};

/* Reduce: copy reply[0..len) into x->mem and, when the call provided Write
 * chunks and the binding handles its program, walk the reply (unreduced) for
 * the result items that go into them (x->mv); the reduced reply at x->red
 * leaves out their data and XDR padding (RFC 8166 §3.4.6).  A reply the
 * binding cannot walk stays whole.  Returns 0, IW_ENOMEM, or IW_ERPC_TOOBIG
 * when an item is longer than its Write chunk. */
static int xrsp_reply_reduce(struct rpcrdma_conn *c, const struct rpcrdma_req *req,
			     struct xrsp_reply *x, const void *reply, size_t len)
{
	const struct rpcrdma_config *cfg = &c->ctx->cfg;
	const struct rpcrdma_hdr *hc = req->h;
	struct rpcrdma_rpcinfo ri;
	size_t in = 0;
	int rc;

	/* (a kept buffer of this connection holds earlier octets: the padding
	 * of both copies is cleared here and below) */
	x->mem = xbuf_get(c, 2 * XPAD4(len), &x->mem_cap);
	if (!x->mem)
		return IW_ENOMEM;
	x->full = x->mem;
	x->red = x->mem + XPAD4(len);
	x->len = len;
	memcpy(x->full, reply, len);
	memset(x->full + len, 0, XPAD4(len) - len);

	x->mv.h = hc;
	x->mv.limit = XPAD4(len);
	if (hc->n_write && cfg->ulb && req->ri.msg_type == RPC_MSG_CALL && cfg->ulb->handles &&
	    cfg->ulb->handles(cfg->ulb_arg, req->ri.prog, req->ri.vers) &&
	    rpcrdma_rpc_parse(x->full, len, &ri) == 0 && ri.msg_type == RPC_MSG_REPLY &&
	    ri.reply_stat == 0 && ri.accept_stat == 0 && ri.body_off <= len) {
		x->mv.body_off = ri.body_off;
		rc = cfg->ulb->walk_reply(cfg->ulb_arg, &req->ri, x->full + ri.body_off,
					  len - ri.body_off, xrsp_move_fn, &x->mv);
		if (rc == IW_ERPC_TOOBIG)
			return rc;
		if (rc < 0)
			memset(x->mv.moved, 0, sizeof(x->mv.moved));
	}
	/* the reduced reply: moved items' data and padding left out */
	x->rlen = 0;
	for (uint16_t i = 0; i < hc->n_write && i < RPCRDMA_MAX_WRITE_CHUNKS; i++) {
		if (!x->mv.moved[i] || x->mv.at[i] < in)
			continue;
		memcpy(x->red + x->rlen, x->full + in, x->mv.at[i] - in);
		x->rlen += x->mv.at[i] - in;
		in = x->mv.at[i] + XPAD4(x->mv.len[i]);
	}
	memcpy(x->red + x->rlen, x->full + in, len - in);
	x->rlen += len - in;
	memset(x->red + x->rlen, 0, XPAD4(x->rlen) - x->rlen);
	return 0;
}

/* Plan: register x->mem, chain the RDMA Writes of the moved items into the
 * call's Write chunks (each returned with the octets written, §4.3.2; an
 * empty one stays empty) and choose the form: inline if the header and the
 * reduced reply fit the peer's receive size, else the Reply chunk if the call
 * provided one large enough (padding included, §4.3.3), else a
 * responder-provided Read chunk when both sides support it (x->expo).
 * Fills x->rh, x->wrs, x->form and x->inv (when the requester accepts Send
 * With Invalidate and its call used one STag, RFC 8797 §3).  Returns 0,
 * IW_ENOMEM, or IW_ERPC_TOOBIG when the reply fits no form. */
static int xrsp_reply_plan(struct rpcrdma_conn *c, const struct rpcrdma_req *req,
			   struct xrsp_reply *x)
{
	const struct rpcrdma_hdr *hc = req->h;
	const struct xrsp_move *mv = &x->mv;
	size_t hs;
	int rc;

	rpcrdma_hdr_init(&x->rh, req->xid, xrsp_grant_for(c, req->bc), RDMA_MSG);
	x->mr = iwv_reg_mr(c->pd, x->mem, 2 * XPAD4(x->len),
			   IWV_ACCESS_LOCAL_WRITE | (c->rprc ? IWV_ACCESS_REMOTE_READ : 0));
	if (!x->mr)
		return IW_ENOMEM;
	x->wrs = calloc(RPCRDMA_MAX_HDR_SEGS + 1, sizeof(*x->wrs));
	x->sges = calloc(RPCRDMA_MAX_HDR_SEGS + 1, sizeof(*x->sges));
	if (!x->wrs || !x->sges)
		return IW_ENOMEM;
	for (uint16_t i = 0; i < hc->n_write; i++) {
		const struct rpcrdma_chunk *ch = &hc->write[i];

		if (ch->nseg == 0) {
			rpcrdma_hdr_add_write(&x->rh, true, NULL);
			continue;
		}
		rc = xrsp_write_chunk(hc, ch, x->full + (mv->moved[i] ? mv->at[i] : 0),
				      mv->moved[i] ? mv->len[i] : 0, x->mr->lkey, x->wrs, x->sges,
				      &x->nwr, &x->rh, false);
		if (rc < 0)
			return IW_ERPC_TOOBIG;
		x->wbytes += mv->moved[i] ? mv->len[i] : 0;
	}
	hs = rpcrdma_hdr_size(&x->rh);
	if (hs && hs + x->rlen <= c->inline_send) {
		x->form = XRSP_INLINE;
	} else if (hc->has_reply && XPAD4(x->rlen) <= rpcrdma_chunk_len(hc, &hc->reply)) {
		x->form = XRSP_REPLY_CHUNK;
		x->rh.proc = RDMA_NOMSG;
		rc = xrsp_write_chunk(hc, &hc->reply, x->red, (uint32_t)XPAD4(x->rlen), x->mr->lkey,
				      x->wrs, x->sges, &x->nwr, &x->rh, true);
		if (rc < 0)
			return IW_ERPC_TOOBIG;
	} else if (c->rprc) {
		struct rpcrdma_segment seg = {
			.handle = x->mr->rkey,
			.length = (uint32_t)XPAD4(x->rlen),
			.offset = (uint64_t)(uintptr_t)x->red,
		};

		x->form = XRSP_RPRC;
		x->rh.proc = RDMA_NOMSG;
		if (rpcrdma_hdr_add_read(&x->rh, true, 0, &seg) < 0)
			return IW_ERPC_TOOBIG;
		x->expo = calloc(1, sizeof(*x->expo));
		if (!x->expo)
			return IW_ENOMEM;
		x->expo->conn = c;
		x->expo->xid = req->xid;
		iw_timer_init(&x->expo->tmo, xrsp_expo_timeout);
	} else {
		return IW_ERPC_TOOBIG;
	}
	if (c->send_inv && hc->nsegs) {
		x->inv = hc->segs[0].handle;
		for (uint16_t i = 1; i < hc->nsegs; i++)
			if (hc->segs[i].handle != x->inv)
				x->inv = 0;
	}
	return 0;
}

/* Post: take a send slot and post the Writes and the Send (iWARP places the
 * Writes first, RFC 5040 §5.5).  The memory goes with the slot until the Send
 * completes, or with the exposure until RDMA_DONE or its timeout.  The form is
 * counted once planned, even if no slot or no post follows.  Returns 0;
 * IW_ENOMEM when no send slot is free (refused with ERR_CHUNK); or
 * xsend_post's failure (the connection is failing: no answer). */
static int xrsp_reply_post(struct rpcrdma_conn *c, const struct rpcrdma_req *req,
			   struct xrsp_reply *x)
{
	struct xsend *s;
	int rc;

	switch (x->form) {
	case XRSP_INLINE:
		c->st.msgs_inline++;
		break;
	case XRSP_REPLY_CHUNK:
		c->st.msgs_long_reply++;
		c->st.bytes_reply_chunk += XPAD4(x->rlen);
		break;
	case XRSP_RPRC:
		c->st.msgs_rprc++;
		c->st.bytes_rprc += XPAD4(x->rlen);
		break;
	}
	s = xsend_get(c);
	if (!s) {
		xrsp_reply_refuse(c, req, x->len, IW_ENOMEM);
		return IW_ENOMEM;
	}
	if (!x->expo) {
		s->att = x->mem;
		s->att_cap = x->mem_cap;
		s->att_mr = x->mr;
		x->mem = NULL; /* the slot frees them, whether or not the post succeeds */
		x->mr = NULL;
	}
	rc = xsend_post(c, s, &x->rh, x->form == XRSP_INLINE ? x->red : NULL,
			x->form == XRSP_INLINE ? x->rlen : 0, x->inv, x->nwr ? x->wrs : NULL);
	if (rc)
		return rc;
	if (x->expo) {
		x->expo->buf = x->mem;
		x->expo->buf_cap = x->mem_cap;
		x->expo->mr = x->mr;
		iw_list_add_tail(&c->expos, &x->expo->node);
		xtimer_arm(c->ctx, &x->expo->tmo, c->ctx->cfg.rprc_timeout_ms);
		x->mem = NULL;
		x->mr = NULL;
		x->expo = NULL;
	}
	c->st.replies_sent++;
	c->st.bytes_write_chunk += x->wbytes;
	if (x->inv)
		c->st.send_inv++;
	return 0;
}

/* Free what x still owns. */
static void xrsp_reply_clear(struct rpcrdma_conn *c, struct xrsp_reply *x)
{
	if (x->mr)
		iwv_dereg_mr(x->mr);
	xbuf_put(c, x->mem, x->mem_cap);
	free(x->wrs);
	free(x->sges);
	free(x->expo);
}

/* A backchannel reply (RFC 8167 §5: Short only).  Returns 0, IW_ENOMEM (no
 * send slot), IW_ERPC_TOOBIG (too long for the Send: refused with ERR_CHUNK)
 * or xsend_post's failure. */
static int xrsp_reply_bc(struct rpcrdma_conn *c, const struct rpcrdma_req *req, const void *reply,
			 size_t len)
{
	struct rpcrdma_hdr rh;
	struct xsend *s;
	int rc;

	rpcrdma_hdr_init(&rh, req->xid, xrsp_grant_for(c, req->bc), RDMA_MSG);
	if (rpcrdma_hdr_size(&rh) + len > c->inline_send) {
		xrsp_reply_refuse(c, req, len, IW_ERPC_TOOBIG);
		return IW_ERPC_TOOBIG;
	}
	s = xsend_get(c);
	if (!s)
		return IW_ENOMEM;
	rc = xsend_post(c, s, &rh, reply, len, 0, NULL);
	if (rc == 0) {
		c->st.replies_sent++;
		c->st.msgs_inline++;
	}
	return rc;
}

int rpcrdma_reply(struct rpcrdma_req *req, const void *reply, size_t len)
{
	struct rpcrdma_conn *c;
	struct xrsp_reply x;
	int rc;

	if (!req)
		return IW_EINVAL;
	c = req->conn;
	if (!c) {
		xrsp_req_free(req);
		return IW_ERPC_CONN;
	}
	if (!reply || len < 8 || iw_get_be32(reply) != req->xid)
		return IW_EINVAL;
	if (!xconn_ready(c)) {
		xrsp_req_free(req);
		return IW_ERPC_CONN;
	}
	if (len > c->ctx->cfg.max_msg) {
		rc = IW_ERPC_TOOBIG;
		xrsp_reply_refuse(c, req, len, rc);
	} else if (req->bc) {
		rc = xrsp_reply_bc(c, req, reply, len);
	} else {
		memset(&x, 0, sizeof(x));
		rc = xrsp_reply_reduce(c, req, &x, reply, len);
		if (rc == 0)
			rc = xrsp_reply_plan(c, req, &x);
		if (rc == 0)
			rc = xrsp_reply_post(c, req, &x);
		else
			xrsp_reply_refuse(c, req, len, rc);
		xrsp_reply_clear(c, &x);
	}
	xrsp_req_free(req);
	return rc;
}
