#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write seed inputs for fuzz/fuzz_rdmap_rx.c (see its header comment for the format).

usage: gen_rdmap_rx_seeds.py OUTDIR
STag values 1, 2, 3 stand for the harness's remote-write, remote-read and Read-sink STags.
"""
import os
import struct
import sys


def untagged(opcode, qn, msn, mo=0, last=True, inv=0, payload=b""):
    return bytes([0x41 if last else 0x01, 0x40 | opcode]) + struct.pack(">IIII", inv, qn, msn, mo) + payload


def tagged(opcode, stag, to, last=True, payload=b""):
    return bytes([0xC1 if last else 0x81, 0x40 | opcode]) + struct.pack(">IQ", stag, to) + payload


def read_req(msn, sink_stag, sink_to, size, src_stag, src_to):
    return untagged(1, 1, msn) + struct.pack(">IQIIQ", sink_stag, sink_to, size, src_stag, src_to)


def atomic_req(msn, aop, req_id, stag, to, add_swap, add_swap_mask, compare, compare_mask):
    """RFC 7306 Atomic Request (QN 1, opcode 0xA): 52-octet header after DDP."""
    return untagged(0xA, 1, msn) + struct.pack(">IIIQQQQQ", aop, req_id, stag, to, add_swap,
                                               add_swap_mask, compare, compare_mask)


def atomic_resp(msn, req_id, orig):
    """RFC 7306 Atomic Response (QN 3, opcode 0xB)."""
    return untagged(0xB, 3, msn) + struct.pack(">IQ", req_id, orig)


def imm(msn, data, se=False):
    """RFC 7306 Immediate Data (QN 0, opcode 0x8 / 0x9 with SE): 8 octets."""
    return untagged(0x9 if se else 0x8, 0, msn) + struct.pack(">Q", data)


def records(*ulpdus):
    return b"".join(struct.pack(">H", len(u)) + u for u in ulpdus)


def raw_fpdus(*ulpdus):
    out = b""
    for u in ulpdus:
        pad = (4 - (2 + len(u)) % 4) % 4
        out += struct.pack(">H", len(u)) + u + b"\0" * pad + b"\0\0\0\0"
    return out


send1 = untagged(3, 0, 1, payload=b"hello, iwarp")
send2 = untagged(5, 0, 2, payload=b"solicited")
sendinv = untagged(4, 0, 1, inv=1, payload=b"inv")
write = tagged(0, 1, 0, payload=bytes(range(64)))
write2 = tagged(0, 1, 4000, last=False, payload=b"x" * 64)
rreq = read_req(1, 0x99, 0, 32, 2, 0x10000)
rresp = tagged(2, 3, 0, payload=b"r" * 64)
term = untagged(7, 2, 1) + bytes([0x12, 0x02, 0xC0, 0x00]) + struct.pack(">H", 118) + untagged(3, 0, 5)
seg1 = untagged(3, 0, 1, last=False, payload=b"a" * 100)
seg2 = untagged(3, 0, 1, mo=100, payload=b"b" * 50)
rtr_write = tagged(0, 1, 0)
rtr_read = read_req(1, 3, 0, 0, 0, 0)
rtr_send = untagged(3, 0, 1)

seeds = {
    "send": b"\x01" + records(send1),
    "send-se-two": b"\x01" + records(send1, send2),
    "send-inv": b"\x01" + records(sendinv),
    "write": b"\x01" + records(write, write2),
    "read-request": b"\x01" + records(rreq),
    "read-response": b"\x01" + records(send1, rresp),
    "initiator-read-response": b"\x05" + records(rresp),
    "terminate": b"\x01" + records(term),
    "two-segments": b"\x01" + records(seg1, seg2),
    "markers-send": b"\x03" + records(send1, write, rreq),
    "p2p-write-rtr": b"\x09" + records(rtr_write, send1),
    "p2p-read-rtr": b"\x19" + records(rtr_read, send1),
    "p2p-send-rtr": b"\x29" + records(rtr_send, untagged(3, 0, 2, payload=b"after")),
    "raw-send": b"\x00" + raw_fpdus(send1, write),
    "raw-markers": b"\x02" + b"\0\0\0\0" + raw_fpdus(send1),
    "bad-version": b"\x01" + records(bytes([0x42]) + send1[1:]),
    "reserved-opcode": b"\x01" + records(untagged(0xB, 0, 1)),
    "qn3": b"\x01" + records(untagged(3, 3, 1)),
    "short": b"\x01" + records(b"\x41\x43\x00"),
    # RFC 7306 (mode bit 6): Write with Immediate, Send with Immediate, atomics
    "rfc7306-write-imm": b"\x41" + records(write, imm(1, 0x1122334455667788)),
    "rfc7306-send-imm-se": b"\x41" + records(send1, imm(2, 7, se=True)),
    "rfc7306-fetch-add": b"\x41" + records(atomic_req(1, 0, 9, 1, 0, 5, 0, 0, 2**64 - 1)),
    "rfc7306-cmp-swap": b"\x41" + records(atomic_req(1, 2, 9, 1, 8, 3, 2**64 - 1, 0,
                                                      2**64 - 1),
                                           atomic_req(2, 0, 10, 1, 16, 1, 0xFF00, 0, 0)),
    "rfc7306-responses": b"\x41" + records(rresp, atomic_resp(1, 0, 1234)),
    "rfc7306-off": b"\x01" + records(atomic_req(1, 0, 9, 1, 0, 5, 0, 0, 2**64 - 1)),
}
os.makedirs(sys.argv[1], exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(data)
print(len(seeds), "seeds")
