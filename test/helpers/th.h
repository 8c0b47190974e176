/* SPDX-License-Identifier: MIT */
/*
 * th.h - shared test helpers: hex decoding, a seeded deterministic PRNG, a
 * monotonic clock, loopback addresses and the common Check main().  Tests that
 * use randomness print their seed; rerun with IW_TEST_SEED=<seed> to
 * reproduce.
 */
#ifndef IW_TH_H
#define IW_TH_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Decode a hex string (no separators) into out; returns octets written or -1. */
long th_hex_decode(const char *hex, uint8_t *out, size_t cap);

/* xoshiro-style PRNG; th_rng_seed() reads IW_TEST_SEED or picks one and prints it. */
struct th_rng {
	uint64_t s[4];
};
uint64_t th_seed_from_env(void);
/* The run's seed mixed with salt: one reproducible stream per use in a test. */
uint64_t th_seed_for(uint64_t salt);
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

/* Milliseconds of CLOCK_MONOTONIC: for deadlines and durations. */
uint64_t th_now_ms(void);

/*
 * The loopback address of family (AF_INET6, otherwise AF_INET) with port (host
 * order) in *ss, the rest zeroed; returns the length of that address.
 */
socklen_t th_loopback(int family, uint16_t port, struct sockaddr_storage *ss);

/* Add a test case `name` holding tests[0..n) to s. */
void th_add_tcase(Suite *s, const char *name, const TTest *const *tests, size_t n);
/* th_add_tcase with the tests listed: TH_ADD_TCASE(s, "name", test_a, test_b, ...). */
#define TH_ADD_TCASE(s, name, ...)                                                                 \
	do {                                                                                       \
		const TTest *th_tests_[] = {__VA_ARGS__};                                          \
		th_add_tcase(s, name, th_tests_, sizeof(th_tests_) / sizeof(th_tests_[0]));        \
	} while (0)

/* Run one Check suite; returns the process exit status (0 = all passed). */
int th_run_suite(Suite *s);

#define TH_MAIN(suite_fn)                                                                          \
	int main(void)                                                                             \
	{                                                                                          \
		return th_run_suite(suite_fn());                                                   \
	}

#endif /* IW_TH_H */
