/* SPDX-License-Identifier: MIT */
/*
 * test_iwv_srq.c - shared receive queues and asynchronous events of the verbs
 * API (iwv.h) over real loopback connections: one server context whose QPs
 * all take their receives from one SRQ, several clients connected to its
 * listener (all in this process, on one context, pumped by the vh world of
 * test/helpers/vh.h).  Meson runs it once per I/O engine (IWARP_ENGINE).
 *
 * What is checked, in ibverbs terms: every receive posted to the SRQ
 * completes exactly once, on the recv CQ of the QP that took it, with that
 * QP's qp_num; a QP that dies flushes only what it took; the SRQ limit event
 * arrives once on async_fd; destroy ordering (EBUSY) and every bad input.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>

#include "th.h"
#include "vh.h"

#define MAXCLI 4
#define MSG    64 /* octets per receive buffer */

struct conn {
	struct iwcm_id *cid, *sid; /* client id, server id */
	struct iwv_qp *cqp, *sqp;
	bool cdown, sdown; /* DISCONNECTED consumed */
};

/* iwv_context_attr.rx_buf_size of srv_open() (0: the default) */
static uint32_t g_rx_buf;

struct srv {
	struct vh_world w;
	struct iwv_context *ctx;
	struct iwcm_event_channel *ch;
	struct iwv_pd *pd, *cpd; /* server, clients */
	struct iwv_cq *scq, *rcq, *ccq;
	struct iwv_srq *srq;
	struct iwcm_id *listen;
	uint16_t port;
	int n;
	struct conn c[MAXCLI];
	uint8_t *rbuf, *sbuf; /* server receive buffers, client send buffers */
	struct iwv_mr *rmr, *smr;
	uint32_t nrbuf;
};

static void srv_open(struct srv *s, uint32_t srq_wr, int rcqe)
{
	struct iwv_srq_init_attr sa = {.srq_context = s, .attr = {.max_wr = srq_wr, .max_sge = 2}};
	struct sockaddr_storage ss;

	struct iwv_context_attr ca;

	memset(s, 0, sizeof(*s));
	iwv_context_attr_default(&ca);
	if (g_rx_buf)
		ca.rx_buf_size = g_rx_buf;
	s->ctx = iwv_open_context(&ca);
	ck_assert_msg(s->ctx != NULL, "iwv_open_context: %s", strerror(errno));
	s->ch = iwcm_create_event_channel_ctx(s->ctx);
	ck_assert_ptr_nonnull(s->ch);
	vh_world_add(&s->w, s->ch, s->ctx);
	s->pd = iwv_alloc_pd(s->ctx);
	s->cpd = iwv_alloc_pd(s->ctx);
	ck_assert(s->pd && s->cpd);
	s->scq = iwv_create_cq(s->ctx, 256, NULL, NULL, 0);
	s->rcq = iwv_create_cq(s->ctx, rcqe, NULL, NULL, 0);
	s->ccq = iwv_create_cq(s->ctx, 1024, NULL, NULL, 0);
	ck_assert(s->scq && s->rcq && s->ccq);
	s->srq = iwv_create_srq(s->pd, &sa);
	ck_assert_msg(s->srq != NULL, "iwv_create_srq: %s", strerror(errno));
	ck_assert_int_eq(
		fcntl(s->ctx->async_fd, F_SETFL, fcntl(s->ctx->async_fd, F_GETFL) | O_NONBLOCK), 0);
	s->nrbuf = srq_wr * 2;
	s->rbuf = calloc(s->nrbuf, MSG);
	s->sbuf = calloc(1, 1 << 16);
	ck_assert(s->rbuf && s->sbuf);
	s->rmr = iwv_reg_mr(s->pd, s->rbuf, (size_t)s->nrbuf * MSG, IWV_ACCESS_LOCAL_WRITE);
	s->smr = iwv_reg_mr(s->cpd, s->sbuf, 1 << 16, 0);
	ck_assert(s->rmr && s->smr);
	ck_assert_int_eq(iwcm_create_id(s->ch, &s->listen, s, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, 0, &ss);
	ck_assert_int_eq(iwcm_bind_addr(s->listen, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwcm_listen(s->listen, 16), 0);
	s->port = iwcm_get_src_port(s->listen);
}

/* Connect one more client; its server QP is on the SRQ. */
static struct conn *srv_connect(struct srv *s)
{
	struct conn *c = &s->c[s->n++];
	struct iwv_qp_init_attr ca = {
		.send_cq = s->ccq,
		.recv_cq = s->ccq,
		.cap = {.max_send_wr = 256, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IWV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct iwv_qp_init_attr sa = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.srq = s->srq,
		.cap = {.max_send_wr = 16, .max_recv_wr = 7, .max_send_sge = 1, .max_recv_sge = 3},
		.qp_type = IWV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct sockaddr_storage dst;
	struct vh_ev req;

	ck_assert_int_le(s->n, MAXCLI);
	ck_assert_int_eq(iwcm_create_id(s->ch, &c->cid, c, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, s->port, &dst);
	ck_assert_int_eq(iwcm_resolve_addr(c->cid, NULL, (struct sockaddr *)&dst, 2000), 0);
	vh_expect(&s->w, c->cid, IWCM_EVENT_ADDR_RESOLVED, NULL);
	ck_assert_int_eq(iwcm_resolve_route(c->cid, 2000), 0);
	vh_expect(&s->w, c->cid, IWCM_EVENT_ROUTE_RESOLVED, NULL);
	ck_assert_msg(iwcm_create_qp(c->cid, s->cpd, &ca) == 0, "%s", strerror(errno));
	c->cqp = c->cid->qp;
	ck_assert_int_eq(iwcm_connect(c->cid, &(struct iwcm_conn_param){0}), 0);
	vh_expect(&s->w, s->listen, IWCM_EVENT_CONNECT_REQUEST, &req);
	c->sid = req.id;
	ck_assert_msg(iwcm_create_qp(c->sid, s->pd, &sa) == 0, "%s", strerror(errno));
	c->sqp = c->sid->qp;
	/* the receive caps are the SRQ's business: written back as 0 */
	ck_assert_uint_eq(sa.cap.max_recv_wr, 0);
	ck_assert_uint_eq(sa.cap.max_recv_sge, 0);
	ck_assert_ptr_eq(c->sqp->srq, s->srq);
	ck_assert_int_eq(iwcm_accept(c->sid, &(struct iwcm_conn_param){0}), 0);
	vh_expect(&s->w, c->cid, IWCM_EVENT_ESTABLISHED, NULL);
	vh_expect(&s->w, c->sid, IWCM_EVENT_ESTABLISHED, NULL);
	return c;
}

/* Disconnect and destroy every connection, its QPs and the listener. */
static void srv_close_conns(struct srv *s)
{
	for (int i = 0; i < s->n; i++) {
		struct conn *c = &s->c[i];

		if (!c->cdown)
			(void)iwcm_disconnect(c->cid);
		if (!c->sdown)
			(void)iwcm_disconnect(c->sid);
	}
	for (int i = 0; i < s->n; i++) {
		struct conn *c = &s->c[i];

		if (!c->cdown)
			vh_expect(&s->w, c->cid, IWCM_EVENT_DISCONNECTED, NULL);
		if (!c->sdown)
			vh_expect(&s->w, c->sid, IWCM_EVENT_DISCONNECTED, NULL);
		iwcm_destroy_qp(c->cid);
		iwcm_destroy_qp(c->sid);
		ck_assert_ptr_null(c->cid->qp);
		ck_assert_ptr_null(c->sid->qp);
		ck_assert_int_eq(iwcm_destroy_id(c->cid), 0);
		ck_assert_int_eq(iwcm_destroy_id(c->sid), 0);
		vh_forget(&s->w, c->cid);
		vh_forget(&s->w, c->sid);
	}
	s->n = 0;
	ck_assert_int_eq(iwcm_destroy_id(s->listen), 0);
	vh_forget(&s->w, s->listen);
}

static void srv_free(struct srv *s);

static void srv_close(struct srv *s)
{
	srv_close_conns(s);
	ck_assert_int_eq(iwv_destroy_srq(s->srq), 0);
	srv_free(s);
}

/* What srv_open() made, after srv_close_conns() and the SRQ. */
static void srv_free(struct srv *s)
{
	ck_assert_int_eq(iwv_dereg_mr(s->rmr), 0);
	ck_assert_int_eq(iwv_dereg_mr(s->smr), 0);
	ck_assert_int_eq(iwv_destroy_cq(s->scq), 0);
	ck_assert_int_eq(iwv_destroy_cq(s->rcq), 0);
	ck_assert_int_eq(iwv_destroy_cq(s->ccq), 0);
	ck_assert_int_eq(iwv_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(iwv_dealloc_pd(s->cpd), 0);
	vh_world_fini(&s->w);
	ck_assert_int_eq(iwcm_destroy_event_channel(s->ch), 0);
	ck_assert_int_eq(iwv_close_device(s->ctx), 0);
	free(s->rbuf);
	free(s->sbuf);
}

/* Post receive wr_id into buffer slot (wr_id % nrbuf). */
static void srq_post(struct srv *s, uint64_t wr_id)
{
	struct iwv_sge sge = {
		.addr = (uint64_t)(uintptr_t)(s->rbuf + (wr_id % s->nrbuf) * MSG),
		.length = MSG,
		.lkey = s->rmr->lkey,
	};
	struct iwv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad = NULL;

	ck_assert_int_eq(iwv_post_srq_recv(s->srq, &wr, &bad), 0);
}

/* Client c sends MSG octets tagged (client, seq). */
static void cli_send(struct srv *s, int ci, uint32_t seq)
{
	uint8_t *p = s->sbuf + ((size_t)ci * 256 + seq % 256) * MSG % (1 << 16);
	struct iwv_sge sge = {.addr = (uint64_t)(uintptr_t)p, .length = MSG, .lkey = s->smr->lkey};
	struct iwv_send_wr wr = {.wr_id = seq,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IWV_WR_SEND},
			   *bad = NULL;

	memset(p, 0, MSG);
	p[0] = (uint8_t)ci;
	memcpy(p + 4, &seq, sizeof(seq));
	ck_assert_int_eq(iwv_post_send(s->c[ci].cqp, &wr, &bad), 0);
}

static int conn_of_qpnum(struct srv *s, uint32_t qp_num)
{
	for (int i = 0; i < s->n; i++)
		if (s->c[i].sqp->qp_num == qp_num)
			return i;
	ck_abort_msg("qp_num %u is no server QP", qp_num);
	return -1;
}

/* The next asynchronous event within the deadline (async_fd is O_NONBLOCK). */
static void wait_async(struct srv *s, struct iwv_async_event *ev)
{
	uint64_t end = vh_deadline();

	for (;;) {
		if (iwv_get_async_event(s->ctx, ev) == 0)
			return;
		ck_assert_int_eq(errno, EAGAIN);
		ck_assert_msg(th_now_ms() <= end, "no asynchronous event within %d ms",
			      vh_deadline_ms);
		vh_step(&s->w);
	}
}

static void no_async(struct srv *s)
{
	struct iwv_async_event ev;

	vh_pump(&s->w);
	ck_assert_msg(iwv_get_async_event(s->ctx, &ev) == -1, "unexpected asynchronous event %s",
		      iwv_event_type_str(ev.event_type));
	ck_assert_int_eq(errno, EAGAIN);
}

/* ---------------------------------------------------------------------- */

START_TEST(several_qps_on_one_srq_receive_from_several_peers)
{
	enum { NC = 3, PER = 200 };
	struct srv s;
	uint32_t next[NC] = {0}, sent[NC] = {0};
	int got = 0, posted = 0;
	struct iwv_wc wc[16];
	struct iwv_srq_attr qa;

	srv_open(&s, 32, 64);
	for (int i = 0; i < NC; i++)
		srv_connect(&s);
	for (; posted < 32; posted++)
		srq_post(&s, (uint64_t)posted);
	/* the clients send in turns, at most what the SRQ holds outstanding */
	while (got < NC * PER) {
		int n;

		for (int i = 0; i < NC; i++)
			if (sent[i] < PER && posted - got > 3 * NC &&
			    (sent[0] + sent[1] + sent[2]) - (uint32_t)got < 24) {
				cli_send(&s, i, sent[i]);
				sent[i]++;
			}
		n = iwv_poll_cq(s.rcq, 16, wc);
		ck_assert_int_ge(n, 0);
		for (int k = 0; k < n; k++) {
			const uint8_t *p = s.rbuf + (wc[k].wr_id % s.nrbuf) * MSG;
			uint32_t seq;
			int ci = conn_of_qpnum(&s, wc[k].qp_num);

			vh_wc_is(&wc[k], wc[k].wr_id, IWV_WC_SUCCESS, IWV_WC_RECV);
			ck_assert_uint_eq(wc[k].byte_len, MSG);
			ck_assert_int_eq(p[0], ci); /* came over that QP's connection */
			memcpy(&seq, p + 4, sizeof(seq));
			ck_assert_uint_eq(seq, next[ci]); /* in order per QP */
			next[ci]++;
			got++;
			srq_post(&s, (uint64_t)posted++);
		}
		if (!n)
			vh_step(&s.w);
	}
	for (int i = 0; i < NC; i++)
		ck_assert_uint_eq(next[i], PER);
	/* the client send completions, exactly */
	for (int i = 0; i < NC * PER; i += 16) {
		int want = NC * PER - i < 16 ? NC * PER - i : 16;

		vh_poll_wc(&s.w, s.ccq, want, wc);
		for (int k = 0; k < want; k++)
			ck_assert_int_eq(wc[k].status, IWV_WC_SUCCESS);
	}
	vh_cq_empty(s.rcq);
	ck_assert_int_eq(iwv_query_srq(s.srq, &qa), 0);
	ck_assert_uint_eq(qa.max_wr, 32);
	ck_assert_uint_eq(qa.max_sge, 2);
	no_async(&s);
	srv_close(&s);
}
END_TEST

START_TEST(srq_limit_event_on_async_fd_once_then_eagain)
{
	struct srv s;
	struct iwv_async_event ev;
	struct iwv_srq_attr a = {.srq_limit = 3};
	struct pollfd pfd;
	struct iwv_wc wc;
	int fl;

	srv_open(&s, 8, 64);
	srv_connect(&s);
	srv_connect(&s);
	for (int k = 0; k < 5; k++)
		srq_post(&s, (uint64_t)k);
	ck_assert_int_eq(iwv_modify_srq(s.srq, &a, IWV_SRQ_LIMIT), 0);
	ck_assert_int_eq(iwv_query_srq(s.srq, &a), 0);
	ck_assert_uint_eq(a.srq_limit, 3);
	cli_send(&s, 0, 0);
	wc = vh_poll1(&s.w, s.rcq); /* 4 left */
	vh_wc_is(&wc, 0, IWV_WC_SUCCESS, IWV_WC_RECV);
	cli_send(&s, 1, 0);
	wc = vh_poll1(&s.w, s.rcq); /* 3 left: not below */
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	no_async(&s);
	pfd = (struct pollfd){.fd = s.ctx->async_fd, .events = POLLIN};
	cli_send(&s, 0, 1);
	wc = vh_poll1(&s.w, s.rcq); /* 2 left: fires */
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_int_eq(poll(&pfd, 1, vh_deadline_ms), 1);
	ck_assert(pfd.revents & POLLIN);
	ck_assert_int_eq(iwv_get_async_event(s.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IWV_EVENT_SRQ_LIMIT_REACHED);
	ck_assert_ptr_eq(ev.element.srq, s.srq);
	ck_assert_ptr_eq(ev.element.srq->srq_context, &s);
	ck_assert_str_eq(iwv_event_type_str(ev.event_type), "SRQ limit reached");
	/* once: disarmed (srq_limit reads 0), the queue is empty, async_fd quiet */
	ck_assert_int_eq(iwv_query_srq(s.srq, &a), 0);
	ck_assert_uint_eq(a.srq_limit, 0);
	ck_assert_int_eq(iwv_get_async_event(s.ctx, &ev) == -1 && errno == EAGAIN, 1);
	cli_send(&s, 1, 1);
	wc = vh_poll1(&s.w, s.rcq); /* 1 left, disarmed */
	vh_wc_is(&wc, 3, IWV_WC_SUCCESS, IWV_WC_RECV);
	no_async(&s);
	/* unacknowledged: the SRQ cannot go (nor could it with QPs on it anyway) */
	ck_assert_int_eq(iwv_destroy_srq(s.srq), EBUSY);
	iwv_ack_async_event(&ev);

	/* armed again; a blocking call makes the progress that fires it */
	a.srq_limit = 2;
	ck_assert_int_eq(iwv_modify_srq(s.srq, &a, IWV_SRQ_LIMIT), 0);
	fl = fcntl(s.ctx->async_fd, F_GETFL);
	ck_assert_int_eq(fcntl(s.ctx->async_fd, F_SETFL, fl & ~O_NONBLOCK), 0);
	cli_send(&s, 0, 2); /* takes the last one: 0 left < 2 */
	alarm(20);	    /* SIGALRM fails the test if the call never returns */
	ck_assert_int_eq(iwv_get_async_event(s.ctx, &ev), 0);
	alarm(0);
	ck_assert_int_eq(ev.event_type, IWV_EVENT_SRQ_LIMIT_REACHED);
	ck_assert_int_eq(fcntl(s.ctx->async_fd, F_SETFL, fl), 0);
	wc = vh_poll1(&s.w, s.rcq);
	vh_wc_is(&wc, 4, IWV_WC_SUCCESS, IWV_WC_RECV);
	/* no QP left, but the event is not acknowledged: EBUSY, then it goes */
	srv_close_conns(&s);
	ck_assert_int_eq(iwv_destroy_srq(s.srq), EBUSY);
	iwv_ack_async_event(&ev);
	iwv_ack_async_event(&ev); /* one too many: harmless */
	ck_assert_int_eq(iwv_destroy_srq(s.srq), 0);
	srv_free(&s);
}
END_TEST

/* A QP moved to ERR takes nothing with it: the other QP receives the rest; the
 * dead one reports LAST_WQE_REACHED (and no QP_FATAL: the program did it). */
START_TEST(a_qp_moved_to_err_leaves_the_srq_to_the_others)
{
	struct srv s;
	struct iwv_async_event ev;
	struct iwv_qp_attr qa = {.qp_state = IWV_QPS_ERR};
	struct iwv_recv_wr rwr = {.wr_id = 9};
	struct iwv_wc wc;
	bool cfatal = false;

	srv_open(&s, 8, 64);
	srv_connect(&s);
	srv_connect(&s);
	for (int k = 0; k < 4; k++)
		srq_post(&s, (uint64_t)k);
	cli_send(&s, 0, 0);
	wc = vh_poll1(&s.w, s.rcq);
	vh_wc_is(&wc, 0, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.qp_num, s.c[0].sqp->qp_num);
	ck_assert_int_eq(iwv_modify_qp(s.c[0].sqp, &qa, IWV_QP_STATE), 0);
	/* the server QP: LAST_WQE_REACHED only; its peer (same context) may report
	 * the abortive close as QP_FATAL of the client QP */
	for (;;) {
		wait_async(&s, &ev);
		if (ev.event_type == IWV_EVENT_QP_LAST_WQE_REACHED)
			break;
		ck_assert_int_eq(ev.event_type, IWV_EVENT_QP_FATAL);
		ck_assert_ptr_eq(ev.element.qp, s.c[0].cqp);
		ck_assert(!cfatal);
		cfatal = true;
		iwv_ack_async_event(&ev);
	}
	ck_assert_ptr_eq(ev.element.qp, s.c[0].sqp);
	/* a post_recv on an SRQ QP is refused, in ERR as before */
	ck_assert_int_eq(iwv_post_recv(s.c[0].sqp, &rwr, NULL), EINVAL);
	/* unacknowledged: the QP cannot be destroyed yet, and stays attached */
	ck_assert_int_eq(iwv_destroy_qp(s.c[0].sqp), EBUSY);
	iwcm_destroy_qp(s.c[0].sid);
	ck_assert_ptr_eq(s.c[0].sid->qp, s.c[0].sqp);
	iwv_ack_async_event(&ev);
	vh_expect(&s.w, s.c[0].cid, IWCM_EVENT_DISCONNECTED, NULL);
	s.c[0].cdown = true;
	while (iwv_get_async_event(s.ctx, &ev) == 0) {
		ck_assert_int_eq(ev.event_type, IWV_EVENT_QP_FATAL);
		ck_assert_ptr_eq(ev.element.qp, s.c[0].cqp);
		ck_assert(!cfatal);
		cfatal = true;
		iwv_ack_async_event(&ev);
	}
	no_async(&s);
	/* nothing was flushed from the SRQ: the other QP gets 1, 2, 3 */
	for (uint32_t k = 0; k < 3; k++) {
		cli_send(&s, 1, k);
		wc = vh_poll1(&s.w, s.rcq);
		vh_wc_is(&wc, 1 + k, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.qp_num, s.c[1].sqp->qp_num);
	}
	vh_cq_empty(s.rcq);
	srv_close(&s);
}
END_TEST

/*
 * The server QP is moved to ERR while a large Send is being placed into the
 * receive it took: that receive is flushed (it completes once, on that QP),
 * and the receives behind it in the SRQ go to the other QP.  A small receive
 * buffer per connection (4 KiB) makes each progress pass place a little only.
 */
START_TEST(a_qp_killed_mid_message_flushes_only_its_receive)
{
	enum { BIG = 1 << 20 };
	struct srv s;
	uint8_t *big = malloc(BIG), *src = malloc(BIG);
	struct iwv_mr *bmr, *smr;
	struct iwv_sge bsge, ssge;
	struct iwv_recv_wr rwr = {.wr_id = 100, .sg_list = &bsge, .num_sge = 1};
	struct iwv_send_wr swr = {
		.wr_id = 77, .sg_list = &ssge, .num_sge = 1, .opcode = IWV_WR_SEND};
	struct iwv_async_event ev;
	struct iwv_qp_attr qa = {.qp_state = IWV_QPS_ERR};
	struct iwv_wc wc;
	uint64_t end;
	bool complete;

	ck_assert(big && src);
	g_rx_buf = 4096;
	srv_open(&s, 8, 64);
	srv_connect(&s);
	srv_connect(&s);
	memset(big, 0, BIG);
	memset(src, 0xC3, BIG);
	bmr = iwv_reg_mr(s.pd, big, BIG, IWV_ACCESS_LOCAL_WRITE);
	smr = iwv_reg_mr(s.cpd, src, BIG, 0);
	ck_assert(bmr && smr);
	bsge = (struct iwv_sge){.addr = (uint64_t)(uintptr_t)big, .length = BIG, .lkey = bmr->lkey};
	ssge = (struct iwv_sge){.addr = (uint64_t)(uintptr_t)src, .length = BIG, .lkey = smr->lkey};
	ck_assert_int_eq(iwv_post_srq_recv(s.srq, &rwr, NULL), 0);
	srq_post(&s, 1);
	srq_post(&s, 2);
	ck_assert_int_eq(iwv_post_send(s.c[0].cqp, &swr, NULL), 0);
	/* until the first octets were placed: the receive was taken */
	end = vh_deadline();
	while (big[0] != 0xC3) {
		ck_assert_int_ge(iwv_poll_cq(s.rcq, 0, &wc), 0);
		ck_assert_msg(th_now_ms() <= end, "nothing placed within %d ms", vh_deadline_ms);
	}
	ck_assert_int_eq(iwv_modify_qp(s.c[0].sqp, &qa, IWV_QP_STATE), 0);
	wc = vh_poll1(&s.w, s.rcq);
	/* the receive in progress completes once, on the QP that took it: flushed,
	 * unless an engine thread placed all of it before the QP went to ERR */
	complete = wc.status == IWV_WC_SUCCESS;
	vh_wc_is(&wc, 100, complete ? IWV_WC_SUCCESS : IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	ck_assert_uint_eq(wc.qp_num, s.c[0].sqp->qp_num);
	if (complete)
		ck_assert_uint_eq(wc.byte_len, BIG);
	else
		ck_assert_str_eq(iwv_errname(-(int)wc.vendor_err), "IW_ERDMAP_FLUSHED");
	for (;;) {
		wait_async(&s, &ev);
		if (ev.event_type == IWV_EVENT_QP_LAST_WQE_REACHED)
			break;
		ck_assert_int_eq(ev.event_type, IWV_EVENT_QP_FATAL);
		ck_assert_ptr_eq(ev.element.qp, s.c[0].cqp);
		iwv_ack_async_event(&ev);
	}
	ck_assert_ptr_eq(ev.element.qp, s.c[0].sqp);
	iwv_ack_async_event(&ev);
	wc = vh_poll1(&s.w, s.ccq); /* the client's Send ends, one way or the other */
	ck_assert_uint_eq(wc.wr_id, 77);
	vh_expect(&s.w, s.c[0].cid, IWCM_EVENT_DISCONNECTED, NULL);
	s.c[0].cdown = true;
	while (iwv_get_async_event(s.ctx, &ev) == 0) {
		ck_assert_int_eq(ev.event_type, IWV_EVENT_QP_FATAL);
		ck_assert_ptr_eq(ev.element.qp, s.c[0].cqp);
		iwv_ack_async_event(&ev);
	}
	for (uint32_t k = 0; k < 2; k++) {
		cli_send(&s, 1, k);
		wc = vh_poll1(&s.w, s.rcq);
		vh_wc_is(&wc, 1 + k, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.qp_num, s.c[1].sqp->qp_num);
	}
	vh_cq_empty(s.rcq);
	srv_close_conns(&s);
	ck_assert_int_eq(iwv_dereg_mr(bmr), 0);
	ck_assert_int_eq(iwv_dereg_mr(smr), 0);
	ck_assert_int_eq(iwv_destroy_srq(s.srq), 0);
	srv_free(&s);
	free(big);
	free(src);
	if (!complete)
		fprintf(stderr, "killed mid-message: the receive was flushed\n");
}
END_TEST

/* A peer's graceful disconnect ends one server QP: LAST_WQE_REACHED, no
 * QP_FATAL, and the other QP goes on with the SRQ. */
START_TEST(a_peer_disconnect_ends_one_qp_and_the_others_go_on)
{
	struct srv s;
	struct iwv_async_event ev;
	struct iwv_wc wc;

	srv_open(&s, 8, 64);
	srv_connect(&s);
	srv_connect(&s);
	for (int k = 0; k < 3; k++)
		srq_post(&s, (uint64_t)k);
	cli_send(&s, 0, 0);
	wc = vh_poll1(&s.w, s.rcq);
	vh_wc_is(&wc, 0, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_int_eq(iwcm_disconnect(s.c[0].cid), 0);
	vh_expect(&s.w, s.c[0].sid, IWCM_EVENT_DISCONNECTED, NULL);
	vh_expect(&s.w, s.c[0].cid, IWCM_EVENT_DISCONNECTED, NULL);
	s.c[0].cdown = s.c[0].sdown = true;
	wait_async(&s, &ev);
	ck_assert_int_eq(ev.event_type, IWV_EVENT_QP_LAST_WQE_REACHED);
	ck_assert_ptr_eq(ev.element.qp, s.c[0].sqp);
	iwv_ack_async_event(&ev);
	no_async(&s);
	vh_cq_empty(s.rcq);
	for (uint32_t k = 0; k < 2; k++) {
		cli_send(&s, 1, k);
		wc = vh_poll1(&s.w, s.rcq);
		vh_wc_is(&wc, 1 + k, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.qp_num, s.c[1].sqp->qp_num);
	}
	srv_close(&s);
}
END_TEST

/* A Send meeting an empty SRQ fails that QP with a Terminate: QP_FATAL and
 * LAST_WQE_REACHED; the peer sees the failure; the other QP is unaffected. */
START_TEST(an_empty_srq_fails_the_receiving_qp_with_fatal_and_last_wqe_events)
{
	struct srv s;
	struct iwv_async_event ev[3];
	bool sfatal = false, slast = false, cfatal = false;
	struct iwv_wc wc;

	srv_open(&s, 4, 64);
	srv_connect(&s);
	srv_connect(&s);
	cli_send(&s, 0, 0);
	/* the server QP: FATAL (it sent the Terminate) and LAST_WQE; the client QP
	 * (same context) FATAL (it received the Terminate) */
	for (int k = 0; k < 3; k++) {
		wait_async(&s, &ev[k]);
		if (ev[k].event_type == IWV_EVENT_QP_FATAL && ev[k].element.qp == s.c[0].sqp)
			sfatal = true;
		else if (ev[k].event_type == IWV_EVENT_QP_LAST_WQE_REACHED &&
			 ev[k].element.qp == s.c[0].sqp)
			slast = true;
		else if (ev[k].event_type == IWV_EVENT_QP_FATAL && ev[k].element.qp == s.c[0].cqp)
			cfatal = true;
		else
			ck_abort_msg("unexpected event %s", iwv_event_type_str(ev[k].event_type));
	}
	ck_assert(sfatal && slast && cfatal);
	no_async(&s);
	wc = vh_poll1(&s.w, s.ccq); /* the client's Send */
	ck_assert_uint_eq(wc.wr_id, 0);
	vh_expect(&s.w, s.c[0].cid, IWCM_EVENT_DISCONNECTED, NULL);
	s.c[0].cdown = true;
	vh_cq_empty(s.rcq); /* the dead QP held no receive */
	srq_post(&s, 7);
	cli_send(&s, 1, 0);
	wc = vh_poll1(&s.w, s.rcq);
	vh_wc_is(&wc, 7, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.qp_num, s.c[1].sqp->qp_num);
	/* unacknowledged events hold their QPs */
	ck_assert_int_eq(iwv_destroy_qp(s.c[0].sqp), EBUSY);
	for (int k = 0; k < 3; k++)
		iwv_ack_async_event(&ev[k]);
	srv_close(&s);
}
END_TEST

/* The server's recv CQ is far smaller than what arrives: the completions wait
 * in the QP's stage and all come out, in order, as the program polls. */
START_TEST(a_full_recv_cq_loses_nothing_with_an_srq)
{
	struct srv s;
	struct iwv_wc wc[4];

	srv_open(&s, 16, 2);
	srv_connect(&s);
	for (int k = 0; k < 12; k++)
		srq_post(&s, (uint64_t)k);
	for (uint32_t k = 0; k < 12; k++)
		cli_send(&s, 0, k);
	vh_poll_wc(&s.w, s.ccq, 1, wc); /* let it all move */
	for (int k = 0; k < 50; k++)
		vh_pump(&s.w);
	for (int k = 0; k < 12; k += 2) {
		vh_poll_wc(&s.w, s.rcq, 2, wc);
		vh_wc_is(&wc[0], (uint64_t)k, IWV_WC_SUCCESS, IWV_WC_RECV);
		vh_wc_is(&wc[1], (uint64_t)k + 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	}
	vh_poll_wc(&s.w, s.ccq, 4, wc);
	vh_poll_wc(&s.w, s.ccq, 4, wc);
	vh_poll_wc(&s.w, s.ccq, 3, wc);
	no_async(&s);
	srv_close(&s);
}
END_TEST

/* Every bad input of the SRQ verbs, the QP/SRQ/PD rules, destroy ordering. */
START_TEST(srq_verbs_refuse_bad_input_and_keep_destroy_order)
{
	struct iwv_context *ctx = vh_ctx_open(-1), *ctx2 = vh_ctx_open(-1);
	struct iwv_pd *pd = iwv_alloc_pd(ctx), *pd2 = iwv_alloc_pd(ctx), *pdx = iwv_alloc_pd(ctx2);
	struct iwv_cq *cq = iwv_create_cq(ctx, 16, NULL, NULL, 0);
	struct iwv_srq_init_attr ia = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct iwv_srq *srq, *srqx;
	struct iwv_srq_attr a;
	struct iwv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IWV_QPT_RC, .cap = {.max_send_wr = 4}};
	struct iwv_qp_init_attr qia;
	struct iwv_qp_attr qattr;
	struct iwv_qp *qp;
	struct iwv_device_attr da;
	struct iwv_async_event ev;
	uint8_t buf[64];
	struct iwv_mr *mr = iwv_reg_mr(pd, buf, sizeof(buf), IWV_ACCESS_LOCAL_WRITE);
	struct iwv_sge sge = {.addr = (uint64_t)(uintptr_t)buf, .length = 8, .lkey = mr->lkey};
	struct iwv_sge sge2[2] = {sge, sge};
	struct iwv_recv_wr w1 = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, w2, w3, *bad;

	ck_assert(pd && pd2 && pdx && cq && mr);
	ck_assert_int_eq(iwv_query_device(ctx, &da), 0);
	ck_assert_int_gt(da.max_srq, 0);
	ck_assert_int_eq(da.max_srq_wr, IWV_MAX_QP_WR);
	ck_assert_int_eq(da.max_srq_sge, IWV_MAX_SGE);

	/* create */
	errno = 0;
	ck_assert_ptr_null(iwv_create_srq(NULL, &ia));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(iwv_create_srq(pd, NULL));
	ck_assert_int_eq(errno, EINVAL);
	{
		const struct iwv_srq_attr bad_attr[] = {
			{.max_wr = 0, .max_sge = 1},
			{.max_wr = IWV_MAX_QP_WR + 1, .max_sge = 1},
			{.max_wr = 4, .max_sge = 0},
			{.max_wr = 4, .max_sge = IWV_MAX_SGE + 1},
		};

		for (size_t i = 0; i < sizeof(bad_attr) / sizeof(bad_attr[0]); i++) {
			struct iwv_srq_init_attr b = {.attr = bad_attr[i]};

			errno = 0;
			ck_assert_ptr_null(iwv_create_srq(pd, &b));
			ck_assert_int_eq(errno, EINVAL);
		}
	}
	ia.attr.srq_limit = 99; /* ignored at create time */
	srq = iwv_create_srq(pd, &ia);
	ck_assert_ptr_nonnull(srq);
	ck_assert_uint_eq(ia.attr.max_wr, 4);
	ck_assert_uint_eq(ia.attr.max_sge, 1);
	ck_assert_uint_eq(ia.attr.srq_limit, 0);
	ck_assert_ptr_eq(srq->context, ctx);
	ck_assert_ptr_eq(srq->pd, pd);
	ck_assert_int_eq(iwv_dealloc_pd(pd), EBUSY); /* the SRQ uses it */
	srqx = iwv_create_srq(pdx, &ia);
	ck_assert_ptr_nonnull(srqx);

	/* modify / query */
	a = (struct iwv_srq_attr){.max_wr = 8, .srq_limit = 1};
	ck_assert_int_eq(iwv_modify_srq(NULL, &a, IWV_SRQ_LIMIT), EINVAL);
	ck_assert_int_eq(iwv_modify_srq(srq, NULL, IWV_SRQ_LIMIT), EINVAL);
	ck_assert_int_eq(iwv_modify_srq(srq, &a, IWV_SRQ_MAX_WR), EINVAL);
	ck_assert_int_eq(iwv_modify_srq(srq, &a, IWV_SRQ_MAX_WR | IWV_SRQ_LIMIT), EINVAL);
	ck_assert_int_eq(iwv_modify_srq(srq, &a, 1 << 5), EINVAL);
	a.srq_limit = 5;
	ck_assert_int_eq(iwv_modify_srq(srq, &a, IWV_SRQ_LIMIT), EINVAL); /* > max_wr */
	ck_assert_int_eq(iwv_modify_srq(srq, &a, 0), 0);		  /* nothing to do */
	a.srq_limit = 4;
	ck_assert_int_eq(iwv_modify_srq(srq, &a, IWV_SRQ_LIMIT), 0);
	ck_assert_int_eq(iwv_query_srq(NULL, &a), EINVAL);
	ck_assert_int_eq(iwv_query_srq(srq, NULL), EINVAL);
	memset(&a, 0xA5, sizeof(a));
	ck_assert_int_eq(iwv_query_srq(srq, &a), 0);
	ck_assert_uint_eq(a.max_wr, 4);
	ck_assert_uint_eq(a.max_sge, 1);
	ck_assert_uint_eq(a.srq_limit, 4);

	/* post: bad_wr points at the first WR not posted */
	bad = NULL;
	ck_assert_int_eq(iwv_post_srq_recv(NULL, &w1, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &w1);
	ck_assert_int_eq(iwv_post_srq_recv(srq, NULL, &bad), EINVAL);
	ck_assert_ptr_null(bad);
	w2 = (struct iwv_recv_wr){.wr_id = 2, .sg_list = sge2, .num_sge = 2}; /* > max_sge */
	w1.next = &w2;
	ck_assert_int_eq(iwv_post_srq_recv(srq, &w1, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &w2); /* w1 was posted */
	w2 = (struct iwv_recv_wr){.wr_id = 2, .num_sge = -1};
	ck_assert_int_eq(iwv_post_srq_recv(srq, &w2, &bad), EINVAL);
	w2 = (struct iwv_recv_wr){.wr_id = 2, .num_sge = 1, .sg_list = NULL};
	ck_assert_int_eq(iwv_post_srq_recv(srq, &w2, &bad), EINVAL);
	w2 = (struct iwv_recv_wr){.wr_id = 2, .num_sge = 0}; /* a zero-length receive is fine */
	w3 = (struct iwv_recv_wr){.wr_id = 3, .sg_list = &sge, .num_sge = 1};
	w2.next = &w3;
	w1.next = NULL;
	ck_assert_int_eq(iwv_post_srq_recv(srq, &w2, &bad), 0);
	w3.next = &w1;
	ck_assert_int_eq(iwv_post_srq_recv(srq, &w3, &bad), ENOMEM); /* 4 posted: full */
	ck_assert_ptr_eq(bad, &w1);
	ck_assert_int_eq(iwv_post_srq_recv(srq, &w1, NULL), ENOMEM);

	/* QPs: same context and PD as the SRQ */
	qa.srq = srqx;
	errno = 0;
	ck_assert_ptr_null(iwv_create_qp(pd, &qa));
	ck_assert_int_eq(errno, EINVAL);
	qa.srq = srq;
	errno = 0;
	ck_assert_ptr_null(iwv_create_qp(pd2, &qa));
	ck_assert_int_eq(errno, EINVAL);
	qa.cap.max_recv_wr = 100000; /* ignored with an SRQ */
	qp = iwv_create_qp(pd, &qa);
	ck_assert_msg(qp != NULL, "iwv_create_qp: %s", strerror(errno));
	ck_assert_uint_eq(qa.cap.max_recv_wr, 0);
	ck_assert_ptr_eq(qp->srq, srq);
	ck_assert_int_eq(iwv_query_qp(qp, &qattr, IWV_QP_STATE, &qia), 0);
	ck_assert_ptr_eq(qia.srq, srq);
	w1.next = NULL;
	bad = NULL;
	ck_assert_int_eq(iwv_post_recv(qp, &w1, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &w1);
	ck_assert_int_eq(iwv_destroy_srq(srq), EBUSY); /* a QP uses it */

	/* asynchronous events: bad input, nothing queued */
	errno = 0;
	ck_assert_int_eq(iwv_get_async_event(NULL, &ev), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(iwv_get_async_event(ctx, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_ge(ctx->async_fd, 0);
	ck_assert_int_eq(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK),
			 0);
	errno = 0;
	ck_assert_int_eq(iwv_get_async_event(ctx, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	iwv_ack_async_event(NULL);
	ev = (struct iwv_async_event){.event_type = IWV_EVENT_PORT_ACTIVE, .element.port_num = 1};
	iwv_ack_async_event(&ev); /* a kind never raised: ignored */
	ck_assert_str_eq(iwv_event_type_str(IWV_EVENT_QP_LAST_WQE_REACHED), "last WQE reached");
	ck_assert_str_eq(iwv_event_type_str((enum iwv_event_type)1000), "unknown");
	ck_assert_str_eq(iwv_event_type_str((enum iwv_event_type) - 1), "unknown");

	/* a QP that never connected moved to ERR: LAST_WQE_REACHED */
	{
		struct iwv_qp_attr e = {.qp_state = IWV_QPS_ERR};

		ck_assert_int_eq(iwv_modify_qp(qp, &e, IWV_QP_STATE), 0);
		ck_assert_int_eq(iwv_get_async_event(ctx, &ev), 0);
		ck_assert_int_eq(ev.event_type, IWV_EVENT_QP_LAST_WQE_REACHED);
		ck_assert_ptr_eq(ev.element.qp, qp);
		ck_assert_int_eq(iwv_destroy_qp(qp), EBUSY);
		iwv_ack_async_event(&ev);
	}

	/* destroy order */
	ck_assert_int_eq(iwv_destroy_qp(qp), 0);
	ck_assert_int_eq(iwv_destroy_srq(NULL), EINVAL);
	ck_assert_int_eq(iwv_destroy_srq(srq), 0); /* the 4 receives in it go with it */
	ck_assert_int_eq(iwv_destroy_srq(srqx), 0);
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	ck_assert_int_eq(iwv_destroy_cq(cq), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd2), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pdx), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
	ck_assert_int_eq(iwv_close_device(ctx2), 0);
}
END_TEST

/* Events still queued when their QP is destroyed go with it. */
START_TEST(queued_events_of_a_destroyed_qp_are_dropped)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	struct iwv_cq *cq = iwv_create_cq(ctx, 16, NULL, NULL, 0);
	struct iwv_srq_init_attr ia = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct iwv_srq *srq = iwv_create_srq(pd, &ia);
	struct iwv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IWV_QPT_RC};
	struct iwv_qp *qp = iwv_create_qp(pd, &qa);
	struct iwv_qp_attr e = {.qp_state = IWV_QPS_ERR};
	struct pollfd pfd = {.fd = ctx->async_fd, .events = POLLIN};
	struct iwv_async_event ev;

	ck_assert(pd && cq && srq && qp);
	ck_assert_int_eq(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK),
			 0);
	ck_assert_int_eq(iwv_modify_qp(qp, &e, IWV_QP_STATE), 0);
	ck_assert_int_eq(iwv_modify_qp(qp, &e, IWV_QP_STATE), 0); /* raised once */
	ck_assert_int_eq(poll(&pfd, 1, 1000), 1);
	ck_assert_int_eq(iwv_destroy_qp(qp), 0); /* queued, not retrieved: no EBUSY */
	ck_assert_int_eq(iwv_get_async_event(ctx, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(iwv_destroy_srq(srq), 0);
	ck_assert_int_eq(iwv_destroy_cq(cq), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

static Suite *iwv_srq_suite(void)
{
	Suite *s = suite_create("iwv_srq");
	TCase *t = tcase_create("srq");

	tcase_set_timeout(t, 300);
	tcase_add_test(t, several_qps_on_one_srq_receive_from_several_peers);
	tcase_add_test(t, srq_limit_event_on_async_fd_once_then_eagain);
	tcase_add_test(t, a_qp_moved_to_err_leaves_the_srq_to_the_others);
	tcase_add_test(t, a_qp_killed_mid_message_flushes_only_its_receive);
	tcase_add_test(t, a_peer_disconnect_ends_one_qp_and_the_others_go_on);
	tcase_add_test(t, an_empty_srq_fails_the_receiving_qp_with_fatal_and_last_wqe_events);
	tcase_add_test(t, a_full_recv_cq_loses_nothing_with_an_srq);
	tcase_add_test(t, srq_verbs_refuse_bad_input_and_keep_destroy_order);
	tcase_add_test(t, queued_events_of_a_destroyed_qp_are_dropped);
	suite_add_tcase(s, t);
	return s;
}

TH_MAIN(iwv_srq_suite)
