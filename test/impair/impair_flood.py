#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Floods (issue 16, deliverable 4), on loopback.

listener  iwping -s -P (backlog 3: the pending handshakes it holds) with
          --handshake-grace 1000 --mpa-timeout 5000, under N = 500 TCP
          connections that never send their MPA Request and M = 20 that send
          it one octet a second: a legitimate iwping client (-C 5 -V) still
          connects and completes within LEGIT_MAX_S; while the flood lasts the
          server holds at most backlog + a few descriptors more than before
          (bounded pending handshakes) and its RSS stays within RSS_BOUND_KB;
          once the flood is gone its descriptors are back where they were.
deadline  iwping -s -P --mpa-timeout 3000: three clients (within the backlog)
          dribbling their MPA Request one octet a second are closed by the
          server 3 s (+ slack) after they connected.
raw       A raw peer (this script speaking MPA, DDP and RDMAP; the FPDU and
          CRC32c of test/iwconform and test/interop) against an iwlive
          server, for FLOOD_S seconds each, reconnecting whenever the server
          ends the connection:
            sends      a stream of 1-octet Sends, beyond the receives posted;
            reads      RDMA Read Requests, always exactly IRD outstanding;
            over-ird   IRD + 1 Read Requests at once: the server must answer
                       with a Terminate and close (RFC 5040 §6.8, RFC 5041
                       §7.2: a Read Request beyond the IRD);
            terminate  a Terminate: the server must close.
          Server RSS (VmRSS) before and after each: within RSS_BOUND_KB.
FLOOD_S is 10 in CI and 60 with IMPAIR_LONG=1 (tools/soak.sh).  Exit status:
0 passed, 1 a failure.
"""

import argparse
import os
import resource
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "iwconform"))
sys.path.insert(0, os.path.join(HERE, "..", "helpers"))
from icf_testlib import fpdu  # noqa: E402  RFC 5044 §4 FPDU with CRC32c
import procstat  # noqa: E402

LONG = os.environ.get("IMPAIR_LONG") == "1"
FLOOD_S = 60 if LONG else 10
N_SILENT = 500
M_SLOW = 20
LEGIT_MAX_S = 8
RSS_BOUND_KB = 4096
SRV_ENV = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")  # see impair_liveness.py
failures = []
results = []

def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond
def mpa_request(ird=1, ord_=1):
    """Rev 2 Request, CRC asked for, no Markers, the RFC 6581 IRD/ORD word."""
    return b"MPA ID Req Frame" + bytes([0x50, 2]) + struct.pack(">HHH", 4, ird, ord_)


def wait_port(port, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        # a listening socket shows in /proc/net/tcp with state 0A
        with open("/proc/net/tcp") as f:
            if any(":%04X" % port in ln.split()[1] and ln.split()[3] == "0A"
                   for ln in f.readlines()[1:]):
                return True
        time.sleep(0.02)
    return False


def closed_by_peer(s):
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


# ---------------------------------------------------------------------------
# Connection floods against iwping -s -P
# ---------------------------------------------------------------------------

def slow_client(port, start, out, i, stop):
    s = socket.socket()
    s.settimeout(30)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        out[i] = ("no-connect", None)
        return
    t0 = time.monotonic()
    req = mpa_request()
    s.settimeout(0.0)
    for k in range(len(req)):
        if stop.is_set():
            break
        try:
            s.send(req[k:k + 1])
        except OSError:
            out[i] = ("closed", time.monotonic() - t0)
            return
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            r, _, _ = select.select([s], [], [], max(0, end - time.monotonic()))
            if r and closed_by_peer(s):
                out[i] = ("closed", time.monotonic() - t0)
                s.close()
                return
    out[i] = ("open", time.monotonic() - t0)
    s.close()


def case_listener(a):
    port = 7341
    srv = subprocess.Popen([a.iwping, "-s", "-P", "-a", "127.0.0.1", "-p", str(port),
                            "--handshake-grace", os.environ.get("IMPAIR_FLOOD_GRACE", "1000"),
                            "--mpa-timeout", os.environ.get("IMPAIR_FLOOD_MPA_TIMEOUT", "5000")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=SRV_ENV)
    try:
        check(wait_port(port), "flood: iwping -s -P listens")
        good = [a.iwping, "-c", "-a", "127.0.0.1", "-p", str(port), "-C", "5", "-V"]
        g = subprocess.run(good, capture_output=True, timeout=30)
        check(g.returncode == 0, "flood: a good client before the flood")
        time.sleep(0.3)
        fd0, rss0 = procstat.nfds(srv.pid), procstat.rss_kb(srv.pid)
        stop = threading.Event()
        slow = [None] * M_SLOW
        threads = [threading.Thread(target=slow_client, args=(port, 0, slow, i, stop),
                                    daemon=True) for i in range(M_SLOW)]
        for t in threads:
            t.start()
        silent = []
        for _ in range(N_SILENT):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            silent.append(s)
        time.sleep(1.0)
        t0 = time.monotonic()
        g = subprocess.run(good, capture_output=True, text=True, timeout=60)
        t_legit = time.monotonic() - t0
        results.append("legitimate iwping -C 5 -V under %d silent + %d slow connections: "
                       "%.2f s" % (N_SILENT, M_SLOW, t_legit))
        check(g.returncode == 0 and t_legit <= LEGIT_MAX_S,
              "flood: a legitimate client completed in %.2f s (<= %d s) under %d silent and "
              "%d one-octet-a-second connections (exit %d %s)"
              % (t_legit, LEGIT_MAX_S, N_SILENT, M_SLOW, g.returncode, g.stderr.strip()[-200:]))
        peak_fd, peak_rss = fd0, rss0
        end = time.monotonic() + FLOOD_S
        while time.monotonic() < end:
            peak_fd = max(peak_fd, procstat.nfds(srv.pid))
            peak_rss = max(peak_rss, procstat.rss_kb(srv.pid))
            time.sleep(0.05)
        check(peak_fd <= fd0 + 3 + 2,
              "flood: server descriptors %d before, at most %d during the flood (backlog 3: "
              "the pending handshakes are bounded)" % (fd0, peak_fd))
        check(peak_rss - rss0 <= RSS_BOUND_KB,
              "flood: server RSS %d kB before, peak %d kB during %d s of flood (bound +%d)"
              % (rss0, peak_rss, FLOOD_S, RSS_BOUND_KB))
        results.append("listener flood %d s: RSS %d -> peak %d kB, descriptors %d -> peak %d"
                       % (FLOOD_S, rss0, peak_rss, fd0, peak_fd))
        stop.set()
        for s in silent:
            s.close()
        for t in threads:
            t.join(5)
        closed = sum(1 for x in slow if x and x[0] == "closed")
        print("     slow clients: %d closed by the server, %s" % (
            closed, sorted(round(x[1], 1) for x in slow if x and x[1] is not None)), flush=True)
        time.sleep(2)
        g = subprocess.run(good, capture_output=True, timeout=30)
        check(g.returncode == 0, "flood: a good client after the flood")
        time.sleep(0.5)
        fd1 = procstat.nfds(srv.pid)
        check(fd1 == fd0, "flood: server descriptors back to %d (now %d)" % (fd0, fd1))
    finally:
        srv.terminate()
        srv.wait(10)


def case_deadline(a):
    port = 7342
    srv = subprocess.Popen([a.iwping, "-s", "-P", "-a", "127.0.0.1", "-p", str(port),
                            "--mpa-timeout", "3000"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=SRV_ENV)
    try:
        check(wait_port(port), "deadline: iwping -s -P listens")
        stop = threading.Event()
        slow = [None] * 3
        threads = [threading.Thread(target=slow_client, args=(port, 0, slow, i, stop),
                                    daemon=True) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        check(all(x and x[0] == "closed" and 2.5 <= x[1] <= 5.0 for x in slow),
              "deadline: clients sending their MPA Request one octet a second were closed "
              "after %s s (the MPA timeout: 3 s)" % [x and round(x[1] or 0, 2) for x in slow])
    finally:
        srv.terminate()
        srv.wait(10)


# ---------------------------------------------------------------------------
# A raw peer against iwlive
# ---------------------------------------------------------------------------

def ddp_untagged(opcode, qn, msn, payload, last=True):
    """RFC 5041 §4.3 untagged header + RFC 5040 §4.1 RDMAP control (RV 1)."""
    ctrl = (0x40 if last else 0x00) | 0x01  # L, DV 1
    return bytes([ctrl, 0x40 | opcode]) + struct.pack(">IIII", 0, qn, msn, 0) + payload


class Raw:
    """One connection: MPA exchange, then FPDUs; a reader thread counts what comes back."""

    def __init__(self, port, ird=1, ord_=1):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.s.sendall(mpa_request(ird, ord_))
        hdr = self._exact(20)
        if not hdr.startswith(b"MPA ID Rep Frame") or hdr[16] & 0x20:
            raise RuntimeError("no MPA Reply: %r" % hdr)
        pd = self._exact(struct.unpack(">H", hdr[18:20])[0])
        self.ird = struct.unpack(">H", pd[0:2])[0] & 0x3FFF
        self.addr, self.rkey, self.len = struct.unpack("<QII", pd[4:20])
        self.msn = {0: 0, 1: 0}
        self.opcodes = {}
        self.eof = False
        self.buf = b""
        self.s.settimeout(None)
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.t = threading.Thread(target=self._reader, daemon=True)
        self.t.start()

    def _exact(self, n):
        b = b""
        while len(b) < n:
            d = self.s.recv(n - len(b))
            if not d:
                raise RuntimeError("closed during MPA")
            b += d
        return b

    def _reader(self):
        buf = b""
        while True:
            try:
                d = self.s.recv(1 << 16)
            except OSError:
                d = b""
            if not d:
                with self.cond:
                    self.eof = True
                    self.cond.notify_all()
                return
            buf += d
            while len(buf) >= 2:
                ulen = struct.unpack(">H", buf[:2])[0]
                total = (2 + ulen + 3) // 4 * 4 + 4
                if len(buf) < total:
                    break
                op = buf[3] & 0x0F if ulen >= 2 else -1
                buf = buf[total:]
                with self.cond:
                    self.opcodes[op] = self.opcodes.get(op, 0) + 1
                    self.cond.notify_all()

    def count(self, op):
        with self.lock:
            return self.opcodes.get(op, 0)

    def send_msgs(self, msgs):
        try:
            self.s.sendall(b"".join(fpdu(m) for m in msgs))
            return True
        except OSError:
            return False

    def send(self, n, size=1):
        msgs = []
        for _ in range(n):
            self.msn[0] += 1
            msgs.append(ddp_untagged(0x3, 0, self.msn[0], b"x" * size))
        return self.send_msgs(msgs)

    def read_req(self, n, size=64):
        msgs = []
        for _ in range(n):
            self.msn[1] += 1
            # sink STag/TO (ours: never checked here), size, source STag/TO (the server's)
            body = struct.pack(">IQIIQ", 0x1234, 0, size, self.rkey, self.addr)
            msgs.append(ddp_untagged(0x1, 1, self.msn[1], body))
        return self.send_msgs(msgs)

    def terminate(self):
        # RFC 5040 §4.8: Layer RDMAP (0), EType remote operation error (2), code 0xFF
        # (unspecified), no H/M/D: no header copies
        return self.send_msgs([ddp_untagged(0x7, 2, 1, bytes([0x02, 0xFF, 0, 0]))])

    def wait(self, pred, timeout):
        end = time.monotonic() + timeout
        with self.cond:
            while not pred() and time.monotonic() < end:
                self.cond.wait(max(0.0, end - time.monotonic()))
            return pred()

    def close(self):
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.s.close()
        self.t.join(5)


def raw_run(port, kind, secs):
    """(connections, terminates received, closes by the server) over secs."""
    conns = terms = closes = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        r = Raw(port, ird=8, ord_=8)
        conns += 1
        try:
            if kind == "sends":
                while time.monotonic() < end and not r.eof:
                    if not r.send(256):
                        break
            elif kind == "reads":
                out = r.ird
                r.read_req(out)
                done = 0
                while time.monotonic() < end and not r.eof:
                    got = r.count(0x2)
                    if got > done:
                        r.read_req(got - done)
                        done = got
                    else:
                        r.wait(lambda: r.eof or r.opcodes.get(0x2, 0) > done, 0.5)
            elif kind == "over-ird":
                r.read_req(r.ird + 1)
                r.wait(lambda: r.eof, 5)
            elif kind == "terminate":
                r.terminate()
                r.wait(lambda: r.eof, 5)
            r.wait(lambda: r.eof, 0.2 if kind in ("sends", "reads") else 5)
            terms += r.count(0x7) > 0
            closes += r.eof
        finally:
            r.close()
    return conns, terms, closes


def case_raw(a):
    port = 7343
    # its output to a file: a pipe nobody reads while the test runs would fill up
    # (a line per connection) and stop the server
    log = tempfile.TemporaryFile(mode="w+")
    srv = subprocess.Popen([a.iwlive, "server", "-a", "127.0.0.1", "-p", str(port), "-P",
                            "--depth", "4", "--size", "4096"]
                           + (["--trace"] if os.environ.get("IMPAIR_TRACE") else []),
                           stdout=log, stderr=subprocess.STDOUT, env=SRV_ENV)
    try:
        check(wait_port(port), "raw: iwlive server listens")
        # warm-up: each kind once, briefly
        for kind in ("sends", "reads", "over-ird", "terminate"):
            raw_run(port, kind, 0.5)
        time.sleep(0.5)
        for kind in ("sends", "reads", "over-ird", "terminate"):
            rss0 = procstat.rss_kb(srv.pid)
            fd0 = procstat.nfds(srv.pid)
            conns, terms, closes = raw_run(port, kind, FLOOD_S)
            # the last connections may still be closing: a Terminate's sender
            # waits up to close_timeout_ms (2 s) for the peer's FIN
            settle = time.monotonic() + 5
            time.sleep(0.5)
            while procstat.nfds(srv.pid) > fd0 and time.monotonic() < settle:
                time.sleep(0.1)
            rss1 = procstat.rss_kb(srv.pid)
            fd1 = procstat.nfds(srv.pid)
            results.append("raw %-9s %d s: %d connections, server RSS %d -> %d kB"
                           % (kind, FLOOD_S, conns, rss0, rss1))
            check(srv.poll() is None and rss1 - rss0 <= RSS_BOUND_KB and fd1 == fd0,
                  "raw %s: %d s, %d connections (%d ended by a Terminate from the server, "
                  "%d closed by it); server RSS %d -> %d kB (bound +%d), descriptors %d -> %d"
                  % (kind, FLOOD_S, conns, terms, closes, rss0, rss1, RSS_BOUND_KB, fd0, fd1))
            if kind == "over-ird":
                check(terms == conns and closes == conns,
                      "raw over-ird: every connection got a Terminate and was closed")
            if kind == "terminate":
                check(closes == conns, "raw terminate: the server closed every connection")
            if kind == "reads":
                check(conns >= 1 and closes == 0,
                      "raw reads: Read Requests at the IRD limit are served, not refused")
    finally:
        srv.terminate()
        try:
            srv.wait(10)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()
        log.seek(0)
        out = log.read()
        log.close()
        check(srv.returncode == 0, "raw: the server stopped cleanly, no object left (exit %s)"
              % srv.returncode)
        if os.environ.get("IMPAIR_TRACE"):
            with open(os.environ["IMPAIR_TRACE"], "w") as f:
                f.write(out)
        bad = [ln for ln in out.splitlines() if '"unfinished":0' not in ln and '"end"' in ln]
        check(not bad, "raw: every connection's work requests completed: %s" % bad[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iwping", required=True)
    ap.add_argument("--iwlive", required=True)
    ap.add_argument("--only", choices=("listener", "deadline", "raw"))
    a = ap.parse_args()
    global RSS_BOUND_KB
    if procstat.asan_build(a.iwlive):
        # AddressSanitizer's quarantine keeps freed memory resident (up to
        # 256 MiB): growth then says nothing about our allocations
        RSS_BOUND_KB = 512 * 1024
        print("ASan build: RSS growth bound relaxed to %d kB" % RSS_BOUND_KB, flush=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 4096)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    print("flood runs of %d s%s" % (FLOOD_S, " (IMPAIR_LONG)" if LONG else ""), flush=True)
    if a.only in (None, "deadline"):
        case_deadline(a)
    if a.only in (None, "listener"):
        case_listener(a)
    if a.only in (None, "raw"):
        case_raw(a)
    for r in results:
        print("     " + r)
    print("%d failures" % len(failures) if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
