/* SPDX-License-Identifier: MIT */
/*
 * ddp_hdr.c - DDP tagged and untagged headers (RFC 5041 §4).
 *
 * Theory of operation.  Every DDP segment opens with a control octet
 * (T, L, 4 reserved bits, 2-bit DV; RFC 5041 §4.1) and one octet of RsvdULP
 * that belongs to the ULP (RDMAP puts its own control octet there).  The T
 * bit picks the rest of the header: a tagged header (§4.2, 14 octets) names
 * the Data Sink's buffer by STag and Tagged Offset; an untagged header (§4.3,
 * 18 octets) carries 32 more RsvdULP bits, the Queue Number, the Message
 * Sequence Number and the Message Offset.  All fields are big-endian.
 *
 * Decoding is incremental-friendly: one octet tells the header length, and
 * until the whole header is present the answer is IW_EAGAIN, so a caller can
 * feed a growing prefix.  A wrong DDP version is a peer error (§7.2: tagged
 * 0x1/0x04, untagged 0x2/0x06); the header is still decoded so the caller can
 * copy it into the Terminate.  Reserved bits are sent as zero and never
 * checked on receipt (§4.1), so a future use of them does not break us.
 */
#include <iwarp/ddp.h>

#include "iw_cursor.h"

ssize_t ddp_hdr_encode(const struct ddp_hdr *h, uint8_t *buf, size_t cap)
{
	struct iw_cursor c;
	uint8_t ctrl = DDP_VERSION;

	if (!h || (!buf && cap))
		return IW_EINVAL;
	if (h->tagged)
		ctrl |= DDP_CTRL_T;
	if (h->last)
		ctrl |= DDP_CTRL_L;

	iw_cursor_init(&c, buf, cap);
	iw_cursor_put8(&c, ctrl);
	iw_cursor_put8(&c, h->rsvdulp);
	if (h->tagged) {
		iw_cursor_put_be32(&c, h->stag);
		iw_cursor_put_be64(&c, h->to);
	} else {
		iw_cursor_put_be32(&c, h->rsvdulp2);
		iw_cursor_put_be32(&c, h->qn);
		iw_cursor_put_be32(&c, h->msn);
		iw_cursor_put_be32(&c, h->mo);
	}
	if (c.err)
		return c.err;
	return (ssize_t)c.off;
}

ssize_t ddp_hdr_decode(const uint8_t *buf, size_t len, struct ddp_hdr *h)
{
	struct iw_cursor c;
	uint8_t ctrl;

	if (!h || (!buf && len))
		return IW_EINVAL;
	/* The first octet decides the header length; without it nothing is known. */
	if (len < 1 || len < ddp_hdr_len((buf[0] & DDP_CTRL_T) != 0))
		return IW_EAGAIN;

	iw_cursor_init(&c, buf, len);
	ctrl = iw_cursor_get8(&c);
	*h = (struct ddp_hdr){
		.tagged = (ctrl & DDP_CTRL_T) != 0,
		.last = (ctrl & DDP_CTRL_L) != 0,
		.dv = ctrl & DDP_CTRL_DV,
	};
	h->rsvdulp = iw_cursor_get8(&c);
	if (h->tagged) {
		h->stag = iw_cursor_get_be32(&c);
		h->to = iw_cursor_get_be64(&c);
	} else {
		h->rsvdulp2 = iw_cursor_get_be32(&c);
		h->qn = iw_cursor_get_be32(&c);
		h->msn = iw_cursor_get_be32(&c);
		h->mo = iw_cursor_get_be32(&c);
	}
	if (c.err) /* cannot happen after the length check; kept as a guard */
		return c.err;

	/* §4.1: DV must be 1; the error code depends on the model (§7.2). */
	if (h->dv != DDP_VERSION)
		return h->tagged ? IW_EDDP_T_VERSION : IW_EDDP_U_VERSION;
	return (ssize_t)c.off;
}
