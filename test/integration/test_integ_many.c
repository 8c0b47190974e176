/* SPDX-License-Identifier: MIT */
/*
 * test_integ_many.c - 64 connections at once between two processes, each
 * moving 64 MiB with a mix of RDMA Writes, Sends and RDMA Reads, checked end
 * to end with CRC32c.
 *
 * Theory of operation.  The test forks a server process (its own context and
 * event channel, opened after the fork) that listens on 127.0.0.1:0 and tells
 * the client its port through a pipe.  The client opens its 64 connections at
 * once: every id is resolved and connected before the first ESTABLISHED is
 * waited for.
 *
 * Each QP's 64 MiB stream is cut into 256 KiB chunks; chunk k of QP q moves
 * by RDMA Write (client -> server ring), Send (client -> a posted receive) or
 * RDMA Read (server ring -> client) as (q + k) % 3 says, so every connection
 * carries all three operations interleaved, with up to DEPTH chunks in
 * flight.  The octets of a chunk are a function of (seed, q, offset), so both
 * sides can generate what they send without holding 4 GiB: each side has a
 * ring of SLOTS chunk slots per QP and chunk k uses slot k % SLOTS.
 *
 * Slots are reused under credits.  Every Send of the client (data chunk,
 * control message, final message) carries a header saying "chunks < done
 * have completed here"; as RDMAP delivers a Send only after every earlier
 * message of the connection has been placed, the server may then checksum the
 * Written chunks below `done`, refill the slots of the Read chunks up to
 * done + SLOTS, and answer with a credit message ("post chunks < credit").
 * The server answers every client Send exactly once, so the client never has
 * more unanswered Sends than the server has receives posted (NRECV), and it
 * never overruns a receive queue on either side.
 *
 * Checksums.  Each side keeps, per QP, a 64-bit sum over chunks of
 * mix(k, crc32c(chunk k as this side saw it)): what it generated for the
 * chunks it sent, what arrived for the chunks it received.  The sums are
 * equal only if every chunk arrived intact and in its place; the client's
 * final Send carries its sum and its Send count, the server's last answer
 * carries its own, and both sides compare.  Then the client disconnects every
 * QP, both sides must see DISCONNECTED on all 64 and exactly NRECV flushed
 * receives per QP (nothing else), and every destructor must return 0.
 *
 * Every wait has a deadline; the peer also has alarm() and dies with its
 * parent.  The peer reports failures on stderr and by its exit status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
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
#include <iwarp/mpa.h>

#include "ih.h"
#include "th.h"

#define NQP	  64
#define CHUNK	  (256u * 1024u)
#define DEPTH	  8  /* chunk WRs in flight per QP */
#define SLOTS	  16 /* chunk slots per QP and side (> DEPTH: slots wait for credits) */
#define NRECV	  8  /* receives each side keeps posted per QP */
#define HDR	  64 /* message header / control message size */
#define MAGIC	  0x1A7E6A11u
#define MIB	  (1024u * 1024u)
#define TEST_SECS 840		 /* Check's bound per test case (meson allows 900) */
#define WAIT_MS	  (600u * 1000u) /* deadline of a whole transfer */

enum op { OP_WRITE, OP_SEND, OP_READ };

enum msg_type { M_DATA = 1, M_CTRL, M_FIN, M_CREDIT, M_FIN_ACK };

/* What travels in a Send between the two processes of this test (same host, host order). */
struct msg {
	uint32_t magic;
	uint32_t type;
	uint32_t qp;
	uint32_t chunk;	 /* M_DATA: the chunk that follows the header */
	uint32_t done;	 /* client: chunks < done have completed at the client */
	uint32_t credit; /* M_CREDIT: the client may post chunks < credit */
	uint32_t count;	 /* M_FIN: Sends of the client; M_FIN_ACK: Sends the server got */
	uint32_t pad;
	uint64_t sum;
};

/* Private data: the client's Request names its QP, the server's Reply its ring. */
struct hello {
	uint32_t magic;
	uint32_t qp;
	uint64_t ring;
	uint32_t rkey;
	uint32_t pad;
};

enum wr_kind { K_CHUNK = 1, K_MSG, K_RECV };

#define WRID(q, kind, idx) (((uint64_t)(q) << 40) | ((uint64_t)(kind) << 32) | (uint32_t)(idx))
#define WR_QP(id)	   ((uint32_t)((id) >> 40))
#define WR_KIND(id)	   ((unsigned)(((id) >> 32) & 0xff))
#define WR_IDX(id)	   ((uint32_t)(id))

static uint64_t g_seed;
static uint32_t g_nchunk; /* chunks per QP */

/* ---------------------------------------------------------------------- */
/* Data                                                                    */
/* ---------------------------------------------------------------------- */

static enum op op_of(uint32_t qi, uint32_t k)
{
	return (enum op)((qi + k) % 3);
}

static uint32_t next_send_from(uint32_t qi, uint32_t k)
{
	while (k < g_nchunk && op_of(qi, k) != OP_SEND)
		k++;
	return k;
}

/* The octets at `off` of QP qi's stream: a hash of (seed, qi, word index). */
static void gen_fill(void *buf, uint32_t qi, uint64_t off, size_t len)
{
	uint64_t *w = buf;
	uint64_t base = g_seed ^ ((uint64_t)(qi + 1) * 0xD1B54A32D192ED03ull);
	uint64_t idx = off / 8;

	for (size_t i = 0; i < len / 8; i++) {
		uint64_t x = base + (idx + i) * 0x9E3779B97F4A7C15ull;

		x ^= x >> 32;
		x *= 0xBF58476D1CE4E5B9ull;
		x ^= x >> 29;
		w[i] = x;
	}
}

/* A chunk's contribution to the per-QP sum: depends on its place and its CRC. */
static uint64_t chunk_mix(uint32_t k, const void *buf)
{
	uint64_t x = ((uint64_t)k << 32) | mpa_crc32c(buf, CHUNK);

	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* ---------------------------------------------------------------------- */
/* One process's verbs objects and its event loop                          */
/* ---------------------------------------------------------------------- */

static void side_open(struct ih_side *s, int cqe)
{
	struct iwv_device **devs = iwv_get_device_list(NULL);
	struct iwv_context *ctx;

	REQ(devs && devs[0], "no device");
	ctx = iwv_open_device(devs[0]);
	iwv_free_device_list(devs);
	REQ(ctx, "iwv_open_device: %s", strerror(errno));
	ih_side_init(s, ctx, cqe);
}

static int side_poll_cq(struct ih_side *s)
{
	struct iwv_wc wc[64];
	int n = iwv_poll_cq(s->cq, 64, wc);

	REQ(n >= 0, "iwv_poll_cq: %d", n);
	for (int i = 0; i < n; i++)
		s->on_wc(s->arg, &wc[i]);
	return n;
}

/*
 * One round: completions, then CM events.  When neither had anything, arm
 * the CQ, look once more, and sleep on both channel fds (each becomes
 * readable on its own events and, without an engine thread, on socket
 * activity that the next call turns into progress).
 */
static void side_step(struct ih_side *s)
{
	struct iwcm_event *ev;
	struct pollfd p[2];
	int n = side_poll_cq(s), nev = 0;

	while (iwcm_get_cm_event(s->ech, &ev) == 0) {
		s->on_ev(s->arg, ev);
		REQ(iwcm_ack_cm_event(ev) == 0, "iwcm_ack_cm_event");
		nev++;
	}
	REQ(errno == EAGAIN, "iwcm_get_cm_event: %s", strerror(errno));
	if (n || nev)
		return;
	REQ(iwv_req_notify_cq(s->cq, 0) == 0, "iwv_req_notify_cq");
	if (side_poll_cq(s))
		return;
	p[0].fd = s->cch->fd;
	p[0].events = POLLIN;
	p[1].fd = s->ech->fd;
	p[1].events = POLLIN;
	/* the timeout only brings the deadline check back */
	REQ(poll(p, 2, 100) >= 0 || errno == EINTR, "poll: %s", strerror(errno));
	if (p[0].revents & POLLIN) {
		struct iwv_cq *ecq;
		void *cctx;

		if (iwv_get_cq_event(s->cch, &ecq, &cctx) == 0) {
			REQ(ecq == s->cq, "event for an unknown CQ");
			iwv_ack_cq_events(ecq, 1);
		} else {
			REQ(errno == EAGAIN, "iwv_get_cq_event: %s", strerror(errno));
		}
	}
}

static void post_inline_msg(struct iwv_qp *qp, uint64_t wr_id, const struct msg *m)
{
	uint8_t buf[HDR] = {0};
	struct iwv_sge sg = {.addr = (uintptr_t)buf, .length = HDR};
	struct iwv_send_wr wr = {0}, *bad = NULL;
	int r;

	memcpy(buf, m, sizeof(*m));
	wr.wr_id = wr_id;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IWV_WR_SEND;
	wr.send_flags = IWV_SEND_SIGNALED | IWV_SEND_INLINE;
	r = iwv_post_send(qp, &wr, &bad);
	REQ(r == 0, "post inline Send: %s", strerror(r));
}

static void read_msg(struct msg *m, const void *buf, uint32_t qi)
{
	memcpy(m, buf, sizeof(*m));
	REQ(m->magic == MAGIC && m->qp == qi, "QP %u: bad message (magic %#x, qp %u)", qi, m->magic,
	    m->qp);
}

/* ---------------------------------------------------------------------- */
/* Server                                                                  */
/* ---------------------------------------------------------------------- */

struct srv_qp {
	uint32_t qi;
	struct iwcm_id *id;
	struct iwv_mr *mr;
	uint8_t *mem; /* ring SLOTS*CHUNK | receive payloads NRECV*CHUNK | headers NRECV*HDR */
	size_t len;
	uint32_t released;  /* chunks < released are accounted; their slots are free */
	uint32_t filled;    /* Read chunks < filled are in their slots */
	uint32_t next_send; /* the data Send expected next */
	uint32_t recvs, replies, replies_done, flushed;
	uint64_t sum;
	bool fin, estab, disc;
};

struct srv {
	struct ih_side s;
	struct iwcm_id *listen;
	struct srv_qp q[NQP];
	int conns, estab;
};

static uint8_t *srv_slot(struct srv_qp *q, uint32_t k)
{
	return q->mem + (size_t)(k % SLOTS) * CHUNK;
}

static uint8_t *srv_rbuf(struct srv_qp *q, uint32_t b)
{
	return q->mem + (size_t)(SLOTS + b) * CHUNK;
}

static uint8_t *srv_rhdr(struct srv_qp *q, uint32_t b)
{
	return q->mem + (size_t)(SLOTS + NRECV) * CHUNK + (size_t)b * HDR;
}

static void srv_post_recv(struct srv_qp *q, uint32_t b)
{
	struct iwv_sge sg[2] = {
		{.addr = (uintptr_t)srv_rhdr(q, b), .length = HDR, .lkey = q->mr->lkey},
		{.addr = (uintptr_t)srv_rbuf(q, b), .length = CHUNK, .lkey = q->mr->lkey},
	};
	struct iwv_recv_wr wr = {.wr_id = WRID(q->qi, K_RECV, b), .sg_list = sg, .num_sge = 2};
	struct iwv_recv_wr *bad = NULL;
	int r = iwv_post_recv(q->id->qp, &wr, &bad);

	REQ(r == 0, "QP %u: iwv_post_recv: %s", q->qi, strerror(r));
}

/* The client has completed every chunk below `done`: account the Writes there, prepare Reads. */
static void srv_done(struct srv_qp *q, uint32_t done)
{
	uint32_t top;

	REQ(done >= q->released && done <= g_nchunk, "QP %u: done %u after %u", q->qi, done,
	    q->released);
	REQ(q->next_send >= done, "QP %u: client completed chunk %u, a Send never received", q->qi,
	    q->next_send);
	for (uint32_t j = q->released; j < done; j++)
		if (op_of(q->qi, j) == OP_WRITE)
			q->sum += chunk_mix(j, srv_slot(q, j));
	q->released = done;
	top = done + SLOTS < g_nchunk ? done + SLOTS : g_nchunk;
	for (uint32_t j = q->filled; j < top; j++) {
		if (op_of(q->qi, j) != OP_READ)
			continue;
		gen_fill(srv_slot(q, j), q->qi, (uint64_t)j * CHUNK, CHUNK);
		q->sum += chunk_mix(j, srv_slot(q, j));
	}
	if (top > q->filled)
		q->filled = top;
}

static void srv_on_recv(struct srv_qp *q, const struct iwv_wc *wc)
{
	uint32_t b = WR_IDX(wc->wr_id);
	struct msg m, r = {.magic = MAGIC, .qp = q->qi};

	REQ(b < NRECV, "QP %u: receive %u", q->qi, b);
	if (wc->status == IWV_WC_WR_FLUSH_ERR && q->fin) {
		/* the receives still posted when the client disconnected */
		q->flushed++;
		return;
	}
	REQ(wc->status == IWV_WC_SUCCESS, "QP %u: receive: %s (vendor_err %u)", q->qi,
	    iwv_wc_status_str(wc->status), wc->vendor_err);
	REQ(wc->opcode == IWV_WC_RECV, "QP %u: receive opcode %d", q->qi, wc->opcode);
	REQ(!q->fin, "QP %u: a Send after the final one", q->qi);
	read_msg(&m, srv_rhdr(q, b), q->qi);
	switch (m.type) {
	case M_DATA:
		REQ(wc->byte_len == HDR + CHUNK, "QP %u: data Send of %u octets", q->qi,
		    wc->byte_len);
		REQ(m.chunk == q->next_send, "QP %u: data Send of chunk %u, expected %u", q->qi,
		    m.chunk, q->next_send);
		q->sum += chunk_mix(m.chunk, srv_rbuf(q, b));
		q->next_send = next_send_from(q->qi, m.chunk + 1);
		break;
	case M_CTRL:
	case M_FIN:
		REQ(wc->byte_len == HDR, "QP %u: control Send of %u octets", q->qi, wc->byte_len);
		break;
	default:
		REQ(0, "QP %u: message type %u", q->qi, m.type);
	}
	srv_done(q, m.done);
	q->recvs++;
	srv_post_recv(q, b);
	if (m.type == M_FIN) {
		REQ(m.done == g_nchunk && q->next_send == g_nchunk, "QP %u: FIN before the end",
		    q->qi);
		REQ(m.count == q->recvs, "QP %u: client sent %u Sends, %u arrived", q->qi, m.count,
		    q->recvs);
		REQ(m.sum == q->sum,
		    "QP %u: checksums differ: client %016" PRIx64 " server %016" PRIx64, q->qi,
		    m.sum, q->sum);
		r.type = M_FIN_ACK;
		r.count = q->recvs;
		r.sum = q->sum;
		q->fin = true;
	} else {
		r.type = M_CREDIT;
		r.credit = m.done + SLOTS < g_nchunk ? m.done + SLOTS : g_nchunk;
	}
	post_inline_msg(q->id->qp, WRID(q->qi, K_MSG, q->replies), &r);
	q->replies++;
}

static void srv_on_wc(void *arg, const struct iwv_wc *wc)
{
	struct srv *sv = arg;
	uint32_t qi = WR_QP(wc->wr_id);
	struct srv_qp *q;

	REQ(qi < NQP && sv->q[qi].id, "completion for unknown wr_id %#" PRIx64, wc->wr_id);
	q = &sv->q[qi];
	switch (WR_KIND(wc->wr_id)) {
	case K_RECV:
		srv_on_recv(q, wc);
		break;
	case K_MSG:
		REQ(wc->status == IWV_WC_SUCCESS, "QP %u: reply: %s", qi,
		    iwv_wc_status_str(wc->status));
		REQ(wc->opcode == IWV_WC_SEND, "QP %u: reply opcode %d", qi, wc->opcode);
		q->replies_done++;
		break;
	default:
		REQ(0, "unknown wr_id %#" PRIx64, wc->wr_id);
	}
}

static void srv_connect_request(struct srv *sv, struct iwcm_event *ev)
{
	const struct iwcm_conn_param *cp = &ev->param.conn;
	struct iwv_qp_init_attr qa = {0};
	struct iwcm_conn_param acc = {0};
	struct hello h, w = {.magic = MAGIC};
	struct srv_qp *q;

	REQ(ev->listen_id == sv->listen, "CONNECT_REQUEST from another listener");
	REQ(cp->private_data && cp->private_data_len >= sizeof(h), "no hello (%u octets)",
	    cp->private_data_len);
	memcpy(&h, cp->private_data, sizeof(h));
	REQ(h.magic == MAGIC && h.qp < NQP && !sv->q[h.qp].id, "bad hello (qp %u)", h.qp);
	q = &sv->q[h.qp];
	q->qi = h.qp;
	q->id = ev->id;
	q->id->context = q;
	q->len = (size_t)(SLOTS + NRECV) * CHUNK + (size_t)NRECV * HDR;
	q->mem = ih_map(q->len);
	q->mr = iwv_reg_mr(sv->s.pd, q->mem, q->len,
			   IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE |
				   IWV_ACCESS_REMOTE_READ);
	REQ(q->mr, "iwv_reg_mr: %s", strerror(errno));
	q->next_send = next_send_from(q->qi, 0);
	srv_done(q, 0); /* the first SLOTS chunks' Reads are ready before the client can ask */
	qa.send_cq = sv->s.cq;
	qa.recv_cq = sv->s.cq;
	qa.qp_type = IWV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 2;
	qa.cap.max_inline_data = HDR;
	REQ(iwcm_create_qp(ev->id, sv->s.pd, &qa) == 0, "iwcm_create_qp: %s", strerror(errno));
	for (uint32_t b = 0; b < NRECV; b++)
		srv_post_recv(q, b);
	w.qp = q->qi;
	w.ring = (uintptr_t)q->mem;
	w.rkey = q->mr->rkey;
	acc.private_data = &w;
	acc.private_data_len = sizeof(w);
	REQ(iwcm_accept(ev->id, &acc) == 0, "iwcm_accept: %s", strerror(errno));
	sv->conns++;
}

static void srv_on_ev(void *arg, struct iwcm_event *ev)
{
	struct srv *sv = arg;
	struct srv_qp *q = ev->id->context;

	switch (ev->event) {
	case IWCM_EVENT_CONNECT_REQUEST:
		srv_connect_request(sv, ev);
		break;
	case IWCM_EVENT_ESTABLISHED:
		REQ(q && !q->estab, "unexpected ESTABLISHED");
		q->estab = true;
		sv->estab++;
		break;
	case IWCM_EVENT_DISCONNECTED:
		REQ(q && q->estab && !q->disc, "unexpected DISCONNECTED");
		REQ(q->fin, "QP %u: DISCONNECTED before the final message (status %d, iw_err %d)",
		    q->qi, ev->status, ev->iw_err);
		q->disc = true;
		break;
	default:
		REQ(0, "server: unexpected event %s (status %d)", iwcm_event_str(ev->event),
		    ev->status);
	}
}

static bool srv_all_done(struct srv *sv)
{
	if (sv->conns < NQP)
		return false;
	for (int i = 0; i < NQP; i++) {
		struct srv_qp *q = &sv->q[i];

		if (!q->disc || q->flushed < NRECV || q->replies_done < q->replies)
			return false;
	}
	return true;
}

static void run_server(int port_fd)
{
	struct srv *sv = calloc(1, sizeof(*sv));
	struct sockaddr_in sin = {.sin_family = AF_INET};
	uint16_t port;

	REQ(sv, "calloc");
	side_open(&sv->s, 8192);
	sv->s.on_wc = srv_on_wc;
	sv->s.on_ev = srv_on_ev;
	sv->s.arg = sv;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	REQ(iwcm_create_id(sv->s.ech, &sv->listen, NULL, IWCM_PS_TCP) == 0, "create_id");
	REQ(iwcm_bind_addr(sv->listen, (struct sockaddr *)&sin) == 0, "bind: %s", strerror(errno));
	REQ(iwcm_listen(sv->listen, 2 * NQP) == 0, "listen: %s", strerror(errno));
	port = iwcm_get_src_port(sv->listen);
	REQ(port != 0, "no port");
	REQ(write(port_fd, &port, sizeof(port)) == sizeof(port), "pipe: %s", strerror(errno));
	close(port_fd);

	while (!srv_all_done(sv)) {
		ih_check_deadline("serving");
		side_step(&sv->s);
	}
	/* Nothing else may complete: every WR was accounted for above. */
	REQ(side_poll_cq(&sv->s) == 0, "extra completions");
	for (int i = 0; i < NQP; i++) {
		struct srv_qp *q = &sv->q[i];

		iwcm_destroy_qp(q->id);
		REQ(iwcm_destroy_id(q->id) == 0, "destroy_id: %s", strerror(errno));
		REQ(iwv_dereg_mr(q->mr) == 0, "dereg_mr");
		munmap(q->mem, q->len);
	}
	REQ(iwcm_destroy_id(sv->listen) == 0, "destroy listen id: %s", strerror(errno));
	ih_side_close(&sv->s);
	free(sv);
}

/* ---------------------------------------------------------------------- */
/* Client                                                                  */
/* ---------------------------------------------------------------------- */

struct cli_qp {
	uint32_t qi;
	struct iwcm_id *id;
	struct iwv_mr *mr;
	uint8_t *mem; /* ring SLOTS*CHUNK | Send headers SLOTS*HDR | receives NRECV*HDR */
	size_t len;
	uint64_t ring; /* the server's */
	uint32_t rkey;
	uint32_t next;	     /* next chunk to post */
	uint32_t done;	     /* chunks < done completed and accounted */
	uint32_t inflight;   /* chunk WRs posted, not completed */
	uint32_t credit;     /* chunks < credit may be posted */
	uint32_t unanswered; /* Sends without their answer yet */
	uint32_t sent_done;  /* `done` of the last header sent */
	uint32_t sends, msgs, msgs_done, replies, flushed;
	uint8_t cdone[SLOTS]; /* completed, waiting for an earlier chunk to be accounted */
	uint64_t sum;
	bool connected, estab, fin_sent, finished, disc;
};

struct cli {
	struct ih_side s;
	struct cli_qp q[NQP];
	struct sockaddr_in dst;
	int connects, estab, finished, disc;
};

static uint8_t *cli_slot(struct cli_qp *q, uint32_t k)
{
	return q->mem + (size_t)(k % SLOTS) * CHUNK;
}

static uint8_t *cli_shdr(struct cli_qp *q, uint32_t k)
{
	return q->mem + (size_t)SLOTS * CHUNK + (size_t)(k % SLOTS) * HDR;
}

static uint8_t *cli_rbuf(struct cli_qp *q, uint32_t b)
{
	return q->mem + (size_t)SLOTS * CHUNK + (size_t)SLOTS * HDR + (size_t)b * HDR;
}

static void cli_post_recv(struct cli_qp *q, uint32_t b)
{
	struct iwv_sge sg = {.addr = (uintptr_t)cli_rbuf(q, b), .length = HDR, .lkey = q->mr->lkey};
	struct iwv_recv_wr wr = {.wr_id = WRID(q->qi, K_RECV, b), .sg_list = &sg, .num_sge = 1};
	struct iwv_recv_wr *bad = NULL;
	int r = iwv_post_recv(q->id->qp, &wr, &bad);

	REQ(r == 0, "QP %u: iwv_post_recv: %s", q->qi, strerror(r));
}

static void cli_post_chunk(struct cli_qp *q)
{
	uint32_t k = q->next;
	uint8_t *slot = cli_slot(q, k);
	struct iwv_sge sg[2] = {{.addr = (uintptr_t)slot, .length = CHUNK, .lkey = q->mr->lkey}};
	struct iwv_send_wr wr = {0}, *bad = NULL;
	int r;

	wr.wr_id = WRID(q->qi, K_CHUNK, k);
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.send_flags = IWV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = q->ring + (uint64_t)(k % SLOTS) * CHUNK;
	wr.wr.rdma.rkey = q->rkey;
	switch (op_of(q->qi, k)) {
	case OP_WRITE:
		gen_fill(slot, q->qi, (uint64_t)k * CHUNK, CHUNK);
		wr.opcode = IWV_WR_RDMA_WRITE;
		break;
	case OP_SEND: {
		struct msg m = {.magic = MAGIC, .type = M_DATA, .qp = q->qi, .chunk = k};

		gen_fill(slot, q->qi, (uint64_t)k * CHUNK, CHUNK);
		m.done = q->done;
		memset(cli_shdr(q, k), 0, HDR);
		memcpy(cli_shdr(q, k), &m, sizeof(m));
		sg[1] = sg[0];
		sg[0].addr = (uintptr_t)cli_shdr(q, k);
		sg[0].length = HDR;
		wr.num_sge = 2;
		wr.opcode = IWV_WR_SEND;
		q->sent_done = q->done;
		q->unanswered++;
		q->sends++;
		break;
	}
	case OP_READ:
		wr.opcode = IWV_WR_RDMA_READ;
		break;
	}
	r = iwv_post_send(q->id->qp, &wr, &bad);
	REQ(r == 0, "QP %u: post chunk %u: %s", q->qi, k, strerror(r));
	q->next++;
	q->inflight++;
}

static void cli_post_msg(struct cli_qp *q, enum msg_type type)
{
	struct msg m = {.magic = MAGIC, .type = type, .qp = q->qi, .done = q->done};

	if (type == M_FIN) {
		m.sum = q->sum;
		m.count = q->sends + 1;
	}
	post_inline_msg(q->id->qp, WRID(q->qi, K_MSG, q->msgs), &m);
	q->sent_done = q->done;
	q->unanswered++;
	q->sends++;
	q->msgs++;
}

/* Post what the window, the slots and the credits allow; tell the server when it must know. */
static void cli_drive(struct cli_qp *q)
{
	if (!q->estab || q->fin_sent)
		return;
	while (q->next < g_nchunk && q->next < q->credit && q->inflight < DEPTH &&
	       q->next < q->done + SLOTS) {
		if (op_of(q->qi, q->next) == OP_SEND && q->unanswered >= NRECV)
			break;
		cli_post_chunk(q);
	}
	if (q->unanswered >= NRECV)
		return;
	if (q->done == g_nchunk) {
		cli_post_msg(q, M_FIN);
		q->fin_sent = true;
	} else if (q->next >= q->credit && q->done > q->sent_done)
		cli_post_msg(q, M_CTRL); /* stalled on credit: report progress */
}

static void cli_on_chunk(struct cli_qp *q, const struct iwv_wc *wc)
{
	uint32_t k = WR_IDX(wc->wr_id);
	enum op op = op_of(q->qi, k);
	static const enum iwv_wc_opcode want[] = {
		[OP_WRITE] = IWV_WC_RDMA_WRITE,
		[OP_SEND] = IWV_WC_SEND,
		[OP_READ] = IWV_WC_RDMA_READ,
	};

	REQ(wc->status == IWV_WC_SUCCESS, "QP %u chunk %u: %s (vendor_err %u)", q->qi, k,
	    iwv_wc_status_str(wc->status), wc->vendor_err);
	REQ(wc->opcode == want[op], "QP %u chunk %u: opcode %d", q->qi, k, wc->opcode);
	REQ(k >= q->done && k < q->next && !q->cdone[k % SLOTS],
	    "QP %u: completion of chunk %u (window %u..%u) twice or out of the blue", q->qi, k,
	    q->done, q->next);
	if (op == OP_READ)
		REQ(wc->byte_len == CHUNK, "QP %u chunk %u: Read of %u octets", q->qi, k,
		    wc->byte_len);
	q->cdone[k % SLOTS] = 1;
	q->inflight--;
	while (q->done < q->next && q->cdone[q->done % SLOTS]) {
		q->cdone[q->done % SLOTS] = 0;
		q->sum += chunk_mix(q->done, cli_slot(q, q->done));
		q->done++;
	}
}

static void cli_on_recv(struct cli *c, struct cli_qp *q, const struct iwv_wc *wc)
{
	uint32_t b = WR_IDX(wc->wr_id);
	struct msg m;

	REQ(b < NRECV, "QP %u: receive %u", q->qi, b);
	if (wc->status == IWV_WC_WR_FLUSH_ERR && q->finished) {
		q->flushed++;
		return;
	}
	REQ(wc->status == IWV_WC_SUCCESS, "QP %u: receive: %s (vendor_err %u)", q->qi,
	    iwv_wc_status_str(wc->status), wc->vendor_err);
	REQ(wc->opcode == IWV_WC_RECV && wc->byte_len == HDR, "QP %u: receive opcode %d, %u octets",
	    q->qi, wc->opcode, wc->byte_len);
	REQ(!q->finished, "QP %u: an answer after the last one", q->qi);
	read_msg(&m, cli_rbuf(q, b), q->qi);
	REQ(q->unanswered > 0, "QP %u: an answer to nothing", q->qi);
	q->unanswered--;
	q->replies++;
	switch (m.type) {
	case M_CREDIT:
		REQ(m.credit >= q->credit && m.credit <= g_nchunk, "QP %u: credit %u after %u",
		    q->qi, m.credit, q->credit);
		q->credit = m.credit;
		break;
	case M_FIN_ACK:
		REQ(q->fin_sent && q->unanswered == 0, "QP %u: FIN_ACK before FIN", q->qi);
		REQ(m.count == q->sends, "QP %u: server got %u Sends, client sent %u", q->qi,
		    m.count, q->sends);
		REQ(m.sum == q->sum,
		    "QP %u: checksums differ: client %016" PRIx64 " server %016" PRIx64, q->qi,
		    q->sum, m.sum);
		q->finished = true;
		c->finished++;
		break;
	default:
		REQ(0, "QP %u: answer type %u", q->qi, m.type);
	}
	cli_post_recv(q, b);
}

static void cli_on_wc(void *arg, const struct iwv_wc *wc)
{
	struct cli *c = arg;
	uint32_t qi = WR_QP(wc->wr_id);
	struct cli_qp *q;

	REQ(qi < NQP, "completion for unknown wr_id %#" PRIx64, wc->wr_id);
	q = &c->q[qi];
	switch (WR_KIND(wc->wr_id)) {
	case K_CHUNK:
		cli_on_chunk(q, wc);
		break;
	case K_MSG:
		REQ(wc->status == IWV_WC_SUCCESS && wc->opcode == IWV_WC_SEND,
		    "QP %u: message: %s, opcode %d", qi, iwv_wc_status_str(wc->status), wc->opcode);
		q->msgs_done++;
		break;
	case K_RECV:
		cli_on_recv(c, q, wc);
		break;
	default:
		REQ(0, "unknown wr_id %#" PRIx64, wc->wr_id);
	}
}

static void cli_route_resolved(struct cli *c, struct cli_qp *q)
{
	struct iwv_qp_init_attr qa = {0};
	struct iwcm_conn_param cp = {0};
	struct hello h = {.magic = MAGIC, .qp = q->qi};

	q->len = (size_t)SLOTS * CHUNK + (size_t)(SLOTS + NRECV) * HDR;
	q->mem = ih_map(q->len);
	q->mr = iwv_reg_mr(c->s.pd, q->mem, q->len, IWV_ACCESS_LOCAL_WRITE);
	REQ(q->mr, "iwv_reg_mr: %s", strerror(errno));
	qa.send_cq = c->s.cq;
	qa.recv_cq = c->s.cq;
	qa.qp_type = IWV_QPT_RC;
	qa.cap.max_send_wr = DEPTH + NRECV + 8;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = HDR;
	REQ(iwcm_create_qp(q->id, c->s.pd, &qa) == 0, "iwcm_create_qp: %s", strerror(errno));
	/* the answers to the first Sends may come at once */
	for (uint32_t b = 0; b < NRECV; b++)
		cli_post_recv(q, b);
	cp.private_data = &h;
	cp.private_data_len = sizeof(h);
	REQ(iwcm_connect(q->id, &cp) == 0, "iwcm_connect: %s", strerror(errno));
	q->connected = true;
	c->connects++;
}

static void cli_on_ev(void *arg, struct iwcm_event *ev)
{
	struct cli *c = arg;
	struct cli_qp *q = ev->id->context;
	const struct iwcm_conn_param *cp = &ev->param.conn;
	struct hello h;

	REQ(q, "event %s for an unknown id", iwcm_event_str(ev->event));
	switch (ev->event) {
	case IWCM_EVENT_ADDR_RESOLVED:
		REQ(iwcm_resolve_route(q->id, 2000) == 0, "resolve_route: %s", strerror(errno));
		break;
	case IWCM_EVENT_ROUTE_RESOLVED:
		cli_route_resolved(c, q);
		break;
	case IWCM_EVENT_ESTABLISHED:
		REQ(q->connected && !q->estab, "QP %u: unexpected ESTABLISHED", q->qi);
		REQ(cp->private_data && cp->private_data_len >= sizeof(h), "QP %u: no ring", q->qi);
		memcpy(&h, cp->private_data, sizeof(h));
		REQ(h.magic == MAGIC && h.qp == q->qi, "QP %u: bad ring hello", q->qi);
		q->ring = h.ring;
		q->rkey = h.rkey;
		q->credit = SLOTS < g_nchunk ? SLOTS : g_nchunk;
		q->estab = true;
		c->estab++;
		break;
	case IWCM_EVENT_DISCONNECTED:
		REQ(q->estab && !q->disc, "QP %u: unexpected DISCONNECTED", q->qi);
		REQ(q->finished, "QP %u: DISCONNECTED before the end (status %d, iw_err %d)", q->qi,
		    ev->status, ev->iw_err);
		q->disc = true;
		c->disc++;
		break;
	default:
		REQ(0, "QP %u: unexpected event %s (status %d, iw_err %d)", q->qi,
		    iwcm_event_str(ev->event), ev->status, ev->iw_err);
	}
}

static bool cli_all_flushed(struct cli *c)
{
	for (int i = 0; i < NQP; i++)
		if (c->q[i].flushed < NRECV || c->q[i].msgs_done < c->q[i].msgs)
			return false;
	return true;
}

static void wait_child(pid_t pid)
{
	int st = ih_reap_peer(pid);

	REQ(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server failed (status %#x)", st);
}

static pid_t fork_server(uint16_t *port)
{
	int pfd[2];
	pid_t pid;

	REQ(pipe(pfd) == 0, "pipe");
	pid = ih_fork_peer("server", TEST_SECS);
	if (pid == 0) {
		close(pfd[0]);
		run_server(pfd[1]);
		_exit(0);
	}
	close(pfd[1]);
	REQ(read(pfd[0], port, sizeof(*port)) == sizeof(*port), "no port from the server");
	close(pfd[0]);
	return pid;
}

static void run_many(bool engine_thread)
{
	struct cli *c = calloc(1, sizeof(*c));
	uint64_t t0, t1, bytes;
	uint16_t port;
	pid_t pid;

	REQ(c, "calloc");
	g_seed = th_seed_from_env();
	ih_deadline = th_now_ms() + WAIT_MS;
	/* before any context exists: the server must not inherit threads or sockets */
	pid = fork_server(&port);
	if (engine_thread)
		setenv("IWARP_ENGINE_THREAD", "1", 1);
	side_open(&c->s, 4096);
	c->s.on_wc = cli_on_wc;
	c->s.on_ev = cli_on_ev;
	c->s.arg = c;
	c->dst.sin_family = AF_INET;
	c->dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->dst.sin_port = htons(port);

	t0 = th_now_ms();
	for (uint32_t i = 0; i < NQP; i++) {
		struct cli_qp *q = &c->q[i];

		q->qi = i;
		REQ(iwcm_create_id(c->s.ech, &q->id, q, IWCM_PS_TCP) == 0, "create_id: %s",
		    strerror(errno));
		REQ(iwcm_resolve_addr(q->id, NULL, (struct sockaddr *)&c->dst, 2000) == 0,
		    "resolve_addr: %s", strerror(errno));
	}
	while (c->connects < NQP) {
		ih_check_deadline("connecting");
		side_step(&c->s);
	}
	while (c->estab < NQP) {
		ih_check_deadline("waiting for ESTABLISHED");
		side_step(&c->s);
	}
	t1 = th_now_ms();
	fprintf(stderr, "%d connections established in %" PRIu64 " ms (engine %s%s)\n", NQP,
		t1 - t0, iwv_context_engine_name(c->s.ctx), engine_thread ? ", engine thread" : "");

	while (c->finished < NQP) {
		ih_check_deadline("moving data");
		for (int i = 0; i < NQP; i++)
			cli_drive(&c->q[i]);
		side_step(&c->s);
	}
	bytes = (uint64_t)NQP * g_nchunk * CHUNK;
	t0 = th_now_ms();
	fprintf(stderr, "%" PRIu64 " MiB moved in %" PRIu64 " ms (%.2f GB/s)\n", bytes / MIB,
		t0 - t1, (double)bytes / (double)((t0 - t1) ? (t0 - t1) : 1) / 1e6);

	for (int i = 0; i < NQP; i++)
		REQ(iwcm_disconnect(c->q[i].id) == 0, "disconnect: %s", strerror(errno));
	while (c->disc < NQP || !cli_all_flushed(c)) {
		ih_check_deadline("disconnecting");
		side_step(&c->s);
	}
	REQ(side_poll_cq(&c->s) == 0, "extra completions");
	for (int i = 0; i < NQP; i++) {
		struct cli_qp *q = &c->q[i];

		iwcm_destroy_qp(q->id);
		REQ(iwcm_destroy_id(q->id) == 0, "destroy_id: %s", strerror(errno));
		REQ(iwv_dereg_mr(q->mr) == 0, "dereg_mr");
		munmap(q->mem, q->len);
	}
	ih_side_close(&c->s);
	if (engine_thread)
		unsetenv("IWARP_ENGINE_THREAD");
	wait_child(pid);
	free(c);
}

static void setup(void)
{
	const char *e = getenv("IW_INTEG_MIB");
	unsigned long mib = e ? strtoul(e, NULL, 0) : 64;

	/* IW_INTEG_MIB shrinks the run for slow (sanitizer) builds; at least one round of slots */
	if (mib < (unsigned long)SLOTS * CHUNK / MIB)
		mib = (unsigned long)SLOTS * CHUNK / MIB;
	g_nchunk = (uint32_t)(mib * MIB / CHUNK);
}

START_TEST(qps64_move_64mib_each_with_checksums)
{
	run_many(false);
}
END_TEST

START_TEST(qps64_move_64mib_each_client_engine_thread)
{
	run_many(true);
}
END_TEST

static Suite *integ_many_suite(void)
{
	Suite *s = suite_create("integ_many");
	TCase *tc = tcase_create("inline");

	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, TEST_SECS);
	tcase_add_test(tc, qps64_move_64mib_each_with_checksums);
	suite_add_tcase(s, tc);
	tc = tcase_create("engine_thread");
	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, TEST_SECS);
	tcase_add_test(tc, qps64_move_64mib_each_client_engine_thread);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(integ_many_suite)
