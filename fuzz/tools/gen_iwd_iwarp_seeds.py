#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_iwd_iwarp (files named by the SHA-1 of their content).

usage: gen_iwd_iwarp_seeds.py [REPO_ROOT]

Input layout (fuzz/fuzz_iwd_iwarp.c): octet 0 = mode bits (0x01 mid-stream,
0x02 mid-stream CRC, 0x04/0x08 mid-stream Markers in direction 0/1, 0x10
keep_fpdus, 0x20 max_msg 100, 0x40 port filter matching, 0x80 port filter
not matching), then records [ctl][BE16 length][octets], ctl 0x01 direction,
0x02 gap of `length` octets (no octets follow), 0x04 close the direction.

Seeds: the TCP payloads of the first NFS/RDMA connection (port 20049) of
test/captures/nfsrdma-v3.pcap, one record per segment as captured, sliced
into a few pieces (the handshake and what follows, a piece from the middle
decoded mid-stream, a piece with a gap); and streams built here with the
MPA framing of RFC 5044 (CRC32c, Markers placed as mpa/mpa_tx.c places
them): rev 1 and rev 2 handshakes with Markers either way, peer-to-peer
RTRs, a reject, every opcode, Terminates in the RFC layout and in Linux
siw's, a bad CRC, a wrong Marker, garbage, a truncated FPDU, mid-stream
slices with and without Markers, one-octet records, a connection that is
not iWARP.  Run once after changing the target's input layout; the
generated files are committed.  It empties the folder first.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seedlib  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
outdir = os.path.join(root, 'fuzz', 'corpus', 'fuzz_iwd_iwarp')
capture = os.path.join(root, 'test', 'captures', 'nfsrdma-v3.pcap')

MID, MID_CRC, MID_M0, MID_M1, KEEP, SMALL, PORT_OK, PORT_BAD = (1 << i for i in range(8))

# ---- CRC32c (RFC 3720 §12.1; reflected, init and xorout 0xFFFFFFFF) -------
_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b'123456789') == 0xE3069283


# ---- MPA (RFC 5044 §4, §7.1.1; RFC 6581 §9) --------------------------------
def frame(reply, rev=2, m=False, c=True, r=False, p2p=False, rtr=0, ird=16, ord_=16, pd=b''):
    flags = (0x80 if m else 0) | (0x40 if c else 0) | (0x20 if r else 0)
    body = b''
    if rev == 2:
        flags |= 0x10
        w1 = (0x8000 if p2p else 0) | (0x4000 if rtr & 1 else 0) | ird
        w2 = (0x8000 if rtr & 2 else 0) | (0x4000 if rtr & 4 else 0) | ord_
        body = struct.pack('>HH', w1, w2)
    body += pd
    key = b'MPA ID Rep Frame' if reply else b'MPA ID Req Frame'
    return key + bytes([flags, rev]) + struct.pack('>H', len(body)) + body


class Tx:
    """One direction's FPDU framing: pos counts octets of full operation."""

    def __init__(self, crc=True, markers=False, pos=0):
        self.crc, self.markers, self.pos = crc, markers, pos

    def fpdu(self, ulpdu):
        out = bytearray()
        hdr = None

        def marker(leading):
            if self.markers and self.pos % 512 == 0:
                ptr = 0 if leading else (self.pos - hdr) & 0xFFFF
                out.extend(struct.pack('>HH', 0, ptr))
                self.pos += 4

        marker(True)
        hdr = self.pos
        pad = (4 - (2 + len(ulpdu)) % 4) % 4
        body = struct.pack('>H', len(ulpdu)) + ulpdu + b'\0' * pad
        for x in body:
            marker(False)
            out.append(x)
            self.pos += 1
        marker(False)
        out.extend(struct.pack('<I', crc32c(out) if self.crc else 0))
        self.pos += 4
        return bytes(out)


# ---- DDP / RDMAP (RFC 5041 §4, RFC 5040 §4, RFC 7306) ----------------------
# DDP control: T 0x80, L 0x40, DV 1; RDMAP control: RV 1 << 6 | opcode
def untagged(op, qn, msn, mo=0, last=True, inv=0, payload=b''):
    return bytes([0x41 if last else 0x01, 0x40 | op]) + struct.pack('>IIII', inv, qn, msn, mo) + payload


def tagged(op, stag, to, last=True, payload=b''):
    return bytes([0xC1 if last else 0x81, 0x40 | op]) + struct.pack('>IQ', stag, to) + payload


def rreq(sink, sink_to, size, src, src_to):
    return struct.pack('>IQIIQ', sink, sink_to, size, src, src_to)


# ---- records ---------------------------------------------------------------
def rec(d, data=b'', gap=0, close=False):
    out = b''
    if gap:
        return bytes([d | 2 | (4 if close else 0)]) + struct.pack('>H', gap)
    while True:
        piece, data = data[:65535], data[65535:]
        last = not data
        out += bytes([d | (4 if close and last else 0)]) + struct.pack('>H', len(piece)) + piece
        if last:
            return out


def seed(mode, recs):
    return bytes([mode]) + b''.join(recs)


seeds = []


class Conn:
    """A scripted connection: handshake, then FPDUs per direction."""

    def __init__(self, crc=True, m0=False, m1=False, rev=2, init=0, p2p=False, rtr=0,
                 pd=(b'', b'')):
        self.recs = []
        req = frame(False, rev, m=m1 if init == 0 else m0, c=crc, p2p=p2p, rtr=7 if p2p else 0,
                    pd=pd[0])
        rep = frame(True, rev, m=m0 if init == 0 else m1, c=False, p2p=p2p, rtr=rtr, pd=pd[1])
        self.recs.append(rec(init, req))
        self.recs.append(rec(1 - init, rep))
        self.tx = [Tx(crc, m0), Tx(crc, m1)]
        self.msn = [[1, 1, 1, 1], [1, 1, 1, 1]]
        self.wire = [b'', b'']

    def send(self, d, ulpdu):
        w = self.tx[d].fpdu(ulpdu)
        self.wire[d] += w
        self.recs.append(rec(d, w))
        return w

    def msg(self, d, op, payload, seg=1400, inv=0):
        msn = self.msn[d][0]
        self.msn[d][0] += 1
        off = 0
        while True:
            p = payload[off:off + seg]
            self.send(d, untagged(op, 0, msn, off, off + len(p) == len(payload), inv, p))
            off += len(p)
            if off >= len(payload):
                return

    def write(self, d, op, stag, to, payload, seg=1400):
        off = 0
        while True:
            p = payload[off:off + seg]
            self.send(d, tagged(op, stag, to + off, off + len(p) == len(payload), p))
            off += len(p)
            if off >= len(payload):
                return

    def read(self, d, sink, size, src):
        self.send(d, untagged(1, 1, self.msn[d][1], payload=rreq(sink, 0x1000, size, src, 0x2000)))
        self.msn[d][1] += 1


def data(n, s=1):
    return bytes((s + i * 7) & 0xFF for i in range(n))


def conversation(c):
    c.msg(0, 3, data(3000))
    c.msg(1, 5, data(90, 3))
    c.write(0, 0, 0xABCD, 0x100000, data(5000, 5))
    c.read(0, 0x77, 2000, 0x99)
    c.write(1, 2, 0x77, 0x1000, data(2000, 9), seg=1200)
    c.msg(0, 4, data(17), inv=0x1234)
    c.msg(1, 3, b'')


# Handshakes and conversations: CRC on/off, Markers none / either / both.
for crc, m0, m1, rev in ((True, False, False, 2), (True, True, True, 2), (False, True, False, 1),
                         (True, False, True, 1), (False, False, False, 2)):
    c = Conn(crc, m0, m1, rev)
    conversation(c)
    seeds.append(seed(KEEP, c.recs))

# The Initiator on direction 1; RFC 8797 private data.
c = Conn(True, True, False, 2, init=1,
         pd=(bytes.fromhex('f6ab0e1801010303'), bytes.fromhex('f6ab0e1801000303')))
conversation(c)
seeds.append(seed(KEEP | SMALL, c.recs))

# Peer-to-peer with each RTR form (RFC 6581 §9.3), one with STag 0.
for form, ul in ((1, untagged(3, 0, 1)), (2, tagged(0, 1, 0)), (2, tagged(0, 0, 0)),
                 (4, untagged(1, 1, 1, payload=rreq(1, 0, 0, 1, 0)))):
    c = Conn(True, False, False, 2, p2p=True, rtr=form)
    c.send(0, ul)
    c.msn[0][1 if form == 4 else 0] = 2
    if form == 4:
        c.send(1, tagged(2, 1, 0))
    c.msg(0, 3, data(20))
    seeds.append(seed(KEEP, c.recs))

# Every opcode including RFC 7306, and Terminates both ways.
c = Conn(True, False, True, 2)
c.msg(0, 6, data(30), inv=0xFEED)
c.send(0, untagged(8, 0, 2, payload=bytes(range(8))))
c.send(0, untagged(9, 0, 3, payload=bytes(range(8, 16))))
c.send(0, untagged(10, 1, 1, payload=struct.pack('>IIIQQQQQ', 2, 7, 0x5500, 0x40, 1, ~0 & (2**64 - 1),
                                                   2, ~0 & (2**64 - 1))))
c.send(1, untagged(11, 3, 1, payload=struct.pack('>IQ', 7, 0x1122334455667788)))
errant = tagged(0, 0xBAD, 0x40, True, b'0123456789')
c.send(0, errant)
# RFC layout: RDMAP Remote Protection, Invalid STag, M and D, segment length
c.send(1, untagged(7, 2, 1, payload=bytes([0x01, 0x00, 0xC0, 0]) + struct.pack('>H', 24) +
                   errant[:14]))
seeds.append(seed(KEEP, c.recs))
c = Conn(True, False, False, 2)
c.send(0, errant)
# siw layout: EType in the high nibble, M/D (and R) in the low bits, payload length
c.send(1, untagged(7, 2, 1, payload=bytes([0x10, 0x00, 0x03, 0]) + struct.pack('>H', 10) +
                   errant[:14]))
rq = untagged(1, 1, 1, payload=rreq(0x31, 0x1000, 64, 0x4242, 0x2000))
c.send(1, untagged(7, 2, 2, payload=bytes([0x10, 0x00, 0x07, 0]) + struct.pack('>H', 0) +
                   rq[:18] + rq[18:]))
c.send(1, untagged(7, 2, 3, payload=bytes([0x02, 0x02, 0x00, 0])))
seeds.append(seed(KEEP, c.recs))

# A reject (R = 1): what follows is not MPA.
recs = [rec(0, frame(False)), rec(1, frame(True, r=True)), rec(0, b'after the reject' * 4)]
seeds.append(seed(KEEP, recs))

# A bad CRC, a wrong Marker, garbage (framing lost), a truncated end.
c = Conn(True, True, True, 2)
c.msg(0, 3, data(100))
w = bytearray(c.send(0, untagged(3, 0, 9, payload=data(600))))
w[50] ^= 0x10
c.recs[-1] = rec(0, bytes(w))
c.msg(0, 3, data(40))
seeds.append(seed(KEEP, c.recs))
c = Conn(False, True, False, 2)
w = bytearray(c.send(0, untagged(3, 0, 1, payload=data(1000))))
w[512 + 3] ^= 0x40
c.recs[-1] = rec(0, bytes(w))
c.recs.append(rec(0, b'\0' * 36))
c.tx[0].pos += 36
c.msg(0, 3, data(200))
c.msg(0, 3, data(300))
w = c.send(0, untagged(3, 0, 9, payload=data(500)))
c.recs[-1] = rec(0, w[:-77], close=True)
seeds.append(seed(KEEP, c.recs))

# Mid-stream: slices of a framed stream from odd offsets, CRC on/off, Markers.
for crc, m, skip in ((True, False, 1001), (True, True, 1537), (False, False, 77), (False, True, 2049)):
    c = Conn(crc, m, m, 2)
    conversation(c)
    recs = [rec(0, c.wire[0][skip:skip + 12000]), rec(1, c.wire[1][:6000])]
    mode = MID | KEEP | (MID_CRC if crc else 0) | (MID_M0 | MID_M1 if m else 0)
    seeds.append(seed(mode, recs))

# A gap inside an FPDU, then more.
c = Conn(True, True, False, 2)
conversation(c)
w = c.wire[0]
seeds.append(seed(KEEP, c.recs[:2] + [rec(0, w[:2000]), rec(0, gap=1500), rec(0, w[3500:9000]),
                                      rec(1, c.wire[1][:3000], close=True)]))

# One-octet records of a small handshake and Send.
c = Conn(True, True, False, 1)
c.msg(0, 3, data(30))
ones = []
d = 0
for r in c.recs:
    d, n = r[0] & 1, struct.unpack('>H', r[1:3])[0]
    ones += [rec(d, r[3 + i:4 + i]) for i in range(n)]
seeds.append(seed(KEEP | PORT_OK, ones))
seeds.append(seed(KEEP | PORT_BAD, c.recs))

# Not iWARP: ONC RPC over TCP first.
seeds.append(seed(KEEP, [rec(0, bytes.fromhex('80000028123456780000000000000002000186a3'
                                              '0000000300000000') * 3),
                         rec(1, frame(True))]))


# ---- the Linux NFS/RDMA capture ---------------------------------------------
def pcap_segments(path, port):
    """(direction, payload) of the first TCP connection with `port`, in order."""
    ends, out = None, []
    for pkt, _ in seedlib.read_pcap(path)[1]:
        if len(pkt) < 34 or pkt[12:14] != b'\x08\x00':
            continue
        ip = pkt[14:]
        ihl, tot = (ip[0] & 15) * 4, struct.unpack('>H', ip[2:4])[0]
        if ip[9] != 6:
            continue
        tcp = ip[ihl:tot]
        sp, dp = struct.unpack('>HH', tcp[:4])
        if port not in (sp, dp):
            continue
        if ends is None:
            ends = (sp, dp)
        if {sp, dp} != set(ends):
            continue
        pay = tcp[(tcp[12] >> 4) * 4:]
        if pay:
            out.append((0 if sp == ends[0] else 1, pay))
    return out


if os.path.isfile(capture):
    segs = pcap_segments(capture, 20049)
    recs = [rec(dd, p) for dd, p in segs]

    def cut(recs, limit):
        out, n = [], 0
        for r in recs:
            if n + len(r) > limit:
                break
            out.append(r)
            n += len(r)
        return out

    seeds.append(seed(KEEP, cut(recs, 24000)))
    seeds.append(seed(KEEP | SMALL, cut(recs, 2200)))
    # from the middle, mid-stream (the captures have CRC and Markers off)
    mid_part = [rec(dd, p) for dd, p in segs[20:]]
    seeds.append(seed(MID | KEEP, cut(mid_part, 60000)))
    first = [rec(dd, p[1000:] if i == 0 else p) for i, (dd, p) in enumerate(segs[6:])]
    seeds.append(seed(MID | KEEP, cut(first, 16000)))
    # the handshake, a gap of a segment, and on
    withgap = recs[:8] + [rec(segs[8][0], gap=len(segs[8][1]))] + recs[9:]
    seeds.append(seed(KEEP, cut(withgap, 30000)))
else:
    print('capture missing: no capture seeds')

n, total = seedlib.write_corpus(outdir, seeds)
print(n, 'seeds,', total, 'octets')
