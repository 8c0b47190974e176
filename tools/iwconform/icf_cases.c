/* SPDX-License-Identifier: MIT */
/*
 * icf_cases.c - iwconform's catalogue (icf.h).
 *
 * Every case runs on a new TCP connection to the peer's rping server and
 * plays rping's client (tools/iwping.c's header comment) as far as the case
 * needs:
 *
 *   MPA Request --------------------------->  (the case may spoil it: stage MPA)
 *               <------------------------  MPA Reply
 *   Send info{our source buffer} ---------->  (or the violation: stage FIRST)
 *               <------------------------  RDMA Read Request: the peer's sink
 *                                           STag and TO (registered for remote
 *                                           read and write by rping)
 *   RDMA Read Response -------------------->  (or the violation: stage AFTER)
 *               <------------------------  Send "go ahead"
 *
 * The violation replaces the step it is built from, then a short pause lets
 * the peer react; if it has not, the normal step follows, so that a peer
 * that let the violation through shows it by carrying on (a Read Request, a
 * go-ahead) instead of only by silence.  The reaction is then watched until
 * the Terminate, the close or the timeout, and graded (icf_grade.c).
 *
 * Expected codes: RFC 5040 §4.8 (RDMAP, Layer 0), RFC 5041 §7.2 (DDP,
 * Layer 1), RFC 5044 §8 / RFC 6581 §8 (MPA, Layer 2); the header copies of
 * RFC 5040 figure 10; startup-frame rules of RFC 5044 §7.1.1, §7.1.2 and
 * RFC 6581 §9.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iw_bytes.h"

#include "icf.h"

/* The buffers we advertise: invented STags, never registered anywhere. */
#define OUR_SRC_STAG  0x00C0FF01u
#define OUR_SRC_TO    0x00007F0000001000ull
#define OUR_SINK_STAG 0x00C0FF02u
#define OUR_SINK_TO   0x00007F0000002000ull
#define PING_SIZE     64u
#define INFO_LEN      16u /* rping's struct rping_rdma_info */
#define BOGUS_STAG    0x5A5A5A00u
#define FAR	      0x1000000ull /* 16 MiB: beyond any rping buffer */
#define REACT_MS      150	   /* pause before the follow-up step */

/* ---------------------------------------------------------------------- */
/* Building messages                                                        */
/* ---------------------------------------------------------------------- */

static size_t untagged(uint8_t *b, uint8_t ctrl, uint32_t qn, uint32_t msn, uint32_t mo, bool last,
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

static size_t tagged(uint8_t *b, uint8_t ctrl, uint32_t stag, uint64_t to, bool last,
		     const void *pl, size_t plen)
{
	struct ddp_hdr h = {.tagged = true, .last = last, .rsvdulp = ctrl, .stag = stag, .to = to};
	size_t n = (size_t)ddp_hdr_encode(&h, b, DDP_TAGGED_HDR_LEN);

	if (plen && pl)
		memcpy(b + n, pl, plen);
	else if (plen)
		memset(b + n, 0x62, plen);
	return n + plen;
}

static void info(uint8_t *p, uint64_t to, uint32_t stag, uint32_t size)
{
	iw_put_be64(p, to);
	iw_put_be32(p + 8, stag);
	iw_put_be32(p + 12, size);
}

/* rping's ping text: "rdma-ping-0: " then letters, NUL last. */
static void ping_data(uint8_t *p, size_t n)
{
	size_t k = (size_t)snprintf((char *)p, n, "rdma-ping-0: ");

	for (size_t i = k; i < n; i++)
		p[i] = (uint8_t)('A' + (i - k) % 58);
	p[n - 1] = 0;
}

/* Remember the errant segment for the header copies (RFC 5040 §4.8). */
static void errant(struct icf_obs *o, const uint8_t *u, size_t len)
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

/* ---------------------------------------------------------------------- */
/* The rping client, step by step                                           */
/* ---------------------------------------------------------------------- */

static void std_request(const struct icf_ctx *x, struct mpa_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->rev = MPA_REV2;
	f->crc = true;
	f->enhanced = true;
	/* rping asks IRD = ORD = 1; perftest's read tests ask 16 */
	f->ird = f->ord = x->profile == ICF_PROFILE_PERFTEST ? 16 : 1;
}

static int tmo(const struct icf_case *c, const struct icf_ctx *x)
{
	return c->timeout_ms > x->timeout_ms ? c->timeout_ms : x->timeout_ms;
}

static void note_reply(struct icf_ep *ep, struct icf_obs *o)
{
	o->reply = ep->have_reply;
	o->reject = ep->have_reply && ep->reply.reject;
	o->reply_m = ep->have_reply && ep->reply.markers;
	o->reply_bad = !ep->have_reply && ep->reply_err != 0;
}

/* Send a Request (raw octets) and wait for the Reply.  1 when accepted. */
static int startup(const struct icf_ctx *x, struct icf_ep *ep, struct icf_obs *o,
		   const uint8_t *req, size_t len, int timeout_ms)
{
	if (icf_ep_send_raw(ep, req, len) < 0)
		snprintf(o->why, sizeof(o->why), "send: %s", strerror(ep->err));
	icf_ep_wait_reply(ep, timeout_ms);
	note_reply(ep, o);
	(void)x;
	if (!ep->have_reply || ep->reply.reject)
		return 0;
	icf_ep_start(ep);
	return 1;
}

/* The standard Request; a peer that does not take it skips the case. */
static int handshake(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		     struct icf_obs *o)
{
	struct mpa_frame f;
	uint8_t b[MPA_FRAME_MAX_LEN];
	ssize_t n;

	std_request(x, &f);
	n = mpa_frame_encode(&f, b, sizeof(b));
	if (n > 0 && startup(x, ep, o, b, (size_t)n, tmo(c, x))) {
		o->full = true;
		return 1;
	}
	o->skipped = true;
	snprintf(o->why, sizeof(o->why), "the peer did not accept the standard MPA Request (%s)",
		 ep->have_reply ? "rejected"
		 : ep->eof	? "closed"
				: "no Reply");
	return 0;
}

static int send_ulpdu(struct icf_ep *ep, const uint8_t *u, size_t n)
{
	return icf_ep_send_fpdu(ep, u, n, ICF_MANGLE_NONE, 0);
}

static int send_info(struct icf_ep *ep, uint64_t to, uint32_t stag)
{
	uint8_t b[64], pl[INFO_LEN];

	info(pl, to, stag, PING_SIZE);
	return send_ulpdu(ep, b,
			  untagged(b, rdmap_ctrl_make(RDMAP_OP_SEND), DDP_QN_SEND,
				   ep->msn[DDP_QN_SEND]++, 0, true, 0, NULL, 0, pl, INFO_LEN));
}

/* Take the peer's messages until one with `opcode`; a Terminate or anything
 * else unexpected is recorded.  1 found (in *m), 0 not. */
static int expect_msg(struct icf_ep *ep, struct icf_obs *o, uint8_t opcode, int timeout_ms,
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

static int send_read_resp(struct icf_ep *ep, const struct rdmap_read_req *r)
{
	static uint8_t b[DDP_TAGGED_HDR_LEN + 4096], pl[4096];
	size_t n = r->size < sizeof(pl) ? r->size : sizeof(pl);

	ping_data(pl, n ? n : 1);
	return send_ulpdu(ep, b,
			  tagged(b, rdmap_ctrl_make(RDMAP_OP_READ_RESP), r->sink_stag, r->sink_to,
				 true, pl, n));
}

/* Info Send, the peer's Read Request.  1 when it came (in *rr). */
static int ping_read(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		     struct icf_obs *o, struct icf_msg *rr)
{
	if (send_info(ep, OUR_SRC_TO, OUR_SRC_STAG) < 0)
		return 0;
	return expect_msg(ep, o, RDMAP_OP_READ_REQ, tmo(c, x), rr);
}

/* The rest of the first half of a ping: Read Response, the go-ahead. */
static int ping_finish(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		       struct icf_obs *o, const struct icf_msg *rr)
{
	struct icf_msg m;

	if (send_read_resp(ep, &rr->rreq) < 0)
		return 0;
	return expect_msg(ep, o, RDMAP_OP_SEND, tmo(c, x), &m);
}

static int ping(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		struct icf_obs *o)
{
	struct icf_msg rr;

	if (!ping_read(c, x, ep, o, &rr))
		return 0;
	return ping_finish(c, x, ep, o, &rr);
}

/* ---------------------------------------------------------------------- */
/* Watching the reaction                                                    */
/* ---------------------------------------------------------------------- */

enum follow { FOLLOW_NONE, FOLLOW_INFO, FOLLOW_READ_RESP };

/*
 * After the violation: give the peer REACT_MS, then the follow-up step, then
 * watch until a Terminate (and the close after it), a close, or the timeout.
 * Messages with an opcode in `tolerate` (a bit per opcode) are in flight
 * legitimately; any other is the peer carrying on.
 */
static void watch(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		  struct icf_obs *o, enum follow follow, const struct rdmap_read_req *rr,
		  unsigned tolerate)
{
	struct icf_msg m;
	int t = tmo(c, x);

	icf_ep_pump(ep, REACT_MS);
	if (!ep->qlen && !ep->eof) {
		if (follow == FOLLOW_INFO)
			send_info(ep, OUR_SRC_TO, OUR_SRC_STAG);
		else if (follow == FOLLOW_READ_RESP && rr)
			send_read_resp(ep, rr);
	}
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

/* ---------------------------------------------------------------------- */
/* Stage MPA: the Request itself                                            */
/* ---------------------------------------------------------------------- */

enum {
	M_REV1,
	M_REV2,
	M_REV2_NOS,
	M_CRC_OFF,
	M_MARKERS,
	M_P2P_SEND,
	M_P2P_WRITE,
	M_P2P_READ,
	M_IRD0,
	M_ORD0,
	M_IRD_ORD_MAX,
	M_PD512,
	M_PD508_S,
	M_PD513,
	M_KEY_BAD,
	M_KEY_REPLY,
	M_REV0,
	M_REV3,
	M_S_REV1,
	M_RSVD,
	M_R_REQ,
	M_S_SHORT,
	M_TRUNC,
	M_NONE,
	M_EARLY,
	M_MARKERS_NOCRC,
};

#define FLAG_OCTET  16
#define REV_OCTET   17
#define PDLEN_OCTET 18

static void run_mpa(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		    struct icf_obs *o)
{
	static uint8_t pd[MPA_PD_MAX + 1];
	uint8_t b[MPA_FRAME_MAX_LEN + 8 + 64];
	struct mpa_frame f;
	ssize_t n;
	int t = tmo(c, x);
	uint8_t rtr = MPA_RTR_NONE;

	std_request(x, &f);
	memset(pd, 0x70, sizeof(pd));
	switch (c->arg) {
	case M_REV1:
	case M_S_REV1:
	case M_REV0:
	case M_PD512:
	case M_PD513:
		f.rev = MPA_REV1;
		f.enhanced = false;
		break;
	case M_REV2_NOS:
		f.enhanced = false;
		break;
	case M_CRC_OFF:
		f.crc = false;
		break;
	case M_MARKERS:
		f.markers = true;
		break;
	case M_MARKERS_NOCRC:
		f.markers = true;
		f.crc = false;
		break;
	case M_P2P_SEND:
	case M_P2P_WRITE:
	case M_P2P_READ:
		f.p2p = true;
		rtr = c->arg == M_P2P_SEND    ? MPA_RTR_SEND
		      : c->arg == M_P2P_WRITE ? MPA_RTR_WRITE
					      : MPA_RTR_READ;
		f.rtr = rtr;
		break;
	case M_IRD0:
		f.ird = 0;
		break;
	case M_ORD0:
		f.ord = 0;
		break;
	case M_IRD_ORD_MAX:
		f.ird = f.ord = MPA_IRD_ORD_MAX;
		break;
	default:
		break;
	}
	if (c->arg == M_PD512) {
		f.pd = pd;
		f.pd_len = MPA_PD_MAX;
	} else if (c->arg == M_PD508_S) {
		f.pd = pd;
		f.pd_len = MPA_PD_MAX - MPA_IRD_ORD_LEN;
	}
	if (c->arg == M_PD513) {
		f.pd_len = 0;
		n = mpa_frame_encode(&f, b, sizeof(b));
		iw_put_be16(b + PDLEN_OCTET, MPA_PD_MAX + 1);
		memcpy(b + n, pd, MPA_PD_MAX + 1);
		n += MPA_PD_MAX + 1;
	} else {
		n = mpa_frame_encode(&f, b, sizeof(b));
	}
	if (n < 0) {
		o->skipped = true;
		snprintf(o->why, sizeof(o->why), "cannot encode the Request");
		return;
	}
	switch (c->arg) {
	case M_KEY_BAD:
		b[7] = 'X'; /* "MPA ID Xeq Frame" */
		break;
	case M_KEY_REPLY:
		memcpy(b, "MPA ID Rep Frame", MPA_KEY_LEN);
		break;
	case M_REV0:
		b[REV_OCTET] = 0;
		break;
	case M_REV3:
		b[REV_OCTET] = 3;
		break;
	case M_S_REV1:
		b[FLAG_OCTET] |= 0x10; /* S is a reserved bit in revision 1 */
		break;
	case M_RSVD:
		b[FLAG_OCTET] |= 0x0F;
		break;
	case M_R_REQ:
		b[FLAG_OCTET] |= 0x20;
		break;
	case M_S_SHORT:
		/* S with a PD_Length too short for the IRD/ORD word */
		iw_put_be16(b + PDLEN_OCTET, 2);
		n = MPA_FRAME_HDR_LEN + 2;
		break;
	default:
		break;
	}
	if (c->arg == M_NONE) {
		/* RFC 5044 §7.1.2: the Responder times out waiting for the Request */
		o->closed = icf_ep_wait_close(ep, t, NULL);
		note_reply(ep, o);
		o->reset = ep->rst;
		return;
	}
	if (c->arg == M_TRUNC) {
		icf_ep_send_raw(ep, b, 10);
		shutdown(ep->fd, SHUT_WR);
		icf_ep_wait_reply(ep, t);
		note_reply(ep, o);
		o->closed = icf_ep_wait_close(ep, t, NULL);
		o->reset = ep->rst;
		return;
	}
	if (c->arg == M_EARLY) {
		/* an FPDU right behind the Request, before the Reply (RFC 5044
		 * §7.1.2: the Initiator sends FPDUs only once the Reply is in) */
		uint8_t u[64], pl[INFO_LEN];
		size_t k;

		info(pl, OUR_SRC_TO, OUR_SRC_STAG, PING_SIZE);
		k = untagged(u, rdmap_ctrl_make(RDMAP_OP_SEND), DDP_QN_SEND, 1, 0, true, 0, NULL, 0,
			     pl, INFO_LEN);
		static uint8_t both[MPA_FRAME_MAX_LEN + ICF_FPDU_MAX];
		ssize_t m;

		/* one write, so the Responder has the stray octets before it
		 * can have replied */
		mpa_tx_init(&ep->tx, true, false, 0);
		memcpy(both, b, (size_t)n);
		m = icf_ep_frame(ep, u, k, ICF_MANGLE_NONE, 0, both + n);
		if (m > 0)
			icf_ep_send_raw(ep, both, (size_t)n + (size_t)m);
		icf_ep_wait_reply(ep, t);
		note_reply(ep, o);
		watch(c, x, ep, o, FOLLOW_NONE, NULL, 0);
		/* a Reply written before the stray octets were read is no fault
		 * if the peer then closed without acting on them */
		if (o->reply && !o->reject && o->closed && !o->term && !o->carried_on)
			o->reply = false;
		return;
	}
	if (!startup(x, ep, o, b, (size_t)n, t)) {
		if (!o->reply || o->reject)
			o->closed = icf_ep_wait_close(ep, c->exp.kind == ICF_EXP_REJECT ? 200 : t,
						      NULL);
		o->reset = ep->rst;
		return;
	}
	if (c->exp.kind != ICF_EXP_ACCEPT && c->exp.kind != ICF_EXP_ACCEPT_OR_REJECT) {
		/* accepted a Request it had to refuse: see whether it goes on */
		watch(c, x, ep, o, FOLLOW_INFO, NULL, 0);
		return;
	}
	if (c->arg == M_IRD0) {
		/* RFC 6581 §9.1: the Responder's ORD may not exceed our IRD */
		if (ep->reply.enhanced && ep->reply.ord > 0)
			snprintf(o->why, sizeof(o->why), "Reply ORD %u above our IRD 0",
				 ep->reply.ord);
		else
			o->accepted = true;
		return;
	}
	/* M = 1 accepted: Markers flow toward us, and iwd_iwarp removes them */
	if (rtr != MPA_RTR_NONE) {
		uint8_t u[MPA_RTR_READ_LEN];
		ssize_t k;
		uint8_t use = ep->reply.enhanced && ep->reply.p2p ? ep->reply.rtr & rtr : 0;

		if (!use) {
			snprintf(o->why, sizeof(o->why), "Reply without p2p or the RTR offered");
			return;
		}
		k = mpa_rtr_encode((enum mpa_rtr)rtr, u, sizeof(u));
		if (k < 0 || send_ulpdu(ep, u, (size_t)k) < 0)
			return;
		if (rtr == MPA_RTR_SEND)
			ep->msn[DDP_QN_SEND]++;
		if (rtr == MPA_RTR_READ)
			ep->msn[DDP_QN_READ_REQ]++;
	}
	o->accepted = ping(c, x, ep, o) == 1;
	if (!o->accepted)
		o->closed = ep->eof;
}

/* ---------------------------------------------------------------------- */
/* Stage FIRST: the violation is our first FPDU                             */
/* ---------------------------------------------------------------------- */

enum {
	F_CRC_BAD,
	F_CRC_ZERO,
	F_LEN_LONG,
	F_LEN_SHORT,
	F_MARKER_BAD,
	F_U_DV0,
	F_U_DV2,
	F_T_DV2,
	F_U_QN3,
	F_U_QN_BIG,
	F_U_MSN2,
	F_U_MSN_FAR,
	F_U_MSN0,
	F_U_MO,
	F_U_TOO_LONG,
	F_U_SEND_4K,
	F_SHORT_HDR,
	F_T_STAG_BAD,
	F_T_STAG0,
	F_RV0,
	F_RV2,
	F_RV3,
	F_OP_C,
	F_OP_F,
	F_OP_D,
	F_OP_E,
	F_RREQ_QN0,
	F_RREQ_MSN2,
	F_SEND_INV_STAG0,
	F_OP_IMM,
	F_OP_IMM_SE,
	F_OP_ATOMIC_REQ,
	F_OP_ATOMIC_RESP,
	F_SEND_QN1,
	F_WRITE_UNTAGGED,
	F_SEND_TAGGED,
	F_SEND_INV,
	F_SEND_SE_INV,
	F_RREQ_STAG_BAD,
	F_TERM,
	F_RRESP_UNSOLICITED,
};

static void run_first(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		      struct icf_obs *o)
{
	static uint8_t u[8192];
	uint8_t pl[INFO_LEN], hdr[64];
	uint8_t send = rdmap_ctrl_make(RDMAP_OP_SEND);
	enum icf_mangle mangle = ICF_MANGLE_NONE;
	struct rdmap_read_req rq;
	int arg = 0;
	size_t n;

	if (!handshake(c, x, ep, o))
		return;
	info(pl, OUR_SRC_TO, OUR_SRC_STAG, PING_SIZE);
	n = untagged(u, send, DDP_QN_SEND, 1, 0, true, 0, NULL, 0, pl, INFO_LEN);
	switch (c->arg) {
	case F_CRC_BAD:
	case F_CRC_ZERO:
		if (!ep->tx.crc) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why), "CRC not negotiated");
			return;
		}
		mangle = ICF_MANGLE_CRC;
		arg = c->arg == F_CRC_ZERO;
		break;
	case F_LEN_LONG:
		mangle = ICF_MANGLE_LEN;
		arg = 4;
		break;
	case F_LEN_SHORT:
		mangle = ICF_MANGLE_LEN;
		arg = -4;
		break;
	case F_MARKER_BAD:
		if (!ep->tx.markers) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why),
				 "the peer does not ask for Markers (its Reply has M=0)");
			return;
		}
		mangle = ICF_MANGLE_MARKER;
		break;
	case F_U_DV0:
		u[0] &= (uint8_t)~DDP_CTRL_DV;
		break;
	case F_U_DV2:
		u[0] = (uint8_t)((u[0] & ~DDP_CTRL_DV) | 2);
		break;
	case F_T_DV2:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), BOGUS_STAG, 0, true, NULL, 16);
		u[0] = (uint8_t)((u[0] & ~DDP_CTRL_DV) | 2);
		break;
	case F_U_QN3:
		n = untagged(u, send, DDP_QN_ATOMIC_RESP, 1, 0, true, 0, NULL, 0, pl, INFO_LEN);
		break;
	case F_U_QN_BIG:
		n = untagged(u, send, 0xFFFFFFFFu, 1, 0, true, 0, NULL, 0, pl, INFO_LEN);
		break;
	case F_U_MSN2:
		n = untagged(u, send, DDP_QN_SEND, 2, 0, true, 0, NULL, 0, pl, INFO_LEN);
		break;
	case F_U_MSN_FAR:
		n = untagged(u, send, DDP_QN_SEND, 0x10000, 0, true, 0, NULL, 0, pl, INFO_LEN);
		break;
	case F_U_MSN0:
		n = untagged(u, send, DDP_QN_SEND, 0, 0, true, 0, NULL, 0, pl, INFO_LEN);
		break;
	case F_U_MO:
		n = untagged(u, send, DDP_QN_SEND, 1, 4, true, 0, NULL, 0, pl, INFO_LEN);
		break;
	case F_U_TOO_LONG:
		n = untagged(u, send, DDP_QN_SEND, 1, 0, true, 0, NULL, 0, NULL, INFO_LEN + 1);
		break;
	case F_U_SEND_4K:
		n = untagged(u, send, DDP_QN_SEND, 1, 0, true, 0, NULL, 0, NULL, 4096);
		break;
	case F_SHORT_HDR:
		n = 10;
		break;
	case F_T_STAG_BAD:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), BOGUS_STAG, 0, true, NULL, 16);
		break;
	case F_T_STAG0:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), 0, 0, true, NULL, 16);
		break;
	case F_RV0:
	case F_RV2:
	case F_RV3:
		u[1] = (uint8_t)((c->arg - F_RV0 == 0 ? 0
				  : c->arg == F_RV2   ? 2
						      : 3)
					 << 6 |
				 RDMAP_OP_SEND);
		break;
	case F_OP_C:
	case F_OP_D:
	case F_OP_E:
	case F_OP_F:
		u[1] = rdmap_ctrl_make(c->arg == F_OP_C	  ? 0xC
				       : c->arg == F_OP_D ? 0xD
				       : c->arg == F_OP_E ? 0xE
							  : 0xF);
		break;
	case F_RREQ_QN0:
	case F_RREQ_MSN2:
		rq = (struct rdmap_read_req){.sink_stag = OUR_SINK_STAG,
					     .sink_to = OUR_SINK_TO,
					     .size = 16,
					     .src_stag = BOGUS_STAG,
					     .src_to = 0x1000};
		rdmap_read_req_encode(&rq, hdr);
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ),
			     c->arg == F_RREQ_QN0 ? DDP_QN_SEND : DDP_QN_READ_REQ,
			     c->arg == F_RREQ_QN0 ? 1 : 2, 0, true, 0, hdr, RDMAP_READ_REQ_LEN,
			     NULL, 0);
		break;
	case F_SEND_INV_STAG0:
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_SEND_INV), DDP_QN_SEND, 1, 0, true, 0,
			     NULL, 0, pl, INFO_LEN);
		ep->msn[DDP_QN_SEND]++;
		break;
	case F_OP_IMM:
	case F_OP_IMM_SE:
		memset(hdr, 0x11, RDMAP_IMM_LEN);
		n = untagged(u,
			     rdmap_ctrl_make(c->arg == F_OP_IMM ? RDMAP_OP_IMM : RDMAP_OP_IMM_SE),
			     DDP_QN_SEND, 1, 0, true, 0, hdr, RDMAP_IMM_LEN, NULL, 0);
		break;
	case F_OP_ATOMIC_REQ: {
		struct rdmap_atomic_req a = {
			.aop = RDMAP_AOP_FETCH_ADD, .req_id = 1, .stag = BOGUS_STAG, .add_swap = 1};

		rdmap_atomic_req_encode(&a, hdr);
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_ATOMIC_REQ), DDP_QN_READ_REQ, 1, 0, true,
			     0, hdr, RDMAP_ATOMIC_REQ_LEN, NULL, 0);
		break;
	}
	case F_OP_ATOMIC_RESP: {
		struct rdmap_atomic_resp a = {.req_id = 1, .orig = 7};

		rdmap_atomic_resp_encode(&a, hdr);
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_ATOMIC_RESP), DDP_QN_ATOMIC_RESP, 1, 0,
			     true, 0, hdr, RDMAP_ATOMIC_RESP_LEN, NULL, 0);
		break;
	}
	case F_SEND_QN1:
		n = untagged(u, send, DDP_QN_READ_REQ, 1, 0, true, 0, NULL, 0, pl, INFO_LEN);
		break;
	case F_WRITE_UNTAGGED:
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), DDP_QN_SEND, 1, 0, true, 0, NULL,
			     0, pl, INFO_LEN);
		break;
	case F_SEND_TAGGED:
		n = tagged(u, send, BOGUS_STAG, 0, true, pl, INFO_LEN);
		break;
	case F_SEND_INV:
	case F_SEND_SE_INV:
		n = untagged(u,
			     rdmap_ctrl_make(c->arg == F_SEND_INV ? RDMAP_OP_SEND_INV
								  : RDMAP_OP_SEND_SE_INV),
			     DDP_QN_SEND, 1, 0, true, BOGUS_STAG, NULL, 0, pl, INFO_LEN);
		ep->msn[DDP_QN_SEND]++;
		break;
	case F_RREQ_STAG_BAD:
		rq = (struct rdmap_read_req){.sink_stag = OUR_SINK_STAG,
					     .sink_to = OUR_SINK_TO,
					     .size = 16,
					     .src_stag = BOGUS_STAG,
					     .src_to = 0x1000};
		rdmap_read_req_encode(&rq, hdr);
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ, 1, 0, true, 0,
			     hdr, RDMAP_READ_REQ_LEN, NULL, 0);
		break;
	case F_TERM: {
		struct rdmap_term tm = {.code = {.layer = 0, .etype = 2, .ecode = 0xFF}};
		ssize_t k = rdmap_term_encode(&tm, hdr, sizeof(hdr));

		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_TERMINATE), DDP_QN_TERMINATE, 1, 0, true,
			     0, hdr, k > 0 ? (size_t)k : 0, NULL, 0);
		break;
	}
	case F_RRESP_UNSOLICITED:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), BOGUS_STAG, 0, true, NULL, 16);
		break;
	default:
		break;
	}
	errant(o, u, n);
	if (icf_ep_send_fpdu(ep, u, n, mangle, arg) < 0 && !ep->eof) {
		o->skipped = true;
		snprintf(o->why, sizeof(o->why), "could not send the FPDU");
		return;
	}
	if (c->arg == F_LEN_SHORT || c->arg == F_LEN_LONG) {
		/* octets for the misframed FPDU to run into */
		static const uint8_t zero[64];

		icf_ep_send_raw(ep, zero, sizeof(zero));
	}
	watch(c, x, ep, o, c->arg == F_TERM ? FOLLOW_NONE : FOLLOW_INFO, NULL, 0);
}

/* ---------------------------------------------------------------------- */
/* Stage AFTER: the peer's Read Request is outstanding                      */
/* ---------------------------------------------------------------------- */

enum {
	A_T_BOUNDS,
	A_T_BELOW,
	A_T_WRAP,
	A_RRESP_STAG,
	A_RRESP_BOUNDS,
	A_RREQ_BOUNDS,
	A_RREQ_WRAP,
	A_IRD_OVERFLOW,
	A_TERM,
	A_WRITE_OK,
	A_RREQ_OK,
	A_RRESP_AGAIN,
	A_RREQ_ZERO,
	A_WRITE_ZERO,
	A_SEND_2SEG,
	A_SEND_SE,
	A_RREQ_BIG,
};

static void run_after(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		      struct icf_obs *o)
{
	static uint8_t u[8192];
	uint8_t hdr[64];
	struct icf_msg rr, m;
	const struct rdmap_read_req *p;
	struct rdmap_read_req rq;
	unsigned tolerate = 0;
	enum follow follow = FOLLOW_READ_RESP;
	static uint8_t burst[65 * 64];
	size_t n = 0, blen = 0;
	int t = tmo(c, x);

	if (!handshake(c, x, ep, o))
		return;
	if (c->arg == A_RREQ_ZERO || c->arg == A_WRITE_ZERO || c->arg == A_SEND_2SEG ||
	    c->arg == A_SEND_SE) {
		/* accepted forms, before the ping */
		if (c->arg == A_RREQ_ZERO) {
			/* RFC 5040 §4.4: size 0: the source is not validated */
			rq = (struct rdmap_read_req){.sink_stag = OUR_SINK_STAG,
						     .sink_to = OUR_SINK_TO,
						     .src_stag = BOGUS_STAG,
						     .src_to = 0x1000};
			rdmap_read_req_encode(&rq, hdr);
			n = untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
				     ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr,
				     RDMAP_READ_REQ_LEN, NULL, 0);
			send_ulpdu(ep, u, n);
			if (!expect_msg(ep, o, RDMAP_OP_READ_RESP, t, &m))
				return;
			if (m.len != 0 || m.stag != OUR_SINK_STAG) {
				snprintf(o->why, sizeof(o->why), "Read Response of %u octets",
					 m.len);
				return;
			}
			o->accepted = ping(c, x, ep, o) == 1;
		} else if (c->arg == A_WRITE_ZERO) {
			/* RFC 5041 §7.1: the checks are for non-zero-length segments */
			n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), BOGUS_STAG, 0, true, NULL,
				   0);
			send_ulpdu(ep, u, n);
			o->accepted = ping(c, x, ep, o) == 1;
		} else if (c->arg == A_SEND_SE) {
			/* RFC 5040 §5.3: Send with Solicited Event is a Send */
			uint8_t pl[INFO_LEN];

			info(pl, OUR_SRC_TO, OUR_SRC_STAG, PING_SIZE);
			n = untagged(u, rdmap_ctrl_make(RDMAP_OP_SEND_SE), DDP_QN_SEND,
				     ep->msn[DDP_QN_SEND]++, 0, true, 0, NULL, 0, pl, INFO_LEN);
			send_ulpdu(ep, u, n);
			o->accepted = expect_msg(ep, o, RDMAP_OP_READ_REQ, t, &rr) &&
				      ping_finish(c, x, ep, o, &rr);
		} else {
			/* RFC 5041 §5.2: one message in two segments */
			uint8_t pl[INFO_LEN];
			uint8_t s = rdmap_ctrl_make(RDMAP_OP_SEND);

			info(pl, OUR_SRC_TO, OUR_SRC_STAG, PING_SIZE);
			n = untagged(u, s, DDP_QN_SEND, 1, 0, false, 0, NULL, 0, pl, 8);
			send_ulpdu(ep, u, n);
			n = untagged(u, s, DDP_QN_SEND, 1, 8, true, 0, NULL, 0, pl + 8, 8);
			send_ulpdu(ep, u, n);
			ep->msn[DDP_QN_SEND]++;
			o->accepted = expect_msg(ep, o, RDMAP_OP_READ_REQ, t, &rr) &&
				      ping_finish(c, x, ep, o, &rr);
		}
		o->closed = ep->eof;
		return;
	}
	if (!ping_read(c, x, ep, o, &rr)) {
		o->closed = ep->eof;
		if (!o->term) {
			char why[sizeof(o->why)];

			memcpy(why, o->why, sizeof(why));
			o->skipped = true;
			snprintf(o->why, sizeof(o->why),
				 "no Read Request after our info Send: %.80s", why[0] ? why : "?");
		}
		return;
	}
	p = &rr.rreq;
	switch (c->arg) {
	case A_T_BOUNDS:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag, p->sink_to + FAR, true,
			   NULL, 16);
		break;
	case A_T_BELOW:
		if (p->sink_to < 4096) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why), "the peer's buffer starts at TO %llu",
				 (unsigned long long)p->sink_to);
			return;
		}
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag, p->sink_to - 4096,
			   true, NULL, 16);
		break;
	case A_T_WRAP:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag, UINT64_MAX - 7, true,
			   NULL, 16);
		break;
	case A_RRESP_STAG:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), p->sink_stag ^ 0x00FFFF00u,
			   p->sink_to, true, NULL, p->size < 4096 ? p->size : 4096);
		follow = FOLLOW_NONE;
		break;
	case A_RRESP_BOUNDS:
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), p->sink_stag, p->sink_to + FAR,
			   true, NULL, p->size < 4096 ? p->size : 4096);
		follow = FOLLOW_NONE;
		break;
	case A_RREQ_BOUNDS:
	case A_RREQ_WRAP:
	case A_RREQ_BIG:
		rq = (struct rdmap_read_req){.sink_stag = OUR_SINK_STAG,
					     .sink_to = OUR_SINK_TO,
					     .size = c->arg == A_RREQ_BIG ? (uint32_t)FAR : 16,
					     .src_stag = p->sink_stag,
					     .src_to = c->arg == A_RREQ_WRAP  ? UINT64_MAX - 7
						       : c->arg == A_RREQ_BIG ? p->sink_to
									      : p->sink_to + FAR};
		rdmap_read_req_encode(&rq, hdr);
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
			     ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr, RDMAP_READ_REQ_LEN, NULL,
			     0);
		break;
	case A_IRD_OVERFLOW: {
		/* RFC 6581 §9.1: no more Read Requests in flight than the
		 * responder's IRD; RFC 5040 names no code for the overflow */
		unsigned ird = ep->reply.enhanced ? ep->reply.ird : 0;

		if (!ird || ird > 64) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why), "the peer's IRD is %s",
				 ird ? "not bounded (0x3FFF or > 64)"
				     : "unknown (no IRD/ORD word)");
			return;
		}
		rq = (struct rdmap_read_req){.sink_stag = OUR_SINK_STAG,
					     .sink_to = OUR_SINK_TO,
					     .size = 16,
					     .src_stag = p->sink_stag,
					     .src_to = p->sink_to};
		rdmap_read_req_encode(&rq, hdr);
		/* all in one write, so that the peer holds the last one before it
		 * can have answered (and freed the IRD slot of) the first */
		for (unsigned i = 0; i <= ird; i++) {
			ssize_t k;

			n = untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
				     ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr,
				     RDMAP_READ_REQ_LEN, NULL, 0);
			k = icf_ep_frame(ep, u, n, ICF_MANGLE_NONE, 0, burst + blen);
			if (k > 0)
				blen += (size_t)k;
		}
		tolerate = 1u << RDMAP_OP_READ_RESP;
		break;
	}
	case A_TERM: {
		struct rdmap_term tm = {.code = {.layer = 0, .etype = 2, .ecode = 0xFF}};
		ssize_t k = rdmap_term_encode(&tm, hdr, sizeof(hdr));

		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_TERMINATE), DDP_QN_TERMINATE, 1, 0, true,
			     0, hdr, k > 0 ? (size_t)k : 0, NULL, 0);
		follow = FOLLOW_NONE;
		break;
	}
	case A_WRITE_OK:
		/* an RDMA Write inside the buffer rping registered for remote write */
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag, p->sink_to, true, NULL,
			   16);
		send_ulpdu(ep, u, n);
		o->accepted = ping_finish(c, x, ep, o, &rr);
		o->closed = ep->eof;
		return;
	case A_RREQ_OK:
		rq = (struct rdmap_read_req){.sink_stag = OUR_SINK_STAG,
					     .sink_to = OUR_SINK_TO,
					     .size = 16,
					     .src_stag = p->sink_stag,
					     .src_to = p->sink_to};
		rdmap_read_req_encode(&rq, hdr);
		n = untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
			     ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr, RDMAP_READ_REQ_LEN, NULL,
			     0);
		send_ulpdu(ep, u, n);
		if (expect_msg(ep, o, RDMAP_OP_READ_RESP, t, &m) && m.len == 16 &&
		    m.stag == OUR_SINK_STAG && m.to == OUR_SINK_TO)
			o->accepted = ping_finish(c, x, ep, o, &rr);
		else if (!o->why[0] && !o->term)
			snprintf(o->why, sizeof(o->why), "Read Response of %u octets", m.len);
		o->closed = ep->eof;
		return;
	case A_RRESP_AGAIN:
		/* RFC 5040 §4.5: a Read Response answers one Read Request; a second
		 * one has no outstanding Read to complete */
		if (!ping_finish(c, x, ep, o, &rr)) {
			o->closed = ep->eof;
			if (!o->term) {
				o->skipped = true;
				snprintf(o->why, sizeof(o->why), "the first ping did not complete");
			}
			return;
		}
		n = tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), p->sink_stag, p->sink_to, true,
			   NULL, p->size < 4096 ? p->size : 4096);
		follow = FOLLOW_NONE;
		break;
	default:
		break;
	}
	errant(o, u, n);
	if (blen)
		icf_ep_send_raw(ep, burst, blen);
	else
		send_ulpdu(ep, u, n);
	watch(c, x, ep, o, follow, p, tolerate);
}

/* ---------------------------------------------------------------------- */
/* The catalogue                                                            */
/* ---------------------------------------------------------------------- */

#define TC(l, t, c)                                                                                \
	{                                                                                          \
		.layer = (l), .etype = (t), .ecode = (c)                                           \
	}
#define ACCEPT                                                                                     \
	{                                                                                          \
		.kind = ICF_EXP_ACCEPT                                                             \
	}
#define EITHER                                                                                     \
	{                                                                                          \
		.kind = ICF_EXP_ACCEPT_OR_REJECT                                                   \
	}
#define CLOSE                                                                                      \
	{                                                                                          \
		.kind = ICF_EXP_CLOSE                                                              \
	}
#define TERM1(l, t, c, cp)                                                                         \
	{                                                                                          \
		.kind = ICF_EXP_TERM, .codes = {TC(l, t, c)}, .ncodes = 1, .copy = (cp)            \
	}
#define TERM2(l1, t1, c1, l2, t2, c2, cp)                                                          \
	{                                                                                          \
		.kind = ICF_EXP_TERM, .codes = {TC(l1, t1, c1), TC(l2, t2, c2)}, .ncodes = 2,      \
		.copy = (cp)                                                                       \
	}
#define LLP(c)                                                                                     \
	{                                                                                          \
		.kind = ICF_EXP_TERM, .codes = {TC(2, 0, c)}, .ncodes = 1, .copy = ICF_COPY_NONE,  \
		.close_ok = true                                                                   \
	}
#define D  ICF_COPY_DDP
#define DR ICF_COPY_RREQ

static const struct icf_case cases[] = {
	/* MPA startup (RFC 5044 §7.1, RFC 6581 §9) */
	{"mpa.req.rev1", "RFC 6581 §6", "revision 1 Request: a revision 2 peer answers in rev 1",
	 ACCEPT, run_mpa, M_REV1, 0},
	{"mpa.req.rev2", "RFC 6581 §9", "revision 2 with S and IRD = ORD = 1 (rping's)", ACCEPT,
	 run_mpa, M_REV2, 0},
	{"mpa.req.rev2_nos", "RFC 6581 §6", "revision 2 without S (no IRD/ORD word)", ACCEPT,
	 run_mpa, M_REV2_NOS, 0},
	{"mpa.req.crc_off", "RFC 5044 §7.1.1", "C = 0: CRC used only if the Reply asks", ACCEPT,
	 run_mpa, M_CRC_OFF, 0},
	{"mpa.req.markers", "RFC 5044 §7.1.1", "M = 1: Markers toward us, or a reject", EITHER,
	 run_mpa, M_MARKERS, 0},
	{"mpa.req.markers_crc_off", "RFC 5044 §7.1.1", "M = 1 and C = 0 together", EITHER, run_mpa,
	 M_MARKERS_NOCRC, 0},
	{"mpa.req.p2p_send", "RFC 6581 §9.2", "peer-to-peer, zero-length Send RTR only", EITHER,
	 run_mpa, M_P2P_SEND, 0},
	{"mpa.req.p2p_write", "RFC 6581 §9.2", "peer-to-peer, zero-length Write RTR only", EITHER,
	 run_mpa, M_P2P_WRITE, 0},
	{"mpa.req.p2p_read", "RFC 6581 §9.2", "peer-to-peer, zero-length Read RTR only", EITHER,
	 run_mpa, M_P2P_READ, 0},
	{"mpa.req.ird0", "RFC 6581 §9.1",
	 "IRD 0: the Responder's ORD must come down to 0 or reject", EITHER, run_mpa, M_IRD0, 0},
	{"mpa.req.ord0", "RFC 6581 §9.1", "ORD 0: we never read, the peer may", ACCEPT, run_mpa,
	 M_ORD0, 0},
	{"mpa.req.ird_ord_max", "RFC 6581 §9.1", "IRD = ORD = 0x3FFF (no automatic negotiation)",
	 ACCEPT, run_mpa, M_IRD_ORD_MAX, 0},
	{"mpa.req.pd512", "RFC 5044 §7.1.1", "512 octets of private data (the limit)", ACCEPT,
	 run_mpa, M_PD512, 0},
	{"mpa.req.pd508_s", "RFC 6581 §9", "IRD/ORD word and 508 octets (the rev 2 limit)", ACCEPT,
	 run_mpa, M_PD508_S, 0},
	{"mpa.req.pd513", "RFC 5044 §7.1.1", "PD_Length 513: over the limit, malformed", CLOSE,
	 run_mpa, M_PD513, 0},
	{"mpa.req.key_bad", "RFC 5044 §7.1.2", "a key that is no MPA key", CLOSE, run_mpa,
	 M_KEY_BAD, 0},
	{"mpa.req.key_reply", "RFC 5044 §7.1.2", "the Reply key in a Request", CLOSE, run_mpa,
	 M_KEY_REPLY, 0},
	{"mpa.req.rev0", "RFC 5044 §7.1.1", "reserved revision 0", CLOSE, run_mpa, M_REV0, 0},
	{"mpa.req.rev3", "RFC 5044 §7.1.1", "unknown revision 3", CLOSE, run_mpa, M_REV3, 0},
	{"mpa.req.s_rev1", "RFC 5044 §7.1.1", "S set in rev 1 (a reserved bit there: ignored)",
	 ACCEPT, run_mpa, M_S_REV1, 0},
	{"mpa.req.rsvd_bits", "RFC 5044 §7.1.1", "reserved flag bits set (not checked)", ACCEPT,
	 run_mpa, M_RSVD, 0},
	{"mpa.req.r_bit", "RFC 5044 §7.1.1", "R = 1 in a Request (ignored by the receiver)", ACCEPT,
	 run_mpa, M_R_REQ, 0},
	{"mpa.req.s_pdlen_short", "RFC 6581 §9", "S with PD_Length 2: no room for IRD/ORD", CLOSE,
	 run_mpa, M_S_SHORT, 0},
	{"mpa.req.truncated", "RFC 5044 §7.1.2", "10 octets of a Request, then our FIN", CLOSE,
	 run_mpa, M_TRUNC, 0},
	{"mpa.req.none", "RFC 5044 §7.1.2", "nothing sent: the Responder's startup timer", CLOSE,
	 run_mpa, M_NONE, 15000},
	{"mpa.req.early_fpdu", "RFC 5044 §7.1.2", "an FPDU before the Reply (unexpected octets)",
	 CLOSE, run_mpa, M_EARLY, 0},
	/* MPA full operation (RFC 5044 §4, §8) */
	{"mpa.fpdu.crc_bad", "RFC 5044 §8", "first FPDU with a wrong CRC", LLP(2), run_first,
	 F_CRC_BAD, 0},
	{"mpa.fpdu.crc_zero", "RFC 5044 §4.4", "CRC field 0 although CRC was negotiated", LLP(2),
	 run_first, F_CRC_ZERO, 0},
	{"mpa.fpdu.len_long", "RFC 5044 §8", "ULPDU_Length 4 too big (CRC then fails)", LLP(2),
	 run_first, F_LEN_LONG, 0},
	{"mpa.fpdu.len_short", "RFC 5044 §8", "ULPDU_Length 4 too small (CRC then fails)", LLP(2),
	 run_first, F_LEN_SHORT, 0},
	{"mpa.fpdu.marker_bad", "RFC 5044 §8", "a Marker pointing elsewhere, CRC right", LLP(3),
	 run_first, F_MARKER_BAD, 0},
	/* DDP (RFC 5041 §7) */
	{"ddp.u.dv0", "RFC 5041 §7.2", "untagged segment with DDP version 0", TERM1(1, 2, 0x06, D),
	 run_first, F_U_DV0, 0},
	{"ddp.u.dv2", "RFC 5041 §7.2", "untagged segment with DDP version 2", TERM1(1, 2, 0x06, D),
	 run_first, F_U_DV2, 0},
	{"ddp.t.dv2", "RFC 5041 §7.2", "tagged segment with DDP version 2", TERM1(1, 1, 0x04, D),
	 run_first, F_T_DV2, 0},
	{"ddp.u.qn3", "RFC 5041 §7.2", "Send on QN 3 (no such queue without RFC 7306)",
	 TERM1(1, 2, 0x01, D), run_first, F_U_QN3, 0},
	{"ddp.u.qn_big", "RFC 5041 §7.2", "Send on QN 0xFFFFFFFF", TERM1(1, 2, 0x01, D), run_first,
	 F_U_QN_BIG, 0},
	{"ddp.u.msn2", "RFC 5041 §7.2", "MSN 2 where 1 is due (no buffer for it)",
	 TERM2(1, 2, 0x02, 1, 2, 0x03, D), run_first, F_U_MSN2, 0},
	{"ddp.u.msn_far", "RFC 5041 §7.2", "MSN 0x10000: out of the window",
	 TERM2(1, 2, 0x03, 1, 2, 0x02, D), run_first, F_U_MSN_FAR, 0},
	{"ddp.u.msn0", "RFC 5041 §4.3", "MSN 0 (the first is 1): behind the window",
	 TERM2(1, 2, 0x03, 1, 2, 0x02, D), run_first, F_U_MSN0, 0},
	{"ddp.u.rreq_msn2", "RFC 5041 §7.2", "first Read Request with MSN 2 on QN 1",
	 TERM2(1, 2, 0x03, 1, 2, 0x02, D), run_first, F_RREQ_MSN2, 0},
	{"ddp.u.mo", "RFC 5041 §7.2", "MO 4 on the only segment of a message", TERM1(1, 2, 0x04, D),
	 run_first, F_U_MO, 0},
	{"ddp.u.too_long", "RFC 5041 §7.2", "Send of 17 octets into rping's 16-octet receive",
	 TERM1(1, 2, 0x05, D), run_first, F_U_TOO_LONG, 0},
	{"ddp.u.send_4k", "RFC 5041 §7.2", "Send of 4096 octets into a 16-octet receive",
	 TERM1(1, 2, 0x05, D), run_first, F_U_SEND_4K, 0},
	{"ddp.short_hdr",
	 "RFC 5041 §4",
	 "a ULPDU of 10 octets: shorter than any DDP header",
	 {.kind = ICF_EXP_TERM,
	  .codes = {TC(1, 0, 0), TC(0, 0, 0), TC(0, 2, 0x07)},
	  .ncodes = 3,
	  .close_ok = true},
	 run_first,
	 F_SHORT_HDR,
	 0},
	{"ddp.t.stag_invalid", "RFC 5041 §7.2", "RDMA Write to an STag never advertised",
	 TERM1(1, 1, 0x00, D), run_first, F_T_STAG_BAD, 0},
	{"ddp.t.stag0", "RFC 5041 §7.2", "RDMA Write to STag 0", TERM1(1, 1, 0x00, D), run_first,
	 F_T_STAG0, 0},
	{"ddp.t.bounds.write", "RFC 5041 §7.2", "RDMA Write to rping's buffer, TO 16 MiB past it",
	 TERM1(1, 1, 0x01, D), run_after, A_T_BOUNDS, 0},
	{"ddp.t.bounds.below", "RFC 5041 §7.2", "RDMA Write 4 KiB below rping's buffer",
	 TERM1(1, 1, 0x01, D), run_after, A_T_BELOW, 0},
	{"ddp.t.to_wrap", "RFC 5041 §7.2", "RDMA Write with TO + length wrapping 2^64",
	 TERM2(1, 1, 0x03, 1, 1, 0x01, D), run_after, A_T_WRAP, 0},
	{"ddp.t.rresp_stag", "RFC 5041 §7.2", "Read Response to an STag other than the sink's",
	 TERM1(1, 1, 0x00, D), run_after, A_RRESP_STAG, 0},
	{"ddp.t.rresp_bounds", "RFC 5041 §7.2", "Read Response 16 MiB past the sink buffer",
	 TERM1(1, 1, 0x01, D), run_after, A_RRESP_BOUNDS, 0},
	{"ddp.t.write_ok", "RFC 5040 §5.1", "RDMA Write inside rping's buffer", ACCEPT, run_after,
	 A_WRITE_OK, 0},
	{"ddp.u.two_segments", "RFC 5041 §5.2", "the info Send in two segments", ACCEPT, run_after,
	 A_SEND_2SEG, 0},
	{"ddp.t.write_zero_bad_stag", "RFC 5041 §7.1", "zero-length Write to an unknown STag",
	 ACCEPT, run_after, A_WRITE_ZERO, 0},
	/* RDMAP (RFC 5040 §4, §7; RFC 7306) */
	{"rdmap.rv0", "RFC 5040 §4.2", "RDMAP version 0 (RDMA Consortium)", TERM1(0, 2, 0x05, D),
	 run_first, F_RV0, 0},
	{"rdmap.rv2", "RFC 5040 §4.2", "RDMAP version 2", TERM1(0, 2, 0x05, D), run_first, F_RV2,
	 0},
	{"rdmap.rv3", "RFC 5040 §4.2", "RDMAP version 3", TERM1(0, 2, 0x05, D), run_first, F_RV3,
	 0},
	{"rdmap.op.reserved_c", "RFC 5040 §4.2", "reserved opcode 0xC on QN 0",
	 TERM1(0, 2, 0x06, D), run_first, F_OP_C, 0},
	{"rdmap.op.reserved_f", "RFC 5040 §4.2", "reserved opcode 0xF on QN 0",
	 TERM1(0, 2, 0x06, D), run_first, F_OP_F, 0},
	{"rdmap.op.reserved_d", "RFC 5040 §4.2", "reserved opcode 0xD on QN 0",
	 TERM1(0, 2, 0x06, D), run_first, F_OP_D, 0},
	{"rdmap.op.reserved_e", "RFC 5040 §4.2", "reserved opcode 0xE on QN 0",
	 TERM1(0, 2, 0x06, D), run_first, F_OP_E, 0},
	{"rdmap.op.rreq_qn0", "RFC 5040 §4.2", "Read Request on the Send queue (QN 0)",
	 TERM2(0, 2, 0x06, 1, 2, 0x05, D), run_first, F_RREQ_QN0, 0},
	{"rdmap.op.imm", "RFC 7306 §5.5", "Immediate Data to a peer without RFC 7306",
	 TERM1(0, 2, 0x06, D), run_first, F_OP_IMM, 0},
	{"rdmap.op.imm_se", "RFC 7306 §5.5", "Immediate Data with SE, no RFC 7306",
	 TERM1(0, 2, 0x06, D), run_first, F_OP_IMM_SE, 0},
	{"rdmap.op.atomic_req", "RFC 7306 §5.3", "Atomic Request on QN 1, no RFC 7306",
	 TERM1(0, 2, 0x06, D), run_first, F_OP_ATOMIC_REQ, 0},
	{"rdmap.op.atomic_resp", "RFC 7306 §5.4", "Atomic Response on QN 3, no RFC 7306",
	 TERM2(1, 2, 0x01, 0, 2, 0x06, D), run_first, F_OP_ATOMIC_RESP, 0},
	{"rdmap.op.send_qn1", "RFC 5040 §4.2", "Send on the Read Request queue (QN 1)",
	 TERM1(0, 2, 0x06, D), run_first, F_SEND_QN1, 0},
	{"rdmap.op.write_untagged", "RFC 5040 §4.2", "RDMA Write opcode in an untagged segment",
	 TERM1(0, 2, 0x06, D), run_first, F_WRITE_UNTAGGED, 0},
	{"rdmap.op.send_tagged", "RFC 5040 §4.2", "Send opcode in a tagged segment",
	 TERM2(0, 2, 0x06, 1, 1, 0x00, D), run_first, F_SEND_TAGGED, 0},
	{"rdmap.op.rresp_unsolicited", "RFC 5040 §4.5", "Read Response with no Read outstanding",
	 TERM2(0, 2, 0x06, 1, 1, 0x00, D), run_first, F_RRESP_UNSOLICITED, 0},
	{"rdmap.rresp.again", "RFC 5040 §4.5", "a second Read Response for one Read Request",
	 TERM1(0, 2, 0x06, D), run_after, A_RRESP_AGAIN, 0},
	{"rdmap.send_inv.bad_stag", "RFC 5040 §7.2", "Send with Invalidate of an unknown STag",
	 TERM2(0, 2, 0x09, 0, 1, 0x09, D), run_first, F_SEND_INV, 0},
	{"rdmap.send_se_inv.bad_stag", "RFC 5040 §7.2", "Send with SE and Invalidate, unknown STag",
	 TERM2(0, 2, 0x09, 0, 1, 0x09, D), run_first, F_SEND_SE_INV, 0},
	{"rdmap.send_inv.stag0", "RFC 5040 §7.2", "Send with Invalidate of STag 0",
	 TERM2(0, 2, 0x09, 0, 1, 0x09, D), run_first, F_SEND_INV_STAG0, 0},
	{"rdmap.send_se.accepted", "RFC 5040 §5.3", "the info as a Send with Solicited Event",
	 ACCEPT, run_after, A_SEND_SE, 0},
	{"rdmap.rreq.size_big", "RFC 5040 §7.2", "Read Request of 16 MiB from rping's buffer",
	 TERM1(0, 1, 0x01, DR), run_after, A_RREQ_BIG, 0},
	{"rdmap.rreq.stag_invalid", "RFC 5040 §7.2", "Read Request for an unknown source STag",
	 TERM1(0, 1, 0x00, DR), run_first, F_RREQ_STAG_BAD, 0},
	{"rdmap.rreq.bounds", "RFC 5040 §7.2", "Read Request 16 MiB past rping's buffer",
	 TERM1(0, 1, 0x01, DR), run_after, A_RREQ_BOUNDS, 0},
	{"rdmap.rreq.to_wrap", "RFC 5040 §7.2", "Read Request with TO + size wrapping 2^64",
	 TERM2(0, 1, 0x04, 0, 1, 0x01, DR), run_after, A_RREQ_WRAP, 0},
	{"rdmap.rreq.ird_overflow", "RFC 6581 §9.1", "IRD + 1 Read Requests in flight",
	 TERM2(1, 2, 0x02, 0, 2, 0x07, D), run_after, A_IRD_OVERFLOW, 0},
	{"rdmap.rreq.zero_len", "RFC 5040 §4.4", "Read Request of size 0 (source not validated)",
	 ACCEPT, run_after, A_RREQ_ZERO, 0},
	{"rdmap.rreq.valid", "RFC 5040 §4.4", "Read Request of rping's buffer (remote read)",
	 ACCEPT, run_after, A_RREQ_OK, 0},
	{"rdmap.term.first", "RFC 5040 §5.4", "a Terminate from us as the first FPDU", CLOSE,
	 run_first, F_TERM, 0},
	{"rdmap.term.during_read", "RFC 5040 §6.2.1", "a Terminate from us while the peer reads",
	 CLOSE, run_after, A_TERM, 0},
};

const struct icf_case *icf_cases(size_t *n)
{
	*n = sizeof(cases) / sizeof(cases[0]);
	return cases;
}

void icf_case_run(const struct icf_case *c, const struct icf_ctx *x, struct icf_obs *o)
{
	struct icf_ep ep;
	char err[128], path[4096];
	const char *pp = NULL;

	memset(o, 0, sizeof(*o));
	if (icf_ep_open(&ep, (const struct sockaddr *)&x->addr, x->addrlen, x->timeout_ms,
			x->pcap_dir != NULL, x->verbose, err, sizeof(err)) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err);
		return;
	}
	o->connected = true;
	ep.stop = x->stop;
	c->run(c, x, &ep, o);
	if (x->pcap_dir) {
		snprintf(path, sizeof(path), "%s/%s.pcap", x->pcap_dir, c->id);
		pp = path;
	}
	if (icf_ep_close(&ep, pp) < 0)
		fprintf(stderr, "iwconform: %s: %s\n", path, strerror(errno));
}
