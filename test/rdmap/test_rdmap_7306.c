/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_7306.c - RFC 7306 in the queue-pair engine, two whole stacks
 * back to back in memory (b2b): Write and Send with Immediate across every
 * splitting policy and with Markers, atomics interleaved with RDMA Reads (the
 * responses come back in request order), the ORD shared by both, work
 * requests refused on a QP without the extension, flushing an atomic still
 * waiting for its response, and Immediate Data on a QP with a shared
 * receive queue.  The bad inputs are in test_rdmap_bad.c.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/ddp.h>
#include <iwarp/rdmap.h>
#include <iwarp/rdmap_qp.h>

#include "b2b.h"
#include "iw_bytes.h"
#include "th.h"

#define ACC_ALL                                                                                    \
	(DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ |               \
	 DDP_ACCESS_REMOTE_ATOMIC)

static struct b2b *make(enum b2b_split split, bool markers, uint16_t ord)
{
	struct b2b_opts o;

	b2b_opts_default(&o);
	o.split = split;
	o.markers_ab = o.markers_ba = markers;
	o.rfc7306[0] = o.rfc7306[1] = true;
	if (ord)
		o.ird[0] = o.ird[1] = o.ord[0] = o.ord[1] = ord;
	return b2b_create(&o);
}

static int post(struct b2b *b, int side, struct rdmap_send_wr *wr)
{
	wr->flags |= RDMAP_WR_SIGNALED;
	return rdmap_qp_post_send(b->qp[side], wr);
}

static void atomic_wr(struct rdmap_send_wr *wr, enum rdmap_wr_opcode op, uint64_t id, uint64_t *res,
		      uint32_t lkey, uint32_t rstag, const uint64_t *target)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->opcode = op;
	wr->num_sge = 1;
	wr->sg[0] = (struct rdmap_sge){.addr = (uintptr_t)res, .length = 8, .lkey = lkey};
	wr->remote_stag = rstag;
	wr->remote_to = (uintptr_t)target;
	wr->atomic.compare_mask = UINT64_MAX;
	wr->atomic.add_swap_mask = op == RDMAP_WR_ATOMIC_CS ? UINT64_MAX : 0;
}

/* Loop: split policy x Markers. */
START_TEST(write_with_imm_arrives_whole_then_notifies)
{
	enum b2b_split split = (enum b2b_split)(_i % 3);
	bool markers = _i >= 3;
	struct b2b *b = make(split, markers, 0);
	size_t len = 5000;
	uint8_t *src = malloc(len), *dst = calloc(1, len), rbuf[16];
	uint32_t ls = b2b_reg(b, B2B_A, src, len, 0);
	uint32_t rs = b2b_reg(b, B2B_B, dst, len, ACC_ALL);
	uint32_t rl = b2b_reg(b, B2B_B, rbuf, sizeof(rbuf), DDP_ACCESS_LOCAL_WRITE);
	struct rdmap_send_wr wr = {.wr_id = 1,
				   .opcode = RDMAP_WR_WRITE_IMM,
				   .flags = RDMAP_WR_SOLICITED,
				   .num_sge = 1,
				   .remote_stag = rs,
				   .remote_to = (uintptr_t)dst,
				   .imm = 0x0123456789ABCDEFull};
	struct rdmap_wc wc;

	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	memset(rbuf, 0x77, sizeof(rbuf));
	wr.sg[0] = (struct rdmap_sge){.addr = (uintptr_t)src, .length = (uint32_t)len, .lkey = ls};
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 9, rbuf, sizeof(rbuf), rl), IW_OK);
	ck_assert_int_eq(post(b, B2B_A, &wr), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 9);
	ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(wc.byte_len, len);
	ck_assert(wc.with_imm && wc.solicited);
	ck_assert_uint_eq(wc.imm, 0x0123456789ABCDEFull);
	ck_assert_mem_eq(dst, src, len);
	for (size_t i = 0; i < sizeof(rbuf); i++)
		ck_assert_uint_eq(rbuf[i], 0x77);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 1);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RDMA_WRITE);
	/* On the wire: the Write's segments, then one Immediate Data with SE. */
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_WRITE], 1);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_IMM_SE], 1);
	ck_assert_uint_eq(b->segs[B2B_A][RDMAP_OP_IMM], 0);
	ck_assert_int_eq(b->sniff_err[B2B_A], 0);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_B, rs);
	b2b_dereg(b, B2B_B, rl);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
	free(src);
	free(dst);
}
END_TEST

/* Loop: 0 with payload, 1 without. */
START_TEST(send_with_imm_uses_one_receive_per_message)
{
	struct b2b *b = make(B2B_SPLIT_RANDOM, false, 0);
	uint8_t src[300], r0[512], r1[512];
	uint32_t ls = b2b_reg(b, B2B_A, src, sizeof(src), 0);
	uint32_t l0 = b2b_reg(b, B2B_B, r0, sizeof(r0), DDP_ACCESS_LOCAL_WRITE);
	uint32_t l1 = b2b_reg(b, B2B_B, r1, sizeof(r1), DDP_ACCESS_LOCAL_WRITE);
	struct rdmap_send_wr wr = {.wr_id = 4, .opcode = RDMAP_WR_SEND_IMM, .imm = 42};
	struct rdmap_wc wc;

	memset(src, 0xAB, sizeof(src));
	if (_i == 0) {
		wr.num_sge = 1;
		wr.sg[0] = (struct rdmap_sge){
			.addr = (uintptr_t)src, .length = sizeof(src), .lkey = ls};
	}
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 10, r0, sizeof(r0), l0), IW_OK);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 11, r1, sizeof(r1), l1), IW_OK);
	ck_assert_int_eq(post(b, B2B_A, &wr), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 10);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV);
	if (_i == 0) {
		ck_assert(!wc.with_imm);
		ck_assert_uint_eq(wc.byte_len, sizeof(src));
		ck_assert_mem_eq(r0, src, sizeof(src));
		ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
		ck_assert_uint_eq(wc.wr_id, 11);
	}
	/* Not right after a Write: a plain receive with immediate data. */
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV);
	ck_assert(wc.with_imm && !wc.solicited);
	ck_assert_uint_eq(wc.byte_len, 0);
	ck_assert_uint_eq(wc.imm, 42);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_SEND);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_SEND], _i == 0 ? 1 : 0);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_IMM], 1);
	/* Without payload the second receive is still posted: a flush completes it. */
	rdmap_qp_flush(b->qp[B2B_B]);
	ck_assert_int_eq(b2b_drain(b, B2B_B, &wc, 1), _i);
	if (_i == 1) {
		ck_assert_uint_eq(wc.wr_id, 11);
		ck_assert_int_eq(wc.status, RDMAP_WC_WR_FLUSH_ERR);
	}
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_B, l0);
	b2b_dereg(b, B2B_B, l1);
	b2b_destroy(b);
}
END_TEST

/*
 * Reads and atomics, several outstanding at once (ORD 4 < the 12 posted):
 * they complete in post order with the right results, and the target word
 * went through every operation once.  Loop: split policy.
 */
START_TEST(reads_and_atomics_interleave_and_complete_in_order)
{
	struct b2b *b = make((enum b2b_split)_i, _i == 2, 4);
	static uint64_t target[2] __attribute__((aligned(8)));
	static uint64_t res[12];
	static uint8_t rsrc[64], rsink[12][64];
	uint32_t ts = b2b_reg(b, B2B_B, target, sizeof(target), ACC_ALL);
	uint32_t ss = b2b_reg(b, B2B_B, rsrc, sizeof(rsrc), ACC_ALL);
	uint32_t ll = b2b_reg(b, B2B_A, res, sizeof(res), DDP_ACCESS_LOCAL_WRITE);
	uint32_t sk = b2b_reg(b, B2B_A, rsink, sizeof(rsink), DDP_ACCESS_LOCAL_WRITE);
	struct rdmap_wc wc[12];

	target[0] = 100;
	target[1] = 7;
	memset(rsrc, 0x3C, sizeof(rsrc));
	memset(res, 0, sizeof(res));
	for (int i = 0; i < 12; i++) {
		struct rdmap_send_wr wr;

		if (i % 3 == 0) {
			ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED,
						       (uint64_t)i, rsink[i], 64, sk, ss,
						       (uintptr_t)rsrc),
					 IW_OK);
			continue;
		}
		if (i % 3 == 1) {
			atomic_wr(&wr, RDMAP_WR_ATOMIC_FA, (uint64_t)i, &res[i], ll, ts,
				  &target[0]);
			wr.atomic.add_swap = 10;
		} else {
			/* target[1] counts 7, 8, 9, ...: each compare expects the last swap */
			atomic_wr(&wr, RDMAP_WR_ATOMIC_CS, (uint64_t)i, &res[i], ll, ts,
				  &target[1]);
			wr.atomic.compare = 7 + (uint64_t)(i / 3);
			wr.atomic.add_swap = 8 + (uint64_t)(i / 3);
		}
		ck_assert_int_eq(post(b, B2B_A, &wr), IW_OK);
	}
	ck_assert_int_eq(b2b_drain(b, B2B_A, wc, 12), 12);
	for (int i = 0; i < 12; i++) {
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)i);
		ck_assert_int_eq(wc[i].status, RDMAP_WC_SUCCESS);
		ck_assert_int_eq(wc[i].opcode, i % 3 == 0   ? RDMAP_WC_RDMA_READ
					       : i % 3 == 1 ? RDMAP_WC_FETCH_ADD
							    : RDMAP_WC_COMP_SWAP);
		if (i % 3 == 0)
			ck_assert_mem_eq(rsink[i], rsrc, 64);
		else if (i % 3 == 1)
			ck_assert_uint_eq(res[i], 100 + 10 * (uint64_t)(i / 3));
		else
			ck_assert_uint_eq(res[i], 7 + (uint64_t)(i / 3));
		ck_assert_uint_eq(wc[i].byte_len, i % 3 == 0 ? 64 : 8);
	}
	ck_assert_uint_eq(target[0], 140);
	ck_assert_uint_eq(target[1], 11);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_ATOMIC_REQ], 8);
	ck_assert_uint_eq(b->msgs[B2B_B][RDMAP_OP_ATOMIC_RESP], 8);
	ck_assert_int_eq(b->sniff_err[B2B_A], 0);
	ck_assert_int_eq(b->sniff_err[B2B_B], 0);
	b2b_dereg(b, B2B_A, ll);
	b2b_dereg(b, B2B_A, sk);
	b2b_dereg(b, B2B_B, ts);
	b2b_dereg(b, B2B_B, ss);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* A fenced Send waits for the atomic before it: the peer sees the new value. */
START_TEST(fence_waits_for_an_outstanding_atomic)
{
	struct b2b *b = make(B2B_SPLIT_WHOLE, false, 0);
	static uint64_t target __attribute__((aligned(8))), res;
	uint8_t rbuf[16];
	uint32_t ts = b2b_reg(b, B2B_B, &target, 8, ACC_ALL);
	uint32_t ll = b2b_reg(b, B2B_A, &res, 8, DDP_ACCESS_LOCAL_WRITE);
	uint32_t rl = b2b_reg(b, B2B_B, rbuf, sizeof(rbuf), DDP_ACCESS_LOCAL_WRITE);
	struct rdmap_send_wr wr;
	struct rdmap_wc wc;

	target = 1;
	atomic_wr(&wr, RDMAP_WR_ATOMIC_FA, 1, &res, ll, ts, &target);
	wr.atomic.add_swap = 1;
	ck_assert_int_eq(post(b, B2B_A, &wr), IW_OK);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 5, rbuf, sizeof(rbuf), rl), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED | RDMAP_WR_FENCE,
				       2, NULL, 0, 0),
			 IW_OK);
	/* One step A->B carries only the Atomic Request: the Send waits. */
	b2b_step(b);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_ATOMIC_REQ], 1);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_SEND], 0);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 5);
	ck_assert_uint_eq(target, 2);
	ck_assert_int_eq(b2b_drain(b, B2B_A, &wc, 1), 1);
	b2b_dereg(b, B2B_A, ll);
	b2b_dereg(b, B2B_B, ts);
	b2b_dereg(b, B2B_B, rl);
	b2b_destroy(b);
}
END_TEST

START_TEST(rfc7306_work_requests_are_refused_on_a_plain_qp)
{
	struct b2b_opts o;
	struct b2b *b;
	static uint64_t res;
	static const enum rdmap_wr_opcode ops[] = {RDMAP_WR_WRITE_IMM, RDMAP_WR_SEND_IMM,
						   RDMAP_WR_ATOMIC_FA, RDMAP_WR_ATOMIC_CS};
	uint32_t ll;

	b2b_opts_default(&o);
	o.rfc7306[1] = true; /* only B */
	b = b2b_create(&o);
	ll = b2b_reg(b, B2B_A, &res, 8, DDP_ACCESS_LOCAL_WRITE);
	for (size_t i = 0; i < IW_ARRAY_SIZE(ops); i++) {
		struct rdmap_send_wr wr;

		atomic_wr(&wr, ops[i], i, &res, ll, 0x100, (const uint64_t *)(uintptr_t)0x1000);
		ck_assert_int_eq(post(b, B2B_A, &wr), IW_EINVAL);
	}
	/* and the local checks of atomics on an RFC 7306 QP */
	{
		struct rdmap_send_wr wr;

		atomic_wr(&wr, RDMAP_WR_ATOMIC_FA, 1, &res, ll, 0x100,
			  (const uint64_t *)(uintptr_t)0x1004);
		ck_assert_int_eq(post(b, B2B_B, &wr), IW_EINVAL); /* unaligned */
		atomic_wr(&wr, RDMAP_WR_ATOMIC_FA, 1, &res, ll, 0x100,
			  (const uint64_t *)(uintptr_t)0x1000);
		wr.sg[0].length = 16;
		ck_assert_int_eq(post(b, B2B_B, &wr), IW_EINVAL); /* result not 8 octets */
	}
	b2b_dereg(b, B2B_A, ll);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* An atomic whose response has not come yet is flushed with its own opcode. */
START_TEST(flush_completes_an_outstanding_atomic)
{
	struct b2b *b = make(B2B_SPLIT_WHOLE, false, 0);
	static uint64_t res;
	uint32_t ll = b2b_reg(b, B2B_A, &res, 8, DDP_ACCESS_LOCAL_WRITE);
	struct rdmap_send_wr wr;
	struct rdmap_wc wc;

	atomic_wr(&wr, RDMAP_WR_ATOMIC_CS, 3, &res, ll, 0x4242, (const uint64_t *)(uintptr_t)64);
	ck_assert_int_eq(post(b, B2B_A, &wr), IW_OK);
	/* The request leaves A, B never gets to answer. */
	{
		struct iovec iov[8];
		size_t bytes;

		ck_assert_int_gt(rdmap_qp_tx_iov(b->qp[B2B_A], iov, 8, &bytes), 0);
		rdmap_qp_tx_advance(b->qp[B2B_A], bytes);
	}
	rdmap_qp_flush(b->qp[B2B_A]);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
	ck_assert_uint_eq(wc.wr_id, 3);
	ck_assert_int_eq(wc.status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_COMP_SWAP);
	b2b_dereg(b, B2B_A, ll);
	b2b_destroy(b);
}
END_TEST

/* Immediate Data on a QP with a shared receive queue takes its receive from the SRQ. */
START_TEST(write_with_imm_takes_a_receive_of_the_srq)
{
	struct b2b_opts o;
	struct b2b *b;
	struct rdmap_srq *srq;
	uint8_t src[100], dst[100];
	uint32_t ls, rs;
	struct rdmap_recv_wr rw = {.wr_id = 77, .num_sge = 0};
	struct rdmap_send_wr wr = {
		.wr_id = 1, .opcode = RDMAP_WR_WRITE_IMM, .num_sge = 1, .imm = 5};
	struct rdmap_wc wc;

	ck_assert_int_eq(rdmap_srq_create(4, &srq), IW_OK);
	b2b_opts_default(&o);
	o.rfc7306[0] = o.rfc7306[1] = true;
	o.srq[B2B_B] = srq;
	b = b2b_create(&o);
	ls = b2b_reg(b, B2B_A, src, sizeof(src), 0);
	rs = b2b_reg(b, B2B_B, dst, sizeof(dst), ACC_ALL);
	memset(src, 0x11, sizeof(src));
	wr.sg[0] = (struct rdmap_sge){.addr = (uintptr_t)src, .length = sizeof(src), .lkey = ls};
	wr.remote_stag = rs;
	wr.remote_to = (uintptr_t)dst;
	ck_assert_int_eq(rdmap_srq_post(srq, &rw), IW_OK);
	ck_assert_uint_eq(rdmap_srq_count(srq), 1);
	ck_assert_int_eq(post(b, B2B_A, &wr), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 77);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(wc.byte_len, sizeof(src));
	ck_assert_uint_eq(wc.imm, 5);
	ck_assert_uint_eq(rdmap_srq_count(srq), 0);
	ck_assert_mem_eq(dst, src, sizeof(src));
	/* A second one with the SRQ empty: the DDP no-buffer Terminate. */
	wr.wr_id = 2;
	ck_assert_int_eq(post(b, B2B_A, &wr), IW_OK);
	b2b_pump(b);
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_B]), IW_EDDP_U_NO_BUFFER);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_B, rs);
	b2b_destroy(b);
	ck_assert_int_eq(rdmap_srq_destroy(srq), IW_OK);
}
END_TEST

static Suite *rdmap_7306_suite(void)
{
	Suite *s = suite_create("rdmap_7306");
	TCase *tc = tcase_create("rfc7306");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, write_with_imm_arrives_whole_then_notifies, 0, 6);
	tcase_add_loop_test(tc, send_with_imm_uses_one_receive_per_message, 0, 2);
	tcase_add_loop_test(tc, reads_and_atomics_interleave_and_complete_in_order, 0, 3);
	tcase_add_test(tc, fence_waits_for_an_outstanding_atomic);
	tcase_add_test(tc, rfc7306_work_requests_are_refused_on_a_plain_qp);
	tcase_add_test(tc, flush_completes_an_outstanding_atomic);
	tcase_add_test(tc, write_with_imm_takes_a_receive_of_the_srq);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(rdmap_7306_suite)
