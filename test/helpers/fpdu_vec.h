/* SPDX-License-Identifier: MIT */
/*
 * fpdu_vec.h - load an FPDU test vector (iw_vectors.h) and recover its ULPDU
 * with the reference framer of fpdu_ref.h: strip Markers, check the length
 * field and the PAD/CRC sizes, skip the length field.  Shared by the tx and rx
 * tests so both read the vectors the same way.
 */
#ifndef IW_FPDU_VEC_H
#define IW_FPDU_VEC_H

#include <check.h>
#include <string.h>

#include "fpdu_ref.h"
#include "iw_vectors.h"
#include "th.h"

struct vec {
	uint8_t wire[2048];
	size_t wire_len;
	uint8_t ulpdu[2048];
	size_t ulen;
};

static inline void vec_load(const struct fpdu_vector *v, struct vec *out)
{
	uint8_t plain[2048];
	long n = th_hex_decode(v->bytes_hex, out->wire, sizeof(out->wire));
	size_t pn;

	ck_assert_int_gt(n, 0);
	out->wire_len = (size_t)n;
	pn = fpdu_ref_strip(plain, out->wire, out->wire_len, v->stream_offset, v->markers);
	ck_assert_uint_eq(pn, 2 + v->ulpdu_length + v->pad + 4);
	ck_assert_uint_eq((unsigned)plain[0] << 8 | plain[1], v->ulpdu_length);
	out->ulen = v->ulpdu_length;
	memcpy(out->ulpdu, plain + 2, out->ulen);
}

#endif /* IW_FPDU_VEC_H */
