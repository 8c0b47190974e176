/* SPDX-License-Identifier: MIT */
/*
 * icf_cases.c - iwconform's client-role catalogue (icf.h), the flow of a
 * case by role and profile, and the case runner.
 *
 * Every case runs on a new TCP connection to the peer's server and plays
 * rping's client (tools/iwping.c's header comment) as far as the case needs:
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
 * With --profile perftest the case plays perftest's client instead
 * (icf_perftest.c): a control connection carries perftest's exchange, the
 * case's connection is the data connection, the peer's buffer comes from
 * the server's key message, and the normal step is a Write into it (a
 * Read of it against a read test).  The cases that need rping's receive
 * buffer or rping's Read are skipped there, with the reason.
 *
 * The server role (-s, icf_server.c) runs the same FIRST and AFTER stages
 * against the peer's rping client, with the ids prefixed "srv.": the
 * violation follows the client's info Send, and the peer's buffer is the one
 * that Send advertised.
 *
 * The violation replaces the step it is built from, then a short pause lets
 * the peer react; if it has not, the normal step follows, so that a peer
 * that let the violation through shows it by carrying on (a Read Request, a
 * go-ahead, a Read Response) instead of only by silence.  The reaction is
 * then watched until the Terminate, the close or the timeout, and graded
 * (icf_grade.c).
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
#include "iwt_clock.h"

#include "icf.h"

#define PT_RETRY_MS   20
#define IRD_BURST_MAX 128 /* Read Requests of the IRD overflow case, at most */

/* ---------------------------------------------------------------------- */
/* The rping client, step by step                                           */
/* ---------------------------------------------------------------------- */

static void std_request(const struct icf_ctx *x, struct mpa_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->rev = MPA_REV2;
	f->crc = true;
	f->enhanced = true;
	/* rping asks IRD = ORD = 1; perftest's client 16 (measured: its control
	 * connection and a write test's data connection) */
	f->ird = f->ord = x->profile == ICF_PROFILE_PERFTEST ? 16 : 1;
}

/* Send a Request (raw octets) and wait for the Reply.  1 when accepted. */
static int startup(const struct icf_ctx *x, struct icf_ep *ep, struct icf_obs *o,
		   const uint8_t *req, size_t len, int timeout_ms)
{
	if (icf_ep_send_raw(ep, req, len) < 0)
		snprintf(o->why, sizeof(o->why), "send: %s", strerror(ep->err));
	icf_ep_wait_frame(ep, timeout_ms);
	icf_note_reply(ep, o);
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
	if (n > 0 && startup(x, ep, o, b, (size_t)n, icf_tmo(c, x))) {
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

static int send_info(struct icf_ep *ep, uint64_t to, uint32_t stag)
{
	uint8_t pl[ICF_INFO_LEN];

	icf_info(pl, to, stag, ICF_PING_SIZE);
	return icf_send_msg(ep, RDMAP_OP_SEND, pl, ICF_INFO_LEN);
}

/* Info Send, the peer's Read Request.  1 when it came (in *rr). */
static int ping_read(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		     struct icf_obs *o, struct icf_msg *rr)
{
	if (send_info(ep, ICF_OUR_SRC_TO, ICF_OUR_SRC_STAG) < 0)
		return 0;
	return icf_expect_msg(ep, o, RDMAP_OP_READ_REQ, icf_tmo(c, x), rr);
}

/* The rest of the first half of a ping: Read Response, the go-ahead. */
static int ping_finish(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		       struct icf_obs *o, const struct icf_msg *rr)
{
	struct icf_msg m;

	if (icf_send_read_resp(ep, &rr->rreq) < 0)
		return 0;
	return icf_expect_msg(ep, o, RDMAP_OP_SEND, icf_tmo(c, x), &m);
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
/* The flow of a case, by role and profile                                  */
/* ---------------------------------------------------------------------- */

static bool rping_client(const struct icf_ctx *x)
{
	return x->role == ICF_ROLE_CLIENT && x->profile == ICF_PROFILE_RPING;
}

int icf_flow_after_mpa(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		       struct icf_obs *o)
{
	if (x->role == ICF_ROLE_SERVER)
		return icf_srv_established(c, x, ep, o);
	if (x->profile == ICF_PROFILE_PERFTEST)
		return icf_pt_established(c, x, ep, o);
	return 1;
}

int icf_flow_start(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		   struct icf_obs *o)
{
	struct mpa_frame rep;
	char why[sizeof(o->why)];

	if (x->role == ICF_ROLE_SERVER) {
		/* the client's Request, our standard Reply */
		if (icf_ep_wait_frame(ep, icf_tmo(c, x)) != 1) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why), "no MPA Request from the client (%s)",
				 ep->req_err ? "malformed"
				 : ep->eof   ? "closed"
					     : "timed out");
			return 0;
		}
		icf_srv_std_reply(&ep->req, &rep);
		if (icf_ep_send_frame(ep, &rep) < 0) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why), "send: %s", strerror(ep->err));
			return 0;
		}
		icf_ep_start(ep);
		o->full = true;
	} else if (!handshake(c, x, ep, o)) {
		return 0;
	}
	if (icf_flow_after_mpa(c, x, ep, o))
		return 1;
	/* the exchange before the case's point failed: not the case's verdict */
	memcpy(why, o->why, sizeof(why));
	memset(o, 0, sizeof(*o));
	o->connected = true;
	o->skipped = true;
	snprintf(o->why, sizeof(o->why), "%s: %.80s",
		 x->role == ICF_ROLE_SERVER ? "the client did not start its ping"
					    : "perftest's key exchange failed",
		 why[0] ? why : "?");
	return 0;
}

void icf_flow_next(const struct icf_ctx *x, struct icf_ep *ep)
{
	if (x->role == ICF_ROLE_SERVER)
		icf_srv_read(ep);
	else if (x->profile == ICF_PROFILE_PERFTEST)
		icf_pt_step(ep);
	else
		send_info(ep, ICF_OUR_SRC_TO, ICF_OUR_SRC_STAG);
}

int icf_flow_accept(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		    struct icf_obs *o)
{
	if (x->role == ICF_ROLE_SERVER)
		return icf_srv_ping(c, x, ep, o, false, RDMAP_OP_SEND, 1);
	if (x->profile == ICF_PROFILE_PERFTEST)
		return icf_pt_accept(c, x, ep, o);
	return ping(c, x, ep, o);
}

/* The peer's buffer as the Data Sink of a Read Request, which is how the
 * AFTER stage's builders take it (rping's server: its real Read Request). */
static void pbuf_as_rreq(const struct icf_ep *ep, struct rdmap_read_req *r)
{
	memset(r, 0, sizeof(*r));
	r->sink_stag = ep->pbuf.stag;
	r->sink_to = ep->pbuf.to;
	r->size = ep->pbuf.len;
}

static void skip(struct icf_obs *o, const char *why)
{
	o->skipped = true;
	snprintf(o->why, sizeof(o->why), "%s", why);
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
	int t = icf_tmo(c, x);
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
		icf_note_reply(ep, o);
		o->reset = ep->rst;
		return;
	}
	if (c->arg == M_TRUNC) {
		icf_ep_send_raw(ep, b, 10);
		shutdown(ep->fd, SHUT_WR);
		icf_ep_wait_frame(ep, t);
		icf_note_reply(ep, o);
		o->closed = icf_ep_wait_close(ep, t, NULL);
		o->reset = ep->rst;
		return;
	}
	if (c->arg == M_EARLY) {
		/* an FPDU right behind the Request, before the Reply (RFC 5044
		 * §7.1.2: the Initiator sends FPDUs only once the Reply is in) */
		uint8_t u[64], pl[ICF_INFO_LEN];
		size_t k;

		icf_info(pl, ICF_OUR_SRC_TO, ICF_OUR_SRC_STAG, ICF_PING_SIZE);
		k = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_SEND), DDP_QN_SEND, 1, 0, true, 0,
				 NULL, 0, pl, ICF_INFO_LEN);
		static uint8_t both[MPA_FRAME_MAX_LEN + ICF_FPDU_MAX];
		ssize_t m;

		/* one write, so the Responder has the stray octets before it
		 * can have replied */
		mpa_tx_init(&ep->tx, true, false, 0);
		memcpy(both, b, (size_t)n);
		m = icf_ep_frame(ep, u, k, ICF_MANGLE_NONE, 0, both + n);
		if (m > 0)
			icf_ep_send_raw(ep, both, (size_t)n + (size_t)m);
		icf_ep_wait_frame(ep, t);
		icf_note_reply(ep, o);
		icf_watch(c, x, ep, o, ICF_FOLLOW_NONE, NULL, 0);
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
		icf_watch(c, x, ep, o, ICF_FOLLOW_NEXT, NULL, 0);
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
		if (k < 0 || icf_send_ulpdu(ep, u, (size_t)k) < 0)
			return;
		if (rtr == MPA_RTR_SEND)
			ep->msn[DDP_QN_SEND]++;
		if (rtr == MPA_RTR_READ)
			ep->msn[DDP_QN_READ_REQ]++;
	}
	o->accepted = icf_flow_after_mpa(c, x, ep, o) && icf_flow_accept(c, x, ep, o);
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

/* Why a FIRST-stage case cannot run against a perftest server, or NULL. */
static const char *first_pt_skip(int arg)
{
	switch (arg) {
	case F_U_MO:
	case F_U_TOO_LONG:
	case F_U_SEND_4K:
	case F_SEND_INV:
	case F_SEND_SE_INV:
	case F_SEND_INV_STAG0:
	case F_WRITE_UNTAGGED:
	case F_RREQ_QN0:
		return "needs a Receive posted on QN 0 (rping's 16-octet one); perftest's "
		       "data QP posts none";
	case F_U_QN3:
	case F_OP_IMM:
	case F_OP_IMM_SE:
	case F_OP_ATOMIC_REQ:
	case F_OP_ATOMIC_RESP:
		return "assumes a peer without RFC 7306; perftest's devices may have it "
		       "(iwarp0 has)";
	default:
		return NULL;
	}
}

/* The cases whose violation is in the framing or the RDMAP control octet
 * of an otherwise normal first FPDU: perftest's is a Write. */
static bool first_carrier(int arg)
{
	switch (arg) {
	case F_CRC_BAD:
	case F_CRC_ZERO:
	case F_LEN_LONG:
	case F_LEN_SHORT:
	case F_MARKER_BAD:
	case F_RV0:
	case F_RV2:
	case F_RV3:
	case F_OP_C:
	case F_OP_D:
	case F_OP_E:
	case F_OP_F:
		return true;
	default:
		return false;
	}
}

static void run_first(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		      struct icf_obs *o)
{
	static uint8_t u[8192];
	uint8_t pl[ICF_INFO_LEN], hdr[64];
	uint8_t send = rdmap_ctrl_make(RDMAP_OP_SEND);
	enum icf_mangle mangle = ICF_MANGLE_NONE;
	struct rdmap_read_req rq;
	bool pt = x->profile == ICF_PROFILE_PERFTEST;
	int arg = 0;
	size_t n;

	if (pt && first_pt_skip(c->arg)) {
		skip(o, first_pt_skip(c->arg));
		return;
	}
	if (!icf_flow_start(c, x, ep, o))
		return;
	icf_info(pl, ICF_OUR_SRC_TO, ICF_OUR_SRC_STAG, ICF_PING_SIZE);
	n = icf_untagged(u, send, DDP_QN_SEND, 1, 0, true, 0, NULL, 0, pl, ICF_INFO_LEN);
	if (pt && first_carrier(c->arg))
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), ep->pbuf.stag, ep->pbuf.to, true,
			       NULL, ICF_PING_SIZE);
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
				 "the peer does not ask for Markers (its %s",
				 ep->responder ? "Request has M=0)" : "Reply has M=0)");
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
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), ICF_BOGUS_STAG, 0, true, NULL,
			       16);
		u[0] = (uint8_t)((u[0] & ~DDP_CTRL_DV) | 2);
		break;
	case F_U_QN3:
		n = icf_untagged(u, send, DDP_QN_ATOMIC_RESP, 1, 0, true, 0, NULL, 0, pl,
				 ICF_INFO_LEN);
		break;
	case F_U_QN_BIG:
		n = icf_untagged(u, send, 0xFFFFFFFFu, 1, 0, true, 0, NULL, 0, pl, ICF_INFO_LEN);
		break;
	case F_U_MSN2:
		n = icf_untagged(u, send, DDP_QN_SEND, 2, 0, true, 0, NULL, 0, pl, ICF_INFO_LEN);
		break;
	case F_U_MSN_FAR:
		n = icf_untagged(u, send, DDP_QN_SEND, 0x10000, 0, true, 0, NULL, 0, pl,
				 ICF_INFO_LEN);
		break;
	case F_U_MSN0:
		n = icf_untagged(u, send, DDP_QN_SEND, 0, 0, true, 0, NULL, 0, pl, ICF_INFO_LEN);
		break;
	case F_U_MO:
		n = icf_untagged(u, send, DDP_QN_SEND, 1, 4, true, 0, NULL, 0, pl, ICF_INFO_LEN);
		break;
	case F_U_TOO_LONG:
		n = icf_untagged(u, send, DDP_QN_SEND, 1, 0, true, 0, NULL, 0, NULL,
				 ICF_INFO_LEN + 1);
		break;
	case F_U_SEND_4K:
		n = icf_untagged(u, send, DDP_QN_SEND, 1, 0, true, 0, NULL, 0, NULL, 4096);
		break;
	case F_SHORT_HDR:
		n = 10;
		break;
	case F_T_STAG_BAD:
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), ICF_BOGUS_STAG, 0, true, NULL,
			       16);
		break;
	case F_T_STAG0:
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), 0, 0, true, NULL, 16);
		break;
	case F_RV0:
	case F_RV2:
	case F_RV3:
		/* the opcode stays: the carrier's (a Send, perftest's Write) */
		u[1] = (uint8_t)((c->arg - F_RV0 == 0 ? 0
				  : c->arg == F_RV2   ? 2
						      : 3)
					 << 6 |
				 (u[1] & 0x0F));
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
		rq = (struct rdmap_read_req){.sink_stag = ICF_OUR_SINK_STAG,
					     .sink_to = ICF_OUR_SINK_TO,
					     .size = 16,
					     .src_stag = ICF_BOGUS_STAG,
					     .src_to = 0x1000};
		rdmap_read_req_encode(&rq, hdr);
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ),
				 c->arg == F_RREQ_QN0 ? DDP_QN_SEND : DDP_QN_READ_REQ,
				 c->arg == F_RREQ_QN0 ? 1 : 2, 0, true, 0, hdr, RDMAP_READ_REQ_LEN,
				 NULL, 0);
		break;
	case F_SEND_INV_STAG0:
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_SEND_INV), DDP_QN_SEND, 1, 0, true, 0,
				 NULL, 0, pl, ICF_INFO_LEN);
		ep->msn[DDP_QN_SEND]++;
		break;
	case F_OP_IMM:
	case F_OP_IMM_SE:
		memset(hdr, 0x11, RDMAP_IMM_LEN);
		n = icf_untagged(
			u, rdmap_ctrl_make(c->arg == F_OP_IMM ? RDMAP_OP_IMM : RDMAP_OP_IMM_SE),
			DDP_QN_SEND, 1, 0, true, 0, hdr, RDMAP_IMM_LEN, NULL, 0);
		break;
	case F_OP_ATOMIC_REQ: {
		struct rdmap_atomic_req a = {.aop = RDMAP_AOP_FETCH_ADD,
					     .req_id = 1,
					     .stag = ICF_BOGUS_STAG,
					     .add_swap = 1};

		rdmap_atomic_req_encode(&a, hdr);
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_ATOMIC_REQ), DDP_QN_READ_REQ, 1, 0,
				 true, 0, hdr, RDMAP_ATOMIC_REQ_LEN, NULL, 0);
		break;
	}
	case F_OP_ATOMIC_RESP: {
		struct rdmap_atomic_resp a = {.req_id = 1, .orig = 7};

		rdmap_atomic_resp_encode(&a, hdr);
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_ATOMIC_RESP), DDP_QN_ATOMIC_RESP, 1, 0,
				 true, 0, hdr, RDMAP_ATOMIC_RESP_LEN, NULL, 0);
		break;
	}
	case F_SEND_QN1:
		n = icf_untagged(u, send, DDP_QN_READ_REQ, 1, 0, true, 0, NULL, 0, pl,
				 ICF_INFO_LEN);
		break;
	case F_WRITE_UNTAGGED:
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), DDP_QN_SEND, 1, 0, true, 0,
				 NULL, 0, pl, ICF_INFO_LEN);
		break;
	case F_SEND_TAGGED:
		n = icf_tagged(u, send, ICF_BOGUS_STAG, 0, true, pl, ICF_INFO_LEN);
		break;
	case F_SEND_INV:
	case F_SEND_SE_INV:
		n = icf_untagged(u,
				 rdmap_ctrl_make(c->arg == F_SEND_INV ? RDMAP_OP_SEND_INV
								      : RDMAP_OP_SEND_SE_INV),
				 DDP_QN_SEND, 1, 0, true, ICF_BOGUS_STAG, NULL, 0, pl,
				 ICF_INFO_LEN);
		ep->msn[DDP_QN_SEND]++;
		break;
	case F_RREQ_STAG_BAD:
		rq = (struct rdmap_read_req){.sink_stag = ICF_OUR_SINK_STAG,
					     .sink_to = ICF_OUR_SINK_TO,
					     .size = 16,
					     .src_stag = ICF_BOGUS_STAG,
					     .src_to = 0x1000};
		rdmap_read_req_encode(&rq, hdr);
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ, 1, 0, true,
				 0, hdr, RDMAP_READ_REQ_LEN, NULL, 0);
		break;
	case F_TERM: {
		struct rdmap_term tm = {.code = {.layer = 0, .etype = 2, .ecode = 0xFF}};
		ssize_t k = rdmap_term_encode(&tm, hdr, sizeof(hdr));

		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_TERMINATE), DDP_QN_TERMINATE, 1, 0,
				 true, 0, hdr, k > 0 ? (size_t)k : 0, NULL, 0);
		break;
	}
	case F_RRESP_UNSOLICITED:
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), ICF_BOGUS_STAG, 0, true,
			       NULL, 16);
		break;
	default:
		break;
	}
	icf_errant(o, u, n);
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
	icf_watch(c, x, ep, o, c->arg == F_TERM ? ICF_FOLLOW_NONE : ICF_FOLLOW_NEXT, NULL, 0);
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
	A_T_OTHER_CONN,
};

/*
 * An STag learned on one connection, used on another (RFC 5041 §7.2 "STag not
 * associated with RDMAP Stream"): a second connection plays rping's client up to the peer's Read
 * Request, which names the sink buffer it registered for that connection;
 * the case's own connection then writes there.  A peer that registers per
 * connection (rping allocates a PD per connection) answers "STag not
 * associated with the RDMAP stream"; one that takes the Write lets any client
 * reach any other's memory.  The peer's server must take a second client
 * while the first is connected (rping -P does).
 */
static void other_conn(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		       struct icf_obs *o)
{
	static struct icf_ep side;
	static uint8_t u[256];
	struct icf_obs so;
	struct icf_msg rr;
	char err[128];
	size_t n;

	memset(&so, 0, sizeof(so));
	if (icf_ep_open(&side, (const struct sockaddr *)&x->addr, x->addrlen, x->timeout_ms, false,
			x->verbose, err, sizeof(err)) < 0) {
		skip(o, "a second connection could not be made");
		return;
	}
	side.stop = x->stop;
	if (!icf_flow_start(c, x, &side, &so) || !ping_read(c, x, &side, &so, &rr)) {
		icf_ep_close(&side, NULL, NULL);
		skip(o, "the server did not serve a second client while the first was "
			"connected (rping -P does)");
		return;
	}
	if (!icf_flow_start(c, x, ep, o)) {
		icf_ep_close(&side, NULL, NULL);
		return;
	}
	n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), rr.rreq.sink_stag, rr.rreq.sink_to, true,
		       NULL, 16);
	icf_errant(o, u, n);
	icf_send_ulpdu(ep, u, n);
	icf_watch(c, x, ep, o, ICF_FOLLOW_NONE, NULL, 0);
	icf_ep_close(&side, NULL, NULL);
}

/* Why an AFTER-stage case cannot run in this role and profile, or NULL. */
static const char *after_skip(const struct icf_case *c, const struct icf_ctx *x,
			      const struct icf_ep *ep, bool known)
{
	bool pt = x->profile == ICF_PROFILE_PERFTEST && x->role == ICF_ROLE_CLIENT;

	switch (c->arg) {
	case A_RRESP_STAG:
	case A_RRESP_BOUNDS:
	case A_RRESP_AGAIN:
		if (!rping_client(x))
			return "needs a Read Request of the peer's: the peer never reads from us";
		return NULL;
	case A_SEND_2SEG:
	case A_SEND_SE:
		if (pt)
			return "needs a Receive posted on QN 0; perftest's data QP posts none";
		return NULL;
	case A_T_OTHER_CONN:
		if (pt)
			return "a perftest server serves one client";
		return NULL;
	case A_T_BELOW:
		if (pt)
			return "perftest's memory region begins below the address it advertises "
			       "(ib_write_bw's takes a Write 4 KiB below it)";
		return NULL;
	case A_RREQ_BOUNDS:
	case A_RREQ_WRAP:
	case A_RREQ_BIG:
	case A_RREQ_OK:
	case A_IRD_OVERFLOW:
		if (pt && known && !ep->pbuf.readable)
			return "the server's buffer is not for remote read (a write test: its "
			       "key message has outstanding reads 1)";
		return NULL;
	default:
		return NULL;
	}
}

static void run_after(const struct icf_case *c, const struct icf_ctx *x, struct icf_ep *ep,
		      struct icf_obs *o)
{
	static uint8_t u[8192];
	uint8_t hdr[64];
	struct icf_msg rr, m;
	const struct rdmap_read_req *p;
	struct rdmap_read_req rq, pr;
	unsigned tolerate = 0;
	enum icf_follow follow = ICF_FOLLOW_READ_RESP;
	static uint8_t burst[(IRD_BURST_MAX + 1) * 64];
	size_t n = 0, blen = 0;
	int t = icf_tmo(c, x);

	if (after_skip(c, x, ep, false)) {
		skip(o, after_skip(c, x, ep, false));
		return;
	}
	if (c->arg == A_T_OTHER_CONN) {
		other_conn(c, x, ep, o);
		return;
	}
	if (!icf_flow_start(c, x, ep, o))
		return;
	if (after_skip(c, x, ep, true)) {
		skip(o, after_skip(c, x, ep, true));
		return;
	}
	if (c->arg == A_RREQ_ZERO || c->arg == A_WRITE_ZERO || c->arg == A_SEND_2SEG ||
	    c->arg == A_SEND_SE) {
		/* accepted forms, before the ping */
		if (c->arg == A_RREQ_ZERO) {
			/* RFC 5040 §4.4: size 0: the source is not validated */
			rq = (struct rdmap_read_req){.sink_stag = ICF_OUR_SINK_STAG,
						     .sink_to = ICF_OUR_SINK_TO,
						     .src_stag = ICF_BOGUS_STAG,
						     .src_to = 0x1000};
			icf_send_read_req(ep, &rq);
			if (!icf_expect_msg(ep, o, RDMAP_OP_READ_RESP, t, &m))
				return;
			if (m.len != 0 || m.stag != ICF_OUR_SINK_STAG) {
				snprintf(o->why, sizeof(o->why), "Read Response of %u octets",
					 m.len);
				return;
			}
			o->accepted = icf_flow_accept(c, x, ep, o) == 1;
		} else if (c->arg == A_WRITE_ZERO) {
			/* RFC 5041 §7.1: the checks are for non-zero-length segments */
			n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), ICF_BOGUS_STAG, 0, true,
				       NULL, 0);
			icf_send_ulpdu(ep, u, n);
			o->accepted = icf_flow_accept(c, x, ep, o) == 1;
		} else if (x->role == ICF_ROLE_SERVER) {
			/* our go-ahead as a Send with Solicited Event (RFC 5040 §5.3),
			 * or in two segments (RFC 5041 §5.2) */
			o->accepted =
				icf_srv_ping(c, x, ep, o, false,
					     c->arg == A_SEND_SE ? RDMAP_OP_SEND_SE : RDMAP_OP_SEND,
					     c->arg == A_SEND_SE ? 1 : 2) == 1;
		} else if (c->arg == A_SEND_SE) {
			/* RFC 5040 §5.3: Send with Solicited Event is a Send */
			uint8_t pl[ICF_INFO_LEN];

			icf_info(pl, ICF_OUR_SRC_TO, ICF_OUR_SRC_STAG, ICF_PING_SIZE);
			icf_send_msg(ep, RDMAP_OP_SEND_SE, pl, ICF_INFO_LEN);
			o->accepted = icf_expect_msg(ep, o, RDMAP_OP_READ_REQ, t, &rr) &&
				      ping_finish(c, x, ep, o, &rr);
		} else {
			/* RFC 5041 §5.2: one message in two segments */
			uint8_t pl[ICF_INFO_LEN];
			uint8_t s = rdmap_ctrl_make(RDMAP_OP_SEND);

			icf_info(pl, ICF_OUR_SRC_TO, ICF_OUR_SRC_STAG, ICF_PING_SIZE);
			n = icf_untagged(u, s, DDP_QN_SEND, 1, 0, false, 0, NULL, 0, pl, 8);
			icf_send_ulpdu(ep, u, n);
			n = icf_untagged(u, s, DDP_QN_SEND, 1, 8, true, 0, NULL, 0, pl + 8, 8);
			icf_send_ulpdu(ep, u, n);
			ep->msn[DDP_QN_SEND]++;
			o->accepted = icf_expect_msg(ep, o, RDMAP_OP_READ_REQ, t, &rr) &&
				      ping_finish(c, x, ep, o, &rr);
		}
		o->closed = ep->eof;
		return;
	}
	if (!rping_client(x)) {
		/* the peer's buffer: the client's info (-s), perftest's key */
		pbuf_as_rreq(ep, &pr);
		p = &pr;
	} else if (!ping_read(c, x, ep, o, &rr)) {
		o->closed = ep->eof;
		if (!o->term) {
			char why[sizeof(o->why)];

			memcpy(why, o->why, sizeof(why));
			o->skipped = true;
			snprintf(o->why, sizeof(o->why),
				 "no Read Request after our info Send: %.80s", why[0] ? why : "?");
		}
		return;
	} else {
		p = &rr.rreq;
	}
	switch (c->arg) {
	case A_T_BOUNDS:
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag,
			       p->sink_to + ICF_FAR, true, NULL, 16);
		break;
	case A_T_BELOW:
		if (p->sink_to < 4096) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why), "the peer's buffer starts at TO %llu",
				 (unsigned long long)p->sink_to);
			return;
		}
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag, p->sink_to - 4096,
			       true, NULL, 16);
		break;
	case A_T_WRAP:
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag, UINT64_MAX - 7,
			       true, NULL, 16);
		break;
	case A_RRESP_STAG:
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), p->sink_stag ^ 0x00FFFF00u,
			       p->sink_to, true, NULL, p->size < 4096 ? p->size : 4096);
		follow = ICF_FOLLOW_NONE;
		break;
	case A_RRESP_BOUNDS:
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), p->sink_stag,
			       p->sink_to + ICF_FAR, true, NULL, p->size < 4096 ? p->size : 4096);
		follow = ICF_FOLLOW_NONE;
		break;
	case A_RREQ_BOUNDS:
	case A_RREQ_WRAP:
	case A_RREQ_BIG:
		rq = (struct rdmap_read_req){.sink_stag = ICF_OUR_SINK_STAG,
					     .sink_to = ICF_OUR_SINK_TO,
					     .size = c->arg == A_RREQ_BIG ? (uint32_t)ICF_FAR : 16,
					     .src_stag = p->sink_stag,
					     .src_to = c->arg == A_RREQ_WRAP ? UINT64_MAX - 7
						       : c->arg == A_RREQ_BIG
							       ? p->sink_to
							       : p->sink_to + ICF_FAR};
		rdmap_read_req_encode(&rq, hdr);
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
				 ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr, RDMAP_READ_REQ_LEN,
				 NULL, 0);
		break;
	case A_IRD_OVERFLOW: {
		/* RFC 6581 §9.1: no more Read Requests in flight than the
		 * responder's IRD; RFC 5040 names no code for the overflow */
		unsigned ird = ep->reply.enhanced ? ep->reply.ird : 0;

		if (!ird || ird > IRD_BURST_MAX) {
			o->skipped = true;
			snprintf(o->why, sizeof(o->why), "the peer's IRD is %s",
				 ird ? "not bounded (0x3FFF or > 128)"
				     : "unknown (no IRD/ORD word)");
			return;
		}
		rq = (struct rdmap_read_req){.sink_stag = ICF_OUR_SINK_STAG,
					     .sink_to = ICF_OUR_SINK_TO,
					     .size = 16,
					     .src_stag = p->sink_stag,
					     .src_to = p->sink_to};
		rdmap_read_req_encode(&rq, hdr);
		/* all in one write, so that the peer holds the last one before it
		 * can have answered (and freed the IRD slot of) the first */
		for (unsigned i = 0; i <= ird; i++) {
			ssize_t k;

			n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
					 ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr,
					 RDMAP_READ_REQ_LEN, NULL, 0);
			k = icf_ep_frame(ep, u, n, ICF_MANGLE_NONE, 0, burst + blen);
			if (k > 0)
				blen += (size_t)k;
		}
		tolerate = 1u << RDMAP_OP_READ_RESP;
		/* what would show a peer that took them all: rping's client
		 * answering the go-ahead, rping's server its go-ahead */
		if (x->role == ICF_ROLE_SERVER)
			follow = ICF_FOLLOW_GO;
		else if (x->profile == ICF_PROFILE_PERFTEST)
			follow = ICF_FOLLOW_NONE;
		break;
	}
	case A_TERM: {
		struct rdmap_term tm = {.code = {.layer = 0, .etype = 2, .ecode = 0xFF}};
		ssize_t k = rdmap_term_encode(&tm, hdr, sizeof(hdr));

		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_TERMINATE), DDP_QN_TERMINATE, 1, 0,
				 true, 0, hdr, k > 0 ? (size_t)k : 0, NULL, 0);
		follow = ICF_FOLLOW_NONE;
		break;
	}
	case A_WRITE_OK:
		/* an RDMA Write inside the buffer rping registered for remote write */
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_WRITE), p->sink_stag, p->sink_to, true,
			       NULL, 16);
		icf_send_ulpdu(ep, u, n);
		o->accepted = rping_client(x) ? ping_finish(c, x, ep, o, &rr)
					      : icf_flow_accept(c, x, ep, o);
		o->closed = ep->eof;
		return;
	case A_RREQ_OK:
		rq = (struct rdmap_read_req){.sink_stag = ICF_OUR_SINK_STAG,
					     .sink_to = ICF_OUR_SINK_TO,
					     .size = 16,
					     .src_stag = p->sink_stag,
					     .src_to = p->sink_to};
		rdmap_read_req_encode(&rq, hdr);
		n = icf_untagged(u, rdmap_ctrl_make(RDMAP_OP_READ_REQ), DDP_QN_READ_REQ,
				 ep->msn[DDP_QN_READ_REQ]++, 0, true, 0, hdr, RDMAP_READ_REQ_LEN,
				 NULL, 0);
		icf_send_ulpdu(ep, u, n);
		if (icf_expect_msg(ep, o, RDMAP_OP_READ_RESP, t, &m) && m.len == 16 &&
		    m.stag == ICF_OUR_SINK_STAG && m.to == ICF_OUR_SINK_TO)
			o->accepted = rping_client(x) ? ping_finish(c, x, ep, o, &rr)
						      : icf_flow_accept(c, x, ep, o);
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
		n = icf_tagged(u, rdmap_ctrl_make(RDMAP_OP_READ_RESP), p->sink_stag, p->sink_to,
			       true, NULL, p->size < 4096 ? p->size : 4096);
		follow = ICF_FOLLOW_NONE;
		break;
	default:
		break;
	}
	icf_errant(o, u, n);
	if (blen)
		icf_ep_send_raw(ep, burst, blen);
	else
		icf_send_ulpdu(ep, u, n);
	icf_watch(c, x, ep, o, follow, p, tolerate);
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
	{"ddp.t.stag_other_conn", "RFC 5041 §7.2",
	 "RDMA Write with the STag the peer named on another connection of ours",
	 TERM1(1, 1, 0x02, D), run_after, A_T_OTHER_CONN, 0},
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

/* The server role runs the FIRST and AFTER cases that need no Read
 * Request of the peer's (rping's client never reads), as "srv." + id; not
 * the one that needs two connections of ours to the peer. */
static bool srv_too(const struct icf_case *c)
{
	if (c->run == run_first)
		return true;
	return c->run == run_after && c->arg != A_RRESP_STAG && c->arg != A_RRESP_BOUNDS &&
	       c->arg != A_RRESP_AGAIN && c->arg != A_T_OTHER_CONN;
}

/* Where the server role's form of a case differs in words. */
static const char *srv_desc(const struct icf_case *c)
{
	if (c->run != run_after)
		return c->desc;
	switch (c->arg) {
	case A_SEND_2SEG:
		return "our go-ahead Send in two segments";
	case A_SEND_SE:
		return "our go-ahead as a Send with Solicited Event";
	case A_TERM:
		return "a Terminate from us after the client's info Send";
	case A_IRD_OVERFLOW:
		return "IRD + 1 Read Requests in flight (the client's IRD)";
	default:
		return c->desc;
	}
}

#define NCASES	(sizeof(cases) / sizeof(cases[0]))
#define SRV_MAX (NCASES + 64)
#define SRV_PFX "srv."
#define ID_MAX	48

const struct icf_case *icf_cases(enum icf_role role, size_t *n)
{
	static struct icf_case srv[SRV_MAX];
	static char ids[SRV_MAX][ID_MAX];
	static size_t nsrv;
	const struct icf_case *own;
	size_t nown;

	if (role == ICF_ROLE_CLIENT) {
		*n = NCASES;
		return cases;
	}
	if (!nsrv) {
		own = icf_srv_mpa_cases(&nown);
		for (size_t i = 0; i < nown && nsrv < SRV_MAX; i++)
			srv[nsrv++] = own[i];
		for (size_t i = 0; i < NCASES && nsrv < SRV_MAX; i++) {
			if (!srv_too(&cases[i]))
				continue;
			srv[nsrv] = cases[i];
			snprintf(ids[nsrv], ID_MAX, SRV_PFX "%s", cases[i].id);
			srv[nsrv].id = ids[nsrv];
			srv[nsrv].desc = srv_desc(&cases[i]);
			nsrv++;
		}
	}
	*n = nsrv;
	return srv;
}

/* Why a case cannot run in this role and profile, known before connecting. */
static const char *static_skip(const struct icf_case *c, const struct icf_ctx *x)
{
	if (c->run == run_first && x->profile == ICF_PROFILE_PERFTEST)
		return first_pt_skip(c->arg);
	if (c->run == run_after)
		return after_skip(c, x, NULL, false);
	return NULL;
}

/* The case's connection to the peer's server.  perftest's server listens
 * for the data connection only once the control exchange has reached it,
 * and its client tries again while the connection is refused (the RDMA CM's
 * retry): so do we, up to the timeout. */
static int open_data(const struct icf_ctx *x, struct icf_ep *ep, bool pt, char *err, size_t len)
{
	uint64_t deadline = iwt_now_ns() + (uint64_t)x->timeout_ms * 1000000u;

	for (;;) {
		if (icf_ep_open(ep, (const struct sockaddr *)&x->addr, x->addrlen, x->timeout_ms,
				x->pcap_dir != NULL, x->verbose, err, len) == 0)
			return 0;
		if (!pt || ep->err != ECONNREFUSED || iwt_ms_until(deadline) == 0 ||
		    (x->stop && *x->stop))
			return -1;
		usleep(PT_RETRY_MS * 1000);
	}
}

void icf_case_run(const struct icf_case *c, const struct icf_ctx *x, struct icf_obs *o)
{
	static struct icf_ep ep, ctl;
	char err[128], path[4096];
	const char *pp = NULL;
	bool pt = x->role == ICF_ROLE_CLIENT && x->profile == ICF_PROFILE_PERFTEST;
	const char *why;
	int r;

	memset(o, 0, sizeof(*o));
	why = static_skip(c, x);
	if (why) {
		/* known before any connection: none is made */
		o->connected = true;
		skip(o, why);
		return;
	}
	if (x->role == ICF_ROLE_SERVER) {
		r = icf_ep_accept(&ep, x->lfd, x->accept_ms, x->stop, x->pcap_dir != NULL,
				  x->verbose, err, sizeof(err));
		if (r <= 0) {
			if (r == 0)
				snprintf(err, sizeof(err), "no client connected within %d ms",
					 x->accept_ms);
			snprintf(o->why, sizeof(o->why), "%s", err);
			return;
		}
	} else {
		if (pt) {
			/* perftest: the control connection first, as its client */
			if (icf_pt_open(x, &ctl, err, sizeof(err)) < 0) {
				o->connected = ctl.fd >= 0 || ctl.full;
				o->skipped = o->connected;
				snprintf(o->why, sizeof(o->why), "%s", err);
				if (x->pcap_dir && o->connected) {
					snprintf(path, sizeof(path), "%s/%s.pcap", x->pcap_dir,
						 c->id);
					pp = path;
				}
				if (icf_ep_close(&ctl, pp, NULL) < 0)
					fprintf(stderr, "iwconform: %s: %s\n", path,
						strerror(errno));
				return;
			}
		}
		if (open_data(x, &ep, pt, err, sizeof(err)) < 0) {
			snprintf(o->why, sizeof(o->why), "%s", err);
			if (pt)
				icf_ep_close(&ctl, NULL, NULL);
			return;
		}
		ep.stop = x->stop;
		ep.ctl = pt ? &ctl : NULL;
	}
	o->connected = true;
	c->run(c, x, &ep, o);
	if (pt && ep.pbuf.valid)
		icf_pt_finish(x, &ep);
	if (x->pcap_dir) {
		snprintf(path, sizeof(path), "%s/%s.pcap", x->pcap_dir, c->id);
		pp = path;
	}
	if (icf_ep_close(&ep, pp, ep.ctl) < 0)
		fprintf(stderr, "iwconform: %s: %s\n", path, strerror(errno));
}
