/* SPDX-License-Identifier: MIT */
/*
 * test_icf_grade.c - iwconform's sans-I/O parts (tools/iwconform): the
 * grading rule (icf_grade.c) and the pcap synthesis (icf_pcap.c).
 *
 * Grading: each expectation kind against the reactions a peer may show -
 * the exact Terminate with the right copies and a close (strict), a wrong
 * code, Linux siw's layout, a wrong copy, a close without Terminate, a
 * reject (lenient), silence or carrying on (fail), a skip.
 * The server role's expectations: a client that goes on or closes where
 * either is right, a Terminate that may be replaced by going on, a client
 * that went on part of the way and then closed.
 * pcap: the synthesised file is read back with iwdump's own packet parser
 * and TCP reassembly, which must return both byte streams unchanged, with
 * SYNs, FINs and no gaps, for IPv4 and IPv6; two connections merged into one
 * file (perftest's control and data connections) read back as two, their
 * packets in time order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "iw_bytes.h"
#include "icf.h"
#include "th.h"

/* ---------------------------------------------------------------------- */
/* Grading                                                                  */
/* ---------------------------------------------------------------------- */

static const struct icf_expect exp_bounds = {
	.kind = ICF_EXP_TERM,
	.codes = {{.layer = 1, .etype = 1, .ecode = 1}},
	.ncodes = 1,
	.copy = ICF_COPY_DDP,
};

/* An observation of a tagged Write answered by `code` with its header copied. */
static void obs_term(struct icf_obs *o, uint8_t layer, uint8_t etype, uint8_t ecode)
{
	static const uint8_t hdr[DDP_TAGGED_HDR_LEN] = {0xC1, 0x40, 1, 2, 3, 4, 0,
							0,    0,    0, 0, 1, 0, 0};
	uint8_t wire[RDMAP_TERM_MAX_LEN];
	struct rdmap_term t;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	o->connected = true;
	memcpy(o->sent_ddp, hdr, sizeof(hdr));
	o->sent_ddp_len = sizeof(hdr);
	o->sent_seg_len = 30;
	memset(&t, 0, sizeof(t));
	t.code.layer = layer;
	t.code.etype = etype;
	t.code.ecode = ecode;
	t.m = t.d = true;
	t.ddp_seg_len = 30;
	memcpy(t.ddp_hdr, hdr, sizeof(hdr));
	t.ddp_hdr_len = sizeof(hdr);
	n = rdmap_term_encode(&t, wire, sizeof(wire));
	ck_assert_int_gt(n, 0);
	iwd_term_read(wire, (size_t)n, &o->tm);
	o->term = true;
	o->closed = true;
}

START_TEST(exact_terminate_and_close_is_strict)
{
	struct icf_obs o;
	char dev[160];

	obs_term(&o, 1, 1, 1);
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	ck_assert_str_eq(dev, "");
}
END_TEST

START_TEST(wrong_code_is_lenient_and_named)
{
	struct icf_obs o;
	char dev[160];

	obs_term(&o, 1, 1, 0);
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_ptr_nonnull(strstr(dev, "Terminate 1/1/0x00 where"));
	ck_assert_ptr_nonnull(strstr(dev, "1/1/0x01"));
}
END_TEST

START_TEST(siw_layout_is_a_named_deviation)
{
	/* Linux siw: octet 0 = EType << 4 | Layer, M/D/R in 0x01/0x02/0x04 of
	 * octet 2: DDP untagged invalid QN reads 2/1/0x01 the RFC way, which
	 * names no defined code */
	static const uint8_t wire[4] = {0x21, 0x01, 0x00, 0x00};
	struct icf_expect e = {
		.kind = ICF_EXP_TERM, .codes = {{.layer = 1, .etype = 2, .ecode = 1}}, .ncodes = 1};
	struct icf_obs o = {.connected = true, .term = true, .closed = true};
	char dev[160];

	iwd_term_read(wire, sizeof(wire), &o.tm);
	ck_assert(o.tm.use_siw);
	ck_assert_int_eq(icf_grade(&e, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_ptr_nonnull(strstr(dev, "siw"));
}
END_TEST

START_TEST(a_wrong_header_copy_is_lenient)
{
	struct icf_obs o;
	char dev[160];

	obs_term(&o, 1, 1, 1);
	o.sent_ddp[5] ^= 1;
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_ptr_nonnull(strstr(dev, "copied DDP header"));
	obs_term(&o, 1, 1, 1);
	o.sent_seg_len = 31;
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_ptr_nonnull(strstr(dev, "Segment Length"));
}
END_TEST

START_TEST(terminate_without_close_or_with_more_is_lenient)
{
	struct icf_obs o;
	char dev[160];

	obs_term(&o, 1, 1, 1);
	o.closed = false;
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	obs_term(&o, 1, 1, 1);
	o.after_term = true;
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
}
END_TEST

START_TEST(close_without_terminate_is_lenient_unless_allowed)
{
	struct icf_expect e = exp_bounds;
	struct icf_obs o = {.connected = true, .closed = true};
	char dev[160];

	ck_assert_int_eq(icf_grade(&e, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_ptr_nonnull(strstr(dev, "closed without Terminate"));
	e.close_ok = true;
	ck_assert_int_eq(icf_grade(&e, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
}
END_TEST

START_TEST(silence_and_carrying_on_fail)
{
	struct icf_obs o = {.connected = true};
	char dev[160];

	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_FAIL);
	o.carried_on = true;
	snprintf(o.carried_what, sizeof(o.carried_what), "Send after it");
	o.closed = true;
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_FAIL);
	ck_assert_ptr_nonnull(strstr(dev, "carried on"));
}
END_TEST

START_TEST(startup_expectations)
{
	struct icf_expect close = {.kind = ICF_EXP_CLOSE}, rej = {.kind = ICF_EXP_REJECT},
			  acc = {.kind = ICF_EXP_ACCEPT},
			  either = {.kind = ICF_EXP_ACCEPT_OR_REJECT};
	struct icf_obs o = {.connected = true, .closed = true};
	char dev[160];

	ck_assert_int_eq(icf_grade(&close, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	ck_assert_int_eq(icf_grade(&rej, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_int_eq(icf_grade(&acc, &o, dev, sizeof(dev)), ICF_FAIL);
	o.reply = o.reject = true;
	ck_assert_int_eq(icf_grade(&close, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_int_eq(icf_grade(&rej, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	ck_assert_int_eq(icf_grade(&either, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	o.reject = false;
	ck_assert_int_eq(icf_grade(&close, &o, dev, sizeof(dev)), ICF_FAIL);
	ck_assert_int_eq(icf_grade(&rej, &o, dev, sizeof(dev)), ICF_FAIL);
	o.closed = false;
	o.accepted = true;
	ck_assert_int_eq(icf_grade(&acc, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	ck_assert_int_eq(icf_grade(&either, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
}
END_TEST

START_TEST(server_role_expectations)
{
	struct icf_expect either = {.kind = ICF_EXP_ACCEPT_OR_CLOSE},
			  ird = {.kind = ICF_EXP_TERM,
				 .codes = {{.layer = 2, .etype = 0, .ecode = 6}},
				 .ncodes = 1,
				 .accept_ok = true};
	struct icf_obs o = {.connected = true, .closed = true};
	char dev[160], buf[96];

	/* closed without a word after our Reply */
	ck_assert_int_eq(icf_grade(&either, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	ck_assert_int_eq(icf_grade(&ird, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	ck_assert_ptr_nonnull(strstr(dev, "closed without Terminate"));
	/* went on part of the way, then closed */
	o.spoke = true;
	snprintf(o.why, sizeof(o.why), "no Send from the peer (closed)");
	ck_assert_int_eq(icf_grade(&either, &o, dev, sizeof(dev)), ICF_FAIL);
	ck_assert_ptr_nonnull(strstr(dev, "middle of the exchange"));
	/* went on to the end */
	o.accepted = true;
	o.closed = false;
	ck_assert_int_eq(icf_grade(&either, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	ck_assert_int_eq(icf_grade(&ird, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	/* the Terminate of RFC 6581 §8, then the close */
	memset(&o, 0, sizeof(o));
	o.connected = o.closed = o.term = o.tm.std_ok = true;
	o.tm.std.code = (struct iw_term_code){.layer = 2, .etype = 0, .ecode = 6};
	ck_assert_int_eq(icf_grade(&ird, &o, dev, sizeof(dev)), ICF_PASS_STRICT);
	ck_assert_int_eq(icf_grade(&either, &o, dev, sizeof(dev)), ICF_PASS_LENIENT);
	icf_expect_str(&ird, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Term 2/0/0x06 or go on");
	icf_expect_str(&either, buf, sizeof(buf));
	ck_assert_str_eq(buf, "go on or close");
}
END_TEST

START_TEST(skipped_and_unconnected)
{
	struct icf_obs o = {.connected = true, .skipped = true};
	char dev[160];

	snprintf(o.why, sizeof(o.why), "CRC not negotiated");
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_SKIPPED);
	ck_assert_str_eq(dev, "CRC not negotiated");
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(icf_grade(&exp_bounds, &o, dev, sizeof(dev)), ICF_FAIL);
}
END_TEST

START_TEST(expectation_and_observation_words)
{
	struct icf_expect e = {.kind = ICF_EXP_TERM,
			       .codes = {{.layer = 0, .etype = 1, .ecode = 0},
					 {.layer = 0, .etype = 2, .ecode = 9}},
			       .ncodes = 2,
			       .copy = ICF_COPY_RREQ};
	struct icf_obs o;
	char buf[96];

	icf_expect_str(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Term 0/1/0x00|0/2/0x09 +DR");
	obs_term(&o, 1, 2, 5);
	icf_obs_str(&o, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Term 1/2/0x05 MD");
}
END_TEST

/* ---------------------------------------------------------------------- */
/* pcap synthesis                                                           */
/* ---------------------------------------------------------------------- */

struct rec {
	uint8_t data[2][4096];
	size_t len[2];
	unsigned closes, conns, gaps;
	bool syn;
};

static void *r_open(void *user, const struct iwd_flow *flow, uint64_t ts)
{
	struct rec *r = user;

	(void)ts;
	r->conns++;
	r->syn = flow->syn_seen;
	return r;
}

static void r_data(void *conn, int dir, uint64_t off, const uint8_t *p, size_t n, uint64_t ts,
		   uint64_t frame)
{
	struct rec *r = conn;

	(void)ts;
	(void)frame;
	ck_assert_uint_eq(off, r->len[dir]);
	ck_assert_uint_le(r->len[dir] + n, sizeof(r->data[dir]));
	memcpy(r->data[dir] + r->len[dir], p, n);
	r->len[dir] += n;
}

static void r_gap(void *conn, int dir, uint64_t off, uint64_t n, uint64_t ts, uint64_t frame)
{
	struct rec *r = conn;

	(void)dir, (void)off, (void)n, (void)ts, (void)frame;
	r->gaps++;
}

static void r_close(void *conn, int dir, enum iwd_close_how how, uint64_t ts)
{
	struct rec *r = conn;

	(void)dir, (void)ts;
	if (how == IWD_CLOSE_FIN)
		r->closes++;
}

static void read_back(const struct icf_pcap *p, struct rec *r)
{
	static const struct iwd_tcp_ops ops = {r_open, r_data, r_gap, r_close};
	struct iwd_tcp *t = iwd_tcp_create(&ops, r, 0);
	size_t off = 24;
	uint64_t frame = 0;

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_ge(p->len, 24);
	ck_assert_uint_eq(p->buf[0], 0xd4); /* a1b2c3d4 little-endian */
	ck_assert_uint_eq(p->buf[20], ICF_PCAP_LINKTYPE_RAW);
	while (off + 16 <= p->len) {
		uint32_t cap = (uint32_t)p->buf[off + 8] | (uint32_t)p->buf[off + 9] << 8 |
			       (uint32_t)p->buf[off + 10] << 16 | (uint32_t)p->buf[off + 11] << 24;
		struct iwd_seg seg;

		ck_assert_uint_le(off + 16 + cap, p->len);
		ck_assert_int_eq(iwd_net_parse(ICF_PCAP_LINKTYPE_RAW, p->buf + off + 16, cap, cap,
					       ++frame, 0, &seg),
				 1);
		iwd_tcp_segment(t, &seg);
		off += 16 + cap;
	}
	ck_assert_uint_eq(off, p->len);
	iwd_tcp_finish(t, 0);
	iwd_tcp_destroy(t);
}

static void pcap_roundtrip(int af)
{
	struct sockaddr_storage a, b;
	struct icf_pcap p;
	struct rec r;
	uint8_t out[3000], in[700];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (af == AF_INET) {
		struct sockaddr_in *x = (struct sockaddr_in *)&a, *y = (struct sockaddr_in *)&b;

		x->sin_family = y->sin_family = AF_INET;
		inet_pton(AF_INET, "127.0.0.1", &x->sin_addr);
		inet_pton(AF_INET, "127.0.0.1", &y->sin_addr);
		x->sin_port = htons(40000);
		y->sin_port = htons(7174);
	} else {
		struct sockaddr_in6 *x = (struct sockaddr_in6 *)&a, *y = (struct sockaddr_in6 *)&b;

		x->sin6_family = y->sin6_family = AF_INET6;
		x->sin6_addr = in6addr_loopback;
		y->sin6_addr = in6addr_loopback;
		x->sin6_port = htons(40000);
		y->sin6_port = htons(7174);
	}
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 13 + 1);
	icf_pcap_init(&p, (struct sockaddr *)&a, (struct sockaddr *)&b, 1000);
	icf_pcap_data(&p, 0, out, 1000, 2000);
	icf_pcap_data(&p, 1, in, 300, 3000);
	icf_pcap_data(&p, 0, out + 1000, 2000, 4000);
	icf_pcap_data(&p, 1, in + 300, 400, 5000);
	icf_pcap_fin(&p, 1, false, 6000);
	icf_pcap_fin(&p, 0, false, 7000);
	ck_assert(!p.oom);
	memset(&r, 0, sizeof(r));
	read_back(&p, &r);
	ck_assert_uint_eq(r.conns, 1);
	ck_assert(r.syn);
	ck_assert_uint_eq(r.gaps, 0);
	ck_assert_uint_eq(r.closes, 2);
	ck_assert_uint_eq(r.len[0], sizeof(out));
	ck_assert_uint_eq(r.len[1], sizeof(in));
	ck_assert_mem_eq(r.data[0], out, sizeof(out));
	ck_assert_mem_eq(r.data[1], in, sizeof(in));
	icf_pcap_free(&p);
}

START_TEST(pcap_ipv4_reads_back_both_streams)
{
	pcap_roundtrip(AF_INET);
}
END_TEST

START_TEST(pcap_ipv6_reads_back_both_streams)
{
	pcap_roundtrip(AF_INET6);
}
END_TEST

/* Two connections (ports 40000 and 40001 to 7174), merged. */
struct recs {
	struct rec r[2];
	unsigned n;
};

static void *rs_open(void *user, const struct iwd_flow *flow, uint64_t ts)
{
	struct recs *rs = user;

	ck_assert_uint_lt(rs->n, 2);
	ck_assert_uint_eq(flow->port[0], 40000 + rs->n);
	return r_open(&rs->r[rs->n++], flow, ts);
}

START_TEST(pcap_merge_reads_back_two_connections_in_time_order)
{
	static const struct iwd_tcp_ops ops = {rs_open, r_data, r_gap, r_close};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(40000)};
	struct sockaddr_in a2 = {.sin_family = AF_INET, .sin_port = htons(40001)};
	struct sockaddr_in b = {.sin_family = AF_INET, .sin_port = htons(7174)};
	struct icf_pcap p, q;
	struct recs rs;
	struct iwd_tcp *t;
	uint8_t d[2][100];
	uint64_t last = 0;
	size_t off = ICF_PCAP_HDR_LEN;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	a2.sin_addr = b.sin_addr = a.sin_addr;
	memset(d[0], 0x11, sizeof(d[0]));
	memset(d[1], 0x22, sizeof(d[1]));
	/* the control connection first, the data connection in the middle */
	icf_pcap_init(&q, (struct sockaddr *)&a, (struct sockaddr *)&b, 1000);
	icf_pcap_data(&q, 0, d[0], 50, 2000);
	icf_pcap_init(&p, (struct sockaddr *)&a2, (struct sockaddr *)&b, 3000);
	icf_pcap_data(&p, 1, d[1], 100, 4000);
	icf_pcap_data(&q, 0, d[0] + 50, 50, 5000);
	icf_pcap_fin(&p, 0, false, 6000);
	icf_pcap_fin(&q, 0, false, 7000);
	icf_pcap_merge(&p, &q);
	icf_pcap_free(&q);
	ck_assert(!p.oom);
	/* time order */
	while (off + ICF_PCAP_REC_LEN <= p.len) {
		const uint8_t *h = p.buf + off;
		uint64_t us = (uint64_t)(h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24) *
				      1000000u +
			      (uint32_t)(h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24);

		ck_assert_uint_ge(us, last);
		last = us;
		off += ICF_PCAP_REC_LEN + (h[8] | h[9] << 8);
	}
	ck_assert_uint_eq(off, p.len);
	/* both connections, whole */
	memset(&rs, 0, sizeof(rs));
	t = iwd_tcp_create(&ops, &rs, 0);
	off = ICF_PCAP_HDR_LEN;
	while (off + ICF_PCAP_REC_LEN <= p.len) {
		uint32_t cap = p.buf[off + 8] | p.buf[off + 9] << 8;
		struct iwd_seg seg;

		ck_assert_int_eq(iwd_net_parse(ICF_PCAP_LINKTYPE_RAW, p.buf + off + 16, cap, cap, 1,
					       0, &seg),
				 1);
		iwd_tcp_segment(t, &seg);
		off += ICF_PCAP_REC_LEN + cap;
	}
	iwd_tcp_finish(t, 0);
	iwd_tcp_destroy(t);
	ck_assert_uint_eq(rs.n, 2);
	ck_assert_uint_eq(rs.r[0].len[0], 100);
	ck_assert_mem_eq(rs.r[0].data[0], d[0], 100);
	ck_assert_uint_eq(rs.r[1].len[1], 100);
	ck_assert_mem_eq(rs.r[1].data[1], d[1], 100);
	icf_pcap_free(&p);
}
END_TEST

START_TEST(pcap_ipv4_checksums_are_right)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(1)};
	struct sockaddr_in b = {.sin_family = AF_INET, .sin_port = htons(2)};
	struct icf_pcap p;
	static const uint8_t d[5] = {1, 2, 3, 4, 5};
	const uint8_t *ip;
	uint32_t s = 0;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	inet_pton(AF_INET, "127.0.0.2", &b.sin_addr);
	icf_pcap_init(&p, (struct sockaddr *)&a, (struct sockaddr *)&b, 0);
	icf_pcap_data(&p, 0, d, sizeof(d), 0);
	/* the 4th packet: the data; the IPv4 header sums to 0xFFFF */
	ip = p.buf + 24 + 3 * (16 + 40) + 16;
	for (int i = 0; i < 20; i += 2)
		s += iw_get_be16(ip + i);
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	ck_assert_uint_eq(s, 0xFFFF);
	/* TCP over the pseudo-header */
	s = iw_get_be16(ip + 12) + iw_get_be16(ip + 14) + iw_get_be16(ip + 16) +
	    iw_get_be16(ip + 18) + IPPROTO_TCP + 20 + sizeof(d);
	for (size_t i = 0; i < 20 + sizeof(d); i += 2)
		s += (uint32_t)ip[20 + i] << 8 | (i + 1 < 20 + sizeof(d) ? ip[21 + i] : 0);
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	ck_assert_uint_eq(s, 0xFFFF);
	icf_pcap_free(&p);
}
END_TEST

static Suite *icf_suite(void)
{
	Suite *s = suite_create("icf");

	TH_ADD_TCASE(s, "grade", exact_terminate_and_close_is_strict,
		     wrong_code_is_lenient_and_named, siw_layout_is_a_named_deviation,
		     a_wrong_header_copy_is_lenient,
		     terminate_without_close_or_with_more_is_lenient,
		     close_without_terminate_is_lenient_unless_allowed,
		     silence_and_carrying_on_fail, startup_expectations, server_role_expectations,
		     skipped_and_unconnected, expectation_and_observation_words);
	TH_ADD_TCASE(s, "pcap", pcap_ipv4_reads_back_both_streams,
		     pcap_ipv6_reads_back_both_streams, pcap_ipv4_checksums_are_right,
		     pcap_merge_reads_back_two_connections_in_time_order);
	return s;
}

TH_MAIN(icf_suite)
