/* SPDX-License-Identifier: MIT */
/*
 * mpa_crc32c.c - CRC32c for MPA: the portable backend and the backend choice.
 *
 * RFC 5044 §4.4 protects every FPDU with CRC32c, the iSCSI digest of RFC 3720
 * §12.1: Castagnoli polynomial 0x1EDC6F41 (0x82F63B78 bit-reflected), register
 * preset to 0xFFFFFFFF, reflected in and out, result complemented, sent least
 * significant octet first.  The API (mpa.h) exposes the raw register so that a
 * receiver can run the CRC across Markers and segment boundaries in any split;
 * mpa_crc32c_final() does the complement.
 *
 * Four backends compute that same register function and are interchangeable
 * mid-stream: a slicing-by-8 table (any CPU, here), the x86 crc32 instruction
 * (mpa_crc32c_sse42.c), carry-less multiply folding on 256-bit registers
 * (mpa_crc32c_clmul.c) and Intel ISA-L (mpa_crc32c_isal.c, when built with it).
 *
 * Choice: on first use, exactly once (pthread_once), the tables are built and a
 * backend is picked: IWARP_CRC32C=table|sse42|isal|clmul|auto forces one (an
 * unknown or unusable value logs a warning and falls back to auto), else the
 * best usable one (crc_best()).  The chosen function is published through an atomic
 * pointer with release order after the tables are built; readers load it with
 * acquire order, so the hot path is one load and an indirect call.  Before the
 * choice the pointer holds crc_update_first(), which runs the init.
 * mpa_crc32c_select() may swap the pointer at any time (tests, benchmarks); a
 * concurrent caller uses the old or the new backend, and both are correct.
 */
#include <iwarp/mpa.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "iw_bytes.h"
#include "iw_log.h"
#include "mpa_crc32c_impl.h"

/* crc_tab[k][b]: register after octet b followed by k zero octets, from register 0. */
static uint32_t crc_tab[8][256];

static uint32_t crc_update_first(uint32_t crc, const uint8_t *p, size_t len);

static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static _Atomic(mpa_crc32c_fn) crc_active = crc_update_first;
static _Atomic int crc_active_impl = MPA_CRC32C_TABLE;

static const char *const crc_impl_names[MPA_CRC32C_IMPL_COUNT] = {
	[MPA_CRC32C_AUTO] = "auto", [MPA_CRC32C_TABLE] = "table", [MPA_CRC32C_SSE42] = "sse42",
	[MPA_CRC32C_ISAL] = "isal", [MPA_CRC32C_CLMUL] = "clmul",
};

uint32_t mpa_crc32c_gf2_mul(uint32_t a, uint32_t b)
{
	uint32_t prod = 0;

	/* Walk a's coefficients from x^0 (bit 31) upwards while b becomes b * x^i. */
	for (int i = 31; i >= 0; i--) {
		if ((a >> i) & 1u)
			prod ^= b;
		b = mpa_crc32c_mul_x(b);
	}
	return prod;
}

uint32_t mpa_crc32c_xpow(uint64_t e)
{
	uint32_t sq = mpa_crc32c_mul_x(MPA_CRC32C_ONE); /* x^1, squared per bit of e */
	uint32_t r = MPA_CRC32C_ONE;

	while (e) {
		if (e & 1)
			r = mpa_crc32c_gf2_mul(r, sq);
		sq = mpa_crc32c_gf2_mul(sq, sq);
		e >>= 1;
	}
	return r;
}

uint32_t mpa_crc32c_xpow8n(size_t n)
{
	return mpa_crc32c_xpow((uint64_t)n * 8);
}

static void crc_table_build(void)
{
	for (unsigned b = 0; b < 256; b++) {
		uint32_t r = b;

		for (int i = 0; i < 8; i++)
			r = mpa_crc32c_mul_x(r);
		crc_tab[0][b] = r;
	}
	for (unsigned k = 1; k < 8; k++) {
		for (unsigned b = 0; b < 256; b++) {
			uint32_t r = crc_tab[k - 1][b];

			crc_tab[k][b] = (r >> 8) ^ crc_tab[0][r & 0xFF];
		}
	}
}

static inline uint32_t crc_table_byte(uint32_t crc, uint8_t b)
{
	return (crc >> 8) ^ crc_tab[0][(crc ^ b) & 0xFF];
}

uint32_t mpa_crc32c_table_update(uint32_t crc, const uint8_t *p, size_t len)
{
	/* Aligned 8-octet loads are cheaper; the octet steps to get there are few. */
	while (len && ((uintptr_t)p & 7)) {
		crc = crc_table_byte(crc, *p++);
		len--;
	}
	while (len >= 8) {
		/* The first octet has seven more behind it, hence crc_tab[7]. */
		uint32_t lo = crc ^ iw_get_le32(p);
		uint32_t hi = iw_get_le32(p + 4);

		crc = crc_tab[7][lo & 0xFF] ^ crc_tab[6][(lo >> 8) & 0xFF] ^
		      crc_tab[5][(lo >> 16) & 0xFF] ^ crc_tab[4][lo >> 24] ^ crc_tab[3][hi & 0xFF] ^
		      crc_tab[2][(hi >> 8) & 0xFF] ^ crc_tab[1][(hi >> 16) & 0xFF] ^
		      crc_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_table_byte(crc, *p++);
	return crc;
}

bool mpa_crc32c_available(enum mpa_crc32c_impl impl)
{
	switch (impl) {
	case MPA_CRC32C_AUTO:
	case MPA_CRC32C_TABLE:
		return true;
	case MPA_CRC32C_SSE42:
		return mpa_crc32c_sse42_usable();
	case MPA_CRC32C_ISAL:
#ifdef IW_HAVE_ISAL
		return true;
#else
		return false;
#endif
	case MPA_CRC32C_CLMUL:
		return mpa_crc32c_clmul_usable();
	default:
		return false;
	}
}

/* Whether ISA-L runs its AVX-512 folding code here (its own dispatch needs these). */
static bool crc_isal_has_avx512(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("vpclmulqdq");
#else
	return false;
#endif
}

/*
 * The fastest usable backend, by what was measured (bench-crc32c): ISA-L with
 * AVX-512 (50+ GB/s); else our 256-bit folding (clmul); else ISA-L, whose
 * code without AVX-512 is the crc32 instruction like ours; else SSE4.2; else
 * the table.
 */
static enum mpa_crc32c_impl crc_best(void)
{
	if (mpa_crc32c_available(MPA_CRC32C_ISAL) && crc_isal_has_avx512())
		return MPA_CRC32C_ISAL;
	if (mpa_crc32c_available(MPA_CRC32C_CLMUL))
		return MPA_CRC32C_CLMUL;
	if (mpa_crc32c_available(MPA_CRC32C_ISAL))
		return MPA_CRC32C_ISAL;
	if (mpa_crc32c_available(MPA_CRC32C_SSE42))
		return MPA_CRC32C_SSE42;
	return MPA_CRC32C_TABLE;
}

/* The update function of an available concrete backend; the table for anything else. */
static mpa_crc32c_fn crc_fn_of(enum mpa_crc32c_impl impl)
{
	switch (impl) {
	case MPA_CRC32C_SSE42:
		if (mpa_crc32c_sse42_usable())
			return mpa_crc32c_sse42_update;
		break;
	case MPA_CRC32C_CLMUL:
		if (mpa_crc32c_clmul_usable())
			return mpa_crc32c_clmul_update;
		break;
#ifdef IW_HAVE_ISAL
	case MPA_CRC32C_ISAL:
		return mpa_crc32c_isal_update;
#endif
	default:
		break;
	}
	return mpa_crc32c_table_update;
}

static void crc_publish(enum mpa_crc32c_impl impl)
{
	atomic_store_explicit(&crc_active_impl, (int)impl, memory_order_relaxed);
	atomic_store_explicit(&crc_active, crc_fn_of(impl), memory_order_release);
}

static enum mpa_crc32c_impl crc_impl_from_env(void)
{
	const char *e = getenv("IWARP_CRC32C");

	if (!e || !*e)
		return crc_best();
	for (int i = 0; i < MPA_CRC32C_IMPL_COUNT; i++) {
		if (strcmp(e, crc_impl_names[i]) != 0)
			continue;
		if (i == MPA_CRC32C_AUTO)
			return crc_best();
		if (mpa_crc32c_available((enum mpa_crc32c_impl)i))
			return (enum mpa_crc32c_impl)i;
		iw_log(IW_LOG_WARN, "IWARP_CRC32C=%s: backend not available here, using auto", e);
		return crc_best();
	}
	iw_log(IW_LOG_WARN,
	       "IWARP_CRC32C=%s: unknown backend (table|sse42|isal|clmul|auto), using auto", e);
	return crc_best();
}

static void crc_init(void)
{
	crc_table_build();
	if (mpa_crc32c_sse42_usable())
		mpa_crc32c_sse42_init();
	if (mpa_crc32c_clmul_usable())
		mpa_crc32c_clmul_init();
	crc_publish(crc_impl_from_env());
}

static void crc_ensure_init(void)
{
	pthread_once(&crc_once, crc_init);
}

static uint32_t crc_update_first(uint32_t crc, const uint8_t *p, size_t len)
{
	crc_ensure_init();
	return atomic_load_explicit(&crc_active, memory_order_acquire)(crc, p, len);
}

uint32_t mpa_crc32c_update(uint32_t state, const void *buf, size_t len)
{
	mpa_crc32c_fn fn = atomic_load_explicit(&crc_active, memory_order_acquire);

	return fn(state, buf, len);
}

uint32_t mpa_crc32c(const void *buf, size_t len)
{
	return mpa_crc32c_final(mpa_crc32c_update(MPA_CRC32C_INIT, buf, len));
}

int mpa_crc32c_select(enum mpa_crc32c_impl impl)
{
	if ((unsigned)impl >= MPA_CRC32C_IMPL_COUNT)
		return IW_EINVAL;
	crc_ensure_init();
	if (impl == MPA_CRC32C_AUTO)
		impl = crc_best();
	if (!mpa_crc32c_available(impl))
		return IW_ENOTSUP;
	crc_publish(impl);
	return IW_OK;
}

enum mpa_crc32c_impl mpa_crc32c_selected(void)
{
	crc_ensure_init();
	return (enum mpa_crc32c_impl)atomic_load_explicit(&crc_active_impl, memory_order_relaxed);
}

const char *mpa_crc32c_impl_name(enum mpa_crc32c_impl impl)
{
	if ((unsigned)impl >= MPA_CRC32C_IMPL_COUNT)
		return "unknown";
	return crc_impl_names[impl];
}

uint32_t mpa_crc32c_update_with(enum mpa_crc32c_impl impl, uint32_t state, const void *buf,
				size_t len)
{
	crc_ensure_init();
	if (impl == MPA_CRC32C_AUTO)
		return mpa_crc32c_update(state, buf, len);
	/* An unavailable backend is "undefined" by contract; the table is a safe answer. */
	return crc_fn_of(impl)(state, buf, len);
}
