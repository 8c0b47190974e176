/* SPDX-License-Identifier: MIT */
/*
 * test_ddp_stag.c - the STag table (RFC 5041 §3.5, §7.1; RFC 5040 §6.2): STag 0
 * is never valid, keys are random and change at every re-registration of an
 * index, the check order INVALID/PD/ACCESS/WRAP/BOUNDS, overflow-safe bounds
 * near 2^64, a full table and index reuse, deregistration, local and remote
 * invalidation and revalidation.
 */
#include <iwarp/ddp.h>

#include <stdio.h>
#include <stdlib.h>

#include "iw_alloc.h"
#include "iw_bytes.h"
#include "th.h"

#define PD    7u
#define OTHER 8u
#define BASE  0x1000u
#define LEN   256u
#define RW    (DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE)
#define ALL                                                                                        \
	(DDP_ACCESS_LOCAL_WRITE | DDP_ACCESS_REMOTE_READ | DDP_ACCESS_REMOTE_WRITE |               \
	 DDP_ACCESS_REMOTE_INVALIDATE)

static uint8_t mem[LEN];

static struct ddp_stag_table *table(uint32_t n)
{
	struct ddp_stag_table *t = ddp_stag_table_create(n, 0x1234567890ABCDEFull);

	ck_assert_ptr_nonnull(t);
	return t;
}

static uint32_t reg(struct ddp_stag_table *t, uint32_t access)
{
	uint32_t stag = 0;

	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, BASE, LEN, access, &stag), IW_OK);
	return stag;
}

START_TEST(stag_table_create_refuses_bad_sizes)
{
	ck_assert_ptr_null(ddp_stag_table_create(0, 1));
	ck_assert_ptr_null(ddp_stag_table_create(DDP_STAG_INDEX_MAX + 1, 1));
	ddp_stag_table_destroy(NULL);
}
END_TEST

static int calloc_budget;

static void *budget_malloc(void *ctx, size_t n)
{
	return malloc(n);
}

static void *budget_calloc(void *ctx, size_t nmemb, size_t n)
{
	return calloc_budget-- > 0 ? calloc(nmemb, n) : NULL;
}

static void budget_free(void *ctx, void *p)
{
	free(p);
}

START_TEST(stag_table_create_fails_cleanly_without_memory)
{
	const struct iw_allocator a = {budget_malloc, budget_calloc, budget_free, NULL};

	iw_allocator_set(&a);
	for (calloc_budget = 0; calloc_budget < 2;) {
		int budget = calloc_budget;

		ck_assert_ptr_null(ddp_stag_table_create(4, 1));
		calloc_budget = budget + 1;
	}
	iw_allocator_set(NULL);
}
END_TEST

START_TEST(stag_zero_is_never_valid)
{
	struct ddp_stag_table *t = table(4);
	uint32_t stag = reg(t, ALL);

	ck_assert_uint_ne(DDP_STAG_INDEX(stag), 0);
	for (uint32_t key = 0; key < 256; key++)
		ck_assert_int_eq(ddp_stag_check(t, DDP_STAG_MAKE(0, key), PD, 0, BASE, 1, NULL),
				 DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_dereg(t, 0), IW_EDDP_STAG_UNKNOWN);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_reg_gives_a_working_stag_and_address)
{
	struct ddp_stag_table *t = table(4);
	uint32_t stag = reg(t, RW);
	void *dst = NULL;

	ck_assert_int_eq(ddp_stag_check(t, stag, PD, DDP_ACCESS_REMOTE_WRITE, BASE + 10, 20, &dst),
			 DDP_STAG_OK);
	ck_assert_ptr_eq(dst, mem + 10);
	ck_assert_uint_eq(ddp_stag_count(t), 1);
	ck_assert_int_eq(ddp_stag_dereg(t, stag), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_reg_refuses_bad_arguments)
{
	struct ddp_stag_table *t = table(4);
	uint32_t stag;

	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, UINT64_MAX - 9, 10, RW, &stag), IW_EINVAL);
	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, 1, UINT64_MAX, RW, &stag), IW_EINVAL);
	ck_assert_int_eq(ddp_stag_reg(t, PD, NULL, BASE, 1, RW, &stag), IW_EINVAL);
	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, BASE, LEN, 1u << 31, &stag), IW_EINVAL);
	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, BASE, LEN, RW, NULL), IW_EINVAL);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	/* Zero length with a NULL address is a valid (empty) registration. */
	ck_assert_int_eq(ddp_stag_reg(t, PD, NULL, BASE, 0, RW, &stag), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 1);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_keys_change_at_every_reregistration_of_an_index)
{
	struct ddp_stag_table *t = table(1);
	unsigned seen[256] = {0};
	uint32_t prev = reg(t, RW);
	int distinct = 0;

	for (int i = 0; i < 2000; i++) {
		uint32_t stag;

		ck_assert_int_eq(ddp_stag_dereg(t, prev), IW_OK);
		stag = reg(t, RW);
		ck_assert_uint_eq(DDP_STAG_INDEX(stag), DDP_STAG_INDEX(prev));
		ck_assert_msg(DDP_STAG_KEY(stag) != DDP_STAG_KEY(prev), "key repeated at step %d",
			      i);
		/* The old STag names nothing any more. */
		ck_assert_int_eq(ddp_stag_check(t, prev, PD, 0, BASE, 1, NULL), DDP_STAG_INVALID);
		seen[DDP_STAG_KEY(stag)]++;
		prev = stag;
	}
	for (int k = 0; k < 256; k++)
		distinct += seen[k] != 0;
	/* Random keys cover the key space; a counter-like or stuck generator would not. */
	ck_assert_int_gt(distinct, 200);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_keys_depend_on_the_seed)
{
	struct ddp_stag_table *a = ddp_stag_table_create(64, 1);
	struct ddp_stag_table *b = ddp_stag_table_create(64, 2);
	int same = 0;

	for (int i = 0; i < 64; i++) {
		uint32_t sa, sb;

		ck_assert_int_eq(ddp_stag_reg(a, PD, mem, BASE, LEN, RW, &sa), IW_OK);
		ck_assert_int_eq(ddp_stag_reg(b, PD, mem, BASE, LEN, RW, &sb), IW_OK);
		same += sa == sb;
	}
	ck_assert_int_lt(same, 16);
	ddp_stag_table_destroy(a);
	ddp_stag_table_destroy(b);
}
END_TEST

START_TEST(stag_wrong_key_and_unknown_index_are_invalid)
{
	struct ddp_stag_table *t = table(4);
	uint32_t stag = reg(t, ALL);
	uint32_t wrong = DDP_STAG_MAKE(DDP_STAG_INDEX(stag), DDP_STAG_KEY(stag) ^ 0x5A);

	ck_assert_int_eq(ddp_stag_check(t, wrong, PD, 0, BASE, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(
		ddp_stag_check(t, DDP_STAG_MAKE(2, DDP_STAG_KEY(stag)), PD, 0, BASE, 1, NULL),
		DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(t, DDP_STAG_MAKE(5, 0), PD, 0, BASE, 1, NULL),
			 DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(t, 0xFFFFFFFFu, PD, 0, BASE, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_check(NULL, stag, PD, 0, BASE, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_dereg(t, wrong), IW_EDDP_STAG_UNKNOWN);
	ck_assert_int_eq(ddp_stag_dereg(t, DDP_STAG_MAKE(3, 0)), IW_EDDP_STAG_UNKNOWN);
	ck_assert_int_eq(ddp_stag_dereg(t, stag), IW_OK);
	ck_assert_int_eq(ddp_stag_dereg(t, stag), IW_EDDP_STAG_UNKNOWN);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_wrong_pd_is_reported_before_access_and_bounds)
{
	struct ddp_stag_table *t = table(4);
	uint32_t stag = reg(t, DDP_ACCESS_REMOTE_READ);

	ck_assert_int_eq(
		ddp_stag_check(t, stag, OTHER, DDP_ACCESS_REMOTE_WRITE, 0, UINT64_MAX, NULL),
		DDP_STAG_PD);
	ck_assert_int_eq(ddp_stag_check(t, stag, OTHER, 0, BASE, 1, NULL), DDP_STAG_PD);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_each_access_right_is_checked)
{
	static const uint32_t rights[] = {DDP_ACCESS_LOCAL_WRITE, DDP_ACCESS_REMOTE_READ,
					  DDP_ACCESS_REMOTE_WRITE, DDP_ACCESS_REMOTE_INVALIDATE};
	struct ddp_stag_table *t = table(16);

	for (size_t i = 0; i < IW_ARRAY_SIZE(rights); i++) {
		uint32_t only = reg(t, rights[i]);
		uint32_t others = reg(t, ALL & ~rights[i]);

		ck_assert_int_eq(ddp_stag_check(t, only, PD, rights[i], BASE, 1, NULL),
				 DDP_STAG_OK);
		ck_assert_int_eq(ddp_stag_check(t, others, PD, rights[i], BASE, 1, NULL),
				 DDP_STAG_ACCESS);
		/* Every requested right must be present, not just one of them. */
		ck_assert_int_eq(ddp_stag_check(t, only, PD, ALL, BASE, 1, NULL), DDP_STAG_ACCESS);
		ck_assert_int_eq(ddp_stag_check(t, others, PD, ALL & ~rights[i], BASE, 1, NULL),
				 DDP_STAG_OK);
	}
	/* A bounds violation is reported before the access right: the bounds
	 * are DDP's check (RFC 5041 §7.1), the right RDMAP's (RFC 5040 §7.2). */
	ck_assert_int_eq(ddp_stag_check(t, reg(t, DDP_ACCESS_REMOTE_READ), PD,
					DDP_ACCESS_REMOTE_WRITE, 0, 1, NULL),
			 DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, reg(t, DDP_ACCESS_REMOTE_READ), PD,
					DDP_ACCESS_REMOTE_WRITE, UINT64_MAX, 2, NULL),
			 DDP_STAG_WRAP);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_bounds_at_both_edges)
{
	struct ddp_stag_table *t = table(4);
	uint32_t s = reg(t, RW);
	const uint64_t end = BASE + LEN;
	void *dst;

	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE - 1, 1, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE - 1, 2, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, 1, &dst), DDP_STAG_OK);
	ck_assert_ptr_eq(dst, mem);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, LEN, NULL), DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, LEN + 1, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, end - 1, 1, &dst), DDP_STAG_OK);
	ck_assert_ptr_eq(dst, mem + LEN - 1);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, end - 1, 2, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, end, 1, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, end + 1, 1, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, end + 1, 0, NULL), DDP_STAG_BOUNDS);
	/* Zero length: checked for base, allowed right at the end. */
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, end, 0, &dst), DDP_STAG_OK);
	ck_assert_ptr_eq(dst, mem + LEN);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE - 1, 0, NULL), DDP_STAG_BOUNDS);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_range_wrapping_2_64_is_wrap_not_bounds)
{
	struct ddp_stag_table *t = table(4);
	uint32_t s = reg(t, RW);

	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, UINT64_MAX, 1, NULL), DDP_STAG_WRAP);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, UINT64_MAX - 9, 11, NULL), DDP_STAG_WRAP);
	/* A TO inside the region with a length that wraps: the naive sum would land inside. */
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, UINT64_MAX - BASE + 2, NULL),
			 DDP_STAG_WRAP);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE + 1, UINT64_MAX, NULL), DDP_STAG_WRAP);
	/* Exactly up to 2^64 - 1 does not wrap; it is simply out of bounds. */
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, UINT64_MAX - BASE, NULL),
			 DDP_STAG_BOUNDS);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_base_to_near_2_64)
{
	struct ddp_stag_table *t = table(4);
	const uint64_t base = UINT64_MAX - LEN;
	uint32_t s;
	void *dst;

	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, base, LEN, RW, &s), IW_OK);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, base, LEN, &dst), DDP_STAG_OK);
	ck_assert_ptr_eq(dst, mem);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, UINT64_MAX - 1, 1, &dst), DDP_STAG_OK);
	ck_assert_ptr_eq(dst, mem + LEN - 1);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, UINT64_MAX - 1, 2, NULL), DDP_STAG_WRAP);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, UINT64_MAX, 0, NULL), DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, UINT64_MAX, 1, NULL), DDP_STAG_WRAP);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, base - 1, 1, NULL), DDP_STAG_BOUNDS);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, 0, 1, NULL), DDP_STAG_BOUNDS);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_table_full_at_max_entries_and_a_freed_index_is_reused)
{
	enum { N = 16 };
	struct ddp_stag_table *t = table(N);
	uint32_t s[N], extra, again;
	unsigned used = 0;

	for (int i = 0; i < N; i++) {
		s[i] = reg(t, RW);
		ck_assert_uint_ge(DDP_STAG_INDEX(s[i]), 1);
		ck_assert_uint_le(DDP_STAG_INDEX(s[i]), N);
		ck_assert(!(used & (1u << (DDP_STAG_INDEX(s[i]) - 1))));
		used |= 1u << (DDP_STAG_INDEX(s[i]) - 1);
	}
	ck_assert_uint_eq(ddp_stag_count(t), N);
	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, BASE, LEN, RW, &extra), IW_EDDP_STAG_TABLE_FULL);
	ck_assert_int_eq(ddp_stag_dereg(t, s[5]), IW_OK);
	again = reg(t, RW);
	ck_assert_uint_eq(DDP_STAG_INDEX(again), DDP_STAG_INDEX(s[5]));
	ck_assert_uint_ne(again, s[5]);
	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, BASE, LEN, RW, &extra), IW_EDDP_STAG_TABLE_FULL);
	s[5] = again;
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(ddp_stag_dereg(t, s[i]), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

/*
 * Free slots are drawn at random, not the lowest: consecutive registrations
 * do not give consecutive (or predictable) indices, they stay within the
 * dense span of max(4096, 2 * registered + 2) slots, and a freed slot is not
 * the next one handed out.
 */
START_TEST(stag_indices_are_not_predictable)
{
	enum { N = 3000, SPAN_MIN = 4096 };
	struct ddp_stag_table *t = table(65536);
	static uint32_t s[N];
	static uint8_t used[65537];
	int runs = 0, above = 0, again = 0;

	for (int i = 0; i < N; i++) {
		uint32_t ix;

		s[i] = reg(t, RW);
		ix = DDP_STAG_INDEX(s[i]);
		/* i registered before: the span is max(4096, 2 * i + 2) */
		ck_assert(ix >= 1 && ix <= (uint32_t)(2 * i + 2 > SPAN_MIN ? 2 * i + 2 : SPAN_MIN));
		ck_assert(!used[ix]);
		used[ix] = 1;
		if (i && ix == DDP_STAG_INDEX(s[i - 1]) + 1)
			runs++;
		if (ix > N)
			above++;
	}
	/* sequential allocation would give N - 1 runs and nothing above N */
	ck_assert_int_lt(runs, 20);
	ck_assert_int_gt(above, N / 8);
	/* free and register 200 times: the freed index comes back rarely */
	for (int i = 0; i < 200; i++) {
		uint32_t old = s[i], n;

		ck_assert_int_eq(ddp_stag_dereg(t, old), IW_OK);
		n = reg(t, RW);
		again += DDP_STAG_INDEX(n) == DDP_STAG_INDEX(old);
		s[i] = n;
	}
	ck_assert_int_lt(again, 10);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(ddp_stag_dereg(t, s[i]), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

/*
 * How many tries a peer that guesses STags needs to name a live one (the
 * figure in docs/rdmap.md, section 8): the guesser knows the scheme - an
 * index among the first 4096 slots, any of 256 keys - and tries each guess
 * on a new connection (a wrong STag ends the stream with a Terminate).
 * With L registrations live in the table the expected count is
 * 4096 * 256 / L; measured here for L = 1 and L = 64, must land within a
 * factor of two of it, and is printed.
 */
START_TEST(stag_guessing_takes_a_million_tries_for_one_live_stag)
{
	static const unsigned live[] = {1, 64};
	uint64_t rng = 0x5eed5eedull;

	for (unsigned k = 0; k < sizeof(live) / sizeof(live[0]); k++) {
		struct ddp_stag_table *t = ddp_stag_table_create(65536, 0xC0FFEEull + k);
		enum { TRIALS = 24 };
		uint64_t total = 0;
		double expect = 4096.0 * 256.0 / live[k], mean;

		ck_assert_ptr_nonnull(t);
		for (unsigned i = 0; i < live[k]; i++)
			(void)reg(t, RW);
		for (int trial = 0; trial < TRIALS; trial++) {
			uint64_t tries = 0;

			for (;;) {
				uint32_t idx, key;

				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				idx = 1 + (uint32_t)((rng >> 33) % 4096);
				key = (uint32_t)(rng >> 20) & 0xFF;
				tries++;
				if (ddp_stag_check(t, DDP_STAG_MAKE(idx, key), PD, 0, BASE, 1,
						   NULL) != DDP_STAG_INVALID)
					break;
			}
			total += tries;
		}
		mean = (double)total / TRIALS;
		printf("STag guessing: %u live, %.0f tries on average (expected %.0f)\n", live[k],
		       mean, expect);
		ck_assert(mean > expect / 2 && mean < expect * 2);
		ddp_stag_table_destroy(t);
	}
}
END_TEST

/* A table filled to the last slot: the random draw falls back to a scan. */
START_TEST(stag_every_slot_of_a_full_table_is_handed_out)
{
	enum { N = 100 };
	struct ddp_stag_table *t = table(N);
	uint32_t s[N], extra;
	uint8_t used[N + 1] = {0};

	for (int i = 0; i < N; i++) {
		s[i] = reg(t, RW);
		ck_assert(!used[DDP_STAG_INDEX(s[i])]);
		used[DDP_STAG_INDEX(s[i])] = 1;
	}
	ck_assert_int_eq(ddp_stag_reg(t, PD, mem, BASE, LEN, RW, &extra), IW_EDDP_STAG_TABLE_FULL);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(ddp_stag_dereg(t, s[i]), IW_OK);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_local_invalidate_blocks_access_and_is_idempotent)
{
	struct ddp_stag_table *t = table(4);
	uint32_t s = reg(t, RW); /* no remote-invalidate right needed locally */
	enum ddp_stag_check why = DDP_STAG_WRAP;

	ck_assert_int_eq(ddp_stag_invalidate(t, s, OTHER, false, &why), IW_OK);
	ck_assert_int_eq(why, DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, 1, NULL), DDP_STAG_INVALID);
	/* Still registered: counted, and invalidating again is fine. */
	ck_assert_uint_eq(ddp_stag_count(t), 1);
	ck_assert_int_eq(ddp_stag_invalidate(t, s, PD, false, NULL), IW_OK);
	/* A wrong key or unknown STag is refused even locally. */
	ck_assert_int_eq(ddp_stag_invalidate(t, s ^ 1, PD, false, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_invalidate(t, 0, PD, false, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	/* An invalidated STag can still be deregistered. */
	ck_assert_int_eq(ddp_stag_dereg(t, s), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_remote_invalidate_needs_pd_and_right)
{
	struct ddp_stag_table *t = table(4);
	uint32_t no_right = reg(t, RW);
	uint32_t s = reg(t, RW | DDP_ACCESS_REMOTE_INVALIDATE);
	enum ddp_stag_check why;

	ck_assert_int_eq(ddp_stag_invalidate(t, no_right, PD, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_ACCESS);
	ck_assert_int_eq(ddp_stag_check(t, no_right, PD, 0, BASE, 1, NULL), DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_invalidate(t, s, OTHER, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_PD);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, 1, NULL), DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_invalidate(t, s ^ 0x80, PD, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_invalidate(t, 0, PD, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);

	ck_assert_int_eq(ddp_stag_invalidate(t, s, PD, true, &why), IW_OK);
	ck_assert_int_eq(why, DDP_STAG_OK);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, 1, NULL), DDP_STAG_INVALID);
	/* A peer naming an STag that is already invalid is an error. */
	ck_assert_int_eq(ddp_stag_invalidate(t, s, PD, true, &why), IW_EINVAL);
	ck_assert_int_eq(why, DDP_STAG_INVALID);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_revalidate_gives_a_new_stag_and_the_old_stays_invalid)
{
	struct ddp_stag_table *t = table(4);
	uint32_t s = reg(t, RW), n = 0, n2 = 0;
	void *dst;

	ck_assert_int_eq(ddp_stag_invalidate(t, s, PD, false, NULL), IW_OK);
	ck_assert_int_eq(ddp_stag_revalidate(t, s, &n), IW_OK);
	ck_assert_uint_eq(DDP_STAG_INDEX(n), DDP_STAG_INDEX(s));
	ck_assert_uint_ne(DDP_STAG_KEY(n), DDP_STAG_KEY(s));
	ck_assert_int_eq(ddp_stag_check(t, n, PD, DDP_ACCESS_REMOTE_WRITE, BASE + 3, 4, &dst),
			 DDP_STAG_OK);
	ck_assert_ptr_eq(dst, mem + 3);
	ck_assert_int_eq(ddp_stag_check(t, s, PD, 0, BASE, 1, NULL), DDP_STAG_INVALID);
	ck_assert_int_eq(ddp_stag_revalidate(t, s, &n2), IW_EDDP_STAG_UNKNOWN);
	ck_assert_int_eq(ddp_stag_dereg(t, s), IW_EDDP_STAG_UNKNOWN);
	ck_assert_uint_eq(ddp_stag_count(t), 1);
	ck_assert_int_eq(ddp_stag_dereg(t, n), IW_OK);
	ck_assert_uint_eq(ddp_stag_count(t), 0);
	ddp_stag_table_destroy(t);
}
END_TEST

START_TEST(stag_random_references_never_escape_the_registration)
{
	struct th_rng r;
	struct ddp_stag_table *t = table(4);
	uint32_t s = reg(t, RW);

	th_rng_init(&r, th_seed_from_env());
	for (int i = 0; i < 100000; i++) {
		/* Mix TOs and lengths near the region and near 2^64. */
		uint64_t to = th_rng_next(&r) & 1 ? BASE - 4 + th_rng_range(&r, 0, LEN + 8)
						  : th_rng_next(&r);
		uint64_t len = th_rng_next(&r) & 1 ? th_rng_range(&r, 0, LEN + 8) : th_rng_next(&r);
		void *dst = NULL;
		enum ddp_stag_check c = ddp_stag_check(t, s, PD, 0, to, len, &dst);

		if (c == DDP_STAG_OK) {
			ck_assert_uint_ge(to, BASE);
			ck_assert_uint_le(len, LEN);
			ck_assert_uint_le(to - BASE, LEN - len);
			ck_assert_ptr_eq(dst, mem + (to - BASE));
		} else {
			ck_assert(c == DDP_STAG_BOUNDS || c == DDP_STAG_WRAP);
		}
	}
	ddp_stag_table_destroy(t);
}
END_TEST

static Suite *ddp_stag_suite(void)
{
	Suite *s = suite_create("ddp_stag");
	TCase *tc = tcase_create("core");

	suite_add_tcase(s, tc);
	tcase_add_test(tc, stag_table_create_refuses_bad_sizes);
	tcase_add_test(tc, stag_table_create_fails_cleanly_without_memory);
	tcase_add_test(tc, stag_zero_is_never_valid);
	tcase_add_test(tc, stag_reg_gives_a_working_stag_and_address);
	tcase_add_test(tc, stag_reg_refuses_bad_arguments);
	tcase_add_test(tc, stag_keys_change_at_every_reregistration_of_an_index);
	tcase_add_test(tc, stag_keys_depend_on_the_seed);
	tcase_add_test(tc, stag_wrong_key_and_unknown_index_are_invalid);
	tcase_add_test(tc, stag_wrong_pd_is_reported_before_access_and_bounds);
	tcase_add_test(tc, stag_each_access_right_is_checked);
	tcase_add_test(tc, stag_bounds_at_both_edges);
	tcase_add_test(tc, stag_range_wrapping_2_64_is_wrap_not_bounds);
	tcase_add_test(tc, stag_base_to_near_2_64);
	tcase_add_test(tc, stag_table_full_at_max_entries_and_a_freed_index_is_reused);
	tcase_add_test(tc, stag_indices_are_not_predictable);
	tcase_add_test(tc, stag_every_slot_of_a_full_table_is_handed_out);
	tcase_add_test(tc, stag_guessing_takes_a_million_tries_for_one_live_stag);
	tcase_add_test(tc, stag_local_invalidate_blocks_access_and_is_idempotent);
	tcase_add_test(tc, stag_remote_invalidate_needs_pd_and_right);
	tcase_add_test(tc, stag_revalidate_gives_a_new_stag_and_the_old_stays_invalid);
	tcase_add_test(tc, stag_random_references_never_escape_the_registration);
	return s;
}

TH_MAIN(ddp_stag_suite)
