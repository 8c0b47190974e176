/* SPDX-License-Identifier: MIT */
/* th.c - shared test helpers (see th.h). */
#include "th.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long th_hex_decode(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (hex[0] && hex[1]) {
		int hi = hexval(hex[0]), lo = hexval(hex[1]);
		if (hi < 0 || lo < 0 || n >= cap)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		hex += 2;
	}
	return hex[0] ? -1 : (long)n;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint64_t th_seed_from_env(void)
{
	static uint64_t seed;
	static int have;

	if (!have) {
		const char *e = getenv("IW_TEST_SEED");
		seed = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)clock();
		have = 1;
		fprintf(stderr, "IW_TEST_SEED=%" PRIu64 "\n", seed);
	}
	return seed;
}

uint64_t th_seed_for(uint64_t salt)
{
	return th_seed_from_env() ^ (salt * 0x9E3779B97F4A7C15ull);
}

void th_rng_init(struct th_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t th_rng_next(struct th_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t th_rng_range(struct th_rng *r, uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo + 1;
	return span == 0 ? th_rng_next(r) : lo + th_rng_next(r) % span;
}

void th_rng_fill(struct th_rng *r, void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n) {
		uint64_t v = th_rng_next(r);
		for (int i = 0; i < 8 && n; i++, n--)
			*p++ = (uint8_t)(v >> (8 * i));
	}
}

uint8_t *th_memdup_exact(const void *p, size_t n)
{
	/* malloc(0) may return NULL; a 1-octet block still makes every access out of bounds. */
	uint8_t *d = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(d);
	if (n)
		memcpy(d, p, n);
	return d;
}

uint64_t th_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

socklen_t th_loopback(int family, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s4->sin_port = htons(port);
	return sizeof(*s4);
}

void th_add_tcase(Suite *s, const char *name, const TTest *const *tests, size_t n)
{
	TCase *tc = tcase_create(name);

	for (size_t i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
}

int th_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
