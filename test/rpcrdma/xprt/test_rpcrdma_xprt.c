/* SPDX-License-Identifier: MIT */
/*
 * test_rpcrdma_xprt.c - the RPC-over-RDMA transport (rpcrdma.h) end to end
 * over loopback iWARP connections.
 *
 * Theory of operation.  A client ctx and a server ctx live in this one
 * process and one loop drives both (pump(): process each with timeout 0,
 * sleep 1 ms in poll() on both fds when idle), so every run is deterministic
 * up to the kernel's TCP timing.  The server serves a synthetic program
 * (TPROG: 1 echo an opaque, 2 return N octets, 3 held until the test
 * answers) with a tiny binding declared here (the opaque argument and the
 * opaque result are DDP-eligible, RFC 8166 §6), and real NFSv3/NFSv4
 * messages from nfs_build.h with rpcrdma_nfs_ulb (RFC 8267).  Malformed
 * headers (RFC 8166 §4.5) and misbehaving peers use a raw iwv QP connected
 * with RFC 8797 private data.  Every case checks exact bytes and counters.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>
#include <iwarp/rpcrdma.h>
#include <iwarp/rpcrdma_nfs.h>

#include "nfs_build.h"
#include "th.h"
#include "xprt_int.h" /* the buffers a connection keeps (xbuf_get) */

#define TPROG	    0x20000099u
#define TVERS	    1u /* handled by the test binding */
#define TVERS_NOULB 2u /* not handled: nothing DDP-eligible */
#define DEADLINE_MS 20000
#define MAXC	    128

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ---------------------------------------------------------------------- */
/* The synthetic program and its binding                                   */
/* ---------------------------------------------------------------------- */

#define TFILL	   6000 /* proc 5: octets after the opaque result */
#define TCALL_HDR  40	/* xid CALL 2 prog vers proc AUTH_NONE AUTH_NONE */
#define TREPLY_HDR 24

static size_t tcall(uint8_t *b, uint32_t xid, uint32_t vers, uint32_t proc, const void *arg,
		    uint32_t alen)
{
	uint32_t w[10] = {xid, 0, 2, TPROG, vers, proc, 0, 0, 0, 0};

	for (int i = 0; i < 10; i++)
		put32(b + 4 * i, w[i]);
	put32(b + 40, alen);
	if (arg)
		memcpy(b + 44, arg, alen);
	else
		for (uint32_t i = 0; i < alen; i++)
			b[44 + i] = (uint8_t)(i * 7 + 3);
	memset(b + 44 + alen, 0, ((alen + 3) & ~3u) - alen);
	return 44 + ((alen + 3) & ~3u);
}

static size_t treply(uint8_t *b, uint32_t xid, const void *res, uint32_t rlen)
{
	uint32_t w[6] = {xid, 1, 0, 0, 0, 0};

	for (int i = 0; i < 6; i++)
		put32(b + 4 * i, w[i]);
	put32(b + 24, rlen);
	if (res)
		memcpy(b + 28, res, rlen);
	else
		for (uint32_t i = 0; i < rlen; i++)
			b[28 + i] = (uint8_t)(i * 13 + 1);
	memset(b + 28 + rlen, 0, ((rlen + 3) & ~3u) - rlen);
	return 28 + ((rlen + 3) & ~3u);
}

static bool tulb_handles(void *a, uint32_t prog, uint32_t vers)
{
	return prog == TPROG && vers == TVERS;
}

/* One opaque<> at body offset 0; reduced streams have its data left out. */
static int tulb_walk_opaque(const uint8_t *body, size_t len, rpcrdma_item_fn fn, void *arg)
{
	struct rpcrdma_item it = {.index = 0, .valid = true, .offset = 4};
	int r;

	if (len < 4)
		return IW_ERPC_RPC;
	it.length = be32(body);
	r = fn(arg, &it);
	if (r < 0)
		return r;
	if (r == 1 && 4 + (((uint64_t)it.length + 3) & ~3ull) > len)
		return IW_ERPC_RPC;
	return 0;
}

static int tulb_walk_call(void *a, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			  size_t len, rpcrdma_item_fn fn, void *arg)
{
	if (call->proc != 1)
		return 0;
	return tulb_walk_opaque(body, len, fn, arg);
}

static int tulb_walk_reply(void *a, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			   size_t len, rpcrdma_item_fn fn, void *arg)
{
	return tulb_walk_opaque(body, len, fn, arg);
}

static int tulb_reply_plan(void *a, const struct rpcrdma_rpcinfo *call, const uint8_t *body,
			   size_t len, struct rpcrdma_reply_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->n_items = 1;
	plan->max_inline = 4;
	if (len >= 4)
		plan->item_max[0] = be32(body);
	if (call->proc == 4)
		plan->unpredictable = true;
	if (call->proc == 5)
		plan->max_inline = 4 + TFILL; /* the opaque's length word + the filler */
	return 0;
}

static const struct rpcrdma_ulb tulb = {
	.name = "test",
	.handles = tulb_handles,
	.walk_call = tulb_walk_call,
	.walk_reply = tulb_walk_reply,
	.reply_plan = tulb_reply_plan,
};

/* ---------------------------------------------------------------------- */
/* The world                                                               */
/* ---------------------------------------------------------------------- */

struct res {
	int done; /* times the callback ran */
	int status;
	uint8_t *data;
	size_t len;
	int order;
};

struct held {
	struct rpcrdma_req *req;
	uint8_t *msg;
	size_t len;
};

struct raw;

struct tw {
	struct rpcrdma_ctx *c, *s;
	struct rpcrdma_listener *l;
	struct rpcrdma_conn *cc, *sc;
	uint16_t port;
	int family;
	/* server */
	size_t (*nfs_reply)(struct tw *w, const uint8_t *call, size_t len, uint8_t *out,
			    size_t cap);
	uint8_t *last_call;
	size_t last_len;
	int calls;
	struct held held[MAXC];
	int nheld, max_held;
	int reply_rc; /* of the last rpcrdma_reply */
	/* client */
	struct res r[MAXC];
	int done_order;
	int c_up, c_down, c_closed, s_up, s_closed;
	int c_closed_status;
	/* backchannel */
	int bc_calls;
	/* logs */
	int log_done, log_unclaimed;
	bool tolerant; /* calls may be garbage */
	struct raw *raw;
};

static struct tw W;

static void slog(void *arg, const char *line)
{
	struct tw *w = arg;

	if (strstr(line, "RDMA_DONE"))
		w->log_done++;
	if (strstr(line, "not claimed"))
		w->log_unclaimed++;
	if (getenv("IWARP_RPCRDMA_LOG"))
		fprintf(stderr, "S: %s\n", line);
}

static void c_log(void *arg, const char *line)
{
	if (getenv("IWARP_RPCRDMA_LOG"))
		fprintf(stderr, "C: %s\n", line);
}

static void c_conn(void *arg, struct rpcrdma_conn *conn, enum rpcrdma_conn_event ev, int st)
{
	struct tw *w = &W;

	if (ev == RPCRDMA_CONN_UP)
		w->c_up++;
	else if (ev == RPCRDMA_CONN_DOWN)
		w->c_down++;
	else {
		w->c_closed++;
		w->c_closed_status = st;
		if (w->cc == conn)
			w->cc = NULL;
	}
}

static void s_conn(void *arg, struct rpcrdma_conn *conn, enum rpcrdma_conn_event ev, int st)
{
	struct tw *w = &W;

	if (ev == RPCRDMA_CONN_UP) {
		w->s_up++;
		w->sc = conn;
	} else if (ev == RPCRDMA_CONN_CLOSED) {
		w->s_closed++;
		if (w->sc == conn)
			w->sc = NULL;
	}
}

static void s_call(void *arg, struct rpcrdma_req *req, const uint8_t *msg, size_t len)
{
	struct tw *w = &W;
	struct rpcrdma_rpcinfo ri;
	static uint8_t out[300 * 1024];
	size_t n = 0;

	w->calls++;
	free(w->last_call);
	w->last_call = malloc(len);
	memcpy(w->last_call, msg, len);
	w->last_len = len;
	if (rpcrdma_rpc_parse(msg, len, &ri) != 0 || ri.body_off + 4 > len) {
		ck_assert(w->tolerant); /* only the random-header case sends such calls */
		rpcrdma_req_drop(req);
		return;
	}
	if (ri.prog == TPROG && ri.proc == 3) {
		ck_assert_int_lt(w->nheld, MAXC);
		w->held[w->nheld].req = req;
		w->held[w->nheld].msg = malloc(len);
		memcpy(w->held[w->nheld].msg, msg, len);
		w->held[w->nheld].len = len;
		w->nheld++;
		if (w->nheld > w->max_held)
			w->max_held = w->nheld;
		return;
	}
	if (ri.prog == TPROG && ri.proc == 1) {
		uint32_t alen = be32(msg + ri.body_off);

		if ((uint64_t)ri.body_off + 4 + alen <= len && alen < 250000)
			n = treply(out, ri.xid, msg + ri.body_off + 4, alen);
	} else if (ri.prog == TPROG && (ri.proc == 2 || ri.proc == 4)) {
		if (be32(msg + ri.body_off) < 250000)
			n = treply(out, ri.xid, NULL, be32(msg + ri.body_off));
	} else if (ri.prog == TPROG && ri.proc == 5 && be32(msg + ri.body_off) < 200000) {
		n = treply(out, ri.xid, NULL, be32(msg + ri.body_off));
		for (int k = 0; k < TFILL; k++)
			out[n + (size_t)k] = (uint8_t)(k ^ 0x5a);
		n += TFILL;
	} else if (w->nfs_reply) {
		n = w->nfs_reply(w, msg, len, out, sizeof(out));
	}
	if (!n) {
		rpcrdma_req_drop(req);
		return;
	}
	w->reply_rc = rpcrdma_reply(req, out, n);
}

static void c_bc_call(void *arg, struct rpcrdma_req *req, const uint8_t *msg, size_t len)
{
	struct tw *w = &W;
	uint8_t out[256];
	size_t n = treply(out, be32(msg), msg + TCALL_HDR + 4, be32(msg + TCALL_HDR));

	w->bc_calls++;
	ck_assert_int_eq(rpcrdma_reply(req, out, n), 0);
}

static void c_reply(void *arg, int status, const uint8_t *reply, size_t len)
{
	struct res *r = arg;

	r->done++;
	r->status = status;
	r->order = ++W.done_order;
	free(r->data);
	r->data = NULL;
	r->len = 0;
	if (reply) {
		r->data = malloc(len ? len : 1);
		memcpy(r->data, reply, len);
		r->len = len;
	}
}

static void raw_pump(struct raw *r);

/* Drive both contexts (and a raw endpoint) until cond() or the deadline. */
static void pump_until(bool (*cond)(void), int ms)
{
	uint64_t end = th_now_ms() + (uint64_t)ms;

	while (!cond()) {
		int n = 0;
		struct pollfd pfd[2];

		ck_assert_msg(th_now_ms() < end, "condition not met within %d ms", ms);
		if (W.c)
			n += rpcrdma_ctx_process(W.c, 0);
		if (W.s)
			n += rpcrdma_ctx_process(W.s, 0);
		if (W.raw)
			raw_pump(W.raw);
		if (n == 0) {
			int k = 0;

			if (W.c)
				pfd[k++] = (struct pollfd){.fd = rpcrdma_ctx_fd(W.c),
							   .events = POLLIN};
			if (W.s)
				pfd[k++] = (struct pollfd){.fd = rpcrdma_ctx_fd(W.s),
							   .events = POLLIN};
			poll(pfd, (nfds_t)k, 1);
		}
	}
}

static void pump_ms(int ms)
{
	uint64_t end = th_now_ms() + (uint64_t)ms;

	while (th_now_ms() < end) {
		struct pollfd pfd[2];
		int k = 0;

		if (W.c)
			rpcrdma_ctx_process(W.c, 0);
		if (W.s)
			rpcrdma_ctx_process(W.s, 0);
		if (W.raw)
			raw_pump(W.raw);
		if (W.c)
			pfd[k++] = (struct pollfd){.fd = rpcrdma_ctx_fd(W.c), .events = POLLIN};
		if (W.s)
			pfd[k++] = (struct pollfd){.fd = rpcrdma_ctx_fd(W.s), .events = POLLIN};
		poll(pfd, (nfds_t)k, 1);
	}
}

static int want_n;
static bool cond_up(void)
{
	return W.c_up >= want_n && W.s_up >= want_n;
}

static bool cond_s_up(void)
{
	return W.s_up >= 1;
}

static int res_i;
static bool cond_res(void)
{
	return W.r[res_i].done > 0;
}

static bool cond_all(void)
{
	for (int i = 0; i < want_n; i++)
		if (!W.r[i].done)
			return false;
	return true;
}

static bool cond_held(void)
{
	return W.nheld >= want_n;
}

static void cfg_base(struct rpcrdma_config *cfg, bool server)
{
	rpcrdma_config_init(cfg);
	cfg->ulb = NULL;
	cfg->log = server ? slog : c_log;
	cfg->log_arg = &W;
	cfg->reconnect_ms = 50;
}

static void world_listen(const struct rpcrdma_config *scfg, int family)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	W.family = family;
	W.s = rpcrdma_ctx_create(scfg);
	ck_assert_ptr_nonnull(W.s);
	sl = th_loopback(family, W.port, &ss);
	W.l = rpcrdma_listen(W.s, (struct sockaddr *)&ss, sl, 16, s_conn, s_call, &W);
	ck_assert_msg(W.l != NULL, "rpcrdma_listen: %s", strerror(errno));
	W.port = rpcrdma_listener_port(W.l);
	ck_assert_uint_ne(W.port, 0);
}

static void world_connect(const struct rpcrdma_config *ccfg)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	W.c = rpcrdma_ctx_create(ccfg);
	ck_assert_ptr_nonnull(W.c);
	sl = th_loopback(W.family, W.port, &ss);
	W.cc = rpcrdma_connect(W.c, (struct sockaddr *)&ss, sl, c_conn, c_bc_call, &W);
	ck_assert_ptr_nonnull(W.cc);
	want_n = 1;
	pump_until(cond_up, DEADLINE_MS);
}

static void world_up(const struct rpcrdma_config *ccfg, const struct rpcrdma_config *scfg,
		     int family)
{
	memset(&W, 0, sizeof(W));
	world_listen(scfg, family);
	world_connect(ccfg);
}

static void world_down(void)
{
	for (int i = 0; i < W.nheld; i++) {
		if (W.held[i].req)
			rpcrdma_req_drop(W.held[i].req);
		free(W.held[i].msg);
	}
	W.nheld = 0;
	if (W.c)
		rpcrdma_ctx_destroy(W.c);
	if (W.s)
		rpcrdma_ctx_destroy(W.s);
	W.c = W.s = NULL;
	for (int i = 0; i < MAXC; i++)
		free(W.r[i].data);
	free(W.last_call);
	memset(&W, 0, sizeof(W));
}

static void call_ok(int i, const void *msg, size_t len, const struct rpcrdma_call_opts *o)
{
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, len, o, c_reply, &W.r[i], NULL), 0);
	res_i = i;
	pump_until(cond_res, DEADLINE_MS);
	ck_assert_int_eq(W.r[i].done, 1);
}

static struct rpcrdma_stats cstats(void)
{
	struct rpcrdma_stats st;

	ck_assert_int_eq(rpcrdma_conn_stats(W.cc, &st), 0);
	return st;
}

static struct rpcrdma_stats sstats(void)
{
	struct rpcrdma_stats st;

	ck_assert_ptr_nonnull(W.sc);
	ck_assert_int_eq(rpcrdma_conn_stats(W.sc, &st), 0);
	return st;
}

/* ---------------------------------------------------------------------- */
/* Raw endpoint: an iwv QP of our own, for crafted headers                  */
/* ---------------------------------------------------------------------- */

enum { RAW_INLINE = 0, RAW_ERR_VERS, RAW_UNUSED_WRITE, RAW_BC_CHUNK, RAW_RANDOM };

#define RAW_N	16
#define RAW_BUF 8192

struct raw {
	struct iwv_context *ctx;
	struct iwcm_event_channel *ch;
	struct iwv_pd *pd;
	struct iwv_cq *cq;
	struct iwcm_id *lid, *id;
	uint8_t *mem;
	struct iwv_mr *mr;
	bool up, disconnected;
	/* received messages */
	int nrx;
	uint8_t rx[RAW_N * 4][256];
	uint32_t rxlen[RAW_N * 4];
	uint32_t rx_inv[RAW_N * 4];
	/* crafted responder: answer every call inline with this credit value */
	bool responder;
	uint32_t grant;
	int mode;	   /* RAW_* */
	bool no_pdata;	   /* connect without RFC 8797 private data */
	struct th_rng rng; /* RAW_RANDOM */
	uint8_t *xmem;	   /* RAW_RANDOM: replies exposed as Read chunks */
	struct iwv_mr *xmr;
	int sends, send_done, reads_ok, reads_bad, invalidations;
};

static uint8_t *raw_rbuf(struct raw *r, int i)
{
	return r->mem + (size_t)i * RAW_BUF;
}

static uint8_t *raw_sbuf(struct raw *r)
{
	return r->mem + (size_t)RAW_N * RAW_BUF;
}

static void raw_post_recv(struct raw *r, int i)
{
	struct iwv_sge sge = {(uint64_t)(uintptr_t)raw_rbuf(r, i), RAW_BUF, r->mr->lkey};
	struct iwv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1}, *bad;

	ck_assert_int_eq(iwv_post_recv(r->id->qp, &wr, &bad), 0);
}

static void raw_send(struct raw *r, const void *msg, size_t len)
{
	struct iwv_sge sge = {(uint64_t)(uintptr_t)raw_sbuf(r) + (uint64_t)(r->sends % 8) * 1024,
			      (uint32_t)len, r->mr->lkey};
	struct iwv_send_wr wr = {.wr_id = 1000,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IWV_WR_SEND,
				 .send_flags = IWV_SEND_SIGNALED},
			   *bad;

	ck_assert_uint_le(len, 1024);
	{
		/* a send slot is reused only once its Send completed */
		uint64_t end = th_now_ms() + DEADLINE_MS;

		while (r->sends - r->send_done >= 8) {
			ck_assert(th_now_ms() < end);
			raw_pump(r);
		}
	}
	memcpy((void *)(uintptr_t)sge.addr, msg, len);
	r->sends++;
	ck_assert_int_eq(iwv_post_send(r->id->qp, &wr, &bad), 0);
}

static void raw_qp(struct raw *r)
{
	struct iwv_qp_init_attr a = {
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.cap = {.max_send_wr = 64,
			.max_recv_wr = RAW_N,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = IWV_QPT_RC,
		.sq_sig_all = 1,
	};

	ck_assert_int_eq(iwcm_create_qp(r->id, r->pd, &a), 0);
	for (int i = 0; i < RAW_N; i++)
		raw_post_recv(r, i);
}

static void raw_send(struct raw *r, const void *msg, size_t len);

/* A reply whose every field may be wrong: the requester must never crash. */
static void raw_random_reply(struct raw *r, const uint8_t *b, uint32_t n)
{
	struct th_rng *g = &r->rng;
	struct rpcrdma_hdr h, rh;
	static const uint32_t procs[] = {RDMA_MSG,   RDMA_MSG,	 RDMA_NOMSG,
					 RDMA_NOMSG, RDMA_ERROR, RDMA_DONE};
	uint8_t out[1024];
	int hl;
	size_t pl = 0;

	if (rpcrdma_hdr_decode(b, n, &h) < 0 || h.proc == RDMA_DONE)
		return;
	rpcrdma_hdr_init(&rh, th_rng_range(g, 0, 9) ? h.xid : (uint32_t)th_rng_next(g),
			 (uint32_t)th_rng_range(g, 0, 4), procs[th_rng_range(g, 0, 5)]);
	if (rh.proc == RDMA_ERROR) {
		rh.err = (uint32_t)th_rng_range(g, 1, 2);
		rh.vers_low = rh.vers_high = 1;
	}
	if (rh.proc == RDMA_MSG || rh.proc == RDMA_NOMSG) {
		uint16_t nw = (uint16_t)(h.n_write + th_rng_range(g, 0, 1));

		for (uint16_t k = 0; k < nw && k < RPCRDMA_MAX_WRITE_CHUNKS; k++) {
			uint16_t ns = k < h.n_write ? h.write[k].nseg : 1;

			for (uint16_t j = 0; j < ns; j++) {
				struct rpcrdma_segment sg = {.handle = 1, .length = 0, .offset = 0};

				if (k < h.n_write)
					sg = h.segs[h.write[k].first + j];
				switch (th_rng_range(g, 0, 3)) {
				case 0:
					sg.length = 0;
					break;
				case 1:
					sg.length = (uint32_t)th_rng_range(g, 0, 2 * sg.length + 8);
					break;
				default:
					break;
				}
				rpcrdma_hdr_add_write(&rh, j == 0, &sg);
			}
		}
		if (h.has_reply && th_rng_range(g, 0, 2)) {
			for (uint16_t j = 0; j < h.reply.nseg; j++) {
				struct rpcrdma_segment sg = h.segs[h.reply.first + j];

				if (th_rng_range(g, 0, 1))
					sg.length = (uint32_t)th_rng_range(g, 0, 2 * sg.length + 8);
				rpcrdma_hdr_add_reply(&rh, &sg);
			}
		}
		if (rh.proc == RDMA_NOMSG && th_rng_range(g, 0, 1)) {
			struct rpcrdma_segment sg = {
				.handle = th_rng_range(g, 0, 5) ? r->mr->rkey
								: (uint32_t)th_rng_next(g),
				.length = (uint32_t)th_rng_range(g, 0, 5000),
				.offset = (uint64_t)(uintptr_t)r->mem + th_rng_range(g, 0, 3000),
			};

			if (!r->xmr) {
				r->xmem = calloc(1, 16384);
				r->xmr =
					iwv_reg_mr(r->pd, r->xmem, 16384,
						   IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ);
				ck_assert_ptr_nonnull(r->xmr);
			}
			treply(r->xmem, h.xid, NULL, (uint32_t)th_rng_range(g, 0, 3000));
			if (sg.handle == r->mr->rkey)
				sg.handle = r->xmr->rkey;
			sg.offset = (uint64_t)(uintptr_t)r->xmem;
			rpcrdma_hdr_add_read(&rh, true, 0, &sg);
		}
	}
	hl = rpcrdma_hdr_encode(&rh, out, sizeof(out));
	if (hl < 0)
		goto plain;
	if (rh.proc == RDMA_MSG) {
		pl = treply(out + hl, th_rng_range(g, 0, 9) ? h.xid : 3, NULL,
			    (uint32_t)th_rng_range(g, 0, 200));
		if (th_rng_range(g, 0, 3) == 0)
			put32(out + hl + 24, (uint32_t)th_rng_range(g, 0, 70000));
		if (th_rng_range(g, 0, 5) == 0)
			pl = th_rng_range(g, 0, pl);
		if ((size_t)hl + pl > sizeof(out))
			pl = sizeof(out) - (size_t)hl;
	}
	raw_send(r, out, (size_t)hl + pl);
plain:
	/* then a plain reply: completes the call if the first one was discarded
	 * (else it is a reply to an unknown XID), so a credit never stays lost */
	rpcrdma_hdr_init(&rh, h.xid, 2, RDMA_MSG);
	hl = rpcrdma_hdr_encode(&rh, out, sizeof(out));
	pl = treply(out + hl, h.xid, "", 0);
	raw_send(r, out, (size_t)hl + pl);
}

static void raw_on_recv(struct raw *r, const struct iwv_wc *wc)
{
	int i = (int)wc->wr_id;
	uint8_t *b = raw_rbuf(r, i);
	uint32_t n = wc->byte_len;

	if (r->nrx < RAW_N * 4) {
		memcpy(r->rx[r->nrx], b, n < 256 ? n : 256);
		r->rxlen[r->nrx] = n;
		r->rx_inv[r->nrx] = (wc->wc_flags & IWV_WC_WITH_INV) ? wc->invalidated_rkey : 0;
		r->nrx++;
	}
	if (r->xmr && (wc->wc_flags & IWV_WC_WITH_INV) && wc->invalidated_rkey == r->xmr->rkey) {
		/* the requester's RDMA_DONE invalidated the exposure: a fresh STag */
		iwv_dereg_mr(r->xmr);
		r->xmr = iwv_reg_mr(r->pd, r->xmem, 16384,
				    IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ);
		ck_assert_ptr_nonnull(r->xmr);
		r->invalidations++;
	}
	if (r->responder && r->mode == RAW_RANDOM) {
		raw_random_reply(r, b, n);
	} else if (r->responder) {
		struct rpcrdma_hdr h, rh;
		uint8_t out[1024];
		int hl;
		size_t pl = 0;

		if (rpcrdma_hdr_decode(b, n, &h) >= 0 && h.proc == RDMA_MSG) {
			rpcrdma_hdr_init(&rh, h.xid, r->grant, RDMA_MSG);
			if (r->mode == RAW_ERR_VERS) {
				rh.proc = RDMA_ERROR;
				rh.err = ERR_VERS;
				rh.vers_low = rh.vers_high = 1;
			}
			if (r->mode == RAW_UNUSED_WRITE) {
				/* every Write chunk returned unused (RFC 8166 §3.4.6) */
				for (uint16_t k = 0; k < h.n_write; k++)
					for (uint16_t j = 0; j < h.write[k].nseg; j++) {
						struct rpcrdma_segment sg =
							h.segs[h.write[k].first + j];

						sg.length = 0;
						ck_assert_int_eq(
							rpcrdma_hdr_add_write(&rh, j == 0, &sg), 0);
					}
			}
			hl = rpcrdma_hdr_encode(&rh, out, sizeof(out));
			ck_assert_int_gt(hl, 0);
			if (r->mode != RAW_ERR_VERS)
				pl = treply(out + hl, h.xid, NULL,
					    r->mode == RAW_UNUSED_WRITE ? 100 : 0);
			raw_send(r, out, (size_t)hl + pl);
			if (r->mode == RAW_BC_CHUNK) {
				/* a backchannel call carrying a Read chunk (RFC 8167 §5) */
				struct rpcrdma_segment sg = {.handle = r->mr->rkey,
							     .length = 8,
							     .offset = (uint64_t)(uintptr_t)r->mem};

				rpcrdma_hdr_init(&rh, 0xbcbc0001, 1, RDMA_MSG);
				ck_assert_int_eq(rpcrdma_hdr_add_read(&rh, true, 44, &sg), 0);
				hl = rpcrdma_hdr_encode(&rh, out, sizeof(out));
				ck_assert_int_gt(hl, 0);
				pl = tcall(out + hl, 0xbcbc0001, 1, 1, NULL, 0);
				raw_send(r, out, (size_t)hl + pl);
			}
		}
	}
	raw_post_recv(r, i);
}

static void raw_pump(struct raw *r)
{
	struct iwcm_event *ev;
	struct iwv_wc wc[8];
	int n;

	while (iwcm_get_cm_event(r->ch, &ev) == 0) {
		enum iwcm_event_type t = ev->event;
		struct iwcm_id *id = ev->id;

		iwcm_ack_cm_event(ev);
		if (t == IWCM_EVENT_ADDR_RESOLVED) {
			ck_assert_int_eq(iwcm_resolve_route(id, 2000), 0);
		} else if (t == IWCM_EVENT_ROUTE_RESOLVED) {
			/* RFC 8797: magic, version 1, SND_W_INV_OK, 4 KiB both ways; + RPRC ext */
			static const uint8_t pd[16] = {0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3,
						       0x69, 0x77, 0x52, 0x50, 1, 1, 0, 0};
			struct iwcm_conn_param p = {.private_data = pd, .private_data_len = 16};

			if (r->no_pdata)
				p.private_data_len = 0;
			raw_qp(r);
			ck_assert_int_eq(iwcm_connect(id, &p), 0);
		} else if (t == IWCM_EVENT_CONNECT_REQUEST) {
			static const uint8_t pd[16] = {0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3,
						       0x69, 0x77, 0x52, 0x50, 1, 1, 0, 0};
			struct iwcm_conn_param p = {.private_data = pd, .private_data_len = 8};

			if (r->mode == RAW_RANDOM)
				p.private_data_len = 16; /* with the RPRC extension */
			if (r->id) {
				/* the client reconnected: the old connection goes */
				iwcm_destroy_qp(r->id);
				iwcm_destroy_id(r->id);
			}
			r->up = false;
			r->id = id;
			raw_qp(r);
			ck_assert_int_eq(iwcm_accept(id, &p), 0);
		} else if (t == IWCM_EVENT_ESTABLISHED) {
			r->up = true;
		} else if (t == IWCM_EVENT_DISCONNECTED) {
			r->disconnected = true;
		}
	}
	if (!r->cq)
		return;
	while ((n = iwv_poll_cq(r->cq, 8, wc)) > 0)
		for (int i = 0; i < n; i++) {
			if (wc[i].opcode == IWV_WC_SEND)
				r->send_done++;
			if (wc[i].opcode == IWV_WC_RECV && wc[i].status == IWV_WC_SUCCESS)
				raw_on_recv(r, &wc[i]);
			else if (wc[i].opcode == IWV_WC_RDMA_READ && wc[i].status == IWV_WC_SUCCESS)
				r->reads_ok++;
			else if (wc[i].opcode == IWV_WC_RDMA_READ)
				r->reads_bad++;
		}
}

static struct raw *raw_new(void)
{
	struct raw *r = calloc(1, sizeof(*r));
	struct iwv_device **l = iwv_get_device_list(NULL);
	int fl;

	r->ctx = iwv_open_device(l[0]);
	iwv_free_device_list(l);
	ck_assert_ptr_nonnull(r->ctx);
	r->ch = iwcm_create_event_channel_ctx(r->ctx);
	fl = fcntl(r->ch->fd, F_GETFL);
	fcntl(r->ch->fd, F_SETFL, fl | O_NONBLOCK);
	r->pd = iwv_alloc_pd(r->ctx);
	r->cq = iwv_create_cq(r->ctx, 256, NULL, NULL, 0);
	r->mem = calloc(RAW_N + 1, RAW_BUF);
	r->mr = iwv_reg_mr(r->pd, r->mem, (size_t)(RAW_N + 1) * RAW_BUF,
			   IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ |
				   IWV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(r->mr);
	W.raw = r;
	return r;
}

static bool cond_raw_up(void)
{
	return W.raw->up;
}

static void raw_connect(struct raw *r, uint16_t port)
{
	struct sockaddr_storage ss;

	th_loopback(AF_INET, port, &ss);
	ck_assert_int_eq(iwcm_create_id(r->ch, &r->id, r, IWCM_PS_TCP), 0);
	ck_assert_int_eq(iwcm_resolve_addr(r->id, NULL, (struct sockaddr *)&ss, 2000), 0);
	pump_until(cond_raw_up, DEADLINE_MS);
}

static uint16_t raw_listen(struct raw *r)
{
	struct sockaddr_storage ss;

	th_loopback(AF_INET, 0, &ss);
	ck_assert_int_eq(iwcm_create_id(r->ch, &r->lid, r, IWCM_PS_TCP), 0);
	ck_assert_int_eq(iwcm_bind_addr(r->lid, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwcm_listen(r->lid, 4), 0);
	return iwcm_get_src_port(r->lid);
}

static void raw_free(struct raw *r)
{
	if (r->id) {
		iwcm_destroy_qp(r->id);
		iwcm_destroy_id(r->id);
	}
	if (r->lid)
		iwcm_destroy_id(r->lid);
	iwv_dereg_mr(r->mr);
	free(r->mem);
	if (r->xmr)
		iwv_dereg_mr(r->xmr);
	free(r->xmem);
	iwv_destroy_cq(r->cq);
	iwv_dealloc_pd(r->pd);
	iwcm_destroy_event_channel(r->ch);
	iwv_close_device(r->ctx);
	free(r);
	W.raw = NULL;
}

static int raw_want;
static bool cond_raw_rx(void)
{
	return W.raw->nrx >= raw_want;
}

/* ---------------------------------------------------------------------- */
/* Cases                                                                   */
/* ---------------------------------------------------------------------- */

static void cfgs(struct rpcrdma_config *c, struct rpcrdma_config *s)
{
	cfg_base(c, false);
	cfg_base(s, true);
	c->ulb = &tulb;
	s->ulb = &tulb;
}

START_TEST(inline_call_gets_inline_reply_with_negotiated_sizes)
{
	struct rpcrdma_config c, s;
	uint8_t msg[256], want[256];
	size_t n, wn;
	struct rpcrdma_conn_info ci;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	ck_assert_int_eq(rpcrdma_conn_info(W.cc, &ci), 0);
	ck_assert(ci.up && ci.client && ci.peer_pdata && ci.send_inv && !ci.rprc);
	ck_assert_uint_eq(ci.inline_send, 4096);
	ck_assert_uint_eq(ci.inline_recv, 4096);
	n = tcall(msg, 0x1001, TVERS, 1, "hello, rdma", 11);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	wn = treply(want, 0x1001, "hello, rdma", 11);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	ck_assert_uint_eq(W.last_len, n);
	ck_assert_mem_eq(W.last_call, msg, n);
	ck_assert_uint_eq(cstats().calls_sent, 1);
	ck_assert_uint_eq(cstats().replies_received, 1);
	ck_assert_uint_eq(cstats().msgs_inline, 2);
	ck_assert_uint_eq(sstats().calls_received, 1);
	ck_assert_uint_eq(sstats().replies_sent, 1);
	ck_assert_uint_eq(sstats().send_inv, 0); /* no chunk, no handle to invalidate */
	ck_assert_uint_eq(ci.credits, 1);
	ck_assert_int_eq(rpcrdma_conn_info(W.cc, &ci), 0);
	ck_assert_uint_eq(ci.credits, 32); /* min(requested 32, granted min(32, 32)) */
	world_down();
}
END_TEST

/* cfg.verbs reaches the verbs context: a bad attribute fails the create, and
 * a server with its own engine thread serves a client that has none. */
START_TEST(the_verbs_context_attributes_come_from_the_config)
{
	struct rpcrdma_config c, s;
	struct iwv_context_attr va;
	uint8_t msg[256];
	size_t n;

	cfgs(&c, &s);
	iwv_context_attr_default(&va);
	va.rx_buf_size = 1; /* below the 4096 minimum */
	c.verbs = &va;
	errno = 0;
	ck_assert_ptr_null(rpcrdma_ctx_create(&c));
	ck_assert_int_eq(errno, EINVAL);
	iwv_context_attr_default(&va);
	va.engine_thread = 1;
	s.verbs = &va;
	c.verbs = NULL;
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0x1002, TVERS, 1, "engine thread", 13);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	world_down();
}
END_TEST

START_TEST(inline_call_over_ipv6_loopback)
{
	struct rpcrdma_config c, s;
	uint8_t msg[256], want[256];
	size_t n, wn;
	struct rpcrdma_conn_info ci;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET6);
	n = tcall(msg, 0x6001, TVERS, 1, "v6", 2);
	call_ok(0, msg, n, NULL);
	wn = treply(want, 0x6001, "v6", 2);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	ck_assert_int_eq(rpcrdma_conn_info(W.cc, &ci), 0);
	ck_assert_int_eq(ci.peer.ss_family, AF_INET6);
	world_down();
}
END_TEST

START_TEST(large_call_goes_as_read_chunk_and_large_reply_as_write_chunk)
{
	struct rpcrdma_config c, s;
	static uint8_t msg[40000], want[40000];
	size_t n, wn;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0x2001, TVERS, 1, NULL, 30001);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_uint_eq(W.last_len, n);
	ck_assert_mem_eq(W.last_call, msg, n); /* rebuilt unreduced call */
	wn = treply(want, 0x2001, msg + 44, 30001);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	ck_assert_uint_eq(sstats().bytes_read_chunk, 30001);
	ck_assert_uint_eq(sstats().msgs_inline, 2); /* RDMA_MSG with a Read chunk; reply RDMA_MSG */
	ck_assert_uint_eq(sstats().bytes_write_chunk, 30001);
	ck_assert_uint_eq(cstats().bytes_write_chunk, 30001);
	ck_assert_uint_eq(sstats().send_inv, 1); /* one STag for every chunk */
	ck_assert_uint_eq(cstats().send_inv, 1);
	world_down();
}
END_TEST

/* rpcrdma_callv: the call of the test above in pieces - its XID split over
 * the first two, an empty one, the data apart - arrives as the same call and
 * moves the same way; no pieces, too many, or a length without a base are
 * refused, and an XID still outstanding is refused whatever the split. */
START_TEST(a_call_in_pieces_arrives_whole)
{
	struct rpcrdma_config c, s;
	static uint8_t msg[40000], want[40000];
	struct iovec iov[RPCRDMA_CALLV_MAX + 1];
	size_t n, wn;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0x2002, TVERS, 1, NULL, 30001);
	iov[0] = (struct iovec){msg, 2};
	iov[1] = (struct iovec){msg + 2, 42};
	iov[2] = (struct iovec){NULL, 0};
	iov[3] = (struct iovec){msg + 44, n - 44};
	ck_assert_int_eq(rpcrdma_callv(W.cc, iov, 0, NULL, c_reply, &W.r[0], NULL), IW_EINVAL);
	ck_assert_int_eq(
		rpcrdma_callv(W.cc, iov, RPCRDMA_CALLV_MAX + 1, NULL, c_reply, &W.r[0], NULL),
		IW_EINVAL);
	iov[2].iov_len = 1;
	ck_assert_int_eq(rpcrdma_callv(W.cc, iov, 4, NULL, c_reply, &W.r[0], NULL), IW_EINVAL);
	iov[2].iov_len = 0;
	ck_assert_int_eq(rpcrdma_callv(W.cc, iov, 4, NULL, c_reply, &W.r[0], NULL), 0);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[1], NULL),
			 iw_err_sys(EEXIST));
	res_i = 0;
	pump_until(cond_res, DEADLINE_MS);
	ck_assert_int_eq(W.r[0].done, 1);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_uint_eq(W.last_len, n);
	ck_assert_mem_eq(W.last_call, msg, n);
	wn = treply(want, 0x2002, msg + 44, 30001);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	ck_assert_uint_eq(sstats().bytes_read_chunk, 30001);
	ck_assert_uint_eq(cstats().bytes_write_chunk, 30001);
	world_down();
}
END_TEST

START_TEST(forced_long_call_is_position_zero_read_chunk)
{
	struct rpcrdma_config c, s;
	static uint8_t msg[20000];
	struct rpcrdma_call_opts o = {.force = RPCRDMA_FORCE_LONG_CALL, .seg_max = 4096};
	size_t n;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0x2101, TVERS, 1, NULL, 9999);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_uint_eq(W.last_len, n);
	ck_assert_mem_eq(W.last_call, msg, n);
	ck_assert_uint_eq(cstats().msgs_long_call, 1);
	ck_assert_uint_eq(sstats().msgs_long_call, 1);
	ck_assert_uint_eq(sstats().bytes_read_chunk, n);
	ck_assert_uint_eq(W.r[0].len, 28 + 10000);
	ck_assert_mem_eq(W.r[0].data + 28, msg + 44, 9999);
	world_down();
}
END_TEST

/*
 * Two processes, each driving its ctx only when the ctx fd reads ready (or a
 * timer of its own is due), as an event loop does.  Work a ctx leaves pending
 * without making its fd readable (completions that arrive while process()
 * drains its channels, say) shows up as a call that takes seconds instead of
 * milliseconds; with a responder in another process the arrivals really
 * overlap its processing, which one process cannot reproduce.
 */
static int fd_loop_once(struct rpcrdma_ctx *ctx, int cap_ms)
{
	struct pollfd p = {.fd = rpcrdma_ctx_fd(ctx), .events = POLLIN};
	int to = rpcrdma_ctx_timeout_ms(ctx);

	if (to < 0 || to > cap_ms)
		to = cap_ms;
	poll(&p, 1, to);
	return rpcrdma_ctx_process(ctx, 0);
}

static void echo_call(void *arg, struct rpcrdma_req *req, const uint8_t *msg, size_t len)
{
	static uint8_t out[300 * 1024];
	struct rpcrdma_rpcinfo ri;

	(void)arg;
	if (rpcrdma_rpc_parse(msg, len, &ri) != 0 || ri.body_off + 4 > len ||
	    be32(msg + ri.body_off) > 250000) {
		rpcrdma_req_drop(req);
		return;
	}
	rpcrdma_reply(req, out,
		      treply(out, ri.xid, msg + ri.body_off + 4, be32(msg + ri.body_off)));
}

static struct res fd_res;

static bool cond_fd_res(void)
{
	return fd_res.done > 0;
}

START_TEST(fd_driven_loops_in_two_processes_never_lose_a_wakeup)
{
	struct rpcrdma_config c, s;
	struct sockaddr_storage ss;
	socklen_t sl;
	static uint8_t msg[200 * 1024 + 64];
	struct rpcrdma_call_opts lng = {.force = RPCRDMA_FORCE_LONG_CALL};
	int pfd[2];
	uint16_t port = 0;
	pid_t pid;

	cfgs(&c, &s);
	c.log = s.log = NULL;
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rpcrdma_ctx *sx = rpcrdma_ctx_create(&s);
		struct rpcrdma_listener *l;

		sl = th_loopback(AF_INET, 0, &ss);
		l = sx ? rpcrdma_listen(sx, (struct sockaddr *)&ss, sl, 4, NULL, echo_call, NULL)
		       : NULL;
		port = l ? rpcrdma_listener_port(l) : 0;
		if (write(pfd[1], &port, sizeof(port)) != sizeof(port) || !port)
			_exit(1);
		for (;;) /* the parent kills us */
			fd_loop_once(sx, 60000);
	}
	ck_assert_int_eq(read(pfd[0], &port, sizeof(port)), (ssize_t)sizeof(port));
	ck_assert_uint_ne(port, 0);
	struct rpcrdma_ctx *cx = rpcrdma_ctx_create(&c);
	sl = th_loopback(AF_INET, port, &ss);
	struct rpcrdma_conn *cc = rpcrdma_connect(cx, (struct sockaddr *)&ss, sl, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(cc);
	ck_assert_int_eq(rpcrdma_conn_wait_up(cc, DEADLINE_MS), 0);
	/* 200 KiB echoed: a Read chunk (or a position-zero one) pulled by the
	 * responder, the result pushed back through a Write chunk */
	for (int i = 0; i < 60; i++) {
		size_t n = tcall(msg, 0x6100 + (uint32_t)i, TVERS, 1, NULL, 200 * 1024);
		uint64_t t0 = th_now_ms();

		fd_res.done = 0;
		ck_assert_int_eq(
			rpcrdma_call(cc, msg, n, i % 2 ? &lng : NULL, c_reply, &fd_res, NULL), 0);
		while (!cond_fd_res() && th_now_ms() - t0 < 20000)
			fd_loop_once(cx, 20000);
		ck_assert_msg(fd_res.done == 1, "call %d got no reply", i);
		/* a lost wake-up costs seconds (until some unrelated timer) */
		ck_assert_msg(th_now_ms() - t0 < 3000, "call %d took %llu ms", i,
			      (unsigned long long)(th_now_ms() - t0));
		ck_assert_int_eq(fd_res.status, 0);
		ck_assert_uint_eq(fd_res.len, 28 + 200 * 1024);
		ck_assert_mem_eq(fd_res.data + 28, msg + 44, 200 * 1024);
	}
	free(fd_res.data);
	fd_res.data = NULL;
	rpcrdma_ctx_destroy(cx);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
}
END_TEST

START_TEST(call_without_binding_too_big_goes_long_and_reply_via_reply_chunk)
{
	struct rpcrdma_config c, s;
	static uint8_t msg[20000], want[30000];
	size_t n, wn;
	struct rpcrdma_stats st;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	/* proc 2 returns as many octets as its argument's length word says */
	n = tcall(msg, 0x2201, TVERS_NOULB, 2, NULL, 0);
	put32(msg + 40, 20000);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	wn = treply(want, 0x2201, NULL, 20000);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	st = sstats();
	ck_assert_uint_eq(st.msgs_long_reply, 1);
	ck_assert_uint_eq(st.bytes_reply_chunk, wn);
	ck_assert_uint_eq(cstats().bytes_reply_chunk, wn);
	/* a long call of a program the binding does not know: position zero */
	n = tcall(msg, 0x2202, TVERS_NOULB, 2, NULL, 8000);
	put32(msg + 40, 16);
	call_ok(1, msg, n, NULL);
	ck_assert_int_eq(W.r[1].status, 0);
	ck_assert_uint_eq(W.last_len, n);
	ck_assert_mem_eq(W.last_call, msg, n);
	ck_assert_uint_eq(cstats().msgs_long_call, 1);
	world_down();
}
END_TEST

/* NFS server replies */
static const uint8_t *nfs_data;
static uint32_t nfs_count;

static size_t nfs_srv(struct tw *w, const uint8_t *call, size_t len, uint8_t *out, size_t cap)
{
	struct rpcrdma_rpcinfo ri;
	struct nfsb b;

	ck_assert_int_eq(rpcrdma_rpc_parse(call, len, &ri), 0);
	nfsb_init(&b, out, cap);
	if (ri.vers == 3 && ri.proc == NFSB3_WRITE)
		return nfsb_v3_write_reply(&b, ri.xid, be32(call + ri.body_off + 4 + 32 + 8));
	if (ri.vers == 3 && ri.proc == NFSB3_READ)
		return nfsb_v3_read_reply(&b, ri.xid, nfs_data, nfs_count, false);
	if (ri.vers == 4) {
		struct nfsb_v4op ops[5] = {
			{.op = NFSB4_SEQUENCE},
			{.op = NFSB4_PUTFH},
			{.op = NFSB4_READ, .data = nfs_data, .len = nfs_count},
			{.op = NFSB4_GETFH, .len = 16},
			{.op = NFSB4_READ,
			 .data = nfs_data ? nfs_data + 1 : NULL,
			 .len = nfs_count - 5},
		};
		return nfsb_v4_compound_reply(&b, ri.xid, "two", ops, 5);
	}
	return 0;
}

static void nfs_world(uint32_t seg_max)
{
	struct rpcrdma_config c, s;

	cfg_base(&c, false);
	cfg_base(&s, true);
	c.ulb = &rpcrdma_nfs_ulb;
	s.ulb = &rpcrdma_nfs_ulb;
	world_up(&c, &s, AF_INET);
	W.nfs_reply = nfs_srv;
	(void)seg_max;
}

static void nfs3_write(uint32_t seg_max)
{
	static uint8_t msg[70000], data[65536], want[512];
	struct rpcrdma_call_opts o = {.seg_max = seg_max};
	struct nfsb b;
	size_t n, wn;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 31 + 7);
	nfs_world(seg_max);
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v3_write_call(&b, 0x3001, 32, 4096, data, sizeof(data));
	ck_assert_uint_gt(n, 65536);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_uint_eq(W.last_len, n); /* byte-identical unreduced call at the server */
	ck_assert_mem_eq(W.last_call, msg, n);
	ck_assert_uint_eq(sstats().bytes_read_chunk, 65536);
	ck_assert_uint_eq(cstats().msgs_long_call, 0); /* RDMA_MSG with a Read chunk */
	nfsb_init(&b, want, sizeof(want));
	wn = nfsb_v3_write_reply(&b, 0x3001, 65536);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	world_down();
}

START_TEST(nfs3_write_64k_data_goes_in_read_chunk_at_its_position)
{
	nfs3_write(0);
}
END_TEST

START_TEST(nfs3_write_read_chunk_split_into_4k_segments)
{
	nfs3_write(4096);
}
END_TEST

static void nfs3_read(uint32_t count, uint32_t seg_max)
{
	static uint8_t msg[512], data[262144];
	static uint8_t want[262144 + 512];
	struct rpcrdma_call_opts o = {.seg_max = seg_max};
	struct nfsb b;
	size_t n, wn;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 17 + 5);
	nfs_data = data;
	nfs_count = count;
	nfs_world(seg_max);
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v3_read_call(&b, 0x3101, 32, 0, count);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, 0);
	nfsb_init(&b, want, sizeof(want));
	wn = nfsb_v3_read_reply(&b, 0x3101, data, count, false);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	ck_assert_uint_eq(sstats().bytes_write_chunk, count);
	ck_assert_uint_eq(cstats().bytes_write_chunk, count);
	ck_assert_uint_eq(sstats().msgs_inline, 2);
	ck_assert_uint_eq(sstats().send_inv, 1);
	world_down();
	nfs_data = NULL;
}

START_TEST(nfs3_read_256k_comes_back_through_a_write_chunk)
{
	nfs3_read(262144, 0);
}
END_TEST

START_TEST(nfs3_read_write_chunk_split_into_4k_segments)
{
	nfs3_read(65536, 4096);
}
END_TEST

START_TEST(nfs4_compound_with_two_reads_uses_two_write_chunks)
{
	static uint8_t msg[1024], data[20000], want[50000];
	struct nfsb_v4op ops[5] = {
		{.op = NFSB4_SEQUENCE},
		{.op = NFSB4_PUTFH, .len = 32},
		{.op = NFSB4_READ, .offset = 0, .count = 20000},
		{.op = NFSB4_GETFH},
		{.op = NFSB4_READ, .offset = 1, .count = 20000},
	};
	struct nfsb b;
	size_t n, wn;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 3 + 1);
	nfs_data = data;
	nfs_count = 20000;
	nfs_world(0);
	nfsb_init(&b, msg, sizeof(msg));
	n = nfsb_v4_compound_call(&b, 0x4001, 1, "two", ops, 5);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	{
		struct nfsb_v4op rops[5] = {
			{.op = NFSB4_SEQUENCE},
			{.op = NFSB4_PUTFH},
			{.op = NFSB4_READ, .data = data, .len = 20000},
			{.op = NFSB4_GETFH, .len = 16},
			{.op = NFSB4_READ, .data = data + 1, .len = 19995},
		};
		nfsb_init(&b, want, sizeof(want));
		wn = nfsb_v4_compound_reply(&b, 0x4001, "two", rops, 5);
	}
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	ck_assert_uint_eq(sstats().bytes_write_chunk, 20000 + 19995);
	world_down();
	nfs_data = NULL;
}
END_TEST

/* Crafted headers against the responder (RFC 8166 §4.5). */
START_TEST(bad_headers_draw_err_vers_and_err_chunk_and_short_ones_are_dropped)
{
	struct rpcrdma_config c, s;
	struct raw *r;
	uint8_t m[128];
	size_t n;

	cfg_base(&c, false);
	cfg_base(&s, true);
	memset(&W, 0, sizeof(W));
	world_listen(&s, AF_INET);
	r = raw_new();
	raw_connect(r, W.port);
	pump_until(cond_s_up, DEADLINE_MS);

	/* rdma_vers 2: ERR_VERS, 28 octets: xid, vers 2 echoed, credits, 4, 1, low 1, high 1 */
	memset(m, 0, sizeof(m));
	put32(m, 0xabc00001);
	put32(m + 4, 2);
	put32(m + 8, 5);
	n = 28 + tcall(m + 28, 0xabc00001, TVERS, 1, "x", 1);
	raw_send(r, m, n);
	raw_want = 1;
	pump_until(cond_raw_rx, DEADLINE_MS);
	{
		const uint8_t want[28] = {0xab, 0xc0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0,
					  0,	4,    0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0};
		uint8_t w2[28];

		memcpy(w2, want, 28);
		put32(w2 + 16, 1);
		put32(w2 + 20, 1);
		put32(w2 + 24, 1);
		ck_assert_uint_eq(r->rxlen[0], 28);
		ck_assert_mem_eq(r->rx[0], w2, 28);
	}
	/* rdma_xid differs from the RPC XID: ERR_CHUNK, 20 octets */
	memset(m, 0, sizeof(m));
	put32(m, 0xabc00002);
	put32(m + 4, 1);
	put32(m + 8, 5);
	n = 28 + tcall(m + 28, 0xabc00099, TVERS, 1, "x", 1);
	raw_send(r, m, n);
	raw_want = 2;
	pump_until(cond_raw_rx, DEADLINE_MS);
	{
		uint8_t w2[20] = {0};

		put32(w2, 0xabc00002);
		put32(w2 + 4, 1);
		put32(w2 + 8, 5); /* the grant: min(requested 5, 32) */
		put32(w2 + 12, 4);
		put32(w2 + 16, 2);
		ck_assert_uint_eq(r->rxlen[1], 20);
		ck_assert_mem_eq(r->rx[1], w2, 20);
	}
	/* RDMA_MSGP: ERR_CHUNK */
	memset(m, 0, sizeof(m));
	put32(m, 0xabc00003);
	put32(m + 4, 1);
	put32(m + 8, 5);
	put32(m + 12, 2);
	put32(m + 16, 4);
	put32(m + 20, 64);
	n = 36 + tcall(m + 36, 0xabc00003, TVERS, 1, "x", 1);
	raw_send(r, m, n);
	raw_want = 3;
	pump_until(cond_raw_rx, DEADLINE_MS);
	ck_assert_uint_eq(r->rxlen[2], 20);
	ck_assert_uint_eq(be32(r->rx[2]), 0xabc00003);
	ck_assert_uint_eq(be32(r->rx[2] + 16), 2);
	/* RDMA_NOMSG without any chunk (RFC 8166 §4.2.4): ERR_CHUNK */
	memset(m, 0, sizeof(m));
	put32(m, 0xabc00005);
	put32(m + 4, 1);
	put32(m + 8, 5);
	put32(m + 12, RDMA_NOMSG);
	raw_send(r, m, 28);
	raw_want = 4;
	pump_until(cond_raw_rx, DEADLINE_MS);
	ck_assert_uint_eq(r->rxlen[3], 20);
	ck_assert_uint_eq(be32(r->rx[3]), 0xabc00005);
	ck_assert_uint_eq(be32(r->rx[3] + 16), ERR_CHUNK);
	/* RDMA_DONE without the extension on: silently discarded (§4.6.2) */
	put32(m + 12, RDMA_DONE);
	raw_send(r, m, 16);
	/* 20 octets: silently discarded; then a good call is answered */
	raw_send(r, m, 20);
	memset(m, 0, sizeof(m));
	put32(m, 0xabc00004);
	put32(m + 4, 1);
	put32(m + 8, 5);
	n = 28 + tcall(m + 28, 0xabc00004, TVERS, 1, "ok", 2);
	raw_send(r, m, n);
	raw_want = 5;
	pump_until(cond_raw_rx, DEADLINE_MS);
	pump_ms(20);
	ck_assert_int_eq(r->nrx, 5);
	ck_assert_uint_eq(be32(r->rx[4]), 0xabc00004);
	ck_assert_uint_eq(be32(r->rx[4] + 8), 5);  /* granted min(5, 32) */
	ck_assert_uint_eq(be32(r->rx[4] + 12), 0); /* RDMA_MSG */
	ck_assert_uint_eq(r->rxlen[4], 28 + 28 + 4);
	ck_assert_uint_eq(sstats().err_sent, 4);
	ck_assert_uint_eq(sstats().discarded, 2);
	ck_assert_uint_eq(sstats().calls_received, 1);
	raw_free(r);
	world_down();
}
END_TEST

START_TEST(credit_limit_of_two_keeps_at_most_two_calls_at_the_server)
{
	struct rpcrdma_config c, s;
	uint8_t msg[128];
	int replied = 0, seq[100];

	cfgs(&c, &s);
	s.credits = 2;
	world_up(&c, &s, AF_INET);
	for (int i = 0; i < 100; i++) {
		size_t n = tcall(msg, 0x5000 + (uint32_t)i, TVERS, 3, "c", 1);

		ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[i], NULL), 0);
	}
	while (replied < 100) {
		want_n = 1;
		pump_until(cond_held, DEADLINE_MS);
		pump_ms(2);
		/* answer the newest first: completions follow readiness, not submission */
		for (int k = W.nheld - 1; k >= 0; k--) {
			uint8_t out[64];
			size_t n = treply(out, be32(W.held[k].msg), "r", 1);

			ck_assert_int_eq(rpcrdma_reply(W.held[k].req, out, n), 0);
			seq[replied++] = (int)(be32(W.held[k].msg) - 0x5000);
			free(W.held[k].msg);
		}
		W.nheld = 0;
	}
	want_n = 100;
	pump_until(cond_all, DEADLINE_MS);
	for (int k = 0; k < 100; k++) /* completion order = the order the server answered */
		ck_assert_int_eq(W.r[seq[k]].order, k + 1);
	ck_assert_int_le(W.max_held, 2);
	ck_assert_int_eq(W.max_held, 2);
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(W.r[i].done, 1);
		ck_assert_int_eq(W.r[i].status, 0);
		ck_assert_uint_eq(be32(W.r[i].data), 0x5000 + (uint32_t)i);
	}
	ck_assert_uint_ge(cstats().credit_waits, 98);
	ck_assert_uint_eq(cstats().replies_received, 100);
	world_down();
}
END_TEST

static bool cond_c_up(void)
{
	return W.c_up >= 1;
}

START_TEST(a_grant_of_zero_credits_is_treated_as_one)
{
	struct rpcrdma_config c;
	struct raw *r;
	uint8_t msg[128];
	struct sockaddr_storage ss;
	socklen_t sl;
	struct rpcrdma_conn_info ci;

	memset(&W, 0, sizeof(W));
	cfg_base(&c, false);
	r = raw_new();
	r->responder = true;
	r->grant = 0;
	W.port = raw_listen(r);
	W.c = rpcrdma_ctx_create(&c);
	sl = th_loopback(AF_INET, W.port, &ss);
	W.cc = rpcrdma_connect(W.c, (struct sockaddr *)&ss, sl, c_conn, NULL, &W);
	pump_until(cond_c_up, DEADLINE_MS);
	for (int i = 0; i < 3; i++) {
		struct rpcrdma_call_opts o = {.max_reply = 256}; /* no Reply chunk */
		size_t n = tcall(msg, 0x7000 + (uint32_t)i, TVERS, 1, "z", 1);

		ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, &o, c_reply, &W.r[i], NULL), 0);
	}
	want_n = 3;
	pump_until(cond_all, DEADLINE_MS);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(W.r[i].status, 0);
		ck_assert_int_eq(W.r[i].order, i + 1);
	}
	ck_assert_int_eq(rpcrdma_conn_info(W.cc, &ci), 0);
	ck_assert_uint_eq(ci.credits, 1);
	ck_assert_uint_eq(cstats().credit_waits, 2);
	ck_assert_uint_eq(ci.send_inv, true);
	ck_assert_uint_eq(ci.rprc, false);
	rpcrdma_ctx_destroy(W.c);
	W.c = NULL;
	raw_free(r);
	world_down();
}
END_TEST

START_TEST(cancelled_call_reply_is_dropped_and_next_calls_work)
{
	struct rpcrdma_config c, s;
	uint8_t msg[128], out[64];
	uint64_t id;
	size_t n;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0x8001, TVERS, 3, "c", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[0], &id), 0);
	want_n = 1;
	pump_until(cond_held, DEADLINE_MS);
	ck_assert_int_eq(rpcrdma_cancel(W.cc, id), 0);
	ck_assert_int_eq(W.r[0].done, 1);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_CANCELLED);
	ck_assert_int_eq(rpcrdma_cancel(W.cc, id), iw_err_sys(ENOENT));
	/* the same XID is still outstanding at the transport */
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[1], NULL),
			 iw_err_sys(EEXIST));
	ck_assert_int_eq(rpcrdma_reply(W.held[0].req, out, treply(out, 0x8001, "late", 4)), 0);
	free(W.held[0].msg);
	W.nheld = 0;
	n = tcall(msg, 0x8002, TVERS, 1, "next", 4);
	call_ok(1, msg, n, NULL);
	ck_assert_int_eq(W.r[1].status, 0);
	ck_assert_int_eq(W.r[0].done, 1);
	ck_assert_uint_eq(cstats().cancelled, 1);
	ck_assert_uint_eq(cstats().replies_received, 2);
	world_down();
}
END_TEST

START_TEST(timed_out_call_completes_with_etimedout_and_the_late_reply_is_dropped)
{
	struct rpcrdma_config c, s;
	uint8_t msg[128], out[64];
	struct rpcrdma_call_opts o = {.timeout_ms = 100};
	size_t n;
	uint64_t t0;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0x8101, TVERS, 3, "t", 1);
	t0 = th_now_ms();
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, IW_ETIMEDOUT);
	ck_assert_uint_ge(th_now_ms() - t0, 95);
	ck_assert_int_eq(W.nheld, 1);
	ck_assert_int_eq(rpcrdma_reply(W.held[0].req, out, treply(out, 0x8101, "late", 4)), 0);
	free(W.held[0].msg);
	W.nheld = 0;
	n = tcall(msg, 0x8102, TVERS, 1, "next", 4);
	call_ok(1, msg, n, NULL);
	ck_assert_int_eq(W.r[1].status, 0);
	ck_assert_int_eq(W.r[0].done, 1);
	world_down();
}
END_TEST

START_TEST(rprc_end_to_end_reply_pulled_and_released_by_rdma_done)
{
	struct rpcrdma_config c, s;
	static uint8_t msg[256], want[30000];
	struct rpcrdma_call_opts o = {.force = RPCRDMA_FORCE_NO_REPLY};
	struct rpcrdma_conn_info ci;
	size_t n, wn;

	cfgs(&c, &s);
	c.rprc = s.rprc = true;
	world_up(&c, &s, AF_INET);
	ck_assert_int_eq(rpcrdma_conn_info(W.cc, &ci), 0);
	ck_assert(ci.rprc);
	n = tcall(msg, 0x9001, TVERS_NOULB, 2, NULL, 0);
	put32(msg + 40, 20000);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, 0);
	wn = treply(want, 0x9001, NULL, 20000);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	pump_ms(50);
	ck_assert_uint_eq(cstats().msgs_rprc, 1);
	ck_assert_uint_eq(cstats().bytes_rprc, wn);
	ck_assert_uint_eq(sstats().msgs_rprc, 1);
	ck_assert_int_eq(W.log_done, 1); /* the exposure was released by RDMA_DONE */
	ck_assert_int_eq(W.log_unclaimed, 0);
	world_down();
}
END_TEST

START_TEST(rprc_exposure_is_invalidated_after_timeout_without_rdma_done)
{
	struct rpcrdma_config s;
	struct raw *r;
	uint8_t m[128];
	size_t n;

	cfg_base(&s, true);
	s.rprc = true;
	s.rprc_timeout_ms = 100;
	memset(&W, 0, sizeof(W));
	world_listen(&s, AF_INET);
	r = raw_new();
	raw_connect(r, W.port);
	memset(m, 0, sizeof(m));
	put32(m, 0xd0000001);
	put32(m + 4, 1);
	put32(m + 8, 4);
	n = tcall(m + 28, 0xd0000001, TVERS_NOULB, 2, NULL, 0);
	put32(m + 28 + 40, 9000);
	raw_send(r, m, 28 + n);
	raw_want = 1;
	pump_until(cond_raw_rx, DEADLINE_MS);
	/* RDMA_NOMSG, empty Read list? no: one position-zero read segment */
	ck_assert_uint_eq(be32(r->rx[0] + 12), RDMA_NOMSG);
	ck_assert_uint_eq(be32(r->rx[0] + 16), 1); /* a read segment follows */
	ck_assert_uint_eq(be32(r->rx[0] + 20), 0); /* position 0 */
	ck_assert_uint_eq(be32(r->rx[0] + 28), 9028);
	ck_assert_int_eq(W.log_unclaimed, 0);
	pump_ms(250);
	ck_assert_int_eq(W.log_unclaimed, 1);
	ck_assert_uint_eq(sstats().msgs_rprc, 1);
	raw_free(r);
	world_down();
}
END_TEST

START_TEST(rprc_on_one_side_only_is_not_used_and_too_big_reply_gets_err_chunk)
{
	struct rpcrdma_config c, s;
	uint8_t msg[256];
	struct rpcrdma_call_opts o = {.force = RPCRDMA_FORCE_NO_REPLY};
	struct rpcrdma_conn_info ci;
	size_t n;

	cfgs(&c, &s);
	s.rprc = true;
	world_up(&c, &s, AF_INET);
	ck_assert_int_eq(rpcrdma_conn_info(W.cc, &ci), 0);
	ck_assert(!ci.rprc);
	n = tcall(msg, 0x9101, TVERS_NOULB, 2, NULL, 0);
	put32(msg + 40, 20000);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_REMOTE_CHUNK);
	ck_assert_int_eq(W.reply_rc, IW_ERPC_TOOBIG);
	ck_assert_uint_eq(cstats().err_received, 1);
	ck_assert_uint_eq(sstats().err_sent, 1);
	ck_assert_uint_eq(sstats().msgs_rprc, 0);
	world_down();
}
END_TEST

START_TEST(send_with_invalidate_is_off_when_the_client_refuses_it)
{
	struct rpcrdma_config c, s;
	uint8_t msg[256];
	struct rpcrdma_call_opts o = {.force = RPCRDMA_FORCE_REPLY_CHUNK};
	struct rpcrdma_conn_info ci;
	size_t n;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0xa001, TVERS, 1, "inv", 3);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_uint_eq(sstats().send_inv, 1);
	ck_assert_uint_eq(cstats().send_inv, 1);
	world_down();

	cfgs(&c, &s);
	c.no_send_inv = true;
	world_up(&c, &s, AF_INET);
	ck_assert_int_eq(rpcrdma_conn_info(W.sc, &ci), 0);
	ck_assert(!ci.send_inv);
	n = tcall(msg, 0xa002, TVERS, 1, "inv", 3);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_uint_eq(sstats().send_inv, 0);
	ck_assert_uint_eq(cstats().send_inv, 0);
	world_down();
}
END_TEST

static struct res bc_res[4];
static bool cond_bc(void)
{
	return bc_res[0].done && bc_res[1].done && bc_res[2].done;
}

START_TEST(backchannel_calls_from_the_server_are_answered_by_the_client)
{
	struct rpcrdma_config c, s;
	uint8_t msg[256], want[256];
	size_t n, wn;
	struct rpcrdma_conn_info ci;

	cfgs(&c, &s);
	c.bc_credits = 2;
	s.bc_credits = 4;
	world_up(&c, &s, AF_INET);
	/* MPA (RFC 5044 §7.1.2): the responder sends nothing before the initiator's first
	 * FPDU; and RFC 8167 §6: no backchannel call before the client spoke first */
	n = tcall(msg, 0xb201, TVERS, 1, "hi", 2);
	call_ok(1, msg, n, NULL);
	memset(bc_res, 0, sizeof(bc_res));
	for (int i = 0; i < 3; i++) {
		n = tcall(msg, 0xb000 + (uint32_t)i, 1, 1, "cb", 2);
		ck_assert_int_eq(rpcrdma_call(W.sc, msg, n, NULL, c_reply, &bc_res[i], NULL), 0);
	}
	pump_until(cond_bc, DEADLINE_MS);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(bc_res[i].status, 0);
		wn = treply(want, 0xb000 + (uint32_t)i, "cb", 2);
		ck_assert_uint_eq(bc_res[i].len, wn);
		ck_assert_mem_eq(bc_res[i].data, want, wn);
		free(bc_res[i].data);
	}
	ck_assert_int_eq(W.bc_calls, 3);
	ck_assert_uint_eq(sstats().bc_calls_sent, 3);
	ck_assert_uint_eq(cstats().bc_calls_received, 3);
	ck_assert_int_eq(rpcrdma_conn_info(W.sc, &ci), 0);
	ck_assert_uint_eq(ci.bc_credits, 2); /* the client's grant, under our 4 */
	/* too big for inline: refused */
	{
		static uint8_t big[8000];

		n = tcall(big, 0xb100, 1, 1, NULL, 6000);
		ck_assert_int_eq(rpcrdma_call(W.sc, big, n, NULL, c_reply, &bc_res[3], NULL),
				 IW_ERPC_TOOBIG);
	}
	/* forward traffic still fine */
	n = tcall(msg, 0xb200, TVERS, 1, "fw", 2);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	world_down();
}
END_TEST

static bool cond_down_up(void)
{
	return W.c_down >= 1 && W.c_up >= 2;
}

START_TEST(lost_connection_is_reestablished_and_outstanding_calls_retransmitted)
{
	struct rpcrdma_config c, s;
	uint8_t msg[128];

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	for (int i = 0; i < 3; i++) {
		size_t n = tcall(msg, 0xc000 + (uint32_t)i, TVERS, 3, "r", 1);

		ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[i], NULL), 0);
	}
	want_n = 1;
	pump_until(cond_held, DEADLINE_MS);
	/* the server side goes away with the call held */
	rpcrdma_close(W.sc);
	pump_until(cond_down_up, DEADLINE_MS);
	/* the old request has no connection any more */
	for (int k = 0; k < W.nheld; k++) {
		uint8_t out[64];

		if (rpcrdma_req_conn(W.held[k].req) == NULL) {
			ck_assert_int_eq(rpcrdma_reply(W.held[k].req, out,
						       treply(out, be32(W.held[k].msg), "", 0)),
					 IW_ERPC_CONN);
			free(W.held[k].msg);
			W.held[k] = W.held[--W.nheld];
			k--;
		}
	}
	ck_assert_int_eq(W.nheld, 0);
	for (int got = 0; got < 3;) {
		want_n = 1;
		pump_until(cond_held, DEADLINE_MS);
		for (int k = 0; k < W.nheld; k++) {
			uint8_t out[64];

			ck_assert_int_eq(rpcrdma_reply(W.held[k].req, out,
						       treply(out, be32(W.held[k].msg), "ok", 2)),
					 0);
			free(W.held[k].msg);
			got++;
		}
		W.nheld = 0;
	}
	want_n = 3;
	pump_until(cond_all, DEADLINE_MS);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(W.r[i].status, 0);
		ck_assert_uint_eq(be32(W.r[i].data), 0xc000 + (uint32_t)i);
	}
	ck_assert_uint_eq(cstats().reconnects, 1);
	ck_assert_uint_ge(cstats().retransmitted, 1);
	ck_assert_int_eq(W.s_closed, 1);
	world_down();
}
END_TEST

static bool cond_cclosed(void)
{
	return W.c_closed >= 1;
}

START_TEST(peer_gone_for_good_completes_calls_with_conn_error)
{
	struct rpcrdma_config c, s;
	uint8_t msg[128];
	size_t n;

	cfgs(&c, &s);
	c.reconnects = 2;
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0xc101, TVERS, 3, "g", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[0], NULL), 0);
	want_n = 1;
	pump_until(cond_held, DEADLINE_MS);
	rpcrdma_listener_close(W.l);
	W.l = NULL;
	rpcrdma_close(W.sc);
	pump_until(cond_cclosed, DEADLINE_MS);
	ck_assert_int_eq(W.r[0].done, 1);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_CONN);
	ck_assert_int_eq(W.c_down, 1);
	ck_assert_int_eq(W.c_closed, 1);
	world_down();
}
END_TEST

START_TEST(ctx_destroy_completes_every_outstanding_call_once)
{
	struct rpcrdma_config c, s;
	uint8_t msg[128];

	cfgs(&c, &s);
	s.credits = 2;
	world_up(&c, &s, AF_INET);
	for (int i = 0; i < 5; i++) {
		size_t n = tcall(msg, 0xe000 + (uint32_t)i, TVERS, 3, "d", 1);

		ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[i], NULL), 0);
	}
	want_n = 1;
	pump_until(cond_held, DEADLINE_MS);
	rpcrdma_ctx_destroy(W.c);
	W.c = NULL;
	W.cc = NULL;
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(W.r[i].done, 1);
		ck_assert_int_eq(W.r[i].status, IW_ERPC_SHUTDOWN);
	}
	ck_assert_int_eq(W.c_closed, 1);
	world_down();
}
END_TEST

static void raw_responder_world(int mode, struct rpcrdma_config *c)
{
	struct raw *r;
	struct sockaddr_storage ss;
	socklen_t sl;

	memset(&W, 0, sizeof(W));
	r = raw_new();
	r->responder = true;
	r->grant = 4;
	r->mode = mode;
	W.port = raw_listen(r);
	W.c = rpcrdma_ctx_create(c);
	sl = th_loopback(AF_INET, W.port, &ss);
	W.cc = rpcrdma_connect(W.c, (struct sockaddr *)&ss, sl, c_conn, NULL, &W);
	pump_until(cond_c_up, DEADLINE_MS);
}

static void raw_responder_down(void)
{
	rpcrdma_ctx_destroy(W.c);
	W.c = NULL;
	raw_free(W.raw);
	world_down();
}

START_TEST(err_vers_from_the_responder_completes_the_call_with_remote_vers)
{
	struct rpcrdma_config c;
	struct rpcrdma_call_opts o = {.max_reply = 256};
	uint8_t msg[128];
	size_t n;

	cfg_base(&c, false);
	raw_responder_world(RAW_ERR_VERS, &c);
	n = tcall(msg, 0xf001, TVERS, 1, "v", 1);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_REMOTE_VERS);
	ck_assert_uint_eq(cstats().err_received, 1);
	raw_responder_down();
}
END_TEST

START_TEST(unused_write_chunk_for_a_valid_item_completes_with_ulb_error)
{
	struct rpcrdma_config c;
	uint8_t msg[128];
	size_t n;

	cfg_base(&c, false);
	c.ulb = &tulb;
	c.inline_recv = 1024;
	raw_responder_world(RAW_UNUSED_WRITE, &c);
	/* proc 2 of 3000 octets: the plan asks for a Write chunk of 3000 */
	n = tcall(msg, 0xf101, TVERS, 2, NULL, 0);
	put32(msg + 40, 3000);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_ULB);
	ck_assert_uint_eq(cstats().replies_received, 1);
	raw_responder_down();
}
END_TEST

START_TEST(unpredictable_reply_too_big_for_reply_chunk_is_retried_once_with_new_xid)
{
	struct rpcrdma_config c, s;
	static uint8_t msg[256], want[30000];
	size_t n, wn;

	cfgs(&c, &s);
	c.default_reply_max = 8192;
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0xf201, TVERS, 4, NULL, 0);
	put32(msg + 40, 20000);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	wn = treply(want, 0xf201, NULL, 20000);
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn); /* the original XID restored */
	ck_assert_int_eq(W.calls, 2);
	ck_assert_uint_ne(be32(W.last_call), 0xf201); /* the retry had a new XID */
	ck_assert_mem_eq(W.last_call + 4, msg + 4, n - 4);
	ck_assert_uint_eq(cstats().err_received, 1);
	ck_assert_uint_eq(cstats().calls_sent, 2);
	ck_assert_uint_eq(sstats().msgs_long_reply, 1);
	world_down();
}
END_TEST

START_TEST(client_answers_a_backchannel_call_with_chunks_with_err_chunk)
{
	struct rpcrdma_config c;
	struct rpcrdma_call_opts o = {.max_reply = 256};
	uint8_t msg[128];
	size_t n;
	bool found = false;

	cfg_base(&c, false);
	c.bc_credits = 2;
	raw_responder_world(RAW_BC_CHUNK, &c);
	n = tcall(msg, 0xf301, TVERS, 1, "b", 1);
	call_ok(0, msg, n, &o);
	ck_assert_int_eq(W.r[0].status, 0);
	raw_want = 2; /* the forward call, then the ERR_CHUNK */
	pump_until(cond_raw_rx, DEADLINE_MS);
	for (int k = 0; k < W.raw->nrx; k++)
		if (W.raw->rxlen[k] == 20 && be32(W.raw->rx[k]) == 0xbcbc0001) {
			ck_assert_uint_eq(be32(W.raw->rx[k] + 4), 1);
			ck_assert_uint_eq(be32(W.raw->rx[k] + 8), 2); /* our backchannel credits */
			ck_assert_uint_eq(be32(W.raw->rx[k] + 12), RDMA_ERROR);
			ck_assert_uint_eq(be32(W.raw->rx[k] + 16), ERR_CHUNK);
			found = true;
		}
	ck_assert(found);
	ck_assert_uint_eq(cstats().err_sent, 1);
	ck_assert_uint_eq(cstats().bc_calls_received, 0);
	raw_responder_down();
}
END_TEST

START_TEST(connect_to_a_closed_port_fails_wait_up_and_completes_queued_calls)
{
	struct rpcrdma_config c, s;
	struct sockaddr_storage ss;
	socklen_t sl;
	uint8_t msg[128];
	uint16_t port;
	size_t n;
	int rc;

	/* a port that was just free */
	cfg_base(&s, true);
	memset(&W, 0, sizeof(W));
	world_listen(&s, AF_INET);
	port = W.port;
	rpcrdma_ctx_destroy(W.s);
	W.s = NULL;
	cfg_base(&c, false);
	W.c = rpcrdma_ctx_create(&c);
	sl = th_loopback(AF_INET, port, &ss);
	W.cc = rpcrdma_connect(W.c, (struct sockaddr *)&ss, sl, c_conn, NULL, &W);
	ck_assert_ptr_nonnull(W.cc);
	n = tcall(msg, 0xf401, TVERS, 1, "q", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[0], NULL), 0);
	rc = rpcrdma_conn_wait_up(W.cc, 5000);
	ck_assert_int_lt(rc, 0);
	ck_assert_int_ne(rc, IW_ETIMEDOUT);
	ck_assert_int_eq(W.c_closed, 1);
	ck_assert_int_eq(W.c_up, 0);
	ck_assert_int_eq(W.r[0].done, 1);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_CONN);
	world_down();
}
END_TEST

/* rpcrdma_listener_set_admit: the listener's admission hook. */
static int admit_calls;
static bool admit_answer;
static struct sockaddr_storage admit_peer;

static bool admit_fn(void *arg, const struct sockaddr *peer)
{
	ck_assert_ptr_eq(arg, &W);
	admit_calls++;
	memcpy(&admit_peer, peer,
	       peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					   : sizeof(struct sockaddr_in));
	return admit_answer;
}

static bool cond_c_closed(void)
{
	return W.c_closed >= 1;
}

/*
 * A listener's admission hook sees every connection request with the
 * peer's address before anything is made for it: refused, the client is
 * REJECTED at once (an MPA reject, no reconnect: it never was up) and the
 * server reports nothing; admitted, the connection comes up as usual.
 */
START_TEST(the_admission_hook_refuses_a_peer_with_an_mpa_reject)
{
	struct rpcrdma_config c, s;
	struct sockaddr_storage ss;
	socklen_t sl;
	uint8_t msg[128];
	size_t n;

	cfgs(&c, &s);
	memset(&W, 0, sizeof(W));
	world_listen(&s, AF_INET);
	admit_calls = 0;
	admit_answer = false;
	rpcrdma_listener_set_admit(W.l, admit_fn, &W);
	W.c = rpcrdma_ctx_create(&c);
	ck_assert_ptr_nonnull(W.c);
	sl = th_loopback(AF_INET, W.port, &ss);
	W.cc = rpcrdma_connect(W.c, (struct sockaddr *)&ss, sl, c_conn, NULL, &W);
	ck_assert_ptr_nonnull(W.cc);
	n = tcall(msg, 0xf601, TVERS, 1, "q", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[0], NULL), 0);
	pump_until(cond_c_closed, DEADLINE_MS);
	ck_assert_int_eq(admit_calls, 1);
	ck_assert_int_eq(admit_peer.ss_family, AF_INET);
	ck_assert_uint_eq(ntohl(((struct sockaddr_in *)&admit_peer)->sin_addr.s_addr),
			  INADDR_LOOPBACK);
	ck_assert_int_eq(W.c_up, 0);
	ck_assert_int_eq(W.s_up, 0);
	ck_assert_int_eq(W.r[0].done, 1);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_CONN);
	/* admitted: as without the hook (the refused client's ctx is replaced) */
	rpcrdma_ctx_destroy(W.c);
	W.c = NULL;
	W.cc = NULL;
	admit_answer = true;
	world_connect(&c);
	ck_assert_int_eq(admit_calls, 2);
	ck_assert_int_eq(W.c_up, 1);
	world_down();
}
END_TEST

static bool cond_down(void)
{
	return W.c_down >= 1;
}

START_TEST(client_reconnects_once_the_listener_is_back_on_the_same_port)
{
	struct rpcrdma_config c, s;
	struct sockaddr_storage ss;
	socklen_t sl;
	uint8_t msg[128], out[64];

	cfgs(&c, &s);
	c.reconnects = 50;
	world_up(&c, &s, AF_INET);
	{
		size_t n = tcall(msg, 0xf501, TVERS, 3, "l", 1);

		ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[0], NULL), 0);
	}
	want_n = 1;
	pump_until(cond_held, DEADLINE_MS);
	rpcrdma_listener_close(W.l);
	W.l = NULL;
	rpcrdma_close(W.sc);
	pump_until(cond_down, DEADLINE_MS);
	pump_ms(200); /* a few refused attempts */
	ck_assert_int_eq(W.c_up, 1);
	ck_assert_int_eq(W.c_closed, 0);
	sl = th_loopback(AF_INET, W.port, &ss);
	W.l = rpcrdma_listen(W.s, (struct sockaddr *)&ss, sl, 16, s_conn, s_call, &W);
	ck_assert_ptr_nonnull(W.l);
	ck_assert_int_eq(rpcrdma_reply(W.held[0].req, out, treply(out, 0xf501, "", 0)),
			 IW_ERPC_CONN);
	free(W.held[0].msg);
	W.nheld = 0;
	want_n = 1;
	pump_until(cond_held, DEADLINE_MS);
	ck_assert_int_eq(W.c_up, 2);
	ck_assert_int_eq(rpcrdma_reply(W.held[0].req, out, treply(out, 0xf501, "back", 4)), 0);
	free(W.held[0].msg);
	W.nheld = 0;
	res_i = 0;
	pump_until(cond_res, DEADLINE_MS);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_uint_eq(W.r[0].len, 32);
	ck_assert_uint_eq(cstats().reconnects, 1);
	ck_assert_uint_eq(cstats().retransmitted, 1);
	world_down();
}
END_TEST

START_TEST(peer_without_rfc8797_pdata_gets_1024_octet_inline_and_no_send_inv)
{
	struct rpcrdma_config s;
	struct rpcrdma_conn_info ci;
	struct raw *r;
	uint8_t m[2048];
	size_t n;

	cfg_base(&s, true);
	memset(&W, 0, sizeof(W));
	world_listen(&s, AF_INET);
	r = raw_new();
	r->no_pdata = true;
	raw_connect(r, W.port);
	pump_until(cond_s_up, DEADLINE_MS);
	ck_assert_ptr_nonnull(W.sc);
	ck_assert_int_eq(rpcrdma_conn_info(W.sc, &ci), 0);
	ck_assert(!ci.peer_pdata && !ci.send_inv && !ci.rprc && !ci.client);
	ck_assert_uint_eq(ci.inline_send, 1024);
	ck_assert_uint_eq(ci.inline_recv, 4096);
	/* a reply of 1100 octets no longer fits inline and there is no Reply chunk */
	memset(m, 0, sizeof(m));
	put32(m, 0xe100);
	put32(m + 4, 1);
	put32(m + 8, 1);
	n = tcall(m + 28, 0xe100, TVERS_NOULB, 2, NULL, 0);
	put32(m + 28 + 40, 1100);
	raw_send(r, m, 28 + n);
	raw_want = 1;
	pump_until(cond_raw_rx, DEADLINE_MS);
	ck_assert_uint_eq(r->rxlen[0], 20);
	ck_assert_uint_eq(be32(r->rx[0] + 16), ERR_CHUNK);
	ck_assert_int_eq(W.reply_rc, IW_ERPC_TOOBIG);
	raw_free(r);
	world_down();
}
END_TEST

START_TEST(calls_waiting_for_a_credit_can_be_cancelled_or_time_out_without_being_sent)
{
	struct rpcrdma_config c, s;
	struct rpcrdma_call_opts o = {.timeout_ms = 50};
	uint8_t msg[128], out[64];
	uint64_t id;
	size_t n;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	/* one credit until the first reply: the next calls wait */
	n = tcall(msg, 0xe201, TVERS, 3, "a", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[0], NULL), 0);
	n = tcall(msg, 0xe202, TVERS, 3, "b", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[1], &id), 0);
	n = tcall(msg, 0xe203, TVERS, 3, "c", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, &o, c_reply, &W.r[2], NULL), 0);
	ck_assert_uint_eq(cstats().credit_waits, 2);
	ck_assert_int_eq(rpcrdma_cancel(W.cc, id), 0);
	ck_assert_int_eq(W.r[1].status, IW_ERPC_CANCELLED);
	res_i = 2;
	pump_until(cond_res, DEADLINE_MS);
	ck_assert_int_eq(W.r[2].status, IW_ETIMEDOUT);
	/* both are gone: their XIDs are free again and never reached the server */
	n = tcall(msg, 0xe202, TVERS, 1, "b2", 2);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[3], NULL), 0);
	ck_assert_int_eq(W.nheld, 1);
	ck_assert_int_eq(rpcrdma_reply(W.held[0].req, out, treply(out, 0xe201, "", 0)), 0);
	free(W.held[0].msg);
	W.nheld = 0;
	want_n = 4;
	pump_until(cond_all, DEADLINE_MS);
	ck_assert_int_eq(W.r[0].status, 0);
	ck_assert_int_eq(W.r[3].status, 0);
	ck_assert_int_eq(W.calls, 2);
	ck_assert_uint_eq(cstats().calls_sent, 2);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(W.r[i].done, 1);
	world_down();
}
END_TEST

START_TEST(client_close_completes_calls_with_shutdown_and_reports_closed_from_process)
{
	struct rpcrdma_config c, s;
	uint8_t msg[128];
	size_t n;

	cfgs(&c, &s);
	c.bc_credits = 1;
	s.bc_credits = 1;
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0xe301, TVERS, 3, "x", 1);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[0], NULL), 0);
	want_n = 1;
	pump_until(cond_held, DEADLINE_MS);
	/* a backchannel call from the server that the client will never answer */
	n = tcall(msg, 0xe3b1, 1, 3, "y", 1);
	ck_assert_int_eq(rpcrdma_call(W.sc, msg, n, NULL, c_reply, &W.r[1], NULL), 0);
	rpcrdma_close(W.cc);
	ck_assert_int_eq(W.r[0].done, 1);
	ck_assert_int_eq(W.r[0].status, IW_ERPC_SHUTDOWN);
	ck_assert_int_eq(W.c_closed, 0);
	ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, NULL, c_reply, &W.r[2], NULL),
			 IW_ERPC_SHUTDOWN);
	pump_until(cond_cclosed, DEADLINE_MS);
	ck_assert_int_eq(W.c_closed_status, 0);
	res_i = 1;
	pump_until(cond_res, DEADLINE_MS);
	ck_assert_int_eq(W.r[1].status, IW_ERPC_CONN);
	ck_assert_int_eq(W.s_closed, 1);
	ck_assert_ptr_null(rpcrdma_req_conn(W.held[0].req));
	world_down();
}
END_TEST

START_TEST(random_chunk_lists_are_answered_or_refused_and_never_crash_the_responder)
{
	struct rpcrdma_config s;
	struct th_rng rng;
	struct raw *r;
	int sent = 0, conns = 1;

	cfg_base(&s, true);
	s.ulb = &tulb;
	memset(&W, 0, sizeof(W));
	W.tolerant = true;
	world_listen(&s, AF_INET);
	r = raw_new();
	raw_connect(r, W.port);
	th_rng_init(&rng, getenv("IW_TEST_SEED") ? th_seed_from_env() : 0x5eed);
	for (int i = 0; i < 300; i++) {
		struct rpcrdma_hdr h;
		uint8_t out[1024];
		int hl, nr = (int)th_rng_range(&rng, 0, 2), nw = (int)th_rng_range(&rng, 0, 1);
		size_t pl;

		rpcrdma_hdr_init(&h, 0x100 + (uint32_t)i, (uint32_t)th_rng_range(&rng, 0, 40),
				 (uint32_t)th_rng_range(&rng, 0, 4));
		if (h.proc == RDMA_ERROR)
			h.err = (uint32_t)th_rng_range(&rng, 1, 2);
		for (int k = 0; k < nr + nw + 1; k++) {
			struct rpcrdma_segment sg = {
				.handle = th_rng_range(&rng, 0, 30) ? r->mr->rkey
								    : (uint32_t)th_rng_next(&rng),
				.length = (uint32_t)th_rng_range(&rng, 0, 3000),
				.offset = (uint64_t)(uintptr_t)r->mem + th_rng_range(&rng, 0, 4000),
			};

			if (k < nr)
				rpcrdma_hdr_add_read(&h, th_rng_range(&rng, 0, 3) != 0,
						     (uint32_t)th_rng_range(&rng, 0, 30) * 4, &sg);
			else if (k < nr + nw)
				rpcrdma_hdr_add_write(&h, true, &sg);
			else if (th_rng_range(&rng, 0, 1))
				rpcrdma_hdr_add_reply(&h, &sg);
		}
		hl = rpcrdma_hdr_encode(&h, out, sizeof(out));
		if (hl < 0)
			continue;
		pl = tcall(out + hl, th_rng_range(&rng, 0, 7) ? h.xid : 7, TVERS,
			   (uint32_t)th_rng_range(&rng, 1, 2), NULL,
			   (uint32_t)th_rng_range(&rng, 0, 400));
		if ((size_t)hl + pl > 1024)
			continue;
		if (th_rng_range(&rng, 0, 9) == 0) /* a damaged length word */
			put32(out + hl + 40, (uint32_t)th_rng_next(&rng));
		if (r->disconnected || !r->up) {
			/* an RDMA Read of a bad STag is fatal to a connection: a new one */
			raw_free(r);
			r = raw_new();
			raw_connect(r, W.port);
			conns++;
		}
		raw_send(r, out, (size_t)hl + pl);
		sent++;
		pump_ms(1);
	}
	pump_ms(50);
	ck_assert_int_gt(sent, 200);
	ck_assert_int_lt(conns, 100);
	if (W.sc) {
		struct rpcrdma_stats st = sstats();

		ck_assert_uint_gt(st.replies_sent + st.err_sent + st.discarded, 0);
	}
	raw_free(r);
	world_down();
}
END_TEST

START_TEST(random_replies_never_crash_the_requester_and_every_call_completes_once)
{
	struct rpcrdma_config c;
	struct th_rng g;
	uint64_t end;
	int ok = 0, bad = 0;

	cfg_base(&c, false);
	c.ulb = &tulb;
	c.rprc = true;
	c.reconnects = 1000;
	c.reconnect_ms = 5;
	raw_responder_world(RAW_RANDOM, &c);
	th_rng_init(&W.raw->rng, getenv("IW_TEST_SEED") ? th_seed_from_env() : 0x7a11);
	th_rng_init(&g, 99);
	for (int i = 0; i < MAXC && W.cc; i++) {
		static uint8_t msg[8000];
		struct rpcrdma_call_opts o = {.timeout_ms = 300,
					      .force = (unsigned)th_rng_range(&g, 0, 31) &
						       (RPCRDMA_FORCE_REPLY_CHUNK |
							RPCRDMA_FORCE_NO_WRITE |
							RPCRDMA_FORCE_NO_REPLY)};
		size_t n;

		if (th_rng_range(&g, 0, 1)) {
			n = tcall(msg, 0x9900 + (uint32_t)i, TVERS, 1, NULL,
				  (uint32_t)th_rng_range(&g, 0, 6000));
		} else {
			n = tcall(msg, 0x9900 + (uint32_t)i, TVERS, 2, NULL, 0);
			put32(msg + 40, (uint32_t)th_rng_range(&g, 0, 20000));
		}
		ck_assert_int_eq(rpcrdma_call(W.cc, msg, n, &o, c_reply, &W.r[i], NULL), 0);
		res_i = i;
		pump_until(cond_res, DEADLINE_MS);
	}
	end = th_now_ms() + 100;
	while (th_now_ms() < end)
		pump_ms(10);
	for (int i = 0; i < MAXC; i++) {
		ck_assert_int_eq(W.r[i].done, 1);
		if (getenv("XPRT_VERBOSE"))
			fprintf(stderr, "call %d: %s\n", i, rpcrdma_errname(W.r[i].status));
		ok += W.r[i].status == 0;
		bad += W.r[i].status == IW_ERPC_ULB || W.r[i].status == IW_ERPC_REMOTE_CHUNK ||
		       W.r[i].status == IW_ERPC_REMOTE_VERS;
	}
	ck_assert_int_gt(ok, 10);
	ck_assert_int_gt(bad, 10);
	ck_assert_uint_gt(cstats().discarded, 10);
	raw_responder_down();
}
END_TEST

START_TEST(write_chunk_and_reply_chunk_together_rebuild_the_whole_reply)
{
	struct rpcrdma_config c, s;
	static uint8_t msg[256], want[40000];
	size_t n, wn;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	n = tcall(msg, 0xf601, TVERS, 5, NULL, 0);
	put32(msg + 40, 20001);
	call_ok(0, msg, n, NULL);
	ck_assert_int_eq(W.r[0].status, 0);
	wn = treply(want, 0xf601, NULL, 20001);
	for (int k = 0; k < TFILL; k++)
		want[wn + (size_t)k] = (uint8_t)(k ^ 0x5a);
	wn += TFILL;
	ck_assert_uint_eq(W.r[0].len, wn);
	ck_assert_mem_eq(W.r[0].data, want, wn);
	ck_assert_uint_eq(sstats().msgs_long_reply, 1);
	ck_assert_uint_eq(sstats().bytes_write_chunk, 20001);
	ck_assert_uint_eq(sstats().bytes_reply_chunk, 28 + TFILL);
	ck_assert_uint_eq(cstats().bytes_write_chunk, 20001);
	ck_assert_uint_eq(cstats().bytes_reply_chunk, 28 + TFILL);
	ck_assert_uint_eq(sstats().send_inv, 1);
	world_down();
}
END_TEST

/*
 * The large buffers a connection keeps (xbuf_get, xprt_io.c) are never
 * cleared again, which is safe only because one never passes to another
 * connection: a buffer A filled and gave back comes back to A as it is, B
 * gets a new, zeroed one, small ones are not kept, and A's go after
 * XBUF_IDLE_MS without use.
 */
START_TEST(kept_buffers_stay_with_their_connection_and_go_when_idle)
{
	enum { LEN = 1 << 20 };
	struct rpcrdma_config c, s;
	size_t cap, cap2, small_cap;
	uint8_t *a, *b, *again, *small;

	cfgs(&c, &s);
	world_up(&c, &s, AF_INET);
	ck_assert_ptr_nonnull(W.sc);
	a = xbuf_get(W.cc, LEN, &cap);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_ge(cap, LEN);
	for (size_t i = 0; i < cap; i++)
		ck_assert_msg(a[i] == 0, "a new buffer is zeroed (octet %zu)", i);
	memset(a, 0xA5, cap);
	xbuf_put(W.cc, a, cap);
	ck_assert_uint_eq(W.cc->npool, 1);
	/* the other connection: a zeroed buffer of its own */
	b = xbuf_get(W.sc, LEN, &cap2);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(b, a);
	for (size_t i = 0; i < cap2; i++)
		ck_assert_msg(b[i] == 0, "another connection's buffer never comes back (octet %zu)",
			      i);
	xbuf_put(W.sc, b, cap2);
	/* the first connection's own buffer, as it was left */
	again = xbuf_get(W.cc, LEN / 2 + 1, &cap2);
	ck_assert_ptr_eq(again, a);
	ck_assert_uint_eq(cap2, cap);
	ck_assert_uint_eq(again[cap - 1], 0xA5);
	xbuf_put(W.cc, again, cap2);
	/* below XBUF_MIN: not kept */
	small = xbuf_get(W.cc, 100, &small_cap);
	ck_assert_ptr_nonnull(small);
	xbuf_put(W.cc, small, small_cap);
	ck_assert_uint_eq(W.cc->npool, 1);
	/* idle: freed */
	pump_ms(XBUF_IDLE_MS + 500);
	ck_assert_uint_eq(W.cc->npool, 0);
	ck_assert_uint_eq(W.sc->npool, 0);
	world_down();
}
END_TEST

static Suite *xprt_suite(void)
{
	const TTest *const tests[] = {
		inline_call_gets_inline_reply_with_negotiated_sizes,
		kept_buffers_stay_with_their_connection_and_go_when_idle,
		inline_call_over_ipv6_loopback,
		the_verbs_context_attributes_come_from_the_config,
		large_call_goes_as_read_chunk_and_large_reply_as_write_chunk,
		a_call_in_pieces_arrives_whole,
		forced_long_call_is_position_zero_read_chunk,
		fd_driven_loops_in_two_processes_never_lose_a_wakeup,
		call_without_binding_too_big_goes_long_and_reply_via_reply_chunk,
		nfs3_write_64k_data_goes_in_read_chunk_at_its_position,
		nfs3_write_read_chunk_split_into_4k_segments,
		nfs3_read_256k_comes_back_through_a_write_chunk,
		nfs3_read_write_chunk_split_into_4k_segments,
		nfs4_compound_with_two_reads_uses_two_write_chunks,
		bad_headers_draw_err_vers_and_err_chunk_and_short_ones_are_dropped,
		credit_limit_of_two_keeps_at_most_two_calls_at_the_server,
		a_grant_of_zero_credits_is_treated_as_one,
		cancelled_call_reply_is_dropped_and_next_calls_work,
		timed_out_call_completes_with_etimedout_and_the_late_reply_is_dropped,
		rprc_end_to_end_reply_pulled_and_released_by_rdma_done,
		rprc_exposure_is_invalidated_after_timeout_without_rdma_done,
		rprc_on_one_side_only_is_not_used_and_too_big_reply_gets_err_chunk,
		send_with_invalidate_is_off_when_the_client_refuses_it,
		backchannel_calls_from_the_server_are_answered_by_the_client,
		lost_connection_is_reestablished_and_outstanding_calls_retransmitted,
		peer_gone_for_good_completes_calls_with_conn_error,
		err_vers_from_the_responder_completes_the_call_with_remote_vers,
		unused_write_chunk_for_a_valid_item_completes_with_ulb_error,
		unpredictable_reply_too_big_for_reply_chunk_is_retried_once_with_new_xid,
		client_answers_a_backchannel_call_with_chunks_with_err_chunk,
		connect_to_a_closed_port_fails_wait_up_and_completes_queued_calls,
		client_reconnects_once_the_listener_is_back_on_the_same_port,
		the_admission_hook_refuses_a_peer_with_an_mpa_reject,
		peer_without_rfc8797_pdata_gets_1024_octet_inline_and_no_send_inv,
		calls_waiting_for_a_credit_can_be_cancelled_or_time_out_without_being_sent,
		client_close_completes_calls_with_shutdown_and_reports_closed_from_process,
		random_chunk_lists_are_answered_or_refused_and_never_crash_the_responder,
		random_replies_never_crash_the_requester_and_every_call_completes_once,
		write_chunk_and_reply_chunk_together_rebuild_the_whole_reply,
		ctx_destroy_completes_every_outstanding_call_once,
	};
	/* XPRT_ONLY=<substring>: run only the matching cases (debugging) */
	const char *only = getenv("XPRT_ONLY");
	Suite *s = suite_create("rpcrdma_xprt");
	TCase *t = tcase_create("loopback");

	tcase_set_timeout(t, 120);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!only || strstr(tests[i]->name, only))
			tcase_add_test(t, tests[i]);
	suite_add_tcase(s, t);
	return s;
}

TH_MAIN(xprt_suite)
