/* SPDX-License-Identifier: MIT */
/*
 * icf_pcap.c - a capture synthesised from one case's socket (icf.h).
 * Sans-I/O but for icf_pcap_write().
 *
 * iwconform sees every octet it sent and received on its TCP socket, so it
 * can write the capture a sniffer would have taken without the privilege to
 * capture: a classic pcap (magic a1b2c3d4, version 2.4) of LINKTYPE_RAW
 * (101: each packet starts with its IPv4 or IPv6 header), a TCP three-way
 * handshake, one packet per chunk of octets (PSH|ACK, sequence and
 * acknowledgement numbers consistent, RFC 9293 §3.4), and a FIN or RST per
 * end that closed.  IPv4 header and TCP checksums are computed (RFC 791,
 * RFC 9293 §3.1, RFC 8200 §8.1) so that any reader accepts the packets.
 * End 0 is the TCP client, which sent the SYN: iwconform itself with -c, the
 * peer's client with -s.  A case with two connections (perftest's control
 * connection beside the data connection) merges the second capture into the
 * first by time: one file, two TCP connections.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "iw_bytes.h"

#include "icf.h"

#define PCAP_SNAPLEN   262144u
#define IP4_HDR_LEN    20
#define IP6_HDR_LEN    40
#define TCP_HDR_LEN    20
#define PCAP_CHUNK_MAX 32768u
#define ISN_CLIENT     0x10000000u
#define ISN_SERVER     0x20000000u

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static uint8_t *room(struct icf_pcap *p, size_t n)
{
	uint8_t *r;

	if (p->oom)
		return NULL;
	if (p->len + n > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;

		while (cap < p->len + n)
			cap *= 2;
		r = realloc(p->buf, cap);
		if (!r) {
			p->oom = true;
			return NULL;
		}
		p->buf = r;
		p->cap = cap;
	}
	r = p->buf + p->len;
	p->len += n;
	return r;
}

static uint32_t sum16(uint32_t s, const uint8_t *d, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)d[i] << 8 | d[i + 1];
	if (n & 1)
		s += (uint32_t)d[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)~s;
}

static void packet(struct icf_pcap *p, int from, uint8_t flags, const uint8_t *d, size_t n,
		   uint64_t ts_ns)
{
	size_t iplen = p->af == AF_INET6 ? IP6_HDR_LEN : IP4_HDR_LEN;
	size_t plen = iplen + TCP_HDR_LEN + n;
	uint8_t *r = room(p, 16 + plen), *ip, *tcp;
	int to = !from;
	uint32_t s;

	if (!r)
		return;
	put_le32(r, (uint32_t)(ts_ns / 1000000000u));
	put_le32(r + 4, (uint32_t)(ts_ns % 1000000000u / 1000u));
	put_le32(r + 8, (uint32_t)plen);
	put_le32(r + 12, (uint32_t)plen);
	ip = r + 16;
	memset(ip, 0, iplen + TCP_HDR_LEN);
	if (p->af == AF_INET6) {
		ip[0] = 0x60;
		iw_put_be16(ip + 4, (uint16_t)(TCP_HDR_LEN + n));
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, p->addr[from], 16);
		memcpy(ip + 24, p->addr[to], 16);
	} else {
		ip[0] = 0x45;
		iw_put_be16(ip + 2, (uint16_t)plen);
		ip[6] = 0x40; /* DF */
		ip[8] = 64;
		ip[9] = IPPROTO_TCP;
		memcpy(ip + 12, p->addr[from], 4);
		memcpy(ip + 16, p->addr[to], 4);
		iw_put_be16(ip + 10, fold(sum16(0, ip, IP4_HDR_LEN)));
	}
	tcp = ip + iplen;
	iw_put_be16(tcp, p->port[from]);
	iw_put_be16(tcp + 2, p->port[to]);
	iw_put_be32(tcp + 4, p->seq[from]);
	iw_put_be32(tcp + 8, (flags & IWD_TCP_ACK) ? p->seq[to] : 0);
	tcp[12] = (TCP_HDR_LEN / 4) << 4;
	tcp[13] = flags;
	iw_put_be16(tcp + 14, 65535);
	if (n)
		memcpy(tcp + TCP_HDR_LEN, d, n);
	/* the pseudo-header: addresses, protocol, TCP length */
	if (p->af == AF_INET6)
		s = sum16(0, ip + 8, 32);
	else
		s = sum16(0, ip + 12, 8);
	s += IPPROTO_TCP + (uint32_t)(TCP_HDR_LEN + n);
	s = sum16(s, tcp, TCP_HDR_LEN + n);
	iw_put_be16(tcp + 16, fold(s));
	p->seq[from] += (uint32_t)n + ((flags & (IWD_TCP_SYN | IWD_TCP_FIN)) ? 1 : 0);
}

static void addr_of(const struct sockaddr *sa, uint8_t addr[16], uint16_t *port)
{
	memset(addr, 0, 16);
	if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		memcpy(addr, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	} else if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		memcpy(addr, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
	} else {
		*port = 0;
	}
}

void icf_pcap_init(struct icf_pcap *p, const struct sockaddr *client, const struct sockaddr *server,
		   uint64_t ts_ns)
{
	uint8_t *h;

	memset(p, 0, sizeof(*p));
	p->af = client && client->sa_family == AF_INET6 ? AF_INET6 : AF_INET;
	addr_of(client, p->addr[0], &p->port[0]);
	addr_of(server, p->addr[1], &p->port[1]);
	p->seq[0] = ISN_CLIENT;
	p->seq[1] = ISN_SERVER;
	h = room(p, ICF_PCAP_HDR_LEN);
	if (!h)
		return;
	put_le32(h, 0xa1b2c3d4u);
	put_le16(h + 4, 2);
	put_le16(h + 6, 4);
	put_le32(h + 8, 0);
	put_le32(h + 12, 0);
	put_le32(h + 16, PCAP_SNAPLEN);
	put_le32(h + 20, ICF_PCAP_LINKTYPE_RAW);
	packet(p, 0, IWD_TCP_SYN, NULL, 0, ts_ns);
	packet(p, 1, IWD_TCP_SYN | IWD_TCP_ACK, NULL, 0, ts_ns);
	packet(p, 0, IWD_TCP_ACK, NULL, 0, ts_ns);
}

void icf_pcap_data(struct icf_pcap *p, int from, const uint8_t *d, size_t n, uint64_t ts_ns)
{
	from = !!from;
	while (n > 0 && !p->fin[from]) {
		size_t k = n < PCAP_CHUNK_MAX ? n : PCAP_CHUNK_MAX;

		packet(p, from, IWD_TCP_PSH | IWD_TCP_ACK, d, k, ts_ns);
		d += k;
		n -= k;
	}
}

void icf_pcap_fin(struct icf_pcap *p, int from, bool rst, uint64_t ts_ns)
{
	from = !!from;
	if (p->fin[from])
		return;
	p->fin[from] = true;
	packet(p, from, (uint8_t)((rst ? IWD_TCP_RST : IWD_TCP_FIN) | IWD_TCP_ACK), NULL, 0, ts_ns);
}

/* The record at `off` of a capture's buffer: its time in us, its length
 * (header included); false past the end. */
static bool rec_at(const struct icf_pcap *p, size_t off, uint64_t *us, size_t *len)
{
	const uint8_t *r = p->buf + off;
	uint32_t incl;

	if (off + ICF_PCAP_REC_LEN > p->len)
		return false;
	*us = (uint64_t)(r[0] | r[1] << 8 | r[2] << 16 | (uint32_t)r[3] << 24) * 1000000u +
	      (uint32_t)(r[4] | r[5] << 8 | r[6] << 16 | (uint32_t)r[7] << 24);
	incl = (uint32_t)(r[8] | r[9] << 8 | r[10] << 16 | (uint32_t)r[11] << 24);
	*len = ICF_PCAP_REC_LEN + incl;
	return off + *len <= p->len;
}

void icf_pcap_merge(struct icf_pcap *p, const struct icf_pcap *q)
{
	size_t a = ICF_PCAP_HDR_LEN, b = ICF_PCAP_HDR_LEN, la, lb, n;
	uint64_t ta, tb;
	uint8_t *out, *o;
	bool ha, hb;

	if (p->oom || q->oom || p->len < ICF_PCAP_HDR_LEN || q->len <= ICF_PCAP_HDR_LEN) {
		p->oom = p->oom || q->oom;
		return;
	}
	n = p->len + q->len - ICF_PCAP_HDR_LEN;
	out = malloc(n);
	if (!out) {
		p->oom = true;
		return;
	}
	memcpy(out, p->buf, ICF_PCAP_HDR_LEN);
	o = out + ICF_PCAP_HDR_LEN;
	ha = rec_at(p, a, &ta, &la);
	hb = rec_at(q, b, &tb, &lb);
	while (ha || hb) {
		if (ha && (!hb || ta <= tb)) {
			memcpy(o, p->buf + a, la);
			o += la;
			a += la;
			ha = rec_at(p, a, &ta, &la);
		} else {
			memcpy(o, q->buf + b, lb);
			o += lb;
			b += lb;
			hb = rec_at(q, b, &tb, &lb);
		}
	}
	free(p->buf);
	p->buf = out;
	p->len = (size_t)(o - out);
	p->cap = n;
}

int icf_pcap_write(const struct icf_pcap *p, const char *path)
{
	FILE *f;
	int ok;

	if (p->oom) {
		errno = ENOMEM;
		return -1;
	}
	f = fopen(path, "wb");
	if (!f)
		return -1;
	ok = fwrite(p->buf, 1, p->len, f) == p->len;
	if (fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

void icf_pcap_free(struct icf_pcap *p)
{
	free(p->buf);
	p->buf = NULL;
	p->len = p->cap = 0;
}
