/* SPDX-License-Identifier: MIT */
/*
 * test_iwv_7306.c - RFC 7306 through the verbs API over real loopback TCP:
 * RDMA Write and Send with Immediate Data, Fetch-and-Add and Compare-and-Swap
 * (one QP, and many QPs in several contexts on one target word, where the
 * counts must add up exactly), the per-QP switch (off by default: a peer
 * that did not enable it answers with a Terminate, and the requester sees
 * the matching completion status), and the local checks of the new work
 * requests.  Built once per engine (IWARP_ENGINE, see test/meson.build).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>
#include <iwarp/rdmap.h>

#include "th.h"
#include "vh.h"

#define ACC_ATOMIC (IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_ATOMIC)

static void pair_up(struct vh_pair *p, int c7306, int s7306, int threads)
{
	struct vh_cfg cfg;

	vh_cfg_default(&cfg);
	cfg.c_rfc7306 = c7306;
	cfg.s_rfc7306 = s7306;
	if (threads)
		cfg.c_thread = cfg.s_thread = 1;
	vh_pair_up(p, &cfg);
}

/* One atomic work request: the result into res[off..off+8), the target at tb[toff]. */
static int post_atomic(struct iwv_qp *qp, enum iwv_wr_opcode op, uint64_t wr_id,
		       const struct vh_buf *res, size_t off, const struct vh_buf *tb, size_t toff,
		       uint64_t compare_add, uint64_t swap)
{
	struct iwv_sge sge = vh_sge(res, off, 8);
	struct iwv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IWV_SEND_SIGNALED,
	};
	struct iwv_send_wr *bad = NULL;

	wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)(tb->p + toff);
	wr.wr.atomic.rkey = tb->mr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return iwv_post_send(qp, &wr, &bad);
}

static int post_imm(struct iwv_qp *qp, enum iwv_wr_opcode op, uint64_t wr_id, unsigned flags,
		    const struct vh_buf *b, size_t len, const struct vh_buf *rb, uint32_t imm)
{
	struct iwv_sge sge = vh_sge(b, 0, len);
	struct iwv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = op,
		.send_flags = IWV_SEND_SIGNALED | flags,
		.imm_data = htonl(imm),
	};
	struct iwv_send_wr *bad = NULL;

	if (rb) {
		wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)rb->p;
		wr.wr.rdma.rkey = rb->mr->rkey;
	}
	return iwv_post_send(qp, &wr, &bad);
}

START_TEST(device_reports_global_atomics)
{
	struct iwv_device **list = iwv_get_device_list(NULL);
	struct iwv_context *ctx = iwv_open_device(list[0]);
	struct iwv_device_attr a;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(iwv_query_device(ctx, &a), 0);
	ck_assert_int_eq(a.atomic_cap, IWV_ATOMIC_GLOB);
	ck_assert_int_ge(a.max_qp_rd_atom, 1);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
	iwv_free_device_list(list);
}
END_TEST

/* Loop: 0 write of 0 octets, 1 small, 2 many FPDUs; odd loop values solicited. */
START_TEST(write_with_imm_consumes_a_receive_and_reports_the_write)
{
	static const size_t sizes[] = {0, 100, 300000};
	size_t len = sizes[_i % 3];
	bool se = _i >= 3;
	struct vh_pair p;
	struct vh_buf *src, *dst, *rcv;
	struct iwv_wc wc;

	pair_up(&p, 1, 1, 0);
	src = vh_buf_new(&p, &p.c, len + 1, IWV_ACCESS_LOCAL_WRITE);
	dst = vh_buf_new(&p, &p.s, len + 1, VH_ACCESS_ALL);
	rcv = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, len, 7 + len);
	memset(rcv->p, 0x5A, 64);
	vh_post_recv(p.s.qp, 11, rcv, 0, 64);
	ck_assert_int_eq(post_imm(p.c.qp, IWV_WR_RDMA_WRITE_WITH_IMM, 21,
				  se ? IWV_SEND_SOLICITED : 0, src, len, dst, 0xA1B2C3D4u),
			 0);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 21, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 11, IWV_WC_SUCCESS, IWV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(wc.byte_len, len);
	ck_assert(wc.wc_flags & IWV_WC_WITH_IMM);
	ck_assert_uint_eq(ntohl(wc.imm_data), 0xA1B2C3D4u);
	ck_assert_int_eq(wc.solicited, se);
	vh_same(dst->p, src->p, len, "written data");
	/* the receive buffer itself is not written */
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(rcv->p[i], 0x5A);
	vh_cq_empty(p.s.rcq);
	vh_pair_down(&p);
}
END_TEST

/* Loop: 0 with payload (two receives), 1 without (one). */
START_TEST(send_with_imm_delivers_data_and_immediate)
{
	size_t len = _i == 0 ? 5000 : 0;
	struct vh_pair p;
	struct vh_buf *src, *rcv;
	struct iwv_wc wc;

	pair_up(&p, 1, 1, 0);
	src = vh_buf_new(&p, &p.c, 5000, IWV_ACCESS_LOCAL_WRITE);
	rcv = vh_buf_new(&p, &p.s, 2 * 8192, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 5000, 99);
	vh_post_recv(p.s.qp, 1, rcv, 0, 8192);
	vh_post_recv(p.s.qp, 2, rcv, 8192, 8192);
	ck_assert_int_eq(post_imm(p.c.qp, IWV_WR_SEND_WITH_IMM, 3, 0, src, len, NULL, 77), 0);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 3, IWV_WC_SUCCESS, IWV_WC_SEND);
	wc = vh_poll1(&p.w, p.s.rcq);
	if (len) {
		vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, len);
		ck_assert(!(wc.wc_flags & IWV_WC_WITH_IMM));
		vh_same(rcv->p, src->p, len, "sent data");
		wc = vh_poll1(&p.w, p.s.rcq);
		vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RECV);
	} else {
		vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RECV);
	}
	ck_assert_uint_eq(wc.byte_len, 0);
	ck_assert(wc.wc_flags & IWV_WC_WITH_IMM);
	ck_assert_uint_eq(ntohl(wc.imm_data), 77);
	vh_cq_empty(p.s.rcq);
	vh_pair_down(&p);
}
END_TEST

START_TEST(fetch_add_and_compare_swap_return_the_original_value)
{
	struct vh_pair p;
	struct vh_buf *res, *tgt;
	uint64_t *t, r[4];
	struct iwv_wc wc;

	pair_up(&p, 1, 1, 0);
	res = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	tgt = vh_buf_new(&p, &p.s, 64, ACC_ATOMIC);
	t = (uint64_t *)(void *)tgt->p;
	t[0] = 1000;
	t[1] = 0xFFFFFFFFFFFFFFF0ull;
	ck_assert_int_eq(post_atomic(p.c.qp, IWV_WR_ATOMIC_FETCH_AND_ADD, 1, res, 0, tgt, 0, 5, 0),
			 0);
	/* compare matches: swapped */
	ck_assert_int_eq(
		post_atomic(p.c.qp, IWV_WR_ATOMIC_CMP_AND_SWP, 2, res, 8, tgt, 0, 1005, 77), 0);
	/* compare does not match: unchanged */
	ck_assert_int_eq(
		post_atomic(p.c.qp, IWV_WR_ATOMIC_CMP_AND_SWP, 3, res, 16, tgt, 0, 1005, 88), 0);
	/* the add wraps 2^64 */
	ck_assert_int_eq(
		post_atomic(p.c.qp, IWV_WR_ATOMIC_FETCH_AND_ADD, 4, res, 24, tgt, 8, 0x20, 0), 0);
	for (uint64_t i = 1; i <= 4; i++) {
		wc = vh_poll1(&p.w, p.c.scq);
		vh_wc_is(&wc, i, IWV_WC_SUCCESS,
			 i == 2 || i == 3 ? IWV_WC_COMP_SWAP : IWV_WC_FETCH_ADD);
		ck_assert_uint_eq(wc.byte_len, 8);
	}
	memcpy(r, res->p, sizeof(r));
	ck_assert_uint_eq(r[0], 1000);
	ck_assert_uint_eq(r[1], 1005);
	ck_assert_uint_eq(r[2], 77);
	ck_assert_uint_eq(r[3], 0xFFFFFFFFFFFFFFF0ull);
	ck_assert_uint_eq(t[0], 77);
	ck_assert_uint_eq(t[1], 0x10);
	vh_buf_guards_intact(res);
	vh_pair_down(&p);
}
END_TEST

#define NPAIRS 4
#define NOPS   200 /* below the send queue's 256 */

/*
 * Several QPs, each in contexts of its own (separate STag tables, each with
 * its engine thread), fetch-and-add 1 on one word at once: it ends at
 * NPAIRS * NOPS and the originals they got back are every value below that
 * exactly once.
 */
START_TEST(atomics_from_several_qps_on_one_target_add_up_exactly)
{
	static struct vh_pair p[NPAIRS];
	static uint64_t target __attribute__((aligned(8)));
	static uint8_t seen[NPAIRS * NOPS];
	static struct iwv_wc wc[NOPS];
	struct iwv_mr *mr[NPAIRS];
	struct vh_buf *res[NPAIRS];

	target = 0;
	memset(seen, 0, sizeof(seen));
	for (int k = 0; k < NPAIRS; k++) {
		pair_up(&p[k], 1, 1, 1);
		mr[k] = iwv_reg_mr(p[k].s.pd, &target, sizeof(target), ACC_ATOMIC);
		ck_assert_ptr_nonnull(mr[k]);
		res[k] = vh_buf_new(&p[k], &p[k].c, NOPS * 8, IWV_ACCESS_LOCAL_WRITE);
	}
	/* All posted before any is polled: the engine threads run them concurrently. */
	for (int i = 0; i < NOPS; i++)
		for (int k = 0; k < NPAIRS; k++) {
			struct vh_buf tb = {.p = (uint8_t *)&target, .len = 8, .mr = mr[k]};

			ck_assert_int_eq(post_atomic(p[k].c.qp, IWV_WR_ATOMIC_FETCH_AND_ADD,
						     (uint64_t)i, res[k], (size_t)i * 8, &tb, 0, 1,
						     0),
					 0);
		}
	for (int k = 0; k < NPAIRS; k++) {
		vh_poll_wc(&p[k].w, p[k].c.scq, NOPS, wc);
		for (int i = 0; i < NOPS; i++) {
			uint64_t v;

			vh_wc_is(&wc[i], (uint64_t)i, IWV_WC_SUCCESS, IWV_WC_FETCH_ADD);
			memcpy(&v, res[k]->p + (size_t)i * 8, 8);
			ck_assert_uint_lt(v, NPAIRS * NOPS);
			ck_assert_msg(!seen[v], "original value %llu returned twice",
				      (unsigned long long)v);
			seen[v] = 1;
		}
	}
	ck_assert_uint_eq(__atomic_load_n(&target, __ATOMIC_SEQ_CST), NPAIRS * NOPS);
	for (int k = 0; k < NPAIRS; k++) {
		ck_assert_int_eq(iwv_dereg_mr(mr[k]), 0);
		vh_pair_down(&p[k]);
	}
}
END_TEST

/*
 * Our QP has RFC 7306 on, the peer's is a plain RFC 5040 QP (the default, as
 * Linux siw): it answers the Atomic Request with an "unexpected opcode"
 * Terminate (RDMAP, Remote Operation, 0x06) and our work request completes
 * with a remote operation error; the posted receive is flushed.
 * Loop: 0 fetch-and-add, 1 write with immediate (the Immediate Data is the
 * unexpected message there).
 */
START_TEST(a_peer_without_rfc7306_terminates_and_the_wr_fails_remote_op)
{
	struct vh_pair p;
	struct vh_buf *res, *tgt, *rcv;
	struct iwv_wc wc;
	struct iwv_qp_attr qa;
	struct iwv_qp_init_attr ia;

	pair_up(&p, 1, 0, 0);
	res = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	tgt = vh_buf_new(&p, &p.s, 64, ACC_ATOMIC | IWV_ACCESS_REMOTE_WRITE);
	rcv = vh_buf_new(&p, &p.s, 64, IWV_ACCESS_LOCAL_WRITE);
	vh_post_recv(p.s.qp, 5, rcv, 0, 64);
	if (_i == 0)
		ck_assert_int_eq(
			post_atomic(p.c.qp, IWV_WR_ATOMIC_FETCH_AND_ADD, 1, res, 0, tgt, 0, 1, 0),
			0);
	else
		ck_assert_int_eq(post_imm(p.c.qp, IWV_WR_RDMA_WRITE_WITH_IMM, 1, 0, res, 8, tgt, 9),
				 0);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 1, _i == 0 ? IWV_WC_REM_OP_ERR : IWV_WC_SUCCESS,
		 _i == 0 ? IWV_WC_FETCH_ADD : IWV_WC_RDMA_WRITE);
	wc = vh_poll1(&p.w, p.s.rcq);
	vh_wc_is(&wc, 5, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV);
	ck_assert_int_eq(iwv_query_qp(p.s.qp, &qa, IWV_QP_STATE, &ia), 0);
	ck_assert_int_eq(qa.qp_state, IWV_QPS_ERR);
	ck_assert_int_eq(qa.qp_err, IW_ERDMAP_OPCODE);
	ck_assert_int_eq(ia.rfc7306, 0);
	ck_assert_int_eq(iwv_query_qp(p.c.qp, &qa, IWV_QP_STATE, &ia), 0);
	ck_assert_int_eq(ia.rfc7306, 1);
	vh_pair_down(&p);
}
END_TEST

/* Loop over the local checks of the new work requests. */
enum bad7306 {
	B_IMM_QP_OFF,	 /* a QP without RFC 7306 */
	B_ATOMIC_QP_OFF, /* the same for an atomic */
	B_ATOMIC_UNALIGNED,
	B_ATOMIC_SGE_LEN,
	B_ATOMIC_TWO_SGES,
	B_ATOMIC_INLINE,
	B_COUNT,
};

START_TEST(rfc7306_work_requests_are_checked_when_posted)
{
	struct vh_pair p;
	struct vh_buf *res, *tgt;
	struct iwv_sge sge[2];
	struct iwv_send_wr wr = {.wr_id = 1, .sg_list = sge, .num_sge = 1};
	struct iwv_send_wr *bad = NULL;
	bool on = _i != B_IMM_QP_OFF && _i != B_ATOMIC_QP_OFF;

	pair_up(&p, on, on, 0);
	res = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	tgt = vh_buf_new(&p, &p.s, 64, ACC_ATOMIC);
	sge[0] = vh_sge(res, 0, 8);
	sge[1] = vh_sge(res, 8, 8);
	wr.opcode = IWV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uint64_t)(uintptr_t)tgt->p;
	wr.wr.atomic.rkey = tgt->mr->rkey;
	switch (_i) {
	case B_IMM_QP_OFF:
		wr.opcode = IWV_WR_RDMA_WRITE_WITH_IMM;
		break;
	case B_ATOMIC_QP_OFF:
		break;
	case B_ATOMIC_UNALIGNED:
		wr.wr.atomic.remote_addr += 4;
		break;
	case B_ATOMIC_SGE_LEN:
		sge[0].length = 4;
		break;
	case B_ATOMIC_TWO_SGES:
		wr.num_sge = 2;
		break;
	default:
		wr.send_flags = IWV_SEND_INLINE;
		break;
	}
	ck_assert_int_eq(iwv_post_send(p.c.qp, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	/* Nothing was posted: the QP still works. */
	wr.opcode = IWV_WR_RDMA_WRITE;
	wr.num_sge = 1;
	wr.send_flags = IWV_SEND_SIGNALED;
	sge[0] = vh_sge(res, 0, 8);
	wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)tgt->p;
	wr.wr.rdma.rkey = tgt->mr->rkey;
	ck_assert_int_eq(iwv_post_send(p.c.qp, &wr, &bad), 0);
	{
		struct iwv_wc wc = vh_poll1(&p.w, p.c.scq);

		/* tgt has no remote-write right: a remote access error, but a completion */
		ck_assert_int_eq(wc.wr_id, 1);
	}
	vh_pair_down(&p);
}
END_TEST

/* The target lacks IWV_ACCESS_REMOTE_ATOMIC: a remote access error. */
START_TEST(atomic_on_memory_without_remote_atomic_right_is_a_remote_access_error)
{
	struct vh_pair p;
	struct vh_buf *res, *tgt;
	struct iwv_wc wc;

	pair_up(&p, 1, 1, 0);
	res = vh_buf_new(&p, &p.c, 64, IWV_ACCESS_LOCAL_WRITE);
	tgt = vh_buf_new(&p, &p.s, 64, VH_ACCESS_ALL);
	ck_assert_int_eq(post_atomic(p.c.qp, IWV_WR_ATOMIC_FETCH_AND_ADD, 1, res, 0, tgt, 0, 1, 0),
			 0);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 1, IWV_WC_REM_ACCESS_ERR, IWV_WC_FETCH_ADD);
	vh_pair_down(&p);
}
END_TEST

static Suite *rfc7306_suite(void)
{
	Suite *s = suite_create("iwv_7306");
	TCase *tc = tcase_create("rfc7306");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, device_reports_global_atomics);
	tcase_add_loop_test(tc, write_with_imm_consumes_a_receive_and_reports_the_write, 0, 6);
	tcase_add_loop_test(tc, send_with_imm_delivers_data_and_immediate, 0, 2);
	tcase_add_test(tc, fetch_add_and_compare_swap_return_the_original_value);
	tcase_add_test(tc, atomics_from_several_qps_on_one_target_add_up_exactly);
	tcase_add_loop_test(tc, a_peer_without_rfc7306_terminates_and_the_wr_fails_remote_op, 0, 2);
	tcase_add_loop_test(tc, rfc7306_work_requests_are_checked_when_posted, 0, B_COUNT);
	tcase_add_test(tc, atomic_on_memory_without_remote_atomic_right_is_a_remote_access_error);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(rfc7306_suite)
