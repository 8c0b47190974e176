/* SPDX-License-Identifier: MIT */
/*
 * iwd_iwarp.c - one TCP connection's two byte streams -> MPA Request/Reply
 * frames, FPDUs, DDP segments, RDMAP messages and Terminates (iwd.h, "iWARP
 * decoding").
 *
 * Theory of operation.  Each direction d (octets from end d to end 1 - d)
 * has its own little machine; its input is in-order octets with their stream
 * offsets, in chunks of any size, and gaps.  Octets are gathered in a
 * per-direction buffer that never holds more than two maximal FPDUs (with
 * every Marker) and a little more: enough to decode one FPDU in place, or,
 * while looking for a boundary, to check a candidate FPDU and the one after
 * it.  Everything below depends on the octets only, never on how they were
 * split, so coalesced FPDUs, FPDUs spread over many segments and one-octet
 * chunks give the same events.
 *
 *   START   nothing yet.  The first octets of the first direction to carry
 *           data decide: an MPA key (RFC 5044 §7.1.1: "MPA ID Req Frame" /
 *           "MPA ID Rep Frame") makes the connection iWARP and names the
 *           Initiator (the end that sends the Request, RFC 5044 §7.1); no key
 *           means "not iWARP" (nothing is emitted for the connection), or,
 *           with mid-stream mode, SEARCH in both directions.
 *   MPA     gathering this direction's Request or Reply; mpa_frame_decode()
 *           checks it.  A frame error leaves the rest of the direction DEAD.
 *   WAIT    frame seen; the octets after it wait for the other frame, which
 *           settles the parameters (RFC 5044 §7.1.1, as mpa/mpa_setup.c does
 *           it): CRC on both ways iff either frame has C; Markers in direction
 *           d iff the frame sent by end 1 - d has M (that end requires them);
 *           a Reply with R = 1 ends MPA (RFC 5044 §7.1.2: DEAD both ways);
 *           peer-to-peer iff both frames are enhanced with A (RFC 6581 §9.2).
 *   FPDU    full operation, in step with the framing: ULPDU_Length (RFC 5044
 *           §4.1), PAD, CRC32c (§4.4), Markers (§4.3) - see below.
 *   SEARCH  looking for an FPDU boundary: mid-stream (the handshake is not in
 *           the capture), after a gap, after a framing error.
 *   DEAD    the rest of the direction is reported as UNDECODED.
 *
 * Markers (RFC 5044 §4.3) are positional: with Markers on in a direction, a
 * 4-octet Marker starts at every stream offset p with p - S ≡ 0 (mod 512),
 * S being the first octet of full operation in that direction (the octet
 * after its MPA frame; RFC 5044 §7.1.2 rule 7 puts the first Marker there).
 * Every FPDU is a multiple of 4 octets and the first starts at S, so FPDUs
 * start at S + 4k.  A Marker right before an FPDU's ULPDU_Length belongs to
 * that FPDU and carries FPDUPTR 0; a Marker inside its ULPDU or right after
 * its PAD points back to its ULPDU_Length; all of them are covered by its
 * CRC (RFC 5044 §4.4 rules 1 and 2); a Marker right after the CRC belongs to
 * the next FPDU.  This is exactly how mpa/mpa_tx.c places them and
 * mpa/mpa_rx.c checks them, low two FPDUPTR bits ignored.
 *
 * An FPDU whose CRC fails (or whose Markers disagree) is reported and the
 * next one is decoded where its ULPDU_Length says (RFC 5044 §6: framing comes
 * from ULPDU_Length alone).  The framing itself is declared lost when
 * ULPDU_Length cannot hold a DDP header, or when an FPDU without a good CRC
 * also carries no sane DDP/RDMAP header (or fails its CRC and its Markers
 * together): then the direction SEARCHes from the next octet.  A search
 * takes a candidate start s (4-aligned to the Marker phase when it is known)
 * and accepts it when the FPDU there has a sane DDP/RDMAP header (DV 1, RV 1,
 * a defined opcode with its T bit and queue), all its Markers point right,
 * and the FPDU after it agrees: with CRC on both CRCs match; with CRC off a
 * third header is sane as well.  Mid-stream with Markers the phase is
 * unknown: every phase s - 4k (mod 512) is tried (those whose first Marker
 * lands in the header first, the rest only when the header read without
 * Markers is sane), and the FPDUs checked must span a whole Marker interval,
 * since small FPDUs between two Markers fit any phase; at the end of the
 * octets the phase under which most Markers checked out wins.  The search
 * gives up after IWD_SEARCH_MAX positions.  Skipped octets are reported as
 * UNDECODED when the search ends.
 *
 * Messages (RFC 5041 §5, RFC 5040 §4): per direction the segments of one
 * message are consecutive; a tagged message continues with the same STag and
 * the TO advanced by the payload, an untagged one with the same QN and MSN
 * and the MO advanced.  The message is emitted on its L segment, or with a
 * note when something else interrupts it.  Untagged payloads are reassembled
 * up to cfg.max_msg.  Read Requests are remembered per direction (sink STag,
 * time) so that the Read Response coming back - in request order, RFC 5040
 * §5.5 - gets its latency: from the Request to the Response's last segment,
 * when the Read completes at its requester.  Terminates are read both the
 * RFC way and the way Linux siw lays out its bitfields (iwd_term_read).
 *
 * Events are delivered only for an iWARP connection, synchronously from
 * iwd_iwarp_data/gap/close; the sink must not call back into this object.
 * A change one direction makes to the other (the negotiation completing, the
 * connection being recognised) is acted on at once, so the interleaving of
 * the two directions' events depends on the octets, not on the chunks.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "iw_bytes.h"
#include "iwd.h"

/* Largest FPDU on the wire: a leading Marker, length, ULPDU, PAD, CRC and
 * every Marker inside (RFC 5044 §4.3, §4.5). */
#define IWD_WIRE_MAX (MPA_MARKER_LEN + MPA_FPDU_NOMARK_MAX + MPA_MARKER_LEN * IWD_MARKERS_MAX)
/* Two FPDUs and the header of a third: what a search candidate needs. */
#define IWD_BUF_MAX (2 * IWD_WIRE_MAX + 64)
#define IWD_BUF_MIN 4096
/* Positions a search looks at before it gives up. */
#define IWD_SEARCH_MAX (256 * 1024)
/* Read Requests remembered per direction for the Read Response latency. */
#define IWD_RREQ_MAX 128
/* Recent segments remembered per direction, to recognise the errant one a
 * Terminate copies. */
#define IWD_SEG_RING	    8
#define IWD_MAX_MSG_DEFAULT (1024 * 1024)
/* Free a message buffer above this once its message is out. */
#define IWD_MSG_KEEP (64 * 1024)
/* The DDP header octets the search and the framing checks look at. */
#define IWD_HDR_PEEK DDP_UNTAGGED_HDR_LEN

static const char iwd_key_req[MPA_KEY_LEN] = "MPA ID Req Frame";
static const char iwd_key_rep[MPA_KEY_LEN] = "MPA ID Rep Frame";

/* Notes (events carry them as they are). */
static const char note_crc[] = "CRC error (RFC 5044 §4.4)";
static const char note_marker[] = "Marker FPDUPTR disagrees with the framing (RFC 5044 §4.3)";
static const char note_crc_marker[] = "CRC error and Marker FPDUPTR disagrees with the framing";
static const char note_hdr[] = "DDP/RDMAP header not valid (DV, RV, opcode, T bit or queue)";
static const char note_short[] = "ULPDU shorter than its DDP/RDMAP headers";
static const char note_no_l[] = "message ended without L";
static const char note_msg_gap[] = "message cut by a gap in the capture";
static const char note_msg_end[] = "stream ended inside the message";
static const char note_trunc_fpdu[] = "truncated FPDU";
static const char note_gap_fpdu[] = "FPDU cut by a gap in the capture";
static const char note_trunc_frame[] = "truncated MPA frame";
static const char note_gap_frame[] = "MPA frame cut by a gap in the capture";
static const char note_bad_frame[] = "after an undecodable MPA frame (RFC 5044 §7.1.2)";
static const char note_reject[] = "after an MPA Reply with R = 1: no full operation (RFC 5044 "
				  "§7.1.2)";
static const char note_no_frame[] = "MPA frame of this direction is not in the capture";
static const char note_no_nego[] = "MPA negotiation incomplete: the other frame is not in the "
				   "capture";
static const char note_wait_gap[] = "octets before a gap, MPA negotiation pending";
static const char note_wait_full[] = "too many octets before the MPA negotiation";
static const char note_framing[] = "framing lost: skipped while looking for an FPDU boundary";
static const char note_search[] = "skipped while looking for an FPDU boundary";
static const char note_gave_up[] = "no FPDU boundary found";
static const char note_nomem[] = "out of memory";
static const char note_rejected_frame[] = "the Responder rejected the connection (R = 1)";

enum iwd_conn_state { CONN_UNKNOWN, CONN_IWARP, CONN_NOT };

enum iwd_dir_state {
	DS_START,
	DS_MPA,
	DS_WAIT,
	DS_FPDU,
	DS_SEARCH,
	DS_DEAD,
	DS_IGNORE,
};

struct iwd_rreq_pending {
	uint32_t sink_stag;
	uint64_t ts;
};

struct iwd_seg_seen {
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN];
	uint8_t hdr_len;
	uint8_t rdmap_len;
	uint16_t ulen;
};

/* The RDMAP message being assembled in one direction. */
struct iwd_open_msg {
	bool active;
	struct iwd_msg m;
	uint8_t rsvdulp;
	uint64_t next_to;
	uint32_t next_mo;
	unsigned quirks;
	uint8_t *data;
	size_t cap;
};

struct iwd_dir {
	int d;
	enum iwd_dir_state st;
	bool begun;	    /* octets (or a gap) have arrived */
	bool start_missing; /* the direction's first octets are not in the capture */
	bool kick;	    /* process again (a state change from elsewhere) */
	unsigned busy;	    /* inside process() or finish_dir() */
	bool closed, close_done;
	enum iwd_close_how how;
	uint64_t next; /* stream offset of the next octet expected */

	/* gathered octets: buf[0..len) is stream [boff, boff + len) */
	uint8_t *buf;
	size_t len, cap;
	uint64_t boff;

	/* this direction's MPA frame (decoded structs point into frame[]) */
	bool have_frame;
	uint8_t frame[MPA_FRAME_MAX_LEN];
	struct mpa_frame f;
	bool resync_after_wait;

	/* full operation */
	bool params; /* crc and markers known */
	bool crc, markers;
	bool phase_known;
	uint64_t phase; /* full operation's first octet (only its residue counts) */
	bool first_done;

	/* search */
	uint64_t scan, skip_start, search_start;
	const char *skip_note;

	/* dead */
	uint64_t dead_off;
	const char *dead_note;

	/* decoding */
	uint8_t *ulpdu;
	struct iwd_fpdu fp;
	struct iwd_open_msg om;
	struct iwd_rreq_pending rreq[IWD_RREQ_MAX];
	unsigned rr_head, rr_count;
	struct iwd_seg_seen ring[IWD_SEG_RING];
	unsigned ring_head, ring_count;
};

struct iwd_iwarp {
	struct iwd_iwarp_cfg cfg;
	size_t max_msg;
	struct iwd_flow flow;
	struct iwd_sink sink;
	enum iwd_conn_state conn;
	int first_dir; /* first direction to carry data, -1 before */
	int init_dir;  /* the end that sent the Request, -1 unknown */
	bool negotiated;
	bool p2p;
	uint64_t ts, frame; /* of the call being handled */
	struct iwd_conn_info info;
	struct iwd_dir dir[2];
};

static void process(struct iwd_iwarp *c, struct iwd_dir *D, bool final);
static void maybe_finish(struct iwd_iwarp *c, struct iwd_dir *D);

/*
 * A state change made while handling another direction: decode what this
 * one holds right away, so that the order of the events does not depend on
 * how the octets were cut (a direction already being decoded carries on by
 * itself).
 */
static void wake(struct iwd_iwarp *c, struct iwd_dir *D)
{
	if (D->busy || D->close_done) {
		D->kick = true;
		return;
	}
	process(c, D, false);
	maybe_finish(c, D);
}

/* ---------------------------------------------------------------------- */
/* Events                                                                   */
/* ---------------------------------------------------------------------- */

static void emit(struct iwd_iwarp *c, struct iwd_event *ev)
{
	if (c->conn != CONN_IWARP || !c->sink.event)
		return;
	ev->flow = &c->flow;
	ev->frame = c->frame;
	ev->ts_ns = c->ts;
	c->sink.event(c->sink.user, ev);
}

static void emit_range(struct iwd_iwarp *c, const struct iwd_dir *D, enum iwd_ev_kind kind,
		       uint64_t off, uint64_t len, const char *note)
{
	struct iwd_event ev;

	if (len == 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.dir = D->d;
	ev.note = note;
	ev.u.gap.off = off;
	ev.u.gap.len = len;
	emit(c, &ev);
}

static void emit_undecoded(struct iwd_iwarp *c, const struct iwd_dir *D, uint64_t off, uint64_t len,
			   const char *note)
{
	emit_range(c, D, IWD_EV_UNDECODED, off, len, note);
}

/* ---------------------------------------------------------------------- */
/* The per-direction buffer                                                 */
/* ---------------------------------------------------------------------- */

static bool buf_reserve(struct iwd_dir *D, size_t want)
{
	size_t cap = D->cap ? D->cap : IWD_BUF_MIN;
	uint8_t *nb;

	if (want <= D->cap)
		return true;
	if (want > IWD_BUF_MAX)
		return false;
	while (cap < want)
		cap *= 2;
	if (cap > IWD_BUF_MAX)
		cap = IWD_BUF_MAX;
	nb = realloc(D->buf, cap);
	if (!nb)
		return false;
	D->buf = nb;
	D->cap = cap;
	return true;
}

/* Forget the first n buffered octets (they were decoded or skipped). */
static void buf_consume(struct iwd_dir *D, size_t n)
{
	if (n > D->len)
		n = D->len;
	if (n == 0)
		return;
	memmove(D->buf, D->buf + n, D->len - n);
	D->len -= n;
	D->boff += n;
}

static void buf_drop(struct iwd_dir *D)
{
	D->boff += D->len;
	D->len = 0;
}

static void buf_free(struct iwd_dir *D)
{
	free(D->buf);
	D->buf = NULL;
	D->cap = 0;
	free(D->ulpdu);
	D->ulpdu = NULL;
	free(D->om.data);
	D->om.data = NULL;
	D->om.cap = 0;
}

/* ---------------------------------------------------------------------- */
/* State changes                                                            */
/* ---------------------------------------------------------------------- */

static void go_dead(struct iwd_dir *D, uint64_t from, const char *note)
{
	buf_drop(D);
	D->st = DS_DEAD;
	D->dead_off = from;
	D->dead_note = note;
}

static void go_search(struct iwd_dir *D, uint64_t from, uint64_t first_candidate, const char *note)
{
	D->st = DS_SEARCH;
	D->skip_start = from;
	D->search_start = first_candidate;
	D->scan = first_candidate;
	D->skip_note = note;
}

static void set_not_iwarp(struct iwd_iwarp *c)
{
	c->conn = CONN_NOT;
	c->info.iwarp = false;
	for (int d = 0; d < 2; d++) {
		buf_drop(&c->dir[d]);
		c->dir[d].st = DS_IGNORE;
	}
}

static void become_iwarp(struct iwd_iwarp *c)
{
	if (c->conn == CONN_IWARP)
		return;
	c->conn = CONN_IWARP;
	c->info.iwarp = true;
	/* a direction that ended while this was undecided ends now */
	for (int d = 0; d < 2; d++)
		maybe_finish(c, &c->dir[d]);
}

/* A direction's parameters from the mid-stream configuration. */
static void mid_params(struct iwd_iwarp *c, struct iwd_dir *D)
{
	D->params = true;
	D->crc = c->cfg.mid.crc;
	D->markers = c->cfg.mid.markers[D->d];
}

/* No handshake: decode both directions from what cfg.mid says. */
static void start_mid(struct iwd_iwarp *c)
{
	c->info.midstream = true;
	c->info.crc = c->cfg.mid.crc;
	for (int d = 0; d < 2; d++) {
		struct iwd_dir *D = &c->dir[d];

		c->info.markers[d] = c->cfg.mid.markers[d];
		mid_params(c, D);
		D->phase_known = false;
		if (D->begun && (D->st == DS_START || D->st == DS_MPA)) {
			go_search(D, D->boff, D->boff, note_search);
			wake(c, D);
		}
	}
}

/* The first octets of the deciding direction are not an MPA key. */
static void not_key(struct iwd_iwarp *c)
{
	if (c->cfg.mid.enabled)
		start_mid(c);
	else
		set_not_iwarp(c);
}

/* Where a direction starts once the connection's kind is known. */
static void dir_begin(struct iwd_iwarp *c, struct iwd_dir *D)
{
	switch (c->conn) {
	case CONN_NOT:
		buf_drop(D);
		D->st = DS_IGNORE;
		return;
	case CONN_UNKNOWN:
		if (c->info.midstream) {
			go_search(D, D->boff, D->boff, note_search);
		} else if (c->first_dir == D->d) {
			if (D->start_missing)
				not_key(c);
			else
				D->st = DS_MPA;
		}
		/* otherwise held in START until the first direction decides */
		return;
	case CONN_IWARP:
		if (c->info.midstream) {
			go_search(D, D->boff, D->boff, note_search);
		} else if (D->start_missing) {
			if (c->cfg.mid.enabled) {
				mid_params(c, D);
				go_search(D, D->boff, D->boff, note_search);
			} else {
				go_dead(D, D->boff, note_no_frame);
			}
		} else {
			D->st = DS_MPA;
		}
		return;
	}
}

/* The negotiation cannot complete: release the directions waiting for it. */
static void fail_negotiation(struct iwd_iwarp *c)
{
	for (int d = 0; d < 2; d++) {
		struct iwd_dir *D = &c->dir[d];

		if (D->st != DS_WAIT)
			continue;
		if (c->cfg.mid.enabled) {
			mid_params(c, D);
			go_search(D, D->boff, D->boff, note_no_nego);
		} else {
			go_dead(D, D->boff, note_no_nego);
		}
		wake(c, D);
	}
}

/* Both frames are in: settle CRC, Markers, reject and peer-to-peer. */
static void negotiate(struct iwd_iwarp *c)
{
	struct iwd_dir *I, *R;
	const struct mpa_frame *req, *rep;

	if (c->negotiated || c->init_dir < 0)
		return;
	I = &c->dir[c->init_dir];
	R = &c->dir[!c->init_dir];
	if (!I->have_frame || !R->have_frame)
		return;
	c->negotiated = true;
	req = &I->f;
	rep = &R->f;
	c->info.rejected = rep->reject;
	c->info.rev = rep->rev;
	/* RFC 5044 §7.1.1: CRC iff either frame has C; Markers toward each end
	 * iff that end's frame has M. */
	c->info.crc = req->crc || rep->crc;
	c->info.markers[I->d] = rep->markers;
	c->info.markers[R->d] = req->markers;
	/* RFC 6581 §9.2: the Responder echoes A. */
	c->p2p = req->enhanced && rep->enhanced && req->p2p && rep->p2p;
	for (int d = 0; d < 2; d++) {
		struct iwd_dir *D = &c->dir[d];

		if (c->info.rejected) {
			if (D->st == DS_WAIT)
				go_dead(D, D->boff, note_reject);
			wake(c, D);
			continue;
		}
		D->params = true;
		D->crc = c->info.crc;
		D->markers = c->info.markers[d];
		if (D->st == DS_WAIT) {
			if (D->resync_after_wait)
				go_search(D, D->boff, D->boff, note_search);
			else
				D->st = DS_FPDU;
			wake(c, D);
		}
	}
}

/* WAIT with no other frame to come: the other direction has none. */
static void check_negotiation(struct iwd_iwarp *c)
{
	bool waiting = false, hopeless = false;

	if (c->negotiated || c->conn != CONN_IWARP)
		return;
	for (int d = 0; d < 2; d++) {
		const struct iwd_dir *D = &c->dir[d];

		if (D->st == DS_WAIT) {
			waiting = true;
			continue;
		}
		if (D->have_frame)
			continue;
		if (D->closed || (D->st != DS_START && D->st != DS_MPA))
			hopeless = true;
	}
	if (waiting && hopeless)
		fail_negotiation(c);
}

/* ---------------------------------------------------------------------- */
/* MPA Request / Reply (RFC 5044 §7.1.1, RFC 6581 §6, §9)                   */
/* ---------------------------------------------------------------------- */

static void emit_frame_error(struct iwd_iwarp *c, struct iwd_dir *D, int err, bool want_reply)
{
	struct iwd_event ev;
	size_t have = D->len < MPA_FRAME_HDR_LEN ? D->len : MPA_FRAME_HDR_LEN;

	memset(&ev, 0, sizeof(ev));
	ev.kind = IWD_EV_MPA_FRAME;
	ev.dir = D->d;
	ev.note = mpa_strerror(err);
	ev.u.mpa.err = err;
	ev.u.mpa.len = (uint32_t)have;
	ev.u.mpa.f.reply = want_reply;
	/* what the header says, for the views (the decoder fills nothing on error) */
	if (have > 16) {
		ev.u.mpa.f.markers = D->buf[16] & 0x80;
		ev.u.mpa.f.crc = D->buf[16] & 0x40;
		ev.u.mpa.f.reject = want_reply && (D->buf[16] & 0x20);
	}
	if (have > 17)
		ev.u.mpa.f.rev = D->buf[17];
	emit(c, &ev);
}

static void parse_mpa(struct iwd_iwarp *c, struct iwd_dir *D, bool final)
{
	struct rpcrdma_cm_pdata pd;
	struct iwd_event ev;
	bool want_reply;
	ssize_t rc;

	if (c->conn == CONN_UNKNOWN) {
		/* the deciding direction: a key, or not iWARP */
		size_t k = D->len < MPA_KEY_LEN ? D->len : MPA_KEY_LEN;
		bool req = memcmp(D->buf, iwd_key_req, k) == 0;
		bool rep = memcmp(D->buf, iwd_key_rep, k) == 0;

		if (!req && !rep) {
			not_key(c);
			return;
		}
		if (D->len < MPA_KEY_LEN)
			return;
		become_iwarp(c);
		c->info.mpa_seen = true;
		c->init_dir = req ? D->d : !D->d;
		/* the other direction may hold octets already */
		if (c->dir[!D->d].begun && c->dir[!D->d].st == DS_START) {
			dir_begin(c, &c->dir[!D->d]);
			wake(c, &c->dir[!D->d]);
		}
	}
	if (c->init_dir < 0) {
		go_dead(D, D->boff, note_no_frame);
		return;
	}
	want_reply = D->d != c->init_dir;
	rc = mpa_frame_decode(D->buf, D->len < MPA_FRAME_MAX_LEN ? D->len : MPA_FRAME_MAX_LEN,
			      want_reply, &D->f);
	if (rc == IW_EAGAIN)
		return;
	/* the decoder says no as early as it can; the report waits for the
	 * whole header so that it does not depend on how octets arrive */
	if (rc < 0 && D->len < MPA_FRAME_HDR_LEN && !final)
		return;
	if (rc < 0) {
		size_t used = D->len < MPA_FRAME_HDR_LEN ? D->len : MPA_FRAME_HDR_LEN;

		emit_frame_error(c, D, (int)rc, want_reply);
		go_dead(D, D->boff + used, note_bad_frame);
		return;
	}
	/* keep the frame: the decoded struct (and the info's) point into it */
	memcpy(D->frame, D->buf, (size_t)rc);
	mpa_frame_decode(D->frame, (size_t)rc, want_reply, &D->f);
	D->have_frame = true;
	if (want_reply)
		c->info.rep = D->f;
	else
		c->info.req = D->f;

	memset(&ev, 0, sizeof(ev));
	ev.kind = IWD_EV_MPA_FRAME;
	ev.dir = D->d;
	ev.u.mpa.f = D->f;
	ev.u.mpa.err = IW_OK;
	ev.u.mpa.len = (uint32_t)rc;
	/* below M, C, R (and S with revision 2): reserved, sent 0 */
	ev.u.mpa.rsvd_flags = D->frame[16] & (D->f.rev >= MPA_REV2 ? 0x0F : 0x1F);
	if (D->f.reject)
		ev.note = note_rejected_frame;
	/* RFC 8797 private data (after the RFC 6581 IRD/ORD word, which
	 * mpa_frame_decode() has already taken off pd) */
	if (rpcrdma_cm_pdata_decode(D->f.pd, D->f.pd_len, &pd) == IW_OK) {
		ev.u.mpa.rpcrdma_pd = true;
		ev.u.mpa.rpcrdma_version = pd.version;
		ev.u.mpa.rpcrdma_flags = pd.flags;
		ev.u.mpa.rpcrdma_send_size = pd.send_size;
		ev.u.mpa.rpcrdma_recv_size = pd.recv_size;
	}
	emit(c, &ev);

	buf_consume(D, (size_t)rc);
	/* RFC 5044 §7.1.2 rule 7: full operation, and Marker counting, start at
	 * the next octet */
	D->phase = D->boff;
	D->phase_known = true;
	c->info.fpdu_start[D->d] = D->boff;
	D->st = DS_WAIT;
	negotiate(c);
}

/* ---------------------------------------------------------------------- */
/* FPDU layout (RFC 5044 §4.1, §4.3, §4.4)                                   */
/* ---------------------------------------------------------------------- */

struct iwd_lay {
	bool lead;	 /* a Marker precedes ULPDU_Length */
	uint32_t hdr;	 /* index of ULPDU_Length from the FPDU start */
	uint16_t ulen;	 /* ULPDU_Length */
	uint8_t pad;	 /* PAD octets */
	uint32_t crc_at; /* index of the CRC field */
	uint32_t wire;	 /* octets on the wire */
	unsigned nmk;
	uint32_t mk[IWD_MARKERS_MAX]; /* Marker indexes from the FPDU start, ascending */
};

/* Distance of stream offset `s` past the last Marker position of phase `phase`. */
static uint32_t mpos(uint64_t s, uint64_t phase)
{
	return (uint32_t)((s % MPA_MARKER_INTERVAL + MPA_MARKER_INTERVAL -
			   phase % MPA_MARKER_INTERVAL) %
			  MPA_MARKER_INTERVAL);
}

/*
 * The layout of the FPDU starting at stream offset s (b holds `avail` of its
 * octets).  False when ULPDU_Length is not yet there.  The walk is the one
 * mpa_tx.c makes: a leading Marker, then length + ULPDU + PAD with a Marker
 * at every position of the phase, then a Marker right after the PAD, then
 * the CRC.  With `head` only the Markers among the first ULPDU octets a
 * header check reads are placed (and wire is 0): a search's quick look.
 */
static bool lay_compute(const uint8_t *b, size_t avail, uint64_t s, bool markers, uint64_t phase,
			bool head, struct iwd_lay *L)
{
	uint32_t w = 0, rem, total;

	L->nmk = 0;
	L->lead = markers && mpos(s, phase) == 0;
	if (L->lead) {
		L->mk[L->nmk++] = 0;
		w = MPA_MARKER_LEN;
	}
	L->hdr = w;
	if (avail < (size_t)w + MPA_ULPDU_LEN_LEN)
		return false;
	L->ulen = iw_get_be16(b + w);
	L->pad = (uint8_t)mpa_pad_len(L->ulen);
	total = MPA_ULPDU_LEN_LEN + L->ulen + L->pad;
	rem = head && total > MPA_ULPDU_LEN_LEN + IWD_HDR_PEEK ? MPA_ULPDU_LEN_LEN + IWD_HDR_PEEK
							       : total;
	while (rem > 0) {
		uint32_t room = rem;

		if (markers) {
			uint32_t m = mpos(s + w, phase);

			if (m == 0 && L->nmk < IWD_MARKERS_MAX) {
				L->mk[L->nmk++] = w;
				w += MPA_MARKER_LEN;
				continue;
			}
			room = MPA_MARKER_INTERVAL - m;
			if (room > rem)
				room = rem;
		}
		w += room;
		rem -= room;
	}
	if (head) {
		L->crc_at = 0;
		L->wire = 0;
		return true;
	}
	/* a Marker right after the PAD belongs to this FPDU (§4.4 rule 1) */
	if (markers && mpos(s + w, phase) == 0 && L->nmk < IWD_MARKERS_MAX) {
		L->mk[L->nmk++] = w;
		w += MPA_MARKER_LEN;
	}
	L->crc_at = w;
	L->wire = w + MPA_CRC_LEN;
	return true;
}

/* Wire index just past the first n ULPDU octets. */
static size_t lay_ulpdu_end(const struct iwd_lay *L, size_t n)
{
	size_t w = L->hdr + MPA_ULPDU_LEN_LEN + n;

	for (unsigned i = L->lead ? 1 : 0; i < L->nmk; i++) {
		if (L->mk[i] >= w)
			break;
		w += MPA_MARKER_LEN;
	}
	return w;
}

/* Copy the first n ULPDU octets, Markers removed. */
static void lay_gather(const uint8_t *b, const struct iwd_lay *L, size_t n, uint8_t *out)
{
	size_t w = L->hdr + MPA_ULPDU_LEN_LEN, done = 0;
	unsigned i = L->lead ? 1 : 0;

	while (done < n) {
		size_t take = n - done;

		if (i < L->nmk && L->mk[i] == w) {
			w += MPA_MARKER_LEN;
			i++;
			continue;
		}
		if (i < L->nmk && L->mk[i] - w < take)
			take = L->mk[i] - w;
		memcpy(out + done, b + w, take);
		done += take;
		w += take;
	}
}

/* What Marker i of the FPDU must say (RFC 5044 §4.3). */
static uint16_t lay_fpduptr(const struct iwd_lay *L, unsigned i)
{
	if (L->lead && i == 0)
		return 0;
	return (uint16_t)(L->mk[i] - L->hdr);
}

/* All Markers point right.  `strict` (searching) also wants the reserved
 * half zero, as senders must send it (§4.2). */
static bool lay_markers_ok(const uint8_t *b, const struct iwd_lay *L, bool strict)
{
	for (unsigned i = 0; i < L->nmk; i++) {
		const uint8_t *m = b + L->mk[i];

		if ((iw_get_be16(m + 2) & 0xFFFC) != lay_fpduptr(L, i))
			return false;
		if (strict && iw_get_be16(m) != 0)
			return false;
	}
	return true;
}

static uint32_t lay_crc(const uint8_t *b, const struct iwd_lay *L)
{
	return mpa_crc32c_final(mpa_crc32c_update(MPA_CRC32C_INIT, b, L->crc_at));
}

/*
 * A DDP/RDMAP header that makes sense (RFC 5041 §4.1, RFC 5040 §4.1, §4.2):
 * DV 1, RV 1, a defined opcode whose DDP model is the T bit, the opcode's
 * queue, room for both headers.  `strict` (searching) also wants the
 * reserved bits and an unused Invalidate STag zero, as senders send them.
 */
static bool hdr_sane(const uint8_t *u, size_t have, size_t ulen, bool strict)
{
	const struct rdmap_opcode_info *oi;
	bool tagged;

	if (have < 2 || ulen < DDP_TAGGED_HDR_LEN)
		return false;
	tagged = u[0] & DDP_CTRL_T;
	if ((u[0] & DDP_CTRL_DV) != DDP_VERSION || rdmap_ctrl_rv(u[1]) != RDMAP_VERSION)
		return false;
	oi = rdmap_opcode_info(u[1]);
	if (!oi->supported || oi->tagged != tagged)
		return false;
	if (ulen < ddp_hdr_len(tagged) + oi->rdmap_hdr_len)
		return false;
	if (strict && ((u[0] & DDP_CTRL_RSVD) || (u[1] & RDMAP_CTRL_RSV)))
		return false;
	if (!tagged) {
		if (have < 10 || iw_get_be32(u + 6) != oi->qn)
			return false;
		if (strict && !oi->inv_stag && iw_get_be32(u + 2) != 0)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* Searching for a boundary                                                 */
/* ---------------------------------------------------------------------- */

enum { PROBE_NO, PROBE_MORE, PROBE_HDR, PROBE_OK };

/* One FPDU of a candidate chain: NO, MORE (its header is not here yet), HDR
 * (header sane, FPDU incomplete, or `head_only` asked for no more) or OK
 * (complete, Markers right). */
static int probe_one(const struct iwd_dir *D, size_t i, uint64_t s, uint64_t phase, bool head_only,
		     struct iwd_lay *L)
{
	size_t avail = i < D->len ? D->len - i : 0;
	const uint8_t *b = avail ? D->buf + i : NULL;
	uint8_t h[IWD_HDR_PEEK];
	size_t hn;

	/* the header first: most candidates fail there, before the walk */
	if (!lay_compute(b, avail, s, D->markers, phase, true, L))
		return PROBE_MORE;
	if (L->lead && (iw_get_be16(b + 2) & 0xFFFC) != 0)
		return PROBE_NO;
	if (L->ulen < DDP_TAGGED_HDR_LEN)
		return PROBE_NO;
	hn = L->ulen < IWD_HDR_PEEK ? L->ulen : IWD_HDR_PEEK;
	if (avail < lay_ulpdu_end(L, hn))
		return PROBE_MORE;
	lay_gather(b, L, hn, h);
	if (!hdr_sane(h, hn, L->ulen, true))
		return PROBE_NO;
	if (head_only)
		return PROBE_HDR;
	lay_compute(b, avail, s, D->markers, phase, false, L);
	if (avail < L->wire)
		return PROBE_HDR;
	return lay_markers_ok(b, L, true) ? PROBE_OK : PROBE_NO;
}

/* FPDUs a candidate chain checks at most (each is 20 octets or more, and
 * the longest chain needed covers 516 octets). */
#define IWD_CHAIN_MAX 32

/*
 * A candidate FPDU start at buffer index i with Marker phase `phase`:
 * PROBE_OK (accept), PROBE_NO or PROBE_MORE (wait for octets).  The FPDUs
 * from there must be sane and their Markers right: two with matching CRCs
 * (CRC on) or three headers (CRC off).  When the phase is being guessed
 * (`guess`), the chain must also span a whole Marker interval, so that a
 * Marker of every phase lies inside it and only the right phase survives:
 * small FPDUs between two Markers fit any phase.  At the end of the octets
 * (`final`) what could be checked is enough.
 */
static int probe_chain(const struct iwd_dir *D, size_t i, uint64_t s, uint64_t phase, bool final,
		       bool guess, unsigned *markers)
{
	unsigned want = D->crc ? 2 : 3;
	size_t at[IWD_CHAIN_MAX];
	uint32_t crc_at[IWD_CHAIN_MAX];
	struct iwd_lay L;
	uint64_t span = 0;
	unsigned k = 0;
	int r = PROBE_NO;

	*markers = 0;
	while (k < IWD_CHAIN_MAX) {
		/* CRC off: the last FPDU is judged by its header alone (judging
		 * more of it only when present would depend on the chunks) */
		bool head_only = !D->crc && k + 1 >= want &&
				 (!guess || span >= MPA_MARKER_INTERVAL + MPA_MARKER_LEN);

		at[k] = i + span;
		r = probe_one(D, at[k], s + span, phase, head_only, &L);
		if (r == PROBE_NO)
			return PROBE_NO;
		if (r == PROBE_HDR && head_only) {
			r = PROBE_OK;
			break;
		}
		if (r != PROBE_OK) {
			if (!final)
				return PROBE_MORE;
			if (k == 0)
				return PROBE_NO;
			r = PROBE_OK;
			break;
		}
		crc_at[k] = L.crc_at;
		span += L.wire;
		*markers += L.nmk;
		k++;
		if (k >= want && (!guess || span >= MPA_MARKER_INTERVAL + MPA_MARKER_LEN))
			break;
	}
	/* the costly part last: every complete FPDU of the chain has its CRC */
	if (D->crc)
		for (unsigned j = 0; j < k; j++) {
			const uint8_t *b = D->buf + at[j];

			if (mpa_crc32c_final(mpa_crc32c_update(MPA_CRC32C_INIT, b, crc_at[j])) !=
			    iw_get_le32(b + crc_at[j]))
				return PROBE_NO;
		}
	return r;
}

/* The header at s read as if no Marker were near: a quick filter for the
 * phases whose first Marker lies beyond the header. */
static bool plain_hdr_sane(const struct iwd_dir *D, size_t i, bool *more)
{
	const uint8_t *b = D->buf + i;
	size_t avail = D->len - i;
	uint16_t ulen;
	size_t hn;

	*more = false;
	if (avail < MPA_ULPDU_LEN_LEN) {
		*more = true;
		return false;
	}
	ulen = iw_get_be16(b);
	if (ulen < DDP_TAGGED_HDR_LEN)
		return false;
	hn = ulen < IWD_HDR_PEEK ? ulen : IWD_HDR_PEEK;
	if (avail < MPA_ULPDU_LEN_LEN + hn) {
		*more = true;
		return false;
	}
	return hdr_sane(b + MPA_ULPDU_LEN_LEN, hn, ulen, true);
}

/*
 * Try the candidate start s (buffer index i).  *phase receives the Marker
 * phase found.  Deterministic: the phases are tried in a fixed order and a
 * phase that needs more octets stops the walk.  At the end of the octets a
 * short chain may fit several phases: the one under which the most Markers
 * checked out is taken.
 */
static int probe_candidate(const struct iwd_dir *D, size_t i, uint64_t s, bool final,
			   uint64_t *phase)
{
	static const uint32_t near[] = {0, 508, 504, 500, 496};
	bool more, plain, found = false;
	unsigned nmk, best = 0;
	int r;

	if (D->phase_known) {
		/* FPDUs start 4-aligned to full operation's start */
		if (mpos(s, D->phase) % 4 != 0)
			return PROBE_NO;
		*phase = D->phase;
		return probe_chain(D, i, s, D->phase, final, false, &nmk);
	}
	if (!D->markers) {
		*phase = s;
		return probe_chain(D, i, s, s, final, false, &nmk);
	}
	/* unknown phase: delta = s - phase (mod 512), a multiple of 4; 0 is a
	 * leading Marker, 496..508 put the first Marker into the header, the
	 * others leave the header as if there were no Markers */
	plain = plain_hdr_sane(D, i, &more);
	if (more && !final)
		return PROBE_MORE;
	for (uint32_t k = 0; k < MPA_MARKER_INTERVAL / 4; k++) {
		uint32_t delta = k < sizeof(near) / sizeof(near[0]) ? near[k] : 4 * (k - 4);
		uint64_t p = (s + MPA_MARKER_INTERVAL - delta) % MPA_MARKER_INTERVAL;

		if (k >= sizeof(near) / sizeof(near[0]) && !plain)
			break;
		r = probe_chain(D, i, s, p, final, true, &nmk);
		if (r == PROBE_MORE)
			return PROBE_MORE;
		if (r != PROBE_OK)
			continue;
		if (!final) {
			*phase = p;
			return PROBE_OK;
		}
		if (!found || nmk > best) {
			*phase = p;
			best = nmk;
			found = true;
		}
	}
	return found ? PROBE_OK : PROBE_NO;
}

static void search_found(struct iwd_iwarp *c, struct iwd_dir *D, uint64_t phase)
{
	if (!D->phase_known) {
		D->phase = phase;
		D->phase_known = true;
		c->info.fpdu_start[D->d] = D->markers ? phase % MPA_MARKER_INTERVAL : phase % 4;
	}
	become_iwarp(c);
	emit_undecoded(c, D, D->skip_start, D->scan - D->skip_start, D->skip_note);
	buf_consume(D, (size_t)(D->scan - D->boff));
	D->st = DS_FPDU;
	/* an RTR is only ever the first FPDU after the handshake */
	D->first_done = true;
}

static void search(struct iwd_iwarp *c, struct iwd_dir *D, bool final)
{
	while (D->st == DS_SEARCH) {
		uint64_t phase = 0;
		size_t i;
		int r;

		if (D->scan - D->search_start >= IWD_SEARCH_MAX) {
			go_dead(D, D->skip_start, note_gave_up);
			return;
		}
		if (D->scan >= D->boff + D->len)
			break;
		i = (size_t)(D->scan - D->boff);
		r = probe_candidate(D, i, D->scan, final, &phase);
		if (r == PROBE_MORE) {
			/* a full buffer cannot get more: the candidate fails */
			if (D->len < IWD_BUF_MAX || i > 0)
				break;
			r = PROBE_NO;
		}
		if (r == PROBE_OK) {
			search_found(c, D, phase);
			return;
		}
		D->scan++;
	}
	if (D->st == DS_SEARCH)
		buf_consume(D, (size_t)(D->scan - D->boff));
}

/* ---------------------------------------------------------------------- */
/* Terminate (RFC 5040 §4.8) both ways                                      */
/* ---------------------------------------------------------------------- */

/* A layer/type/code combination RFC 5040 §4.8, RFC 5041 §7.2, RFC 5044 §8
 * and RFC 6581 §8 define. */
/* One reading: decode, and say whether it makes sense (a defined code whose
 * header-copy bits account for exactly the octets present). */
static bool term_reading(const uint8_t *q, size_t qn, size_t n, bool siw, struct rdmap_term *t)
{
	ssize_t rc = siw ? rdmap_term_decode_siw(q, qn, t) : rdmap_term_decode(q, qn, t);

	return rc >= 0 && rdmap_term_code_defined(&t->code) && (size_t)rc == n;
}

void iwd_term_read(const uint8_t *p, size_t n, struct iwd_term *t)
{
	uint8_t q[RDMAP_TERM_MAX_LEN] = {0};
	size_t qn = n < sizeof(q) ? n : sizeof(q);
	struct rdmap_term chosen;
	const struct rdmap_term *use;
	ssize_t rc;

	if (!t)
		return;
	memset(t, 0, sizeof(*t));
	if (!p)
		n = qn = 0;
	if (qn)
		memcpy(q, p, qn);
	/* RFC 5040 §4.8, and Linux siw's little-endian bitfield layout (EType in
	 * the high nibble of octet 0, M/D/R in the low bits of octet 2; rdmap.h) */
	t->std_ok = term_reading(q, qn, n, false, &t->std);
	t->siw_ok = term_reading(q, qn, n, true, &t->siw);
	/* which one makes sense: the stack's own rule (rdmap_term_read) */
	rdmap_term_read(q, qn, n, &chosen, &t->use_siw);

	use = t->use_siw ? &t->siw : &t->std;
	if (use->d && use->ddp_hdr_len) {
		rc = ddp_hdr_decode(use->ddp_hdr, use->ddp_hdr_len, &t->copied_ddp);
		t->copied_ddp_ok = rc > 0 || rc == IW_EDDP_T_VERSION || rc == IW_EDDP_U_VERSION;
	}
	if (use->r)
		rdmap_read_req_decode(use->rreq, &t->copied_rreq);
}

/* ---------------------------------------------------------------------- */
/* Messages                                                                 */
/* ---------------------------------------------------------------------- */

static void rreq_push(struct iwd_dir *D, uint32_t sink_stag, uint64_t ts)
{
	if (D->rr_count == IWD_RREQ_MAX) {
		D->rr_head = (D->rr_head + 1) % IWD_RREQ_MAX;
		D->rr_count--;
	}
	D->rreq[(D->rr_head + D->rr_count) % IWD_RREQ_MAX] =
		(struct iwd_rreq_pending){.sink_stag = sink_stag, .ts = ts};
	D->rr_count++;
}

/* The oldest pending Read Request whose sink the response writes; older
 * ones were answered out of our sight (RFC 5040 §5.5: responses come in
 * request order). */
static int64_t rreq_match(struct iwd_dir *Q, uint32_t stag, uint64_t ts)
{
	for (unsigned k = 0; k < Q->rr_count; k++) {
		const struct iwd_rreq_pending *r = &Q->rreq[(Q->rr_head + k) % IWD_RREQ_MAX];
		int64_t rtt = -1;

		if (r->sink_stag != stag)
			continue;
		if (ts >= r->ts && ts - r->ts <= (uint64_t)INT64_MAX)
			rtt = (int64_t)(ts - r->ts);
		Q->rr_head = (Q->rr_head + k + 1) % IWD_RREQ_MAX;
		Q->rr_count -= k + 1;
		return rtt;
	}
	return -1;
}

static void ring_push(struct iwd_dir *D, const struct iwd_fpdu *fp)
{
	struct iwd_seg_seen *e = &D->ring[(D->ring_head + D->ring_count) % IWD_SEG_RING];
	size_t hl = ddp_hdr_len(fp->ddp.tagged);

	if (D->ring_count == IWD_SEG_RING)
		D->ring_head = (D->ring_head + 1) % IWD_SEG_RING;
	else
		D->ring_count++;
	memcpy(e->hdr, fp->ulpdu, hl);
	e->hdr_len = (uint8_t)hl;
	e->rdmap_len = rdmap_opcode_info(fp->opcode)->rdmap_hdr_len;
	e->ulen = fp->ulpdu_len;
}

/* A Terminate copying a segment we saw the other way: siw puts the payload
 * length, not the segment length, into DDP Segment Length. */
static bool term_seglen_is_payload(const struct iwd_dir *O, const struct rdmap_term *t)
{
	if (!t->d || !t->m || !t->ddp_hdr_len)
		return false;
	for (unsigned k = O->ring_count; k-- > 0;) {
		const struct iwd_seg_seen *e = &O->ring[(O->ring_head + k) % IWD_SEG_RING];
		unsigned payload;

		if (e->hdr_len != t->ddp_hdr_len || memcmp(e->hdr, t->ddp_hdr, e->hdr_len) != 0)
			continue;
		if (e->ulen < e->hdr_len + e->rdmap_len)
			return false;
		payload = e->ulen - e->hdr_len - e->rdmap_len;
		return t->ddp_seg_len != e->ulen && t->ddp_seg_len == payload;
	}
	return false;
}

static void msg_emit(struct iwd_iwarp *c, struct iwd_dir *D, const char *note)
{
	struct iwd_open_msg *om = &D->om;
	struct iwd_msg *m = &om->m;
	struct iwd_event ev;

	if (!om->active)
		return;
	if (note == NULL) {
		if (m->opcode == RDMAP_OP_READ_REQ && m->segments)
			rreq_push(D, m->rreq.sink_stag, m->first_ts);
		else if (m->opcode == RDMAP_OP_READ_RESP)
			m->read_rtt_ns = rreq_match(&c->dir[!D->d], m->stag, m->last_ts);
	}
	m->data = om->data;
	memset(&ev, 0, sizeof(ev));
	ev.kind = IWD_EV_MSG;
	ev.dir = D->d;
	ev.quirks = om->quirks;
	ev.note = note;
	ev.u.msg = m;
	emit(c, &ev);
	om->active = false;
	if (om->cap > IWD_MSG_KEEP) {
		free(om->data);
		om->data = NULL;
		om->cap = 0;
	}
}

static void msg_start(struct iwd_iwarp *c, struct iwd_dir *D, const struct iwd_fpdu *fp)
{
	struct iwd_open_msg *om = &D->om;
	struct iwd_msg *m = &om->m;
	const struct ddp_hdr *h = &fp->ddp;
	size_t hl = ddp_hdr_len(h->tagged);
	const uint8_t *r = fp->ulpdu + hl;
	size_t rn = fp->ulpdu_len - hl;

	memset(m, 0, sizeof(*m));
	om->active = true;
	om->quirks = 0;
	om->rsvdulp = h->rsvdulp;
	m->opcode = fp->opcode;
	m->tagged = h->tagged;
	m->read_rtt_ns = -1;
	m->first_frame = c->frame;
	m->first_ts = c->ts;
	if (h->tagged) {
		m->stag = h->stag;
		m->to = h->to;
	} else {
		m->qn = h->qn;
		m->msn = h->msn;
		if (rdmap_opcode_info(fp->opcode)->inv_stag)
			m->stag = h->rsvdulp2;
	}
	switch (fp->opcode) {
	case RDMAP_OP_READ_REQ:
		if (rn >= RDMAP_READ_REQ_LEN)
			rdmap_read_req_decode(r, &m->rreq);
		break;
	case RDMAP_OP_ATOMIC_REQ:
		if (rn >= RDMAP_ATOMIC_REQ_LEN)
			rdmap_atomic_req_decode(r, &m->areq);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		if (rn >= RDMAP_ATOMIC_RESP_LEN)
			rdmap_atomic_resp_decode(r, &m->aresp);
		break;
	case RDMAP_OP_IMM:
	case RDMAP_OP_IMM_SE:
		if (rn >= RDMAP_IMM_LEN)
			memcpy(m->imm_data, r, RDMAP_IMM_LEN);
		break;
	case RDMAP_OP_TERMINATE:
		iwd_term_read(r, rn, &m->term);
		if (m->term.use_siw)
			om->quirks |= IWD_QUIRK_SIW_TERM_LAYOUT;
		if (term_seglen_is_payload(&c->dir[!D->d],
					   m->term.use_siw ? &m->term.siw : &m->term.std))
			om->quirks |= IWD_QUIRK_TERM_SEGLEN_PAYLOAD;
		break;
	default:
		break;
	}
}

static void msg_add(struct iwd_iwarp *c, struct iwd_dir *D, const struct iwd_fpdu *fp)
{
	struct iwd_open_msg *om = &D->om;
	struct iwd_msg *m = &om->m;

	size_t want, take;

	m->segments++;
	/* a message may not outgrow 2^32 - 1 octets (RFC 5041 §5.2) */
	m->len = m->len > UINT32_MAX - fp->payload_len ? UINT32_MAX : m->len + fp->payload_len;
	m->last_frame = c->frame;
	m->last_ts = c->ts;
	m->crc_bad |= fp->crc == IWD_CRC_BAD;
	m->rtr |= fp->rtr;
	if (fp->ddp.tagged) {
		om->next_to = fp->ddp.to + fp->payload_len;
		return;
	}
	om->next_mo = fp->ddp.mo + fp->payload_len;
	if (fp->payload_len == 0 || m->truncated)
		return;
	/* keep up to max_msg octets, then only count */
	take = fp->payload_len;
	if (m->data_len + take > c->max_msg) {
		take = c->max_msg - m->data_len;
		m->truncated = true;
	}
	want = m->data_len + take;
	if (want > om->cap) {
		size_t cap = om->cap ? om->cap : 4096;
		uint8_t *nd;

		while (cap < want)
			cap *= 2;
		if (cap > c->max_msg)
			cap = c->max_msg;
		nd = realloc(om->data, cap);
		if (!nd) {
			m->truncated = true;
			return;
		}
		om->data = nd;
		om->cap = cap;
	}
	if (take)
		memcpy(om->data + m->data_len, fp->payload, take);
	m->data_len += (uint32_t)take;
}

/* Does the segment continue the open message (RFC 5041 §5.2)? */
static bool msg_continues(const struct iwd_open_msg *om, const struct ddp_hdr *h)
{
	if (!om->active || om->m.tagged != h->tagged || om->rsvdulp != h->rsvdulp)
		return false;
	if (h->tagged)
		return om->m.stag == h->stag && om->next_to == h->to;
	return om->m.qn == h->qn && om->m.msn == h->msn && om->next_mo == h->mo;
}

/* ---------------------------------------------------------------------- */
/* FPDUs                                                                    */
/* ---------------------------------------------------------------------- */

static void fpdu_emit(struct iwd_iwarp *c, struct iwd_dir *D, unsigned quirks, const char *note)
{
	struct iwd_event ev;

	if (!c->cfg.keep_fpdus)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = IWD_EV_FPDU;
	ev.dir = D->d;
	ev.quirks = quirks;
	ev.note = note;
	ev.u.fpdu = &D->fp;
	emit(c, &ev);
}

/* Decode the complete FPDU at b (stream offset s).  False when it shows the
 * framing is lost; nothing is emitted then. */
static bool fpdu_decode(struct iwd_iwarp *c, struct iwd_dir *D, const uint8_t *b, uint64_t s,
			const struct iwd_lay *L)
{
	struct iwd_fpdu *fp = &D->fp;
	const char *note = NULL;
	unsigned quirks = 0;
	bool marker_bad = false, sane;
	ssize_t rc;

	if (!D->ulpdu) {
		D->ulpdu = malloc(MPA_ULPDU_MAX);
		if (!D->ulpdu) {
			go_dead(D, s, note_nomem);
			return true;
		}
	}
	memset(fp, 0, sizeof(*fp));
	fp->off = s;
	fp->wire_len = L->wire;
	fp->ulpdu_len = L->ulen;
	fp->pad = L->pad;
	fp->crc_rx = iw_get_le32(b + L->crc_at);
	if (D->crc) {
		fp->crc_calc = lay_crc(b, L);
		fp->crc = fp->crc_calc == fp->crc_rx ? IWD_CRC_OK : IWD_CRC_BAD;
	} else {
		fp->crc = IWD_CRC_OFF;
	}
	fp->nmarkers = L->nmk;
	for (unsigned i = 0; i < L->nmk; i++) {
		struct iwd_marker *mk = &fp->markers[i];

		mk->off = s + L->mk[i];
		mk->fpduptr = iw_get_be16(b + L->mk[i] + 2);
		mk->ok = (mk->fpduptr & 0xFFFC) == lay_fpduptr(L, i);
		marker_bad |= !mk->ok;
	}
	lay_gather(b, L, L->ulen, D->ulpdu);
	fp->ulpdu = D->ulpdu;
	fp->rdmap_rv = rdmap_ctrl_rv(D->ulpdu[1]);
	fp->opcode = rdmap_ctrl_opcode(D->ulpdu[1]);
	fp->payload = D->ulpdu + L->ulen;
	rc = ddp_hdr_decode(D->ulpdu, L->ulen, &fp->ddp);
	fp->ddp_ok = rc > 0 || rc == IW_EDDP_T_VERSION || rc == IW_EDDP_U_VERSION;
	sane = fp->ddp_ok && hdr_sane(D->ulpdu, L->ulen, L->ulen, false);
	/* RFC 5044 §6: ULPDU_Length alone frames; a bad CRC is reported and the
	 * next FPDU is where the length says - unless nothing here is iWARP */
	if ((fp->crc != IWD_CRC_OK && !sane) || (fp->crc == IWD_CRC_BAD && marker_bad))
		return false;

	if (fp->ddp_ok) {
		size_t hl = ddp_hdr_len(fp->ddp.tagged);
		const struct rdmap_opcode_info *oi = rdmap_opcode_info(fp->opcode);
		size_t rh = fp->opcode == RDMAP_OP_TERMINATE ? L->ulen - hl : oi->rdmap_hdr_len;

		if (L->ulen >= hl + rh) {
			fp->payload = D->ulpdu + hl + rh;
			fp->payload_len = (uint32_t)(L->ulen - hl - rh);
		} else {
			note = note_short;
		}
	}
	/* RFC 6581 §9.3: the Initiator's first FPDU is the RTR in peer-to-peer */
	if (c->p2p && D->d == c->init_dir && !D->first_done) {
		enum mpa_rtr form = mpa_rtr_classify(D->ulpdu, L->ulen);

		fp->rtr = form != MPA_RTR_NONE;
		if (form == MPA_RTR_WRITE && fp->ddp.stag == 0)
			quirks |= IWD_QUIRK_RTR_STAG0;
	}
	D->first_done = true;
	if (fp->crc == IWD_CRC_BAD)
		note = marker_bad ? note_crc_marker : note_crc;
	else if (marker_bad)
		note = note_marker;
	else if (!sane)
		note = note_hdr;

	if (!fp->ddp_ok) {
		fpdu_emit(c, D, quirks, note);
		return true;
	}
	if (D->om.active && !msg_continues(&D->om, &fp->ddp))
		msg_emit(c, D, note_no_l);
	if (!D->om.active)
		msg_start(c, D, fp);
	D->om.quirks |= quirks;
	fpdu_emit(c, D, quirks | D->om.quirks, note);
	msg_add(c, D, fp);
	ring_push(D, fp);
	if (fp->ddp.last)
		msg_emit(c, D, NULL);
	return true;
}

/* Framing lost at s: look for the next boundary from s + 1. */
static void framing_lost(struct iwd_dir *D, uint64_t s)
{
	go_search(D, s, s + 1, note_framing);
}

static void parse_fpdus(struct iwd_iwarp *c, struct iwd_dir *D)
{
	size_t i = 0;

	while (D->st == DS_FPDU && i < D->len) {
		uint64_t s = D->boff + i;
		struct iwd_lay L;

		if (!lay_compute(D->buf + i, D->len - i, s, D->markers, D->phase, false, &L))
			break;
		if (L.ulen < DDP_TAGGED_HDR_LEN) {
			framing_lost(D, s);
			break;
		}
		if (D->len - i < L.wire)
			break;
		if (!fpdu_decode(c, D, D->buf + i, s, &L)) {
			framing_lost(D, s);
			break;
		}
		if (D->st != DS_FPDU)
			return;
		i += L.wire;
	}
	buf_consume(D, i);
}

/* ---------------------------------------------------------------------- */
/* Driving a direction                                                      */
/* ---------------------------------------------------------------------- */

static void process_loop(struct iwd_iwarp *c, struct iwd_dir *D, bool final)
{
	/* Every change of state below consumes octets or moves a search
	 * forward, so this ends; the bound is a guard only. */
	for (unsigned guard = 0; guard < 4 * IWD_SEARCH_MAX; guard++) {
		enum iwd_dir_state st = D->st;
		uint64_t at = D->boff;

		switch (st) {
		case DS_MPA:
			parse_mpa(c, D, final);
			break;
		case DS_FPDU:
			parse_fpdus(c, D);
			break;
		case DS_SEARCH:
			search(c, D, final);
			break;
		case DS_WAIT:
			if (D->len >= IWD_BUF_MAX) {
				emit_undecoded(c, D, D->boff, D->len, note_wait_full);
				buf_drop(D);
				D->resync_after_wait = true;
			}
			return;
		case DS_DEAD:
		case DS_IGNORE:
			buf_drop(D);
			return;
		case DS_START:
		default:
			return;
		}
		if (D->st == st && D->boff == at)
			return;
	}
	go_dead(D, D->boff, note_gave_up);
}

static void process(struct iwd_iwarp *c, struct iwd_dir *D, bool final)
{
	D->busy++;
	process_loop(c, D, final);
	D->busy--;
	/* a direction that can no longer send its frame releases the other */
	check_negotiation(c);
}

static void feed(struct iwd_iwarp *c, struct iwd_dir *D, const uint8_t *p, size_t n)
{
	D->next += n;
	while (n > 0) {
		size_t room, take;

		if (D->st == DS_DEAD || D->st == DS_IGNORE) {
			D->boff += n;
			return;
		}
		room = IWD_BUF_MAX - D->len;
		if (room == 0) {
			/* held octets of an undecided direction: cannot be */
			go_dead(D, D->boff, note_wait_full);
			continue;
		}
		take = n < room ? n : room;
		if (!buf_reserve(D, D->len + take)) {
			go_dead(D, D->boff, note_nomem);
			continue;
		}
		memcpy(D->buf + D->len, p, take);
		D->len += take;
		p += take;
		n -= take;
		process(c, D, false);
	}
}

/*
 * No more octets before `why` (a gap or the end): decode what is buffered as
 * final and report what is left.  The open message ends too.
 */
static void flush_dir(struct iwd_iwarp *c, struct iwd_dir *D, bool gap)
{
	const char *msg_note = gap ? note_msg_gap : note_msg_end;

	switch (D->st) {
	case DS_START:
		break;
	case DS_MPA:
		if (c->conn == CONN_UNKNOWN) {
			/* the deciding direction ended inside its key */
			not_key(c);
			if (D->st == DS_SEARCH)
				process(c, D, true);
			break;
		}
		/* a frame error is reported now, with what there is */
		process(c, D, true);
		if (D->st == DS_MPA) {
			emit_undecoded(c, D, D->boff, D->len,
				       gap ? note_gap_frame : note_trunc_frame);
			go_dead(D, D->boff + D->len, note_no_frame);
		}
		break;
	case DS_WAIT:
		if (gap) {
			emit_undecoded(c, D, D->boff, D->len, note_wait_gap);
			buf_drop(D);
			D->resync_after_wait = true;
		}
		break;
	case DS_FPDU:
	case DS_SEARCH:
		process(c, D, true);
		break;
	default:
		break;
	}
	switch (D->st) {
	case DS_FPDU:
		emit_undecoded(c, D, D->boff, D->len, gap ? note_gap_fpdu : note_trunc_fpdu);
		buf_drop(D);
		break;
	case DS_SEARCH:
		emit_undecoded(c, D, D->skip_start, D->boff + D->len - D->skip_start, D->skip_note);
		buf_drop(D);
		break;
	case DS_DEAD:
		emit_undecoded(c, D, D->dead_off, D->next - D->dead_off, D->dead_note);
		D->dead_off = D->next;
		break;
	default:
		break;
	}
	msg_emit(c, D, msg_note);
}

/* Octets [off, off + n) of D are missing (off == D->next). */
static void dir_gap(struct iwd_iwarp *c, struct iwd_dir *D, uint64_t off, uint64_t n)
{
	uint64_t end = off + n;

	if (!D->begun || D->st == DS_START) {
		/* held octets before it are of no use either */
		D->start_missing = true;
		D->len = 0;
		D->next = end;
		D->boff = end;
		emit_range(c, D, IWD_EV_GAP, off, n, NULL);
		return;
	}
	flush_dir(c, D, true);
	emit_range(c, D, IWD_EV_GAP, off, n, NULL);
	D->next = end;
	D->boff = end;
	D->len = 0;
	switch (D->st) {
	case DS_FPDU:
	case DS_SEARCH:
		go_search(D, end, end, note_search);
		break;
	case DS_DEAD:
		/* a search that gave up may try again; a reject or a bad frame
		 * left no parameters to try with */
		D->dead_off = end;
		if (D->params)
			go_search(D, end, end, note_search);
		break;
	default:
		break;
	}
}

static void finish_dir(struct iwd_iwarp *c, struct iwd_dir *D)
{
	struct iwd_event ev;

	D->busy++;
	flush_dir(c, D, false);
	memset(&ev, 0, sizeof(ev));
	ev.kind = IWD_EV_CLOSE;
	ev.dir = D->d;
	ev.u.close = D->how;
	emit(c, &ev);
	D->close_done = true;
	D->busy--;
	buf_free(D);
}

static void maybe_finish(struct iwd_iwarp *c, struct iwd_dir *D)
{
	if (!D->closed || D->close_done || D->busy || D->st == DS_WAIT)
		return;
	/* an undecided connection may still turn out iWARP through the
	 * other direction: wait for it */
	if (c->conn == CONN_UNKNOWN && !c->dir[!D->d].closed)
		return;
	finish_dir(c, D);
}

/* What is left at the end of an API call: a direction woken while it was
 * busy, and closes that can complete now. */
static void pump(struct iwd_iwarp *c)
{
	for (unsigned round = 0; round < 16; round++) {
		bool progress = false;

		check_negotiation(c);
		for (int d = 0; d < 2; d++) {
			struct iwd_dir *D = &c->dir[d];
			bool done = D->close_done;

			if (D->kick) {
				D->kick = false;
				if (!D->close_done)
					process(c, D, false);
				progress = true;
			}
			maybe_finish(c, D);
			progress |= D->close_done != done;
		}
		if (!progress)
			return;
	}
}

/* ---------------------------------------------------------------------- */
/* API                                                                      */
/* ---------------------------------------------------------------------- */

struct iwd_iwarp *iwd_iwarp_create(const struct iwd_iwarp_cfg *cfg, const struct iwd_flow *flow,
				   const struct iwd_sink *sink)
{
	struct iwd_iwarp *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (cfg)
		c->cfg = *cfg;
	c->max_msg = c->cfg.max_msg ? c->cfg.max_msg : IWD_MAX_MSG_DEFAULT;
	if (c->max_msg > UINT32_MAX)
		c->max_msg = UINT32_MAX;
	if (flow)
		c->flow = *flow;
	if (sink)
		c->sink = *sink;
	c->first_dir = -1;
	c->init_dir = -1;
	for (int d = 0; d < 2; d++)
		c->dir[d].d = d;
	if (c->cfg.port && c->flow.port[0] != c->cfg.port && c->flow.port[1] != c->cfg.port)
		set_not_iwarp(c);
	return c;
}

void iwd_iwarp_data(struct iwd_iwarp *c, int dir, uint64_t off, const uint8_t *p, size_t n,
		    uint64_t ts_ns, uint64_t frame)
{
	struct iwd_dir *D;

	if (!c || (dir != 0 && dir != 1) || (n && !p) || off + n < off)
		return;
	D = &c->dir[dir];
	if (D->closed)
		return;
	c->ts = ts_ns;
	c->frame = frame;
	/* retransmitted octets: only what is new counts */
	if (off < D->next) {
		uint64_t old = D->next - off;

		if (old >= n)
			return;
		p += old;
		n -= (size_t)old;
		off = D->next;
	}
	if (off > D->next)
		dir_gap(c, D, D->next, off - D->next);
	if (n == 0) {
		pump(c);
		return;
	}
	if (!D->begun) {
		D->begun = true;
		if (c->first_dir < 0)
			c->first_dir = dir;
		dir_begin(c, D);
	}
	feed(c, D, p, n);
	pump(c);
}

void iwd_iwarp_gap(struct iwd_iwarp *c, int dir, uint64_t off, uint64_t n, uint64_t ts_ns,
		   uint64_t frame)
{
	struct iwd_dir *D;
	uint64_t end;

	if (!c || (dir != 0 && dir != 1) || n == 0 || off + n < off)
		return;
	D = &c->dir[dir];
	if (D->closed)
		return;
	c->ts = ts_ns;
	c->frame = frame;
	end = off + n;
	if (end <= D->next)
		return;
	/* octets that never came before the gap are part of it */
	dir_gap(c, D, D->next, end - D->next);
	pump(c);
}

void iwd_iwarp_close(struct iwd_iwarp *c, int dir, enum iwd_close_how how, uint64_t ts_ns)
{
	struct iwd_dir *D;

	if (!c || (dir != 0 && dir != 1))
		return;
	D = &c->dir[dir];
	if (D->closed)
		return;
	c->ts = ts_ns;
	D->closed = true;
	D->how = how;
	pump(c);
	/* both ended: nothing can arrive for anything still waiting */
	if (c->dir[0].closed && c->dir[1].closed) {
		if (!c->negotiated && c->conn == CONN_IWARP)
			fail_negotiation(c);
		for (int d = 0; d < 2; d++) {
			struct iwd_dir *E = &c->dir[d];

			if (E->st == DS_START && c->conn == CONN_UNKNOWN && E->begun) {
				/* held octets of a connection that never decided */
				buf_drop(E);
				E->st = DS_IGNORE;
			}
		}
		pump(c);
		for (int d = 0; d < 2; d++)
			if (!c->dir[d].close_done)
				finish_dir(c, &c->dir[d]);
	}
}

const struct iwd_conn_info *iwd_iwarp_info(const struct iwd_iwarp *c)
{
	return c ? &c->info : NULL;
}

void iwd_iwarp_destroy(struct iwd_iwarp *c)
{
	if (!c)
		return;
	for (int d = 0; d < 2; d++)
		buf_free(&c->dir[d]);
	free(c);
}

/* ---------------------------------------------------------------------- */
/* Names                                                                    */
/* ---------------------------------------------------------------------- */

const char *iwd_opcode_name(uint8_t opcode)
{
	return rdmap_opcode_info(opcode)->name;
}

const char *iwd_term_layer_name(uint8_t layer)
{
	switch (layer) {
	case IW_TERM_LAYER_RDMAP:
		return "RDMAP";
	case IW_TERM_LAYER_DDP:
		return "DDP";
	case IW_TERM_LAYER_LLP:
		return "LLP (MPA)";
	default:
		return "unknown";
	}
}

const char *iwd_term_type_name(uint8_t layer, uint8_t etype)
{
	switch (layer) {
	case IW_TERM_LAYER_RDMAP: /* RFC 5040 §4.8 */
		switch (etype) {
		case 0:
			return "Local Catastrophic";
		case 1:
			return "Remote Protection";
		case 2:
			return "Remote Operation";
		default:
			return "unknown";
		}
	case IW_TERM_LAYER_DDP: /* RFC 5041 §7.2 */
		switch (etype) {
		case 0:
			return "Local Catastrophic";
		case 1:
			return "Tagged Buffer";
		case 2:
			return "Untagged Buffer";
		default:
			return "unknown";
		}
	case IW_TERM_LAYER_LLP: /* RFC 5044 §8 */
		return etype == IW_TERM_LLP_ETYPE_MPA ? "MPA" : "unknown";
	default:
		return "unknown";
	}
}

const char *iwd_term_code_name(uint8_t layer, uint8_t etype, uint8_t code)
{
	static const char *const rdmap_prot[] = {
		[0x00] = "Invalid STag",
		[0x01] = "Base or bounds violation",
		[0x02] = "Access rights violation",
		[0x03] = "STag not associated with RDMAP Stream",
		[0x04] = "TO wrap",
		[0x09] = "STag cannot be invalidated",
	};
	static const char *const rdmap_op[] = {
		[0x05] = "Invalid RDMAP version",
		[0x06] = "Unexpected OpCode",
		[0x07] = "Catastrophic error, localized to RDMAP Stream",
		[0x08] = "Catastrophic error, global",
		[0x09] = "STag cannot be invalidated",
	};
	static const char *const ddp_tagged[] = {
		[0x00] = "Invalid STag",
		[0x01] = "Base or bounds violation",
		[0x02] = "STag not associated with DDP Stream",
		[0x03] = "TO wrap",
		[0x04] = "Invalid DDP version",
	};
	static const char *const ddp_untagged[] = {
		[0x01] = "Invalid QN",
		[0x02] = "Invalid MSN: no buffer available",
		[0x03] = "Invalid MSN: MSN range is not valid",
		[0x04] = "Invalid MO",
		[0x05] = "DDP message too long for available buffer",
		[0x06] = "Invalid DDP version",
	};
	/* RFC 5044 §8 (1-4) and RFC 6581 §8 (5-7) */
	static const char *const mpa[] = {
		[IW_TERM_LLP_CLOSED] = "TCP connection closed, terminated or lost",
		[IW_TERM_LLP_CRC] = "CRC error",
		[IW_TERM_LLP_MARKER] = "Marker error",
		[IW_TERM_LLP_BAD_FRAME] = "Invalid MPA Request or Reply frame",
		[IW_TERM_LLP_LOCAL] = "Local catastrophic error",
		[IW_TERM_LLP_IRD] = "Insufficient IRD resources",
		[IW_TERM_LLP_RTR] = "No matching RTR option",
	};
	const char *const *tab = NULL;
	size_t n = 0;

	switch (layer) {
	case IW_TERM_LAYER_RDMAP:
		if (etype == 0)
			return "Local catastrophic error";
		if ((etype == 1 || etype == 2) && code == 0xFF)
			return "Unspecified error";
		if (etype == 1) {
			tab = rdmap_prot;
			n = sizeof(rdmap_prot) / sizeof(rdmap_prot[0]);
		} else if (etype == 2) {
			tab = rdmap_op;
			n = sizeof(rdmap_op) / sizeof(rdmap_op[0]);
		}
		break;
	case IW_TERM_LAYER_DDP:
		if (etype == 0 && code == 0)
			return "Local catastrophic error";
		if (etype == 1) {
			tab = ddp_tagged;
			n = sizeof(ddp_tagged) / sizeof(ddp_tagged[0]);
		} else if (etype == 2) {
			tab = ddp_untagged;
			n = sizeof(ddp_untagged) / sizeof(ddp_untagged[0]);
		}
		break;
	case IW_TERM_LAYER_LLP:
		if (etype == IW_TERM_LLP_ETYPE_MPA) {
			tab = mpa;
			n = sizeof(mpa) / sizeof(mpa[0]);
		}
		break;
	default:
		break;
	}
	if (!tab || code >= n || !tab[code])
		return "unknown";
	return tab[code];
}
