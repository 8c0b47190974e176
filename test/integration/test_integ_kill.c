/* SPDX-License-Identifier: MIT */
/*
 * test_integ_kill.c - the peer process is killed (SIGKILL) in the middle of a
 * transfer or of the MPA exchange: every local work request must complete
 * exactly once, the connection manager must report the end, nothing may hang.
 *
 * Theory of operation.  The test forks a peer before it opens any context, so
 * each process has its own context and channels.  For the transfer cases the
 * peer runs the library (inline progress only): it registers a region for our
 * RDMA Writes and Reads, posts receives for all of our Sends and sends
 * PEER_SENDS Sends of its own.  Locally we first post one small Write (the
 * Initiator sends first, RFC 5044 §7.1.2, so a peer that accepted cannot send
 * before it), wait for the peer's Sends, then post 3 x NOPS work requests of
 * 1 MiB (Write, Send, Read interleaved) in one list.
 *
 * Killing "mid-transfer" must not depend on how fast the two processes run,
 * so the peer stops making library calls once PEER_STALL of our Sends have
 * arrived and says so through a pipe: from then on no octet moves, our socket
 * fills, our Reads wait for Responses that never come, and nothing more can
 * complete until the kill.  Then we SIGKILL it (the kernel resets the
 * connection: the peer left octets unread).
 *
 * Then every posted WR must come back exactly once with the opcode it was
 * posted with; per queue no success may follow an error (the flush ends the
 * queue); the receives the peer never filled must fail; the id must see
 * DISCONNECTED; and WRs posted afterwards must be completed with
 * IWV_WC_WR_FLUSH_ERR by the time the post returns.  This runs with the peer
 * as server and as client, and with the local side busy polling or blocked
 * in iwv_get_cq_event() (a helper thread kills the peer while the main
 * thread sleeps there, so the flush itself must wake it).
 *
 * The MPA cases use a peer that speaks raw TCP: it accepts, reads the MPA
 * Request and never answers.  With timeout_ms set small the connect must fail
 * with UNREACHABLE or CONNECT_ERROR long before the default timeout; when the
 * peer is killed instead, the failure must come from the lost connection, not
 * from the timer.  WRs posted before the connect are flushed in both cases.
 *
 * Every wait has a deadline or an alarm(); peers die with their parent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "ih.h"
#include "th.h"

#define MIB	    (1024u * 1024u)
#define WR_SIZE	    MIB
#define NOPS	    32 /* Writes, Sends and Reads each */
#define NSQ	    (3 * NOPS)
#define NRECV	    32 /* local receives */
#define PEER_SENDS  8  /* Sends the peer makes (fills that many local receives) */
#define PEER_RECVS  NOPS
#define PEER_STALL  2 /* the peer stops after this many of our Sends */
#define MAGIC	    0x4B111u
#define TEST_SECS   120
#define WAIT_MS	    60000u
#define MPA_TMO_MS  300u
#define MPA_WAIT_MS 5000u /* well below the default timeout_ms (10 s) */

/* wr_ids: SQ i = i, receive j = WR_RECV + j, posts after the end = WR_LATE + n */
#define WR_HELLO 99u /* a first small Write: the Initiator sends first (RFC 5044 §7.1.2) */
#define WR_RECV	 100u
#define WR_LATE	 200u
#define WR_SLOTS 210u

/* ---------------------------------------------------------------------- */
/* Processes                                                               */
/* ---------------------------------------------------------------------- */

struct link {
	int up[2];   /* peer -> test */
	int down[2]; /* test -> peer */
};

/* Fork a peer that never outlives the test; it runs fn and _exit()s. */
static pid_t fork_peer(struct link *l, void (*fn)(struct link *l, int arg), int arg)
{
	pid_t pid;

	REQ(pipe(l->up) == 0 && pipe(l->down) == 0, "pipe: %s", strerror(errno));
	pid = ih_fork_peer("peer", TEST_SECS);
	if (pid == 0) {
		close(l->up[0]);
		close(l->down[1]);
		fn(l, arg);
		_exit(0);
	}
	close(l->up[1]);
	close(l->down[0]);
	return pid;
}

static void pipe_put(int fd, uint16_t v)
{
	REQ(write(fd, &v, sizeof(v)) == sizeof(v), "pipe write: %s", strerror(errno));
}

static uint16_t pipe_get(int fd)
{
	uint16_t v = 0;

	REQ(read(fd, &v, sizeof(v)) == sizeof(v), "pipe read: the other process is gone");
	return v;
}

/* ---------------------------------------------------------------------- */
/* Verbs objects of one process                                            */
/* ---------------------------------------------------------------------- */

/* no_thread: inline progress only, whatever IWARP_ENGINE_THREAD says */
static void side_open(struct ih_side *s, bool no_thread)
{
	struct iwv_context_attr ca;
	struct iwv_context *ctx;

	iwv_context_attr_default(&ca);
	if (no_thread)
		ca.engine_thread = 0;
	ctx = iwv_open_context(&ca);
	REQ(ctx, "iwv_open_context: %s", strerror(errno));
	ih_side_init(s, ctx, 1024);
}

/* Wait (bounded, O_NONBLOCK channel) for the next CM event; the caller acknowledges it. */
static struct iwcm_event *next_event(struct ih_side *s, const char *what)
{
	struct iwcm_event *ev;

	for (;;) {
		struct pollfd p = {.fd = s->ech->fd, .events = POLLIN};

		if (iwcm_get_cm_event(s->ech, &ev) == 0)
			return ev;
		REQ(errno == EAGAIN, "iwcm_get_cm_event: %s", strerror(errno));
		ih_check_deadline(what);
		poll(&p, 1, 50);
	}
}

static struct iwcm_event *expect_event(struct ih_side *s, enum iwcm_event_type type)
{
	struct iwcm_event *ev = next_event(s, iwcm_event_str(type));

	REQ(ev->event == type, "expected %s, got %s (status %d, iw_err %d)", iwcm_event_str(type),
	    iwcm_event_str(ev->event), ev->status, ev->iw_err);
	return ev;
}

static void ack(struct iwcm_event *ev)
{
	REQ(iwcm_ack_cm_event(ev) == 0, "iwcm_ack_cm_event");
}

static void resolve(struct ih_side *s, struct iwcm_id *id, uint16_t port)
{
	struct sockaddr_storage dst;

	th_loopback(AF_INET, port, &dst);
	REQ(iwcm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) == 0, "resolve_addr: %s",
	    strerror(errno));
	ack(expect_event(s, IWCM_EVENT_ADDR_RESOLVED));
	REQ(iwcm_resolve_route(id, 2000) == 0, "resolve_route: %s", strerror(errno));
	ack(expect_event(s, IWCM_EVENT_ROUTE_RESOLVED));
}

static struct iwcm_id *listen_any(struct ih_side *s, uint16_t *port)
{
	struct iwcm_id *l;
	struct sockaddr_storage sin;

	th_loopback(AF_INET, 0, &sin);
	REQ(iwcm_create_id(s->ech, &l, NULL, IWCM_PS_TCP) == 0, "create_id");
	REQ(iwcm_bind_addr(l, (struct sockaddr *)&sin) == 0, "bind: %s", strerror(errno));
	REQ(iwcm_listen(l, 8) == 0, "listen: %s", strerror(errno));
	*port = iwcm_get_src_port(l);
	REQ(*port != 0, "no port");
	return l;
}

static void make_qp(struct ih_side *s, struct iwcm_id *id, uint32_t sq, uint32_t rq)
{
	struct iwv_qp_init_attr qa = {0};

	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IWV_QPT_RC;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = rq;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	REQ(iwcm_create_qp(id, s->pd, &qa) == 0, "iwcm_create_qp: %s", strerror(errno));
}

static void post_recv1(struct iwv_qp *qp, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct iwv_sge sg = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
	struct iwv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sg, .num_sge = 1}, *bad = NULL;
	int r = iwv_post_recv(qp, &wr, &bad);

	REQ(r == 0, "iwv_post_recv: %s", strerror(r));
}

/* Private data: where the peer's region is. */
struct region {
	uint32_t magic;
	uint32_t rkey;
	uint64_t addr;
};

/* ---------------------------------------------------------------------- */
/* The library peer: serves Writes, Reads and Sends, then stops            */
/* ---------------------------------------------------------------------- */

enum role { PEER_SERVER, PEER_CLIENT };

/* Completions at the peer: counts our Sends it received.  Returns the completions seen. */
static int peer_poll(struct ih_side *s, int *got)
{
	struct iwv_wc wc[32];
	int n = iwv_poll_cq(s->cq, 32, wc);

	REQ(n >= 0, "iwv_poll_cq: %d", n);
	for (int i = 0; i < n; i++)
		if (wc[i].wr_id < PEER_RECVS && wc[i].status == IWV_WC_SUCCESS)
			++*got;
	return n;
}

static void peer_main(struct link *l, int role)
{
	size_t len = (size_t)(NOPS + PEER_RECVS + PEER_SENDS) * WR_SIZE;
	uint8_t *mem = ih_map(len), *target = mem, *rbuf = mem + (size_t)NOPS * WR_SIZE;
	uint8_t *sbuf = rbuf + (size_t)PEER_RECVS * WR_SIZE;
	struct iwcm_conn_param cp = {0};
	struct iwcm_id *id;
	struct iwcm_event *ev;
	struct region reg = {.magic = MAGIC};
	struct iwv_mr *mr;
	struct ih_side s;
	int got = 0;

	memset(mem, 0x5A, len);
	/* an engine thread would go on moving octets after the peer stops */
	side_open(&s, true);
	mr = iwv_reg_mr(s.pd, mem, len,
			IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ);
	REQ(mr, "iwv_reg_mr: %s", strerror(errno));
	reg.rkey = mr->rkey;
	reg.addr = (uintptr_t)target;
	ih_deadline = th_now_ms() + WAIT_MS;
	if (role == PEER_SERVER) {
		uint16_t port;

		/* the listener lives until the kill, like everything here */
		listen_any(&s, &port);
		pipe_put(l->up[1], port);
		ev = expect_event(&s, IWCM_EVENT_CONNECT_REQUEST);
		id = ev->id;
		ack(ev);
	} else {
		REQ(iwcm_create_id(s.ech, &id, NULL, IWCM_PS_TCP) == 0, "create_id");
		resolve(&s, id, pipe_get(l->down[0]));
	}
	make_qp(&s, id, 2 * PEER_SENDS, PEER_RECVS);
	for (uint32_t j = 0; j < PEER_RECVS; j++)
		post_recv1(id->qp, j, rbuf + (size_t)j * WR_SIZE, WR_SIZE, mr->lkey);
	for (uint32_t i = 0; i < PEER_SENDS; i++) {
		/* posted before the connection is up: they leave once MPA allows */
		struct iwv_sge sg = {.addr = (uintptr_t)(sbuf + (size_t)i * WR_SIZE),
				     .length = WR_SIZE,
				     .lkey = mr->lkey};
		struct iwv_send_wr wr = {.wr_id = 1000 + i, .sg_list = &sg, .num_sge = 1};
		struct iwv_send_wr *bad = NULL;
		int r;

		wr.opcode = IWV_WR_SEND;
		wr.send_flags = IWV_SEND_SIGNALED;
		r = iwv_post_send(id->qp, &wr, &bad);
		REQ(r == 0, "post Send: %s", strerror(r));
	}
	cp.private_data = &reg;
	cp.private_data_len = sizeof(reg);
	if (role == PEER_SERVER)
		REQ(iwcm_accept(id, &cp) == 0, "accept: %s", strerror(errno));
	else
		REQ(iwcm_connect(id, &cp) == 0, "connect: %s", strerror(errno));

	/*
	 * Serve until PEER_STALL of our Sends are in, then stop making any
	 * library call: no more octets are read or written, so the transfer
	 * stops in the middle until the kill.
	 */
	ih_set_nonblock(s.cch->fd, true);
	while (got < PEER_STALL) {
		struct pollfd p[2] = {{.fd = s.cch->fd, .events = POLLIN},
				      {.fd = s.ech->fd, .events = POLLIN}};
		struct iwv_cq *ecq;
		void *cctx;

		ih_check_deadline("serving");
		while (iwcm_get_cm_event(s.ech, &ev) == 0) {
			REQ(ev->event == IWCM_EVENT_ESTABLISHED, "peer: %s",
			    iwcm_event_str(ev->event));
			ack(ev);
		}
		if (peer_poll(&s, &got))
			continue;
		REQ(iwv_req_notify_cq(s.cq, 0) == 0, "req_notify_cq");
		if (peer_poll(&s, &got))
			continue;
		poll(p, 2, 100);
		if (iwv_get_cq_event(s.cch, &ecq, &cctx) == 0)
			iwv_ack_cq_events(ecq, 1);
	}
	pipe_put(l->up[1], (uint16_t)got);
	for (;;)
		pause();
}

/* ---------------------------------------------------------------------- */
/* The local side of the transfer cases                                    */
/* ---------------------------------------------------------------------- */

struct local {
	struct ih_side s;
	struct iwcm_id *listen, *id;
	struct iwv_mr *mr;
	uint8_t *mem; /* Write/Send source | Read sink | receive buffers */
	size_t len;
	struct region peer;
	pid_t pid;
	int count[WR_SLOTS];
	enum iwv_wc_opcode want[WR_SLOTS];
	bool posted[WR_SLOTS];
	bool sq_bad, rq_bad; /* an error completion was seen on that queue */
	int ncomp, sq_fail, rq_fail;
	int by_status[IWV_WC_GENERAL_ERR + 1];
	int stall_fd; /* the peer writes here once it has stopped */
	/* shared with the killer thread */
	atomic_int sq_ok, rq_ok, waiting, killed, alive_at_kill;
	int sq_ok_at_kill, rq_ok_at_kill;
};

static void local_on_wc(struct local *L, const struct iwv_wc *wc)
{
	uint64_t w = wc->wr_id;
	bool rq = w >= WR_RECV && w < WR_RECV + NRECV;

	REQ(w < WR_SLOTS && L->posted[w], "completion of wr_id %" PRIu64 ", never posted", w);
	REQ(++L->count[w] == 1, "wr_id %" PRIu64 " completed %d times", w, L->count[w]);
	REQ(wc->opcode == L->want[w], "wr_id %" PRIu64 ": opcode %d, posted as %d", w, wc->opcode,
	    L->want[w]);
	REQ((unsigned)wc->status <= IWV_WC_GENERAL_ERR, "wr_id %" PRIu64 ": status %d", w,
	    wc->status);
	L->ncomp++;
	L->by_status[wc->status]++;
	if (wc->status == IWV_WC_SUCCESS) {
		REQ(w < WR_LATE, "wr_id %" PRIu64 " posted after the end succeeded", w);
		REQ(!(rq ? L->rq_bad : L->sq_bad),
		    "wr_id %" PRIu64 " succeeded after an error completion on its queue", w);
		if (rq || wc->opcode == IWV_WC_RDMA_READ)
			REQ(wc->byte_len == WR_SIZE, "wr_id %" PRIu64 ": %u octets", w,
			    wc->byte_len);
		if (rq)
			atomic_fetch_add(&L->rq_ok, 1);
		else if (w < NSQ)
			atomic_fetch_add(&L->sq_ok, 1);
		return;
	}
	if (rq) {
		L->rq_bad = true;
		L->rq_fail++;
	} else if (w < WR_LATE) {
		REQ(w != WR_HELLO, "the first Write failed: %s", iwv_wc_status_str(wc->status));
		L->sq_bad = true;
		L->sq_fail++;
	}
}

/* Has the peer stopped (then it is time to kill it)?  Waits up to ms. */
static bool peer_stalled(struct local *L, int ms)
{
	struct pollfd p = {.fd = L->stall_fd, .events = POLLIN};

	return poll(&p, 1, ms) > 0;
}

static void kill_peer(struct local *L)
{
	int st;

	L->sq_ok_at_kill = atomic_load(&L->sq_ok);
	L->rq_ok_at_kill = atomic_load(&L->rq_ok);
	/* the peer must die of our signal, not of anything before it */
	atomic_store(&L->alive_at_kill, waitpid(L->pid, &st, WNOHANG) == 0);
	kill(L->pid, SIGKILL);
	atomic_store(&L->killed, 1);
}

/* Blocking variant: kill while the main thread sleeps in iwv_get_cq_event(). */
static void *killer_main(void *arg)
{
	struct local *L = arg;
	struct timespec ms = {.tv_nsec = 1000000};

	while (th_now_ms() < ih_deadline && !peer_stalled(L, 50))
		;
	/* the main thread cannot finish without the peer: it will be asleep */
	while (th_now_ms() < ih_deadline) {
		if (atomic_load(&L->waiting)) {
			kill_peer(L);
			break;
		}
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static void local_setup(struct local *L, enum role peer_role, struct link *lk)
{
	struct iwcm_conn_param cp = {0};
	struct iwcm_event *ev;
	const struct iwcm_conn_param *pp;
	uint8_t *rbuf;

	side_open(&L->s, false);
	L->len = (size_t)(2 * NOPS + NRECV) * WR_SIZE;
	L->mem = ih_map(L->len);
	memset(L->mem, 0xA5, (size_t)NOPS * WR_SIZE);
	L->mr = iwv_reg_mr(L->s.pd, L->mem, L->len, IWV_ACCESS_LOCAL_WRITE);
	REQ(L->mr, "iwv_reg_mr: %s", strerror(errno));
	rbuf = L->mem + (size_t)2 * NOPS * WR_SIZE;
	if (peer_role == PEER_SERVER) {
		REQ(iwcm_create_id(L->s.ech, &L->id, NULL, IWCM_PS_TCP) == 0, "create_id");
		resolve(&L->s, L->id, pipe_get(lk->up[0]));
	} else {
		uint16_t port;

		L->listen = listen_any(&L->s, &port);
		pipe_put(lk->down[1], port);
		ev = expect_event(&L->s, IWCM_EVENT_CONNECT_REQUEST);
		L->id = ev->id;
		pp = &ev->param.conn;
		REQ(pp->private_data && pp->private_data_len >= sizeof(L->peer), "no region");
		memcpy(&L->peer, pp->private_data, sizeof(L->peer));
		ack(ev);
	}
	make_qp(&L->s, L->id, NSQ + 8, NRECV);
	for (uint32_t j = 0; j < NRECV; j++) {
		L->posted[WR_RECV + j] = true;
		L->want[WR_RECV + j] = IWV_WC_RECV;
		post_recv1(L->id->qp, WR_RECV + j, rbuf + (size_t)j * WR_SIZE, WR_SIZE,
			   L->mr->lkey);
	}
	if (peer_role == PEER_SERVER) {
		REQ(iwcm_connect(L->id, &cp) == 0, "connect: %s", strerror(errno));
		ev = expect_event(&L->s, IWCM_EVENT_ESTABLISHED);
		pp = &ev->param.conn;
		REQ(pp->private_data && pp->private_data_len >= sizeof(L->peer), "no region");
		memcpy(&L->peer, pp->private_data, sizeof(L->peer));
		ack(ev);
	} else {
		REQ(iwcm_accept(L->id, &cp) == 0, "accept: %s", strerror(errno));
		ack(expect_event(&L->s, IWCM_EVENT_ESTABLISHED));
	}
	REQ(L->peer.magic == MAGIC, "bad region");
}

static void local_post_hello(struct local *L)
{
	struct iwv_sge sg = {.addr = (uintptr_t)L->mem, .length = 4096, .lkey = L->mr->lkey};
	struct iwv_send_wr wr = {.wr_id = WR_HELLO, .sg_list = &sg, .num_sge = 1}, *bad = NULL;
	int r;

	wr.opcode = IWV_WR_RDMA_WRITE;
	wr.send_flags = IWV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = L->peer.addr;
	wr.wr.rdma.rkey = L->peer.rkey;
	L->posted[WR_HELLO] = true;
	L->want[WR_HELLO] = IWV_WC_RDMA_WRITE;
	r = iwv_post_send(L->id->qp, &wr, &bad);
	REQ(r == 0, "post the first Write: %s", strerror(r));
}

/* Write, Send, Read, Write, ... of 1 MiB each, in one list. */
static void local_post_all(struct local *L)
{
	static struct iwv_send_wr wr[NSQ];
	static struct iwv_sge sg[NSQ];
	struct iwv_send_wr *bad = NULL;
	uint8_t *sink = L->mem + (size_t)NOPS * WR_SIZE;
	int r;

	memset(wr, 0, sizeof(wr));
	for (uint32_t i = 0; i < NSQ; i++) {
		uint32_t n = i / 3;

		sg[i].addr = (uintptr_t)(L->mem + (size_t)n * WR_SIZE);
		sg[i].length = WR_SIZE;
		sg[i].lkey = L->mr->lkey;
		wr[i].wr_id = i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IWV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = L->peer.addr + (uint64_t)n * WR_SIZE;
		wr[i].wr.rdma.rkey = L->peer.rkey;
		wr[i].next = i + 1 < NSQ ? &wr[i + 1] : NULL;
		switch (i % 3) {
		case 0:
			wr[i].opcode = IWV_WR_RDMA_WRITE;
			L->want[i] = IWV_WC_RDMA_WRITE;
			break;
		case 1:
			wr[i].opcode = IWV_WR_SEND;
			L->want[i] = IWV_WC_SEND;
			break;
		default:
			sg[i].addr = (uintptr_t)(sink + (size_t)n * WR_SIZE);
			wr[i].opcode = IWV_WR_RDMA_READ;
			L->want[i] = IWV_WC_RDMA_READ;
			break;
		}
		L->posted[i] = true;
	}
	r = iwv_post_send(L->id->qp, wr, &bad);
	REQ(r == 0, "post %d WRs: %s (bad wr %" PRIu64 ")", NSQ, strerror(r), bad ? bad->wr_id : 0);
}

static int local_poll(struct local *L)
{
	struct iwv_wc wc[64];
	int n = iwv_poll_cq(L->s.cq, 64, wc);

	REQ(n >= 0, "iwv_poll_cq: %d", n);
	for (int i = 0; i < n; i++)
		local_on_wc(L, &wc[i]);
	return n;
}

/* Every WR posted before the kill: the hello, NSQ sends and NRECV receives. */
#define ALL_POSTED (1 + NSQ + NRECV)

static void wait_busy(struct local *L)
{
	while (L->ncomp < ALL_POSTED) {
		ih_check_deadline("waiting for every completion");
		local_poll(L);
		if (!atomic_load(&L->killed) && peer_stalled(L, 0))
			kill_peer(L);
	}
}

static void wait_blocked(struct local *L)
{
	pthread_t t;

	ih_set_nonblock(L->s.cch->fd, false);
	REQ(pthread_create(&t, NULL, killer_main, L) == 0, "pthread_create");
	/* the waits below are bounded by this alarm, not by a deadline */
	alarm(WAIT_MS / 1000);
	while (L->ncomp < ALL_POSTED) {
		struct iwv_cq *ecq;
		void *cctx;
		int r;

		REQ(iwv_req_notify_cq(L->s.cq, 0) == 0, "req_notify_cq");
		if (local_poll(L))
			continue;
		atomic_store(&L->waiting, 1);
		r = iwv_get_cq_event(L->s.cch, &ecq, &cctx);
		atomic_store(&L->waiting, 0);
		REQ(r == 0, "iwv_get_cq_event: %s", strerror(errno));
		REQ(ecq == L->s.cq, "event of another CQ");
		iwv_ack_cq_events(ecq, 1);
	}
	pthread_join(t, NULL);
	alarm(0);
}

static void wait_disconnected(struct local *L, bool blocked)
{
	struct iwcm_event *ev;

	if (blocked) {
		ih_set_nonblock(L->s.ech->fd, false);
		alarm(WAIT_MS / 1000);
		REQ(iwcm_get_cm_event(L->s.ech, &ev) == 0, "iwcm_get_cm_event: %s",
		    strerror(errno));
		alarm(0);
		ih_set_nonblock(L->s.ech->fd, true);
	} else {
		ev = next_event(&L->s, "waiting for DISCONNECTED");
	}
	REQ(ev->event == IWCM_EVENT_DISCONNECTED && ev->id == L->id,
	    "expected DISCONNECTED, got %s (status %d)", iwcm_event_str(ev->event), ev->status);
	ack(ev);
}

/* After the end: every new WR is completed with a flush status before the post returns. */
static void post_after_end(struct local *L)
{
	struct iwv_sge sg[3];
	struct iwv_send_wr wr[3], *bad = NULL;
	struct iwv_wc wc[8];
	struct iwv_qp_attr qa;
	uint8_t *sink = L->mem + (size_t)NOPS * WR_SIZE;
	int r, n;

	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 3; i++) {
		sg[i].addr = (uintptr_t)(i == 2 ? sink : L->mem);
		sg[i].length = 4096;
		sg[i].lkey = L->mr->lkey;
	}
	for (int i = 0; i < 3; i++) {
		wr[i].wr_id = WR_LATE + (uint64_t)i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IWV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = L->peer.addr;
		wr[i].wr.rdma.rkey = L->peer.rkey;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
		L->posted[WR_LATE + i] = true;
	}
	wr[0].opcode = IWV_WR_RDMA_WRITE;
	L->want[WR_LATE] = IWV_WC_RDMA_WRITE;
	wr[1].opcode = IWV_WR_SEND;
	L->want[WR_LATE + 1] = IWV_WC_SEND;
	wr[2].opcode = IWV_WR_RDMA_READ;
	L->want[WR_LATE + 2] = IWV_WC_RDMA_READ;
	L->posted[WR_LATE + 3] = true;
	L->want[WR_LATE + 3] = IWV_WC_RECV;

	REQ(iwv_query_qp(L->id->qp, &qa, IWV_QP_STATE, NULL) == 0, "query_qp");
	REQ(qa.qp_state == IWV_QPS_ERR, "QP state %d after the peer died", qa.qp_state);
	r = iwv_post_send(L->id->qp, wr, &bad);
	REQ(r == 0, "post_send after the end: %s", strerror(r));
	post_recv1(L->id->qp, WR_LATE + 3, sink + 4096, 4096, L->mr->lkey);
	n = iwv_poll_cq(L->s.cq, 8, wc);
	REQ(n == 4, "%d completions right after posting 4 WRs to a dead QP", n);
	for (int i = 0; i < n; i++) {
		REQ(wc[i].status == IWV_WC_WR_FLUSH_ERR, "late wr_id %" PRIu64 ": %s", wc[i].wr_id,
		    iwv_wc_status_str(wc[i].status));
		local_on_wc(L, &wc[i]);
	}
	REQ(iwv_poll_cq(L->s.cq, 8, wc) == 0, "completions beyond the 4 late WRs");
}

static void local_close(struct local *L)
{
	iwcm_destroy_qp(L->id);
	REQ(iwcm_destroy_id(L->id) == 0, "destroy_id: %s", strerror(errno));
	if (L->listen)
		REQ(iwcm_destroy_id(L->listen) == 0, "destroy listen id: %s", strerror(errno));
	REQ(iwv_dereg_mr(L->mr) == 0, "dereg_mr");
	munmap(L->mem, L->len);
	ih_side_close(&L->s);
}

static void run_kill(enum role peer_role, bool blocked)
{
	struct local *L = calloc(1, sizeof(*L));
	struct link lk;
	int st;

	REQ(L, "calloc");
	ih_deadline = th_now_ms() + WAIT_MS;
	L->pid = fork_peer(&lk, peer_main, peer_role);
	L->stall_fd = lk.up[0];
	local_setup(L, peer_role, &lk);
	local_post_hello(L);
	/* the peer's Sends first, so that some receives succeed before the end */
	while (atomic_load(&L->rq_ok) < PEER_SENDS || L->count[WR_HELLO] == 0) {
		ih_check_deadline("waiting for the peer's Sends");
		local_poll(L);
	}
	local_post_all(L);
	if (blocked)
		wait_blocked(L);
	else
		wait_busy(L);

	REQ(atomic_load(&L->killed), "every WR completed, the peer was never killed");
	REQ(atomic_load(&L->alive_at_kill), "the peer had died before the kill");
	st = ih_reap_peer(L->pid);
	REQ(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "peer status %#x", st);
	/* one poll may reap more than PEER_STALL of them (a faster engine did) */
	REQ(pipe_get(L->stall_fd) >= PEER_STALL, "the peer stopped at the wrong place");
	for (uint32_t w = 0; w < WR_LATE; w++)
		REQ(!L->posted[w] || L->count[w] == 1, "wr_id %u completed %d times", w,
		    L->count[w]);
	fprintf(stderr,
		"peer %s, local %s: killed after %d+%d successes; SQ %d ok %d failed, RQ %d ok "
		"%d failed (%d flushed in all)\n",
		peer_role == PEER_SERVER ? "server" : "client", blocked ? "blocked" : "polling",
		L->sq_ok_at_kill, L->rq_ok_at_kill, atomic_load(&L->sq_ok), L->sq_fail,
		atomic_load(&L->rq_ok), L->rq_fail, L->by_status[IWV_WC_WR_FLUSH_ERR]);
	REQ(L->sq_fail > 0, "no send WR was cut short: the kill missed the transfer");
	REQ(atomic_load(&L->rq_ok) == PEER_SENDS && L->rq_fail == NRECV - PEER_SENDS,
	    "receives: %d ok, %d failed", atomic_load(&L->rq_ok), L->rq_fail);

	wait_disconnected(L, blocked);
	REQ(local_poll(L) == 0, "completions after all were accounted for");
	post_after_end(L);
	local_close(L);
	free(L);
}

/* ---------------------------------------------------------------------- */
/* MPA: a peer that accepts TCP and never answers the Request              */
/* ---------------------------------------------------------------------- */

static void mute_main(struct link *l, int wait_kill)
{
	static const char key[] = "MPA ID Req Frame";
	struct sockaddr_storage ss;
	socklen_t sl = th_loopback(AF_INET, 0, &ss);
	char buf[4096];
	size_t got = 0;
	int s, c, one = 1;

	s = socket(AF_INET, SOCK_STREAM, 0);
	REQ(s >= 0, "socket: %s", strerror(errno));
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	REQ(bind(s, (struct sockaddr *)&ss, sl) == 0, "bind: %s", strerror(errno));
	REQ(listen(s, 1) == 0, "listen: %s", strerror(errno));
	REQ(getsockname(s, (struct sockaddr *)&ss, &sl) == 0, "getsockname");
	pipe_put(l->up[1], ntohs(((struct sockaddr_in *)&ss)->sin_port));
	c = accept(s, NULL, NULL);
	REQ(c >= 0, "accept: %s", strerror(errno));
	while (got < sizeof(key) - 1) {
		ssize_t n = read(c, buf + got, sizeof(buf) - got);

		REQ(n > 0, "connection ended before the MPA Request (%zd)", n);
		got += (size_t)n;
	}
	REQ(memcmp(buf, key, sizeof(key) - 1) == 0, "not an MPA Request");
	if (wait_kill) {
		pipe_put(l->up[1], 1);
		for (;;)
			pause();
	}
	/* say nothing; leave when the initiator gives up */
	while (read(c, buf, sizeof(buf)) > 0)
		;
	_exit(0);
}

static void run_mpa(bool killed)
{
	struct sockaddr_storage dst;
	struct iwcm_options opt;
	struct iwcm_event *ev;
	struct iwv_wc wc[4];
	struct iwcm_id *id;
	struct iwv_mr *mr;
	struct ih_side s;
	struct link lk;
	uint8_t *buf;
	int st, n, seen = 0;
	uint64_t t_connect;
	pid_t pid;

	ih_deadline = th_now_ms() + WAIT_MS;
	pid = fork_peer(&lk, mute_main, killed);
	side_open(&s, false);
	buf = ih_map(8192);
	mr = iwv_reg_mr(s.pd, buf, 8192, IWV_ACCESS_LOCAL_WRITE);
	REQ(mr, "iwv_reg_mr: %s", strerror(errno));
	REQ(iwcm_create_id(s.ech, &id, NULL, IWCM_PS_TCP) == 0, "create_id");
	REQ(iwcm_get_options(id, &opt) == 0, "get_options");
	REQ(opt.timeout_ms > MPA_WAIT_MS, "default timeout %u", opt.timeout_ms);
	/* killed: a timer shorter than the wait would hide a lost connection that is ignored */
	opt.timeout_ms = killed ? 2 * MPA_WAIT_MS : MPA_TMO_MS;
	REQ(iwcm_set_options(id, &opt) == 0, "set_options: %s", strerror(errno));
	th_loopback(AF_INET, pipe_get(lk.up[0]), &dst);
	REQ(iwcm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) == 0, "resolve_addr");
	ack(expect_event(&s, IWCM_EVENT_ADDR_RESOLVED));
	REQ(iwcm_resolve_route(id, 2000) == 0, "resolve_route");
	ack(expect_event(&s, IWCM_EVENT_ROUTE_RESOLVED));
	make_qp(&s, id, 4, 4);
	post_recv1(id->qp, 1, buf, 4096, mr->lkey);
	{
		struct iwv_sge sg = {
			.addr = (uintptr_t)(buf + 4096), .length = 512, .lkey = mr->lkey};
		struct iwv_send_wr wr = {.wr_id = 2, .sg_list = &sg, .num_sge = 1}, *bad = NULL;

		wr.opcode = IWV_WR_SEND;
		wr.send_flags = IWV_SEND_SIGNALED;
		REQ(iwv_post_send(id->qp, &wr, &bad) == 0, "post_send before connect");
	}
	REQ(iwcm_connect(id, NULL) == 0, "connect: %s", strerror(errno));
	t_connect = th_now_ms();
	ih_deadline = t_connect + MPA_WAIT_MS;
	if (killed) {
		struct pollfd p[2] = {{.fd = lk.up[0], .events = POLLIN},
				      {.fd = s.ech->fd, .events = POLLIN}};

		/* until the peer has read the MPA Request (the CM calls make the progress) */
		for (;;) {
			REQ(iwcm_get_cm_event(s.ech, &ev) != 0 && errno == EAGAIN,
			    "connect ended before the kill");
			if (poll(p, 2, 50) > 0 && (p[0].revents & POLLIN))
				break;
			ih_check_deadline("waiting for the peer to read the MPA Request");
		}
		pipe_get(lk.up[0]);
		REQ(waitpid(pid, &st, WNOHANG) == 0, "the peer died on its own");
		kill(pid, SIGKILL);
	}
	ev = next_event(&s, killed ? "waiting for the failure after the kill"
				   : "waiting for the MPA timeout");
	fprintf(stderr, "MPA peer %s: %s, status %d, iw_err %d after %" PRIu64 " ms\n",
		killed ? "killed" : "silent", iwcm_event_str(ev->event), ev->status, ev->iw_err,
		th_now_ms() - t_connect);
	REQ(ev->event == IWCM_EVENT_UNREACHABLE || ev->event == IWCM_EVENT_CONNECT_ERROR,
	    "connect ended with %s (status %d)", iwcm_event_str(ev->event), ev->status);
	REQ(ev->id == id && ev->status < 0, "status %d", ev->status);
	if (killed)
		REQ(ev->status != -ETIMEDOUT, "the lost connection went unnoticed until the timer");
	ack(ev);
	/* the WRs posted before the connect are flushed, once each */
	ih_deadline = th_now_ms() + WAIT_MS;
	while (seen < 2) {
		ih_check_deadline("waiting for the flush of the early WRs");
		n = iwv_poll_cq(s.cq, 4, wc);
		REQ(n >= 0, "poll_cq");
		for (int i = 0; i < n; i++) {
			REQ(wc[i].wr_id == 1 || wc[i].wr_id == 2, "wr_id %" PRIu64, wc[i].wr_id);
			REQ(wc[i].status == IWV_WC_WR_FLUSH_ERR, "early WR: %s",
			    iwv_wc_status_str(wc[i].status));
			REQ(wc[i].opcode == (wc[i].wr_id == 1 ? IWV_WC_RECV : IWV_WC_SEND),
			    "early WR opcode %d", wc[i].opcode);
			seen |= (int)wc[i].wr_id;
		}
	}
	REQ(seen == 3 && iwv_poll_cq(s.cq, 4, wc) == 0, "early WRs completed more than once");
	iwcm_destroy_qp(id);
	REQ(iwcm_destroy_id(id) == 0, "destroy_id: %s", strerror(errno));
	REQ(iwv_dereg_mr(mr) == 0, "dereg_mr");
	munmap(buf, 8192);
	ih_side_close(&s);
	st = ih_reap_peer(pid);
	if (killed)
		REQ(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "peer status %#x", st);
	else
		REQ(WIFEXITED(st) && WEXITSTATUS(st) == 0, "peer status %#x", st);
}

/* ---------------------------------------------------------------------- */

START_TEST(peer_server_killed_local_polling)
{
	run_kill(PEER_SERVER, false);
}
END_TEST

START_TEST(peer_server_killed_local_blocked_in_get_cq_event)
{
	run_kill(PEER_SERVER, true);
}
END_TEST

START_TEST(peer_client_killed_local_polling)
{
	run_kill(PEER_CLIENT, false);
}
END_TEST

START_TEST(peer_client_killed_local_blocked_in_get_cq_event)
{
	run_kill(PEER_CLIENT, true);
}
END_TEST

START_TEST(mpa_silent_peer_fails_connect_within_timeout)
{
	run_mpa(false);
}
END_TEST

START_TEST(mpa_peer_killed_fails_connect_at_once)
{
	run_mpa(true);
}
END_TEST

static Suite *integ_kill_suite(void)
{
	Suite *s = suite_create("integ_kill");
	TCase *tc = tcase_create("transfer");

	tcase_set_timeout(tc, TEST_SECS);
	tcase_add_test(tc, peer_server_killed_local_polling);
	tcase_add_test(tc, peer_server_killed_local_blocked_in_get_cq_event);
	tcase_add_test(tc, peer_client_killed_local_polling);
	tcase_add_test(tc, peer_client_killed_local_blocked_in_get_cq_event);
	suite_add_tcase(s, tc);
	tc = tcase_create("mpa");
	tcase_set_timeout(tc, TEST_SECS);
	tcase_add_test(tc, mpa_silent_peer_fails_connect_within_timeout);
	tcase_add_test(tc, mpa_peer_killed_fails_connect_at_once);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(integ_kill_suite)
