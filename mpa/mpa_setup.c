/* SPDX-License-Identifier: MIT */
/*
 * mpa_setup.c - the MPA startup phase: Request/Reply exchange and the
 * RFC 6581 negotiation of revision, IRD/ORD and peer-to-peer RTR.
 *
 * Theory of operation (RFC 5044 §7.1.2, RFC 6581 §5, §9, §10).
 *
 *   Initiator: IDLE --connect()--> SEND_REQUEST --all octets written-->
 *	WAIT_REPLY --Reply R=0--> ESTABLISHED, --Reply R=1--> REJECTED.
 *	Input is accepted in SEND_REQUEST too, so a caller may read before it
 *	has finished writing.
 *   Responder: WAIT_REQUEST --Request--> REQUEST_RECEIVED --accept()-->
 *	ESTABLISHED (wait_first_fpdu), --reject()--> REJECTED.
 *   Any protocol error, timeout or close moves to FAILED; the first error is
 *   kept in s->error and returned by every later call.  Local API misuse
 *   (wrong role/state, private data too long) returns IW_ESTATE/IW_EINVAL and
 *   changes nothing.
 *
 * Input: bytes are gathered in rxbuf until mpa_frame_decode() accepts a whole
 * frame.  We copy at most up to the end of the frame as far as it is known
 * (first the 20-octet header, then PD_Length more), so the count returned by
 * read_stream() stops exactly at the frame end and whatever follows is the
 * peer's first full-operation data.  Nothing the peer may legally send
 * follows a Request before our Reply (RFC 5044 §7.1.2 rule 3: the Initiator
 * waits for the Reply), so octets arriving in REQUEST_RECEIVED are
 * IW_EMPA_UNEXPECTED; this is also how a PD_Length smaller than the data the
 * peer actually sent shows up in a stream.
 *
 * Negotiation choices:
 *   - Revision (RFC 6581 §10): the Responder answers min(Request rev, our
 *     rev) and a rev-2 Responder answers a rev-1 Request with an unenhanced
 *     rev-1 Reply.  Symmetrically, an Initiator that sent rev 2 accepts a
 *     rev-1 Reply and continues as plain RFC 5044 (no IRD/ORD word, no
 *     peer-to-peer; params.enhanced = false tells the ULP, which handles
 *     IRD/ORD and the RTR itself).  Linux siw instead fails the connection;
 *     RFC 6581 §10 keeps revision 1 interoperable, so we do.  A Reply whose
 *     revision is higher than the Request's is IW_EMPA_REV, and a rev-2 Reply
 *     without S to our enhanced Request is IW_EMPA_FRAME (RFC 6581 §6,
 *     §10: an enhanced Request gets an enhanced Reply).
 *   - IRD/ORD (RFC 6581 §9.1): the Responder answers IRD = its configured
 *     capacity (the Initiator then lowers its ORD to it) and ORD =
 *     min(cfg.ord, Initiator IRD).  The Initiator fails with IW_EMPA_IRD
 *     (Terminate code 6) when its IRD is below the Responder's ORD, and sets
 *     ORD = min(cfg.ord, Responder IRD).  0x3FFF anywhere means "no automatic
 *     negotiation": it is echoed and the matching local value is unchanged.
 *   - Peer-to-peer (RFC 6581 §9.2): the Responder echoes A and offers exactly
 *     one RTR form, preferring Write (no receive buffer, no IRD), then Read,
 *     then Send (consumes a posted receive), from those offered that it
 *     accepts, else its own preferred form; offering Read it raises a zero
 *     IRD to 1 so the zero-length Read can be answered.  The Initiator
 *     requires A to be echoed (IW_EMPA_FRAME) and picks one offered form it
 *     can send with the same preference, else IW_EMPA_RTR (code 7).
 *   - Markers: a peer requiring Markers when cfg.accept_markers is false is
 *     an administrative refusal (every sender can generate Markers, RFC 5044
 *     §7.1.1): the Responder answers with a reject Reply on its own, the
 *     Initiator fails with IW_EMPA_LOCAL.
 *
 * Time: the whole startup is bounded by cfg.timeout_ns from init (0 = no
 * bound).  Both the expiry API and read_stream(now) enforce the deadline, so a
 * Responder whose ULP never answers times out too.
 */
#include <string.h>

#include "iw_bytes.h"
#include "iw_log.h"
#include <iwarp/mpa.h>

#define MPA_DEFAULT_IRD	       16
#define MPA_DEFAULT_ORD	       16
#define MPA_DEFAULT_TIMEOUT_NS (10ull * 1000 * 1000 * 1000)
#define MPA_OFF_PDLEN	       18 /* PD_Length in the frame header (RFC 5044 §7.1.1) */

static const char *const mpa_setup_state_names[] = {
	[MPA_SETUP_IDLE] = "IDLE",
	[MPA_SETUP_SEND_REQUEST] = "SEND_REQUEST",
	[MPA_SETUP_WAIT_REPLY] = "WAIT_REPLY",
	[MPA_SETUP_WAIT_REQUEST] = "WAIT_REQUEST",
	[MPA_SETUP_REQUEST_RECEIVED] = "REQUEST_RECEIVED",
	[MPA_SETUP_ESTABLISHED] = "ESTABLISHED",
	[MPA_SETUP_REJECTED] = "REJECTED",
	[MPA_SETUP_FAILED] = "FAILED",
};

const char *mpa_setup_state_name(enum mpa_setup_state st)
{
	if ((unsigned)st >= IW_ARRAY_SIZE(mpa_setup_state_names))
		return "UNKNOWN";
	return mpa_setup_state_names[st];
}

void mpa_config_default(struct mpa_config *cfg)
{
	if (!cfg)
		return;
	/* RFC 5044 §4.4: CRC must be on unless an administrator turns it off.
	 * Markers off, peer-to-peer off: what Linux siw expects. */
	*cfg = (struct mpa_config){.rev = MPA_REV2,
				   .crc = true,
				   .accept_markers = true,
				   .rtr = MPA_RTR_ALL,
				   .ird = MPA_DEFAULT_IRD,
				   .ord = MPA_DEFAULT_ORD,
				   .timeout_ns = MPA_DEFAULT_TIMEOUT_NS};
}

static bool mpa_setup_terminal(const struct mpa_setup *s)
{
	return s->state == MPA_SETUP_ESTABLISHED || s->state == MPA_SETUP_REJECTED ||
	       s->state == MPA_SETUP_FAILED;
}

/* Move to FAILED keeping the first error; returns the error to report. */
static int mpa_setup_fail(struct mpa_setup *s, int err)
{
	if (s->state != MPA_SETUP_FAILED) {
		iw_log(IW_LOG_DEBUG, "mpa setup: %s -> FAILED (%s)", mpa_setup_state_name(s->state),
		       mpa_errname(err));
		s->state = MPA_SETUP_FAILED;
		s->error = err;
		s->deadline = UINT64_MAX;
	}
	return s->error;
}

static void mpa_setup_finish(struct mpa_setup *s, enum mpa_setup_state st)
{
	iw_log(IW_LOG_DEBUG, "mpa setup: %s -> %s", mpa_setup_state_name(s->state),
	       mpa_setup_state_name(st));
	s->state = st;
	s->deadline = UINT64_MAX;
	if (st == MPA_SETUP_REJECTED)
		s->error = IW_EMPA_REJECTED;
}

static bool mpa_config_valid(const struct mpa_config *cfg, enum mpa_role role)
{
	if (cfg->rev != MPA_REV1 && cfg->rev != MPA_REV2)
		return false;
	if (cfg->rtr & ~MPA_RTR_ALL)
		return false;
	if (cfg->ird > MPA_IRD_ORD_MAX || cfg->ord > MPA_IRD_ORD_MAX)
		return false;
	/* An Initiator asking for peer-to-peer must offer an RTR form, and an
	 * RFC 6581 Responder must support at least one (RFC 6581 §9.2). */
	if (cfg->rev == MPA_REV2 && cfg->rtr == MPA_RTR_NONE && (role == MPA_RESPONDER || cfg->p2p))
		return false;
	return true;
}

int mpa_setup_init(struct mpa_setup *s, enum mpa_role role, const struct mpa_config *cfg,
		   uint64_t now)
{
	if (!s || !cfg || (role != MPA_INITIATOR && role != MPA_RESPONDER))
		return IW_EINVAL;
	if (!mpa_config_valid(cfg, role))
		return IW_EINVAL;
	memset(s, 0, sizeof(*s));
	s->role = role;
	s->cfg = *cfg;
	s->state = role == MPA_INITIATOR ? MPA_SETUP_IDLE : MPA_SETUP_WAIT_REQUEST;
	s->error = IW_OK;
	if (cfg->timeout_ns == 0 || now > UINT64_MAX - cfg->timeout_ns)
		s->deadline = UINT64_MAX;
	else
		s->deadline = now + cfg->timeout_ns;
	return IW_OK;
}

/* Largest ULP private data with or without the IRD/ORD word. */
static size_t mpa_pd_limit(bool enhanced)
{
	return MPA_PD_MAX - (enhanced ? MPA_IRD_ORD_LEN : 0);
}

static int mpa_setup_queue(struct mpa_setup *s, const struct mpa_frame *f)
{
	ssize_t n = mpa_frame_encode(f, s->txbuf, sizeof(s->txbuf));

	if (n < 0)
		return (int)n;
	s->txlen = (size_t)n;
	s->txoff = 0;
	return IW_OK;
}

int mpa_setup_connect(struct mpa_setup *s, const void *pd, size_t pd_len)
{
	struct mpa_frame f;
	bool enhanced;
	int rc;

	if (!s)
		return IW_EINVAL;
	if (s->state == MPA_SETUP_FAILED)
		return s->error;
	if (s->role != MPA_INITIATOR || s->state != MPA_SETUP_IDLE)
		return IW_ESTATE;
	/* We never send rev 2 without S: a rev-2 Request without any enhanced
	 * feature gains nothing and some rev-1 peers reject it (RFC 6581 §6). */
	enhanced = s->cfg.rev == MPA_REV2;
	if (pd_len > mpa_pd_limit(enhanced) || (pd_len && !pd))
		return IW_EINVAL;

	memset(&f, 0, sizeof(f));
	f.reply = false;
	f.markers = s->cfg.markers;
	f.crc = s->cfg.crc;
	f.rev = s->cfg.rev;
	f.enhanced = enhanced;
	if (enhanced) {
		f.p2p = s->cfg.p2p;
		/* Client-server requires B = C = D = 0 (RFC 6581 §9.2). */
		f.rtr = s->cfg.p2p ? s->cfg.rtr : MPA_RTR_NONE;
		f.ird = s->cfg.ird;
		f.ord = s->cfg.ord;
	}
	f.pd = pd;
	f.pd_len = (uint16_t)pd_len;
	rc = mpa_setup_queue(s, &f);
	if (rc < 0)
		return rc;
	s->state = MPA_SETUP_SEND_REQUEST;
	return IW_OK;
}

/* One RTR form out of a mask: Write, then Read, then Send (see the top). */
static uint8_t mpa_rtr_pick(uint8_t mask)
{
	if (mask & MPA_RTR_WRITE)
		return MPA_RTR_WRITE;
	if (mask & MPA_RTR_READ)
		return MPA_RTR_READ;
	if (mask & MPA_RTR_SEND)
		return MPA_RTR_SEND;
	return MPA_RTR_NONE;
}

/* Keep a decoded frame: peer.pd must not point into rxbuf's raw frame. */
static void mpa_setup_keep_peer(struct mpa_setup *s, const struct mpa_frame *f)
{
	s->peer = *f;
	if (f->pd_len)
		memcpy(s->peer_pd, f->pd, f->pd_len);
	s->peer.pd = s->peer_pd;
}

/* Responder: build and queue the Reply; fills s->params for an accept. */
/*
 * The parameters both roles derive the same way from our config and the
 * peer's frame: revision and word from the frame in use, CRC on both ways if
 * either frame asked for it and Markers per direction, each side adding them
 * iff the other's M (RFC 5044 §7.1.1); IRD/ORD start from our config and the
 * peer's raw values default to "no negotiation" until its word is read.
 */
static void mpa_params_base(struct mpa_params *p, const struct mpa_config *cfg, uint8_t rev,
			    bool enhanced, const struct mpa_frame *peer)
{
	memset(p, 0, sizeof(*p));
	p->rev = rev;
	p->enhanced = enhanced;
	p->crc = cfg->crc || peer->crc;
	p->markers_tx = peer->markers;
	p->markers_rx = cfg->markers;
	p->ird = cfg->ird;
	p->ord = cfg->ord;
	p->peer_ird = MPA_IRD_ORD_MAX;
	p->peer_ord = MPA_IRD_ORD_MAX;
}

static int mpa_setup_reply(struct mpa_setup *s, bool reject, const void *pd, size_t pd_len)
{
	const struct mpa_frame *req = &s->peer;
	const struct mpa_config *cfg = &s->cfg;
	struct mpa_params p;
	struct mpa_frame f;
	int rc;

	memset(&f, 0, sizeof(f));
	f.reply = true;
	f.reject = reject;
	f.markers = cfg->markers;
	f.crc = cfg->crc;
	/* RFC 6581 §10: never answer above the Request's revision. */
	f.rev = IW_MIN(req->rev, cfg->rev);
	f.enhanced = req->enhanced && f.rev == MPA_REV2;
	if (pd_len > mpa_pd_limit(f.enhanced) || (pd_len && !pd))
		return IW_EINVAL;
	f.pd = pd;
	f.pd_len = (uint16_t)pd_len;

	mpa_params_base(&p, cfg, f.rev, f.enhanced, req);
	/* RFC 5044 §7.1.2 rule 4: the Initiator sends the first FPDU. */
	p.wait_first_fpdu = true;

	if (f.enhanced) {
		p.peer_ird = req->ird;
		p.peer_ord = req->ord;
		/* Our ORD may never exceed the Initiator's IRD (RFC 6581 §9.1). */
		if (req->ird != MPA_IRD_ORD_MAX && cfg->ord != MPA_IRD_ORD_MAX)
			p.ord = IW_MIN(cfg->ord, req->ird);
		/* IRD is a resource: we report what we have and let the
		 * Initiator lower its ORD, rather than promising more. */
		f.ird = req->ord == MPA_IRD_ORD_MAX ? MPA_IRD_ORD_MAX : cfg->ird;
		f.ord = req->ird == MPA_IRD_ORD_MAX ? MPA_IRD_ORD_MAX : p.ord;
		f.p2p = req->p2p;
		if (req->p2p) {
			uint8_t form = mpa_rtr_pick(req->rtr & cfg->rtr);

			/* None in common: still name one we accept, so the
			 * Initiator can send Terminate code 7 (RFC 6581 §9.2). */
			if (form == MPA_RTR_NONE)
				form = mpa_rtr_pick(cfg->rtr);
			/* A zero-length Read needs one inbound Read slot. */
			if (form == MPA_RTR_READ && f.ird == 0) {
				f.ird = 1;
				p.ird = 1;
			}
			f.rtr = form;
			p.p2p = true;
			p.rtr = form;
		}
	}

	rc = mpa_setup_queue(s, &f);
	if (rc < 0)
		return rc;
	if (reject) {
		mpa_setup_finish(s, MPA_SETUP_REJECTED);
	} else {
		s->params = p;
		mpa_setup_finish(s, MPA_SETUP_ESTABLISHED);
	}
	return IW_OK;
}

static int mpa_setup_on_request(struct mpa_setup *s, const struct mpa_frame *f)
{
	mpa_setup_keep_peer(s, f);
	s->state = MPA_SETUP_REQUEST_RECEIVED;
	if (f->markers && !s->cfg.accept_markers) {
		iw_log(IW_LOG_DEBUG, "mpa setup: peer requires Markers, rejecting");
		return mpa_setup_reply(s, true, NULL, 0);
	}
	return IW_OK;
}

static int mpa_setup_on_reply(struct mpa_setup *s, const struct mpa_frame *f)
{
	const struct mpa_config *cfg = &s->cfg;
	struct mpa_params p;

	mpa_setup_keep_peer(s, f);
	if (f->rev > cfg->rev)
		return mpa_setup_fail(s, IW_EMPA_REV);
	if (f->reject) {
		mpa_setup_finish(s, MPA_SETUP_REJECTED);
		return IW_OK;
	}
	/* We only send rev 2 with S, and then need the word back. */
	if (cfg->rev == MPA_REV2 && f->rev == MPA_REV2 && !f->enhanced)
		return mpa_setup_fail(s, IW_EMPA_FRAME);
	if (f->markers && !cfg->accept_markers)
		return mpa_setup_fail(s, IW_EMPA_LOCAL);

	mpa_params_base(&p, cfg, f->rev, f->enhanced, f);

	if (f->enhanced) {
		p.peer_ird = f->ird;
		p.peer_ord = f->ord;
		/* RFC 6581 §9.2: the Responder must echo A. */
		if (f->p2p != cfg->p2p)
			return mpa_setup_fail(s, IW_EMPA_FRAME);
		/* RFC 6581 §9.1: we must be able to serve the Responder's ORD;
		 * we do not grow IRD beyond what was configured. */
		if (f->ord != MPA_IRD_ORD_MAX && cfg->ird != MPA_IRD_ORD_MAX && cfg->ird < f->ord)
			return mpa_setup_fail(s, IW_EMPA_IRD);
		if (f->ird != MPA_IRD_ORD_MAX && cfg->ord != MPA_IRD_ORD_MAX)
			p.ord = IW_MIN(cfg->ord, f->ird);
		if (cfg->p2p) {
			uint8_t form = mpa_rtr_pick(f->rtr & cfg->rtr);

			if (form == MPA_RTR_NONE)
				return mpa_setup_fail(s, IW_EMPA_RTR);
			p.p2p = true;
			p.rtr = form;
		}
	}
	s->params = p;
	mpa_setup_finish(s, MPA_SETUP_ESTABLISHED);
	return IW_OK;
}

/* Octets of the frame being received as far as its header tells. */
static size_t mpa_setup_rx_need(const struct mpa_setup *s)
{
	size_t need;

	if (s->rxlen < MPA_FRAME_HDR_LEN)
		return MPA_FRAME_HDR_LEN;
	/* mpa_frame_decode() has already refused PD_Length > 512 by now; the
	 * bound is repeated so rxbuf can never overflow whatever happens. */
	need = MPA_FRAME_HDR_LEN + (size_t)iw_get_be16(s->rxbuf + MPA_OFF_PDLEN);
	return IW_MIN(need, sizeof(s->rxbuf));
}

ssize_t mpa_setup_read_stream(struct mpa_setup *s, const void *buf, size_t len, uint64_t now)
{
	const uint8_t *in = buf;
	size_t used = 0;
	bool want_reply;

	if (!s || (!buf && len))
		return IW_EINVAL;
	switch (s->state) {
	case MPA_SETUP_FAILED:
		return s->error;
	case MPA_SETUP_ESTABLISHED:
	case MPA_SETUP_REJECTED:
		return IW_ESTATE;
	default:
		break;
	}
	if (now >= s->deadline)
		return mpa_setup_fail(s, IW_EMPA_TIMEOUT);
	if (len == 0)
		return 0;
	switch (s->state) {
	case MPA_SETUP_IDLE:
		/* The Responder speaks only after our Request. */
		return mpa_setup_fail(s, IW_EMPA_UNEXPECTED);
	case MPA_SETUP_REQUEST_RECEIVED:
		/* The Initiator may send nothing until our Reply (RFC 5044
		 * §7.1.2); PD_Length not matching the data sent lands here. */
		return mpa_setup_fail(s, IW_EMPA_UNEXPECTED);
	case MPA_SETUP_SEND_REQUEST:
	case MPA_SETUP_WAIT_REPLY:
	case MPA_SETUP_WAIT_REQUEST:
		break;
	default:
		return IW_ESTATE;
	}

	want_reply = s->role == MPA_INITIATOR;
	while (used < len) {
		size_t need = mpa_setup_rx_need(s);
		size_t take = IW_MIN(need - s->rxlen, len - used);
		struct mpa_frame f;
		ssize_t r;
		int rc;

		memcpy(s->rxbuf + s->rxlen, in + used, take);
		s->rxlen += take;
		used += take;
		r = mpa_frame_decode(s->rxbuf, s->rxlen, want_reply, &f);
		if (r == IW_EAGAIN) {
			if (take == 0) /* cannot happen: decode had everything */
				return mpa_setup_fail(s, IW_EMPA_FRAME);
			continue;
		}
		if (r < 0)
			return mpa_setup_fail(s, (int)r);
		rc = want_reply ? mpa_setup_on_reply(s, &f) : mpa_setup_on_request(s, &f);
		if (rc < 0)
			return rc;
		return (ssize_t)used;
	}
	return (ssize_t)used;
}

const struct mpa_frame *mpa_setup_peer_frame(const struct mpa_setup *s)
{
	/* peer.rev is 1 or 2 once a frame has been decoded, 0 before. */
	if (!s || s->peer.rev == 0)
		return NULL;
	return &s->peer;
}

static int mpa_setup_answer(struct mpa_setup *s, bool reject, const void *pd, size_t pd_len)
{
	if (!s)
		return IW_EINVAL;
	if (s->state == MPA_SETUP_FAILED)
		return s->error;
	if (s->role != MPA_RESPONDER || s->state != MPA_SETUP_REQUEST_RECEIVED)
		return IW_ESTATE;
	return mpa_setup_reply(s, reject, pd, pd_len);
}

int mpa_setup_accept(struct mpa_setup *s, const void *pd, size_t pd_len)
{
	return mpa_setup_answer(s, false, pd, pd_len);
}

int mpa_setup_reject(struct mpa_setup *s, const void *pd, size_t pd_len)
{
	return mpa_setup_answer(s, true, pd, pd_len);
}

size_t mpa_setup_tx_pending(const struct mpa_setup *s, const uint8_t **buf)
{
	/* After a failure TCP is closed: nothing more is worth sending. */
	if (!s || s->state == MPA_SETUP_FAILED || s->txoff >= s->txlen) {
		if (buf)
			*buf = NULL;
		return 0;
	}
	if (buf)
		*buf = s->txbuf + s->txoff;
	return s->txlen - s->txoff;
}

void mpa_setup_tx_advance(struct mpa_setup *s, size_t n)
{
	if (!s || s->state == MPA_SETUP_FAILED || s->txoff >= s->txlen)
		return;
	s->txoff += IW_MIN(n, s->txlen - s->txoff);
	if (s->state == MPA_SETUP_SEND_REQUEST && s->txoff == s->txlen)
		s->state = MPA_SETUP_WAIT_REPLY;
}

uint64_t mpa_setup_get_expiry(const struct mpa_setup *s)
{
	if (!s || mpa_setup_terminal(s))
		return UINT64_MAX;
	return s->deadline;
}

int mpa_setup_handle_expiry(struct mpa_setup *s, uint64_t now)
{
	if (!s)
		return IW_EINVAL;
	if (s->state == MPA_SETUP_FAILED)
		return s->error;
	if (mpa_setup_terminal(s))
		return IW_OK;
	if (now >= s->deadline)
		return mpa_setup_fail(s, IW_EMPA_TIMEOUT);
	return IW_OK;
}

int mpa_setup_handle_close(struct mpa_setup *s)
{
	if (!s)
		return IW_EINVAL;
	if (s->state == MPA_SETUP_FAILED)
		return s->error;
	/* The startup is over: a later close belongs to full operation (or to
	 * the ULP after a reject, which leaves TCP open). */
	if (mpa_setup_terminal(s))
		return IW_OK;
	if (s->rxlen > 0 && s->peer.rev == 0)
		return mpa_setup_fail(s, IW_EMPA_TRUNCATED);
	return mpa_setup_fail(s, IW_EMPA_CLOSED);
}

int mpa_setup_params(const struct mpa_setup *s, struct mpa_params *p)
{
	if (!s || !p)
		return IW_EINVAL;
	if (s->state != MPA_SETUP_ESTABLISHED)
		return IW_ESTATE;
	*p = s->params;
	return IW_OK;
}
