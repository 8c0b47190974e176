/* SPDX-License-Identifier: MIT */
/*
 * test_rdmap_hdr.c - RDMA Read Request header and Terminate message
 * (RFC 5040 §4.4, §4.8, figure 10) against the ddp-rdmap vectors, plus
 * truncation, reserved-bit, layer-range and random round-trip properties;
 * the RFC 7306 Atomic Request / Atomic Response / Immediate Data headers
 * against the rfc7306 vectors, and rdmap_atomic_apply against a bit-by-bit
 * model of the masked operations.
 */
#include <stdlib.h>
#include <string.h>

#include <iwarp/rdmap.h>

#include "iw_bytes.h"
#include "iw_vectors.h"
#include "th.h"

#define SEG_MAX 256

static const struct ddp_rdmap_vector *vec_find(const char *name)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_rdmap_vectors); i++)
		if (strcmp(ddp_rdmap_vectors[i].name, name) == 0)
			return &ddp_rdmap_vectors[i];
	return NULL;
}

static bool is_term_vec(const struct ddp_rdmap_vector *v)
{
	return strncmp(v->name, "terminate-", 10) == 0;
}

static size_t vec_bytes(const struct ddp_rdmap_vector *v, uint8_t *buf)
{
	long n = th_hex_decode(v->bytes_hex, buf, SEG_MAX);

	ck_assert_int_gt(n, DDP_UNTAGGED_HDR_LEN);
	return (size_t)n;
}

/* ---------------------------------------------------------------------- */
/* Read Request                                                            */
/* ---------------------------------------------------------------------- */

START_TEST(read_req_vector_fields_decode_and_reencode_exactly)
{
	const struct ddp_rdmap_vector *v = vec_find("rdma-read-request");
	uint8_t seg[SEG_MAX], out[RDMAP_READ_REQ_LEN];
	struct rdmap_read_req r;
	size_t n;

	ck_assert_ptr_nonnull(v);
	n = vec_bytes(v, seg);
	ck_assert_uint_eq(n, DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN);
	rdmap_read_req_decode(seg + DDP_UNTAGGED_HDR_LEN, &r);
	ck_assert_uint_eq(r.sink_stag, (uint32_t)v->sink_stag);
	ck_assert_uint_eq(r.sink_to, (uint64_t)v->sink_to);
	ck_assert_uint_eq(r.size, (uint32_t)v->read_size);
	ck_assert_uint_eq(r.src_stag, (uint32_t)v->src_stag);
	ck_assert_uint_eq(r.src_to, (uint64_t)v->src_to);
	rdmap_read_req_encode(&r, out);
	ck_assert_mem_eq(out, seg + DDP_UNTAGGED_HDR_LEN, RDMAP_READ_REQ_LEN);
	/* The RDMAP opcode of the segment says Read Request, untagged, QN 1. */
	ck_assert_uint_eq(rdmap_ctrl_opcode(seg[1]), RDMAP_OP_READ_REQ);
	ck_assert_uint_eq(iw_get_be32(seg + 6), rdmap_opcode_info(seg[1])->qn);
}
END_TEST

START_TEST(read_req_random_round_trip_and_big_endian_layout)
{
	struct th_rng rng;

	th_rng_init(&rng, th_seed_from_env());
	for (int i = 0; i < 1000; i++) {
		struct rdmap_read_req a, b;
		uint8_t buf[RDMAP_READ_REQ_LEN];

		a.sink_stag = (uint32_t)th_rng_next(&rng);
		a.sink_to = th_rng_next(&rng);
		a.size = (uint32_t)th_rng_next(&rng);
		a.src_stag = (uint32_t)th_rng_next(&rng);
		a.src_to = th_rng_next(&rng);
		rdmap_read_req_encode(&a, buf);
		ck_assert_uint_eq(iw_get_be32(buf), a.sink_stag);
		ck_assert_uint_eq(iw_get_be64(buf + 20), a.src_to);
		rdmap_read_req_decode(buf, &b);
		ck_assert(a.sink_stag == b.sink_stag && a.sink_to == b.sink_to &&
			  a.size == b.size && a.src_stag == b.src_stag && a.src_to == b.src_to);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Terminate vectors                                                        */
/* ---------------------------------------------------------------------- */

START_TEST(term_every_vector_decodes_to_its_fields_and_reencodes_exactly)
{
	unsigned seen = 0;

	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_rdmap_vectors); i++) {
		const struct ddp_rdmap_vector *v = &ddp_rdmap_vectors[i];
		uint8_t seg[SEG_MAX], out[RDMAP_TERM_MAX_LEN], hdr[SEG_MAX];
		const uint8_t *p;
		struct rdmap_term t;
		size_t n, plen;
		ssize_t r;

		if (!is_term_vec(v))
			continue;
		seen++;
		n = vec_bytes(v, seg);
		ck_assert_uint_eq(rdmap_ctrl_opcode(seg[1]), RDMAP_OP_TERMINATE);
		p = seg + DDP_UNTAGGED_HDR_LEN;
		plen = n - DDP_UNTAGGED_HDR_LEN;
		r = rdmap_term_decode(p, plen, &t);
		ck_assert_msg(r == (ssize_t)plen, "%s: %zd", v->name, r);
		ck_assert_int_eq(t.code.layer, v->layer);
		ck_assert_int_eq(t.code.etype, v->etype);
		ck_assert_int_eq(t.code.ecode, v->ecode);
		ck_assert_int_eq(t.m, v->M);
		ck_assert_int_eq(t.d, v->D);
		ck_assert_int_eq(t.r, v->R);
		if (v->ddp_segment_length >= 0)
			ck_assert_int_eq(t.ddp_seg_len, v->ddp_segment_length);
		if (v->terminated_ddp_header_hex[0]) {
			long hl = th_hex_decode(v->terminated_ddp_header_hex, hdr, sizeof(hdr));

			ck_assert_int_eq(t.ddp_hdr_len, hl);
			ck_assert_mem_eq(t.ddp_hdr, hdr, (size_t)hl);
		} else {
			ck_assert(!t.d);
		}
		if (v->terminated_rdma_header_hex[0]) {
			ck_assert_int_eq(
				th_hex_decode(v->terminated_rdma_header_hex, hdr, sizeof(hdr)),
				RDMAP_READ_REQ_LEN);
			ck_assert_mem_eq(t.rreq, hdr, RDMAP_READ_REQ_LEN);
		} else {
			ck_assert(!t.r);
		}
		ck_assert_uint_eq(rdmap_term_len(&t), plen);
		ck_assert_int_eq(rdmap_term_encode(&t, out, sizeof(out)), (ssize_t)plen);
		ck_assert_mem_eq(out, p, plen);
	}
	ck_assert_uint_ge(seen, 4);
}
END_TEST

START_TEST(term_fill_reproduces_every_vector_from_code_and_header_copies)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_rdmap_vectors); i++) {
		const struct ddp_rdmap_vector *v = &ddp_rdmap_vectors[i];
		uint8_t seg[SEG_MAX], out[RDMAP_TERM_MAX_LEN], dh[SEG_MAX], rr[SEG_MAX];
		struct iw_term_code code;
		const uint8_t *ddp_hdr = NULL, *rreq = NULL;
		size_t n, dhl = 0;
		struct rdmap_term t;

		if (!is_term_vec(v))
			continue;
		n = vec_bytes(v, seg);
		code.layer = (uint8_t)v->layer;
		code.etype = (uint8_t)v->etype;
		code.ecode = (uint8_t)v->ecode;
		if (v->terminated_ddp_header_hex[0]) {
			dhl = (size_t)th_hex_decode(v->terminated_ddp_header_hex, dh, sizeof(dh));
			ddp_hdr = dh;
		}
		if (v->terminated_rdma_header_hex[0]) {
			th_hex_decode(v->terminated_rdma_header_hex, rr, sizeof(rr));
			rreq = rr;
		}
		rdmap_term_fill(&t, &code, ddp_hdr, dhl,
				(uint16_t)(v->ddp_segment_length < 0 ? 0 : v->ddp_segment_length),
				rreq);
		ck_assert_int_eq(rdmap_term_encode(&t, out, sizeof(out)),
				 (ssize_t)(n - DDP_UNTAGGED_HDR_LEN));
		ck_assert_msg(memcmp(out, seg + DDP_UNTAGGED_HDR_LEN, n - DDP_UNTAGGED_HDR_LEN) ==
				      0,
			      "%s", v->name);
	}
}
END_TEST

START_TEST(term_every_truncation_asks_for_more)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(ddp_rdmap_vectors); i++) {
		const struct ddp_rdmap_vector *v = &ddp_rdmap_vectors[i];
		uint8_t seg[SEG_MAX];
		struct rdmap_term t;
		size_t n;

		if (!is_term_vec(v))
			continue;
		n = vec_bytes(v, seg) - DDP_UNTAGGED_HDR_LEN;
		for (size_t len = 0; len < n; len++) {
			uint8_t *p = th_memdup_exact(seg + DDP_UNTAGGED_HDR_LEN, len);

			ck_assert_msg(rdmap_term_decode(p, len, &t) == IW_EAGAIN, "%s len %zu",
				      v->name, len);
			free(p);
		}
	}
}
END_TEST

START_TEST(term_layers_above_llp_are_erange_but_reported)
{
	const struct ddp_rdmap_vector *v = vec_find("terminate-ddp-untagged-no-buffer");
	uint8_t seg[SEG_MAX];
	size_t n;

	ck_assert_ptr_nonnull(v);
	n = vec_bytes(v, seg) - DDP_UNTAGGED_HDR_LEN;
	for (uint8_t layer = 3; layer <= 15; layer++) {
		uint8_t *p = seg + DDP_UNTAGGED_HDR_LEN;
		struct rdmap_term t;

		p[0] = (uint8_t)(layer << 4 | 0x2);
		ck_assert_int_eq(rdmap_term_decode(p, n, &t), IW_ERANGE);
		ck_assert_uint_eq(t.code.layer, layer);
		ck_assert_uint_eq(t.code.etype, 2);
		ck_assert_uint_eq(t.code.ecode, 2);
		ck_assert(t.m && t.d && !t.r);
		ck_assert_uint_eq(t.ddp_seg_len, 118);
		ck_assert_uint_eq(t.ddp_hdr_len, DDP_UNTAGGED_HDR_LEN);
	}
}
END_TEST

/* Linux siw's control word (rdmap.h): 21 01 03 00 for "DDP untagged, invalid
 * QN, header copied", where RFC 5040 §4.8 says 12 01 c0 00. */
START_TEST(term_in_siw_layout_is_read_as_the_defined_code)
{
	const struct ddp_rdmap_vector *v = vec_find("terminate-ddp-untagged-no-buffer");
	uint8_t seg[SEG_MAX], *p = seg + DDP_UNTAGGED_HDR_LEN;
	struct rdmap_term std, t;
	size_t n;
	bool siw;

	ck_assert_ptr_nonnull(v);
	n = vec_bytes(v, seg) - DDP_UNTAGGED_HDR_LEN;
	ck_assert_int_gt(rdmap_term_decode(p, n, &std), 0);
	/* the RFC layout is read as such */
	ck_assert_int_gt(rdmap_term_read(p, n, n, &t, &siw), 0);
	ck_assert(!siw);
	ck_assert_mem_eq(&t, &std, sizeof(t));
	/* the same Terminate in siw's layout */
	p[0] = (uint8_t)(p[0] << 4 | p[0] >> 4);
	p[2] = (uint8_t)((p[2] & RDMAP_TERM_M ? 0x01 : 0) | (p[2] & RDMAP_TERM_D ? 0x02 : 0) |
			 (p[2] & RDMAP_TERM_R ? 0x04 : 0));
	ck_assert_int_eq(p[0], 0x21);
	ck_assert_int_eq(p[2], 0x03);
	ck_assert_int_gt(rdmap_term_read(p, n, n, &t, &siw), 0);
	ck_assert(siw);
	ck_assert_mem_eq(&t, &std, sizeof(t));
	ck_assert_int_gt(rdmap_term_decode_siw(p, n, &t), 0);
	ck_assert_mem_eq(&t, &std, sizeof(t));
	/* both define a code ("RDMAP, unexpected opcode" per siw reads per the
	 * RFC as MPA code 6), but only siw's M/D account for the header copy */
	p[0] = 0x20;
	p[1] = 0x06;
	ck_assert_int_gt(rdmap_term_read(p, n, n, &t, &siw), 0);
	ck_assert(siw);
	ck_assert_uint_eq(t.code.layer, 0);
	ck_assert_uint_eq(t.code.etype, 2);
	ck_assert(t.m && t.d && !t.r);
	/* the control word alone: now the RFC reading (no copies) is the one that
	 * fits, siw's announces a copy that is not there */
	ck_assert_int_eq(rdmap_term_read(p, RDMAP_TERM_CTRL_LEN, RDMAP_TERM_CTRL_LEN, &t, &siw),
			 RDMAP_TERM_CTRL_LEN);
	ck_assert(!siw);
	ck_assert_uint_eq(t.code.layer, 2);
	/* neither reading defined: the RFC reading, not flagged */
	p[0] = 0x2F;
	p[1] = 0x02;
	ck_assert_int_gt(rdmap_term_read(p, n, n, &t, &siw), 0);
	ck_assert(!siw);
	ck_assert_uint_eq(t.code.layer, 2);
	ck_assert_uint_eq(t.code.etype, 0xF);
}
END_TEST

START_TEST(term_defined_codes_are_the_rfc_tables)
{
	static const struct {
		uint8_t layer, etype, ecode;
		bool defined;
	} c[] = {
		{0, 0, 0x00, true},  {0, 1, 0x00, true},    {0, 1, 0x04, true},
		{0, 1, 0x05, false}, {0, 1, 0x09, true},    {0, 1, 0xFF, true},
		{0, 2, 0x04, false}, {0, 2, 0x05, true},    {0, 2, 0x09, true},
		{0, 2, 0xFF, true},  {0, 3, 0x00, false},   {1, 0, 0x00, true},
		{1, 0, 0x01, false}, {1, 1, 0x04, true},    {1, 1, 0x05, false},
		{1, 2, 0x00, false}, {1, 2, 0x06, true},    {1, 2, 0x07, false},
		{1, 3, 0x00, false}, {2, 0, 0x00, false},   {2, 0, 0x01, true},
		{2, 0, 0x07, true},  {2, 0, 0x08, false},   {2, 1, 0x01, false},
		{3, 0, 0x00, false}, {0xF, 0, 0x00, false},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct iw_term_code k = {c[i].layer, c[i].etype, c[i].ecode};

		ck_assert_msg(rdmap_term_code_defined(&k) == c[i].defined, "%u/%u/0x%02x",
			      c[i].layer, c[i].etype, c[i].ecode);
	}
}
END_TEST

START_TEST(term_reserved_bits_are_ignored_on_receive_and_zero_on_send)
{
	const struct ddp_rdmap_vector *v = vec_find("terminate-rdmap-invalid-stag-read-request");
	uint8_t seg[SEG_MAX], out[RDMAP_TERM_MAX_LEN];
	uint8_t *p = seg + DDP_UNTAGGED_HDR_LEN;
	struct rdmap_term t;
	size_t n;

	ck_assert_ptr_nonnull(v);
	n = vec_bytes(v, seg) - DDP_UNTAGGED_HDR_LEN;
	p[2] |= 0x1F;
	p[3] = 0xFF;
	ck_assert_int_eq(rdmap_term_decode(p, n, &t), (ssize_t)n);
	ck_assert(t.m && t.d && t.r);
	ck_assert_int_eq(rdmap_term_encode(&t, out, sizeof(out)), (ssize_t)n);
	ck_assert_uint_eq(out[2], 0xE0);
	ck_assert_uint_eq(out[3], 0);
	ck_assert_mem_eq(out + 4, p + 4, n - 4);
}
END_TEST

START_TEST(term_tagged_header_copy_is_14_octets)
{
	static const uint8_t hdr[DDP_TAGGED_HDR_LEN] = {0xC1, 0x40, 0x12, 0x34, 0x56, 0x78, 0,
							0,    0,    1,	  0,	0,    0x20, 0};
	struct iw_term_code code = {IW_TERM_LAYER_DDP, 1, 0};
	uint8_t out[RDMAP_TERM_MAX_LEN];
	struct rdmap_term t, u;

	rdmap_term_fill(&t, &code, hdr, sizeof(hdr), 22, NULL);
	ck_assert(t.m && t.d && !t.r);
	ck_assert_uint_eq(t.ddp_hdr_len, DDP_TAGGED_HDR_LEN);
	ck_assert_uint_eq(rdmap_term_len(&t), 4 + 2 + 14);
	ck_assert_int_eq(rdmap_term_encode(&t, out, sizeof(out)), 20);
	ck_assert_mem_eq(out, ((const uint8_t[]){0x11, 0x00, 0xC0, 0x00, 0x00, 22}), 6);
	ck_assert_mem_eq(out + 6, hdr, sizeof(hdr));
	ck_assert_int_eq(rdmap_term_decode(out, 20, &u), 20);
	ck_assert_uint_eq(u.ddp_hdr_len, DDP_TAGGED_HDR_LEN);
	ck_assert_mem_eq(u.ddp_hdr, hdr, sizeof(hdr));
	/* One octet short of the copy, decided by the copy's T bit. */
	ck_assert_int_eq(rdmap_term_decode(out, 19, &u), IW_EAGAIN);
}
END_TEST

START_TEST(term_encode_needs_room_for_every_octet)
{
	struct iw_term_code code = {IW_TERM_LAYER_RDMAP, 1, 0};
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN] = {0x41, 0x41}, rreq[RDMAP_READ_REQ_LEN] = {0};
	uint8_t out[RDMAP_TERM_MAX_LEN + 1];
	struct rdmap_term t;

	rdmap_term_fill(&t, &code, hdr, sizeof(hdr), 46, rreq);
	ck_assert_uint_eq(rdmap_term_len(&t), RDMAP_TERM_MAX_LEN);
	for (size_t cap = 0; cap < RDMAP_TERM_MAX_LEN; cap++)
		ck_assert_int_eq(rdmap_term_encode(&t, out, cap), IW_ENOSPC);
	ck_assert_int_eq(rdmap_term_encode(&t, out, sizeof(out)), RDMAP_TERM_MAX_LEN);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* rdmap_term_fill: RFC 5040 figure 10                                      */
/* ---------------------------------------------------------------------- */

START_TEST(term_fill_follows_figure_10)
{
	static const struct {
		struct iw_term_code code;
		bool d, r; /* with both copies offered */
	} cases[] = {
		{{IW_TERM_LAYER_RDMAP, 0, 0}, false, false},   /* local catastrophic */
		{{IW_TERM_LAYER_RDMAP, 1, 0x02}, true, true},  /* remote protection */
		{{IW_TERM_LAYER_RDMAP, 2, 0x06}, true, false}, /* remote operation */
		{{IW_TERM_LAYER_DDP, 1, 0x00}, true, false},
		{{IW_TERM_LAYER_DDP, 2, 0x05}, true, false},
		{{IW_TERM_LAYER_DDP, 0, 0x00}, true, false},
		{{IW_TERM_LAYER_LLP, 0, 0x02}, false, false},
		{{IW_TERM_NONE, 0, 0}, false, false},
	};
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN] = {0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1};
	uint8_t rreq[RDMAP_READ_REQ_LEN];

	memset(rreq, 0x5A, sizeof(rreq));
	for (size_t i = 0; i < IW_ARRAY_SIZE(cases); i++) {
		struct rdmap_term t;

		rdmap_term_fill(&t, &cases[i].code, hdr, sizeof(hdr), 46, rreq);
		ck_assert_msg(t.d == cases[i].d && t.m == cases[i].d && t.r == cases[i].r,
			      "case %zu: m %d d %d r %d", i, t.m, t.d, t.r);
		ck_assert_uint_eq(t.ddp_seg_len, t.d ? 46 : 0);
		ck_assert_uint_eq(t.ddp_hdr_len, t.d ? DDP_UNTAGGED_HDR_LEN : 0);
		if (t.r)
			ck_assert_mem_eq(t.rreq, rreq, sizeof(rreq));
		/* Without the copies, nothing is announced. */
		rdmap_term_fill(&t, &cases[i].code, NULL, 0, 46, NULL);
		ck_assert(!t.m && !t.d && !t.r);
		ck_assert_uint_eq(rdmap_term_len(&t), RDMAP_TERM_CTRL_LEN);
	}
}
END_TEST

START_TEST(term_fill_ignores_a_header_of_the_wrong_length)
{
	static const size_t bad[] = {0, 1, 13, 15, 17, 19, 46};
	struct iw_term_code code = {IW_TERM_LAYER_DDP, 2, 0x02};
	uint8_t hdr[64] = {0x41, 0x43};
	struct rdmap_term t;

	for (size_t i = 0; i < IW_ARRAY_SIZE(bad); i++) {
		rdmap_term_fill(&t, &code, hdr, bad[i], 100, NULL);
		ck_assert_msg(!t.d && !t.m, "len %zu", bad[i]);
	}
	/* 14 octets cannot hold the untagged header its T bit announces. */
	rdmap_term_fill(&t, &code, hdr, DDP_TAGGED_HDR_LEN, 100, NULL);
	ck_assert(!t.d);
	/* 18 octets starting with a tagged header: its 14 octets are copied. */
	hdr[0] = 0xC1;
	rdmap_term_fill(&t, &code, hdr, DDP_UNTAGGED_HDR_LEN, 100, NULL);
	ck_assert(t.d);
	ck_assert_uint_eq(t.ddp_hdr_len, DDP_TAGGED_HDR_LEN);
}
END_TEST

START_TEST(term_random_structs_round_trip)
{
	struct th_rng rng;

	th_rng_init(&rng, th_seed_from_env());
	for (int i = 0; i < 2000; i++) {
		uint8_t out[RDMAP_TERM_MAX_LEN];
		struct rdmap_term a, b;
		ssize_t n;

		memset(&a, 0, sizeof(a));
		a.code.layer = (uint8_t)th_rng_range(&rng, 0, 2);
		a.code.etype = (uint8_t)th_rng_range(&rng, 0, 15);
		a.code.ecode = (uint8_t)th_rng_next(&rng);
		a.m = th_rng_next(&rng) & 1;
		a.d = th_rng_next(&rng) & 1;
		a.r = th_rng_next(&rng) & 1;
		if (a.d) {
			a.ddp_seg_len = (uint16_t)th_rng_next(&rng);
			th_rng_fill(&rng, a.ddp_hdr, sizeof(a.ddp_hdr));
			a.ddp_hdr_len = a.ddp_hdr[0] & DDP_CTRL_T ? 14 : 18;
			memset(a.ddp_hdr + a.ddp_hdr_len, 0, sizeof(a.ddp_hdr) - a.ddp_hdr_len);
		}
		if (a.r)
			th_rng_fill(&rng, a.rreq, sizeof(a.rreq));
		n = rdmap_term_encode(&a, out, sizeof(out));
		ck_assert_int_eq(n, (ssize_t)rdmap_term_len(&a));
		ck_assert_int_eq(rdmap_term_decode(out, (size_t)n, &b), n);
		ck_assert(memcmp(&a.code, &b.code, sizeof(a.code)) == 0);
		ck_assert(a.m == b.m && a.d == b.d && a.r == b.r);
		ck_assert_uint_eq(a.ddp_seg_len, b.ddp_seg_len);
		ck_assert_uint_eq(a.ddp_hdr_len, b.ddp_hdr_len);
		ck_assert_mem_eq(a.ddp_hdr, b.ddp_hdr, sizeof(a.ddp_hdr));
		ck_assert_mem_eq(a.rreq, b.rreq, sizeof(a.rreq));
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* RFC 7306                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(rfc7306_every_vector_decodes_to_its_fields_and_reencodes_exactly)
{
	ck_assert_uint_ge(IW_ARRAY_SIZE(rfc7306_vectors), 7);
	for (size_t i = 0; i < IW_ARRAY_SIZE(rfc7306_vectors); i++) {
		const struct rfc7306_vector *v = &rfc7306_vectors[i];
		uint8_t seg[SEG_MAX], out[RDMAP_ATOMIC_REQ_LEN];
		const struct rdmap_opcode_info *info;
		const uint8_t *body = seg + DDP_UNTAGGED_HDR_LEN;
		struct ddp_hdr h;
		long n = th_hex_decode(v->bytes_hex, seg, SEG_MAX);

		ck_assert_int_eq(n, (long)v->length);
		ck_assert_int_eq(ddp_hdr_decode(seg, (size_t)n, &h), DDP_UNTAGGED_HDR_LEN);
		ck_assert_uint_eq(rdmap_ctrl_opcode(h.rsvdulp), v->opcode);
		ck_assert_uint_eq(h.qn, v->qn);
		ck_assert_uint_eq(h.msn, v->msn);
		info = rdmap_opcode_info(h.rsvdulp);
		ck_assert(info->supported && info->rfc7306 && !info->tagged);
		ck_assert_uint_eq(info->qn, h.qn);
		ck_assert_uint_eq((size_t)n, DDP_UNTAGGED_HDR_LEN + info->rdmap_hdr_len);
		if (v->opcode == RDMAP_OP_ATOMIC_REQ) {
			struct rdmap_atomic_req a;

			rdmap_atomic_req_decode(body, &a);
			ck_assert_uint_eq(a.aop, v->aop);
			ck_assert_uint_eq(a.req_id, v->req_id);
			ck_assert_uint_eq(a.stag, v->stag);
			ck_assert_uint_eq(a.to, v->to);
			ck_assert_uint_eq(a.add_swap, v->add_swap);
			ck_assert_uint_eq(a.add_swap_mask, v->add_swap_mask);
			ck_assert_uint_eq(a.compare, v->compare);
			ck_assert_uint_eq(a.compare_mask, v->compare_mask);
			rdmap_atomic_req_encode(&a, out);
			ck_assert_mem_eq(out, body, RDMAP_ATOMIC_REQ_LEN);
		} else if (v->opcode == RDMAP_OP_ATOMIC_RESP) {
			struct rdmap_atomic_resp a;

			rdmap_atomic_resp_decode(body, &a);
			ck_assert_uint_eq(a.req_id, v->req_id);
			ck_assert_uint_eq(a.orig, v->orig);
			rdmap_atomic_resp_encode(&a, out);
			ck_assert_mem_eq(out, body, RDMAP_ATOMIC_RESP_LEN);
		} else {
			ck_assert_uint_eq(iw_get_be64(body), v->imm);
			ck_assert_uint_eq(info->solicited, v->opcode == RDMAP_OP_IMM_SE);
		}
	}
}
END_TEST

START_TEST(rfc7306_reserved_bits_of_the_aopcode_word_are_ignored_and_sent_zero)
{
	uint8_t buf[RDMAP_ATOMIC_REQ_LEN] = {0};
	struct rdmap_atomic_req a;

	buf[0] = 0xFF;
	buf[3] = 0xF2;
	rdmap_atomic_req_decode(buf, &a);
	ck_assert_uint_eq(a.aop, RDMAP_AOP_CMP_SWAP);
	a.aop = 0xF2; /* only the low 4 bits are the AOpCode */
	rdmap_atomic_req_encode(&a, buf);
	ck_assert_uint_eq(iw_get_be32(buf), 2);
}
END_TEST

/* The masked operations bit by bit, as the header comment of rdmap.h states them. */
static uint64_t model_apply(uint64_t *t, const struct rdmap_atomic_req *a)
{
	uint64_t old = *t, out = 0;
	unsigned carry = 0;

	if (a->aop == RDMAP_AOP_CMP_SWAP) {
		if (((old ^ a->compare) & a->compare_mask) == 0)
			*t = (old & ~a->add_swap_mask) | (a->add_swap & a->add_swap_mask);
		return old;
	}
	for (unsigned b = 0; b < 64; b++) {
		unsigned s =
			(unsigned)((old >> b) & 1) + (unsigned)((a->add_swap >> b) & 1) + carry;

		out |= (uint64_t)(s & 1) << b;
		/* a field boundary at bit b drops the carry out of it */
		carry = (a->add_swap_mask >> b) & 1 ? 0 : s >> 1;
	}
	*t = out;
	return old;
}

START_TEST(rfc7306_atomic_apply_matches_the_bitwise_model)
{
	struct th_rng r;

	th_rng_init(&r, th_seed_for(7306));
	for (int i = 0; i < 200000; i++) {
		struct rdmap_atomic_req a = {
			.aop = (i & 1) ? RDMAP_AOP_CMP_SWAP : RDMAP_AOP_FETCH_ADD,
			.add_swap = th_rng_next(&r),
			.add_swap_mask = (i & 6) == 0 ? 0 : th_rng_next(&r),
			.compare = th_rng_next(&r),
			.compare_mask = (i & 8) ? th_rng_next(&r) : UINT64_MAX,
		};
		uint64_t w = (i & 16) ? a.compare ^ (th_rng_next(&r) & ~a.compare_mask)
				      : th_rng_next(&r);
		uint64_t m = w;

		ck_assert_uint_eq(rdmap_atomic_apply(&w, &a), model_apply(&m, &a));
		ck_assert_msg(w == m, "aop %u word %016llx", a.aop, (unsigned long long)w);
	}
}
END_TEST

static Suite *rdmap_hdr_suite(void)
{
	Suite *s = suite_create("rdmap_hdr");
	TCase *rr = tcase_create("read_req");
	TCase *term = tcase_create("terminate");
	TCase *fill = tcase_create("fill");

	tcase_add_test(rr, read_req_vector_fields_decode_and_reencode_exactly);
	tcase_add_test(rr, read_req_random_round_trip_and_big_endian_layout);
	suite_add_tcase(s, rr);
	tcase_add_test(term, term_every_vector_decodes_to_its_fields_and_reencodes_exactly);
	tcase_add_test(term, term_every_truncation_asks_for_more);
	tcase_add_test(term, term_layers_above_llp_are_erange_but_reported);
	tcase_add_test(term, term_in_siw_layout_is_read_as_the_defined_code);
	tcase_add_test(term, term_defined_codes_are_the_rfc_tables);
	tcase_add_test(term, term_reserved_bits_are_ignored_on_receive_and_zero_on_send);
	tcase_add_test(term, term_tagged_header_copy_is_14_octets);
	tcase_add_test(term, term_encode_needs_room_for_every_octet);
	tcase_add_test(term, term_random_structs_round_trip);
	suite_add_tcase(s, term);
	tcase_add_test(fill, term_fill_reproduces_every_vector_from_code_and_header_copies);
	tcase_add_test(fill, term_fill_follows_figure_10);
	tcase_add_test(fill, term_fill_ignores_a_header_of_the_wrong_length);
	suite_add_tcase(s, fill);
	TH_ADD_TCASE(s, "rfc7306", rfc7306_every_vector_decodes_to_its_fields_and_reencodes_exactly,
		     rfc7306_reserved_bits_of_the_aopcode_word_are_ignored_and_sent_zero,
		     rfc7306_atomic_apply_matches_the_bitwise_model);
	return s;
}

TH_MAIN(rdmap_hdr_suite)
