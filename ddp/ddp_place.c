/* SPDX-License-Identifier: MIT */
/*
 * ddp_place.c - receive-side placement checks (RFC 5041 §5.2, §7.1, §7.2).
 *
 * Theory of operation.  DDP places a segment's payload straight into its
 * final buffer, so the target must be resolved and validated from the header
 * alone, before the payload is read off the stream.  These functions only
 * decide; they never touch payload memory.
 *
 * Tagged: the STag/TO range [TO, TO + payload) is checked against the STag
 * table (ddp_stag.c) and each check result is mapped to its Terminate code of
 * RFC 5041 §7.2 (error type 0x1).  Zero-length segments are not checked at all
 * (RFC 5041 §5.2: their STag and TO may be anything, e.g. a zero-length RDMA
 * Write).
 *
 * Untagged: each queue holds the MSN of the message being received and how
 * many octets of it have been placed.  The LLP is in-order TCP (via MPA), so
 * segments of one message arrive in MO order and messages arrive in MSN
 * order: any other MSN is a skipped, repeated or interleaved message
 * (IW_EDDP_U_MSN_RANGE), and an MO that does not continue the message is
 * invalid (IW_EDDP_U_MO).  All sums are done in 64 bits so a peer's MO and
 * length cannot wrap past the buffer check.
 */
#include <iwarp/ddp.h>

static int tagged_err(enum ddp_stag_check r)
{
	switch (r) {
	case DDP_STAG_OK:
		return IW_OK;
	case DDP_STAG_PD:
	case DDP_STAG_STREAM:
		return IW_EDDP_T_STREAM;
	case DDP_STAG_BOUNDS:
		return IW_EDDP_T_BOUNDS;
	case DDP_STAG_WRAP:
		return IW_EDDP_T_TO_WRAP;
	case DDP_STAG_ACCESS:
		/* No DDP code for access rights: RDMAP reports it from *why (RFC 5040 §7.2). */
	case DDP_STAG_INVALID:
	default:
		return IW_EDDP_T_INVALID_STAG;
	}
}

int ddp_tagged_check(const struct ddp_stag_table *t, const struct ddp_hdr *h, uint32_t pd,
		     uint32_t access, uint32_t payload_len, void **dst, enum ddp_stag_check *why)
{
	enum ddp_stag_check r;
	void *p = NULL;

	if (!t || !h || !h->tagged)
		return IW_EINVAL;
	/* 0 means the default right of a tagged segment: an RDMA Write into the buffer. */
	if (access == 0)
		access = DDP_ACCESS_REMOTE_WRITE;
	if (payload_len == 0)
		r = DDP_STAG_OK;
	else
		r = ddp_stag_check(t, h->stag, pd, access, h->to, payload_len, &p);
	if (why)
		*why = r;
	if (dst)
		*dst = r == DDP_STAG_OK ? p : NULL;
	return tagged_err(r);
}

int ddp_tagged_resolve(const struct ddp_stag_table *t, const struct ddp_hdr *h, uint32_t pd,
		       uint32_t stream, uint32_t access, uint32_t payload_len,
		       struct ddp_stag_ref *ref, enum ddp_stag_check *why)
{
	enum ddp_stag_check r;
	struct ddp_stag_ref z = {0};

	if (!t || !h || !h->tagged)
		return IW_EINVAL;
	if (access == 0)
		access = DDP_ACCESS_REMOTE_WRITE;
	if (payload_len == 0)
		r = DDP_STAG_OK;
	else
		r = ddp_stag_resolve(t, h->stag, pd, stream, access, h->to, payload_len, &z);
	if (why)
		*why = r;
	if (ref)
		*ref = r == DDP_STAG_OK ? z : (struct ddp_stag_ref){0};
	return tagged_err(r);
}

void ddp_untagged_queue_init(struct ddp_untagged_queue *q)
{
	q->msn = DDP_MSN_FIRST;
	q->placed = 0;
	q->in_message = false;
}

int ddp_untagged_check(const struct ddp_untagged_queue *q, const struct ddp_hdr *h,
		       uint32_t nqueues, int64_t buf_len, uint32_t payload_len)
{
	uint64_t end;

	if (!q || !h || h->tagged)
		return IW_EINVAL;
	if (h->qn >= nqueues)
		return IW_EDDP_U_QN;
	if (h->msn != q->msn)
		return IW_EDDP_U_MSN_RANGE;
	if (buf_len < 0)
		return IW_EDDP_U_NO_BUFFER;
	if (h->mo != q->placed)
		return IW_EDDP_U_MO;
	end = (uint64_t)h->mo + payload_len;
	if (end > (uint64_t)buf_len)
		return IW_EDDP_U_TOO_LONG;
	/* A message continues only while the next MO fits the 32-bit field. */
	if (!h->last && end > UINT32_MAX)
		return IW_EDDP_U_TOO_LONG;
	return IW_OK;
}

bool ddp_untagged_advance(struct ddp_untagged_queue *q, const struct ddp_hdr *h,
			  uint32_t payload_len)
{
	if (!q || !h)
		return false;
	q->placed += payload_len;
	q->in_message = !h->last;
	if (!h->last)
		return false;
	q->msn++; /* unsigned: 0xFFFFFFFF wraps to 0 (MSN is modulo 2^32, RFC 5041 §4.3) */
	q->placed = 0;
	return true;
}
