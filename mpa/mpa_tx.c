/* SPDX-License-Identifier: MIT */
/*
 * mpa_tx.c - FPDU transmit framing for MPA full operation (RFC 5044 §4).
 *
 * Theory of operation.  An FPDU on the wire is
 *
 *	[Marker] ULPDU_Length ULPDU [Markers inside] PAD [Marker] CRC
 *
 * where ULPDU_Length (§4.1) is big-endian and counts only the ULPDU, PAD
 * brings ULPDU_Length + ULPDU + PAD to a multiple of 4, and the CRC32c
 * (§4.4) is sent least significant octet first.
 *
 * Markers (§4.3) are a function of the stream position alone: when they are
 * on, a 4-octet Marker starts at every position p with p mod 512 == 0 (pos
 * counts full-operation octets, so the first Marker sits right before the
 * first FPDU).  Because every FPDU is a multiple of 4 octets long and starts
 * 4-aligned, a Marker can land only (a) right before the ULPDU_Length field,
 * where it belongs to this FPDU with FPDUPTR 0, (b) anywhere inside the ULPDU
 * or right after the PAD, where FPDUPTR is its distance back to the
 * ULPDU_Length field, or (c) right after the CRC, where it belongs to the
 * next FPDU.  Every Marker of cases (a) and (b) is covered by this FPDU's CRC
 * (§4.4 rules 1 and 2).
 *
 * Nothing is copied: mpa_tx_frame() walks the octets of the FPDU in stream
 * order, emitting one iovec per contiguous piece (the caller's ULPDU iovecs,
 * split where a Marker falls, and the fpdu's own length/Marker/trailer
 * storage), and feeds exactly the covered pieces to the CRC as it goes.
 * Partial writes then simply consume a prefix of the iovec array.
 *
 * With Markers a large FPDU is some 260 pieces, which costs the kernel more
 * per octet than one copy does, and the CRC more in calls than in octets.
 * mpa_tx_frame_linear() therefore copies the FPDU into one buffer of the
 * caller's, Markers included, and runs the CRC once over the covered part,
 * which is then the whole buffer but the CRC field.
 */
#include <string.h>

#include <iwarp/mpa.h>

#include "iw_bytes.h"
#include "iw_iov.h"

void mpa_tx_init(struct mpa_tx *tx, bool crc, bool markers, uint32_t pos)
{
	tx->crc = crc;
	tx->markers = markers;
	tx->pos = pos;
}

/* State of one mpa_tx_frame() walk over the FPDU being built. */
struct tx_walk {
	struct mpa_fpdu *f;
	bool markers;
	bool crc;
	uint32_t pos;	 /* stream position of the next octet */
	uint32_t hdrpos; /* stream position of the ULPDU_Length field */
	uint32_t state;	 /* running CRC register */
	uint8_t *lin;	 /* mpa_tx_frame_linear: the FPDU is copied here, CRC at the end */
};

static void tx_emit(struct tx_walk *w, const void *p, size_t n)
{
	struct mpa_fpdu *f = w->f;
	struct iovec *last = f->iovcnt ? &f->iov[f->iovcnt - 1] : NULL;

	if (n == 0)
		return;
	if (w->lin) {
		memcpy(w->lin + f->total, p, n);
		p = w->lin + f->total;
	}
	/* Adjacent pieces (PAD and CRC, caller iovecs that touch) share one iovec. */
	if (last && (const uint8_t *)last->iov_base + last->iov_len == (const uint8_t *)p) {
		last->iov_len += n;
	} else {
		f->iov[f->iovcnt].iov_base = (void *)(uintptr_t)p;
		f->iov[f->iovcnt].iov_len = n;
		f->iovcnt++;
	}
	f->total += n;
	w->pos += (uint32_t)n;
}

static void tx_emit_covered(struct tx_walk *w, const void *p, size_t n)
{
	if (w->crc && !w->lin)
		w->state = mpa_crc32c_update(w->state, p, n);
	tx_emit(w, p, n);
}

/*
 * Put a Marker here if the stream position is a Marker position.  `leading`
 * is true before the ULPDU_Length field: such a Marker falls between FPDUs
 * and carries FPDUPTR 0 (§4.3).
 */
static void tx_marker_maybe(struct tx_walk *w, bool leading)
{
	struct mpa_fpdu *f = w->f;
	uint8_t *m;
	uint16_t ptr;

	if (!w->markers || w->pos % MPA_MARKER_INTERVAL != 0)
		return;
	/*
	 * FPDUPTR is 16 bits.  Within the RFC's MULPDU limit (64768) the
	 * distance always fits; for the larger ULPDUs this API also accepts it
	 * is sent modulo 2^16, which is what mpa_rx expects too.
	 */
	ptr = leading ? 0 : (uint16_t)(w->pos - w->hdrpos);
	m = f->markers[f->nmarkers++];
	m[0] = 0;
	m[1] = 0;
	iw_put_be16(m + 2, ptr);
	tx_emit_covered(w, m, MPA_MARKER_LEN);
}

/* Emit covered octets, inserting Markers wherever the stream position demands. */
static void tx_emit_split(struct tx_walk *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		size_t room;

		tx_marker_maybe(w, false);
		room = w->markers ? MPA_MARKER_INTERVAL - w->pos % MPA_MARKER_INTERVAL : n;
		room = IW_MIN(room, n);
		tx_emit_covered(w, p, room);
		p += room;
		n -= room;
	}
}

static int tx_frame(struct mpa_tx *tx, const struct iovec *ulpdu, int iovcnt, struct mpa_fpdu *f,
		    uint8_t *lin)
{
	struct tx_walk w;
	size_t ulen = 0;
	unsigned pad;

	if (!tx || !f || iovcnt < 0 || iovcnt > MPA_TX_ULPDU_IOV_MAX || (iovcnt > 0 && !ulpdu))
		return IW_EINVAL;
	if (tx->markers && tx->pos % 4 != 0)
		return IW_EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		/* Checked one by one so the sum cannot wrap. */
		if (ulpdu[i].iov_len > MPA_ULPDU_MAX || (ulpdu[i].iov_len && !ulpdu[i].iov_base))
			return IW_EINVAL;
		ulen += ulpdu[i].iov_len;
	}
	if (ulen > MPA_ULPDU_MAX)
		return IW_EINVAL;
	pad = mpa_pad_len(ulen);

	f->first = 0;
	f->iovcnt = 0;
	f->total = 0;
	f->nmarkers = 0;
	f->crc = 0;
	w.f = f;
	w.markers = tx->markers;
	w.crc = tx->crc;
	w.pos = tx->pos;
	w.state = MPA_CRC32C_INIT;
	w.lin = lin;

	/* (a) A Marker right before the length field belongs to this FPDU. */
	tx_marker_maybe(&w, true);
	w.hdrpos = w.pos;
	iw_put_be16(f->lenhdr, (uint16_t)ulen);
	tx_emit_covered(&w, f->lenhdr, MPA_ULPDU_LEN_LEN);

	/* (b) ULPDU with any Markers inside it; empty caller iovecs vanish here. */
	for (int i = 0; i < iovcnt; i++)
		tx_emit_split(&w, ulpdu[i].iov_base, ulpdu[i].iov_len);

	/*
	 * PAD, then a Marker that falls right after it (covered, §4.4 rule 1).
	 * The PAD never straddles a Marker position: it ends 4-aligned and
	 * starts unaligned unless it is empty.
	 */
	memset(f->trailer, 0, sizeof(f->trailer));
	tx_emit_split(&w, f->trailer, pad);
	tx_marker_maybe(&w, false);

	if (lin && tx->crc)
		w.state = mpa_crc32c_update(w.state, lin, f->total);
	if (tx->crc)
		f->crc = mpa_crc32c_final(w.state);
	iw_put_le32(f->trailer + pad, f->crc);
	/* Not covered; a Marker after it is (c), the next FPDU's. */
	tx_emit(&w, f->trailer + pad, MPA_CRC_LEN);

	f->len = f->total;
	tx->pos = w.pos;
	return IW_OK;
}

int mpa_tx_frame(struct mpa_tx *tx, const struct iovec *ulpdu, int iovcnt, struct mpa_fpdu *f)
{
	return tx_frame(tx, ulpdu, iovcnt, f, NULL);
}

int mpa_tx_frame_linear(struct mpa_tx *tx, const struct iovec *ulpdu, int iovcnt,
			struct mpa_fpdu *f, uint8_t *buf)
{
	if (!buf)
		return IW_EINVAL;
	return tx_frame(tx, ulpdu, iovcnt, f, buf);
}

void mpa_fpdu_advance(struct mpa_fpdu *f, size_t n)
{
	if (n > f->len)
		n = f->len;
	iw_iov_advance(f->iov, &f->first, &f->iovcnt, n);
	f->len -= n;
}

uint32_t mpa_mulpdu(uint32_t emss, bool markers)
{
	/* §4.5: 6 octets of length + CRC, alignment, and the worst-case Markers. */
	uint64_t overhead = 6 + emss % 4;

	if (markers)
		overhead += 4 * ((uint64_t)emss / MPA_MARKER_INTERVAL +
				 (emss % MPA_MARKER_INTERVAL != 0));
	/* §4.5: never below 128 however small EMSS gets (also avoids wrapping). */
	if (emss < overhead + MPA_MULPDU_MIN)
		return MPA_MULPDU_MIN;
	/* §3: DDP never hands MPA more than 64768 octets. */
	return (uint32_t)IW_MIN(emss - overhead, (uint64_t)MPA_MULPDU_MAX);
}
