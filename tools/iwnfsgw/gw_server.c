/* SPDX-License-Identifier: MIT */
/*
 * gw_server.c - iwnfsgw server mode: NFS/RDMA clients in, the backend NFS
 * server over TCP out.
 *
 * Theory of operation.
 *
 * The gateway listens with rpcrdma_listen and the NFS binding (RFC 8267), so
 * the transport pulls Read chunks (NFS WRITE data, long calls) with RDMA
 * Read and hands each call up whole (RFC 8166 §3.5).  For every accepted
 * RPC-over-RDMA connection the gateway opens ONE TCP connection to the
 * backend and forwards each call on it as one RPC record (RFC 5531 §11).
 * The backend's replies come back on that connection, in any order, and are
 * matched by XID to the outstanding calls; rpcrdma_reply then picks the
 * mechanism (Write chunks for READ data, the Reply chunk, inline, Send With
 * Invalidate, responder-provided Read chunks).  Since one backend connection
 * serves exactly one client connection, XIDs are those of one client and
 * cannot collide: no rewriting.  The number of calls in flight per client is
 * bounded by the credits the transport grants (RFC 8166 §3.3.1).
 *
 * Backend failures.  The backend connection is opened when the client
 * connects.  When it breaks, the gateway reconnects (at once, then every
 * --retry-ms) and sends the outstanding calls again with their XIDs: NFS
 * servers keep a duplicate request cache for exactly this (RFC 5531 §9 on
 * retransmission; RFC 1813 §4.1 / RFC 8881 §2.10.6 on replay).  After
 * --backend-retries failed attempts in a row, or when a call has been sent
 * three times already (a call that brings the backend down each time must
 * not loop), the calls are answered with an RPC reply the gateway builds
 * itself: MSG_ACCEPTED / SYSTEM_ERR.  Answering rather than dropping keeps
 * the client's credits and slots flowing.  The next call starts a new round
 * of attempts.
 *
 * Backchannel.  A record from the backend that is a CALL (NFSv4.1 callbacks
 * on the fore channel connection, RFC 8881 §2.10.3.1) is carried as a
 * backchannel call with rpcrdma_call (RFC 8167) if the client offered
 * backchannel credits, and its reply goes back to the backend as a record;
 * otherwise it is dropped and logged.
 *
 * Client gone.  When the RPC-over-RDMA connection is lost, the backend
 * connection is closed and the outstanding calls are dropped (their replies
 * have nowhere to go); the connection's counters are added to the totals.
 *
 * Access control.  The backend sees one client, the gateway, so its host
 * rules cannot tell the real clients apart: the gateway checks each new
 * connection's address against --allow (gw_allow) at its connection
 * request: the listener's admission hook (server_admit_peer) refuses it with
 * an MPA reject before the transport makes a buffer or a QP for it.  The
 * check is made again when a connection comes up (server_admit), a second
 * line should the hook ever be bypassed: one from outside the list is then
 * closed before any call of it is served and before a backend connection is
 * opened for it, and its later events and calls come with a NULL arg and are
 * dropped.
 *
 * Reserved port.  knfsd's default `secure` export option wants calls from a
 * source port below 1024 (RFC 1813 / RFC 5531 AUTH_SYS practice: only root
 * binds those), so the backend connection binds one, 665-1023 as the
 * kernel's own RPC client does, when the process may (root or
 * CAP_NET_BIND_SERVICE: server_start tries): a reconnect takes the port it
 * had first, so the server's duplicate request cache, which knfsd keys on the
 * client's address and port, recognises the calls sent again; then 1023 down
 * to 665, skipping ports in use.  Without the permission, or with
 * --no-resvport, an ordinary port (logged once at start).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <iwarp/iw_err.h>
#include <iwarp/rpcrdma.h>

#include "gw_int.h"
#include "iw_list.h"

#define GW_MAX_SENDS 3 /* a call is sent to the backend at most this often */
#define GW_BEV_IO    (256u << 10)
#define GW_RESV_HIGH 1023 /* reserved source ports for the backend connections */
#define GW_RESV_LOW  665

enum bstate {
	B_IDLE,	      /* no backend connection, nothing outstanding */
	B_CONNECTING, /* TCP connect in progress */
	B_UP,
	B_WAIT, /* waiting for the retry timer */
};

static const char *const bstate_names[] = {"idle", "connecting", "up", "retrying"};

struct pend {
	struct gw_pend q; /* req, xid: in the connection's pend queue */
	unsigned sends;
	size_t len;
	uint8_t msg[]; /* kept for sending again after a backend reconnect */
};

struct sconn {
	struct gw_conn conn; /* id, peer, rc, counters: listed in gw->conns */
	bool up, gone;
	enum bstate bstate;
	struct bufferevent *bev;
	struct event *retry_ev;
	int failures;
	struct gw_rm_reader rm;
	struct gw_pendq pend; /* struct pend */
	unsigned npend;
	unsigned bc_out;	   /* backchannel calls outstanding (their callbacks hold us) */
	uint16_t src_port;	   /* the backend connection's source port (0: none yet) */
	char src[IWT_ADDR_STRLEN]; /* its source address, as logged */
};

static struct pend *pend_of(struct gw_pend *q)
{
	return iw_container_of(q, struct pend, q);
}

static struct sconn *sconn_of(struct gw_conn *conn)
{
	return iw_container_of(conn, struct sconn, conn);
}

static struct sconn *sconn_find(struct gw *gw, const struct rpcrdma_conn *rc)
{
	struct gw_conn *conn;

	if (!rc)
		return NULL;
	TAILQ_FOREACH(conn, &gw->conns, link)
	{
		if (conn->rc == rc)
			return sconn_of(conn);
	}
	return NULL;
}

static void backend_connect(struct sconn *s);

/* ---------------------------------------------------------------------- */
/* Answering calls                                                         */
/* ---------------------------------------------------------------------- */

static void pend_free(struct sconn *s, struct pend *p)
{
	TAILQ_REMOVE(&s->pend, &p->q, link);
	s->npend--;
	free(p);
}

static void pend_system_err(struct sconn *s, struct pend *p, const char *why)
{
	uint8_t err[GW_RPC_ERR_REPLY_LEN];
	int rc;

	gw_rpc_system_err(err, p->q.xid);
	rc = rpcrdma_reply(p->q.req, err, sizeof(err));
	s->conn.c.errors++;
	gw_debug(s->conn.gw, "conn %u: xid %#x answered SYSTEM_ERR (%s)%s%s", s->conn.id, p->q.xid,
		 why, rc ? ": " : "", rc ? rpcrdma_errname(rc) : "");
	pend_free(s, p);
	gw_kick(s->conn.gw);
}

static void fail_all(struct sconn *s, const char *why)
{
	struct gw_pend *q;

	if (s->npend)
		gw_log(s->conn.gw, "conn %u: answering %u outstanding call(s) SYSTEM_ERR: %s",
		       s->conn.id, s->npend, why);
	while ((q = TAILQ_FIRST(&s->pend)))
		pend_system_err(s, pend_of(q), why);
}

static void drop_all(struct sconn *s)
{
	struct gw_pend *q;

	while ((q = TAILQ_FIRST(&s->pend))) {
		rpcrdma_req_drop(q->req);
		pend_free(s, pend_of(q));
	}
}

/* ---------------------------------------------------------------------- */
/* Backend connection                                                      */
/* ---------------------------------------------------------------------- */

static int send_pend(struct sconn *s, struct pend *p)
{
	if (p->sends >= GW_MAX_SENDS) {
		pend_system_err(s, p, "sent to the backend too often");
		return 0;
	}
	p->sends++;
	if (gw_rm_send(bufferevent_get_output(s->bev), bufferevent_getfd(s->bev), p->msg, p->len)) {
		pend_system_err(s, p, "out of memory");
		return 0;
	}
	return 1;
}

static void backend_close(struct sconn *s)
{
	if (s->bev) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	if (s->retry_ev)
		evtimer_del(s->retry_ev);
	/* a record half read from the old connection is worthless now */
	gw_rm_fini(&s->rm);
	gw_rm_init(&s->rm, s->conn.gw->o.max_record);
	s->bstate = B_IDLE;
}

static void backend_lost(struct sconn *s, const char *why)
{
	struct timeval tv = {0, 0};

	backend_close(s);
	if (s->gone)
		return;
	s->failures++;
	if (s->npend == 0 && s->failures == 1) {
		/* nothing outstanding: reconnect when the next call comes */
		gw_log(s->conn.gw, "conn %u: backend %s %s; reconnecting on the next call",
		       s->conn.id, s->conn.gw->o.peer.text, why);
		s->failures = 0;
		return;
	}
	if (s->failures > s->conn.gw->o.backend_retries) {
		gw_log(s->conn.gw, "conn %u: backend %s %s; gave up after %d attempt(s)",
		       s->conn.id, s->conn.gw->o.peer.text, why, s->failures);
		s->failures = 0;
		fail_all(s, "backend unreachable");
		return;
	}
	if (s->failures > 1) {
		tv.tv_sec = s->conn.gw->o.retry_ms / 1000;
		tv.tv_usec = (s->conn.gw->o.retry_ms % 1000) * 1000;
	}
	gw_log(s->conn.gw,
	       "conn %u: backend %s %s; retry %d of %d in %u ms (%u call(s) outstanding)",
	       s->conn.id, s->conn.gw->o.peer.text, why, s->failures, s->conn.gw->o.backend_retries,
	       (unsigned)(tv.tv_sec * 1000 + tv.tv_usec / 1000), s->npend);
	s->bstate = B_WAIT;
	evtimer_add(s->retry_ev, &tv);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct sconn *s = arg;

	if (s->bstate == B_WAIT && !s->gone) {
		s->bstate = B_IDLE;
		s->conn.c.reconnects++;
		backend_connect(s);
	}
}

static void bc_reply(void *arg, int status, const uint8_t *reply, size_t len);

static void backend_call(struct sconn *s, uint8_t *rec, size_t len)
{
	struct rpcrdma_conn_info info;
	int rc;

	if (!s->conn.rc || rpcrdma_conn_info(s->conn.rc, &info) || info.bc_credits == 0) {
		s->conn.c.dropped++;
		gw_log(s->conn.gw,
		       "conn %u: backend sent a backchannel call (xid %#x) but the client "
		       "offered no backchannel: dropped",
		       s->conn.id, gw_rpc_xid(rec));
		return;
	}
	rc = rpcrdma_call(s->conn.rc, rec, len, NULL, bc_reply, s, NULL);
	if (rc) {
		s->conn.c.dropped++;
		gw_log(s->conn.gw, "conn %u: backchannel call xid %#x not sent: %s", s->conn.id,
		       gw_rpc_xid(rec), rpcrdma_errname(rc));
		return;
	}
	s->bc_out++;
	s->conn.c.bc_calls++;
	gw_kick(s->conn.gw);
}

static void sconn_free(struct sconn *s);

static void bc_reply(void *arg, int status, const uint8_t *reply, size_t len)
{
	struct sconn *s = arg;

	s->bc_out--;
	if (status == 0 && s->bev && !s->gone && len >= GW_RPC_HDR_MIN) {
		if (gw_rm_write(bufferevent_get_output(s->bev), reply, len, 0))
			s->conn.c.dropped++;
	} else {
		s->conn.c.dropped++;
		gw_debug(s->conn.gw, "conn %u: backchannel reply lost: %s", s->conn.id,
			 status ? rpcrdma_errname(status) : "no backend");
	}
	if (s->gone && !s->conn.rc && s->bc_out == 0)
		sconn_free(s);
}

static int backend_record(void *arg, uint8_t *rec, size_t len)
{
	struct sconn *s = arg;
	struct gw_pend *q;
	uint32_t xid;
	int rc;

	if (len < GW_RPC_HDR_MIN) {
		s->conn.c.dropped++;
		gw_debug(s->conn.gw, "conn %u: backend record of %zu octets ignored", s->conn.id,
			 len);
		return 0;
	}
	xid = gw_rpc_xid(rec);
	if (gw_rpc_type(rec) == GW_RPC_CALL) {
		backend_call(s, rec, len);
		return 0;
	}
	if (gw_rpc_type(rec) != GW_RPC_REPLY) {
		s->conn.c.dropped++;
		gw_log(s->conn.gw, "conn %u: backend sent msg_type %u: ignored", s->conn.id,
		       gw_rpc_type(rec));
		return 0;
	}
	q = gw_pend_reply(&s->conn, &s->pend, rec, len, "backend", &rc);
	if (!q)
		return 0;
	if (rc == 0) {
		s->conn.c.replies++;
		s->conn.c.bytes_replies += len;
		gw_debug(s->conn.gw, "conn %u: reply xid %#x %zu octets", s->conn.id, xid, len);
	}
	pend_free(s, pend_of(q));
	gw_kick(s->conn.gw);
	return 0;
}

static void on_backend_event(struct bufferevent *bev, short what, void *arg);

static void on_backend_read(struct bufferevent *bev, void *arg)
{
	struct sconn *s = arg;
	char why[96];
	int rc;

	rc = gw_rm_read(&s->rm, bufferevent_get_input(bev), bufferevent_getfd(bev), backend_record,
			s);
	if (rc == GW_RM_EOF || rc == GW_RM_ERR) {
		on_backend_event(bev, rc == GW_RM_EOF ? BEV_EVENT_EOF : BEV_EVENT_ERROR, s);
	} else if (rc < 0) {
		snprintf(why, sizeof(why), "sent a record over %u octets (--max-record)",
			 s->conn.gw->o.max_record);
		backend_lost(s, why);
	}
}

static void on_backend_event(struct bufferevent *bev, short what, void *arg)
{
	struct sconn *s = arg;

	if (what & BEV_EVENT_CONNECTED) {
		struct gw_pend *q, *n;
		int one = 1;
		unsigned again = 0;

		setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		s->bstate = B_UP;
		s->failures = 0;
		TAILQ_FOREACH_SAFE(q, &s->pend, link, n)
		{
			if (pend_of(q)->sends)
				again++;
			send_pend(s, pend_of(q));
		}
		if (again)
			gw_log(s->conn.gw,
			       "conn %u: client %s -> backend %s from %s connected; %u call(s) "
			       "sent again",
			       s->conn.id, s->conn.peer, s->conn.gw->o.peer.text, s->src, again);
		else
			gw_log(s->conn.gw, "conn %u: client %s -> backend %s from %s connected",
			       s->conn.id, s->conn.peer, s->conn.gw->o.peer.text, s->src);
		bufferevent_enable(bev, EV_READ | EV_WRITE);
		return;
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		char why[128];
		int err = EVUTIL_SOCKET_ERROR();

		if (s->bstate == B_CONNECTING)
			snprintf(why, sizeof(why), "connect failed (%s)",
				 evutil_socket_error_to_string(err));
		else if (what & BEV_EVENT_EOF)
			snprintf(why, sizeof(why), "closed the connection");
		else
			snprintf(why, sizeof(why), "connection error (%s)",
				 evutil_socket_error_to_string(err));
		backend_lost(s, why);
	}
}

/* The any-address of `family` with `port`, bound to fd: 0, or -1 (errno). */
static int bind_port(int fd, int family, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = htons(port);
		len = sizeof(*s4);
	}
	return bind(fd, (struct sockaddr *)&ss, len);
}

/* A non-blocking socket to the backend, bound to `port` (0: any), its
 * connect under way or done: the fd, or -1 (errno). */
static int backend_dial(struct gw *gw, uint16_t port)
{
	const struct sockaddr *peer = (const struct sockaddr *)&gw->o.peer.ss;
	int fd, one = 1, err;

	fd = socket(peer->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* a port whose last connection is in TIME_WAIT may be bound again (the
	 * connect below says if its four-tuple is still taken) */
	if (port && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		     bind_port(fd, peer->sa_family, port)))
		goto fail;
	if (connect(fd, peer, gw->o.peer.len) == 0 || errno == EINPROGRESS)
		return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/*
 * The backend socket of s, connecting: from a reserved port when gw->resvport
 * (the one s had first, then 1023 down to 665; a port in use, or whose
 * connection to the backend is, is skipped), else, or when none is free, from
 * an ordinary one.  The fd, or -1 (errno: the connect failed at once).
 */
static int backend_socket(struct sconn *s)
{
	struct gw *gw = s->conn.gw;
	bool again = s->src_port >= GW_RESV_LOW && s->src_port <= GW_RESV_HIGH;
	unsigned port = again ? s->src_port : GW_RESV_HIGH;
	int fd;

	while (gw->resvport && port >= GW_RESV_LOW) {
		fd = backend_dial(gw, (uint16_t)port);
		if (fd >= 0)
			return fd;
		if (errno == EACCES || errno == EPERM) {
			gw->resvport = false;
			gw_log(gw,
			       "binding port %u: %s; the backend connections come from ordinary "
			       "ports from now on (its export needs `insecure`)",
			       port, strerror(errno));
			break;
		}
		if (errno != EADDRINUSE && errno != EADDRNOTAVAIL)
			return -1;
		if (again) {
			again = false;
			port = GW_RESV_HIGH + 1;
		}
		do
			port--;
		while (port == s->src_port);
		if (port < GW_RESV_LOW)
			gw_log(gw,
			       "conn %u: no reserved port free (%u-%u) for the backend connection: "
			       "connecting from an ordinary port",
			       s->conn.id, GW_RESV_LOW, GW_RESV_HIGH);
	}
	return backend_dial(gw, 0);
}

static void backend_connect(struct sconn *s)
{
	struct gw *gw = s->conn.gw;
	struct sockaddr_storage src;
	socklen_t len = sizeof(src);
	char why[128];
	int fd;

	if (s->bstate != B_IDLE || s->gone)
		return;
	s->bstate = B_CONNECTING;
	fd = backend_socket(s);
	if (fd < 0) {
		snprintf(why, sizeof(why), "connect failed (%s)", strerror(errno));
		backend_lost(s, why);
		return;
	}
	memset(&src, 0, sizeof(src));
	getsockname(fd, (struct sockaddr *)&src, &len);
	s->src_port = iwt_addr_port((struct sockaddr *)&src);
	iwt_addr_format((struct sockaddr *)&src, s->src, sizeof(s->src));
	s->bev = bufferevent_socket_new(gw->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!s->bev) {
		close(fd);
		backend_lost(s, "cannot create a socket");
		return;
	}
	bufferevent_setcb(s->bev, on_backend_read, NULL, on_backend_event, s);
	bufferevent_set_max_single_read(s->bev, GW_BEV_IO);
	bufferevent_set_max_single_write(s->bev, GW_BEV_IO);
	/* no address: the socket is connecting already; CONNECTED or an error
	 * comes to on_backend_event */
	if (bufferevent_socket_connect(s->bev, NULL, 0)) {
		backend_lost(s, "connect failed");
		return;
	}
	gw_debug(gw, "conn %u: client %s: connecting to backend %s from %s (%s port)", s->conn.id,
		 s->conn.peer, gw->o.peer.text, s->src,
		 s->src_port && s->src_port < 1024 ? "reserved" : "ordinary");
}

/* ---------------------------------------------------------------------- */
/* RPC-over-RDMA side                                                      */
/* ---------------------------------------------------------------------- */

static struct sconn *sconn_new(struct gw *gw, struct rpcrdma_conn *rc)
{
	struct sconn *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->retry_ev = evtimer_new(gw->base, on_retry, s);
	if (!s->retry_ev) {
		free(s);
		return NULL;
	}
	TAILQ_INIT(&s->pend);
	gw_rm_init(&s->rm, gw->o.max_record);
	snprintf(s->conn.peer, sizeof(s->conn.peer), "?");
	gw_conn_add(gw, &s->conn, rc);
	return s;
}

/* Stats lines list the connections whose client has not left. */
static const char *sconn_state(struct gw_conn *conn)
{
	struct sconn *s = sconn_of(conn);

	return s->gone ? NULL : bstate_names[s->bstate];
}

static void sconn_free(struct sconn *s)
{
	gw_conn_del(&s->conn);
	gw_rm_fini(&s->rm);
	if (s->retry_ev)
		event_free(s->retry_ev);
	free(s);
}

/* The client is gone: its calls have nowhere to be answered. */
static void sconn_gone(struct sconn *s)
{
	if (s->gone)
		return;
	s->gone = true;
	backend_close(s);
	drop_all(s);
}

/*
 * A connection the gateway has not seen yet: true when its client is in
 * --allow; else (logged by gw_allow) it is closed at once and made no longer
 * ours: its arg is NULL, so what the transport still reports of it (DOWN,
 * CLOSED, calls it sent before it saw the close) is dropped.
 */
static bool server_admit(struct gw *gw, struct rpcrdma_conn *rc)
{
	struct rpcrdma_conn_info info;

	if (!rpcrdma_conn_info(rc, &info) &&
	    gw_allow(gw, (const struct sockaddr *)&info.peer, "NFS/RDMA client"))
		return true;
	rpcrdma_conn_set_arg(rc, NULL);
	rpcrdma_close(rc);
	gw_kick(gw);
	return false;
}

/* The listener's admission (rpcrdma_listener_set_admit): --allow. */
static bool server_admit_peer(void *arg, const struct sockaddr *peer)
{
	return gw_allow(arg, peer, "NFS/RDMA client");
}

static void on_conn(void *arg, struct rpcrdma_conn *rc, enum rpcrdma_conn_event ev, int status)
{
	struct gw *gw = arg;
	struct sconn *s;
	struct rpcrdma_conn_info info;

	if (!gw)
		return; /* refused by server_admit */
	s = sconn_find(gw, rc);
	switch (ev) {
	case RPCRDMA_CONN_UP:
		if (!s && !server_admit(gw, rc))
			return;
		if (!s)
			s = sconn_new(gw, rc);
		if (!s) {
			gw_log(gw, "out of memory: closing a new connection");
			rpcrdma_close(rc);
			return;
		}
		s->up = true;
		if (!rpcrdma_conn_info(rc, &info)) {
			iwt_addr_format((struct sockaddr *)&info.peer, s->conn.peer,
					sizeof(s->conn.peer));
			gw_log(gw,
			       "conn %u: client %s connected (credits %u, bc %u, inline send %u "
			       "recv %u, %s, send-inv %s, rprc %s)",
			       s->conn.id, s->conn.peer, info.credits, info.bc_credits,
			       info.inline_send, info.inline_recv,
			       info.peer_pdata ? "RFC 8797 private data" : "no private data",
			       info.send_inv ? "on" : "off", info.rprc ? "on" : "off");
		} else {
			gw_log(gw, "conn %u: connected", s->conn.id);
		}
		backend_connect(s);
		break;
	case RPCRDMA_CONN_DOWN:
		if (!s)
			return;
		gw_log(gw, "conn %u: client %s lost (%s); closing its backend connection",
		       s->conn.id, s->conn.peer, status ? rpcrdma_errname(status) : "disconnected");
		sconn_gone(s);
		break;
	case RPCRDMA_CONN_CLOSED:
		if (!s)
			return;
		if (!s->gone)
			gw_log(gw, "conn %u: client %s closed%s%s", s->conn.id, s->conn.peer,
			       status ? ": " : "", status ? rpcrdma_errname(status) : "");
		sconn_gone(s);
		gw_conn_retire(&s->conn);
		s->conn.rc = NULL;
		if (s->bc_out == 0)
			sconn_free(s);
		break;
	}
}

static void on_call(void *arg, struct rpcrdma_req *req, const uint8_t *msg, size_t len)
{
	struct gw *gw = arg;
	struct rpcrdma_conn *rc = rpcrdma_req_conn(req);
	struct sconn *s;
	struct pend *p;
	uint32_t prog = 0, vers = 0, proc = 0;

	if (!gw) {
		/* a refused connection's (server_admit): never served */
		rpcrdma_req_drop(req);
		return;
	}
	s = sconn_find(gw, rc);
	if (!s && rc && gw->listener.rdma) {
		/* a call before UP was reported: take the connection now, if its
		 * client is allowed */
		if (!server_admit(gw, rc)) {
			rpcrdma_req_drop(req);
			return;
		}
		s = sconn_new(gw, rc);
		if (s) {
			struct rpcrdma_conn_info info;

			if (!rpcrdma_conn_info(rc, &info))
				iwt_addr_format((struct sockaddr *)&info.peer, s->conn.peer,
						sizeof(s->conn.peer));
			backend_connect(s);
		}
	}
	if (!s || s->gone) {
		rpcrdma_req_drop(req);
		gw_kick(gw);
		return;
	}
	if (len < GW_RPC_HDR_MIN) {
		s->conn.c.dropped++;
		rpcrdma_req_drop(req);
		gw_kick(gw);
		return;
	}
	p = malloc(sizeof(*p) + len);
	if (!p) {
		uint8_t err[GW_RPC_ERR_REPLY_LEN];

		gw_rpc_system_err(err, gw_rpc_xid(msg));
		rpcrdma_reply(req, err, sizeof(err));
		s->conn.c.errors++;
		gw_kick(gw);
		return;
	}
	p->q.req = req;
	p->q.xid = gw_rpc_xid(msg);
	p->sends = 0;
	p->len = len;
	memcpy(p->msg, msg, len);
	TAILQ_INSERT_TAIL(&s->pend, &p->q, link);
	s->npend++;
	s->conn.c.calls++;
	s->conn.c.bytes_calls += len;
	if (gw->o.verbose >= 2 && gw_rpc_call_info(msg, len, &prog, &vers, &proc))
		gw_debug(gw, "conn %u: call xid %#x prog %u vers %u proc %u, %zu octets",
			 s->conn.id, p->q.xid, prog, vers, proc, len);
	switch (s->bstate) {
	case B_UP:
		send_pend(s, p);
		break;
	case B_IDLE:
		backend_connect(s);
		break;
	default:
		break; /* sent when the backend connection is up */
	}
}

/* Whether this process may bind a reserved port (root, CAP_NET_BIND_SERVICE,
 * or a low net.ipv4.ip_unprivileged_port_start): the kernel checks that
 * before whether the port is free, so one bind says. */
static bool may_bind_reserved(const struct gw *gw, int *err)
{
	int fd = socket(gw->o.peer.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0) {
		*err = errno;
		return false;
	}
	ok = bind_port(fd, gw->o.peer.ss.ss_family, GW_RESV_HIGH) == 0 || errno == EADDRINUSE;
	*err = errno;
	close(fd);
	return ok;
}

static int server_start(struct gw *gw)
{
	int err = 0;

	if (gw->o.no_resvport) {
		gw_log(gw, "--no-resvport: the backend connections come from ordinary ports (its "
			   "export needs `insecure`)");
	} else if (may_bind_reserved(gw, &err)) {
		gw->resvport = true;
		gw_debug(gw, "the backend connections come from reserved ports (%u-%u)",
			 GW_RESV_LOW, GW_RESV_HIGH);
	} else {
		gw_log(gw,
		       "binding a reserved port: %s (not root, no CAP_NET_BIND_SERVICE); the "
		       "backend connections come from ordinary ports (its export needs "
		       "`insecure`)",
		       strerror(err));
	}
	gw->listener.rdma = rpcrdma_listen(gw->ctx, (struct sockaddr *)&gw->o.listen.ss,
					   gw->o.listen.len, 64, on_conn, on_call, gw);
	if (!gw->listener.rdma) {
		gw_log(gw, "cannot listen on %s: %s", gw->o.listen.text, strerror(errno));
		return -1;
	}
	/* --allow at the connection request: refused with an MPA reject before
	 * the transport makes anything for the connection */
	rpcrdma_listener_set_admit(gw->listener.rdma, server_admit_peer, gw);
	gw_log(gw, "listening for NFS/RDMA on %s (port %u)", gw->o.listen.text,
	       rpcrdma_listener_port(gw->listener.rdma));
	return 0;
}

static void server_stop(struct gw *gw)
{
	rpcrdma_listener_close(gw->listener.rdma);
	gw->listener.rdma = NULL;
}

/* The client is left: its calls are dropped, its backend connection closed. */
static void sconn_close(struct gw_conn *conn)
{
	struct sconn *s = sconn_of(conn);

	sconn_gone(s);
	rpcrdma_close(s->conn.rc);
}

static void sconn_release(struct gw_conn *conn)
{
	sconn_free(sconn_of(conn));
}

const struct gw_mode_ops gw_server_mode = {
	.name = "server",
	.listen = {"--listen", "iWARP", "0.0.0.0", GW_DEFAULT_RDMA_PORT},
	.peer = {"--backend", "NFS backend", "127.0.0.1", GW_DEFAULT_NFS_PORT},
	.bc_credits = 8, /* forward the backend's callbacks */
	.start = server_start,
	.stop = server_stop,
	.conn = {sconn_close, sconn_release, sconn_state},
};
