/* SPDX-License-Identifier: MIT */
/*
 * mpa_crc32c_clmul.c - CRC32c backend on carry-less multiplication (x86-64
 * with VPCLMULQDQ and AVX2: 256-bit registers, two 128-bit lanes each).
 *
 * Why: the crc32 instruction (mpa_crc32c_sse42.c) consumes at most 8 octets a
 * cycle however many chains run, about 22 GB/s on the Zen 3 CPUs of our CI;
 * MPA computes the CRC of every octet on both ends, so it sets a ceiling on the
 * data path.  Folding with carry-less multiplies uses a different unit and
 * handles 128 octets per eight multiplies.
 *
 * The mathematics (our own notation; the CRC is RFC 3720 §12.1's, reflected):
 *
 * A block of 16 octets loaded little-endian into a 128-bit value v stands for
 * the polynomial V(x) = sum of v_i x^(127-i): bit 0 of the first octet is the
 * highest power, as the reflected CRC feeds it first.  Likewise a 64-bit value
 * h stands for h(x) = sum of h_j x^(63-j).  Then the low 64 bits of v are the
 * powers x^64..x^127 and the high 64 bits the powers x^0..x^63:
 *
 *	V(x) = lo(x) * x^64 + hi(x)
 *
 * The carry-less product of two such 64-bit values, read as a 128-bit value
 * the same way, is a(x) * b(x) * x (the product's bit k is the power 126-k,
 * while bit k of a 128-bit value stands for 127-k).
 *
 * Folding: a 128-bit accumulator V whose octets are followed by d more bits
 * of message contributes V(x) * x^d.  Modulo P that equals
 *
 *	lo(x) * (x^(d+63) mod P) * x  +  hi(x) * (x^(d-1) mod P) * x
 *
 * i.e. two carry-less products with constants that have fewer than 32 bits;
 * their sum has at most 96 bits, so it is again a 128-bit value, to be xored
 * into the block that lies d bits further on.  A constant of degree < 32 in
 * the reflected 32-bit register layout (bit 31 = x^0, see mpa_crc32c_impl.h)
 * is the 64-bit value above shifted left by 32.
 *
 * The CRC register's starting value r is the same as xoring r into the first
 * four octets and starting from 0 (the reflected CRC is linear and the
 * register is the next 32 bits' worth of message), so it goes into the first
 * block.  At the end the 16 octets of the last accumulator, run through the
 * crc32 instruction from register 0, give the register of the whole input, as
 * folding keeps the message polynomial unchanged modulo P; the last octets that
 * do not fill a block follow through the crc32 instruction as well.
 *
 * Eight lanes (four 256-bit accumulators) are folded 1024 bits forward per
 * step, which hides the multiplier's latency; at the end the lanes are folded
 * one into the next 128 bits at a time.
 *
 * The multiplier alone is no faster than the crc32 instruction on Zen 3 (both
 * about 20 GB/s), but they are different units: each step of crc_block()
 * folds 128 octets and feeds 3 x 48 further octets to three crc32 chains, and
 * the block's four registers are joined at its end by shifting each over the
 * octets behind it (crc_shift()).  Inputs shorter than MIN_LEN take the
 * crc32-instruction code (ISA-L's where built with it).
 *
 * The constants are computed once at start from the GF(2) arithmetic in
 * mpa_crc32c.c, not written down, and the tests compare every length and
 * alignment with the other backends.
 */

#include "mpa_crc32c_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define CLMUL_TARGET __attribute__((target("avx2,vpclmulqdq,pclmul,sse4.2"))) MPA_CRC_NO_TSAN

#define LANE_BITS    128
#define VEC_STEP     128 /* octets folded per step: 4 accumulators x 32 */
#define CHAIN	     48	 /* octets per crc32 chain per step: 6 instructions */
#define STEP	     (VEC_STEP + 3 * CHAIN)
#define MAX_STEPS    256 /* steps per block: a block is at most 69,632 octets */
#define MIN_STEPS    2
/* Below this the joins cost what the second unit saves (measured: equal at
 * 1.5 KiB, slower at 2 KiB, 1.1-1.4 times from 4 KiB), so short inputs take
 * the best crc32-instruction code there is. */
#define MIN_LEN 4096

/* Fold constants: [0] for the lo half, [1] for the hi half (see above). */
static uint64_t k_step[2]; /* d = 1024 bits: one step forward */
static uint64_t k_lane[2]; /* d = 128 bits: one lane forward */
/* k_shift[n][i]: x^(8 * (i + 1) * CHAIN * n - 33) mod P, to shift a register
 * over i + 1 chains of a block of n steps (crc_shift()). */
static uint32_t k_shift[MAX_STEPS + 1][3];

static void fold_constants(uint64_t k[2], unsigned d)
{
	k[0] = (uint64_t)mpa_crc32c_xpow(d + 63) << 32;
	k[1] = (uint64_t)mpa_crc32c_xpow(d - 1) << 32;
}

bool mpa_crc32c_clmul_usable(void)
{
	__builtin_cpu_init();
	/* GCC's and clang's checks include the OS's saving of the AVX state. */
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq") &&
	       __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
}

void mpa_crc32c_clmul_init(void)
{
	fold_constants(k_step, VEC_STEP * 8);
	fold_constants(k_lane, LANE_BITS);
	for (unsigned n = MIN_STEPS; n <= MAX_STEPS; n++)
		for (unsigned i = 0; i < 3; i++)
			k_shift[n][i] = mpa_crc32c_xpow(8ull * (i + 1) * CHAIN * n - 33);
}

/* acc moved d bits forward (k holds d's constants) and xored with next. */
CLMUL_TARGET static inline __m256i fold256(__m256i acc, __m256i k, __m256i next)
{
	__m256i a = _mm256_clmulepi64_epi128(acc, k, 0x00);
	__m256i b = _mm256_clmulepi64_epi128(acc, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(a, b), next);
}

CLMUL_TARGET static inline __m128i fold128(__m128i acc, __m128i k, __m128i next)
{
	__m128i a = _mm_clmulepi64_si128(acc, k, 0x00);
	__m128i b = _mm_clmulepi64_si128(acc, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(a, b), next);
}

/*
 * A register c moved over the octets of a span: c * x^(8 * len) mod P, with
 * k = x^(8 * len - 33).  Both are 32-bit reflected values, so their
 * carry-less product read as a 64-bit reflected value is c * k * x; the crc32
 * instruction on those 64 bits from register 0 multiplies by x^32 and reduces.
 */
CLMUL_TARGET static inline uint32_t crc_shift(uint32_t c, uint32_t k)
{
	__m128i m = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)c), _mm_cvtsi32_si128((int)k), 0);

	return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(m));
}

/*
 * One block of n steps: the first 128 * n octets are folded, the rest is cut
 * into three chains of 48 * n octets for the crc32 instruction, and every step
 * advances all four, so both units work at once.  Then the four registers are
 * joined: crc(r, V|A|B|C) = crc(r, V) * x^(8|ABC|) + crc(0, A) * x^(8|BC|) +
 * crc(0, B) * x^(8|C|) + crc(0, C).
 */
CLMUL_TARGET static uint32_t crc_block(uint32_t crc, const uint8_t *p, unsigned n)
{
	const __m256i kr = _mm256_set_epi64x((long long)k_step[1], (long long)k_step[0],
					     (long long)k_step[1], (long long)k_step[0]);
	const __m128i kl = _mm_set_epi64x((long long)k_lane[1], (long long)k_lane[0]);
	const size_t span = (size_t)CHAIN * n;
	const uint8_t *q = p + (size_t)VEC_STEP * n;
	uint64_t c1 = 0, c2 = 0, c3 = 0, w[2], v;
	__m256i a0, a1, a2, a3;
	__m128i lanes[8], x;

	a0 = _mm256_loadu_si256((const __m256i *)p);
	a1 = _mm256_loadu_si256((const __m256i *)(p + 32));
	a2 = _mm256_loadu_si256((const __m256i *)(p + 64));
	a3 = _mm256_loadu_si256((const __m256i *)(p + 96));
	a0 = _mm256_xor_si256(a0, _mm256_set_epi64x(0, 0, 0, (long long)crc));
	for (unsigned i = 0;;) {
		for (unsigned j = 0; j < CHAIN; j += 8) {
			c1 = _mm_crc32_u64(c1, mpa_crc32c_load64(q + j));
			c2 = _mm_crc32_u64(c2, mpa_crc32c_load64(q + span + j));
			c3 = _mm_crc32_u64(c3, mpa_crc32c_load64(q + 2 * span + j));
		}
		q += CHAIN;
		if (++i == n)
			break;
		p += VEC_STEP;
		a0 = fold256(a0, kr, _mm256_loadu_si256((const __m256i *)p));
		a1 = fold256(a1, kr, _mm256_loadu_si256((const __m256i *)(p + 32)));
		a2 = fold256(a2, kr, _mm256_loadu_si256((const __m256i *)(p + 64)));
		a3 = fold256(a3, kr, _mm256_loadu_si256((const __m256i *)(p + 96)));
	}

	/* The eight lanes in message order, folded into one, then 16 octets of crc32. */
	lanes[0] = _mm256_castsi256_si128(a0);
	lanes[1] = _mm256_extracti128_si256(a0, 1);
	lanes[2] = _mm256_castsi256_si128(a1);
	lanes[3] = _mm256_extracti128_si256(a1, 1);
	lanes[4] = _mm256_castsi256_si128(a2);
	lanes[5] = _mm256_extracti128_si256(a2, 1);
	lanes[6] = _mm256_castsi256_si128(a3);
	lanes[7] = _mm256_extracti128_si256(a3, 1);
	x = lanes[0];
	for (int i = 1; i < 8; i++)
		x = fold128(x, kl, lanes[i]);
	_mm_storeu_si128((__m128i *)w, x);
	v = _mm_crc32_u64(_mm_crc32_u64(0, w[0]), w[1]);

	return crc_shift((uint32_t)v, k_shift[n][2]) ^ crc_shift((uint32_t)c1, k_shift[n][1]) ^
	       crc_shift((uint32_t)c2, k_shift[n][0]) ^ (uint32_t)c3;
}

/* The crc32-instruction code for short inputs and tails. */
MPA_CRC_NO_TSAN static inline uint32_t crc_short(uint32_t crc, const uint8_t *p, size_t len)
{
#ifdef IW_HAVE_ISAL
	return mpa_crc32c_isal_update(crc, p, len);
#else
	return mpa_crc32c_sse42_update(crc, p, len);
#endif
}

CLMUL_TARGET uint32_t mpa_crc32c_clmul_update(uint32_t crc, const uint8_t *p, size_t len)
{
	if (len < MIN_LEN)
		return crc_short(crc, p, len);
	while (len >= (size_t)STEP * MIN_STEPS) {
		size_t n = len / STEP;

		if (n > MAX_STEPS)
			n = MAX_STEPS;
		crc = crc_block(crc, p, (unsigned)n);
		p += n * STEP;
		len -= n * STEP;
	}
	return crc_short(crc, p, len);
}

#else /* not x86-64 */

bool mpa_crc32c_clmul_usable(void)
{
	return false;
}

void mpa_crc32c_clmul_init(void)
{
}

uint32_t mpa_crc32c_clmul_update(uint32_t crc, const uint8_t *p, size_t len)
{
	return mpa_crc32c_table_update(crc, p, len);
}

#endif
