/* SPDX-License-Identifier: MIT */
/*
 * test_iwv_mem.c - memory windows, fast registration and Local Invalidate
 * through the verbs API (iwv.h) over real loopback connections
 * (test/helpers/vh.h), once per I/O engine (meson sets IWARP_ENGINE):
 * IWV_WR_LOCAL_INV, IWV_WR_REG_MR and IWV_WR_BIND_MW end to end with the peer
 * doing RDMA Writes and Reads, the completions they give, and every bad input
 * (EINVAL, EOPNOTSUPP, EBUSY, and the failed work requests).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/iwcm.h>
#include <iwarp/iwv.h>
#include <iwarp/rdmap.h>

#include "th.h"
#include "vh.h"

#define PG  4096u
#define NPG 4

static void up(struct vh_pair *p)
{
	struct vh_cfg cfg;

	vh_cfg_default(&cfg);
	vh_pair_up(p, &cfg);
}

static struct iwv_context *open_default(void)
{
	struct iwv_device **list = iwv_get_device_list(NULL);
	struct iwv_context *ctx;

	ck_assert_ptr_nonnull(list);
	ctx = iwv_open_device(list[0]);
	ck_assert_msg(ctx != NULL, "iwv_open_device: %s", strerror(errno));
	iwv_free_device_list(list);
	return ctx;
}

static void qp_state_is(struct iwv_qp *qp, enum iwv_qp_state st)
{
	struct iwv_qp_attr a;
	struct iwv_qp_init_attr ia;

	ck_assert_int_eq(iwv_query_qp(qp, &a, IWV_QP_STATE, &ia), 0);
	ck_assert_msg(a.qp_state == st, "QP state %d, expected %d", (int)a.qp_state, (int)st);
}

static int post1(struct iwv_qp *qp, struct iwv_send_wr *wr)
{
	struct iwv_send_wr *bad = NULL;
	int rc = iwv_post_send(qp, wr, &bad);

	if (rc)
		ck_assert_ptr_eq(bad, wr);
	return rc;
}

static struct iwv_send_wr inv_wr(uint64_t wr_id, uint32_t rkey)
{
	return (struct iwv_send_wr){.wr_id = wr_id,
				    .opcode = IWV_WR_LOCAL_INV,
				    .send_flags = IWV_SEND_SIGNALED,
				    .invalidate_rkey = rkey};
}

static struct iwv_send_wr bind_wr(uint64_t wr_id, struct iwv_mw *mw, struct iwv_mr *mr, void *addr,
				  uint64_t len, unsigned int access)
{
	struct iwv_send_wr wr = {
		.wr_id = wr_id, .opcode = IWV_WR_BIND_MW, .send_flags = IWV_SEND_SIGNALED};

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = iwv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct iwv_mw_bind_info){.mr = mr,
							 .addr = (uint64_t)(uintptr_t)addr,
							 .length = len,
							 .mw_access_flags = access};
	return wr;
}

/* Pages 6, 1, 4, 3 of an 8-page buffer: none adjacent in list order. */
static const int scatter[NPG] = {6, 1, 4, 3};

static struct iwv_send_wr reg_wr(uint64_t wr_id, struct iwv_mr *mr, uint8_t key, int access,
				 uint64_t iova, const uint64_t *pages, uint32_t off, uint64_t len)
{
	struct iwv_send_wr wr = {
		.wr_id = wr_id, .opcode = IWV_WR_REG_MR, .send_flags = IWV_SEND_SIGNALED};

	wr.reg.mr = mr;
	wr.reg.key = key;
	wr.reg.access = access;
	wr.reg.iova = iova;
	wr.reg.length = len;
	wr.reg.page_list = pages;
	wr.reg.num_pages = NPG;
	wr.reg.page_size = PG;
	wr.reg.first_page_off = off;
	return wr;
}

/* One WR from b[off..off+len) to the peer's (rkey, raddr). */
static void post_rdma(struct iwv_qp *qp, enum iwv_wr_opcode op, uint64_t wr_id,
		      const struct vh_buf *b, size_t off, size_t len, uint32_t rkey, uint64_t raddr)
{
	struct iwv_sge sge = vh_sge(b, off, len);
	struct iwv_send_wr wr = {.wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IWV_SEND_SIGNALED};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ck_assert_int_eq(post1(qp, &wr), 0);
}

/*
 * From side `sd`: an RDMA Write of b[0..16) to (rkey, raddr) that the peer must
 * refuse, then a Read of the same.  The Write may complete on the wire before
 * the peer's Terminate comes back, and the Read may not have started by then
 * (it is flushed): either one of them completes with IWV_WC_REM_ACCESS_ERR, or
 * the QP's first cause is the peer's Terminate.
 */
static void expect_write_refused(struct vh_pair *p, struct vh_side *sd, const struct vh_buf *b,
				 uint32_t rkey, uint64_t raddr)
{
	struct iwv_wc wc[2];
	bool seen = false;

	post_rdma(sd->qp, IWV_WR_RDMA_WRITE, 901, b, 0, 16, rkey, raddr);
	post_rdma(sd->qp, IWV_WR_RDMA_READ, 902, b, 16, 16, rkey, raddr);
	vh_poll_wc(&p->w, sd->scq, 2, wc);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(wc[i].wr_id, 901 + (uint64_t)i);
		if (wc[i].status == IWV_WC_REM_ACCESS_ERR)
			seen = true;
		else if (i == 0 && wc[i].status == IWV_WC_SUCCESS)
			continue; /* on the wire before the Terminate came back */
		else
			ck_assert_msg(wc[i].status == IWV_WC_WR_FLUSH_ERR, "wr %d: %s", i,
				      iwv_wc_status_str(wc[i].status));
	}
	if (!seen) {
		struct iwv_qp_attr a;
		struct iwv_qp_init_attr ia;

		ck_assert_int_eq(iwv_query_qp(sd->qp, &a, IWV_QP_STATE, &ia), 0);
		ck_assert_msg(wc[0].status == IWV_WC_SUCCESS && a.qp_err == IW_ERDMAP_TERMINATED,
			      "no remote access error and QP error %s", iwv_errname(a.qp_err));
	}
	qp_state_is(sd->qp, IWV_QPS_ERR);
}

START_TEST(alloc_mw_and_alloc_mr_arguments)
{
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = iwv_alloc_pd(ctx);
	struct iwv_device_attr da;
	struct iwv_mw *mw;
	struct iwv_mr *mr;

	ck_assert_int_eq(iwv_query_device(ctx, &da), 0);
	ck_assert_int_gt(da.max_mw, 0);
	ck_assert_uint_ge(da.max_fast_reg_page_list_len, 256);
	errno = 0;
	ck_assert_ptr_null(iwv_alloc_mw(NULL, IWV_MW_TYPE_2));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(iwv_alloc_mw(pd, IWV_MW_TYPE_1));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_ptr_null(iwv_alloc_mw(pd, (enum iwv_mw_type)3));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(iwv_alloc_mr(NULL, 4));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(iwv_alloc_mr(pd, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(iwv_alloc_mr(pd, da.max_fast_reg_page_list_len + 1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(iwv_dealloc_mw(NULL), EINVAL);

	mw = iwv_alloc_mw(pd, IWV_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	ck_assert_int_eq(mw->type, IWV_MW_TYPE_2);
	ck_assert_ptr_eq(mw->pd, pd);
	mr = iwv_alloc_mr(pd, 8);
	ck_assert_ptr_nonnull(mr);
	ck_assert_uint_eq(mr->lkey, mr->rkey);
	ck_assert_uint_ne(mw->rkey >> 8, mr->rkey >> 8);
	/* the PD is in use by both */
	ck_assert_int_eq(iwv_dealloc_pd(pd), EBUSY);
	ck_assert_int_eq(iwv_dealloc_mw(mw), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), EBUSY);
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

START_TEST(reg_mr_accepts_mw_bind_and_dereg_is_ebusy_while_a_window_is_bound)
{
	struct vh_pair p;
	struct vh_buf *src, *sink, *target;
	struct iwv_mw *mw;
	struct iwv_send_wr wr;
	struct iwv_wc wc;
	uint32_t old;

	up(&p);
	src = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	sink = vh_buf_new(&p, &p.c, 4096, IWV_ACCESS_LOCAL_WRITE);
	target = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL | IWV_ACCESS_MW_BIND);
	ck_assert_ptr_nonnull(target->mr);
	memset(target->p, 0, 4096);
	mw = iwv_alloc_mw(p.s.pd, IWV_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	old = mw->rkey;
	wr = bind_wr(7, mw, target->mr, target->p + 100, 1000,
		     IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	ck_assert_uint_eq(mw->rkey, iwv_inc_rkey(old)); /* the new rkey, from the post on */
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 7, IWV_WC_SUCCESS, IWV_WC_BIND_MW);

	/* the peer writes and reads through the window */
	vh_fill(src->p, 1000, th_seed_for(301));
	post_rdma(p.c.qp, IWV_WR_RDMA_WRITE, 1, src, 0, 1000, mw->rkey,
		  (uint64_t)(uintptr_t)(target->p + 100));
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	post_rdma(p.c.qp, IWV_WR_RDMA_READ, 2, sink, 0, 1000, mw->rkey,
		  (uint64_t)(uintptr_t)(target->p + 100));
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RDMA_READ);
	vh_same(sink->p, src->p, 1000, "read back through the window");
	vh_same(target->p + 100, src->p, 1000, "written through the window");
	ck_assert_uint_eq(target->p[99], 0);
	vh_buf_guards_intact(target);

	/* the MR is busy while the window is bound; not after the window went */
	ck_assert_int_eq(iwv_dereg_mr(target->mr), EBUSY);
	ck_assert_int_eq(iwv_dealloc_mw(mw), 0);
	qp_state_is(p.c.qp, IWV_QPS_RTS);
	vh_pair_down(&p); /* deregisters target's MR */
}
END_TEST

START_TEST(local_invalidate_of_an_mr_then_the_peers_write_fails)
{
	struct vh_pair p;
	struct vh_buf *src, *target;
	struct iwv_send_wr wr;
	struct iwv_wc wc;

	up(&p);
	src = vh_buf_new(&p, &p.c, 256, IWV_ACCESS_LOCAL_WRITE);
	target = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	vh_fill(src->p, 256, th_seed_for(302));
	post_rdma(p.c.qp, IWV_WR_RDMA_WRITE, 1, src, 0, 64, target->mr->rkey,
		  (uint64_t)(uintptr_t)target->p);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	wr = inv_wr(9, target->mr->rkey);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 9, IWV_WC_SUCCESS, IWV_WC_LOCAL_INV);
	memset(target->p, 0, 64);
	expect_write_refused(&p, &p.c, src, target->mr->rkey, (uint64_t)(uintptr_t)target->p);
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(target->p[i], 0);
	vh_pair_down(&p);
}
END_TEST

START_TEST(local_invalidate_of_a_bad_rkey_fails_with_loc_qp_op_err)
{
	struct vh_pair p;
	struct vh_buf *target;
	struct iwv_send_wr wr;
	struct iwv_wc wc;

	up(&p);
	target = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL);
	wr = inv_wr(9, iwv_inc_rkey(target->mr->rkey)); /* a stale key */
	wr.send_flags = 0;				/* errors complete anyway */
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 9, IWV_WC_LOC_QP_OP_ERR, IWV_WC_LOCAL_INV);
	ck_assert_uint_ne(wc.vendor_err, 0);
	qp_state_is(p.s.qp, IWV_QPS_ERR);
	vh_pair_down(&p);
}
END_TEST

/* _i: 0 = contiguous pages, 1 = scattered pages */
START_TEST(fast_registration_over_pages_takes_the_peers_write_and_read)
{
	const uint64_t iova = 0x7000000000ull;
	const uint32_t off = 200;
	const uint64_t len = NPG * PG - off - 300;
	struct vh_pair p;
	struct vh_buf *src, *sink;
	struct iwv_mr *mr;
	uint8_t *pages_mem;
	uint64_t pages[NPG];
	struct iwv_send_wr wr;
	struct iwv_wc wc;
	uint32_t old;

	up(&p);
	pages_mem = aligned_alloc(PG, 8 * PG);
	ck_assert_ptr_nonnull(pages_mem);
	memset(pages_mem, 0, 8 * PG);
	for (int i = 0; i < NPG; i++)
		pages[i] =
			(uint64_t)(uintptr_t)(pages_mem + (size_t)(_i ? scatter[i] : i + 2) * PG);
	src = vh_buf_new(&p, &p.c, len, IWV_ACCESS_LOCAL_WRITE);
	sink = vh_buf_new(&p, &p.c, len, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, len, th_seed_for(303));
	mr = iwv_alloc_mr(p.s.pd, NPG);
	ck_assert_ptr_nonnull(mr);
	old = mr->rkey;
	/* invalid until registered: the peer's Write to it would fail, so register first */
	wr = reg_wr(5, mr, (uint8_t)(old + 9),
		    IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ, iova,
		    pages, off, len);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	ck_assert_uint_eq(mr->rkey, (old & 0xFFFFFF00u) | (uint8_t)(old + 9));
	ck_assert_uint_eq(mr->lkey, mr->rkey);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 5, IWV_WC_SUCCESS, IWV_WC_REG_MR);

	post_rdma(p.c.qp, IWV_WR_RDMA_WRITE, 1, src, 0, len, mr->rkey, iova);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
	post_rdma(p.c.qp, IWV_WR_RDMA_READ, 2, sink, 0, len, mr->rkey, iova);
	wc = vh_poll1(&p.w, p.c.scq);
	vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_RDMA_READ);
	vh_same(sink->p, src->p, len, "read back from the fast-registered pages");
	for (uint64_t k = 0; k < len; k++) {
		uint64_t pos = off + k;
		uint8_t *h = (uint8_t *)(uintptr_t)pages[pos / PG] + pos % PG;

		ck_assert_uint_eq(*h, src->p[k]);
	}

	/* invalidate and register again with another key: the old rkey is refused */
	wr = inv_wr(6, mr->rkey);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	old = mr->rkey;
	wr = reg_wr(7, mr, (uint8_t)(old + 1), IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE,
		    iova, pages, off, len);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 6, IWV_WC_SUCCESS, IWV_WC_LOCAL_INV);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 7, IWV_WC_SUCCESS, IWV_WC_REG_MR);
	expect_write_refused(&p, &p.c, src, old, iova);
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	vh_pair_down(&p);
	free(pages_mem);
}
END_TEST

START_TEST(fast_registration_of_a_valid_mr_fails_with_loc_qp_op_err)
{
	struct vh_pair p;
	struct iwv_mr *mr;
	uint8_t *pages_mem = aligned_alloc(PG, NPG * PG);
	uint64_t pages[NPG];
	struct iwv_send_wr wr;
	struct iwv_wc wc;

	ck_assert_ptr_nonnull(pages_mem);
	for (int i = 0; i < NPG; i++)
		pages[i] = (uint64_t)(uintptr_t)(pages_mem + (size_t)i * PG);
	up(&p);
	mr = iwv_alloc_mr(p.s.pd, NPG);
	ck_assert_ptr_nonnull(mr);
	wr = reg_wr(1, mr, 1, IWV_ACCESS_LOCAL_WRITE, 0, pages, 0, PG);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	wr = reg_wr(2, mr, 2, IWV_ACCESS_LOCAL_WRITE, 0, pages, 0, PG);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_REG_MR);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 2, IWV_WC_LOC_QP_OP_ERR, IWV_WC_REG_MR);
	qp_state_is(p.s.qp, IWV_QPS_ERR);
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	vh_pair_down(&p);
	free(pages_mem);
}
END_TEST

/* _i: 0 = through the binding QP's peer (works), 1 = through another connection (stream
 * Terminate), 2 = after the peer's Send with Invalidate (invalid STag), 3 = after a Local
 * Invalidate */
START_TEST(memory_window_is_bound_to_its_qp)
{
	struct vh_pair p;
	struct vh_buf *src, *target, *rcv;
	struct iwv_mw *mw;
	struct iwv_send_wr wr;
	struct iwv_wc wc;
	struct iwv_sge sge;
	uint64_t raddr;

	up(&p);
	src = vh_buf_new(&p, &p.c, 256, IWV_ACCESS_LOCAL_WRITE);
	target = vh_buf_new(&p, &p.s, 4096, VH_ACCESS_ALL | IWV_ACCESS_MW_BIND);
	rcv = vh_buf_new(&p, &p.s, 256, IWV_ACCESS_LOCAL_WRITE);
	vh_fill(src->p, 256, th_seed_for(304));
	mw = iwv_alloc_mw(p.s.pd, IWV_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	wr = bind_wr(3, mw, target->mr, target->p, 512, IWV_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 3, IWV_WC_SUCCESS, IWV_WC_BIND_MW);
	raddr = (uint64_t)(uintptr_t)target->p;

	if (_i == 0) {
		post_rdma(p.c.qp, IWV_WR_RDMA_WRITE, 1, src, 0, 256, mw->rkey, raddr + 256);
		wc = vh_poll1(&p.w, p.c.scq);
		vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
		/* a Send after it: the Write has been placed when the Send arrives */
		vh_post_recv(p.s.qp, 50, rcv, 0, 256);
		vh_post_send(p.c.qp, IWV_WR_SEND, 2, IWV_SEND_SIGNALED, src, 0, 1, NULL, 0);
		wc = vh_poll1(&p.w, p.s.rcq);
		vh_wc_is(&wc, 50, IWV_WC_SUCCESS, IWV_WC_RECV);
		wc = vh_poll1(&p.w, p.c.scq);
		vh_wc_is(&wc, 2, IWV_WC_SUCCESS, IWV_WC_SEND);
		vh_same(target->p + 256, src->p, 256, "write through the window");
		/* 497 + 16 > 512: past the window */
		expect_write_refused(&p, &p.c, src, mw->rkey, raddr + 497);
	} else if (_i == 1) {
		post_rdma(p.c.qp, IWV_WR_RDMA_WRITE, 1, src, 0, 16, mw->rkey, raddr);
		wc = vh_poll1(&p.w, p.c.scq);
		vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_RDMA_WRITE);
		/* The server names its own window to the client: it arrives on the
		 * client's QP, which is not the stream it is bound to (nor its PD: the
		 * pair's sides have their own PDs; test_rdmap_mem covers one PD). */
		expect_write_refused(&p, &p.s, target, mw->rkey, raddr);
	} else if (_i == 2) {
		vh_post_recv(p.s.qp, 50, rcv, 0, 256);
		sge = vh_sge(src, 0, 16);
		wr = (struct iwv_send_wr){.wr_id = 1,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IWV_WR_SEND_WITH_INV,
					  .send_flags = IWV_SEND_SIGNALED,
					  .invalidate_rkey = mw->rkey};
		ck_assert_int_eq(post1(p.c.qp, &wr), 0);
		wc = vh_poll1(&p.w, p.s.rcq);
		vh_wc_is(&wc, 50, IWV_WC_SUCCESS, IWV_WC_RECV);
		ck_assert(wc.wc_flags & IWV_WC_WITH_INV);
		ck_assert_uint_eq(wc.invalidated_rkey, mw->rkey);
		wc = vh_poll1(&p.w, p.c.scq);
		vh_wc_is(&wc, 1, IWV_WC_SUCCESS, IWV_WC_SEND);
		/* unbound: the MR is no longer busy (checked by vh_pair_down after the dealloc) */
		expect_write_refused(&p, &p.c, src, mw->rkey, raddr);
	} else {
		wr = inv_wr(4, mw->rkey);
		ck_assert_int_eq(post1(p.s.qp, &wr), 0);
		wc = vh_poll1(&p.w, p.s.scq);
		vh_wc_is(&wc, 4, IWV_WC_SUCCESS, IWV_WC_LOCAL_INV);
		expect_write_refused(&p, &p.c, src, mw->rkey, raddr);
	}
	ck_assert_int_eq(iwv_dealloc_mw(mw), 0);
	vh_pair_down(&p);
}
END_TEST

/* _i: the bad input (see the switch) */
enum bad_mem {
	BAD_INV_INLINE,
	BAD_BIND_NO_MW,
	BAD_BIND_SAME_RKEY,
	BAD_BIND_OTHER_INDEX,
	BAD_BIND_NO_MR,
	BAD_BIND_LOCAL_ACCESS,
	BAD_BIND_OTHER_PD,
	BAD_REG_NO_MR,
	BAD_REG_NO_PAGES,
	BAD_REG_ZERO_PAGES,
	BAD_REG_PAGE_SIZE,
	BAD_REG_SMALL_PAGE,
	BAD_REG_FIRST_OFF,
	BAD_REG_TOO_LONG,
	BAD_REG_WRAP,
	BAD_REG_ACCESS_UNKNOWN,
	BAD_REG_REMOTE_WRITE_ONLY,
	BAD_REG_ATOMIC,
	BAD_REG_PLAIN_MR,
	BAD_REG_TOO_MANY_PAGES,
	BAD_REG_OTHER_PD,
	BAD_MEM_COUNT,
};

START_TEST(bad_memory_work_requests_are_refused_at_post)
{
	struct iwv_context *ctx = open_default();
	struct iwv_pd *pd = iwv_alloc_pd(ctx), *pd2 = iwv_alloc_pd(ctx);
	struct iwv_cq *cq = iwv_create_cq(ctx, 64, NULL, NULL, 0);
	struct iwv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IWV_QPT_RC};
	struct iwv_qp *qp;
	static uint8_t buf[8192] __attribute__((aligned(4096)));
	struct iwv_mr *mr, *mr2, *fr;
	struct iwv_mw *mw, *mw2;
	uint64_t pages[NPG + 1];
	uint32_t mr_rkey, fr_rkey, mw_rkey;
	struct iwv_send_wr wr;
	int want = EINVAL, rc;

	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qp = iwv_create_qp(pd, &qa);
	ck_assert_ptr_nonnull(qp);
	mr = iwv_reg_mr(pd, buf, sizeof(buf), VH_ACCESS_ALL | IWV_ACCESS_MW_BIND);
	mr2 = iwv_reg_mr(pd2, buf, sizeof(buf), VH_ACCESS_ALL | IWV_ACCESS_MW_BIND);
	fr = iwv_alloc_mr(pd, NPG);
	mw = iwv_alloc_mw(pd, IWV_MW_TYPE_2);
	mw2 = iwv_alloc_mw(pd2, IWV_MW_TYPE_2);
	ck_assert(mr && mr2 && fr && mw && mw2);
	mr_rkey = mr->rkey;
	fr_rkey = fr->rkey;
	mw_rkey = mw->rkey;
	for (int i = 0; i <= NPG; i++)
		pages[i] = (uint64_t)(uintptr_t)buf;
	wr = bind_wr(1, mw, mr, buf, 64, IWV_ACCESS_REMOTE_READ);
	if (_i >= BAD_REG_NO_MR)
		wr = reg_wr(1, fr, 3, IWV_ACCESS_LOCAL_WRITE, 0, pages, 0, PG);
	switch (_i) {
	case BAD_INV_INLINE:
		wr = inv_wr(1, mr->rkey);
		wr.send_flags |= IWV_SEND_INLINE;
		break;
	case BAD_BIND_NO_MW:
		wr.bind_mw.mw = NULL;
		break;
	case BAD_BIND_SAME_RKEY:
		wr.bind_mw.rkey = mw->rkey;
		break;
	case BAD_BIND_OTHER_INDEX:
		wr.bind_mw.rkey = mw->rkey + 0x100;
		break;
	case BAD_BIND_NO_MR:
		wr.bind_mw.bind_info.mr = NULL;
		break;
	case BAD_BIND_LOCAL_ACCESS:
		wr.bind_mw.bind_info.mw_access_flags = IWV_ACCESS_LOCAL_WRITE;
		break;
	case BAD_BIND_OTHER_PD:
		wr.bind_mw.mw = mw2;
		wr.bind_mw.rkey = iwv_inc_rkey(mw2->rkey);
		break;
	case BAD_REG_NO_MR:
		wr.reg.mr = NULL;
		break;
	case BAD_REG_NO_PAGES:
		wr.reg.page_list = NULL;
		break;
	case BAD_REG_ZERO_PAGES:
		wr.reg.num_pages = 0;
		break;
	case BAD_REG_PAGE_SIZE:
		wr.reg.page_size = 3 * 4096;
		break;
	case BAD_REG_SMALL_PAGE:
		wr.reg.page_size = 2048;
		break;
	case BAD_REG_FIRST_OFF:
		wr.reg.first_page_off = PG;
		break;
	case BAD_REG_TOO_LONG:
		wr.reg.first_page_off = 1;
		wr.reg.length = NPG * PG;
		break;
	case BAD_REG_WRAP:
		wr.reg.iova = UINT64_MAX - 10;
		break;
	case BAD_REG_ACCESS_UNKNOWN:
		wr.reg.access = 1 << 12;
		break;
	case BAD_REG_REMOTE_WRITE_ONLY:
		wr.reg.access = IWV_ACCESS_REMOTE_WRITE;
		break;
	case BAD_REG_ATOMIC: /* remote atomic needs local write, as in iwv_reg_mr */
		wr.reg.access = IWV_ACCESS_REMOTE_ATOMIC;
		break;
	case BAD_REG_PLAIN_MR:
		wr.reg.mr = mr; /* of iwv_reg_mr: its keys must not change */
		break;
	case BAD_REG_TOO_MANY_PAGES:
		wr.reg.num_pages = NPG + 1;
		break;
	default:
		wr.reg.mr = mr2;
		break;
	}
	rc = post1(qp, &wr);
	ck_assert_msg(rc == want, "case %d: post returned %d (%s)", _i, rc, strerror(rc));
	/* nothing changed behind the refusal, and the QP still takes work */
	ck_assert_uint_eq(fr->rkey, fr->lkey);
	ck_assert_uint_eq(fr->rkey, fr_rkey);
	ck_assert_uint_eq(mr->rkey, mr_rkey);
	ck_assert_uint_eq(mr->lkey, mr_rkey);
	ck_assert_uint_eq(mw->rkey, mw_rkey);
	wr = inv_wr(2, mr->rkey);
	ck_assert_int_eq(post1(qp, &wr), 0);
	qp_state_is(qp, IWV_QPS_INIT);
	ck_assert_int_eq(iwv_destroy_qp(qp), 0); /* flushes the Local Invalidate */
	ck_assert_int_eq(iwv_destroy_cq(cq), 0);
	ck_assert_int_eq(iwv_dealloc_mw(mw), 0);
	ck_assert_int_eq(iwv_dealloc_mw(mw2), 0);
	ck_assert_int_eq(iwv_dereg_mr(fr), 0);
	ck_assert_int_eq(iwv_dereg_mr(mr), 0);
	ck_assert_int_eq(iwv_dereg_mr(mr2), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd), 0);
	ck_assert_int_eq(iwv_dealloc_pd(pd2), 0);
	ck_assert_int_eq(iwv_close_device(ctx), 0);
}
END_TEST

/* _i: 0 = an MR without IWV_ACCESS_MW_BIND, 1 = a range beyond the MR */
START_TEST(bind_failing_in_the_table_completes_with_mw_bind_err)
{
	struct vh_pair p;
	struct vh_buf *target;
	struct iwv_mw *mw;
	struct iwv_send_wr wr;
	struct iwv_wc wc;

	up(&p);
	target =
		vh_buf_new(&p, &p.s, 4096, _i ? VH_ACCESS_ALL | IWV_ACCESS_MW_BIND : VH_ACCESS_ALL);
	mw = iwv_alloc_mw(p.s.pd, IWV_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	wr = bind_wr(3, mw, target->mr, target->p + (_i ? 4000 : 0), 512, IWV_ACCESS_REMOTE_READ);
	ck_assert_int_eq(post1(p.s.qp, &wr), 0);
	wc = vh_poll1(&p.w, p.s.scq);
	vh_wc_is(&wc, 3, IWV_WC_MW_BIND_ERR, IWV_WC_BIND_MW);
	qp_state_is(p.s.qp, IWV_QPS_ERR);
	ck_assert_int_eq(iwv_dealloc_mw(mw), 0);
	vh_pair_down(&p);
}
END_TEST

static Suite *mem_suite(void)
{
	Suite *s = suite_create("iwv_mem");
	TCase *tc = tcase_create("mem");

	suite_add_tcase(s, tc);
	tcase_add_test(tc, alloc_mw_and_alloc_mr_arguments);
	tcase_add_test(tc, reg_mr_accepts_mw_bind_and_dereg_is_ebusy_while_a_window_is_bound);
	tcase_add_test(tc, local_invalidate_of_an_mr_then_the_peers_write_fails);
	tcase_add_test(tc, local_invalidate_of_a_bad_rkey_fails_with_loc_qp_op_err);
	tcase_add_loop_test(tc, fast_registration_over_pages_takes_the_peers_write_and_read, 0, 2);
	tcase_add_test(tc, fast_registration_of_a_valid_mr_fails_with_loc_qp_op_err);
	tcase_add_loop_test(tc, memory_window_is_bound_to_its_qp, 0, 4);
	tcase_add_loop_test(tc, bad_memory_work_requests_are_refused_at_post, 0, BAD_MEM_COUNT);
	tcase_add_loop_test(tc, bind_failing_in_the_table_completes_with_mw_bind_err, 0, 2);
	return s;
}

TH_MAIN(mem_suite)
