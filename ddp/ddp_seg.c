/* SPDX-License-Identifier: MIT */
/*
 * ddp_seg.c - splitting one DDP message into segments (RFC 5041 §5.2).
 *
 * Theory of operation.  A DDP segment - header plus payload - must fit in
 * the LLP's MULPDU (§5.2), so each segment carries at most MULPDU minus the
 * header length (14 tagged, 18 untagged) payload octets.  All segments of a
 * message carry the same RsvdULP and the same STag (tagged) or QN and MSN
 * (untagged).  The position of a segment's first payload octet is TO =
 * initial TO + offset (tagged) or MO = offset (untagged), and only the final
 * segment has L set.  A zero-length message still produces exactly one
 * segment, with L set (§5.2).
 *
 * The segmenter is an iterator over offsets: it moves no data, so the caller
 * can copy or gather each payload range straight from the user's buffer.
 * Tagged Offsets are added modulo 2^64 without complaint: keeping [TO, TO +
 * length) inside the advertised buffer is the sender's (RDMAP's) job, and a
 * wrap is reported by the receiver as a TO-wrap error (§7.2, 0x1/0x03).
 */
#include <iwarp/ddp.h>

#include "iw_bytes.h"

int ddp_seg_init(struct ddp_seg *s, const struct ddp_hdr *tmpl, uint32_t msg_len, uint32_t mulpdu)
{
	size_t hlen;

	if (!s || !tmpl)
		return IW_EINVAL;
	hlen = ddp_hdr_len(tmpl->tagged);
	/* Every segment must make progress: at least one payload octet per MULPDU. */
	if (mulpdu <= hlen)
		return IW_EINVAL;

	s->tmpl = *tmpl;
	s->tmpl.dv = DDP_VERSION;
	s->msg_len = msg_len;
	s->off = 0;
	s->max_payload = mulpdu - (uint32_t)hlen;
	s->done = false;
	return IW_OK;
}

bool ddp_seg_next(struct ddp_seg *s, struct ddp_hdr *h, uint32_t *off, uint32_t *len)
{
	uint32_t n;

	if (!s || s->done)
		return false;

	n = IW_MIN(s->msg_len - s->off, s->max_payload);
	*h = s->tmpl;
	if (h->tagged)
		h->to = s->tmpl.to + s->off;
	else
		h->mo = s->off;
	h->last = s->off + n == s->msg_len;
	*off = s->off;
	*len = n;

	s->off += n;
	s->done = h->last;
	return true;
}
