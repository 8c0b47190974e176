/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rpcrdma_hdr.c - libFuzzer target for the RPC-over-RDMA version 1 wire
 * layer (RFC 8166 §4): the transport header decoder and encoder, the RFC 8797
 * CM private data decoder and the ONC RPC header parser (RFC 5531 §9), all of
 * which read peer input.
 *
 * Properties checked (abort() on violation):
 *   - rpcrdma_hdr_decode returns a header length in 16..RPCRDMA_HDR_MAX that
 *     fits the input, or one of its documented IW_ERPC_* codes - nothing else;
 *     on error hdr_len is 0 and no segment is reported;
 *   - a decoded header (or a decoded RDMA_MSGP) has consistent chunk indexes,
 *     re-encodes to exactly the octets it was decoded from, does not fit one
 *     octet less (IW_ENOSPC), and decodes again to the same result and fields;
 *   - rpcrdma_err_action maps every result to one of the three actions;
 *   - CM private data decodes to 0 or IW_ERPC_PDATA (with the 1024-octet
 *     defaults); a valid block re-encodes to the same RFC 8797 octets and
 *     extension fields and decodes again to the same struct;
 *   - rpcrdma_rpc_parse returns 0 with body_off inside the input, or
 *     IW_ERPC_RPC; it is also run on the Payload stream of a decoded RDMA_MSG.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "fuzz_pdata_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool decode_code_ok(int r)
{
	switch (r) {
	case IW_ERPC_SHORT:
	case IW_ERPC_VERS:
	case IW_ERPC_PROC:
	case IW_ERPC_XDR:
	case IW_ERPC_LIMIT:
	case IW_ERPC_NOMSG_EMPTY:
	case IW_ERPC_POSITION:
	case IW_ERPC_MSGP:
	case IW_ERPC_ERRCODE:
		return true;
	default:
		return r >= 16 && r <= RPCRDMA_HDR_MAX;
	}
}

static bool chunks_ok(const struct rpcrdma_hdr *h)
{
	size_t total = 0;

	if (h->n_read > RPCRDMA_MAX_READ_CHUNKS || h->n_write > RPCRDMA_MAX_WRITE_CHUNKS ||
	    h->nsegs > RPCRDMA_MAX_HDR_SEGS)
		return false;
	for (size_t i = 0; i < h->n_read; i++) {
		const struct rpcrdma_chunk *c = &h->read[i];

		if (!c->nseg || c->nseg > RPCRDMA_MAX_CHUNK_SEGS || c->first + c->nseg > h->nsegs ||
		    c->position % 4 || (i && c->position <= h->read[i - 1].position))
			return false;
		total += c->nseg;
		(void)rpcrdma_chunk_len(h, c);
	}
	for (size_t i = 0; i < h->n_write; i++) {
		const struct rpcrdma_chunk *c = &h->write[i];

		if (c->nseg > RPCRDMA_MAX_CHUNK_SEGS || c->first + c->nseg > h->nsegs)
			return false;
		total += c->nseg;
		(void)rpcrdma_chunk_len(h, c);
	}
	if (h->has_reply) {
		if (h->reply.nseg > RPCRDMA_MAX_CHUNK_SEGS ||
		    h->reply.first + h->reply.nseg > h->nsegs)
			return false;
		total += h->reply.nseg;
	}
	return total == h->nsegs;
}

/* The fields a header carries on the wire; the segment pool layout is canonical after decode. */
static bool hdr_same(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	return a->xid == b->xid && a->vers == b->vers && a->credits == b->credits &&
	       a->proc == b->proc && a->msgp_align == b->msgp_align &&
	       a->msgp_thresh == b->msgp_thresh && a->n_read == b->n_read &&
	       a->n_write == b->n_write && a->has_reply == b->has_reply && a->nsegs == b->nsegs &&
	       !memcmp(a->read, b->read, sizeof(a->read)) &&
	       !memcmp(a->write, b->write, sizeof(a->write)) &&
	       !memcmp(&a->reply, &b->reply, sizeof(a->reply)) &&
	       !memcmp(a->segs, b->segs, a->nsegs * sizeof(a->segs[0])) && a->err == b->err &&
	       a->vers_low == b->vers_low && a->vers_high == b->vers_high &&
	       a->hdr_len == b->hdr_len;
}

static void check_rpc(const uint8_t *p, size_t len)
{
	struct rpcrdma_rpcinfo ri;
	int r = rpcrdma_rpc_parse(p, len, &ri);

	if (r != 0 && r != IW_ERPC_RPC)
		abort();
	if (r == 0 && (ri.body_off > len || ri.body_off < 12))
		abort();
}

static void check_hdr(const uint8_t *data, size_t size)
{
	static uint8_t out[RPCRDMA_HDR_MAX];
	struct rpcrdma_hdr h, g;
	enum rpcrdma_err_action act;
	int r, m;

	r = rpcrdma_hdr_decode(data, size, &h);
	if (!decode_code_ok(r))
		abort();
	act = rpcrdma_err_action(r);
	if (act != RPCRDMA_DISCARD && act != RPCRDMA_REPLY_ERR_VERS &&
	    act != RPCRDMA_REPLY_ERR_CHUNK)
		abort();
	if (r < 0 && r != IW_ERPC_MSGP) {
		if (h.hdr_len || h.nsegs || h.n_read || h.n_write || h.has_reply)
			abort();
		return;
	}
	if (h.hdr_len < 16 || h.hdr_len > size || (r > 0 && (uint32_t)r != h.hdr_len) ||
	    !chunks_ok(&h))
		abort();
	if (rpcrdma_hdr_size(&h) != h.hdr_len)
		abort();
	if (rpcrdma_hdr_encode(&h, out, h.hdr_len - 1) != IW_ENOSPC)
		abort();
	m = rpcrdma_hdr_encode(&h, out, sizeof(out));
	if (m < 0 || (uint32_t)m != h.hdr_len || memcmp(out, data, (size_t)m))
		abort();
	if (rpcrdma_hdr_decode(out, (size_t)m, &g) != r || !hdr_same(&h, &g))
		abort();
	if (h.proc == RDMA_MSG)
		check_rpc(data + h.hdr_len, size - h.hdr_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_hdr(data, size);
	check_pdata(data, size);
	check_rpc(data, size);
	return 0;
}
