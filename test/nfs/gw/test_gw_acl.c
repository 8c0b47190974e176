/* SPDX-License-Identifier: MIT */
/*
 * test_gw_acl.c - iwnfsgw's client address list (--allow,
 * tools/iwnfsgw/gw_acl.c): IPv4 and IPv6 prefixes, bare addresses, /0,
 * IPv4-mapped IPv6 addresses against IPv4 prefixes, lists, "any", the
 * default (loopback only), and every bad input refused with its own message
 * and the list left as it was.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "gw_acl.h"
#include "th.h"

static struct sockaddr_storage ss;

/* An AF_INET or AF_INET6 sockaddr for the numeric address text. */
static const struct sockaddr *sa(const char *text)
{
	memset(&ss, 0, sizeof(ss));
	if (strchr(text, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(40000);
		ck_assert_int_eq(inet_pton(AF_INET6, text, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(40000);
		ck_assert_int_eq(inet_pton(AF_INET, text, &s4->sin_addr), 1);
	}
	return (const struct sockaddr *)&ss;
}

/* A list from text that must parse. */
static void acl_of(struct gw_acl *acl, const char *text)
{
	char err[GW_ACL_ERRLEN] = "";

	gw_acl_init(acl);
	ck_assert_msg(gw_acl_parse(acl, text, err, sizeof(err)) == 0, "'%s' refused: %s", text,
		      err);
}

static bool allows(const char *list, const char *addr)
{
	struct gw_acl acl;

	acl_of(&acl, list);
	return gw_acl_match(&acl, sa(addr));
}

/* text must be refused with exactly `want`, leaving the list unchanged. */
static void refused(const char *text, const char *want)
{
	struct gw_acl acl, before;
	char err[GW_ACL_ERRLEN] = "";

	acl_of(&acl, "10.0.0.0/8");
	before = acl;
	ck_assert_int_eq(gw_acl_parse(&acl, text, err, sizeof(err)), -1);
	ck_assert_str_eq(err, want);
	ck_assert(acl.any == before.any);
	ck_assert_uint_eq(acl.n, before.n);
	ck_assert_mem_eq(acl.net, before.net, sizeof(acl.net));
}

START_TEST(acl_ipv4_prefix_matches_its_addresses_only)
{
	ck_assert(allows("192.0.2.0/24", "192.0.2.0"));
	ck_assert(allows("192.0.2.0/24", "192.0.2.255"));
	ck_assert(!allows("192.0.2.0/24", "192.0.3.0"));
	ck_assert(!allows("192.0.2.0/24", "127.0.0.1"));
	ck_assert(allows("10.0.0.0/8", "10.255.1.2"));
	ck_assert(!allows("10.0.0.0/8", "11.0.0.0"));
	/* a length that is not a multiple of 8 */
	ck_assert(allows("172.16.0.0/12", "172.31.255.255"));
	ck_assert(!allows("172.16.0.0/12", "172.32.0.0"));
	ck_assert(!allows("172.16.0.0/12", "172.15.255.255"));
	ck_assert(allows("203.0.113.128/25", "203.0.113.200"));
	ck_assert(!allows("203.0.113.128/25", "203.0.113.127"));
	/* an IPv4 prefix says nothing about IPv6 addresses */
	ck_assert(!allows("0.0.0.0/0", "2001:db8::1"));
	ck_assert(!allows("127.0.0.0/8", "::1"));
}
END_TEST

START_TEST(acl_bare_address_is_slash_32_or_slash_128)
{
	ck_assert(allows("127.0.0.1", "127.0.0.1"));
	ck_assert(!allows("127.0.0.1", "127.0.0.2"));
	ck_assert(allows("127.0.0.1/32", "127.0.0.1"));
	ck_assert(!allows("127.0.0.1/32", "127.0.0.2"));
	ck_assert(allows("2001:db8::7", "2001:db8::7"));
	ck_assert(!allows("2001:db8::7", "2001:db8::8"));
	ck_assert(allows("2001:db8::7/128", "2001:db8::7"));
	ck_assert(!allows("2001:db8::7/128", "2001:db8::6"));
	ck_assert(allows("::1", "::1"));
	ck_assert(!allows("::1", "::"));
}
END_TEST

START_TEST(acl_ipv6_prefix_matches_its_addresses_only)
{
	ck_assert(allows("2001:db8::/32", "2001:db8:ffff::1"));
	ck_assert(!allows("2001:db8::/32", "2001:db9::1"));
	ck_assert(allows("fe80::/10", "febf::1"));
	ck_assert(!allows("fe80::/10", "fec0::1"));
	ck_assert(allows("2001:db8:0:1::/64", "2001:db8:0:1:ffff:ffff:ffff:ffff"));
	ck_assert(!allows("2001:db8:0:1::/64", "2001:db8:0:2::"));
	ck_assert(!allows("2001:db8::/32", "192.0.2.1"));
}
END_TEST

START_TEST(acl_slash_0_is_all_of_ipv4_or_all_of_ipv6_and_thus_ipv4_too)
{
	ck_assert(allows("0.0.0.0/0", "0.0.0.0"));
	ck_assert(allows("0.0.0.0/0", "255.255.255.255"));
	ck_assert(allows("0.0.0.0/0", "::ffff:198.51.100.1"));
	ck_assert(!allows("0.0.0.0/0", "2001:db8::1"));
	ck_assert(allows("::/0", "2001:db8::1"));
	ck_assert(allows("::/0", "::"));
	/* every address is compared as IPv6: IPv4 ones are ::ffff:a.b.c.d */
	ck_assert(allows("::/0", "198.51.100.1"));
}
END_TEST

START_TEST(acl_ipv4_mapped_ipv6_matches_the_ipv4_prefixes)
{
	/* a client of a dual-stack socket that came over IPv4 */
	ck_assert(allows("127.0.0.0/8", "::ffff:127.0.0.1"));
	ck_assert(allows("127.0.0.1", "::ffff:127.0.0.1"));
	ck_assert(!allows("127.0.0.1", "::ffff:127.0.0.2"));
	ck_assert(allows("192.0.2.0/24", "::ffff:192.0.2.9"));
	ck_assert(!allows("192.0.2.0/24", "::ffff:127.0.0.1"));
	/* not mapped: ::127.0.0.1 (the old IPv4-compatible form) and 64:ff9b:: */
	ck_assert(!allows("127.0.0.0/8", "::127.0.0.1"));
	ck_assert(!allows("127.0.0.0/8", "64:ff9b::7f00:1"));
	/* the mapped form in the list is the same entry as the IPv4 one */
	ck_assert(allows("::ffff:10.0.0.0/104", "10.1.2.3"));
	ck_assert(!allows("::ffff:10.0.0.0/104", "11.1.2.3"));
	ck_assert(allows("::ffff:0:0/96", "203.0.113.5"));
	ck_assert(!allows("::ffff:0:0/96", "2001:db8::1"));
}
END_TEST

START_TEST(acl_lists_and_repeated_options_add_up)
{
	struct gw_acl acl;
	char err[GW_ACL_ERRLEN], buf[128];

	acl_of(&acl, "192.0.2.0/24,2001:db8::/32,198.51.100.7");
	ck_assert_uint_eq(acl.n, 3);
	ck_assert(gw_acl_match(&acl, sa("192.0.2.33")));
	ck_assert(gw_acl_match(&acl, sa("2001:db8::33")));
	ck_assert(gw_acl_match(&acl, sa("198.51.100.7")));
	ck_assert(!gw_acl_match(&acl, sa("198.51.100.8")));
	ck_assert(!gw_acl_match(&acl, sa("127.0.0.1")));
	/* a second --allow adds to the first */
	ck_assert_int_eq(gw_acl_parse(&acl, "127.0.0.1", err, sizeof(err)), 0);
	ck_assert_uint_eq(acl.n, 4);
	ck_assert(gw_acl_match(&acl, sa("127.0.0.1")));
	ck_assert(gw_acl_match(&acl, sa("192.0.2.33")));
	ck_assert_str_eq(gw_acl_format(&acl, buf, sizeof(buf)),
			 "192.0.2.0/24,2001:db8::/32,198.51.100.7/32,127.0.0.1/32");
	/* cut to fit, never overrun */
	ck_assert_str_eq(gw_acl_format(&acl, buf, 20), "192.0.2.0/24...");
	ck_assert_str_eq(gw_acl_format(&acl, buf, 4), "...");
	ck_assert_str_eq(gw_acl_format(&acl, buf, 3), "");
	/* the mapped form is shown as IPv4 */
	acl_of(&acl, "::ffff:10.0.0.0/104");
	ck_assert_str_eq(gw_acl_format(&acl, buf, sizeof(buf)), "10.0.0.0/8");
}
END_TEST

START_TEST(acl_any_only_when_given_and_the_default_is_loopback)
{
	struct gw_acl acl;
	char buf[64];

	gw_acl_init(&acl);
	ck_assert(!gw_acl_match(&acl, sa("127.0.0.1")));
	ck_assert_str_eq(gw_acl_format(&acl, buf, sizeof(buf)), "none");
	gw_acl_default(&acl);
	ck_assert(gw_acl_match(&acl, sa("127.0.0.1")));
	ck_assert(gw_acl_match(&acl, sa("127.255.255.254")));
	ck_assert(gw_acl_match(&acl, sa("::1")));
	ck_assert(gw_acl_match(&acl, sa("::ffff:127.0.0.1")));
	ck_assert(!gw_acl_match(&acl, sa("192.0.2.1")));
	ck_assert(!gw_acl_match(&acl, sa("::2")));
	ck_assert(!gw_acl_match(&acl, sa("0.0.0.0")));
	ck_assert_str_eq(gw_acl_format(&acl, buf, sizeof(buf)), "127.0.0.0/8,::1/128");
	acl_of(&acl, "any");
	ck_assert(gw_acl_match(&acl, sa("192.0.2.1")));
	ck_assert(gw_acl_match(&acl, sa("2001:db8::1")));
	ck_assert_str_eq(gw_acl_format(&acl, buf, sizeof(buf)), "any");
	acl_of(&acl, "127.0.0.1,ANY");
	ck_assert(gw_acl_match(&acl, sa("192.0.2.1")));
}
END_TEST

START_TEST(acl_other_families_and_null_never_match_unless_any)
{
	struct gw_acl acl;
	struct sockaddr_un un = {.sun_family = AF_UNIX};

	acl_of(&acl, "0.0.0.0/0,::/0");
	ck_assert(!gw_acl_match(&acl, (const struct sockaddr *)&un));
	ck_assert(!gw_acl_match(&acl, NULL));
	acl_of(&acl, "any");
	ck_assert(gw_acl_match(&acl, (const struct sockaddr *)&un));
}
END_TEST

START_TEST(acl_bad_inputs_are_refused_with_a_clear_message)
{
	static const char na[] = "not an IPv4 or IPv6 address (numeric only: ADDR[/LEN], or any)";

	refused("", "empty entry (CIDR: ADDR[/LEN], or any)");
	refused("127.0.0.1,", "empty entry (CIDR: ADDR[/LEN], or any)");
	refused(",127.0.0.1", "empty entry (CIDR: ADDR[/LEN], or any)");
	refused("127.0.0.1,,::1", "empty entry (CIDR: ADDR[/LEN], or any)");
	refused("localhost", na);
	refused("anyone", na);
	refused("10.0.0", na);
	refused("10.0.0.256", na);
	refused("010.0.0.1", na);
	refused(" 10.0.0.1", na);
	refused("[::1]", na);
	refused("fe80::1%eth0", na);
	refused("2001:db8:::1/48", na);
	refused("/8", na);
	refused("10.0.0.0/", "prefix length missing after '/'");
	refused("10.0.0.0/33", "prefix length over 32 for IPv4");
	refused("10.0.0.0/4294967304", "prefix length over 32 for IPv4");
	refused("::/129", "prefix length over 128 for IPv6");
	refused("10.0.0.0/-8", "prefix length is not a decimal number");
	refused("10.0.0.0/+8", "prefix length is not a decimal number");
	refused("10.0.0.0/8/8", "prefix length is not a decimal number");
	refused("10.0.0.0/0x8", "prefix length is not a decimal number");
	refused("10.0.0.0/ 8", "prefix length is not a decimal number");
	refused("10.1.2.3/8",
		"address bits set after the prefix length (the network is 10.0.0.0/8)");
	refused("127.0.0.1/0",
		"address bits set after the prefix length (the network is 0.0.0.0/0)");
	refused("2001:db8::1/64",
		"address bits set after the prefix length (the network is 2001:db8::/64)");
	refused("::ffff:10.0.0.0/8",
		"address bits set after the prefix length (the network is ::/8)");
	/* in a list the message names the entry; one bad entry refuses the
	 * whole value: nothing of it is added */
	refused("192.0.2.0/24,bad",
		"'bad': not an IPv4 or IPv6 address (numeric only: ADDR[/LEN], or any)");
	refused("any,10.0.0.0/40", "'10.0.0.0/40': prefix length over 32 for IPv4");
	refused("::1,10.1.2.3/8",
		"'10.1.2.3/8': address bits set after the prefix length (the network is "
		"10.0.0.0/8)");
	refused("0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
		"'0123456789abcdef...': not an IPv4 or IPv6 address");
}
END_TEST

START_TEST(acl_holds_gw_acl_max_entries_and_refuses_one_more)
{
	struct gw_acl acl;
	char err[GW_ACL_ERRLEN], e[32];
	unsigned i;

	gw_acl_init(&acl);
	for (i = 0; i < GW_ACL_MAX; i++) {
		snprintf(e, sizeof(e), "10.%u.%u.0/24", i / 256, i % 256);
		ck_assert_int_eq(gw_acl_parse(&acl, e, err, sizeof(err)), 0);
	}
	ck_assert_int_eq(gw_acl_parse(&acl, "192.0.2.1", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "more than 256 entries");
	ck_assert_uint_eq(acl.n, GW_ACL_MAX);
	ck_assert(gw_acl_match(&acl, sa("10.0.255.9")));
	/* "any" needs no room */
	ck_assert_int_eq(gw_acl_parse(&acl, "any", err, sizeof(err)), 0);
	ck_assert(gw_acl_match(&acl, sa("192.0.2.1")));
}
END_TEST

static Suite *gw_acl_suite(void)
{
	Suite *s = suite_create("gw_acl");
	TCase *tc = tcase_create("match");

	tcase_add_test(tc, acl_ipv4_prefix_matches_its_addresses_only);
	tcase_add_test(tc, acl_bare_address_is_slash_32_or_slash_128);
	tcase_add_test(tc, acl_ipv6_prefix_matches_its_addresses_only);
	tcase_add_test(tc, acl_slash_0_is_all_of_ipv4_or_all_of_ipv6_and_thus_ipv4_too);
	tcase_add_test(tc, acl_ipv4_mapped_ipv6_matches_the_ipv4_prefixes);
	tcase_add_test(tc, acl_lists_and_repeated_options_add_up);
	tcase_add_test(tc, acl_any_only_when_given_and_the_default_is_loopback);
	tcase_add_test(tc, acl_other_families_and_null_never_match_unless_any);
	suite_add_tcase(s, tc);
	tc = tcase_create("parse");
	tcase_add_test(tc, acl_bad_inputs_are_refused_with_a_clear_message);
	tcase_add_test(tc, acl_holds_gw_acl_max_entries_and_refuses_one_more);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(gw_acl_suite)
