#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwperf's RFC 7306 operations end to end: client and server over loopback.

For each I/O engine given (--engines), one `iwperf -s -p 0` (it picks a free
port and prints it, so parallel test runs do not collide) serves these
clients, each with --json:

  * --op atomic, fetch-and-add and compare-and-swap, with --verify: deep
    (--depth 16), one at a time (--pingpong, and --depth 1, which is the
    same test), on several QPs at once (--qps), and for --seconds;
  * --op write-imm with --verify: small, 40 octets (next to 40-octet control
    messages they take the 48-octet form), messages of several FPDUs, several
    QPs, and for --seconds;
  * one --op write, read and send with --verify each, so the operations
    without RFC 7306 are seen to run next to them on the same server.

Each client must exit 0 with a JSON line that agrees with what was asked
(op name, iterations, octets, ping-pong; no failed compare on one QP, whose
compares all succeed), and the server must print the line of each
connection: for the atomics the target word, which the connections of a
test share, so the largest one printed is the number of operations that
changed it (every fetch-and-add; the compare-and-swaps but the failed ones
the client reports, which several QPs on one word do have).  Then the command
lines iwperf must refuse, with exit status 2 and a message that says why:
--op atomic with a --size other than 8, RFC 7306 with --tcp-baseline,
write-imm with --pingpong, --atomic without --op atomic, an unknown
--atomic.  Exit status: 0 all passed, 1 a failure.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

CLIENT_TIMEOUT = 120


class Server:
    def __init__(self, iwperf, engine, workdir):
        self.out = os.path.join(workdir, "server-%s.out" % engine)
        with open(self.out, "w") as f:
            self.p = subprocess.Popen([iwperf, "-s", "-a", "127.0.0.1", "-p", "0", "--engine",
                                       engine], stdout=f, stderr=subprocess.STDOUT)
        self.port = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.p.poll() is None:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.text())
            if m:
                self.port = int(m.group(1))
                return
            time.sleep(0.02)

    def text(self):
        with open(self.out, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                return self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
                return None
        return self.p.returncode


def client(iwperf, port, engine, args):
    cmd = [iwperf, "-c", "127.0.0.1", "-p", str(port), "--engine", engine, "--json"] + args
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % CLIENT_TIMEOUT, cmd
    if cp.returncode != 0:
        return None, "exit %d: %s" % (cp.returncode, (cp.stderr or cp.stdout).strip()), cmd
    lines = [l for l in cp.stdout.splitlines() if l.startswith("{")]
    if len(lines) != 1:
        return None, "want one JSON line, got %d: %r" % (len(lines), cp.stdout), cmd
    return json.loads(lines[0]), None, cmd


# (arguments, what the JSON line must say, the server's lines: (op words, messages of
# each connection, or None for the atomics' word))
CASES = [
    (["--op", "atomic", "--verify", "-n", "3000", "--depth", "16"],
     {"op": "atomic-fadd", "iters": 3000, "bytes": 24000, "pingpong": False, "size": 8},
     ("atomic-fadd", None)),
    (["--op", "atomic", "--atomic", "cswap", "--verify", "-n", "3000", "--depth", "16"],
     {"op": "atomic-cswap", "iters": 3000, "cswap_failed": 0, "pingpong": False},
     ("atomic-cswap", None)),
    (["--op", "atomic", "--pingpong", "--verify", "-n", "300"],
     {"op": "atomic-fadd", "iters": 300, "pingpong": True, "depth": 1},
     ("atomic-fadd ping-pong", None)),
    (["--op", "atomic", "--atomic", "cswap", "--depth", "1", "--verify", "-n", "300"],
     {"op": "atomic-cswap", "iters": 300, "pingpong": True, "cswap_failed": 0},
     ("atomic-cswap ping-pong", None)),
    # several QPs on the one word of their test
    (["--op", "atomic", "--qps", "4", "--depth", "8", "--verify", "-n", "1000"],
     {"op": "atomic-fadd", "iters": 4000, "qps": 4}, ("atomic-fadd", None)),
    (["--op", "atomic", "--qps", "3", "--pingpong", "--verify", "-n", "300"],
     {"op": "atomic-fadd", "iters": 900, "qps": 3}, ("atomic-fadd ping-pong", None)),
    (["--op", "atomic", "--atomic", "cswap", "--qps", "3", "--depth", "8", "--verify", "-n",
      "1000"],
     {"op": "atomic-cswap", "iters": 3000, "qps": 3}, ("atomic-cswap", None)),
    (["--op", "atomic", "--atomic", "cswap", "--qps", "2", "--depth", "1", "-n", "500"],
     {"op": "atomic-cswap", "iters": 1000, "qps": 2, "pingpong": True},
     ("atomic-cswap ping-pong", None)),
    (["--op", "atomic", "--atomic", "cswap", "--size", "8", "--seconds", "0.3", "--verify"],
     {"op": "atomic-cswap", "cswap_failed": 0}, ("atomic-cswap", None)),
    (["--op", "write-imm", "--verify", "-n", "2000", "--size", "4096", "--qps", "2"],
     {"op": "write-imm", "iters": 4000, "bytes": 4000 * 4096}, ("write-imm", 2000)),
    (["--op", "write-imm", "--verify", "-n", "1000", "--size", "40", "--depth", "64"],
     {"op": "write-imm", "iters": 1000, "bytes": 40000}, ("write-imm", 1000)),
    (["--op", "write-imm", "--verify", "-n", "100", "--size", "100000", "--depth", "4"],
     {"op": "write-imm", "iters": 100, "bytes": 100 * 100000}, ("write-imm", 100)),
    (["--op", "write-imm", "--verify", "--seconds", "0.3", "--size", "1"],
     {"op": "write-imm"}, None),
    (["--op", "write", "--verify", "-n", "200", "--size", "8192"],
     {"op": "write", "iters": 200}, ("write", 200)),
    (["--op", "read", "--verify", "-n", "200", "--size", "8192"],
     {"op": "read", "iters": 200}, ("read", 200)),
    (["--op", "send", "--verify", "-n", "200", "--size", "8192"],
     {"op": "send", "iters": 200}, ("send", 200)),
]

# (arguments, words the one stderr line must contain)
REFUSALS = [
    (["--op", "atomic", "--size", "16"], "--size must be 8"),
    (["--op", "atomic", "--atomic", "cswap", "--size", "64K"], "--size must be 8"),
    (["--op", "atomic", "--tcp-baseline"], "not with --tcp-baseline"),
    (["--op", "write-imm", "--tcp-baseline"], "not with --tcp-baseline"),
    (["--op", "write-imm", "--pingpong"], "bandwidth only"),
    (["--atomic", "cswap"], "--atomic goes with --op atomic"),
    (["--op", "write", "--atomic", "fadd"], "--atomic goes with --op atomic"),
    (["--op", "atomic", "--atomic", "xor"], "invalid value 'xor' for --atomic"),
    (["--op", "atomics"], "write, read, send, atomic or write-imm"),
]


def check_served(lines, r, words, msgs):
    """The server's lines of one client run: one per QP, each with `msgs` messages;
    for the atomics the largest word is the operations that changed it."""
    if msgs is None:
        pat = re.compile(r": iwarp %s 8 B, QP \d+/%d: target word (\d+), ok$" %
                         (re.escape(words), r["qps"]))
    else:
        pat = re.compile(r": iwarp %s \d+ B, QP \d+/%d: (%d) messages, data verified$" %
                         (re.escape(words), r["qps"], msgs))
    got = [int(m.group(1)) for m in map(pat.search, lines) if m]
    if len(got) != r["qps"] or len(got) != len(lines):
        return "the server printed %r, want %d lines '%s'" % (lines, r["qps"], words)
    if msgs is None and max(got) != r["iters"] - r.get("cswap_failed", 0):
        return "the server's word reached %d, want %d operations (%d less %d failed)" % (
            max(got), r["iters"] - r.get("cswap_failed", 0), r["iters"],
            r.get("cswap_failed", 0))
    return None


def run_engine(iwperf, engine, workdir):
    bad = []
    srv = Server(iwperf, engine, workdir)
    if srv.port is None:
        srv.stop()
        return ["%s: the server did not start: %s" % (engine, srv.text().strip()[-300:])]
    seen = 0
    try:
        for args, want, served in CASES:
            r, err, cmd = client(iwperf, srv.port, engine, args)
            name = "%s: %s" % (engine, " ".join(args))
            lines = [l for l in srv.text().splitlines() if ": iwarp " in l]
            lines, seen = lines[seen:], len(lines)
            if err:
                bad.append("%s: %s" % (name, err))
                continue
            diff = ["%s %r (want %r)" % (k, r.get(k), v) for k, v in want.items()
                    if r.get(k) != v]
            if r.get("engine") != engine or r.get("transport") != "iwarp":
                diff.append("engine %r transport %r" % (r.get("engine"), r.get("transport")))
            if r.get("pingpong") and r.get("lat_us_min") is None:
                diff.append("a ping-pong without latency figures")
            if r.get("msgs_per_s", 0) <= 0:
                diff.append("no rate")
            if served:
                why = check_served(lines, r, *served)
                if why:
                    diff.append(why)
            if diff:
                bad.append("%s: %s" % (name, ", ".join(diff)))
            else:
                print("ok   %s: %d ops, %.0f/s%s" % (
                    name, r["iters"], r["msgs_per_s"],
                    ", %d compares failed" % r["cswap_failed"] if "cswap_failed" in r else ""),
                    flush=True)
    finally:
        rc = srv.stop()
    text = srv.text()
    if rc != 0:
        bad.append("%s: the server exited %r" % (engine, rc))
    if bad:
        bad += ["%s server | %s" % (engine, l) for l in text.splitlines()[-12:]]
    return bad


def refusals(iwperf):
    bad = []
    for args, words in REFUSALS:
        cmd = [iwperf, "-c", "127.0.0.1", "-p", "9"] + args
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        err = cp.stderr.strip()
        if cp.returncode != 2 or words not in err or len(err.splitlines()) != 1 or cp.stdout:
            bad.append("%s: exit %d, stderr %r (want 2 and one line with %r)" %
                       (" ".join(args), cp.returncode, err, words))
        else:
            print("ok   refused: %s: %s" % (" ".join(args), err), flush=True)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iwperf", required=True, help="path to the iwperf binary")
    ap.add_argument("--engines", default="epoll", help="comma-separated: epoll,uring")
    args = ap.parse_args()
    if not os.access(args.iwperf, os.X_OK):
        print("FAIL: %s is not executable" % args.iwperf)
        return 1
    bad = refusals(args.iwperf)
    with tempfile.TemporaryDirectory(prefix="iwperf-7306-") as workdir:
        for engine in args.engines.split(","):
            bad += run_engine(args.iwperf, engine, workdir)
    for b in bad:
        print("FAIL %s" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
