/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_srq.c - shared receive queues in the queue-pair engine
 * (rdmap_qp.h, "Shared receive queues"): two back-to-back pairs
 * (test/helpers/b2b.h) whose B sides draw their receives from one SRQ and
 * one STag table.  Receives are taken in post order when a message starts
 * and held across its segments; an empty SRQ (or a QP whose completion ring
 * is full) answers with the DDP "no buffer" Terminate (RFC 5041 §7.2); a
 * failing QP flushes only the receive it took; the limit fires once.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "b2b.h"
#include "th.h"

#define NBUF  8
#define BUFSZ 4096

struct fix {
	struct ddp_stag_table *stags; /* the B sides' table */
	struct rdmap_srq *srq;
	struct b2b *p[2];
	uint8_t rbuf[NBUF][BUFSZ]; /* receive buffers of the B sides */
	uint32_t rkey;		   /* one registration covering rbuf */
	uint8_t sbuf[2][BUFSZ];	   /* send buffers of the A sides */
	uint32_t skey[2];
};

static struct fix *fix_new(uint32_t srq_depth, uint32_t sq_depth, enum b2b_split split)
{
	struct fix *f = calloc(1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	f->stags = ddp_stag_table_create(64, th_seed_from_env());
	ck_assert_ptr_nonnull(f->stags);
	ck_assert_int_eq(rdmap_srq_create(srq_depth, &f->srq), IW_OK);
	for (int i = 0; i < 2; i++) {
		struct b2b_opts o;

		b2b_opts_default(&o);
		o.srq[B2B_B] = f->srq;
		o.ext_stags[B2B_B] = f->stags;
		o.split = split;
		if (sq_depth)
			o.sq_depth = sq_depth;
		f->p[i] = b2b_create(&o);
		f->skey[i] = b2b_reg(f->p[i], B2B_A, f->sbuf[i], BUFSZ, 0);
	}
	/* both B sides have PD 2 (the b2b default): one registration serves both */
	ck_assert_int_eq(ddp_stag_reg(f->stags, 2, f->rbuf, (uint64_t)(uintptr_t)f->rbuf,
				      sizeof(f->rbuf), DDP_ACCESS_LOCAL_WRITE, &f->rkey),
			 IW_OK);
	return f;
}

static void fix_free(struct fix *f)
{
	ck_assert_int_eq(rdmap_srq_destroy(f->srq), IW_ESTATE); /* QPs still use it */
	for (int i = 0; i < 2; i++) {
		b2b_dereg(f->p[i], B2B_A, f->skey[i]);
		b2b_destroy(f->p[i]);
	}
	ck_assert_int_eq(rdmap_srq_destroy(f->srq), IW_OK);
	ck_assert_int_eq(ddp_stag_dereg(f->stags, f->rkey), IW_OK);
	ddp_stag_table_destroy(f->stags);
	free(f);
}

static int srq_post(struct fix *f, uint64_t wr_id, int buf)
{
	struct rdmap_recv_wr wr = {
		.wr_id = wr_id,
		.num_sge = 1,
		.sg = {{.addr = (uint64_t)(uintptr_t)f->rbuf[buf],
			.length = BUFSZ,
			.lkey = f->rkey}},
	};

	return rdmap_srq_post(f->srq, &wr);
}

/* Pair i's A sends `len` octets of `fill`. */
static void send_from(struct fix *f, int i, uint8_t fill, uint32_t len)
{
	memset(f->sbuf[i], fill, len);
	ck_assert_int_eq(b2b_post_send(f->p[i], B2B_A, RDMAP_WR_SEND, 0, 100 + fill, f->sbuf[i],
				       len, f->skey[i]),
			 IW_OK);
}

static void expect_recv(struct fix *f, int i, uint64_t wr_id, uint32_t len, uint8_t fill)
{
	struct rdmap_wc wc;

	ck_assert_int_eq(b2b_wait(f->p[i], B2B_B, &wc), 1);
	ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV);
	ck_assert_uint_eq(wc.wr_id, wr_id);
	ck_assert_uint_eq(wc.byte_len, len);
	for (uint32_t k = 0; k < len; k++)
		ck_assert_uint_eq(f->rbuf[(wr_id - 1) % NBUF][k], fill);
}

START_TEST(two_qps_take_receives_from_one_srq_in_post_order)
{
	struct fix *f = fix_new(NBUF, 0, B2B_SPLIT_WHOLE);

	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(srq_post(f, (uint64_t)k + 1, k), IW_OK);
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 4);
	send_from(f, 0, 'a', 10);
	expect_recv(f, 0, 1, 10, 'a');
	send_from(f, 1, 'b', 20);
	expect_recv(f, 1, 2, 20, 'b');
	send_from(f, 1, 'c', 30);
	expect_recv(f, 1, 3, 30, 'c');
	send_from(f, 0, 'd', 0);
	expect_recv(f, 0, 4, 0, 'd');
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 0);
	for (int i = 0; i < 2; i++) {
		b2b_drain(f->p[i], B2B_A, &(struct rdmap_wc){0}, 1);
		ck_assert_int_eq(rdmap_qp_state(f->p[i]->qp[B2B_B]), RDMAP_QP_RTS);
	}
	fix_free(f);
}
END_TEST

/* Segments of two multi-segment messages interleave at the receivers: each
 * QP holds the receive it took at its message's first segment. */
START_TEST(interleaved_multi_segment_messages_each_keep_their_receive)
{
	struct fix *f = fix_new(NBUF, 0, B2B_SPLIT_OCTET);
	struct rdmap_wc wc;
	uint32_t len = 3000; /* three segments at the default MULPDU */

	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(srq_post(f, (uint64_t)k + 1, k), IW_OK);
	send_from(f, 0, 'x', len);
	send_from(f, 1, 'y', len);
	/* pair 0 first until its first segment header is in (it took receive 1) */
	for (int s = 0; s < 100000 && rdmap_srq_count(f->srq) == 3; s++)
		b2b_step(f->p[0]);
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 2);
	ck_assert_int_eq(rdmap_qp_poll(f->p[0]->qp[B2B_B], &wc, 1), 0);
	/* then both in turn */
	for (int s = 0; s < 1000000; s++) {
		size_t n = b2b_step(f->p[1]) + b2b_step(f->p[0]);

		if (!n)
			break;
	}
	expect_recv(f, 0, 1, len, 'x');
	expect_recv(f, 1, 2, len, 'y');
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 1);
	fix_free(f);
}
END_TEST

START_TEST(empty_srq_answers_a_send_with_the_no_buffer_terminate)
{
	struct fix *f = fix_new(NBUF, 0, B2B_SPLIT_WHOLE);
	const struct rdmap_term *t;
	struct iw_term_code want;
	struct rdmap_wc wc;

	send_from(f, 0, 'n', 5);
	b2b_pump(f->p[0]);
	ck_assert_int_eq(rdmap_qp_state(f->p[0]->qp[B2B_B]), RDMAP_QP_ERROR);
	ck_assert_int_eq(rdmap_qp_error(f->p[0]->qp[B2B_B]), IW_EDDP_U_NO_BUFFER);
	t = rdmap_qp_term_sent(f->p[0]->qp[B2B_B]);
	ck_assert_ptr_nonnull(t);
	iw_err_term(IW_EDDP_U_NO_BUFFER, &want);
	ck_assert_uint_eq(t->code.layer, want.layer);
	ck_assert_uint_eq(t->code.etype, want.etype);
	ck_assert_uint_eq(t->code.ecode, want.ecode);
	/* the sender learnt it from the Terminate */
	ck_assert_ptr_nonnull(rdmap_qp_term_received(f->p[0]->qp[B2B_A]));
	ck_assert_int_eq(rdmap_qp_poll(f->p[0]->qp[B2B_B], &wc, 1), 0); /* it held nothing */
	/* the other pair is untouched and receives what is posted later */
	ck_assert_int_eq(srq_post(f, 1, 0), IW_OK);
	send_from(f, 1, 'o', 7);
	expect_recv(f, 1, 1, 7, 'o');
	fix_free(f);
}
END_TEST

START_TEST(post_recv_on_an_srq_qp_is_refused_and_rq_depth_is_unused)
{
	struct fix *f = fix_new(NBUF, 0, B2B_SPLIT_WHOLE);
	struct rdmap_qp_config cfg = f->p[0]->cfg[B2B_B];
	struct rdmap_qp *qp;

	ck_assert_int_eq(b2b_post_recv(f->p[0], B2B_B, 1, f->rbuf[0], 8, f->rkey), IW_EINVAL);
	cfg.rq_depth = 0; /* ignored with an SRQ */
	ck_assert_int_eq(rdmap_qp_create(&cfg, &qp), IW_OK);
	rdmap_qp_destroy(qp);
	cfg.srq = NULL; /* without one it is checked */
	ck_assert_int_eq(rdmap_qp_create(&cfg, &qp), IW_EINVAL);
	fix_free(f);
}
END_TEST

/* A QP that fails mid-message flushes the receive it holds, nothing else. */
START_TEST(a_failing_qp_flushes_only_the_receive_it_took)
{
	struct fix *f = fix_new(NBUF, 0, B2B_SPLIT_OCTET);
	struct rdmap_wc wc;

	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(srq_post(f, (uint64_t)k + 1, k), IW_OK);
	send_from(f, 0, 'x', 3000);
	for (int s = 0; s < 100000 && rdmap_srq_count(f->srq) == 3; s++)
		b2b_step(f->p[0]);
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 2);
	rdmap_qp_flush(f->p[0]->qp[B2B_B]);
	ck_assert_int_eq(rdmap_qp_poll(f->p[0]->qp[B2B_B], &wc, 1), 1);
	ck_assert_uint_eq(wc.wr_id, 1);
	ck_assert_int_eq(wc.status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV);
	ck_assert_int_eq(rdmap_qp_poll(f->p[0]->qp[B2B_B], &wc, 1), 0);
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 2);
	/* the other QP goes on with the rest, in order */
	send_from(f, 1, 'y', 100);
	expect_recv(f, 1, 2, 100, 'y');
	send_from(f, 1, 'z', 200);
	expect_recv(f, 1, 3, 200, 'z');
	/* the LLP failure of the second QP while idle flushes nothing */
	ck_assert_int_eq(srq_post(f, 4, 3), IW_OK);
	rdmap_qp_llp_closed(f->p[1]->qp[B2B_B]);
	ck_assert_int_eq(rdmap_qp_poll(f->p[1]->qp[B2B_B], &wc, 1), 0);
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 1);
	fix_free(f);
}
END_TEST

/* A receive whose buffer fails the STag check fails the QP that took it
 * (LOC_PROT_ERR for that receive); the next receive goes to the other QP. */
START_TEST(a_bad_srq_receive_fails_only_the_qp_that_takes_it)
{
	struct fix *f = fix_new(NBUF, 0, B2B_SPLIT_WHOLE);
	struct rdmap_recv_wr bad = {
		.wr_id = 50,
		.num_sge = 1,
		.sg = {{.addr = (uint64_t)(uintptr_t)f->rbuf[0],
			.length = 16,
			.lkey = f->rkey ^ 0x100}}, /* no such STag */
	};
	struct rdmap_wc wc;

	ck_assert_int_eq(rdmap_srq_post(f->srq, &bad), IW_OK);
	ck_assert_int_eq(srq_post(f, 2, 1), IW_OK);
	send_from(f, 0, 'p', 8);
	b2b_pump(f->p[0]);
	ck_assert_int_eq(rdmap_qp_state(f->p[0]->qp[B2B_B]), RDMAP_QP_ERROR);
	ck_assert_int_eq(rdmap_qp_poll(f->p[0]->qp[B2B_B], &wc, 1), 1);
	ck_assert_uint_eq(wc.wr_id, 50);
	ck_assert_int_eq(wc.status, RDMAP_WC_LOC_PROT_ERR);
	ck_assert_int_eq(rdmap_qp_poll(f->p[0]->qp[B2B_B], &wc, 1), 0);
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 1);
	send_from(f, 1, 'q', 9);
	expect_recv(f, 1, 2, 9, 'q');
	fix_free(f);
}
END_TEST

START_TEST(the_limit_fires_once_when_the_count_drops_below_it)
{
	struct fix *f = fix_new(NBUF, 0, B2B_SPLIT_WHOLE);

	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(srq_post(f, (uint64_t)k + 1, k), IW_OK);
	rdmap_srq_set_limit(f->srq, 3);
	ck_assert(!rdmap_srq_limit_reached(f->srq));
	send_from(f, 0, 'a', 1);
	expect_recv(f, 0, 1, 1, 'a'); /* 3 left: not below 3 */
	ck_assert(!rdmap_srq_limit_reached(f->srq));
	send_from(f, 1, 'b', 1);
	expect_recv(f, 1, 2, 1, 'b'); /* 2 left */
	ck_assert(rdmap_srq_limit_reached(f->srq));
	ck_assert(!rdmap_srq_limit_reached(f->srq)); /* reported once */
	send_from(f, 0, 'c', 1);
	expect_recv(f, 0, 3, 1, 'c'); /* disarmed */
	ck_assert(!rdmap_srq_limit_reached(f->srq));
	/* 0 disarms */
	rdmap_srq_set_limit(f->srq, 0);
	send_from(f, 0, 'd', 1);
	expect_recv(f, 0, 4, 1, 'd');
	ck_assert(!rdmap_srq_limit_reached(f->srq));
	/* re-armed: posting does not fire it, the next take below it does */
	rdmap_srq_set_limit(f->srq, 5);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(srq_post(f, (uint64_t)k + 1, k), IW_OK);
	ck_assert(!rdmap_srq_limit_reached(f->srq));
	send_from(f, 1, 'e', 1);
	expect_recv(f, 1, 1, 1, 'e');
	ck_assert(rdmap_srq_limit_reached(f->srq));
	fix_free(f);
}
END_TEST

START_TEST(srq_ring_bounds_bad_input_and_flush)
{
	struct rdmap_srq *srq;
	struct rdmap_recv_wr wr = {.num_sge = 1};
	struct rdmap_wc wc[4];

	ck_assert_int_eq(rdmap_srq_create(0, &srq), IW_EINVAL);
	ck_assert_int_eq(rdmap_srq_create(65537, &srq), IW_EINVAL);
	ck_assert_int_eq(rdmap_srq_create(1, NULL), IW_EINVAL);
	ck_assert_int_eq(rdmap_srq_create(3, &srq), IW_OK);
	ck_assert_int_eq(rdmap_srq_post(srq, NULL), IW_EINVAL);
	ck_assert_int_eq(rdmap_srq_post(NULL, &wr), IW_EINVAL);
	wr.num_sge = -1;
	ck_assert_int_eq(rdmap_srq_post(srq, &wr), IW_EINVAL);
	wr.num_sge = RDMAP_MAX_SGE + 1;
	ck_assert_int_eq(rdmap_srq_post(srq, &wr), IW_EINVAL);
	wr.num_sge = 0;
	for (int k = 0; k < 3; k++) {
		wr.wr_id = (uint64_t)k + 10;
		ck_assert_int_eq(rdmap_srq_post(srq, &wr), IW_OK);
	}
	ck_assert_int_eq(rdmap_srq_post(srq, &wr), IW_ENOSPC);
	ck_assert_uint_eq(rdmap_srq_count(srq), 3);
	ck_assert_int_eq(rdmap_srq_flush(srq, wc, 2), 2);
	ck_assert_uint_eq(wc[0].wr_id, 10);
	ck_assert_uint_eq(wc[1].wr_id, 11);
	ck_assert_int_eq(wc[1].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc[1].opcode, RDMAP_WC_RECV);
	ck_assert_int_eq(rdmap_srq_flush(srq, wc, 4), 1);
	ck_assert_uint_eq(wc[0].wr_id, 12);
	ck_assert_int_eq(rdmap_srq_flush(srq, wc, 4), 0);
	ck_assert_uint_eq(rdmap_srq_count(srq), 0);
	ck_assert_int_eq(rdmap_srq_flush(srq, NULL, 4), 0);
	ck_assert_uint_eq(rdmap_srq_count(NULL), 0);
	ck_assert(!rdmap_srq_limit_reached(NULL));
	rdmap_srq_set_limit(NULL, 1);
	ck_assert_int_eq(rdmap_srq_destroy(srq), IW_OK);
	ck_assert_int_eq(rdmap_srq_destroy(NULL), IW_OK);
}
END_TEST

/*
 * A QP whose completions nobody polls stops taking receives once its ring
 * would overflow (sq_depth + SRQ depth + ORD entries): the next Send meets the
 * no-buffer Terminate, every completion it produced is still there, and the
 * SRQ keeps what it did not take.
 */
START_TEST(an_unpolled_qp_stops_taking_when_its_completion_ring_is_full)
{
	struct fix *f = fix_new(4, 2, B2B_SPLIT_WHOLE);
	struct rdmap_wc wc[16];
	int got = 0, n;
	/* the B side's ring: sq_depth 2 + SRQ depth 4 + ORD min(16, 2) */
	const int ring = 2 + 4 + 2;

	for (int k = 0; k < ring; k++) {
		ck_assert_int_eq(srq_post(f, (uint64_t)(k % NBUF) + 1, k % NBUF), IW_OK);
		send_from(f, 0, 'r', 16);
		b2b_pump(f->p[0]);
		b2b_drain(f->p[0], B2B_A, wc, 16);
		ck_assert_int_eq(rdmap_qp_state(f->p[0]->qp[B2B_B]), RDMAP_QP_RTS);
	}
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 0);
	ck_assert_int_eq(srq_post(f, 99, (99 - 1) % NBUF), IW_OK);
	send_from(f, 0, 's', 16);
	b2b_pump(f->p[0]);
	ck_assert_int_eq(rdmap_qp_error(f->p[0]->qp[B2B_B]), IW_EDDP_U_NO_BUFFER);
	ck_assert_uint_eq(rdmap_srq_count(f->srq), 1);
	while ((n = rdmap_qp_poll(f->p[0]->qp[B2B_B], wc, 16)) > 0) {
		for (int k = 0; k < n; k++) {
			ck_assert_int_eq(wc[k].status, RDMAP_WC_SUCCESS);
			ck_assert_uint_ne(wc[k].wr_id, 99);
		}
		got += n;
	}
	ck_assert_int_eq(got, ring);
	/* the other QP takes the one left */
	send_from(f, 1, 't', 3);
	expect_recv(f, 1, 99, 3, 't');
	fix_free(f);
}
END_TEST

static Suite *rdmap_srq_suite(void)
{
	Suite *s = suite_create("rdmap_srq");
	TCase *t = tcase_create("srq");

	tcase_add_test(t, two_qps_take_receives_from_one_srq_in_post_order);
	tcase_add_test(t, interleaved_multi_segment_messages_each_keep_their_receive);
	tcase_add_test(t, empty_srq_answers_a_send_with_the_no_buffer_terminate);
	tcase_add_test(t, post_recv_on_an_srq_qp_is_refused_and_rq_depth_is_unused);
	tcase_add_test(t, a_failing_qp_flushes_only_the_receive_it_took);
	tcase_add_test(t, a_bad_srq_receive_fails_only_the_qp_that_takes_it);
	tcase_add_test(t, the_limit_fires_once_when_the_count_drops_below_it);
	tcase_add_test(t, srq_ring_bounds_bad_input_and_flush);
	tcase_add_test(t, an_unpolled_qp_stops_taking_when_its_completion_ring_is_full);
	suite_add_tcase(s, t);
	return s;
}

TH_MAIN(rdmap_srq_suite)
