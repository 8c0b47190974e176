/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_mem.c - the QP's local memory operations over two back-to-back
 * stacks (b2b.h): Local Invalidate (then the peer's Write gets the invalid
 * STag Terminate; bad STags fail the WR and the QP), fast registration over
 * scattered pages (the peer's Write, Read and Send land octet for octet, our
 * own Send gathers from them, the old key is refused), type-2 memory windows
 * (usable by the peer of the QP that bound them, refused through another QP
 * with the stream Terminates, invalidated by a Send with Invalidate) and bind
 * errors.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/ddp.h>
#include <iwarp/rdmap_qp.h>

#include "b2b.h"
#include "iw_bytes.h"
#include "th.h"

#define PG  4096u
#define NPG 4
#define RWL (DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ)

static void assert_wc(const struct rdmap_wc *wc, uint64_t wr_id, enum rdmap_wc_opcode op)
{
	ck_assert_msg(wc->status == RDMAP_WC_SUCCESS, "wr %llu status %d err %d",
		      (unsigned long long)wc->wr_id, wc->status, wc->err);
	ck_assert_uint_eq(wc->wr_id, wr_id);
	ck_assert_int_eq(wc->opcode, op);
}

static void assert_term(const struct rdmap_term *t, unsigned layer, unsigned etype, unsigned ecode)
{
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->code.layer, layer);
	ck_assert_uint_eq(t->code.etype, etype);
	ck_assert_uint_eq(t->code.ecode, ecode);
}

static void flush_both(struct b2b *b)
{
	struct rdmap_wc wc;

	for (int i = 0; i < 2; i++) {
		rdmap_qp_flush(b->qp[i]);
		while (rdmap_qp_poll(b->qp[i], &wc, 1) == 1)
			;
	}
}

static int post_local(struct b2b *b, int side, const struct rdmap_send_wr *wr)
{
	return rdmap_qp_post_send(b->qp[side], wr);
}

static int post_inv(struct b2b *b, int side, uint64_t wr_id, uint32_t stag)
{
	struct rdmap_send_wr wr = {.wr_id = wr_id,
				   .opcode = RDMAP_WR_LOCAL_INV,
				   .flags = RDMAP_WR_SIGNALED,
				   .invalidate_stag = stag};

	return post_local(b, side, &wr);
}

static int post_bind(struct b2b *b, int side, uint64_t wr_id, uint32_t mw, uint32_t mr,
		     uint64_t addr, uint64_t len, uint32_t access)
{
	struct rdmap_send_wr wr = {
		.wr_id = wr_id,
		.opcode = RDMAP_WR_BIND_MW,
		.flags = RDMAP_WR_SIGNALED,
		.bind_mw = {.mw_stag = mw,
			    .mr_stag = mr,
			    .addr = addr,
			    .length = len,
			    .access = access},
	};

	return post_local(b, side, &wr);
}

static uint32_t nk(uint32_t s, int d)
{
	return DDP_STAG_MAKE(DDP_STAG_INDEX(s), DDP_STAG_KEY(s) + d);
}

START_TEST(local_inv_then_peer_write_gets_the_invalid_stag_terminate)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t s[32], v[64];
	uint32_t ls, lv;
	struct rdmap_wc wc;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	memset(s, 0x22, sizeof(s));
	memset(v, 0, sizeof(v));
	ls = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	lv = b2b_reg(b, B2B_B, v, sizeof(v), DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 1, s, 8, ls, lv,
				       (uintptr_t)v),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 1, RDMAP_WC_RDMA_WRITE);
	ck_assert_uint_eq(v[7], 0x22);
	/* B invalidates its own STag: nothing on the wire, a LOCAL_INV completion */
	ck_assert_int_eq(post_inv(b, B2B_B, 7, lv), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 7, RDMAP_WC_LOCAL_INV);
	ck_assert_uint_eq(b->segs[B2B_B][RDMAP_OP_SEND], 0);
	/* again: idempotent */
	ck_assert_int_eq(post_inv(b, B2B_B, 8, lv), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 8, RDMAP_WC_LOCAL_INV);
	memset(v, 0, sizeof(v));
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 2, s, 8, ls, lv, (uintptr_t)v),
			 IW_OK);
	b2b_pump(b);
	ck_assert_uint_eq(v[0], 0);
	assert_term(rdmap_qp_term_received(b->qp[B2B_A]), 1, 1, 0);
	flush_both(b);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_B, lv);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

START_TEST(local_inv_completes_in_send_queue_order_and_unsignalled_is_silent)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t s[16];
	uint32_t ls, lx;
	struct rdmap_wc wc[4];
	struct rdmap_send_wr wr = {.wr_id = 2, .opcode = RDMAP_WR_LOCAL_INV};
	uint8_t r[16];
	uint32_t lr;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	ls = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	lx = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_REMOTE_READ);
	lr = b2b_reg(b, B2B_B, r, sizeof(r), DDP_ACCESS_LOCAL_WRITE);
	memset(s, 3, sizeof(s));
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 50, r, sizeof(r), lr), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 1, s, 16, ls),
			 IW_OK);
	wr.invalidate_stag = lx;
	ck_assert_int_eq(post_local(b, B2B_A, &wr), IW_OK); /* unsignalled */
	wr.wr_id = 3;
	wr.flags = RDMAP_WR_SIGNALED | RDMAP_WR_FENCE;
	ck_assert_int_eq(post_local(b, B2B_A, &wr), IW_OK);
	ck_assert_int_eq(b2b_drain(b, B2B_A, wc, 4), 2);
	assert_wc(&wc[0], 1, RDMAP_WC_SEND);
	assert_wc(&wc[1], 3, RDMAP_WC_LOCAL_INV);
	ck_assert_int_eq(b2b_drain(b, B2B_B, wc, 4), 1);
	assert_wc(&wc[0], 50, RDMAP_WC_RECV);
	ck_assert_int_eq(ddp_stag_check(b->stags[B2B_A], lx, o.pd[B2B_A], 0, (uintptr_t)s, 1, NULL),
			 DDP_STAG_INVALID);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_A, lx);
	b2b_dereg(b, B2B_B, lr);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* _i: 0 = unknown STag, 1 = wrong key, 2 = another PD's STag */
START_TEST(local_inv_of_a_bad_stag_fails_the_wr_and_the_qp)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t v[16];
	uint32_t lv, stag;
	struct rdmap_wc wc[4];

	b2b_opts_default(&o);
	b = b2b_create(&o);
	lv = b2b_reg(b, B2B_B, v, sizeof(v), DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_LOCAL_WRITE);
	if (_i == 0)
		stag = DDP_STAG_MAKE(900, 1);
	else if (_i == 1)
		stag = nk(lv, 1);
	else
		ck_assert_int_eq(ddp_stag_reg(b->stags[B2B_B], 99, v, (uintptr_t)v, sizeof(v),
					      DDP_ACCESS_REMOTE_WRITE, &stag),
				 IW_OK);
	ck_assert_int_eq(post_inv(b, B2B_B, 5, stag), IW_OK);
	ck_assert_int_eq(post_inv(b, B2B_B, 6, lv), IW_OK); /* flushed behind it */
	ck_assert_int_eq(b2b_drain(b, B2B_B, wc, 4), 2);
	ck_assert_uint_eq(wc[0].wr_id, 5);
	ck_assert_int_eq(wc[0].status, RDMAP_WC_LOC_QP_OP_ERR);
	ck_assert_int_eq(wc[0].opcode, RDMAP_WC_LOCAL_INV);
	ck_assert_uint_eq(wc[1].wr_id, 6);
	ck_assert_int_eq(wc[1].status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_B]), RDMAP_QP_ERROR);
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_B]), IW_ERDMAP_LOCAL);
	/* the culprit was not invalidated behind our back */
	ck_assert_int_eq(ddp_stag_check(b->stags[B2B_B], lv, o.pd[B2B_B], 0, (uintptr_t)v, 1, NULL),
			 DDP_STAG_OK);
	flush_both(b);
	if (_i == 2)
		ck_assert_int_eq(ddp_stag_dereg(b->stags[B2B_B], stag), IW_OK);
	b2b_dereg(b, B2B_B, lv);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

START_TEST(post_send_refuses_unknown_opcodes_but_takes_local_ones)
{
	struct b2b_opts o;
	struct b2b *b;
	struct rdmap_send_wr wr = {.opcode = (enum rdmap_wr_opcode)(RDMAP_WR_OPCODE_MAX + 1)};
	struct rdmap_wc wc;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	ck_assert_int_eq(rdmap_qp_post_send(b->qp[B2B_A], &wr), IW_EINVAL);
	/* a fast registration of an STag that is not one fails at processing */
	wr.opcode = RDMAP_WR_FAST_REG;
	wr.flags = RDMAP_WR_SIGNALED;
	wr.fast_reg.stag = DDP_STAG_MAKE(5, 5);
	ck_assert_int_eq(rdmap_qp_post_send(b->qp[B2B_A], &wr), IW_OK);
	ck_assert_int_eq(b2b_drain(b, B2B_A, &wc, 1), 1);
	ck_assert_int_eq(wc.status, RDMAP_WC_LOC_QP_OP_ERR);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_FAST_REG);
	flush_both(b);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

/* Pages 6, 1, 4, 3 of an 8-page buffer: none adjacent in list order. */
static const int scatter[NPG] = {6, 1, 4, 3};

struct fr_fix {
	uint8_t *mem; /* 8 pages */
	uint64_t pages[NPG];
	uint32_t off;
	uint64_t len;
	uint32_t alloc_stag, stag;
};

static uint8_t *fr_host(const struct fr_fix *f, uint64_t k)
{
	uint64_t pos = f->off + k;

	return f->mem + (size_t)scatter[pos / PG] * PG + pos % PG;
}

/* Allocate a fast-registration STag on `side` and register it over scattered pages. */
static void fr_setup(struct b2b *b, int side, struct fr_fix *f, uint32_t access, uint64_t iova)
{
	struct rdmap_send_wr wr = {
		.wr_id = 77, .opcode = RDMAP_WR_FAST_REG, .flags = RDMAP_WR_SIGNALED};
	struct rdmap_wc wc;

	f->mem = aligned_alloc(PG, 8 * PG);
	ck_assert_ptr_nonnull(f->mem);
	memset(f->mem, 0, 8 * PG);
	f->off = 300;
	f->len = NPG * PG - f->off - 100;
	for (int i = 0; i < NPG; i++)
		f->pages[i] = (uint64_t)(uintptr_t)(f->mem + (size_t)scatter[i] * PG);
	ck_assert_int_eq(ddp_stag_alloc(b->stags[side], b->opts.pd[side], NPG, &f->alloc_stag),
			 IW_OK);
	f->stag = nk(f->alloc_stag, 0x55);
	wr.fast_reg = (struct rdmap_fast_reg){.stag = f->stag,
					      .access = access,
					      .iova = iova,
					      .length = f->len,
					      .pages = f->pages,
					      .npages = NPG,
					      .page_size = PG,
					      .first_page_off = f->off};
	ck_assert_int_eq(rdmap_qp_post_send(b->qp[side], &wr), IW_OK);
	ck_assert_int_eq(b2b_wait(b, side, &wc), 1);
	assert_wc(&wc, 77, RDMAP_WC_FAST_REG);
}

static void fr_teardown(struct b2b *b, int side, struct fr_fix *f)
{
	ck_assert_int_eq(ddp_stag_free_index(b->stags[side], f->alloc_stag), IW_OK);
	free(f->mem);
}

/* _i: the split policy */
START_TEST(fast_reg_scattered_pages_take_write_read_and_send)
{
	const uint64_t iova = 0xABC0000000ull;
	struct b2b_opts o;
	struct b2b *b;
	struct fr_fix f;
	uint8_t *src, *back;
	uint32_t lsrc, lback, lhead;
	uint8_t head[10];
	struct rdmap_wc wc;
	struct rdmap_recv_wr rwr = {.wr_id = 300, .num_sge = 2};
	size_t n;

	b2b_opts_default(&o);
	o.split = (enum b2b_split)_i;
	o.markers_ab = true;
	b = b2b_create(&o);
	fr_setup(b, B2B_B, &f, RWL, iova);
	n = (size_t)f.len;
	src = malloc(n);
	back = calloc(1, n);
	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(back);
	th_rng_fill(&b->rng, src, n);
	lsrc = b2b_reg(b, B2B_A, src, n, DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_READ);
	lback = b2b_reg(b, B2B_A, back, n, DDP_ACCESS_LOCAL_WRITE);

	/* the peer's Write lands in the scattered pages */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 1, src,
				       (uint32_t)n, lsrc, f.stag, iova),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 1, RDMAP_WC_RDMA_WRITE);
	b2b_pump(b);
	for (size_t k = 0; k < n; k++)
		ck_assert_uint_eq(*fr_host(&f, k), src[k]);
	/* the peer's Read gathers them back (Read Response source) from an odd offset */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 2, back + 5,
				       (uint32_t)n - 5, lback, f.stag, iova + 5),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 2, RDMAP_WC_RDMA_READ);
	ck_assert(memcmp(back + 5, src + 5, n - 5) == 0);

	/* the peer's Send into a receive whose second SGE is the scattered region */
	memset(f.mem, 0, 8 * PG);
	th_rng_fill(&b->rng, src, n);
	lhead = b2b_reg(b, B2B_B, head, sizeof(head), DDP_ACCESS_LOCAL_WRITE);
	rwr.sg[0] = (struct rdmap_sge){(uintptr_t)head, sizeof(head), lhead};
	rwr.sg[1] = (struct rdmap_sge){iova, (uint32_t)n - 10, f.stag};
	ck_assert_int_eq(rdmap_qp_post_recv(b->qp[B2B_B], &rwr), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 3, src,
				       (uint32_t)n, lsrc),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 300, RDMAP_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, n);
	ck_assert(memcmp(head, src, 10) == 0);
	for (size_t k = 10; k < n; k++)
		ck_assert_uint_eq(*fr_host(&f, k - 10), src[k]);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 3, RDMAP_WC_SEND);

	/* our own Send gathers from the scattered region (source SGE) */
	memset(back, 0, n);
	ck_assert_int_eq(b2b_post_recv(b, B2B_A, 400, back, (uint32_t)n, lback), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_B, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 4,
				       (void *)(uintptr_t)(iova + 1), (uint32_t)n - 1, f.stag),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 400, RDMAP_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, n - 1);
	for (size_t k = 1; k < n; k++)
		ck_assert_uint_eq(back[k - 1], *fr_host(&f, k));
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 4, RDMAP_WC_SEND);

	/* our own Read with the scattered region as its sink (Read Responses placed) */
	memset(f.mem, 0, 8 * PG);
	th_rng_fill(&b->rng, src, n);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_B, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 5,
				       (void *)(uintptr_t)(iova + 3), (uint32_t)n - 3, f.stag, lsrc,
				       (uintptr_t)src),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 5, RDMAP_WC_RDMA_READ);
	for (size_t k = 3; k < n; k++)
		ck_assert_uint_eq(*fr_host(&f, k), src[k - 3]);
	ck_assert_uint_eq(*fr_host(&f, 2), 0);

	b2b_dereg(b, B2B_A, lsrc);
	b2b_dereg(b, B2B_A, lback);
	b2b_dereg(b, B2B_B, lhead);
	fr_teardown(b, B2B_B, &f);
	free(src);
	free(back);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

static void fr_post(struct b2b *b, int side, uint64_t wr_id, const struct fr_fix *f, uint32_t stag,
		    uint64_t iova)
{
	struct rdmap_send_wr wr = {
		.wr_id = wr_id, .opcode = RDMAP_WR_FAST_REG, .flags = RDMAP_WR_SIGNALED};

	wr.fast_reg = (struct rdmap_fast_reg){.stag = stag,
					      .access = RWL,
					      .iova = iova,
					      .length = f->len,
					      .pages = f->pages,
					      .npages = NPG,
					      .page_size = PG,
					      .first_page_off = f->off};
	ck_assert_int_eq(rdmap_qp_post_send(b->qp[side], &wr), IW_OK);
}

START_TEST(fast_reg_rotates_the_key_and_the_old_stag_is_refused)
{
	struct b2b_opts o;
	struct b2b *b;
	struct fr_fix f;
	uint8_t s[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint32_t ls;
	struct rdmap_wc wc;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	fr_setup(b, B2B_B, &f, RWL, 0x1000);
	ls = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 1, s, 8, ls,
				       f.stag, 0x1000),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 1, RDMAP_WC_RDMA_WRITE);
	ck_assert_uint_eq(*fr_host(&f, 7), 8);
	/* invalidate, register again with the next key (and another iova) */
	ck_assert_int_eq(post_inv(b, B2B_B, 2, f.stag), IW_OK);
	fr_post(b, B2B_B, 3, &f, nk(f.stag, 1), 0x2000);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 2, RDMAP_WC_LOCAL_INV);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 3, RDMAP_WC_FAST_REG);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 4, s, 8, ls,
				       nk(f.stag, 1), 0x2000 + 100),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 4, RDMAP_WC_RDMA_WRITE);
	ck_assert_uint_eq(*fr_host(&f, 100), 1);
	/* the old key (and the allocation's key) name nothing any more */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 5, s, 8, ls, f.stag, 0x2000),
			 IW_OK);
	b2b_pump(b);
	assert_term(rdmap_qp_term_received(b->qp[B2B_A]), 1, 1, 0);
	flush_both(b);
	b2b_dereg(b, B2B_A, ls);
	fr_teardown(b, B2B_B, &f);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

START_TEST(fast_reg_of_a_valid_stag_fails_the_wr)
{
	struct b2b_opts o;
	struct b2b *b;
	struct fr_fix f;
	struct rdmap_wc wc;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	fr_setup(b, B2B_B, &f, RWL, 0x1000);
	fr_post(b, B2B_B, 9, &f, nk(f.stag, 1), 0);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 9);
	ck_assert_int_eq(wc.status, RDMAP_WC_LOC_QP_OP_ERR);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_FAST_REG);
	ck_assert_int_ne(rdmap_qp_state(b->qp[B2B_B]), RDMAP_QP_RTS);
	/* the registration in force is untouched */
	ck_assert_int_eq(ddp_stag_check(b->stags[B2B_B], f.stag, o.pd[B2B_B], 0, 0x1000, 1, NULL),
			 DDP_STAG_OK);
	flush_both(b);
	fr_teardown(b, B2B_B, &f);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

/* Both QPs on one STag table and one PD: B's window, named through either QP. */
static struct b2b *mw_pair(void)
{
	struct b2b_opts o;
	struct b2b *b;

	b2b_opts_default(&o);
	o.shared_stags = true;
	o.pd[0] = o.pd[1] = 5;
	b = b2b_create(&o);
	/* A zero-length Write (nothing checked) opens the stream for the responder B
	 * (RFC 5044 §7.1.2: the initiator sends first). */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 999, NULL, 0, 0, 0, 0), IW_OK);
	b2b_pump(b);
	return b;
}

struct mw_fix {
	uint8_t buf[256];
	uint32_t mr, mw, key;
};

/* B: an MR over buf with MW_BIND, a window bound to buf[16..16+64) on B's QP. */
static void mw_setup(struct b2b *b, struct mw_fix *m, uint32_t access)
{
	struct rdmap_wc wc;

	memset(m->buf, 0, sizeof(m->buf));
	m->mr = b2b_reg(b, B2B_B, m->buf, sizeof(m->buf), RWL | DDP_ACCESS_MW_BIND);
	ck_assert_int_eq(ddp_stag_alloc_mw(b->stags[B2B_B], 5, &m->mw), IW_OK);
	m->key = nk(m->mw, 1);
	ck_assert_int_eq(
		post_bind(b, B2B_B, 20, m->key, m->mr, (uintptr_t)(m->buf + 16), 64, access),
		IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 20, RDMAP_WC_BIND_MW);
}

static void mw_teardown(struct b2b *b, struct mw_fix *m)
{
	ck_assert_int_eq(ddp_stag_free_index(b->stags[B2B_B], m->mw), IW_OK);
	b2b_dereg(b, B2B_B, m->mr);
}

START_TEST(mw_works_for_the_peer_of_the_binding_qp)
{
	struct b2b *b = mw_pair();
	struct mw_fix m;
	uint8_t s[64], r[64];
	uint32_t ls, lr;
	struct rdmap_wc wc;

	mw_setup(b, &m, DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ);
	memset(s, 0x5C, sizeof(s));
	memset(r, 0, sizeof(r));
	ls = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	lr = b2b_reg(b, B2B_A, r, sizeof(r), DDP_ACCESS_LOCAL_WRITE);
	/* the allocation's key is not the window's STag */
	ck_assert_int_eq(ddp_stag_resolve(b->stags[B2B_B], m.mw, 5, b->cfg[B2B_B].stream, 0,
					  (uintptr_t)(m.buf + 16), 1, NULL),
			 DDP_STAG_INVALID);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 1, s, 64, ls,
				       m.key, (uintptr_t)(m.buf + 16)),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 1, RDMAP_WC_RDMA_WRITE);
	ck_assert_uint_eq(m.buf[15], 0);
	ck_assert_uint_eq(m.buf[16], 0x5C);
	ck_assert_uint_eq(m.buf[79], 0x5C);
	ck_assert_uint_eq(m.buf[80], 0);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 2, r, 32, lr,
				       m.key, (uintptr_t)(m.buf + 48)),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 2, RDMAP_WC_RDMA_READ);
	ck_assert(memcmp(r, s, 32) == 0);
	/* the MR cannot go while the window is bound */
	ck_assert_int_eq(ddp_stag_dereg(b->stags[B2B_B], m.mr), IW_ESTATE);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_A, lr);
	mw_teardown(b, &m);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* _i: 0 = a Write past the window, 1 = a Write through the other QP, 2 = a Read
 * through the other QP. */
START_TEST(mw_refuses_bounds_and_other_streams)
{
	struct b2b *b = mw_pair();
	struct mw_fix m;
	uint8_t s[64];
	uint32_t ls;

	mw_setup(b, &m, DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ);
	memset(s, 0x77, sizeof(s));
	ls = b2b_reg(b, B2B_B, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	if (_i == 0) {
		uint32_t la = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);

		ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 1, s, 8, la, m.key,
					       (uintptr_t)(m.buf + 16 + 60)),
				 IW_OK);
		b2b_pump(b);
		assert_term(rdmap_qp_term_received(b->qp[B2B_A]), 1, 1, 1); /* DDP bounds */
		b2b_dereg(b, B2B_A, la);
	} else {
		/* B names its own window to A: it arrives on A's stream */
		ck_assert_int_eq(b2b_post_rdma(b, B2B_B, _i == 1 ? RDMAP_WR_WRITE : RDMAP_WR_READ,
					       0, 1, s, 8, ls, m.key, (uintptr_t)(m.buf + 16)),
				 IW_OK);
		b2b_pump(b);
		if (_i == 1)
			/* tagged placement: DDP "STag not associated with the stream" */
			assert_term(rdmap_qp_term_received(b->qp[B2B_B]), 1, 1, 2);
		else
			/* Read source: RDMAP remote protection, stream (RFC 5040 §7.2) */
			assert_term(rdmap_qp_term_received(b->qp[B2B_B]), 0, 1, 3);
	}
	for (int k = 0; k < 8; k++)
		ck_assert_uint_eq(m.buf[16 + k], 0);
	flush_both(b);
	b2b_dereg(b, B2B_B, ls);
	mw_teardown(b, &m);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

START_TEST(mw_send_with_invalidate_unbinds_it)
{
	struct b2b *b = mw_pair();
	struct mw_fix m;
	uint8_t s[16], d[16];
	uint32_t ls, ld;
	struct rdmap_wc wc;

	mw_setup(b, &m,
		 DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_INVALIDATE);
	memset(s, 0x31, sizeof(s));
	ls = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	ld = b2b_reg(b, B2B_B, d, sizeof(d), DDP_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 100, d, sizeof(d), ld), IW_OK);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_SEND_INV, 0, 1, s, 4, ls, m.key, 0),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 100, RDMAP_WC_RECV);
	ck_assert(wc.invalidated);
	ck_assert_uint_eq(wc.invalidated_stag, m.key);
	/* unbound: the MR can go now, and the window can be bound again (new key) */
	ck_assert_int_eq(post_bind(b, B2B_B, 21, nk(m.key, 1), m.mr, (uintptr_t)m.buf, 8,
				   DDP_ACCESS_REMOTE_READ),
			 IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 21, RDMAP_WC_BIND_MW);
	/* the invalidated STag is refused */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 2, s, 8, ls, m.key,
				       (uintptr_t)(m.buf + 16)),
			 IW_OK);
	b2b_pump(b);
	assert_term(rdmap_qp_term_received(b->qp[B2B_A]), 1, 1, 0);
	flush_both(b);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_B, ld);
	mw_teardown(b, &m);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

START_TEST(mw_local_invalidate)
{
	struct b2b *b = mw_pair();
	struct mw_fix m;
	struct rdmap_wc wc;

	mw_setup(b, &m, DDP_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(post_inv(b, B2B_B, 30, m.key), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 30, RDMAP_WC_LOCAL_INV);
	/* unbound: the MR is free to go */
	b2b_dereg(b, B2B_B, m.mr);
	ck_assert_int_eq(ddp_stag_free_index(b->stags[B2B_B], m.mw), IW_OK);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* _i: 0 = MR without MW_BIND, 1 = key unchanged, 2 = beyond the MR, 3 = not a window */
START_TEST(mw_bind_errors_fail_the_wr_with_mw_bind_err)
{
	struct b2b *b = mw_pair();
	uint8_t buf[64];
	uint32_t mr, plain, mw, key;
	struct rdmap_wc wc[2];

	mr = b2b_reg(b, B2B_B, buf, sizeof(buf), RWL | DDP_ACCESS_MW_BIND);
	plain = b2b_reg(b, B2B_B, buf, sizeof(buf), RWL);
	ck_assert_int_eq(ddp_stag_alloc_mw(b->stags[B2B_B], 5, &mw), IW_OK);
	key = nk(mw, 1);
	if (_i == 0)
		post_bind(b, B2B_B, 1, key, plain, (uintptr_t)buf, 8, DDP_ACCESS_REMOTE_READ);
	else if (_i == 1)
		post_bind(b, B2B_B, 1, mw, mr, (uintptr_t)buf, 8, DDP_ACCESS_REMOTE_READ);
	else if (_i == 2)
		post_bind(b, B2B_B, 1, key, mr, (uintptr_t)buf + 60, 8, DDP_ACCESS_REMOTE_READ);
	else
		post_bind(b, B2B_B, 1, nk(plain, 1), mr, (uintptr_t)buf, 8, DDP_ACCESS_REMOTE_READ);
	ck_assert_int_eq(b2b_drain(b, B2B_B, wc, 2), 1);
	ck_assert_int_eq(wc[0].status, RDMAP_WC_MW_BIND_ERR);
	ck_assert_int_eq(wc[0].opcode, RDMAP_WC_BIND_MW);
	ck_assert_int_ne(rdmap_qp_state(b->qp[B2B_B]), RDMAP_QP_RTS);
	flush_both(b);
	ck_assert_int_eq(ddp_stag_free_index(b->stags[B2B_B], mw), IW_OK);
	b2b_dereg(b, B2B_B, mr);
	b2b_dereg(b, B2B_B, plain);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

static Suite *rdmap_mem_suite(void)
{
	Suite *s = suite_create("rdmap_mem");
	TCase *tc = tcase_create("core");

	suite_add_tcase(s, tc);
	tcase_add_test(tc, local_inv_then_peer_write_gets_the_invalid_stag_terminate);
	tcase_add_test(tc, local_inv_completes_in_send_queue_order_and_unsignalled_is_silent);
	tcase_add_loop_test(tc, local_inv_of_a_bad_stag_fails_the_wr_and_the_qp, 0, 3);
	tcase_add_test(tc, post_send_refuses_unknown_opcodes_but_takes_local_ones);
	tcase_add_loop_test(tc, fast_reg_scattered_pages_take_write_read_and_send, B2B_SPLIT_WHOLE,
			    B2B_SPLIT_RANDOM + 1);
	tcase_add_test(tc, fast_reg_rotates_the_key_and_the_old_stag_is_refused);
	tcase_add_test(tc, fast_reg_of_a_valid_stag_fails_the_wr);
	tcase_add_test(tc, mw_works_for_the_peer_of_the_binding_qp);
	tcase_add_loop_test(tc, mw_refuses_bounds_and_other_streams, 0, 3);
	tcase_add_test(tc, mw_send_with_invalidate_unbinds_it);
	tcase_add_test(tc, mw_local_invalidate);
	tcase_add_loop_test(tc, mw_bind_errors_fail_the_wr_with_mw_bind_err, 0, 4);
	return s;
}

TH_MAIN(rdmap_mem_suite)
