/* SPDX-License-Identifier: MIT */
/*
 * gw_int.h - internals of iwnfsgw, the NFS-over-iWARP gateway: options, the
 * mode interface, the shared event loop, the connections and their counters,
 * ONC RPC record marking (RFC 5531 §11) and the few RPC header fields the
 * gateway needs.
 *
 * Files:
 *   iwnfsgw.c    command line, logging, the libevent loop around the
 *                rpcrdma ctx fd, the connection list, --stats, signals,
 *                shutdown; the calls waiting for a reply record
 *   gw_server.c  server mode (gw_server_mode): RPC-over-RDMA in,
 *                record-marked RPC over TCP to the backend NFS server
 *   gw_client.c  client mode (gw_client_mode): record-marked RPC over TCP
 *                from local NFS clients, RPC-over-RDMA out to the remote
 *   gw_rpc.c     record-marking reader/writer (and a connection's read
 *                loop, gw_rm_read), XID and message-type access,
 *                the gateway's own SYSTEM_ERR reply
 *   gw_acl.c     the client address list of --allow (gw_acl.h): CIDR
 *                prefixes parsed and matched, no I/O
 *
 * Access control.  The backend NFS server sees every client of a server
 * gateway as the gateway, so the gateway applies the host rules itself: a
 * connection from outside --allow (default: loopback only) is closed before
 * any of its calls is served (gw_allow), and the real client address is in
 * every log line of a connection; the backend connections come from a
 * reserved port (< 1024) when the process may bind one, so an export's
 * `secure` still holds (gw_server.c).
 */
#ifndef IWNFSGW_GW_INT_H
#define IWNFSGW_GW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include <iwarp/rpcrdma.h>

#include "gw_acl.h"
#include "iwt_addr.h"
#include "iwt_opt.h"

/* glibc's sys/queue.h lacks the _SAFE iterator of the BSDs */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)                                                 \
	for ((var) = TAILQ_FIRST(head); (var) && ((tvar) = TAILQ_NEXT(var, field), 1);             \
	     (var) = (tvar))
#endif

#define GW_PROG		     "iwnfsgw"

#define GW_DEFAULT_RDMA_PORT 20049 /* IANA "nfsrdma" */
#define GW_DEFAULT_NFS_PORT  2049
/* Default bound of one RPC record (call or reply): the transport's default
 * max_msg, 4 MiB of data + 64 KiB of headers (NFS rsize/wsize ≤ 4 MiB). */
#define GW_DEFAULT_MAX_RECORD ((4u << 20) + (64u << 10))
#define GW_MIN_MAX_RECORD     4096u
#define GW_MAX_MAX_RECORD     (64u << 20)

struct gw;
struct gw_conn;
struct gw_mode_ops;
struct evconnlistener;

struct gw_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char text[IWT_ADDR_STRLEN]; /* as iwt_addr_format gives it */
};

struct gw_opts {
	const struct gw_mode_ops *mode; /* &gw_server_mode or &gw_client_mode */
	struct gw_addr listen;
	struct gw_addr peer; /* server: --backend; client: --remote */
	struct iwt_opt iw;
	uint16_t credits;      /* --credits */
	uint16_t bc_credits;   /* --backchannel (the mode's default when not given) */
	uint32_t inline_size;  /* --inline */
	bool rprc;	       /* --rprc */
	bool no_send_inv;      /* --no-send-inv */
	uint32_t max_record;   /* --max-record */
	int backend_retries;   /* --backend-retries (server) */
	int rdma_retries;      /* --rdma-retries (client) */
	uint32_t retry_ms;     /* --retry-ms */
	uint32_t call_timeout; /* --call-timeout (client) */
	uint32_t poll_ms;      /* --poll-ms */
	struct gw_acl allow;   /* --allow (default 127.0.0.0/8 and ::1) */
	bool allow_default;    /* no --allow given: allow is the default */
	bool no_resvport;      /* --no-resvport (server) */
	int stats_secs;	       /* --stats=SECONDS (0: at exit and per connection only) */
	bool stats;	       /* --stats given */
	int verbose;	       /* -v count */
};

/* ---------------------------------------------------------------------- */
/* Modes                                                                   */
/* ---------------------------------------------------------------------- */

/* One side of a mode's gateway, as the command line names it. */
struct gw_side {
	const char *opt;  /* "--listen", "--backend", "--remote" */
	const char *what; /* for the start line: "iWARP", "NFS backend"... */
	const char *host; /* the address when the option or its ADDR is left out */
	uint16_t port;	  /* the port when PORT is left out */
	bool required;	  /* the option must be given */
};

/* What the gateway does with one of a mode's connections. */
struct gw_conn_ops {
	/* Close it; the transport still runs and may call back (replies
	 * failing with IW_ERPC_SHUTDOWN, CLOSED), which may free it. */
	void (*close)(struct gw_conn *conn);
	/* Free it (gw_conn_del included); the transport is gone. */
	void (*free)(struct gw_conn *conn);
	/* Its state for --stats ("up", "connecting"...); NULL: not listed. */
	const char *(*state)(struct gw_conn *conn);
};

/*
 * A mode as the rest of the gateway sees it: its command word, its two
 * sides, its defaults, and the steps of its life.  iwnfsgw.c knows a mode
 * only through this table.  Each mode file defines one (gw_server.c:
 * gw_server_mode, gw_client.c: gw_client_mode) and owns what it points to:
 * the listener in gw->listener and its connections, each a struct of the
 * mode's (struct sconn, struct cconn) around a struct gw_conn.
 *
 * Life: parse_args picks the table by the command word; start() runs once
 * the transport and the event loop exist; gw_shutdown (iwnfsgw.c) calls
 * stop(), conn.close() for every connection, destroys the transport, then
 * conn.free() for every connection left - each once.
 */
struct gw_mode_ops {
	const char *name;      /* "server" / "client": the command word */
	struct gw_side listen; /* what --listen accepts */
	struct gw_side peer;   /* the far side: --backend / --remote */
	uint16_t bc_credits;   /* --backchannel default */
	/* Listen (gw->listener).  0, or -1 (logged) with nothing kept. */
	int (*start)(struct gw *gw);
	/* Stop listening; nothing when not listening. */
	void (*stop)(struct gw *gw);
	struct gw_conn_ops conn;
};

extern const struct gw_mode_ops gw_server_mode; /* gw_server.c */
extern const struct gw_mode_ops gw_client_mode; /* gw_client.c */

/* ---------------------------------------------------------------------- */
/* Connections and the gateway                                             */
/* ---------------------------------------------------------------------- */

/*
 * A call the gateway must answer (rpcrdma_reply or rpcrdma_req_drop), waiting
 * for its reply record from the TCP side: a client's call in server mode
 * (gw_server.c: struct pend around it), a backchannel call in client mode.
 * A connection keeps them in a gw_pendq in arrival order.
 */
struct gw_pend {
	TAILQ_ENTRY(gw_pend) link;
	struct rpcrdma_req *req;
	uint32_t xid;
};
TAILQ_HEAD(gw_pendq, gw_pend);

/* Counters the gateway keeps next to rpcrdma_conn_stats. */
struct gw_counters {
	uint64_t calls;	      /* calls forwarded */
	uint64_t replies;     /* replies delivered */
	uint64_t bytes_calls; /* RPC octets of those calls */
	uint64_t bytes_replies;
	uint64_t errors;     /* calls answered with the gateway's SYSTEM_ERR or dropped */
	uint64_t bc_calls;   /* backchannel calls carried */
	uint64_t reconnects; /* backend (server) reconnects */
	uint64_t dropped;    /* records that could not be delivered */
};

/*
 * What every connection has, whichever the mode: a member of the mode's own
 * connection struct (iw_container_of gets back to it), listed in gw->conns
 * from gw_conn_add to gw_conn_del.
 */
struct gw_conn {
	TAILQ_ENTRY(gw_conn) link;
	struct gw *gw;
	unsigned id;
	char peer[IWT_ADDR_STRLEN];
	struct rpcrdma_conn *rc; /* the RPC-over-RDMA connection; NULL once CLOSED */
	struct gw_counters c;
	struct rpcrdma_stats rs; /* last read from the transport */
	bool have_rs;
	bool retired; /* counted in the totals (or never to be): no more stats lines */
};

struct gw {
	struct gw_opts o;
	struct event_base *base;
	struct rpcrdma_ctx *ctx;
	struct event *ev_fd;	/* the ctx fd, persistent EV_READ */
	struct event *ev_timer; /* rpcrdma_ctx_timeout_ms */
	struct event *ev_kick;	/* process now (after posting work) */
	struct event *ev_stats;
	struct event *ev_sig[2];
	/* The mode's own state: its listener, the member of o.mode's kind
	 * (NULL before start and after stop). */
	union {
		struct rpcrdma_listener *rdma; /* server: NFS/RDMA clients */
		struct evconnlistener *tcp;    /* client: NFS clients over TCP */
	} listener;
	TAILQ_HEAD(, gw_conn) conns;
	unsigned next_id;
	unsigned nconns; /* connections alive (for --poll-ms) */
	int exit_code;
	struct gw_conn total; /* summed counters of the connections retired */
	uint64_t refused;     /* connections refused by --allow */
	char allow_text[256]; /* o.allow as text (gw_acl_format), for the log */
	/* server: the backend connections bind a reserved port (not
	 * --no-resvport and binding one was permitted) */
	bool resvport;
};

/* iwnfsgw.c */
void gw_log(struct gw *gw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gw_debug(struct gw *gw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run rpcrdma_ctx_process soon (after rpcrdma_call / _reply / _connect). */
void gw_kick(struct gw *gw);
/*
 * Whether a new connection from sa (NULL: unknown) may be served: its
 * address is in --allow.  A refusal is counted and logged ("refused WHAT
 * ADDR: not in --allow (LIST)"); the caller closes the connection at once.
 */
bool gw_allow(struct gw *gw, const struct sockaddr *sa, const char *what);
/* List a new connection (zeroed by the caller, peer may be set): gives it
 * its id. */
void gw_conn_add(struct gw *gw, struct gw_conn *conn, struct rpcrdma_conn *rc);
/* Take a connection off the list (before freeing it). */
void gw_conn_del(struct gw_conn *conn);
/* The connection is closed: add its counters to the totals and print its
 * last line (with --stats).  Once per connection; later calls do nothing. */
void gw_conn_retire(struct gw_conn *conn);
/*
 * The reply record rec[0..len), read from the `from` side ("backend",
 * "client"), answers the call waiting in q with its XID (rpcrdma_reply).
 * Returns that call's entry, still in q, for the caller to take off and
 * free, with *status 0 or rpcrdma_reply's status (then counted in errors and
 * logged); NULL when no call waits with that XID (counted dropped).
 */
struct gw_pend *gw_pend_reply(struct gw_conn *conn, struct gw_pendq *q, const uint8_t *rec,
			      size_t len, const char *from, int *status);

/* ---------------------------------------------------------------------- */
/* gw_rpc.c: record marking (RFC 5531 §11)                                 */
/* ---------------------------------------------------------------------- */

#define GW_RM_LAST     0x80000000u
#define GW_RM_LEN_MASK 0x7fffffffu
#define GW_RPC_HDR_MIN 8 /* XID + msg_type: the least a record must hold */

enum gw_rm_status {
	GW_RM_MORE = 0,	   /* all input consumed, no record complete yet */
	GW_RM_RECORD = 1,  /* a record is complete: rec[0..len) */
	GW_RM_TOOBIG = -1, /* the record would exceed max */
	GW_RM_NOMEM = -2,
	GW_RM_EOF = -3, /* gw_rm_recv: the peer closed the connection */
	GW_RM_ERR = -4, /* gw_rm_recv: a socket error (errno) */
};

/* Reassembles records from a byte stream split anywhere. */
struct gw_rm_reader {
	uint32_t max;	    /* bound on a whole record (sum of its fragments) */
	uint8_t hdr[4];	    /* fragment header being read */
	unsigned hdr_have;  /* octets of it read */
	uint32_t frag_left; /* fragment octets still to come (0: reading a header) */
	bool last;	    /* the current fragment is the record's last */
	uint8_t *rec;	    /* record being built */
	size_t len, cap;
	uint64_t records, fragments;
	uint32_t lowat; /* SO_RCVLOWAT last set by gw_rm_lowat (0: never) */
};

void gw_rm_init(struct gw_rm_reader *r, uint32_t max);
void gw_rm_fini(struct gw_rm_reader *r);
/*
 * Consume input p[0..n).  Stops right after a complete record: returns
 * GW_RM_RECORD with *used = octets consumed, the record in r->rec[0..r->len)
 * until the next call; GW_RM_MORE when all of p was consumed; a negative
 * gw_rm_status on a record over the bound (the stream is then unusable).
 */
int gw_rm_input(struct gw_rm_reader *r, const uint8_t *p, size_t n, size_t *used);
/* Read as many whole records as `in` holds, calling fn for each (fn returns
 * 0 to go on, < 0 to stop).  Returns 0, a gw_rm_status < 0, or fn's code. */
int gw_rm_drain(struct gw_rm_reader *r, struct evbuffer *in,
		int (*fn)(void *arg, uint8_t *rec, size_t len), void *arg);
/* Read the rest of the current fragment (r->frag_left > 0) straight from the
 * non-blocking socket fd into the record.  GW_RM_RECORD: the record is
 * complete in r->rec[0..r->len); GW_RM_MORE: the socket has no more now, or
 * the fragment is done and the record has more; GW_RM_EOF / GW_RM_ERR. */
int gw_rm_recv(struct gw_rm_reader *r, int fd);
/* Set the socket's SO_RCVLOWAT to what the current fragment still needs (at
 * most GW_LOWAT_MAX; 1 between records), when it changed.  Call after
 * gw_rm_drain consumed the whole input; a reader on a new socket starts at
 * lowat 0 (unknown). */
#define GW_LOWAT_MAX (256u << 10)
void gw_rm_lowat(struct gw_rm_reader *r, int fd);
/*
 * Read what a connection has: the whole records in `in` (its bufferevent's
 * input, gw_rm_drain), then the rest of a large fragment straight from its
 * socket fd (gw_rm_recv), calling fn for each record, and set the socket's
 * lowat for what comes next (gw_rm_lowat).  fn returns 0 to go on, < 0 to
 * stop; it must not free the connection.  Returns 0 when all there is now
 * was read, fn's code, GW_RM_EOF / GW_RM_ERR (errno) from the socket, or
 * another gw_rm_status < 0 (a record over the bound: the stream is lost).
 */
int gw_rm_read(struct gw_rm_reader *r, struct evbuffer *in, int fd,
	       int (*fn)(void *arg, uint8_t *rec, size_t len), void *arg);
/* Append msg[0..len) as one record (fragments of at most frag_max octets;
 * 0 = one fragment).  0 or -1. */
int gw_rm_write(struct evbuffer *out, const void *msg, size_t len, uint32_t frag_max);
/* The same as one fragment, sent at once where it can be: when nothing is
 * queued in `out` and msg is at least GW_RM_DIRECT_MIN octets, header and
 * message go to the socket fd with one sendmsg straight from msg, and only
 * what the socket does not take now is copied into `out` (its bufferevent
 * writes it later).  0 or -1 (no memory for the rest). */
#define GW_RM_DIRECT_MIN (64u * 1024)
int gw_rm_send(struct evbuffer *out, int fd, const void *msg, size_t len);

/* ---------------------------------------------------------------------- */
/* gw_rpc.c: RPC header fields (RFC 5531 §9)                               */
/* ---------------------------------------------------------------------- */

enum { GW_RPC_CALL = 0, GW_RPC_REPLY = 1 };
#define GW_RPC_SYSTEM_ERR    5
#define GW_RPC_ERR_REPLY_LEN 24

uint32_t gw_rpc_xid(const uint8_t *msg);
void gw_rpc_set_xid(uint8_t *msg, uint32_t xid);
/* msg_type of a message of at least GW_RPC_HDR_MIN octets. */
uint32_t gw_rpc_type(const uint8_t *msg);
/* prog/vers/proc of a call (false if too short to hold them). */
bool gw_rpc_call_info(const uint8_t *msg, size_t len, uint32_t *prog, uint32_t *vers,
		      uint32_t *proc);
/* An accepted reply with accept_stat SYSTEM_ERR and an AUTH_NONE verifier
 * for xid, built by the gateway itself: out must hold GW_RPC_ERR_REPLY_LEN. */
size_t gw_rpc_system_err(uint8_t *out, uint32_t xid);

#endif
