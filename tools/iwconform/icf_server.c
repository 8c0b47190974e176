/* SPDX-License-Identifier: MIT */
/*
 * icf_server.c - iwconform's server role (-s): rping's server, and the
 * cases of the MPA Reply side (icf.h).
 *
 * Each case takes one connection of the peer's rping client (the user runs
 * it in a loop, one ping per run) and plays rping's server as far as the
 * case needs (tools/iwping.c's header comment):
 *
 *               <------------------------  MPA Request
 *   MPA Reply ----------------------------->  (the case may spoil it: stage MPA)
 *               <------------------------  the RTR, when the Reply chose one
 *                                           (a Read RTR is answered with a
 *                                           zero-length Read Response)
 *               <------------------------  Send info{its source buffer}: STag,
 *                                           TO and length, registered for
 *                                           remote read (and write, by rping)
 *   RDMA Read Request of it --------------->  (or the violation: stages FIRST
 *               <------------------------     and AFTER, icf_cases.c)
 *                  RDMA Read Response
 *   Send "go ahead" ----------------------->
 *               <------------------------  Send info{its sink buffer}
 *   RDMA Write of what was read ----------->
 *   Send "go ahead" ----------------------->  then the client (-C 1) closes
 *
 * We may not send an FPDU before the client's first one (RFC 5044 §7.1.2
 * rule 4), so the violations of full operation come after its info Send;
 * which buffer they aim at is the one that Send advertised.
 *
 * The Reply side (RFC 5044 §7.1.2 rule 3, RFC 6581 §9): the Initiator must
 * close on a malformed Reply, may close on a reject, takes what the Reply
 * negotiated (CRC when either side asks, Markers when the Reply asks, the
 * RTR form the Reply chose, an ORD no higher than the Responder's IRD) or,
 * where it cannot (the Responder's ORD above its IRD, no RTR form it can
 * send), reports the MPA error of RFC 6581 §8 in a Terminate (Layer 2, type
 * 0, code 6 or 7) or closes.  A client that sends anything but such a
 * Terminate after a Reply it had to refuse has carried on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iw_bytes.h"

#include "icf.h"

#define CLOSE_WAIT_MS 500 /* the client's close after its last ping */
#define CHUNK	      4096

/* Our RTR preference among `mask`: Write (no buffer, no IRD), Read, Send. */
static uint8_t rtr_pick(uint8_t mask)
{
	if (mask & MPA_RTR_WRITE)
		return MPA_RTR_WRITE;
	if (mask & MPA_RTR_READ)
		return MPA_RTR_READ;
	return mask & MPA_RTR_SEND;
}

static const char *rtr_name(uint8_t form)
{
	switch (form) {
	case MPA_RTR_WRITE:
		return "Write";
	case MPA_RTR_READ:
		return "Read";
	case MPA_RTR_SEND:
		return "Send";
	default:
		return "no";
	}
}

void icf_srv_std_reply(const struct mpa_frame *req, struct mpa_frame *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->reply = true;
	rep->rev = req->rev == MPA_REV1 ? MPA_REV1 : MPA_REV2;
	rep->crc = true;
	if (rep->rev != MPA_REV2 || !req->enhanced)
		return;
	/* RFC 6581 §9.1: our IRD covers the client's ORD; our ORD is one Read
	 * at a time, as rping's server, and never above the client's IRD */
	rep->enhanced = true;
	rep->ird = req->ord;
	rep->ord = req->ird == MPA_IRD_ORD_MAX ? MPA_IRD_ORD_MAX : req->ird < 1 ? req->ird : 1;
	if (req->p2p) {
		/* RFC 6581 §9.2: A echoed, one RTR form of those offered */
		rep->p2p = true;
		rep->rtr = rtr_pick(req->rtr);
		if (rep->rtr == MPA_RTR_READ && rep->ird == 0)
			rep->ird = 1;
	}
}

/* The RTR form of a message, MPA_RTR_NONE when it is none (RFC 6581 §9.3). */
static uint8_t rtr_form(const struct icf_msg *m)
{
	if (m->opcode == RDMAP_OP_WRITE && m->tagged && m->len == 0)
		return MPA_RTR_WRITE;
	if (m->opcode == RDMAP_OP_READ_REQ && !m->tagged && m->rreq.size == 0)
		return MPA_RTR_READ;
	if (m->opcode == RDMAP_OP_SEND && !m->tagged && m->len == 0)
		return MPA_RTR_SEND;
	return MPA_RTR_NONE;
}

/* A zero-length Read Response to a Read Request (the Read RTR's answer). */
static int read_resp0(struct icf_ep *ep, const struct rdmap_read_req *r)
{
	uint8_t b[DDP_TAGGED_HDR_LEN];

	return icf_send_ulpdu(ep, b,
			      icf_tagged(b, rdmap_ctrl_make(RDMAP_OP_READ_RESP), r->sink_stag,
					 r->sink_to, true, NULL, 0));
}

/* The first message, a Terminate: recorded. */
static int got_term(struct icf_obs *o, const struct icf_msg *m)
{
	if (m->opcode != RDMAP_OP_TERMINATE)
		return 0;
	o->term = true;
	o->tm = m->term;
	return 1;
}

int icf_srv_established(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
			struct icf_obs *o)
{
	const struct iwd_conn_info *ci = iwd_iwarp_info(ep->dec);
	uint8_t want = MPA_RTR_NONE, form;
	struct icf_msg m;
	int t = icf_tmo(c, x);

	if (ci && ci->mpa_seen && ci->rep.enhanced && ci->rep.p2p)
		want = ci->rep.rtr;
	if (want) {
		if (!icf_ep_next(ep, &m, t)) {
			snprintf(o->why, sizeof(o->why), "no RTR from the client%s",
				 ep->eof ? " (closed)" : " in time");
			return 0;
		}
		if (got_term(o, &m))
			return 0;
		form = rtr_form(&m);
		if (!(form & want)) {
			snprintf(o->why, sizeof(o->why),
				 "first FPDU %s (len %u) is not the %s RTR the Reply chose "
				 "(RFC 6581 §9.3)",
				 iwd_opcode_name(m.opcode), m.len, rtr_name(want));
			return 0;
		}
		if (form == MPA_RTR_READ)
			read_resp0(ep, &m.rreq);
	}
	if (!icf_ep_next(ep, &m, t)) {
		snprintf(o->why, sizeof(o->why), "no info Send from the client%s",
			 ep->eof ? " (closed)" : " in time");
		return 0;
	}
	if (got_term(o, &m))
		return 0;
	if (m.opcode != RDMAP_OP_SEND || m.len != ICF_INFO_LEN || m.data_len < ICF_INFO_LEN) {
		snprintf(o->why, sizeof(o->why),
			 "the client's first message: %s of %u octets, "
			 "not rping's 16-octet info Send",
			 iwd_opcode_name(m.opcode), m.len);
		return 0;
	}
	if (m.crc_bad) {
		snprintf(o->why, sizeof(o->why), "the client's info Send has a bad CRC");
		return 0;
	}
	ep->pbuf.valid = true;
	ep->pbuf.readable = true; /* rping registers it for remote read (and write) */
	ep->pbuf.to = iw_get_be64(m.data);
	ep->pbuf.stag = iw_get_be32(m.data + 8);
	ep->pbuf.len = iw_get_be32(m.data + 12);
	if (ep->pbuf.len == 0 || ep->pbuf.len > ICF_SINK_MAX) {
		snprintf(o->why, sizeof(o->why), "the client advertised %u octets", ep->pbuf.len);
		return 0;
	}
	return 1;
}

int icf_srv_read(struct icf_ep *ep)
{
	struct rdmap_read_req r = {.sink_stag = ICF_OUR_SINK_STAG,
				   .sink_to = ICF_OUR_SINK_TO,
				   .size = ep->pbuf.len,
				   .src_stag = ep->pbuf.stag,
				   .src_to = ep->pbuf.to};

	if (!ep->pbuf.valid)
		return -1;
	return icf_send_read_req(ep, &r);
}

int icf_srv_go(struct icf_ep *ep, uint8_t op, unsigned segs)
{
	static const uint8_t zero[ICF_INFO_LEN];
	uint8_t b[DDP_UNTAGGED_HDR_LEN + ICF_INFO_LEN];
	uint32_t msn = ep->msn[DDP_QN_SEND];
	uint8_t ctrl = rdmap_ctrl_make(op);

	if (segs < 2)
		return icf_send_msg(ep, op, zero, sizeof(zero));
	/* RFC 5041 §5.2: one message, two segments, the same MSN, MO 0 and 8 */
	ep->msn[DDP_QN_SEND]++;
	if (icf_send_ulpdu(ep, b,
			   icf_untagged(b, ctrl, DDP_QN_SEND, msn, 0, false, 0, NULL, 0, zero, 8)) <
	    0)
		return -1;
	return icf_send_ulpdu(
		ep, b, icf_untagged(b, ctrl, DDP_QN_SEND, msn, 8, true, 0, NULL, 0, zero + 8, 8));
}

/* rping's server writes back the string it read, with its NUL. */
static int write_back(struct icf_ep *ep, uint32_t stag, uint64_t to, uint32_t len)
{
	static uint8_t b[DDP_TAGGED_HDR_LEN + CHUNK];
	uint32_t off = 0;

	while (off < len) {
		uint32_t k = len - off < CHUNK ? len - off : CHUNK;

		if (icf_send_ulpdu(ep, b,
				   icf_tagged(b, rdmap_ctrl_make(RDMAP_OP_WRITE), stag, to + off,
					      off + k == len, ep->sink + off, k)) < 0)
			return -1;
		off += k;
	}
	return 0;
}

int icf_srv_ping(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		 struct icf_obs *o, bool read_sent, uint8_t go_op, unsigned go_segs)
{
	struct icf_msg m;
	uint32_t len, sink_stag, sink_size;
	uint64_t sink_to;
	int t = icf_tmo(c, x);

	if (!read_sent && icf_srv_read(ep) < 0)
		return 0;
	if (!icf_expect_msg(ep, o, RDMAP_OP_READ_RESP, t, &m))
		return 0;
	if (m.stag != ICF_OUR_SINK_STAG || m.to != ICF_OUR_SINK_TO || m.len != ep->pbuf.len) {
		snprintf(o->why, sizeof(o->why), "Read Response of %u octets to STag 0x%08x", m.len,
			 m.stag);
		return 0;
	}
	if (icf_srv_go(ep, go_op, go_segs) < 0)
		return 0;
	if (!icf_expect_msg(ep, o, RDMAP_OP_SEND, t, &m))
		return 0;
	if (m.len != ICF_INFO_LEN || m.data_len < ICF_INFO_LEN) {
		snprintf(o->why, sizeof(o->why),
			 "a Send of %u octets where its sink's info was due", m.len);
		return 0;
	}
	sink_to = iw_get_be64(m.data);
	sink_stag = iw_get_be32(m.data + 8);
	sink_size = iw_get_be32(m.data + 12);
	len = (uint32_t)strnlen((const char *)ep->sink, ep->pbuf.len);
	if (len < ep->pbuf.len)
		len++;
	/* the client took our go-ahead: the ping's second half is a courtesy */
	if (len <= sink_size && write_back(ep, sink_stag, sink_to, len) == 0)
		icf_srv_go(ep, RDMAP_OP_SEND, 1);
	icf_ep_wait_close(ep, t < CLOSE_WAIT_MS ? t : CLOSE_WAIT_MS, NULL);
	return 1;
}

/* ---------------------------------------------------------------------- */
/* Stage MPA: our Reply                                                     */
/* ---------------------------------------------------------------------- */

enum {
	R_REV2,
	R_REV1,
	R_REV2_NOS,
	R_REV_HIGH,
	R_CRC_OFF,
	R_CRC_ON,
	R_MARKERS,
	R_MARKERS_REQ,
	R_P2P_WRITE,
	R_P2P_READ,
	R_P2P_SEND,
	R_P2P_NONE,
	R_P2P_UNOFFERED,
	R_IRD0,
	R_ORD_HIGH,
	R_IRD_ORD_MAX,
	R_PD_MAX,
	R_PD513,
	R_S_SHORT,
	R_RSVD,
	R_REJECT,
	R_REJECT_PD,
	R_KEY_BAD,
	R_KEY_REQ,
	R_REV0,
	R_REV3,
	R_TRUNC,
	R_NONE,
};

#define FLAG_OCTET  16
#define REV_OCTET   17
#define PDLEN_OCTET 18

/* The Reply of the case into f, or the reason it cannot be built against
 * this client's Request. */
static const char *build_reply(int arg, const struct mpa_frame *req, struct mpa_frame *f)
{
	static uint8_t pd[MPA_PD_MAX];
	uint8_t form;

	icf_srv_std_reply(req, f);
	memset(pd, 0x70, sizeof(pd));
	switch (arg) {
	case R_REV1:
		if (req->rev != MPA_REV2)
			return "the client sent revision 1 already";
		icf_srv_std_reply(&(struct mpa_frame){.rev = MPA_REV1}, f);
		break;
	case R_REV2_NOS:
		if (!req->enhanced)
			return "the client's Request is not enhanced (S=0)";
		f->enhanced = false;
		f->p2p = false;
		f->rtr = MPA_RTR_NONE;
		break;
	case R_REV_HIGH:
		if (req->rev != MPA_REV1)
			return "the client sent revision 2: no higher revision to answer";
		f->rev = MPA_REV2;
		break;
	case R_CRC_OFF:
		f->crc = false;
		break;
	case R_CRC_ON:
		if (req->crc)
			return "the client asked for CRC itself (C=1); run a client with CRC off";
		break;
	case R_MARKERS:
		f->markers = true;
		break;
	case R_MARKERS_REQ:
		if (!req->markers)
			return "the client did not ask for Markers (M=0 in its Request)";
		break;
	case R_P2P_WRITE:
	case R_P2P_READ:
	case R_P2P_SEND:
		form = arg == R_P2P_WRITE  ? MPA_RTR_WRITE
		       : arg == R_P2P_READ ? MPA_RTR_READ
					   : MPA_RTR_SEND;
		if (!req->enhanced || !req->p2p)
			return "the client did not offer peer-to-peer (A=0 in its Request)";
		if (!(req->rtr & form))
			return form == MPA_RTR_WRITE  ? "the client did not offer the Write RTR"
			       : form == MPA_RTR_READ ? "the client did not offer the Read RTR"
						      : "the client did not offer the Send RTR";
		f->rtr = form;
		if (form == MPA_RTR_READ && f->ird == 0)
			f->ird = 1;
		break;
	case R_P2P_NONE:
	case R_P2P_UNOFFERED:
		if (!req->enhanced || !req->p2p)
			return "the client did not offer peer-to-peer (A=0 in its Request)";
		if (arg == R_P2P_NONE) {
			f->rtr = MPA_RTR_NONE;
			break;
		}
		form = rtr_pick(MPA_RTR_ALL & ~req->rtr);
		if (!form)
			return "the client offered every RTR form";
		f->rtr = form;
		break;
	case R_IRD0:
	case R_ORD_HIGH:
	case R_IRD_ORD_MAX:
		if (!f->enhanced)
			return "the client's Request has no IRD/ORD word (S=0)";
		if (arg == R_IRD0) {
			if (f->rtr == MPA_RTR_READ)
				return "the Read RTR needs our IRD";
			f->ird = 0;
		} else if (arg == R_ORD_HIGH) {
			if (req->ird >= MPA_IRD_ORD_MAX - 1)
				return "the client's IRD is not bounded (0x3FFF)";
			f->ord = (uint16_t)(req->ird + 1);
		} else {
			f->ird = f->ord = MPA_IRD_ORD_MAX;
		}
		break;
	case R_PD_MAX:
		f->pd = pd;
		f->pd_len = (uint16_t)(MPA_PD_MAX - (f->enhanced ? MPA_IRD_ORD_LEN : 0));
		break;
	case R_S_SHORT:
		if (!f->enhanced)
			return "the client's Request has no IRD/ORD word (S=0)";
		break;
	case R_REJECT:
		f->reject = true;
		break;
	case R_REJECT_PD:
		f->reject = true;
		f->pd = (const uint8_t *)"no";
		f->pd_len = 2;
		break;
	default:
		break;
	}
	return NULL;
}

/* The client's reaction to a Reply it had to refuse: a close, a Terminate,
 * or octets (it took the Reply). */
static void watch_refusal(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
			  struct icf_obs *o, uint64_t off0)
{
	struct icf_msg m;
	int t = icf_tmo(c, x);

	o->closed = icf_ep_wait_close(ep, t, NULL);
	o->reset = ep->rst;
	if (ep->off[ep->them] == off0)
		return;
	o->spoke = true;
	if (icf_ep_next(ep, &m, 0) && m.opcode == RDMAP_OP_TERMINATE) {
		o->term = true;
		o->tm = m.term;
		return;
	}
	o->carried_on = true;
	snprintf(o->carried_what, sizeof(o->carried_what),
		 "%llu octets after our Reply (it took the Reply)",
		 (unsigned long long)(ep->off[ep->them] - off0));
}

static void run_srv_mpa(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
			struct icf_obs *o)
{
	static uint8_t pd[MPA_PD_MAX + 1];
	uint8_t b[MPA_FRAME_MAX_LEN + 8];
	struct mpa_frame req, f;
	const char *why;
	uint64_t off0;
	ssize_t n;
	int t = icf_tmo(c, x);

	if (icf_ep_wait_frame(ep, t) != 1) {
		o->skipped = true;
		snprintf(o->why, sizeof(o->why), "no MPA Request from the client (%s)",
			 ep->req_err ? "malformed"
			 : ep->eof   ? "closed"
				     : "timed out");
		return;
	}
	req = ep->req;
	why = build_reply(c->arg, &req, &f);
	if (why) {
		o->skipped = true;
		snprintf(o->why, sizeof(o->why), "%s", why);
		return;
	}
	memset(pd, 0x71, sizeof(pd));
	if (c->arg == R_PD513) {
		f.pd_len = 0;
		n = mpa_frame_encode(&f, b, sizeof(b));
		if (n > 0) {
			/* the IRD/ORD word (if any), filler, 513 octets in all */
			iw_put_be16(b + PDLEN_OCTET, MPA_PD_MAX + 1);
			memcpy(b + n, pd, MPA_PD_MAX + 1 - (size_t)(n - MPA_FRAME_HDR_LEN));
			n = MPA_FRAME_HDR_LEN + MPA_PD_MAX + 1;
		}
	} else {
		n = mpa_frame_encode(&f, b, sizeof(b));
	}
	if (n < 0) {
		o->skipped = true;
		snprintf(o->why, sizeof(o->why), "cannot encode the Reply");
		return;
	}
	switch (c->arg) {
	case R_KEY_BAD:
		b[7] = 'X'; /* "MPA ID Xep Frame" */
		break;
	case R_KEY_REQ:
		memcpy(b, "MPA ID Req Frame", MPA_KEY_LEN);
		break;
	case R_REV0:
		b[REV_OCTET] = 0;
		break;
	case R_REV3:
		b[REV_OCTET] = 3;
		break;
	case R_RSVD:
		b[FLAG_OCTET] |= 0x0F;
		break;
	case R_S_SHORT:
		/* S with a PD_Length too short for the IRD/ORD word */
		iw_put_be16(b + PDLEN_OCTET, 2);
		n = MPA_FRAME_HDR_LEN + 2;
		break;
	default:
		break;
	}
	off0 = ep->off[ep->them];
	if (c->arg == R_NONE) {
		/* RFC 5044 §7.1.2: the Initiator's startup timer */
		watch_refusal(c, x, ep, o, off0);
		return;
	}
	if (c->arg == R_TRUNC) {
		icf_ep_send_raw(ep, b, 10);
		shutdown(ep->fd, SHUT_WR);
		watch_refusal(c, x, ep, o, off0);
		return;
	}
	if (icf_ep_send_raw(ep, b, (size_t)n) < 0) {
		o->skipped = true;
		snprintf(o->why, sizeof(o->why), "send: %s", strerror(ep->err));
		return;
	}
	if (c->exp.kind == ICF_EXP_CLOSE) {
		/* decodes a Terminate, should the client send one anyway */
		if (!f.reject)
			icf_ep_start(ep);
		watch_refusal(c, x, ep, o, off0);
		return;
	}
	icf_ep_start(ep);
	o->full = true;
	if (!icf_srv_established(c, x, ep, o)) {
		if (o->term) {
			bool more = false;

			icf_ep_wait_close(ep, t, &more);
			o->after_term = more;
		} else if (!ep->eof && c->exp.kind == ICF_EXP_TERM) {
			icf_ep_wait_close(ep, t, NULL);
		}
		o->spoke = ep->off[ep->them] > off0;
		o->closed = ep->eof;
		o->reset = ep->rst;
		return;
	}
	o->spoke = true;
	if (c->exp.kind == ICF_EXP_TERM && !c->exp.accept_ok) {
		o->carried_on = true;
		snprintf(o->carried_what, sizeof(o->carried_what),
			 "its info Send (it took the Reply)");
		return;
	}
	o->accepted = icf_srv_ping(c, x, ep, o, false, RDMAP_OP_SEND, 1) == 1;
	o->closed = ep->eof;
}

/* ---------------------------------------------------------------------- */
/* The catalogue of the Reply side                                          */
/* ---------------------------------------------------------------------- */

#define ACCEPT                                                                                     \
	{                                                                                          \
		.kind = ICF_EXP_ACCEPT                                                             \
	}
#define EITHER                                                                                     \
	{                                                                                          \
		.kind = ICF_EXP_ACCEPT_OR_CLOSE                                                    \
	}
#define CLOSE                                                                                      \
	{                                                                                          \
		.kind = ICF_EXP_CLOSE                                                              \
	}
#define MPA_TERM(code, acc)                                                                        \
	{                                                                                          \
		.kind = ICF_EXP_TERM, .codes = {{.layer = 2, .etype = 0, .ecode = (code)}},        \
		.ncodes = 1, .copy = ICF_COPY_NONE, .accept_ok = (acc)                             \
	}

static const struct icf_case srv_mpa[] = {
	{"srv.mpa.rep.rev2", "RFC 6581 §9", "the standard Reply: rev 2, S, IRD/ORD negotiated",
	 ACCEPT, run_srv_mpa, R_REV2, 0},
	{"srv.mpa.rep.rev1", "RFC 6581 §10", "revision 1 Reply to a revision 2 Request", EITHER,
	 run_srv_mpa, R_REV1, 0},
	{"srv.mpa.rep.rev2_nos", "RFC 6581 §6", "revision 2 Reply without S to an enhanced Request",
	 EITHER, run_srv_mpa, R_REV2_NOS, 0},
	{"srv.mpa.rep.rev_higher", "RFC 5044 §7.1.1", "revision 2 Reply to a revision 1 Request",
	 CLOSE, run_srv_mpa, R_REV_HIGH, 0},
	{"srv.mpa.rep.crc_off", "RFC 5044 §7.1.1",
	 "C = 0 in the Reply: CRC only if the Request asked", ACCEPT, run_srv_mpa, R_CRC_OFF, 0},
	{"srv.mpa.rep.crc_on", "RFC 5044 §7.1.1", "C = 1 to a Request with C = 0: CRC both ways",
	 ACCEPT, run_srv_mpa, R_CRC_ON, 0},
	{"srv.mpa.rep.markers", "RFC 5044 §7.1.1", "M = 1 in the Reply: Markers toward us", EITHER,
	 run_srv_mpa, R_MARKERS, 0},
	{"srv.mpa.rep.markers_asked", "RFC 5044 §7.1.1",
	 "the client asked for Markers: we send them", ACCEPT, run_srv_mpa, R_MARKERS_REQ, 0},
	{"srv.mpa.rep.p2p_write", "RFC 6581 §9.3",
	 "peer-to-peer, the Write RTR chosen: it comes first", ACCEPT, run_srv_mpa, R_P2P_WRITE, 0},
	{"srv.mpa.rep.p2p_read", "RFC 6581 §9.3",
	 "peer-to-peer, the Read RTR chosen (we answer it)", ACCEPT, run_srv_mpa, R_P2P_READ, 0},
	{"srv.mpa.rep.p2p_send", "RFC 6581 §9.3",
	 "peer-to-peer, the Send RTR chosen: it comes first", ACCEPT, run_srv_mpa, R_P2P_SEND, 0},
	{"srv.mpa.rep.p2p_no_rtr", "RFC 6581 §9.2", "peer-to-peer Reply with no RTR form at all",
	 MPA_TERM(0x07, false), run_srv_mpa, R_P2P_NONE, 0},
	{"srv.mpa.rep.p2p_unoffered", "RFC 6581 §9.2", "peer-to-peer, an RTR form the client lacks",
	 MPA_TERM(0x07, false), run_srv_mpa, R_P2P_UNOFFERED, 0},
	{"srv.mpa.rep.ird0", "RFC 6581 §9.1", "Reply IRD 0: the client's ORD comes down to 0",
	 ACCEPT, run_srv_mpa, R_IRD0, 0},
	{"srv.mpa.rep.ord_over_ird", "RFC 6581 §9.1", "Reply ORD one above the client's IRD",
	 MPA_TERM(0x06, true), run_srv_mpa, R_ORD_HIGH, 0},
	{"srv.mpa.rep.ird_ord_max", "RFC 6581 §9.1", "Reply IRD = ORD = 0x3FFF (no negotiation)",
	 ACCEPT, run_srv_mpa, R_IRD_ORD_MAX, 0},
	{"srv.mpa.rep.pd512", "RFC 5044 §7.1.1", "512 octets of private data in all (the limit)",
	 ACCEPT, run_srv_mpa, R_PD_MAX, 0},
	{"srv.mpa.rep.pd513", "RFC 5044 §7.1.1", "PD_Length 513: over the limit, malformed", CLOSE,
	 run_srv_mpa, R_PD513, 0},
	{"srv.mpa.rep.s_pdlen_short", "RFC 6581 §9", "S with PD_Length 2: no room for IRD/ORD",
	 CLOSE, run_srv_mpa, R_S_SHORT, 0},
	{"srv.mpa.rep.rsvd_bits", "RFC 5044 §7.1.1", "reserved flag bits set (not checked)", ACCEPT,
	 run_srv_mpa, R_RSVD, 0},
	{"srv.mpa.rep.reject", "RFC 5044 §7.1.2", "R = 1: the client's ULP closes", CLOSE,
	 run_srv_mpa, R_REJECT, 0},
	{"srv.mpa.rep.reject_pd", "RFC 5044 §7.1.2", "R = 1 with private data (a reason)", CLOSE,
	 run_srv_mpa, R_REJECT_PD, 0},
	{"srv.mpa.rep.key_bad", "RFC 5044 §7.1.2", "a key that is no MPA key", CLOSE, run_srv_mpa,
	 R_KEY_BAD, 0},
	{"srv.mpa.rep.key_req", "RFC 5044 §7.1.2", "the Request key in the Reply (two Initiators)",
	 CLOSE, run_srv_mpa, R_KEY_REQ, 0},
	{"srv.mpa.rep.rev0", "RFC 5044 §7.1.1", "reserved revision 0", CLOSE, run_srv_mpa, R_REV0,
	 0},
	{"srv.mpa.rep.rev3", "RFC 5044 §7.1.1", "unknown revision 3", CLOSE, run_srv_mpa, R_REV3,
	 0},
	{"srv.mpa.rep.truncated", "RFC 5044 §7.1.2", "10 octets of a Reply, then our FIN", CLOSE,
	 run_srv_mpa, R_TRUNC, 0},
	{"srv.mpa.rep.none", "RFC 5044 §7.1.2", "no Reply: the Initiator's startup timer", CLOSE,
	 run_srv_mpa, R_NONE, 15000},
};

const struct icf_case *icf_srv_mpa_cases(size_t *n)
{
	*n = sizeof(srv_mpa) / sizeof(srv_mpa[0]);
	return srv_mpa;
}
