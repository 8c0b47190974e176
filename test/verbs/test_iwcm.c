/* SPDX-License-Identifier: MIT */
/*
 * test_iwcm.c - the connection manager (include/iwarp/iwcm.h) over real
 * loopback TCP: event channels, ids, bind/listen/resolve, connect/accept/
 * reject with private data, the MPA options of RFC 5044 and RFC 6581 in every
 * combination (each connection then moves data), disconnect, many connections
 * at once, and peers that are not iWARP stacks at all (raw TCP sockets).
 *
 * Theory of operation.  Both ends live in this process (test/helpers/vh.h):
 * non-blocking event channels pumped together, every event copied and
 * acknowledged into one queue, every wait bounded by a deadline.  What a
 * connection negotiated is read from the ESTABLISHED events (iwcm_event.mpa)
 * and then proven by traffic: a Send each way, an RDMA Write and an RDMA Read,
 * all checked octet for octet.  Raw peers are plain non-blocking sockets
 * whose bytes are built here by hand from RFC 5044 §7.1.1, so the test does
 * not share an encoder with the code under test.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>
#include <iwarp/mpa.h>

#include "ih.h"
#include "th.h"
#include "vh.h"

/*
 * Traffic over an established pair: client Send (100000 octets), RDMA Write
 * (70000) and RDMA Read (50000); server Send (3000).
 */
static void exchange(struct vh_pair *p, uint64_t seed)
{
	enum { BUF = 256 * 1024, SEND = 100000, BACK = 3000, WR = 70000, RD = 50000 };
	enum { NOTE_OFF = 128 * 1024, W_OFF = 160 * 1024, R_OFF = 8192 };
	struct vh_buf *cs = vh_buf_new(p, &p->c, BUF, VH_ACCESS_ALL);
	struct vh_buf *cr = vh_buf_new(p, &p->c, BUF, VH_ACCESS_ALL);
	struct vh_buf *ss = vh_buf_new(p, &p->s, BUF, VH_ACCESS_ALL);
	struct vh_buf *sr = vh_buf_new(p, &p->s, BUF, VH_ACCESS_ALL);
	struct iwv_wc wc;

	vh_fill(cs->p, BUF, seed);
	vh_fill(ss->p, BUF, seed + 1);
	memset(cr->p, 0, BUF);
	memset(sr->p, 0, BUF);
	vh_post_recv(p->s.qp, 1, sr, 0, NOTE_OFF);
	vh_post_recv(p->s.qp, 2, sr, NOTE_OFF, 64);
	vh_post_recv(p->c.qp, 3, cr, 0, 4096);

	vh_post_send(p->c.qp, IWV_WR_SEND, 10, IWV_SEND_SIGNALED, cs, 0, SEND, NULL, 0);
	vh_post_send(p->c.qp, IWV_WR_RDMA_WRITE, 11, IWV_SEND_SIGNALED, cs, SEND, WR, sr, W_OFF);
	vh_post_send(p->c.qp, IWV_WR_SEND, 12, IWV_SEND_SIGNALED, cs, 0, 0, NULL, 0);
	vh_post_send(p->c.qp, IWV_WR_RDMA_READ, 13, IWV_SEND_SIGNALED, cr, R_OFF, RD, ss, 0);
	vh_post_send(p->s.qp, IWV_WR_SEND, 20, IWV_SEND_SIGNALED, ss, SEND, BACK, NULL, 0);

	wc = vh_poll1(&p->w, p->c.scq);
	vh_wc_is(&wc, 10, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p->w, p->c.scq);
	vh_wc_is(&wc, 11, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	wc = vh_poll1(&p->w, p->c.scq);
	vh_wc_is(&wc, 12, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p->w, p->c.scq);
	vh_wc_is(&wc, 13, IWV_WC_SUCCESS, IWV_WC_RDMA_READ);
	ck_assert_uint_eq(wc.byte_len, RD);
	wc = vh_poll1(&p->w, p->s.scq);
	vh_wc_is(&wc, 20, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p->w, p->s.rcq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, SEND);
	wc = vh_poll1(&p->w, p->s.rcq);
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 0);
	wc = vh_poll1(&p->w, p->c.rcq);
	vh_wc_is(&wc, 3, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, BACK);

	vh_same(sr->p, cs->p, SEND, "client Send");
	vh_same(sr->p + W_OFF, cs->p + SEND, WR, "client RDMA Write");
	vh_same(cr->p + R_OFF, ss->p, RD, "client RDMA Read");
	vh_same(cr->p, ss->p + SEND, BACK, "server Send");
	vh_buf_guards_intact(cr);
	vh_buf_guards_intact(sr);
	vh_cq_empty(p->c.scq);
	vh_cq_empty(p->s.rcq);
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

/* ---------------------------------------------------------------------- */
/* Raw TCP peers                                                           */
/* ---------------------------------------------------------------------- */

static int raw_connect(uint16_t port)
{
	struct sockaddr_storage ss;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	th_loopback(AF_INET, port, &ss);
	ck_assert_msg(connect(fd, (struct sockaddr *)&ss, sizeof(struct sockaddr_in)) == 0,
		      "connect: %s", strerror(errno));
	ih_set_nonblock(fd, true);
	return fd;
}

static void raw_send(int fd, const void *buf, size_t len)
{
	ck_assert_int_eq(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* The other end closed (FIN or RST) within the deadline; what it sent first is ignored. */
static void raw_wait_closed(struct vh_world *w, int fd, const struct iwcm_id *listener)
{
	uint64_t end = vh_deadline();
	uint8_t sink[4096];

	for (;;) {
		ssize_t n = recv(fd, sink, sizeof(sink), 0);

		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return;
		ck_assert_msg(n > 0 || errno == EAGAIN, "recv: %s", strerror(errno));
		ck_assert_msg(th_now_ms() <= end, "the stack kept the connection open for %d ms",
			      vh_deadline_ms);
		if (n < 0)
			vh_step(w);
		if (listener)
			vh_expect_no_event(w, listener);
	}
}

/* An MPA revision 1 Request (RFC 5044 §7.1.1) with CRC asked for; returns its length. */
static size_t mpa_req_rev1(uint8_t *b, const char *pd)
{
	size_t n = strlen(pd);

	memcpy(b, "MPA ID Req Frame", 16);
	b[16] = 0x40; /* C */
	b[17] = 1;
	b[18] = (uint8_t)(n >> 8);
	b[19] = (uint8_t)n;
	memcpy(b + 20, pd, n);
	return 20 + n;
}

/* A free port now: bound, then closed. */
static uint16_t closed_port(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	th_loopback(AF_INET, 0, &ss);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&ss, sizeof(struct sockaddr_in)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	close(fd);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* ---------------------------------------------------------------------- */
/* Event channels and ids                                                  */
/* ---------------------------------------------------------------------- */

START_TEST(event_channel_fd_becomes_readable_when_an_event_is_queued)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_id *id;
	struct iwcm_event *e;
	struct sockaddr_storage dst;
	struct pollfd pfd;
	int tag;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_ge(ch->fd, 0);
	pfd = (struct pollfd){.fd = ch->fd, .events = POLLIN};
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(iwcm_create_id(ch, &id, &tag, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, closed_port(), &dst);
	ck_assert_int_eq(iwcm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	/* Resolution completes at once: the fd alone must say so, nothing else is called. */
	ck_assert_int_eq(poll(&pfd, 1, vh_deadline_ms), 1);
	ck_assert(pfd.revents & POLLIN);
	alarm(20);
	ck_assert_int_eq(iwcm_get_cm_event(ch, &e), 0);
	alarm(0);
	ck_assert_int_eq(e->event, IWCM_EVENT_ADDR_RESOLVED);
	ck_assert_ptr_eq(e->id, id);
	ck_assert_ptr_eq(e->id->context, &tag);
	ck_assert_int_eq(e->status, 0);
	ck_assert_int_eq(iwcm_ack_cm_event(e), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(get_cm_event_on_a_nonblocking_channel_without_event_returns_eagain)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_event *e = NULL;

	ck_assert_ptr_nonnull(ch);
	ih_set_nonblock(ch->fd, true);
	errno = 0;
	ck_assert_int_eq(iwcm_get_cm_event(ch, &e), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

struct cm_waiter {
	struct iwcm_event_channel *ch;
	int ret, err;
};

static void *cm_wait_thread(void *arg)
{
	struct cm_waiter *w = arg;
	struct iwcm_event *e = NULL;

	errno = 0;
	w->ret = iwcm_get_cm_event(w->ch, &e);
	w->err = errno;
	return NULL;
}

/* librdmacm programs (rping) destroy the channel while their CM thread still
 * waits on it: the waiter must not touch the freed channel. */
START_TEST(destroying_a_channel_ends_a_blocked_get_cm_event_with_ebadf)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct cm_waiter w = {.ret = 1};
	struct timespec until;
	pthread_t t;

	w.ch = iwcm_create_event_channel_ctx(ctx);
	ck_assert_ptr_nonnull(w.ch);
	ck_assert_int_eq(pthread_create(&t, NULL, cm_wait_thread, &w), 0);
	usleep(100 * 1000); /* the thread is blocked in the call by now */
	ck_assert_int_eq(iwcm_destroy_event_channel(w.ch), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	ck_assert_int_eq(pthread_timedjoin_np(t, NULL, &until), 0);
	ck_assert_int_eq(w.ret, -1);
	ck_assert_int_eq(w.err, EBADF);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(create_id_fills_the_id_and_the_channel_is_busy_until_it_is_destroyed)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_id *id = NULL;
	int tag;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(iwcm_create_id(ch, &id, &tag, IWCM_PS_TCP), 0);
	ck_assert_ptr_nonnull(id);
	ck_assert_ptr_eq(id->verbs, ctx);
	ck_assert_ptr_eq(id->channel, ch);
	ck_assert_ptr_eq(id->context, &tag);
	ck_assert_ptr_null(id->qp);
	ck_assert_int_eq(id->ps, IWCM_PS_TCP);
	errno = 0;
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(iwv_close_device(ctx), EBUSY);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(options_default_has_the_documented_values_and_a_new_id_starts_with_them)
{
	struct iwcm_options d, got;
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_id *id;

	memset(&d, 0xA5, sizeof(d));
	iwcm_options_default(&d);
	ck_assert_uint_eq(d.mpa_rev, 2);
	ck_assert(d.crc);
	ck_assert(!d.markers);
	ck_assert(d.accept_markers);
	ck_assert(!d.p2p);
	ck_assert_uint_eq(d.rtr, MPA_RTR_ALL);
	ck_assert_uint_eq(d.timeout_ms, 10000);
	ck_assert_uint_eq(d.first_fpdu_delay_ms, 20);
	ck_assert_uint_eq(d.close_timeout_ms, 2000);
	ck_assert_uint_eq(d.mulpdu_max, 0);
	ck_assert(!d.trace);
	ck_assert_int_eq(iwcm_create_id(ch, &id, NULL, IWCM_PS_TCP), 0);
	memset(&got, 0x5A, sizeof(got));
	ck_assert_int_eq(iwcm_get_options(id, &got), 0);
	ck_assert_uint_eq(got.mpa_rev, d.mpa_rev);
	ck_assert_int_eq(got.crc, d.crc);
	ck_assert_int_eq(got.markers, d.markers);
	ck_assert_int_eq(got.accept_markers, d.accept_markers);
	ck_assert_int_eq(got.p2p, d.p2p);
	ck_assert_uint_eq(got.rtr, d.rtr);
	ck_assert_uint_eq(got.timeout_ms, d.timeout_ms);
	ck_assert_uint_eq(got.first_fpdu_delay_ms, d.first_fpdu_delay_ms);
	ck_assert_uint_eq(got.close_timeout_ms, d.close_timeout_ms);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

/* Loop: revision 0, revision 3. */
START_TEST(set_options_with_an_unknown_mpa_revision_returns_einval)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_options o, got;
	struct iwcm_id *id;

	ck_assert_int_eq(iwcm_create_id(ch, &id, NULL, IWCM_PS_TCP), 0);
	iwcm_options_default(&o);
	o.mpa_rev = _i == 0 ? 0 : 3;
	errno = 0;
	ck_assert_int_eq(iwcm_set_options(id, &o), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(iwcm_get_options(id, &got), 0);
	ck_assert_uint_eq(got.mpa_rev, 2);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(destroy_id_with_an_unacknowledged_event_returns_ebusy)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_id *id;
	struct iwcm_event *e;
	struct sockaddr_storage dst;

	ck_assert_int_eq(iwcm_create_id(ch, &id, NULL, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, closed_port(), &dst);
	ck_assert_int_eq(iwcm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	alarm(20);
	ck_assert_int_eq(iwcm_get_cm_event(ch, &e), 0);
	alarm(0);
	ck_assert_int_eq(e->event, IWCM_EVENT_ADDR_RESOLVED);
	errno = 0;
	ck_assert_int_eq(iwcm_destroy_id(id), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(iwcm_ack_cm_event(e), 0);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(destroy_id_with_a_qp_attached_detaches_and_flushes_it_for_iwv_destroy_qp)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	struct iwv_cq *cq = iwv_create_cq(ctx, 64, NULL, NULL, 0);
	struct iwv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IWV_QPT_RC,
	};
	static uint8_t buf[64];
	struct iwv_mr *mr = iwv_reg_mr(pd, buf, sizeof(buf), IWV_ACCESS_LOCAL_WRITE);
	struct iwv_sge sge = {(uint64_t)(uintptr_t)buf, sizeof(buf), mr->lkey};
	struct iwv_recv_wr wr[2] = {{.wr_id = 1, .next = &wr[1], .sg_list = &sge, .num_sge = 1},
				    {.wr_id = 2, .sg_list = &sge, .num_sge = 1}},
			   *bad = NULL;
	struct iwv_wc wc[4];
	struct iwcm_id *id;
	struct iwv_qp *qp;
	int n = 0, r;

	ck_assert_int_eq(iwcm_create_id(ch, &id, NULL, IWCM_PS_TCP), 0);
	ck_assert_int_eq(iwcm_create_qp(id, pd, &qa), 0);
	qp = id->qp;
	ck_assert_ptr_nonnull(qp);
	ck_assert_ptr_eq(qp->pd, pd);
	ck_assert_int_eq(iwv_post_recv(qp, wr, &bad), 0);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	while ((r = iwv_poll_cq(cq, 4 - n, wc + n)) > 0)
		n += r;
	ck_assert_int_eq(n, 2);
	vh_wc_is(&wc[0], 1, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	vh_wc_is(&wc[1], 2, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	ck_assert_int_eq(iwv_destroy_cq(cq), EBUSY);
	ck_assert_int_eq(iwv_destroy_qp(qp), 0);
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	ck_assert_int_eq(iwv_destroy_cq(cq), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(destroy_id_drops_its_queued_events_not_yet_returned)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_id *id;
	struct iwcm_event *e = NULL;
	struct sockaddr_storage dst;
	struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};

	ck_assert_int_eq(iwcm_create_id(ch, &id, NULL, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, closed_port(), &dst);
	ck_assert_int_eq(iwcm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	ck_assert_int_eq(poll(&pfd, 1, vh_deadline_ms), 1);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	ih_set_nonblock(ch->fd, true);
	errno = 0;
	ck_assert_int_eq(iwcm_get_cm_event(ch, &e), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(an_attached_qp_made_with_iwv_create_qp_connects_and_moves_data)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct iwv_qp_init_attr qa;
	struct iwv_qp *qp;
	struct sockaddr_storage dst;

	vh_cfg_default(&cfg);
	vh_pair_listen(&p, &cfg);
	ck_assert_int_eq(iwcm_create_id(p.c.ch, &p.c.id, NULL, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, p.port, &dst);
	ck_assert_int_eq(iwcm_resolve_addr(p.c.id, NULL, (struct sockaddr *)&dst, 1000), 0);
	vh_expect(&p.w, p.c.id, IWCM_EVENT_ADDR_RESOLVED, NULL);
	ck_assert_int_eq(iwcm_resolve_route(p.c.id, 1000), 0);
	vh_expect(&p.w, p.c.id, IWCM_EVENT_ROUTE_RESOLVED, NULL);
	qa = vh_qp_attr(&cfg, &p.c);
	qp = iwv_create_qp(p.c.pd, &qa);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(iwcm_attach_qp(p.c.id, qp), 0);
	ck_assert_ptr_eq(p.c.id->qp, qp);
	p.c.qp = qp;
	p.c.cap = qa.cap;
	ck_assert_int_eq(iwcm_connect(p.c.id, &cfg.c_param), 0);
	vh_pair_accept(&p);
	vh_pair_wait_up(&p);
	exchange(&p, th_seed_for(1));
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Bind, listen, resolve                                                   */
/* ---------------------------------------------------------------------- */

START_TEST(bind_to_port_0_and_listen_give_a_src_port_a_tcp_client_can_reach)
{
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_id *id, *id2;
	struct sockaddr_storage ss;
	const struct sockaddr_in *la;
	uint16_t port;
	int fd;

	ck_assert_int_eq(iwcm_create_id(ch, &id, NULL, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, 0, &ss);
	ck_assert_int_eq(iwcm_bind_addr(id, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwcm_listen(id, 8), 0);
	port = iwcm_get_src_port(id);
	ck_assert_uint_ne(port, 0);
	la = (const struct sockaddr_in *)iwcm_get_local_addr(id);
	ck_assert_ptr_nonnull(la);
	ck_assert_int_eq(la->sin_family, AF_INET);
	ck_assert_uint_eq(ntohs(la->sin_port), port);
	ck_assert_uint_eq(ntohl(la->sin_addr.s_addr), INADDR_LOOPBACK);
	fd = raw_connect(port);
	close(fd);

	/* The port is taken now. */
	ck_assert_int_eq(iwcm_create_id(ch, &id2, NULL, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, port, &ss);
	errno = 0;
	ck_assert_int_eq(iwcm_bind_addr(id2, (struct sockaddr *)&ss), -1);
	ck_assert_int_eq(errno, EADDRINUSE);
	ck_assert_int_eq(iwcm_destroy_id(id2), 0);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(resolve_addr_and_route_report_resolved_events_and_the_destination)
{
	struct vh_world w = {0};
	struct iwv_context *ctx = vh_ctx_open(-1);
	struct iwcm_event_channel *ch = iwcm_create_event_channel_ctx(ctx);
	struct iwcm_id *id;
	struct sockaddr_storage dst;
	struct vh_ev ev;
	uint16_t port = closed_port();

	vh_world_add(&w, ch, ctx);
	ck_assert_int_eq(iwcm_create_id(ch, &id, NULL, IWCM_PS_TCP), 0);
	th_loopback(AF_INET, port, &dst);
	ck_assert_int_eq(iwcm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	vh_expect(&w, id, IWCM_EVENT_ADDR_RESOLVED, &ev);
	ck_assert_int_eq(ev.status, 0);
	ck_assert_uint_eq(iwcm_get_dst_port(id), port);
	ck_assert_uint_eq(sa_port(iwcm_get_peer_addr(id)), port);
	ck_assert_int_eq(id->route.addr.dst_addr.sa_family, AF_INET);
	ck_assert_int_eq(iwcm_resolve_route(id, 1000), 0);
	vh_expect(&w, id, IWCM_EVENT_ROUTE_RESOLVED, &ev);
	ck_assert_int_eq(ev.status, 0);
	vh_expect_no_event(&w, id);
	ck_assert_int_eq(iwcm_destroy_id(id), 0);
	vh_world_fini(&w);
	ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Connect, accept, reject                                                 */
/* ---------------------------------------------------------------------- */

static const size_t pd_lens[] = {0, 1, 255, 256, 508};
#define NPDLENS (sizeof(pd_lens) / sizeof(pd_lens[0]))

static void set_pd(struct iwcm_conn_param *cp, const uint8_t *pd, size_t len)
{
	cp->private_data = len ? pd : NULL;
	if (len <= 255)
		cp->private_data_len = (uint8_t)len;
	else
		cp->private_data_len16 = (uint16_t)len;
}

/* Loop: family (IPv4, IPv6) x private data length (0, 1, 255, 256, 508). */
START_TEST(connect_and_accept_carry_private_data_both_ways)
{
	int family = _i < (int)NPDLENS ? AF_INET : AF_INET6;
	size_t len = pd_lens[_i % NPDLENS];
	uint8_t cpd[512], spd[512];
	struct vh_cfg cfg;
	struct vh_pair p;
	const struct sockaddr *cl, *sp;

	vh_fill(cpd, sizeof(cpd), th_seed_for(2));
	vh_fill(spd, sizeof(spd), th_seed_for(3));
	vh_cfg_default(&cfg);
	cfg.family = family;
	cfg.two_ctx = true;
	set_pd(&cfg.c_param, cpd, len);
	set_pd(&cfg.s_param, spd, len == 0 ? 0 : len - 1);
	vh_pair_up(&p, &cfg);

	ck_assert_uint_eq(p.req.pd_len, len);
	vh_same(p.req.pd, cpd, len, "client private data in CONNECT_REQUEST");
	ck_assert_uint_eq(p.c.est.pd_len, len == 0 ? 0 : len - 1);
	vh_same(p.c.est.pd, spd, p.c.est.pd_len, "server private data in ESTABLISHED");
	ck_assert_int_eq(p.c.est.status, 0);
	ck_assert_int_eq(p.s.est.status, 0);

	cl = iwcm_get_local_addr(p.c.id);
	sp = iwcm_get_peer_addr(p.s.id);
	ck_assert_int_eq(cl->sa_family, family);
	ck_assert_int_eq(sp->sa_family, family);
	ck_assert_uint_ne(sa_port(cl), 0);
	ck_assert_uint_eq(sa_port(cl), sa_port(sp));
	ck_assert_uint_eq(iwcm_get_dst_port(p.c.id), p.port);
	ck_assert_uint_eq(iwcm_get_src_port(p.s.id), p.port);
	exchange(&p, th_seed_for(4));
	vh_pair_down(&p);
}
END_TEST

START_TEST(revision_1_carries_512_octets_of_private_data)
{
	uint8_t cpd[512], spd[512];
	struct vh_cfg cfg;
	struct vh_pair p;

	vh_fill(cpd, sizeof(cpd), th_seed_for(5));
	vh_fill(spd, sizeof(spd), th_seed_for(6));
	vh_cfg_default(&cfg);
	iwcm_options_default(&cfg.c_opt);
	cfg.c_opt.mpa_rev = 1;
	cfg.c_opt_set = true;
	cfg.s_opt = cfg.c_opt;
	cfg.s_opt_set = true;
	set_pd(&cfg.c_param, cpd, 512);
	set_pd(&cfg.s_param, spd, 512);
	vh_pair_up(&p, &cfg);
	ck_assert_uint_eq(p.c.est.mpa.mpa_rev, 1);
	ck_assert_uint_eq(p.req.pd_len, 512);
	vh_same(p.req.pd, cpd, 512, "rev 1 client private data");
	ck_assert_uint_eq(p.c.est.pd_len, 512);
	vh_same(p.c.est.pd, spd, 512, "rev 1 server private data");
	exchange(&p, th_seed_for(7));
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 = 509 octets with rev 2, 1 = 513 octets with rev 1. */
START_TEST(connect_with_more_private_data_than_the_revision_allows_returns_einval)
{
	static uint8_t pd[600];
	struct vh_cfg cfg;
	struct vh_pair p;
	struct iwcm_conn_param cp = {0};

	vh_cfg_default(&cfg);
	iwcm_options_default(&cfg.c_opt);
	cfg.c_opt.mpa_rev = _i == 0 ? 2 : 1;
	cfg.c_opt_set = true;
	vh_pair_listen(&p, &cfg);
	vh_pair_client(&p);
	set_pd(&cp, pd, _i == 0 ? 509 : 513);
	errno = 0;
	ck_assert_int_eq(iwcm_connect(p.c.id, &cp), -1);
	ck_assert_int_eq(errno, EINVAL);
	vh_expect_no_event(&p.w, p.listen);
	p.c.disconnected = true; /* never connected */
	vh_pair_down(&p);
}
END_TEST

START_TEST(ird_and_ord_negotiation_is_visible_in_the_established_events)
{
	struct vh_cfg cfg;
	struct vh_pair p;

	vh_cfg_default(&cfg);
	cfg.c_param.responder_resources = 4; /* client IRD */
	cfg.c_param.initiator_depth = 8;     /* client ORD */
	cfg.s_param.responder_resources = 6; /* server IRD */
	cfg.s_param.initiator_depth = 10;    /* server ORD */
	vh_pair_up(&p, &cfg);
	/* RFC 6581 §9.1: each ORD is lowered to the other side's IRD. */
	ck_assert_uint_eq(p.c.est.mpa.ird, 4);
	ck_assert_uint_eq(p.c.est.mpa.ord, 6);
	ck_assert_uint_eq(p.s.est.mpa.ird, 6);
	ck_assert_uint_eq(p.s.est.mpa.ord, 4);
	exchange(&p, th_seed_for(8));
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 = reject with private data, 1 = without. */
START_TEST(reject_gives_the_client_rejected_econnrefused_with_the_private_data)
{
	static const char why[] = "not today";
	uint8_t len = _i == 0 ? (uint8_t)strlen(why) : 0;
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_ev ev;

	vh_cfg_default(&cfg);
	vh_pair_listen(&p, &cfg);
	vh_pair_connect(&p);
	vh_expect(&p.w, p.listen, IWCM_EVENT_CONNECT_REQUEST, &p.req);
	p.s.id = p.req.id;
	ck_assert_int_eq(iwcm_reject(p.s.id, len ? why : NULL, len), 0);
	vh_expect(&p.w, p.c.id, IWCM_EVENT_REJECTED, &ev);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	ck_assert_int_eq(ev.iw_err, IW_EMPA_REJECTED);
	ck_assert_uint_eq(ev.pd_len, len);
	vh_same(ev.pd, why, len, "reject private data");
	p.c.disconnected = true;
	p.s.disconnected = true;
	vh_pair_down(&p);
}
END_TEST

START_TEST(connect_to_a_closed_port_gives_rejected_econnrefused)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_ev ev;

	vh_cfg_default(&cfg);
	vh_pair_listen(&p, &cfg);
	p.port = closed_port();
	vh_pair_connect(&p);
	vh_expect(&p.w, p.c.id, IWCM_EVENT_REJECTED, &ev);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	/* the socket's errno, in its own place of the iw_err space */
	ck_assert_int_eq(ev.iw_err, iw_err_sys(ECONNREFUSED));
	ck_assert_str_eq(iwv_errname(ev.iw_err), "ECONNREFUSED");
	ck_assert_uint_eq(ev.pd_len, 0);
	vh_expect_no_event(&p.w, p.listen);
	p.c.disconnected = true;
	vh_pair_down(&p);
}
END_TEST

/* With connect_retry_ms a refused connect is tried again until the bound, then REJECTED. */
START_TEST(a_refused_connect_is_retried_for_connect_retry_ms)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_ev ev;
	uint64_t t0;

	vh_cfg_default(&cfg);
	cfg.c_opt_set = true;
	iwcm_options_default(&cfg.c_opt);
	cfg.c_opt.connect_retry_ms = 400;
	vh_pair_listen(&p, &cfg);
	p.port = closed_port();
	t0 = th_now_ms();
	vh_pair_connect(&p);
	vh_expect(&p.w, p.c.id, IWCM_EVENT_REJECTED, &ev);
	ck_assert_uint_ge(th_now_ms() - t0, 350);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	ck_assert_int_eq(ev.iw_err, iw_err_sys(ECONNREFUSED));
	p.c.disconnected = true;
	vh_pair_down(&p);
}
END_TEST

START_TEST(the_default_event_channel_connects_on_the_default_context)
{
	struct vh_cfg cfg;
	struct vh_pair p;

	vh_cfg_default(&cfg);
	cfg.default_channel = true;
	vh_pair_up(&p, &cfg);
	ck_assert_ptr_eq(p.c.id->verbs, p.s.id->verbs);
	exchange(&p, th_seed_for(9));
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* MPA options                                                             */
/* ---------------------------------------------------------------------- */

enum mk { MK_NONE, MK_CLIENT, MK_SERVER, MK_BOTH };
static const char *const mk_names[] = {"none", "client asks", "server asks", "both ask"};
static const uint8_t p2p_forms[] = {MPA_RTR_NONE, MPA_RTR_WRITE, MPA_RTR_READ, MPA_RTR_SEND};
static const char *const p2p_names[] = {"off", "RTR write", "RTR read", "RTR send"};

struct combo {
	uint8_t rev;
	bool crc;
	enum mk markers;
	int p2p; /* index into p2p_forms */
};

/* 0..31: revision 2 x CRC x Markers x P2P; 32..39: revision 1 x CRC x Markers. */
#define NCOMBOS 40
static struct combo combo_of(int i)
{
	struct combo c;

	if (i < 32) {
		c.rev = 2;
		c.crc = i & 1;
		c.markers = (enum mk)((i >> 1) & 3);
		c.p2p = (i >> 3) & 3;
	} else {
		c.rev = 1;
		c.crc = (i - 32) & 1;
		c.markers = (enum mk)(((i - 32) >> 1) & 3);
		c.p2p = 0;
	}
	return c;
}

START_TEST(every_mpa_option_combination_connects_reports_what_was_negotiated_and_moves_data)
{
	struct combo k = combo_of(_i);
	bool cm = k.markers == MK_CLIENT || k.markers == MK_BOTH;
	bool sm = k.markers == MK_SERVER || k.markers == MK_BOTH;
	struct vh_cfg cfg;
	struct vh_pair p;
	char what[128];

	snprintf(what, sizeof(what), "rev %u, CRC %s, markers %s, p2p %s", k.rev,
		 k.crc ? "on" : "off", mk_names[k.markers], p2p_names[k.p2p]);
	fprintf(stderr, "combination %d: %s\n", _i, what);
	vh_cfg_default(&cfg);
	cfg.two_ctx = _i & 1;
	iwcm_options_default(&cfg.c_opt);
	cfg.c_opt.mpa_rev = k.rev;
	cfg.c_opt.crc = k.crc;
	cfg.c_opt.p2p = k.p2p != 0;
	if (k.p2p)
		cfg.c_opt.rtr = p2p_forms[k.p2p];
	cfg.s_opt = cfg.c_opt;
	cfg.c_opt.markers = cm;
	cfg.s_opt.markers = sm;
	cfg.c_opt_set = true;
	cfg.s_opt_set = true;
	vh_pair_up(&p, &cfg);

	/* What the client asked, as the server saw it. */
	ck_assert_msg(p.req.mpa.mpa_rev == k.rev, "%s: request rev %u", what, p.req.mpa.mpa_rev);
	ck_assert_msg(p.req.mpa.crc == k.crc, "%s: request C %d", what, p.req.mpa.crc);
	ck_assert_msg((p.req.mpa.markers_tx || p.req.mpa.markers_rx) == cm, "%s: request M", what);
	/* What both ended with. */
	for (int side = 0; side < 2; side++) {
		const struct vh_ev *e = side ? &p.s.est : &p.c.est;
		bool rx = side ? sm : cm, tx = side ? cm : sm;
		const char *who = side ? "server" : "client";

		ck_assert_msg(e->mpa.mpa_rev == k.rev, "%s: %s rev %u", what, who, e->mpa.mpa_rev);
		ck_assert_msg(e->mpa.crc == k.crc, "%s: %s crc %d", what, who, e->mpa.crc);
		ck_assert_msg(e->mpa.markers_rx == rx && e->mpa.markers_tx == tx,
			      "%s: %s markers rx %d tx %d", what, who, e->mpa.markers_rx,
			      e->mpa.markers_tx);
		ck_assert_msg(e->mpa.p2p == (k.p2p != 0), "%s: %s p2p %d", what, who, e->mpa.p2p);
		if (k.p2p)
			ck_assert_msg(e->mpa.rtr == p2p_forms[k.p2p], "%s: %s rtr %u", what, who,
				      e->mpa.rtr);
		if (k.rev == 2)
			ck_assert_msg(e->mpa.ird == 16 && e->mpa.ord == 16,
				      "%s: %s IRD %u ORD %u (defaults 16)", what, who, e->mpa.ird,
				      e->mpa.ord);
	}
	exchange(&p, th_seed_for((uint64_t)_i));
	/* A second round: the options hold beyond the first messages. */
	exchange(&p, th_seed_for((uint64_t)_i + 100));
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 = only the client asks for CRC, 1 = only the server. */
START_TEST(crc_is_used_when_either_side_asks_for_it)
{
	struct vh_cfg cfg;
	struct vh_pair p;

	vh_cfg_default(&cfg);
	iwcm_options_default(&cfg.c_opt);
	cfg.s_opt = cfg.c_opt;
	cfg.c_opt.crc = _i == 0;
	cfg.s_opt.crc = _i == 1;
	cfg.c_opt_set = true;
	cfg.s_opt_set = true;
	vh_pair_up(&p, &cfg);
	ck_assert(p.c.est.mpa.crc);
	ck_assert(p.s.est.mpa.crc);
	exchange(&p, th_seed_for(10));
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 = client rev 2 / server rev 1, 1 = client rev 1 / server rev 2. */
START_TEST(mixed_revisions_settle_on_revision_1)
{
	struct vh_cfg cfg;
	struct vh_pair p;

	vh_cfg_default(&cfg);
	iwcm_options_default(&cfg.c_opt);
	cfg.s_opt = cfg.c_opt;
	cfg.c_opt.mpa_rev = _i == 0 ? 2 : 1;
	cfg.s_opt.mpa_rev = _i == 0 ? 1 : 2;
	cfg.c_opt_set = true;
	cfg.s_opt_set = true;
	vh_pair_up(&p, &cfg);
	ck_assert_uint_eq(p.req.mpa.mpa_rev, cfg.c_opt.mpa_rev);
	ck_assert_uint_eq(p.c.est.mpa.mpa_rev, 1);
	ck_assert_uint_eq(p.s.est.mpa.mpa_rev, 1);
	ck_assert(!p.c.est.mpa.p2p);
	exchange(&p, th_seed_for(11));
	vh_pair_down(&p);
}
END_TEST

START_TEST(no_common_rtr_form_gives_the_client_connect_error_eproto_with_iw_err_rtr)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_ev ev;
	uint64_t end;

	vh_cfg_default(&cfg);
	iwcm_options_default(&cfg.c_opt);
	cfg.c_opt.p2p = true;
	cfg.s_opt = cfg.c_opt;
	cfg.c_opt.rtr = MPA_RTR_WRITE;
	cfg.s_opt.rtr = MPA_RTR_READ;
	cfg.c_opt_set = true;
	cfg.s_opt_set = true;
	vh_pair_listen(&p, &cfg);
	vh_pair_connect(&p);
	vh_pair_accept(&p);
	vh_expect(&p.w, p.c.id, IWCM_EVENT_CONNECT_ERROR, &ev);
	ck_assert_int_eq(ev.status, -EPROTO);
	ck_assert_msg(ev.iw_err == IW_EMPA_RTR, "iw_err %s", iwv_errname(ev.iw_err));
	/* The server learns the connection is gone; ESTABLISHED may come first. */
	end = vh_deadline();
	for (;;) {
		ck_assert_msg(vh_next(&p.w, p.s.id, &ev, vh_deadline_ms), "server: no event");
		if (ev.event == IWCM_EVENT_DISCONNECTED || ev.event == IWCM_EVENT_CONNECT_ERROR)
			break;
		ck_assert_msg(ev.event == IWCM_EVENT_ESTABLISHED, "server: %s",
			      vh_evname(ev.event));
		ck_assert(th_now_ms() <= end);
	}
	p.c.disconnected = true;
	p.s.disconnected = true;
	vh_pair_down(&p);
}
END_TEST

START_TEST(listener_options_are_inherited_by_the_connect_request_id)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct iwcm_options got;

	vh_cfg_default(&cfg);
	iwcm_options_default(&cfg.s_opt);
	cfg.s_opt.crc = false;
	cfg.s_opt.markers = true;
	cfg.s_opt.p2p = true;
	cfg.s_opt.rtr = MPA_RTR_READ | MPA_RTR_SEND;
	cfg.s_opt.timeout_ms = 4321;
	cfg.s_opt.first_fpdu_delay_ms = 3;
	cfg.s_opt.close_timeout_ms = 1234;
	cfg.s_opt.mulpdu_max = 1000;
	cfg.s_opt_set = true;
	vh_pair_listen(&p, &cfg);
	ck_assert_int_eq(iwcm_get_options(p.listen, &got), 0);
	ck_assert_uint_eq(got.timeout_ms, 4321);
	vh_pair_connect(&p);
	vh_expect(&p.w, p.listen, IWCM_EVENT_CONNECT_REQUEST, &p.req);
	p.s.id = p.req.id;
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(iwcm_get_options(p.s.id, &got), 0);
	ck_assert_uint_eq(got.mpa_rev, cfg.s_opt.mpa_rev);
	ck_assert_int_eq(got.crc, false);
	ck_assert_int_eq(got.markers, true);
	ck_assert_int_eq(got.accept_markers, cfg.s_opt.accept_markers);
	ck_assert_int_eq(got.p2p, true);
	ck_assert_uint_eq(got.rtr, MPA_RTR_READ | MPA_RTR_SEND);
	ck_assert_uint_eq(got.timeout_ms, 4321);
	ck_assert_uint_eq(got.first_fpdu_delay_ms, 3);
	ck_assert_uint_eq(got.close_timeout_ms, 1234);
	ck_assert_uint_eq(got.mulpdu_max, 1000);
	ck_assert_int_eq(iwcm_reject(p.s.id, NULL, 0), 0);
	vh_expect(&p.w, p.c.id, IWCM_EVENT_REJECTED, NULL);
	p.c.disconnected = true;
	p.s.disconnected = true;
	vh_pair_down(&p);
}
END_TEST

/* Loop: first_fpdu_delay_ms 0, 20. */
START_TEST(first_fpdu_delay_0_and_20_both_connect_and_move_data)
{
	uint32_t delay = _i == 0 ? 0 : 20;
	struct vh_cfg cfg;
	struct vh_pair p;
	struct iwcm_options got;

	vh_cfg_default(&cfg);
	iwcm_options_default(&cfg.c_opt);
	cfg.c_opt.first_fpdu_delay_ms = delay;
	cfg.s_opt = cfg.c_opt;
	cfg.c_opt_set = true;
	cfg.s_opt_set = true;
	vh_pair_up(&p, &cfg);
	ck_assert_int_eq(iwcm_get_options(p.c.id, &got), 0);
	ck_assert_uint_eq(got.first_fpdu_delay_ms, delay);
	exchange(&p, th_seed_for(12));
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Disconnect                                                              */
/* ---------------------------------------------------------------------- */

/* Loop: 0 = the client disconnects, 1 = the server does. */
START_TEST(disconnect_gives_both_sides_disconnected_and_flushes_posted_receives)
{
	struct vh_pair p;
	struct vh_cfg cfg;
	struct vh_buf *cb, *sb;
	struct vh_side *first, *second;
	struct iwv_qp_attr qa;
	struct iwv_qp_init_attr ia;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	vh_pair_up(&p, &cfg);
	first = _i == 0 ? &p.c : &p.s;
	second = _i == 0 ? &p.s : &p.c;
	cb = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	sb = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 3; i++)
		vh_post_recv(p.s.qp, 10 + (uint64_t)i, sb, 0, 4096);
	for (int i = 0; i < 2; i++)
		vh_post_recv(p.c.qp, 20 + (uint64_t)i, cb, 0, 4096);
	ck_assert_int_eq(iwcm_disconnect(first->id), 0);
	vh_side_wait_disconnected(&p, second);
	vh_side_wait_disconnected(&p, first);
	for (int i = 0; i < 3; i++) {
		struct iwv_wc wc = vh_poll1(&p.w, p.s.rcq);

		vh_wc_is(&wc, 10 + (uint64_t)i, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	}
	for (int i = 0; i < 2; i++) {
		struct iwv_wc wc = vh_poll1(&p.w, p.c.rcq);

		vh_wc_is(&wc, 20 + (uint64_t)i, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	}
	ck_assert_int_eq(iwv_query_qp(second->qp, &qa, IWV_QP_STATE, &ia), 0);
	ck_assert_int_eq(qa.qp_state, IWV_QPS_ERR);
	ck_assert_int_eq(iwv_query_qp(first->qp, &qa, IWV_QP_STATE, &ia), 0);
	ck_assert_int_eq(qa.qp_state, IWV_QPS_ERR);
	/* The close the application asked for is not a failure. */
	ck_assert_msg(qa.qp_err == 0, "qp_err %s", iwv_errname(qa.qp_err));
	vh_pair_down(&p);
}
END_TEST

START_TEST(disconnect_with_queued_sends_completes_them_all_before_disconnected)
{
	enum { N = 50, LEN = 65536 };
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_wc wc[N + 1];
	int n;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, (size_t)N * LEN, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, (size_t)(N + 2) * LEN, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, (size_t)N * LEN, th_seed_for(13));
	for (int i = 0; i < N + 2; i++)
		vh_post_recv(p.s.qp, 100 + (uint64_t)i, rcv, (size_t)i * LEN, LEN);
	for (int i = 0; i < N; i++)
		vh_post_send(p.c.qp, IWV_WR_SEND, (uint64_t)i, IWV_SEND_SIGNALED, src,
			     (size_t)i * LEN, LEN, NULL, 0);
	ck_assert_int_eq(iwcm_disconnect(p.c.id), 0);
	vh_side_wait_disconnected(&p, &p.c);
	/* Already there when DISCONNECTED was reported: no waiting. */
	n = 0;
	for (int r; n < N + 1 && (r = iwv_poll_cq(p.c.scq, N + 1 - n, wc + n)) > 0;)
		n += r;
	ck_assert_int_eq(n, N);
	for (int i = 0; i < N; i++)
		vh_wc_is(&wc[i], (uint64_t)i, IWV_WC_SUCCESS, IWV_WC_SEND);
	vh_side_wait_disconnected(&p, &p.s);
	for (int i = 0; i < N + 2; i++) {
		struct iwv_wc r = vh_poll1(&p.w, p.s.rcq);

		vh_wc_is(&r, 100 + (uint64_t)i, i < N ? IWV_WC_SUCCESS : IWV_WC_WR_FLUSH_ERR,
			 IWV_WC_RECV);
		if (i < N)
			ck_assert_uint_eq(r.byte_len, LEN);
	}
	vh_same(rcv->p, src->p, (size_t)N * LEN, "sends queued before the disconnect");
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Many connections                                                        */
/* ---------------------------------------------------------------------- */

#define NCONN	  64
#define CONN_LEN  (2 * VH_MIB)
#define CHUNK	  (256 * 1024)
#define NCHUNK	  ((int)(CONN_LEN / CHUNK))
#define SRC_SPAN  (8 * VH_MIB)
#define CONN_SKEW (97 * 1024)

struct conn {
	struct iwcm_id *cid, *sid;
	struct iwv_qp *cqp, *sqp;
	uint32_t tag;
	bool write; /* RDMA Write + notification instead of Sends */
};

static size_t conn_src_off(int i)
{
	return ((size_t)i * CONN_SKEW) % (SRC_SPAN - CONN_LEN);
}

START_TEST(sixty_four_connections_at_once_each_move_2_mib_intact)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct conn *cn = calloc(NCONN, sizeof(*cn));
	struct vh_buf *src, *sink, *note;
	struct sockaddr_storage dst;
	int nsend = 0, nrecv = 0, left;

	vh_deadline_ms = 120000;
	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.cap.max_send_wr = 16;
	cfg.cap.max_recv_wr = 16;
	vh_pair_listen(&p, &cfg);
	src = vh_buf_new(&p, &p.c, SRC_SPAN, IWV_ACCESS_LOCAL_WRITE);
	sink = vh_buf_new(&p, &p.s, (size_t)NCONN * CONN_LEN, VH_ACCESS_ALL);
	note = vh_buf_new(&p, &p.s, NCONN * 16, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, SRC_SPAN, th_seed_for(14));
	memset(sink->p, 0, (size_t)NCONN * CONN_LEN);

	/* Every client connects before any request is answered. */
	th_loopback(AF_INET, p.port, &dst);
	for (int i = 0; i < NCONN; i++) {
		struct iwcm_conn_param cp = {0};
		struct iwv_qp_init_attr qa = vh_qp_attr(&cfg, &p.c);

		cn[i].tag = (uint32_t)i;
		cn[i].write = i & 1;
		ck_assert_int_eq(iwcm_create_id(p.c.ch, &cn[i].cid, &cn[i], IWCM_PS_TCP), 0);
		ck_assert_int_eq(iwcm_resolve_addr(cn[i].cid, NULL, (struct sockaddr *)&dst, 1000),
				 0);
		vh_expect(&p.w, cn[i].cid, IWCM_EVENT_ADDR_RESOLVED, NULL);
		ck_assert_int_eq(iwcm_resolve_route(cn[i].cid, 1000), 0);
		vh_expect(&p.w, cn[i].cid, IWCM_EVENT_ROUTE_RESOLVED, NULL);
		ck_assert_int_eq(iwcm_create_qp(cn[i].cid, p.c.pd, &qa), 0);
		cn[i].cqp = cn[i].cid->qp;
		cp.private_data = &cn[i].tag;
		cp.private_data_len = sizeof(cn[i].tag);
		ck_assert_int_eq(iwcm_connect(cn[i].cid, &cp), 0);
	}
	for (int k = 0; k < NCONN; k++) {
		struct vh_ev ev;
		struct iwv_qp_init_attr qa = vh_qp_attr(&cfg, &p.s);
		uint32_t i;

		vh_expect(&p.w, p.listen, IWCM_EVENT_CONNECT_REQUEST, &ev);
		ck_assert_uint_eq(ev.pd_len, sizeof(i));
		memcpy(&i, ev.pd, sizeof(i));
		ck_assert_uint_lt(i, NCONN);
		ck_assert_ptr_null(cn[i].sid);
		cn[i].sid = ev.id;
		ck_assert_int_eq(iwcm_create_qp(ev.id, p.s.pd, &qa), 0);
		cn[i].sqp = ev.id->qp;
		if (cn[i].write) {
			vh_post_recv(cn[i].sqp, (uint64_t)i << 8, note, (size_t)i * 16, 16);
		} else {
			for (int c = 0; c < NCHUNK; c++)
				vh_post_recv(cn[i].sqp, (uint64_t)i << 8 | (uint64_t)c, sink,
					     (size_t)i * CONN_LEN + (size_t)c * CHUNK, CHUNK);
		}
		ck_assert_int_eq(iwcm_accept(ev.id, &cfg.s_param), 0);
	}
	for (int i = 0; i < NCONN; i++) {
		vh_expect(&p.w, cn[i].cid, IWCM_EVENT_ESTABLISHED, NULL);
		vh_expect(&p.w, cn[i].sid, IWCM_EVENT_ESTABLISHED, NULL);
	}

	for (int i = 0; i < NCONN; i++) {
		size_t so = conn_src_off(i);

		if (cn[i].write) {
			vh_post_send(cn[i].cqp, IWV_WR_RDMA_WRITE, (uint64_t)i << 8, 0, src, so,
				     CONN_LEN, sink, (size_t)i * CONN_LEN);
			vh_post_send(cn[i].cqp, IWV_WR_SEND, (uint64_t)i << 8 | 1, 0, src, 0, 0,
				     NULL, 0);
			nsend += 2;
			nrecv += 1;
		} else {
			for (int c = 0; c < NCHUNK; c++)
				vh_post_send(cn[i].cqp, IWV_WR_SEND, (uint64_t)i << 8 | (uint64_t)c,
					     0, src, so + (size_t)c * CHUNK, CHUNK, NULL, 0);
			nsend += NCHUNK;
			nrecv += NCHUNK;
		}
	}
	for (left = nsend; left > 0; left--) {
		struct iwv_wc wc = vh_poll1(&p.w, p.c.scq);

		ck_assert_msg(wc.status == IWV_WC_SUCCESS, "connection %llu: %s",
			      (unsigned long long)(wc.wr_id >> 8), iwv_wc_status_str(wc.status));
	}
	for (left = nrecv; left > 0; left--) {
		struct iwv_wc wc = vh_poll1(&p.w, p.s.rcq);
		uint64_t i = wc.wr_id >> 8;

		ck_assert_msg(wc.status == IWV_WC_SUCCESS, "connection %llu: %s",
			      (unsigned long long)i, iwv_wc_status_str(wc.status));
		ck_assert_uint_eq(wc.byte_len, cn[i].write ? 0 : CHUNK);
	}
	for (int i = 0; i < NCONN; i++) {
		char what[48];

		snprintf(what, sizeof(what), "connection %d", i);
		vh_same(sink->p + (size_t)i * CONN_LEN, src->p + conn_src_off(i), CONN_LEN, what);
	}

	for (int i = 0; i < NCONN; i++)
		ck_assert_int_eq(iwcm_disconnect(cn[i].cid), 0);
	for (int i = 0; i < NCONN; i++) {
		vh_expect(&p.w, cn[i].cid, IWCM_EVENT_DISCONNECTED, NULL);
		vh_expect(&p.w, cn[i].sid, IWCM_EVENT_DISCONNECTED, NULL);
		iwcm_destroy_qp(cn[i].cid);
		iwcm_destroy_qp(cn[i].sid);
		ck_assert_int_eq(iwcm_destroy_id(cn[i].cid), 0);
		ck_assert_int_eq(iwcm_destroy_id(cn[i].sid), 0);
	}
	free(cn);
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Peers that are not iWARP stacks                                         */
/* ---------------------------------------------------------------------- */

/* Loop: HTTP text; Request key with revision 9; PD_Length 0xFFFF; a Reply key. */
START_TEST(a_peer_speaking_garbage_is_dropped_and_the_listener_keeps_working)
{
	static const char http[] = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
	uint8_t junk[64];
	size_t n;
	struct vh_cfg cfg;
	struct vh_pair p;
	static const char ok[] = "real client";
	int fd;

	switch (_i) {
	case 0:
		n = sizeof(http) - 1;
		memcpy(junk, http, n);
		break;
	case 1:
		n = mpa_req_rev1(junk, "x");
		junk[17] = 9;
		break;
	case 2:
		n = mpa_req_rev1(junk, "");
		junk[18] = 0xFF;
		junk[19] = 0xFF;
		break;
	default:
		n = mpa_req_rev1(junk, "");
		memcpy(junk, "MPA ID Rep Frame", 16);
		break;
	}
	vh_cfg_default(&cfg);
	set_pd(&cfg.c_param, (const uint8_t *)ok, sizeof(ok));
	vh_pair_listen(&p, &cfg);
	fd = raw_connect(p.port);
	raw_send(fd, junk, n);
	raw_wait_closed(&p.w, fd, p.listen);
	close(fd);
	vh_expect_no_event(&p.w, p.listen);

	vh_pair_connect(&p);
	vh_pair_accept(&p);
	vh_pair_wait_up(&p);
	ck_assert_uint_eq(p.req.pd_len, sizeof(ok));
	vh_same(p.req.pd, ok, sizeof(ok), "the real client's private data");
	exchange(&p, th_seed_for(15));
	vh_pair_down(&p);
}
END_TEST

/*
 * At its backlog a listener stops accepting instead of resetting: two raw
 * clients that never send their MPA Request fill a backlog of 2, and a real
 * client's connection waits in the kernel's accept queue - no
 * CONNECT_REQUEST, no error - until the listener's MPA timeout has ended the
 * raw ones; then it connects and moves data.
 */
START_TEST(a_listener_at_its_backlog_holds_new_connections_back_instead_of_resetting_them)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	int raw[2];
	uint64_t end;

	vh_cfg_default(&cfg);
	cfg.backlog = 2;
	cfg.s_opt_set = true;
	iwcm_options_default(&cfg.s_opt);
	/* The two silent connections hold the backlog until their MPA start-up
	 * times out (5 s); the quiet period is counted from when they connected
	 * and ends 2 s before that, so that a slow machine (ASan, parallel tests)
	 * cannot see the timeout inside it - and it must last 500 ms at least. */
	cfg.s_opt.timeout_ms = 5000;
	vh_pair_listen(&p, &cfg);
	end = th_now_ms() + 3000;
	for (int i = 0; i < 2; i++)
		raw[i] = raw_connect(p.port);
	vh_pair_connect(&p);
	ck_assert_msg(th_now_ms() + 500 <= end, "connecting took %llu ms",
		      (unsigned long long)(th_now_ms() + 3000 - end));
	while (th_now_ms() < end) {
		vh_step(&p.w);
		vh_expect_no_event(&p.w, p.listen);
		vh_expect_no_event(&p.w, p.c.id);
		usleep(5000);
	}
	/* Once the first raw connection is closed the real client may be taken
	 * at once: its CONNECT_REQUEST is vh_pair_accept's to see. */
	for (int i = 0; i < 2; i++) {
		raw_wait_closed(&p.w, raw[i], NULL);
		close(raw[i]);
	}
	vh_pair_accept(&p);
	vh_pair_wait_up(&p);
	exchange(&p, th_seed_for(16));
	vh_pair_down(&p);
}
END_TEST

/* The highest descriptor open in this process. */
static int highest_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int hi = 2;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) > hi)
			hi = atoi(e->d_name);
	closedir(d);
	return hi;
}

/*
 * A listener that runs out of descriptors (accept: EMFILE) pauses instead of
 * spinning on the connection it cannot take - with an engine thread, which
 * would otherwise burn a CPU - and takes it once descriptors are free again.
 */
START_TEST(a_listener_out_of_descriptors_pauses_instead_of_spinning_and_accepts_later)
{
	enum { MAXFILL = 4096 };
	static int fill[MAXFILL];
	struct vh_cfg cfg;
	struct vh_pair p;
	struct sockaddr_storage ss;
	struct rlimit old, low;
	struct rusage r0, r1;
	uint8_t req[64];
	size_t n = mpa_req_rev1(req, "raw");
	struct vh_ev ev;
	int nfill = 0, fd;
	long cpu_ms;

	vh_cfg_default(&cfg);
	cfg.s_thread = 1;
	vh_pair_listen(&p, &cfg);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	th_loopback(AF_INET, p.port, &ss);
	/* every descriptor below the limit taken */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)highest_fd() + 1;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < MAXFILL && (fill[nfill] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		nfill++;
	ck_assert_int_eq(errno, EMFILE);
	ck_assert_msg(connect(fd, (struct sockaddr *)&ss, sizeof(struct sockaddr_in)) == 0,
		      "connect: %s", strerror(errno));
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &r0), 0);
	usleep(1000000);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &r1), 0);
	cpu_ms = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
		  r0.ru_stime.tv_sec) *
			 1000L +
		 (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
		  r0.ru_stime.tv_usec) /
			 1000L;
	while (nfill > 0)
		close(fill[--nfill]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	ck_assert_msg(cpu_ms < 300, "%ld ms of CPU in 1 s out of descriptors", cpu_ms);
	raw_send(fd, req, n);
	vh_expect(&p.w, p.listen, IWCM_EVENT_CONNECT_REQUEST, &ev);
	vh_same(ev.pd, "raw", 3, "raw request private data");
	ck_assert_int_eq(iwcm_destroy_id(ev.id), 0);
	vh_forget(&p.w, ev.id);
	close(fd);
	vh_pair_down(&p);
}
END_TEST

/* A CONNECT_REQUEST of the raw client, if queued: destroyed unanswered. */
static void drop_raw_request(struct vh_pair *p)
{
	struct vh_ev ev;

	if (!vh_take(&p->w, p->listen, &ev))
		return;
	ck_assert_int_eq(ev.event, IWCM_EVENT_CONNECT_REQUEST);
	ck_assert_uint_eq(ev.pd_len, 3);
	vh_same(ev.pd, "raw", 3, "raw request private data");
	ck_assert_int_eq(iwcm_destroy_id(ev.id), 0);
	vh_forget(&p->w, ev.id);
}

/*
 * A connection that ends with a reset, not a FIN: what was posted completes
 * flushed with the socket's reason (vendor_err IW_ESYS(ECONNRESET)), not a
 * plain "LLP closed", and DISCONNECTED says the same.  A raw client sends its
 * Request, reads our Reply and resets the connection.
 */
START_TEST(a_reset_flushes_posted_work_with_econnreset)
{
	uint8_t req[64], rep[64];
	size_t n = mpa_req_rev1(req, "raw"), got = 0;
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_ev ev, e2;
	struct vh_buf *b;
	struct iwv_wc wc;
	struct linger lg = {1, 0};
	uint64_t end;
	int fd;

	vh_cfg_default(&cfg);
	vh_pair_listen(&p, &cfg);
	fd = raw_connect(p.port);
	raw_send(fd, req, n);
	vh_expect(&p.w, p.listen, IWCM_EVENT_CONNECT_REQUEST, &ev);
	{
		struct iwv_qp_init_attr qa = vh_qp_attr(&cfg, &p.s);

		ck_assert_int_eq(iwcm_create_qp(ev.id, p.s.pd, &qa), 0);
	}
	b = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
	vh_post_recv(ev.id->qp, 88, b, 0, 4096);
	ck_assert_int_eq(iwcm_accept(ev.id, &cfg.s_param), 0);
	/* our Reply: 20 octets and the private data (none) */
	end = vh_deadline();
	while (got < 20) {
		ssize_t r = recv(fd, rep + got, 20 - got, 0);

		if (r > 0)
			got += (size_t)r;
		else
			ck_assert_msg(r < 0 && errno == EAGAIN, "recv: %s", strerror(errno));
		ck_assert_msg(th_now_ms() <= end, "no MPA Reply");
		vh_step(&p.w);
	}
	ck_assert_mem_eq(rep, "MPA ID Rep Frame", 16);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(fd);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 88, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	ck_assert_msg(wc.vendor_err == (uint32_t)-IW_ESYS(ECONNRESET),
		      "flushed with %s, want IW_ESYS(ECONNRESET)",
		      iwv_errname(-(int)wc.vendor_err));
	for (;;) {
		ck_assert_msg(vh_next(&p.w, ev.id, &e2, vh_deadline_ms), "no end event");
		if (e2.event != IWCM_EVENT_ESTABLISHED)
			break;
	}
	ck_assert_msg(e2.event == IWCM_EVENT_DISCONNECTED || e2.event == IWCM_EVENT_CONNECT_ERROR,
		      "end event %s", vh_evname(e2.event));
	iwcm_destroy_qp(ev.id);
	ck_assert_int_eq(iwcm_destroy_id(ev.id), 0);
	vh_forget(&p.w, ev.id);
	vh_pair_down(&p);
}
END_TEST

/*
 * Loop: 0 = valid Request, then FIN before the application hears of it;
 * 1 = valid Request, closed once CONNECT_REQUEST is out and then accepted;
 * 2 = valid Request, reset, and accepted once CONNECT_ERROR came;
 * 3 = half a Request, then FIN.
 */
START_TEST(a_raw_client_that_closes_during_the_mpa_exchange_leaves_nothing_behind)
{
	static const char ok[] = "real client";
	uint8_t req[64];
	size_t n = mpa_req_rev1(req, "raw");
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_ev ev;
	int fd;

	vh_cfg_default(&cfg);
	set_pd(&cfg.c_param, (const uint8_t *)ok, sizeof(ok));
	vh_pair_listen(&p, &cfg);
	fd = raw_connect(p.port);
	switch (_i) {
	case 0: {
		uint64_t end = vh_deadline();
		uint8_t sink[256];

		raw_send(fd, req, n);
		ck_assert_int_eq(shutdown(fd, SHUT_WR), 0);
		/* Until the stack closes its end: a request it reports is destroyed unanswered. */
		for (;;) {
			ssize_t r = recv(fd, sink, sizeof(sink), 0);

			if (r == 0 || (r < 0 && errno == ECONNRESET))
				break;
			ck_assert_msg(r > 0 || errno == EAGAIN, "recv: %s", strerror(errno));
			ck_assert_msg(th_now_ms() <= end, "connection still open");
			vh_step(&p.w);
			drop_raw_request(&p);
		}
		/* The request may have been reported in the same step that closed it. */
		vh_pump(&p.w);
		drop_raw_request(&p);
		break;
	}
	case 1: {
		struct iwv_qp_init_attr qa = vh_qp_attr(&cfg, &p.s);

		raw_send(fd, req, n);
		vh_expect(&p.w, p.listen, IWCM_EVENT_CONNECT_REQUEST, &ev);
		ck_assert_uint_eq(ev.pd_len, 3);
		vh_same(ev.pd, "raw", 3, "raw request private data");
		ck_assert_uint_eq(ev.mpa.mpa_rev, 1);
		ck_assert(ev.mpa.crc);
		close(fd);
		fd = -1;
		ck_assert_int_eq(iwcm_create_qp(ev.id, p.s.pd, &qa), 0);
		if (iwcm_accept(ev.id, &cfg.s_param) == 0) {
			struct vh_ev e2;

			for (;;) {
				ck_assert_msg(vh_next(&p.w, ev.id, &e2, vh_deadline_ms),
					      "accepted raw connection: no end event");
				if (e2.event == IWCM_EVENT_DISCONNECTED ||
				    e2.event == IWCM_EVENT_CONNECT_ERROR)
					break;
				ck_assert_msg(e2.event == IWCM_EVENT_ESTABLISHED, "raw: %s",
					      vh_evname(e2.event));
			}
		}
		iwcm_destroy_qp(ev.id);
		ck_assert_int_eq(iwcm_destroy_id(ev.id), 0);
		vh_forget(&p.w, ev.id);
		break;
	}
	case 2: {
		/* The peer is gone before the program answers: CONNECT_ERROR is
		 * queued behind CONNECT_REQUEST.  A QP attached and a receive
		 * posted after that: accept says ECONNABORTED and the receive
		 * completes flushed (nothing posted is lost). */
		struct iwv_qp_init_attr qa = vh_qp_attr(&cfg, &p.s);
		struct linger lg = {1, 0};
		struct vh_ev e2;
		struct vh_buf *b;
		struct iwv_wc wc;

		raw_send(fd, req, n);
		vh_expect(&p.w, p.listen, IWCM_EVENT_CONNECT_REQUEST, &ev);
		ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
		close(fd);
		fd = -1;
		vh_expect(&p.w, ev.id, IWCM_EVENT_CONNECT_ERROR, &e2);
		ck_assert_int_eq(iwcm_create_qp(ev.id, p.s.pd, &qa), 0);
		b = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
		vh_post_recv(ev.id->qp, 77, b, 0, 4096);
		errno = 0;
		ck_assert_int_eq(iwcm_accept(ev.id, &cfg.s_param), -1);
		ck_assert_int_eq(errno, ECONNABORTED);
		wc = vh_poll1(&p.w, p.s.rcq);
		vh_wc_is(&wc, 77, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
		iwcm_destroy_qp(ev.id);
		ck_assert_int_eq(iwcm_destroy_id(ev.id), 0);
		vh_forget(&p.w, ev.id);
		break;
	}
	default:
		raw_send(fd, req, 10);
		ck_assert_int_eq(shutdown(fd, SHUT_WR), 0);
		raw_wait_closed(&p.w, fd, p.listen);
		break;
	}
	if (fd >= 0)
		close(fd);
	vh_expect_no_event(&p.w, p.listen);

	vh_pair_connect(&p);
	vh_pair_accept(&p);
	vh_pair_wait_up(&p);
	vh_same(p.req.pd, ok, sizeof(ok), "the real client's private data");
	exchange(&p, th_seed_for(16));
	vh_pair_down(&p);
}
END_TEST

static Suite *iwcm_suite(void)
{
	Suite *s = suite_create("iwcm");
	TCase *tc;

	tc = tcase_create("ids");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, event_channel_fd_becomes_readable_when_an_event_is_queued);
	tcase_add_test(tc, get_cm_event_on_a_nonblocking_channel_without_event_returns_eagain);
	tcase_add_test(tc, destroying_a_channel_ends_a_blocked_get_cm_event_with_ebadf);
	tcase_add_test(tc, create_id_fills_the_id_and_the_channel_is_busy_until_it_is_destroyed);
	tcase_add_test(tc, options_default_has_the_documented_values_and_a_new_id_starts_with_them);
	tcase_add_loop_test(tc, set_options_with_an_unknown_mpa_revision_returns_einval, 0, 2);
	tcase_add_test(tc, destroy_id_with_an_unacknowledged_event_returns_ebusy);
	tcase_add_test(tc,
		       destroy_id_with_a_qp_attached_detaches_and_flushes_it_for_iwv_destroy_qp);
	tcase_add_test(tc, destroy_id_drops_its_queued_events_not_yet_returned);
	tcase_add_test(tc, an_attached_qp_made_with_iwv_create_qp_connects_and_moves_data);
	tcase_add_test(tc, bind_to_port_0_and_listen_give_a_src_port_a_tcp_client_can_reach);
	tcase_add_test(tc, resolve_addr_and_route_report_resolved_events_and_the_destination);
	suite_add_tcase(s, tc);

	tc = tcase_create("connect");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, connect_and_accept_carry_private_data_both_ways, 0,
			    (int)(2 * NPDLENS));
	tcase_add_test(tc, revision_1_carries_512_octets_of_private_data);
	tcase_add_loop_test(
		tc, connect_with_more_private_data_than_the_revision_allows_returns_einval, 0, 2);
	tcase_add_test(tc, ird_and_ord_negotiation_is_visible_in_the_established_events);
	tcase_add_loop_test(tc, reject_gives_the_client_rejected_econnrefused_with_the_private_data,
			    0, 2);
	tcase_add_test(tc, connect_to_a_closed_port_gives_rejected_econnrefused);
	tcase_add_test(tc, a_refused_connect_is_retried_for_connect_retry_ms);
	tcase_add_test(tc, the_default_event_channel_connects_on_the_default_context);
	suite_add_tcase(s, tc);

	tc = tcase_create("options");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc,
		every_mpa_option_combination_connects_reports_what_was_negotiated_and_moves_data, 0,
		NCOMBOS);
	tcase_add_loop_test(tc, crc_is_used_when_either_side_asks_for_it, 0, 2);
	tcase_add_loop_test(tc, mixed_revisions_settle_on_revision_1, 0, 2);
	tcase_add_test(tc,
		       no_common_rtr_form_gives_the_client_connect_error_eproto_with_iw_err_rtr);
	tcase_add_test(tc, listener_options_are_inherited_by_the_connect_request_id);
	tcase_add_loop_test(tc, first_fpdu_delay_0_and_20_both_connect_and_move_data, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("disconnect");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc, disconnect_gives_both_sides_disconnected_and_flushes_posted_receives, 0, 2);
	tcase_add_test(tc, disconnect_with_queued_sends_completes_them_all_before_disconnected);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, sixty_four_connections_at_once_each_move_2_mib_intact);
	suite_add_tcase(s, tc);

	tc = tcase_create("raw_peers");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, a_peer_speaking_garbage_is_dropped_and_the_listener_keeps_working,
			    0, 4);
	tcase_add_loop_test(
		tc, a_raw_client_that_closes_during_the_mpa_exchange_leaves_nothing_behind, 0, 4);
	tcase_add_test(tc, a_reset_flushes_posted_work_with_econnreset);
	tcase_add_test(
		tc, a_listener_at_its_backlog_holds_new_connections_back_instead_of_resetting_them);
	tcase_add_test(tc,
		       a_listener_out_of_descriptors_pauses_instead_of_spinning_and_accepts_later);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(iwcm_suite)
