/* SPDX-License-Identifier: MIT */
/*
 * mpa_crc32c_impl.h - private interface between the CRC32c dispatcher
 * (mpa_crc32c.c) and its backends (mpa_crc32c_sse42.c, mpa_crc32c_clmul.c,
 * mpa_crc32c_isal.c).
 *
 * Every backend computes the same function: the raw reflected CRC32c register
 * after feeding `len` octets into register `crc` (no inversion in or out), so
 * a running state may be handed from one backend to another.
 */
#ifndef MPA_CRC32C_IMPL_H
#define MPA_CRC32C_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Castagnoli polynomial 0x1EDC6F41, bit-reflected (RFC 3720 §12.1). */
#define MPA_CRC32C_POLY 0x82F63B78u
/* The polynomial 1 (x^0) in the reflected register layout: bit 31 is x^0. */
#define MPA_CRC32C_ONE 0x80000000u

typedef uint32_t (*mpa_crc32c_fn)(uint32_t crc, const uint8_t *p, size_t len);

/*
 * For the instruction-set backends: not instrumented by ThreadSanitizer.  The
 * CRC reads application memory as a NIC's DMA does (the source of a Send or
 * Read Response, written by the program before the peer asked for it), in an
 * order the network makes and the sanitizer cannot see: every load of a
 * 16 MiB message was a suppressed race, and checking them made the sanitizer
 * runs time out.  ISA-L's code is not instrumented either.
 */
#define MPA_CRC_NO_TSAN __attribute__((no_sanitize("thread")))

/* Eight octets as the CRC wants them (little-endian, as x86 is): a plain
 * unaligned load, never a memcpy call that a sanitizer would intercept. */
MPA_CRC_NO_TSAN static inline uint64_t mpa_crc32c_load64(const uint8_t *p)
{
	typedef uint64_t u64_unaligned __attribute__((aligned(1), may_alias));

	return *(const u64_unaligned *)p;
}

/* Multiply a register by x modulo P: one zero bit through the register. */
static inline uint32_t mpa_crc32c_mul_x(uint32_t r)
{
	return (r >> 1) ^ (MPA_CRC32C_POLY & (0u - (r & 1u)));
}

/* a * b mod P, both in the reflected layout. */
uint32_t mpa_crc32c_gf2_mul(uint32_t a, uint32_t b);
/* x^e mod P. */
uint32_t mpa_crc32c_xpow(uint64_t e);
/* x^(8n) mod P: the operator "feed n zero octets" (register * x^(8n)). */
uint32_t mpa_crc32c_xpow8n(size_t n);

/* Portable slicing-by-8 backend (mpa_crc32c.c).  Tables are built by the one-time init. */
uint32_t mpa_crc32c_table_update(uint32_t crc, const uint8_t *p, size_t len);

/* x86 crc32 instruction backend (mpa_crc32c_sse42.c); a stub elsewhere. */
bool mpa_crc32c_sse42_usable(void);
void mpa_crc32c_sse42_init(void); /* build the stream-combine tables; called once */
uint32_t mpa_crc32c_sse42_update(uint32_t crc, const uint8_t *p, size_t len);

/* x86 VPCLMULQDQ folding backend (mpa_crc32c_clmul.c); a stub elsewhere. */
bool mpa_crc32c_clmul_usable(void);
void mpa_crc32c_clmul_init(void); /* compute the fold constants; called once */
uint32_t mpa_crc32c_clmul_update(uint32_t crc, const uint8_t *p, size_t len);

#ifdef IW_HAVE_ISAL
/* Intel ISA-L crc32_iscsi() (mpa_crc32c_isal.c). */
uint32_t mpa_crc32c_isal_update(uint32_t crc, const uint8_t *p, size_t len);
#endif

#endif /* MPA_CRC32C_IMPL_H */
