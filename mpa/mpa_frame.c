/* SPDX-License-Identifier: MIT */
/*
 * mpa_frame.c - encode and decode the MPA Request and Reply frames.
 *
 * Theory of operation.  The startup frames (RFC 5044 §7.1.1, extended by
 * RFC 6581 §6 and §9) travel as plain TCP stream data before full operation:
 *
 *	octets  0..15  key "MPA ID Req Frame" or "MPA ID Rep Frame"
 *	octet   16     M 0x80 | C 0x40 | R 0x20 | S 0x10 (rev 2 only) | Res
 *	octet   17     Rev
 *	octets 18..19  PD_Length, big-endian, 0..512
 *	octets 20..    Private Data; with S the first four octets are the
 *	               RFC 6581 IRD/ORD word:
 *	                 BE16  A 0x8000 | B (Send RTR) 0x4000 | IRD 0x3FFF
 *	                 BE16  C (Write RTR) 0x8000 | D (Read RTR) 0x4000 | ORD 0x3FFF
 *
 * The decoder is written for a byte stream that arrives in pieces: it checks
 * every field as soon as the octets holding it are present (a wrong key is
 * reported after its first wrong octet, a bad revision at octet 17, a bad
 * PD_Length at octet 19) and only then asks for more with IW_EAGAIN, so a
 * caller can feed it a growing prefix and get the earliest possible verdict.
 * It never reads past 20 + PD_Length and never sizes anything by a
 * peer-supplied value (PD_Length is bounded by 512 before it is used).
 */
#include <string.h>

#include "iw_bytes.h"
#include <iwarp/mpa.h>

#define MPA_FLAG_M    0x80
#define MPA_FLAG_C    0x40
#define MPA_FLAG_R    0x20
#define MPA_FLAG_S    0x10

#define MPA_OFF_FLAGS 16
#define MPA_OFF_REV   17
#define MPA_OFF_PDLEN 18

/* IRD/ORD word (RFC 6581 §9), each half a big-endian 16-bit value. */
#define MPA_WORD_A    0x8000 /* first half: peer-to-peer */
#define MPA_WORD_B    0x4000 /* first half: zero-length Send RTR */
#define MPA_WORD_C    0x8000 /* second half: zero-length RDMA Write RTR */
#define MPA_WORD_D    0x4000 /* second half: zero-length RDMA Read RTR */
#define MPA_WORD_MASK 0x3FFF /* IRD / ORD */

static const uint8_t mpa_key_req[MPA_KEY_LEN] = "MPA ID Req Frame";
static const uint8_t mpa_key_rep[MPA_KEY_LEN] = "MPA ID Rep Frame";

size_t mpa_frame_len(const struct mpa_frame *f)
{
	return MPA_FRAME_HDR_LEN + (f->enhanced ? MPA_IRD_ORD_LEN : 0) + (size_t)f->pd_len;
}

static bool mpa_frame_sendable(const struct mpa_frame *f)
{
	size_t pd_total = (size_t)f->pd_len + (f->enhanced ? MPA_IRD_ORD_LEN : 0);

	if (f->rev != MPA_REV1 && f->rev != MPA_REV2)
		return false;
	/* S is a reserved bit in revision 1 (RFC 6581 §6). */
	if (f->enhanced && f->rev != MPA_REV2)
		return false;
	/* R "MUST be set to zero" in a Request (RFC 5044 §7.1.1). */
	if (f->reject && !f->reply)
		return false;
	if (pd_total > MPA_PD_MAX)
		return false;
	if (f->pd_len && !f->pd)
		return false;
	if (f->enhanced &&
	    (f->ird > MPA_IRD_ORD_MAX || f->ord > MPA_IRD_ORD_MAX || (f->rtr & ~MPA_RTR_ALL)))
		return false;
	return true;
}

ssize_t mpa_frame_encode(const struct mpa_frame *f, uint8_t *buf, size_t cap)
{
	size_t len;
	uint8_t flags = 0;
	uint8_t *p;

	if (!f || !mpa_frame_sendable(f))
		return IW_EINVAL;
	len = mpa_frame_len(f);
	if (!buf || cap < len)
		return IW_ENOSPC;

	memcpy(buf, f->reply ? mpa_key_rep : mpa_key_req, MPA_KEY_LEN);
	if (f->markers)
		flags |= MPA_FLAG_M;
	if (f->crc)
		flags |= MPA_FLAG_C;
	if (f->reject)
		flags |= MPA_FLAG_R;
	if (f->enhanced)
		flags |= MPA_FLAG_S;
	/* Reserved bits are always sent as zero. */
	buf[MPA_OFF_FLAGS] = flags;
	buf[MPA_OFF_REV] = f->rev;
	iw_put_be16(buf + MPA_OFF_PDLEN, (uint16_t)(len - MPA_FRAME_HDR_LEN));
	p = buf + MPA_FRAME_HDR_LEN;
	if (f->enhanced) {
		uint16_t w1 = f->ird, w2 = f->ord;

		if (f->p2p)
			w1 |= MPA_WORD_A;
		if (f->rtr & MPA_RTR_SEND)
			w1 |= MPA_WORD_B;
		if (f->rtr & MPA_RTR_WRITE)
			w2 |= MPA_WORD_C;
		if (f->rtr & MPA_RTR_READ)
			w2 |= MPA_WORD_D;
		iw_put_be16(p, w1);
		iw_put_be16(p + 2, w2);
		p += MPA_IRD_ORD_LEN;
	}
	if (f->pd_len)
		memcpy(p, f->pd, f->pd_len);
	return (ssize_t)len;
}

ssize_t mpa_frame_decode(const uint8_t *buf, size_t len, bool want_reply, struct mpa_frame *f)
{
	const uint8_t *key = want_reply ? mpa_key_rep : mpa_key_req;
	struct mpa_frame d;
	uint8_t flags, rev;
	uint16_t pdlen;

	if (!f || (!buf && len))
		return IW_EINVAL;
	/* Compare whatever part of the key has arrived: a peer speaking another
	 * protocol (or an Initiator receiving a Request) is caught at once. */
	if (len && memcmp(buf, key, IW_MIN(len, (size_t)MPA_KEY_LEN)) != 0)
		return IW_EMPA_KEY;
	if (len <= MPA_OFF_REV)
		return IW_EAGAIN;
	/* Revision 0 (pre-IETF MPA) and anything above 2 are not understood:
	 * RFC 5044 §7.1.1 says to close the connection (improperly formatted). */
	rev = buf[MPA_OFF_REV];
	if (rev != MPA_REV1 && rev != MPA_REV2)
		return IW_EMPA_REV;
	if (len < MPA_FRAME_HDR_LEN)
		return IW_EAGAIN;

	flags = buf[MPA_OFF_FLAGS];
	pdlen = iw_get_be16(buf + MPA_OFF_PDLEN);
	memset(&d, 0, sizeof(d));
	d.reply = want_reply;
	d.markers = flags & MPA_FLAG_M;
	d.crc = flags & MPA_FLAG_C;
	/* R is "send 0, do not check" in a Request. */
	d.reject = want_reply && (flags & MPA_FLAG_R);
	/* In revision 1 the S position is part of Res: ignored. */
	d.enhanced = rev == MPA_REV2 && (flags & MPA_FLAG_S);
	d.rev = rev;

	if (pdlen > MPA_PD_MAX)
		return IW_EMPA_PDLEN;
	if (d.enhanced && pdlen < MPA_IRD_ORD_LEN)
		return IW_EMPA_PDLEN;
	if (len - MPA_FRAME_HDR_LEN < pdlen)
		return IW_EAGAIN;

	d.pd = buf + MPA_FRAME_HDR_LEN;
	d.pd_len = pdlen;
	if (d.enhanced) {
		uint16_t w1 = iw_get_be16(d.pd), w2 = iw_get_be16(d.pd + 2);

		d.p2p = w1 & MPA_WORD_A;
		if (w1 & MPA_WORD_B)
			d.rtr |= MPA_RTR_SEND;
		if (w2 & MPA_WORD_C)
			d.rtr |= MPA_RTR_WRITE;
		if (w2 & MPA_WORD_D)
			d.rtr |= MPA_RTR_READ;
		d.ird = w1 & MPA_WORD_MASK;
		d.ord = w2 & MPA_WORD_MASK;
		d.pd += MPA_IRD_ORD_LEN;
		d.pd_len -= MPA_IRD_ORD_LEN;
	}
	*f = d;
	return (ssize_t)(MPA_FRAME_HDR_LEN + pdlen);
}
