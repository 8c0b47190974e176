/* SPDX-License-Identifier: MIT */
/*
 * test_iwv_verbs.c - the verbs API (include/iwarp/iwv.h) over real loopback
 * connections made with the connection manager, both ends in this process on
 * one or two contexts (test/helpers/vh.h).
 *
 * Theory of operation.  Each test builds what it needs, drives it to a state
 * and asserts what the header promises, in ibverbs terms: constructors return
 * NULL with errno, post_* a positive errno with *bad_wr at the first WR not
 * posted (the ones before it are posted: the peer receives them), every WR
 * posted completes exactly once (flush status after a failure or a destroy),
 * completions of one queue come in post order.  Data is checked octet for
 * octet with guard zones around every buffer, so a placement one octet too far
 * fails.  The run is repeated by meson with IWARP_ENGINE=epoll and uring;
 * IWARP_ENGINE_THREAD=1 runs the same tests with engine threads.
 *
 * Waits are bounded (vh_deadline_ms, or alarm() around a call that blocks by
 * design) and fail the test instead of hanging.  Nothing asserts timing.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iwarp/iwcm.h>
#include <iwarp/ddp.h>
#include <iwarp/iwv.h>
#include <iwarp/rdmap.h>

#include "ih.h"
#include "th.h"
#include "vh.h"

#define TAIL	   16 /* octets after the expected data that must stay untouched */
#define TAIL_OCTET 0x5A

/* A pair on one context (or two) with the default configuration. */
static void up(struct vh_pair *p, bool two_ctx)
{
	struct vh_cfg cfg;

	vh_cfg_default(&cfg);
	cfg.two_ctx = two_ctx;
	vh_pair_up(p, &cfg);
}

static struct iwv_context *open_default(void)
{
	struct iwv_device **list = iwv_get_device_list(NULL);
	struct iwv_context *ctx;

	ck_assert_ptr_nonnull(list);
	ck_assert_ptr_nonnull(list[0]);
	ctx = iwv_open_device(list[0]);
	ck_assert_msg(ctx != NULL, "iwv_open_device: %s", strerror(errno));
	iwv_free_device_list(list);
	return ctx;
}

static void close_ok(struct iwv_context *ctx)
{
	int rc = iwv_close_device(ctx);

	ck_assert_msg(rc == 0, "iwv_close_device: %s", strerror(rc));
}

static void qp_state_is(struct iwv_qp *qp, enum iwv_qp_state st)
{
	struct iwv_qp_attr a;
	struct iwv_qp_init_attr ia;

	ck_assert_int_eq(iwv_query_qp(qp, &a, IWV_QP_STATE, &ia), 0);
	ck_assert_msg(a.qp_state == st, "QP state %d, expected %d", (int)a.qp_state, (int)st);
}

static void to_err(struct iwv_qp *qp)
{
	struct iwv_qp_attr a = {.qp_state = IWV_QPS_ERR};

	ck_assert_int_eq(iwv_modify_qp(qp, &a, IWV_QP_STATE), 0);
}

/* n completions of one queue, all with status st, wr_ids first.. in order. */
static void expect_run(struct vh_pair *p, struct iwv_cq *cq, int n, uint64_t first,
		       enum iwv_wc_status st, enum iwv_wc_opcode op)
{
	struct iwv_wc wc;

	for (int i = 0; i < n; i++) {
		wc = vh_poll1(&p->w, cq);
		vh_wc_is(&wc, first + (uint64_t)i, st, op);
	}
}

/* ---------------------------------------------------------------------- */
/* Devices and contexts                                                    */
/* ---------------------------------------------------------------------- */

START_TEST(device_list_has_one_device_named_iwarp0)
{
	int n = -1;
	struct iwv_device **list = iwv_get_device_list(&n);

	ck_assert_ptr_nonnull(list);
	ck_assert_int_eq(n, 1);
	ck_assert_ptr_nonnull(list[0]);
	ck_assert_ptr_null(list[1]);
	ck_assert_str_eq(iwv_get_device_name(list[0]), "iwarp0");
	iwv_free_device_list(list);

	list = iwv_get_device_list(NULL);
	ck_assert_ptr_nonnull(list);
	ck_assert_str_eq(iwv_get_device_name(list[0]), "iwarp0");
	iwv_free_device_list(list);
}
END_TEST

START_TEST(query_device_reports_the_limits_the_header_names)
{
	struct iwv_context *ctx = open_default();
	struct iwv_device_attr a;

	ck_assert_ptr_nonnull(ctx->device);
	ck_assert_str_eq(iwv_get_device_name(ctx->device), "iwarp0");
	ck_assert_int_ge(ctx->async_fd, 0); /* pollable (asynchronous events) */
	memset(&a, 0xA5, sizeof(a));
	ck_assert_int_eq(iwv_query_device(ctx, &a), 0);
	ck_assert_ptr_nonnull(memchr(a.fw_ver, 0, sizeof(a.fw_ver)));
	ck_assert_int_eq(a.max_sge, IWV_MAX_SGE);
	ck_assert_int_eq(a.max_qp_wr, IWV_MAX_QP_WR);
	ck_assert_uint_eq(a.max_inline_data, IWV_MAX_INLINE);
	ck_assert_int_eq(a.max_cqe, 65536);
	ck_assert_int_eq(a.max_mr, 65536); /* iwv_context_attr.max_mr default */
	ck_assert_int_gt(a.max_qp, 0);
	ck_assert_int_gt(a.max_cq, 0);
	ck_assert_int_gt(a.max_pd, 0);
	ck_assert_int_gt(a.max_qp_rd_atom, 0);
	ck_assert_int_gt(a.max_qp_init_rd_atom, 0);
	ck_assert_uint_gt(a.max_mr_size, 0);
	close_ok(ctx);
}
END_TEST

/* Loop: which object keeps the context busy. */
START_TEST(close_device_while_an_object_uses_it_returns_ebusy)
{
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = NULL;
	struct iwv_cq *cq = NULL;
	struct iwv_comp_channel *cc = NULL;
	struct iwcm_event_channel *ch = NULL;

	switch (_i) {
	case 0:
		pd = iwv_alloc_pd(ctx);
		ck_assert_ptr_nonnull(pd);
		break;
	case 1:
		cq = iwv_create_cq(ctx, 16, NULL, NULL, 0);
		ck_assert_ptr_nonnull(cq);
		break;
	case 2:
		cc = iwv_create_comp_channel(ctx);
		ck_assert_ptr_nonnull(cc);
		break;
	default:
		ch = iwcm_create_event_channel_ctx(ctx);
		ck_assert_ptr_nonnull(ch);
		break;
	}
	ck_assert_int_eq(iwv_close_device(ctx), EBUSY);
	if (pd)
		ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	if (cq)
		ck_assert_int_eq(iwv_destroy_cq(cq), 0);
	if (cc)
		ck_assert_int_eq(iwv_destroy_comp_channel(cc), 0);
	if (ch)
		ck_assert_int_eq(iwcm_destroy_event_channel(ch), 0);
	close_ok(ctx);
}
END_TEST

START_TEST(context_runs_the_engine_iwarp_engine_names)
{
	const char *env = getenv("IWARP_ENGINE");
	struct iwv_context *ctx = open_default();
	const char *name = iwv_context_engine_name(ctx);

	ck_assert_ptr_nonnull(name);
	ck_assert_msg(!strcmp(name, "uring") || !strcmp(name, "epoll"), "engine \"%s\"", name);
	if (env && *env)
		ck_assert_str_eq(name, env);
	close_ok(ctx);
}
END_TEST

START_TEST(open_context_with_an_explicit_engine_runs_that_engine)
{
	struct iwv_context_attr a;
	struct iwv_context *ctx;

	iwv_context_attr_default(&a);
	a.engine = IWV_ENGINE_EPOLL;
	ctx = iwv_open_context(&a);
	ck_assert_msg(ctx != NULL, "epoll context: %s", strerror(errno));
	ck_assert_str_eq(iwv_context_engine_name(ctx), "epoll");
	close_ok(ctx);

	a.engine = IWV_ENGINE_URING;
	errno = 0;
	ctx = iwv_open_context(&a);
	if (ctx) {
		ck_assert_str_eq(iwv_context_engine_name(ctx), "uring");
		close_ok(ctx);
	} else {
		ck_assert_msg(errno == EOPNOTSUPP, "uring context: %s", strerror(errno));
	}

	ctx = iwv_open_context(NULL);
	ck_assert_msg(ctx != NULL, "default context: %s", strerror(errno));
	close_ok(ctx);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Protection domains and memory regions                                   */
/* ---------------------------------------------------------------------- */

START_TEST(dealloc_pd_with_an_mr_returns_ebusy_until_the_mr_is_deregistered)
{
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	static uint8_t buf[4096];
	struct iwv_mr *mr;

	ck_assert_ptr_nonnull(pd);
	ck_assert_ptr_eq(pd->context, ctx);
	mr = iwv_reg_mr(pd, buf, sizeof(buf), IWV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(iwv_dealloc_pd(pd), EBUSY);
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	close_ok(ctx);
}
END_TEST

START_TEST(dealloc_pd_with_a_qp_returns_ebusy_until_the_qp_is_destroyed)
{
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	struct iwv_cq *cq = iwv_create_cq(ctx, 64, NULL, NULL, 0);
	struct iwv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IWV_QPT_RC,
	};
	struct iwv_qp *qp = iwv_create_qp(pd, &qa);

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(iwv_dealloc_pd(pd), EBUSY);
	ck_assert_int_eq(iwv_destroy_cq(cq), EBUSY);
	ck_assert_int_eq(iwv_destroy_qp(qp), 0);
	ck_assert_int_eq(iwv_destroy_cq(cq), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	close_ok(ctx);
}
END_TEST

/* Loop: remote write alone, remote write with remote read. */
START_TEST(reg_mr_with_remote_write_but_no_local_write_returns_einval)
{
	static const int access[] = {
		IWV_ACCESS_REMOTE_WRITE,
		IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ,
	};
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	static uint8_t buf[4096];
	struct iwv_mr *mr;

	errno = 0;
	ck_assert_ptr_null(iwv_reg_mr(pd, buf, sizeof(buf), access[_i]));
	ck_assert_int_eq(errno, EINVAL);
	/* Remote read needs no local write (ibverbs). */
	mr = iwv_reg_mr(pd, buf, sizeof(buf), IWV_ACCESS_REMOTE_READ);
	ck_assert_msg(mr != NULL, "remote read only: %s", strerror(errno));
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	close_ok(ctx);
}
END_TEST

/* Loop: remote atomic without local write (ibverbs: EINVAL). */
START_TEST(reg_mr_with_remote_atomic_without_local_write_is_refused)
{
	static const int access[] = {
		IWV_ACCESS_REMOTE_ATOMIC,
	};
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	static uint8_t buf[4096];
	struct iwv_mr *mr;

	errno = 0;
	ck_assert_ptr_null(iwv_reg_mr(pd, buf, sizeof(buf), access[_i]));
	/* The header says "refused" without an errno; ibverbs uses EINVAL or EOPNOTSUPP. */
	ck_assert_msg(errno == EINVAL || errno == EOPNOTSUPP, "errno %s", strerror(errno));
	/* Memory windows are in (test_iwv_mem.c): MW_BIND is accepted. */
	mr = iwv_reg_mr(pd, buf, sizeof(buf), IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_MW_BIND);
	ck_assert_msg(mr != NULL, "MW_BIND: %s", strerror(errno));
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	close_ok(ctx);
}
END_TEST

START_TEST(reg_mr_gives_lkey_equal_to_rkey_and_describes_the_region)
{
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	static uint8_t buf[8192];
	struct iwv_mr *a = iwv_reg_mr(pd, buf, 4096, VH_ACCESS_ALL);
	struct iwv_mr *b = iwv_reg_mr(pd, buf + 4096, 4096, IWV_ACCESS_LOCAL_WRITE);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(a->lkey, a->rkey);
	ck_assert_uint_eq(b->lkey, b->rkey);
	ck_assert_uint_ne(a->lkey, b->lkey);
	ck_assert_ptr_eq(a->addr, buf);
	ck_assert_uint_eq(a->length, 4096);
	ck_assert_ptr_eq(a->pd, pd);
	ck_assert_ptr_eq(a->context, ctx);
	ck_assert_int_eq(iwv_dereg_mr(a), 0);
	ck_assert_int_eq(iwv_dereg_mr(b), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	close_ok(ctx);
}
END_TEST

START_TEST(reg_mr_beyond_max_mr_returns_enomem_and_dereg_frees_a_slot)
{
	struct iwv_context_attr ca;
	struct iwv_context *ctx;
	struct iwv_device_attr da;
	struct iwv_pd *pd;
	struct iwv_mr *mr[64];
	static uint8_t buf[64];
	int n = 0;

	iwv_context_attr_default(&ca);
	ca.max_mr = 8;
	ctx = iwv_open_context(&ca);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(iwv_query_device(ctx, &da), 0);
	ck_assert_int_eq(da.max_mr, 8);
	pd = iwv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	for (;;) {
		ck_assert_int_lt(n, 64);
		errno = 0;
		mr[n] = iwv_reg_mr(pd, buf + n % 64, 1, IWV_ACCESS_LOCAL_WRITE);
		if (!mr[n])
			break;
		n++;
	}
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(n, da.max_mr);
	ck_assert_int_eq(iwv_dereg_mr(mr[3]), 0);
	mr[3] = iwv_reg_mr(pd, buf, 1, IWV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr[3]);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(iwv_dereg_mr(mr[i]), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	close_ok(ctx);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Completion queues and channels                                          */
/* ---------------------------------------------------------------------- */

START_TEST(create_cq_with_cqe_out_of_range_returns_null_and_einval)
{
	static const int bad[] = {0, -1, 65537, -65536};
	struct iwv_context *ctx = open_default();

	errno = 0;
	ck_assert_ptr_null(iwv_create_cq(ctx, bad[_i], NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	close_ok(ctx);
}
END_TEST

START_TEST(create_cq_accepts_1_and_65536_and_keeps_its_context_and_channel)
{
	struct iwv_context *ctx = open_default();
	struct iwv_comp_channel *cc = iwv_create_comp_channel(ctx);
	struct iwv_cq *a, *b;
	struct iwv_wc wc[4];
	int tag;

	ck_assert_ptr_nonnull(cc);
	ck_assert_int_ge(cc->fd, 0);
	a = iwv_create_cq(ctx, 1, &tag, NULL, 0);
	b = iwv_create_cq(ctx, 65536, NULL, cc, 3);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_ge(a->cqe, 1);
	ck_assert_int_ge(b->cqe, 65536);
	ck_assert_ptr_eq(a->cq_context, &tag);
	ck_assert_ptr_eq(a->context, ctx);
	ck_assert_ptr_null(a->channel);
	ck_assert_ptr_eq(b->channel, cc);
	ck_assert_int_eq(iwv_poll_cq(a, 4, wc), 0);
	ck_assert_int_eq(iwv_poll_cq(b, 4, wc), 0);
	ck_assert_int_eq(iwv_destroy_comp_channel(cc), EBUSY);
	ck_assert_int_eq(iwv_destroy_cq(a), 0);
	ck_assert_int_eq(iwv_destroy_cq(b), 0);
	ck_assert_int_eq(iwv_destroy_comp_channel(cc), 0);
	close_ok(ctx);
}
END_TEST

START_TEST(get_cq_event_on_a_nonblocking_channel_without_event_returns_eagain)
{
	struct iwv_context *ctx = open_default();
	struct iwv_comp_channel *cc = iwv_create_comp_channel(ctx);
	struct iwv_cq *cq = iwv_create_cq(ctx, 16, NULL, cc, 0), *got = NULL;
	struct pollfd pfd;
	void *cqc = NULL;

	ck_assert_ptr_nonnull(cq);
	ih_set_nonblock(cc->fd, true);
	ck_assert_int_eq(iwv_req_notify_cq(cq, 0), 0);
	errno = 0;
	ck_assert_int_eq(iwv_get_cq_event(cc, &got, &cqc), -1);
	ck_assert_int_eq(errno, EAGAIN);
	pfd = (struct pollfd){.fd = cc->fd, .events = POLLIN};
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(iwv_destroy_cq(cq), 0);
	ck_assert_int_eq(iwv_destroy_comp_channel(cc), 0);
	close_ok(ctx);
}
END_TEST

START_TEST(wc_status_str_names_every_status)
{
	for (int st = IWV_WC_SUCCESS; st <= IWV_WC_GENERAL_ERR; st++) {
		const char *s = iwv_wc_status_str((enum iwv_wc_status)st);

		ck_assert_ptr_nonnull(s);
		ck_assert_uint_gt(strlen(s), 0);
		for (int o = IWV_WC_SUCCESS; o < st; o++)
			ck_assert_str_ne(s, iwv_wc_status_str((enum iwv_wc_status)o));
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Queue pairs on their own (INIT, not connected)                          */
/* ---------------------------------------------------------------------- */

struct lone {
	struct iwv_context *ctx;
	struct iwv_pd *pd;
	struct iwv_cq *cq;
	struct iwv_qp *qp;
	struct iwv_qp_init_attr attr;
	uint8_t buf[4096];
	struct iwv_mr *mr;
};

static void lone_init(struct lone *l, uint32_t sq, uint32_t rq)
{
	memset(l, 0, sizeof(*l));
	l->ctx = open_default();
	l->pd = iwv_alloc_pd(l->ctx);
	ck_assert_ptr_nonnull(l->pd);
	l->cq = iwv_create_cq(l->ctx, VH_CQE, NULL, NULL, 0);
	ck_assert_ptr_nonnull(l->cq);
	l->attr = (struct iwv_qp_init_attr){
		.send_cq = l->cq,
		.recv_cq = l->cq,
		.cap = {.max_send_wr = sq, .max_recv_wr = rq, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IWV_QPT_RC,
		.sq_sig_all = 1,
	};
	l->qp = iwv_create_qp(l->pd, &l->attr);
	ck_assert_msg(l->qp != NULL, "iwv_create_qp: %s", strerror(errno));
	l->mr = iwv_reg_mr(l->pd, l->buf, sizeof(l->buf), IWV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(l->mr);
}

static void lone_fini(struct lone *l)
{
	if (l->qp)
		ck_assert_int_eq(iwv_destroy_qp(l->qp), 0);
	ck_assert_int_eq(iwv_dereg_mr(l->mr), 0);
	ck_assert_int_eq(iwv_destroy_cq(l->cq), 0);
	ck_assert_int_eq(iwv_dealloc_pd(l->pd), 0);
	close_ok(l->ctx);
}

/* Everything the CQ holds now, without waiting (the header puts flushes there before returning). */
static int drain_now(struct iwv_cq *cq, struct iwv_wc *wc, int max)
{
	int got = 0, r;

	while (got < max && (r = iwv_poll_cq(cq, max - got, wc + got)) > 0)
		got += r;
	ck_assert_int_ge(got, 0);
	return got;
}

enum qp_bad {
	QPB_SEND_WR_0,
	QPB_SEND_WR_BIG,
	QPB_RECV_WR_0,
	QPB_RECV_WR_BIG,
	QPB_SEND_SGE_0,
	QPB_SEND_SGE_BIG,
	QPB_RECV_SGE_BIG,
	QPB_INLINE_BIG,
	QPB_NOT_RC,
	QPB_NO_SEND_CQ,
	QPB_NO_RECV_CQ,
	QPB_COUNT,
};

START_TEST(create_qp_beyond_the_limits_returns_null_and_einval)
{
	struct lone l;
	struct iwv_qp_init_attr a;
	struct iwv_qp *qp;
	lone_init(&l, 4, 4);
	a = l.attr;
	switch (_i) {
	case QPB_SEND_WR_0:
		a.cap.max_send_wr = 0;
		break;
	case QPB_SEND_WR_BIG:
		a.cap.max_send_wr = IWV_MAX_QP_WR + 1;
		break;
	case QPB_RECV_WR_0:
		a.cap.max_recv_wr = 0;
		break;
	case QPB_RECV_WR_BIG:
		a.cap.max_recv_wr = IWV_MAX_QP_WR + 1;
		break;
	case QPB_SEND_SGE_0:
		a.cap.max_send_sge = 0;
		break;
	case QPB_SEND_SGE_BIG:
		a.cap.max_send_sge = IWV_MAX_SGE + 1;
		break;
	case QPB_RECV_SGE_BIG:
		a.cap.max_recv_sge = IWV_MAX_SGE + 1;
		break;
	case QPB_INLINE_BIG:
		a.cap.max_inline_data = IWV_MAX_INLINE + 1;
		break;
	case QPB_NOT_RC:
		a.qp_type = (enum iwv_qp_type)3;
		break;
	case QPB_NO_SEND_CQ:
		a.send_cq = NULL;
		break;
	default:
		a.recv_cq = NULL;
		break;
	}
	errno = 0;
	qp = iwv_create_qp(l.pd, &a);
	if (qp && (_i == QPB_SEND_WR_0 || _i == QPB_RECV_WR_0 || _i == QPB_SEND_SGE_0)) {
		/*
		 * The header says 1..4096 (1..IWV_MAX_SGE); ibverbs takes 0, and so
		 * may we, as long as what is granted is usable.
		 */
		ck_assert_uint_ge(a.cap.max_send_wr, 1);
		ck_assert_uint_ge(a.cap.max_recv_wr, 1);
		ck_assert_uint_ge(a.cap.max_send_sge, 1);
		ck_assert_int_eq(iwv_destroy_qp(qp), 0);
	} else {
		ck_assert_ptr_null(qp);
		ck_assert_int_eq(errno, EINVAL);
	}
	lone_fini(&l);
}
END_TEST

START_TEST(create_qp_writes_back_the_granted_caps_and_starts_in_init)
{
	struct lone l;
	struct iwv_qp_attr qa;
	struct iwv_qp_init_attr ia;
	struct iwv_qp *other;
	struct iwv_qp_init_attr a2;

	lone_init(&l, 5, 7);
	ck_assert_uint_ge(l.attr.cap.max_send_wr, 5);
	ck_assert_uint_le(l.attr.cap.max_send_wr, IWV_MAX_QP_WR);
	ck_assert_uint_ge(l.attr.cap.max_recv_wr, 7);
	ck_assert_uint_le(l.attr.cap.max_recv_wr, IWV_MAX_QP_WR);
	ck_assert_uint_ge(l.attr.cap.max_send_sge, 1);
	ck_assert_uint_le(l.attr.cap.max_send_sge, IWV_MAX_SGE);
	ck_assert_uint_le(l.attr.cap.max_inline_data, IWV_MAX_INLINE);
	ck_assert_ptr_eq(l.qp->pd, l.pd);
	ck_assert_ptr_eq(l.qp->send_cq, l.cq);
	ck_assert_ptr_eq(l.qp->recv_cq, l.cq);
	ck_assert_ptr_eq(l.qp->context, l.ctx);
	ck_assert_int_eq(l.qp->qp_type, IWV_QPT_RC);

	memset(&qa, 0, sizeof(qa));
	ck_assert_int_eq(iwv_query_qp(l.qp, &qa, IWV_QP_STATE | IWV_QP_CAP, &ia), 0);
	ck_assert_int_eq(qa.qp_state, IWV_QPS_INIT);
	ck_assert_uint_eq(qa.cap.max_send_wr, l.attr.cap.max_send_wr);
	ck_assert_uint_eq(qa.cap.max_recv_wr, l.attr.cap.max_recv_wr);
	ck_assert_int_eq(qa.qp_err, 0);
	ck_assert_ptr_eq(ia.send_cq, l.cq);
	ck_assert_int_eq(ia.sq_sig_all, 1);

	a2 = l.attr;
	other = iwv_create_qp(l.pd, &a2);
	ck_assert_ptr_nonnull(other);
	ck_assert_uint_ne(other->qp_num, l.qp->qp_num);
	ck_assert_int_eq(iwv_destroy_qp(other), 0);
	lone_fini(&l);
}
END_TEST

/* Loop: 0 = send queue, 1 = receive queue. */
START_TEST(posting_beyond_a_full_queue_returns_enomem_and_destroy_flushes_what_was_posted)
{
	struct lone l;
	struct iwv_sge sge;
	struct iwv_wc wc[IWV_MAX_QP_WR + 8];
	uint32_t g;
	int rc, n;

	lone_init(&l, 8, 8);
	sge = (struct iwv_sge){(uint64_t)(uintptr_t)l.buf, 16, l.mr->lkey};
	g = _i == 0 ? l.attr.cap.max_send_wr : l.attr.cap.max_recv_wr;
	ck_assert_uint_le(g, IWV_MAX_QP_WR);
	if (_i == 0) {
		struct iwv_send_wr *w = calloc(g + 1, sizeof(*w)), *bad = NULL;

		for (uint32_t i = 0; i <= g; i++)
			w[i] = (struct iwv_send_wr){.wr_id = i,
						    .next = i < g ? &w[i + 1] : NULL,
						    .sg_list = &sge,
						    .num_sge = 1,
						    .opcode = IWV_WR_SEND,
						    .send_flags = IWV_SEND_SIGNALED};
		rc = iwv_post_send(l.qp, w, &bad);
		ck_assert_int_eq(rc, ENOMEM);
		ck_assert_ptr_eq(bad, &w[g]);
		free(w);
	} else {
		struct iwv_recv_wr *w = calloc(g + 1, sizeof(*w)), *bad = NULL;

		for (uint32_t i = 0; i <= g; i++)
			w[i] = (struct iwv_recv_wr){.wr_id = i,
						    .next = i < g ? &w[i + 1] : NULL,
						    .sg_list = &sge,
						    .num_sge = 1};
		rc = iwv_post_recv(l.qp, w, &bad);
		ck_assert_int_eq(rc, ENOMEM);
		ck_assert_ptr_eq(bad, &w[g]);
		free(w);
	}
	ck_assert_int_eq(iwv_destroy_qp(l.qp), 0);
	l.qp = NULL;
	n = drain_now(l.cq, wc, (int)(sizeof(wc) / sizeof(wc[0])));
	ck_assert_int_eq(n, (int)g);
	for (int i = 0; i < n; i++)
		vh_wc_is(&wc[i], (uint64_t)i, IWV_WC_WR_FLUSH_ERR,
			 _i == 0 ? IWV_WC_SEND : IWV_WC_RECV);
	lone_fini(&l);
}
END_TEST

START_TEST(modify_qp_accepts_only_the_err_state)
{
	struct lone l;

	lone_init(&l, 4, 4);
	for (int st = IWV_QPS_RESET; st < IWV_QPS_ERR; st++) {
		struct iwv_qp_attr a = {.qp_state = (enum iwv_qp_state)st};

		ck_assert_int_eq(iwv_modify_qp(l.qp, &a, IWV_QP_STATE), EINVAL);
	}
	qp_state_is(l.qp, IWV_QPS_INIT);
	to_err(l.qp);
	qp_state_is(l.qp, IWV_QPS_ERR);
	lone_fini(&l);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Every operation, every size                                             */
/* ---------------------------------------------------------------------- */

enum op { OP_SEND, OP_WRITE, OP_READ, OP_COUNT };
static const char *const op_names[] = {"Send", "RDMA Write", "RDMA Read"};
static const size_t op_sizes[] = {0, 1, 4095, 65536, VH_MIB, 16 * VH_MIB};
#define NSIZES (sizeof(op_sizes) / sizeof(op_sizes[0]))

/* Client to server (Read: server to client) of len octets, checked with guards and a tail. */
static void move_and_check(struct vh_pair *p, enum op op, size_t len, uint64_t seed)
{
	struct vh_buf *cb = vh_buf_new(p, &p->c, len + TAIL, VH_ACCESS_ALL);
	struct vh_buf *sb = vh_buf_new(p, &p->s, len + TAIL, VH_ACCESS_ALL);
	struct vh_buf *note = vh_buf_new(p, &p->s, 64, VH_ACCESS_ALL);
	struct vh_buf *src = op == OP_READ ? sb : cb, *dst = op == OP_READ ? cb : sb;
	uint8_t *want = malloc(len + 1);
	struct iwv_wc wc;
	char what[64];

	ck_assert_ptr_nonnull(want);
	vh_fill(want, len, seed);
	memcpy(src->p, want, len);
	memset(dst->p, TAIL_OCTET, len + TAIL);
	switch (op) {
	case OP_SEND:
		vh_post_recv(p->s.qp, 70, sb, 0, len + TAIL);
		vh_post_send(p->c.qp, IWV_WR_SEND, 1, IWV_SEND_SIGNALED, cb, 0, len, NULL, 0);
		wc = vh_poll1(&p->w, p->c.scq);
		vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
		wc = vh_poll1(&p->w, p->s.rcq);
		vh_wc_is(&wc, 70, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, len);
		ck_assert_uint_eq(wc.wc_flags & IWV_WC_WITH_INV, 0);
		ck_assert(!wc.solicited);
		ck_assert_uint_eq(wc.qp_num, p->s.qp->qp_num);
		break;
	case OP_WRITE:
		/* The Send behind the Write is delivered after the Write is placed. */
		vh_post_recv(p->s.qp, 70, note, 0, 64);
		vh_post_send(p->c.qp, IWV_WR_RDMA_WRITE, 1, IWV_SEND_SIGNALED, cb, 0, len, sb, 0);
		vh_post_send(p->c.qp, IWV_WR_SEND, 2, IWV_SEND_SIGNALED, cb, 0, 0, NULL, 0);
		expect_run(p, p->c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
		expect_run(p, p->c.scq, 1, 2, IWV_WC_SUCCESS, IWV_WC_SEND);
		wc = vh_poll1(&p->w, p->s.rcq);
		vh_wc_is(&wc, 70, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, 0);
		break;
	default:
		vh_post_send(p->c.qp, IWV_WR_RDMA_READ, 1, IWV_SEND_SIGNALED, cb, 0, len, sb, 0);
		wc = vh_poll1(&p->w, p->c.scq);
		vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_READ);
		ck_assert_uint_eq(wc.byte_len, len);
		vh_cq_empty(p->s.rcq);
		break;
	}
	snprintf(what, sizeof(what), "%s of %zu octets", op_names[op], len);
	vh_same(dst->p, want, len, what);
	for (size_t i = 0; i < TAIL; i++)
		ck_assert_msg(dst->p[len + i] == TAIL_OCTET, "%s: octet %zu past the end written",
			      what, i);
	vh_buf_guards_intact(cb);
	vh_buf_guards_intact(sb);
	vh_cq_empty(p->c.scq);
	vh_cq_empty(p->s.rcq);
	free(want);
}

/* Loop: op x size x one/two contexts. */
START_TEST(every_operation_moves_data_intact_at_every_size)
{
	enum op op = (enum op)(_i % OP_COUNT);
	size_t len = op_sizes[(_i / OP_COUNT) % NSIZES];
	bool two = _i >= (int)(OP_COUNT * NSIZES);
	struct vh_pair p;

	up(&p, two);
	move_and_check(&p, op, len, th_seed_for((uint64_t)_i));
	/* Twice on the same QP: the second message must not depend on fresh state. */
	move_and_check(&p, op, len, th_seed_for((uint64_t)_i + 1000));
	vh_pair_down(&p);
}
END_TEST

START_TEST(send_gathers_three_sges_and_the_receive_scatters_them_over_four)
{
	static const size_t slen[] = {1000, 1, 70000};
	static const size_t rlen[] = {500, 30000, 20000, 30000};
	struct vh_pair p;
	struct vh_buf *sbuf[3], *rbuf[4];
	struct iwv_sge ss[3], rs[4];
	struct iwv_send_wr wr = {0}, *bad = NULL;
	struct iwv_recv_wr rwr = {0}, *rbad = NULL;
	size_t total = 0, off = 0;
	uint8_t *want;
	struct iwv_wc wc;

	up(&p, false);
	for (int i = 0; i < 3; i++) {
		sbuf[i] = vh_buf_new(&p, &p.c, slen[i], IWV_ACCESS_LOCAL_WRITE);
		vh_fill(sbuf[i]->p, slen[i], th_seed_for(10 + (uint64_t)i));
		ss[i] = vh_sge(sbuf[i], 0, slen[i]);
		total += slen[i];
	}
	for (int i = 0; i < 4; i++) {
		rbuf[i] = vh_buf_new(&p, &p.s, rlen[i], IWV_ACCESS_LOCAL_WRITE);
		memset(rbuf[i]->p, TAIL_OCTET, rlen[i]);
		rs[i] = vh_sge(rbuf[i], 0, rlen[i]);
	}
	want = malloc(total);
	for (int i = 0; i < 3; i++) {
		memcpy(want + off, sbuf[i]->p, slen[i]);
		off += slen[i];
	}
	rwr = (struct iwv_recv_wr){.wr_id = 9, .sg_list = rs, .num_sge = 4};
	ck_assert_int_eq(iwv_post_recv(p.s.qp, &rwr, &rbad), 0);
	wr = (struct iwv_send_wr){.wr_id = 1, .sg_list = ss, .num_sge = 3, .opcode = IWV_WR_SEND};
	ck_assert_int_eq(iwv_post_send(p.c.qp, &wr, &bad), 0);
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 9, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, total);
	off = 0;
	for (int i = 0; i < 4; i++) {
		size_t n = total - off < rlen[i] ? total - off : rlen[i];

		vh_same(rbuf[i]->p, want + off, n, "scattered receive");
		for (size_t k = n; k < rlen[i]; k++)
			ck_assert_uint_eq(rbuf[i]->p[k], TAIL_OCTET);
		off += n;
		vh_buf_guards_intact(rbuf[i]);
	}
	free(want);
	vh_pair_down(&p);
}
END_TEST

START_TEST(rdma_write_gathers_four_sges_into_one_remote_region)
{
	static const size_t slen[] = {3, 4096, 100000, 7};
	struct vh_pair p;
	struct vh_buf *sbuf[4], *dst, *note;
	struct iwv_sge ss[4];
	struct iwv_send_wr wr, *bad = NULL;
	size_t total = 0, off = 0;
	struct iwv_wc wc;

	up(&p, true);
	for (int i = 0; i < 4; i++) {
		sbuf[i] = vh_buf_new(&p, &p.c, slen[i], IWV_ACCESS_LOCAL_WRITE);
		vh_fill(sbuf[i]->p, slen[i], th_seed_for(20 + (uint64_t)i));
		ss[i] = vh_sge(sbuf[i], 0, slen[i]);
		total += slen[i];
	}
	dst = vh_buf_new(&p, &p.s, total + TAIL, VH_ACCESS_ALL);
	memset(dst->p, TAIL_OCTET, total + TAIL);
	note = vh_buf_new(&p, &p.s, 16, IWV_ACCESS_LOCAL_WRITE);
	vh_post_recv(p.s.qp, 5, note, 0, 16);
	wr = (struct iwv_send_wr){.wr_id = 1,
				  .sg_list = ss,
				  .num_sge = 4,
				  .opcode = IWV_WR_RDMA_WRITE,
				  .wr.rdma = {(uint64_t)(uintptr_t)dst->p, dst->mr->rkey}};
	ck_assert_int_eq(iwv_post_send(p.c.qp, &wr, &bad), 0);
	vh_post_send(p.c.qp, IWV_WR_SEND, 2, 0, sbuf[0], 0, 0, NULL, 0);
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	expect_run(&p, p.c.scq, 1, 2, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 5, IWV_WC_SUCCESS, IWV_WC_RECV);
	for (int i = 0; i < 4; i++) {
		vh_same(dst->p + off, sbuf[i]->p, slen[i], "gathered write");
		off += slen[i];
	}
	for (size_t k = 0; k < TAIL; k++)
		ck_assert_uint_eq(dst->p[total + k], TAIL_OCTET);
	vh_buf_guards_intact(dst);
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Inline, signaling, fence, lists                                         */
/* ---------------------------------------------------------------------- */

START_TEST(inline_send_and_write_let_the_buffer_be_reused_right_after_post)
{
	struct vh_pair p;
	struct vh_buf *src, *rcv, *dst;
	uint8_t want[200];
	struct iwv_wc wc;

	up(&p, false);
	ck_assert_uint_ge(p.c.cap.max_inline_data, 256);
	src = vh_buf_new(&p, &p.c, sizeof(want), IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
	dst = vh_buf_new(&p, &p.s, sizeof(want), VH_ACCESS_ALL);
	vh_fill(want, sizeof(want), th_seed_for(30));
	vh_post_recv(p.s.qp, 1, rcv, 0, 4096);
	vh_post_recv(p.s.qp, 2, rcv, 0, 4096);

	memcpy(src->p, want, sizeof(want));
	vh_post_send(p.c.qp, IWV_WR_SEND, 11, IWV_SEND_INLINE, src, 0, sizeof(want), NULL, 0);
	memset(src->p, 0, sizeof(want));
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, sizeof(want));
	vh_same(rcv->p, want, sizeof(want), "inline send");

	memcpy(src->p, want, sizeof(want));
	vh_post_send(p.c.qp, IWV_WR_RDMA_WRITE, 12, IWV_SEND_INLINE, src, 0, sizeof(want), dst, 0);
	memset(src->p, 0, sizeof(want));
	vh_post_send(p.c.qp, IWV_WR_SEND, 13, 0, src, 0, 0, NULL, 0);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RECV);
	vh_same(dst->p, want, sizeof(want), "inline write");
	expect_run(&p, p.c.scq, 1, 11, IWV_WC_SUCCESS, IWV_WC_SEND);
	expect_run(&p, p.c.scq, 1, 12, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	expect_run(&p, p.c.scq, 1, 13, IWV_WC_SUCCESS, IWV_WC_SEND);
	vh_pair_down(&p);
}
END_TEST

/* ibverbs: "IBV_SEND_INLINE ... The L_Key will not be checked." */
START_TEST(inline_send_from_unregistered_memory_ignores_the_lkey)
{
	struct vh_pair p;
	struct vh_buf *rcv;
	uint8_t data[64];
	struct iwv_sge sge = {(uint64_t)(uintptr_t)data, sizeof(data), 0};
	struct iwv_send_wr wr = {.wr_id = 1,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IWV_WR_SEND,
				 .send_flags = IWV_SEND_INLINE | IWV_SEND_SIGNALED},
			   *bad = NULL;
	uint8_t want[64];
	struct iwv_wc wc;

	up(&p, false);
	rcv = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE);
	vh_post_recv(p.s.qp, 2, rcv, 0, 64);
	vh_fill(data, sizeof(data), th_seed_for(31));
	memcpy(want, data, sizeof(want));
	ck_assert_int_eq(iwv_post_send(p.c.qp, &wr, &bad), 0);
	memset(data, 0, sizeof(data));
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RECV);
	vh_same(rcv->p, want, sizeof(want), "inline send without an MR");
	vh_pair_down(&p);
}
END_TEST

START_TEST(unsignaled_wrs_complete_silently_and_the_signaled_one_completes)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_send_wr wr[11], *bad = NULL;
	struct iwv_sge sge[11];
	struct iwv_wc wc;

	vh_cfg_default(&cfg);
	cfg.sq_sig_all = 0;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, 11 * 100, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 11 * 100, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 11 * 100, th_seed_for(40));
	for (int i = 0; i < 11; i++) {
		vh_post_recv(p.s.qp, 100 + (uint64_t)i, rcv, (size_t)i * 100, 100);
		sge[i] = vh_sge(src, (size_t)i * 100, 100);
		wr[i] = (struct iwv_send_wr){.wr_id = 1 + (uint64_t)i,
					     .next = i < 10 ? &wr[i + 1] : NULL,
					     .sg_list = &sge[i],
					     .num_sge = 1,
					     .opcode = IWV_WR_SEND,
					     .send_flags = i == 10 ? IWV_SEND_SIGNALED : 0};
	}
	ck_assert_int_eq(iwv_post_send(p.c.qp, wr, &bad), 0);
	/* Completions come in post order: a wrongly signaled WR would come first. */
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 11, IWV_WC_SUCCESS, IWV_WC_SEND);
	expect_run(&p, p.s.rcq, 11, 100, IWV_WC_SUCCESS, IWV_WC_RECV);
	vh_same(rcv->p, src->p, 11 * 100, "eleven sends");
	vh_cq_empty(p.c.scq);
	vh_pair_down(&p);
}
END_TEST

START_TEST(sq_sig_all_signals_wrs_posted_without_the_signaled_flag)
{
	struct vh_pair p;
	struct vh_buf *src, *rcv;

	up(&p, false); /* vh_cfg_default: sq_sig_all = 1 */
	src = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 3 * 64, IWV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 3; i++) {
		vh_post_recv(p.s.qp, 10 + (uint64_t)i, rcv, (size_t)i * 64, 64);
		vh_post_send(p.c.qp, IWV_WR_SEND, 1 + (uint64_t)i, 0, src, 0, 64, NULL, 0);
	}
	expect_run(&p, p.c.scq, 3, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	expect_run(&p, p.s.rcq, 3, 10, IWV_WC_SUCCESS, IWV_WC_RECV);
	vh_pair_down(&p);
}
END_TEST

START_TEST(fenced_send_after_an_rdma_read_carries_the_data_the_read_brought)
{
	const size_t len = VH_MIB;
	struct vh_pair p;
	struct vh_buf *remote, *local, *rcv;
	struct iwv_sge rs, ss;
	struct iwv_send_wr wr[2], *bad = NULL;
	struct iwv_wc wc;

	up(&p, true);
	remote = vh_buf_new(&p, &p.s, len, VH_ACCESS_ALL);
	local = vh_buf_new(&p, &p.c, len, VH_ACCESS_ALL);
	rcv = vh_buf_new(&p, &p.s, len, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(remote->p, len, th_seed_for(50));
	memset(local->p, 0, len);
	vh_post_recv(p.s.qp, 7, rcv, 0, len);
	rs = vh_sge(local, 0, len);
	ss = vh_sge(local, 0, len);
	wr[0] = (struct iwv_send_wr){.wr_id = 1,
				     .next = &wr[1],
				     .sg_list = &rs,
				     .num_sge = 1,
				     .opcode = IWV_WR_RDMA_READ,
				     .wr.rdma = {(uint64_t)(uintptr_t)remote->p, remote->mr->rkey}};
	wr[1] = (struct iwv_send_wr){.wr_id = 2,
				     .sg_list = &ss,
				     .num_sge = 1,
				     .opcode = IWV_WR_SEND,
				     .send_flags = IWV_SEND_FENCE};
	ck_assert_int_eq(iwv_post_send(p.c.qp, wr, &bad), 0);
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_READ);
	expect_run(&p, p.c.scq, 1, 2, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 7, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, len);
	vh_same(rcv->p, remote->p, len, "fenced send");
	vh_pair_down(&p);
}
END_TEST

START_TEST(a_list_of_100_sends_posted_at_once_arrives_complete_and_in_order)
{
	enum { N = 100, SLOT = 2048 };
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_send_wr wr[N], *bad = NULL;
	struct iwv_recv_wr rwr[N], *rbad = NULL;
	struct iwv_sge ss[N], rs[N];
	struct iwv_wc wc;

	up(&p, true);
	src = vh_buf_new(&p, &p.c, N * SLOT, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, N * SLOT, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, N * SLOT, th_seed_for(60));
	for (int i = 0; i < N; i++) {
		rs[i] = vh_sge(rcv, (size_t)i * SLOT, SLOT);
		rwr[i] = (struct iwv_recv_wr){.wr_id = 1000 + (uint64_t)i,
					      .next = i < N - 1 ? &rwr[i + 1] : NULL,
					      .sg_list = &rs[i],
					      .num_sge = 1};
		ss[i] = vh_sge(src, (size_t)i * SLOT, 1000 + (size_t)i);
		wr[i] = (struct iwv_send_wr){.wr_id = (uint64_t)i,
					     .next = i < N - 1 ? &wr[i + 1] : NULL,
					     .sg_list = &ss[i],
					     .num_sge = 1,
					     .opcode = IWV_WR_SEND};
	}
	ck_assert_int_eq(iwv_post_recv(p.s.qp, rwr, &rbad), 0);
	ck_assert_int_eq(iwv_post_send(p.c.qp, wr, &bad), 0);
	expect_run(&p, p.c.scq, N, 0, IWV_WC_SUCCESS, IWV_WC_SEND);
	for (int i = 0; i < N; i++) {
		wc = vh_poll1(&p.w, p.s.rcq);
		vh_wc_is(&wc, 1000 + (uint64_t)i, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, 1000 + (uint32_t)i);
		vh_same(rcv->p + (size_t)i * SLOT, src->p + (size_t)i * SLOT, 1000 + (size_t)i,
			"send of the list");
	}
	vh_pair_down(&p);
}
END_TEST

START_TEST(a_list_of_100_mixed_writes_sends_and_reads_completes_in_post_order)
{
	enum { N = 100, SLOT = 4096 };
	struct vh_pair p;
	struct vh_buf *csrc, *cdst, *sdst, *ssrc, *rcv;
	struct iwv_send_wr wr[N], *bad = NULL;
	struct iwv_sge sg[N];
	int nsend = 0;
	struct iwv_wc wc;

	up(&p, false);
	csrc = vh_buf_new(&p, &p.c, N * SLOT, IWV_ACCESS_LOCAL_WRITE);
	cdst = vh_buf_new(&p, &p.c, N * SLOT, IWV_ACCESS_LOCAL_WRITE);
	sdst = vh_buf_new(&p, &p.s, N * SLOT, VH_ACCESS_ALL);
	ssrc = vh_buf_new(&p, &p.s, N * SLOT, VH_ACCESS_ALL);
	rcv = vh_buf_new(&p, &p.s, (N + 1) * SLOT, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(csrc->p, N * SLOT, th_seed_for(70));
	vh_fill(ssrc->p, N * SLOT, th_seed_for(71));
	memset(cdst->p, 0, N * SLOT);
	memset(sdst->p, 0, N * SLOT);
	for (int i = 0; i < N; i++) {
		size_t off = (size_t)i * SLOT, len = 100 + (size_t)i * 37;

		wr[i] = (struct iwv_send_wr){.wr_id = (uint64_t)i,
					     .next = i < N - 1 ? &wr[i + 1] : NULL,
					     .sg_list = &sg[i],
					     .num_sge = 1};
		switch (i % 3) {
		case 0:
			sg[i] = vh_sge(csrc, off, len);
			wr[i].opcode = IWV_WR_RDMA_WRITE;
			wr[i].wr.rdma.remote_addr = (uint64_t)(uintptr_t)(sdst->p + off);
			wr[i].wr.rdma.rkey = sdst->mr->rkey;
			break;
		case 1:
			sg[i] = vh_sge(csrc, off, len);
			wr[i].opcode = IWV_WR_SEND;
			vh_post_recv(p.s.qp, (uint64_t)i, rcv, off, SLOT);
			nsend++;
			break;
		default:
			sg[i] = vh_sge(cdst, off, len);
			wr[i].opcode = IWV_WR_RDMA_READ;
			wr[i].wr.rdma.remote_addr = (uint64_t)(uintptr_t)(ssrc->p + off);
			wr[i].wr.rdma.rkey = ssrc->mr->rkey;
			break;
		}
	}
	vh_post_recv(p.s.qp, 999, rcv, (size_t)N * SLOT, SLOT);
	ck_assert_int_eq(iwv_post_send(p.c.qp, wr, &bad), 0);
	vh_post_send(p.c.qp, IWV_WR_SEND, 999, 0, csrc, 0, 0, NULL, 0);
	for (int i = 0; i < N; i++) {
		static const enum iwv_wc_opcode wop[3] = {IWV_WC_RDMA_WRITE, IWV_WC_SEND,
							  IWV_WC_RDMA_READ};

		wc = vh_poll1(&p.w, p.c.scq);
		vh_wc_is(&wc, (uint64_t)i, IWV_WC_SUCCESS, wop[i % 3]);
	}
	expect_run(&p, p.c.scq, 1, 999, IWV_WC_SUCCESS, IWV_WC_SEND);
	for (int i = 1; i < N; i += 3) {
		wc = vh_poll1(&p.w, p.s.rcq);
		vh_wc_is(&wc, (uint64_t)i, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, 100 + (uint32_t)i * 37);
	}
	expect_run(&p, p.s.rcq, 1, 999, IWV_WC_SUCCESS, IWV_WC_RECV);
	for (int i = 0; i < N; i++) {
		size_t off = (size_t)i * SLOT, len = 100 + (size_t)i * 37;

		if (i % 3 == 0)
			vh_same(sdst->p + off, csrc->p + off, len, "write of the list");
		else if (i % 3 == 1)
			vh_same(rcv->p + off, csrc->p + off, len, "send of the list");
		else
			vh_same(cdst->p + off, ssrc->p + off, len, "read of the list");
	}
	ck_assert_int_eq(nsend, 33);
	vh_pair_down(&p);
}
END_TEST

START_TEST(more_reads_than_ord_are_held_back_until_earlier_ones_complete)
{
	enum { N = 16, SLOT = 65536 };
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *dst;
	struct iwv_send_wr wr[N], *bad = NULL;
	struct iwv_sge sg[N];
	struct iwv_qp_attr qa;
	struct iwv_qp_init_attr ia;

	vh_cfg_default(&cfg);
	cfg.c_param.initiator_depth = 1;
	cfg.c_param.responder_resources = 1;
	cfg.s_param.initiator_depth = 1;
	cfg.s_param.responder_resources = 1;
	vh_pair_up(&p, &cfg);
	ck_assert_int_eq(iwv_query_qp(p.c.qp, &qa, IWV_QP_MAX_QP_RD_ATOMIC, &ia), 0);
	ck_assert_uint_eq(qa.max_rd_atomic, 1);
	src = vh_buf_new(&p, &p.s, N * SLOT, VH_ACCESS_ALL);
	dst = vh_buf_new(&p, &p.c, N * SLOT, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, N * SLOT, th_seed_for(80));
	for (int i = 0; i < N; i++) {
		sg[i] = vh_sge(dst, (size_t)i * SLOT, SLOT);
		wr[i] = (struct iwv_send_wr){
			.wr_id = (uint64_t)i,
			.next = i < N - 1 ? &wr[i + 1] : NULL,
			.sg_list = &sg[i],
			.num_sge = 1,
			.opcode = IWV_WR_RDMA_READ,
			.wr.rdma = {(uint64_t)(uintptr_t)(src->p + (size_t)i * SLOT),
				    src->mr->rkey}};
	}
	ck_assert_int_eq(iwv_post_send(p.c.qp, wr, &bad), 0);
	expect_run(&p, p.c.scq, N, 0, IWV_WC_SUCCESS, IWV_WC_RDMA_READ);
	vh_same(dst->p, src->p, N * SLOT, "reads beyond ORD");
	vh_pair_down(&p);
}
END_TEST

START_TEST(query_qp_reports_rts_the_caps_and_the_negotiated_ird_and_ord)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct iwv_qp_attr a;
	struct iwv_qp_init_attr ia;
	int mask = IWV_QP_STATE | IWV_QP_CAP | IWV_QP_MAX_QP_RD_ATOMIC | IWV_QP_MAX_DEST_RD_ATOMIC;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.c_param.responder_resources = 4; /* client IRD */
	cfg.c_param.initiator_depth = 8;     /* client ORD */
	cfg.s_param.responder_resources = 6; /* server IRD */
	cfg.s_param.initiator_depth = 10;    /* server ORD */
	vh_pair_up(&p, &cfg);

	ck_assert_int_eq(iwv_query_qp(p.c.qp, &a, mask, &ia), 0);
	ck_assert_int_eq(a.qp_state, IWV_QPS_RTS);
	ck_assert_uint_eq(a.cap.max_send_wr, p.c.cap.max_send_wr);
	ck_assert_uint_eq(a.cap.max_recv_wr, p.c.cap.max_recv_wr);
	ck_assert_int_eq(a.qp_err, 0);
	/* RFC 6581 §9.1: ORD lowered to the peer's IRD; IRD as offered. */
	ck_assert_uint_eq(a.max_rd_atomic, 6);
	ck_assert_uint_eq(a.max_dest_rd_atomic, 4);
	ck_assert_ptr_eq(ia.send_cq, p.c.scq);
	ck_assert_ptr_eq(ia.recv_cq, p.c.rcq);

	ck_assert_int_eq(iwv_query_qp(p.s.qp, &a, mask, &ia), 0);
	ck_assert_int_eq(a.qp_state, IWV_QPS_RTS);
	ck_assert_uint_eq(a.max_rd_atomic, 4);
	ck_assert_uint_eq(a.max_dest_rd_atomic, 6);
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Completion channels and notification                                    */
/* ---------------------------------------------------------------------- */

static void wait_cq_event(struct vh_pair *p, struct iwv_comp_channel *cc, struct iwv_cq **cq,
			  void **cqc)
{
	uint64_t end = vh_deadline();

	while (iwv_get_cq_event(cc, cq, cqc)) {
		ck_assert_msg(errno == EAGAIN, "iwv_get_cq_event: %s", strerror(errno));
		ck_assert_msg(th_now_ms() <= end, "no CQ event within %d ms", vh_deadline_ms);
		vh_step(&p->w);
	}
}

static bool fd_readable(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static void no_cq_event(struct iwv_comp_channel *cc)
{
	struct iwv_cq *cq = NULL;
	void *cqc = NULL;

	ck_assert(!fd_readable(cc->fd));
	errno = 0;
	ck_assert_int_eq(iwv_get_cq_event(cc, &cq, &cqc), -1);
	ck_assert_int_eq(errno, EAGAIN);
}

START_TEST(an_armed_cq_makes_the_channel_fd_readable_and_get_cq_event_returns_it)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_cq *cq = NULL;
	void *cqc = NULL;
	uint64_t end;
	struct iwv_wc wc;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.comp_channel = true;
	vh_pair_up(&p, &cfg);
	ih_set_nonblock(p.s.cc->fd, true);
	src = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE);
	vh_post_recv(p.s.qp, 1, rcv, 0, 64);
	vh_post_recv(p.s.qp, 2, rcv, 0, 64);
	ck_assert_int_eq(iwv_req_notify_cq(p.s.rcq, 0), 0);
	no_cq_event(p.s.cc);

	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 64, NULL, 0);
	end = vh_deadline();
	while (!fd_readable(p.s.cc->fd)) {
		ck_assert_msg(th_now_ms() <= end, "channel fd not readable within %d ms",
			      vh_deadline_ms);
		vh_step(&p.w);
	}
	ck_assert_int_eq(iwv_get_cq_event(p.s.cc, &cq, &cqc), 0);
	ck_assert_ptr_eq(cq, p.s.rcq);
	ck_assert_ptr_eq(cqc, &p.s);
	iwv_ack_cq_events(cq, 1);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);

	/* One event per arming: the next completion alone posts none. */
	vh_post_send(p.c.qp, IWV_WR_SEND, 2, 0, src, 0, 64, NULL, 0);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RECV);
	no_cq_event(p.s.cc);
	vh_pair_down(&p);
}
END_TEST

START_TEST(destroy_cq_with_an_unacknowledged_event_returns_ebusy)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_cq *cq = NULL;
	void *cqc = NULL;

	vh_cfg_default(&cfg);
	cfg.comp_channel = true;
	vh_pair_up(&p, &cfg);
	ih_set_nonblock(p.s.cc->fd, true);
	src = vh_buf_new(&p, &p.c, 8, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 8, IWV_ACCESS_LOCAL_WRITE);
	vh_post_recv(p.s.qp, 1, rcv, 0, 8);
	ck_assert_int_eq(iwv_req_notify_cq(p.s.rcq, 0), 0);
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 8, NULL, 0);
	wait_cq_event(&p, p.s.cc, &cq, &cqc);
	ck_assert_ptr_eq(cq, p.s.rcq);

	/* The QP goes first, so only the event keeps the CQ busy. */
	(void)iwcm_disconnect(p.s.id);
	vh_side_wait_disconnected(&p, &p.s);
	vh_side_wait_disconnected(&p, &p.c);
	iwcm_destroy_qp(p.s.id);
	p.s.qp = NULL;
	ck_assert_int_eq(iwv_destroy_cq(p.s.rcq), EBUSY);
	iwv_ack_cq_events(p.s.rcq, 1);
	vh_pair_down(&p);
}
END_TEST

START_TEST(solicited_only_notification_fires_for_the_solicited_send_alone)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_cq *cq = NULL;
	void *cqc = NULL;
	struct iwv_wc wc;

	vh_cfg_default(&cfg);
	cfg.comp_channel = true;
	cfg.two_ctx = true;
	vh_pair_up(&p, &cfg);
	ih_set_nonblock(p.s.cc->fd, true);
	src = vh_buf_new(&p, &p.c, 32, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE);
	vh_post_recv(p.s.qp, 1, rcv, 0, 32);
	vh_post_recv(p.s.qp, 2, rcv, 32, 32);
	ck_assert_int_eq(iwv_req_notify_cq(p.s.rcq, 1), 0);

	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 32, NULL, 0);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert(!wc.solicited);
	/* The notification would have been posted with that completion. */
	no_cq_event(p.s.cc);

	vh_post_send(p.c.qp, IWV_WR_SEND, 2, IWV_SEND_SOLICITED, src, 0, 32, NULL, 0);
	wait_cq_event(&p, p.s.cc, &cq, &cqc);
	ck_assert_ptr_eq(cq, p.s.rcq);
	iwv_ack_cq_events(cq, 1);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert(wc.solicited);
	expect_run(&p, p.c.scq, 2, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	vh_pair_down(&p);
}
END_TEST

START_TEST(blocking_get_cq_event_progresses_the_stack_until_the_completion_arrives)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_cq *cq = NULL;
	void *cqc = NULL;
	int rc;

	vh_cfg_default(&cfg);
	cfg.comp_channel = true;
	cfg.c_thread = 0;
	cfg.s_thread = 0;
	vh_pair_up(&p, &cfg); /* one context: the blocked call moves both ends */
	src = vh_buf_new(&p, &p.c, 4 * VH_MIB, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 4 * VH_MIB, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 4 * VH_MIB, th_seed_for(90));
	vh_post_recv(p.s.qp, 1, rcv, 0, 4 * VH_MIB);
	ck_assert_int_eq(iwv_req_notify_cq(p.s.rcq, 0), 0);
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 4 * VH_MIB, NULL, 0);
	alarm(20); /* SIGALRM fails the test if the call never returns */
	rc = iwv_get_cq_event(p.s.cc, &cq, &cqc);
	alarm(0);
	ck_assert_msg(rc == 0, "iwv_get_cq_event: %s", strerror(errno));
	ck_assert_ptr_eq(cq, p.s.rcq);
	iwv_ack_cq_events(cq, 1);
	expect_run(&p, p.s.rcq, 1, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	vh_same(rcv->p, src->p, 4 * VH_MIB, "send seen through a blocking get_cq_event");
	vh_pair_down(&p);
}
END_TEST

struct waiter {
	struct iwv_comp_channel *cc;
	struct iwv_cq *cq;
	void *cqc;
	int rc, err;
	int started;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
	w->rc = iwv_get_cq_event(w->cc, &w->cq, &w->cqc);
	w->err = errno;
	return NULL;
}

START_TEST(engine_thread_wakes_a_thread_blocked_in_get_cq_event)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct waiter wt = {0};
	pthread_t th;
	struct timespec ts;
	struct iwv_wc wc;
	uint64_t end;
	int n = 0;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.comp_channel = true;
	cfg.s_thread = 1; /* the server progresses on its own */
	cfg.c_thread = 0;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, 65536, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 65536, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 65536, th_seed_for(100));
	vh_post_recv(p.s.qp, 1, rcv, 0, 65536);
	ck_assert_int_eq(iwv_req_notify_cq(p.s.rcq, 0), 0);
	wt.cc = p.s.cc;
	ck_assert_int_eq(pthread_create(&th, NULL, waiter_main, &wt), 0);
	while (!__atomic_load_n(&wt.started, __ATOMIC_ACQUIRE))
		sched_yield();

	/* Only the client's context is driven from here: its CQ alone. */
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 65536, NULL, 0);
	end = vh_deadline();
	while (n == 0) {
		n = iwv_poll_cq(p.c.scq, 1, &wc);
		ck_assert_int_ge(n, 0);
		ck_assert_msg(th_now_ms() <= end, "send not complete within %d ms", vh_deadline_ms);
	}
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_SEND);

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += vh_deadline_ms / 1000;
	ck_assert_msg(pthread_timedjoin_np(th, NULL, &ts) == 0,
		      "the thread blocked in iwv_get_cq_event was not woken");
	ck_assert_msg(wt.rc == 0, "iwv_get_cq_event: %s", strerror(wt.err));
	ck_assert_ptr_eq(wt.cq, p.s.rcq);
	ck_assert_ptr_eq(wt.cqc, &p.s);
	iwv_ack_cq_events(wt.cq, 1);
	expect_run(&p, p.s.rcq, 1, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	vh_same(rcv->p, src->p, 65536, "send to an engine-thread context");
	vh_pair_down(&p);
}
END_TEST

/*
 * Posts after the first since the last poll are a batch that the next poll
 * writes (iwv_ctx_defer): a program that posts several and then never calls
 * in again - it waits on memory - must still see them go out, written by its
 * engine thread.  The client polls once, posts three Writes into the
 * server's buffer and then only watches the server's side from afar.
 */
START_TEST(engine_thread_writes_a_batch_of_posts_nobody_polls_for)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *dst;
	struct iwv_wc wc;
	uint64_t end;
	const size_t part = 4096;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.c_thread = 1;
	cfg.s_thread = 1;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, 3 * part, IWV_ACCESS_LOCAL_WRITE);
	dst = vh_buf_new(&p, &p.s, 3 * part, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE);
	vh_fill(src->p, 3 * part, th_seed_for(101));
	/* the flag the loop below watches: the last octet of the last Write */
	src->p[3 * part - 1] = 0xA5;
	memset(dst->p, 0, 3 * part);
	ck_assert_int_eq(iwv_poll_cq(p.c.scq, 1, &wc), 0);
	for (int i = 0; i < 3; i++)
		vh_post_send(p.c.qp, IWV_WR_RDMA_WRITE, (uint64_t)i + 1, 0, src, i * part, part,
			     dst, i * part);
	end = vh_deadline();
	while (__atomic_load_n(&dst->p[3 * part - 1], __ATOMIC_ACQUIRE) != src->p[3 * part - 1]) {
		ck_assert_msg(th_now_ms() <= end, "the batch was not written within %d ms",
			      vh_deadline_ms);
		usleep(100);
	}
	/* the server's engine thread placed the data under its context's lock:
	 * a call that takes it orders the reads below after those writes */
	ck_assert_int_eq(iwv_poll_cq(p.s.rcq, 1, &wc), 0);
	vh_same(dst->p, src->p, 3 * part, "a batch of Writes written by the engine thread");
	expect_run(&p, p.c.scq, 3, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	vh_pair_down(&p);
}
END_TEST

/*
 * The engine thread stands aside while the program polls an empty CQ, and
 * must come back once it stops: here the client busy-polls for a while, then
 * spins on memory for the server's Write, as ib_write_lat does.
 */
START_TEST(engine_thread_comes_back_when_the_program_stops_polling)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *dst;
	struct iwv_wc wc;
	uint64_t end;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.c_thread = 1;
	cfg.s_thread = 1;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE);
	dst = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE);
	vh_fill(src->p, 64, th_seed_for(102));
	src->p[63] = 0xA5;
	memset(dst->p, 0, 64);
	/* MPA: the responder sends only after the initiator's first FPDU */
	vh_post_send(p.c.qp, IWV_WR_RDMA_WRITE, 100, 0, dst, 0, 1, src, 0);
	expect_run(&p, p.c.scq, 1, 100, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	for (int round = 0; round < 20; round++) {
		/* two milliseconds of empty polls; then the server writes, and the
		 * client only watches memory */
		end = th_now_ms() + 2;
		while (th_now_ms() < end)
			ck_assert_int_eq(iwv_poll_cq(p.c.rcq, 1, &wc), 0);
		src->p[62] = (uint8_t)round;
		vh_post_send(p.s.qp, IWV_WR_RDMA_WRITE, (uint64_t)round + 1, 0, src, 0, 64, dst, 0);
		end = vh_deadline();
		while (__atomic_load_n(&dst->p[62], __ATOMIC_ACQUIRE) != (uint8_t)round ||
		       __atomic_load_n(&dst->p[63], __ATOMIC_ACQUIRE) != 0xA5) {
			ck_assert_msg(th_now_ms() <= end, "round %d: the Write did not land",
				      round);
			sched_yield();
		}
		expect_run(&p, p.s.scq, 1, (uint64_t)round + 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	}
	/* ordered after the client's engine thread's writes by its lock */
	ck_assert_int_eq(iwv_poll_cq(p.c.rcq, 1, &wc), 0);
	vh_same(dst->p, src->p, 64, "Writes placed by the engine thread");
	vh_pair_down(&p);
}
END_TEST

/*
 * Completions are never hidden from the fds that signal them: without an
 * engine thread, a poll of the send CQ that receives a Send puts its
 * completion into the receive CQ, which the program polled before it came;
 * the channel fds must be readable then (the socket that brought it is
 * drained), and quiet again once the receive CQ is polled empty.
 */
START_TEST(a_completion_moved_by_polling_another_cq_makes_the_channel_fd_readable)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_wc wc;
	struct pollfd pfd;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.c_thread = 0;
	cfg.s_thread = 0;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 64, th_seed_for(114));
	vh_post_recv(p.s.qp, 1, rcv, 0, 64);
	ck_assert_int_eq(iwv_poll_cq(p.s.rcq, 1, &wc), 0);
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 64, NULL, 0);
	/* sent (the client's progress, which also ends its first-FPDU pause) */
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	usleep(100000); /* the Send waits in the server's socket */
	ck_assert_int_eq(iwv_poll_cq(p.s.scq, 1, &wc), 0);
	pfd = (struct pollfd){.fd = p.s.ch->fd, .events = POLLIN};
	ck_assert_msg(poll(&pfd, 1, 2000) == 1, "the CM channel fd stayed quiet");
	ck_assert_int_eq(iwv_poll_cq(p.s.rcq, 1, &wc), 1);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	vh_same(rcv->p, src->p, 64, "the Send");
	ck_assert_int_eq(iwv_poll_cq(p.s.rcq, 1, &wc), 0);
	ck_assert_msg(poll(&pfd, 1, 0) == 0, "the CM channel fd stays readable");
	vh_pair_down(&p);
}
END_TEST

/*
 * Receiver not ready (iwv_qp_init_attr.rnr_hold_ms): Sends that find no
 * receive wait for one instead of ending the connection.  The client sends
 * three messages of several FPDUs each (and, with the engine in between,
 * TCP segments) to a server with no receive posted; the server posts its
 * receives one at a time, later; every message arrives whole and in order,
 * and both QPs stay up (a Send both ways afterwards).
 */
/* The server posts a receive for each of n held Sends of len octets (wr_id
 * 1..n), one at a time: each completes whole and in order, the data is the
 * client's, and the client's Sends complete. */
static void recv_held_sends(struct vh_pair *p, const struct vh_buf *rcv, const struct vh_buf *src,
			    int n, size_t len, const char *what)
{
	struct iwv_wc wc;

	for (int i = 0; i < n; i++) {
		vh_post_recv(p->s.qp, (uint64_t)i + 1, rcv, (size_t)i * len, len);
		wc = vh_poll1(&p->w, p->s.rcq);
		vh_wc_is(&wc, (uint64_t)i + 1, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, len);
	}
	vh_same(rcv->p, src->p, (size_t)n * len, what);
	expect_run(p, p->c.scq, n, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
}

static void rnr_hold_case(int engine_thread)
{
	enum { LEN = 200000, N = 3 };
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv, *back, *brcv;
	struct iwv_wc wc;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.c_thread = engine_thread;
	cfg.s_thread = engine_thread;
	cfg.s_rnr_hold_ms = 10000;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, N * LEN, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, N * LEN, IWV_ACCESS_LOCAL_WRITE);
	back = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE);
	brcv = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, N * LEN, th_seed_for(110));
	vh_fill(back->p, 64, th_seed_for(111));
	for (int i = 0; i < N; i++)
		vh_post_send(p.c.qp, IWV_WR_SEND, (uint64_t)i + 1, 0, src, (size_t)i * LEN, LEN,
			     NULL, 0);
	/* the first message waits at the server; nothing completes there */
	for (int k = 0; k < 50; k++) {
		ck_assert_int_eq(iwv_poll_cq(p.s.rcq, 1, &wc), 0);
		(void)iwv_poll_cq(p.c.scq, 0, &wc);
		usleep(1000);
	}
	ck_assert_int_eq(p.s.qp->state, IWV_QPS_RTS);
	recv_held_sends(&p, rcv, src, N, LEN, "Sends that waited for their receives");
	vh_post_recv(p.c.qp, 9, brcv, 0, 64);
	vh_post_send(p.s.qp, IWV_WR_SEND, 9, 0, back, 0, 64, NULL, 0);
	expect_run(&p, p.c.rcq, 1, 9, IWV_WC_SUCCESS, IWV_WC_RECV);
	expect_run(&p, p.s.scq, 1, 9, IWV_WC_SUCCESS, IWV_WC_SEND);
	vh_same(brcv->p, back->p, 64, "a Send back after the wait");
	vh_pair_down(&p);
}

START_TEST(rnr_hold_sends_wait_for_their_receives)
{
	rnr_hold_case(0);
}
END_TEST

START_TEST(rnr_hold_sends_wait_for_their_receives_with_engine_threads)
{
	rnr_hold_case(1);
}
END_TEST

/*
 * Held octets are the connection's own.  Without io_uring every connection
 * of a context reads into one shared buffer (iwcm.c, rx_buffer); a stream
 * held for a receive keeps the octets the QP did not take, so they must
 * leave that buffer before anything else is read into it.  Client and server
 * in one context: the server's end holds three 200000-octet Sends (several
 * reads' worth, so octets are waiting when the hold begins) while the
 * client's end receives four messages the other way through the same buffer;
 * then the server posts its receives and every octet is the client's.
 */
START_TEST(rnr_hold_octets_survive_reads_of_other_connections)
{
	enum { LEN = 200000, N = 3, M = 4 };
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv, *back, *brcv;
	struct iwv_wc wc;

	vh_cfg_default(&cfg);
	cfg.two_ctx = false;
	cfg.s_thread = 0;
	cfg.s_rnr_hold_ms = 10000;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, N * LEN, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, N * LEN, IWV_ACCESS_LOCAL_WRITE);
	back = vh_buf_new(&p, &p.s, M * LEN, IWV_ACCESS_LOCAL_WRITE);
	brcv = vh_buf_new(&p, &p.c, M * LEN, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, N * LEN, th_seed_for(114));
	vh_fill(back->p, M * LEN, th_seed_for(115));
	/* one message first: a responder sends nothing before it has received
	 * and checked an FPDU (RFC 5044 §7.1.2), and a held one is not checked */
	vh_post_recv(p.s.qp, 50, rcv, 0, 64);
	vh_post_send(p.c.qp, IWV_WR_SEND, 50, 0, src, 0, 64, NULL, 0);
	expect_run(&p, p.s.rcq, 1, 50, IWV_WC_SUCCESS, IWV_WC_RECV);
	expect_run(&p, p.c.scq, 1, 50, IWV_WC_SUCCESS, IWV_WC_SEND);
	for (int i = 0; i < N; i++)
		vh_post_send(p.c.qp, IWV_WR_SEND, (uint64_t)i + 1, 0, src, (size_t)i * LEN, LEN,
			     NULL, 0);
	for (int k = 0; k < 50; k++) {
		ck_assert_int_eq(iwv_poll_cq(p.s.rcq, 1, &wc), 0);
		usleep(1000);
	}
	ck_assert_int_eq(p.s.qp->state, IWV_QPS_RTS);
	/* the other way, through the same context, while the server's end waits */
	for (int i = 0; i < M; i++) {
		vh_post_recv(p.c.qp, 100 + (uint64_t)i, brcv, (size_t)i * LEN, LEN);
		vh_post_send(p.s.qp, IWV_WR_SEND, 100 + (uint64_t)i, 0, back, (size_t)i * LEN, LEN,
			     NULL, 0);
	}
	expect_run(&p, p.c.rcq, M, 100, IWV_WC_SUCCESS, IWV_WC_RECV);
	expect_run(&p, p.s.scq, M, 100, IWV_WC_SUCCESS, IWV_WC_SEND);
	vh_same(brcv->p, back->p, M * LEN, "Sends to the client while the server's end is held");
	recv_held_sends(&p, rcv, src, N, LEN, "held Sends, after other reads of the context");
	vh_pair_down(&p);
}
END_TEST

/*
 * Each held message gets a wait of its own: two Sends, rnr_hold_ms 1000, the
 * server posts a receive 600 ms after the first hold and another 600 ms later.
 * Both arrive (one clock for both would have ended the connection at 1000).
 */
START_TEST(rnr_hold_each_message_waits_on_its_own_clock)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_wc wc;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.s_rnr_hold_ms = 1000;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, 2 * 4096, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 2 * 4096, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 2 * 4096, th_seed_for(113));
	for (int i = 0; i < 2; i++)
		vh_post_send(p.c.qp, IWV_WR_SEND, (uint64_t)i + 1, 0, src, (size_t)i * 4096, 4096,
			     NULL, 0);
	for (int i = 0; i < 2; i++) {
		uint64_t t0 = th_now_ms();

		while (th_now_ms() - t0 < 600) {
			ck_assert_int_eq(iwv_poll_cq(p.s.rcq, 1, &wc), 0);
			(void)iwv_poll_cq(p.c.scq, 0, &wc);
			usleep(1000);
		}
		ck_assert_int_eq(p.s.qp->state, IWV_QPS_RTS);
		vh_post_recv(p.s.qp, (uint64_t)i + 1, rcv, (size_t)i * 4096, 4096);
		wc = vh_poll1(&p.w, p.s.rcq);
		vh_wc_is(&wc, (uint64_t)i + 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	}
	vh_same(rcv->p, src->p, 2 * 4096, "two Sends, each held 600 ms");
	expect_run(&p, p.c.scq, 2, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	vh_pair_down(&p);
}
END_TEST

/*
 * The wait is bounded: no receive within rnr_hold_ms, and the server's QP
 * fails with the "no buffer" Terminate of RFC 5041 §7.2 (DDP, untagged
 * buffer error, code 2) as it would at once without the option; the client
 * learns it from that Terminate.
 */
START_TEST(rnr_hold_gives_up_with_the_no_buffer_terminate)
{
	struct vh_cfg cfg;
	struct vh_pair p;
	struct vh_buf *src;
	struct iwv_qp_attr qa;
	struct iwv_qp_init_attr ia;
	struct iwv_wc wc;
	uint64_t t0, end;

	vh_cfg_default(&cfg);
	cfg.two_ctx = true;
	cfg.s_rnr_hold_ms = 200;
	vh_pair_up(&p, &cfg);
	src = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 4096, th_seed_for(112));
	t0 = th_now_ms();
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 4096, NULL, 0);
	end = vh_deadline();
	for (;;) {
		(void)iwv_poll_cq(p.s.rcq, 1, &wc);
		(void)iwv_poll_cq(p.c.rcq, 1, &wc);
		ck_assert_int_eq(iwv_query_qp(p.s.qp, &qa, IWV_QP_STATE, &ia), 0);
		if (qa.qp_state == IWV_QPS_ERR)
			break;
		ck_assert_msg(th_now_ms() <= end, "the held Send never failed");
		usleep(1000);
	}
	ck_assert_uint_ge(th_now_ms() - t0, 150);
	ck_assert_msg(qa.qp_err == IW_EDDP_U_NO_BUFFER, "server qp_err %s", iwv_errname(qa.qp_err));
	/* the client learns it from the Terminate */
	end = vh_deadline();
	do {
		(void)iwv_poll_cq(p.c.rcq, 1, &wc);
		ck_assert_int_eq(iwv_query_qp(p.c.qp, &qa, IWV_QP_STATE, &ia), 0);
		ck_assert_msg(th_now_ms() <= end, "the client never heard of it");
	} while (qa.qp_state != IWV_QPS_ERR);
	ck_assert_msg(qa.qp_err == IW_ERDMAP_TERMINATED, "client qp_err %s",
		      iwv_errname(qa.qp_err));
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Send with Invalidate                                                    */
/* ---------------------------------------------------------------------- */

/*
 * A remote error reaches the requester through the peer's Terminate.  A Write
 * completes once on the wire (RFC 5040 §5.5 gives no response), so the error
 * may show on it or on the Read behind it, which waits for its Response;
 * whichever it is, it says REM_ACCESS_ERR and the rest is flushed.
 */
static void expect_remote_access_error(struct vh_pair *p, int n)
{
	struct iwv_wc wc[8];
	bool seen = false;

	ck_assert_int_le(n, 8);
	vh_poll_wc(&p->w, p->c.scq, n, wc);
	for (int i = 0; i < n; i++) {
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)i + 1);
		if (wc[i].status == IWV_WC_REM_ACCESS_ERR) {
			seen = true;
			ck_assert_uint_ne(wc[i].vendor_err, 0);
		} else if (!seen && wc[i].status == IWV_WC_SUCCESS &&
			   wc[i].opcode == IWV_WC_RDMA_WRITE) {
			/* the Write was on the wire before the Terminate came back */
		} else {
			ck_assert_msg(seen && wc[i].status == IWV_WC_WR_FLUSH_ERR,
				      "wr_id %llu: %s (vendor_err %s)",
				      (unsigned long long)wc[i].wr_id,
				      iwv_wc_status_str(wc[i].status),
				      iwv_errname(-(int)wc[i].vendor_err));
		}
	}
	ck_assert_msg(seen, "no IWV_WC_REM_ACCESS_ERR among %d completions (last: %s)", n,
		      iwv_wc_status_str(wc[n - 1].status));
}

/*
 * wr_ids 1 and 2 of expect_remote_access_error(): a Write of wsge to
 * (raddr, rkey) and a Read of len octets of rb into sink, in one post, so the
 * peer's Terminate cannot come back before the Read is queued (then the Read
 * would be flushed with no WR left to carry the error: a slow build with the
 * engine thread did that).
 */
static void post_write_and_read(struct iwv_qp *qp, struct iwv_sge *wsge, uint64_t raddr,
				uint32_t rkey, const struct vh_buf *sink, size_t len,
				const struct vh_buf *rb)
{
	struct iwv_sge rsge = vh_sge(sink, 0, len);
	struct iwv_send_wr rd = {.wr_id = 2,
				 .sg_list = &rsge,
				 .num_sge = 1,
				 .opcode = IWV_WR_RDMA_READ,
				 .wr.rdma = {(uint64_t)(uintptr_t)rb->p, rb->mr->rkey}};
	struct iwv_send_wr wr = {.wr_id = 1,
				 .next = &rd,
				 .sg_list = wsge,
				 .num_sge = 1,
				 .opcode = IWV_WR_RDMA_WRITE,
				 .wr.rdma = {raddr, rkey}};
	struct iwv_send_wr *bad = NULL;

	ck_assert_int_eq(iwv_post_send(qp, &wr, &bad), 0);
}

START_TEST(send_with_invalidate_invalidates_the_peers_rkey_and_a_later_write_to_it_fails)
{
	struct vh_pair p;
	struct vh_buf *src, *target, *rcv, *other, *sink;
	struct iwv_sge sge;
	struct iwv_send_wr wr, *bad = NULL;
	struct iwv_wc wc;

	up(&p, false);
	src = vh_buf_new(&p, &p.c, 256, IWV_ACCESS_LOCAL_WRITE);
	sink = vh_buf_new(&p, &p.c, 256, IWV_ACCESS_LOCAL_WRITE);
	target = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	other = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	rcv = vh_buf_new(&p, &p.s, 3 * 256, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 256, th_seed_for(110));
	for (int i = 0; i < 3; i++)
		vh_post_recv(p.s.qp, 10 + (uint64_t)i, rcv, (size_t)i * 256, 256);

	sge = vh_sge(src, 0, 256);
	wr = (struct iwv_send_wr){.wr_id = 1,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IWV_WR_SEND_WITH_INV,
				  .invalidate_rkey = target->mr->rkey};
	ck_assert_int_eq(iwv_post_send(p.c.qp, &wr, &bad), 0);
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 10, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 256);
	ck_assert_msg(wc.wc_flags & IWV_WC_WITH_INV, "wc_flags 0x%x", wc.wc_flags);
	ck_assert_uint_eq(wc.invalidated_rkey, target->mr->rkey);
	vh_same(rcv->p, src->p, 256, "send with invalidate");

	sge = vh_sge(src, 0, 64);
	post_write_and_read(p.c.qp, &sge, (uint64_t)(uintptr_t)target->p, target->mr->rkey, sink,
			    64, other);
	expect_remote_access_error(&p, 2);
	expect_run(&p, p.s.rcq, 2, 11, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	qp_state_is(p.c.qp, IWV_QPS_ERR);
	vh_pair_down(&p); /* deregisters the invalidated MR too */
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Post errors                                                             */
/* ---------------------------------------------------------------------- */

enum bad_wr_kind {
	BAD_WRITE_WITH_IMM,
	BAD_SEND_WITH_IMM,
	BAD_ATOMIC_CMP_AND_SWP,
	BAD_ATOMIC_FETCH_AND_ADD,
	BAD_LOCAL_INV,
	BAD_BIND_MW,
	BAD_OPCODE_UNKNOWN,
	BAD_NUM_SGE_TOO_BIG,
	BAD_NUM_SGE_NEGATIVE,
	BAD_INLINE_TOO_BIG,
	BAD_READ_TWO_SGES,
	BAD_READ_NO_SGE,
	BAD_FLAG_UNKNOWN,
	BAD_INLINE_READ,
	BAD_WR_COUNT,
};

static const char *const bad_wr_names[] = {
	"RDMA Write with immediate",
	"Send with immediate",
	"atomic compare and swap",
	"atomic fetch and add",
	"local invalidate with IWV_SEND_INLINE",
	"bind memory window without a window",
	"opcode 77",
	"num_sge too big",
	"num_sge negative",
	"inline data too big",
	"RDMA Read with 2 SGEs",
	"RDMA Read with 0 SGEs",
	"unknown send flag",
	"inline RDMA Read",
};

/* Loop over enum bad_wr_kind: the middle WR of three is bad. */
START_TEST(post_send_with_a_bad_wr_returns_einval_sets_bad_wr_and_posts_the_earlier_ones)
{
	struct vh_pair p;
	struct vh_buf *src, *remote, *rcv;
	struct iwv_sge sg_ok[3], sg_bad[IWV_MAX_SGE + 1];
	struct iwv_send_wr wr[3], *bad = NULL;
	struct iwv_wc wc;
	uint32_t inl;
	int rc;

	up(&p, false);
	inl = p.c.cap.max_inline_data;
	src = vh_buf_new(&p, &p.c, IWV_MAX_INLINE + 4096, VH_ACCESS_ALL);
	remote = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	rcv = vh_buf_new(&p, &p.s, 2 * 4096, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 1024, th_seed_for(120));
	vh_post_recv(p.s.qp, 101, rcv, 0, 4096);
	vh_post_recv(p.s.qp, 102, rcv, 4096, 4096);
	for (int i = 0; i < 3; i++) {
		sg_ok[i] = vh_sge(src, (size_t)i * 300, 100 * ((size_t)i + 1));
		wr[i] = (struct iwv_send_wr){
			.wr_id = 1 + (uint64_t)i,
			.next = i < 2 ? &wr[i + 1] : NULL,
			.sg_list = &sg_ok[i],
			.num_sge = 1,
			.opcode = IWV_WR_SEND,
			.wr.rdma = {(uint64_t)(uintptr_t)remote->p, remote->mr->rkey}};
	}
	for (int i = 0; i <= IWV_MAX_SGE; i++)
		sg_bad[i] = vh_sge(src, (size_t)i * 16, 16);
	switch (_i) {
	case BAD_WRITE_WITH_IMM:
		wr[1].opcode = IWV_WR_RDMA_WRITE_WITH_IMM;
		break;
	case BAD_SEND_WITH_IMM:
		wr[1].opcode = IWV_WR_SEND_WITH_IMM;
		break;
	case BAD_ATOMIC_CMP_AND_SWP:
		wr[1].opcode = IWV_WR_ATOMIC_CMP_AND_SWP;
		break;
	case BAD_ATOMIC_FETCH_AND_ADD:
		wr[1].opcode = IWV_WR_ATOMIC_FETCH_AND_ADD;
		break;
	case BAD_LOCAL_INV:
		/* Local Invalidate works (test_iwv_mem.c); inline makes no sense for it */
		wr[1].opcode = IWV_WR_LOCAL_INV;
		wr[1].send_flags = IWV_SEND_INLINE;
		break;
	case BAD_BIND_MW:
		/* binding works (test_iwv_mem.c); wr.bind_mw.mw NULL is EINVAL */
		wr[1].opcode = IWV_WR_BIND_MW;
		break;
	case BAD_OPCODE_UNKNOWN:
		wr[1].opcode = (enum iwv_wr_opcode)77;
		break;
	case BAD_NUM_SGE_TOO_BIG:
		ck_assert_uint_le(p.c.cap.max_send_sge, IWV_MAX_SGE);
		wr[1].sg_list = sg_bad;
		wr[1].num_sge = (int)p.c.cap.max_send_sge + 1;
		break;
	case BAD_NUM_SGE_NEGATIVE:
		wr[1].num_sge = -1;
		break;
	case BAD_INLINE_TOO_BIG:
		ck_assert_uint_le(inl, IWV_MAX_INLINE);
		sg_bad[0] = vh_sge(src, 0, inl + 1);
		wr[1].sg_list = sg_bad;
		wr[1].send_flags = IWV_SEND_INLINE;
		break;
	case BAD_READ_TWO_SGES:
		wr[1].opcode = IWV_WR_RDMA_READ;
		wr[1].sg_list = sg_bad;
		wr[1].num_sge = 2;
		break;
	case BAD_READ_NO_SGE:
		wr[1].opcode = IWV_WR_RDMA_READ;
		wr[1].num_sge = 0;
		break;
	case BAD_FLAG_UNKNOWN:
		wr[1].send_flags = IWV_SEND_SIGNALED | (1u << 7);
		break;
	default:
		wr[1].opcode = IWV_WR_RDMA_READ;
		wr[1].send_flags = IWV_SEND_INLINE;
		break;
	}
	rc = iwv_post_send(p.c.qp, wr, &bad);
	ck_assert_msg(rc == EINVAL, "%s: post returned %d (%s)", bad_wr_names[_i], rc,
		      strerror(rc));
	ck_assert_msg(bad == &wr[1], "%s: bad_wr is %p, expected %p", bad_wr_names[_i], (void *)bad,
		      (void *)&wr[1]);
	/* WR 3 was not posted: the second receive gets WR 4's 200 octets, not its 300. */
	vh_post_send(p.c.qp, IWV_WR_SEND, 4, 0, src, 600, 200, NULL, 0);
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	expect_run(&p, p.c.scq, 1, 4, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 101, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 100);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 102, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 200);
	vh_same(rcv->p + 4096, src->p + 600, 200, "send after the bad WR");
	vh_cq_empty(p.c.scq);
	qp_state_is(p.c.qp, IWV_QPS_RTS);
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 = num_sge too big, 1 = num_sge negative. */
START_TEST(post_recv_with_a_bad_num_sge_returns_einval_sets_bad_wr_and_posts_the_earlier_ones)
{
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_sge sg[IWV_MAX_SGE + 1];
	struct iwv_recv_wr wr[3], *bad = NULL;
	struct iwv_wc wc;

	up(&p, false);
	src = vh_buf_new(&p, &p.c, 512, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 4 * 1024, IWV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i <= IWV_MAX_SGE; i++)
		sg[i] = vh_sge(rcv, 2048 + (size_t)i * 64, 64);
	for (int i = 0; i < 3; i++)
		wr[i] = (struct iwv_recv_wr){.wr_id = 101 + (uint64_t)i,
					     .next = i < 2 ? &wr[i + 1] : NULL,
					     .sg_list = sg,
					     .num_sge = 1};
	ck_assert_uint_le(p.s.cap.max_recv_sge, IWV_MAX_SGE);
	wr[1].num_sge = _i == 0 ? (int)p.s.cap.max_recv_sge + 1 : -1;
	ck_assert_int_eq(iwv_post_recv(p.s.qp, wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr[1]);
	vh_post_recv(p.s.qp, 104, rcv, 1024, 1024);
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 10, NULL, 0);
	vh_post_send(p.c.qp, IWV_WR_SEND, 2, 0, src, 0, 300, NULL, 0);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 101, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 10);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 104, IWV_WC_SUCCESS, IWV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 300);
	expect_run(&p, p.c.scq, 2, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
	vh_pair_down(&p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Failures: the QP goes to ERR and nothing posted is lost                 */
/* ---------------------------------------------------------------------- */

/* Loop: 0 = deregistered lkey, 1 = SGE past the end of its MR, 2 = MR of another PD. */
START_TEST(send_with_a_bad_lkey_completes_loc_prot_err_and_every_other_wr_is_flushed)
{
	struct vh_pair p;
	struct vh_buf *src, *rcv, *dst, *crcv, *foreign;
	struct iwv_sge sge;
	struct iwv_send_wr wr[3], *bad = NULL;
	struct iwv_sge ok[2];
	struct iwv_qp_attr qa;
	struct iwv_qp_init_attr ia;

	up(&p, false);
	src = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	crcv = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 3 * 4096, IWV_ACCESS_LOCAL_WRITE);
	dst = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	foreign = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 3; i++)
		vh_post_recv(p.s.qp, 10 + (uint64_t)i, rcv, (size_t)i * 4096, 4096);
	vh_post_recv(p.c.qp, 20, crcv, 0, 4096);
	vh_post_recv(p.c.qp, 21, crcv, 0, 4096);

	switch (_i) {
	case 0: {
		struct iwv_mr *gone = iwv_reg_mr(p.c.pd, src->p, 4096, IWV_ACCESS_LOCAL_WRITE);

		ck_assert_ptr_nonnull(gone);
		sge = (struct iwv_sge){(uint64_t)(uintptr_t)src->p, 100, gone->lkey};
		ck_assert_int_eq(iwv_dereg_mr(gone), 0);
		break;
	}
	case 1:
		sge = vh_sge(src, 4096 - 10, 100);
		break;
	default:
		sge = vh_sge(foreign, 0, 100);
		break;
	}
	ok[0] = vh_sge(src, 0, 100);
	ok[1] = vh_sge(src, 0, 100);
	wr[0] = (struct iwv_send_wr){
		.wr_id = 1, .next = &wr[1], .sg_list = &sge, .num_sge = 1, .opcode = IWV_WR_SEND};
	wr[1] = (struct iwv_send_wr){
		.wr_id = 2, .next = &wr[2], .sg_list = &ok[0], .num_sge = 1, .opcode = IWV_WR_SEND};
	wr[2] = (struct iwv_send_wr){.wr_id = 3,
				     .sg_list = &ok[1],
				     .num_sge = 1,
				     .opcode = IWV_WR_RDMA_WRITE,
				     .wr.rdma = {(uint64_t)(uintptr_t)dst->p, dst->mr->rkey}};
	ck_assert_int_eq(iwv_post_send(p.c.qp, wr, &bad), 0);
	expect_run(&p, p.c.scq, 1, 1, IWV_WC_LOC_PROT_ERR, IWV_WC_SEND);
	expect_run(&p, p.c.scq, 1, 2, IWV_WC_WR_FLUSH_ERR, IWV_WC_SEND);
	expect_run(&p, p.c.scq, 1, 3, IWV_WC_WR_FLUSH_ERR, IWV_WC_RDMA_WRITE);
	expect_run(&p, p.c.rcq, 2, 20, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	ck_assert_int_eq(iwv_query_qp(p.c.qp, &qa, IWV_QP_STATE, &ia), 0);
	ck_assert_int_eq(qa.qp_state, IWV_QPS_ERR);
	ck_assert_int_ne(qa.qp_err, 0);
	/* The peer hears of it (Terminate or close): its receives are flushed. */
	expect_run(&p, p.s.rcq, 3, 10, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	vh_pair_down(&p);
}
END_TEST

START_TEST(receive_with_a_bad_lkey_completes_loc_prot_err_when_a_send_arrives)
{
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_mr *gone;
	struct iwv_sge sge;
	struct iwv_recv_wr wr = {0}, *bad = NULL;

	up(&p, false);
	src = vh_buf_new(&p, &p.c, 256, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 256, IWV_ACCESS_LOCAL_WRITE);
	gone = iwv_reg_mr(p.s.pd, rcv->p, 256, IWV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(gone);
	sge = (struct iwv_sge){(uint64_t)(uintptr_t)rcv->p, 256, gone->lkey};
	ck_assert_int_eq(iwv_dereg_mr(gone), 0);
	wr = (struct iwv_recv_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1};
	ck_assert_int_eq(iwv_post_recv(p.s.qp, &wr, &bad), 0);
	vh_post_recv(p.s.qp, 2, rcv, 0, 256);
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, src, 0, 100, NULL, 0);
	expect_run(&p, p.s.rcq, 1, 1, IWV_WC_LOC_PROT_ERR, IWV_WC_RECV);
	expect_run(&p, p.s.rcq, 1, 2, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	qp_state_is(p.s.qp, IWV_QPS_ERR);
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 = deregistered rkey, 1 = MR without remote write, 2 = past the end of the MR. */
START_TEST(rdma_write_to_a_bad_rkey_fails_with_rem_access_err_and_the_peers_receives_flush)
{
	struct vh_pair p;
	struct vh_buf *src, *sink, *rcv, *ok, *noright;
	struct iwv_sge sge;
	uint32_t rkey;
	uint64_t raddr;

	up(&p, true);
	src = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	sink = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
	ok = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	noright = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ);
	for (int i = 0; i < 3; i++)
		vh_post_recv(p.s.qp, 10 + (uint64_t)i, rcv, 0, 4096);
	switch (_i) {
	case 0: {
		struct iwv_mr *gone = iwv_reg_mr(p.s.pd, ok->p, 4096, VH_ACCESS_ALL);

		ck_assert_ptr_nonnull(gone);
		rkey = gone->rkey;
		ck_assert_int_eq(iwv_dereg_mr(gone), 0);
		raddr = (uint64_t)(uintptr_t)ok->p;
		break;
	}
	case 1:
		rkey = noright->mr->rkey;
		raddr = (uint64_t)(uintptr_t)noright->p;
		break;
	default:
		rkey = ok->mr->rkey;
		raddr = (uint64_t)(uintptr_t)ok->p + 4096 - 10;
		break;
	}
	sge = vh_sge(src, 0, 100);
	post_write_and_read(p.c.qp, &sge, raddr, rkey, sink, 100, ok);
	expect_remote_access_error(&p, 2);
	expect_run(&p, p.s.rcq, 3, 10, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	qp_state_is(p.c.qp, IWV_QPS_ERR);
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 = deregistered rkey, 1 = MR without remote read, 2 = past the end of the MR. */
START_TEST(rdma_read_from_a_bad_rkey_completes_rem_access_err)
{
	struct vh_pair p;
	struct vh_buf *sink, *rcv, *ok, *noright;
	uint32_t rkey;
	uint64_t raddr;
	struct iwv_sge sge;
	struct iwv_send_wr wr = {0}, *bad = NULL;
	struct iwv_wc wc;

	up(&p, false);
	sink = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
	ok = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	noright = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE);
	vh_post_recv(p.s.qp, 10, rcv, 0, 4096);
	switch (_i) {
	case 0: {
		struct iwv_mr *gone = iwv_reg_mr(p.s.pd, ok->p, 4096, VH_ACCESS_ALL);

		ck_assert_ptr_nonnull(gone);
		rkey = gone->rkey;
		ck_assert_int_eq(iwv_dereg_mr(gone), 0);
		raddr = (uint64_t)(uintptr_t)ok->p;
		break;
	}
	case 1:
		rkey = noright->mr->rkey;
		raddr = (uint64_t)(uintptr_t)noright->p;
		break;
	default:
		rkey = ok->mr->rkey;
		raddr = (uint64_t)(uintptr_t)ok->p + 4096 - 10;
		break;
	}
	sge = vh_sge(sink, 0, 100);
	wr = (struct iwv_send_wr){.wr_id = 1,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IWV_WR_RDMA_READ,
				  .wr.rdma = {raddr, rkey}};
	ck_assert_int_eq(iwv_post_send(p.c.qp, &wr, &bad), 0);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 1, IWV_WC_REM_ACCESS_ERR, IWV_WC_RDMA_READ);
	expect_run(&p, p.s.rcq, 1, 10, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	qp_state_is(p.c.qp, IWV_QPS_ERR);
	vh_pair_down(&p);
}
END_TEST

START_TEST(destroying_a_connected_qp_completes_every_outstanding_wr_before_it_returns)
{
	enum { NSEND = 10 };
	struct vh_pair p;
	struct vh_buf *big, *dst, *src, *crcv, *rcv;
	struct iwv_wc wc[64];
	bool flushing = false;
	int n;

	up(&p, true);
	big = vh_buf_new(&p, &p.c, 16 * VH_MIB, IWV_ACCESS_LOCAL_WRITE);
	dst = vh_buf_new(&p, &p.s, 16 * VH_MIB, VH_ACCESS_ALL);
	src = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	crcv = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, NSEND * 4096, IWV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < NSEND; i++)
		vh_post_recv(p.s.qp, 100 + (uint64_t)i, rcv, (size_t)i * 4096, 4096);
	for (int i = 0; i < 5; i++)
		vh_post_recv(p.c.qp, 200 + (uint64_t)i, crcv, 0, 4096);
	vh_post_send(p.c.qp, IWV_WR_RDMA_WRITE, 1, 0, big, 0, 16 * VH_MIB, dst, 0);
	for (int i = 0; i < NSEND; i++)
		vh_post_send(p.c.qp, IWV_WR_SEND, 2 + (uint64_t)i, 0, src, 0, 4096, NULL, 0);

	iwcm_destroy_qp(p.c.id);
	p.c.qp = NULL;
	ck_assert_ptr_null(p.c.id->qp);
	/* Everything is in the CQs already: poll without waiting. */
	n = drain_now(p.c.scq, wc, 64);
	ck_assert_int_eq(n, 1 + NSEND);
	for (int i = 0; i < n; i++) {
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)i + 1);
		ck_assert_int_eq(wc[i].opcode, i == 0 ? IWV_WC_RDMA_WRITE : IWV_WC_SEND);
		if (wc[i].status == IWV_WC_WR_FLUSH_ERR)
			flushing = true;
		else
			ck_assert_msg(!flushing && wc[i].status == IWV_WC_SUCCESS,
				      "wr_id %d: %s after a flush", i + 1,
				      iwv_wc_status_str(wc[i].status));
	}
	n = drain_now(p.c.rcq, wc, 64);
	ck_assert_int_eq(n, 5);
	for (int i = 0; i < n; i++)
		vh_wc_is(&wc[i], 200 + (uint64_t)i, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	/* The server sees the connection go; each receive completes exactly once. */
	vh_side_wait_disconnected(&p, &p.s);
	for (int i = 0; i < NSEND; i++) {
		struct iwv_wc r = vh_poll1(&p.w, p.s.rcq);

		ck_assert_uint_eq(r.wr_id, 100 + (uint64_t)i);
		ck_assert(r.status == IWV_WC_SUCCESS || r.status == IWV_WC_WR_FLUSH_ERR);
	}
	vh_cq_empty(p.s.rcq);
	vh_pair_down(&p);
}
END_TEST

START_TEST(modify_qp_to_err_flushes_everything_posted_and_the_peer_sees_disconnected)
{
	struct vh_pair p;
	struct vh_buf *b, *cb;
	struct iwv_wc wc[8];

	up(&p, false);
	b = vh_buf_new(&p, &p.s, 4096, IWV_ACCESS_LOCAL_WRITE);
	cb = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 4; i++)
		vh_post_recv(p.s.qp, 10 + (uint64_t)i, b, 0, 4096);
	vh_post_recv(p.c.qp, 20, cb, 0, 4096);
	vh_post_recv(p.c.qp, 21, cb, 0, 4096);
	to_err(p.s.qp);
	ck_assert_int_eq(drain_now(p.s.rcq, wc, 8), 4);
	for (int i = 0; i < 4; i++)
		vh_wc_is(&wc[i], 10 + (uint64_t)i, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	qp_state_is(p.s.qp, IWV_QPS_ERR);
	vh_side_wait_disconnected(&p, &p.c);
	expect_run(&p, p.c.rcq, 2, 20, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	vh_pair_down(&p);
}
END_TEST

START_TEST(posting_to_a_qp_in_err_completes_at_once_with_flush)
{
	struct vh_pair p;
	struct vh_buf *b, *rb;
	struct iwv_wc wc;

	up(&p, false);
	b = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	rb = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	to_err(p.c.qp);
	vh_post_send(p.c.qp, IWV_WR_SEND, 1, 0, b, 0, 10, NULL, 0);
	vh_post_send(p.c.qp, IWV_WR_RDMA_READ, 2, 0, b, 0, 10, rb, 0);
	vh_post_recv(p.c.qp, 3, b, 0, 4096);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 1, IWV_WC_WR_FLUSH_ERR, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 2, IWV_WC_WR_FLUSH_ERR, IWV_WC_RDMA_READ);
	wc = vh_poll1(&p.w, p.c.rcq);
	vh_wc_is(&wc, 3, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	vh_pair_down(&p);
}
END_TEST

static Suite *verbs_suite(void)
{
	Suite *s = suite_create("iwv_verbs");
	TCase *tc;

	tc = tcase_create("device");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, device_list_has_one_device_named_iwarp0);
	tcase_add_test(tc, query_device_reports_the_limits_the_header_names);
	tcase_add_loop_test(tc, close_device_while_an_object_uses_it_returns_ebusy, 0, 4);
	tcase_add_test(tc, context_runs_the_engine_iwarp_engine_names);
	tcase_add_test(tc, open_context_with_an_explicit_engine_runs_that_engine);
	suite_add_tcase(s, tc);

	tc = tcase_create("pd_mr");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, dealloc_pd_with_an_mr_returns_ebusy_until_the_mr_is_deregistered);
	tcase_add_test(tc, dealloc_pd_with_a_qp_returns_ebusy_until_the_qp_is_destroyed);
	tcase_add_loop_test(tc, reg_mr_with_remote_write_but_no_local_write_returns_einval, 0, 2);
	tcase_add_loop_test(tc, reg_mr_with_remote_atomic_without_local_write_is_refused, 0, 1);
	tcase_add_test(tc, reg_mr_gives_lkey_equal_to_rkey_and_describes_the_region);
	tcase_add_test(tc, reg_mr_beyond_max_mr_returns_enomem_and_dereg_frees_a_slot);
	suite_add_tcase(s, tc);

	tc = tcase_create("cq");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, create_cq_with_cqe_out_of_range_returns_null_and_einval, 0, 4);
	tcase_add_test(tc, create_cq_accepts_1_and_65536_and_keeps_its_context_and_channel);
	tcase_add_test(tc, get_cq_event_on_a_nonblocking_channel_without_event_returns_eagain);
	tcase_add_test(tc, wc_status_str_names_every_status);
	tcase_add_test(tc, an_armed_cq_makes_the_channel_fd_readable_and_get_cq_event_returns_it);
	tcase_add_test(tc, destroy_cq_with_an_unacknowledged_event_returns_ebusy);
	tcase_add_test(tc, solicited_only_notification_fires_for_the_solicited_send_alone);
	tcase_add_test(tc, blocking_get_cq_event_progresses_the_stack_until_the_completion_arrives);
	tcase_add_test(tc, engine_thread_wakes_a_thread_blocked_in_get_cq_event);
	tcase_add_test(tc, engine_thread_writes_a_batch_of_posts_nobody_polls_for);
	tcase_add_test(tc, engine_thread_comes_back_when_the_program_stops_polling);
	tcase_add_test(tc, a_completion_moved_by_polling_another_cq_makes_the_channel_fd_readable);
	tcase_add_test(tc, rnr_hold_sends_wait_for_their_receives);
	tcase_add_test(tc, rnr_hold_sends_wait_for_their_receives_with_engine_threads);
	tcase_add_test(tc, rnr_hold_octets_survive_reads_of_other_connections);
	tcase_add_test(tc, rnr_hold_each_message_waits_on_its_own_clock);
	tcase_add_test(tc, rnr_hold_gives_up_with_the_no_buffer_terminate);
	suite_add_tcase(s, tc);

	tc = tcase_create("qp");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, create_qp_beyond_the_limits_returns_null_and_einval, 0, QPB_COUNT);
	tcase_add_test(tc, create_qp_writes_back_the_granted_caps_and_starts_in_init);
	tcase_add_loop_test(
		tc, posting_beyond_a_full_queue_returns_enomem_and_destroy_flushes_what_was_posted,
		0, 2);
	tcase_add_test(tc, modify_qp_accepts_only_the_err_state);
	tcase_add_test(tc, query_qp_reports_rts_the_caps_and_the_negotiated_ird_and_ord);
	suite_add_tcase(s, tc);

	tc = tcase_create("data");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, every_operation_moves_data_intact_at_every_size, 0,
			    (int)(2 * OP_COUNT * NSIZES));
	tcase_add_test(tc, send_gathers_three_sges_and_the_receive_scatters_them_over_four);
	tcase_add_test(tc, rdma_write_gathers_four_sges_into_one_remote_region);
	tcase_add_test(tc, inline_send_and_write_let_the_buffer_be_reused_right_after_post);
	tcase_add_test(tc, inline_send_from_unregistered_memory_ignores_the_lkey);
	tcase_add_test(tc, unsignaled_wrs_complete_silently_and_the_signaled_one_completes);
	tcase_add_test(tc, sq_sig_all_signals_wrs_posted_without_the_signaled_flag);
	tcase_add_test(tc, fenced_send_after_an_rdma_read_carries_the_data_the_read_brought);
	tcase_add_test(tc, a_list_of_100_sends_posted_at_once_arrives_complete_and_in_order);
	tcase_add_test(tc, a_list_of_100_mixed_writes_sends_and_reads_completes_in_post_order);
	tcase_add_test(tc, more_reads_than_ord_are_held_back_until_earlier_ones_complete);
	tcase_add_test(
		tc, send_with_invalidate_invalidates_the_peers_rkey_and_a_later_write_to_it_fails);
	suite_add_tcase(s, tc);

	tc = tcase_create("post_errors");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc, post_send_with_a_bad_wr_returns_einval_sets_bad_wr_and_posts_the_earlier_ones,
		0, BAD_WR_COUNT);
	tcase_add_loop_test(
		tc,
		post_recv_with_a_bad_num_sge_returns_einval_sets_bad_wr_and_posts_the_earlier_ones,
		0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc, send_with_a_bad_lkey_completes_loc_prot_err_and_every_other_wr_is_flushed, 0,
		3);
	tcase_add_test(tc, receive_with_a_bad_lkey_completes_loc_prot_err_when_a_send_arrives);
	tcase_add_loop_test(
		tc, rdma_write_to_a_bad_rkey_fails_with_rem_access_err_and_the_peers_receives_flush,
		0, 3);
	tcase_add_loop_test(tc, rdma_read_from_a_bad_rkey_completes_rem_access_err, 0, 3);
	tcase_add_test(tc,
		       destroying_a_connected_qp_completes_every_outstanding_wr_before_it_returns);
	tcase_add_test(tc,
		       modify_qp_to_err_flushes_everything_posted_and_the_peer_sees_disconnected);
	tcase_add_test(tc, posting_to_a_qp_in_err_completes_at_once_with_flush);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(verbs_suite)
