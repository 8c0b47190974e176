/* SPDX-License-Identifier: MIT */
/*
 * mpa_crc32c_sse42.c - CRC32c backend on the x86 crc32 instruction (SSE4.2).
 *
 * The crc32 instruction implements exactly the CRC32c register step of RFC 3720
 * §12.1 (reflected Castagnoli polynomial, no inversions), 8 octets at a time.
 * It has a latency of about three cycles but can start one per cycle, so one
 * dependency chain uses a third of the unit.  Long inputs are therefore cut into
 * three consecutive streams A|B|C of n octets each, run as three independent
 * chains (A from the incoming register, B and C from 0), and joined with the
 * linearity of the CRC over GF(2):
 *
 *	crc(r, X||Y) = crc(r, X) * x^(8|Y|) mod P  xor  crc(0, Y)
 *
 * The multiplication by the constant x^(8n) mod P is linear in the 32 register
 * bits, so it is four lookups in tables of 256 entries built once at start
 * (mpa_crc32c_sse42_init(), from the GF(2) arithmetic in mpa_crc32c.c).  Two
 * stream lengths are used: a long one for bulk data and a short one so that an
 * FPDU of a typical 1.5 KiB segment still gets the interleave.
 *
 * Nothing here is compiled with -msse4.2: only the functions that use the
 * instruction carry target("sse4.2"), and the dispatcher calls them only when
 * the CPU reports SSE4.2, so the library still runs on CPUs without it.  On
 * other architectures this file is a stub that reports "unavailable".
 */

#include "mpa_crc32c_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <nmmintrin.h>

#define SSE42_TARGET __attribute__((target("sse4.2"))) MPA_CRC_NO_TSAN

/* Octets per stream; three streams per round.  Multiples of 8. */
#define CRC_LONG  2048
#define CRC_SHORT 256

/* Multiplication of a register by x^(8n) mod P, one table per register octet. */
struct crc_shift {
	uint32_t t[4][256];
};

static struct crc_shift crc_shift_long, crc_shift_short;

static void crc_shift_build(struct crc_shift *s, size_t n)
{
	uint32_t xp = mpa_crc32c_xpow8n(n);

	for (unsigned k = 0; k < 4; k++)
		for (unsigned b = 0; b < 256; b++)
			s->t[k][b] = mpa_crc32c_gf2_mul((uint32_t)b << (8 * k), xp);
}

static inline uint32_t crc_shift_apply(const struct crc_shift *s, uint32_t c)
{
	return s->t[0][c & 0xFF] ^ s->t[1][(c >> 8) & 0xFF] ^ s->t[2][(c >> 16) & 0xFF] ^
	       s->t[3][c >> 24];
}

bool mpa_crc32c_sse42_usable(void)
{
	/* Needed when called before constructors ran; cheap once initialised. */
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}

void mpa_crc32c_sse42_init(void)
{
	crc_shift_build(&crc_shift_long, CRC_LONG);
	crc_shift_build(&crc_shift_short, CRC_SHORT);
}

/* One round over 3 * n octets: three chains, then two shift-and-xor joins. */
SSE42_TARGET static inline uint32_t crc_3way(uint32_t crc, const uint8_t *p, size_t n,
					     const struct crc_shift *s)
{
	uint64_t c0 = crc, c1 = 0, c2 = 0;
	const uint8_t *end = p + n;

	for (; p < end; p += 8) {
		c0 = _mm_crc32_u64(c0, mpa_crc32c_load64(p));
		c1 = _mm_crc32_u64(c1, mpa_crc32c_load64(p + n));
		c2 = _mm_crc32_u64(c2, mpa_crc32c_load64(p + 2 * n));
	}
	crc = crc_shift_apply(s, (uint32_t)c0) ^ (uint32_t)c1;
	return crc_shift_apply(s, crc) ^ (uint32_t)c2;
}

SSE42_TARGET uint32_t mpa_crc32c_sse42_update(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c;

	while (len && ((uintptr_t)p & 7)) {
		crc = _mm_crc32_u8(crc, *p++);
		len--;
	}
	while (len >= 3 * CRC_LONG) {
		crc = crc_3way(crc, p, CRC_LONG, &crc_shift_long);
		p += 3 * CRC_LONG;
		len -= 3 * CRC_LONG;
	}
	while (len >= 3 * CRC_SHORT) {
		crc = crc_3way(crc, p, CRC_SHORT, &crc_shift_short);
		p += 3 * CRC_SHORT;
		len -= 3 * CRC_SHORT;
	}
	c = crc;
	while (len >= 8) {
		c = _mm_crc32_u64(c, mpa_crc32c_load64(p));
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

#else /* not x86-64 */

bool mpa_crc32c_sse42_usable(void)
{
	return false;
}

void mpa_crc32c_sse42_init(void)
{
}

uint32_t mpa_crc32c_sse42_update(uint32_t crc, const uint8_t *p, size_t len)
{
	return mpa_crc32c_table_update(crc, p, len);
}

#endif
