/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpa_rx.c - libFuzzer target for the FPDU receive machine (mpa_rx).
 *
 * Input layout: 4 configuration octets, then the byte stream.
 *   c[0] bit 0     Markers on
 *        bits 1-3  hdr_min  (1, 2, 3, 4, 14, 18, 28, 128)
 *        bits 4-6  how much header the callback asks for (take what is offered,
 *                  14, 18, 28, 46, 128, 129 = too much, ulpdu_len + 1 = too much)
 *        bit 7     max_ulpdu small (c[3] * 4) instead of 65535
 *   c[1] bits 0-3  start position (Marker slots, just before them, the 2^32 wrap)
 *        bits 4-5  a callback that fails: none, header, payload, fpdu_done
 *        bits 6-7  which FPDU it fails in (0..3)
 *   c[2]           seed of the chunk sizes the stream is fed in; for the crcfix
 *                  variant also bit 0 = set FPDUPTRs right, bit 1 = then break
 *                  the CRC of FPDU number (bits 2-3)
 *   c[3]           small max_ulpdu / 4
 *
 * This target runs with CRC checking OFF, so any bytes get past the CRC and
 * into the framing, Marker and header logic.  fuzz_mpa_rx_crcfix.c includes
 * this file with FUZZ_MPA_RX_CRCFIX defined: CRC ON, and before feeding every
 * FPDU's CRC (and, by c[2] bit 0, every Marker's FPDUPTR) is rewritten to be
 * correct, so the CRC-good path is reached too.
 *
 * The stream is fed twice - in one piece and in input-chosen chunks (some
 * empty) - and both runs must agree.  Properties (abort() on violation):
 *   - mpa_rx_read_stream() returns exactly `len` or a negative code, and after
 *     an error keeps returning that same code, delivering nothing more;
 *   - only the documented codes appear: IW_EMPA_LEN/MARKER/CRC, the injected
 *     callback error, IW_EINVAL for a callback that asks for too much header;
 *     IW_EMPA_CRC never with CRC off;
 *   - header calls: first `have` = min(hdr_min, ulpdu_len), later ones the amount
 *     asked for, never above ulpdu_len or MPA_RX_HDR_MAX, the gathered prefix
 *     unchanged between calls;
 *   - payload offsets are contiguous from the end of the header, stay within
 *     the ULPDU, and point into the chunk being fed (zero copy, no over-read);
 *   - fpdu_done comes exactly when header + payload == ulpdu_len;
 *   - both feeding modes give the same header calls, the same FPDUs (length
 *     and content hash) and the same final result.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>

#include "iw_bytes.h"

#ifndef FUZZ_MPA_RX_CRCFIX
#define FUZZ_MPA_RX_CRCFIX 0
#endif

#define CFG_LEN	     4
#define INJECTED_ERR (-399)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

struct fz_cfg {
	struct mpa_rx_config rx;
	unsigned ask_mode;
	unsigned fail_kind; /* 0 none, 1 header, 2 payload, 3 fpdu_done */
	unsigned fail_fpdu;
	uint8_t chunk_seed;
	bool fix_markers;
	bool break_crc;
	unsigned break_fpdu;
};

/* What one run observed; two runs over different splits must be equal. */
struct fz_obs {
	const struct fz_cfg *cfg;
	/* current FPDU */
	bool in_fpdu;
	size_t ulen, got, asked;
	uint8_t hdr_seen[MPA_RX_HDR_MAX];
	uint64_t fpdu_hash;
	/* whole run */
	unsigned fpdus, hdr_calls;
	uint64_t hash;		/* ulpdu lengths, header calls and content of completed FPDUs */
	const uint8_t *lo, *hi; /* the chunk being fed */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_bytes(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = mix(h, p[i]);
	return h;
}

static int fz_header(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	static const size_t asks[] = {0, 14, 18, 28, 46, 128, MPA_RX_HDR_MAX + 1, 0};
	struct fz_obs *o = user;
	size_t want;

	o->hdr_calls++;
	if (!o->in_fpdu) {
		o->in_fpdu = true;
		o->ulen = ulpdu_len;
		o->got = 0;
		o->fpdu_hash = 0;
		CHECK(have == IW_MIN((size_t)o->cfg->rx.hdr_min, ulpdu_len));
	} else {
		CHECK(ulpdu_len == o->ulen);
		CHECK(have == o->asked);
		CHECK(memcmp(hdr, o->hdr_seen, o->got) == 0);
	}
	CHECK(have <= ulpdu_len && have <= MPA_RX_HDR_MAX && have >= o->got);
	CHECK(ulpdu_len <= o->cfg->rx.max_ulpdu);
	memcpy(o->hdr_seen + o->got, hdr + o->got, have - o->got);
	o->fpdu_hash = mix_bytes(o->fpdu_hash, hdr + o->got, have - o->got);
	o->got = have;
	o->hash = mix(o->hash, ((uint64_t)have << 32) | ulpdu_len);

	if (o->cfg->fail_kind == 1 && o->fpdus == o->cfg->fail_fpdu)
		return INJECTED_ERR;
	want = asks[o->cfg->ask_mode];
	if (o->cfg->ask_mode == 7 && o->fpdus == 1)
		want = ulpdu_len + 1; /* beyond the ULPDU, in the second FPDU: IW_EINVAL */
	else if (want <= MPA_RX_HDR_MAX)
		want = IW_MIN(want, ulpdu_len);
	if (want <= have)
		return (int)have;
	o->asked = want;
	return (int)want;
}

static int fz_payload(void *user, size_t off, const uint8_t *p, size_t n)
{
	struct fz_obs *o = user;

	CHECK(o->in_fpdu && n > 0);
	CHECK(off == o->got && off + n <= o->ulen);
	CHECK(p >= o->lo && p + n <= o->hi);
	o->fpdu_hash = mix_bytes(o->fpdu_hash, p, n);
	o->got += n;
	/* fail in the chosen FPDU once its second half starts arriving */
	if (o->cfg->fail_kind == 2 && o->fpdus == o->cfg->fail_fpdu && o->got > o->ulen / 2)
		return INJECTED_ERR;
	return 0;
}

static int fz_done(void *user)
{
	struct fz_obs *o = user;

	CHECK(o->in_fpdu && o->got == o->ulen);
	o->in_fpdu = false;
	o->hash = mix(o->hash, o->fpdu_hash);
	if (o->cfg->fail_kind == 3 && o->fpdus == o->cfg->fail_fpdu)
		return INJECTED_ERR;
	o->fpdus++;
	return 0;
}

static const struct mpa_rx_ops fz_ops = {
	.ulpdu_header = fz_header,
	.ulpdu_payload = fz_payload,
	.fpdu_done = fz_done,
};

static void fz_parse_cfg(const uint8_t *c, struct fz_cfg *cfg)
{
	static const uint16_t hdr_mins[] = {1, 2, 3, 4, 14, 18, 28, 128};
	static const uint32_t positions[] = {
		0,	     4,		  8,	       492,	    504,	 508,
		512,	     1020,	  1024,	       4096 - 12,   65536 + 500, 0xFFFFFFFCu,
		0xFFFFFE00u, 0xFFFFFDF8u, 0xFFFFFFF0u, 0x7FFFFE04u,
	};

	mpa_rx_config_default(&cfg->rx);
	cfg->rx.crc = FUZZ_MPA_RX_CRCFIX;
	cfg->rx.markers = c[0] & 1;
	cfg->rx.hdr_min = hdr_mins[(c[0] >> 1) & 7];
	cfg->ask_mode = (c[0] >> 4) & 7;
	if (c[0] & 0x80)
		cfg->rx.max_ulpdu = (uint32_t)c[3] * 4;
	cfg->rx.pos = positions[c[1] & 15];
	cfg->fail_kind = (c[1] >> 4) & 3;
	cfg->fail_fpdu = c[1] >> 6;
	cfg->chunk_seed = c[2];
	cfg->fix_markers = c[2] & 1;
	cfg->break_crc = c[2] & 2;
	cfg->break_fpdu = (c[2] >> 2) & 3;
}

static bool err_allowed(const struct fz_cfg *cfg, ssize_t r)
{
	switch (r) {
	case IW_EMPA_LEN:
	case IW_EMPA_MARKER:
		return true;
	case IW_EMPA_CRC:
		return cfg->rx.crc;
	case IW_EINVAL:
		return cfg->ask_mode == 6 || cfg->ask_mode == 7;
	case INJECTED_ERR:
		return cfg->fail_kind != 0;
	default:
		return false;
	}
}

/*
 * Feed `s` into a fresh machine, whole (seed < 0) or in chunks drawn from a
 * small generator seeded by the input.  Returns IW_OK or the first error.
 */
static int fz_run(const struct fz_cfg *cfg, const uint8_t *s, size_t n, int seed, struct fz_obs *o,
		  struct mpa_rx *rx)
{
	uint32_t g = (uint32_t)seed * 2654435761u + 1;
	size_t off = 0;
	int err = IW_OK;
	bool last = false;

	memset(o, 0, sizeof(*o));
	o->cfg = cfg;
	CHECK(mpa_rx_init(rx, &cfg->rx, &fz_ops, o) == IW_OK);
	while (!last) {
		size_t len = n - off;
		unsigned before = o->hdr_calls;
		uint64_t h = o->hash;
		ssize_t r;

		if (seed >= 0) {
			g = g * 1103515245u + 12345u;
			switch ((g >> 16) & 3) {
			case 0:
				len = 0;
				break;
			case 1:
				len = IW_MIN(len, (size_t)1);
				break;
			case 2:
				len = IW_MIN(len, (size_t)((g >> 18) & 7));
				break;
			default:
				len = IW_MIN(len, (size_t)((g >> 18) & 1023));
				break;
			}
		}
		/* one more (empty) call after the end checks the final state is stable */
		last = off == n;
		o->lo = s + off;
		o->hi = s + off + len;
		r = mpa_rx_read_stream(rx, len ? s + off : NULL, len);
		if (err != IW_OK) {
			/* DEAD: the same error again, and nothing delivered */
			CHECK(r == err && o->hdr_calls == before && o->hash == h);
		} else if (r < 0) {
			CHECK(err_allowed(cfg, r));
			err = (int)r;
		} else {
			CHECK((size_t)r == len);
		}
		if (err != IW_OK)
			CHECK(rx->state == MPA_RX_DEAD && rx->error == err);
		off += len;
	}
	if (err == IW_OK) {
		CHECK(rx->pos == (uint32_t)(cfg->rx.pos + n));
		CHECK(rx->fpdus == o->fpdus);
		CHECK(rx->state != MPA_RX_DEAD && rx->state != MPA_RX_MARKER);
	}
	return err;
}

#if FUZZ_MPA_RX_CRCFIX
/* Markers, when on, occupy the 4 octets at every stream position ≡ 0 (mod 512). */
static bool at_marker(const struct fz_cfg *cfg, uint32_t p)
{
	return cfg->rx.markers && p % MPA_MARKER_INTERVAL == 0;
}

static void put_marker(uint8_t *s, size_t n, size_t i, uint16_t ptr)
{
	if (i + 2 < n)
		s[i + 2] = (uint8_t)(ptr >> 8);
	if (i + 3 < n)
		s[i + 3] = (uint8_t)ptr;
}

/*
 * Walk the stream as the receiver will frame it and make each complete FPDU's
 * CRC correct (and, when asked, each Marker's FPDUPTR), so the checks behind
 * the CRC are reached.  Stops at the first ULPDU_Length the receiver rejects.
 */
static void fz_fix_crcs(const struct fz_cfg *cfg, uint8_t *s, size_t n)
{
	uint32_t p = cfg->rx.pos;
	size_t i = 0;
	unsigned fpdu = 0;

	for (; i < n; fpdu++) {
		size_t start = i, body = MPA_ULPDU_LEN_LEN, k = 0;
		uint32_t hdr;
		unsigned hi = 0;

		if (at_marker(cfg, p)) {
			if (cfg->fix_markers)
				put_marker(s, n, i, 0);
			i += MPA_MARKER_LEN;
			p += MPA_MARKER_LEN;
		}
		hdr = p;
		while (k < body) {
			if (i >= n)
				return;
			if (at_marker(cfg, p)) {
				if (cfg->fix_markers)
					put_marker(s, n, i, (uint16_t)(p - hdr));
				i += MPA_MARKER_LEN;
				p += MPA_MARKER_LEN;
				continue;
			}
			if (k == 0) {
				hi = s[i];
			} else if (k == 1) {
				size_t ulen = hi << 8 | s[i];

				if (ulen > cfg->rx.max_ulpdu)
					return;
				body += ulen + mpa_pad_len(ulen);
			}
			i++;
			p++;
			k++;
		}
		if (at_marker(cfg, p)) {
			if (cfg->fix_markers)
				put_marker(s, n, i, (uint16_t)(p - hdr));
			i += MPA_MARKER_LEN;
			p += MPA_MARKER_LEN;
		}
		if (i + MPA_CRC_LEN > n)
			return;
		iw_put_le32(s + i, mpa_crc32c(s + start, i - start));
		/* one deliberately wrong CRC keeps the mismatch path covered */
		if (cfg->break_crc && fpdu == cfg->break_fpdu)
			s[i] ^= 1;
		i += MPA_CRC_LEN;
		p += MPA_CRC_LEN;
	}
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_cfg cfg;
	struct fz_obs whole, split;
	struct mpa_rx rx;
	uint8_t *s;
	size_t n;
	int e1, e2;

	if (size < CFG_LEN)
		return 0;
	fz_parse_cfg(data, &cfg);
	n = size - CFG_LEN;
	/* An exact-size heap copy: ASan catches any read past `len`. */
	s = malloc(n ? n : 1);
	if (!s)
		return 0;
	memcpy(s, data + CFG_LEN, n);
#if FUZZ_MPA_RX_CRCFIX
	fz_fix_crcs(&cfg, s, n);
#endif
	e1 = fz_run(&cfg, s, n, -1, &whole, &rx);
	e2 = fz_run(&cfg, s, n, cfg.chunk_seed, &split, &rx);
	CHECK(e1 == e2);
	CHECK(whole.fpdus == split.fpdus && whole.hdr_calls == split.hdr_calls);
	CHECK(whole.hash == split.hash);
	free(s);
	return 0;
}
