#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_iwd_tcp.

usage: gen_iwd_tcp_seeds.py [REPO_ROOT]

Input layout of the target: octet 0 selects the link type (index into
link_types[] of fuzz/fuzz_iwd_tcp.c: 0 NULL, 1 EN10MB, 2 RAW (12), 3 RAW (14),
4 RAW (101), 5 LOOP, 6 LINUX_SLL, 7 IPV4, 8 IPV6, 9 LINUX_SLL2), then records
of [2-octet big-endian length][packet]; the length's top bit marks a packet
the capture cut (wire length larger than what is present).
Seeds: slices of the captures in test/captures (classic pcap, Ethernet; Linux
NFS/RDMA and rping over siw).  From each capture: its first short connection
(portmapper, MOUNT, or a whole small capture) in order and ending in an RST,
two short ones interleaved, and the first 30 and last 20 packets of its first
long connection (MPA Request/Reply, first FPDUs; FINs), those 30 also
reordered, with duplicates, and cut by a 96-octet snaplen.  One short
connection re-framed for every other link type (loopback in both byte
orders, raw IP, Linux cooked v1/v2, IPv4/IPv6 link types, 802.1Q and 802.1ad
tags, Ethernet padding) and as IPv6 with and without extension headers.
Large packets (the GSO super-packets of loopback) are cut to 1600 octets
except in one seed.  Files are named after what they hold.  Run once after
changing the target's input layout or the captures; the generated files are
committed, this script only documents where they came from.  It empties the
corpus folder first.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seedlib  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
captures = os.path.join(root, 'test', 'captures')
outdir = os.path.join(root, 'fuzz', 'corpus', 'fuzz_iwd_tcp')

NULL, EN10MB, RAW12, RAW14, RAW101, LOOP, SLL, IPV4, IPV6, SLL2 = range(10)
CUT = 0x8000
BIG = 1600  # large packets are cut to this many octets


def read_pcap(path):
    """(frame octets, wire length) of every packet of an Ethernet capture."""
    linktype, pkts = seedlib.read_pcap(path)
    if linktype != 1:
        raise SystemExit('%s: not Ethernet' % path)
    return pkts


def ports(frame):
    """(sport, dport) of an Ethernet/IPv4/TCP frame, or None."""
    if len(frame) < 34 or frame[12:14] != b'\x08\x00' or frame[23] != 6:
        return None
    ihl = (frame[14] & 15) * 4
    return struct.unpack('>HH', frame[14 + ihl:18 + ihl])


def conn_of(frame):
    p = ports(frame)
    return tuple(sorted(p)) if p else None


def ipv4_of(frame):
    """The IPv4 datagram of an Ethernet frame, without the link's padding."""
    ip = frame[14:]
    return ip[:struct.unpack('>H', ip[2:4])[0]]


def to_ipv6(ip4, ext=True):
    """The same TCP segment over IPv6 (2001:db8::a:2:f, ports kept), with a
    hop-by-hop and a destination options header when ext."""
    ihl = (ip4[0] & 15) * 4
    tcp = bytearray(ip4[ihl:])
    tcp[16:18] = b'\0\0'  # checksum: not checked by the target
    src = dst = bytes.fromhex('20010db8000000000000000a0002000f')
    if ext:
        hbh = bytes([60, 0]) + bytes([1, 4, 0, 0, 0, 0])  # PadN
        dopt = bytes([6, 0]) + bytes([1, 4, 0, 0, 0, 0])
        body = hbh + dopt + bytes(tcp)
        nh = 0
    else:
        body = bytes(tcp)
        nh = 6
    return struct.pack('>IHBB', 0x60000000, len(body), nh, 64) + src + dst + body


def frame_as(link, frame):
    """Re-frame an Ethernet/IPv4 frame for another link type."""
    ip = ipv4_of(frame)
    if link == NULL:
        return struct.pack('<I', 2) + ip
    if link == LOOP:
        return struct.pack('>I', 2) + ip
    if link in (RAW12, RAW14, RAW101, IPV4):
        return ip
    if link == IPV6:
        return to_ipv6(ip)
    if link == SLL:
        return struct.pack('>HHH', 0, 772, 6) + bytes(8) + b'\x08\x00' + ip
    if link == SLL2:
        return struct.pack('>HHIHBB', 0x0800, 0, 1, 772, 0, 6) + bytes(8) + ip
    return frame


def reframe(fn, pkts):
    """fn over the frames; the wire length follows the octets added or taken."""
    return [(fn(f), w - len(f) + len(fn(f))) for f, w in pkts]


def vlan(frame, tags=(0x8100,)):
    out = frame[:12]
    for i, t in enumerate(tags):
        out += struct.pack('>HH', t, 100 + i)
    return out + frame[12:]


def pad(frame):
    return frame + bytes(max(0, 60 - len(frame)))


def record(pkt, wire, limit=BIG):
    """One record: [length | CUT][packet], cut to `limit` octets."""
    cut = wire > len(pkt) or len(pkt) > limit
    pkt = pkt[:min(limit, 0x7fff)]
    return struct.pack('>H', len(pkt) | (CUT if cut else 0)) + pkt


def seed(link, pkts, limit=BIG):
    return bytes([link]) + b''.join(record(p, w, limit) for p, w in pkts)


def rst(pkts):
    """The slice with its last packet turned into an RST."""
    f, w = pkts[-1]
    ihl = (f[14] & 15) * 4
    f = bytearray(f)
    f[14 + ihl + 13] = 0x14  # RST, ACK
    return pkts[:-1] + [(bytes(f), w)]


seeds = {}
first_small = None
for name in sorted(os.listdir(captures)):
    if not name.endswith('.pcap'):
        continue
    tag = name[:-5].replace('nfsrdma-', '')
    pkts = [p for p in read_pcap(os.path.join(captures, name)) if conn_of(p[0])]
    by_conn = {}
    for p in pkts:
        by_conn.setdefault(conn_of(p[0]), []).append(p)
    small = [c for c in by_conn.values() if len(c) <= 16]
    large = [c for c in by_conn.values() if len(c) > 16]
    rng = random.Random(name)

    if small:
        s = small[0]
        first_small = first_small or s
        seeds[tag + '-short-conn'] = seed(EN10MB, s)
        seeds[tag + '-short-conn-rst'] = seed(EN10MB, rst(s[:len(s) // 2 + 1]))
    if len(small) >= 3:
        seeds[tag + '-short-conns-interleaved'] = seed(EN10MB, sorted(
            small[1] + small[2], key=lambda p: rng.random()))
    if large:
        c = large[0]
        head = c[:30]
        seeds[tag + '-start'] = seed(EN10MB, head)
        seeds[tag + '-end'] = seed(EN10MB, c[-20:])
        shuffled = list(head)
        for i in range(0, len(shuffled) - 3, 4):
            shuffled[i:i + 4] = rng.sample(shuffled[i:i + 4], 4)
        seeds[tag + '-reordered'] = seed(EN10MB, shuffled)
        dup = []
        for p in head:
            dup.append(p)
            if rng.random() < 0.3:
                dup.append(p)
        seeds[tag + '-duplicated'] = seed(EN10MB, dup)
        seeds[tag + '-snaplen-96'] = seed(EN10MB, head, limit=96)
        big = [p for p in c if len(p[0]) > BIG][:3]
        if big and 'large-packets' not in seeds:
            # large packets kept whole (up to the 15-bit record length)
            seeds['large-packets'] = seed(EN10MB, c[:12] + big, limit=0x7fff)

# every other link type, from the first short connection found
short = first_small
seeds['link-en10mb-padded'] = seed(EN10MB, [(pad(f), max(w, 60)) for f, w in short])
for link, lname in ((NULL, 'null'), (RAW12, 'raw12'), (RAW14, 'raw14'), (RAW101, 'raw101'),
                    (LOOP, 'loop'), (SLL, 'sll'), (IPV4, 'ipv4'), (IPV6, 'ipv6-ext'),
                    (SLL2, 'sll2')):
    seeds['link-' + lname] = seed(link, reframe(lambda f: frame_as(link, f), short))
seeds['link-null-big-endian'] = seed(NULL, reframe(lambda f: struct.pack('>I', 2) + ipv4_of(f),
                                                   short))
seeds['link-raw-ipv6-plain'] = seed(RAW101, reframe(lambda f: to_ipv6(ipv4_of(f), False), short))
seeds['link-en10mb-ipv6'] = seed(EN10MB, reframe(lambda f: f[:12] + b'\x86\xdd' +
                                                 to_ipv6(ipv4_of(f)), short))
seeds['link-en10mb-8021q'] = seed(EN10MB, reframe(vlan, short))
seeds['link-en10mb-qinq'] = seed(EN10MB, reframe(lambda f: vlan(f, (0x88a8, 0x8100)), short))

n, total = seedlib.write_corpus(outdir, seeds)
print('%d seeds, %d octets' % (n, total))
