/* SPDX-License-Identifier: MIT */
/*
 * fpdu_ref.h - a deliberately naive, test-only FPDU framer and de-framer
 * (RFC 5044 §4), written octet by octet and independent of mpa_tx/mpa_rx and
 * of the library's CRC32c, so the tests compare two implementations of the
 * rules rather than one against itself.  Header-only (static inline) so any
 * test can include it without a build change.
 */
#ifndef IW_FPDU_REF_H
#define IW_FPDU_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bitwise CRC32c (reflected polynomial 0x82F63B78): slow and obviously right. */
static inline uint32_t fpdu_ref_crc_update(uint32_t s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		s ^= p[i];
		for (int k = 0; k < 8; k++)
			s = (s >> 1) ^ (0x82F63B78u & (0u - (s & 1)));
	}
	return s;
}

static inline unsigned fpdu_ref_pad(size_t ulen)
{
	return (unsigned)((4 - (2 + ulen) % 4) % 4);
}

/* Upper bound of the wire size of one FPDU of `ulen` ULPDU octets. */
static inline size_t fpdu_ref_max_len(size_t ulen)
{
	size_t body = 2 + ulen + 3 + 4;

	return body + 4 * (body / 508 + 2);
}

/*
 * Frame one ULPDU that starts at stream position `pos` into out (room for
 * fpdu_ref_max_len(ulen)).  Returns the wire length.  *crc_out (if non-NULL)
 * receives the CRC value (0 with crc off).
 */
static inline size_t fpdu_ref_build(uint8_t *out, const uint8_t *ulpdu, size_t ulen, uint32_t pos,
				    bool markers, bool crc, uint32_t *crc_out)
{
	size_t body = 2 + ulen + fpdu_ref_pad(ulen), o = 0;
	uint32_t p = pos, hdr = pos, c;

	if (markers && p % 512 == 0) {
		memset(out + o, 0, 4);
		o += 4;
		p += 4;
		hdr = p;
	}
	for (size_t i = 0; i < body; i++) {
		uint8_t b;

		if (markers && p % 512 == 0) {
			uint32_t d = p - hdr;

			out[o++] = 0;
			out[o++] = 0;
			out[o++] = (uint8_t)(d >> 8);
			out[o++] = (uint8_t)d;
			p += 4;
		}
		if (i == 0)
			b = (uint8_t)(ulen >> 8);
		else if (i == 1)
			b = (uint8_t)ulen;
		else if (i - 2 < ulen)
			b = ulpdu[i - 2];
		else
			b = 0;
		out[o++] = b;
		p++;
	}
	if (markers && p % 512 == 0) {
		uint32_t d = p - hdr;

		out[o++] = 0;
		out[o++] = 0;
		out[o++] = (uint8_t)(d >> 8);
		out[o++] = (uint8_t)d;
		p += 4;
	}
	c = crc ? ~fpdu_ref_crc_update(0xFFFFFFFFu, out, o) : 0;
	for (int k = 0; k < 4; k++)
		out[o++] = (uint8_t)(c >> (8 * k));
	if (crc_out)
		*crc_out = c;
	return o;
}

/*
 * Remove the Markers from `n` wire octets that start at stream position `pos`
 * (every octet at p ≡ 0..3 mod 512 when markers).  Returns the octets kept.
 */
static inline size_t fpdu_ref_strip(uint8_t *out, const uint8_t *in, size_t n, uint32_t pos,
				    bool markers)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++, pos++)
		if (!markers || pos % 512 >= 4)
			out[o++] = in[i];
	return o;
}

#endif /* IW_FPDU_REF_H */
