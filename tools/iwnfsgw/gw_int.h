/* SPDX-License-Identifier: MIT */
/*
 * gw_int.h - internals of iwnfsgw, the NFS-over-iWARP gateway: options, the
 * shared event loop, per-connection counters, ONC RPC record marking
 * (RFC 5531 §11) and the few RPC header fields the gateway needs.
 *
 * Files:
 *   iwnfsgw.c    command line, logging, the libevent loop around the
 *                rpcrdma ctx fd, --stats, signals
 *   gw_server.c  server mode: RPC-over-RDMA in, record-marked RPC over TCP
 *                to the backend NFS server
 *   gw_client.c  client mode: record-marked RPC over TCP from local NFS
 *                clients, RPC-over-RDMA out to the remote
 *   gw_rpc.c     record-marking reader/writer, XID and message-type access,
 *                the gateway's own SYSTEM_ERR reply
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

enum gw_mode { GW_SERVER, GW_CLIENT };

struct gw_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char text[IWT_ADDR_STRLEN]; /* as iwt_addr_format gives it */
};

struct gw_opts {
	enum gw_mode mode;
	struct gw_addr listen;
	struct gw_addr peer; /* server: --backend; client: --remote */
	struct iwt_opt iw;
	uint16_t credits;      /* --credits */
	uint16_t bc_credits;   /* --backchannel */
	bool bc_set;	       /* --backchannel given */
	uint32_t inline_size;  /* --inline */
	bool rprc;	       /* --rprc */
	bool no_send_inv;      /* --no-send-inv */
	uint32_t max_record;   /* --max-record */
	int backend_retries;   /* --backend-retries */
	uint32_t retry_ms;     /* --retry-ms */
	uint32_t call_timeout; /* --call-timeout (client) */
	uint32_t poll_ms;      /* --poll-ms */
	int stats_secs;	       /* --stats=SECONDS (0: at exit and per connection only) */
	bool stats;	       /* --stats given */
	int verbose;	       /* -v count */
};

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

struct gw;

/* One connection's stats line, gathered by the mode and printed by iwnfsgw.c. */
struct gw_conn_report {
	unsigned id;
	const char *peer;
	const char *state;
	struct gw_counters c;
	bool have_rdma;
	struct rpcrdma_stats rs;
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
	unsigned next_id;
	unsigned nconns; /* connections alive (for --poll-ms) */
	int exit_code;
	bool stopping;
	struct gw_counters closed; /* summed counters of connections gone */
	struct rpcrdma_stats closed_rs;
	void *mode; /* gw_server / gw_client state */
};

/* iwnfsgw.c */
void gw_log(struct gw *gw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gw_debug(struct gw *gw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run rpcrdma_ctx_process soon (after rpcrdma_call / _reply / _connect). */
void gw_kick(struct gw *gw);
/* Add a closed connection's counters to the totals and print its last line. */
void gw_conn_retire(struct gw *gw, const struct gw_conn_report *r);
void gw_report_print(struct gw *gw, const struct gw_conn_report *r, const char *what);

/* gw_server.c / gw_client.c: 0 or -1 (message logged). */
int gw_server_start(struct gw *gw);
void gw_server_stats(struct gw *gw, const char *what);
void gw_server_stop(struct gw *gw);
int gw_client_start(struct gw *gw);
void gw_client_stats(struct gw *gw, const char *what);
void gw_client_stop(struct gw *gw);

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
/* Append msg[0..len) as one record (fragments of at most frag_max octets;
 * 0 = one fragment).  0 or -1. */
int gw_rm_write(struct evbuffer *out, const void *msg, size_t len, uint32_t frag_max);

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
