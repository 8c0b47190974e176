/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma.h - RPC-over-RDMA version 1 transport (RFC 8166, RFC 8167, RFC 8797)
 * on the iwarp verbs (iwv.h) and connection manager (iwcm.h).
 *
 * One `rpcrdma_ctx` is one event loop's worth of state: a verbs device
 * context and PD, a CM event channel, a completion channel and a timer, all
 * behind ONE pollable fd (rpcrdma_ctx_fd).  When it is readable (or at the
 * latest after rpcrdma_ctx_timeout_ms), call rpcrdma_ctx_process; every
 * callback runs from there, on the caller's thread.  Nothing here is
 * thread-safe: use one ctx per thread.
 *
 * Connections are symmetric once up: either side can send calls and serve
 * calls.  The side that connected (the ONC RPC client) sends forward calls;
 * calls from the accepting side are backchannel calls (RFC 8167), allowed
 * when the client set bc_credits > 0.
 *
 *   requester  rpcrdma_call copies the call, chooses inline / Read chunks /
 *              position-zero Read chunk, Write chunks and a Reply chunk (with
 *              the ULB's help), registers memory, honours credits (calls
 *              beyond the grant wait in order), and delivers the rebuilt
 *              reply to the callback.  On connection loss a client reconnects
 *              and sends outstanding calls again (same XID).
 *   responder  pulls Read chunks with RDMA Read (within ORD), hands the whole
 *              call to the call callback; rpcrdma_reply sends the reply
 *              inline, through Write chunks and/or the Reply chunk, or (the
 *              extension) as a responder-provided Read chunk; Send With
 *              Invalidate when the peer allows it.  Bad headers get
 *              RDMA_ERROR (ERR_VERS / ERR_CHUNK) as RFC 8166 §4.5 says.
 *
 * Responder-provided Read chunks (draft-cel-nfsv4-rpcrdma-reliable-reply):
 * used only when BOTH sides set cfg.rprc; each side advertises it in an
 * extension block after the RFC 8797 private data (rpcrdma_wire.h), which
 * Linux ignores and never sends, so a Linux peer never gets one.
 *
 * Statuses: callbacks get 0 or a negative iw_err (IW_ERPC_* mostly; a lower
 * layer's code, or IW_ESYS(errno) for a system error: one number space, no
 * collisions, rpcrdma_strerror() names every one); functions return 0 / a
 * pointer, or a negative iw_err / NULL with errno.
 */
#ifndef IWARP_RPCRDMA_H
#define IWARP_RPCRDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <iwarp/iwcm.h>
#include <iwarp/rpcrdma_ulb.h>
#include <iwarp/rpcrdma_wire.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rpcrdma_ctx;
struct rpcrdma_conn;
struct rpcrdma_listener;
struct rpcrdma_req;

struct rpcrdma_config {
	/* Size of our receive buffers = the largest inline message the peer may
	 * send us; advertised in the RFC 8797 private data.  Default 4096. */
	uint32_t inline_recv;
	/* Largest inline message we send; the peer's advertised receive size
	 * lowers it (1024 when the peer advertises nothing).  Default 4096. */
	uint32_t inline_send;
	/* Client: credits requested (forward calls in flight).  Server: the most
	 * it grants a connection.  Default 32.  1..1024. */
	uint16_t credits;
	/* Client: backchannel credits offered (calls the server may have in
	 * flight to us; 0 = no backchannel).  Server: the most it uses.  Default 0. */
	uint16_t bc_credits;
	/* Advertise that we accept Send With Invalidate, and use it toward a peer
	 * that advertises it.  Default on (set no_send_inv to turn off). */
	bool no_send_inv;
	/* Responder-provided Read chunks + RDMA_DONE (our extension). */
	bool rprc;
	/* Responder: invalidate a responder-provided Read chunk not claimed by
	 * RDMA_DONE after this long.  Default 30000. */
	uint32_t rprc_timeout_ms;
	/* Largest whole RPC message (call or reply) built or accepted; bounds
	 * every peer-driven allocation.  Default 4 MiB + 64 KiB. */
	uint32_t max_msg;
	/* Reply size assumed when the binding cannot say (no binding, unknown
	 * program, unpredictable reply).  Default 64 KiB. */
	uint32_t default_reply_max;
	/* Client: reconnect attempts after a connection loss (default 5; -1 =
	 * never), spaced reconnect_ms apart (default 500). */
	int reconnects;
	uint32_t reconnect_ms;
	/* Client: connection (TCP + MPA) timeout.  Default 5000. */
	uint32_t connect_timeout_ms;
	/* Upper-layer binding; NULL = none (nothing DDP-eligible). */
	const struct rpcrdma_ulb *ulb;
	void *ulb_arg;
	/* iWARP options for every connection (NULL = iwcm defaults). */
	const struct iwcm_options *cm;
	/* The verbs context the ctx opens: I/O engine, engine thread, receive
	 * buffer size (NULL = iwv_context_attr_default, which follows
	 * IWARP_ENGINE and IWARP_ENGINE_THREAD).  Read by rpcrdma_ctx_create only. */
	const struct iwv_context_attr *verbs;
	/* One line per connection event (NULL = stderr when IWARP_RPCRDMA_LOG is set). */
	void (*log)(void *arg, const char *line);
	void *log_arg;
};

/* Fill *cfg with the defaults above. */
IW_EXPORT void rpcrdma_config_init(struct rpcrdma_config *cfg);

IW_EXPORT struct rpcrdma_ctx *rpcrdma_ctx_create(const struct rpcrdma_config *cfg);
/* Closes every connection and listener (outstanding calls complete with
 * IW_ERPC_SHUTDOWN first). */
IW_EXPORT void rpcrdma_ctx_destroy(struct rpcrdma_ctx *ctx);
IW_EXPORT int rpcrdma_ctx_fd(const struct rpcrdma_ctx *ctx);
/* Milliseconds until a timer is due (-1: none). */
IW_EXPORT int rpcrdma_ctx_timeout_ms(const struct rpcrdma_ctx *ctx);
/* Do all work that is ready, waiting up to timeout_ms (0: do not wait; -1:
 * until something happened).  Returns the number of callbacks run, or a
 * negative iw_err (IW_ESYS(errno) if waiting failed).  EINTR: returns 0. */
IW_EXPORT int rpcrdma_ctx_process(struct rpcrdma_ctx *ctx, int timeout_ms);

/* ---------------------------------------------------------------------- */
/* Connections                                                             */
/* ---------------------------------------------------------------------- */

enum rpcrdma_conn_event {
	RPCRDMA_CONN_UP = 1,	 /* established (also after a reconnect) */
	RPCRDMA_CONN_DOWN = 2,	 /* lost; a client will try to reconnect */
	RPCRDMA_CONN_CLOSED = 3, /* gone for good; the conn is freed after this callback */
};
typedef void (*rpcrdma_conn_fn)(void *arg, struct rpcrdma_conn *conn, enum rpcrdma_conn_event ev,
				int status);

/* A call arrived: msg[0..len) is the whole, rebuilt RPC call, valid until
 * rpcrdma_reply / rpcrdma_req_drop for req. */
typedef void (*rpcrdma_call_fn)(void *arg, struct rpcrdma_req *req, const uint8_t *msg, size_t len);

/* The reply to rpcrdma_call: status 0 and the whole, rebuilt reply (valid
 * during the callback), or status < 0 (IW_ERPC_REMOTE_CHUNK, _REMOTE_VERS,
 * _CANCELLED, _CONN, _SHUTDOWN, _TOOBIG, _ULB, _RDMA) with reply NULL. */
typedef void (*rpcrdma_reply_fn)(void *arg, int status, const uint8_t *reply, size_t len);

/* Start connecting (asynchronous).  Calls may be posted at once; they go out
 * when the connection is up.  on_call serves backchannel calls (may be NULL). */
IW_EXPORT struct rpcrdma_conn *rpcrdma_connect(struct rpcrdma_ctx *ctx, const struct sockaddr *sa,
					       socklen_t salen, rpcrdma_conn_fn on_conn,
					       rpcrdma_call_fn on_call, void *arg);
/* Run the ctx until the connection is up (0) or failed / timed out (< 0). */
IW_EXPORT int rpcrdma_conn_wait_up(struct rpcrdma_conn *conn, int timeout_ms);
/* Graceful close: outstanding calls complete with IW_ERPC_SHUTDOWN,
 * responder-provided Read chunks are invalidated; CLOSED is reported from process(). */
IW_EXPORT void rpcrdma_close(struct rpcrdma_conn *conn);

/* Listen (port 0: any; see rpcrdma_listener_port).  Accepted connections
 * report to on_conn and serve forward calls with on_call. */
IW_EXPORT struct rpcrdma_listener *rpcrdma_listen(struct rpcrdma_ctx *ctx,
						  const struct sockaddr *sa, socklen_t salen,
						  int backlog, rpcrdma_conn_fn on_conn,
						  rpcrdma_call_fn on_call, void *arg);
IW_EXPORT void rpcrdma_listener_close(struct rpcrdma_listener *l);
/* Admission: admit(arg, peer) runs for every connection request before
 * anything is allocated for it; false refuses it with an MPA Reply with
 * R = 1 (RFC 5044 §7.1.2), so the peer sees REJECTED and the connection
 * never comes up.  NULL (the default) admits everyone. */
typedef bool (*rpcrdma_admit_fn)(void *arg, const struct sockaddr *peer);
IW_EXPORT void rpcrdma_listener_set_admit(struct rpcrdma_listener *l, rpcrdma_admit_fn admit,
					  void *arg);
IW_EXPORT uint16_t rpcrdma_listener_port(const struct rpcrdma_listener *l); /* host order */

/* What was negotiated / observed on a connection. */
struct rpcrdma_conn_info {
	bool up;
	bool client;	      /* we connected */
	uint32_t inline_send; /* effective */
	uint32_t inline_recv;
	uint16_t credits; /* client: current grant; server: granted */
	uint16_t bc_credits;
	bool peer_pdata; /* the peer sent RFC 8797 private data */
	bool send_inv;	 /* we may use Send With Invalidate toward the peer */
	bool rprc;	 /* responder-provided Read chunks on (both sides) */
	struct sockaddr_storage peer;
};
IW_EXPORT int rpcrdma_conn_info(const struct rpcrdma_conn *conn, struct rpcrdma_conn_info *info);

/* Counters (per connection; rpcrdma_conn_stats adds nothing up across ctx). */
struct rpcrdma_stats {
	uint64_t calls_sent, replies_received, calls_received, replies_sent;
	uint64_t bc_calls_sent, bc_calls_received;
	uint64_t bytes_inline;	    /* payload octets sent or received in Sends */
	uint64_t bytes_read_chunk;  /* octets moved by RDMA Read for Read chunks */
	uint64_t bytes_write_chunk; /* octets of Write chunks (written or received) */
	uint64_t bytes_reply_chunk; /* octets of Reply chunks */
	uint64_t bytes_rprc;	    /* octets of responder-provided Read chunks */
	uint64_t msgs_inline, msgs_long_call, msgs_long_reply, msgs_rprc;
	uint64_t send_inv;		 /* replies sent / received with Send With Invalidate */
	uint64_t err_sent, err_received; /* RDMA_ERROR */
	uint64_t discarded;		 /* messages silently discarded */
	uint64_t cancelled, retransmitted, reconnects;
	uint64_t credit_waits; /* calls that had to wait for a credit */
};
IW_EXPORT int rpcrdma_conn_stats(const struct rpcrdma_conn *conn, struct rpcrdma_stats *st);
/* User pointer of a connection (set by connect/listen's arg; changeable). */
IW_EXPORT void *rpcrdma_conn_get_arg(const struct rpcrdma_conn *conn);
IW_EXPORT void rpcrdma_conn_set_arg(struct rpcrdma_conn *conn, void *arg);

/* ---------------------------------------------------------------------- */
/* Requester                                                               */
/* ---------------------------------------------------------------------- */

struct rpcrdma_call_opts {
	/* Largest reply expected (whole RPC reply); 0 = ask the binding / the
	 * default.  Bounds the Write chunks + Reply chunk provided. */
	uint32_t max_reply;
	/* Force a mechanism (tests, interop): 0 = choose. */
	unsigned force; /* RPCRDMA_FORCE_* */
	/* Split every chunk we provide into segments of at most this many
	 * octets (0 = one segment per chunk).  For interop tests. */
	uint32_t seg_max;
	/* Give up after this long (0 = never): the call completes with
	 * IW_ETIMEDOUT; it is abandoned, never costs the connection. */
	uint32_t timeout_ms;
};
enum {
	RPCRDMA_FORCE_LONG_CALL = 1 << 0,   /* position-zero Read chunk */
	RPCRDMA_FORCE_READ_CHUNKS = 1 << 1, /* reduce every eligible item */
	RPCRDMA_FORCE_REPLY_CHUNK = 1 << 2, /* always provide a Reply chunk */
	RPCRDMA_FORCE_NO_WRITE = 1 << 3,    /* provide no Write chunks */
	RPCRDMA_FORCE_NO_REPLY = 1 << 4,    /* provide no Reply chunk (tests RPRC / errors) */
};

/* Send a call (msg is copied; its first word is the XID and must be unique
 * among this connection's outstanding calls: IW_ESYS(EEXIST) otherwise).
 * Returns 0 or a negative iw_err (IW_EINVAL, IW_ENOMEM, IW_ERPC_TOOBIG,
 * IW_ERPC_SHUTDOWN, IW_ESYS(EEXIST)); cb runs exactly once when 0 was
 * returned.  *id (may be NULL) names the call for rpcrdma_cancel. */
IW_EXPORT int rpcrdma_call(struct rpcrdma_conn *conn, const void *msg, size_t len,
			   const struct rpcrdma_call_opts *opts, rpcrdma_reply_fn cb, void *arg,
			   uint64_t *id);
/* The same with the call in pieces (1 to RPCRDMA_CALLV_MAX iovecs, copied in
 * order into the transport's buffer): a header built in one place and data
 * held in another go without being joined first.  IW_EINVAL for no pieces,
 * too many, or a piece with a length and no base. */
#define RPCRDMA_CALLV_MAX 16
IW_EXPORT int rpcrdma_callv(struct rpcrdma_conn *conn, const struct iovec *iov, int iovcnt,
			    const struct rpcrdma_call_opts *opts, rpcrdma_reply_fn cb, void *arg,
			    uint64_t *id);
/* Abandon a call: cb runs now with IW_ERPC_CANCELLED.  The credit and the
 * memory stay with the transport until the responder's reply arrives (then
 * dropped), so the connection is unaffected.  IW_ESYS(ENOENT) if not
 * outstanding. */
IW_EXPORT int rpcrdma_cancel(struct rpcrdma_conn *conn, uint64_t id);
/* Calls on the accepting side of a connection are backchannel calls. */

/* ---------------------------------------------------------------------- */
/* Responder                                                               */
/* ---------------------------------------------------------------------- */

/* Reply to a received call (reply copied; its XID must be the call's).  The
 * transport picks inline / Write chunks / Reply chunk / RPRC.  IW_ERPC_TOOBIG
 * (and an RDMA_ERROR ERR_CHUNK to the peer) when it fits nowhere. */
IW_EXPORT int rpcrdma_reply(struct rpcrdma_req *req, const void *reply, size_t len);
/* Drop a call without a reply (the upper layer cannot answer it): the peer
 * gets RDMA_ERROR ERR_CHUNK for its XID, so its call completes with a
 * permanent error and its credit comes back; nothing hangs.  (An upper layer
 * that can should rather reply with an RPC-level error, e.g. SYSTEM_ERR.) */
IW_EXPORT void rpcrdma_req_drop(struct rpcrdma_req *req);
/* The connection a call came on (NULL once that connection is gone: then
 * rpcrdma_reply just frees req and returns IW_ERPC_CONN). */
IW_EXPORT struct rpcrdma_conn *rpcrdma_req_conn(const struct rpcrdma_req *req);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_RPCRDMA_H */
