#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_mpa_pdata.

usage: gen_mpa_pdata_seeds.py [REPO_ROOT]

Each seed is the target's configuration octet (bit 0 initiator, bit 1 MPA
revision 1, bit 2 peer-to-peer, bit 3 Markers, bits 4-7 chunk seed) and the
peer's startup stream: an MPA Request (for the responder) or Reply (for the
initiator), revision 1 or 2 with the RFC 6581 IRD/ORD word, carrying RFC 8797
private data (version 1, send/receive sizes, with and without our extension
block), foreign private data, none, too much, and frames cut short.  Run
once after a change of the target's input layout; the generated files are
committed.  It empties the corpus folder first.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seedlib import write_corpus  # noqa: E402

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
REQ = b'MPA ID Req Frame'
REP = b'MPA ID Rep Frame'
C, R, S = 0x40, 0x20, 0x10
INI, REV1, P2P, MARK = 1, 2, 4, 8


def frame(key, flags, rev, pd=b'', pdlen=None):
    n = len(pd) if pdlen is None else pdlen
    return key + bytes([flags, rev]) + n.to_bytes(2, 'big') + pd


def ird_ord(p2p=False, ird=16, ord_=16, rtr=0):
    # RFC 6581 §9.1: A (p2p) | B (zero-length Write) | IRD ; C (Send) | D (Read) | ORD
    a = 0x8000 if p2p else 0
    return struct.pack('>HH', a | (0x4000 if rtr & 1 else 0) | ird,
                       (0x8000 if rtr & 2 else 0) | (0x4000 if rtr & 4 else 0) | ord_)


def rfc8797(send_kib=4, recv_kib=4, flags=0, version=1, ext=None):
    # RFC 8797 §5.1: magic 0xf6ab0e18, version, reserved/flags, sizes as (KiB - 1)
    b = struct.pack('>IBBBB', 0xf6ab0e18, version, flags, send_kib - 1, recv_kib - 1)
    if ext is not None:
        b += struct.pack('>IBBH', 0x69775250, 1, ext, 0)
    return b


pd = rfc8797()
seeds = {
    'rsp-rev2-8797': bytes([0]) + frame(REQ, C | S, 2, ird_ord() + pd),
    'rsp-rev1-8797': bytes([REV1 | 0x30]) + frame(REQ, C, 1, pd),
    'rsp-rev2-8797-ext': bytes([0x50]) + frame(REQ, C | S, 2, ird_ord() + rfc8797(ext=1)),
    'rsp-rev2-p2p-8797': bytes([P2P]) + frame(REQ, C | S, 2, ird_ord(True, rtr=3) + pd),
    'rsp-rev2-large-sizes': bytes([0x20]) + frame(REQ, C | S, 2, ird_ord() + rfc8797(256, 256)),
    'rsp-rev2-version-2': bytes([0]) + frame(REQ, C | S, 2, ird_ord() + rfc8797(version=2)),
    'rsp-rev2-foreign-pd': bytes([0]) + frame(REQ, C | S, 2, ird_ord() + b'rping-pd'),
    'rsp-rev2-no-pd': bytes([0]) + frame(REQ, C | S, 2, ird_ord()),
    'rsp-rev1-no-pd': bytes([REV1]) + frame(REQ, C, 1),
    'rsp-rev2-pd-512': bytes([0]) + frame(REQ, C | S, 2, ird_ord() + pd + b'\0' * 500),
    'rsp-rev2-pd-513': bytes([0]) + frame(REQ, C | S, 2, ird_ord() + pd + b'\0' * 501),
    'rsp-rev2-cut': bytes([0x70]) + frame(REQ, C | S, 2, ird_ord() + pd)[:27],
    'rsp-rev2-8797-then-fpdu': bytes([MARK]) + frame(REQ, C | S, 2, ird_ord() + pd) + b'\0\x10' + b'x' * 20,
    'ini-rev2-8797': bytes([INI]) + frame(REP, C | S, 2, ird_ord() + pd),
    'ini-rev1-8797': bytes([INI | REV1]) + frame(REP, C, 1, pd),
    'ini-rev2-reject-8797': bytes([INI]) + frame(REP, C | R | S, 2, ird_ord() + pd),
    'ini-rev2-p2p': bytes([INI | P2P | 0x10]) + frame(REP, C | S, 2, ird_ord(True, rtr=1) + pd),
    'ini-rev2-ext': bytes([INI]) + frame(REP, C | S, 2, ird_ord() + rfc8797(8, 16, ext=1)),
}
write_corpus(os.path.join(root, 'fuzz', 'corpus', 'fuzz_mpa_pdata'), seeds)
