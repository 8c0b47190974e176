/* SPDX-License-Identifier: MIT */
/*
 * gw_client.c - iwnfsgw client mode: local NFS clients over TCP in,
 * NFS/RDMA to the remote out.
 *
 * Theory of operation.
 *
 * The gateway accepts TCP connections from NFS clients (libnfs, a Linux
 * client without an RNIC...).  For each one it opens ONE RPC-over-RDMA
 * connection to --remote with rpcrdma_connect and the NFS binding, which
 * chooses the chunks per RFC 8267: Read chunks for WRITE data (§4.2), Write
 * chunks for READ and READLINK results (§4.3), a Reply chunk when the reply
 * may not fit inline (§4.4), a position-zero Read chunk for a long call.
 * Each record read from the client (RFC 5531 §11) becomes one rpcrdma_call;
 * each reply becomes one record back, XID unchanged.  Pairing one TCP
 * connection with one RPC-over-RDMA connection keeps XIDs unique per
 * transport connection without rewriting them.  A client retransmitting a
 * call whose XID is still outstanding (rpcrdma_call says IW_ESYS(EEXIST)) needs no
 * second copy: the reply to the first answers both.
 *
 * Flow control.  The transport holds calls beyond the credit grant in order
 * (RFC 8166 §3.3.1); the gateway stops reading from the client while more
 * than twice the credits are outstanding, or while more than 16 MiB of
 * replies wait for the client to read them, so a client cannot make the
 * gateway buffer without bound.
 *
 * Errors.  A call the transport fails (connection lost for good, a chunk
 * error at the remote, --call-timeout) is answered with the gateway's own
 * SYSTEM_ERR reply, so the client's call completes.  When the RPC-over-RDMA
 * connection is gone for good (after the transport's reconnect attempts,
 * which resend outstanding calls with the same XID), the client's TCP
 * connection is closed once the answers are flushed: the NFS client then
 * reconnects, which opens a new RPC-over-RDMA connection.
 *
 * Backchannel (RFC 8167): calls the remote sends on the connection
 * (NFSv4.1 callbacks, when --backchannel offered credits) are written to the
 * client as records; the client's REPLY records are matched to them by XID
 * and answered with rpcrdma_reply.
 *
 * MOUNT, NLM and portmap are not carried: only the NFS port is.  An NFSv3
 * client uses the remote's MOUNT service over TCP directly (libnfs:
 * mountport=PORT; Linux: mountport=PORT,mountproto=tcp).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <iwarp/iw_err.h>
#include <iwarp/rpcrdma.h>

#include "gw_int.h"

#define GW_BEV_IO (256u << 10)
#define GW_PAUSE  (-100) /* local_record: stop reading, leave the rest buffered */
/* Replies queued for a client that does not read: stop taking its calls above
 * this, go on below half of it. */
#define GW_OUT_HIGH (16u << 20)

struct bcpend {
	TAILQ_ENTRY(bcpend) link;
	struct rpcrdma_req *req;
	uint32_t xid;
};

struct cconn {
	TAILQ_ENTRY(cconn) link;
	struct gw *gw;
	unsigned id;
	struct bufferevent *bev; /* the local client; NULL once closed */
	struct rpcrdma_conn *rc; /* NULL once CLOSED */
	char peer[IWT_ADDR_STRLEN];
	bool rdma_up, ever_up, paused, closing;
	bool in_read; /* inside on_local_read: no re-entry from a reply callback */
	struct gw_rm_reader rm;
	unsigned outstanding;
	TAILQ_HEAD(, bcpend) bc;
	struct gw_counters c;
	struct rpcrdma_stats rs;
	bool have_rs, retired;
};

struct call_token {
	struct cconn *cc;
	uint32_t xid;
	size_t len;
};

struct cli {
	struct evconnlistener *l;
	TAILQ_HEAD(, cconn) conns;
};

static struct cli *cli_of(struct gw *gw)
{
	return gw->mode;
}

static unsigned pause_limit(const struct gw *gw)
{
	return 2u * gw->o.credits;
}

static void cconn_report(struct cconn *cc, struct gw_conn_report *r)
{
	memset(r, 0, sizeof(*r));
	r->id = cc->id;
	r->peer = cc->peer;
	r->state = cc->rdma_up		 ? "up"
		   : !cc->bev || !cc->rc ? "closed"
		   : cc->ever_up	 ? "reconnecting"
					 : "connecting";
	r->c = cc->c;
	if (cc->rc && !rpcrdma_conn_stats(cc->rc, &cc->rs))
		cc->have_rs = true;
	r->have_rdma = cc->have_rs;
	r->rs = cc->rs;
}

static void cconn_maybe_free(struct cconn *cc)
{
	if (cc->bev || cc->rc || cc->outstanding)
		return;
	if (!cc->retired) {
		struct gw_conn_report r;

		cconn_report(cc, &r);
		gw_conn_retire(cc->gw, &r);
	}
	TAILQ_REMOVE(&cli_of(cc->gw)->conns, cc, link);
	cc->gw->nconns--;
	gw_rm_fini(&cc->rm);
	free(cc);
}

static void local_close(struct cconn *cc)
{
	struct bcpend *b;

	if (cc->bev) {
		bufferevent_free(cc->bev);
		cc->bev = NULL;
	}
	while ((b = TAILQ_FIRST(&cc->bc))) {
		TAILQ_REMOVE(&cc->bc, b, link);
		rpcrdma_req_drop(b->req);
		free(b);
	}
	if (cc->rc)
		rpcrdma_close(cc->rc); /* CLOSED comes from rpcrdma_ctx_process */
	gw_kick(cc->gw);
}

static void on_local_flushed(struct bufferevent *bev, void *arg)
{
	struct cconn *cc = arg;

	if (cc->closing && evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		local_close(cc);
		cconn_maybe_free(cc);
	}
}

static void on_local_event(struct bufferevent *bev, short what, void *arg);

/* Close the client's connection once what is queued for it is sent. */
static void local_close_flushed(struct cconn *cc)
{
	if (!cc->bev)
		return;
	cc->closing = true;
	bufferevent_disable(cc->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(cc->bev)) == 0) {
		local_close(cc);
		return;
	}
	bufferevent_setwatermark(cc->bev, EV_WRITE, 0, 0);
	bufferevent_setcb(cc->bev, NULL, on_local_flushed, on_local_event, cc);
}

static bool must_pause(struct cconn *cc)
{
	return cc->outstanding >= pause_limit(cc->gw) ||
	       evbuffer_get_length(bufferevent_get_output(cc->bev)) > GW_OUT_HIGH;
}

static void on_local_read(struct bufferevent *bev, void *arg);

static void maybe_resume(struct cconn *cc)
{
	if (!cc->paused || !cc->bev || cc->closing || must_pause(cc))
		return;
	cc->paused = false;
	bufferevent_enable(cc->bev, EV_READ);
	/* records already buffered do not make the socket readable again */
	if (!cc->in_read)
		on_local_read(cc->bev, cc);
}

/* Output drained below the low watermark (GW_OUT_HIGH / 2). */
static void on_local_write(struct bufferevent *bev, void *arg)
{
	maybe_resume(arg);
}

static void answer_system_err(struct cconn *cc, uint32_t xid)
{
	uint8_t err[GW_RPC_ERR_REPLY_LEN];

	cc->c.errors++;
	if (!cc->bev)
		return;
	gw_rpc_system_err(err, xid);
	gw_rm_write(bufferevent_get_output(cc->bev), err, sizeof(err), 0);
}

static void on_reply(void *arg, int status, const uint8_t *reply, size_t len)
{
	struct call_token *t = arg;
	struct cconn *cc = t->cc;

	cc->outstanding--;
	if (status == 0 && reply && len >= GW_RPC_HDR_MIN) {
		cc->c.replies++;
		cc->c.bytes_replies += len;
		if (cc->bev && gw_rm_write(bufferevent_get_output(cc->bev), reply, len, 0))
			cc->c.dropped++;
		gw_debug(cc->gw, "conn %u: reply xid %#x %zu octets", cc->id, t->xid, len);
	} else {
		if (status != IW_ERPC_SHUTDOWN || cc->bev)
			gw_log(cc->gw, "conn %u: call xid %#x (%zu octets) failed: %s%s", cc->id,
			       t->xid, t->len, rpcrdma_errname(status),
			       cc->bev ? "; answered SYSTEM_ERR" : "");
		answer_system_err(cc, t->xid);
	}
	free(t);
	maybe_resume(cc);
	cconn_maybe_free(cc);
}

static int local_call(struct cconn *cc, uint8_t *rec, size_t len)
{
	struct rpcrdma_call_opts opts;
	struct call_token *t;
	uint32_t xid = gw_rpc_xid(rec);
	uint32_t prog, vers, proc;
	int rc;

	if (!cc->rc) {
		answer_system_err(cc, xid);
		return 0;
	}
	t = malloc(sizeof(*t));
	if (!t) {
		answer_system_err(cc, xid);
		return 0;
	}
	t->cc = cc;
	t->xid = xid;
	t->len = len;
	memset(&opts, 0, sizeof(opts));
	opts.timeout_ms = cc->gw->o.call_timeout;
	rc = rpcrdma_call(cc->rc, rec, len, &opts, on_reply, t, NULL);
	if (rc) {
		free(t);
		if (rc == iw_err_sys(EEXIST)) {
			/* a retransmission: the outstanding call's reply answers it */
			gw_debug(cc->gw,
				 "conn %u: xid %#x already outstanding: retransmission "
				 "ignored",
				 cc->id, xid);
			return 0;
		}
		gw_log(cc->gw, "conn %u: call xid %#x not sent: %s; answered SYSTEM_ERR", cc->id,
		       xid, rpcrdma_errname(rc));
		answer_system_err(cc, xid);
		return 0;
	}
	cc->outstanding++;
	cc->c.calls++;
	cc->c.bytes_calls += len;
	if (cc->gw->o.verbose >= 2 && gw_rpc_call_info(rec, len, &prog, &vers, &proc))
		gw_debug(cc->gw, "conn %u: call xid %#x prog %u vers %u proc %u, %zu octets",
			 cc->id, xid, prog, vers, proc, len);
	gw_kick(cc->gw);
	return 0;
}

static int local_bc_reply(struct cconn *cc, uint8_t *rec, size_t len)
{
	uint32_t xid = gw_rpc_xid(rec);
	struct bcpend *b;
	int rc;

	TAILQ_FOREACH(b, &cc->bc, link)
	{
		if (b->xid == xid)
			break;
	}
	if (!b) {
		cc->c.dropped++;
		gw_debug(cc->gw, "conn %u: reply xid %#x from the client matches no callback",
			 cc->id, xid);
		return 0;
	}
	TAILQ_REMOVE(&cc->bc, b, link);
	rc = rpcrdma_reply(b->req, rec, len);
	if (rc) {
		cc->c.errors++;
		gw_log(cc->gw, "conn %u: backchannel reply xid %#x not sent: %s", cc->id, xid,
		       rpcrdma_errname(rc));
	}
	free(b);
	gw_kick(cc->gw);
	return 0;
}

static int local_record(void *arg, uint8_t *rec, size_t len)
{
	struct cconn *cc = arg;

	if (len < GW_RPC_HDR_MIN) {
		cc->c.dropped++;
		return 0;
	}
	if (gw_rpc_type(rec) == GW_RPC_CALL)
		local_call(cc, rec, len);
	else if (gw_rpc_type(rec) == GW_RPC_REPLY)
		local_bc_reply(cc, rec, len);
	else
		cc->c.dropped++;
	if (cc->bev && must_pause(cc)) {
		cc->paused = true;
		bufferevent_disable(cc->bev, EV_READ);
		return GW_PAUSE;
	}
	return 0;
}

static void on_local_read(struct bufferevent *bev, void *arg)
{
	struct cconn *cc = arg;
	int fd = bufferevent_getfd(bev);
	int rc, st;

	cc->in_read = true;
	for (;;) {
		rc = gw_rm_drain(&cc->rm, bufferevent_get_input(bev), local_record, cc);
		if (rc < 0 || cc->bev != bev || cc->paused || !cc->rm.frag_left)
			break;
		/* the rest of a large fragment: straight from the socket */
		st = gw_rm_recv(&cc->rm, fd);
		if (st == GW_RM_RECORD) {
			rc = local_record(cc, cc->rm.rec, cc->rm.len);
			if (rc < 0 || cc->bev != bev)
				break;
			continue;
		}
		if (st == GW_RM_EOF || st == GW_RM_ERR) {
			cc->in_read = false;
			on_local_event(bev, st == GW_RM_EOF ? BEV_EVENT_EOF : BEV_EVENT_ERROR, cc);
			return;
		}
		break; /* nothing more to read now */
	}
	cc->in_read = false;
	if (rc == 0 && cc->bev == bev)
		gw_rm_lowat(&cc->rm, fd);
	if (rc < 0 && rc != GW_PAUSE && cc->bev == bev) {
		gw_log(cc->gw,
		       "conn %u: client %s sent a record over %u octets (--max-record): "
		       "closing",
		       cc->id, cc->peer, cc->gw->o.max_record);
		local_close(cc);
		cconn_maybe_free(cc);
	}
}

static void on_local_event(struct bufferevent *bev, short what, void *arg)
{
	struct cconn *cc = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		int err = EVUTIL_SOCKET_ERROR();

		gw_log(cc->gw, "conn %u: client %s %s%s%s (%u call(s) outstanding)", cc->id,
		       cc->peer,
		       (what & BEV_EVENT_EOF) ? "closed the connection" : "connection error",
		       (what & BEV_EVENT_EOF) ? "" : ": ",
		       (what & BEV_EVENT_EOF) ? "" : evutil_socket_error_to_string(err),
		       cc->outstanding);
		local_close(cc);
		cconn_maybe_free(cc);
	}
}

static void on_conn(void *arg, struct rpcrdma_conn *rc, enum rpcrdma_conn_event ev, int status)
{
	struct cconn *cc = arg;
	struct rpcrdma_conn_info info;
	struct gw_conn_report r;

	switch (ev) {
	case RPCRDMA_CONN_UP:
		cc->rdma_up = true;
		if (cc->ever_up)
			cc->c.reconnects++;
		cc->ever_up = true;
		if (!rpcrdma_conn_info(rc, &info))
			gw_log(cc->gw,
			       "conn %u: RPC-over-RDMA to %s up (credits %u, bc %u, inline send %u "
			       "recv %u, %s, send-inv %s, rprc %s)",
			       cc->id, cc->gw->o.peer.text, info.credits, info.bc_credits,
			       info.inline_send, info.inline_recv,
			       info.peer_pdata ? "RFC 8797 private data" : "no private data",
			       info.send_inv ? "on" : "off", info.rprc ? "on" : "off");
		else
			gw_log(cc->gw, "conn %u: RPC-over-RDMA to %s up", cc->id,
			       cc->gw->o.peer.text);
		break;
	case RPCRDMA_CONN_DOWN:
		cc->rdma_up = false;
		if (!cc->bev)
			break; /* we closed it: CLOSED follows */
		gw_log(cc->gw, "conn %u: RPC-over-RDMA to %s lost (%s); reconnecting", cc->id,
		       cc->gw->o.peer.text, status ? rpcrdma_errname(status) : "disconnected");
		break;
	case RPCRDMA_CONN_CLOSED:
		cc->rdma_up = false;
		if (cc->bev)
			gw_log(cc->gw, "conn %u: RPC-over-RDMA to %s closed%s%s; closing client %s",
			       cc->id, cc->gw->o.peer.text, status ? ": " : "",
			       status ? rpcrdma_errname(status) : "", cc->peer);
		cconn_report(cc, &r);
		gw_conn_retire(cc->gw, &r);
		cc->retired = true;
		cc->rc = NULL;
		local_close_flushed(cc);
		cconn_maybe_free(cc);
		break;
	}
}

static void on_bc_call(void *arg, struct rpcrdma_req *req, const uint8_t *msg, size_t len)
{
	struct rpcrdma_conn *rc = rpcrdma_req_conn(req);
	struct cconn *cc = rc ? rpcrdma_conn_get_arg(rc) : NULL;
	struct bcpend *b;

	if (!cc)
		cc = arg;
	if (!cc || !cc->bev || len < GW_RPC_HDR_MIN || !(b = malloc(sizeof(*b)))) {
		rpcrdma_req_drop(req);
		if (cc)
			gw_kick(cc->gw);
		return;
	}
	b->req = req;
	b->xid = gw_rpc_xid(msg);
	TAILQ_INSERT_TAIL(&cc->bc, b, link);
	cc->c.bc_calls++;
	if (gw_rm_write(bufferevent_get_output(cc->bev), msg, len, 0)) {
		TAILQ_REMOVE(&cc->bc, b, link);
		free(b);
		rpcrdma_req_drop(req);
		gw_kick(cc->gw);
	}
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	struct gw *gw = arg;
	struct cconn *cc = calloc(1, sizeof(*cc));
	int one = 1;

	if (!cc) {
		evutil_closesocket(fd);
		return;
	}
	cc->gw = gw;
	cc->id = ++gw->next_id;
	TAILQ_INIT(&cc->bc);
	gw_rm_init(&cc->rm, gw->o.max_record);
	iwt_addr_format(sa, cc->peer, sizeof(cc->peer));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	cc->bev = bufferevent_socket_new(gw->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!cc->bev) {
		evutil_closesocket(fd);
		gw_rm_fini(&cc->rm);
		free(cc);
		return;
	}
	TAILQ_INSERT_TAIL(&cli_of(gw)->conns, cc, link);
	gw->nconns++;
	bufferevent_setcb(cc->bev, on_local_read, on_local_write, on_local_event, cc);
	bufferevent_setwatermark(cc->bev, EV_WRITE, GW_OUT_HIGH / 2, 0);
	bufferevent_set_max_single_read(cc->bev, GW_BEV_IO);
	bufferevent_set_max_single_write(cc->bev, GW_BEV_IO);
	cc->rc = rpcrdma_connect(gw->ctx, (struct sockaddr *)&gw->o.peer.ss, gw->o.peer.len,
				 on_conn, on_bc_call, cc);
	if (!cc->rc) {
		gw_log(gw, "conn %u: client %s: cannot connect to %s: %s; closing", cc->id,
		       cc->peer, gw->o.peer.text, strerror(errno));
		local_close(cc);
		cc->retired = true;
		cconn_maybe_free(cc);
		return;
	}
	gw_log(gw, "conn %u: client %s connected; opening RPC-over-RDMA to %s", cc->id, cc->peer,
	       gw->o.peer.text);
	/* calls may be posted at once: they go out when the connection is up */
	bufferevent_enable(cc->bev, EV_READ | EV_WRITE);
	gw_kick(gw);
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct gw *gw = arg;
	int err = EVUTIL_SOCKET_ERROR();

	gw_log(gw, "accept failed: %s", evutil_socket_error_to_string(err));
}

int gw_client_start(struct gw *gw)
{
	struct cli *cl = calloc(1, sizeof(*cl));

	if (!cl) {
		gw_log(gw, "out of memory");
		return -1;
	}
	TAILQ_INIT(&cl->conns);
	gw->mode = cl;
	cl->l = evconnlistener_new_bind(gw->base, on_accept, gw,
					LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64,
					(struct sockaddr *)&gw->o.listen.ss, (int)gw->o.listen.len);
	if (!cl->l) {
		int err = EVUTIL_SOCKET_ERROR();

		gw_log(gw, "cannot listen on %s: %s", gw->o.listen.text,
		       evutil_socket_error_to_string(err));
		return -1;
	}
	evconnlistener_set_error_cb(cl->l, on_accept_error);
	gw_log(gw, "listening for NFS over TCP on %s", gw->o.listen.text);
	return 0;
}

void gw_client_stats(struct gw *gw, const char *what)
{
	struct cli *cl = cli_of(gw);
	struct gw_conn_report r;
	struct cconn *cc;

	if (!cl)
		return;
	TAILQ_FOREACH(cc, &cl->conns, link)
	{
		if (cc->retired)
			continue;
		cconn_report(cc, &r);
		gw_report_print(gw, &r, what);
	}
}

void gw_client_stop(struct gw *gw)
{
	struct cli *cl = cli_of(gw);
	struct cconn *cc, *n;

	if (!cl)
		return;
	if (gw->ctx) {
		if (cl->l) {
			evconnlistener_free(cl->l);
			cl->l = NULL;
		}
		TAILQ_FOREACH_SAFE(cc, &cl->conns, link, n)
		{
			if (cc->bev) {
				bufferevent_free(cc->bev);
				cc->bev = NULL;
			}
			local_close(cc);
		}
		return;
	}
	TAILQ_FOREACH_SAFE(cc, &cl->conns, link, n)
	{
		TAILQ_REMOVE(&cl->conns, cc, link);
		gw_rm_fini(&cc->rm);
		free(cc);
	}
	free(cl);
	gw->mode = NULL;
}
