/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_err.c - every RDMAP error code maps to its Terminate triple
 * (RFC 5040 §4.8 figure 9), and iw_err_term() dispatches any code of the
 * error plan to its layer's table, falling back to local catastrophic.
 */
#include <string.h>

#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iw_bytes.h"
#include "th.h"

struct expect {
	int err;
	uint8_t layer, etype, ecode;
};

/* Every RDMAP code of rdmap.h, listed by hand so a new code without a mapping is noticed. */
static const struct expect rdmap_codes[] = {
	{IW_ERDMAP_LOCAL, IW_TERM_LAYER_RDMAP, 0x0, 0x00},
	{IW_ERDMAP_INVALID_STAG, IW_TERM_LAYER_RDMAP, 0x1, 0x00},
	{IW_ERDMAP_BOUNDS, IW_TERM_LAYER_RDMAP, 0x1, 0x01},
	{IW_ERDMAP_ACCESS, IW_TERM_LAYER_RDMAP, 0x1, 0x02},
	{IW_ERDMAP_STREAM, IW_TERM_LAYER_RDMAP, 0x1, 0x03},
	{IW_ERDMAP_TO_WRAP, IW_TERM_LAYER_RDMAP, 0x1, 0x04},
	{IW_ERDMAP_PROT_UNSPEC, IW_TERM_LAYER_RDMAP, 0x1, 0xFF},
	{IW_ERDMAP_VERSION, IW_TERM_LAYER_RDMAP, 0x2, 0x05},
	{IW_ERDMAP_OPCODE, IW_TERM_LAYER_RDMAP, 0x2, 0x06},
	{IW_ERDMAP_CATASTROPHIC_STREAM, IW_TERM_LAYER_RDMAP, 0x2, 0x07},
	{IW_ERDMAP_CATASTROPHIC_GLOBAL, IW_TERM_LAYER_RDMAP, 0x2, 0x08},
	{IW_ERDMAP_CANT_INVALIDATE, IW_TERM_LAYER_RDMAP, 0x2, 0x09},
	{IW_ERDMAP_OP_UNSPEC, IW_TERM_LAYER_RDMAP, 0x2, 0xFF},
	{IW_ERDMAP_TERMINATED, IW_TERM_NONE, 0, 0},
	{IW_ERDMAP_FLUSHED, IW_TERM_NONE, 0, 0},
};

static bool listed(int err)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(rdmap_codes); i++)
		if (rdmap_codes[i].err == err)
			return true;
	return false;
}

START_TEST(err_every_rdmap_code_has_its_terminate_triple)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(rdmap_codes); i++) {
		const struct expect *e = &rdmap_codes[i];
		struct iw_term_code t = {0xAA, 0xAA, 0xAA};

		ck_assert_msg(rdmap_err_term(e->err, &t) == IW_OK, "%s", rdmap_errname(e->err));
		ck_assert_msg(t.layer == e->layer && t.etype == e->etype && t.ecode == e->ecode,
			      "%s -> %u/%u/%u", rdmap_errname(e->err), t.layer, t.etype, t.ecode);
		/* A NULL output is allowed: the caller may only ask whether a code is mapped. */
		ck_assert_int_eq(rdmap_err_term(e->err, NULL), IW_OK);
	}
}
END_TEST

START_TEST(err_unassigned_and_foreign_codes_are_einval)
{
	static const int other[] = {IW_OK, IW_EINVAL, -99,	 -100, -200, -299,
				    -400,  -500,      INT32_MIN, 1,    300,  INT32_MAX};
	struct iw_term_code t = {1, 2, 3};

	for (size_t i = 0; i < IW_ARRAY_SIZE(other); i++)
		ck_assert_int_eq(rdmap_err_term(other[i], &t), IW_EINVAL);
	for (int err = -300; err >= -399; err--) {
		if (!listed(err))
			ck_assert_msg(rdmap_err_term(err, &t) == IW_EINVAL, "%d", err);
	}
	ck_assert_uint_eq(t.layer, 1); /* untouched */
	ck_assert_uint_eq(t.etype, 2);
	ck_assert_uint_eq(t.ecode, 3);
}
END_TEST

START_TEST(err_every_named_rdmap_code_is_mapped)
{
	/* Any code rdmap_errname() knows in the RDMAP range must have a triple. */
	for (int err = -300; err >= -399; err--) {
		const char *name = rdmap_errname(err);

		if (strncmp(name, "IW_ERDMAP_", 10) == 0)
			ck_assert_msg(listed(err) && rdmap_err_term(err, NULL) == IW_OK, "%s",
				      name);
	}
}
END_TEST

START_TEST(err_iw_err_term_dispatches_by_range)
{
	struct iw_term_code t;

	iw_err_term(IW_EMPA_CRC, &t);
	ck_assert(t.layer == IW_TERM_LAYER_LLP && t.etype == 0 && t.ecode == IW_TERM_LLP_CRC);
	iw_err_term(IW_EMPA_REJECTED, &t);
	ck_assert_uint_eq(t.layer, IW_TERM_NONE);
	iw_err_term(IW_EDDP_U_NO_BUFFER, &t);
	ck_assert(t.layer == IW_TERM_LAYER_DDP && t.etype == 2 && t.ecode == 0x02);
	iw_err_term(IW_EDDP_T_BOUNDS, &t);
	ck_assert(t.layer == IW_TERM_LAYER_DDP && t.etype == 1 && t.ecode == 0x01);
	iw_err_term(IW_ERDMAP_ACCESS, &t);
	ck_assert(t.layer == IW_TERM_LAYER_RDMAP && t.etype == 1 && t.ecode == 0x02);
	iw_err_term(IW_ERDMAP_FLUSHED, &t);
	ck_assert_uint_eq(t.layer, IW_TERM_NONE);
	/* Same answers as the layer tables for every code they map. */
	for (int err = -100; err >= -399; err--) {
		struct iw_term_code want;
		int rc = err > -200   ? mpa_err_term(err, &want)
			 : err > -300 ? ddp_err_term(err, &want)
				      : rdmap_err_term(err, &want);

		if (rc != IW_OK)
			continue;
		iw_err_term(err, &t);
		ck_assert_msg(t.layer == want.layer && t.etype == want.etype &&
				      t.ecode == want.ecode,
			      "%s", rdmap_errname(err));
	}
}
END_TEST

START_TEST(err_unknown_codes_are_local_catastrophic)
{
	static const int other[] = {IW_OK, IW_ENOMEM, IW_EINVAL, IW_EAGAIN, -99,  -109,
				    -250,  -398,      -400,	 -450,	    -500, -599,
				    -1000, 1,	      INT32_MIN, INT32_MAX};

	for (size_t i = 0; i < IW_ARRAY_SIZE(other); i++) {
		struct iw_term_code t = {9, 9, 9};

		iw_err_term(other[i], &t);
		ck_assert_msg(t.layer == 0 && t.etype == 0 && t.ecode == 0, "%d", other[i]);
	}
	iw_err_term(IW_EINVAL, NULL); /* no output wanted: must not crash */
}
END_TEST

static Suite *rdmap_err_suite(void)
{
	Suite *s = suite_create("rdmap_err");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, err_every_rdmap_code_has_its_terminate_triple);
	tcase_add_test(tc, err_unassigned_and_foreign_codes_are_einval);
	tcase_add_test(tc, err_every_named_rdmap_code_is_mapped);
	tcase_add_test(tc, err_iw_err_term_dispatches_by_range);
	tcase_add_test(tc, err_unknown_codes_are_local_catastrophic);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(rdmap_err_suite)
