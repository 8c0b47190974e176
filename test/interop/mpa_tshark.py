#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent decoder check: our MPA traffic over real loopback TCP, read by tshark.

For every option combination (MPA rev 1 and 2; CRC on and off; Markers none,
initiator-requires, responder-requires, both; plus rev 2 peer-to-peer with each
RTR form; plus one run over IPv6) this script

  1. starts `tshark -i lo -f 'tcp port P' -w FILE` on a free port P,
  2. runs `iwmpa -s` and `iwmpa -c` against each other (several FPDUs and
     several Markers per direction),
  3. decodes the capture with `tshark -T pdml` and asserts that Wireshark saw
     an MPA Request and an MPA Reply with the expected M/C/Rev, every FPDU of
     both directions (the exact set of DDP segments computed from --count,
     --size and the MULPDU, plus the RTR / Read Response with p2p), a good
     CRC32 on every FPDU when CRC is on, no malformed packet, and Marker
     fields ("FPDU back pointer") exactly in the directions that carry Markers;
  4. re-reads the TCP payload of each direction with a small parser written
     here from RFC 5044 (Markers by stream position, FPDUPTR, PAD, CRC32c) and
     checks the same FPDU set - a second opinion that does not share code
     with the library.

Known limits of the tshark 4.0 MPA dissector (packet-iwarp-mpa.c), measured
while writing this test, and how the test deals with them:
  * Markers are located per TCP segment, assuming one FPDU per segment.  The
    tool's FPDU Alignment (`--align`, on by default when a side sends Markers)
    gives exactly that.
  * When either side asked for Markers, the dissector assumes Markers in both
    directions.  With Markers in one direction only, it cannot decode the
    other direction: there the test accepts a partial (or empty) tshark decode
    and relies on the RFC 5044 parser of step 4.
  * An FPDU that ends exactly on a Marker position (the next FPDU starts with
    a Marker) is mis-sized by one Marker, and the rest of that direction is
    lost.  The test picks the message size so that this never happens (it is
    rare: 1 FPDU in 128).
Exit status: 0 all combinations passed, 1 a failure, 77 tshark missing.
"""

import argparse
import errno
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

SKIP = 77
MARKER_INTERVAL = 512
DDP_UNTAGGED_HDR = 18
DDP_TAGGED_HDR = 14


# --------------------------------------------------------------------------
# Combinations and what they must put on the wire
# --------------------------------------------------------------------------

class Combo:
    def __init__(self, rev, crc, m_ini, m_resp, p2p=False, rtr=None, family="ipv4"):
        self.rev, self.crc, self.m_ini, self.m_resp = rev, crc, m_ini, m_resp
        self.p2p, self.rtr, self.family = p2p, rtr, family

    @property
    def name(self):
        mk = {(False, False): "none", (True, False): "ini", (False, True): "resp",
              (True, True): "both"}[(self.m_ini, self.m_resp)]
        s = "rev%d crc=%s markers=%s" % (self.rev, "on" if self.crc else "off", mk)
        if self.p2p:
            s += " p2p rtr=%s" % self.rtr
        if self.family == "ipv6":
            s += " ipv6"
        return s

    # Markers travel initiator->responder when the responder's Reply had M=1.
    @property
    def markers_i2r(self):
        return self.m_resp

    @property
    def markers_r2i(self):
        return self.m_ini


def combos():
    out = []
    for rev in (1, 2):
        for crc in (True, False):
            for m_ini, m_resp in ((False, False), (True, False), (False, True), (True, True)):
                out.append(Combo(rev, crc, m_ini, m_resp))
    for rtr in ("write", "read", "send"):
        out.append(Combo(2, True, False, False, p2p=True, rtr=rtr))
    out.append(Combo(2, True, True, True, p2p=True, rtr="write"))
    out.append(Combo(2, True, True, True, family="ipv6"))
    return out


def mulpdu(emss, markers):
    """RFC 5044 section 4.5."""
    if markers:
        m = emss - (6 + 4 * -(-emss // MARKER_INTERVAL) + emss % 4)
    else:
        m = emss - (6 + emss % 4)
    return max(128, min(m, 64768))


def pad_len(n):
    return (4 - ((2 + n) % 4)) % 4


def fpdu_wire_len(ulpdu_len, pos, markers):
    """Octets an FPDU of `ulpdu_len` occupies when it starts at stream `pos`."""
    body = 2 + ulpdu_len + pad_len(ulpdu_len)
    n, p, left = 0, pos, body
    if markers and p % MARKER_INTERVAL == 0:
        n, p = n + 4, p + 4
    while left:
        if markers and p % MARKER_INTERVAL == 0:
            n, p = n + 4, p + 4
        step = left if not markers else min(left, MARKER_INTERVAL - p % MARKER_INTERVAL)
        n, p, left = n + step, p + step, left - step
    if markers and p % MARKER_INTERVAL == 0:
        n, p = n + 4, p + 4  # Marker between PAD and CRC belongs to this FPDU
    return n + 4


def expected_segments(combo, count, size, emss):
    """Per direction, the ordered DDP segments (as keys) and their ULPDU lengths."""
    def sends(mul, first_msn):
        room = mul - DDP_UNTAGGED_HDR
        segs = []
        for i in range(count):
            msn, mo = first_msn + i, 0
            while True:
                chunk = min(room, size - mo)
                last = mo + chunk == size
                segs.append((("send", 0, msn, mo, last), DDP_UNTAGGED_HDR + chunk))
                mo += chunk
                if last:
                    break
        return segs

    i2r, r2i = [], []
    first = 1
    if combo.p2p:
        if combo.rtr == "write":
            i2r.append((("write", 0, 0, 0, True), DDP_TAGGED_HDR))
        elif combo.rtr == "read":
            i2r.append((("readreq", 1, 1, 0, True), DDP_UNTAGGED_HDR + 28))
            r2i.append((("readresp", 0, 0, 0, True), DDP_TAGGED_HDR))
        else:
            i2r.append((("send", 0, 1, 0, True), DDP_UNTAGGED_HDR))
            first = 2
    i2r += sends(mulpdu(emss, combo.markers_i2r), first)
    r2i += sends(mulpdu(emss, combo.markers_r2i), 1)
    return i2r, r2i


def hits_marker_boundary(segs, markers):
    """True if some FPDU but the last ends exactly where a Marker starts."""
    if not markers:
        return False
    pos = 0
    for _, ulen in segs[:-1]:
        pos += fpdu_wire_len(ulen, pos, True)
        if pos % MARKER_INTERVAL == 0:
            return True
    return False


def pick_size(combo, count, size, emss):
    """Smallest size >= `size` that steers clear of the tshark boundary bug."""
    for s in range(size, size + 4 * 512, 4):
        i2r, r2i = expected_segments(combo, count, s, emss)
        if not hits_marker_boundary(i2r, combo.markers_i2r) and \
                not hits_marker_boundary(r2i, combo.markers_r2i):
            return s
    return size


# --------------------------------------------------------------------------
# An RFC 5044 reader, independent of the library
# --------------------------------------------------------------------------

def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


class ParseError(Exception):
    pass


def parse_frame(data, key):
    if len(data) < 20 or data[:16] != key:
        raise ParseError("stream does not start with %r" % key)
    flags, rev, pdlen = data[16], data[17], struct.unpack(">H", data[18:20])[0]
    if 20 + pdlen > len(data):
        raise ParseError("startup frame truncated")
    return {"m": bool(flags & 0x80), "c": bool(flags & 0x40), "r": bool(flags & 0x20),
            "rev": rev}, 20 + pdlen


def parse_fpdus(data, markers, crc):
    """Split a full-operation byte stream into ULPDUs, checking Markers and CRC."""
    out, pos, n = [], 0, len(data)

    def marker_at(p, fpdu_start):
        if p + 4 > n:
            raise ParseError("stream ends inside a Marker at %d" % p)
        res, ptr = struct.unpack(">HH", data[p:p + 4])
        want = p - fpdu_start if fpdu_start is not None else 0
        if ptr != want:
            raise ParseError("Marker at %d: FPDUPTR %d, expected %d" % (p, ptr, want))

    while pos < n:
        cov = pos
        if markers and pos % MARKER_INTERVAL == 0:
            marker_at(pos, None)
            pos += 4
        start = pos
        logical = bytearray()

        def take(k):
            nonlocal pos
            while k:
                if markers and pos % MARKER_INTERVAL == 0 and pos != start:
                    marker_at(pos, start)
                    pos += 4
                    continue
                step = k if not markers else min(k, MARKER_INTERVAL - pos % MARKER_INTERVAL)
                if pos + step > n:
                    raise ParseError("stream ends inside an FPDU at %d" % pos)
                logical.extend(data[pos:pos + step])
                pos += step
                k -= step

        take(2)
        ulen = struct.unpack(">H", bytes(logical[:2]))[0]
        take(ulen + pad_len(ulen))
        if markers and pos % MARKER_INTERVAL == 0:
            marker_at(pos, start)
            pos += 4
        if pos + 4 > n:
            raise ParseError("stream ends inside a CRC at %d" % pos)
        got = struct.unpack("<I", data[pos:pos + 4])[0]
        if crc and crc32c(data[cov:pos]) != got:
            raise ParseError("bad CRC on the FPDU at %d" % start)
        pos += 4
        out.append(bytes(logical[2:2 + ulen]))
    return out


def segment_key(u):
    """Key of a DDP segment, matching expected_segments()."""
    if len(u) < 2:
        return ("short", len(u))
    tagged, last, op = bool(u[0] & 0x80), bool(u[0] & 0x40), u[1] & 0x0F
    if tagged:
        return ({0: "write", 2: "readresp"}.get(op, "tagged%d" % op), 0, 0, 0, last)
    if len(u) < DDP_UNTAGGED_HDR:
        return ("short", len(u))
    qn, msn, mo = struct.unpack(">III", u[6:18])
    return ({3: "send", 1: "readreq"}.get(op, "untagged%d" % op), qn, msn, mo, last)


def streams_from_pcap(tshark, pcap, server_ports):
    """TCP payload per (server port, direction), deduplicated by sequence number."""
    res = subprocess.run([tshark, "-n", "-r", pcap, "-T", "fields", "-e", "tcp.srcport",
                          "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.payload"],
                         capture_output=True, text=True, timeout=600)
    segs = {}
    for line in res.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 4 or not parts[3]:
            continue
        src, dst = int(parts[0]), int(parts[1])
        if src in server_ports:
            key = (src, "r2i")
        elif dst in server_ports:
            key = (dst, "i2r")
        else:
            continue
        segs.setdefault(key, {})[int(parts[2])] = bytes.fromhex(parts[3].replace(":", ""))
    out = {}
    for key, m in segs.items():
        data, nxt = bytearray(), None
        try:
            for seq in sorted(m):
                chunk = m[seq]
                if nxt is not None and seq < nxt:  # retransmission overlap
                    chunk = chunk[nxt - seq:]
                elif nxt is not None and seq > nxt:
                    raise ParseError("%s: %d octets missing from the capture" %
                                     (key[1], seq - nxt))
                data.extend(chunk)
                nxt = seq + len(m[seq]) if nxt is None else max(nxt, seq + len(m[seq]))
            out[key] = bytes(data)
        except ParseError as e:
            out[key] = e
    return out


# --------------------------------------------------------------------------
# tshark's view
# --------------------------------------------------------------------------

def field_show(e, name):
    for f in e.iter("field"):
        if f.get("name") == name:
            return f.get("show")
    return None


# Our Send payloads are not RPC-over-RDMA or SMB Direct: keep those heuristics
# away (the RPC-over-RDMA one throws "Malformed" on a zero-length Send RTR).
# Heuristics first: otherwise a dissector registered on either port (the
# client's is ephemeral, see tshark_tcp_ports) takes the stream.  A loaded
# machine can make loopback TCP retransmit (SACK, out-of-order segments in the
# capture): tshark must then reassemble by sequence number, as TCP does, or it
# reads the middle of an FPDU as a new one.
DECODE_OPTS = ["-n", "-o", "tcp.try_heuristic_first:TRUE",
               "-o", "tcp.reassemble_out_of_order:TRUE", "--enable-heuristic",
               "iwarp_mpa_tcp", "--disable-heuristic", "rpcrdma_iwarp",
               "--disable-heuristic", "smb_direct_iwarp"]


def new_view():
    return {"req": [], "rep": [], "fpdus": {"i2r": [], "r2i": []}, "malformed": [],
            "errors": []}


def packet_view(pkt, views, server_ports):
    """Add one PDML <packet> to the view of its connection."""
    src, dst = field_show(pkt, "tcp.srcport"), field_show(pkt, "tcp.dstport")
    if src is None or dst is None:
        return
    src, dst = int(src), int(dst)
    if src in server_ports:
        view, d = views.setdefault(src, new_view()), "r2i"
    elif dst in server_ports:
        view, d = views.setdefault(dst, new_view()), "i2r"
    else:
        return
    frame = field_show(pkt, "frame.number")
    protos = list(pkt.findall("proto"))
    for f in pkt.iter():
        nm = f.get("name") or ""
        if nm == "_ws.malformed":
            view["malformed"].append(frame)
        if nm == "_ws.expert":
            sev = field_show(f, "_ws.expert.severity")
            msg = field_show(f, "_ws.expert.message") or ""
            if sev is not None and int(sev) >= 0x00800000:  # PI_ERROR
                view["errors"].append("frame %s: %s" % (frame, msg))
    for i, p in enumerate(protos):
        if p.get("name") != "iwarp_mpa":
            continue
        names = {f.get("name") for f in p.iter("field")}
        if "iwarp_mpa.req" in names or "iwarp_mpa.rep" in names:
            fr = {"m": field_show(p, "iwarp_mpa.marker_flag") == "1",
                  "c": field_show(p, "iwarp_mpa.crc_flag") == "1",
                  "r": field_show(p, "iwarp_mpa.rej_flag") == "1",
                  "rev": int(field_show(p, "iwarp_mpa.rev") or -1), "frame": frame}
            view["req" if "iwarp_mpa.req" in names else "rep"].append(fr)
            continue
        if "iwarp_mpa.fpdu" not in names:
            continue
        crc_texts = [f.get("showname") or "" for f in p.iter("field")
                     if f.get("name") == "iwarp_mpa.crc_check"]
        ptrs = [int(f.get("show")) for f in p.iter("field")
                if f.get("name") == "iwarp_mpa.marker_fpduptr"]
        seq = field_show(pkt, "tcp.seq")
        fp = {"frame": frame, "crc_check": crc_texts, "crc_plain": "iwarp_mpa.crc" in names,
              "fpduptrs": ptrs, "ulen": int(field_show(p, "iwarp_mpa.ulpdulength") or -1),
              "key": None, "seq": int(seq) if seq is not None else None, "rdsz": None}
        if i + 1 < len(protos) and protos[i + 1].get("name") == "iwarp_ddp_rdmap":
            q = protos[i + 1]
            tagged = field_show(q, "iwarp_ddp.tagged_flag") == "1"
            last = field_show(q, "iwarp_ddp.last_flag") == "1"
            op = int(field_show(q, "iwarp_rdma.opcode") or "-1", 0)
            if tagged:
                fp["key"] = ({0: "write", 2: "readresp"}.get(op, "tagged%d" % op),
                             0, 0, 0, last)
            else:
                rdsz = field_show(q, "iwarp_rdma.rdmardsz")
                fp["rdsz"] = int(rdsz) if rdsz is not None else None
                fp["key"] = ({3: "send", 1: "readreq"}.get(op, "untagged%d" % op),
                             int(field_show(q, "iwarp_ddp.qn") or -1),
                             int(field_show(q, "iwarp_ddp.msn") or -1),
                             int(field_show(q, "iwarp_ddp.mo") or -1), last)
        view["fpdus"][d].append(fp)


def decode_pdml(tshark, pcap, server_ports, on_packet=None):
    """tshark's decode of the whole capture, one view per server port.

    on_packet(elem), if given, also sees every PDML <packet> element (for
    checks beyond the MPA view, as in verbs_tshark.py)."""
    views = {}
    with tempfile.TemporaryFile() as out:
        res = subprocess.run([tshark] + DECODE_OPTS + ["-r", pcap, "-T", "pdml"],
                             stdout=out, stderr=subprocess.PIPE, text=False, timeout=900)
        if res.returncode != 0:
            raise RuntimeError("tshark -r failed: %s" % res.stderr.decode()[-300:])
        out.seek(0)
        for event, elem in ET.iterparse(out, events=("end",)):
            if elem.tag == "packet":
                packet_view(elem, views, server_ports)
                if on_packet:
                    on_packet(elem)
                elem.clear()
    return views


# --------------------------------------------------------------------------
# Running one combination
# --------------------------------------------------------------------------

def ports_free(base, n):
    """True if base..base+n-1 can be bound on 127.0.0.1 and ::1."""
    for port in range(base, base + n):
        for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            try:
                with socket.socket(fam, socket.SOCK_STREAM) as s:
                    s.bind((host, port))
            except OSError as e:
                if fam == socket.AF_INET6 and e.errno == errno.EADDRNOTAVAIL:
                    continue  # no IPv6 loopback: the IPv6 run will say so
                return False
    return True


def tshark_tcp_ports(tshark):
    """TCP ports tshark gives to a dissector by number (29418 is SSH, 30000-30200
    MRCPv2, ...).  Without tcp.try_heuristic_first such a dissector takes the
    whole stream from the MPA heuristic; with it, still every segment the
    heuristic turns down (see the limits above).  Server ports avoid them."""
    res = subprocess.run([tshark, "-G", "decodes"], capture_output=True, text=True,
                         timeout=120)
    return {int(p[1]) for p in (l.split("\t") for l in res.stdout.splitlines())
            if len(p) >= 2 and p[0] == "tcp.port" and p[1].isdigit()}


def pick_port_range(n, avoid=()):
    """A run of n free ports below the Linux ephemeral range (so no client port
    hits it), none of them in `avoid`."""
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(20000, 32000 - n)
        if not any(p in avoid for p in range(base, base + n)) and ports_free(base, n):
            return base
    raise RuntimeError("no run of %d free TCP ports on loopback" % n)


class Capture:
    """One tshark capture of a port range on lo, proven live by probe connections."""

    def __init__(self, tshark, lo, hi, pcap):
        self.lines, self.lock = [], threading.Lock()
        self.p = subprocess.Popen([tshark, "-n", "-l", "-P", "-i", "lo", "-f",
                                   "tcp portrange %d-%d" % (lo, hi), "-w", pcap],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for stream in (self.p.stdout, self.p.stderr):
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            with self.lock:
                self.lines.append(line.rstrip())

    def _seen(self, port):
        needle = " %d " % port
        with self.lock:
            return any(needle in l + " " and "SYN" in l for l in self.lines)

    def probe(self, port, timeout=60):
        """Connect to `port` until tshark prints the SYN: everything before is captured."""
        deadline = time.monotonic() + timeout
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as ls:
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind(("127.0.0.1", port))
            ls.listen(8)
            while time.monotonic() < deadline:
                if self.p.poll() is not None:
                    break
                with socket.create_connection(("127.0.0.1", port), timeout=5):
                    ls.accept()[0].close()
                end = time.monotonic() + 1.0
                while time.monotonic() < end:
                    if self._seen(port):
                        return
                    time.sleep(0.05)
        self.stop()
        with self.lock:
            why = [l for l in self.lines if "ermission" in l or "rror" in l] or self.lines[-3:]
            tail = " | ".join(why[:2])
        raise RuntimeError("tshark does not capture on lo (run as root, or give dumpcap "
                           "CAP_NET_RAW): " + tail)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def run_tools(tool, combo, port, count, size, mss, log):
    host = "::1" if combo.family == "ipv6" else "127.0.0.1"
    common = ["-p", str(port), "--mpa-rev", str(combo.rev), "--crc", "on" if combo.crc else "off",
              "--count", str(count), "--size", str(size), "--mss", str(mss), "--timeout", "10"]
    if combo.p2p:
        common += ["--p2p", "on", "--rtr", combo.rtr]
    resp_cmd = [tool, "-s", "-a", host, "--markers", "on" if combo.m_resp else "off"] + common
    ini_cmd = [tool, "-c", host, "--markers", "on" if combo.m_ini else "off"] + common
    log.append("$ " + " ".join(resp_cmd))
    resp = subprocess.Popen(resp_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = resp.stdout.readline()
    log.append(first.rstrip())
    if "listening" not in first:
        resp.kill()
        rest = resp.communicate()[0]
        log.append(rest)
        return "responder did not start: " + first.strip()
    log.append("$ " + " ".join(ini_cmd))
    try:
        ini = subprocess.run(ini_cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        resp.kill()
        resp.communicate()
        return "initiator timed out"
    log.append(ini.stdout + ini.stderr)
    try:
        rout = resp.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        resp.kill()
        rout = resp.communicate()[0]
    log.append(rout)
    if ini.returncode != 0 or resp.returncode != 0:
        return "iwmpa failed: initiator exit %d, responder exit %d" % (ini.returncode,
                                                                         resp.returncode)
    return None


def check(combo, view, streams, count, size, emss):
    """Returns (problems, notes)."""
    bad, notes = [], []
    exp = dict(zip(("i2r", "r2i"), expected_segments(combo, count, size, emss)))
    mk = {"i2r": combo.markers_i2r, "r2i": combo.markers_r2i}
    # Directions tshark 4.0 cannot follow: no Markers while the other direction has them.
    limited = {d: (combo.m_ini or combo.m_resp) and not mk[d] for d in ("i2r", "r2i")}

    # startup frames
    for kind, m, who in (("req", combo.m_ini, "Request"), ("rep", combo.m_resp, "Reply")):
        frames = view[kind]
        if len(frames) != 1:
            bad.append("tshark decoded %d MPA %ss (want 1)" % (len(frames), who))
            continue
        f = frames[0]
        if f["m"] != m or f["c"] != combo.crc or f["rev"] != combo.rev or f["r"]:
            bad.append("MPA %s decoded as M=%d C=%d R=%d rev %d, want M=%d C=%d R=0 rev %d" %
                       (who, f["m"], f["c"], f["r"], f["rev"], m, combo.crc, combo.rev))
    if view["malformed"]:
        bad.append("malformed packets in frames %s" % ",".join(view["malformed"][:5]))
    if view["errors"]:
        bad.append("expert errors: %s" % "; ".join(view["errors"][:3]))

    for d in ("i2r", "r2i"):
        want = [k for k, _ in exp[d]]
        fpdus = view["fpdus"][d]
        got, seen = [], set()
        for fp in fpdus:
            if fp["key"] is None:
                bad.append("%s: frame %s FPDU without a DDP/RDMAP decode" % (d, fp["frame"]))
                continue
            if fp["key"] not in seen:  # a retransmitted segment may decode twice
                seen.add(fp["key"])
                got.append(fp["key"])
        if limited[d]:
            extra = [k for k in got if k not in want]
            if extra:
                bad.append("%s: tshark shows unexpected segments %s" % (d, extra[:3]))
            notes.append("%s: tshark decoded %d/%d FPDUs (dissector assumes Markers both ways)"
                         % (d, len(got), len(want)))
        elif got != want:
            missing = [k for k in want if k not in seen]
            bad.append("%s: tshark decoded %d of %d FPDUs; first missing %s, extra %s" %
                       (d, len(got), len(want), missing[:1],
                        [k for k in got if k not in want][:1]))
        for fp in fpdus:
            if combo.crc:
                if not fp["crc_check"] or any("Good CRC32" not in t for t in fp["crc_check"]):
                    bad.append("%s: frame %s: CRC not good: %s" % (d, fp["frame"],
                                                                 fp["crc_check"] or "none"))
                    break
            elif fp["crc_check"] or not fp["crc_plain"]:
                bad.append("%s: frame %s: CRC checked although CRC is off" % (d, fp["frame"]))
                break
        nptr = sum(len(fp["fpduptrs"]) for fp in fpdus)
        if mk[d] and nptr == 0:
            bad.append("%s: Markers on but tshark shows no FPDU back pointer" % d)
        if not mk[d] and nptr:
            bad.append("%s: Markers off but tshark shows %d FPDU back pointers" % (d, nptr))
        if mk[d]:
            notes.append("%s: %d Markers seen by tshark" % (d, nptr))

    # second opinion: our own RFC 5044 reader over the raw TCP payload
    try:
        for d in ("i2r", "r2i"):
            if isinstance(streams[d], ParseError):
                raise streams[d]
        req, n1 = parse_frame(streams["i2r"], b"MPA ID Req Frame")
        rep, n2 = parse_frame(streams["r2i"], b"MPA ID Rep Frame")
        for d, data in (("i2r", streams["i2r"][n1:]), ("r2i", streams["r2i"][n2:])):
            keys = [segment_key(u) for u in parse_fpdus(data, mk[d], combo.crc)]
            if keys != [k for k, _ in exp[d]]:
                bad.append("%s: RFC 5044 reader found %d FPDUs, expected %d" %
                           (d, len(keys), len(exp[d])))
    except ParseError as e:
        bad.append("RFC 5044 reader: %s" % e)
    return bad, notes


def report(combo, bad, notes, log):
    print("%-4s %-40s %s" % ("ok" if not bad else "FAIL", combo.name, "; ".join(notes)),
          flush=True)
    for b in bad:
        print("     - %s" % b)
    if bad:
        for line in log[-12:]:
            for part in line.rstrip().splitlines()[-15:]:
                print("     | %s" % part)


def have_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True, help="path to the iwmpa binary")
    ap.add_argument("--count", type=int, default=6, help="Send messages each way")
    ap.add_argument("--size", type=int, default=3000, help="octets per message (adjusted)")
    ap.add_argument("--mss", type=int, default=1460, help="EMSS given to both sides")
    ap.add_argument("--keep", action="store_true", help="keep the capture")
    ap.add_argument("--only", help="run only combinations whose name contains this")
    args = ap.parse_args()

    tshark = shutil.which("tshark")
    if not tshark:
        print("SKIP: tshark not installed")
        return SKIP
    if not os.access(args.tool, os.X_OK):
        print("FAIL: %s is not executable" % args.tool)
        return 1

    todo = [c for c in combos() if not args.only or args.only in c.name]
    if not have_ipv6_loopback():
        print("note: no ::1, IPv6 combination left out")
        todo = [c for c in todo if c.family != "ipv6"]
    t0 = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="iwmpa-tshark-")
    pcap = os.path.join(workdir, "iwmpa.pcapng")
    try:
        base = pick_port_range(len(todo) + 2, tshark_tcp_ports(tshark))
    except RuntimeError as e:
        print("FAIL: %s" % e)
        shutil.rmtree(workdir, ignore_errors=True)
        return 1
    runs = []
    # One capture for every combination: starting tshark is the slow part.
    cap = Capture(tshark, base, base + len(todo) + 1, pcap)
    try:
        cap.probe(base)
        for i, combo in enumerate(todo):
            port = base + 1 + i
            size = pick_size(combo, args.count, args.size, args.mss)
            log = []
            err = run_tools(args.tool, combo, port, args.count, size, args.mss, log)
            runs.append((combo, port, size, err, log))
        cap.probe(base + len(todo) + 1)  # every earlier packet is in the file now
    except RuntimeError as e:
        failed = str(e)
    else:
        failed = None
    finally:
        cap.stop()
    if failed:
        print("FAIL: %s" % failed)
        shutil.rmtree(workdir, ignore_errors=True)
        return 1

    ports = {port for _, port, _, _, _ in runs}
    try:
        views = decode_pdml(tshark, pcap, ports)
    except RuntimeError as e:
        print("FAIL: %s" % e)
        return 1
    streams = streams_from_pcap(tshark, pcap, ports)

    results = []
    for combo, port, size, err, log in runs:
        notes = ["port %d size %d" % (port, size)]
        if err:
            bad = [err]
        else:
            st = {d: streams.get((port, d), ParseError("no %s payload captured" % d))
                  for d in ("i2r", "r2i")}
            bad, more = check(combo, views.get(port, new_view()), st, args.count, size,
                              args.mss)
            notes += more
        report(combo, bad, notes, log)
        results.append((combo, bad))

    nfail = sum(1 for _, bad in results if bad)
    print()
    print("%-40s %s" % ("combination", "result"))
    for combo, bad in results:
        print("%-40s %s" % (combo.name, "pass" if not bad else "FAIL"))
    keep = args.keep or nfail
    print("%d of %d combinations passed in %.0f s; capture %s" %
          (len(results) - nfail, len(results), time.monotonic() - t0,
           pcap if keep else "deleted"))
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
