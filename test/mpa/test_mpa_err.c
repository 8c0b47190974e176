/* SPDX-License-Identifier: MIT */
/*
 * test_mpa_err.c - every MPA error code maps to its Terminate triple
 * (RFC 5044 §8, RFC 6581 §8, RFC 5040 §4.8); anything else is IW_EINVAL.
 */
#include <iwarp/mpa.h>

#include "iw_bytes.h"
#include "th.h"

struct expect {
	int err;
	uint8_t layer, etype, ecode;
};

/* Every MPA code of iw_err.h, listed by hand so a new code without a mapping is noticed. */
static const struct expect mpa_codes[] = {
	{IW_EMPA_KEY, IW_TERM_LAYER_LLP, 0, 4},	       {IW_EMPA_REV, IW_TERM_LAYER_LLP, 0, 4},
	{IW_EMPA_PDLEN, IW_TERM_LAYER_LLP, 0, 4},      {IW_EMPA_FRAME, IW_TERM_LAYER_LLP, 0, 4},
	{IW_EMPA_UNEXPECTED, IW_TERM_LAYER_LLP, 0, 4}, {IW_EMPA_REJECTED, IW_TERM_NONE, 0, 0},
	{IW_EMPA_TIMEOUT, IW_TERM_NONE, 0, 0},	       {IW_EMPA_TRUNCATED, IW_TERM_LAYER_LLP, 0, 4},
	{IW_EMPA_CRC, IW_TERM_LAYER_LLP, 0, 2},	       {IW_EMPA_MARKER, IW_TERM_LAYER_LLP, 0, 3},
	{IW_EMPA_LEN, IW_TERM_LAYER_LLP, 0, 3},	       {IW_EMPA_IRD, IW_TERM_LAYER_LLP, 0, 6},
	{IW_EMPA_RTR, IW_TERM_LAYER_LLP, 0, 7},	       {IW_EMPA_LOCAL, IW_TERM_LAYER_LLP, 0, 5},
	{IW_EMPA_CLOSED, IW_TERM_LAYER_LLP, 0, 1},
};

START_TEST(err_every_mpa_code_has_its_terminate_triple)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(mpa_codes); i++) {
		const struct expect *e = &mpa_codes[i];
		struct iw_term_code t = {0xAA, 0xAA, 0xAA};

		ck_assert_msg(mpa_err_term(e->err, &t) == IW_OK, "%s", mpa_errname(e->err));
		ck_assert_msg(t.layer == e->layer && t.etype == e->etype && t.ecode == e->ecode,
			      "%s -> %u/%u/%u", mpa_errname(e->err), t.layer, t.etype, t.ecode);
	}
}
END_TEST

START_TEST(err_the_llp_codes_are_the_rfc_numbers)
{
	struct iw_term_code t;

	ck_assert_int_eq(mpa_err_term(IW_EMPA_CLOSED, &t), IW_OK);
	ck_assert_uint_eq(t.ecode, IW_TERM_LLP_CLOSED);
	ck_assert_int_eq(mpa_err_term(IW_EMPA_CRC, &t), IW_OK);
	ck_assert_uint_eq(t.ecode, IW_TERM_LLP_CRC);
	ck_assert_uint_eq(t.layer, IW_TERM_LAYER_LLP);
	ck_assert_uint_eq(t.etype, IW_TERM_LLP_ETYPE_MPA);
	ck_assert_int_eq(mpa_err_term(IW_EMPA_MARKER, &t), IW_OK);
	ck_assert_uint_eq(t.ecode, IW_TERM_LLP_MARKER);
	ck_assert_int_eq(mpa_err_term(IW_EMPA_FRAME, &t), IW_OK);
	ck_assert_uint_eq(t.ecode, IW_TERM_LLP_BAD_FRAME);
	ck_assert_int_eq(mpa_err_term(IW_EMPA_LOCAL, &t), IW_OK);
	ck_assert_uint_eq(t.ecode, IW_TERM_LLP_LOCAL);
	ck_assert_int_eq(mpa_err_term(IW_EMPA_IRD, &t), IW_OK);
	ck_assert_uint_eq(t.ecode, IW_TERM_LLP_IRD);
	ck_assert_int_eq(mpa_err_term(IW_EMPA_RTR, &t), IW_OK);
	ck_assert_uint_eq(t.ecode, IW_TERM_LLP_RTR);
}
END_TEST

START_TEST(err_codes_outside_the_mpa_range_are_einval)
{
	static const int other[] = {IW_OK, IW_ENOMEM, IW_EINVAL, IW_ENOTSUP, -99,
				    -200,  -201,      -300,	 -500,	     1,
				    100,   -100000,   INT32_MIN, INT32_MAX};
	struct iw_term_code t = {1, 2, 3};

	for (size_t i = 0; i < IW_ARRAY_SIZE(other); i++)
		ck_assert_int_eq(mpa_err_term(other[i], &t), IW_EINVAL);
	ck_assert_uint_eq(t.layer, 1); /* untouched */
	ck_assert_uint_eq(t.ecode, 3);
}
END_TEST

START_TEST(err_unassigned_codes_inside_the_range_are_einval)
{
	for (int err = -100; err >= -199; err--) {
		bool known = false;

		for (size_t i = 0; i < IW_ARRAY_SIZE(mpa_codes); i++)
			known |= mpa_codes[i].err == err;
		ck_assert_int_eq(mpa_err_term(err, NULL), known ? IW_OK : IW_EINVAL);
	}
}
END_TEST

static Suite *mpa_err_suite(void)
{
	Suite *s = suite_create("mpa_err");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, err_every_mpa_code_has_its_terminate_triple);
	tcase_add_test(tc, err_the_llp_codes_are_the_rfc_numbers);
	tcase_add_test(tc, err_codes_outside_the_mpa_range_are_einval);
	tcase_add_test(tc, err_unassigned_codes_inside_the_range_are_einval);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(mpa_err_suite)
