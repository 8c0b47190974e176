/* SPDX-License-Identifier: MIT */
/*
 * test_rpcrdma_wire.c - the RPC-over-RDMA version 1 wire layer (RFC 8166 §4,
 * RFC 8797, RFC 5531 §9): every known-answer vector of rpcrdma.json decodes
 * to its fields and re-encodes byte-exact; the builders produce every
 * procedure and list shape and survive encode/decode; every decoder error is
 * reached by a crafted header (truncation at every length, bad
 * discriminators, counts over the limits, an empty RDMA_NOMSG, bad Read
 * positions, unknown procedure and version); encode never writes past its
 * buffer; the RFC 8797 private data and our extension block; the ONC RPC
 * header parser on calls, accepted and denied replies and truncations.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

#include "iw_bytes.h"
#include "rpcrdma_vectors.h"
#include "th.h"

#define BUF_MAX 4096

/* ---------------------------------------------------------------------- */
/* helpers                                                                  */
/* ---------------------------------------------------------------------- */

/* A header written word by word, as a peer would put it on the wire. */
struct wb {
	uint8_t b[BUF_MAX];
	size_t n;
};

static void w32(struct wb *w, uint32_t v)
{
	ck_assert_uint_le(w->n + 4, sizeof(w->b));
	iw_put_be32(w->b + w->n, v);
	w->n += 4;
}

static void wseg(struct wb *w, uint32_t handle, uint32_t len, uint64_t off)
{
	w32(w, handle);
	w32(w, len);
	w32(w, (uint32_t)(off >> 32));
	w32(w, (uint32_t)off);
}

static void wfixed(struct wb *w, uint32_t xid, uint32_t vers, uint32_t credits, uint32_t proc)
{
	w->n = 0;
	w32(w, xid);
	w32(w, vers);
	w32(w, credits);
	w32(w, proc);
}

/* Decode from an exact-size heap copy, so ASan catches any over-read. */
static int decode_exact(const uint8_t *p, size_t n, struct rpcrdma_hdr *h)
{
	uint8_t *copy = th_memdup_exact(p, n);
	int r = rpcrdma_hdr_decode(copy, n, h);

	free(copy);
	return r;
}

static size_t vec_bytes(const struct rpcrdma_vector *v, uint8_t *buf)
{
	long n = th_hex_decode(v->bytes_hex, buf, BUF_MAX);

	ck_assert_msg(n >= 0, "%s: bad hex", v->name);
	return (size_t)n;
}

static void seg_eq(const char *name, const struct rpcrdma_segment *s, const struct rv_seg *w)
{
	ck_assert_msg(s->handle == w->handle && s->length == w->length && s->offset == w->offset,
		      "%s: segment %08x/%u/%llx, want %08x/%u/%llx", name, s->handle, s->length,
		      (unsigned long long)s->offset, w->handle, w->length,
		      (unsigned long long)w->offset);
}

static bool seg_same(const struct rpcrdma_segment *a, const struct rpcrdma_segment *b)
{
	return a->handle == b->handle && a->length == b->length && a->offset == b->offset;
}

static bool chunk_same(const struct rpcrdma_hdr *a, const struct rpcrdma_chunk *ca,
		       const struct rpcrdma_hdr *b, const struct rpcrdma_chunk *cb)
{
	if (ca->position != cb->position || ca->nseg != cb->nseg)
		return false;
	for (size_t i = 0; i < ca->nseg; i++)
		if (!seg_same(&a->segs[ca->first + i], &b->segs[cb->first + i]))
			return false;
	return true;
}

/* Same header on the wire (chunk contents, not pool layout). */
static bool hdr_same(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credits != b->credits ||
	    a->proc != b->proc || a->n_read != b->n_read || a->n_write != b->n_write ||
	    a->has_reply != b->has_reply || a->msgp_align != b->msgp_align ||
	    a->msgp_thresh != b->msgp_thresh || a->err != b->err || a->vers_low != b->vers_low ||
	    a->vers_high != b->vers_high)
		return false;
	for (size_t i = 0; i < a->n_read; i++)
		if (!chunk_same(a, &a->read[i], b, &b->read[i]))
			return false;
	for (size_t i = 0; i < a->n_write; i++)
		if (!chunk_same(a, &a->write[i], b, &b->write[i]))
			return false;
	return !a->has_reply || chunk_same(a, &a->reply, b, &b->reply);
}

/* Encode h, decode it back, compare; returns the encoded length. */
static int round_trip(const struct rpcrdma_hdr *h, int want_decode)
{
	uint8_t buf[RPCRDMA_HDR_MAX];
	struct rpcrdma_hdr back;
	int n = rpcrdma_hdr_encode(h, buf, sizeof(buf));

	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq((size_t)n, rpcrdma_hdr_size(h));
	ck_assert_int_eq(decode_exact(buf, (size_t)n, &back), want_decode ? want_decode : n);
	ck_assert_uint_eq(back.hdr_len, (uint32_t)n);
	ck_assert(hdr_same(h, &back));
	return n;
}

static struct rpcrdma_segment mkseg(uint32_t handle, uint32_t len, uint64_t off)
{
	struct rpcrdma_segment s = {.handle = handle, .length = len, .offset = off};
	return s;
}

/* ---------------------------------------------------------------------- */
/* known-answer vectors                                                     */
/* ---------------------------------------------------------------------- */

START_TEST(every_vector_decodes_to_its_expected_fields)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(rpcrdma_vectors); i++) {
		const struct rpcrdma_vector *v = &rpcrdma_vectors[i];
		uint8_t buf[BUF_MAX];
		struct rpcrdma_hdr h;
		size_t n = vec_bytes(v, buf);
		int r = decode_exact(buf, n, &h);

		ck_assert_msg(r == (int)v->hdr_len, "%s: decode %d (%s)", v->name, r,
			      rpcrdma_errname(r));
		ck_assert_uint_eq(h.hdr_len, v->hdr_len);
		ck_assert_uint_eq(h.xid, v->xid);
		ck_assert_uint_eq(h.vers, v->vers);
		ck_assert_uint_eq(h.credits, v->credits);
		ck_assert_uint_eq(h.proc, v->proc);
		if (v->payload_length >= 0)
			ck_assert_uint_eq(n - h.hdr_len, (size_t)v->payload_length);
		if (v->is_error) {
			ck_assert_uint_eq(h.err, v->err);
			ck_assert_uint_eq(h.vers_low, v->vers_low);
			ck_assert_uint_eq(h.vers_high, v->vers_high);
		}
		if (v->lists) {
			size_t k = 0;

			/* Flatten our chunks back into the vector's segment list. */
			for (size_t c = 0; c < h.n_read; c++)
				for (size_t s = 0; s < h.read[c].nseg; s++, k++) {
					ck_assert_uint_lt(k, v->n_read);
					ck_assert_uint_eq(h.read[c].position, v->read[k].position);
					seg_eq(v->name, &h.segs[h.read[c].first + s], &v->read[k]);
				}
			ck_assert_uint_eq(k, v->n_read);
			ck_assert_uint_eq(h.n_write, v->n_write);
			for (size_t c = 0; c < h.n_write; c++) {
				ck_assert_uint_eq(h.write[c].nseg, v->write_nseg[c]);
				for (size_t s = 0; s < h.write[c].nseg; s++)
					seg_eq(v->name, &h.segs[h.write[c].first + s],
					       &v->write[c][s]);
			}
			ck_assert_int_eq(h.has_reply, v->has_reply);
			if (v->has_reply) {
				ck_assert_uint_eq(h.reply.nseg, v->reply_nseg);
				for (size_t s = 0; s < h.reply.nseg; s++)
					seg_eq(v->name, &h.segs[h.reply.first + s], &v->reply[s]);
			}
		}
		if (v->rpc_msg_type >= 0) {
			struct rpcrdma_rpcinfo ri;

			ck_assert_int_eq(rpcrdma_rpc_parse(buf + h.hdr_len, n - h.hdr_len, &ri), 0);
			ck_assert_uint_eq(ri.msg_type, (uint32_t)v->rpc_msg_type);
			ck_assert_uint_eq(ri.xid, h.xid);
		}
	}
}
END_TEST

START_TEST(every_vector_reencodes_byte_exact)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(rpcrdma_vectors); i++) {
		const struct rpcrdma_vector *v = &rpcrdma_vectors[i];
		uint8_t buf[BUF_MAX], out[BUF_MAX];
		struct rpcrdma_hdr h;
		size_t n = vec_bytes(v, buf);
		int r;

		ck_assert_int_gt(rpcrdma_hdr_decode(buf, n, &h), 0);
		ck_assert_uint_eq(rpcrdma_hdr_size(&h), h.hdr_len);
		r = rpcrdma_hdr_encode(&h, out, sizeof(out));
		ck_assert_msg(r == (int)h.hdr_len, "%s: encode %d", v->name, r);
		ck_assert_msg(memcmp(out, buf, h.hdr_len) == 0, "%s: bytes differ", v->name);
	}
}
END_TEST

START_TEST(the_framed_vector_carries_the_nfs_null_call)
{
	bool seen = false;

	for (size_t i = 0; i < IW_ARRAY_SIZE(rpcrdma_vectors); i++) {
		const struct rpcrdma_vector *v = &rpcrdma_vectors[i];
		uint8_t buf[BUF_MAX];
		struct rpcrdma_rpcinfo ri;
		struct rpcrdma_hdr h;
		size_t n;

		if (!v->framed)
			continue;
		seen = true;
		n = vec_bytes(v, buf);
		ck_assert_int_eq(rpcrdma_hdr_decode(buf, n, &h), RPCRDMA_HDR_MIN);
		ck_assert_int_eq(rpcrdma_rpc_parse(buf + h.hdr_len, n - h.hdr_len, &ri), 0);
		ck_assert_uint_eq(ri.xid, h.xid);
		ck_assert_uint_eq(ri.prog, 100003);
		ck_assert_uint_eq(ri.vers, 3);
		ck_assert_uint_eq(ri.proc, 0);
	}
	ck_assert(seen);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* builders                                                                 */
/* ---------------------------------------------------------------------- */

START_TEST(builder_message_without_chunks_is_the_28_octet_minimum)
{
	struct rpcrdma_hdr h;
	uint8_t buf[64];

	rpcrdma_hdr_init(&h, 0x11, 32, RDMA_MSG);
	ck_assert_uint_eq(h.vers, RPCRDMA_VERSION);
	ck_assert_int_eq(round_trip(&h, 0), RPCRDMA_HDR_MIN);
	ck_assert_int_eq(rpcrdma_hdr_encode(&h, buf, sizeof(buf)), 28);
	for (size_t i = 16; i < 28; i++)
		ck_assert_uint_eq(buf[i], 0);
}
END_TEST

START_TEST(builder_read_chunks_group_segments_by_position)
{
	struct rpcrdma_segment s1 = mkseg(1, 100, 0x1000), s2 = mkseg(2, 200, 0x2000),
			       s3 = mkseg(3, 300, 0xffffffff00000000ull);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 7, 1, RDMA_MSG);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 8, &s1), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, false, 8, &s2), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 64, &s3), 0);
	ck_assert_uint_eq(h.n_read, 2);
	ck_assert_uint_eq(h.read[0].nseg, 2);
	ck_assert_uint_eq(h.read[1].nseg, 1);
	ck_assert_uint_eq(rpcrdma_chunk_len(&h, &h.read[0]), 300);
	/* 7 words + 3 read segments of 6 words */
	ck_assert_int_eq(round_trip(&h, 0), 28 + 3 * 24);
}
END_TEST

START_TEST(builder_long_call_is_nomsg_with_a_position_zero_read_chunk)
{
	struct rpcrdma_segment s = mkseg(0xabcd, 2000, 0x20000);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 0xbef1, 16, RDMA_NOMSG);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 0, &s), 0);
	ck_assert_int_eq(round_trip(&h, 0), 52);
}
END_TEST

START_TEST(builder_long_reply_is_nomsg_with_a_reply_chunk)
{
	struct rpcrdma_segment s = mkseg(0xb1, 8192, 0x300000), t = mkseg(0xb2, 4, 0x400000);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 0xbef9, 64, RDMA_NOMSG);
	ck_assert_int_eq(rpcrdma_hdr_add_reply(&h, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_reply(&h, &t), 0);
	ck_assert(h.has_reply);
	ck_assert_uint_eq(rpcrdma_chunk_len(&h, &h.reply), 8196);
	ck_assert_int_eq(round_trip(&h, 0), 28 + 4 + 2 * 16);
}
END_TEST

START_TEST(builder_write_list_with_empty_unused_and_multi_segment_chunks)
{
	struct rpcrdma_segment a = mkseg(0xa1, 4096, 0x100000), b = mkseg(0xa2, 0, 0x200000),
			       c = mkseg(0xa3, 0, 0x300000);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 0xbef2, 16, RDMA_MSG);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, NULL), 0); /* empty chunk */
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &a), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, false, &b), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &c), 0); /* unused: length 0 */
	ck_assert_uint_eq(h.n_write, 3);
	ck_assert_uint_eq(h.write[0].nseg, 0);
	ck_assert_uint_eq(h.write[1].nseg, 2);
	ck_assert_uint_eq(rpcrdma_chunk_len(&h, &h.write[2]), 0);
	ck_assert_int_eq(round_trip(&h, 0), 28 + 8 + (8 + 32) + (8 + 16));
}
END_TEST

START_TEST(builder_every_list_at_once_round_trips)
{
	struct rpcrdma_segment s = mkseg(5, 512, 0x5000);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 0xfeed, 8, RDMA_MSG);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 0, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 128, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_reply(&h, &s), 0);
	ck_assert_int_eq(round_trip(&h, 0), 28 + 2 * 24 + 2 * 24 + 20);
}
END_TEST

START_TEST(builder_msgp_done_and_errors_round_trip)
{
	struct rpcrdma_segment s = mkseg(9, 9, 9);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 1, 2, RDMA_MSGP);
	h.msgp_align = 4096;
	h.msgp_thresh = 1024;
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &s), 0);
	ck_assert_int_eq(round_trip(&h, IW_ERPC_MSGP), 36 + 24);

	rpcrdma_hdr_init(&h, 3, 4, RDMA_DONE);
	ck_assert_int_eq(round_trip(&h, 0), 16);

	rpcrdma_hdr_init(&h, 5, 1, RDMA_ERROR);
	h.err = ERR_CHUNK;
	ck_assert_int_eq(round_trip(&h, 0), RPCRDMA_HDR_ERR_CHUNK);

	rpcrdma_hdr_init(&h, 6, 1, RDMA_ERROR);
	h.err = ERR_VERS;
	h.vers_low = 1;
	h.vers_high = 1;
	ck_assert_int_eq(round_trip(&h, 0), RPCRDMA_HDR_ERR_VERS);
	/* ERR_VERS echoes the failing request's version and still decodes. */
	h.vers = 7;
	ck_assert_int_eq(round_trip(&h, 0), RPCRDMA_HDR_ERR_VERS);
}
END_TEST

START_TEST(builder_limits_are_reported_as_erpc_limit)
{
	struct rpcrdma_segment s = mkseg(1, 1, 1);
	struct rpcrdma_hdr h;
	int r;

	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	for (int i = 0; i < RPCRDMA_MAX_READ_CHUNKS; i++)
		ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, (uint32_t)(4 * i), &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 4096, &s), IW_ERPC_LIMIT);

	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	for (int i = 0; i < RPCRDMA_MAX_CHUNK_SEGS; i++)
		ck_assert_int_eq(rpcrdma_hdr_add_write(&h, i == 0, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, false, &s), IW_ERPC_LIMIT);
	ck_assert_uint_eq(h.write[0].nseg, RPCRDMA_MAX_CHUNK_SEGS);

	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	for (int i = 0; i < RPCRDMA_MAX_WRITE_CHUNKS; i++)
		ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, NULL), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, NULL), IW_ERPC_LIMIT);

	/* 64 segments in all: 4 write chunks of 16, then nothing more fits. */
	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < RPCRDMA_MAX_CHUNK_SEGS; i++)
			ck_assert_int_eq(rpcrdma_hdr_add_write(&h, i == 0, &s), 0);
	ck_assert_uint_eq(h.nsegs, RPCRDMA_MAX_HDR_SEGS);
	r = rpcrdma_hdr_add_reply(&h, &s);
	ck_assert_int_eq(r, IW_ERPC_LIMIT);
	/* The largest header we build still round-trips and fits RPCRDMA_HDR_MAX. */
	h.has_reply = false;
	ck_assert_int_le(round_trip(&h, 0), RPCRDMA_HDR_MAX);
}
END_TEST

START_TEST(builder_refuses_to_grow_a_chunk_that_is_no_longer_last)
{
	struct rpcrdma_segment s = mkseg(1, 1, 1);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 0, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, false, 0, &s), IW_EINVAL);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 0, NULL), IW_EINVAL);
	ck_assert_uint_eq(h.read[0].nseg, 1);
}
END_TEST

START_TEST(builder_random_headers_round_trip)
{
	struct th_rng rng;

	th_rng_init(&rng, th_seed_from_env());
	for (int iter = 0; iter < 2000; iter++) {
		struct rpcrdma_hdr h;
		uint32_t pos = 0;
		unsigned nr = (unsigned)th_rng_range(&rng, 0, 3);
		unsigned nw = (unsigned)th_rng_range(&rng, 0, 3);
		bool reply = th_rng_range(&rng, 0, 1);
		uint32_t proc = th_rng_range(&rng, 0, 1) ? RDMA_NOMSG : RDMA_MSG;

		rpcrdma_hdr_init(&h, (uint32_t)th_rng_next(&rng), (uint32_t)th_rng_next(&rng),
				 proc);
		for (unsigned c = 0; c < nr; c++) {
			unsigned ns = (unsigned)th_rng_range(&rng, 1, 4);

			pos += 4 * (uint32_t)th_rng_range(&rng, c ? 1 : 0, 1000);
			for (unsigned k = 0; k < ns; k++) {
				struct rpcrdma_segment s =
					mkseg((uint32_t)th_rng_next(&rng),
					      (uint32_t)th_rng_next(&rng), th_rng_next(&rng));
				ck_assert_int_eq(rpcrdma_hdr_add_read(&h, k == 0, pos, &s), 0);
			}
		}
		for (unsigned c = 0; c < nw; c++) {
			unsigned ns = (unsigned)th_rng_range(&rng, 0, 4);

			if (!ns)
				ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, NULL), 0);
			for (unsigned k = 0; k < ns; k++) {
				struct rpcrdma_segment s =
					mkseg((uint32_t)th_rng_next(&rng),
					      (uint32_t)th_rng_next(&rng), th_rng_next(&rng));
				ck_assert_int_eq(rpcrdma_hdr_add_write(&h, k == 0, &s), 0);
			}
		}
		if (reply) {
			struct rpcrdma_segment s = mkseg(1, 2, 3);
			ck_assert_int_eq(rpcrdma_hdr_add_reply(&h, &s), 0);
		}
		if (proc == RDMA_NOMSG && !nr && !nw && !reply) {
			ck_assert_uint_eq(rpcrdma_hdr_size(&h), 0);
			continue;
		}
		round_trip(&h, 0);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* decoder errors                                                           */
/* ---------------------------------------------------------------------- */

static int want_truncated(const struct rpcrdma_vector *v, size_t len)
{
	if (len < 16)
		return IW_ERPC_SHORT;
	if (v->vers != RPCRDMA_VERSION)
		return IW_ERPC_SHORT; /* only ERR_VERS decodes, and it needs 28 */
	if (v->proc == RDMA_ERROR)
		return IW_ERPC_SHORT;
	if (len < RPCRDMA_HDR_MIN)
		return IW_ERPC_SHORT;
	return IW_ERPC_XDR;
}

START_TEST(decode_truncated_at_every_length_is_short_or_an_xdr_error)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(rpcrdma_vectors); i++) {
		const struct rpcrdma_vector *v = &rpcrdma_vectors[i];
		uint8_t buf[BUF_MAX];
		struct rpcrdma_hdr h;

		vec_bytes(v, buf);
		for (size_t len = 0; len < v->hdr_len; len++) {
			int r = decode_exact(buf, len, &h);
			int want = want_truncated(v, len);

			ck_assert_msg(r == want, "%s at %zu: %s, want %s", v->name, len,
				      rpcrdma_errname(r), rpcrdma_errname(want));
			ck_assert_uint_eq(h.hdr_len, 0);
			ck_assert_uint_eq(h.nsegs, 0);
			if (len >= 16) {
				ck_assert_uint_eq(h.xid, v->xid);
				ck_assert_uint_eq(h.vers, v->vers);
			}
			if (r == IW_ERPC_XDR) {
				ck_assert_uint_eq(h.credits, v->credits);
				ck_assert_uint_eq(h.proc, v->proc);
			}
		}
	}
}
END_TEST

START_TEST(decode_discriminator_two_is_an_xdr_error_in_every_list)
{
	struct rpcrdma_hdr h;
	struct wb w;

	for (int list = 0; list < 3; list++) {
		wfixed(&w, 9, 1, 1, RDMA_MSG);
		for (int k = 0; k < list; k++)
			w32(&w, 0);
		w32(&w, 2);
		for (int k = list; k < 3; k++)
			w32(&w, 0);
		ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_XDR);
		ck_assert_uint_eq(h.xid, 9);
		ck_assert_uint_eq(h.credits, 1);
		ck_assert_uint_eq(h.proc, RDMA_MSG);
	}
	/* Any non-zero value other than 1 is equally an error. */
	wfixed(&w, 9, 1, 1, RDMA_MSG);
	w32(&w, 0xffffffff);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_XDR);
}
END_TEST

START_TEST(decode_counts_over_the_limits_are_erpc_limit)
{
	struct rpcrdma_hdr h;
	struct wb w;

	/* 9 Read chunks (distinct positions). */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	for (uint32_t i = 0; i <= RPCRDMA_MAX_READ_CHUNKS; i++) {
		w32(&w, 1);
		w32(&w, 4 * i);
		wseg(&w, i, 4, 0);
	}
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_LIMIT);
	ck_assert_uint_eq(h.xid, 1);
	ck_assert_uint_eq(h.n_read, 0);

	/* 17 segments in one Read chunk. */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	for (uint32_t i = 0; i <= RPCRDMA_MAX_CHUNK_SEGS; i++) {
		w32(&w, 1);
		w32(&w, 12);
		wseg(&w, i, 4, 0);
	}
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_LIMIT);

	/* 9 Write chunks. */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	w32(&w, 0);
	for (uint32_t i = 0; i <= RPCRDMA_MAX_WRITE_CHUNKS; i++) {
		w32(&w, 1);
		w32(&w, 0);
	}
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_LIMIT);

	/* A Write chunk claiming 17 segments, and one claiming 2^32-1. */
	for (int big = 0; big < 2; big++) {
		wfixed(&w, 1, 1, 1, RDMA_MSG);
		w32(&w, 0);
		w32(&w, 1);
		w32(&w, big ? 0xffffffffu : RPCRDMA_MAX_CHUNK_SEGS + 1);
		for (uint32_t i = 0; i <= RPCRDMA_MAX_CHUNK_SEGS; i++)
			wseg(&w, i, 4, 0);
		w32(&w, 0);
		w32(&w, 0);
		ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_LIMIT);
	}

	/* A Reply chunk claiming 17 segments. */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 1);
	w32(&w, RPCRDMA_MAX_CHUNK_SEGS + 1);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_LIMIT);

	/* 5 Write chunks of 16 segments: 80 segments in the header. */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	w32(&w, 0);
	for (uint32_t c = 0; c < 5; c++) {
		w32(&w, 1);
		w32(&w, RPCRDMA_MAX_CHUNK_SEGS);
		for (uint32_t i = 0; i < RPCRDMA_MAX_CHUNK_SEGS; i++)
			wseg(&w, i, 4, 0);
	}
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_LIMIT);
}
END_TEST

START_TEST(decode_exactly_at_the_limits_is_accepted)
{
	struct rpcrdma_hdr h;
	struct wb w;

	/* 8 Read chunks (the last of 16 segments), then 3 Write chunks of 13 segments:
	 * 7 + 16 + 39 = 62 segments, plus a 2-segment Reply chunk = 64. */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	for (uint32_t c = 0; c < RPCRDMA_MAX_READ_CHUNKS; c++) {
		uint32_t ns = c == RPCRDMA_MAX_READ_CHUNKS - 1 ? RPCRDMA_MAX_CHUNK_SEGS : 1;

		for (uint32_t i = 0; i < ns; i++) {
			w32(&w, 1);
			w32(&w, 8 * c);
			wseg(&w, c, i, 0);
		}
	}
	w32(&w, 0);
	for (uint32_t c = 0; c < 3; c++) {
		w32(&w, 1);
		w32(&w, 13);
		for (uint32_t i = 0; i < 13; i++)
			wseg(&w, c, i, 0);
	}
	w32(&w, 0);
	w32(&w, 1);
	w32(&w, 2);
	wseg(&w, 1, 1, 1);
	wseg(&w, 2, 2, 2);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), (int)w.n);
	ck_assert_uint_eq(h.nsegs, RPCRDMA_MAX_HDR_SEGS);
	ck_assert_uint_eq(h.n_read, RPCRDMA_MAX_READ_CHUNKS);
	ck_assert_uint_eq(h.read[7].nseg, RPCRDMA_MAX_CHUNK_SEGS);
	ck_assert_uint_le(w.n, RPCRDMA_HDR_MAX);
	round_trip(&h, 0);
}
END_TEST

START_TEST(decode_nomsg_without_any_chunk_is_nomsg_empty)
{
	struct rpcrdma_hdr h;
	struct wb w;

	wfixed(&w, 0x77, 1, 3, RDMA_NOMSG);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_NOMSG_EMPTY);
	ck_assert_uint_eq(h.xid, 0x77);
	ck_assert_uint_eq(h.credits, 3);
	ck_assert_uint_eq(h.proc, RDMA_NOMSG);
	ck_assert_int_eq(rpcrdma_err_action(IW_ERPC_NOMSG_EMPTY), RPCRDMA_REPLY_ERR_CHUNK);

	/* An empty Write chunk is still a chunk. */
	wfixed(&w, 0x77, 1, 3, RDMA_NOMSG);
	w32(&w, 0);
	w32(&w, 1);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), (int)w.n);
}
END_TEST

static int decode_positions(const uint32_t *pos, size_t n, struct rpcrdma_hdr *h)
{
	struct wb w;

	wfixed(&w, 5, 1, 1, RDMA_MSG);
	for (size_t i = 0; i < n; i++) {
		w32(&w, 1);
		w32(&w, pos[i]);
		wseg(&w, (uint32_t)i, 4, i);
	}
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	return decode_exact(w.b, w.n, h);
}

START_TEST(decode_read_positions_must_be_aligned_and_ascending)
{
	static const uint32_t odd[] = {2}, down[] = {16, 8}, back[] = {8, 16, 8},
			      same[] = {0, 8, 8, 8, 20}, again[] = {8, 8, 12, 12};
	struct rpcrdma_hdr h;

	ck_assert_int_eq(decode_positions(odd, 1, &h), IW_ERPC_POSITION);
	ck_assert_uint_eq(h.xid, 5);
	ck_assert_int_eq(decode_positions(down, 2, &h), IW_ERPC_POSITION);
	ck_assert_int_eq(decode_positions(back, 3, &h), IW_ERPC_POSITION);
	ck_assert_int_eq(rpcrdma_err_action(IW_ERPC_POSITION), RPCRDMA_REPLY_ERR_CHUNK);

	ck_assert_int_gt(decode_positions(same, 5, &h), 0);
	ck_assert_uint_eq(h.n_read, 3);
	ck_assert_uint_eq(h.read[0].nseg, 1);
	ck_assert_uint_eq(h.read[1].nseg, 3);
	ck_assert_uint_eq(h.read[1].position, 8);
	ck_assert_uint_eq(h.read[2].position, 20);
	ck_assert_uint_eq(h.segs[h.read[1].first + 2].handle, 3);
	ck_assert_int_gt(decode_positions(again, 4, &h), 0);
	ck_assert_uint_eq(h.n_read, 2);
}
END_TEST

START_TEST(decode_unknown_proc_is_erpc_proc_with_the_fixed_words_filled)
{
	static const uint32_t procs[] = {5, 6, 0x7fffffff, 0xffffffff};
	struct rpcrdma_hdr h;
	struct wb w;

	for (size_t i = 0; i < IW_ARRAY_SIZE(procs); i++) {
		wfixed(&w, 0xabc, 1, 4, procs[i]);
		w32(&w, 0);
		w32(&w, 0);
		w32(&w, 0);
		ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_PROC);
		ck_assert_uint_eq(h.xid, 0xabc);
		ck_assert_uint_eq(h.vers, 1);
		ck_assert_uint_eq(h.credits, 4);
		ck_assert_uint_eq(h.proc, procs[i]);
		ck_assert_uint_eq(h.hdr_len, 0);
	}
	ck_assert_int_eq(rpcrdma_err_action(IW_ERPC_PROC), RPCRDMA_REPLY_ERR_CHUNK);
}
END_TEST

START_TEST(decode_version_two_fills_xid_and_vers_only)
{
	struct rpcrdma_hdr h;
	struct wb w;

	wfixed(&w, 0xdeadbeef, 2, 9, RDMA_MSG);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_VERS);
	ck_assert_uint_eq(h.xid, 0xdeadbeef);
	ck_assert_uint_eq(h.vers, 2);
	ck_assert_uint_eq(h.credits, 0);
	ck_assert_uint_eq(h.proc, 0);
	ck_assert_int_eq(rpcrdma_err_action(IW_ERPC_VERS), RPCRDMA_REPLY_ERR_VERS);

	/* Version 0 and a large version too; under 28 octets it is only short. */
	wfixed(&w, 1, 0, 9, RDMA_MSG);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_SHORT);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_VERS);
	ck_assert_uint_eq(h.vers, 0);

	/* An RDMA_ERROR of another version that is not ERR_VERS is not ours to read. */
	wfixed(&w, 1, 2, 1, RDMA_ERROR);
	w32(&w, ERR_CHUNK);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_VERS);
}
END_TEST

START_TEST(decode_rdma_msgp_is_decoded_and_reported)
{
	struct rpcrdma_hdr h;
	struct wb w;

	wfixed(&w, 0x42, 1, 2, RDMA_MSGP);
	w32(&w, 4096);
	w32(&w, 512);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 1);
	w32(&w, 1);
	wseg(&w, 0xcc, 64, 0x1234);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_MSGP);
	ck_assert_uint_eq(h.msgp_align, 4096);
	ck_assert_uint_eq(h.msgp_thresh, 512);
	ck_assert(h.has_reply);
	ck_assert_uint_eq(h.segs[h.reply.first].handle, 0xcc);
	ck_assert_uint_eq(h.hdr_len, w.n);
	ck_assert_int_eq(rpcrdma_err_action(IW_ERPC_MSGP), RPCRDMA_REPLY_ERR_CHUNK);
	/* 28 octets of RDMA_MSGP hold the fixed words and align/thresh only. */
	ck_assert_int_eq(decode_exact(w.b, 28, &h), IW_ERPC_XDR);
	ck_assert_int_eq(decode_exact(w.b, 27, &h), IW_ERPC_SHORT);
}
END_TEST

START_TEST(decode_rdma_done_is_16_octets_and_ignores_the_rest)
{
	struct rpcrdma_hdr h;
	struct wb w;

	wfixed(&w, 0x99, 1, 0, RDMA_DONE);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), 16);
	w32(&w, 0x12345678);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), 16);
	ck_assert_uint_eq(h.hdr_len, 16);
	ck_assert_uint_eq(h.xid, 0x99);
}
END_TEST

START_TEST(decode_rdma_error_with_an_unknown_code_is_discarded)
{
	struct rpcrdma_hdr h;
	struct wb w;

	wfixed(&w, 0x99, 1, 1, RDMA_ERROR);
	w32(&w, 3);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_ERRCODE);
	ck_assert_uint_eq(h.xid, 0x99);
	ck_assert_uint_eq(h.proc, RDMA_ERROR);
	ck_assert_int_eq(rpcrdma_err_action(IW_ERPC_ERRCODE), RPCRDMA_DISCARD);
	ck_assert_int_eq(rpcrdma_err_action(IW_ERPC_SHORT), RPCRDMA_DISCARD);

	/* ERR_CHUNK is 20 octets: 16 are short; ERR_VERS needs 28. */
	wfixed(&w, 0x99, 1, 1, RDMA_ERROR);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_SHORT);
	w32(&w, ERR_VERS);
	w32(&w, 1);
	ck_assert_int_eq(decode_exact(w.b, w.n, &h), IW_ERPC_SHORT);
}
END_TEST

START_TEST(decode_random_input_never_crashes_and_round_trips_when_accepted)
{
	struct th_rng rng;
	unsigned ok = 0;

	th_rng_init(&rng, th_seed_from_env());
	for (int iter = 0; iter < 20000; iter++) {
		uint8_t buf[256], out[RPCRDMA_HDR_MAX];
		struct rpcrdma_hdr h, g;
		size_t n = (size_t)th_rng_range(&rng, 0, sizeof(buf));
		int r, m;

		th_rng_fill(&rng, buf, n);
		/* Bias towards plausible headers: small words in the structure. */
		for (size_t i = 0; i + 4 <= n; i += 4)
			if (th_rng_range(&rng, 0, 3))
				iw_put_be32(buf + i, (uint32_t)th_rng_range(&rng, 0, 2));
		if (n >= 8)
			iw_put_be32(buf + 4, 1);
		r = decode_exact(buf, n, &h);
		if (r < 0 && r != IW_ERPC_MSGP)
			continue;
		ok++;
		m = rpcrdma_hdr_encode(&h, out, sizeof(out));
		ck_assert_int_eq(m, (int)h.hdr_len);
		ck_assert(memcmp(out, buf, (size_t)m) == 0);
		ck_assert_int_eq(decode_exact(out, (size_t)m, &g), r);
		ck_assert(hdr_same(&h, &g));
	}
	ck_assert_uint_gt(ok, 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* encoder                                                                  */
/* ---------------------------------------------------------------------- */

START_TEST(encode_into_a_short_buffer_is_enospc_and_writes_nothing_past_cap)
{
	struct rpcrdma_segment s = mkseg(1, 2, 3);
	uint8_t buf[RPCRDMA_HDR_MAX + 16];
	struct rpcrdma_hdr h;
	size_t need;

	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 4, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_reply(&h, &s), 0);
	need = rpcrdma_hdr_size(&h);
	for (size_t cap = 0; cap < need; cap++) {
		memset(buf, 0xa5, sizeof(buf));
		ck_assert_int_eq(rpcrdma_hdr_encode(&h, buf, cap), IW_ENOSPC);
		for (size_t i = cap; i < sizeof(buf); i++)
			ck_assert_uint_eq(buf[i], 0xa5);
	}
	memset(buf, 0xa5, sizeof(buf));
	ck_assert_int_eq(rpcrdma_hdr_encode(&h, buf, need), (int)need);
	for (size_t i = need; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0xa5);

	rpcrdma_hdr_init(&h, 1, 1, RDMA_ERROR);
	h.err = ERR_CHUNK;
	ck_assert_int_eq(rpcrdma_hdr_encode(&h, buf, 19), IW_ENOSPC);
	ck_assert_int_eq(rpcrdma_hdr_encode(&h, buf, 20), 20);
}
END_TEST

START_TEST(encode_an_inconsistent_struct_is_einval)
{
	struct rpcrdma_segment s = mkseg(1, 2, 3);
	struct rpcrdma_hdr h, g;
	uint8_t buf[RPCRDMA_HDR_MAX];

	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 8, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_read(&h, true, 16, &s), 0);
	ck_assert_int_eq(rpcrdma_hdr_add_write(&h, true, &s), 0);

	g = h;
	g.proc = 5;
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	ck_assert_uint_eq(rpcrdma_hdr_size(&g), 0);
	g = h;
	g.n_read = RPCRDMA_MAX_READ_CHUNKS + 1;
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	g = h;
	g.n_write = RPCRDMA_MAX_WRITE_CHUNKS + 1;
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	g = h;
	g.nsegs = RPCRDMA_MAX_HDR_SEGS + 1;
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	g = h;
	g.write[0].first = 3; /* past nsegs */
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	g = h;
	g.write[0].nseg = RPCRDMA_MAX_CHUNK_SEGS + 1;
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	g = h;
	g.read[1].position = 8; /* equal positions would merge on decode */
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	g = h;
	g.read[1].position = 18; /* not a multiple of 4 */
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	g = h;
	g.read[1].nseg = 0; /* a Read chunk has a segment */
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	rpcrdma_hdr_init(&g, 1, 1, RDMA_NOMSG);
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	rpcrdma_hdr_init(&g, 1, 1, RDMA_ERROR);
	g.err = 3;
	ck_assert_int_eq(rpcrdma_hdr_encode(&g, buf, sizeof(buf)), IW_EINVAL);
	ck_assert_int_gt(rpcrdma_hdr_encode(&h, buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(chunk_len_sums_segments_without_overflow)
{
	struct rpcrdma_segment s = mkseg(1, 0xffffffffu, 0);
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, 1, 1, RDMA_MSG);
	for (int i = 0; i < RPCRDMA_MAX_CHUNK_SEGS; i++)
		ck_assert_int_eq(rpcrdma_hdr_add_write(&h, i == 0, &s), 0);
	ck_assert_uint_eq(rpcrdma_chunk_len(&h, &h.write[0]),
			  (uint64_t)RPCRDMA_MAX_CHUNK_SEGS * 0xffffffffu);
}
END_TEST

START_TEST(err_action_maps_every_decode_error_as_rfc8166_section_4_5)
{
	static const struct {
		int err;
		enum rpcrdma_err_action act;
	} map[] = {
		{IW_ERPC_SHORT, RPCRDMA_DISCARD},
		{IW_ERPC_VERS, RPCRDMA_REPLY_ERR_VERS},
		{IW_ERPC_PROC, RPCRDMA_REPLY_ERR_CHUNK},
		{IW_ERPC_XDR, RPCRDMA_REPLY_ERR_CHUNK},
		{IW_ERPC_LIMIT, RPCRDMA_REPLY_ERR_CHUNK},
		{IW_ERPC_NOMSG_EMPTY, RPCRDMA_REPLY_ERR_CHUNK},
		{IW_ERPC_POSITION, RPCRDMA_REPLY_ERR_CHUNK},
		{IW_ERPC_MSGP, RPCRDMA_REPLY_ERR_CHUNK},
		{IW_ERPC_XID, RPCRDMA_REPLY_ERR_CHUNK},
		{IW_ERPC_ERRCODE, RPCRDMA_DISCARD},
		{IW_OK, RPCRDMA_DISCARD},
		{IW_EINVAL, RPCRDMA_DISCARD},
	};

	for (size_t i = 0; i < IW_ARRAY_SIZE(map); i++)
		ck_assert_msg(rpcrdma_err_action(map[i].err) == map[i].act, "%s",
			      rpcrdma_errname(map[i].err));
}
END_TEST

START_TEST(every_erpc_code_has_a_name_and_a_text)
{
	for (int e = IW_ERPC_SHORT; e >= IW_ERPC_PDATA; e--) {
		ck_assert_str_ne(rpcrdma_errname(e), "IW_E?");
		ck_assert_str_ne(rpcrdma_strerror(e), "unknown error");
	}
	for (int e = IW_ERPC_REMOTE_VERS; e >= IW_ERPC_RDMA; e--)
		ck_assert_str_ne(rpcrdma_errname(e), "IW_E?");
	ck_assert_str_eq(rpcrdma_errname(IW_ERPC_NOMSG_EMPTY), "IW_ERPC_NOMSG_EMPTY");
	ck_assert_str_eq(rpcrdma_errname(IW_ERPC_RDMA), "IW_ERPC_RDMA");
}
END_TEST

/* ---------------------------------------------------------------------- */
/* RFC 8797 private data                                                    */
/* ---------------------------------------------------------------------- */

START_TEST(pdata_of_the_linux_capture_decodes_and_reencodes)
{
	static const uint8_t cap[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
	struct rpcrdma_cm_pdata p;
	uint8_t out[16];

	ck_assert_int_eq(rpcrdma_cm_pdata_decode(cap, sizeof(cap), &p), 0);
	ck_assert(p.present);
	ck_assert_uint_eq(p.version, 1);
	ck_assert_uint_eq(p.flags, RPCRDMA_CM_F_SND_W_INV_OK);
	ck_assert_uint_eq(p.send_size, 4096);
	ck_assert_uint_eq(p.recv_size, 4096);
	ck_assert(!p.ext_present);
	ck_assert_int_eq(rpcrdma_cm_pdata_encode(&p, out, sizeof(out)), RPCRDMA_CM_PDATA_LEN);
	ck_assert(memcmp(out, cap, sizeof(cap)) == 0);
}
END_TEST

START_TEST(pdata_absent_or_foreign_means_1024_octet_defaults)
{
	static const uint8_t garbage[] = {0x00, 0x00, 0x00, 0x01, 0x01, 0x01, 0x03, 0x03},
			     short7[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03},
			     vers2[] = {0xf6, 0xab, 0x0e, 0x18, 0x02, 0x01, 0x03, 0x03};
	struct rpcrdma_cm_pdata p;

	ck_assert_int_eq(rpcrdma_cm_pdata_decode(NULL, 0, &p), IW_ERPC_PDATA);
	ck_assert(!p.present);
	ck_assert_uint_eq(p.send_size, RPCRDMA_INLINE_MIN);
	ck_assert_uint_eq(p.recv_size, RPCRDMA_INLINE_MIN);
	ck_assert_int_eq(rpcrdma_cm_pdata_decode(garbage, sizeof(garbage), &p), IW_ERPC_PDATA);
	ck_assert(!p.present);
	ck_assert_uint_eq(p.send_size, 1024);
	ck_assert_int_eq(rpcrdma_cm_pdata_decode(short7, sizeof(short7), &p), IW_ERPC_PDATA);
	ck_assert(!p.present);
	ck_assert_int_eq(rpcrdma_cm_pdata_decode(vers2, sizeof(vers2), &p), IW_ERPC_PDATA);
	ck_assert(!p.present);
	ck_assert_uint_eq(p.recv_size, 1024);
}
END_TEST

START_TEST(pdata_with_our_extension_block_round_trips)
{
	struct rpcrdma_cm_pdata p = {.present = true,
				     .version = 1,
				     .flags = RPCRDMA_CM_F_SND_W_INV_OK,
				     .send_size = 8192,
				     .recv_size = 262144,
				     .ext_present = true,
				     .ext_flags = RPCRDMA_EXT_F_RPRC},
				q;
	static const uint8_t want[] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x07, 0xff,
				       0x69, 0x77, 0x52, 0x50, 0x01, 0x01, 0x00, 0x00};
	uint8_t out[32];

	ck_assert_int_eq(rpcrdma_cm_pdata_encode(&p, out, sizeof(out)), 16);
	ck_assert(memcmp(out, want, sizeof(want)) == 0);
	ck_assert_int_eq(rpcrdma_cm_pdata_encode(&p, out, 15), IW_ENOSPC);
	ck_assert_int_eq(rpcrdma_cm_pdata_decode(out, 16, &q), 0);
	ck_assert(q.present && q.ext_present);
	ck_assert_uint_eq(q.ext_flags, RPCRDMA_EXT_F_RPRC);
	ck_assert_uint_eq(q.send_size, 8192);
	ck_assert_uint_eq(q.recv_size, 262144);
	/* A foreign block after the RFC 8797 octets is ignored, not fatal. */
	out[8] ^= 0xff;
	ck_assert_int_eq(rpcrdma_cm_pdata_decode(out, 16, &q), 0);
	ck_assert(q.present && !q.ext_present);
	/* An extension block cut short is not there. */
	out[8] ^= 0xff;
	ck_assert_int_eq(rpcrdma_cm_pdata_decode(out, 15, &q), 0);
	ck_assert(!q.ext_present);
}
END_TEST

START_TEST(pdata_sizes_round_down_and_clamp_to_1k_256k)
{
	static const struct {
		uint32_t size;
		uint8_t octet;
	} t[] = {{0, 0},    {1023, 0},	   {1024, 0},	    {2047, 0},	       {4096, 3},
		 {5000, 3}, {262144, 255}, {1u << 30, 255}, {0xffffffffu, 255}};
	struct rpcrdma_cm_pdata p = {.present = true, .version = 1};
	uint8_t out[8];

	for (size_t i = 0; i < IW_ARRAY_SIZE(t); i++) {
		p.send_size = t[i].size;
		p.recv_size = t[i].size;
		ck_assert_int_eq(rpcrdma_cm_pdata_encode(&p, out, sizeof(out)), 8);
		ck_assert_uint_eq(out[6], t[i].octet);
		ck_assert_uint_eq(out[7], t[i].octet);
	}
	ck_assert_int_eq(rpcrdma_cm_pdata_encode(&p, out, 7), IW_ENOSPC);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* ONC RPC header                                                           */
/* ---------------------------------------------------------------------- */

static void rpc_call(struct wb *w, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	/* zeroed: some tests parse the whole buffer, past what they wrote */
	memset(w, 0, sizeof(*w));
	w32(w, xid);
	w32(w, RPC_MSG_CALL);
	w32(w, 2);
	w32(w, prog);
	w32(w, vers);
	w32(w, proc);
}

START_TEST(rpc_nfs_null_call_parses_to_body_offset_40)
{
	struct rpcrdma_rpcinfo ri;
	struct wb w;

	rpc_call(&w, 0x01020304, 100003, 3, 0);
	w32(&w, 0); /* AUTH_NONE */
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), 0);
	ck_assert_uint_eq(ri.xid, 0x01020304);
	ck_assert_uint_eq(ri.msg_type, RPC_MSG_CALL);
	ck_assert_uint_eq(ri.rpcvers, 2);
	ck_assert_uint_eq(ri.prog, 100003);
	ck_assert_uint_eq(ri.vers, 3);
	ck_assert_uint_eq(ri.proc, 0);
	ck_assert_uint_eq(ri.cred_flavor, 0);
	ck_assert_uint_eq(ri.body_off, 40);
	/* Every shorter prefix is undecodable. */
	for (size_t n = 0; n < w.n; n++)
		ck_assert_int_eq(rpcrdma_rpc_parse(w.b, n, &ri), IW_ERPC_RPC);
}
END_TEST

START_TEST(rpc_call_with_auth_sys_skips_the_padded_credential)
{
	struct rpcrdma_rpcinfo ri;
	struct wb w;

	rpc_call(&w, 7, 100003, 3, 7); /* WRITE */
	w32(&w, 1);		       /* AUTH_SYS */
	w32(&w, 32);		       /* stamp, "localhost", uid, gid, no gids */
	w32(&w, 0x5eed);
	w32(&w, 9);
	memcpy(w.b + w.n, "localhost\0\0\0", 12);
	w.n += 12;
	w32(&w, 1000);
	w32(&w, 1000);
	w32(&w, 0);
	w32(&w, 0); /* verf AUTH_NONE */
	w32(&w, 0);
	w32(&w, 0xfeedface); /* first word of the arguments */
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), 0);
	ck_assert_uint_eq(ri.cred_flavor, 1);
	ck_assert_uint_eq(ri.proc, 7);
	ck_assert_uint_eq(ri.body_off, 24 + 8 + 32 + 8);
	ck_assert_uint_eq(iw_get_be32(w.b + ri.body_off), 0xfeedface);

	/* An opaque body of 29 octets occupies 32: cut inside the pad, undecodable. */
	iw_put_be32(w.b + 28, 29);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), 0);
	ck_assert_uint_eq(ri.body_off, 24 + 8 + 32 + 8);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, 24 + 8 + 30, &ri), IW_ERPC_RPC);

	/* A credential body over 400 octets is refused before it is skipped. */
	iw_put_be32(w.b + 28, 401);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, sizeof(w.b), &ri), IW_ERPC_RPC);
	iw_put_be32(w.b + 28, 400);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, sizeof(w.b), &ri), 0);
	ck_assert_uint_eq(ri.body_off, 24 + 8 + 400 + 8);
	/* So is a verifier body over 400 octets. */
	iw_put_be32(w.b + 24 + 8 + 400 + 4, 404);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, sizeof(w.b), &ri), IW_ERPC_RPC);
	iw_put_be32(w.b + 24 + 8 + 400 + 4, 0);

	/* RPCSEC_GSS is reported by flavor. */
	iw_put_be32(w.b + 24, 6);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, sizeof(w.b), &ri), 0);
	ck_assert_uint_eq(ri.cred_flavor, 6);
}
END_TEST

START_TEST(rpc_call_with_a_wrong_rpc_version_or_msg_type_is_refused)
{
	struct rpcrdma_rpcinfo ri;
	struct wb w;

	rpc_call(&w, 1, 100003, 3, 0);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	w32(&w, 0);
	iw_put_be32(w.b + 8, 3);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), IW_ERPC_RPC);
	iw_put_be32(w.b + 8, 2);
	iw_put_be32(w.b + 4, 2);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), IW_ERPC_RPC);
}
END_TEST

START_TEST(rpc_accepted_replies_give_the_results_offset)
{
	struct rpcrdma_rpcinfo ri;
	struct wb w;

	w.n = 0;
	w32(&w, 0x55);
	w32(&w, RPC_MSG_REPLY);
	w32(&w, 0); /* MSG_ACCEPTED */
	w32(&w, 0); /* verf AUTH_NONE */
	w32(&w, 0);
	w32(&w, 0); /* SUCCESS */
	w32(&w, 0); /* nfsstat3 NFS3_OK: first word of the results */
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), 0);
	ck_assert_uint_eq(ri.xid, 0x55);
	ck_assert_uint_eq(ri.msg_type, RPC_MSG_REPLY);
	ck_assert_uint_eq(ri.reply_stat, 0);
	ck_assert_uint_eq(ri.accept_stat, 0);
	ck_assert_uint_eq(ri.body_off, 24);
	for (size_t n = 0; n < 24; n++)
		ck_assert_int_eq(rpcrdma_rpc_parse(w.b, n, &ri), IW_ERPC_RPC);

	/* PROG_MISMATCH carries low and high. */
	iw_put_be32(w.b + 20, 2);
	w32(&w, 3);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), 0);
	ck_assert_uint_eq(ri.accept_stat, 2);
	ck_assert_uint_eq(ri.body_off, 32);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, 28, &ri), IW_ERPC_RPC);

	/* GARBAGE_ARGS has nothing after accept_stat; accept_stat 6 does not exist. */
	iw_put_be32(w.b + 20, 4);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, 24, &ri), 0);
	ck_assert_uint_eq(ri.accept_stat, 4);
	ck_assert_uint_eq(ri.body_off, 24);
	iw_put_be32(w.b + 20, 6);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), IW_ERPC_RPC);
}
END_TEST

START_TEST(rpc_denied_replies_parse_to_their_end)
{
	struct rpcrdma_rpcinfo ri;
	struct wb w;

	w.n = 0;
	w32(&w, 0x66);
	w32(&w, RPC_MSG_REPLY);
	w32(&w, 1); /* MSG_DENIED */
	w32(&w, 0); /* RPC_MISMATCH */
	w32(&w, 2);
	w32(&w, 2);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), 0);
	ck_assert_uint_eq(ri.reply_stat, 1);
	ck_assert_uint_eq(ri.body_off, 24);
	for (size_t n = 0; n < w.n; n++)
		ck_assert_int_eq(rpcrdma_rpc_parse(w.b, n, &ri), IW_ERPC_RPC);

	iw_put_be32(w.b + 12, 1); /* AUTH_ERROR, auth_stat AUTH_BADCRED (2) */
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, 20, &ri), 0);
	ck_assert_uint_eq(ri.body_off, 20);
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, 16, &ri), IW_ERPC_RPC);

	iw_put_be32(w.b + 12, 2); /* no such reject_stat */
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), IW_ERPC_RPC);
	iw_put_be32(w.b + 8, 2); /* no such reply_stat */
	ck_assert_int_eq(rpcrdma_rpc_parse(w.b, w.n, &ri), IW_ERPC_RPC);
}
END_TEST

static Suite *rpcrdma_wire_suite(void)
{
	Suite *s = suite_create("rpcrdma_wire");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_vector_decodes_to_its_expected_fields);
	tcase_add_test(tc, every_vector_reencodes_byte_exact);
	tcase_add_test(tc, the_framed_vector_carries_the_nfs_null_call);
	tcase_add_test(tc, builder_message_without_chunks_is_the_28_octet_minimum);
	tcase_add_test(tc, builder_read_chunks_group_segments_by_position);
	tcase_add_test(tc, builder_long_call_is_nomsg_with_a_position_zero_read_chunk);
	tcase_add_test(tc, builder_long_reply_is_nomsg_with_a_reply_chunk);
	tcase_add_test(tc, builder_write_list_with_empty_unused_and_multi_segment_chunks);
	tcase_add_test(tc, builder_every_list_at_once_round_trips);
	tcase_add_test(tc, builder_msgp_done_and_errors_round_trip);
	tcase_add_test(tc, builder_limits_are_reported_as_erpc_limit);
	tcase_add_test(tc, builder_refuses_to_grow_a_chunk_that_is_no_longer_last);
	tcase_add_test(tc, builder_random_headers_round_trip);
	tcase_add_test(tc, decode_truncated_at_every_length_is_short_or_an_xdr_error);
	tcase_add_test(tc, decode_discriminator_two_is_an_xdr_error_in_every_list);
	tcase_add_test(tc, decode_counts_over_the_limits_are_erpc_limit);
	tcase_add_test(tc, decode_exactly_at_the_limits_is_accepted);
	tcase_add_test(tc, decode_nomsg_without_any_chunk_is_nomsg_empty);
	tcase_add_test(tc, decode_read_positions_must_be_aligned_and_ascending);
	tcase_add_test(tc, decode_unknown_proc_is_erpc_proc_with_the_fixed_words_filled);
	tcase_add_test(tc, decode_version_two_fills_xid_and_vers_only);
	tcase_add_test(tc, decode_rdma_msgp_is_decoded_and_reported);
	tcase_add_test(tc, decode_rdma_done_is_16_octets_and_ignores_the_rest);
	tcase_add_test(tc, decode_rdma_error_with_an_unknown_code_is_discarded);
	tcase_add_test(tc, decode_random_input_never_crashes_and_round_trips_when_accepted);
	tcase_add_test(tc, encode_into_a_short_buffer_is_enospc_and_writes_nothing_past_cap);
	tcase_add_test(tc, encode_an_inconsistent_struct_is_einval);
	tcase_add_test(tc, chunk_len_sums_segments_without_overflow);
	tcase_add_test(tc, err_action_maps_every_decode_error_as_rfc8166_section_4_5);
	tcase_add_test(tc, every_erpc_code_has_a_name_and_a_text);
	tcase_add_test(tc, pdata_of_the_linux_capture_decodes_and_reencodes);
	tcase_add_test(tc, pdata_absent_or_foreign_means_1024_octet_defaults);
	tcase_add_test(tc, pdata_with_our_extension_block_round_trips);
	tcase_add_test(tc, pdata_sizes_round_down_and_clamp_to_1k_256k);
	tcase_add_test(tc, rpc_nfs_null_call_parses_to_body_offset_40);
	tcase_add_test(tc, rpc_call_with_auth_sys_skips_the_padded_credential);
	tcase_add_test(tc, rpc_call_with_a_wrong_rpc_version_or_msg_type_is_refused);
	tcase_add_test(tc, rpc_accepted_replies_give_the_results_offset);
	tcase_add_test(tc, rpc_denied_replies_parse_to_their_end);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(rpcrdma_wire_suite)
