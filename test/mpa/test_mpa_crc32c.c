/* SPDX-License-Identifier: MIT */
/*
 * test_mpa_crc32c.c - CRC32c (RFC 5044 §4.4 / RFC 3720 §12.1): every backend
 * against the known-answer vectors and the wire byte order, the receiver
 * residue, incremental use, agreement of all backends on random data at random
 * alignments, and the backend selection API including the IWARP_CRC32C
 * environment override (checked in fresh re-executed processes, because the
 * choice is made once per process).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iwarp/mpa.h>

#include "iw_bytes.h"
#include "iw_log.h"
#include "iw_vectors.h"
#include "th.h"

#define CHECK_VALUE 0xE3069283u
#define BIG_LEN	    70000
#define ALIGN_SLACK 64
/* aligned_alloc() wants a size that is a multiple of the alignment. */
#define AGREE_BUF_LEN ((BIG_LEN + ALIGN_SLACK + 63) / 64 * 64)
#define EDGE_LEN      300000
#define EDGE_BUF_LEN  ((EDGE_LEN + ALIGN_SLACK + 63) / 64 * 64)

static const char check_input[] = "123456789";

/* Concrete backends (not AUTO), available or not. */
static const enum mpa_crc32c_impl all_impls[] = {MPA_CRC32C_TABLE, MPA_CRC32C_SSE42,
						 MPA_CRC32C_ISAL, MPA_CRC32C_CLMUL};

static int usable_impls(enum mpa_crc32c_impl *out)
{
	int n = 0;

	for (size_t i = 0; i < IW_ARRAY_SIZE(all_impls); i++)
		if (mpa_crc32c_available(all_impls[i]))
			out[n++] = all_impls[i];
	return n;
}

/* The documented order (mpa_crc32c.c, crc_best), written out again. */
static enum mpa_crc32c_impl expected_best(void)
{
	bool avx512 = false;

#if defined(__x86_64__)
	avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		 __builtin_cpu_supports("vpclmulqdq");
#endif
	if (mpa_crc32c_available(MPA_CRC32C_ISAL) && avx512)
		return MPA_CRC32C_ISAL;
	if (mpa_crc32c_available(MPA_CRC32C_CLMUL))
		return MPA_CRC32C_CLMUL;
	if (mpa_crc32c_available(MPA_CRC32C_ISAL))
		return MPA_CRC32C_ISAL;
	if (mpa_crc32c_available(MPA_CRC32C_SSE42))
		return MPA_CRC32C_SSE42;
	return MPA_CRC32C_TABLE;
}

static uint32_t crc_with(enum mpa_crc32c_impl impl, const void *p, size_t n)
{
	return mpa_crc32c_final(mpa_crc32c_update_with(impl, MPA_CRC32C_INIT, p, n));
}

/* Bit-at-a-time reference written from the definition, independent of all backends. */
static uint32_t crc_ref(const uint8_t *p, size_t n)
{
	uint32_t r = MPA_CRC32C_INIT;

	while (n--) {
		r ^= *p++;
		for (int i = 0; i < 8; i++)
			r = (r >> 1) ^ (0x82F63B78u & (0u - (r & 1u)));
	}
	return ~r;
}

static struct th_rng rng_for(uint64_t salt)
{
	struct th_rng r;

	th_rng_init(&r, th_seed_from_env() ^ salt);
	return r;
}

START_TEST(vectors_match_value_and_wire_bytes_for_every_backend)
{
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);

	for (size_t i = 0; i < IW_ARRAY_SIZE(crc32c_vectors); i++) {
		const struct crc32c_vector *v = &crc32c_vectors[i];
		uint8_t in[256], wire[4], got[4];

		ck_assert_int_eq(th_hex_decode(v->input_hex, in, sizeof(in)), v->input_len);
		ck_assert_int_eq(th_hex_decode(v->wire_hex, wire, sizeof(wire)), 4);
		ck_assert_msg(crc_ref(in, v->input_len) == v->crc, "reference disagrees on %s",
			      v->name);
		for (int k = 0; k < n; k++) {
			uint32_t c = crc_with(impls[k], in, v->input_len);

			ck_assert_msg(c == v->crc, "%s on %s: 0x%08X, want 0x%08X",
				      mpa_crc32c_impl_name(impls[k]), v->name, c, v->crc);
			iw_put_le32(got, c);
			ck_assert_mem_eq(got, wire, 4);
		}
		ck_assert_uint_eq(mpa_crc32c(in, v->input_len), v->crc);
	}
}
END_TEST

START_TEST(check_value_of_123456789_is_e3069283_on_every_backend)
{
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);

	ck_assert_int_ge(n, 1);
	for (int k = 0; k < n; k++)
		ck_assert_uint_eq(crc_with(impls[k], check_input, 9), CHECK_VALUE);
	ck_assert_uint_eq(mpa_crc32c(check_input, 9), CHECK_VALUE);
	ck_assert_uint_eq(mpa_crc32c_final(mpa_crc32c_update(MPA_CRC32C_INIT, check_input, 9)),
			  CHECK_VALUE);
}
END_TEST

START_TEST(every_backend_works_on_the_raw_register)
{
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);

	for (int k = 0; k < n; k++) {
		/* No inversion inside: the state before final() is the complement of the value. */
		ck_assert_uint_eq(mpa_crc32c_update_with(impls[k], MPA_CRC32C_INIT, check_input, 9),
				  ~CHECK_VALUE);
		/* An empty update (even with no buffer) leaves any register as it is. */
		ck_assert_uint_eq(mpa_crc32c_update_with(impls[k], 0x12345678u, NULL, 0),
				  0x12345678u);
		ck_assert_uint_eq(mpa_crc32c_update_with(impls[k], 0, "", 0), 0);
	}
	ck_assert_uint_eq(mpa_crc32c(NULL, 0), 0);
}
END_TEST

START_TEST(receiver_residue_over_data_and_wire_crc_is_constant)
{
	struct th_rng r = rng_for(0x5E5);
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);
	static uint8_t buf[4096 + 4];

	for (size_t i = 0; i < IW_ARRAY_SIZE(crc32c_vectors); i++) {
		const struct crc32c_vector *v = &crc32c_vectors[i];
		long len = th_hex_decode(v->input_hex, buf, sizeof(buf) - 4);

		ck_assert_int_ge(len, 0);
		iw_put_le32(buf + len, v->crc);
		for (int k = 0; k < n; k++)
			ck_assert_uint_eq(crc_with(impls[k], buf, (size_t)len + 4),
					  MPA_CRC32C_RESIDUE);
	}
	for (int t = 0; t < 500; t++) {
		size_t len = (size_t)th_rng_range(&r, 0, 4096);

		th_rng_fill(&r, buf, len);
		iw_put_le32(buf + len, mpa_crc32c(buf, len));
		ck_assert_uint_eq(mpa_crc32c(buf, len + 4), MPA_CRC32C_RESIDUE);
		/* Any single flipped bit of data or CRC breaks the residue. */
		size_t bit = (size_t)th_rng_range(&r, 0, (len + 4) * 8 - 1);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_uint_ne(mpa_crc32c(buf, len + 4), MPA_CRC32C_RESIDUE);
	}
}
END_TEST

START_TEST(incremental_updates_equal_one_shot_for_random_splits)
{
	struct th_rng r = rng_for(0x1AC);
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);
	uint8_t *buf = malloc(BIG_LEN);

	ck_assert_ptr_nonnull(buf);
	for (int t = 0; t < 300; t++) {
		size_t len = (size_t)th_rng_range(&r, 0, t < 200 ? 2000 : BIG_LEN);

		th_rng_fill(&r, buf, len);
		for (int k = 0; k < n; k++) {
			uint32_t want = crc_with(impls[k], buf, len);
			uint32_t s = MPA_CRC32C_INIT;
			size_t off = 0;

			while (off < len) {
				/* Pieces of 0 octets and 1 octet included on purpose. */
				size_t piece = (size_t)th_rng_range(&r, 0, IW_MIN(len - off, 9000));

				if (th_rng_range(&r, 0, 3) == 0)
					piece = IW_MIN(piece, 9);
				s = mpa_crc32c_update_with(impls[k], s, buf + off, piece);
				off += piece;
			}
			ck_assert_uint_eq(mpa_crc32c_final(s), want);
		}
	}
	free(buf);
}
END_TEST

START_TEST(backends_can_hand_a_running_state_to_each_other)
{
	struct th_rng r = rng_for(0x4A4D);
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);
	static uint8_t buf[20000];

	for (int t = 0; t < 200; t++) {
		size_t len = (size_t)th_rng_range(&r, 0, sizeof(buf));
		uint32_t s = MPA_CRC32C_INIT;
		size_t off = 0;

		th_rng_fill(&r, buf, len);
		while (off < len) {
			size_t piece = (size_t)th_rng_range(&r, 1, len - off);
			enum mpa_crc32c_impl impl = impls[th_rng_range(&r, 0, (uint64_t)n - 1)];

			s = mpa_crc32c_update_with(impl, s, buf + off, piece);
			off += piece;
		}
		ck_assert_uint_eq(mpa_crc32c_final(s), crc_with(MPA_CRC32C_TABLE, buf, len));
	}
}
END_TEST

/* Compare every backend with the bit-wise reference and with each other on one case. */
static void agree_on(const uint8_t *p, size_t len, const enum mpa_crc32c_impl *impls, int n,
		     bool with_ref)
{
	uint32_t want = with_ref ? crc_ref(p, len) : crc_with(MPA_CRC32C_TABLE, p, len);

	for (int k = 0; k < n; k++) {
		uint32_t c = crc_with(impls[k], p, len);

		ck_assert_msg(c == want, "%s: len %zu align %u: 0x%08X, want 0x%08X",
			      mpa_crc32c_impl_name(impls[k]), len, (unsigned)((uintptr_t)p & 63), c,
			      want);
	}
}

START_TEST(backends_agree_on_random_lengths_and_alignments)
{
	struct th_rng r = rng_for(0xA11);
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);
	uint8_t *buf = aligned_alloc(64, AGREE_BUF_LEN);

	ck_assert_ptr_nonnull(buf);
	th_rng_fill(&r, buf, BIG_LEN + ALIGN_SLACK);
	/* Random cases, half of them short so block and tail boundaries are hit often. */
	for (int t = 0; t < 4000; t++) {
		size_t off = (size_t)th_rng_range(&r, 0, ALIGN_SLACK - 1);
		size_t len = (size_t)th_rng_range(&r, 0, (t & 1) ? BIG_LEN : 1024);

		/* Fresh bytes now and then so not every case shares the same prefix. */
		if ((t & 63) == 0)
			th_rng_fill(&r, buf, BIG_LEN + ALIGN_SLACK);
		agree_on(buf + off, len, impls, n, len <= 1024);
	}
	/* Every length up to past the SSE4.2 long round (3 * 2048) and its 3-way edges. */
	for (size_t len = 0; len <= 3 * 2048 + 80; len++) {
		size_t off = (size_t)th_rng_range(&r, 0, ALIGN_SLACK - 1);

		agree_on(buf + off, len, impls, n, false);
	}
	free(buf);
}
END_TEST

/*
 * Lengths at the edges of the clmul backend's blocks (mpa_crc32c_clmul.c: at
 * least 4096 octets, steps of 272 = 128 folded + 3 x 48 through crc32, at most
 * 256 steps a block, so a second block from 69,632 + 544 on), random data at
 * random alignments; every backend against the table.
 */
START_TEST(backends_agree_across_block_edges)
{
	struct th_rng r = rng_for(0xB10C);
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);
	static const size_t lens[] = {4095,	    4096,	    4096 + 272 - 1, 4096 + 272,
				      69632 - 1,    69632,	    69632 + 543,    69632 + 544,
				      69632 + 4096, 2 * 69632 + 17, EDGE_LEN};
	uint8_t *buf = aligned_alloc(64, EDGE_BUF_LEN);

	ck_assert_ptr_nonnull(buf);
	th_rng_fill(&r, buf, EDGE_LEN + ALIGN_SLACK);
	for (size_t i = 0; i < IW_ARRAY_SIZE(lens); i++)
		for (int t = 0; t < 4; t++)
			agree_on(buf + th_rng_range(&r, 0, ALIGN_SLACK - 1), lens[i], impls, n,
				 false);
	free(buf);
}
END_TEST

START_TEST(backends_agree_on_all_zero_and_all_one_data)
{
	enum mpa_crc32c_impl impls[IW_ARRAY_SIZE(all_impls)];
	int n = usable_impls(impls);
	static uint8_t buf[BIG_LEN];
	static const size_t lens[] = {1,   7,	8,   9,	   255,	 256,  257,   383,    384,
				      767, 768, 769, 6143, 6144, 6145, 65536, BIG_LEN};

	for (int fill = 0; fill < 2; fill++) {
		memset(buf, fill ? 0xFF : 0x00, sizeof(buf));
		for (size_t i = 0; i < IW_ARRAY_SIZE(lens); i++)
			agree_on(buf, lens[i], impls, n, true);
	}
}
END_TEST

START_TEST(available_reports_auto_and_table_always)
{
	ck_assert(mpa_crc32c_available(MPA_CRC32C_AUTO));
	ck_assert(mpa_crc32c_available(MPA_CRC32C_TABLE));
	ck_assert(!mpa_crc32c_available(MPA_CRC32C_IMPL_COUNT));
	ck_assert(!mpa_crc32c_available((enum mpa_crc32c_impl)(-1)));
#if !defined(__x86_64__)
	ck_assert(!mpa_crc32c_available(MPA_CRC32C_SSE42));
#endif
}
END_TEST

START_TEST(impl_names_are_the_environment_words)
{
	ck_assert_str_eq(mpa_crc32c_impl_name(MPA_CRC32C_AUTO), "auto");
	ck_assert_str_eq(mpa_crc32c_impl_name(MPA_CRC32C_TABLE), "table");
	ck_assert_str_eq(mpa_crc32c_impl_name(MPA_CRC32C_SSE42), "sse42");
	ck_assert_str_eq(mpa_crc32c_impl_name(MPA_CRC32C_ISAL), "isal");
	ck_assert_str_eq(mpa_crc32c_impl_name(MPA_CRC32C_CLMUL), "clmul");
	ck_assert_str_eq(mpa_crc32c_impl_name(MPA_CRC32C_IMPL_COUNT), "unknown");
}
END_TEST

START_TEST(select_forces_each_available_backend)
{
	for (size_t i = 0; i < IW_ARRAY_SIZE(all_impls); i++) {
		enum mpa_crc32c_impl impl = all_impls[i];
		enum mpa_crc32c_impl before = mpa_crc32c_selected();

		if (!mpa_crc32c_available(impl)) {
			ck_assert_int_eq(mpa_crc32c_select(impl), IW_ENOTSUP);
			ck_assert_int_eq(mpa_crc32c_selected(), before);
			continue;
		}
		ck_assert_int_eq(mpa_crc32c_select(impl), IW_OK);
		ck_assert_int_eq(mpa_crc32c_selected(), impl);
		ck_assert_uint_eq(mpa_crc32c(check_input, 9), CHECK_VALUE);
		ck_assert_uint_eq(
			mpa_crc32c_update_with(MPA_CRC32C_AUTO, MPA_CRC32C_INIT, check_input, 9),
			~CHECK_VALUE);
	}
	ck_assert_int_eq(mpa_crc32c_select(MPA_CRC32C_AUTO), IW_OK);
	ck_assert_int_eq(mpa_crc32c_selected(), expected_best());
	ck_assert_int_ne(mpa_crc32c_selected(), MPA_CRC32C_AUTO);
}
END_TEST

START_TEST(select_rejects_values_outside_the_enum)
{
	enum mpa_crc32c_impl before = mpa_crc32c_selected();

	ck_assert_int_eq(mpa_crc32c_select(MPA_CRC32C_IMPL_COUNT), IW_EINVAL);
	ck_assert_int_eq(mpa_crc32c_select((enum mpa_crc32c_impl)(-1)), IW_EINVAL);
	ck_assert_int_eq(mpa_crc32c_selected(), before);
}
END_TEST

/*
 * IWARP_CRC32C is read once per process, so it is tested in fresh processes: the
 * test re-executes this binary with IW_TEST_CRC32C_PROBE set, and the constructor
 * below answers before Check starts, through the exit status:
 *	bits 0-3  the backend selected, bit 4  a warning was logged,
 *	bit 5     the CRC of "123456789" was wrong.
 */
#define PROBE_IMPL_MASK 0x0F
#define PROBE_WARNED	0x10
#define PROBE_BAD_CRC	0x20

static void probe_log(void *ctx, enum iw_log_level level, const char *msg)
{
	(void)msg;
	if (level == IW_LOG_WARN)
		*(int *)ctx = 1;
}

__attribute__((constructor)) static void crc_env_probe(void)
{
	static int warned;
	enum mpa_crc32c_impl impl;
	int st;

	if (!getenv("IW_TEST_CRC32C_PROBE"))
		return;
	iw_log_set(probe_log, &warned, IW_LOG_DEBUG);
	/* The first CRC call must make the choice, not the query after it. */
	st = mpa_crc32c(check_input, 9) == CHECK_VALUE ? 0 : PROBE_BAD_CRC;
	impl = mpa_crc32c_selected();
	_exit((int)impl | st | (warned ? PROBE_WARNED : 0));
}

/* Run the probe with IWARP_CRC32C=value (NULL: unset); returns its exit status. */
static int run_probe(const char *value)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *argv[] = {(char *)"test_mpa_crc32c-probe", NULL};

		setenv("IW_TEST_CRC32C_PROBE", "1", 1);
		if (value)
			setenv("IWARP_CRC32C", value, 1);
		else
			unsetenv("IWARP_CRC32C");
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		ck_assert_int_eq(errno, EINTR);
	ck_assert_msg(WIFEXITED(status), "probe for %s died", value ? value : "(unset)");
	ck_assert_msg(WEXITSTATUS(status) != 127, "could not re-execute /proc/self/exe");
	ck_assert_msg(!(WEXITSTATUS(status) & PROBE_BAD_CRC), "probe for %s: wrong CRC",
		      value ? value : "(unset)");
	return WEXITSTATUS(status);
}

static void expect_probe(const char *value, enum mpa_crc32c_impl impl, bool warned)
{
	int st = run_probe(value);

	ck_assert_msg((st & PROBE_IMPL_MASK) == (int)impl, "IWARP_CRC32C=%s selected %s, want %s",
		      value ? value : "(unset)", mpa_crc32c_impl_name(st & PROBE_IMPL_MASK),
		      mpa_crc32c_impl_name(impl));
	ck_assert_msg(!!(st & PROBE_WARNED) == warned, "IWARP_CRC32C=%s: warning %s expected",
		      value ? value : "(unset)", warned ? "was" : "was not");
}

START_TEST(env_override_forces_a_backend_in_a_fresh_process)
{
	enum mpa_crc32c_impl best = expected_best();

	expect_probe(NULL, best, false);
	expect_probe("", best, false);
	expect_probe("auto", best, false);
	expect_probe("table", MPA_CRC32C_TABLE, false);
	for (int i = MPA_CRC32C_SSE42; i <= MPA_CRC32C_CLMUL; i++) {
		enum mpa_crc32c_impl impl = (enum mpa_crc32c_impl)i;
		bool ok = mpa_crc32c_available(impl);

		expect_probe(mpa_crc32c_impl_name(impl), ok ? impl : best, !ok);
	}
}
END_TEST

START_TEST(env_override_with_unknown_value_warns_and_uses_auto)
{
	expect_probe("crc-by-hand", expected_best(), true);
	expect_probe("TABLE", expected_best(), true);
}
END_TEST

static Suite *crc32c_suite(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc = tcase_create("vectors");

	tcase_add_test(tc, vectors_match_value_and_wire_bytes_for_every_backend);
	tcase_add_test(tc, check_value_of_123456789_is_e3069283_on_every_backend);
	tcase_add_test(tc, every_backend_works_on_the_raw_register);
	tcase_add_test(tc, receiver_residue_over_data_and_wire_crc_is_constant);
	suite_add_tcase(s, tc);

	tc = tcase_create("random");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, incremental_updates_equal_one_shot_for_random_splits);
	tcase_add_test(tc, backends_can_hand_a_running_state_to_each_other);
	tcase_add_test(tc, backends_agree_on_random_lengths_and_alignments);
	tcase_add_test(tc, backends_agree_on_all_zero_and_all_one_data);
	tcase_add_test(tc, backends_agree_across_block_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("select");
	tcase_add_test(tc, available_reports_auto_and_table_always);
	tcase_add_test(tc, impl_names_are_the_environment_words);
	tcase_add_test(tc, select_forces_each_available_backend);
	tcase_add_test(tc, select_rejects_values_outside_the_enum);
	tcase_add_test(tc, env_override_forces_a_backend_in_a_fresh_process);
	tcase_add_test(tc, env_override_with_unknown_value_warns_and_uses_auto);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(crc32c_suite)
