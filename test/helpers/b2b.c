/* SPDX-License-Identifier: MIT */
/*
 * b2b.c - two stacks back to back in memory (see b2b.h).
 *
 * Startup runs the real MPA Request/Reply exchange (RFC 5044 §7.1, RFC 6581)
 * so the QPs are created from negotiated parameters, not hand-made ones.  The
 * pump then plays TCP: octets leave a QP through tx_iov/tx_advance and enter
 * its peer through read_stream, in pieces chosen by the split policy, which
 * must never change the outcome (every receive machine is split-invariant).
 * The sniffer is an independent mpa_rx per direction: it re-frames the stream
 * to count DDP segments per RDMAP opcode (RFC 5040 §4.1) and follows the Read
 * Requests outstanding on the wire, the number ORD bounds (RFC 5040 §6.4).
 */
#include "b2b.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define B2B_IOV_MAX	 64
#define B2B_SETUP_ROUNDS 64

struct b2b_sniff {
	struct b2b *b;
	int from;
	struct mpa_rx rx;
	size_t ulen;
	uint8_t ulpdu[MPA_ULPDU_MAX + 1];
};

void b2b_opts_default(struct b2b_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rev = MPA_REV2;
	o->crc = true;
	o->rtr = MPA_RTR_ALL;
	o->ird[0] = o->ird[1] = 16;
	o->ord[0] = o->ord[1] = 16;
	o->emss = 1460;
	o->stag_max = 1024;
	o->pd[0] = 1;
	o->pd[1] = 2;
	o->split = B2B_SPLIT_WHOLE;
	o->direct = getenv("IW_B2B_DIRECT") && !strcmp(getenv("IW_B2B_DIRECT"), "1");
	o->direct_min = o->direct ? 1 : 0;
	o->max_chunk = 3000;
	o->max_steps = 1u << 26;
}

/* ---------------------------------------------------------------------- */
/* Sniffer                                                                  */
/* ---------------------------------------------------------------------- */

static int sniff_hdr(void *user, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	struct b2b_sniff *s = user;

	(void)ulpdu_len;
	memcpy(s->ulpdu, hdr, have);
	s->ulen = have;
	return (int)have;
}

static int sniff_payload(void *user, size_t off, const uint8_t *p, size_t n)
{
	struct b2b_sniff *s = user;

	if (off + n > sizeof(s->ulpdu))
		return IW_EINVAL;
	memcpy(s->ulpdu + off, p, n);
	s->ulen = off + n;
	return 0;
}

static int sniff_done(void *user)
{
	struct b2b_sniff *s = user;
	struct b2b *b = s->b;
	struct ddp_hdr h;
	uint8_t op;

	if (ddp_hdr_decode(s->ulpdu, s->ulen, &h) < 0)
		return IW_EINVAL;
	op = rdmap_ctrl_opcode(h.rsvdulp);
	b->segs[s->from][op]++;
	if (h.last)
		b->msgs[s->from][op]++;
	/* A Read is outstanding from its Request until the last Response segment. */
	if (op == RDMAP_OP_READ_REQ) {
		if (++b->reads_out[s->from] > b->reads_out_max[s->from])
			b->reads_out_max[s->from] = b->reads_out[s->from];
	} else if (op == RDMAP_OP_READ_RESP && h.last) {
		b->reads_out[b2b_peer(s->from)]--;
	}
	if (b->seg_hook)
		b->seg_hook(b, s->from, &h, op, s->ulpdu, s->ulen, b->hook_arg);
	return 0;
}

static const struct mpa_rx_ops sniff_ops = {
	.ulpdu_header = sniff_hdr,
	.ulpdu_payload = sniff_payload,
	.fpdu_done = sniff_done,
};

static void sniff_feed(struct b2b *b, int from, const uint8_t *buf, size_t len)
{
	ssize_t r;

	if (b->sniff_err[from])
		return;
	r = mpa_rx_read_stream(&b->sniff[from]->rx, buf, len);
	if (r < 0)
		b->sniff_err[from] = (int)r;
}

/* ---------------------------------------------------------------------- */
/* Setup                                                                    */
/* ---------------------------------------------------------------------- */

static void mpa_cfg_for(const struct b2b_opts *o, int side, struct mpa_config *c)
{
	mpa_config_default(c);
	c->rev = o->rev;
	c->crc = o->crc;
	/* M says what this side wants to receive with Markers. */
	c->markers = side == B2B_A ? o->markers_ba : o->markers_ab;
	c->accept_markers = true;
	c->p2p = o->p2p;
	c->rtr = o->rtr;
	c->ird = o->ird[side];
	c->ord = o->ord[side];
}

static void b2b_negotiate(struct b2b *b)
{
	struct mpa_setup *s[2];
	struct mpa_config c;
	int round;

	for (int i = 0; i < 2; i++) {
		s[i] = calloc(1, sizeof(*s[i]));
		ck_assert_ptr_nonnull(s[i]);
		mpa_cfg_for(&b->opts, i, &c);
		ck_assert_int_eq(mpa_setup_init(s[i], i == B2B_A ? MPA_INITIATOR : MPA_RESPONDER,
						&c, b->now_ns),
				 IW_OK);
	}
	ck_assert_int_eq(mpa_setup_connect(s[B2B_A], NULL, 0), IW_OK);
	for (round = 0; round < B2B_SETUP_ROUNDS; round++) {
		if (s[0]->state == MPA_SETUP_ESTABLISHED && s[1]->state == MPA_SETUP_ESTABLISHED)
			break;
		if (s[B2B_B]->state == MPA_SETUP_REQUEST_RECEIVED)
			ck_assert_int_eq(mpa_setup_accept(s[B2B_B], NULL, 0), IW_OK);
		for (int i = 0; i < 2; i++) {
			const uint8_t *p;
			size_t n = mpa_setup_tx_pending(s[i], &p);
			ssize_t r;

			if (!n)
				continue;
			r = mpa_setup_read_stream(s[b2b_peer(i)], p, n, b->now_ns);
			ck_assert_msg(r == (ssize_t)n, "mpa setup side %d consumed %zd of %zu", i,
				      r, n);
			mpa_setup_tx_advance(s[i], n);
		}
	}
	ck_assert_msg(round < B2B_SETUP_ROUNDS, "MPA setup did not finish: %s / %s",
		      mpa_setup_state_name(s[0]->state), mpa_setup_state_name(s[1]->state));
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(mpa_setup_params(s[i], &b->params[i]), IW_OK);
		free(s[i]);
	}
}

struct b2b *b2b_create(const struct b2b_opts *o)
{
	struct b2b *b = calloc(1, sizeof(*b));

	ck_assert_ptr_nonnull(b);
	b->opts = *o;
	if (!b->opts.seed)
		b->opts.seed = th_seed_from_env();
	th_rng_init(&b->rng, b->opts.seed);
	b->now_ns = 1000000000ull;
	b2b_negotiate(b);

	b->stags[0] = b->opts.ext_stags[0]
			      ? b->opts.ext_stags[0]
			      : ddp_stag_table_create(b->opts.stag_max, th_rng_next(&b->rng));
	ck_assert_ptr_nonnull(b->stags[0]);
	if (b->opts.ext_stags[1]) {
		b->stags[1] = b->opts.ext_stags[1];
	} else if (b->opts.shared_stags) {
		b->stags[1] = b->stags[0];
	} else {
		b->stags[1] = ddp_stag_table_create(b->opts.stag_max, th_rng_next(&b->rng));
		ck_assert_ptr_nonnull(b->stags[1]);
	}

	for (int i = 0; i < 2; i++) {
		struct rdmap_qp_config *c = &b->cfg[i];
		struct b2b_sniff *sn;
		struct mpa_rx_config rc;

		rdmap_qp_config_default(c);
		c->stags = b->stags[i];
		c->pd = b->opts.pd[i];
		if (b->opts.sq_depth)
			c->sq_depth = b->opts.sq_depth;
		if (b->opts.rq_depth)
			c->rq_depth = b->opts.rq_depth;
		if (b->opts.max_msg)
			c->max_msg = b->opts.max_msg;
		c->rfc7306 = b->opts.rfc7306[i];
		c->srq = b->opts.srq[i];
		c->mulpdu = b->opts.mulpdu[i] ? b->opts.mulpdu[i]
					      : mpa_mulpdu(b->opts.emss, b->params[i].markers_tx);
		c->mpa = b->params[i];
		c->initiator = i == B2B_A;
		c->stream = (uint32_t)i + 1; /* distinct streams, even with shared_stags */
		c->rx_direct_min = b->opts.direct_min;

		sn = calloc(1, sizeof(*sn));
		ck_assert_ptr_nonnull(sn);
		sn->b = b;
		sn->from = i;
		mpa_rx_config_default(&rc);
		rc.crc = b->params[i].crc;
		rc.markers = b->params[i].markers_tx;
		rc.pos = 0;
		rc.hdr_min = DDP_UNTAGGED_HDR_LEN;
		rc.max_ulpdu = MPA_ULPDU_MAX;
		ck_assert_int_eq(mpa_rx_init(&sn->rx, &rc, &sniff_ops, sn), IW_OK);
		b->sniff[i] = sn;
	}
	for (int i = 0; i < 2; i++) {
		b->stag_count0[i] = ddp_stag_count(b->stags[i]);
		ck_assert_int_eq(rdmap_qp_create(&b->cfg[i], &b->qp[i]), IW_OK);
		ck_assert_int_eq(rdmap_qp_state(b->qp[i]), RDMAP_QP_RTS);
	}
	return b;
}

void b2b_destroy(struct b2b *b)
{
	if (!b)
		return;
	for (int i = 0; i < 2; i++) {
		rdmap_qp_destroy(b->qp[i]);
		free(b->sniff[i]);
	}
	if (b->stags[1] != b->stags[0] && !b->opts.ext_stags[1])
		ddp_stag_table_destroy(b->stags[1]);
	if (!b->opts.ext_stags[0])
		ddp_stag_table_destroy(b->stags[0]);
	free(b->scratch);
	free(b);
}

/* ---------------------------------------------------------------------- */
/* Pump                                                                     */
/* ---------------------------------------------------------------------- */

static uint8_t *scratch(struct b2b *b, size_t n)
{
	if (n > b->scratch_cap) {
		free(b->scratch);
		b->scratch = malloc(n);
		ck_assert_ptr_nonnull(b->scratch);
		b->scratch_cap = n;
	}
	return b->scratch;
}

/*
 * The octets a socket would hold, taken the way the verbs' receiver reads them:
 * each "read" either lands in the place the QP names (a memcpy standing in for
 * recv() into the target) or goes through read_stream, at most as far as the
 * QP bounds it.
 */
#define B2B_DIRECT_BUF 65536u

static void deliver_direct(struct b2b *b, int to, const uint8_t *buf, size_t n)
{
	struct rdmap_qp *qp = b->qp[to];
	size_t off = 0, len, k;
	uint8_t *t;
	ssize_t r;

	while (off < n && !b->rx_err[to]) {
		len = 0;
		t = rdmap_qp_rx_target(qp, &len);
		if (t) {
			ck_assert_uint_ge(len, 1); /* cfg.rx_direct_min */
			k = len < n - off ? len : n - off;
			memcpy(t, buf + off, k);
			r = rdmap_qp_rx_placed(qp, k);
			ck_assert_msg(r == IW_OK, "rx_placed: %zd", r);
			b->direct_octets[to] += k;
			off += k;
			continue;
		}
		/* a receive buffer of B2B_DIRECT_BUF octets, or less if bounded */
		k = n - off < B2B_DIRECT_BUF ? n - off : B2B_DIRECT_BUF;
		if (len && len < k)
			k = len;
		r = rdmap_qp_read_stream(qp, buf + off, k);
		if (r < 0) {
			b->rx_err[to] = (int)r;
			return;
		}
		ck_assert_msg((size_t)r == k, "read_stream consumed %zd of %zu", r, k);
		off += k;
	}
}

static void deliver(struct b2b *b, int to, const uint8_t *buf, size_t n)
{
	ssize_t r;

	if (b->rx_err[to])
		return; /* a failed QP reads nothing more: its TCP side discards */
	if (b->opts.direct) {
		deliver_direct(b, to, buf, n);
		return;
	}
	r = rdmap_qp_read_stream(b->qp[to], buf, n);
	if (r < 0)
		b->rx_err[to] = (int)r;
	else
		ck_assert_msg((size_t)r == n, "read_stream consumed %zd of %zu", r, n);
}

/* Move one chunk out of `from`.  Returns the octets moved. */
static size_t transfer(struct b2b *b, int from)
{
	struct iovec iov[B2B_IOV_MAX];
	size_t avail = 0, n, off = 0;
	int cnt;
	uint8_t *buf;

	cnt = rdmap_qp_tx_iov(b->qp[from], iov, B2B_IOV_MAX, &avail);
	ck_assert_int_ge(cnt, 0);
	if (cnt == 0 || avail == 0)
		return 0;
	switch (b->opts.split) {
	case B2B_SPLIT_OCTET:
		n = 1;
		break;
	case B2B_SPLIT_RANDOM:
		n = th_rng_range(&b->rng, 1, avail < b->opts.max_chunk ? avail : b->opts.max_chunk);
		break;
	default:
		n = avail;
		break;
	}
	buf = scratch(b, n);
	for (int i = 0; i < cnt && off < n; i++) {
		size_t k = iov[i].iov_len < n - off ? iov[i].iov_len : n - off;

		memcpy(buf + off, iov[i].iov_base, k);
		off += k;
	}
	ck_assert_uint_eq(off, n);
	rdmap_qp_tx_advance(b->qp[from], n);
	b->bytes[from] += n;
	sniff_feed(b, from, buf, n);
	if (b->wire_hook)
		b->wire_hook(b, from, buf, n, b->hook_arg);
	if (b->opts.split == B2B_SPLIT_RANDOM) {
		/* TCP may hand the receiver any split of what was sent. */
		for (off = 0; off < n;) {
			size_t k = th_rng_range(&b->rng, 1, n - off);

			deliver(b, b2b_peer(from), buf + off, k);
			off += k;
		}
	} else {
		deliver(b, b2b_peer(from), buf, n);
	}
	return n;
}

size_t b2b_step(struct b2b *b)
{
	size_t n = 0;
	int first = b->opts.split == B2B_SPLIT_RANDOM ? (int)(th_rng_next(&b->rng) & 1) : 0;

	n += transfer(b, first);
	n += transfer(b, b2b_peer(first));
	return n;
}

uint64_t b2b_pump(struct b2b *b)
{
	uint64_t total = 0, steps;

	for (steps = 0; steps < b->opts.max_steps; steps++) {
		size_t n = b2b_step(b);

		if (!n)
			return total;
		total += n;
	}
	ck_abort_msg("b2b_pump: not idle after %llu steps", (unsigned long long)steps);
	return total;
}

int b2b_wait(struct b2b *b, int side, struct rdmap_wc *wc)
{
	for (uint64_t steps = 0; steps < b->opts.max_steps; steps++) {
		if (rdmap_qp_poll(b->qp[side], wc, 1) == 1)
			return 1;
		if (!b2b_step(b))
			return rdmap_qp_poll(b->qp[side], wc, 1);
	}
	ck_abort_msg("b2b_wait: no completion after %llu steps",
		     (unsigned long long)b->opts.max_steps);
	return 0;
}

int b2b_drain(struct b2b *b, int side, struct rdmap_wc *wc, int n)
{
	b2b_pump(b);
	return rdmap_qp_poll(b->qp[side], wc, n);
}

ssize_t b2b_inject(struct b2b *b, int from, const void *ulpdu, size_t len)
{
	struct mpa_tx tx;
	struct mpa_fpdu *f = malloc(sizeof(*f));
	struct iovec v = {.iov_base = (void *)(uintptr_t)ulpdu, .iov_len = len};
	uint8_t *buf;
	size_t off = 0;
	ssize_t r;
	int to = b2b_peer(from);

	ck_assert_ptr_nonnull(f);
	b2b_pump(b);
	mpa_tx_init(&tx, b->params[from].crc, b->params[from].markers_tx, (uint32_t)b->bytes[from]);
	ck_assert_int_eq(mpa_tx_frame(&tx, &v, 1, f), IW_OK);
	buf = scratch(b, f->total);
	for (int i = f->first; i < f->first + f->iovcnt; i++) {
		memcpy(buf + off, f->iov[i].iov_base, f->iov[i].iov_len);
		off += f->iov[i].iov_len;
	}
	ck_assert_uint_eq(off, f->total);
	free(f);
	b->bytes[from] += off;
	sniff_feed(b, from, buf, off);
	r = rdmap_qp_read_stream(b->qp[to], buf, off);
	if (r < 0 && !b->rx_err[to])
		b->rx_err[to] = (int)r;
	return r;
}

/* ---------------------------------------------------------------------- */
/* Memory and work requests                                                 */
/* ---------------------------------------------------------------------- */

uint32_t b2b_reg(struct b2b *b, int side, void *addr, size_t len, uint32_t access)
{
	uint32_t stag = 0;
	int r = ddp_stag_reg(b->stags[side], b->opts.pd[side], addr, (uint64_t)(uintptr_t)addr, len,
			     access, &stag);

	ck_assert_msg(r == IW_OK, "ddp_stag_reg: %d", r);
	return stag;
}

void b2b_dereg(struct b2b *b, int side, uint32_t stag)
{
	ck_assert_int_eq(ddp_stag_dereg(b->stags[side], stag), IW_OK);
}

int b2b_post_recv(struct b2b *b, int side, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct rdmap_recv_wr wr = {
		.wr_id = wr_id,
		.num_sge = 1,
		.sg = {{.addr = (uint64_t)(uintptr_t)addr, .length = len, .lkey = lkey}},
	};

	return rdmap_qp_post_recv(b->qp[side], &wr);
}

int b2b_post_send(struct b2b *b, int side, enum rdmap_wr_opcode op, uint32_t flags, uint64_t wr_id,
		  void *addr, uint32_t len, uint32_t lkey)
{
	return b2b_post_rdma(b, side, op, flags, wr_id, addr, len, lkey, 0, 0);
}

int b2b_post_rdma(struct b2b *b, int side, enum rdmap_wr_opcode op, uint32_t flags, uint64_t wr_id,
		  void *addr, uint32_t len, uint32_t lkey, uint32_t rstag, uint64_t rto)
{
	struct rdmap_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.flags = flags,
		.num_sge = 1,
		.sg = {{.addr = (uint64_t)(uintptr_t)addr, .length = len, .lkey = lkey}},
		.remote_stag = rstag,
		.remote_to = rto,
	};

	if (op == RDMAP_WR_SEND_INV || op == RDMAP_WR_SEND_SE_INV)
		wr.invalidate_stag = rstag;
	return rdmap_qp_post_send(b->qp[side], &wr);
}

void b2b_check_clean(struct b2b *b, enum rdmap_qp_state state)
{
	struct rdmap_wc wc;

	for (int i = 0; i < 2; i++) {
		int n = rdmap_qp_poll(b->qp[i], &wc, 1);

		ck_assert_msg(n == 0, "side %d has an unread completion (wr_id %llu status %d)", i,
			      (unsigned long long)wc.wr_id, wc.status);
		ck_assert_uint_eq(ddp_stag_count(b->stags[i]), b->stag_count0[i]);
		ck_assert_msg(rdmap_qp_state(b->qp[i]) == state, "side %d in %s, want %s", i,
			      rdmap_qp_state_name(rdmap_qp_state(b->qp[i])),
			      rdmap_qp_state_name(state));
	}
}

uint32_t b2b_seg_payload(const struct b2b *b, int side, uint8_t opcode)
{
	const struct rdmap_opcode_info *oi = rdmap_opcode_info(opcode);

	return b->cfg[side].mulpdu - (uint32_t)ddp_hdr_len(oi->tagged) - oi->rdmap_hdr_len;
}
