#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build (and check) the RFC 7306 known-answer vectors, test/vectors/rfc7306.json.

usage: gen_rfc7306.py [--write FILE] [--tshark TSHARK]

Every vector is a whole DDP segment (untagged DDP header + RDMAP header) laid
out field by field here with struct.pack, from the figures of RFC 7306 and
RFC 5041 §4 - not with the library's encoder, so the C test that compares the
library's encoders and decoders with these bytes compares two independent
readings of the RFC.

--tshark frames each vector as an MPA FPDU (CRC32c, no Markers) after an MPA
Request/Reply in a synthetic TCP capture and checks that Wireshark's iWARP
dissector decodes the fields we state (opcode, queue number, MSN, the
iwarp_rdma.atomic.* fields), with no malformed packet.  Exit 77 when tshark is
missing.
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

U64 = 2**64 - 1


def ddp_untagged(opcode, qn, msn, mo=0, last=True, inv=0):
    """RFC 5041 §4.3 untagged header; octet 1 is the RDMAP control octet (RV 1)."""
    return bytes([0x41 if last else 0x01, 0x40 | opcode]) + struct.pack(">IIII", inv, qn, msn, mo)


def atomic_request(msn, aop, req_id, stag, to, add_swap, add_swap_mask, compare, compare_mask):
    """RFC 7306 Atomic Request: Reserved (28 bits) + AOpCode (4), Request Identifier,
    Remote STag, Remote Tagged Offset, Add or Swap Data, Add or Swap Mask, Compare Data,
    Compare Mask; on QN 1."""
    return ddp_untagged(0xA, 1, msn) + struct.pack(">IIIQQQQQ", aop & 0xF, req_id, stag, to,
                                                   add_swap, add_swap_mask, compare,
                                                   compare_mask)


def atomic_response(msn, req_id, orig):
    """RFC 7306 Atomic Response: Original Request Identifier, Original Remote Data Value; QN 3."""
    return ddp_untagged(0xB, 3, msn) + struct.pack(">IQ", req_id, orig)


def immediate(msn, data, se=False):
    """RFC 7306 Immediate Data (with SE): 8 octets after the untagged header, QN 0."""
    return ddp_untagged(0x9 if se else 0x8, 0, msn) + struct.pack(">Q", data)


def vectors():
    v = []

    def add(name, desc, b, **expect):
        v.append({"name": name, "description": desc, "bytes_hex": b.hex(), "length": len(b),
                  "expect": expect})

    add("atomic-fetch-add", "Fetch-and-Add of 1 at STag 0x00012345, TO 0x1000, no field "
        "boundaries; compare fields unused (compare 0, mask all ones).",
        atomic_request(1, 0, 7, 0x00012345, 0x1000, 1, 0, 0, U64),
        opcode=0xA, qn=1, msn=1, aop=0, req_id=7, stag=0x00012345, to=0x1000, add_swap=1,
        add_swap_mask=0, compare=0, compare_mask=U64)
    add("atomic-cmp-swap", "Compare-and-Swap: if the word is 0x1122334455667788 put "
        "0x0102030405060708, all mask bits set; second request (MSN 2, id 8).",
        atomic_request(2, 2, 8, 0xABCDEF01, 0x7FFF0008, 0x0102030405060708, U64,
                       0x1122334455667788, U64),
        opcode=0xA, qn=1, msn=2, aop=2, req_id=8, stag=0xABCDEF01, to=0x7FFF0008,
        add_swap=0x0102030405060708, add_swap_mask=U64, compare=0x1122334455667788,
        compare_mask=U64)
    add("atomic-masked-cmp-swap", "Masked Compare-and-Swap: compare the low 32 bits only, "
        "swap the high 32 bits only.",
        atomic_request(3, 2, 0xFFFFFFFF, 0x00000101, 0, 0xDEADBEEF00000000, 0xFFFFFFFF00000000,
                       0x00000000CAFEF00D, 0x00000000FFFFFFFF),
        opcode=0xA, qn=1, msn=3, aop=2, req_id=0xFFFFFFFF, stag=0x00000101, to=0,
        add_swap=0xDEADBEEF00000000, add_swap_mask=0xFFFFFFFF00000000,
        compare=0x00000000CAFEF00D, compare_mask=0x00000000FFFFFFFF)
    add("atomic-response", "Atomic Response to request 7: original value 41.",
        atomic_response(1, 7, 41), opcode=0xB, qn=3, msn=1, req_id=7, orig=41)
    add("atomic-response-max", "Atomic Response, largest identifier and value.",
        atomic_response(0xFFFFFFFF, 0xFFFFFFFF, U64), opcode=0xB, qn=3, msn=0xFFFFFFFF,
        req_id=0xFFFFFFFF, orig=U64)
    add("immediate-data", "Immediate Data 0xA1B2C3D400000000 (an ibverbs imm_data of "
        "0xA1B2C3D4), MSN 5 on QN 0.", immediate(5, 0xA1B2C3D400000000), opcode=0x8, qn=0,
        msn=5, imm=0xA1B2C3D400000000)
    add("immediate-data-se", "Immediate Data with Solicited Event.",
        immediate(6, 0x0102030405060708, se=True), opcode=0x9, qn=0, msn=6,
        imm=0x0102030405060708)
    return v


# --------------------------------------------------------------------------
# tshark check on a synthetic capture
# --------------------------------------------------------------------------

def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def fpdu(ulpdu):
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * ((4 - len(body) % 4) % 4)
    return body + struct.pack("<I", crc32c(body))


def mpa_frame(reply):
    key = b"MPA ID Rep Frame" if reply else b"MPA ID Req Frame"
    return key + bytes([0x40, 1]) + struct.pack(">H", 0)  # C=1, rev 1, no private data


def ip_csum(h):
    s = sum(struct.unpack(">%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def packet(src, dst, sport, dport, seq, ack, payload):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, ack, 5 << 4, 0x18, 65535, 0, 0)
    total = 20 + len(tcp) + len(payload)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 1, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack(">H", ip_csum(ip)) + ip[12:]
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    return eth + ip + tcp + payload


def write_pcap(path, vecs):
    a, b = bytes([127, 0, 0, 1]), bytes([127, 0, 0, 2])
    pkts, sa, sb = [], 1000, 5000
    for d, payload in [(0, mpa_frame(False)), (1, mpa_frame(True))] + \
            [(0, fpdu(bytes.fromhex(v["bytes_hex"]))) for v in vecs]:
        if d == 0:
            pkts.append(packet(a, b, 40000, 20000, sa, sb, payload))
            sa += len(payload)
        else:
            pkts.append(packet(b, a, 20000, 40000, sb, sa, payload))
            sb += len(payload)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(pkts):
            f.write(struct.pack("<IIII", 1, i, len(p), len(p)) + p)


def pdml_fields(tshark, pcap):
    opts = ["-n", "-o", "tcp.try_heuristic_first:TRUE", "--enable-heuristic", "iwarp_mpa_tcp",
            "--disable-heuristic", "rpcrdma_iwarp", "--disable-heuristic", "smb_direct_iwarp"]
    res = subprocess.run([tshark] + opts + ["-r", pcap, "-T", "pdml"], capture_output=True,
                         check=True)
    out = []
    for pkt in ET.fromstring(res.stdout).iter("packet"):
        f = {}
        for e in pkt.iter("field"):
            n = e.get("name", "")
            if n.startswith("iwarp") or n.startswith("_ws.malformed") or n.startswith("_ws.expert"):
                f.setdefault(n, []).append(e.get("show"))
            if n == "iwarp_mpa.crc_check":
                f.setdefault("crc_text", []).append(e.get("showname") or "")
        out.append(f)
    return out


def check_tshark(tshark, vecs):
    names = {"req_id": "iwarp_rdma.atomic.request_identifier",
             "stag": "iwarp_rdma.atomic.remote_stag",
             "to": "iwarp_rdma.atomic.remote_tagged_offset",
             "compare": "iwarp_rdma.atomic.compare_data",
             "compare_mask": "iwarp_rdma.atomic.compare_mask"}
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "rfc7306.pcap")
        write_pcap(pcap, vecs)
        pk = pdml_fields(tshark, pcap)
    bad = []
    for i, v in enumerate(vecs):
        f, e = pk[2 + i], v["expect"]

        def one(name):
            return f.get(name, [None])[0]

        def num(name):
            s = one(name)
            return None if s is None else int(s, 0)
        if any(k.startswith("_ws.malformed") or k.startswith("_ws.expert") for k in f):
            bad.append("%s: malformed or an expert complaint (a bad CRC is one)" % v["name"])
        if not f.get("crc_text") or any("Good CRC32" not in t for t in f["crc_text"]):
            bad.append("%s: CRC not good: %s" % (v["name"], f.get("crc_text")))
        if num("iwarp_rdma.opcode") != e["opcode"] or num("iwarp_ddp.qn") != e["qn"] or \
                num("iwarp_ddp.msn") != e["msn"]:
            bad.append("%s: opcode/qn/msn %s/%s/%s" % (v["name"], one("iwarp_rdma.opcode"),
                                                        one("iwarp_ddp.qn"),
                                                        one("iwarp_ddp.msn")))
        if e["opcode"] == 0xA:
            if num("iwarp_rdma.atomic.opcode") != e["aop"]:
                bad.append("%s: AOpCode %s" % (v["name"], one("iwarp_rdma.atomic.opcode")))
            for k, n in names.items():
                if num(n) != e[k]:
                    bad.append("%s: %s = %s, expected %#x" % (v["name"], n, one(n), e[k]))
            dn, mn = ("add_data", "add_mask") if e["aop"] == 0 else ("swap_data", "swap_mask")
            if num("iwarp_rdma.atomic." + dn) != e["add_swap"] or \
                    num("iwarp_rdma.atomic." + mn) != e["add_swap_mask"]:
                bad.append("%s: %s/%s" % (v["name"], dn, mn))
        if e["opcode"] == 0xB:
            if num("iwarp_rdma.atomic.original_request_identifier") != e["req_id"]:
                bad.append("%s: original request identifier" % v["name"])
            # Wireshark 4.0 names the 64-bit Original Remote Data Value field
            # "Original Request Identifier" too (its field is ..original_remote_data_value).
            if num("iwarp_rdma.atomic.original_remote_data_value") != e["orig"]:
                bad.append("%s: original remote data value" % v["name"])
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write")
    ap.add_argument("--tshark")
    a = ap.parse_args()
    vecs = vectors()
    if a.write:
        doc = {"layer": "RFC 7306 (RDMAP extensions: atomics, Immediate Data)",
               "how_derived": "Laid out field by field from RFC 7306's Atomic Request, Atomic "
               "Response and Immediate Data headers and the RFC 5041 section 4.3 untagged DDP "
               "header by test/vectors/gen_rfc7306.py (struct.pack, not the library). "
               "Third-party check: gen_rfc7306.py --tshark frames each vector in an MPA FPDU "
               "of a synthetic capture and compares Wireshark 4.0.17's iwarp_rdma.atomic.*, "
               "opcode, QN and MSN fields with 'expect' (run as the rfc7306_vectors_tshark "
               "test). Integers in 'expect' are decimal.",
               "vectors": vecs}
        with open(a.write, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if a.tshark is not None:
        tshark = a.tshark or shutil.which("tshark")
        if not tshark or not os.path.exists(tshark):
            print("tshark not found")
            return 77
        bad = check_tshark(tshark, vecs)
        for b in bad:
            print("FAIL", b)
        print("%d vectors, %d problems" % (len(vecs), len(bad)))
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
