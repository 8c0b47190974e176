/* SPDX-License-Identifier: MIT */
/*
 * test_iw_common.c - the shared helpers of common/: byte-order get/put, the
 * bounded cursor with its sticky error, iovec walking, the common error codes
 * (with IW_ESYS), the timer heap and the allocator hook.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/iw_err.h>

#include "iw_alloc.h"
#include "iw_bytes.h"
#include "iw_cursor.h"
#include "iw_iov.h"
#include "iw_timer.h"
#include "th.h"

/* ---------------------------------------------------------------------- */
/* iw_bytes                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(bytes_big_endian_puts_most_significant_octet_first)
{
	uint8_t b[8];

	iw_put_be16(b, 0x1234);
	ck_assert_mem_eq(b, "\x12\x34", 2);
	iw_put_be32(b, 0x89ABCDEFu);
	ck_assert_mem_eq(b, "\x89\xAB\xCD\xEF", 4);
	iw_put_be64(b, 0x0102030405060708ull);
	ck_assert_mem_eq(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	iw_put_le32(b, 0x83992352u); /* RFC 5044 §4.4 figure 5's CRC */
	ck_assert_mem_eq(b, "\x52\x23\x99\x83", 4);
}
END_TEST

START_TEST(bytes_get_reads_back_what_put_wrote)
{
	struct th_rng r;
	uint8_t b[8];

	th_rng_init(&r, th_seed_from_env());
	for (int i = 0; i < 10000; i++) {
		uint64_t v = th_rng_next(&r);

		iw_put_be16(b, (uint16_t)v);
		ck_assert_uint_eq(iw_get_be16(b), (uint16_t)v);
		iw_put_be32(b, (uint32_t)v);
		ck_assert_uint_eq(iw_get_be32(b), (uint32_t)v);
		iw_put_be64(b, v);
		ck_assert_uint_eq(iw_get_be64(b), v);
		iw_put_le32(b, (uint32_t)v);
		ck_assert_uint_eq(iw_get_le32(b), (uint32_t)v);
		/* The two 32-bit orders are each other's octet reversal. */
		ck_assert_uint_eq(iw_get_be32(b), __builtin_bswap32((uint32_t)v));
	}
	ck_assert_uint_eq(iw_get_be16((const uint8_t *)"\xFF\xFE"), 0xFFFE);
	ck_assert_uint_eq(iw_get_be32((const uint8_t *)"\xFF\x00\x00\x01"), 0xFF000001u);
}
END_TEST

START_TEST(bytes_min_max_and_array_size)
{
	static const int a[7] = {0};

	ck_assert_int_eq(IW_MIN(3, 9), 3);
	ck_assert_int_eq(IW_MIN(-3, -9), -9);
	ck_assert_int_eq(IW_MAX(3, 9), 9);
	ck_assert_uint_eq(IW_ARRAY_SIZE(a), 7);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* iw_cursor                                                               */
/* ---------------------------------------------------------------------- */

START_TEST(cursor_reads_fields_in_order_within_bounds)
{
	static const uint8_t in[] = {0xAA, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
				     0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 'x',  'y'};
	struct iw_cursor c;

	iw_cursor_init(&c, in, sizeof(in));
	ck_assert_uint_eq(iw_cursor_left(&c), sizeof(in));
	ck_assert_uint_eq(iw_cursor_get8(&c), 0xAA);
	ck_assert_uint_eq(iw_cursor_get_be16(&c), 0x0102);
	ck_assert_uint_eq(iw_cursor_get_be32(&c), 0x03040506u);
	ck_assert_uint_eq(iw_cursor_get_be64(&c), 0x0708090A0B0C0D0Eull);
	ck_assert_uint_eq(iw_cursor_get_be16(&c), 0x0F10);
	const uint8_t *p = iw_cursor_get_bytes(&c, 2);
	ck_assert_ptr_eq(p, in + 17);
	ck_assert_uint_eq(iw_cursor_left(&c), 0);
	ck_assert_int_eq(c.err, IW_OK);
	/* Zero octets at the very end still fit. */
	ck_assert_ptr_nonnull(iw_cursor_get_bytes(&c, 0));
	ck_assert_int_eq(c.err, IW_OK);
}
END_TEST

START_TEST(cursor_read_overrun_is_sticky_and_returns_zeros)
{
	static const uint8_t in[] = {0x11, 0x22, 0x33};
	struct iw_cursor c;

	iw_cursor_init(&c, in, sizeof(in));
	ck_assert_uint_eq(iw_cursor_get8(&c), 0x11);
	/* Four octets wanted, two left: error, and nothing is consumed. */
	ck_assert_uint_eq(iw_cursor_get_be32(&c), 0);
	ck_assert_int_eq(c.err, IW_EAGAIN);
	ck_assert_uint_eq(c.off, 1);
	ck_assert_uint_eq(iw_cursor_left(&c), 0);
	/* A read that would fit on its own still fails once the error is set. */
	ck_assert_uint_eq(iw_cursor_get8(&c), 0);
	ck_assert_uint_eq(iw_cursor_get_be16(&c), 0);
	ck_assert_uint_eq(iw_cursor_get_be64(&c), 0);
	ck_assert_ptr_null(iw_cursor_get_bytes(&c, 0));
	ck_assert_int_eq(c.err, IW_EAGAIN);
}
END_TEST

START_TEST(cursor_take_rejects_lengths_that_would_wrap)
{
	static const uint8_t in[8];
	struct iw_cursor c;

	iw_cursor_init(&c, in, sizeof(in));
	iw_cursor_get8(&c);
	ck_assert_ptr_null(iw_cursor_get_bytes(&c, SIZE_MAX));
	ck_assert_int_eq(c.err, IW_EAGAIN);
	iw_cursor_init(&c, in, sizeof(in));
	ck_assert_ptr_null(iw_cursor_take(&c, 9, IW_ERANGE));
	ck_assert_int_eq(c.err, IW_ERANGE); /* the caller's error code is the one kept */
}
END_TEST

START_TEST(cursor_writes_fields_big_endian)
{
	uint8_t out[19];
	struct iw_cursor c;

	memset(out, 0xEE, sizeof(out));
	iw_cursor_init(&c, out, sizeof(out));
	iw_cursor_put8(&c, 0xAA);
	iw_cursor_put_be16(&c, 0x0102);
	iw_cursor_put_be32(&c, 0x03040506u);
	iw_cursor_put_be64(&c, 0x0708090A0B0C0D0Eull);
	iw_cursor_put_be16(&c, 0x0F10);
	iw_cursor_put_bytes(&c, "xy", 2);
	iw_cursor_put_bytes(&c, NULL, 0);
	ck_assert_int_eq(c.err, IW_OK);
	ck_assert_uint_eq(c.off, sizeof(out));
	ck_assert_mem_eq(out,
			 "\xAA\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0A\x0B\x0C\x0D\x0E\x0F\x10xy",
			 sizeof(out));
}
END_TEST

START_TEST(cursor_write_overflow_is_sticky_and_leaves_the_buffer_alone)
{
	uint8_t out[6];
	struct iw_cursor c;

	memset(out, 0xEE, sizeof(out));
	iw_cursor_init(&c, out, sizeof(out));
	iw_cursor_put_be32(&c, 0x01020304u);
	iw_cursor_put_be32(&c, 0x05060708u); /* does not fit */
	ck_assert_int_eq(c.err, IW_ENOSPC);
	iw_cursor_put8(&c, 0x09); /* would fit, but the error is sticky */
	iw_cursor_put_be16(&c, 0x0A0B);
	iw_cursor_put_be64(&c, 1);
	iw_cursor_put_bytes(&c, "z", 1);
	ck_assert_int_eq(c.err, IW_ENOSPC);
	ck_assert_uint_eq(c.off, 4);
	ck_assert_mem_eq(out, "\x01\x02\x03\x04\xEE\xEE", 6);
}
END_TEST

START_TEST(cursor_on_an_empty_buffer_fails_the_first_access)
{
	struct iw_cursor c;

	iw_cursor_init(&c, NULL, 0);
	ck_assert_uint_eq(iw_cursor_left(&c), 0);
	ck_assert_uint_eq(iw_cursor_get8(&c), 0);
	ck_assert_int_eq(c.err, IW_EAGAIN);
	iw_cursor_init(&c, NULL, 0);
	iw_cursor_put8(&c, 1);
	ck_assert_int_eq(c.err, IW_ENOSPC);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* iw_iov                                                                  */
/* ---------------------------------------------------------------------- */

static char iov_data[] = "abcdefghijklmnop"; /* 16 octets, split below */

/* "abc" | "" | "defghij" | "" | "" | "klmnop" */
static void iov_fill(struct iovec *v)
{
	v[0] = (struct iovec){iov_data, 3};
	v[1] = (struct iovec){iov_data + 3, 0};
	v[2] = (struct iovec){iov_data + 3, 7};
	v[3] = (struct iovec){NULL, 0};
	v[4] = (struct iovec){iov_data + 10, 0};
	v[5] = (struct iovec){iov_data + 10, 6};
}

START_TEST(iov_total_sums_lengths_including_empty_ones)
{
	struct iovec v[6];

	iov_fill(v);
	ck_assert_uint_eq(iw_iov_total(v, 6), 16);
	ck_assert_uint_eq(iw_iov_total(v, 2), 3);
	ck_assert_uint_eq(iw_iov_total(v, 0), 0);
	ck_assert_uint_eq(iw_iov_total(v + 3, 2), 0);
}
END_TEST

START_TEST(iov_advance_inside_one_iovec_trims_it_in_place)
{
	struct iovec v[6];
	int first = 0, cnt = 6;

	iov_fill(v);
	iw_iov_advance(v, &first, &cnt, 2);
	ck_assert_int_eq(first, 0);
	ck_assert_int_eq(cnt, 6);
	ck_assert_ptr_eq(v[0].iov_base, iov_data + 2);
	ck_assert_uint_eq(v[0].iov_len, 1);
	ck_assert_uint_eq(iw_iov_total(v + first, cnt), 14);
}
END_TEST

START_TEST(iov_advance_across_iovecs_skips_whole_and_empty_ones)
{
	struct iovec v[6];
	int first = 0, cnt = 6;

	iov_fill(v);
	/* Exactly the first iovec: the empty one behind it is dropped too. */
	iw_iov_advance(v, &first, &cnt, 3);
	ck_assert_int_eq(first, 2);
	ck_assert_int_eq(cnt, 4);
	/* Across the rest of "defghij" and the two empties into "klmnop". */
	iw_iov_advance(v, &first, &cnt, 9);
	ck_assert_int_eq(first, 5);
	ck_assert_int_eq(cnt, 1);
	ck_assert_ptr_eq(v[5].iov_base, iov_data + 12);
	ck_assert_uint_eq(v[5].iov_len, 4);
	iw_iov_advance(v, &first, &cnt, 0);
	ck_assert_int_eq(first, 5);
	iw_iov_advance(v, &first, &cnt, 4);
	ck_assert_int_eq(cnt, 0);
	ck_assert_int_eq(first, 6);
}
END_TEST

START_TEST(iov_advance_everything_at_once_ends_with_no_iovecs)
{
	struct iovec v[6];
	int first = 0, cnt = 6;

	iov_fill(v);
	iw_iov_advance(v, &first, &cnt, 16);
	ck_assert_int_eq(cnt, 0);
	/* Only empties left also counts as done. */
	iov_fill(v);
	first = 3;
	cnt = 2;
	iw_iov_advance(v, &first, &cnt, 0);
	ck_assert_int_eq(cnt, 0);
}
END_TEST

START_TEST(iov_advance_in_random_steps_matches_the_flat_buffer)
{
	struct th_rng r;

	th_rng_init(&r, th_seed_from_env() ^ 0x10F);
	for (int t = 0; t < 2000; t++) {
		struct iovec v[6];
		int first = 0, cnt = 6;
		size_t done = 0;

		iov_fill(v);
		while (done < 16) {
			size_t n = (size_t)th_rng_range(&r, 0, 16 - done);
			char got[16];

			iw_iov_advance(v, &first, &cnt, n);
			done += n;
			ck_assert_uint_eq(iw_iov_total(v + first, cnt), 16 - done);
			ck_assert_uint_eq(iw_iov_copy_out(got, v + first, cnt, 0, sizeof(got)),
					  16 - done);
			ck_assert_mem_eq(got, iov_data + done, 16 - done);
			if (cnt > 0)
				ck_assert_uint_ne(v[first].iov_len, 0);
		}
		ck_assert_int_eq(cnt, 0);
	}
}
END_TEST

START_TEST(iov_copy_out_from_any_offset_and_length)
{
	struct iovec v[6];
	char out[20];

	iov_fill(v);
	for (size_t off = 0; off <= 17; off++) {
		for (size_t len = 0; len <= 18; len++) {
			size_t want = off >= 16 ? 0 : IW_MIN(len, 16 - off);

			memset(out, '#', sizeof(out));
			ck_assert_uint_eq(iw_iov_copy_out(out, v, 6, off, len), want);
			ck_assert_mem_eq(out, iov_data + IW_MIN(off, 16), want);
			ck_assert_int_eq(out[want], '#'); /* nothing past the copied part */
		}
	}
}
END_TEST

START_TEST(iov_iter_yields_contiguous_pieces_in_order)
{
	struct iovec v[6];
	struct iw_iov_iter it;
	const void *p = NULL;

	iov_fill(v);
	iw_iov_iter_init(&it, v, 6);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 2, &p), 2);
	ck_assert_ptr_eq(p, iov_data);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 100, &p), 1); /* rest of "abc" */
	ck_assert_ptr_eq(p, iov_data + 2);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 100, &p), 7); /* empty skipped */
	ck_assert_ptr_eq(p, iov_data + 3);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 0, &p), 0); /* max 0 consumes nothing */
	ck_assert_uint_eq(iw_iov_iter_next(&it, 5, &p), 5); /* two empties skipped */
	ck_assert_ptr_eq(p, iov_data + 10);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 5, &p), 1);
	ck_assert_ptr_eq(p, iov_data + 15);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 5, &p), 0);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 5, &p), 0);
}
END_TEST

START_TEST(iov_iter_in_random_pieces_reassembles_the_data)
{
	struct th_rng r;

	th_rng_init(&r, th_seed_from_env() ^ 0x17E);
	for (int t = 0; t < 2000; t++) {
		struct iovec v[6];
		struct iw_iov_iter it;
		char got[16];
		size_t have = 0, n;
		const void *p;

		iov_fill(v);
		iw_iov_iter_init(&it, v, 6);
		while ((n = iw_iov_iter_next(&it, (size_t)th_rng_range(&r, 1, 8), &p)) > 0) {
			ck_assert_uint_le(have + n, sizeof(got));
			memcpy(got + have, p, n);
			have += n;
		}
		ck_assert_uint_eq(have, 16);
		ck_assert_mem_eq(got, iov_data, 16);
	}
}
END_TEST

START_TEST(iov_iter_over_no_iovecs_or_only_empty_ones_ends_at_once)
{
	struct iovec v[6];
	struct iw_iov_iter it;
	const void *p = NULL;

	iov_fill(v);
	iw_iov_iter_init(&it, v, 0);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 10, &p), 0);
	iw_iov_iter_init(&it, v + 3, 2);
	ck_assert_uint_eq(iw_iov_iter_next(&it, 10, &p), 0);
	ck_assert_ptr_null(p);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* iw_err                                                                  */
/* ---------------------------------------------------------------------- */

/* The common codes; the whole plan (every layer's codes, from the headers
 * themselves) is checked by test/common/err_plan.py. */
static const struct {
	int code;
	const char *name;
} err_codes[] = {
	{IW_OK, "IW_OK"},	  {IW_ENOMEM, "IW_ENOMEM"},	  {IW_EINVAL, "IW_EINVAL"},
	{IW_EAGAIN, "IW_EAGAIN"}, {IW_ENOSPC, "IW_ENOSPC"},	  {IW_ERANGE, "IW_ERANGE"},
	{IW_ESTATE, "IW_ESTATE"}, {IW_ETIMEDOUT, "IW_ETIMEDOUT"}, {IW_ENOTSUP, "IW_ENOTSUP"},
};

START_TEST(err_every_code_has_a_text_and_its_own_name)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(err_codes); i++) {
		const char *text = iw_strerror(err_codes[i].code);

		ck_assert_ptr_nonnull(text);
		ck_assert_msg(strcmp(text, "unknown error") != 0, "%s has no text",
			      err_codes[i].name);
		ck_assert_uint_gt(strlen(text), 3);
		ck_assert_str_eq(iw_errname(err_codes[i].code), err_codes[i].name);
		ck_assert_int_le(err_codes[i].code, 0);
		ck_assert_int_ge(err_codes[i].code, -99);
		for (size_t j = 0; j < i; j++)
			ck_assert_int_ne(err_codes[i].code, err_codes[j].code);
	}
}
END_TEST

START_TEST(err_system_errors_have_their_own_place)
{
	/* -ETIMEDOUT and -ECONNREFUSED are MPA codes; IW_ESYS keeps them apart. */
	ck_assert_int_eq(iw_err_sys(ETIMEDOUT), -1000 - ETIMEDOUT);
	ck_assert_int_lt(iw_err_sys(1), -999);
	ck_assert_int_eq(iw_err_sys(0), 0);
	ck_assert_int_eq(iw_err_sys(-5), IW_ESYS_UNKNOWN);
	ck_assert_int_eq(iw_err_sys(IW_ESYS_ERRNO_MAX + 1), IW_ESYS_UNKNOWN);
	ck_assert_int_eq(iw_err_errno(iw_err_sys(ECONNREFUSED)), ECONNREFUSED);
	ck_assert_int_eq(iw_err_errno(IW_ESYS(IW_ESYS_ERRNO_MAX)), IW_ESYS_ERRNO_MAX);
	ck_assert_int_eq(iw_err_errno(IW_ESYS_UNKNOWN), EIO);
	ck_assert_int_eq(iw_err_errno(IW_ETIMEDOUT), 0);
	ck_assert_int_eq(iw_err_errno(-110), 0);
	ck_assert_int_eq(iw_err_errno(-999), 0);
	ck_assert_int_eq(iw_err_errno(IW_ESYS(IW_ESYS_ERRNO_MAX) - 1), 0);
	ck_assert_int_eq(iw_err_errno(0), 0);
	ck_assert_str_eq(iw_errname(iw_err_sys(ETIMEDOUT)), "ETIMEDOUT");
	ck_assert_str_eq(iw_strerror(iw_err_sys(ECONNREFUSED)), "Connection refused");
	ck_assert_str_eq(iw_errname(IW_ESYS_UNKNOWN), "IW_ESYS_UNKNOWN");
	/* an errno glibc does not know */
	ck_assert_str_eq(iw_errname(IW_ESYS(3000)), "IW_E?");
	ck_assert_str_eq(iw_strerror(IW_ESYS(3000)), "unknown error");
}
END_TEST

START_TEST(err_unknown_codes_say_so)
{
	/* common/ names no layer's codes: those are the layers' own (mpa_errname ...) */
	static const int bogus[] = {1,	  42,	-9,   -99,  -109, -110, -117,  -199,	 -213,
				    -299, -307, -399, -400, -600, -999, -5000, INT32_MIN};

	for (size_t i = 0; i < IW_ARRAY_SIZE(bogus); i++) {
		ck_assert_str_eq(iw_strerror(bogus[i]), "unknown error");
		ck_assert_str_eq(iw_errname(bogus[i]), "IW_E?");
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* iw_timer                                                                */
/* ---------------------------------------------------------------------- */

#define TT_N 64

/* A timer under test and what a reference model says of it. */
struct tt {
	struct iw_timer t;
	int idx;
	bool armed;	   /* model */
	uint64_t due, seq; /* model */
};

static struct tt tts[TT_N];
static struct iw_timers tts_set;
static int tt_fired[4 * TT_N * 64];
static int tt_nfired;
static uint64_t tt_seq;

static void tt_fire(struct iw_timer *t, uint64_t now)
{
	struct tt *x = (struct tt *)(void *)t;

	ck_assert(!iw_timer_armed(t));
	ck_assert_uint_le(x->due, now);
	tt_fired[tt_nfired++] = x->idx;
}

static void tt_arm(int i, uint64_t due)
{
	iw_timer_arm(&tts_set, &tts[i].t, due);
	tts[i].armed = true;
	tts[i].due = due;
	tts[i].seq = tt_seq++;
}

/* The model's earliest armed timer (ties: armed first), -1 for none. */
static int tt_model_first(void)
{
	int best = -1;

	for (int i = 0; i < TT_N; i++) {
		if (!tts[i].armed)
			continue;
		if (best < 0 || tts[i].due < tts[best].due ||
		    (tts[i].due == tts[best].due && tts[i].seq < tts[best].seq))
			best = i;
	}
	return best;
}

static void tt_setup(void)
{
	iw_timers_init(&tts_set);
	memset(tts, 0, sizeof(tts));
	for (int i = 0; i < TT_N; i++) {
		iw_timer_init(&tts[i].t, tt_fire);
		tts[i].idx = i;
	}
	tt_nfired = 0;
	tt_seq = 0;
}

START_TEST(timer_fires_in_due_order_and_ties_in_arming_order)
{
	static const uint64_t due[] = {50, 10, 30, 10, 70, 30, 5};
	static const int want[] = {6, 1, 3, 2, 5, 0};

	tt_setup();
	ck_assert_uint_eq(iw_timers_next(&tts_set), IW_TIMER_NONE);
	for (int i = 0; i < 7; i++)
		tt_arm(i, due[i]);
	ck_assert_uint_eq(iw_timers_next(&tts_set), 5);
	ck_assert_uint_eq(iw_timers_run(&tts_set, 4), 0);
	ck_assert_uint_eq(iw_timers_run(&tts_set, 69), 6);
	ck_assert_int_eq(tt_nfired, 6);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(tt_fired[i], want[i]);
	ck_assert_uint_eq(iw_timers_next(&tts_set), 70);
	ck_assert_uint_eq(tts_set.count, 1);
	iw_timer_cancel(&tts_set, &tts[4].t);
	iw_timer_cancel(&tts_set, &tts[4].t); /* twice is harmless */
	ck_assert_uint_eq(iw_timers_next(&tts_set), IW_TIMER_NONE);
	ck_assert_uint_eq(iw_timers_run(&tts_set, UINT64_MAX), 0);
}
END_TEST

/* Arm, re-arm and cancel at random; every run must fire exactly what the
 * model says is due, in the model's order, and next() must agree. */
START_TEST(timer_random_operations_match_a_reference_model)
{
	struct th_rng rng;
	uint64_t now = 0;

	th_rng_init(&rng, th_seed_from_env());
	tt_setup();
	for (int round = 0; round < 20000; round++) {
		int i = (int)th_rng_range(&rng, 0, TT_N - 1);
		uint64_t op = th_rng_range(&rng, 0, 9);

		if (op < 5) {
			tt_arm(i, now + th_rng_range(&rng, 0, 100));
		} else if (op < 8) {
			iw_timer_cancel(&tts_set, &tts[i].t);
			tts[i].armed = false;
		} else {
			int first;

			now += th_rng_range(&rng, 0, 60);
			tt_nfired = 0;
			iw_timers_run(&tts_set, now);
			for (int k = 0; k < tt_nfired; k++) {
				first = tt_model_first();
				ck_assert_int_ge(first, 0);
				ck_assert_int_eq(tt_fired[k], first);
				tts[first].armed = false;
			}
			first = tt_model_first();
			ck_assert(first < 0 || tts[first].due > now);
		}
		ck_assert_uint_eq(iw_timers_next(&tts_set),
				  tt_model_first() < 0 ? IW_TIMER_NONE : tts[tt_model_first()].due);
		ck_assert(iw_timer_armed(&tts[i].t) == tts[i].armed);
	}
}
END_TEST

/* Callbacks that arm and cancel timers of the same set, themselves included. */
static void tt_chain(struct iw_timer *t, uint64_t now)
{
	struct tt *x = (struct tt *)(void *)t;

	tt_fired[tt_nfired++] = x->idx;
	if (x->idx == 0) {
		iw_timer_arm(&tts_set, &tts[0].t, now + 10); /* itself, later */
		iw_timer_arm(&tts_set, &tts[1].t, now);	     /* due now: same run */
		iw_timer_cancel(&tts_set, &tts[2].t);	     /* was due in this run */
	}
}

START_TEST(timer_callbacks_may_arm_and_cancel_timers)
{
	tt_setup();
	for (int i = 0; i < 3; i++)
		tts[i].t.fn = tt_chain;
	iw_timer_arm(&tts_set, &tts[0].t, 5);
	iw_timer_arm(&tts_set, &tts[2].t, 6);
	ck_assert_uint_eq(iw_timers_run(&tts_set, 7), 2);
	ck_assert_int_eq(tt_nfired, 2);
	ck_assert_int_eq(tt_fired[0], 0);
	ck_assert_int_eq(tt_fired[1], 1);
	ck_assert(!iw_timer_armed(&tts[2].t));
	ck_assert_uint_eq(iw_timers_next(&tts_set), 17);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* iw_alloc                                                                */
/* ---------------------------------------------------------------------- */

struct counting_alloc {
	int mallocs, callocs, frees;
	int fail; /* return NULL from every allocation */
};

static void *ca_malloc(void *ctx, size_t n)
{
	struct counting_alloc *a = ctx;

	a->mallocs++;
	return a->fail ? NULL : malloc(n);
}

static void *ca_calloc(void *ctx, size_t nmemb, size_t n)
{
	struct counting_alloc *a = ctx;

	a->callocs++;
	return a->fail ? NULL : calloc(nmemb, n);
}

static void ca_free(void *ctx, void *p)
{
	struct counting_alloc *a = ctx;

	a->frees++;
	free(p);
}

START_TEST(alloc_hook_routes_every_call_to_the_installed_allocator)
{
	struct counting_alloc ca = {0};
	const struct iw_allocator hook = {ca_malloc, ca_calloc, ca_free, &ca};

	iw_allocator_set(&hook);
	void *a = iw_malloc(16);
	uint8_t *b = iw_calloc(4, 8);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (int i = 0; i < 32; i++)
		ck_assert_uint_eq(b[i], 0);
	iw_free(a);
	iw_free(b);
	iw_free(NULL); /* free(NULL) is a no-op that never reaches the hook */
	ck_assert_int_eq(ca.mallocs, 1);
	ck_assert_int_eq(ca.callocs, 1);
	ck_assert_int_eq(ca.frees, 2);

	ca.fail = 1;
	ck_assert_ptr_null(iw_malloc(16));
	ck_assert_ptr_null(iw_calloc(1, 16));
	ck_assert_int_eq(ca.mallocs, 2);

	/* NULL restores the C library: the hook sees nothing more. */
	iw_allocator_set(NULL);
	a = iw_malloc(8);
	ck_assert_ptr_nonnull(a);
	iw_free(a);
	ck_assert_int_eq(ca.mallocs, 2);
	ck_assert_int_eq(ca.frees, 2);
}
END_TEST

START_TEST(alloc_hook_can_be_swapped_between_allocators)
{
	struct counting_alloc one = {0}, two = {0};
	const struct iw_allocator h1 = {ca_malloc, ca_calloc, ca_free, &one};
	const struct iw_allocator h2 = {ca_malloc, ca_calloc, ca_free, &two};

	iw_allocator_set(&h1);
	void *a = iw_malloc(1);
	iw_free(a);
	iw_allocator_set(&h2);
	a = iw_calloc(1, 1);
	iw_free(a);
	iw_allocator_set(NULL);
	ck_assert_int_eq(one.mallocs, 1);
	ck_assert_int_eq(one.frees, 1);
	ck_assert_int_eq(two.callocs, 1);
	ck_assert_int_eq(two.frees, 1);
}
END_TEST

static Suite *common_suite(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("bytes");

	tcase_add_test(tc, bytes_big_endian_puts_most_significant_octet_first);
	tcase_add_test(tc, bytes_get_reads_back_what_put_wrote);
	tcase_add_test(tc, bytes_min_max_and_array_size);
	suite_add_tcase(s, tc);

	tc = tcase_create("cursor");
	tcase_add_test(tc, cursor_reads_fields_in_order_within_bounds);
	tcase_add_test(tc, cursor_read_overrun_is_sticky_and_returns_zeros);
	tcase_add_test(tc, cursor_take_rejects_lengths_that_would_wrap);
	tcase_add_test(tc, cursor_writes_fields_big_endian);
	tcase_add_test(tc, cursor_write_overflow_is_sticky_and_leaves_the_buffer_alone);
	tcase_add_test(tc, cursor_on_an_empty_buffer_fails_the_first_access);
	suite_add_tcase(s, tc);

	tc = tcase_create("iov");
	tcase_add_test(tc, iov_total_sums_lengths_including_empty_ones);
	tcase_add_test(tc, iov_advance_inside_one_iovec_trims_it_in_place);
	tcase_add_test(tc, iov_advance_across_iovecs_skips_whole_and_empty_ones);
	tcase_add_test(tc, iov_advance_everything_at_once_ends_with_no_iovecs);
	tcase_add_test(tc, iov_advance_in_random_steps_matches_the_flat_buffer);
	tcase_add_test(tc, iov_copy_out_from_any_offset_and_length);
	tcase_add_test(tc, iov_iter_yields_contiguous_pieces_in_order);
	tcase_add_test(tc, iov_iter_in_random_pieces_reassembles_the_data);
	tcase_add_test(tc, iov_iter_over_no_iovecs_or_only_empty_ones_ends_at_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("err");
	tcase_add_test(tc, err_every_code_has_a_text_and_its_own_name);
	tcase_add_test(tc, err_system_errors_have_their_own_place);
	tcase_add_test(tc, err_unknown_codes_say_so);
	suite_add_tcase(s, tc);

	tc = tcase_create("timer");
	tcase_add_test(tc, timer_fires_in_due_order_and_ties_in_arming_order);
	tcase_add_test(tc, timer_random_operations_match_a_reference_model);
	tcase_add_test(tc, timer_callbacks_may_arm_and_cancel_timers);
	suite_add_tcase(s, tc);

	tc = tcase_create("alloc");
	tcase_add_test(tc, alloc_hook_routes_every_call_to_the_installed_allocator);
	tcase_add_test(tc, alloc_hook_can_be_swapped_between_allocators);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(common_suite)
