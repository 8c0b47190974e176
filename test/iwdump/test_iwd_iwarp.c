/* SPDX-License-Identifier: MIT */
/*
 * test_iwd_iwarp.c - iwdump's iWARP decoder (tools/iwdump/iwd_iwarp.c):
 * connections scripted with the stack's own encoders (mpa_frame_encode,
 * mpa_tx_frame for Markers and CRC, ddp_hdr_encode, the RDMAP header
 * encoders, mpa_rtr_encode) are fed in steps, in one-octet chunks, in random
 * chunks and coalesced, and the events are checked field by field: the MPA
 * handshake (rev 1, rev 2 with IRD/ORD and peer-to-peer RTRs, RFC 8797
 * private data, rejects), FPDU framing with CRC and Markers either way,
 * messages over several segments, Read latency, every opcode, Terminates in
 * the RFC layout and in Linux siw's, bad CRCs, mid-stream starts, gaps, a
 * truncated end, and the Linux NFS/RDMA captures of test/captures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iw_bytes.h"
#include "iwd.h"
#include "th.h"

/* ---------------------------------------------------------------------- */
/* Scripted connections                                                     */
/* ---------------------------------------------------------------------- */

struct bs {
	uint8_t *p;
	size_t n, cap;
};

static void bs_put(struct bs *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->n + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		ck_assert_ptr_nonnull(b->p);
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

#define STEPS_MAX 1024

/* What one end writes at once: octets [off, off + len) of its stream. */
struct step {
	int dir;
	size_t off, len;
	uint64_t ts;
};

struct script {
	struct bs s[2];
	struct step st[STEPS_MAX];
	unsigned nst;
	struct mpa_tx tx[2];
	uint64_t ts;
	uint32_t msn[2][DDP_QN_COUNT_7306];
};

static void sc_init(struct script *sc)
{
	memset(sc, 0, sizeof(*sc));
	for (int d = 0; d < 2; d++)
		for (int q = 0; q < DDP_QN_COUNT_7306; q++)
			sc->msn[d][q] = DDP_MSN_FIRST;
}

static void sc_fini(struct script *sc)
{
	free(sc->s[0].p);
	free(sc->s[1].p);
}

/* Octets end `dir` writes in one step, 1000 ns after the previous step. */
static void sc_send(struct script *sc, int dir, const void *p, size_t n)
{
	struct step *s;

	ck_assert_uint_lt(sc->nst, STEPS_MAX);
	s = &sc->st[sc->nst++];
	sc->ts += 1000;
	s->dir = dir;
	s->off = sc->s[dir].n;
	s->len = n;
	s->ts = sc->ts;
	bs_put(&sc->s[dir], p, n);
}

static void sc_frame(struct script *sc, int dir, const struct mpa_frame *f)
{
	uint8_t buf[MPA_FRAME_MAX_LEN];
	ssize_t n = mpa_frame_encode(f, buf, sizeof(buf));

	ck_assert_int_gt(n, 0);
	sc_send(sc, dir, buf, (size_t)n);
}

/* Frame one ULPDU with direction dir's mpa_tx (it places Markers, computes
 * the CRC) into out; returns the wire length. */
static size_t sc_fpdu_bytes(struct script *sc, int dir, const uint8_t *u, size_t n, struct bs *out)
{
	struct mpa_fpdu *f = malloc(sizeof(*f));
	struct iovec iov = {.iov_base = (void *)(uintptr_t)u, .iov_len = n};
	size_t total;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(mpa_tx_frame(&sc->tx[dir], &iov, 1, f), IW_OK);
	for (int i = f->first; i < f->first + f->iovcnt; i++)
		bs_put(out, f->iov[i].iov_base, f->iov[i].iov_len);
	total = f->total;
	free(f);
	return total;
}

static size_t sc_fpdu(struct script *sc, int dir, const uint8_t *u, size_t n)
{
	struct bs b = {0};
	size_t w = sc_fpdu_bytes(sc, dir, u, n, &b);

	sc_send(sc, dir, b.p, b.n);
	free(b.p);
	return w;
}

/* A handshake: end `init` sends `req`, the other end `rep`; the mpa_tx of
 * each direction is set as negotiated (RFC 5044 §7.1.1). */
static void sc_handshake(struct script *sc, int init, const struct mpa_frame *req,
			 const struct mpa_frame *rep)
{
	bool crc = req->crc || rep->crc;

	sc_frame(sc, init, req);
	sc_frame(sc, !init, rep);
	mpa_tx_init(&sc->tx[init], crc, rep->markers, 0);
	mpa_tx_init(&sc->tx[!init], crc, req->markers, 0);
}

static void frame_init(struct mpa_frame *f, bool reply, uint8_t rev, bool markers, bool crc)
{
	memset(f, 0, sizeof(*f));
	f->reply = reply;
	f->rev = rev;
	f->markers = markers;
	f->crc = crc;
	if (rev == MPA_REV2) {
		f->enhanced = true;
		f->ird = 16;
		f->ord = 16;
	}
}

/* The usual rev-2 client-server handshake from end 0. */
static void sc_simple(struct script *sc, bool crc, bool m0, bool m1)
{
	struct mpa_frame req, rep;

	/* M in a frame asks for Markers in what its sender receives */
	frame_init(&req, false, MPA_REV2, m1, crc);
	frame_init(&rep, true, MPA_REV2, m0, false);
	sc_handshake(sc, 0, &req, &rep);
}

/* ULPDU builders (RFC 5041 §4, RFC 5040 §4). */
static size_t u_untagged(uint8_t *u, uint8_t op, uint32_t qn, uint32_t msn, uint32_t mo, bool last,
			 uint32_t inv, const void *payload, size_t plen)
{
	struct ddp_hdr h = {.last = last,
			    .rsvdulp = rdmap_ctrl_make(op),
			    .rsvdulp2 = inv,
			    .qn = qn,
			    .msn = msn,
			    .mo = mo};

	ck_assert_int_eq(ddp_hdr_encode(&h, u, DDP_UNTAGGED_HDR_LEN), DDP_UNTAGGED_HDR_LEN);
	if (plen)
		memcpy(u + DDP_UNTAGGED_HDR_LEN, payload, plen);
	return DDP_UNTAGGED_HDR_LEN + plen;
}

static size_t u_tagged(uint8_t *u, uint8_t op, uint32_t stag, uint64_t to, bool last,
		       const void *payload, size_t plen)
{
	struct ddp_hdr h = {.tagged = true,
			    .last = last,
			    .rsvdulp = rdmap_ctrl_make(op),
			    .stag = stag,
			    .to = to};

	ck_assert_int_eq(ddp_hdr_encode(&h, u, DDP_TAGGED_HDR_LEN), DDP_TAGGED_HDR_LEN);
	if (plen)
		memcpy(u + DDP_TAGGED_HDR_LEN, payload, plen);
	return DDP_TAGGED_HDR_LEN + plen;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* A Send of `len` octets split into segments of at most `seg` octets. */
static void sc_send_msg(struct script *sc, int dir, uint8_t op, const uint8_t *data, size_t len,
			size_t seg)
{
	uint8_t u[MPA_ULPDU_MAX];
	uint32_t msn = sc->msn[dir][DDP_QN_SEND]++;
	size_t off = 0;

	do {
		size_t n = len - off < seg ? len - off : seg;
		size_t ul = u_untagged(u, op, DDP_QN_SEND, msn, (uint32_t)off, off + n == len, 0,
				       data + off, n);

		sc_fpdu(sc, dir, u, ul);
		off += n;
	} while (off < len);
}

static void sc_write_msg(struct script *sc, int dir, uint8_t op, uint32_t stag, uint64_t to,
			 const uint8_t *data, size_t len, size_t seg)
{
	uint8_t u[MPA_ULPDU_MAX];
	size_t off = 0;

	do {
		size_t n = len - off < seg ? len - off : seg;
		size_t ul = u_tagged(u, op, stag, to + off, off + n == len, data + off, n);

		sc_fpdu(sc, dir, u, ul);
		off += n;
	} while (off < len);
}

static void sc_read_req(struct script *sc, int dir, const struct rdmap_read_req *r)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN];
	uint8_t rr[RDMAP_READ_REQ_LEN];

	rdmap_read_req_encode(r, rr);
	u_untagged(u, RDMAP_OP_READ_REQ, DDP_QN_READ_REQ, sc->msn[dir][DDP_QN_READ_REQ]++, 0, true,
		   0, rr, sizeof(rr));
	sc_fpdu(sc, dir, u, sizeof(u));
}

/* A Terminate whose RDMAP part is t[0..n) as given. */
static void sc_term_raw(struct script *sc, int dir, const uint8_t *t, size_t n)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_MAX_LEN + 8];

	ck_assert_uint_le(n, RDMAP_TERM_MAX_LEN + 8);
	u_untagged(u, RDMAP_OP_TERMINATE, DDP_QN_TERMINATE, sc->msn[dir][DDP_QN_TERMINATE]++, 0,
		   true, 0, t, n);
	sc_fpdu(sc, dir, u, DDP_UNTAGGED_HDR_LEN + n);
}

/* ---------------------------------------------------------------------- */
/* Recording the events                                                     */
/* ---------------------------------------------------------------------- */

struct rev {
	struct iwd_event ev;
	struct iwd_fpdu fp;
	struct iwd_msg msg;
	uint8_t *blob; /* the FPDU's ULPDU or the message's data */
	size_t blob_len;
	char *line;
};

struct rec {
	struct rev *e;
	size_t n, cap;
};

static uint32_t fnv(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* One line with every field, for comparing runs. */
static char *ev_line(const struct iwd_event *ev)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	ck_assert_ptr_nonnull(f);
	fprintf(f, "k%d d%d fr%llu ts%llu q%u n[%s]", ev->kind, ev->dir,
		(unsigned long long)ev->frame, (unsigned long long)ev->ts_ns, ev->quirks,
		ev->note ? ev->note : "");
	switch (ev->kind) {
	case IWD_EV_MPA_FRAME: {
		const struct mpa_frame *m = &ev->u.mpa.f;

		fprintf(f,
			" mpa err%d len%u r%d m%d c%d rej%d s%d rev%u p2p%d rtr%u ird%u ord%u pd%u",
			ev->u.mpa.err, ev->u.mpa.len, m->reply, m->markers, m->crc, m->reject,
			m->enhanced, m->rev, m->p2p, m->rtr, m->ird, m->ord, m->pd_len);
		break;
	}
	case IWD_EV_FPDU: {
		const struct iwd_fpdu *p = ev->u.fpdu;

		fprintf(f, " fpdu off%llu w%u ul%u pad%u crc%d %08x/%08x nm%u",
			(unsigned long long)p->off, p->wire_len, p->ulpdu_len, p->pad, p->crc,
			p->crc_rx, p->crc_calc, p->nmarkers);
		for (unsigned i = 0; i < p->nmarkers; i++)
			fprintf(f, " [%llu %u %d]", (unsigned long long)p->markers[i].off,
				p->markers[i].fpduptr, p->markers[i].ok);
		fprintf(f, " ddp%d rv%u op%u pl%u h%08x rtr%d", p->ddp_ok, p->rdmap_rv, p->opcode,
			p->payload_len, fnv(p->ulpdu, p->ulpdu_len), p->rtr);
		break;
	}
	case IWD_EV_MSG: {
		const struct iwd_msg *m = ev->u.msg;

		fprintf(f,
			" msg op%u t%d stag%x to%llx qn%u msn%u len%u seg%u ff%llu lf%llu crcb%d "
			"rtr%d rtt%lld dl%u tr%d h%08x",
			m->opcode, m->tagged, m->stag, (unsigned long long)m->to, m->qn, m->msn,
			m->len, m->segments, (unsigned long long)m->first_frame,
			(unsigned long long)m->last_frame, m->crc_bad, m->rtr,
			(long long)m->read_rtt_ns, m->data_len, m->truncated,
			m->data_len ? fnv(m->data, m->data_len) : 0);
		break;
	}
	case IWD_EV_GAP:
	case IWD_EV_UNDECODED:
		fprintf(f, " range %llu+%llu", (unsigned long long)ev->u.gap.off,
			(unsigned long long)ev->u.gap.len);
		break;
	case IWD_EV_CLOSE:
		fprintf(f, " close%d", ev->u.close);
		break;
	}
	fclose(f);
	return s;
}

static void rec_event(void *user, const struct iwd_event *ev)
{
	struct rec *r = user;
	struct rev *e;

	ck_assert_ptr_nonnull(ev->flow);
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->e = realloc(r->e, r->cap * sizeof(*r->e));
		ck_assert_ptr_nonnull(r->e);
	}
	e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->ev = *ev;
	e->line = ev_line(ev);
	if (ev->kind == IWD_EV_FPDU) {
		e->fp = *ev->u.fpdu;
		e->blob_len = e->fp.ulpdu_len;
		e->blob = th_memdup_exact(e->fp.ulpdu, e->blob_len);
	} else if (ev->kind == IWD_EV_MSG) {
		e->msg = *ev->u.msg;
		e->blob_len = e->msg.data_len;
		e->blob = th_memdup_exact(e->msg.data, e->blob_len);
	}
}

static void rec_free(struct rec *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].blob);
		free(r->e[i].line);
	}
	free(r->e);
	memset(r, 0, sizeof(*r));
}

static size_t rec_count(const struct rec *r, enum iwd_ev_kind kind)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		k += r->e[i].ev.kind == kind;
	return k;
}

/* The k-th event of `kind` (0-based). */
static const struct rev *rec_nth(const struct rec *r, enum iwd_ev_kind kind, size_t k)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i].ev.kind == kind && k-- == 0)
			return &r->e[i];
	ck_abort_msg("no event %d #%zu", kind, k);
	return NULL;
}

static void rec_dump(const struct rec *r)
{
	for (size_t i = 0; i < r->n; i++)
		fprintf(stderr, "  %s\n", r->e[i].line);
}

static void rec_expect_same(const struct rec *a, const struct rec *b, const char *what)
{
	if (a->n != b->n) {
		fprintf(stderr, "%s: %zu events vs %zu\n", what, a->n, b->n);
		rec_dump(a);
		fprintf(stderr, "--\n");
		rec_dump(b);
	}
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		ck_assert_msg(strcmp(a->e[i].line, b->e[i].line) == 0, "%s: event %zu\n%s\n%s",
			      what, i, a->e[i].line, b->e[i].line);
}

/* ---------------------------------------------------------------------- */
/* Running the decoder                                                      */
/* ---------------------------------------------------------------------- */

enum feed_mode {
	FEED_STEPS,	/* one call per step */
	FEED_OCTETS,	/* one call per octet */
	FEED_RANDOM,	/* random chunks */
	FEED_COALESCED, /* consecutive steps of a direction in one call */
};

static const struct iwd_flow test_flow = {
	.id = 1, .af = 2, .port = {40000, 20049}, .syn_seen = true};

static void feed_chunk(struct iwd_iwarp *c, int dir, uint64_t off, const uint8_t *p, size_t n,
		       uint64_t ts, uint64_t frame)
{
	uint8_t *copy = th_memdup_exact(p, n);

	iwd_iwarp_data(c, dir, off, copy, n, ts, frame);
	free(copy);
}

/* Feed steps [first, last) of sc in `mode`; the octets of direction d below
 * skip[d] are left out (as if the capture started there: offsets are
 * renumbered from it). */
static void feed_steps(struct iwd_iwarp *c, const struct script *sc, enum feed_mode mode,
		       uint64_t seed, const size_t skip[2])
{
	struct th_rng rng;

	th_rng_init(&rng, seed);
	for (unsigned i = 0; i < sc->nst; i++) {
		const struct step *s = &sc->st[i];
		size_t off = s->off, len = s->len, end;
		const uint8_t *base = sc->s[s->dir].p;

		if (skip && off + len <= skip[s->dir])
			continue;
		if (skip && off < skip[s->dir]) {
			len -= skip[s->dir] - off;
			off = skip[s->dir];
		}
		end = off + len;
		if (mode == FEED_COALESCED) {
			/* take the following steps of the same direction too */
			while (i + 1 < sc->nst && sc->st[i + 1].dir == s->dir) {
				i++;
				end = sc->st[i].off + sc->st[i].len;
			}
		}
		while (off < end) {
			size_t n = end - off;

			if (mode == FEED_OCTETS)
				n = 1;
			else if (mode == FEED_RANDOM)
				n = (size_t)th_rng_range(&rng, 1, n < 3000 ? n : 3000);
			feed_chunk(c, s->dir, off - (skip ? skip[s->dir] : 0), base + off, n,
				   sc->st[i].ts, i + 1);
			off += n;
		}
	}
}

static void run_cfg(const struct script *sc, const struct iwd_iwarp_cfg *cfg, enum feed_mode mode,
		    uint64_t seed, struct rec *r, struct iwd_conn_info *info)
{
	struct iwd_sink sink = {.event = rec_event, .user = r};
	struct iwd_iwarp *c = iwd_iwarp_create(cfg, &test_flow, &sink);

	ck_assert_ptr_nonnull(c);
	feed_steps(c, sc, mode, seed, NULL);
	iwd_iwarp_close(c, 0, IWD_CLOSE_FIN, sc->ts + 1);
	iwd_iwarp_close(c, 1, IWD_CLOSE_FIN, sc->ts + 2);
	if (info)
		*info = *iwd_iwarp_info(c);
	iwd_iwarp_destroy(c);
}

static void run(const struct script *sc, struct rec *r, struct iwd_conn_info *info)
{
	struct iwd_iwarp_cfg cfg = {.keep_fpdus = true};

	run_cfg(sc, &cfg, FEED_STEPS, 1, r, info);
}

/* No event of these kinds carries a note. */
static void expect_clean(const struct rec *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct rev *e = &r->e[i];

		ck_assert_msg(e->ev.kind != IWD_EV_UNDECODED && e->ev.kind != IWD_EV_GAP,
			      "unexpected %s", e->line);
		ck_assert_msg(e->ev.note == NULL, "unexpected note: %s", e->line);
		if (e->ev.kind == IWD_EV_FPDU)
			ck_assert_int_ne(e->fp.crc, IWD_CRC_BAD);
	}
}

/* ---------------------------------------------------------------------- */
/* Handshake                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(rev1_handshake_sets_crc_both_ways_and_markers_per_direction)
{
	struct script sc;
	struct mpa_frame req, rep;
	struct iwd_conn_info info;
	uint8_t data[1200];
	struct rec r = {0};
	const struct rev *e;

	sc_init(&sc);
	/* the Initiator wants Markers in what it receives, the Responder CRC */
	frame_init(&req, false, MPA_REV1, true, false);
	frame_init(&rep, true, MPA_REV1, false, true);
	sc_handshake(&sc, 0, &req, &rep);
	fill(data, sizeof(data), 3);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 100, 1000);
	sc_send_msg(&sc, 1, RDMAP_OP_SEND, data, sizeof(data), 1000);
	sc_write_msg(&sc, 1, RDMAP_OP_WRITE, 0x4455, 0x1000, data, 600, 1000);
	run(&sc, &r, &info);

	expect_clean(&r);
	ck_assert(info.iwarp && info.mpa_seen && !info.midstream && !info.rejected);
	ck_assert_uint_eq(info.rev, 1);
	ck_assert(info.crc);
	ck_assert(!info.markers[0]);
	ck_assert(info.markers[1]);
	ck_assert_uint_eq(info.fpdu_start[0], MPA_FRAME_HDR_LEN);
	ck_assert_uint_eq(info.fpdu_start[1], MPA_FRAME_HDR_LEN);
	ck_assert(!info.req.reply && info.req.markers && !info.req.crc);
	ck_assert(info.rep.reply && !info.rep.markers && info.rep.crc);

	ck_assert_uint_eq(rec_count(&r, IWD_EV_MPA_FRAME), 2);
	e = rec_nth(&r, IWD_EV_MPA_FRAME, 0);
	ck_assert_int_eq(e->ev.dir, 0);
	ck_assert_int_eq(e->ev.u.mpa.err, IW_OK);
	ck_assert_uint_eq(e->ev.u.mpa.len, MPA_FRAME_HDR_LEN);
	ck_assert(!e->ev.u.mpa.f.reply && e->ev.u.mpa.f.rev == 1 && !e->ev.u.mpa.rpcrdma_pd);
	e = rec_nth(&r, IWD_EV_MPA_FRAME, 1);
	ck_assert_int_eq(e->ev.dir, 1);
	ck_assert(e->ev.u.mpa.f.reply && e->ev.u.mpa.f.crc);

	/* direction 0: CRC, no Markers */
	e = rec_nth(&r, IWD_EV_FPDU, 0);
	ck_assert_int_eq(e->ev.dir, 0);
	ck_assert_uint_eq(e->fp.off, MPA_FRAME_HDR_LEN);
	ck_assert_int_eq(e->fp.crc, IWD_CRC_OK);
	ck_assert_uint_eq(e->fp.crc_rx, e->fp.crc_calc);
	ck_assert_uint_eq(e->fp.nmarkers, 0);
	ck_assert_uint_eq(e->fp.ulpdu_len, 118);
	ck_assert_uint_eq(e->fp.pad, 0);
	ck_assert_uint_eq(e->fp.wire_len, 2 + 118 + 4);
	ck_assert(e->fp.ddp_ok && !e->fp.ddp.tagged && e->fp.ddp.last);
	ck_assert_uint_eq(e->fp.rdmap_rv, 1);
	ck_assert_uint_eq(e->fp.opcode, RDMAP_OP_SEND);
	ck_assert_uint_eq(e->fp.payload_len, 100);
	ck_assert_mem_eq(e->blob + 18, data, 100);

	/* direction 1: Markers from its first octet (leading Marker, FPDUPTR 0) */
	e = rec_nth(&r, IWD_EV_FPDU, 1);
	ck_assert_int_eq(e->ev.dir, 1);
	ck_assert_uint_eq(e->fp.off, MPA_FRAME_HDR_LEN);
	ck_assert_uint_ge(e->fp.nmarkers, 2);
	ck_assert_uint_eq(e->fp.markers[0].off, MPA_FRAME_HDR_LEN);
	ck_assert_uint_eq(e->fp.markers[0].fpduptr, 0);
	for (unsigned i = 0; i < e->fp.nmarkers; i++) {
		ck_assert(e->fp.markers[i].ok);
		ck_assert_uint_eq((e->fp.markers[i].off - MPA_FRAME_HDR_LEN) % 512, 0);
	}
	ck_assert_uint_eq(e->fp.markers[1].fpduptr, 512 - 4);

	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 3);
	e = rec_nth(&r, IWD_EV_MSG, 1);
	ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_SEND);
	ck_assert_uint_eq(e->msg.len, sizeof(data));
	ck_assert_uint_eq(e->msg.segments, 2);
	ck_assert_uint_eq(e->msg.data_len, sizeof(data));
	ck_assert_mem_eq(e->blob, data, sizeof(data));
	e = rec_nth(&r, IWD_EV_MSG, 2);
	ck_assert(e->msg.tagged);
	ck_assert_uint_eq(e->msg.stag, 0x4455);
	ck_assert_uint_eq(e->msg.to, 0x1000);
	ck_assert_uint_eq(e->msg.len, 600);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_CLOSE), 2);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(the_initiator_is_whoever_sends_the_request)
{
	struct script sc;
	struct mpa_frame req, rep;
	struct iwd_conn_info info;
	uint8_t data[40] = {1, 2, 3};
	struct rec r = {0};

	sc_init(&sc);
	frame_init(&req, false, MPA_REV2, false, true);
	frame_init(&rep, true, MPA_REV2, true, true);
	sc_handshake(&sc, 1, &req, &rep);
	sc_send_msg(&sc, 1, RDMAP_OP_SEND, data, sizeof(data), 100);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, sizeof(data), 100);
	run(&sc, &r, &info);
	expect_clean(&r);
	ck_assert(info.req.rev == 2 && !info.req.reply);
	/* the Reply (sent by end 0) has M: Markers in direction 1 */
	ck_assert(info.markers[1] && !info.markers[0]);
	ck_assert_int_eq(rec_nth(&r, IWD_EV_MPA_FRAME, 0)->ev.dir, 1);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 2);
	ck_assert_uint_gt(rec_nth(&r, IWD_EV_FPDU, 0)->fp.nmarkers, 0);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(rev2_handshake_reports_ird_ord_and_each_peer_to_peer_rtr)
{
	static const enum mpa_rtr forms[] = {MPA_RTR_SEND, MPA_RTR_WRITE, MPA_RTR_READ};

	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		struct script sc;
		struct mpa_frame req, rep;
		struct iwd_conn_info info;
		uint8_t u[64], data[64];
		struct rec r = {0};
		const struct rev *e;
		ssize_t n;

		sc_init(&sc);
		frame_init(&req, false, MPA_REV2, false, true);
		req.p2p = true;
		req.rtr = MPA_RTR_ALL;
		req.ird = 7;
		req.ord = 9;
		frame_init(&rep, true, MPA_REV2, false, true);
		rep.p2p = true;
		rep.rtr = (uint8_t)forms[k];
		rep.ird = 9;
		rep.ord = 7;
		sc_handshake(&sc, 0, &req, &rep);
		n = mpa_rtr_encode(forms[k], u, sizeof(u));
		ck_assert_int_gt(n, 0);
		sc_fpdu(&sc, 0, u, (size_t)n);
		sc.msn[0][forms[k] == MPA_RTR_READ ? DDP_QN_READ_REQ : DDP_QN_SEND]++;
		if (forms[k] == MPA_RTR_READ) {
			/* the zero-length Read Response to the placeholder sink STag 1 */
			size_t ul = u_tagged(u, RDMAP_OP_READ_RESP, 1, 0, true, NULL, 0);

			sc_fpdu(&sc, 1, u, ul);
		}
		fill(data, sizeof(data), 9);
		sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, sizeof(data), 1000);
		sc_send_msg(&sc, 1, RDMAP_OP_SEND, data, sizeof(data), 1000);
		run(&sc, &r, &info);
		expect_clean(&r);

		ck_assert_uint_eq(info.rev, 2);
		e = rec_nth(&r, IWD_EV_MPA_FRAME, 0);
		ck_assert(e->ev.u.mpa.f.enhanced && e->ev.u.mpa.f.p2p);
		ck_assert_uint_eq(e->ev.u.mpa.f.rtr, MPA_RTR_ALL);
		ck_assert_uint_eq(e->ev.u.mpa.f.ird, 7);
		ck_assert_uint_eq(e->ev.u.mpa.f.ord, 9);
		ck_assert_uint_eq(e->ev.u.mpa.len, MPA_FRAME_HDR_LEN + MPA_IRD_ORD_LEN);
		e = rec_nth(&r, IWD_EV_MPA_FRAME, 1);
		ck_assert_uint_eq(e->ev.u.mpa.f.rtr, forms[k]);
		ck_assert_uint_eq(e->ev.u.mpa.f.ird, 9);

		e = rec_nth(&r, IWD_EV_FPDU, 0);
		ck_assert_int_eq(e->ev.dir, 0);
		ck_assert(e->fp.rtr);
		ck_assert_uint_eq(e->ev.quirks, 0);
		ck_assert_uint_eq(e->fp.payload_len, 0);
		e = rec_nth(&r, IWD_EV_MSG, 0);
		ck_assert(e->msg.rtr);
		ck_assert_uint_eq(e->msg.len, 0);
		if (forms[k] == MPA_RTR_READ) {
			ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_READ_REQ);
			ck_assert_uint_eq(e->msg.rreq.size, 0);
			e = rec_nth(&r, IWD_EV_MSG, 1);
			ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_READ_RESP);
			ck_assert(!e->msg.rtr);
			ck_assert_int_eq(e->msg.read_rtt_ns, 1000);
		}
		/* only the first FPDU is the RTR */
		for (size_t i = 1; i < rec_count(&r, IWD_EV_FPDU); i++)
			ck_assert(!rec_nth(&r, IWD_EV_FPDU, i)->fp.rtr);
		rec_free(&r);
		sc_fini(&sc);
	}
}
END_TEST

/* Linux siw's experimental GSO flag (0x08 of octet 16) is a reserved bit
 * for the RFC: reported as received, the frame decodes all the same. */
START_TEST(reserved_flag_bits_of_a_frame_are_reported)
{
	struct script sc;
	struct mpa_frame req, rep;
	uint8_t buf[MPA_FRAME_MAX_LEN];
	struct rec r = {0};
	ssize_t n;

	sc_init(&sc);
	frame_init(&req, false, MPA_REV2, false, false);
	frame_init(&rep, true, MPA_REV1, false, false);
	n = mpa_frame_encode(&req, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	buf[16] |= 0x08;
	sc_send(&sc, 0, buf, (size_t)n);
	n = mpa_frame_encode(&rep, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	buf[16] |= 0x10; /* S is reserved in revision 1 */
	sc_send(&sc, 1, buf, (size_t)n);
	run(&sc, &r, NULL);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MPA_FRAME), 2);
	ck_assert_int_eq(rec_nth(&r, IWD_EV_MPA_FRAME, 0)->ev.u.mpa.err, IW_OK);
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MPA_FRAME, 0)->ev.u.mpa.rsvd_flags, 0x08);
	ck_assert(rec_nth(&r, IWD_EV_MPA_FRAME, 0)->ev.u.mpa.f.enhanced);
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MPA_FRAME, 1)->ev.u.mpa.rsvd_flags, 0x10);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(write_rtr_with_stag_0_is_flagged_as_a_quirk)
{
	struct script sc;
	struct mpa_frame req, rep;
	uint8_t u[64];
	struct rec r = {0};
	ssize_t n;

	sc_init(&sc);
	frame_init(&req, false, MPA_REV2, false, true);
	req.p2p = true;
	req.rtr = MPA_RTR_WRITE;
	frame_init(&rep, true, MPA_REV2, false, true);
	rep.p2p = true;
	rep.rtr = MPA_RTR_WRITE;
	sc_handshake(&sc, 0, &req, &rep);
	n = mpa_rtr_encode(MPA_RTR_WRITE, u, sizeof(u));
	iw_put_be32(u + 2, 0);
	sc_fpdu(&sc, 0, u, (size_t)n);
	run(&sc, &r, NULL);
	ck_assert(rec_nth(&r, IWD_EV_FPDU, 0)->fp.rtr);
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_FPDU, 0)->ev.quirks, IWD_QUIRK_RTR_STAG0);
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MSG, 0)->ev.quirks, IWD_QUIRK_RTR_STAG0);
	ck_assert(rec_nth(&r, IWD_EV_MSG, 0)->msg.rtr);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(rfc8797_private_data_is_recognised_after_the_ird_ord_word)
{
	static const uint8_t linux_pd[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
	static const uint8_t big_pd[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0xff, 0x00};
	static const uint8_t other_pd[] = {0xf6, 0xab, 0x0e, 0x19, 0x01, 0x01, 0x03, 0x03};
	struct script sc;
	struct mpa_frame req, rep;
	struct rec r = {0};
	const struct rev *e;

	sc_init(&sc);
	frame_init(&req, false, MPA_REV2, false, false);
	req.pd = linux_pd;
	req.pd_len = sizeof(linux_pd);
	frame_init(&rep, true, MPA_REV2, false, false);
	rep.pd = big_pd;
	rep.pd_len = sizeof(big_pd);
	sc_handshake(&sc, 0, &req, &rep);
	run(&sc, &r, NULL);
	e = rec_nth(&r, IWD_EV_MPA_FRAME, 0);
	ck_assert(e->ev.u.mpa.rpcrdma_pd);
	ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_version, 1);
	ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_flags, 1);
	ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_send_size, 4096);
	ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_recv_size, 4096);
	ck_assert_uint_eq(e->ev.u.mpa.len, MPA_FRAME_HDR_LEN + 4 + 8);
	e = rec_nth(&r, IWD_EV_MPA_FRAME, 1);
	ck_assert(e->ev.u.mpa.rpcrdma_pd);
	ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_flags, 0);
	ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_send_size, 256 * 1024);
	ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_recv_size, 1024);
	rec_free(&r);
	sc_fini(&sc);

	/* rev 1 carries it first in the private data; a foreign block is not it */
	sc_init(&sc);
	frame_init(&req, false, MPA_REV1, false, true);
	req.pd = linux_pd;
	req.pd_len = sizeof(linux_pd);
	frame_init(&rep, true, MPA_REV1, false, true);
	rep.pd = other_pd;
	rep.pd_len = sizeof(other_pd);
	sc_handshake(&sc, 0, &req, &rep);
	run(&sc, &r, NULL);
	ck_assert(rec_nth(&r, IWD_EV_MPA_FRAME, 0)->ev.u.mpa.rpcrdma_pd);
	ck_assert(!rec_nth(&r, IWD_EV_MPA_FRAME, 1)->ev.u.mpa.rpcrdma_pd);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(crc_off_fpdus_report_the_crc_as_off)
{
	struct script sc;
	struct iwd_conn_info info;
	uint8_t data[300];
	struct rec r = {0};

	sc_init(&sc);
	sc_simple(&sc, false, false, false);
	fill(data, sizeof(data), 1);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, sizeof(data), 128);
	run(&sc, &r, &info);
	expect_clean(&r);
	ck_assert(!info.crc);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_FPDU), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct rev *e = rec_nth(&r, IWD_EV_FPDU, i);

		ck_assert_int_eq(e->fp.crc, IWD_CRC_OFF);
		/* mpa_tx sends a zero CRC field when CRC is off */
		ck_assert_uint_eq(e->fp.crc_rx, 0);
	}
	ck_assert_mem_eq(rec_nth(&r, IWD_EV_MSG, 0)->blob, data, sizeof(data));
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

/* Many ULPDU sizes in a row: Markers land everywhere - before the length,
 * inside, right after the PAD, right after the CRC. */
START_TEST(markers_either_way_and_both_ways_are_placed_checked_and_removed)
{
	for (int m = 0; m < 4; m++) {
		bool m0 = m & 1, m1 = m & 2;
		struct script sc;
		struct iwd_conn_info info;
		uint8_t u[2200];
		struct rec r = {0};
		size_t nf = 0, wire[2] = {MPA_FRAME_HDR_LEN + 4, MPA_FRAME_HDR_LEN + 4};
		unsigned markers_seen[2] = {0, 0};

		sc_init(&sc);
		sc_simple(&sc, true, m0, m1);
		for (size_t len = 0; len < 700; len += 13) {
			for (int d = 0; d < 2; d++) {
				uint8_t pay[2100];
				size_t ul;

				fill(pay, len * 3, (uint8_t)len);
				ul = u_untagged(u, RDMAP_OP_SEND, 0, sc.msn[d][0]++, 0, true, 0,
						pay, len * 3);
				sc_fpdu(&sc, d, u, ul);
			}
		}
		run(&sc, &r, &info);
		expect_clean(&r);
		ck_assert(info.markers[0] == m0 && info.markers[1] == m1);
		for (size_t i = 0; i < rec_count(&r, IWD_EV_FPDU); i++) {
			const struct rev *e = rec_nth(&r, IWD_EV_FPDU, i);
			int d = e->ev.dir;
			size_t len = (i / 2) * 13 * 3;
			uint8_t pay[2100];

			ck_assert_uint_eq(e->fp.off, wire[d]);
			wire[d] += e->fp.wire_len;
			ck_assert_uint_eq(e->fp.ulpdu_len, 18 + len);
			fill(pay, len, (uint8_t)(len / 3));
			ck_assert_mem_eq(e->blob + 18, pay, len);
			ck_assert_int_eq(e->fp.crc, IWD_CRC_OK);
			for (unsigned k = 0; k < e->fp.nmarkers; k++) {
				ck_assert(e->fp.markers[k].ok);
				ck_assert_uint_eq((e->fp.markers[k].off - 24) % 512, 0);
				ck_assert_uint_ge(e->fp.markers[k].off, e->fp.off);
				ck_assert_uint_lt(e->fp.markers[k].off, e->fp.off + e->fp.wire_len);
			}
			ck_assert_uint_eq(e->fp.wire_len,
					  2 + e->fp.ulpdu_len + e->fp.pad + 4 + 4 * e->fp.nmarkers);
			markers_seen[d] += e->fp.nmarkers;
			nf++;
		}
		ck_assert_uint_eq(nf, 2 * 54);
		ck_assert_uint_eq(markers_seen[0] > 0, m0);
		ck_assert_uint_eq(markers_seen[1] > 0, m1);
		/* every Marker position of the stream was accounted for */
		for (int d = 0; d < 2; d++)
			if (d ? m1 : m0)
				ck_assert_uint_eq(markers_seen[d], (sc.s[d].n - 24 + 511) / 512);
		rec_free(&r);
		sc_fini(&sc);
	}
}
END_TEST

/* A conversation exercising most paths, used by the chunking tests. */
static void sc_conversation(struct script *sc, bool crc, bool m0, bool m1)
{
	static uint8_t data[65000];
	struct rdmap_read_req rr = {
		.sink_stag = 0x77, .sink_to = 0x10, .size = 5000, .src_stag = 0x99, .src_to = 0x20};

	sc_simple(sc, crc, m0, m1);
	fill(data, sizeof(data), 42);
	sc_send_msg(sc, 0, RDMAP_OP_SEND, data, 3000, 1400);
	sc_send_msg(sc, 1, RDMAP_OP_SEND_SE, data + 5, 90, 1400);
	sc_write_msg(sc, 0, RDMAP_OP_WRITE, 0xabcd, 0x100000, data, 9000, 1460);
	sc_read_req(sc, 0, &rr);
	sc_write_msg(sc, 1, RDMAP_OP_READ_RESP, 0x77, 0x10, data, 5000, 4000);
	sc_send_msg(sc, 0, RDMAP_OP_SEND_INV, data, 17, 1400);
	sc_send_msg(sc, 1, RDMAP_OP_SEND, data, 0, 1400);
	sc_write_msg(sc, 0, RDMAP_OP_WRITE, 0xabce, 0, data, 65000, 64768 - 14);
}

START_TEST(coalesced_fpdus_and_one_octet_chunks_give_identical_events)
{
	for (int m = 0; m < 4; m++) {
		struct script sc;
		struct iwd_iwarp_cfg cfg = {.keep_fpdus = true};
		struct rec ref = {0};

		sc_init(&sc);
		sc_conversation(&sc, m != 1, m & 1, m & 2);
		run_cfg(&sc, &cfg, FEED_STEPS, 1, &ref, NULL);
		expect_clean(&ref);
		ck_assert_uint_eq(rec_count(&ref, IWD_EV_MSG), 8);
		for (enum feed_mode mode = FEED_OCTETS; mode <= FEED_COALESCED; mode++) {
			for (uint64_t seed = 1; seed <= (mode == FEED_RANDOM ? 3u : 1u); seed++) {
				struct rec r = {0};

				if (mode == FEED_OCTETS && m > 0)
					continue; /* slow; once is enough */
				run_cfg(&sc, &cfg, mode, th_seed_for(seed), &r, NULL);
				if (mode == FEED_COALESCED) {
					/* frame numbers and times are those of the
					 * chunk that completes the event */
					ck_assert_uint_eq(r.n, ref.n);
					for (size_t i = 0; i < r.n; i++)
						ck_assert_int_eq(r.e[i].ev.kind, ref.e[i].ev.kind);
				} else {
					rec_expect_same(&ref, &r, "chunked");
				}
				rec_free(&r);
			}
		}
		rec_free(&ref);
		sc_fini(&sc);
	}
}
END_TEST

START_TEST(segments_of_a_write_and_of_a_send_become_one_message_each)
{
	struct script sc;
	uint8_t data[5000];
	struct rec r = {0};
	const struct rev *e;

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	fill(data, sizeof(data), 5);
	sc_write_msg(&sc, 0, RDMAP_OP_WRITE, 0x1234, 0xffff0000, data, 5000, 1800);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 3000, 1000);
	run(&sc, &r, NULL);
	expect_clean(&r);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 2);
	e = rec_nth(&r, IWD_EV_MSG, 0);
	ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_WRITE);
	ck_assert(e->msg.tagged);
	ck_assert_uint_eq(e->msg.segments, 3);
	ck_assert_uint_eq(e->msg.len, 5000);
	ck_assert_uint_eq(e->msg.stag, 0x1234);
	ck_assert_uint_eq(e->msg.to, 0xffff0000);
	ck_assert_uint_eq(e->msg.data_len, 0);
	ck_assert_uint_eq(e->msg.first_frame, 3);
	ck_assert_uint_eq(e->msg.last_frame, 5);
	ck_assert_int_eq(e->msg.read_rtt_ns, -1);
	e = rec_nth(&r, IWD_EV_MSG, 1);
	ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_SEND);
	ck_assert_uint_eq(e->msg.qn, 0);
	ck_assert_uint_eq(e->msg.msn, 1);
	ck_assert_uint_eq(e->msg.segments, 3);
	ck_assert_uint_eq(e->msg.data_len, 3000);
	ck_assert(!e->msg.truncated);
	ck_assert_mem_eq(e->blob, data, 3000);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(a_segment_that_does_not_continue_the_message_ends_it_with_a_note)
{
	struct script sc;
	uint8_t u[200], data[100] = {0};
	struct rec r = {0};
	size_t ul;

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	/* a Send's first segment (no L), then another message */
	ul = u_untagged(u, RDMAP_OP_SEND, 0, 1, 0, false, 0, data, 50);
	sc_fpdu(&sc, 0, u, ul);
	ul = u_tagged(u, RDMAP_OP_WRITE, 5, 0, true, data, 10);
	sc_fpdu(&sc, 0, u, ul);
	/* and a tagged segment whose TO does not continue */
	ul = u_tagged(u, RDMAP_OP_WRITE, 6, 0, false, data, 10);
	sc_fpdu(&sc, 0, u, ul);
	ul = u_tagged(u, RDMAP_OP_WRITE, 6, 11, true, data, 10);
	sc_fpdu(&sc, 0, u, ul);
	run(&sc, &r, NULL);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 4);
	ck_assert_str_eq(rec_nth(&r, IWD_EV_MSG, 0)->ev.note, "message ended without L");
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MSG, 0)->msg.len, 50);
	ck_assert_ptr_null(rec_nth(&r, IWD_EV_MSG, 1)->ev.note);
	ck_assert_str_eq(rec_nth(&r, IWD_EV_MSG, 2)->ev.note, "message ended without L");
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MSG, 3)->msg.to, 11);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(untagged_payload_beyond_max_msg_is_truncated)
{
	struct script sc;
	struct iwd_iwarp_cfg cfg = {.max_msg = 1000};
	uint8_t data[3000];
	struct rec r = {0};
	const struct rev *e;

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	fill(data, sizeof(data), 8);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 3000, 700);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 900, 700);
	run_cfg(&sc, &cfg, FEED_STEPS, 1, &r, NULL);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_FPDU), 0); /* keep_fpdus off */
	e = rec_nth(&r, IWD_EV_MSG, 0);
	ck_assert(e->msg.truncated);
	ck_assert_uint_eq(e->msg.len, 3000);
	ck_assert_uint_eq(e->msg.data_len, 1000);
	ck_assert_mem_eq(e->blob, data, 1000);
	e = rec_nth(&r, IWD_EV_MSG, 1);
	ck_assert(!e->msg.truncated);
	ck_assert_uint_eq(e->msg.data_len, 900);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(read_responses_get_the_latency_of_their_requests_in_order)
{
	struct script sc;
	uint8_t data[3000];
	struct rec r = {0};
	struct rdmap_read_req a = {.sink_stag = 0x100, .size = 3000, .src_stag = 0x200},
			      b = {.sink_stag = 0x101, .size = 10, .src_stag = 0x201};
	const struct rev *e;

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	fill(data, sizeof(data), 4);
	sc_read_req(&sc, 0, &a);					      /* t 3000 */
	sc_read_req(&sc, 0, &b);					      /* t 4000 */
	sc_write_msg(&sc, 1, RDMAP_OP_READ_RESP, 0x100, 0, data, 3000, 1000); /* t 5000-7000 */
	sc_write_msg(&sc, 1, RDMAP_OP_READ_RESP, 0x101, 0, data, 10, 1000);   /* t 8000 */
	sc_write_msg(&sc, 1, RDMAP_OP_READ_RESP, 0x101, 0, data, 10, 1000);   /* no request */
	run(&sc, &r, NULL);
	expect_clean(&r);
	e = rec_nth(&r, IWD_EV_MSG, 0);
	ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_READ_REQ);
	ck_assert_uint_eq(e->msg.rreq.sink_stag, 0x100);
	ck_assert_uint_eq(e->msg.rreq.size, 3000);
	ck_assert_uint_eq(e->msg.rreq.src_stag, 0x200);
	ck_assert_uint_eq(e->msg.qn, DDP_QN_READ_REQ);
	e = rec_nth(&r, IWD_EV_MSG, 2);
	ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_READ_RESP);
	ck_assert_uint_eq(e->msg.segments, 3);
	ck_assert_int_eq(e->msg.read_rtt_ns, 7000 - 3000);
	e = rec_nth(&r, IWD_EV_MSG, 3);
	ck_assert_int_eq(e->msg.read_rtt_ns, 8000 - 4000);
	e = rec_nth(&r, IWD_EV_MSG, 4);
	ck_assert_int_eq(e->msg.read_rtt_ns, -1);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(every_opcode_is_named_and_decoded_including_rfc7306)
{
	static const char *const names[16] = {
		"RDMA Write",
		"RDMA Read Request",
		"RDMA Read Response",
		"Send",
		"Send with Invalidate",
		"Send with Solicited Event",
		"Send with Solicited Event and Invalidate",
		"Terminate",
		"Immediate Data",
		"Immediate Data with Solicited Event",
		"Atomic Request",
		"Atomic Response",
	};
	struct script sc;
	uint8_t u[200], rh[RDMAP_ATOMIC_REQ_LEN], data[32];
	struct rdmap_atomic_req aq = {.aop = RDMAP_AOP_CMP_SWAP,
				      .req_id = 77,
				      .stag = 0x5500,
				      .to = 0x40,
				      .add_swap = 1,
				      .add_swap_mask = ~0ull,
				      .compare = 2,
				      .compare_mask = ~0ull};
	struct rdmap_atomic_resp as = {.req_id = 77, .orig = 0x1122334455667788ull};
	struct rdmap_read_req rr = {.sink_stag = 9, .size = 4, .src_stag = 10};
	static const uint8_t imm[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	struct rdmap_term t;
	struct rec r = {0};
	const struct rev *e;
	size_t ul;

	for (unsigned op = 0; op < 16; op++) {
		ck_assert_ptr_nonnull(iwd_opcode_name((uint8_t)op));
		if (names[op])
			ck_assert_str_eq(iwd_opcode_name((uint8_t)op), names[op]);
	}
	ck_assert_str_eq(iwd_opcode_name(0xC), "reserved (0xC)");

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	fill(data, sizeof(data), 1);
	sc_write_msg(&sc, 0, RDMAP_OP_WRITE, 1, 2, data, 8, 100);
	sc_read_req(&sc, 0, &rr);
	sc_write_msg(&sc, 1, RDMAP_OP_READ_RESP, 9, 0, data, 4, 100);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 8, 100);
	ul = u_untagged(u, RDMAP_OP_SEND_INV, 0, sc.msn[0][0]++, 0, true, 0xfeed01, data, 8);
	sc_fpdu(&sc, 0, u, ul);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND_SE, data, 8, 100);
	ul = u_untagged(u, RDMAP_OP_SEND_SE_INV, 0, sc.msn[0][0]++, 0, true, 0xfeed02, data, 8);
	sc_fpdu(&sc, 0, u, ul);
	ul = u_untagged(u, RDMAP_OP_IMM, 0, sc.msn[0][0]++, 0, true, 0, imm, sizeof(imm));
	sc_fpdu(&sc, 0, u, ul);
	ul = u_untagged(u, RDMAP_OP_IMM_SE, 0, sc.msn[0][0]++, 0, true, 0, imm, sizeof(imm));
	sc_fpdu(&sc, 0, u, ul);
	rdmap_atomic_req_encode(&aq, rh);
	ul = u_untagged(u, RDMAP_OP_ATOMIC_REQ, DDP_QN_READ_REQ, sc.msn[0][1]++, 0, true, 0, rh,
			RDMAP_ATOMIC_REQ_LEN);
	sc_fpdu(&sc, 0, u, ul);
	rdmap_atomic_resp_encode(&as, rh);
	ul = u_untagged(u, RDMAP_OP_ATOMIC_RESP, DDP_QN_ATOMIC_RESP, 1, 0, true, 0, rh,
			RDMAP_ATOMIC_RESP_LEN);
	sc_fpdu(&sc, 1, u, ul);
	memset(&t, 0, sizeof(t));
	t.code = (struct iw_term_code){.layer = 0, .etype = 2, .ecode = 6};
	ul = (size_t)rdmap_term_encode(&t, rh, sizeof(rh));
	sc_term_raw(&sc, 1, rh, ul);
	run(&sc, &r, NULL);
	expect_clean(&r);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 12);
	for (unsigned i = 0; i < 12; i++) {
		static const uint8_t order[12] = {0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 7};

		e = rec_nth(&r, IWD_EV_MSG, i);
		ck_assert_uint_eq(e->msg.opcode, order[i]);
	}
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MSG, 4)->msg.stag, 0xfeed01);
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MSG, 6)->msg.stag, 0xfeed02);
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_MSG, 5)->msg.stag, 0);
	e = rec_nth(&r, IWD_EV_MSG, 7);
	ck_assert_mem_eq(e->msg.imm_data, imm, 8);
	ck_assert_uint_eq(e->msg.len, 0);
	ck_assert_mem_eq(rec_nth(&r, IWD_EV_MSG, 8)->msg.imm_data, imm, 8);
	e = rec_nth(&r, IWD_EV_MSG, 9);
	ck_assert_uint_eq(e->msg.areq.aop, RDMAP_AOP_CMP_SWAP);
	ck_assert_uint_eq(e->msg.areq.req_id, 77);
	ck_assert_uint_eq(e->msg.areq.stag, 0x5500);
	ck_assert_uint_eq(e->msg.areq.compare, 2);
	e = rec_nth(&r, IWD_EV_MSG, 10);
	ck_assert_uint_eq(e->msg.aresp.req_id, 77);
	ck_assert_uint_eq(e->msg.aresp.orig, 0x1122334455667788ull);
	ck_assert_uint_eq(e->msg.qn, DDP_QN_ATOMIC_RESP);
	e = rec_nth(&r, IWD_EV_MSG, 11);
	ck_assert(e->msg.term.std_ok && !e->msg.term.use_siw);
	ck_assert_uint_eq(e->msg.term.std.code.ecode, 6);
	ck_assert_str_eq(iwd_term_code_name(0, 2, 6), "Unexpected OpCode");
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Terminate                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(terminate_in_the_rfc_layout_is_read_the_rfc_way)
{
	uint8_t errant[DDP_UNTAGGED_HDR_LEN], buf[RDMAP_TERM_MAX_LEN];
	struct iw_term_code code = {.layer = 1, .etype = 2, .ecode = 1};
	struct rdmap_term t;
	struct iwd_term it;
	ssize_t n;

	u_untagged(errant, RDMAP_OP_SEND, 7, 3, 0, true, 0, NULL, 0);
	rdmap_term_fill(&t, &code, errant, sizeof(errant), 118, NULL);
	n = rdmap_term_encode(&t, buf, sizeof(buf));
	ck_assert_int_eq(n, 4 + 2 + 18);
	iwd_term_read(buf, (size_t)n, &it);
	ck_assert(it.std_ok);
	ck_assert(!it.siw_ok);
	ck_assert(!it.use_siw);
	ck_assert_uint_eq(it.std.code.layer, 1);
	ck_assert_uint_eq(it.std.code.etype, 2);
	ck_assert_uint_eq(it.std.code.ecode, 1);
	ck_assert(it.std.m && it.std.d && !it.std.r);
	ck_assert_uint_eq(it.std.ddp_seg_len, 118);
	ck_assert(it.copied_ddp_ok);
	ck_assert_uint_eq(it.copied_ddp.qn, 7);
	ck_assert_uint_eq(it.copied_ddp.msn, 3);
	ck_assert_str_eq(iwd_term_layer_name(1), "DDP");
	ck_assert_str_eq(iwd_term_type_name(1, 2), "Untagged Buffer");
	ck_assert_str_eq(iwd_term_code_name(1, 2, 1), "Invalid QN");

	/* an LLP CRC error without header copies */
	code = (struct iw_term_code){.layer = 2, .etype = 0, .ecode = 2};
	rdmap_term_fill(&t, &code, NULL, 0, 0, NULL);
	n = rdmap_term_encode(&t, buf, sizeof(buf));
	iwd_term_read(buf, (size_t)n, &it);
	ck_assert(it.std_ok && !it.siw_ok && !it.use_siw);
	ck_assert_str_eq(iwd_term_code_name(2, 0, it.std.code.ecode), "CRC error");
}
END_TEST

/* siw's struct iwarp_terminate: little-endian bitfields, so on the wire
 * octet 0 = EType << 4 | Layer and M/D/R = 0x01/0x02/0x04 of octet 2. */
static size_t siw_term(uint8_t *p, uint8_t layer, uint8_t etype, uint8_t code, bool m, bool d,
		       bool r)
{
	p[0] = (uint8_t)(etype << 4 | layer);
	p[1] = code;
	p[2] = (uint8_t)((m ? 1 : 0) | (d ? 2 : 0) | (r ? 4 : 0));
	p[3] = 0;
	return 4;
}

START_TEST(terminate_in_siw_layout_is_flagged_and_read_the_siw_way)
{
	struct script sc;
	uint8_t u[200], t[RDMAP_TERM_MAX_LEN], rr[RDMAP_READ_REQ_LEN];
	struct rdmap_read_req req = {.sink_stag = 0x31,
				     .sink_to = 0x1000,
				     .size = 64,
				     .src_stag = 0x4242,
				     .src_to = 0x2000};
	struct iwd_term it;
	struct rec r = {0};
	const struct rev *e;
	size_t n, ul;

	/* an RDMAP remote protection error on a Read Request: D and R */
	n = siw_term(t, 0, 1, 0x00, true, true, true);
	iw_put_be16(t + n, 0); /* siw: payload only, none for a Read Request */
	n += 2;
	rdmap_read_req_encode(&req, rr);
	ul = u_untagged(u, RDMAP_OP_READ_REQ, 1, 1, 0, true, 0, rr, sizeof(rr));
	memcpy(t + n, u, DDP_UNTAGGED_HDR_LEN);
	n += DDP_UNTAGGED_HDR_LEN;
	memcpy(t + n, rr, sizeof(rr));
	n += sizeof(rr);
	iwd_term_read(t, n, &it);
	ck_assert(!it.std_ok);
	ck_assert(it.siw_ok);
	ck_assert(it.use_siw);
	ck_assert_uint_eq(it.siw.code.layer, 0);
	ck_assert_uint_eq(it.siw.code.etype, 1);
	ck_assert(it.siw.m && it.siw.d && it.siw.r);
	ck_assert(it.copied_ddp_ok);
	ck_assert_uint_eq(rdmap_ctrl_opcode(it.copied_ddp.rsvdulp), RDMAP_OP_READ_REQ);
	ck_assert_uint_eq(it.copied_rreq.src_stag, 0x4242);
	ck_assert_uint_eq(it.copied_rreq.sink_to, 0x1000);
	ck_assert_str_eq(iwd_term_type_name(0, 1), "Remote Protection");
	ck_assert_str_eq(iwd_term_code_name(0, 1, 0), "Invalid STag");

	/* an LLP error: siw's octet 0 reads as RDMAP Remote Operation code 2
	 * the RFC way, which is not defined */
	siw_term(t, 2, 0, 2, false, false, false);
	iwd_term_read(t, 4, &it);
	ck_assert(!it.std_ok && it.siw_ok && it.use_siw);
	ck_assert_uint_eq(it.siw.code.layer, 2);
	ck_assert_uint_eq(it.siw.code.ecode, 2);

	/* on the wire: the quirk on the message, and the DDP Segment Length
	 * that counts only the payload of a segment we saw */
	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	ul = u_tagged(u, RDMAP_OP_WRITE, 0xbad, 0x40, true, "0123456789", 10);
	sc_fpdu(&sc, 0, u, ul);
	n = siw_term(t, 0, 1, 0x00, true, true, false);
	iw_put_be16(t + n, 10);
	memcpy(t + n + 2, u, DDP_TAGGED_HDR_LEN);
	sc_term_raw(&sc, 1, t, n + 2 + DDP_TAGGED_HDR_LEN);
	run(&sc, &r, NULL);
	e = rec_nth(&r, IWD_EV_MSG, 1);
	ck_assert_int_eq(e->ev.dir, 1);
	ck_assert_uint_eq(e->msg.opcode, RDMAP_OP_TERMINATE);
	ck_assert(e->msg.term.use_siw);
	ck_assert_uint_eq(e->ev.quirks, IWD_QUIRK_SIW_TERM_LAYOUT | IWD_QUIRK_TERM_SEGLEN_PAYLOAD);
	ck_assert(e->msg.term.copied_ddp_ok && e->msg.term.copied_ddp.tagged);
	ck_assert_uint_eq(e->msg.term.copied_ddp.stag, 0xbad);
	ck_assert_uint_eq(rec_nth(&r, IWD_EV_FPDU, 1)->ev.quirks,
			  IWD_QUIRK_SIW_TERM_LAYOUT | IWD_QUIRK_TERM_SEGLEN_PAYLOAD);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(term_read_prefers_the_rfc_reading_when_both_make_sense)
{
	uint8_t t[8] = {0x11, 0x02, 0, 0};
	struct iwd_term it;

	/* 0x11: DDP Tagged Buffer either way */
	iwd_term_read(t, 4, &it);
	ck_assert(it.std_ok && it.siw_ok && !it.use_siw);
	/* local catastrophic, no copies */
	memset(t, 0, sizeof(t));
	iwd_term_read(t, 4, &it);
	ck_assert(it.std_ok && it.siw_ok && !it.use_siw);
	/* neither: an undefined layer, too short, NULL */
	t[0] = 0x55;
	iwd_term_read(t, 4, &it);
	ck_assert(!it.std_ok && !it.siw_ok && !it.use_siw);
	iwd_term_read(t, 2, &it);
	ck_assert(!it.std_ok && !it.siw_ok);
	iwd_term_read(NULL, 0, &it);
	ck_assert(!it.std_ok && !it.siw_ok);
	/* D set but the copy is missing */
	t[0] = 0x12;
	t[2] = RDMAP_TERM_D | RDMAP_TERM_M;
	iwd_term_read(t, 4, &it);
	ck_assert(!it.std_ok);
}
END_TEST

START_TEST(terminate_names_cover_every_defined_code)
{
	ck_assert_str_eq(iwd_term_layer_name(0), "RDMAP");
	ck_assert_str_eq(iwd_term_layer_name(2), "LLP (MPA)");
	ck_assert_str_eq(iwd_term_layer_name(3), "unknown");
	ck_assert_str_eq(iwd_term_type_name(0, 0), "Local Catastrophic");
	ck_assert_str_eq(iwd_term_type_name(0, 2), "Remote Operation");
	ck_assert_str_eq(iwd_term_type_name(1, 1), "Tagged Buffer");
	ck_assert_str_eq(iwd_term_type_name(2, 0), "MPA");
	ck_assert_str_eq(iwd_term_type_name(2, 1), "unknown");
	ck_assert_str_eq(iwd_term_code_name(0, 1, 1), "Base or bounds violation");
	ck_assert_str_eq(iwd_term_code_name(0, 1, 2), "Access rights violation");
	ck_assert_str_eq(iwd_term_code_name(0, 1, 0xFF), "Unspecified error");
	ck_assert_str_eq(iwd_term_code_name(0, 2, 5), "Invalid RDMAP version");
	ck_assert_str_eq(iwd_term_code_name(0, 0, 0x33), "Local catastrophic error");
	ck_assert_str_eq(iwd_term_code_name(1, 2, 2), "Invalid MSN: no buffer available");
	ck_assert_str_eq(iwd_term_code_name(1, 2, 4), "Invalid MO");
	ck_assert_str_eq(iwd_term_code_name(1, 2, 5), "DDP message too long for available buffer");
	ck_assert_str_eq(iwd_term_code_name(1, 1, 4), "Invalid DDP version");
	ck_assert_str_eq(iwd_term_code_name(2, 0, 3), "Marker error");
	ck_assert_str_eq(iwd_term_code_name(2, 0, 6), "Insufficient IRD resources");
	ck_assert_str_eq(iwd_term_code_name(2, 0, 7), "No matching RTR option");
	ck_assert_str_eq(iwd_term_code_name(2, 0, 8), "unknown");
	ck_assert_str_eq(iwd_term_code_name(1, 2, 0), "unknown");
	ck_assert_str_eq(iwd_term_code_name(9, 9, 9), "unknown");
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors                                                                   */
/* ---------------------------------------------------------------------- */

START_TEST(bad_crc_is_reported_and_decoding_goes_on)
{
	struct script sc;
	uint8_t data[400];
	struct rec r = {0};
	const struct rev *e;
	size_t at;

	sc_init(&sc);
	sc_simple(&sc, true, true, false);
	fill(data, sizeof(data), 6);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 100, 1000);
	at = sc.s[0].n;
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 400, 1000);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 50, 1000);
	sc.s[0].p[at + 100] ^= 0x40; /* a payload octet of the second FPDU */
	run(&sc, &r, NULL);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_FPDU), 3);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_UNDECODED), 0);
	e = rec_nth(&r, IWD_EV_FPDU, 1);
	ck_assert_int_eq(e->fp.crc, IWD_CRC_BAD);
	ck_assert_uint_ne(e->fp.crc_rx, e->fp.crc_calc);
	ck_assert_str_eq(e->ev.note, "CRC error (RFC 5044 §4.4)");
	ck_assert_int_eq(rec_nth(&r, IWD_EV_FPDU, 2)->fp.crc, IWD_CRC_OK);
	ck_assert(rec_nth(&r, IWD_EV_MSG, 1)->msg.crc_bad);
	ck_assert(!rec_nth(&r, IWD_EV_MSG, 2)->msg.crc_bad);
	ck_assert_mem_eq(rec_nth(&r, IWD_EV_MSG, 2)->blob, data, 50);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(marker_disagreement_is_reported_and_decoding_goes_on)
{
	for (int crc = 0; crc < 2; crc++) {
		struct script sc;
		uint8_t data[1500];
		struct rec r = {0};
		const struct rev *e;
		size_t at, m, wire;

		sc_init(&sc);
		sc_simple(&sc, crc, true, false);
		fill(data, sizeof(data), 6);
		at = sc.s[0].n;
		sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 1000, 1400);
		wire = sc.st[sc.nst - 1].len;
		sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 10, 1400);
		/* the Marker inside the first FPDU, at stream 24 + 512 */
		m = 24 + 512;
		ck_assert_uint_eq(iw_get_be16(sc.s[0].p + m + 2), m - at - 4);
		iw_put_be16(sc.s[0].p + m + 2, 0x100);
		if (crc) {
			/* keep the CRC right: covered from the leading Marker */
			const uint8_t *f = sc.s[0].p + at;
			size_t cov = wire - MPA_CRC_LEN;
			uint32_t v = mpa_crc32c(f, cov);

			iw_put_le32(sc.s[0].p + at + cov, v);
		}
		run(&sc, &r, NULL);
		ck_assert_uint_eq(rec_count(&r, IWD_EV_UNDECODED), 0);
		e = rec_nth(&r, IWD_EV_FPDU, 0);
		ck_assert_int_eq(e->fp.crc, crc ? IWD_CRC_OK : IWD_CRC_OFF);
		ck_assert(!e->fp.markers[1].ok);
		ck_assert_uint_eq(e->fp.markers[1].fpduptr, 0x100);
		ck_assert(e->fp.markers[0].ok);
		ck_assert_str_eq(e->ev.note,
				 "Marker FPDUPTR disagrees with the framing (RFC 5044 §4.3)");
		ck_assert_mem_eq(rec_nth(&r, IWD_EV_MSG, 1)->blob, data, 10);
		rec_free(&r);
		sc_fini(&sc);
	}
}
END_TEST

START_TEST(rejected_connection_leaves_later_octets_undecoded)
{
	struct script sc;
	struct mpa_frame req, rep;
	struct iwd_conn_info info;
	static const char words[] = "no full operation after a reject";
	struct rec r = {0};
	const struct rev *e;

	sc_init(&sc);
	frame_init(&req, false, MPA_REV2, false, true);
	frame_init(&rep, true, MPA_REV2, false, true);
	rep.reject = true;
	sc_handshake(&sc, 0, &req, &rep);
	sc_send(&sc, 0, words, sizeof(words));
	sc_send(&sc, 1, words, 5);
	run(&sc, &r, &info);
	ck_assert(info.rejected);
	ck_assert(rec_nth(&r, IWD_EV_MPA_FRAME, 1)->ev.u.mpa.f.reject);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_FPDU), 0);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_UNDECODED), 2);
	for (size_t i = 0; i < 2; i++) {
		e = rec_nth(&r, IWD_EV_UNDECODED, i);
		ck_assert_uint_eq(e->ev.u.gap.off, MPA_FRAME_HDR_LEN + 4);
		ck_assert_uint_eq(e->ev.u.gap.len, e->ev.dir ? 5 : sizeof(words));
		ck_assert_ptr_nonnull(strstr(e->ev.note, "R = 1"));
	}
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(bad_mpa_frame_is_reported_and_the_rest_is_undecoded)
{
	struct script sc;
	struct mpa_frame req;
	uint8_t bad[24];
	struct rec r = {0};
	const struct rev *e;

	sc_init(&sc);
	frame_init(&req, false, MPA_REV2, false, true);
	sc_frame(&sc, 0, &req);
	/* a "Reply" with revision 3 */
	memcpy(bad, "MPA ID Rep Frame", 16);
	bad[16] = 0x40;
	bad[17] = 3;
	bad[18] = 0;
	bad[19] = 0;
	sc_send(&sc, 1, bad, 24);
	run(&sc, &r, NULL);
	e = rec_nth(&r, IWD_EV_MPA_FRAME, 1);
	ck_assert_int_eq(e->ev.u.mpa.err, IW_EMPA_REV);
	ck_assert_uint_eq(e->ev.u.mpa.f.rev, 3);
	ck_assert(e->ev.u.mpa.f.reply && e->ev.u.mpa.f.crc);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_UNDECODED), 1);
	e = rec_nth(&r, IWD_EV_UNDECODED, 0);
	ck_assert_int_eq(e->ev.dir, 1);
	ck_assert_uint_eq(e->ev.u.gap.off, 20);
	ck_assert_uint_eq(e->ev.u.gap.len, 4);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(a_frame_error_is_reported_the_same_whatever_the_chunks)
{
	struct script sc;
	struct mpa_frame req;
	struct iwd_iwarp_cfg cfg = {.keep_fpdus = true};
	uint8_t bad[40];
	struct rec a = {0}, b = {0};

	sc_init(&sc);
	frame_init(&req, false, MPA_REV2, false, true);
	sc_frame(&sc, 0, &req);
	/* the decoder refuses the key at its second octet */
	memset(bad, 0, sizeof(bad));
	memcpy(bad, "MXA ID Rep Frame", 16);
	sc_send(&sc, 1, bad, sizeof(bad));
	run_cfg(&sc, &cfg, FEED_STEPS, 1, &a, NULL);
	run_cfg(&sc, &cfg, FEED_OCTETS, 1, &b, NULL);
	rec_expect_same(&a, &b, "frame error");
	ck_assert_int_eq(rec_nth(&a, IWD_EV_MPA_FRAME, 1)->ev.u.mpa.err, IW_EMPA_KEY);
	ck_assert_uint_eq(rec_nth(&a, IWD_EV_MPA_FRAME, 1)->ev.u.mpa.len, MPA_FRAME_HDR_LEN);
	ck_assert_uint_eq(rec_nth(&a, IWD_EV_UNDECODED, 0)->ev.u.gap.off, MPA_FRAME_HDR_LEN);
	rec_free(&a);
	rec_free(&b);
	sc_fini(&sc);
}
END_TEST

START_TEST(a_connection_that_is_not_iwarp_emits_nothing)
{
	static const uint8_t rpc[] = {0x80, 0, 0, 0x28, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0,
				      0,    0, 0, 2,	0,    1,    0x86, 0xa0, 0, 0, 0, 3};
	static const char almost[] = "MPA ID Rex Frame and more";
	struct script sc;
	struct iwd_conn_info info;
	struct rec r = {0};

	sc_init(&sc);
	sc_send(&sc, 0, rpc, sizeof(rpc));
	sc_send(&sc, 1, "MPA ID Rep Frame", 16); /* too late: the first direction decided */
	for (int i = 0; i < 50; i++)
		sc_send(&sc, 0, rpc, sizeof(rpc));
	run(&sc, &r, &info);
	ck_assert_uint_eq(r.n, 0);
	ck_assert(!info.iwarp);
	sc_fini(&sc);

	sc_init(&sc);
	sc_send(&sc, 1, almost, sizeof(almost));
	run(&sc, &r, &info);
	ck_assert_uint_eq(r.n, 0);
	ck_assert(!info.iwarp);
	sc_fini(&sc);
}
END_TEST

START_TEST(the_port_filter_ignores_connections_on_other_ports)
{
	struct script sc;
	struct iwd_iwarp_cfg cfg = {.port = 4791};
	struct rec r = {0};
	uint8_t data[10] = {0};

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, sizeof(data), 100);
	run_cfg(&sc, &cfg, FEED_STEPS, 1, &r, NULL);
	ck_assert_uint_eq(r.n, 0);
	cfg.port = 20049;
	run_cfg(&sc, &cfg, FEED_STEPS, 1, &r, NULL);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 1);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(a_truncated_last_fpdu_is_undecoded_at_close)
{
	struct script sc;
	uint8_t data[500];
	struct rec r = {0};
	const struct rev *e;

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	fill(data, sizeof(data), 2);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 100, 1000);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 500, 1000);
	sc.st[sc.nst - 1].len -= 77;
	sc.s[0].n -= 77;
	run(&sc, &r, NULL);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 1);
	ck_assert_uint_eq(rec_count(&r, IWD_EV_UNDECODED), 1);
	e = rec_nth(&r, IWD_EV_UNDECODED, 0);
	ck_assert_str_eq(e->ev.note, "truncated FPDU");
	ck_assert_uint_eq(e->ev.u.gap.off, 24 + 124);
	ck_assert_uint_eq(e->ev.u.gap.len, 2 + 518 + 4 - 77);
	ck_assert_uint_eq(r.e[r.n - 1].ev.kind, IWD_EV_CLOSE);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Mid-stream and gaps                                                      */
/* ---------------------------------------------------------------------- */

/* Decode sc from direction 0's octet `skip` on (offsets renumbered from it),
 * mid-stream; direction 1 from its octet 24. */
static void run_mid(const struct script *sc, bool crc, bool m0, bool m1, size_t skip,
		    enum feed_mode mode, struct rec *r, struct iwd_conn_info *info)
{
	struct iwd_iwarp_cfg cfg = {.keep_fpdus = true,
				    .mid = {.enabled = true, .crc = crc, .markers = {m0, m1}}};
	struct iwd_sink sink = {.event = rec_event, .user = r};
	struct iwd_iwarp *c = iwd_iwarp_create(&cfg, &test_flow, &sink);
	size_t sk[2] = {skip, 24};

	feed_steps(c, sc, mode, 7, sk);
	iwd_iwarp_close(c, 0, IWD_CLOSE_RST, 1);
	iwd_iwarp_close(c, 1, IWD_CLOSE_END, 2);
	*info = *iwd_iwarp_info(c);
	iwd_iwarp_destroy(c);
}

/* The k-th event of `kind` in direction `dir`. */
static const struct rev *rec_nth_dir(const struct rec *r, enum iwd_ev_kind kind, int dir, size_t k)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i].ev.kind == kind && r->e[i].ev.dir == dir && k-- == 0)
			return &r->e[i];
	ck_abort_msg("no event %d in direction %d", kind, dir);
	return NULL;
}

/* Direction-0 messages of r after event index `after`, in order. */
static size_t dir0_msgs(const struct rec *r, size_t after, const struct rev **out, size_t max)
{
	size_t k = 0;

	for (size_t i = after; i < r->n && k < max; i++)
		if (r->e[i].ev.kind == IWD_EV_MSG && r->e[i].ev.dir == 0)
			out[k++] = &r->e[i];
	return k;
}

/*
 * What `part` decoded of direction 0 (a mid-stream start, a gap) equals what
 * `full` decoded of the same octets: every FPDU from stream offset `from`
 * (in `full`; `part` offsets are smaller by `shift`), and every message after
 * the first of them, whose start may be missing.  (Frames may differ: a
 * search emits what it found when the next FPDU has confirmed it.)
 */
static void expect_tail(const struct rec *full, const struct rec *part, uint64_t from,
			uint64_t shift)
{
	const struct rev *fm[256], *pm[256];
	size_t i = 0, j = 0, j0 = 0, nf = 0, nfm, npm;

	while (i < full->n && !(full->e[i].ev.kind == IWD_EV_FPDU && full->e[i].ev.dir == 0 &&
				full->e[i].fp.off >= from))
		i++;
	if (i == full->n)
		return; /* the part decoded only the last FPDU */
	while (j < part->n && !(part->e[j].ev.kind == IWD_EV_FPDU && part->e[j].ev.dir == 0 &&
				part->e[j].fp.off + shift >= from))
		j++;
	for (; i < full->n && j < part->n; i++, j++) {
		const struct rev *a, *b;

		while (i < full->n && (full->e[i].ev.dir != 0 || full->e[i].ev.kind != IWD_EV_FPDU))
			i++;
		while (j < part->n && (part->e[j].ev.dir != 0 || part->e[j].ev.kind != IWD_EV_FPDU))
			j++;
		if (i == full->n || j == part->n)
			break;
		a = &full->e[i];
		b = &part->e[j];
		ck_assert_msg(a->fp.off == b->fp.off + shift, "%s\n%s", a->line, b->line);
		ck_assert_uint_eq(a->fp.wire_len, b->fp.wire_len);
		ck_assert_uint_eq(a->fp.nmarkers, b->fp.nmarkers);
		ck_assert_int_eq(a->fp.crc, b->fp.crc);
		ck_assert_mem_eq(a->blob, b->blob, a->blob_len);
		if (nf++ == 0)
			j0 = j;
	}
	while (i < full->n && (full->e[i].ev.dir != 0 || full->e[i].ev.kind != IWD_EV_FPDU))
		i++;
	ck_assert_msg(i == full->n, "not decoded: %s", full->e[i < full->n ? i : 0].line);
	ck_assert_uint_gt(nf, 0);
	/* the messages after the first: the last ones of the full decode */
	npm = dir0_msgs(part, j0, pm, 256);
	nfm = dir0_msgs(full, 0, fm, 256);
	ck_assert_uint_lt(npm, 256);
	ck_assert_uint_lt(nfm, 256);
	for (size_t k = 1; k < npm; k++) {
		const struct rev *a = fm[nfm - npm + k], *b = pm[k];

		ck_assert_msg(nfm >= npm, "more messages than without the gap");
		ck_assert_msg(a->msg.opcode == b->msg.opcode && a->msg.len == b->msg.len &&
				      a->msg.segments == b->msg.segments &&
				      a->blob_len == b->blob_len,
			      "%s\n%s", a->line, b->line);
		ck_assert_mem_eq(a->blob, b->blob, a->blob_len);
	}
}

START_TEST(mid_stream_start_at_any_offset_finds_the_first_fpdu_and_marker_phase)
{
	static const struct {
		bool crc, markers;
	} modes[] = {{true, false}, {true, true}, {false, false}, {false, true}};

	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
		struct script sc;
		struct iwd_iwarp_cfg cfg = {.keep_fpdus = true};
		struct rec full = {0};
		struct th_rng rng;

		sc_init(&sc);
		sc_conversation(&sc, modes[k].crc, modes[k].markers, modes[k].markers);
		run_cfg(&sc, &cfg, FEED_STEPS, 1, &full, NULL);
		th_rng_init(&rng, th_seed_for(k));
		for (int rep = 0; rep < 6; rep++) {
			size_t skip = (size_t)th_rng_range(&rng, 25, 20000);
			struct iwd_conn_info info;
			struct rec r = {0};
			const struct rev *u, *f;

			if (rep == 0)
				skip = 24 + 4; /* just past the leading Marker/length */
			run_mid(&sc, modes[k].crc, modes[k].markers, modes[k].markers, skip,
				rep & 1 ? FEED_RANDOM : FEED_STEPS, &r, &info);
			ck_assert_msg(info.iwarp && info.midstream && !info.mpa_seen,
				      "mode %zu skip %zu", k, skip);
			ck_assert_uint_eq(rec_count(&r, IWD_EV_MPA_FRAME), 0);
			f = rec_nth_dir(&r, IWD_EV_FPDU, 0, 0);
			if (rec_count(&r, IWD_EV_UNDECODED) == 0) {
				/* CRC off, started at a length field: nothing to skip */
				ck_assert(!modes[k].crc);
				ck_assert_uint_eq(f->fp.off, 0);
			} else {
				u = rec_nth(&r, IWD_EV_UNDECODED, 0);
				ck_assert_int_eq(u->ev.dir, 0);
				ck_assert_uint_eq(u->ev.u.gap.off, 0);
				ck_assert_uint_eq(u->ev.u.gap.len, f->fp.off);
				ck_assert_msg(u < f, "UNDECODED comes first");
			}
			if (modes[k].markers)
				ck_assert_uint_eq(info.fpdu_start[0],
						  (512 + 24 - skip % 512) % 512);
			/* from the second FPDU on (the first may lack its leading
			 * Marker when CRC is off) */
			expect_tail(&full, &r, f->fp.off + skip + 1, skip);
			/* direction 1 started at a boundary: nothing skipped there */
			for (size_t i = 0; i < r.n; i++)
				ck_assert(!(r.e[i].ev.kind == IWD_EV_UNDECODED &&
					    r.e[i].ev.dir == 1));
			rec_free(&r);
		}
		rec_free(&full);
		sc_fini(&sc);
	}
}
END_TEST

START_TEST(a_gap_is_reported_and_decoding_resynchronises)
{
	for (int m = 0; m < 4; m++) {
		bool crc = m < 2, markers = m & 1;
		struct script sc;
		struct iwd_iwarp_cfg cfg = {.keep_fpdus = true};
		struct rec full = {0}, r = {0};
		struct iwd_sink sink = {.event = rec_event, .user = &r};
		struct iwd_iwarp *c;
		size_t a, b;
		const struct rev *g, *u1, *u2, *f;

		sc_init(&sc);
		sc_conversation(&sc, crc, markers, markers);
		run_cfg(&sc, &cfg, FEED_STEPS, 1, &full, NULL);
		/* from inside the third FPDU of direction 0 to inside another */
		a = rec_nth_dir(&full, IWD_EV_FPDU, 0, 2)->fp.off + 100;
		b = a + 2100;
		for (size_t i = 0; i < full.n; i++)
			if (full.e[i].ev.kind == IWD_EV_FPDU && full.e[i].ev.dir == 0 &&
			    full.e[i].fp.off == b)
				b += 8;

		/* direction 0 loses [a, b) */
		c = iwd_iwarp_create(&cfg, &test_flow, &sink);
		for (unsigned i = 0; i < sc.nst; i++) {
			const struct step *s = &sc.st[i];
			size_t off = s->off, end = s->off + s->len;

			if (s->dir == 0 && off < b && end > a) {
				if (off < a)
					feed_chunk(c, 0, off, sc.s[0].p + off, a - off, s->ts,
						   i + 1);
				if (off <= a)
					iwd_iwarp_gap(c, 0, a, b - a, s->ts, i + 1);
				if (end > b)
					feed_chunk(c, 0, b, sc.s[0].p + b, end - b, s->ts, i + 1);
				continue;
			}
			feed_chunk(c, s->dir, off, sc.s[s->dir].p + off, s->len, s->ts, i + 1);
		}
		iwd_iwarp_close(c, 0, IWD_CLOSE_FIN, 1);
		iwd_iwarp_close(c, 1, IWD_CLOSE_FIN, 1);
		iwd_iwarp_destroy(c);

		g = rec_nth(&r, IWD_EV_GAP, 0);
		ck_assert_uint_eq(g->ev.u.gap.off, a);
		ck_assert_uint_eq(g->ev.u.gap.len, b - a);
		u1 = rec_nth(&r, IWD_EV_UNDECODED, 0);
		u2 = rec_nth(&r, IWD_EV_UNDECODED, 1);
		ck_assert(u1 < g && g < u2);
		ck_assert_uint_eq(u1->ev.u.gap.off + u1->ev.u.gap.len, a);
		ck_assert_uint_eq(u2->ev.u.gap.off, b);
		ck_assert_str_eq(u1->ev.note, "FPDU cut by a gap in the capture");
		ck_assert_uint_eq(rec_count(&r, IWD_EV_UNDECODED), 2);
		/* the message cut by the gap ends with a note */
		for (size_t i = 0; i < r.n; i++)
			if (r.e[i].ev.kind == IWD_EV_MSG && r.e[i].ev.note)
				ck_assert_str_eq(r.e[i].ev.note,
						 "message cut by a gap in the capture");
		/* after the gap everything is as without it */
		f = g;
		while (f->ev.kind != IWD_EV_FPDU || f->ev.dir != 0)
			f++;
		ck_assert_uint_eq(f->fp.off, u2->ev.u.gap.off + u2->ev.u.gap.len);
		expect_tail(&full, &r, f->fp.off, 0);
		rec_free(&r);
		rec_free(&full);
		sc_fini(&sc);
	}
}
END_TEST

START_TEST(garbage_after_a_framing_error_is_skipped_to_the_next_fpdu)
{
	struct script sc;
	uint8_t data[300], junk[36]; /* FPDUs stay 4-aligned (RFC 5044 §4.1) */
	struct rec r = {0};
	const struct rev *u;
	size_t at;

	sc_init(&sc);
	sc_simple(&sc, true, false, false);
	fill(data, sizeof(data), 1);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 100, 1000);
	at = sc.s[0].n;
	memset(junk, 0, sizeof(junk)); /* ULPDU_Length 0: impossible */
	sc_send(&sc, 0, junk, sizeof(junk));
	sc.tx[0].pos += sizeof(junk); /* keep mpa_tx's idea of the stream */
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 200, 1000);
	sc_send_msg(&sc, 0, RDMAP_OP_SEND, data, 300, 1000);
	run(&sc, &r, NULL);
	u = rec_nth(&r, IWD_EV_UNDECODED, 0);
	ck_assert_uint_eq(u->ev.u.gap.off, at);
	ck_assert_uint_eq(u->ev.u.gap.len, sizeof(junk));
	ck_assert_uint_eq(rec_count(&r, IWD_EV_MSG), 3);
	ck_assert_mem_eq(rec_nth(&r, IWD_EV_MSG, 2)->blob, data, 300);
	rec_free(&r);
	sc_fini(&sc);
}
END_TEST

START_TEST(random_octets_never_hurt_the_decoder)
{
	struct th_rng rng;
	uint8_t buf[4096];

	th_rng_init(&rng, th_seed_for(99));
	for (int k = 0; k < 200; k++) {
		struct iwd_iwarp_cfg cfg = {
			.keep_fpdus = true,
			.mid = {.enabled = k & 1, .crc = k & 2, .markers = {k & 4, k & 8}}};
		struct rec r = {0};
		struct iwd_sink sink = {.event = rec_event, .user = &r};
		struct iwd_iwarp *c = iwd_iwarp_create(&cfg, &test_flow, &sink);
		uint64_t off[2] = {0, 0};

		for (int i = 0; i < 20; i++) {
			int d = (int)th_rng_range(&rng, 0, 1);
			size_t n = (size_t)th_rng_range(&rng, 0, sizeof(buf));

			th_rng_fill(&rng, buf, n);
			if (k % 3 == 0 && i == 0 && n >= 20)
				memcpy(buf, d ? "MPA ID Rep Frame" : "MPA ID Req Frame", 16);
			if (th_rng_range(&rng, 0, 9) == 0) {
				iwd_iwarp_gap(c, d, off[d], n + 1, 0, 0);
				off[d] += n + 1;
			} else {
				feed_chunk(c, d, off[d], buf, n, 0, 0);
				off[d] += n;
			}
		}
		iwd_iwarp_close(c, 0, IWD_CLOSE_FIN, 0);
		iwd_iwarp_close(c, 1, IWD_CLOSE_FIN, 0);
		iwd_iwarp_destroy(c);
		rec_free(&r);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Real captures (test/captures)                                            */
/* ---------------------------------------------------------------------- */

struct cap_stream {
	uint16_t port[2]; /* end 0 = the side that sent the SYN */
	struct bs s[2];
	struct step st[STEPS_MAX];
	unsigned nst;
};

/* The TCP payloads of the connection with `port` in a classic pcap of
 * Ethernet/IPv4 frames (in order, as these captures are). */
static bool cap_load(const char *name, uint16_t port, struct cap_stream *cs)
{
	char path[512];
	FILE *f;
	uint8_t hdr[24], rh[16], *pkt = malloc(262144 + 64);
	bool found = false;
	uint32_t isn[2] = {0, 0};
	bool have_isn[2] = {false, false};

	memset(cs, 0, sizeof(*cs));
	snprintf(path, sizeof(path), "%s/%s", IWD_TEST_CAPTURES, name);
	f = fopen(path, "rb");
	if (!f || !pkt || fread(hdr, 1, 24, f) != 24) {
		if (f)
			fclose(f);
		free(pkt);
		return false;
	}
	while (fread(rh, 1, 16, f) == 16) {
		uint32_t cl = rh[8] | rh[9] << 8 | rh[10] << 16 | (uint32_t)rh[11] << 24;
		uint32_t tss = rh[0] | rh[1] << 8 | rh[2] << 16 | (uint32_t)rh[3] << 24;
		uint32_t tus = rh[4] | rh[5] << 8 | rh[6] << 16 | (uint32_t)rh[7] << 24;
		const uint8_t *ip, *tcp;
		size_t ihl, tot, doff, plen;
		uint16_t sp, dp;
		int d;

		if (cl > 262144 || fread(pkt, 1, cl, f) != cl)
			break;
		if (cl < 14 + 20 || iw_get_be16(pkt + 12) != 0x0800)
			continue;
		ip = pkt + 14;
		ihl = (size_t)(ip[0] & 15) * 4;
		tot = iw_get_be16(ip + 2);
		if (ip[9] != 6 || 14 + tot > cl || tot < ihl + 20)
			continue;
		tcp = ip + ihl;
		sp = iw_get_be16(tcp);
		dp = iw_get_be16(tcp + 2);
		if (sp != port && dp != port)
			continue;
		if (!found) {
			cs->port[0] = sp;
			cs->port[1] = dp;
			found = true;
		}
		if ((sp != cs->port[0] || dp != cs->port[1]) &&
		    (sp != cs->port[1] || dp != cs->port[0]))
			continue;
		d = sp == cs->port[0] ? 0 : 1;
		doff = (size_t)(tcp[12] >> 4) * 4;
		if (tcp[13] & 0x02) {
			isn[d] = iw_get_be32(tcp + 4) + 1;
			have_isn[d] = true;
		}
		plen = tot - ihl - doff;
		if (plen == 0 || cs->nst == STEPS_MAX)
			continue;
		ck_assert(have_isn[d]);
		ck_assert_uint_eq(iw_get_be32(tcp + 4) - isn[d], cs->s[d].n);
		cs->st[cs->nst].dir = d;
		cs->st[cs->nst].off = cs->s[d].n;
		cs->st[cs->nst].len = plen;
		cs->st[cs->nst].ts = (uint64_t)tss * 1000000000ull + (uint64_t)tus * 1000ull;
		cs->nst++;
		bs_put(&cs->s[d], tcp + doff, plen);
	}
	fclose(f);
	free(pkt);
	return found && cs->nst < STEPS_MAX;
}

static void cap_run(const struct cap_stream *cs, const struct iwd_iwarp_cfg *cfg,
		    const size_t skip[2], struct rec *r, struct iwd_conn_info *info)
{
	struct iwd_flow flow = test_flow;
	struct iwd_sink sink = {.event = rec_event, .user = r};
	struct iwd_iwarp *c;

	flow.port[0] = cs->port[0];
	flow.port[1] = cs->port[1];
	c = iwd_iwarp_create(cfg, &flow, &sink);
	for (unsigned i = 0; i < cs->nst; i++) {
		const struct step *s = &cs->st[i];
		size_t sk = skip[s->dir];
		size_t off = s->off < sk ? sk : s->off;

		if (s->off + s->len <= sk)
			continue;
		feed_chunk(c, s->dir, off - sk, cs->s[s->dir].p + off, s->off + s->len - off, s->ts,
			   i + 1);
	}
	iwd_iwarp_close(c, 0, IWD_CLOSE_FIN, 0);
	iwd_iwarp_close(c, 1, IWD_CLOSE_FIN, 0);
	*info = *iwd_iwarp_info(c);
	iwd_iwarp_destroy(c);
}

START_TEST(linux_nfs_rdma_captures_decode_without_a_problem)
{
	static const char *const caps[] = {"nfsrdma-v3.pcap", "nfsrdma-v4.0.pcap"};

	for (size_t k = 0; k < 2; k++) {
		struct cap_stream *cs = malloc(sizeof(*cs));
		struct iwd_iwarp_cfg cfg = {.keep_fpdus = true, .port = 20049};
		struct iwd_iwarp_cfg mid = {.keep_fpdus = true,
					    .mid = {.enabled = true, .crc = false}};
		struct iwd_conn_info info;
		struct rec r = {0}, m = {0};
		const struct rev *e;
		size_t sends = 0, writes = 0;
		static const size_t none[2] = {0, 0};
		/* the client's stream from an odd offset, the server's after its
		 * frame (else the Reply would start a handshake) */
		static const size_t skip[2] = {32 + 1001, 32};

		ck_assert_ptr_nonnull(cs);
		if (!cap_load(caps[k], 20049, cs)) {
			fprintf(stderr, "%s not readable: skipped\n", caps[k]);
			free(cs);
			continue;
		}
		cap_run(cs, &cfg, none, &r, &info);
		expect_clean(&r);
		ck_assert(info.iwarp && info.mpa_seen && !info.crc);
		ck_assert_uint_eq(info.rev, 2);
		ck_assert_int_eq(cs->port[1], 20049);
		for (int i = 0; i < 2; i++) {
			e = rec_nth(&r, IWD_EV_MPA_FRAME, (size_t)i);
			ck_assert(e->ev.u.mpa.rpcrdma_pd);
			ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_send_size, 4096);
			ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_recv_size, 4096);
			ck_assert_uint_eq(e->ev.u.mpa.rpcrdma_flags, i == 0 ? 1 : 0);
		}
		for (size_t i = 0; i < rec_count(&r, IWD_EV_MSG); i++) {
			e = rec_nth(&r, IWD_EV_MSG, i);
			sends += e->msg.opcode == RDMAP_OP_SEND;
			writes += e->msg.opcode == RDMAP_OP_WRITE;
			if (e->msg.opcode == RDMAP_OP_READ_RESP)
				ck_assert_int_ge(e->msg.read_rtt_ns, 0);
		}
		ck_assert_uint_gt(sends, 20);
		ck_assert_uint_gt(writes, 0);

		/* the same, mid-stream */
		cap_run(cs, &mid, skip, &m, &info);
		ck_assert(info.iwarp && info.midstream);
		ck_assert_uint_eq(rec_count(&m, IWD_EV_UNDECODED), 1);
		ck_assert_uint_eq(rec_nth(&m, IWD_EV_UNDECODED, 0)->ev.u.gap.len,
				  rec_nth_dir(&m, IWD_EV_FPDU, 0, 0)->fp.off);
		expect_tail(&r, &m, rec_nth_dir(&m, IWD_EV_FPDU, 0, 0)->fp.off + skip[0], skip[0]);
		rec_free(&m);
		rec_free(&r);
		for (int d = 0; d < 2; d++)
			free(cs->s[d].p);
		free(cs);
	}
}
END_TEST

START_TEST(linux_siw_capture_with_crc_checks_the_crc)
{
	struct cap_stream *cs = malloc(sizeof(*cs));
	struct iwd_iwarp_cfg cfg = {.keep_fpdus = true};
	struct iwd_conn_info info;
	struct rec r = {0};
	const struct rev *e;

	ck_assert_ptr_nonnull(cs);
	if (cap_load("siw-initiator-crc.pcap", 59685, cs)) {
		static const size_t none[2] = {0, 0};

		cap_run(cs, &cfg, none, &r, &info);
		expect_clean(&r);
		ck_assert(info.crc);
		e = rec_nth(&r, IWD_EV_FPDU, 0);
		ck_assert_int_eq(e->fp.crc, IWD_CRC_OK);
		ck_assert_uint_eq(e->fp.crc_rx, 0xbd97299bu);
		rec_free(&r);
		for (int d = 0; d < 2; d++)
			free(cs->s[d].p);
	}
	free(cs);
}
END_TEST

static Suite *iwd_iwarp_suite(void)
{
	Suite *s = suite_create("iwd_iwarp");

	TH_ADD_TCASE(s, "handshake", rev1_handshake_sets_crc_both_ways_and_markers_per_direction,
		     the_initiator_is_whoever_sends_the_request,
		     rev2_handshake_reports_ird_ord_and_each_peer_to_peer_rtr,
		     write_rtr_with_stag_0_is_flagged_as_a_quirk,
		     reserved_flag_bits_of_a_frame_are_reported,
		     rfc8797_private_data_is_recognised_after_the_ird_ord_word,
		     rejected_connection_leaves_later_octets_undecoded,
		     bad_mpa_frame_is_reported_and_the_rest_is_undecoded,
		     a_frame_error_is_reported_the_same_whatever_the_chunks,
		     a_connection_that_is_not_iwarp_emits_nothing,
		     the_port_filter_ignores_connections_on_other_ports);
	TH_ADD_TCASE(s, "framing", crc_off_fpdus_report_the_crc_as_off,
		     markers_either_way_and_both_ways_are_placed_checked_and_removed,
		     coalesced_fpdus_and_one_octet_chunks_give_identical_events,
		     bad_crc_is_reported_and_decoding_goes_on,
		     marker_disagreement_is_reported_and_decoding_goes_on,
		     a_truncated_last_fpdu_is_undecoded_at_close,
		     garbage_after_a_framing_error_is_skipped_to_the_next_fpdu);
	TH_ADD_TCASE(s, "messages", segments_of_a_write_and_of_a_send_become_one_message_each,
		     a_segment_that_does_not_continue_the_message_ends_it_with_a_note,
		     untagged_payload_beyond_max_msg_is_truncated,
		     read_responses_get_the_latency_of_their_requests_in_order,
		     every_opcode_is_named_and_decoded_including_rfc7306);
	TH_ADD_TCASE(s, "terminate", terminate_in_the_rfc_layout_is_read_the_rfc_way,
		     terminate_in_siw_layout_is_flagged_and_read_the_siw_way,
		     term_read_prefers_the_rfc_reading_when_both_make_sense,
		     terminate_names_cover_every_defined_code);
	TH_ADD_TCASE(s, "resync",
		     mid_stream_start_at_any_offset_finds_the_first_fpdu_and_marker_phase,
		     a_gap_is_reported_and_decoding_resynchronises,
		     random_octets_never_hurt_the_decoder);
	TH_ADD_TCASE(s, "captures", linux_nfs_rdma_captures_decode_without_a_problem,
		     linux_siw_capture_with_crc_checks_the_crc);
	return s;
}

TH_MAIN(iwd_iwarp_suite)
