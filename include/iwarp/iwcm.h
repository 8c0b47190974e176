/* SPDX-License-Identifier: MIT */
/*
 * iwcm.h - the connection manager: TCP connection, MPA startup (RFC 5044 §7,
 * RFC 6581) and the hand-over to full operation, with the API of librdmacm
 * (<rdma/rdma_cma.h>): event channel, cm ids, bind/listen/connect/accept,
 * events.  rdma_foo becomes iwcm_foo and RDMA_CM_FOO becomes IWCM_FOO.
 *
 * Active side:   create_id -> resolve_addr (ADDR_RESOLVED) -> resolve_route
 *                (ROUTE_RESOLVED) -> create_qp -> connect -> ESTABLISHED |
 *                REJECTED | UNREACHABLE | CONNECT_ERROR
 * Passive side:  create_id -> bind_addr -> listen -> CONNECT_REQUEST (new id)
 *                -> create_qp -> accept (ESTABLISHED) | reject
 * Both:          disconnect -> DISCONNECTED (also when the peer closes or the
 *                connection fails); destroy_qp; destroy_id.
 *
 * How events map onto iWARP (as the Linux iw_cm does):
 *   - TCP connection refused, and an MPA Reply with the Reject bit:
 *     IWCM_EVENT_REJECTED, status -ECONNREFUSED (private data = the peer's
 *     reject private data, if any);
 *   - no route / host unreachable / TCP or MPA timeout: IWCM_EVENT_UNREACHABLE,
 *     status -errno (-EHOSTUNREACH, -ENETUNREACH, -ETIMEDOUT);
 *   - any other failure during the MPA exchange (malformed frame, no common
 *     RTR, too few IRD...): IWCM_EVENT_CONNECT_ERROR, status -EPROTO (or the
 *     socket's -errno); iwcm_event.iw_err holds the precise cause as an
 *     iw_err (IW_ESYS(errno) when it was the socket's).
 *
 * Private data is the ULP's: on the wire it follows the RFC 6581 IRD/ORD word
 * with MPA revision 2.  IRD/ORD are conn_param.responder_resources (IRD) and
 * initiator_depth (ORD).
 */
#ifndef IWARP_IWCM_H
#define IWARP_IWCM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <iwarp/iwv.h>
#include <iwarp/mpa.h> /* MPA_REV*, MPA_RTR_* for struct iwcm_options */

#ifdef __cplusplus
extern "C" {
#endif

enum iwcm_port_space {
	IWCM_PS_TCP = 0x0106,
};

enum iwcm_event_type {
	IWCM_EVENT_ADDR_RESOLVED,
	IWCM_EVENT_ADDR_ERROR,
	IWCM_EVENT_ROUTE_RESOLVED,
	IWCM_EVENT_ROUTE_ERROR,
	IWCM_EVENT_CONNECT_REQUEST,
	IWCM_EVENT_CONNECT_RESPONSE, /* never reported: the CM accepts the QP itself */
	IWCM_EVENT_CONNECT_ERROR,
	IWCM_EVENT_UNREACHABLE,
	IWCM_EVENT_REJECTED,
	IWCM_EVENT_ESTABLISHED,
	IWCM_EVENT_DISCONNECTED,
	IWCM_EVENT_DEVICE_REMOVAL,
	IWCM_EVENT_MULTICAST_JOIN,
	IWCM_EVENT_MULTICAST_ERROR,
	IWCM_EVENT_ADDR_CHANGE,
	IWCM_EVENT_TIMEWAIT_EXIT,
};
IW_EXPORT const char *iwcm_event_str(enum iwcm_event_type event);

/*
 * iWARP connection options (docs/verbs.md §4.4), per id.  An id created by a
 * listener (CONNECT_REQUEST) starts with the listener's options; the responder
 * side's rev/crc/markers/p2p/rtr say what it accepts and asks for.
 */
struct iwcm_options {
	uint8_t mpa_rev;	      /* 1 or 2 (default 2) */
	bool crc;		      /* C: ask for CRC (default true); on if either side asks */
	bool markers;		      /* M: ask the peer to send Markers (default false) */
	bool accept_markers;	      /* send Markers when the peer asks (default true) */
	bool p2p;		      /* rev 2 peer-to-peer model with an RTR (default false) */
	uint8_t rtr;		      /* MPA_RTR_* mask offered / accepted (default all three) */
	uint32_t timeout_ms;	      /* TCP connect + MPA exchange bound (default 10000) */
	uint32_t first_fpdu_delay_ms; /* initiator: pause between the MPA Reply and the first
				       * FPDU (Linux siw start-up race, captures/README.md;
				       * default 20, 0 = none) */
	uint32_t close_timeout_ms;    /* graceful disconnect: wait this long for the peer's
				       * FIN, then reset (default 2000) */
	uint32_t mulpdu_max;	      /* cap on MULPDU (default 0 = from the TCP MSS) */
	uint32_t connect_retry_ms;    /* a refused TCP connect is tried again every 50 ms for
				       * this long before REJECTED (default 0: at once) */
	bool trace;		      /* log every connection step (iw_log) */
	/*
	 * Liveness (docs/verbs.md, "Liveness and handshake limits"): tcp(7)
	 * options on the connection's socket, so that a peer that vanishes
	 * without FIN or RST ends the connection (DISCONNECTED, the QP flushed)
	 * in bounded time.  TCP_USER_TIMEOUT is set from the TCP connect or
	 * accept on; the keepalive once the connection is established.
	 */
	uint32_t user_timeout_ms;   /* TCP_USER_TIMEOUT: data unacknowledged (or keepalive
				    * probes unanswered) this long ends the connection with
				    * ETIMEDOUT (default 30000; 0 = the kernel's, ~15 min) */
	uint16_t keepalive_idle_s;  /* SO_KEEPALIVE + TCP_KEEPIDLE: probe a connection idle this
				    * long (default 30; 0 = no keepalive), 1-32767 */
	uint16_t keepalive_intvl_s; /* TCP_KEEPINTVL: between probes (default 10), 1-32767 */
	uint8_t keepalive_cnt;	    /* TCP_KEEPCNT: unanswered probes before the connection
				     * is dead, when user_timeout_ms is 0 (default 3), 1-127 */
	/* Listener at its backlog: a pending connection whose MPA Request is not
	 * complete this long after it was accepted makes room for the next one
	 * waiting (it is reset); default 5000, 0 = never (the next one waits
	 * until a pending one ends). */
	uint32_t handshake_grace_ms;
};
IW_EXPORT void iwcm_options_default(struct iwcm_options *opt);

struct iwcm_conn_param {
	const void *private_data;
	uint8_t private_data_len;    /* librdmacm's limit; see private_data_len16 */
	uint8_t responder_resources; /* IRD; 0 = the QP's default (16) */
	uint8_t initiator_depth;     /* ORD; 0 = the QP's default (16) */
	uint8_t flow_control;	     /* ignored */
	uint8_t retry_count;	     /* ignored */
	uint8_t rnr_retry_count;     /* ignored */
	uint8_t srq;		     /* must be 0 */
	uint32_t qp_num;	     /* ignored */
	/* extension: private data longer than 255 octets (up to 508 with rev 2, 512 with
	 * rev 1); used when non-zero instead of private_data_len */
	uint16_t private_data_len16;
};

struct iwcm_event_channel {
	int fd; /* pollable; set O_NONBLOCK on it for a non-blocking iwcm_get_cm_event */
};

struct iwcm_addr {
	union {
		struct sockaddr src_addr;
		struct sockaddr_in src_sin;
		struct sockaddr_in6 src_sin6;
		struct sockaddr_storage src_storage;
	};
	union {
		struct sockaddr dst_addr;
		struct sockaddr_in dst_sin;
		struct sockaddr_in6 dst_sin6;
		struct sockaddr_storage dst_storage;
	};
};

struct iwcm_route {
	struct iwcm_addr addr;
};

struct iwcm_id {
	struct iwv_context *verbs;
	struct iwcm_event_channel *channel;
	void *context;
	struct iwv_qp *qp;
	struct iwcm_route route;
	enum iwcm_port_space ps;
	struct iwv_pd *pd;
};

struct iwcm_event {
	struct iwcm_id *id;
	struct iwcm_id *listen_id; /* CONNECT_REQUEST: the listening id */
	enum iwcm_event_type event;
	int status; /* 0 or -errno */
	union {
		struct iwcm_conn_param conn; /* CONNECT_REQUEST, ESTABLISHED, REJECTED */
	} param;
	int iw_err; /* extension: the cause of a failure as one iw_err, 0 otherwise:
		     * the stack's code (IW_EMPA_RTR, ...) or, where the socket
		     * failed, IW_ESYS(errno); iwv_strerror() names it */
	/* extension: what MPA negotiated (ESTABLISHED), or what the peer asked
	 * (CONNECT_REQUEST: its rev, C bit, markers_tx = its M bit, i.e. we would
	 * send Markers, p2p/rtr/ird/ord from its IRD/ORD word; markers_rx false).
	 * In a CONNECT_REQUEST, param.conn.responder_resources is the peer's ORD
	 * and initiator_depth its IRD, as librdmacm reports them. */
	struct {
		uint8_t mpa_rev;
		bool crc;
		bool markers_tx;
		bool markers_rx;
		bool p2p;
		uint8_t rtr;
		uint16_t ird;
		uint16_t ord;
	} mpa;
};

/* Event channel on the default context (created on first use, as librdmacm opens
 * the devices for the program). */
IW_EXPORT struct iwcm_event_channel *iwcm_create_event_channel(void);
/* Extension: an event channel whose ids live on `context`. */
IW_EXPORT struct iwcm_event_channel *iwcm_create_event_channel_ctx(struct iwv_context *context);
/* EBUSY while ids use it.  A thread blocked in iwcm_get_cm_event on it
 * returns -1 with EBADF (the channel is freed once it has). */
IW_EXPORT int iwcm_destroy_event_channel(struct iwcm_event_channel *channel);

/* The calls below return 0, or -1 with errno set (as librdmacm). */
IW_EXPORT int iwcm_create_id(struct iwcm_event_channel *channel, struct iwcm_id **id, void *context,
			     enum iwcm_port_space ps);
/* Tears down the connection (abortively unless already disconnected; no event is
 * reported for it) and drops the id's queued events; an attached QP is detached,
 * flushed and left for iwv_destroy_qp.  EBUSY while events of this id that
 * iwcm_get_cm_event returned are not yet acknowledged. */
IW_EXPORT int iwcm_destroy_id(struct iwcm_id *id);

IW_EXPORT int iwcm_set_options(struct iwcm_id *id, const struct iwcm_options *opt);
IW_EXPORT int iwcm_get_options(struct iwcm_id *id, struct iwcm_options *opt);

IW_EXPORT int iwcm_bind_addr(struct iwcm_id *id, const struct sockaddr *addr);
/* Address and route resolution complete at once (ADDR_RESOLVED, ROUTE_RESOLVED):
 * TCP finds the route when connecting. */
IW_EXPORT int iwcm_resolve_addr(struct iwcm_id *id, const struct sockaddr *src,
				const struct sockaddr *dst, int timeout_ms);
IW_EXPORT int iwcm_resolve_route(struct iwcm_id *id, int timeout_ms);
IW_EXPORT int iwcm_listen(struct iwcm_id *id, int backlog);

/* Create a QP on id's context and attach it (qp_type must be IWV_QPT_RC). */
IW_EXPORT int iwcm_create_qp(struct iwcm_id *id, struct iwv_pd *pd,
			     struct iwv_qp_init_attr *qp_init_attr);
/* Attach a QP made with iwv_create_qp (extension; it must be in INIT). */
IW_EXPORT int iwcm_attach_qp(struct iwcm_id *id, struct iwv_qp *qp);
IW_EXPORT void iwcm_destroy_qp(struct iwcm_id *id);

/* conn_param may be NULL (no private data, default IRD/ORD).  An RDMA Write's own
 * completion is SUCCESS once it is sent; a protection error the peer finds in
 * it shows on the work requests after it (flushed with the peer's Terminate). */
IW_EXPORT int iwcm_connect(struct iwcm_id *id, struct iwcm_conn_param *conn_param);
IW_EXPORT int iwcm_accept(struct iwcm_id *id, struct iwcm_conn_param *conn_param);
IW_EXPORT int iwcm_reject(struct iwcm_id *id, const void *private_data, uint8_t private_data_len);
/* Graceful: what is queued goes out, then FIN; DISCONNECTED follows when the
 * peer's FIN arrives (or after close_timeout_ms, with a reset). */
IW_EXPORT int iwcm_disconnect(struct iwcm_id *id);

/* Blocks (progressing the stack) unless channel->fd is O_NONBLOCK (then EAGAIN); a
 * signal caught while blocked ends it with EINTR; the channel destroyed by another
 * thread meanwhile ends it with EBADF. */
IW_EXPORT int iwcm_get_cm_event(struct iwcm_event_channel *channel, struct iwcm_event **event);
IW_EXPORT int iwcm_ack_cm_event(struct iwcm_event *event);

IW_EXPORT struct sockaddr *iwcm_get_local_addr(struct iwcm_id *id);
IW_EXPORT struct sockaddr *iwcm_get_peer_addr(struct iwcm_id *id);
IW_EXPORT uint16_t iwcm_get_src_port(struct iwcm_id *id); /* host order */
IW_EXPORT uint16_t iwcm_get_dst_port(struct iwcm_id *id);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_IWCM_H */
