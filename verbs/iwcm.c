/* SPDX-License-Identifier: MIT */
/*
 * iwcm.c - the connection manager (iwcm.h): TCP connect/accept, the MPA
 * startup (RFC 5044 §7.1, RFC 6581) through the sans-I/O mpa_setup, the
 * hand-over of the stream to the QP, and teardown.
 *
 * Theory of operation.  Every cm id that carries a connection owns one
 * engine endpoint (iwv_engine.h).  The endpoint's callbacks route octets by
 * the id's state: during startup to mpa_setup, afterwards to the QP's
 * rdmap_qp; what leaves goes the same way (the MPA Request/Reply first, then
 * FPDUs).  Octets that follow the peer's MPA frame in the same read are the
 * first full-operation data and go to the QP at once.
 *
 *   active:  TCP_CONNECTING --connected--> MPA_REQ --Reply--> ESTABLISHED
 *   passive: (accepted) MPA_WAIT_REQ --Request--> CONNECT_REQUEST (event)
 *            --accept--> ACCEPTING --Reply written--> ESTABLISHED
 *                        --reject--> DOWN (Reply R=1 written, then close)
 *   both:    ESTABLISHED --disconnect--> CLOSING (rdmap_qp_close; FIN once
 *            everything queued is out) --peer FIN--> DOWN (DISCONNECTED)
 *            Peer FIN, reset, or a fatal QP error (Terminate out or in) also
 *            end in DOWN: after a Terminate we send FIN and wait for the
 *            peer's (bounded by close_timeout_ms, then RST).
 *
 * The id is its QP's link (iwv_qp_link.h): it feeds the QP's rdmap_qp,
 * starts it, drains its completions and flushes it; the QP calls back only to
 * kick (work posted) or detach (QP destroyed or moved to ERR).  Its timers
 * (startup timeout, first-FPDU pause, close wait) live in the context's timer
 * set.  A destroyed id is freed from a zero-delay timer once the engine has
 * released its endpoint, never inside an engine callback.
 *
 * Nothing posted is lost: whenever a connection ends, its QP is flushed.
 * Passive connections are bounded by the listen backlog (pending MPA
 * exchanges plus unanswered requests), so a flood of TCP connections costs
 * at most that many buffers: at the backlog, and when accept runs out of
 * descriptors, the listener stops accepting for a while and the kernel's
 * accept queue and the peers' SYN retries hold the rest back; a pending
 * connection that has not sent its MPA Request within handshake_grace_ms
 * gives its place to the next one (listener_update, ep_accepted).
 *
 * Liveness: every connection's socket gets TCP_USER_TIMEOUT from the start
 * and TCP keepalive once established (sock_liveness, iwcm_options); a peer
 * the kernel finds dead fails the socket with ETIMEDOUT, which ends the
 * connection as a reset does, and DISCONNECTED carries that errno.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iwarp/iwcm.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iw_bytes.h"
#include "iwv_ctx.h"
#include "iwv_qp_link.h"

enum id_state {
	ID_IDLE,
	ID_BOUND,
	ID_LISTEN,
	ID_ADDR_RESOLVED,
	ID_ROUTE_RESOLVED,
	ID_TCP_CONNECTING,
	ID_MPA_REQ,	    /* active: Request out, waiting for the Reply */
	ID_MPA_WAIT_REQ,    /* passive: waiting for the Request (the program does not know yet) */
	ID_CONNECT_REQUEST, /* passive: CONNECT_REQUEST delivered, waiting for accept/reject */
	ID_ACCEPTING,	    /* passive: Reply being written */
	ID_ESTABLISHED,
	ID_CLOSING, /* our graceful disconnect */
	ID_DOWN,    /* the connection is over (or ending) */
};

static const char *const id_state_names[] = {
	[ID_IDLE] = "IDLE",
	[ID_BOUND] = "BOUND",
	[ID_LISTEN] = "LISTEN",
	[ID_ADDR_RESOLVED] = "ADDR_RESOLVED",
	[ID_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
	[ID_TCP_CONNECTING] = "TCP_CONNECTING",
	[ID_MPA_REQ] = "MPA_REQ",
	[ID_MPA_WAIT_REQ] = "MPA_WAIT_REQ",
	[ID_CONNECT_REQUEST] = "CONNECT_REQUEST",
	[ID_ACCEPTING] = "ACCEPTING",
	[ID_ESTABLISHED] = "ESTABLISHED",
	[ID_CLOSING] = "CLOSING",
	[ID_DOWN] = "DOWN",
};

struct iwcm_chan_int {
	struct iwcm_event_channel pub;
	struct iwv_ctx *ctx;
	int efd;
	struct ev_int *head, *tail;
	int ids;
	/* Threads blocked in iwcm_get_cm_event.  A channel destroyed under them
	 * is only marked dead; the last of them to wake frees it (rping's CM
	 * thread is still blocked there when the program tears down). */
	int waiters;
	bool dead;
};

struct ev_int {
	struct iwcm_event pub;
	struct ev_int *next;
	uint8_t pd[MPA_PD_MAX];
};

struct iwcm_id_int {
	struct iwcm_id pub;
	struct iwcm_chan_int *ch;
	struct iwv_ctx *ctx;
	enum id_state state;
	struct iwcm_options opt;
	/* passive: the listening id while the connection is pending (MPA, CONNECT_REQUEST,
	 * accepting); the listener lists its pending children (kids, kid_prev/next) */
	struct iwcm_id_int *listener;
	struct iwcm_id_int *kids, *kid_prev, *kid_next;
	struct iwcm_id_int *kids_tail; /* listener: the oldest pending child */
	int pending;		       /* listener: children not yet accepted/rejected */
	uint64_t accepted_ns;	       /* passive: when the TCP connection was accepted */
	int sys_err;	  /* the socket's errno that ended the connection (ETIMEDOUT...) */
	bool close_clean; /* startup failed after a Terminate of ours: FIN, not reset */
	int backlog;
	int fd; /* socket before the ep owns it (bound, not yet listening/connecting) */
	struct iwv_ep ep;
	bool ep_on;	 /* added to the engine and not removed */
	bool ep_pending; /* removed, released() not yet called */
	bool freed;	 /* released: freed by t_free once the engine let go of ep */
	bool tx_mpa;	 /* the last tx_iov() offered MPA startup octets */
	bool in_tx;	 /* inside tx_done(): the engine loops by itself */
	bool fin_sent;
	bool close_after_mpa; /* reject: close once the Reply is out */
	bool estab;	      /* ESTABLISHED was reported: DISCONNECTED is owed */
	bool disc;	      /* DISCONNECTED was reported */
	bool orphan;	      /* passive id refused before the program saw it */
	int events_unacked;
	int queued; /* events on the channel's queue naming it (as id or listen_id) */
	/* The receive buffer of this connection alone (rxcap octets), or NULL
	 * while it reads into the context's shared one (rx_buffer()); rxcur is
	 * the one the engine's next recv fills. */
	uint8_t *rxbuf, *rxcur;
	size_t rxcap;
	bool rx_direct; /* rxcur is payload's target (rdmap_qp_rx_target) */
	struct mpa_setup *mpa;
	struct iwv_qp *qp; /* attached QP: we are its link (iwv_qp_link.h) */
	uint8_t conn_pd[MPA_PD_MAX];
	uint16_t conn_pd_len;
	/* in the context's timers: TCP connect + MPA timeout, the initiator's
	 * first-FPDU pause, the wait for the peer's FIN, freeing a released id,
	 * the next try of a refused connect */
	struct iw_timer t_setup, t_hold, t_close, t_free, t_retry;
	/* receiver not ready (iwv_qp_init_attr.rnr_hold_ms): a message waits for a
	 * receive; the octets not yet taken, rxbuf[held_off, + held_len), wait with
	 * it and the engine reads nothing more until t_rnr gives up */
	struct iw_timer t_rnr;
	/* listener: out of descriptors or memory, accepting again after a pause */
	struct iw_timer t_accept;
	/* listener at its backlog: when its oldest silent child may give way */
	struct iw_timer t_evict;
	size_t held_off, held_len;
	bool held;
	uint64_t retry_until;	/* a refused TCP connect is tried again until then (ns) */
	struct iw_list reclaim; /* on ctx->reclaim from release to free */
};

static const struct iwv_ep_ops stream_ops, listen_ops;

static void trace(struct iwcm_id_int *id, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void trace(struct iwcm_id_int *id, const char *fmt, ...)
{
	va_list ap;

	if (!id->opt.trace)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "iwcm[%p %s]: ", (void *)id, id_state_names[id->state]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void set_state(struct iwcm_id_int *id, enum id_state st)
{
	if (id->state != st && id->opt.trace)
		fprintf(stderr, "iwcm[%p]: %s -> %s\n", (void *)id, id_state_names[id->state],
			id_state_names[st]);
	id->state = st;
}

/* One tcp(7) option; a failure is traced, not fatal (a socketpair handed in by a
 * test has none of them, and the connection works without). */
static void sock_opt(struct iwcm_id_int *id, int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)) != 0)
		trace(id, "setsockopt %s %d: %s", what, val, strerror(errno));
}

/*
 * Liveness (iwcm_options.user_timeout_ms, keepalive_*).  TCP_USER_TIMEOUT
 * from the start: it bounds the TCP connect and the MPA exchange as well
 * (tcp(7): it also applies to SYN retransmissions), though timeout_ms is
 * the tighter bound there.  The keepalive once established: before that the
 * startup timeout bounds everything.  A connection found dead by the kernel
 * fails its reads and writes with ETIMEDOUT: conn_lost, and the QP flushes.
 */
static void sock_liveness(struct iwcm_id_int *id, int fd, bool established)
{
	const struct iwcm_options *o = &id->opt;

	if (fd < 0)
		return;
	if (!established) {
		if (o->user_timeout_ms)
			sock_opt(id, fd, IPPROTO_TCP, TCP_USER_TIMEOUT, (int)o->user_timeout_ms,
				 "TCP_USER_TIMEOUT");
		return;
	}
	if (!o->keepalive_idle_s)
		return;
	sock_opt(id, fd, IPPROTO_TCP, TCP_KEEPIDLE, o->keepalive_idle_s, "TCP_KEEPIDLE");
	sock_opt(id, fd, IPPROTO_TCP, TCP_KEEPINTVL, o->keepalive_intvl_s, "TCP_KEEPINTVL");
	sock_opt(id, fd, IPPROTO_TCP, TCP_KEEPCNT, o->keepalive_cnt, "TCP_KEEPCNT");
	sock_opt(id, fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
}

/* The MPA options of an id and the mpa_config they become (both directions). */
static void mpa_opts_from(const struct mpa_config *c, struct iwcm_options *o)
{
	o->mpa_rev = c->rev;
	o->crc = c->crc;
	o->markers = c->markers;
	o->accept_markers = c->accept_markers;
	o->p2p = c->p2p;
	o->rtr = c->rtr;
	o->timeout_ms = (uint32_t)(c->timeout_ns / 1000000u);
}

/*
 * Liveness defaults (docs/verbs.md, "Liveness and handshake limits").  An
 * RDMA consumer expects a dead peer to be reported in tens of seconds, as an
 * RNIC's retransmission limit does, not after the kernel's ~15 minutes of
 * tcp_retries2 (tcp(7)); but a brief outage (a link flap, a route change)
 * must not kill an established connection: 30 s of unacknowledged data, and
 * an idle connection probed after 30 s, every 10 s - with the user timeout
 * set, tcp(7) says it, not TCP_KEEPCNT, decides when unanswered probes end
 * the connection: about idle + interval = 40 s for an idle dead peer.
 */
#define IWCM_USER_TIMEOUT_MS   30000
#define IWCM_KEEPALIVE_IDLE_S  30
#define IWCM_KEEPALIVE_INTVL_S 10
#define IWCM_KEEPALIVE_CNT     3
/*
 * A real initiator sends its MPA Request (at most 532 octets: one segment)
 * right after the TCP handshake.  5 s leave it two retransmissions of it
 * (RFC 6298 §2.1, §5.5: 1 s initial RTO, doubled: 1 + 2 s) with room to
 * spare, and are half the default MPA timeout: under a flood of silent
 * connections a legitimate client waits about 5 s, not timeout_ms for each
 * backlog's worth of the flood ahead of it.
 */
#define IWCM_HANDSHAKE_GRACE_MS 5000
/* tcp(7) limits of TCP_KEEPIDLE/TCP_KEEPINTVL (MAX_TCP_KEEPIDLE) and TCP_KEEPCNT */
#define IWCM_KEEPALIVE_S_MAX   32767
#define IWCM_KEEPALIVE_CNT_MAX 127

/* The MPA layer's defaults (mpa_config_default), and the CM's own timers. */
void iwcm_options_default(struct iwcm_options *opt)
{
	struct mpa_config c;

	mpa_config_default(&c);
	*opt = (struct iwcm_options){.first_fpdu_delay_ms = 20,
				     .close_timeout_ms = 2000,
				     .user_timeout_ms = IWCM_USER_TIMEOUT_MS,
				     .keepalive_idle_s = IWCM_KEEPALIVE_IDLE_S,
				     .keepalive_intvl_s = IWCM_KEEPALIVE_INTVL_S,
				     .keepalive_cnt = IWCM_KEEPALIVE_CNT,
				     .handshake_grace_ms = IWCM_HANDSHAKE_GRACE_MS};
	mpa_opts_from(&c, opt);
}

static const char *const event_names[] = {
	[IWCM_EVENT_ADDR_RESOLVED] = "ADDR_RESOLVED",
	[IWCM_EVENT_ADDR_ERROR] = "ADDR_ERROR",
	[IWCM_EVENT_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
	[IWCM_EVENT_ROUTE_ERROR] = "ROUTE_ERROR",
	[IWCM_EVENT_CONNECT_REQUEST] = "CONNECT_REQUEST",
	[IWCM_EVENT_CONNECT_RESPONSE] = "CONNECT_RESPONSE",
	[IWCM_EVENT_CONNECT_ERROR] = "CONNECT_ERROR",
	[IWCM_EVENT_UNREACHABLE] = "UNREACHABLE",
	[IWCM_EVENT_REJECTED] = "REJECTED",
	[IWCM_EVENT_ESTABLISHED] = "ESTABLISHED",
	[IWCM_EVENT_DISCONNECTED] = "DISCONNECTED",
	[IWCM_EVENT_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
	[IWCM_EVENT_MULTICAST_JOIN] = "MULTICAST_JOIN",
	[IWCM_EVENT_MULTICAST_ERROR] = "MULTICAST_ERROR",
	[IWCM_EVENT_ADDR_CHANGE] = "ADDR_CHANGE",
	[IWCM_EVENT_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
};

const char *iwcm_event_str(enum iwcm_event_type event)
{
	if ((unsigned)event < IW_ARRAY_SIZE(event_names) && event_names[event])
		return event_names[event];
	return "UNKNOWN";
}

/* ---------------------------------------------------------------------- */
/* Events                                                                   */
/* ---------------------------------------------------------------------- */

static struct ev_int *ev_post(struct iwcm_id_int *id, enum iwcm_event_type type, int status,
			      int iw_err)
{
	struct iwcm_chan_int *ch = id->ch;
	struct ev_int *ev = calloc(1, sizeof(*ev));

	if (!ev) {
		/* Nothing sensible can be done without memory for an event; the
		 * connection state is still right, only the report is lost. */
		return NULL;
	}
	ev->pub.id = &id->pub;
	ev->pub.event = type;
	ev->pub.status = status;
	ev->pub.iw_err = iw_err;
	if (ch->tail)
		ch->tail->next = ev;
	else
		ch->head = ev;
	ch->tail = ev;
	id->queued++;
	iwv_efd_signal(ch->efd, true);
	trace(id, "event %s status %d (%s)", iwcm_event_str(type), status,
	      iw_err ? iwv_errname(iw_err) : "ok");
	return ev;
}

static void ev_set_pd(struct ev_int *ev, const uint8_t *pd, size_t len)
{
	len = IW_MIN(len, sizeof(ev->pd));
	if (len)
		memcpy(ev->pd, pd, len);
	ev->pub.param.conn.private_data = len ? ev->pd : NULL;
	ev->pub.param.conn.private_data_len = (uint8_t)IW_MIN(len, 255u);
	ev->pub.param.conn.private_data_len16 = (uint16_t)len;
}

static void ev_set_params(struct ev_int *ev, const struct mpa_params *p)
{
	ev->pub.mpa.mpa_rev = p->rev;
	ev->pub.mpa.crc = p->crc;
	ev->pub.mpa.markers_tx = p->markers_tx;
	ev->pub.mpa.markers_rx = p->markers_rx;
	ev->pub.mpa.p2p = p->p2p;
	ev->pub.mpa.rtr = p->rtr;
	ev->pub.mpa.ird = p->ird;
	ev->pub.mpa.ord = p->ord;
	ev->pub.param.conn.responder_resources = (uint8_t)IW_MIN(p->ird, 255u);
	ev->pub.param.conn.initiator_depth = (uint8_t)IW_MIN(p->ord, 255u);
}

/* ---------------------------------------------------------------------- */
/* Timers                                                                   */
/* ---------------------------------------------------------------------- */

/* Arm one of the id's timers `ms` from now. */
static void id_timer_in(struct iwcm_id_int *id, struct iw_timer *t, uint32_t ms)
{
	iwv_ctx_timer_arm(id->ctx, t, iwv_now_ns() + (uint64_t)ms * 1000000u);
}

static void id_timer_stop(struct iwcm_id_int *id, struct iw_timer *t)
{
	iw_timer_cancel(&id->ctx->timers, t);
}

/* The connection timers (the startup timeout, the first-FPDU pause, the close wait). */
static void id_conn_timers_stop(struct iwcm_id_int *id)
{
	id_timer_stop(id, &id->t_setup);
	id_timer_stop(id, &id->t_hold);
	id_timer_stop(id, &id->t_close);
	id_timer_stop(id, &id->t_retry);
	id_timer_stop(id, &id->t_rnr);
	id_timer_stop(id, &id->t_accept);
	id_timer_stop(id, &id->t_evict);
}

static struct rdmap_qp *id_rq(const struct iwcm_id_int *id)
{
	return id->qp ? iwv_qp_rdmap(id->qp) : NULL;
}

/* ---------------------------------------------------------------------- */
/* Connection teardown                                                      */
/* ---------------------------------------------------------------------- */

static void id_free(struct iwcm_id_int *id)
{
	id_conn_timers_stop(id);
	id_timer_stop(id, &id->t_free);
	if (id->fd >= 0)
		close(id->fd);
	free(id->rxbuf);
	free(id->mpa);
	free(id);
}

static void conn_kick(struct iwcm_id_int *id)
{
	if (id->ep_on && id->ep.kind == IWV_EP_STREAM && !id->in_tx)
		iwv_engine_kick_tx(id->ctx->eng, &id->ep);
}

/* The connection is over: close the socket, flush the QP, report DISCONNECTED once. */
static void conn_end(struct iwcm_id_int *id, bool abort)
{
	if (id->ep_on) {
		id->ep_on = false;
		id->ep_pending = true;
		iwv_engine_remove(id->ctx->eng, &id->ep, abort);
	}
	id_conn_timers_stop(id);
	set_state(id, ID_DOWN);
	if (id->qp && id->qp->state != IWV_QPS_ERR)
		iwv_qp_flush_all(id->qp);
	if (id->estab && !id->disc) {
		int err = id->qp ? rdmap_qp_error(id_rq(id)) : 0;

		/* The peer's FIN ending the stream is how a disconnect looks from this
		 * side: not an error.  A reset, a Terminate or a timeout is. */
		if (!abort && err == IW_EMPA_CLOSED)
			err = 0;
		/* The socket's own error says more than "closed": ETIMEDOUT is a
		 * peer the kernel found dead (user timeout, keepalive). */
		if (id->sys_err && (err == 0 || err == IW_EMPA_CLOSED))
			err = iw_err_sys(id->sys_err);
		id->disc = true;
		ev_post(id, IWCM_EVENT_DISCONNECTED, 0, err);
	}
}

/* A listener out of descriptors or memory tries again after this pause. */
#define ACCEPT_RETRY_MS 100

/*
 * The child of listener `l` that may give way to a new connection: the
 * oldest one still waiting for its whole MPA Request (ID_MPA_WAIT_REQ),
 * if it has waited handshake_grace_ms.  NULL if none may; then *when is
 * the time the oldest waiting one may (0: none waits).  Children are kept
 * newest first, so the walk from the tail meets the oldest first and stops
 * at the first one waiting for its Request.
 */
static struct iwcm_id_int *evictable(struct iwcm_id_int *l, uint64_t now, uint64_t *when)
{
	uint64_t grace = (uint64_t)l->opt.handshake_grace_ms * 1000000u;

	*when = 0;
	if (!l->opt.handshake_grace_ms)
		return NULL;
	for (struct iwcm_id_int *c = l->kids_tail; c; c = c->kid_prev) {
		if (c->state != ID_MPA_WAIT_REQ)
			continue;
		if (now - c->accepted_ns >= grace)
			return c;
		*when = c->accepted_ns + grace;
		return NULL;
	}
	return NULL;
}

/*
 * A listener takes new connections while it has room for them: fewer than
 * `backlog` children pending (in their MPA exchange or waiting for the
 * program's answer) and descriptors to spare (no t_accept pause).  Without
 * room it is paused in the engine and the connections wait in the kernel's
 * accept queue, and past that the peers' TCP retries its SYN: back-pressure,
 * never a reset of a new connection.  But when the oldest pending child
 * still waiting for its MPA Request has waited handshake_grace_ms, the
 * listener accepts again and that child is reset for the next one
 * (ep_accepted): a flood of silent or dribbling connections cannot hold
 * the backlog for timeout_ms at a time.
 */
static void listener_update(struct iwcm_id_int *l)
{
	bool full = l->pending >= l->backlog;

	if (full) {
		uint64_t when;

		/* a silent child may give way: take the next connection (ep_accepted) */
		if (evictable(l, iwv_now_ns(), &when))
			full = false;
		else if (when && (!iw_timer_armed(&l->t_evict) || l->t_evict.due != when))
			iwv_ctx_timer_arm(l->ctx, &l->t_evict, when);
	}
	if (l->ep_on && l->ep.kind == IWV_EP_LISTEN)
		iwv_engine_rx_pause(l->ctx->eng, &l->ep, full || iw_timer_armed(&l->t_accept));
}

/* A new pending child of listener `l`. */
static void child_add(struct iwcm_id_int *l, struct iwcm_id_int *id)
{
	id->listener = l;
	id->kid_prev = NULL;
	id->kid_next = l->kids;
	if (l->kids)
		l->kids->kid_prev = id;
	else
		l->kids_tail = id;
	l->kids = id;
	l->pending++;
	if (l->pending == l->backlog)
		trace(l, "%d connections pending: no more accepted for now", l->backlog);
	listener_update(l);
}

/* The child is no longer pending (accepted, rejected, failed, or its listener goes). */
static void child_dropped(struct iwcm_id_int *id)
{
	struct iwcm_id_int *l = id->listener;

	if (!l)
		return;
	if (id->kid_prev)
		id->kid_prev->kid_next = id->kid_next;
	else
		l->kids = id->kid_next;
	if (id->kid_next)
		id->kid_next->kid_prev = id->kid_prev;
	else
		l->kids_tail = id->kid_prev;
	id->kid_prev = id->kid_next = NULL;
	l->pending--;
	id->listener = NULL;
	listener_update(l);
}

static void id_free_fire(struct iw_timer *t, uint64_t now)
{
	struct iwcm_id_int *id = iw_container_of(t, struct iwcm_id_int, t_free);

	iw_list_del(&id->reclaim);
	id_free(id);
}

/* Free a released id from the timers (outside every engine callback) once
 * the engine has let go of its endpoint. */
static void id_free_when_released(struct iwcm_id_int *id)
{
	if (id->freed && !id->ep_on && !id->ep_pending)
		iwv_ctx_timer_arm(id->ctx, &id->t_free, 0);
}

/*
 * The id is gone for the program (or was never known to it).  It is freed
 * once the engine has released its endpoint (ep_released), from a timer:
 * never inside an engine callback, which may still be running on it.  Until
 * then it stays on ctx->reclaim, so that iwv_close_device waits for it.
 */
static void id_release(struct iwcm_id_int *id)
{
	id->freed = true;
	iw_list_add_tail(&id->ctx->reclaim, &id->reclaim);
	id_conn_timers_stop(id);
	id_free_when_released(id);
}

/*
 * The startup failed.  An active id reports it (REJECTED / UNREACHABLE /
 * CONNECT_ERROR); a passive one the program has seen gets CONNECT_ERROR; one
 * it has not seen simply disappears.  `iw_err` is the cause as the event's
 * iw_err reports it (IW_ESYS(errno) when the socket failed); `sys_err` the
 * errno behind the event's status, as librdmacm reports it (0: -EPROTO).
 */
/* Interval between tries of a refused connect (iwcm_options.connect_retry_ms). */
#define CONNECT_RETRY_EVERY_MS 50

static void setup_failed(struct iwcm_id_int *id, int iw_err, int sys_err)
{
	enum id_state was = id->state;
	enum iwcm_event_type type = IWCM_EVENT_CONNECT_ERROR;
	int status = sys_err ? -sys_err : -EPROTO;

	/* Nothing listens there yet (a server that tells its port before it
	 * listens): try again shortly, within the bound the options give. */
	if (was == ID_TCP_CONNECTING && sys_err == ECONNREFUSED && iwv_now_ns() < id->retry_until) {
		trace(id, "connection refused: trying again in %d ms", CONNECT_RETRY_EVERY_MS);
		if (id->ep_on) {
			id->ep_on = false;
			id->ep_pending = true;
			iwv_engine_remove(id->ctx->eng, &id->ep, true);
		}
		id_timer_stop(id, &id->t_setup);
		set_state(id, ID_ROUTE_RESOLVED);
		id_timer_in(id, &id->t_retry, CONNECT_RETRY_EVERY_MS);
		return;
	}
	trace(id, "startup failed: %s, errno %d", iwv_errname(iw_err), sys_err);
	conn_end(id, !id->close_clean);
	switch (was) {
	case ID_TCP_CONNECTING:
	case ID_MPA_REQ:
		if (sys_err == ECONNREFUSED) {
			type = IWCM_EVENT_REJECTED;
		} else if (sys_err == ETIMEDOUT || sys_err == EHOSTUNREACH ||
			   sys_err == ENETUNREACH || iw_err == IW_EMPA_TIMEOUT) {
			type = IWCM_EVENT_UNREACHABLE;
			status = sys_err ? -sys_err : -ETIMEDOUT;
		}
		ev_post(id, type, status, iw_err);
		break;
	case ID_CONNECT_REQUEST:
	case ID_ACCEPTING:
		child_dropped(id);
		ev_post(id, IWCM_EVENT_CONNECT_ERROR, status, iw_err);
		break;
	case ID_MPA_WAIT_REQ:
		child_dropped(id);
		id->ch->ids--;
		id_release(id);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* Full operation glue                                                      */
/* ---------------------------------------------------------------------- */

static uint32_t conn_mulpdu(struct iwcm_id_int *id, bool markers_tx)
{
	int mss = 0;
	socklen_t sl = sizeof(mss);
	uint32_t m;

	if (getsockopt(id->ep.fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &sl) != 0 || mss <= 0)
		mss = 1460;
	m = mpa_mulpdu((uint32_t)mss, markers_tx);
	if (id->opt.mulpdu_max >= MPA_MULPDU_MIN && m > id->opt.mulpdu_max)
		m = id->opt.mulpdu_max;
	return m;
}

/* MPA is done: start the QP with what was negotiated. */
static int qp_go(struct iwcm_id_int *id, const struct mpa_params *p, bool initiator)
{
	int r = iwv_qp_start(id->qp, conn_mulpdu(id, p->markers_tx), initiator, p);

	if (r != IW_OK)
		return r;
	if (initiator && id->opt.first_fpdu_delay_ms)
		id_timer_in(id, &id->t_hold, id->opt.first_fpdu_delay_ms);
	trace(id, "full operation: rev %u crc %d markers tx %d rx %d p2p %d rtr %u ird %u ord %u",
	      p->rev, p->crc, p->markers_tx, p->markers_rx, p->p2p, p->rtr,
	      IW_MIN(p->ird, (uint16_t)IWV_QP_IRD_CAP), IW_MIN(p->ord, (uint16_t)IWV_QP_ORD_CAP));
	return IW_OK;
}

/* After the QP consumed or produced something: completions, FIN, death. */
static void conn_after(struct iwcm_id_int *id)
{
	struct iwv_qp *qp = id->qp;
	struct rdmap_qp *rq = id_rq(id);
	enum rdmap_qp_state st;

	if (!qp)
		return;
	iwv_qp_drain(qp);
	conn_kick(id);
	if (!id->ep_on)
		return;
	st = rdmap_qp_state(rq);
	if (id->fin_sent)
		return;
	if ((st == RDMAP_QP_CLOSING && rdmap_qp_tx_done(rq)) || st == RDMAP_QP_ERROR) {
		/* Graceful close done, or our/their Terminate: FIN after what is queued,
		 * then wait (bounded) for the peer's. */
		id->fin_sent = true;
		if (st == RDMAP_QP_ERROR)
			trace(id, "QP failed: %s", iwv_errname(rdmap_qp_error(rq)));
		iwv_engine_shutdown_wr(id->ctx->eng, &id->ep);
		id_timer_in(id, &id->t_close, id->opt.close_timeout_ms);
	}
}

static void conn_lost(struct iwcm_id_int *id, ssize_t n);

/*
 * Receive buffers.  With an engine that uses the buffer it is given only for
 * the recv() it was asked for and the rx callback right after it (epoll:
 * iwv_engine_rx_lent() false), every connection of a context reads into the
 * context's one shared buffer (rx_buf_size octets): ep_rx frames, checks and
 * places the octets, or copies what it keeps (a partial header, a Read
 * Request, a Terminate) into the connection's state, before it returns.  So
 * an idle connection holds no receive memory, and 4,096 busy ones touch one
 * buffer, not 4,096.  A connection has a buffer of its own only while it
 * must keep octets the QP did not take (receiver not ready: rx_hold copies
 * them out), for a read started while another connection's octets are being
 * processed (a posted receive resumes a held stream), and always with
 * io_uring, whose recv keeps its buffer while in flight.
 *
 * With epoll and attr.rx_direct, the payload of a large segment skips the
 * buffer (off by default: measured slower on loopback, docs/architecture.md
 * section 1, step 8): ep_rx_buf first asks the QP where the next octets
 * belong (rdmap_qp_rx_target); a span of payload with one contiguous target
 * is read straight into it and reported with rdmap_qp_rx_placed, and
 * otherwise the QP may bound the read so it ends after the next header
 * (while large segments arrive).
 */
static uint8_t *rx_own_alloc(struct iwcm_id_int *id)
{
	id->rxbuf = malloc(id->ctx->attr.rx_buf_size);
	id->rxcap = id->rxbuf ? id->ctx->attr.rx_buf_size : 0;
	return id->rxbuf;
}

/* The buffer the next recv of id fills ((NULL, 0) without memory). */
static uint8_t *rx_buffer(struct iwcm_id_int *id, size_t *len)
{
	struct iwv_ctx *ctx = id->ctx;

	if (!id->rxbuf && !iwv_engine_rx_lent(ctx->eng) && !ctx->rx_shared_busy) {
		if (!ctx->rx_shared)
			ctx->rx_shared = malloc(ctx->attr.rx_buf_size);
		if (ctx->rx_shared) {
			*len = ctx->attr.rx_buf_size;
			return ctx->rx_shared;
		}
	}
	if (!id->rxbuf)
		rx_own_alloc(id);
	*len = id->rxcap;
	return id->rxbuf;
}

/* The connection's own buffer goes once it keeps nothing (not with io_uring). */
static void rx_private_drop(struct iwcm_id_int *id)
{
	if (!id->rxbuf || id->held || iwv_engine_rx_lent(id->ctx->eng))
		return;
	free(id->rxbuf);
	id->rxbuf = NULL;
	id->rxcap = 0;
}

/*
 * Receiver not ready: the QP stopped at a message that found no receive
 * (rdmap_qp_rx_held).  Keep the octets it did not take (at buf, inside
 * rxbuf), read nothing more, and wait for a receive (link_rx_resume) or
 * the end of rnr_hold_ms (on_rnr_timeout).
 */
static void rx_hold(struct iwcm_id_int *id, const uint8_t *buf, size_t n)
{
	if (!id->rxbuf || buf < id->rxbuf || buf >= id->rxbuf + id->rxcap) {
		/* in the context's shared buffer, which the next read of any
		 * connection overwrites: the octets move to a buffer of ours */
		uint8_t *own = malloc(n ? n : 1);

		if (!own) {
			trace(id, "no memory to keep %zu octets for a receive", n);
			conn_lost(id, -ENOMEM);
			return;
		}
		memcpy(own, buf, n);
		free(id->rxbuf);
		id->rxbuf = own;
		id->rxcap = n;
		buf = own;
	}
	id->held = true;
	id->held_off = (size_t)(buf - id->rxbuf);
	id->held_len = n;
	if (id->ep_on)
		iwv_engine_rx_pause(id->ctx->eng, &id->ep, true);
	if (!iw_timer_armed(&id->t_rnr)) {
		trace(id, "a message waits for a receive (up to %u ms)",
		      iwv_qp_rnr_hold_ms(id->qp));
		id_timer_in(id, &id->t_rnr, iwv_qp_rnr_hold_ms(id->qp));
	}
}

/* Offer the held octets again; once all are taken, read on. */
static void rx_feed_held(struct iwcm_id_int *id)
{
	const uint8_t *p = id->rxbuf + id->held_off;
	size_t n = id->held_len;
	ssize_t r;

	id->held = false;
	id->held_len = 0;
	r = rdmap_qp_read_stream(id_rq(id), p, n);
	if (r >= 0 && rdmap_qp_rx_held(id_rq(id))) {
		/* octets taken: the message held before went on, a later one waits
		 * now, with a wait of its own */
		if (r > 0)
			id_timer_stop(id, &id->t_rnr);
		rx_hold(id, p + r, n - (size_t)r);
		return;
	}
	id_timer_stop(id, &id->t_rnr);
	id->held_off = 0;
	rx_private_drop(id);
	if (id->ep_on)
		iwv_engine_rx_pause(id->ctx->eng, &id->ep, false);
}

static void qp_rx(struct iwcm_id_int *id, const uint8_t *buf, size_t n)
{
	ssize_t r;

	if (!id->qp || n == 0)
		return;
	r = rdmap_qp_read_stream(id_rq(id), buf, n);
	if (r >= 0 && rdmap_qp_rx_held(id_rq(id)))
		rx_hold(id, buf + r, n - (size_t)r);
	conn_after(id);
}

/* The stream ended (n == 0: FIN) or broke (n < 0). */
static void conn_lost(struct iwcm_id_int *id, ssize_t n)
{
	switch (id->state) {
	case ID_TCP_CONNECTING:
	case ID_MPA_REQ:
	case ID_MPA_WAIT_REQ:
	case ID_CONNECT_REQUEST: {
		int closed = id->mpa ? mpa_setup_handle_close(id->mpa) : IW_EMPA_CLOSED;

		/* a reset's errno says more than MPA's "closed" (or "truncated") */
		setup_failed(id, n < 0 ? iw_err_sys((int)-n) : closed,
			     n < 0 ? (int)-n : ECONNRESET);
		return;
	}
	case ID_ACCEPTING:
		/* accepted, but the peer left before our Reply was out: the program
		 * gets CONNECT_ERROR (no ESTABLISHED was reported) */
		if (!id->estab) {
			if (id->qp)
				rdmap_qp_llp_failed(id_rq(id),
						    n < 0 ? iw_err_sys((int)-n) : IW_EMPA_CLOSED);
			setup_failed(id, n < 0 ? iw_err_sys((int)-n) : IW_EMPA_CLOSED,
				     n < 0 ? (int)-n : ECONNRESET);
			return;
		}
		break;
	default:
		break;
	}
	if (n < 0) {
		id->sys_err = (int)-n;
		trace(id, "connection broken: %s", strerror((int)-n));
	}
	if (id->qp) {
		if (n < 0)
			iwv_qp_llp_broken(id->qp); /* a reset, not a FIN: QP_FATAL */
		/* the socket's errno (a reset, a peer found dead) is what the
		 * flushed work requests carry, not a plain "closed" */
		rdmap_qp_llp_failed(id_rq(id), n < 0 ? iw_err_sys((int)-n) : IW_EMPA_CLOSED);
		iwv_qp_drain(id->qp);
	}
	conn_end(id, n < 0);
}

/* ---------------------------------------------------------------------- */
/* MPA startup                                                              */
/* ---------------------------------------------------------------------- */

static void mpa_config_from(const struct iwcm_options *o, uint8_t ird, uint8_t ord,
			    struct mpa_config *c)
{
	*c = (struct mpa_config){.rev = o->mpa_rev,
				 .crc = o->crc,
				 .markers = o->markers,
				 .accept_markers = o->accept_markers,
				 .p2p = o->p2p,
				 .rtr = o->rtr,
				 .ird = ird ? ird : IWV_QP_RD_DEFAULT,
				 .ord = ord ? ord : IWV_QP_RD_DEFAULT,
				 .timeout_ns = (uint64_t)o->timeout_ms * 1000000u};
}

/*
 * Full operation began and every octet of our frame is written: the
 * startup state (about 1.6 KiB: both frames and the peer's private data) is
 * not needed again, and a server holding thousands of idle connections
 * should not keep it.  Everything after this point goes to the QP (ep_rx,
 * ep_tx_iov), and the few readers of id->mpa check it for NULL.
 */
static void mpa_release(struct iwcm_id_int *id)
{
	if (!id->mpa || !id->estab || mpa_setup_tx_pending(id->mpa, NULL) > 0)
		return;
	free(id->mpa);
	id->mpa = NULL;
}

static void on_reply(struct iwcm_id_int *id, const uint8_t *rest, size_t rest_len)
{
	const struct mpa_frame *f = mpa_setup_peer_frame(id->mpa);
	struct mpa_params p;
	struct ev_int *ev;
	int r;

	if (id->mpa->state == MPA_SETUP_REJECTED) {
		conn_end(id, false);
		if (id->qp)
			iwv_qp_flush_all(id->qp);
		ev = ev_post(id, IWCM_EVENT_REJECTED, -ECONNREFUSED, IW_EMPA_REJECTED);
		if (ev && f)
			ev_set_pd(ev, f->pd, f->pd_len);
		return;
	}
	mpa_setup_params(id->mpa, &p);
	r = qp_go(id, &p, true);
	if (r != IW_OK) {
		setup_failed(id, r, 0);
		return;
	}
	id_timer_stop(id, &id->t_setup);
	set_state(id, ID_ESTABLISHED);
	id->estab = true;
	sock_liveness(id, id->ep.fd, true);
	ev = ev_post(id, IWCM_EVENT_ESTABLISHED, 0, 0);
	if (ev) {
		ev_set_params(ev, &p);
		if (f)
			ev_set_pd(ev, f->pd, f->pd_len);
	}
	mpa_release(id);
	if (rest_len)
		qp_rx(id, rest, rest_len);
	else
		conn_after(id);
}

static void on_request(struct iwcm_id_int *id)
{
	const struct mpa_frame *f = mpa_setup_peer_frame(id->mpa);
	struct ev_int *ev;

	if (id->mpa->state == MPA_SETUP_REJECTED) {
		/* mpa_setup answered by itself (a Markers demand we do not accept). */
		trace(id, "request refused by the MPA options");
		child_dropped(id);
		id->orphan = true;
		id->close_after_mpa = true;
		set_state(id, ID_DOWN);
		conn_kick(id);
		return;
	}
	if (!id->listener) {
		setup_failed(id, IW_EMPA_LOCAL, ECONNABORTED);
		return;
	}
	set_state(id, ID_CONNECT_REQUEST);
	ev = ev_post(id, IWCM_EVENT_CONNECT_REQUEST, 0, 0);
	if (!ev)
		return;
	ev->pub.listen_id = &id->listener->pub;
	id->listener->queued++;
	ev_set_pd(ev, f->pd, f->pd_len);
	ev->pub.mpa.mpa_rev = f->rev;
	ev->pub.mpa.crc = f->crc;
	ev->pub.mpa.markers_tx = f->markers;
	ev->pub.mpa.p2p = f->enhanced && f->p2p;
	ev->pub.mpa.rtr = f->enhanced ? f->rtr : 0;
	ev->pub.mpa.ird = f->enhanced ? f->ird : 0;
	ev->pub.mpa.ord = f->enhanced ? f->ord : 0;
	/* What the peer asks of us, as librdmacm reports it: its ORD is our IRD. */
	ev->pub.param.conn.responder_resources = f->enhanced ? (uint8_t)IW_MIN(f->ord, 255u) : 0;
	ev->pub.param.conn.initiator_depth = f->enhanced ? (uint8_t)IW_MIN(f->ird, 255u) : 0;
}

/*
 * The initiator cannot go on with the Reply it got: its IRD is below the
 * responder's ORD (MPA error 6) or none of the RTR forms offered is one it can
 * send (error 7).  RFC 6581 §8 and §9 have it say so in a Terminate (Layer 2
 * LLP, Error Type 0 MPA, no header copied: RFC 5040 §4.8) in the framing
 * the two frames negotiated - full operation has begun on our side - and then
 * close; the caller closes with a FIN, not a reset, so the Terminate arrives.
 */
static void startup_term(struct iwcm_id_int *id, int err)
{
	const struct mpa_frame *f = mpa_setup_peer_frame(id->mpa);
	struct iw_term_code code;
	struct rdmap_term t;
	struct ddp_hdr h = {.tagged = false,
			    .last = true,
			    .rsvdulp = rdmap_ctrl_make(RDMAP_OP_TERMINATE),
			    .qn = DDP_QN_TERMINATE,
			    .msn = DDP_MSN_FIRST};
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_CTRL_LEN], wire[64];
	struct iovec iov = {.iov_base = u, .iov_len = sizeof(u)};
	struct mpa_fpdu fpdu;
	struct mpa_tx tx;
	size_t n = 0;

	if (!f || id->ep.fd < 0 || mpa_err_term(err, &code) != IW_OK)
		return;
	rdmap_term_fill(&t, &code, NULL, 0, 0, NULL);
	if (ddp_hdr_encode(&h, u, DDP_UNTAGGED_HDR_LEN) != DDP_UNTAGGED_HDR_LEN ||
	    rdmap_term_encode(&t, u + DDP_UNTAGGED_HDR_LEN, RDMAP_TERM_CTRL_LEN) !=
		    RDMAP_TERM_CTRL_LEN)
		return;
	/* C: CRC when either frame asked for it; Markers toward the peer when its
	 * Reply asked for them (RFC 5044 §7.1.1) */
	mpa_tx_init(&tx, id->opt.crc || f->crc, f->markers, 0);
	if (mpa_tx_frame(&tx, &iov, 1, &fpdu) != IW_OK || fpdu.total > sizeof(wire))
		return;
	for (int i = fpdu.first; i < fpdu.first + fpdu.iovcnt; i++) {
		memcpy(wire + n, fpdu.iov[i].iov_base, fpdu.iov[i].iov_len);
		n += fpdu.iov[i].iov_len;
	}
	if (send(id->ep.fd, wire, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n)
		trace(id, "Terminate %u/%u/0x%02x not sent: %s", code.layer, code.etype, code.ecode,
		      strerror(errno));
	else
		trace(id, "Terminate %u/%u/0x%02x sent (%s)", code.layer, code.etype, code.ecode,
		      iwv_errname(err));
	id->close_clean = true;
}

static void mpa_rx(struct iwcm_id_int *id, const uint8_t *buf, size_t n)
{
	ssize_t r = mpa_setup_read_stream(id->mpa, buf, n, iwv_now_ns());

	if (r < 0) {
		if (id->mpa->role == MPA_INITIATOR && (r == IW_EMPA_IRD || r == IW_EMPA_RTR))
			startup_term(id, (int)r);
		setup_failed(id, (int)r, 0);
		return;
	}
	switch (id->mpa->state) {
	case MPA_SETUP_ESTABLISHED:
	case MPA_SETUP_REJECTED:
		if (id->mpa->role == MPA_INITIATOR) {
			on_reply(id, buf + r, n - (size_t)r);
			return;
		}
		break;
	case MPA_SETUP_REQUEST_RECEIVED:
		break;
	default:
		return; /* frame not complete yet */
	}
	/* responder: Request complete */
	on_request(id);
	/* The Initiator may send nothing before our Reply (RFC 5044 §7.1.2). */
	if ((size_t)r < n && id->state == ID_CONNECT_REQUEST)
		setup_failed(id, IW_EMPA_UNEXPECTED, 0);
}

/* ---------------------------------------------------------------------- */
/* Endpoint callbacks                                                       */
/* ---------------------------------------------------------------------- */

/* What ep_rx does with the octets of id's next read: the QP's. */
static bool rx_to_qp(const struct iwcm_id_int *id)
{
	return id->state == ID_ACCEPTING || id->state == ID_ESTABLISHED || id->state == ID_CLOSING;
}

static void ep_rx_buf(struct iwv_ep *ep, void **buf, size_t *len)
{
	struct iwcm_id_int *id = ep->owner;
	size_t bound = 0;
	uint8_t *t;

	/* (nothing is read while octets are held: the engine is paused) */
	if (id->ctx->attr.rx_direct && id->qp && rx_to_qp(id) &&
	    !iwv_engine_rx_lent(id->ctx->eng)) {
		/* payload straight into place, or a read that stops after the
		 * next header so the payload behind it can (iwcm.c, rx_buffer) */
		t = rdmap_qp_rx_target(id_rq(id), &bound);
		if (t) {
			id->rx_direct = true;
			*buf = id->rxcur = t;
			*len = bound;
			return;
		}
	}
	*buf = id->rxcur = rx_buffer(id, len);
	if (bound && bound < *len)
		*len = bound;
}

static void ep_rx(struct iwv_ep *ep, ssize_t n)
{
	struct iwcm_id_int *id = ep->owner;
	struct iwv_ctx *ctx = id->ctx;
	const uint8_t *buf = id->rxcur;
	bool shared = buf && buf == ctx->rx_shared;

	id->rxcur = NULL;
	if (!id->ep_on) {
		id->rx_direct = false;
		return;
	}
	if (n <= 0) {
		id->rx_direct = false;
		conn_lost(id, n);
		return;
	}
	if (id->rx_direct) {
		id->rx_direct = false;
		/* (cannot fail: the QP named this target just before the read,
		 * and n is at most what it said) */
		(void)rdmap_qp_rx_placed(id_rq(id), (size_t)n);
		conn_after(id);
		return;
	}
	/* the octets are processed here and now; a read of another connection
	 * that this may start (a receive posted resumes a held one) reads into
	 * a buffer of its own (rx_buffer) */
	if (shared)
		ctx->rx_shared_busy = true;
	switch (id->state) {
	case ID_MPA_REQ:
	case ID_MPA_WAIT_REQ:
	case ID_CONNECT_REQUEST:
		mpa_rx(id, buf, (size_t)n);
		break;
	case ID_ACCEPTING:
	case ID_ESTABLISHED:
	case ID_CLOSING:
		qp_rx(id, buf, (size_t)n);
		break;
	default:
		/* DOWN: after a Reject or a Terminate nothing more is read into anything */
		break;
	}
	if (shared)
		ctx->rx_shared_busy = false;
	else if (!id->held)
		rx_private_drop(id);
}

static int ep_tx_iov(struct iwv_ep *ep, struct iovec *iov, int max)
{
	struct iwcm_id_int *id = ep->owner;
	const uint8_t *p;
	size_t bytes;
	int n;

	if (id->mpa && mpa_setup_tx_pending(id->mpa, &p) > 0) {
		iov[0].iov_base = (void *)(uintptr_t)p;
		iov[0].iov_len = mpa_setup_tx_pending(id->mpa, NULL);
		id->tx_mpa = true;
		return 1;
	}
	id->tx_mpa = false;
	if (!id->qp || iw_timer_armed(&id->t_hold) || id->state == ID_DOWN)
		return 0;
	if (rdmap_qp_state(id_rq(id)) == RDMAP_QP_IDLE)
		return 0;
	n = rdmap_qp_tx_iov(id_rq(id), iov, max, &bytes);
	/* Local memory operations (Local Invalidate, fast registration, MW bind)
	 * complete inside tx_iov with nothing to send: move their completions now,
	 * no tx_done will come for them. */
	iwv_qp_drain(id->qp);
	return n;
}

static void mpa_sent(struct iwcm_id_int *id)
{
	if (mpa_setup_tx_pending(id->mpa, NULL) > 0)
		return;
	if (id->close_after_mpa) {
		/* Reject: the Reply is out; close once it is on its way. */
		id->close_after_mpa = false;
		conn_end(id, false);
		if (id->orphan) {
			id->ch->ids--;
			id_release(id);
		}
		return;
	}
	/* (CLOSING: the program disconnected before the Reply was out) */
	if (!id->estab && (id->state == ID_ACCEPTING || id->state == ID_CLOSING)) {
		struct mpa_params p;
		struct ev_int *ev;

		id_timer_stop(id, &id->t_setup);
		if (id->state == ID_ACCEPTING)
			set_state(id, ID_ESTABLISHED);
		id->estab = true;
		sock_liveness(id, id->ep.fd, true);
		child_dropped(id);
		ev = ev_post(id, IWCM_EVENT_ESTABLISHED, 0, 0);
		if (ev && mpa_setup_params(id->mpa, &p) == IW_OK)
			ev_set_params(ev, &p);
	}
	mpa_release(id);
}

static void ep_tx_done(struct iwv_ep *ep, ssize_t n)
{
	struct iwcm_id_int *id = ep->owner;

	if (!id->ep_on)
		return;
	if (n < 0) {
		conn_lost(id, n);
		return;
	}
	id->in_tx = true;
	if (id->tx_mpa) {
		mpa_setup_tx_advance(id->mpa, (size_t)n);
		mpa_sent(id);
	} else if (id->qp) {
		rdmap_qp_tx_advance(id_rq(id), (size_t)n);
		conn_after(id);
	}
	id->in_tx = false;
}

static void ep_connected(struct iwv_ep *ep, int err)
{
	struct iwcm_id_int *id = ep->owner;
	int r;

	if (!id->ep_on)
		return;
	if (err) {
		setup_failed(id, iw_err_sys(-err), -err);
		return;
	}
	{
		socklen_t sl = sizeof(id->pub.route.addr.src_storage);

		getsockname(ep->fd, &id->pub.route.addr.src_addr, &sl);
	}
	r = mpa_setup_connect(id->mpa, id->conn_pd, id->conn_pd_len);
	if (r != IW_OK) {
		setup_failed(id, r, 0);
		return;
	}
	set_state(id, ID_MPA_REQ);
	conn_kick(id);
}

static void ep_released(struct iwv_ep *ep)
{
	struct iwcm_id_int *id = ep->owner;

	id->ep_pending = false;
	id_free_when_released(id);
}

static struct iwcm_id_int *id_alloc(struct iwcm_chan_int *ch, void *context);
static void on_retry_fire(struct iw_timer *t, uint64_t now);

static void ep_accepted(struct iwv_ep *ep, int fd)
{
	struct iwcm_id_int *l = ep->owner, *id;
	struct mpa_config c;
	socklen_t sl;

	if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM) {
		/* paused by the engine: the connection waits in the kernel */
		trace(l, "accept: %s: trying again in %d ms", strerror(-fd), ACCEPT_RETRY_MS);
		id_timer_in(l, &l->t_accept, ACCEPT_RETRY_MS);
		listener_update(l);
		return;
	}
	if (fd < 0) {
		trace(l, "accept failed: %s; the listener takes no more connections",
		      strerror(-fd));
		return;
	}
	if (l->pending >= l->backlog) {
		uint64_t when;
		struct iwcm_id_int *old = evictable(l, iwv_now_ns(), &when);

		if (!old) {
			/* not reached: the listener pauses at its backlog unless a
			 * child may give way (listener_update) */
			trace(l, "backlog full (%d): connection dropped", l->backlog);
			close(fd);
			return;
		}
		/* A flood of connections that never send (or dribble) their MPA
		 * Request must not lock legitimate clients out for timeout_ms
		 * each: the oldest silent one goes, reset, unseen by the program. */
		trace(old,
		      "no MPA Request %u ms after accept, and the backlog (%d) is full: "
		      "reset to make room",
		      l->opt.handshake_grace_ms, l->backlog);
		setup_failed(old, IW_EMPA_TIMEOUT, ETIMEDOUT);
	}
	id = id_alloc(l->ch, l->pub.context);
	if (id)
		id->mpa = calloc(1, sizeof(*id->mpa));
	if (!id || !id->mpa || (iwv_engine_rx_lent(l->ctx->eng) && !rx_own_alloc(id))) {
		if (id)
			id_free(id);
		close(fd);
		return;
	}
	id->ch->ids++;
	id->opt = l->opt;
	id->pub.ps = l->pub.ps;
	child_add(l, id);
	sl = sizeof(id->pub.route.addr.src_storage);
	getsockname(fd, &id->pub.route.addr.src_addr, &sl);
	sl = sizeof(id->pub.route.addr.dst_storage);
	getpeername(fd, &id->pub.route.addr.dst_addr, &sl);
	mpa_config_from(&id->opt, 0, 0, &c);
	mpa_setup_init(id->mpa, MPA_RESPONDER, &c, iwv_now_ns());
	sock_liveness(id, fd, false);
	id->accepted_ns = iwv_now_ns();
	id->ep.fd = fd;
	id->ep.kind = IWV_EP_STREAM;
	id->ep.ops = &stream_ops;
	id->ep.owner = id;
	set_state(id, ID_MPA_WAIT_REQ);
	if (iwv_engine_add(id->ctx->eng, &id->ep) != IW_OK) {
		child_dropped(id);
		id->ch->ids--;
		close(fd);
		id->ep.fd = -1;
		id_free(id);
		return;
	}
	id->ep_on = true;
	id_timer_in(id, &id->t_setup, id->opt.timeout_ms);
	trace(id, "TCP connection accepted");
}

static const struct iwv_ep_ops stream_ops = {
	.rx_buf = ep_rx_buf,
	.rx = ep_rx,
	.tx_iov = ep_tx_iov,
	.tx_done = ep_tx_done,
	.connected = ep_connected,
	.released = ep_released,
};

static const struct iwv_ep_ops listen_ops = {
	.accepted = ep_accepted,
	.released = ep_released,
};

/* ---------------------------------------------------------------------- */
/* Timers                                                                   */
/* ---------------------------------------------------------------------- */

/* TCP connect and MPA did not finish within timeout_ms. */
static void on_setup_timeout(struct iw_timer *t, uint64_t now)
{
	struct iwcm_id_int *id = iw_container_of(t, struct iwcm_id_int, t_setup);

	if (id->state == ID_TCP_CONNECTING ||
	    (id->mpa && id->state != ID_ESTABLISHED && id->state != ID_DOWN))
		setup_failed(id, IW_EMPA_TIMEOUT, ETIMEDOUT);
}

/* The initiator's first-FPDU pause is over: send what the QP has. */
static void on_hold_done(struct iw_timer *t, uint64_t now)
{
	conn_kick(iw_container_of(t, struct iwcm_id_int, t_hold));
}

/* Our FIN is out and the peer's did not come in close_timeout_ms. */
static void on_close_timeout(struct iw_timer *t, uint64_t now)
{
	struct iwcm_id_int *id = iw_container_of(t, struct iwcm_id_int, t_close);

	trace(id, "no FIN from the peer in %u ms: reset", id->opt.close_timeout_ms);
	conn_end(id, true);
}

/* ---------------------------------------------------------------------- */
/* The QP's link (iwv_qp_link.h)                                            */
/* ---------------------------------------------------------------------- */

static void link_rx_resume(void *link)
{
	struct iwcm_id_int *id = link;

	if (!id->held || !id->qp)
		return;
	rx_feed_held(id);
	conn_after(id);
}

/* The oldest silent child of a full listener may give way now: accept again. */
static void on_evict_due(struct iw_timer *t, uint64_t now)
{
	listener_update(iw_container_of(t, struct iwcm_id_int, t_evict));
}

/* The pause after running out of descriptors is over: accept again if there is room. */
static void on_accept_retry(struct iw_timer *t, uint64_t now)
{
	listener_update(iw_container_of(t, struct iwcm_id_int, t_accept));
}

/* rnr_hold_ms ran out: the held message, offered again, fails the QP with the
 * "no buffer" Terminate unless a receive came meanwhile. */
static void on_rnr_timeout(struct iw_timer *t, uint64_t now)
{
	struct iwcm_id_int *id = iw_container_of(t, struct iwcm_id_int, t_rnr);

	if (!id->held || !id->qp)
		return;
	trace(id, "no receive within %u ms: the held message fails", iwv_qp_rnr_hold_ms(id->qp));
	rdmap_qp_rx_hold_expire(id_rq(id));
	rx_feed_held(id);
	conn_after(id);
}

static void link_kick(void *link)
{
	struct iwcm_id_int *id = link;

	conn_kick(id);
	/* a post may have completed the last queued work of a graceful close */
	if (id->state == ID_CLOSING)
		conn_after(id);
}

/* The QP is being destroyed or moved to ERR: the connection ends now. */
static void link_detach(void *link, bool destroying)
{
	struct iwcm_id_int *id = link;

	if (id->ep_on)
		conn_end(id, true);
	if (destroying) {
		id->qp = NULL;
		id->pub.qp = NULL;
	}
}

static const struct iwv_qp_link_ops link_ops = {
	.kick = link_kick,
	.rx_resume = link_rx_resume,
	.detach = link_detach,
};

/* ---------------------------------------------------------------------- */
/* API                                                                      */
/* ---------------------------------------------------------------------- */

#define LOCK(ctx)   pthread_mutex_lock(&(ctx)->lock)
#define UNLOCK(ctx) pthread_mutex_unlock(&(ctx)->lock)

static int fail(int e)
{
	errno = e;
	return -1;
}

struct iwcm_event_channel *iwcm_create_event_channel_ctx(struct iwv_context *context)
{
	struct iwv_ctx *ctx = ctx_of(context);
	struct iwcm_chan_int *ch = iwv_ctx_obj_new(ctx, sizeof(*ch));
	int r;

	if (!ch)
		return NULL;
	ch->ctx = ctx;
	r = iwv_chan_fds_open(ctx, &ch->efd, &ch->pub.fd);
	if (r != IW_OK) {
		free(ch);
		errno = iwv_errno(r);
		return NULL;
	}
	LOCK(ctx);
	ctx->users++;
	UNLOCK(ctx);
	return &ch->pub;
}

struct iwcm_event_channel *iwcm_create_event_channel(void)
{
	struct iwv_ctx *ctx = iwv_default_ctx_get();

	if (!ctx)
		return NULL; /* errno from iwv_open_context */
	return iwcm_create_event_channel_ctx(&ctx->pub);
}

int iwcm_destroy_event_channel(struct iwcm_event_channel *pub)
{
	struct iwcm_chan_int *ch = (struct iwcm_chan_int *)pub;
	struct iwv_ctx *ctx;

	if (!ch)
		return fail(EINVAL);
	ctx = ch->ctx;
	LOCK(ctx);
	if (ch->ids > 0) {
		UNLOCK(ctx);
		return fail(EBUSY);
	}
	while (ch->head) {
		struct ev_int *ev = ch->head;

		ch->head = ev->next;
		free(ev);
	}
	ctx->users--;
	if (ch->waiters > 0) {
		/* a thread still waits here: it frees the channel when it wakes */
		ch->dead = true;
		iwv_efd_signal(ch->efd, true);
		UNLOCK(ctx);
		return 0;
	}
	UNLOCK(ctx);
	close(ch->efd);
	close(ch->pub.fd);
	free(ch);
	return 0;
}

static struct iwcm_id_int *id_alloc(struct iwcm_chan_int *ch, void *context)
{
	struct iwcm_id_int *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->ch = ch;
	id->ctx = ch->ctx;
	id->fd = -1;
	id->ep.fd = -1;
	id->pub.verbs = &ch->ctx->pub;
	id->pub.channel = &ch->pub;
	id->pub.context = context;
	id->pub.ps = IWCM_PS_TCP;
	iwcm_options_default(&id->opt);
	iw_timer_init(&id->t_setup, on_setup_timeout);
	iw_timer_init(&id->t_hold, on_hold_done);
	iw_timer_init(&id->t_rnr, on_rnr_timeout);
	iw_timer_init(&id->t_accept, on_accept_retry);
	iw_timer_init(&id->t_evict, on_evict_due);
	iw_timer_init(&id->t_close, on_close_timeout);
	iw_timer_init(&id->t_free, id_free_fire);
	iw_timer_init(&id->t_retry, on_retry_fire);
	return id;
}

int iwcm_create_id(struct iwcm_event_channel *pub, struct iwcm_id **out, void *context,
		   enum iwcm_port_space ps)
{
	struct iwcm_chan_int *ch = (struct iwcm_chan_int *)pub;
	struct iwcm_id_int *id;

	if (!ch || !out || ps != IWCM_PS_TCP)
		return fail(EINVAL);
	LOCK(ch->ctx);
	id = id_alloc(ch, context);
	if (id)
		ch->ids++;
	UNLOCK(ch->ctx);
	if (!id)
		return fail(ENOMEM);
	*out = &id->pub;
	return 0;
}

/* Drop queued (undelivered) events that name `id`; CONNECT_REQUESTs of a
 * listener being destroyed take their new ids with them. */
static void purge_events(struct iwcm_id_int *id)
{
	struct iwcm_chan_int *ch = id->ch;
	struct ev_int **pp = &ch->head, *ev;

	/* most ids have none queued: no walk of the channel's queue (a
	 * program tearing down thousands of connections would walk it once
	 * per id) */
	if (id->queued == 0)
		return;
	ch->tail = NULL;
	while ((ev = *pp)) {
		if (ev->pub.id == &id->pub || ev->pub.listen_id == &id->pub) {
			struct iwcm_id_int *child = (struct iwcm_id_int *)ev->pub.id;

			*pp = ev->next;
			child->queued--;
			if (ev->pub.listen_id)
				((struct iwcm_id_int *)ev->pub.listen_id)->queued--;
			if (child != id && ev->pub.event == IWCM_EVENT_CONNECT_REQUEST) {
				conn_end(child, true);
				child_dropped(child);
				child->ch->ids--;
				id_release(child);
			}
			free(ev);
			continue;
		}
		ch->tail = ev;
		pp = &ev->next;
	}
	if (!ch->head)
		iwv_efd_signal(ch->efd, false);
}

int iwcm_destroy_id(struct iwcm_id *pub)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;
	struct iwv_ctx *ctx;

	if (!id)
		return fail(EINVAL);
	ctx = id->ctx;
	LOCK(ctx);
	if (id->events_unacked > 0) {
		UNLOCK(ctx);
		return fail(EBUSY);
	}
	/* Nobody will read events of this id any more: post none while tearing down,
	 * then drop the queued ones. */
	id->disc = true;
	if (id->qp) {
		struct iwv_qp *qp = id->qp;

		link_detach(id, true);
		iwv_qp_link_detach(qp);
		iwv_qp_flush_all(qp);
	}
	if (id->ep_on)
		conn_end(id, true);
	child_dropped(id);
	/* pending children belong to nobody now; those still in their MPA
	 * exchange (the program never saw them) go */
	while (id->kids) {
		struct iwcm_id_int *c = id->kids;

		child_dropped(c);
		if (c->state == ID_MPA_WAIT_REQ) {
			conn_end(c, true);
			c->ch->ids--;
			id_release(c);
		}
	}
	purge_events(id);
	id->ch->ids--;
	id_release(id);
	UNLOCK(ctx);
	return 0;
}

int iwcm_set_options(struct iwcm_id *pub, const struct iwcm_options *opt)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;

	if (!id || !opt || (opt->mpa_rev != MPA_REV1 && opt->mpa_rev != MPA_REV2) ||
	    (opt->p2p && opt->mpa_rev != MPA_REV2) || (opt->p2p && !(opt->rtr & MPA_RTR_ALL)) ||
	    (opt->rtr & ~MPA_RTR_ALL) || opt->timeout_ms == 0 ||
	    (opt->mulpdu_max && opt->mulpdu_max < MPA_MULPDU_MIN) ||
	    opt->user_timeout_ms > (uint32_t)INT_MAX ||
	    opt->keepalive_idle_s > IWCM_KEEPALIVE_S_MAX ||
	    (opt->keepalive_idle_s &&
	     (opt->keepalive_intvl_s == 0 || opt->keepalive_intvl_s > IWCM_KEEPALIVE_S_MAX ||
	      opt->keepalive_cnt == 0 || opt->keepalive_cnt > IWCM_KEEPALIVE_CNT_MAX)))
		return fail(EINVAL);
	LOCK(id->ctx);
	id->opt = *opt;
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_get_options(struct iwcm_id *pub, struct iwcm_options *opt)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;

	if (!id || !opt)
		return fail(EINVAL);
	LOCK(id->ctx);
	*opt = id->opt;
	UNLOCK(id->ctx);
	return 0;
}

static socklen_t sa_len(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (sa->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

int iwcm_bind_addr(struct iwcm_id *pub, const struct sockaddr *addr)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;
	socklen_t len = sa_len(addr), sl;
	int fd, one = 1;

	if (!id || !len)
		return fail(EINVAL);
	LOCK(id->ctx);
	if (id->state != ID_IDLE || id->fd >= 0) {
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;

		UNLOCK(id->ctx);
		return fail(e);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, addr, len) != 0) {
		int e = errno;

		close(fd);
		UNLOCK(id->ctx);
		return fail(e);
	}
	sl = sizeof(id->pub.route.addr.src_storage);
	getsockname(fd, &id->pub.route.addr.src_addr, &sl);
	id->fd = fd;
	set_state(id, ID_BOUND);
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_listen(struct iwcm_id *pub, int backlog)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;

	if (!id)
		return fail(EINVAL);
	LOCK(id->ctx);
	if (id->state != ID_BOUND) {
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	if (backlog <= 0)
		backlog = 128;
	if (listen(id->fd, backlog) != 0) {
		int e = errno;

		UNLOCK(id->ctx);
		return fail(e);
	}
	id->backlog = backlog;
	id->ep.fd = id->fd;
	id->ep.kind = IWV_EP_LISTEN;
	id->ep.ops = &listen_ops;
	id->ep.owner = id;
	if (iwv_engine_add(id->ctx->eng, &id->ep) != IW_OK) {
		UNLOCK(id->ctx);
		return fail(ENOMEM);
	}
	id->fd = -1; /* the engine closes it */
	id->ep_on = true;
	set_state(id, ID_LISTEN);
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_resolve_addr(struct iwcm_id *pub, const struct sockaddr *src, const struct sockaddr *dst,
		      int timeout_ms)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;
	socklen_t dl = sa_len(dst), sl = sa_len(src);

	if (!id || !dl || (src && (!sl || src->sa_family != dst->sa_family)))
		return fail(EINVAL);
	LOCK(id->ctx);
	if ((id->state != ID_IDLE && id->state != ID_BOUND) ||
	    (id->state == ID_BOUND && id->pub.route.addr.src_addr.sa_family != dst->sa_family)) {
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	memset(&id->pub.route.addr.dst_storage, 0, sizeof(id->pub.route.addr.dst_storage));
	memcpy(&id->pub.route.addr.dst_storage, dst, dl);
	if (src && id->state == ID_IDLE) {
		memset(&id->pub.route.addr.src_storage, 0, sizeof(id->pub.route.addr.src_storage));
		memcpy(&id->pub.route.addr.src_storage, src, sl);
	}
	set_state(id, ID_ADDR_RESOLVED);
	ev_post(id, IWCM_EVENT_ADDR_RESOLVED, 0, 0);
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_resolve_route(struct iwcm_id *pub, int timeout_ms)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;

	if (!id)
		return fail(EINVAL);
	LOCK(id->ctx);
	if (id->state != ID_ADDR_RESOLVED) {
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	set_state(id, ID_ROUTE_RESOLVED);
	ev_post(id, IWCM_EVENT_ROUTE_RESOLVED, 0, 0);
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_attach_qp(struct iwcm_id *pub, struct iwv_qp *qp)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;

	if (!id || !qp || qp->context != id->pub.verbs)
		return fail(EINVAL);
	LOCK(id->ctx);
	if (id->qp || iwv_qp_link_attach(qp, &link_ops, id) != 0) {
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	id->qp = qp;
	id->pub.qp = qp;
	id->pub.pd = qp->pd;
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_create_qp(struct iwcm_id *id, struct iwv_pd *pd, struct iwv_qp_init_attr *attr)
{
	struct iwv_qp *qp;

	if (!id || !pd || pd->context != id->verbs)
		return fail(EINVAL);
	qp = iwv_create_qp(pd, attr);
	if (!qp)
		return -1;
	if (iwcm_attach_qp(id, qp) != 0) {
		int e = errno;

		iwv_destroy_qp(qp);
		return fail(e);
	}
	return 0;
}

void iwcm_destroy_qp(struct iwcm_id *pub)
{
	if (pub && pub->qp) {
		struct iwv_qp *qp = pub->qp;

		/* detaches through link_detach; EBUSY (unacknowledged asynchronous
		 * events) keeps it attached, for a later call */
		if (iwv_destroy_qp(qp) == 0)
			pub->qp = NULL;
	}
}

static int pd_from_param(const struct iwcm_conn_param *p, uint8_t rev, const void **pd,
			 uint16_t *len)
{
	size_t max = rev == MPA_REV2 ? MPA_PD_MAX - 4 : MPA_PD_MAX;

	*pd = NULL;
	*len = 0;
	if (!p)
		return 0;
	*len = p->private_data_len16 ? p->private_data_len16 : p->private_data_len;
	*pd = p->private_data;
	if (*len > max || (*len && !*pd) || p->srq)
		return EINVAL;
	return 0;
}

/*
 * Open the socket and start the TCP connect of an id whose MPA startup is
 * set up (lock held).  0, or an errno for a failure to report at once; a
 * refused or failed connect is reported later, as any found later would be.
 */
static int conn_start(struct iwcm_id_int *id)
{
	int fd = id->fd, e;

	if (fd < 0) {
		fd = socket(id->pub.route.addr.dst_addr.sa_family,
			    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		/* A source address with port 0: the port is chosen by connect(),
		 * unique per address pair, not by bind() among every port of the
		 * address (else one source address gives at most the ephemeral
		 * range's ~28k connections, whatever their destinations). */
		if (id->pub.route.addr.src_addr.sa_family != AF_UNSPEC)
			(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &(int){1},
					 sizeof(int));
		if (id->pub.route.addr.src_addr.sa_family != AF_UNSPEC &&
		    bind(fd, &id->pub.route.addr.src_addr, sa_len(&id->pub.route.addr.src_addr)) !=
			    0) {
			e = errno;
			close(fd);
			return e;
		}
	}
	id->fd = -1;
	sock_liveness(id, fd, false);
	id->ep.fd = fd;
	id->ep.kind = IWV_EP_CONNECTING;
	id->ep.ops = &stream_ops;
	id->ep.owner = id;
	set_state(id, ID_TCP_CONNECTING);
	if (connect(fd, &id->pub.route.addr.dst_addr, sa_len(&id->pub.route.addr.dst_addr)) != 0 &&
	    errno != EINPROGRESS) {
		e = errno;
		/* Report asynchronously, as a failure found later would be. */
		id->ep_on = false;
		close(fd);
		id->ep.fd = -1;
		setup_failed(id, iw_err_sys(e), e);
		return 0;
	}
	if (iwv_engine_add(id->ctx->eng, &id->ep) != IW_OK) {
		close(fd);
		id->ep.fd = -1;
		set_state(id, ID_ROUTE_RESOLVED);
		return ENOMEM;
	}
	id->ep_on = true;
	id_timer_in(id, &id->t_setup, id->opt.timeout_ms);
	trace(id, "connecting");
	return 0;
}

/* The next try of a refused connect, once the engine has let go of the last socket. */
static void on_retry_fire(struct iw_timer *t, uint64_t now)
{
	struct iwcm_id_int *id = iw_container_of(t, struct iwcm_id_int, t_retry);
	int e;

	if (id->state != ID_ROUTE_RESOLVED || id->freed)
		return;
	if (id->ep_pending) {
		id_timer_in(id, &id->t_retry, 1);
		return;
	}
	e = conn_start(id);
	if (e) {
		set_state(id, ID_TCP_CONNECTING);
		id->retry_until = 0;
		setup_failed(id, iw_err_sys(e), e);
	}
}

int iwcm_connect(struct iwcm_id *pub, struct iwcm_conn_param *param)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;
	struct mpa_config c;
	const void *pd;
	uint16_t pd_len;
	int e;

	if (!id)
		return fail(EINVAL);
	LOCK(id->ctx);
	e = pd_from_param(param, id->opt.mpa_rev, &pd, &pd_len);
	if (!e && ((id->state != ID_ADDR_RESOLVED && id->state != ID_ROUTE_RESOLVED) || !id->qp))
		e = EINVAL;
	if (!e && !id->mpa && !(id->mpa = calloc(1, sizeof(*id->mpa))))
		e = ENOMEM;
	/* (io_uring reads into the connection's own buffer from the start) */
	if (!e && !id->rxbuf && iwv_engine_rx_lent(id->ctx->eng) && !rx_own_alloc(id))
		e = ENOMEM;
	if (e) {
		UNLOCK(id->ctx);
		return fail(e);
	}
	if (pd_len)
		memcpy(id->conn_pd, pd, pd_len);
	id->conn_pd_len = pd_len;
	mpa_config_from(&id->opt, param ? param->responder_resources : 0,
			param ? param->initiator_depth : 0, &c);
	if (mpa_setup_init(id->mpa, MPA_INITIATOR, &c, iwv_now_ns()) != IW_OK) {
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	id->retry_until = iwv_now_ns() + (uint64_t)id->opt.connect_retry_ms * 1000000u;
	e = conn_start(id);
	UNLOCK(id->ctx);
	return e ? fail(e) : 0;
}

int iwcm_accept(struct iwcm_id *pub, struct iwcm_conn_param *param)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;
	struct mpa_params p;
	const void *pd;
	uint16_t pd_len;
	int r, e;

	if (!id)
		return fail(EINVAL);
	LOCK(id->ctx);
	/* The Reply has the lower of the two revisions: its private data limit. */
	e = pd_from_param(param,
			  id->mpa ? IW_MIN(id->mpa->peer.rev, id->opt.mpa_rev) : id->opt.mpa_rev,
			  &pd, &pd_len);
	if (!e && id->state == ID_DOWN && id->accepted_ns && !id->estab && id->qp) {
		/* The connection failed while its CONNECT_REQUEST waited for the
		 * program (its CONNECT_ERROR is queued): the QP attached meanwhile
		 * will never connect, so what was posted to it completes flushed,
		 * as it would have had the failure come after the posts. */
		if (id->qp->state != IWV_QPS_ERR)
			iwv_qp_flush_all(id->qp);
		e = ECONNABORTED;
	}
	if (!e && (id->state != ID_CONNECT_REQUEST || !id->qp))
		e = EINVAL;
	if (e) {
		UNLOCK(id->ctx);
		return fail(e);
	}
	/* The Reply carries our IRD/ORD (RFC 6581 §9.1). */
	id->mpa->cfg.ird = param && param->responder_resources ? param->responder_resources
							       : IWV_QP_RD_DEFAULT;
	id->mpa->cfg.ord =
		param && param->initiator_depth ? param->initiator_depth : IWV_QP_RD_DEFAULT;
	r = mpa_setup_accept(id->mpa, pd, pd_len);
	if (r == IW_OK)
		r = mpa_setup_params(id->mpa, &p);
	if (r == IW_OK)
		r = qp_go(id, &p, false);
	if (r != IW_OK) {
		/* Reported by the return value alone (as librdmacm does), not also
		 * by a CONNECT_ERROR event. */
		trace(id, "accept failed: %s", iwv_errname(r));
		child_dropped(id);
		conn_end(id, true);
		UNLOCK(id->ctx);
		return fail(iwv_errno(r));
	}
	set_state(id, ID_ACCEPTING);
	conn_kick(id);
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_reject(struct iwcm_id *pub, const void *private_data, uint8_t private_data_len)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;
	int r;

	if (!id || (private_data_len && !private_data))
		return fail(EINVAL);
	LOCK(id->ctx);
	if (id->state != ID_CONNECT_REQUEST) {
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	r = mpa_setup_reject(id->mpa, private_data, private_data_len);
	if (r != IW_OK) {
		setup_failed(id, r, 0);
		UNLOCK(id->ctx);
		return fail(iwv_errno(r));
	}
	child_dropped(id);
	id_timer_stop(id, &id->t_setup);
	id->close_after_mpa = true;
	set_state(id, ID_DOWN);
	if (id->qp)
		iwv_qp_flush_all(id->qp);
	conn_kick(id);
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_disconnect(struct iwcm_id *pub)
{
	struct iwcm_id_int *id = (struct iwcm_id_int *)pub;

	if (!id)
		return fail(EINVAL);
	LOCK(id->ctx);
	switch (id->state) {
	case ID_ACCEPTING:
	case ID_ESTABLISHED:
		set_state(id, ID_CLOSING);
		if (id->qp && rdmap_qp_close(id_rq(id)) != IW_OK) {
			/* the QP already failed: it is on its way down */
		}
		conn_after(id);
		break;
	case ID_CLOSING:
	case ID_DOWN:
		break;
	default:
		UNLOCK(id->ctx);
		return fail(EINVAL);
	}
	UNLOCK(id->ctx);
	return 0;
}

int iwcm_get_cm_event(struct iwcm_event_channel *pub, struct iwcm_event **event)
{
	struct iwcm_chan_int *ch = (struct iwcm_chan_int *)pub;
	struct iwv_ctx *ctx;
	bool nonblock;

	if (!ch || !event)
		return fail(EINVAL);
	ctx = ch->ctx;
	nonblock = (fcntl(ch->pub.fd, F_GETFL) & O_NONBLOCK) != 0;
	LOCK(ctx);
	ch->waiters++;
	for (;;) {
		struct ev_int *ev;

		if (ch->dead) {
			/* destroyed while we waited (a program error, but rping's CM
			 * thread does it at every exit): the last waiter frees it */
			bool last = --ch->waiters == 0;

			UNLOCK(ctx);
			if (last) {
				close(ch->efd);
				close(ch->pub.fd);
				free(ch);
			}
			return fail(EBADF);
		}
		iwv_ctx_progress_for(ctx, NULL);
		ev = ch->head;
		if (ev) {
			ch->head = ev->next;
			if (!ch->head) {
				ch->tail = NULL;
				iwv_efd_signal(ch->efd, false);
			}
			((struct iwcm_id_int *)ev->pub.id)->events_unacked++;
			((struct iwcm_id_int *)ev->pub.id)->queued--;
			if (ev->pub.listen_id) {
				((struct iwcm_id_int *)ev->pub.listen_id)->events_unacked++;
				((struct iwcm_id_int *)ev->pub.listen_id)->queued--;
			}
			ch->waiters--;
			UNLOCK(ctx);
			*event = &ev->pub;
			return 0;
		}
		if (nonblock) {
			ch->waiters--;
			UNLOCK(ctx);
			return fail(EAGAIN);
		}
		/* A signal ends the wait (EINTR), as in librdmacm. */
		if (iwv_ctx_wait(ctx, UINT64_MAX, ch->efd) < 0 && errno == EINTR) {
			ch->waiters--;
			UNLOCK(ctx);
			return fail(EINTR);
		}
	}
}

int iwcm_ack_cm_event(struct iwcm_event *event)
{
	struct ev_int *ev = (struct ev_int *)event;
	struct iwcm_id_int *id;

	if (!ev)
		return fail(EINVAL);
	id = (struct iwcm_id_int *)ev->pub.id;
	LOCK(id->ctx);
	id->events_unacked--;
	if (ev->pub.listen_id)
		((struct iwcm_id_int *)ev->pub.listen_id)->events_unacked--;
	UNLOCK(id->ctx);
	free(ev);
	return 0;
}

struct sockaddr *iwcm_get_local_addr(struct iwcm_id *id)
{
	return id ? &id->route.addr.src_addr : NULL;
}

struct sockaddr *iwcm_get_peer_addr(struct iwcm_id *id)
{
	return id ? &id->route.addr.dst_addr : NULL;
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return 0;
}

uint16_t iwcm_get_src_port(struct iwcm_id *id)
{
	return id ? sa_port(&id->route.addr.src_addr) : 0;
}

uint16_t iwcm_get_dst_port(struct iwcm_id *id)
{
	return id ? sa_port(&id->route.addr.dst_addr) : 0;
}
