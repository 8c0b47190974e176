#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent decoder check: iwping and iwperf sessions over loopback, read by tshark.

mpa_tshark.py checks the MPA layer with a traffic generator of its own; this
script does the same for the whole stack, through the two verbs tools:

  * an `iwping` session (-C 5 -V) for every option combination: MPA revision
    1 and 2, CRC on and off, Markers none / client requires / server requires
    / both, and with revision 2 also peer-to-peer with each RTR form (write,
    read, send); plus one run over ::1;
  * an `iwperf` run of each operation (write, read, send; a few messages that
    span several FPDUs each) for a subset of those combinations.

Everything is captured in one `tshark -i lo` run (starting tshark is the slow
part), each session on a port of its own, then decoded twice:

  1. by tshark (PDML, with the iWARP heuristic on and the RPC-over-RDMA and SMB
     Direct ones off, see mpa_tshark.DECODE_OPTS): one MPA Request and Reply
     with the expected M/C/Rev, no malformed packet, no expert error anywhere
     and no expert warning in the MPA/DDP/RDMAP layers, a good CRC32 on every
     FPDU when CRC is on (within the dissector's limits, below);
  2. by the RFC 5044 reader of mpa_tshark.py (Markers by stream position,
     FPDUPTR, PAD, CRC32c) over the raw TCP payload of each direction.

Both decodes must show exactly the RDMAP messages the protocols imply, in
order: opcode, queue and MSN of every untagged message, the octets each
message carries (and the size each RDMA Read Request asks for), counted by
their last DDP segment (L=1).  What the tools put on the wire:

  rping (iwping), per ping, client = MPA initiator:
    c>s Send info{addr, stag, len} (16 octets)
    s>c RDMA Read Request for -S octets, c>s its Read Response
    s>c Send go-ahead (16)
    c>s Send info of the second buffer (16)
    s>c RDMA Write of -S octets, s>c Send go-ahead (16)
  iwperf (its man page, CONTROL PROTOCOL): --iters messages of the operation
    (write: c>s RDMA Writes; read: c>s Read Requests and s>c Read Responses;
    send: c>s Sends, and s>c one 40-octet CREDIT Send per `credit batch`
    messages consumed, the batch being a quarter of 2 x --depth, rounded up),
    then c>s DONE and s>c RESULT, 40-octet Sends;
  plus, with p2p, the RTR first: a zero-length RDMA Write, zero-length RDMA
  Read (Request and Response) or zero-length Send.

Known limits of the tshark 4.0 MPA dissector (see mpa_tshark.py), measured
with these tools, and how this test deals with them:
  * With Markers requested by either side, the dissector assumes Markers in
    both directions, so it misreads a direction that has none.
  * With Markers, it takes each TCP segment as exactly one FPDU.  iwping
    sends one message at a time, so mostly one FPDU per segment; but with
    p2p the initiator's RTR shares a segment with its first Send, and
    iwperf's bulk transfers put several FPDUs in a segment, or one FPDU
    across segments.  Once it met such a segment, tshark has lost the
    framing for the rest of that direction (it reassembles bogus PDUs).
  * An FPDU that ends exactly on a Marker position is mis-sized; iwping's
    message size is chosen so that this does not happen (pick_size).
So, per direction, tshark must frame exactly the FPDUs it can: all of them
without Markers anywhere; with Markers this way, the leading run of FPDUs
that sit alone in their TCP segments (located from the reader's FPDU
positions and the captured segments), with the FPDU back pointers that are in
the stream; none in a direction without Markers when the other has them.
Past that, the FPDUs tshark still decodes with a good CRC32c must be among
the reader's (in order), and its malformed/expert complaints after the last
FPDU it framed right are noted, not failed; the RFC 5044 reader alone
accounts for every message there.
With --iwdump, the same capture is also read by our own decoder, iwdump
(tools/iwdump), which must follow every direction whole - Markers either way
or both, coalesced FPDUs, FPDUs across segments - with `--check` (no gap, no
undecoded octet, no CRC or Marker error) and find exactly the messages above,
in order, in each session.
Exit status: 0 all runs passed, 1 a failure, 77 tshark missing.
"""

import argparse
import collections
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpa_tshark as mt  # noqa: E402

SKIP = 77
DDP_T, DDP_U = mt.DDP_TAGGED_HDR, mt.DDP_UNTAGGED_HDR
READREQ_LEN = 28        # RFC 5040 §4: sink STag, TO, size, source STag, TO
PING_INFO = 16          # rping's {u64 buf, u32 rkey, u32 size}
PERF_CTRL, PERF_CTRL_ALT = 40, 48   # iwperf(1): DONE, CREDIT, RESULT
PERF_CREDITS_MAX = 2048
PI_WARN, PI_ERROR = 0x00600000, 0x00800000
TAGGED = ("write", "readresp")
SHORT = {"send": "Send", "write": "Write", "readreq": "RdReq", "readresp": "RdResp"}


# --------------------------------------------------------------------------
# What each session must put on the wire
# --------------------------------------------------------------------------

class Dir:
    """One direction's DDP segments, as (key, octets, rdsz) in wire order.

    key is mpa_tshark's segment key (op, qn, msn, mo, last), octets the DDP
    payload after the DDP header, rdsz the RDMA Read size of a Read Request."""

    def __init__(self, mulpdu):
        self.mulpdu, self.segs, self.msn = mulpdu, [], {0: 1, 1: 1}

    def _untagged(self, op, qn, n, rdsz=None):
        room, msn, mo = self.mulpdu - DDP_U, self.msn[qn], 0
        self.msn[qn] += 1
        while True:
            chunk = min(room, n - mo)
            last = mo + chunk == n
            self.segs.append(((op, qn, msn, mo, last), chunk, rdsz))
            mo += chunk
            if last:
                return

    def send(self, n):
        self._untagged("send", 0, n)

    def read_request(self, rdsz):
        self._untagged("readreq", 1, READREQ_LEN, rdsz)

    def tagged(self, op, n):
        room, off = self.mulpdu - DDP_T, 0
        while True:
            chunk = min(room, n - off)
            off += chunk
            self.segs.append(((op, 0, 0, 0, off == n), chunk, None))
            if off == n:
                return


def seg_ulen(seg):
    return seg[1] + (DDP_T if seg[0][0] in TAGGED else DDP_U)


def new_dirs(combo, mss):
    return Dir(mt.mulpdu(mss, combo.markers_i2r)), Dir(mt.mulpdu(mss, combo.markers_r2i))


def add_rtr(combo, c2s, s2c):
    """RFC 6581 §9: the initiator's zero-length RTR is its first FPDU."""
    if not combo.p2p:
        return
    if combo.rtr == "write":
        c2s.tagged("write", 0)
    elif combo.rtr == "read":
        c2s.read_request(0)
        s2c.tagged("readresp", 0)
    else:
        c2s.send(0)


def ping_layout(combo, count, size, mss):
    c2s, s2c = new_dirs(combo, mss)
    add_rtr(combo, c2s, s2c)
    for _ in range(count):
        c2s.send(PING_INFO)
        s2c.read_request(size)
        c2s.tagged("readresp", size)
        s2c.send(PING_INFO)
        c2s.send(PING_INFO)
        s2c.tagged("write", size)
        s2c.send(PING_INFO)
    return c2s.segs, s2c.segs


def perf_credits(count, depth, size):
    """CREDIT messages the server sends for `count` Sends (iwperf(1))."""
    credits = min(2 * depth, PERF_CREDITS_MAX, max(1, (256 << 20) // size))
    batch = -(-credits // 4)
    return count // batch


def perf_layout(combo, op, count, size, depth, mss):
    ctrl = PERF_CTRL_ALT if size == PERF_CTRL else PERF_CTRL
    c2s, s2c = new_dirs(combo, mss)
    add_rtr(combo, c2s, s2c)
    for _ in range(count):
        if op == "write":
            c2s.tagged("write", size)
        elif op == "read":
            c2s.read_request(size)
        else:
            c2s.send(size)
    if op == "read":
        for _ in range(count):
            s2c.tagged("readresp", size)
    if op == "send":
        # CREDITs and RESULT are Sends of one size: their order does not show
        for _ in range(perf_credits(count, depth, size)):
            s2c.send(ctrl)
    c2s.send(ctrl)  # DONE
    s2c.send(ctrl)  # RESULT
    return c2s.segs, s2c.segs


def pick_size(layout, combo, size):
    """Smallest size >= `size` with no FPDU ending on a Marker (mpa_tshark)."""
    for s in range(size, size + 4 * mt.MARKER_INTERVAL, 4):
        i2r, r2i = layout(s)
        if not mt.hits_marker_boundary([(None, seg_ulen(x)) for x in i2r], combo.markers_i2r) \
                and not mt.hits_marker_boundary([(None, seg_ulen(x)) for x in r2i],
                                                combo.markers_r2i):
            return s
    return size


def messages(segs):
    """Whole RDMAP messages (op, qn, msn, octets) by their last segment.

    For a Read Request, octets is the size it asks for.  Returns the messages
    and a list of problems (a segment whose MO does not follow its message)."""
    out, bad, open_msgs, tagged = [], [], {}, 0
    for key, octets, rdsz in segs:
        if key[0] == "short":
            bad.append("a %d-octet ULPDU, too short for DDP" % key[1])
            continue
        op, qn, msn, mo, last = key
        if op in TAGGED or op.startswith("tagged"):
            tagged += octets
            if last:
                out.append((op, 0, 0, tagged))
                tagged = 0
            continue
        have = open_msgs.pop((qn, msn), 0)
        if mo != have:
            bad.append("%s qn %d msn %d: MO %d after %d octets" % (op, qn, msn, mo, have))
        if last:
            out.append((op, qn, msn, rdsz if op == "readreq" else have + octets))
        else:
            open_msgs[(qn, msn)] = have + octets
    return out, bad


def counts_text(msgs):
    c = collections.Counter(m[0] for m in msgs)
    return " ".join("%d %s" % (c[k], SHORT.get(k, k)) for k in sorted(c, key=str)) or "none"


# --------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------

class Run:
    def __init__(self, tool, combo, op=None, count=5, size=1000, depth=2):
        self.tool, self.combo, self.op = tool, combo, op
        self.count, self.size, self.depth = count, size, depth
        self.port, self.err, self.log = None, None, []

    @property
    def name(self):
        n = "%s %s" % (self.tool, self.combo.name)
        return n + (" --op %s" % self.op if self.op else "")

    def layout(self, size, mss):
        if self.tool == "iwping":
            return ping_layout(self.combo, self.count, size, mss)
        return perf_layout(self.combo, self.op, self.count, size, self.depth, mss)


def plan(args):
    C = mt.Combo
    markers = ((False, False), (True, False), (False, True), (True, True))
    pings = []
    for rev in (1, 2):
        for crc in (True, False):
            for m_ini, m_resp in markers:
                pings.append(C(rev, crc, m_ini, m_resp))
                if rev == 2:
                    pings += [C(rev, crc, m_ini, m_resp, p2p=True, rtr=r)
                              for r in ("write", "read", "send")]
    pings.append(C(2, True, True, True, family="ipv6"))
    # iwperf over every combination too (the IPv6 run is iwping's alone)
    perfs = [c for c in pings if c.family != "ipv6"]
    runs = [Run("iwping", c, count=args.count, size=args.ping_size) for c in pings]
    runs += [Run("iwperf", c, op, count=args.perf_iters, size=args.perf_size,
                 depth=args.perf_depth) for c in perfs for op in ("write", "read", "send")]
    return [r for r in runs if not args.only or args.only in r.name]


def loopback_mss(family):
    """TCP_MAXSEG of a fresh loopback connection: what the library's MULPDU uses."""
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    with socket.socket(family, socket.SOCK_STREAM) as ls:
        ls.bind((host, 0))
        ls.listen(1)
        with socket.create_connection(ls.getsockname()[:2]) as c:
            ls.accept()[0].close()
            return c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)


def listening(port):
    """True if a socket listens on `port` (/proc/net/tcp{,6}, state 0A)."""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    p = line.split()
                    if p[3] == "0A" and int(p[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            continue
    return False


def iw_opts(combo, server, engine):
    o = ["--mpa-rev", str(combo.rev), "--crc", "on" if combo.crc else "off",
         "--markers", "on" if (combo.m_resp if server else combo.m_ini) else "off"]
    if combo.p2p:
        o += ["--p2p", "on", "--rtr", combo.rtr]
    if engine:
        o += ["--engine", engine]
    return o


def tail(path, n=8):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


def run_session(run, tools, workdir, engine):
    """Runs one server/client pair on run.port; sets run.err on a failure."""
    c = run.combo
    host = "::1" if c.family == "ipv6" else "127.0.0.1"
    tool = tools[run.tool]
    srv = [tool, "-s", "-a", host, "-p", str(run.port)] + iw_opts(c, True, engine)
    if run.tool == "iwping":
        cli = [tool, "-c", "-a", host, "-p", str(run.port), "-C", str(run.count),
               "-S", str(run.size), "-V"]
    else:
        cli = [tool, "-c", host, "-p", str(run.port), "--op", run.op, "--size", str(run.size),
               "--iters", str(run.count), "--depth", str(run.depth), "--json"]
    cli += iw_opts(c, False, engine)
    sout = os.path.join(workdir, "server-%d.out" % run.port)
    run.log.append("$ " + " ".join(srv))
    with open(sout, "w") as so:
        sp = subprocess.Popen(srv, stdout=so, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while not listening(run.port):
            if sp.poll() is not None or time.monotonic() > deadline:
                run.err = "%s server did not start listening" % run.tool
                return
            time.sleep(0.01)
        run.log.append("$ " + " ".join(cli))
        try:
            cp = subprocess.run(cli, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            run.err = "%s client timed out" % run.tool
            return
        run.log += (cp.stdout + cp.stderr).splitlines()[-8:]
        if run.tool == "iwperf":
            sp.send_signal(signal.SIGINT)  # iwperf -s serves until told to stop
        try:
            srv_rc = sp.wait(30)
        except subprocess.TimeoutExpired:
            srv_rc = None
        if cp.returncode != 0 or srv_rc != 0:
            run.err = "%s failed: client exit %d, server %s" % (
                run.tool, cp.returncode, "hung" if srv_rc is None else "exit %d" % srv_rc)
            return
        if run.tool == "iwperf":
            run.err = check_perf_json(run, cp.stdout)
    finally:
        if sp.poll() is None:
            sp.kill()
            sp.wait()
        run.log.append("server:")
        run.log += tail(sout)


def check_perf_json(run, out):
    """iwperf --json must agree with what was asked and what was negotiated."""
    try:
        r = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])
    except (IndexError, ValueError):
        return "iwperf --json printed no result object"
    mk = {(False, False): "off", (True, False): "tx", (False, True): "rx",
          (True, True): "both"}[(run.combo.markers_i2r, run.combo.markers_r2i)]
    want = {"op": run.op, "iters": run.count, "bytes": run.count * run.size,
            "crc": run.combo.crc, "markers": mk, "transport": "iwarp"}
    diff = ["%s %r (want %r)" % (k, r.get(k), v) for k, v in want.items() if r.get(k) != v]
    return "iwperf --json: " + ", ".join(diff) if diff else None


# --------------------------------------------------------------------------
# Checking one session
# --------------------------------------------------------------------------

def segment_bounds(tshark, pcap, ports):
    """Per (server port, direction): the (start, end) stream offsets of each TCP segment."""
    res = subprocess.run([tshark, "-n", "-r", pcap, "-T", "fields", "-e", "tcp.srcport",
                          "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.len"],
                         capture_output=True, text=True, timeout=600)
    raw = {}
    for line in res.stdout.splitlines():
        p = line.split("\t")
        if len(p) < 4 or not p[3] or int(p[3]) == 0:
            continue
        src, dst, seq, n = int(p[0]), int(p[1]), int(p[2]), int(p[3])
        key = (src, "r2i") if src in ports else (dst, "i2r") if dst in ports else None
        if key:
            raw.setdefault(key, set()).add((seq, seq + n))
    # offsets from the first payload octet, as in mpa_tshark.streams_from_pcap
    out = {}
    for key, s in raw.items():
        base = min(a for a, _ in s)
        out[key] = {(a - base, b - base) for a, b in s}
    return out


class Trouble:
    """on_packet hook: per (server port, direction), the malformed frames, the
    expert errors of any layer and the expert warnings of the iWARP layers."""

    def __init__(self, ports):
        self.ports, self.found = ports, {}

    def _add(self, key, pkt, what):
        frame = int(mt.field_show(pkt, "frame.number"))
        self.found.setdefault(key, []).append((frame, "frame %d: %s" % (frame, what)))

    def __call__(self, pkt):
        src, dst = mt.field_show(pkt, "tcp.srcport"), mt.field_show(pkt, "tcp.dstport")
        if src is None or dst is None:
            return
        src, dst = int(src), int(dst)
        key = (src, "r2i") if src in self.ports else (dst, "i2r") if dst in self.ports else None
        if not key:
            return
        for p in pkt.findall("proto"):
            iwarp = (p.get("name") or "").startswith("iwarp")
            if p.get("name") == "_ws.malformed":
                self._add(key, pkt, "malformed")
            for f in p.iter("field"):
                if f.get("name") == "_ws.malformed":
                    self._add(key, pkt, "malformed")
                if f.get("name") != "_ws.expert":
                    continue
                sev = mt.field_show(f, "_ws.expert.severity")
                if sev is not None and int(sev) >= (PI_WARN if iwarp else PI_ERROR):
                    self._add(key, pkt, mt.field_show(f, "_ws.expert.message"))


def fpdu_spans(ulpdus, markers):
    spans, pos = [], 0
    for u in ulpdus:
        n = mt.fpdu_wire_len(len(u), pos, markers)
        spans.append((pos, pos + n))
        pos += n
    return spans


def rfc_segment(u):
    key = mt.segment_key(u)
    if key[0] == "short":
        return key, 0, None
    tagged = bool(u[0] & 0x80)
    rdsz = None
    if key[0] == "readreq" and len(u) >= DDP_U + READREQ_LEN:
        rdsz = struct.unpack(">I", u[DDP_U + 12:DDP_U + 16])[0]
    return key, len(u) - (DDP_T if tagged else DDP_U), rdsz


def tshark_segments(fpdus):
    """tshark's FPDUs of one direction, once each (a retransmission decodes again)."""
    out, seen, nth = [], set(), collections.Counter()
    for fp in fpdus:
        nth[fp["frame"]] += 1
        ident = (fp["seq"], nth[fp["frame"]])
        if ident in seen:
            continue
        seen.add(ident)
        out.append(fp)
    return out


def is_subsequence(small, big):
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def check_startup(combo, view, bad):
    for kind, m, who in (("req", combo.m_ini, "Request"), ("rep", combo.m_resp, "Reply")):
        frames = view[kind]
        if len(frames) != 1:
            bad.append("tshark decoded %d MPA %ss (want 1)" % (len(frames), who))
            continue
        f = frames[0]
        if f["m"] != m or f["c"] != combo.crc or f["rev"] != combo.rev or f["r"]:
            bad.append("MPA %s decoded as M=%d C=%d R=%d rev %d, want M=%d C=%d R=0 rev %d" %
                       (who, f["m"], f["c"], f["r"], f["rev"], m, combo.crc, combo.rev))


def crc_good(fp):
    return bool(fp["crc_check"]) and all("Good CRC32" in t for t in fp["crc_check"])


def check_direction(combo, d, want_msgs, ulpdus, spans, data, segs_on_wire, fpdus, bad, notes):
    """Compares one direction's tshark decode with the RFC 5044 reader's.

    Returns the last frame up to which tshark's decode is to be trusted (None:
    all of it), so that its complaints after that frame count as misreading."""
    mk = combo.markers_i2r if d == "i2r" else combo.markers_r2i
    rfc = [rfc_segment(u) for u in ulpdus]
    msgs, probs = messages(rfc)
    bad += ["%s: RFC 5044 reader: %s" % (d, p) for p in probs[:2]]
    if msgs != want_msgs:
        first = next((i for i, (a, b) in enumerate(zip(msgs, want_msgs)) if a != b),
                     min(len(msgs), len(want_msgs)))
        bad.append("%s: RFC 5044 reader found %s, want %s; first difference at message %d: "
                   "%s, want %s" % (d, counts_text(msgs), counts_text(want_msgs), first,
                                    msgs[first] if first < len(msgs) else "none",
                                    want_msgs[first] if first < len(want_msgs) else "none"))

    # How many leading FPDUs tshark can frame: without Markers anywhere, all
    # (it reassembles the stream); without Markers this way but with them the
    # other way, none; with Markers this way, those alone in their segments.
    if not (combo.m_ini or combo.m_resp):
        prefix, why = len(rfc), None
    elif not mk:
        prefix, why = 0, "no Markers this way"
    else:
        prefix = 0
        while prefix < len(spans):
            a, b = spans[prefix]
            if (a, b) not in segs_on_wire or b % mt.MARKER_INTERVAL == 0:
                break
            prefix += 1
        why = "%d alone in a TCP segment" % prefix

    fps = tshark_segments(fpdus)
    for fp in fps[:prefix]:
        if fp["key"] is None:
            bad.append("%s: frame %s: FPDU without a DDP/RDMAP decode" % (d, fp["frame"]))
            return None
        if combo.crc and not crc_good(fp):
            bad.append("%s: frame %s: CRC not good: %s" % (d, fp["frame"],
                                                         fp["crc_check"] or "none"))
            return None
        if not combo.crc and (fp["crc_check"] or not fp["crc_plain"]):
            bad.append("%s: frame %s: CRC checked although CRC is off" % (d, fp["frame"]))
            return None
    got = [(fp["key"], fp["ulen"] - (DDP_T if fp["key"][0] in TAGGED else DDP_U),
            fp["rdsz"]) for fp in fps[:prefix]]
    if got != rfc[:prefix]:
        n = next((i for i, (x, y) in enumerate(zip(got, rfc)) if x != y), len(got))
        bad.append("%s: tshark must frame the first %d FPDUs (%s) but decoded %d of them; "
                   "first difference: %s, the reader has %s" % (
                       d, prefix, why or "no Markers", n, got[n:n + 1], rfc[n:n + 1]))
        return None
    for i in range(prefix if mk else 0):
        a, b = spans[i]
        first = -(-a // mt.MARKER_INTERVAL) * mt.MARKER_INTERVAL
        ptrs = [struct.unpack(">H", data[m + 2:m + 4])[0]
                for m in range(first, b, mt.MARKER_INTERVAL)]
        if fps[i]["fpduptrs"] != ptrs:
            bad.append("%s: frame %s: tshark's FPDU back pointers %s, the stream has %s" %
                       (d, fps[i]["frame"], fps[i]["fpduptrs"], ptrs))
            return None
    rest = fps[prefix:]
    if prefix == len(rfc):
        if rest:
            bad.append("%s: tshark decoded %d FPDUs more than the RFC 5044 reader found" %
                       (d, len(rest)))
        return None
    # Past that tshark has lost the framing.  An FPDU it still decodes with a
    # good CRC32c is a real one and must be among the reader's; without CRC
    # nothing tells a real FPDU from a misframed one.
    if combo.crc:
        real = [fp["key"] for fp in rest if fp["key"] is not None and crc_good(fp)]
        if not is_subsequence(real, [r[0] for r in rfc[prefix:]]):
            bad.append("%s: tshark shows FPDUs (good CRC) the RFC 5044 reader did not find" % d)
        extra = len(rest) - len(real)
        notes.append("%s: tshark %d/%d (%s%s)" % (d, prefix + len(real), len(rfc), why,
                                                  ", %d misframed" % extra if extra else ""))
    else:
        notes.append("%s: tshark %d/%d (%s%s)" % (d, prefix, len(rfc), why, ", %d unchecked" %
                                                  len(rest) if rest else ""))
    return int(fps[prefix - 1]["frame"]) if prefix else 0


IWDUMP_OPS = {0: "write", 1: "readreq", 2: "readresp", 3: "send"}


def iwdump_messages(iwdump, pcap, ports):
    """iwdump --json --check: per (server port, direction) its messages in order,
    as messages() gives them, or a problem string per port."""
    res = subprocess.run([iwdump, "--json", "--check", "-r", pcap], capture_output=True,
                         text=True, timeout=600)
    out, problems = {}, {}
    if res.returncode != 0:
        problems[None] = "iwdump --json --check exit %d: %s" % (res.returncode,
                                                               res.stderr.strip()[-200:])
    for line in res.stdout.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            problems[None] = "iwdump printed a line that is not JSON: %r" % line[:100]
            continue
        sport, dport = o.get("sport"), o.get("dport")
        key = (dport, "i2r") if dport in ports else (sport, "r2i") if sport in ports else None
        if key is None:
            continue
        t = o.get("type")
        if t in ("gap", "undecoded"):
            problems[key[0]] = "iwdump %s: %s" % (t, line[:160])
        elif t == "rdmap":
            op = IWDUMP_OPS.get(o["opcode"], "opcode %d" % o["opcode"])
            if op in TAGGED:
                m = (op, 0, 0, o["len"])
            else:
                m = (op, o["qn"], o["msn"], o["size"] if op == "readreq" else o["len"])
            out.setdefault(key, []).append(m)
    return out, problems


def check_iwdump(run, got, problems, mss):
    bad = []
    want = dict(zip(("i2r", "r2i"), run.layout(run.size, mss)))
    for p in (None, run.port):
        if p in problems:
            bad.append(problems[p])
    for d in ("i2r", "r2i"):
        w = messages(want[d])[0]
        g = got.get((run.port, d), [])
        if g != w:
            i = next((k for k, (a, b) in enumerate(zip(w, g)) if a != b), min(len(w), len(g)))
            bad.append("iwdump %s: %d messages, want %d; first difference at %d: %s, want %s" % (
                d, len(g), len(w), i, g[i] if i < len(g) else "none",
                w[i] if i < len(w) else "none"))
    return bad


def check_run(run, view, streams, bounds, trouble, mss):
    bad, notes = [], []
    check_startup(run.combo, view, bad)
    want = dict(zip(("i2r", "r2i"), run.layout(run.size, mss)))
    summary = []
    for d, rkey in (("i2r", b"MPA ID Req Frame"), ("r2i", b"MPA ID Rep Frame")):
        mk = run.combo.markers_i2r if d == "i2r" else run.combo.markers_r2i
        want_msgs = messages(want[d])[0]
        summary.append("%s %s" % ("c>s" if d == "i2r" else "s>c", counts_text(want_msgs)))
        trusted = None
        try:
            if isinstance(streams[d], mt.ParseError):
                raise streams[d]
            _, n = mt.parse_frame(streams[d], rkey)
            data = streams[d][n:]
            ulpdus = mt.parse_fpdus(data, mk, run.combo.crc)
        except mt.ParseError as e:
            bad.append("%s: RFC 5044 reader: %s" % (d, e))
        else:
            segs = {(a - n, b - n) for a, b in bounds.get(d, ())}
            trusted = check_direction(run.combo, d, want_msgs, ulpdus, fpdu_spans(ulpdus, mk),
                                      data, segs, view["fpdus"][d], bad, notes)
        strict = [t for f, t in trouble[d] if trusted is None or f <= trusted]
        if strict:
            bad.append("%s: malformed or expert errors/warnings: %s" % (d, "; ".join(strict[:3])))
        if len(strict) < len(trouble[d]):
            notes.append("%s: %d tshark complaints after it lost the framing" % (
                d, len(trouble[d]) - len(strict)))
    return bad, [", ".join(summary)] + notes


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwping", required=True, help="path to the iwping binary")
    ap.add_argument("--iwperf", required=True, help="path to the iwperf binary")
    ap.add_argument("--count", type=int, default=5, help="iwping -C")
    ap.add_argument("--ping-size", type=int, default=1000, help="iwping -S (adjusted)")
    ap.add_argument("--perf-size", type=int, default=100000, help="iwperf --size")
    ap.add_argument("--perf-iters", type=int, default=5, help="iwperf --iters")
    ap.add_argument("--perf-depth", type=int, default=2, help="iwperf --depth")
    ap.add_argument("--engine", choices=("uring", "epoll"), help="--engine for both tools")
    ap.add_argument("--iwdump", help="path to iwdump: also decode the capture with it")
    ap.add_argument("--keep", action="store_true", help="keep the capture")
    ap.add_argument("--only", help="run only sessions whose name contains this")
    args = ap.parse_args()

    tshark = shutil.which("tshark")
    if not tshark:
        print("SKIP: tshark not installed")
        return SKIP
    tools = {"iwping": args.iwping, "iwperf": args.iwperf}
    for t in tools.values():
        if not os.access(t, os.X_OK):
            print("FAIL: %s is not executable" % t)
            return 1

    runs = plan(args)
    if not mt.have_ipv6_loopback():
        print("note: no ::1, IPv6 session left out")
        runs = [r for r in runs if r.combo.family != "ipv6"]
    mss = {"ipv4": loopback_mss(socket.AF_INET)}
    if any(r.combo.family == "ipv6" for r in runs):
        mss["ipv6"] = loopback_mss(socket.AF_INET6)
    for r in runs:
        if r.tool == "iwping":
            r.size = pick_size(lambda s: r.layout(s, mss[r.combo.family]), r.combo, r.size)

    t0 = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="verbs-tshark-")
    pcap = os.path.join(workdir, "verbs.pcapng")
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
            run_session(r, tools, workdir, args.engine)
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
    trouble = Trouble(ports)
    try:
        views = mt.decode_pdml(tshark, pcap, ports, on_packet=trouble)
    except RuntimeError as e:
        print("FAIL: %s" % e)
        return 1
    streams = mt.streams_from_pcap(tshark, pcap, ports)
    bounds = segment_bounds(tshark, pcap, ports)
    if args.iwdump:
        iw_msgs, iw_problems = iwdump_messages(args.iwdump, pcap, ports)

    nfail = 0
    for r in runs:
        if r.err:
            bad, notes = [r.err], []
        else:
            st = {d: streams.get((r.port, d), mt.ParseError("no %s payload captured" % d))
                  for d in ("i2r", "r2i")}
            bd = {d: bounds.get((r.port, d), set()) for d in ("i2r", "r2i")}
            tr = {d: trouble.found.get((r.port, d), []) for d in ("i2r", "r2i")}
            bad, notes = check_run(r, views.get(r.port, mt.new_view()), st, bd, tr,
                                   mss[r.combo.family])
            if args.iwdump:
                bad += check_iwdump(r, iw_msgs, iw_problems, mss[r.combo.family])
        nfail += bool(bad)
        print("%-4s %-58s size %d: %s" % ("ok" if not bad else "FAIL", r.name, r.size,
                                            "; ".join(notes)), flush=True)
        for b in bad:
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
