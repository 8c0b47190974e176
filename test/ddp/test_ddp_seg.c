/* SPDX-License-Identifier: MIT */
/*
 * test_ddp_seg.c - DDP segmentation (RFC 5041 §5.2): the RFC's example (2048
 * octets, MULPDU 1500), zero-length and one-octet messages, exact multiples of
 * the segment payload, a MULPDU too small for a header plus one octet, and a
 * random property test of the invariants.
 */
#include <string.h>

#include <iwarp/ddp.h>

#include "iw_bytes.h"
#include "th.h"

struct seg_out {
	struct ddp_hdr h;
	uint32_t off, len;
};

#define SEG_CAP 64

/* Run the segmenter to the end; returns the number of segments. */
static size_t seg_all(const struct ddp_hdr *tmpl, uint32_t msg_len, uint32_t mulpdu,
		      struct seg_out *out, size_t cap)
{
	struct ddp_seg s;
	size_t n = 0;

	ck_assert_int_eq(ddp_seg_init(&s, tmpl, msg_len, mulpdu), IW_OK);
	while (n < cap && ddp_seg_next(&s, &out[n].h, &out[n].off, &out[n].len))
		n++;
	ck_assert_msg(n < cap, "too many segments");
	/* Once done, it stays done. */
	ck_assert(!ddp_seg_next(&s, &out[cap - 1].h, &out[cap - 1].off, &out[cap - 1].len));
	return n;
}

static const struct ddp_hdr untagged_tmpl = {
	.tagged = false, .rsvdulp = 0x43, .qn = DDP_QN_SEND, .msn = 2, .mo = 0xDEAD};
static const struct ddp_hdr tagged_tmpl = {
	.tagged = true, .rsvdulp = 0x40, .stag = 0x12345678u, .to = 16384};

START_TEST(seg_rfc_example_untagged_2048_at_1500_is_1482_then_566)
{
	struct seg_out o[SEG_CAP];
	size_t n = seg_all(&untagged_tmpl, 2048, 1500, o, SEG_CAP);

	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(o[0].off, 0);
	ck_assert_uint_eq(o[0].len, 1482);
	ck_assert_uint_eq(o[0].h.mo, 0);
	ck_assert(!o[0].h.last);
	ck_assert_uint_eq(o[1].off, 1482);
	ck_assert_uint_eq(o[1].len, 566);
	ck_assert_uint_eq(o[1].h.mo, 1482);
	ck_assert(o[1].h.last);
	for (size_t i = 0; i < n; i++) {
		ck_assert(!o[i].h.tagged);
		ck_assert_uint_eq(o[i].h.msn, 2);
		ck_assert_uint_eq(o[i].h.qn, 0);
		ck_assert_uint_eq(o[i].h.rsvdulp, 0x43);
		ck_assert_uint_eq(o[i].h.dv, DDP_VERSION);
	}
}
END_TEST

START_TEST(seg_rfc_example_tagged_from_to_16384_is_1486_then_562)
{
	struct seg_out o[SEG_CAP];
	size_t n = seg_all(&tagged_tmpl, 2048, 1500, o, SEG_CAP);

	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(o[0].h.to, 16384);
	ck_assert_uint_eq(o[0].len, 1486);
	ck_assert(!o[0].h.last);
	ck_assert_uint_eq(o[1].h.to, 17870);
	ck_assert_uint_eq(o[1].off, 1486);
	ck_assert_uint_eq(o[1].len, 562);
	ck_assert(o[1].h.last);
	for (size_t i = 0; i < n; i++) {
		ck_assert(o[i].h.tagged);
		ck_assert_uint_eq(o[i].h.stag, 0x12345678u);
		ck_assert_uint_eq(o[i].h.rsvdulp, 0x40);
	}
}
END_TEST

START_TEST(seg_second_rfc_segment_encodes_like_the_vector_header)
{
	static const uint8_t want[] = {0x41, 0x43, 0, 0, 0, 0, 0, 0,	0,
				       0,    0,	   0, 0, 2, 0, 0, 0x05, 0xCA};
	struct ddp_hdr tmpl = untagged_tmpl;
	struct seg_out o[SEG_CAP];
	uint8_t buf[DDP_HDR_MAX_LEN];

	tmpl.mo = 0;
	ck_assert_uint_eq(seg_all(&tmpl, 2048, 1500, o, SEG_CAP), 2);
	ck_assert_int_eq(ddp_hdr_encode(&o[1].h, buf, sizeof(buf)), DDP_UNTAGGED_HDR_LEN);
	ck_assert_mem_eq(buf, want, sizeof(want));
}
END_TEST

START_TEST(seg_zero_length_message_is_one_last_segment)
{
	struct seg_out o[SEG_CAP];

	ck_assert_uint_eq(seg_all(&untagged_tmpl, 0, 1500, o, SEG_CAP), 1);
	ck_assert(o[0].h.last);
	ck_assert_uint_eq(o[0].off, 0);
	ck_assert_uint_eq(o[0].len, 0);
	ck_assert_uint_eq(o[0].h.mo, 0);

	ck_assert_uint_eq(seg_all(&tagged_tmpl, 0, DDP_TAGGED_HDR_LEN + 1, o, SEG_CAP), 1);
	ck_assert(o[0].h.last);
	ck_assert_uint_eq(o[0].len, 0);
	ck_assert_uint_eq(o[0].h.to, 16384);
}
END_TEST

START_TEST(seg_one_octet_message_is_one_last_segment)
{
	struct seg_out o[SEG_CAP];

	ck_assert_uint_eq(seg_all(&untagged_tmpl, 1, 1500, o, SEG_CAP), 1);
	ck_assert(o[0].h.last);
	ck_assert_uint_eq(o[0].len, 1);
	ck_assert_uint_eq(seg_all(&tagged_tmpl, 1, DDP_TAGGED_HDR_LEN + 1, o, SEG_CAP), 1);
	ck_assert(o[0].h.last);
	ck_assert_uint_eq(o[0].len, 1);
}
END_TEST

START_TEST(seg_exact_multiple_has_no_empty_trailing_segment)
{
	struct seg_out o[SEG_CAP];
	size_t n;

	/* 3 full untagged segments of 1482: the third carries L. */
	n = seg_all(&untagged_tmpl, 3 * 1482, 1500, o, SEG_CAP);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(o[i].len, 1482);
		ck_assert_uint_eq(o[i].h.mo, i * 1482);
		ck_assert(o[i].h.last == (i == n - 1));
	}
	/* Exactly one segment's worth. */
	ck_assert_uint_eq(seg_all(&tagged_tmpl, 1486, 1500, o, SEG_CAP), 1);
	ck_assert(o[0].h.last);
	ck_assert_uint_eq(o[0].len, 1486);
	/* One octet of payload per segment at the smallest MULPDU. */
	n = seg_all(&untagged_tmpl, 5, DDP_UNTAGGED_HDR_LEN + 1, o, SEG_CAP);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < n; i++)
		ck_assert(o[i].len == 1 && o[i].h.mo == i && o[i].h.last == (i == 4));
}
END_TEST

START_TEST(seg_mulpdu_without_room_for_one_octet_is_einval)
{
	struct ddp_seg s;

	for (uint32_t m = 0; m <= DDP_TAGGED_HDR_LEN; m++)
		ck_assert_int_eq(ddp_seg_init(&s, &tagged_tmpl, 10, m), IW_EINVAL);
	for (uint32_t m = 0; m <= DDP_UNTAGGED_HDR_LEN; m++)
		ck_assert_int_eq(ddp_seg_init(&s, &untagged_tmpl, 10, m), IW_EINVAL);
	ck_assert_int_eq(ddp_seg_init(&s, &tagged_tmpl, 10, DDP_TAGGED_HDR_LEN + 1), IW_OK);
	ck_assert_int_eq(ddp_seg_init(&s, &untagged_tmpl, 10, DDP_UNTAGGED_HDR_LEN + 1), IW_OK);
}
END_TEST

START_TEST(seg_tagged_offset_adds_modulo_2_64)
{
	struct ddp_hdr tmpl = tagged_tmpl;
	struct seg_out o[SEG_CAP];

	tmpl.to = UINT64_MAX - 9; /* the receiver reports the wrap, not the sender */
	ck_assert_uint_eq(seg_all(&tmpl, 30, DDP_TAGGED_HDR_LEN + 10, o, SEG_CAP), 3);
	ck_assert_uint_eq(o[1].h.to, 0);
	ck_assert_uint_eq(o[2].h.to, 10);
}
END_TEST

/*
 * Check's assertions record a mark point per call, which is too slow for the
 * millions of checks below: test plainly and fail with the case that broke.
 */
#define REQ(cond)                                                                                  \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg("iter %d tagged %d msg_len %u mulpdu %u off %u: %s", iter,    \
				     tagged, msg_len, mulpdu, off, #cond);                         \
	} while (0)

START_TEST(seg_random_messages_keep_every_invariant)
{
	struct th_rng rng;

	th_rng_init(&rng, th_seed_from_env() ^ 0x5E6u);
	for (int iter = 0; iter < 20000; iter++) {
		bool tagged = th_rng_next(&rng) & 1;
		uint32_t hlen = (uint32_t)ddp_hdr_len(tagged);
		/* Small MULPDUs often so that messages split into many segments. */
		uint32_t mulpdu = (uint32_t)(iter & 1 ? th_rng_range(&rng, hlen + 1, hlen + 64)
						      : th_rng_range(&rng, hlen + 1, 70000));
		uint32_t msg_len = (uint32_t)(iter % 7 == 0 ? th_rng_range(&rng, 0, 0xFFFFFFFFu)
							    : th_rng_range(&rng, 0, 5000));
		struct ddp_hdr tmpl = {
			.tagged = tagged,
			.rsvdulp = (uint8_t)th_rng_next(&rng),
			.stag = (uint32_t)th_rng_next(&rng),
			.to = th_rng_next(&rng),
			.rsvdulp2 = (uint32_t)th_rng_next(&rng),
			.qn = (uint32_t)th_rng_range(&rng, 0, 3),
			.msn = (uint32_t)th_rng_next(&rng),
		};
		struct ddp_seg s;
		struct ddp_hdr h;
		uint32_t off = 0, len;
		uint64_t sum = 0, nseg = 0, want_nseg;
		bool seen_last = false;

		/* Keep the huge messages from producing millions of segments. */
		if (msg_len / (mulpdu - hlen) > 4096)
			mulpdu = (uint32_t)IW_MIN(0xFFFFFFFFull, msg_len / 4096 + hlen + 1);
		ck_assert_int_eq(ddp_seg_init(&s, &tmpl, msg_len, mulpdu), IW_OK);
		while (ddp_seg_next(&s, &h, &off, &len)) {
			REQ(!seen_last);
			REQ(off == sum); /* contiguous */
			REQ(len + hlen <= mulpdu);
			REQ(len > 0 || msg_len == 0);
			REQ(h.tagged == tagged);
			REQ(h.dv == DDP_VERSION);
			REQ(h.rsvdulp == tmpl.rsvdulp);
			if (tagged) {
				REQ(h.stag == tmpl.stag);
				REQ(h.to == tmpl.to + off);
			} else {
				REQ(h.rsvdulp2 == tmpl.rsvdulp2);
				REQ(h.qn == tmpl.qn);
				REQ(h.msn == tmpl.msn);
				REQ(h.mo == off);
			}
			seen_last = h.last;
			REQ(h.last == (off + (uint64_t)len == msg_len));
			sum += len;
			nseg++;
		}
		REQ(seen_last);
		REQ(sum == msg_len);
		want_nseg =
			msg_len ? ((uint64_t)msg_len + (mulpdu - hlen) - 1) / (mulpdu - hlen) : 1;
		REQ(nseg == want_nseg);
	}
}
END_TEST

static Suite *ddp_seg_suite(void)
{
	Suite *s = suite_create("ddp_seg");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, seg_rfc_example_untagged_2048_at_1500_is_1482_then_566);
	tcase_add_test(tc, seg_rfc_example_tagged_from_to_16384_is_1486_then_562);
	tcase_add_test(tc, seg_second_rfc_segment_encodes_like_the_vector_header);
	tcase_add_test(tc, seg_zero_length_message_is_one_last_segment);
	tcase_add_test(tc, seg_one_octet_message_is_one_last_segment);
	tcase_add_test(tc, seg_exact_multiple_has_no_empty_trailing_segment);
	tcase_add_test(tc, seg_mulpdu_without_room_for_one_octet_is_einval);
	tcase_add_test(tc, seg_tagged_offset_adds_modulo_2_64);
	tcase_add_test(tc, seg_random_messages_keep_every_invariant);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(ddp_seg_suite)
