/* SPDX-License-Identifier: MIT */
/*
 * iwd_net.c - one captured packet -> the TCP segment in it (struct iwd_seg).
 *
 * Theory of operation: three layers peeled in turn, each checked against the
 * octets actually captured (pkt[0..caplen)) before a field is read.
 *
 *   link     how the capture framed the packet (the link types listed below,
 *            numbers as pcap files and libpcap give them); VLAN tags skipped
 *   network  IPv4 (RFC 791 §3.1) or IPv6 (RFC 8200 §3, §4): the IP length says
 *            where the datagram ends, so the link's trailing padding (Ethernet
 *            pads frames to 60 octets) never becomes TCP payload; fragments are
 *            refused (reassembling IP is not this tool's business)
 *   TCP      RFC 9293 §3.1: ports, sequence and acknowledgment numbers, flags,
 *            Data Offset checked against the segment
 *
 * Two lengths come out: `len`, the payload octets present in the capture, and
 * `wirelen`, the payload octets the IP length says were sent (more than `len`
 * when the capture's snaplen cut the packet).  A header cut by the snaplen is
 * not a segment we can use: 0.
 */
#include <string.h>
#include <sys/socket.h>

#include "iw_bytes.h"
#include "iwd.h"

/*
 * Link types (the LINKTYPE_ numbers of pcap/pcapng files, as libpcap's
 * pcap_datalink() reports them on Linux).  Not taken from <pcap.h>: this file
 * does no I/O and links without libpcap.
 */
#define IWD_DLT_NULL	   0   /* BSD loopback: 4-octet AF in the capturing host's order */
#define IWD_DLT_EN10MB	   1   /* Ethernet II, 802.1Q/802.1ad tags */
#define IWD_DLT_RAW_A	   12  /* raw IP (DLT_RAW on most systems) */
#define IWD_DLT_RAW_B	   14  /* raw IP (DLT_RAW on OpenBSD) */
#define IWD_LINKTYPE_RAW   101 /* raw IP, the file format's number */
#define IWD_DLT_LOOP	   108 /* OpenBSD loopback: 4-octet AF in network order */
#define IWD_DLT_LINUX_SLL  113 /* Linux "cooked" v1, 16-octet header */
#define IWD_LINKTYPE_IPV4  228 /* raw IPv4 */
#define IWD_LINKTYPE_IPV6  229 /* raw IPv6 */
#define IWD_DLT_LINUX_SLL2 276 /* Linux "cooked" v2, 20-octet header */

/* Address family values found in DLT_NULL/DLT_LOOP headers. */
#define IWD_BSD_AF_INET		2
#define IWD_LINUX_AF_INET6	10 /* Linux */
#define IWD_BSD_AF_INET6_BSD	24 /* NetBSD, OpenBSD */
#define IWD_BSD_AF_INET6_FREE	28 /* FreeBSD, DragonFly */
#define IWD_BSD_AF_INET6_DARWIN 30 /* macOS */

#define IWD_ETH_HLEN		14
#define IWD_VLAN_HLEN		4
#define IWD_SLL_HLEN		16
#define IWD_SLL2_HLEN		20
#define IWD_NULL_HLEN		4
#define IWD_ETH_P_IPV4		0x0800
#define IWD_ETH_P_IPV6		0x86dd
#define IWD_ETH_P_8021Q		0x8100
#define IWD_ETH_P_8021AD	0x88a8

#define IWD_IPV4_HLEN_MIN	20 /* RFC 791 §3.1: IHL >= 5 */
#define IWD_IPV6_HLEN		40 /* RFC 8200 §3 */
#define IWD_TCP_HLEN_MIN	20 /* RFC 9293 §3.1: Data Offset >= 5 */
#define IWD_IPPROTO_TCP		6

/* RFC 8200 §4 extension headers walked over; a fragment header ends the walk. */
#define IWD_IPV6_HOPOPTS  0
#define IWD_IPV6_ROUTING  43
#define IWD_IPV6_FRAGMENT 44
#define IWD_IPV6_DSTOPTS  60

/* The network layer found by the link layer. */
enum iwd_l3 { IWD_L3_NONE, IWD_L3_IPV4, IWD_L3_IPV6, IWD_L3_BY_VERSION };

static enum iwd_l3 l3_from_ethertype(uint16_t type)
{
	switch (type) {
	case IWD_ETH_P_IPV4:
		return IWD_L3_IPV4;
	case IWD_ETH_P_IPV6:
		return IWD_L3_IPV6;
	default:
		return IWD_L3_NONE;
	}
}

static enum iwd_l3 l3_from_af(uint32_t af)
{
	switch (af) {
	case IWD_BSD_AF_INET:
		return IWD_L3_IPV4;
	case IWD_LINUX_AF_INET6:
	case IWD_BSD_AF_INET6_BSD:
	case IWD_BSD_AF_INET6_FREE:
	case IWD_BSD_AF_INET6_DARWIN:
		return IWD_L3_IPV6;
	default:
		return IWD_L3_NONE;
	}
}

/*
 * The EtherType `type`, then the octets from pkt[*off]: 802.1Q and 802.1ad
 * tags (4 octets: TCI, the next EtherType) are skipped, *off moved past them.
 */
static enum iwd_l3 l3_after_tags(uint16_t type, const uint8_t *pkt, size_t caplen, size_t *off)
{
	while (type == IWD_ETH_P_8021Q || type == IWD_ETH_P_8021AD) {
		if (caplen - *off < IWD_VLAN_HLEN)
			return IWD_L3_NONE;
		type = iw_get_be16(pkt + *off + 2);
		*off += IWD_VLAN_HLEN;
	}
	return l3_from_ethertype(type);
}

/* The link header: *off = where the network header starts. */
static enum iwd_l3 link_parse(int linktype, const uint8_t *pkt, size_t caplen, size_t *off)
{
	switch (linktype) {
	case IWD_DLT_NULL:
		if (caplen < IWD_NULL_HLEN)
			return IWD_L3_NONE;
		*off = IWD_NULL_HLEN;
		/*
		 * Host order of the machine that captured, which need not be
		 * ours: every AF value is below 256, so whichever order puts
		 * it in a low octet is the one.
		 */
		if (pkt[0] == 0 && pkt[1] == 0)
			return l3_from_af(iw_get_be32(pkt));
		return l3_from_af(iw_get_le32(pkt));
	case IWD_DLT_LOOP:
		if (caplen < IWD_NULL_HLEN)
			return IWD_L3_NONE;
		*off = IWD_NULL_HLEN;
		return l3_from_af(iw_get_be32(pkt));
	case IWD_DLT_EN10MB:
		if (caplen < IWD_ETH_HLEN)
			return IWD_L3_NONE;
		*off = IWD_ETH_HLEN; /* destination and source MAC, EtherType */
		return l3_after_tags(iw_get_be16(pkt + 12), pkt, caplen, off);
	case IWD_DLT_LINUX_SLL:
		/* packet type, ARPHRD, address length, 8 octets of address, protocol */
		if (caplen < IWD_SLL_HLEN)
			return IWD_L3_NONE;
		*off = IWD_SLL_HLEN;
		return l3_after_tags(iw_get_be16(pkt + 14), pkt, caplen, off);
	case IWD_DLT_LINUX_SLL2:
		/* protocol, reserved, ifindex, ARPHRD, packet type, address length, address */
		if (caplen < IWD_SLL2_HLEN)
			return IWD_L3_NONE;
		*off = IWD_SLL2_HLEN;
		return l3_after_tags(iw_get_be16(pkt), pkt, caplen, off);
	case IWD_DLT_RAW_A:
	case IWD_DLT_RAW_B:
	case IWD_LINKTYPE_RAW:
		*off = 0;
		return IWD_L3_BY_VERSION;
	case IWD_LINKTYPE_IPV4:
		*off = 0;
		return IWD_L3_IPV4;
	case IWD_LINKTYPE_IPV6:
		*off = 0;
		return IWD_L3_IPV6;
	default:
		return IWD_L3_NONE;
	}
}

/*
 * The IP datagram at p[0..cap) (cap octets captured, wire octets sent from
 * there on).  On success *tcp is the offset of the TCP header in p, *ip_end
 * the datagram's end on the wire (from p), addresses filled in.
 */
static int ipv4_parse(const uint8_t *p, size_t cap, size_t wire, size_t *tcp, size_t *ip_end,
		      struct iwd_seg *seg)
{
	if (cap < IWD_IPV4_HLEN_MIN || p[0] >> 4 != 4)
		return 0;
	size_t ihl = (size_t)(p[0] & 0x0f) * 4;
	size_t total = iw_get_be16(p + 2);
	/* RFC 791 §3.1: More Fragments or a Fragment Offset: a fragment. */
	uint16_t frag = iw_get_be16(p + 6);
	if (ihl < IWD_IPV4_HLEN_MIN || ihl > cap || (frag & 0x3fff) != 0 || p[9] != IWD_IPPROTO_TCP)
		return 0;
	/*
	 * Total Length 0 is what a sender's capture shows for a segment the
	 * NIC splits (TSO, Linux BIG TCP): the frame's length is the datagram's.
	 */
	if (total == 0)
		total = wire;
	if (total < ihl || total > wire)
		return 0;
	seg->af = AF_INET;
	memset(seg->src, 0, sizeof(seg->src));
	memset(seg->dst, 0, sizeof(seg->dst));
	memcpy(seg->src, p + 12, 4);
	memcpy(seg->dst, p + 16, 4);
	*tcp = ihl;
	*ip_end = total;
	return 1;
}

static int ipv6_parse(const uint8_t *p, size_t cap, size_t wire, size_t *tcp, size_t *ip_end,
		      struct iwd_seg *seg)
{
	if (cap < IWD_IPV6_HLEN || p[0] >> 4 != 6)
		return 0;
	size_t total = IWD_IPV6_HLEN + (size_t)iw_get_be16(p + 4);
	/* Payload Length 0: a jumbogram (RFC 2675) or a TSO/BIG TCP segment. */
	if (total == IWD_IPV6_HLEN)
		total = wire;
	if (total > wire)
		return 0;
	uint8_t next = p[6];
	size_t off = IWD_IPV6_HLEN;
	/* RFC 8200 §4.3-§4.6: Hdr Ext Len in 8-octet units, not counting the first 8. */
	while (next == IWD_IPV6_HOPOPTS || next == IWD_IPV6_ROUTING || next == IWD_IPV6_DSTOPTS) {
		if (cap - off < 2)
			return 0;
		size_t hlen = ((size_t)p[off + 1] + 1) * 8;
		next = p[off];
		off += hlen;
		if (off > cap || off > total)
			return 0;
	}
	if (next != IWD_IPPROTO_TCP) /* a fragment (44) included: RFC 8200 §4.5 */
		return 0;
	seg->af = AF_INET6;
	memcpy(seg->src, p + 8, 16);
	memcpy(seg->dst, p + 24, 16);
	*tcp = off;
	*ip_end = total;
	return 1;
}

int iwd_net_parse(int linktype, const uint8_t *pkt, size_t caplen, size_t wirelen, uint64_t frame,
		  uint64_t ts_ns, struct iwd_seg *seg)
{
	size_t off = 0;

	if (pkt == NULL)
		return 0;
	if (wirelen < caplen)
		wirelen = caplen;
	enum iwd_l3 l3 = link_parse(linktype, pkt, caplen, &off);
	if (l3 == IWD_L3_NONE || off > caplen)
		return 0;
	const uint8_t *ip = pkt + off;
	size_t cap = caplen - off, wire = wirelen - off;
	if (l3 == IWD_L3_BY_VERSION) {
		if (cap < 1)
			return 0;
		l3 = ip[0] >> 4 == 4 ? IWD_L3_IPV4 : ip[0] >> 4 == 6 ? IWD_L3_IPV6 : IWD_L3_NONE;
	}

	size_t th, ip_end;
	int ok = 0;
	if (l3 == IWD_L3_IPV4)
		ok = ipv4_parse(ip, cap, wire, &th, &ip_end, seg);
	else if (l3 == IWD_L3_IPV6)
		ok = ipv6_parse(ip, cap, wire, &th, &ip_end, seg);
	if (!ok || ip_end - th < IWD_TCP_HLEN_MIN || cap - th < IWD_TCP_HLEN_MIN)
		return 0;

	/* RFC 9293 §3.1: Data Offset counts 32-bit words, the options included. */
	const uint8_t *tcp = ip + th;
	size_t doff = (size_t)(tcp[12] >> 4) * 4;
	if (doff < IWD_TCP_HLEN_MIN || doff > ip_end - th || doff > cap - th)
		return 0;
	size_t data = th + doff;
	size_t present = (ip_end < cap ? ip_end : cap) - data;
	if (ip_end - data > UINT32_MAX)
		return 0;

	seg->frame = frame;
	seg->ts_ns = ts_ns;
	seg->sport = iw_get_be16(tcp);
	seg->dport = iw_get_be16(tcp + 2);
	seg->seq = iw_get_be32(tcp + 4);
	seg->ack = iw_get_be32(tcp + 8);
	seg->flags =
		tcp[13] & (IWD_TCP_FIN | IWD_TCP_SYN | IWD_TCP_RST | IWD_TCP_PSH | IWD_TCP_ACK);
	seg->payload = ip + data;
	seg->len = (uint32_t)present;
	seg->wirelen = (uint32_t)(ip_end - data);
	return 1;
}
