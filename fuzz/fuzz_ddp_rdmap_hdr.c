/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ddp_rdmap_hdr.c - libFuzzer target for the DDP header decoder
 * (RFC 5041 §4) and the RDMAP headers that follow it: the Read Request
 * header (RFC 5040 §4.4) and the Terminate message (RFC 5040 §4.8).
 *
 * Properties checked (abort() on violation):
 *   - ddp_hdr_decode returns the header length for the T bit, IW_EAGAIN, or
 *     a DDP version error - nothing else;
 *   - a decoded header re-encodes to the input octets except the reserved
 *     bits of the control octet, and decodes again to the same fields;
 *   - every 4-bit opcode has an entry in the opcode table;
 *   - a Read Request header re-encodes byte-exact and round-trips;
 *   - a Terminate decodes to IW_EAGAIN (then so does every shorter prefix),
 *     IW_ERANGE (layer above 2, still filled) or its length; a filled
 *     Terminate re-encodes to the consumed octets with the reserved bits of
 *     octets 2 and 3 cleared, and decodes again to the same fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/rdmap.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool ddp_same(const struct ddp_hdr *a, const struct ddp_hdr *b)
{
	if (a->tagged != b->tagged || a->last != b->last || a->dv != b->dv ||
	    a->rsvdulp != b->rsvdulp)
		return false;
	if (a->tagged)
		return a->stag == b->stag && a->to == b->to;
	return a->rsvdulp2 == b->rsvdulp2 && a->qn == b->qn && a->msn == b->msn && a->mo == b->mo;
}

static bool term_same(const struct rdmap_term *a, const struct rdmap_term *b)
{
	if (a->code.layer != b->code.layer || a->code.etype != b->code.etype ||
	    a->code.ecode != b->code.ecode || a->m != b->m || a->d != b->d || a->r != b->r)
		return false;
	if (a->d && (a->ddp_seg_len != b->ddp_seg_len || a->ddp_hdr_len != b->ddp_hdr_len ||
		     memcmp(a->ddp_hdr, b->ddp_hdr, a->ddp_hdr_len)))
		return false;
	return !a->r || memcmp(a->rreq, b->rreq, RDMAP_READ_REQ_LEN) == 0;
}

static void check_read_req(const uint8_t *p, size_t len)
{
	struct rdmap_read_req a, b;
	uint8_t buf[RDMAP_READ_REQ_LEN];

	if (len < RDMAP_READ_REQ_LEN)
		return;
	rdmap_read_req_decode(p, &a);
	rdmap_read_req_encode(&a, buf);
	if (memcmp(buf, p, RDMAP_READ_REQ_LEN))
		abort();
	rdmap_read_req_decode(buf, &b);
	if (a.sink_stag != b.sink_stag || a.sink_to != b.sink_to || a.size != b.size ||
	    a.src_stag != b.src_stag || a.src_to != b.src_to)
		abort();
}

/* RFC 7306 headers: byte-exact round trips apart from the 28 reserved bits. */
static void check_atomic(uint8_t op, const uint8_t *p, size_t len)
{
	uint8_t buf[RDMAP_ATOMIC_REQ_LEN], want[RDMAP_ATOMIC_REQ_LEN];

	if (op == RDMAP_OP_ATOMIC_REQ && len >= RDMAP_ATOMIC_REQ_LEN) {
		struct rdmap_atomic_req a, b;

		rdmap_atomic_req_decode(p, &a);
		rdmap_atomic_req_encode(&a, buf);
		memcpy(want, p, RDMAP_ATOMIC_REQ_LEN);
		want[0] = want[1] = want[2] = 0;
		want[3] &= RDMAP_ATOMIC_AOP_MASK;
		if (memcmp(buf, want, RDMAP_ATOMIC_REQ_LEN))
			abort();
		rdmap_atomic_req_decode(buf, &b);
		if (a.aop != b.aop || a.req_id != b.req_id || a.stag != b.stag || a.to != b.to ||
		    a.add_swap != b.add_swap || a.add_swap_mask != b.add_swap_mask ||
		    a.compare != b.compare || a.compare_mask != b.compare_mask)
			abort();
		/* The operation itself: the original comes back, the word changes as stated. */
		if (a.aop == RDMAP_AOP_FETCH_ADD || a.aop == RDMAP_AOP_CMP_SWAP) {
			uint64_t w = a.compare ^ a.add_swap, old = w;

			if (rdmap_atomic_apply(&w, &a) != old)
				abort();
			if (a.aop == RDMAP_AOP_CMP_SWAP && ((old ^ a.compare) & a.compare_mask) &&
			    w != old)
				abort();
			if (a.aop == RDMAP_AOP_FETCH_ADD && a.add_swap_mask == 0 &&
			    w != old + a.add_swap)
				abort();
		}
	} else if (op == RDMAP_OP_ATOMIC_RESP && len >= RDMAP_ATOMIC_RESP_LEN) {
		struct rdmap_atomic_resp a;

		rdmap_atomic_resp_decode(p, &a);
		rdmap_atomic_resp_encode(&a, buf);
		if (memcmp(buf, p, RDMAP_ATOMIC_RESP_LEN))
			abort();
	}
}

/* rdmap_term_read: either the RFC reading or, flagged, siw's with a defined
 * code - and then the RFC reading was undefined, or defined but not
 * accounting for the octets exactly while siw's does. */
static void check_term_read(const uint8_t *p, size_t len)
{
	struct rdmap_term t, u;
	bool siw;
	ssize_t n = rdmap_term_read(p, len, len, &t, &siw);
	ssize_t m;

	if (!siw) {
		if (n != rdmap_term_decode(p, len, &u) || (n >= 0 && !term_same(&t, &u)))
			abort();
		return;
	}
	if (n != rdmap_term_decode_siw(p, len, &u) || n < 0 || !term_same(&t, &u) ||
	    !rdmap_term_code_defined(&t.code))
		abort();
	m = rdmap_term_decode(p, len, &u);
	if (m >= 0 && rdmap_term_code_defined(&u.code) && ((size_t)m == len || (size_t)n != len))
		abort();
}

static void check_term(const uint8_t *p, size_t len)
{
	check_term_read(p, len);
	uint8_t buf[RDMAP_TERM_MAX_LEN], want[RDMAP_TERM_MAX_LEN];
	struct rdmap_term t, u;
	ssize_t n, m;
	size_t used;

	n = rdmap_term_decode(p, len, &t);
	if (n == IW_EAGAIN) {
		/* Needing more octets is monotone: no shorter prefix may succeed. */
		for (size_t i = 0; i < len && i <= RDMAP_TERM_MAX_LEN; i++)
			if (rdmap_term_decode(p, i, &u) != IW_EAGAIN)
				abort();
		return;
	}
	if (n == IW_ERANGE) {
		if (t.code.layer <= IW_TERM_LAYER_LLP)
			abort();
	} else if (n < RDMAP_TERM_CTRL_LEN || (size_t)n > len || n > RDMAP_TERM_MAX_LEN ||
		   t.code.layer > IW_TERM_LAYER_LLP) {
		abort();
	}
	used = rdmap_term_len(&t);
	if (used > len || (n > 0 && used != (size_t)n))
		abort();
	if (t.d && t.ddp_hdr_len != ddp_hdr_len(t.ddp_hdr[0] & DDP_CTRL_T))
		abort();
	if (rdmap_term_encode(&t, buf, used - 1) != IW_ENOSPC)
		abort();
	m = rdmap_term_encode(&t, buf, sizeof(buf));
	if (m < 0 || (size_t)m != used)
		abort();
	/* Encode sends the reserved bits (octet 2 low five bits, octet 3) as zero. */
	memcpy(want, p, used);
	want[2] &= RDMAP_TERM_M | RDMAP_TERM_D | RDMAP_TERM_R;
	want[3] = 0;
	if (memcmp(buf, want, used))
		abort();
	if (rdmap_term_decode(buf, used, &u) != n || !term_same(&t, &u))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[DDP_HDR_MAX_LEN], want[DDP_HDR_MAX_LEN];
	const struct rdmap_opcode_info *info;
	struct ddp_hdr h, g;
	ssize_t n, m;
	uint8_t op;

	n = ddp_hdr_decode(data, size, &h);
	if (n < 0) {
		if (n != IW_EAGAIN && n != IW_EDDP_T_VERSION && n != IW_EDDP_U_VERSION)
			abort();
		return 0;
	}
	if ((size_t)n != ddp_hdr_len(h.tagged) || (size_t)n > size || h.dv != DDP_VERSION)
		abort();
	m = ddp_hdr_encode(&h, buf, sizeof(buf));
	if (m != n)
		abort();
	/* Byte-exact apart from the reserved bits of the DDP control octet. */
	memcpy(want, data, (size_t)n);
	want[0] &= (uint8_t)~DDP_CTRL_RSVD;
	if (memcmp(buf, want, (size_t)n))
		abort();
	if (ddp_hdr_decode(buf, (size_t)m, &g) != n || !ddp_same(&h, &g))
		abort();

	op = rdmap_ctrl_opcode(h.rsvdulp);
	info = rdmap_opcode_info(h.rsvdulp);
	if (!info || !info->name || info != rdmap_opcode_info(op) || info->supported != (op < 12) ||
	    info->rfc7306 != (op >= 8 && op < 12))
		abort();
	if (op == RDMAP_OP_READ_REQ)
		check_read_req(data + n, size - (size_t)n);
	else if (op == RDMAP_OP_TERMINATE)
		check_term(data + n, size - (size_t)n);
	else
		check_atomic(op, data + n, size - (size_t)n);
	return 0;
}
