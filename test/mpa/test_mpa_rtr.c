/* SPDX-License-Identifier: MIT */
/*
 * test_mpa_rtr.c - RFC 6581 RTR messages: exact ULPDU bytes (the project
 * vectors' FPDUs minus the 2-octet length and 4-octet CRC) and classification.
 */
#include <string.h>

#include "iw_bytes.h"
#include "iw_vectors.h"
#include "th.h"
#include <iwarp/mpa.h>

/* The ULPDU of the named fpdu vector. */
static size_t vector_ulpdu(const char *name, uint8_t *out, size_t cap)
{
	uint8_t b[256];

	for (size_t i = 0; i < IW_ARRAY_SIZE(fpdu_vectors); i++) {
		long n;

		if (strcmp(fpdu_vectors[i].name, name) != 0)
			continue;
		n = th_hex_decode(fpdu_vectors[i].bytes_hex, b, sizeof(b));
		ck_assert_int_gt(n, MPA_ULPDU_LEN_LEN + MPA_CRC_LEN);
		ck_assert_uint_eq(iw_get_be16(b), fpdu_vectors[i].ulpdu_length);
		ck_assert_uint_le(fpdu_vectors[i].ulpdu_length, cap);
		memcpy(out, b + MPA_ULPDU_LEN_LEN, fpdu_vectors[i].ulpdu_length);
		return fpdu_vectors[i].ulpdu_length;
	}
	ck_abort_msg("vector %s missing", name);
	return 0;
}

/* Send RTR bytes: untagged Send, QN 0, MSN 1, MO 0 (RFC 5041 §4.3, RFC 5040 §4.1). */
static const uint8_t send_rtr[MPA_RTR_SEND_LEN] = {
	0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
};

START_TEST(write_rtr_matches_the_vector)
{
	uint8_t want[64], got[64];
	size_t n = vector_ulpdu("rtr-zero-length-rdma-write", want, sizeof(want));

	ck_assert_uint_eq(n, MPA_RTR_WRITE_LEN);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_WRITE, got, sizeof(got)), MPA_RTR_WRITE_LEN);
	ck_assert_mem_eq(got, want, n);
}
END_TEST

START_TEST(read_rtr_matches_the_vector)
{
	uint8_t want[64], got[64];
	size_t n = vector_ulpdu("rtr-zero-length-rdma-read-request", want, sizeof(want));

	ck_assert_uint_eq(n, MPA_RTR_READ_LEN);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_READ, got, sizeof(got)), MPA_RTR_READ_LEN);
	ck_assert_mem_eq(got, want, n);
}
END_TEST

START_TEST(send_rtr_is_an_untagged_zero_length_send)
{
	uint8_t got[64];

	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_SEND, got, sizeof(got)), MPA_RTR_SEND_LEN);
	ck_assert_mem_eq(got, send_rtr, MPA_RTR_SEND_LEN);
}
END_TEST

START_TEST(encode_checks_form_and_space)
{
	static const enum mpa_rtr forms[] = {MPA_RTR_SEND, MPA_RTR_WRITE, MPA_RTR_READ};
	static const size_t lens[] = {MPA_RTR_SEND_LEN, MPA_RTR_WRITE_LEN, MPA_RTR_READ_LEN};
	uint8_t buf[64];

	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_NONE, buf, sizeof(buf)), IW_EINVAL);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_ALL, buf, sizeof(buf)), IW_EINVAL);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_WRITE | MPA_RTR_READ, buf, sizeof(buf)), IW_EINVAL);
	ck_assert_int_eq(mpa_rtr_encode((enum mpa_rtr)8, buf, sizeof(buf)), IW_EINVAL);
	for (size_t i = 0; i < IW_ARRAY_SIZE(forms); i++) {
		for (size_t cap = 0; cap < lens[i]; cap++)
			ck_assert_int_eq(mpa_rtr_encode(forms[i], buf, cap), IW_ENOSPC);
		ck_assert_int_eq(mpa_rtr_encode(forms[i], NULL, 64), IW_ENOSPC);
		ck_assert_int_eq(mpa_rtr_encode(forms[i], buf, lens[i]), (ssize_t)lens[i]);
	}
}
END_TEST

START_TEST(classify_recognises_all_three_forms)
{
	uint8_t buf[64];

	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf)), MPA_RTR_SEND_LEN);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN), MPA_RTR_SEND);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf)), MPA_RTR_WRITE_LEN);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN), MPA_RTR_WRITE);
	ck_assert_int_eq(mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf)), MPA_RTR_READ_LEN);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_READ);
}
END_TEST

START_TEST(classify_ignores_placeholders_and_reserved_bits)
{
	uint8_t buf[64];

	/* STag/TO of a zero-length Write are not checked (RFC 5041 §5.2). */
	mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf));
	memset(buf + 2, 0xEE, 12);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN), MPA_RTR_WRITE);
	/* Reserved bits of the DDP and RDMAP control octets are not checked. */
	buf[0] |= 0x3C;
	buf[1] |= 0x30;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN), MPA_RTR_WRITE);
	/* Source/sink STags of a zero-length Read are placeholders. */
	mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf));
	iw_put_be32(buf + 18, 0x12345678);
	iw_put_be32(buf + 34, 0);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_READ);
}
END_TEST

START_TEST(classify_rejects_near_misses)
{
	uint8_t buf[64];

	ck_assert_int_eq(mpa_rtr_classify(NULL, 14), MPA_RTR_NONE);
	ck_assert_int_eq(mpa_rtr_classify(buf, 0), MPA_RTR_NONE);

	/* Wrong opcode: Send with Solicited Event, Read Response, Write as Send. */
	mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf));
	buf[1] = 0x45;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf));
	buf[1] = 0x42;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf));
	buf[1] = 0x43;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_NONE);
	/* Wrong RDMAP version. */
	mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf));
	buf[1] = 0x80;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN), MPA_RTR_NONE);
	/* Wrong DDP version. */
	mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf));
	buf[0] = 0x42;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN), MPA_RTR_NONE);

	/* A non-zero payload changes the length. */
	mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf));
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN + 1), MPA_RTR_NONE);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN - 1), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf));
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN + 4), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf));
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN + 1), MPA_RTR_NONE);

	/* Wrong queue. */
	mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf));
	iw_put_be32(buf + 6, 1);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf));
	iw_put_be32(buf + 6, 0);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_NONE);
	iw_put_be32(buf + 6, 2);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_NONE);

	/* Non-zero MO: not the start of a message. */
	mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf));
	iw_put_be32(buf + 14, 4);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf));
	iw_put_be32(buf + 14, 4);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_NONE);

	/* Read size not zero. */
	mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf));
	iw_put_be32(buf + 30, 1);
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_NONE);

	/* Not the last segment (L = 0). */
	mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf));
	buf[0] &= (uint8_t)~0x40;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf));
	buf[0] &= (uint8_t)~0x40;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_READ, buf, sizeof(buf));
	buf[0] &= (uint8_t)~0x40;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_READ_LEN), MPA_RTR_NONE);

	/* Tagged where untagged is expected and the reverse. */
	mpa_rtr_encode(MPA_RTR_SEND, buf, sizeof(buf));
	buf[0] |= 0x80;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_SEND_LEN), MPA_RTR_NONE);
	mpa_rtr_encode(MPA_RTR_WRITE, buf, sizeof(buf));
	buf[0] &= (uint8_t)~0x80;
	ck_assert_int_eq(mpa_rtr_classify(buf, MPA_RTR_WRITE_LEN), MPA_RTR_NONE);
}
END_TEST

static Suite *mpa_rtr_suite(void)
{
	Suite *s = suite_create("mpa_rtr");
	TCase *tc = tcase_create("rtr");

	tcase_add_test(tc, write_rtr_matches_the_vector);
	tcase_add_test(tc, read_rtr_matches_the_vector);
	tcase_add_test(tc, send_rtr_is_an_untagged_zero_length_send);
	tcase_add_test(tc, encode_checks_form_and_space);
	tcase_add_test(tc, classify_recognises_all_three_forms);
	tcase_add_test(tc, classify_ignores_placeholders_and_reserved_bits);
	tcase_add_test(tc, classify_rejects_near_misses);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(mpa_rtr_suite)
