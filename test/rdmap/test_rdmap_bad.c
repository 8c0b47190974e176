/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_bad.c - the bad-input catalogue of the RDMAP queue-pair engine.
 *
 * One table row per malformed or illegal input (RFC 5041 §7, RFC 5040 §4.8,
 * §5, §7; RFC 5044 §8; RFC 6581 §8).  Each row gets a fresh victim QP with
 * really negotiated MPA parameters (b2b_create runs both startup roles) and
 * outstanding work: two posted receives, an RDMA Read whose Read Request is
 * already on the wire, a Send not yet started.  The offending DDP segment is
 * built by hand (ddp_hdr_encode, rdmap codecs, raw octets), framed with
 * mpa_tx_frame as the peer would frame it (the victim's rx CRC and Markers,
 * our own stream position) and fed to rdmap_qp_read_stream.  The peer QP of
 * the pair is never pumped, so the victim's receive stream is ours alone.
 *
 * Then: the victim's output is decoded again with its own mpa_rx and the last
 * DDP segment must be exactly the Terminate the row expects (untagged QN 2,
 * MSN 1, opcode 7; layer/type/code; M/D/R; the errant DDP header, its segment
 * length and the Read Request header copied as RFC 5040 figure 10 asks), the
 * QP must agree (rdmap_qp_term_sent, rdmap_qp_error) and be in ERROR, every
 * posted WR completes exactly once and the STag table holds only the test's
 * own registrations.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>
#include <iwarp/rdmap_qp.h>

#include "b2b.h"
#include "iw_bytes.h"
#include "th.h"

#define OUT_MAX	   64  /* victim ULPDUs remembered per test */
#define OUT_KEEP   128 /* octets of each victim ULPDU kept */
#define STREAM_MAX 16384
#define BUF_LEN	   256
#define RECV_LEN   64
#define READ_LEN   32
#define SEND_LEN   16
#define PEER_STAG  0x12345677u /* the peer's STag our outstanding Read names */
#define PEER_TO	   0x1000u
#define OTHER_PD   77
#define WR_RECV0   100
#define WR_RECV1   101
#define WR_READ	   200
#define WR_SEND	   300
#define IRD_SMALL  2

enum variant {
	V_CRC,	      /* victim = initiator, CRC, no Markers */
	V_NOCRC,      /* CRC off */
	V_MARKERS,    /* CRC and Markers both ways */
	V_MARKERS_RX, /* CRC off, Markers only in what the victim receives */
	V_P2P_INI,    /* p2p Send RTR, victim = initiator (its RTR goes out first) */
	V_P2P_RSP,    /* p2p Send RTR, victim = responder: expects the RTR first */
	V_P2P_RSP_RD, /* p2p Read RTR, victim = responder */
	V_7306,	      /* CRC, RFC 7306 enabled on both sides */
};

enum row_flags {
	F_NO_RECV = 1u << 0, /* post no receive */
	F_NO_READ = 1u << 1, /* post no RDMA Read */
	/* feed all but the last octet first: with CRC on, nothing may be judged
	 * before the FPDU's CRC is known (RFC 5044 Appendix A) */
	F_LAST_OCTET = 1u << 2,
};

enum mode {
	M_TERM,	     /* the victim must send exactly this Terminate */
	M_NO_ERROR,  /* legal input: no Terminate, the QP stays in RTS */
	M_PEER_TERM, /* the input is the peer's Terminate: none back, WRs fail remotely */
};

enum corrupt {
	C_NONE,
	C_CRC,	  /* flip a CRC octet */
	C_MARKER, /* wrong FPDUPTR in the first Marker */
};

struct ctx;

struct bad_row {
	const char *name;
	enum variant v;
	unsigned flags;
	void (*build)(struct ctx *c);
	enum mode mode;
	int err; /* rdmap_qp_error() expected (M_TERM) */
	struct iw_term_code code;
	bool rreq; /* R bit expected */
	void (*check)(struct ctx *c);
};

struct out_pdu {
	uint8_t b[OUT_KEEP];
	size_t len;
};

struct ctx {
	const struct bad_row *row;
	struct b2b *b;
	int vs; /* victim side */
	struct rdmap_qp *qp;
	struct ddp_stag_table *t;
	struct mpa_params vp;
	uint32_t pd;
	uint32_t stag_count0;
	/* victim memory */
	uint8_t wbuf[BUF_LEN], rbuf[BUF_LEN], nbuf[BUF_LEN], pbuf[BUF_LEN], ibuf[BUF_LEN];
	uint8_t nibuf[BUF_LEN], recv[2][RECV_LEN], sink[READ_LEN], src[SEND_LEN];
	uint32_t w_stag, r_stag, n_stag, p_stag, i_stag, ni_stag, l_stag, a_stag;
	uint64_t abuf[BUF_LEN / 8]; /* remote-atomic target */
	uint32_t regs[16];
	int nregs;
	/* outstanding work */
	bool read_out;
	struct rdmap_read_req rr; /* the victim's Read Request as seen on the wire */
	uint64_t wr_ids[8];
	int nwr;
	/* injection */
	struct mpa_tx itx;
	struct mpa_fpdu f;
	uint8_t stream[STREAM_MAX];
	size_t slen;
	bool have_errant, errhdr_ok;
	uint8_t errhdr[DDP_UNTAGGED_HDR_LEN];
	size_t errhdr_len;
	uint16_t errseg_len;
	uint8_t errrreq[RDMAP_READ_REQ_LEN];
	struct rdmap_term peer_term; /* M_PEER_TERM: what we sent */
	/* victim output, decoded again */
	struct mpa_rx orx;
	struct out_pdu out[OUT_MAX];
	int nout;
	uint8_t cur[OUT_KEEP];
	size_t cur_len;
};

#define R_ASSERT(cond, ...) ck_assert_msg(cond, __VA_ARGS__)
#define R_EQ(c, a, b)                                                                              \
	ck_assert_msg((long long)(a) == (long long)(b), "%s: %s = %lld, expected %lld",            \
		      (c)->row->name, #a, (long long)(a), (long long)(b))

/* ---------------------------------------------------------------------- */
/* Decoding the victim's output                                            */
/* ---------------------------------------------------------------------- */

static int out_header(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct ctx *c = user;
	size_t want = IW_MIN(ulpdu_len, (size_t)OUT_KEEP);

	if (have < want)
		return (int)want;
	memcpy(c->cur, hdr, have);
	c->cur_len = ulpdu_len;
	return (int)have;
}

static int out_payload(void *user, size_t off, const uint8_t *p, size_t n)
{
	struct ctx *c = user;

	if (off < OUT_KEEP)
		memcpy(c->cur + off, p, IW_MIN(n, OUT_KEEP - off));
	return 0;
}

static int out_done(void *user)
{
	struct ctx *c = user;

	ck_assert_int_lt(c->nout, OUT_MAX);
	memcpy(c->out[c->nout].b, c->cur, OUT_KEEP);
	c->out[c->nout].len = c->cur_len;
	c->nout++;
	return 0;
}

static const struct mpa_rx_ops out_ops = {
	.ulpdu_header = out_header,
	.ulpdu_payload = out_payload,
	.fpdu_done = out_done,
};

/* Take everything the victim offers to send and decode it; returns the octets. */
static size_t drain(struct ctx *c)
{
	size_t total = 0;

	for (int i = 0; i < 1000; i++) {
		struct iovec iov[64];
		size_t bytes = 0;
		int n = rdmap_qp_tx_iov(c->qp, iov, 64, &bytes);

		ck_assert_int_ge(n, 0);
		if (n == 0)
			return total;
		for (int k = 0; k < n; k++)
			ck_assert_int_eq(
				mpa_rx_read_stream(&c->orx, iov[k].iov_base, iov[k].iov_len),
				(ssize_t)iov[k].iov_len);
		rdmap_qp_tx_advance(c->qp, bytes);
		total += bytes;
	}
	ck_abort_msg("%s: the victim never stopped sending", c->row->name);
	return total;
}

static void out_ddp(struct ctx *c, int i, struct ddp_hdr *h)
{
	ck_assert_int_ge(c->out[i].len, DDP_TAGGED_HDR_LEN);
	ck_assert_int_gt(ddp_hdr_decode(c->out[i].b, c->out[i].len, h), 0);
}

static bool out_is_term(struct ctx *c, int i)
{
	struct ddp_hdr h;

	out_ddp(c, i, &h);
	return !h.tagged && rdmap_ctrl_opcode(h.rsvdulp) == RDMAP_OP_TERMINATE;
}

static int out_count_terms(struct ctx *c)
{
	int n = 0;

	for (int i = 0; i < c->nout; i++)
		n += out_is_term(c, i);
	return n;
}

/* ---------------------------------------------------------------------- */
/* Building and framing the offending input                                */
/* ---------------------------------------------------------------------- */

static void fill_payload(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + 1);
}

/* Frame one ULPDU as the peer would and append it to the injected stream. */
static void put_ulpdu_x(struct ctx *c, const uint8_t *u, size_t n, bool errant, enum corrupt k)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)u, .iov_len = n};
	size_t start = c->slen;

	ck_assert_int_eq(mpa_tx_frame(&c->itx, &iov, 1, &c->f), IW_OK);
	if (k == C_MARKER) {
		/* FPDUPTR is octets 2-3 of the Marker; with CRC off nothing else notices. */
		ck_assert_uint_ge(c->f.nmarkers, 1);
		c->f.markers[0][2] ^= 0x55;
		c->f.markers[0][3] ^= 0x55;
	}
	for (int i = c->f.first; i < c->f.first + c->f.iovcnt; i++) {
		ck_assert_uint_le(c->slen + c->f.iov[i].iov_len, STREAM_MAX);
		memcpy(c->stream + c->slen, c->f.iov[i].iov_base, c->f.iov[i].iov_len);
		c->slen += c->f.iov[i].iov_len;
	}
	ck_assert_uint_eq(c->slen - start, c->f.total);
	if (k == C_CRC)
		c->stream[c->slen - 1] ^= 0x01; /* the last octet of an FPDU is CRC */
	if (errant) {
		size_t hl = ddp_hdr_len(n > 0 && (u[0] & DDP_CTRL_T));

		c->have_errant = true;
		c->errhdr_ok = n >= hl;
		c->errhdr_len = hl;
		c->errseg_len = (uint16_t)n;
		memset(c->errhdr, 0, sizeof(c->errhdr));
		memcpy(c->errhdr, u, IW_MIN(n, hl));
		if (n >= DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)
			memcpy(c->errrreq, u + DDP_UNTAGGED_HDR_LEN, RDMAP_READ_REQ_LEN);
	}
}

static void put_ulpdu(struct ctx *c, const uint8_t *u, size_t n, bool errant)
{
	put_ulpdu_x(c, u, n, errant, C_NONE);
}

/* Tagged segment: header + `len` pattern octets into u; returns the ULPDU length. */
static size_t mk_tagged(uint8_t *u, uint8_t op, uint32_t stag, uint64_t to, bool last, uint32_t len)
{
	struct ddp_hdr h = {.tagged = true,
			    .last = last,
			    .rsvdulp = rdmap_ctrl_make(op),
			    .stag = stag,
			    .to = to};

	ck_assert_int_eq(ddp_hdr_encode(&h, u, DDP_TAGGED_HDR_LEN), DDP_TAGGED_HDR_LEN);
	fill_payload(u + DDP_TAGGED_HDR_LEN, len);
	return DDP_TAGGED_HDR_LEN + len;
}

static size_t mk_untagged(uint8_t *u, uint8_t op, uint32_t qn, uint32_t msn, uint32_t mo, bool last,
			  uint32_t inv, uint32_t len)
{
	struct ddp_hdr h = {.tagged = false,
			    .last = last,
			    .rsvdulp = rdmap_ctrl_make(op),
			    .rsvdulp2 = inv,
			    .qn = qn,
			    .msn = msn,
			    .mo = mo};

	ck_assert_int_eq(ddp_hdr_encode(&h, u, DDP_UNTAGGED_HDR_LEN), DDP_UNTAGGED_HDR_LEN);
	fill_payload(u + DDP_UNTAGGED_HDR_LEN, len);
	return DDP_UNTAGGED_HDR_LEN + len;
}

static size_t mk_rreq(uint8_t *u, uint32_t msn, uint32_t sink_stag, uint64_t sink_to, uint32_t size,
		      uint32_t src_stag, uint64_t src_to)
{
	struct rdmap_read_req r = {.sink_stag = sink_stag,
				   .sink_to = sink_to,
				   .size = size,
				   .src_stag = src_stag,
				   .src_to = src_to};
	size_t n = mk_untagged(u, RDMAP_OP_READ_REQ, DDP_QN_READ_REQ, msn, 0, true, 0, 0);

	rdmap_read_req_encode(&r, u + n);
	return n + RDMAP_READ_REQ_LEN;
}

static void put_tagged(struct ctx *c, uint8_t op, uint32_t stag, uint64_t to, bool last,
		       uint32_t len, bool errant)
{
	uint8_t u[2048];

	ck_assert_uint_le(len + DDP_TAGGED_HDR_LEN, sizeof(u));
	put_ulpdu(c, u, mk_tagged(u, op, stag, to, last, len), errant);
}

static void put_untagged(struct ctx *c, uint8_t op, uint32_t qn, uint32_t msn, uint32_t mo,
			 bool last, uint32_t inv, uint32_t len, bool errant)
{
	uint8_t u[2048];

	ck_assert_uint_le(len + DDP_UNTAGGED_HDR_LEN, sizeof(u));
	put_ulpdu(c, u, mk_untagged(u, op, qn, msn, mo, last, inv, len), errant);
}

static void put_send(struct ctx *c, uint32_t msn, uint32_t mo, bool last, uint32_t len, bool errant)
{
	put_untagged(c, RDMAP_OP_SEND, DDP_QN_SEND, msn, mo, last, 0, len, errant);
}

/* A Read Request for our sink buffer; the source is the row's choice. */
static void put_rreq(struct ctx *c, uint32_t msn, uint32_t size, uint32_t src_stag, uint64_t src_to,
		     bool errant)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN];

	put_ulpdu(c, u, mk_rreq(u, msn, 0xABCDEF01u, 0x5000, size, src_stag, src_to), errant);
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* ---------------------------------------------------------------------- */
/* The rows' inputs                                                        */
/* ---------------------------------------------------------------------- */

static uint32_t other_key(uint32_t stag)
{
	return DDP_STAG_MAKE(DDP_STAG_INDEX(stag), DDP_STAG_KEY(stag) ^ 0x5A);
}

static void b_write_unknown_stag(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, DDP_STAG_MAKE(0x777, 3), 0, true, 16, true);
}

static void b_write_wrong_key(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, other_key(c->w_stag), addr(c->wbuf), true, 16, true);
}

static void b_write_stag_zero(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, 0, 0, true, 16, true);
}

static void b_write_wrong_pd(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->p_stag, addr(c->pbuf), true, 16, true);
}

static void b_write_no_right(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->r_stag, addr(c->rbuf), true, 16, true);
}

/* Both a DDP error (bounds, wrap) and RDMAP's access right: DDP's is reported. */
static void b_write_no_right_beyond_bounds(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->r_stag, addr(c->rbuf) + BUF_LEN - 15, true, 16, true);
}

static void b_write_no_right_to_wrap(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->r_stag, UINT64_MAX - 7, true, 16, true);
}

static void b_write_to_wrap(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->w_stag, UINT64_MAX - 7, true, 16, true);
}

static void b_write_below_base(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf) - 1, true, 16, true);
}

static void b_write_beyond_bounds(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf) + BUF_LEN - 15, true, 16, true);
}

/* Long enough to hold a Marker: the bounds error must survive Marker removal. */
static void b_write_beyond_bounds_big(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), true, 600, true);
}

/* A good first segment, then one that runs off the end. */
static void b_write_second_segment_beyond(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), false, 200, false);
	put_tagged(c, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf) + 200, true, 100, true);
}

static void b_write_invalidated(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_SEND_INV, DDP_QN_SEND, 1, 0, true, c->i_stag, 8, false);
	put_tagged(c, RDMAP_OP_WRITE, c->i_stag, addr(c->ibuf), true, 8, true);
}

static void b_rreq_no_right(struct ctx *c)
{
	put_rreq(c, 1, 16, c->w_stag, addr(c->wbuf), true);
}

static void b_rreq_no_right_beyond(struct ctx *c)
{
	put_rreq(c, 1, BUF_LEN + 1, c->w_stag, addr(c->wbuf), true);
}

static void b_rreq_beyond(struct ctx *c)
{
	put_rreq(c, 1, BUF_LEN + 1, c->r_stag, addr(c->rbuf), true);
}

static void b_rreq_unknown(struct ctx *c)
{
	put_rreq(c, 1, 16, DDP_STAG_MAKE(0x777, 3), 0, true);
}

static void b_rreq_wrong_pd(struct ctx *c)
{
	put_rreq(c, 1, 16, c->p_stag, addr(c->pbuf), true);
}

static void b_rreq_wrap(struct ctx *c)
{
	put_rreq(c, 1, 16, c->r_stag, UINT64_MAX - 3, true);
}

static void b_rreq_msn_high(struct ctx *c)
{
	put_rreq(c, 2, 16, c->r_stag, addr(c->rbuf), true);
}

static void b_rreq_not_last(struct ctx *c)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN];
	size_t n = mk_rreq(u, 1, 0xABCDEF01u, 0x5000, 16, c->r_stag, addr(c->rbuf));

	u[0] &= (uint8_t)~DDP_CTRL_L;
	put_ulpdu(c, u, n, true);
}

static void b_rreq_beyond_ird(struct ctx *c)
{
	for (uint32_t i = 1; i <= c->vp.ird; i++)
		put_rreq(c, i, 16, c->r_stag, addr(c->rbuf), false);
	put_rreq(c, c->vp.ird + 1, 16, c->r_stag, addr(c->rbuf), true);
}

/* Beyond IRD and an unknown source: no QN 1 buffer is the first error. */
static void b_rreq_beyond_ird_unknown_source(struct ctx *c)
{
	for (uint32_t i = 1; i <= c->vp.ird; i++)
		put_rreq(c, i, 16, c->r_stag, addr(c->rbuf), false);
	put_rreq(c, c->vp.ird + 1, 16, DDP_STAG_MAKE(0x777, 3), 0, true);
}

static void b_send_msn_high(struct ctx *c)
{
	put_send(c, 2, 0, true, 8, true);
}

static void b_send_msn_low(struct ctx *c)
{
	put_send(c, 1, 0, true, 8, false);
	put_send(c, 1, 0, true, 8, true);
}

static void b_send_mo_beyond(struct ctx *c)
{
	put_send(c, 1, RECV_LEN + 10, true, 8, true);
}

static void b_send_mo_gap(struct ctx *c)
{
	put_send(c, 1, 0, false, 16, false);
	put_send(c, 1, 32, true, 8, true);
}

static void b_send_mo_overlap(struct ctx *c)
{
	put_send(c, 1, 0, false, 16, false);
	put_send(c, 1, 8, true, 8, true);
}

static void b_send_no_recv(struct ctx *c)
{
	put_send(c, 1, 0, true, 8, true);
}

static void b_send_too_long(struct ctx *c)
{
	put_send(c, 1, 0, true, RECV_LEN + 1, true);
}

static void b_send_too_long_second_segment(struct ctx *c)
{
	put_send(c, 1, 0, false, RECV_LEN - 4, false);
	put_send(c, 1, RECV_LEN - 4, true, 8, true);
}

static void b_send_interleaved(struct ctx *c)
{
	put_send(c, 1, 0, false, 16, false);
	put_send(c, 2, 0, true, 8, true);
}

static void b_send_zero_no_recv(struct ctx *c)
{
	put_send(c, 1, 0, true, 0, true);
}

static void b_resp_no_read(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_READ_RESP, 0x4242, 0, true, 8, true);
}

static void b_resp_wrong_stag(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_READ_RESP, other_key(c->rr.sink_stag), c->rr.sink_to, true, 8, true);
}

static void b_resp_beyond_sink(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_READ_RESP, c->rr.sink_stag, c->rr.sink_to, true, READ_LEN + 1, true);
}

static void b_inv_unknown(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_SEND_INV, DDP_QN_SEND, 1, 0, true, DDP_STAG_MAKE(0x777, 3), 8,
		     true);
}

static void b_inv_no_right(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_SEND_SE_INV, DDP_QN_SEND, 1, 0, true, c->ni_stag, 8, true);
}

static void b_inv_wrong_pd(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_SEND_INV, DDP_QN_SEND, 1, 0, true, c->p_stag, 8, true);
}

static void b_dv_tagged(struct ctx *c)
{
	uint8_t u[64];
	size_t n = mk_tagged(u, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), true, 8);

	u[0] = (uint8_t)((u[0] & ~DDP_CTRL_DV) | 2);
	put_ulpdu(c, u, n, true);
}

static void b_dv_untagged(struct ctx *c)
{
	uint8_t u[64];
	size_t n = mk_untagged(u, RDMAP_OP_SEND, DDP_QN_SEND, 1, 0, true, 0, 8);

	u[0] = (uint8_t)(u[0] & ~DDP_CTRL_DV); /* DV 0 */
	put_ulpdu(c, u, n, true);
}

static void b_rv_send(struct ctx *c)
{
	uint8_t u[64];
	size_t n = mk_untagged(u, RDMAP_OP_SEND, DDP_QN_SEND, 1, 0, true, 0, 8);

	u[1] = (uint8_t)(2 << 6 | RDMAP_OP_SEND);
	put_ulpdu(c, u, n, true);
}

/* A spoilt header in an FPDU whose CRC is wrong too: the CRC error wins
 * (RFC 5044 §8, Appendix A), with no header copied. */
static void b_rv_send_crc(struct ctx *c)
{
	uint8_t u[64];
	size_t n = mk_untagged(u, RDMAP_OP_SEND, DDP_QN_SEND, 1, 0, true, 0, 8);

	u[1] = (uint8_t)(2 << 6 | RDMAP_OP_SEND);
	put_ulpdu_x(c, u, n, true, C_CRC);
}

static void b_write_beyond_bounds_crc(struct ctx *c)
{
	uint8_t u[64];

	put_ulpdu_x(c, u,
		    mk_tagged(u, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf) + BUF_LEN - 15, true, 16),
		    true, C_CRC);
}

static void b_rv_write(struct ctx *c)
{
	uint8_t u[64];
	size_t n = mk_tagged(u, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), true, 8);

	u[1] = RDMAP_OP_WRITE; /* RV 0: the pre-IETF version, never negotiated here */
	put_ulpdu(c, u, n, true);
}

/* ---- RFC 7306 ---- */

static void put_areq(struct ctx *c, uint32_t msn, uint8_t aop, uint32_t stag, uint64_t to,
		     size_t cut, bool errant)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN];
	struct rdmap_atomic_req a = {.aop = aop,
				     .req_id = 7,
				     .stag = stag,
				     .to = to,
				     .add_swap = 1,
				     .compare_mask = UINT64_MAX};
	size_t n = mk_untagged(u, RDMAP_OP_ATOMIC_REQ, DDP_QN_READ_REQ, msn, 0, true, 0, 0);

	rdmap_atomic_req_encode(&a, u + n);
	put_ulpdu(c, u, n + RDMAP_ATOMIC_REQ_LEN - cut, errant);
}

static void b_areq_unknown(struct ctx *c)
{
	put_areq(c, 1, RDMAP_AOP_FETCH_ADD, DDP_STAG_MAKE(0x777, 3), 0, 0, true);
}

static void b_areq_no_right(struct ctx *c)
{
	put_areq(c, 1, RDMAP_AOP_FETCH_ADD, c->w_stag, addr(c->wbuf), 0, true);
}

static void b_areq_wrong_pd(struct ctx *c)
{
	put_areq(c, 1, RDMAP_AOP_CMP_SWAP, c->p_stag, addr(c->pbuf), 0, true);
}

static void b_areq_beyond(struct ctx *c)
{
	put_areq(c, 1, RDMAP_AOP_FETCH_ADD, c->a_stag, addr(c->abuf) + sizeof(c->abuf), 0, true);
}

static void b_areq_unaligned(struct ctx *c)
{
	put_areq(c, 1, RDMAP_AOP_FETCH_ADD, c->a_stag, addr(c->abuf) + 4, 0, true);
}

static void b_areq_bad_aop(struct ctx *c)
{
	put_areq(c, 1, 1, c->a_stag, addr(c->abuf), 0, true);
}

static void b_areq_short(struct ctx *c)
{
	put_areq(c, 1, RDMAP_AOP_FETCH_ADD, c->a_stag, addr(c->abuf), 8, true);
}

/* The victim's IRD is IRD_SMALL: one Atomic Request more than that. */
static void b_areq_beyond_ird(struct ctx *c)
{
	for (uint32_t i = 0; i < IRD_SMALL; i++)
		put_areq(c, i + 1, RDMAP_AOP_FETCH_ADD, c->a_stag, addr(c->abuf), 0, false);
	put_areq(c, IRD_SMALL + 1, RDMAP_AOP_FETCH_ADD, c->a_stag, addr(c->abuf), 0, true);
}

static void put_aresp(struct ctx *c, uint32_t msn, uint32_t req_id, bool errant)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_RESP_LEN];
	struct rdmap_atomic_resp a = {.req_id = req_id, .orig = 42};
	size_t n = mk_untagged(u, RDMAP_OP_ATOMIC_RESP, DDP_QN_ATOMIC_RESP, msn, 0, true, 0, 0);

	rdmap_atomic_resp_encode(&a, u + n);
	put_ulpdu(c, u, n + RDMAP_ATOMIC_RESP_LEN, errant);
}

static void b_aresp_none_out(struct ctx *c)
{
	put_aresp(c, 1, 0, true);
}

static void put_imm(struct ctx *c, uint8_t op, uint32_t msn, size_t len, bool errant)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + 16];
	size_t n = mk_untagged(u, op, DDP_QN_SEND, msn, 0, true, 0, (uint32_t)len);

	put_ulpdu(c, u, n, errant);
}

static void b_imm_no_recv(struct ctx *c)
{
	put_imm(c, RDMAP_OP_IMM, 1, RDMAP_IMM_LEN, true);
}

static void b_imm_long(struct ctx *c)
{
	put_imm(c, RDMAP_OP_IMM_SE, 1, RDMAP_IMM_LEN + 4, true);
}

static void b_imm_short(struct ctx *c)
{
	put_imm(c, RDMAP_OP_IMM, 1, 4, true);
}

static void b_imm_not_last(struct ctx *c)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_IMM_LEN];

	put_ulpdu(c, u, mk_untagged(u, RDMAP_OP_IMM, DDP_QN_SEND, 1, 0, false, 0, RDMAP_IMM_LEN),
		  true);
}

static void b_qn_4(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_SEND, 4, 1, 0, true, 0, 8, true);
}

static void b_atomic_without_7306(struct ctx *c)
{
	put_areq(c, 1, RDMAP_AOP_FETCH_ADD, c->a_stag, addr(c->abuf), 0, true);
}

/* A legal FetchAdd: it is performed once and answered with an Atomic Response. */
static void b_areq_good(struct ctx *c)
{
	c->abuf[0] = 41;
	put_areq(c, 1, RDMAP_AOP_FETCH_ADD, c->a_stag, addr(c->abuf), 0, false);
}

static void k_areq_good(struct ctx *c)
{
	struct rdmap_atomic_resp a;
	struct ddp_hdr h;
	int i;

	R_EQ(c, c->abuf[0], 42);
	for (i = 0; i < c->nout; i++) {
		out_ddp(c, i, &h);
		if (!h.tagged && rdmap_ctrl_opcode(h.rsvdulp) == RDMAP_OP_ATOMIC_RESP)
			break;
	}
	R_ASSERT(i < c->nout, "%s: no Atomic Response", c->row->name);
	R_EQ(c, h.qn, DDP_QN_ATOMIC_RESP);
	R_EQ(c, h.msn, 1);
	R_EQ(c, c->out[i].len, DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_RESP_LEN);
	rdmap_atomic_resp_decode(c->out[i].b + DDP_UNTAGGED_HDR_LEN, &a);
	R_EQ(c, a.req_id, 7);
	R_EQ(c, a.orig, 41);
}

/* An Immediate Data message consumes the first posted receive and reports its 8 octets. */
static void b_imm_good(struct ctx *c)
{
	put_imm(c, RDMAP_OP_IMM_SE, 1, RDMAP_IMM_LEN, false);
}

static void k_imm_good(struct ctx *c)
{
	struct rdmap_wc wc;

	R_EQ(c, rdmap_qp_poll(c->qp, &wc, 1), 1);
	R_EQ(c, wc.wr_id, WR_RECV0);
	R_EQ(c, wc.status, RDMAP_WC_SUCCESS);
	R_EQ(c, wc.opcode, RDMAP_WC_RECV);
	R_EQ(c, wc.with_imm, 1);
	R_EQ(c, wc.solicited, 1);
	R_EQ(c, wc.byte_len, 0);
	R_EQ(c, wc.imm, 0x01080f161d242b32ull); /* fill_payload's octets, big-endian */
	/* completed and checked here: check_completions expects the others */
	c->wr_ids[0] = c->wr_ids[--c->nwr];
}

static void b_opcode_8(struct ctx *c)
{
	put_untagged(c, 0x8, DDP_QN_SEND, 1, 0, true, 0, 8, true);
}

static void b_opcode_b(struct ctx *c)
{
	put_tagged(c, 0xB, c->w_stag, addr(c->wbuf), true, 8, true);
}

static void b_opcode_f(struct ctx *c)
{
	put_untagged(c, 0xF, DDP_QN_SEND, 1, 0, true, 0, 8, true);
}

static void b_qn_3(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_SEND, 3, 1, 0, true, 0, 8, true);
}

static void b_send_tagged(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_SEND, c->w_stag, addr(c->wbuf), true, 8, true);
}

static void b_write_untagged(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_WRITE, DDP_QN_SEND, 1, 0, true, 0, 8, true);
}

static void b_send_on_qn1(struct ctx *c)
{
	put_untagged(c, RDMAP_OP_SEND, DDP_QN_READ_REQ, 1, 0, true, 0, 8, true);
}

static void b_rreq_on_qn0(struct ctx *c)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN];
	size_t n = mk_rreq(u, 1, 0xABCDEF01u, 0x5000, 16, c->r_stag, addr(c->rbuf));

	iw_put_be32(u + 6, DDP_QN_SEND);
	put_ulpdu(c, u, n, true);
}

static void b_term_on_qn0(struct ctx *c)
{
	uint8_t u[64];
	size_t n = mk_untagged(u, RDMAP_OP_TERMINATE, DDP_QN_SEND, 1, 0, true, 0, 0);

	u[n++] = 0x11; /* layer 1 type 1, code 0, no copies */
	u[n++] = 0;
	u[n++] = 0;
	u[n++] = 0;
	put_ulpdu(c, u, n, true);
}

static void b_peer_term_mid_message(struct ctx *c)
{
	uint8_t u[128], copy[DDP_TAGGED_HDR_LEN];
	size_t n;
	ssize_t tl;

	put_send(c, 1, 0, false, 16, false);
	/* Our "errant" header: a Write the peer did not like. */
	mk_tagged(copy, RDMAP_OP_WRITE, 0x1234, 0, true, 0);
	rdmap_term_fill(&c->peer_term, &c->row->code, copy, sizeof(copy), 30, NULL);
	n = mk_untagged(u, RDMAP_OP_TERMINATE, DDP_QN_TERMINATE, 1, 0, true, 0, 0);
	tl = rdmap_term_encode(&c->peer_term, u + n, sizeof(u) - n);
	ck_assert_int_gt(tl, 0);
	put_ulpdu(c, u, n + (size_t)tl, false);
}

/* The same Terminate with the control word as Linux siw writes it (rdmap.h,
 * rdmap_term_decode_siw): the QP must report the reading that makes sense. */
static void b_peer_term_siw_layout(struct ctx *c)
{
	uint8_t u[128], copy[DDP_UNTAGGED_HDR_LEN], *w;
	size_t n;
	ssize_t tl;

	put_send(c, 1, 0, false, 16, false);
	mk_untagged(copy, RDMAP_OP_SEND, 7, 1, 0, true, 0, 0);
	rdmap_term_fill(&c->peer_term, &c->row->code, copy, sizeof(copy), 30, NULL);
	n = mk_untagged(u, RDMAP_OP_TERMINATE, DDP_QN_TERMINATE, 1, 0, true, 0, 0);
	tl = rdmap_term_encode(&c->peer_term, u + n, sizeof(u) - n);
	ck_assert_int_gt(tl, 0);
	w = u + n;
	/* RFC 5040: 12 01 c0 00; siw: 21 01 03 00 */
	w[0] = (uint8_t)(w[0] << 4 | w[0] >> 4);
	w[2] = (uint8_t)((w[2] & RDMAP_TERM_M ? 0x01 : 0) | (w[2] & RDMAP_TERM_D ? 0x02 : 0) |
			 (w[2] & RDMAP_TERM_R ? 0x04 : 0));
	ck_assert_int_eq(w[0], 0x21);
	ck_assert_int_eq(w[2], 0x03);
	put_ulpdu(c, u, n + (size_t)tl, false);
}

static void b_crc(struct ctx *c)
{
	uint8_t u[64];

	put_ulpdu_x(c, u, mk_untagged(u, RDMAP_OP_SEND, DDP_QN_SEND, 1, 0, true, 0, 8), true,
		    C_CRC);
}

static void b_crc_after_good(struct ctx *c)
{
	uint8_t u[64];

	put_tagged(c, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), true, 40, false);
	put_ulpdu_x(c, u, mk_tagged(u, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), true, 40), true,
		    C_CRC);
}

static void b_marker(struct ctx *c)
{
	uint8_t u[1024];

	put_ulpdu_x(c, u, mk_tagged(u, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), true, 200), true,
		    C_MARKER);
}

static void b_short_tagged(struct ctx *c)
{
	uint8_t u[DDP_TAGGED_HDR_LEN];

	mk_tagged(u, RDMAP_OP_WRITE, c->w_stag, addr(c->wbuf), true, 0);
	put_ulpdu(c, u, 10, true);
}

static void b_short_untagged(struct ctx *c)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN];

	mk_untagged(u, RDMAP_OP_SEND, DDP_QN_SEND, 1, 0, true, 0, 0);
	put_ulpdu(c, u, DDP_TAGGED_HDR_LEN + 2, true);
}

static void b_zero_write_invalid(struct ctx *c)
{
	put_tagged(c, RDMAP_OP_WRITE, DDP_STAG_MAKE(0x777, 3), UINT64_MAX, true, 0, false);
}

static void b_zero_rreq_invalid(struct ctx *c)
{
	put_rreq(c, 1, 0, DDP_STAG_MAKE(0x777, 3), UINT64_MAX, false);
}

static void b_zero_read_resp(struct ctx *c)
{
	/* Zero-length, but the Read asked for READ_LEN octets: stays outstanding. */
	put_tagged(c, RDMAP_OP_READ_RESP, c->rr.sink_stag, c->rr.sink_to, false, 0, false);
}

static void b_p2p_not_rtr(struct ctx *c)
{
	put_send(c, 1, 0, true, 8, true);
}

static void b_p2p_wrong_rtr_form(struct ctx *c)
{
	uint8_t u[64];
	ssize_t n = mpa_rtr_encode(MPA_RTR_WRITE, u, sizeof(u));

	ck_assert_int_gt(n, 0);
	put_ulpdu(c, u, (size_t)n, true);
}

static void b_p2p_rtr_then_bad(struct ctx *c)
{
	uint8_t u[64];
	ssize_t n = mpa_rtr_encode(MPA_RTR_SEND, u, sizeof(u));

	ck_assert_int_gt(n, 0);
	put_ulpdu(c, u, (size_t)n, false);
	put_send(c, 3, 0, true, 8, true); /* the RTR was MSN 1: 2 is next */
}

/* ---------------------------------------------------------------------- */
/* Extra checks of the legal rows                                          */
/* ---------------------------------------------------------------------- */

static void chk_zero_rreq_answered(struct ctx *c)
{
	bool found = false;

	for (int i = 0; i < c->nout; i++) {
		struct ddp_hdr h;

		out_ddp(c, i, &h);
		if (!h.tagged || rdmap_ctrl_opcode(h.rsvdulp) != RDMAP_OP_READ_RESP)
			continue;
		R_ASSERT(!found, "%s: more than one Read Response", c->row->name);
		found = true;
		R_EQ(c, c->out[i].len, DDP_TAGGED_HDR_LEN);
		R_EQ(c, h.stag, 0xABCDEF01u);
		R_EQ(c, h.to, 0x5000);
		R_ASSERT(h.last, "%s: Read Response without L", c->row->name);
	}
	R_ASSERT(found, "%s: no zero-length Read Response", c->row->name);
}

/* ---------------------------------------------------------------------- */
/* The catalogue                                                           */
/* ---------------------------------------------------------------------- */

#define DDPT(code)                                                                                 \
	{                                                                                          \
		IW_TERM_LAYER_DDP, 1, code                                                         \
	}
#define DDPU(code)                                                                                 \
	{                                                                                          \
		IW_TERM_LAYER_DDP, 2, code                                                         \
	}
#define PROT(code)                                                                                 \
	{                                                                                          \
		IW_TERM_LAYER_RDMAP, 1, code                                                       \
	}
#define OPER(code)                                                                                 \
	{                                                                                          \
		IW_TERM_LAYER_RDMAP, 2, code                                                       \
	}
#define LLP(code)                                                                                  \
	{                                                                                          \
		IW_TERM_LAYER_LLP, 0, code                                                         \
	}
#define NOCODE                                                                                     \
	{                                                                                          \
		0, 0, 0                                                                            \
	}

static const struct bad_row rows[] = {
	/* Tagged buffers (RFC 5041 §7.2 type 1; RFC 5040 §7.2) */
	{"write to an unknown STag", V_CRC, 0, b_write_unknown_stag, M_TERM, IW_EDDP_T_INVALID_STAG,
	 DDPT(0), false, NULL},
	{"write with the wrong key", V_NOCRC, 0, b_write_wrong_key, M_TERM, IW_EDDP_T_INVALID_STAG,
	 DDPT(0), false, NULL},
	{"write to STag 0", V_MARKERS, 0, b_write_stag_zero, M_TERM, IW_EDDP_T_INVALID_STAG,
	 DDPT(0), false, NULL},
	{"write to an STag of another PD", V_CRC, 0, b_write_wrong_pd, M_TERM, IW_EDDP_T_STREAM,
	 DDPT(2), false, NULL},
	{"write without remote-write right", V_MARKERS, 0, b_write_no_right, M_TERM,
	 IW_ERDMAP_ACCESS, PROT(2), false, NULL},
	{"write whose TO + length wraps 2^64", V_CRC, 0, b_write_to_wrap, M_TERM, IW_EDDP_T_TO_WRAP,
	 DDPT(3), false, NULL},
	{"write beyond the bounds without remote-write right: bounds first", V_CRC, 0,
	 b_write_no_right_beyond_bounds, M_TERM, IW_EDDP_T_BOUNDS, DDPT(1), false, NULL},
	{"write wrapping 2^64 without remote-write right: wrap first", V_NOCRC, 0,
	 b_write_no_right_to_wrap, M_TERM, IW_EDDP_T_TO_WRAP, DDPT(3), false, NULL},
	{"write below the base TO", V_NOCRC, 0, b_write_below_base, M_TERM, IW_EDDP_T_BOUNDS,
	 DDPT(1), false, NULL},
	{"write beyond the bounds", V_CRC, 0, b_write_beyond_bounds, M_TERM, IW_EDDP_T_BOUNDS,
	 DDPT(1), false, NULL},
	{"write beyond the bounds across a Marker", V_MARKERS, 0, b_write_beyond_bounds_big, M_TERM,
	 IW_EDDP_T_BOUNDS, DDPT(1), false, NULL},
	{"second write segment beyond the bounds", V_P2P_INI, 0, b_write_second_segment_beyond,
	 M_TERM, IW_EDDP_T_BOUNDS, DDPT(1), false, NULL},
	{"write to an STag the peer invalidated", V_CRC, 0, b_write_invalidated, M_TERM,
	 IW_EDDP_T_INVALID_STAG, DDPT(0), false, NULL},
	/* Read Requests (RFC 5040 §5.2, §7.2 with the RDMA header copied) */
	{"read request without remote-read right", V_CRC, 0, b_rreq_no_right, M_TERM,
	 IW_ERDMAP_ACCESS, PROT(2), true, NULL},
	{"read request source beyond the bounds", V_NOCRC, 0, b_rreq_beyond, M_TERM,
	 IW_ERDMAP_BOUNDS, PROT(1), true, NULL},
	{"read request of an unknown source STag", V_MARKERS, 0, b_rreq_unknown, M_TERM,
	 IW_ERDMAP_INVALID_STAG, PROT(0), true, NULL},
	{"read request of a source in another PD", V_CRC, 0, b_rreq_wrong_pd, M_TERM,
	 IW_ERDMAP_STREAM, PROT(3), true, NULL},
	{"read request whose source wraps 2^64", V_CRC, 0, b_rreq_wrap, M_TERM, IW_ERDMAP_TO_WRAP,
	 PROT(4), true, NULL},
	{"read request with a skipped MSN", V_CRC, 0, b_rreq_msn_high, M_TERM, IW_EDDP_U_MSN_RANGE,
	 DDPU(3), false, NULL},
	{"read request without the L bit", V_CRC, 0, b_rreq_not_last, M_TERM, IW_EDDP_U_MO, DDPU(4),
	 false, NULL},
	{"read request beyond IRD", V_CRC, 0, b_rreq_beyond_ird, M_TERM, IW_EDDP_U_NO_BUFFER,
	 DDPU(2), false, NULL},
	{"read request beyond IRD of an unknown source: IRD first", V_CRC, 0,
	 b_rreq_beyond_ird_unknown_source, M_TERM, IW_EDDP_U_NO_BUFFER, DDPU(2), false, NULL},
	{"read request source beyond the bounds without remote-read right: bounds first", V_CRC, 0,
	 b_rreq_no_right_beyond, M_TERM, IW_ERDMAP_BOUNDS, PROT(1), true, NULL},
	/* Untagged buffers (RFC 5041 §7.2 type 2) */
	{"send with an MSN too high", V_CRC, 0, b_send_msn_high, M_TERM, IW_EDDP_U_MSN_RANGE,
	 DDPU(3), false, NULL},
	{"send repeating an old MSN", V_NOCRC, 0, b_send_msn_low, M_TERM, IW_EDDP_U_MSN_RANGE,
	 DDPU(3), false, NULL},
	{"send with an MO beyond the buffer", V_CRC, 0, b_send_mo_beyond, M_TERM, IW_EDDP_U_MO,
	 DDPU(4), false, NULL},
	{"send with a gap in MO", V_MARKERS, 0, b_send_mo_gap, M_TERM, IW_EDDP_U_MO, DDPU(4), false,
	 NULL},
	{"send with overlapping MO", V_CRC, 0, b_send_mo_overlap, M_TERM, IW_EDDP_U_MO, DDPU(4),
	 false, NULL},
	{"send without a posted receive", V_CRC, F_NO_RECV, b_send_no_recv, M_TERM,
	 IW_EDDP_U_NO_BUFFER, DDPU(2), false, NULL},
	{"send larger than the receive buffer", V_CRC, 0, b_send_too_long, M_TERM,
	 IW_EDDP_U_TOO_LONG, DDPU(5), false, NULL},
	{"send outgrowing the receive buffer in its second segment", V_NOCRC, 0,
	 b_send_too_long_second_segment, M_TERM, IW_EDDP_U_TOO_LONG, DDPU(5), false, NULL},
	{"send interleaved with the unfinished previous one", V_CRC, 0, b_send_interleaved, M_TERM,
	 IW_EDDP_U_MSN_RANGE, DDPU(3), false, NULL},
	{"zero-length send without a posted receive", V_CRC, F_NO_RECV, b_send_zero_no_recv, M_TERM,
	 IW_EDDP_U_NO_BUFFER, DDPU(2), false, NULL},
	/* Read Responses */
	{"read response with no read outstanding", V_CRC, F_NO_READ, b_resp_no_read, M_TERM,
	 IW_ERDMAP_OPCODE, OPER(6), false, NULL},
	{"read response to another STag than the sink", V_CRC, 0, b_resp_wrong_stag, M_TERM,
	 IW_EDDP_T_INVALID_STAG, DDPT(0), false, NULL},
	{"read response beyond the sink", V_MARKERS, 0, b_resp_beyond_sink, M_TERM,
	 IW_EDDP_T_BOUNDS, DDPT(1), false, NULL},
	/* Send with Invalidate (RFC 5040 §5.3) */
	{"send with invalidate of an unknown STag", V_CRC, 0, b_inv_unknown, M_TERM,
	 IW_ERDMAP_CANT_INVALIDATE, OPER(9), false, NULL},
	{"send with invalidate of an STag without remote-invalidate right", V_NOCRC, 0,
	 b_inv_no_right, M_TERM, IW_ERDMAP_CANT_INVALIDATE, OPER(9), false, NULL},
	{"send with invalidate of an STag of another PD", V_CRC, 0, b_inv_wrong_pd, M_TERM,
	 IW_ERDMAP_CANT_INVALIDATE, OPER(9), false, NULL},
	/* Versions and opcodes */
	{"tagged segment with DDP version 2", V_CRC, 0, b_dv_tagged, M_TERM, IW_EDDP_T_VERSION,
	 DDPT(4), false, NULL},
	{"untagged segment with DDP version 0", V_MARKERS, 0, b_dv_untagged, M_TERM,
	 IW_EDDP_U_VERSION, DDPU(6), false, NULL},
	{"send with RDMAP version 2", V_CRC, 0, b_rv_send, M_TERM, IW_ERDMAP_VERSION, OPER(5),
	 false, NULL},
	{"write with RDMAP version 0", V_NOCRC, 0, b_rv_write, M_TERM, IW_ERDMAP_VERSION, OPER(5),
	 false, NULL},
	{"immediate data (0x8) without RFC 7306", V_CRC, 0, b_opcode_8, M_TERM, IW_ERDMAP_OPCODE,
	 OPER(6), false, NULL},
	{"atomic request without RFC 7306", V_CRC, 0, b_atomic_without_7306, M_TERM,
	 IW_ERDMAP_OPCODE, OPER(6), false, NULL},
	{"tagged opcode 0xB", V_CRC, 0, b_opcode_b, M_TERM, IW_ERDMAP_OPCODE, OPER(6), false, NULL},
	{"reserved opcode 0xF", V_MARKERS, 0, b_opcode_f, M_TERM, IW_ERDMAP_OPCODE, OPER(6), false,
	 NULL},
	{"untagged queue number 3", V_CRC, 0, b_qn_3, M_TERM, IW_EDDP_U_QN, DDPU(1), false, NULL},
	{"send with the T bit set", V_CRC, 0, b_send_tagged, M_TERM, IW_ERDMAP_OPCODE, OPER(6),
	 false, NULL},
	{"write with the T bit clear", V_NOCRC, 0, b_write_untagged, M_TERM, IW_ERDMAP_OPCODE,
	 OPER(6), false, NULL},
	{"send on the read request queue", V_CRC, 0, b_send_on_qn1, M_TERM, IW_ERDMAP_OPCODE,
	 OPER(6), false, NULL},
	{"read request on the send queue", V_CRC, 0, b_rreq_on_qn0, M_TERM, IW_ERDMAP_OPCODE,
	 OPER(6), false, NULL},
	{"terminate on the send queue", V_CRC, 0, b_term_on_qn0, M_TERM, IW_ERDMAP_OPCODE, OPER(6),
	 false, NULL},
	/* MPA (Layer 2) and local errors */
	{"CRC error", V_CRC, 0, b_crc, M_TERM, IW_EMPA_CRC, LLP(2), false, NULL},
	{"CRC error after a good FPDU with Markers", V_MARKERS, 0, b_crc_after_good, M_TERM,
	 IW_EMPA_CRC, LLP(2), false, NULL},
	{"send with RDMAP version 2 and a CRC error: the CRC error", V_CRC, 0, b_rv_send_crc,
	 M_TERM, IW_EMPA_CRC, LLP(2), false, NULL},
	{"write beyond the bounds and a CRC error: the CRC error", V_MARKERS, 0,
	 b_write_beyond_bounds_crc, M_TERM, IW_EMPA_CRC, LLP(2), false, NULL},
	{"write beyond the bounds: judged when the CRC is in", V_CRC, F_LAST_OCTET,
	 b_write_beyond_bounds, M_TERM, IW_EDDP_T_BOUNDS, DDPT(1), false, NULL},
	{"read request without remote-read right: judged when the CRC is in", V_MARKERS,
	 F_LAST_OCTET, b_rreq_no_right, M_TERM, IW_ERDMAP_ACCESS, PROT(2), true, NULL},
	{"wrong Marker FPDUPTR", V_MARKERS_RX, 0, b_marker, M_TERM, IW_EMPA_MARKER, LLP(3), false,
	 NULL},
	{"tagged segment shorter than its header",
	 V_CRC,
	 0,
	 b_short_tagged,
	 M_TERM,
	 IW_EDDP_SHORT,
	 {IW_TERM_LAYER_DDP, 0, 0},
	 false,
	 NULL},
	{"untagged segment shorter than its header",
	 V_NOCRC,
	 0,
	 b_short_untagged,
	 M_TERM,
	 IW_EDDP_SHORT,
	 {IW_TERM_LAYER_DDP, 0, 0},
	 false,
	 NULL},
	/* Peer-to-peer (RFC 6581 §9) */
	{"p2p responder whose first FPDU is not the RTR", V_P2P_RSP, 0, b_p2p_not_rtr, M_TERM,
	 IW_EMPA_RTR, LLP(7), false, NULL},
	{"p2p responder receiving another RTR form", V_P2P_RSP_RD, 0, b_p2p_wrong_rtr_form, M_TERM,
	 IW_EMPA_RTR, LLP(7), false, NULL},
	{"p2p responder: after the RTR the next send MSN is 2", V_P2P_RSP, 0, b_p2p_rtr_then_bad,
	 M_TERM, IW_EDDP_U_MSN_RANGE, DDPU(3), false, NULL},
	/* The peer's Terminate (RFC 5040 §5.4) */
	{"terminate (remote protection) received in the middle of a send", V_CRC, 0,
	 b_peer_term_mid_message, M_PEER_TERM, IW_ERDMAP_TERMINATED, PROT(0), false, NULL},
	{"terminate (remote operation) received in the middle of a send", V_MARKERS, 0,
	 b_peer_term_mid_message, M_PEER_TERM, IW_ERDMAP_TERMINATED, OPER(6), false, NULL},
	{"terminate (DDP) received in the middle of a send", V_NOCRC, 0, b_peer_term_mid_message,
	 M_PEER_TERM, IW_ERDMAP_TERMINATED, DDPT(1), false, NULL},
	{"terminate (LLP) received in the middle of a send", V_CRC, 0, b_peer_term_mid_message,
	 M_PEER_TERM, IW_ERDMAP_TERMINATED, LLP(2), false, NULL},
	{"terminate in Linux siw's layout is read as the defined code", V_CRC, 0,
	 b_peer_term_siw_layout, M_PEER_TERM, IW_ERDMAP_TERMINATED, DDPU(1), false, NULL},
	/* Zero-length operations in every role: legal where the RFCs skip the checks */
	{"zero-length write to an invalid STag is fine", V_CRC, 0, b_zero_write_invalid, M_NO_ERROR,
	 IW_OK, NOCODE, false, NULL},
	{"zero-length read request skips the source check", V_CRC, 0, b_zero_rreq_invalid,
	 M_NO_ERROR, IW_OK, NOCODE, false, chk_zero_rreq_answered},
	{"zero-length read response segment is fine", V_CRC, 0, b_zero_read_resp, M_NO_ERROR, IW_OK,
	 NOCODE, false, NULL},
	/* RFC 7306 (atomics, Immediate Data) on a QP that enabled it */
	{"atomic request to an unknown STag", V_7306, 0, b_areq_unknown, M_TERM,
	 IW_ERDMAP_INVALID_STAG, PROT(0), false, NULL},
	{"atomic request without remote-atomic right", V_7306, 0, b_areq_no_right, M_TERM,
	 IW_ERDMAP_ACCESS, PROT(2), false, NULL},
	{"atomic request to an STag of another PD", V_7306, 0, b_areq_wrong_pd, M_TERM,
	 IW_ERDMAP_STREAM, PROT(3), false, NULL},
	{"atomic request beyond the bounds", V_7306, 0, b_areq_beyond, M_TERM, IW_ERDMAP_BOUNDS,
	 PROT(1), false, NULL},
	{"atomic request to an unaligned target", V_7306, 0, b_areq_unaligned, M_TERM,
	 IW_ERDMAP_CATASTROPHIC_STREAM, OPER(7), false, NULL},
	{"atomic request with a reserved AOpCode", V_7306, 0, b_areq_bad_aop, M_TERM,
	 IW_ERDMAP_OP_UNSPEC, OPER(0xFF), false, NULL},
	{"atomic request header cut short", V_7306, 0, b_areq_short, M_TERM, IW_ERDMAP_OP_UNSPEC,
	 OPER(0xFF), false, NULL},
	{"atomic requests beyond IRD", V_7306, 0, b_areq_beyond_ird, M_TERM, IW_EDDP_U_NO_BUFFER,
	 DDPU(2), false, NULL},
	{"atomic response while a read is outstanding", V_7306, 0, b_aresp_none_out, M_TERM,
	 IW_ERDMAP_OPCODE, OPER(6), false, NULL},
	{"atomic response with nothing outstanding", V_7306, F_NO_READ, b_aresp_none_out, M_TERM,
	 IW_ERDMAP_OPCODE, OPER(6), false, NULL},
	{"immediate data without a posted receive", V_7306, F_NO_RECV, b_imm_no_recv, M_TERM,
	 IW_EDDP_U_NO_BUFFER, DDPU(2), false, NULL},
	{"immediate data with payload after its 8 octets", V_7306, 0, b_imm_long, M_TERM,
	 IW_ERDMAP_OP_UNSPEC, OPER(0xFF), false, NULL},
	{"immediate data of 4 octets", V_7306, 0, b_imm_short, M_TERM, IW_ERDMAP_OP_UNSPEC,
	 OPER(0xFF), false, NULL},
	{"immediate data without the L bit", V_7306, 0, b_imm_not_last, M_TERM, IW_EDDP_U_MO,
	 DDPU(4), false, NULL},
	{"untagged queue number 4 with RFC 7306", V_7306, 0, b_qn_4, M_TERM, IW_EDDP_U_QN, DDPU(1),
	 false, NULL},
	{"fetch-and-add is performed once and answered", V_7306, 0, b_areq_good, M_NO_ERROR, IW_OK,
	 NOCODE, false, k_areq_good},
	{"immediate data completes the first receive", V_7306, 0, b_imm_good, M_NO_ERROR, IW_OK,
	 NOCODE, false, k_imm_good},
};

/* ---------------------------------------------------------------------- */
/* Set-up                                                                  */
/* ---------------------------------------------------------------------- */

static uint32_t reg(struct ctx *c, uint32_t pd, void *p, size_t len, uint32_t access)
{
	uint32_t stag = 0;

	ck_assert_int_eq(ddp_stag_reg(c->t, pd, p, addr(p), len, access, &stag), IW_OK);
	ck_assert_int_lt(c->nregs, (int)IW_ARRAY_SIZE(c->regs));
	c->regs[c->nregs++] = stag;
	return stag;
}

static void post_recv(struct ctx *c, uint64_t id, uint8_t *p)
{
	struct rdmap_recv_wr wr = {.wr_id = id, .num_sge = 2};

	/* Two SGEs: the scatter path is exercised too. */
	wr.sg[0] = (struct rdmap_sge){.addr = addr(p), .length = RECV_LEN / 2, .lkey = c->l_stag};
	wr.sg[1] = (struct rdmap_sge){
		.addr = addr(p + RECV_LEN / 2), .length = RECV_LEN / 2, .lkey = c->l_stag};
	ck_assert_int_eq(rdmap_qp_post_recv(c->qp, &wr), IW_OK);
	c->wr_ids[c->nwr++] = id;
}

static void victim_create(struct ctx *c)
{
	const struct bad_row *r = c->row;
	struct b2b_opts o;
	struct mpa_rx_config rc;
	bool rsp = r->v == V_P2P_RSP || r->v == V_P2P_RSP_RD;

	b2b_opts_default(&o);
	o.crc = r->v != V_NOCRC && r->v != V_MARKERS_RX;
	o.markers_ab = r->v == V_MARKERS;
	o.markers_ba = r->v == V_MARKERS || r->v == V_MARKERS_RX;
	o.p2p = r->v == V_P2P_INI || rsp;
	o.rtr = r->v == V_P2P_RSP_RD ? MPA_RTR_READ : MPA_RTR_SEND;
	o.ird[0] = o.ird[1] = IRD_SMALL;
	o.ord[0] = o.ord[1] = IRD_SMALL;
	o.rfc7306[0] = o.rfc7306[1] = r->v == V_7306;
	c->b = b2b_create(&o);
	c->vs = rsp ? B2B_B : B2B_A;
	c->qp = c->b->qp[c->vs];
	c->t = c->b->stags[c->vs];
	c->vp = c->b->params[c->vs];
	c->pd = c->b->cfg[c->vs].pd;
	c->stag_count0 = ddp_stag_count(c->t);
	if (o.p2p)
		ck_assert_uint_eq(c->vp.rtr, o.rtr);
	ck_assert_uint_eq(c->vp.ird, IRD_SMALL);

	mpa_tx_init(&c->itx, c->vp.crc, c->vp.markers_rx, 0);
	mpa_rx_config_default(&rc);
	rc.crc = c->vp.crc;
	rc.markers = c->vp.markers_tx;
	rc.hdr_min = 2;
	rc.max_ulpdu = MPA_ULPDU_MAX;
	ck_assert_int_eq(mpa_rx_init(&c->orx, &rc, &out_ops, c), IW_OK);

	c->w_stag =
		reg(c, c->pd, c->wbuf, BUF_LEN, DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE);
	c->r_stag = reg(c, c->pd, c->rbuf, BUF_LEN, DDP_ACCESS_REMOTE_READ);
	c->n_stag = reg(c, c->pd, c->nbuf, BUF_LEN, DDP_ACCESS_LOCAL_WRITE);
	c->p_stag = reg(c, OTHER_PD, c->pbuf, BUF_LEN,
			DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE |
				DDP_ACCESS_REMOTE_INVALIDATE);
	c->i_stag = reg(c, c->pd, c->ibuf, BUF_LEN,
			DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE |
				DDP_ACCESS_REMOTE_INVALIDATE);
	c->ni_stag =
		reg(c, c->pd, c->nibuf, BUF_LEN, DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_WRITE);
	c->a_stag = reg(c, c->pd, c->abuf, sizeof(c->abuf),
			DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_ATOMIC);
	/* One local registration covering the receive, sink and source buffers. */
	c->l_stag = reg(c, c->pd, c, sizeof(*c), DDP_ACCESS_LOCAL_WRITE);
	fill_payload(c->src, SEND_LEN);
}

/* Posted receives, a Read on the wire, a Send not yet started. */
static void victim_load(struct ctx *c)
{
	const struct bad_row *r = c->row;
	bool rsp = c->vs == B2B_B;

	if (!rsp) {
		drain(c); /* p2p initiator: its RTR */
		R_EQ(c, c->nout, c->vp.p2p ? 1 : 0);
	}
	if (!(r->flags & F_NO_RECV)) {
		post_recv(c, WR_RECV0, c->recv[0]);
		post_recv(c, WR_RECV1, c->recv[1]);
	}
	if (!(r->flags & F_NO_READ)) {
		struct rdmap_send_wr wr = {.wr_id = WR_READ,
					   .opcode = RDMAP_WR_READ,
					   .flags = RDMAP_WR_SIGNALED,
					   .num_sge = 1,
					   .remote_stag = PEER_STAG,
					   .remote_to = PEER_TO};
		int before = c->nout;

		wr.sg[0] = (struct rdmap_sge){
			.addr = addr(c->sink), .length = READ_LEN, .lkey = c->l_stag};
		ck_assert_int_eq(rdmap_qp_post_send(c->qp, &wr), IW_OK);
		c->wr_ids[c->nwr++] = WR_READ;
		if (!rsp) {
			struct ddp_hdr h;

			drain(c);
			R_EQ(c, c->nout, before + 1);
			out_ddp(c, before, &h);
			R_EQ(c, rdmap_ctrl_opcode(h.rsvdulp), RDMAP_OP_READ_REQ);
			R_EQ(c, c->out[before].len, DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN);
			rdmap_read_req_decode(c->out[before].b + DDP_UNTAGGED_HDR_LEN, &c->rr);
			R_EQ(c, c->rr.size, READ_LEN);
			R_EQ(c, c->rr.src_stag, PEER_STAG);
			c->read_out = true;
		}
	}
	{
		struct rdmap_send_wr wr = {.wr_id = WR_SEND,
					   .opcode = RDMAP_WR_SEND,
					   .flags = RDMAP_WR_SIGNALED,
					   .num_sge = 1};

		wr.sg[0] = (struct rdmap_sge){
			.addr = addr(c->src), .length = SEND_LEN, .lkey = c->l_stag};
		ck_assert_int_eq(rdmap_qp_post_send(c->qp, &wr), IW_OK);
		c->wr_ids[c->nwr++] = WR_SEND;
	}
	/* From here on only what the injected input causes is of interest. */
	c->nout = 0;
}

/* ---------------------------------------------------------------------- */
/* Verdicts                                                                */
/* ---------------------------------------------------------------------- */

static void expect_term_equal(struct ctx *c, const struct rdmap_term *got,
			      const struct rdmap_term *exp, const char *what)
{
	const char *n = c->row->name;

	R_ASSERT(got->code.layer == exp->code.layer && got->code.etype == exp->code.etype &&
			 got->code.ecode == exp->code.ecode,
		 "%s: %s Terminate %u/%u/0x%02x, expected %u/%u/0x%02x", n, what, got->code.layer,
		 got->code.etype, got->code.ecode, exp->code.layer, exp->code.etype,
		 exp->code.ecode);
	R_ASSERT(got->m == exp->m && got->d == exp->d && got->r == exp->r,
		 "%s: %s Terminate M/D/R %d%d%d, expected %d%d%d", n, what, got->m, got->d, got->r,
		 exp->m, exp->d, exp->r);
	if (exp->m)
		R_ASSERT(got->ddp_seg_len == exp->ddp_seg_len,
			 "%s: %s Terminate DDP segment length %u, expected %u", n, what,
			 got->ddp_seg_len, exp->ddp_seg_len);
	if (exp->d) {
		R_EQ(c, got->ddp_hdr_len, exp->ddp_hdr_len);
		R_ASSERT(memcmp(got->ddp_hdr, exp->ddp_hdr, exp->ddp_hdr_len) == 0,
			 "%s: %s Terminate copies another DDP header", n, what);
	}
	if (exp->r)
		R_ASSERT(memcmp(got->rreq, exp->rreq, RDMAP_READ_REQ_LEN) == 0,
			 "%s: %s Terminate copies another Read Request header", n, what);
}

/* The Terminate the row expects, built independently of the engine. */
static void expected_term(struct ctx *c, struct rdmap_term *exp)
{
	const struct bad_row *r = c->row;
	struct iw_term_code mapped;

	/* The table agrees with the error plan. */
	iw_err_term(r->err, &mapped);
	R_ASSERT(mapped.layer == r->code.layer && mapped.etype == r->code.etype &&
			 mapped.ecode == r->code.ecode,
		 "%s: table triple disagrees with iw_err_term(%s)", r->name, rdmap_errname(r->err));
	ck_assert(c->have_errant);
	rdmap_term_fill(exp, &r->code, c->errhdr_ok ? c->errhdr : NULL, c->errhdr_len,
			c->errseg_len, r->rreq ? c->errrreq : NULL);
	R_EQ(c, exp->r, r->rreq);
}

static void check_victim_terminate(struct ctx *c)
{
	struct rdmap_term exp, got;
	const struct rdmap_term *sent = rdmap_qp_term_sent(c->qp);
	const struct out_pdu *o;
	struct ddp_hdr h;
	ssize_t n;

	expected_term(c, &exp);
	R_ASSERT(c->nout > 0, "%s: the victim sent nothing", c->row->name);
	R_EQ(c, out_count_terms(c), 1);
	o = &c->out[c->nout - 1];
	out_ddp(c, c->nout - 1, &h);
	R_ASSERT(!h.tagged && h.last, "%s: Terminate is not an untagged last segment",
		 c->row->name);
	R_EQ(c, rdmap_ctrl_opcode(h.rsvdulp), RDMAP_OP_TERMINATE);
	R_EQ(c, rdmap_ctrl_rv(h.rsvdulp), RDMAP_VERSION);
	R_EQ(c, h.qn, DDP_QN_TERMINATE);
	R_EQ(c, h.msn, DDP_MSN_FIRST);
	R_EQ(c, h.mo, 0);
	R_EQ(c, h.rsvdulp2, 0);
	R_EQ(c, o->len, DDP_UNTAGGED_HDR_LEN + rdmap_term_len(&exp));
	n = rdmap_term_decode(o->b + DDP_UNTAGGED_HDR_LEN, o->len - DDP_UNTAGGED_HDR_LEN, &got);
	R_EQ(c, n, (ssize_t)(o->len - DDP_UNTAGGED_HDR_LEN));
	expect_term_equal(c, &got, &exp, "wire");
	R_ASSERT(sent != NULL, "%s: rdmap_qp_term_sent() is NULL", c->row->name);
	expect_term_equal(c, sent, &exp, "term_sent");
	ck_assert_ptr_null(rdmap_qp_term_received(c->qp));
}

/* Every WR completes exactly once; returns the status of wr_id (-1 if absent). */
static int check_completions(struct ctx *c, uint64_t status_of)
{
	struct rdmap_wc wc[16];
	int n = rdmap_qp_poll(c->qp, wc, 16), status = -1;
	bool seen[8] = {false};

	R_EQ(c, n, c->nwr);
	for (int i = 0; i < n; i++) {
		int k;

		for (k = 0; k < c->nwr; k++)
			if (c->wr_ids[k] == wc[i].wr_id)
				break;
		R_ASSERT(k < c->nwr, "%s: completion for unknown wr_id %llu", c->row->name,
			 (unsigned long long)wc[i].wr_id);
		R_ASSERT(!seen[k], "%s: wr_id %llu completed twice", c->row->name,
			 (unsigned long long)wc[i].wr_id);
		seen[k] = true;
		if (wc[i].wr_id == status_of)
			status = (int)wc[i].status;
		if (c->row->mode == M_PEER_TERM)
			continue;
		R_ASSERT(wc[i].status == RDMAP_WC_SUCCESS || wc[i].status == RDMAP_WC_WR_FLUSH_ERR,
			 "%s: wr_id %llu status %d", c->row->name, (unsigned long long)wc[i].wr_id,
			 wc[i].status);
		if (wc[i].status == RDMAP_WC_WR_FLUSH_ERR)
			R_ASSERT(wc[i].err < 0, "%s: flushed wr_id %llu without a cause",
				 c->row->name, (unsigned long long)wc[i].wr_id);
	}
	R_EQ(c, rdmap_qp_poll(c->qp, wc, 16), 0);
	return status;
}

/* Work failed by the peer's Terminate: the status its triple maps to. */
static int peer_term_status(const struct iw_term_code *code)
{
	/* tagged buffer errors (RFC 5041 §7.2, type 1, codes 0-3) are protection errors */
	if (code->layer == IW_TERM_LAYER_DDP && code->etype == 1 && code->ecode <= 3)
		return RDMAP_WC_REM_ACCESS_ERR;
	if (code->layer != IW_TERM_LAYER_RDMAP)
		return RDMAP_WC_REM_INV_REQ_ERR;
	return code->etype == 1 ? RDMAP_WC_REM_ACCESS_ERR : RDMAP_WC_REM_OP_ERR;
}

static void finish(struct ctx *c)
{
	R_EQ(c, ddp_stag_count(c->t), c->stag_count0 + (uint32_t)c->nregs);
	for (int i = 0; i < c->nregs; i++)
		ck_assert_int_eq(ddp_stag_dereg(c->t, c->regs[i]), IW_OK);
	R_EQ(c, ddp_stag_count(c->t), c->stag_count0);
	b2b_destroy(c->b);
	free(c);
}

START_TEST(each_bad_input_gets_its_exact_terminate_and_every_wr_completes)
{
	struct ctx *c = calloc(1, sizeof(*c));
	const struct bad_row *r = &rows[_i];
	ssize_t ret;
	uint8_t more[4] = {0};

	ck_assert_ptr_nonnull(c);
	c->row = r;
	victim_create(c);
	victim_load(c);
	r->build(c);
	if (r->flags & F_LAST_OCTET) {
		ret = rdmap_qp_read_stream(c->qp, c->stream, c->slen - 1);
		R_ASSERT(ret == (ssize_t)c->slen - 1 && rdmap_qp_state(c->qp) == RDMAP_QP_RTS,
			 "%s: judged before the CRC arrived (%zd, %s)", r->name, ret,
			 rdmap_errname(rdmap_qp_error(c->qp)));
		ret = rdmap_qp_read_stream(c->qp, c->stream + c->slen - 1, 1);
	} else {
		ret = rdmap_qp_read_stream(c->qp, c->stream, c->slen);
	}

	switch (r->mode) {
	case M_TERM:
		R_ASSERT(ret < 0, "%s: read_stream accepted the input (%zd)", r->name, ret);
		R_ASSERT(rdmap_qp_error(c->qp) == r->err, "%s: error %s, expected %s", r->name,
			 rdmap_errname(rdmap_qp_error(c->qp)), rdmap_errname(r->err));
		R_ASSERT(rdmap_qp_state(c->qp) == RDMAP_QP_TERMINATE ||
				 rdmap_qp_state(c->qp) == RDMAP_QP_ERROR,
			 "%s: state %s after the error", r->name,
			 rdmap_qp_state_name(rdmap_qp_state(c->qp)));
		drain(c);
		check_victim_terminate(c);
		R_EQ(c, rdmap_qp_state(c->qp), RDMAP_QP_ERROR);
		break;
	case M_PEER_TERM: {
		const struct rdmap_term *got = rdmap_qp_term_received(c->qp);

		R_EQ(c, rdmap_qp_error(c->qp), IW_ERDMAP_TERMINATED);
		R_EQ(c, rdmap_qp_state(c->qp), RDMAP_QP_ERROR);
		R_ASSERT(got != NULL, "%s: rdmap_qp_term_received() is NULL", r->name);
		expect_term_equal(c, got, &c->peer_term, "received");
		drain(c);
		R_EQ(c, out_count_terms(c), 0);
		ck_assert_ptr_null(rdmap_qp_term_sent(c->qp));
		break;
	}
	case M_NO_ERROR:
		R_EQ(c, ret, (ssize_t)c->slen);
		R_EQ(c, rdmap_qp_error(c->qp), IW_OK);
		R_EQ(c, rdmap_qp_state(c->qp), RDMAP_QP_RTS);
		drain(c);
		R_EQ(c, out_count_terms(c), 0);
		ck_assert_ptr_null(rdmap_qp_term_sent(c->qp));
		if (r->check)
			r->check(c);
		rdmap_qp_flush(c->qp);
		R_EQ(c, rdmap_qp_state(c->qp), RDMAP_QP_ERROR);
		break;
	}
	/* Dead means dead: no more input accepted, nothing more sent, no new work. */
	if (r->mode != M_NO_ERROR)
		R_ASSERT(rdmap_qp_read_stream(c->qp, more, sizeof(more)) < 0,
			 "%s: input accepted after the failure", r->name);
	c->nout = 0;
	drain(c);
	R_EQ(c, c->nout, 0);
	{
		struct rdmap_recv_wr wr = {.wr_id = 999, .num_sge = 1};

		wr.sg[0] = (struct rdmap_sge){
			.addr = addr(c->recv[0]), .length = 8, .lkey = c->l_stag};
		R_EQ(c, rdmap_qp_post_recv(c->qp, &wr), IW_ESTATE);
	}
	{
		int st = check_completions(c, WR_READ);

		if (r->mode == M_PEER_TERM)
			R_EQ(c, st, peer_term_status(&r->code));
		else if (c->read_out)
			R_EQ(c, st, RDMAP_WC_WR_FLUSH_ERR);
	}
	finish(c);
}
END_TEST

static Suite *rdmap_bad_suite(void)
{
	Suite *s = suite_create("rdmap_bad");
	TCase *tc = tcase_create("catalogue");

	tcase_add_loop_test(tc, each_bad_input_gets_its_exact_terminate_and_every_wr_completes, 0,
			    (int)IW_ARRAY_SIZE(rows));
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(rdmap_bad_suite)
