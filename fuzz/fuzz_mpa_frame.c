/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpa_frame.c - libFuzzer target for the MPA Request/Reply decoder.
 *
 * The input is decoded as a Request and as a Reply.  Properties checked
 * (abort() on violation):
 *   - only the documented return codes appear;
 *   - a decoded frame's length lies in [20, 532] and within the input, and
 *     every shorter prefix of it asks for more (IW_EAGAIN) or reports the same
 *     error earlier - never success;
 *   - re-encoding the decoded fields gives a frame of the same length that
 *     decodes to the same fields and private data (bytes may differ: reserved
 *     bits are dropped).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_fields(const struct mpa_frame *a, const struct mpa_frame *b)
{
	if (a->reply != b->reply || a->markers != b->markers || a->crc != b->crc ||
	    a->reject != b->reject || a->enhanced != b->enhanced || a->rev != b->rev ||
	    a->p2p != b->p2p || a->rtr != b->rtr || a->ird != b->ird || a->ord != b->ord ||
	    a->pd_len != b->pd_len)
		return false;
	return a->pd_len == 0 || memcmp(a->pd, b->pd, a->pd_len) == 0;
}

static void check_one(const uint8_t *data, size_t size, bool want_reply)
{
	uint8_t buf[MPA_FRAME_MAX_LEN];
	struct mpa_frame f, g;
	ssize_t n, m;

	n = mpa_frame_decode(data, size, want_reply, &f);
	if (n < 0) {
		if (n != IW_EAGAIN && n != IW_EMPA_KEY && n != IW_EMPA_REV && n != IW_EMPA_PDLEN)
			abort();
		return;
	}
	if (n < MPA_FRAME_HDR_LEN || n > MPA_FRAME_MAX_LEN || (size_t)n > size)
		abort();
	if (f.reply != want_reply || (f.rev != MPA_REV1 && f.rev != MPA_REV2))
		abort();
	if (f.pd_len && (f.pd < data || f.pd + f.pd_len > data + n))
		abort();
	if (mpa_frame_len(&f) != (size_t)n)
		abort();
	for (size_t i = 0; i < (size_t)n; i++) {
		ssize_t r = mpa_frame_decode(data, i, want_reply, &g);

		if (r != IW_EAGAIN)
			abort();
	}

	m = mpa_frame_encode(&f, buf, sizeof(buf));
	if (m != n)
		abort();
	if (mpa_frame_decode(buf, (size_t)m, want_reply, &g) != m)
		abort();
	if (!same_fields(&f, &g))
		abort();
	/* Encoding is deterministic: once normalised, it is a fixed point. */
	{
		uint8_t buf2[MPA_FRAME_MAX_LEN];

		if (mpa_frame_encode(&g, buf2, sizeof(buf2)) != m || memcmp(buf, buf2, (size_t)m))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_one(data, size, false);
	check_one(data, size, true);
	return 0;
}
