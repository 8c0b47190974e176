/* SPDX-License-Identifier: MIT */
/*
 * test_mpa_tx.c - FPDU transmit framing (RFC 5044 §4): known-answer vectors,
 * zero copy, PAD, Markers, CRC off, partial writes, MULPDU, argument checks.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>

#include "fpdu_ref.h"
#include "fpdu_vec.h"
#include "iw_bytes.h"
#include "iw_vectors.h"
#include "th.h"

#define BIG (MPA_FPDU_NOMARK_MAX + 4 * MPA_MARKERS_PER_FPDU_MAX)

/* Concatenate the pending iovecs of f. */
static size_t fpdu_gather(const struct mpa_fpdu *f, uint8_t *out)
{
	size_t o = 0;

	for (int i = f->first; i < f->first + f->iovcnt; i++) {
		memcpy(out + o, f->iov[i].iov_base, f->iov[i].iov_len);
		o += f->iov[i].iov_len;
	}
	return o;
}

static size_t pending(const struct mpa_fpdu *f)
{
	size_t t = 0;

	for (int i = f->first; i < f->first + f->iovcnt; i++)
		t += f->iov[i].iov_len;
	return t;
}

static bool in_range(const void *p, size_t n, const void *base, size_t len)
{
	const uint8_t *a = p, *b = base;

	return a >= b && a + n <= b + len;
}

/* Every iovec points into the caller's ULPDU or into f itself; none is empty. */
static void check_zero_copy(const struct mpa_fpdu *f, const uint8_t *ulpdu, size_t ulen)
{
	size_t from_user = 0;

	ck_assert_int_le(f->iovcnt, MPA_FPDU_IOV_MAX);
	for (int i = f->first; i < f->first + f->iovcnt; i++) {
		const struct iovec *v = &f->iov[i];

		ck_assert_uint_gt(v->iov_len, 0);
		if (ulen && in_range(v->iov_base, v->iov_len, ulpdu, ulen))
			from_user += v->iov_len;
		else
			ck_assert(in_range(v->iov_base, v->iov_len, f, sizeof(*f)));
	}
	ck_assert_uint_eq(from_user, ulen);
}

/* Split buf into up to `cnt` iovecs at random points (some empty). */
static int random_split(struct th_rng *r, uint8_t *buf, size_t len, struct iovec *iov, int max)
{
	int cnt = (int)th_rng_range(r, 1, (uint64_t)max);
	size_t off = 0;

	for (int i = 0; i < cnt; i++) {
		size_t n = i == cnt - 1 ? len - off : th_rng_range(r, 0, len - off);
		iov[i].iov_base = buf + off;
		iov[i].iov_len = n;
		off += n;
	}
	return cnt;
}

START_TEST(tx_vectors_are_rebuilt_byte_exact)
{
	struct th_rng r;

	th_rng_init(&r, th_seed_from_env());
	for (size_t k = 0; k < IW_ARRAY_SIZE(fpdu_vectors); k++) {
		const struct fpdu_vector *v = &fpdu_vectors[k];
		struct vec vec;
		struct mpa_fpdu *f = malloc(sizeof(*f));
		uint8_t out[4096];

		vec_load(v, &vec);
		for (int split = 0; split < 20; split++) {
			struct mpa_tx tx;
			struct iovec iov[MPA_TX_ULPDU_IOV_MAX];
			int cnt = 1;

			iov[0].iov_base = vec.ulpdu;
			iov[0].iov_len = vec.ulen;
			if (split > 0)
				cnt = random_split(&r, vec.ulpdu, vec.ulen, iov,
						   MPA_TX_ULPDU_IOV_MAX);
			mpa_tx_init(&tx, v->crc, v->markers, v->stream_offset);
			ck_assert_int_eq(mpa_tx_frame(&tx, iov, cnt, f), IW_OK);
			ck_assert_msg(f->total == vec.wire_len, "%s: total %zu want %zu", v->name,
				      f->total, vec.wire_len);
			ck_assert_uint_eq(f->len, f->total);
			ck_assert_uint_eq(fpdu_gather(f, out), vec.wire_len);
			ck_assert_msg(memcmp(out, vec.wire, vec.wire_len) == 0, "%s differs",
				      v->name);
			ck_assert_uint_eq(f->nmarkers, v->nmarkers);
			if (v->has_crc_value)
				ck_assert_uint_eq(f->crc, v->crc_value);
			ck_assert_uint_eq(tx.pos, v->stream_offset + vec.wire_len);
			check_zero_copy(f, vec.ulpdu, vec.ulen);
		}
		free(f);
	}
}
END_TEST

START_TEST(tx_rfc5044_figures_5_and_6_follow_each_other)
{
	/* Figure 5 then figure 6 are consecutive FPDUs of one stream, except that
	 * figure 6 starts at 0x1EC (the first FPDU there was 492 octets): frame
	 * figure 5's ULPDU at 0 and check the Marker pointer of figure 6 at 492. */
	struct vec v5, v6;
	struct mpa_fpdu *f = malloc(sizeof(*f));
	struct mpa_tx tx;
	struct iovec iov;
	uint8_t out[256];

	vec_load(&fpdu_vectors[0], &v5);
	vec_load(&fpdu_vectors[1], &v6);
	mpa_tx_init(&tx, true, true, 0);
	iov.iov_base = v5.ulpdu;
	iov.iov_len = v5.ulen;
	ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, f), IW_OK);
	ck_assert_uint_eq(f->crc, 0x83992352u);
	fpdu_gather(f, out);
	ck_assert_mem_eq(out + f->total - 4, "\x52\x23\x99\x83", 4);
	tx.pos = 0x1EC;
	iov.iov_base = v6.ulpdu;
	iov.iov_len = v6.ulen;
	ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, f), IW_OK);
	ck_assert_uint_eq(f->nmarkers, 1);
	ck_assert_mem_eq(f->markers[0], "\x00\x00\x00\x14", 4);
	ck_assert_uint_eq(f->crc, 0x98589284u);
	free(f);
}
END_TEST

START_TEST(tx_matches_reference_framer_for_random_ulpdus)
{
	struct th_rng r;
	struct mpa_fpdu *f = malloc(sizeof(*f));
	uint8_t *ulpdu = malloc(MPA_ULPDU_MAX), *ref = malloc(BIG), *out = malloc(BIG);

	th_rng_init(&r, th_seed_from_env() + 1);
	for (int it = 0; it < 600; it++) {
		static const size_t special[] = {
			0,   1,	  2,   3,   4,	 5,    502,  503,   504,   505,	  506,	 507,
			508, 509, 510, 511, 512, 1018, 1020, 64768, 65532, 65533, 65534, 65535};
		size_t ulen = it < 24 ? special[it]
				      : (it % 5 == 0 ? th_rng_range(&r, 0, MPA_ULPDU_MAX)
						     : th_rng_range(&r, 0, 2000));
		bool markers = it % 2, crc = (it / 2) % 2;
		uint32_t pos = (uint32_t)th_rng_next(&r) & ~3u;
		struct iovec iov[MPA_TX_ULPDU_IOV_MAX];
		struct mpa_tx tx;
		uint32_t rcrc;
		size_t rlen;
		int cnt;

		if (it % 7 == 0)
			pos = (uint32_t)(th_rng_range(&r, 0, 3) * 512 - th_rng_range(&r, 0, 8) * 4);
		th_rng_fill(&r, ulpdu, ulen);
		cnt = random_split(&r, ulpdu, ulen, iov, MPA_TX_ULPDU_IOV_MAX);
		mpa_tx_init(&tx, crc, markers, pos);
		ck_assert_int_eq(mpa_tx_frame(&tx, iov, cnt, f), IW_OK);
		rlen = fpdu_ref_build(ref, ulpdu, ulen, pos, markers, crc, &rcrc);
		ck_assert_uint_eq(f->total, rlen);
		ck_assert_uint_eq(fpdu_gather(f, out), rlen);
		ck_assert_msg(memcmp(out, ref, rlen) == 0, "ulen %zu pos %u m %d c %d", ulen, pos,
			      markers, crc);
		ck_assert_uint_eq(f->crc, rcrc);
		ck_assert_uint_eq(tx.pos, pos + (uint32_t)rlen);
		ck_assert_uint_eq(f->total % 4, 0);
		check_zero_copy(f, ulpdu, ulen);
	}
	free(f);
	free(ulpdu);
	free(ref);
	free(out);
}
END_TEST

/* mpa_tx_frame_linear: the same octets and CRC as the reference, in one piece of buf. */
START_TEST(tx_linear_matches_reference_framer_in_one_piece)
{
	struct th_rng r;
	struct mpa_fpdu *f = malloc(sizeof(*f));
	uint8_t *ulpdu = malloc(MPA_ULPDU_MAX), *ref = malloc(BIG),
		*lin = malloc(MPA_FPDU_WIRE_MAX);

	ck_assert_uint_ge(MPA_FPDU_WIRE_MAX, BIG);
	th_rng_init(&r, th_seed_from_env() + 7);
	for (int it = 0; it < 200; it++) {
		size_t ulen = it < 4 ? (size_t)(it ? MPA_ULPDU_MAX - it + 1 : 0)
				     : th_rng_range(&r, 0, MPA_ULPDU_MAX);
		bool markers = it % 4 != 3, crc = it % 5 != 4;
		uint32_t pos = (uint32_t)th_rng_next(&r) & ~3u;
		struct iovec iov[MPA_TX_ULPDU_IOV_MAX];
		struct mpa_tx tx;
		uint32_t rcrc;
		size_t rlen;
		int cnt;

		th_rng_fill(&r, ulpdu, ulen);
		cnt = random_split(&r, ulpdu, ulen, iov, MPA_TX_ULPDU_IOV_MAX);
		mpa_tx_init(&tx, crc, markers, pos);
		ck_assert_int_eq(mpa_tx_frame_linear(&tx, iov, cnt, f, lin), IW_OK);
		rlen = fpdu_ref_build(ref, ulpdu, ulen, pos, markers, crc, &rcrc);
		ck_assert_int_eq(f->iovcnt, 1);
		ck_assert_ptr_eq(f->iov[f->first].iov_base, lin);
		ck_assert_uint_eq(f->iov[f->first].iov_len, rlen);
		ck_assert_uint_eq(f->total, rlen);
		ck_assert_uint_eq(f->len, rlen);
		ck_assert_msg(memcmp(lin, ref, rlen) == 0, "ulen %zu pos %u m %d c %d", ulen, pos,
			      markers, crc);
		ck_assert_uint_eq(f->crc, rcrc);
		ck_assert_uint_eq(tx.pos, pos + (uint32_t)rlen);
	}
	ck_assert_int_eq(mpa_tx_frame_linear(&(struct mpa_tx){.crc = true}, NULL, 0, f, NULL),
			 IW_EINVAL);
	free(f);
	free(ulpdu);
	free(ref);
	free(lin);
}
END_TEST

START_TEST(tx_pad_is_zero_filled_to_a_multiple_of_four)
{
	uint8_t ulpdu[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[32];
	struct mpa_fpdu f;
	struct mpa_tx tx;

	for (size_t ulen = 0; ulen <= 8; ulen++) {
		struct iovec iov = {ulpdu, ulen};
		unsigned pad = (unsigned)((4 - (2 + ulen) % 4) % 4);

		ck_assert_uint_eq(mpa_pad_len(ulen), pad);
		mpa_tx_init(&tx, true, false, 0);
		ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, &f), IW_OK);
		ck_assert_uint_eq(f.total, 2 + ulen + pad + 4);
		fpdu_gather(&f, out);
		ck_assert_uint_eq(out[0], 0);
		ck_assert_uint_eq(out[1], ulen);
		for (unsigned i = 0; i < pad; i++)
			ck_assert_uint_eq(out[2 + ulen + i], 0);
		/* CRC least significant octet first */
		ck_assert_uint_eq(out[2 + ulen + pad], f.crc & 0xFF);
		ck_assert_uint_eq(out[2 + ulen + pad + 3], f.crc >> 24);
		ck_assert_uint_eq(f.crc, mpa_crc32c(out, 2 + ulen + pad));
	}
}
END_TEST

START_TEST(tx_crc_off_sends_a_zero_crc_field)
{
	for (size_t k = 0; k < IW_ARRAY_SIZE(fpdu_vectors); k++) {
		const struct fpdu_vector *v = &fpdu_vectors[k];
		struct vec vec;
		struct mpa_fpdu f;
		struct mpa_tx tx;
		struct iovec iov;
		uint8_t out[4096];

		vec_load(v, &vec);
		iov.iov_base = vec.ulpdu;
		iov.iov_len = vec.ulen;
		mpa_tx_init(&tx, false, v->markers, v->stream_offset);
		ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, &f), IW_OK);
		ck_assert_uint_eq(f.crc, 0);
		ck_assert_uint_eq(fpdu_gather(&f, out), vec.wire_len);
		ck_assert_mem_eq(out + vec.wire_len - 4, "\0\0\0\0", 4);
		/* everything but the CRC is what the CRC-on vector carries */
		ck_assert_mem_eq(out, vec.wire, vec.wire_len - 4);
	}
}
END_TEST

START_TEST(tx_partial_writes_at_every_offset_reassemble_the_fpdu)
{
	struct th_rng r;
	struct vec vec;
	struct mpa_fpdu *f = malloc(sizeof(*f));
	uint8_t out[4096];

	th_rng_init(&r, th_seed_from_env() + 2);
	for (size_t k = 0; k < IW_ARRAY_SIZE(fpdu_vectors); k++) {
		const struct fpdu_vector *v = &fpdu_vectors[k];

		vec_load(v, &vec);
		/* a single cut at every octet, then random short writes */
		for (size_t cut = 0; cut <= vec.wire_len + 40; cut++) {
			struct iovec iov[MPA_TX_ULPDU_IOV_MAX];
			struct mpa_tx tx;
			size_t o = 0;
			bool first = true;
			int cnt = random_split(&r, vec.ulpdu, vec.ulen, iov, MPA_TX_ULPDU_IOV_MAX);

			mpa_tx_init(&tx, v->crc, v->markers, v->stream_offset);
			ck_assert_int_eq(mpa_tx_frame(&tx, iov, cnt, f), IW_OK);
			while (f->len > 0) {
				size_t want = cut <= vec.wire_len ? (first ? cut : f->len)
								  : th_rng_range(&r, 0, 9);
				size_t done = 0;

				/* a writev() of up to `want` octets */
				for (int i = f->first; i < f->first + f->iovcnt && done < want;
				     i++) {
					size_t n = IW_MIN(f->iov[i].iov_len, want - done);
					memcpy(out + o + done, f->iov[i].iov_base, n);
					done += n;
				}
				o += done;
				first = false;
				mpa_fpdu_advance(f, done);
				ck_assert_uint_eq(f->len, vec.wire_len - o);
				ck_assert_uint_eq(pending(f), f->len);
			}
			ck_assert_int_eq(f->iovcnt, 0);
			ck_assert_uint_eq(o, vec.wire_len);
			ck_assert_mem_eq(out, vec.wire, vec.wire_len);
		}
	}
	free(f);
}
END_TEST

START_TEST(tx_advance_past_the_end_is_clamped)
{
	uint8_t u[5] = {0};
	struct iovec iov = {u, sizeof(u)};
	struct mpa_fpdu f;
	struct mpa_tx tx;

	mpa_tx_init(&tx, true, false, 0);
	ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, &f), IW_OK);
	mpa_fpdu_advance(&f, 0);
	ck_assert_uint_eq(f.len, 12);
	mpa_fpdu_advance(&f, 1000);
	ck_assert_uint_eq(f.len, 0);
	ck_assert_int_eq(f.iovcnt, 0);
}
END_TEST

START_TEST(tx_empty_ulpdu_is_length_pad_and_crc)
{
	struct mpa_fpdu f;
	struct mpa_tx tx;
	uint8_t out[16];
	struct iovec empty[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};

	mpa_tx_init(&tx, true, false, 0);
	ck_assert_int_eq(mpa_tx_frame(&tx, NULL, 0, &f), IW_OK);
	ck_assert_uint_eq(f.total, 8);
	fpdu_gather(&f, out);
	ck_assert_mem_eq(out, "\0\0\0\0", 4);
	ck_assert_uint_eq(f.crc, mpa_crc32c(out, 4));
	ck_assert_int_eq(mpa_tx_frame(&tx, empty, 3, &f), IW_OK);
	ck_assert_uint_eq(f.total, 8);
	ck_assert_int_le(f.iovcnt, 2); /* no iovec for the empty pieces */
	/* With Markers, at a Marker position */
	mpa_tx_init(&tx, true, true, 1024);
	ck_assert_int_eq(mpa_tx_frame(&tx, empty, 3, &f), IW_OK);
	ck_assert_uint_eq(f.total, 12);
	ck_assert_uint_eq(f.nmarkers, 1);
	ck_assert_uint_eq(tx.pos, 1036);
}
END_TEST

START_TEST(tx_marker_right_after_the_crc_belongs_to_the_next_fpdu)
{
	/* leading Marker + 2 + 502 + 0 PAD + 4 CRC = 512: the next Marker starts the next FPDU */
	static uint8_t u[502];
	struct iovec iov = {u, sizeof(u)};
	struct mpa_fpdu f;
	struct mpa_tx tx;
	uint8_t out[600];

	mpa_tx_init(&tx, true, true, 0);
	ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, &f), IW_OK);
	ck_assert_uint_eq(f.total, 512);
	ck_assert_uint_eq(f.nmarkers, 1);
	iov.iov_len = 10;
	ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, &f), IW_OK);
	ck_assert_uint_eq(f.nmarkers, 1);
	fpdu_gather(&f, out);
	ck_assert_mem_eq(out, "\0\0\0\0\0\x0a", 6);
	ck_assert_uint_eq(f.total, 4 + 12 + 4);
}
END_TEST

START_TEST(tx_largest_ulpdu_with_markers_fits_the_iovec_array)
{
	struct th_rng r;
	uint8_t *u = malloc(MPA_ULPDU_MAX), *ref = malloc(BIG), *out = malloc(BIG);
	struct mpa_fpdu *f = malloc(sizeof(*f));

	th_rng_init(&r, th_seed_from_env() + 3);
	th_rng_fill(&r, u, MPA_ULPDU_MAX);
	for (uint32_t pos = 0; pos < 1024; pos += 4) {
		struct iovec iov[MPA_TX_ULPDU_IOV_MAX];
		struct mpa_tx tx;
		size_t rlen;

		/* 8 iovecs, each split by Markers */
		for (int i = 0; i < MPA_TX_ULPDU_IOV_MAX; i++) {
			iov[i].iov_base = u + i * (MPA_ULPDU_MAX / 8);
			iov[i].iov_len = i == 7 ? MPA_ULPDU_MAX - 7 * (MPA_ULPDU_MAX / 8)
						: MPA_ULPDU_MAX / 8;
		}
		mpa_tx_init(&tx, true, true, pos);
		ck_assert_int_eq(mpa_tx_frame(&tx, iov, MPA_TX_ULPDU_IOV_MAX, f), IW_OK);
		ck_assert_uint_le(f->nmarkers, MPA_MARKERS_PER_FPDU_MAX);
		ck_assert_int_le(f->iovcnt, MPA_FPDU_IOV_MAX);
		rlen = fpdu_ref_build(ref, u, MPA_ULPDU_MAX, pos, true, true, NULL);
		ck_assert_uint_eq(fpdu_gather(f, out), rlen);
		ck_assert(memcmp(out, ref, rlen) == 0);
	}
	free(u);
	free(ref);
	free(out);
	free(f);
}
END_TEST

START_TEST(tx_stream_position_wraps_modulo_2_32)
{
	static uint8_t u[1000];
	uint8_t ref[1100], out[1100];
	struct iovec iov = {u, sizeof(u)};
	struct mpa_fpdu f;
	struct mpa_tx tx;
	uint32_t pos = 0xFFFFFFFFu - 515; /* 4-aligned, 516 before the wrap */
	size_t rlen;

	for (size_t i = 0; i < sizeof(u); i++)
		u[i] = (uint8_t)i;
	mpa_tx_init(&tx, true, true, pos);
	ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, &f), IW_OK);
	rlen = fpdu_ref_build(ref, u, sizeof(u), pos, true, true, NULL);
	ck_assert_uint_eq(fpdu_gather(&f, out), rlen);
	ck_assert_mem_eq(out, ref, rlen);
	ck_assert_uint_eq(f.nmarkers, 2);
	ck_assert_uint_eq(tx.pos, (uint32_t)(pos + rlen));
}
END_TEST

START_TEST(tx_rejects_bad_arguments_and_leaves_tx_unchanged)
{
	static uint8_t big[MPA_ULPDU_MAX + 1];
	struct iovec iov[MPA_TX_ULPDU_IOV_MAX + 1];
	struct mpa_fpdu f;
	struct mpa_tx tx;

	for (int i = 0; i <= MPA_TX_ULPDU_IOV_MAX; i++) {
		iov[i].iov_base = big;
		iov[i].iov_len = 1;
	}
	mpa_tx_init(&tx, true, true, 512);
	ck_assert_int_eq(mpa_tx_frame(&tx, iov, -1, &f), IW_EINVAL);
	ck_assert_int_eq(mpa_tx_frame(&tx, iov, MPA_TX_ULPDU_IOV_MAX + 1, &f), IW_EINVAL);
	ck_assert_int_eq(mpa_tx_frame(&tx, NULL, 1, &f), IW_EINVAL);
	iov[0].iov_len = MPA_ULPDU_MAX + 1;
	ck_assert_int_eq(mpa_tx_frame(&tx, iov, 1, &f), IW_EINVAL);
	iov[0].iov_len = 40000;
	iov[1].iov_len = 25536;
	ck_assert_int_eq(mpa_tx_frame(&tx, iov, 2, &f), IW_EINVAL);
	iov[0].iov_len = SIZE_MAX; /* a sum that would wrap */
	iov[1].iov_len = 2;
	ck_assert_int_eq(mpa_tx_frame(&tx, iov, 2, &f), IW_EINVAL);
	ck_assert_uint_eq(tx.pos, 512);
	ck_assert(tx.crc && tx.markers);
	/* exactly 65535 in eight pieces is fine */
	iov[0].iov_len = 40000;
	iov[1].iov_len = 25535;
	ck_assert_int_eq(mpa_tx_frame(&tx, iov, 2, &f), IW_OK);
	/* Markers need a 4-aligned position */
	mpa_tx_init(&tx, true, true, 2);
	ck_assert_int_eq(mpa_tx_frame(&tx, iov, 1, &f), IW_EINVAL);
	ck_assert_uint_eq(tx.pos, 2);
}
END_TEST

START_TEST(mulpdu_matches_the_vectors)
{
	for (size_t k = 0; k < IW_ARRAY_SIZE(mulpdu_vectors); k++) {
		const struct mulpdu_vector *v = &mulpdu_vectors[k];

		ck_assert_msg(mpa_mulpdu(v->emss, v->markers) == v->mulpdu, "emss %u m %d", v->emss,
			      v->markers);
	}
}
END_TEST

START_TEST(mulpdu_is_clamped_to_128_and_64768)
{
	static const uint32_t tiny[] = {0, 1, 3, 100, 127, 128, 133};

	for (size_t i = 0; i < IW_ARRAY_SIZE(tiny); i++) {
		ck_assert_uint_eq(mpa_mulpdu(tiny[i], false), MPA_MULPDU_MIN);
		ck_assert_uint_eq(mpa_mulpdu(tiny[i], true), MPA_MULPDU_MIN);
	}
	ck_assert_uint_eq(mpa_mulpdu(134, false), 128);
	ck_assert_uint_eq(mpa_mulpdu(136, false), 130);
	ck_assert_uint_eq(mpa_mulpdu(200, false), 194);
	ck_assert_uint_eq(mpa_mulpdu(200, true), 190);
	ck_assert_uint_eq(mpa_mulpdu(513, true), 513 - (6 + 8 + 1));
	ck_assert_uint_eq(mpa_mulpdu(65535, false), MPA_MULPDU_MAX);
	ck_assert_uint_eq(mpa_mulpdu(65535, true), MPA_MULPDU_MAX);
	ck_assert_uint_eq(mpa_mulpdu(65536, true), MPA_MULPDU_MAX);
	ck_assert_uint_eq(mpa_mulpdu(UINT32_MAX, false), MPA_MULPDU_MAX);
	ck_assert_uint_eq(mpa_mulpdu(UINT32_MAX, true), MPA_MULPDU_MAX);
	/* the largest EMSS below the cap is exact */
	ck_assert_uint_eq(mpa_mulpdu(64776, false), 64768);
	ck_assert_uint_eq(mpa_mulpdu(64775, false), 64766);
	ck_assert_uint_eq(mpa_mulpdu(64772, false), 64766);
}
END_TEST

/* Wire octets of an FPDU with `body` octets before its CRC, starting at stream position pos. */
static size_t wire_len(uint32_t pos, size_t body, bool markers)
{
	size_t w = 0;

	if (markers && pos % 512 == 0) {
		pos += 4;
		w += 4;
	}
	while (body > 0) {
		size_t n;

		if (markers && pos % 512 == 0) {
			pos += 4;
			w += 4;
		}
		n = markers ? IW_MIN(body, 512 - pos % 512) : body;
		pos += (uint32_t)n;
		w += n;
		body -= n;
	}
	if (markers && pos % 512 == 0)
		w += 4;
	return w + 4;
}

START_TEST(mulpdu_sized_fpdu_fits_in_emss_wherever_it_starts)
{
	/* §4.5's purpose: one FPDU of MULPDU octets fits an empty segment of EMSS */
	for (uint32_t emss = 134; emss < 66000; emss += emss < 2100 ? 1 : 61) {
		for (int m = 0; m < 2; m++) {
			uint32_t mul = mpa_mulpdu(emss, m);
			size_t body = 2 + mul + mpa_pad_len(mul);

			/* below 134 the floor of 128 wins over fitting (§4.5) */
			if (mul == MPA_MULPDU_MIN)
				continue;

			for (uint32_t pos = 0; pos < 512; pos += 4)
				ck_assert_msg(wire_len(pos, body, m) <= emss,
					      "emss %u markers %d pos %u", emss, m, pos);
		}
	}
}
END_TEST

static Suite *mpa_tx_suite(void)
{
	Suite *s = suite_create("mpa_tx");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, tx_vectors_are_rebuilt_byte_exact);
	tcase_add_test(tc, tx_rfc5044_figures_5_and_6_follow_each_other);
	tcase_add_test(tc, tx_matches_reference_framer_for_random_ulpdus);
	tcase_add_test(tc, tx_linear_matches_reference_framer_in_one_piece);
	tcase_add_test(tc, tx_pad_is_zero_filled_to_a_multiple_of_four);
	tcase_add_test(tc, tx_crc_off_sends_a_zero_crc_field);
	tcase_add_test(tc, tx_partial_writes_at_every_offset_reassemble_the_fpdu);
	tcase_add_test(tc, tx_advance_past_the_end_is_clamped);
	tcase_add_test(tc, tx_empty_ulpdu_is_length_pad_and_crc);
	tcase_add_test(tc, tx_marker_right_after_the_crc_belongs_to_the_next_fpdu);
	tcase_add_test(tc, tx_largest_ulpdu_with_markers_fits_the_iovec_array);
	tcase_add_test(tc, tx_stream_position_wraps_modulo_2_32);
	tcase_add_test(tc, tx_rejects_bad_arguments_and_leaves_tx_unchanged);
	tcase_add_test(tc, mulpdu_matches_the_vectors);
	tcase_add_test(tc, mulpdu_is_clamped_to_128_and_64768);
	tcase_add_test(tc, mulpdu_sized_fpdu_fits_in_emss_wherever_it_starts);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(mpa_tx_suite)
