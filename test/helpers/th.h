/* SPDX-License-Identifier: MIT */
/*
 * th.h - shared test helpers: hex decoding, a seeded deterministic PRNG and
 * the common Check main().  Tests that use randomness print their seed; rerun
 * with IW_TEST_SEED=<seed> to reproduce.
 */
#ifndef IW_TH_H
#define IW_TH_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

/* Decode a hex string (no separators) into out; returns octets written or -1. */
long th_hex_decode(const char *hex, uint8_t *out, size_t cap);

/* xoshiro-style PRNG; th_rng_seed() reads IW_TEST_SEED or picks one and prints it. */
struct th_rng {
	uint64_t s[4];
};
uint64_t th_seed_from_env(void);
void th_rng_init(struct th_rng *r, uint64_t seed);
uint64_t th_rng_next(struct th_rng *r);
/* Uniform in [lo, hi] inclusive. */
uint64_t th_rng_range(struct th_rng *r, uint64_t lo, uint64_t hi);
void th_rng_fill(struct th_rng *r, void *buf, size_t n);

/*
 * A heap copy of exactly n octets (n may be 0), so ASan reports any read past
 * the end of an input a decoder was given.  Free it with free().
 */
uint8_t *th_memdup_exact(const void *p, size_t n);

/* Run one Check suite; returns the process exit status (0 = all passed). */
int th_run_suite(Suite *s);

#define TH_MAIN(suite_fn)                                                                          \
	int main(void)                                                                             \
	{                                                                                          \
		return th_run_suite(suite_fn());                                                   \
	}

#endif /* IW_TH_H */
