/* SPDX-License-Identifier: MIT */
/*
 * rdmap_hdr.c - RDMAP headers after the DDP header: the RDMA Read Request
 * header (RFC 5040 §4.4, §5.2.1), the Terminate message (RFC 5040 §4.8,
 * §5.4, §7.1), and the RFC 7306 Atomic Request and Atomic Response headers
 * with the one function that performs an atomic operation.
 *
 * Theory of operation.  Both are host-order structs encoded and decoded with
 * explicit big-endian get/put, never by overlaying wire memory.
 *
 * Read Request: five fixed fields, 28 octets, no length to validate.
 *
 * Atomic Request (RFC 7306): 52 octets - a word whose low 4 bits are the
 * AOpCode (the 28 above them reserved: sent 0, ignored), the Request
 * Identifier, the Remote STag, the 64-bit Remote Tagged Offset, then four
 * 64-bit operands: Add-or-Swap Data, Add-or-Swap Mask, Compare Data, Compare
 * Mask.  Atomic Response: the Original Request Identifier and the 64-bit
 * Original Remote Data Value, 12 octets.  Every field is big-endian on the
 * wire; the target itself is a host-order 64-bit word in the responder's
 * memory (as the ibverbs atomics).
 *
 * Terminate: a 4-octet control word (Layer<<4 | EType, Error Code, M/D/R in
 * the top three bits of octet 2, the rest reserved: sent 0, ignored), then
 * optionally (D) the 2-octet DDP Segment Length and a copy of the errant DDP
 * header, then optionally (R) the errant 28-octet Read Request header.  The
 * length of the copied DDP header is not carried explicitly: it follows from
 * the copy's own T bit (14 tagged, 18 untagged), so both encode and decode
 * size it from ddp_hdr[0] - the struct's ddp_hdr_len is an output of decode
 * and fill, never trusted on encode.  All lengths used by decode come from
 * the D/R bits and that T bit and are checked against `len` before any copy.
 *
 * Which copies to include is RFC 5040 figure 10 (rdmap_term_fill): none for
 * a local catastrophic error or an LLP error; DDP header and segment length
 * (M and D together, as peers do in practice) for DDP errors and for RDMAP
 * remote protection / remote operation errors when the errant header is
 * known; the Read Request header only for remote protection errors, which
 * is where figure 10 asks for the RDMA header (remote operation errors carry
 * none).
 */
#include <string.h>

#include <iwarp/rdmap.h>

#include "iw_bytes.h"

/* Octet 2 of the Terminate control word; the low five bits are reserved. */
#define RDMAP_TERM_HDRCT_MASK (RDMAP_TERM_M | RDMAP_TERM_D | RDMAP_TERM_R)

/* Layer values defined by RFC 5040 §4.8 (0 RDMAP, 1 DDP, 2 LLP). */
#define RDMAP_TERM_LAYER_MAX IW_TERM_LAYER_LLP

void rdmap_read_req_encode(const struct rdmap_read_req *r, uint8_t buf[RDMAP_READ_REQ_LEN])
{
	iw_put_be32(buf + 0, r->sink_stag);
	iw_put_be64(buf + 4, r->sink_to);
	iw_put_be32(buf + 12, r->size);
	iw_put_be32(buf + 16, r->src_stag);
	iw_put_be64(buf + 20, r->src_to);
}

void rdmap_read_req_decode(const uint8_t buf[RDMAP_READ_REQ_LEN], struct rdmap_read_req *r)
{
	r->sink_stag = iw_get_be32(buf + 0);
	r->sink_to = iw_get_be64(buf + 4);
	r->size = iw_get_be32(buf + 12);
	r->src_stag = iw_get_be32(buf + 16);
	r->src_to = iw_get_be64(buf + 20);
}

void rdmap_atomic_req_encode(const struct rdmap_atomic_req *a, uint8_t buf[RDMAP_ATOMIC_REQ_LEN])
{
	iw_put_be32(buf + 0, a->aop & RDMAP_ATOMIC_AOP_MASK);
	iw_put_be32(buf + 4, a->req_id);
	iw_put_be32(buf + 8, a->stag);
	iw_put_be64(buf + 12, a->to);
	iw_put_be64(buf + 20, a->add_swap);
	iw_put_be64(buf + 28, a->add_swap_mask);
	iw_put_be64(buf + 36, a->compare);
	iw_put_be64(buf + 44, a->compare_mask);
}

void rdmap_atomic_req_decode(const uint8_t buf[RDMAP_ATOMIC_REQ_LEN], struct rdmap_atomic_req *a)
{
	a->aop = (uint8_t)(iw_get_be32(buf + 0) & RDMAP_ATOMIC_AOP_MASK);
	a->req_id = iw_get_be32(buf + 4);
	a->stag = iw_get_be32(buf + 8);
	a->to = iw_get_be64(buf + 12);
	a->add_swap = iw_get_be64(buf + 20);
	a->add_swap_mask = iw_get_be64(buf + 28);
	a->compare = iw_get_be64(buf + 36);
	a->compare_mask = iw_get_be64(buf + 44);
}

void rdmap_atomic_resp_encode(const struct rdmap_atomic_resp *a, uint8_t buf[RDMAP_ATOMIC_RESP_LEN])
{
	iw_put_be32(buf + 0, a->req_id);
	iw_put_be64(buf + 4, a->orig);
}

void rdmap_atomic_resp_decode(const uint8_t buf[RDMAP_ATOMIC_RESP_LEN], struct rdmap_atomic_resp *a)
{
	a->req_id = iw_get_be32(buf + 0);
	a->orig = iw_get_be64(buf + 4);
}

/*
 * Masked add: each field ends at a bit set in `bounds`; the carry out of such
 * a bit is dropped, so the fields add independently (bounds 0 = one 64-bit
 * add).  Computed per field with a mask of the field's bits.
 */
static uint64_t masked_add(uint64_t v, uint64_t add, uint64_t bounds)
{
	uint64_t out = 0;
	unsigned lo = 0;

	if (bounds == 0)
		return v + add;
	while (lo < 64) {
		uint64_t above = bounds >> lo;
		unsigned hi = above ? lo + (unsigned)__builtin_ctzll(above) : 63;
		uint64_t m = (hi == 63 ? ~0ull : ((1ull << (hi + 1)) - 1)) & ~((1ull << lo) - 1);

		out |= ((v & m) + (add & m)) & m;
		lo = hi + 1;
	}
	return out;
}

uint64_t rdmap_atomic_apply(uint64_t *target, const struct rdmap_atomic_req *a)
{
	/* Sequentially consistent load, and the same order for a failed exchange:
	 * a Compare-and-Swap that finds the word unequal returns a value read as
	 * atomically as the one a successful exchange returns. */
	uint64_t old = __atomic_load_n(target, __ATOMIC_SEQ_CST), nv;

	/* One compare-exchange loop serves both: every update is a single CAS of the word. */
	do {
		if (a->aop == RDMAP_AOP_FETCH_ADD)
			nv = masked_add(old, a->add_swap, a->add_swap_mask);
		else if (((old ^ a->compare) & a->compare_mask) == 0)
			nv = (old & ~a->add_swap_mask) | (a->add_swap & a->add_swap_mask);
		else
			return old; /* not equal: nothing is written */
	} while (!__atomic_compare_exchange_n(target, &old, nv, true, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	return old;
}

/* Length of a copied DDP header, from its first (control) octet's T bit. */
static size_t term_ddp_copy_len(uint8_t ddp_ctrl)
{
	return ddp_hdr_len(ddp_ctrl & DDP_CTRL_T);
}

size_t rdmap_term_len(const struct rdmap_term *t)
{
	size_t n = RDMAP_TERM_CTRL_LEN;

	if (t->d)
		n += RDMAP_TERM_SEGLEN_LEN + term_ddp_copy_len(t->ddp_hdr[0]);
	if (t->r)
		n += RDMAP_READ_REQ_LEN;
	return n;
}

ssize_t rdmap_term_encode(const struct rdmap_term *t, uint8_t *buf, size_t cap)
{
	size_t n = rdmap_term_len(t);
	size_t off = RDMAP_TERM_CTRL_LEN;

	if (cap < n)
		return IW_ENOSPC;
	buf[0] = (uint8_t)((t->code.layer & 0xF) << 4 | (t->code.etype & 0xF));
	buf[1] = t->code.ecode;
	buf[2] = (uint8_t)((t->m ? RDMAP_TERM_M : 0) | (t->d ? RDMAP_TERM_D : 0) |
			   (t->r ? RDMAP_TERM_R : 0));
	buf[3] = 0;
	if (t->d) {
		size_t hl = term_ddp_copy_len(t->ddp_hdr[0]);

		iw_put_be16(buf + off, t->ddp_seg_len);
		off += RDMAP_TERM_SEGLEN_LEN;
		memcpy(buf + off, t->ddp_hdr, hl);
		off += hl;
	}
	if (t->r) {
		memcpy(buf + off, t->rreq, RDMAP_READ_REQ_LEN);
		off += RDMAP_READ_REQ_LEN;
	}
	return (ssize_t)off;
}

/*
 * The control word's layout: RFC 5040 §4.8 (octet 0 = Layer << 4 | EType,
 * M/D/R the high bits of octet 2), or Linux siw's, whose little-endian
 * bitfields put Layer in the low and EType in the high nibble of octet 0 and
 * M/D/R in the low bits of octet 2 (M 0x01, D 0x02, R 0x04; docs/interop.md).
 */
static ssize_t term_decode(const uint8_t *buf, size_t len, struct rdmap_term *t, bool siw)
{
	size_t off = RDMAP_TERM_CTRL_LEN;

	memset(t, 0, sizeof(*t));
	if (len < RDMAP_TERM_CTRL_LEN)
		return IW_EAGAIN;
	t->code.layer = siw ? buf[0] & 0xF : buf[0] >> 4;
	t->code.etype = siw ? buf[0] >> 4 : buf[0] & 0xF;
	t->code.ecode = buf[1];
	t->m = buf[2] & (siw ? 0x01 : RDMAP_TERM_M);
	t->d = buf[2] & (siw ? 0x02 : RDMAP_TERM_D);
	t->r = buf[2] & (siw ? 0x04 : RDMAP_TERM_R);
	if (t->d) {
		size_t hl;

		/* The copy's own first octet tells its length: look at it only once present. */
		if (len < off + RDMAP_TERM_SEGLEN_LEN + 1)
			return IW_EAGAIN;
		hl = term_ddp_copy_len(buf[off + RDMAP_TERM_SEGLEN_LEN]);
		if (len - off < RDMAP_TERM_SEGLEN_LEN + hl)
			return IW_EAGAIN;
		t->ddp_seg_len = iw_get_be16(buf + off);
		off += RDMAP_TERM_SEGLEN_LEN;
		memcpy(t->ddp_hdr, buf + off, hl);
		t->ddp_hdr_len = (uint8_t)hl;
		off += hl;
	}
	if (t->r) {
		if (len - off < RDMAP_READ_REQ_LEN)
			return IW_EAGAIN;
		memcpy(t->rreq, buf + off, RDMAP_READ_REQ_LEN);
		off += RDMAP_READ_REQ_LEN;
	}
	/*
	 * An unknown layer is still a Terminate: the stream is over either way,
	 * and §5.4 hands the message to the ULP as received, so t stays filled.
	 */
	if (t->code.layer > RDMAP_TERM_LAYER_MAX)
		return IW_ERANGE;
	return (ssize_t)off;
}

ssize_t rdmap_term_decode(const uint8_t *buf, size_t len, struct rdmap_term *t)
{
	return term_decode(buf, len, t, false);
}

ssize_t rdmap_term_decode_siw(const uint8_t *buf, size_t len, struct rdmap_term *t)
{
	return term_decode(buf, len, t, true);
}

bool rdmap_term_code_defined(const struct iw_term_code *c)
{
	switch (c->layer) {
	case IW_TERM_LAYER_RDMAP: /* RFC 5040 §4.8, Terminate Control */
		if (c->etype == 0)
			return true; /* local catastrophic: any code ("send 0") */
		if (c->etype == 1)
			return c->ecode <= 0x04 || c->ecode == 0x09 || c->ecode == 0xFF;
		if (c->etype == 2)
			return (c->ecode >= 0x05 && c->ecode <= 0x09) || c->ecode == 0xFF;
		return false;
	case IW_TERM_LAYER_DDP: /* RFC 5041 §7.2 */
		if (c->etype == 0)
			return c->ecode == 0;
		if (c->etype == 1)
			return c->ecode <= 0x04;
		if (c->etype == 2)
			return c->ecode >= 0x01 && c->ecode <= 0x06;
		return false;
	case IW_TERM_LAYER_LLP: /* RFC 5044 §8, RFC 6581 §8: Error Type 0 = MPA */
		return c->etype == IW_TERM_LLP_ETYPE_MPA && c->ecode >= IW_TERM_LLP_CLOSED &&
		       c->ecode <= IW_TERM_LLP_RTR;
	default:
		return false;
	}
}

/* How well one reading fits: 2 = a defined code whose header-copy bits
 * account for exactly the `total` octets, 1 = a defined code, 0 = neither. */
static int term_fit(ssize_t r, const struct rdmap_term *t, size_t total)
{
	if (r < 0 || !rdmap_term_code_defined(&t->code))
		return 0;
	return (size_t)r == total ? 2 : 1;
}

ssize_t rdmap_term_read(const uint8_t *buf, size_t len, size_t total, struct rdmap_term *t,
			bool *siw_layout)
{
	struct rdmap_term alt;
	ssize_t r = rdmap_term_decode(buf, len, t);
	ssize_t a = rdmap_term_decode_siw(buf, len, &alt);

	*siw_layout = term_fit(a, &alt, total) > term_fit(r, t, total);
	if (!*siw_layout)
		return r;
	*t = alt;
	return a;
}

/* Figure 10: does this error carry the DDP header copy and the segment length? */
static bool term_wants_ddp_hdr(const struct iw_term_code *code)
{
	switch (code->layer) {
	case IW_TERM_LAYER_DDP:
		return true;
	case IW_TERM_LAYER_RDMAP:
		/* Remote protection (1) and remote operation (2); never local catastrophic (0). */
		return code->etype == 1 || code->etype == 2;
	default:
		/* LLP errors: the segment boundaries themselves may be lost. */
		return false;
	}
}

void rdmap_term_fill(struct rdmap_term *t, const struct iw_term_code *code, const uint8_t *ddp_hdr,
		     size_t ddp_hdr_len, uint16_t seg_len, const uint8_t *rreq)
{
	memset(t, 0, sizeof(*t));
	t->code = *code;
	/*
	 * The copy length must agree with the copy's T bit, or the peer (and our
	 * own decoder) would split the message differently: an 18-octet buffer
	 * holding a tagged header copies its first 14 octets, a 14-octet buffer
	 * claiming to be untagged is not copied at all.
	 */
	if (ddp_hdr && (ddp_hdr_len == DDP_TAGGED_HDR_LEN || ddp_hdr_len == DDP_UNTAGGED_HDR_LEN) &&
	    term_ddp_copy_len(ddp_hdr[0]) <= ddp_hdr_len && term_wants_ddp_hdr(code)) {
		size_t hl = term_ddp_copy_len(ddp_hdr[0]);

		t->m = true;
		t->d = true;
		t->ddp_seg_len = seg_len;
		memcpy(t->ddp_hdr, ddp_hdr, hl);
		t->ddp_hdr_len = (uint8_t)hl;
	}
	/* Only a remote protection error on a Read Request copies the RDMA header. */
	if (rreq && code->layer == IW_TERM_LAYER_RDMAP && code->etype == 1) {
		t->r = true;
		memcpy(t->rreq, rreq, RDMAP_READ_REQ_LEN);
	}
}
