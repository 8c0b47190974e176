/* SPDX-License-Identifier: MIT */
/*
 * test_mpa_rx.c - FPDU receive machine (RFC 5044 §4, §6, §8): vectors under
 * every split, CRC and Marker checking, ULPDU_Length limit, the header
 * protocol, callback errors, the DEAD state and configuration checks.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>

#include "fpdu_ref.h"
#include "fpdu_vec.h"
#include "iw_bytes.h"
#include "iw_vectors.h"
#include "rx_rec.h"
#include "th.h"

static void cfg_for(struct mpa_rx_config *cfg, bool crc, bool markers, uint32_t pos)
{
	mpa_rx_config_default(cfg);
	cfg->crc = crc;
	cfg->markers = markers;
	cfg->pos = pos;
}

/* Feed buf in pieces of `chunk` octets (0 = all at once).  Returns the first error or IW_OK. */
static int feed(struct mpa_rx *rx, const uint8_t *buf, size_t len, size_t chunk)
{
	size_t off = 0;

	if (chunk == 0)
		chunk = len;
	while (off < len) {
		size_t n = IW_MIN(chunk, len - off);
		ssize_t r = mpa_rx_read_stream(rx, buf + off, n);

		if (r < 0)
			return (int)r;
		ck_assert_int_eq(r, (ssize_t)n);
		off += n;
	}
	return IW_OK;
}

/* Feed buf, then zeros until the machine reports an error (or `more` zeros pass). */
static int feed_until_error(struct mpa_rx *rx, const uint8_t *buf, size_t len, size_t more)
{
	static const uint8_t zeros[4096];
	int ret = feed(rx, buf, len, 0);

	while (ret == IW_OK && more > 0) {
		size_t n = IW_MIN(more, sizeof(zeros));

		ret = feed(rx, zeros, n, 0);
		more -= n;
	}
	return ret;
}

/* Rewrite the CRC field at the end of an FPDU (wire[0..len)) so it is correct again. */
static void fix_crc(uint8_t *wire, size_t len)
{
	iw_put_le32(wire + len - 4, mpa_crc32c(wire, len - 4));
}

START_TEST(rx_vectors_parse_whole_octet_by_octet_and_split)
{
	static const struct {
		uint16_t hdr_min;
		size_t ask, step;
	} hdrcfg[] = {{2, 0, 0},   {1, 0, 0},	{4, 28, 0},   {28, 28, 0},
		      {1, 128, 3}, {128, 0, 0}, {14, 200, 0}, {3, 46, 43}};
	struct th_rng r;

	th_rng_init(&r, th_seed_from_env());
	for (size_t k = 0; k < IW_ARRAY_SIZE(fpdu_vectors); k++) {
		const struct fpdu_vector *v = &fpdu_vectors[k];
		struct vec vec;

		vec_load(v, &vec);
		for (size_t h = 0; h < IW_ARRAY_SIZE(hdrcfg); h++) {
			struct rx_rec whole, rec;
			struct mpa_rx_config cfg;
			struct mpa_rx rx;

			cfg_for(&cfg, v->crc, v->markers, v->stream_offset);
			cfg.hdr_min = hdrcfg[h].hdr_min;
			rx_rec_init(&whole, 4096);
			whole.hdr_ask = hdrcfg[h].ask;
			whole.hdr_ask_step = hdrcfg[h].step;
			whole.in_lo = vec.wire;
			whole.in_hi = vec.wire + vec.wire_len;
			ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &whole), IW_OK);
			ck_assert_int_eq(feed(&rx, vec.wire, vec.wire_len, 0), IW_OK);
			ck_assert_uint_eq(whole.ndone, 1);
			ck_assert_uint_eq(rx.fpdus, 1);
			ck_assert_uint_eq(whole.len, vec.ulen);
			ck_assert_mem_eq(whole.data, vec.ulpdu, vec.ulen);
			ck_assert_uint_eq(whole.log[1], IW_MIN(cfg.hdr_min, vec.ulen));
			ck_assert_uint_eq(whole.log[2], vec.ulen);
			ck_assert_int_eq(rx.state, MPA_RX_LEN);
			ck_assert_uint_eq(rx.pos, v->stream_offset + vec.wire_len);

			for (size_t chunk = 1; chunk < 40; chunk += chunk < 8 ? 1 : 13) {
				rx_rec_init(&rec, 4096);
				rec.hdr_ask = hdrcfg[h].ask;
				rec.hdr_ask_step = hdrcfg[h].step;
				ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
				ck_assert_int_eq(feed(&rx, vec.wire, vec.wire_len, chunk), IW_OK);
				rx_rec_assert_same(&whole, &rec);
				rx_rec_fini(&rec);
			}
			/* random splits, some of them empty */
			for (int it = 0; it < 10; it++) {
				size_t off = 0;

				rx_rec_init(&rec, 4096);
				rec.hdr_ask = hdrcfg[h].ask;
				rec.hdr_ask_step = hdrcfg[h].step;
				ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
				while (off < vec.wire_len) {
					size_t n = th_rng_range(&r, 0,
								IW_MIN(vec.wire_len - off, 600));

					ck_assert_int_eq(mpa_rx_read_stream(&rx, vec.wire + off, n),
							 (ssize_t)n);
					off += n;
				}
				rx_rec_assert_same(&whole, &rec);
				rx_rec_fini(&rec);
			}
			rx_rec_fini(&whole);
		}
	}
}
END_TEST

START_TEST(rx_payload_is_split_only_at_markers)
{
	/* multi-marker-rdma-write: Markers at 512 and 1024 fall inside the ULPDU */
	const struct fpdu_vector *v = &fpdu_vectors[4];
	struct mpa_rx_config cfg;
	struct mpa_rx rx;
	struct rx_rec rec;
	struct vec vec;

	ck_assert_str_eq(v->name, "multi-marker-rdma-write");
	vec_load(v, &vec);
	cfg_for(&cfg, true, true, 0);
	cfg.hdr_min = 14;
	rx_rec_init(&rec, 4096);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(feed(&rx, vec.wire, vec.wire_len, 0), IW_OK);
	ck_assert_uint_eq(rec.nhdr, 1);
	ck_assert_uint_eq(rec.npayload, 3);
	ck_assert_uint_eq(rec.ndone, 1);
	rx_rec_fini(&rec);
}
END_TEST

START_TEST(rx_every_corrupted_octet_is_a_crc_error)
{
	struct rx_rec rec;

	rx_rec_init(&rec, 70000);
	for (size_t k = 0; k < IW_ARRAY_SIZE(fpdu_vectors); k++) {
		const struct fpdu_vector *v = &fpdu_vectors[k];
		struct vec vec;

		vec_load(v, &vec);
		for (size_t i = 0; i < vec.wire_len; i++) {
			for (int bit = 0; bit < 8; bit += 3) {
				uint8_t bad[2048];
				struct mpa_rx_config cfg;
				struct mpa_rx rx;
				int ret;

				memcpy(bad, vec.wire, vec.wire_len);
				bad[i] ^= (uint8_t)(1u << ((i + (size_t)bit) % 8));
				cfg_for(&cfg, true, v->markers, v->stream_offset);
				rx_rec_reset(&rec);
				ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
				/* a corrupted length needs more octets before the CRC is due */
				ret = feed_until_error(&rx, bad, vec.wire_len, 70000);
				ck_assert_msg(ret == IW_EMPA_CRC, "%s octet %zu: %s", v->name, i,
					      mpa_errname(ret));
				ck_assert_uint_eq(rec.ndone, 0);
				ck_assert_int_eq(rx.state, MPA_RX_DEAD);
			}
		}
	}
	rx_rec_fini(&rec);
}
END_TEST

/*
 * The CRC runs over spans of the caller's octets (mpa_rx.c, rx_crc_span): long
 * streams of large FPDUs, Markers on and off, fed in random pieces, arrive
 * whole, and one flipped bit anywhere (length, header, payload, pad, Marker,
 * CRC) kills the stream with an error before that FPDU is done.
 */
START_TEST(rx_crc_spans_hold_across_random_splits_of_large_fpdus)
{
	enum { NFPDU = 5, MAXU = 65000 };
	struct th_rng r;
	struct rx_rec rec;
	uint8_t *ulpdu = malloc(NFPDU * MAXU), *wire = malloc(NFPDU * fpdu_ref_max_len(MAXU));
	size_t ulen[NFPDU], wlen, ends[NFPDU];

	ck_assert_ptr_nonnull(ulpdu);
	ck_assert_ptr_nonnull(wire);
	th_rng_init(&r, th_seed_from_env() ^ 0xC5C5);
	rx_rec_init(&rec, NFPDU * MAXU);
	for (int t = 0; t < 40; t++) {
		bool markers = t & 1, corrupt = t & 2;
		uint32_t pos = markers ? 4 * (uint32_t)th_rng_range(&r, 0, 200) : 0;
		struct mpa_rx_config cfg;
		struct mpa_rx rx;
		size_t total = 0, off = 0, flip = 0;
		int ret = IW_OK;

		wlen = 0;
		for (int k = 0; k < NFPDU; k++) {
			ulen[k] = (size_t)th_rng_range(&r, 2, MAXU);
			th_rng_fill(&r, ulpdu + total, ulen[k]);
			wlen += fpdu_ref_build(wire + wlen, ulpdu + total, ulen[k],
					       pos + (uint32_t)wlen, markers, true, NULL);
			ends[k] = wlen;
			total += ulen[k];
		}
		if (corrupt) {
			flip = (size_t)th_rng_range(&r, 0, wlen - 1);
			wire[flip] ^= (uint8_t)(1u << th_rng_range(&r, 0, 7));
		}
		cfg_for(&cfg, true, markers, pos);
		rx_rec_reset(&rec);
		ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
		while (off < wlen && ret == IW_OK) {
			size_t n = (size_t)th_rng_range(&r, 1, th_rng_range(&r, 0, 1) ? 9 : 100000);
			ssize_t got;

			n = IW_MIN(n, wlen - off);
			got = mpa_rx_read_stream(&rx, wire + off, n);
			if (got < 0)
				ret = (int)got;
			else
				off += n;
		}
		if (!corrupt) {
			ck_assert_int_eq(ret, IW_OK);
			ck_assert_uint_eq(rec.ndone, NFPDU);
			ck_assert_uint_eq(rec.len, total);
			ck_assert_mem_eq(rec.data, ulpdu, total);
			continue;
		}
		/* a corrupted length may need more octets before its CRC is due */
		if (ret == IW_OK)
			ret = feed_until_error(&rx, NULL, 0, 70000);
		ck_assert_msg(ret < 0, "trial %d: flip at %zu of %zu passed", t, flip, wlen);
		for (int k = 0; k < NFPDU; k++)
			if (flip < ends[k]) {
				ck_assert_uint_le(rec.ndone, (unsigned)k);
				break;
			}
	}
	rx_rec_fini(&rec);
	free(ulpdu);
	free(wire);
}
END_TEST

START_TEST(rx_crc_off_ignores_the_crc_field_but_checks_markers)
{
	for (size_t k = 0; k < IW_ARRAY_SIZE(fpdu_vectors); k++) {
		const struct fpdu_vector *v = &fpdu_vectors[k];
		struct vec vec;

		vec_load(v, &vec);
		for (size_t i = 0; i < vec.wire_len; i++) {
			uint32_t pos = v->stream_offset + (uint32_t)i;
			bool is_crc = i >= vec.wire_len - 4;
			bool in_marker = v->markers && pos % 512 < 4;
			uint8_t bad[2048];
			struct mpa_rx_config cfg;
			struct mpa_rx rx;
			struct rx_rec rec;
			int ret;

			if (!is_crc && !in_marker)
				continue;
			memcpy(bad, vec.wire, vec.wire_len);
			/* 0x10 stays clear of FPDUPTR's two reserved low bits */
			bad[i] ^= 0x10;
			cfg_for(&cfg, false, v->markers, v->stream_offset);
			rx_rec_init(&rec, 4096);
			ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
			ret = feed(&rx, bad, vec.wire_len, 0);
			if (in_marker && pos % 512 >= 2) {
				/* FPDUPTR octet: Marker and ULPDU_Length disagree (§8 error 3) */
				ck_assert_int_eq(ret, IW_EMPA_MARKER);
				ck_assert_uint_eq(rec.ndone, 0);
			} else {
				/* CRC field unchecked; reserved Marker bits ignored (§4.2) */
				ck_assert_int_eq(ret, IW_OK);
				ck_assert_uint_eq(rec.ndone, 1);
				ck_assert_mem_eq(rec.data, vec.ulpdu, vec.ulen);
			}
			rx_rec_fini(&rec);
		}
	}
}
END_TEST

START_TEST(rx_wrong_marker_with_a_valid_crc_is_a_marker_error)
{
	const struct fpdu_vector *v = &fpdu_vectors[4]; /* Markers at 0, 512, 1024 */
	static const size_t at[] = {0, 512, 1024};
	struct vec vec;

	ck_assert_str_eq(v->name, "multi-marker-rdma-write");
	vec_load(v, &vec);
	for (size_t m = 0; m < IW_ARRAY_SIZE(at); m++) {
		for (int crc = 0; crc < 2; crc++) {
			uint8_t bad[2048];
			struct mpa_rx_config cfg;
			struct mpa_rx rx;
			struct rx_rec rec;

			memcpy(bad, vec.wire, vec.wire_len);
			bad[at[m] + 3] ^= 0x04;
			fix_crc(bad, vec.wire_len);
			cfg_for(&cfg, crc, true, 0);
			rx_rec_init(&rec, 4096);
			ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
			/* reported at the end of the FPDU, after all of the payload */
			ck_assert_int_eq(feed(&rx, bad, vec.wire_len - 1, 1), IW_OK);
			ck_assert_uint_eq(rec.len, vec.ulen);
			ck_assert_int_eq(feed(&rx, bad + vec.wire_len - 1, 1, 0), IW_EMPA_MARKER);
			ck_assert_uint_eq(rec.ndone, 0);
			ck_assert_int_eq(rx.error, IW_EMPA_MARKER);
			/* ... and with CRC on and the CRC left wrong, the CRC error wins */
			if (crc) {
				memcpy(bad, vec.wire, vec.wire_len);
				bad[at[m] + 2] ^= 0x01;
				rx_rec_reset(&rec);
				ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
				ck_assert_int_eq(feed(&rx, bad, vec.wire_len, 0), IW_EMPA_CRC);
			}
			rx_rec_fini(&rec);
		}
	}
}
END_TEST

START_TEST(rx_marker_reserved_and_low_pointer_bits_are_ignored)
{
	const struct fpdu_vector *v = &fpdu_vectors[5]; /* Markers at 0 and right after PAD */
	static const size_t at[] = {0, 512};
	uint8_t odd[2048];
	struct mpa_rx_config cfg;
	struct mpa_rx rx;
	struct rx_rec rec;
	struct vec vec;

	ck_assert_str_eq(v->name, "marker-immediately-after-pad");
	vec_load(v, &vec);
	memcpy(odd, vec.wire, vec.wire_len);
	for (size_t m = 0; m < IW_ARRAY_SIZE(at); m++) {
		odd[at[m]] = 0xFF;
		odd[at[m] + 1] = 0xA5;
		odd[at[m] + 3] |= 0x03;
	}
	fix_crc(odd, vec.wire_len);
	cfg_for(&cfg, true, true, 0);
	rx_rec_init(&rec, 4096);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(feed(&rx, odd, vec.wire_len, 3), IW_OK);
	ck_assert_uint_eq(rec.ndone, 1);
	ck_assert_mem_eq(rec.data, vec.ulpdu, vec.ulen);
	rx_rec_fini(&rec);
}
END_TEST

/* Frame ULPDUs of the given lengths back to back with mpa_tx; returns the stream length. */
static size_t build_stream(uint8_t *out, const size_t *lens, size_t n, uint32_t pos, bool crc,
			   bool markers, uint8_t *ulpdus)
{
	struct mpa_fpdu *f = malloc(sizeof(*f));
	struct mpa_tx tx;
	size_t o = 0, u = 0;

	mpa_tx_init(&tx, crc, markers, pos);
	for (size_t i = 0; i < n; i++) {
		struct iovec iov = {ulpdus + u, lens[i]};

		for (size_t j = 0; j < lens[i]; j++)
			ulpdus[u + j] = (uint8_t)(i * 31 + j);
		ck_assert_int_eq(mpa_tx_frame(&tx, &iov, 1, f), IW_OK);
		for (int k = f->first; k < f->first + f->iovcnt; k++) {
			memcpy(out + o, f->iov[k].iov_base, f->iov[k].iov_len);
			o += f->iov[k].iov_len;
		}
		u += lens[i];
	}
	free(f);
	return o;
}

/* A consumer that keeps every ULPDU octet at its place in `out`, whether the
 * machine delivers it (ulpdu_payload) or the caller put it there itself. */
struct placer {
	uint8_t *out;
	size_t base; /* where the current ULPDU starts in out */
	size_t ulen; /* its length */
	unsigned ndone;
};

static int pl_hdr(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct placer *p = user;

	p->ulen = ulpdu_len;
	memcpy(p->out + p->base, hdr, have);
	return (int)have;
}

static int pl_payload(void *user, size_t off, const uint8_t *src, size_t n)
{
	struct placer *p = user;

	RX_REC_CHECK(off + n <= p->ulen);
	memcpy(p->out + p->base + off, src, n);
	return IW_OK;
}

static int pl_done(void *user)
{
	struct placer *p = user;

	p->base += p->ulen;
	p->ndone++;
	return IW_OK;
}

static const struct mpa_rx_ops placer_ops = {pl_hdr, pl_payload, pl_done};

/*
 * Feed stream[0..len) as a receiver that reads payload into place whenever
 * the machine offers room (and the coin says so), with random read sizes,
 * checking mpa_rx_fpdu_left() on the way.  Returns the first error.
 */
static int feed_placing(struct mpa_rx *rx, struct placer *p, const uint8_t *stream, size_t len,
			struct th_rng *r, bool always)
{
	size_t off = 0;

	while (off < len) {
		size_t room = mpa_rx_payload_room(rx), left = mpa_rx_fpdu_left(rx), k;
		ssize_t got;

		if (room && (always || th_rng_next(r) & 1)) {
			uint8_t *at = p->out + p->base + rx->done;
			int ret;

			k = (size_t)th_rng_range(r, 1, IW_MIN(room, len - off));
			/* more than the room is refused and changes nothing */
			ck_assert_int_eq(mpa_rx_payload_placed(rx, at, room + 1), IW_EINVAL);
			memcpy(at, stream + off, k);
			ret = mpa_rx_payload_placed(rx, at, k);
			if (ret != IW_OK)
				return ret;
			off += k;
			continue;
		}
		if (!room)
			ck_assert_int_eq(mpa_rx_payload_placed(rx, stream, 1), IW_EINVAL);
		k = (size_t)th_rng_range(r, 1, IW_MIN((size_t)5000, len - off));
		if (left && left <= len - off && th_rng_next(r) % 4 == 0)
			k = left; /* exactly to the end of the FPDU */
		got = mpa_rx_read_stream(rx, stream + off, k);
		if (got < 0)
			return (int)got;
		ck_assert_int_eq(got, (ssize_t)k);
		if (k == left) {
			ck_assert_int_eq(rx->state, MPA_RX_LEN);
			ck_assert_uint_eq(rx->done, 0);
			ck_assert_uint_eq(mpa_rx_fpdu_left(rx), 0);
		}
		off += k;
	}
	return IW_OK;
}

START_TEST(rx_payload_placed_by_the_caller_equals_payload_delivered)
{
	static const size_t lens[] = {0, 1, 3, 100, 600, 1500, 4000, 20000, 7, 40000};
	enum { N = IW_ARRAY_SIZE(lens), TOTAL = 66211 };
	bool crc = _i & 1, markers = _i & 2;
	uint8_t *stream = malloc(2 * TOTAL), *ulpdus = malloc(TOTAL), *out = malloc(TOTAL);
	struct mpa_rx_config cfg;
	struct th_rng r;
	struct mpa_rx rx;
	size_t len;

	ck_assert(stream && ulpdus && out);
	th_rng_init(&r, th_seed_from_env() + (uint64_t)_i);
	len = build_stream(stream, lens, N, 0, crc, markers, ulpdus);
	for (int round = 0; round < 20; round++) {
		struct placer p = {.out = out};

		memset(out, 0xEE, TOTAL);
		cfg_for(&cfg, crc, markers, 0);
		ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &placer_ops, &p), IW_OK);
		ck_assert_int_eq(feed_placing(&rx, &p, stream, len, &r, round == 0), IW_OK);
		ck_assert_uint_eq(p.ndone, N);
		ck_assert_uint_eq(p.base, TOTAL);
		ck_assert_mem_eq(out, ulpdus, TOTAL);
	}

	/* an octet damaged in payload that went into place: the CRC still catches it */
	if (crc) {
		struct placer p = {.out = out};
		size_t at = len - 20000; /* inside the last ULPDU's payload */

		stream[at] ^= 0x01;
		cfg_for(&cfg, crc, markers, 0);
		ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &placer_ops, &p), IW_OK);
		ck_assert_int_eq(feed_placing(&rx, &p, stream, len, &r, true), IW_EMPA_CRC);
		ck_assert_uint_eq(p.ndone, N - 1);
		ck_assert_int_eq(rx.state, MPA_RX_DEAD);
		ck_assert_int_eq(mpa_rx_payload_placed(&rx, out, 0), IW_EMPA_CRC);
		ck_assert_uint_eq(mpa_rx_payload_room(&rx), 0);
	}
	free(stream);
	free(ulpdus);
	free(out);
}
END_TEST

START_TEST(rx_marker_between_fpdus_belongs_to_the_next_one)
{
	/* 4 + (2 + 502 + 4) = 512: the Marker at 512 sits between the two FPDUs */
	static const size_t lens[] = {502, 10, 600};
	uint8_t stream[2048], ulpdus[2048];
	size_t len = build_stream(stream, lens, 3, 0, true, true, ulpdus);
	struct mpa_rx_config cfg;
	struct mpa_rx rx;
	struct rx_rec rec;

	ck_assert_mem_eq(stream + 512, "\0\0\0\0\0\x0a", 6);
	cfg_for(&cfg, true, true, 0);
	rx_rec_init(&rec, 4096);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(feed(&rx, stream, len, 1), IW_OK);
	ck_assert_uint_eq(rec.ndone, 3);
	ck_assert_mem_eq(rec.data, ulpdus, 1112);

	/* a non-zero FPDUPTR there is the second FPDU's error (its CRC covers the Marker) */
	stream[515] = 0x08;
	fix_crc(stream + 512, 4 + 12 + 4);
	rx_rec_reset(&rec);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(feed(&rx, stream, len, 7), IW_EMPA_MARKER);
	ck_assert_uint_eq(rec.ndone, 1);
	ck_assert_uint_eq(rx.fpdus, 1);
	rx_rec_fini(&rec);
}
END_TEST

START_TEST(rx_stream_position_wraps_modulo_2_32)
{
	static const size_t lens[] = {1000, 3, 700};
	uint8_t stream[4096], ulpdus[2048];
	uint32_t pos = 0xFFFFFFFFu - 515;
	size_t len = build_stream(stream, lens, 3, pos, true, true, ulpdus);
	struct mpa_rx_config cfg;
	struct mpa_rx rx;
	struct rx_rec rec;

	cfg_for(&cfg, true, true, pos);
	rx_rec_init(&rec, 4096);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(feed(&rx, stream, len, 5), IW_OK);
	ck_assert_uint_eq(rec.ndone, 3);
	ck_assert_mem_eq(rec.data, ulpdus, 1703);
	ck_assert_uint_eq(rx.pos, (uint32_t)(pos + len));
	rx_rec_fini(&rec);
}
END_TEST

START_TEST(rx_length_over_max_ulpdu_is_a_len_error_at_once)
{
	struct vec vec;
	struct mpa_rx_config cfg;
	struct mpa_rx rx;
	struct rx_rec rec;

	vec_load(&fpdu_vectors[2], &vec); /* no Markers, ULPDU_Length 42 */
	cfg_for(&cfg, true, false, 0);
	cfg.max_ulpdu = 42;
	rx_rec_init(&rec, 4096);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(feed(&rx, vec.wire, vec.wire_len, 0), IW_OK);
	ck_assert_uint_eq(rec.ndone, 1);

	cfg.max_ulpdu = 41;
	rx_rec_reset(&rec);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(mpa_rx_read_stream(&rx, vec.wire, 1), 1);
	ck_assert_int_eq(mpa_rx_read_stream(&rx, vec.wire + 1, 1), IW_EMPA_LEN);
	ck_assert_uint_eq(rec.nhdr, 0);
	ck_assert_int_eq(rx.state, MPA_RX_DEAD);
	ck_assert_int_eq(mpa_rx_read_stream(&rx, vec.wire + 2, 10), IW_EMPA_LEN);
	ck_assert_int_eq(mpa_rx_read_stream(&rx, NULL, 0), IW_EMPA_LEN);

	cfg.max_ulpdu = 0;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	ck_assert_int_eq(feed(&rx, (const uint8_t *)"\x00\x01", 2, 0), IW_EMPA_LEN);
	rx_rec_fini(&rec);
}
END_TEST

/* One FPDU of `ulen` octets (octet i = i) with CRC, no Markers. */
static size_t one_fpdu(uint8_t *out, size_t ulen, uint8_t *u)
{
	return build_stream(out, &ulen, 1, 0, true, false, u);
}

static int run_hdr(uint16_t hdr_min, size_t ulen, struct rx_rec *rec, struct mpa_rx *rx)
{
	uint8_t wire[512], u[400];
	size_t len = one_fpdu(wire, ulen, u);
	struct mpa_rx_config cfg;

	cfg_for(&cfg, true, false, 0);
	cfg.hdr_min = hdr_min;
	ck_assert_int_eq(mpa_rx_init(rx, &cfg, &rx_rec_ops, rec), IW_OK);
	return feed(rx, wire, len, 1);
}

START_TEST(rx_header_first_call_has_min_of_hdr_min_and_length)
{
	struct rx_rec rec;
	struct mpa_rx rx;

	rx_rec_init(&rec, 4096);
	ck_assert_int_eq(run_hdr(4, 19, &rec, &rx), IW_OK);
	ck_assert_uint_eq(rec.nhdr, 1);
	ck_assert_uint_eq(rec.log[1], 4);
	rx_rec_reset(&rec);
	ck_assert_int_eq(run_hdr(100, 19, &rec, &rx), IW_OK);
	ck_assert_uint_eq(rec.log[1], 19);
	ck_assert_uint_eq(rec.npayload, 0);
	ck_assert_uint_eq(rec.ndone, 1);
	rx_rec_reset(&rec);
	ck_assert_int_eq(run_hdr(128, 300, &rec, &rx), IW_OK);
	ck_assert_uint_eq(rec.log[1], 128);
	rx_rec_fini(&rec);
}
END_TEST

START_TEST(rx_header_asking_for_more_gathers_and_calls_again)
{
	struct rx_rec rec;
	struct mpa_rx rx;

	rx_rec_init(&rec, 4096);
	rec.hdr_ask = 40;
	rec.hdr_ask_step = 10;
	ck_assert_int_eq(run_hdr(2, 300, &rec, &rx), IW_OK);
	/* have = 2, 12, 22, 32, 40 */
	ck_assert_uint_eq(rec.nhdr, 5);
	ck_assert_uint_eq(rec.log[3 * 1 + 1], 12);
	ck_assert_uint_eq(rec.log[3 * 4 + 1], 40);
	ck_assert_uint_eq(rec.ndone, 1);
	ck_assert_uint_eq(rec.len, 300);
	for (size_t i = 0; i < 300; i++)
		ck_assert_uint_eq(rec.data[i], (uint8_t)i);

	/* asking for the whole ULPDU leaves no payload */
	rx_rec_reset(&rec);
	rec.hdr_ask = 100;
	rec.hdr_ask_step = 0;
	ck_assert_int_eq(run_hdr(2, 100, &rec, &rx), IW_OK);
	ck_assert_uint_eq(rec.nhdr, 2);
	ck_assert_uint_eq(rec.npayload, 0);
	ck_assert_uint_eq(rec.ndone, 1);
	rx_rec_fini(&rec);
}
END_TEST

/*
 * A header call that returns 0 holds the machine before the payload (the
 * layer above cannot take the ULPDU yet): read_stream returns the octets it
 * consumed, the next call - with no octets at all - offers the same header
 * again, and once it is taken the FPDU goes on as if never held, its CRC
 * over every octet.
 */
START_TEST(rx_header_zero_holds_the_machine_before_the_payload)
{
	uint8_t wire[512], u[400];
	size_t len = one_fpdu(wire, 300, u);
	struct mpa_rx_config cfg;
	struct rx_rec rec;
	struct mpa_rx rx;

	rx_rec_init(&rec, 4096);
	cfg_for(&cfg, true, false, 0);
	cfg.hdr_min = 4;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
	rec.err = 0;
	rec.err_hdr_at = 1;
	/* ULPDU_Length and the 4 header octets, nothing after them */
	ck_assert_int_eq(mpa_rx_read_stream(&rx, wire, len), 2 + 4);
	ck_assert_int_eq(rx.state, MPA_RX_HDR);
	ck_assert_uint_eq(rec.npayload, 0);
	rec.err_hdr_at = 2;
	ck_assert_int_eq(mpa_rx_read_stream(&rx, NULL, 0), 0);
	ck_assert_uint_eq(rec.nhdr, 2);
	rec.err_hdr_at = 0;
	ck_assert_int_eq(feed(&rx, wire + 6, len - 6, 7), IW_OK);
	ck_assert_uint_eq(rec.nhdr, 3);
	ck_assert_uint_eq(rec.ndone, 1);
	ck_assert_uint_eq(rec.len, 300);
	ck_assert_mem_eq(rec.data, u, 300);
	rx_rec_fini(&rec);
}
END_TEST

START_TEST(rx_header_asking_too_much_or_too_little_is_einval)
{
	struct rx_rec rec;
	struct mpa_rx rx;

	rx_rec_init(&rec, 4096);
	rec.hdr_ret = 20; /* more than ULPDU_Length 19 */
	ck_assert_int_eq(run_hdr(2, 19, &rec, &rx), IW_EINVAL);
	rx_rec_reset(&rec);
	rec.hdr_ret = MPA_RX_HDR_MAX + 1; /* more than the header buffer */
	ck_assert_int_eq(run_hdr(2, 300, &rec, &rx), IW_EINVAL);
	rx_rec_reset(&rec);
	rec.hdr_ret = 1; /* less than it was given */
	ck_assert_int_eq(run_hdr(2, 19, &rec, &rx), IW_EINVAL);
	/* (0 is not "less": it holds the machine, the next test) */
	rx_rec_reset(&rec);
	rec.hdr_ret = MPA_RX_HDR_MAX; /* exactly the buffer is fine */
	ck_assert_int_eq(run_hdr(2, 300, &rec, &rx), IW_OK);
	ck_assert_uint_eq(rec.ndone, 1);
	rx_rec_fini(&rec);
}
END_TEST

START_TEST(rx_callback_errors_propagate_and_stick)
{
	uint8_t wire[1024], u[1024];
	size_t lens[] = {100, 100};
	size_t len = build_stream(wire, lens, 2, 0, true, false, u);
	struct mpa_rx_config cfg;
	struct rx_rec rec;
	struct mpa_rx rx;

	cfg_for(&cfg, true, false, 0);
	for (int which = 0; which < 3; which++) {
		rx_rec_init(&rec, 4096);
		rec.err = -321;
		if (which == 0)
			rec.err_hdr_at = 2;
		else if (which == 1)
			rec.err_payload_at = 2;
		else
			rec.err_done_at = 2;
		ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
		ck_assert_int_eq(mpa_rx_read_stream(&rx, wire, len), -321);
		ck_assert_int_eq(rx.state, MPA_RX_DEAD);
		ck_assert_int_eq(rx.error, -321);
		ck_assert_uint_eq(rx.fpdus, 1);
		{
			unsigned calls = rec.nhdr + rec.npayload + rec.ndone;

			ck_assert_int_eq(mpa_rx_read_stream(&rx, wire, len), -321);
			ck_assert_int_eq(mpa_rx_read_stream(&rx, wire, 0), -321);
			/* DEAD delivers nothing more */
			ck_assert_uint_eq(rec.nhdr + rec.npayload + rec.ndone, calls);
		}
		rx_rec_fini(&rec);
	}
}
END_TEST

START_TEST(rx_zero_length_ulpdu_gets_one_header_call_with_nothing)
{
	static const size_t lens[] = {0, 0, 5, 0};
	uint8_t wire[256], u[64];
	struct mpa_rx_config cfg;
	struct rx_rec rec;
	struct mpa_rx rx;

	for (int m = 0; m < 2; m++) {
		size_t len = build_stream(wire, lens, 4, 1000, true, m, u);

		for (size_t chunk = 0; chunk < 4; chunk++) {
			cfg_for(&cfg, true, m, 1000);
			cfg.hdr_min = 10;
			rx_rec_init(&rec, 4096);
			ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &rx_rec_ops, &rec), IW_OK);
			ck_assert_int_eq(feed(&rx, wire, len, chunk), IW_OK);
			ck_assert_uint_eq(rec.nhdr, 4);
			ck_assert_uint_eq(rec.ndone, 4);
			ck_assert_uint_eq(rec.npayload, 0);
			ck_assert_uint_eq(rec.log[0], 'H');
			ck_assert_uint_eq(rec.log[1], 0);
			ck_assert_uint_eq(rec.log[2], 0);
			ck_assert_uint_eq(rec.len, 5);
			rx_rec_fini(&rec);
		}
	}
}
END_TEST

START_TEST(rx_works_without_callbacks)
{
	static const size_t lens[] = {10, 0, 1000, 64};
	static const struct mpa_rx_ops none;
	uint8_t wire[2048], u[2048];
	size_t len = build_stream(wire, lens, 4, 0, true, true, u);
	struct mpa_rx_config cfg;
	struct mpa_rx rx;

	cfg_for(&cfg, true, true, 0);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_OK);
	ck_assert_int_eq(feed(&rx, wire, len, 0), IW_OK);
	ck_assert_uint_eq(rx.fpdus, 4);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &none, NULL), IW_OK);
	ck_assert_int_eq(feed(&rx, wire, len, 1), IW_OK);
	ck_assert_uint_eq(rx.fpdus, 4);
	wire[len - 1] ^= 1;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, &none, NULL), IW_OK);
	ck_assert_int_eq(feed(&rx, wire, len, 0), IW_EMPA_CRC);
	ck_assert_uint_eq(rx.fpdus, 3);
}
END_TEST

START_TEST(rx_init_checks_the_configuration)
{
	struct mpa_rx_config cfg;
	struct mpa_rx rx;

	mpa_rx_config_default(&cfg);
	ck_assert(cfg.crc);
	ck_assert(!cfg.markers);
	ck_assert_uint_eq(cfg.pos, 0);
	ck_assert_uint_eq(cfg.hdr_min, 2);
	ck_assert_uint_eq(cfg.max_ulpdu, 65535);
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_OK);
	ck_assert_int_eq(rx.state, MPA_RX_LEN);
	ck_assert_uint_eq(rx.fpdus, 0);

	cfg.hdr_min = 0;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_EINVAL);
	cfg.hdr_min = MPA_RX_HDR_MAX + 1;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_EINVAL);
	cfg.hdr_min = MPA_RX_HDR_MAX;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_OK);
	cfg.max_ulpdu = 65536;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_EINVAL);
	cfg.max_ulpdu = 128;
	cfg.pos = 6;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_OK); /* no Markers: any pos */
	cfg.markers = true;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_EINVAL);
	cfg.pos = 8;
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_OK);
	ck_assert_uint_eq(rx.pos, 8);
	ck_assert_int_eq(mpa_rx_init(NULL, &cfg, NULL, NULL), IW_EINVAL);
	ck_assert_int_eq(mpa_rx_init(&rx, NULL, NULL, NULL), IW_EINVAL);
	/* a NULL buffer is fine only when empty; neither call is a peer error */
	ck_assert_int_eq(mpa_rx_init(&rx, &cfg, NULL, NULL), IW_OK);
	ck_assert_int_eq(mpa_rx_read_stream(&rx, NULL, 0), 0);
	ck_assert_int_eq(mpa_rx_read_stream(&rx, NULL, 4), IW_EINVAL);
	ck_assert_int_eq(rx.state, MPA_RX_LEN);
}
END_TEST

START_TEST(rx_state_names_are_distinct)
{
	for (int a = MPA_RX_MARKER; a <= MPA_RX_DEAD; a++) {
		ck_assert_str_ne(mpa_rx_state_name((enum mpa_rx_state)a), "?");
		for (int b = a + 1; b <= MPA_RX_DEAD; b++)
			ck_assert_str_ne(mpa_rx_state_name((enum mpa_rx_state)a),
					 mpa_rx_state_name((enum mpa_rx_state)b));
	}
	ck_assert_str_eq(mpa_rx_state_name((enum mpa_rx_state)99), "?");
	ck_assert_str_eq(mpa_rx_state_name(MPA_RX_DEAD), "DEAD");
}
END_TEST

static Suite *mpa_rx_suite(void)
{
	Suite *s = suite_create("mpa_rx");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rx_vectors_parse_whole_octet_by_octet_and_split);
	tcase_add_test(tc, rx_payload_is_split_only_at_markers);
	tcase_add_test(tc, rx_every_corrupted_octet_is_a_crc_error);
	tcase_add_test(tc, rx_crc_spans_hold_across_random_splits_of_large_fpdus);
	tcase_add_test(tc, rx_crc_off_ignores_the_crc_field_but_checks_markers);
	tcase_add_test(tc, rx_wrong_marker_with_a_valid_crc_is_a_marker_error);
	tcase_add_test(tc, rx_marker_reserved_and_low_pointer_bits_are_ignored);
	tcase_add_test(tc, rx_marker_between_fpdus_belongs_to_the_next_one);
	tcase_add_loop_test(tc, rx_payload_placed_by_the_caller_equals_payload_delivered, 0, 4);
	tcase_add_test(tc, rx_stream_position_wraps_modulo_2_32);
	tcase_add_test(tc, rx_length_over_max_ulpdu_is_a_len_error_at_once);
	tcase_add_test(tc, rx_header_first_call_has_min_of_hdr_min_and_length);
	tcase_add_test(tc, rx_header_asking_for_more_gathers_and_calls_again);
	tcase_add_test(tc, rx_header_zero_holds_the_machine_before_the_payload);
	tcase_add_test(tc, rx_header_asking_too_much_or_too_little_is_einval);
	tcase_add_test(tc, rx_callback_errors_propagate_and_stick);
	tcase_add_test(tc, rx_zero_length_ulpdu_gets_one_header_call_with_nothing);
	tcase_add_test(tc, rx_works_without_callbacks);
	tcase_add_test(tc, rx_init_checks_the_configuration);
	tcase_add_test(tc, rx_state_names_are_distinct);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(mpa_rx_suite)
