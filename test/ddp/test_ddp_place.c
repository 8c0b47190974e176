/* SPDX-License-Identifier: MIT */
/*
 * test_ddp_place.c - receive-side placement checks (RFC 5041 §5.2, §7.1,
 * §7.2): each tagged check result maps to its DDP error, zero-length tagged
 * segments are not checked, and untagged segments are checked in the order
 * QN, MSN, buffer, MO, length, with the queue advancing (and its MSN wrapping
 * mod 2^32) on the last segment of each message.
 */
#include <iwarp/ddp.h>

#include "iw_bytes.h"
#include "th.h"

#define PD   3u
#define BASE 0x10000u
#define LEN  64u

static uint8_t mem[LEN];

struct fixture {
	struct ddp_stag_table *t;
	uint32_t rw;	/* remote write */
	uint32_t ro;	/* remote read only */
	uint32_t other; /* another PD */
};

static void fixture_init(struct fixture *f)
{
	f->t = ddp_stag_table_create(8, 42);
	ck_assert_ptr_nonnull(f->t);
	ck_assert_int_eq(ddp_stag_reg(f->t, PD, mem, BASE, LEN, DDP_ACCESS_REMOTE_WRITE, &f->rw),
			 IW_OK);
	ck_assert_int_eq(ddp_stag_reg(f->t, PD, mem, BASE, LEN, DDP_ACCESS_REMOTE_READ, &f->ro),
			 IW_OK);
	ck_assert_int_eq(
		ddp_stag_reg(f->t, PD + 1, mem, BASE, LEN, DDP_ACCESS_REMOTE_WRITE, &f->other),
		IW_OK);
}

static struct ddp_hdr tagged(uint32_t stag, uint64_t to)
{
	struct ddp_hdr h = {
		.tagged = true, .last = true, .dv = DDP_VERSION, .stag = stag, .to = to};

	return h;
}

static struct ddp_hdr untagged(uint32_t qn, uint32_t msn, uint32_t mo, bool last)
{
	struct ddp_hdr h = {.last = last, .dv = DDP_VERSION, .qn = qn, .msn = msn, .mo = mo};

	return h;
}

START_TEST(tagged_valid_segment_resolves_its_address)
{
	struct fixture f;
	struct ddp_hdr h;
	enum ddp_stag_check why = DDP_STAG_WRAP;
	void *dst = NULL;

	fixture_init(&f);
	h = tagged(f.rw, BASE + 8);
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, DDP_ACCESS_REMOTE_WRITE, 16, &dst, &why),
			 IW_OK);
	ck_assert_ptr_eq(dst, mem + 8);
	ck_assert_int_eq(why, DDP_STAG_OK);
	/* 0 asks for the default right, remote write. */
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, 16, &dst, NULL), IW_OK);
	h.stag = f.ro;
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, 16, &dst, NULL), IW_EDDP_T_INVALID_STAG);
	/* RDMAP may ask for another right, e.g. reading the source of a Read Response. */
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, DDP_ACCESS_REMOTE_READ, LEN - 8, &dst, NULL),
			 IW_OK);
	ddp_stag_table_destroy(f.t);
}
END_TEST

struct tagged_case {
	uint32_t stag;
	uint64_t to;
	uint32_t len;
	int err;
	enum ddp_stag_check why;
};

START_TEST(tagged_each_failure_maps_to_its_ddp_error)
{
	struct fixture f;
	const uint32_t w = DDP_ACCESS_REMOTE_WRITE;
	struct tagged_case c[5];

	fixture_init(&f);
	c[0] = (struct tagged_case){0, BASE, 1, IW_EDDP_T_INVALID_STAG, DDP_STAG_INVALID};
	c[1] = (struct tagged_case){f.other, BASE, 1, IW_EDDP_T_STREAM, DDP_STAG_PD};
	c[2] = (struct tagged_case){f.ro, BASE, 1, IW_EDDP_T_INVALID_STAG, DDP_STAG_ACCESS};
	c[3] = (struct tagged_case){f.rw, BASE + LEN - 1, 2, IW_EDDP_T_BOUNDS, DDP_STAG_BOUNDS};
	c[4] = (struct tagged_case){f.rw, UINT64_MAX - 3, 5, IW_EDDP_T_TO_WRAP, DDP_STAG_WRAP};

	for (size_t i = 0; i < IW_ARRAY_SIZE(c); i++) {
		struct ddp_hdr h = tagged(c[i].stag, c[i].to);
		enum ddp_stag_check why = DDP_STAG_OK;
		void *dst = mem;

		ck_assert_msg(ddp_tagged_check(f.t, &h, PD, w, c[i].len, &dst, &why) == c[i].err,
			      "case %zu", i);
		ck_assert_int_eq(why, c[i].why);
		ck_assert_ptr_null(dst);
	}
	ddp_stag_table_destroy(f.t);
}
END_TEST

START_TEST(tagged_range_is_to_up_to_to_plus_payload)
{
	struct fixture f;
	struct ddp_hdr h;

	fixture_init(&f);
	h = tagged(f.rw, BASE);
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, LEN, NULL, NULL), IW_OK);
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, LEN + 1, NULL, NULL), IW_EDDP_T_BOUNDS);
	h.to = BASE - 1;
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, 1, NULL, NULL), IW_EDDP_T_BOUNDS);
	ddp_stag_table_destroy(f.t);
}
END_TEST

START_TEST(tagged_zero_length_segment_is_not_checked)
{
	struct fixture f;
	struct ddp_hdr h = tagged(0, UINT64_MAX);
	enum ddp_stag_check why = DDP_STAG_WRAP;
	void *dst = mem;

	fixture_init(&f);
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, 0, &dst, &why), IW_OK);
	ck_assert_ptr_null(dst);
	ck_assert_int_eq(why, DDP_STAG_OK);
	h = tagged(f.other, 0);
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, 0, &dst, &why), IW_OK);
	ddp_stag_table_destroy(f.t);
}
END_TEST

START_TEST(tagged_check_refuses_an_untagged_header)
{
	struct fixture f;
	struct ddp_hdr h = untagged(0, 1, 0, true);

	fixture_init(&f);
	ck_assert_int_eq(ddp_tagged_check(f.t, &h, PD, 0, 1, NULL, NULL), IW_EINVAL);
	ddp_stag_table_destroy(f.t);
}
END_TEST

START_TEST(untagged_queue_starts_at_msn_1)
{
	struct ddp_untagged_queue q = {.msn = 9, .placed = 9, .in_message = true};

	ddp_untagged_queue_init(&q);
	ck_assert_uint_eq(q.msn, DDP_MSN_FIRST);
	ck_assert_uint_eq(q.placed, 0);
	ck_assert(!q.in_message);
}
END_TEST

START_TEST(untagged_invalid_qn)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h = untagged(DDP_QN_COUNT, 1, 0, true);

	ddp_untagged_queue_init(&q);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, DDP_QN_COUNT, 16, 4), IW_EDDP_U_QN);
	h.qn = UINT32_MAX;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, DDP_QN_COUNT, 16, 4), IW_EDDP_U_QN);
	h.qn = DDP_QN_TERMINATE;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, DDP_QN_COUNT, 16, 4), IW_OK);
	/* QN is checked before everything else. */
	h = untagged(DDP_QN_COUNT, 77, 5, true);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, DDP_QN_COUNT, -1, 100), IW_EDDP_U_QN);
}
END_TEST

START_TEST(untagged_msn_too_high_or_too_low_is_out_of_range)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h;

	ddp_untagged_queue_init(&q);
	q.msn = 5;
	h = untagged(0, 6, 0, true);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 16, 4), IW_EDDP_U_MSN_RANGE);
	h.msn = 4;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 16, 4), IW_EDDP_U_MSN_RANGE);
	h.msn = 0;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 16, 4), IW_EDDP_U_MSN_RANGE);
	/* MSN is checked before the buffer. */
	h.msn = 6;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, -1, 4), IW_EDDP_U_MSN_RANGE);
	h.msn = 5;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 16, 4), IW_OK);
}
END_TEST

START_TEST(untagged_without_a_posted_buffer_is_no_buffer)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h = untagged(0, 1, 0, true);

	ddp_untagged_queue_init(&q);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, -1, 0), IW_EDDP_U_NO_BUFFER);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, INT64_MIN, 4), IW_EDDP_U_NO_BUFFER);
	/* A posted zero-length buffer is a buffer. */
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 0, 0), IW_OK);
}
END_TEST

START_TEST(untagged_mo_must_continue_the_message)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h = untagged(0, 1, 4, false);

	ddp_untagged_queue_init(&q);
	/* A gap at the start. */
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 64, 4), IW_EDDP_U_MO);
	h.mo = 0;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 64, 8), IW_OK);
	ck_assert(!ddp_untagged_advance(&q, &h, 8));
	ck_assert(q.in_message);
	/* A gap, a repeat and an overlap after the first segment. */
	h.mo = 9;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 64, 4), IW_EDDP_U_MO);
	h.mo = 0;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 64, 4), IW_EDDP_U_MO);
	h.mo = 7;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 64, 4), IW_EDDP_U_MO);
	h.mo = 8;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 64, 4), IW_OK);
}
END_TEST

START_TEST(untagged_length_against_the_buffer)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h = untagged(0, 1, 0, true);

	ddp_untagged_queue_init(&q);
	/* Exactly filling the buffer is fine; one octet more is too long. */
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, 32), IW_OK);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, 33), IW_EDDP_U_TOO_LONG);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 0, 1), IW_EDDP_U_TOO_LONG);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, UINT32_MAX), IW_EDDP_U_TOO_LONG);

	/* MO beyond the buffer, in a later segment; the sum is done in 64 bits. */
	h.last = false;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, 30), IW_OK);
	ddp_untagged_advance(&q, &h, 30);
	h.mo = 30;
	h.last = true;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, 2), IW_OK);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, 3), IW_EDDP_U_TOO_LONG);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, UINT32_MAX - 29), IW_EDDP_U_TOO_LONG);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 32, UINT32_MAX), IW_EDDP_U_TOO_LONG);
}
END_TEST

START_TEST(untagged_message_cannot_continue_past_a_32_bit_mo)
{
	struct ddp_untagged_queue q = {.msn = 1, .placed = UINT32_MAX - 3, .in_message = true};
	struct ddp_hdr h = untagged(0, 1, UINT32_MAX - 3, false);
	const int64_t big = (int64_t)1 << 40;

	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, big, 3), IW_OK);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, big, 4), IW_EDDP_U_TOO_LONG);
	h.last = true;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, big, 4), IW_OK);
}
END_TEST

START_TEST(untagged_multi_segment_message_then_next_msn)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h;
	uint32_t total = 0;
	int segs = 0;
	bool done = false;

	ddp_untagged_queue_init(&q);
	for (int m = 0; m < 3; m++) {
		/* Hand-built segments of 10 + 10 + 5 octets, all carrying the same MSN. */
		static const uint32_t lens[] = {10, 10, 5};

		total = 0;
		for (size_t i = 0; i < IW_ARRAY_SIZE(lens); i++) {
			h = untagged(DDP_QN_SEND, DDP_MSN_FIRST + (uint32_t)m, total,
				     i + 1 == IW_ARRAY_SIZE(lens));
			ck_assert_int_eq(ddp_untagged_check(&q, &h, DDP_QN_COUNT, 25, lens[i]),
					 IW_OK);
			done = ddp_untagged_advance(&q, &h, lens[i]);
			ck_assert(done == h.last);
			ck_assert(q.in_message == !h.last);
			total += lens[i];
			segs++;
		}
		ck_assert_uint_eq(total, 25);
		ck_assert_uint_eq(q.msn, DDP_MSN_FIRST + (uint32_t)m + 1);
		ck_assert_uint_eq(q.placed, 0);
		/* The finished message's MSN is now out of range. */
		ck_assert_int_eq(ddp_untagged_check(&q, &h, DDP_QN_COUNT, 25, 0),
				 IW_EDDP_U_MSN_RANGE);
	}
	ck_assert_int_eq(segs, 9);
}
END_TEST

START_TEST(untagged_msn_wraps_after_0xffffffff)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h = untagged(0, UINT32_MAX, 0, true);

	ddp_untagged_queue_init(&q);
	q.msn = UINT32_MAX;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 8, 8), IW_OK);
	ck_assert(ddp_untagged_advance(&q, &h, 8));
	ck_assert_uint_eq(q.msn, 0);
	h.msn = 0;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 8, 8), IW_OK);
	ck_assert(ddp_untagged_advance(&q, &h, 8));
	ck_assert_uint_eq(q.msn, 1);
}
END_TEST

START_TEST(untagged_zero_length_message)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h = untagged(0, 1, 0, true);

	ddp_untagged_queue_init(&q);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 0, 0), IW_OK);
	ck_assert(ddp_untagged_advance(&q, &h, 0));
	ck_assert_uint_eq(q.msn, 2);
	ck_assert_uint_eq(q.placed, 0);
	ck_assert(!q.in_message);
	/* Even a zero-length message needs a posted buffer. */
	h.msn = 2;
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, -1, 0), IW_EDDP_U_NO_BUFFER);
}
END_TEST

START_TEST(untagged_check_refuses_a_tagged_header)
{
	struct ddp_untagged_queue q;
	struct ddp_hdr h = tagged(0x100, 0);

	ddp_untagged_queue_init(&q);
	ck_assert_int_eq(ddp_untagged_check(&q, &h, 1, 8, 0), IW_EINVAL);
}
END_TEST

static Suite *ddp_place_suite(void)
{
	Suite *s = suite_create("ddp_place");
	TCase *tc = tcase_create("core");

	suite_add_tcase(s, tc);
	tcase_add_test(tc, tagged_valid_segment_resolves_its_address);
	tcase_add_test(tc, tagged_each_failure_maps_to_its_ddp_error);
	tcase_add_test(tc, tagged_range_is_to_up_to_to_plus_payload);
	tcase_add_test(tc, tagged_zero_length_segment_is_not_checked);
	tcase_add_test(tc, tagged_check_refuses_an_untagged_header);
	tcase_add_test(tc, untagged_queue_starts_at_msn_1);
	tcase_add_test(tc, untagged_invalid_qn);
	tcase_add_test(tc, untagged_msn_too_high_or_too_low_is_out_of_range);
	tcase_add_test(tc, untagged_without_a_posted_buffer_is_no_buffer);
	tcase_add_test(tc, untagged_mo_must_continue_the_message);
	tcase_add_test(tc, untagged_length_against_the_buffer);
	tcase_add_test(tc, untagged_message_cannot_continue_past_a_32_bit_mo);
	tcase_add_test(tc, untagged_multi_segment_message_then_next_msn);
	tcase_add_test(tc, untagged_msn_wraps_after_0xffffffff);
	tcase_add_test(tc, untagged_zero_length_message);
	tcase_add_test(tc, untagged_check_refuses_a_tagged_header);
	return s;
}

TH_MAIN(ddp_place_suite)
