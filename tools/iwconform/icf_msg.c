/* SPDX-License-Identifier: MIT */
/*
 * icf_msg.c - building the messages of a case and watching the peer's
 * reaction (icf.h), for every runner of either role.
 *
 * The segments are built field by field (RFC 5041 §4.2 tagged, §4.3
 * untagged; the RDMAP control octet of RFC 5040 §4.2 in RsvdULP) so that a
 * case can spoil any field before the segment is framed.  The watch after a
 * violation is the same in both roles: a short pause for the peer to react,
 * then, if it has not, the next normal step of the exchange (icf_flow_next
 * and friends), so that a peer that let the violation through shows it by
 * carrying on instead of only by silence; then the Terminate, the close or
 * the timeout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "iw_bytes.h"

#include "icf.h"

size_t icf_untagged(uint8_t *b, uint8_t ctrl, uint32_t qn, uint32_t msn, uint32_t mo, bool last,
		    uint32_t inv, const void *rdmap, size_t rlen, const void *pl, size_t plen)
{
	struct ddp_hdr h = {.tagged = false,
			    .last = last,
			    .rsvdulp = ctrl,
			    .rsvdulp2 = inv,
			    .qn = qn,
			    .msn = msn,
			    .mo = mo};
	size_t n = (size_t)ddp_hdr_encode(&h, b, DDP_UNTAGGED_HDR_LEN);

	if (rlen)
		memcpy(b + n, rdmap, rlen);
	n += rlen;
	if (plen && pl)
		memcpy(b + n, pl, plen);
	else if (plen)
		memset(b + n, 0x61, plen);
	return n + plen;
}

size_t icf_tagged(uint8_t *b, uint8_t ctrl, uint32_t stag, uint64_t to, bool last, const void *pl,
		  size_t plen)
{
	struct ddp_hdr h = {.tagged = true, .last = last, .rsvdulp = ctrl, .stag = stag, .to = to};
	size_t n = (size_t)ddp_hdr_encode(&h, b, DDP_TAGGED_HDR_LEN);

	if (plen && pl)
		memcpy(b + n, pl, plen);
	else if (plen)
		memset(b + n, 0x62, plen);
	return n + plen;
}

void icf_info(uint8_t *p, uint64_t to, uint32_t stag, uint32_t size)
{
	iw_put_be64(p, to);
	iw_put_be32(p + 8, stag);
	iw_put_be32(p + 12, size);
}

void icf_ping_data(uint8_t *p, size_t n)
{
	size_t k = (size_t)snprintf((char *)p, n, "rdma-ping-0: ");

	for (size_t i = k; i < n; i++)
		p[i] = (uint8_t)('A' + (i - k) % 58);
	p[n - 1] = 0;
}

void icf_errant(struct icf_obs *o, const uint8_t *u, size_t len)
{
	bool t = u[0] & DDP_CTRL_T;

	o->sent_ddp_len = t ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
	if (len < o->sent_ddp_len)
		o->sent_ddp_len = (uint8_t)len;
	memcpy(o->sent_ddp, u, o->sent_ddp_len);
	o->sent_seg_len = (uint16_t)len;
	if (!t && len >= DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)
		memcpy(o->sent_rreq, u + DDP_UNTAGGED_HDR_LEN, RDMAP_READ_REQ_LEN);
}

int icf_send_ulpdu(struct icf_ep *ep, const uint8_t *u, size_t n)
{
	return icf_ep_send_fpdu(ep, u, n, ICF_MANGLE_NONE, 0);
}

int icf_send_msg(struct icf_ep *ep, uint8_t op, const void *pl, size_t n)
{
	static uint8_t b[DDP_UNTAGGED_HDR_LEN + 4096];

	if (n > 4096)
		return -1;
	return icf_send_ulpdu(ep, b,
			      icf_untagged(b, rdmap_ctrl_make(op), DDP_QN_SEND,
					   ep->msn[DDP_QN_SEND]++, 0, true, 0, NULL, 0, pl, n));
}

int icf_send_read_req(struct icf_ep *ep, const struct rdmap_read_req *r)
{
	uint8_t b[DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN], hdr[RDMAP_READ_REQ_LEN];

	rdmap_read_req_encode(r, hdr);
	return icf_send_ulpdu(ep, b,
			      icf_untagged(b, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
					   ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr,
					   RDMAP_READ_REQ_LEN, NULL, 0));
}

int icf_tmo(const struct icf_case *c, const struct icf_ctx *x)
{
	return c->timeout_ms > x->timeout_ms ? c->timeout_ms : x->timeout_ms;
}

void icf_note_reply(struct icf_ep *ep, struct icf_obs *o)
{
	o->reply = ep->have_reply;
	o->reject = ep->have_reply && ep->reply.reject;
	o->reply_m = ep->have_reply && ep->reply.markers;
	o->reply_bad = !ep->have_reply && ep->reply_err != 0;
}

int icf_expect_msg(struct icf_ep *ep, struct icf_obs *o, uint8_t opcode, int timeout_ms,
		   struct icf_msg *m)
{
	while (icf_ep_next(ep, m, timeout_ms)) {
		if (m->opcode == opcode)
			return 1;
		if (m->opcode == RDMAP_OP_TERMINATE) {
			o->term = true;
			o->tm = m->term;
			return 0;
		}
		/* a zero-length Read Response answers a Read RTR: not ours to judge */
		if (m->opcode == RDMAP_OP_READ_RESP && m->len == 0)
			continue;
		snprintf(o->why, sizeof(o->why), "unexpected %s from the peer",
			 iwd_opcode_name(m->opcode));
		return 0;
	}
	if (!o->why[0])
		snprintf(o->why, sizeof(o->why), "no %s from the peer%s", iwd_opcode_name(opcode),
			 ep->eof ? " (closed)" : " in time");
	return 0;
}

int icf_send_read_resp(struct icf_ep *ep, const struct rdmap_read_req *r)
{
	static uint8_t b[DDP_TAGGED_HDR_LEN + 4096], pl[4096];
	size_t n = r->size < sizeof(pl) ? r->size : sizeof(pl);

	icf_ping_data(pl, n ? n : 1);
	return icf_send_ulpdu(ep, b,
			      icf_tagged(b, rdmap_ctrl_make(RDMAP_OP_READ_RESP), r->sink_stag,
					 r->sink_to, true, pl, n));
}

static void follow_step(const struct icf_ctx *x, struct icf_ep *ep, enum icf_follow follow,
			const struct rdmap_read_req *rr)
{
	switch (follow) {
	case ICF_FOLLOW_NONE:
		break;
	case ICF_FOLLOW_READ_RESP:
		if (x->role == ICF_ROLE_CLIENT && x->profile == ICF_PROFILE_RPING) {
			if (rr)
				icf_send_read_resp(ep, rr);
			break;
		}
		icf_flow_next(x, ep);
		break;
	case ICF_FOLLOW_NEXT:
		icf_flow_next(x, ep);
		break;
	case ICF_FOLLOW_GO:
		icf_srv_go(ep, RDMAP_OP_SEND, 1);
		break;
	}
}

void icf_watch(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
	       struct icf_obs *o, enum icf_follow follow, const struct rdmap_read_req *rr,
	       unsigned tolerate)
{
	struct icf_msg m;
	int t = icf_tmo(c, x);

	icf_ep_pump(ep, ICF_REACT_MS);
	if (!ep->qlen && !ep->eof)
		follow_step(x, ep, follow, rr);
	while (icf_ep_next(ep, &m, t)) {
		if (m.opcode == RDMAP_OP_TERMINATE) {
			bool more = false;

			o->term = true;
			o->tm = m.term;
			icf_ep_wait_close(ep, t, &more);
			o->after_term = more;
			break;
		}
		if (tolerate & (1u << m.opcode))
			continue;
		o->carried_on = true;
		snprintf(o->carried_what, sizeof(o->carried_what), "%s (len %u) after it",
			 iwd_opcode_name(m.opcode), m.len);
		break;
	}
	o->closed = ep->eof;
	o->reset = ep->rst;
}
