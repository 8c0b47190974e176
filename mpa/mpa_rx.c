/* SPDX-License-Identifier: MIT */
/*
 * mpa_rx.c - FPDU receive state machine for MPA full operation (RFC 5044 §4,
 * §6, §8).
 *
 * Theory of operation.  The receiver finds FPDU boundaries from ULPDU_Length
 * alone (§6: in-order TCP delivery makes the Markers mere hints), walking
 *
 *	LEN -> HDR -> PAYLOAD -> PAD -> CRC -> LEN ...
 *
 * with a progress counter (`done`) per state, so the machine can stop after
 * any octet and resume with the next call: callbacks are identical for every
 * split of the stream.  The ULPDU header is gathered into rx->hdr so the layer
 * above can parse it contiguously and say how much header it needs (DDP
 * tagged and untagged headers differ in length); the rest of the ULPDU is
 * handed up straight from the caller's buffer, split only where the input
 * ends or a Marker sits.
 *
 * Markers (§4.3) are positional: with Markers on, the 4 octets at every
 * stream position p ≡ 0 (mod 512) are a Marker whatever state the machine is
 * in, so a Marker is handled as an interruption of the current state rather
 * than as a stored state (rx->state never holds MPA_RX_MARKER; the position
 * says where we are inside a Marker).  A Marker met before the ULPDU_Length
 * field (state LEN, nothing of it received) belongs to the next FPDU and must
 * carry FPDUPTR 0; any other Marker, including one right where the CRC starts,
 * belongs to the current FPDU and must point back to its ULPDU_Length field.
 * Every Marker is covered by the CRC of the FPDU it belongs to (§4.4), which
 * works out naturally because the CRC register is reset only when an FPDU
 * ends.  A wrong FPDUPTR is remembered and reported when the FPDU ends, so a
 * CRC failure (the likelier cause) takes precedence (§8 error 3 is "Marker
 * and ULPDU_Length disagree" with a good CRC).
 *
 * Errors make the machine DEAD: MPA delivers nothing more on this half
 * connection (§8) and every later call returns the first error.
 */
#include <limits.h>
#include <string.h>

#include <iwarp/mpa.h>

#include "iw_bytes.h"
#include "iw_log.h"

void mpa_rx_config_default(struct mpa_rx_config *cfg)
{
	cfg->crc = true;
	cfg->markers = false;
	cfg->pos = 0;
	cfg->hdr_min = 2;
	cfg->max_ulpdu = MPA_ULPDU_MAX;
}

int mpa_rx_init(struct mpa_rx *rx, const struct mpa_rx_config *cfg, const struct mpa_rx_ops *ops,
		void *user)
{
	static const struct mpa_rx_ops no_ops;

	if (!rx || !cfg)
		return IW_EINVAL;
	if (cfg->hdr_min == 0 || cfg->hdr_min > MPA_RX_HDR_MAX || cfg->max_ulpdu > MPA_ULPDU_MAX)
		return IW_EINVAL;
	/* FPDUs are 4-aligned in the stream; a Marker must never split a field. */
	if (cfg->markers && cfg->pos % 4 != 0)
		return IW_EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->cfg = *cfg;
	rx->ops = ops ? ops : &no_ops;
	rx->user = user;
	rx->state = MPA_RX_LEN;
	rx->error = IW_OK;
	rx->pos = cfg->pos;
	rx->fpdu_start = cfg->pos;
	rx->crc_state = MPA_CRC32C_INIT;
	return IW_OK;
}

static int rx_fail(struct mpa_rx *rx, int err)
{
	iw_log(IW_LOG_DEBUG, "mpa_rx: %s at stream position %u in state %s", mpa_errname(err),
	       (unsigned)rx->pos, mpa_rx_state_name(rx->state));
	rx->state = MPA_RX_DEAD;
	rx->error = err;
	return err;
}

static void rx_crc(struct mpa_rx *rx, const uint8_t *p, size_t n)
{
	if (rx->cfg.crc)
		rx->crc_state = mpa_crc32c_update(rx->crc_state, p, n);
}

/*
 * The CRC covers every octet of the stream but the CRC fields themselves
 * (§4.4: ULPDU_Length, ULPDU, PAD and the Markers inside the FPDU), so
 * mpa_rx_read_stream() runs it over the caller's octets in spans, from *mark
 * up to end, rather than once per piece: a Marker every 512 octets would
 * otherwise cost two CRC calls per 508 octets of payload.  The span is closed
 * where a CRC field starts, before every return, after RX_CRC_SPAN octets,
 * and before a payload piece of RX_CRC_FIRST octets or more is handed up: the
 * CRC then reads the piece first and the placement copy finds it in cache
 * (closing the span after the copy instead measured about a tenth slower for
 * 64 KiB FPDUs).
 */
#define RX_CRC_SPAN  (64u * 1024)
#define RX_CRC_FIRST 4096u

static void rx_crc_span(struct mpa_rx *rx, const uint8_t *p, size_t *mark, size_t end)
{
	if (end > *mark)
		rx_crc(rx, p + *mark, end - *mark);
	*mark = end;
}

/* The ULPDU is complete: on to the PAD, or straight to the CRC when there is none. */
static void rx_ulpdu_end(struct mpa_rx *rx)
{
	rx->state = mpa_pad_len(rx->ulpdu_len) ? MPA_RX_PAD : MPA_RX_CRC;
	rx->done = 0;
}

/* rx->hdr holds rx->done octets: ask the layer above whether that is enough. */
/* rx_header_call(): the layer above holds the machine (it returned 0). */
#define RX_HELD 1

static int rx_header_call(struct mpa_rx *rx)
{
	size_t have = rx->done;
	int want = (int)have;

	if (rx->ops->ulpdu_header)
		want = rx->ops->ulpdu_header(rx->user, rx->hdr, have, rx->ulpdu_len);
	if (want < 0)
		return rx_fail(rx, want);
	if (want == 0 && have > 0)
		return RX_HELD; /* offered again by the next call */
	if ((size_t)want > have) {
		/* Asking beyond the ULPDU or our buffer is a local bug, not a peer error. */
		if ((size_t)want > rx->ulpdu_len || want > MPA_RX_HDR_MAX)
			return rx_fail(rx, IW_EINVAL);
		rx->hdr_want = (uint32_t)want;
		return IW_OK;
	}
	if ((size_t)want < have)
		return rx_fail(rx, IW_EINVAL);
	if (rx->done == rx->ulpdu_len)
		rx_ulpdu_end(rx);
	else
		rx->state = MPA_RX_PAYLOAD;
	return IW_OK;
}

/* The Marker at rx->pos - 4 is complete: check its FPDUPTR against the framing. */
static void rx_marker_check(struct mpa_rx *rx)
{
	uint32_t at = rx->pos - MPA_MARKER_LEN;
	/* §4.3: the two low bits are reserved and treated as zero. */
	uint16_t ptr = iw_get_be16(rx->marker + 2) & 0xFFFC;
	uint16_t expect;

	if (rx->state == MPA_RX_LEN && rx->done == 0)
		expect = 0; /* between FPDUs: belongs to the next one */
	else
		expect = (uint16_t)(at - rx->fpdu_start); /* mod 2^16, as mpa_tx sends it */
	if (ptr != expect)
		rx->marker_bad = true;
}

/* The CRC field is complete: judge the FPDU and hand it up. */
static int rx_fpdu_end(struct mpa_rx *rx)
{
	int ret;

	if (rx->cfg.crc && mpa_crc32c_final(rx->crc_state) != iw_get_le32(rx->crcbuf))
		return rx_fail(rx, IW_EMPA_CRC);
	if (rx->marker_bad)
		return rx_fail(rx, IW_EMPA_MARKER);
	if (rx->ops->fpdu_done) {
		ret = rx->ops->fpdu_done(rx->user);
		if (ret < 0)
			return rx_fail(rx, ret);
	}
	rx->fpdus++;
	rx->state = MPA_RX_LEN;
	rx->done = 0;
	rx->crc_state = MPA_CRC32C_INIT;
	return IW_OK;
}

ssize_t mpa_rx_read_stream(struct mpa_rx *rx, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t off = 0, crc_mark = 0;
	int ret;

	if (rx->state == MPA_RX_DEAD)
		return rx->error;
	if (len > 0 && !buf)
		return IW_EINVAL;
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;

	for (;;) {
		size_t avail, n;
		uint32_t in_iv;

		/* The one step that needs no input: a complete header goes up at once. */
		if (rx->state == MPA_RX_HDR && rx->done == rx->hdr_want) {
			ret = rx_header_call(rx);
			if (ret < 0)
				return ret;
			if (ret == RX_HELD) {
				rx_crc_span(rx, p, &crc_mark, off);
				return (ssize_t)off;
			}
			continue;
		}
		if (off == len)
			break;
		avail = len - off;

		if (rx->cfg.markers) {
			in_iv = rx->pos % MPA_MARKER_INTERVAL;
			if (in_iv < MPA_MARKER_LEN) {
				n = IW_MIN(avail, (size_t)(MPA_MARKER_LEN - in_iv));
				memcpy(rx->marker + in_iv, p + off, n);
				rx->marker_done = (uint8_t)(in_iv + n);
				rx->pos += (uint32_t)n;
				off += n;
				if (rx->marker_done == MPA_MARKER_LEN) {
					rx_marker_check(rx);
					rx->marker_done = 0;
				}
				continue;
			}
			/* Never run into the next Marker. */
			avail = IW_MIN(avail, (size_t)(MPA_MARKER_INTERVAL - in_iv));
		}

		switch (rx->state) {
		case MPA_RX_LEN:
			if (rx->done == 0)
				rx->fpdu_start = rx->pos;
			n = IW_MIN(avail, (size_t)(MPA_ULPDU_LEN_LEN - rx->done));
			memcpy(rx->lenbuf + rx->done, p + off, n);
			rx->done += (uint32_t)n;
			if (rx->done < MPA_ULPDU_LEN_LEN)
				break;
			rx->ulpdu_len = iw_get_be16(rx->lenbuf);
			if (rx->ulpdu_len > rx->cfg.max_ulpdu) {
				rx->pos += (uint32_t)n;
				return rx_fail(rx, IW_EMPA_LEN);
			}
			rx->state = MPA_RX_HDR;
			rx->done = 0;
			rx->hdr_want = IW_MIN(rx->cfg.hdr_min, rx->ulpdu_len);
			break;
		case MPA_RX_HDR:
			n = IW_MIN(avail, (size_t)(rx->hdr_want - rx->done));
			memcpy(rx->hdr + rx->done, p + off, n);
			rx->done += (uint32_t)n;
			break;
		case MPA_RX_PAYLOAD:
			n = IW_MIN(avail, (size_t)(rx->ulpdu_len - rx->done));
			/* a large piece: CRC first, then the copy reads it from cache */
			if (n >= RX_CRC_FIRST)
				rx_crc_span(rx, p, &crc_mark, off + n);
			if (rx->ops->ulpdu_payload) {
				ret = rx->ops->ulpdu_payload(rx->user, rx->done, p + off, n);
				if (ret < 0)
					return rx_fail(rx, ret);
			}
			rx->done += (uint32_t)n;
			if (rx->done == rx->ulpdu_len)
				rx_ulpdu_end(rx);
			break;
		case MPA_RX_PAD:
			n = IW_MIN(avail, (size_t)(mpa_pad_len(rx->ulpdu_len) - rx->done));
			/* PAD content is not checked (§4.1), only CRC-covered. */
			rx->done += (uint32_t)n;
			if (rx->done == mpa_pad_len(rx->ulpdu_len)) {
				rx->state = MPA_RX_CRC;
				rx->done = 0;
			}
			break;
		case MPA_RX_CRC:
			/* everything before the CRC field, which itself is not covered */
			rx_crc_span(rx, p, &crc_mark, off);
			n = IW_MIN(avail, (size_t)(MPA_CRC_LEN - rx->done));
			memcpy(rx->crcbuf + rx->done, p + off, n);
			crc_mark = off + n;
			rx->done += (uint32_t)n;
			if (rx->done == MPA_CRC_LEN) {
				rx->pos += (uint32_t)n;
				off += n;
				ret = rx_fpdu_end(rx);
				if (ret < 0)
					return ret;
				continue;
			}
			break;
		case MPA_RX_MARKER:
		case MPA_RX_DEAD:
		default:
			return rx_fail(rx, IW_ESTATE);
		}
		rx->pos += (uint32_t)n;
		off += n;
		if (off - crc_mark >= RX_CRC_SPAN)
			rx_crc_span(rx, p, &crc_mark, off);
	}
	rx_crc_span(rx, p, &crc_mark, off);
	return (ssize_t)len;
}

size_t mpa_rx_payload_room(const struct mpa_rx *rx)
{
	size_t room, in_iv;

	if (!rx || rx->state != MPA_RX_PAYLOAD)
		return 0;
	room = rx->ulpdu_len - rx->done;
	if (rx->cfg.markers) {
		/* only up to the next Marker (§4.3); never while inside one */
		in_iv = rx->pos % MPA_MARKER_INTERVAL;
		if (in_iv < MPA_MARKER_LEN)
			return 0;
		room = IW_MIN(room, MPA_MARKER_INTERVAL - in_iv);
	}
	return room;
}

int mpa_rx_payload_placed(struct mpa_rx *rx, const void *p, size_t n)
{
	if (!rx)
		return IW_EINVAL;
	if (rx->state == MPA_RX_DEAD)
		return rx->error;
	if (n > mpa_rx_payload_room(rx) || (n && !p))
		return IW_EINVAL;
	rx_crc(rx, p, n);
	rx->done += (uint32_t)n;
	rx->pos += (uint32_t)n;
	if (rx->done == rx->ulpdu_len)
		rx_ulpdu_end(rx);
	return IW_OK;
}

size_t mpa_rx_fpdu_left(const struct mpa_rx *rx)
{
	size_t trailer;

	if (!rx || rx->cfg.markers)
		return 0;
	trailer = mpa_pad_len(rx->ulpdu_len) + MPA_CRC_LEN;
	switch (rx->state) {
	case MPA_RX_HDR:
	case MPA_RX_PAYLOAD:
		return rx->ulpdu_len - rx->done + trailer;
	case MPA_RX_PAD:
		return trailer - rx->done;
	case MPA_RX_CRC:
		return MPA_CRC_LEN - rx->done;
	default:
		return 0;
	}
}

const char *mpa_rx_state_name(enum mpa_rx_state st)
{
	static const char *const names[] = {
		[MPA_RX_MARKER] = "MARKER",   [MPA_RX_LEN] = "LEN", [MPA_RX_HDR] = "HDR",
		[MPA_RX_PAYLOAD] = "PAYLOAD", [MPA_RX_PAD] = "PAD", [MPA_RX_CRC] = "CRC",
		[MPA_RX_DEAD] = "DEAD",
	};

	if ((unsigned)st >= IW_ARRAY_SIZE(names) || !names[st])
		return "?";
	return names[st];
}
