#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent decoder check of RFC 7306 on the wire: iwperf's atomics and
RDMA Writes with Immediate Data over loopback, read by tshark.

verbs_tshark.py does this for the RFC 5040 operations; this script does it
for the extensions, through `iwperf --op atomic` (Fetch-and-Add and
Compare-and-Swap, a handful each) and `iwperf --op write-imm`, with CRC on
and off, and for the atomics one ping-pong run with Markers both ways.  All
of it is captured by one `tshark -i lo`, each session on a port of its own,
then read twice: by tshark (PDML, the options of mpa_tshark.DECODE_OPTS) and
by the RFC 5044 reader of mpa_tshark.py (Markers, CRC32c) over the raw TCP
payload of each direction.

Per session, with nothing taken from iwperf's own account of itself:
  * the HELLO in the MPA Request's private data names the operation (4
    Fetch-and-Add, 5 Compare-and-Swap, 6 Write with Immediate; atomics of 8
    octets); the WELCOME in the MPA Reply's gives the server's buffer (the
    atomics' word): its STag and address are what the requests must carry;
  * tshark: no malformed packet, no expert error, no expert warning in the
    iWARP layers; every FPDU with a good CRC32 when CRC is on, none checked
    when it is off; its FPDUs are the reader's, field for field: DDP (tagged
    flag, last flag, QN, MSN, MO; STag and tagged offset) and RDMAP opcode,
    and every Atomic Request and Response field it shows against the octets
    the reader finds at that place (RFC 7306 §4.1 and §4.2);
  * c>s: Atomic Requests (opcode 0xa) on QN 1 with consecutive MSNs from 1,
    AOpCode 0 (FetchAdd) or 2 (CmpSwap), Request Identifiers incrementing by
    one, the WELCOME's STag and address, Add Data 1 (FetchAdd), Compare Data
    n and Swap Data n + 1 for the nth (CmpSwap: iwperf compares with what the
    word holds if every earlier one succeeded); then DONE, a Send on QN 0;
  * s>c: Atomic Responses (opcode 0xb) on QN 3, consecutive MSNs, each with
    the Original Request Identifier of the request of the same place and the
    Original Remote Data Value n for the nth (the word starts at 0 and only
    this connection's atomics touch it); then RESULT;
  * write-imm, c>s: per message an RDMA Write (tagged, opcode 0) of --size
    octets into the WELCOME's buffer, slot after slot, and right after its
    last segment an Immediate Data message (opcode 0x8) on QN 0 with the next
    MSN from 1 and 8 octets: the message number, big-endian, then 4 zero
    octets (ibverbs' 32-bit imm_data in network order); then DONE with the
    next MSN; s>c: CREDIT Sends and RESULT, QN 0, consecutive MSNs;
  * iwperf's --json agrees (operations, octets, no failed compare), and the
    server's line gives the word's final value.

Wireshark 4.0 limits (packet-iwarp-ddp-rdmap.c), and how this test deals
with them:
  * Opcode 0x8, Immediate Data, is "Unknown" to it, and it shows none of the
    8 octets of an Immediate Data message: the opcode, QN, MSN and length are
    checked from its decode, the Immediate Data from the reader's octets.
  * Its Atomic Response decode has two slips: the 8-octet Original Remote
    Data Value (iwarp_rdma.atomic.original_remote_data_value) is registered
    under the label of the field before it, "Original Request Identifier",
    and after it the dissector advances by 4 octets instead of 8, so it takes
    the header for 8 octets where RFC 7306 §4.2 has 12.  Nothing follows an
    Atomic Response header, so no payload is misread, and the field itself is
    read at the right place with the right width: the test checks its value
    (not its label) against the octets at offsets 4..12 of the header, and
    that it is each request's original, as strictly as any other field.
  * With Markers (either side asking), see verbs_tshark.py: tshark frames
    only FPDUs alone in their TCP segments, and assumes Markers both ways.
    The Markers run is therefore a ping-pong with Markers both ways (one
    FPDU in flight at a time), and tshark must frame every FPDU of it.
Exit status: 0 all sessions passed, 1 a failure, 77 tshark missing.
"""

import argparse
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpa_tshark as mt  # noqa: E402
import verbs_tshark as vt  # noqa: E402

SKIP = 77
DDP_T, DDP_U = mt.DDP_TAGGED_HDR, mt.DDP_UNTAGGED_HDR
OP_WRITE, OP_SEND, OP_IMM, OP_AREQ, OP_ARESP = 0x0, 0x3, 0x8, 0xA, 0xB
ATOMIC_REQ_LEN, ATOMIC_RESP_LEN, IMM_LEN = 52, 12, 8
HELLO_OP = {"fadd": 4, "cswap": 5, "write-imm": 6}
AOP = {"fadd": 0, "cswap": 2}
PERF_CTRL = 40


class Run:
    def __init__(self, kind, crc=True, markers=False, iters=6, depth=2, size=8, pingpong=False):
        self.kind, self.crc, self.markers = kind, crc, markers
        self.iters, self.depth, self.size, self.pingpong = iters, depth, size, pingpong
        self.port, self.err, self.log, self.json, self.server_out = None, None, [], None, ""

    @property
    def name(self):
        s = "atomic %s" % self.kind if self.kind in AOP else "write-imm --size %d" % self.size
        s += " crc=%s" % ("on" if self.crc else "off")
        if self.markers:
            s += " markers=both"
        return s + (" --pingpong" if self.pingpong else " --depth %d" % self.depth)

    def client_args(self):
        a = ["--op", "atomic", "--atomic", self.kind] if self.kind in AOP else \
            ["--op", "write-imm", "--size", str(self.size)]
        a += ["--pingpong"] if self.pingpong else ["--depth", str(self.depth)]
        return a + ["--iters", str(self.iters), "--verify", "--json"]

    def iw_opts(self):
        return ["--crc", "on" if self.crc else "off", "--markers", "on" if self.markers else "off"]


def plan():
    return [
        Run("fadd"), Run("cswap"),
        Run("fadd", crc=False), Run("cswap", crc=False, depth=4),
        Run("fadd", markers=True, pingpong=True, iters=4),
        Run("cswap", markers=True, pingpong=True, iters=4),
        Run("write-imm", size=1000, iters=5),
        Run("write-imm", size=100000, iters=3, crc=False),  # Writes of two FPDUs
    ]


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

def run_session(run, iwperf, workdir, engine):
    srv = [iwperf, "-s", "-a", "127.0.0.1", "-p", str(run.port)] + run.iw_opts()
    cli = [iwperf, "-c", "127.0.0.1", "-p", str(run.port)] + run.client_args() + run.iw_opts()
    if engine:
        srv += ["--engine", engine]
        cli += ["--engine", engine]
    sout = os.path.join(workdir, "server-%d.out" % run.port)
    run.log.append("$ " + " ".join(srv))
    with open(sout, "w") as so:
        sp = subprocess.Popen(srv, stdout=so, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while not vt.listening(run.port):
            if sp.poll() is not None or time.monotonic() > deadline:
                run.err = "the server did not start listening"
                return
            time.sleep(0.01)
        run.log.append("$ " + " ".join(cli))
        try:
            cp = subprocess.run(cli, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            run.err = "the client timed out"
            return
        run.log += (cp.stdout + cp.stderr).splitlines()[-8:]
        sp.send_signal(signal.SIGINT)
        try:
            srv_rc = sp.wait(30)
        except subprocess.TimeoutExpired:
            srv_rc = None
        if cp.returncode != 0 or srv_rc != 0:
            run.err = "client exit %d, server %s" % (
                cp.returncode, "hung" if srv_rc is None else "exit %d" % srv_rc)
            return
        lines = [l for l in cp.stdout.splitlines() if l.startswith("{")]
        run.json = json.loads(lines[-1]) if lines else None
    finally:
        if sp.poll() is None:
            sp.kill()
            sp.wait()
        run.server_out = "\n".join(vt.tail(sout, 50))
        run.log.append("server:")
        run.log += vt.tail(sout)


# --------------------------------------------------------------------------
# tshark's FPDUs, with every DDP/RDMAP field it shows
# --------------------------------------------------------------------------

class Fpdus:
    """on_packet hook: per (server port, direction) tshark's FPDUs in order."""

    def __init__(self, ports):
        self.ports, self.found = ports, {}

    def __call__(self, pkt):
        src, dst = mt.field_show(pkt, "tcp.srcport"), mt.field_show(pkt, "tcp.dstport")
        if src is None or dst is None:
            return
        src, dst = int(src), int(dst)
        key = (src, "r2i") if src in self.ports else (dst, "i2r") if dst in self.ports else None
        if not key:
            return
        frame, seq = mt.field_show(pkt, "frame.number"), mt.field_show(pkt, "tcp.seq")
        protos = list(pkt.findall("proto"))
        for i, p in enumerate(protos):
            if p.get("name") != "iwarp_mpa":
                continue
            names = [f.get("name") for f in p.iter("field")]
            if "iwarp_mpa.fpdu" not in names:
                continue
            fp = {"frame": frame, "seq": seq, "fields": {},
                  "crc_check": [f.get("showname") or "" for f in p.iter("field")
                                if f.get("name") == "iwarp_mpa.crc_check"],
                  "crc_plain": "iwarp_mpa.crc" in names,
                  "ulen": int(mt.field_show(p, "iwarp_mpa.ulpdulength") or -1)}
            if i + 1 < len(protos) and protos[i + 1].get("name") == "iwarp_ddp_rdmap":
                for f in protos[i + 1].iter("field"):
                    nm = f.get("name") or ""
                    if nm.startswith("iwarp_") and nm not in fp["fields"]:
                        fp["fields"][nm] = f.get("show")
            self.found.setdefault(key, []).append(fp)


def tshark_fpdus(fpdus):
    """Each FPDU once (a retransmitted segment decodes again)."""
    out, seen, nth = [], set(), {}
    for fp in fpdus:
        nth[fp["frame"]] = nth.get(fp["frame"], 0) + 1
        ident = (fp["seq"], nth[fp["frame"]])
        if ident not in seen:
            seen.add(ident)
            out.append(fp)
    return out


def num(v):
    return None if v is None else int(v, 0)


# --------------------------------------------------------------------------
# The reader's FPDUs (RFC 5040/5041/7306 parsed here), and the comparison
# --------------------------------------------------------------------------

def parse_ulpdu(u):
    """One DDP segment as a dict of the fields tshark names."""
    if len(u) < 2:
        return {"short": len(u)}
    d = {"iwarp_ddp.tagged_flag": u[0] >> 7 & 1, "iwarp_ddp.last_flag": u[0] >> 6 & 1,
         "iwarp_rdma.opcode": u[1] & 0x0F}
    if u[0] & 0x80:
        if len(u) < DDP_T:
            return {"short": len(u)}
        d["iwarp_ddp.stag"], d["iwarp_ddp.tagged_offset"] = struct.unpack(">IQ", u[2:14])
        d["payload"] = u[DDP_T:]
        return d
    if len(u) < DDP_U:
        return {"short": len(u)}
    d["iwarp_ddp.qn"], d["iwarp_ddp.msn"], d["iwarp_ddp.mo"] = struct.unpack(">III", u[6:18])
    p = d["payload"] = u[DDP_U:]
    if d["iwarp_rdma.opcode"] == OP_AREQ and len(p) == ATOMIC_REQ_LEN:
        w0, rid, stag, to, asd, asm, cd, cm = struct.unpack(">IIIQQQQQ", p)
        d.update({"iwarp_rdma.atomic.opcode": w0 & 0xF,
                  "iwarp_rdma.atomic.reserved": w0 >> 4,
                  "iwarp_rdma.atomic.request_identifier": rid,
                  "iwarp_rdma.atomic.remote_stag": stag,
                  "iwarp_rdma.atomic.remote_tagged_offset": to,
                  "add_swap": asd, "add_swap_mask": asm, "compare": cd, "compare_mask": cm})
        if w0 & 0xF == AOP["fadd"]:
            d["iwarp_rdma.atomic.add_data"], d["iwarp_rdma.atomic.add_mask"] = asd, asm
        else:
            d["iwarp_rdma.atomic.swap_data"], d["iwarp_rdma.atomic.swap_mask"] = asd, asm
        d["iwarp_rdma.atomic.compare_data"], d["iwarp_rdma.atomic.compare_mask"] = cd, cm
    if d["iwarp_rdma.opcode"] == OP_ARESP and len(p) == ATOMIC_RESP_LEN:
        rid, orig = struct.unpack(">IQ", p)
        d["iwarp_rdma.atomic.original_request_identifier"] = rid
        # Wireshark 4.0 labels this one "Original Request Identifier" too (see the top)
        d["iwarp_rdma.atomic.original_remote_data_value"] = orig
    return d


COMPARED = ("iwarp_ddp.tagged_flag", "iwarp_ddp.last_flag", "iwarp_rdma.opcode",
            "iwarp_ddp.qn", "iwarp_ddp.msn", "iwarp_ddp.mo", "iwarp_ddp.stag",
            "iwarp_ddp.tagged_offset")


def compare(d, rdr, fps, crc, bad):
    """tshark's FPDUs must be the reader's, field for field."""
    if len(fps) != len(rdr):
        bad.append("%s: tshark decoded %d FPDUs, the RFC 5044 reader found %d" %
                   (d, len(fps), len(rdr)))
    for i, (fp, r) in enumerate(zip(fps, rdr)):
        where = "%s: frame %s (FPDU %d)" % (d, fp["frame"], i)
        if crc and not (fp["crc_check"] and all("Good CRC32" in t for t in fp["crc_check"])):
            bad.append("%s: CRC not good: %s" % (where, fp["crc_check"] or "none"))
        if not crc and (fp["crc_check"] or not fp["crc_plain"]):
            bad.append("%s: CRC checked although CRC is off" % where)
        if fp["ulen"] != r["ulen"]:
            bad.append("%s: ULPDU length %d, the reader has %d" % (where, fp["ulen"], r["ulen"]))
        f = fp["fields"]
        names = [n for n in COMPARED if n in r] + \
            [n for n in r if n.startswith("iwarp_rdma.atomic.")]
        for n in names:
            if num(f.get(n)) != r[n]:
                bad.append("%s: tshark's %s is %s, the octets say %s" % (where, n, f.get(n), r[n]))
        if len(bad) > 12:
            return


# --------------------------------------------------------------------------
# What the session must have put on the wire
# --------------------------------------------------------------------------

def private_data(stream, key):
    """The MPA Request/Reply's private data (rev 2: after the IRD/ORD word)."""
    fr, n = mt.parse_frame(stream, key)
    pd = stream[20:n]
    return fr, pd[4:] if fr["rev"] == 2 and len(pd) == 68 else pd


def check_atomic(run, c2s, s2c, hello, welcome, bad):
    kind, n = run.kind, run.iters
    addr, length, rkey = struct.unpack(">QQI", welcome[8:28])
    if hello[5] != HELLO_OP[kind] or struct.unpack(">I", hello[8:12])[0] != 8:
        bad.append("HELLO op %d size %d, want %d and 8" % (
            hello[5], struct.unpack(">I", hello[8:12])[0], HELLO_OP[kind]))
    if length < 8 or not rkey:
        bad.append("the WELCOME offers no word (length %d, STag %#x)" % (length, rkey))
    reqs = [r for r in c2s if r.get("iwarp_rdma.opcode") == OP_AREQ]
    resps = [r for r in s2c if r.get("iwarp_rdma.opcode") == OP_ARESP]
    want_c = [OP_AREQ] * n + [OP_SEND]
    want_s = [OP_ARESP] * n + [OP_SEND]
    for d, got, want in (("c>s", c2s, want_c), ("s>c", s2c, want_s)):
        ops = [r.get("iwarp_rdma.opcode") for r in got]
        if ops != want:
            bad.append("%s: opcodes %s, want %s" % (d, ops, want))
    if len(reqs) != n or len(resps) != n:
        return
    rid0 = reqs[0]["iwarp_rdma.atomic.request_identifier"]
    for i, (q, a) in enumerate(zip(reqs, resps)):
        want = {"iwarp_ddp.qn": 1, "iwarp_ddp.msn": 1 + i, "iwarp_ddp.mo": 0,
                "iwarp_ddp.last_flag": 1,
                "iwarp_rdma.atomic.opcode": AOP[kind],
                "iwarp_rdma.atomic.reserved": 0,
                "iwarp_rdma.atomic.request_identifier": (rid0 + i) & 0xFFFFFFFF,
                "iwarp_rdma.atomic.remote_stag": rkey,
                "iwarp_rdma.atomic.remote_tagged_offset": addr}
        if kind == "fadd":
            want["iwarp_rdma.atomic.add_data"] = 1
        else:
            want["iwarp_rdma.atomic.compare_data"] = i
            want["iwarp_rdma.atomic.swap_data"] = i + 1
        diff = ["%s %s (want %s)" % (k, q.get(k), v) for k, v in want.items() if q.get(k) != v]
        if diff:
            bad.append("Atomic Request %d: %s" % (i, ", ".join(diff)))
        want = {"iwarp_ddp.qn": 3, "iwarp_ddp.msn": 1 + i, "iwarp_ddp.mo": 0,
                "iwarp_ddp.last_flag": 1,
                "iwarp_rdma.atomic.original_request_identifier":
                    q["iwarp_rdma.atomic.request_identifier"],
                "iwarp_rdma.atomic.original_remote_data_value": i}
        diff = ["%s %s (want %s)" % (k, a.get(k), v) for k, v in want.items() if a.get(k) != v]
        if diff:
            bad.append("Atomic Response %d: %s" % (i, ", ".join(diff)))
    for d, msgs in (("c>s DONE", c2s[-1:]), ("s>c RESULT", s2c[-1:])):
        m = msgs[0]
        if (m.get("iwarp_ddp.qn"), m.get("iwarp_ddp.msn"), len(m.get("payload", b""))) != \
                (0, 1, PERF_CTRL):
            bad.append("%s: QN %s MSN %s, %d octets (want QN 0, MSN 1, %d)" % (
                d, m.get("iwarp_ddp.qn"), m.get("iwarp_ddp.msn"), len(m.get("payload", b"")),
                PERF_CTRL))
    r = run.json or {}
    want = {"op": "atomic-" + kind, "iters": n, "bytes": 8 * n}
    if kind == "cswap":
        want["cswap_failed"] = 0
    diff = ["%s %r (want %r)" % (k, r.get(k), v) for k, v in want.items() if r.get(k) != v]
    if diff:
        bad.append("iwperf --json: " + ", ".join(diff))
    if not re.search(r"atomic-%s( ping-pong)? 8 B, QP 1/1: target word %d, ok" % (kind, n),
                     run.server_out):
        bad.append("the server does not report its word as %d" % n)


def check_write_imm(run, c2s, s2c, hello, welcome, bad):
    n, size = run.iters, run.size
    addr, length, rkey = struct.unpack(">QQI", welcome[8:28])
    if hello[5] != HELLO_OP["write-imm"]:
        bad.append("HELLO op %d, want %d" % (hello[5], HELLO_OP["write-imm"]))
    slots = length // size if size else 0
    if not slots or not rkey:
        bad.append("the WELCOME offers no buffer (length %d, STag %#x)" % (length, rkey))
        return
    i, msn = 0, 1
    for m in range(n):
        off = 0
        while i < len(c2s) and c2s[i].get("iwarp_rdma.opcode") == OP_WRITE and \
                c2s[i].get("iwarp_ddp.tagged_flag") == 1:
            s = c2s[i]
            want_to = addr + (m % slots) * size + off
            if s["iwarp_ddp.stag"] != rkey or s["iwarp_ddp.tagged_offset"] != want_to:
                bad.append("message %d: Write segment at STag %#x TO %#x, want %#x %#x" % (
                    m, s["iwarp_ddp.stag"], s["iwarp_ddp.tagged_offset"], rkey, want_to))
            off += len(s["payload"])
            i += 1
            if s["iwarp_ddp.last_flag"]:
                break
        if off != size:
            bad.append("message %d: the RDMA Write carries %d octets, want %d" % (m, off, size))
            return
        if i >= len(c2s) or c2s[i].get("iwarp_rdma.opcode") != OP_IMM:
            bad.append("message %d: no Immediate Data right after its RDMA Write" % m)
            return
        im = c2s[i]
        want = {"iwarp_ddp.tagged_flag": 0, "iwarp_ddp.last_flag": 1, "iwarp_ddp.qn": 0,
                "iwarp_ddp.msn": msn, "iwarp_ddp.mo": 0}
        diff = ["%s %s (want %s)" % (k, im.get(k), v) for k, v in want.items()
                if im.get(k) != v]
        if im.get("payload") != struct.pack(">II", m, 0):
            diff.append("Immediate Data %s (want %s)" % (
                im.get("payload", b"").hex(), struct.pack(">II", m, 0).hex()))
        if diff:
            bad.append("message %d: Immediate Data message: %s" % (m, ", ".join(diff)))
        i, msn = i + 1, msn + 1
    rest = c2s[i:]
    if len(rest) != 1 or rest[0].get("iwarp_rdma.opcode") != OP_SEND or \
            rest[0].get("iwarp_ddp.msn") != msn or len(rest[0]["payload"]) != PERF_CTRL:
        bad.append("c>s after the messages: %s, want DONE (a %d-octet Send, MSN %d)" % (
            [(r.get("iwarp_rdma.opcode"), r.get("iwarp_ddp.msn")) for r in rest], PERF_CTRL, msn))
    want_s = vt.perf_credits(n, run.depth, size) + 1
    ops = [(r.get("iwarp_rdma.opcode"), r.get("iwarp_ddp.qn"), r.get("iwarp_ddp.msn"),
            len(r.get("payload", b""))) for r in s2c]
    if ops != [(OP_SEND, 0, k + 1, PERF_CTRL) for k in range(want_s)]:
        bad.append("s>c: %s, want %d Sends of %d octets (CREDITs, RESULT) on QN 0" % (
            ops, want_s, PERF_CTRL))
    r = run.json or {}
    want = {"op": "write-imm", "iters": n, "bytes": n * size}
    diff = ["%s %r (want %r)" % (k, r.get(k), v) for k, v in want.items() if r.get(k) != v]
    if diff:
        bad.append("iwperf --json: " + ", ".join(diff))
    if not re.search(r"write-imm %d B, QP 1/1: %d messages, data verified" % (size, n),
                     run.server_out):
        bad.append("the server does not report %d messages verified" % n)


def check_run(run, streams, fpdus, trouble):
    bad, rdr = [], {}
    try:
        for d, key in (("i2r", b"MPA ID Req Frame"), ("r2i", b"MPA ID Rep Frame")):
            if isinstance(streams[d], mt.ParseError):
                raise streams[d]
            fr, n = mt.parse_frame(streams[d], key)
            if fr["c"] != run.crc or fr["m"] != run.markers:
                bad.append("%s: MPA frame with C=%d M=%d" % (d, fr["c"], fr["m"]))
            ulpdus = mt.parse_fpdus(streams[d][n:], run.markers, run.crc)
            rdr[d] = [dict(parse_ulpdu(u), ulen=len(u)) for u in ulpdus]
        _, hello = private_data(streams["i2r"], b"MPA ID Req Frame")
        _, welcome = private_data(streams["r2i"], b"MPA ID Rep Frame")
    except mt.ParseError as e:
        return ["RFC 5044 reader: %s" % e], []
    if len(hello) != 64 or len(welcome) != 64 or welcome[:4] != b"IWPF" or welcome[5] != 0:
        return ["no HELLO/accepted WELCOME in the MPA private data"], []
    for d in ("i2r", "r2i"):
        short = [r for r in rdr[d] if "short" in r]
        if short:
            bad.append("%s: a ULPDU too short for DDP" % d)
        compare(d, rdr[d], tshark_fpdus(fpdus.get(d, [])), run.crc, bad)
        if trouble[d]:
            bad.append("%s: malformed or expert errors/warnings: %s" % (
                d, "; ".join(t for _, t in trouble[d][:3])))
    if run.kind in AOP:
        check_atomic(run, rdr["i2r"], rdr["r2i"], hello, welcome, bad)
    else:
        check_write_imm(run, rdr["i2r"], rdr["r2i"], hello, welcome, bad)
    notes = ["c>s %d FPDUs, s>c %d, tshark framed them all" % (len(rdr["i2r"]),
                                                                len(rdr["r2i"]))]
    return bad, notes


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwperf", required=True, help="path to the iwperf binary")
    ap.add_argument("--engine", choices=("uring", "epoll"), help="--engine for both ends")
    ap.add_argument("--keep", action="store_true", help="keep the capture")
    ap.add_argument("--only", help="run only sessions whose name contains this")
    args = ap.parse_args()

    tshark = shutil.which("tshark")
    if not tshark:
        print("SKIP: tshark not installed")
        return SKIP
    if not os.access(args.iwperf, os.X_OK):
        print("FAIL: %s is not executable" % args.iwperf)
        return 1
    runs = [r for r in plan() if not args.only or args.only in r.name]

    t0 = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="rfc7306-tshark-")
    pcap = os.path.join(workdir, "rfc7306.pcapng")
    try:
        base = mt.pick_port_range(len(runs) + 2, mt.tshark_tcp_ports(tshark))
    except RuntimeError as e:
        print("FAIL: %s" % e)
        shutil.rmtree(workdir, ignore_errors=True)
        return 1
    cap = mt.Capture(tshark, base, base + len(runs) + 1, pcap)
    failed = None
    try:
        cap.probe(base)
        for i, r in enumerate(runs):
            r.port = base + 1 + i
            run_session(r, args.iwperf, workdir, args.engine)
        cap.probe(base + len(runs) + 1)  # every earlier packet is in the file now
    except RuntimeError as e:
        failed = str(e)
    finally:
        cap.stop()
    if failed:
        print("FAIL: %s" % failed)
        shutil.rmtree(workdir, ignore_errors=True)
        return 1

    ports = {r.port for r in runs}
    trouble, fpdus = vt.Trouble(ports), Fpdus(ports)

    def on_packet(pkt):
        trouble(pkt)
        fpdus(pkt)

    try:
        mt.decode_pdml(tshark, pcap, ports, on_packet=on_packet)
    except RuntimeError as e:
        print("FAIL: %s" % e)
        return 1
    streams = mt.streams_from_pcap(tshark, pcap, ports)

    nfail = 0
    for r in runs:
        if r.err:
            bad, notes = [r.err], []
        else:
            st = {d: streams.get((r.port, d), mt.ParseError("no %s payload captured" % d))
                  for d in ("i2r", "r2i")}
            bad, notes = check_run(r, st, {d: fpdus.found.get((r.port, d), [])
                                           for d in ("i2r", "r2i")},
                                   {d: trouble.found.get((r.port, d), [])
                                    for d in ("i2r", "r2i")})
        nfail += bool(bad)
        print("%-4s %-48s %s" % ("ok" if not bad else "FAIL", r.name, "; ".join(notes)),
              flush=True)
        for b in bad[:16]:
            print("     - %s" % b)
        if bad:
            for line in r.log[-16:]:
                print("     | %s" % line)

    keep = args.keep or nfail
    print("%d of %d sessions passed in %.0f s; capture %s" %
          (len(runs) - nfail, len(runs), time.monotonic() - t0, pcap if keep else "deleted"))
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
