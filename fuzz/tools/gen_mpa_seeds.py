#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of fuzz_mpa_frame and fuzz_mpa_setup.

usage: gen_mpa_seeds.py [REPO_ROOT]

Seeds are built from test/vectors/mpa.json and the siw capture: every valid
frame kind, truncations and each malformation the decoder reports.  Run once
after changing the vectors or the setup target's input layout; the generated
files are committed, this script only documents where they came from.
"""
import json
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
mpa = json.load(open(os.path.join(root, 'test/vectors/mpa.json')))
siw = bytes.fromhex(open(os.path.join(root, 'test/vectors/siw-mpa-request.hex')).read().split()[0])

frames = {v['name']: bytes.fromhex(v['bytes_hex'])
          for v in mpa['vectors'] if v['kind'] == 'request_reply_frame'}
frames['siw-request'] = siw
REQ = b'MPA ID Req Frame'
REP = b'MPA ID Rep Frame'


def frame(key, flags, rev, pd=b'', pdlen=None):
    n = len(pd) if pdlen is None else pdlen
    return key + bytes([flags, rev]) + n.to_bytes(2, 'big') + pd


def word(a=0, b=0, ird=16, c=0, d=0, ord_=16):
    return ((a << 15) | (b << 14) | ird).to_bytes(2, 'big') + ((c << 15) | (d << 14) | ord_).to_bytes(2, 'big')


def write(dirname, seeds):
    os.makedirs(dirname, exist_ok=True)
    for old in os.listdir(dirname):
        os.unlink(os.path.join(dirname, old))
    for name, data in seeds.items():
        with open(os.path.join(dirname, name), 'wb') as f:
            f.write(data)


# ---- fuzz_mpa_frame -------------------------------------------------------
fs = {}
for name, b in frames.items():
    fs['valid-' + name] = b
    if b[17] == 2:
        fs['trunc-' + name] = b[:len(b) - 1]
    fs['trailing-' + name] = b + b'\x00\x0e\xc1\x40'
fs['trunc-key-7'] = REQ[:7]
fs['trunc-hdr-18'] = frame(REQ, 0x40, 1)[:18]
fs['bad-key-octet0'] = b'X' + frame(REQ, 0x40, 1)[1:]
fs['bad-key-octet15'] = frame(REQ, 0x40, 1)[:15] + b'X' + frame(REQ, 0x40, 1)[16:]
fs['rev0'] = frame(REQ, 0x40, 0)
fs['rev3'] = frame(REP, 0x40, 3)
fs['rev255'] = frame(REQ, 0x40, 255)
fs['pdlen-513'] = frame(REQ, 0x40, 1, b'\x00' * 16, 513)
fs['pdlen-ffff'] = frame(REP, 0x40, 1, b'', 0xFFFF)
fs['s-pdlen-2'] = frame(REQ, 0x50, 2, b'\x00\x10', 2)
fs['rev1-s-bit-reserved'] = frame(REQ, 0x50, 1)
fs['reserved-bits-set'] = frame(REP, 0x2F, 2)
fs['max-rev1-512'] = frame(REQ, 0xC0, 1, bytes(range(256)) * 2)
fs['max-rev2-508'] = frame(REP, 0xF0, 2, word(1, 1, 0x3FFF, 1, 1, 0) + bytes(508))
write(os.path.join(root, 'fuzz/corpus/fuzz_mpa_frame'), fs)

# ---- fuzz_mpa_setup -------------------------------------------------------
# Octet 0: 1 responder, 2 rev2, 4 C, 8 M, 16 p2p, 32 accept_markers, 64 accept, 128 pd.
# Octet 1: RTR mask | IRD choice << 3.  Octet 2: ORD choice | timeout << 3.
# Choices: 0 1 2 3 4 16 0x3FFE 0x3FFF.
RSP, REV2, C, M, P2P, ACCM, ACC, PD = 1, 2, 4, 8, 16, 32, 64, 128
IRD16, ORD16 = 5 << 3, 5
EXPIRE, CLOSE, TXALL, ANSWER = 0xC0 | (7 << 3), 0xC1, 0xC5, 0xC3


def stream(b, chunk=64, again=False):
    out = b''
    for i in range(0, len(b), chunk):
        part = b[i:i + chunk]
        out += bytes([(len(part) - 1) | (0x40 if again else 0)]) + part
    return out


def hdr(flags, rtr=7, ird=IRD16, ord_=ORD16, timeout=31):
    return bytes([flags, rtr | ird, ord_ | (timeout << 3)])


ss = {}
std = RSP | REV2 | C | ACCM | ACC | PD
for name, b in frames.items():
    if b[9:10] == b'q':
        ss['rsp-accept-' + name] = hdr(std) + stream(b)
        ss['rsp-reject-' + name] = hdr(std & ~ACC) + stream(b)
        if name in ('siw-request', 'req-rev2-p2p-ird16-ord16-rtr-write-read'):
            ss['rsp-rev1-onebyte-' + name] = hdr(std & ~REV2) + stream(b, 1)
            ss['rsp-unexpected-' + name] = (hdr(RSP | REV2 | C | ACCM) +
                                            stream(b + b'\x00\x0e', 64, True) + b'\x01\x00\x0e')
    else:
        ss['ini-' + name] = hdr(REV2 | C | ACCM | (P2P if b'p2p' in name.encode() else 0)) + bytes([TXALL]) + stream(b)
        if b[17] == 1:
            ss['ini-rev1-' + name] = hdr(C | ACCM) + bytes([TXALL]) + stream(b, 5)
ss['rsp-markers-refused'] = hdr(RSP | REV2 | ACC) + stream(frames['req-rev1-markers-crc-pd'])
ss['rsp-p2p-read-only-ird0'] = hdr(std, 4, 0, ORD16) + stream(frame(REQ, 0x50, 2, word(1, 0, 4, 0, 1, 4)))
ss['rsp-p2p-send-only'] = hdr(std, 1) + stream(frame(REQ, 0x50, 2, word(1, 1, 4, 0, 0, 4)))
ss['rsp-timeout-wait-request'] = hdr(std, timeout=1) + stream(REQ[:8]) + bytes([EXPIRE, EXPIRE])
ss['rsp-timeout-no-answer'] = hdr(RSP | REV2 | C | ACCM, timeout=1) + stream(siw) + bytes([EXPIRE, EXPIRE, ANSWER])
ss['rsp-close-mid-frame'] = hdr(std) + stream(siw[:21]) + bytes([CLOSE])
ss['rsp-close-before-data'] = hdr(std) + bytes([CLOSE])
ss['rsp-bad-key'] = hdr(std) + stream(b'GET / HTTP/1.1\r\n')
ss['rsp-rev3'] = hdr(std) + stream(frame(REQ, 0x40, 3))
ss['rsp-pdlen-513'] = hdr(std) + stream(frame(REQ, 0x40, 1, b'', 513))
ss['ini-reject-pd'] = hdr(REV2 | C | ACCM) + bytes([TXALL]) + stream(frame(REP, 0x70, 2, word(0, 0, 4, 0, 0, 4) + b'go away'))
ss['ini-ird-too-small'] = hdr(REV2 | C | ACCM, 7, 2 << 3) + bytes([TXALL]) + stream(frame(REP, 0x50, 2, word(0, 0, 16, 0, 0, 8)))
ss['ini-no-common-rtr'] = hdr(REV2 | C | ACCM | P2P, 1) + bytes([TXALL]) + stream(frames['rep-rev2-p2p-ird16-ord8-rtr-write'])
ss['ini-reply-while-sending'] = hdr(REV2 | C | ACCM | PD) + bytes([0xC2 | (3 << 3)]) + stream(frames['rep-rev2-client-server-ird4-ord4'], 3)
ss['ini-data-before-connect-tx'] = hdr(C) + stream(frames['rep-rev1-accept'] + b'\x00\x0e\xc1\x40', 64, True) + b'\x00\x00'
ss['ini-markers-refused'] = hdr(C) + bytes([TXALL]) + stream(frame(REP, 0xC0, 1))
CONNECT, CLOCK = 0xC6, 0xC7 | (7 << 3)
ss['ini-data-before-connect'] = hdr(REV2 | C | ACCM, 7 | 0x40) + stream(b'MPA') + bytes([CONNECT])
ss['ini-late-connect-then-timeout'] = (hdr(REV2 | C | ACCM, 7 | 0x40, timeout=1) + bytes([CONNECT, TXALL, CLOCK, CLOCK]) +
                                       stream(frames['rep-rev2-client-server-ird4-ord4']))
write(os.path.join(root, 'fuzz/corpus/fuzz_mpa_setup'), ss)
print(len(fs), 'frame seeds,', len(ss), 'setup seeds')
