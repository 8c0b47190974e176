/* SPDX-License-Identifier: MIT */
/*
 * test_iwt.c - the tools library (tools/lib, prefix iwt_): the one number
 * rule (decimal only, signs, junk, overflow, suffixes, ranges, seconds with
 * a fraction, on/off words); addresses (HOST, HOST:PORT, [V6]:PORT, a port
 * alone, bad ports; "ADDR:PORT" / "[ADDR]:PORT"); RTR names and their round
 * trip; rping's ping buffer octet by octet and iwmpa's pattern; the
 * monotonic clock; the shared iWARP options and the exact "PROG: invalid
 * value 'X' for OPT: WHY" lines; the verbs objects a tool opens and closes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/mpa.h>

#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"
#include "iwt_opt.h"
#include "iwt_pattern.h"
#include "iwt_rtr.h"
#include "iwt_sock.h"
#include "iwt_verbs.h"
#include "th.h"

/* ---------------------------------------------------------------------- */
/* Numbers and switches (iwt_num.h)                                       */
/* ---------------------------------------------------------------------- */

/*
 * test_iwt_num.c - the one number rule of the tools (tools/lib/iwt_num.h):
 * decimal only, signs, junk, overflow, suffixes, ranges, seconds with a
 * fraction, and the on/off switch words.
 */

#define BIG UINT64_MAX
#define SFX IWT_NUM_SUFFIX

/* One parse: the string, the range, the flags, the verdict and (when OK) the value. */
static const struct num_row {
	const char *s;
	uint64_t min, max;
	unsigned flags;
	enum iwt_num_err e;
	uint64_t v;
} num_rows[] = {
	/* decimal inside the range, bounds included; leading zeros are not octal */
	{"0", 0, 10, 0, IWT_NUM_OK, 0},
	{"10", 0, 10, 0, IWT_NUM_OK, 10},
	{"65535", 1, 65535, 0, IWT_NUM_OK, 65535},
	{"1", 1, 255, 0, IWT_NUM_OK, 1},
	{"010", 0, 100, 0, IWT_NUM_OK, 10},
	{"08", 0, 100, 0, IWT_NUM_OK, 8},
	{"18446744073709551615", 0, BIG, 0, IWT_NUM_OK, BIG},
	/* outside the range */
	{"0", 1, 255, 0, IWT_NUM_RANGE, 0},
	{"256", 1, 255, 0, IWT_NUM_RANGE, 0},
	{"70000", 0, 65535, 0, IWT_NUM_RANGE, 0},
	/* signs, hex, white space, junk */
	{"", 0, 10, 0, IWT_NUM_EMPTY, 0},
	{"-1", 0, 10, 0, IWT_NUM_SIGN, 0},
	{"+1", 0, 10, 0, IWT_NUM_SIGN, 0},
	{"-0", 0, 10, 0, IWT_NUM_SIGN, 0},
	{"0x10", 0, 100, 0, IWT_NUM_HEX, 0},
	{"0X1f", 0, 100, 0, IWT_NUM_HEX, 0},
	{"0x", 0, 100, 0, IWT_NUM_HEX, 0},
	{" 5", 0, 10, 0, IWT_NUM_JUNK, 0},
	{"x5", 0, 10, 0, IWT_NUM_JUNK, 0},
	{".5", 0, 10, 0, IWT_NUM_JUNK, 0},
	{"5 ", 0, 10, 0, IWT_NUM_TRAILING, 0},
	{"5x", 0, 10, 0, IWT_NUM_TRAILING, 0},
	{"1.5", 0, 10, 0, IWT_NUM_TRAILING, 0},
	{"1e3", 0, 10000, 0, IWT_NUM_TRAILING, 0},
	/* overflow is too large, never a wrap; syntax is judged before size */
	{"18446744073709551616", 0, BIG, 0, IWT_NUM_OVERFLOW, 0},
	{"99999999999999999999999", 0, 10, 0, IWT_NUM_OVERFLOW, 0},
	{"99999999999999999999999x", 0, 10, 0, IWT_NUM_TRAILING, 0},
	{"17179869184G", 0, BIG, SFX, IWT_NUM_OVERFLOW, 0},
	/* binary suffixes, either case, only where asked */
	{"64K", 0, BIG, SFX, IWT_NUM_OK, 65536},
	{"64k", 0, BIG, SFX, IWT_NUM_OK, 65536},
	{"4m", 0, BIG, SFX, IWT_NUM_OK, 4u << 20},
	{"2G", 0, BIG, SFX, IWT_NUM_OK, 2ull << 30},
	{"256M", 1, 256u << 20, SFX, IWT_NUM_OK, 256u << 20},
	{"257M", 1, 256u << 20, SFX, IWT_NUM_RANGE, 0},
	{"0K", 1, 100, SFX, IWT_NUM_RANGE, 0},
	{"4T", 0, BIG, SFX, IWT_NUM_BAD_SUFFIX, 0},
	{"4KB", 0, BIG, SFX, IWT_NUM_TRAILING, 0},
	{"K", 0, BIG, SFX, IWT_NUM_JUNK, 0},
	{"64K", 0, BIG, 0, IWT_NUM_TRAILING, 0},
	{"0x10K", 0, BIG, SFX, IWT_NUM_HEX, 0},
};

START_TEST(num_rule_verdicts)
{
	for (size_t i = 0; i < sizeof(num_rows) / sizeof(num_rows[0]); i++) {
		const struct num_row *r = &num_rows[i];
		uint64_t v = 0xdeadbeef;
		enum iwt_num_err e = iwt_num_parse(r->s, r->min, r->max, r->flags, &v);

		ck_assert_msg(e == r->e, "'%s' in [%" PRIu64 ", %" PRIu64 "]: %d, expected %d",
			      r->s, r->min, r->max, e, r->e);
		/* the value on success; untouched on refusal */
		ck_assert_uint_eq(v, r->e == IWT_NUM_OK ? r->v : 0xdeadbeef);
	}
}
END_TEST

START_TEST(num_why_names_each_refusal)
{
	static const struct {
		enum iwt_num_err e;
		const char *why;
	} rows[] = {
		{IWT_NUM_RANGE, "must be from 1 to 255"},
		{IWT_NUM_HEX, "hexadecimal is not accepted, only decimal"},
		{IWT_NUM_SIGN, "no sign allowed"},
		{IWT_NUM_JUNK, "not a decimal number"},
		{IWT_NUM_TRAILING, "trailing characters"},
		{IWT_NUM_BAD_SUFFIX, "unknown suffix (K, M or G)"},
		{IWT_NUM_OVERFLOW, "too large"},
		{IWT_NUM_EMPTY, "empty"},
		{(enum iwt_num_err)77, "invalid"},
	};
	char why[96];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		iwt_num_why(rows[i].e, 1, 255, why, sizeof(why));
		ck_assert_str_eq(why, rows[i].why);
	}
}
END_TEST

START_TEST(seconds_take_a_decimal_fraction_and_nothing_else)
{
	static const struct {
		const char *s;
		enum iwt_num_err e;
		double v;
	} rows[] = {
		{"2", IWT_NUM_OK, 2.0},	      {"0.5", IWT_NUM_OK, 0.5},
		{".25", IWT_NUM_OK, 0.25},    {"3.", IWT_NUM_OK, 3.0},
		{"0.001", IWT_NUM_OK, 0.001}, {"86400", IWT_NUM_OK, 86400},
		{"0.0009", IWT_NUM_RANGE, 0}, {"86400.5", IWT_NUM_RANGE, 0},
		{"0", IWT_NUM_RANGE, 0},      {"", IWT_NUM_EMPTY, 0},
		{"-1", IWT_NUM_SIGN, 0},      {"0x10", IWT_NUM_HEX, 0},
		{"1e2", IWT_NUM_TRAILING, 0}, {"1.2.3", IWT_NUM_TRAILING, 0},
		{".", IWT_NUM_JUNK, 0},	      {"inf", IWT_NUM_JUNK, 0},
		{"nan", IWT_NUM_JUNK, 0},     {" 1", IWT_NUM_JUNK, 0},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double d = -1;

		ck_assert_msg(iwt_num_parse_seconds(rows[i].s, 0.001, 86400, &d) == rows[i].e,
			      "'%s'", rows[i].s);
		ck_assert(d == (rows[i].e == IWT_NUM_OK ? rows[i].v : -1));
	}
}
END_TEST

START_TEST(onoff_knows_exactly_the_eight_words)
{
	static const char *const on[] = {"on", "yes", "true", "1"};
	static const char *const off[] = {"off", "no", "false", "0"};
	static const char *const bad[] = {"", "ON", "Off", "2", "y", "enable", "on "};

	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(iwt_onoff_parse(on[i]), 1);
		ck_assert_int_eq(iwt_onoff_parse(off[i]), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(iwt_onoff_parse(bad[i]), -1);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Addresses (iwt_addr.h)                                                 */
/* ---------------------------------------------------------------------- */

/*
 * test_iwt_addr.c - addresses on the tools' command lines and in their
 * output (tools/lib/iwt_addr.h): HOST, HOST:PORT, [V6]:PORT, a port alone,
 * bare IPv6, bad ports; numeric resolution; "ADDR:PORT" / "[ADDR]:PORT".
 */

/* Split s; check the host and the port (-1 = no port). */
static void split_ok(const char *s, const char *host, long port)
{
	struct iwt_hostport hp;
	const char *why = NULL;

	ck_assert_msg(iwt_addr_split(s, &hp, &why) == 0, "'%s' refused: %s", s, why);
	ck_assert_str_eq(hp.host, host);
	ck_assert_int_eq(hp.has_port, port >= 0);
	if (port >= 0)
		ck_assert_int_eq(hp.port, port);
}

static void split_bad(const char *s, const char *why_expected)
{
	struct iwt_hostport hp;
	const char *why = NULL;

	ck_assert_msg(iwt_addr_split(s, &hp, &why) == -1, "'%s' accepted", s);
	ck_assert_str_eq(why, why_expected);
}

START_TEST(split_reads_every_documented_form)
{
	split_ok("127.0.0.1", "127.0.0.1", -1);
	split_ok("127.0.0.1:20049", "127.0.0.1", 20049);
	split_ok("nfs-server:2049", "nfs-server", 2049);
	split_ok("localhost", "localhost", -1);
	split_ok("[::1]:7174", "::1", 7174);
	split_ok("[fe80::1%lo]:1", "fe80::1%lo", 1);
	split_ok("[::1]", "::1", -1);
	split_ok("::1", "::1", -1); /* two or more colons: a bare IPv6 address */
	split_ok("fe80::1:2", "fe80::1:2", -1);
	split_ok(":12049", "", 12049);
	split_ok("12049", "", 12049);
	split_ok("0", "", 0);
	split_ok("host:0", "host", 0);
	split_ok("host:65535", "host", 65535);
	split_ok("host:010", "host", 10); /* decimal, not octal */
}
END_TEST

START_TEST(split_refuses_bad_brackets_and_bad_ports)
{
	static const char bad_port[] = "bad port (decimal, 0 to 65535)";
	char longname[IWT_HOST_MAX + 8];

	split_bad("[::1", "missing ']'");
	split_bad("[::1]7174", "expected ':' after ']'");
	split_bad("[::1]:", bad_port);
	split_bad("[::1]:65536", bad_port);
	split_bad("host:", bad_port);
	split_bad("host:-1", bad_port);
	split_bad("host:+1", bad_port);
	split_bad("host:0x10", bad_port);
	split_bad("host:80x", bad_port);
	split_bad("host:99999999999999999999", bad_port);
	split_bad(":http", bad_port);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	split_bad(longname, "host name too long");
}
END_TEST

START_TEST(resolve_numeric_addresses_of_both_families)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	char buf[IWT_ADDR_STRLEN];

	ck_assert_int_eq(iwt_addr_resolve("127.0.0.1", 7174, false, &ss, &len), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_uint_eq(len, sizeof(struct sockaddr_in));
	ck_assert_str_eq(iwt_addr_format((struct sockaddr *)&ss, buf, sizeof(buf)),
			 "127.0.0.1:7174");
	ck_assert_int_eq(iwt_addr_resolve("::1", 20049, false, &ss, &len), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_uint_eq(len, sizeof(struct sockaddr_in6));
	ck_assert_str_eq(iwt_addr_format((struct sockaddr *)&ss, buf, sizeof(buf)), "[::1]:20049");
	/* passive without a host: the wildcard address, port kept */
	ck_assert_int_eq(iwt_addr_resolve(NULL, 5044, true, &ss, NULL), 0);
	ck_assert_uint_eq(iwt_addr_port((struct sockaddr *)&ss), 5044);
}
END_TEST

START_TEST(format_host_port_and_set_port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	char buf[IWT_ADDR_STRLEN], small[8];

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.7", &sin->sin_addr);
	iwt_addr_set_port(&ss, 65535);
	ck_assert_uint_eq(ntohs(sin->sin_port), 65535);
	ck_assert_str_eq(iwt_addr_format((struct sockaddr *)&ss, buf, sizeof(buf)),
			 "192.0.2.7:65535");
	ck_assert_str_eq(iwt_addr_host((struct sockaddr *)&ss, buf, sizeof(buf)), "192.0.2.7");
	ck_assert_uint_eq(iwt_addr_port((struct sockaddr *)&ss), 65535);
	/* a short buffer is cut, never overrun */
	iwt_addr_format((struct sockaddr *)&ss, small, sizeof(small));
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);

	memset(&ss, 0, sizeof(ss));
	sin6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::1", &sin6->sin6_addr);
	iwt_addr_set_port(&ss, 0);
	ck_assert_str_eq(iwt_addr_format((struct sockaddr *)&ss, buf, sizeof(buf)),
			 "[2001:db8::1]:0");
	ck_assert_str_eq(iwt_addr_host((struct sockaddr *)&ss, buf, sizeof(buf)), "2001:db8::1");

	ck_assert_str_eq(iwt_addr_format(NULL, buf, sizeof(buf)), "?");
	ck_assert_uint_eq(iwt_addr_port(NULL), 0);
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	iwt_addr_set_port(&ss, 80); /* no port to set: nothing happens */
	ck_assert_str_eq(iwt_addr_format((struct sockaddr *)&ss, buf, sizeof(buf)), "(family 1)");
	ck_assert_uint_eq(iwt_addr_port((struct sockaddr *)&ss), 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* RTR forms (iwt_rtr.h)                                                  */
/* ---------------------------------------------------------------------- */

/*
 * test_iwt_rtr.c - RTR forms by name (tools/lib/iwt_rtr.h): the list parser,
 * the names back (a round trip for every mask), the single-form messages.
 */

START_TEST(rtr_parse_reads_lists_of_forms)
{
	uint8_t m = 0xff;

	ck_assert_int_eq(iwt_rtr_parse("write", &m), 0);
	ck_assert_uint_eq(m, MPA_RTR_WRITE);
	ck_assert_int_eq(iwt_rtr_parse("read", &m), 0);
	ck_assert_uint_eq(m, MPA_RTR_READ);
	ck_assert_int_eq(iwt_rtr_parse("send", &m), 0);
	ck_assert_uint_eq(m, MPA_RTR_SEND);
	ck_assert_int_eq(iwt_rtr_parse("all", &m), 0);
	ck_assert_uint_eq(m, MPA_RTR_ALL);
	ck_assert_int_eq(iwt_rtr_parse("send,write", &m), 0);
	ck_assert_uint_eq(m, MPA_RTR_SEND | MPA_RTR_WRITE);
	ck_assert_int_eq(iwt_rtr_parse("read,read", &m), 0);
	ck_assert_uint_eq(m, MPA_RTR_READ);
	ck_assert_int_eq(iwt_rtr_parse("write,all", &m), 0);
	ck_assert_uint_eq(m, MPA_RTR_ALL);
}
END_TEST

START_TEST(rtr_parse_refuses_unknown_empty_and_odd_spellings)
{
	static const char *const bad[] = {"",	   ",",	     "write,", "write,,read", ",read",
					  "Write", "READ",   "writes", "wri",	      "none",
					  "0",	   "write ", " write", "write;read"};
	uint8_t m = 0x5a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(iwt_rtr_parse(bad[i], &m) == -1, "'%s' accepted", bad[i]);
	ck_assert_uint_eq(m, 0x5a); /* untouched */
}
END_TEST

START_TEST(rtr_names_round_trip_every_mask)
{
	char buf[IWT_RTR_NAMES_LEN];

	ck_assert_str_eq(iwt_rtr_names(MPA_RTR_NONE, buf, sizeof(buf)), "none");
	ck_assert_str_eq(iwt_rtr_names(MPA_RTR_ALL, buf, sizeof(buf)), "write,read,send");
	ck_assert_str_eq(iwt_rtr_names(MPA_RTR_SEND | MPA_RTR_WRITE, buf, sizeof(buf)),
			 "write,send");
	ck_assert_str_eq(iwt_rtr_names(0xf8 | MPA_RTR_READ, buf, sizeof(buf)), "read");
	for (uint8_t mask = 1; mask <= MPA_RTR_ALL; mask++) {
		uint8_t back = 0;

		iwt_rtr_names(mask, buf, sizeof(buf));
		ck_assert_msg(iwt_rtr_parse(buf, &back) == 0, "'%s' not read back", buf);
		ck_assert_uint_eq(back, mask);
	}
}
END_TEST

START_TEST(rtr_names_in_a_short_buffer_stay_terminated)
{
	char small[7];

	iwt_rtr_names(MPA_RTR_ALL, small, sizeof(small));
	ck_assert_str_eq(small, "write,");
}
END_TEST

START_TEST(rtr_form_names_say_which_message)
{
	static const char *const names[MPA_RTR_ALL + 1] = {
		[MPA_RTR_WRITE] = "zero-length RDMA Write RTR",
		[MPA_RTR_READ] = "zero-length RDMA Read Request RTR",
		[MPA_RTR_SEND] = "zero-length Send RTR",
	};

	/* exactly one form has a name; none, several or unknown bits: "no RTR" */
	for (unsigned m = 0; m <= 0xff; m++)
		ck_assert_str_eq(iwt_rtr_form_name((uint8_t)m),
				 m <= MPA_RTR_ALL && names[m] ? names[m] : "no RTR");
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Patterns and the clock (iwt_pattern.h, iwt_clock.h)                    */
/* ---------------------------------------------------------------------- */

/*
 * test_iwt_pattern.c - the data patterns (tools/lib/iwt_pattern.h): rping's
 * ping buffer octet by octet (what a stock rping peer sees from iwping) and
 * iwmpa's message pattern; and the monotonic clock (iwt_clock.h).
 */

START_TEST(rping_buffer_is_header_letters_and_a_nul)
{
	char buf[IWT_RPING_MIN_SIZE];
	unsigned char start = IWT_RPING_FIRST_LETTER;

	memset(buf, '#', sizeof(buf));
	iwt_rping_fill(buf, sizeof(buf), 0, &start);
	/* 13 octets of header, 12 letters from 'A', the NUL */
	ck_assert_mem_eq(buf, "rdma-ping-0: ABCDEFGHIJKL\0", sizeof(buf));
	ck_assert_uint_eq(start, 'B');
}
END_TEST

START_TEST(rping_letters_run_from_A_to_z_through_the_signs_and_wrap)
{
	char buf[80];
	unsigned char start = 'y';

	iwt_rping_fill(buf, 21, 7, &start);
	ck_assert_str_eq(buf, "rdma-ping-7: yzABCDE");
	ck_assert_uint_eq(start, 'z');
	iwt_rping_fill(buf, 20, 8, &start);
	ck_assert_str_eq(buf, "rdma-ping-8: zABCDE");
	ck_assert_uint_eq(start, 'A');
	/* 'Z' is followed by the six signs between it and 'a' */
	start = 'X';
	iwt_rping_fill(buf, 26, 12, &start);
	ck_assert_str_eq(buf, "rdma-ping-12: XYZ[\\]^_`ab");
}
END_TEST

START_TEST(rping_start_letter_comes_back_after_58_pings)
{
	unsigned char start = IWT_RPING_FIRST_LETTER;
	char buf[64];

	for (int ping = 0; ping < IWT_RPING_LAST_LETTER - IWT_RPING_FIRST_LETTER + 1; ping++) {
		ck_assert_uint_eq(start, IWT_RPING_FIRST_LETTER + ping);
		iwt_rping_fill(buf, sizeof(buf), ping, &start);
		ck_assert_int_eq(buf[sizeof(buf) - 1], '\0');
	}
	ck_assert_uint_eq(start, IWT_RPING_FIRST_LETTER);
}
END_TEST

START_TEST(rping_largest_buffer_and_largest_ping_number)
{
	size_t size = 65535;
	char *buf = malloc(size);
	unsigned char start = 'A';
	size_t hdr = strlen("rdma-ping-2147483647: ");

	ck_assert_ptr_nonnull(buf);
	iwt_rping_fill(buf, size, INT_MAX, &start);
	ck_assert_mem_eq(buf, "rdma-ping-2147483647: ", hdr);
	for (size_t i = hdr; i < size - 1; i++)
		ck_assert_int_eq((unsigned char)buf[i], 'A' + (i - hdr) % 58);
	ck_assert_int_eq(buf[size - 1], '\0');
	ck_assert_uint_eq(strlen(buf), size - 1);
	free(buf);
}
END_TEST

START_TEST(rping_header_is_cut_when_the_buffer_is_tiny)
{
	char buf[6];
	unsigned char start = 'A';

	iwt_rping_fill(buf, sizeof(buf), 1, &start);
	ck_assert_str_eq(buf, "rdma-");
	ck_assert_uint_eq(start, 'B');
}
END_TEST

START_TEST(abc_pattern_is_lower_case_shifted_per_message)
{
	uint8_t p[60];

	iwt_abc_fill(p, sizeof(p), 1);
	ck_assert_mem_eq(p, "bcdefghijklmnopqrstuvwxyzabcd", 29);
	ck_assert_uint_eq(iwt_abc_byte(1, 0), 'b');
	ck_assert_uint_eq(iwt_abc_byte(25, 0), 'z');
	ck_assert_uint_eq(iwt_abc_byte(26, 0), 'a');
	ck_assert_uint_eq(iwt_abc_byte(3, 1000), 'a' + 1003 % 26);
	ck_assert_uint_eq(iwt_abc_check(p, sizeof(p), 1), sizeof(p));
	ck_assert_uint_eq(iwt_abc_check(p, sizeof(p), 2), 0);
	p[41] ^= 0x20;
	ck_assert_uint_eq(iwt_abc_check(p, sizeof(p), 1), 41);
	ck_assert_uint_eq(iwt_abc_check(p, 0, 1), 0);
}
END_TEST

START_TEST(clock_is_monotonic_in_its_three_units)
{
	struct timespec pause = {.tv_nsec = 2000000};
	uint64_t ns = iwt_now_ns(), us = iwt_now_us(), ms = iwt_now_ms();

	nanosleep(&pause, NULL);
	ck_assert_uint_ge(iwt_now_ns(), ns + 2000000);
	ck_assert_uint_ge(iwt_now_us(), us + 2000);
	ck_assert_uint_ge(iwt_now_ms(), ms + 2);
	/* the same clock: ms and us are ns truncated */
	ms = iwt_now_ms();
	ns = iwt_now_ns();
	ck_assert_uint_ge(ns / 1000000, ms);
}
END_TEST

START_TEST(ms_until_rounds_up_and_knows_no_deadline)
{
	uint64_t now = iwt_now_ns();
	int ms;

	ck_assert_int_eq(iwt_ms_until(UINT64_MAX), -1);
	ck_assert_int_eq(iwt_ms_until(0), 0);
	ck_assert_int_eq(iwt_ms_until(now), 0);
	ms = iwt_ms_until(iwt_now_ns() + 1); /* 1 ns left is still a 1 ms wait (or passed) */
	ck_assert(ms == 0 || ms == 1);
	ms = iwt_ms_until(now + 5000000000ull);
	ck_assert(ms > 4000 && ms <= 5000);
	ck_assert_int_eq(iwt_ms_until(UINT64_MAX - 1), INT_MAX);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The shared iWARP options and the messages (iwt_opt.h, iwt_err.h)       */
/* ---------------------------------------------------------------------- */

/*
 * test_iwt_opt.c - the shared iWARP options (tools/lib/iwt_opt.h) and the
 * command-line messages every tool prints (iwt_err.h): each option's values
 * and refusals, and the exact "PROG: invalid value 'X' for OPT: WHY" lines.
 */

/* What stderr received while fn(arg) ran (Check runs each test in its own process). */
static char captured[1024];

static int capture_stderr(int (*fn)(const void *), const void *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), ret;
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	ret = fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(captured, 1, sizeof(captured) - 1, tmp);
	captured[n] = '\0';
	fclose(tmp);
	return ret;
}

struct opt_call {
	int c;
	const char *arg;
	struct iwt_opt *o;
};

static int run_opt(const void *p)
{
	const struct opt_call *call = p;

	return iwt_opt_parse(call->o, "iwtest", call->c, call->arg);
}

/* iwt_opt_parse(c, arg) on fresh defaults; its stderr in `captured`. */
static int opt(struct iwt_opt *o, int c, const char *arg)
{
	struct opt_call call = {.c = c, .arg = arg, .o = o};

	iwt_opt_init(o);
	return capture_stderr(run_opt, &call);
}

START_TEST(opt_defaults_are_the_library_defaults)
{
	struct iwt_opt o;
	struct iwcm_options def;

	iwt_opt_init(&o);
	iwcm_options_default(&def);
	ck_assert_uint_eq(o.cm.mpa_rev, def.mpa_rev);
	ck_assert_int_eq(o.cm.crc, def.crc);
	ck_assert_uint_eq(o.cm.rtr, def.rtr);
	ck_assert_int_eq(o.engine, IWV_ENGINE_DEFAULT);
	ck_assert_uint_eq(o.ird, 0);
	ck_assert_uint_eq(o.ord, 0);
}
END_TEST

START_TEST(opt_values_are_stored)
{
	struct iwt_opt o;

	ck_assert_int_eq(opt(&o, IWT_OPT_MPA_REV, "1"), 0);
	ck_assert_uint_eq(o.cm.mpa_rev, 1);
	ck_assert_int_eq(opt(&o, IWT_OPT_CRC, "off"), 0);
	ck_assert_int_eq(o.cm.crc, false);
	ck_assert_int_eq(opt(&o, IWT_OPT_MARKERS, "yes"), 0);
	ck_assert_int_eq(o.cm.markers, true);
	ck_assert_int_eq(opt(&o, IWT_OPT_P2P, "1"), 0);
	ck_assert_int_eq(o.cm.p2p, true);
	ck_assert_int_eq(opt(&o, IWT_OPT_RTR, "read,send"), 0);
	ck_assert_uint_eq(o.cm.rtr, MPA_RTR_READ | MPA_RTR_SEND);
	ck_assert_int_eq(opt(&o, IWT_OPT_IRD, "255"), 0);
	ck_assert_uint_eq(o.ird, 255);
	ck_assert_int_eq(opt(&o, IWT_OPT_ORD, "1"), 0);
	ck_assert_uint_eq(o.ord, 1);
	ck_assert_int_eq(opt(&o, IWT_OPT_ENGINE, "io_uring"), 0);
	ck_assert_int_eq(o.engine, IWV_ENGINE_URING);
	ck_assert_int_eq(opt(&o, IWT_OPT_ENGINE, "epoll"), 0);
	ck_assert_int_eq(o.engine, IWV_ENGINE_EPOLL);
	ck_assert_int_eq(opt(&o, IWT_OPT_FIRST_FPDU_DELAY, "60000"), 0);
	ck_assert_uint_eq(o.cm.first_fpdu_delay_ms, 60000);
	ck_assert_int_eq(opt(&o, IWT_OPT_FIRST_FPDU_DELAY, "0"), 0);
	ck_assert_uint_eq(o.cm.first_fpdu_delay_ms, 0);
	ck_assert_int_eq(opt(&o, IWT_OPT_TRACE, NULL), 0);
	ck_assert_int_eq(o.cm.trace, true);
	ck_assert_int_eq(opt(&o, IWT_OPT_ENGINE_THREAD, NULL), 0);
	ck_assert_int_eq(o.engine_thread, true);
	ck_assert_int_eq(opt(&o, IWT_OPT_RX_DIRECT, "on"), 0);
	ck_assert_int_eq(o.rx_direct, 1);
	ck_assert_int_eq(opt(&o, IWT_OPT_RX_DIRECT, "off"), 0);
	ck_assert_int_eq(o.rx_direct, 0);
	ck_assert_str_eq(captured, "");
}
END_TEST

START_TEST(opt_refusals_say_what_and_why_in_one_line)
{
	static const struct {
		int c;
		const char *arg, *line;
	} rows[] = {
		{IWT_OPT_MPA_REV, "3",
		 "iwtest: invalid value '3' for --mpa-rev: 1 (RFC 5044) or 2 (RFC 6581)\n"},
		{IWT_OPT_MPA_REV, "0x2",
		 "iwtest: invalid value '0x2' for --mpa-rev: 1 (RFC 5044) or 2 (RFC 6581)\n"},
		{IWT_OPT_CRC, "ON", "iwtest: invalid value 'ON' for --crc: on or off\n"},
		{IWT_OPT_P2P, "", "iwtest: invalid value '' for --p2p: on or off\n"},
		{IWT_OPT_RTR, "write,,read",
		 "iwtest: invalid value 'write,,read' for --rtr: a comma-separated list of write, "
		 "read, send, all\n"},
		{IWT_OPT_IRD, "0", "iwtest: invalid value '0' for --ird: must be from 1 to 255\n"},
		{IWT_OPT_ORD, "256",
		 "iwtest: invalid value '256' for --ord: must be from 1 to 255\n"},
		{IWT_OPT_ORD, "0x10",
		 "iwtest: invalid value '0x10' for --ord: hexadecimal is not accepted, only "
		 "decimal\n"},
		{IWT_OPT_IRD, "-1", "iwtest: invalid value '-1' for --ird: no sign allowed\n"},
		{IWT_OPT_IRD, " 1", "iwtest: invalid value ' 1' for --ird: not a decimal number\n"},
		{IWT_OPT_FIRST_FPDU_DELAY, "60001",
		 "iwtest: invalid value '60001' for --first-fpdu-delay: must be from 0 to 60000\n"},
		{IWT_OPT_ENGINE, "poll",
		 "iwtest: invalid value 'poll' for --engine: uring, epoll or auto\n"},
		{IWT_OPT_RX_DIRECT, "1", "iwtest: invalid value '1' for --rx-direct: on or off\n"},
	};
	struct iwt_opt o;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ck_assert_int_eq(opt(&o, rows[i].c, rows[i].arg), -1);
		ck_assert_str_eq(captured, rows[i].line);
	}
}
END_TEST

START_TEST(opt_describe_names_the_rtr_forms_with_p2p)
{
	struct iwt_opt o;
	char buf[128];

	iwt_opt_init(&o);
	o.cm.p2p = true;
	o.cm.rtr = MPA_RTR_WRITE | MPA_RTR_SEND;
	iwt_opt_describe(&o, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "p2p on (rtr write,send)"));
	o.cm.p2p = false;
	iwt_opt_describe(&o, buf, sizeof(buf));
	ck_assert_ptr_null(strstr(buf, "rtr"));
}
END_TEST

START_TEST(opt_context_attr_carries_engine_thread_and_rx_direct_only)
{
	struct iwv_context_attr def, attr;
	struct iwt_opt o;

	iwv_context_attr_default(&def);
	iwt_opt_init(&o);
	iwt_opt_context_attr(&o, &attr);
	/* nothing given: the library defaults, IWARP_ENGINE* still decide */
	ck_assert_int_eq(attr.engine, IWV_ENGINE_DEFAULT);
	ck_assert_int_eq(attr.engine_thread, def.engine_thread);
	ck_assert_int_eq(attr.rx_direct, def.rx_direct);
	ck_assert_uint_eq(attr.max_mr, def.max_mr);
	ck_assert_uint_eq(attr.rx_buf_size, def.rx_buf_size);
	ck_assert_int_eq(opt(&o, IWT_OPT_ENGINE, "uring"), 0);
	o.engine_thread = true;
	o.rx_direct = 1;
	iwt_opt_context_attr(&o, &attr);
	ck_assert_int_eq(attr.engine, IWV_ENGINE_URING);
	ck_assert_int_eq(attr.engine_thread, 1);
	ck_assert_int_eq(attr.rx_direct, 1);
	ck_assert_uint_eq(attr.max_mr, def.max_mr);
	ck_assert_uint_eq(attr.rx_buf_size, def.rx_buf_size);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The verbs objects of a tool (iwt_verbs.h)                              */
/* ---------------------------------------------------------------------- */

static bool nonblocking(int fd)
{
	return fcntl(fd, F_GETFL) & O_NONBLOCK;
}

START_TEST(verbs_open_makes_what_the_flags_ask_and_close_undoes_it)
{
	struct iwt_opt o;
	struct iwt_verbs v;

	iwt_opt_init(&o);
	ck_assert_int_eq(
		iwt_verbs_open(&v, &o, "iwtest", IWT_VERBS_F_COMP_CHANNEL | IWT_VERBS_F_NONBLOCK),
		IWT_VERBS_OK);
	ck_assert(v.ctx && v.pd && v.comp_ch && v.cm_ch && !v.listen_id);
	ck_assert(nonblocking(v.comp_ch->fd) && nonblocking(v.cm_ch->fd));
	/* the tool's listening id goes with the rest */
	ck_assert_int_eq(iwcm_create_id(v.cm_ch, &v.listen_id, NULL, IWCM_PS_TCP), 0);
	ck_assert_int_eq(iwt_verbs_close(&v), 0);
	ck_assert(!v.ctx && !v.pd && !v.comp_ch && !v.cm_ch && !v.listen_id);

	ck_assert_int_eq(iwt_verbs_open(&v, &o, "iwtest", 0), IWT_VERBS_OK);
	ck_assert(v.ctx && v.pd && !v.comp_ch && v.cm_ch);
	ck_assert(!nonblocking(v.cm_ch->fd));
	ck_assert_int_eq(iwt_verbs_close(&v), 0);
	/* closing nothing is nothing */
	ck_assert_int_eq(iwt_verbs_close(&v), 0);
}
END_TEST

static int run_num(const void *arg)
{
	uint64_t v;

	return iwt_num_u64("iwperf", "--size", arg, 1, 256u << 20, IWT_NUM_SUFFIX, &v);
}

static int run_seconds(const void *arg)
{
	double d;

	return iwt_num_seconds("iwperf", "--seconds", arg, 0.001, 86400, &d);
}

static int run_usage(const void *arg)
{
	return iwt_usage_err("iwping", "unexpected argument '%s'", (const char *)arg);
}

static int run_bad_arg(const void *arg)
{
	return iwt_bad_arg("iwmpa", "-p", arg, "why not");
}

START_TEST(messages_have_one_shape)
{
	ck_assert_int_eq(capture_stderr(run_num, "64K"), 0);
	ck_assert_str_eq(captured, "");
	ck_assert_int_eq(capture_stderr(run_num, "1G"), -1);
	ck_assert_str_eq(captured,
			 "iwperf: invalid value '1G' for --size: must be from 1 to 268435456\n");
	ck_assert_int_eq(capture_stderr(run_num, "4T"), -1);
	ck_assert_str_eq(captured,
			 "iwperf: invalid value '4T' for --size: unknown suffix (K, M or G)\n");
	ck_assert_int_eq(capture_stderr(run_seconds, "1e3"), -1);
	ck_assert_str_eq(captured,
			 "iwperf: invalid value '1e3' for --seconds: trailing characters\n");
	ck_assert_int_eq(capture_stderr(run_seconds, "0"), -1);
	ck_assert_str_eq(captured,
			 "iwperf: invalid value '0' for --seconds: must be from 0.001 to 86400 "
			 "seconds\n");
	ck_assert_int_eq(capture_stderr(run_bad_arg, "x"), -1);
	ck_assert_str_eq(captured, "iwmpa: invalid value 'x' for -p: why not\n");
	ck_assert_int_eq(capture_stderr(run_usage, "foo"), -1);
	ck_assert_str_eq(captured, "iwping: unexpected argument 'foo'\nTry 'iwping --help'.\n");
	ck_assert_int_eq(IWT_EXIT_USAGE, 2);
}
END_TEST

START_TEST(log_levels_have_names)
{
	static const char *const names[] = {"error", "warning", "info", "debug", "trace", "log"};

	for (int l = IW_LOG_ERR; l <= IW_LOG_TRACE + 1; l++)
		ck_assert_str_eq(iwt_log_level_name((enum iw_log_level)l), names[l]);
}
END_TEST

/* A listener on an ephemeral port, a client connected to it, and the two
 * failures: a name that does not resolve and a port nobody listens on. */
START_TEST(tcp_open_listens_connects_and_says_why_it_cannot)
{
	char ldesc[IWT_ADDR_STRLEN], cdesc[IWT_ADDR_STRLEN], port[8];
	const char *why = NULL, *colon;
	int lfd, cfd, afd;

	lfd = iwt_tcp_open("127.0.0.1", "0", true, 4, ldesc, sizeof(ldesc), &why);
	ck_assert_int_ge(lfd, 0);
	ck_assert(strncmp(ldesc, "127.0.0.1:", 10) == 0);
	colon = strrchr(ldesc, ':');
	ck_assert_int_gt(atoi(colon + 1), 0);
	snprintf(port, sizeof(port), "%s", colon + 1);
	cfd = iwt_tcp_open("127.0.0.1", port, false, 0, cdesc, sizeof(cdesc), &why);
	ck_assert_int_ge(cfd, 0);
	ck_assert_str_eq(cdesc, ldesc);
	afd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(afd, 0);
	close(afd);
	close(cfd);
	close(lfd);
	/* nobody listens there any more */
	ck_assert_int_eq(iwt_tcp_open("127.0.0.1", port, false, 0, cdesc, sizeof(cdesc), &why), -1);
	ck_assert_str_eq(why, strerror(ECONNREFUSED));
	why = NULL;
	ck_assert_int_eq(
		iwt_tcp_open("no such host.invalid", "1", false, 0, cdesc, sizeof(cdesc), &why),
		-1);
	ck_assert_ptr_nonnull(why);
}
END_TEST

static Suite *tools_suite(void)
{
	Suite *s = suite_create("tools");

	TH_ADD_TCASE(s, "num", num_rule_verdicts, num_why_names_each_refusal,
		     seconds_take_a_decimal_fraction_and_nothing_else,
		     onoff_knows_exactly_the_eight_words);
	TH_ADD_TCASE(s, "addr", split_reads_every_documented_form,
		     split_refuses_bad_brackets_and_bad_ports,
		     resolve_numeric_addresses_of_both_families, format_host_port_and_set_port);
	TH_ADD_TCASE(s, "rtr", rtr_parse_reads_lists_of_forms,
		     rtr_parse_refuses_unknown_empty_and_odd_spellings,
		     rtr_names_round_trip_every_mask, rtr_names_in_a_short_buffer_stay_terminated,
		     rtr_form_names_say_which_message);
	TH_ADD_TCASE(s, "pattern", rping_buffer_is_header_letters_and_a_nul,
		     rping_letters_run_from_A_to_z_through_the_signs_and_wrap,
		     rping_start_letter_comes_back_after_58_pings,
		     rping_largest_buffer_and_largest_ping_number,
		     rping_header_is_cut_when_the_buffer_is_tiny,
		     abc_pattern_is_lower_case_shifted_per_message);
	TH_ADD_TCASE(s, "clock", clock_is_monotonic_in_its_three_units,
		     ms_until_rounds_up_and_knows_no_deadline);
	TH_ADD_TCASE(s, "opt", opt_defaults_are_the_library_defaults, opt_values_are_stored,
		     opt_refusals_say_what_and_why_in_one_line,
		     opt_describe_names_the_rtr_forms_with_p2p,
		     opt_context_attr_carries_engine_thread_and_rx_direct_only);
	TH_ADD_TCASE(s, "err", messages_have_one_shape, log_levels_have_names);
	TH_ADD_TCASE(s, "sock", tcp_open_listens_connects_and_says_why_it_cannot);
	TH_ADD_TCASE(s, "verbs", verbs_open_makes_what_the_flags_ask_and_close_undoes_it);
	return s;
}

TH_MAIN(tools_suite)
