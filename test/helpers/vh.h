/* SPDX-License-Identifier: MIT */
/*
 * vh.h - helpers for the verbs and CM tests (test/verbs/): both ends of a real
 * loopback connection in one process, made with the connection manager.
 *
 * Theory of operation.  Without an engine thread a context moves octets only
 * while one of its calls runs, and with both ends in one thread nothing may
 * block.  So every CM event channel the helpers know is O_NONBLOCK and a
 * "world" pumps them all: it drains each channel, copying and acknowledging
 * every event into one queue (an event for one id is kept while the test waits
 * for another), and polls an always-empty "tick" CQ per channel so that each
 * context progresses even while the test waits on the other one.  Every wait
 * has a deadline (vh_deadline_ms) and fails the test instead of hanging; idle
 * rounds spin a little, then sleep 1 ms in poll() on the channel fds.
 *
 * A pair (struct vh_pair) is a listener and a client on one or two contexts;
 * its server side is the id the CONNECT_REQUEST created.  vh_pair_down() closes
 * gracefully, waits for DISCONNECTED on both ids and asserts that every
 * destructor returns 0, so each test also checks that nothing was left behind
 * (iwv_close_device() says EBUSY otherwise; ASan's leak check sees the rest).
 *
 * Compiled once: vh.c and ih.c make the helper library of test/meson.build
 * (vh_dep), on the public headers of the stack only.  Failures are Check
 * failures of the calling test, so these helpers belong to the process Check
 * runs the test in; a forked peer uses ih.h (ih_set_nonblock() serves both).
 */
#ifndef IW_VH_H
#define IW_VH_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#define VH_DEADLINE_MS 20000
#define VH_MAX_CH      8
#define VH_PD_MAX      512
#define VH_GUARD       64
#define VH_GUARD_OCTET 0xEE
#define VH_MAX_BUFS    64
#define VH_CQE	       8192
#define VH_ACCESS_ALL  (IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ)
#define VH_MIB	       (1024u * 1024u)

/*
 * The bound of every wait, in ms (VH_DEADLINE_MS unless changed).  A test that
 * moves much data under sanitizers may raise it; Check runs each test in its
 * own process, so the change ends with the test.
 */
extern int vh_deadline_ms;

/* th_now_ms() + vh_deadline_ms. */
uint64_t vh_deadline(void);

/* ---------------------------------------------------------------------- */
/* The world: every channel pumped, every event kept                       */
/* ---------------------------------------------------------------------- */

/* A CM event as the test sees it: copied (private data too), already acknowledged. */
struct vh_ev {
	struct iwcm_id *id;
	struct iwcm_id *listen_id;
	enum iwcm_event_type event;
	int status;
	int iw_err;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	size_t pd_len;
	uint8_t pd[VH_PD_MAX];
	__typeof__(((struct iwcm_event *)0)->mpa) mpa;
};

/* Zero-initialise; vh_world_fini() frees it. */
struct vh_world {
	int nch;
	struct iwcm_event_channel *ch[VH_MAX_CH];
	struct iwv_cq *tick[VH_MAX_CH];
	struct vh_ev *q;
	size_t qn, qcap;
	unsigned int idle;
};

/* iwcm_event_str(t), "(null)" for an unknown type. */
const char *vh_evname(int t);

/*
 * Add a channel (made O_NONBLOCK) to the world; ctx (may be NULL) gets a tick
 * CQ so the world progresses it.  At most VH_MAX_CH channels.
 */
void vh_world_add(struct vh_world *w, struct iwcm_event_channel *ch, struct iwv_context *ctx);

/* Stop pumping ch (before destroying it or its context); queued events stay. */
void vh_world_remove(struct vh_world *w, struct iwcm_event_channel *ch);

/* Remove every channel, free the queue, zero w. */
void vh_world_fini(struct vh_world *w);

/* One round: drain every channel, tick every context.  Returns events gathered. */
int vh_pump(struct vh_world *w);

/* A round; when it gathered nothing, spin (first rounds) or sleep 1 ms on the channel fds. */
void vh_step(struct vh_world *w);

/*
 * Take the oldest queued event of id (a CONNECT_REQUEST belongs to its
 * listener) into out (may be NULL); false when none is queued.  No pumping.
 */
bool vh_take(struct vh_world *w, const struct iwcm_id *id, struct vh_ev *out);

/* Drop what is queued for an id about to be destroyed (its address may be reused). */
void vh_forget(struct vh_world *w, const struct iwcm_id *id);

/* The next event of id within ms milliseconds (pumping meanwhile); false when none came. */
bool vh_next(struct vh_world *w, const struct iwcm_id *id, struct vh_ev *out, int ms);

/* The next event of id is of type, within vh_deadline_ms; copied to out (may be NULL). */
void vh_expect(struct vh_world *w, const struct iwcm_id *id, enum iwcm_event_type type,
	       struct vh_ev *out);

/* Fail if an event of id is queued now (after one more pump). */
void vh_expect_no_event(struct vh_world *w, const struct iwcm_id *id);

/* ---------------------------------------------------------------------- */
/* Completions                                                             */
/* ---------------------------------------------------------------------- */

/* Exactly n completions from cq into wc (pumping the world meanwhile), within the deadline. */
void vh_poll_wc(struct vh_world *w, struct iwv_cq *cq, int n, struct iwv_wc *wc);

/* vh_poll_wc() of one completion. */
struct iwv_wc vh_poll1(struct vh_world *w, struct iwv_cq *cq);

/* Nothing more in cq now. */
void vh_cq_empty(struct iwv_cq *cq);

/* wc has this wr_id, status and opcode. */
void vh_wc_is(const struct iwv_wc *wc, uint64_t wr_id, enum iwv_wc_status st,
	      enum iwv_wc_opcode op);

/* ---------------------------------------------------------------------- */
/* A connected pair                                                        */
/* ---------------------------------------------------------------------- */

struct vh_buf {
	uint8_t *base; /* guard | p[0..len) | guard */
	uint8_t *p;
	size_t len;
	struct iwv_mr *mr;
};

struct vh_side {
	struct iwv_context *ctx;
	struct iwcm_event_channel *ch;
	struct iwv_pd *pd;
	struct iwv_comp_channel *cc; /* with vh_cfg.comp_channel */
	struct iwv_cq *scq, *rcq;
	struct iwcm_id *id;
	struct iwv_qp *qp;
	struct iwv_qp_cap cap; /* as granted */
	struct vh_ev est;      /* its ESTABLISHED */
	bool disconnected;     /* its DISCONNECTED was consumed */
};

struct vh_pair;

struct vh_cfg {
	bool two_ctx;
	int family;		/* AF_INET or AF_INET6 */
	int c_thread, s_thread; /* iwv_context_attr.engine_thread (-1: environment) */
	bool c_opt_set, s_opt_set;
	struct iwcm_options c_opt, s_opt; /* s_opt goes on the listener */
	struct iwcm_conn_param c_param, s_param;
	struct iwv_qp_cap cap;
	int sq_sig_all;
	int cqe;
	bool comp_channel;	  /* one completion channel per side for both its CQs */
	bool default_channel;	  /* iwcm_create_event_channel(): ids on the default context */
	int c_rfc7306, s_rfc7306; /* iwv_qp_init_attr.rfc7306 of each side's QP */
	unsigned c_rnr_hold_ms, s_rnr_hold_ms; /* iwv_qp_init_attr.rnr_hold_ms of each */
	int backlog;			       /* the listener's (0: 128) */
	/* Called with the side's QP in INIT, just before connect / accept. */
	void (*before_connect)(struct vh_pair *p);
	void (*before_accept)(struct vh_pair *p);
	void *arg;
};

struct vh_pair {
	struct vh_cfg cfg;
	struct vh_world w;
	struct iwcm_id *listen;
	uint16_t port;
	struct vh_side c, s;
	struct vh_ev req; /* the CONNECT_REQUEST */
	int nbufs;
	struct vh_buf bufs[VH_MAX_BUFS];
};

/* IPv4, one context, engine threads as the environment says, 256-WR queues, all signaled. */
void vh_cfg_default(struct vh_cfg *cfg);

/* A context with iwv_context_attr.engine_thread = engine_thread (-1: environment). */
struct iwv_context *vh_ctx_open(int engine_thread);

/* The QP attributes cfg asks for on side sd (its CQs, sd as qp_context). */
struct iwv_qp_init_attr vh_qp_attr(const struct vh_cfg *cfg, struct vh_side *sd);

/* Contexts, channels, PDs, CQs and a listener on port 0 of the loopback (p->port). */
void vh_pair_listen(struct vh_pair *p, const struct vh_cfg *cfg);

/* Client: id, resolve address and route, QP (in INIT, not connected). */
void vh_pair_client(struct vh_pair *p);

/* Client: vh_pair_client(), then connect. */
void vh_pair_connect(struct vh_pair *p);

/* Server: the CONNECT_REQUEST, a QP on the new id, accept. */
void vh_pair_accept(struct vh_pair *p);

/* ESTABLISHED on the client, then on the server (kept in c.est, s.est). */
void vh_pair_wait_up(struct vh_pair *p);

/* listen, connect, accept, wait up. */
void vh_pair_up(struct vh_pair *p, const struct vh_cfg *cfg);

/* The side's DISCONNECTED (next event of its id), once. */
void vh_side_wait_disconnected(struct vh_pair *p, struct vh_side *sd);

/* Graceful close from both ends, then every object, asserting each destructor. */
void vh_pair_down(struct vh_pair *p);

/* ---------------------------------------------------------------------- */
/* Registered buffers and posting                                          */
/* ---------------------------------------------------------------------- */

/* A buffer with guard zones, registered on the side's PD, freed by vh_pair_down(). */
struct vh_buf *vh_buf_new(struct vh_pair *p, struct vh_side *sd, size_t len, int access);

/* The guard zones around b are untouched. */
void vh_buf_guards_intact(const struct vh_buf *b);

/* len octets of the th_rng stream of seed. */
void vh_fill(void *buf, size_t len, uint64_t seed);

/* memcmp with a useful message: the first octet that differs. */
void vh_same(const void *got, const void *want, size_t len, const char *what);

/* The SGE of b[off..off+len). */
struct iwv_sge vh_sge(const struct vh_buf *b, size_t off, size_t len);

/* Post one receive of b[off..off+len); it must be accepted. */
void vh_post_recv(struct iwv_qp *qp, uint64_t wr_id, const struct vh_buf *b, size_t off,
		  size_t len);

/*
 * Post one WR: data from b[off..off+len), for Write/Read the peer's rb at roff
 * (rb NULL otherwise).  Returns iwv_post_send()'s result (bad_wr checked).
 */
int vh_try_send(struct iwv_qp *qp, enum iwv_wr_opcode op, uint64_t wr_id, unsigned int flags,
		const struct vh_buf *b, size_t off, size_t len, const struct vh_buf *rb,
		size_t roff);

/* vh_try_send(), which must succeed. */
void vh_post_send(struct iwv_qp *qp, enum iwv_wr_opcode op, uint64_t wr_id, unsigned int flags,
		  const struct vh_buf *b, size_t off, size_t len, const struct vh_buf *rb,
		  size_t roff);

#endif /* IW_VH_H */
