/* SPDX-License-Identifier: MIT */
/*
 * test_ddp_hdr.c - DDP tagged/untagged headers (RFC 5041 §4): the known-answer
 * segments of ddp-rdmap.json decode to their fields and re-encode byte-exact,
 * truncated input asks for more, a wrong DDP version is reported by model with
 * the header still decoded, reserved bits are ignored, and random headers
 * survive an encode/decode round trip.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/ddp.h>

#include "iw_bytes.h"
#include "iw_vectors.h"
#include "th.h"

#define SEG_MAX 2048

static size_t vec_bytes(const struct ddp_rdmap_vector *v, uint8_t *buf)
{
	long n = th_hex_decode(v->bytes_hex, buf, SEG_MAX);

	ck_assert_msg(n >= 0, "%s: bad hex", v->name);
	return (size_t)n;
}

static void expect_field(const struct ddp_rdmap_vector *v, const char *what, int64_t want,
			 uint64_t got)
{
	if (want >= 0)
		ck_assert_msg(got == (uint64_t)want, "%s: %s %llu, want %lld", v->name, what,
			      (unsigned long long)got, (long long)want);
}

static bool hdr_eq(const struct ddp_hdr *a, const struct ddp_hdr *b)
{
	return a->tagged == b->tagged && a->last == b->last && a->dv == b->dv &&
	       a->rsvdulp == b->rsvdulp && a->stag == b->stag && a->to == b->to &&
	       a->rsvdulp2 == b->rsvdulp2 && a->qn == b->qn && a->msn == b->msn && a->mo == b->mo;
}

START_TEST(hdr_every_vector_segment_decodes_to_its_fields)
{
	size_t checked = 0;

	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_rdmap_vectors); i++) {
		const struct ddp_rdmap_vector *v = &ddp_rdmap_vectors[i];
		uint8_t buf[SEG_MAX];
		struct ddp_hdr h;
		size_t n;
		ssize_t r;

		if (v->mpa_framed)
			continue;
		n = vec_bytes(v, buf);
		if (v->length >= 0)
			ck_assert_uint_eq(n, (uint64_t)v->length);
		r = ddp_hdr_decode(buf, n, &h);
		ck_assert_msg(r == 14 || r == 18, "%s: decode %zd", v->name, r);
		ck_assert_uint_eq((size_t)r, ddp_hdr_len(h.tagged));
		expect_field(v, "T", v->T, h.tagged);
		expect_field(v, "L", v->L, h.last);
		expect_field(v, "DV", v->DV, h.dv);
		ck_assert_uint_eq(h.dv, DDP_VERSION);
		if (h.tagged) {
			expect_field(v, "stag", v->stag, h.stag);
			expect_field(v, "to", v->to, h.to);
		} else {
			expect_field(v, "inv_stag", v->inv_stag, h.rsvdulp2);
			expect_field(v, "qn", v->qn, h.qn);
			expect_field(v, "msn", v->msn, h.msn);
			expect_field(v, "mo", v->mo, h.mo);
		}
		/* header_length of RDMAP vectors may include the RDMAP header after DDP's. */
		if (v->header_length == 14 || v->header_length == 18)
			expect_field(v, "header_length", v->header_length, (uint64_t)r);
		if (v->payload_length >= 0 && v->header_length >= 0)
			ck_assert_msg((int64_t)n - v->header_length == v->payload_length,
				      "%s: payload length", v->name);
		/* The RDMAP control octet travels in RsvdULP[0:7] (RFC 5040 §4.1). */
		ck_assert_uint_eq(h.rsvdulp, buf[1]);
		checked++;
	}
	ck_assert_uint_ge(checked, 13);
}
END_TEST

START_TEST(hdr_every_vector_segment_reencodes_byte_exact)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_rdmap_vectors); i++) {
		const struct ddp_rdmap_vector *v = &ddp_rdmap_vectors[i];
		uint8_t buf[SEG_MAX], out[DDP_HDR_MAX_LEN + 4];
		struct ddp_hdr h;
		size_t n;
		ssize_t r, w;

		if (v->mpa_framed)
			continue;
		n = vec_bytes(v, buf);
		r = ddp_hdr_decode(buf, n, &h);
		ck_assert_int_gt(r, 0);
		memset(out, 0xEE, sizeof(out));
		w = ddp_hdr_encode(&h, out, sizeof(out));
		ck_assert_int_eq(w, r);
		ck_assert_msg(memcmp(out, buf, (size_t)r) == 0, "%s: re-encode differs", v->name);
		ck_assert_uint_eq(out[r], 0xEE); /* nothing written past the header */
	}
}
END_TEST

START_TEST(hdr_send_with_invalidate_carries_the_stag_in_rsvdulp2)
{
	static const uint8_t seg[] = {0x41, 0x44, 0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0,   0,
				      0,    0,	  0,	0x07, 0,    0,	  0, 0, 'h', 'i'};
	struct ddp_hdr h;

	ck_assert_int_eq(ddp_hdr_decode(seg, sizeof(seg), &h), DDP_UNTAGGED_HDR_LEN);
	ck_assert_uint_eq(h.rsvdulp, 0x44);
	ck_assert_uint_eq(h.rsvdulp2, 0xCAFEBABEu);
	ck_assert_uint_eq(h.msn, 7);
}
END_TEST

START_TEST(hdr_truncated_at_every_length_asks_for_more)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_rdmap_vectors); i++) {
		const struct ddp_rdmap_vector *v = &ddp_rdmap_vectors[i];
		uint8_t buf[SEG_MAX];
		struct ddp_hdr h;
		size_t hlen;

		if (v->mpa_framed)
			continue;
		vec_bytes(v, buf);
		hlen = ddp_hdr_len(buf[0] & DDP_CTRL_T);
		for (size_t len = 0; len < hlen; len++) {
			uint8_t *p = th_memdup_exact(buf, len);

			ck_assert_msg(ddp_hdr_decode(p, len, &h) == IW_EAGAIN, "%s at %zu", v->name,
				      len);
			free(p);
		}
	}
}
END_TEST

START_TEST(hdr_wrong_version_is_reported_by_model_with_the_header_filled)
{
	static const uint8_t tagged[] = {0xC1, 0x40, 0x12, 0x34, 0x56, 0x78, 0x00,
					 0x00, 0x00, 0x01, 0x00, 0x00, 0x20, 0x00};
	static const uint8_t untagged[] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0,
					   0x02, 0,    0, 0, 9, 0, 0, 0, 0x10};

	for (uint8_t dv = 0; dv <= 3; dv++) {
		uint8_t t[sizeof(tagged)], u[sizeof(untagged)];
		struct ddp_hdr h;

		if (dv == DDP_VERSION)
			continue;
		memcpy(t, tagged, sizeof(t));
		memcpy(u, untagged, sizeof(u));
		t[0] = (uint8_t)((t[0] & ~DDP_CTRL_DV) | dv);
		u[0] = (uint8_t)((u[0] & ~DDP_CTRL_DV) | dv);

		memset(&h, 0, sizeof(h));
		ck_assert_int_eq(ddp_hdr_decode(t, sizeof(t), &h), IW_EDDP_T_VERSION);
		ck_assert(h.tagged && h.last);
		ck_assert_uint_eq(h.dv, dv);
		ck_assert_uint_eq(h.rsvdulp, 0x40);
		ck_assert_uint_eq(h.stag, 0x12345678u);
		ck_assert_uint_eq(h.to, 0x0000000100002000ull);

		memset(&h, 0, sizeof(h));
		ck_assert_int_eq(ddp_hdr_decode(u, sizeof(u), &h), IW_EDDP_U_VERSION);
		ck_assert(!h.tagged && h.last);
		ck_assert_uint_eq(h.dv, dv);
		ck_assert_uint_eq(h.qn, 2);
		ck_assert_uint_eq(h.msn, 9);
		ck_assert_uint_eq(h.mo, 0x10);

		/* Still truncated: more input is needed before the version matters. */
		ck_assert_int_eq(ddp_hdr_decode(t, sizeof(t) - 1, &h), IW_EAGAIN);
		ck_assert_int_eq(ddp_hdr_decode(u, 1, &h), IW_EAGAIN);
	}
}
END_TEST

START_TEST(hdr_reserved_bits_are_ignored_on_decode_and_zero_on_encode)
{
	static const uint8_t plain[] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};

	for (unsigned rsvd = 0; rsvd <= DDP_CTRL_RSVD; rsvd += 0x04) {
		uint8_t seg[sizeof(plain)], out[DDP_HDR_MAX_LEN];
		struct ddp_hdr h;

		memcpy(seg, plain, sizeof(seg));
		seg[0] |= (uint8_t)rsvd;
		ck_assert_int_eq(ddp_hdr_decode(seg, sizeof(seg), &h), DDP_UNTAGGED_HDR_LEN);
		ck_assert(!h.tagged && h.last);
		ck_assert_uint_eq(h.dv, 1);
		ck_assert_int_eq(ddp_hdr_encode(&h, out, sizeof(out)), DDP_UNTAGGED_HDR_LEN);
		ck_assert_mem_eq(out, plain, sizeof(plain));
	}
}
END_TEST

START_TEST(hdr_encode_always_sends_version_one)
{
	struct ddp_hdr h = {.tagged = true, .last = false, .dv = 3, .stag = 1, .to = 2};
	uint8_t out[DDP_HDR_MAX_LEN];

	ck_assert_int_eq(ddp_hdr_encode(&h, out, sizeof(out)), DDP_TAGGED_HDR_LEN);
	ck_assert_uint_eq(out[0], 0x81);
	h.tagged = false;
	h.last = true;
	ck_assert_int_eq(ddp_hdr_encode(&h, out, sizeof(out)), DDP_UNTAGGED_HDR_LEN);
	ck_assert_uint_eq(out[0], 0x41);
}
END_TEST

START_TEST(hdr_encode_into_a_short_buffer_is_enospc)
{
	struct ddp_hdr t = {.tagged = true};
	struct ddp_hdr u = {.tagged = false};
	uint8_t out[DDP_HDR_MAX_LEN];

	for (size_t cap = 0; cap < DDP_TAGGED_HDR_LEN; cap++)
		ck_assert_int_eq(ddp_hdr_encode(&t, out, cap), IW_ENOSPC);
	for (size_t cap = 0; cap < DDP_UNTAGGED_HDR_LEN; cap++)
		ck_assert_int_eq(ddp_hdr_encode(&u, out, cap), IW_ENOSPC);
	ck_assert_int_eq(ddp_hdr_encode(&t, out, DDP_TAGGED_HDR_LEN), DDP_TAGGED_HDR_LEN);
	ck_assert_int_eq(ddp_hdr_encode(&u, out, DDP_UNTAGGED_HDR_LEN), DDP_UNTAGGED_HDR_LEN);
}
END_TEST

START_TEST(hdr_random_headers_round_trip)
{
	struct th_rng rng;

	th_rng_init(&rng, th_seed_from_env() ^ 0xDD9u);
	for (int i = 0; i < 10000; i++) {
		uint64_t r = th_rng_next(&rng);
		struct ddp_hdr h =
				       {
					       .tagged = r & 1,
					       .last = (r >> 1) & 1,
					       .dv = DDP_VERSION,
					       .rsvdulp = (uint8_t)(r >> 8),
				       },
			       back;
		uint8_t out[DDP_HDR_MAX_LEN];
		ssize_t n;

		if (h.tagged) {
			h.stag = (uint32_t)th_rng_next(&rng);
			h.to = th_rng_next(&rng);
		} else {
			h.rsvdulp2 = (uint32_t)th_rng_next(&rng);
			h.qn = (uint32_t)th_rng_next(&rng);
			h.msn = (uint32_t)th_rng_next(&rng);
			h.mo = (uint32_t)th_rng_next(&rng);
		}
		n = ddp_hdr_encode(&h, out, sizeof(out));
		ck_assert_int_eq(n, (ssize_t)ddp_hdr_len(h.tagged));
		ck_assert_int_eq(ddp_hdr_decode(out, (size_t)n, &back), n);
		ck_assert(hdr_eq(&back, &h));
	}
}
END_TEST

static Suite *ddp_hdr_suite(void)
{
	Suite *s = suite_create("ddp_hdr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, hdr_every_vector_segment_decodes_to_its_fields);
	tcase_add_test(tc, hdr_every_vector_segment_reencodes_byte_exact);
	tcase_add_test(tc, hdr_send_with_invalidate_carries_the_stag_in_rsvdulp2);
	tcase_add_test(tc, hdr_truncated_at_every_length_asks_for_more);
	tcase_add_test(tc, hdr_wrong_version_is_reported_by_model_with_the_header_filled);
	tcase_add_test(tc, hdr_reserved_bits_are_ignored_on_decode_and_zero_on_encode);
	tcase_add_test(tc, hdr_encode_always_sends_version_one);
	tcase_add_test(tc, hdr_encode_into_a_short_buffer_is_enospc);
	tcase_add_test(tc, hdr_random_headers_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(ddp_hdr_suite)
