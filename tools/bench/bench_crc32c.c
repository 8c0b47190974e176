/* SPDX-License-Identifier: MIT */
/*
 * bench_crc32c.c - throughput of each CRC32c backend (mpa.h, RFC 5044 §4.4).
 *
 * For every backend usable on this machine, measures one-shot CRCs of a 64 B
 * (tiny FPDU), 1536 B (one Ethernet-sized FPDU) and 65536 B (largest ULPDU)
 * buffer and prints GB/s (1e9 octets per second).  Each cell is calibrated
 * first (doubling the call count until a batch takes 20 ms), then timed with
 * CLOCK_MONOTONIC over about --seconds (default 0.3 s).  Calls are independent
 * CRCs from MPA_CRC32C_INIT, as for separate FPDUs, through
 * mpa_crc32c_update_with(), so the dispatch cost is part of the number.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>

#include "iw_bytes.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"

static const size_t bench_sizes[] = {64, 1536, 65536};
#define NSIZES	  (sizeof(bench_sizes) / sizeof(bench_sizes[0]))
#define BUF_ALIGN 64

struct cell {
	double gbps;
	unsigned long long iters;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-crc32c [--json] [--seconds S]\n"
		   "\n"
		   "Measure the CRC32c backends of the iwarp MPA layer (table, sse42, isal,\n"
		   "clmul; only those usable here) at 64 B, 1536 B and 65536 B per call and print\n"
		   "GB/s (1e9 bytes per second).\n"
		   "\n"
		   "  --json        print one JSON object instead of a table\n"
		   "  --seconds S   measuring time per cell, 0.001 to 3600 (default 0.3)\n"
		   "  --help        this text\n"
		   "\n"
		   "IWARP_CRC32C=table|sse42|isal|clmul changes only the 'auto' line of the "
		   "output.\n");
}

static double now_s(void)
{
	return (double)iwt_now_ns() * 1e-9;
}

static uint32_t run(enum mpa_crc32c_impl impl, const uint8_t *buf, size_t len,
		    unsigned long long iters)
{
	uint32_t acc = 0;

	for (unsigned long long i = 0; i < iters; i++)
		acc ^= mpa_crc32c_update_with(impl, MPA_CRC32C_INIT, buf, len);
	return acc;
}

static struct cell measure(enum mpa_crc32c_impl impl, const uint8_t *buf, size_t len,
			   double seconds)
{
	volatile uint32_t sink = 0;
	unsigned long long iters = 1;
	double dt;
	struct cell c;

	for (;;) {
		double t0 = now_s();

		sink ^= run(impl, buf, len, iters);
		dt = now_s() - t0;
		if (dt >= 0.02 || iters >= (1ull << 40))
			break;
		iters *= 2;
	}
	c.iters = (unsigned long long)((double)iters * seconds / (dt > 0 ? dt : 1e-9));
	if (c.iters == 0)
		c.iters = 1;
	double t0 = now_s();
	sink ^= run(impl, buf, len, c.iters);
	dt = now_s() - t0;
	c.gbps = (double)c.iters * (double)len / dt / 1e9;
	(void)sink;
	return c;
}

int main(int argc, char **argv)
{
	static const enum mpa_crc32c_impl impls[] = {MPA_CRC32C_TABLE, MPA_CRC32C_SSE42,
						     MPA_CRC32C_ISAL, MPA_CRC32C_CLMUL};
	struct cell cells[IW_ARRAY_SIZE(impls)][NSIZES];
	bool json = false, have[IW_ARRAY_SIZE(impls)] = {false};
	double seconds = 0.3;
	uint8_t *buf;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			if (iwt_num_seconds("bench-crc32c", "--seconds", argv[++i], 0.001, 3600,
					    &seconds))
				return IWT_EXIT_USAGE;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return IWT_EXIT_USAGE;
		}
	}

	buf = aligned_alloc(BUF_ALIGN, bench_sizes[NSIZES - 1]);
	if (!buf) {
		perror("bench-crc32c");
		return 1;
	}
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < bench_sizes[NSIZES - 1]; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(x >> 56);
	}

	for (size_t k = 0; k < IW_ARRAY_SIZE(impls); k++) {
		if (!mpa_crc32c_available(impls[k]))
			continue;
		/* Never report a speed for a backend that computes the wrong thing. */
		uint32_t chk = mpa_crc32c_final(
			mpa_crc32c_update_with(impls[k], MPA_CRC32C_INIT, "123456789", 9));
		uint32_t ref = mpa_crc32c_final(mpa_crc32c_update_with(
			MPA_CRC32C_TABLE, MPA_CRC32C_INIT, buf, bench_sizes[NSIZES - 1]));
		uint32_t got = mpa_crc32c_final(mpa_crc32c_update_with(
			impls[k], MPA_CRC32C_INIT, buf, bench_sizes[NSIZES - 1]));
		if (chk != 0xE3069283u || got != ref) {
			fprintf(stderr, "bench-crc32c: backend %s gives wrong CRCs\n",
				mpa_crc32c_impl_name(impls[k]));
			free(buf);
			return 1;
		}
		have[k] = true;
		for (size_t s = 0; s < NSIZES; s++)
			cells[k][s] = measure(impls[k], buf, bench_sizes[s], seconds);
	}

	const char *autoname = mpa_crc32c_impl_name(mpa_crc32c_selected());
	if (json) {
		bool first = true;

		printf("{\"unit\": \"GB/s\", \"seconds_per_cell\": %.3f, \"auto\": \"%s\", "
		       "\"results\": [",
		       seconds, autoname);
		for (size_t k = 0; k < IW_ARRAY_SIZE(impls); k++) {
			for (size_t s = 0; have[k] && s < NSIZES; s++) {
				printf("%s\n  {\"backend\": \"%s\", \"size\": %zu, \"gbps\": %.3f, "
				       "\"iterations\": %llu}",
				       first ? "" : ",", mpa_crc32c_impl_name(impls[k]),
				       bench_sizes[s], cells[k][s].gbps, cells[k][s].iters);
				first = false;
			}
		}
		printf("\n]}\n");
	} else {
		printf("CRC32c throughput in GB/s (1e9 B/s), %.2f s per cell; auto = %s\n", seconds,
		       autoname);
		printf("%-8s", "backend");
		for (size_t s = 0; s < NSIZES; s++)
			printf(" %9zu B", bench_sizes[s]);
		printf("\n");
		for (size_t k = 0; k < IW_ARRAY_SIZE(impls); k++) {
			if (!have[k])
				continue;
			printf("%-8s", mpa_crc32c_impl_name(impls[k]));
			for (size_t s = 0; s < NSIZES; s++)
				printf(" %11.2f", cells[k][s].gbps);
			printf("\n");
		}
	}
	free(buf);
	return 0;
}
