/* SPDX-License-Identifier: MIT */
/*
 * fuzz_iwperf_proto.c - libFuzzer target for iwperf's control protocol
 * (tools/iwperf/ipf_proto.h): the HELLO, WELCOME and control message
 * decoders, which read what a peer put in the MPA private data or on a
 * --tcp-baseline stream.  The whole input goes to each of the three.
 *
 * Properties checked (abort() on violation):
 *   - a decoder returns IPF_OK or one of the IPF_E_* codes, each of which
 *     has a name; on a refusal the output is left as it was;
 *   - an accepted message re-encodes to exactly its input octets (a HELLO
 *     without a target buffer: but for its addr field, which decodes to 0)
 *     and decodes again to the same fields;
 *   - an accepted message does not decode one octet shorter (except a
 *     48-octet control message, whose first 40 octets are the short form);
 *   - a refusal's reason is printable text of 1 to 56 octets;
 *   - an accepted HELLO of an RFC 7306 operation is never --tcp-baseline, an
 *     atomic one is of 8 octets, and a write-imm one no ping-pong.
 * The decoders read only the input (the replay driver and libFuzzer hand it
 * over in a buffer of its exact size, so ASan sees any over-read).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipf_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* Decode with the output pre-set; check the code and, on a refusal, the output. */
static int decode(enum ipf_kind kind, const uint8_t *data, size_t size, union ipf_msg *m)
{
	union ipf_msg before;
	int rc;

	memset(m, 0xa5, sizeof(*m));
	before = *m;
	rc = ipf_decode(kind, data, size, m);
	check(rc <= IPF_OK && rc >= IPF_E_LAST && strcmp(ipf_errname(rc), "IPF_E_?"));
	check(!rc || !memcmp(m, &before, sizeof(*m)));
	return rc;
}

static void one(enum ipf_kind kind, const uint8_t *data, size_t size)
{
	uint8_t out[IPF_WELCOME_LEN];
	union ipf_msg m, again;
	const struct ipf_hello *h = &m.hello;

	if (decode(kind, data, size, &m))
		return;
	/* accepted: the message's length, and its octets again when encoded */
	check(size <= sizeof(out));
	ipf_encode(kind, &m, out, size);
	if (kind == IPF_KIND_HELLO && !h->rkey && !h->length)
		check(!h->addr && !memcmp(out, data, 32) &&
		      !memcmp(out + 40, data + 40, size - 40));
	else
		check(!memcmp(out, data, size));
	check(decode(kind, out, size, &again) == IPF_OK && !memcmp(&again, &m, sizeof(m)));
	if (kind == IPF_KIND_WELCOME && m.welcome.status) {
		size_t n = strlen(m.welcome.reason);

		check(n >= 1 && n <= IPF_REASON_MAX);
		for (size_t i = 0; i < n; i++)
			check(m.welcome.reason[i] >= 0x20 && m.welcome.reason[i] <= 0x7e);
	}
	if (kind == IPF_KIND_HELLO && ipf_op_rfc7306(h->op)) {
		check(!(h->flags & IPF_HF_TCP));
		check(!ipf_op_atomic(h->op) || h->size == IPF_ATOMIC_SIZE);
		check(h->op != IPF_OP_WRITE_IMM || !(h->flags & IPF_HF_PINGPONG));
	}
	if (!(kind == IPF_KIND_CTRL && size == IPF_CTRL_LEN_ALT))
		check(decode(kind, data, size - 1, &again) != IPF_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(IPF_KIND_HELLO, data, size);
	one(IPF_KIND_WELCOME, data, size);
	one(IPF_KIND_CTRL, data, size);
	return 0;
}
