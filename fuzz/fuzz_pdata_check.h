/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pdata_check.h - the RFC 8797 private data property, shared by the
 * targets that reach rpcrdma_cm_pdata_decode (fuzz_rpcrdma_hdr: the decoder
 * on raw input; fuzz_mpa_pdata: the private data of a decoded MPA frame).
 *
 * CM private data decodes to 0 or IW_ERPC_PDATA (then with the 1024-octet
 * defaults and nothing present); a valid block re-encodes to the same RFC 8797
 * octets and extension fields and decodes again to the same struct.
 */
#ifndef IWARP_FUZZ_PDATA_CHECK_H
#define IWARP_FUZZ_PDATA_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/rpcrdma_wire.h>

static inline void check_pdata(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_pdata p, q;
	uint8_t out[RPCRDMA_CM_PDATA_LEN + RPCRDMA_EXT_LEN];
	int r = rpcrdma_cm_pdata_decode(size ? data : NULL, size, &p);
	int n;

	if (r == IW_ERPC_PDATA) {
		if (p.present || p.ext_present || p.send_size != RPCRDMA_INLINE_MIN ||
		    p.recv_size != RPCRDMA_INLINE_MIN)
			abort();
		return;
	}
	if (r != 0 || !p.present || p.send_size < 1024 || p.send_size > 262144 ||
	    p.recv_size < 1024 || p.recv_size > 262144)
		abort();
	n = rpcrdma_cm_pdata_encode(&p, out, sizeof(out));
	if (n != (p.ext_present ? 16 : 8) || memcmp(out, data, 8) ||
	    (p.ext_present && memcmp(out + 8, data + 8, 6)))
		abort();
	if (rpcrdma_cm_pdata_decode(out, (size_t)n, &q) != 0 || memcmp(&p, &q, sizeof(p)))
		abort();
}

#endif
