/* SPDX-License-Identifier: MIT */
/*
 * test_ddp_err.c - every DDP error code maps to its Terminate triple
 * (RFC 5041 §7.2, RFC 5040 §4.8); anything else is IW_EINVAL.
 */
#include <iwarp/ddp.h>
#include <iwarp/mpa.h>

#include "iw_bytes.h"
#include "th.h"

struct expect {
	int err;
	uint8_t layer, etype, ecode;
};

/* Every DDP code of ddp.h, listed by hand so a new code without a mapping is noticed. */
static const struct expect ddp_codes[] = {
	{IW_EDDP_LOCAL, IW_TERM_LAYER_DDP, 0, 0},
	{IW_EDDP_T_INVALID_STAG, IW_TERM_LAYER_DDP, 1, 0},
	{IW_EDDP_T_BOUNDS, IW_TERM_LAYER_DDP, 1, 1},
	{IW_EDDP_T_STREAM, IW_TERM_LAYER_DDP, 1, 2},
	{IW_EDDP_T_TO_WRAP, IW_TERM_LAYER_DDP, 1, 3},
	{IW_EDDP_T_VERSION, IW_TERM_LAYER_DDP, 1, 4},
	{IW_EDDP_U_QN, IW_TERM_LAYER_DDP, 2, 1},
	{IW_EDDP_U_NO_BUFFER, IW_TERM_LAYER_DDP, 2, 2},
	{IW_EDDP_U_MSN_RANGE, IW_TERM_LAYER_DDP, 2, 3},
	{IW_EDDP_U_MO, IW_TERM_LAYER_DDP, 2, 4},
	{IW_EDDP_U_TOO_LONG, IW_TERM_LAYER_DDP, 2, 5},
	{IW_EDDP_U_VERSION, IW_TERM_LAYER_DDP, 2, 6},
	{IW_EDDP_SHORT, IW_TERM_LAYER_DDP, 0, 0},
	{IW_EDDP_STAG_TABLE_FULL, IW_TERM_NONE, 0, 0},
	{IW_EDDP_STAG_UNKNOWN, IW_TERM_NONE, 0, 0},
};

START_TEST(err_every_ddp_code_has_its_terminate_triple)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_codes); i++) {
		const struct expect *e = &ddp_codes[i];
		struct iw_term_code t = {0xAA, 0xAA, 0xAA};

		ck_assert_msg(ddp_err_term(e->err, &t) == IW_OK, "%s", ddp_errname(e->err));
		ck_assert_msg(t.layer == e->layer && t.etype == e->etype && t.ecode == e->ecode,
			      "%s -> %u/%u/%u", ddp_errname(e->err), t.layer, t.etype, t.ecode);
	}
}
END_TEST

START_TEST(err_every_ddp_code_has_a_name_and_text)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_codes); i++) {
		ck_assert_str_ne(ddp_strerror(ddp_codes[i].err), "unknown error");
		ck_assert_ptr_nonnull(ddp_errname(ddp_codes[i].err));
	}
}
END_TEST

START_TEST(err_vector_terminate_no_buffer_is_untagged_msn_no_buffer)
{
	struct iw_term_code t;

	/* ddp-rdmap.json "terminate-ddp-untagged-no-buffer": Layer 1, EType 2, ECode 2. */
	ck_assert_int_eq(ddp_err_term(IW_EDDP_U_NO_BUFFER, &t), IW_OK);
	ck_assert_uint_eq(t.layer, 1);
	ck_assert_uint_eq(t.etype, 2);
	ck_assert_uint_eq(t.ecode, 2);
}
END_TEST

START_TEST(err_codes_outside_the_ddp_range_are_einval)
{
	static const int other[] = {IW_OK,	 IW_ENOMEM, IW_EINVAL, IW_EAGAIN, -99,
				    IW_EMPA_CRC, -199,	    -300,      -301,	  -500,
				    1,		 200,	    -100000,   INT32_MIN, INT32_MAX};
	struct iw_term_code t = {1, 2, 3};

	for (size_t i = 0; i < IW_ARRAY_SIZE(other); i++)
		ck_assert_int_eq(ddp_err_term(other[i], &t), IW_EINVAL);
	ck_assert_uint_eq(t.layer, 1); /* untouched */
	ck_assert_uint_eq(t.etype, 2);
	ck_assert_uint_eq(t.ecode, 3);
}
END_TEST

START_TEST(err_unassigned_codes_inside_the_range_are_einval)
{
	for (int err = -200; err >= -299; err--) {
		bool known = false;

		for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_codes); i++)
			known |= ddp_codes[i].err == err;
		ck_assert_msg(ddp_err_term(err, NULL) == (known ? IW_OK : IW_EINVAL), "%d", err);
	}
}
END_TEST

static Suite *ddp_err_suite(void)
{
	Suite *s = suite_create("ddp_err");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, err_every_ddp_code_has_its_terminate_triple);
	tcase_add_test(tc, err_every_ddp_code_has_a_name_and_text);
	tcase_add_test(tc, err_vector_terminate_no_buffer_is_untagged_msn_no_buffer);
	tcase_add_test(tc, err_codes_outside_the_ddp_range_are_einval);
	tcase_add_test(tc, err_unassigned_codes_inside_the_range_are_einval);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(ddp_err_suite)
