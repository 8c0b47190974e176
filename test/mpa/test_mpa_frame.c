/* SPDX-License-Identifier: MIT */
/*
 * test_mpa_frame.c - MPA Request/Reply frame encode/decode (RFC 5044 §7.1.1,
 * RFC 6581 §6, §9) against the project vectors, the Linux siw capture and
 * every malformation the decoder must catch.
 */
#include <string.h>

#include "iw_bytes.h"
#include "iw_vectors.h"
#include "th.h"
#include <iwarp/mpa.h>

struct vec_bytes {
	uint8_t b[MPA_FRAME_MAX_LEN + 16];
	size_t len;
};

static void vec_load(const char *hex, struct vec_bytes *v)
{
	long n = th_hex_decode(hex, v->b, sizeof(v->b));

	ck_assert_int_gt(n, 0);
	v->len = (size_t)n;
}

static uint8_t rtr_mask(bool b, bool c, bool d)
{
	return (b ? MPA_RTR_SEND : 0) | (c ? MPA_RTR_WRITE : 0) | (d ? MPA_RTR_READ : 0);
}

/* A valid rev-1 Request header with PD_Length 0 to corrupt. */
static void base_request(uint8_t *b, bool reply)
{
	memcpy(b, reply ? "MPA ID Rep Frame" : "MPA ID Req Frame", MPA_KEY_LEN);
	b[16] = 0x40;
	b[17] = 1;
	b[18] = 0;
	b[19] = 0;
}

START_TEST(frame_vectors_decode_to_listed_fields)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(frame_vectors); i++) {
		const struct frame_vector *fv = &frame_vectors[i];
		struct vec_bytes v;
		struct mpa_frame f;

		vec_load(fv->bytes_hex, &v);
		ck_assert_int_eq(mpa_frame_decode(v.b, v.len, fv->reply, &f), (ssize_t)v.len);
		ck_assert_msg(f.reply == fv->reply, "%s", fv->name);
		ck_assert_msg(f.markers == fv->m, "%s", fv->name);
		ck_assert_msg(f.crc == fv->c, "%s", fv->name);
		ck_assert_msg(f.reject == fv->r, "%s", fv->name);
		ck_assert_msg(f.enhanced == fv->s, "%s", fv->name);
		ck_assert_uint_eq(f.rev, fv->rev);
		ck_assert_uint_eq(f.pd_len + (f.enhanced ? MPA_IRD_ORD_LEN : 0), fv->pd_length);
		ck_assert_ptr_eq(f.pd, v.b + v.len - f.pd_len);
		if (fv->s) {
			ck_assert_msg(f.p2p == fv->a, "%s", fv->name);
			ck_assert_uint_eq(f.rtr, rtr_mask(fv->b, fv->cflag, fv->d));
			ck_assert_uint_eq(f.ird, fv->ird);
			ck_assert_uint_eq(f.ord, fv->ord);
		}
		ck_assert_uint_eq(mpa_frame_len(&f), v.len);
	}
}
END_TEST

START_TEST(frame_vectors_reencode_byte_exact)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(frame_vectors); i++) {
		const struct frame_vector *fv = &frame_vectors[i];
		uint8_t out[MPA_FRAME_MAX_LEN];
		struct vec_bytes v;
		struct mpa_frame f;

		vec_load(fv->bytes_hex, &v);
		ck_assert_int_gt(mpa_frame_decode(v.b, v.len, fv->reply, &f), 0);
		ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), (ssize_t)v.len);
		ck_assert_msg(memcmp(out, v.b, v.len) == 0, "%s", fv->name);
	}
}
END_TEST

START_TEST(siw_request_parses_as_enhanced_client_server_ird1_ord1)
{
	struct vec_bytes v;
	struct mpa_frame f;

	vec_load(siw_mpa_request_hex, &v);
	ck_assert_int_eq(mpa_frame_decode(v.b, v.len, false, &f), (ssize_t)v.len);
	ck_assert(!f.reply);
	ck_assert(!f.markers);
	ck_assert(!f.crc);
	ck_assert(!f.reject);
	ck_assert(f.enhanced);
	ck_assert_uint_eq(f.rev, 2);
	ck_assert_uint_eq(iw_get_be16(v.b + 18), 4);
	ck_assert_uint_eq(f.pd_len, 0);
	ck_assert(!f.p2p);
	ck_assert_uint_eq(f.rtr, MPA_RTR_NONE);
	ck_assert_uint_eq(f.ird, 1);
	ck_assert_uint_eq(f.ord, 1);
}
END_TEST

START_TEST(every_truncation_asks_for_more)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(frame_vectors); i++) {
		const struct frame_vector *fv = &frame_vectors[i];
		struct vec_bytes v;
		struct mpa_frame f;

		vec_load(fv->bytes_hex, &v);
		for (size_t n = 0; n < v.len; n++)
			ck_assert_int_eq(mpa_frame_decode(v.b, n, fv->reply, &f), IW_EAGAIN);
	}
	ck_assert_int_eq(mpa_frame_decode(NULL, 0, false, &(struct mpa_frame){0}), IW_EAGAIN);
}
END_TEST

START_TEST(octets_after_the_frame_are_not_consumed)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(frame_vectors); i++) {
		const struct frame_vector *fv = &frame_vectors[i];
		struct vec_bytes v;
		struct mpa_frame f;
		size_t flen;

		vec_load(fv->bytes_hex, &v);
		flen = v.len;
		memset(v.b + flen, 0xAB, 16);
		ck_assert_int_eq(mpa_frame_decode(v.b, flen + 16, fv->reply, &f), (ssize_t)flen);
	}
}
END_TEST

START_TEST(each_wrong_key_octet_reports_mpa_key_at_once)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(frame_vectors); i++) {
		const struct frame_vector *fv = &frame_vectors[i];
		struct vec_bytes v;
		struct mpa_frame f;

		vec_load(fv->bytes_hex, &v);
		for (size_t k = 0; k < MPA_KEY_LEN; k++) {
			v.b[k] ^= 0xFF;
			/* Reported as soon as the bad octet is there. */
			ck_assert_int_eq(mpa_frame_decode(v.b, k + 1, fv->reply, &f), IW_EMPA_KEY);
			ck_assert_int_eq(mpa_frame_decode(v.b, v.len, fv->reply, &f), IW_EMPA_KEY);
			v.b[k] ^= 0xFF;
			/* One bit only (e.g. 'q' vs 'p') is enough too. */
			v.b[k] ^= 0x01;
			ck_assert_int_eq(mpa_frame_decode(v.b, v.len, fv->reply, &f), IW_EMPA_KEY);
			v.b[k] ^= 0x01;
		}
	}
}
END_TEST

START_TEST(the_other_key_is_a_key_error)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(frame_vectors); i++) {
		const struct frame_vector *fv = &frame_vectors[i];
		struct vec_bytes v;
		struct mpa_frame f;

		vec_load(fv->bytes_hex, &v);
		ck_assert_int_eq(mpa_frame_decode(v.b, v.len, !fv->reply, &f), IW_EMPA_KEY);
		/* The keys differ at octet 9: the first 9 octets are not yet wrong. */
		ck_assert_int_eq(mpa_frame_decode(v.b, 9, !fv->reply, &f), IW_EAGAIN);
		ck_assert_int_eq(mpa_frame_decode(v.b, 10, !fv->reply, &f), IW_EMPA_KEY);
	}
}
END_TEST

START_TEST(bad_revisions_report_mpa_rev)
{
	static const uint8_t revs[] = {0, 3, 255};
	uint8_t b[MPA_FRAME_HDR_LEN];
	struct mpa_frame f;

	for (size_t i = 0; i < IW_ARRAY_SIZE(revs); i++) {
		for (int reply = 0; reply < 2; reply++) {
			base_request(b, reply);
			b[17] = revs[i];
			ck_assert_int_eq(mpa_frame_decode(b, 17, reply, &f), IW_EAGAIN);
			ck_assert_int_eq(mpa_frame_decode(b, 18, reply, &f), IW_EMPA_REV);
			ck_assert_int_eq(mpa_frame_decode(b, sizeof(b), reply, &f), IW_EMPA_REV);
		}
	}
}
END_TEST

START_TEST(pd_length_over_512_reports_mpa_pdlen)
{
	static const uint16_t lens[] = {513, 514, 0x8000, 0xFFFF};
	uint8_t b[MPA_FRAME_MAX_LEN + 8] = {0};
	struct mpa_frame f;

	for (size_t i = 0; i < IW_ARRAY_SIZE(lens); i++) {
		base_request(b, false);
		iw_put_be16(b + 18, lens[i]);
		ck_assert_int_eq(mpa_frame_decode(b, 19, false, &f), IW_EAGAIN);
		ck_assert_int_eq(mpa_frame_decode(b, 20, false, &f), IW_EMPA_PDLEN);
		ck_assert_int_eq(mpa_frame_decode(b, sizeof(b), false, &f), IW_EMPA_PDLEN);
	}
	/* 512 itself is fine. */
	iw_put_be16(b + 18, 512);
	ck_assert_int_eq(mpa_frame_decode(b, 20 + 511, false, &f), IW_EAGAIN);
	ck_assert_int_eq(mpa_frame_decode(b, 20 + 512, false, &f), 532);
	ck_assert_uint_eq(f.pd_len, 512);
}
END_TEST

START_TEST(enhanced_frame_with_pd_length_below_4_reports_mpa_pdlen)
{
	uint8_t b[MPA_FRAME_HDR_LEN + 4] = {0};
	struct mpa_frame f;

	for (uint16_t n = 0; n < 4; n++) {
		base_request(b, true);
		b[16] = 0x50;
		b[17] = 2;
		iw_put_be16(b + 18, n);
		ck_assert_int_eq(mpa_frame_decode(b, 20, true, &f), IW_EMPA_PDLEN);
		ck_assert_int_eq(mpa_frame_decode(b, 20 + n, true, &f), IW_EMPA_PDLEN);
	}
	/* Rev 2 without S needs no word. */
	base_request(b, true);
	b[17] = 2;
	ck_assert_int_eq(mpa_frame_decode(b, 20, true, &f), 20);
	ck_assert(!f.enhanced);
	ck_assert_uint_eq(f.rev, 2);
}
END_TEST

START_TEST(s_bit_of_a_rev1_frame_is_reserved_and_ignored)
{
	uint8_t b[MPA_FRAME_HDR_LEN] = {0};
	struct mpa_frame f;

	base_request(b, false);
	b[16] = 0x10 | 0x40;
	ck_assert_int_eq(mpa_frame_decode(b, 20, false, &f), 20);
	ck_assert(!f.enhanced);
	ck_assert_uint_eq(f.pd_len, 0);
}
END_TEST

START_TEST(reserved_bits_and_r_in_a_request_are_ignored)
{
	uint8_t b[MPA_FRAME_HDR_LEN + 4] = {0};
	struct mpa_frame f;

	base_request(b, false);
	b[16] = 0x1F | 0x20 | 0x80;
	ck_assert_int_eq(mpa_frame_decode(b, 20, false, &f), 20);
	ck_assert(f.markers);
	ck_assert(!f.crc);
	ck_assert(!f.reject);

	base_request(b, true);
	b[16] = 0x0F | 0x20 | 0x10;
	b[17] = 2;
	b[19] = 4;
	iw_put_be16(b + 20, 0x0005);
	iw_put_be16(b + 22, 0x0007);
	ck_assert_int_eq(mpa_frame_decode(b, 24, true, &f), 24);
	ck_assert(f.reject);
	ck_assert(f.enhanced);
	ck_assert_uint_eq(f.ird, 5);
	ck_assert_uint_eq(f.ord, 7);
	ck_assert(!f.p2p);
	ck_assert_uint_eq(f.rtr, 0);
}
END_TEST

START_TEST(ird_ord_word_bits_decode_to_fields)
{
	uint8_t b[MPA_FRAME_HDR_LEN + 4] = {0};
	struct mpa_frame f;

	base_request(b, false);
	b[16] = 0x50;
	b[17] = 2;
	b[19] = 4;
	iw_put_be16(b + 20, 0x8000 | 0x4000 | 0x1234);
	iw_put_be16(b + 22, 0x8000 | 0x4000 | 0x2345);
	ck_assert_int_eq(mpa_frame_decode(b, 24, false, &f), 24);
	ck_assert(f.p2p);
	ck_assert_uint_eq(f.rtr, MPA_RTR_ALL);
	ck_assert_uint_eq(f.ird, 0x1234);
	ck_assert_uint_eq(f.ord, 0x2345);
	ck_assert_uint_eq(f.pd_len, 0);
}
END_TEST

START_TEST(decode_leaves_the_frame_alone_on_error)
{
	uint8_t b[MPA_FRAME_HDR_LEN] = {0};
	struct mpa_frame f;

	memset(&f, 0x5A, sizeof(f));
	base_request(b, false);
	b[17] = 9;
	ck_assert_int_eq(mpa_frame_decode(b, 20, false, &f), IW_EMPA_REV);
	ck_assert_uint_eq(f.rev, 0x5A);
	ck_assert_int_eq(mpa_frame_decode(b, 20, false, NULL), IW_EINVAL);
	ck_assert_int_eq(mpa_frame_decode(NULL, 3, false, &f), IW_EINVAL);
}
END_TEST

START_TEST(encode_fails_with_enospc_for_every_short_buffer)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(frame_vectors); i++) {
		const struct frame_vector *fv = &frame_vectors[i];
		uint8_t out[MPA_FRAME_MAX_LEN];
		struct vec_bytes v;
		struct mpa_frame f;

		vec_load(fv->bytes_hex, &v);
		ck_assert_int_gt(mpa_frame_decode(v.b, v.len, fv->reply, &f), 0);
		for (size_t cap = 0; cap < v.len; cap++)
			ck_assert_int_eq(mpa_frame_encode(&f, out, cap), IW_ENOSPC);
		ck_assert_int_eq(mpa_frame_encode(&f, out, v.len), (ssize_t)v.len);
	}
}
END_TEST

static void good_frame(struct mpa_frame *f, bool enhanced)
{
	memset(f, 0, sizeof(*f));
	f->crc = true;
	f->rev = enhanced ? 2 : 1;
	f->enhanced = enhanced;
	f->ird = 4;
	f->ord = 4;
}

START_TEST(encode_refuses_frames_we_must_not_send)
{
	static uint8_t pd[MPA_PD_MAX + 1];
	uint8_t out[MPA_FRAME_MAX_LEN + 8];
	struct mpa_frame f;

	good_frame(&f, false);
	f.rev = 0;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);
	f.rev = 3;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);

	good_frame(&f, false);
	f.enhanced = true; /* rev 1 */
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);

	good_frame(&f, true);
	f.ird = 0x4000;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);
	good_frame(&f, true);
	f.ord = 0xFFFF;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);
	good_frame(&f, true);
	f.rtr = 8;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);

	good_frame(&f, false);
	f.reject = true; /* in a Request */
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);
	f.reply = true;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), 20);

	good_frame(&f, false);
	f.pd = pd;
	f.pd_len = 513;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);
	f.pd_len = 512;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), 532);

	good_frame(&f, true);
	f.pd = pd;
	f.pd_len = 509;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);
	f.pd_len = 508;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), 532);
	ck_assert_uint_eq(iw_get_be16(out + 18), 512);

	good_frame(&f, false);
	f.pd = NULL;
	f.pd_len = 3;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), IW_EINVAL);
	ck_assert_int_eq(mpa_frame_encode(NULL, out, sizeof(out)), IW_EINVAL);
	/* Invalid frames are refused before the space check. */
	good_frame(&f, false);
	f.rev = 7;
	ck_assert_int_eq(mpa_frame_encode(&f, out, 0), IW_EINVAL);
}
END_TEST

START_TEST(encode_sends_reserved_bits_as_zero)
{
	uint8_t out[MPA_FRAME_MAX_LEN];
	struct mpa_frame f;

	good_frame(&f, false);
	f.markers = true;
	f.p2p = true; /* meaningless without S: not sent */
	f.rtr = MPA_RTR_ALL;
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), 20);
	ck_assert_uint_eq(out[16], 0xC0);
	ck_assert_uint_eq(out[17], 1);
	ck_assert_uint_eq(iw_get_be16(out + 18), 0);
}
END_TEST

START_TEST(maximum_frames_round_trip)
{
	static uint8_t pd[MPA_PD_MAX];
	uint8_t out[MPA_FRAME_MAX_LEN];
	struct mpa_frame f, g;

	for (size_t i = 0; i < sizeof(pd); i++)
		pd[i] = (uint8_t)(i * 7 + 1);
	good_frame(&f, true);
	f.reply = true;
	f.reject = true;
	f.markers = true;
	f.p2p = true;
	f.rtr = MPA_RTR_READ | MPA_RTR_SEND;
	f.ird = MPA_IRD_ORD_MAX;
	f.ord = 0;
	f.pd = pd;
	f.pd_len = MPA_PD_MAX - MPA_IRD_ORD_LEN;
	ck_assert_uint_eq(mpa_frame_len(&f), MPA_FRAME_MAX_LEN);
	ck_assert_int_eq(mpa_frame_encode(&f, out, sizeof(out)), MPA_FRAME_MAX_LEN);
	ck_assert_int_eq(mpa_frame_decode(out, sizeof(out), true, &g), MPA_FRAME_MAX_LEN);
	ck_assert(g.reply && g.reject && g.markers && g.crc && g.enhanced && g.p2p);
	ck_assert_uint_eq(g.rtr, MPA_RTR_READ | MPA_RTR_SEND);
	ck_assert_uint_eq(g.ird, MPA_IRD_ORD_MAX);
	ck_assert_uint_eq(g.ord, 0);
	ck_assert_uint_eq(g.pd_len, f.pd_len);
	ck_assert_mem_eq(g.pd, pd, g.pd_len);
}
END_TEST

static Suite *mpa_frame_suite(void)
{
	Suite *s = suite_create("mpa_frame");
	TCase *tc = tcase_create("frame");

	tcase_add_test(tc, frame_vectors_decode_to_listed_fields);
	tcase_add_test(tc, frame_vectors_reencode_byte_exact);
	tcase_add_test(tc, siw_request_parses_as_enhanced_client_server_ird1_ord1);
	tcase_add_test(tc, every_truncation_asks_for_more);
	tcase_add_test(tc, octets_after_the_frame_are_not_consumed);
	tcase_add_test(tc, each_wrong_key_octet_reports_mpa_key_at_once);
	tcase_add_test(tc, the_other_key_is_a_key_error);
	tcase_add_test(tc, bad_revisions_report_mpa_rev);
	tcase_add_test(tc, pd_length_over_512_reports_mpa_pdlen);
	tcase_add_test(tc, enhanced_frame_with_pd_length_below_4_reports_mpa_pdlen);
	tcase_add_test(tc, s_bit_of_a_rev1_frame_is_reserved_and_ignored);
	tcase_add_test(tc, reserved_bits_and_r_in_a_request_are_ignored);
	tcase_add_test(tc, ird_ord_word_bits_decode_to_fields);
	tcase_add_test(tc, decode_leaves_the_frame_alone_on_error);
	tcase_add_test(tc, encode_fails_with_enospc_for_every_short_buffer);
	tcase_add_test(tc, encode_refuses_frames_we_must_not_send);
	tcase_add_test(tc, encode_sends_reserved_bits_as_zero);
	tcase_add_test(tc, maximum_frames_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(mpa_frame_suite)
