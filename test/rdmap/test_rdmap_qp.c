/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_qp.c - the RDMAP queue-pair engine, end to end: two QPs back to
 * back (test/helpers/b2b.h) run every operation of RFC 5040 §5 over the real
 * DDP/MPA framing, with CRC and Markers on and off in each direction and the
 * byte stream split whole, octet by octet or at random.  Data is compared byte
 * for byte, completions field by field, and the wire is sniffed to count
 * segments and the RDMA Reads outstanding (ORD, RFC 5040 §6.4).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "b2b.h"
#include "iw_bytes.h"
#include "th.h"

#define GUARD	 16
#define GUARD_OC 0xEE
#define MIB	 (1024u * 1024u)

enum sz {
	SZ_0,
	SZ_1,
	SZ_P_MINUS_1, /* one octet less than one segment's payload */
	SZ_P,	      /* exactly one segment */
	SZ_P_PLUS_1,  /* one octet into a second segment */
	SZ_MULPDU,    /* the MULPDU itself as a payload size */
	SZ_COUNT,
	SZ_16MIB = SZ_COUNT,
};

struct xcase {
	enum rdmap_wr_opcode op;
	enum sz size;
	bool crc, mab, mba;
	enum b2b_split split;
	bool shared;
	bool direct; /* received into place at every split (b2b opts.direct) */
};

static uint8_t wire_opcode(enum rdmap_wr_opcode op)
{
	switch (op) {
	case RDMAP_WR_SEND:
		return RDMAP_OP_SEND;
	case RDMAP_WR_SEND_INV:
		return RDMAP_OP_SEND_INV;
	case RDMAP_WR_SEND_SE:
		return RDMAP_OP_SEND_SE;
	case RDMAP_WR_SEND_SE_INV:
		return RDMAP_OP_SEND_SE_INV;
	case RDMAP_WR_WRITE:
		return RDMAP_OP_WRITE;
	default:
		return RDMAP_OP_READ_RESP; /* the data of a Read travels in Read Responses
                                */
	}
}

static bool is_send(enum rdmap_wr_opcode op)
{
	return op != RDMAP_WR_WRITE && op != RDMAP_WR_READ;
}

static bool is_inv(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_SEND_INV || op == RDMAP_WR_SEND_SE_INV;
}

static uint32_t size_of(const struct b2b *b, enum rdmap_wr_opcode op, enum sz sz)
{
	/* Read data flows B->A; everything else A->B. */
	int sender = op == RDMAP_WR_READ ? B2B_B : B2B_A;
	uint32_t p = b2b_seg_payload(b, sender, wire_opcode(op));

	switch (sz) {
	case SZ_0:
		return 0;
	case SZ_1:
		return 1;
	case SZ_P_MINUS_1:
		return p - 1;
	case SZ_P:
		return p;
	case SZ_P_PLUS_1:
		return p + 1;
	case SZ_MULPDU:
		return b->cfg[sender].mulpdu;
	default:
		return 16 * MIB;
	}
}

static uint8_t *alloc_guarded(size_t len)
{
	uint8_t *p = malloc(len + GUARD);

	ck_assert_ptr_nonnull(p);
	memset(p, GUARD_OC, len + GUARD);
	return p;
}

static void assert_guard(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(p[i] == GUARD_OC, "guard octet %zu overwritten", i);
}

static void assert_wc(const struct rdmap_wc *wc, uint64_t wr_id, enum rdmap_wc_opcode op)
{
	ck_assert_msg(wc->status == RDMAP_WC_SUCCESS, "wr %llu status %d err %d",
		      (unsigned long long)wc->wr_id, wc->status, wc->err);
	ck_assert_uint_eq(wc->wr_id, wr_id);
	ck_assert_int_eq(wc->opcode, op);
}

static struct b2b *make(const struct xcase *c)
{
	struct b2b_opts o;

	b2b_opts_default(&o);
	o.crc = c->crc;
	o.markers_ab = c->mab;
	o.markers_ba = c->mba;
	o.split = c->split;
	o.shared_stags = c->shared;
	if (c->direct) {
		o.direct = true;
		o.direct_min = 1;
	}
	return b2b_create(&o);
}

/* One operation from A, verified at both ends and on the wire. */
static void run_xfer(const struct xcase *c)
{
	struct b2b *b = make(c);
	uint32_t len = size_of(b, c->op, c->size);
	uint8_t *src, *dst, *victim = NULL;
	uint32_t lsrc, ldst, lvictim = 0;
	const uint32_t off = 8; /* remote TO away from the registration base */
	struct rdmap_wc wc;
	uint8_t op = wire_opcode(c->op);
	uint32_t p, want_segs;

	ck_assert_int_eq(b->params[B2B_A].crc, c->crc);
	ck_assert_int_eq(b->params[B2B_A].markers_tx, c->mab);
	ck_assert_int_eq(b->params[B2B_B].markers_tx, c->mba);

	src = alloc_guarded(len + off);
	dst = alloc_guarded(len + off);
	th_rng_fill(&b->rng, src, len + off);

	if (is_send(c->op)) {
		lsrc = b2b_reg(b, B2B_A, src, len + off, DDP_ACCESS_LOCAL_WRITE);
		ldst = b2b_reg(b, B2B_B, dst, len + off + GUARD, DDP_ACCESS_LOCAL_WRITE);
		ck_assert_int_eq(b2b_post_recv(b, B2B_B, 100, dst, len + GUARD, ldst), IW_OK);
		if (is_inv(c->op)) {
			victim = alloc_guarded(64);
			lvictim = b2b_reg(b, B2B_B, victim, 64,
					  DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_INVALIDATE);
		}
		ck_assert_int_eq(b2b_post_rdma(b, B2B_A, c->op, RDMAP_WR_SIGNALED, 1, src, len,
					       lsrc, lvictim, 0),
				 IW_OK);
		ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
		assert_wc(&wc, 100, RDMAP_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, len);
		ck_assert_int_eq(wc.solicited,
				 c->op == RDMAP_WR_SEND_SE || c->op == RDMAP_WR_SEND_SE_INV);
		ck_assert_int_eq(wc.invalidated, is_inv(c->op));
		if (is_inv(c->op)) {
			ck_assert_uint_eq(wc.invalidated_stag, lvictim);
			ck_assert_int_eq(ddp_stag_check(b->stags[B2B_B], lvictim, b->opts.pd[B2B_B],
							DDP_ACCESS_REMOTE_WRITE, (uintptr_t)victim,
							1, NULL),
					 DDP_STAG_INVALID);
		}
		ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
		assert_wc(&wc, 1, RDMAP_WC_SEND);
		ck_assert(memcmp(dst, src, len) == 0);
		assert_guard(dst + len, GUARD);
	} else if (c->op == RDMAP_WR_WRITE) {
		/* The Write lands at dst + off; a Send after it tells B it is there. */
		uint8_t note[4] = {1, 2, 3, 4}, nbuf[4 + GUARD];
		uint32_t lnote, lnbuf;

		lsrc = b2b_reg(b, B2B_A, src, len + off, DDP_ACCESS_LOCAL_WRITE);
		ldst = b2b_reg(b, B2B_B, dst, len + off + GUARD, DDP_ACCESS_REMOTE_WRITE);
		lnote = b2b_reg(b, B2B_A, note, sizeof(note), DDP_ACCESS_LOCAL_WRITE);
		lnbuf = b2b_reg(b, B2B_B, nbuf, sizeof(nbuf), DDP_ACCESS_LOCAL_WRITE);
		ck_assert_int_eq(b2b_post_recv(b, B2B_B, 100, nbuf, sizeof(nbuf), lnbuf), IW_OK);
		ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 1, src,
					       len, lsrc, ldst, (uintptr_t)dst + off),
				 IW_OK);
		ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 2, note,
					       sizeof(note), lnote),
				 IW_OK);
		ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
		assert_wc(&wc, 100, RDMAP_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, sizeof(note));
		ck_assert(memcmp(dst + off, src, len) == 0);
		assert_guard(dst, off);
		assert_guard(dst + off + len, GUARD);
		ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
		assert_wc(&wc, 1, RDMAP_WC_RDMA_WRITE);
		ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
		assert_wc(&wc, 2, RDMAP_WC_SEND);
		b2b_dereg(b, B2B_A, lnote);
		b2b_dereg(b, B2B_B, lnbuf);
	} else {
		/* A reads B's src + off into its dst. */
		lsrc = b2b_reg(b, B2B_B, src, len + off, DDP_ACCESS_REMOTE_READ);
		ldst = b2b_reg(b, B2B_A, dst, len + GUARD, DDP_ACCESS_LOCAL_WRITE);
		ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 1, dst,
					       len, ldst, lsrc, (uintptr_t)src + off),
				 IW_OK);
		ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
		assert_wc(&wc, 1, RDMAP_WC_RDMA_READ);
		ck_assert_uint_eq(wc.byte_len, len);
		ck_assert(memcmp(dst, src + off, len) == 0);
		assert_guard(dst + len, GUARD);
	}
	b2b_pump(b);

	/* Segmentation as seen on the wire: ceil(len / payload per segment), at least
   * one. */
	p = b2b_seg_payload(b, c->op == RDMAP_WR_READ ? B2B_B : B2B_A, op);
	want_segs = len ? (len + p - 1) / p : 1;
	ck_assert_uint_eq(b->segs[c->op == RDMAP_WR_READ ? B2B_B : B2B_A][op], want_segs);
	ck_assert_uint_eq(b->msgs[c->op == RDMAP_WR_READ ? B2B_B : B2B_A][op], 1);
	ck_assert_int_eq(b->sniff_err[0], 0);
	ck_assert_int_eq(b->sniff_err[1], 0);
	ck_assert_int_eq(b->rx_err[0], 0);
	ck_assert_int_eq(b->rx_err[1], 0);

	/* octet by octet, every payload octet is offered into place */
	if (c->direct && len && c->split == B2B_SPLIT_OCTET)
		ck_assert_uint_gt(b->direct_octets[c->op == RDMAP_WR_READ ? B2B_A : B2B_B], 0);
	b2b_dereg(b, is_send(c->op) || c->op == RDMAP_WR_WRITE ? B2B_A : B2B_B, lsrc);
	b2b_dereg(b, is_send(c->op) || c->op == RDMAP_WR_WRITE ? B2B_B : B2B_A, ldst);
	if (victim) {
		b2b_dereg(b, B2B_B, lvictim);
		free(victim);
	}
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
	free(src);
	free(dst);
}

/* _i in 0..7: CRC, Markers A->B, Markers B->A; every size, every split. */
static void run_matrix(enum rdmap_wr_opcode op, int i)
{
	for (int sz = 0; sz < SZ_COUNT; sz++) {
		for (int sp = B2B_SPLIT_WHOLE; sp <= B2B_SPLIT_RANDOM; sp++) {
			struct xcase c = {
				.op = op,
				.size = (enum sz)sz,
				.crc = i & 1,
				.mab = i & 2,
				.mba = i & 4,
				.split = (enum b2b_split)sp,
			};

			run_xfer(&c);
		}
	}
}

START_TEST(send_delivers_every_size_with_every_crc_and_marker_setting)
{
	run_matrix(RDMAP_WR_SEND, _i);
}
END_TEST

START_TEST(send_with_solicited_event_sets_solicited_in_the_receive_completion)
{
	run_matrix(RDMAP_WR_SEND_SE, _i);
}
END_TEST

START_TEST(send_with_invalidate_invalidates_the_peer_stag)
{
	run_matrix(RDMAP_WR_SEND_INV, _i);
}
END_TEST

START_TEST(send_with_solicited_event_and_invalidate_does_both)
{
	run_matrix(RDMAP_WR_SEND_SE_INV, _i);
}
END_TEST

START_TEST(rdma_write_places_data_before_the_following_send_arrives)
{
	run_matrix(RDMAP_WR_WRITE, _i);
}
END_TEST

START_TEST(rdma_read_fetches_peer_memory_of_every_size)
{
	run_matrix(RDMAP_WR_READ, _i);
}
END_TEST

START_TEST(operations_work_with_one_shared_stag_table)
{
	static const enum rdmap_wr_opcode ops[] = {RDMAP_WR_SEND, RDMAP_WR_SEND_INV, RDMAP_WR_WRITE,
						   RDMAP_WR_READ};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		struct xcase c = {.op = ops[k],
				  .size = SZ_P_PLUS_1,
				  .crc = true,
				  .split = B2B_SPLIT_RANDOM,
				  .shared = true};

		run_xfer(&c);
	}
}
END_TEST

/* Every operation x CRC on/off x Markers off / on both ways, then one way each, at 16 MiB. */
#define BIG_OPS 6
static const enum rdmap_wr_opcode big_ops[BIG_OPS] = {
	RDMAP_WR_SEND,	      RDMAP_WR_SEND_SE, RDMAP_WR_SEND_INV,
	RDMAP_WR_SEND_SE_INV, RDMAP_WR_WRITE,	RDMAP_WR_READ,
};

/*
 * Receiving into place (rdmap_qp_rx_target / rdmap_qp_rx_placed) at every
 * split point: _i / 4 picks Send, RDMA Write or RDMA Read, _i & 1 the CRC,
 * _i & 2 Markers both ways (their positions cut the spans); every size and
 * split policy, as the QP's own delivery above.
 */
START_TEST(receive_into_place_delivers_every_op_size_and_split)
{
	static const enum rdmap_wr_opcode ops[3] = {RDMAP_WR_SEND, RDMAP_WR_WRITE, RDMAP_WR_READ};

	for (int sz = 0; sz < SZ_COUNT; sz++) {
		for (int sp = B2B_SPLIT_WHOLE; sp <= B2B_SPLIT_RANDOM; sp++) {
			struct xcase c = {
				.op = ops[_i / 4],
				.size = (enum sz)sz,
				.crc = _i & 1,
				.mab = _i & 2,
				.mba = _i & 2,
				.split = (enum b2b_split)sp,
				.direct = true,
			};

			run_xfer(&c);
		}
	}
}
END_TEST

/* Flip the octet at stream offset 500,001 of side `from`: payload of its
 * eighth 64 KiB FPDU, which goes into place. */
struct flip {
	int from;
	bool done;
};

static void flip_payload(struct b2b *b, int from, uint8_t *buf, size_t len, void *arg)
{
	struct flip *f = arg;

	uint64_t start = b->bytes[from] - len, at = 500001;

	if (from != f->from || f->done || at < start || at >= start + len)
		return;
	buf[at - start] ^= 0x40;
	f->done = true;
}

/*
 * The default thresholds on a loopback-sized MULPDU (64 KiB FPDUs): nearly
 * all of a 1 MiB Write, Send or Read Response goes into place, reads stop
 * after headers, and with the CRC on a damaged octet received into place
 * still fails the stream with MPA's CRC error and the LLP Terminate
 * (RFC 5044 §8, RFC 5040 §5.4), not a completion.  _i: op (/ 4), CRC (& 1),
 * damage (& 2, with the CRC on only).
 */
START_TEST(large_segments_go_into_place_with_the_default_thresholds)
{
	static const enum rdmap_wr_opcode ops[3] = {RDMAP_WR_SEND, RDMAP_WR_WRITE, RDMAP_WR_READ};
	enum { LEN = 1 << 20 };
	enum rdmap_wr_opcode op = ops[_i / 4];
	bool crc = _i & 1, damage = (_i & 2) && crc;
	int tx = op == RDMAP_WR_READ ? B2B_B : B2B_A, rx = b2b_peer(tx);
	struct flip flip = {.from = tx};
	uint8_t *src = malloc(LEN), *dst = calloc(1, LEN);
	uint32_t lsrc, ldst;
	struct b2b_opts o;
	struct rdmap_wc wc;
	struct b2b *b;

	ck_assert(src && dst);
	b2b_opts_default(&o);
	o.crc = crc;
	o.emss = 65483; /* the MSS of Linux loopback */
	o.direct = true;
	o.direct_min = 0; /* the QP's default */
	o.split = B2B_SPLIT_WHOLE;
	b = b2b_create(&o);
	th_rng_fill(&b->rng, src, LEN);
	if (damage) {
		b->wire_hook = flip_payload;
		b->hook_arg = &flip;
	}
	lsrc = b2b_reg(b, tx, src, LEN,
		       op == RDMAP_WR_READ ? DDP_ACCESS_REMOTE_READ : DDP_ACCESS_LOCAL_WRITE);
	ldst = b2b_reg(b, rx, dst, LEN,
		       op == RDMAP_WR_WRITE ? DDP_ACCESS_REMOTE_WRITE : DDP_ACCESS_LOCAL_WRITE);
	if (op == RDMAP_WR_SEND) {
		ck_assert_int_eq(b2b_post_recv(b, B2B_B, 100, dst, LEN, ldst), IW_OK);
		ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 1, src,
					       LEN, lsrc),
				 IW_OK);
	} else if (op == RDMAP_WR_WRITE) {
		ck_assert_int_eq(b2b_post_rdma(b, B2B_A, op, RDMAP_WR_SIGNALED, 1, src, LEN, lsrc,
					       ldst, (uintptr_t)dst),
				 IW_OK);
	} else {
		ck_assert_int_eq(b2b_post_rdma(b, B2B_A, op, RDMAP_WR_SIGNALED, 1, dst, LEN, ldst,
					       lsrc, (uintptr_t)src),
				 IW_OK);
	}
	b2b_pump(b);
	if (damage) {
		ck_assert(flip.done);
		ck_assert_int_eq(b->rx_err[rx], IW_EMPA_CRC);
		ck_assert_uint_gt(b->direct_octets[rx], 0);
		ck_assert_ptr_nonnull(rdmap_qp_term_sent(b->qp[rx]));
		ck_assert_ptr_nonnull(rdmap_qp_term_received(b->qp[tx]));
		/* B's receive (Send) is flushed, never completed with the bad data */
		if (op == RDMAP_WR_SEND) {
			ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_B], &wc, 1), 1);
			ck_assert_int_ne(wc.status, RDMAP_WC_SUCCESS);
		}
	} else {
		ck_assert_int_eq(b->rx_err[0], 0);
		ck_assert_int_eq(b->rx_err[1], 0);
		ck_assert(memcmp(dst, src, LEN) == 0);
		/* all but the headers' read-ahead and short tails went into place */
		ck_assert_uint_ge(b->direct_octets[rx], (uint64_t)LEN * 9 / 10);
		ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
		ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
		if (op == RDMAP_WR_SEND) {
			ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_B], &wc, 1), 1);
			ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
			ck_assert_uint_eq(wc.byte_len, LEN);
		}
		b2b_dereg(b, tx, lsrc);
		b2b_dereg(b, rx, ldst);
		b2b_check_clean(b, RDMAP_QP_RTS);
	}
	b2b_destroy(b);
	free(src);
	free(dst);
}
END_TEST

START_TEST(sixteen_mib_messages_arrive_intact)
{
	struct xcase c = {.op = big_ops[_i / 4], .size = SZ_16MIB};

	c.crc = (_i / 2) % 2;
	c.mab = c.mba = _i % 2;
	run_xfer(&c);
}
END_TEST

START_TEST(sixteen_mib_messages_with_markers_one_way_arrive_intact)
{
	struct xcase c = {.op = big_ops[_i / 2], .size = SZ_16MIB, .crc = true};

	c.mab = _i % 2;
	c.mba = !c.mab;
	run_xfer(&c);
}
END_TEST

/* ---------------------------------------------------------------------- */

START_TEST(unsignalled_work_requests_produce_no_completion)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t s[100], d[300], r[100];
	uint32_t ls, ld, lr;
	struct rdmap_wc wc;

	b2b_opts_default(&o);
	o.split = B2B_SPLIT_RANDOM;
	b = b2b_create(&o);
	memset(s, 0x5A, sizeof(s));
	memset(d, 0, sizeof(d));
	memset(r, 0, sizeof(r));
	ls = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	lr = b2b_reg(b, B2B_A, r, sizeof(r), DDP_ACCESS_LOCAL_WRITE);
	ld = b2b_reg(b, B2B_B, d, sizeof(d),
		     DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_READ);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 100, d, 100, ld), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, 0, 1, s, sizeof(s), ls), IW_OK);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 2, s, sizeof(s), ls, ld,
				       (uintptr_t)d + 100),
			 IW_OK);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, 0, 3, r, sizeof(r), lr, ld,
				       (uintptr_t)d + 100),
			 IW_OK);
	/* The last WR is signalled: its completion proves the earlier ones are done.
   */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 4, s, 10, ls,
				       ld, (uintptr_t)d + 200),
			 IW_OK);
	ck_assert_int_eq(b2b_drain(b, B2B_A, &wc, 1), 1);
	assert_wc(&wc, 4, RDMAP_WC_RDMA_WRITE);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 0);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_B], &wc, 1), 1);
	assert_wc(&wc, 100, RDMAP_WC_RECV);
	ck_assert(memcmp(d, s, 100) == 0 && memcmp(d + 100, s, 100) == 0);
	ck_assert(memcmp(r, s, 100) == 0 && memcmp(d + 200, s, 10) == 0);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_A, lr);
	b2b_dereg(b, B2B_B, ld);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

START_TEST(send_with_invalidate_makes_a_later_rdma_write_to_that_stag_fail)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t s[32], d[64], v[64];
	uint32_t ls, ld, lv;
	struct rdmap_wc wc;
	const struct rdmap_term *t;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	memset(s, 0x11, sizeof(s));
	memset(v, 0, sizeof(v));
	ls = b2b_reg(b, B2B_A, s, sizeof(s), DDP_ACCESS_LOCAL_WRITE);
	ld = b2b_reg(b, B2B_B, d, sizeof(d), DDP_ACCESS_LOCAL_WRITE);
	lv = b2b_reg(b, B2B_B, v, sizeof(v),
		     DDP_ACCESS_REMOTE_WRITE | DDP_ACCESS_REMOTE_INVALIDATE);
	/* Before the invalidate the Write is fine. */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 1, s, 8, ls, lv, (uintptr_t)v),
			 IW_OK);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 100, d, sizeof(d), ld), IW_OK);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_SEND_INV, 0, 2, s, 4, ls, lv, 0), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 100, RDMAP_WC_RECV);
	ck_assert(wc.invalidated);
	ck_assert_uint_eq(wc.invalidated_stag, lv);
	ck_assert_uint_eq(v[0], 0x11);
	memset(v, 0, sizeof(v));
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, 0, 3, s, 8, ls, lv, (uintptr_t)v),
			 IW_OK);
	b2b_pump(b);
	for (size_t i = 0; i < sizeof(v); i++)
		ck_assert_uint_eq(v[i], 0);
	ck_assert_int_ne(rdmap_qp_state(b->qp[B2B_B]), RDMAP_QP_RTS);
	ck_assert_int_ne(rdmap_qp_error(b->qp[B2B_B]), IW_OK);
	ck_assert_int_ne(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_RTS);
	t = rdmap_qp_term_received(b->qp[B2B_A]);
	ck_assert_ptr_nonnull(t);
	/* Invalid STag: DDP tagged buffer error 0x1/0x00 (RFC 5041 §7.2). */
	ck_assert_uint_eq(t->code.layer, 1);
	ck_assert_uint_eq(t->code.etype, 1);
	ck_assert_uint_eq(t->code.ecode, 0);
	ck_assert_ptr_nonnull(rdmap_qp_term_sent(b->qp[B2B_B]));
	rdmap_qp_flush(b->qp[B2B_A]);
	rdmap_qp_flush(b->qp[B2B_B]);
	while (rdmap_qp_poll(b->qp[B2B_A], &wc, 1) == 1)
		;
	while (rdmap_qp_poll(b->qp[B2B_B], &wc, 1) == 1)
		;
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_B, ld);
	b2b_dereg(b, B2B_B, lv);
	b2b_check_clean(b, RDMAP_QP_ERROR);
	b2b_destroy(b);
}
END_TEST

/* ---------------------------------------------------------------------- */

static const uint8_t rtr_forms[] = {MPA_RTR_SEND, MPA_RTR_WRITE, MPA_RTR_READ};

START_TEST(p2p_with_each_rtr_form_opens_both_directions)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t a[200], bb[200], ra[200], rb[200];
	uint32_t la, lb, lra, lrb;
	struct rdmap_wc wc;
	uint8_t form = rtr_forms[_i / 3];

	b2b_opts_default(&o);
	o.p2p = true;
	o.rtr = form;
	o.split = (enum b2b_split)(_i % 3);
	b = b2b_create(&o);
	ck_assert(b->params[B2B_A].p2p && b->params[B2B_B].p2p);
	ck_assert_uint_eq(b->params[B2B_A].rtr, form);
	memset(a, 0xA1, sizeof(a));
	memset(bb, 0xB2, sizeof(bb));
	memset(ra, 0, sizeof(ra));
	memset(rb, 0, sizeof(rb));
	la = b2b_reg(b, B2B_A, a, sizeof(a), DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_READ);
	lra = b2b_reg(b, B2B_A, ra, sizeof(ra), DDP_ACCESS_LOCAL_WRITE);
	lb = b2b_reg(b, B2B_B, bb, sizeof(bb), DDP_ACCESS_LOCAL_WRITE);
	lrb = b2b_reg(b, B2B_B, rb, sizeof(rb), DDP_ACCESS_LOCAL_WRITE);
	/* The responder posts first: its Send must wait for the RTR, not get lost. */
	ck_assert_int_eq(b2b_post_recv(b, B2B_A, 200, ra, sizeof(ra), lra), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_B, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 20, bb, 150, lb),
			 IW_OK);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 100, rb, sizeof(rb), lrb), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 10, a, 120, la),
			 IW_OK);
	/* And B reads from A: a Read from the responder after the RTR. */
	ck_assert_int_eq(b2b_post_rdma(b, B2B_B, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 21, rb + 150, 50,
				       lrb, la, (uintptr_t)a),
			 IW_OK);
	b2b_pump(b);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
	/* A's completions: its Send and its Receive, in completion order. */
	{
		struct rdmap_wc w2;
		bool seen_send = false, seen_recv = false;

		ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &w2, 1), 1);
		for (int k = 0; k < 2; k++) {
			const struct rdmap_wc *x = k ? &w2 : &wc;

			ck_assert_int_eq(x->status, RDMAP_WC_SUCCESS);
			if (x->opcode == RDMAP_WC_SEND) {
				ck_assert_uint_eq(x->wr_id, 10);
				seen_send = true;
			} else {
				assert_wc(x, 200, RDMAP_WC_RECV);
				ck_assert_uint_eq(x->byte_len, 150);
				seen_recv = true;
			}
		}
		ck_assert(seen_send && seen_recv);
	}
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 0);
	ck_assert(memcmp(ra, bb, 150) == 0);
	ck_assert(memcmp(rb, a, 120) == 0);
	ck_assert(memcmp(rb + 150, a, 50) == 0);
	{
		struct rdmap_wc w[4];
		int n = rdmap_qp_poll(b->qp[B2B_B], w, 4);
		bool s = false, r = false, rd = false;

		ck_assert_int_eq(n, 3);
		for (int k = 0; k < n; k++) {
			ck_assert_int_eq(w[k].status, RDMAP_WC_SUCCESS);
			if (w[k].wr_id == 20)
				s = w[k].opcode == RDMAP_WC_SEND;
			else if (w[k].wr_id == 100)
				r = w[k].opcode == RDMAP_WC_RECV && w[k].byte_len == 120;
			else if (w[k].wr_id == 21)
				rd = w[k].opcode == RDMAP_WC_RDMA_READ && w[k].byte_len == 50;
		}
		ck_assert(s && r && rd);
	}
	/* Exactly one RTR went A->B, and it was the negotiated form. */
	if (form == MPA_RTR_SEND) {
		ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_SEND], 2);
	} else if (form == MPA_RTR_WRITE) {
		ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_WRITE], 1);
	} else {
		ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_READ_REQ], 1);
		/* ... answered by a zero-length Read Response, plus the data for B's Read.
     */
		ck_assert_uint_eq(b->msgs[B2B_B][RDMAP_OP_READ_RESP], 1);
	}
	b2b_dereg(b, B2B_A, la);
	b2b_dereg(b, B2B_A, lra);
	b2b_dereg(b, B2B_B, lb);
	b2b_dereg(b, B2B_B, lrb);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* ---------------------------------------------------------------------- */

/*
 * A posts n RDMA Reads of sz octets each (all before anything moves) from B's
 * memory; every one completes in order with its length and the data arrives.
 */
static void post_reads_and_check(struct b2b *b, int n, size_t sz)
{
	uint8_t *src = malloc((size_t)n * sz), *dst = calloc((size_t)n, sz);
	uint32_t ls, ld;
	struct rdmap_wc wc;

	ck_assert(src && dst);
	th_rng_fill(&b->rng, src, (size_t)n * sz);
	ls = b2b_reg(b, B2B_B, src, (size_t)n * sz, DDP_ACCESS_REMOTE_READ);
	ld = b2b_reg(b, B2B_A, dst, (size_t)n * sz, DDP_ACCESS_LOCAL_WRITE);
	for (int k = 0; k < n; k++)
		ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED,
					       (uint64_t)k, dst + (size_t)k * sz, sz, ld, ls,
					       (uintptr_t)src + (size_t)k * sz),
				 IW_OK);
	for (int k = 0; k < n; k++) {
		ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
		assert_wc(&wc, (uint64_t)k, RDMAP_WC_RDMA_READ);
		ck_assert_uint_eq(wc.byte_len, sz);
	}
	b2b_pump(b);
	ck_assert(memcmp(src, dst, (size_t)n * sz) == 0);
	b2b_dereg(b, B2B_A, ld);
	b2b_dereg(b, B2B_B, ls);
	free(src);
	free(dst);
}

START_TEST(more_reads_than_ord_all_complete_and_never_exceed_ord_on_the_wire)
{
	enum { NREADS = 12, SZ = 3000 };
	struct b2b_opts o;
	struct b2b *b;

	b2b_opts_default(&o);
	o.ord[B2B_A] = 3;
	o.ird[B2B_B] = 3;
	o.split = (enum b2b_split)_i;
	b = b2b_create(&o);
	ck_assert_uint_le(b->params[B2B_A].ord, 3);
	ck_assert_uint_ge(b->params[B2B_A].ord, 1);
	post_reads_and_check(b, NREADS, SZ);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_READ_REQ], NREADS);
	ck_assert_int_le(b->reads_out_max[B2B_A], b->params[B2B_A].ord);
	ck_assert_int_ge(b->reads_out_max[B2B_A], 1);
	/* ... and pipelined up to ORD, not serialised (visible when A's output moves whole). */
	if (o.split == B2B_SPLIT_WHOLE)
		ck_assert_int_eq(b->reads_out_max[B2B_A], b->params[B2B_A].ord);
	ck_assert_int_eq(b->reads_out[B2B_A], 0);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* The Read RTR is not an application Read: the initiator may still have ORD Reads
 * out behind it, and the responder must accept them all. */
START_TEST(read_rtr_does_not_take_an_ird_slot_from_the_reads_behind_it)
{
	enum { ORD = 3, SZ = 2000 };
	struct b2b_opts o;
	struct b2b *b;

	b2b_opts_default(&o);
	o.p2p = true;
	o.rtr = MPA_RTR_READ;
	o.ord[B2B_A] = ORD;
	o.ird[B2B_B] = ORD;
	o.split = (enum b2b_split)_i;
	b = b2b_create(&o);
	ck_assert_uint_eq(b->params[B2B_A].ord, ORD);
	ck_assert_uint_eq(b->params[B2B_B].ird, ORD);
	/* RTR + ORD Read Requests arrive together */
	post_reads_and_check(b, ORD, SZ);
	ck_assert_uint_eq(b->msgs[B2B_A][RDMAP_OP_READ_REQ], ORD + 1);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

static void fence_hook(struct b2b *b, int from, const struct ddp_hdr *h, uint8_t opcode,
		       const uint8_t *ulpdu, size_t len, void *arg)
{
	int *violations = arg;

	(void)h;
	(void)ulpdu;
	(void)len;
	/* A fenced Write may not leave A while a Read is still outstanding. */
	if (from == B2B_A && opcode == RDMAP_OP_WRITE && b->reads_out[B2B_A] > 0)
		(*violations)++;
}

START_TEST(fenced_write_waits_for_the_earlier_read_to_complete)
{
	enum { SZ = 50000 };
	struct b2b_opts o;
	struct b2b *b;
	uint8_t *x = malloc(SZ), *sink = calloc(1, SZ), *nw = malloc(SZ);
	uint32_t lx, lsink, lnw;
	struct rdmap_wc wc;
	int violations = 0;

	ck_assert(x && sink && nw);
	b2b_opts_default(&o);
	o.split = (enum b2b_split)_i;
	b = b2b_create(&o);
	b->seg_hook = fence_hook;
	b->hook_arg = &violations;
	memset(x, 0x0D, SZ);  /* old contents */
	memset(nw, 0x4E, SZ); /* what the fenced Write puts there */
	lx = b2b_reg(b, B2B_B, x, SZ, DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE);
	lsink = b2b_reg(b, B2B_A, sink, SZ, DDP_ACCESS_LOCAL_WRITE);
	lnw = b2b_reg(b, B2B_A, nw, SZ, DDP_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 1, sink, SZ,
				       lsink, lx, (uintptr_t)x),
			 IW_OK);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED | RDMAP_WR_FENCE,
				       2, nw, SZ, lnw, lx, (uintptr_t)x),
			 IW_OK);
	ck_assert_int_eq(b2b_drain(b, B2B_A, &wc, 1), 1);
	assert_wc(&wc, 1, RDMAP_WC_RDMA_READ);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
	assert_wc(&wc, 2, RDMAP_WC_RDMA_WRITE);
	for (size_t i = 0; i < SZ; i++)
		ck_assert_msg(sink[i] == 0x0D && x[i] == 0x4E, "octet %zu", i);
	ck_assert_int_eq(violations, 0);
	ck_assert_uint_gt(b->segs[B2B_A][RDMAP_OP_WRITE], 0);
	b2b_dereg(b, B2B_B, lx);
	b2b_dereg(b, B2B_A, lsink);
	b2b_dereg(b, B2B_A, lnw);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
	free(x);
	free(sink);
	free(nw);
}
END_TEST

/*
 * The responder frames Read Response FPDUs (CRC included) ahead, zero copy,
 * straight from its registered memory.  A later unfenced RDMA Write from the
 * requester to the same memory is placed while those FPDUs are still queued;
 * without rdmap_qp.c's tx_protect() the octets that go out would no longer
 * match the CRC computed earlier and the requester would fail the whole stream
 * with IW_EMPA_CRC.  RFC 5040 §5.5 only makes the data read undefined without a
 * fence; the connection must survive.  Fails reliably without the fix with
 * B2B_SPLIT_RANDOM (partial tx_advance).
 */
START_TEST(unfenced_write_racing_an_earlier_read_keeps_the_connection_up)
{
	enum { SZ = 50000 };
	struct b2b_opts o;
	struct b2b *b;
	uint8_t *x = malloc(SZ), *sink = calloc(1, SZ), *nw = malloc(SZ);
	uint32_t lx, lsink, lnw;
	struct rdmap_wc wc;

	ck_assert(x && sink && nw);
	b2b_opts_default(&o);
	o.split = B2B_SPLIT_RANDOM;
	o.seed = 1000 + (uint64_t)_i;
	b = b2b_create(&o);
	memset(x, 0x0D, SZ);
	memset(nw, 0x4E, SZ);
	lx = b2b_reg(b, B2B_B, x, SZ, DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE);
	lsink = b2b_reg(b, B2B_A, sink, SZ, DDP_ACCESS_LOCAL_WRITE);
	lnw = b2b_reg(b, B2B_A, nw, SZ, DDP_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 1, sink, SZ,
				       lsink, lx, (uintptr_t)x),
			 IW_OK);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 2, nw, SZ, lnw,
				       lx, (uintptr_t)x),
			 IW_OK);
	b2b_pump(b);
	/* Which data the Read returns is undefined; that both succeed is not. */
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
		ck_assert_msg(wc.status == RDMAP_WC_SUCCESS, "wr %llu status %d err %d",
			      (unsigned long long)wc.wr_id, wc.status, wc.err);
	}
	ck_assert_int_eq(b->rx_err[B2B_A], 0);
	b2b_dereg(b, B2B_B, lx);
	b2b_dereg(b, B2B_A, lsink);
	b2b_dereg(b, B2B_A, lnw);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
	free(x);
	free(sink);
	free(nw);
}
END_TEST

START_TEST(multi_sge_send_gathers_and_multi_sge_receive_scatters)
{
	struct b2b_opts o;
	struct b2b *b;
	static const uint32_t slen[3] = {1000, 7, 2500}, rlen[4] = {600, 1, 2000, 2000};
	uint8_t *s[3], *r[4], *w;
	uint32_t ls[3], lr[4], lw;
	uint8_t all[3507], got[3507];
	struct rdmap_send_wr swr = {
		.wr_id = 1, .opcode = RDMAP_WR_SEND, .flags = RDMAP_WR_SIGNALED, .num_sge = 3};
	struct rdmap_recv_wr rwr = {.wr_id = 100, .num_sge = 4};
	struct rdmap_wc wc;
	size_t off = 0;

	b2b_opts_default(&o);
	o.split = (enum b2b_split)_i;
	o.markers_ab = true;
	b = b2b_create(&o);
	for (int k = 0; k < 3; k++) {
		s[k] = malloc(slen[k]);
		ck_assert_ptr_nonnull(s[k]);
		th_rng_fill(&b->rng, s[k], slen[k]);
		memcpy(all + off, s[k], slen[k]);
		off += slen[k];
		ls[k] = b2b_reg(b, B2B_A, s[k], slen[k], DDP_ACCESS_LOCAL_WRITE);
		swr.sg[k] = (struct rdmap_sge){(uintptr_t)s[k], slen[k], ls[k]};
	}
	for (int k = 0; k < 4; k++) {
		r[k] = calloc(1, rlen[k]);
		ck_assert_ptr_nonnull(r[k]);
		lr[k] = b2b_reg(b, B2B_B, r[k], rlen[k],
				DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE);
		rwr.sg[k] = (struct rdmap_sge){(uintptr_t)r[k], rlen[k], lr[k]};
	}
	ck_assert_int_eq(rdmap_qp_post_recv(b->qp[B2B_B], &rwr), IW_OK);
	ck_assert_int_eq(rdmap_qp_post_send(b->qp[B2B_A], &swr), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	assert_wc(&wc, 100, RDMAP_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, sizeof(all));
	off = 0;
	for (int k = 0; k < 4 && off < sizeof(all); k++) {
		size_t n = IW_MIN(rlen[k], sizeof(all) - off);

		memcpy(got + off, r[k], n);
		off += n;
	}
	ck_assert(memcmp(got, all, sizeof(all)) == 0);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 1, RDMAP_WC_SEND);

	/* Gathering Write: the same three pieces into B's r[2..3] as one range. */
	w = calloc(1, sizeof(all));
	ck_assert_ptr_nonnull(w);
	lw = b2b_reg(b, B2B_B, w, sizeof(all), DDP_ACCESS_REMOTE_WRITE);
	swr.wr_id = 2;
	swr.opcode = RDMAP_WR_WRITE;
	swr.remote_stag = lw;
	swr.remote_to = (uintptr_t)w;
	ck_assert_int_eq(rdmap_qp_post_send(b->qp[B2B_A], &swr), IW_OK);
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	assert_wc(&wc, 2, RDMAP_WC_RDMA_WRITE);
	b2b_pump(b);
	ck_assert(memcmp(w, all, sizeof(all)) == 0);

	for (int k = 0; k < 3; k++) {
		b2b_dereg(b, B2B_A, ls[k]);
		free(s[k]);
	}
	for (int k = 0; k < 4; k++) {
		b2b_dereg(b, B2B_B, lr[k]);
		free(r[k]);
	}
	b2b_dereg(b, B2B_B, lw);
	free(w);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

/* ---------------------------------------------------------------------- */

static void post_outstanding(struct b2b *b, uint8_t *buf, uint32_t l, uint32_t rstag)
{
	ck_assert_int_eq(b2b_post_recv(b, B2B_A, 10, buf, 64, l), IW_OK);
	ck_assert_int_eq(b2b_post_recv(b, B2B_A, 11, buf + 64, 64, l), IW_OK);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 1, buf, 64, l),
			 IW_OK);
	ck_assert_int_eq(
		b2b_post_rdma(b, B2B_A, RDMAP_WR_WRITE, RDMAP_WR_SIGNALED, 2, buf, 64, l, rstag, 0),
		IW_OK);
	ck_assert_int_eq(b2b_post_rdma(b, B2B_A, RDMAP_WR_READ, RDMAP_WR_SIGNALED, 3, buf + 128, 64,
				       l, rstag, 0),
			 IW_OK);
}

static void assert_all_flushed(struct b2b *b)
{
	struct rdmap_wc wc[8];
	unsigned seen = 0;
	int n = rdmap_qp_poll(b->qp[B2B_A], wc, 8);

	ck_assert_int_eq(n, 5);
	for (int k = 0; k < n; k++) {
		ck_assert_msg(wc[k].status == RDMAP_WC_WR_FLUSH_ERR, "wr %llu status %d",
			      (unsigned long long)wc[k].wr_id, wc[k].status);
		seen |= 1u << wc[k].wr_id;
	}
	ck_assert_uint_eq(seen, (1u << 1) | (1u << 2) | (1u << 3) | (1u << 10) | (1u << 11));
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_ERROR);
	ck_assert_int_eq(
		rdmap_qp_post_send(b->qp[B2B_A],
				   &(struct rdmap_send_wr){.opcode = RDMAP_WR_SEND, .num_sge = 0}),
		IW_ESTATE);
}

START_TEST(flush_completes_every_posted_work_request_with_flush_error)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t buf[256];
	uint32_t l;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	l = b2b_reg(b, B2B_A, buf, sizeof(buf), DDP_ACCESS_LOCAL_WRITE);
	post_outstanding(b, buf, l, 0x12345678);
	rdmap_qp_flush(b->qp[B2B_A]);
	assert_all_flushed(b);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_B], &(struct rdmap_wc){0}, 1), 0);
	b2b_dereg(b, B2B_A, l);
	b2b_destroy(b);
}
END_TEST

START_TEST(llp_closed_flushes_every_posted_work_request)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t buf[256];
	uint32_t l;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	l = b2b_reg(b, B2B_A, buf, sizeof(buf), DDP_ACCESS_LOCAL_WRITE);
	post_outstanding(b, buf, l, 0x12345678);
	rdmap_qp_llp_closed(b->qp[B2B_A]);
	assert_all_flushed(b);
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_A]), IW_EMPA_CLOSED);
	b2b_dereg(b, B2B_A, l);
	b2b_destroy(b);
}
END_TEST

/* A stream that failed (a reset, a peer found dead): the socket's reason is
 * the QP's error and every flushed WR's, and no Terminate is queued for a
 * stream that is gone. */
START_TEST(llp_failed_flushes_with_the_sockets_reason_and_sends_no_terminate)
{
	struct b2b_opts o;
	struct b2b *b;
	uint8_t buf[256];
	struct rdmap_wc wc[8];
	struct iovec iov[4];
	uint32_t l;
	int n;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	l = b2b_reg(b, B2B_A, buf, sizeof(buf), DDP_ACCESS_LOCAL_WRITE);
	post_outstanding(b, buf, l, 0x12345678);
	rdmap_qp_llp_failed(b->qp[B2B_A], IW_ESYS(ETIMEDOUT));
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_A]), IW_ESYS(ETIMEDOUT));
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_ERROR);
	ck_assert_ptr_null(rdmap_qp_term_sent(b->qp[B2B_A]));
	ck_assert_int_eq(rdmap_qp_tx_iov(b->qp[B2B_A], iov, 4, NULL), 0);
	n = rdmap_qp_poll(b->qp[B2B_A], wc, 8);
	ck_assert_int_eq(n, 5);
	for (int k = 0; k < n; k++)
		ck_assert_msg(wc[k].status == RDMAP_WC_WR_FLUSH_ERR &&
				      wc[k].err == IW_ESYS(ETIMEDOUT),
			      "wr %llu: status %d err %d", (unsigned long long)wc[k].wr_id,
			      wc[k].status, wc[k].err);
	b2b_dereg(b, B2B_A, l);
	b2b_destroy(b);
}
END_TEST

/* Replace A by a QP created IDLE, as a connection manager would before MPA ends. */
static void make_a_idle(struct b2b *b, struct rdmap_qp_config *cfg)
{
	*cfg = b->cfg[B2B_A];
	cfg->start_idle = true;
	rdmap_qp_destroy(b->qp[B2B_A]);
	ck_assert_int_eq(rdmap_qp_create(cfg, &b->qp[B2B_A]), IW_OK);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_IDLE);
}

START_TEST(idle_qp_holds_posted_work_until_started)
{
	struct b2b_opts o;
	struct rdmap_qp_config cfg;
	struct rdmap_wc wc;
	struct iovec iov[4];
	size_t bytes;
	struct b2b *b;
	uint8_t src[100], dst[100];
	uint32_t ls, ld;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	make_a_idle(b, &cfg);
	ck_assert_str_eq(rdmap_qp_state_name(RDMAP_QP_IDLE), "IDLE");

	memset(src, 0x5A, sizeof(src));
	ls = b2b_reg(b, B2B_A, src, sizeof(src), 0);
	ld = b2b_reg(b, B2B_B, dst, sizeof(dst), DDP_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 7, dst, sizeof(dst), ld), IW_OK);
	ck_assert_int_eq(
		b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 8, src, sizeof(src), ls),
		IW_OK);
	/* Nothing moves and nothing is accepted while IDLE. */
	ck_assert_int_eq(rdmap_qp_tx_iov(b->qp[B2B_A], iov, 4, &bytes), 0);
	ck_assert_uint_eq(bytes, 0);
	ck_assert_int_eq(rdmap_qp_read_stream(b->qp[B2B_A], "x", 1), IW_ESTATE);
	ck_assert_uint_eq(b2b_pump(b), 0);

	ck_assert_int_eq(rdmap_qp_start(b->qp[B2B_A], NULL), IW_OK);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_RTS);
	ck_assert_int_eq(rdmap_qp_start(b->qp[B2B_A], NULL), IW_ESTATE);
	ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
	ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, sizeof(src));
	ck_assert_mem_eq(dst, src, sizeof(src));
	ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_SEND);
	ck_assert_uint_eq(wc.wr_id, 8);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_B, ld);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

START_TEST(idle_qp_refuses_a_start_beyond_its_capacity_and_flushes_on_close)
{
	struct b2b_opts o;
	struct rdmap_qp_config cfg;
	struct mpa_params big;
	struct rdmap_wc wc;
	struct b2b *b;
	uint8_t buf[64];
	uint32_t l;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	make_a_idle(b, &cfg);
	big = cfg.mpa;
	big.ird = (uint16_t)(cfg.mpa.ird + 1);
	ck_assert_int_eq(rdmap_qp_start(b->qp[B2B_A], &big), IW_EINVAL);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_IDLE);

	l = b2b_reg(b, B2B_A, buf, sizeof(buf), DDP_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(b2b_post_recv(b, B2B_A, 1, buf, sizeof(buf), l), IW_OK);
	ck_assert_int_eq(rdmap_qp_close(b->qp[B2B_A]), IW_OK);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_ERROR);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
	ck_assert_int_eq(wc.status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc.err, IW_ERDMAP_FLUSHED);
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_A]), IW_OK);
	ck_assert_ptr_null(rdmap_qp_term_sent(b->qp[B2B_A]));
	b2b_dereg(b, B2B_A, l);
	b2b_destroy(b);
}
END_TEST

START_TEST(graceful_close_sends_what_is_queued_then_flushes_quietly)
{
	struct b2b_opts o;
	struct rdmap_wc wc;
	struct b2b *b;
	uint8_t src[3][300], dst[3][300], spare[16];
	uint32_t ls, ld, lsp;
	int i;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	memset(src, 0xC3, sizeof(src));
	ls = b2b_reg(b, B2B_A, src, sizeof(src), 0);
	lsp = b2b_reg(b, B2B_A, spare, sizeof(spare), DDP_ACCESS_LOCAL_WRITE);
	ld = b2b_reg(b, B2B_B, dst, sizeof(dst), DDP_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(b2b_post_recv(b, B2B_B, 10 + i, dst[i], sizeof(dst[i]), ld),
				 IW_OK);
		ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, RDMAP_WR_SIGNALED, 20 + i,
					       src[i], sizeof(src[i]), ls),
				 IW_OK);
	}
	ck_assert_int_eq(b2b_post_recv(b, B2B_A, 30, spare, sizeof(spare), lsp), IW_OK);

	ck_assert_int_eq(rdmap_qp_close(b->qp[B2B_A]), IW_OK);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_CLOSING);
	ck_assert_str_eq(rdmap_qp_state_name(RDMAP_QP_CLOSING), "CLOSING");
	ck_assert_int_eq(rdmap_qp_close(b->qp[B2B_A]), IW_ESTATE);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, 0, 99, src[0], 1, ls), IW_ESTATE);
	ck_assert_int_eq(b2b_post_recv(b, B2B_A, 98, spare, 1, lsp), IW_ESTATE);
	ck_assert(!rdmap_qp_tx_done(b->qp[B2B_A]));

	/* What was queued still goes out and completes. */
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(b2b_wait(b, B2B_B, &wc), 1);
		ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, 10 + (uint64_t)i);
		ck_assert_int_eq(b2b_wait(b, B2B_A, &wc), 1);
		ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, 20 + (uint64_t)i);
	}
	ck_assert_mem_eq(dst, src, sizeof(src));
	ck_assert(rdmap_qp_tx_done(b->qp[B2B_A]));

	/* The peer's FIN after ours: a quiet end, the spare receive flushed. */
	rdmap_qp_llp_closed(b->qp[B2B_A]);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_ERROR);
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_A]), IW_OK);
	ck_assert_ptr_null(rdmap_qp_term_sent(b->qp[B2B_A]));
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
	ck_assert_uint_eq(wc.wr_id, 30);
	ck_assert_int_eq(wc.status, RDMAP_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc.err, IW_ERDMAP_FLUSHED);
	ck_assert_int_eq(rdmap_qp_close(b->qp[B2B_A]), IW_ESTATE);
	b2b_dereg(b, B2B_A, ls);
	b2b_dereg(b, B2B_A, lsp);
	b2b_dereg(b, B2B_B, ld);
	b2b_destroy(b);
}
END_TEST

START_TEST(fin_before_a_graceful_close_has_sent_everything_is_an_llp_failure)
{
	struct b2b_opts o;
	struct rdmap_wc wc;
	struct b2b *b;
	uint8_t src[64];
	uint32_t ls;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	ls = b2b_reg(b, B2B_A, src, sizeof(src), 0);
	ck_assert_int_eq(b2b_post_send(b, B2B_A, RDMAP_WR_SEND, 0, 5, src, sizeof(src), ls), IW_OK);
	ck_assert_int_eq(rdmap_qp_close(b->qp[B2B_A]), IW_OK);
	rdmap_qp_llp_closed(b->qp[B2B_A]);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_A]), RDMAP_QP_ERROR);
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_A]), IW_EMPA_CLOSED);
	/* Unsignalled, but a failed WR always completes. */
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_A], &wc, 1), 1);
	ck_assert_uint_eq(wc.wr_id, 5);
	ck_assert_int_eq(wc.status, RDMAP_WC_WR_FLUSH_ERR);
	b2b_dereg(b, B2B_A, ls);
	b2b_destroy(b);
}
END_TEST

/* Segments are self-describing: a tagged segment may arrive between two segments of
 * an untagged message (separate tagged and untagged receive contexts, RFC 5041 §5.3). */
START_TEST(a_send_split_by_a_tagged_write_segment_is_placed_and_delivered)
{
	struct b2b_opts o;
	struct rdmap_wc wc;
	struct ddp_hdr h = {.rsvdulp = rdmap_ctrl_make(RDMAP_OP_SEND), .qn = DDP_QN_SEND, .msn = 1};
	struct ddp_hdr t = {
		.tagged = true, .last = true, .rsvdulp = rdmap_ctrl_make(RDMAP_OP_WRITE)};
	uint8_t seg1[DDP_UNTAGGED_HDR_LEN + 100], seg2[DDP_UNTAGGED_HDR_LEN + 50];
	uint8_t wseg[DDP_TAGGED_HDR_LEN + 64];
	uint8_t rbuf[200], wbuf[64], want[150];
	uint32_t ld, lw;
	struct b2b *b;

	b2b_opts_default(&o);
	b = b2b_create(&o);
	memset(rbuf, 0, sizeof(rbuf));
	memset(wbuf, 0, sizeof(wbuf));
	ld = b2b_reg(b, B2B_B, rbuf, sizeof(rbuf), DDP_ACCESS_LOCAL_WRITE);
	lw = b2b_reg(b, B2B_B, wbuf, sizeof(wbuf), DDP_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(b2b_post_recv(b, B2B_B, 1, rbuf, sizeof(rbuf), ld), IW_OK);

	ck_assert_int_eq(ddp_hdr_encode(&h, seg1, sizeof(seg1)), DDP_UNTAGGED_HDR_LEN);
	memset(seg1 + DDP_UNTAGGED_HDR_LEN, 'a', 100);
	t.stag = lw;
	t.to = (uintptr_t)wbuf;
	ck_assert_int_eq(ddp_hdr_encode(&t, wseg, sizeof(wseg)), DDP_TAGGED_HDR_LEN);
	memset(wseg + DDP_TAGGED_HDR_LEN, 'w', 64);
	h.last = true;
	h.mo = 100;
	ck_assert_int_eq(ddp_hdr_encode(&h, seg2, sizeof(seg2)), DDP_UNTAGGED_HDR_LEN);
	memset(seg2 + DDP_UNTAGGED_HDR_LEN, 'b', 50);

	ck_assert_int_ge(b2b_inject(b, B2B_A, seg1, sizeof(seg1)), 0);
	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_B], &wc, 1), 0); /* not delivered yet */
	ck_assert_int_ge(b2b_inject(b, B2B_A, wseg, sizeof(wseg)), 0);
	ck_assert_int_ge(b2b_inject(b, B2B_A, seg2, sizeof(seg2)), 0);

	ck_assert_int_eq(rdmap_qp_poll(b->qp[B2B_B], &wc, 1), 1);
	ck_assert_int_eq(wc.status, RDMAP_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, RDMAP_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 150);
	memset(want, 'a', 100);
	memset(want + 100, 'b', 50);
	ck_assert_mem_eq(rbuf, want, sizeof(want));
	memset(want, 'w', 64);
	ck_assert_mem_eq(wbuf, want, 64);
	ck_assert_int_eq(rdmap_qp_state(b->qp[B2B_B]), RDMAP_QP_RTS);
	ck_assert_int_eq(rdmap_qp_error(b->qp[B2B_B]), IW_OK);
	b2b_dereg(b, B2B_B, ld);
	b2b_dereg(b, B2B_B, lw);
	b2b_check_clean(b, RDMAP_QP_RTS);
	b2b_destroy(b);
}
END_TEST

static Suite *rdmap_qp_suite(void)
{
	Suite *s = suite_create("rdmap_qp");
	TCase *ops = tcase_create("operations");
	TCase *big = tcase_create("large");
	TCase *misc = tcase_create("behaviour");

	tcase_set_timeout(ops, 300);
	tcase_add_loop_test(ops, send_delivers_every_size_with_every_crc_and_marker_setting, 0, 8);
	tcase_add_loop_test(ops, send_with_solicited_event_sets_solicited_in_the_receive_completion,
			    0, 8);
	tcase_add_loop_test(ops, send_with_invalidate_invalidates_the_peer_stag, 0, 8);
	tcase_add_loop_test(ops, send_with_solicited_event_and_invalidate_does_both, 0, 8);
	tcase_add_loop_test(ops, rdma_write_places_data_before_the_following_send_arrives, 0, 8);
	tcase_add_loop_test(ops, rdma_read_fetches_peer_memory_of_every_size, 0, 8);
	tcase_add_test(ops, operations_work_with_one_shared_stag_table);
	tcase_add_loop_test(ops, receive_into_place_delivers_every_op_size_and_split, 0, 12);
	tcase_add_loop_test(ops, large_segments_go_into_place_with_the_default_thresholds, 0, 12);
	suite_add_tcase(s, ops);

	tcase_set_timeout(big, 300);
	tcase_add_loop_test(big, sixteen_mib_messages_arrive_intact, 0, BIG_OPS * 4);
	tcase_add_loop_test(big, sixteen_mib_messages_with_markers_one_way_arrive_intact, 0,
			    BIG_OPS * 2);
	suite_add_tcase(s, big);

	tcase_add_test(misc, unsignalled_work_requests_produce_no_completion);
	tcase_add_test(misc, send_with_invalidate_makes_a_later_rdma_write_to_that_stag_fail);
	tcase_add_loop_test(misc, p2p_with_each_rtr_form_opens_both_directions, 0, 9);
	tcase_add_loop_test(misc, more_reads_than_ord_all_complete_and_never_exceed_ord_on_the_wire,
			    0, 3);
	tcase_add_loop_test(misc, read_rtr_does_not_take_an_ird_slot_from_the_reads_behind_it, 0,
			    3);
	tcase_add_loop_test(misc, fenced_write_waits_for_the_earlier_read_to_complete, 0, 3);
	tcase_add_test(misc, unfenced_write_racing_an_earlier_read_keeps_the_connection_up);
	tcase_add_loop_test(misc, multi_sge_send_gathers_and_multi_sge_receive_scatters, 0, 3);
	tcase_add_test(misc, flush_completes_every_posted_work_request_with_flush_error);
	tcase_add_test(misc, llp_closed_flushes_every_posted_work_request);
	tcase_add_test(misc, llp_failed_flushes_with_the_sockets_reason_and_sends_no_terminate);
	tcase_add_test(misc, a_send_split_by_a_tagged_write_segment_is_placed_and_delivered);
	tcase_add_test(misc, idle_qp_holds_posted_work_until_started);
	tcase_add_test(misc, idle_qp_refuses_a_start_beyond_its_capacity_and_flushes_on_close);
	tcase_add_test(misc, graceful_close_sends_what_is_queued_then_flushes_quietly);
	tcase_add_test(misc, fin_before_a_graceful_close_has_sent_everything_is_an_llp_failure);
	suite_add_tcase(s, misc);
	return s;
}

TH_MAIN(rdmap_qp_suite)
