/* SPDX-License-Identifier: MIT */
/*
 * xprt_int.h - internals of the RPC-over-RDMA transport (rpcrdma.h), shared
 * by xprt_ctx.c (event loop, timers, logging), xprt_conn.c (connection life:
 * setup, buffers, CM events, teardown, reconnect), xprt_io.c (send slots,
 * RDMA Reads, receives, completion dispatch), xprt_requester.c (calls,
 * credits, reply rebuild) and xprt_responder.c (Read chunk pulls, replies,
 * RDMA_ERROR, RPRC).  Names say which part a function belongs to: xconn_
 * connection life (and its log lines), xsend_/xread_/xrecv_/xcq_ work
 * requests and completions, xreq_ (per connection) and xcall_ (per call) the
 * requester, xrsp_ the responder.
 *
 * Work requests carry a pointer to a `struct xwr` (first member of a receive
 * slot, a send slot or a Read operation) in wr_id; wr_id 0 is an RDMA Write,
 * whose completion needs no work.  Every object a posted work request points
 * at lives until that work request has completed (a connection teardown
 * destroys the QP, then drains the flushed completions, then frees).
 */
#ifndef IWARP_RPCRDMA_XPRT_INT_H
#define IWARP_RPCRDMA_XPRT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>
#include <iwarp/rpcrdma.h>

#include "iw_list.h"
#include "iw_timer.h"

#define XPAD4(n) (((n) + 3u) & ~(size_t)3u)

enum xwr_kind { XWR_RECV = 1, XWR_SEND, XWR_READ };

struct xwr {
	enum xwr_kind kind;
};

struct xrecv {
	struct xwr wr;
	struct rpcrdma_conn *conn;
	uint8_t *buf;
};

struct xsend {
	struct xwr wr;
	struct rpcrdma_conn *conn;
	uint8_t *buf;
	bool busy;
	/* memory that RDMA Writes before this Send read from (att_cap octets, an
	 * xbuf): given back when the Send completes */
	void *att;
	size_t att_cap;
	struct iwv_mr *att_mr;
};

/* A large buffer kept by a connection for its next call (xbuf_get). */
struct xbuf {
	uint8_t *p;
	size_t cap;
};
#define XBUF_MIN     (64u * 1024) /* smaller ones come and go with malloc */
#define XBUF_KEEP    8		  /* kept per connection at most */
#define XBUF_IDLE_MS 2000	  /* kept ones are freed when none was used this long */

/* Owner of RDMA Reads: a responder request or a requester call (RPRC). */
struct xreader {
	int pending; /* Reads posted or queued, not yet completed */
	int err;     /* first failure */
	void (*done)(struct xreader *r);
};

struct xread {
	struct xwr wr;
	struct iw_list node; /* conn->rd_queue while not posted */
	struct xreader *owner;
	struct iwv_sge sge;
	uint64_t raddr;
	uint32_t rkey;
};

/* cq_context: outlives the conn while the CQ cannot be destroyed yet. */
struct xcqh {
	struct iw_list node; /* ctx->zombie_cqs once the conn is gone */
	struct rpcrdma_conn *conn;
	struct iwv_cq *cq;
};

enum xobj_kind { XOBJ_CONN = 1, XOBJ_LISTENER };

enum xconn_state {
	XC_CONNECTING, /* a connection attempt is under way */
	XC_UP,
	XC_WAIT,    /* client: lost, waiting to reconnect */
	XC_CLOSING, /* disconnect requested, waiting for DISCONNECTED */
	XC_CLOSED,  /* CLOSED reported (or about to be): reaped by process() */
};

enum xcall_state { XCS_WAIT, XCS_SENT, XCS_READING };

struct xcall {
	struct iw_list node; /* conn->calls (FIFO) */
	struct rpcrdma_conn *conn;
	uint64_t id;
	uint32_t xid, orig_xid;
	enum xcall_state state;
	bool cb_done; /* cb already ran (cancelled, timed out) */
	bool bc;      /* a backchannel call (we accepted the connection) */
	bool unpredictable, retried, retransmit;
	rpcrdma_reply_fn cb;
	void *arg;
	struct rpcrdma_call_opts opts;
	struct rpcrdma_rpcinfo ri;
	const struct rpcrdma_ulb *ulb; /* the binding handles this call */

	/* One registered buffer: [call | Write chunks | Reply chunk | rebuild] */
	uint8_t *buf;
	size_t buf_len; /* registered */
	size_t buf_cap; /* allocated (an xbuf) */
	struct iwv_mr *mr;
	size_t len;		 /* call octets at buf[0] */
	struct rpcrdma_hdr *hdr; /* template: proc and chunk lists (xid, credits set at send) */
	uint8_t *red;		 /* reduced payload (Read chunks) or NULL */
	size_t red_len;
	uint32_t n_write;
	uint32_t write_off[RPCRDMA_MAX_WRITE_CHUNKS], write_len[RPCRDMA_MAX_WRITE_CHUNKS];
	bool has_reply;
	uint32_t reply_off, reply_len;
	uint32_t rebuild_off, rebuild_len;
	struct iw_timer tmo; /* in ctx->timers */

	/* RPRC pull */
	struct xreader rd;
	uint8_t *rp_buf;
	struct iwv_mr *rp_mr;
	uint32_t rp_len, rp_xid, rp_handle;
	struct rpcrdma_hdr *rp_hdr;
};

struct rpcrdma_req {
	struct iw_list node; /* conn->reqs */
	struct rpcrdma_conn *conn;
	bool bc; /* arrived as a backchannel call (we are the client) */
	bool delivered;
	uint32_t xid, vers, credits;
	struct rpcrdma_hdr *h;
	uint8_t *msg; /* an xbuf of msg_cap octets */
	size_t len, msg_cap;
	struct iwv_mr *mr;
	struct xreader rd;
	struct rpcrdma_rpcinfo ri;
};

/* A reply exposed through a responder-provided Read chunk. */
struct xrsp_expo {
	struct iw_list node; /* conn->expos */
	struct rpcrdma_conn *conn;
	uint32_t xid;
	uint8_t *buf; /* an xbuf of buf_cap octets */
	size_t buf_cap;
	struct iwv_mr *mr;
	struct iw_timer tmo; /* in ctx->timers */
};

struct rpcrdma_listener {
	enum xobj_kind kind;
	struct iw_list node;
	struct rpcrdma_ctx *ctx;
	struct iwcm_id *id;
	rpcrdma_conn_fn on_conn;
	rpcrdma_call_fn on_call;
	void *arg;
	rpcrdma_admit_fn admit; /* NULL: everyone */
	void *admit_arg;
};

struct rpcrdma_conn {
	enum xobj_kind kind;
	struct iw_list node; /* ctx->conns */
	struct rpcrdma_ctx *ctx;
	bool client;
	enum xconn_state state;
	bool closing; /* rpcrdma_close called / ctx going away */
	int close_status;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	rpcrdma_conn_fn on_conn;
	rpcrdma_call_fn on_call;
	void *arg;

	/* A PD of its own (RFC 5042's advice, as rping does): an STag this
	 * connection exposes - a responder-provided Read chunk, the buffer of a
	 * call's Write or Reply chunk - is "not associated with the RDMAP
	 * stream" of any other connection, so one client can never read or
	 * write memory offered to another (RFC 5041 §7.2). */
	struct iwv_pd *pd;

	/* the current connection (NULL between attempts) */
	struct iwcm_id *id;
	struct iwv_qp *qp;
	struct xcqh *cqh;
	bool dying; /* teardown in progress: completions are flushes */

	/* negotiated */
	uint32_t inline_send, inline_recv;
	bool peer_pdata, send_inv, rprc;
	uint8_t pdata[RPCRDMA_CM_PDATA_LEN + RPCRDMA_EXT_LEN];
	uint8_t pdata_len;
	unsigned ord;

	/* buffers */
	unsigned nrecv, nsend;
	uint8_t *rmem, *smem;
	struct iwv_mr *rmr, *smr;
	struct xrecv *rslots;
	struct xsend *sslots;
	/* Large buffers of finished calls, requests and replies, kept for the
	 * next ones (xbuf_get): a buffer is cleared when it is first allocated
	 * and never again, which is safe because a kept buffer holds only
	 * octets of this connection - what its peer sent or was sent - and no
	 * other connection's buffers are ever reused here.  Freed when none
	 * was used for XBUF_IDLE_MS and at the end of the connection. */
	struct xbuf pool[XBUF_KEEP];
	unsigned npool;
	struct iw_timer pool_timer; /* in ctx->timers */

	/* requester */
	struct iw_list calls;
	uint64_t next_id;
	unsigned limit, inflight;
	bool grant0_logged;

	/* responder */
	struct iw_list reqs;
	struct iw_list expos;
	unsigned peer_credits; /* last requested by the peer */

	/* RDMA Reads within ORD */
	struct iw_list rd_queue;
	unsigned rd_out;

	/* reconnect */
	int failures;
	bool was_up;
	struct iw_timer rc_timer; /* in ctx->timers */

	struct rpcrdma_stats st;
};

struct rpcrdma_ctx {
	struct rpcrdma_config cfg;
	struct iwv_context *vctx;
	struct iwv_pd *pd;
	struct iwcm_event_channel *ch;
	struct iwv_comp_channel *cc;
	int tfd, epfd;
	bool more; /* process() stopped with work left: the fd reads ready */
	struct iw_list conns, listeners, zombie_cqs;
	struct iw_timers timers; /* due times in ms of xnow_ms() */
	int ncb;		 /* callbacks run in this process() */
	bool destroying;
	/* rpcrdma_conn_wait_up */
	struct rpcrdma_conn *wait_conn;
	int wait_status;
	bool wait_done;
};

/* xprt_ctx.c - the event loop: clock, timers, logging, zombie CQs */
uint64_t xnow_ms(void);
void xtimer_arm(struct rpcrdma_ctx *ctx, struct iw_timer *t, uint32_t ms);
void xzombies_reap(struct rpcrdma_ctx *ctx); /* destroy the zombie CQs that can go */
void xlog(struct rpcrdma_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xconn_log(struct rpcrdma_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* xprt_conn.c - connection life: setup, CM events, teardown, reconnect, queries */
void xconn_handle_cm(struct rpcrdma_ctx *ctx, struct iwcm_event *ev);
void xconn_lost(struct rpcrdma_conn *c, int status);
void xconn_fatal(struct rpcrdma_conn *c, const char *why);
void xconn_destroy_all(struct rpcrdma_ctx *ctx);
void xconn_reap(struct rpcrdma_ctx *ctx);
void xconn_report(struct rpcrdma_conn *c, enum rpcrdma_conn_event ev, int status);
bool xconn_ready(const struct rpcrdma_conn *c);

/* xprt_io.c - work requests: send slots, RDMA Reads within ORD, receives,
 * completion dispatch */
/* A buffer of at least len octets for a call, request or reply of c, *cap
 * octets in all: one c used before (its earlier octets left in it) or a new
 * zeroed one.  NULL without memory.  c may be NULL (a plain new buffer). */
void *xbuf_get(struct rpcrdma_conn *c, size_t len, size_t *cap);
/* Give p (cap octets, from xbuf_get; NULL is fine) back to c: kept for c's
 * next call, or freed (c NULL, gone, or enough kept). */
void xbuf_put(struct rpcrdma_conn *c, void *p, size_t cap);
/* Free every buffer c keeps. */
void xbuf_drain(struct rpcrdma_conn *c);
void xbuf_init(struct rpcrdma_conn *c); /* at creation */
/* A free send slot (busy until xsend_release), or NULL. */
struct xsend *xsend_get(struct rpcrdma_conn *c);
/* Send h + pay[0..plen) from slot s behind the work requests `pre` (may be
 * NULL), With Invalidate of inv_rkey when non-zero.  On failure the slot is
 * released. */
int xsend_post(struct rpcrdma_conn *c, struct xsend *s, const struct rpcrdma_hdr *h,
	       const void *pay, size_t plen, uint32_t inv_rkey, struct iwv_send_wr *pre);
void xsend_release(struct xsend *s);
void xsend_release_all(struct rpcrdma_conn *c); /* teardown: every slot */
/* Queue an RDMA Read of len octets from (rkey, raddr) to dst for owner; xread_kick posts. */
void xread_add(struct rpcrdma_conn *c, struct xreader *owner, void *dst, uint32_t lkey,
	       uint32_t len, uint32_t rkey, uint64_t raddr);
void xread_kick(struct rpcrdma_conn *c);
void xread_fail_queued(struct rpcrdma_conn *c); /* teardown: the queued Reads fail */
int xrecv_post(struct rpcrdma_conn *c, struct xrecv *r);
void xcq_poll(struct rpcrdma_conn *c); /* drain the CQ, re-arm, dispatch */

/* xprt_requester.c - calls: marshalling, credits, reply rebuild, RPRC pull */
void xreq_on_reply(struct rpcrdma_conn *c, struct xrecv *r, const struct iwv_wc *wc,
		   const struct rpcrdma_hdr *h);
void xreq_kick(struct rpcrdma_conn *c);
void xreq_conn_lost(struct rpcrdma_conn *c, int status, bool final);
void xcall_free(struct xcall *call);

/* xprt_responder.c - calls received: Read chunk pulls, replies, RDMA_ERROR,
 * RPRC exposure */
void xrsp_on_call(struct rpcrdma_conn *c, struct xrecv *r, uint32_t len,
		  const struct rpcrdma_hdr *h, bool bc);
void xrsp_send_err(struct rpcrdma_conn *c, uint32_t xid, uint32_t vers, uint32_t err);
void xrsp_on_done(struct rpcrdma_conn *c, const struct iwv_wc *wc, const struct rpcrdma_hdr *h);
void xrsp_conn_lost(struct rpcrdma_conn *c);
uint32_t xrsp_grant(const struct rpcrdma_conn *c);

#endif /* IWARP_RPCRDMA_XPRT_INT_H */
