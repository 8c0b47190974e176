/* SPDX-License-Identifier: MIT */
/*
 * ipf_int.h - internals of iwperf, shared by its files:
 *
 *   iwperf.c      main, the command line and --help
 *   ipf_proto.c   the wire: HELLO, WELCOME, DONE/CREDIT/RESULT, the pattern
 *   ipf_drive.c   the driver: one client loop and one server loop, for
 *                 bandwidth and ping-pong, over either transport
 *   ipf_verbs.c   the iWARP transport (iwv.h, iwcm.h)
 *   ipf_tcp.c     the --tcp-baseline transport (plain sockets)
 *   ipf_report.c  what is printed
 *
 * Theory of operation.
 *
 * Roles.  The server (-s) listens and serves connections as they come, all
 * at once, until SIGINT/SIGTERM.  Each connection is a self-contained test:
 * the client states the pattern in a HELLO (in the MPA private data of the
 * connect, or as the first octets of a --tcp-baseline stream) and the server
 * answers with a WELCOME (the accept's private data, or the first octets
 * back) that carries what the client needs: the STag, address and length of
 * the server's buffer for RDMA Write and Read, and the receive credits for
 * Sends.  A client with --qps N opens N such connections, each with its own
 * QP, and drives them all from one thread.
 *
 * The driver and the transports.  What a test is - how many messages, how
 * many in flight, when a ping is answered, when the clock stops, what the
 * RESULT must say - is written once, in ipf_drive.c, against struct
 * ipf_transport_ops below; how messages move is a transport's business
 * (ipf_verbs.c posts work requests and polls a CQ, ipf_tcp.c calls sendmsg
 * and recvmsg on non-blocking sockets).  A client connection counts
 * messages `posted` (handed to the transport) and `completed` (done, in
 * order: the transport says so with ipf_completed()); the driver keeps at
 * most `window` in between.  Ping-pong sends one message, ping(), and waits
 * for the transport's ipf_pong().  At the end the driver calls finish() (DONE
 * over iWARP, a half-close over TCP) and waits for the transport's
 * ipf_result().  The server loop accepts, steps each session, and reaps;
 * the HELLO check, the refusal, the data checks and the RESULT line are
 * driver helpers the transports call.
 *
 * Progress.  Both ends busy-poll: iwv_poll_cq() moves bytes between the
 * sockets and the QPs when the CQ is empty (inline progress,
 * docs/architecture.md §8), and the TCP baseline busy-polls non-blocking
 * sockets the same way, so the two transports pay for the same model.
 * Work requests are posted in lists, only every Nth is signalled (its
 * completion retires the ones before it, as completions are in order on a
 * QP), and at most --depth are in flight.
 *
 * Flow control for Sends.  iWARP has no RNR retry: a Send that finds no
 * posted receive is fatal to the connection (RFC 5040 §5.3).  The server
 * posts C receives for data (C in the WELCOME) plus two for control, and
 * reposts each as soon as it has consumed it; every K reposts it sends a
 * CREDIT message worth K.  The client never has more than C data Sends
 * beyond the credits returned.  K is chosen so that at most four CREDIT
 * messages can be in flight, so the client's receive ring is fixed.
 *
 * Telling data from control on the Send queue.  Data Sends are exactly
 * --size octets; control messages (DONE, CREDIT, RESULT) are 40 octets, or
 * 48 when --size is 40, so byte_len alone tells them apart.
 *
 * End of a test.  The client sends DONE (the messages and octets it moved)
 * once its last data work request completed; the server, which sees DONE
 * only after everything before it was placed (RFC 5040 §5.5 ordering),
 * checks the data if --verify asked for it and answers RESULT.  The client's
 * clock runs from its first post to RESULT, so the time covers delivery,
 * not just hand-over to the local socket.  Over TCP the client half-closes
 * instead of DONE and the server answers RESULT, then closes.
 *
 * RFC 7306 (iWARP only; both QPs enable it for these operations alone, as
 * nothing negotiates it).  Atomics: the server's buffer is one 8-octet word,
 * zero at the start, shared by the connections of one test (the HELLO's test
 * id).  The client's slots are the 8-octet result buffers; each completion
 * (ipf_completed, or a ping-pong's) hands the original values to
 * ipf_atomic_done, which counts the operations that changed the word (every
 * Fetch-and-Add of 1; a Compare-and-Swap whose compare matched, swapping in
 * the compared value + 1).  A connection's Compare-and-Swap compares with the
 * value the word has if its earlier ones succeeded (the responder performs
 * one QP's atomics in order, so on one QP they all do); a failed one - another
 * connection got there first - is counted and resynchronises the connection
 * from the original value it returned.  RESULT's count is the word when the
 * server answered that DONE: at least what the connection changed, and the
 * word's final value for the last DONE, which the client sends after every
 * other connection's atomics completed; so the largest RESULT must equal the
 * operations that changed the word, summed (atomic_final).  --verify
 * checks each Fetch-and-Add's original: those of one connection increase,
 * and those of all are 0 .. n-1 each once.  RDMA Write with Immediate: an RDMA Write whose Immediate Data
 * (the message number, 32 bits) consumes one of the server's receives, under
 * the credits of Send; the server checks the number and length of each.
 *
 * Verification.  Message i of a connection carries a pseudo-random pattern
 * keyed by (connection seed, i), computable at any offset (ipf_proto.h), so
 * each end can check what it received without a copy of what was sent: the
 * server checks each Send, and after DONE the last message written into
 * each of its RDMA Write slots; the client checks each Read against the
 * server's fixed slot patterns and each echo of a ping-pong.
 */
#ifndef IWPERF_IPF_INT_H
#define IWPERF_IPF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "iwt_opt.h"

#include "ipf_proto.h"
#include "ipf_report.h"

#define PROG		    "iwperf"
#define IWPERF_DEFAULT_PORT 7175
#define IWPERF_DEFAULT_ORD  16 /* the library's default ORD (iwcm.h) */
#define IPF_PEER_LEN	    128

/* The command line (iwperf.c). */
struct ipf_opts {
	bool server;
	const char *host;      /* client: server address */
	const char *bind_addr; /* server: listen address */
	unsigned port;
	int op;		 /* enum ipf_op (--op atomic: IPF_OP_FADD or IPF_OP_CSWAP) */
	bool cswap;	 /* --atomic cswap */
	bool atomic_set; /* --atomic given */
	uint32_t size;
	uint64_t iters;
	double seconds;
	bool pingpong;
	bool wait_memory; /* --wait memory */
	unsigned qps;
	unsigned depth;
	bool json;
	bool tcp;
	bool verify;
	int verbose;
	bool quiet;
	struct iwt_opt iw;
};

/* ---------------------------------------------------------------------- */
/* Client                                                                  */
/* ---------------------------------------------------------------------- */

enum ipf_cstate {
	IPF_C_SETUP,  /* the transport connects it */
	IPF_C_RUN,    /* moving messages */
	IPF_C_FINISH, /* all moved, finish() called: waiting for RESULT */
	IPF_C_DONE,   /* RESULT in */
};

/* One client connection, as the driver sees it. */
struct ipf_conn {
	struct ipf_client *cl;
	int idx;
	enum ipf_cstate state;
	uint64_t seed;	 /* its pattern (in its HELLO) */
	uint64_t target; /* messages (ping-pong: round trips) to complete */
	/* set up by the transport */
	uint8_t *data;	 /* nslots slots of --size octets (ping-pong: the ping) */
	uint32_t nslots; /* ours */
	uint32_t rslots; /* the server's Read slots: what a Read of message m finds */
	uint32_t window; /* bandwidth: messages posted and not completed, at most */
	/* bandwidth */
	uint64_t posted, completed, verified;
	/* ping-pong */
	uint64_t iter; /* round trips done */
	bool waiting;
	uint64_t t_ping;
	/* atomics: what the target word must hold, and the operations that changed it */
	uint64_t expect;    /* cswap: the value the next one compares with */
	uint64_t a_ok;	    /* fadd: all; cswap: the compares that matched */
	uint64_t *cmp;	    /* cswap: the compare value of each slot's operation */
	uint64_t word;	    /* the server's word in this connection's RESULT */
	uint64_t last_orig; /* fadd --verify: the last original returned (if a_ok) */
	struct ipf_res r;
	struct ipf_lat lat;
	void *t; /* the transport's state of the connection */
};

/* Connection parameters both transports derive from the options. */
struct ipf_plan {
	uint32_t nslots; /* client data slots */
	uint32_t depth;	 /* work requests (or messages) in flight */
};

/* One client run. */
struct ipf_client {
	const struct ipf_opts *o;
	const struct ipf_transport_ops *t;
	struct sockaddr_storage dst;
	socklen_t dst_len;
	uint64_t test_id;
	struct ipf_conn *c; /* o->qps of them */
	/* set up by the transport */
	struct ipf_plan pl;
	struct ipf_run_info ri;
	char how[200]; /* the banner's words for the transport */
	void *t_state; /* the transport's state of the run */
	/* fadd --verify: the originals returned so far, one bit each */
	uint64_t *seen;
	size_t seen_len; /* in 64-bit words */
	uint64_t seen_max;
};

/* ---------------------------------------------------------------------- */
/* Server                                                                  */
/* ---------------------------------------------------------------------- */

/* One served connection, first member of the transport's session. */
struct ipf_sess {
	struct ipf_sess *next;
	struct ipf_server *sv;
	char peer[IPF_PEER_LEN];
	struct ipf_hello h;
	uint32_t nslots; /* data slots: Write/Read targets, stream receives, the ping */
	uint8_t *data;
	uint64_t rx_msgs;    /* messages received (RDMA Write ping-pong: rounds) */
	struct ipf_ctrl out; /* RESULT, status and first bad message as they come */
	bool setup;	     /* being set up or torn down: the loop looks for events often */
	bool closed;	     /* the loop frees it */
};

struct ipf_server {
	const struct ipf_opts *o;
	const struct ipf_transport_ops *t;
	struct sockaddr_storage addr; /* to listen on */
	socklen_t addr_len;
	struct ipf_sess *list;
	void *t_state; /* the transport's listener */
};

/* ---------------------------------------------------------------------- */
/* The transport interface                                                 */
/* ---------------------------------------------------------------------- */

/*
 * What a transport does for the driver.  Calls return 0 (or a count) on
 * success and -1 after ipf_fail() on failure, unless said otherwise.
 */
struct ipf_transport_ops {
	const char *name;	/* "iwarp" or "tcp" */
	bool tcp;		/* HELLO flag IPF_HF_TCP expected */
	const char *read_noun;	/* "bad data in READ_NOUN m" */
	const char *reply_noun; /* "bad data in REPLY_NOUN i" */

	/* Client. */
	/* Connect every cl->c[i] (HELLO out, WELCOME in), set its data, nslots,
	 * rslots and window, and cl->pl, ri and how. */
	int (*setup)(struct ipf_client *cl);
	/* Bandwidth: hand over messages [c->posted, c->posted + n); how many taken. */
	int (*post)(struct ipf_conn *c, uint64_t n);
	/* Ping-pong: send round trip c->iter; 1 on its way, 0 not now. */
	int (*ping)(struct ipf_conn *c);
	/* Progress; report through ipf_completed(), ipf_pong(), ipf_result(). */
	int (*poll)(struct ipf_conn *c);
	/* Bandwidth, --seconds over: the fewest messages it can end with. */
	uint64_t (*stop_at)(const struct ipf_conn *c);
	/* Everything moved (c->r.msgs of them): tell the server. */
	int (*finish)(struct ipf_conn *c);
	/* Every RESULT in: end the connections in good order. */
	int (*close)(struct ipf_client *cl);
	/* Free what setup made (also after a failure half way). */
	void (*free)(struct ipf_client *cl);

	/* Server. */
	/* Listen on sv->addr (and say where); sv->t_state. */
	int (*listen)(struct ipf_server *sv);
	/* New connections and connection events: sessions onto sv->list. */
	int (*accept)(struct ipf_server *sv);
	/* Progress one session; set s->closed when it is over. */
	void (*serve)(struct ipf_sess *s);
	/* No session: wait a little for the next connection. */
	void (*idle)(struct ipf_server *sv);
	void (*sess_free)(struct ipf_sess *s);
	void (*unlisten)(struct ipf_server *sv);
};

/*
 * A transport's ops, from functions named by one rule: the client's C_setup,
 * C_post, C_ping, C_poll, C_stop_at, C_finish, C_close, C_free, the
 * server's S_listen, S_accept, S_serve, S_idle, S_sess_free, S_unlisten
 * (a transport that lacks one does not compile).
 */
#define IPF_TRANSPORT_OPS(nm, is_tcp, rnoun, pnoun, C, S)                                          \
	{                                                                                          \
		.name = nm, .tcp = is_tcp, .read_noun = rnoun, .reply_noun = pnoun,                \
		.setup = C##_setup, .post = C##_post, .ping = C##_ping, .poll = C##_poll,          \
		.stop_at = C##_stop_at, .finish = C##_finish, .close = C##_close,                  \
		.free = C##_free, .listen = S##_listen, .accept = S##_accept, .serve = S##_serve,  \
		.idle = S##_idle, .sess_free = S##_sess_free, .unlisten = S##_unlisten,            \
	}

extern const struct ipf_transport_ops ipf_verbs_ops, ipf_tcp_ops;

/* ---------------------------------------------------------------------- */
/* The driver (ipf_drive.c)                                                */
/* ---------------------------------------------------------------------- */

/* A client run or a server until SIGINT/SIGTERM; 0, or -1 (ipf_fail_print). */
int ipf_client_run(const struct ipf_opts *o, const struct ipf_transport_ops *t);
int ipf_server_run(const struct ipf_opts *o, const struct ipf_transport_ops *t);

/*
 * The first runtime failure, kept for main to print as the one line on
 * stderr; later ones are dropped.  Returns -1.
 */
int ipf_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The cause is on stderr already (printed by a helper).  Returns -1. */
int ipf_fail_said(void);
/* main: the failure line, unless it was printed. */
void ipf_fail_print(void);

/* Client, from a transport: messages up to `upto` completed (Reads checked, atomics counted). */
int ipf_completed(struct ipf_conn *c, uint64_t upto);
/* Client, from a transport: the round trip ended with `reply`; check len octets of message `key_msg`. */
int ipf_pong(struct ipf_conn *c, const uint8_t *reply, size_t len, uint64_t key_msg);
/* Client, from a transport: the server's RESULT. */
int ipf_result(struct ipf_conn *c, const struct ipf_ctrl *m);
/* Client: the slot of bandwidth message `seq`, with its pattern under --verify (not for Reads). */
uint8_t *ipf_slot_out(struct ipf_conn *c, uint64_t seq);
/* Client, atomics: the operands of message `seq` (fadd: add 1; cswap: compare, swap). */
void ipf_atomic_args(struct ipf_conn *c, uint64_t seq, uint64_t *compare_add, uint64_t *swap);
/* Client, atomics: message `seq` returned the original value `orig`. */
int ipf_atomic_done(struct ipf_conn *c, uint64_t seq, uint64_t orig);

/* Server: a connection's HELLO into s->h and s->nslots; NULL, or why it is refused. */
const char *ipf_sess_hello(struct ipf_sess *s, const uint8_t *p, size_t len);
/* Server: the Read slots' patterns under --verify (s->data set). */
void ipf_sess_fill(struct ipf_sess *s);
/* Server: check len octets of message m at p under --verify; note the first bad one. */
void ipf_sess_check(struct ipf_sess *s, const uint8_t *p, size_t len, uint64_t m);
/* Server: note the first failure for the RESULT. */
void ipf_sess_bad(struct ipf_sess *s, uint8_t status, uint64_t msg, uint64_t off);
/* Server: the RESULT of `count` messages into buf (len octets), and the line. */
void ipf_sess_result(struct ipf_sess *s, uint64_t count, uint8_t *buf, size_t len);
/* Server: a refused WELCOME with `why` into buf, and the line on stderr. */
void ipf_refuse(const char *peer, const char *why, uint8_t buf[IPF_WELCOME_LEN]);

/* Client: the HELLO of connection c but for the transport's buffer fields. */
void ipf_hello_make(const struct ipf_conn *c, struct ipf_hello *h);

static inline uint32_t ipf_clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/* Connection parameters for `depth` in flight. */
void ipf_plan_make(const struct ipf_opts *o, uint32_t depth, struct ipf_plan *p);
/* Slots of `size` octets one connection may pin: at most `want`, at least 1. */
uint32_t ipf_slots_for(uint32_t size, uint32_t want);
/* Page-aligned, zeroed (every page touched before the clock starts); NULL without memory. */
uint8_t *ipf_buf_alloc(size_t len);
/* Resolve host:port, or ipf_fail. */
int ipf_resolve(const char *host, unsigned port, bool passive, struct sockaddr_storage *ss,
		socklen_t *len);

#endif
