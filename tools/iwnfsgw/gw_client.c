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
 * connection is gone for good (after the transport's --rdma-retries
 * reconnect attempts, which resend outstanding calls with the same XID), the
 * client's TCP connection is closed once the answers are flushed: the NFS
 * client then reconnects, which opens a new RPC-over-RDMA connection.
 *
 * Backchannel (RFC 8167): calls the remote sends on the connection
 * (NFSv4.1 callbacks, when --backchannel offered credits) are written to the
 * client as records; the client's REPLY records are matched to them by XID
 * and answered with rpcrdma_reply.
 *
 * Access control: the gateway listens on loopback by default, and a client
 * from outside --allow (default: loopback only) is closed right after the
 * accept, before anything of it is read (gw_allow logs it).
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
#include "iw_list.h"

#define GW_BEV_IO (256u << 10)
#define GW_PAUSE  (-100) /* local_record: stop reading, leave the rest buffered */
/* Replies queued for a client that does not read: stop taking its calls above
 * this, go on below half of it. */
#define GW_OUT_HIGH (16u << 20)

struct cconn {
	struct gw_conn conn;	 /* id, peer, rc, counters: listed in gw->conns */
	struct bufferevent *bev; /* the local client; NULL once closed */
	bool rdma_up, ever_up, paused, closing;
	bool in_read; /* inside on_local_read: no re-entry from a reply callback */
	struct gw_rm_reader rm;
	unsigned outstanding;
	struct gw_pendq bc; /* backchannel calls the client is to answer */
};

struct call_token {
	struct cconn *cc;
	uint32_t xid;
	size_t len;
};

static struct cconn *cconn_of(struct gw_conn *conn)
{
	return iw_container_of(conn, struct cconn, conn);
}

static unsigned pause_limit(const struct gw *gw)
{
	return 2u * gw->o.credits;
}

static const char *cconn_state(struct gw_conn *conn)
{
	struct cconn *cc = cconn_of(conn);

	return cc->rdma_up		  ? "up"
	       : !cc->bev || !cc->conn.rc ? "closed"
	       : cc->ever_up		  ? "reconnecting"
					  : "connecting";
}

static void cconn_release(struct gw_conn *conn);

/* Free the connection once both sides are closed and no call is out. */
static void cconn_maybe_free(struct cconn *cc)
{
	if (cc->bev || cc->conn.rc || cc->outstanding)
		return;
	gw_conn_retire(&cc->conn);
	cconn_release(&cc->conn);
}

static void local_close(struct cconn *cc)
{
	struct gw_pend *b;

	if (cc->bev) {
		bufferevent_free(cc->bev);
		cc->bev = NULL;
	}
	while ((b = TAILQ_FIRST(&cc->bc))) {
		TAILQ_REMOVE(&cc->bc, b, link);
		rpcrdma_req_drop(b->req);
		free(b);
	}
	if (cc->conn.rc)
		rpcrdma_close(cc->conn.rc); /* CLOSED comes from rpcrdma_ctx_process */
	gw_kick(cc->conn.gw);
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
	return cc->outstanding >= pause_limit(cc->conn.gw) ||
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

	cc->conn.c.errors++;
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
		cc->conn.c.replies++;
		cc->conn.c.bytes_replies += len;
		if (cc->bev && gw_rm_send(bufferevent_get_output(cc->bev),
					  bufferevent_getfd(cc->bev), reply, len))
			cc->conn.c.dropped++;
		gw_debug(cc->conn.gw, "conn %u: reply xid %#x %zu octets", cc->conn.id, t->xid,
			 len);
	} else {
		if (status != IW_ERPC_SHUTDOWN || cc->bev)
			gw_log(cc->conn.gw, "conn %u: call xid %#x (%zu octets) failed: %s%s",
			       cc->conn.id, t->xid, t->len, rpcrdma_errname(status),
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

	if (!cc->conn.rc) {
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
	opts.timeout_ms = cc->conn.gw->o.call_timeout;
	rc = rpcrdma_call(cc->conn.rc, rec, len, &opts, on_reply, t, NULL);
	if (rc) {
		free(t);
		if (rc == iw_err_sys(EEXIST)) {
			/* a retransmission: the outstanding call's reply answers it */
			gw_debug(cc->conn.gw,
				 "conn %u: xid %#x already outstanding: retransmission "
				 "ignored",
				 cc->conn.id, xid);
			return 0;
		}
		gw_log(cc->conn.gw, "conn %u: call xid %#x not sent: %s; answered SYSTEM_ERR",
		       cc->conn.id, xid, rpcrdma_errname(rc));
		answer_system_err(cc, xid);
		return 0;
	}
	cc->outstanding++;
	cc->conn.c.calls++;
	cc->conn.c.bytes_calls += len;
	if (cc->conn.gw->o.verbose >= 2 && gw_rpc_call_info(rec, len, &prog, &vers, &proc))
		gw_debug(cc->conn.gw, "conn %u: call xid %#x prog %u vers %u proc %u, %zu octets",
			 cc->conn.id, xid, prog, vers, proc, len);
	gw_kick(cc->conn.gw);
	return 0;
}

static void local_bc_reply(struct cconn *cc, uint8_t *rec, size_t len)
{
	struct gw_pend *b;
	int rc;

	b = gw_pend_reply(&cc->conn, &cc->bc, rec, len, "client", &rc);
	if (!b)
		return;
	TAILQ_REMOVE(&cc->bc, b, link);
	free(b);
	gw_kick(cc->conn.gw);
}

static int local_record(void *arg, uint8_t *rec, size_t len)
{
	struct cconn *cc = arg;

	if (len < GW_RPC_HDR_MIN) {
		cc->conn.c.dropped++;
		return 0;
	}
	if (gw_rpc_type(rec) == GW_RPC_CALL)
		local_call(cc, rec, len);
	else if (gw_rpc_type(rec) == GW_RPC_REPLY)
		local_bc_reply(cc, rec, len);
	else
		cc->conn.c.dropped++;
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
	int rc;

	cc->in_read = true;
	rc = gw_rm_read(&cc->rm, bufferevent_get_input(bev), bufferevent_getfd(bev), local_record,
			cc);
	cc->in_read = false;
	if (rc == GW_RM_EOF || rc == GW_RM_ERR) {
		on_local_event(bev, rc == GW_RM_EOF ? BEV_EVENT_EOF : BEV_EVENT_ERROR, cc);
	} else if (rc < 0 && rc != GW_PAUSE) {
		gw_log(cc->conn.gw,
		       "conn %u: client %s sent a record over %u octets (--max-record): "
		       "closing",
		       cc->conn.id, cc->conn.peer, cc->conn.gw->o.max_record);
		local_close(cc);
		cconn_maybe_free(cc);
	}
}

static void on_local_event(struct bufferevent *bev, short what, void *arg)
{
	struct cconn *cc = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		int err = EVUTIL_SOCKET_ERROR();

		gw_log(cc->conn.gw, "conn %u: client %s %s%s%s (%u call(s) outstanding)",
		       cc->conn.id, cc->conn.peer,
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

	switch (ev) {
	case RPCRDMA_CONN_UP:
		cc->rdma_up = true;
		if (cc->ever_up)
			cc->conn.c.reconnects++;
		cc->ever_up = true;
		if (!rpcrdma_conn_info(rc, &info))
			gw_log(cc->conn.gw,
			       "conn %u: client %s -> RPC-over-RDMA to %s up (credits %u, bc %u, "
			       "inline send %u recv %u, %s, send-inv %s, rprc %s)",
			       cc->conn.id, cc->conn.peer, cc->conn.gw->o.peer.text, info.credits,
			       info.bc_credits, info.inline_send, info.inline_recv,
			       info.peer_pdata ? "RFC 8797 private data" : "no private data",
			       info.send_inv ? "on" : "off", info.rprc ? "on" : "off");
		else
			gw_log(cc->conn.gw, "conn %u: client %s -> RPC-over-RDMA to %s up",
			       cc->conn.id, cc->conn.peer, cc->conn.gw->o.peer.text);
		break;
	case RPCRDMA_CONN_DOWN:
		cc->rdma_up = false;
		if (!cc->bev)
			break; /* we closed it: CLOSED follows */
		gw_log(cc->conn.gw,
		       "conn %u: client %s: RPC-over-RDMA to %s lost (%s); reconnecting",
		       cc->conn.id, cc->conn.peer, cc->conn.gw->o.peer.text,
		       status ? rpcrdma_errname(status) : "disconnected");
		break;
	case RPCRDMA_CONN_CLOSED:
		cc->rdma_up = false;
		if (cc->bev)
			gw_log(cc->conn.gw,
			       "conn %u: RPC-over-RDMA to %s closed%s%s; closing client %s",
			       cc->conn.id, cc->conn.gw->o.peer.text, status ? ": " : "",
			       status ? rpcrdma_errname(status) : "", cc->conn.peer);
		gw_conn_retire(&cc->conn);
		cc->conn.rc = NULL;
		local_close_flushed(cc);
		cconn_maybe_free(cc);
		break;
	}
}

static void on_bc_call(void *arg, struct rpcrdma_req *req, const uint8_t *msg, size_t len)
{
	struct rpcrdma_conn *rc = rpcrdma_req_conn(req);
	struct cconn *cc = rc ? rpcrdma_conn_get_arg(rc) : NULL;
	struct gw_pend *b;

	if (!cc)
		cc = arg;
	if (!cc || !cc->bev || len < GW_RPC_HDR_MIN || !(b = malloc(sizeof(*b)))) {
		rpcrdma_req_drop(req);
		if (cc)
			gw_kick(cc->conn.gw);
		return;
	}
	b->req = req;
	b->xid = gw_rpc_xid(msg);
	TAILQ_INSERT_TAIL(&cc->bc, b, link);
	cc->conn.c.bc_calls++;
	if (gw_rm_write(bufferevent_get_output(cc->bev), msg, len, 0)) {
		TAILQ_REMOVE(&cc->bc, b, link);
		free(b);
		rpcrdma_req_drop(req);
		gw_kick(cc->conn.gw);
	}
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	struct gw *gw = arg;
	struct cconn *cc;
	int one = 1;

	if (!gw_allow(gw, sa, "NFS client")) {
		evutil_closesocket(fd);
		return;
	}
	cc = calloc(1, sizeof(*cc));
	if (!cc) {
		evutil_closesocket(fd);
		return;
	}
	TAILQ_INIT(&cc->bc);
	iwt_addr_format(sa, cc->conn.peer, sizeof(cc->conn.peer));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	cc->bev = bufferevent_socket_new(gw->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!cc->bev) {
		evutil_closesocket(fd);
		free(cc);
		return;
	}
	gw_rm_init(&cc->rm, gw->o.max_record);
	gw_conn_add(gw, &cc->conn, NULL);
	bufferevent_setcb(cc->bev, on_local_read, on_local_write, on_local_event, cc);
	bufferevent_setwatermark(cc->bev, EV_WRITE, GW_OUT_HIGH / 2, 0);
	bufferevent_set_max_single_read(cc->bev, GW_BEV_IO);
	bufferevent_set_max_single_write(cc->bev, GW_BEV_IO);
	cc->conn.rc = rpcrdma_connect(gw->ctx, (struct sockaddr *)&gw->o.peer.ss, gw->o.peer.len,
				      on_conn, on_bc_call, cc);
	if (!cc->conn.rc) {
		gw_log(gw, "conn %u: client %s: cannot connect to %s: %s; closing", cc->conn.id,
		       cc->conn.peer, gw->o.peer.text, strerror(errno));
		local_close(cc);
		cc->conn.retired = true;
		cconn_maybe_free(cc);
		return;
	}
	gw_log(gw, "conn %u: client %s connected; opening RPC-over-RDMA to %s", cc->conn.id,
	       cc->conn.peer, gw->o.peer.text);
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

static int client_start(struct gw *gw)
{
	gw->listener.tcp = evconnlistener_new_bind(
		gw->base, on_accept, gw, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64,
		(struct sockaddr *)&gw->o.listen.ss, (int)gw->o.listen.len);
	if (!gw->listener.tcp) {
		int err = EVUTIL_SOCKET_ERROR();

		gw_log(gw, "cannot listen on %s: %s", gw->o.listen.text,
		       evutil_socket_error_to_string(err));
		return -1;
	}
	evconnlistener_set_error_cb(gw->listener.tcp, on_accept_error);
	gw_log(gw, "listening for NFS over TCP on %s", gw->o.listen.text);
	return 0;
}

static void client_stop(struct gw *gw)
{
	if (gw->listener.tcp)
		evconnlistener_free(gw->listener.tcp);
	gw->listener.tcp = NULL;
}

/* The local client's socket goes at once (nothing more is written to it),
 * then the RPC-over-RDMA connection: its calls fail with IW_ERPC_SHUTDOWN. */
static void cconn_close(struct gw_conn *conn)
{
	local_close(cconn_of(conn));
}

static void cconn_release(struct gw_conn *conn)
{
	struct cconn *cc = cconn_of(conn);

	gw_conn_del(&cc->conn);
	gw_rm_fini(&cc->rm);
	free(cc);
}

const struct gw_mode_ops gw_client_mode = {
	.name = "client",
	.listen = {"--listen", "TCP", "127.0.0.1", GW_DEFAULT_NFS_PORT},
	.peer = {"--remote", "NFS/RDMA remote", "127.0.0.1", GW_DEFAULT_RDMA_PORT,
		 .required = true},
	.bc_credits = 0, /* no backchannel unless asked */
	.start = client_start,
	.stop = client_stop,
	.conn = {cconn_close, cconn_release, cconn_state},
};
