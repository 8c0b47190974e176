/* SPDX-License-Identifier: MIT */
/*
 * test_iwd_tcp.c - iwdump's first sans-I/O stages (tools/iwdump): the packet
 * parser (iwd_net.c) and the TCP reassembly (iwd_tcp.c).
 *
 * Packets: a TCP segment in every link type, VLAN tags, IPv4 options, TCP
 * options, Ethernet padding, IPv6 extension headers, fragments, every header
 * cut short by the snaplen, bad lengths - each parse on an exact-size heap
 * copy, so a read past the capture is an ASan error.
 * Reassembly: in order, reordered, duplicated, overlapping (the first copy
 * wins), sequence numbers around 2^32 and stream offsets past it, the
 * out-of-order bound, snaplen cuts, FIN, RST, no SYN, a reused tuple, the end
 * of the capture, open() returning NULL, the connection bound; a random
 * segmentation property test; and the two Linux NFS/RDMA captures of
 * test/captures read with a small pcap reader of this file (the unit test
 * stays free of libpcap) and reassembled to the numbers tshark reports.
 * A recorder checks the callback contract of iwd_tcp.c on every call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "iw_bytes.h"
#include "iwd.h"
#include "th.h"

/* Link types (pcap LINKTYPE_/DLT_ numbers), as iwd_net.c reads them. */
enum {
	L_NULL = 0,
	L_EN10MB = 1,
	L_RAW12 = 12,
	L_RAW14 = 14,
	L_RAW = 101,
	L_LOOP = 108,
	L_SLL = 113,
	L_IPV4 = 228,
	L_IPV6 = 229,
	L_SLL2 = 276,
};

/* ---------------------------------------------------------------------- */
/* Packet builder                                                         */
/* ---------------------------------------------------------------------- */

struct pspec {
	int link;
	int ipv;	      /* 4 or 6 */
	uint32_t af;	      /* NULL/LOOP: the AF value (0: 2 or 30) */
	bool af_be;	      /* NULL: the AF in big-endian order */
	unsigned ntags;	      /* VLAN tags (Ethernet, SLL, SLL2) */
	uint16_t tag[2];      /* their TPIDs (0: 802.1Q) */
	unsigned ip_opts;     /* IPv4 option octets, a multiple of 4 */
	uint16_t frag;	      /* IPv4 flags and fragment offset */
	uint8_t proto;	      /* 0: TCP */
	unsigned next[4];     /* IPv6 extension headers in order (0, 43, 60, 44) */
	unsigned next_len[4]; /* their Hdr Ext Len */
	unsigned nnext;
	unsigned tcp_opts; /* TCP option octets, a multiple of 4 */
	uint8_t flags;
	uint32_t seq, ack;
	size_t n;   /* payload octets */
	size_t pad; /* octets after the datagram */
};

struct pkt {
	uint8_t b[2048];
	size_t len;	/* octets of the frame */
	size_t ip;	/* where the IP header starts */
	size_t payload; /* where the TCP payload starts */
};

static uint8_t pay(size_t i)
{
	return (uint8_t)(i * 37 + 11);
}

static void build(const struct pspec *sp, struct pkt *k)
{
	uint8_t *b = k->b;
	size_t o = 0;
	uint16_t ethertype = sp->ipv == 6 ? 0x86dd : 0x0800;
	uint32_t af = sp->af ? sp->af : sp->ipv == 6 ? 30 : 2;

	memset(k, 0, sizeof(*k));
	switch (sp->link) {
	case L_NULL:
		if (sp->af_be)
			iw_put_be32(b, af);
		else
			iw_put_le32(b, af);
		o = 4;
		break;
	case L_LOOP:
		iw_put_be32(b, af);
		o = 4;
		break;
	case L_EN10MB:
	case L_SLL:
	case L_SLL2:
		if (sp->link == L_EN10MB) {
			memset(b, 0x02, 12); /* MAC addresses */
			o = 12;
		} else if (sp->link == L_SLL) {
			iw_put_be16(b + 2, 772); /* ARPHRD_LOOPBACK */
			iw_put_be16(b + 4, 6);
			o = 14;
		} else {
			o = 0;
		}
		for (unsigned i = 0; i < sp->ntags; i++) {
			uint16_t tpid = sp->tag[i] ? sp->tag[i] : 0x8100;
			if (sp->link == L_SLL2 && i == 0) {
				iw_put_be16(b, tpid);
				o = 20;
			} else {
				iw_put_be16(b + o, tpid);
				o += 2;
			}
			iw_put_be16(b + o, (uint16_t)(100 + i)); /* TCI */
			o += 2;
		}
		if (sp->link == L_SLL2 && sp->ntags == 0) {
			iw_put_be16(b, ethertype);
			o = 20;
		} else {
			iw_put_be16(b + o, ethertype);
			o += 2;
		}
		break;
	default:
		break;
	}

	k->ip = o;
	size_t tcp_len = 20 + sp->tcp_opts + sp->n;
	uint8_t proto = sp->proto ? sp->proto : 6;
	if (sp->ipv == 4) {
		size_t ihl = 20 + sp->ip_opts;
		b[o] = (uint8_t)(0x40 | ihl / 4);
		iw_put_be16(b + o + 2, (uint16_t)(ihl + tcp_len));
		iw_put_be16(b + o + 6, sp->frag);
		b[o + 8] = 64;
		b[o + 9] = proto;
		memcpy(b + o + 12, "\xc0\x00\x02\x01", 4);
		memcpy(b + o + 16, "\xc0\x00\x02\x02", 4);
		memset(b + o + 20, 1, sp->ip_opts); /* NOPs */
		o += ihl;
	} else {
		size_t ext = 0;
		for (unsigned i = 0; i < sp->nnext; i++)
			ext += (sp->next_len[i] + 1) * 8;
		b[o] = 0x60;
		iw_put_be16(b + o + 4, (uint16_t)(ext + tcp_len));
		b[o + 6] = (uint8_t)(sp->nnext ? sp->next[0] : proto);
		b[o + 7] = 64;
		b[o + 8] = 0x20;
		b[o + 9] = 0x01;
		b[o + 23] = 1;
		b[o + 24] = 0x20;
		b[o + 25] = 0x01;
		b[o + 39] = 2;
		o += 40;
		for (unsigned i = 0; i < sp->nnext; i++) {
			b[o] = (uint8_t)(i + 1 < sp->nnext ? sp->next[i + 1] : proto);
			b[o + 1] = (uint8_t)sp->next_len[i];
			o += (sp->next_len[i] + 1) * 8;
		}
	}
	iw_put_be16(b + o, 40000);
	iw_put_be16(b + o + 2, 20049);
	iw_put_be32(b + o + 4, sp->seq);
	iw_put_be32(b + o + 8, sp->ack);
	b[o + 12] = (uint8_t)((20 + sp->tcp_opts) / 4 << 4);
	b[o + 13] = sp->flags;
	memset(b + o + 20, 1, sp->tcp_opts);
	o += 20 + sp->tcp_opts;
	k->payload = o;
	for (size_t i = 0; i < sp->n; i++)
		b[o + i] = pay(i);
	o += sp->n;
	o += sp->pad; /* zeros */
	ck_assert_uint_le(o, sizeof(k->b));
	k->len = o;
}

/*
 * iwd_net_parse on an exact-size copy of pkt[0..caplen); *poff = the
 * payload's offset in the packet (the copy is gone when this returns).
 */
static int parse(int link, const uint8_t *pkt, size_t caplen, size_t wirelen, struct iwd_seg *s,
		 size_t *poff)
{
	uint8_t *copy = th_memdup_exact(pkt, caplen);
	memset(s, 0xa5, sizeof(*s));
	int r = iwd_net_parse(link, copy, caplen, wirelen, 7, 8, s);
	ck_assert(r == 0 || r == 1);
	if (r == 1) {
		ck_assert_ptr_nonnull(s->payload);
		ck_assert(s->payload >= copy && s->payload <= copy + caplen);
		*poff = (size_t)(s->payload - copy);
		ck_assert_uint_le(*poff + s->len, caplen);
		s->payload = pkt + *poff;
	}
	free(copy);
	return r;
}

/* The packet parses to its TCP segment: ports, numbers, payload where built. */
static void expect_seg(const struct pspec *sp, const struct pkt *k)
{
	struct iwd_seg s;
	size_t poff = 0;
	ck_assert_int_eq(parse(sp->link, k->b, k->len, k->len, &s, &poff), 1);
	ck_assert_int_eq(s.af, sp->ipv == 6 ? AF_INET6 : AF_INET);
	if (sp->ipv == 4) {
		ck_assert_mem_eq(s.src, "\xc0\x00\x02\x01\0\0\0\0\0\0\0\0\0\0\0\0", 16);
		ck_assert_mem_eq(s.dst, "\xc0\x00\x02\x02\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	} else {
		ck_assert_mem_eq(s.src, "\x20\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		ck_assert_mem_eq(s.dst, "\x20\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	}
	ck_assert_uint_eq(s.sport, 40000);
	ck_assert_uint_eq(s.dport, 20049);
	ck_assert_uint_eq(s.seq, sp->seq);
	ck_assert_uint_eq(s.ack, sp->ack);
	ck_assert_uint_eq(s.flags, sp->flags & 0x1f);
	ck_assert_uint_eq(s.frame, 7);
	ck_assert_uint_eq(s.ts_ns, 8);
	ck_assert_uint_eq(poff, k->payload);
	ck_assert_uint_eq(s.len, sp->n);
	ck_assert_uint_eq(s.wirelen, sp->n);
}

static void expect_not_tcp(const struct pspec *sp, const struct pkt *k)
{
	struct iwd_seg s;
	size_t poff;
	ck_assert_int_eq(parse(sp->link, k->b, k->len, k->len, &s, &poff), 0);
}

/* ---------------------------------------------------------------------- */
/* Packets                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(every_link_type_yields_its_tcp_segment)
{
	static const struct {
		int link, ipv;
		uint32_t af;
		bool af_be;
	} rows[] = {
		{L_NULL, 4, 2, false},	 {L_NULL, 4, 2, true},	  {L_NULL, 6, 10, false},
		{L_NULL, 6, 24, false},	 {L_NULL, 6, 28, true},	  {L_NULL, 6, 30, false},
		{L_EN10MB, 4, 0, false}, {L_EN10MB, 6, 0, false}, {L_RAW12, 4, 0, false},
		{L_RAW12, 6, 0, false},	 {L_RAW14, 4, 0, false},  {L_RAW14, 6, 0, false},
		{L_RAW, 4, 0, false},	 {L_RAW, 6, 0, false},	  {L_LOOP, 4, 2, false},
		{L_LOOP, 6, 24, false},	 {L_LOOP, 6, 30, false},  {L_SLL, 4, 0, false},
		{L_SLL, 6, 0, false},	 {L_SLL2, 4, 0, false},	  {L_SLL2, 6, 0, false},
		{L_IPV4, 4, 0, false},	 {L_IPV6, 6, 0, false},
	};
	for (size_t i = 0; i < IW_ARRAY_SIZE(rows); i++) {
		struct pspec sp = {.link = rows[i].link,
				   .ipv = rows[i].ipv,
				   .af = rows[i].af,
				   .af_be = rows[i].af_be,
				   .flags = IWD_TCP_ACK | IWD_TCP_PSH,
				   .seq = 0x01020304,
				   .ack = 0xa0b0c0d0,
				   .n = 33};
		struct pkt k;
		build(&sp, &k);
		expect_seg(&sp, &k);
	}
}
END_TEST

START_TEST(other_link_types_and_other_protocols_are_not_tcp)
{
	struct pkt k;
	struct pspec sp = {.link = L_EN10MB, .ipv = 4, .n = 10};
	build(&sp, &k);

	/* link types iwd_net does not read */
	static const int others[] = {105, 127, 147, 2, -1, 100000};
	for (size_t i = 0; i < IW_ARRAY_SIZE(others); i++) {
		struct pspec o = sp;
		o.link = others[i];
		expect_not_tcp(&o, &k);
	}
	/* ARP, an 802.3 length field */
	iw_put_be16(k.b + 12, 0x0806);
	expect_not_tcp(&sp, &k);
	iw_put_be16(k.b + 12, 0x05dc);
	expect_not_tcp(&sp, &k);
	/* Ethernet saying IPv6 over an IPv4 datagram */
	iw_put_be16(k.b + 12, 0x86dd);
	expect_not_tcp(&sp, &k);

	/* loopback AF values that are no IP */
	static const uint32_t afs[] = {1, 3, 11, 0x02000000};
	for (size_t i = 0; i < IW_ARRAY_SIZE(afs); i++) {
		struct pspec n = {.link = L_LOOP, .ipv = 4, .af = afs[i], .n = 10};
		build(&n, &k);
		expect_not_tcp(&n, &k);
	}
	/* UDP over IPv4 and IPv6 */
	struct pspec u4 = {.link = L_RAW, .ipv = 4, .proto = 17, .n = 10};
	build(&u4, &k);
	expect_not_tcp(&u4, &k);
	struct pspec u6 = {.link = L_RAW, .ipv = 6, .proto = 17, .n = 10};
	build(&u6, &k);
	expect_not_tcp(&u6, &k);
	/* IPv6 "no next header" after a destination options header */
	struct pspec nn = {.link = L_RAW, .ipv = 6, .proto = 59, .nnext = 1, .next = {60}};
	build(&nn, &k);
	expect_not_tcp(&nn, &k);
	/* raw IP of version 5, and an IPv4 link carrying IPv6 */
	struct pspec r = {.link = L_RAW, .ipv = 4, .n = 10};
	build(&r, &k);
	k.b[0] = 0x55;
	expect_not_tcp(&r, &k);
	struct pspec v6 = {.link = L_IPV4, .ipv = 6, .n = 10};
	build(&v6, &k);
	expect_not_tcp(&v6, &k);
	struct pspec v4 = {.link = L_IPV6, .ipv = 4, .n = 10};
	build(&v4, &k);
	expect_not_tcp(&v4, &k);
	/* an empty packet and NULL */
	struct iwd_seg s;
	for (int link = 0; link < 300; link++)
		ck_assert_int_eq(iwd_net_parse(link, k.b, 0, 0, 1, 1, &s), 0);
	ck_assert_int_eq(iwd_net_parse(L_RAW, NULL, 0, 0, 1, 1, &s), 0);
}
END_TEST

START_TEST(vlan_tags_are_skipped)
{
	static const int links[] = {L_EN10MB, L_SLL, L_SLL2};
	static const uint16_t tpid[][2] = {{0x8100, 0}, {0x88a8, 0x8100}, {0x8100, 0x8100}};
	for (size_t l = 0; l < IW_ARRAY_SIZE(links); l++) {
		for (size_t i = 0; i < IW_ARRAY_SIZE(tpid); i++) {
			for (int ipv = 4; ipv <= 6; ipv += 2) {
				struct pspec sp = {.link = links[l],
						   .ipv = ipv,
						   .ntags = tpid[i][1] ? 2 : 1,
						   .tag = {tpid[i][0], tpid[i][1]},
						   .seq = 99,
						   .n = 17};
				struct pkt k;
				build(&sp, &k);
				expect_seg(&sp, &k);
			}
		}
	}
	/* a tag that is the frame's last octets */
	struct pspec sp = {.link = L_EN10MB, .ipv = 4, .ntags = 1};
	struct pkt k;
	build(&sp, &k);
	struct iwd_seg s;
	size_t poff;
	for (size_t cap = 0; cap <= 18; cap++)
		ck_assert_int_eq(parse(L_EN10MB, k.b, cap, k.len, &s, &poff), 0);
}
END_TEST

START_TEST(ip_and_tcp_options_move_the_payload)
{
	for (unsigned ipo = 0; ipo <= 40; ipo += 4) {
		for (unsigned tcpo = 0; tcpo <= 40; tcpo += 4) {
			struct pspec sp = {.link = L_EN10MB,
					   .ipv = 4,
					   .ip_opts = ipo,
					   .tcp_opts = tcpo,
					   .seq = ipo << 8 | tcpo,
					   .n = 50};
			struct pkt k;
			build(&sp, &k);
			expect_seg(&sp, &k);
			ck_assert_uint_eq(k.payload, 14 + 20 + ipo + 20 + tcpo);
		}
	}
}
END_TEST

START_TEST(ethernet_padding_is_not_payload)
{
	/* a bare ACK is 54 octets: Ethernet pads it to 60 */
	struct pspec ack = {.link = L_EN10MB, .ipv = 4, .flags = IWD_TCP_ACK, .pad = 6};
	struct pkt k;
	build(&ack, &k);
	ck_assert_uint_eq(k.len, 60);
	expect_seg(&ack, &k);

	struct pspec three = {.link = L_EN10MB, .ipv = 4, .n = 3, .pad = 3};
	build(&three, &k);
	expect_seg(&three, &k);

	/* the 4-octet FCS some captures keep, and trailing octets after IPv6 */
	struct pspec fcs = {.link = L_EN10MB, .ipv = 6, .n = 100, .pad = 4};
	build(&fcs, &k);
	expect_seg(&fcs, &k);
	struct pspec sll = {.link = L_SLL, .ipv = 4, .pad = 30};
	build(&sll, &k);
	expect_seg(&sll, &k);
}
END_TEST

START_TEST(ipv6_extension_headers_are_walked)
{
	static const struct {
		unsigned n, next[4], len[4];
	} rows[] = {
		{1, {0}, {0}},
		{1, {43}, {2}},
		{1, {60}, {0}},
		{3, {0, 43, 60}, {0, 1, 3}},
		{4, {0, 60, 43, 60}, {1, 0, 0, 0}},
	};
	for (size_t i = 0; i < IW_ARRAY_SIZE(rows); i++) {
		struct pspec sp = {.link = L_IPV6, .ipv = 6, .nnext = rows[i].n, .n = 40};
		memcpy(sp.next, rows[i].next, sizeof(sp.next));
		memcpy(sp.next_len, rows[i].len, sizeof(sp.next_len));
		struct pkt k;
		build(&sp, &k);
		expect_seg(&sp, &k);
	}
	/* a fragment header, first or after others (RFC 8200 §4.5) */
	struct pspec f1 = {.link = L_IPV6, .ipv = 6, .nnext = 1, .next = {44}, .n = 40};
	struct pspec f2 = {.link = L_IPV6, .ipv = 6, .nnext = 2, .next = {0, 44}, .n = 40};
	struct pkt k;
	build(&f1, &k);
	expect_not_tcp(&f1, &k);
	build(&f2, &k);
	expect_not_tcp(&f2, &k);
	/* an extension header longer than the datagram */
	struct pspec big = {.link = L_IPV6, .ipv = 6, .nnext = 1, .next = {0}, .n = 0};
	build(&big, &k);
	k.b[41] = 10;
	expect_not_tcp(&big, &k);
}
END_TEST

START_TEST(ip_fragments_are_not_segments)
{
	static const uint16_t frag[] = {0x2000, 0x0001, 0x2010, 0x1fff, 0x8001};
	for (size_t i = 0; i < IW_ARRAY_SIZE(frag); i++) {
		struct pspec sp = {.link = L_RAW, .ipv = 4, .frag = frag[i], .n = 20};
		struct pkt k;
		build(&sp, &k);
		expect_not_tcp(&sp, &k);
	}
	/* Don't Fragment alone is an ordinary datagram */
	struct pspec df = {.link = L_RAW, .ipv = 4, .frag = 0x4000, .n = 20};
	struct pkt k;
	build(&df, &k);
	expect_seg(&df, &k);
}
END_TEST

/* Every caplen: 0 while a header is cut, then the segment with len <= wirelen. */
static void sweep_snaplen(const struct pspec *sp)
{
	struct pkt k;
	build(sp, &k);
	for (size_t cap = 0; cap <= k.len; cap++) {
		struct iwd_seg s;
		size_t poff;
		int r = parse(sp->link, k.b, cap, k.len, &s, &poff);
		if (cap < k.payload) {
			ck_assert_msg(r == 0, "caplen %zu of %zu: parsed", cap, k.len);
			continue;
		}
		ck_assert_msg(r == 1, "caplen %zu of %zu: not parsed", cap, k.len);
		ck_assert_uint_eq(poff, k.payload);
		ck_assert_uint_eq(s.len, cap - k.payload);
		ck_assert_uint_eq(s.wirelen, sp->n);
	}
}

START_TEST(a_header_cut_by_the_snaplen_is_not_a_segment)
{
	struct pspec v4 = {.link = L_EN10MB, .ipv = 4, .ip_opts = 8, .tcp_opts = 12, .n = 30};
	struct pspec v6 = {.link = L_SLL2,
			   .ipv = 6,
			   .ntags = 1,
			   .nnext = 2,
			   .next = {0, 60},
			   .next_len = {1, 0},
			   .tcp_opts = 4,
			   .n = 30};
	struct pspec q = {.link = L_EN10MB, .ipv = 4, .ntags = 2, .tag = {0x88a8}, .n = 30};
	struct pspec null = {.link = L_NULL, .ipv = 6, .n = 30};
	struct pspec sll = {.link = L_SLL, .ipv = 4, .n = 30};
	sweep_snaplen(&v4);
	sweep_snaplen(&v6);
	sweep_snaplen(&q);
	sweep_snaplen(&null);
	sweep_snaplen(&sll);
}
END_TEST

START_TEST(a_payload_cut_by_the_snaplen_keeps_its_wire_length)
{
	struct pspec sp = {.link = L_EN10MB, .ipv = 4, .n = 1400};
	struct pkt k;
	build(&sp, &k);
	struct iwd_seg s;
	size_t poff;
	ck_assert_int_eq(parse(L_EN10MB, k.b, 96, k.len, &s, &poff), 1);
	ck_assert_uint_eq(s.len, 96 - 54);
	ck_assert_uint_eq(s.wirelen, 1400);
	ck_assert_uint_eq(poff, 54);
	/* a wire length below the capture length is taken as the capture length */
	ck_assert_int_eq(parse(L_EN10MB, k.b, k.len, 10, &s, &poff), 1);
	ck_assert_uint_eq(s.len, 1400);
	ck_assert_uint_eq(s.wirelen, 1400);
}
END_TEST

START_TEST(bad_header_lengths_are_refused)
{
	struct pspec sp = {.link = L_RAW, .ipv = 4, .n = 20};
	struct pkt k;
	struct iwd_seg s;
	size_t poff;

	build(&sp, &k);
	for (uint8_t ihl = 0; ihl < 5; ihl++) { /* RFC 791 §3.1: IHL >= 5 */
		k.b[0] = (uint8_t)(0x40 | ihl);
		ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
	}
	k.b[0] = 0x4f; /* 60 octets of header in a 60-octet datagram: no room for TCP */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);

	build(&sp, &k);
	iw_put_be16(k.b + 2, 19); /* Total Length below the header */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
	iw_put_be16(k.b + 2, 39); /* below header + TCP header */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
	iw_put_be16(k.b + 2, (uint16_t)(k.len + 1)); /* longer than the frame */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
	iw_put_be16(k.b + 2, 45); /* shorter than the frame: the rest is padding */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 1);
	ck_assert_uint_eq(s.len, 5);

	for (uint8_t doff = 0; doff < 5; doff++) { /* RFC 9293 §3.1: Data Offset >= 5 */
		build(&sp, &k);
		k.b[20 + 12] = (uint8_t)(doff << 4);
		ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
	}
	build(&sp, &k);
	k.b[20 + 12] = 0xf0; /* 60 octets of TCP header in a 40-octet segment */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
	k.b[20 + 12] = 0xa0; /* 40 octets: exactly the segment */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 1);
	ck_assert_uint_eq(s.len, 0);

	struct pspec v6 = {.link = L_RAW, .ipv = 6, .n = 20};
	build(&v6, &k);
	iw_put_be16(k.b + 4, (uint16_t)(k.len - 40 + 1)); /* Payload Length past the frame */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
	iw_put_be16(k.b + 4, 19); /* shorter than a TCP header */
	ck_assert_int_eq(parse(L_RAW, k.b, k.len, k.len, &s, &poff), 0);
}
END_TEST

START_TEST(ip_length_zero_is_the_frame_length)
{
	/* what a sender's capture shows for TSO / BIG TCP super-packets */
	struct pspec v4 = {.link = L_EN10MB, .ipv = 4, .n = 1000};
	struct pkt k;
	build(&v4, &k);
	iw_put_be16(k.b + 14 + 2, 0);
	expect_seg(&v4, &k);
	struct pspec v6 = {.link = L_EN10MB, .ipv = 6, .n = 1000};
	build(&v6, &k);
	iw_put_be16(k.b + 14 + 4, 0);
	expect_seg(&v6, &k);
}
END_TEST

START_TEST(flags_and_numbers_are_read_as_sent)
{
	static const uint8_t flags[] = {0x02, 0x12, 0x10, 0x18, 0x11, 0x04, 0x14, 0x3f, 0xff};
	for (size_t i = 0; i < IW_ARRAY_SIZE(flags); i++) {
		struct pspec sp = {.link = L_RAW,
				   .ipv = 4,
				   .flags = flags[i],
				   .seq = 0xffffffffu - (uint32_t)i,
				   .ack = (uint32_t)i << 24};
		struct pkt k;
		build(&sp, &k);
		expect_seg(&sp, &k); /* URG, ECE, CWR are not kept */
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Recorder: the callbacks, checking the contract of iwd_tcp.c            */
/* ---------------------------------------------------------------------- */

#define REC_BUF	  (512u << 10) /* stream octets kept per direction */
#define REC_CONNS 8

enum ev_kind { EV_OPEN, EV_DATA, EV_GAP, EV_CLOSE };

struct ev {
	enum ev_kind kind;
	uint64_t id;
	int dir;
	uint64_t off, n;
	enum iwd_close_how how;
	uint64_t frame;
};

struct rconn {
	struct rec *r;
	struct iwd_flow flow;
	uint64_t next[2];
	bool closed[2];
	enum iwd_close_how how[2];
	uint8_t *buf[2]; /* octets delivered at [0, REC_BUF), 0xee in gaps */
	uint64_t data_octets[2], gap_octets[2], gaps[2];
};

struct rec {
	bool null_open; /* open() returns NULL */
	bool no_events; /* keep no event list (the big tests) */
	struct ev ev[256];
	unsigned nev;
	struct rconn *c[REC_CONNS];
	uint64_t opened, live, closes;
	char log[4096];
};

static void rec_event(struct rec *r, const struct ev *e)
{
	if (r->no_events)
		return;
	/* data and gaps that continue the event before are one event */
	if (r->nev > 0 && (e->kind == EV_DATA || e->kind == EV_GAP)) {
		struct ev *p = &r->ev[r->nev - 1];
		if (p->kind == e->kind && p->id == e->id && p->dir == e->dir &&
		    p->off + p->n == e->off) {
			p->n += e->n;
			p->frame = e->frame;
			return;
		}
	}
	ck_assert_uint_lt(r->nev, IW_ARRAY_SIZE(r->ev));
	r->ev[r->nev++] = *e;
}

static void *rec_open(void *user, const struct iwd_flow *flow, uint64_t ts_ns)
{
	struct rec *r = user;
	ck_assert_uint_eq(flow->id, r->opened + 1);
	r->opened++;
	rec_event(r, &(struct ev){.kind = EV_OPEN, .id = flow->id});
	if (r->null_open)
		return NULL;
	struct rconn *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	c->r = r;
	c->flow = *flow;
	if (flow->id <= REC_CONNS) {
		r->c[flow->id - 1] = c;
		for (int d = 0; d < 2; d++) {
			c->buf[d] = malloc(REC_BUF);
			ck_assert_ptr_nonnull(c->buf[d]);
			memset(c->buf[d], 0xee, REC_BUF);
		}
	}
	r->live++;
	return c;
}

static struct rconn *rec_conn(void *conn, int dir)
{
	struct rconn *c = conn;
	ck_assert_ptr_nonnull(c);
	ck_assert(dir == 0 || dir == 1);
	ck_assert_msg(!c->closed[dir], "a call after close");
	return c;
}

static void rec_data(void *conn, int dir, uint64_t off, const uint8_t *p, size_t n, uint64_t ts_ns,
		     uint64_t frame)
{
	struct rconn *c = rec_conn(conn, dir);
	ck_assert_uint_eq(off, c->next[dir]); /* no hole, no overlap */
	ck_assert_uint_gt(n, 0);
	ck_assert_ptr_nonnull(p);
	if (c->buf[dir] && off < REC_BUF)
		memcpy(c->buf[dir] + off, p, n < REC_BUF - off ? n : REC_BUF - off);
	c->next[dir] += n;
	c->data_octets[dir] += n;
	rec_event(c->r, &(struct ev){.kind = EV_DATA,
				     .id = c->flow.id,
				     .dir = dir,
				     .off = off,
				     .n = n,
				     .frame = frame});
}

static void rec_gap(void *conn, int dir, uint64_t off, uint64_t n, uint64_t ts_ns, uint64_t frame)
{
	struct rconn *c = rec_conn(conn, dir);
	ck_assert_uint_eq(off, c->next[dir]);
	ck_assert_uint_gt(n, 0);
	c->next[dir] += n;
	c->gap_octets[dir] += n;
	c->gaps[dir]++;
	rec_event(c->r, &(struct ev){.kind = EV_GAP,
				     .id = c->flow.id,
				     .dir = dir,
				     .off = off,
				     .n = n,
				     .frame = frame});
}

static void rec_close(void *conn, int dir, enum iwd_close_how how, uint64_t ts_ns)
{
	struct rconn *c = rec_conn(conn, dir);
	c->closed[dir] = true;
	c->how[dir] = how;
	c->r->closes++;
	rec_event(c->r, &(struct ev){.kind = EV_CLOSE, .id = c->flow.id, .dir = dir, .how = how});
	if (c->closed[0] && c->closed[1]) {
		c->r->live--;
		/* a conn kept for inspection stays; the others go (a late call: ASan) */
		if (c->flow.id > REC_CONNS)
			free(c);
	}
}

static const struct iwd_tcp_ops rec_ops = {
	.open = rec_open,
	.data = rec_data,
	.gap = rec_gap,
	.close = rec_close,
};

static void rec_free(struct rec *r)
{
	for (int i = 0; i < REC_CONNS; i++) {
		if (!r->c[i])
			continue;
		free(r->c[i]->buf[0]);
		free(r->c[i]->buf[1]);
		free(r->c[i]);
	}
}

static const char *const how_name[] = {"FIN", "RST", "END", "REUSED"};

/* The events as one line: "open 1 40000>20049 syn; 1.0 data 0+100; 1.0 FIN". */
static const char *rec_log(struct rec *r)
{
	size_t o = 0;
	r->log[0] = '\0';
	for (unsigned i = 0; i < r->nev; i++) {
		const struct ev *e = &r->ev[i];
		const char *sep = i ? "; " : "";
		size_t room = sizeof(r->log) - o;
		int w;
		switch (e->kind) {
		case EV_OPEN: {
			const struct rconn *c = e->id <= REC_CONNS ? r->c[e->id - 1] : NULL;
			if (c)
				w = snprintf(r->log + o, room, "%sopen %llu %u>%u %s", sep,
					     (unsigned long long)e->id, c->flow.port[0],
					     c->flow.port[1], c->flow.syn_seen ? "syn" : "mid");
			else
				w = snprintf(r->log + o, room, "%sopen %llu", sep,
					     (unsigned long long)e->id);
			break;
		}
		case EV_DATA:
		case EV_GAP:
			w = snprintf(r->log + o, room, "%s%llu.%d %s %llu+%llu", sep,
				     (unsigned long long)e->id, e->dir,
				     e->kind == EV_DATA ? "data" : "gap",
				     (unsigned long long)e->off, (unsigned long long)e->n);
			break;
		default:
			w = snprintf(r->log + o, room, "%s%llu.%d %s", sep,
				     (unsigned long long)e->id, e->dir, how_name[e->how]);
			break;
		}
		ck_assert(w > 0 && (size_t)w < room);
		o += (size_t)w;
	}
	return r->log;
}

/* ---------------------------------------------------------------------- */
/* Segment sender                                                         */
/* ---------------------------------------------------------------------- */

#define STREAM_LEN (256u << 10)

/* What each end sends: distinct octets per direction and offset. */
static uint8_t stream[2][STREAM_LEN];

static void stream_init(void)
{
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < STREAM_LEN; i++)
			stream[d][i] =
				(uint8_t)((i * 131 + (i >> 8) * 7 + (size_t)d * 101) ^ (i >> 16));
}

/* A connection under test: end 0 (the client) 192.0.2.1:40000, end 1 192.0.2.2:20049. */
struct tc {
	struct iwd_tcp *t;
	struct rec r;
	int af;
	uint8_t addr[2][16];
	uint16_t port[2];
	uint32_t isn[2];
	uint64_t frame;
};

static void tc_init(struct tc *k, size_t max_ooo, uint32_t isn0, uint32_t isn1)
{
	memset(k, 0, sizeof(*k));
	k->t = iwd_tcp_create(&rec_ops, &k->r, max_ooo);
	ck_assert_ptr_nonnull(k->t);
	k->af = AF_INET;
	memcpy(k->addr[0], "\xc0\x00\x02\x01", 4);
	memcpy(k->addr[1], "\xc0\x00\x02\x02", 4);
	k->port[0] = 40000;
	k->port[1] = 20049;
	k->isn[0] = isn0;
	k->isn[1] = isn1;
	stream_init();
}

static void tc_fini(struct tc *k)
{
	iwd_tcp_destroy(k->t);
	rec_free(&k->r);
}

/* A segment from end `from`: seq, flags, n captured octets of wirelen. */
static void tx_raw(struct tc *k, int from, uint32_t seq, uint8_t flags, const uint8_t *p,
		   uint32_t n, uint32_t wirelen)
{
	struct iwd_seg s = {
		.frame = ++k->frame,
		.ts_ns = k->frame * 1000,
		.af = k->af,
		.sport = k->port[from],
		.dport = k->port[1 - from],
		.seq = seq,
		.ack = 0,
		.flags = flags,
		.payload = p,
		.len = n,
		.wirelen = wirelen,
	};
	memcpy(s.src, k->addr[from], 16);
	memcpy(s.dst, k->addr[1 - from], 16);
	iwd_tcp_segment(k->t, &s);
}

/* Octets [off, off + n) of end `from`'s stream (after its SYN). */
static void tx(struct tc *k, int from, uint64_t off, uint32_t n, uint8_t flags)
{
	ck_assert_uint_le(off + n, STREAM_LEN);
	tx_raw(k, from, k->isn[from] + 1 + (uint32_t)off, flags | IWD_TCP_ACK, stream[from] + off,
	       n, n);
}

static void handshake(struct tc *k)
{
	tx_raw(k, 0, k->isn[0], IWD_TCP_SYN, NULL, 0, 0);
	tx_raw(k, 1, k->isn[1], IWD_TCP_SYN | IWD_TCP_ACK, NULL, 0, 0);
	tx_raw(k, 0, k->isn[0] + 1, IWD_TCP_ACK, NULL, 0, 0);
}

static struct rconn *conn1(struct tc *k)
{
	ck_assert_ptr_nonnull(k->r.c[0]);
	return k->r.c[0];
}

/* The first `n` octets delivered in direction d of connection 1 are the stream's. */
static void expect_stream(struct tc *k, int d, size_t n)
{
	ck_assert_mem_eq(conn1(k)->buf[d], stream[d], n);
}

static struct iwd_tcp_stats stats(const struct tc *k)
{
	struct iwd_tcp_stats s;
	iwd_tcp_get_stats(k->t, &s);
	return s;
}

/* ---------------------------------------------------------------------- */
/* Reassembly                                                             */
/* ---------------------------------------------------------------------- */

START_TEST(in_order_segments_are_delivered_once_and_in_order)
{
	struct tc k;
	tc_init(&k, 0, 1000, 900000);
	handshake(&k);
	for (int i = 0; i < 5; i++)
		tx(&k, 0, (uint64_t)i * 100, 100, IWD_TCP_PSH);
	for (int i = 0; i < 3; i++)
		tx(&k, 1, (uint64_t)i * 200, 200, 0);
	tx(&k, 0, 500, 0, IWD_TCP_FIN);
	tx(&k, 1, 600, 0, IWD_TCP_FIN);
	tx_raw(&k, 0, k.isn[0] + 502, IWD_TCP_ACK, NULL, 0, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+500; 1.1 data 0+600; "
					"1.0 FIN; 1.1 FIN");
	expect_stream(&k, 0, 500);
	expect_stream(&k, 1, 600);
	/* each data call names the packet that completed it */
	ck_assert_uint_eq(k.r.ev[1].frame, 8);
	ck_assert_uint_eq(k.r.ev[2].frame, 11);
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.segments, 14);
	ck_assert_uint_eq(s.connections, 1);
	ck_assert_uint_eq(s.retransmitted + s.out_of_order + s.gaps + s.gap_octets + s.ignored, 0);
	iwd_tcp_finish(k.t, 0);
	ck_assert_uint_eq(k.r.nev, 5); /* nothing left to close */
	tc_fini(&k);
}
END_TEST

START_TEST(reordered_segments_are_held_and_delivered_in_order)
{
	static const int order[] = {1, 2, 0, 5, 3, 4, 9, 8, 7, 6};
	struct tc k;
	tc_init(&k, 0, 77, 88);
	handshake(&k);
	for (size_t i = 0; i < IW_ARRAY_SIZE(order); i++) {
		tx(&k, 0, (uint64_t)order[i] * 100, 100, 0);
		/* only the contiguous prefix is out */
		static const uint64_t upto[] = {0, 0, 300, 300, 400, 600, 600, 600, 600, 1000};
		ck_assert_uint_eq(conn1(&k)->next[0], upto[i]);
	}
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+1000");
	ck_assert_uint_eq(k.r.ev[1].frame, 13); /* the last hole's filler */
	expect_stream(&k, 0, 1000);
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.out_of_order, 6);
	ck_assert_uint_eq(s.retransmitted, 0);
	ck_assert_uint_eq(s.gaps, 0);
	tc_fini(&k);
}
END_TEST

START_TEST(duplicates_and_retransmissions_are_delivered_once)
{
	struct tc k;
	tc_init(&k, 0, 5, 6);
	handshake(&k);
	for (int i = 0; i < 4; i++) {
		tx(&k, 0, (uint64_t)i * 100, 100, 0);
		tx(&k, 0, (uint64_t)i * 100, 100, 0);
	}
	tx(&k, 0, 50, 300, 0);	/* one retransmission over three segments */
	tx(&k, 0, 350, 100, 0); /* half old, half new */
	tx(&k, 0, 600, 50, 0);	/* ahead of a hole */
	tx(&k, 0, 600, 50, 0);	/* the same again, while held */
	tx(&k, 0, 450, 200, 0); /* fills the hole, overlaps what is held */
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+650");
	expect_stream(&k, 0, 650);
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.retransmitted, 4 + 1 + 1 + 1 + 1);
	ck_assert_uint_eq(s.out_of_order, 1);
	/* the SYN again, and the SYN-ACK: the same connection */
	tx_raw(&k, 0, k.isn[0], IWD_TCP_SYN, NULL, 0, 0);
	tx_raw(&k, 1, k.isn[1], IWD_TCP_SYN | IWD_TCP_ACK, NULL, 0, 0);
	tx(&k, 0, 650, 10, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+660");
	ck_assert_uint_eq(stats(&k).connections, 1);
	tc_fini(&k);
}
END_TEST

START_TEST(overlapping_segments_keep_the_first_copy)
{
	uint8_t a[400], b[400];
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	struct tc k;
	tc_init(&k, 0, 0, 0);
	handshake(&k);
	uint32_t s0 = k.isn[0] + 1;
	tx_raw(&k, 0, s0, IWD_TCP_ACK, a, 100, 100);	   /* [0, 100) a */
	tx_raw(&k, 0, s0 + 50, IWD_TCP_ACK, b, 100, 100);  /* [50, 150): b after 100 */
	tx_raw(&k, 0, s0 + 200, IWD_TCP_ACK, a, 100, 100); /* held: [200, 300) a */
	tx_raw(&k, 0, s0 + 160, IWD_TCP_ACK, b, 190, 190); /* held around it: b */
	tx_raw(&k, 0, s0 + 320, IWD_TCP_ACK, a, 10, 10);   /* under a held b: dropped */
	ck_assert_uint_eq(conn1(&k)->next[0], 150);
	uint8_t z[400];
	memset(z, 'z', sizeof(z));
	tx_raw(&k, 0, s0 + 150, IWD_TCP_ACK, z, 250, 250); /* [150, 400) z, in order */
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+400");
	uint8_t want[400];
	memset(want, 'a', 100);
	memset(want + 100, 'b', 50);
	memset(want + 150, 'z', 10);
	memset(want + 160, 'b', 40);
	memset(want + 200, 'a', 100);
	memset(want + 300, 'b', 50);
	memset(want + 350, 'z', 50);
	ck_assert_mem_eq(conn1(&k)->buf[0], want, 400);
	tc_fini(&k);
}
END_TEST

START_TEST(sequence_numbers_wrap_around_2_to_the_32)
{
	struct tc k;
	tc_init(&k, 0, 0xfffffc00u, 0xffffffffu); /* the SYN-ACK's data starts at 0 */
	handshake(&k);
	/* end 0 wraps at offset 1023, end 1 at its SYN */
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < 20; i++) {
			int j = i == 9 ? 10 : i == 10 ? 9 : i; /* swapped across the wrap */
			tx(&k, d, (uint64_t)j * 100, 100, 0);
		}
	}
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+2000; 1.1 data 0+2000");
	expect_stream(&k, 0, 2000);
	expect_stream(&k, 1, 2000);
	ck_assert_uint_eq(stats(&k).out_of_order, 2);
	/* a segment 2^31 octets away or more is behind, not ahead */
	tx_raw(&k, 0, k.isn[0] + 1 + 2000 + 0x80000000u, IWD_TCP_ACK, stream[0], 10, 10);
	ck_assert_uint_eq(stats(&k).out_of_order, 2);
	ck_assert_uint_eq(stats(&k).retransmitted, 1);
	tc_fini(&k);
}
END_TEST

START_TEST(stream_offsets_go_past_2_to_the_32)
{
	/* 65538 segments of 65535 octets, each cut to nothing by the snaplen */
	struct tc k;
	tc_init(&k, 0, 0x12345678, 0);
	handshake(&k);
	k.r.no_events = true;
	uint32_t seq = k.isn[0] + 1;
	const uint8_t none = 0;
	for (int i = 0; i < 65538; i++, seq += 65535)
		tx_raw(&k, 0, seq, IWD_TCP_ACK, &none, 0, 65535);
	k.r.no_events = false;
	tx_raw(&k, 0, seq + 100, IWD_TCP_ACK, stream[0] + 100, 100, 100); /* held */
	tx_raw(&k, 0, seq, IWD_TCP_ACK, stream[0], 100, 100);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 4295032830+200");
	ck_assert_uint_gt(conn1(&k)->next[0], UINT64_C(1) << 32);
	ck_assert_uint_eq(conn1(&k)->gap_octets[0], 4295032830ull);
	ck_assert_uint_eq(stats(&k).gaps, 65538);
	tc_fini(&k);
}
END_TEST

START_TEST(out_of_order_bound_gives_up_the_earliest_hole)
{
	struct tc k;
	tc_init(&k, 4096, 1, 2);
	handshake(&k);
	/* holes [0, 100) and [3100, 3200); each held piece costs 64 octets more */
	tx(&k, 0, 100, 1000, 0);
	tx(&k, 0, 1100, 1000, 0);
	tx(&k, 0, 2100, 1000, 0);
	tx(&k, 0, 3200, 500, 0); /* 3500 + 4 * 64 = 3756: fits */
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn");
	tx(&k, 0, 3700, 300, 0); /* 4120: past the bound */
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 gap 0+100; 1.0 data 100+3000");
	tx(&k, 0, 0, 100, 0); /* too late */
	tx(&k, 0, 3100, 100, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 gap 0+100; "
					"1.0 data 100+3900");
	ck_assert_mem_eq(conn1(&k)->buf[0] + 100, stream[0] + 100, 3900);
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.gaps, 1);
	ck_assert_uint_eq(s.gap_octets, 100);
	ck_assert_uint_eq(s.retransmitted, 1);

	/* one segment larger than the bound on its own */
	tx(&k, 0, 4100, 5000, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 gap 0+100; "
					"1.0 data 100+3900; 1.0 gap 4000+100; 1.0 data 4100+5000");
	/* destroyed while holding octets: freed without a call */
	tx(&k, 0, 9200, 100, 0);
	tx(&k, 1, 100, 100, 0);
	tc_fini(&k);
}
END_TEST

START_TEST(a_segment_cut_by_the_snaplen_delivers_its_part_then_a_gap)
{
	struct tc k;
	tc_init(&k, 0, 10, 20);
	handshake(&k);
	uint32_t s0 = k.isn[0] + 1;
	tx_raw(&k, 0, s0, IWD_TCP_ACK, stream[0], 40, 100);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+40; 1.0 gap 40+60");
	tx(&k, 0, 100, 100, 0);
	/* out of order: [300, 310) captured of [300, 400), held; then the hole */
	tx_raw(&k, 0, s0 + 300, IWD_TCP_ACK, stream[0] + 300, 10, 100);
	tx(&k, 0, 400, 50, 0);
	tx(&k, 0, 200, 100, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+40; 1.0 gap 40+60; "
					"1.0 data 100+210; 1.0 gap 310+90; 1.0 data 400+50");
	ck_assert_mem_eq(conn1(&k)->buf[0] + 100, stream[0] + 100, 210);
	ck_assert_mem_eq(conn1(&k)->buf[0] + 400, stream[0] + 400, 50);
	/* a retransmission of the part that was cut comes too late */
	tx(&k, 0, 310, 90, 0);
	ck_assert_uint_eq(k.r.nev, 6);
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.gaps, 2);
	ck_assert_uint_eq(s.gap_octets, 150);
	tc_fini(&k);
}
END_TEST

START_TEST(fin_ends_a_direction_after_its_last_octet)
{
	struct tc k;
	tc_init(&k, 0, 100, 200);
	handshake(&k);
	tx(&k, 0, 0, 100, 0);
	tx(&k, 0, 200, 100, IWD_TCP_FIN); /* FIN at 300, [100, 200) missing */
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+100");
	tx(&k, 0, 100, 100, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+300; 1.0 FIN");
	/* the other direction goes on; the closed one is deaf */
	tx(&k, 0, 300, 10, 0);
	tx(&k, 1, 0, 50, 0);
	tx_raw(&k, 0, k.isn[0] + 302, IWD_TCP_ACK, NULL, 0, 0);
	/* octets past a FIN are not stream octets */
	tx(&k, 1, 100, 50, IWD_TCP_FIN);
	tx(&k, 1, 150, 20, 0);
	tx(&k, 1, 50, 60, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+300; 1.0 FIN; "
					"1.1 data 0+150; 1.1 FIN");
	/* late ACKs and a retransmitted FIN open nothing */
	tx(&k, 1, 100, 50, IWD_TCP_FIN);
	tx_raw(&k, 0, k.isn[0] + 302, IWD_TCP_ACK, NULL, 0, 0);
	iwd_tcp_finish(k.t, 0);
	ck_assert_uint_eq(k.r.nev, 5);
	ck_assert_uint_eq(stats(&k).connections, 1);
	tc_fini(&k);
}
END_TEST

START_TEST(rst_delivers_what_is_held_and_ends_both_directions)
{
	struct tc k;
	tc_init(&k, 0, 100, 200);
	handshake(&k);
	tx(&k, 0, 0, 100, 0);
	tx(&k, 0, 200, 100, 0);
	tx(&k, 0, 400, 50, 0);
	tx(&k, 1, 0, 10, 0);
	tx_raw(&k, 1, k.isn[1] + 11, IWD_TCP_RST, NULL, 0, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+100; 1.1 data 0+10; "
					"1.0 gap 100+100; 1.0 data 200+100; 1.0 gap 300+100; "
					"1.0 data 400+50; 1.0 RST; 1.1 RST");
	ck_assert_mem_eq(conn1(&k)->buf[0] + 400, stream[0] + 400, 50);
	/* what follows on the same ends belongs to the dead connection */
	tx(&k, 0, 100, 100, 0);
	tx_raw(&k, 1, k.isn[1] + 11, IWD_TCP_RST, NULL, 0, 0);
	iwd_tcp_finish(k.t, 0);
	ck_assert_uint_eq(k.r.nev, 9);
	ck_assert_uint_eq(stats(&k).connections, 1);

	/* an RST after one direction's FIN closes the other */
	struct tc m;
	tc_init(&m, 0, 7, 8);
	handshake(&m);
	tx(&m, 0, 0, 0, IWD_TCP_FIN);
	tx_raw(&m, 0, m.isn[0] + 2, IWD_TCP_RST, NULL, 0, 0);
	ck_assert_str_eq(rec_log(&m.r), "open 1 40000>20049 syn; 1.0 FIN; 1.1 RST");
	tc_fini(&m);
	tc_fini(&k);
}
END_TEST

START_TEST(without_a_syn_the_first_sequence_seen_is_offset_0)
{
	struct tc k;
	tc_init(&k, 0, 0, 0);
	/* the server's data first: it becomes end 0 */
	tx_raw(&k, 1, 5000, IWD_TCP_ACK, stream[1], 100, 100);
	tx_raw(&k, 1, 4900, IWD_TCP_ACK, stream[1], 100, 100); /* before the start: old */
	tx_raw(&k, 0, 70000, IWD_TCP_ACK, NULL, 0, 0);	       /* the client's first: a bare ACK */
	tx_raw(&k, 0, 70000, IWD_TCP_ACK, stream[0], 30, 30);
	tx_raw(&k, 1, 5100, IWD_TCP_ACK | IWD_TCP_FIN, stream[1] + 100, 20, 20);
	ck_assert_str_eq(rec_log(&k.r), "open 1 20049>40000 mid; 1.0 data 0+100; 1.1 data 0+30; "
					"1.0 data 100+20; 1.0 FIN");
	ck_assert(!conn1(&k)->flow.syn_seen);
	ck_assert_mem_eq(conn1(&k)->flow.addr[0], k.addr[1], 16);
	/* direction 0 carries the server's octets */
	ck_assert_mem_eq(conn1(&k)->buf[0], stream[1], 120);
	ck_assert_mem_eq(conn1(&k)->buf[1], stream[0], 30);
	ck_assert_uint_eq(stats(&k).retransmitted, 1);
	/* this connection's SYN, late: not a new connection */
	tx_raw(&k, 0, 69999, IWD_TCP_SYN, NULL, 0, 0);
	ck_assert_uint_eq(stats(&k).connections, 1);
	iwd_tcp_finish(k.t, 99);
	ck_assert_str_eq(rec_log(&k.r), "open 1 20049>40000 mid; 1.0 data 0+100; 1.1 data 0+30; "
					"1.0 data 100+20; 1.0 FIN; 1.1 END");
	tc_fini(&k);
}
END_TEST

START_TEST(a_syn_with_a_new_isn_starts_a_new_connection)
{
	struct tc k;
	tc_init(&k, 0, 1000, 2000);
	handshake(&k);
	tx(&k, 0, 0, 100, 0);
	tx(&k, 0, 200, 100, 0); /* held: given at the reuse with its hole */
	k.isn[0] = 555555;
	k.isn[1] = 666666;
	handshake(&k);
	tx(&k, 0, 0, 10, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+100; 1.0 gap 100+100; "
					"1.0 data 200+100; 1.0 REUSED; 1.1 REUSED; "
					"open 2 40000>20049 syn; 2.0 data 0+10");
	/* after a clean end the next SYN opens a connection without REUSED */
	tx(&k, 0, 10, 0, IWD_TCP_FIN);
	tx(&k, 1, 0, 0, IWD_TCP_FIN);
	k.isn[1] = 31337;
	tx_raw(&k, 1, k.isn[1], IWD_TCP_SYN, NULL, 0, 0); /* this time from the other end */
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+100; 1.0 gap 100+100; "
					"1.0 data 200+100; 1.0 REUSED; 1.1 REUSED; "
					"open 2 40000>20049 syn; 2.0 data 0+10; 2.0 FIN; 2.1 FIN; "
					"open 3 20049>40000 syn");
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.connections, 3);
	iwd_tcp_finish(k.t, 0);
	ck_assert_uint_eq(k.r.live, 0);
	tc_fini(&k);
}
END_TEST

START_TEST(finish_turns_holes_into_gaps_and_ends_every_direction)
{
	struct tc k;
	tc_init(&k, 0, 1, 1);
	handshake(&k);
	tx(&k, 0, 100, 100, 0);
	tx(&k, 1, 0, 10, 0);
	tx(&k, 1, 50, 10, IWD_TCP_FIN); /* FIN at 60, [10, 50) never came */
	iwd_tcp_finish(k.t, 12345);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.1 data 0+10; 1.0 gap 0+100; "
					"1.0 data 100+100; 1.0 END; 1.1 gap 10+40; "
					"1.1 data 50+10; 1.1 END");
	ck_assert_uint_eq(k.r.live, 0);
	iwd_tcp_finish(k.t, 12346); /* again: nothing */
	ck_assert_uint_eq(k.r.nev, 8);
	tc_fini(&k);
}
END_TEST

START_TEST(a_connection_without_a_user_pointer_is_followed_silently)
{
	struct tc k;
	tc_init(&k, 1000, 1, 1);
	k.r.null_open = true;
	handshake(&k);
	tx(&k, 0, 100, 100, 0);
	tx(&k, 0, 300, 2000, 0); /* past the bound: a gap */
	tx(&k, 0, 0, 100, 0);
	tx(&k, 1, 10, 10, IWD_TCP_FIN);
	iwd_tcp_finish(k.t, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1");
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.connections, 1);
	ck_assert_uint_eq(s.segments, 7);
	ck_assert_uint_eq(s.gaps, 3); /* two at the bound, one at the end */
	ck_assert_uint_eq(s.gap_octets, 100 + 100 + 10);
	tc_fini(&k);
}
END_TEST

START_TEST(a_syn_ack_first_makes_its_receiver_the_client)
{
	struct tc k;
	tc_init(&k, 0, 3, 4);
	k.af = AF_INET6;
	memcpy(k.addr[0], "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	memcpy(k.addr[1], "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	tx_raw(&k, 1, k.isn[1], IWD_TCP_SYN | IWD_TCP_ACK, NULL, 0, 0);
	tx(&k, 0, 0, 10, 0);
	tx(&k, 1, 0, 20, 0);
	ck_assert_str_eq(rec_log(&k.r), "open 1 40000>20049 syn; 1.0 data 0+10; 1.1 data 0+20");
	const struct iwd_flow *f = &conn1(&k)->flow;
	ck_assert_int_eq(f->af, AF_INET6);
	ck_assert_mem_eq(f->addr[0], k.addr[0], 16);
	ck_assert_mem_eq(f->addr[1], k.addr[1], 16);
	ck_assert(f->syn_seen);
	expect_stream(&k, 0, 10);
	expect_stream(&k, 1, 20);
	/* the client's SYN, late, is part of it */
	tx_raw(&k, 0, k.isn[0], IWD_TCP_SYN, NULL, 0, 0);
	ck_assert_uint_eq(stats(&k).connections, 1);
	/* the same ports over IPv4 are another connection */
	k.af = AF_INET;
	tx(&k, 0, 10, 10, 0);
	ck_assert_uint_eq(stats(&k).connections, 2);
	tc_fini(&k);
}
END_TEST

/* Connection i of the bound test: 10.x.y.z:i%65536 -> 192.0.2.2:80. */
static void tx_conn(struct tc *k, uint32_t i, uint8_t flags)
{
	iw_put_be32(k->addr[0], 0x0a000000u | i >> 16);
	k->port[0] = (uint16_t)i;
	tx_raw(k, 0, i, flags, NULL, 0, 0);
}

START_TEST(the_connection_table_is_bounded)
{
	struct tc k;
	tc_init(&k, 0, 0, 0);
	k.r.no_events = true;
	for (uint32_t i = 0; i < IWD_TCP_MAX_CONNS; i++)
		tx_conn(&k, i, IWD_TCP_SYN);
	ck_assert_uint_eq(stats(&k).connections, IWD_TCP_MAX_CONNS);
	tx_conn(&k, IWD_TCP_MAX_CONNS, IWD_TCP_SYN); /* one too many */
	tx_conn(&k, IWD_TCP_MAX_CONNS, 0);
	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.connections, IWD_TCP_MAX_CONNS);
	ck_assert_uint_eq(s.ignored, 2);
	/* the ones that exist are still found */
	tx_conn(&k, 5, IWD_TCP_SYN);
	ck_assert_uint_eq(stats(&k).ignored, 2);
	/* an ended one makes room */
	tx_conn(&k, 7, IWD_TCP_RST);
	tx_conn(&k, IWD_TCP_MAX_CONNS + 1, IWD_TCP_SYN);
	s = stats(&k);
	ck_assert_uint_eq(s.connections, IWD_TCP_MAX_CONNS + 1);
	ck_assert_uint_eq(s.ignored, 2);
	iwd_tcp_finish(k.t, 0);
	ck_assert_uint_eq(k.r.closes, 2 * (IWD_TCP_MAX_CONNS + 1));
	ck_assert_uint_eq(k.r.live, 0);
	tc_fini(&k);
}
END_TEST

/*
 * Random segmentation of two streams, reordered within a window, some
 * segments sent twice, some retransmitted over others, some cut by a
 * snaplen, FINs at the end: what is delivered is the stream, gaps exactly
 * where octets never came.
 */
struct qent {
	int dir;
	uint32_t off, n, cap; /* octets [off, off + n), cap of them captured */
	uint8_t flags;
};

static void random_run(uint64_t salt, size_t max_ooo, bool cut)
{
	struct th_rng g;
	th_rng_init(&g, th_seed_for(salt));
	struct tc k;
	tc_init(&k, max_ooo, (uint32_t)th_rng_next(&g), (uint32_t)th_rng_next(&g));
	handshake(&k);
	k.r.no_events = true;

	enum { N = 4096 };
	static struct qent q[N];
	size_t nq = 0;
	uint32_t len[2] = {(uint32_t)th_rng_range(&g, 1, STREAM_LEN / 2),
			   (uint32_t)th_rng_range(&g, 1, STREAM_LEN / 2)};
	bool seen[2][STREAM_LEN / 2] = {0}; /* octets captured */
	for (int d = 0; d < 2; d++) {
		for (uint32_t off = 0; off < len[d] && nq < N - 2;) {
			uint32_t n = (uint32_t)th_rng_range(&g, 1, 3000);
			if (n > len[d] - off)
				n = len[d] - off;
			uint32_t c = cut && th_rng_range(&g, 0, 9) == 0
					     ? (uint32_t)th_rng_range(&g, 0, n)
					     : n;
			q[nq].dir = d;
			q[nq].off = off;
			q[nq].n = n;
			q[nq].cap = c;
			q[nq].flags = off + n == len[d] ? IWD_TCP_FIN : 0;
			nq++;
			if (th_rng_range(&g, 0, 9) == 0) { /* sent twice */
				q[nq] = q[nq - 1];
				nq++;
			}
			off += n;
		}
	}
	/* reorder within a window of 8 */
	for (size_t i = 0; i + 1 < nq; i++) {
		size_t j = i + (size_t)th_rng_range(&g, 0, IW_MIN(7, nq - 1 - i));
		if (th_rng_range(&g, 0, 3) == 0) {
			struct qent x = q[i];
			q[i] = q[j];
			q[j] = x;
		}
	}
	for (size_t i = 0; i < nq; i++) {
		int d = q[i].dir;
		tx_raw(&k, d, k.isn[d] + 1 + q[i].off, IWD_TCP_ACK | q[i].flags,
		       stream[d] + q[i].off, q[i].cap, q[i].n);
		for (uint32_t o = 0; o < q[i].cap; o++)
			seen[d][q[i].off + o] = true;
		/* now and then a retransmission over a random range */
		if (th_rng_range(&g, 0, 19) == 0) {
			uint32_t a = (uint32_t)th_rng_range(&g, 0, len[d] - 1);
			uint32_t n = (uint32_t)th_rng_range(&g, 1, IW_MIN(4000, len[d] - a));
			tx_raw(&k, d, k.isn[d] + 1 + a, IWD_TCP_ACK, stream[d] + a, n, n);
			for (uint32_t o = 0; o < n; o++)
				seen[d][a + o] = true;
		}
	}
	iwd_tcp_finish(k.t, 1);

	struct rconn *c = conn1(&k);
	struct iwd_tcp_stats s = stats(&k);
	for (int d = 0; d < 2; d++) {
		ck_assert(c->closed[d]);
		ck_assert_uint_eq(c->next[d], len[d]);
		ck_assert_uint_eq(c->data_octets[d] + c->gap_octets[d], len[d]);
		for (uint32_t o = 0; o < len[d]; o++) {
			if (c->buf[d][o] == stream[d][o])
				continue;
			/*
			 * A gap: octets never captured, given up at the bound, or
			 * cut in their first copy (the first arrival wins).
			 */
			ck_assert_msg(c->buf[d][o] == 0xee && (!seen[d][o] || max_ooo || cut),
				      "dir %d octet %u", d, o);
		}
		if (!cut && !max_ooo) {
			ck_assert_uint_eq(c->how[d], IWD_CLOSE_FIN);
			ck_assert_uint_eq(c->gaps[d], 0);
		}
	}
	ck_assert_uint_eq(s.gap_octets, c->gap_octets[0] + c->gap_octets[1]);
	ck_assert_uint_eq(s.gaps, c->gaps[0] + c->gaps[1]);
	ck_assert_uint_eq(s.connections, 1);
	tc_fini(&k);
}

START_TEST(random_segmentation_gives_back_the_stream)
{
	for (uint64_t i = 0; i < 8; i++)
		random_run(i, 0, false);
}
END_TEST

START_TEST(random_segmentation_with_cuts_and_a_small_bound_has_gaps_only_where_due)
{
	for (uint64_t i = 0; i < 8; i++) {
		random_run(100 + i, 0, true);
		random_run(200 + i, 8192, false);
		random_run(300 + i, 3000, true);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The captures                                                           */
/* ---------------------------------------------------------------------- */

/* A classic pcap file (not pcapng), read whole. */
struct pcap_rd {
	uint8_t *b;
	size_t len, off;
	bool be;
	int linktype;
};

static uint32_t rd32(const struct pcap_rd *f, size_t at)
{
	return f->be ? iw_get_be32(f->b + at) : iw_get_le32(f->b + at);
}

static void pcap_load(struct pcap_rd *f, const char *name)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", IWD_TEST_CAPTURES, name);
	FILE *fp = fopen(path, "rb");
	ck_assert_msg(fp != NULL, "cannot open %s", path);
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	ck_assert(n >= 24);
	f->b = malloc((size_t)n);
	ck_assert_ptr_nonnull(f->b);
	ck_assert_uint_eq(fread(f->b, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	f->len = (size_t)n;
	f->off = 24;
	/* microsecond magic, either order (nanosecond files are not expected here) */
	uint32_t magic = iw_get_le32(f->b);
	ck_assert_msg(magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u, "%s: not a classic pcap", path);
	f->be = magic == 0xd4c3b2a1u;
	f->linktype = (int)rd32(f, 20);
}

static int pcap_next_rec(struct pcap_rd *f, const uint8_t **pkt, uint32_t *caplen,
			 uint32_t *wirelen, uint64_t *ts)
{
	if (f->len - f->off < 16)
		return 0;
	*ts = (uint64_t)rd32(f, f->off) * 1000000000u + (uint64_t)rd32(f, f->off + 4) * 1000u;
	*caplen = rd32(f, f->off + 8);
	*wirelen = rd32(f, f->off + 12);
	ck_assert_uint_le(*caplen, f->len - f->off - 16);
	*pkt = f->b + f->off + 16;
	f->off += 16 + *caplen;
	return 1;
}

/*
 * Per connection, in order of first appearance: client and server port,
 * frames, payload octets client -> server and server -> client.  Obtained
 * with tshark 4.0: connections and frames from
 *   tshark -r FILE -q -z conv,tcp
 * and the payload octets (conv,tcp gives frame octets, rounded) from
 *   tshark -r FILE -T fields -e tcp.stream -e tcp.srcport -e tcp.len
 * summed per stream and source port (no retransmission or lost segment in
 * either file: tcp.analysis.retransmission and lost_segment are empty).
 */
struct cap_conn {
	uint16_t cport, sport;
	unsigned frames;
	uint64_t c2s, s2c;
};

static const struct cap_conn v3_conns[] = {
	{45646, 111, 10, 88, 32}, {914, 20048, 12, 128, 80}, {45777, 20049, 61, 207168, 2704},
	{45660, 111, 10, 88, 32}, {902, 20048, 12, 128, 80}, {32917, 20049, 136, 2840, 209016},
};

static const struct cap_conn v40_conns[] = {
	{46130, 20049, 97, 210620, 5628},  {964, 33065, 10, 72, 28}, {694, 33065, 10, 72, 28},
	{40526, 20049, 169, 6432, 212964}, {1003, 41821, 8, 72, 0},  {673, 41821, 10, 72, 28},
};

static void reassemble_capture(const char *name, const struct cap_conn *want, size_t nwant,
			       unsigned packets)
{
	struct pcap_rd f = {0};
	pcap_load(&f, name);
	ck_assert_int_eq(f.linktype, L_EN10MB);

	struct tc k;
	tc_init(&k, 0, 0, 0);
	k.r.no_events = true;
	unsigned frames[REC_CONNS] = {0};
	const uint8_t *pkt;
	uint32_t caplen, wirelen;
	uint64_t ts, frame = 0, last_ts = 0;
	while (pcap_next_rec(&f, &pkt, &caplen, &wirelen, &ts)) {
		struct iwd_seg s;
		frame++;
		uint8_t *copy = th_memdup_exact(pkt, caplen);
		ck_assert_int_eq(iwd_net_parse(f.linktype, copy, caplen, wirelen, frame, ts, &s),
				 1);
		ck_assert_uint_eq(s.len, s.wirelen); /* nothing cut */
		for (size_t i = 0; i < nwant; i++)
			if ((s.sport == want[i].cport && s.dport == want[i].sport) ||
			    (s.sport == want[i].sport && s.dport == want[i].cport))
				frames[i]++;
		iwd_tcp_segment(k.t, &s);
		free(copy);
		last_ts = ts;
	}
	ck_assert_uint_eq(frame, packets);
	iwd_tcp_finish(k.t, last_ts);

	struct iwd_tcp_stats s = stats(&k);
	ck_assert_uint_eq(s.connections, nwant);
	ck_assert_uint_eq(s.segments, packets);
	ck_assert_uint_eq(s.gaps, 0);
	ck_assert_uint_eq(s.gap_octets, 0);
	ck_assert_uint_eq(s.retransmitted, 0);
	ck_assert_uint_eq(s.out_of_order, 0);
	ck_assert_uint_eq(s.ignored, 0);
	for (size_t i = 0; i < nwant; i++) {
		const struct rconn *c = k.r.c[i];
		ck_assert_ptr_nonnull(c);
		ck_assert(c->flow.syn_seen);
		ck_assert_uint_eq(c->flow.port[0], want[i].cport);
		ck_assert_uint_eq(c->flow.port[1], want[i].sport);
		ck_assert_uint_eq(frames[i], want[i].frames);
		ck_assert_uint_eq(c->data_octets[0], want[i].c2s);
		ck_assert_uint_eq(c->data_octets[1], want[i].s2c);
		for (int d = 0; d < 2; d++) {
			ck_assert(c->closed[d]);
			ck_assert_int_eq(c->how[d], IWD_CLOSE_FIN);
			ck_assert_uint_eq(c->gaps[d], 0);
		}
	}
	/* the NFS connection's first octets: an MPA Request (RFC 5044 §7.1) */
	for (size_t i = 0; i < nwant; i++)
		if (want[i].sport == 20049)
			ck_assert_mem_eq(k.r.c[i]->buf[0], "MPA ID Req Frame", 16);
	tc_fini(&k);
	free(f.b);
}

START_TEST(the_nfsv3_capture_reassembles_without_gaps)
{
	reassemble_capture("nfsrdma-v3.pcap", v3_conns, IW_ARRAY_SIZE(v3_conns), 241);
}
END_TEST

START_TEST(the_nfsv4_capture_reassembles_without_gaps)
{
	reassemble_capture("nfsrdma-v4.0.pcap", v40_conns, IW_ARRAY_SIZE(v40_conns), 304);
}
END_TEST

static Suite *iwd_tcp_suite(void)
{
	Suite *s = suite_create("iwd_tcp");

	TH_ADD_TCASE(s, "packets", every_link_type_yields_its_tcp_segment,
		     other_link_types_and_other_protocols_are_not_tcp, vlan_tags_are_skipped,
		     ip_and_tcp_options_move_the_payload, ethernet_padding_is_not_payload,
		     ipv6_extension_headers_are_walked, ip_fragments_are_not_segments,
		     a_header_cut_by_the_snaplen_is_not_a_segment,
		     a_payload_cut_by_the_snaplen_keeps_its_wire_length,
		     bad_header_lengths_are_refused, ip_length_zero_is_the_frame_length,
		     flags_and_numbers_are_read_as_sent);
	TH_ADD_TCASE(
		s, "reassembly", in_order_segments_are_delivered_once_and_in_order,
		reordered_segments_are_held_and_delivered_in_order,
		duplicates_and_retransmissions_are_delivered_once,
		overlapping_segments_keep_the_first_copy, sequence_numbers_wrap_around_2_to_the_32,
		stream_offsets_go_past_2_to_the_32, out_of_order_bound_gives_up_the_earliest_hole,
		a_segment_cut_by_the_snaplen_delivers_its_part_then_a_gap,
		fin_ends_a_direction_after_its_last_octet,
		rst_delivers_what_is_held_and_ends_both_directions,
		without_a_syn_the_first_sequence_seen_is_offset_0,
		a_syn_with_a_new_isn_starts_a_new_connection,
		finish_turns_holes_into_gaps_and_ends_every_direction,
		a_connection_without_a_user_pointer_is_followed_silently,
		a_syn_ack_first_makes_its_receiver_the_client, the_connection_table_is_bounded);
	TH_ADD_TCASE(s, "random", random_segmentation_gives_back_the_stream,
		     random_segmentation_with_cuts_and_a_small_bound_has_gaps_only_where_due);
	TH_ADD_TCASE(s, "captures", the_nfsv3_capture_reassembles_without_gaps,
		     the_nfsv4_capture_reassembles_without_gaps);
	return s;
}

TH_MAIN(iwd_tcp_suite)
